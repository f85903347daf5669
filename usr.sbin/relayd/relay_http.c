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
 * The HTTP relay: sessions of an "http protocol".  Their messages are
 * parsed and framed by http_msg.c.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "relayd.h"
#include "relay.h"
#include "http.h"

/*
 * Sessions.  Each direction reads message heads in userland and writes
 * them out again from the parsed model; a body of known length, and each
 * chunk of a chunked one, passes with relay_pass(): spliced with max set
 * to its length where the relay splices.  Then the direction reads a
 * head again.  Requests are answered in order: the methods wait in a
 * queue for their responses (HEAD and CONNECT change how a response is
 * framed).
 */

#define HTTP_PIPELINE_MAX	100	/* requests waiting for answers */

struct http_dir {
	struct http_msg		 hd_msg;
	struct http_framer	 hd_fr;		/* its body: toread */
};

struct http_session {
	struct http_dir		 hs_dir[2];
	int			 hs_methods[HTTP_PIPELINE_MAX];
	int			 hs_first;
	int			 hs_nmethods;
	int			 hs_upgrade;	/* a websocket waits */
	int			 hs_paused;	/* the queue was full */
	int			 hs_connecting;	/* a backend is asked for */
	enum relay_verdict	 hs_want;	/* for the core, after the
						   parse (http_run()) */
	int			 hs_lastreq;	/* a request said close */
	struct event		 hs_headev;	/* a request head's deadline */
	struct event		 hs_holdev;	/* a 429's wait is over */
	int			 hs_held;	/* no request until then */
	int			 hs_closing;	/* the last answer is on */
	/* the heads before the connect */
	struct evbuffer		*hs_pending;
};

/* an answer made once and referred to by the buffers that send it */
struct http_canned {
	int		 hc_refs;	/* the relay's, and each buffer's */
	time_t		 hc_time;	/* its Date */
	int		 hc_wait;	/* its Retry-After */
	size_t		 hc_len;
	char		 hc_data[];
};

static enum relay_verdict
		 http_init(struct rsession *);
static enum relay_verdict
		 http_read(struct ctl_relay_event *);
static enum relay_verdict
		 http_connected(struct rsession *);
static enum relay_verdict
		 http_eof(struct ctl_relay_event *);
static void	 http_nobackend(struct rsession *, enum relay_cfail, int);
static int	 http_ready(struct ctl_relay_event *, struct http_session *);
static void	 http_free(struct rsession *);
static enum relay_verdict
		 http_run(struct ctl_relay_event *);
static int	 http_parse(struct ctl_relay_event *, struct http_session *,
		    struct http_dir *);
static int	 http_head(struct ctl_relay_event *, struct http_session *,
		    struct http_dir *);
static int	 http_request(struct ctl_relay_event *, struct http_session *,
		    struct http_dir *);
static int	 http_request_body(struct ctl_relay_event *, struct http_dir *);
static int	 http_response(struct ctl_relay_event *,
		    struct http_session *, struct http_dir *);
static void	 http_msg_end(struct http_dir *);
static void	 http_head_timeout(int, short, void *);
static void	 http_hold_over(int, short, void *);
static int	 http_abort(struct rsession *, int, const char *);
static struct http_canned
		*http_canned429(struct rsession *, int, int);
static void	 http_canned_unref(const void *, size_t, void *);
static int	 http_too_many(struct ctl_relay_event *,
		    struct http_session *, struct http_dir *, int);

/* after a spliced body or chunk (ro_passed), the parser goes on */
const struct relay_ops relay_http_ops = {
	"http",
	1,
	http_init,
	http_read,
	http_read,
	http_connected,
	http_eof,
	http_nobackend,
	http_free,
	NULL,
	NULL
};

static enum relay_verdict
http_init(struct rsession *con)
{
	struct protocol		*proto = con->se_relay->rl_proto;
	struct http_session	*hs;
	size_t			 max;

	max = proto->httpheaderlen > 0 ? proto->httpheaderlen :
	    RELAY_MAXHEADERLENGTH;
	if ((hs = calloc(1, sizeof(*hs))) == NULL ||
	    (hs->hs_pending = evbuffer_new()) == NULL) {
		free(hs);
		relay_close(con, "out of memory", 1);
		return (RELAY_V_CLOSED);
	}
	http_msg_init(&hs->hs_dir[RELAY_DIR_REQUEST].hd_msg,
	    RELAY_DIR_REQUEST, max);
	http_msg_init(&hs->hs_dir[RELAY_DIR_RESPONSE].hd_msg,
	    RELAY_DIR_RESPONSE, max);
	con->se_priv = hs;
	evtimer_set(&hs->hs_headev, http_head_timeout, con);
	evtimer_set(&hs->hs_holdev, http_hold_over, con);
	/* the request comes first, then the backend */
	return (RELAY_V_READ);
}

static void
http_free(struct rsession *con)
{
	struct http_session	*hs = con->se_priv;

	if (hs == NULL)
		return;
	http_msg_clear(&hs->hs_dir[0].hd_msg);
	http_msg_clear(&hs->hs_dir[1].hd_msg);
	evtimer_del(&hs->hs_headev);
	evtimer_del(&hs->hs_holdev);
	evbuffer_free(hs->hs_pending);
	free(hs);
	con->se_priv = NULL;
}

/* Bytes came, or a spliced body or chunk passed: the parser goes on. */
static enum relay_verdict
http_read(struct ctl_relay_event *cre)
{
	return (http_run(cre));
}

/* The backend is connected: what waited for it goes out. */
static enum relay_verdict
http_connected(struct rsession *con)
{
	struct http_session	*hs = con->se_priv;
	enum relay_verdict	 v;

	hs->hs_connecting = 0;
	relay_log_backend(con);
	if (evbuffer_add_buffer(bufferevent_get_output(con->se_out.bev),
	    hs->hs_pending) == -1) {
		relay_close(con, "buffer event failed", 1);
		return (RELAY_V_CLOSED);
	}
	relay_read_on(&con->se_in);
	v = http_run(&con->se_in);
	/* the client's end came while the backend was on its way */
	if (v == RELAY_V_DONE && con->se_in.done)
		return (RELAY_V_EOF);
	return (v);
}

/*
 * The parser of cre's direction, on what its input holds; then what it
 * passed goes out, and what it wants of the core is the answer: a
 * backend (a request's), the other direction's parser (an answer let
 * requests on), or CLOSED.
 */
static enum relay_verdict
http_run(struct ctl_relay_event *cre)
{
	struct http_session	*hs = cre->con->se_priv;
	struct http_dir		*hd = &hs->hs_dir[cre->dir];
	enum relay_verdict	 v;

	if (http_parse(cre, hs, hd) == -1)
		return (RELAY_V_CLOSED);
	/* all that one read brought goes out now, or none of it */
	if (relay_flush_passed(cre) == -1)
		return (RELAY_V_CLOSED);
	/* an answer with "close", or the last request's, is through */
	if (cre->dir == RELAY_DIR_RESPONSE && hs->hs_closing &&
	    hd->hd_fr.fr_state == HTTP_F_HEAD && hd->hd_msg.hm_nlines == 0 &&
	    relay_end_written(cre->dst, "done") == -1)
		return (RELAY_V_CLOSED);
	v = hs->hs_want;
	hs->hs_want = RELAY_V_DONE;
	return (v);
}

/*
 * The other side takes cre's bytes: it is there, and for requests no
 * other backend is asked for (until then they wait in hs_pending).
 */
static int
http_ready(struct ctl_relay_event *cre, struct http_session *hs)
{
	return (cre->dst->bev != NULL &&
	    (cre->dir == RELAY_DIR_RESPONSE || !hs->hs_connecting));
}

/* Where the bytes of cre go: the other side, or wait for its connect. */
static struct evbuffer *
http_out(struct ctl_relay_event *cre, struct http_session *hs)
{
	if (http_ready(cre, hs))
		return (bufferevent_get_output(cre->dst->bev));
	return (hs->hs_pending);
}

/* A line passed on as it came, with its CRLF; takes line.  -1: closed. */
static int
http_put_line(struct ctl_relay_event *cre, struct http_session *hs,
    char *line, size_t len)
{
	struct evbuffer	*out = http_out(cre, hs);
	int		 ret;

	ret = evbuffer_add(out, line, len) == -1 ||
	    evbuffer_add(out, "\r\n", 2) == -1 ? -1 : 0;
	free(line);
	if (ret == -1)
		return (http_abort(cre->con, 500, "out of memory"));
	return (0);
}

/*
 * While the backend is on its way, what is parsed waits in hs_pending,
 * up to a head's size and one read more: then reading stops until the
 * connect is through (http_connected).
 */
static int
http_pending_full(struct ctl_relay_event *cre, struct http_session *hs)
{
	struct http_msg	*m = &hs->hs_dir[cre->dir].hd_msg;
	size_t		 max;

	if (http_ready(cre, hs))
		return (0);
	max = (m->hm_maxlen > 0 ? m->hm_maxlen : RELAY_MAXHEADERLENGTH) +
	    RELAY_READ_SIZE;
	if (evbuffer_get_length(hs->hs_pending) < max)
		return (0);
	relay_read_off(cre);
	return (1);
}

/*
 * Body bytes on: to the other side, or into hs_pending before the
 * connect.  1 when the parser may go on (toread decides), 0 when it
 * waits, -1 when the session was closed.
 */
static int
http_pass(struct ctl_relay_event *cre, struct http_session *hs)
{
	if (http_ready(cre, hs))
		return (relay_pass(cre) == -1 ? -1 : 1);
	if (http_pending_full(cre, hs))
		return (0);
	if (relay_take(cre, hs->hs_pending) == -1)
		return (http_abort(cre->con, 500, "out of memory"));
	return (1);
}

/*
 * A request head has begun (some of it is read): it must be through
 * within the protocol's header timeout (ours), so that a client that
 * sends it a byte at a time cannot keep the session for the whole
 * session timeout.
 */
static void
http_head_started(struct ctl_relay_event *cre, struct http_session *hs,
    int begun)
{
	struct timeval	 tv;

	if (cre->dir != RELAY_DIR_REQUEST || !begun ||
	    evtimer_pending(&hs->hs_headev, NULL))
		return;
	tv.tv_sec = cre->con->se_relay->rl_proto->httpheadtimeout;
	tv.tv_usec = 0;
	if (tv.tv_sec > 0)
		evtimer_add(&hs->hs_headev, &tv);
}

static void
http_head_timeout(int fd, short event, void *arg)
{
	(void)fd;
	(void)event;
	(void)http_abort(arg, 408, "request header timeout");
}

/*
 * Before a request head is read: 1 when it may be, 0 when it waits
 * (for the answers, or for the backend).
 */
static int
http_head_ready(struct ctl_relay_event *cre, struct http_session *hs,
    struct evbuffer *in)
{
	if (cre->dir != RELAY_DIR_REQUEST)
		return (1);
	if (hs->hs_held) {
		/* a 429 was the answer: the next request waits */
		relay_read_off(cre);
		return (0);
	}
	if (hs->hs_lastreq) {
		/* RFC 9112 9.6: no request after "close" */
		relay_read_off(cre);
		(void)evbuffer_drain(in, evbuffer_get_length(in));
		return (0);
	}
	if (http_pending_full(cre, hs))
		return (0);
	if (hs->hs_nmethods == HTTP_PIPELINE_MAX) {
		/* the answers come first */
		relay_read_off(cre);
		hs->hs_paused = 1;
		return (0);
	}
	return (1);
}

/*
 * Body bytes, or a chunk's (toread of them), or all to the end: passed
 * on, spliced where the relay splices.  1 when they are through and
 * the parser goes on, 0 when it waits, -1 when the session was closed.
 */
static int
http_parse_body(struct ctl_relay_event *cre, struct http_session *hs,
    struct http_dir *hd)
{
	int	 ret;

	if (hd->hd_fr.fr_state == HTTP_F_RAW) {
		cre->toread = TOREAD_UNLIMITED;
		return (http_pass(cre, hs) == -1 ? -1 : 0);
	}
	if (cre->toread > 0) {
		if ((ret = http_pass(cre, hs)) != 1)
			return (ret);
		if (cre->toread > 0)
			return (0);
	}
	if (http_frame_data_done(&hd->hd_fr))
		http_msg_end(hd);
	return (1);
}

/*
 * Messages of one direction, from what its input holds, a step of the
 * framer (http_msg.c) at a time: heads are parsed and written out again
 * from the model (http_head()), bodies and chunks pass, the framing
 * lines of a chunked body pass as they came.
 */
static int
http_parse(struct ctl_relay_event *cre, struct http_session *hs,
    struct http_dir *hd)
{
	struct evbuffer		*in = bufferevent_get_input(cre->bev);
	struct http_framer	*fr = &hd->hd_fr;
	int			 ret;

	/*
	 * As OpenBSD: the backend is asked for once the first head is
	 * through, and what follows it (its body) is parsed while it
	 * connects; an invalid body ends a session that had a backend.
	 */
	while (!cre->splicing && hs->hs_want != RELAY_V_CONNECT) {
		if (fr->fr_state == HTTP_F_HEAD &&
		    !http_head_ready(cre, hs, in))
			return (0);
		switch (http_frame(fr, &hd->hd_msg, in)) {
		case HTTP_FR_MORE:
			if (fr->fr_state == HTTP_F_HEAD)
				http_head_started(cre, hs,
				    evbuffer_get_length(in) > 0);
			return (0);
		case HTTP_FR_HEADLINE:
			http_head_started(cre, hs, 1);
			break;
		case HTTP_FR_HEAD:
			if (cre->dir == RELAY_DIR_REQUEST)
				evtimer_del(&hs->hs_headev);
			if (http_head(cre, hs, hd) == -1)
				return (-1);
			break;
		case HTTP_FR_DATA:
			if ((ret = http_parse_body(cre, hs, hd)) != 1)
				return (ret == -1 ? -1 : 0);
			break;
		case HTTP_FR_LINE:
			if (http_put_line(cre, hs, fr->fr_line,
			    fr->fr_len) == -1)
				return (-1);
			if (fr->fr_state == HTTP_F_CHUNKDATA)
				cre->toread = fr->fr_size;
			break;
		case HTTP_FR_END:
			if (http_put_line(cre, hs, fr->fr_line,
			    fr->fr_len) == -1)
				return (-1);
			http_msg_end(hd);
			break;
		case HTTP_FR_ERROR:
			return (http_abort(cre->con, fr->fr_code,
			    fr->fr_error));
		}
	}
	return (0);
}

/* Some field of that name lists the token. */
static int
http_field_has(struct http_msg *m, const char *name, const char *token)
{
	struct http_header	*h = NULL;

	while ((h = http_header_walk(m, h, http_header_named, name, 1)) !=
	    NULL)
		if (http_has_token(h->hh_value, token))
			return (1);
	return (0);
}

static int
http_head(struct ctl_relay_event *cre, struct http_session *hs,
    struct http_dir *hd)
{
	if (cre->dir == RELAY_DIR_REQUEST)
		return (http_request(cre, hs, hd));
	return (http_response(cre, hs, hd));
}

/*
 * What follows a request head, as OpenBSD frames it: CONNECT is a
 * tunnel; GET, HEAD, COPY and MOVE have no body but a chunked one (a
 * Content-Length goes from the head, and what follows is the next
 * request); the other methods but TRACE have the body their length or
 * chunks say, and without either it runs to the client's end.  1 when
 * the rest of the connection passes as it comes.
 */
static int
http_request_body(struct ctl_relay_event *cre, struct http_dir *hd)
{
	static const char	*nobody[] = { "GET", "HEAD", "COPY", "MOVE" };
	struct http_msg		*m = &hd->hd_msg;
	struct http_header	*h, *next;
	const char		*method = http_method_name(m->hm_method);
	size_t			 i;

	if (strcmp(method, "CONNECT") == 0) {
		hd->hd_fr.fr_state = HTTP_F_RAW;
		return (1);
	}
	if (m->hm_body == HTTP_BODY_CHUNKED) {
		hd->hd_fr.fr_state = HTTP_F_CHUNK;
		return (0);
	}
	for (i = 0; i < nitems(nobody); i++)
		if (strcmp(method, nobody[i]) == 0)
			break;
	if (i < nitems(nobody)) {
		for (h = TAILQ_FIRST(&m->hm_headers); h != NULL; h = next) {
			next = TAILQ_NEXT(h, hh_entry);
			if (strcasecmp(h->hh_name, "Content-Length") == 0)
				http_header_remove(m, h);
		}
		return (0);
	}
	if (m->hm_body == HTTP_BODY_LENGTH) {
		cre->toread = m->hm_clen;
		hd->hd_fr.fr_state = HTTP_F_BODY;
		return (0);
	}
	if (m->hm_clen == -1 && strcmp(method, "TRACE") != 0) {
		hd->hd_fr.fr_state = HTTP_F_RAW;
		return (1);
	}
	return (0);
}

static int
http_request(struct ctl_relay_event *cre, struct http_session *hs,
    struct http_dir *hd)
{
	struct rsession		*con = cre->con;
	struct protocol		*proto = con->se_relay->rl_proto;
	struct http_msg		*m = &hd->hd_msg;
	const char		*method = http_method_name(m->hm_method);
	char			 log[32], line[RELAY_REQUEST_SIZE];
	struct relay_table	*table;
	struct http_dir		*rd = &hs->hs_dir[RELAY_DIR_RESPONSE];
	int			 addclose = 0, code;

	/* over max-src-request-rate: before the rules and the backend */
	if ((code = relay_limit_request(con->se_relay, &con->se_in.ss,
	    &con->se_limq)) > 0)
		return (http_too_many(cre, hs, hd, code));
	if ((code = http_rules(cre, m, &table)) != 0)
		return (http_abort(con, code, NULL));
	/* no forward to: the relay's own tables again, as OpenBSD */
	if (table != con->se_table) {
		con->se_table = table;
		if (con->se_cstate == RELAY_CONN_CONNECTED || hs->hs_connecting) {
			/* another backend: once the last answer is through */
			if (hs->hs_nmethods > 0 ||
			    rd->hd_fr.fr_state != HTTP_F_HEAD ||
			    rd->hd_msg.hm_nlines > 0)
				return (http_abort(con, 502,
				    "forward to another table with answers "
				    "pending"));
			hs->hs_connecting = 1;
			hs->hs_want = RELAY_V_RECONNECT;
			relay_read_off(cre);
		}
	}
	if (http_field_has(m, "Upgrade", "websocket")) {
		if ((proto->httpflags & HTTPFLAG_WEBSOCKETS) == 0)
			return (http_abort(con, 403, "Websocket Forbidden"));
		if (!m->hm_upgrade)
			return (http_abort(con, 400,
			    "Bad Websocket Request"));
		if (strcmp(method, "GET") != 0)
			return (http_abort(con, 405,
			    "Websocket Method Not Allowed"));
		hs->hs_upgrade = 1;
	}

	hs->hs_methods[(hs->hs_first + hs->hs_nmethods++) %
	    HTTP_PIPELINE_MAX] = m->hm_method;
	hs->hs_lastreq = m->hm_close;
	(void)snprintf(log, sizeof(log), " %s", method);
	relay_log(con, log);
	(void)snprintf(line, sizeof(line), "%s %s HTTP/1.%d", method,
	    m->hm_target, m->hm_minor);
	relay_request(con, line);

	if (http_request_body(cre, hd) == 1)
		addclose = !http_field_has(m, "Connection", "close");

	if (http_write_head(http_out(cre, hs), m, addclose) == -1)
		return (http_abort(con, 500, "out of memory"));
	if (hd->hd_fr.fr_state == HTTP_F_HEAD)
		http_msg_end(hd);

	if (con->se_cstate != RELAY_CONN_CONNECTED && !hs->hs_connecting) {
		/* parsing goes on once the connect began, into hs_pending */
		hs->hs_connecting = 1;
		hs->hs_want = RELAY_V_CONNECT;
	}
	return (0);
}

/*
 * A request over max-src-request-rate: 429 Too Many Requests, relayd's
 * page and Retry-After (wait seconds).  The connection stays when the
 * request has no body and nothing is on its way to the client before
 * the answer (no request waits for the backend's); else the answer says
 * "Connection: close" and the session ends with it.  0, or -1 closed.
 */
static int
http_too_many(struct ctl_relay_event *cre, struct http_session *hs,
    struct http_dir *hd, int wait)
{
	struct rsession		*con = cre->con;
	struct http_msg		*m = &hd->hd_msg;
	struct http_dir		*rd = &hs->hs_dir[RELAY_DIR_RESPONSE];
	struct evbuffer		*out = bufferevent_get_output(con->se_in.bev);
	struct http_canned	*hc;
	int			 keep;

	/* no answer of the backend's under way, nor a body behind it */
	keep = hs->hs_nmethods == 0 && rd->hd_fr.fr_state == HTTP_F_HEAD &&
	    rd->hd_msg.hm_nlines == 0 && !m->hm_close && !m->hm_upgrade &&
	    (m->hm_body == HTTP_BODY_NONE ||
	    (m->hm_body == HTTP_BODY_LENGTH && m->hm_clen == 0)) &&
	    strcmp(http_method_name(m->hm_method), "CONNECT") != 0 &&
	    evbuffer_get_length(out) == 0 && !con->se_out.splicing;
	/* a flood meets the same answer: referred to, not copied */
	if ((hc = http_canned429(con, wait, keep)) == NULL)
		return (http_abort(con, 500, "out of memory"));
	hc->hc_refs++;
	if (evbuffer_add_reference(out, hc->hc_data, hc->hc_len,
	    http_canned_unref, hc) == -1) {
		hc->hc_refs--;
		return (http_abort(con, 500, "out of memory"));
	}
	if (!keep) {
		(void)relay_end_written(&con->se_in,
		    "max-src-request-rate (429 Too Many Requests)");
		return (-1);
	}
	/* the next request may come, once its source may ask again */
	http_msg_end(hd);
	hs->hs_held = 1;
	relay_limit_hold(cre, &hs->hs_holdev);
	return (relay_flush_passed(&con->se_out));
}

/* The wait after a 429 is over: the client is read again. */
static void
http_hold_over(int fd, short event, void *arg)
{
	struct rsession		*con = arg;
	struct http_session	*hs = con->se_priv;

	(void)fd;
	(void)event;
	hs->hs_held = 0;
	relay_read_again(&con->se_in);
}

/*
 * The relay's 429 answer, head and page, made at most once a second and
 * Retry-After: the one it had, or a new one.  A buffer that still sends
 * the old one holds it (hc_refs) until it is written.
 */
static struct http_canned *
http_canned429(struct rsession *con, int wait, int keep)
{
	struct relay		*rlay = con->se_relay;
	struct http_canned	*hc = rlay->rl_429[keep];
	char			 head[256], date[64], label[RULE_SETNAME_SIZE];
	struct tm		 tm;
	time_t			 t = time(NULL);
	size_t			 plen;
	int			 n;

	if (hc != NULL && hc->hc_time == t && hc->hc_wait == wait)
		return (hc);
	if (rlay->rl_page429 == NULL) {
		/* before the rules: no label of an earlier request's */
		(void)strlcpy(label, con->se_label, sizeof(label));
		con->se_label[0] = '\0';
		rlay->rl_page429 = http_error_page(con, 429,
		    "Too Many Requests");
		(void)strlcpy(con->se_label, label, sizeof(con->se_label));
		if (rlay->rl_page429 == NULL)
			return (NULL);
	}
	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(date, sizeof(date), "%a, %d %b %Y %T %Z", &tm) == 0)
		return (NULL);
	plen = strlen(rlay->rl_page429);
	n = snprintf(head, sizeof(head), "HTTP/1.1 429 Too Many Requests\r\n"
	    "Date: %s\r\nServer: %s\r\nRetry-After: %d\r\n%s"
	    "Content-Type: text/html\r\nContent-Length: %zu\r\n\r\n",
	    date, HTTP_SERVERNAME, wait, keep ? "" : "Connection: close\r\n",
	    plen);
	if (n < 0 || (size_t)n >= sizeof(head) ||
	    (hc = malloc(sizeof(*hc) + n + plen)) == NULL)
		return (NULL);
	hc->hc_refs = 1;
	hc->hc_time = t;
	hc->hc_wait = wait;
	hc->hc_len = n + plen;
	memcpy(hc->hc_data, head, n);
	memcpy(hc->hc_data + n, rlay->rl_page429, plen);
	http_canned_free(&rlay->rl_429[keep]);
	rlay->rl_429[keep] = hc;
	return (hc);
}

/* a buffer wrote its reference, or the relay let go of it */
static void
http_canned_unref(const void *data, size_t len, void *arg)
{
	struct http_canned	*hc = arg;

	(void)data;
	(void)len;
	if (--hc->hc_refs == 0)
		free(hc);
}

void
http_canned_free(struct http_canned **hcp)
{
	if (*hcp != NULL)
		http_canned_unref(NULL, 0, *hcp);
	*hcp = NULL;
}

static int
http_response(struct ctl_relay_event *cre, struct http_session *hs,
    struct http_dir *hd)
{
	struct rsession		*con = cre->con;
	struct protocol		*proto = con->se_relay->rl_proto;
	struct http_msg		*m = &hd->hd_msg;
	struct relay_table	*table;
	const char		*method;
	int			 addclose = 0, upgrade = 0, code;

	if (m->hm_code < 200 && m->hm_code != 101) {
		/* 100 Continue and the like: the answer is still to come */
		if (http_write_head(http_out(cre, hs), m, 0) == -1)
			return (http_abort(con, 500, "out of memory"));
		http_msg_end(hd);
		return (0);
	}
	if (hs->hs_nmethods == 0)
		return (http_abort(con, 502, "response without request"));
	if ((code = http_rules(cre, m, &table)) != 0)
		return (http_abort(con, code, NULL));
	/* the end of an answer, as OpenBSD marks it when rules log */
	if (con->se_haslog)
		relay_log(con, ";");
	method = http_method_name(hs->hs_methods[hs->hs_first]);
	hs->hs_first = (hs->hs_first + 1) % HTTP_PIPELINE_MAX;
	hs->hs_nmethods--;
	/* the last answer: the client's connection ends after it */
	if (m->hm_close || (hs->hs_lastreq && hs->hs_nmethods == 0))
		hs->hs_closing = 1;

	if (m->hm_code == 101) {
		if (!hs->hs_upgrade || !m->hm_upgrade ||
		    !http_field_has(m, "Upgrade", "websocket") ||
		    (proto->httpflags & HTTPFLAG_WEBSOCKETS) == 0)
			return (http_abort(con, 502,
			    "Bad Websocket Gateway"));
		/* a websocket: both directions pass as they come */
		upgrade = 1;
		hd->hd_fr.fr_state = HTTP_F_RAW;
	} else if (strcmp(method, "CONNECT") == 0 && m->hm_code < 300)
		hd->hd_fr.fr_state = HTTP_F_RAW;
	else if (strcmp(method, "HEAD") == 0)
		hd->hd_fr.fr_state = HTTP_F_HEAD;
	else {
		switch (m->hm_body) {
		case HTTP_BODY_LENGTH:
			cre->toread = m->hm_clen;
			hd->hd_fr.fr_state = HTTP_F_BODY;
			break;
		case HTTP_BODY_CHUNKED:
			hd->hd_fr.fr_state = HTTP_F_CHUNK;
			break;
		case HTTP_BODY_CLOSE:
			/* the end of the connection ends the body */
			hd->hd_fr.fr_state = HTTP_F_RAW;
			addclose = !http_field_has(m, "Connection", "close");
			break;
		}
	}
	hs->hs_upgrade = 0;

	if (http_write_head(http_out(cre, hs), m, addclose) == -1)
		return (http_abort(con, 500, "out of memory"));
	/* the requests that waited go on, once this parse is through */
	if (upgrade) {
		con->se_in.toread = TOREAD_UNLIMITED;
		hs->hs_dir[RELAY_DIR_REQUEST].hd_fr.fr_state = HTTP_F_RAW;
		hs->hs_want = RELAY_V_OTHER;
	}
	if (hs->hs_paused) {
		hs->hs_paused = 0;
		relay_read_on(&con->se_in);
		hs->hs_want = RELAY_V_OTHER;
	}
	if (hd->hd_fr.fr_state == HTTP_F_HEAD)
		http_msg_end(hd);
	return (0);
}

/* A message ended: the direction reads the next head. */
static void
http_msg_end(struct http_dir *hd)
{
	http_msg_clear(&hd->hd_msg);
	hd->hd_fr.fr_state = HTTP_F_HEAD;
}

/*
 * End of file from cre.  Between messages, or in a stream, it is the
 * usual half-close; within a body or head the message was cut short,
 * and the other side must not take it for complete: close it.
 */
static enum relay_verdict
http_eof(struct ctl_relay_event *cre)
{
	struct rsession		*con = cre->con;
	struct http_session	*hs = con->se_priv;
	struct http_dir		*hd = &hs->hs_dir[cre->dir];

	switch (hd->hd_fr.fr_state) {
	case HTTP_F_RAW:
		/*
		 * The close ended the client's last answer: nothing more is
		 * read from the client (its next request would be refused),
		 * so its connection ends once the answer is written, rather
		 * than half-closed while waiting for an end never read.  A
		 * tunnel (CONNECT, websocket) half-closes as tcp relays do.
		 */
		if (cre->dir == RELAY_DIR_RESPONSE && hs->hs_closing &&
		    hs->hs_dir[RELAY_DIR_REQUEST].hd_fr.fr_state !=
		    HTTP_F_RAW) {
			relay_end(cre, "last http content read (done)");
			return (RELAY_V_CLOSED);
		}
		return (RELAY_V_EOF);
	case HTTP_F_HEAD:
		if (hd->hd_msg.hm_nlines == 0 &&
		    evbuffer_get_length(bufferevent_get_input(cre->bev)) == 0)
			return (RELAY_V_EOF);
		relay_end(cre, "last http read (done)");
		return (RELAY_V_CLOSED);
	case HTTP_F_BODY:
		relay_end(cre, "last http content read");
		return (RELAY_V_CLOSED);
	default:
		relay_end(cre, "last http chunk read (done)");
		return (RELAY_V_CLOSED);
	}
}

/* No backend: OpenBSD's status and page for why. */
static void
http_nobackend(struct rsession *con, enum relay_cfail why, int error)
{
	static const struct {
		int		 code;
		const char	*page;
	} fails[] = {
		{ 502, "session failed" },	/* RELAY_CFAIL_NOHOST */
		{ 502, "session failed" },	/* RELAY_CFAIL_SESSION */
		{ 500, "socket error" },	/* RELAY_CFAIL_SOCKET */
		{ 504, "connect timeout" }	/* RELAY_CFAIL_TIMEOUT */
	};
	char	*msg = NULL;

	if (why == RELAY_CFAIL_SOCKET &&
	    asprintf(&msg, "%s: %s", fails[why].page, strerror(error)) == -1)
		msg = NULL;
	(void)http_abort(con, fails[why].code,
	    msg != NULL ? msg : fails[why].page);
	free(msg);
}

/*
 * A request relayd refuses, or a response it cannot pass.  With "return
 * error" the client gets OpenBSD's error page first, unless an answer
 * is on its way to it; the session closes.  Returns -1.
 */
static int
http_abort(struct rsession *con, int code, const char *msg)
{
	struct protocol		*proto = con->se_relay->rl_proto;
	struct evbuffer		*out;
	const char		*name = http_error_name(code);
	char			*body = NULL, *page = NULL, *reason = NULL;
	char			 date[64];
	struct tm		 tm;
	time_t			 t;
	ssize_t			 n;

	if (msg == NULL)
		msg = name;
	if ((proto->flags & F_RETURN) == 0) {
		relay_close(con, msg, 0);
		return (-1);
	}

	out = con->se_in.bev != NULL ?
	    bufferevent_get_output(con->se_in.bev) : NULL;
	t = time(NULL);
	if (out != NULL && evbuffer_get_length(out) == 0 &&
	    !con->se_out.splicing &&
	    gmtime_r(&t, &tm) != NULL &&
	    strftime(date, sizeof(date), "%a, %d %b %Y %T %Z", &tm) > 0 &&
	    (body = http_error_page(con, code, msg)) != NULL) {
		if (asprintf(&page, "HTTP/1.0 %03d %s\r\n"
		    "Date: %s\r\nServer: %s\r\nConnection: close\r\n"
		    "Content-Type: text/html\r\nContent-Length: %zu\r\n\r\n%s",
		    code, name, date, HTTP_SERVERNAME, strlen(body), body) != -1)
			/* as OpenBSD does: one write, what fits goes */
			if ((n = relay_send_now(&con->se_in, page,
			    strlen(page))) > 0)
				con->se_out.copied += n;
		free(body);
		free(page);
	}
	if (asprintf(&reason, "%s (%03d %s)", msg, code, name) == -1)
		reason = NULL;
	relay_close(con, reason != NULL ? reason : msg, 1);
	free(reason);
	return (-1);
}
