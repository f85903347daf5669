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
 * libFuzzer target for the HTTP/2 glue (relay_h2.c): frames in, requests
 * out.  One session of an http relay with "http http2" and rules, its
 * hooks called as the core calls them; the client's side and the
 * backends' (the session's links, a pool of 3) are socketpairs, given
 * to a link in place of its connect (relay_link_connect).  The input
 * is records: a kind byte, a 2-byte length, the bytes.  Kind & 3: 0
 * bytes from the client (after the connection preface, which comes
 * first), 1 bytes from a backend (kind >> 3 picks which of those up),
 * 2 the client's or 3 a backend's output drained.  Kind & 4 with 0 or
 * 1: that side's end of file instead.
 *
 * What every backend is sent must be HTTP/1.1 that relayd's own parser
 * takes without an error: requests, head by head, their bodies framed
 * as their heads say.  Anything else would let a client smuggle.
 * relay.c is included for the core's static state.
 */

#include "../../usr.sbin/relayd/relay.c"
#include "../../usr.sbin/relayd/http.h"
#include "fuzz_relay.h"

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct relay	*fz_rlay;

static const char fz_conf[] =
    "table <one> { 127.0.0.1 }\n"
    "table <two> { 127.0.0.2 }\n"
    "http protocol p {\n"
    "\thttp http2 streams 8\n"
    "\thttp http2 connections 3\n"
    "\thttp http2 pipeline 4\n"
    "\thttp headerlen 2048\n"
    "\treturn error\n"
    "\tblock request path \"/blocked*\"\n"
    "\tmatch request path \"/two/*\" forward to <two>\n"
    "\tmatch request header set \"X-Via\" value \"relayd\"\n"
    "\tmatch response header remove \"X-Secret\"\n"
    "}\n"
    "relay r {\n"
    "\tlisten on 127.0.0.1 port 8443 tls\n"
    "\tprotocol p\n"
    "\tforward to <one> port 80\n"
    "\tforward to <two> port 80\n"
    "}\n";

/*
 * The backends: a link's socketpair, and the reader of what it was sent
 * (fz_check()), where it is staying between looks.
 */
#define FZ_BACKENDS	8
enum fz_state { FZ_HEAD, FZ_BODY, FZ_CHUNK, FZ_CHUNKDATA, FZ_TRAILER };
struct fz_backend {
	struct rsession		*link;		/* NULL: a free slot */
	objid_t			 id;
	int			 fd;
	struct evbuffer		*sent;
	enum fz_state		 state;
	off_t			 toread;
};
static struct fz_backend	 fz_b[FZ_BACKENDS];
static void	 fz_check(struct fz_backend *);

/* A backend of the session's is gone: what it was sent is checked. */
static void
fz_backend_end(struct fz_backend *b)
{
	fz_check(b);
	close(b->fd);
	evbuffer_free(b->sent);
	b->link = NULL;
}

/* The links that ended lose their backends. */
static void
fz_links(struct rsession *con)
{
	struct rsession		*link;
	int			 i, found;

	for (i = 0; i < FZ_BACKENDS; i++) {
		if (fz_b[i].link == NULL)
			continue;
		found = 0;
		TAILQ_FOREACH(link, &con->se_links, se_link)
			if (link == fz_b[i].link && link->se_id == fz_b[i].id)
				found = 1;
		if (!found)
			fz_backend_end(&fz_b[i]);
	}
}

/*
 * A link's connect (the core's relay_link_connect): a socketpair, and
 * the session's start as the core makes it after a connect.
 */
static int
fz_link_connect(struct rsession *link)
{
	struct fz_backend	*b;
	int			 i;

	fz_links(link->se_parent);
	for (i = 0; i < FZ_BACKENDS && fz_b[i].link != NULL; i++)
		;
	if (i == FZ_BACKENDS)
		abort();	/* more links than the pool has */
	b = &fz_b[i];
	b->link = link;
	b->id = link->se_id;
	b->state = FZ_HEAD;
	if ((b->sent = evbuffer_new()) == NULL)
		abort();
	fz_pair(&link->se_out.s, &b->fd);
	link->se_cstate = RELAY_CONN_CONNECTED;
	link->se_nconnects++;
	relay_session_start(link);
	return (0);
}

/* What the protocol asked the core for, done as the core would. */
static void
fz_verdict(struct rsession *con, enum relay_verdict v)
{
	switch (v) {
	case RELAY_V_CONNECT:
	case RELAY_V_RECONNECT:
		/* the session's own backend is never asked for */
		abort();
	case RELAY_V_READ:
		if (relay_bufferevent(&con->se_in) == -1)
			abort();
		break;
	default:
		break;
	}
}

/* After a hook: its verdict, then the loop's due events; -1: it ended. */
static int
fz_after(struct rsession *con, enum relay_verdict v)
{
	if (!fz_alive(con))
		return (-1);
	fz_verdict(con, v);
	if (!fz_alive(con))
		return (-1);
	(void)event_loop(EVLOOP_NONBLOCK);
	if (!fz_alive(con))
		return (-1);
	fz_links(con);
	return (0);
}

/* A hook of cre's (the client's, or a link's backend side) */
static int
fz_call(struct rsession *con, struct ctl_relay_event *cre)
{
	return (fz_after(con, cre->con->se_ops->ro_read(cre)));
}

static int
fz_drained(struct rsession *con, struct ctl_relay_event *cre)
{
	return (fz_after(con, cre->con->se_ops->ro_drained(cre)));
}

static int
fz_eof(struct rsession *con, struct ctl_relay_event *cre)
{
	relay_read_off(cre);
	return (fz_after(con, cre->con->se_ops->ro_eof(cre)));
}

/* Bytes come in on a side: into its input, then its hook. */
static int
fz_input(struct rsession *con, struct ctl_relay_event *cre,
    const uint8_t *p, size_t len)
{
	struct evbuffer	*in;

	if (cre->bev == NULL)
		return (0);
	in = bufferevent_get_input(cre->bev);
	(void)evbuffer_unfreeze(in, 0);
	if (evbuffer_add(in, p, len) == -1)
		abort();
	(void)evbuffer_freeze(in, 0);
	return (fz_call(con, cre));
}

/*
 * Everything the backend got, as relayd's parser reads requests: heads
 * must parse, bodies are skipped as framed.  What is not all there yet
 * waits for the next look; where the reader is stays between looks.
 */

static void
fz_refused(int code, const char *why, const char *head, size_t len)
{
	fprintf(stderr, "backend got a request relayd's parser refuses: "
	    "%d %s\n", code, why != NULL ? why : "");
	fwrite(head, 1, len, stderr);
	abort();
}

static void
fz_check(struct fz_backend *b)
{
	struct http_msg		 m;
	struct evbuffer_ptr	 end;
	char			 buf[8192], *line;
	size_t			 len, have;
	ssize_t			 n;
	off_t			 size;
	int			 code;

	if (b->link == NULL)
		return;
	while ((n = read(b->fd, buf, sizeof(buf))) > 0)
		if (evbuffer_add(b->sent, buf, n) == -1)
			abort();
	for (;;) {
		have = evbuffer_get_length(b->sent);
		switch (b->state) {
		case FZ_HEAD:
			end = evbuffer_search(b->sent, "\r\n\r\n", 4, NULL);
			if (end.pos == -1)
				return;
			len = end.pos + 4 < (ssize_t)sizeof(buf) ?
			    (size_t)end.pos + 4 : sizeof(buf);
			(void)evbuffer_copyout(b->sent, buf, len);
			http_msg_init(&m, RELAY_DIR_REQUEST, 0);
			code = 0;
			while (code == 0 && !m.hm_done &&
			    (line = evbuffer_readln(b->sent, &have,
			    EVBUFFER_EOL_CRLF_STRICT)) != NULL) {
				code = http_msg_line(&m, line, have);
				free(line);
			}
			if (code != 0 || !m.hm_done)
				fz_refused(code, m.hm_error, buf, len);
			b->state = FZ_HEAD;
			if (m.hm_body == HTTP_BODY_LENGTH) {
				b->toread = m.hm_clen;
				b->state = FZ_BODY;
			} else if (m.hm_body == HTTP_BODY_CHUNKED)
				b->state = FZ_CHUNK;
			http_msg_clear(&m);
			break;
		case FZ_BODY:
		case FZ_CHUNKDATA:
			if (have == 0)
				return;
			if ((off_t)have > b->toread)
				have = b->toread;
			(void)evbuffer_drain(b->sent, have);
			if ((b->toread -= have) > 0)
				return;
			b->state = b->state == FZ_BODY ? FZ_HEAD : FZ_CHUNK;
			break;
		case FZ_CHUNK:
			if ((line = evbuffer_readln(b->sent, &len,
			    EVBUFFER_EOL_CRLF_STRICT)) == NULL)
				return;
			code = http_chunk_line(line, len, &size);
			free(line);
			if (code == -1)
				fz_refused(400, "chunk size", "", 0);
			/* the chunk and its CRLF */
			b->toread = size + 2;
			b->state = size == 0 ? FZ_TRAILER : FZ_CHUNKDATA;
			break;
		case FZ_TRAILER:
			if ((line = evbuffer_readln(b->sent, &len,
			    EVBUFFER_EOL_CRLF_STRICT)) == NULL)
				return;
			free(line);
			if (len == 0)
				b->state = FZ_HEAD;
			break;
		}
	}
}

/* The kth backend that is up, in slot order; NULL: none is. */
static struct fz_backend *
fz_pick(unsigned int k)
{
	int	 i, n = 0;

	for (i = 0; i < FZ_BACKENDS; i++)
		n += fz_b[i].link != NULL;
	if (n == 0)
		return (NULL);
	k %= n;
	for (i = 0; i < FZ_BACKENDS; i++)
		if (fz_b[i].link != NULL && k-- == 0)
			return (&fz_b[i]);
	return (NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char	 preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
	static int		 initialized;
	struct sockaddr_storage	 ss;
	struct rsession		*con, *c;
	struct ctl_relay_event	*cre;
	struct fz_backend	*b;
	char			 drain[16384];
	int			 s, client, i;
	size_t			 len;
	uint8_t			 kind;

	if (!initialized) {
		fz_rlay = fz_relay_load(fz_conf, sizeof(fz_conf) - 1);
		if (fz_rlay->rl_proto->type != RELAY_PROTO_HTTP)
			abort();
		relay_link_connect = fz_link_connect;
		initialized = 1;
	}
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_INET;
	fz_pair(&s, &client);
	if ((con = relay_session_new(fz_rlay, sizeof(*con), &relay_h2_ops, s,
	    &ss)) == NULL)
		abort();
	con->se_nosplice = 1;
	fz_verdict(con, con->se_ops->ro_init(con));
	if (!fz_alive(con))
		goto out;
	if (fz_input(con, &con->se_in, (const uint8_t *)preface,
	    sizeof(preface) - 1) == -1)
		goto out;
	while (size >= 3) {
		kind = data[0];
		len = data[1] << 8 | data[2];
		data += 3;
		size -= 3;
		if (len > size)
			len = size;
		cre = &con->se_in;
		if (kind & 1) {
			b = fz_pick(kind >> 3);
			cre = b != NULL ? &b->link->se_out : NULL;
		}
		if (cre == NULL)
			;	/* no backend up yet */
		else if ((kind & 3) >= 2) {
			if (cre->bev != NULL && fz_drained(con, cre) == -1)
				goto out;
		} else if (kind & 4) {
			if (cre->bev != NULL && !cre->done &&
			    fz_eof(con, cre) == -1)
				goto out;
		} else if (fz_input(con, cre, data, len) == -1)
			goto out;
		data += len;
		size -= len;
		for (i = 0; i < FZ_BACKENDS; i++)
			fz_check(&fz_b[i]);
		/* what the client was sent goes: it is not checked */
		while (read(client, drain, sizeof(drain)) > 0)
			;
	}
 out:
	/* the session ends, if it did not, and its links with it */
	TAILQ_FOREACH(c, &relay_sessions, se_entry)
		if (c == con)
			break;
	if (c != NULL)
		relay_close(con, "fuzz", 0);
	for (i = 0; i < FZ_BACKENDS; i++)
		if (fz_b[i].link != NULL)
			fz_backend_end(&fz_b[i]);
	close(client);
	/* timers of a session that ended (its deadlines) are gone with it */
	return (0);
}
