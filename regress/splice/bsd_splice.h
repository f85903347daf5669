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
 * A stand-in for what the BSDs' <sys/socket.h> declare for SO_SPLICE
 * (OpenBSD since 4.9, FreeBSD since 14.2; setsockopt(2), sosplice(9)),
 * so that `make lint' can compile splice_so.c where there is no BSD.
 * It is included before everything else with -include.
 */

#ifndef BSD_SPLICE_H
#define BSD_SPLICE_H

#include <sys/types.h>
#include <sys/time.h>

#define SO_SPLICE	0x1023		/* splice data to other socket */

struct splice {
	int		sp_fd;		/* drain socket */
	off_t		sp_max;		/* maximum number of bytes */
	struct timeval	sp_idle;	/* idle timeout */
};

#endif /* BSD_SPLICE_H */
