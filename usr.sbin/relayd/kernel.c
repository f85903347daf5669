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
 * Redirections and routers in the kernel, done by the parent.
 *
 * On OpenBSD pfe keeps /dev/pf open and writes pf itself.  Linux checks
 * CAP_NET_ADMIN of the process that sends each nftables or rtnetlink
 * message, not only of the one that opened the socket, so an
 * unprivileged pfe cannot: pfe decides (which hosts are up, which
 * table serves), and sends the parent the ids of the hosts to use; the
 * parent checks every id against its own copy of the configuration, so
 * pfe can choose among the configured hosts and nothing else.  The
 * relays' limits per client source are the parent's alone (relay_limit.c
 * counts in the relay processes where they cannot be in the kernel).  The
 * back ends are kernel_nft.c (nftables, redirections) and kernel_rtnl.c
 * (rtnetlink, routers) on Linux, kernel_none.c elsewhere; the Makefile
 * picks them.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <stdlib.h>
#include <string.h>

#include "relayd.h"

static void	 kernel_stats(int, short, void *);
static void	 kernel_carry(struct relayd *, struct relayd *);
static int	 kernel_hosts(struct relayd *, struct ctl_kernsync *,
		    objid_t, objid_t, int, struct sockaddr_storage *,
		    unsigned int *, int *);

static void	 kernel_limits_poll(int, short, void *);
static void	 kernel_limits_flushpoll(void);

static struct event	 stats_ev;
static struct event	 limits_ev;	/* overload ... flush, seen */
static int		 have_limits;	/* the limits' table is ours */
static int		 limits_flush;	/* a relay has overload ... flush */
static struct relayd	*kernel_env;	/* the parent's, for the counters */
static int		 have_table;	/* the nftables table is ours */

struct rdr *
rdr_find(struct relayd *env, objid_t id)
{
	struct rdr	*rdr;

	TAILQ_FOREACH(rdr, &env->sc_rdrs, entry)
		if (rdr->conf.id == id)
			return (rdr);
	return (NULL);
}

struct router *
router_find(struct relayd *env, objid_t id)
{
	struct router	*rt;

	TAILQ_FOREACH(rt, &env->sc_routers, entry)
		if (rt->conf.id == id)
			return (rt);
	return (NULL);
}

/* At the start: what a killed relayd left goes. */
int
kernel_init(struct relayd *env)
{
	kernel_env = env;
	if (!kernel_available())
		return (0);
	/* nothing it could have left, nothing it could remove */
	if (!compat_net_admin()) {
		log_debug("%s: no CAP_NET_ADMIN: no table or route of a "
		    "killed relayd to remove", __func__);
		return (0);
	}
	kernel_route_stale();
	kernel_rdr_cleanup();
	kernel_limits_cleanup();
	have_table = 0;
	return (0);
}

/*
 * The table for the redirections of conf, the running configuration or
 * one a reload is about to run (their rules come with pfe's first
 * answers), and the counters' timer.  -1: the kernel refused, and what
 * ran stays as it was.
 */
int
kernel_configure(struct relayd *conf)
{
	struct rdr	*rdr;
	struct timeval	 tv = { RDR_STATINTERVAL, 0 };
	int		 ret;

	if (!kernel_available())
		return (0);
	if (!compat_net_admin() && (!TAILQ_EMPTY(&conf->sc_rdrs) ||
	    !TAILQ_EMPTY(&conf->sc_routers))) {
		log_warnx("%s need CAP_NET_ADMIN, which relayd does not have",
		    TAILQ_EMPTY(&conf->sc_rdrs) ? "routers" : "redirections");
		return (-1);
	}
	TAILQ_FOREACH(rdr, &conf->sc_rdrs, entry)
		memset(&rdr->ks, 0, sizeof(rdr->ks));
	if (kernel_env != NULL && conf != kernel_env)
		kernel_carry(kernel_env, conf);
	if (TAILQ_EMPTY(&conf->sc_rdrs)) {
		if (have_table)
			kernel_rdr_cleanup();
		have_table = 0;
		if (evtimer_initialized(&stats_ev))
			evtimer_del(&stats_ev);
		return (0);
	}
	/* (no redirection: no table, see above) */
	if (have_table && kernel_env != NULL && conf != kernel_env) {
		/* a reload: in place, else whole if that fails */
		if ((ret = kernel_rdr_setup(&conf->sc_rdrs,
		    &kernel_env->sc_rdrs)) == -1) {
			log_warnx("redirections: the nftables tables could "
			    "not be changed in place, replacing them");
			ret = kernel_rdr_setup(&conf->sc_rdrs, NULL);
		}
	} else
		ret = kernel_rdr_setup(&conf->sc_rdrs, NULL);
	TAILQ_FOREACH(rdr, &conf->sc_rdrs, entry) {
		free(rdr->rd_init);
		rdr->rd_init = NULL;
		rdr->rd_ninit = 0;
	}
	if (ret == -1) {
		log_warnx("redirections: cannot make the nftables table");
		return (-1);
	}
	have_table = 1;
	if (!evtimer_initialized(&stats_ev))
		evtimer_set(&stats_ev, kernel_stats, NULL);
	evtimer_add(&stats_ev, &tv);
	return (0);
}

/*
 * A reload rebuilds the nftables table: each redirection of conf that
 * env runs (by name) starts with the hosts env's sends to now, those
 * of them that conf's tables still have (address and port), in the
 * same transaction, so that it never goes empty until pfe's first word
 * on it.  Its ks says so, in conf's host ids.
 */
static void
kernel_carry(struct relayd *env, struct relayd *conf)
{
	struct sockaddr_storage	 ss[RDR_MAXHOSTS];
	struct rdr		*rdr, *old;
	struct table		*tb;
	struct host		*h;
	unsigned int		 n, i;
	int			 prio, t;

	TAILQ_FOREACH(rdr, &conf->sc_rdrs, entry) {
		TAILQ_FOREACH(old, &env->sc_rdrs, entry)
			if (strcmp(old->conf.name, rdr->conf.name) == 0)
				break;
		if (old == NULL || old->ks.nhosts == 0 ||
		    kernel_hosts(env, &old->ks, old->conf.table,
		    old->conf.backup, 0, ss, &n, &prio) == -1 || n == 0)
			continue;
		for (t = 0; t < 2; t++) {
			if ((tb = table_find(conf, t == 0 ? rdr->conf.table :
			    rdr->conf.backup)) == NULL)
				continue;
			TAILQ_FOREACH(h, &tb->hosts, entry)
				for (i = 0; i < n; i++)
					if (rdr->ks.nhosts < RDR_MAXHOSTS &&
					    h->conf.ss.ss_family ==
					    ss[i].ss_family && memcmp(&h->conf.ss,
					    &ss[i], ss_len(&ss[i])) == 0) {
						rdr->ks.hosts[rdr->ks.nhosts++] =
						    h->conf.id;
						break;
					}
		}
		if (rdr->ks.nhosts == 0 ||
		    (rdr->rd_init = calloc(rdr->ks.nhosts,
		    sizeof(*rdr->rd_init))) == NULL ||
		    kernel_hosts(conf, &rdr->ks, rdr->conf.table,
		    rdr->conf.backup, 0, rdr->rd_init, &rdr->rd_ninit,
		    &prio) == -1) {
			free(rdr->rd_init);
			rdr->rd_init = NULL;
			rdr->rd_ninit = 0;
			memset(&rdr->ks, 0, sizeof(rdr->ks));
			continue;
		}
		rdr->ks.id = rdr->conf.id;
		rdr->ks.state = old->ks.state;
		log_debug("redirection %s: starts with %u hosts",
		    rdr->conf.name, rdr->rd_ninit);
	}
}

static int
router_same_route(struct router *a, int i, struct router *b, int j)
{
	return (a->conf.af == b->conf.af &&
	    a->conf.rtable == b->conf.rtable &&
	    a->conf.proto == b->conf.proto &&
	    a->conf.prefixlen[i] == b->conf.prefixlen[j] &&
	    memcmp(&a->conf.routes[i], &b->conf.routes[j],
	    sizeof(a->conf.routes[i])) == 0);
}

/*
 * Reload, before the configuration of env is replaced by new: the
 * routes that new does not have go; the others stay until pfe's first
 * answer for them replaces them.
 */
void
kernel_reload(struct relayd *env, struct relayd *new)
{
	struct router	*rt, *nrt;
	int		 i, j, keep;

	TAILQ_FOREACH(rt, &env->sc_routers, entry) {
		if (rt->ks.nhosts == 0)
			continue;
		for (i = 0; i < rt->conf.nroutes; i++) {
			keep = 0;
			TAILQ_FOREACH(nrt, &new->sc_routers, entry)
				for (j = 0; j < nrt->conf.nroutes; j++)
					if (router_same_route(rt, i, nrt, j))
						keep = 1;
			if (!keep)
				(void)kernel_route_set(rt, i, NULL, 0, 0);
		}
	}
}

/* Shutdown: nothing of relayd's stays in the kernel. */
void
kernel_cleanup(struct relayd *env)
{
	struct router	*rt;
	int		 i;

	if (!kernel_available())
		return;
	TAILQ_FOREACH(rt, &env->sc_routers, entry)
		if (rt->ks.nhosts > 0)
			for (i = 0; i < rt->conf.nroutes; i++)
				(void)kernel_route_set(rt, i, NULL, 0, 0);
	if (have_table)
		kernel_rdr_cleanup();
	have_table = 0;
	if (have_limits)
		kernel_limits_cleanup();
	have_limits = 0;
}

/*
 * The addresses of the hosts pfe named, each checked to be of table
 * tableid or backup; af: only those of that family (0: any).  -1: one
 * is not.
 */
static int
kernel_hosts(struct relayd *env, struct ctl_kernsync *ks, objid_t tableid,
    objid_t backup, int af, struct sockaddr_storage *ss, unsigned int *n,
    int *prio)
{
	struct host	*h;
	unsigned int	 i;

	*n = 0;
	*prio = 0;
	if (ks->nhosts > RDR_MAXHOSTS)
		return (-1);
	for (i = 0; i < ks->nhosts; i++) {
		if ((h = host_find(env, ks->hosts[i])) == NULL ||
		    (h->conf.tableid != tableid &&
		    (backup == 0 || h->conf.tableid != backup)) ||
		    h->conf.ss.ss_family == AF_UNIX)
			return (-1);
		if (af != 0 && h->conf.ss.ss_family != af)
			continue;
		ss[(*n)++] = h->conf.ss;
		if (h->conf.priority > 0 &&
		    (*prio == 0 || h->conf.priority < *prio))
			*prio = h->conf.priority;
	}
	return (0);
}

static int
kernel_hostset_lost(struct ctl_kernsync *old, struct ctl_kernsync *ks)
{
	unsigned int	 i, j;

	for (i = 0; i < old->nhosts; i++) {
		for (j = 0; j < ks->nhosts; j++)
			if (old->hosts[i] == ks->hosts[j])
				break;
		if (j == ks->nhosts)
			return (1);
	}
	return (0);
}

/* pfe's word: the hosts a redirection, or the gateways a router, uses. */
void
kernel_sync(struct relayd *env, uint32_t type, struct ctl_kernsync *ks)
{
	struct sockaddr_storage	 ss[RDR_MAXHOSTS];
	struct rdr		*rdr;
	struct router		*rt;
	unsigned int		 n;
	int			 i, prio;

	if (type == IMSG_RDR_SYNC) {
		/* a redirection of an older configuration */
		if ((rdr = rdr_find(env, ks->id)) == NULL)
			return;
		if ((ks->state == RDR_DOWN && ks->nhosts != 0) ||
		    kernel_hosts(env, ks, rdr->conf.table, rdr->conf.backup,
		    0, ss, &n, &prio) == -1) {
			log_warnx("%s: redirection %s: pfe named a host not "
			    "of its table", __func__, rdr->conf.name);
			return;
		}
		if (kernel_rdr_rules(rdr, ss, n,
		    kernel_hostset_lost(&rdr->ks, ks)) == -1) {
			log_warnx("redirection %s: its rules could not be "
			    "changed", rdr->conf.name);
			return;
		}
		rdr->ks = *ks;
		return;
	}
	if ((rt = router_find(env, ks->id)) == NULL)
		return;
	if (kernel_hosts(env, ks, rt->conf.table, 0, rt->conf.af, ss, &n,
	    &prio) == -1) {
		log_warnx("%s: router %s: pfe named a host not of its table",
		    __func__, rt->conf.name);
		return;
	}
	log_debug("router %s: %u gateways", rt->conf.name, n);
	for (i = 0; i < rt->conf.nroutes; i++)
		(void)kernel_route_set(rt, i, ss, n, prio);
	rt->ks = *ks;
	rt->ks.nhosts = n;
}

/* Every RDR_STATINTERVAL seconds, the kernel's counters go to pfe. */
static void
kernel_stats(int fd, short event, void *arg)
{
	struct relayd		*env = kernel_env;
	struct rdr		*rdr;
	struct ctl_rdrstats	 st;
	struct timeval		 tv = { RDR_STATINTERVAL, 0 };

	(void)fd;
	(void)event;
	(void)arg;
	TAILQ_FOREACH(rdr, &env->sc_rdrs, entry)
		if (kernel_rdr_stats(rdr, &st) == 0)
			proc_compose(env->sc_ps, PROC_PFE, IMSG_RDR_STATS,
			    &st, sizeof(st));
	evtimer_add(&stats_ev, &tv);
}

/*
 * Limits per client source: nftables keeps those of conf's relays where
 * the parent can write it (lim_kernel tells the relay processes so);
 * elsewhere each relay process counts for itself, and the log says so
 * once a relay.  Neither refuses the configuration.
 */
void
kernel_limits(struct relayd *conf)
{
	struct relay	*rlay;
	struct timeval	 tv = { 1, 0 };
	const char	*why = NULL;
	int		 n = 0, flush = 0;

	TAILQ_FOREACH(rlay, conf->sc_relays, rl_entry) {
		rlay->rl_conf.lim.lim_kernel = 0;
		if (RELAY_KLIMITED(rlay)) {
			n++;
			flush |= rlay->rl_conf.lim.lim_flush;
		}
	}
	if (evtimer_initialized(&limits_ev))
		evtimer_del(&limits_ev);
	if (n == 0) {
		if (have_limits)
			kernel_limits_cleanup();
		have_limits = 0;
		return;
	}
	if (!kernel_available())
		why = "this system has no nftables";
	else if (!compat_net_admin())
		why = "relayd has no CAP_NET_ADMIN for nftables";
	else if (kernel_limits_setup(conf->sc_relays) == -1)
		why = "nftables refused them";
	TAILQ_FOREACH(rlay, conf->sc_relays, rl_entry) {
		if (!RELAY_KLIMITED(rlay))
			continue;
		if (why == NULL) {
			rlay->rl_conf.lim.lim_kernel = 1;
			continue;
		}
		/* a dns relay steers a source to one process, which counts */
		if (!RELAY_LIMITED(&rlay->rl_conf.lim))
			continue;
		log_warnx("relay %s: its limits per source are counted by "
		    "each of its %d relay processes apart, not across them "
		    "(%s)", rlay->rl_conf.name, conf->sc_conf.prefork_relay,
		    why);
	}
	if (why != NULL)
		return;
	have_limits = 1;
	limits_flush = flush;
	if (!evtimer_initialized(&limits_ev))
		evtimer_set(&limits_ev, kernel_limits_poll, NULL);
	evtimer_add(&limits_ev, &tv);
}

/* The sources an overload table had at the last look, in one family. */
struct lim_snap {
	char		 ls_table[TABLE_NAME_SIZE];
	int		 ls_f;
	uint8_t		*ls_addrs;	/* 16 bytes each, sorted */
	int		 ls_n;
};
static struct lim_snap	*lim_snaps;
static size_t		 lim_nsnaps;

static int
lim_addrcmp(const void *a, const void *b)
{
	return (memcmp(a, b, 16));
}

/* The snapshot of table in family f, made if it is new. */
static struct lim_snap *
lim_snap(const char *table, int f)
{
	struct lim_snap	*s;
	size_t		 i;

	for (i = 0; i < lim_nsnaps; i++)
		if (lim_snaps[i].ls_f == f &&
		    strcmp(lim_snaps[i].ls_table, table) == 0)
			return (&lim_snaps[i]);
	if ((s = reallocarray(lim_snaps, lim_nsnaps + 1,
	    sizeof(*s))) == NULL)
		return (NULL);
	lim_snaps = s;
	s = &lim_snaps[lim_nsnaps++];
	memset(s, 0, sizeof(*s));
	(void)strlcpy(s->ls_table, table, sizeof(s->ls_table));
	s->ls_f = f;
	return (s);
}

/*
 * Every second while nftables keeps limits: what it refused, to pfe
 * (relayctl status, the metrics); and with "overload <table> flush",
 * the sources it put in such a table since the last look, to the relay
 * processes, which end their sessions (relay_limit_flush()).
 */
static void
kernel_limits_poll(int fd, short event, void *arg)
{
	struct relay		*rlay;
	struct ctl_limstats	 ls;
	struct timeval		 tv = { 1, 0 };

	(void)fd;
	(void)event;
	(void)arg;
	TAILQ_FOREACH(rlay, kernel_env->sc_relays, rl_entry) {
		if (!rlay->rl_conf.lim.lim_kernel)
			continue;
		memset(&ls, 0, sizeof(ls));
		ls.id = rlay->rl_conf.id;
		if (kernel_limits_refused(rlay->rl_conf.name,
		    ls.refused) == 0)
			(void)proc_compose(kernel_env->sc_ps, PROC_PFE,
			    IMSG_LIMIT_STATS, &ls, sizeof(ls));
	}
	if (limits_flush)
		kernel_limits_flushpoll();
	evtimer_add(&limits_ev, &tv);
}

/* The sources new in the overload ... flush tables, to the relays. */
static void
kernel_limits_flushpoll(void)
{
	struct relay		*rlay, *r2;
	struct relay_limits	*l;
	struct lim_snap		*s;
	struct ctl_limflush	 lf;
	uint8_t			*addrs;
	int			 f, n, i, seen;

	TAILQ_FOREACH(rlay, kernel_env->sc_relays, rl_entry) {
		l = &rlay->rl_conf.lim;
		if (!l->lim_kernel || !l->lim_flush)
			continue;
		/* each table once */
		seen = 0;
		TAILQ_FOREACH(r2, kernel_env->sc_relays, rl_entry) {
			if (r2 == rlay)
				break;
			if (r2->rl_conf.lim.lim_kernel &&
			    r2->rl_conf.lim.lim_flush &&
			    strcmp(r2->rl_conf.lim.lim_overload,
			    l->lim_overload) == 0)
				seen = 1;
		}
		for (f = 4; !seen && f <= 6; f += 2) {
			if ((s = lim_snap(l->lim_overload, f)) == NULL ||
			    (n = kernel_limits_overloaded(l->lim_overload,
			    l->lim_expire, f, &addrs, NULL)) == -1)
				continue;
			qsort(addrs, n, 16, lim_addrcmp);
			for (i = 0; i < n; i++) {
				if (s->ls_n > 0 && bsearch(addrs + i * 16,
				    s->ls_addrs, s->ls_n, 16,
				    lim_addrcmp) != NULL)
					continue;
				memset(&lf, 0, sizeof(lf));
				(void)strlcpy(lf.table, l->lim_overload,
				    sizeof(lf.table));
				lf.af = f == 4 ? AF_INET : AF_INET6;
				memcpy(lf.addr, addrs + i * 16, 16);
				(void)proc_compose(kernel_env->sc_ps,
				    PROC_RELAY, IMSG_LIMIT_FLUSH, &lf,
				    sizeof(lf));
			}
			free(s->ls_addrs);
			s->ls_addrs = addrs;
			s->ls_n = n;
		}
	}
}

/* The first kernel-mode relay of conf that names table, or NULL. */
static struct relay *
kernel_limits_table(struct relayd *conf, const char *table,
    struct relay *until)
{
	struct relay	*rlay;

	TAILQ_FOREACH(rlay, conf->sc_relays, rl_entry) {
		if (rlay == until)
			return (NULL);
		if (rlay->rl_conf.lim.lim_kernel &&
		    strcmp(rlay->rl_conf.lim.lim_overload, table) == 0)
			return (rlay);
	}
	return (NULL);
}

/*
 * relayctl show overload: the sources of the overload tables nftables
 * keeps, to pfe for the client peerid, then an end.
 */
void
kernel_limits_show(struct relayd *env, uint32_t peerid)
{
	struct relay		*rlay;
	struct relay_limits	*l;
	struct ctl_overload	 co;
	uint8_t			*addrs;
	uint32_t		*exp;
	int			 f, n, i;

	TAILQ_FOREACH(rlay, env->sc_relays, rl_entry) {
		l = &rlay->rl_conf.lim;
		if (!l->lim_kernel || l->lim_overload[0] == '\0' ||
		    kernel_limits_table(env, l->lim_overload, rlay) != NULL)
			continue;
		for (f = 4; f <= 6; f += 2) {
			if ((n = kernel_limits_overloaded(l->lim_overload,
			    l->lim_expire, f, &addrs, &exp)) <= 0)
				continue;
			for (i = 0; i < n; i++) {
				memset(&co, 0, sizeof(co));
				(void)strlcpy(co.table, l->lim_overload,
				    sizeof(co.table));
				co.af = f == 4 ? AF_INET : AF_INET6;
				memcpy(co.addr, addrs + i * 16, 16);
				co.prefix = f == 4 ? l->lim_prefix4 :
				    l->lim_prefix6;
				co.expires = exp[i];
				(void)proc_compose_imsg(env->sc_ps, PROC_PFE,
				    -1, IMSG_CTL_OVERLOAD, peerid, -1, &co,
				    sizeof(co));
			}
			free(addrs);
			free(exp);
		}
	}
	(void)proc_compose_imsg(env->sc_ps, PROC_PFE, -1, IMSG_CTL_END,
	    peerid, -1, NULL, 0);
}

/* relayctl overload delete|flush, for the tables nftables keeps. */
void
kernel_limits_delete(struct relayd *env, struct ctl_overload *co)
{
	struct relay		*rlay;
	struct relay_limits	*l;
	uint8_t			 a[16];
	int			 f;

	if ((rlay = kernel_limits_table(env, co->table, NULL)) == NULL)
		return;
	l = &rlay->rl_conf.lim;
	for (f = 4; f <= 6; f += 2) {
		if (co->af != 0 && co->af != (f == 4 ? AF_INET : AF_INET6))
			continue;
		if (co->af == 0) {
			(void)kernel_limits_unload(co->table, l->lim_expire, f,
			    NULL);
			continue;
		}
		addr_masked(co->addr, f == 4 ? l->lim_prefix4 :
		    l->lim_prefix6, a);
		(void)kernel_limits_unload(co->table, l->lim_expire, f, a);
	}
}
