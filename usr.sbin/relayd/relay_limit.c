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
 * Limits per client source, in a relay process: max-src-conn,
 * max-src-conn-rate and overload tables, as pf keeps them.
 *
 * Where the parent could install them in nftables (lim_kernel) the
 * kernel refuses a source over its limits before any relay process
 * sees the connection, and these counts are not kept.  Where it could
 * not (relayd without CAP_NET_ADMIN, a system without nftables), each
 * relay process counts the connections it accepted, right after
 * accept(2) and before a session is made: a refused connection is
 * reset and costs an accept and a close.  The parent warned that the
 * limits are then per process.
 *
 * max-src-request-rate counts the requests of an http relay's sources
 * here, always (relay_limit_request(), a 429 over it); with several
 * relay processes the parent steers each source to one of them
 * (compat_steer()), which then counts all of its requests.
 *
 * A source is its address, or its prefix (src-prefix).  Its counts are
 * kept by the relay's name and an overload table's entries by the
 * table's name, so both last over a reload; a source whose sessions
 * are over and whose rate is whole again is forgotten at the next
 * sweep, and at most RELAY_LIMIT_SOURCES are kept a set (more are let
 * through uncounted, as nftables does when its set is full).
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netinet/in.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "relayd.h"
#include "relay.h"

#define LIM_BUCKETS		1024
#define LIM_SWEEP_MS		10000	/* forget the idle at most so often */

struct lim_key {
	uint8_t			 lk_af;
	uint8_t			 lk_addr[16];
};

struct lim_ent {
	LIST_ENTRY(lim_ent)	 le_entry;
	struct lim_set		*le_set;
	struct lim_key		 le_key;
	uint32_t		 le_nconn;	/* sessions now */
	double			 le_tokens;	/* connections it may open */
	int64_t			 le_last;	/* tokens counted then, ms */
	int64_t			 le_until;	/* overloaded until, ms */
	int64_t			 le_logged;	/* its last line, ms */
	uint64_t		 le_nrefused;	/* since that line */
};
LIST_HEAD(lim_bucket, lim_ent);

struct lim_set {
	TAILQ_ENTRY(lim_set)	 ls_entry;
	char			 ls_name[MAX_NAME_SIZE + 2];
	uint32_t		 ls_n;
	uint32_t		 ls_rateint;	/* its relay's, 0: none */
	uint8_t			 ls_prefix4;	/* an overload table's */
	uint8_t			 ls_prefix6;
	int64_t			 ls_swept;
	struct lim_bucket	 ls_b[LIM_BUCKETS];
};
TAILQ_HEAD(lim_sets, lim_set);

static struct lim_sets	 lim_sets = TAILQ_HEAD_INITIALIZER(lim_sets);
static uint8_t		 lim_hashkey[16];
static int		 lim_keyed;

static int64_t		 lim_now(void);
static void		 lim_keyof(const struct sockaddr_storage *,
			    const struct relay_limits *, struct lim_key *);
static struct lim_set	*lim_set(char, const char *);
static struct lim_ent	*lim_find(struct lim_set *, const struct lim_key *,
			    int);
static void		 lim_sweep(struct lim_set *, int64_t);
static int		 lim_idle(struct lim_ent *, uint32_t, int64_t);
static void		 lim_overload(struct relay *, const struct lim_key *,
			    int64_t);
static int64_t		 lim_wait(struct relay_limits *, struct lim_ent *);

static int64_t
lim_now(void)
{
	struct timeval	 tv;

	getevtime(&tv);
	return ((int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000);
}

/* The source of ss: its address, or its prefix; an IPv4-mapped is IPv4. */
static void
lim_keyof(const struct sockaddr_storage *ss, const struct relay_limits *l,
    struct lim_key *k)
{
	const struct sockaddr_in6	*sin6;
	int				 bits;

	memset(k, 0, sizeof(*k));
	if (ss->ss_family == AF_INET) {
		k->lk_af = AF_INET;
		memcpy(k->lk_addr,
		    &((const struct sockaddr_in *)ss)->sin_addr, 4);
		bits = l->lim_prefix4;
	} else if (ss->ss_family == AF_INET6) {
		sin6 = (const struct sockaddr_in6 *)ss;
		if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
			k->lk_af = AF_INET;
			memcpy(k->lk_addr, &sin6->sin6_addr.s6_addr[12], 4);
			bits = l->lim_prefix4;
		} else {
			k->lk_af = AF_INET6;
			memcpy(k->lk_addr, &sin6->sin6_addr, 16);
			bits = l->lim_prefix6;
		}
	} else
		return;
	addr_masked(k->lk_addr, bits, k->lk_addr);
}

/* The set of a relay's counts ('r') or of an overload table ('o'). */
static struct lim_set *
lim_set(char kind, const char *name)
{
	struct lim_set	*ls;
	char		 key[sizeof(ls->ls_name)];
	int		 i;

	key[0] = kind;
	key[1] = ':';
	(void)strlcpy(key + 2, name, sizeof(key) - 2);
	TAILQ_FOREACH(ls, &lim_sets, ls_entry)
		if (strcmp(ls->ls_name, key) == 0)
			return (ls);
	if ((ls = calloc(1, sizeof(*ls))) == NULL)
		return (NULL);
	(void)strlcpy(ls->ls_name, key, sizeof(ls->ls_name));
	for (i = 0; i < LIM_BUCKETS; i++)
		LIST_INIT(&ls->ls_b[i]);
	TAILQ_INSERT_TAIL(&lim_sets, ls, ls_entry);
	return (ls);
}

/* k's entry in ls; with create, a new one (NULL: the set is full). */
static struct lim_ent *
lim_find(struct lim_set *ls, const struct lim_key *k, int create)
{
	struct lim_bucket	*b;
	struct lim_ent		*le;

	if (!lim_keyed) {
		arc4random_buf(lim_hashkey, sizeof(lim_hashkey));
		lim_keyed = 1;
	}
	b = &ls->ls_b[compat_siphash(lim_hashkey, k, sizeof(*k), 0) %
	    LIM_BUCKETS];
	LIST_FOREACH(le, b, le_entry)
		if (memcmp(&le->le_key, k, sizeof(*k)) == 0)
			return (le);
	if (!create || ls->ls_n >= RELAY_LIMIT_SOURCES ||
	    (le = calloc(1, sizeof(*le))) == NULL)
		return (NULL);
	le->le_set = ls;
	le->le_key = *k;
	le->le_last = -1;
	LIST_INSERT_HEAD(b, le, le_entry);
	ls->ls_n++;
	return (le);
}

/* Nothing to remember: no session, a whole rate, no overload. */
static int
lim_idle(struct lim_ent *le, uint32_t rateint, int64_t now)
{
	if (le->le_nconn > 0 || le->le_until > now)
		return (0);
	if (rateint == 0 || le->le_last == -1)
		return (1);
	return (now - le->le_last >= (int64_t)rateint * 1000);
}

/* The entries of ls that remember nothing go. */
static void
lim_sweep(struct lim_set *ls, int64_t now)
{
	struct lim_ent	*le, *next;
	int		 i;

	if (now - ls->ls_swept < LIM_SWEEP_MS &&
	    ls->ls_n < RELAY_LIMIT_SOURCES)
		return;
	ls->ls_swept = now;
	for (i = 0; i < LIM_BUCKETS; i++)
		for (le = LIST_FIRST(&ls->ls_b[i]); le != NULL; le = next) {
			next = LIST_NEXT(le, le_entry);
			if (!lim_idle(le, ls->ls_rateint, now))
				continue;
			LIST_REMOVE(le, le_entry);
			ls->ls_n--;
			free(le);
		}
}

/*
 * A connection from ss accepted by rlay: 0 when its source is within
 * the relay's limits (counted, in *lep, until relay_limit_release()), -1
 * when it is refused (counted and logged).
 */
int
relay_limit_accept(struct relay *rlay, struct sockaddr_storage *ss,
    struct lim_ent **lep)
{
	static struct log_ratelimit	 lr = LOG_RATELIMIT(60);
	struct relay_limits		*l = &rlay->rl_conf.lim;
	struct relay_stats		*st = relay_stats_mine(rlay);
	struct lim_set			*ls, *ol = NULL;
	struct lim_ent			*le, *oe;
	struct lim_key			 k;
	int64_t				 now = lim_now();
	const char			*why = NULL;
	char				 addr[INET6_ADDRSTRLEN];
	double				 full;

	*lep = NULL;
	lim_keyof(ss, l, &k);
	if (k.lk_af == 0 || (ls = lim_set('r', rlay->rl_conf.name)) == NULL)
		return (0);
	ls->ls_rateint = l->lim_rateint;
	lim_sweep(ls, now);
	if (l->lim_overload[0] != '\0' &&
	    (ol = lim_set('o', l->lim_overload)) != NULL) {
		lim_sweep(ol, now);
		if ((oe = lim_find(ol, &k, 0)) != NULL && oe->le_until > now) {
			why = "in overload table";
			st->lim_refused[RELAY_LIM_OVERLOAD]++;
			goto refuse;
		}
	}
	if ((le = lim_find(ls, &k, 1)) == NULL)
		return (0);
	if (l->lim_rateint > 0) {
		full = l->lim_rate;
		if (le->le_last == -1)
			le->le_tokens = full;
		else {
			le->le_tokens += (double)(now - le->le_last) *
			    l->lim_rate / (l->lim_rateint * 1000.0);
			if (le->le_tokens > full)
				le->le_tokens = full;
		}
		le->le_last = now;
		if (le->le_tokens < 1) {
			why = "max-src-conn-rate";
			st->lim_refused[RELAY_LIM_RATE]++;
			lim_overload(rlay, &k, now);
			goto refuse;
		}
		le->le_tokens -= 1;
	}
	if (l->lim_maxconn > 0 && le->le_nconn >= l->lim_maxconn) {
		why = "max-src-conn";
		st->lim_refused[RELAY_LIM_CONN]++;
		lim_overload(rlay, &k, now);
		goto refuse;
	}
	le->le_nconn++;
	*lep = le;
	return (0);
 refuse:
	if (log_ratelimit(&lr))
		log_info("relay %s: %s refused (%s), %llu refused in the last "
		    "minute", rlay->rl_conf.name,
		    print_host(ss, addr, sizeof(addr)) != NULL ? addr : "?",
		    why, (unsigned long long)lr.count);
	return (-1);
}

/* A source went over a limit: into the relay's overload table, if any. */
static void
lim_overload(struct relay *rlay, const struct lim_key *k, int64_t now)
{
	struct relay_limits	*l = &rlay->rl_conf.lim;
	struct lim_set		*ol;
	struct lim_ent		*oe;

	if (l->lim_overload[0] == '\0' ||
	    (ol = lim_set('o', l->lim_overload)) == NULL)
		return;
	ol->ls_prefix4 = l->lim_prefix4;
	ol->ls_prefix6 = l->lim_prefix6;
	if ((oe = lim_find(ol, k, 1)) == NULL)
		return;
	oe->le_until = now + (int64_t)l->lim_expire * 1000;
	if (l->lim_flush)
		relay_limit_flush(l->lim_overload, k->lk_af, k->lk_addr);
}

/* A session counted by relay_limit_accept() is over. */
void
relay_limit_release(struct lim_ent *le)
{
	if (le != NULL && le->le_nconn > 0)
		le->le_nconn--;
}

/*
 * A source went into the overload table "table" (here, or in the kernel
 * as the parent saw): the sessions of the relays with "overload <table>
 * flush" from it end.
 */
void
relay_limit_flush(const char *table, int af, const uint8_t *addr)
{
	struct rsession	*con;
	struct relay	*rlay;
	struct lim_key	 k;

	/* a session ends with its links: each search starts anew */
	for (;;) {
		TAILQ_FOREACH(con, &relay_sessions, se_entry) {
			rlay = con->se_relay;
			if (RELAY_LINK(con) || con->se_dgram ||
			    !rlay->rl_conf.lim.lim_flush ||
			    strcmp(rlay->rl_conf.lim.lim_overload, table) != 0)
				continue;
			lim_keyof(&con->se_in.ss, &rlay->rl_conf.lim, &k);
			if (k.lk_af == af && memcmp(k.lk_addr, addr, 16) == 0)
				break;
		}
		if (con == NULL)
			return;
		relay_close(con, "overload flush", 1);
	}
}

/* The parent saw a source go into an overload table in the kernel. */
void
relay_limit_flushed(struct imsg *imsg)
{
	struct ctl_limflush	 lf;

	if (IMSG_DATA_SIZE(imsg) != sizeof(lf))
		fatalx("%s: invalid size", __func__);
	memcpy(&lf, imsg->data, sizeof(lf));
	lf.table[sizeof(lf.table) - 1] = '\0';
	relay_limit_flush(lf.table, lf.af, lf.addr);
}

/*
 * A request to rlay from ss (an HTTP/1.1 request, an HTTP/2 stream, a
 * DNS query): 0 when its source is within max-src-request-rate (a
 * bucket of burst requests that fills at N in S seconds), else the
 * seconds until it may ask again, for Retry-After; the refusal is
 * counted and, once a minute for a source, logged.  A session passes
 * held: its source's bucket is found once and kept there for its next
 * requests, until relay_limit_release().
 */
int
relay_limit_request(struct relay *rlay, struct sockaddr_storage *ss,
    struct lim_ent **held)
{
	struct relay_limits	*l = &rlay->rl_conf.lim;
	struct lim_set		*ls;
	struct lim_ent		*le;
	struct lim_key		 k;
	int64_t			 now;
	char			 addr[INET6_ADDRSTRLEN];

	if (!RELAY_REQLIMITED(l))
		return (0);
	now = lim_now();
	if (held != NULL && *held != NULL)
		le = *held;
	else {
		lim_keyof(ss, l, &k);
		if (k.lk_af == 0 ||
		    (ls = lim_set('q', rlay->rl_conf.name)) == NULL)
			return (0);
		/* a bucket is whole again after burst / rate */
		ls->ls_rateint = (uint32_t)(((uint64_t)l->lim_reqburst *
		    l->lim_reqint + l->lim_req - 1) / l->lim_req);
		lim_sweep(ls, now);
		if ((le = lim_find(ls, &k, 1)) == NULL)
			return (0);
		/* a session's next requests find it here, kept for them */
		if (held != NULL) {
			le->le_nconn++;
			*held = le;
		}
	}
	if (le->le_last == -1)
		le->le_tokens = l->lim_reqburst;
	else {
		le->le_tokens += (double)(now - le->le_last) * l->lim_req /
		    (l->lim_reqint * 1000.0);
		if (le->le_tokens > l->lim_reqburst)
			le->le_tokens = l->lim_reqburst;
	}
	le->le_last = now;
	if (le->le_tokens >= 1) {
		le->le_tokens -= 1;
		return (0);
	}
	relay_stats_mine(rlay)->lim_refused[RELAY_LIM_REQUEST]++;
	le->le_nrefused++;
	if (le->le_logged == 0 || now - le->le_logged >= 60000) {
		log_info("relay %s: %s over max-src-request-rate, %llu "
		    "%s since the last line for it", rlay->rl_conf.name,
		    print_host(ss, addr, sizeof(addr)) != NULL ? addr : "?",
		    (unsigned long long)le->le_nrefused,
		    rlay->rl_proto->type == RELAY_PROTO_DNS ?
		    "queries dropped" : "requests answered 429");
		le->le_logged = now;
		le->le_nrefused = 0;
	}
	/* until a whole request is in the bucket, in seconds, at least 1 */
	return ((int)(lim_wait(l, le) / 1000 + 1));
}

/* The milliseconds until le's bucket has a whole request again. */
static int64_t
lim_wait(struct relay_limits *l, struct lim_ent *le)
{
	if (le->le_tokens >= 1)
		return (0);
	return ((int64_t)((1 - le->le_tokens) * l->lim_reqint * 1000 /
	    l->lim_req));
}

/*
 * relay_limit_request() refused a request of cre's session (held): cre
 * is not read until ev fires, when its source may make a request again
 * (at most RELAY_LIMIT_HOLD_MS from now).  What the client sends
 * meanwhile waits in its socket, so that a source that asks on
 * regardless costs a relay process a refusal a connection so often,
 * not all of its time.
 */
void
relay_limit_hold(struct ctl_relay_event *cre, struct event *ev)
{
	struct rsession		*con = cre->con;
	struct relay_limits	*l = &con->se_relay->rl_conf.lim;
	struct timeval		 tv;
	int64_t			 ms = 1;

	if (con->se_limq != NULL && RELAY_REQLIMITED(l))
		ms = lim_wait(l, con->se_limq) + 1;
	if (ms > RELAY_LIMIT_HOLD_MS)
		ms = RELAY_LIMIT_HOLD_MS;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	relay_read_off(cre);
	evtimer_add(ev, &tv);
}

/* One source of an overload table, for relayctl show overload. */
static void
lim_show(struct privsep *ps, uint32_t peerid, struct lim_set *ls,
    struct lim_ent *le, int64_t now)
{
	struct ctl_overload	 co;

	memset(&co, 0, sizeof(co));
	(void)strlcpy(co.table, ls->ls_name + 2, sizeof(co.table));
	co.af = le->le_key.lk_af;
	memcpy(co.addr, le->le_key.lk_addr, sizeof(co.addr));
	co.prefix = co.af == AF_INET ? ls->ls_prefix4 : ls->ls_prefix6;
	co.expires = (le->le_until - now + 999) / 1000;
	co.pid = getpid();
	proc_compose_imsg(ps, PROC_PFE, -1, IMSG_CTL_OVERLOAD, peerid, -1,
	    &co, sizeof(co));
}

/*
 * relayctl show overload: the sources this relay process holds in its
 * overload tables, to pfe for the client peerid, then an end.
 */
void
relay_limit_show(struct privsep *ps, uint32_t peerid)
{
	struct lim_set	*ls;
	struct lim_ent	*le;
	int64_t		 now = lim_now();
	int		 i;

	TAILQ_FOREACH(ls, &lim_sets, ls_entry) {
		if (ls->ls_name[0] != 'o')
			continue;
		for (i = 0; i < LIM_BUCKETS; i++)
			LIST_FOREACH(le, &ls->ls_b[i], le_entry)
				if (le->le_until > now)
					lim_show(ps, peerid, ls, le, now);
	}
	proc_compose_imsg(ps, PROC_PFE, -1, IMSG_CTL_END, peerid, -1, NULL, 0);
}

/* relayctl overload delete|flush: out of this process's table. */
void
relay_limit_delete(struct ctl_overload *co)
{
	struct lim_set	*ls;
	struct lim_ent	*le, *next;
	struct lim_key	 k;
	int		 i;

	co->table[sizeof(co->table) - 1] = '\0';
	TAILQ_FOREACH(ls, &lim_sets, ls_entry)
		if (ls->ls_name[0] == 'o' &&
		    strcmp(ls->ls_name + 2, co->table) == 0)
			break;
	if (ls == NULL)
		return;
	if (co->af == AF_INET || co->af == AF_INET6) {
		memset(&k, 0, sizeof(k));
		k.lk_af = co->af;
		addr_masked(co->addr, co->af == AF_INET ? ls->ls_prefix4 :
		    ls->ls_prefix6, k.lk_addr);
		if ((le = lim_find(ls, &k, 0)) != NULL)
			le->le_until = 0;
		return;
	}
	for (i = 0; i < LIM_BUCKETS; i++)
		for (le = LIST_FIRST(&ls->ls_b[i]); le != NULL; le = next) {
			next = LIST_NEXT(le, le_entry);
			le->le_until = 0;
		}
}
