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
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>

#include "compat.h"

/*
 * Is a stream socket connected, or on its way (a non-blocking connect in
 * progress)?  Sockets that were never connected, or are closed, are not.
 */
int
compat_tcp_connected(int fd)
{
#if defined(__linux__) && defined(TCP_INFO)
	struct tcp_info	 ti;
	socklen_t	 len = sizeof(ti);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == -1)
		return (0);
	switch (ti.tcpi_state) {
	case TCP_ESTABLISHED:
	case TCP_SYN_SENT:
	case TCP_SYN_RECV:
	case TCP_CLOSE_WAIT:
	case TCP_FIN_WAIT1:
	case TCP_FIN_WAIT2:
		return (1);
	default:
		return (0);
	}
#else
	struct sockaddr_storage	 ss;
	socklen_t		 len = sizeof(ss);
	int			 err;
	socklen_t		 elen = sizeof(err);

	if (getpeername(fd, (struct sockaddr *)&ss, &len) == 0)
		return (1);
	/* a connect in progress has no peer yet and no error either */
	if (errno == ENOTCONN &&
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) == 0 &&
	    err == 0)
		return (1);
	return (0);
#endif
}
