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
 * Configuration crosses processes only here, as *_config structs in
 * config_set<obj>() (parent) and config_get<obj>() (children) pairs.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "relayd.h"

int
config_init(struct relayd *env)
{
	if (env->sc_tables == NULL &&
	    (env->sc_tables = calloc(1, sizeof(*env->sc_tables))) == NULL)
		return (-1);
	if (env->sc_relays == NULL &&
	    (env->sc_relays = calloc(1, sizeof(*env->sc_relays))) == NULL)
		return (-1);
	if (env->sc_protos == NULL &&
	    (env->sc_protos = calloc(1, sizeof(*env->sc_protos))) == NULL)
		return (-1);
	TAILQ_INIT(env->sc_tables);
	TAILQ_INIT(env->sc_relays);
	TAILQ_INIT(env->sc_protos);
	TAILQ_INIT(&env->sc_hosts);
	TAILQ_INIT(&env->sc_rdrs);
	TAILQ_INIT(&env->sc_routers);

	env->sc_conf.interval.tv_sec = CHECK_INTERVAL;
	env->sc_conf.interval.tv_usec = 0;
	env->sc_conf.timeout.tv_sec = 0;
	env->sc_conf.timeout.tv_usec = CHECK_TIMEOUT * 1000;
	env->sc_conf.prefork_relay = RELAY_NUMPROC;
	env->sc_conf.splice_engine = SPLICE_ENGINE_AUTO;
	(void)strlcpy(env->sc_conf.socket, RELAYD_SOCKET,
	    sizeof(env->sc_conf.socket));
	(void)strlcpy(env->sc_conf.demote_dir, DEMOTE_DIR,
	    sizeof(env->sc_conf.demote_dir));

	protocol_init(&env->sc_proto_default);
	env->sc_proto_default.id = 0;
	env->sc_proto_default.type = RELAY_PROTO_TCP;
	(void)strlcpy(env->sc_proto_default.name, "default",
	    sizeof(env->sc_proto_default.name));
	return (0);
}

static void	 protocol_forget(struct protocol *);
static int	 config_setrule(struct relayd *, struct relay_rule *);

/* A protocol with OpenBSD's defaults and no parser-owned memory. */
void
protocol_init(struct protocol *p)
{
	memset(p, 0, sizeof(*p));
	p->tcpflags = TCPFLAG_DEFAULT;
	p->tcpbacklog = RELAY_BACKLOG;
	p->tlsflags = TLSFLAG_DEFAULT;
	p->httpheaderlen = RELAY_DEFHEADERLENGTH;
	p->httpheadtimeout = RELAY_HEADTIMEOUT;
	p->httpstreams = RELAY_H2STREAMS;
	p->httppipeline = RELAY_H2PIPELINE;
	p->httpconns = RELAY_H2CONNS;
	p->h2bstreams = RELAY_H2B_STREAMS;
	p->h2bconns = RELAY_H2B_CONNS;
	p->h2bidle = RELAY_H2B_IDLE;
	protocol_forget(p);
}

void
rule_free(struct relay_rule *r)
{
	int	 i;

	for (i = 0; i < KEY_TYPE_MAX; i++) {
		free(r->rule_kv[i].kv_key);
		free(r->rule_kv[i].kv_value);
	}
	free(r);
}

/* What the parser allocated for a protocol; the struct itself stays. */
void
protocol_free(struct protocol *p)
{
	struct relay_rule	*r;
	struct keyname		*k;

	while ((r = TAILQ_FIRST(&p->rules)) != NULL) {
		TAILQ_REMOVE(&p->rules, r, rule_entry);
		rule_free(r);
	}
	while ((k = TAILQ_FIRST(&p->tlscerts)) != NULL) {
		TAILQ_REMOVE(&p->tlscerts, k, entry);
		free(k->name);
		free(k);
	}
	free(p->tlsciphers);
	free(p->tlsdhparams);
	free(p->tlsecdhecurves);
	free(p->tlsca);
	free(p->tlscacert);
	free(p->tlscakey);
	if (p->tlscapass != NULL)
		explicit_bzero(p->tlscapass, strlen(p->tlscapass));
	free(p->tlscapass);
	free(p->tlsclientca);
	free(p->tlsclientcrl);
	free(p->style);
	protocol_forget(p);
}

/* Lose the parser's memory without freeing it: a copy, or freed. */
static void
protocol_forget(struct protocol *p)
{
	p->tlsciphers = p->tlsdhparams = p->tlsecdhecurves = NULL;
	p->tlsca = p->tlscacert = p->tlscakey = p->tlscapass = NULL;
	p->tlsclientca = p->tlsclientcrl = p->style = NULL;
	TAILQ_INIT(&p->tlscerts);
	TAILQ_INIT(&p->rules);
}

/* Free every object; the lists stay, empty. */
void
config_purge(struct relayd *env)
{
	struct table		*tb;
	struct host		*h;
	struct relay		*r;
	struct relay_table	*rlt;
	struct protocol		*p;
	struct rdr		*rdr;
	struct router		*rt;

	while ((rdr = TAILQ_FIRST(&env->sc_rdrs)) != NULL) {
		TAILQ_REMOVE(&env->sc_rdrs, rdr, entry);
		free(rdr);
	}
	while ((rt = TAILQ_FIRST(&env->sc_routers)) != NULL) {
		TAILQ_REMOVE(&env->sc_routers, rt, entry);
		free(rt);
	}
	while ((tb = TAILQ_FIRST(env->sc_tables)) != NULL) {
		TAILQ_REMOVE(env->sc_tables, tb, entry);
		while ((h = TAILQ_FIRST(&tb->hosts)) != NULL) {
			TAILQ_REMOVE(&tb->hosts, h, entry);
			free(h);
		}
		free(tb->sendbuf);
		free(tb);
	}
	TAILQ_INIT(&env->sc_hosts);
	while ((r = TAILQ_FIRST(env->sc_relays)) != NULL) {
		TAILQ_REMOVE(env->sc_relays, r, rl_entry);
		while ((rlt = TAILQ_FIRST(&r->rl_tables)) != NULL) {
			TAILQ_REMOVE(&r->rl_tables, rlt, rlt_entry);
			free(rlt->rlt_host);
			free(rlt);
		}
		relay_listeners_close(r);
		free(r->rl_page429);
		http_canned_free(&r->rl_429[0]);
		http_canned_free(&r->rl_429[1]);
		relay_tls_free(r);
		free(r);
	}
	while ((p = TAILQ_FIRST(env->sc_protos)) != NULL) {
		TAILQ_REMOVE(env->sc_protos, p, entry);
		protocol_free(p);
		free(p);
	}
}

/* The objects of a configuration and the lists that hold them. */
static void
config_lists_free(struct relayd *conf)
{
	config_purge(conf);
	free(conf->sc_tables);
	free(conf->sc_relays);
	free(conf->sc_protos);
}

/* A configuration that is not env's: everything of it goes. */
void
config_free(struct relayd *conf)
{
	config_lists_free(conf);
	free(conf);
}

/*
 * Reload, in the parent: the running configuration goes, the new one
 * (parsed into new, which is freed) takes its place in env.  What
 * clients hold of a relay (its TLS session id context) carries over.
 */
void
config_replace(struct relayd *env, struct relayd *new)
{
	struct relay	*rlay, *old;

	/* a TLS session resumes across the reload: same relay, same id */
	TAILQ_FOREACH(rlay, new->sc_relays, rl_entry)
		if ((old = relay_findbyname(env, rlay->rl_conf.name)) != NULL)
			memcpy(rlay->rl_conf.tls_sid, old->rl_conf.tls_sid,
			    sizeof(rlay->rl_conf.tls_sid));
	config_lists_free(env);
	env->sc_conf = new->sc_conf;
	env->sc_tables = new->sc_tables;
	env->sc_relays = new->sc_relays;
	env->sc_protos = new->sc_protos;
	TAILQ_INIT(&env->sc_hosts);
	TAILQ_CONCAT(&env->sc_hosts, &new->sc_hosts, globalentry);
	TAILQ_INIT(&env->sc_rdrs);
	TAILQ_CONCAT(&env->sc_rdrs, &new->sc_rdrs, entry);
	TAILQ_INIT(&env->sc_routers);
	TAILQ_CONCAT(&env->sc_routers, &new->sc_routers, entry);
	/* relays point at the default protocol of the env they came in */
	TAILQ_FOREACH(rlay, env->sc_relays, rl_entry)
		if (rlay->rl_proto == &new->sc_proto_default)
			rlay->rl_proto = &env->sc_proto_default;
	free(new);
}

int
config_setreset(struct relayd *env)
{
	struct privsep	*ps = env->sc_ps;
	unsigned int	 id;

	for (id = PROC_PFE; id < PROC_MAX; id++)
		proc_compose(ps, id, IMSG_CTL_RESET, NULL, 0);
	return (0);
}

int
config_getreset(struct relayd *env, struct imsg *imsg)
{
	(void)imsg;
	config_keepstats(env);
	config_purge(env);
	return (0);
}

/*
 * The relays, protocols, tables and hosts of env move aside, whole, into
 * a configuration of their own, for the sessions that run on after a
 * reload; env is left empty for the new one.  The caller counts the
 * sessions in sc_nsessions; the last one frees it (config_free()).
 */
struct relayd *
config_retain(struct relayd *env)
{
	struct relayd	*old;

	if ((old = calloc(1, sizeof(*old))) == NULL)
		fatal("%s", __func__);
	old->sc_tables = env->sc_tables;
	old->sc_relays = env->sc_relays;
	old->sc_protos = env->sc_protos;
	TAILQ_INIT(&old->sc_hosts);
	TAILQ_CONCAT(&old->sc_hosts, &env->sc_hosts, globalentry);
	if ((env->sc_tables = calloc(1, sizeof(*env->sc_tables))) == NULL ||
	    (env->sc_relays = calloc(1, sizeof(*env->sc_relays))) == NULL ||
	    (env->sc_protos = calloc(1, sizeof(*env->sc_protos))) == NULL)
		fatal("%s", __func__);
	TAILQ_INIT(env->sc_tables);
	TAILQ_INIT(env->sc_relays);
	TAILQ_INIT(env->sc_protos);
	return (old);
}

/*
 * Counters go on across reloads, as relayctl(8) says ("since the start
 * of the daemon"): when a configuration goes, each relay's statistics
 * are kept by its name, and the relay of that name in the next one
 * starts from them.  What no relay takes goes at the next reload.
 */
struct relay_kept {
	TAILQ_ENTRY(relay_kept)	 rk_entry;
	char			 rk_name[MAX_NAME_SIZE];
	struct relay_stats	 rk_stats[PROC_MAX_INSTANCES];
};
static TAILQ_HEAD(, relay_kept) relays_kept =
    TAILQ_HEAD_INITIALIZER(relays_kept);

void
config_keepstats(struct relayd *env)
{
	struct relay_kept	*rk;
	struct relay		*rlay;

	while ((rk = TAILQ_FIRST(&relays_kept)) != NULL) {
		TAILQ_REMOVE(&relays_kept, rk, rk_entry);
		free(rk);
	}
	TAILQ_FOREACH(rlay, env->sc_relays, rl_entry) {
		if ((rk = calloc(1, sizeof(*rk))) == NULL) {
			log_warn("%s", __func__);
			return;
		}
		(void)strlcpy(rk->rk_name, rlay->rl_conf.name,
		    sizeof(rk->rk_name));
		memcpy(rk->rk_stats, rlay->rl_stats, sizeof(rk->rk_stats));
		TAILQ_INSERT_TAIL(&relays_kept, rk, rk_entry);
	}
}

static void
config_takestats(struct relay *rlay)
{
	struct relay_kept	*rk;

	TAILQ_FOREACH(rk, &relays_kept, rk_entry)
		if (strcmp(rk->rk_name, rlay->rl_conf.name) == 0) {
			memcpy(rlay->rl_stats, rk->rk_stats,
			    sizeof(rlay->rl_stats));
			TAILQ_REMOVE(&relays_kept, rk, rk_entry);
			free(rk);
			return;
		}
}

int
config_setglobal(struct relayd *env)
{
	struct privsep	*ps = env->sc_ps;
	unsigned int	 id;

	for (id = PROC_PFE; id < PROC_MAX; id++)
		if (proc_compose(ps, id, IMSG_CFG_GLOBAL, &env->sc_conf,
		    sizeof(env->sc_conf)) == -1)
			fatal("%s: the global options do not fit a message",
			    __func__);
	return (0);
}

int
config_getcfg(struct relayd *env, struct imsg *imsg)
{
	IMSG_EXACT_SIZE_CHECK(imsg, &env->sc_conf);
	memcpy(&env->sc_conf, imsg->data, sizeof(env->sc_conf));
	env->sc_conf.socket[sizeof(env->sc_conf.socket) - 1] = '\0';
	env->sc_conf.rsocket[sizeof(env->sc_conf.rsocket) - 1] = '\0';
	return (0);
}

int
config_settable(struct relayd *env, struct table *tb)
{
	struct privsep	*ps = env->sc_ps;
	struct host	*h;
	static const enum privsep_procid to[] = {
		PROC_PFE, PROC_HCE, PROC_RELAY
	};
	unsigned int	 i;
	size_t		 len = sizeof(tb->conf) + tb->sendbuf_len;
	char		*buf;

	/* the table, then what its check sends */
	if ((buf = malloc(len)) == NULL)
		fatal("%s", __func__);
	memcpy(buf, &tb->conf, sizeof(tb->conf));
	if (tb->sendbuf_len > 0)
		memcpy(buf + sizeof(tb->conf), tb->sendbuf, tb->sendbuf_len);
	for (i = 0; i < nitems(to); i++) {
		proc_compose(ps, to[i], IMSG_CFG_TABLE, buf, len);
		TAILQ_FOREACH(h, &tb->hosts, entry)
			proc_compose(ps, to[i], IMSG_CFG_HOST, &h->conf,
			    sizeof(h->conf));
	}
	free(buf);
	return (0);
}

int
config_gettable(struct relayd *env, struct imsg *imsg)
{
	struct table	*tb;

	IMSG_SIZE_CHECK(imsg, &tb->conf);
	if ((tb = calloc(1, sizeof(*tb))) == NULL)
		return (-1);
	memcpy(&tb->conf, imsg->data, sizeof(tb->conf));
	tb->sendbuf_len = IMSG_DATA_SIZE(imsg) - sizeof(tb->conf);
	if (tb->sendbuf_len > 0) {
		if ((tb->sendbuf = malloc(tb->sendbuf_len + 1)) == NULL) {
			free(tb);
			return (-1);
		}
		memcpy(tb->sendbuf, (char *)imsg->data + sizeof(tb->conf),
		    tb->sendbuf_len);
		tb->sendbuf[tb->sendbuf_len] = '\0';
	}
	tb->conf.name[sizeof(tb->conf.name) - 1] = '\0';
	tb->conf.path[sizeof(tb->conf.path) - 1] = '\0';
	tb->conf.exbuf[sizeof(tb->conf.exbuf) - 1] = '\0';
	tb->conf.digest[sizeof(tb->conf.digest) - 1] = '\0';
	tb->conf.host[sizeof(tb->conf.host) - 1] = '\0';
	TAILQ_INIT(&tb->hosts);
	TAILQ_INSERT_TAIL(env->sc_tables, tb, entry);
	return (0);
}

int
config_gethost(struct relayd *env, struct imsg *imsg)
{
	struct host	*h;
	struct table	*tb;

	IMSG_EXACT_SIZE_CHECK(imsg, &h->conf);
	if ((h = calloc(1, sizeof(*h))) == NULL)
		return (-1);
	memcpy(&h->conf, imsg->data, sizeof(h->conf));
	h->conf.name[sizeof(h->conf.name) - 1] = '\0';
	if ((tb = table_find(env, h->conf.tableid)) == NULL) {
		log_warnx("%s: host %s for unknown table %u", __func__,
		    h->conf.name, h->conf.tableid);
		free(h);
		return (-1);
	}
	h->tablename = tb->conf.name;
	h->up = HOST_UNKNOWN;
	h->last_up = HOST_UNKNOWN;
	TAILQ_INSERT_TAIL(&tb->hosts, h, entry);
	TAILQ_INSERT_TAIL(&env->sc_hosts, h, globalentry);
	return (0);
}

/* A protocol, and the style of its error pages after it. */
int
config_setproto(struct relayd *env, struct protocol *p)
{
	struct relay_rule	*r;
	const char		*str[PROTO_NSTR];
	size_t			 len = sizeof(*p), n;
	char			*buf, *q;
	int			 i, ret;

	/* the strings the relays use, "" for none */
	str[0] = p->style;
	str[1] = p->tlsciphers;
	str[2] = p->tlsecdhecurves;
	str[3] = p->tlsdhparams;
	for (i = 0; i < PROTO_NSTR; i++)
		len += (str[i] != NULL ? strlen(str[i]) : 0) + 1;
	if ((buf = malloc(len)) == NULL)
		return (-1);
	memcpy(buf, p, sizeof(*p));
	q = buf + sizeof(*p);
	for (i = 0; i < PROTO_NSTR; i++) {
		n = str[i] != NULL ? strlen(str[i]) : 0;
		memcpy(q, str[i] != NULL ? str[i] : "", n + 1);
		q += n + 1;
	}
	ret = proc_compose(env->sc_ps, PROC_RELAY, IMSG_CFG_PROTO, buf, len);
	free(buf);
	if (ret == -1)
		return (-1);
	TAILQ_FOREACH(r, &p->rules, rule_entry)
		if (config_setrule(env, r) == -1)
			return (-1);
	return (0);
}

/*
 * A filter rule, after its protocol: the struct, then the keys and
 * values it has, in the order of the key types.
 */
static int
config_setrule(struct relayd *env, struct relay_rule *r)
{
	size_t	 len = sizeof(*r), n;
	char	*buf, *p;
	int	 i, ret;

	for (i = 0; i < KEY_TYPE_MAX; i++) {
		if (r->rule_kv[i].kv_key != NULL)
			len += strlen(r->rule_kv[i].kv_key) + 1;
		if (r->rule_kv[i].kv_value != NULL)
			len += strlen(r->rule_kv[i].kv_value) + 1;
	}
	if ((buf = malloc(len)) == NULL)
		return (-1);
	memcpy(buf, r, sizeof(*r));
	p = buf + sizeof(*r);
	for (i = 0; i < KEY_TYPE_MAX; i++) {
		if (r->rule_kv[i].kv_key != NULL) {
			n = strlen(r->rule_kv[i].kv_key) + 1;
			memcpy(p, r->rule_kv[i].kv_key, n);
			p += n;
		}
		if (r->rule_kv[i].kv_value != NULL) {
			n = strlen(r->rule_kv[i].kv_value) + 1;
			memcpy(p, r->rule_kv[i].kv_value, n);
			p += n;
		}
	}
	ret = proc_compose(env->sc_ps, PROC_RELAY, IMSG_CFG_RULE, buf, len);
	free(buf);
	return (ret);
}

/* The next string of a rule message, NULL when it runs out. */
static char *
config_rulestr(char **p, char *end)
{
	char	*s = *p, *nul;

	if (s >= end || (nul = memchr(s, '\0', end - s)) == NULL)
		return (NULL);
	*p = nul + 1;
	return (strdup(s));
}

int
config_getrule(struct relayd *env, struct imsg *imsg)
{
	struct relay_rule	*r;
	struct protocol		*p;
	char			*s, *end;
	int			 i;

	IMSG_SIZE_CHECK(imsg, r);
	if ((p = TAILQ_LAST(env->sc_protos, protolist)) == NULL)
		fatalx("%s: a rule without its protocol", __func__);
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return (-1);
	memcpy(r, imsg->data, sizeof(*r));
	r->rule_tagname[sizeof(r->rule_tagname) - 1] = '\0';
	r->rule_taggedname[sizeof(r->rule_taggedname) - 1] = '\0';
	r->rule_labelname[sizeof(r->rule_labelname) - 1] = '\0';
	r->rule_tablename[sizeof(r->rule_tablename) - 1] = '\0';
	s = (char *)imsg->data + sizeof(*r);
	end = (char *)imsg->data + IMSG_DATA_SIZE(imsg);
	for (i = 0; i < KEY_TYPE_MAX; i++) {
		/* the parent's pointers say which strings follow */
		if (r->rule_kv[i].kv_key != NULL &&
		    (r->rule_kv[i].kv_key = config_rulestr(&s, end)) == NULL)
			fatalx("%s: bad rule", __func__);
		if (r->rule_kv[i].kv_value != NULL &&
		    (r->rule_kv[i].kv_value = config_rulestr(&s, end)) ==
		    NULL)
			fatalx("%s: bad rule", __func__);
	}
	TAILQ_INSERT_TAIL(&p->rules, r, rule_entry);
	return (0);
}

int
config_getproto(struct relayd *env, struct imsg *imsg)
{
	struct protocol	*p;
	size_t		 len = IMSG_DATA_SIZE(imsg);
	char		**str[PROTO_NSTR], *q, *nul;
	int		 i;

	IMSG_SIZE_CHECK(imsg, p);
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return (-1);
	memcpy(p, imsg->data, sizeof(*p));
	p->name[sizeof(p->name) - 1] = '\0';
	str[0] = &p->style;
	str[1] = &p->tlsciphers;
	str[2] = &p->tlsecdhecurves;
	str[3] = &p->tlsdhparams;
	/* the parent's pointers mean nothing here */
	protocol_forget(p);
	len -= sizeof(*p);
	q = (char *)imsg->data + sizeof(*p);
	for (i = 0; i < PROTO_NSTR; i++) {
		if ((nul = memchr(q, '\0', len)) == NULL) {
			protocol_free(p);
			free(p);
			return (-1);
		}
		if (nul != q && (*str[i] = strdup(q)) == NULL) {
			protocol_free(p);
			free(p);
			return (-1);
		}
		len -= nul + 1 - q;
		q = nul + 1;
	}
	TAILQ_INSERT_TAIL(env->sc_protos, p, entry);
	return (0);
}

/*
 * A relay: its config to pfe, relay and ca, its tables to the relays and
 * pfe, and a duplicate of its listening socket to every relay process.
 */
int
config_setrelay(struct relayd *env, struct relay *rlay)
{
	struct privsep		*ps = env->sc_ps;
	struct relay_table	*rlt;
	struct ctl_relaytable	 crt;
	struct ctl_relayfd	 rfd;
	static const enum privsep_procid to[] = {
		PROC_PFE, PROC_RELAY, PROC_CA
	};
	unsigned int		 i, n;
	int			 fd;

	for (i = 0; i < nitems(to); i++)
		proc_compose(ps, to[i], IMSG_CFG_RELAY, &rlay->rl_conf,
		    sizeof(rlay->rl_conf));
	TAILQ_FOREACH(rlt, &rlay->rl_tables, rlt_entry) {
		memset(&crt, 0, sizeof(crt));
		crt.id = rlt->rlt_table->conf.id;
		crt.relayid = rlay->rl_conf.id;
		crt.mode = rlt->rlt_mode;
		crt.flags = rlt->rlt_flags;
		proc_compose(ps, PROC_RELAY, IMSG_CFG_RELAY_TABLE, &crt,
		    sizeof(crt));
		proc_compose(ps, PROC_PFE, IMSG_CFG_RELAY_TABLE, &crt,
		    sizeof(crt));
	}
	/* steered sockets: each relay process its own */
	for (i = 0; i < rlay->rl_nsteer + rlay->rl_nusteer; i++) {
		n = i < rlay->rl_nsteer ? i : i - rlay->rl_nsteer;
		fd = i < rlay->rl_nsteer ? rlay->rl_steer[n] :
		    rlay->rl_usteer[n];
		if ((fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) == -1)
			fatal("%s: dup", __func__);
		memset(&rfd, 0, sizeof(rfd));
		rfd.relayid = rlay->rl_conf.id;
		rfd.type = i < rlay->rl_nsteer ? RELAY_FD_LISTEN : RELAY_FD_UDP;
		proc_compose_imsg(ps, PROC_RELAY, n, IMSG_CFG_RELAY_FD, 0,
		    fd, &rfd, sizeof(rfd));
	}
	/* the parent keeps its sockets for the next reload */
	for (i = 0; i < 2; i++) {
		fd = i == RELAY_FD_UDP ? rlay->rl_us : rlay->rl_s;
		if (fd == -1 || (i == RELAY_FD_LISTEN && rlay->rl_nsteer > 0) ||
		    (i == RELAY_FD_UDP && rlay->rl_nusteer > 0))
			continue;
		if ((fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) == -1)
			fatal("%s: dup", __func__);
		memset(&rfd, 0, sizeof(rfd));
		rfd.relayid = rlay->rl_conf.id;
		rfd.type = i;
		proc_compose_imsg(ps, PROC_RELAY, -1, IMSG_CFG_RELAY_FD, 0,
		    fd, &rfd, sizeof(rfd));
	}
	return (config_setrelaycerts(env, rlay));
}

int
config_getrelay(struct relayd *env, struct imsg *imsg)
{
	struct relay	*rlay;

	IMSG_EXACT_SIZE_CHECK(imsg, &rlay->rl_conf);
	if ((rlay = calloc(1, sizeof(*rlay))) == NULL)
		return (-1);
	memcpy(&rlay->rl_conf, imsg->data, sizeof(rlay->rl_conf));
	rlay->rl_conf.name[sizeof(rlay->rl_conf.name) - 1] = '\0';
	rlay->rl_s = -1;
	rlay->rl_us = -1;
	TAILQ_INIT(&rlay->rl_tables);
	TAILQ_INIT(&rlay->rl_certs);
	if ((rlay->rl_proto = proto_find(env, rlay->rl_conf.proto)) == NULL)
		rlay->rl_proto = &env->sc_proto_default;
	config_takestats(rlay);
	TAILQ_INSERT_TAIL(env->sc_relays, rlay, rl_entry);
	return (0);
}

int
config_getrelaytable(struct relayd *env, struct imsg *imsg)
{
	struct ctl_relaytable	 crt;
	struct relay_table	*rlt;
	struct relay		*rlay;
	struct table		*tb;

	IMSG_EXACT_SIZE_CHECK(imsg, &crt);
	memcpy(&crt, imsg->data, sizeof(crt));
	if ((rlay = relay_find(env, crt.relayid)) == NULL ||
	    (tb = table_find(env, crt.id)) == NULL) {
		log_warnx("%s: unknown relay %u or table %u", __func__,
		    crt.relayid, crt.id);
		return (-1);
	}
	if ((rlt = calloc(1, sizeof(*rlt))) == NULL)
		return (-1);
	rlt->rlt_table = tb;
	rlt->rlt_mode = crt.mode;
	rlt->rlt_flags = crt.flags;
	TAILQ_INSERT_TAIL(&rlay->rl_tables, rlt, rlt_entry);
	return (0);
}

int
config_getrelayfd(struct relayd *env, struct imsg *imsg)
{
	struct ctl_relayfd	 rfd;
	struct relay		*rlay;

	IMSG_EXACT_SIZE_CHECK(imsg, &rfd);
	memcpy(&rfd, imsg->data, sizeof(rfd));
	if (imsg->fd == -1 ||
	    (rlay = relay_find(env, rfd.relayid)) == NULL) {
		log_warnx("%s: no socket or unknown relay %u", __func__,
		    rfd.relayid);
		if (imsg->fd != -1)
			close(imsg->fd);
		return (-1);
	}
	if (rfd.type == RELAY_FD_UDP) {
		if (rlay->rl_us != -1)
			close(rlay->rl_us);
		rlay->rl_us = imsg->fd;
		return (0);
	}
	if (rlay->rl_s != -1)
		close(rlay->rl_s);
	rlay->rl_s = imsg->fd;
	return (0);
}

/*
 * Files to the children, in pieces that fit a message: private keys to
 * ca only, the rest to the relays only.
 */
int
config_setrelaycerts(struct relayd *env, struct relay *rlay)
{
	struct relay_cert	*rc;
	struct ctl_relaycert	 crc;
	enum privsep_procid	 to;
	size_t			 chunk, max;
	uint8_t			*buf;

	max = MAX_IMSGSIZE - IMSG_HEADER_SIZE - sizeof(crc);
	if ((buf = malloc(MAX_IMSGSIZE)) == NULL)
		return (-1);
	TAILQ_FOREACH(rc, &rlay->rl_certs, rc_entry) {
		to = rc->rc_type == RELAY_CERT_KEY ||
		    rc->rc_type == RELAY_CERT_CAKEY ? PROC_CA : PROC_RELAY;
		memset(&crc, 0, sizeof(crc));
		crc.relayid = rlay->rl_conf.id;
		crc.type = rc->rc_type;
		crc.index = rc->rc_index;
		crc.total = rc->rc_len;
		do {
			chunk = rc->rc_len - crc.offset;
			if (chunk > max)
				chunk = max;
			memcpy(buf, &crc, sizeof(crc));
			memcpy(buf + sizeof(crc), rc->rc_data + crc.offset,
			    chunk);
			if (proc_compose(env->sc_ps, to, IMSG_CFG_RELAY_CERT,
			    buf, sizeof(crc) + chunk) == -1) {
				free(buf);
				return (-1);
			}
			crc.offset += chunk;
		} while (crc.offset < rc->rc_len);
	}
	explicit_bzero(buf, MAX_IMSGSIZE);
	free(buf);
	return (0);
}

int
config_getrelaycert(struct relayd *env, struct imsg *imsg)
{
	struct ctl_relaycert	 crc;
	struct relay_cert	*rc;
	struct relay		*rlay;
	size_t			 len;

	IMSG_SIZE_CHECK(imsg, &crc);
	memcpy(&crc, imsg->data, sizeof(crc));
	len = IMSG_DATA_SIZE(imsg) - sizeof(crc);
	if ((rlay = relay_find(env, crc.relayid)) == NULL ||
	    crc.type >= RELAY_CERT_MAX || crc.total > (1 << 24) ||
	    crc.offset > crc.total || len > crc.total - crc.offset)
		return (-1);
	if ((rc = relay_cert_find(rlay, crc.type, crc.index)) == NULL) {
		if (crc.offset != 0 ||
		    (rc = relay_cert_new(rlay, crc.type, crc.index)) == NULL ||
		    (rc->rc_data = calloc(1, crc.total + 1)) == NULL)
			return (-1);
		rc->rc_len = crc.total;
	}
	if (rc->rc_len != crc.total)
		return (-1);
	memcpy(rc->rc_data + crc.offset, (uint8_t *)imsg->data + sizeof(crc),
	    len);
	return (0);
}

/* Redirections and routers go to pfe only: it keeps their state. */
int
config_setrdr(struct relayd *env, struct rdr *rdr)
{
	return (proc_compose(env->sc_ps, PROC_PFE, IMSG_CFG_RDR, &rdr->conf,
	    sizeof(rdr->conf)));
}

int
config_getrdr(struct relayd *env, struct imsg *imsg)
{
	struct rdr	*rdr;

	IMSG_EXACT_SIZE_CHECK(imsg, &rdr->conf);
	if ((rdr = calloc(1, sizeof(*rdr))) == NULL)
		return (-1);
	memcpy(&rdr->conf, imsg->data, sizeof(rdr->conf));
	rdr->conf.name[sizeof(rdr->conf.name) - 1] = '\0';
	rdr->conf.tag[sizeof(rdr->conf.tag) - 1] = '\0';
	if (rdr->conf.nvirts < 0 || rdr->conf.nvirts > RDR_MAXVIRTS) {
		free(rdr);
		return (-1);
	}
	rdr->stats.id = rdr->conf.id;
	TAILQ_INSERT_TAIL(&env->sc_rdrs, rdr, entry);
	return (0);
}

int
config_setrouter(struct relayd *env, struct router *rt)
{
	return (proc_compose(env->sc_ps, PROC_PFE, IMSG_CFG_ROUTER,
	    &rt->conf, sizeof(rt->conf)));
}

int
config_getrouter(struct relayd *env, struct imsg *imsg)
{
	struct router	*rt;

	IMSG_EXACT_SIZE_CHECK(imsg, &rt->conf);
	if ((rt = calloc(1, sizeof(*rt))) == NULL)
		return (-1);
	memcpy(&rt->conf, imsg->data, sizeof(rt->conf));
	rt->conf.name[sizeof(rt->conf.name) - 1] = '\0';
	rt->conf.label[sizeof(rt->conf.label) - 1] = '\0';
	if (rt->conf.nroutes < 0 || rt->conf.nroutes > ROUTER_MAXROUTES) {
		free(rt);
		return (-1);
	}
	TAILQ_INSERT_TAIL(&env->sc_routers, rt, entry);
	return (0);
}

int
config_setdone(struct relayd *env)
{
	struct privsep	*ps = env->sc_ps;
	unsigned int	 id;

	for (id = PROC_PFE; id < PROC_MAX; id++)
		proc_compose(ps, id, IMSG_CFG_DONE, NULL, 0);
	return (0);
}

/*
 * The configuration messages of the parent, for every child.  Returns 0
 * when the message was one of them, -1 otherwise.
 */
int
config_dispatch(struct relayd *env, struct imsg *imsg)
{
	int	 ret = 0;

	switch (imsg->hdr.type) {
	case IMSG_CTL_RESET:
		ret = config_getreset(env, imsg);
		break;
	case IMSG_CFG_GLOBAL:
		ret = config_getcfg(env, imsg);
		break;
	case IMSG_CFG_TABLE:
		ret = config_gettable(env, imsg);
		break;
	case IMSG_CFG_HOST:
		ret = config_gethost(env, imsg);
		break;
	case IMSG_CFG_PROTO:
		ret = config_getproto(env, imsg);
		break;
	case IMSG_CFG_RULE:
		ret = config_getrule(env, imsg);
		break;
	case IMSG_CFG_RELAY:
		ret = config_getrelay(env, imsg);
		break;
	case IMSG_CFG_RELAY_TABLE:
		ret = config_getrelaytable(env, imsg);
		break;
	case IMSG_CFG_RELAY_FD:
		ret = config_getrelayfd(env, imsg);
		break;
	case IMSG_CFG_RELAY_CERT:
		ret = config_getrelaycert(env, imsg);
		break;
	case IMSG_CFG_RDR:
		ret = config_getrdr(env, imsg);
		break;
	case IMSG_CFG_ROUTER:
		ret = config_getrouter(env, imsg);
		break;
	case IMSG_CFG_DONE:
		env->sc_generation++;
		ret = proc_compose(env->sc_ps, PROC_PARENT, IMSG_CFG_DONE,
		    NULL, 0);
		break;
	default:
		return (-1);
	}
	if (ret == -1)
		fatalx("%s: bad %s", __func__, imsg_type_name(imsg->hdr.type));
	return (0);
}
