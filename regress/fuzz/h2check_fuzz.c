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
 * libFuzzer target for the answer of "check http2": the frames a
 * backend sends to hce.  hce reads them as they come and takes the
 * frames read off its buffer, so the verdict must not depend on where
 * the reads split the bytes: the input read whole and read in two
 * pieces (at a third and at two thirds) must give the same verdict, a
 * status of 200 to 999, "more to come" (0) or a failure (-1), and no
 * more than the bytes given may be taken.
 */

#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "relayd.h"

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* The verdict on data read in two pieces, the first k bytes long. */
static int
twice(const uint8_t *data, size_t size, size_t k)
{
	struct h2check	*hc;
	uint8_t		*buf;
	size_t		 len, used;
	int		 r;

	if ((hc = h2check_new()) == NULL)
		abort();
	if ((buf = malloc(size + 1)) == NULL)
		abort();
	memcpy(buf, data, k);
	len = k;
	r = h2check_status(hc, buf, len, &used);
	if (used > len)
		abort();
	if (r == 0) {
		memmove(buf, buf + used, len - used);
		len -= used;
		memcpy(buf + len, data + k, size - k);
		len += size - k;
		r = h2check_status(hc, buf, len, &used);
		if (used > len)
			abort();
	}
	free(buf);
	h2check_free(hc);
	return (r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int	 r;

	r = twice(data, size, size);
	if (r != 0 && r != -1 && (r < 200 || r > 999))
		abort();
	if (twice(data, size, size / 3) != r ||
	    twice(data, size, 2 * size / 3) != r)
		abort();
	return (0);
}
