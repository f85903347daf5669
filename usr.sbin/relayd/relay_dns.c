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
 * DNS relays (a relay whose protocol is dns), in the relay processes.
 * As on OpenBSD each query is a session: it comes in on the relay's
 * datagram socket, goes to a host of the relay's table under an ID of
 * ours, and its answer goes back to the client under the client's ID;
 * the session ends with the answer, or with the relay's session timeout.
 * Queries over TCP are relayed as a tcp relay relays (relay.c).
 *
 * As OpenBSD, which opens a socket per query, and every resolver since
 * 2008, queries leave on ports the kernel picks at random, so that a
 * blind forger must guess a port and an ID.  Each backend has a pool
 * of RELAY_DNS_POOL sockets and a query leaves by one of them at
 * random.  The pool is a generation that ends after
 * RELAY_DNS_GENQUERIES queries or RELAY_DNS_GENSECS seconds: a socket
 * of an ended generation takes no more queries (its slot gets a new
 * socket when a query picks it) and is closed once its queries are
 * answered or over.  A port learned from a query is good for the rest
 * of its generation at most, and a forger who knows every port of the
 * pool still guesses among RELAY_DNS_POOL of them.  A new socket costs
 * a socket, a connect, two epoll changes and a close: the pool pays
 * that once in RELAY_DNS_GENQUERIES / RELAY_DNS_POOL queries, where a
 * socket per query or four paid it every time or every fourth.
 * The queries of one batch read from a client socket leave by one
 * socket of the pool (a forger who knows every port still guesses
 * among RELAY_DNS_POOL for any query, and the batch leaves by one
 * system call).  Datagrams move RELAY_DNS_BATCH at a time (recvmmsg,
 * sendmmsg).  A connected socket receives only what its backend's
 * address and port send; an answer is taken only on the socket its
 * query left by, for an ID that is pending, with the query's question
 * byte for byte (case included: a client's 0x20 check sees what it
 * asked), once.  The IDs come from a random choice among the 32768 not
 * used in the last 32768 queries.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "relayd.h"
#include "relay.h"

#define DNS_HDRLEN		12
#define DNS_QR			0x80	/* flags0: an answer */
#define DNS_IDS			65536
#define DNS_RECENT		32768	/* IDs not used again for so long */
#define DNS_NAMEMAX		255
#define RELAY_DNS_POOL		16	/* sockets of a backend (power of 2) */
#define RELAY_DNS_GENQUERIES	1024	/* queries of one generation */
#define RELAY_DNS_GENSECS	1	/* at most so long */
#define RELAY_DNS_MAXSOCKS	512	/* backend sockets open at most */
#define RELAY_DNS_BATCH		32	/* datagrams per system call */
#define RELAY_DNS_ROUNDS	8	/* batches per wakeup */
#define RELAY_DNS_QUERYMAX	4096	/* a larger query is dropped */
#define RELAY_DNS_ANSWERMAX	65536
#define RELAY_DNS_OUTS		RELAY_DNS_POOL	/* backend sockets per batch */
#define RELAY_DNS_IDLE		60	/* seconds: an unused backend goes */

struct dns_backend;

/* A socket queries leave by, on a port of the kernel's choice. */
struct dns_sock {
	struct dns_backend	*dk_be;
	int			 dk_s;
	struct event		 dk_ev;
	unsigned int		 dk_slot;	/* in its backend's pool */
	unsigned int		 dk_gen;	/* the generation it is of */
	unsigned int		 dk_pending;	/* queries unanswered */
	int			 dk_busy;	/* in its read callback */
};

struct dns_backend {
	TAILQ_ENTRY(dns_backend) db_entry;
	struct sockaddr_storage	 db_ss;
	struct dns_sock		*db_pool[RELAY_DNS_POOL];
	unsigned int		 db_gen;	/* the pool's generation */
	unsigned int		 db_gensent;	/* queries of it */
	struct timeval		 db_genstart;	/* getmonotime() */
	struct timeval		 db_now;	/* its last query's */
	unsigned int		 db_slot;	/* this batch's socket */
	unsigned int		 db_batch;	/* the batch it is for */
	unsigned int		 db_pending;
	objid_t			 db_relayid;	/* the last to use it */
	time_t			 db_used;
};
TAILQ_HEAD(dns_backends, dns_backend);

struct dns_session {
	struct rsession		 ds_con;	/* first: freed with it */
	struct dns_backend	*ds_be;
	struct dns_sock		*ds_dk;		/* the socket it left by */
	uint16_t		 ds_cid;	/* the client's ID */
	uint16_t		 ds_bid;	/* ours */
	int			 ds_pending;	/* waits for its answer */
	int			 ds_queued;	/* on the relay's list */
	int			 ds_sent;
	size_t			 ds_qlen;	/* its question */
	uint8_t			 ds_q[DNS_QUESTIONMAX];
	struct timeval		 ds_deadline;
	TAILQ_ENTRY(dns_session) ds_entry;
};

/* A batch of datagrams for one socket. */
struct dns_batch {
	int			 b_fd;
	unsigned int		 b_n;
	struct mmsghdr		 b_msg[RELAY_DNS_BATCH];
	struct iovec		 b_iov[RELAY_DNS_BATCH];
	struct dns_session	*b_ds[RELAY_DNS_BATCH];
};

static void	 relay_dns_msgs(struct mmsghdr *, struct iovec *, uint8_t *,
		    size_t, struct sockaddr_storage *);
static void	 relay_dns_server(int, short, void *);
static void	 relay_dns_query(struct relay *, uint8_t *, size_t,
		    struct sockaddr_storage *);
static void	 relay_dns_answers(int, short, void *);
static void	 relay_dns_timeout(int, short, void *);
static void	 relay_dns_gc(int, short, void *);
static void	 relay_dns_free(struct rsession *);
static void	 relay_dns_drop(struct relay *, const char *,
		    struct sockaddr_storage *);
static void	 relay_dns_evict(struct relay *);
static struct dns_backend
		*relay_dns_backend(struct relay *, struct sockaddr_storage *);
static void	 relay_dns_backend_free(struct dns_backend *);
static struct dns_sock
		*relay_dns_sock(struct relay *, struct dns_backend *);
static void	 relay_dns_sock_release(struct dns_sock *);
static uint32_t	 relay_dns_random(void);
static uint16_t	 relay_dns_id(void);
static void	 relay_dns_batch_add(struct dns_batch *, uint8_t *, size_t,
		    struct sockaddr_storage *, struct dns_session *);
static void	 relay_dns_queries_flush(void);
static void	 relay_dns_answers_flush(struct dns_batch *);
static void	 relay_dns_arm(struct relay *);

static enum relay_verdict
		 relay_dns_nostream(struct rsession *);
static enum relay_verdict
		 relay_dns_noside(struct ctl_relay_event *);
static void	 relay_dns_noabort(struct rsession *, enum relay_cfail, int);

/* a query is a datagram: no stream, no connect; only its end is ours */
static const struct relay_ops relay_dns_ops = {
	"dns", 0, relay_dns_nostream, relay_dns_noside, relay_dns_noside,
	relay_dns_nostream, relay_dns_noside, relay_dns_noabort, relay_dns_free,
	NULL, NULL
};

static struct dns_session	*dns_pending[DNS_IDS];
static unsigned int		 dns_npending;
static struct dns_backends	 dns_backends =
    TAILQ_HEAD_INITIALIZER(dns_backends);
static struct event		 dns_gcev;
static uint16_t			 dns_fresh[DNS_IDS - DNS_RECENT];
static uint16_t			 dns_recent[DNS_RECENT];
static unsigned int		 dns_recentpos;
static unsigned int		 dns_nsocks;
static unsigned int		 dns_batchno;	/* client batches read */
static int			 dns_ready;
static struct relayd		*dns_env;	/* the configuration running */

/* what one wakeup moves; queries and answers stay here until sent */
static uint8_t			 dns_qbuf[RELAY_DNS_BATCH]
				    [RELAY_DNS_QUERYMAX];
static uint8_t			 dns_abuf[RELAY_DNS_BATCH]
				    [RELAY_DNS_ANSWERMAX];
static struct sockaddr_storage	 dns_from[RELAY_DNS_BATCH];
static struct dns_batch		 dns_out[RELAY_DNS_OUTS];
static unsigned int		 dns_nout;
static struct dns_batch		 dns_answers;

/*
 * The header and the first question of a DNS message.  0 with m filled
 * in (m->q points into buf), -1 for what is not one.
 */
int
relay_dns_parse(const uint8_t *buf, size_t len, struct dns_msg *m)
{
	size_t		 off, namelen = 0;
	uint8_t		 l;

	memset(m, 0, sizeof(*m));
	if (len < DNS_HDRLEN)
		return (-1);
	m->id = (uint16_t)(buf[0] << 8 | buf[1]);
	m->flags0 = buf[2];
	m->flags1 = buf[3];
	m->qdcount = (uint16_t)(buf[4] << 8 | buf[5]);
	if (m->qdcount == 0)
		return (0);
	for (off = DNS_HDRLEN;;) {
		if (off >= len)
			return (-1);
		l = buf[off];
		if (l == 0) {
			off++;
			break;
		}
		if ((l & 0xc0) == 0xc0) {
			/* a pointer ends the name; it is not followed */
			if (off + 2 > len)
				return (-1);
			off += 2;
			break;
		}
		if (l & 0xc0)
			return (-1);
		namelen += l + 1;
		if (namelen > DNS_NAMEMAX || off + 1 + l > len)
			return (-1);
		off += 1 + l;
	}
	if (off + 4 > len)
		return (-1);
	off += 4;
	m->qlen = off - DNS_HDRLEN;
	m->q = buf + DNS_HDRLEN;
	return (0);
}

static void
relay_dns_setid(uint8_t *buf, uint16_t id)
{
	buf[0] = id >> 8;
	buf[1] = id & 0xff;
}

/*
 * IDs: every value is either fresh or among the DNS_RECENT last used.
 * A query takes a fresh one at random, and the oldest recent one turns
 * fresh in its place: no ID comes again within DNS_RECENT queries.
 */
static void
relay_dns_idinit(void)
{
	static uint16_t	 all[DNS_IDS];
	uint32_t	 i, j;
	uint16_t	 t;

	for (i = 0; i < DNS_IDS; i++)
		all[i] = i;
	for (i = DNS_IDS - 1; i > 0; i--) {
		j = arc4random_uniform(i + 1);
		t = all[i];
		all[i] = all[j];
		all[j] = t;
	}
	memcpy(dns_fresh, all, sizeof(dns_fresh));
	memcpy(dns_recent, all + nitems(dns_fresh), sizeof(dns_recent));
	dns_recentpos = 0;
}

/*
 * Random bits a word at a time, from arc4random_buf in bulk: the query
 * path calls neither arc4random nor, through it, getpid each time.
 */
static uint32_t
relay_dns_random(void)
{
	static uint32_t	 pool[256];
	static size_t	 left;

	if (left == 0) {
		arc4random_buf(pool, sizeof(pool));
		left = nitems(pool);
	}
	return (pool[--left]);
}

static uint16_t
relay_dns_id(void)
{
	uint32_t	 r;
	uint16_t	 id;

	do {
		/* nitems(dns_fresh) is a power of two */
		r = relay_dns_random() & (nitems(dns_fresh) - 1);
		id = dns_fresh[r];
		dns_fresh[r] = dns_recent[dns_recentpos];
		dns_recent[dns_recentpos] = id;
		dns_recentpos = (dns_recentpos + 1) % DNS_RECENT;
		/* one still pending after so long waits on */
	} while (dns_pending[id] != NULL);
	return (id);
}

/* The relay process: a dns relay's socket is read from now on. */
void
relay_dns_launch(struct relayd *env, struct relay *rlay)
{
	struct timeval	 tv = { RELAY_DNS_IDLE, 0 };

	dns_env = env;
	if (!dns_ready) {
		dns_ready = 1;
		relay_dns_idinit();
		evtimer_set(&dns_gcev, relay_dns_gc, NULL);
		evtimer_add(&dns_gcev, &tv);
	}
	TAILQ_INIT(&rlay->rl_dnsq);
	evtimer_set(&rlay->rl_dnst, relay_dns_timeout, rlay);
	event_set(&rlay->rl_uev, rlay->rl_us, EV_READ | EV_PERSIST,
	    relay_dns_server, rlay);
	event_add(&rlay->rl_uev, NULL);
}

/*
 * Before a reload: no more queries from this relay's socket.  The
 * socket stays, for the answers to the queries under way, until the
 * configuration goes with its last session.
 */
void
relay_dns_stop(struct relay *rlay)
{
	if (rlay->rl_us != -1 && event_initialized(&rlay->rl_uev))
		event_del(&rlay->rl_uev);
}

/* RELAY_DNS_BATCH messages to receive into bufs, size bytes each. */
static void
relay_dns_msgs(struct mmsghdr *msg, struct iovec *iov, uint8_t *bufs,
    size_t size, struct sockaddr_storage *names)
{
	int	 i;

	memset(msg, 0, RELAY_DNS_BATCH * sizeof(*msg));
	for (i = 0; i < RELAY_DNS_BATCH; i++) {
		iov[i].iov_base = bufs + i * size;
		iov[i].iov_len = size;
		msg[i].msg_hdr.msg_iov = &iov[i];
		msg[i].msg_hdr.msg_iovlen = 1;
		if (names != NULL) {
			msg[i].msg_hdr.msg_name = &names[i];
			msg[i].msg_hdr.msg_namelen = sizeof(names[i]);
		}
	}
}

/* Queries from clients, a batch at a time. */
static void
relay_dns_server(int fd, short event, void *arg)
{
	struct relay	*rlay = arg;
	struct mmsghdr	 msg[RELAY_DNS_BATCH];
	struct iovec	 iov[RELAY_DNS_BATCH];
	int		 i, n, round;

	(void)event;
	for (round = 0; round < RELAY_DNS_ROUNDS; round++) {
		relay_dns_msgs(msg, iov, dns_qbuf[0], sizeof(dns_qbuf[0]),
		    dns_from);
		if ((n = recvmmsg(fd, msg, RELAY_DNS_BATCH, MSG_DONTWAIT,
		    NULL)) == -1) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR)
				log_warn("relay %s: recvmmsg",
				    rlay->rl_conf.name);
			break;
		}
		dns_batchno++;
		for (i = 0; i < n; i++) {
			if (msg[i].msg_hdr.msg_namelen < sizeof(sa_family_t))
				continue;
			if (msg[i].msg_hdr.msg_flags & MSG_TRUNC) {
				relay_dns_drop(rlay, "query too long",
				    &dns_from[i]);
				continue;
			}
			relay_dns_query(rlay, dns_qbuf[i], msg[i].msg_len,
			    &dns_from[i]);
		}
		relay_dns_queries_flush();
		if (n < RELAY_DNS_BATCH)
			break;
	}
}

/* One query: a session, a backend, an ID of ours, on its way. */
static void
relay_dns_query(struct relay *rlay, uint8_t *buf, size_t len,
    struct sockaddr_storage *from)
{
	struct dns_session	*ds;
	struct rsession		*con;
	struct host		*h;
	struct dns_msg		 m;
	struct timeval		 tv = rlay->rl_conf.timeout;

	if (rlay->rl_conf.flags & F_DISABLE)
		return;
	if (relay_dns_parse(buf, len, &m) == -1) {
		relay_dns_drop(rlay, "not a DNS query", from);
		return;
	}
	if (m.flags0 & DNS_QR) {
		relay_dns_drop(rlay, "an answer sent as a query", from);
		return;
	}
	/*
	 * over max-src-request-rate: dropped, counted apart (by nftables
	 * before they come here, where the parent could install it)
	 */
	if (RELAY_REQLIMITED(&rlay->rl_conf.lim) &&
	    !rlay->rl_conf.lim.lim_kernel &&
	    relay_limit_request(rlay, from, NULL) > 0)
		return;
	if (dns_npending >= RELAY_DNS_MAXPENDING) {
		relay_dns_evict(rlay);
		if (dns_npending >= RELAY_DNS_MAXPENDING) {
			relay_dns_drop(rlay, "too many queries pending",
			    from);
			return;
		}
	}
	if ((con = relay_session_new(rlay, sizeof(*ds), &relay_dns_ops, -1,
	    from)) == NULL) {
		relay_dns_drop(rlay, "out of memory", from);
		return;
	}
	ds = (struct dns_session *)con;
	ds->ds_cid = m.id;
	ds->ds_qlen = m.qlen;
	memcpy(ds->ds_q, m.q, m.qlen);
	con->se_in.copied = len;
	if (!TAILQ_EMPTY(&rlay->rl_tables)) {
		if ((h = relay_from_table(con)) == NULL) {
			relay_stats_mine(rlay)->cfailed++;
			relay_close(con, "session failed: no host up", 1);
			return;
		}
		con->se_host = h;
		con->se_out.ss = h->conf.ss;
	} else
		con->se_out.ss = rlay->rl_conf.dstss;
	if (ss_mapaf(&con->se_out.ss, &rlay->rl_conf.dstaf) == -1 ||
	    (ds->ds_be = relay_dns_backend(rlay, &con->se_out.ss)) == NULL ||
	    (ds->ds_dk = relay_dns_sock(rlay, ds->ds_be)) == NULL) {
		relay_stats_mine(rlay)->cfailed++;
		relay_close(con, "forward failed", 1);
		return;
	}
	ds->ds_bid = relay_dns_id();
	ds->ds_pending = 1;
	dns_pending[ds->ds_bid] = ds;
	dns_npending++;
	ds->ds_be->db_pending++;
	ds->ds_dk->dk_pending++;
	relay_dns_setid(buf, ds->ds_bid);

	timeradd(&con->se_tv_start, &tv, &ds->ds_deadline);
	TAILQ_INSERT_TAIL(&rlay->rl_dnsq, ds, ds_entry);
	ds->ds_queued = 1;
	if (!evtimer_pending(&rlay->rl_dnst, NULL))
		relay_dns_arm(rlay);
	con->se_cstate = RELAY_CONN_CONNECTED;
	relay_dns_batch_add(NULL, buf, len, NULL, ds);
}

/* The backend sockets' batches go. */
static void
relay_dns_queries_flush(void)
{
	struct dns_batch	*b;
	unsigned int		 i, off, retried;
	int			 n;

	for (i = 0; i < dns_nout; i++) {
		b = &dns_out[i];
		for (off = 0, retried = 0; off < b->b_n;) {
			n = sendmmsg(b->b_fd, b->b_msg + off, b->b_n - off, 0);
			if (n > 0) {
				for (; n > 0; n--, off++)
					b->b_ds[off]->ds_sent = 1;
				continue;
			}
			/*
			 * A connected socket reports an ICMP error once, on
			 * the next call: that call is tried again.
			 */
			if (n == -1 && !retried && (errno == ECONNREFUSED ||
			    errno == EINTR || errno == EHOSTUNREACH)) {
				retried = 1;
				continue;
			}
			relay_close(&b->b_ds[off]->ds_con, "forward failed",
			    1);
			off++;
		}
		b->b_n = 0;
	}
	dns_nout = 0;
}

/*
 * A datagram for a batch: b NULL for a query, to the batch of the
 * socket of its backend (all of them flushed when there is no room).
 */
static void
relay_dns_batch_add(struct dns_batch *b, uint8_t *buf, size_t len,
    struct sockaddr_storage *to, struct dns_session *ds)
{
	struct msghdr	*mh;
	unsigned int	 i;
	int		 fd;

	if (b == NULL) {
		fd = ds->ds_dk->dk_s;
		for (i = 0; i < dns_nout; i++)
			if (dns_out[i].b_fd == fd)
				break;
		if (i == dns_nout) {
			if (dns_nout == RELAY_DNS_OUTS) {
				relay_dns_queries_flush();
				i = 0;
			}
			dns_out[i].b_fd = fd;
			dns_out[i].b_n = 0;
			dns_nout = i + 1;
		}
		b = &dns_out[i];
		if (b->b_n == RELAY_DNS_BATCH) {
			relay_dns_queries_flush();
			b = &dns_out[0];
			b->b_fd = fd;
			b->b_n = 0;
			dns_nout = 1;
		}
	}
	i = b->b_n++;
	b->b_iov[i].iov_base = buf;
	b->b_iov[i].iov_len = len;
	mh = &b->b_msg[i].msg_hdr;
	memset(mh, 0, sizeof(*mh));
	mh->msg_iov = &b->b_iov[i];
	mh->msg_iovlen = 1;
	if (to != NULL) {
		mh->msg_name = to;
		mh->msg_namelen = ss_len(to);
	}
	b->b_ds[i] = ds;
}

/* Answers from a backend socket, a batch at a time. */
static void
relay_dns_answers(int fd, short event, void *arg)
{
	struct dns_sock		*dk = arg;
	struct dns_backend	*be = dk->dk_be;
	struct dns_session	*ds;
	struct rsession		*con;
	struct relay		*rlay;
	struct mmsghdr		 msg[RELAY_DNS_BATCH];
	struct iovec		 iov[RELAY_DNS_BATCH];
	struct dns_msg		 m;
	int			 i, n, round;

	(void)event;
	/* the socket stays while its answers are handled */
	dk->dk_busy = 1;
	for (round = 0; round < RELAY_DNS_ROUNDS; round++) {
		relay_dns_msgs(msg, iov, dns_abuf[0], sizeof(dns_abuf[0]),
		    NULL);
		if ((n = recvmmsg(fd, msg, RELAY_DNS_BATCH, MSG_DONTWAIT,
		    NULL)) == -1) {
			/* ECONNREFUSED: an earlier query met a closed port */
			if (errno == ECONNREFUSED || errno == EHOSTUNREACH ||
			    errno == EINTR)
				continue;
			break;
		}
		dns_answers.b_fd = -1;
		dns_answers.b_n = 0;
		rlay = relay_find(dns_env, be->db_relayid);
		for (i = 0; i < n; i++) {
			if (relay_dns_parse(dns_abuf[i], msg[i].msg_len,
			    &m) == -1 || (m.flags0 & DNS_QR) == 0 ||
			    (msg[i].msg_hdr.msg_flags & MSG_TRUNC)) {
				relay_dns_drop(rlay, "not a DNS answer",
				    &be->db_ss);
				continue;
			}
			ds = dns_pending[m.id];
			if (ds == NULL || ds->ds_dk != dk) {
				relay_dns_drop(rlay, "an answer to no "
				    "pending query", &be->db_ss);
				continue;
			}
			con = &ds->ds_con;
			if (m.qdcount != 0 && (m.qlen != ds->ds_qlen ||
			    memcmp(m.q, ds->ds_q, m.qlen) != 0)) {
				relay_dns_drop(con->se_relay, "an answer to "
				    "another question", &be->db_ss);
				continue;
			}
			/* once: a second answer finds nothing pending */
			dns_pending[m.id] = NULL;
			dns_npending--;
			be->db_pending--;
			dk->dk_pending--;
			ds->ds_pending = 0;
			relay_dns_setid(dns_abuf[i], ds->ds_cid);
			con->se_out.copied = msg[i].msg_len;
			getevtime(&con->se_tv_last);
			if (dns_answers.b_fd != con->se_relay->rl_us) {
				relay_dns_answers_flush(&dns_answers);
				dns_answers.b_fd = con->se_relay->rl_us;
			}
			relay_dns_batch_add(&dns_answers, dns_abuf[i],
			    msg[i].msg_len, &con->se_in.ss, ds);
		}
		relay_dns_answers_flush(&dns_answers);
		if (n < RELAY_DNS_BATCH)
			break;
	}
	dk->dk_busy = 0;
	relay_dns_sock_release(dk);
}

/* Answers to the clients; each ends its session. */
static void
relay_dns_answers_flush(struct dns_batch *b)
{
	unsigned int	 off = 0, i;
	int		 n;

	while (off < b->b_n) {
		n = sendmmsg(b->b_fd, b->b_msg + off, b->b_n - off, 0);
		if (n > 0) {
			for (i = 0; i < (unsigned int)n; i++)
				relay_close(&b->b_ds[off + i]->ds_con,
				    "session closed", 0);
			off += n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		relay_close(&b->b_ds[off]->ds_con, "response failed", 1);
		off++;
	}
	b->b_n = 0;
}

/* The timer of a relay's queries: at the deadline of the oldest. */
static void
relay_dns_arm(struct relay *rlay)
{
	struct dns_session	*ds;
	struct timeval		 now, tv;

	if ((ds = TAILQ_FIRST(&rlay->rl_dnsq)) == NULL)
		return;
	getevtime(&now);
	if (timercmp(&ds->ds_deadline, &now, >))
		timersub(&ds->ds_deadline, &now, &tv);
	else
		timerclear(&tv);
	evtimer_add(&rlay->rl_dnst, &tv);
}

static void
relay_dns_timeout(int fd, short event, void *arg)
{
	struct relay		*rlay = arg;
	struct dns_session	*ds;
	struct timeval		 now;

	(void)fd;
	(void)event;
	getevtime(&now);
	while ((ds = TAILQ_FIRST(&rlay->rl_dnsq)) != NULL &&
	    !timercmp(&ds->ds_deadline, &now, >))
		relay_close(&ds->ds_con, "udp timeout", 1);
	relay_dns_arm(rlay);
}

/*
 * RELAY_DNS_MAXPENDING queries wait: the oldest of this relay goes to
 * make room, unless it is still in the batch being sent.
 */
static void
relay_dns_evict(struct relay *rlay)
{
	static struct log_ratelimit	 rl = LOG_RATELIMIT(1);
	struct dns_session		*ds;

	if ((ds = TAILQ_FIRST(&rlay->rl_dnsq)) == NULL || !ds->ds_sent)
		return;
	relay_close(&ds->ds_con, "too many queries pending", 1);
	if (!log_ratelimit(&rl))
		return;
	log_warnx("relay %s: %d queries waiting for answers, the oldest "
	    "ended early (%llu times)", rlay->rl_conf.name,
	    RELAY_DNS_MAXPENDING, (unsigned long long)rl.count);
}

/* What is dropped is counted, and said once a second at most. */
static void
relay_dns_drop(struct relay *rlay, const char *why,
    struct sockaddr_storage *from)
{
	static struct log_ratelimit	 rl = LOG_RATELIMIT(1);
	char				 addr[INET6_ADDRSTRLEN];

	if (rlay != NULL)
		relay_stats_mine(rlay)->dropped++;
	if (!log_ratelimit(&rl))
		return;
	if (print_host(from, addr, sizeof(addr)) == NULL)
		(void)strlcpy(addr, "?", sizeof(addr));
	log_warnx("relay %s: %llu datagrams dropped, the last %s from %s "
	    "port %d", rlay != NULL ? rlay->rl_conf.name : "(gone)",
	    (unsigned long long)rl.count, why, addr, ss_port(from));
}

/* A backend address, the first time it is used. */
static struct dns_backend *
relay_dns_backend(struct relay *rlay, struct sockaddr_storage *ss)
{
	struct dns_backend	*be;

	TAILQ_FOREACH(be, &dns_backends, db_entry)
		if (be->db_ss.ss_family == ss->ss_family &&
		    memcmp(&be->db_ss, ss, ss_len(ss)) == 0)
			break;
	if (be == NULL) {
		if ((be = calloc(1, sizeof(*be))) == NULL)
			return (NULL);
		be->db_ss = *ss;
		TAILQ_INSERT_TAIL(&dns_backends, be, db_entry);
	}
	be->db_relayid = rlay->rl_conf.id;
	getmonotime(&be->db_now);
	be->db_used = be->db_now.tv_sec;
	return (be);
}

static void
relay_dns_backend_free(struct dns_backend *be)
{
	struct dns_sock	*dk;
	unsigned int	 i;

	for (i = 0; i < RELAY_DNS_POOL; i++) {
		if ((dk = be->db_pool[i]) == NULL)
			continue;
		be->db_pool[i] = NULL;
		relay_dns_sock_release(dk);
	}
	free(be);
}

/*
 * The socket a query to be leaves by: a slot of the pool at random for
 * each batch of queries read (what one system call brought, so that
 * they leave by one too), and its socket if it is of this generation;
 * if not, a new one, connected
 * so that the kernel binds it to a random port.  With RELAY_DNS_MAXSOCKS
 * open, or none to be had, the slot's old socket takes the query, or
 * another slot's.
 */
static struct dns_sock *
relay_dns_sock(struct relay *rlay, struct dns_backend *be)
{
	static struct log_ratelimit	 rl = LOG_RATELIMIT(1);
	struct dns_sock			*dk, *old;
	struct timeval			 age;
	unsigned int			 i;
	int				 s = -1;

	timersub(&be->db_now, &be->db_genstart, &age);
	if (be->db_gensent >= RELAY_DNS_GENQUERIES ||
	    age.tv_sec >= RELAY_DNS_GENSECS || !timerisset(&be->db_genstart)) {
		be->db_gen++;
		be->db_gensent = 0;
		be->db_genstart = be->db_now;
	}
	be->db_gensent++;
	if (be->db_batch != dns_batchno || be->db_gensent == 1) {
		be->db_batch = dns_batchno;
		be->db_slot = relay_dns_random() & (RELAY_DNS_POOL - 1);
	}
	i = be->db_slot;
	dk = be->db_pool[i];
	if (dk != NULL && (dk->dk_gen == be->db_gen ||
	    dns_nsocks >= RELAY_DNS_MAXSOCKS))
		return (dk);
	if ((old = dk) == NULL && dns_nsocks >= RELAY_DNS_MAXSOCKS) {
		for (i = 0; i < RELAY_DNS_POOL; i++)
			if (be->db_pool[i] != NULL)
				return (be->db_pool[i]);
		return (NULL);
	}
	if ((dk = calloc(1, sizeof(*dk))) == NULL ||
	    (s = socket(be->db_ss.ss_family, SOCK_DGRAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, IPPROTO_UDP)) == -1 ||
	    connect(s, (struct sockaddr *)&be->db_ss,
	    ss_len(&be->db_ss)) == -1) {
		/* out of descriptors, this would say so for every query */
		if (log_ratelimit(&rl))
			log_warn("relay %s: backend socket",
			    rlay->rl_conf.name);
		if (s != -1)
			close(s);
		free(dk);
		return (old);
	}
	dk->dk_be = be;
	dk->dk_s = s;
	dk->dk_slot = i;
	dk->dk_gen = be->db_gen;
	event_set(&dk->dk_ev, s, EV_READ | EV_PERSIST, relay_dns_answers,
	    dk);
	event_add(&dk->dk_ev, NULL);
	dns_nsocks++;
	be->db_pool[i] = dk;
	if (old != NULL)
		relay_dns_sock_release(old);
	return (dk);
}

/* A socket no query waits on, and out of its pool, is closed. */
static void
relay_dns_sock_release(struct dns_sock *dk)
{
	if (dk->dk_pending > 0 || dk->dk_busy ||
	    dk->dk_be->db_pool[dk->dk_slot] == dk)
		return;
	event_del(&dk->dk_ev);
	close(dk->dk_s);
	dns_nsocks--;
	free(dk);
}

/* Descriptors the DNS relays hold, for the relay's estimate. */
unsigned int
relay_dns_sockets(void)
{
	return (dns_nsocks);
}

/* Backends nobody used for a while (a reload took them away) go. */
static void
relay_dns_gc(int fd, short event, void *arg)
{
	struct dns_backend	*be, *next;
	struct timeval		 tv = { RELAY_DNS_IDLE, 0 };
	time_t			 now = getmonosec();

	(void)fd;
	(void)event;
	(void)arg;
	for (be = TAILQ_FIRST(&dns_backends); be != NULL; be = next) {
		next = TAILQ_NEXT(be, db_entry);
		if (be->db_pending == 0 &&
		    now - be->db_used >= RELAY_DNS_IDLE) {
			TAILQ_REMOVE(&dns_backends, be, db_entry);
			relay_dns_backend_free(be);
		}
	}
	evtimer_add(&dns_gcev, &tv);
}

/* A query's session ends: its ID is free, its relay's list shorter. */
static void
relay_dns_free(struct rsession *con)
{
	struct dns_session	*ds = (struct dns_session *)con;
	struct relay		*rlay = con->se_relay;

	if (ds->ds_pending) {
		dns_pending[ds->ds_bid] = NULL;
		dns_npending--;
		ds->ds_be->db_pending--;
		ds->ds_dk->dk_pending--;
		ds->ds_pending = 0;
		relay_dns_sock_release(ds->ds_dk);
	}
	if (ds->ds_queued) {
		TAILQ_REMOVE(&rlay->rl_dnsq, ds, ds_entry);
		ds->ds_queued = 0;
		if (TAILQ_EMPTY(&rlay->rl_dnsq))
			evtimer_del(&rlay->rl_dnst);
	}
}

/* The stream hooks: never called for a datagram; if one were, it ends. */
static enum relay_verdict
relay_dns_nostream(struct rsession *con)
{
	relay_close(con, "not a stream", 1);
	return (RELAY_V_CLOSED);
}

static enum relay_verdict
relay_dns_noside(struct ctl_relay_event *cre)
{
	return (relay_dns_nostream(cre->con));
}

static void
relay_dns_noabort(struct rsession *con, enum relay_cfail why, int error)
{
	(void)why;
	(void)error;
	(void)relay_dns_nostream(con);
}
