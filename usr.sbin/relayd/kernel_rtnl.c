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
 *
 * A route goes through a resilient nexthop group (Linux 5.13): buckets
 * (512, the router's "buckets"), each naming one gateway's nexthop
 * object, and a flow's hash picks a bucket.  When a gateway goes, only
 * its buckets are given to the others; when one comes (back), it takes
 * buckets that have been idle "bucket-idle" seconds (120), so flows of
 * the gateways that stay never move.
 * A plain multipath route (hash-threshold) would move up to half of
 * them.  The group lives as long as the route, through reloads that
 * keep it and through its gateways all but one failing.  On a kernel
 * without such groups, routes are plain multipath, and the log says so
 * once.
 */

#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <net/if.h>
#include <netinet/in.h>

#include <linux/if_tun.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libmnl/libmnl.h>

#include "relayd.h"

#define NH_ID_BASE	0x52440000	/* relayd's nexthop ids, "RD" */
#define NH_MEMBERS	ROUTER_MAXGATEWAYS	/* of a group, at most */

/* A gateway's nexthop object, in as many groups as refs says. */
struct nh_obj {
	TAILQ_ENTRY(nh_obj)	 entry;
	struct sockaddr_storage	 gw;
	uint32_t		 id;
	unsigned int		 refs;
};

/* A route of relayd's through a resilient group of nexthop objects. */
struct nh_route {
	TAILQ_ENTRY(nh_route)	 entry;
	int			 af, table, plen;
	struct sockaddr_storage	 dst;
	uint32_t		 gid;
	struct nh_obj		*members[NH_MEMBERS];
	unsigned int		 n;
};

static struct mnl_socket *nl_route;
static TAILQ_HEAD(, nh_obj)	nh_objs = TAILQ_HEAD_INITIALIZER(nh_objs);
static TAILQ_HEAD(, nh_route)	nh_routes = TAILQ_HEAD_INITIALIZER(nh_routes);
static int			nh_absent;	/* no resilient groups */
static uint32_t			nh_next = NH_ID_BASE;

static int	 rtnl_talk_cb(struct nlmsghdr *, mnl_cb_t, void *, int);
static int	 rtnl_oif(struct sockaddr_storage *);
static int	 rtnl_route_del(struct router *, int);
static int	 nh_route_set(struct router *, int, struct sockaddr_storage *,
		    unsigned int, int);
static struct nh_obj
		*nh_obj_get(struct sockaddr_storage *, int);
static void	 nh_obj_put(struct nh_obj *);
static int	 nh_group_set(struct nh_route *, struct router *);
static int	 nh_route_put(struct nh_route *, struct router *, int, int);
static void	 nh_route_free(struct nh_route *);
static int	 nh_addr_eq(struct sockaddr_storage *,
		    struct sockaddr_storage *);
static int	 nh_del(uint32_t);
static int	 nh_new(struct nlmsghdr *, struct nlattr *, uint32_t *);

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
	return (rtnl_talk_cb(nlh, NULL, NULL, 1));
}

/* One request; its answer to cb, or (ack) its acknowledgement. */
static int
rtnl_talk_cb(struct nlmsghdr *nlh, mnl_cb_t cb, void *arg, int ack)
{
	char		 buf[MNL_SOCKET_BUFFER_SIZE];
	uint32_t	 seq, portid;
	ssize_t		 len;

	if (rtnl_talk_open() == -1)
		return (-1);
	nlh->nlmsg_seq = seq = arc4random();
	nlh->nlmsg_flags |= NLM_F_REQUEST | (ack ? NLM_F_ACK : 0);
	if (mnl_socket_sendto(nl_route, nlh, nlh->nlmsg_len) == -1)
		return (-1);
	portid = mnl_socket_get_portid(nl_route);
	if ((len = mnl_socket_recvfrom(nl_route, buf, sizeof(buf))) == -1)
		return (-1);
	return (mnl_cb_run(buf, len, seq, portid, cb, arg) == -1 ? -1 : 0);
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

/* A unicast route's message to dst/plen, in table, of protocol proto. */
static struct nlmsghdr *
rtnl_route_hdr(char *buf, int type, int flags, struct sockaddr_storage *dst,
    int plen, int table, int proto, int scope)
{
	struct nlmsghdr	*nlh;
	struct rtmsg	*rtm;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = dst->ss_family;
	rtm->rtm_dst_len = plen;
	rtm->rtm_table = table < 256 ? table : RT_TABLE_UNSPEC;
	rtm->rtm_protocol = proto;
	rtm->rtm_scope = scope;
	rtm->rtm_type = RTN_UNICAST;
	mnl_attr_put_u32(nlh, RTA_TABLE, table);
	rtnl_addr(nlh, RTA_DST, dst);
	return (nlh);
}

/* Route i of a router, with metric prio. */
static struct nlmsghdr *
rtnl_route_msg(char *buf, int type, int flags, struct router *rt, int i,
    int prio)
{
	struct nlmsghdr	*nlh;

	nlh = rtnl_route_hdr(buf, type, flags, &rt->conf.routes[i],
	    rt->conf.prefixlen[i], rt->conf.rtable == 0 ? RT_TABLE_MAIN :
	    rt->conf.rtable, rt->conf.proto, RT_SCOPE_UNIVERSE);
	if (prio > 0)
		mnl_attr_put_u32(nlh, RTA_PRIORITY, prio);
	return (nlh);
}

/* Route i of a router goes; gone already is what we want. */
static int
rtnl_route_del(struct router *rt, int i)
{
	char		 buf[MNL_SOCKET_BUFFER_SIZE];

	(void)rtnl_route_msg(buf, RTM_DELROUTE, 0, rt, i, 0);
	if (rtnl_talk((struct nlmsghdr *)buf) == -1 && errno != ESRCH) {
		log_warn("router %s: cannot remove a route", rt->conf.name);
		return (-1);
	}
	return (0);
}

/*
 * Route i of a router through these gateways: a resilient group, else
 * one nexthop or a multipath route; none removes it.  prio: the route's
 * metric.
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
	int			 ret;

	if (!nh_absent && n <= NH_MEMBERS &&
	    (ret = nh_route_set(rt, i, gw, n, prio)) != 1)
		return (ret);
	if (n == 0)
		return (rtnl_route_del(rt, i));
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

/* The interface the kernel would send to gw by; 0: none. */
static int
oif_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct nlattr	*a;

	mnl_attr_for_each(a, nlh, sizeof(struct rtmsg))
		if (mnl_attr_get_type(a) == RTA_OIF &&
		    mnl_attr_validate(a, MNL_TYPE_U32) == 0)
			*(int *)arg = (int)mnl_attr_get_u32(a);
	return (MNL_CB_OK);
}

static int
rtnl_oif(struct sockaddr_storage *gw)
{
	char		 buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr	*nlh;
	struct rtmsg	*rtm;
	int		 oif = 0;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETROUTE;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = gw->ss_family;
	rtm->rtm_dst_len = gw->ss_family == AF_INET ? 32 : 128;
	rtnl_addr(nlh, RTA_DST, gw);
	if (rtnl_talk_cb(nlh, oif_cb, &oif, 0) == -1)
		return (0);
	return (oif);
}

/* The same address (ports and the rest aside). */
static int
nh_addr_eq(struct sockaddr_storage *a, struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return (0);
	if (a->ss_family == AF_INET)
		return (memcmp(&((struct sockaddr_in *)a)->sin_addr,
		    &((struct sockaddr_in *)b)->sin_addr,
		    sizeof(struct in_addr)) == 0);
	return (memcmp(&((struct sockaddr_in6 *)a)->sin6_addr,
	    &((struct sockaddr_in6 *)b)->sin6_addr,
	    sizeof(struct in6_addr)) == 0);
}

/*
 * RTM_NEWNEXTHOP of a new object: its NHA_ID attribute (idattr) gets
 * relayd's first free id, which goes to id.
 */
static int
nh_new(struct nlmsghdr *nlh, struct nlattr *idattr, uint32_t *id)
{
	uint16_t	 flags = nlh->nlmsg_flags | NLM_F_CREATE | NLM_F_EXCL;
	int		 tries;

	for (tries = 0; tries < 1024; tries++) {
		if (nh_next < NH_ID_BASE)
			nh_next = NH_ID_BASE;
		*id = nh_next++;
		memcpy(mnl_attr_get_payload(idattr), id, sizeof(*id));
		nlh->nlmsg_flags = flags;
		if (rtnl_talk(nlh) == 0)
			return (0);
		if (errno != EEXIST)
			return (-1);
	}
	return (-1);
}

static int
nh_del(uint32_t id)
{
	char		 buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr	*nlh;
	struct nhmsg	*nhm;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_DELNEXTHOP;
	nhm = mnl_nlmsg_put_extra_header(nlh, sizeof(*nhm));
	nhm->nh_family = AF_UNSPEC;
	mnl_attr_put_u32(nlh, NHA_ID, id);
	if (rtnl_talk(nlh) == -1 && errno != ENOENT)
		return (-1);
	return (0);
}

/* gw's nexthop object, made when no group had it yet; a reference. */
static struct nh_obj *
nh_obj_get(struct sockaddr_storage *gw, int proto)
{
	char		 buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr	*nlh;
	struct nhmsg	*nhm;
	struct nlattr	*idattr;
	struct nh_obj	*o;
	int		 oif;

	TAILQ_FOREACH(o, &nh_objs, entry)
		if (nh_addr_eq(&o->gw, gw)) {
			o->refs++;
			return (o);
		}
	/* a gateway's nexthop object names its interface */
	if ((oif = rtnl_oif(gw)) == 0) {
		errno = EHOSTUNREACH;
		return (NULL);
	}
	if ((o = calloc(1, sizeof(*o))) == NULL)
		return (NULL);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWNEXTHOP;
	nhm = mnl_nlmsg_put_extra_header(nlh, sizeof(*nhm));
	nhm->nh_family = gw->ss_family;
	nhm->nh_protocol = proto;
	idattr = mnl_nlmsg_get_payload_tail(nlh);
	mnl_attr_put_u32(nlh, NHA_ID, 0);
	mnl_attr_put_u32(nlh, NHA_OIF, oif);
	rtnl_addr(nlh, NHA_GATEWAY, gw);
	if (nh_new(nlh, idattr, &o->id) == -1) {
		free(o);
		return (NULL);
	}
	o->gw = *gw;
	o->refs = 1;
	TAILQ_INSERT_TAIL(&nh_objs, o, entry);
	return (o);
}

/* A group let go of o: gone with its last group. */
static void
nh_obj_put(struct nh_obj *o)
{
	if (o == NULL || --o->refs > 0)
		return;
	TAILQ_REMOVE(&nh_objs, o, entry);
	(void)nh_del(o->id);
	free(o);
}

/* r's group: made with its members, or given them (NLM_F_REPLACE). */
static int
nh_group_set(struct nh_route *r, struct router *rt)
{
	char			 buf[MNL_SOCKET_BUFFER_SIZE];
	struct nexthop_grp	 g[NH_MEMBERS];
	struct nlmsghdr		*nlh;
	struct nhmsg		*nhm;
	struct nlattr		*idattr, *res;
	unsigned int		 j;
	long			 hz = sysconf(_SC_CLK_TCK);

	/* libmnl leaves the padding after a 16-bit attribute as it was */
	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWNEXTHOP;
	nhm = mnl_nlmsg_put_extra_header(nlh, sizeof(*nhm));
	nhm->nh_family = AF_UNSPEC;
	nhm->nh_protocol = rt->conf.proto;
	idattr = mnl_nlmsg_get_payload_tail(nlh);
	mnl_attr_put_u32(nlh, NHA_ID, r->gid);
	memset(g, 0, r->n * sizeof(g[0]));
	for (j = 0; j < r->n; j++)
		g[j].id = r->members[j]->id;	/* weight 0 is 1 */
	mnl_attr_put(nlh, NHA_GROUP, r->n * sizeof(g[0]), g);
	mnl_attr_put_u16(nlh, NHA_GROUP_TYPE, NEXTHOP_GRP_TYPE_RES);
	res = mnl_attr_nest_start(nlh, NHA_RES_GROUP);
	/* the number of buckets is the group's for life */
	if (r->gid == 0)
		mnl_attr_put_u16(nlh, NHA_RES_GROUP_BUCKETS, rt->conf.buckets);
	mnl_attr_put_u32(nlh, NHA_RES_GROUP_IDLE_TIMER,
	    rt->conf.bucket_idle * (hz > 0 ? hz : 100));
	mnl_attr_put_u32(nlh, NHA_RES_GROUP_UNBALANCED_TIMER, 0);
	mnl_attr_nest_end(nlh, res);
	if (r->gid != 0) {
		nlh->nlmsg_flags = NLM_F_CREATE | NLM_F_REPLACE;
		return (rtnl_talk(nlh));
	}
	return (nh_new(nlh, idattr, &r->gid));
}

/* r's route, through its group. */
static int
nh_route_put(struct nh_route *r, struct router *rt, int i, int prio)
{
	char		 buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr	*nlh = (struct nlmsghdr *)buf;

	(void)rtnl_route_msg(buf, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE,
	    rt, i, prio);
	mnl_attr_put_u32(nlh, RTA_NH_ID, r->gid);
	return (rtnl_talk(nlh));
}

/* r and its group go (its route is gone). */
static void
nh_route_free(struct nh_route *r)
{
	unsigned int	 j;

	if (r->gid != 0)
		(void)nh_del(r->gid);
	for (j = 0; j < r->n; j++)
		nh_obj_put(r->members[j]);
	TAILQ_REMOVE(&nh_routes, r, entry);
	free(r);
}

/*
 * kernel_route_set() through a resilient group.  A kernel that refuses
 * the first group (no nexthop objects, or no resilient groups) leaves
 * relayd with plain multipath routes: 1 then.
 */
static int
nh_route_set(struct router *rt, int i, struct sockaddr_storage *gw,
    unsigned int n, int prio)
{
	struct nh_route		*r;
	struct nh_obj		*old[NH_MEMBERS];
	unsigned int		 j, nold;
	int			 table = rt->conf.rtable == 0 ? RT_TABLE_MAIN :
				    rt->conf.rtable;

	TAILQ_FOREACH(r, &nh_routes, entry)
		if (r->af == rt->conf.af && r->table == table &&
		    r->plen == rt->conf.prefixlen[i] &&
		    nh_addr_eq(&r->dst, &rt->conf.routes[i]))
			break;
	if (n == 0) {
		if (rtnl_route_del(rt, i) == -1)
			return (-1);
		if (r != NULL)
			nh_route_free(r);
		return (0);
	}
	if (r == NULL) {
		if ((r = calloc(1, sizeof(*r))) == NULL)
			return (-1);
		r->af = rt->conf.af;
		r->table = table;
		r->plen = rt->conf.prefixlen[i];
		r->dst = rt->conf.routes[i];
		TAILQ_INSERT_TAIL(&nh_routes, r, entry);
	}
	/* the new members first; the old are let go once the group is set */
	nold = r->n;
	memcpy(old, r->members, nold * sizeof(old[0]));
	for (j = 0; j < n; j++)
		if ((r->members[j] = nh_obj_get(&gw[j],
		    rt->conf.proto)) == NULL)
			break;
	r->n = j;
	if (j == n && nh_group_set(r, rt) == 0 &&
	    nh_route_put(r, rt, i, prio) == 0) {
		for (j = 0; j < nold; j++)
			nh_obj_put(old[j]);
		return (0);
	}
	/* as it was */
	for (j = 0; j < r->n; j++)
		nh_obj_put(r->members[j]);
	memcpy(r->members, old, nold * sizeof(old[0]));
	r->n = nold;
	if (r->gid == 0 && (errno == EOPNOTSUPP || errno == EINVAL ||
	    errno == EAFNOSUPPORT)) {
		log_warn("router %s: the kernel has no resilient nexthop "
		    "groups: plain multipath routes from now on, which move "
		    "flows of gateways that stay when one comes or goes",
		    rt->conf.name);
		nh_route_free(r);
		nh_absent = 1;
		return (1);
	}
	log_warn("router %s: cannot set a route", rt->conf.name);
	if (r->gid == 0)
		nh_route_free(r);
	return (-1);
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
	struct nlmsghdr		*del;
	struct nlattr		*a;

	if (rtm->rtm_protocol < ROUTER_PROTO ||
	    rtm->rtm_protocol > ROUTER_PROTO_MAX ||
	    st->n == (int)nitems(st->msgs))
		return (MNL_CB_OK);
	/* what names the route, not its nexthops (a group's too) */
	del = mnl_nlmsg_put_header(st->msgs[st->n++]);
	memcpy(mnl_nlmsg_put_extra_header(del, sizeof(*rtm)), rtm,
	    sizeof(*rtm));
	mnl_attr_for_each(a, nlh, sizeof(*rtm))
		switch (mnl_attr_get_type(a)) {
		case RTA_DST:
		case RTA_TABLE:
		case RTA_PRIORITY:
			if (mnl_attr_get_payload_len(a) <= 16)
				mnl_attr_put(del, mnl_attr_get_type(a),
				    mnl_attr_get_payload_len(a),
				    mnl_attr_get_payload(a));
			break;
		}
	return (MNL_CB_OK);
}

/* relayd's nexthop objects, its groups first: what a killed one left. */
struct stale_nh {
	uint32_t	 ids[2][1024];	/* groups, then the others */
	int		 n[2];
};

static int
nh_stale_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct stale_nh		*st = arg;
	const struct nhmsg	*nhm = mnl_nlmsg_get_payload(nlh);
	struct nlattr		*a;
	uint32_t		 id = 0;
	int			 group = 1;

	if (nhm->nh_protocol < ROUTER_PROTO ||
	    nhm->nh_protocol > ROUTER_PROTO_MAX)
		return (MNL_CB_OK);
	mnl_attr_for_each(a, nlh, sizeof(*nhm)) {
		if (mnl_attr_get_type(a) == NHA_ID &&
		    mnl_attr_validate(a, MNL_TYPE_U32) == 0)
			id = mnl_attr_get_u32(a);
		if (mnl_attr_get_type(a) == NHA_GATEWAY)
			group = 0;
	}
	if (id != 0 && st->n[!group] < (int)nitems(st->ids[0]))
		st->ids[!group][st->n[!group]++] = id;
	return (MNL_CB_OK);
}

/* A dump of type (family af, extra header hlen) through cb. */
static void
rtnl_dump(int type, int af, size_t hlen, mnl_cb_t cb, void *arg)
{
	char			 buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr		*nlh;
	unsigned char		*h;
	uint32_t		 seq, portid;
	ssize_t			 len;

	if (rtnl_talk_open() == -1)
		return;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq = arc4random();
	/* the family is the first byte of rtmsg and nhmsg alike */
	h = mnl_nlmsg_put_extra_header(nlh, hlen);
	h[0] = af;
	if (mnl_socket_sendto(nl_route, nlh, nlh->nlmsg_len) == -1)
		return;
	portid = mnl_socket_get_portid(nl_route);
	while ((len = mnl_socket_recvfrom(nl_route, buf, sizeof(buf))) > 0)
		if (mnl_cb_run(buf, len, seq, portid, cb, arg) <= MNL_CB_STOP)
			break;
}

void
kernel_route_stale(void)
{
	struct nlmsghdr		*nlh;
	struct stale		*st;
	struct stale_nh		*sn;
	int			 i, k;

	if ((st = calloc(1, sizeof(*st))) == NULL ||
	    (sn = calloc(1, sizeof(*sn))) == NULL)
		fatal("%s", __func__);
	rtnl_dump(RTM_GETROUTE, AF_INET, sizeof(struct rtmsg),
	    route_stale_cb, st);
	rtnl_dump(RTM_GETROUTE, AF_INET6, sizeof(struct rtmsg),
	    route_stale_cb, st);
	for (i = 0; i < st->n; i++) {
		nlh = (struct nlmsghdr *)st->msgs[i];
		nlh->nlmsg_type = RTM_DELROUTE;
		nlh->nlmsg_flags = 0;
		if (rtnl_talk(nlh) == 0)
			log_info("removed a route a previous relayd left "
			    "(protocol %d)", ((struct rtmsg *)
			    mnl_nlmsg_get_payload(nlh))->rtm_protocol);
	}
	/* a kernel without nexthop objects answers none */
	rtnl_dump(RTM_GETNEXTHOP, AF_UNSPEC, sizeof(struct nhmsg),
	    nh_stale_cb, sn);
	for (k = 0; k < 2; k++)
		for (i = 0; i < sn->n[k]; i++)
			(void)nh_del(sn->ids[k][i]);
	if (sn->n[0] + sn->n[1] > 0)
		log_info("removed %d nexthop objects a previous relayd left",
		    sn->n[0] + sn->n[1]);
	free(sn);
	free(st);
}

/*
 * announce: a route to the address, in its own table and protocol,
 * through a tun device the parent alone holds open.  Nothing is sent
 * through it: its routes are for a BGP daemon to learn.  The kernel
 * removes the device, and its routes, when the parent's descriptor
 * closes, so a relayd that crashed or was killed announces nothing.
 */
static int		 ann_fd = -1;
static unsigned int	 ann_ifindex;

static int
ann_device(void)
{
	struct ifreq	 ifr;
	int		 s;

	if (ann_fd != -1)
		return (0);
	if ((ann_fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC)) == -1) {
		log_warn("announce: /dev/net/tun");
		return (-1);
	}
	memset(&ifr, 0, sizeof(ifr));
	(void)strlcpy(ifr.ifr_name, "relayd%d", sizeof(ifr.ifr_name));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	if (ioctl(ann_fd, TUNSETIFF, &ifr) == -1 ||
	    (s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1) {
		log_warn("announce: a tun device");
		goto fail;
	}
	ifr.ifr_flags = IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) == -1 ||
	    (ann_ifindex = if_nametoindex(ifr.ifr_name)) == 0) {
		log_warn("announce: %s", ifr.ifr_name);
		close(s);
		goto fail;
	}
	close(s);
	log_debug("announce: device %s", ifr.ifr_name);
	return (0);
 fail:
	close(ann_fd);
	ann_fd = -1;
	return (-1);
}

int
kernel_announce(struct sockaddr_storage *ss, int on, int table)
{
	char		 buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr	*nlh;

	if (on && ann_device() == -1)
		return (-1);
	if (ann_fd == -1)
		return (0);	/* no device, no route */
	nlh = rtnl_route_hdr(buf, on ? RTM_NEWROUTE : RTM_DELROUTE,
	    on ? NLM_F_CREATE | NLM_F_REPLACE : 0, ss,
	    ss->ss_family == AF_INET ? 32 : 128, table, ANNOUNCE_PROTO,
	    RT_SCOPE_LINK);
	mnl_attr_put_u32(nlh, RTA_OIF, ann_ifindex);
	if (rtnl_talk(nlh) == -1 && (on || errno != ESRCH)) {
		log_warn("announce: cannot %s a route",
		    on ? "add" : "remove");
		return (-1);
	}
	return (0);
}

void
kernel_announce_cleanup(void)
{
	if (ann_fd != -1)
		close(ann_fd);
	ann_fd = -1;
}
