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
 * Redirections and the relays' limits per client source on Linux
 * (nftables), for the parent; routers are kernel_rtnl.c's.  The limits'
 * table is described further down, at kernel_limits_setup().
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

#include <ctype.h>
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

struct cmdbuf;
static void	 rdr_maps(struct cmdbuf *, struct rdr *, int);
static void	 rdr_fwd_objects(struct cmdbuf *, struct rdr *, int,
		    struct rdrlist *);
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

/*
 * An object of table: declared, in its table's block, with body, or
 * (del) deleted, outside it.
 */
static void
rdr_obj(struct cmdbuf *cb, int del, const char *table, const char *kind,
    const char *name, const char *body)
{
	if (del)
		cmd_add(cb, "delete %s %s %s\n", kind, table, name);
	else
		cmd_add(cb, "%s %s {\n%s}\n", kind, name, body);
}

/*
 * A redirection's objects: counters, timeouts, sticky maps, its chains;
 * declared, or (del) deleted.
 */
static void
rdr_objects(struct cmdbuf *cb, struct rdr *rdr, int del)
{
	struct rdr_virt	*v;
	char		 tn[32], n[32], body[128];
	int		 i, bit, done = 0, f = rdr_families(rdr);
	int		 t = rdr->conf.timeout > 0 ? rdr->conf.timeout : 1;
	objid_t		 id = rdr->conf.id;

	(void)snprintf(n, sizeof(n), "rdr%u_new", id);
	rdr_obj(cb, del, NFT_TABLE, "counter", n, "");
	(void)snprintf(n, sizeof(n), "rdr%u", id);
	rdr_obj(cb, del, NFT_TABLE, "counter", n, "");
	rdr_obj(cb, del, NFT_TABLE, "chain", n, "");
	(void)snprintf(n, sizeof(n), "rdr%u_out", id);
	rdr_obj(cb, del, NFT_TABLE, "chain", n, "");
	for (i = 0; i < rdr->conf.nvirts; i++) {
		v = &rdr->conf.virts[i];
		if (rdr_timeout_name(v, tn, sizeof(tn), id) == NULL)
			continue;
		bit = 1 << ((v->proto == IPPROTO_TCP) * 2 +
		    (v->ss.ss_family == AF_INET6));
		if (done & bit)
			continue;
		done |= bit;
		(void)snprintf(body, sizeof(body), "protocol %s; l3proto %s;\n"
		    "policy = { %s: %d }\n",
		    v->proto == IPPROTO_TCP ? "tcp" : "udp",
		    v->ss.ss_family == AF_INET ? "ip" : "ip6",
		    v->proto == IPPROTO_TCP ? "established" : "replied", t);
		rdr_obj(cb, del, NFT_TABLE, "ct timeout", tn, body);
	}
	rdr_maps(cb, rdr, del);
	if ((rdr->conf.flags & F_STICKY) == 0)
		return;
	for (i = 4; i <= 6; i += 2) {
		if ((f & (i == 4 ? 1 : 2)) == 0)
			continue;
		(void)snprintf(n, sizeof(n), "sticky%u_%d", id, i);
		(void)snprintf(body, sizeof(body), "type ipv%d_addr : "
		    "ipv%d_addr; flags dynamic,timeout; timeout %ds;\n",
		    i, i, t);
		rdr_obj(cb, del, NFT_TABLE, "map", n, body);
	}
}

/*
 * The map of a redirection's hosts per family, from the index its
 * rules compute to an address: source-hash's Maglev table
 * (rdr_maglev()), else the hosts up in turn (hosts_fill()).  Never an
 * anonymous map in the rule: a packet can meet the rule of a commit
 * while the map that came with it is still empty, and leave without its
 * DNAT (a few connections in ten thousand, under a reload or a host
 * coming or going).  A named map's elements change with the commit.
 */
static void
rdr_maps(struct cmdbuf *cb, struct rdr *rdr, int del)
{
	char	 n[32], body[64];
	int	 i, f = rdr_families(rdr);
	int	 mag = rdr->conf.mode == RELAY_DSTMODE_SRCHASH;

	for (i = 4; i <= 6; i += 2) {
		if ((f & (i == 4 ? 1 : 2)) == 0)
			continue;
		(void)snprintf(n, sizeof(n), "%s%u_%d", mag ? "mag" : "hosts",
		    rdr->conf.id, i);
		(void)snprintf(body, sizeof(body), "typeof numgen inc mod %u "
		    ": ip%s daddr;\n", mag ? MAGLEV_SLOTS : 2,
		    i == 4 ? "" : "6");
		rdr_obj(cb, del, RDR_TABLE(rdr), "map", n, body);
	}
}

/*
 * A source-hash redirection's Maglev table of family af over these
 * hosts, in place of the old: its slots keep their hosts but those of a
 * host that went.  The map is typed as numgen's, which is jhash's type
 * too (an integer of 32 bits); a typeof of jhash itself is what nft 1.0
 * cannot print.
 */
static int
rdr_maglev(struct cmdbuf *cb, struct rdr *rdr, struct sockaddr_storage *hosts,
    unsigned int n, int af)
{
	struct sockaddr_storage	*fh;
	uint16_t		*slots;
	char			 a[INET6_ADDRSTRLEN];
	unsigned int		 i, nf = 0;

	if ((fh = calloc(n, sizeof(*fh))) == NULL ||
	    (slots = calloc(MAGLEV_SLOTS, sizeof(*slots))) == NULL) {
		free(fh);
		return (-1);
	}
	for (i = 0; i < n; i++)
		if (hosts[i].ss_family == af)
			fh[nf++] = hosts[i];
	if (maglev_fill(slots, MAGLEV_SLOTS, fh, nf, rdr->conf.seed) == -1) {
		free(slots);
		free(fh);
		return (-1);
	}
	cmd_add(cb, "flush map %s mag%u_%d\nadd element %s mag%u_%d { ",
	    RDR_TABLE(rdr), rdr->conf.id, af == AF_INET ? 4 : 6,
	    RDR_TABLE(rdr), rdr->conf.id, af == AF_INET ? 4 : 6);
	for (i = 0; i < MAGLEV_SLOTS; i++)
		cmd_add(cb, "%s%u : %s", i > 0 ? ", " : "", i,
		    nft_addr(&fh[slots[i]], a, sizeof(a)));
	cmd_add(cb, " }\n");
	free(slots);
	free(fh);
	return (0);
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

/*
 * The hosts map of family af (rdr_maps()): index to address, for numgen
 * or jhash, the hosts of that family in turn; emptied where there are
 * fewer than two, which the rules name themselves.
 */
static void
hosts_fill(struct cmdbuf *cb, struct rdr *rdr, struct sockaddr_storage *hosts,
    unsigned int n, int af)
{
	char		 a[INET6_ADDRSTRLEN];
	unsigned int	 i, nf = 0;
	int		 fam = af == AF_INET ? 4 : 6;

	cmd_add(cb, "flush map %s hosts%u_%d\n", RDR_TABLE(rdr), rdr->conf.id,
	    fam);
	if (hosts_count(hosts, n, af) < 2)
		return;
	cmd_add(cb, "add element %s hosts%u_%d { ", RDR_TABLE(rdr),
	    rdr->conf.id, fam);
	for (i = 0; i < n; i++) {
		if (hosts[i].ss_family != af)
			continue;
		cmd_add(cb, "%s%u : %s", nf > 0 ? ", " : "", nf,
		    nft_addr(&hosts[i], a, sizeof(a)));
		nf++;
	}
	cmd_add(cb, " }\n");
}

/* The maps of a redirection's families, for these hosts. */
static void
rdr_maps_fill(struct cmdbuf *cb, struct rdr *rdr,
    struct sockaddr_storage *hosts, unsigned int n)
{
	int	 i, af, f = rdr_families(rdr);

	for (i = 0; i < 2; i++) {
		if ((f & (i ? 2 : 1)) == 0)
			continue;
		af = i ? AF_INET6 : AF_INET;
		if (rdr->conf.mode != RELAY_DSTMODE_SRCHASH)
			hosts_fill(cb, rdr, hosts, n, af);
		else if (hosts_count(hosts, n, af) > 1 &&
		    rdr_maglev(cb, rdr, hosts, n, af) == -1)
			log_warn("redirection %s: no Maglev table",
			    rdr->conf.name);
	}
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
	int		 any = 0;

	TAILQ_FOREACH(rdr, rdrs, entry) {
		if (!RDR_FWD(rdr))
			continue;
		if (!any++)
			cmd_add(cb, "table %s {\n", NFT_FWDTABLE);
		rdr_fwd_objects(cb, rdr, 0, NULL);
	}
	if (any)
		cmd_add(cb, "}\n");
}

/* Does rdrs declare route to redirection rdr's base chain i the same? */
static int
rdr_fwd_kept(struct rdr *rdr, int i, struct rdrlist *rdrs)
{
	struct rdr	*n;

	TAILQ_FOREACH(n, rdrs, entry)
		if (RDR_FWD(n) && n->conf.id == rdr->conf.id)
			return (i < n->conf.nvirts &&
			    strcmp(n->conf.virts[i].ifname,
			    rdr->conf.virts[i].ifname) == 0);
	return (0);
}

/*
 * A route to redirection's objects: its counters, Maglev tables and a
 * base chain per virtual address in its interface's ingress; declared,
 * or (del) deleted, but for the base chains that rdrs, the
 * configuration a reload is about to run, declares the same.
 */
static void
rdr_fwd_objects(struct cmdbuf *cb, struct rdr *rdr, int del,
    struct rdrlist *rdrs)
{
	char	 n[32], body[128], ifn[16];
	int	 i;

	(void)snprintf(n, sizeof(n), "rdr%u_new", rdr->conf.id);
	rdr_obj(cb, del, NFT_FWDTABLE, "counter", n, "");
	(void)snprintf(n, sizeof(n), "rdr%u", rdr->conf.id);
	rdr_obj(cb, del, NFT_FWDTABLE, "counter", n, "");
	rdr_maps(cb, rdr, del);
	for (i = 0; i < rdr->conf.nvirts; i++) {
		if (del && rdr_fwd_kept(rdr, i, rdrs))
			continue;
		(void)snprintf(n, sizeof(n), "rdr%u_v%d", rdr->conf.id, i);
		(void)snprintf(body, sizeof(body), "type filter hook ingress "
		    "device \"%s\" priority 0; policy accept;\n",
		    nft_str(rdr->conf.virts[i].ifname, ifn, sizeof(ifn)));
		rdr_obj(cb, del, NFT_FWDTABLE, "chain", n, body);
	}
}

/*
 * A reload changes both tables in place: every rule goes, and every
 * object of old, the running configuration, but the base chains rdrs
 * declares the same, to which the transaction then adds rdrs'.  A base
 * chain replaced, with its table or alone, would leave an instant at
 * the commit: nftables runs a chain added at a hook before those of the
 * same priority already there, and reads the generation for each base
 * chain anew, so that a packet could meet the new chain before its rules
 * were there and the old one after its had gone, and leave without its
 * DNAT.
 */
static void
rdr_drop(struct cmdbuf *cb, struct rdrlist *old, struct rdrlist *rdrs)
{
	struct rdr	*rdr;
	int		 fwd = 0, nfwd = 0;

	cmd_add(cb, "add table %s\nflush table %s\n", NFT_TABLE, NFT_TABLE);
	TAILQ_FOREACH(rdr, old, entry) {
		if (RDR_FWD(rdr))
			fwd++;
		else
			rdr_objects(cb, rdr, 1);
	}
	TAILQ_FOREACH(rdr, rdrs, entry)
		nfwd += RDR_FWD(rdr);
	/* the route to table is there when old has one of those */
	if (fwd == 0)
		return;
	if (nfwd == 0) {
		cmd_add(cb, "delete table %s\n", NFT_FWDTABLE);
		return;
	}
	cmd_add(cb, "flush table %s\n", NFT_FWDTABLE);
	TAILQ_FOREACH(rdr, old, entry)
		if (RDR_FWD(rdr))
			rdr_fwd_objects(cb, rdr, 1, rdrs);
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

	rdr_maps_fill(cb, rdr, hosts, n);
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
		else if (rdr->conf.mode == RELAY_DSTMODE_SRCHASH)
			cmd_add(cb, "jhash %s saddr mod %u seed 0x%08x map "
			    "@mag%u_%d", ip, MAGLEV_SLOTS, rdr->conf.seed,
			    rdr->conf.id, af == AF_INET ? 4 : 6);
		else {
			if ((rdr->conf.flags & F_STICKY) ||
			    !proto_has_ports(v->proto))
				cmd_add(cb, "jhash %s saddr", ip);
			else
				cmd_add(cb, "jhash %s saddr . th sport", ip);
			cmd_add(cb, " mod %u seed 0x%08x map @hosts%u_%d", nf,
			    rdr->conf.seed, rdr->conf.id, af == AF_INET ? 4 : 6);
		}
		cmd_add(cb, " device \"%s\"\n", nft_str(rdr->conf.routeif,
		    ifn, sizeof(ifn)));
	}
}

static void	 rdr_rules(struct cmdbuf *, struct rdr *,
		    struct sockaddr_storage *, unsigned int, int);

/*
 * relayd's tables for these redirections, every rule chain empty (pfe
 * fills them as hosts come up): one transaction.  old NULL, in place of
 * whatever tables were there; else old is what they hold, the running
 * configuration's, and they change in place (rdr_drop()).
 */
int
kernel_rdr_setup(struct rdrlist *rdrs, struct rdrlist *old)
{
	struct cmdbuf	 cb;
	struct rdr	*rdr;
	struct rdr_virt	*v;
	char		 tn[32];
	int		 i, dir;
	const char	*hook[] = { "prerouting", "output" };

	cmd_open(&cb);
	if (old != NULL)
		rdr_drop(&cb, old, rdrs);
	else {
		/* "add" makes sure there is one to delete */
		cmd_add(&cb, "add table %s\ndelete table %s\n", NFT_TABLE,
		    NFT_TABLE);
		cmd_add(&cb, "add table %s\ndelete table %s\n", NFT_FWDTABLE,
		    NFT_FWDTABLE);
	}
	rdr_fwd_setup(&cb, rdrs);
	cmd_add(&cb, "table %s {\n", NFT_TABLE);
	TAILQ_FOREACH(rdr, rdrs, entry)
		if (!RDR_FWD(rdr))
			rdr_objects(&cb, rdr, 0);
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
	case RELAY_DSTMODE_SRCHASH:
		cmd_add(cb, "jhash %s saddr mod %u seed 0x%08x map @mag%u_%d",
		    ip, MAGLEV_SLOTS, rdr->conf.seed, rdr->conf.id,
		    af == AF_INET ? 4 : 6);
		break;
	case RELAY_DSTMODE_RANDOM:
	default:
		cmd_add(cb, "%s mod %u map @hosts%u_%d", rdr->conf.mode ==
		    RELAY_DSTMODE_RANDOM ? "numgen random" : "numgen inc", nf,
		    rdr->conf.id, af == AF_INET ? 4 : 6);
		break;
	}
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
	rdr_maps_fill(cb, rdr, hosts, n);
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

/*
 * Limits per client source of the relays (relay_limit.c keeps them in
 * the relay processes where this cannot).  One table of relayd's own,
 * inet relayd_limit, with one chain on the input hook that sees a
 * connection's first packet (ct state new) to a limited listener:
 *
 *	set ovl_T_4, _6		overload table T: sources, each with the
 *				table's expire as its timeout
 *	set r_R_rate_4, _6	relay R's connection rate per source (a
 *				limit per element, max-src-conn-rate N/S
 *				as a bucket of N refilled in S seconds)
 *	set r_R_conn_4, _6	relay R's connections per source (ct count)
 *	set r_R_query_4, _6	a dns relay R's queries per source
 *				(max-src-request-rate N/S burst B), each
 *				a datagram to its address and port
 *	counter c_R_conn, c_R_rate, c_R_ovl	connections refused, and why
 *	counter c_R_req		queries dropped
 *
 * A refused connection's SYN is dropped, as pf(4) drops the packets
 * that would make a state over a limit: a flood's client waits for
 * its retransmissions instead of being told to try again at once.
 * Sets and counters are named after
 * the relay and table names, so that a reload keeps what they hold:
 * each change adds what is missing, replaces the chain's rules, and
 * deletes only what the configuration no longer names.
 */
#define NFT_LIMTABLE	"inet relayd_limit"

/* names of the configuration in nftables: safe, and still apart */
static const char *
lim_name(const char *name, char *buf, size_t len)
{
	char		 safe[33];
	uint32_t	 h = 2166136261U;
	size_t		 i;

	for (i = 0; name[i] != '\0'; i++)
		h = (h ^ (uint8_t)name[i]) * 16777619U;
	for (i = 0; name[i] != '\0' && i < sizeof(safe) - 1; i++)
		safe[i] = isalnum((unsigned char)name[i]) ? name[i] : '_';
	safe[i] = '\0';
	(void)snprintf(buf, len, "%s_%08x", safe, h);
	return (buf);
}

/* "ip saddr" for f 4 or 6, masked to the source's prefix */
static const char *
lim_src(const struct relay_limits *l, int f, char *buf, size_t len)
{
	struct in6_addr	 m;
	char		 a[INET6_ADDRSTRLEN];
	int		 bits = f == 4 ? l->lim_prefix4 : l->lim_prefix6, i;

	if (bits == (f == 4 ? 32 : 128)) {
		(void)snprintf(buf, len, "%s saddr", f == 4 ? "ip" : "ip6");
		return (buf);
	}
	memset(&m, 0, sizeof(m));
	for (i = 0; i < 16 && bits > 0; i++, bits -= 8)
		m.s6_addr[i] = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
	(void)inet_ntop(f == 4 ? AF_INET : AF_INET6, &m, a, sizeof(a));
	(void)snprintf(buf, len, "%s saddr & %s", f == 4 ? "ip" : "ip6", a);
	return (buf);
}

/*
 * N per S seconds as nftables says a rate, an exact one where it can,
 * and its burst
 */
static void
lim_rate(struct cmdbuf *cb, uint64_t n, uint64_t s, uint64_t burst)
{

	if (n % s == 0)
		cmd_add(cb, "%llu/second", (unsigned long long)(n / s));
	else if (n * 60 % s == 0)
		cmd_add(cb, "%llu/minute", (unsigned long long)(n * 60 / s));
	else if (n * 3600 % s == 0 || n * 3600 / s > 0)
		cmd_add(cb, "%llu/hour",
		    (unsigned long long)(n * 3600 + s / 2) / s);
	else
		cmd_add(cb, "%llu/day",
		    (unsigned long long)((n * 86400 + s / 2) / s));
	cmd_add(cb, " burst %llu packets", (unsigned long long)burst);
}

/* A name the configuration has, one a line: the others are stale. */
static void
lim_keep(FILE *names, const char *kind, const char *name)
{
	fprintf(names, "%s %s\n", kind, name);
}

/* A set of sources of family f, their timeout in seconds (0: none). */
static void
lim_addset(struct cmdbuf *cb, FILE *names, const char *set, int f,
    uint32_t timeout)
{
	cmd_add(cb, "add set %s %s { type %s; flags dynamic%s; ", NFT_LIMTABLE,
	    set, f == 4 ? "ipv4_addr" : "ipv6_addr",
	    timeout > 0 ? ",timeout" : "");
	if (timeout > 0)
		cmd_add(cb, "timeout %us; ", timeout);
	cmd_add(cb, "size %u; }\n", RELAY_LIMIT_SOURCES);
	lim_keep(names, "set", set);
}

/* The rules of one family f (4, 6) of a limited relay's listener. */
static void
lim_rules(struct cmdbuf *cb, FILE *names, struct relay *rlay, int f)
{
	struct relay_limits	*l = &rlay->rl_conf.lim;
	char			 r[64], t[64], src[80], match[160];
	char			 a[INET6_ADDRSTRLEN], set[128], ovl[128];
	char			 add[256];
	const struct sockaddr_storage *ss = &rlay->rl_conf.ss;
	int			 any, q;

	lim_name(rlay->rl_conf.name, r, sizeof(r));
	lim_src(l, f, src, sizeof(src));
	any = ss->ss_family == AF_INET ?
	    ((const struct sockaddr_in *)ss)->sin_addr.s_addr == INADDR_ANY :
	    IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)ss)->
	    sin6_addr);
	/* an IPv6 listener on any address takes IPv4 clients too */
	if ((ss->ss_family == AF_INET && f == 6) ||
	    (ss->ss_family == AF_INET6 && f == 4 && !any))
		return;
	/* a connection's first packet; a dns relay's every datagram */
	q = RELAY_QUERYLIMITED(rlay);
	if (any)
		(void)snprintf(match, sizeof(match),
		    "meta nfproto %s %s dport %u%s",
		    f == 4 ? "ipv4" : "ipv6", q ? "udp" : "tcp",
		    rlay->rl_conf.port, q ? "" : " ct state new");
	else
		(void)snprintf(match, sizeof(match),
		    "%s daddr %s %s dport %u%s",
		    f == 4 ? "ip" : "ip6", nft_addr(ss, a, sizeof(a)),
		    q ? "udp" : "tcp", rlay->rl_conf.port,
		    q ? "" : " ct state new");
	if (q) {
		(void)snprintf(set, sizeof(set), "r_%s_query%u_%u_%u_%d", r,
		    l->lim_req, l->lim_reqint, l->lim_reqburst, f);
		lim_addset(cb, names, set, f, l->lim_reqint);
		cmd_add(cb, "add rule %s in %s update @%s { %s limit rate "
		    "over ", NFT_LIMTABLE, match, set, src);
		lim_rate(cb, l->lim_req, l->lim_reqint, l->lim_reqburst);
		cmd_add(cb, " } counter name c_%s_req drop\n", r);
		return;
	}
	add[0] = '\0';
	if (l->lim_overload[0] != '\0') {
		lim_name(l->lim_overload, t, sizeof(t));
		(void)snprintf(ovl, sizeof(ovl), "ovl_%s_%u_%d", t,
		    l->lim_expire, f);
		lim_addset(cb, names, ovl, f, l->lim_expire);
		cmd_add(cb, "add rule %s in %s %s @%s counter name c_%s_ovl "
		    "drop\n", NFT_LIMTABLE, match, src, ovl, r);
		(void)snprintf(add, sizeof(add), "add @%s { %s } ", ovl, src);
	}
	if (l->lim_rateint > 0) {
		(void)snprintf(set, sizeof(set), "r_%s_rate%u_%u_%d", r,
		    l->lim_rate, l->lim_rateint, f);
		lim_addset(cb, names, set, f, l->lim_rateint);
		cmd_add(cb, "add rule %s in %s update @%s { %s limit rate "
		    "over ", NFT_LIMTABLE, match, set, src);
		lim_rate(cb, l->lim_rate, l->lim_rateint, l->lim_rate);
		cmd_add(cb, " } %scounter name c_%s_rate drop\n", add, r);
	}
	if (l->lim_maxconn > 0) {
		(void)snprintf(set, sizeof(set), "r_%s_conn_%d", r, f);
		lim_addset(cb, names, set, f, 0);
		cmd_add(cb, "add rule %s in %s add @%s { %s ct count over "
		    "%u } %scounter name c_%s_conn drop\n",
		    NFT_LIMTABLE, match, set, src, l->lim_maxconn, add, r);
	}
}

/*
 * The limits of relays, all of them in one transaction: -1 when
 * nftables refused it (and what was there stays).
 */
int
kernel_limits_setup(struct relaylist *relays)
{
	struct cmdbuf	 cb;
	struct relay	*rlay;
	FILE		*names;
	char		*have = NULL, *keep = NULL, *p, *line, *save;
	char		 r[64], kind[16], name[160], want[200];
	const char	*cnt[] = { "conn", "rate", "ovl", "req" };
	size_t		 keeplen = 0, i;
	int		 f, ret;

	/* what is there, that the configuration may no longer name */
	quiet = 1;
	cmd_open(&cb);
	cmd_add(&cb, "list sets table %s\nlist counters table %s\n",
	    NFT_LIMTABLE, NFT_LIMTABLE);
	if (cmd_run(&cb, &have) != 0)
		have = NULL;
	quiet = 0;

	if ((names = open_memstream(&keep, &keeplen)) == NULL)
		fatal("%s", __func__);
	cmd_open(&cb);
	cmd_add(&cb, "add table %s\n", NFT_LIMTABLE);
	cmd_add(&cb, "add chain %s in { type filter hook input priority "
	    "filter - 1; policy accept; }\n", NFT_LIMTABLE);
	cmd_add(&cb, "flush chain %s in\n", NFT_LIMTABLE);
	TAILQ_FOREACH(rlay, relays, rl_entry) {
		if (!RELAY_KLIMITED(rlay))
			continue;
		lim_name(rlay->rl_conf.name, r, sizeof(r));
		for (i = 0; i < nitems(cnt); i++) {
			(void)snprintf(name, sizeof(name), "c_%s_%s", r,
			    cnt[i]);
			cmd_add(&cb, "add counter %s %s\n", NFT_LIMTABLE,
			    name);
			lim_keep(names, "counter", name);
		}
		for (f = 4; f <= 6; f += 2)
			lim_rules(&cb, names, rlay, f);
	}
	if (fclose(names) != 0)
		fatal("%s", __func__);
	/* the stale: "set NAME {" and "counter NAME {" lines not kept */
	for (line = have != NULL ? strtok_r(have, "\n", &save) : NULL;
	    line != NULL; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, " %15s %159s {", kind, name) != 2 ||
		    (strcmp(kind, "set") != 0 && strcmp(kind, "counter") != 0))
			continue;
		(void)snprintf(want, sizeof(want), "%s %s\n", kind, name);
		for (p = keep; p != NULL && (p = strstr(p, want)) != NULL;
		    p++)
			if (p == keep || p[-1] == '\n')
				break;
		if (p == NULL)
			cmd_add(&cb, "delete %s %s %s\n", kind, NFT_LIMTABLE,
			    name);
	}
	free(have);
	free(keep);
	ret = cmd_run(&cb, NULL);
	return (ret);
}

/* No limits in nftables: the table goes, if it is there. */
void
kernel_limits_cleanup(void)
{
	struct cmdbuf	 cb;
	char		*out = NULL;

	quiet = 1;
	cmd_open(&cb);
	cmd_add(&cb, "list table %s\n", NFT_LIMTABLE);
	if (cmd_run(&cb, &out) == 0) {
		free(out);
		cmd_open(&cb);
		cmd_add(&cb, "delete table %s\n", NFT_LIMTABLE);
		if (cmd_run(&cb, NULL) == 0)
			log_debug("nftables: table %s deleted", NFT_LIMTABLE);
	}
	quiet = 0;
}

/* An nftables duration ("1h2m3s400ms") in whole seconds, rounded up. */
static uint32_t
nft_seconds(const char *s)
{
	unsigned long long	 v, total = 0;
	char			*end;

	while (*s >= '0' && *s <= '9') {
		v = strtoull(s, &end, 10);
		if (strncmp(end, "ms", 2) == 0) {
			total += (v + 999) / 1000;
			end += 2;
		} else if (*end == 'd')
			total += v * 86400, end++;
		else if (*end == 'h')
			total += v * 3600, end++;
		else if (*end == 'm')
			total += v * 60, end++;
		else if (*end == 's')
			total += v, end++;
		else
			break;
		s = end;
	}
	return (total > UINT32_MAX ? UINT32_MAX : (uint32_t)total);
}

/*
 * The sources in overload table "table" (of expire seconds) now, in
 * family f: their masked addresses, 16 bytes each, in *addrs, and with
 * exp the seconds each has left in *exp (the caller's to free), their
 * number returned; -1 on error.
 */
int
kernel_limits_overloaded(const char *table, uint32_t expire, int f,
    uint8_t **addrs, uint32_t **exp)
{
	struct cmdbuf	 cb;
	struct in6_addr	 a;
	char		 t[64], *out = NULL, *p, *e, *tok, *save, *x;
	uint8_t		*v = NULL, *nv;
	uint32_t	*ev = NULL, *nev;
	size_t		 n = 0, max = 0;

	*addrs = NULL;
	if (exp != NULL)
		*exp = NULL;
	lim_name(table, t, sizeof(t));
	quiet = 1;
	cmd_open(&cb);
	cmd_add(&cb, "list set %s ovl_%s_%u_%d\n", NFT_LIMTABLE, t, expire,
	    f);
	if (cmd_run(&cb, &out) != 0) {
		quiet = 0;
		return (-1);
	}
	quiet = 0;
	if ((p = strstr(out, "elements = {")) != NULL &&
	    (e = strchr(p, '}')) != NULL) {
		*e = '\0';
		p += strlen("elements = {");
		/* "ADDR [timeout T] [expires E], ..." */
		for (tok = strtok_r(p, ",", &save); tok != NULL;
		    tok = strtok_r(NULL, ",", &save)) {
			tok += strspn(tok, " \t\n");
			x = strstr(tok, "expires ");
			tok[strcspn(tok, " \t\n")] = '\0';
			memset(&a, 0, sizeof(a));
			if (inet_pton(f == 4 ? AF_INET : AF_INET6, tok,
			    &a) != 1)
				continue;
			if (n == max) {
				max = max == 0 ? 64 : max * 2;
				if ((nv = reallocarray(v, max, 16)) == NULL ||
				    (nev = reallocarray(ev, max,
				    sizeof(*ev))) == NULL) {
					free(nv != NULL ? nv : v);
					free(ev);
					free(out);
					return (-1);
				}
				v = nv;
				ev = nev;
			}
			memcpy(v + n * 16, &a, 16);
			ev[n] = x != NULL ? nft_seconds(x + 8) : expire;
			n++;
		}
	}
	free(out);
	*addrs = v;
	if (exp != NULL)
		*exp = ev;
	else
		free(ev);
	return ((int)n);
}

/*
 * Out of overload table "table" (of expire seconds), in family f: the
 * source addr (masked as the table's), or all with addr NULL.
 */
int
kernel_limits_unload(const char *table, uint32_t expire, int f,
    const uint8_t *addr)
{
	struct cmdbuf	 cb;
	char		 t[64], a[INET6_ADDRSTRLEN];
	int		 ret;

	lim_name(table, t, sizeof(t));
	quiet = 1;
	cmd_open(&cb);
	if (addr == NULL)
		cmd_add(&cb, "flush set %s ovl_%s_%u_%d\n", NFT_LIMTABLE, t,
		    expire, f);
	else {
		if (inet_ntop(f == 4 ? AF_INET : AF_INET6, addr, a,
		    sizeof(a)) == NULL) {
			quiet = 0;
			return (-1);
		}
		cmd_add(&cb, "delete element %s ovl_%s_%u_%d { %s }\n",
		    NFT_LIMTABLE, t, expire, f, a);
	}
	ret = cmd_run(&cb, NULL);
	quiet = 0;
	return (ret);
}

/*
 * The connections nftables refused for the relay named relay, by
 * RELAY_LIM_*, into refused; -1 on error.
 */
int
kernel_limits_refused(const char *relay, uint64_t *refused)
{
	struct cmdbuf	 cb;
	/* the kernel's, in the order of RELAY_LIM_* */
	const char	*why[] = { "conn", "rate", "ovl", "req" };
	char		 r[64], *out = NULL, *p;
	unsigned long long n;
	size_t		 i;

	lim_name(relay, r, sizeof(r));
	quiet = 1;
	cmd_open(&cb);
	for (i = 0; i < nitems(why); i++)
		cmd_add(&cb, "list counter %s c_%s_%s\n", NFT_LIMTABLE, r,
		    why[i]);
	if (cmd_run(&cb, &out) != 0) {
		quiet = 0;
		return (-1);
	}
	quiet = 0;
	/* "counter NAME { packets N bytes M }" each, in that order */
	p = out;
	for (i = 0; i < nitems(why); i++) {
		refused[i] = 0;
		if (p == NULL || (p = strstr(p, "packets ")) == NULL)
			break;
		if (sscanf(p, "packets %llu", &n) == 1)
			refused[i] = n;
		p++;
	}
	free(out);
	return (0);
}
