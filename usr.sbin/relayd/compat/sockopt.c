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

#ifdef __linux__
#include <linux/filter.h>
#endif

#include <errno.h>
#include <stdint.h>

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

/*
 * A group of n listeners that share one address (SO_REUSEPORT, set on
 * each before its bind), whose connections the kernel gives out by
 * their source: the address, masked to prefix4 bits for IPv4 and to
 * min(prefix6, 64) bits for IPv6, hashed and taken modulo n, picks the
 * listener in the order they joined the group (listen(2)).  Set on the
 * first of them, before any listens.  -1 with errno EOPNOTSUPP where
 * the system cannot steer so (only Linux's classic BPF for
 * SO_REUSEPORT groups can).
 */
int
compat_steer(int s, unsigned int n, int prefix4, int prefix6)
{
#if defined(__linux__) && defined(SO_ATTACH_REUSEPORT_CBPF)
	struct sock_filter	 code[16];
	struct sock_fprog	 prog;
	uint32_t		 m4, m6a, m6b;
	int			 i = 0;

	m4 = prefix4 >= 32 ? 0xffffffffU : ~(0xffffffffU >> prefix4);
	if (prefix6 > 64)
		prefix6 = 64;
	m6a = prefix6 >= 32 ? 0xffffffffU : ~(0xffffffffU >> prefix6);
	m6b = prefix6 <= 32 ? 0 : prefix6 >= 64 ? 0xffffffffU :
	    ~(0xffffffffU >> (prefix6 - 32));
	/* the IP version, in the first nibble of the network header */
	code[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_B | BPF_ABS,
	    SKF_NET_OFF + 0);
	code[i++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_RSH | BPF_K,
	    4);
	code[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
	    6, 3, 0);
	/* IPv4: the source address, masked */
	code[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	    SKF_NET_OFF + 12);
	code[i++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K,
	    m4);
	code[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, 6, 0, 0);
	/* IPv6: the source's first 64 bits, masked, folded */
	code[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	    SKF_NET_OFF + 8);
	code[i++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K,
	    m6a);
	code[i++] = (struct sock_filter)BPF_STMT(BPF_MISC | BPF_TAX, 0);
	code[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	    SKF_NET_OFF + 12);
	code[i++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K,
	    m6b);
	code[i++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_XOR | BPF_X,
	    0);
	/* mixed (Fibonacci hashing), then one of n */
	code[i++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_MUL | BPF_K,
	    0x9e3779b1U);
	code[i++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_RSH | BPF_K,
	    8);
	code[i++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_MOD | BPF_K,
	    n);
	code[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_A, 0);
	prog.len = i;
	prog.filter = code;
	return (setsockopt(s, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog,
	    sizeof(prog)));
#else
	(void)s;
	(void)n;
	(void)prefix4;
	(void)prefix6;
	errno = EOPNOTSUPP;
	return (-1);
#endif
}
