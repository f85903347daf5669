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
 * Transparent proxying: a socket that binds to an address the host does
 * not own (OpenBSD's SO_BINDANY), and the destination a client asked
 * for before a redirection (OpenBSD asks pf; Linux's netfilter keeps it
 * in SO_ORIGINAL_DST).
 */

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>
#include <string.h>

#ifdef __linux__
#include <linux/fib_rules.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <unistd.h>
#endif

#include "compat.h"

/* Needs CAP_NET_ADMIN on Linux, root on the BSDs: the parent calls it. */
int
compat_transparent(int s, int af)
{
	int	 on = 1;

#if defined(__linux__)
	if (af == AF_INET6)
		return (setsockopt(s, SOL_IPV6, IPV6_TRANSPARENT, &on,
		    sizeof(on)));
	return (setsockopt(s, SOL_IP, IP_TRANSPARENT, &on, sizeof(on)));
#elif defined(SO_BINDANY)
	(void)af;
	return (setsockopt(s, SOL_SOCKET, SO_BINDANY, &on, sizeof(on)));
#elif defined(IP_BINDANY)
	if (af == AF_INET6)
		return (setsockopt(s, IPPROTO_IPV6, IPV6_BINDANY, &on,
		    sizeof(on)));
	return (setsockopt(s, IPPROTO_IP, IP_BINDANY, &on, sizeof(on)));
#else
	(void)s;
	(void)af;
	(void)on;
	errno = EOPNOTSUPP;
	return (-1);
#endif
}

/* Can compat_natlook() answer here ("forward to nat lookup")? */
int
compat_natlook_available(void)
{
#ifdef RELAYD_HAVE_NATLOOK
	return (1);
#else
	return (0);
#endif
}

/* The destination of a redirected connection s, before the redirection. */
int
compat_natlook(int s, struct sockaddr_storage *ss)
{
#ifdef __linux__
	socklen_t	 len = sizeof(*ss);
	int		 level = SOL_IP, name = SO_ORIGINAL_DST;

	memset(ss, 0, sizeof(*ss));
	if (getsockname(s, (struct sockaddr *)ss, &len) == -1)
		return (-1);
	if (ss->ss_family == AF_INET6) {
		level = SOL_IPV6;
		name = IP6T_SO_ORIGINAL_DST;
	}
	len = sizeof(*ss);
	return (getsockopt(s, level, name, ss, &len));
#else
	(void)s;
	(void)ss;
	errno = EOPNOTSUPP;
	return (-1);
#endif
}

#ifdef __linux__
/*
 * One netlink dump of the routing rules (RTM_GETRULE) or of the routes
 * (RTM_GETROUTE) of family af: for rules, the table of the first rule
 * that matches a firewall mark; for routes, 1 when table has a local
 * route for every address (what marked packets need).  -1: unknown.
 */
static int
nl_dump(int type, int af, unsigned int table)
{
	struct {
		struct nlmsghdr	 nh;
		struct rtmsg	 rt;
	} req;
	struct nlmsghdr	*nh;
	struct rtmsg	*rt;
	struct rtattr	*rta;
	char		 buf[16384];
	ssize_t		 n;
	unsigned int	 rtable, found = 0, fwmark;
	int		 s, alen, done = 0;

	if ((s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
	    NETLINK_ROUTE)) == -1)
		return (-1);
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = sizeof(req);
	req.nh.nlmsg_type = type;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.rt.rtm_family = af;
	if (send(s, &req, sizeof(req), 0) == -1) {
		close(s);
		return (-1);
	}
	while (!done && (n = recv(s, buf, sizeof(buf), 0)) > 0) {
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
		    nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_type == NLMSG_DONE ||
			    nh->nlmsg_type == NLMSG_ERROR) {
				done = 1;
				break;
			}
			rt = NLMSG_DATA(nh);
			rtable = rt->rtm_table;
			fwmark = 0;
			alen = RTM_PAYLOAD(nh);
			for (rta = RTM_RTA(rt); RTA_OK(rta, alen);
			    rta = RTA_NEXT(rta, alen)) {
				if (rta->rta_type == FRA_TABLE &&
				    RTA_PAYLOAD(rta) >= sizeof(unsigned int))
					memcpy(&rtable, RTA_DATA(rta),
					    sizeof(rtable));
				if (type == RTM_GETRULE &&
				    rta->rta_type == FRA_FWMARK)
					fwmark = 1;
			}
			if (type == RTM_GETRULE && fwmark && !found)
				found = rtable;
			if (type == RTM_GETROUTE && rtable == table &&
			    rt->rtm_type == RTN_LOCAL && rt->rtm_dst_len == 0)
				found = 1;
		}
	}
	close(s);
	return ((int)found);
}
#endif

/*
 * Transparent sockets get their return packets only through policy
 * routing: a rule for marked packets to a table with a local route for
 * every address.  1 when af has both, 0 when not, -1 when unknown.
 */
int
compat_transparent_route(int af)
{
#ifdef __linux__
	int	 table;

	if ((table = nl_dump(RTM_GETRULE, af, 0)) <= 0)
		return (table);
	return (nl_dump(RTM_GETROUTE, af, table));
#else
	(void)af;
	return (-1);
#endif
}
