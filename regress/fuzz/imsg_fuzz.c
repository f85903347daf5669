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
 * libFuzzer target for the imsg framing every process and the control
 * socket read: the input arrives on a socketpair, in chunks whose sizes
 * the input's first byte chooses, and is taken apart by imsg_read() and
 * imsg_get() until they stop.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "relayd.h"

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imsgbuf	 ibuf;
	struct imsg	 imsg;
	size_t		 chunk, off = 0;
	ssize_t		 n;
	int		 sp[2];

	if (size < 1)
		return (0);
	chunk = data[0] ? data[0] : 1;
	data++;
	size--;
	/* the input fits the socket buffer: a stream, no deadlock */
	if (size > 65536 ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == -1)
		return (0);
	imsg_init(&ibuf, sp[1]);
	for (;;) {
		if (off < size) {
			n = write(sp[0], data + off,
			    chunk < size - off ? chunk : size - off);
			if (n <= 0)
				abort();
			off += n;
		} else if (sp[0] != -1) {
			close(sp[0]);
			sp[0] = -1;
		}
		if ((n = imsg_read(&ibuf)) <= 0)
			break;
		while ((n = imsg_get(&ibuf, &imsg)) > 0) {
			/* what a dispatcher looks at */
			if (imsg.hdr.len < IMSG_HEADER_SIZE)
				abort();
			if (IMSG_DATA_SIZE(&imsg) > 0)
				(void)memchr(imsg.data, 0,
				    IMSG_DATA_SIZE(&imsg));
			imsg_free(&imsg);
		}
		if (n == -1)
			break;
	}
	imsg_clear(&ibuf);
	if (sp[0] != -1)
		close(sp[0]);
	close(sp[1]);
	return (0);
}
