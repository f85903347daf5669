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
 * libFuzzer target for HTTP/1.x messages (http_msg.c), both directions:
 * the first byte chooses request or response, the header length limit
 * and the size of the pieces the rest arrives in; the framer
 * (http_frame()) reads messages from it as the relays do, one after
 * another, with their bodies of a length, chunked, or to the end,
 * taken the way HTTP/2 takes them (so many bytes at a time).  What it
 * accepts must be consistent, and what it refuses a status relayd
 * answers with.
 */

#include <sys/types.h>
#include <sys/queue.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "relayd.h"
#include "http.h"

#define FUZZ_STEPS	100000

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);
static void	 fuzz_head(struct http_msg *);
static int	 fuzz_step(struct http_framer *, struct http_msg *,
		    struct evbuffer *, off_t *);

/* What the relay can rely on in a head the parser took. */
static void
fuzz_head(struct http_msg *m)
{
	if (m->hm_chunked && m->hm_clen != -1)
		abort();
	if (m->hm_body == HTTP_BODY_LENGTH && m->hm_clen <= 0)
		abort();
	if (m->hm_dir == RELAY_DIR_REQUEST &&
	    (m->hm_target == NULL || m->hm_method == 0 ||
	    m->hm_body == HTTP_BODY_CLOSE))
		abort();
	if (m->hm_dir == RELAY_DIR_RESPONSE &&
	    (m->hm_code < 100 || m->hm_code > 999))
		abort();
	if (m->hm_maxlen > 0 && m->hm_headerlen > m->hm_maxlen)
		abort();
}

/* One step: 1 to go on, 0 for more input, -1 for an error. */
static int
fuzz_step(struct http_framer *fr, struct http_msg *m, struct evbuffer *in,
    off_t *toread)
{
	size_t	 n;
	int	 code;

	switch (http_frame(fr, m, in)) {
	case HTTP_FR_MORE:
		return (0);
	case HTTP_FR_HEADLINE:
		if (m->hm_done)
			abort();
		return (1);
	case HTTP_FR_HEAD:
		if (!m->hm_done || fr->fr_state != HTTP_F_HEAD)
			abort();
		fuzz_head(m);
		switch (m->hm_body) {
		case HTTP_BODY_LENGTH:
			*toread = m->hm_clen;
			fr->fr_state = HTTP_F_BODY;
			break;
		case HTTP_BODY_CHUNKED:
			fr->fr_state = HTTP_F_CHUNK;
			break;
		case HTTP_BODY_CLOSE:
			fr->fr_state = HTTP_F_RAW;
			break;
		default:
			http_msg_clear(m);
			break;
		}
		return (1);
	case HTTP_FR_DATA:
		if ((n = evbuffer_get_length(in)) == 0)
			return (0);
		if (fr->fr_state == HTTP_F_RAW) {
			(void)evbuffer_drain(in, n);
			return (0);
		}
		if (*toread <= 0)
			abort();
		if ((off_t)n > *toread)
			n = *toread;
		(void)evbuffer_drain(in, n);
		if ((*toread -= n) > 0)
			return (0);
		if (http_frame_data_done(fr))
			http_msg_clear(m);
		return (1);
	case HTTP_FR_LINE:
		if (fr->fr_line == NULL || fr->fr_len != strlen(fr->fr_line))
			abort();
		if (fr->fr_state == HTTP_F_CHUNKDATA) {
			if (fr->fr_size <= 0 ||
			    fr->fr_linestate != HTTP_F_CHUNK)
				abort();
			*toread = fr->fr_size;
		}
		free(fr->fr_line);
		return (1);
	case HTTP_FR_END:
		if (fr->fr_line == NULL || fr->fr_len != 0 ||
		    fr->fr_state != HTTP_F_HEAD)
			abort();
		free(fr->fr_line);
		http_msg_clear(m);
		return (1);
	case HTTP_FR_ERROR:
		code = fr->fr_code;
		if (fr->fr_error == NULL || (code != 400 && code != 406 &&
		    code != 413 && code != 500 && code != 502))
			abort();
		if (m->hm_dir == RELAY_DIR_RESPONSE && code != 502)
			abort();
		return (-1);
	}
	abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_msg		 m;
	struct http_framer	 fr;
	struct evbuffer		*in;
	off_t			 toread = 0;
	size_t			 off, piece, n;
	int			 ret = 0, steps = 0;

	if (size < 1 || (in = evbuffer_new()) == NULL)
		return (0);
	http_msg_init(&m, data[0] & 1 ? RELAY_DIR_RESPONSE :
	    RELAY_DIR_REQUEST, data[0] & 2 ? 256 : RELAY_DEFHEADERLENGTH);
	memset(&fr, 0, sizeof(fr));
	piece = 1 + (data[0] >> 2);
	for (off = 1; off < size && ret != -1; off += n) {
		n = size - off < piece ? size - off : piece;
		if (evbuffer_add(in, data + off, n) == -1)
			break;
		while ((ret = fuzz_step(&fr, &m, in, &toread)) == 1)
			if (++steps > FUZZ_STEPS)
				abort();
	}
	http_msg_clear(&m);
	evbuffer_free(in);
	return (0);
}
