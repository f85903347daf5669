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
 * The parser: good configurations and what they become, and one test
 * case for every error message, each as relayd -n prints it.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <atf-c.h>

#include "relayd.h"

static struct relayd *
new_env(void)
{
	struct relayd	*env;

	ATF_REQUIRE((env = calloc(1, sizeof(*env))) != NULL);
	ATF_REQUIRE(config_init(env) == 0);
	return (env);
}

static void
write_conf(const char *name, const char *text)
{
	FILE	*f;

	ATF_REQUIRE((f = fopen(name, "w")) != NULL);
	ATF_REQUIRE(fputs(text, f) >= 0);
	ATF_REQUIRE(fclose(f) == 0);
}

static struct relayd *
parse_ok(const char *text)
{
	struct relayd	*env = new_env();

	write_conf("t.conf", text);
	log_init(1, LOG_DAEMON);
	env->sc_conffile = "t.conf";
	ATF_REQUIRE_MSG(parse_config("t.conf", env) == 0,
	    "configuration rejected");
	return (env);
}

/* Parse in a child, as relayd -n would, and compare what it printed. */
static void
parse_fails(const char *text, const char *errors)
{
	struct relayd	*env;
	pid_t		 pid;

	write_conf("t.conf", text);
	pid = atf_utils_fork();
	if (pid == 0) {
		log_init(1, LOG_DAEMON);
		env = new_env();
		env->sc_conffile = "t.conf";
		exit(parse_config("t.conf", env) == 0 ? 0 : 1);
	}
	atf_utils_wait(pid, 1, "", errors);
}

#define RELAY_OK \
	"relay r {\n\tlisten on 127.0.0.1 port 8080\n" \
	"\tforward to 127.0.0.1 port 80\n}\n"

#define ERR_TC(name, text, errors)			\
ATF_TC_WITHOUT_HEAD(name);				\
ATF_TC_BODY(name, tc)					\
{							\
	parse_fails(text, errors);			\
}

/* Good configurations */

ATF_TC_WITHOUT_HEAD(minimal_relay);
ATF_TC_BODY(minimal_relay, tc)
{
	struct relayd	*env = parse_ok(RELAY_OK);
	struct relay	*r;

	r = TAILQ_FIRST(env->sc_relays);
	ATF_REQUIRE(r != NULL);
	ATF_CHECK_STREQ(r->rl_conf.name, "r");
	ATF_CHECK_EQ(r->rl_conf.port, 8080);
	ATF_CHECK_EQ(r->rl_conf.dstport, 80);
	ATF_CHECK_EQ(r->rl_conf.timeout.tv_sec, RELAY_TIMEOUT);
	ATF_CHECK_STREQ(r->rl_proto->name, "default");
	ATF_CHECK_EQ(env->sc_conf.prefork_relay, RELAY_NUMPROC);
	ATF_CHECK_STREQ(env->sc_conf.socket, RELAYD_SOCKET);
}

ATF_TC_WITHOUT_HEAD(http_protocol);
ATF_TC_BODY(http_protocol, tc)
{
	struct relayd	*env = parse_ok("http protocol p {\n"
	    "\thttp { headerlen 4096, websockets }\n"
	    "\treturn error style \"body { color: red; }\"\n}\n"
	    "relay r {\n\tlisten on 127.0.0.1 port 8080\n\tprotocol p\n"
	    "\tforward to 127.0.0.1 port 80\n}\n");
	struct protocol	*p;

	p = TAILQ_FIRST(env->sc_protos);
	ATF_REQUIRE(p != NULL);
	ATF_CHECK_EQ(p->type, RELAY_PROTO_HTTP);
	ATF_CHECK_EQ(p->httpheaderlen, 4096);
	ATF_CHECK(p->httpflags & HTTPFLAG_WEBSOCKETS);
	ATF_CHECK(p->flags & F_RETURN);
	ATF_CHECK_STREQ(p->style, "body { color: red; }");
}

ATF_TC_WITHOUT_HEAD(globals);
ATF_TC_BODY(globals, tc)
{
	struct relayd	*env = parse_ok(
	    "interval 20\ntimeout 500\nprefork 5\n"
	    "log state changes\nlog host checks\nlog connection errors\n"
	    "socket \"/tmp/x.sock\"\nsplice engine copy\n" RELAY_OK);

	ATF_CHECK_EQ(env->sc_conf.interval.tv_sec, 20);
	ATF_CHECK_EQ(env->sc_conf.timeout.tv_usec, 500000);
	ATF_CHECK_EQ(env->sc_conf.prefork_relay, 5);
	ATF_CHECK_EQ(env->sc_conf.opts & RELAYD_OPT_LOGALL,
	    RELAYD_OPT_LOGUPDATE | RELAYD_OPT_LOGHOSTCHECK |
	    RELAYD_OPT_LOGCONERR);
	ATF_CHECK_STREQ(env->sc_conf.socket, "/tmp/x.sock");
	ATF_CHECK_EQ(env->sc_conf.splice_engine, SPLICE_ENGINE_COPY);
}

ATF_TC_WITHOUT_HEAD(log_connection_both);
ATF_TC_BODY(log_connection_both, tc)
{
	struct relayd	*env = parse_ok("log connection\n" RELAY_OK);

	ATF_CHECK_EQ(env->sc_conf.opts & RELAYD_OPT_LOGALL,
	    RELAYD_OPT_LOGCON | RELAYD_OPT_LOGCONERR);
}

ATF_TC_WITHOUT_HEAD(macros_and_continuation);
ATF_TC_BODY(macros_and_continuation, tc)
{
	struct relayd	*env = parse_ok(
	    "ext = \"127.0.0.1\"\nlport = 8443\n# a comment\n"
	    "relay \"web-1.example\" { # trailing comment\n"
	    "\tlisten on $ext port $lport\n"
	    "\tforward to 127.0.0.1 \\\n\t    port 80\n}\n");
	struct relay	*r = TAILQ_FIRST(env->sc_relays);

	ATF_REQUIRE(r != NULL);
	ATF_CHECK_STREQ(r->rl_conf.name, "web-1.example");
	ATF_CHECK_EQ(r->rl_conf.port, 8443);
	ATF_CHECK_EQ(r->rl_conf.dstport, 80);
}

ATF_TC_WITHOUT_HEAD(cmdline_macro_wins);
ATF_TC_BODY(cmdline_macro_wins, tc)
{
	struct relayd	*env;
	char		 def[] = "lport=9999";

	ATF_REQUIRE(cmdline_symset(def) == 0);
	env = parse_ok("lport = 8000\nrelay r {\n"
	    "\tlisten on 127.0.0.1 port $lport\n"
	    "\tforward to 127.0.0.1 port 80\n}\n");
	ATF_CHECK_EQ(TAILQ_FIRST(env->sc_relays)->rl_conf.port, 9999);
}

ATF_TC_WITHOUT_HEAD(include_file);
ATF_TC_BODY(include_file, tc)
{
	struct relayd	*env;

	write_conf("inc.conf", "prefork 7\n");
	env = parse_ok("include \"inc.conf\"\n" RELAY_OK);
	ATF_CHECK_EQ(env->sc_conf.prefork_relay, 7);
}

ATF_TC_WITHOUT_HEAD(tables_and_modes);
ATF_TC_BODY(tables_and_modes, tc)
{
	struct relayd		*env = parse_ok(
	    "table <web> { 127.0.0.1 retry 2, 127.0.0.2\n 127.0.0.3 }\n"
	    "table <fallback> disable { 127.0.0.9 }\n"
	    "relay r {\n\tlisten on 127.0.0.1 port 8080\n"
	    "\tforward to <web> port 80 mode source-hash "
	    "0x00112233445566778899aabbccddeeff\n"
	    "\tforward to <fallback> mode random timeout 100\n}\n");
	struct relay		*r = TAILQ_FIRST(env->sc_relays);
	struct relay_table	*rlt;
	struct table		*tb;
	struct host		*h;
	int			 n = 0;

	ATF_REQUIRE(r != NULL);
	rlt = TAILQ_FIRST(&r->rl_tables);
	ATF_REQUIRE(rlt != NULL);
	tb = rlt->rlt_table;
	ATF_CHECK_STREQ(tb->conf.name, "web:80");
	ATF_CHECK_EQ(rlt->rlt_mode, RELAY_DSTMODE_SRCHASH);
	ATF_CHECK((rlt->rlt_flags & F_BACKUP) == 0);
	ATF_CHECK_EQ(r->rl_conf.hashkey.key8[15], 0xff);
	TAILQ_FOREACH(h, &tb->hosts, entry) {
		ATF_CHECK_EQ(ss_port(&h->conf.ss), 80);
		n++;
	}
	ATF_CHECK_EQ(n, 3);
	ATF_CHECK_EQ(TAILQ_FIRST(&tb->hosts)->conf.retry, 2);

	rlt = TAILQ_NEXT(rlt, rlt_entry);
	ATF_REQUIRE(rlt != NULL);
	/* no port given: the listen port */
	ATF_CHECK_STREQ(rlt->rlt_table->conf.name, "fallback:8080");
	ATF_CHECK(rlt->rlt_flags & F_BACKUP);
	ATF_CHECK(rlt->rlt_table->conf.flags & F_DISABLE);
	ATF_CHECK_EQ(rlt->rlt_mode, RELAY_DSTMODE_RANDOM);
	ATF_CHECK_EQ(rlt->rlt_table->conf.timeout.tv_usec, 100000);
}

ATF_TC_WITHOUT_HEAD(protocol_tcp_options);
ATF_TC_BODY(protocol_tcp_options, tc)
{
	struct relayd	*env = parse_ok(
	    "protocol p {\n\ttcp { nodelay, socket buffer 65536, "
	    "backlog 128 }\n\ttcp no splice\n\ttcp ip ttl 64\n"
	    "\ttcp ip minttl 2\n\ttcp no sack\n}\n"
	    "relay r {\n\tlisten on 127.0.0.1 port 8080\n"
	    "\tprotocol p\n\tforward to 127.0.0.1 port 80\n"
	    "\tsession timeout 30\n\tdisable\n}\n");
	struct relay	*r = TAILQ_FIRST(env->sc_relays);
	struct protocol	*p = r->rl_proto;

	ATF_CHECK_STREQ(p->name, "p");
	ATF_CHECK(p->tcpflags & TCPFLAG_NODELAY);
	ATF_CHECK(p->tcpflags & TCPFLAG_NSPLICE);
	ATF_CHECK(p->tcpflags & TCPFLAG_NSACK);
	ATF_CHECK_EQ(p->tcpbufsiz, 65536);
	ATF_CHECK_EQ(p->tcpbacklog, 128);
	ATF_CHECK_EQ(p->tcpipttl, 64);
	ATF_CHECK_EQ(p->tcpipminttl, 2);
	ATF_CHECK_EQ(r->rl_conf.timeout.tv_sec, 30);
	ATF_CHECK(r->rl_conf.flags & F_DISABLE);
}

ATF_TC_WITHOUT_HEAD(listen_twice_clones);
ATF_TC_BODY(listen_twice_clones, tc)
{
	struct relayd	*env = parse_ok("relay r {\n"
	    "\tlisten on 127.0.0.1 port 8080\n"
	    "\tlisten on 127.0.0.1 port 8081\n"
	    "\tforward to 127.0.0.1 port 80\n}\n");
	struct relay	*r = TAILQ_FIRST(env->sc_relays);

	ATF_REQUIRE(r != NULL && TAILQ_NEXT(r, rl_entry) != NULL);
	ATF_CHECK_STREQ(TAILQ_NEXT(r, rl_entry)->rl_conf.name, "r1:8081");
	ATF_CHECK_EQ(TAILQ_NEXT(r, rl_entry)->rl_conf.port, 8081);
}

ATF_TC_WITHOUT_HEAD(ipv6_and_service_names);
ATF_TC_BODY(ipv6_and_service_names, tc)
{
	struct relayd	*env = parse_ok("relay r {\n"
	    "\tlisten on ::1 port 8080\n"
	    "\tforward to 127.0.0.1 port http\n}\n");
	struct relay	*r = TAILQ_FIRST(env->sc_relays);

	ATF_CHECK_EQ(r->rl_conf.ss.ss_family, AF_INET6);
	ATF_CHECK_EQ(r->rl_conf.dstport, 80);
}

/* An address for the mapping tests: "ADDR" of either family, port 80. */
static struct sockaddr_storage
mkss(const char *addr)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(80);
	} else {
		ATF_REQUIRE(inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1);
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(80);
	}
	return (ss);
}

/* ss_mapaf(ADDR, AF) must give WANT (NULL: refused, ADDR unchanged). */
static void
mapaf_is(const char *addr, const char *af, const char *want)
{
	struct sockaddr_storage	 ss = mkss(addr), map, old;
	char			 buf[INET6_ADDRSTRLEN];

	memset(&map, 0, sizeof(map));
	if (strcmp(af, "inet") == 0)
		map.ss_family = AF_INET;
	else if (strcmp(af, "") != 0)
		map = mkss(af);
	old = ss;
	if (want == NULL) {
		ATF_CHECK_EQ_MSG(ss_mapaf(&ss, &map), -1, "%s %s", addr, af);
		ATF_CHECK_MSG(memcmp(&ss, &old, sizeof(ss)) == 0,
		    "%s %s changed", addr, af);
		return;
	}
	ATF_CHECK_EQ_MSG(ss_mapaf(&ss, &map), 0, "%s %s", addr, af);
	ATF_CHECK_STREQ_MSG(print_host(&ss, buf, sizeof(buf)), want,
	    "%s %s", addr, af);
	ATF_CHECK_EQ(ss_port(&ss), 80);
	ATF_CHECK_EQ(ss_len(&ss), strchr(want, ':') != NULL ?
	    sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
}

/* forward ... inet | inet6 prefix: the address a session connects to. */
ATF_TC_WITHOUT_HEAD(forward_af_mapping);
ATF_TC_BODY(forward_af_mapping, tc)
{
	/* IPv6 to IPv4: its last four bytes */
	mapaf_is("64:ff9b::a01:203", "inet", "10.1.2.3");
	mapaf_is("::ffff:192.0.2.1", "inet", "192.0.2.1");
	mapaf_is("::7f00:1", "inet", "127.0.0.1");
	/* IPv4 into the prefix, whose last four bytes it replaces */
	mapaf_is("10.1.2.3", "64:ff9b::", "64:ff9b::a01:203");
	mapaf_is("192.0.2.1", "2001:db8::ffff:ffff", "2001:db8::c000:201");
	mapaf_is("127.0.0.1", "::ffff:0:0", "::ffff:127.0.0.1");
	/* the family asked for already, or no mapping: unchanged */
	mapaf_is("10.1.2.3", "inet", "10.1.2.3");
	mapaf_is("2001:db8::1", "64:ff9b::", "2001:db8::1");
	mapaf_is("2001:db8::1", "", "2001:db8::1");
	mapaf_is("10.1.2.3", "", "10.1.2.3");
	/* nothing to connect to: any, broadcast, multicast */
	mapaf_is("::", "inet", NULL);
	mapaf_is("64:ff9b::ffff:ffff", "inet", NULL);
	mapaf_is("64:ff9b::e000:1", "inet", NULL);
	mapaf_is("0.0.0.0", "64:ff9b::", NULL);
	mapaf_is("255.255.255.255", "64:ff9b::", NULL);
	mapaf_is("239.1.2.3", "64:ff9b::", NULL);
}

/* Errors: one test case per message */

ERR_TC(err_syntax, "relay {\n", "t.conf:1: syntax error at \"{\"\n")
/* where the parser stopped: the end of a line, of the file, a word */
ERR_TC(err_syntax_eol, "interval\n", "t.conf:1: syntax error at end of line\n")
ERR_TC(err_syntax_eof,
    "relay r {\n\tlisten on 127.0.0.1 port 80\n\tforward to 127.0.0.1 port 8080\n",
    "t.conf:3: syntax error at end of file\n")
ERR_TC(err_syntax_number, "prefork 2 3\n", "t.conf:1: syntax error at 3\n")
ERR_TC(err_syntax_keyword, "relay http {\n",
    "t.conf:1: syntax error at \"http\" "
    "(a keyword: quote it where a name is meant)\n")
ERR_TC(err_syntax_word, "timeout 1 \"a\tb\"\n",
    "t.conf:1: syntax error at \"a?b\"\n")
ERR_TC(err_syntax_long_word,
    "timeout 1 x12345678901234567890123456789012345678901234567890\n",
    "t.conf:1: syntax error at "
    "\"x1234567890123456789012345678901234567890123...\"\n")
ERR_TC(err_include,
    "include \"/nonexistent/relayd.conf\"\n",
    "/nonexistent/relayd.conf: No such file or directory\n"
    "t.conf:1: failed to include file /nonexistent/relayd.conf\n")
ERR_TC(err_macro_whitespace, "\"a b\" = \"x\"\n",
    "t.conf:1: macro name cannot contain whitespace\n")
ERR_TC(err_macro_undefined, "prefork $nothing\n",
    "t.conf:1: macro 'nothing' not defined\n")
ERR_TC(err_interval, "interval 0\n", "t.conf:1: invalid interval: 0\n")
ERR_TC(err_prefork, "prefork 33\n",
    "t.conf:1: invalid number of preforked relays: 33 (1 to 32)\n")
ATF_TC_WITHOUT_HEAD(err_socket_long);
ATF_TC_BODY(err_socket_long, tc)
{
	static char		 buf[PATH_MAX + 64];
	char			 err[128];
	struct sockaddr_un	 sun;
	size_t			 i;

	(void)snprintf(err, sizeof(err), "t.conf:1: socket path too long "
	    "(at most %zu bytes)\n", sizeof(sun.sun_path) - 1);
	(void)strlcpy(buf, "socket \"/", sizeof(buf));
	for (i = strlen(buf); i < PATH_MAX + 16; i++)
		buf[i] = 'a';
	buf[i] = '\0';
	(void)strlcat(buf, "\"\n", sizeof(buf));
	parse_fails(buf, err);
	/* a byte more than a unix socket's address holds */
	(void)snprintf(buf, sizeof(buf), "socket \"/%0*d\"\n",
	    (int)sizeof(sun.sun_path) - 1, 0);
	parse_fails(buf, err);
}

/* The longest control socket path a unix socket's address holds. */
ATF_TC_WITHOUT_HEAD(socket_longest);
ATF_TC_BODY(socket_longest, tc)
{
	static char		 buf[PATH_MAX + 256];
	struct sockaddr_un	 sun;
	struct relayd		*env;

	(void)snprintf(buf, sizeof(buf), "socket \"/%0*d\"\n" RELAY_OK,
	    (int)sizeof(sun.sun_path) - 2, 0);
	env = parse_ok(buf);
	ATF_CHECK_EQ(strlen(env->sc_conf.socket), sizeof(sun.sun_path) - 1);
}
ERR_TC(err_splice_engine, "splice engine sockmap\n",
    "t.conf:1: unknown splice engine: sockmap (auto, copy or pipe)\n")
ERR_TC(err_timeout, "timeout -5\n", "t.conf:1: invalid timeout: -5\n")
/* pattern and glob keywords of filter rules (OpenBSD -current's) */
ERR_TC(err_rule_match_set, "http protocol p {\n"
    "\tmatch request header set glob \"X\" value \"1\"\n}\n",
    "t.conf:2: header set: no glob or pattern with set or append\n")
ERR_TC(err_rule_match_nokey, "http protocol p {\n"
    "\tmatch request path pattern tag X\n}\n",
    "t.conf:2: path: glob or pattern without a key or file\n")
ERR_TC(err_rule_type_twice, "http protocol p {\n"
    "\tmatch request header \"A\" header \"B\"\n}\n",
    "t.conf:2: header given twice in a rule\n")
ERR_TC(err_rule_file_notype, "http protocol p {\n"
    "\tmatch request file \"/etc/hostname\"\n}\n",
    "t.conf:2: file /etc/hostname: give cookie, header, path, query or "
    "url before it\n")
ERR_TC(err_rule_bad_pattern, "http protocol p {\n"
    "\tmatch request path pattern \"[\" tag Y\n}\n",
    "t.conf:2: path pattern \"[\": malformed pattern (missing ']')\n")
ERR_TC(err_timeout_interval, "interval 1\ntimeout 1000\n" RELAY_OK,
    "t.conf: global timeout exceeds interval\n")
ERR_TC(err_port_number, "relay r {\n\tlisten on 127.0.0.1 port 70000\n}\n",
    "t.conf:2: invalid port: 70000\n")
ERR_TC(err_port_name, "relay r {\n\tlisten on 127.0.0.1 port nosuchsvc\n}\n",
    "t.conf:2: invalid port: nosuchsvc\n")
ERR_TC(err_retry, "relay r {\n\tlisten on 127.0.0.1 port 1\n"
    "\tforward to 127.0.0.1 port 2 retry -1\n}\n",
    "t.conf:3: invalid retry: -1\n")
ERR_TC(err_listen_tls, "tls directory \"/nonexistent\"\n"
    "relay r {\n\tlisten on 127.0.0.1 port 1 tls\n"
    "\tforward to 127.0.0.1 port 2\n}\n",
    "t.conf:5: cannot load certificates for relay r:1: "
    "/nonexistent/127.0.0.1.crt: No such file or directory\n")
ERR_TC(err_forward_tls, "protocol p {\n\ttls ca cert \"/x.crt\"\n}\n"
    "relay r {\n\tlisten on 127.0.0.1 port 1\n\tprotocol p\n"
    "\tforward with tls to 127.0.0.1 port 2\n}\n",
    "t.conf:8: relay r: tls ca cert and tls ca key go together\n")
ERR_TC(err_client_reneg, "protocol p {\n\ttls client-renegotiation\n}\n"
    RELAY_OK,
    "t.conf:2: tls client-renegotiation: not supported, libtls refuses "
    "renegotiation by clients\n")
ERR_TC(err_table_twice, "table <a> { 127.0.0.1 }\ntable <a> { 127.0.0.2 }\n",
    "t.conf:2: table a defined twice\n")
ERR_TC(err_table_name_long,
    "table <aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa>"
    " { 127.0.0.1 }\n",
    "t.conf:1: table name too long: "
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n")
ERR_TC(err_host_invalid, "table <a> { no.such.host.invalid }\n",
    "t.conf:1: invalid host: no.such.host.invalid\n")
ERR_TC(err_host_retry, "table <a> { 127.0.0.1 retry -2 }\n",
    "t.conf:1: invalid retry: -2\n")
ERR_TC(err_host_parent, "table <a> { 127.0.0.1 parent 0 }\n",
    "t.conf:1: invalid parent id: 0\n")
ERR_TC(err_host_priority, "table <a> { 127.0.0.1 priority 256 }\n",
    "t.conf:1: invalid priority: 256\n")
ERR_TC(err_host_ip_option, "table <a> { 127.0.0.1 ip tos 1 }\n",
    "t.conf:1: invalid host option: ip tos\n")
ERR_TC(err_host_ttl, "table <a> { 127.0.0.1 ip ttl 0 }\n",
    "t.conf:1: invalid ttl: 0\n")
ERR_TC(err_unused_table, "table <a> { 127.0.0.1 }\n" RELAY_OK,
    "t.conf:1: unused table: a\n")
ERR_TC(err_no_such_table, "relay r {\n\tlisten on 127.0.0.1 port 1\n"
    "\tforward to <nope> port 2\n}\n", "t.conf:3: no such table: nope\n")
ERR_TC(err_table_no_port, "table <a> { 127.0.0.1 }\nrelay r {\n"
    "\tforward to <a>\n\tlisten on 127.0.0.1 port 1\n}\n",
    "t.conf:3: table a has no port (give one, or listen on before "
    "forward to)\n")
ERR_TC(err_table_timeout, "table <a> { 127.0.0.1 }\nrelay r {\n"
    "\tlisten on 127.0.0.1 port 1\n"
    "\tforward to <a> port 2 timeout 20000\n}\n",
    "t.conf: table timeout exceeds interval: a:2\n")
ERR_TC(err_table_interval, "table <a> { 127.0.0.1 }\nrelay r {\n"
    "\tlisten on 127.0.0.1 port 1\n"
    "\tforward to <a> port 2 interval 15\n}\n",
    "t.conf:4: table interval must be a multiple of the global "
    "interval (10)\n")
ERR_TC(err_mode_key, "table <a> { 127.0.0.1 }\nrelay r {\n"
    "\tlisten on 127.0.0.1 port 1\n"
    "\tforward to <a> port 2 mode roundrobin k\n}\n",
    "t.conf:4: mode roundrobin takes no hash key\n")
ERR_TC(err_hash_key_length, "table <a> { 127.0.0.1 }\nrelay r {\n"
    "\tlisten on 127.0.0.1 port 1\n"
    "\tforward to <a> port 2 mode hash 0x1234\n}\n",
    "t.conf:4: hash key must be 0x and 32 hex digits\n")
ERR_TC(err_hash_key_hex, "table <a> { 127.0.0.1 }\nrelay r {\n"
    "\tlisten on 127.0.0.1 port 1\n\tforward to <a> port 2 mode hash "
    "0xzz112233445566778899aabbccddeeff\n}\n",
    "t.conf:4: invalid hash key: 0xzz112233445566778899aabbccddeeff\n")
ERR_TC(err_least_states, "table <a> { 127.0.0.1 }\nrelay r {\n"
    "\tlisten on 127.0.0.1 port 1\n"
    "\tforward to <a> port 2 mode least-states\n}\n",
    "t.conf:4: mode least-states needs pf(4), not available on "
    RELAYD_PLATFORM "\n")
#define CHECK_CONF(check) \
	"table <a> { 127.0.0.1 }\nrelay r {\n" \
	"\tlisten on 127.0.0.1 port 1\n" \
	"\tforward to <a> port 2 " check "\n}\n"
ERR_TC(err_check_unknown, CHECK_CONF("check ftp"),
    "t.conf:4: unknown check type: ftp\n")
ERR_TC(err_check_twice, CHECK_CONF("check tcp check icmp"),
    "t.conf:4: only one check per table\n")
ERR_TC(err_check_code, CHECK_CONF("check http \"/\" code 42"),
    "t.conf:4: invalid http code: 42\n")
ERR_TC(err_check_http2_code, CHECK_CONF("check http2 \"/\" code 1000"),
    "t.conf:4: invalid http code: 1000\n")
ERR_TC(err_check_digest, CHECK_CONF("check http \"/\" digest \"abc\""),
    "t.conf:4: invalid http digest: abc (32 hex digits for MD5, 40 for "
    "SHA1)\n")
ERR_TC(err_check_binary, CHECK_CONF("check binary send \"0a\" expect "
    "\"abc\""),
    "t.conf:4: invalid binary expect: abc (an even number of hex digits, "
    "at most 256)\n")
ERR_TC(err_check_binsend, CHECK_CONF("check binary send \"0z\" expect "
    "\"ab\""),
    "t.conf:4: invalid binary send: 0z (an even number of hex digits)\n")
ERR_TC(err_check_script, CHECK_CONF("check script \"x.sh\""),
    "t.conf:4: check script x.sh: the path must be absolute\n")

ERR_TC(err_parent, "table <a> { 127.0.0.1 parent 7 }\nrelay r {\n"
    "\tlisten on 127.0.0.1 port 1\n\tforward to <a> port 2 check tcp\n}\n",
    "t.conf: host 127.0.0.1 in table a:2: no host with id 7 to follow as "
    "parent\n")

/* Every check form, and what the table keeps of it. */
ATF_TC_WITHOUT_HEAD(checks);
ATF_TC_BODY(checks, tc)
{
	static const struct {
		const char	*text;
		int		 check;
		int		 tls;
		const char	*sendbuf;
		size_t		 sendlen;
		const char	*exbuf;
	} t[] = {
		{ CHECK_CONF("check tcp"), CHECK_TCP, 0, NULL, 0, "" },
		{ CHECK_CONF("check tls"), CHECK_TCP, 1, NULL, 0, "" },
		{ CHECK_CONF("check icmp"), CHECK_ICMP, 0, NULL, 0, "" },
		{ CHECK_CONF("check http \"/x\" code 200"), CHECK_HTTP_CODE,
		    0, "HEAD /x HTTP/1.0\r\n\r\n", 20, "" },
		{ CHECK_CONF("check https \"/x\" host \"h\" code 200"),
		    CHECK_HTTP_CODE, 1, "HEAD /x HTTP/1.1\r\nHost: h\r\n"
		    "Connection: close\r\n\r\n", 48, "" },
		{ CHECK_CONF("check http \"/\" digest "
		    "\"D41D8CD98F00B204E9800998ECF8427E\""),
		    CHECK_HTTP_DIGEST, 0, "GET / HTTP/1.0\r\n\r\n", 18, "" },
		{ CHECK_CONF("check send \"HELO\\r\\n\" expect \"250 *\""),
		    CHECK_SEND_EXPECT, 0, "HELO\r\n", 6, "250 *" },
		{ CHECK_CONF("check send nothing expect \"220 *\" tls"),
		    CHECK_SEND_EXPECT, 1, NULL, 0, "220 *" },
		{ CHECK_CONF("check binary send \"00ff\" expect \"AB01\""),
		    CHECK_BINSEND_EXPECT, 0, "\0\xff", 2, "ab01" },
		{ CHECK_CONF("check script \"/bin/true\""), CHECK_SCRIPT, 0,
		    NULL, 0, "" }
	};
	struct relayd	*env;
	struct table	*tb;
	unsigned int	 i;

	for (i = 0; i < nitems(t); i++) {
		env = parse_ok(t[i].text);
		tb = TAILQ_FIRST(env->sc_tables);
		ATF_REQUIRE(tb != NULL);
		ATF_CHECK_EQ_MSG(tb->conf.check, t[i].check, "%s", t[i].text);
		ATF_CHECK_EQ_MSG((tb->conf.flags & F_TLS) != 0, t[i].tls,
		    "%s", t[i].text);
		ATF_CHECK_EQ_MSG(tb->sendbuf_len, t[i].sendlen, "%s",
		    t[i].text);
		if (t[i].sendbuf != NULL)
			ATF_CHECK_MSG(tb->sendbuf != NULL &&
			    memcmp(tb->sendbuf, t[i].sendbuf,
			    t[i].sendlen) == 0, "%s", t[i].text);
		ATF_CHECK_STREQ(tb->conf.exbuf, t[i].exbuf);
	}
	env = parse_ok(CHECK_CONF("check http \"/\" digest "
	    "\"D41D8CD98F00B204E9800998ECF8427E\""));
	tb = TAILQ_FIRST(env->sc_tables);
	ATF_CHECK_EQ(tb->conf.digest_type, DIGEST_MD5);
	ATF_CHECK_STREQ(tb->conf.digest, "d41d8cd98f00b204e9800998ecf8427e");
	env = parse_ok(CHECK_CONF("check http \"/\" code 301"));
	tb = TAILQ_FIRST(env->sc_tables);
	ATF_CHECK_EQ(tb->conf.retcode, 301);
}

ERR_TC(err_proto_type, "smtp protocol p {\n}\n",
    "t.conf:1: invalid protocol type: smtp\n")
ERR_TC(err_proto_default, "protocol default {\n}\n",
    "t.conf:1: protocol name \"default\" is reserved\n")
ERR_TC(err_proto_twice, "protocol p {\n}\nprotocol p {\n}\n",
    "t.conf:3: protocol p defined twice\n")
ERR_TC(err_proto_name_long,
    "protocol aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    " {\n}\n", "t.conf:1: protocol name truncated\n")
ERR_TC(err_proto_dns, "dns protocol p\nrelay r {\n"
    "\tlisten on 127.0.0.1 port 5353 tls\n\tprotocol p\n"
    "\tforward to 127.0.0.1 port 53\n}\n",
    "t.conf:6: relay r: tls over udp is not supported\n")
ERR_TC(err_backlog, "protocol p {\n\ttcp backlog 1000\n}\n",
    "t.conf:2: invalid backlog: 1000 (0 to 512)\n")
ERR_TC(err_bufsize, "protocol p {\n\ttcp socket buffer -1\n}\n",
    "t.conf:2: invalid socket buffer size: -1\n")
ERR_TC(err_tcp_ip_flag, "protocol p {\n\ttcp ip tos 1\n}\n",
    "t.conf:2: invalid TCP/IP flag: tos\n")
ERR_TC(err_tcp_ttl, "protocol p {\n\ttcp ip ttl 300\n}\n",
    "t.conf:2: invalid ttl: 300\n")
ERR_TC(err_no_such_protocol, "relay r {\n\tprotocol nope\n}\n",
    "t.conf:2: no such protocol: nope\n")
ERR_TC(err_relay_twice, RELAY_OK RELAY_OK,
    "t.conf:5: relay r defined twice\n")
ERR_TC(err_relay_name_long,
    "relay aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa {\n"
    "}\n", "t.conf:1: relay name truncated\n")
ERR_TC(err_relay_no_listener, "relay r {\n\tforward to 127.0.0.1 port 2\n}\n",
    "t.conf:3: relay r has no listener\n")
ERR_TC(err_relay_no_target, "relay r {\n\tlisten on 127.0.0.1 port 1\n}\n",
    "t.conf:3: relay r has no target, rdr, or table\n")
ERR_TC(err_listener_twice, RELAY_OK "relay s {\n"
    "\tlisten on 127.0.0.1 port 8080\n\tforward to 127.0.0.1 port 80\n}\n",
    "t.conf:8: relay s or listener defined twice\n")
ERR_TC(err_listen_address, "relay r {\n\tlisten on no.such.host.invalid "
    "port 1\n}\n", "t.conf:2: invalid listen address: no.such.host.invalid\n")
ERR_TC(err_forward_address, "relay r {\n\tlisten on 127.0.0.1 port 1\n"
    "\tforward to no.such.host.invalid port 2\n}\n",
    "t.conf:3: invalid forward address: no.such.host.invalid\n")
ERR_TC(err_forward_twice, "relay r {\n\tlisten on 127.0.0.1 port 1\n"
    "\tforward to 127.0.0.1 port 2\n\tforward to 127.0.0.1 port 3\n}\n",
    "t.conf:4: relay r: only one forward to an address\n")
ERR_TC(err_session_timeout, "relay r {\n\tsession timeout -1\n}\n",
    "t.conf:2: invalid timeout: -1\n")
ERR_TC(err_quote_eof, "socket \"/tmp/x\n",
    "t.conf:1: reached end of file while parsing quoted string\n")
ERR_TC(err_number_range, "prefork 99999999999999999999\n",
    "t.conf:1: \"99999999999999999999\" invalid number: too large\n")

ATF_TC_WITHOUT_HEAD(too_many_listen);
ATF_TC_BODY(too_many_listen, tc)
{
	char	 buf[4096];
	int	 i;

	(void)strlcpy(buf, "relay r {\n", sizeof(buf));
	for (i = 0; i < 17; i++) {
		char line[64];

		(void)snprintf(line, sizeof(line),
		    "\tlisten on 127.0.0.1 port %d\n", 1000 + i);
		(void)strlcat(buf, line, sizeof(buf));
	}
	(void)strlcat(buf, "}\n", sizeof(buf));
	parse_fails(buf, "t.conf:18: too many listen addresses (16 at most)\n");
}

ATF_TC_WITHOUT_HEAD(errors_all_reported);
ATF_TC_BODY(errors_all_reported, tc)
{
	/* every error is reported, not just the first */
	parse_fails("prefork 0\ninterval 0\n" RELAY_OK,
	    "t.conf:1: invalid number of preforked relays: 0 (1 to 32)\n"
	    "t.conf:2: invalid interval: 0\n");
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, minimal_relay);
	ATF_TP_ADD_TC(tp, globals);
	ATF_TP_ADD_TC(tp, log_connection_both);
	ATF_TP_ADD_TC(tp, macros_and_continuation);
	ATF_TP_ADD_TC(tp, cmdline_macro_wins);
	ATF_TP_ADD_TC(tp, include_file);
	ATF_TP_ADD_TC(tp, tables_and_modes);
	ATF_TP_ADD_TC(tp, protocol_tcp_options);
	ATF_TP_ADD_TC(tp, listen_twice_clones);
	ATF_TP_ADD_TC(tp, ipv6_and_service_names);
	ATF_TP_ADD_TC(tp, forward_af_mapping);

	ATF_TP_ADD_TC(tp, err_syntax);
	ATF_TP_ADD_TC(tp, err_syntax_eol);
	ATF_TP_ADD_TC(tp, err_syntax_eof);
	ATF_TP_ADD_TC(tp, err_syntax_number);
	ATF_TP_ADD_TC(tp, err_syntax_keyword);
	ATF_TP_ADD_TC(tp, err_syntax_word);
	ATF_TP_ADD_TC(tp, err_syntax_long_word);
	ATF_TP_ADD_TC(tp, err_include);
	ATF_TP_ADD_TC(tp, err_macro_whitespace);
	ATF_TP_ADD_TC(tp, err_macro_undefined);
	ATF_TP_ADD_TC(tp, err_interval);
	ATF_TP_ADD_TC(tp, err_prefork);
	ATF_TP_ADD_TC(tp, err_socket_long);
	ATF_TP_ADD_TC(tp, socket_longest);
	ATF_TP_ADD_TC(tp, err_splice_engine);
	ATF_TP_ADD_TC(tp, err_timeout);
	ATF_TP_ADD_TC(tp, err_rule_match_set);
	ATF_TP_ADD_TC(tp, err_rule_match_nokey);
	ATF_TP_ADD_TC(tp, err_rule_type_twice);
	ATF_TP_ADD_TC(tp, err_rule_file_notype);
	ATF_TP_ADD_TC(tp, err_rule_bad_pattern);
	ATF_TP_ADD_TC(tp, err_timeout_interval);
	ATF_TP_ADD_TC(tp, err_port_number);
	ATF_TP_ADD_TC(tp, err_port_name);
	ATF_TP_ADD_TC(tp, err_retry);
	ATF_TP_ADD_TC(tp, err_listen_tls);
	ATF_TP_ADD_TC(tp, err_forward_tls);
	ATF_TP_ADD_TC(tp, err_client_reneg);
	ATF_TP_ADD_TC(tp, err_table_twice);
	ATF_TP_ADD_TC(tp, err_table_name_long);
	ATF_TP_ADD_TC(tp, err_host_invalid);
	ATF_TP_ADD_TC(tp, err_host_retry);
	ATF_TP_ADD_TC(tp, err_host_parent);
	ATF_TP_ADD_TC(tp, err_host_priority);
	ATF_TP_ADD_TC(tp, err_host_ip_option);
	ATF_TP_ADD_TC(tp, err_host_ttl);
	ATF_TP_ADD_TC(tp, err_unused_table);
	ATF_TP_ADD_TC(tp, err_no_such_table);
	ATF_TP_ADD_TC(tp, err_table_no_port);
	ATF_TP_ADD_TC(tp, err_table_timeout);
	ATF_TP_ADD_TC(tp, err_table_interval);
	ATF_TP_ADD_TC(tp, err_mode_key);
	ATF_TP_ADD_TC(tp, err_hash_key_length);
	ATF_TP_ADD_TC(tp, err_hash_key_hex);
	ATF_TP_ADD_TC(tp, err_least_states);
	ATF_TP_ADD_TC(tp, err_check_unknown);
	ATF_TP_ADD_TC(tp, err_check_twice);
	ATF_TP_ADD_TC(tp, err_check_code);
	ATF_TP_ADD_TC(tp, err_check_http2_code);
	ATF_TP_ADD_TC(tp, err_check_digest);
	ATF_TP_ADD_TC(tp, err_check_binary);
	ATF_TP_ADD_TC(tp, err_check_binsend);
	ATF_TP_ADD_TC(tp, err_check_script);
	ATF_TP_ADD_TC(tp, checks);
	ATF_TP_ADD_TC(tp, err_parent);
	ATF_TP_ADD_TC(tp, err_proto_type);
	ATF_TP_ADD_TC(tp, err_proto_default);
	ATF_TP_ADD_TC(tp, err_proto_twice);
	ATF_TP_ADD_TC(tp, err_proto_name_long);
	ATF_TP_ADD_TC(tp, http_protocol);
	ATF_TP_ADD_TC(tp, err_proto_dns);
	ATF_TP_ADD_TC(tp, err_backlog);
	ATF_TP_ADD_TC(tp, err_bufsize);
	ATF_TP_ADD_TC(tp, err_tcp_ip_flag);
	ATF_TP_ADD_TC(tp, err_tcp_ttl);
	ATF_TP_ADD_TC(tp, err_no_such_protocol);
	ATF_TP_ADD_TC(tp, err_relay_twice);
	ATF_TP_ADD_TC(tp, err_relay_name_long);
	ATF_TP_ADD_TC(tp, err_relay_no_listener);
	ATF_TP_ADD_TC(tp, err_relay_no_target);
	ATF_TP_ADD_TC(tp, err_listener_twice);
	ATF_TP_ADD_TC(tp, err_listen_address);
	ATF_TP_ADD_TC(tp, err_forward_address);
	ATF_TP_ADD_TC(tp, err_forward_twice);
	ATF_TP_ADD_TC(tp, err_session_timeout);
	ATF_TP_ADD_TC(tp, err_quote_eof);
	ATF_TP_ADD_TC(tp, err_number_range);
	ATF_TP_ADD_TC(tp, too_many_listen);
	ATF_TP_ADD_TC(tp, errors_all_reported);
	return (atf_no_error());
}
