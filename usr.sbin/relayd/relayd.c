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
#include <sys/stat.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "relayd.h"

extern char	**environ;

__dead void	 usage(void);

static int	 parent_dispatch_pfe(int, struct privsep_proc *,
		    struct imsg *);
static int	 parent_dispatch_child(int, struct privsep_proc *,
		    struct imsg *);
static void	 parent_sig_handler(int, short, void *);
static int	 parent_open_sockets(struct relayd *, struct relayd *);
static __dead void parent_run(struct relayd *, int, char *[]);
static enum privsep_procid
		 proc_bytitle(const char *);
static void	 parent_push(struct relayd *);
static int	 parent_reload(struct relayd *, const char *, uint32_t);
static void	 parent_configure_done(struct relayd *);
static void	 parent_notify_ready(struct relayd *, const char *);
static void	 parent_notify_reloading(void);
static void	 parent_control_cleanup(struct relayd *);
static void	 parent_liveness(int, short, void *);
static void	 parent_silent(struct privsep *, int, unsigned int, int);
static void	 parent_send_procinfo(struct relayd *);
static int	 parent_metrics_listen(struct sockaddr_storage *);
static void	 parent_tls_ticket_rekey(int, short, void *);
static void	 parent_tls_ticket_send(struct relayd *, int);

static struct event	 parent_rekey_ev;
static struct ctl_ticketkey parent_keys[TLS_TICKET_KEYS];
static int		 parent_nkeys;
static __dead void
		 parent_shutdown(struct relayd *);

static struct privsep_proc procs[] = {
	{ "pfe",	PROC_PFE,	parent_dispatch_pfe,	pfe, NULL },
	{ "hce",	PROC_HCE,	parent_dispatch_child,	hce, NULL },
	{ "relay",	PROC_RELAY,	parent_dispatch_child,	relay, NULL },
	{ "ca",		PROC_CA,	parent_dispatch_child,	ca, NULL }
};

/* liveness: when each child process last said it is alive */
static struct timespec	 proc_alive[PROC_MAX][PROC_MAX_INSTANCES];
static int		 proc_stalled[PROC_MAX][PROC_MAX_INSTANCES];
static struct event	 parent_liveness_ev;

/* the relayctl connection waiting for the end of a reload */
static uint32_t	 reload_peerid;
static int	 reload_waiting;

__dead void
usage(void)
{
	extern char	*__progname;

	fprintf(stderr, "usage: %s [-dnv] [-D macro=value] [-f file]\n",
	    __progname);
	exit(1);
}

/* The child that relayd -P TITLE is to be (the parent re-executes it). */
static enum privsep_procid
proc_bytitle(const char *title)
{
	unsigned int	 i;

	for (i = 0; i < nitems(procs); i++)
		if (strcmp(procs[i].p_title, title) == 0 &&
		    procs[i].p_id != PROC_PARENT)
			return (procs[i].p_id);
	fatalx("unknown process title %s", title);
}

/* The parent reads its configuration; with -n, that is all. */
static void
parent_config(struct relayd *env, int noaction, int verbose)
{
	if (parse_config(env->sc_conffile, env) == -1)
		exit(1);
	if (noaction) {
		if (verbose)
			print_config(env);
		fprintf(stderr, "configuration OK\n");
		exit(0);
	}
}

int
main(int argc, char *argv[])
{
	struct relayd		*env;
	struct privsep		*ps;
	const char		*conffile = CONF_FILE;
	const char		*errstr, *title = NULL;
	enum privsep_procid	 proc_id = PROC_PARENT;
	int			 c, debug = 0, verbose = 0, noaction = 0;
	int			 instance = 0;

	setproctitle_init(argc, argv, environ);
	log_init(1, LOG_DAEMON);	/* stderr until daemonized */

	while ((c = getopt(argc, argv, "dD:nf:I:P:v")) != -1) {
		switch (c) {
		case 'd':
			debug = 2;
			break;
		case 'D':
			if (cmdline_symset(optarg) < 0)
				log_warnx("could not parse macro definition %s",
				    optarg);
			break;
		case 'n':
			debug = 2;
			noaction = 1;
			break;
		case 'f':
			conffile = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'P':
			title = optarg;
			break;
		case 'I':
			instance = strtonum(optarg, 0, PROC_MAX_INSTANCES - 1,
			    &errstr);
			if (errstr)
				fatalx("invalid instance %s: %s", optarg,
				    errstr);
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	if (argc > 0)
		usage();

	if (title != NULL)
		proc_id = proc_bytitle(title);
	else
		/* what the launcher left open reaches no child */
		closefrom(STDERR_FILENO + 1);

	if ((env = calloc(1, sizeof(*env))) == NULL ||
	    (ps = calloc(1, sizeof(*ps))) == NULL)
		err(1, NULL);
	env->sc_ps = ps;
	ps->ps_env = env;
	ps->ps_csock = -1;
	ps->ps_debug = debug;
	ps->ps_verbose = verbose;
	ps->ps_instance = instance;
	if (config_init(env) == -1)
		err(1, "config_init");
	env->sc_conffile = conffile;
	if (verbose)
		env->sc_conf.opts |= RELAYD_OPT_VERBOSE;

	if (proc_id != PROC_PARENT) {
		/* a child started by the parent: no config, no checks */
		log_init(debug, LOG_DAEMON);
		log_setverbose(verbose);
		if ((ps->ps_pw = getpwnam(RELAYD_USER)) == NULL)
			fatalx("unknown user %s", RELAYD_USER);
		proc_init(ps, procs, nitems(procs), argc, argv, proc_id);
		/* NOTREACHED */
		exit(1);
	}

	parent_config(env, noaction, verbose);
	if (debug)
		env->sc_conf.opts |= RELAYD_OPT_LOGUPDATE;

	parent_run(env, argc, argv);
	/* NOTREACHED */
	return (0);
}

/*
 * The parent, once its configuration is read: the listeners and the
 * control socket are opened as root, then the children start and the
 * configuration goes to them.
 */
static __dead void
parent_run(struct relayd *env, int argc, char *argv[])
{
	struct privsep	*ps = env->sc_ps;
	struct ctl_sock	 cs, rs;
	int		 debug = ps->ps_debug, mfd = -1, rfd = -1, notify;

	if (geteuid())
		errx(1, "need root privileges");
	if ((ps->ps_pw = getpwnam(RELAYD_USER)) == NULL)
		errx(1, "unknown user %s", RELAYD_USER);
	if (compat_getexecpath(argv[0], ps->ps_execpath,
	    sizeof(ps->ps_execpath)) == -1)
		errx(1, "cannot find myself as %s: start relayd with a path",
		    argv[0]);
	ps->ps_instances[PROC_PFE] = 1;
	ps->ps_instances[PROC_HCE] = 1;
	ps->ps_instances[PROC_RELAY] = env->sc_conf.prefork_relay;
	ps->ps_instances[PROC_CA] = env->sc_conf.prefork_relay;

	if ((ps->ps_csock = control_init(env->sc_conf.socket, 0,
	    &ps->ps_csock_gid)) == -1)
		exit(1);
	if (env->sc_conf.rsocket[0] != '\0' &&
	    (rfd = control_init(env->sc_conf.rsocket, 1, &rs.cs_gid)) == -1) {
		control_cleanup(env->sc_conf.socket);
		exit(1);
	}
	if (parent_open_sockets(env, NULL) == -1) {
		parent_control_cleanup(env);
		exit(1);
	}
	if (env->sc_conf.metrics_ss.ss_family != AF_UNSPEC &&
	    (mfd = parent_metrics_listen(&env->sc_conf.metrics_ss)) == -1) {
		parent_control_cleanup(env);
		exit(1);
	}

	log_init(debug, LOG_DAEMON);
	log_setverbose(ps->ps_verbose);
	/* under a service manager that waits for READY=1: no fork */
	if ((notify = compat_sdnotify_init()) == -1)
		log_warn("NOTIFY_SOCKET");
	if (!debug && notify != 1 && daemon(1, 0) == -1)
		err(1, "failed to daemonize");

	log_info("startup");
	env->sc_started = getmonosec();
	env->sc_parentpid = getpid();

	getevtime_init(event_init());
	/* redirections and routers: a clean slate, then this configuration */
	if (kernel_init(env) == -1 || kernel_configure(env) == -1) {
		parent_control_cleanup(env);
		relay_unix_unlink(env, NULL);
		kernel_cleanup(env);
		exit(1);
	}
	/* limits per source: in nftables, or counted by the relays */
	kernel_limits(env);
	/* carp's demotion: every group demoted until the checks are in */
	demote_init(env);
	signal_set(&ps->ps_evsigint, SIGINT, parent_sig_handler, ps);
	signal_set(&ps->ps_evsigterm, SIGTERM, parent_sig_handler, ps);
	signal_set(&ps->ps_evsighup, SIGHUP, parent_sig_handler, ps);
	signal_add(&ps->ps_evsigint, NULL);
	signal_add(&ps->ps_evsigterm, NULL);
	signal_add(&ps->ps_evsighup, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGUSR1, SIG_IGN);

	proc_init(ps, procs, nitems(procs), argc, argv, PROC_PARENT);
	proc_connect(ps);
	parent_send_procinfo(env);
	cs.cs_gid = ps->ps_csock_gid;
	cs.cs_restricted = 0;
	proc_compose_imsg(ps, PROC_PFE, 0, IMSG_CTL_SOCKFD, 0, ps->ps_csock,
	    &cs, sizeof(cs));
	ps->ps_csock = -1;
	if (rfd != -1) {
		rs.cs_restricted = 1;
		proc_compose_imsg(ps, PROC_PFE, 0, IMSG_CTL_SOCKFD, 0, rfd,
		    &rs, sizeof(rs));
	}
	/* ours: the metrics listener, served by pfe */
	if (mfd != -1)
		proc_compose_imsg(ps, PROC_PFE, 0, IMSG_CTL_METRICSFD, 0, mfd,
		    NULL, 0);
	parent_push(env);
	parent_liveness(-1, 0, env);

	event_dispatch();

	parent_shutdown(env);
}

/*
 * The metrics listener (metrics listen on): opened once, at the start,
 * as the control socket is; pfe accepts on it.
 */
static int
parent_metrics_listen(struct sockaddr_storage *ss)
{
	char	 buf[INET6_ADDRSTRLEN];
	int	 s, on = 1;

	if ((s = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, IPPROTO_TCP)) == -1 ||
	    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) == -1 ||
	    sock_v6only(s, ss->ss_family) == -1 ||
	    bind(s, (struct sockaddr *)ss, ss_len(ss)) == -1 ||
	    listen(s, 16) == -1) {
		log_warn("metrics: cannot listen on %s port %d",
		    print_host(ss, buf, sizeof(buf)), ss_port(ss));
		if (s != -1)
			close(s);
		return (-1);
	}
	return (s);
}

static void
parent_send_procinfo(struct relayd *env)
{
	struct privsep		*ps = env->sc_ps;
	struct ctl_procinfo	 pi;
	unsigned int		 id, i;

	for (id = PROC_PARENT; id < PROC_MAX; id++)
		for (i = 0; i < (id == PROC_PARENT ? 1 :
		    ps->ps_instances[id]); i++) {
			memset(&pi, 0, sizeof(pi));
			pi.pi_id = id;
			pi.pi_instance = i;
			pi.pi_pid = id == PROC_PARENT ? getpid() :
			    ps->ps_pids[id][i];
			(void)strlcpy(pi.pi_title, proc_name(id),
			    sizeof(pi.pi_title));
			proc_compose(ps, PROC_PFE, IMSG_CTL_PROCINFO, &pi,
			    sizeof(pi));
		}
}

/*
 * Open every relay's listening socket, taking over those of the running
 * configuration (old) at the same address; on failure, none stays open.
 */
static int
parent_open_sockets(struct relayd *env, struct relayd *old)
{
	struct relay	*rlay;

	TAILQ_FOREACH(rlay, env->sc_relays, rl_entry) {
		/* relayd -d: each protocol on stderr, as OpenBSD's */
		if (env->sc_ps->ps_debug)
			relay_protodebug(rlay, rlay->rl_proto != NULL ?
			    rlay->rl_proto : &env->sc_proto_default);
		if (relay_privinit(old, rlay,
		    env->sc_conf.prefork_relay) == -1) {
			/* the unix sockets it made go again */
			relay_unix_unlink(env, old);
			TAILQ_FOREACH(rlay, env->sc_relays, rl_entry)
				relay_listeners_close(rlay);
			return (-1);
		}
	}
	TAILQ_FOREACH(rlay, env->sc_relays, rl_entry)
		relay_transparent_check(rlay);
	return (0);
}

/* Send the whole configuration; children answer IMSG_CFG_DONE. */
static void
parent_push(struct relayd *env)
{
	struct privsep	*ps = env->sc_ps;
	struct table	*tb;
	struct protocol	*p;
	struct relay	*rlay;
	struct rdr	*rdr;
	struct router	*rt;
	unsigned int	 id;

	config_setglobal(env);
	TAILQ_FOREACH(tb, env->sc_tables, entry)
		config_settable(env, tb);
	TAILQ_FOREACH(p, env->sc_protos, entry)
		config_setproto(env, p);
	TAILQ_FOREACH(rlay, env->sc_relays, rl_entry)
		config_setrelay(env, rlay);
	TAILQ_FOREACH(rdr, &env->sc_rdrs, entry)
		config_setrdr(env, rdr);
	TAILQ_FOREACH(rt, &env->sc_routers, entry)
		config_setrouter(env, rt);

	env->sc_reload = 0;
	for (id = PROC_PFE; id < PROC_MAX; id++)
		env->sc_reload += ps->ps_instances[id];
	config_setdone(env);
}

static void
parent_configure_done(struct relayd *env)
{
	struct privsep	*ps = env->sc_ps;
	unsigned int	 id;

	if (env->sc_reload == 0) {
		log_warnx("%s: configuration already finished", __func__);
		return;
	}
	if (--env->sc_reload > 0)
		return;
	for (id = PROC_PFE; id < PROC_MAX; id++)
		proc_compose(ps, id, IMSG_CTL_START, NULL, 0);
	parent_notify_ready(env, NULL);
	/* the relays' new TLS configurations get the shared ticket keys */
	if (parent_nkeys == 0)
		parent_tls_ticket_rekey(-1, 0, env);
	else
		parent_tls_ticket_send(env, 0);
	if (reload_waiting) {
		proc_compose_imsg(ps, PROC_PFE, 0, IMSG_CTL_OK,
		    reload_peerid, -1, NULL, 0);
		reload_waiting = 0;
	}
}

/*
 * Session tickets: one key for every relay process, so that a ticket
 * one of them issued resumes at another; a new one every
 * TLS_TICKET_REKEY seconds.  The parent keeps the last TLS_TICKET_KEYS
 * (a ticket lifetime's worth, as many as libtls holds) and gives them
 * all to the relays' new configurations after a reload, so that
 * tickets issued before it resume after it.
 */
static void
parent_tls_ticket_rekey(int fd, short event, void *arg)
{
	struct relayd		*env = arg;
	struct timeval		 tv = { TLS_TICKET_REKEY, 0 };

	(void)fd;
	(void)event;
	if (parent_nkeys == TLS_TICKET_KEYS) {
		explicit_bzero(&parent_keys[0], sizeof(parent_keys[0]));
		memmove(&parent_keys[0], &parent_keys[1],
		    sizeof(parent_keys[0]) * (TLS_TICKET_KEYS - 1));
		parent_nkeys--;
	}
	parent_keys[parent_nkeys].keyrev = arc4random();
	arc4random_buf(parent_keys[parent_nkeys].key,
	    sizeof(parent_keys[parent_nkeys].key));
	parent_tls_ticket_send(env, parent_nkeys++);
	if (!evtimer_initialized(&parent_rekey_ev))
		evtimer_set(&parent_rekey_ev, parent_tls_ticket_rekey, env);
	evtimer_add(&parent_rekey_ev, &tv);
}

/* The kept ticket keys from the from-th on, oldest first, to the relays. */
static void
parent_tls_ticket_send(struct relayd *env, int from)
{
	int	 i;

	for (i = from; i < parent_nkeys; i++)
		proc_compose(env->sc_ps, PROC_RELAY, IMSG_TLSTICKET_REKEY,
		    &parent_keys[i], sizeof(parent_keys[i]));
}

/*
 * The service manager hears that the configuration runs (at the start,
 * after a reload, or after a refused one: the old one still runs).
 */
static void
parent_notify_ready(struct relayd *env, const char *why)
{
	struct relay	*rlay;
	struct rdr	*rdr;
	struct router	*rt;
	int		 nrelays = 0, nrdrs = 0, nrouters = 0;

	TAILQ_FOREACH(rlay, env->sc_relays, rl_entry)
		nrelays++;
	TAILQ_FOREACH(rdr, &env->sc_rdrs, entry)
		nrdrs++;
	TAILQ_FOREACH(rt, &env->sc_routers, entry)
		nrouters++;
	(void)compat_sdnotify("READY=1\nSTATUS=%s%s%d relays, %d "
	    "redirections, %d routers; relayctl status for sessions",
	    why != NULL ? why : "", why != NULL ? "; running: " : "",
	    nrelays, nrdrs, nrouters);
}

/* A reload begins (systemd 253 wants the time it began). */
static void
parent_notify_reloading(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	(void)compat_sdnotify("RELOADING=1\nMONOTONIC_USEC=%llu\n"
	    "STATUS=reloading", (unsigned long long)ts.tv_sec * 1000000 +
	    (unsigned long long)ts.tv_nsec / 1000);
}

/*
 * Two-phase reload: the new file is parsed, checked and its sockets
 * opened before anything running is touched; a file that fails any of
 * that is rejected whole.  Returns 0, or the answer for relayctl:
 * IMSG_CTL_FAIL (rejected) or IMSG_CTL_RELOAD_BUSY.
 */
static int
parent_reload(struct relayd *env, const char *filename, uint32_t peerid)
{
	struct privsep	*ps = env->sc_ps;
	struct relayd	*new;

	if (env->sc_reload) {
		log_warnx("reload of %s refused: a reload is still in "
		    "progress", filename);
		return (IMSG_CTL_RELOAD_BUSY);
	}
	parent_notify_reloading();
	if ((new = calloc(1, sizeof(*new))) == NULL ||
	    config_init(new) == -1) {
		log_warn("%s", __func__);
		free(new);
		parent_notify_ready(env, "reload refused");
		return (IMSG_CTL_FAIL);
	}
	new->sc_conffile = filename;
	new->sc_ps = ps;
	new->sc_conf.opts = env->sc_conf.opts & RELAYD_OPT_VERBOSE;
	if (parse_config(filename, new) == -1 ||
	    parent_open_sockets(new, env) == -1) {
		log_warnx("configuration %s rejected, the running "
		    "configuration stays", filename);
		config_free(new);
		parent_notify_ready(env, "reload refused");
		return (IMSG_CTL_FAIL);
	}
	if (ps->ps_debug)
		new->sc_conf.opts |= RELAYD_OPT_LOGUPDATE;
	if (new->sc_conf.prefork_relay != env->sc_conf.prefork_relay) {
		log_warnx("prefork change ignored: it takes effect at the "
		    "next start");
		new->sc_conf.prefork_relay = env->sc_conf.prefork_relay;
	}
	if (strcmp(new->sc_conf.socket, env->sc_conf.socket) != 0 ||
	    strcmp(new->sc_conf.rsocket, env->sc_conf.rsocket) != 0) {
		log_warnx("socket change ignored: it takes effect at the "
		    "next start");
		(void)strlcpy(new->sc_conf.socket, env->sc_conf.socket,
		    sizeof(new->sc_conf.socket));
		(void)strlcpy(new->sc_conf.rsocket, env->sc_conf.rsocket,
		    sizeof(new->sc_conf.rsocket));
	}
	if (memcmp(&new->sc_conf.metrics_ss, &env->sc_conf.metrics_ss,
	    sizeof(new->sc_conf.metrics_ss)) != 0) {
		log_warnx("metrics listen on change ignored: it takes "
		    "effect at the next start");
		new->sc_conf.metrics_ss = env->sc_conf.metrics_ss;
	}

	/* the new redirections' table, in place of the old in one go */
	if (kernel_configure(new) == -1) {
		log_warnx("configuration %s rejected, the running "
		    "configuration stays", filename);
		relay_unix_unlink(new, env);
		config_free(new);
		parent_notify_ready(env, "reload refused");
		return (IMSG_CTL_FAIL);
	}

	log_info("reloading configuration from %s", filename);
	relay_unix_unlink(env, new);
	kernel_reload(env, new);
	kernel_limits(new);
	config_replace(env, new);

	config_setreset(env);
	reload_peerid = peerid;
	reload_waiting = peerid != 0;
	parent_push(env);
	return (0);
}

/*
 * Has each child process said it is alive (a heartbeat from its event
 * loop every RELAY_HEARTBEAT_MS, proc_run()) in the last
 * RELAY_HEARTBEAT_DEAD_MS?  One that has not, stopped or stuck, demotes
 * every demote group until it answers again: a relay process serves no
 * client, hce sees no backend fail, pfe moves no host state to the
 * relays and answers no relayctl, ca signs no handshake.  pfe is told
 * of each, for relayctl status and the metrics.  The service manager's
 * watchdog is fed only while all answer.  The timer is set for the
 * moment the first child that answers would be late, not in turns, so
 * that an idle relayd wakes seldom; a silent one that answers again is
 * seen at its heartbeat (parent_dispatch_child()).
 */
static void
parent_liveness(int fd, short event, void *arg)
{
	static unsigned int	 last;
	static struct timespec	 fed;
	struct relayd		*env = arg;
	struct privsep		*ps = env->sc_ps;
	struct timeval		 tv;
	struct timespec		 now;
	unsigned int		 i, stalled = 0;
	long long		 ms, next = RELAY_HEARTBEAT_DEAD_MS;
	int			 id, late;

	(void)fd;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (event == 0) {
		/* the start: each has its time to say so */
		for (id = PROC_PARENT + 1; id < PROC_MAX; id++)
			for (i = 0; i < PROC_MAX_INSTANCES; i++)
				proc_alive[id][i] = now;
		evtimer_set(&parent_liveness_ev, parent_liveness, env);
	}
	for (id = PROC_PARENT + 1; id < PROC_MAX; id++) {
		for (i = 0; i < ps->ps_instances[id]; i++) {
			ms = timespec_ms(&now, &proc_alive[id][i]);
			late = ms >= RELAY_HEARTBEAT_DEAD_MS;
			if (late != proc_stalled[id][i])
				parent_silent(ps, id, i, late);
			proc_stalled[id][i] = late;
			stalled += late;
			if (!late && RELAY_HEARTBEAT_DEAD_MS - ms < next)
				next = RELAY_HEARTBEAT_DEAD_MS - ms;
		}
	}
	if (stalled != last) {
		demote_stalled(env, stalled > 0);
		announce_stalled(env, stalled > 0);
		last = stalled;
	}
	/* the service manager's watchdog: once a second is plenty */
	if (stalled == 0 && compat_sdnotify_watchdog() &&
	    timespec_ms(&now, &fed) >= 1000) {
		(void)compat_sdnotify("WATCHDOG=1");
		fed = now;
	}
	tv.tv_sec = next / 1000;
	tv.tv_usec = (next % 1000) * 1000;
	evtimer_add(&parent_liveness_ev, &tv);
}

/* Process id, instance i, stops answering (late) or answers again. */
static void
parent_silent(struct privsep *ps, int id, unsigned int i, int late)
{
	struct ctl_procinfo	 pi;

	if (late)
		log_warnx("%s process %u (pid %d) does not answer: "
		    "demoting", proc_name(id), i, (int)ps->ps_pids[id][i]);
	else
		log_warnx("%s process %u (pid %d) answers again",
		    proc_name(id), i, (int)ps->ps_pids[id][i]);
	memset(&pi, 0, sizeof(pi));
	pi.pi_id = id;
	pi.pi_instance = i;
	pi.pi_pid = ps->ps_pids[id][i];
	pi.pi_silent = late;
	proc_compose(ps, PROC_PFE, IMSG_CTL_STALLED, &pi, sizeof(pi));
}

/* The control sockets go: the files, the listeners are pfe's. */
static void
parent_control_cleanup(struct relayd *env)
{
	control_cleanup(env->sc_conf.socket);
	if (env->sc_conf.rsocket[0] != '\0')
		control_cleanup(env->sc_conf.rsocket);
}

static __dead void
parent_shutdown(struct relayd *env)
{
	struct privsep	*ps = env->sc_ps;
	int		 lost;

	(void)compat_sdnotify("STOPPING=1\nSTATUS=stopping");
	announce_shutdown(env);
	demote_shutdown(env);
	lost = proc_kill(ps);
	kernel_cleanup(env);
	parent_control_cleanup(env);
	relay_unix_unlink(env, NULL);
	log_info("parent terminating, pid %d", (int)getpid());
	exit(lost ? 1 : 0);
}

static void
parent_sig_handler(int sig, short event, void *arg)
{
	struct privsep	*ps = arg;
	struct relayd	*env = ps->ps_env;

	(void)event;
	switch (sig) {
	case SIGTERM:
	case SIGINT:
		parent_shutdown(env);
		break;
	case SIGHUP:
		log_info("%s: reload requested with SIGHUP", __func__);
		(void)parent_reload(env, env->sc_conffile, 0);
		break;
	default:
		fatalx("unexpected signal");
	}
}

static int
parent_dispatch_pfe(int fd, struct privsep_proc *p, struct imsg *imsg)
{
	struct privsep	*ps = p->p_ps;
	struct relayd	*env = ps->ps_env;
	struct ctl_kernsync ks;
	struct ctl_demote cd;
	struct ctl_announce ca;
	struct ctl_overload co;
	char		 path[PATH_MAX];
	const char	*file;
	size_t		 len;
	int		 type;

	(void)fd;
	switch (imsg->hdr.type) {
	case IMSG_CTL_RELOAD:
		len = IMSG_DATA_SIZE(imsg);
		if (len >= sizeof(path))
			fatalx("%s: reload path too long", __func__);
		if (len > 0) {
			memcpy(path, imsg->data, len);
			path[len] = '\0';
		}
		file = (len > 0 && path[0] != '\0') ? path :
		    env->sc_conffile;
		/* parsing is done before parent_reload() returns */
		if ((type = parent_reload(env, file, imsg->hdr.peerid)) != 0)
			proc_compose_imsg(ps, PROC_PFE, 0, type,
			    imsg->hdr.peerid, -1, NULL, 0);
		break;
	case IMSG_CTL_SHUTDOWN:
		log_info("shutdown requested by relayctl");
		parent_shutdown(env);
		break;
	case IMSG_AGENTX_SOCK:
		/* pfe asks for the master agent's socket */
		proc_compose_imsg(ps, PROC_PFE, 0, IMSG_AGENTX_SOCK, 0,
		    (env->sc_conf.flags & F_AGENTX) ? agentx_connect(env) : -1,
		    NULL, 0);
		break;
	case IMSG_DEMOTE:
		IMSG_EXACT_SIZE_CHECK(imsg, &cd);
		memcpy(&cd, imsg->data, sizeof(cd));
		demote_set(env, &cd);
		break;
	case IMSG_ANNOUNCE:
		IMSG_EXACT_SIZE_CHECK(imsg, &ca);
		memcpy(&ca, imsg->data, sizeof(ca));
		announce_set(env, &ca);
		break;
	case IMSG_RDR_SYNC:
	case IMSG_ROUTER_SYNC:
		IMSG_EXACT_SIZE_CHECK(imsg, &ks);
		memcpy(&ks, imsg->data, sizeof(ks));
		kernel_sync(env, imsg->hdr.type, &ks);
		break;
	case IMSG_CTL_OVERLOAD:
		kernel_limits_show(env, imsg->hdr.peerid);
		break;
	case IMSG_CTL_OVERLOAD_DEL:
		IMSG_EXACT_SIZE_CHECK(imsg, &co);
		memcpy(&co, imsg->data, sizeof(co));
		co.table[sizeof(co.table) - 1] = '\0';
		kernel_limits_delete(env, &co);
		break;
	default:
		return (parent_dispatch_child(fd, p, imsg));
	}
	return (0);
}

/* Configuration acknowledgements, and hce's check scripts. */
static int
parent_dispatch_child(int fd, struct privsep_proc *p, struct imsg *imsg)
{
	struct ctl_script	 scr;
	unsigned int		 n;

	(void)fd;
	switch (imsg->hdr.type) {
	case IMSG_CFG_DONE:
		parent_configure_done(p->p_ps->ps_env);
		break;
	case IMSG_BINDANY:
		if (p->p_id != PROC_RELAY)
			return (-1);
		parent_bindany(p->p_ps, imsg);
		break;
	case IMSG_UNIXCONNECT:
		if (p->p_id != PROC_RELAY && p->p_id != PROC_HCE)
			return (-1);
		parent_unixconnect(p->p_ps, imsg, p->p_id);
		break;
	case IMSG_HEARTBEAT:
		IMSG_EXACT_SIZE_CHECK(imsg, &n);
		memcpy(&n, imsg->data, sizeof(n));
		if (n >= PROC_MAX_INSTANCES)
			break;
		clock_gettime(CLOCK_MONOTONIC, &proc_alive[p->p_id][n]);
		/* it answers again: said now, not at the next deadline */
		if (proc_stalled[p->p_id][n])
			parent_liveness(-1, EV_TIMEOUT, p->p_ps->ps_env);
		break;
	case IMSG_SCRIPT:
		if (p->p_id != PROC_HCE)
			return (-1);
		IMSG_EXACT_SIZE_CHECK(imsg, &scr);
		memcpy(&scr, imsg->data, sizeof(scr));
		scr.retval = script_exec(p->p_ps->ps_env, &scr);
		proc_compose(p->p_ps, PROC_HCE, IMSG_SCRIPT, &scr,
		    sizeof(scr));
		break;
	default:
		return (-1);
	}
	return (0);
}
