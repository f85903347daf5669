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
 * HTTP/2 backends ("http2 backend"): the streams of a relay process's
 * HTTP/2 clients go on as streams of HTTP/2 connections to the hosts,
 * which the sessions of the process share.  libnghttp2 does the client
 * side's framing, HPACK and flow control; this is the glue.
 *
 * A pool per relay and table holds the connections, each to one host:
 * a stream goes to the host the table's mode gives its session
 * (relay_choose()), on the first connection to it with room (fewer
 * streams than "http2 backend streams" and the host's
 * SETTINGS_MAX_CONCURRENT_STREAMS), else on a new one while the host
 * has fewer than "http2 backend connections", else on the one with the
 * fewest, where libnghttp2 holds it until a stream ends.  A connection
 * is a shared link of the core's (relay_link_shared()): the core
 * connects it, with TLS and ALPN h2 under "forward with tls", reads it
 * and times it out; it has no session, and its bytes count as those of
 * the sessions it carries them for.  One with no streams goes after
 * "http2 backend idle" seconds, or at once after a reload.
 *
 * Flow control holds both ways without buffering a body: a request's
 * body leaves the client's window (nghttp2_session_consume_stream())
 * only as it goes out to the backend, an answer's the backend's only
 * as the client takes it, so that a stream holds at most a window each
 * way (H2_STREAM_RESP_MAX of answer).  Trailers go on both ways; a
 * reset on either side resets the other.  A backend's GOAWAY drains
 * its connection: new streams go to another, and the streams it did
 * not take (REFUSED_STREAM) go again once, when nothing of their body
 * went.  A connection lost fails only its streams: 502 (or UNAVAILABLE
 * for gRPC) for those not answered yet, RST_STREAM for the others.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>
#include <tls.h>

#include "relayd.h"
#include "relay.h"
#include "http.h"
#include "relay_h2.h"

#define H2B_CONN_WINDOW		(1024 * 1024)	/* a connection's answers */

struct h2b_pool;

struct h2b_conn {
	TAILQ_ENTRY(h2b_conn)	 c_entry;
	struct h2b_pool		*c_pool;
	struct rsession		*c_con;		/* the core's; NULL: ended */
	struct host		*c_host;
	nghttp2_session		*c_ng;
	TAILQ_HEAD(, h2_stream)	 c_streams;
	unsigned int		 c_nstreams;
	int			 c_up;		/* connected */
	int			 c_lost;	/* of no more use */
	int			 c_draining;	/* GOAWAY: no new streams */
	int			 c_code;	/* its streams get, once lost */
	const char		*c_page;
	struct event		 c_ev;		/* h2b_conn_run() */
	struct event		 c_idleev;	/* armed once, moved late */
	struct timeval		 c_idledue;	/* then it has idled enough */
	int			 c_dirty;	/* on h2b_dirty */
	TAILQ_ENTRY(h2b_conn)	 c_dentry;
};

struct h2b_pool {
	TAILQ_ENTRY(h2b_pool)	 p_entry;
	struct relay		*p_relay;
	struct relay_table	*p_table;	/* a rule's; NULL: the relay's */
	int			 p_retired;	/* by a reload */
	TAILQ_HEAD(, h2b_conn)	 p_conns;
};

static TAILQ_HEAD(, h2b_pool) h2b_pools = TAILQ_HEAD_INITIALIZER(h2b_pools);
/* connections with frames to send: h2b_flush(), else their timer */
static TAILQ_HEAD(, h2b_conn) h2b_dirty = TAILQ_HEAD_INITIALIZER(h2b_dirty);

static void	 h2b_conn_run(int, short, void *);
static void	 h2b_conn_idle(int, short, void *);
static void	 h2b_conn_later(struct h2b_conn *);
static void	 h2b_detach(struct h2_stream *);

static enum relay_verdict
		 h2b_link_init(struct rsession *);
static enum relay_verdict
		 h2b_link_read(struct ctl_relay_event *);
static enum relay_verdict
		 h2b_link_passed(struct ctl_relay_event *);
static enum relay_verdict
		 h2b_link_connected(struct rsession *);
static enum relay_verdict
		 h2b_link_eof(struct ctl_relay_event *);
static void	 h2b_link_abort(struct rsession *, enum relay_cfail, int);
static void	 h2b_link_free(struct rsession *);
static enum relay_verdict
		 h2b_link_drained(struct ctl_relay_event *);

/* The hooks of a shared backend connection */
static const struct relay_ops relay_h2b_ops = {
	"http2 backend",
	1,
	h2b_link_init,
	h2b_link_read,
	h2b_link_passed,
	h2b_link_connected,
	h2b_link_eof,
	h2b_link_abort,
	h2b_link_free,
	h2b_link_drained,
	NULL
};

/* What a failed connect gives the streams that waited for it. */
static const int	 h2b_cfail_codes[] = { 502, 502, 502, 504 };
static const char	*h2b_cfail_pages[] = { "session failed",
    "session failed", "socket error", "connect timeout" };

/* The stream of a backend's stream id, if it is still the client's. */
static struct h2_stream *
h2b_stream(struct h2b_conn *c, int32_t id)
{
	return (nghttp2_session_get_stream_user_data(c->c_ng, id));
}

static ssize_t
h2b_send_cb(nghttp2_session *ng, const uint8_t *data, size_t len, int flags,
    void *arg)
{
	struct h2b_conn	*c = arg;
	struct evbuffer	*out;

	(void)ng;
	(void)flags;
	if (c->c_con == NULL || c->c_con->se_out.bev == NULL)
		return (NGHTTP2_ERR_WOULDBLOCK);
	out = bufferevent_get_output(c->c_con->se_out.bev);
	if (evbuffer_get_length(out) >= H2_OUT_MAX)
		return (NGHTTP2_ERR_WOULDBLOCK);
	if (evbuffer_add(out, data, len) == -1)
		return (NGHTTP2_ERR_CALLBACK_FAILURE);
	return ((ssize_t)len);
}

/* A DATA frame of a request: its body moved, and the client may send on. */
static int
h2b_send_data_cb(nghttp2_session *ng, nghttp2_frame *frame,
    const uint8_t *framehd, size_t len, nghttp2_data_source *src, void *arg)
{
	struct h2b_conn		*c = arg;
	struct h2_stream	*st;
	struct evbuffer		*out;

	(void)src;
	if ((st = h2b_stream(c, frame->hd.stream_id)) == NULL ||
	    (st->st_body == NULL && len > 0))
		return (NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE);
	out = bufferevent_get_output(c->c_con->se_out.bev);
	if (evbuffer_get_length(out) >= H2_OUT_MAX)
		return (NGHTTP2_ERR_WOULDBLOCK);
	if (evbuffer_add(out, framehd, 9) == -1 ||
	    (len > 0 && evbuffer_remove_buffer(st->st_body, out, len) !=
	    (int)len))
		return (NGHTTP2_ERR_CALLBACK_FAILURE);
	st->st_bsent += len;
	h2_body_taken(st, len);
	(void)ng;
	return (0);
}

/* The name-value pairs of a list of fields, names in lower case. */
static nghttp2_nv *
h2b_nv(struct http_msg *m, size_t first, size_t *np, char **namesp)
{
	struct http_header	*h;
	nghttp2_nv		*nv;
	char			*names, *p;
	size_t			 n = first, size = 1, i, len;
	int			 conn, te;

	TAILQ_FOREACH(h, &m->hm_headers, hh_entry) {
		n++;
		size += strlen(h->hh_name) + 1;
	}
	if ((nv = calloc(n, sizeof(*nv))) == NULL)
		return (NULL);
	if ((names = malloc(size)) == NULL) {
		free(nv);
		return (NULL);
	}
	n = first;
	p = names;
	conn = http_header_get(m, "connection") != NULL;
	TAILQ_FOREACH(h, &m->hm_headers, hh_entry) {
		/* Host is :authority; TE goes on only as "trailers" */
		len = strlen(h->hh_name);
		te = len == 2 && strcasecmp(h->hh_name, "te") == 0;
		if ((te && strcasecmp(h->hh_value, "trailers") != 0) ||
		    (!te && ((len == 4 && strcasecmp(h->hh_name, "host") ==
		    0) || h2_hop_static(h->hh_name) ||
		    (conn && h2_hop_named(m, h->hh_name)))))
			continue;
		nv[n].name = (uint8_t *)p;
		for (i = 0; i < len; i++)
			*p++ = tolower((unsigned char)h->hh_name[i]);
		*p++ = '\0';
		nv[n].namelen = len;
		nv[n].value = (uint8_t *)h->hh_value;
		nv[n].valuelen = strlen(h->hh_value);
		n++;
	}
	*np = n;
	*namesp = names;
	return (nv);
}

/* The next DATA frame of a request: what its body holds so far. */
static ssize_t
h2b_data_read_cb(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t len,
    uint32_t *flags, nghttp2_data_source *src, void *arg)
{
	struct h2b_conn		*c = arg;
	struct h2_stream	*st;
	nghttp2_nv		*nv;
	char			*names;
	size_t			 have, n;

	(void)buf;
	(void)src;
	if ((st = h2b_stream(c, id)) == NULL)
		return (NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE);
	have = st->st_body != NULL ? evbuffer_get_length(st->st_body) : 0;
	if (have == 0 && !st->st_reqdone) {
		st->st_bdeferred = 1;
		return (NGHTTP2_ERR_DEFERRED);
	}
	if (have > len)
		have = len;
	*flags |= NGHTTP2_DATA_FLAG_NO_COPY;
	if (!st->st_reqdone || (st->st_body != NULL &&
	    have < evbuffer_get_length(st->st_body)))
		return ((ssize_t)have);
	*flags |= NGHTTP2_DATA_FLAG_EOF;
	if (TAILQ_EMPTY(&st->st_qtrailers.hm_headers))
		return ((ssize_t)have);
	if ((nv = h2b_nv(&st->st_qtrailers, 0, &n, &names)) == NULL)
		return (NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE);
	if (nghttp2_submit_trailer(ng, id, nv, n) == 0)
		*flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
	free(names);
	free(nv);
	return ((ssize_t)have);
}

static int
h2b_begin_headers_cb(nghttp2_session *ng, const nghttp2_frame *frame,
    void *arg)
{
	struct h2b_conn		*c = arg;
	struct h2_stream	*st;

	(void)ng;
	if ((st = h2b_stream(c, frame->hd.stream_id)) == NULL ||
	    st->st_bhead)
		return (0);
	/* a head again: after a 1xx */
	http_msg_clear(&st->st_bmsg);
	http_msg_init(&st->st_bmsg, RELAY_DIR_RESPONSE, 0);
	st->st_bhdrlen = 0;
	return (0);
}

/* A field of an answer's head, or of its trailers. */
static int
h2b_header_cb(nghttp2_session *ng, const nghttp2_frame *frame,
    const uint8_t *name, size_t namelen, const uint8_t *value,
    size_t valuelen, uint8_t flags, void *arg)
{
	struct h2b_conn		*c = arg;
	struct h2_stream	*st;
	const char		*n = (const char *)name;
	const char		*v = (const char *)value;
	const char		*errstr;
	struct http_msg		*m;

	(void)ng;
	(void)flags;
	if ((st = h2b_stream(c, frame->hd.stream_id)) == NULL)
		return (0);
	/* a list over the limit resets the stream (a 502 for its client) */
	st->st_bhdrlen += namelen + 2 + valuelen;
	if (st->st_bhdrlen > RELAY_MAXHEADERLENGTH)
		return (NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE);
	m = st->st_bhead ? &st->st_rtrailers : &st->st_bmsg;
	if (n[0] == ':') {
		if (strcmp(n, ":status") == 0 && !st->st_bhead) {
			m->hm_code = strtonum(v, 100, 599, &errstr);
			if (errstr != NULL)
				return (NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE);
		}
		return (0);
	}
	if (http_header_add(m, n, v) == -1)
		return (NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE);
	return (0);
}

/* The head of an answer is through: to the client, or a 1xx before it. */
static void
h2b_head(struct h2b_conn *c, struct h2_stream *st, int end)
{
	int	 ret;

	if (st->st_bmsg.hm_code == 0) {
		(void)nghttp2_submit_rst_stream(c->c_ng, NGHTTP2_FLAG_NONE,
		    st->st_bid, NGHTTP2_PROTOCOL_ERROR);
		return;
	}
	if (st->st_bmsg.hm_code >= 200)
		st->st_bhead = 1;
	/* relayd answered it already (its deadline, say) */
	if (st->st_answered) {
		h2b_cancel(st);
		return;
	}
	if ((ret = h2_answer_head(st, &st->st_bmsg, !end)) != 0) {
		if (ret == -1)
			h2_answer_reset(st, NGHTTP2_INTERNAL_ERROR);
		h2b_cancel(st);
		return;
	}
	http_msg_clear(&st->st_bmsg);
	http_msg_init(&st->st_bmsg, RELAY_DIR_RESPONSE, 0);
}

static int
h2b_frame_recv_cb(nghttp2_session *ng, const nghttp2_frame *frame, void *arg)
{
	struct h2b_conn		*c = arg;
	struct h2_stream	*st;
	int			 end;

	(void)ng;
	end = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
	switch (frame->hd.type) {
	case NGHTTP2_GOAWAY:
		c->c_draining = 1;
		h2b_conn_later(c);
		return (0);
	case NGHTTP2_HEADERS:
		if ((st = h2b_stream(c, frame->hd.stream_id)) == NULL)
			return (0);
		if (!st->st_bhead)
			h2b_head(c, st, end);
		else if (end)
			h2_answer_end(st);
		return (0);
	case NGHTTP2_DATA:
		if (end && (st = h2b_stream(c, frame->hd.stream_id)) != NULL)
			h2_answer_end(st);
		return (0);
	}
	return (0);
}

/* An answer's bytes, for the client as it takes them. */
static int
h2b_data_chunk_cb(nghttp2_session *ng, uint8_t flags, int32_t id,
    const uint8_t *data, size_t len, void *arg)
{
	struct h2b_conn		*c = arg;
	struct h2_stream	*st;

	(void)flags;
	(void)nghttp2_session_consume_connection(ng, len);
	if ((st = h2b_stream(c, id)) == NULL || st->st_closed ||
	    st->st_resp == NULL) {
		(void)nghttp2_session_consume_stream(ng, id, len);
		return (0);
	}
	if (evbuffer_add(st->st_resp, data, len) == -1)
		return (NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE);
	h2_answer_more(st);
	return (0);
}

/* Bytes that went to the backend for a stream count as its session's. */
static int
h2b_frame_send_cb(nghttp2_session *ng, const nghttp2_frame *frame, void *arg)
{
	struct h2b_conn		*c = arg;
	struct h2_stream	*st;

	(void)ng;
	if (frame->hd.stream_id != 0 &&
	    (st = h2b_stream(c, frame->hd.stream_id)) != NULL)
		relay_count(st->st_h2->h2_con, RELAY_DIR_REQUEST,
		    frame->hd.length + 9);
	return (0);
}

/*
 * A backend's stream ended.  Its client stream goes on where the answer
 * was complete; a stream the backend did not take goes again once; else
 * the client's is refused, or reset.
 */
static int
h2b_stream_close_cb(nghttp2_session *ng, int32_t id, uint32_t error,
    void *arg)
{
	struct h2b_conn		*c = arg;
	struct h2_stream	*st;

	(void)ng;
	if ((st = h2b_stream(c, id)) == NULL)
		return (0);
	h2b_detach(st);
	if (st->st_respdone)
		goto done;
	if (error == NGHTTP2_REFUSED_STREAM && !st->st_answered &&
	    st->st_bsent == 0 && st->st_tries < 2) {
		st->st_tries++;
		if (h2b_submit(st) == 0)
			return (0);
	}
	if (!st->st_answered)
		h2_refuse(st, 502, "backend reset");
	else
		h2_answer_reset(st, error != NGHTTP2_NO_ERROR ? error :
		    NGHTTP2_INTERNAL_ERROR);
 done:
	/* a request still coming ends with its answer */
	st->st_bgone = 1;
	h2_wake(st->st_h2);
	h2_stream_release(st);
	return (0);
}

/* st is off its backend connection. */
static void
h2b_detach(struct h2_stream *st)
{
	struct h2b_conn	*c = st->st_bc;

	if (c == NULL)
		return;
	if (c->c_ng != NULL && st->st_bid > 0)
		(void)nghttp2_session_set_stream_user_data(c->c_ng,
		    st->st_bid, NULL);
	TAILQ_REMOVE(&c->c_streams, st, st_bentry);
	if (--c->c_nstreams == 0 && c->c_con != NULL) {
		getevtime(&c->c_idledue);
		c->c_idledue.tv_sec += c->c_con->se_relay->rl_proto->h2bidle;
	}
	st->st_bc = NULL;
	st->st_where = H2_NOWHERE;
	h2b_conn_later(c);
}

/* The client is through with st (reset, refused, gone): so is the backend. */
void
h2b_cancel(struct h2_stream *st)
{
	struct h2b_conn	*c = st->st_bc;

	if (c == NULL)
		return;
	if (c->c_ng != NULL && st->st_bid > 0)
		(void)nghttp2_submit_rst_stream(c->c_ng, NGHTTP2_FLAG_NONE,
		    st->st_bid, NGHTTP2_CANCEL);
	h2b_detach(st);
}

/* More of st's body came, or all of it: it goes on. */
void
h2b_body_more(struct h2_stream *st)
{
	struct h2b_conn	*c = st->st_bc;

	if (c == NULL)
		return;
	if (st->st_bdeferred) {
		st->st_bdeferred = 0;
		(void)nghttp2_session_resume_data(c->c_ng, st->st_bid);
	}
	h2b_conn_later(c);
}

/* The client took n bytes of st's answer: the backend may send them again. */
void
h2b_consumed(struct h2_stream *st, size_t n)
{
	struct h2b_conn	*c = st->st_bc;

	if (c == NULL)
		return;
	(void)nghttp2_session_consume_stream(c->c_ng, st->st_bid, n);
	h2b_conn_later(c);
}

/* A new connection of pool's to host, connected by the core. */
static struct h2b_conn *
h2b_conn_new(struct h2b_pool *p, struct rsession *con, struct host *host)
{
	struct protocol			*proto = con->se_relay->rl_proto;
	struct h2b_conn			*c;
	nghttp2_session_callbacks	*cbs;
	nghttp2_option			*opt;
	nghttp2_settings_entry		 iv[4];
	int				 ret;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return (NULL);
	c->c_pool = p;
	c->c_host = host;
	TAILQ_INIT(&c->c_streams);
	evtimer_set(&c->c_ev, h2b_conn_run, c);
	evtimer_set(&c->c_idleev, h2b_conn_idle, c);
	if (nghttp2_session_callbacks_new(&cbs) != 0) {
		free(c);
		return (NULL);
	}
	nghttp2_session_callbacks_set_send_callback(cbs, h2b_send_cb);
	nghttp2_session_callbacks_set_send_data_callback(cbs,
	    h2b_send_data_cb);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cbs,
	    h2b_begin_headers_cb);
	nghttp2_session_callbacks_set_on_header_callback(cbs, h2b_header_cb);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cbs,
	    h2b_frame_recv_cb);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs,
	    h2b_data_chunk_cb);
	nghttp2_session_callbacks_set_on_frame_send_callback(cbs,
	    h2b_frame_send_cb);
	nghttp2_session_callbacks_set_on_stream_close_callback(cbs,
	    h2b_stream_close_cb);
	if (nghttp2_option_new(&opt) != 0) {
		nghttp2_session_callbacks_del(cbs);
		free(c);
		return (NULL);
	}
	nghttp2_option_set_no_auto_window_update(opt, 1);
	nghttp2_option_set_peer_max_concurrent_streams(opt, proto->h2bstreams);
	ret = nghttp2_session_client_new2(&c->c_ng, cbs, c, opt);
	nghttp2_option_del(opt);
	nghttp2_session_callbacks_del(cbs);
	if (ret != 0) {
		free(c);
		return (NULL);
	}
	iv[0].settings_id = NGHTTP2_SETTINGS_ENABLE_PUSH;
	iv[0].value = 0;
	iv[1].settings_id = NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE;
	iv[1].value = H2_STREAM_RESP_MAX;
	iv[2].settings_id = NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE;
	iv[2].value = RELAY_MAXHEADERLENGTH;
	iv[3].settings_id = NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS;
	iv[3].value = 0;
	if (nghttp2_submit_settings(c->c_ng, NGHTTP2_FLAG_NONE, iv,
	    nitems(iv)) != 0 ||
	    nghttp2_session_set_local_window_size(c->c_ng, NGHTTP2_FLAG_NONE,
	    0, H2B_CONN_WINDOW) != 0 ||
	    (c->c_con = relay_link_shared(con, &relay_h2b_ops, p->p_table,
	    host)) == NULL) {
		nghttp2_session_del(c->c_ng);
		free(c);
		return (NULL);
	}
	c->c_con->se_priv = c;
	TAILQ_INSERT_TAIL(&p->p_conns, c, c_entry);
	return (c);
}

/* The pool of rlay's connections for table's hosts. */
static struct h2b_pool *
h2b_pool(struct relay *rlay, struct relay_table *table)
{
	struct h2b_pool	*p;

	TAILQ_FOREACH(p, &h2b_pools, p_entry)
		if (p->p_relay == rlay && p->p_table == table && !p->p_retired)
			return (p);
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return (NULL);
	p->p_relay = rlay;
	p->p_table = table;
	TAILQ_INIT(&p->p_conns);
	TAILQ_INSERT_TAIL(&h2b_pools, p, p_entry);
	return (p);
}

/* st's request on c: its head now, its body as the backend takes it. */
static int
h2b_stream_on(struct h2b_conn *c, struct h2_stream *st)
{
	struct rsession		*con = st->st_h2->h2_con;
	struct http_msg		*m = &st->st_req;
	nghttp2_data_provider	 prd;
	nghttp2_nv		*nv;
	const char		*auth;
	char			*names;
	size_t			 n, i;
	int32_t			 id;
	int			 body;

	if ((nv = h2b_nv(m, 4, &n, &names)) == NULL)
		return (-1);
	if ((auth = http_header_get(m, "host")) == NULL &&
	    (auth = st->st_authority) == NULL)
		auth = "";
	nv[0].name = (uint8_t *)":method";
	nv[0].value = (uint8_t *)(uintptr_t)http_method_name(m->hm_method);
	nv[1].name = (uint8_t *)":scheme";
	nv[1].value = (uint8_t *)((con->se_relay->rl_conf.flags &
	    F_TLSCLIENT) ? "https" : "http");
	nv[2].name = (uint8_t *)":authority";
	nv[2].value = (uint8_t *)(uintptr_t)auth;
	nv[3].name = (uint8_t *)":path";
	nv[3].value = (uint8_t *)m->hm_target;
	for (i = 0; i < 4; i++) {
		nv[i].namelen = strlen((char *)nv[i].name);
		nv[i].valuelen = strlen((char *)nv[i].value);
	}
	body = !st->st_reqdone || (st->st_body != NULL &&
	    evbuffer_get_length(st->st_body) > 0) ||
	    !TAILQ_EMPTY(&st->st_qtrailers.hm_headers);
	prd.source.ptr = NULL;
	prd.read_callback = h2b_data_read_cb;
	id = nghttp2_submit_request(c->c_ng, NULL, nv, n, body ? &prd : NULL,
	    st);
	free(names);
	free(nv);
	if (id < 0) {
		/* its stream ids ran out, say: no more of them here */
		c->c_draining = 1;
		h2b_conn_later(c);
		return (-1);
	}
	st->st_bid = id;
	st->st_bc = c;
	st->st_bhead = 0;
	st->st_bdeferred = 0;
	st->st_where = H2_BACKEND;
	TAILQ_INSERT_TAIL(&c->c_streams, st, st_bentry);
	c->c_nstreams++;
	if (c->c_up)
		relay_link_name(con, c->c_con);
	h2b_conn_later(c);
	return (0);
}

/* The streams c may carry at once. */
static unsigned int
h2b_room(struct h2b_conn *c, struct protocol *proto)
{
	unsigned int	 max = proto->h2bstreams, remote;

	remote = nghttp2_session_get_remote_settings(c->c_ng,
	    NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
	return (remote < max ? remote : max);
}

/*
 * st's request goes to the host its session's table gives it, on a
 * connection to it.  -1: no host is up, or no memory.
 */
int
h2b_submit(struct h2_stream *st)
{
	struct rsession		*con = st->st_h2->h2_con;
	struct protocol		*proto = con->se_relay->rl_proto;
	struct h2b_pool		*p;
	struct h2b_conn		*c, *room = NULL, *least = NULL;
	struct host		*host;
	int			 n = 0;

	/* NULL: "forward to" an address, no table */
	host = relay_choose(con, st->st_table);
	if ((host == NULL && !TAILQ_EMPTY(&con->se_relay->rl_tables)) ||
	    (p = h2b_pool(con->se_relay, st->st_table)) == NULL)
		return (-1);
	TAILQ_FOREACH(c, &p->p_conns, c_entry) {
		if (c->c_host != host || c->c_lost || c->c_draining)
			continue;
		n++;
		if (room == NULL && c->c_nstreams < h2b_room(c, proto))
			room = c;
		if (least == NULL || c->c_nstreams < least->c_nstreams)
			least = c;
	}
	if (room == NULL && n < proto->h2bconns)
		room = h2b_conn_new(p, con, host);
	if (room == NULL)
		room = least;
	if (room == NULL) {
		/* no connection could be made: no pool is kept for it */
		if (TAILQ_EMPTY(&p->p_conns)) {
			TAILQ_REMOVE(&h2b_pools, p, p_entry);
			free(p);
		}
		return (-1);
	}
	return (h2b_stream_on(room, st));
}

/*
 * c has frames to send: h2b_flush() sends them when the session that
 * gave them is through, else c's event does, after the events at hand
 * (made active, not a timer of 0 s: no other turn of the loop).
 */
static void
h2b_conn_later(struct h2b_conn *c)
{
	if (!c->c_dirty) {
		c->c_dirty = 1;
		TAILQ_INSERT_TAIL(&h2b_dirty, c, c_dentry);
	}
	if (!evtimer_pending(&c->c_ev, NULL))
		event_active(&c->c_ev, EV_TIMEOUT, 1);
}

static void
h2b_clean(struct h2b_conn *c)
{
	if (c->c_dirty) {
		c->c_dirty = 0;
		TAILQ_REMOVE(&h2b_dirty, c, c_dentry);
	}
}

/* c goes: its streams end as a lost backend's do, then the link. */
static void
h2b_conn_free(struct h2b_conn *c)
{
	struct h2b_pool		*p = c->c_pool;
	struct h2_stream	*st;

	while ((st = TAILQ_FIRST(&c->c_streams)) != NULL) {
		h2b_detach(st);
		if (!st->st_answered)
			h2_refuse(st, c->c_code != 0 ? c->c_code : 502,
			    c->c_page != NULL ? c->c_page : "backend closed");
		else if (!st->st_respdone)
			h2_answer_reset(st, NGHTTP2_INTERNAL_ERROR);
		st->st_bgone = 1;
		h2_wake(st->st_h2);
		h2_stream_release(st);
	}
	if (c->c_con != NULL) {
		c->c_con->se_priv = NULL;
		relay_close(c->c_con, "done", 0);
		c->c_con = NULL;
	}
	evtimer_del(&c->c_ev);
	evtimer_del(&c->c_idleev);
	h2b_clean(c);
	nghttp2_session_del(c->c_ng);
	TAILQ_REMOVE(&p->p_conns, c, c_entry);
	free(c);
	if (TAILQ_EMPTY(&p->p_conns)) {
		TAILQ_REMOVE(&h2b_pools, p, p_entry);
		free(p);
	}
}

/*
 * What c's streams and its backend's bytes left to do: nghttp2's frames
 * out, the idle timer of one with no streams.  1 when c is of no more
 * use (the caller frees it, or has its timer do it).
 */
static int
h2b_conn_work(struct h2b_conn *c)
{
	struct protocol		*proto;
	struct timeval		 tv;

	h2b_clean(c);
	if (!c->c_lost && c->c_up) {
		if (nghttp2_session_send(c->c_ng) != 0)
			c->c_lost = 1;
		else if (c->c_con != NULL)
			(void)relay_flush_passed(&c->c_con->se_in);
		if (!nghttp2_session_want_read(c->c_ng) &&
		    !nghttp2_session_want_write(c->c_ng))
			c->c_lost = 1;
	}
	if (c->c_nstreams == 0 && (c->c_draining || c->c_pool->p_retired))
		c->c_lost = 1;
	if (c->c_lost)
		return (1);
	/* its idle timer, when not armed yet: h2b_conn_idle() moves it */
	if (c->c_nstreams == 0 && c->c_con != NULL &&
	    !evtimer_pending(&c->c_idleev, NULL)) {
		proto = c->c_con->se_relay->rl_proto;
		tv.tv_sec = proto->h2bidle;
		tv.tv_usec = 0;
		evtimer_add(&c->c_idleev, &tv);
	}
	return (0);
}

static void
h2b_conn_run(int fd, short event, void *arg)
{
	struct h2b_conn		*c = arg;

	(void)fd;
	(void)event;
	if (h2b_conn_work(c))
		h2b_conn_free(c);
}

/*
 * The frames the client sessions' streams gave the backend connections
 * go now, not a turn of the loop later (a session calls it once its
 * client's bytes are through); a connection to free waits for its timer.
 */
void
h2b_flush(void)
{
	struct h2b_conn	*c;
	struct timeval	 tv = { 0, 0 };

	while ((c = TAILQ_FIRST(&h2b_dirty)) != NULL) {
		if (h2b_conn_work(c))
			evtimer_add(&c->c_ev, &tv);
		else
			evtimer_del(&c->c_ev);
	}
}

/* Idle for long enough: it goes, with a GOAWAY. */
static void
h2b_conn_idle(int fd, short event, void *arg)
{
	struct h2b_conn	*c = arg;

	(void)fd;
	(void)event;
	/* busy, or idle again since less than "http2 backend idle" */
	if (c->c_nstreams > 0 || evtimer_early(&c->c_idleev, &c->c_idledue))
		return;
	if (c->c_up) {
		(void)nghttp2_session_terminate_session(c->c_ng,
		    NGHTTP2_NO_ERROR);
		(void)nghttp2_session_send(c->c_ng);
		if (c->c_con != NULL)
			(void)relay_flush_passed(&c->c_con->se_in);
	}
	h2b_conn_free(c);
}

/*
 * A reload: the pools of the old relays take no more streams; their
 * connections go once they carry none (at once, those idle).
 */
void
relay_h2b_retire(void)
{
	struct h2b_pool	*p;
	struct h2b_conn	*c;

	TAILQ_FOREACH(p, &h2b_pools, p_entry) {
		p->p_retired = 1;
		TAILQ_FOREACH(c, &p->p_conns, c_entry)
			h2b_conn_later(c);
	}
}

/* Never called: the core connects a link at once. */
static enum relay_verdict
h2b_link_init(struct rsession *link)
{
	(void)link;
	return (RELAY_V_DONE);
}

/* The backend's bytes, to nghttp2. */
static enum relay_verdict
h2b_link_read(struct ctl_relay_event *cre)
{
	struct h2b_conn		*c = cre->con->se_priv;
	struct evbuffer		*in;
	struct evbuffer_iovec	 v[8];
	ssize_t			 ret;
	size_t			 done;
	int			 i, n;

	if (c == NULL)
		return (RELAY_V_DONE);
	in = bufferevent_get_input(cre->bev);
	while (!c->c_lost && evbuffer_get_length(in) > 0) {
		n = evbuffer_peek(in, -1, NULL, v, nitems(v));
		if (n > (int)nitems(v))
			n = nitems(v);
		done = 0;
		for (i = 0; i < n; i++) {
			ret = nghttp2_session_mem_recv(c->c_ng,
			    v[i].iov_base, v[i].iov_len);
			if (ret < 0) {
				c->c_lost = 1;
				break;
			}
			done += ret;
		}
		(void)evbuffer_drain(in, done);
	}
	h2b_conn_later(c);
	return (RELAY_V_DONE);
}

static enum relay_verdict
h2b_link_passed(struct ctl_relay_event *cre)
{
	(void)cre;
	return (RELAY_V_DONE);
}

/* Connected: the preface and the streams that waited go. */
static enum relay_verdict
h2b_link_connected(struct rsession *link)
{
	struct h2b_conn		*c = link->se_priv;
	struct h2_stream	*st;

	if (c == NULL)
		return (RELAY_V_DONE);
	c->c_up = 1;
	TAILQ_FOREACH(st, &c->c_streams, st_bentry)
		relay_link_name(st->st_h2->h2_con, link);
	h2b_conn_later(c);
	return (RELAY_V_DONE);
}

static enum relay_verdict
h2b_link_eof(struct ctl_relay_event *cre)
{
	struct h2b_conn	*c = cre->con->se_priv;

	if (c != NULL) {
		c->c_lost = 1;
		h2b_conn_later(c);
	}
	return (RELAY_V_DONE);
}

/* No connection: its streams get why's answer. */
static void
h2b_link_abort(struct rsession *link, enum relay_cfail why, int error)
{
	struct h2b_conn	*c = link->se_priv;

	(void)error;
	if (c != NULL) {
		c->c_code = h2b_cfail_codes[why];
		c->c_page = h2b_cfail_pages[why];
	}
	relay_close(link, h2b_cfail_pages[why], 1);
}

/* The core ended the connection: its streams hear of it soon. */
static void
h2b_link_free(struct rsession *link)
{
	struct h2b_conn	*c = link->se_priv;

	if (c == NULL)
		return;
	link->se_priv = NULL;
	c->c_con = NULL;
	if (c->c_code == 0 && link->se_why != NULL &&
	    strstr(link->se_why, "timeout") != NULL) {
		c->c_code = 504;
		c->c_page = "backend timeout";
	}
	c->c_lost = 1;
	h2b_conn_later(c);
}

static enum relay_verdict
h2b_link_drained(struct ctl_relay_event *cre)
{
	struct h2b_conn	*c = cre->con->se_priv;

	if (c != NULL)
		h2b_conn_later(c);
	return (RELAY_V_DONE);
}
