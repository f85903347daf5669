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

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "relayd.h"

static void	 proc_exec(struct privsep *, struct privsep_proc *,
		    unsigned int, int, char **);
static struct imsgev *
		 proc_newiev(struct privsep *, struct privsep_proc *, int,
		    enum privsep_procid, unsigned int);
static void	 proc_accept(struct privsep *, struct imsg *);
static void	 proc_sig_handler(int, short, void *);
static void	 proc_log_relay(const char *, size_t, int);
static void	 proc_heartbeat(int, short, void *);
static void	 proc_dispatch_more(int, short, void *);
static __dead void
		 proc_shutdown(struct privsep *);

static struct privsep	*proc_log_ps;	/* a child's, for its log lines */
static struct event	 proc_heartbeat_ev;

static const char *const imsg_names[IMSG_MAX] = {
	[IMSG_NONE] = "none",
	[IMSG_CTL_OK] = "ctl_ok",
	[IMSG_CTL_FAIL] = "ctl_fail",
	[IMSG_CTL_END] = "ctl_end",
	[IMSG_CTL_VERBOSE] = "ctl_verbose",
	[IMSG_CTL_PROCFD] = "ctl_procfd",
	[IMSG_CTL_SOCKFD] = "ctl_sockfd",
	[IMSG_CTL_METRICSFD] = "ctl_metricsfd",
	[IMSG_CTL_PROCINFO] = "ctl_procinfo",
	[IMSG_CTL_RESET] = "ctl_reset",
	[IMSG_CTL_START] = "ctl_start",
	[IMSG_CTL_RELOAD] = "ctl_reload",
	[IMSG_CTL_RELOAD_BUSY] = "ctl_reload_busy",
	[IMSG_CTL_SHUTDOWN] = "ctl_shutdown",
	[IMSG_CTL_NOTIFY] = "ctl_notify",
	[IMSG_CTL_SHOW_SUM] = "ctl_show_sum",
	[IMSG_CTL_STATUS] = "ctl_status",
	[IMSG_CTL_STATUS_INFO] = "ctl_status_info",
	[IMSG_CTL_RELAY] = "ctl_relay",
	[IMSG_CTL_TABLE] = "ctl_table",
	[IMSG_CTL_HOST] = "ctl_host",
	[IMSG_CTL_PROC] = "ctl_proc",
	[IMSG_CTL_POLL] = "ctl_poll",
	[IMSG_CTL_HOST_ENABLE] = "ctl_host_enable",
	[IMSG_CTL_HOST_DISABLE] = "ctl_host_disable",
	[IMSG_CTL_TABLE_ENABLE] = "ctl_table_enable",
	[IMSG_CTL_TABLE_DISABLE] = "ctl_table_disable",
	[IMSG_CTL_SESSION] = "ctl_session",
	[IMSG_CFG_GLOBAL] = "cfg_global",
	[IMSG_CFG_TABLE] = "cfg_table",
	[IMSG_CFG_HOST] = "cfg_host",
	[IMSG_CFG_PROTO] = "cfg_proto",
	[IMSG_CFG_RULE] = "cfg_rule",
	[IMSG_CFG_RELAY] = "cfg_relay",
	[IMSG_CFG_RELAY_TABLE] = "cfg_relay_table",
	[IMSG_CFG_RELAY_FD] = "cfg_relay_fd",
	[IMSG_CFG_DONE] = "cfg_done",
	[IMSG_STATISTICS] = "statistics",
	[IMSG_HOST_STATUS] = "host_status",
	[IMSG_SPLICE_ENGINE] = "splice_engine",
	[IMSG_SCRIPT] = "script",
	[IMSG_CFG_RELAY_CERT] = "cfg relay cert",
	[IMSG_CA_PRIVENC] = "ca privenc",
	[IMSG_CA_PRIVDEC] = "ca privdec",
	[IMSG_CA_ECDSA] = "ca ecdsa",
	[IMSG_CA_CERT] = "ca cert",
	[IMSG_TLSTICKET_REKEY] = "tls ticket rekey",
	[IMSG_BINDANY] = "bindany",
	[IMSG_UNIXCONNECT] = "unixconnect",
	[IMSG_CFG_RDR] = "cfg_rdr",
	[IMSG_CFG_ROUTER] = "cfg_router",
	[IMSG_RDR_SYNC] = "rdr_sync",
	[IMSG_ROUTER_SYNC] = "router_sync",
	[IMSG_RDR_STATS] = "rdr_stats",
	[IMSG_CTL_RDR] = "ctl_rdr",
	[IMSG_CTL_ROUTER] = "ctl_router",
	[IMSG_DEMOTE] = "demote",
	[IMSG_ANNOUNCE] = "announce",
	[IMSG_CTL_DEMOTE] = "ctl_demote",
	[IMSG_CTL_ANNOUNCE] = "ctl_announce",
	[IMSG_HEARTBEAT] = "heartbeat",
	[IMSG_CTL_STALLED] = "ctl_stalled",
	[IMSG_CTL_RDR_ENABLE] = "ctl_rdr_enable",
	[IMSG_CTL_RDR_DISABLE] = "ctl_rdr_disable",
	[IMSG_AGENTX_SOCK] = "agentx_sock",
	[IMSG_KEYOP_STATS] = "keyop_stats",
	[IMSG_LOG_LINE] = "log_line",
	[IMSG_LOG_RECONNECT] = "log_reconnect",
	[IMSG_LOG_SOCKET] = "log_socket",
	[IMSG_CTL_DENIED] = "ctl_denied",
};

static const char *const proc_names[PROC_MAX] = {
	[PROC_PARENT] = "parent",
	[PROC_PFE] = "pfe",
	[PROC_HCE] = "hce",
	[PROC_RELAY] = "relay",
	[PROC_CA] = "ca",
};

const char *
imsg_type_name(uint32_t type)
{
	static char	 buf[16];

	if (type < IMSG_MAX && imsg_names[type] != NULL)
		return (imsg_names[type]);
	(void)snprintf(buf, sizeof(buf), "%u", type);
	return (buf);
}

const char *
proc_name(enum privsep_procid id)
{
	if (id >= PROC_MAX)
		return ("unknown");
	return (proc_names[id]);
}

/*
 * The parent starts every child by running this program again with
 * -P title -I instance; a child finds its entry here and never returns.
 */
void
proc_init(struct privsep *ps, struct privsep_proc *procs, unsigned int nproc,
    int argc, char **argv, enum privsep_procid proc_id)
{
	unsigned int	 i;

	ps->ps_procs = procs;
	ps->ps_nprocs = nproc;
	for (i = 0; i < nproc; i++)
		procs[i].p_ps = ps;

	if (proc_id == PROC_PARENT) {
		ps->ps_id = PROC_PARENT;
		ps->ps_title = "parent";
		for (i = 0; i < nproc; i++)
			proc_exec(ps, &procs[i], ps->ps_instances[procs[i].p_id],
			    argc, argv);
		return;
	}

	for (i = 0; i < nproc; i++) {
		if (procs[i].p_id != proc_id)
			continue;
		ps->ps_id = proc_id;
		ps->ps_title = procs[i].p_title;
		procs[i].p_run(ps, &procs[i]);
		/* NOTREACHED */
		exit(1);
	}
	fatalx("%s: process %d unknown", __func__, proc_id);
}

static void
proc_exec(struct privsep *ps, struct privsep_proc *p, unsigned int n,
    int argc, char **argv)
{
	char		*nargv[16], inst[16], title[32];
	unsigned int	 i;
	int		 sp[2], nargc, v;
	pid_t		 pid;

	for (i = 0; i < n; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
		    sp) == -1)
			fatal("%s: socketpair", __func__);
		switch (pid = fork()) {
		case -1:
			fatal("%s: fork", __func__);
		case 0:
			if (sp[1] == PROC_PARENT_SOCK_FILENO) {
				if (fcntl(sp[1], F_SETFD, 0) == -1)
					fatal("%s: fcntl", __func__);
			} else if (dup2(sp[1], PROC_PARENT_SOCK_FILENO) == -1)
				fatal("%s: dup2", __func__);
			nargc = 0;
			nargv[nargc++] = argv[0];
			if (ps->ps_debug)
				nargv[nargc++] = "-d";
			for (v = 0; v < ps->ps_verbose && v < 2; v++)
				nargv[nargc++] = "-v";
			(void)strlcpy(title, p->p_title, sizeof(title));
			nargv[nargc++] = "-P";
			nargv[nargc++] = title;
			(void)snprintf(inst, sizeof(inst), "%u", i);
			nargv[nargc++] = "-I";
			nargv[nargc++] = inst;
			nargv[nargc] = NULL;
			execv(ps->ps_execpath, nargv);
			fatal("%s: execv %s", __func__, ps->ps_execpath);
		default:
			close(sp[1]);
			ps->ps_pids[p->p_id][i] = pid;
			(void)proc_newiev(ps, p, sp[0], p->p_id, i);
			break;
		}
	}
	ps->ps_instances[p->p_id] = n;
	(void)argc;
}

static struct imsgev *
proc_newiev(struct privsep *ps, struct privsep_proc *p, int fd,
    enum privsep_procid id, unsigned int instance)
{
	struct imsgev	*iev;

	if (instance >= PROC_MAX_INSTANCES)
		fatalx("%s: instance %u out of range", __func__, instance);
	if (ps->ps_ievs[id][instance] != NULL)
		fatalx("%s: %s %u connected twice", __func__,
		    proc_name(id), instance);
	if ((iev = calloc(1, sizeof(*iev))) == NULL)
		fatal("%s", __func__);
	socket_set_blockmode(fd, 0);
	imsg_init(&iev->ibuf, fd);
	iev->handler = proc_dispatch;
	evtimer_set(&iev->ev_more, proc_dispatch_more, iev);
	iev->proc = p;
	iev->data = iev;
	iev->peer = id;
	iev->instance = instance;
	ps->ps_ievs[id][instance] = iev;
	imsg_event_add(iev);
	return (iev);
}

/* Link the children with each other: one socketpair per pair of peers. */
void
proc_connect(struct privsep *ps)
{
	static const struct {
		enum privsep_procid	a, b;
		int			same;	/* instance n with instance n */
	} links[] = {
		{ PROC_PFE, PROC_HCE, 0 },
		{ PROC_PFE, PROC_RELAY, 0 },
		{ PROC_RELAY, PROC_CA, 1 },
	};
	struct ctl_procfd	 pf;
	unsigned int		 l, i, j;
	int			 sp[2];

	for (l = 0; l < nitems(links); l++) {
		for (i = 0; i < ps->ps_instances[links[l].a]; i++)
			for (j = 0; j < ps->ps_instances[links[l].b]; j++) {
				if (links[l].same && i != j)
					continue;
				if (socketpair(AF_UNIX, SOCK_STREAM |
				    SOCK_CLOEXEC, 0, sp) == -1)
					fatal("%s: socketpair", __func__);
				pf.cp_id = links[l].b;
				pf.cp_instance = j;
				proc_compose_imsg(ps, links[l].a, i,
				    IMSG_CTL_PROCFD, 0, sp[0], &pf, sizeof(pf));
				pf.cp_id = links[l].a;
				pf.cp_instance = i;
				proc_compose_imsg(ps, links[l].b, j,
				    IMSG_CTL_PROCFD, 0, sp[1], &pf, sizeof(pf));
			}
	}
}

static void
proc_accept(struct privsep *ps, struct imsg *imsg)
{
	struct ctl_procfd	 pf;
	unsigned int		 i;

	IMSG_EXACT_SIZE_CHECK(imsg, &pf);
	memcpy(&pf, imsg->data, sizeof(pf));
	if (imsg->fd == -1 || pf.cp_id <= PROC_PARENT || pf.cp_id >= PROC_MAX)
		fatalx("%s: invalid peer", __func__);
	for (i = 0; i < ps->ps_nprocs; i++)
		if (ps->ps_procs[i].p_id == pf.cp_id)
			break;
	if (i == ps->ps_nprocs) {
		/* a peer we send nothing to and expect nothing from */
		close(imsg->fd);
		return;
	}
	(void)proc_newiev(ps, &ps->ps_procs[i], imsg->fd, pf.cp_id,
	    pf.cp_instance);
	if (pf.cp_instance + 1 > ps->ps_instances[pf.cp_id])
		ps->ps_instances[pf.cp_id] = pf.cp_instance + 1;
}

/*
 * The parent's side of shutting down: close every pipe, ask the children
 * to go, and reap them.  Returns 1 when a child was lost (died by a
 * signal it was not sent, or exited with an error).
 */
int
proc_kill(struct privsep *ps)
{
	unsigned int	 id, i;
	pid_t		 pid;
	int		 status, lost = 0;

	for (id = PROC_PARENT + 1; id < PROC_MAX; id++)
		for (i = 0; i < PROC_MAX_INSTANCES; i++) {
			struct imsgev *iev = ps->ps_ievs[id][i];

			if (iev == NULL)
				continue;
			event_del(&iev->ev);
			evtimer_del(&iev->ev_more);
			imsg_clear(&iev->ibuf);
			close(iev->ibuf.fd);
			free(iev);
			ps->ps_ievs[id][i] = NULL;
			if (ps->ps_pids[id][i] > 0)
				(void)kill(ps->ps_pids[id][i], SIGTERM);
		}

	for (;;) {
		pid = waitpid(WAIT_ANY, &status, 0);
		if (pid == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (WIFSIGNALED(status) && WTERMSIG(status) != SIGTERM &&
		    WTERMSIG(status) != SIGINT) {
			log_warnx("lost child: pid %d terminated; signal %d",
			    (int)pid, WTERMSIG(status));
			lost = 1;
		} else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
			log_warnx("lost child: pid %d exited abnormally",
			    (int)pid);
			lost = 1;
		}
	}
	return (lost);
}

/*
 * A child: chroot to the home of the unprivileged user, drop to it, and
 * run the event loop until the parent goes away or asks us to.
 */
void
proc_run(struct privsep *ps, struct privsep_proc *p,
    struct privsep_proc *procs, unsigned int nproc,
    void (*run)(struct privsep *, struct privsep_proc *, void *), void *arg)
{
	struct passwd	*pw = ps->ps_pw;
	unsigned int	 i;

	log_procinit(p->p_title);

	if (chroot(pw->pw_dir) == -1)
		fatal("%s: chroot %s", __func__, pw->pw_dir);
	if (chdir("/") == -1)
		fatal("%s: chdir(\"/\")", __func__);

	setproctitle("%s", p->p_title);

	if (setgroups(1, &pw->pw_gid) == -1 ||
	    setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) == -1 ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) == -1)
		fatal("%s: cannot drop privileges", __func__);
	if (compat_nonewprivs() == -1)
		fatal("%s: no_new_privs", __func__);

	/* deadlines keep time with the loop's timers */
	getevtime_init(event_init());

	signal_set(&ps->ps_evsigint, SIGINT, proc_sig_handler, ps);
	signal_set(&ps->ps_evsigterm, SIGTERM, proc_sig_handler, ps);
	signal_add(&ps->ps_evsigint, NULL);
	signal_add(&ps->ps_evsigterm, NULL);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGUSR1, SIG_IGN);

	ps->ps_procs = procs;
	ps->ps_nprocs = nproc;
	for (i = 0; i < nproc; i++) {
		procs[i].p_ps = ps;
		if (procs[i].p_id == PROC_PARENT)
			(void)proc_newiev(ps, &procs[i],
			    PROC_PARENT_SOCK_FILENO, PROC_PARENT, 0);
	}
	if (ps->ps_ievs[PROC_PARENT][0] == NULL)
		fatalx("%s: no parent in the process table", __func__);
	ps->ps_instances[PROC_PARENT] = 1;
	proc_log_ps = ps;
	log_setrelay(proc_log_relay);

	if (run != NULL)
		run(ps, p, arg);

	/* alive: the parent demotes when this stops (parent_liveness()) */
	evtimer_set(&proc_heartbeat_ev, proc_heartbeat, ps);
	proc_heartbeat(-1, 0, ps);

	event_dispatch();
	proc_shutdown(ps);
}

/* Every RELAY_HEARTBEAT_MS, from the event loop: this process turns. */
static void
proc_heartbeat(int fd, short event, void *arg)
{
	struct privsep	*ps = arg;
	struct timeval	 tv = { 0, RELAY_HEARTBEAT_MS * 1000 };

	(void)fd;
	(void)event;
	proc_compose(ps, PROC_PARENT, IMSG_HEARTBEAT, &ps->ps_instance,
	    sizeof(ps->ps_instance));
	evtimer_add(&proc_heartbeat_ev, &tv);
}

/* A child's syslog line that its own socket did not take. */
static void
proc_log_relay(const char *line, size_t len, int ask)
{
	(void)proc_compose_imsg(proc_log_ps, PROC_PARENT, 0,
	    ask ? IMSG_LOG_RECONNECT : IMSG_LOG_LINE, 0, -1, line, len);
}

static __dead void
proc_shutdown(struct privsep *ps)
{
	log_info("%s exiting, pid %d", ps->ps_title, (int)getpid());
	exit(0);
}

static void
proc_sig_handler(int sig, short event, void *arg)
{
	struct privsep	*ps = arg;

	switch (sig) {
	case SIGINT:
	case SIGTERM:
		proc_shutdown(ps);
		break;
	default:
		fatalx("%s: unexpected signal", __func__);
	}
	(void)event;
}

void
proc_dispatch(int fd, short event, void *arg)
{
	struct imsgev		*iev = arg;
	struct privsep_proc	*p = iev->proc;
	struct privsep		*ps = p->p_ps;
	struct imsgbuf		*ibuf = &iev->ibuf;
	struct imsg		 imsg;
	struct timespec		 t0, t;
	struct timeval		 tv;
	ssize_t			 n;
	int			 verbose, more = 0;

	if (event & EV_READ) {
		/*
		 * ENOBUFS: the buffer is full of messages that a cut batch
		 * left; they go first, and the socket is read next turn.
		 */
		n = imsg_read(ibuf);
		if (n == -1 && errno != EAGAIN && errno != ECONNRESET &&
		    errno != ENOBUFS)
			fatal("%s: imsg_read from %s", __func__,
			    proc_name(iev->peer));
		if (n == 0 || (n == -1 && errno == ECONNRESET)) {
			/*
			 * The peer went away (a reset when it died with our
			 * messages unread): this process ends too.
			 */
			event_del(&iev->ev);
			event_loopexit(NULL);
			return;
		}
	}

	if (event & EV_WRITE) {
		if (msgbuf_write(&ibuf->w) == -1 && errno != EAGAIN) {
			if (errno == EPIPE) {
				event_del(&iev->ev);
				event_loopexit(NULL);
				return;
			}
			fatal("%s: msgbuf_write to %s", __func__,
			    proc_name(iev->peer));
		}
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if ((n = imsg_get(ibuf, &imsg)) == -1)
			fatal("%s: bad message from %s", __func__,
			    proc_name(iev->peer));
		if (n == 0)
			break;

		switch (imsg.hdr.type) {
		case IMSG_CTL_VERBOSE:
			IMSG_EXACT_SIZE_CHECK(&imsg, &verbose);
			memcpy(&verbose, imsg.data, sizeof(verbose));
			log_setverbose(verbose);
			/* the parent passes it on to every child */
			if (ps->ps_id == PROC_PARENT) {
				unsigned int id;

				for (id = PROC_PFE; id < PROC_MAX; id++)
					proc_compose(ps, id, IMSG_CTL_VERBOSE,
					    &verbose, sizeof(verbose));
			}
			break;
		case IMSG_CTL_PROCFD:
			if (ps->ps_id == PROC_PARENT)
				fatalx("%s: unexpected procfd", __func__);
			proc_accept(ps, &imsg);
			break;
		case IMSG_LOG_LINE:
		case IMSG_LOG_RECONNECT:
			if (ps->ps_id != PROC_PARENT)
				fatalx("%s: unexpected log line", __func__);
			log_relayed(imsg.data, IMSG_DATA_SIZE(&imsg));
			if (imsg.hdr.type == IMSG_LOG_RECONNECT)
				(void)proc_compose_imsg(ps, iev->peer,
				    iev->instance, IMSG_LOG_SOCKET, 0,
				    log_connect(), NULL, 0);
			break;
		case IMSG_LOG_SOCKET:
			if (ps->ps_id == PROC_PARENT)
				fatalx("%s: unexpected log socket", __func__);
			log_setsocket(imsg.fd);
			break;
		default:
			if (p->p_cb(fd, p, &imsg) == 0)
				break;
			fatalx("%s: %s %u got unknown imsg %s from %s %u",
			    __func__, ps->ps_title, ps->ps_instance,
			    imsg_type_name(imsg.hdr.type),
			    proc_name(iev->peer), iev->instance);
		}
		imsg_free(&imsg);
		/*
		 * A long batch (ca signing for a burst of handshakes) lets
		 * the loop turn after PROC_DISPATCH_MS: the heartbeat and
		 * the other channels go on, and the rest follows at once.
		 */
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (timespec_ms(&t, &t0) >= PROC_DISPATCH_MS) {
			more = 1;
			break;
		}
	}
	imsg_event_add(iev);
	if (more) {
		timerclear(&tv);
		evtimer_add(&iev->ev_more, &tv);
	}
}

/*
 * The rest of a long batch, from a timer: on the loop's next turn, with
 * the timers that are due (an event made active now would run in this
 * turn, before them).
 */
static void
proc_dispatch_more(int fd, short event, void *arg)
{
	struct imsgev	*iev = arg;

	(void)fd;
	(void)event;
	proc_dispatch(iev->ibuf.fd, 0, iev);
}

/*
 * What is queued leaves at once if the socket takes it; only what it
 * does not take waits for EV_WRITE.  The read event is persistent and
 * is set again only when EV_WRITE comes or goes: an idle channel and
 * a message the socket takes cost no epoll_ctl(2)/kevent(2) calls.
 */
void
imsg_event_add(struct imsgev *iev)
{
	short	 events;

	if (iev->handler == NULL) {
		(void)imsg_flush(&iev->ibuf);
		return;
	}
	/* an error shows again, and is handled, in the EV_WRITE handler */
	if (iev->ibuf.w.queued)
		(void)msgbuf_write(&iev->ibuf.w);
	events = EV_READ | EV_PERSIST;
	if (iev->ibuf.w.queued)
		events |= EV_WRITE;
	if (events == iev->events && event_initialized(&iev->ev) &&
	    event_pending(&iev->ev, EV_READ, NULL))
		return;
	if (event_initialized(&iev->ev))
		event_del(&iev->ev);
	iev->events = events;
	event_set(&iev->ev, iev->ibuf.fd, events, iev->handler, iev->data);
	event_add(&iev->ev, NULL);
}

int
imsg_compose_event(struct imsgev *iev, uint32_t type, uint32_t peerid,
    pid_t pid, int fd, const void *data, size_t datalen)
{
	int	 ret;

	if ((ret = imsg_compose(&iev->ibuf, type, peerid, pid, fd, data,
	    datalen)) == -1)
		return (-1);
	imsg_event_add(iev);
	return (ret);
}

unsigned int
proc_ninstances(struct privsep *ps, enum privsep_procid id)
{
	return (ps->ps_instances[id]);
}

struct imsgev *
proc_iev(struct privsep *ps, enum privsep_procid id, int n)
{
	if (n < 0 || n >= PROC_MAX_INSTANCES)
		return (NULL);
	return (ps->ps_ievs[id][n]);
}

struct imsgbuf *
proc_ibuf(struct privsep *ps, enum privsep_procid id, int n)
{
	struct imsgev	*iev;

	if ((iev = proc_iev(ps, id, n)) == NULL)
		return (NULL);
	return (&iev->ibuf);
}

/*
 * Send to instance n of a process, or with n == -1 to all of them; a
 * descriptor is duplicated so that every instance gets its own.
 */
int
proc_compose_imsg(struct privsep *ps, enum privsep_procid id, int n,
    uint32_t type, uint32_t peerid, int fd, const void *data, size_t datalen)
{
	struct imsgev	*iev;
	unsigned int	 i, first, last;
	int		 sendfd, ret = 0;

	if (n == -1) {
		first = 0;
		last = ps->ps_instances[id];
	} else {
		first = n;
		last = n + 1;
	}
	for (i = first; i < last; i++) {
		if ((iev = proc_iev(ps, id, i)) == NULL)
			continue;
		sendfd = fd;
		if (fd != -1 && i + 1 < last &&
		    (sendfd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) == -1) {
			ret = -1;
			continue;
		}
		if (imsg_compose_event(iev, type, peerid, 0, sendfd, data,
		    datalen) == -1) {
			if (sendfd != -1)
				close(sendfd);
			ret = -1;
		}
	}
	if (fd != -1 && last == first)
		close(fd);
	return (ret);
}

int
proc_compose(struct privsep *ps, enum privsep_procid id, uint32_t type,
    const void *data, size_t datalen)
{
	return (proc_compose_imsg(ps, id, -1, type, 0, -1, data, datalen));
}

int
proc_forward_imsg(struct privsep *ps, struct imsg *imsg,
    enum privsep_procid id, int n)
{
	return (proc_compose_imsg(ps, id, n, imsg->hdr.type,
	    imsg->hdr.peerid, imsg->fd, imsg->data, IMSG_DATA_SIZE(imsg)));
}
