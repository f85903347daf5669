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
 * pfe: the state engine.  It keeps hosts, tables, redirections, routers
 * and relay statistics, and answers relayctl on the control socket.  On
 * OpenBSD it also writes pf; here it tells the parent which hosts each
 * redirection and router uses, and the parent writes the kernel
 * (kernel.c says why).
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "relayd.h"

static void	 pfe_init(struct privsep *, struct privsep_proc *, void *);
static int	 pfe_dispatch_parent(int, struct privsep_proc *,
		    struct imsg *);
static int	 pfe_dispatch_hce(int, struct privsep_proc *, struct imsg *);
static int	 pfe_dispatch_relay(int, struct privsep_proc *,
		    struct imsg *);

static void	 status_info(struct ctl_status *);
static void	 pfe_sync(int);
static void	 pfe_announce(int);
static void	 show_announce(struct ctl_conn *);
static void	 pfe_silent(struct ctl_procinfo *);
static int	 pfe_any_silent(void);
static void	 pfe_rdr_rate(struct rdr *, struct ctl_rdrstats *);
static void	 pfe_metrics_listen(int);
static void	 pfe_metrics_accept(int, short, void *);
static void	 pfe_metrics_read(struct bufferevent *, void *);
static void	 pfe_metrics_written(struct bufferevent *, void *);
static void	 pfe_metrics_error(struct bufferevent *, short, void *);
static void	 pfe_metrics_answer(struct bufferevent *, int, const char *,
		    const char *, size_t);
static void	 pfe_metrics_close(struct bufferevent *);

#define METRICS_MAXCONNS	4	/* scrapes at once */
#define METRICS_TIMEOUT		5	/* seconds for a request and answer */
#define METRICS_MAXHEAD		4096	/* a request head's size */

static struct relayd		*env;
static struct event		 metrics_ev;
static unsigned int		 metrics_nconns;

static struct privsep_proc procs[] = {
	{ "parent",	PROC_PARENT,	pfe_dispatch_parent,	NULL, NULL },
	{ "relay",	PROC_RELAY,	pfe_dispatch_relay,	NULL, NULL },
	{ "hce",	PROC_HCE,	pfe_dispatch_hce,	NULL, NULL }
};

void
pfe(struct privsep *ps, struct privsep_proc *p)
{
	env = ps->ps_env;
	proc_run(ps, p, procs, nitems(procs), pfe_init, NULL);
}

static void
pfe_init(struct privsep *ps, struct privsep_proc *p, void *arg)
{
	(void)ps;
	(void)p;
	(void)arg;
	if (compat_sandbox("pfe") == -1)
		fatal("%s: sandbox", __func__);
}

static int
pfe_dispatch_parent(int fd, struct privsep_proc *p, struct imsg *imsg)
{
	struct ctl_procinfo	 pi;
	struct ctl_rdrstats	 rst;
	struct ctl_limstats	 lst;
	struct rdr		*rdr;
	struct relay		*rlay;
	struct ctl_sock		 cs;

	(void)fd;
	(void)p;
	switch (imsg->hdr.type) {
	case IMSG_CTL_SOCKFD:
		IMSG_EXACT_SIZE_CHECK(imsg, &cs);
		if (imsg->fd == -1)
			fatalx("%s: no control socket", __func__);
		memcpy(&cs, imsg->data, sizeof(cs));
		control_listen(env, imsg->fd, &cs);
		break;
	case IMSG_CTL_METRICSFD:
		if (imsg->fd == -1)
			fatalx("%s: no metrics socket", __func__);
		pfe_metrics_listen(imsg->fd);
		break;
	case IMSG_CTL_PROCINFO:
		IMSG_EXACT_SIZE_CHECK(imsg, &pi);
		memcpy(&pi, imsg->data, sizeof(pi));
		pi.pi_title[sizeof(pi.pi_title) - 1] = '\0';
		if (env->sc_nprocinfo >= nitems(env->sc_procinfo))
			fatalx("%s: too many processes", __func__);
		if (pi.pi_id == PROC_PARENT) {
			env->sc_parentpid = pi.pi_pid;
			env->sc_started = getmonosec();
			env->sc_started_wall = time(NULL);
		}
		env->sc_procinfo[env->sc_nprocinfo++] = pi;
		break;
	case IMSG_CTL_STALLED:
		IMSG_EXACT_SIZE_CHECK(imsg, &pi);
		memcpy(&pi, imsg->data, sizeof(pi));
		pfe_silent(&pi);
		break;
	case IMSG_CTL_START:
		/* a new configuration: the kernel gets its state */
		pfe_sync(1);
		agentx_init(env);
		break;
	case IMSG_AGENTX_SOCK:
		agentx_getsock(imsg->fd);
		break;
	case IMSG_CTL_OVERLOAD:
	case IMSG_CTL_END:
		pfe_ctl_answer(imsg);
		break;
	case IMSG_LIMIT_STATS:
		IMSG_EXACT_SIZE_CHECK(imsg, &lst);
		memcpy(&lst, imsg->data, sizeof(lst));
		if ((rlay = relay_find(env, lst.id)) != NULL)
			memcpy(rlay->rl_limrefused, lst.refused,
			    sizeof(rlay->rl_limrefused));
		break;
	case IMSG_RDR_STATS:
		IMSG_EXACT_SIZE_CHECK(imsg, &rst);
		memcpy(&rst, imsg->data, sizeof(rst));
		if ((rdr = rdr_find(env, rst.id)) != NULL)
			pfe_rdr_rate(rdr, &rst);
		break;
	case IMSG_CTL_OK:
	case IMSG_CTL_FAIL:
	case IMSG_CTL_RELOAD_BUSY:
		/* the end of a reload asked by relayctl */
		control_reply(imsg->hdr.peerid, imsg->hdr.type);
		break;
	default:
		return (config_dispatch(env, imsg));
	}
	return (0);
}

static int
pfe_dispatch_hce(int fd, struct privsep_proc *p, struct imsg *imsg)
{
	struct ctl_hoststatus	 st;
	struct host		*h;
	struct table		*tb;
	int			 changed;

	(void)fd;
	switch (imsg->hdr.type) {
	case IMSG_HOST_STATUS:
		IMSG_EXACT_SIZE_CHECK(imsg, &st);
		memcpy(&st, imsg->data, sizeof(st));
		/* a host of an older configuration, or just disabled */
		if ((h = host_find(env, st.id)) == NULL ||
		    (h->flags & F_DISABLE) ||
		    (tb = table_find(env, h->conf.tableid)) == NULL)
			break;
		h->retry_cnt = st.retry_cnt;
		h->check_cnt = st.check_cnt;
		h->up_cnt = st.up_cnt;
		h->he = st.he;
		h->code = st.code;
		h->check_us = st.check_us;
		changed = h->up != st.up;
		if (HOST_ISUP(st.up) && !HOST_ISUP(h->up))
			tb->up++;
		else if (!HOST_ISUP(st.up) && HOST_ISUP(h->up))
			tb->up--;
		h->last_up = h->up;
		h->up = st.up;
		if (changed) {
			/* the relays pick hosts by it */
			proc_compose(p->p_ps, PROC_RELAY, IMSG_HOST_STATUS,
			    &st, sizeof(st));
			control_notify(IMSG_HOST_STATUS, &st, sizeof(st));
			pfe_sync(0);
		}
		break;
	default:
		return (-1);
	}
	return (0);
}

static int
ctl_id_match(struct ctl_id *id, objid_t oid, const char *name)
{
	const char	*colon;
	size_t		 len;

	if (id->id != EMPTY_ID)
		return (id->id == oid);
	if (strcmp(id->name, name) == 0)
		return (1);
	/* a table may be named without the port of its use */
	if ((colon = strrchr(name, ':')) != NULL) {
		len = colon - name;
		return (strlen(id->name) == len &&
		    strncmp(id->name, name, len) == 0);
	}
	return (0);
}

static void
pfe_host_reset(struct host *h, struct table *tb)
{
	if (HOST_ISUP(h->up) && tb != NULL && tb->up > 0)
		tb->up--;
	h->up = HOST_UNKNOWN;
	h->last_up = HOST_UNKNOWN;
	h->check_cnt = 0;
	h->up_cnt = 0;
	h->retry_cnt = 0;
	h->he = HCE_NONE;
	h->code = 0;
}

/*
 * relayctl host|table enable|disable: every host of that name (or the
 * one of that id), or every use of that table; hce and the relays follow.
 */
int
pfe_enable(uint32_t type, struct ctl_id *id)
{
	struct privsep	*ps = env->sc_ps;
	struct table	*tb;
	struct host	*h, *ch;
	struct ctl_id	 note;
	int		 found = 0, disable;

	id->name[sizeof(id->name) - 1] = '\0';
	disable = type == IMSG_CTL_HOST_DISABLE ||
	    type == IMSG_CTL_TABLE_DISABLE;
	memset(&note, 0, sizeof(note));
	if (type == IMSG_CTL_HOST_ENABLE || type == IMSG_CTL_HOST_DISABLE) {
		TAILQ_FOREACH(h, &env->sc_hosts, globalentry) {
			if (!ctl_id_match(id, h->conf.id, h->conf.name))
				continue;
			found++;
			TAILQ_FOREACH(ch, &env->sc_hosts, globalentry) {
				/* the host, and those that follow it */
				if (ch != h && ch->conf.parentid != h->conf.id)
					continue;
				pfe_host_reset(ch,
				    table_find(env, ch->conf.tableid));
				if (disable)
					ch->flags |= F_DISABLE;
				else
					ch->flags &= ~F_DISABLE;
				proc_compose(ps, PROC_HCE, type, &ch->conf.id,
				    sizeof(ch->conf.id));
				proc_compose(ps, PROC_RELAY, type,
				    &ch->conf.id, sizeof(ch->conf.id));
			}
			note.id = h->conf.id;
			(void)strlcpy(note.name, h->conf.name,
			    sizeof(note.name));
			control_notify(type, &note, sizeof(note));
		}
		pfe_sync(0);
		return (found ? 0 : -1);
	}
	TAILQ_FOREACH(tb, env->sc_tables, entry) {
		if (!ctl_id_match(id, tb->conf.id, tb->conf.name))
			continue;
		found++;
		if (disable)
			tb->conf.flags |= F_DISABLE;
		else
			tb->conf.flags &= ~F_DISABLE;
		TAILQ_FOREACH(h, &tb->hosts, entry)
			pfe_host_reset(h, tb);
		tb->up = 0;
		proc_compose(ps, PROC_HCE, type, &tb->conf.id,
		    sizeof(tb->conf.id));
		proc_compose(ps, PROC_RELAY, type, &tb->conf.id,
		    sizeof(tb->conf.id));
		note.id = tb->conf.id;
		(void)strlcpy(note.name, tb->conf.name, sizeof(note.name));
		control_notify(type, &note, sizeof(note));
	}
	pfe_sync(0);
	return (found ? 0 : -1);
}

/* relayctl redirect enable|disable: its rules go, or come back. */
int
pfe_rdr_enable(uint32_t type, struct ctl_id *id)
{
	struct rdr	*rdr;
	struct ctl_id	 note;
	int		 found = 0;

	id->name[sizeof(id->name) - 1] = '\0';
	memset(&note, 0, sizeof(note));
	TAILQ_FOREACH(rdr, &env->sc_rdrs, entry) {
		if (!ctl_id_match(id, rdr->conf.id, rdr->conf.name))
			continue;
		found++;
		if (type == IMSG_CTL_RDR_DISABLE)
			rdr->conf.flags |= F_DISABLE;
		else
			rdr->conf.flags &= ~F_DISABLE;
		note.id = rdr->conf.id;
		(void)strlcpy(note.name, rdr->conf.name, sizeof(note.name));
		control_notify(type, &note, sizeof(note));
	}
	pfe_sync(0);
	return (found ? 0 : -1);
}

/*
 * A redirection's counters from the kernel, and every RELAY_STATINTERVAL
 * seconds its last and average connections as a relay counts its
 * sessions (relayctl show redirects, agentx).
 */
static void
pfe_rdr_rate(struct rdr *rdr, struct ctl_rdrstats *st)
{
	struct rdr_rate		*r = &rdr->rate;
	time_t			 now = getmonosec();

	if (rdr->rate_next == 0) {
		rdr->rate_next = now + RELAY_STATINTERVAL;
		r->cnt = st->sessions;
	} else if (now >= rdr->rate_next) {
		rdr->rate_next = now + RELAY_STATINTERVAL;
		r->last = st->sessions >= r->cnt ? st->sessions - r->cnt : 0;
		r->cnt = st->sessions;
		r->avg = (r->last + r->avg) / 2;
		r->last_hour += r->last;
		r->last_day += r->last;
		r->interval++;
		if (r->interval % (3600 / RELAY_STATINTERVAL) == 0) {
			r->avg_hour = (r->last_hour + r->avg_hour) / 2;
			r->last_hour = 0;
		}
		if (r->interval % (86400 / RELAY_STATINTERVAL) == 0) {
			r->avg_day = (r->last_day + r->avg_day) / 2;
			r->last_day = 0;
		}
	}
	rdr->stats = *st;
}

/*
 * The hosts of a table that are up and enabled, added to ks, but for
 * those of a family in *skip; their families go in *fam.  Returns how
 * many were added.
 */
static unsigned int
pfe_hosts_up(objid_t tableid, struct ctl_kernsync *ks, int skip, int *fam)
{
	struct table	*tb;
	struct host	*h;
	unsigned int	 n = ks->nhosts;
	int		 f;

	if ((tb = table_find(env, tableid)) == NULL ||
	    (tb->conf.flags & F_DISABLE))
		return (0);
	TAILQ_FOREACH(h, &tb->hosts, entry) {
		f = h->conf.ss.ss_family == AF_INET6 ? 2 : 1;
		if ((h->flags & F_DISABLE) == 0 && h->up == HOST_UP &&
		    (skip & f) == 0 && ks->nhosts < RDR_MAXHOSTS) {
			ks->hosts[ks->nhosts++] = h->conf.id;
			*fam |= f;
		}
	}
	return (ks->nhosts - n);
}

/* Every enabled host of the table has been found up or down. */
static int
pfe_table_checked(objid_t tableid)
{
	struct table	*tb;
	struct host	*h;

	if ((tb = table_find(env, tableid)) == NULL ||
	    (tb->conf.flags & F_DISABLE))
		return (1);
	TAILQ_FOREACH(h, &tb->hosts, entry)
		if ((h->flags & F_DISABLE) == 0 && h->up == HOST_UNKNOWN)
			return (0);
	return (1);
}

/*
 * carp's demotion, for keepalived (the parent writes it): a demote
 * group's count is its demoting tables that are down (checked, no host
 * up, or disabled), plus one from the start until every table of the
 * first configuration has been checked, as OpenBSD demotes at start.
 * Sent where it changed (all: every group, as after a reload).
 */
struct pfe_demote {
	TAILQ_ENTRY(pfe_demote)	 pd_entry;
	struct ctl_demote	 pd;
};
static TAILQ_HEAD(, pfe_demote) pfe_demotes =
    TAILQ_HEAD_INITIALIZER(pfe_demotes);
static int			 pfe_demote_start = 1;

static struct pfe_demote *
pfe_demote_group(const char *group)
{
	struct pfe_demote	*pd;

	TAILQ_FOREACH(pd, &pfe_demotes, pd_entry)
		if (strcmp(pd->pd.group, group) == 0)
			return (pd);
	if ((pd = calloc(1, sizeof(*pd))) == NULL)
		fatal("%s", __func__);
	(void)strlcpy(pd->pd.group, group, sizeof(pd->pd.group));
	pd->pd.count = -1;	/* never sent */
	TAILQ_INSERT_TAIL(&pfe_demotes, pd, pd_entry);
	return (pd);
}

static void
pfe_demote(int all)
{
	struct pfe_demote	*pd;
	struct table		*tb, *t;
	int			 count;

	if (pfe_demote_start) {
		TAILQ_FOREACH(tb, env->sc_tables, entry)
			if (!pfe_table_checked(tb->conf.id))
				break;
		if (tb == NULL)
			pfe_demote_start = 0;
	}
	TAILQ_FOREACH(tb, env->sc_tables, entry) {
		if ((tb->conf.flags & F_DEMOTE) == 0)
			continue;
		/* each group once, at its first table */
		TAILQ_FOREACH(t, env->sc_tables, entry)
			if ((t->conf.flags & F_DEMOTE) && strcmp(
			    t->conf.demote_group, tb->conf.demote_group) == 0)
				break;
		if (t != tb)
			continue;
		count = pfe_demote_start;
		for (; t != NULL; t = TAILQ_NEXT(t, entry))
			if ((t->conf.flags & F_DEMOTE) &&
			    strcmp(t->conf.demote_group,
			    tb->conf.demote_group) == 0 &&
			    pfe_table_checked(t->conf.id) && (t->up == 0 ||
			    (t->conf.flags & F_DISABLE)))
				count++;
		pd = pfe_demote_group(tb->conf.demote_group);
		if (!all && pd->pd.count == count)
			continue;
		if (pd->pd.count != count)
			log_debug("demote group %s: %d", pd->pd.group, count);
		pd->pd.count = count;
		proc_compose(env->sc_ps, PROC_PARENT, IMSG_DEMOTE, &pd->pd,
		    sizeof(pd->pd));
	}
}

/* A group of the running configuration, counted. */
static int
pfe_demote_current(struct pfe_demote *pd)
{
	struct table	*tb;

	if (pd->pd.count < 0)
		return (0);
	TAILQ_FOREACH(tb, env->sc_tables, entry)
		if ((tb->conf.flags & F_DEMOTE) && strcmp(
		    tb->conf.demote_group, pd->pd.group) == 0)
			return (1);
	return (0);
}

/* relayctl status and metrics: each group's count. */
static void
show_demote(struct ctl_conn *c)
{
	struct pfe_demote	*pd;
	struct ctl_demote	 cd;
	int			 silent = pfe_any_silent();

	/* the parent adds one while a process does not answer: the file's */
	TAILQ_FOREACH(pd, &pfe_demotes, pd_entry) {
		if (!pfe_demote_current(pd))
			continue;
		cd = pd->pd;
		cd.count += silent;
		imsg_compose_event(&c->iev, IMSG_CTL_DEMOTE, 0, 0, -1,
		    &cd, sizeof(cd));
	}
}

/* Does a process not answer?  The parent demotes and withdraws then. */
static int
pfe_any_silent(void)
{
	unsigned int	 i;

	for (i = 0; i < env->sc_nprocinfo; i++)
		if (env->sc_procinfo[i].pi_silent)
			return (1);
	return (0);
}

/* The parent's word: a process stops answering, or answers again. */
static void
pfe_silent(struct ctl_procinfo *pi)
{
	unsigned int	 i;

	for (i = 0; i < env->sc_nprocinfo; i++)
		if (env->sc_procinfo[i].pi_id == pi->pi_id &&
		    env->sc_procinfo[i].pi_instance == pi->pi_instance)
			env->sc_procinfo[i].pi_silent = pi->pi_silent != 0;
}

/*
 * What the kernel must hold for every redirection and router, sent to
 * the parent where it changed (all: every one, as after a reload).  A
 * redirection uses its table's hosts that are up, else its backup
 * table's, else it has no rule (OpenBSD empties its anchor).  Unlike
 * OpenBSD's, this is per address family: when the table has no IPv4
 * host up, IPv4 clients go to the backup table's.
 */
static void
pfe_sync(int all)
{
	struct ctl_kernsync	 ks;
	struct rdr		*rdr;
	struct router		*rt;
	int			 fam;
	static const char	*states[] = { "down", "active",
				    "active (using backup table)" };

	TAILQ_FOREACH(rdr, &env->sc_rdrs, entry) {
		/*
		 * Not before every host was checked once: the rules a
		 * reload carried over stay until then, and a table's
		 * hosts do not come one at a time.
		 */
		if (rdr->ks.id == 0 && (!pfe_table_checked(rdr->conf.table) ||
		    (rdr->conf.backup != 0 &&
		    !pfe_table_checked(rdr->conf.backup))))
			continue;
		memset(&ks, 0, sizeof(ks));
		ks.id = rdr->conf.id;
		ks.state = RDR_DOWN;
		fam = 0;
		if ((rdr->conf.flags & F_DISABLE) == 0) {
			if (pfe_hosts_up(rdr->conf.table, &ks, 0, &fam))
				ks.state = RDR_ACTIVE;
			/* per family: IPv4 clients need IPv4 hosts */
			if (rdr->conf.backup != 0 &&
			    pfe_hosts_up(rdr->conf.backup, &ks, fam, &fam) &&
			    ks.state == RDR_DOWN)
				ks.state = RDR_BACKUP;
		}
		if (!all && memcmp(&ks, &rdr->ks, sizeof(ks)) == 0)
			continue;
		if (rdr->state != (enum rdr_state)ks.state)
			log_debug("redirection %s: %s", rdr->conf.name,
			    states[ks.state]);
		rdr->ks = ks;
		rdr->state = ks.state;
		proc_compose(env->sc_ps, PROC_PARENT, IMSG_RDR_SYNC, &ks,
		    sizeof(ks));
	}
	TAILQ_FOREACH(rt, &env->sc_routers, entry) {
		/*
		 * Not before every gateway was checked once: the routes a
		 * reload kept stay until then.
		 */
		if (rt->ks.id == 0 && !pfe_table_checked(rt->conf.table))
			continue;
		memset(&ks, 0, sizeof(ks));
		ks.id = rt->conf.id;
		fam = 0;
		ks.state = pfe_hosts_up(rt->conf.table, &ks, 0, &fam) ?
		    RDR_ACTIVE : RDR_DOWN;
		if (!all && memcmp(&ks, &rt->ks, sizeof(ks)) == 0)
			continue;
		rt->ks = ks;
		proc_compose(env->sc_ps, PROC_PARENT, IMSG_ROUTER_SYNC, &ks,
		    sizeof(ks));
	}
	pfe_demote(all);
	pfe_announce(all);
}

/*
 * announce: may each address of relays and redirections with announce
 * be announced?  While every relay and redirection on it can serve: a
 * relay while one of its tables has a host up (one without tables
 * always), a redirection while it is active; not while disabled.  One
 * whose tables were not all checked yet (a start, a reload) leaves the
 * address as it was: a reload withdraws nothing that stays up.  Sent to
 * the parent where it changed (all: every one); an address that left
 * the configuration is sent down once.
 */
struct pfe_announce {
	TAILQ_ENTRY(pfe_announce) pa_entry;
	struct ctl_announce	 pa;	/* up: as sent, -1 never */
	int			 pa_seen;
	int			 pa_up;	/* 1 up, 0 down, -1 not checked */
};
static TAILQ_HEAD(, pfe_announce) pfe_announces =
    TAILQ_HEAD_INITIALIZER(pfe_announces);

/* An object on address ss can serve (1), cannot (0), is not checked (-1) */
static void
pfe_announce_addr(struct sockaddr_storage *ss, int up)
{
	struct pfe_announce	*pa;
	struct sockaddr_storage	 key;

	memset(&key, 0, sizeof(key));
	key.ss_family = ss->ss_family;
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)&key)->sin_addr =
		    ((struct sockaddr_in *)ss)->sin_addr;
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)&key)->sin6_addr =
		    ((struct sockaddr_in6 *)ss)->sin6_addr;
	else
		return;
	TAILQ_FOREACH(pa, &pfe_announces, pa_entry)
		if (memcmp(&pa->pa.ss, &key, sizeof(key)) == 0)
			break;
	if (pa == NULL) {
		if ((pa = calloc(1, sizeof(*pa))) == NULL)
			fatal("%s", __func__);
		pa->pa.ss = key;
		pa->pa.up = -1;
		TAILQ_INSERT_TAIL(&pfe_announces, pa, pa_entry);
	}
	if (!pa->pa_seen || up == 0 || (up == -1 && pa->pa_up == 1))
		pa->pa_up = up;
	pa->pa_seen = 1;
}

static int
pfe_relay_serves(struct relay *rlay)
{
	struct relay_table	*rlt;
	struct table		*tb;
	int			 up = 0;

	if (rlay->rl_conf.flags & F_DISABLE)
		return (0);
	if (TAILQ_EMPTY(&rlay->rl_tables))
		return (1);
	TAILQ_FOREACH(rlt, &rlay->rl_tables, rlt_entry) {
		tb = rlt->rlt_table;
		if (!pfe_table_checked(tb->conf.id))
			return (-1);
		if ((tb->conf.flags & F_DISABLE) == 0 && tb->up > 0)
			up = 1;
	}
	return (up);
}

/* What the parent does with it: nothing is announced while one hangs. */
static int
pfe_announce_shown(struct pfe_announce *pa, struct ctl_announce *ca)
{
	if (pa->pa.up == -1)
		return (0);
	*ca = pa->pa;
	if (pfe_any_silent())
		ca->up = 0;
	return (1);
}

/* relayctl status: each address, announced or withdrawn. */
static void
show_announce(struct ctl_conn *c)
{
	struct pfe_announce	*pa;
	struct ctl_announce	 ca;

	TAILQ_FOREACH(pa, &pfe_announces, pa_entry)
		if (pfe_announce_shown(pa, &ca))
			imsg_compose_event(&c->iev, IMSG_CTL_ANNOUNCE, 0, 0,
			    -1, &ca, sizeof(ca));
}

static void
pfe_announce(int all)
{
	struct pfe_announce	*pa, *next;
	struct relay		*rlay;
	struct rdr		*rdr;
	int			 i, up, seen;

	TAILQ_FOREACH(rlay, env->sc_relays, rl_entry)
		if (rlay->rl_conf.flags & F_ANNOUNCE)
			pfe_announce_addr(&rlay->rl_conf.ss,
			    pfe_relay_serves(rlay));
	TAILQ_FOREACH(rdr, &env->sc_rdrs, entry) {
		if ((rdr->conf.flags & F_ANNOUNCE) == 0)
			continue;
		if (rdr->conf.flags & F_DISABLE)
			up = 0;
		else if (rdr->ks.id == 0)
			up = -1;	/* pfe_sync() waits for its checks */
		else
			up = rdr->state != RDR_DOWN;
		for (i = 0; i < rdr->conf.nvirts; i++)
			pfe_announce_addr(&rdr->conf.virts[i].ss, up);
	}
	TAILQ_FOREACH_SAFE(pa, &pfe_announces, pa_entry, next) {
		seen = pa->pa_seen;
		pa->pa_seen = 0;
		up = seen ? pa->pa_up : 0;
		if (up == -1) {
			/* as it was, until checked */
			if (pa->pa.up == -1 || !all)
				continue;
			up = pa->pa.up;
		}
		if (all || pa->pa.up != up) {
			pa->pa.up = up;
			proc_compose(env->sc_ps, PROC_PARENT, IMSG_ANNOUNCE,
			    &pa->pa, sizeof(pa->pa));
		}
		if (!seen) {
			TAILQ_REMOVE(&pfe_announces, pa, pa_entry);
			free(pa);
		}
	}
}

static int
pfe_dispatch_relay(int fd, struct privsep_proc *p, struct imsg *imsg)
{
	struct relay_stats	 st;
	struct ctl_keyopstats	 ks;
	struct relay		*rlay;
	struct ctl_conn		*c;
	size_t			 len;

	(void)fd;
	(void)p;
	switch (imsg->hdr.type) {
	case IMSG_STATISTICS:
		IMSG_EXACT_SIZE_CHECK(imsg, &st);
		memcpy(&st, imsg->data, sizeof(st));
		if (st.proc >= PROC_MAX_INSTANCES)
			fatalx("%s: invalid relay process %u", __func__,
			    st.proc);
		/* a relay of an older configuration is no news */
		if ((rlay = relay_find(env, st.id)) == NULL)
			break;
		rlay->rl_stats[st.proc] = st;
		break;
	case IMSG_KEYOP_STATS:
		IMSG_EXACT_SIZE_CHECK(imsg, &ks);
		memcpy(&ks, imsg->data, sizeof(ks));
		if (ks.proc >= PROC_MAX_INSTANCES)
			fatalx("%s: invalid relay process %u", __func__,
			    ks.proc);
		env->sc_keyops[ks.proc] = ks;
		break;
	case IMSG_SPLICE_ENGINE:
		len = IMSG_DATA_SIZE(imsg);
		if (len == 0 || len > sizeof(env->sc_engine) ||
		    ((char *)imsg->data)[len - 1] != '\0')
			fatalx("%s: bad length imsg received (%s)", __func__,
			    imsg_type_name(imsg->hdr.type));
		memcpy(env->sc_engine, imsg->data, len);
		break;
	case IMSG_CTL_SESSION:
		IMSG_EXACT_SIZE_CHECK(imsg, (struct ctl_session *)NULL);
		if ((c = control_connbyid(imsg->hdr.peerid)) == NULL)
			break;
		imsg_compose_event(&c->iev, IMSG_CTL_SESSION, 0, 0, -1,
		    imsg->data, IMSG_DATA_SIZE(imsg));
		break;
	case IMSG_CTL_OVERLOAD:
	case IMSG_CTL_END:
		pfe_ctl_answer(imsg);
		break;
	default:
		return (-1);
	}
	return (0);
}

static void
show_table(struct ctl_conn *c, struct table *tb)
{
	struct host	*h;

	if (tb == NULL)
		return;
	imsg_compose_event(&c->iev, IMSG_CTL_TABLE, 0, 0, -1, tb,
	    sizeof(*tb));
	TAILQ_FOREACH(h, &tb->hosts, entry)
		imsg_compose_event(&c->iev, IMSG_CTL_HOST, 0, 0, -1, h,
		    sizeof(*h));
}

/*
 * Every redirection, relay and router (OpenBSD's order), each followed
 * by its tables and their hosts.
 */
void
show(struct ctl_conn *c)
{
	struct rdr		*rdr;
	struct relay		*rlay;
	struct relay_table	*rlt;
	struct router		*rt;

	TAILQ_FOREACH(rdr, &env->sc_rdrs, entry) {
		imsg_compose_event(&c->iev, IMSG_CTL_RDR, 0, 0, -1, rdr,
		    sizeof(*rdr));
		show_table(c, table_find(env, rdr->conf.table));
		if (rdr->conf.backup != 0)
			show_table(c, table_find(env, rdr->conf.backup));
	}
	TAILQ_FOREACH(rlay, env->sc_relays, rl_entry) {
		imsg_compose_event(&c->iev, IMSG_CTL_RELAY, 0, 0, -1,
		    rlay, sizeof(*rlay));
		TAILQ_FOREACH(rlt, &rlay->rl_tables, rlt_entry)
			show_table(c, rlt->rlt_table);
	}
	TAILQ_FOREACH(rt, &env->sc_routers, entry) {
		imsg_compose_event(&c->iev, IMSG_CTL_ROUTER, 0, 0, -1, rt,
		    sizeof(*rt));
		show_table(c, table_find(env, rt->conf.table));
	}
	imsg_compose_event(&c->iev, IMSG_CTL_END, 0, 0, -1, NULL, 0);
}

static void
status_info(struct ctl_status *st)
{
	struct relay	*rlay;
	struct table	*tb;
	struct host	*h;
	unsigned int	 i;
	time_t		 started;

	memset(st, 0, sizeof(*st));
	(void)strlcpy(st->version, RELAYD_VERSION, sizeof(st->version));
	for (i = 0; i < env->sc_nprocinfo; i++) {
		if (!env->sc_procinfo[i].pi_silent)
			continue;
		st->procs_stalled++;
		if (env->sc_procinfo[i].pi_id == PROC_RELAY)
			st->relays_stalled++;
	}
	st->parent_pid = env->sc_parentpid;
	/*
	 * When relayd started, on the wall clock: moved by a step of the
	 * clock, not by the second now and the uptime may disagree on
	 * (a scraper would see a restart).
	 */
	st->now = time(NULL);
	started = st->now - (getmonosec() - env->sc_started);
	if (started > env->sc_started_wall + 1 ||
	    started < env->sc_started_wall - 1)
		env->sc_started_wall = started;
	st->started = env->sc_started_wall;
	(void)strlcpy(st->engine, env->sc_engine[0] != '\0' ?
	    env->sc_engine : "-", sizeof(st->engine));
	st->generation = env->sc_generation;
	for (i = 0; i < PROC_MAX_INSTANCES; i++) {
		st->keyops += env->sc_keyops[i].ops;
		st->keyops_failed += env->sc_keyops[i].failed;
		st->keyops_us += env->sc_keyops[i].us;
	}
	TAILQ_FOREACH(rlay, env->sc_relays, rl_entry)
		st->nrelays++;
	TAILQ_FOREACH(tb, env->sc_tables, entry) {
		st->ntables++;
		TAILQ_FOREACH(h, &tb->hosts, entry)
			st->nhosts++;
	}
}

/* relayctl status: the daemon, its processes, and its relays. */
void
show_status(struct ctl_conn *c)
{
	struct ctl_status	 st;
	unsigned int		 i;

	status_info(&st);
	imsg_compose_event(&c->iev, IMSG_CTL_STATUS_INFO, 0, 0, -1, &st,
	    sizeof(st));
	for (i = 0; i < env->sc_nprocinfo; i++)
		imsg_compose_event(&c->iev, IMSG_CTL_PROC, 0, 0, -1,
		    &env->sc_procinfo[i], sizeof(env->sc_procinfo[i]));
	show_demote(c);
	show_announce(c);
	show(c);
}

/*
 * A part of an answer several processes give (show sessions, show
 * overload): an entry goes to its client, the last end ends it.
 */
void
pfe_ctl_answer(struct imsg *imsg)
{
	struct ctl_conn	*c;

	if ((c = control_connbyid(imsg->hdr.peerid)) == NULL)
		return;
	if (imsg->hdr.type == IMSG_CTL_OVERLOAD) {
		IMSG_EXACT_SIZE_CHECK(imsg, (struct ctl_overload *)NULL);
		imsg_compose_event(&c->iev, IMSG_CTL_OVERLOAD, 0, 0, -1,
		    imsg->data, IMSG_DATA_SIZE(imsg));
		return;
	}
	if (c->waiting > 0 && --c->waiting == 0)
		imsg_compose_event(&c->iev, IMSG_CTL_END, 0, 0, -1, NULL, 0);
}

/* Every relay process and the parent answer with their sources. */
void
show_overload(struct ctl_conn *c)
{
	struct privsep	*ps = env->sc_ps;

	if (c->waiting > 0)
		return;
	c->waiting = proc_ninstances(ps, PROC_RELAY) + 1;
	proc_compose_imsg(ps, PROC_RELAY, -1, IMSG_CTL_OVERLOAD, c->id, -1,
	    NULL, 0);
	proc_compose_imsg(ps, PROC_PARENT, -1, IMSG_CTL_OVERLOAD, c->id, -1,
	    NULL, 0);
}

/* relayctl overload delete|flush: each that keeps tables is told. */
void
overload_delete(struct ctl_conn *c, struct imsg *imsg)
{
	struct privsep	*ps = env->sc_ps;

	proc_compose(ps, PROC_RELAY, IMSG_CTL_OVERLOAD_DEL, imsg->data,
	    IMSG_DATA_SIZE(imsg));
	proc_compose(ps, PROC_PARENT, IMSG_CTL_OVERLOAD_DEL, imsg->data,
	    IMSG_DATA_SIZE(imsg));
	imsg_compose_event(&c->iev, IMSG_CTL_OK, 0, 0, -1, NULL, 0);
}

/* Every relay process answers with its sessions, then an end. */
void
show_sessions(struct ctl_conn *c)
{
	struct privsep	*ps = env->sc_ps;

	if (c->waiting > 0)
		return;
	c->waiting = proc_ninstances(ps, PROC_RELAY);
	if (c->waiting == 0) {
		imsg_compose_event(&c->iev, IMSG_CTL_END, 0, 0, -1, NULL, 0);
		return;
	}
	proc_compose_imsg(ps, PROC_RELAY, -1, IMSG_CTL_SESSION, c->id, -1,
	    NULL, 0);
}

/*
 * The metrics listener (metrics listen on, ours): GET /metrics answers
 * the text of relayctl show metrics, anything else 404 or 405, every
 * connection closed after one answer.  At most METRICS_MAXCONNS at once
 * (more are closed at once), each given METRICS_TIMEOUT seconds.
 */
static void
pfe_metrics_listen(int fd)
{
	event_set(&metrics_ev, fd, EV_READ | EV_PERSIST, pfe_metrics_accept,
	    NULL);
	event_add(&metrics_ev, NULL);
}

static void
pfe_metrics_accept(int fd, short event, void *arg)
{
	static struct log_ratelimit	 rl = LOG_RATELIMIT(60);
	struct bufferevent		*bev;
	struct timeval			 tv = { METRICS_TIMEOUT, 0 };
	int				 s;

	(void)event;
	(void)arg;
	if ((s = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) == -1)
		return;
	if (metrics_nconns >= METRICS_MAXCONNS) {
		close(s);
		if (log_ratelimit(&rl))
			log_warnx("metrics: %d scrapes at once already, a "
			    "connection refused", METRICS_MAXCONNS);
		return;
	}
	if ((bev = bufferevent_socket_new(NULL, s, BEV_OPT_CLOSE_ON_FREE)) ==
	    NULL) {
		close(s);
		return;
	}
	metrics_nconns++;
	bufferevent_setcb(bev, pfe_metrics_read, NULL, pfe_metrics_error,
	    NULL);
	bufferevent_set_timeouts(bev, &tv, &tv);
	bufferevent_enable(bev, EV_READ);
}

/* The request line, once the head is in; its headers do not matter. */
static void
pfe_metrics_read(struct bufferevent *bev, void *arg)
{
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct evbuffer_ptr	 end;
	struct metrics		*m;
	struct relay		*rlay;
	struct rdr		*rdr;
	struct router		*rt;
	struct pfe_demote	*pd;
	struct pfe_announce	*pa;
	struct ctl_announce	 ca;
	struct table		*tb;
	struct host		*h;
	struct ctl_status	 st;
	FILE			*f;
	char			*line, *text = NULL;
	size_t			 len = 0;

	(void)arg;
	end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
	if (end.pos == -1) {
		end = evbuffer_search(in, "\n\n", 2, NULL);
		if (end.pos == -1) {
			if (evbuffer_get_length(in) > METRICS_MAXHEAD)
				pfe_metrics_close(bev);
			return;
		}
	}
	bufferevent_disable(bev, EV_READ);
	if ((line = evbuffer_readln(in, NULL, EVBUFFER_EOL_CRLF)) == NULL) {
		pfe_metrics_close(bev);
		return;
	}
	if (strncmp(line, "GET ", 4) != 0 && strncmp(line, "HEAD ", 5) != 0) {
		pfe_metrics_answer(bev, 405, "Method Not Allowed",
		    "GET /metrics only\n", 18);
		free(line);
		return;
	}
	if (strncmp(strchr(line, ' ') + 1, "/metrics ", 9) != 0 &&
	    strcmp(strchr(line, ' ') + 1, "/metrics") != 0) {
		pfe_metrics_answer(bev, 404, "Not Found",
		    "GET /metrics only\n", 18);
		free(line);
		return;
	}
	if ((m = metrics_new()) == NULL ||
	    (f = open_memstream(&text, &len)) == NULL) {
		metrics_free(m);
		pfe_metrics_close(bev);
		free(line);
		return;
	}
	status_info(&st);
	metrics_status(m, &st);
	TAILQ_FOREACH(rlay, env->sc_relays, rl_entry)
		if (metrics_relay(m, rlay) == -1)
			break;
	TAILQ_FOREACH(rdr, &env->sc_rdrs, entry)
		if (metrics_rdr(m, rdr) == -1)
			break;
	TAILQ_FOREACH(rt, &env->sc_routers, entry)
		if (metrics_router(m, rt) == -1)
			break;
	TAILQ_FOREACH(pd, &pfe_demotes, pd_entry)
		if (pfe_demote_current(pd) && metrics_demote(m, &pd->pd) == -1)
			break;
	TAILQ_FOREACH(pa, &pfe_announces, pa_entry)
		if (pfe_announce_shown(pa, &ca) && metrics_announce(m, &ca) ==
		    -1)
			break;
	TAILQ_FOREACH(tb, env->sc_tables, entry) {
		if (metrics_table(m, tb) == -1)
			break;
		TAILQ_FOREACH(h, &tb->hosts, entry)
			if (metrics_host(m, h) == -1)
				break;
	}
	metrics_print(m, f);
	metrics_free(m);
	if (fclose(f) != 0 || text == NULL)
		pfe_metrics_close(bev);
	else
		pfe_metrics_answer(bev, 200, "OK", line[0] == 'H' ? NULL :
		    text, len);
	free(text);
	free(line);
}

static void
pfe_metrics_answer(struct bufferevent *bev, int code, const char *reason,
    const char *body, size_t len)
{
	struct evbuffer	*out = bufferevent_get_output(bev);

	if (evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\nContent-Type: "
	    "text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: "
	    "%zu\r\nConnection: close\r\n\r\n", code, reason, len) == -1 ||
	    (body != NULL && evbuffer_add(out, body, len) == -1)) {
		pfe_metrics_close(bev);
		return;
	}
	bufferevent_setcb(bev, NULL, pfe_metrics_written, pfe_metrics_error,
	    NULL);
	bufferevent_enable(bev, EV_WRITE);
}

static void
pfe_metrics_written(struct bufferevent *bev, void *arg)
{
	(void)arg;
	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		pfe_metrics_close(bev);
}

static void
pfe_metrics_error(struct bufferevent *bev, short what, void *arg)
{
	(void)what;
	(void)arg;
	pfe_metrics_close(bev);
}

static void
pfe_metrics_close(struct bufferevent *bev)
{
	bufferevent_free(bev);
	metrics_nconns--;
}
