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
 * The control socket: created by the parent (it runs as root outside the
 * chroot and can remove it again), served by pfe.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "relayd.h"

#define CONTROL_BACKLOG	5
/* what one client may leave unread before it asks again */
#define CONTROL_MAXQUEUED	1024		/* messages */
#define CONTROL_MAXQUEUEDLEN	(256 * 1024)	/* bytes */
/* clients at once on a socket; on the restricted one, of one uid */
#define CONTROL_MAXCONNS	128
#define CONTROL_MAXCONNS_UID	16

static struct ctl_connlist	 ctl_conns = TAILQ_HEAD_INITIALIZER(ctl_conns);
/* the control socket, and the restricted one */
struct ctl_listener {
	int			 cl_fd;
	struct event		 cl_ev;
	struct ctl_sock		 cl_sock;
};
static struct ctl_listener	 ctl_ls[2];
static int			 ctl_nls;
static struct event		 ctl_evt;
static uint32_t			 ctl_lastid;
static unsigned int		 ctl_nconns;
static volatile int		 ctl_inflight;
static struct relayd		*ctl_env;

static void	 control_accept(int, short, void *);
static void	 control_close(struct ctl_conn *);
static void	 control_dispatch_imsg(int, short, void *);
static int	 control_permitted(uint32_t);
static int	 control_full(struct ctl_listener *, uid_t);
static int	 control_backlog(struct ctl_conn *);
static void	 control_deny(struct ctl_conn *, uint32_t);
static int	 control_show(struct ctl_conn *, struct imsg *);

/* Parent: create the socket, refusing to steal a live one. */
int
control_init(const char *path, int restricted, gid_t *gid)
{
	struct sockaddr_un	 sun;
	struct stat		 st;
	mode_t			 old_umask;
	int			 fd, probe;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlcpy(sun.sun_path, path, sizeof(sun.sun_path)) >=
	    sizeof(sun.sun_path)) {
		log_warnx("control socket %s: path too long", path);
		return (-1);
	}

	if ((probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		log_warn("%s: socket", __func__);
		return (-1);
	}
	if (connect(probe, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
		log_warnx("control socket %s is in use: is relayd already "
		    "running?", path);
		close(probe);
		return (-1);
	}
	close(probe);

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0)) == -1) {
		log_warn("%s: socket", __func__);
		return (-1);
	}
	if (unlink(path) == -1 && errno != ENOENT) {
		log_warn("control socket %s: unlink", path);
		close(fd);
		return (-1);
	}
	old_umask = umask(S_IXUSR | S_IXGRP | S_IWOTH | S_IROTH | S_IXOTH);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		log_warn("control socket %s: bind", path);
		(void)umask(old_umask);
		close(fd);
		return (-1);
	}
	(void)umask(old_umask);
	/* the restricted one, anyone's: it changes nothing */
	if (chmod(path, S_IRUSR | S_IWUSR | S_IRGRP | S_IWGRP |
	    (restricted ? S_IROTH | S_IWOTH : 0)) == -1 ||
	    stat(path, &st) == -1) {
		log_warn("control socket %s: chmod", path);
		close(fd);
		(void)unlink(path);
		return (-1);
	}
	if (listen(fd, CONTROL_BACKLOG) == -1) {
		log_warn("control socket %s: listen", path);
		close(fd);
		(void)unlink(path);
		return (-1);
	}
	*gid = st.st_gid;
	return (fd);
}

void
control_cleanup(const char *path)
{
	if (path != NULL)
		(void)unlink(path);
}

/* pfe: serve a socket the parent passed. */
void
control_listen(struct relayd *env, int fd, struct ctl_sock *cs)
{
	struct ctl_listener	*l;

	if (ctl_nls == (int)nitems(ctl_ls)) {
		close(fd);
		return;
	}
	l = &ctl_ls[ctl_nls++];
	ctl_env = env;
	l->cl_fd = fd;
	l->cl_sock = *cs;
	socket_set_blockmode(fd, 0);
	event_set(&l->cl_ev, fd, EV_READ, control_accept, l);
	event_add(&l->cl_ev, NULL);
	evtimer_set(&ctl_evt, control_accept, NULL);
}

/* Accepting stops for a second (no descriptors), or goes on. */
static void
control_accepting(int on)
{
	int	 i;

	for (i = 0; i < ctl_nls; i++) {
		if (on)
			event_add(&ctl_ls[i].cl_ev, NULL);
		else
			event_del(&ctl_ls[i].cl_ev);
	}
}

static void
control_accept(int listenfd, short event, void *arg)
{
	struct ctl_listener	*l = arg;
	struct sockaddr_un	 sun;
	struct ctl_conn		*c;
	struct timeval		 tv = { 1, 0 };
	socklen_t		 len;
	uid_t			 uid;
	gid_t			 gid;
	int			 connfd;

	(void)listenfd;
	if (event & EV_TIMEOUT) {
		control_accepting(1);
		return;
	}
	event_add(&l->cl_ev, NULL);

	len = sizeof(sun);
	if ((connfd = accept_reserve(l->cl_fd, (struct sockaddr *)&sun, &len,
	    FD_RESERVE, &ctl_inflight)) == -1) {
		if (errno == ENFILE || errno == EMFILE) {
			/* no descriptors: stop accepting for a second */
			control_accepting(0);
			evtimer_add(&ctl_evt, &tv);
		} else if (errno != EWOULDBLOCK && errno != EINTR &&
		    errno != ECONNABORTED)
			log_warn("%s: accept", __func__);
		return;
	}
	ctl_inflight--;

	if (getpeereid(connfd, &uid, &gid) == -1) {
		log_warn("%s: getpeereid", __func__);
		close(connfd);
		return;
	}
	if (!l->cl_sock.cs_restricted && uid != 0 &&
	    gid != l->cl_sock.cs_gid) {
		log_warnx("control: connection of uid %u gid %u refused",
		    (unsigned int)uid, (unsigned int)gid);
		close(connfd);
		return;
	}

	if (control_full(l, uid)) {
		close(connfd);
		return;
	}

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		log_warn("%s", __func__);
		close(connfd);
		return;
	}
	imsg_init(&c->iev.ibuf, connfd);
	c->iev.handler = control_dispatch_imsg;
	c->iev.data = c;
	c->id = ++ctl_lastid;
	if (c->id == 0)
		c->id = ++ctl_lastid;
	c->uid = uid;
	if (l->cl_sock.cs_restricted)
		c->flags |= CTL_CONN_RESTRICTED;
	imsg_event_add(&c->iev);
	TAILQ_INSERT_TAIL(&ctl_conns, c, entry);
	ctl_nconns++;
}

/*
 * No more clients on a socket than CONTROL_MAXCONNS, and on the
 * restricted one, which anyone may reach, no more than
 * CONTROL_MAXCONNS_UID of one user: each holds pfe's memory for its
 * answers, and the restricted socket's clients cannot fill the other.
 */
static int
control_full(struct ctl_listener *l, uid_t uid)
{
	static struct log_ratelimit	 rls[2] = {
		LOG_RATELIMIT(60), LOG_RATELIMIT(60)
	};
	struct ctl_conn			*c;
	unsigned int			 n = 0, nuid = 0;
	int				 restricted;
	struct log_ratelimit		*rl;

	restricted = l->cl_sock.cs_restricted != 0;
	rl = &rls[restricted];
	TAILQ_FOREACH(c, &ctl_conns, entry) {
		if (((c->flags & CTL_CONN_RESTRICTED) != 0) != restricted)
			continue;
		n++;
		nuid += c->uid == uid;
	}
	if (n < CONTROL_MAXCONNS &&
	    (!restricted || nuid < CONTROL_MAXCONNS_UID))
		return (0);
	if (log_ratelimit(rl)) {
		if (n >= CONTROL_MAXCONNS)
			log_warnx("control: connection of uid %u refused: %u "
			    "clients already (%llu times)", (unsigned int)uid,
			    n, (unsigned long long)rl->count);
		else
			log_warnx("control: connection of uid %u refused: %u "
			    "of its clients on the restricted socket already "
			    "(%llu times)", (unsigned int)uid, nuid,
			    (unsigned long long)rl->count);
	}
	return (1);
}

/*
 * A client that asks again, or a monitor that is sent an event, while
 * CONTROL_MAXQUEUED messages or CONTROL_MAXQUEUEDLEN bytes wait for it
 * does not read what it is sent: its backlog would be pfe's memory.
 */
static int
control_backlog(struct ctl_conn *c)
{
	return (c->iev.ibuf.w.queued >= CONTROL_MAXQUEUED ||
	    c->iev.ibuf.w.queuedlen >= CONTROL_MAXQUEUEDLEN);
}

struct ctl_conn *
control_connbyid(uint32_t id)
{
	struct ctl_conn	*c;

	TAILQ_FOREACH(c, &ctl_conns, entry)
		if (c->id == id)
			return (c);
	return (NULL);
}

static void
control_close(struct ctl_conn *c)
{
	TAILQ_REMOVE(&ctl_conns, c, entry);
	ctl_nconns--;
	event_del(&c->iev.ev);
	imsg_clear(&c->iev.ibuf);
	close(c->iev.ibuf.fd);
	free(c);
	/* the last client gone: what the answers took goes back */
	if (ctl_nconns == 0)
		compat_memtrim();

	/* a descriptor is free again */
	if (evtimer_pending(&ctl_evt, NULL)) {
		evtimer_del(&ctl_evt);
		control_accepting(1);
	}
}

void
control_close_all(void)
{
	struct ctl_conn	*c;

	while ((c = TAILQ_FIRST(&ctl_conns)) != NULL)
		control_close(c);
}

/* A request that cannot be valid: say so in the log and hang up. */
static void
control_drop(struct ctl_conn *c, const char *why)
{
	log_warnx("control: %s from uid %u, connection closed", why,
	    (unsigned int)c->uid);
	control_close(c);
}
/* What the restricted socket answers: show, status, sessions, monitor. */
static int
control_permitted(uint32_t type)
{
	return (type == IMSG_CTL_SHOW_SUM || type == IMSG_CTL_STATUS ||
	    type == IMSG_CTL_SESSION || type == IMSG_CTL_NOTIFY ||
	    type == IMSG_CTL_OVERLOAD);
}

/*
 * A request the restricted socket does not take: the client is told
 * why, and the log says so once a minute for each kind of request.
 */
static void
control_deny(struct ctl_conn *c, uint32_t type)
{
	static struct log_ratelimit	 rl[IMSG_MAX];

	if (rl[type].interval == 0)
		rl[type].interval = 60;
	if (log_ratelimit(&rl[type]))
		log_warnx("control: %s from uid %u refused on the "
		    "restricted socket (%llu times)", imsg_type_name(type),
		    (unsigned int)c->uid, (unsigned long long)rl[type].count);
	imsg_compose_event(&c->iev, IMSG_CTL_DENIED, 0, 0, -1, NULL, 0);
}

/* What a client asks to see, and the overload tables' verbs. */
static int
control_show(struct ctl_conn *c, struct imsg *imsg)
{
	size_t	 want = 0;

	if (imsg->hdr.type == IMSG_CTL_OVERLOAD_DEL)
		want = sizeof(struct ctl_overload);
	if (IMSG_DATA_SIZE(imsg) != want)
		return (-1);
	switch (imsg->hdr.type) {
	case IMSG_CTL_SHOW_SUM:
		show(c);
		break;
	case IMSG_CTL_STATUS:
		show_status(c);
		break;
	case IMSG_CTL_SESSION:
		show_sessions(c);
		break;
	case IMSG_CTL_OVERLOAD:
		show_overload(c);
		break;
	default:
		overload_delete(c, imsg);
		break;
	}
	return (0);
}

/* One request of a client: -1 for one that is not valid. */
static int
control_request(struct ctl_conn *c, struct imsg *imsg)
{
	struct privsep			*ps = ctl_env->sc_ps;
	struct ctl_id			 id;
	int				 verbose;

	if (imsg->hdr.type >= IMSG_MAX)
		return (-1);
	if ((c->flags & CTL_CONN_RESTRICTED) &&
	    !control_permitted(imsg->hdr.type)) {
		control_deny(c, imsg->hdr.type);
		return (0);
	}
	switch (imsg->hdr.type) {
	case IMSG_CTL_SHOW_SUM:
	case IMSG_CTL_STATUS:
	case IMSG_CTL_SESSION:
	case IMSG_CTL_OVERLOAD:
	case IMSG_CTL_OVERLOAD_DEL:
		return (control_show(c, imsg));
	case IMSG_CTL_RELOAD:
		if (IMSG_DATA_SIZE(imsg) >= PATH_MAX)
			return (-1);
		proc_compose_imsg(ps, PROC_PARENT, 0, IMSG_CTL_RELOAD,
		    c->id, -1, imsg->data, IMSG_DATA_SIZE(imsg));
		break;
	case IMSG_CTL_SHUTDOWN:
		if (IMSG_DATA_SIZE(imsg) != 0)
			return (-1);
		imsg_compose_event(&c->iev, IMSG_CTL_OK, 0, 0, -1,
		    NULL, 0);
		/*
		 * The answer goes before the parent stops us, if the
		 * socket takes it now: waiting for a client that does
		 * not read would wedge pfe.
		 */
		(void)msgbuf_write(&c->iev.ibuf.w);
		proc_compose(ps, PROC_PARENT, IMSG_CTL_SHUTDOWN,
		    NULL, 0);
		break;
	case IMSG_CTL_NOTIFY:
		if (IMSG_DATA_SIZE(imsg) != 0)
			return (-1);
		c->flags |= CTL_CONN_NOTIFY;
		break;
	case IMSG_CTL_VERBOSE:
		if (IMSG_DATA_SIZE(imsg) != sizeof(verbose))
			return (-1);
		memcpy(&verbose, imsg->data, sizeof(verbose));
		if (verbose < 0 || verbose > 2)
			return (-1);
		log_setverbose(verbose);
		proc_compose(ps, PROC_PARENT, IMSG_CTL_VERBOSE,
		    &verbose, sizeof(verbose));
		imsg_compose_event(&c->iev, IMSG_CTL_OK, 0, 0, -1,
		    NULL, 0);
		break;
	case IMSG_CTL_POLL:
		if (IMSG_DATA_SIZE(imsg) != 0)
			return (-1);
		proc_compose(ps, PROC_HCE, IMSG_CTL_POLL, NULL, 0);
		imsg_compose_event(&c->iev, IMSG_CTL_OK, 0, 0, -1,
		    NULL, 0);
		break;
	case IMSG_CTL_HOST_ENABLE:
	case IMSG_CTL_HOST_DISABLE:
	case IMSG_CTL_TABLE_ENABLE:
	case IMSG_CTL_TABLE_DISABLE:
		if (IMSG_DATA_SIZE(imsg) != sizeof(id))
			return (-1);
		memcpy(&id, imsg->data, sizeof(id));
		imsg_compose_event(&c->iev,
		    pfe_enable(imsg->hdr.type, &id) == 0 ?
		    IMSG_CTL_OK : IMSG_CTL_FAIL, 0, 0, -1, NULL, 0);
		break;
	case IMSG_CTL_RDR_ENABLE:
	case IMSG_CTL_RDR_DISABLE:
		if (IMSG_DATA_SIZE(imsg) != sizeof(id))
			return (-1);
		memcpy(&id, imsg->data, sizeof(id));
		imsg_compose_event(&c->iev,
		    pfe_rdr_enable(imsg->hdr.type, &id) == 0 ?
		    IMSG_CTL_OK : IMSG_CTL_FAIL, 0, 0, -1, NULL, 0);
		break;
	default:
		return (-1);
	}
	return (0);
}


static void
control_dispatch_imsg(int fd, short event, void *arg)
{
	struct ctl_conn	*c = arg;
	struct imsg	 imsg;
	ssize_t		 n;

	(void)fd;
	if (event & EV_READ) {
		n = imsg_read(&c->iev.ibuf);
		if (n == 0 || (n == -1 && errno != EAGAIN)) {
			if (n == -1 && errno != ECONNRESET)
				control_drop(c, "unreadable message");
			else
				control_close(c);
			return;
		}
	}
	if (event & EV_WRITE) {
		if (msgbuf_write(&c->iev.ibuf.w) == -1 && errno != EAGAIN) {
			control_close(c);
			return;
		}
	}

	for (;;) {
		if ((n = imsg_get(&c->iev.ibuf, &imsg)) == -1) {
			control_drop(c, "malformed message");
			return;
		}
		if (n == 0)
			break;
		if (imsg.fd != -1) {
			close(imsg.fd);
			imsg.fd = -1;
		}

		if (c->flags & CTL_CONN_NOTIFY) {
			/* a monitor only listens */
			imsg_free(&imsg);
			control_drop(c, "request on a monitor connection");
			return;
		}
		/* relayctl asks once: one that asks on unread is not served */
		if (control_backlog(c)) {
			log_warnx("control: client of uid %u does not read "
			    "its answers (%u waiting, %zu bytes), connection "
			    "closed", (unsigned int)c->uid,
			    c->iev.ibuf.w.queued, c->iev.ibuf.w.queuedlen);
			imsg_free(&imsg);
			control_close(c);
			return;
		}

		if (control_request(c, &imsg) == -1) {
			imsg_free(&imsg);
			control_drop(c, "invalid request");
			return;
		}
		imsg_free(&imsg);
	}
	imsg_event_add(&c->iev);
}

/* Pass an event on to every relayctl monitor. */
void
control_imsg_forward(struct privsep *ps, struct imsg *imsg)
{
	(void)ps;
	control_notify(imsg->hdr.type, imsg->data, IMSG_DATA_SIZE(imsg));
}

/*
 * An event for every relayctl monitor.  A monitor that does not read
 * is dropped once its backlog is full (control_backlog()).
 */
void
control_notify(uint32_t type, const void *data, size_t len)
{
	struct ctl_conn	*c, *next;

	for (c = TAILQ_FIRST(&ctl_conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if ((c->flags & CTL_CONN_NOTIFY) == 0)
			continue;
		if (control_backlog(c)) {
			log_warnx("control: monitor of uid %u does not read "
			    "(%u events waiting), connection closed",
			    (unsigned int)c->uid, c->iev.ibuf.w.queued);
			control_close(c);
			continue;
		}
		imsg_compose_event(&c->iev, type, 0, 0, -1, data, len);
	}
}

/* Answer a relayctl request that went to another process. */
void
control_reply(uint32_t id, uint32_t type)
{
	struct ctl_conn	*c;

	if ((c = control_connbyid(id)) == NULL)
		return;
	imsg_compose_event(&c->iev, type, 0, 0, -1, NULL, 0);
}
