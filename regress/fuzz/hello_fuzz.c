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
 * libFuzzer target for the ClientHello reader of TLS inspection, which
 * sees a client's first bytes before any handshake.  The relay reads
 * until the answer is not "more to come", so a prefix must never be
 * judged differently from what the whole says: every shorter prefix
 * gives "more to come" or the same answer, with the same name.  A name
 * found is a host name that fits its buffer; a buffer too small for it
 * gives none.
 */

#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "relayd.h"

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
name_check(const char *name)
{
	size_t	 i, len = strlen(name);

	if (len == 0 || len > TLS_HELLO_NAMEMAX)
		abort();
	for (i = 0; i < len; i++)
		if (strchr("abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.", name[i]) == NULL)
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	 name[TLS_HELLO_NAMEMAX + 1], pname[TLS_HELLO_NAMEMAX + 1];
	char	 small[4];
	size_t	 k;
	int	 r, rk, seen = 0;

	r = tls_hello_servername(data, size, name, sizeof(name));
	if (r < -1 || r > 1)
		abort();
	if (r == 1)
		name_check(name);
	for (k = 0; k < size; k++) {
		rk = tls_hello_servername(data, k, pname, sizeof(pname));
		if (rk == -1) {
			if (seen)
				abort();
			continue;
		}
		seen = 1;
		if (rk != r || (r == 1 && strcmp(name, pname) != 0))
			abort();
	}
	if (r == 1 && tls_hello_servername(data, size, small,
	    sizeof(small)) != (strlen(name) < sizeof(small) ? 1 : 0))
		abort();
	return (0);
}
