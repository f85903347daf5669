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
 * A Maglev lookup table (Eisenbud et al., NSDI 2016) for a redirection's
 * source-hash: m slots (m prime), each naming one of n hosts.  Every
 * host has its own order of the slots, from two hashes of its address
 * keyed by the seed: offset + j * skip (mod m).  The hosts, taken in
 * the order of their addresses, claim in turn the next slot of their
 * order that is still free, until all are taken.  So the table depends
 * only on the set of hosts and the seed, the same on every node; each
 * host has m / n slots give or take one; and a host that goes leaves
 * its slots to the others while nearly every other slot keeps its host.
 */

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <stdlib.h>
#include <string.h>

#include "relayd.h"

struct mag_host {
	const uint8_t	*addr;
	size_t		 len;
	unsigned int	 index;		/* in the caller's array */
	uint32_t	 offset, skip, next;
};

static int
mag_cmp(const void *a, const void *b)
{
	const struct mag_host	*x = a, *y = b;

	if (x->len != y->len)
		return (x->len < y->len ? -1 : 1);
	return (memcmp(x->addr, y->addr, x->len));
}

static const uint8_t *
mag_addr(const struct sockaddr_storage *ss, size_t *len)
{
	if (ss->ss_family == AF_INET) {
		*len = sizeof(struct in_addr);
		return ((const uint8_t *)
		    &((const struct sockaddr_in *)ss)->sin_addr);
	}
	*len = sizeof(struct in6_addr);
	return ((const uint8_t *)&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

/*
 * slots[0..m-1] get indexes into hosts[0..n-1].  -1: no memory, no host,
 * or m too small to give each host a slot.
 */
int
maglev_fill(uint16_t *slots, uint32_t m, const struct sockaddr_storage *hosts,
    unsigned int n, uint32_t seed)
{
	struct mag_host	*h;
	uint8_t		 key[16];
	uint32_t	 c, filled = 0;
	unsigned int	 i;

	if (n == 0 || n > m || m > UINT16_MAX + 1U ||
	    (h = calloc(n, sizeof(*h))) == NULL)
		return (-1);
	memset(key, 0, sizeof(key));
	memcpy(key, &seed, sizeof(seed));
	memcpy(key + 8, "maglev", 6);
	for (i = 0; i < n; i++) {
		h[i].addr = mag_addr(&hosts[i], &h[i].len);
		h[i].index = i;
		h[i].offset = compat_siphash(key, h[i].addr, h[i].len, 0) % m;
		h[i].skip = compat_siphash(key, h[i].addr, h[i].len, 1) %
		    (m - 1) + 1;
	}
	qsort(h, n, sizeof(*h), mag_cmp);
	for (c = 0; c < m; c++)
		slots[c] = UINT16_MAX;
	while (filled < m)
		for (i = 0; i < n && filled < m; i++) {
			/* the host's next free slot in its own order */
			do {
				c = (uint32_t)(((uint64_t)h[i].offset +
				    (uint64_t)h[i].next * h[i].skip) % m);
				h[i].next++;
			} while (slots[c] != UINT16_MAX);
			slots[c] = h[i].index;
			filled++;
		}
	free(h);
	return (0);
}
