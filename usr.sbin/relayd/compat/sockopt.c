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

/* Socket options that not every system has. */

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>

#include "compat.h"

/*
 * The lowest TTL (hop limit) a listener af accepts packets with, as
 * "ip minttl" asks.  -1 with errno ENOPROTOOPT where the system lacks it.
 */
int
compat_minttl(int s, int af, int ttl)
{
	if (af == AF_INET6) {
#ifdef IPV6_MINHOPCOUNT
		return (setsockopt(s, IPPROTO_IPV6, IPV6_MINHOPCOUNT, &ttl,
		    sizeof(ttl)));
#endif
	} else {
#ifdef IP_MINTTL
		return (setsockopt(s, IPPROTO_IP, IP_MINTTL, &ttl,
		    sizeof(ttl)));
#endif
	}
	(void)s;
	(void)ttl;
	errno = ENOPROTOOPT;
	return (-1);
}

/*
 * A socket bound to a source address before connect(2) takes its port
 * at connect time, as a socket that is not bound does: bind(2) would
 * reserve a port for any destination and run out of ports long before
 * connect(2) would (Linux's IP_BIND_ADDRESS_NO_PORT).  Nothing to do
 * where the system lacks it.
 */
void
compat_bind_noport(int s)
{
#ifdef IP_BIND_ADDRESS_NO_PORT
	int	 on = 1;

	(void)setsockopt(s, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &on,
	    sizeof(on));
#else
	(void)s;
#endif
}

/*
 * A listener may bind an address this host does not hold (yet): the
 * shared address of a pair, which the standby gets at failover.
 * Linux's IP_FREEBIND / IPV6_FREEBIND, the BSDs' IP_BINDANY /
 * IPV6_BINDANY or SO_BINDANY (root's).  -1 with errno ENOPROTOOPT where
 * the system has none.
 */
int
compat_freebind(int s, int af)
{
	int	 on = 1;

	(void)on;
	if (af == AF_INET6) {
#if defined(IPV6_FREEBIND)
		return (setsockopt(s, IPPROTO_IPV6, IPV6_FREEBIND, &on,
		    sizeof(on)));
#elif defined(IPV6_BINDANY)
		return (setsockopt(s, IPPROTO_IPV6, IPV6_BINDANY, &on,
		    sizeof(on)));
#endif
	} else {
#if defined(IP_FREEBIND)
		return (setsockopt(s, IPPROTO_IP, IP_FREEBIND, &on,
		    sizeof(on)));
#elif defined(IP_BINDANY)
		return (setsockopt(s, IPPROTO_IP, IP_BINDANY, &on,
		    sizeof(on)));
#endif
	}
#if defined(SO_BINDANY)
	return (setsockopt(s, SOL_SOCKET, SO_BINDANY, &on, sizeof(on)));
#else
	(void)s;
	errno = ENOPROTOOPT;
	return (-1);
#endif
}
