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
 * libFuzzer target for HTTP/2 backends (relay_h2b.c): frames from a
 * backend in, answers to the client out.  One HTTP/2 client session of
 * an http relay with "http http2 backend" and response rules, whose
 * client is an nghttp2 client session here that sends three requests
 * (a GET, a POST with a body, a gRPC call with trailers); the backend
 * connection the relay process opens for them is a socketpair, given in
 * place of its connect (relay_link_connect).  The input is records: a
 * kind byte, a 2-byte length, the bytes.  Kind & 3: 0 bytes from the
 * backend, 1 the backend's output drained, 2 the backend's end of file,
 * 3 the client resets a stream (1, 3 or 5 by kind >> 2).
 *
 * What the client gets must be HTTP/2 that nghttp2 takes without a
 * protocol error: an answer, a status, a reset, whatever the backend
 * sent.  relay.c is included for the core's static state.
 */

#include "../../usr.sbin/relayd/relay.c"
#include "../../usr.sbin/relayd/http.h"
#include "fuzz_relay.h"

#include <nghttp2/nghttp2.h>

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct relay	*fz_rlay;

static const char fz_conf[] =
    "table <one> { 127.0.0.1 }\n"
    "http protocol p {\n"
    "\thttp http2 backend\n"
    "\thttp http2 backend streams 2\n"
    "\thttp http2 backend connections 2\n"
    "\thttp headerlen 2048\n"
    "\treturn error\n"
    "\tmatch response header remove \"X-Secret\"\n"
    "\tblock response header \"X-Block\"\n"
    "}\n"
    "relay r {\n"
    "\tlisten on 127.0.0.1 port 8443 tls\n"
    "\tprotocol p\n"
    "\tforward to <one> port 80\n"
    "}\n";

#define FZ_BACKENDS	4
static struct rsession	*fz_link[FZ_BACKENDS];
static int		 fz_bfd[FZ_BACKENDS];
static int		 fz_client;
static nghttp2_session	*fz_cl;
static int		 fz_bad;

/* A shared link's connect: a socketpair, and its start. */
static int
fz_link_connect(struct rsession *link)
{
	int	 i;

	for (i = 0; i < FZ_BACKENDS && fz_link[i] != NULL; i++)
		;
	if (i == FZ_BACKENDS)
		abort();	/* more connections than the pool has */
	fz_link[i] = link;
	fz_pair(&link->se_out.s, &fz_bfd[i]);
	link->se_cstate = RELAY_CONN_CONNECTED;
	link->se_nconnects++;
	relay_session_start(link);
	return (0);
}

/* The links that ended lose their backends. */
static void
fz_links(void)
{
	struct rsession	*c;
	int		 i, found;

	for (i = 0; i < FZ_BACKENDS; i++) {
		if (fz_link[i] == NULL)
			continue;
		found = 0;
		TAILQ_FOREACH(c, &relay_sessions, se_entry)
			if (c == fz_link[i])
				found = 1;
		if (!found) {
			close(fz_bfd[i]);
			fz_link[i] = NULL;
		}
	}
}

/* The client's nghttp2 session writes to its socket. */
static ssize_t
fz_send_cb(nghttp2_session *ng, const uint8_t *data, size_t len, int flags,
    void *arg)
{
	ssize_t	 n;

	(void)ng;
	(void)flags;
	(void)arg;
	if ((n = write(fz_client, data, len)) == -1)
		return (NGHTTP2_ERR_WOULDBLOCK);
	return (n);
}

static ssize_t
fz_body_cb(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t len,
    uint32_t *flags, nghttp2_data_source *src, void *arg)
{
	static const nghttp2_nv	 tr[] = {
		{ (uint8_t *)"x-t", (uint8_t *)"1", 3, 1, 0 }
	};

	(void)arg;
	(void)src;
	if (len > 100)
		len = 100;
	memset(buf, 'b', len);
	*flags |= NGHTTP2_DATA_FLAG_EOF;
	if (id == 5 && nghttp2_submit_trailer(ng, id, tr, nitems(tr)) == 0)
		*flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
	return ((ssize_t)len);
}

/* What relayd sent the client: HTTP/2 that nghttp2 takes. */
static void
fz_client_read(void)
{
	uint8_t	 buf[16384];
	ssize_t	 n, r;

	while ((n = read(fz_client, buf, sizeof(buf))) > 0) {
		if ((r = nghttp2_session_mem_recv(fz_cl, buf, n)) < 0 &&
		    r != NGHTTP2_ERR_CALLBACK_FAILURE) {
			fprintf(stderr, "the client got what is no HTTP/2: "
			    "%s\n", nghttp2_strerror((int)r));
			fz_bad = 1;
			abort();
		}
	}
	(void)nghttp2_session_send(fz_cl);
}

#define NV(n, v)	{ (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, \
			    sizeof(v) - 1, 0 }

static void
fz_client_new(void)
{
	static const nghttp2_nv	 get[] = {
		NV(":method", "GET"), NV(":scheme", "https"),
		NV(":authority", "x"), NV(":path", "/a")
	};
	static const nghttp2_nv	 post[] = {
		NV(":method", "POST"), NV(":scheme", "https"),
		NV(":authority", "x"), NV(":path", "/b"),
		NV("content-length", "100")
	};
	static const nghttp2_nv	 grpc[] = {
		NV(":method", "POST"), NV(":scheme", "https"),
		NV(":authority", "x"), NV(":path", "/t.T/Unary"),
		NV("content-type", "application/grpc"), NV("te", "trailers"),
		NV("grpc-timeout", "5S")
	};
	nghttp2_session_callbacks	*cbs;
	nghttp2_data_provider		 prd;

	if (nghttp2_session_callbacks_new(&cbs) != 0)
		abort();
	nghttp2_session_callbacks_set_send_callback(cbs, fz_send_cb);
	if (nghttp2_session_client_new(&fz_cl, cbs, NULL) != 0)
		abort();
	nghttp2_session_callbacks_del(cbs);
	prd.source.ptr = NULL;
	prd.read_callback = fz_body_cb;
	if (nghttp2_submit_settings(fz_cl, NGHTTP2_FLAG_NONE, NULL, 0) != 0 ||
	    nghttp2_submit_request(fz_cl, NULL, get, nitems(get), NULL,
	    NULL) != 1 ||
	    nghttp2_submit_request(fz_cl, NULL, post, nitems(post), &prd,
	    NULL) != 3 ||
	    nghttp2_submit_request(fz_cl, NULL, grpc, nitems(grpc), &prd,
	    NULL) != 5 ||
	    nghttp2_session_send(fz_cl) != 0)
		abort();
}

/* After a step: the loop's due events, both ways' bytes. */
static void
fz_turn(struct rsession *con, enum relay_verdict v)
{
	char	 drain[16384];
	int	 i;

	if (fz_alive(con) && v == RELAY_V_READ &&
	    relay_bufferevent(&con->se_in) == -1)
		abort();
	for (i = 0; i < 3; i++)
		(void)event_loop(EVLOOP_NONBLOCK);
	fz_links();
	for (i = 0; i < FZ_BACKENDS; i++)
		if (fz_link[i] != NULL)
			while (read(fz_bfd[i], drain, sizeof(drain)) > 0)
				;
	fz_client_read();
}

/* The client's bytes, to the session as the core gives them. */
static void
fz_client_write(struct rsession *con)
{
	struct evbuffer	*in;
	uint8_t		 buf[16384];
	ssize_t		 n;

	if (!fz_alive(con) || con->se_in.bev == NULL)
		return;
	in = bufferevent_get_input(con->se_in.bev);
	(void)evbuffer_unfreeze(in, 0);
	while ((n = read(con->se_in.s, buf, sizeof(buf))) > 0)
		if (evbuffer_add(in, buf, n) == -1)
			abort();
	(void)evbuffer_freeze(in, 0);
	if (evbuffer_get_length(in) > 0)
		fz_turn(con, con->se_ops->ro_read(&con->se_in));
}

static struct rsession *
fz_backend(unsigned int k)
{
	int	 i, n = 0;

	for (i = 0; i < FZ_BACKENDS; i++)
		n += fz_link[i] != NULL && fz_link[i]->se_out.bev != NULL;
	if (n == 0)
		return (NULL);
	k %= n;
	for (i = 0; i < FZ_BACKENDS; i++)
		if (fz_link[i] != NULL && fz_link[i]->se_out.bev != NULL &&
		    k-- == 0)
			return (fz_link[i]);
	return (NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int		 initialized;
	struct sockaddr_storage	 ss;
	struct rsession		*con, *c, *link;
	struct evbuffer		*in;
	int			 s, i;
	size_t			 len;
	uint8_t			 kind;

	if (!initialized) {
		fz_rlay = fz_relay_load(fz_conf, sizeof(fz_conf) - 1);
		relay_link_connect = fz_link_connect;
		initialized = 1;
	}
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_INET;
	fz_pair(&s, &fz_client);
	fz_client_new();
	if ((con = relay_session_new(fz_rlay, sizeof(*con), &relay_h2_ops, s,
	    &ss)) == NULL)
		abort();
	con->se_nosplice = 1;
	fz_turn(con, con->se_ops->ro_init(con));
	for (i = 0; i < 3; i++) {
		fz_client_write(con);
		fz_turn(con, RELAY_V_DONE);
	}
	while (size >= 3 && fz_alive(con)) {
		kind = data[0];
		len = data[1] << 8 | data[2];
		data += 3;
		size -= 3;
		if (len > size)
			len = size;
		link = fz_backend(kind >> 2);
		switch (kind & 3) {
		case 0:
			if (link == NULL)
				break;
			in = bufferevent_get_input(link->se_out.bev);
			(void)evbuffer_unfreeze(in, 0);
			if (evbuffer_add(in, data, len) == -1)
				abort();
			(void)evbuffer_freeze(in, 0);
			fz_turn(con, link->se_ops->ro_read(&link->se_out));
			break;
		case 1:
			if (link != NULL)
				fz_turn(con,
				    link->se_ops->ro_drained(&link->se_out));
			break;
		case 2:
			if (link != NULL && !link->se_out.done) {
				relay_read_off(&link->se_out);
				fz_turn(con,
				    link->se_ops->ro_eof(&link->se_out));
			}
			break;
		case 3:
			(void)nghttp2_submit_rst_stream(fz_cl,
			    NGHTTP2_FLAG_NONE, 1 + 2 * ((kind >> 2) % 3),
			    NGHTTP2_CANCEL);
			(void)nghttp2_session_send(fz_cl);
			break;
		}
		fz_client_write(con);
		data += len;
		size -= len;
	}
	/* the session ends, if it did not; the shared connections go too */
	TAILQ_FOREACH(c, &relay_sessions, se_entry)
		if (c == con)
			break;
	if (c != NULL)
		relay_close(con, "fuzz", 0);
	relay_h2b_retire();
	for (i = 0; i < 3; i++)
		(void)event_loop(EVLOOP_NONBLOCK);
	fz_links();
	for (i = 0; i < FZ_BACKENDS; i++)
		if (fz_link[i] != NULL) {
			relay_close(fz_link[i], "fuzz", 0);
			(void)event_loop(EVLOOP_NONBLOCK);
			close(fz_bfd[i]);
			fz_link[i] = NULL;
		}
	nghttp2_session_del(fz_cl);
	close(fz_client);
	return (0);
}
