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
 * Clients of a source-hash redirection that change host when one of N
 * hosts goes down: relayd's Maglev table (maglev.c, MAGLEV_SLOTS slots)
 * against the hash modulo the hosts that are up, which is what a map
 * "jhash ip saddr mod N map { 0 : A, 1 : B, ... }" over the hosts in
 * their order does.  A client is a random 32-bit hash value, the same
 * for both; each of the N hosts goes down in turn.
 *
 *	maglevbench N [CLIENTS]
 *
 * Prints "N maglev_moved P maglev_max P jhash_moved P jhash_max P
 * ideal P": the share of all clients that changed host, on average and
 * at worst over the N losses, in percent; ideal is 100 / N, the lost
 * host's own clients.  Also "maglev_others P": the share of the
 * clients of the hosts that stayed that moved (0 in an ideal table).
 */

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "relayd.h"

int
main(int argc, char *argv[])
{
	struct sockaddr_storage	*all, *up;
	struct sockaddr_in	*sin;
	uint16_t		*full, *part;
	uint32_t		*client, seed = 0x5eed;
	unsigned int		 n, k, i, j, c, nclients, idx;
	double			 mm = 0, mmax = 0, jm = 0, jmax = 0, mo = 0;
	double			 m1, j1, o1;
	unsigned long		 mv, jv, ov, others;

	if (argc < 2 || (n = atoi(argv[1])) < 2 || n > 1024)
		errx(2, "usage: maglevbench N [CLIENTS]");
	nclients = argc > 2 ? (unsigned int)atoi(argv[2]) : 100000;
	if ((all = calloc(n, sizeof(*all))) == NULL ||
	    (up = calloc(n, sizeof(*up))) == NULL ||
	    (full = calloc(MAGLEV_SLOTS, sizeof(*full))) == NULL ||
	    (part = calloc(MAGLEV_SLOTS, sizeof(*part))) == NULL ||
	    (client = calloc(nclients, sizeof(*client))) == NULL)
		err(1, NULL);
	for (i = 0; i < n; i++) {
		sin = (struct sockaddr_in *)&all[i];
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(0x0a000000 + 10 + i);
	}
	for (c = 0; c < nclients; c++)
		client[c] = arc4random();
	if (maglev_fill(full, MAGLEV_SLOTS, all, n, seed) == -1)
		errx(1, "maglev_fill");
	for (k = 0; k < n; k++) {
		/* host k goes down: the others, in their order */
		for (i = j = 0; i < n; i++)
			if (i != k)
				up[j++] = all[i];
		if (maglev_fill(part, MAGLEV_SLOTS, up, n - 1, seed) == -1)
			errx(1, "maglev_fill");
		mv = jv = ov = others = 0;
		for (c = 0; c < nclients; c++) {
			/* Maglev: slot to host, indexes of up[] past k shift */
			i = full[client[c] % MAGLEV_SLOTS];
			idx = part[client[c] % MAGLEV_SLOTS];
			idx += idx >= k;
			if (idx != i)
				mv++;
			if (i != k) {
				others++;
				ov += idx != i;
			}
			/* mod N over the hosts that are up, in their order */
			i = client[c] % n;
			idx = client[c] % (n - 1);
			idx += idx >= k;
			jv += idx != i;
		}
		m1 = 100.0 * mv / nclients;
		j1 = 100.0 * jv / nclients;
		o1 = others > 0 ? 100.0 * ov / others : 0;
		mm += m1 / n;
		jm += j1 / n;
		mo += o1 / n;
		if (m1 > mmax)
			mmax = m1;
		if (j1 > jmax)
			jmax = j1;
	}
	printf("%u maglev_moved %.2f maglev_max %.2f jhash_moved %.2f "
	    "jhash_max %.2f ideal %.2f maglev_others %.2f\n", n, mm, mmax,
	    jm, jmax, 100.0 / n, mo);
	return (0);
}
