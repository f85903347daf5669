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
 * The DNS backend of the bench: as fast as a DNS server can be.  Every
 * query on UDP 127.0.0.1 gets an answer with one A record (192.0.2.1)
 * for its first question, 64 datagrams per system call.
 *
 *	dnsecho PORTFILE [SECONDS]
 */

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <err.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BATCH	64
#define BUFSZ	4096

int
main(int argc, char *argv[])
{
	static unsigned char	 buf[BATCH][BUFSZ];
	static struct sockaddr_in from[BATCH];
	struct mmsghdr		 msg[BATCH];
	struct iovec		 iov[BATCH];
	struct sockaddr_in	 sin;
	struct pollfd		 pfd;
	socklen_t		 len;
	time_t			 end;
	FILE			*f;
	size_t			 off, qlen;
	int			 s, n, i, j, size = 4 << 20;
	unsigned char		*p;
	static const unsigned char rr[] = {
		0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 1
	};

	if (argc < 2)
		errx(1, "usage: dnsecho PORTFILE [SECONDS]");
	end = time(NULL) + (argc > 2 ? atoi(argv[2]) : 600);
	if ((s = socket(AF_INET, SOCK_DGRAM, 0)) == -1)
		err(1, "socket");
	(void)setsockopt(s, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	(void)setsockopt(s, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		err(1, "bind");
	len = sizeof(sin);
	if (getsockname(s, (struct sockaddr *)&sin, &len) == -1)
		err(1, "getsockname");
	if ((f = fopen(argv[1], "w")) == NULL)
		err(1, "%s", argv[1]);
	fprintf(f, "%d\n", ntohs(sin.sin_port));
	fclose(f);

	pfd.fd = s;
	pfd.events = POLLIN;
	while (time(NULL) < end) {
		if (poll(&pfd, 1, 1000) <= 0)
			continue;
		memset(msg, 0, sizeof(msg));
		for (i = 0; i < BATCH; i++) {
			iov[i].iov_base = buf[i];
			iov[i].iov_len = BUFSZ - sizeof(rr);
			msg[i].msg_hdr.msg_iov = &iov[i];
			msg[i].msg_hdr.msg_iovlen = 1;
			msg[i].msg_hdr.msg_name = &from[i];
			msg[i].msg_hdr.msg_namelen = sizeof(from[i]);
		}
		if ((n = recvmmsg(s, msg, BATCH, MSG_DONTWAIT, NULL)) <= 0)
			continue;
		for (i = 0, j = 0; i < n; i++) {
			p = buf[i];
			qlen = msg[i].msg_len;
			if (qlen < 12 || (p[2] & 0x80))
				continue;
			/* the end of the first question */
			for (off = 12; off < qlen && p[off] != 0;
			    off += p[off] + 1)
				;
			off += 5;
			if (off > qlen || p[5] != 1)
				continue;
			p[2] |= 0x80;		/* an answer */
			p[3] = 0x80;		/* recursion available */
			p[6] = 0;
			p[7] = 1;		/* one answer, nothing else */
			p[8] = p[9] = p[10] = p[11] = 0;
			memcpy(p + off, rr, sizeof(rr));
			iov[i].iov_len = off + sizeof(rr);
			/* what is answered moves to the front */
			if (i != j) {
				iov[j] = iov[i];
				msg[j] = msg[i];
			}
			msg[j].msg_hdr.msg_iov = &iov[j];
			j++;
		}
		if (j > 0)
			(void)sendmmsg(s, msg, j, 0);
	}
	return (0);
}
