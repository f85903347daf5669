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
 * relay: accepts clients, picks a backend, connects, and moves the bytes
 * of both directions with the splice engine.  Every relay process serves
 * every relay, on listening sockets the parent opened.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>


#include <tls.h>

#include "relayd.h"
#include "relay.h"

#define RELAY_ACCEPT_ROUNDS	16
#define RELAY_DEFERLOG		60	/* seconds between deferral logs */
#define RELAY_PORTWAITS		5	/* tries without a local port, */
#define RELAY_PORTWAIT_US	5000	/* the first after 5 ms, doubling */
#define RELAY_PORTMOVES		2	/* then other hosts of the table */
#define RELAY_FDWAITS		5	/* seconds a connect waits for a
					   descriptor */
#define RELAY_FDCOUNT_MS	1000	/* between counts of descriptors */
#define RELAY_MAX_PREFETCH	(256 * 1024)	/* unsent bytes before a
						   side stops reading */
/*
 * What is left of a body or chunk is spliced from this size on, copied
 * below it: GET of N bytes through an http relay, 16 connections,
 * copied/spliced req/s: 4 KiB 1.04, 16 KiB 0.99, 64 KiB 1.01, 128 KiB
 * 1.10, 256 KiB 1.01, 1 MiB 0.78 (make bench's http backend, loopback).
 */
#define RELAY_SPLICE_MIN	(256 * 1024)

static void	 relay_init(struct privsep *, struct privsep_proc *, void *);
static int	 relay_dispatch_parent(int, struct privsep_proc *,
		    struct imsg *);
static int	 relay_dispatch_pfe(int, struct privsep_proc *,
		    struct imsg *);
static int	 relay_dispatch_ca(int, struct privsep_proc *,
		    struct imsg *);
static void	 relay_launch(void);
static void	 relay_bindany_done(struct imsg *);
static int	 relay_original_dst(struct rsession *);
static int	 relay_pick(struct rsession *);
static void	 relay_reset(struct imsg *);
static void	 relay_accept(int, short, void *);
static void	 relay_accept_defer(struct relay *, int);
static int	 relay_portwait(struct rsession *, int);
static void	 relay_portwait_done(int, short, void *);
static void	 relay_portlog(struct rsession *, int, int);
static int	 relay_fds_left(void);
static int	 relay_fdwait(struct rsession *, int);
static const struct relay_ops *
		 relay_proto_ops(struct rsession *);
static void	 relay_session_init(struct rsession *, struct relay *,
		    const struct relay_ops *, int, struct sockaddr_storage *);
static void	 relay_link_start(int, short, void *);
static void	 relay_session(struct relay *, int,
		    struct sockaddr_storage *, struct lim_ent *);
static void	 relay_refuse(int);
static void	 relay_session_begin(struct rsession *);
static void	 relay_unixconnect_done(struct imsg *);
static struct rsession *
		 relay_answered(struct imsg *, void *, size_t,
		    enum relay_cstate);
static int	 relay_wait_start(struct rsession *, struct event *, int,
		    short, void (*)(int, short, void *), void *);
static void	 relay_pp_wait(struct rsession *);
static void	 relay_pp_read(int, short, void *);
static void	 relay_hello_wait(struct rsession *);
static void	 relay_hello_read(int, short, void *);
static int	 relay_pp_send(struct rsession *);
static void	 relay_connected(int, short, void *);
static int	 relay_retry(struct rsession *, enum relay_cfail, int);
static int	 relay_connect_failed(struct rsession *, enum relay_cfail, int);
static int	 relay_connect_socket(struct rsession *);
static int	 relay_connect_start(struct rsession *, int);
static void	 relay_side_close(struct ctl_relay_event *);
static int	 relay_splice(struct ctl_relay_event *);
static int	 relay_splice_run(struct ctl_relay_event *, off_t);
static int	 relay_splice_flags(struct rsession *);
static void	 relay_splice_done(struct rsplice *, int, void *);
static int	 relay_idle_alive(struct ctl_relay_event *);
static void	 relay_input(struct bufferevent *, void *);
static void	 relay_output_done(struct bufferevent *, void *);
static void	 relay_error(struct bufferevent *, short, void *);
static void	 relay_read_socket(int, short, void *);
static void	 relay_count_written(struct evbuffer *,
		    const struct evbuffer_cb_info *, void *);
static void	 relay_session_free(struct rsession *);
static void	 relay_link_adopt(struct rsession *);
static void	 relay_accept_resume(void);
static int	 relay_nowned(void);
static void	 relay_peak_note(void);
static uint64_t	 relay_bytes(struct ctl_relay_event *, int);

static void	 relay_act(struct rsession *, struct ctl_relay_event *,
		    enum relay_verdict);
static int	 relay_connect(struct rsession *);
static int	 relay_reconnect(struct rsession *);
static void	 relay_session_accepted(struct rsession *);
static void	 relay_session_start(struct rsession *);
static int	 relay_client_gone(struct ctl_relay_event *);
static int	 relay_bufferevent(struct ctl_relay_event *);
static void	 relay_eof(struct ctl_relay_event *);
static void	 relay_flush(struct ctl_relay_event *);
static enum relay_verdict
		 relay_tcp_init(struct rsession *);
static enum relay_verdict
		 relay_tcp_read(struct ctl_relay_event *);
static enum relay_verdict
		 relay_tcp_passed(struct ctl_relay_event *);
static enum relay_verdict
		 relay_tcp_connected(struct rsession *);
static enum relay_verdict
		 relay_tcp_eof(struct ctl_relay_event *);
static void	 relay_tcp_abort(struct rsession *, enum relay_cfail, int);
static void	 relay_tcp_free(struct rsession *);

/* tcp: everything passes as it comes, spliced but for TLS */
static const struct relay_ops relay_tcp_ops = {
	"tcp", 0, relay_tcp_init, relay_tcp_read, relay_tcp_passed,
	relay_tcp_connected, relay_tcp_eof, relay_tcp_abort, relay_tcp_free,
	NULL, NULL
};

static struct relayd		*env;
static struct privsep		*rps;
struct sessionlist		 relay_sessions =
				    TAILQ_HEAD_INITIALIZER(relay_sessions);
static int			 relay_nsessions;
static int			 relay_ndgrams;	/* of them, dns queries */
static int			 relay_nlinks;	/* links, not among them */
static int			 relay_nshared;	/* of them, shared links */
static int			 relay_npeak;	/* most, shared ones aside */
static objid_t			 relay_conid;
static objid_t			 relay_linkid;
/* how a link's connect starts (the fuzz target gives its own) */
static int			(*relay_link_connect)(struct rsession *) =
				    relay_connect;
static int			 relay_basefds;
static int			 relay_maxfds;
static int			 relay_started;

static struct privsep_proc procs[] = {
	{ "parent",	PROC_PARENT,	relay_dispatch_parent,	NULL, NULL },
	{ "pfe",	PROC_PFE,	relay_dispatch_pfe,	NULL, NULL },
	{ "ca",		PROC_CA,	relay_dispatch_ca,	NULL, NULL }
};

void
relay(struct privsep *ps, struct privsep_proc *p)
{
	env = ps->ps_env;
	rps = ps;
	proc_run(ps, p, procs, nitems(procs), relay_init, NULL);
}

static void
relay_init(struct privsep *ps, struct privsep_proc *p, void *arg)
{
	struct rlimit	 rl;

	(void)p;
	(void)arg;
	/* as many sessions as the system lets us have */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	relay_maxfds = getdtablesize();
	relay_basefds = getdtablecount();

	if (compat_siphash_init() == -1)
		fatalx("%s: no SipHash in libcrypto", __func__);
	/* private keys stay in ca: their operations go there */
	if (compat_tlsconf_init() == -1)
		log_warnx("%s: OpenSSL's settings for TLS relays failed: "
		    "session tickets may be sent", __func__);
	if (compat_tlsticket_init() == -1)
		log_warnx("%s: no session tickets: libssl's "
		    "SSL_CTX_callback_ctrl not found", __func__);
	if (compat_tlsbuf_init() == -1)
		log_warnx("%s: libssl's SSL_CTX_ctrl not found", __func__);
	if (tls_init() == -1 || tls_keyops_init(ps) == -1)
		fatalx("%s: TLS initialisation failed", __func__);
	/* handshakes pause while ca works; else they wait for it */
	if (compat_tlsjob_init(TLS_MAXJOBS) == -1)
		log_debug("%s: no asynchronous jobs: a handshake waits for "
		    "ca", __func__);

	relay_stats_init(ps);
	if (compat_sandbox("relay") == -1)
		fatal("%s: sandbox", __func__);
}

static int
relay_dispatch_parent(int fd, struct privsep_proc *p, struct imsg *imsg)
{
	(void)fd;
	(void)p;
	switch (imsg->hdr.type) {
	case IMSG_CTL_RESET:
		relay_reset(imsg);
		break;
	case IMSG_CTL_START:
		relay_launch();
		break;
	case IMSG_TLSTICKET_REKEY:
		relay_tls_ticket_rekey(env, imsg);
		break;
	case IMSG_BINDANY:
		relay_bindany_done(imsg);
		break;
	case IMSG_UNIXCONNECT:
		relay_unixconnect_done(imsg);
		break;
	case IMSG_LIMIT_FLUSH:
		relay_limit_flushed(imsg);
		break;
	default:
		return (config_dispatch(env, imsg));
	}
	return (0);
}

static int
relay_dispatch_pfe(int fd, struct privsep_proc *p, struct imsg *imsg)
{
	struct ctl_overload	 co;
	struct ctl_hoststatus	 st;
	struct table		*tb;
	struct host		*h;

	(void)fd;
	switch (imsg->hdr.type) {
	case IMSG_CTL_SESSION:
		relay_sessions_send(p->p_ps, imsg->hdr.peerid);
		break;
	case IMSG_CTL_OVERLOAD:
		relay_limit_show(p->p_ps, imsg->hdr.peerid);
		break;
	case IMSG_CTL_OVERLOAD_DEL:
		IMSG_EXACT_SIZE_CHECK(imsg, &co);
		memcpy(&co, imsg->data, sizeof(co));
		relay_limit_delete(&co);
		break;
	case IMSG_HOST_STATUS:
		IMSG_EXACT_SIZE_CHECK(imsg, &st);
		memcpy(&st, imsg->data, sizeof(st));
		if ((h = host_find(env, st.id)) == NULL)
			break;
		h->up = st.up;
		break;
	case IMSG_CTL_HOST_ENABLE:
	case IMSG_CTL_HOST_DISABLE:
		if ((h = host_enable_imsg(env, imsg)) != NULL)
			h->up = HOST_UNKNOWN;
		break;
	case IMSG_CTL_TABLE_ENABLE:
	case IMSG_CTL_TABLE_DISABLE:
		if ((tb = table_enable_imsg(env, imsg)) == NULL)
			break;
		TAILQ_FOREACH(h, &tb->hosts, entry)
			h->up = HOST_UNKNOWN;
		break;
	default:
		return (-1);
	}
	return (0);
}

/*
 * The answer to a key operation that a paused handshake waits for; one
 * that comes after its operation gave up (TLS_PRIV_TIMEOUT): dropped.
 */
static int
relay_dispatch_ca(int fd, struct privsep_proc *p, struct imsg *imsg)
{
	(void)fd;
	(void)p;
	switch (imsg->hdr.type) {
	case IMSG_CA_PRIVENC:
	case IMSG_CA_PRIVDEC:
	case IMSG_CA_ECDSA:
		if (tls_keyops_answer(imsg) == -1)
			log_warnx("%s: late answer from ca dropped",
			    __func__);
		break;
	default:
		return (-1);
	}
	return (0);
}

static void
relay_launch(void)
{
	const char		*engine;
	struct relay		*rlay;
	struct relay_table	*rlt;
	struct host		*h;
	size_t			 n;

	if (splice_engine_init(env->sc_conf.splice_engine) == -1)
		log_warnx("splice engine %s is not available here, "
		    "using %s", splice_engine_name(env->sc_conf.splice_engine),
		    splice_engine_current());
	/* relayctl status says what the relays really use */
	engine = splice_engine_current();
	proc_compose(rps, PROC_PFE, IMSG_SPLICE_ENGINE, engine,
	    strlen(engine) + 1);

	TAILQ_FOREACH(rlay, env->sc_relays, rl_entry) {
		if ((rlay->rl_proto = proto_find(env,
		    rlay->rl_conf.proto)) == NULL)
			rlay->rl_proto = &env->sc_proto_default;
		TAILQ_FOREACH(rlt, &rlay->rl_tables, rlt_entry) {
			/* as many hosts as the table has: no fixed limit */
			n = 0;
			TAILQ_FOREACH(h, &rlt->rlt_table->hosts, entry)
				n++;
			free(rlt->rlt_host);
			if ((rlt->rlt_host = calloc(n + 1,
			    sizeof(*rlt->rlt_host))) == NULL)
				fatal("%s", __func__);
			rlt->rlt_nhosts = 0;
			TAILQ_FOREACH(h, &rlt->rlt_table->hosts, entry) {
				h->idx = rlt->rlt_nhosts;
				rlt->rlt_host[rlt->rlt_nhosts++] = h;
			}
			log_debug("adding %d hosts from table %s%s",
			    rlt->rlt_nhosts, rlt->rlt_table->conf.name,
			    rlt->rlt_table->conf.check ? "" : " (no check)");
		}
		if (rlay->rl_us != -1)
			relay_dns_launch(env, rlay);
		if (rlay->rl_s == -1)
			continue;
		if (relay_tls_setup(env, rlay) == -1)
			fatalx("relay %s: cannot set up TLS",
			    rlay->rl_conf.name);
		if ((rlay->rl_conf.flags & F_HASHKEY) == 0)
			arc4random_buf(rlay->rl_conf.hashkey.key8,
			    sizeof(rlay->rl_conf.hashkey.key8));
		event_set(&rlay->rl_ev, rlay->rl_s, EV_READ | EV_PERSIST,
		    relay_accept, rlay);
		event_add(&rlay->rl_ev, NULL);
		evtimer_set(&rlay->rl_evt, relay_accept, rlay);
		rlay->rl_up = 1;
		log_debug("relay_launch: running relay %s",
		    rlay->rl_conf.name);
	}
	relay_started = 1;
}

/*
 * Before a new configuration: the listeners of this process go, so that
 * a relay the reload removes stops accepting at once.  Sessions that
 * run keep the configuration they started with: it moves aside, whole,
 * and is freed when its last session ends.
 */
static void
relay_reset(struct imsg *imsg)
{
	struct relayd	*old;
	struct rsession	*con;
	struct relay	*rlay;

	(void)imsg;
	config_keepstats(env);
	TAILQ_FOREACH(rlay, env->sc_relays, rl_entry) {
		rlay->rl_retired = 1;
		if (rlay->rl_up) {
			event_del(&rlay->rl_ev);
			evtimer_del(&rlay->rl_evt);
			rlay->rl_up = 0;
		}
		/* a dns relay's socket stays for the answers under way */
		relay_dns_stop(rlay);
		if (rlay->rl_s != -1) {
			close(rlay->rl_s);
			rlay->rl_s = -1;
		}
	}
	relay_started = 0;
	/* the shared backend connections with nothing under way go */
	relay_h2b_retire();
	if (TAILQ_EMPTY(&relay_sessions)) {
		config_purge(env);
		return;
	}

	old = config_retain(env);
	TAILQ_FOREACH(con, &relay_sessions, se_entry)
		if (con->se_conf == NULL) {
			con->se_conf = old;
			old->sc_nsessions++;
		}
	/* every session runs on an older configuration: none keeps this */
	if (old->sc_nsessions == 0)
		config_free(old);
}

/*
 * Descriptors left for new sessions, after a reserve.  Counting them is
 * not free, so it is estimated, and counted only when the estimate says
 * the limit is near.
 */
static int
relay_fds_left(void)
{
	static struct timespec	 counted;
	static int		 offset;	/* counted minus estimated */
	struct timespec		 now;
	int			 left;

	/* a dns query's session holds no descriptor, its socket does */
	left = relay_maxfds - relay_basefds -
	    2 * (relay_nsessions - relay_ndgrams) - relay_nlinks -
	    relay_dns_sockets() - splice_fds_held() - FD_RESERVE;
	if (left >= 8 * FD_NEEDED)
		return (left - FD_NEEDED);
	/*
	 * Near the limit the estimate is corrected by a count, made at
	 * most once in RELAY_FDCOUNT_MS: a count looks at every slot of
	 * the table, and a loop at the limit would make it all the time.
	 */
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (counted.tv_sec == 0 ||
	    timespec_ms(&now, &counted) >= RELAY_FDCOUNT_MS) {
		offset = relay_maxfds - getdtablecount() - FD_RESERVE - left;
		counted = now;
		counted.tv_sec += counted.tv_sec == 0;
	}
	return (left + offset - FD_NEEDED);
}

/*
 * Accepting stops for a second when descriptors (or memory) run out.
 * Each stop counts (relayctl status); the log says so once a minute
 * per relay process, with the numbers and what to do about it.
 */
static void
relay_accept_defer(struct relay *rlay, int error)
{
	static struct log_ratelimit	 rl = LOG_RATELIMIT(RELAY_DEFERLOG);

	log_debug("%s: deferring connections", __func__);
	rlay->rl_stats[rps->ps_instance].deferred++;
	if (!log_ratelimit(&rl))
		return;
	if (error == EMFILE || error == ENFILE)
		log_warnx("relay %s: out of file descriptors (%d open, limit "
		    "%d, %d sessions): accepting deferred %llu times; raise "
		    "relayd's descriptor limit (ulimit -n, LimitNOFILE)",
		    rlay->rl_conf.name, getdtablecount(), relay_maxfds,
		    relay_nsessions, (unsigned long long)rl.count);
	else
		log_warnx("relay %s: out of memory for sockets (%s, %d "
		    "sessions): accepting deferred %llu times",
		    rlay->rl_conf.name, strerror(error), relay_nsessions,
		    (unsigned long long)rl.count);
}

static void
relay_accept(int fd, short event, void *arg)
{
	struct relay		*rlay = arg;
	struct sockaddr_storage	 ss;
	struct timeval		 tv = { 1, 0 };
	struct lim_ent		*lim;
	socklen_t		 slen;
	int			 s, i;

	(void)fd;
	if (event & EV_TIMEOUT) {
		/* the back-off is over */
		event_add(&rlay->rl_ev, NULL);
		return;
	}

	for (i = 0; i < RELAY_ACCEPT_ROUNDS; i++) {
		s = -1;
		if (relay_fds_left() < 0)
			errno = EMFILE;
		else {
			slen = sizeof(ss);
			s = accept4(rlay->rl_s, (struct sockaddr *)&ss, &slen,
			    SOCK_NONBLOCK | SOCK_CLOEXEC);
			/* an unnamed unix client sets its family only */
			if (s != -1 && slen < sizeof(ss))
				memset((char *)&ss + slen, 0,
				    sizeof(ss) - slen);
		}
		if (s == -1) {
			if (errno == ENFILE || errno == EMFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				/* no room: stop accepting for a second */
				relay_accept_defer(rlay, errno);
				event_del(&rlay->rl_ev);
				evtimer_add(&rlay->rl_evt, &tv);
			} else if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR && errno != ECONNABORTED)
				log_warn("relay %s: accept",
				    rlay->rl_conf.name);
			return;
		}

		if (rlay->rl_conf.flags & F_DISABLE) {
			close(s);
			continue;
		}
		/* limits per source the kernel does not keep */
		lim = NULL;
		if (RELAY_LIMITED(&rlay->rl_conf.lim) &&
		    !rlay->rl_conf.lim.lim_kernel &&
		    relay_limit_accept(rlay, &ss, &lim) == -1) {
			relay_refuse(s);
			continue;
		}
		relay_session(rlay, s, &ss, lim);
	}
}

/* A connection refused at once: reset, as the kernel refuses it. */
static void
relay_refuse(int s)
{
	struct linger	 l = { 1, 0 };

	(void)setsockopt(s, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(s);
}

/*
 * The relay a session of rlay counts in: rlay, or for a session that
 * runs on after a reload, the running configuration's relay of the
 * same name (which started from rlay's counters).
 */
struct relay *
relay_counted(struct relay *rlay)
{
	struct relay	*cur;

	if (rlay->rl_retired &&
	    (cur = relay_findbyname(env, rlay->rl_conf.name)) != NULL)
		return (cur);
	return (rlay);
}

/* This process's statistics of a relay, where its sessions count. */
struct relay_stats *
relay_stats_mine(struct relay *rlay)
{
	return (&relay_counted(rlay)->rl_stats[rps->ps_instance]);
}

/*
 * The hooks of a session's protocol, the one place that chooses them:
 * at its start by the relay's protocol, and again once its client's TLS
 * handshake is through, when an http relay's client may have chosen h2.
 */
static const struct relay_ops *
relay_proto_ops(struct rsession *con)
{
	struct protocol	*proto = con->se_relay->rl_proto;
	const char	*alpn;

	if (proto->type != RELAY_PROTO_HTTP)
		return (&relay_tcp_ops);
	/* h2 is offered to the TLS clients of "http http2" (relay_tls.c) */
	if ((proto->httpflags & HTTPFLAG_HTTP2) && con->se_in.tls != NULL &&
	    (alpn = tls_conn_alpn_selected(con->se_in.tls)) != NULL &&
	    strcmp(alpn, "h2") == 0)
		return (&relay_h2_ops);
	/* HTTP/1.1 clients of "http2 backend": their requests as streams */
	if (proto->httpflags & HTTPFLAG_H2BACKEND)
		return (&relay_h1b_ops);
	return (&relay_http_ops);
}

/* Sessions and their own links: not the shared links, which stay. */
static int
relay_nowned(void)
{
	return (relay_nsessions + relay_nlinks - relay_nshared);
}

/* relay_nowned(): the most there were since relay_sessions_peak(). */
static void
relay_peak_note(void)
{
	if (relay_nowned() > relay_npeak)
		relay_npeak = relay_nowned();
}

/*
 * The most sessions and their links there were since the last call,
 * however briefly; *now, how many there are.
 */
unsigned int
relay_sessions_peak(unsigned int *now)
{
	unsigned int	 peak = relay_npeak;

	*now = relay_nowned();
	relay_npeak = *now;
	return (peak > *now ? peak : *now);
}

/*
 * A session of rlay, counted: size bytes (a protocol may keep its own
 * after the rsession), s the client's socket (-1 for a datagram).
 */
struct rsession *
relay_session_new(struct relay *rlay, size_t size,
    const struct relay_ops *ops, int s, struct sockaddr_storage *ss)
{
	struct rsession	*con;

	if ((con = calloc(1, size)) == NULL)
		return (NULL);
	relay_session_init(con, rlay, ops, s, ss);
	con->se_id = ++relay_conid;
	TAILQ_INSERT_TAIL(&relay_sessions, con, se_entry);
	relay_nsessions++;
	relay_peak_note();
	if (s == -1) {
		con->se_dgram = 1;
		relay_ndgrams++;
	}
	rlay->rl_stats[rps->ps_instance].active++;
	rlay->rl_stats[rps->ps_instance].last++;
	rlay->rl_stats[rps->ps_instance].sessions++;
	return (con);
}

/* What every session starts with, a link too. */
static void
relay_session_init(struct rsession *con, struct relay *rlay,
    const struct relay_ops *ops, int s, struct sockaddr_storage *ss)
{
	con->se_in.s = s;
	con->se_in.ss = *ss;
	con->se_in.con = con;
	con->se_in.dst = &con->se_out;
	con->se_in.dir = RELAY_DIR_REQUEST;
	con->se_in.toread = TOREAD_UNLIMITED;
	con->se_out.s = -1;
	con->se_out.con = con;
	con->se_out.dst = &con->se_in;
	con->se_out.dir = RELAY_DIR_RESPONSE;
	con->se_out.toread = TOREAD_UNLIMITED;
	splice_init(&con->se_in.sp);
	splice_init(&con->se_out.sp);
	con->se_relay = rlay;
	con->se_relayid = rlay->rl_conf.id;
	con->se_ops = ops;
	TAILQ_INIT(&con->se_links);
	getevtime(&con->se_tv_start);
}

/*
 * A link of parent's: one more backend connection, to a host of table
 * (NULL: the relay's first with one up), connected by the core as a
 * session's backend is, with ops's hooks called for it (se_out is the
 * backend; se_in has no socket).  It is no session of its own: no end
 * line, statistics or show sessions; its bytes count as parent's, it
 * ends quietly (relay_close(), its reason in se_why for ro_free), and
 * it ends before parent's ro_free.  The connect starts from the event
 * loop: the protocol hears of it through the link's hooks only.
 */
struct rsession *
relay_link_open(struct rsession *parent, const struct relay_ops *ops,
    struct relay_table *table)
{
	struct rsession	*link;
	struct timeval	 tv = { 0, 0 };

	if ((link = calloc(1, sizeof(*link))) == NULL)
		return (NULL);
	relay_session_init(link, parent->se_relay, ops, -1,
	    &parent->se_in.ss);
	/* ids apart from the sessions', whose numbers the logs show */
	link->se_id = ++relay_linkid | 0x80000000U;
	link->se_parent = parent;
	link->se_table = table;
	link->se_hash = parent->se_hash;
	link->se_nosplice = 1;
	link->se_sockname = *relay_sockname(parent);
	link->se_socknamed = 1;
	if ((link->se_conf = parent->se_conf) != NULL)
		link->se_conf->sc_nsessions++;
	TAILQ_INSERT_TAIL(&relay_sessions, link, se_entry);
	TAILQ_INSERT_TAIL(&parent->se_links, link, se_link);
	relay_nlinks++;
	relay_peak_note();
	evtimer_set(&link->se_ev, relay_link_start, link);
	evtimer_add(&link->se_ev, &tv);
	return (link);
}

/*
 * A shared link: a backend connection of the relay process's, to host
 * of table, that the sessions of con's relay share (HTTP/2 backends).
 * It is a link of nobody's: no end line, statistics or show sessions;
 * the protocol counts its bytes to the sessions it carries them for
 * (relay_count()) and names it in their end lines (relay_link_name()).
 */
struct rsession *
relay_link_shared(struct rsession *con, const struct relay_ops *ops,
    struct relay_table *table, struct host *host)
{
	struct relay		*rlay = con->se_relay;
	struct rsession		*link;
	struct sockaddr_storage	 none;
	struct timeval		 tv = { 0, 0 };

	memset(&none, 0, sizeof(none));
	if ((link = calloc(1, sizeof(*link))) == NULL)
		return (NULL);
	relay_session_init(link, rlay, ops, -1, &none);
	link->se_id = ++relay_linkid | 0x80000000U;
	link->se_shared = 1;
	link->se_table = table;
	link->se_pinned = host;
	link->se_nosplice = 1;
	link->se_sockname = rlay->rl_conf.ss;
	link->se_socknamed = 1;
	/* it keeps con's configuration, as con does */
	if ((link->se_conf = con->se_conf) != NULL)
		link->se_conf->sc_nsessions++;
	TAILQ_INSERT_TAIL(&relay_sessions, link, se_entry);
	relay_nlinks++;
	relay_nshared++;
	evtimer_set(&link->se_ev, relay_link_start, link);
	evtimer_add(&link->se_ev, &tv);
	return (link);
}

/* Bytes written to a shared link for con, counted as its own. */
void
relay_count(struct rsession *con, int dir, size_t n)
{
	if (dir == RELAY_DIR_REQUEST)
		con->se_in.copied += n;
	else
		con->se_out.copied += n;
}

static void
relay_link_start(int fd, short event, void *arg)
{
	(void)fd;
	(void)event;
	(void)relay_link_connect(arg);
}

static void
relay_session(struct relay *rlay, int s, struct sockaddr_storage *ss,
    struct lim_ent *lim)
{
	struct rsession	*con;
	int		 i, trusted;

	if ((con = relay_session_new(rlay, sizeof(*con), NULL, s,
	    ss)) == NULL) {
		log_warn("%s", __func__);
		relay_limit_release(lim);
		close(s);
		return;
	}
	con->se_lim = lim;
	con->se_ops = relay_proto_ops(con);
	/* TLS records are never spliced */
	con->se_nosplice =
	    (rlay->rl_proto->tcpflags & TCPFLAG_NSPLICE) != 0 ||
	    (rlay->rl_conf.flags & (F_TLS | F_TLSCLIENT)) != 0;
	/*
	 * The socket has the listener's options: Linux and the BSDs copy
	 * TCP_NODELAY, the buffer sizes and the TTL to an accepted socket.
	 * Its local address is asked for when something needs it.
	 */

	/* a trusted balancer: its PROXY header before anything else */
	trusted = rlay->rl_conf.pp_nfrom == RELAY_PPFROM_ALL;
	for (i = 0; !trusted && i < rlay->rl_conf.pp_nfrom; i++)
		trusted = addr_match(&rlay->rl_conf.pp_from[i], ss);
	if (trusted) {
		relay_pp_wait(con);
		return;
	}
	relay_session_begin(con);
}

/*
 * The address the client reached (the one its PROXY header named, if
 * any), asked for once and only when a feature needs it.
 */
struct sockaddr_storage *
relay_sockname(struct rsession *con)
{
	socklen_t	 slen;

	if (!con->se_socknamed) {
		con->se_socknamed = 1;
		slen = sizeof(con->se_sockname);
		if (getsockname(con->se_in.s,
		    (struct sockaddr *)&con->se_sockname, &slen) == -1)
			memset(&con->se_sockname, 0,
			    sizeof(con->se_sockname));
	}
	return (&con->se_sockname);
}

/* The client's first bytes are its own: TLS, or the protocol. */
static void
relay_session_begin(struct rsession *con)
{
	struct relay	*rlay = con->se_relay;
	int		 s = con->se_in.s;

	/* TLS inspection: the backend's certificate first */
	if (rlay->rl_conf.flags & F_TLSINSPECT) {
		relay_hello_wait(con);
		return;
	}
	if (rlay->rl_conf.flags & F_TLS) {
		if (relay_tls_accept(rlay->rl_tls_ctx, &con->se_in) == -1) {
			relay_close(con, "TLS accept failed", 1);
			return;
		}
		relay_tls_handshake(s, 0, &con->se_in);
		return;
	}
	relay_session_accepted(con);
}

/*
 * A PROXY header from a trusted balancer (listen on ... proxy-protocol
 * from).  Bytes are taken from the socket only as far as they are
 * header: what the client sends after it stays for TLS or the protocol.
 * The whole header must come within the session timeout.
 */
struct pp_read {
	size_t		 len;
	uint8_t		 buf[PP_MAXHDR];
};

static void
relay_pp_wait(struct rsession *con)
{
	if (con->se_pp == NULL &&
	    (con->se_pp = calloc(1, sizeof(*con->se_pp))) == NULL) {
		relay_close(con, "PROXY header: out of memory", 1);
		return;
	}
	if (relay_wait_start(con, &con->se_ev, con->se_in.s, EV_READ,
	    relay_pp_read, con) == -1)
		relay_close(con, "PROXY header timeout", 1);
}

static void
relay_pp_read(int fd, short event, void *arg)
{
	struct rsession		*con = arg;
	struct pp_read		*pp = con->se_pp;
	struct sockaddr_storage	 src, dst;
	size_t			 hlen = 0;
	ssize_t			 n;
	int			 ret;

	if (event & EV_TIMEOUT) {
		relay_close(con, "PROXY header timeout", 1);
		return;
	}
	n = recv(fd, pp->buf + pp->len, sizeof(pp->buf) - pp->len, MSG_PEEK);
	if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
		relay_pp_wait(con);
		return;
	}
	if (n <= 0) {
		relay_close(con, n == 0 ? "PROXY header incomplete" :
		    "PROXY header: read failed", 1);
		return;
	}
	ret = pp_parse(pp->buf, pp->len + n, &hlen, &src, &dst);
	if (ret == -1) {
		relay_close(con, "PROXY header invalid", 1);
		return;
	}
	/* take what is header: all of it, or up to its end */
	if (ret == 1)
		n = hlen - pp->len;
	if (recv(fd, pp->buf + pp->len, n, 0) != n) {
		relay_close(con, "PROXY header: read failed", 1);
		return;
	}
	pp->len += n;
	if (ret == 0) {
		relay_pp_wait(con);
		return;
	}
	if (src.ss_family != AF_UNSPEC) {
		con->se_in.ss = src;
		con->se_sockname = dst;
		con->se_socknamed = 1;
	}
	free(con->se_pp);
	con->se_pp = NULL;
	relay_session_begin(con);
}

/*
 * TLS inspection asks the backend for the name the client asks for
 * (SNI): the client's ClientHello is read first, into the read-ahead of
 * its TLS side (tin), where its handshake finds it later.  It must come
 * within the session timeout; one that is not TLS, or has no name, or
 * is longer than RELAY_HELLO_READ, goes on without a name.
 */
#define RELAY_HELLO_READ	(TLS_HELLO_MAX + 1024)

static void
relay_hello_wait(struct rsession *con)
{
	if (relay_wait_start(con, &con->se_ev, con->se_in.s, EV_READ,
	    relay_hello_read, con) == -1)
		relay_close(con, "TLS handshake timeout", 1);
}

static void
relay_hello_read(int fd, short event, void *arg)
{
	struct rsession		*con = arg;
	struct relay_tlsin	*tin = &con->se_in.tin;
	char			 name[TLS_HELLO_NAMEMAX + 1];
	ssize_t			 n;
	int			 ret = -1;

	if (event & EV_TIMEOUT) {
		relay_close(con, "TLS handshake timeout", 1);
		return;
	}
	if (tin->buf == NULL &&
	    (tin->buf = malloc(RELAY_HELLO_READ)) == NULL) {
		relay_close(con, "TLS hello: out of memory", 1);
		return;
	}
	while ((n = read(fd, tin->buf + tin->len,
	    RELAY_HELLO_READ - tin->len)) > 0) {
		tin->len += n;
		ret = tls_hello_servername(tin->buf, tin->len, name,
		    sizeof(name));
		if (ret != -1 || tin->len == RELAY_HELLO_READ)
			break;
	}
	if (ret == -1 && n == -1 && (errno == EAGAIN || errno == EINTR)) {
		relay_hello_wait(con);
		return;
	}
	if (tin->len == 0) {
		/* gone before its hello: as when it leaves before a backend */
		relay_close(con, "done", 0);
		return;
	}
	if (ret == 1) {
		log_debug("relay %s, session %u: the client asks for %s",
		    con->se_relay->rl_conf.name, con->se_id, name);
		if ((con->se_sni = strdup(name)) == NULL) {
			relay_close(con, "TLS hello: out of memory", 1);
			return;
		}
	}
	(void)relay_connect(con);
}

/*
 * The client is there (and its TLS handshake done): its protocol, chosen
 * again now that ALPN is known, starts.  It may read the request before
 * it asks for a backend; with TLS inspection the backend is there
 * already, and relay_act() starts the session instead.
 */
static void
relay_session_accepted(struct rsession *con)
{
	con->se_ops = relay_proto_ops(con);
	relay_act(con, &con->se_in, con->se_ops->ro_init(con));
}

/*
 * What a protocol's hook asked for, done: the one place where the
 * protocols' wishes become connects, reads and ends.  cre is the side
 * the hook was called for (se_in for the session's hooks).
 */
static void
relay_act(struct rsession *con, struct ctl_relay_event *cre,
    enum relay_verdict v)
{
	/* TLS inspection connected first: a protocol's start starts it */
	if ((v == RELAY_V_READ || v == RELAY_V_CONNECT) &&
	    (con->se_relay->rl_conf.flags & F_TLSINSPECT) &&
	    con->se_out.tls != NULL && con->se_out.bev == NULL) {
		relay_session_start(con);
		return;
	}
	switch (v) {
	case RELAY_V_DONE:
	case RELAY_V_CLOSED:
		break;
	case RELAY_V_READ:
		if (relay_bufferevent(cre) == -1)
			relay_close(con, "buffer event failed", 1);
		break;
	case RELAY_V_CONNECT:
		/*
		 * A protocol that asks for its backend at the end of a
		 * head parses what follows while it connects, as OpenBSD:
		 * an error there ends a session that has its backend.
		 */
		if (relay_connect(con) == 0 && cre->bev != NULL &&
		    evbuffer_get_length(bufferevent_get_input(cre->bev)) > 0)
			relay_act(con, cre, con->se_ops->ro_read(cre));
		break;
	case RELAY_V_RECONNECT:
		(void)relay_reconnect(con);
		break;
	case RELAY_V_EOF:
		relay_eof(cre);
		break;
	case RELAY_V_OTHER:
		relay_act(con, cre->dst, con->se_ops->ro_read(cre->dst));
		break;
	}
}

/*
 * What a protocol's own timer wants (a hook's answer, outside a hook):
 * done as relay_act() does it.
 */
void
relay_wish(struct rsession *con, enum relay_verdict v)
{
	relay_act(con, &con->se_in, v);
}

/* tcp: a backend at once */
static enum relay_verdict
relay_tcp_init(struct rsession *con)
{
	(void)con;
	return (RELAY_V_CONNECT);
}

/* tcp (with TLS, or "no splice"): what came passes on */
static enum relay_verdict
relay_tcp_read(struct ctl_relay_event *cre)
{
	if (cre->dst->bev == NULL)
		return (RELAY_V_DONE);	/* not connected yet: it waits */
	if (relay_pass(cre) == -1 || relay_flush_passed(cre) == -1)
		return (RELAY_V_CLOSED);
	return (RELAY_V_DONE);
}

/* tcp passes everything: no toread ends */
static enum relay_verdict
relay_tcp_passed(struct ctl_relay_event *cre)
{
	(void)cre;
	return (RELAY_V_DONE);
}

/* tcp: what the client sent before the connect goes first */
static enum relay_verdict
relay_tcp_connected(struct rsession *con)
{
	if (evbuffer_get_length(bufferevent_get_input(con->se_in.bev)) == 0)
		return (RELAY_V_DONE);
	getevtime(&con->se_tv_last);
	return (relay_tcp_read(&con->se_in));
}

/* tcp: what has not passed yet goes, then the end */
static enum relay_verdict
relay_tcp_eof(struct ctl_relay_event *cre)
{
	if (cre->bev != NULL && cre->dst->bev != NULL &&
	    evbuffer_get_length(bufferevent_get_input(cre->bev)) > 0 &&
	    (relay_pass(cre) == -1 || relay_flush_passed(cre) == -1))
		return (RELAY_V_CLOSED);
	return (RELAY_V_EOF);
}

/* tcp: no backend, our reason in the session end line */
static void
relay_tcp_abort(struct rsession *con, enum relay_cfail why, int error)
{
	static const char	*reasons[] = {
		"session failed: no host up",	/* RELAY_CFAIL_NOHOST */
		"connect failed",		/* RELAY_CFAIL_SESSION */
		"connect failed",		/* RELAY_CFAIL_SOCKET */
		"connect timeout"		/* RELAY_CFAIL_TIMEOUT */
	};

	(void)error;
	relay_close(con, reasons[why], 1);
}

static void
relay_tcp_free(struct rsession *con)
{
	(void)con;
}

static int
host_usable(struct table *tb, struct host *h)
{
	if (tb->conf.flags & F_DISABLE || h->flags & F_DISABLE)
		return (0);
	/* a table without checks is always usable */
	return (tb->conf.check == CHECK_NOCHECK || h->up == HOST_UP);
}

static const void *
ss_addr(struct sockaddr_storage *ss, size_t *len)
{
	if (ss->ss_family == AF_INET6) {
		*len = sizeof(struct in6_addr);
		return (&((struct sockaddr_in6 *)ss)->sin6_addr);
	}
	*len = sizeof(struct in_addr);
	return (&((struct sockaddr_in *)ss)->sin_addr);
}

/* The backend for a session: first table with a usable host wins. */
struct host *
relay_from_table(struct rsession *con)
{
	struct relay		*rlay = con->se_relay;
	struct relay_table	*rlt;
	struct table		*tb;
	struct host		*h;
	const uint8_t		*key = rlay->rl_conf.hashkey.key8;
	const void		*addr;
	size_t			 len;
	uint64_t		 p = con->se_hash;
	int			 idx, n, i, up, tries;
	in_port_t		 port;

	TAILQ_FOREACH(rlt, &rlay->rl_tables, rlt_entry) {
		/* a rule chose the table */
		if (con->se_table != NULL && rlt != con->se_table)
			continue;
		tb = rlt->rlt_table;
		n = rlt->rlt_nhosts;
		for (i = 0, up = 0; i < n; i++)
			up += host_usable(tb, rlt->rlt_host[i]);
		if (up == 0)
			continue;

		switch (rlt->rlt_mode) {
		case RELAY_DSTMODE_RANDOM:
			idx = arc4random_uniform(n);
			break;
		case RELAY_DSTMODE_ROUNDROBIN:
			idx = rlt->rlt_index++ % n;
			break;
		case RELAY_DSTMODE_SRCHASH:
		case RELAY_DSTMODE_LOADBALANCE:
		case RELAY_DSTMODE_HASH:
			if (rlt->rlt_mode != RELAY_DSTMODE_HASH) {
				addr = ss_addr(&con->se_in.ss, &len);
				p = compat_siphash(key, addr, len, p);
			}
			if (rlt->rlt_mode != RELAY_DSTMODE_SRCHASH) {
				addr = ss_addr(&rlay->rl_conf.ss, &len);
				p = compat_siphash(key, addr, len, p);
				port = htons(rlay->rl_conf.port);
				p = compat_siphash(key, &port, sizeof(port),
				    p);
			}
			/* a host that is down: shift the hash and retry */
			tries = n < 5 ? n : 5;
			for (i = 0; i < tries; i++) {
				idx = p % n;
				if (host_usable(tb, rlt->rlt_host[idx]))
					return (rlt->rlt_host[idx]);
				p >>= 1;
			}
			idx = p % n;
			break;
		default:
			idx = 0;
			break;
		}
		for (i = 0; i < n; i++) {
			h = rlt->rlt_host[(idx + i) % n];
			if (host_usable(tb, h)) {
				if (rlt->rlt_mode == RELAY_DSTMODE_ROUNDROBIN)
					rlt->rlt_index = (idx + i) % n + 1;
				return (h);
			}
		}
	}
	return (NULL);
}

/* The host a session's table (or table) gives it now; NULL: none up. */
struct host *
relay_choose(struct rsession *con, struct relay_table *table)
{
	struct relay_table	*was = con->se_table;
	struct host		*h;

	con->se_table = table;
	h = relay_from_table(con);
	con->se_table = was;
	return (h);
}

/*
 * Connecting a session to its backend goes in three steps, each once a
 * try: choose the destination (relay_connect), obtain a socket (made
 * here, or asked of the parent: relay_connect_socket), and connect it
 * (relay_connect_start).  se_cstate says where the session is; a failed
 * try that has retries left goes back to the second step.  Each returns
 * -1 when the session had to close.
 */
static int
relay_connect(struct rsession *con)
{
	struct relay	*rlay = con->se_relay;

	switch ((rlay->rl_conf.flags & (F_DIVERT | F_NATLOOK)) ?
	    relay_original_dst(con) : 1) {
	case -1:
		return (-1);
	case 0:
		con->se_retry = rlay->rl_conf.dstretry;
		break;
	default:
		if (relay_pick(con) == -1)
			return (-1);
		break;
	}
	return (relay_connect_socket(con));
}

/*
 * A socket for the destination.  Transparent forward binds to the
 * client's address and a unix-socket backend is outside the chroot:
 * both need the parent, whose answer goes on at relay_connect_start().
 */
static int
relay_connect_socket(struct rsession *con)
{
	struct relay		*rlay = con->se_relay;
	struct ctl_bindany	 bnd;
	struct ctl_unixconnect	 uc;
	char			 addr[INET6_ADDRSTRLEN];
	int			 s;

	/* forward ... inet | inet6; an address mapped before stays */
	if (ss_mapaf(&con->se_out.ss, &rlay->rl_conf.dstaf) == -1) {
		log_debug("%s: session %d: %s mapped to invalid address",
		    __func__, con->se_id, print_host(&con->se_out.ss, addr,
		    sizeof(addr)) != NULL ? addr : "?");
		return (relay_connect_failed(con, RELAY_CFAIL_SESSION, 0));
	}
	if (rlay->rl_conf.flags & F_TRANSPARENT) {
		if (con->se_in.ss.ss_family != con->se_out.ss.ss_family) {
			relay_close(con, "transparent forward across address "
			    "families", 1);
			return (-1);
		}
		memset(&bnd, 0, sizeof(bnd));
		bnd.id = con->se_id;
		bnd.seq = ++con->se_cseq;
		bnd.instance = rps->ps_instance;
		bnd.ss = con->se_in.ss;
		ss_setport(&bnd.ss, 0);
		con->se_cstate = RELAY_CONN_BINDANY;
		proc_compose(rps, PROC_PARENT, IMSG_BINDANY, &bnd,
		    sizeof(bnd));
		return (0);
	}
	if (con->se_out.ss.ss_family == AF_UNIX) {
		memset(&uc, 0, sizeof(uc));
		uc.id = con->se_id;
		uc.seq = ++con->se_cseq;
		uc.instance = rps->ps_instance;
		uc.ss = con->se_out.ss;
		con->se_cstate = RELAY_CONN_UNIX;
		proc_compose(rps, PROC_PARENT, IMSG_UNIXCONNECT, &uc,
		    sizeof(uc));
		return (0);
	}
	if ((s = socket(con->se_out.ss.ss_family, SOCK_STREAM |
	    SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP)) == -1) {
		if ((errno == EMFILE || errno == ENFILE) &&
		    con->se_fdwaits < RELAY_FDWAITS)
			return (relay_fdwait(con, errno));
		relay_close(con, "connect failed", 1);
		return (-1);
	}
	return (relay_connect_start(con, s));
}

/*
 * No descriptor for a backend connection: as accept does, every
 * listener of this process stops for a second, and the connect tries
 * again in a second, RELAY_FDWAITS times at most, instead of failing at
 * once (an HTTP/2 client's waiting streams would ask again and again).
 */
static int
relay_fdwait(struct rsession *con, int error)
{
	struct timeval	 tv = { 1, 0 };
	struct relay	*rlay;

	relay_accept_defer(con->se_relay, error);
	TAILQ_FOREACH(rlay, env->sc_relays, rl_entry)
		if (rlay->rl_up && !evtimer_pending(&rlay->rl_evt, NULL)) {
			event_del(&rlay->rl_ev);
			evtimer_add(&rlay->rl_evt, &tv);
		}
	con->se_fdwaits++;
	con->se_cstate = RELAY_CONN_PORTWAIT;
	evtimer_set(&con->se_ev, relay_portwait_done, con);
	evtimer_add(&con->se_ev, &tv);
	return (0);
}

/*
 * Connect s to the destination; a unix socket comes from the parent
 * connected already, and goes on to relay_connected() at once.
 */
static int
relay_connect_start(struct rsession *con, int s)
{
	struct relay	*rlay = con->se_relay;
	struct timeval	 tv = rlay->rl_conf.timeout;
	int		 af = con->se_out.ss.ss_family;

	con->se_out.s = s;
	con->se_cstate = RELAY_CONN_CONNECTING;
	relay_socket_opts(s, af, rlay->rl_proto, 0);
	if (af == AF_UNIX) {
		event_set(&con->se_ev, s, EV_WRITE, relay_connected, con);
		event_add(&con->se_ev, NULL);
		return (0);
	}
	if (connect(s, (struct sockaddr *)&con->se_out.ss,
	    ss_len(&con->se_out.ss)) == -1 && errno != EINPROGRESS) {
		if (errno == EADDRNOTAVAIL || errno == EAGAIN)
			return (relay_portwait(con, errno));
		return (relay_retry(con, RELAY_CFAIL_SESSION, errno));
	}
	event_set(&con->se_ev, s, EV_WRITE | EV_TIMEOUT, relay_connected, con);
	event_add(&con->se_ev, timerisset(&tv) ? &tv : NULL);
	return (0);
}

/*
 * connect(2) found no local port: the ephemeral ports toward this
 * destination sit in TIME_WAIT (EADDRNOTAVAIL), or the kernel had no
 * room (EAGAIN).  Ports come free as TIME_WAIT ends: try again after
 * 5, 10, 20, 40 and 80 ms, then on another host of the table, then as
 * any failed connect (retry, or the end).  The log says so once a
 * minute per relay process, with what to do about it.
 */
static int
relay_portwait(struct rsession *con, int error)
{
	struct relay	*rlay = con->se_relay;
	struct timeval	 tv;

	close(con->se_out.s);
	con->se_out.s = -1;
	con->se_cstate = RELAY_CONN_NONE;
	if (con->se_portwaits < RELAY_PORTWAITS) {
		relay_portlog(con, error, 0);
		tv.tv_sec = 0;
		tv.tv_usec = RELAY_PORTWAIT_US << con->se_portwaits;
		con->se_portwaits++;
		con->se_cstate = RELAY_CONN_PORTWAIT;
		evtimer_set(&con->se_ev, relay_portwait_done, con);
		evtimer_add(&con->se_ev, &tv);
		return (0);
	}
	if (!TAILQ_EMPTY(&rlay->rl_tables) &&
	    con->se_portmoves < RELAY_PORTMOVES &&
	    (rlay->rl_conf.flags & (F_DIVERT | F_NATLOOK)) == 0) {
		con->se_portmoves++;
		con->se_portwaits = 0;
		if (relay_pick(con) == -1)
			return (-1);
		return (relay_connect_socket(con));
	}
	relay_portlog(con, error, 1);
	return (relay_retry(con, RELAY_CFAIL_SESSION, error));
}

static void
relay_portwait_done(int fd, short event, void *arg)
{
	struct rsession	*con = arg;

	(void)fd;
	(void)event;
	con->se_cstate = RELAY_CONN_NONE;
	(void)relay_connect_socket(con);
}

static void
relay_portlog(struct rsession *con, int error, int failed)
{
	static struct log_ratelimit	 rl = LOG_RATELIMIT(RELAY_DEFERLOG);
	static uint64_t			 waits, fails;
	char				 addr[INET6_ADDRSTRLEN];

	if (failed)
		fails++;
	else
		waits++;
	if (!log_ratelimit(&rl))
		return;
	if (print_host(&con->se_out.ss, addr, sizeof(addr)) == NULL)
		(void)strlcpy(addr, "?", sizeof(addr));
	log_warnx("relay %s: no local port to connect to %s:%d (%s): %llu "
	    "connects waited, %llu gave up; set net.ipv4.tcp_tw_reuse=1, "
	    "widen net.ipv4.ip_local_port_range or add source addresses",
	    con->se_relay->rl_conf.name, addr, ss_port(&con->se_out.ss),
	    strerror(error), (unsigned long long)waits,
	    (unsigned long long)fails);
	waits = fails = 0;
}

/* The other forward lines: a table's host, or the fixed address. */
static int
relay_pick(struct rsession *con)
{
	struct relay	*rlay = con->se_relay;

	if (!TAILQ_EMPTY(&rlay->rl_tables)) {
		if (con->se_pinned != NULL)
			con->se_host = con->se_pinned;
		else if ((con->se_host = relay_from_table(con)) == NULL) {
			(void)relay_connect_failed(con, RELAY_CFAIL_NOHOST, 0);
			return (-1);
		}
		con->se_out.ss = con->se_host->conf.ss;
		con->se_retry = con->se_host->conf.retry;
		return (0);
	}
	if (rlay->rl_conf.dstss.ss_family == AF_UNSPEC) {
		/* forward to destination or nat lookup alone */
		relay_close(con, "session aborted", 1);
		return (-1);
	}
	con->se_out.ss = rlay->rl_conf.dstss;
	con->se_retry = rlay->rl_conf.dstretry;
	return (0);
}

/*
 * forward to destination: the address the client connected to (a TPROXY
 * rule brought it to the relay's transparent listener); forward to nat
 * lookup: the destination before a REDIRECT.  0 with se_out.ss set, 1
 * for the other forward lines, -1 when the session was closed.  A
 * destination that is the relay's own listener would come back here:
 * the other forward lines, as OpenBSD does.
 */
static int
relay_original_dst(struct rsession *con)
{
	struct relay		*rlay = con->se_relay;
	struct sockaddr_storage	 ss;
	size_t			 alen, blen;
	const void		*a, *b;

	memset(&ss, 0, sizeof(ss));
	if (rlay->rl_conf.flags & F_DIVERT) {
		if (relay_sockname(con)->ss_family == AF_UNSPEC)
			return (1);
		ss = con->se_sockname;
	} else if (con->se_shared || compat_natlook(con->se_parent != NULL ?
	    con->se_parent->se_in.s : con->se_in.s, &ss) == -1) {
		if (!TAILQ_EMPTY(&rlay->rl_tables) ||
		    rlay->rl_conf.dstss.ss_family != AF_UNSPEC)
			return (1);
		relay_close(con, "session NAT lookup failed", 1);
		return (-1);
	}
	a = ss_addr(&ss, &alen);
	b = ss_addr(&rlay->rl_conf.ss, &blen);
	if (ss.ss_family == rlay->rl_conf.ss.ss_family &&
	    ss_port(&ss) == rlay->rl_conf.port && alen == blen &&
	    memcmp(a, b, alen) == 0)
		return (1);
	con->se_out.ss = ss;
	return (0);
}

/*
 * The parent's answer for a session that waits on it in state (both
 * answers begin with the session's id and the try's sequence number),
 * or NULL when the session ended or went on meanwhile, or the answer is
 * not one: the socket it brought is closed.
 */
static struct rsession *
relay_answered(struct imsg *imsg, void *data, size_t len,
    enum relay_cstate state)
{
	struct rsession	*con;
	objid_t		 id;
	uint32_t	 seq;

	if (IMSG_DATA_SIZE(imsg) == len) {
		memcpy(data, imsg->data, len);
		memcpy(&id, data, sizeof(id));
		memcpy(&seq, (char *)data + sizeof(id), sizeof(seq));
		TAILQ_FOREACH(con, &relay_sessions, se_entry)
			if (con->se_id == id && con->se_cstate == state &&
			    con->se_cseq == seq)
				return (con);
	}
	if (imsg->fd != -1)
		close(imsg->fd);
	return (NULL);
}

/* The parent's answer for a unix-socket backend: a connected socket. */
static void
relay_unixconnect_done(struct imsg *imsg)
{
	struct ctl_unixconnect	 uc;
	struct rsession		*con;

	if ((con = relay_answered(imsg, &uc, sizeof(uc),
	    RELAY_CONN_UNIX)) == NULL)
		return;
	if (imsg->fd == -1) {
		(void)relay_retry(con, RELAY_CFAIL_SESSION, uc.error);
		return;
	}
	(void)relay_connect_start(con, imsg->fd);
}

/* The parent's answer to a transparent forward's IMSG_BINDANY. */
static void
relay_bindany_done(struct imsg *imsg)
{
	struct ctl_bindany	 bnd;
	struct rsession		*con;

	if ((con = relay_answered(imsg, &bnd, sizeof(bnd),
	    RELAY_CONN_BINDANY)) == NULL)
		return;
	if (imsg->fd == -1) {
		relay_close(con, "bindany failed, invalid socket", 1);
		return;
	}
	(void)relay_connect_start(con, imsg->fd);
}

/*
 * One side goes: its splice, reading, bufferevent and socket.  The byte
 * counts stay for the session's totals.
 */
static void
relay_side_close(struct ctl_relay_event *cre)
{
	relay_tls_abandon(cre);
	splice_free(&cre->sp);
	cre->splicing = 0;
	relay_read_off(cre);
	if (event_initialized(&cre->tev))
		event_del(&cre->tev);
	if (cre->writing) {
		event_del(&cre->wev);
		cre->writing = 0;
	}
	if (cre->tls != NULL) {
		/* a close_notify if it goes at once; no waiting for it */
		if (!cre->tin.gone)
			(void)tls_close(cre->tls);
		tls_free(cre->tls);
		cre->tls = NULL;
	}
	relay_tls_in_free(cre);
	if (cre->bev != NULL) {
		if (cre->cb != NULL)
			(void)evbuffer_remove_cb_entry(
			    bufferevent_get_output(cre->bev), cre->cb);
		bufferevent_free(cre->bev);
		cre->bev = NULL;
		cre->cb = NULL;
	}
	if (cre->s != -1) {
		close(cre->s);
		cre->s = -1;
	}
}

/*
 * Another backend for the requests to come (a rule forwards them to
 * another table): the backend side goes, its byte counts stay.
 */
static int
relay_reconnect(struct rsession *con)
{
	struct ctl_relay_event	*out = &con->se_out;

	if (event_initialized(&con->se_ev))
		event_del(&con->se_ev);
	splice_free(&con->se_in.sp);
	con->se_in.splicing = 0;
	relay_side_close(out);
	out->done = 0;
	out->toread = TOREAD_UNLIMITED;
	con->se_cstate = RELAY_CONN_NONE;
	con->se_retrycount = 0;
	con->se_portwaits = con->se_portmoves = 0;
	return (relay_connect(con));
}

/* A try failed: the next one, to the same destination, or the end. */
static int
relay_retry(struct rsession *con, enum relay_cfail why, int error)
{
	if (con->se_out.s != -1) {
		close(con->se_out.s);
		con->se_out.s = -1;
	}
	con->se_cstate = RELAY_CONN_NONE;
	if (con->se_retrycount < con->se_retry) {
		con->se_retrycount++;
		return (relay_connect_socket(con));
	}
	return (relay_connect_failed(con, why, error));
}

/*
 * No backend for the session: the protocol answers the client (http
 * with OpenBSD's error pages) and closes.  Returns -1: the session was
 * closed.
 */
static int
relay_connect_failed(struct rsession *con, enum relay_cfail why, int error)
{
	struct rsession	*parent = con->se_parent;

	relay_stats_mine(con->se_relay)->cfailed++;
	/* a link's session that never had a backend names the one tried */
	if (parent != NULL && parent->se_nconnects == 0)
		parent->se_out.ss = con->se_out.ss;
	con->se_ops->ro_abort(con, why, error);
	return (-1);
}

static void
relay_connected(int fd, short event, void *arg)
{
	struct rsession	*con = arg;
	int		 error = 0;
	socklen_t	 len = sizeof(error);

	if (event & EV_TIMEOUT) {
		(void)relay_retry(con, RELAY_CFAIL_TIMEOUT, ETIMEDOUT);
		return;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == -1 ||
	    error != 0) {
		(void)relay_retry(con, RELAY_CFAIL_SOCKET, error != 0 ? error :
		    errno);
		return;
	}
	con->se_cstate = RELAY_CONN_CONNECTED;
	con->se_nconnects++;
	if ((con->se_relay->rl_conf.flags & (F_PROXYV1 | F_PROXYV2)) &&
	    relay_pp_send(con) == -1)
		return;
	if (con->se_relay->rl_conf.flags & F_TLSCLIENT) {
		if (relay_tls_connect(&con->se_out,
		    con->se_relay->rl_tls_client_cfg, con->se_sni) == -1) {
			relay_close(con, con->se_out.tls != NULL ?
			    tls_error(con->se_out.tls) : "TLS connect failed",
			    1);
			return;
		}
		relay_tls_handshake(fd, 0, &con->se_out);
		return;
	}
	relay_session_start(con);
}

/*
 * forward ... proxy-protocol v1|v2: the header goes first on the new
 * connection (before a TLS handshake too, where the PROXY protocol puts
 * it).  A socket just connected has room for it; the bytes count as
 * none of the client's.
 */
static int
relay_pp_send(struct rsession *con)
{
	uint8_t		 buf[PP_MAXHDR];
	ssize_t		 len;

	len = pp_header((con->se_relay->rl_conf.flags & F_PROXYV1) ? 1 : 2,
	    &con->se_in.ss, relay_sockname(con), buf, sizeof(buf));
	if (len == -1 || send(con->se_out.s, buf, len, MSG_NOSIGNAL) != len) {
		relay_close(con, "PROXY header: write failed", 1);
		return (-1);
	}
	return (0);
}

/*
 * A client whose connection ended with its handshake, nothing sent after
 * it, not even a close_notify (TLS probes, scanners, openssl s_time):
 * nothing can come from it, and no backend connection is made for it
 * (nor a close_notify sent, which would only meet a reset).
 * A client that sent anything, or closed only its side after a
 * close_notify, still gets its backend.
 */
static int
relay_client_gone(struct ctl_relay_event *cre)
{
	char	 c;

	/* what the handshake's reads took ahead came from it too */
	if (cre->tin.len > 0)
		return (0);
	return (recv(cre->s, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0);
}

/*
 * A TLS handshake is through: with the client (se_in) the session goes
 * on to its backend, or with TLS inspection to its protocol; with the
 * backend (se_out) inspection's client handshake starts, or the session.
 */
void
relay_tls_established(struct ctl_relay_event *cre)
{
	struct rsession	*con = cre->con;
	struct relay	*rlay = con->se_relay;

	if (cre->dir == RELAY_DIR_REQUEST) {
		log_debug("relay %s, tls session %d established (%d active)",
		    rlay->rl_conf.name, con->se_id, relay_nsessions);
		/* with inspection the backend is there already */
		if ((rlay->rl_conf.flags & F_TLSINSPECT) == 0 &&
		    relay_client_gone(cre)) {
			/* as when it leaves before a backend */
			cre->tin.gone = 1;
			relay_close(con, "done", 0);
			return;
		}
		relay_session_accepted(con);
		return;
	}
	log_debug("relay %s, tls session %d connected (%d active)",
	    rlay->rl_conf.name, con->se_id, relay_nsessions);
	if ((rlay->rl_conf.flags & F_TLSINSPECT) && con->se_in.tls == NULL) {
		if (relay_tls_inspect(con) == -1) {
			relay_close(con, "TLS inspection failed", 1);
			return;
		}
		relay_tls_handshake(con->se_in.s, 0, &con->se_in);
		return;
	}
	relay_session_start(con);
}

/*
 * What is left of the session timeout from the session's start: 0 when
 * the relay has none, 1 with it in *left, -1 when it is over.
 */
int
relay_start_left(struct rsession *con, struct timeval *left)
{
	struct timeval	*timeout = &con->se_relay->rl_conf.timeout;
	struct timeval	 now, end;

	if (!timerisset(timeout))
		return (0);
	getevtime(&now);
	timeradd(&con->se_tv_start, timeout, &end);
	if (!timercmp(&now, &end, <))
		return (-1);
	timersub(&end, &now, left);
	return (1);
}

/*
 * Wait for fd within what is left of the session timeout from the
 * session's start (PROXY headers); -1 when it is over.
 */
static int
relay_wait_start(struct rsession *con, struct event *ev, int fd, short what,
    void (*cb)(int, short, void *), void *arg)
{
	struct timeval	 left;
	int		 t;

	if ((t = relay_start_left(con, &left)) == -1)
		return (-1);
	event_set(ev, fd, what, cb, arg);
	return (event_add(ev, t == 1 ? &left : NULL));
}

/*
 * Both sides are connected.  Without protocol hooks both directions go
 * to the splice engine at once and no buffer is ever made ("tcp no
 * splice": its copy back end, which costs half the CPU per byte of
 * libevent's buffers); otherwise both sides go through userland, and
 * each direction may splice what the protocol lets it pass.
 */
static void
relay_session_start(struct rsession *con)
{
	if (!con->se_ops->ro_userland && con->se_in.tls == NULL &&
	    con->se_out.tls == NULL) {
		if (relay_splice(&con->se_in) == -1 ||
		    relay_splice(&con->se_out) == -1)
			relay_close(con, strerror(errno), 1);
		return;
	}
	/* a link has no client side */
	if ((!RELAY_LINK(con) && relay_bufferevent(&con->se_in) == -1) ||
	    relay_bufferevent(&con->se_out) == -1) {
		relay_close(con, "buffer event failed", 1);
		return;
	}
	if (con->se_parent != NULL)
		relay_link_adopt(con);
	/* what the protocol read before the connect goes first */
	relay_act(con, &con->se_in, con->se_ops->ro_connected(con));
}

/*
 * A link is up: its session's backend is the link's, for the session's
 * end line (which notes every other one it was given), show sessions
 * and the connect count, unless it is the one the session has.
 */
static void
relay_link_adopt(struct rsession *link)
{
	relay_link_name(link->se_parent, link);
}

/* con's backend is link's now (a link of con's, or a shared one). */
void
relay_link_name(struct rsession *con, struct rsession *link)
{
	if (con->se_nconnects > 0 &&
	    con->se_out.ss.ss_family == link->se_out.ss.ss_family &&
	    memcmp(&con->se_out.ss, &link->se_out.ss,
	    ss_len(&link->se_out.ss)) == 0)
		return;
	con->se_out.ss = link->se_out.ss;
	con->se_host = link->se_host;
	con->se_nconnects++;
	con->se_cstate = RELAY_CONN_CONNECTED;
	relay_log_backend(con);
}

/*
 * The userland path of one side: a bufferevent on its socket, reading
 * with the session timeout, and a count of what its output wrote (the
 * bytes of the other direction, moved as copies).
 */
static int
relay_bufferevent(struct ctl_relay_event *cre)
{
	struct relay	*rlay = cre->con->se_relay;
	struct timeval	*tv = &rlay->rl_conf.timeout;

	if (cre->bev != NULL)
		return (0);
	if ((cre->bev = bufferevent_socket_new(NULL, cre->s, 0)) == NULL)
		return (-1);
	bufferevent_setcb(cre->bev, relay_input, relay_output_done, relay_error,
	    cre);
	(void)bufferevent_set_max_single_read(cre->bev, RELAY_READ_SIZE);
	(void)bufferevent_set_max_single_write(cre->bev, RELAY_READ_SIZE);
	if ((cre->cb = evbuffer_add_cb(bufferevent_get_output(cre->bev),
	    relay_count_written, cre->dst)) == NULL)
		return (-1);
	bufferevent_set_timeouts(cre->bev, timerisset(tv) ? tv : NULL,
	    timerisset(tv) ? tv : NULL);
	/*
	 * Reading is relay_read_socket()'s.  Writing waits for relay_flush(),
	 * which writes at once and enables the write event only for what
	 * the socket did not take: a bufferevent's write event is on from
	 * the start, and the first bytes added would register it and wake
	 * the loop once for nothing (two epoll_ctl(2) calls and an
	 * epoll_wait(2) a session).
	 */
	bufferevent_disable(cre->bev, EV_WRITE);
	event_set(&cre->rev, cre->s, EV_READ | EV_PERSIST, relay_read_socket,
	    cre);
	if (cre->tls != NULL)
		/* TLS records: relay_tls_flush() writes, never libevent */
		event_set(&cre->wev, cre->s, EV_WRITE, relay_tls_writecb, cre);
	if (!cre->done && !cre->splicing)
		relay_read_on(cre);
	return (0);
}

/* Reading cre's socket into its input, with the session timeout. */
void
relay_read_on(struct ctl_relay_event *cre)
{
	struct timeval	*tv = &cre->con->se_relay->rl_conf.timeout;

	if (cre->reading || cre->bev == NULL)
		return;
	cre->reading = 1;
	event_add(&cre->rev, timerisset(tv) ? tv : NULL);
	/*
	 * The TLS handshake's wait stays until now (relay_tls_wait()):
	 * the socket changes hands without an epoll_ctl(2).
	 */
	if (cre->tin.up && event_initialized(&cre->tev))
		event_del(&cre->tev);
	/* what libtls holds shows to no poll(2) */
	if (cre->tlsheld)
		event_active(&cre->rev, EV_READ, 1);
}

void
relay_read_off(struct ctl_relay_event *cre)
{
	if (!cre->reading)
		return;
	cre->reading = 0;
	event_del(&cre->rev);
}

/* Reading cre goes on after a pause, and what it holds is parsed. */
void
relay_read_again(struct ctl_relay_event *cre)
{
	if (cre->bev == NULL)
		return;
	if (!cre->done && !cre->splicing)
		relay_read_on(cre);
	relay_input(cre->bev, cre);
}

/*
 * Read into the bufferevent's input ourselves: libevent's own read asks
 * the socket how much it has (ioctl FIONREAD) before every read, a
 * system call per message that this spares.  A side's reads start small
 * and double up to RELAY_READ_SIZE each time one fills what it had: a
 * 64 KiB reservation is a 128 KiB buffer (libevent rounds up to a power
 * of two), which a short session would get from mmap(2) or brk(2) and
 * fault in page by page only to give it back.
 */
static void
relay_read_socket(int fd, short event, void *arg)
{
	struct ctl_relay_event	*cre = arg;
	struct evbuffer		*in = bufferevent_get_input(cre->bev);
	struct evbuffer_iovec	 v[2];
	struct iovec		 iov[2];
	ssize_t			 n;
	size_t			 left, room = 0;
	int			 i, nv, again = 0;

	if (event & EV_TIMEOUT) {
		relay_error(cre->bev, BEV_EVENT_READING | BEV_EVENT_TIMEOUT,
		    cre);
		return;
	}
	/* the end of a bufferevent's input is frozen but for its reads */
	(void)evbuffer_unfreeze(in, 0);
	if (cre->readsize == 0)
		cre->readsize = RELAY_READ_FIRST;
	if ((nv = evbuffer_reserve_space(in, cre->readsize, v, 2)) <= 0) {
		(void)evbuffer_freeze(in, 0);
		relay_close(cre->con, "buffer event failed", 1);
		return;
	}
	for (i = 0; i < nv; i++) {
		iov[i].iov_base = v[i].iov_base;
		iov[i].iov_len = v[i].iov_len;
		room += v[i].iov_len;
	}
	if (cre->tls != NULL)
		n = relay_tls_read(cre, iov, nv, &again);
	else
		n = readv(fd, iov, nv);
	cre->tlsheld = again;
	left = n > 0 ? (size_t)n : 0;
	if (left >= room && cre->readsize < RELAY_READ_SIZE)
		cre->readsize *= 2;
	for (i = 0; i < nv; i++) {
		v[i].iov_len = left < iov[i].iov_len ? left : iov[i].iov_len;
		left -= v[i].iov_len;
	}
	(void)evbuffer_commit_space(in, v, nv);
	(void)evbuffer_freeze(in, 0);
	if (n == 0) {
		relay_error(cre->bev, BEV_EVENT_READING | BEV_EVENT_EOF, cre);
		return;
	}
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		relay_error(cre->bev, BEV_EVENT_READING | BEV_EVENT_ERROR,
		    cre);
		return;
	}
	/*
	 * TLS: what libtls holds already decrypted, or an end it saw after
	 * data, shows to no poll(2): read again once this is through, or
	 * when reading goes on if this stops it (relay_read_on()).
	 */
	if (again && cre->reading)
		event_active(&cre->rev, EV_READ, 1);
	relay_input(cre->bev, cre);
}

/*
 * Write what waits in cre's output at once; only what the socket does
 * not take waits for the write event.  Whoever adds to an output calls
 * this: it spares two epoll_ctl(2) calls a message.
 */
static void
relay_flush(struct ctl_relay_event *cre)
{
	struct evbuffer	*out;

	if (cre->bev == NULL)
		return;
	out = bufferevent_get_output(cre->bev);
	if (evbuffer_get_length(out) == 0)
		return;
	if (cre->tls != NULL) {
		/* the callers go on with the session: the write event ends it */
		if (relay_tls_flush(cre) == -1 && !cre->writing) {
			cre->writing = 1;
			event_active(&cre->wev, EV_WRITE, 1);
		}
		return;
	}
	/*
	 * A bufferevent keeps the start of its output frozen but for its
	 * own writes.  An error shows again to the write event, which
	 * reports it.
	 */
	(void)evbuffer_unfreeze(out, 1);
	(void)evbuffer_write(out, cre->s);
	(void)evbuffer_freeze(out, 1);
	if (evbuffer_get_length(out) > 0)
		bufferevent_enable(cre->bev, EV_WRITE);
}

/* One write now, what fits goes: an error page before the close. */
ssize_t
relay_send_now(struct ctl_relay_event *cre, const void *buf, size_t len)
{
	if (cre->tls != NULL)
		return (tls_write(cre->tls, buf, len));
	return (write(cre->s, buf, len));
}

/* cre's bev wrote n bytes of the other direction (arg) to its socket. */
static void
relay_count_written(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct ctl_relay_event	*from = arg;

	(void)buf;
	if (info->n_deleted == 0)
		return;
	from->copied += info->n_deleted;
	getevtime(&from->tv_moved);
	from->con->se_tv_last = from->tv_moved;
}

/*
 * What cre has read, up to toread bytes, goes to the end of to; toread
 * counts down.  -1 when the buffer could not take it.
 */
int
relay_take(struct ctl_relay_event *cre, struct evbuffer *to)
{
	struct evbuffer	*in = bufferevent_get_input(cre->bev);
	size_t		 len;

	len = evbuffer_get_length(in);
	if (cre->toread != TOREAD_UNLIMITED && (off_t)len > cre->toread)
		len = cre->toread;
	if (len > 0 && evbuffer_remove_buffer(in, to, len) != (int)len)
		return (-1);
	if (cre->toread != TOREAD_UNLIMITED)
		cre->toread -= len;
	return (0);
}

/*
 * Pass cre->toread bytes (TOREAD_UNLIMITED: all) on to the other side,
 * what was already read first, the rest spliced where the relay
 * splices.  Userland bytes waiting for the drain go out before any
 * spliced byte.  What is passed waits in the drain's output until
 * relay_flush_passed(): a protocol that parses more of the same read can
 * still refuse it.  Returns 1 when toread is reached (the caller's
 * parser goes on; a splice that reaches it calls ro_passed instead), 0
 * while bytes are still to come, -1 when the session was closed.
 */
int
relay_pass(struct ctl_relay_event *cre)
{
	struct rsession		*con = cre->con;
	struct evbuffer		*in, *out;

	in = bufferevent_get_input(cre->bev);
	out = bufferevent_get_output(cre->dst->bev);
	if (relay_take(cre, out) == -1) {
		relay_close(con, "buffer event failed", 1);
		return (-1);
	}
	if (cre->toread == 0)
		return (1);
	if (!con->se_nosplice && evbuffer_get_length(in) == 0 &&
	    (cre->toread == TOREAD_UNLIMITED ||
	    cre->toread >= RELAY_SPLICE_MIN)) {
		/* the drain's userland bytes go before any spliced one */
		relay_read_off(cre);
		cre->splicing = 1;
		if (evbuffer_get_length(out) == 0 && relay_splice(cre) == -1) {
			relay_close(con, strerror(errno), 1);
			return (-1);
		}
		return (0);
	}
	/* back-pressure: no more reading while the other side is behind */
	if (evbuffer_get_length(out) >= RELAY_MAX_PREFETCH)
		relay_read_off(cre);
	return (0);
}

/*
 * What cre passed goes out now; a splice that waited for the userland
 * bytes before it starts once they are all written (else relay_output_done()
 * starts it).  -1 when the session was closed.
 */
int
relay_flush_passed(struct ctl_relay_event *cre)
{
	relay_flush(cre->dst);
	if (cre->splicing && !splice_active(&cre->sp) &&
	    cre->dst->bev != NULL &&
	    evbuffer_get_length(bufferevent_get_output(cre->dst->bev)) == 0 &&
	    relay_splice(cre) == -1) {
		relay_close(cre->con, strerror(errno), 1);
		return (-1);
	}
	return (0);
}

/* Splice the rest of what cre passes: toread bytes, or all of it. */
static int
relay_splice(struct ctl_relay_event *cre)
{
	cre->splicing = 1;
	cre->mark = splice_total(&cre->sp);
	return (relay_splice_run(cre, 0));
}

/* The splice of cre, for what is left of toread but done bytes. */
static int
relay_splice_run(struct ctl_relay_event *cre, off_t done)
{
	struct rsession	*con = cre->con;

	return (splice_start(&cre->sp, cre->s, cre->dst->s,
	    cre->toread == TOREAD_UNLIMITED ? 0 : cre->toread - done,
	    &con->se_relay->rl_conf.timeout, relay_splice_done, cre,
	    relay_splice_flags(con)));
}

/*
 * Unix sockets splice as TCP does (ours); "no splice" copies.  The relay
 * accepted or connected both sockets itself: no checks of them.
 */
static int
relay_splice_flags(struct rsession *con)
{
	return (SPLICE_F_UNIX | SPLICE_F_TRUSTED |
	    (con->se_nosplice ? SPLICE_F_COPY : 0));
}

static void
relay_input(struct bufferevent *bev, void *arg)
{
	struct ctl_relay_event	*cre = arg;
	struct rsession		*con = cre->con;

	(void)bev;
	getevtime(&con->se_tv_last);
	relay_act(con, cre, con->se_ops->ro_read(cre));
}

static void
relay_output_done(struct bufferevent *bev, void *arg)
{
	(void)bev;
	relay_drained(arg);
}

/*
 * The output of cre's side is empty (its bufferevent, or TLS's write
 * event): what waited for that goes on.
 */
void
relay_drained(struct ctl_relay_event *cre)
{
	struct ctl_relay_event	*from = cre->dst;
	struct rsession		*con = cre->con;

	/* until relay_flush() leaves something again */
	bufferevent_disable(cre->bev, EV_WRITE);
	if (con->se_endmsg != NULL) {
		relay_close(con, con->se_endmsg, 0);
		return;
	}
	if (from->splicing && !splice_active(&from->sp)) {
		if (relay_splice(from) == -1)
			relay_close(con, strerror(errno), 1);
		return;
	}
	if (from->done) {
		relay_eof(from);
		return;
	}
	if (con->se_ops->ro_drained != NULL) {
		relay_act(con, cre, con->se_ops->ro_drained(cre));
		return;
	}
	if (from->bev != NULL && !from->splicing)
		relay_read_on(from);
}

/*
 * End of file from cre: once what it sent has left the other side's
 * output, half-close the other side; both done ends the session.
 */
static void
relay_eof(struct ctl_relay_event *cre)
{
	struct ctl_relay_event	*dst = cre->dst;

	cre->done = 1;
	if (dst->s == -1 && cre->con->se_cstate == RELAY_CONN_NONE) {
		/* the client left before a backend was chosen */
		relay_close(cre->con, "done", 0);
		return;
	}
	/* the backend is on its way: its ro_connected hook goes on */
	if (dst->bev == NULL && cre->con->se_ops->ro_userland)
		return;
	if (dst->bev != NULL &&
	    evbuffer_get_length(bufferevent_get_output(dst->bev)) > 0)
		return;		/* relay_output_done() calls again */
	if (dst->tls != NULL)
		(void)tls_close(dst->tls);
	/* both ways done: close(2) sends the FIN */
	if (dst->done) {
		relay_close(cre->con, "done", 0);
		return;
	}
	(void)shutdown(dst->s, SHUT_WR);
}

/*
 * A direction idle for the session timeout ends the session only when
 * the other direction moved nothing in the same period, as OpenBSD's
 * timeouts do: what it wrote in userland counts from when it was
 * written; what its splice moved since the last look (the kernel's
 * count says how much, not when) keeps the session alive.
 */
static int
relay_idle_alive(struct ctl_relay_event *cre)
{
	struct ctl_relay_event	*other = cre->dst;
	struct timeval		 now, idle;
	uint64_t		 total;

	total = splice_total(&other->sp);
	if (total != (uint64_t)other->mark) {
		other->mark = total;
		cre->mark = splice_total(&cre->sp);
		return (1);
	}
	if (!timerisset(&other->tv_moved))
		return (0);
	getevtime(&now);
	timersub(&now, &other->tv_moved, &idle);
	if (timercmp(&idle, &cre->con->se_relay->rl_conf.timeout, >=))
		return (0);
	cre->mark = splice_total(&cre->sp);
	return (1);
}

/*
 * An end of file or an error of cre's side ends the session, as
 * OpenBSD's relay_error() ends it: "last write (done)" once what waits
 * for the other side is written, else "done".  What happened exactly
 * goes to a debug line.
 */
void
relay_end(struct ctl_relay_event *cre, const char *why)
{
	struct rsession		*con = cre->con;
	struct ctl_relay_event	*dst = cre->dst;

	log_debug("relay %s, session %u: %s", con->se_relay->rl_conf.name,
	    con->se_id, why);
	if (dst->bev == NULL || dst->s == -1 ||
	    evbuffer_get_length(bufferevent_get_output(dst->bev)) == 0) {
		relay_close(con, "done", 0);
		return;
	}
	(void)relay_end_written(dst, "last write (done)");
}

/*
 * The session ends with msg once what waits for cre's side is written:
 * at once (-1, the session is closed), or from relay_output_done() (0).
 */
int
relay_end_written(struct ctl_relay_event *cre, const char *msg)
{
	struct rsession	*con = cre->con;

	con->se_endmsg = msg;
	splice_stop(&con->se_in.sp);
	splice_stop(&con->se_out.sp);
	relay_read_off(&con->se_in);
	relay_read_off(&con->se_out);
	relay_flush(cre);
	if (cre->bev != NULL &&
	    evbuffer_get_length(bufferevent_get_output(cre->bev)) > 0)
		return (0);
	relay_close(con, msg, 0);
	return (-1);
}

/*
 * cre's side saw nothing for the session timeout, reading or writing:
 * the end, unless the other direction moved meanwhile.
 */
void
relay_timeout(struct ctl_relay_event *cre, int reading)
{
	if (relay_idle_alive(cre)) {
		/* a write timeout disables the event: on again */
		if (!reading) {
			if (cre->tls != NULL) {
				if (relay_tls_flush(cre) == -1)
					relay_end(cre, "write failed");
			} else
				bufferevent_enable(cre->bev, EV_WRITE);
		}
		return;
	}
	relay_close(cre->con, "buffer event timeout", 1);
}

static void
relay_error(struct bufferevent *bev, short what, void *arg)
{
	struct ctl_relay_event	*cre = arg;
	struct rsession		*con = cre->con;

	(void)bev;
	if (what & BEV_EVENT_TIMEOUT) {
		relay_timeout(cre, what & BEV_EVENT_READING);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		relay_read_off(cre);
		relay_act(con, cre, con->se_ops->ro_eof(cre));
		return;
	}
	if (what & BEV_EVENT_ERROR) {
		relay_end(cre, errno ? strerror(errno) : "buffer event error");
		return;
	}
}

static uint64_t
relay_bytes(struct ctl_relay_event *cre, int kind)
{
	uint64_t	 n;

	n = splice_bytes(&cre->sp, kind);
	if (kind == RELAY_BYTES_COPIED)
		n += cre->copied;
	return (n);
}

/* What the session moved so far: b[direction][spliced, copied]. */
void
relay_session_bytes(struct rsession *con, uint64_t b[2][2])
{
	struct rsession	*link;
	int		 kind;

	for (kind = 0; kind < 2; kind++) {
		b[RELAY_DIR_REQUEST][kind] = relay_bytes(&con->se_in, kind);
		b[RELAY_DIR_RESPONSE][kind] = relay_bytes(&con->se_out, kind);
		TAILQ_FOREACH(link, &con->se_links, se_link) {
			b[RELAY_DIR_REQUEST][kind] +=
			    relay_bytes(&link->se_in, kind);
			b[RELAY_DIR_RESPONSE][kind] +=
			    relay_bytes(&link->se_out, kind);
		}
	}
}

/*
 * One spliced direction ended.  End of file half-closes the other side;
 * max reached (EFBIG) hands the direction back to the protocol.
 */
static void
relay_splice_done(struct rsplice *sp, int reason, void *arg)
{
	struct ctl_relay_event	*cre = arg;
	struct rsession		*con = cre->con;

	(void)sp;
	switch (reason) {
	case 0:
		cre->splicing = 0;
		relay_act(con, cre, con->se_ops->ro_eof(cre));
		return;
	case EFBIG:
		cre->splicing = 0;
		cre->toread = 0;
		relay_read_on(cre);
		relay_act(con, cre, con->se_ops->ro_passed(cre));
		return;
	case ETIMEDOUT:
		if (relay_idle_alive(cre)) {
			if (relay_splice_run(cre, splice_count(&cre->sp)) ==
			    -1)
				relay_close(con, strerror(errno), 1);
			return;
		}
		relay_close(con, con->se_nosplice ? "buffer event timeout" :
		    "splice timeout", 1);
		return;
	default:
		relay_end(cre, strerror(reason));
		return;
	}
}

/*
 * A line of a session's between its start and its end line (an HTTP/2
 * stream relayd refused): "relay NAME, session ID, TEXT", under the
 * options that log the end line (err: as an error), which stays as
 * OpenBSD writes it.
 */
void
relay_log_note(struct rsession *con, int err, const char *fmt, ...)
{
	va_list	 ap;
	char	*text;

	if ((env->sc_conf.opts & (err ? RELAYD_OPT_LOGCONERR :
	    RELAYD_OPT_LOGCON)) == 0)
		return;
	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) == -1)
		text = NULL;
	va_end(ap);
	if (text == NULL)
		return;
	logit(err ? LOG_WARNING : LOG_INFO, "relay %s, session %u, %s",
	    con->se_relay->rl_conf.name, con->se_id, text);
	free(text);
}

/* Everything a session holds goes; a configuration may go with it. */
static void
relay_session_free(struct rsession *con)
{
	struct rsession	*link;

	/* its links first, each telling the protocol */
	while ((link = TAILQ_FIRST(&con->se_links)) != NULL)
		relay_close(link, "done", 0);
	con->se_ops->ro_free(con);
	if (event_initialized(&con->se_ev))
		event_del(&con->se_ev);
	relay_side_close(&con->se_in);
	relay_side_close(&con->se_out);
	relay_tls_inspected_drop(con);
	free(con->se_pp);
	free(con->se_sni);
	relay_limit_release(con->se_lim);
	relay_limit_release(con->se_limq);
	TAILQ_REMOVE(&relay_sessions, con, se_entry);
	if (con->se_parent != NULL) {
		TAILQ_REMOVE(&con->se_parent->se_links, con, se_link);
		relay_nlinks--;
	} else if (con->se_shared) {
		relay_nlinks--;
		relay_nshared--;
	} else
		relay_nsessions--;
	if (con->se_dgram)
		relay_ndgrams--;
	/* the last session of a configuration a reload replaced */
	if (con->se_conf != NULL && --con->se_conf->sc_nsessions == 0)
		config_free(con->se_conf);
	free(con->se_log);
	free(con);
}

/* A descriptor is free: the listeners that stopped for want of one go on. */
static void
relay_accept_resume(void)
{
	struct relay	*rlay;

	TAILQ_FOREACH(rlay, env->sc_relays, rl_entry)
		if (rlay->rl_up && evtimer_pending(&rlay->rl_evt, NULL) &&
		    relay_fds_left() >= 0) {
			evtimer_del(&rlay->rl_evt);
			event_add(&rlay->rl_ev, NULL);
		}
}

void
relay_close(struct rsession *con, const char *msg, int err)
{
	struct relay_stats	*st;
	uint64_t		 b[2][2];
	int			 dir, kind;

	if (con->se_parent != NULL) {
		/* a link: its bytes stay its session's, no line of its own */
		con->se_parent->se_in.copied += relay_bytes(&con->se_in,
		    RELAY_BYTES_COPIED);
		con->se_parent->se_out.copied += relay_bytes(&con->se_out,
		    RELAY_BYTES_COPIED);
		con->se_why = msg;
		relay_session_free(con);
		relay_accept_resume();
		return;
	}
	if (con->se_shared) {
		/* its bytes were counted for the sessions it carried */
		con->se_why = msg;
		relay_session_free(con);
		relay_accept_resume();
		return;
	}
	st = relay_stats_mine(con->se_relay);
	relay_session_bytes(con, b);
	for (dir = 0; dir < 2; dir++)
		for (kind = 0; kind < 2; kind++)
			st->bytes[dir][kind] += b[dir][kind];
	if (st->active > 0)
		st->active--;
	st->ends[!err ? RELAY_END_OK : strstr(msg, "timeout") != NULL ?
	    RELAY_END_TIMEOUT : RELAY_END_ERROR]++;
	if (env->sc_conf.opts & (err ? RELAYD_OPT_LOGCONERR :
	    RELAYD_OPT_LOGCON))
		relay_log_end(con, msg, err, b, relay_nsessions);
	relay_session_free(con);
	relay_accept_resume();
}
