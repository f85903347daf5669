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
 * relayd -nv: the parsed configuration on stdout, in relayd.conf syntax
 * with every default spelled out and the ids the daemon gives, in the
 * order of the file.  Tests compare it line by line, so the layout is
 * stable: one object per paragraph, options one per line, tab-indented.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <ctype.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>

#include "relayd.h"
#include "http.h"

/*
 * A string as the lexer reads it back: quoted, \ before " and \, and
 * \r \n \t as check send and expect translate them.
 */
static void
print_str(const char *s)
{
	putchar('"');
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		if (*s == '\r')
			printf("\\r");
		else if (*s == '\n')
			printf("\\n");
		else if (*s == '\t')
			printf("\\t");
		else if (isprint((unsigned char)*s))
			putchar(*s);
		else
			printf("\\%03o", (unsigned char)*s);
	}
	putchar('"');
}

/* An address as relayd.conf takes it: a link-local one with its scope. */
static void
print_addr(struct sockaddr_storage *ss)
{
	char	 buf[NI_MAXHOST];

	if (ss->ss_family == AF_INET6 &&
	    ((struct sockaddr_in6 *)ss)->sin6_scope_id != 0 &&
	    getnameinfo((struct sockaddr *)ss, sizeof(struct sockaddr_in6),
	    buf, sizeof(buf), NULL, 0, NI_NUMERICHOST) == 0) {
		fputs(buf, stdout);
		return;
	}
	fputs(print_host(ss, buf, sizeof(buf)), stdout);
}

/* forward ... inet | inet6 prefix, which a relay gives all its lines */
static void
print_dstaf(struct relay_config *rc)
{
	if (rc->dstaf.ss_family == AF_INET)
		printf(" inet");
	else if (rc->dstaf.ss_family == AF_INET6) {
		printf(" inet6 ");
		print_addr(&rc->dstaf);
	}
}

static void
print_check(struct table *tb)
{
	size_t	 i;
	int	 bin;

	switch (tb->conf.check) {
	case CHECK_NOCHECK:
		printf("no check");
		break;
	case CHECK_ICMP:
		printf("check icmp");
		break;
	case CHECK_TCP:
		printf("check %s", tb->conf.flags & F_TLS ? "tls" : "tcp");
		break;
	case CHECK_HTTP_CODE:
	case CHECK_HTTP_DIGEST:
	case CHECK_HTTP2_CODE:
		printf("check %s ", tb->conf.check == CHECK_HTTP2_CODE ?
		    "http2" : tb->conf.flags & F_TLS ? "https" : "http");
		print_str(tb->conf.path);
		if (tb->conf.host[0] != '\0') {
			printf(" host ");
			print_str(tb->conf.host);
		}
		if (tb->conf.check == CHECK_HTTP2_CODE)
			printf(" code %d%s", tb->conf.retcode,
			    tb->conf.flags & F_TLS ? " tls" : "");
		else if (tb->conf.check == CHECK_HTTP_CODE)
			printf(" code %d", tb->conf.retcode);
		else {
			printf(" digest ");
			print_str(tb->conf.digest);
		}
		break;
	case CHECK_SEND_EXPECT:
	case CHECK_BINSEND_EXPECT:
		bin = tb->conf.check == CHECK_BINSEND_EXPECT;
		printf("check %ssend ", bin ? "binary " : "");
		if (tb->sendbuf == NULL)
			printf("nothing");
		else if (!bin)
			print_str(tb->sendbuf);
		else {
			putchar('"');
			for (i = 0; i < tb->sendbuf_len; i++)
				printf("%02x", (unsigned char)tb->sendbuf[i]);
			putchar('"');
		}
		printf(" expect ");
		print_str(tb->conf.exbuf);
		if (tb->conf.flags & F_TLS)
			printf(" tls");
		break;
	case CHECK_SCRIPT:
		printf("check script ");
		print_str(tb->conf.path);
		break;
	}
}

static void
print_table(struct relayd *env, struct table *tb)
{
	struct host	*h;

	printf("table <%s> {\t# id %u%s\n", tb->conf.name, tb->conf.id,
	    tb->conf.flags & F_DISABLE ? ", disable" : "");
	TAILQ_FOREACH(h, &tb->hosts, entry) {
		putchar('\t');
		print_addr(&h->conf.ss);
		if (h->conf.retry)
			printf(" retry %d", h->conf.retry);
		if (h->conf.parentid)
			printf(" parent %u", h->conf.parentid);
		if (h->conf.priority)
			printf(" priority %d", h->conf.priority);
		if (h->conf.ttl)
			printf(" ip ttl %d", h->conf.ttl);
		printf("\t# id %u, name %s\n", h->conf.id, h->conf.name);
	}
	printf("}\t# port %u, mode %s, ", tb->conf.port,
	    relay_mode_name(tb->conf.fwdmode));
	print_check(tb);
	printf(", timeout %lld, interval %lld",
	    (long long)tb->conf.timeout.tv_sec * 1000 +
	    tb->conf.timeout.tv_usec / 1000,
	    (long long)(tb->conf.skip_cnt ? tb->conf.skip_cnt :
	    env->sc_conf.interval.tv_sec));
	if (tb->conf.flags & F_DEMOTE)
		printf(", demote %s", tb->conf.demote_group);
	putchar('\n');
}

static void
print_kv(struct relay_rule *r, enum key_type type)
{
	static const char	*types[KEY_TYPE_MAX] = {
		"", "cookie", "header", "path", "query", "url"
	};
	static const char	*options[] = {
		"", " append", " set", " remove", " hash", " log", " strip"
	};
	static const char	*matches[] = {
		"", " glob", " glob ignorecase", " pattern"
	};
	struct rule_kv		*kv = &r->rule_kv[type];

	if (!kv->kv_set)
		return;
	if (kv->kv_option == KEY_OPTION_STRIP) {
		printf(" path strip %s", kv->kv_value);
		return;
	}
	printf(" %s%s%s", types[type], options[kv->kv_option],
	    matches[kv->kv_keymatch]);
	if (kv->kv_key != NULL) {
		putchar(' ');
		if (kv->kv_digest != DIGEST_NONE)
			printf("digest ");
		print_str(kv->kv_key);
	}
	if (kv->kv_value != NULL) {
		printf(" value%s ", matches[kv->kv_valmatch]);
		print_str(kv->kv_value);
	}
}

static void
print_rule_addr(const char *dir, struct rule_addr *ra)
{
	if (ra->addr.ss_family == AF_UNSPEC)
		return;
	printf(" %s ", dir);
	print_addr(&ra->addr);
	printf("/%d", ra->prefixlen);
}

static void
print_rule(struct relay_rule *r)
{
	static const char	*actions[] = { "match", "pass", "block" };
	int			 i;

	printf("\t%s%s %s%s", actions[r->rule_action],
	    r->rule_flags & RULE_FLAG_LOG ? " log" : "",
	    r->rule_dir == RELAY_DIR_RESPONSE ? "response" : "request",
	    r->rule_flags & RULE_FLAG_QUICK ? " quick" : "");
	if (r->rule_af == AF_INET)
		printf(" inet");
	else if (r->rule_af == AF_INET6)
		printf(" inet6");
	print_rule_addr("from", &r->rule_src);
	print_rule_addr("to", &r->rule_dst);
	if (r->rule_method)
		printf(" method %s", http_method_name(r->rule_method));
	for (i = KEY_TYPE_NONE + 1; i < KEY_TYPE_MAX; i++)
		print_kv(r, i);
	if (r->rule_tablename[0] != '\0')
		printf(" forward to <%s>", r->rule_tablename);
	if (r->rule_taggedname[0] != '\0')
		printf(" tagged \"%s\"", r->rule_taggedname);
	if (r->rule_tag == RULE_NO)
		printf(" no tag");
	else if (r->rule_tag)
		printf(" tag \"%s\"", r->rule_tagname);
	if (r->rule_label == RULE_NO)
		printf(" no label");
	else if (r->rule_label)
		printf(" label \"%s\"", r->rule_labelname);
	printf("\t# rule %u\n", r->rule_id);
}

static void
print_optstr(const char *what, const char *s)
{
	if (s == NULL)
		return;
	printf("\ttls %s ", what);
	print_str(s);
	putchar('\n');
}

static void
print_protocol(struct protocol *p)
{
	static const char	*types[] = { "tcp", "http", "dns" };
	struct relay_rule	*r;
	struct keyname		*k;
	int			 f = p->tcpflags;

	printf("%s protocol ", types[p->type]);
	print_str(p->name);
	printf(" {\t# id %u\n", p->id);
	printf("\ttcp {");
	if (f & (TCPFLAG_NODELAY | TCPFLAG_NNODELAY))
		printf(" %snodelay,", f & TCPFLAG_NNODELAY ? "no " : "");
	if (f & (TCPFLAG_SACK | TCPFLAG_NSACK))
		printf(" %ssack,", f & TCPFLAG_NSACK ? "no " : "");
	printf(" %ssplice, backlog %d", f & TCPFLAG_NSPLICE ? "no " : "",
	    p->tcpbacklog);
	if (f & TCPFLAG_BUFSIZ)
		printf(", socket buffer %d", p->tcpbufsiz);
	if (f & TCPFLAG_IPTTL)
		printf(", ip ttl %d", p->tcpipttl);
	if (f & TCPFLAG_IPMINTTL)
		printf(", ip minttl %d", p->tcpipminttl);
	printf(" }\n");
	if (p->type == RELAY_PROTO_DNS)
		goto rules;

	printf("\ttls { %stlsv1.2, %stlsv1.3, %scipher-server-preference, "
	    "%sclient-renegotiation, %ssession tickets }\n",
	    p->tlsflags & TLSFLAG_TLSV1_2 ? "" : "no ",
	    p->tlsflags & TLSFLAG_TLSV1_3 ? "" : "no ",
	    p->tlsflags & TLSFLAG_CIPHER_SERVER_PREF ? "" : "no ",
	    p->tlsflags & TLSFLAG_CLIENT_RENEG ? "" : "no ",
	    p->tickets ? "" : "no ");
	printf("\ttls ciphers ");
	print_str(p->tlsciphers ? p->tlsciphers : TLSCIPHERS_DEFAULT);
	printf("\n\ttls ecdhe ");
	print_str(p->tlsecdhecurves ? p->tlsecdhecurves :
	    TLSECDHECURVES_DEFAULT);
	printf("\n\ttls edh params ");
	print_str(p->tlsdhparams ? p->tlsdhparams : TLSDHPARAM_DEFAULT);
	putchar('\n');
	print_optstr("ca file", p->tlsca);
	print_optstr("ca cert", p->tlscacert);
	if (p->tlscakey != NULL) {
		printf("\ttls ca key ");
		print_str(p->tlscakey);
		printf(" password \"...\"\n");
	}
	if (p->tlsclientca != NULL) {
		printf("\ttls client ca ");
		print_str(p->tlsclientca);
		if (p->tlsclientcrl != NULL) {
			printf(" crl ");
			print_str(p->tlsclientcrl);
		}
		putchar('\n');
	}
	TAILQ_FOREACH(k, &p->tlscerts, entry)
		print_optstr("keypair", k->name);
	if (p->type == RELAY_PROTO_HTTP)
		printf("\thttp { headerlen %d, %swebsockets }\n",
		    p->httpheaderlen,
		    p->httpflags & HTTPFLAG_WEBSOCKETS ? "" : "no ");
	if (p->type == RELAY_PROTO_HTTP &&
	    p->httpheadtimeout != RELAY_HEADTIMEOUT)
		printf("\thttp header timeout %d\n", p->httpheadtimeout);
	if (p->type == RELAY_PROTO_HTTP && (p->httpflags & HTTPFLAG_HTTP2)) {
		if (p->httpstreams != RELAY_H2STREAMS)
			printf("\thttp http2 streams %d\n", p->httpstreams);
		else
			printf("\thttp http2\n");
		if (p->httppipeline != RELAY_H2PIPELINE)
			printf("\thttp http2 pipeline %d\n", p->httppipeline);
		if (p->httpconns != RELAY_H2CONNS)
			printf("\thttp http2 connections %d\n", p->httpconns);
	}
	if (p->type == RELAY_PROTO_HTTP && (p->httpflags & HTTPFLAG_H2BACKEND)) {
		printf("\thttp http2 backend\n");
		if (p->h2bstreams != RELAY_H2B_STREAMS)
			printf("\thttp http2 backend streams %d\n",
			    p->h2bstreams);
		if (p->h2bconns != RELAY_H2B_CONNS)
			printf("\thttp http2 backend connections %d\n",
			    p->h2bconns);
		if (p->h2bidle != RELAY_H2B_IDLE)
			printf("\thttp http2 backend idle %d\n", p->h2bidle);
	}
	if (p->flags & F_RETURN) {
		printf("\treturn error");
		if (p->style != NULL) {
			printf(" style ");
			print_str(p->style);
		}
		putchar('\n');
	}
 rules:
	TAILQ_FOREACH(r, &p->rules, rule_entry)
		print_rule(r);
	printf("}\n");
}

/* A relay's limits per client source, as relayd.conf says them. */
static void
print_limits(const struct relay_limits *l)
{
	if (l->lim_maxconn > 0)
		printf("\tmax-src-conn %u\n", l->lim_maxconn);
	if (l->lim_rateint > 0)
		printf("\tmax-src-conn-rate %u/%u\n", l->lim_rate,
		    l->lim_rateint);
	if (l->lim_overload[0] != '\0')
		printf("\toverload <%s>%s expire %u\n", l->lim_overload,
		    l->lim_flush ? " flush" : "", l->lim_expire);
	if (l->lim_reqint > 0)
		printf("\tmax-src-request-rate %u/%u burst %u\n", l->lim_req,
		    l->lim_reqint, l->lim_reqburst);
	if (!RELAY_LIMITED(l) && !RELAY_REQLIMITED(l))
		return;
	if (l->lim_prefix4 != 32)
		printf("\tsrc-prefix inet %u\n", l->lim_prefix4);
	if (l->lim_prefix6 != RELAY_LIMIT_PREFIX6)
		printf("\tsrc-prefix inet6 %u\n", l->lim_prefix6);
}

static void
print_relay(struct relayd *env, struct relay *rlay)
{
	struct relay_table	*rlt;
	struct relay_config	*rc = &rlay->rl_conf;
	struct protocol		*p;
	const char		*pps;
	int			 i;

	printf("relay ");
	print_str(rc->name);
	printf(" {\t# id %u\n", rc->id);
	pps = rc->flags & F_PROXYV1 ? " proxy-protocol v1" :
	    rc->flags & F_PROXYV2 ? " proxy-protocol v2" : "";
	printf("\tlisten on ");
	if (rc->ss.ss_family == AF_UNIX)
		print_str(((struct sockaddr_un *)&rc->ss)->sun_path);
	else {
		print_addr(&rc->ss);
		printf(" port %u", rc->port);
	}
	printf("%s", rc->flags & F_TLS ? " tls" : "");
	if (rc->pp_nfrom == RELAY_PPFROM_ALL)
		printf(" proxy-protocol");
	else if (rc->pp_nfrom > 0) {
		printf(" proxy-protocol from {");
		for (i = 0; i < rc->pp_nfrom; i++) {
			printf("%s", i ? ", " : " ");
			print_addr(&rc->pp_from[i].addr);
			printf("/%d", rc->pp_from[i].prefixlen);
		}
		printf(" }");
	}
	if (rc->ss.ss_family == AF_UNIX) {
		if (rc->sun_uid != (uid_t)-1)
			printf(" owner %u", (unsigned int)rc->sun_uid);
		if (rc->sun_gid != (gid_t)-1)
			printf(" group %u", (unsigned int)rc->sun_gid);
		printf(" mode %04o", (unsigned int)rc->sun_mode);
	}
	putchar('\n');
	if ((p = proto_find(env, rc->proto)) != NULL) {
		printf("\tprotocol ");
		print_str(p->name);
		putchar('\n');
	}
	if (rc->dstss.ss_family != AF_UNSPEC) {
		printf("\t%sforward%s to ",
		    rc->flags & F_TRANSPARENT ? "transparent " : "",
		    rc->flags & F_TLSCLIENT ? " with tls" : "");
		if (rc->dstss.ss_family == AF_UNIX)
			print_str(((struct sockaddr_un *)&rc->dstss)->sun_path);
		else {
			print_addr(&rc->dstss);
			printf(" port %u", rc->dstport);
		}
		if (rc->dstretry)
			printf(" retry %d", rc->dstretry);
		print_dstaf(rc);
		printf("%s\n", pps);
	}
	if (rc->flags & (F_NATLOOK | F_DIVERT)) {
		printf("\tforward%s to %s retry %d",
		    rc->flags & F_TLSCLIENT ? " with tls" : "",
		    rc->flags & F_NATLOOK ? "nat lookup" : "destination",
		    rc->dstretry);
		print_dstaf(rc);
		printf("%s\n", pps);
	}
	TAILQ_FOREACH(rlt, &rlay->rl_tables, rlt_entry) {
		printf("\tforward%s to <%s> port %u mode %s",
		    rc->flags & F_TLSCLIENT ? " with tls" : "",
		    rlt->rlt_table->conf.name, rlt->rlt_table->conf.port,
		    relay_mode_name(rlt->rlt_mode));
		print_dstaf(rc);
		printf("%s%s\n", pps,
		    rlt->rlt_flags & F_BACKUP ? "\t# backup" : "");
	}
	printf("\tsession timeout %lld\n", (long long)rc->timeout.tv_sec);
	print_limits(&rc->lim);
	if (rc->flags & F_ANNOUNCE)
		printf("\tannounce\n");
	if (rc->flags & F_HASHKEY)
		printf("\t# hash key set\n");
	if (rc->flags & F_DISABLE)
		printf("\tdisable\n");
	printf("}\n");
}

static void
print_tablename(struct relayd *env, objid_t id)
{
	struct table	*tb;

	if ((tb = table_find(env, id)) != NULL)
		printf("<%s>", tb->conf.name);
}

/* A redirection, with what it becomes in nftables as comments. */
static void
print_rdr(struct relayd *env, struct rdr *rdr)
{
	struct rdr_virt	*v;
	struct protoent	*pe;
	int		 i;

	printf("redirect ");
	print_str(rdr->conf.name);
	if (rdr->conf.routeif[0] != '\0')
		printf(" {\t# id %u, nftables netdev chains rdr%u_v0 to "
		    "rdr%u_v%d\n", rdr->conf.id, rdr->conf.id, rdr->conf.id,
		    rdr->conf.nvirts - 1);
	else
		printf(" {\t# id %u, nftables chain rdr%u, ct mark 0x%08x\n",
		    rdr->conf.id, rdr->conf.id, RDR_CTMARK + rdr->conf.id);
	for (i = 0; i < rdr->conf.nvirts; i++) {
		v = &rdr->conf.virts[i];
		printf("\tlisten on ");
		print_addr(&v->ss);
		if ((pe = getprotobynumber(v->proto)) != NULL)
			printf(" %s", pe->p_name);
		else
			printf(" %d", v->proto);
		if (v->port_high > v->port)
			printf(" port %u:%u", v->port, v->port_high);
		else
			printf(" port %u", v->port);
		if (v->ifname[0] != '\0') {
			printf(" interface ");
			print_str(v->ifname);
		}
		if (v->pflog)
			printf(" pflog");
		putchar('\n');
	}
	for (i = 0; i < 2; i++) {
		if (i == 1 && rdr->conf.backup == 0)
			break;
		printf("\t%s to ", rdr->conf.routeif[0] != '\0' ? "route" :
		    "forward");
		print_tablename(env, i == 0 ? rdr->conf.table :
		    rdr->conf.backup);
		printf(" port %u mode %s", rdr->conf.port,
		    relay_mode_name(rdr->conf.mode));
		if (rdr->conf.routeif[0] != '\0') {
			printf(" interface ");
			print_str(rdr->conf.routeif);
		}
		printf("%s\n", i == 1 ? "\t# backup" : "");
	}
	if (rdr->conf.flags & F_STICKY)
		printf("\tsticky-address\n");
	if (rdr->conf.flags & F_ANNOUNCE)
		printf("\tannounce\n");
	if (rdr->conf.tagmark != 0) {
		printf("\t%spftag ", rdr->conf.tagmatch ? "match " : "");
		print_str(rdr->conf.tag);
		printf("\t# packet mark 0x%08x\n", rdr->conf.tagmark);
	}
	printf("\tsession timeout %d\n", rdr->conf.timeout);
	if (rdr->conf.flags & F_DISABLE)
		printf("\tdisable\n");
	printf("}\n");
}

static void
print_router(struct relayd *env, struct router *rt)
{
	int	 i;

	printf("router ");
	print_str(rt->conf.name);
	printf(" {\t# id %u, route protocol %d\n", rt->conf.id,
	    rt->conf.proto);
	for (i = 0; i < rt->conf.nroutes; i++) {
		printf("\troute ");
		print_addr(&rt->conf.routes[i]);
		printf("/%d\n", rt->conf.prefixlen[i]);
	}
	printf("\tforward to ");
	print_tablename(env, rt->conf.table);
	printf("\n\trtable %d\n", rt->conf.rtable);
	if (rt->conf.label[0] != '\0') {
		printf("\trtlabel ");
		print_str(rt->conf.label);
		printf("\t# route protocol %d\n", rt->conf.proto);
	}
	if (rt->conf.buckets != ROUTER_BUCKETS)
		printf("\tbuckets %d\n", rt->conf.buckets);
	if (rt->conf.bucket_idle != ROUTER_BUCKET_IDLE)
		printf("\tbucket-idle %d\n", rt->conf.bucket_idle);
	printf("}\n");
}

void
print_config(struct relayd *env)
{
	struct relayd_config	*c = &env->sc_conf;
	struct table		*tb;
	struct protocol		*p;
	struct relay		*rlay;
	struct rdr		*rdr;
	struct router		*rt;

	printf("interval %lld\n", (long long)c->interval.tv_sec);
	printf("timeout %lld\n", (long long)c->timeout.tv_sec * 1000 +
	    c->timeout.tv_usec / 1000);
	printf("prefork %u\n", c->prefork_relay);
	printf("socket ");
	print_str(c->socket);
	putchar('\n');
	if (strcmp(c->demote_dir, DEMOTE_DIR) != 0) {
		printf("demote directory ");
		print_str(c->demote_dir);
		putchar('\n');
	}
	if (c->announce_table != 0)
		printf("announce table %d\n", c->announce_table);
	if (c->rsocket[0] != '\0') {
		printf("socket ");
		print_str(c->rsocket);
		printf(" restricted\n");
	}
	if (c->opts & RELAYD_OPT_LOGUPDATE)
		printf("log state changes\n");
	if (c->opts & RELAYD_OPT_LOGHOSTCHECK)
		printf("log host checks\n");
	if (c->opts & RELAYD_OPT_LOGCON)
		printf("log connection\n");
	else if (c->opts & RELAYD_OPT_LOGCONERR)
		printf("log connection errors\n");
	if (c->flags & F_AGENTX) {
		printf("agentx context ");
		print_str(c->agentx_context);
		printf(" path ");
		print_str(c->agentx_path);
		putchar('\n');
	}
	if (c->metrics_ss.ss_family != AF_UNSPEC) {
		char	 addr[INET6_ADDRSTRLEN];

		printf("metrics listen on %s port %d\n",
		    print_host(&c->metrics_ss, addr, sizeof(addr)),
		    ss_port(&c->metrics_ss));
	}
	printf("splice engine %s\n", splice_engine_name(c->splice_engine));
	printf("tls directory ");
	print_str(c->tlsdir[0] != '\0' ? c->tlsdir : TLS_CERT_DIR);
	putchar('\n');

	TAILQ_FOREACH(tb, env->sc_tables, entry) {
		putchar('\n');
		print_table(env, tb);
	}
	TAILQ_FOREACH(p, env->sc_protos, entry) {
		putchar('\n');
		print_protocol(p);
	}
	TAILQ_FOREACH(rdr, &env->sc_rdrs, entry) {
		putchar('\n');
		print_rdr(env, rdr);
	}
	TAILQ_FOREACH(rlay, env->sc_relays, rl_entry) {
		putchar('\n');
		print_relay(env, rlay);
	}
	TAILQ_FOREACH(rt, &env->sc_routers, entry) {
		putchar('\n');
		print_router(env, rt);
	}
}

/*
 * relayd -d: each relay's protocol on stderr when its socket is opened,
 * as OpenBSD's relay_protodebug() prints it (flag names in the order of
 * OpenBSD's bits, lower case, "_" as a space).
 */
static const struct {
	uint32_t	 flag;
	const char	*name;
} protodebug_flags[] = {
	{ F_DISABLE,		"disable" },
	{ F_BACKUP,		"backup" },
	{ F_USED,		"used" },
	{ F_DOWN,		"down" },
	{ F_ADD,		"add" },
	{ F_DEL,		"del" },
	{ F_CHANGED,		"changed" },
	{ F_STICKY,		"sticky-address" },
	{ F_CHECK_DONE,		"check done" },
	{ F_ACTIVE_RULESET,	"active ruleset" },
	{ F_CHECK_SENT,		"check sent" },
	{ F_TLS,		"tls" },
	{ F_NATLOOK,		"nat lookup" },
	{ F_DEMOTE,		"demote" },
	{ F_RETURN,		"return" },
	{ F_NEEDPF,		"needpf" },
	{ F_PORT,		"port" },
	{ F_TLSCLIENT,		"tls client" },
	{ F_DIVERT,		"divert" },
	{ F_TLSINSPECT,		"tls inspect" },
	{ F_HASHKEY,		"hashkey" }
};

static void	 protodebug_name(const char *, int, const char *);

static const char *protodebug_tcp[] = { "nodelay", "no nodelay", "sack",
    "no sack", "socket buffer size", "ip ttl", "ip minttl", "no splice" };
static const char *protodebug_tls[] = { "sslv3", "tlsv1.0", "tlsv1.1",
    "tlsv1.2", "tlsv1.3", "cipher-server-preference",
    "client-renegotiation" };

/* The names of the bits of v, "a, b"; names[i] is bit i. */
static void
protodebug_bits(uint32_t v, const char **names, size_t n)
{
	size_t	 i;
	int	 any = 0;

	for (i = 0; i < n; i++)
		if (v & (1U << i))
			fprintf(stderr, "%s%s", any++ ? ", " : "", names[i]);
}

static void
protodebug_flags_print(uint32_t v)
{
	size_t	 i;
	int	 any = 0;

	for (i = 0; i < nitems(protodebug_flags); i++)
		if (v & protodebug_flags[i].flag)
			fprintf(stderr, "%s%s", any++ ? ", " : "",
			    protodebug_flags[i].name);
}

static void
protodebug_rule(struct relay_rule *r)
{
	static const char	*types[] = { "", "cookie", "header", "path",
	    "query", "url" };
	static const char	*opts[] = { "", "append ", "set ", "remove ",
	    "hash ", "log ", "strip " };
	char			 buf[INET6_ADDRSTRLEN];
	struct rule_kv		*kv;
	int			 i, noval;

	fprintf(stderr, "\t\t%s ", r->rule_action == RULE_ACTION_MATCH ?
	    "match" : r->rule_action == RULE_ACTION_BLOCK ? "block" : "pass");
	if (r->rule_flags & RULE_FLAG_LOG)
		fprintf(stderr, "log ");
	fprintf(stderr, "%s", r->rule_dir == RELAY_DIR_REQUEST ? "request " :
	    "response ");
	if (r->rule_flags & RULE_FLAG_QUICK)
		fprintf(stderr, "quick ");
	if (r->rule_af == AF_INET || r->rule_af == AF_INET6)
		fprintf(stderr, "%s ", r->rule_af == AF_INET ? "inet" :
		    "inet6");
	if (r->rule_src.addr.ss_family != AF_UNSPEC)
		fprintf(stderr, "from %s/%d ", print_host(&r->rule_src.addr,
		    buf, sizeof(buf)), r->rule_src.prefixlen);
	if (r->rule_dst.addr.ss_family != AF_UNSPEC)
		fprintf(stderr, "to %s/%d ", print_host(&r->rule_dst.addr,
		    buf, sizeof(buf)), r->rule_dst.prefixlen);
	for (i = 1; i < KEY_TYPE_MAX; i++) {
		kv = &r->rule_kv[i];
		if (!kv->kv_set)
			continue;
		noval = kv->kv_option == KEY_OPTION_STRIP ||
		    kv->kv_value == NULL;
		fprintf(stderr, "%s %s%s%s%s%s%s%s%s ", types[i],
		    opts[kv->kv_option], kv->kv_digest != DIGEST_NONE ?
		    "digest " : "", kv->kv_key == NULL ? "" : "\"",
		    kv->kv_key == NULL ? "" : kv->kv_key,
		    kv->kv_key == NULL ? "" : "\"", noval ? "" : " value \"",
		    kv->kv_value == NULL ? "" : kv->kv_value, noval ? "" : "\"");
	}
	if (r->rule_tablename[0] != '\0')
		fprintf(stderr, "forward to <%s> ", r->rule_tablename);
	protodebug_name("tag", r->rule_tag, r->rule_tagname);
	if (r->rule_taggedname[0] != '\0')
		fprintf(stderr, "tagged \"%s\" ", r->rule_taggedname);
	protodebug_name("label", r->rule_label, r->rule_labelname);
	fprintf(stderr, "\n");
}

/* A rule's tag or label: set, "no", or none. */
static void
protodebug_name(const char *what, int set, const char *name)
{
	if (set == RULE_NO)
		fprintf(stderr, "no %s ", what);
	else if (set && name[0] != '\0')
		fprintf(stderr, "%s \"%s\" ", what, name);
}

void
relay_protodebug(struct relay *rlay, struct protocol *p)
{
	struct relay_rule	*r;

	fprintf(stderr, "protocol %u: name %s\n", (unsigned int)p->id,
	    p->name);
	fprintf(stderr, "\tflags: ");
	protodebug_flags_print(p->flags);
	fprintf(stderr, ", relay flags: ");
	protodebug_flags_print(rlay->rl_conf.flags);
	fprintf(stderr, "\n");
	if (p->tcpflags) {
		fprintf(stderr, "\ttcp flags: ");
		protodebug_bits(p->tcpflags, protodebug_tcp,
		    nitems(protodebug_tcp));
		fprintf(stderr, "\n");
	}
	if ((rlay->rl_conf.flags & (F_TLS | F_TLSCLIENT)) && p->tlsflags) {
		fprintf(stderr, "\ttls flags: ");
		protodebug_bits(p->tlsflags, protodebug_tls,
		    nitems(protodebug_tls));
		fprintf(stderr, "\n");
	}
	fprintf(stderr, "\ttls session tickets: %s\n", p->tickets == 1 ?
	    "enabled" : "disabled");
	fprintf(stderr, "\ttype: %s\n", p->type == RELAY_PROTO_HTTP ? "http" :
	    p->type == RELAY_PROTO_DNS ? "dns" : "tcp");
	TAILQ_FOREACH(r, &p->rules, rule_entry)
		protodebug_rule(r);
}
