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
 * hce: the host check engine.  Every global interval it starts a round:
 * checks still running from the last one end as "interval timeout", and
 * every enabled table whose own interval is due checks its hosts.  A
 * result moves the host's state (retry counting as relayd does), is
 * logged, and goes to pfe, which tells the relays.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/time.h>

#include <stdlib.h>
#include <string.h>

#include "relayd.h"

static void	 hce_init(struct privsep *, struct privsep_proc *, void *);
static int	 hce_dispatch_parent(int, struct privsep_proc *,
		    struct imsg *);
static int	 hce_dispatch_pfe(int, struct privsep_proc *, struct imsg *);
static void	 hce_launch_checks(int, short, void *);
static void	 hce_start(void);
static void	 hce_stop(void);
static void	 hce_abort(struct host *);
static void	 hce_host_reset(struct host *, int);

static struct relayd	*env;
static struct event	 hce_ev;
static int		 hce_running;

static struct privsep_proc procs[] = {
	{ "parent",	PROC_PARENT,	hce_dispatch_parent,	NULL, NULL },
	{ "pfe",	PROC_PFE,	hce_dispatch_pfe,	NULL, NULL }
};

void
hce(struct privsep *ps, struct privsep_proc *p)
{
	env = ps->ps_env;
	/* raw sockets for check icmp, and TLS, before the chroot */
	check_icmp_init();
	check_tcp_init(ps);
	proc_run(ps, p, procs, nitems(procs), hce_init, NULL);
}

static void
hce_init(struct privsep *ps, struct privsep_proc *p, void *arg)
{
	(void)ps;
	(void)p;
	(void)arg;
	evtimer_set(&hce_ev, hce_launch_checks, NULL);
	/* check tls and https make libtls contexts */
	if (compat_tlsbuf_init() == -1)
		log_warnx("%s: libssl's SSL_CTX_ctrl not found", __func__);
	if (compat_sandbox("hce") == -1)
		fatal("%s: sandbox", __func__);
}

/* The table a host belongs to. */
struct table *
hce_table(struct host *h)
{
	return (table_find(env, h->conf.tableid));
}

static void
hce_start(void)
{
	struct table	*tb;
	struct host	*h;

	TAILQ_FOREACH(tb, env->sc_tables, entry) {
		tb->skipped = 0;
		TAILQ_FOREACH(h, &tb->hosts, entry)
			h->retry_cnt = h->conf.retry;
	}
	hce_running = 1;
	/* the first round at once */
	hce_launch_checks(-1, EV_TIMEOUT, NULL);
}

static void
hce_stop(void)
{
	struct host	*h;

	hce_running = 0;
	evtimer_del(&hce_ev);
	check_icmp_abort();
	TAILQ_FOREACH(h, &env->sc_hosts, globalentry)
		hce_abort(h);
}

/* End a check under way without a result. */
static void
hce_abort(struct host *h)
{
	if (h->cte != NULL)
		check_tcp_abort(h);
	h->flags &= ~(F_CHECK_SENT | F_CHECK_DONE);
}

static void
hce_launch_checks(int fd, short event, void *arg)
{
	struct table	*tb;
	struct host	*h;
	struct timeval	 tv;
	int		 icmp = 0, skip;

	(void)fd;
	(void)event;
	(void)arg;
	if (!hce_running)
		return;

	/* what did not finish in a whole interval */
	check_icmp_abort();
	TAILQ_FOREACH(h, &env->sc_hosts, globalentry) {
		if ((h->flags & F_CHECK_SENT) == 0 ||
		    (h->flags & F_CHECK_DONE))
			continue;
		hce_abort(h);
		hce_notify_done(h, HCE_INTERVAL_TIMEOUT);
	}

	TAILQ_FOREACH(tb, env->sc_tables, entry) {
		if (tb->conf.flags & F_DISABLE ||
		    tb->conf.check == CHECK_NOCHECK)
			continue;
		/* a table interval is a multiple of the global one */
		skip = tb->conf.skip_cnt / env->sc_conf.interval.tv_sec;
		if (skip > 1) {
			if (tb->skipped++ % skip != 0)
				continue;
		}
		TAILQ_FOREACH(h, &tb->hosts, entry) {
			if (h->flags & F_DISABLE || h->conf.parentid)
				continue;
			h->flags |= F_CHECK_SENT;
			h->flags &= ~F_CHECK_DONE;
			h->code = 0;
			switch (tb->conf.check) {
			case CHECK_ICMP:
				icmp = 1;
				break;
			case CHECK_SCRIPT:
				check_script(env, h, tb);
				break;
			default:
				check_tcp(h, tb);
				break;
			}
		}
	}
	if (icmp)
		check_icmp(env, &env->sc_conf.timeout);

	tv = env->sc_conf.interval;
	evtimer_add(&hce_ev, &tv);
}

/* relayctl poll: a round now, and every table due. */
static void
hce_poll(void)
{
	struct table	*tb;

	if (!hce_running)
		return;
	TAILQ_FOREACH(tb, env->sc_tables, entry)
		tb->skipped = 0;
	evtimer_del(&hce_ev);
	hce_launch_checks(-1, EV_TIMEOUT, NULL);
}

static void
hce_host_reset(struct host *h, int disable)
{
	hce_abort(h);
	if (disable)
		h->flags |= F_DISABLE;
	else
		h->flags &= ~F_DISABLE;
	h->up = HOST_UNKNOWN;
	h->last_up = HOST_UNKNOWN;
	h->check_cnt = 0;
	h->up_cnt = 0;
	h->retry_cnt = h->conf.retry;
	h->he = HCE_NONE;
}

static int
hce_dispatch_pfe(int fd, struct privsep_proc *p, struct imsg *imsg)
{
	struct table	*tb;
	struct host	*h;

	(void)fd;
	(void)p;
	switch (imsg->hdr.type) {
	case IMSG_CTL_POLL:
		hce_poll();
		break;
	case IMSG_CTL_HOST_ENABLE:
	case IMSG_CTL_HOST_DISABLE:
		if ((h = host_enable_imsg(env, imsg)) != NULL)
			hce_host_reset(h, (h->flags & F_DISABLE) != 0);
		break;
	case IMSG_CTL_TABLE_ENABLE:
	case IMSG_CTL_TABLE_DISABLE:
		if ((tb = table_enable_imsg(env, imsg)) == NULL)
			break;
		tb->skipped = 0;
		TAILQ_FOREACH(h, &tb->hosts, entry)
			hce_host_reset(h, (h->flags & F_DISABLE) != 0);
		break;
	default:
		return (-1);
	}
	return (0);
}

static int
hce_dispatch_parent(int fd, struct privsep_proc *p, struct imsg *imsg)
{
	struct ctl_script	 scr;

	(void)fd;
	(void)p;
	switch (imsg->hdr.type) {
	case IMSG_CTL_START:
		hce_start();
		break;
	case IMSG_CTL_RESET:
		/* no check may outlive the hosts it points to */
		hce_stop();
		return (config_dispatch(env, imsg));
	case IMSG_SCRIPT:
		IMSG_EXACT_SIZE_CHECK(imsg, &scr);
		memcpy(&scr, imsg->data, sizeof(scr));
		script_done(env, &scr);
		break;
	case IMSG_UNIXCONNECT:
		check_tcp_unix(imsg);
		break;
	default:
		return (config_dispatch(env, imsg));
	}
	return (0);
}

static int
hce_success(enum host_error he)
{
	switch (he) {
	case HCE_ICMP_OK:
	case HCE_TCP_CONNECT_OK:
	case HCE_SCRIPT_OK:
	case HCE_TLS_CONNECT_OK:
	case HCE_SEND_EXPECT_OK:
	case HCE_HTTP_CODE_OK:
	case HCE_HTTP_DIGEST_OK:
		return (1);
	default:
		return (0);
	}
}

/*
 * A check ended.  The result sets the state (a script that could not
 * run leaves it unknown: script_done() gives the state itself); retry N
 * keeps the old state for N failures in a row; any success refills the
 * budget.
 */
void
hce_notify_done(struct host *h, enum host_error he)
{
	hce_notify_state(h, he, hce_success(he) ? HOST_UP : HOST_DOWN);
}

void
hce_notify_state(struct host *h, enum host_error he, int up)
{
	struct table		*tb = hce_table(h);
	struct ctl_hoststatus	 st;
	struct host		*ch;
	struct timeval		 now, d;
	char			 code[16];
	unsigned long		 ms;
	int			 opt;
	static int		 depth;

	h->cte = NULL;
	if (h->flags & F_DISABLE) {
		if (env->sc_conf.opts & RELAYD_OPT_LOGUPDATE)
			log_info("host %s, check %s%s (ignoring result, "
			    "host disabled)", h->conf.name,
			    table_check(tb != NULL ? tb->conf.check : 0),
			    tb != NULL && (tb->conf.flags & F_TLS) ?
			    " use tls" : "");
		h->flags &= ~(F_CHECK_SENT | F_CHECK_DONE);
		return;
	}

	h->up = up;
	if (h->up == HOST_DOWN && h->retry_cnt > 0) {
		log_debug("%s: host %s retry %d", __func__, h->conf.name,
		    h->retry_cnt);
		h->up = h->last_up;
		h->retry_cnt--;
	} else
		h->retry_cnt = h->conf.retry;
	if (h->up != HOST_UNKNOWN) {
		h->check_cnt++;
		if (HOST_ISUP(h->up))
			h->up_cnt++;
	}
	h->he = he;
	h->flags |= F_CHECK_SENT | F_CHECK_DONE;

	memset(&st, 0, sizeof(st));
	st.id = h->conf.id;
	st.up = h->up;
	st.retry_cnt = h->retry_cnt;
	st.check_cnt = h->check_cnt;
	st.up_cnt = h->up_cnt;
	st.he = he;
	st.code = h->code;
	getmonotime(&now);
	if (timerisset(&h->check_start) &&
	    timercmp(&now, &h->check_start, >=)) {
		timersub(&now, &h->check_start, &d);
		st.check_us = (uint64_t)d.tv_sec * 1000000 + d.tv_usec;
	}
	ms = st.check_us / 1000;
	proc_compose(env->sc_ps, PROC_PFE, IMSG_HOST_STATUS, &st, sizeof(st));

	opt = h->up != h->last_up ? RELAYD_OPT_LOGUPDATE :
	    RELAYD_OPT_LOGHOSTCHECK;
	if (env->sc_conf.opts & opt) {
		if (h->code > 0)
			(void)snprintf(code, sizeof(code), ",%d", h->code);
		else
			code[0] = '\0';
		log_info("host %s, check %s%s (%lums,%s%s), state %s -> %s, "
		    "availability %s", h->conf.name,
		    table_check(tb != NULL ? tb->conf.check : 0),
		    tb != NULL && (tb->conf.flags & F_TLS) ? " use tls" : "",
		    ms, host_error(he), code, host_status(h->last_up),
		    host_status(h->up),
		    print_availability(h->check_cnt, h->up_cnt));
	}
	h->last_up = h->up;

	/* hosts with "parent" copy this one's result */
	if (depth > 4)
		return;
	depth++;
	TAILQ_FOREACH(ch, &env->sc_hosts, globalentry) {
		if (ch->conf.parentid != h->conf.id || ch == h ||
		    (ch->flags & F_DISABLE))
			continue;
		ch->check_start = h->check_start;
		ch->code = h->code;
		hce_notify_state(ch, he, h->up);
	}
	depth--;
}
