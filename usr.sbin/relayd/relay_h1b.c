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
 * HTTP/1.1 clients of a relay whose backends speak HTTP/2 ("http http2
 * backend"): each request becomes a stream of the backend side's
 * (relay_h2b.c), as an HTTP/2 client's would, and its answer is written
 * back as HTTP/1.1.  The session is an h2_session whose front is this
 * file (struct h2_front): what relay_h2.c would do to an nghttp2 session
 * it asks of us.
 *
 * One request at a time: the next one (pipelined, or on a kept-alive
 * connection) is read once the answer before it is written.  A body
 * goes to the backend as it comes and the client is not read while 64
 * KiB of it wait; an answer goes to the client as it comes, with its
 * length, else in chunks (its trailers in the last one), else to the
 * connection's end for an HTTP/1.0 client.  An answer the backend cuts
 * short, or a request relayd refuses without "return error", ends the
 * connection, as OpenBSD's relays end one.
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

#define H1B_BODY_MAX	(64 * 1024)	/* a request body waiting */

struct h1b_session {
	struct h2_session	 b_h2;		/* what relay_h2*.c see */
	struct http_framer	 b_fr;		/* the request coming */
	struct h2_stream	*b_st;		/* the request under way */
	off_t			 b_toread;	/* of its body, or chunk */
	int			 b_nreq;
	int			 b_headsent;	/* its answer's head went */
	int			 b_chunked;	/* the answer goes in chunks */
	int			 b_close;	/* the connection ends after it */
	int			 b_paused;	/* the client is not read */
	int			 b_reset;	/* the answer was cut short */
	int			 b_eof;		/* the client's end came */
};

static enum relay_verdict
		 h1b_init(struct rsession *);
static enum relay_verdict
		 h1b_read(struct ctl_relay_event *);
static enum relay_verdict
		 h1b_passed(struct ctl_relay_event *);
static enum relay_verdict
		 h1b_connected(struct rsession *);
static enum relay_verdict
		 h1b_eof(struct ctl_relay_event *);
static void	 h1b_abort(struct rsession *, enum relay_cfail, int);
static void	 h1b_free(struct rsession *);
static void	 h1b_hold_over(int, short, void *);
static enum relay_verdict
		 h1b_drained(struct ctl_relay_event *);

static int	 h1b_head(struct h2_stream *, struct http_msg *, int, int);
static void	 h1b_reset(struct h2_stream *, uint32_t);
static void	 h1b_taken(struct h2_stream *, size_t);
static enum relay_verdict
		 h1b_run(struct h1b_session *);

const struct relay_ops relay_h1b_ops = {
	"http to http2",
	1,
	h1b_init,
	h1b_read,
	h1b_passed,
	h1b_connected,
	h1b_eof,
	h1b_abort,
	h1b_free,
	h1b_drained,
	NULL
};

static const struct h2_front h1b_front = {
	h1b_head,
	h1b_reset,
	h1b_taken
};

static struct evbuffer *
h1b_out(struct h1b_session *b)
{
	return (bufferevent_get_output(b->b_h2.h2_con->se_in.bev));
}

/*
 * The reason phrase of a status (HTTP/2 has none): the usual ones, those
 * relayd answers with, else none (RFC 9112 4 lets it be empty).
 */
static const char *
h1b_reason(int code)
{
	static const struct {
		int		 code;
		const char	*name;
	} reasons[] = {
		{ 100, "Continue" }, { 103, "Early Hints" }, { 200, "OK" },
		{ 201, "Created" }, { 202, "Accepted" }, { 204, "No Content" },
		{ 206, "Partial Content" }, { 301, "Moved Permanently" },
		{ 302, "Found" }, { 303, "See Other" }, { 304, "Not Modified" },
		{ 307, "Temporary Redirect" }, { 308, "Permanent Redirect" },
		{ 401, "Unauthorized" }, { 404, "Not Found" },
		{ 409, "Conflict" }, { 410, "Gone" }, { 503,
		"Service Unavailable" }
	};
	const char	*name;
	size_t		 i;

	for (i = 0; i < nitems(reasons); i++)
		if (reasons[i].code == code)
			return (reasons[i].name);
	name = http_error_name(code);
	return (strcmp(name, "Unknown Error") == 0 ? "" : name);
}

/* The head of an answer, as HTTP/1.1: 0, or -1 without memory. */
static int
h1b_head(struct h2_stream *st, struct http_msg *m, int hasbody, int final)
{
	struct h1b_session	*b = (struct h1b_session *)st->st_h2;
	struct evbuffer		*out = h1b_out(b);
	struct http_header	*h;
	int			 len, ret = 0, conn;

	len = http_header_get(m, "content-length") != NULL;
	if (final) {
		b->b_chunked = hasbody && !len && st->st_req.hm_minor > 0;
		/* HTTP/1.0: the answer runs to the connection's end */
		if (hasbody && !len && !b->b_chunked)
			b->b_close = 1;
		if (st->st_req.hm_close)
			b->b_close = 1;
	}
	if (evbuffer_add_printf(out, "HTTP/1.1 %03d %s\r\n", m->hm_code,
	    h1b_reason(m->hm_code)) == -1)
		return (-1);
	conn = http_header_get(m, "connection") != NULL;
	TAILQ_FOREACH(h, &m->hm_headers, hh_entry) {
		if (h2_hop_static(h->hh_name) ||
		    (conn && h2_hop_named(m, h->hh_name)))
			continue;
		if (evbuffer_add_printf(out, "%s: %s\r\n", h->hh_name,
		    h->hh_value) == -1)
			return (-1);
	}
	if (final && b->b_chunked)
		ret = evbuffer_add_printf(out,
		    "Transfer-Encoding: chunked\r\n");
	else if (final && !hasbody && !len && m->hm_code != 204 &&
	    m->hm_code != 304)
		ret = evbuffer_add_printf(out, "Content-Length: 0\r\n");
	if (ret == -1 || (final && b->b_close &&
	    evbuffer_add_printf(out, "Connection: close\r\n") == -1) ||
	    evbuffer_add(out, "\r\n", 2) == -1)
		return (-1);
	if (final)
		b->b_headsent = 1;
	h2_wake(&b->b_h2);
	return (0);
}

/* No answer can go on: the connection ends. */
static void
h1b_reset(struct h2_stream *st, uint32_t code)
{
	struct h1b_session	*b = (struct h1b_session *)st->st_h2;

	(void)code;
	b->b_reset = 1;
	h2_wake(&b->b_h2);
}

/* Body bytes went to the backend: the client is read again. */
static void
h1b_taken(struct h2_stream *st, size_t n)
{
	struct h1b_session	*b = (struct h1b_session *)st->st_h2;

	(void)n;
	if (b->b_paused && (st->st_body == NULL ||
	    evbuffer_get_length(st->st_body) < H1B_BODY_MAX)) {
		b->b_paused = 0;
		relay_read_on(&b->b_h2.h2_con->se_in);
	}
	h2_wake(&b->b_h2);
}

static void
h1b_again(int fd, short event, void *arg)
{
	struct h1b_session	*b = arg;

	(void)fd;
	(void)event;
	h2_turn = &b->b_h2;
	relay_wish(b->b_h2.h2_con, h1b_run(b));
	h2_turn = NULL;
}

static enum relay_verdict
h1b_init(struct rsession *con)
{
	struct protocol		*proto = con->se_relay->rl_proto;
	struct h1b_session	*b;
	struct h2_session	*h2;

	if ((b = calloc(1, sizeof(*b))) == NULL) {
		relay_close(con, "out of memory", 1);
		return (RELAY_V_CLOSED);
	}
	h2 = &b->b_h2;
	h2->h2_front = &h1b_front;
	h2->h2_con = con;
	TAILQ_INIT(&h2->h2_all);
	TAILQ_INIT(&h2->h2_waiting);
	TAILQ_INIT(&h2->h2_links);
	h2->h2_maxhdr = proto->httpheaderlen > 0 ? proto->httpheaderlen :
	    RELAY_MAXHEADERLENGTH;
	evtimer_set(&h2->h2_againev, h1b_again, b);
	evtimer_set(&h2->h2_holdev, h1b_hold_over, b);
	con->se_priv = b;
	return (RELAY_V_READ);
}

/* A request head is through: the rules, then a backend's stream. */
static void
h1b_request(struct h1b_session *b, struct h2_stream *st)
{
	struct rsession		*con = b->b_h2.h2_con;
	struct http_msg		*m = &st->st_req;
	struct http_header	*h;
	const char		*method, *host;
	char			 log[32], line[RELAY_REQUEST_SIZE], *p, *q;
	int			 code;

	st->st_headdone = 1;
	b->b_h2.h2_requests++;
	method = http_method_name(m->hm_method);
	(void)snprintf(log, sizeof(log), " %s", method);
	relay_log(con, log);
	(void)snprintf(line, sizeof(line), "%s %s HTTP/1.%d", method,
	    m->hm_target, m->hm_minor);
	relay_request(con, line);
	switch (m->hm_body) {
	case HTTP_BODY_LENGTH:
		b->b_toread = m->hm_clen;
		b->b_fr.fr_state = HTTP_F_BODY;
		st->st_reqdone = m->hm_clen == 0;
		break;
	case HTTP_BODY_CHUNKED:
		b->b_fr.fr_state = HTTP_F_CHUNK;
		break;
	default:
		st->st_reqdone = 1;
		break;
	}
	if (strcmp(method, "CONNECT") == 0 || m->hm_upgrade) {
		h2_refuse(st, 405, "no CONNECT or Upgrade to HTTP/2");
		return;
	}
	if ((host = http_header_get(m, "host")) == NULL ||
	    (st->st_authority = strdup(host)) == NULL) {
		h2_refuse(st, 400, "no Host");
		return;
	}
	/* an absolute form's path alone is HTTP/2's :path */
	if (m->hm_target[0] != '/' && strcmp(m->hm_target, "*") != 0) {
		if ((p = strstr(m->hm_target, "://")) == NULL ||
		    (p = strdup(p + 3 + strcspn(p + 3, "/?"))) == NULL) {
			h2_refuse(st, 400, "malformed target");
			return;
		}
		if (p[0] == '?' || p[0] == '\0') {
			q = p;
			if (asprintf(&p, "/%s", q) == -1)
				p = NULL;
			free(q);
		}
		if (p == NULL) {
			h2_refuse(st, 500, "out of memory");
			return;
		}
		free(m->hm_target);
		m->hm_target = p;
	}
	/* Expect: 100-continue is answered here, for the backend's h2 */
	while ((h = http_header_walk(m, NULL, http_header_named, "Expect",
	    1)) != NULL) {
		if (strcasecmp(h->hh_value, "100-continue") == 0 &&
		    !st->st_reqdone)
			(void)evbuffer_add_printf(h1b_out(b),
			    "HTTP/1.1 100 Continue\r\n\r\n");
		http_header_remove(m, h);
	}
	if ((st->st_retry = relay_limit_request(con->se_relay,
	    &con->se_in.ss, &con->se_limq)) > 0) {
		h2_refuse(st, 429, NULL);
		return;
	}
	if ((code = http_rules(&con->se_in, m, &st->st_table)) != 0) {
		h2_refuse(st, code, NULL);
		return;
	}
	st->st_tries++;
	if (h2b_submit(st) == -1)
		h2_refuse(st, 502, "session failed");
}

/*
 * The request's head and body, as they come: 1 to go on, 0 to wait for
 * more, -1 when the client sent what is no HTTP (the session ends).
 */
static int
h1b_parse(struct h1b_session *b, struct evbuffer *in)
{
	struct h2_stream	*st = b->b_st;
	struct http_framer	*fr = &b->b_fr;
	size_t			 n;
	int			 bad;

	if (st->st_reqdone)
		return (0);
	if (st->st_body != NULL &&
	    evbuffer_get_length(st->st_body) >= H1B_BODY_MAX) {
		if (!b->b_paused) {
			b->b_paused = 1;
			relay_read_off(&b->b_h2.h2_con->se_in);
		}
		return (0);
	}
	switch (http_frame(fr, &st->st_req, in)) {
	case HTTP_FR_MORE:
		return (0);
	case HTTP_FR_HEADLINE:
		return (1);
	case HTTP_FR_HEAD:
		h1b_request(b, st);
		return (1);
	case HTTP_FR_DATA:
		if ((n = evbuffer_get_length(in)) == 0)
			return (0);
		if (n > (size_t)b->b_toread)
			n = b->b_toread;
		if (st->st_error != 0 || st->st_where != H2_BACKEND)
			(void)evbuffer_drain(in, n);
		else if ((st->st_body == NULL &&
		    (st->st_body = h2_buf_new()) == NULL) ||
		    evbuffer_remove_buffer(in, st->st_body, n) != (int)n)
			return (-1);
		if ((b->b_toread -= n) == 0 && http_frame_data_done(fr))
			st->st_reqdone = 1;
		h2b_body_more(st);
		return (1);
	case HTTP_FR_LINE:
		if (fr->fr_state == HTTP_F_CHUNKDATA)
			b->b_toread = fr->fr_size;
		bad = fr->fr_linestate == HTTP_F_TRAILER &&
		    h2_trailer(&st->st_qtrailers, fr->fr_line) == -1;
		free(fr->fr_line);
		return (bad ? -1 : 1);
	case HTTP_FR_END:
		free(fr->fr_line);
		st->st_reqdone = 1;
		h2b_body_more(st);
		return (1);
	case HTTP_FR_ERROR:
		break;
	}
	/* a head that is no HTTP gets its status, once, as OpenBSD's */
	if (!st->st_headdone) {
		st->st_headdone = 1;
		st->st_reqdone = 1;
		b->b_close = 1;
		h2_refuse(st, fr->fr_code != 0 ? fr->fr_code : 400,
		    fr->fr_error != NULL ? fr->fr_error : "malformed");
		return (1);
	}
	return (-1);
}

/*
 * The answer's bytes to the client, as far as its output takes them: 1
 * when the answer is all written (and the request all read), else 0.
 */
static int
h1b_answer(struct h1b_session *b)
{
	struct h2_stream	*st = b->b_st;
	struct evbuffer		*out = h1b_out(b);
	struct http_header	*h;
	size_t			 n;

	while (b->b_headsent && st->st_resp != NULL &&
	    (n = evbuffer_get_length(st->st_resp)) > 0 &&
	    evbuffer_get_length(out) < H2_OUT_MAX) {
		if (n > H2_STREAM_RESP_MAX)
			n = H2_STREAM_RESP_MAX;
		if ((b->b_chunked &&
		    evbuffer_add_printf(out, "%zx\r\n", n) == -1) ||
		    evbuffer_remove_buffer(st->st_resp, out, n) != (int)n ||
		    (b->b_chunked && evbuffer_add(out, "\r\n", 2) == -1))
			return (-1);
		h2b_consumed(st, n);
	}
	if (!b->b_headsent || !st->st_respdone || (st->st_resp != NULL &&
	    evbuffer_get_length(st->st_resp) > 0))
		return (0);
	if (b->b_chunked) {
		if (evbuffer_add(out, "0\r\n", 3) == -1)
			return (-1);
		TAILQ_FOREACH(h, &st->st_rtrailers.hm_headers, hh_entry)
			if (evbuffer_add_printf(out, "%s: %s\r\n", h->hh_name,
			    h->hh_value) == -1)
				return (-1);
		if (evbuffer_add(out, "\r\n", 2) == -1)
			return (-1);
	}
	/* a request not all read cannot be followed by another */
	if (!st->st_reqdone)
		b->b_close = 1;
	return (1);
}

/* The request and its answer are through. */
static void
h1b_done(struct h1b_session *b)
{
	struct h2_stream	*st = b->b_st;
	int			 held = st->st_retry > 0;

	b->b_st = NULL;
	b->b_headsent = b->b_chunked = 0;
	memset(&b->b_fr, 0, sizeof(b->b_fr));
	if (st->st_where == H2_BACKEND)
		h2b_cancel(st);
	st->st_closed = 1;
	st->st_where = H2_NOWHERE;
	h2_stream_release(st);
	if (b->b_paused) {
		b->b_paused = 0;
		relay_read_on(&b->b_h2.h2_con->se_in);
	}
	/* a 429: the next request when its source may ask again */
	if (held)
		h2_hold(&b->b_h2);
}

/* The wait after a 429 is over: the client is read again. */
static void
h1b_hold_over(int fd, short event, void *arg)
{
	struct h1b_session	*b = arg;

	(void)fd;
	(void)event;
	relay_read_again(&b->b_h2.h2_con->se_in);
}

static enum relay_verdict
h1b_run(struct h1b_session *b)
{
	struct rsession		*con = b->b_h2.h2_con;
	struct evbuffer		*in;
	int			 ret;

	in = bufferevent_get_input(con->se_in.bev);
	for (;;) {
		if (b->b_reset) {
			relay_close(con, b->b_st != NULL &&
			    b->b_st->st_errmsg != NULL ? b->b_st->st_errmsg :
			    "backend reset", 1);
			return (RELAY_V_CLOSED);
		}
		if (b->b_st == NULL) {
			/* after the client's end, what it sent before */
			if (b->b_close || (b->b_eof &&
			    evbuffer_get_length(in) == 0)) {
				(void)relay_end_written(&con->se_in, "done");
				return (RELAY_V_CLOSED);
			}
			if (evbuffer_get_length(in) == 0 ||
			    evtimer_pending(&b->b_h2.h2_holdev, NULL))
				break;
			if ((b->b_st = h2_stream_new(&b->b_h2,
			    ++b->b_nreq)) == NULL) {
				relay_close(con, "out of memory", 1);
				return (RELAY_V_CLOSED);
			}
			http_msg_init(&b->b_st->st_req, RELAY_DIR_REQUEST,
			    b->b_h2.h2_maxhdr);
		}
		while ((ret = h1b_parse(b, in)) == 1)
			;
		if (ret == -1) {
			relay_close(con, "request malformed", 1);
			return (RELAY_V_CLOSED);
		}
		if ((ret = h1b_answer(b)) == -1) {
			relay_close(con, "out of memory", 1);
			return (RELAY_V_CLOSED);
		}
		if (ret == 0)
			break;
		h1b_done(b);
	}
	h2b_flush();
	(void)relay_flush_passed(&con->se_out);
	return (RELAY_V_DONE);
}

static enum relay_verdict
h1b_read(struct ctl_relay_event *cre)
{
	struct h1b_session	*b = cre->con->se_priv;

	return (h1b_run(b));
}

static enum relay_verdict
h1b_passed(struct ctl_relay_event *cre)
{
	(void)cre;
	return (RELAY_V_DONE);
}

/* Never asked for: the session's backends are the shared ones. */
static enum relay_verdict
h1b_connected(struct rsession *con)
{
	(void)con;
	return (RELAY_V_DONE);
}

/*
 * The client's end: the requests it sent before are answered first; a
 * request cut short goes.
 */
static enum relay_verdict
h1b_eof(struct ctl_relay_event *cre)
{
	struct h1b_session	*b = cre->con->se_priv;
	struct h2_stream	*st = b->b_st;

	if (st != NULL && !st->st_reqdone && evbuffer_get_length(
	    bufferevent_get_input(cre->bev)) == 0) {
		(void)relay_end_written(&cre->con->se_in, "done");
		return (RELAY_V_CLOSED);
	}
	b->b_eof = 1;
	return (h1b_run(b));
}

static void
h1b_abort(struct rsession *con, enum relay_cfail why, int error)
{
	(void)why;
	(void)error;
	relay_close(con, "session failed", 1);
}

static void
h1b_free(struct rsession *con)
{
	struct h1b_session	*b = con->se_priv;
	struct h2_stream	*st;

	if (b == NULL)
		return;
	while ((st = TAILQ_FIRST(&b->b_h2.h2_all)) != NULL) {
		st->st_closed = 1;
		if (st->st_where == H2_BACKEND)
			h2b_cancel(st);
		st->st_where = H2_NOWHERE;
		h2_stream_release(st);
	}
	evtimer_del(&b->b_h2.h2_againev);
	evtimer_del(&b->b_h2.h2_holdev);
	free(b);
	con->se_priv = NULL;
}

static enum relay_verdict
h1b_drained(struct ctl_relay_event *cre)
{
	struct h1b_session	*b = cre->con->se_priv;

	return (h1b_run(b));
}
