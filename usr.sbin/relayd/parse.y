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
 * relayd.conf(5): the grammar and its lexer.  Each construct fills the
 * structs that config.c sends to the processes; checks that need the
 * whole file run in check_config() once yyparse() is done.
 */

%{
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "relayd.h"

TAILQ_HEAD(files, file)		 files = TAILQ_HEAD_INITIALIZER(files);
static struct file {
	TAILQ_ENTRY(file)	 entry;
	FILE			*stream;
	char			*name;
	unsigned char		*ungetbuf;
	size_t			 ungetpos;
	size_t			 ungetsize;
	int			 eof_reached;
	int			 lineno;
	int			 errors;
} *file, *topfile;

static struct file	*pushfile(const char *);
static int		 popfile(void);
int			 yyparse(void);
static int		 yylex(void);
static int		 yyerror(const char *, ...)
			    __attribute__((__format__ (printf, 1, 2)));
static int		 kw_cmp(const void *, const void *);
static int		 lookup(char *);
static int		 lgetc(int);
static int		 lungetc(int);
static int		 findeol(void);

TAILQ_HEAD(symhead, sym)	 symhead = TAILQ_HEAD_INITIALIZER(symhead);
struct sym {
	TAILQ_ENTRY(sym)	 entry;
	int			 used;
	int			 persist;
	char			*nam;
	char			*val;
};
static int		 symset(const char *, const char *, int);
static char		*symget(const char *);

/* What one forward-to-table line asks of its copy of the table. */
struct table_opts {
	in_port_t		 port;
	struct timeval		 timeout;
	int			 interval;
	enum forwardmode	 mode;
	int			 hashkey_set;
	uint8_t			 hashkey[16];
	/* the check */
	enum table_check	 check;
	uint32_t		 flags;		/* F_TLS */
	int			 retcode;
	int			 digest_type;
	char			 digest[41];
	char			 exbuf[TABLE_EXBUF_SIZE];
	char			 path[PATH_MAX];
	char			*sendbuf;
	size_t			 sendbuf_len;
};

/* Host options, applied to every address a host entry resolves to. */
struct host_opts {
	int			 retry;
	int			 parent;
	int			 priority;
	int			 ttl;
};

#define MAX_LISTEN		16
#define MAX_HOSTADDRS		16

static struct relayd		*conf;
static struct tablelist		 deftables;
static struct table		*table;
static struct relay		*rlay;
static struct protocol		*proto;
static struct table_opts	 topts;
static struct host_opts		 hopts;
static struct sockaddr_storage	 listen_ss[MAX_LISTEN];
static in_port_t		 listen_port[MAX_LISTEN];
static int			 nlisten;
static objid_t			 last_relay_id;
static objid_t			 last_table_id;
static objid_t			 last_host_id;
static objid_t			 last_proto_id;

static int	 host_resolve(const char *, struct sockaddr_storage *, int);
static int	 table_add_hosts(struct table *, const char *);
static struct table *
		 table_use(struct table *, struct table_opts *);
static int	 relay_clone(struct relay *, struct sockaddr_storage *,
		    in_port_t, int);
static int	 relay_finish(struct relay *);
static int	 parse_hashkey(const char *, uint8_t *);
static void	 not_implemented(const char *);
static int	 translate_string(char *);
static int	 binary_sendbuf(void);
static int	 table_samecheck(struct table *, struct table_opts *);
static int	 check_set(enum table_check, int);
static int	 check_config(void);

typedef struct {
	union {
		int64_t			 number;
		char			*string;
		struct timeval		 tv;
		enum forwardmode	 mode;
	} v;
	int lineno;
} YYSTYPE;

%}

%token	BACKLOG BUFFER CHANGES CHECK CHECKS CONNECTION DISABLE ENGINE ERRORS
%token	FORWARD HASH HOST HTTP INCLUDE INTERVAL IP LEASTSTATES LISTEN
%token	LOADBALANCE LOG MODE NO NODELAY ON PARENT PORT PREFORK PRIORITY PROTO
%token	RANDOM RELAY RETRY ROUNDROBIN SACK SESSION SOCKET SPLICE SRCHASH
%token	STATE TABLE TCP TIMEOUT TLS TO WITH ERROR
%token	BINARY CODE DIGEST EXPECT ICMP NOTHING SCRIPT SEND
%token	<v.string>	STRING
%token	<v.number>	NUMBER
%type	<v.string>	string macroval tablename
%type	<v.number>	loglevel opttls port retry prototype checktls
%type	<v.number>	httptype
%type	<v.string>	hostname
%type	<v.tv>		timeout
%type	<v.mode>	dstmode

%%

grammar		: /* empty */
		| grammar include '\n'
		| grammar '\n'
		| grammar varset '\n'
		| grammar main '\n'
		| grammar tabledef '\n'
		| grammar protodef '\n'
		| grammar relaydef '\n'
		| grammar error '\n'		{ file->errors++; }
		;

include		: INCLUDE STRING		{
			struct file	*nfile;

			if ((nfile = pushfile($2)) == NULL) {
				yyerror("failed to include file %s", $2);
				free($2);
				YYERROR;
			}
			free($2);
			file = nfile;
			lungetc('\n');
		}
		;

string		: string STRING			{
			if (asprintf(&$$, "%s %s", $1, $2) == -1)
				fatal("string: asprintf");
			free($1);
			free($2);
		}
		| STRING
		;

macroval	: string
		| NUMBER			{
			if (asprintf(&$$, "%lld", (long long)$1) == -1)
				fatal("macroval: asprintf");
		}
		;

varset		: STRING '=' macroval		{
			char	*s;

			for (s = $1; *s != '\0'; s++)
				if (isspace((unsigned char)*s)) {
					yyerror("macro name cannot contain "
					    "whitespace");
					free($1);
					free($3);
					YYERROR;
				}
			if (symset($1, $3, 0) == -1)
				fatal("cannot store variable");
			free($1);
			free($3);
		}
		;

comma		: ','
		| nl
		| /* empty */
		;

optnl		: '\n' optnl
		| /* empty */
		;

nl		: '\n' optnl
		;

main		: INTERVAL NUMBER		{
			if ($2 <= 0 || $2 > INT_MAX) {
				yyerror("invalid interval: %lld",
				    (long long)$2);
				YYERROR;
			}
			conf->sc_conf.interval.tv_sec = $2;
			conf->sc_conf.interval.tv_usec = 0;
		}
		| LOG loglevel			{
			conf->sc_conf.opts |= $2;
		}
		| TIMEOUT timeout		{
			conf->sc_conf.timeout = $2;
		}
		| PREFORK NUMBER		{
			if ($2 <= 0 || $2 > PROC_MAX_INSTANCES) {
				yyerror("invalid number of preforked "
				    "relays: %lld (1 to %d)", (long long)$2,
				    PROC_MAX_INSTANCES);
				YYERROR;
			}
			conf->sc_conf.prefork_relay = $2;
		}
		| SOCKET STRING			{
			if (strlcpy(conf->sc_conf.socket, $2,
			    sizeof(conf->sc_conf.socket)) >=
			    sizeof(conf->sc_conf.socket)) {
				yyerror("socket path too long");
				free($2);
				YYERROR;
			}
			free($2);
		}
		| SPLICE ENGINE STRING		{
			if (strcmp($3, "auto") == 0)
				conf->sc_conf.splice_engine =
				    SPLICE_ENGINE_AUTO;
			else if (strcmp($3, "copy") == 0)
				conf->sc_conf.splice_engine =
				    SPLICE_ENGINE_COPY;
			else if (strcmp($3, "pipe") == 0)
				conf->sc_conf.splice_engine =
				    SPLICE_ENGINE_PIPE;
			else {
				yyerror("unknown splice engine: %s "
				    "(auto, copy or pipe)", $3);
				free($3);
				YYERROR;
			}
			free($3);
		}
		;

loglevel	: STATE CHANGES		{ $$ = RELAYD_OPT_LOGUPDATE; }
		| HOST CHECKS		{ $$ = RELAYD_OPT_LOGHOSTCHECK; }
		| CONNECTION		{
			$$ = RELAYD_OPT_LOGCON | RELAYD_OPT_LOGCONERR;
		}
		| CONNECTION ERRORS	{ $$ = RELAYD_OPT_LOGCONERR; }
		;

timeout		: NUMBER			{
			if ($1 < 0 || $1 > INT_MAX) {
				yyerror("invalid timeout: %lld",
				    (long long)$1);
				YYERROR;
			}
			$$.tv_sec = $1 / 1000;
			$$.tv_usec = ($1 % 1000) * 1000;
		}
		;

port		: PORT NUMBER			{
			if ($2 <= 0 || $2 > 0xffff) {
				yyerror("invalid port: %lld", (long long)$2);
				YYERROR;
			}
			$$ = $2;
		}
		| PORT HTTP			{ $$ = 80; }
		| PORT STRING			{
			struct servent	*s;

			if ((s = getservbyname($2, "tcp")) == NULL &&
			    (s = getservbyname($2, "udp")) == NULL) {
				yyerror("invalid port: %s", $2);
				free($2);
				YYERROR;
			}
			free($2);
			$$ = ntohs(s->s_port);
		}
		;

retry		: /* empty */			{ $$ = 0; }
		| RETRY NUMBER			{
			if ($2 < 0 || $2 > INT_MAX) {
				yyerror("invalid retry: %lld",
				    (long long)$2);
				YYERROR;
			}
			$$ = $2;
		}
		;

opttls		: /* empty */			{ $$ = 0; }
		| TLS				{
			not_implemented("listen on ... tls");
			$$ = 1;
		}
		;

tablename	: '<' STRING '>'		{
			if (strlen($2) >= TABLE_NAME_SIZE) {
				yyerror("table name too long: %s", $2);
				free($2);
				YYERROR;
			}
			$$ = $2;
		}
		;

/* Tables: a definition here, a copy for every use by a relay. */
tabledef	: TABLE tablename		{
			struct table	*tb;

			TAILQ_FOREACH(tb, &deftables, entry)
				if (strcmp(tb->conf.name, $2) == 0)
					break;
			if (tb != NULL) {
				yyerror("table %s defined twice", $2);
				free($2);
				YYERROR;
			}
			if ((tb = calloc(1, sizeof(*tb))) == NULL)
				fatal("out of memory");
			(void)strlcpy(tb->conf.name, $2,
			    sizeof(tb->conf.name));
			free($2);
			TAILQ_INIT(&tb->hosts);
			tb->conf.timeout = conf->sc_conf.timeout;
			/* where it was defined, for unused table */
			tb->conf.retcode = file->lineno;
			table = tb;
		} tabledefopts_l		{
			TAILQ_INSERT_TAIL(&deftables, table, entry);
			table = NULL;
		}
		;

tabledefopts_l	: tabledefopts_l tabledefopts
		| tabledefopts
		;

tabledefopts	: DISABLE		{ table->conf.flags |= F_DISABLE; }
		| '{' hosts '}'
		;

hosts		: /* empty */
		| hosts hostdef
		| hosts ','
		| hosts '\n'
		;

hostdef		: STRING			{
			memset(&hopts, 0, sizeof(hopts));
		} hostopts_l			{
			if (table_add_hosts(table, $1) == -1) {
				free($1);
				YYERROR;
			}
			free($1);
		}
		;

hostopts_l	: /* empty */
		| hostopts_l hostopt
		;

hostopt		: RETRY NUMBER			{
			if ($2 < 0 || $2 > INT_MAX) {
				yyerror("invalid retry: %lld",
				    (long long)$2);
				YYERROR;
			}
			hopts.retry = $2;
		}
		| PARENT NUMBER			{
			if ($2 <= 0 || $2 > INT_MAX) {
				yyerror("invalid parent id: %lld",
				    (long long)$2);
				YYERROR;
			}
			hopts.parent = $2;
		}
		| PRIORITY NUMBER		{
			if ($2 < 1 || $2 > 255) {
				yyerror("invalid priority: %lld",
				    (long long)$2);
				YYERROR;
			}
			hopts.priority = $2;
		}
		| IP STRING NUMBER		{
			if (strcmp($2, "ttl") != 0) {
				yyerror("invalid host option: ip %s", $2);
				free($2);
				YYERROR;
			}
			free($2);
			if ($3 < 1 || $3 > RELAY_MAXPROTOTTL) {
				yyerror("invalid ttl: %lld", (long long)$3);
				YYERROR;
			}
			hopts.ttl = $3;
		}
		;

/* Protocols */
prototype	: /* empty */			{ $$ = RELAY_PROTO_TCP; }
		| TCP				{ $$ = RELAY_PROTO_TCP; }
		| HTTP				{ $$ = RELAY_PROTO_HTTP; }
		| STRING			{
			if (strcmp($1, "dns") != 0) {
				yyerror("invalid protocol type: %s", $1);
				free($1);
				YYERROR;
			}
			free($1);
			$$ = RELAY_PROTO_DNS;
		}
		;

protodef	: prototype PROTO STRING	{
			struct protocol	*p;

			if (strcmp($3, "default") == 0) {
				yyerror("protocol name \"default\" is "
				    "reserved");
				free($3);
				YYERROR;
			}
			TAILQ_FOREACH(p, conf->sc_protos, entry)
				if (strcmp(p->name, $3) == 0)
					break;
			if (p != NULL) {
				yyerror("protocol %s defined twice", $3);
				free($3);
				YYERROR;
			}
			if ((p = calloc(1, sizeof(*p))) == NULL)
				fatal("out of memory");
			if (strlcpy(p->name, $3, sizeof(p->name)) >=
			    sizeof(p->name)) {
				yyerror("protocol name truncated");
				free($3);
				free(p);
				YYERROR;
			}
			free($3);
			p->id = ++last_proto_id;
			p->type = $1;
			p->tcpflags = TCPFLAG_DEFAULT;
			p->tcpbacklog = RELAY_BACKLOG;
			if (p->type == RELAY_PROTO_HTTP)
				not_implemented("http protocol");
			else if (p->type == RELAY_PROTO_DNS)
				not_implemented("dns protocol");
			proto = p;
		} protobody			{
			TAILQ_INSERT_TAIL(conf->sc_protos, proto, entry);
			proto = NULL;
		}
		;

protobody	: '{' optnl protoopts_l '}'
		| '{' optnl '}'
		;

protoopts_l	: protoopts_l protoopts nl
		| protoopts optnl
		;

protoopts	: TCP tcpflags
		| TCP '{' tcpflags_l '}'
		| include
		;

tcpflags_l	: tcpflags comma tcpflags_l
		| tcpflags
		;

tcpflags	: SACK			{ proto->tcpflags |= TCPFLAG_SACK; }
		| NO SACK		{ proto->tcpflags |= TCPFLAG_NSACK; }
		| NODELAY		{ proto->tcpflags |= TCPFLAG_NODELAY; }
		| NO NODELAY		{ proto->tcpflags |= TCPFLAG_NNODELAY; }
		| SPLICE		{ proto->tcpflags &= ~TCPFLAG_NSPLICE; }
		| NO SPLICE		{ proto->tcpflags |= TCPFLAG_NSPLICE; }
		| BACKLOG NUMBER	{
			if ($2 < 0 || $2 > RELAY_MAXBACKLOG) {
				yyerror("invalid backlog: %lld (0 to %d)",
				    (long long)$2, RELAY_MAXBACKLOG);
				YYERROR;
			}
			proto->tcpbacklog = $2;
		}
		| SOCKET BUFFER NUMBER	{
			if ($3 < 0 || $3 > INT_MAX) {
				yyerror("invalid socket buffer size: %lld",
				    (long long)$3);
				YYERROR;
			}
			proto->tcpflags |= TCPFLAG_BUFSIZ;
			proto->tcpbufsiz = $3;
		}
		| IP STRING NUMBER	{
			if ($3 < 0 || $3 > RELAY_MAXPROTOTTL) {
				yyerror("invalid ttl: %lld", (long long)$3);
				free($2);
				YYERROR;
			}
			if (strcmp($2, "ttl") == 0) {
				proto->tcpflags |= TCPFLAG_IPTTL;
				proto->tcpipttl = $3;
			} else if (strcmp($2, "minttl") == 0) {
				proto->tcpflags |= TCPFLAG_IPMINTTL;
				proto->tcpipminttl = $3;
			} else {
				yyerror("invalid TCP/IP flag: %s", $2);
				free($2);
				YYERROR;
			}
			free($2);
		}
		;

/* Relays */
relaydef	: RELAY STRING			{
			struct relay	*r;

			if ((r = calloc(1, sizeof(*r))) == NULL)
				fatal("out of memory");
			TAILQ_INIT(&r->rl_tables);
			if (strlcpy(r->rl_conf.name, $2,
			    sizeof(r->rl_conf.name)) >=
			    sizeof(r->rl_conf.name)) {
				yyerror("relay name truncated");
				free($2);
				free(r);
				YYERROR;
			}
			free($2);
			if (relay_findbyname(conf, r->rl_conf.name) != NULL) {
				yyerror("relay %s defined twice",
				    r->rl_conf.name);
				free(r);
				YYERROR;
			}
			r->rl_conf.id = ++last_relay_id;
			r->rl_conf.timeout.tv_sec = RELAY_TIMEOUT;
			r->rl_conf.fwdmode = RELAY_DSTMODE_DEFAULT;
			r->rl_s = -1;
			rlay = r;
			nlisten = 0;
		} '{' optnl relayopts_l '}'	{
			if (relay_finish(rlay) == -1) {
				rlay = NULL;
				YYERROR;
			}
			rlay = NULL;
		}
		;

relayopts_l	: relayopts_l relayoptsl nl
		| relayoptsl optnl
		;

relayoptsl	: LISTEN ON STRING port opttls	{
			struct sockaddr_storage	 ss;

			if ($5) {
				free($3);
				YYERROR;
			}
			if (host_resolve($3, &ss, 1) <= 0) {
				yyerror("invalid listen address: %s", $3);
				free($3);
				YYERROR;
			}
			free($3);
			if (nlisten >= MAX_LISTEN) {
				yyerror("too many listen addresses "
				    "(%d at most)", MAX_LISTEN);
				YYERROR;
			}
			ss_setport(&ss, $4);
			listen_ss[nlisten] = ss;
			listen_port[nlisten] = $4;
			nlisten++;
		}
		| forwardspec
		| SESSION TIMEOUT NUMBER	{
			if ($3 < 0 || $3 > INT_MAX) {
				yyerror("invalid timeout: %lld",
				    (long long)$3);
				YYERROR;
			}
			rlay->rl_conf.timeout.tv_sec = $3;
		}
		| PROTO STRING			{
			struct protocol	*p;

			TAILQ_FOREACH(p, conf->sc_protos, entry)
				if (strcmp(p->name, $2) == 0)
					break;
			if (p == NULL) {
				yyerror("no such protocol: %s", $2);
				free($2);
				YYERROR;
			}
			free($2);
			rlay->rl_conf.proto = p->id;
			rlay->rl_proto = p;
		}
		| DISABLE		{ rlay->rl_conf.flags |= F_DISABLE; }
		| include
		;

forwardspec	: FORWARD opttlsclient TO tablename	{
			memset(&topts, 0, sizeof(topts));
			topts.timeout = conf->sc_conf.timeout;
			topts.mode = RELAY_DSTMODE_DEFAULT;
		} tableopts_l			{
			struct table		*def, *tb;
			struct relay_table	*rlt;

			TAILQ_FOREACH(def, &deftables, entry)
				if (strcmp(def->conf.name, $4) == 0)
					break;
			if (def == NULL) {
				yyerror("no such table: %s", $4);
				free($4);
				YYERROR;
			}
			free($4);
			if (topts.port == 0 && nlisten > 0)
				topts.port = listen_port[0];
			if (topts.port == 0) {
				yyerror("table %s has no port (give one, or "
				    "listen on before forward to)",
				    def->conf.name);
				YYERROR;
			}
			tb = table_use(def, &topts);
			free(topts.sendbuf);
			topts.sendbuf = NULL;
			if (tb == NULL)
				YYERROR;
			if ((rlt = calloc(1, sizeof(*rlt))) == NULL)
				fatal("out of memory");
			rlt->rlt_table = tb;
			rlt->rlt_mode = topts.mode;
			if (!TAILQ_EMPTY(&rlay->rl_tables))
				rlt->rlt_flags |= F_BACKUP;
			else
				rlay->rl_conf.fwdmode = topts.mode;
			if (topts.hashkey_set) {
				memcpy(rlay->rl_conf.hashkey.key8,
				    topts.hashkey, 16);
				rlay->rl_conf.flags |= F_HASHKEY;
			}
			TAILQ_INSERT_TAIL(&rlay->rl_tables, rlt, rlt_entry);
		}
		| FORWARD opttlsclient TO STRING port retry	{
			if (rlay->rl_conf.dstport != 0) {
				yyerror("relay %s: only one forward to an "
				    "address", rlay->rl_conf.name);
				free($4);
				YYERROR;
			}
			if (host_resolve($4, &rlay->rl_conf.dstss, 1) <= 0) {
				yyerror("invalid forward address: %s", $4);
				free($4);
				YYERROR;
			}
			free($4);
			rlay->rl_conf.dstport = $5;
			ss_setport(&rlay->rl_conf.dstss, $5);
			rlay->rl_conf.dstretry = $6;
		}
		;

opttlsclient	: /* empty */
		| WITH TLS		{ not_implemented("forward with tls"); }
		;

tableopts_l	: /* empty */
		| tableopts_l tableopts
		;

tableopts	: port			{ topts.port = $1; }
		| TIMEOUT timeout	{ topts.timeout = $2; }
		| INTERVAL NUMBER	{
			if ($2 < conf->sc_conf.interval.tv_sec ||
			    $2 % conf->sc_conf.interval.tv_sec) {
				yyerror("table interval must be a multiple "
				    "of the global interval (%lld)",
				    (long long)conf->sc_conf.interval.tv_sec);
				YYERROR;
			}
			topts.interval = $2;
		}
		| MODE dstmode			{
			topts.mode = $2;
		}
		| MODE dstmode STRING		{
			if ($2 != RELAY_DSTMODE_SRCHASH &&
			    $2 != RELAY_DSTMODE_LOADBALANCE &&
			    $2 != RELAY_DSTMODE_HASH) {
				yyerror("mode %s takes no hash key",
				    relay_mode_name($2));
				free($3);
				YYERROR;
			}
			if (parse_hashkey($3, topts.hashkey) == -1) {
				free($3);
				YYERROR;
			}
			free($3);
			topts.mode = $2;
			topts.hashkey_set = 1;
		}
		| CHECK tablecheck
		;

tablecheck	: ICMP				{
			if (check_set(CHECK_ICMP, 0) == -1)
				YYERROR;
		}
		| TCP				{
			if (check_set(CHECK_TCP, 0) == -1)
				YYERROR;
		}
		| TLS				{
			if (check_set(CHECK_TCP, 1) == -1)
				YYERROR;
		}
		| httptype STRING hostname CODE NUMBER	{
			if (check_set(CHECK_HTTP_CODE, $1) == -1) {
				free($2);
				free($3);
				YYERROR;
			}
			if ($5 < 100 || $5 > 999) {
				yyerror("invalid http code: %lld",
				    (long long)$5);
				free($2);
				free($3);
				YYERROR;
			}
			topts.retcode = $5;
			(void)strlcpy(topts.path, $2, sizeof(topts.path));
			if (asprintf(&topts.sendbuf,
			    "HEAD %s HTTP/1.%c\r\n%s\r\n", $2,
			    *$3 != '\0' ? '1' : '0', $3) == -1)
				fatal("out of memory");
			topts.sendbuf_len = strlen(topts.sendbuf);
			free($2);
			free($3);
		}
		| httptype STRING hostname DIGEST STRING	{
			size_t	 i, len = strlen($5);

			if (check_set(CHECK_HTTP_DIGEST, $1) == -1) {
				free($2);
				free($3);
				free($5);
				YYERROR;
			}
			for (i = 0; i < len; i++)
				if (!isxdigit((unsigned char)$5[i]))
					break;
			if (i < len || (len != 32 && len != 40)) {
				yyerror("invalid http digest: %s (32 hex "
				    "digits for MD5, 40 for SHA1)", $5);
				free($2);
				free($3);
				free($5);
				YYERROR;
			}
			for (i = 0; i < len; i++)
				$5[i] = tolower((unsigned char)$5[i]);
			topts.digest_type = len == 32 ? DIGEST_MD5 :
			    DIGEST_SHA1;
			(void)strlcpy(topts.digest, $5, sizeof(topts.digest));
			(void)strlcpy(topts.path, $2, sizeof(topts.path));
			if (asprintf(&topts.sendbuf,
			    "GET %s HTTP/1.%c\r\n%s\r\n", $2,
			    *$3 != '\0' ? '1' : '0', $3) == -1)
				fatal("out of memory");
			topts.sendbuf_len = strlen(topts.sendbuf);
			free($2);
			free($3);
			free($5);
		}
		| SEND sendbuf EXPECT STRING checktls	{
			if (check_set(CHECK_SEND_EXPECT, $5) == -1) {
				free($4);
				YYERROR;
			}
			if (strlcpy(topts.exbuf, $4, sizeof(topts.exbuf)) >=
			    sizeof(topts.exbuf)) {
				yyerror("expect buffer truncated");
				free($4);
				YYERROR;
			}
			free($4);
			if (translate_string(topts.exbuf) == -1)
				YYERROR;
			if (topts.sendbuf != NULL) {
				if (translate_string(topts.sendbuf) == -1)
					YYERROR;
				topts.sendbuf_len = strlen(topts.sendbuf);
			}
		}
		| BINARY SEND sendbuf EXPECT STRING checktls	{
			size_t	 i, len = strlen($5);

			if (check_set(CHECK_BINSEND_EXPECT, $6) == -1) {
				free($5);
				YYERROR;
			}
			for (i = 0; i < len; i++)
				if (!isxdigit((unsigned char)$5[i]))
					break;
			if (i < len || len % 2 || len == 0 ||
			    len >= sizeof(topts.exbuf)) {
				yyerror("invalid binary expect: %s (an even "
				    "number of hex digits, at most %zu)", $5,
				    sizeof(topts.exbuf) - 2);
				free($5);
				YYERROR;
			}
			for (i = 0; i < len; i++)
				$5[i] = tolower((unsigned char)$5[i]);
			(void)strlcpy(topts.exbuf, $5, sizeof(topts.exbuf));
			free($5);
			if (topts.sendbuf != NULL &&
			    binary_sendbuf() == -1)
				YYERROR;
		}
		| SCRIPT STRING			{
			if (check_set(CHECK_SCRIPT, 0) == -1) {
				free($2);
				YYERROR;
			}
			if (*$2 != '/') {
				yyerror("check script %s: the path must be "
				    "absolute", $2);
				free($2);
				YYERROR;
			}
			if (strlcpy(topts.path, $2, sizeof(topts.path)) >=
			    sizeof(topts.path)) {
				yyerror("script path truncated");
				free($2);
				YYERROR;
			}
			free($2);
		}
		;

httptype	: HTTP				{ $$ = 0; }
		| STRING			{
			if (strcmp($1, "https") != 0) {
				yyerror("unknown check type: %s", $1);
				free($1);
				YYERROR;
			}
			free($1);
			$$ = 1;
		}
		;

hostname	: /* empty */			{
			if (($$ = strdup("")) == NULL)
				fatal("out of memory");
		}
		| HOST STRING			{
			if (asprintf(&$$, "Host: %s\r\nConnection: close"
			    "\r\n", $2) == -1)
				fatal("out of memory");
			free($2);
		}
		;

sendbuf		: NOTHING			{ topts.sendbuf = NULL; }
		| STRING			{
			topts.sendbuf = $1;
			topts.sendbuf_len = strlen($1);
		}
		;

checktls	: /* empty */			{ $$ = 0; }
		| TLS				{ $$ = 1; }
		;

dstmode		: LOADBALANCE		{ $$ = RELAY_DSTMODE_LOADBALANCE; }
		| ROUNDROBIN		{ $$ = RELAY_DSTMODE_ROUNDROBIN; }
		| HASH			{ $$ = RELAY_DSTMODE_HASH; }
		| SRCHASH		{ $$ = RELAY_DSTMODE_SRCHASH; }
		| RANDOM		{ $$ = RELAY_DSTMODE_RANDOM; }
		| LEASTSTATES		{
			yyerror("mode least-states needs pf(4), "
			    "not available on this platform");
			YYERROR;
		}
		;

%%

struct keywords {
	const char	*k_name;
	int		 k_val;
};

static int
yyerror(const char *fmt, ...)
{
	static const char	*lastfile;
	static int		 lastline;
	va_list			 ap;
	char			*msg;

	file->errors++;
	/* the parser's own complaint adds nothing to ours */
	if (strcmp(fmt, "syntax error") == 0 && lastfile == file->name &&
	    lastline == yylval.lineno)
		return (0);
	lastfile = file->name;
	lastline = yylval.lineno;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		fatalx("yyerror vasprintf");
	va_end(ap);
	log_warnx("%s:%d: %s", file->name, yylval.lineno, msg);
	free(msg);
	return (0);
}

static void
not_implemented(const char *what)
{
	yyerror("%s: not implemented yet", what);
}

static int
kw_cmp(const void *k, const void *e)
{
	return (strcmp(k, ((const struct keywords *)e)->k_name));
}

static int
lookup(char *s)
{
	/* sorted, for bsearch */
	static const struct keywords keywords[] = {
		{ "backlog",		BACKLOG },
		{ "binary",		BINARY },
		{ "buffer",		BUFFER },
		{ "changes",		CHANGES },
		{ "check",		CHECK },
		{ "checks",		CHECKS },
		{ "code",		CODE },
		{ "connection",		CONNECTION },
		{ "digest",		DIGEST },
		{ "disable",		DISABLE },
		{ "engine",		ENGINE },
		{ "error",		ERROR },
		{ "errors",		ERRORS },
		{ "expect",		EXPECT },
		{ "forward",		FORWARD },
		{ "hash",		HASH },
		{ "host",		HOST },
		{ "http",		HTTP },
		{ "icmp",		ICMP },
		{ "include",		INCLUDE },
		{ "interval",		INTERVAL },
		{ "ip",			IP },
		{ "least-states",	LEASTSTATES },
		{ "listen",		LISTEN },
		{ "loadbalance",	LOADBALANCE },
		{ "log",		LOG },
		{ "mode",		MODE },
		{ "no",			NO },
		{ "nodelay",		NODELAY },
		{ "nothing",		NOTHING },
		{ "on",			ON },
		{ "parent",		PARENT },
		{ "port",		PORT },
		{ "prefork",		PREFORK },
		{ "priority",		PRIORITY },
		{ "protocol",		PROTO },
		{ "random",		RANDOM },
		{ "relay",		RELAY },
		{ "retry",		RETRY },
		{ "roundrobin",		ROUNDROBIN },
		{ "sack",		SACK },
		{ "script",		SCRIPT },
		{ "send",		SEND },
		{ "session",		SESSION },
		{ "socket",		SOCKET },
		{ "source-hash",	SRCHASH },
		{ "splice",		SPLICE },
		{ "state",		STATE },
		{ "table",		TABLE },
		{ "tcp",		TCP },
		{ "timeout",		TIMEOUT },
		{ "tls",		TLS },
		{ "to",			TO },
		{ "with",		WITH }
	};
	const struct keywords	*p;

	p = bsearch(s, keywords, nitems(keywords), sizeof(keywords[0]),
	    kw_cmp);
	if (p != NULL)
		return (p->k_val);
	return (STRING);
}

/* Markers around a macro's text pushed back into the input. */
#define START_EXPAND	1
#define DONE_EXPAND	2

static int	expanding;

static int
igetc(void)
{
	int	c;

	for (;;) {
		if (file->ungetpos > 0)
			c = file->ungetbuf[--file->ungetpos];
		else
			c = getc(file->stream);

		if (c == START_EXPAND)
			expanding = 1;
		else if (c == DONE_EXPAND)
			expanding = 0;
		else
			break;
	}
	return (c);
}

static int
lgetc(int quotec)
{
	int	c, next;

	if (quotec) {
		if ((c = igetc()) == EOF) {
			yyerror("reached end of file while parsing "
			    "quoted string");
			if (file == topfile || popfile() == EOF)
				return (EOF);
			return (quotec);
		}
		return (c);
	}

	/* a backslash at the end of a line joins the next one */
	while ((c = igetc()) == '\\') {
		next = igetc();
		if (next != '\n') {
			lungetc(next);
			break;
		}
		yylval.lineno = file->lineno;
		file->lineno++;
	}

	if (c == EOF) {
		/* a last line without a newline still ends a statement */
		if (file->eof_reached == 0) {
			file->eof_reached = 1;
			return ('\n');
		}
		while (c == EOF) {
			if (file == topfile || popfile() == EOF)
				return (EOF);
			c = igetc();
		}
	}
	return (c);
}

static int
lungetc(int c)
{
	unsigned char	*p;

	if (c == EOF)
		return (EOF);
	if (file->ungetpos >= file->ungetsize) {
		p = reallocarray(file->ungetbuf, file->ungetsize, 2);
		if (p == NULL)
			fatal("lungetc");
		file->ungetbuf = p;
		file->ungetsize *= 2;
	}
	file->ungetbuf[file->ungetpos++] = c;
	return (c);
}

static int
findeol(void)
{
	int	c;

	for (;;) {
		c = lgetc(0);
		if (c == '\n') {
			file->lineno++;
			break;
		}
		if (c == EOF)
			break;
	}
	return (ERROR);
}

#define MAXTOKEN	8096

static int
allowed_in_string(int x)
{
	if (isalnum(x))
		return (1);
	if (!ispunct(x))
		return (0);
	switch (x) {
	case '(': case ')': case '{': case '}': case '<': case '>':
	case '!': case '=': case '/': case '#': case ',':
		return (0);
	}
	return (1);
}

static int
allowed_to_end_number(int x)
{
	return (isspace(x) || x == ')' || x == ',' || x == '/' ||
	    x == '}' || x == '=' || x == '>');
}

static int
yylex(void)
{
	char		 buf[MAXTOKEN];
	char		*p, *val;
	const char	*errstr;
	int		 quotec, next, c, token;

top:
	p = buf;
	while ((c = lgetc(0)) == ' ' || c == '\t')
		; /* nothing */

	yylval.lineno = file->lineno;
	if (c == '#')
		while ((c = lgetc(0)) != '\n' && c != EOF)
			; /* nothing */
	if (c == '$' && !expanding) {
		for (;;) {
			if ((c = lgetc(0)) == EOF)
				return (0);
			if (p + 1 >= buf + sizeof(buf) - 1) {
				yyerror("string too long");
				return (findeol());
			}
			if (isalnum(c) || c == '_') {
				*p++ = c;
				continue;
			}
			*p = '\0';
			lungetc(c);
			break;
		}
		val = symget(buf);
		if (val == NULL) {
			yyerror("macro '%s' not defined", buf);
			return (findeol());
		}
		p = val + strlen(val) - 1;
		lungetc(DONE_EXPAND);
		while (p >= val) {
			lungetc((unsigned char)*p);
			p--;
		}
		lungetc(START_EXPAND);
		goto top;
	}

	switch (c) {
	case '\'':
	case '"':
		quotec = c;
		for (;;) {
			if ((c = lgetc(quotec)) == EOF)
				return (0);
			if (c == '\n') {
				file->lineno++;
				continue;
			} else if (c == '\\') {
				if ((next = lgetc(quotec)) == EOF)
					return (0);
				if (next == quotec || next == ' ' ||
				    next == '\t')
					c = next;
				else if (next == '\n') {
					file->lineno++;
					continue;
				} else
					lungetc(next);
			} else if (c == quotec) {
				*p = '\0';
				break;
			} else if (c == '\0') {
				yyerror("syntax error: NUL byte in string");
				return (findeol());
			}
			if (p + 1 >= buf + sizeof(buf) - 1) {
				yyerror("string too long");
				return (findeol());
			}
			*p++ = c;
		}
		yylval.v.string = strdup(buf);
		if (yylval.v.string == NULL)
			fatal("yylex: strdup");
		return (STRING);
	}

	if (c == '-' || isdigit(c)) {
		do {
			*p++ = c;
			if ((size_t)(p - buf) >= sizeof(buf) - 1) {
				yyerror("string too long");
				return (findeol());
			}
		} while ((c = lgetc(0)) != EOF && isdigit(c));
		lungetc(c);
		if (p == buf + 1 && buf[0] == '-')
			goto nodigits;
		if (c == EOF || allowed_to_end_number(c)) {
			*p = '\0';
			yylval.v.number = strtonum(buf, LLONG_MIN,
			    LLONG_MAX, &errstr);
			if (errstr) {
				yyerror("\"%s\" invalid number: %s",
				    buf, errstr);
				return (findeol());
			}
			return (NUMBER);
		} else {
nodigits:
			while (p > buf + 1)
				lungetc((unsigned char)*--p);
			c = (unsigned char)*--p;
			if (c == '-')
				return (c);
		}
	}

	if (allowed_in_string(c)) {
		do {
			*p++ = c;
			if ((size_t)(p - buf) >= sizeof(buf) - 1) {
				yyerror("string too long");
				return (findeol());
			}
		} while ((c = lgetc(0)) != EOF && allowed_in_string(c));
		lungetc(c);
		*p = '\0';
		if ((token = lookup(buf)) == STRING)
			if ((yylval.v.string = strdup(buf)) == NULL)
				fatal("yylex: strdup");
		return (token);
	}
	if (c == '\n') {
		yylval.lineno = file->lineno;
		file->lineno++;
	}
	if (c == EOF)
		return (0);
	return (c);
}

static struct file *
pushfile(const char *name)
{
	struct file	*nfile;

	if ((nfile = calloc(1, sizeof(struct file))) == NULL) {
		log_warn("%s", __func__);
		return (NULL);
	}
	if ((nfile->name = strdup(name)) == NULL) {
		log_warn("%s", __func__);
		free(nfile);
		return (NULL);
	}
	if ((nfile->stream = fopen(nfile->name, "r")) == NULL) {
		log_warn("%s", nfile->name);
		free(nfile->name);
		free(nfile);
		return (NULL);
	}
	nfile->lineno = 1;
	nfile->ungetsize = 16;
	nfile->ungetbuf = malloc(nfile->ungetsize);
	if (nfile->ungetbuf == NULL) {
		log_warn("%s", __func__);
		fclose(nfile->stream);
		free(nfile->name);
		free(nfile);
		return (NULL);
	}
	TAILQ_INSERT_TAIL(&files, nfile, entry);
	return (nfile);
}

static int
popfile(void)
{
	struct file	*prev;

	if ((prev = TAILQ_PREV(file, files, entry)) != NULL)
		prev->errors += file->errors;

	TAILQ_REMOVE(&files, file, entry);
	fclose(file->stream);
	free(file->name);
	free(file->ungetbuf);
	free(file);
	file = prev;
	return (file ? 0 : EOF);
}

/*
 * Parse the whole file into x_conf, which relayd_env_new() made.  Returns
 * 0, or -1 after logging every error as file:line: message.
 */
int
parse_config(const char *filename, struct relayd *x_conf)
{
	struct sym	*sym, *next;
	struct table	*tb;
	struct host	*h;
	int		 errors;

	conf = x_conf;
	TAILQ_INIT(&deftables);
	table = NULL;
	rlay = NULL;
	proto = NULL;
	last_relay_id = last_table_id = last_host_id = last_proto_id = 0;
	yylval.lineno = 0;

	if ((file = pushfile(filename)) == NULL)
		return (-1);
	topfile = file;

	yyparse();
	errors = file->errors;
	while (file != NULL && popfile() != EOF)
		;
	file = topfile = NULL;

	/* a half-built object left by an error */
	if (rlay != NULL) {
		free(rlay);
		rlay = NULL;
	}
	if (proto != NULL) {
		free(proto);
		proto = NULL;
	}
	if (table != NULL) {
		TAILQ_INSERT_TAIL(&deftables, table, entry);
		table->conf.flags |= F_USED;
		table = NULL;
	}

	if (errors == 0)
		errors = check_config();

	/* the definitions were only templates for the copies */
	while ((tb = TAILQ_FIRST(&deftables)) != NULL) {
		TAILQ_REMOVE(&deftables, tb, entry);
		while ((h = TAILQ_FIRST(&tb->hosts)) != NULL) {
			TAILQ_REMOVE(&tb->hosts, h, entry);
			free(h);
		}
		free(tb);
	}

	TAILQ_FOREACH_SAFE(sym, &symhead, entry, next) {
		if ((conf->sc_conf.opts & RELAYD_OPT_VERBOSE) && !sym->used)
			log_warnx("warning: macro '%s' not used", sym->nam);
		if (!sym->persist) {
			free(sym->nam);
			free(sym->val);
			TAILQ_REMOVE(&symhead, sym, entry);
			free(sym);
		} else
			sym->used = 0;
	}

	return (errors ? -1 : 0);
}

/* Checks that need the whole file. */
static int
check_config(void)
{
	struct table	*tb;
	struct host	*h, *ph;
	int		 errors = 0;

	if (timercmp(&conf->sc_conf.timeout, &conf->sc_conf.interval, >=)) {
		log_warnx("%s: global timeout exceeds interval",
		    conf->sc_conffile);
		errors++;
	}
	TAILQ_FOREACH(tb, &deftables, entry)
		if ((tb->conf.flags & F_USED) == 0) {
			log_warnx("%s:%d: unused table: %s",
			    conf->sc_conffile, tb->conf.retcode,
			    tb->conf.name);
			errors++;
		}
	TAILQ_FOREACH(h, &conf->sc_hosts, globalentry)
		if (h->conf.parentid != 0 &&
		    ((ph = host_find(conf, h->conf.parentid)) == NULL ||
		    ph == h)) {
			log_warnx("%s: host %s in table %s: no host with id "
			    "%u to follow as parent", conf->sc_conffile,
			    h->conf.name, h->tablename, h->conf.parentid);
			errors++;
		}
	TAILQ_FOREACH(tb, conf->sc_tables, entry)
		if (timercmp(&tb->conf.timeout, &conf->sc_conf.interval,
		    >=)) {
			log_warnx("%s: table timeout exceeds interval: %s",
			    conf->sc_conffile, tb->conf.name);
			errors++;
		}
	return (errors);
}

static int
parse_hashkey(const char *s, uint8_t *key)
{
	unsigned int	 i;
	char		 hex[3];

	memset(key, 0, 16);
	if (strncmp(s, "0x", 2) == 0) {
		if (strlen(s) != 2 + 32) {
			yyerror("hash key must be 0x and 32 hex digits");
			return (-1);
		}
		for (i = 0; i < 16; i++) {
			hex[0] = s[2 + 2 * i];
			hex[1] = s[3 + 2 * i];
			hex[2] = '\0';
			if (!isxdigit((unsigned char)hex[0]) ||
			    !isxdigit((unsigned char)hex[1])) {
				yyerror("invalid hash key: %s", s);
				return (-1);
			}
			key[i] = strtoul(hex, NULL, 16);
		}
		return (0);
	}
	/* any other string is taken as the key, NUL-padded */
	memcpy(key, s, strnlen(s, 16));
	return (0);
}

/*
 * An address, an interface name (its first IPv4, else IPv6 address), or
 * a host name (its first max addresses).
 */
static int
host_resolve(const char *s, struct sockaddr_storage *ss, int max)
{
	struct addrinfo		 hints, *res0, *res;
	struct ifaddrs		*ifap, *ifa;
	struct sockaddr_in	*sin;
	struct sockaddr_in6	*sin6;
	int			 n = 0, family;

	memset(ss, 0, sizeof(*ss) * max);
	sin = (struct sockaddr_in *)ss;
	if (inet_pton(AF_INET, s, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		return (1);
	}
	sin6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET6, s, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		return (1);
	}

	if (getifaddrs(&ifap) == 0) {
		for (family = AF_INET; n == 0 && family != -1;
		    family = family == AF_INET ? AF_INET6 : -1)
			for (ifa = ifap; ifa != NULL; ifa = ifa->ifa_next) {
				if (ifa->ifa_addr == NULL ||
				    ifa->ifa_addr->sa_family != family ||
				    strcmp(ifa->ifa_name, s) != 0)
					continue;
				memcpy(ss, ifa->ifa_addr, family == AF_INET ?
				    sizeof(struct sockaddr_in) :
				    sizeof(struct sockaddr_in6));
				n = 1;
				break;
			}
		freeifaddrs(ifap);
		if (n)
			return (n);
	}

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = PF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_ADDRCONFIG;
	if (getaddrinfo(s, NULL, &hints, &res0) != 0)
		return (0);
	for (res = res0; res != NULL && n < max; res = res->ai_next) {
		if (res->ai_family != AF_INET && res->ai_family != AF_INET6)
			continue;
		memcpy(&ss[n], res->ai_addr, res->ai_addrlen);
		n++;
	}
	freeaddrinfo(res0);
	return (n);
}

static int
table_add_hosts(struct table *tb, const char *name)
{
	struct sockaddr_storage	 ss[MAX_HOSTADDRS];
	struct host		*h;
	int			 i, n;

	if ((n = host_resolve(name, ss, MAX_HOSTADDRS)) <= 0) {
		yyerror("invalid host: %s", name);
		return (-1);
	}
	for (i = 0; i < n; i++) {
		if ((h = calloc(1, sizeof(*h))) == NULL)
			fatal("out of memory");
		if (strlcpy(h->conf.name, name, sizeof(h->conf.name)) >=
		    sizeof(h->conf.name)) {
			yyerror("host name truncated");
			free(h);
			return (-1);
		}
		h->conf.ss = ss[i];
		h->conf.retry = hopts.retry;
		h->conf.parentid = hopts.parent;
		h->conf.priority = hopts.priority;
		h->conf.ttl = hopts.ttl;
		TAILQ_INSERT_TAIL(&tb->hosts, h, entry);
	}
	return (0);
}

/* Two uses of a table with the same check share it. */
static int
table_samecheck(struct table *tb, struct table_opts *o)
{
	return (tb->conf.check == o->check &&
	    (tb->conf.flags & F_TLS) == o->flags &&
	    tb->conf.retcode == o->retcode &&
	    strcmp(tb->conf.digest, o->digest) == 0 &&
	    strcmp(tb->conf.exbuf, o->exbuf) == 0 &&
	    strcmp(tb->conf.path, o->path) == 0 &&
	    tb->sendbuf_len == o->sendbuf_len &&
	    (o->sendbuf_len == 0 ||
	    memcmp(tb->sendbuf, o->sendbuf, o->sendbuf_len) == 0));
}

static int
check_set(enum table_check check, int tls)
{
	if (topts.check != CHECK_NOCHECK) {
		yyerror("only one check per table");
		return (-1);
	}
	topts.check = check;
	topts.flags = tls ? F_TLS : 0;
	return (0);
}

/* \r, \n, \t and \\ in send and expect strings, as OpenBSD's relayd. */
static int
translate_string(char *str)
{
	char	*reader = str, *writer = str;

	while (*reader != '\0') {
		if (*reader != '\\') {
			*writer++ = *reader++;
			continue;
		}
		reader++;
		switch (*reader) {
		case 'n':
			*writer++ = '\n';
			break;
		case 'r':
			*writer++ = '\r';
			break;
		case 't':
			*writer++ = '\t';
			break;
		case '\\':
			*writer++ = '\\';
			break;
		case '\0':
			yyerror("trailing backslash in %s", str);
			return (-1);
		default:
			*writer++ = '\\';
			*writer++ = *reader;
			break;
		}
		reader++;
	}
	*writer = '\0';
	return (0);
}

/* check binary send "hex": the bytes to send. */
static int
binary_sendbuf(void)
{
	char	*hex = topts.sendbuf, byte[3];
	size_t	 i, len = strlen(hex);

	for (i = 0; i < len; i++)
		if (!isxdigit((unsigned char)hex[i]))
			break;
	if (i < len || len % 2 || len == 0) {
		yyerror("invalid binary send: %s (an even number of hex "
		    "digits)", hex);
		return (-1);
	}
	for (i = 0; i < len / 2; i++) {
		byte[0] = hex[2 * i];
		byte[1] = hex[2 * i + 1];
		byte[2] = '\0';
		hex[i] = (char)strtoul(byte, NULL, 16);
	}
	topts.sendbuf_len = len / 2;
	return (0);
}

/*
 * Every distinct use of a table (port and options) is a table of its own
 * named name:port, as relayctl shows it.
 */
static struct table *
table_use(struct table *def, struct table_opts *o)
{
	struct table	*tb;
	struct host	*h, *dh;
	char		 name[TABLE_NAME_SIZE];

	def->conf.flags |= F_USED;
	if (snprintf(name, sizeof(name), "%s:%u", def->conf.name,
	    o->port) >= (int)sizeof(name)) {
		yyerror("table name too long: %s", def->conf.name);
		return (NULL);
	}
	TAILQ_FOREACH(tb, conf->sc_tables, entry)
		if (strcmp(tb->conf.name, name) == 0 &&
		    tb->conf.fwdmode == o->mode &&
		    timercmp(&tb->conf.timeout, &o->timeout, ==) &&
		    tb->conf.skip_cnt == o->interval &&
		    table_samecheck(tb, o))
			return (tb);
	if ((tb = calloc(1, sizeof(*tb))) == NULL)
		fatal("out of memory");
	TAILQ_INIT(&tb->hosts);
	(void)strlcpy(tb->conf.name, name, sizeof(tb->conf.name));
	tb->conf.id = ++last_table_id;
	tb->conf.flags = def->conf.flags & F_DISABLE;
	tb->conf.port = o->port;
	tb->conf.timeout = o->timeout;
	tb->conf.skip_cnt = o->interval;
	tb->conf.fwdmode = o->mode;
	tb->conf.check = o->check;
	tb->conf.flags |= o->flags;
	tb->conf.retcode = o->retcode;
	tb->conf.digest_type = o->digest_type;
	(void)strlcpy(tb->conf.digest, o->digest, sizeof(tb->conf.digest));
	(void)strlcpy(tb->conf.exbuf, o->exbuf, sizeof(tb->conf.exbuf));
	(void)strlcpy(tb->conf.path, o->path, sizeof(tb->conf.path));
	if (o->sendbuf != NULL) {
		if ((tb->sendbuf = malloc(o->sendbuf_len + 1)) == NULL)
			fatal("out of memory");
		memcpy(tb->sendbuf, o->sendbuf, o->sendbuf_len);
		tb->sendbuf[o->sendbuf_len] = '\0';
		tb->sendbuf_len = o->sendbuf_len;
	}
	TAILQ_FOREACH(dh, &def->hosts, entry) {
		if ((h = calloc(1, sizeof(*h))) == NULL)
			fatal("out of memory");
		h->conf = dh->conf;
		h->conf.id = ++last_host_id;
		h->conf.tableid = tb->conf.id;
		ss_setport(&h->conf.ss, o->port);
		h->tablename = tb->conf.name;
		TAILQ_INSERT_TAIL(&tb->hosts, h, entry);
		TAILQ_INSERT_TAIL(&conf->sc_hosts, h, globalentry);
	}
	TAILQ_INSERT_TAIL(conf->sc_tables, tb, entry);
	return (tb);
}

/* Each further listen on makes a clone of the relay, name<n>:port. */
static int
relay_clone(struct relay *r, struct sockaddr_storage *ss, in_port_t port,
    int n)
{
	struct relay		*c;
	struct relay_table	*rlt, *crlt;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		fatal("out of memory");
	c->rl_conf = r->rl_conf;
	c->rl_proto = r->rl_proto;
	c->rl_s = -1;
	TAILQ_INIT(&c->rl_tables);
	if (snprintf(c->rl_conf.name, sizeof(c->rl_conf.name), "%s%d:%u",
	    r->rl_conf.name, n, port) >= (int)sizeof(c->rl_conf.name)) {
		yyerror("relay name truncated");
		free(c);
		return (-1);
	}
	c->rl_conf.id = ++last_relay_id;
	c->rl_conf.ss = *ss;
	c->rl_conf.port = port;
	if (relay_findbyaddr(conf, &c->rl_conf) != NULL) {
		yyerror("relay %s or listener defined twice",
		    c->rl_conf.name);
		free(c);
		return (-1);
	}
	TAILQ_FOREACH(rlt, &r->rl_tables, rlt_entry) {
		if ((crlt = calloc(1, sizeof(*crlt))) == NULL)
			fatal("out of memory");
		*crlt = *rlt;
		TAILQ_INSERT_TAIL(&c->rl_tables, crlt, rlt_entry);
	}
	TAILQ_INSERT_TAIL(conf->sc_relays, c, rl_entry);
	return (0);
}

static void
relay_free(struct relay *r)
{
	struct relay_table	*rlt;

	while ((rlt = TAILQ_FIRST(&r->rl_tables)) != NULL) {
		TAILQ_REMOVE(&r->rl_tables, rlt, rlt_entry);
		free(rlt);
	}
	free(r);
}

static int
relay_finish(struct relay *r)
{
	int	 i;

	if (nlisten == 0) {
		yyerror("relay %s has no listener", r->rl_conf.name);
		relay_free(r);
		return (-1);
	}
	if (r->rl_conf.dstport == 0 && TAILQ_EMPTY(&r->rl_tables)) {
		yyerror("relay %s has no target, rdr, or table",
		    r->rl_conf.name);
		relay_free(r);
		return (-1);
	}
	if (r->rl_proto == NULL) {
		r->rl_proto = &conf->sc_proto_default;
		r->rl_conf.proto = conf->sc_proto_default.id;
	}
	r->rl_conf.ss = listen_ss[0];
	r->rl_conf.port = listen_port[0];
	if (relay_findbyaddr(conf, &r->rl_conf) != NULL) {
		yyerror("relay %s or listener defined twice",
		    r->rl_conf.name);
		relay_free(r);
		return (-1);
	}
	TAILQ_INSERT_TAIL(conf->sc_relays, r, rl_entry);
	for (i = 1; i < nlisten; i++)
		if (relay_clone(r, &listen_ss[i], listen_port[i], i) == -1)
			return (-1);
	return (0);
}

static int
symset(const char *nam, const char *val, int persist)
{
	struct sym	*sym;

	TAILQ_FOREACH(sym, &symhead, entry)
		if (strcmp(nam, sym->nam) == 0)
			break;

	if (sym != NULL) {
		/* -D wins over the file */
		if (sym->persist == 1)
			return (0);
		free(sym->nam);
		free(sym->val);
		TAILQ_REMOVE(&symhead, sym, entry);
		free(sym);
	}
	if ((sym = calloc(1, sizeof(*sym))) == NULL)
		return (-1);
	if ((sym->nam = strdup(nam)) == NULL) {
		free(sym);
		return (-1);
	}
	if ((sym->val = strdup(val)) == NULL) {
		free(sym->nam);
		free(sym);
		return (-1);
	}
	sym->used = 0;
	sym->persist = persist;
	TAILQ_INSERT_TAIL(&symhead, sym, entry);
	return (0);
}

int
cmdline_symset(char *s)
{
	char	*sym, *val;
	int	 ret;

	if ((val = strrchr(s, '=')) == NULL)
		return (-1);
	if ((sym = strndup(s, val - s)) == NULL)
		fatal("%s: strndup", __func__);
	ret = symset(sym, val + 1, 1);
	free(sym);
	return (ret);
}

static char *
symget(const char *nam)
{
	struct sym	*sym;

	TAILQ_FOREACH(sym, &symhead, entry)
		if (strcmp(nam, sym->nam) == 0) {
			sym->used = 1;
			return (sym->val);
		}
	return (NULL);
}
