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
 * libFuzzer target for the HTTP message-head parser, both directions:
 * the first byte chooses request or response and the header length
 * limit, the rest is split into lines at LF (a CR before it is taken
 * off, as the relay does); after the head, lines are chunk-size lines.
 * What the parser accepts must be consistent.
 */

#include <sys/types.h>
#include <sys/queue.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "relayd.h"

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_msg	 m;
	const char	*p, *end, *nl;
	size_t		 len;
	off_t		 n;
	int		 ret = 0;

	if (size < 1)
		return (0);
	http_msg_init(&m, data[0] & 1 ? RELAY_DIR_RESPONSE :
	    RELAY_DIR_REQUEST, data[0] & 2 ? 256 : RELAY_DEFHEADERLENGTH);
	p = (const char *)data + 1;
	end = (const char *)data + size;
	while (p < end) {
		if ((nl = memchr(p, '\n', end - p)) == NULL)
			nl = end;
		len = nl - p;
		if (len > 0 && p[len - 1] == '\r')
			len--;
		if (!m.hm_done) {
			if ((ret = http_msg_line(&m, p, len)) != 0)
				break;
		} else if (http_chunk_line(p, len, &n) == 0 && n < 0)
			abort();
		p = nl + 1;
	}
	if (ret != 0 && ret != 400 && ret != 406 && ret != 413 &&
	    ret != 500 && ret != 502)
		abort();
	if (ret == 0 && m.hm_done) {
		/* framing the relay can rely on */
		if (m.hm_chunked && m.hm_clen != -1)
			abort();
		if (m.hm_body == HTTP_BODY_LENGTH && m.hm_clen <= 0)
			abort();
		if (m.hm_dir == RELAY_DIR_REQUEST &&
		    (m.hm_target == NULL || m.hm_method == 0 ||
		    m.hm_body == HTTP_BODY_CLOSE))
			abort();
		if (m.hm_dir == RELAY_DIR_RESPONSE &&
		    (m.hm_code < 100 || m.hm_code > 999))
			abort();
	}
	if (m.hm_maxlen > 0 && m.hm_headerlen > m.hm_maxlen && ret != 413 &&
	    ret != 502)
		abort();
	http_msg_clear(&m);
	return (0);
}
