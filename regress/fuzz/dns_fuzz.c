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
 * libFuzzer target for the DNS header and question parser every
 * datagram of a dns relay goes through, queries from anybody and
 * answers from backends.  What it accepts has its question inside the
 * datagram; the question alone (the datagram cut right after it) reads
 * the same, one byte less does not, and the header fields are the
 * datagram's.
 */

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "relayd.h"
#include "relay.h"

#define DNS_HDRLEN	12

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dns_msg	 m, m2;
	size_t		 end;
	int		 r;

	r = relay_dns_parse(data, size, &m);
	if (size < DNS_HDRLEN) {
		if (r != -1)
			abort();
		return (0);
	}
	if (r == -1) {
		/* only a question can be wrong */
		if (((data[4] << 8) | data[5]) == 0)
			abort();
		return (0);
	}
	if (m.id != ((data[0] << 8) | data[1]) || m.flags0 != data[2] ||
	    m.flags1 != data[3] || m.qdcount != ((data[4] << 8) | data[5]))
		abort();
	if (m.qdcount == 0) {
		if (m.qlen != 0)
			abort();
		return (0);
	}
	/* a name of one byte at least, a type and a class */
	if (m.qlen < 5 || m.qlen > size - DNS_HDRLEN || m.qlen > 255 + 2 + 4)
		abort();
	end = DNS_HDRLEN + m.qlen;
	if (m.q != data + DNS_HDRLEN || m.qlen > DNS_QUESTIONMAX)
		abort();
	if (relay_dns_parse(data, end, &m2) != 0 || m2.qlen != m.qlen ||
	    memcmp(m2.q, m.q, m.qlen) != 0)
		abort();
	if (relay_dns_parse(data, end - 1, &m2) != -1)
		abort();
	return (0);
}
