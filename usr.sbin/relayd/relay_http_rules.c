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
#include <sys/queue.h>
#include <sys/socket.h>

#include <ctype.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>

#include <openssl/evp.h>

#include "relayd.h"
#include "relay.h"
#include "http.h"

/*
 * Filter rules, as OpenBSD's relayd evaluates them: in order, the last
 * matching pass or block decides (pass when none matches), quick stops,
 * match rules apply their options without deciding.  The options of
 * the match rules and of the deciding rule act on the message once the
 * rules are through; tag and label take effect at once.
 */

#define HTTP_ACTIONS_MAX	64	/* rules whose options act */

/*
 * A rule whose options act, with the fields its tests found: as
 * OpenBSD's, its actions bind to them (a field a rule removed still
 * logs, "(removed)").
 */
struct http_act {
	struct relay_rule	*ha_rule;
	struct http_header	*ha_header;	/* its header key's field */
	struct http_header	*ha_cookie;	/* Cookie or Set-Cookie */
};

static int	 http_rule_match_target(struct http_msg *, struct relay_rule *);
#define HTTP_TARGET_MAX		8192	/* longer: no path matches */

/* Every "from" in buf, of size len, becomes "to"; -1 when it overflows. */
static int
http_replace(char *buf, size_t len, const char *from, const char *to)
{
	char	*p, *rest;
	size_t	 flen = strlen(from), tlen = strlen(to);

	for (p = buf; (p = strstr(p, from)) != NULL; p += tlen) {
		if (strlen(buf) - flen + tlen >= len)
			return (-1);
		if ((rest = strdup(p + flen)) == NULL)
			return (-1);
		memcpy(p, to, tlen);
		memcpy(p + tlen, rest, strlen(rest) + 1);
		free(rest);
	}
	return (0);
}

/* How a key type matches without a keyword */
#define HTTP_M_CASE		KV_MATCH_GLOB		/* a glob */
#define HTTP_M_NOCASE		KV_MATCH_GLOB_ICASE	/* a glob, no case */
#define HTTP_M_NAME		(-1)	/* a name, no case (cookie names) */

/*
 * Does str match s, a rule's key or value, as its keyword how says (dflt
 * without one)?  A pattern that fails to match in time does not match.
 */
static int
http_kv_match(const char *s, int how, int dflt, const char *str)
{
	if (s == NULL)
		return (1);	/* an omitted value is "*" */
	if (how == KV_MATCH_DEFAULT)
		how = dflt;
	switch (how) {
	case HTTP_M_NAME:
		return (strcasecmp(s, str) == 0);
	case KV_MATCH_GLOB:
		return (fnmatch(s, str, 0) == 0);
	case KV_MATCH_GLOB_ICASE:
		return (fnmatch(s, str, FNM_CASEFOLD) == 0);
	default:
		return (pattern_match(str, s, NULL) == 1);
	}
}

/* Does a header key's name match the field's?  (glob: without case) */
static int
http_name_match(const struct rule_kv *kv, const struct http_header *h)
{
	return (http_kv_match(kv->kv_key, kv->kv_keymatch == KV_MATCH_GLOB ?
	    KV_MATCH_GLOB_ICASE : kv->kv_keymatch, HTTP_M_NOCASE,
	    h->hh_name));
}

/* A field a header key of a rule matches, name and value. */
static int
http_kv_field(const struct http_header *h, const void *arg)
{
	const struct rule_kv	*kv = arg;

	return (http_name_match(kv, h) && http_kv_match(kv->kv_value,
	    kv->kv_valmatch, HTTP_M_CASE, h->hh_value));
}

/* The first field a header key of a rule matches. */
static struct http_header *
http_header_match(struct http_msg *m, struct rule_kv *kv)
{
	return (http_header_walk(m, NULL, http_kv_field, kv, 0));
}

/* A field whose name is a glob's (without case): its value any. */
static int
http_glob_field(const struct http_header *h, const void *key)
{
	return (key == NULL || fnmatch(key, h->hh_name, FNM_CASEFOLD) == 0);
}

/* The first header field, not removed, whose name matches the glob. */
static struct http_header *
http_header_find(struct http_msg *m, const char *key)
{
	return (http_header_walk(m, NULL, http_glob_field, key, 0));
}

/* In a "k=v&k2=v2" list (a query): a pair the rule's key matches. */
static int
http_pair_find(const char *list, int sep, struct rule_kv *kv, char *buf,
    size_t len)
{
	const char	*p = list, *end, *eq;
	size_t		 n;

	while (p != NULL && *p != '\0') {
		while (*p == ' ')
			p++;
		if ((end = strchr(p, sep)) == NULL)
			end = p + strlen(p);
		n = end - p;
		if (n < len) {
			memcpy(buf, p, n);
			buf[n] = '\0';
			if ((eq = strchr(buf, '=')) != NULL) {
				buf[eq - buf] = '\0';
				if (http_kv_match(kv->kv_key, kv->kv_keymatch,
				    HTTP_M_CASE, buf) &&
				    http_kv_match(kv->kv_value,
				    kv->kv_valmatch, HTTP_M_CASE, eq + 1)) {
					buf[eq - buf] = '=';
					return (1);
				}
			}
		}
		p = *end != '\0' ? end + 1 : NULL;
	}
	return (0);
}

/*
 * A cookie of a Cookie or Set-Cookie field, as OpenBSD finds it: the
 * name without case, the value a glob without case, its quotes
 * stripped; "$" attributes are no cookies.  "name=value" in buf.
 */
static int
http_cookie_find(const char *list, struct rule_kv *kv, char *buf,
    size_t len)
{
	const char	*p = list, *end;
	char		*eq, *v;
	size_t		 n;

	for (; p != NULL && *p != '\0'; p = *end != '\0' ? end + 1 : NULL) {
		p += strspn(p, " ");
		if ((end = strchr(p, ';')) == NULL)
			end = p + strlen(p);
		if ((n = end - p) >= len || *p == '$')
			continue;
		memcpy(buf, p, n);
		buf[n] = '\0';
		if ((eq = strchr(buf, '=')) == NULL)
			continue;
		*eq = '\0';
		v = eq + 1;
		if (*v == '"')
			v++;
		if (*v != '\0' && v[strlen(v) - 1] == '"')
			v[strlen(v) - 1] = '\0';
		if (http_kv_match(kv->kv_key, kv->kv_keymatch, HTTP_M_NAME,
		    buf) && http_kv_match(kv->kv_value, kv->kv_valmatch,
		    HTTP_M_NOCASE, v)) {
			*eq = '=';
			memmove(eq + 1, v, strlen(v) + 1);
			return (1);
		}
	}
	return (0);
}

/* The request target's path and query, split. */
static void
http_target_split(struct http_msg *m, char *path, size_t plen,
    const char **query)
{
	const char	*q;

	if ((q = strchr(m->hm_target, '?')) == NULL) {
		(void)strlcpy(path, m->hm_target, plen);
		*query = NULL;
		return;
	}
	(void)snprintf(path, plen, "%.*s", (int)(q - m->hm_target),
	    m->hm_target);
	*query = q + 1;
}

#define HTTP_URL_LEVELS		5	/* names tried, as OpenBSD */

/* One lookup string against a url key, or its SHA1 or MD5 digest. */
static int
http_url_equal(struct rule_kv *kv, const char *str)
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	char		 hex[EVP_MAX_MD_SIZE * 2 + 1];
	unsigned int	 len, i;

	if (kv->kv_digest == DIGEST_NONE)
		return (strcasecmp(kv->kv_key, str) == 0);
	if (EVP_Digest(str, strlen(str), md, &len,
	    kv->kv_digest == DIGEST_SHA1 ? EVP_sha1() : EVP_md5(), NULL) != 1)
		return (0);
	for (i = 0; i < len; i++)
		(void)snprintf(hex + i * 2, 3, "%02x", md[i]);
	return (strcasecmp(kv->kv_key, hex) == 0);
}

/*
 * A url rule: the host (lower case, no port) and its parent domains,
 * up to five names, each with the path and query, the path, and the
 * first four prefixes of the path that end with "/", as OpenBSD looks
 * them up.  1 for a match, 0 for none, -1 when the Host field names no
 * host.
 */
static int
http_url_match(struct rule_kv *kv, const char *hosthdr, const char *path,
    const char *query)
{
	char		 host[RELAYD_HOSTNAME_MAX + 1];
	char		 str[HTTP_TARGET_MAX * 2];
	const char	*names[HTTP_URL_LEVELS], *p;
	size_t		 i, j, n = 0;
	int		 dots = 0;

	for (i = 0; i < sizeof(host) - 1 && hosthdr[i] != '\0' &&
	    hosthdr[i] != ':'; i++)
		host[i] = tolower((unsigned char)hosthdr[i]);
	host[i] = '\0';
	while (i > 0 && host[i - 1] == '.')
		host[--i] = '\0';
	/* no name to look up: a bad request, as OpenBSD answers it */
	if (i == 0)
		return (-1);
	names[n++] = host;
	for (p = host + strlen(host); p > host && n < HTTP_URL_LEVELS; p--)
		if (p[-1] == '.' && ++dots > 1)
			names[n++] = p;
	for (i = 0; i < n; i++) {
		if (query != NULL) {
			(void)snprintf(str, sizeof(str), "%s%s?%s", names[i],
			    path, query);
			if (http_url_equal(kv, str))
				return (1);
		}
		(void)snprintf(str, sizeof(str), "%s%s", names[i], path);
		if (http_url_equal(kv, str))
			return (1);
		/* "/", "/1/", "/1/2/", "/1/2/3/": four, as OpenBSD's */
		for (p = path, j = 0; j < HTTP_URL_LEVELS - 1 &&
		    (p = strchr(p, '/')) != NULL; p++, j++) {
			(void)snprintf(str, sizeof(str), "%s%.*s", names[i],
			    (int)(p - path + 1), path);
			if (http_url_equal(kv, str))
				return (1);
		}
	}
	return (0);
}

/*
 * Does rule r match the message?  (Its tests, without its actions; the
 * fields they found go to act.)  1 or 0; -1 when a url test has no host
 * to look up.
 */
static int
http_rule_match(struct ctl_relay_event *cre, struct http_msg *m,
    struct relay_rule *r, struct sockaddr_storage *local,
    struct http_act *act)
{
	struct rsession		*con = cre->con;
	struct rule_kv		*kv;
	char			 buf[HTTP_TARGET_MAX];

	memset(act, 0, sizeof(*act));
	act->ha_rule = r;
	if ((int)r->rule_dir != cre->dir)
		return (0);
	if (r->rule_af != AF_UNSPEC &&
	    con->se_in.ss.ss_family != r->rule_af)
		return (0);
	if (!addr_match(&r->rule_src, &con->se_in.ss) ||
	    !addr_match(&r->rule_dst, local))
		return (0);
	if (r->rule_method != 0 && (cre->dir != RELAY_DIR_REQUEST ||
	    r->rule_method != m->hm_method))
		return (0);
	if (r->rule_taggedname[0] != '\0' &&
	    strcmp(r->rule_taggedname, con->se_tag) != 0)
		return (0);

	kv = &r->rule_kv[KEY_TYPE_HEADER];
	if (kv->kv_set && kv->kv_option != KEY_OPTION_APPEND &&
	    kv->kv_option != KEY_OPTION_SET &&
	    (act->ha_header = http_header_match(m, kv)) == NULL)
		return (0);

	kv = &r->rule_kv[KEY_TYPE_COOKIE];
	if (kv->kv_set && kv->kv_option != KEY_OPTION_APPEND &&
	    kv->kv_option != KEY_OPTION_SET) {
		act->ha_cookie = http_header_find(m, cre->dir ==
		    RELAY_DIR_REQUEST ? "Cookie" : "Set-Cookie");
		if (act->ha_cookie == NULL || (kv->kv_key != NULL &&
		    !http_cookie_find(act->ha_cookie->hh_value, kv, buf,
		    sizeof(buf))))
			return (0);
	}
	if (cre->dir != RELAY_DIR_REQUEST)
		return (1);
	return (http_rule_match_target(m, r));
}

/* The tests of a request's target: path, query and url keys. */
static int
http_rule_match_target(struct http_msg *m, struct relay_rule *r)
{
	struct rule_kv		*kv;
	struct http_header	*h;
	char			 path[HTTP_TARGET_MAX];
	char			 buf[HTTP_TARGET_MAX * 2];
	const char		*query;

	if ((r->rule_kv[KEY_TYPE_PATH].kv_set ||
	    r->rule_kv[KEY_TYPE_QUERY].kv_set ||
	    r->rule_kv[KEY_TYPE_URL].kv_set) &&
	    strlen(m->hm_target) >= sizeof(path))
		return (0);
	http_target_split(m, path, sizeof(path), &query);
	kv = &r->rule_kv[KEY_TYPE_PATH];
	if (kv->kv_set && kv->kv_option != KEY_OPTION_STRIP &&
	    kv->kv_key != NULL) {
		if (!http_kv_match(kv->kv_key, kv->kv_keymatch, HTTP_M_CASE,
		    path))
			return (0);
		if (kv->kv_option == KEY_OPTION_NONE &&
		    !http_kv_match(kv->kv_value, kv->kv_valmatch,
		    HTTP_M_NOCASE, query != NULL ? query : ""))
			return (0);
	}
	kv = &r->rule_kv[KEY_TYPE_QUERY];
	if (kv->kv_set && kv->kv_key != NULL && (query == NULL ||
	    !http_pair_find(query, '&', kv, buf, sizeof(buf))))
		return (0);
	kv = &r->rule_kv[KEY_TYPE_URL];
	/* without a Host field the rule matches, as OpenBSD's */
	if (!kv->kv_set || kv->kv_key == NULL ||
	    (h = http_header_find(m, "Host")) == NULL)
		return (1);
	(void)snprintf(buf, sizeof(buf), "%s%s", h->hh_value, path);
	/* with a keyword: the host and path, matched as it says */
	if (kv->kv_keymatch != KV_MATCH_DEFAULT)
		return (http_kv_match(kv->kv_key, kv->kv_keymatch,
		    HTTP_M_NOCASE, buf));
	/* a url that is only logged is a glob, as OpenBSD's */
	if (r->rule_action != RULE_ACTION_BLOCK &&
	    kv->kv_option == KEY_OPTION_LOG && kv->kv_digest == DIGEST_NONE &&
	    fnmatch(kv->kv_key, buf, FNM_CASEFOLD) == 0)
		return (1);
	return (http_url_match(kv, h->hh_value, path, query));
}

/* $HOST, $REMOTE_ADDR, ... in a value, as OpenBSD expands them. */
static int
http_expand(struct ctl_relay_event *cre, struct http_msg *m,
    struct sockaddr_storage *local, const char *val, char *buf, size_t len)
{
	struct rsession	*con = cre->con;
	struct relay	*rlay = con->se_relay;
	const char	*host;
	char		 tmp[INET6_ADDRSTRLEN + 8];
	static const char *macros[] = { "$HOST", "$REMOTE_ADDR",
	    "$REMOTE_PORT", "$SERVER_ADDR", "$SERVER_PORT", "$SERVER_NAME",
	    "$TIMEOUT" };
	size_t		 i;

	if (strlcpy(buf, val, len) >= len)
		return (-1);
	for (i = 0; i < nitems(macros); i++) {
		if (strstr(buf, macros[i]) == NULL)
			continue;
		switch (i) {
		case 0:
			host = http_header_get(m, "Host");
			if (host != NULL)
				(void)strlcpy(tmp, host, sizeof(tmp));
			else if (print_host(local, tmp, sizeof(tmp)) == NULL)
				return (-1);
			break;
		case 1:
			if (print_host(&con->se_in.ss, tmp, sizeof(tmp)) ==
			    NULL)
				return (-1);
			break;
		case 2:
			(void)snprintf(tmp, sizeof(tmp), "%d",
			    ss_port(&con->se_in.ss));
			break;
		case 3:
			if (print_host(local, tmp, sizeof(tmp)) == NULL)
				return (-1);
			break;
		case 4:
			(void)snprintf(tmp, sizeof(tmp), "%d", ss_port(local));
			break;
		case 5:
			(void)strlcpy(tmp, HTTP_SERVERNAME, sizeof(tmp));
			break;
		default:
			(void)snprintf(tmp, sizeof(tmp), "%lld",
			    (long long)rlay->rl_conf.timeout.tv_sec);
			break;
		}
		if (http_replace(buf, len, macros[i], tmp) != 0)
			return (-1);
	}
	return (0);
}

/* " [label, key: value]" for a request, " {...}" for a response */
static void
http_rule_log(struct rsession *con, int dir, const char *key,
    const char *value)
{
	char	 buf[512];

	(void)snprintf(buf, sizeof(buf), " %s%s%s%s%s%s%s",
	    dir == RELAY_DIR_REQUEST ? "[" : "{",
	    con->se_label[0] != '\0' ? con->se_label : "",
	    con->se_label[0] != '\0' ? ", " : "",
	    key != NULL ? key : "(unknown)", value != NULL ? ": " : "",
	    value != NULL ? value : "", dir == RELAY_DIR_REQUEST ? "]" : "}");
	relay_log(con, buf);
	con->se_haslog = 1;
}

/* A "key=value" pair, logged as key and value. */
static void
http_rule_log_pair(struct rsession *con, int dir, char *pair)
{
	char	*eq;

	if ((eq = strchr(pair, '=')) != NULL)
		*eq++ = '\0';
	http_rule_log(con, dir, pair, eq);
}

/* A rule's hash option: the value goes into the load-balancing hash. */
static void
http_rule_hash(struct rsession *con, const char *value)
{
	if (value == NULL)
		return;
	con->se_hash = compat_siphash(con->se_relay->rl_conf.hashkey.key8,
	    value, strlen(value), con->se_hash);
}

/* Strip n leading components of a path ("/a/b/c", 1: "/b/c"). */
static const char *
http_path_strip(const char *path, int n)
{
	const char	*p;

	for (; n > 0 && *path != '\0'; n--)
		if ((p = strchr(path + 1, '/')) != NULL)
			path = p;
		else
			path = "/";
	return (path);
}

/*
 * A field logged: " [Name: value]", "(removed)" after a rule took it;
 * nothing without one.
 */
static void
http_rule_log_field(struct rsession *con, int dir, struct http_header *h)
{
	char	*v = NULL;

	if (h == NULL)
		return;
	if (h->hh_removed && asprintf(&v, "%s (removed)", h->hh_value) == -1)
		v = NULL;
	http_rule_log(con, dir, h->hh_name, v != NULL ? v : h->hh_value);
	free(v);
}

/*
 * A header key's option: a field set, appended, removed, hashed, logged;
 * h is the field the rule's test found.
 */
static int
http_apply_header(struct ctl_relay_event *cre, struct http_msg *m,
    struct rule_kv *kv, struct sockaddr_storage *local,
    struct http_header *h)
{
	struct rsession		*con = cre->con;
	struct http_header	*f;
	char			 val[HTTP_TARGET_MAX];
	const char		*v = "";

	if (kv->kv_value != NULL) {
		if (http_expand(cre, m, local, kv->kv_value, val,
		    sizeof(val)) == -1)
			return (-1);
		v = val;
	}
	switch (kv->kv_option) {
	case KEY_OPTION_SET:
		if ((f = http_header_find(m, kv->kv_key)) != NULL)
			return (http_header_value(f, v));
		/* FALLTHROUGH */
	case KEY_OPTION_APPEND:
		return (http_header_add(m, kv->kv_key, v));
	case KEY_OPTION_REMOVE:
		TAILQ_FOREACH(f, &m->hm_headers, hh_entry)
			if (http_name_match(kv, f))
				f->hh_removed = 1;
		break;
	case KEY_OPTION_HASH:
		if (h != NULL)
			http_rule_hash(con, h->hh_value);
		break;
	case KEY_OPTION_LOG:
		http_rule_log_field(con, cre->dir, h);
		break;
	default:
		break;
	}
	return (0);
}

/*
 * A cookie key's option, on the Cookie (request) or Set-Cookie field
 * that the rule's test found (h) or the message has.
 */
static int
http_apply_cookie(struct ctl_relay_event *cre, struct http_msg *m,
    struct rule_kv *kv, struct sockaddr_storage *local,
    struct http_header *h)
{
	struct rsession		*con = cre->con;
	char			 val[HTTP_TARGET_MAX];
	char			 buf[HTTP_TARGET_MAX];
	const char		*cname;

	cname = cre->dir == RELAY_DIR_REQUEST ? "Cookie" : "Set-Cookie";
	if (h == NULL)
		h = http_header_find(m, cname);
	switch (kv->kv_option) {
	case KEY_OPTION_APPEND:
	case KEY_OPTION_SET:
		if (kv->kv_key == NULL)
			break;
		if (http_expand(cre, m, local, kv->kv_value != NULL ?
		    kv->kv_value : "", val, sizeof(val)) == -1)
			return (-1);
		if (snprintf(buf, sizeof(buf), "%s=%s;", kv->kv_key, val) >=
		    (int)sizeof(buf))
			return (-1);
		if (h == NULL || kv->kv_option == KEY_OPTION_APPEND)
			return (http_header_add(m, cname, buf));
		return (http_header_value(h, buf));
	case KEY_OPTION_REMOVE:
		if (h != NULL)
			h->hh_removed = 1;
		break;
	case KEY_OPTION_HASH:
		if (h != NULL && (kv->kv_key == NULL ||
		    http_cookie_find(h->hh_value, kv, buf, sizeof(buf))))
			http_rule_hash(con, kv->kv_key != NULL ?
			    buf : h->hh_value);
		break;
	case KEY_OPTION_LOG:
		/* the whole field, as OpenBSD logs it */
		http_rule_log_field(con, cre->dir, h);
		/* FALLTHROUGH */
	default:
		return (0);
	}
	return (0);
}

/* A path key's option: the request target changes, or is hashed, logged. */
static int
http_apply_path(struct ctl_relay_event *cre, struct http_msg *m,
    struct rule_kv *kv, struct sockaddr_storage *local)
{
	struct rsession	*con = cre->con;
	char		 val[HTTP_TARGET_MAX];
	char		 path[HTTP_TARGET_MAX], *target;
	const char	*query, *p;

	http_target_split(m, path, sizeof(path), &query);
	p = path;
	switch (kv->kv_option) {
	case KEY_OPTION_APPEND:
		if (snprintf(val, sizeof(val), "%s%s", path,
		    kv->kv_key != NULL ? kv->kv_key : "") >= (int)sizeof(val))
			return (-1);
		p = val;
		break;
	case KEY_OPTION_SET:
		if (kv->kv_value != NULL && http_expand(cre, m, local,
		    kv->kv_value, val, sizeof(val)) == -1)
			return (-1);
		p = kv->kv_value != NULL ? val : path;
		break;
	case KEY_OPTION_REMOVE:
		p = "/";
		break;
	case KEY_OPTION_STRIP:
		p = http_path_strip(path, strtonum(kv->kv_value, 0, INT_MAX,
		    NULL));
		break;
	case KEY_OPTION_LOG:
		http_rule_log(con, cre->dir, path, query);
		break;
	case KEY_OPTION_HASH:
		http_rule_hash(con, path);
		break;
	default:
		break;
	}
	if (p == path)
		return (0);
	if (asprintf(&target, "%s%s%s", p, query != NULL ? "?" : "",
	    query != NULL ? query : "") == -1)
		return (-1);
	free(m->hm_target);
	m->hm_target = target;
	return (0);
}

/* A url key logs the host and path; a query key logs or hashes a pair. */
static void
http_apply_url_query(struct ctl_relay_event *cre, struct http_msg *m,
    struct relay_rule *r)
{
	struct rsession		*con = cre->con;
	struct rule_kv		*kv;
	struct http_header	*h;
	char			 path[HTTP_TARGET_MAX];
	char			 buf[HTTP_TARGET_MAX];
	const char		*query;

	http_target_split(m, path, sizeof(path), &query);
	kv = &r->rule_kv[KEY_TYPE_URL];
	if (kv->kv_set && kv->kv_option == KEY_OPTION_LOG &&
	    (h = http_header_find(m, "Host")) != NULL) {
		/* a digest logs itself, as OpenBSD's */
		if (kv->kv_digest != DIGEST_NONE)
			(void)strlcpy(buf, kv->kv_key, sizeof(buf));
		else
			(void)snprintf(buf, sizeof(buf), "%s%s", h->hh_value,
			    path);
		http_rule_log(con, cre->dir, buf, NULL);
	}
	kv = &r->rule_kv[KEY_TYPE_QUERY];
	if (kv->kv_set && (kv->kv_option == KEY_OPTION_LOG ||
	    kv->kv_option == KEY_OPTION_HASH) && query != NULL &&
	    http_pair_find(query, '&', kv, buf, sizeof(buf))) {
		if (kv->kv_option == KEY_OPTION_HASH)
			http_rule_hash(con, buf);
		else
			http_rule_log_pair(con, cre->dir, buf);
	}
}

/* The options of one rule act on the message: -1 for no memory. */
static int
http_rule_apply(struct ctl_relay_event *cre, struct http_msg *m,
    struct http_act *act, struct sockaddr_storage *local)
{
	struct relay_rule	*r = act->ha_rule;
	struct rule_kv		*kv;

	kv = &r->rule_kv[KEY_TYPE_HEADER];
	if (kv->kv_set && kv->kv_key != NULL &&
	    http_apply_header(cre, m, kv, local, act->ha_header) == -1)
		return (-1);
	kv = &r->rule_kv[KEY_TYPE_COOKIE];
	if (kv->kv_set && kv->kv_option != KEY_OPTION_NONE &&
	    http_apply_cookie(cre, m, kv, local, act->ha_cookie) == -1)
		return (-1);
	if (cre->dir != RELAY_DIR_REQUEST ||
	    strlen(m->hm_target) >= HTTP_TARGET_MAX)
		return (0);
	kv = &r->rule_kv[KEY_TYPE_PATH];
	if (kv->kv_set && kv->kv_option != KEY_OPTION_NONE &&
	    http_apply_path(cre, m, kv, local) == -1)
		return (-1);
	http_apply_url_query(cre, m, r);
	return (0);
}

/*
 * pass log, block log (OpenBSD -current's): the decision on a message, on
 * a line of its own whatever "log connection" says.  A peer wrote the
 * target or the reason: what a terminal could act on is written as \ooo.
 */
static void
http_rule_log_decision(struct rsession *con, struct http_msg *m,
    struct relay_rule *r)
{
	char		 addr[INET6_ADDRSTRLEN], what[512];
	const char	*s;
	size_t		 n;
	int		 req = m->hm_dir == RELAY_DIR_REQUEST;

	if (req) {
		n = snprintf(what, sizeof(what), "%s ",
		    http_method_name(m->hm_method));
		s = m->hm_target;
	} else {
		s = m->hm_reason != NULL ? m->hm_reason : "";
		n = snprintf(what, sizeof(what), "%03d%s", m->hm_code,
		    *s != '\0' ? " " : "");
	}
	for (; *s != '\0' && n < sizeof(what) - 5; s++)
		if (isprint((unsigned char)*s) && *s != '\\')
			what[n++] = *s;
		else
			n += snprintf(what + n, 5, "\\%03o", (unsigned char)*s);
	what[n] = '\0';
	if (print_host(&con->se_in.ss, addr, sizeof(addr)) == NULL)
		(void)strlcpy(addr, "?", sizeof(addr));
	logit(LOG_INFO, "relay %s, session %u, %s %s %s %s, rule %u: %s",
	    con->se_relay->rl_conf.name, con->se_id,
	    r->rule_action == RULE_ACTION_BLOCK ? "block" : "pass",
	    req ? "request" : "response", req ? "from" : "to", addr,
	    r->rule_id, what);
}

/* The fields rules removed go, once every rule has logged. */
static void
http_rules_purge(struct http_msg *m)
{
	struct http_header	*h, *next;

	for (h = TAILQ_FIRST(&m->hm_headers); h != NULL; h = next) {
		next = TAILQ_NEXT(h, hh_entry);
		if (h->hh_removed)
			http_header_remove(m, h);
	}
}

/*
 * Run the protocol's rules on a message head: 0 to pass it, or the
 * status of the refusal (403 blocked, 400 a url rule and a Host field
 * without a name, 500 no memory).
 */
int
http_rules(struct ctl_relay_event *cre, struct http_msg *m,
    struct relay_table **table)
{
	struct rsession		*con = cre->con;
	struct protocol		*proto = con->se_relay->rl_proto;
	struct relay_rule	*r;
	struct http_act		 acts[HTTP_ACTIONS_MAX], act, decided;
	struct sockaddr_storage	*local;
	struct relay_table	*rlt;
	const char		*fwd = NULL;
	size_t			 len;
	int			 n = 0, i, block = 0, match, ret = 0;

	*table = NULL;
	if (TAILQ_EMPTY(&proto->rules))
		return (0);
	local = relay_sockname(con);
	decided.ha_rule = NULL;
	TAILQ_FOREACH(r, &proto->rules, rule_entry) {
		if ((match = http_rule_match(cre, m, r, local, &act)) == -1)
			return (400);
		if (match == 0)
			continue;
		if (r->rule_tag != 0)
			(void)strlcpy(con->se_tag, r->rule_tag == RULE_NO ?
			    "" : r->rule_tagname, sizeof(con->se_tag));
		if (r->rule_label != 0)
			(void)strlcpy(con->se_label, r->rule_label == RULE_NO ?
			    "" : r->rule_labelname, sizeof(con->se_label));
		if (r->rule_action == RULE_ACTION_MATCH) {
			if (n < HTTP_ACTIONS_MAX)
				acts[n++] = act;
			continue;
		}
		decided = act;
		block = r->rule_action == RULE_ACTION_BLOCK;
		if (r->rule_flags & RULE_FLAG_QUICK)
			break;
	}
	if (decided.ha_rule != NULL && n < HTTP_ACTIONS_MAX)
		acts[n++] = decided;
	for (i = 0; i < n && ret == 0; i++) {
		if (http_rule_apply(cre, m, &acts[i], local) == -1)
			ret = 500;
		if (acts[i].ha_rule->rule_tablename[0] != '\0')
			fwd = acts[i].ha_rule->rule_tablename;
	}
	http_rules_purge(m);
	if (ret != 0)
		return (ret);
	if (decided.ha_rule != NULL &&
	    (decided.ha_rule->rule_flags & RULE_FLAG_LOG))
		http_rule_log_decision(con, m, decided.ha_rule);
	if (block)
		return (403);
	if (fwd != NULL && cre->dir == RELAY_DIR_REQUEST) {
		/* a relay's copy of a table is named "table:port" */
		len = strlen(fwd);
		TAILQ_FOREACH(rlt, &con->se_relay->rl_tables, rlt_entry)
			if (strncmp(rlt->rlt_table->conf.name, fwd, len) == 0 &&
			    (rlt->rlt_table->conf.name[len] == '\0' ||
			    rlt->rlt_table->conf.name[len] == ':'))
				break;
		if (rlt == NULL) {
			log_warnx("relay %s: a rule forwards to <%s>, which "
			    "the relay does not forward to",
			    con->se_relay->rl_conf.name, fwd);
			return (500);
		}
		*table = rlt;
	}
	return (0);
}

/*
 * OpenBSD's error page for code, msg the detail it shows (none for an
 * internal error, whose detail stays in the log): the HTML body, or
 * NULL without memory or an address to name.
 */
char *
http_error_page(struct rsession *con, int code, const char *msg)
{
	struct relay		*rlay = con->se_relay;
	struct protocol		*proto = rlay->rl_proto;
	const char		*name = http_error_name(code), *style;
	char			 host[INET6_ADDRSTRLEN];
	char			*body;

	if (print_host(&rlay->rl_conf.ss, host, sizeof(host)) == NULL)
		return (NULL);
	style = proto->style != NULL ? proto->style :
	    "body { background-color: #a00000; color: white; "
	    "font-family: 'Comic Sans MS', 'Chalkboard SE', "
	    "'Comic Neue', sans-serif; }\n"
	    "hr { border: 0; border-bottom: 1px dashed; }\n";
	if (asprintf(&body, "<!DOCTYPE html>\n<html>\n<head>\n"
	    "<title>%03d %s</title>\n"
	    "<style type=\"text/css\"><!--\n%s\n--></style>\n"
	    "</head>\n<body>\n<h1>%s</h1>\n"
	    "<div id='m'>%s</div>\n<div id='l'>%s</div>\n"
	    "<hr><address>%s at %s port %d</address>\n"
	    "</body>\n</html>\n", code, name, style, name,
	    code == 500 ? "" : msg, con->se_label, HTTP_SERVERNAME,
	    host, (int)rlay->rl_conf.port) == -1)
		return (NULL);
	return (body);
}
