/*
 * Copyright (c) 2026 The relayd-portable authors
 *
 * Permission to use, copy, modify, and distribute this software for any
 * purpose with or without fee is hereby granted, provided that the above
 * copyright notice and this permission notice appear in all copies.
 *
 * THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
 * WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
 * MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
 * ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
 * WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
 * ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
 * OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
 */

/*
 * The parent's side of relays: the listening sockets it opens before the
 * relay processes start, and the sockets a chrooted, unprivileged relay
 * cannot make itself (transparent forward's BINDANY, unix-socket
 * backends).
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "relayd.h"

static int	 relay_dns_listen(struct relayd *, struct relay *,
		    unsigned int);
static int	 relay_unix_listen(struct relay *, int);
static int	 relay_unix_perms(struct relay *);
static int	 relay_bind(struct relay *, int, int);
static int	 relay_steer_listen(struct relayd *, struct relay *, int,
		    unsigned int, int);

/*
 * Bind a listener s (TCP, or a dns relay's datagrams) to the relay's
 * address, held by this host or not (yet): the standby of a pair
 * starts, and reloads, before the shared address comes to it.  One that
 * is not here is said (say) when its socket is made: a dns relay's TCP
 * listener says it for both.  A port taken, or an address no host can
 * have, still fails.
 */
static int
relay_bind(struct relay *rlay, int s, int say)
{
	struct sockaddr_storage	*ss = &rlay->rl_conf.ss, probe;
	char			 buf[INET6_ADDRSTRLEN];
	int			 t, here;

	if (compat_freebind(s, ss->ss_family) == -1 && errno != ENOPROTOOPT)
		log_warn("relay %s: freebind", rlay->rl_conf.name);
	if (sock_v6only(s, ss->ss_family) == -1)
		return (-1);
	if (bind(s, (struct sockaddr *)ss, ss_len(ss)) == -1)
		return (-1);
	if (!say)
		return (0);
	/* is it here?  A plain bind of another socket, to any port, says */
	if ((t = socket(ss->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return (0);
	probe = *ss;
	ss_setport(&probe, 0);
	here = bind(t, (struct sockaddr *)&probe, ss_len(&probe)) == 0 ||
	    errno != EADDRNOTAVAIL;
	close(t);
	if (!here)
		log_warnx("relay %s: %s is not on this host yet: listening "
		    "for it", rlay->rl_conf.name, print_host(ss, buf,
		    sizeof(buf)));
	return (0);
}

/*
 * Parent: the listening socket of a relay.  A listener whose address
 * the running configuration (old) already has is taken over, so that a
 * reload neither drops queued connections nor opens a second socket
 * beside it.  No SO_REUSEPORT: an address belongs to one daemon, and a
 * second one fails with "Address already in use".  The parent keeps its
 * socket; every relay process gets a duplicate.
 */
int
relay_privinit(struct relayd *old, struct relay *rlay, unsigned int nproc)
{
	struct protocol	*p = rlay->rl_proto;
	struct relay	*prev;
	char		 buf[INET6_ADDRSTRLEN];
	int		 s, on = 1, backlog, ret;

	backlog = p != NULL ? p->tcpbacklog : RELAY_BACKLOG;
	/* a dns relay: datagrams, and TCP for what is too big for them */
	if (p != NULL && p->type == RELAY_PROTO_DNS &&
	    relay_dns_listen(old, rlay, nproc) == -1)
		return (-1);
	/* requests counted per source: a source, one relay process */
	if (RELAY_REQLIMITED(&rlay->rl_conf.lim) && nproc > 1 &&
	    (ret = relay_steer_listen(old, rlay, backlog, nproc, 0)) <= 0)
		return (ret);
	if (old != NULL && (prev = relay_findbyaddr(old,
	    &rlay->rl_conf)) != NULL && prev->rl_s != -1) {
		if ((s = fcntl(prev->rl_s, F_DUPFD_CLOEXEC, 0)) == -1) {
			log_warn("relay %s: dup", rlay->rl_conf.name);
			return (-1);
		}
		relay_socket_opts(s, rlay->rl_conf.ss.ss_family, p, 1);
		/* a second listen(2) sets the new backlog */
		(void)listen(s, backlog);
		rlay->rl_s = s;
		if (rlay->rl_conf.ss.ss_family == AF_UNIX &&
		    relay_unix_perms(rlay) == -1)
			return (-1);
		return (0);
	}
	if (rlay->rl_conf.ss.ss_family == AF_UNIX)
		return (relay_unix_listen(rlay, backlog));

	if ((s = socket(rlay->rl_conf.ss.ss_family, SOCK_STREAM |
	    SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_TCP)) == -1) {
		log_warn("relay %s: socket", rlay->rl_conf.name);
		return (-1);
	}
	if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) == -1) {
		log_warn("relay %s: setsockopt", rlay->rl_conf.name);
		close(s);
		return (-1);
	}
	/* forward to destination: connections for any address */
	if ((rlay->rl_conf.flags & F_DIVERT) &&
	    compat_transparent(s, rlay->rl_conf.ss.ss_family) == -1) {
		log_warn("relay %s: transparent listener", rlay->rl_conf.name);
		close(s);
		return (-1);
	}
	relay_socket_opts(s, rlay->rl_conf.ss.ss_family, p, 1);
	if (relay_bind(rlay, s, 1) == -1) {
		log_warn("relay %s: cannot listen on %s port %d",
		    rlay->rl_conf.name, print_host(&rlay->rl_conf.ss, buf,
		    sizeof(buf)), rlay->rl_conf.port);
		close(s);
		return (-1);
	}
	if (listen(s, backlog) == -1) {
		log_warn("relay %s: listen", rlay->rl_conf.name);
		close(s);
		return (-1);
	}
	rlay->rl_s = s;
	return (0);
}

/*
 * Parent: a relay that counts requests per source gets a listener for
 * each relay process (a datagram socket with dgram, for a dns relay's
 * queries), n of them in one SO_REUSEPORT group whose kernel hands all
 * the connections or datagrams of a source to the same one
 * (compat_steer()): each source meets one relay process, which counts
 * all of its requests.  The group is taken over from the running
 * configuration when that had one of n.  1: no group (a socket of the
 * running configuration holds the address, or the system cannot
 * steer), the caller makes one socket as for any relay and each relay
 * process counts for itself, as the log says; 0 done, -1 error.
 */
static int
relay_steer_listen(struct relayd *old, struct relay *rlay, int backlog,
    unsigned int n, int dgram)
{
	struct relay_limits	*l = &rlay->rl_conf.lim;
	struct relay		*prev = NULL;
	char			 buf[INET6_ADDRSTRLEN];
	int			*fds = dgram ? rlay->rl_usteer : rlay->rl_steer;
	unsigned int		*nfds = dgram ? &rlay->rl_nusteer :
				    &rlay->rl_nsteer;
	unsigned int		 i;
	int			 s, on = 1, size = RELAY_DNS_RCVBUF;

	if (old != NULL)
		prev = relay_findbyaddr(old, &rlay->rl_conf);
	if (prev != NULL && (dgram ? prev->rl_nusteer : prev->rl_nsteer) ==
	    n) {
		for (i = 0; i < n; i++) {
			if ((s = fcntl(dgram ? prev->rl_usteer[i] :
			    prev->rl_steer[i], F_DUPFD_CLOEXEC, 0)) == -1) {
				log_warn("relay %s: dup", rlay->rl_conf.name);
				relay_listeners_close(rlay);
				return (-1);
			}
			fds[(*nfds)++] = s;
			if (dgram)
				continue;
			relay_socket_opts(s, rlay->rl_conf.ss.ss_family,
			    rlay->rl_proto, 1);
			(void)listen(s, backlog);
		}
		goto done;
	}
	if (prev != NULL && (dgram ? prev->rl_us : prev->rl_s) != -1) {
		log_warnx("relay %s: each relay process counts the requests "
		    "of its clients apart until the next start (the socket "
		    "it keeps was made without max-src-request-rate)",
		    rlay->rl_conf.name);
		return (1);
	}
	for (i = 0; i < n; i++) {
		if ((s = socket(rlay->rl_conf.ss.ss_family, (dgram ?
		    SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    0)) == -1) {
			log_warn("relay %s: socket", rlay->rl_conf.name);
			goto fail;
		}
		fds[(*nfds)++] = s;
		if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &on,
		    sizeof(on)) == -1 ||
		    setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &on,
		    sizeof(on)) == -1 || (dgram && setsockopt(s, SOL_SOCKET,
		    SO_RCVBUF, &size, sizeof(size)) == -1)) {
			log_warn("relay %s: setsockopt", rlay->rl_conf.name);
			goto fail;
		}
		if (!dgram)
			relay_socket_opts(s, rlay->rl_conf.ss.ss_family,
			    rlay->rl_proto, 1);
		/* a datagram socket joins the group at bind(2) */
		if (relay_bind(rlay, s, i == 0 && !dgram) == -1) {
			log_warn("relay %s: cannot listen on %s %s port %d",
			    rlay->rl_conf.name, print_host(&rlay->rl_conf.ss,
			    buf, sizeof(buf)), dgram ? "udp" : "tcp",
			    rlay->rl_conf.port);
			goto fail;
		}
		if (i == 0 && compat_steer(s, n, l->lim_prefix4,
		    l->lim_prefix6) == -1) {
			log_warn("relay %s: each relay process counts the "
			    "requests of its clients apart: no steering by "
			    "source", rlay->rl_conf.name);
			relay_listeners_close(rlay);
			return (1);
		}
		/* a listener joins it at listen(2) */
		if (!dgram && listen(s, backlog) == -1) {
			log_warn("relay %s: listen", rlay->rl_conf.name);
			goto fail;
		}
	}
 done:
	if (dgram)
		rlay->rl_us = fds[0];
	else
		rlay->rl_s = fds[0];
	l->lim_steered = 1;
	return (0);
 fail:
	relay_listeners_close(rlay);
	return (-1);
}

/* Parent: every listener of a relay closes. */
void
relay_listeners_close(struct relay *rlay)
{
	unsigned int	 i;

	for (i = 0; i < rlay->rl_nsteer; i++)
		if (rlay->rl_steer[i] != rlay->rl_s)
			close(rlay->rl_steer[i]);
	rlay->rl_nsteer = 0;
	for (i = 0; i < rlay->rl_nusteer; i++)
		if (rlay->rl_usteer[i] != rlay->rl_us)
			close(rlay->rl_usteer[i]);
	rlay->rl_nusteer = 0;
	if (rlay->rl_s != -1)
		close(rlay->rl_s);
	rlay->rl_s = -1;
	if (rlay->rl_us != -1)
		close(rlay->rl_us);
	rlay->rl_us = -1;
}

/*
 * Parent: the datagram socket of a dns relay, taken over from the
 * running configuration as a listener is.  Its receive buffer is made
 * large enough for a burst of queries (the kernel caps it at
 * net.core.rmem_max).
 */
static int
relay_dns_listen(struct relayd *old, struct relay *rlay, unsigned int nproc)
{
	struct relay	*prev;
	char		 buf[INET6_ADDRSTRLEN];
	int		 s, on = 1, size = RELAY_DNS_RCVBUF, ret;

	/* queries counted per source: a source, one relay process */
	if (RELAY_REQLIMITED(&rlay->rl_conf.lim) && nproc > 1 &&
	    (ret = relay_steer_listen(old, rlay, 0, nproc, 1)) <= 0)
		return (ret);

	if (old != NULL && (prev = relay_findbyaddr(old,
	    &rlay->rl_conf)) != NULL && prev->rl_us != -1) {
		if ((s = fcntl(prev->rl_us, F_DUPFD_CLOEXEC, 0)) == -1) {
			log_warn("relay %s: dup", rlay->rl_conf.name);
			return (-1);
		}
		rlay->rl_us = s;
		return (0);
	}
	if ((s = socket(rlay->rl_conf.ss.ss_family, SOCK_DGRAM |
	    SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_UDP)) == -1) {
		log_warn("relay %s: socket", rlay->rl_conf.name);
		return (-1);
	}
	if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) == -1 ||
	    setsockopt(s, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)) == -1) {
		log_warn("relay %s: setsockopt", rlay->rl_conf.name);
		close(s);
		return (-1);
	}
	if (relay_bind(rlay, s, 0) == -1) {
		log_warn("relay %s: cannot listen on %s udp port %d",
		    rlay->rl_conf.name, print_host(&rlay->rl_conf.ss, buf,
		    sizeof(buf)), rlay->rl_conf.port);
		close(s);
		return (-1);
	}
	rlay->rl_us = s;
	return (0);
}

/*
 * Parent: a unix-socket listener (ours).  A socket file left by a
 * relayd that is gone is replaced; one somebody listens on is busy, as
 * a TCP port would be.  The mode comes from the umask at bind(2) and
 * the owner from lchown(2), so that nothing follows a link put in the
 * socket's place.
 */
static int
relay_unix_listen(struct relay *rlay, int backlog)
{
	struct sockaddr_un	*sun = (struct sockaddr_un *)&rlay->rl_conf.ss;
	struct stat		 st;
	mode_t			 omask;
	int			 s, t, ret;

	if (lstat(sun->sun_path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			log_warnx("relay %s: cannot listen on %s: not a "
			    "socket", rlay->rl_conf.name, sun->sun_path);
			return (-1);
		}
		if ((t = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0)) == -1) {
			log_warn("relay %s: socket", rlay->rl_conf.name);
			return (-1);
		}
		ret = connect(t, (struct sockaddr *)sun, sizeof(*sun));
		close(t);
		if (ret == 0 || errno == EAGAIN) {
			errno = EADDRINUSE;
			log_warn("relay %s: cannot listen on %s",
			    rlay->rl_conf.name, sun->sun_path);
			return (-1);
		}
		/* nobody there: a stale socket file */
		(void)unlink(sun->sun_path);
	}
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1) {
		log_warn("relay %s: socket", rlay->rl_conf.name);
		return (-1);
	}
	omask = umask(~rlay->rl_conf.sun_mode & 0777);
	ret = bind(s, (struct sockaddr *)sun, sizeof(*sun));
	(void)umask(omask);
	if (ret == -1) {
		log_warn("relay %s: cannot listen on %s", rlay->rl_conf.name,
		    sun->sun_path);
		close(s);
		return (-1);
	}
	rlay->rl_s = s;
	rlay->rl_unlink = 1;
	if (relay_unix_perms(rlay) == -1 || listen(s, backlog) == -1) {
		log_warn("relay %s: listen on %s", rlay->rl_conf.name,
		    sun->sun_path);
		return (-1);
	}
	return (0);
}

/* The owner, group and mode of a unix listener, again at a reload. */
static int
relay_unix_perms(struct relay *rlay)
{
	struct sockaddr_un	*sun = (struct sockaddr_un *)&rlay->rl_conf.ss;
	struct stat		 st;

	rlay->rl_unlink = 1;
	if ((rlay->rl_conf.sun_uid != (uid_t)-1 ||
	    rlay->rl_conf.sun_gid != (gid_t)-1) &&
	    lchown(sun->sun_path, rlay->rl_conf.sun_uid,
	    rlay->rl_conf.sun_gid) == -1) {
		log_warn("relay %s: chown %s", rlay->rl_conf.name,
		    sun->sun_path);
		return (-1);
	}
	if (lstat(sun->sun_path, &st) == -1 || !S_ISSOCK(st.st_mode)) {
		log_warnx("relay %s: %s is no longer its socket",
		    rlay->rl_conf.name, sun->sun_path);
		return (-1);
	}
	if ((st.st_mode & 0777) != rlay->rl_conf.sun_mode &&
	    chmod(sun->sun_path, rlay->rl_conf.sun_mode) == -1) {
		log_warn("relay %s: chmod %s", rlay->rl_conf.name,
		    sun->sun_path);
		return (-1);
	}
	return (0);
}

/*
 * Parent: the socket files of conf's unix listeners that keep does not
 * listen on (all of them without keep) go: at shutdown, after a reload,
 * and after a reload that failed.
 */
void
relay_unix_unlink(struct relayd *conf, struct relayd *keep)
{
	struct relay	*rlay;

	TAILQ_FOREACH(rlay, conf->sc_relays, rl_entry)
		if (rlay->rl_unlink && rlay->rl_conf.ss.ss_family == AF_UNIX &&
		    (keep == NULL ||
		    relay_findbyaddr(keep, &rlay->rl_conf) == NULL))
			(void)unlink(((struct sockaddr_un *)
			    &rlay->rl_conf.ss)->sun_path);
}

/*
 * Parent: transparent forward asks for a socket bound to the client's
 * address, which only a privileged process may make; the relay
 * connects it.  A failure sends no descriptor.
 */
void
parent_bindany(struct privsep *ps, struct imsg *imsg)
{
	struct ctl_bindany	 bnd;
	int			 s;

	IMSG_EXACT_SIZE_CHECK(imsg, &bnd);
	memcpy(&bnd, imsg->data, sizeof(bnd));
	if (bnd.instance >= proc_ninstances(ps, PROC_RELAY))
		return;
	if ((s = socket(bnd.ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, IPPROTO_TCP)) != -1) {
		/* the client's address; the port comes with connect(2) */
		compat_bind_noport(s);
		if (compat_transparent(s, bnd.ss.ss_family) == -1 ||
		    bind(s, (struct sockaddr *)&bnd.ss,
		    ss_len(&bnd.ss)) == -1) {
			log_warn("%s: session %u", __func__, bnd.id);
			close(s);
			s = -1;
		}
	} else
		log_warn("%s: session %u", __func__, bnd.id);
	proc_compose_imsg(ps, PROC_RELAY, bnd.instance, IMSG_BINDANY, 0, s,
	    &bnd, sizeof(bnd));
}

/*
 * Parent: a socket connected to a unix-socket backend, for a relay's
 * session or an hce check (their chroot hides the path).  Only a path
 * the configuration names as a backend is connected; the answer carries
 * the socket, or none and the errno.
 */
void
parent_unixconnect(struct privsep *ps, struct imsg *imsg,
    enum privsep_procid id)
{
	struct relayd		*conf = ps->ps_env;
	struct ctl_unixconnect	 uc;
	struct sockaddr_un	*sun = (struct sockaddr_un *)&uc.ss;
	struct relay		*rlay;
	struct host		*h;
	int			 s = -1, known = 0;

	IMSG_EXACT_SIZE_CHECK(imsg, &uc);
	memcpy(&uc, imsg->data, sizeof(uc));
	if (id == PROC_RELAY && uc.instance >= proc_ninstances(ps, PROC_RELAY))
		return;
	sun->sun_path[sizeof(sun->sun_path) - 1] = '\0';
	if (uc.ss.ss_family == AF_UNIX) {
		TAILQ_FOREACH(rlay, conf->sc_relays, rl_entry)
			if (rlay->rl_conf.dstss.ss_family == AF_UNIX &&
			    strcmp(((struct sockaddr_un *)
			    &rlay->rl_conf.dstss)->sun_path,
			    sun->sun_path) == 0)
				known = 1;
		TAILQ_FOREACH(h, &conf->sc_hosts, globalentry)
			if (h->conf.ss.ss_family == AF_UNIX &&
			    strcmp(((struct sockaddr_un *)&h->conf.ss)->sun_path,
			    sun->sun_path) == 0)
				known = 1;
	}
	uc.error = 0;
	if (!known) {
		log_warnx("%s: %s is no backend of the configuration",
		    __func__, uc.ss.ss_family == AF_UNIX ? sun->sun_path :
		    "(not a unix socket)");
		uc.error = EPERM;
	} else if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1 ||
	    connect(s, (struct sockaddr *)sun, sizeof(*sun)) == -1) {
		uc.error = errno;
		if (s != -1)
			close(s);
		s = -1;
	}
	proc_compose_imsg(ps, id, id == PROC_RELAY ? (int)uc.instance : -1,
	    IMSG_UNIXCONNECT, 0, s, &uc, sizeof(uc));
}

/*
 * Parent: relayd writes no firewall rule and no route, but says so when
 * a transparent relay's answers cannot reach it: they need a policy
 * route for the packets the firewall marks (relayd.conf(5) has both),
 * and its sockets CAP_NET_ADMIN.
 */
void
relay_transparent_check(struct relay *rlay)
{
	int	 af = rlay->rl_conf.ss.ss_family;

	if ((rlay->rl_conf.flags & (F_TRANSPARENT | F_DIVERT)) == 0)
		return;
	if (!compat_net_admin()) {
		log_warnx("relay %s: transparent relaying needs "
		    "CAP_NET_ADMIN, which relayd does not have: its "
		    "connections will fail", rlay->rl_conf.name);
		return;
	}
	if (compat_transparent_route(af) != 0)
		return;
	log_warnx("relay %s: no policy route for marked packets, its "
	    "connections will hang: ip%s rule add fwmark 1 lookup 100; "
	    "ip%s route add local %s dev lo table 100 (see relayd.conf(5), "
	    "TRANSPARENT RELAYS)", rlay->rl_conf.name,
	    af == AF_INET6 ? " -6" : "", af == AF_INET6 ? " -6" : "",
	    af == AF_INET6 ? "::/0" : "0.0.0.0/0");
}
