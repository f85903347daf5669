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
 * agentx: pfe as an AgentX subagent (RFC 2741) of the system's SNMP
 * master agent (net-snmp's snmpd with "master agentx" on Linux, snmpd(8)
 * on OpenBSD), answering the OPENBSD-RELAYD-MIB objects under
 * relaydInfo, 1.3.6.1.4.1.30155.3.2, as OpenBSD's relayd does.
 *
 * Only what a read-only subagent needs is done: Open, Register, then
 * Get, GetNext and GetBulk answered from pfe's state; sets are refused
 * (notWritable), and no notification is sent.  The parent connects the
 * master's socket and hands it over (pfe is chrooted); a lost master is
 * asked for again every AGENTX_RECONNECT seconds.  Everything the master
 * sends is checked against the lengths it gives; a malformed PDU closes
 * the session.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <netinet/in.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "relayd.h"

#define AGENTX_RECONNECT	5	/* s between tries */
#define AGENTX_MAXPDU		(64 * 1024)
#define AGENTX_MAXQUEUED	(4 * 1024 * 1024)	/* answers unread */
#define AGENTX_MAXSUBIDS	128
#define AGENTX_MAXVARBINDS	512	/* of one answer */

/* PDU types and header flags, RFC 2741 6.1 */
enum {
	AX_OPEN = 1, AX_CLOSE, AX_REGISTER, AX_UNREGISTER, AX_GET, AX_GETNEXT,
	AX_GETBULK, AX_TESTSET, AX_COMMITSET, AX_UNDOSET, AX_CLEANUPSET,
	AX_NOTIFY, AX_PING, AX_INDEXALLOCATE, AX_INDEXDEALLOCATE,
	AX_ADDAGENTCAPS, AX_REMOVEAGENTCAPS, AX_RESPONSE
};
#define AX_FLAG_NONDEFAULT_CONTEXT	0x08
#define AX_FLAG_NETWORK_BYTE_ORDER	0x10

/* varbind types, RFC 2741 5.4 */
#define AX_INTEGER		2
#define AX_OCTET_STRING		4
#define AX_NULL			5
#define AX_COUNTER64		70
#define AX_GAUGE32		66
#define AX_NOSUCHOBJECT		128
#define AX_NOSUCHINSTANCE	129
#define AX_ENDOFMIBVIEW		130

#define AX_ERR_GENERR		5
#define AX_ERR_NOTWRITABLE	17

struct ax_oid {
	uint32_t	 id[AGENTX_MAXSUBIDS];
	unsigned int	 n;
};

struct ax_value {
	struct ax_oid	 oid;
	int		 type;
	uint64_t	 num;
	char		 str[RELAYD_HOSTNAME_MAX + 1];
	size_t		 len;
};

struct ax_mib {
	struct ax_value	*v;
	size_t		 n;
	size_t		 size;
};

/* a PDU being read */
struct ax_pdu {
	const uint8_t	*p;
	size_t		 left;
	int		 big;		/* network byte order */
};

static struct relayd		*env;
static struct bufferevent	*ax_bev;
static struct event		 ax_retry;
static uint32_t			 ax_session;
static uint32_t			 ax_packetid;
static int			 ax_registered;

/* relaydInfo */
static const uint32_t	 relayd_info[] = { 1, 3, 6, 1, 4, 1, 30155, 3, 2 };
#define RELAYD_INFO_LEN	nitems(relayd_info)

static void	 agentx_ask(void);
static void	 agentx_retry(int, short, void *);
static void	 agentx_read(struct bufferevent *, void *);
static void	 agentx_error(struct bufferevent *, short, void *);
static void	 agentx_close(const char *);
static void	 agentx_register(void);

/* Reading, in the byte order the PDU's flags say. */
static int
ax_get16(struct ax_pdu *x, uint16_t *v)
{
	if (x->left < 2)
		return (-1);
	*v = x->big ? (x->p[0] << 8 | x->p[1]) : (x->p[1] << 8 | x->p[0]);
	x->p += 2;
	x->left -= 2;
	return (0);
}

static int
ax_get32(struct ax_pdu *x, uint32_t *v)
{
	if (x->left < 4)
		return (-1);
	if (x->big)
		*v = (uint32_t)x->p[0] << 24 | (uint32_t)x->p[1] << 16 |
		    (uint32_t)x->p[2] << 8 | x->p[3];
	else
		*v = (uint32_t)x->p[3] << 24 | (uint32_t)x->p[2] << 16 |
		    (uint32_t)x->p[1] << 8 | x->p[0];
	x->p += 4;
	x->left -= 4;
	return (0);
}

static int
ax_skip(struct ax_pdu *x, size_t n)
{
	if (x->left < n)
		return (-1);
	x->p += n;
	x->left -= n;
	return (0);
}

/* An OID (RFC 2741 5.1): include is its "include" field. */
static int
ax_get_oid(struct ax_pdu *x, struct ax_oid *o, int *include)
{
	uint8_t		 n, prefix;
	unsigned int	 i;

	if (x->left < 4)
		return (-1);
	n = x->p[0];
	prefix = x->p[1];
	if (include != NULL)
		*include = x->p[2];
	(void)ax_skip(x, 4);
	o->n = 0;
	if (prefix != 0) {
		if (n + 5 > AGENTX_MAXSUBIDS)
			return (-1);
		o->id[0] = 1;
		o->id[1] = 3;
		o->id[2] = 6;
		o->id[3] = 1;
		o->id[4] = prefix;
		o->n = 5;
	} else if (n > AGENTX_MAXSUBIDS)
		return (-1);
	for (i = 0; i < n; i++)
		if (ax_get32(x, &o->id[o->n++]) == -1)
			return (-1);
	return (0);
}

static int
ax_get_octets(struct ax_pdu *x, char *buf, size_t size)
{
	uint32_t	 len;

	if (ax_get32(x, &len) == -1 || len > x->left)
		return (-1);
	if (buf != NULL) {
		if (len >= size)
			return (-1);
		memcpy(buf, x->p, len);
		buf[len] = '\0';
	}
	return (ax_skip(x, (len + 3) & ~3U));
}

/* Writing: always in network byte order. */
static void
ax_put16(struct evbuffer *b, uint16_t v)
{
	uint8_t	 c[2] = { v >> 8, v & 0xff };

	evbuffer_add(b, c, sizeof(c));
}

static void
ax_put32(struct evbuffer *b, uint32_t v)
{
	uint8_t	 c[4] = { v >> 24, (v >> 16) & 0xff, (v >> 8) & 0xff,
		    v & 0xff };

	evbuffer_add(b, c, sizeof(c));
}

static void
ax_put_oid(struct evbuffer *b, const struct ax_oid *o, int include)
{
	uint8_t		 h[4] = { o->n, 0, include, 0 };
	unsigned int	 i;

	evbuffer_add(b, h, sizeof(h));
	for (i = 0; i < o->n; i++)
		ax_put32(b, o->id[i]);
}

static void
ax_put_octets(struct evbuffer *b, const char *s, size_t len)
{
	static const uint8_t	 pad[3];

	ax_put32(b, len);
	evbuffer_add(b, s, len);
	if (len % 4)
		evbuffer_add(b, pad, 4 - len % 4);
}

/* A header, and the PDU's body after it, sent. */
static void
ax_send(uint8_t type, uint8_t flags, uint32_t transid, uint32_t packetid,
    struct evbuffer *body)
{
	struct evbuffer	*out;
	uint8_t		 h[4] = { 1, type,
			    flags | AX_FLAG_NETWORK_BYTE_ORDER, 0 };

	if (ax_bev == NULL)
		return;
	out = bufferevent_get_output(ax_bev);
	evbuffer_add(out, h, sizeof(h));
	ax_put32(out, ax_session);
	ax_put32(out, transid);
	ax_put32(out, packetid);
	ax_put32(out, evbuffer_get_length(body));
	evbuffer_add_buffer(out, body);
}

static int
oid_cmp(const struct ax_oid *a, const struct ax_oid *b)
{
	unsigned int	 i;

	for (i = 0; i < a->n && i < b->n; i++)
		if (a->id[i] != b->id[i])
			return (a->id[i] < b->id[i] ? -1 : 1);
	return (a->n < b->n ? -1 : a->n > b->n);
}

static int
value_cmp(const void *a, const void *b)
{
	return (oid_cmp(&((const struct ax_value *)a)->oid,
	    &((const struct ax_value *)b)->oid));
}

/*
 * In OID order.  A merge sort of our own: glibc's qsort asks the kernel
 * for the memory size (sysinfo), which pfe's sandbox does not allow.
 */
static int
mib_sort(struct ax_mib *m)
{
	struct ax_value	*tmp, *a = m->v, *b, *t;
	size_t		 w, i, l, r, lend, rend, k;

	if (m->n < 2)
		return (0);
	if ((tmp = reallocarray(NULL, m->n, sizeof(*tmp))) == NULL)
		return (-1);
	b = tmp;
	for (w = 1; w < m->n; w *= 2) {
		for (i = 0; i < m->n; i += 2 * w) {
			l = i;
			lend = r = i + w < m->n ? i + w : m->n;
			rend = i + 2 * w < m->n ? i + 2 * w : m->n;
			for (k = i; k < rend; k++)
				b[k] = (l < lend && (r >= rend ||
				    value_cmp(&a[l], &a[r]) <= 0)) ?
				    a[l++] : a[r++];
		}
		t = a;
		a = b;
		b = t;
	}
	if (a != m->v)
		memcpy(m->v, a, m->n * sizeof(*a));
	free(tmp);
	return (0);
}

/* relaydInfo.table.1.column.index = value */
static struct ax_value *
mib_add(struct ax_mib *m, uint32_t table, uint32_t col, uint32_t idx,
    int type)
{
	struct ax_value	*v;
	unsigned int	 i;

	if (m->n == m->size) {
		if ((v = reallocarray(m->v, m->size + 64, sizeof(*v))) ==
		    NULL)
			return (NULL);
		m->v = v;
		m->size += 64;
	}
	v = &m->v[m->n++];
	memset(v, 0, sizeof(*v));
	for (i = 0; i < RELAYD_INFO_LEN; i++)
		v->oid.id[i] = relayd_info[i];
	v->oid.id[i++] = table;
	v->oid.id[i++] = 1;
	v->oid.id[i++] = col;
	v->oid.id[i++] = idx;
	v->oid.n = i;
	v->type = type;
	return (v);
}

static void
mib_int(struct ax_mib *m, uint32_t t, uint32_t c, uint32_t i, int type,
    uint64_t num)
{
	struct ax_value	*v;

	if ((v = mib_add(m, t, c, i, type)) != NULL)
		v->num = num;
}

static void
mib_str(struct ax_mib *m, uint32_t t, uint32_t c, uint32_t i,
    const void *s, size_t len)
{
	struct ax_value	*v;

	if ((v = mib_add(m, t, c, i, AX_OCTET_STRING)) == NULL)
		return;
	if (len >= sizeof(v->str))
		len = sizeof(v->str) - 1;
	memcpy(v->str, s, len);
	v->len = len;
}

static void
mib_addr(struct ax_mib *m, uint32_t t, uint32_t c, uint32_t i,
    struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		mib_str(m, t, c, i, &((struct sockaddr_in *)ss)->sin_addr, 4);
	else if (ss->ss_family == AF_INET6)
		mib_str(m, t, c, i, &((struct sockaddr_in6 *)ss)->sin6_addr,
		    16);
	else
		mib_str(m, t, c, i, "", 0);
}

static int
addrtype(struct sockaddr_storage *ss)
{
	return (ss->ss_family == AF_INET ? 1 : ss->ss_family == AF_INET6 ?
	    2 : 0);
}

/*
 * Every object of relaydInfo now, in OID order.  The columns are those
 * of OPENBSD-RELAYD-MIB: redirects (1), relays (2), routers (3), their
 * routes (4), hosts (5), sessions (6: none here, they live in the relay
 * processes) and tables (7).
 */
static int
mib_collect(struct ax_mib *m)
{
	struct rdr		*rdr;
	struct relay		*rlay;
	struct relay_stats	 crs;
	struct router		*rt;
	struct host		*h;
	struct table		*tb;
	uint32_t		 id, nr;
	int			 i, st;

	TAILQ_FOREACH(rdr, &env->sc_rdrs, entry) {
		id = rdr->conf.id;
		st = (rdr->conf.flags & F_DISABLE) ? 1 :
		    rdr->state == RDR_ACTIVE ? 0 :
		    rdr->state == RDR_BACKUP ? 3 : 2;
		mib_int(m, 1, 1, id, AX_INTEGER, id);
		mib_int(m, 1, 2, id, AX_INTEGER, st);
		mib_str(m, 1, 3, id, rdr->conf.name, strlen(rdr->conf.name));
		mib_int(m, 1, 4, id, AX_COUNTER64, rdr->stats.sessions);
		mib_int(m, 1, 5, id, AX_GAUGE32, (uint32_t)rdr->rate.avg);
		mib_int(m, 1, 6, id, AX_GAUGE32, (uint32_t)rdr->rate.last);
		mib_int(m, 1, 7, id, AX_GAUGE32,
		    (uint32_t)rdr->rate.avg_hour);
		mib_int(m, 1, 8, id, AX_GAUGE32,
		    (uint32_t)rdr->rate.last_hour);
		mib_int(m, 1, 9, id, AX_GAUGE32, (uint32_t)rdr->rate.avg_day);
		mib_int(m, 1, 10, id, AX_GAUGE32,
		    (uint32_t)rdr->rate.last_day);
	}
	TAILQ_FOREACH(rlay, env->sc_relays, rl_entry) {
		id = rlay->rl_conf.id;
		relay_stats_sum(rlay, &crs);
		mib_int(m, 2, 1, id, AX_INTEGER, id);
		mib_int(m, 2, 2, id, AX_INTEGER,
		    (rlay->rl_conf.flags & F_DISABLE) ? 0 : 1);
		mib_str(m, 2, 3, id, rlay->rl_conf.name,
		    strlen(rlay->rl_conf.name));
		mib_int(m, 2, 4, id, AX_COUNTER64, crs.sessions);
		mib_int(m, 2, 5, id, AX_GAUGE32, (uint32_t)crs.avg);
		mib_int(m, 2, 6, id, AX_GAUGE32, (uint32_t)crs.last);
		mib_int(m, 2, 7, id, AX_GAUGE32, (uint32_t)crs.avg_hour);
		mib_int(m, 2, 8, id, AX_GAUGE32, (uint32_t)crs.last_hour);
		mib_int(m, 2, 9, id, AX_GAUGE32, (uint32_t)crs.avg_day);
		mib_int(m, 2, 10, id, AX_GAUGE32, (uint32_t)crs.last_day);
	}
	nr = 0;
	TAILQ_FOREACH(rt, &env->sc_routers, entry) {
		id = rt->conf.id;
		mib_int(m, 3, 1, id, AX_INTEGER, id);
		mib_int(m, 3, 2, id, AX_INTEGER, rt->conf.table);
		mib_int(m, 3, 3, id, AX_INTEGER,
		    (rt->conf.flags & F_DISABLE) ? 1 : 0);
		mib_str(m, 3, 4, id, rt->conf.name, strlen(rt->conf.name));
		mib_str(m, 3, 5, id, rt->conf.label, strlen(rt->conf.label));
		mib_int(m, 3, 6, id, AX_INTEGER, rt->conf.rtable);
		for (i = 0; i < rt->conf.nroutes; i++) {
			nr++;
			mib_int(m, 4, 1, nr, AX_INTEGER, nr);
			mib_addr(m, 4, 2, nr, &rt->conf.routes[i]);
			mib_int(m, 4, 3, nr, AX_INTEGER,
			    addrtype(&rt->conf.routes[i]));
			mib_int(m, 4, 4, nr, AX_INTEGER, rt->conf.prefixlen[i]);
			mib_int(m, 4, 5, nr, AX_INTEGER, id);
		}
	}
	TAILQ_FOREACH(h, &env->sc_hosts, globalentry) {
		id = h->conf.id;
		st = (h->flags & F_DISABLE) ? 1 : h->up == HOST_UP ? 0 :
		    h->up == HOST_DOWN ? 2 : 3;
		mib_int(m, 5, 1, id, AX_INTEGER, id);
		mib_int(m, 5, 2, id, AX_INTEGER, h->conf.parentid);
		mib_int(m, 5, 3, id, AX_INTEGER, h->conf.tableid);
		mib_str(m, 5, 4, id, h->conf.name, strlen(h->conf.name));
		mib_addr(m, 5, 5, id, &h->conf.ss);
		mib_int(m, 5, 6, id, AX_INTEGER, addrtype(&h->conf.ss));
		mib_int(m, 5, 7, id, AX_INTEGER, st);
		mib_int(m, 5, 8, id, AX_COUNTER64, h->check_cnt);
		mib_int(m, 5, 9, id, AX_COUNTER64, h->up_cnt);
		mib_int(m, 5, 10, id, AX_INTEGER, h->he);
	}
	TAILQ_FOREACH(tb, env->sc_tables, entry) {
		id = tb->conf.id;
		mib_int(m, 7, 1, id, AX_INTEGER, id);
		mib_str(m, 7, 2, id, tb->conf.name, strlen(tb->conf.name));
		mib_int(m, 7, 3, id, AX_INTEGER, TAILQ_EMPTY(&tb->hosts) ? 1 :
		    (tb->conf.flags & F_DISABLE) ? 2 : 0);
	}
	return (mib_sort(m));
}

static void
ax_put_varbind(struct evbuffer *b, const struct ax_oid *name, int type,
    const struct ax_value *v)
{
	ax_put16(b, type);
	ax_put16(b, 0);
	ax_put_oid(b, name, 0);
	switch (type) {
	case AX_INTEGER:
	case AX_GAUGE32:
		ax_put32(b, (uint32_t)v->num);
		break;
	case AX_COUNTER64:
		ax_put32(b, v->num >> 32);
		ax_put32(b, v->num & 0xffffffff);
		break;
	case AX_OCTET_STRING:
		ax_put_octets(b, v->str, v->len);
		break;
	default:
		break;
	}
}

/* The first object after start (at it too with include), before end. */
static const struct ax_value *
mib_next(struct ax_mib *m, const struct ax_oid *start, int include,
    const struct ax_oid *end)
{
	size_t	 i;
	int	 c;

	for (i = 0; i < m->n; i++) {
		c = oid_cmp(&m->v[i].oid, start);
		if (c > 0 || (c == 0 && include))
			break;
	}
	if (i == m->n || (end->n > 0 && oid_cmp(&m->v[i].oid, end) >= 0))
		return (NULL);
	return (&m->v[i]);
}

static const struct ax_value *
mib_get(struct ax_mib *m, const struct ax_oid *o)
{
	struct ax_value	 key;

	key.oid = *o;
	return (bsearch(&key, m->v, m->n, sizeof(*m->v), value_cmp));
}

/* A Response's sysUpTime (0: the master's), error and index. */
static void
ax_put_status(struct evbuffer *b, uint16_t error, uint16_t index)
{
	ax_put32(b, 0);
	ax_put16(b, error);
	ax_put16(b, index);
}

/* The object after start, or the end of the view. */
static void
ax_put_next(struct evbuffer *b, struct ax_mib *m, const struct ax_oid *start,
    int include, const struct ax_oid *end)
{
	const struct ax_value	*v;

	if ((v = mib_next(m, start, include, end)) != NULL)
		ax_put_varbind(b, &v->oid, v->type, v);
	else
		ax_put_varbind(b, start, AX_ENDOFMIBVIEW, NULL);
}

/*
 * Get, GetNext, GetBulk: the answer, from the state of now.  Returns -1
 * for a malformed PDU.
 */
static int
agentx_request(uint8_t type, struct ax_pdu *x, struct evbuffer *b)
{
	struct ax_mib		 m;
	struct ax_oid		 start[AGENTX_MAXVARBINDS];
	int			 include[AGENTX_MAXVARBINDS];
	struct ax_oid		 ends[AGENTX_MAXVARBINDS];
	const struct ax_value	*v;
	uint16_t		 nonrep = 0, maxrep = 0;
	unsigned int		 n = 0, i, r, count = 0;
	int			 done;

	if (type == AX_GETBULK &&
	    (ax_get16(x, &nonrep) == -1 || ax_get16(x, &maxrep) == -1))
		return (-1);
	while (x->left > 0) {
		if (n == AGENTX_MAXVARBINDS ||
		    ax_get_oid(x, &start[n], &include[n]) == -1 ||
		    ax_get_oid(x, &ends[n], NULL) == -1)
			return (-1);
		n++;
	}
	memset(&m, 0, sizeof(m));
	(void)mib_collect(&m);
	ax_put_status(b, 0, 0);
	if (type == AX_GET) {
		for (i = 0; i < n; i++) {
			if ((v = mib_get(&m, &start[i])) != NULL)
				ax_put_varbind(b, &start[i], v->type, v);
			else
				ax_put_varbind(b, &start[i], AX_NOSUCHOBJECT,
				    NULL);
		}
	} else if (type == AX_GETNEXT) {
		for (i = 0; i < n; i++)
			ax_put_next(b, &m, &start[i], include[i], &ends[i]);
	} else {
		/* GetBulk: the non-repeaters once, then the rest in turn */
		if (nonrep > n)
			nonrep = n;
		for (i = 0; i < nonrep; i++)
			ax_put_next(b, &m, &start[i], include[i], &ends[i]);
		for (r = 0; r < maxrep && count < AGENTX_MAXVARBINDS; r++) {
			done = 1;
			for (i = nonrep; i < n; i++) {
				v = mib_next(&m, &start[i], include[i],
				    &ends[i]);
				if (v == NULL) {
					ax_put_varbind(b, &start[i],
					    AX_ENDOFMIBVIEW, NULL);
				} else {
					ax_put_varbind(b, &v->oid, v->type, v);
					start[i] = v->oid;
					include[i] = 0;
					done = 0;
				}
				count++;
			}
			if (done)
				break;
		}
	}
	free(m.v);
	return (0);
}

/* One PDU of the master; -1 closes the session. */
static int
agentx_pdu(const uint8_t *hdr, const uint8_t *body, size_t len)
{
	struct ax_pdu	 x;
	struct evbuffer	*b;
	char		 ctx[sizeof(env->sc_conf.agentx_context)];
	uint32_t	 session, transid, packetid;
	uint16_t	 err;
	uint8_t		 type = hdr[1], flags = hdr[2];
	int		 ret = 0;

	x.big = (flags & AX_FLAG_NETWORK_BYTE_ORDER) != 0;
	x.p = hdr + 4;
	x.left = 12;
	(void)ax_get32(&x, &session);
	(void)ax_get32(&x, &transid);
	(void)ax_get32(&x, &packetid);
	x.p = body;
	x.left = len;
	if (hdr[0] != 1) {
		log_warnx("agentx: version %u from the master", hdr[0]);
		return (-1);
	}
	if (flags & AX_FLAG_NONDEFAULT_CONTEXT) {
		if (ax_get_octets(&x, ctx, sizeof(ctx)) == -1)
			return (-1);
	} else
		ctx[0] = '\0';
	if ((b = evbuffer_new()) == NULL)
		fatal("%s", __func__);
	switch (type) {
	case AX_RESPONSE:
		if (ax_skip(&x, 4) == -1 || ax_get16(&x, &err) == -1) {
			ret = -1;
			break;
		}
		if (packetid == 1) {			/* Open */
			if (err != 0) {
				log_warnx("agentx: the master refused the "
				    "session (error %u)", err);
				ret = -1;
				break;
			}
			ax_session = session;
			agentx_register();
		} else if (packetid == 2) {		/* Register */
			if (err != 0)
				log_warnx("agentx: the master refused "
				    "relaydInfo (error %u)", err);
			else {
				ax_registered = 1;
				log_info("agentx: registered with the master "
				    "at %s", env->sc_conf.agentx_path);
			}
		}
		break;
	case AX_GET:
	case AX_GETNEXT:
	case AX_GETBULK:
		if (strcmp(ctx, env->sc_conf.agentx_context) != 0 ||
		    agentx_request(type, &x, b) == -1) {
			evbuffer_drain(b, evbuffer_get_length(b));
			if (strcmp(ctx, env->sc_conf.agentx_context) == 0) {
				ret = -1;
				break;
			}
			ax_put_status(b, AX_ERR_GENERR, 0);
		}
		ax_send(AX_RESPONSE, 0, transid, packetid, b);
		break;
	case AX_TESTSET:
		/* read only: the first varbind is not writable */
		ax_put_status(b, AX_ERR_NOTWRITABLE, 1);
		ax_send(AX_RESPONSE, 0, transid, packetid, b);
		break;
	case AX_COMMITSET:
	case AX_UNDOSET:
		ax_put_status(b, 0, 0);
		ax_send(AX_RESPONSE, 0, transid, packetid, b);
		break;
	case AX_CLEANUPSET:
		break;
	case AX_CLOSE:
		log_info("agentx: the master closed the session");
		ret = -1;
		break;
	default:
		log_warnx("agentx: unexpected PDU type %u", type);
		ret = -1;
		break;
	}
	evbuffer_free(b);
	return (ret);
}

static void
agentx_register(void)
{
	struct evbuffer	*b;
	struct ax_oid	 o;
	unsigned int	 i;
	uint8_t		 f[4] = { 0, 127, 0, 0 };	/* timeout, priority */
	uint8_t		 flags = 0;

	if ((b = evbuffer_new()) == NULL)
		fatal("%s", __func__);
	if (env->sc_conf.agentx_context[0] != '\0') {
		flags |= AX_FLAG_NONDEFAULT_CONTEXT;
		ax_put_octets(b, env->sc_conf.agentx_context,
		    strlen(env->sc_conf.agentx_context));
	}
	evbuffer_add(b, f, sizeof(f));
	for (i = 0; i < RELAYD_INFO_LEN; i++)
		o.id[i] = relayd_info[i];
	o.n = i;
	ax_put_oid(b, &o, 0);
	ax_send(AX_REGISTER, flags, 0, 2, b);
	evbuffer_free(b);
}

static void
agentx_read(struct bufferevent *bev, void *arg)
{
	struct evbuffer	*in = bufferevent_get_input(bev);
	uint8_t		*p, hdr[20];
	uint32_t	 len;

	(void)arg;
	while (evbuffer_get_length(in) >= sizeof(hdr)) {
		p = evbuffer_pullup(in, sizeof(hdr));
		memcpy(hdr, p, sizeof(hdr));
		if (hdr[2] & AX_FLAG_NETWORK_BYTE_ORDER)
			len = (uint32_t)hdr[16] << 24 | hdr[17] << 16 |
			    hdr[18] << 8 | hdr[19];
		else
			len = (uint32_t)hdr[19] << 24 | hdr[18] << 16 |
			    hdr[17] << 8 | hdr[16];
		if (len > AGENTX_MAXPDU || len % 4) {
			agentx_close("a PDU of a bad length");
			return;
		}
		if (evbuffer_get_length(in) < sizeof(hdr) + len)
			return;
		p = evbuffer_pullup(in, sizeof(hdr) + len);
		if (agentx_pdu(hdr, p + sizeof(hdr), len) == -1) {
			agentx_close("a PDU it could not use");
			return;
		}
		evbuffer_drain(in, sizeof(hdr) + len);
		/* answers the master does not read are not pfe's to keep */
		if (evbuffer_get_length(bufferevent_get_output(bev)) >
		    AGENTX_MAXQUEUED) {
			agentx_close("the master does not read its answers");
			return;
		}
	}
}

static void
agentx_error(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)arg;
	agentx_close((what & EVBUFFER_EOF) ? "the master went away" :
	    "an error on its socket");
}

static void
agentx_close(const char *why)
{
	struct timeval	 tv = { AGENTX_RECONNECT, 0 };
	if (ax_bev != NULL) {
		log_warnx("agentx: session closed: %s", why);
		bufferevent_free(ax_bev);	/* closes the socket */
		ax_bev = NULL;
	}
	ax_registered = 0;
	ax_session = 0;
	evtimer_set(&ax_retry, agentx_retry, NULL);
	evtimer_add(&ax_retry, &tv);
}

static void
agentx_retry(int fd, short event, void *arg)
{
	(void)fd;
	(void)event;
	(void)arg;
	agentx_ask();
}

static void
agentx_ask(void)
{
	proc_compose(env->sc_ps, PROC_PARENT, IMSG_AGENTX_SOCK, NULL, 0);
}

/* pfe: a configuration with agentx asks the parent for the socket. */
void
agentx_init(struct relayd *e)
{
	env = e;
	if ((env->sc_conf.flags & F_AGENTX) == 0 || ax_bev != NULL ||
	    evtimer_initialized(&ax_retry))
		return;
	agentx_ask();
	/* a retry timer marks the session as under way */
	evtimer_set(&ax_retry, agentx_retry, NULL);
}

/* pfe: the parent's answer, a socket connected to the master, or none. */
void
agentx_getsock(int fd)
{
	struct timeval	 tv = { AGENTX_RECONNECT, 0 };
	struct evbuffer	*b;
	struct ax_oid	 none;

	if (fd == -1) {
		evtimer_set(&ax_retry, agentx_retry, NULL);
		evtimer_add(&ax_retry, &tv);
		return;
	}
	if (ax_bev != NULL) {
		close(fd);
		return;
	}
	if ((ax_bev = bufferevent_socket_new(NULL, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL)
		fatal("%s", __func__);
	bufferevent_setcb(ax_bev, agentx_read, NULL, agentx_error, NULL);
	(void)bufferevent_enable(ax_bev, EV_READ);
	if ((b = evbuffer_new()) == NULL)
		fatal("%s", __func__);
	ax_put32(b, 0);			/* timeout: the master's */
	none.n = 0;
	ax_put_oid(b, &none, 0);
	ax_put_octets(b, "relayd", 6);
	ax_packetid = 1;
	ax_send(AX_OPEN, 0, 0, ax_packetid, b);
	evbuffer_free(b);
}

/* The parent: connect to the master agent's socket, for pfe. */
int
agentx_connect(struct relayd *e)
{
	struct sockaddr_un	 sun;
	int			 s;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlcpy(sun.sun_path, e->sc_conf.agentx_path,
	    sizeof(sun.sun_path)) >= sizeof(sun.sun_path))
		return (-1);
	/*
	 * Never waits: a master whose listen queue is full says EAGAIN
	 * at once (a unix socket), and pfe asks again later.
	 */
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1)
		return (-1);
	if (connect(s, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		log_debug("agentx: cannot connect to %s: %s",
		    e->sc_conf.agentx_path, strerror(errno));
		close(s);
		return (-1);
	}
	return (s);
}
