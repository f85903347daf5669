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
 * Redirections on Linux (nftables), for the parent; routers are
 * kernel_rtnl.c's.
 *
 * Redirections live in one nftables table of relayd's own, inet
 * relayd_rdr, written through libnftables: every change is one nft
 * command buffer, which libnftables sends as one netlink batch, so the
 * kernel applies it whole or not at all.  Per redirection N:
 *
 *	chain rdrN, rdrN_out	the DNAT rules, one per virtual address,
 *				for connections from the network and from
 *				the host itself, replaced whole when its
 *				hosts change
 *	counter rdrN_new	connections redirected (nat chains see only
 *				a flow's first packet)
 *	counter rdrN		packets and bytes of those flows, both ways
 *	ct timeout rdrN_*	session timeout, per protocol and family
 *	map stickyN_4/_6	sticky-address: client -> host, with timeouts
 *
 * A redirected flow carries the conntrack mark RDR_CTMARK + N: the
 * flows chains count it and set the pftag mark from it, and the number
 * of its conntrack entries is the redirection's states.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <nftables/libnftables.h>

#include "relayd.h"

#define NFT_TABLE	"inet relayd_rdr"
#define NFT_FWDTABLE	"netdev relayd_rdr"	/* route to */
#define RDR_TABLE(r)	((r)->conf.routeif[0] != '\0' ? NFT_FWDTABLE : NFT_TABLE)
#define RDR_FWD(r)	((r)->conf.routeif[0] != '\0')

static struct nft_ctx	*nft;
static struct mnl_socket *nl_ct;
static int		 quiet;		/* errors are no news */

int
kernel_available(void)
{
	return (1);
}

/* A growing buffer of nft commands. */
struct cmdbuf {
	char	*buf;
	size_t	 len;
	FILE	*fp;
};

static void
cmd_open(struct cmdbuf *cb)
{
	cb->buf = NULL;
	cb->len = 0;
	if ((cb->fp = open_memstream(&cb->buf, &cb->len)) == NULL)
		fatal("%s", __func__);
}

static void
cmd_add(struct cmdbuf *cb, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	(void)vfprintf(cb->fp, fmt, ap);
	va_end(ap);
}

/*
 * libnftables opens its netlink socket without close-on-exec: every
 * child relayd starts (the privsep processes, check scripts) would get
 * it.  Mark every netlink socket of the parent close-on-exec.
 */
static void
netlink_cloexec(void)
{
	DIR		*d;
	struct dirent	*de;
	const char	*errstr;
	socklen_t	 len;
	int		 fd, dom, fl;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		fd = strtonum(de->d_name, 3, INT_MAX, &errstr);
		if (errstr != NULL || fd == dirfd(d))
			continue;
		len = sizeof(dom);
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) == -1 ||
		    dom != AF_NETLINK ||
		    (fl = fcntl(fd, F_GETFD)) == -1 || (fl & FD_CLOEXEC))
			continue;
		(void)fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
	}
	closedir(d);
}

/* Run what cb holds as one transaction; its output, if out. */
static int
cmd_run(struct cmdbuf *cb, char **out)
{
	const char	*o;
	int		 ret;

	if (fclose(cb->fp) != 0)
		fatal("%s", __func__);
	if (nft == NULL) {
		if ((nft = nft_ctx_new(NFT_CTX_DEFAULT)) == NULL)
			fatalx("%s: nft_ctx_new", __func__);
		if (nft_ctx_buffer_output(nft) != 0 ||
		    nft_ctx_buffer_error(nft) != 0)
			fatalx("%s: nft buffers", __func__);
	}
	/* what changes, not what is read */
	if (out == NULL && cb->len > 0 && !quiet) {
		cb->buf[cb->len - 1] = '\0';
		log_debug("nftables: %s", cb->buf);
		cb->buf[cb->len - 1] = '\n';
	}
	ret = nft_run_cmd_from_buffer(nft, cb->buf);
	/* it may have opened a socket again */
	netlink_cloexec();
	if (ret != 0) {
		if (!quiet)
			log_warnx("nftables: %s",
			    nft_ctx_get_error_buffer(nft));
	} else if (out != NULL) {
		o = nft_ctx_get_output_buffer(nft);
		if ((*out = strdup(o != NULL ? o : "")) == NULL)
			fatal("%s", __func__);
	}
	/* getting a buffer empties it: none grows */
	(void)nft_ctx_get_output_buffer(nft);
	(void)nft_ctx_get_error_buffer(nft);
	free(cb->buf);
	cb->buf = NULL;
	return (ret == 0 ? 0 : -1);
}

/* Names from relayd.conf go in nft strings: nothing that ends one. */
static const char *
nft_str(const char *s, char *buf, size_t len)
{
	size_t	 i;

	for (i = 0; s[i] != '\0' && i < len - 1; i++)
		buf[i] = (s[i] == '"' || s[i] == '\\' || s[i] < ' ' ||
		    s[i] == 0x7f) ? '_' : s[i];
	buf[i] = '\0';
	return (buf);
}

static const char *
nft_addr(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	const void	*a;

	if (ss->ss_family == AF_INET)
		a = &((const struct sockaddr_in *)ss)->sin_addr;
	else
		a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
	if (inet_ntop(ss->ss_family, a, buf, len) == NULL)
		(void)strlcpy(buf, "?", len);
	return (buf);
}

static int
proto_has_ports(int proto)
{
	return (proto == IPPROTO_TCP || proto == IPPROTO_UDP ||
	    proto == IPPROTO_SCTP || proto == IPPROTO_DCCP ||
	    proto == IPPROTO_UDPLITE);
}

/* The ct timeout object of a virtual address, or NULL. */
static const char *
rdr_timeout_name(struct rdr_virt *v, char *buf, size_t len, objid_t id)
{
	if (v->proto != IPPROTO_TCP && v->proto != IPPROTO_UDP)
		return (NULL);
	(void)snprintf(buf, len, "rdr%u_%s%d", id,
	    v->proto == IPPROTO_TCP ? "tcp" : "udp",
	    v->ss.ss_family == AF_INET ? 4 : 6);
	return (buf);
}

/* What selects a virtual address's packets. */
static void
rdr_match(struct cmdbuf *cb, struct rdr_virt *v, int incoming)
{
	char	 a[INET6_ADDRSTRLEN], ifn[sizeof(v->ifname)];

	if (incoming && v->ifname[0] != '\0')
		cmd_add(cb, "iifname \"%s\" ",
		    nft_str(v->ifname, ifn, sizeof(ifn)));
	cmd_add(cb, "%s daddr %s meta l4proto %d",
	    v->ss.ss_family == AF_INET ? "ip" : "ip6",
	    nft_addr(&v->ss, a, sizeof(a)), v->proto);
	if (proto_has_ports(v->proto)) {
		if (v->port_high > v->port)
			cmd_add(cb, " th dport %u-%u", v->port, v->port_high);
		else
			cmd_add(cb, " th dport %u", v->port);
	}
}

/* The families of a redirection's virtual addresses: 1 inet, 2 inet6. */
static int
rdr_families(struct rdr *rdr)
{
	int	 i, f = 0;

	for (i = 0; i < rdr->conf.nvirts; i++)
		f |= rdr->conf.virts[i].ss.ss_family == AF_INET ? 1 : 2;
	return (f);
}

/* A redirection's objects: counters, timeouts, sticky maps, its chain. */
static void
rdr_objects(struct cmdbuf *cb, struct rdr *rdr)
{
	struct rdr_virt	*v;
	char		 tn[32];
	int		 i, bit, done = 0, f = rdr_families(rdr);
	int		 t = rdr->conf.timeout > 0 ? rdr->conf.timeout : 1;

	cmd_add(cb, "counter rdr%u_new {\n}\ncounter rdr%u {\n}\n",
	    rdr->conf.id, rdr->conf.id);
	cmd_add(cb, "chain rdr%u {\n}\nchain rdr%u_out {\n}\n", rdr->conf.id,
	    rdr->conf.id);
	for (i = 0; i < rdr->conf.nvirts; i++) {
		v = &rdr->conf.virts[i];
		if (rdr_timeout_name(v, tn, sizeof(tn), rdr->conf.id) == NULL)
			continue;
		bit = 1 << ((v->proto == IPPROTO_TCP) * 2 +
		    (v->ss.ss_family == AF_INET6));
		if (done & bit)
			continue;
		done |= bit;
		cmd_add(cb, "ct timeout %s {\nprotocol %s; l3proto %s;\n"
		    "policy = { %s: %d }\n}\n", tn,
		    v->proto == IPPROTO_TCP ? "tcp" : "udp",
		    v->ss.ss_family == AF_INET ? "ip" : "ip6",
		    v->proto == IPPROTO_TCP ? "established" : "replied", t);
	}
	if ((rdr->conf.flags & F_STICKY) == 0)
		return;
	for (i = 4; i <= 6; i += 2)
		if (f & (i == 4 ? 1 : 2))
			cmd_add(cb, "map sticky%u_%d {\ntype ipv%d_addr : "
			    "ipv%d_addr; flags dynamic,timeout; timeout %ds;"
			    "\n}\n", rdr->conf.id, i, i, i, t);
}

/* After DNAT: a redirection's counter, tag and sticky addresses. */
static void
rdr_flows(struct cmdbuf *cb, struct rdr *rdr)
{
	int	 i, f = rdr_families(rdr);

	cmd_add(cb, "ct mark 0x%08x counter name \"rdr%u\"",
	    RDR_CTMARK + rdr->conf.id, rdr->conf.id);
	if (rdr->conf.tagmark != 0)
		cmd_add(cb, " meta mark set 0x%08x", rdr->conf.tagmark);
	cmd_add(cb, "\n");
	if ((rdr->conf.flags & F_STICKY) == 0)
		return;
	for (i = 4; i <= 6; i += 2)
		if (f & (i == 4 ? 1 : 2))
			cmd_add(cb, "ct state new ct mark 0x%08x update "
			    "@sticky%u_%d { %s saddr : %s daddr }\n",
			    RDR_CTMARK + rdr->conf.id, rdr->conf.id, i,
			    i == 4 ? "ip" : "ip6", i == 4 ? "ip" : "ip6");
}

/* The hosts of family af: how many, the first, and a map over them. */
static unsigned int
hosts_count(struct sockaddr_storage *hosts, unsigned int n, int af)
{
	unsigned int	 i, nf = 0;

	for (i = 0; i < n; i++)
		nf += hosts[i].ss_family == af;
	return (nf);
}

static struct sockaddr_storage *
hosts_first(struct sockaddr_storage *hosts, unsigned int n, int af)
{
	unsigned int	 i;

	for (i = 0; i < n; i++)
		if (hosts[i].ss_family == af)
			return (&hosts[i]);
	return (NULL);
}

/* " map { 0 : A, 1 : B }": index to address, for numgen or jhash. */
static void
hosts_map(struct cmdbuf *cb, struct sockaddr_storage *hosts, unsigned int n,
    int af)
{
	char		 a[INET6_ADDRSTRLEN];
	unsigned int	 i, nf = 0;

	cmd_add(cb, " map { ");
	for (i = 0; i < n; i++) {
		if (hosts[i].ss_family != af)
			continue;
		cmd_add(cb, "%s%u : %s", nf > 0 ? ", " : "", nf,
		    nft_addr(&hosts[i], a, sizeof(a)));
		nf++;
	}
	cmd_add(cb, " }");
}

/*
 * route to (direct server return): a table of the netdev family, where
 * a base chain per virtual address, in the ingress of its interface,
 * forwards the packets unchanged to a host's link-layer address on the
 * route to interface (nftables' fwd).  There is no connection tracking
 * there: a connection's packets go to the host a hash of its source
 * address and port chooses.
 */
static void
rdr_fwd_setup(struct cmdbuf *cb, struct rdrlist *rdrs)
{
	struct rdr	*rdr;
	char		 ifn[16];
	int		 i, any = 0;

	TAILQ_FOREACH(rdr, rdrs, entry) {
		if (!RDR_FWD(rdr))
			continue;
		if (!any++)
			cmd_add(cb, "table %s {\n", NFT_FWDTABLE);
		cmd_add(cb, "counter rdr%u_new {\n}\ncounter rdr%u {\n}\n",
		    rdr->conf.id, rdr->conf.id);
		for (i = 0; i < rdr->conf.nvirts; i++)
			cmd_add(cb, "chain rdr%u_v%d {\ntype filter hook ingress "
			    "device \"%s\" priority 0; policy accept;\n}\n",
			    rdr->conf.id, i, nft_str(rdr->conf.virts[i].ifname,
			    ifn, sizeof(ifn)));
	}
	if (any)
		cmd_add(cb, "}\n");
}

/* The rules of a route to redirection: forward to one of n hosts. */
static void
rdr_fwd_rules(struct cmdbuf *cb, struct rdr *rdr,
    struct sockaddr_storage *hosts, unsigned int n)
{
	struct rdr_virt	*v;
	char		 a[INET6_ADDRSTRLEN], ifn[16];
	const char	*ip;
	unsigned int	 nf;
	int		 i, af;

	for (i = 0; i < rdr->conf.nvirts; i++) {
		v = &rdr->conf.virts[i];
		af = v->ss.ss_family;
		cmd_add(cb, "flush chain %s rdr%u_v%d\n", NFT_FWDTABLE,
		    rdr->conf.id, i);
		if ((nf = hosts_count(hosts, n, af)) == 0)
			continue;
		ip = af == AF_INET ? "ip" : "ip6";
		/* a connection's first packet, counted */
		if (v->proto == IPPROTO_TCP) {
			cmd_add(cb, "add rule %s rdr%u_v%d ", NFT_FWDTABLE,
			    rdr->conf.id, i);
			rdr_match(cb, v, 0);
			cmd_add(cb, " tcp flags & (syn | ack) == syn counter "
			    "name \"rdr%u_new\"\n", rdr->conf.id);
		}
		cmd_add(cb, "add rule %s rdr%u_v%d ", NFT_FWDTABLE,
		    rdr->conf.id, i);
		rdr_match(cb, v, 0);
		cmd_add(cb, " counter name \"rdr%u\" fwd %s to ", rdr->conf.id,
		    ip);
		if (nf == 1)
			cmd_add(cb, "%s", nft_addr(hosts_first(hosts, n, af), a,
			    sizeof(a)));
		else {
			if (rdr->conf.mode == RELAY_DSTMODE_SRCHASH ||
			    (rdr->conf.flags & F_STICKY) ||
			    !proto_has_ports(v->proto))
				cmd_add(cb, "jhash %s saddr", ip);
			else
				cmd_add(cb, "jhash %s saddr . th sport", ip);
			cmd_add(cb, " mod %u seed 0x%08x", nf, rdr->conf.seed);
			hosts_map(cb, hosts, n, af);
		}
		cmd_add(cb, " device \"%s\"\n", nft_str(rdr->conf.routeif,
		    ifn, sizeof(ifn)));
	}
}

static void	 rdr_rules(struct cmdbuf *, struct rdr *,
		    struct sockaddr_storage *, unsigned int, int);

/*
 * relayd's table for these redirections, every rule chain empty (pfe
 * fills them as hosts come up), in place of whatever table was there:
 * one transaction.
 */
int
kernel_rdr_setup(struct rdrlist *rdrs)
{
	struct cmdbuf	 cb;
	struct rdr	*rdr;
	struct rdr_virt	*v;
	char		 tn[32];
	int		 i, dir;
	const char	*hook[] = { "prerouting", "output" };

	cmd_open(&cb);
	/* "add" makes sure there is one to delete */
	cmd_add(&cb, "add table %s\ndelete table %s\n", NFT_TABLE, NFT_TABLE);
	cmd_add(&cb, "add table %s\ndelete table %s\n", NFT_FWDTABLE,
	    NFT_FWDTABLE);
	rdr_fwd_setup(&cb, rdrs);
	cmd_add(&cb, "table %s {\n", NFT_TABLE);
	TAILQ_FOREACH(rdr, rdrs, entry)
		if (!RDR_FWD(rdr))
			rdr_objects(&cb, rdr);
	for (dir = 0; dir < 2; dir++) {
		/* the redirections: DNAT */
		cmd_add(&cb, "chain %s {\ntype nat hook %s priority %s; "
		    "policy accept;\n", hook[dir], hook[dir],
		    dir == 0 ? "dstnat" : "-100");
		TAILQ_FOREACH(rdr, rdrs, entry)
			if (!RDR_FWD(rdr))
				cmd_add(&cb, "jump rdr%u%s\n", rdr->conf.id,
				    dir == 0 ? "" : "_out");
		cmd_add(&cb, "}\n");
		/* before conntrack: each new flow's timeouts */
		cmd_add(&cb, "chain timeouts_%s {\ntype filter hook %s "
		    "priority raw; policy accept;\n", dir == 0 ? "in" : "out",
		    hook[dir]);
		TAILQ_FOREACH(rdr, rdrs, entry)
			for (i = 0; i < rdr->conf.nvirts; i++) {
				v = &rdr->conf.virts[i];
				if (RDR_FWD(rdr) ||
				    rdr_timeout_name(v, tn, sizeof(tn),
				    rdr->conf.id) == NULL)
					continue;
				rdr_match(&cb, v, dir == 0);
				cmd_add(&cb, " ct timeout set \"%s\"\n", tn);
			}
		cmd_add(&cb, "}\n");
		cmd_add(&cb, "chain flows_%s {\ntype filter hook %s "
		    "priority -99; policy accept;\n", dir == 0 ? "in" : "out",
		    hook[dir]);
		TAILQ_FOREACH(rdr, rdrs, entry)
			if (!RDR_FWD(rdr))
				rdr_flows(&cb, rdr);
		cmd_add(&cb, "}\n");
	}
	cmd_add(&cb, "}\n");
	/* a reload: in the same transaction, the hosts they sent to */
	TAILQ_FOREACH(rdr, rdrs, entry)
		if (rdr->rd_ninit > 0)
			rdr_rules(&cb, rdr, rdr->rd_init, rdr->rd_ninit, 0);
	return (cmd_run(&cb, NULL));
}

/* The DNAT target over n hosts, as the redirection's mode chooses. */
static void
rdr_target(struct cmdbuf *cb, struct rdr *rdr, struct rdr_virt *v,
    struct sockaddr_storage *hosts, unsigned int n)
{
	int		 af = v->ss.ss_family;
	const char	*ip = af == AF_INET ? "ip" : "ip6";
	char		 a[INET6_ADDRSTRLEN];
	unsigned int	 nf = hosts_count(hosts, n, af);
	int		 port;

	/* a range to the same first port keeps each port */
	port = (v->port_high > v->port && rdr->conf.port == v->port) ? 0 :
	    rdr->conf.port;
	if (nf == 1) {
		nft_addr(hosts_first(hosts, n, af), a, sizeof(a));
		if (port == 0)
			cmd_add(cb, "dnat %s to %s\n", ip, a);
		else if (af == AF_INET)
			cmd_add(cb, "dnat ip to %s:%d\n", a, port);
		else
			cmd_add(cb, "dnat ip6 to [%s]:%d\n", a, port);
		return;
	}
	cmd_add(cb, "dnat %s to ", ip);
	switch (rdr->conf.mode) {
	case RELAY_DSTMODE_RANDOM:
		cmd_add(cb, "numgen random mod %u", nf);
		break;
	case RELAY_DSTMODE_SRCHASH:
		cmd_add(cb, "jhash %s saddr mod %u seed 0x%08x", ip, nf,
		    rdr->conf.seed);
		break;
	default:
		cmd_add(cb, "numgen inc mod %u", nf);
		break;
	}
	hosts_map(cb, hosts, n, af);
	if (port != 0)
		cmd_add(cb, " : %d", port);
	cmd_add(cb, "\n");
}


/* The rules of one virtual address, in the chain of incoming or local. */
static void
rdr_virt_rules(struct cmdbuf *cb, struct rdr *rdr, struct rdr_virt *v,
    struct sockaddr_storage *hosts, unsigned int n, int incoming)
{
	char		 name[MAX_NAME_SIZE];
	const char	*ip = v->ss.ss_family == AF_INET ? "ip" : "ip6";
	const char	*chain = incoming ? "" : "_out";
	char		 fam = v->ss.ss_family == AF_INET ? '4' : '6';

	if (rdr->conf.flags & F_STICKY) {
		/* a known client: its host */
		cmd_add(cb, "add rule %s rdr%u%s ", NFT_TABLE, rdr->conf.id,
		    chain);
		rdr_match(cb, v, incoming);
		cmd_add(cb, " %s saddr @sticky%u_%c counter name \"rdr%u_new\" "
		    "ct mark set 0x%08x", ip, rdr->conf.id, fam, rdr->conf.id,
		    RDR_CTMARK + rdr->conf.id);
		if (v->pflog)
			cmd_add(cb, " log prefix \"relayd/%s: \" group 0",
			    nft_str(rdr->conf.name, name, sizeof(name)));
		cmd_add(cb, " dnat %s to %s saddr map @sticky%u_%c", ip, ip,
		    rdr->conf.id, fam);
		if (!(v->port_high > v->port && rdr->conf.port == v->port))
			cmd_add(cb, " : %d", rdr->conf.port);
		cmd_add(cb, "\n");
	}
	cmd_add(cb, "add rule %s rdr%u%s ", NFT_TABLE, rdr->conf.id, chain);
	rdr_match(cb, v, incoming);
	cmd_add(cb, " counter name \"rdr%u_new\" ct mark set 0x%08x ",
	    rdr->conf.id, RDR_CTMARK + rdr->conf.id);
	if (v->pflog)
		cmd_add(cb, "log prefix \"relayd/%s: \" group 0 ",
		    nft_str(rdr->conf.name, name, sizeof(name)));
	rdr_target(cb, rdr, v, hosts, n);
}

/*
 * The rules of a redirection, for these hosts (none: no rule), in place
 * of its old ones: one transaction, so no connection ever meets an
 * empty or half map.  forget: the sticky clients go too (a host left).
 */
int
kernel_rdr_rules(struct rdr *rdr, struct sockaddr_storage *hosts,
    unsigned int n, int forget)
{
	struct cmdbuf	 cb;

	cmd_open(&cb);
	rdr_rules(&cb, rdr, hosts, n, forget);
	return (cmd_run(&cb, NULL));
}

/* The commands that make a redirection's rules send to these hosts. */
static void
rdr_rules(struct cmdbuf *cb, struct rdr *rdr, struct sockaddr_storage *hosts,
    unsigned int n, int forget)
{
	int		 i, af, seen[2] = { 0, 0 };

	if (RDR_FWD(rdr)) {
		rdr_fwd_rules(cb, rdr, hosts, n);
		return;
	}
	cmd_add(cb, "flush chain %s rdr%u\nflush chain %s rdr%u_out\n",
	    NFT_TABLE, rdr->conf.id, NFT_TABLE, rdr->conf.id);
	for (i = 0; i < rdr->conf.nvirts; i++)
		seen[rdr->conf.virts[i].ss.ss_family == AF_INET6] = 1;
	if ((rdr->conf.flags & F_STICKY) && forget)
		for (af = 0; af < 2; af++)
			if (seen[af])
				cmd_add(cb, "flush map %s sticky%u_%d\n",
				    NFT_TABLE, rdr->conf.id, af ? 6 : 4);
	for (i = 0; i < rdr->conf.nvirts; i++) {
		if (hosts_count(hosts, n, rdr->conf.virts[i].ss.ss_family) == 0)
			continue;
		/* from the network (on its interface), from the host */
		rdr_virt_rules(cb, rdr, &rdr->conf.virts[i], hosts, n, 1);
		rdr_virt_rules(cb, rdr, &rdr->conf.virts[i], hosts, n, 0);
	}
}

/* conntrack entries of a mark: a dump, counted. */
static int
ct_count_cb(const struct nlmsghdr *nlh, void *arg)
{
	(void)nlh;
	(*(uint64_t *)arg)++;
	return (MNL_CB_OK);
}

static int
ct_count(uint32_t mark, uint64_t *count)
{
	char			 buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr		*nlh;
	struct nfgenmsg		*nfg;
	uint32_t		 seq, portid;
	ssize_t			 len;
	int			 ret;

	*count = 0;
	if (nl_ct == NULL) {
		if ((nl_ct = mnl_socket_open2(NETLINK_NETFILTER,
		    SOCK_CLOEXEC)) == NULL)
			return (-1);
		if (mnl_socket_bind(nl_ct, 0, MNL_SOCKET_AUTOPID) == -1) {
			mnl_socket_close(nl_ct);
			nl_ct = NULL;
			return (-1);
		}
	}
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_GET;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq = time(NULL);
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_UNSPEC;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = 0;
	mnl_attr_put_u32(nlh, CTA_MARK, htonl(mark));
	mnl_attr_put_u32(nlh, CTA_MARK_MASK, htonl(0xffffffff));
	if (mnl_socket_sendto(nl_ct, nlh, nlh->nlmsg_len) == -1)
		return (-1);
	portid = mnl_socket_get_portid(nl_ct);
	while ((len = mnl_socket_recvfrom(nl_ct, buf, sizeof(buf))) > 0) {
		ret = mnl_cb_run(buf, len, seq, portid, ct_count_cb, count);
		if (ret <= MNL_CB_STOP)
			return (ret == MNL_CB_STOP ? 0 : -1);
	}
	return (-1);
}

/* "packets N bytes M" after the counter's name in nft's listing. */
static void
counter_read(const char *out, const char *name, uint64_t *packets,
    uint64_t *bytes)
{
	char			 key[64];
	const char		*p;
	unsigned long long	 pk, by;

	(void)snprintf(key, sizeof(key), "counter %s {", name);
	if ((p = strstr(out, key)) == NULL ||
	    (p = strstr(p, "packets ")) == NULL ||
	    sscanf(p, "packets %llu bytes %llu", &pk, &by) != 2)
		return;
	if (packets != NULL)
		*packets = pk;
	if (bytes != NULL)
		*bytes = by;
}

int
kernel_rdr_stats(struct rdr *rdr, struct ctl_rdrstats *st)
{
	struct cmdbuf	 cb;
	char		*out = NULL, name[32];

	memset(st, 0, sizeof(*st));
	st->id = rdr->conf.id;
	cmd_open(&cb);
	cmd_add(&cb, "list counter %s rdr%u_new\nlist counter %s rdr%u\n",
	    RDR_TABLE(rdr), rdr->conf.id, RDR_TABLE(rdr), rdr->conf.id);
	if (cmd_run(&cb, &out) == -1)
		return (-1);
	(void)snprintf(name, sizeof(name), "rdr%u_new", rdr->conf.id);
	counter_read(out, name, &st->sessions, NULL);
	(void)snprintf(name, sizeof(name), "rdr%u", rdr->conf.id);
	counter_read(out, name, &st->packets, &st->bytes);
	free(out);
	/* route to: no connection tracking, no states */
	if (!RDR_FWD(rdr) &&
	    ct_count(RDR_CTMARK + rdr->conf.id, &st->states) == -1)
		log_debug("%s: conntrack dump: %s", __func__,
		    strerror(errno));
	return (0);
}

/*
 * No table of relayd's: not even one a killed relayd left.  Only a
 * table that is there is deleted: a relayd without redirections
 * changes nothing in nftables.
 */
void
kernel_rdr_cleanup(void)
{
	struct cmdbuf	 cb;
	char		*out = NULL;

	const char	*tables[] = { NFT_TABLE, NFT_FWDTABLE };
	size_t		 i;

	quiet = 1;
	for (i = 0; i < nitems(tables); i++) {
		cmd_open(&cb);
		cmd_add(&cb, "list table %s\n", tables[i]);
		if (cmd_run(&cb, &out) != 0)
			continue;
		free(out);
		cmd_open(&cb);
		cmd_add(&cb, "delete table %s\n", tables[i]);
		if (cmd_run(&cb, NULL) == 0)
			log_debug("nftables: table %s deleted", tables[i]);
	}
	quiet = 0;
}
