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
 * Routers on Linux, for the parent: routes go through rtnetlink
 * (libmnl), with the protocol number of the router's rtlabel, or
 * ROUTER_PROTO: that is how relayd knows its own.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netinet/in.h>

#include <linux/rtnetlink.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>

#include "relayd.h"

static struct mnl_socket *nl_route;

static int
rtnl_talk_open(void)
{
	if (nl_route != NULL)
		return (0);
	if ((nl_route = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC)) == NULL)
		return (-1);
	if (mnl_socket_bind(nl_route, 0, MNL_SOCKET_AUTOPID) == -1) {
		mnl_socket_close(nl_route);
		nl_route = NULL;
		return (-1);
	}
	return (0);
}

/* rtnetlink: one request, its acknowledgement. */
static int
rtnl_talk(struct nlmsghdr *nlh)
{
	char		 buf[MNL_SOCKET_BUFFER_SIZE];
	uint32_t	 seq, portid;
	ssize_t		 len;

	if (rtnl_talk_open() == -1)
		return (-1);
	nlh->nlmsg_seq = seq = arc4random();
	nlh->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	if (mnl_socket_sendto(nl_route, nlh, nlh->nlmsg_len) == -1)
		return (-1);
	portid = mnl_socket_get_portid(nl_route);
	if ((len = mnl_socket_recvfrom(nl_route, buf, sizeof(buf))) == -1)
		return (-1);
	return (mnl_cb_run(buf, len, seq, portid, NULL, NULL) == -1 ? -1 : 0);
}

static void
rtnl_addr(struct nlmsghdr *nlh, uint16_t type, struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		mnl_attr_put(nlh, type, sizeof(struct in_addr),
		    &((struct sockaddr_in *)ss)->sin_addr);
	else
		mnl_attr_put(nlh, type, sizeof(struct in6_addr),
		    &((struct sockaddr_in6 *)ss)->sin6_addr);
}

static struct rtmsg *
rtnl_route_msg(char *buf, int type, int flags, struct router *rt, int i,
    int prio)
{
	struct nlmsghdr	*nlh;
	struct rtmsg	*rtm;
	int		 table = rt->conf.rtable == 0 ? RT_TABLE_MAIN :
			    rt->conf.rtable;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = rt->conf.af;
	rtm->rtm_dst_len = rt->conf.prefixlen[i];
	rtm->rtm_table = table < 256 ? table : RT_TABLE_UNSPEC;
	rtm->rtm_protocol = rt->conf.proto;
	rtm->rtm_scope = RT_SCOPE_UNIVERSE;
	rtm->rtm_type = RTN_UNICAST;
	mnl_attr_put_u32(nlh, RTA_TABLE, table);
	rtnl_addr(nlh, RTA_DST, &rt->conf.routes[i]);
	if (prio > 0)
		mnl_attr_put_u32(nlh, RTA_PRIORITY, prio);
	return (rtm);
}

/*
 * Route i of a router through these gateways: one nexthop, or a
 * multipath route; none removes it.  prio: the route's metric.
 */
int
kernel_route_set(struct router *rt, int i, struct sockaddr_storage *gw,
    unsigned int n, int prio)
{
	char			 buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr		*nlh = (struct nlmsghdr *)buf;
	struct nlattr		*mp;
	struct rtnexthop	*nh;
	unsigned int		 j;

	if (n == 0) {
		(void)rtnl_route_msg(buf, RTM_DELROUTE, 0, rt, i, 0);
		/* gone already is what we want */
		if (rtnl_talk(nlh) == -1 && errno != ESRCH) {
			log_warn("router %s: cannot remove a route",
			    rt->conf.name);
			return (-1);
		}
		return (0);
	}
	(void)rtnl_route_msg(buf, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE,
	    rt, i, prio);
	if (n == 1)
		rtnl_addr(nlh, RTA_GATEWAY, &gw[0]);
	else {
		mp = mnl_attr_nest_start(nlh, RTA_MULTIPATH);
		for (j = 0; j < n; j++) {
			nh = mnl_nlmsg_get_payload_tail(nlh);
			memset(nh, 0, sizeof(*nh));
			nlh->nlmsg_len += MNL_ALIGN(sizeof(*nh));
			rtnl_addr(nlh, RTA_GATEWAY, &gw[j]);
			nh->rtnh_len = (char *)mnl_nlmsg_get_payload_tail(nlh) -
			    (char *)nh;
		}
		mnl_attr_nest_end(nlh, mp);
	}
	if (rtnl_talk(nlh) == -1) {
		log_warn("router %s: cannot set a route", rt->conf.name);
		return (-1);
	}
	return (0);
}

/* Routes of relayd's protocols in any table: what a killed one left. */
struct stale {
	char	 msgs[64][512];
	int	 n;
};

static int
route_stale_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct stale		*st = arg;
	const struct rtmsg	*rtm = mnl_nlmsg_get_payload(nlh);

	if (rtm->rtm_protocol < ROUTER_PROTO ||
	    rtm->rtm_protocol > ROUTER_PROTO_MAX ||
	    nlh->nlmsg_len > sizeof(st->msgs[0]) ||
	    st->n == (int)nitems(st->msgs))
		return (MNL_CB_OK);
	memcpy(st->msgs[st->n++], nlh, nlh->nlmsg_len);
	return (MNL_CB_OK);
}

void
kernel_route_stale(void)
{
	char			 buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr		*nlh;
	struct rtmsg		*rtm;
	struct stale		*st;
	uint32_t		 seq, portid;
	ssize_t			 len;
	int			 i, af, ret;

	if ((st = calloc(1, sizeof(*st))) == NULL)
		fatal("%s", __func__);
	for (af = 0; af < 2; af++) {
		if (rtnl_talk_open() == -1)
			break;
		nlh = mnl_nlmsg_put_header(buf);
		nlh->nlmsg_type = RTM_GETROUTE;
		nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
		nlh->nlmsg_seq = seq = arc4random();
		rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
		rtm->rtm_family = af ? AF_INET6 : AF_INET;
		if (mnl_socket_sendto(nl_route, nlh, nlh->nlmsg_len) == -1)
			break;
		portid = mnl_socket_get_portid(nl_route);
		while ((len = mnl_socket_recvfrom(nl_route, buf,
		    sizeof(buf))) > 0) {
			ret = mnl_cb_run(buf, len, seq, portid,
			    route_stale_cb, st);
			if (ret <= MNL_CB_STOP)
				break;
		}
	}
	for (i = 0; i < st->n; i++) {
		nlh = (struct nlmsghdr *)st->msgs[i];
		nlh->nlmsg_type = RTM_DELROUTE;
		nlh->nlmsg_flags = 0;
		if (rtnl_talk(nlh) == 0)
			log_info("removed a route a previous relayd left "
			    "(protocol %d)", ((struct rtmsg *)
			    mnl_nlmsg_get_payload(nlh))->rtm_protocol);
	}
	free(st);
}
