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

#include <sys/types.h>
#include <sys/resource.h>

#include <limits.h>
#include <poll.h>
#include <unistd.h>

#include "compat.h"

#ifndef __OpenBSD__

#define SCAN_CHUNK	1024

/*
 * Count the open descriptors without /proc: a directory handle kept
 * across chroot(2) would be a way out of it (openat(fd, "../../..")).
 * poll(2) flags every descriptor that is not open with POLLNVAL, so one
 * call looks at a whole chunk of the table.
 */
int
getdtablecount(void)
{
	struct pollfd	 pfd[SCAN_CHUNK];
	struct rlimit	 rl;
	rlim_t		 max, base;
	int		 i, n, chunk;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur > INT_MAX)
		max = getdtablesize();
	else
		max = rl.rlim_cur;
	for (base = 0, n = 0; base < max; base += chunk) {
		chunk = max - base > SCAN_CHUNK ? SCAN_CHUNK : max - base;
		for (i = 0; i < chunk; i++) {
			pfd[i].fd = base + i;
			pfd[i].events = 0;
			pfd[i].revents = 0;
		}
		if (poll(pfd, chunk, 0) == -1)
			return (-1);
		for (i = 0; i < chunk; i++)
			if ((pfd[i].revents & POLLNVAL) == 0)
				n++;
	}
	return (n);
}
#endif /* !__OpenBSD__ */
