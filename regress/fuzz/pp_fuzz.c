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
 * libFuzzer target for the PROXY header parser a trusted balancer's
 * bytes go through.  The relay takes every byte of an unfinished header
 * off the socket, so a prefix of the input must never be judged
 * differently from what the whole says: a header found in the whole is
 * "more to come" in every shorter prefix and the same header in every
 * longer one.  What the parser accepts is written again with
 * pp_header() and must read back the same.
 */

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "relayd.h"

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_storage	 src, dst, src2, dst2;
	uint8_t			 out[PP_MAXHDR];
	size_t			 hlen = 0, h, k;
	ssize_t			 n;
	int			 r, rk;

	r = pp_parse(data, size, &hlen, &src, &dst);
	if (r == 1 && (hlen == 0 || hlen > size || hlen > PP_MAXHDR))
		abort();
	for (k = 0; k < size; k++) {
		rk = pp_parse(data, k, &h, &src2, &dst2);
		if (r == 1 && k < hlen && rk != 0)
			abort();
		if (r == 1 && k >= hlen && (rk != 1 || h != hlen))
			abort();
		if (r == 0 && rk != 0)
			abort();
		if (r == -1 && rk == 1)
			abort();
	}
	if (r != 1 || src.ss_family == AF_UNSPEC)
		return (0);
	if (src.ss_family != dst.ss_family)
		abort();
	for (k = 1; k <= 2; k++) {
		if ((n = pp_header(k, &src, &dst, out, sizeof(out))) <= 0)
			abort();
		if (pp_parse(out, n, &h, &src2, &dst2) != 1 ||
		    h != (size_t)n ||
		    memcmp(&src, &src2, ss_len(&src)) != 0 ||
		    memcmp(&dst, &dst2, ss_len(&dst)) != 0)
			abort();
	}
	return (0);
}
