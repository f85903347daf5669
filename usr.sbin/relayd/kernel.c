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

static struct event	 stats_ev;
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
	ret = kernel_rdr_setup(&conf->sc_rdrs);
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
