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
#include <grp.h>
#include <pwd.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tls.h>

#include "relayd.h"
#include "http.h"

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
	int			 lastline;	/* of the last word read */
	int			 errors;
} *file, *topfile;

static struct file	*pushfile(const char *);
static int		 regular_file(FILE *, const char *);
static int		 popfile(void);
int			 yyparse(void);
static int		 yylex(void);
static int		 yylex_token(void);
static int		 yyerror(const char *, ...)
			    __attribute__((__format__ (printf, 1, 2)));
static int		 kw_cmp(const void *, const void *);
static int		 lookup(char *);
static void		 syntax_at(char *, size_t);
static void		 syntax_word(char *, size_t, const char *);
static int		 yylex_macro(char *, size_t, int *);
static int		 yylex_quoted(int, char *, size_t);
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
/* a macro's value, and all the macro text of one parse, are bounded */
#define MACRO_MAXLEN	65536
#define MACRO_MAXTOTAL	(8 * 1024 * 1024)
static size_t		 expanded;	/* macro bytes read, this parse */
static size_t		 stringlen;	/* the string being joined */
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
	char			 host[RELAYD_HOSTNAME_MAX + 1];
	char			*sendbuf;
	size_t			 sendbuf_len;
	char			 demote[DEMOTE_GROUP_SIZE];
};

#define FWD_NORMAL		0
#define FWD_ROUTE		1
#define FWD_TRANS		2

/* Host options, applied to every address a host entry resolves to. */
struct host_opts {
	int			 retry;
	int			 parent;
	int			 priority;
	int			 ttl;
};

/*
 * An action that frees a string it was given clears it: the %destructor
 * frees what error recovery discards, and must not free it again.
 */
#define FREEARG(x)		do { free(x); (x) = NULL; } while (0)

#define MAX_LISTEN		16
#define MAX_INCLUDE_DEPTH	16
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
static int			 listen_tls[MAX_LISTEN];
static int			 listen_ppn[MAX_LISTEN];
static uid_t			 listen_uid[MAX_LISTEN];
static gid_t			 listen_gid[MAX_LISTEN];
static mode_t			 listen_mode[MAX_LISTEN];
static struct rule_addr		 listen_pp[MAX_LISTEN][RELAY_PPFROM_MAX];
static int			 nlisten;
static objid_t			 last_relay_id;
static objid_t			 last_table_id;
static objid_t			 last_host_id;
static objid_t			 last_proto_id;
static objid_t			 last_rule_id;

/* The redirection or router being parsed, and what is counted of it. */
static struct rdr	*rdr;
static struct router	*router;
static struct {
	int			 active;
	int			 ntables;
	in_port_t		 port;
	in_port_t		 port_high;	/* of the last port range */
} pfo;
static objid_t		 last_rdr_id, last_router_id;
static char		(*pfnames)[MAX_NAME_SIZE];	/* of both */
static int		 npfnames;
static char		 pftags[64][64];	/* pftag names: mark order */
static int		 npftags;
static char		 rtlabels[ROUTER_PROTO_MAX - ROUTER_PROTO_LABEL + 1][64];
static int		 nrtlabels;

static struct relay_rule	*rule;
static char			*rulefile;
static int			 ruletag, rulelabel;
static enum key_type		 rulekey;
static int			 valmatch;	/* of the last value */
static int			 rlay_proto_set;
static int			 rlay_fwd_tls;	/* forward lines: 1 with tls, */
static int			 rlay_fwd_plain; /* 1 without, 2 warned */

int		 parse_noresolve;	/* fuzzing: numeric addresses only */

static int	 host_resolve(const char *, struct sockaddr_storage *, int);
static size_t	 unix_path_max(void);
static void	 addr_error(const char *, const char *);
static int	 table_add_hosts(struct table *, const char *);
static struct table *
		 table_use(struct table *, struct table_opts *);
static int	 table_kernel_fits(struct table *, const char *,
		    const char *, unsigned int);
static int	 relay_clone(struct relay *, struct sockaddr_storage *,
		    in_port_t, int);
static int	 relay_finish(struct relay *);
static int	 relay_dnscheck(struct relay *);
static int	 announce_check(const char *, const char *,
		    struct sockaddr_storage *);
static int	 relay_limitcheck(struct relay *);
static void	 relay_free(struct relay *);
static void	 relay_ppfrom(struct relay *, int);
static int	 sockperm_ok(void);
static int	 table_unix(struct table *);
static int	 parse_hashkey(const char *, uint8_t *);
static uint32_t	 rdr_seed(const char *, const uint8_t *);
static int	 dstaf_set(int, const struct in6_addr *);
static void	 needs_pf(const char *);
static int	 rdr_name_taken(const char *, const char *);
static int	 rdr_table(int, char **, char **);
static int	 rdr_route_check(struct rdr *);
static int	 table_defined(const char *, int);
static int	 addr_prefix(char *, int64_t, struct rule_addr *);
static int	 rule_add(struct protocol *, struct relay_rule *,
		    const char *);
static int	 rule_kv_set(enum key_type, enum key_option, int, char *,
		    char *);
static int	 rule_kv_check(struct relay_rule *, const char *);
static int	 proto_strset(char **, char *, const char *);
static int	 tls_validate(const char *, char *);
static int	 relay_tls_load(struct relay *);
static void	 rdr_purge(void);
static int	 translate_string(char *);
static int	 binary_sendbuf(void);
static int	 table_samecheck(struct table *, struct table_opts *);
static int	 check_set(enum table_check, int);
static void	 topts_reset(void);
static int	 check_config(void);

typedef struct {
	union {
		int64_t			 number;
		char			*string;
		struct timeval		 tv;
		enum forwardmode	 mode;
		struct rule_addr	 addr;
		struct {
			char		*key;
			int		 type;
		}			 digest;
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
%token	GLOB IGNORECASE PATTERN
%token	AGENTX APPEND BACKUP BLOCK CA CACHE CERTIFICATE CIPHERS CLIENT CONTEXT
%token	COOKIE DEMOTE DESTINATION ECDHE EDH EXTERNAL FILENAME FROM HEADER
%token	HEADERLEN INET INET6 INTERFACE KEY KEYPAIR LABEL LOOKUP MATCH METHOD
%token	NAT PARAMS PASS PASSWORD PATH PFLOG PFTAG QUERYSTR QUICK REAL REDIRECT
%token	REMOVE REQUEST RESPONSE RETURN ROUTE ROUTER RTABLE RTLABEL SET
%token	STICKYADDR STRIP STYLE TAG TAGGED TICKETS TRANSPARENT URL VALUE
%token	WEBSOCKETS CRL DIRECTORY PROXYPROTO V1 V2 OWNER GROUP RESTRICTED
%token	HTTP2 STREAMS PIPELINE CONNECTIONS ANNOUNCE BUCKETS BUCKETIDLE
%token	MAXSRCCONN MAXSRCCONNRATE OVERLOAD FLUSH EXPIRE SRCPREFIX
%token	MAXSRCREQRATE BURST BACKEND IDLE
%token	<v.string>	STRING
%token	<v.number>	NUMBER
%type	<v.string>	string macroval tablename value interface
%type	<v.number>	loglevel opttls port retry prototype checktls optburst
%type	<v.number>	httptype opttlsclient forwardmode tlsflag
%type	<v.number>	action rulelog ruledir ruledirlog quick ruleaf key_option optmatch
%type	<v.number>	kvmatch kvmatch1
%type	<v.number>	redirect_proto optproxyproto optport pflog
%type	<v.string>	hostname optcrl
%type	<v.tv>		timeout
%type	<v.mode>	dstmode
%type	<v.addr>	addrprefix rulesrc ruledst
%type	<v.digest>	optdigest
%destructor	{ free($$); } <v.string>
%destructor	{ free($$.key); } <v.digest>

%%

grammar		: /* empty */
		| grammar include '\n'
		| grammar '\n'
		| grammar varset '\n'
		| grammar main '\n'
		| grammar tabledef '\n'
		| grammar protodef '\n'
		| grammar relaydef '\n'
		| grammar rdrdef '\n'
		| grammar routerdef '\n'
		| grammar error '\n'		{ file->errors++; }
		;

include		: INCLUDE STRING		{
			struct file	*nfile, *f;
			int		 depth = 0;

			TAILQ_FOREACH(f, &files, entry)
				depth++;
			if (depth >= MAX_INCLUDE_DEPTH) {
				yyerror("include %s: more than %d files deep",
				    $2, MAX_INCLUDE_DEPTH);
				FREEARG($2);
				YYERROR;
			}
			if ((nfile = pushfile($2)) == NULL) {
				yyerror("failed to include file %s", $2);
				FREEARG($2);
				YYERROR;
			}
			FREEARG($2);
			file = nfile;
			lungetc('\n');
		}
		;

string		: string STRING			{
			size_t	 len = strlen($2);

			/* linear: a long macro is many words */
			if (stringlen + 1 + len > MACRO_MAXLEN) {
				yyerror("macro value longer than %d bytes",
				    MACRO_MAXLEN);
				FREEARG($1);
				FREEARG($2);
				YYERROR;
			}
			if (($$ = realloc($1, stringlen + len + 2)) == NULL)
				fatal("string: realloc");
			$$[stringlen] = ' ';
			memcpy($$ + stringlen + 1, $2, len + 1);
			stringlen += 1 + len;
			FREEARG($2);
		}
		| STRING			{
			stringlen = strlen($1);
			$$ = $1;
		}
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
					FREEARG($1);
					FREEARG($3);
					YYERROR;
				}
			if (symset($1, $3, 0) == -1)
				fatal("cannot store variable");
			FREEARG($1);
			FREEARG($3);
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
			if (strlen($2) > unix_path_max() ||
			    strlcpy(conf->sc_conf.socket, $2,
			    sizeof(conf->sc_conf.socket)) >=
			    sizeof(conf->sc_conf.socket)) {
				yyerror("socket path too long (at most %zu "
				    "bytes)", unix_path_max());
				FREEARG($2);
				YYERROR;
			}
			FREEARG($2);
		}
		| ANNOUNCE TABLE NUMBER		{
			/* 255: Linux's local table, the node's addresses */
			if ($3 < 1 || $3 > INT_MAX || $3 == 255) {
				yyerror("invalid announce table: %lld (1 to "
				    "%d, not 255)", (long long)$3, INT_MAX);
				YYERROR;
			}
			conf->sc_conf.announce_table = $3;
		}
		| DEMOTE DIRECTORY STRING	{
			if (*$3 != '/' || strlcpy(conf->sc_conf.demote_dir, $3,
			    sizeof(conf->sc_conf.demote_dir)) >=
			    sizeof(conf->sc_conf.demote_dir)) {
				yyerror("invalid demote directory: %s", $3);
				FREEARG($3);
				YYERROR;
			}
			FREEARG($3);
		}
		| SOCKET STRING RESTRICTED	{
			if (*$2 == '\0' || strlen($2) > unix_path_max() ||
			    strlcpy(conf->sc_conf.rsocket, $2,
			    sizeof(conf->sc_conf.rsocket)) >=
			    sizeof(conf->sc_conf.rsocket)) {
				if (*$2 == '\0')
					yyerror("invalid restricted socket "
					    "path: empty");
				else
					yyerror("invalid restricted socket "
					    "path (at most %zu bytes)",
					    unix_path_max());
				FREEARG($2);
				YYERROR;
			}
			FREEARG($2);
		}
		| TLS DIRECTORY STRING		{
			if (*$3 == '\0' || strlcpy(conf->sc_conf.tlsdir, $3,
			    sizeof(conf->sc_conf.tlsdir)) >=
			    sizeof(conf->sc_conf.tlsdir)) {
				yyerror("tls directory: a path shorter than "
				    "%d bytes", PATH_MAX);
				FREEARG($3);
				YYERROR;
			}
			FREEARG($3);
		}
		| SPLICE ENGINE STRING		{
			char	 names[64];
			int	 id;

			if ((id = splice_engine_byname($3, names,
			    sizeof(names))) == -1) {
				yyerror("unknown splice engine: %s (%s)", $3,
				    names);
				FREEARG($3);
				YYERROR;
			}
			conf->sc_conf.splice_engine = id;
			FREEARG($3);
		}
		| STRING LISTEN ON STRING port	{
			struct sockaddr_storage	 ss;

			/* ours; "metrics" is not reserved */
			if (strcmp($1, "metrics") != 0) {
				char	 w[48];

				syntax_word(w, sizeof(w), $1);
				yyerror("syntax error at \"%s\"", w);
				FREEARG($1);
				FREEARG($4);
				YYERROR;
			}
			FREEARG($1);
			if (host_resolve($4, &ss, 1) <= 0 ||
			    (ss.ss_family != AF_INET &&
			    ss.ss_family != AF_INET6)) {
				yyerror("metrics listen on: invalid address: "
				    "%s", $4);
				FREEARG($4);
				YYERROR;
			}
			FREEARG($4);
			ss_setport(&ss, $5);
			conf->sc_conf.metrics_ss = ss;
		}
		| AGENTX			{
			conf->sc_conf.flags |= F_AGENTX;
			(void)strlcpy(conf->sc_conf.agentx_path, AGENTX_PATH,
			    sizeof(conf->sc_conf.agentx_path));
			conf->sc_conf.agentx_context[0] = '\0';
		} agentxopts
		;

agentxopts	: /* empty */
		| agentxopts agentxopt
		;

agentxopt	: CONTEXT STRING		{
			if (strlcpy(conf->sc_conf.agentx_context, $2,
			    sizeof(conf->sc_conf.agentx_context)) >=
			    sizeof(conf->sc_conf.agentx_context)) {
				yyerror("agentx context too long");
				FREEARG($2);
				YYERROR;
			}
			FREEARG($2);
		}
		| PATH STRING			{
			if (strlcpy(conf->sc_conf.agentx_path, $2,
			    sizeof(conf->sc_conf.agentx_path)) >=
			    sizeof(conf->sc_conf.agentx_path)) {
				yyerror("agentx path too long");
				FREEARG($2);
				YYERROR;
			}
			FREEARG($2);
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
			pfo.port_high = 0;
			if ($2 <= 0 || $2 > 0xffff) {
				yyerror("invalid port: %lld", (long long)$2);
				YYERROR;
			}
			$$ = $2;
		}
		| PORT HTTP			{
			pfo.port_high = 0;
			$$ = 80;
		}
		| PORT STRING			{
			struct servent	*s;
			const char	*errstr;
			char		*hi;

			pfo.port_high = 0;
			/* a range, min:max, is for redirections only */
			if ((hi = strchr($2, ':')) != NULL && pfo.active) {
				*hi++ = '\0';
				$$ = strtonum($2, 1, 0xffff, &errstr);
				if (errstr == NULL)
					pfo.port_high = strtonum(hi, $$,
					    0xffff, &errstr);
				if (errstr != NULL) {
					yyerror("invalid port range: %s:%s",
					    $2, hi);
					FREEARG($2);
					YYERROR;
				}
				FREEARG($2);
				break;
			}
			if ((s = getservbyname($2, "tcp")) == NULL &&
			    (s = getservbyname($2, "udp")) == NULL) {
				yyerror("invalid port: %s", $2);
				FREEARG($2);
				YYERROR;
			}
			FREEARG($2);
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
			$$ = 1;
		}
		;

opttlsclient	: /* empty */			{ $$ = 0; }
		| WITH TLS			{
			$$ = 1;
		}
		;

tablename	: '<' STRING '>'		{
			if (strlen($2) >= TABLE_NAME_SIZE) {
				yyerror("table name too long: %s", $2);
				FREEARG($2);
				YYERROR;
			}
			$$ = $2;
		}
		;

/* Tables: a definition here, a copy for every use by a relay. */
tabledef	: TABLE tablename		{
			struct table	*tb;

			if (table != NULL) {	/* left by an error */
				table->conf.flags |= F_USED;
				TAILQ_INSERT_TAIL(&deftables, table, entry);
				table = NULL;
			}
			TAILQ_FOREACH(tb, &deftables, entry)
				if (strcmp(tb->conf.name, $2) == 0)
					break;
			if (tb != NULL) {
				yyerror("table %s defined twice", $2);
				FREEARG($2);
				YYERROR;
			}
			if ((tb = calloc(1, sizeof(*tb))) == NULL)
				fatal("out of memory");
			(void)strlcpy(tb->conf.name, $2,
			    sizeof(tb->conf.name));
			FREEARG($2);
			TAILQ_INIT(&tb->hosts);
			tb->conf.timeout = conf->sc_conf.timeout;
			/* where it was defined, for unused table */
			tb->conf.retcode = file->lineno;
			table = tb;
		} tabledefopts_l		{
			TAILQ_INSERT_TAIL(&deftables, table, entry);
			if (TAILQ_EMPTY(&table->hosts)) {
				yyerror("table %s has no hosts",
				    table->conf.name);
				table = NULL;
				YYERROR;
			}
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
		| hosts include
		| hosts ','
		| hosts '\n'
		;

hostdef		: STRING			{
			memset(&hopts, 0, sizeof(hopts));
		} hostopts_l			{
			if (table_add_hosts(table, $1) == -1) {
				FREEARG($1);
				YYERROR;
			}
			FREEARG($1);
		}
		;

hostopts_l	: /* empty */
		| hostopts_l hostopt
		;

hostopt		: RETRY NUMBER			{
			if (hopts.retry) {
				yyerror("retry value already set");
				/* the syntax is fine: go on */
			}
			if ($2 < 0 || $2 > INT_MAX) {
				yyerror("invalid retry: %lld",
				    (long long)$2);
				YYERROR;
			}
			hopts.retry = $2;
		}
		| PARENT NUMBER			{
			if (hopts.parent) {
				yyerror("parent value already set");
				/* the syntax is fine: go on */
			}
			if ($2 <= 0 || $2 > INT_MAX) {
				yyerror("invalid parent id: %lld",
				    (long long)$2);
				YYERROR;
			}
			hopts.parent = $2;
		}
		| PRIORITY NUMBER		{
			if (hopts.priority) {
				yyerror("priority already set");
				/* the syntax is fine: go on */
			}
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
				FREEARG($2);
				YYERROR;
			}
			FREEARG($2);
			if (hopts.ttl) {
				yyerror("ttl value already set");
				/* the syntax is fine: go on */
			}
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
				FREEARG($1);
				YYERROR;
			}
			FREEARG($1);
			$$ = RELAY_PROTO_DNS;
		}
		;

protodef	: prototype PROTO STRING	{
			struct protocol	*p;

			if (proto != NULL) {	/* left by an error */
				protocol_free(proto);
				free(proto);
				proto = NULL;
			}
			if (strcmp($3, "default") == 0) {
				yyerror("protocol name \"default\" is "
				    "reserved");
				FREEARG($3);
				YYERROR;
			}
			TAILQ_FOREACH(p, conf->sc_protos, entry)
				if (strcmp(p->name, $3) == 0)
					break;
			if (p != NULL) {
				yyerror("protocol %s defined twice", $3);
				FREEARG($3);
				YYERROR;
			}
			if ((p = calloc(1, sizeof(*p))) == NULL)
				fatal("out of memory");
			protocol_init(p);
			if (strlcpy(p->name, $3, sizeof(p->name)) >=
			    sizeof(p->name)) {
				yyerror("protocol name truncated");
				FREEARG($3);
				free(p);
				YYERROR;
			}
			FREEARG($3);
			p->id = ++last_proto_id;
			p->type = $1;
			proto = p;
			ruletag = rulelabel = 0;
		} protobody			{
			TAILQ_INSERT_TAIL(conf->sc_protos, proto, entry);
			if ((proto->tlsflags & TLSFLAG_VERSION) == 0) {
				proto = NULL;
				yyerror("invalid TLS protocol");
				YYERROR;
			}
			proto = NULL;
		}
		;

protobody	: /* empty */
		| '{' optnl protoopts_l '}'
		| '{' optnl '}'
		;

protoopts_l	: protoopts_l protoopts nl
		| protoopts optnl
		;

protoopts	: TCP				{
			if (proto->type == RELAY_PROTO_DNS) {
				yyerror("can set tcp options only for tcp "
				    "or http protocols");
				YYERROR;
			}
		} tcpopts
		| TLS				{
			if (proto->type == RELAY_PROTO_DNS) {
				yyerror("can set tls options only for tcp "
				    "or http protocols");
				YYERROR;
			}
		} tlsopts
		| HTTP				{
			if (proto->type != RELAY_PROTO_HTTP) {
				yyerror("can set http options only for http "
				    "protocol");
				YYERROR;
			}
		} httpopts
		| RETURN ERROR			{
			proto->flags |= F_RETURN;
		} eflagsopt
		| filterrule
		| include
		;

tcpopts		: tcpflags
		| '{' tcpflags_l '}'
		;

tlsopts		: tlsflags
		| '{' tlsflags_l '}'
		;

httpopts	: httpflags
		| '{' httpflags_l '}'
		;

eflagsopt	: /* empty */
		| eflags
		| '{' eflags_l '}'
		;

tcpflags_l	: tcpflags comma tcpflags_l
		| tcpflags
		;

tlsflags_l	: tlsflags comma tlsflags_l
		| tlsflags
		;

httpflags_l	: httpflags comma httpflags_l
		| httpflags
		;

eflags_l	: eflags comma eflags_l
		| eflags
		;

eflags		: STYLE STRING			{
			if (proto_strset(&proto->style, $2, "style") == -1) {
				$2 = NULL;
				YYERROR;
			}
		}
		;

tcpflags	: SACK			{ proto->tcpflags |= TCPFLAG_SACK; }
		| NO SACK		{
			/* Linux switches SACK for the whole system only */
			log_warnx("%s:%d: tcp no sack: no per-socket switch on "
			    "%s, ignored", file->name, yylval.lineno,
			    RELAYD_PLATFORM);
			proto->tcpflags |= TCPFLAG_NSACK;
		}
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
			/* 0 as OpenBSD -current: the smallest buffer there is */
			if ($3 <= 0 || $3 > INT_MAX) {
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
				FREEARG($2);
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
				FREEARG($2);
				YYERROR;
			}
			FREEARG($2);
		}
		;

tlsflags	: SESSION TICKETS		{ proto->tickets = 1; }
		| NO SESSION TICKETS		{ proto->tickets = 0; }
		| CIPHERS STRING		{
			if (tls_validate("ciphers", $2) == -1 ||
			    proto_strset(&proto->tlsciphers, $2,
			    "tls ciphers") == -1) {
				$2 = NULL;
				YYERROR;
			}
		}
		| NO EDH			{
			free(proto->tlsdhparams);
			if ((proto->tlsdhparams = strdup("none")) == NULL)
				fatal("out of memory");
		}
		| EDH				{
			free(proto->tlsdhparams);
			if ((proto->tlsdhparams = strdup("auto")) == NULL)
				fatal("out of memory");
		}
		| EDH PARAMS STRING		{
			if (tls_validate("edh params", $3) == -1 ||
			    proto_strset(&proto->tlsdhparams, $3,
			    "tls edh params") == -1) {
				$3 = NULL;
				YYERROR;
			}
		}
		| ECDHE STRING			{
			if (tls_validate("ecdhe", $2) == -1 ||
			    proto_strset(&proto->tlsecdhecurves, $2,
			    "tls ecdhe") == -1) {
				$2 = NULL;
				YYERROR;
			}
		}
		| CA FILENAME STRING		{
			if (proto_strset(&proto->tlsca, $3,
			    "tls ca file") == -1) {
				$3 = NULL;
				YYERROR;
			}
		}
		| CA KEY STRING PASSWORD STRING	{
			if (proto_strset(&proto->tlscakey, $3,
			    "tls ca key") == -1) {
				$3 = NULL;
				FREEARG($5);
				YYERROR;
			}
			$3 = NULL;
			if (proto_strset(&proto->tlscapass, $5,
			    "tls ca key password") == -1) {
				$5 = NULL;
				YYERROR;
			}
		}
		| CA CERTIFICATE STRING		{
			if (proto_strset(&proto->tlscacert, $3,
			    "tls ca cert") == -1) {
				$3 = NULL;
				YYERROR;
			}
		}
		| KEYPAIR STRING		{
			struct keyname	*k;

			if (strlen($2) >= PATH_MAX || *$2 == '\0') {
				yyerror("invalid keypair name: %s", $2);
				FREEARG($2);
				YYERROR;
			}
			TAILQ_FOREACH(k, &proto->tlscerts, entry)
				if (strcmp(k->name, $2) == 0)
					break;
			if (k != NULL) {	/* once is enough */
				FREEARG($2);
				break;
			}
			if ((k = calloc(1, sizeof(*k))) == NULL)
				fatal("out of memory");
			k->name = $2;
			TAILQ_INSERT_TAIL(&proto->tlscerts, k, entry);
		}
		| CLIENT CA STRING optcrl	{
			if (proto_strset(&proto->tlsclientca, $3,
			    "tls client ca") == -1) {
				$3 = NULL;
				FREEARG($4);
				YYERROR;
			}
			if ($4 != NULL && proto_strset(&proto->tlsclientcrl,
			    $4, "tls client ca crl") == -1) {
				$4 = NULL;
				YYERROR;
			}
		}
		| NO tlsflag			{ proto->tlsflags &= ~$2; }
		| tlsflag			{
			if ($1 == TLSFLAG_CLIENT_RENEG) {
				yyerror("tls client-renegotiation: not "
				    "supported, libtls refuses renegotiation "
				    "by clients");
				YYERROR;
			}
			proto->tlsflags |= $1;
		}
		;

optcrl		: /* empty */			{ $$ = NULL; }
		| CRL STRING			{ $$ = $2; }
		;

tlsflag		: STRING			{
			static const struct {
				const char	*name;
				int		 flag;
			} flags[] = {
				{ "sslv3",	TLSFLAG_SSLV3 },
				{ "tlsv1",	TLSFLAG_TLSV1 },
				{ "tlsv1.0",	TLSFLAG_TLSV1_0 },
				{ "tlsv1.1",	TLSFLAG_TLSV1_1 },
				{ "tlsv1.2",	TLSFLAG_TLSV1_2 },
				{ "tlsv1.3",	TLSFLAG_TLSV1_3 },
				{ "cipher-server-preference",
				    TLSFLAG_CIPHER_SERVER_PREF },
				{ "client-renegotiation",
				    TLSFLAG_CLIENT_RENEG }
			};
			size_t	 i;

			for (i = 0; i < nitems(flags); i++)
				if (strcmp($1, flags[i].name) == 0)
					break;
			if (i == nitems(flags)) {
				yyerror("invalid TLS flag: %s", $1);
				FREEARG($1);
				YYERROR;
			}
			FREEARG($1);
			$$ = flags[i].flag;
		}
		;

httpflags	: HEADERLEN NUMBER		{
			if ($2 < 0 || $2 > RELAY_MAXHEADERLENGTH) {
				yyerror("invalid headerlen: %lld (0 to %d)",
				    (long long)$2, RELAY_MAXHEADERLENGTH);
				YYERROR;
			}
			proto->httpheaderlen = $2;
		}
		| HEADER TIMEOUT NUMBER		{
			if ($3 < 0 || $3 > 3600) {
				yyerror("invalid header timeout: %lld (0 to "
				    "3600)", (long long)$3);
				YYERROR;
			}
			proto->httpheadtimeout = $3;
		}
		| WEBSOCKETS			{
			proto->httpflags |= HTTPFLAG_WEBSOCKETS;
		}
		| NO WEBSOCKETS			{
			proto->httpflags &= ~HTTPFLAG_WEBSOCKETS;
		}
		| HTTP2				{
			proto->httpflags |= HTTPFLAG_HTTP2;
		}
		| HTTP2 STREAMS NUMBER		{
			if ($3 < 1 || $3 > RELAY_H2STREAMS_MAX) {
				yyerror("invalid http2 streams: %lld (1 to %d)",
				    (long long)$3, RELAY_H2STREAMS_MAX);
				YYERROR;
			}
			proto->httpflags |= HTTPFLAG_HTTP2;
			proto->httpstreams = $3;
		}
		| HTTP2 PIPELINE NUMBER		{
			if ($3 < 1 || $3 > RELAY_H2PIPELINE_MAX) {
				yyerror("invalid http2 pipeline: %lld (1 to %d)",
				    (long long)$3, RELAY_H2PIPELINE_MAX);
				YYERROR;
			}
			proto->httpflags |= HTTPFLAG_HTTP2;
			proto->httppipeline = $3;
		}
		| HTTP2 CONNECTIONS NUMBER	{
			if ($3 < 1 || $3 > RELAY_H2CONNS_MAX) {
				yyerror("invalid http2 connections: %lld "
				    "(1 to %d)", (long long)$3,
				    RELAY_H2CONNS_MAX);
				YYERROR;
			}
			proto->httpflags |= HTTPFLAG_HTTP2;
			proto->httpconns = $3;
		}
		| NO HTTP2			{
			proto->httpflags &= ~(HTTPFLAG_HTTP2 |
			    HTTPFLAG_H2BACKEND);
		}
		| HTTP2 BACKEND			{
			proto->httpflags |= HTTPFLAG_HTTP2 | HTTPFLAG_H2BACKEND;
		}
		| HTTP2 BACKEND STREAMS NUMBER	{
			if ($4 < 1 || $4 > RELAY_H2STREAMS_MAX) {
				yyerror("invalid http2 backend streams: %lld "
				    "(1 to %d)", (long long)$4,
				    RELAY_H2STREAMS_MAX);
				YYERROR;
			}
			proto->httpflags |= HTTPFLAG_HTTP2 | HTTPFLAG_H2BACKEND;
			proto->h2bstreams = $4;
		}
		| HTTP2 BACKEND CONNECTIONS NUMBER	{
			if ($4 < 1 || $4 > RELAY_H2B_CONNS_MAX) {
				yyerror("invalid http2 backend connections: "
				    "%lld (1 to %d)", (long long)$4,
				    RELAY_H2B_CONNS_MAX);
				YYERROR;
			}
			proto->httpflags |= HTTPFLAG_HTTP2 | HTTPFLAG_H2BACKEND;
			proto->h2bconns = $4;
		}
		| HTTP2 BACKEND IDLE NUMBER	{
			if ($4 < 1 || $4 > 3600) {
				yyerror("invalid http2 backend idle: %lld "
				    "(1 to 3600)", (long long)$4);
				YYERROR;
			}
			proto->httpflags |= HTTPFLAG_HTTP2 | HTTPFLAG_H2BACKEND;
			proto->h2bidle = $4;
		}
		| NO HTTP2 BACKEND		{
			proto->httpflags &= ~HTTPFLAG_H2BACKEND;
		}
		;

/* Filter rules */
filterrule	: action ruledirlog quick ruleaf rulesrc ruledst	{
			if (rule != NULL) {	/* left by an error */
				rule_free(rule);
				rule = NULL;
			}
			free(rulefile);
			rulefile = NULL;
			if ($1 == RULE_ACTION_MATCH && ($2 >> 8)) {
				yyerror("match log: only pass and block rules "
				    "log what they decide");
				YYERROR;
			}
			if ((rule = calloc(1, sizeof(*rule))) == NULL)
				fatal("out of memory");
			/* OpenBSD's relays evaluate them on http only */
			if (proto->type == RELAY_PROTO_TCP)
				log_warnx("%s:%d: filter rule in tcp protocol "
				    "%s: no effect, as on OpenBSD", file->name,
				    yylval.lineno, proto->name);
			rule->rule_action = $1;
			rule->rule_dir = $2 & 0xff;
			rule->rule_flags = ($2 >> 8) | $3;
			rule->rule_af = $4;
			rule->rule_src = $5;
			rule->rule_dst = $6;
			rule->rule_lineno = yylval.lineno;
			rulefile = NULL;
			rulekey = KEY_TYPE_NONE;
			if (($4 != AF_UNSPEC && (($5.addr.ss_family != 0 &&
			    $5.addr.ss_family != $4) ||
			    ($6.addr.ss_family != 0 &&
			    $6.addr.ss_family != $4))) ||
			    ($5.addr.ss_family != 0 &&
			    $6.addr.ss_family != 0 &&
			    $5.addr.ss_family != $6.addr.ss_family)) {
				yyerror("address family mismatch");
				free(rule);
				rule = NULL;
				YYERROR;
			}
		} ruleopts_l			{
			if (rule_add(proto, rule, rulefile) == -1) {
				free(rulefile);
				rulefile = NULL;
				rule = NULL;
				YYERROR;
			}
			free(rulefile);
			rulefile = NULL;
			rule = NULL;
		}
		;

action		: PASS				{ $$ = RULE_ACTION_PASS; }
		| BLOCK				{ $$ = RULE_ACTION_BLOCK; }
		| MATCH				{ $$ = RULE_ACTION_MATCH; }
		;

/*
 * OpenBSD -current's "pass log", "block log": the rule logs what it
 * decides.  log may come before or after the direction (pf's order,
 * "pass in log"): the direction, and the flags above it.
 */
ruledirlog	: rulelog			{
			$$ = RELAY_DIR_REQUEST | ($1 << 8);
		}
		| rulelog ruledir rulelog	{
			if ($1 && $3) {
				yyerror("log given twice in a rule");
				YYERROR;
			}
			$$ = $2 | (($1 | $3) << 8);
		}
		;

rulelog		: /* empty */			{ $$ = 0; }
		| LOG				{ $$ = RULE_FLAG_LOG; }
		;

ruledir		: REQUEST			{ $$ = RELAY_DIR_REQUEST; }
		| RESPONSE			{ $$ = RELAY_DIR_RESPONSE; }
		;

quick		: /* empty */			{ $$ = 0; }
		| QUICK				{ $$ = RULE_FLAG_QUICK; }
		;

ruleaf		: /* empty */			{ $$ = AF_UNSPEC; }
		| INET				{ $$ = AF_INET; }
		| INET6				{ $$ = AF_INET6; }
		;

rulesrc		: /* empty */			{ memset(&$$, 0, sizeof($$)); }
		| FROM addrprefix		{ $$ = $2; }
		;

ruledst		: /* empty */			{ memset(&$$, 0, sizeof($$)); }
		| TO addrprefix			{ $$ = $2; }
		;

addrprefix	: STRING '/' NUMBER		{
			if (addr_prefix($1, $3, &$$) == -1) {
				$1 = NULL;
				YYERROR;
			}
		}
		| STRING			{
			if (addr_prefix($1, -1, &$$) == -1) {
				$1 = NULL;
				YYERROR;
			}
		}
		;

ruleopts_l	: /* empty */
		| ruleopts_l ruleopt
		;

ruleopt		: METHOD STRING			{
			if ((rule->rule_method =
			    http_method_byname($2)) == 0) {
				yyerror("unknown HTTP method currently not "
				    "supported: %s", $2);
				FREEARG($2);
				YYERROR;
			}
			FREEARG($2);
		}
		| COOKIE key_option kvmatch STRING value	{
			if (rule_kv_set(KEY_TYPE_COOKIE, $2, $3, $4, $5) == -1) {
				$4 = NULL;
				$5 = NULL;
				YYERROR;
			}
		}
		| COOKIE key_option kvmatch	{
			if (rule_kv_set(KEY_TYPE_COOKIE, $2, $3, NULL,
			    NULL) == -1)
				YYERROR;
		}
		| HEADER key_option kvmatch STRING value	{
			if (rule_kv_set(KEY_TYPE_HEADER, $2, $3, $4, $5) == -1) {
				$4 = NULL;
				$5 = NULL;
				YYERROR;
			}
		}
		| HEADER key_option kvmatch	{
			if (rule_kv_set(KEY_TYPE_HEADER, $2, $3, NULL,
			    NULL) == -1)
				YYERROR;
		}
		| PATH key_option kvmatch STRING value	{
			if (rule_kv_set(KEY_TYPE_PATH, $2, $3, $4, $5) == -1) {
				$4 = NULL;
				$5 = NULL;
				YYERROR;
			}
		}
		| PATH key_option kvmatch	{
			if (rule_kv_set(KEY_TYPE_PATH, $2, $3, NULL,
			    NULL) == -1)
				YYERROR;
		}
		| PATH STRIP NUMBER		{
			char	*strip;

			if ($3 < 0 || $3 > INT_MAX) {
				yyerror("invalid strip number: %lld",
				    (long long)$3);
				YYERROR;
			}
			if (asprintf(&strip, "%lld", (long long)$3) == -1)
				fatal("out of memory");
			if (rule_kv_set(KEY_TYPE_PATH, KEY_OPTION_STRIP, 0,
			    NULL, strip) == -1)
				YYERROR;
		}
		| QUERYSTR key_option kvmatch STRING value	{
			if (rule_kv_set(KEY_TYPE_QUERY, $2, $3, $4, $5) == -1) {
				$4 = NULL;
				$5 = NULL;
				YYERROR;
			}
		}
		| QUERYSTR key_option kvmatch	{
			if (rule_kv_set(KEY_TYPE_QUERY, $2, $3, NULL,
			    NULL) == -1)
				YYERROR;
		}
		| URL key_option optdigest value	{
			if (rule_kv_set(KEY_TYPE_URL, $2, 0, $3.key, $4) ==
			    -1) {
				$3.key = NULL;
				$4 = NULL;
				YYERROR;
			}
			rule->rule_kv[KEY_TYPE_URL].kv_digest = $3.type;
		}
		| URL key_option kvmatch1 STRING value	{
			if (rule_kv_set(KEY_TYPE_URL, $2, $3, $4, $5) == -1) {
				$4 = NULL;
				$5 = NULL;
				YYERROR;
			}
		}
		| URL key_option kvmatch1	{
			if (rule_kv_set(KEY_TYPE_URL, $2, $3, NULL, NULL) == -1)
				YYERROR;
		}
		| URL key_option		{
			if (rule_kv_set(KEY_TYPE_URL, $2, 0, NULL, NULL) == -1)
				YYERROR;
		}
		| FORWARD TO tablename		{
			if (!table_defined($3, 0)) {
				yyerror("undefined forward table: %s", $3);
				FREEARG($3);
				YYERROR;
			}
			(void)strlcpy(rule->rule_tablename, $3,
			    sizeof(rule->rule_tablename));
			FREEARG($3);
		}
		| TAG STRING			{
			if (rule->rule_tag) {
				yyerror("tag already defined");
				FREEARG($2);
				YYERROR;
			}
			if (strlcpy(rule->rule_tagname, $2,
			    sizeof(rule->rule_tagname)) >=
			    sizeof(rule->rule_tagname) || *$2 == '\0') {
				yyerror("invalid tag: %s", $2);
				FREEARG($2);
				YYERROR;
			}
			FREEARG($2);
			rule->rule_tag = 1;
			ruletag = 1;
		}
		| NO TAG			{
			if (!ruletag) {
				yyerror("no tag defined");
				YYERROR;
			}
			rule->rule_tag = RULE_NO;
		}
		| TAGGED STRING			{
			if (rule->rule_taggedname[0] != '\0') {
				yyerror("tagged already defined");
				FREEARG($2);
				YYERROR;
			}
			if (strlcpy(rule->rule_taggedname, $2,
			    sizeof(rule->rule_taggedname)) >=
			    sizeof(rule->rule_taggedname) || *$2 == '\0') {
				yyerror("invalid tag: %s", $2);
				FREEARG($2);
				YYERROR;
			}
			FREEARG($2);
		}
		| LABEL STRING			{
			if (rule->rule_label) {
				yyerror("label already defined");
				FREEARG($2);
				YYERROR;
			}
			if (strlcpy(rule->rule_labelname, $2,
			    sizeof(rule->rule_labelname)) >=
			    sizeof(rule->rule_labelname) || *$2 == '\0') {
				yyerror("invalid label: %s", $2);
				FREEARG($2);
				YYERROR;
			}
			FREEARG($2);
			rule->rule_label = 1;
			rulelabel = 1;
		}
		| NO LABEL			{
			if (!rulelabel) {
				yyerror("no label defined");
				YYERROR;
			}
			rule->rule_label = RULE_NO;
		}
		| FILENAME STRING value		{
			if (rulefile != NULL) {
				yyerror("only one file per rule supported");
				FREEARG($2);
				FREEARG($3);
				YYERROR;
			}
			if (rulekey == KEY_TYPE_NONE) {
				yyerror("file %s: give cookie, header, path, "
				    "query or url before it", $2);
				FREEARG($2);
				FREEARG($3);
				YYERROR;
			}
			rulefile = $2;
			free(rule->rule_kv[rulekey].kv_value);
			rule->rule_kv[rulekey].kv_value = $3;
			if ($3 != NULL)
				rule->rule_kv[rulekey].kv_valmatch = valmatch;
		}
		;

value		: /* empty */			{ $$ = NULL; valmatch = 0; }
		| VALUE kvmatch STRING		{ $$ = $3; valmatch = $2; }
		;

/* How a key or value matches (patterns(7): OpenBSD -current's) */
kvmatch		: /* empty */			{ $$ = KV_MATCH_DEFAULT; }
		| kvmatch1
		;

kvmatch1	: GLOB				{ $$ = KV_MATCH_GLOB; }
		| GLOB IGNORECASE		{ $$ = KV_MATCH_GLOB_ICASE; }
		| PATTERN			{ $$ = KV_MATCH_PATTERN; }
		;

key_option	: /* empty */			{ $$ = KEY_OPTION_NONE; }
		| APPEND			{ $$ = KEY_OPTION_APPEND; }
		| SET				{ $$ = KEY_OPTION_SET; }
		| REMOVE			{ $$ = KEY_OPTION_REMOVE; }
		| HASH				{ $$ = KEY_OPTION_HASH; }
		| LOG				{ $$ = KEY_OPTION_LOG; }
		;

optdigest	: DIGEST STRING			{
			size_t	 len = strlen($2);

			if (len != 32 && len != 40) {
				yyerror("invalid url digest: %s (32 hex "
				    "digits for MD5, 40 for SHA1)", $2);
				FREEARG($2);
				YYERROR;
			}
			$$.key = $2;
			$$.type = len == 32 ? DIGEST_MD5 : DIGEST_SHA1;
		}
		| STRING			{
			$$.key = $1;
			$$.type = DIGEST_NONE;
		}
		;

/* Relays */
relaydef	: RELAY STRING			{
			struct relay	*r;

			if (rlay != NULL) {	/* left by an error */
				relay_free(rlay);
				rlay = NULL;
			}
			if ((r = calloc(1, sizeof(*r))) == NULL)
				fatal("out of memory");
			TAILQ_INIT(&r->rl_tables);
			TAILQ_INIT(&r->rl_certs);
			if (strlcpy(r->rl_conf.name, $2,
			    sizeof(r->rl_conf.name)) >=
			    sizeof(r->rl_conf.name)) {
				yyerror("relay name truncated");
				FREEARG($2);
				free(r);
				YYERROR;
			}
			FREEARG($2);
			if (relay_findbyname(conf, r->rl_conf.name) != NULL) {
				yyerror("relay %s defined twice",
				    r->rl_conf.name);
				free(r);
				YYERROR;
			}
			r->rl_conf.id = ++last_relay_id;
			r->rl_conf.timeout.tv_sec = RELAY_TIMEOUT;
			r->rl_conf.lim.lim_prefix4 = 32;
			r->rl_conf.lim.lim_prefix6 = RELAY_LIMIT_PREFIX6;
			r->rl_conf.lim.lim_expire = RELAY_LIMIT_EXPIRE;
			r->rl_conf.fwdmode = RELAY_DSTMODE_DEFAULT;
			r->rl_s = -1;
			r->rl_us = -1;
			rlay = r;
			nlisten = 0;
			rlay_proto_set = 0;
			rlay_fwd_tls = rlay_fwd_plain = 0;
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

relayoptsl	: LISTEN ON STRING optport opttls	{
			struct sockaddr_storage	 ss;

			if (host_resolve($3, &ss, 1) <= 0) {
				addr_error("listen", $3);
				FREEARG($3);
				YYERROR;
			}
			FREEARG($3);
			if ((ss.ss_family == AF_UNIX) != ($4 == 0)) {
				yyerror(ss.ss_family == AF_UNIX ?
				    "listen on a unix socket: no port" :
				    "listen on: a port is needed");
				YYERROR;
			}
			if (nlisten >= MAX_LISTEN) {
				yyerror("too many listen addresses "
				    "(%d at most)", MAX_LISTEN);
				YYERROR;
			}
			ss_setport(&ss, $4);
			listen_ss[nlisten] = ss;
			listen_port[nlisten] = $4;
			listen_tls[nlisten] = $5;
			listen_ppn[nlisten] = 0;
			listen_uid[nlisten] = (uid_t)-1;
			listen_gid[nlisten] = (gid_t)-1;
			listen_mode[nlisten] = 0;
			nlisten++;
		} optppfrom sockperms
		| forwardmode opttlsclient TO	{
			topts_reset();
			topts.timeout = conf->sc_conf.timeout;
			topts.mode = RELAY_DSTMODE_DEFAULT;
			if ($1 == FWD_ROUTE) {
				yyerror("route to: no route for relays");
				YYERROR;
			}
			if ($1 == FWD_TRANS)
				rlay->rl_conf.flags |= F_TRANSPARENT;
			if ($2)
				rlay->rl_conf.flags |= F_TLSCLIENT;
			/* TLS is the relay's: OpenBSD speaks it to all */
			if ($2)
				rlay_fwd_tls = 1;
			else if (rlay_fwd_plain == 0)
				rlay_fwd_plain = 1;
			if (rlay_fwd_tls && rlay_fwd_plain == 1) {
				log_warnx("%s:%d: relay %s: forward lines with "
				    "and without tls: all of them speak TLS",
				    file->name, yylval.lineno,
				    rlay->rl_conf.name);
				rlay_fwd_plain = 2;
			}
		} forwardspec dstaf optproxyproto {
			if ($7 != 0 && (rlay->rl_conf.flags &
			    (F_PROXYV1 | F_PROXYV2)) != 0 &&
			    (rlay->rl_conf.flags & $7) == 0) {
				yyerror("relay %s: one proxy-protocol version "
				    "for all forward lines", rlay->rl_conf.name);
				YYERROR;
			}
			rlay->rl_conf.flags |= $7;
		}
		| SESSION TIMEOUT NUMBER	{
			if ($3 < 0 || $3 > INT_MAX) {
				yyerror("invalid timeout: %lld",
				    (long long)$3);
				YYERROR;
			}
			rlay->rl_conf.timeout.tv_sec = $3;
		}
		| ANNOUNCE			{
			if (!kernel_available()) {
				yyerror("relay %s: announce is not available "
				    "on %s", rlay->rl_conf.name,
				    RELAYD_PLATFORM);
				YYERROR;
			}
			rlay->rl_conf.flags |= F_ANNOUNCE;
		}
		| PROTO STRING			{
			struct protocol	*p;

			if (rlay_proto_set) {
				yyerror("more than one protocol specified");
				FREEARG($2);
				YYERROR;
			}
			TAILQ_FOREACH(p, conf->sc_protos, entry)
				if (strcmp(p->name, $2) == 0)
					break;
			if (p == NULL) {
				yyerror("no such protocol: %s", $2);
				FREEARG($2);
				YYERROR;
			}
			FREEARG($2);
			rlay->rl_conf.proto = p->id;
			rlay->rl_proto = p;
			rlay_proto_set = 1;
			p->flags |= F_USED;
		}
		| DISABLE		{ rlay->rl_conf.flags |= F_DISABLE; }
		| limitopt
		| include
		;

/* Limits per client source, in pf's words (relay_limit.c) */
limitopt	: MAXSRCCONN NUMBER		{
			if ($2 < 1 || $2 > UINT32_MAX) {
				yyerror("max-src-conn %lld: 1 to %u",
				    (long long)$2, UINT32_MAX);
				YYERROR;
			}
			rlay->rl_conf.lim.lim_maxconn = $2;
		}
		| MAXSRCCONNRATE NUMBER '/' NUMBER	{
			if ($2 < 1 || $2 > UINT32_MAX) {
				yyerror("max-src-conn-rate %lld/%lld: 1 to %u "
				    "connections", (long long)$2,
				    (long long)$4, UINT32_MAX);
				YYERROR;
			}
			if ($4 < 1 || $4 > 86400) {
				yyerror("max-src-conn-rate %lld/%lld: 1 to "
				    "86400 seconds", (long long)$2,
				    (long long)$4);
				YYERROR;
			}
			rlay->rl_conf.lim.lim_rate = $2;
			rlay->rl_conf.lim.lim_rateint = $4;
		}
		| MAXSRCCONNRATE NUMBER		{
			yyerror("max-src-conn-rate %lld: connections/seconds, "
			    "as in %lld/10", (long long)$2, (long long)$2);
			YYERROR;
		}
		| MAXSRCREQRATE NUMBER '/' NUMBER optburst	{
			if ($2 < 1 || $2 > UINT32_MAX || $4 < 1 ||
			    $4 > 86400) {
				yyerror("max-src-request-rate %lld/%lld: 1 to "
				    "%u requests in 1 to 86400 seconds",
				    (long long)$2, (long long)$4, UINT32_MAX);
				YYERROR;
			}
			rlay->rl_conf.lim.lim_req = $2;
			rlay->rl_conf.lim.lim_reqint = $4;
			rlay->rl_conf.lim.lim_reqburst = $5 != 0 ? $5 : $2;
		}
		| OVERLOAD tablename overloadopts	{
			if (strlcpy(rlay->rl_conf.lim.lim_overload, $2,
			    sizeof(rlay->rl_conf.lim.lim_overload)) >=
			    sizeof(rlay->rl_conf.lim.lim_overload)) {
				yyerror("overload table name too long");
				FREEARG($2);
				YYERROR;
			}
			FREEARG($2);
		}
		| SRCPREFIX INET NUMBER		{
			if ($3 < 1 || $3 > 32) {
				yyerror("src-prefix inet %lld: 1 to 32",
				    (long long)$3);
				YYERROR;
			}
			rlay->rl_conf.lim.lim_prefix4 = $3;
		}
		| SRCPREFIX INET6 NUMBER	{
			if ($3 < 1 || $3 > 128) {
				yyerror("src-prefix inet6 %lld: 1 to 128",
				    (long long)$3);
				YYERROR;
			}
			rlay->rl_conf.lim.lim_prefix6 = $3;
		}
		;

optburst	: /* empty */		{ $$ = 0; }
		| BURST NUMBER		{
			if ($2 < 1 || $2 > UINT32_MAX) {
				yyerror("burst %lld: 1 to %u", (long long)$2,
				    UINT32_MAX);
				YYERROR;
			}
			$$ = $2;
		}
		;

overloadopts	: /* empty */
		| overloadopts overloadopt
		;

overloadopt	: FLUSH			{ rlay->rl_conf.lim.lim_flush = 1; }
		| EXPIRE NUMBER		{
			if ($2 < 1 || $2 > 86400 * 365) {
				yyerror("overload expire %lld: 1 to %d seconds",
				    (long long)$2, 86400 * 365);
				YYERROR;
			}
			rlay->rl_conf.lim.lim_expire = $2;
		}
		;

optport		: /* empty */			{ $$ = 0; }
		| port				{ $$ = $1; }
		;

/* ours: the owner, group and mode of a unix-socket listener */
sockperms	: /* empty */
		| sockperms sockperm
		;

sockperm	: OWNER STRING			{
			struct passwd	*pw;
			const char	*errstr;
			uid_t		 uid;

			uid = strtonum($2, 0, INT_MAX, &errstr);
			if (errstr != NULL) {
				if ((pw = getpwnam($2)) == NULL) {
					yyerror("owner: no user %s", $2);
					FREEARG($2);
					YYERROR;
				}
				uid = pw->pw_uid;
			}
			FREEARG($2);
			if (!sockperm_ok())
				YYERROR;
			listen_uid[nlisten - 1] = uid;
		}
		| GROUP STRING			{
			struct group	*gr;
			const char	*errstr;
			gid_t		 gid;

			gid = strtonum($2, 0, INT_MAX, &errstr);
			if (errstr != NULL) {
				if ((gr = getgrnam($2)) == NULL) {
					yyerror("group: no group %s", $2);
					FREEARG($2);
					YYERROR;
				}
				gid = gr->gr_gid;
			}
			FREEARG($2);
			if (!sockperm_ok())
				YYERROR;
			listen_gid[nlisten - 1] = gid;
		}
		| OWNER NUMBER			{
			if ($2 < 0 || $2 > INT_MAX) {
				yyerror("owner: invalid uid %lld",
				    (long long)$2);
				YYERROR;
			}
			if (!sockperm_ok())
				YYERROR;
			listen_uid[nlisten - 1] = $2;
		}
		| GROUP NUMBER			{
			if ($2 < 0 || $2 > INT_MAX) {
				yyerror("group: invalid gid %lld",
				    (long long)$2);
				YYERROR;
			}
			if (!sockperm_ok())
				YYERROR;
			listen_gid[nlisten - 1] = $2;
		}
		| MODE NUMBER			{
			char	 digits[32];
			char	*ep;
			long	 m;

			/* written in octal, read by the lexer as decimal */
			(void)snprintf(digits, sizeof(digits), "%lld",
			    (long long)$2);
			errno = 0;
			m = strtol(digits, &ep, 8);
			if (*ep != '\0' || errno != 0 || m <= 0 || m > 0777) {
				yyerror("mode: an octal mode, 0 to 0777, "
				    "not %s", digits);
				YYERROR;
			}
			if (!sockperm_ok())
				YYERROR;
			listen_mode[nlisten - 1] = m;
		}
		;

optproxyproto	: /* empty */			{ $$ = 0; }
		| PROXYPROTO V1			{ $$ = F_PROXYV1; }
		| PROXYPROTO V2			{ $$ = F_PROXYV2; }
		;

/* ours: which peers of a listener put a PROXY header first */
optppfrom	: /* empty */
		| PROXYPROTO			{
			/* a unix socket: its file mode says who connects */
			if (listen_ss[nlisten - 1].ss_family != AF_UNIX) {
				yyerror("proxy-protocol: from which addresses?");
				YYERROR;
			}
			listen_ppn[nlisten - 1] = RELAY_PPFROM_ALL;
		}
		| PROXYPROTO FROM ppfrom
		| PROXYPROTO FROM '{' optnl ppfrom_l '}'
		;

ppfrom_l	: ppfrom_l ',' optnl ppfrom optnl
		| ppfrom_l ppfrom optnl
		| ppfrom optnl
		;

ppfrom		: addrprefix			{
			int	 n = nlisten - 1;

			if ($1.addr.ss_family != AF_INET &&
			    $1.addr.ss_family != AF_INET6) {
				yyerror("proxy-protocol from: not an "
				    "address");
				YYERROR;
			}
			if (listen_ppn[n] >= RELAY_PPFROM_MAX) {
				yyerror("proxy-protocol from: %d addresses "
				    "at most", RELAY_PPFROM_MAX);
				YYERROR;
			}
			listen_pp[n][listen_ppn[n]++] = $1;
		}
		;

forwardmode	: FORWARD			{ $$ = FWD_NORMAL; }
		| ROUTE				{ $$ = FWD_ROUTE; }
		| TRANSPARENT FORWARD		{ $$ = FWD_TRANS; }
		;

forwardspec	: tablename tableopts_l		{
			struct table		*def, *tb;
			struct relay_table	*rlt;

			TAILQ_FOREACH(def, &deftables, entry)
				if (strcmp(def->conf.name, $1) == 0)
					break;
			if (def == NULL) {
				yyerror("no such table: %s", $1);
				FREEARG($1);
				YYERROR;
			}
			FREEARG($1);
			if (topts.mode == RELAY_DSTMODE_LEASTSTATES) {
				needs_pf("mode least-states");
				free(topts.sendbuf);
				topts.sendbuf = NULL;
				YYERROR;
			}
			if (topts.port == 0 && nlisten > 0)
				topts.port = listen_port[0];
			if (topts.check == CHECK_ICMP &&
			    table_unix(def) != 0) {
				yyerror("table %s: no check icmp for unix "
				    "sockets", def->conf.name);
				free(topts.sendbuf);
				topts.sendbuf = NULL;
				YYERROR;
			}
			if (topts.port == 0 && table_unix(def) != 1) {
				yyerror("table %s has no port (give one, or "
				    "listen on before forward to)",
				    def->conf.name);
				free(topts.sendbuf);
				topts.sendbuf = NULL;
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
		| STRING optport retry		{
			if (rlay->rl_conf.dstss.ss_family != AF_UNSPEC) {
				yyerror("relay %s: only one forward to an "
				    "address", rlay->rl_conf.name);
				FREEARG($1);
				YYERROR;
			}
			if (host_resolve($1, &rlay->rl_conf.dstss, 1) <= 0) {
				addr_error("forward", $1);
				FREEARG($1);
				YYERROR;
			}
			FREEARG($1);
			if (rlay->rl_conf.dstss.ss_family == AF_UNIX) {
				if ($2 != 0) {
					yyerror("forward to a unix socket: "
					    "no port");
					YYERROR;
				}
			} else if ($2 == 0) {
				/* as OpenBSD's: the listener's port */
				if (nlisten == 0 || listen_port[0] == 0) {
					yyerror("forward to: a port is needed");
					YYERROR;
				}
				$2 = listen_port[0];
			}
			rlay->rl_conf.dstport = $2;
			ss_setport(&rlay->rl_conf.dstss, $2);
			rlay->rl_conf.dstretry = $3;
		}
		| NAT LOOKUP retry		{
			if (!compat_natlook_available())
				needs_pf("forward to nat lookup");
			rlay->rl_conf.flags |= F_NATLOOK;
			rlay->rl_conf.dstretry = $3;
		}
		| DESTINATION retry		{
			rlay->rl_conf.flags |= F_DIVERT;
			rlay->rl_conf.dstretry = $2;
		}
		;

dstaf		: /* empty */
		| INET				{
			if (dstaf_set(AF_INET, NULL) == -1)
				YYERROR;
		}
		| INET6 STRING			{
			struct in6_addr	 prefix;

			if (inet_pton(AF_INET6, $2, &prefix) != 1) {
				yyerror("invalid ipv6 address %s", $2);
				FREEARG($2);
				YYERROR;
			}
			FREEARG($2);
			if (dstaf_set(AF_INET6, &prefix) == -1)
				YYERROR;
		}
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
				FREEARG($3);
				YYERROR;
			}
			if (parse_hashkey($3, topts.hashkey) == -1) {
				FREEARG($3);
				YYERROR;
			}
			FREEARG($3);
			topts.mode = $2;
			topts.hashkey_set = 1;
		}
		| CHECK tablecheck
		| DEMOTE STRING			{
			if (demote_group_valid($2) == -1) {
				yyerror("invalid demote group: %s (1 to %d "
				    "letters, digits, '-' and '_')", $2,
				    DEMOTE_GROUP_SIZE - 1);
				FREEARG($2);
				YYERROR;
			}
			(void)strlcpy(topts.demote, $2, sizeof(topts.demote));
			FREEARG($2);
		}
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
				FREEARG($2);
				FREEARG($3);
				YYERROR;
			}
			if ($5 < 100 || $5 > 999) {
				yyerror("invalid http code: %lld",
				    (long long)$5);
				FREEARG($2);
				FREEARG($3);
				YYERROR;
			}
			topts.retcode = $5;
			(void)strlcpy(topts.path, $2, sizeof(topts.path));
			if (asprintf(&topts.sendbuf,
			    "HEAD %s HTTP/1.%c\r\n%s\r\n", $2,
			    *$3 != '\0' ? '1' : '0', $3) == -1)
				fatal("out of memory");
			topts.sendbuf_len = strlen(topts.sendbuf);
			FREEARG($2);
			FREEARG($3);
		}
		| HTTP2 STRING hostname CODE NUMBER checktls	{
			/* an extension: HEAD over HTTP/2, h2c or ALPN h2 */
			if (check_set(CHECK_HTTP2_CODE, $6) == -1) {
				FREEARG($2);
				FREEARG($3);
				YYERROR;
			}
			if ($5 < 100 || $5 > 999) {
				yyerror("invalid http code: %lld",
				    (long long)$5);
				FREEARG($2);
				FREEARG($3);
				YYERROR;
			}
			topts.retcode = $5;
			/* hce makes the request, with the host's name */
			if (strlcpy(topts.path, $2, sizeof(topts.path)) >=
			    sizeof(topts.path)) {
				yyerror("http2 check path too long: %s", $2);
				FREEARG($2);
				FREEARG($3);
				YYERROR;
			}
			FREEARG($2);
			FREEARG($3);
		}
		| httptype STRING hostname DIGEST STRING	{
			size_t	 i, len = strlen($5);

			if (check_set(CHECK_HTTP_DIGEST, $1) == -1) {
				FREEARG($2);
				FREEARG($3);
				FREEARG($5);
				YYERROR;
			}
			for (i = 0; i < len; i++)
				if (!isxdigit((unsigned char)$5[i]))
					break;
			if (i < len || (len != 32 && len != 40)) {
				yyerror("invalid http digest: %s (32 hex "
				    "digits for MD5, 40 for SHA1)", $5);
				FREEARG($2);
				FREEARG($3);
				FREEARG($5);
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
			FREEARG($2);
			FREEARG($3);
			FREEARG($5);
		}
		| SEND sendbuf EXPECT STRING checktls	{
			if (check_set(CHECK_SEND_EXPECT, $5) == -1) {
				FREEARG($4);
				YYERROR;
			}
			if (strlcpy(topts.exbuf, $4, sizeof(topts.exbuf)) >=
			    sizeof(topts.exbuf)) {
				yyerror("expect buffer truncated");
				FREEARG($4);
				YYERROR;
			}
			FREEARG($4);
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
				FREEARG($5);
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
				FREEARG($5);
				YYERROR;
			}
			for (i = 0; i < len; i++)
				$5[i] = tolower((unsigned char)$5[i]);
			(void)strlcpy(topts.exbuf, $5, sizeof(topts.exbuf));
			FREEARG($5);
			if (topts.sendbuf != NULL &&
			    binary_sendbuf() == -1)
				YYERROR;
		}
		| SCRIPT STRING			{
			if (check_set(CHECK_SCRIPT, 0) == -1) {
				FREEARG($2);
				YYERROR;
			}
			if (*$2 != '/') {
				yyerror("check script %s: the path must be "
				    "absolute", $2);
				FREEARG($2);
				YYERROR;
			}
			if (strlcpy(topts.path, $2, sizeof(topts.path)) >=
			    sizeof(topts.path)) {
				yyerror("script path truncated");
				FREEARG($2);
				YYERROR;
			}
			FREEARG($2);
		}
		;

httptype	: HTTP				{ $$ = 0; }
		| STRING			{
			if (strcmp($1, "https") != 0) {
				yyerror("unknown check type: %s", $1);
				FREEARG($1);
				YYERROR;
			}
			FREEARG($1);
			$$ = 1;
		}
		;

hostname	: /* empty */			{
			topts.host[0] = '\0';
			if (($$ = strdup("")) == NULL)
				fatal("out of memory");
		}
		| HOST STRING			{
			/* the Host header, and the name TLS asks for */
			if (strlcpy(topts.host, $2, sizeof(topts.host)) >=
			    sizeof(topts.host)) {
				yyerror("host name too long: %s", $2);
				FREEARG($2);
				YYERROR;
			}
			if (asprintf(&$$, "Host: %s\r\nConnection: close"
			    "\r\n", $2) == -1)
				fatal("out of memory");
			FREEARG($2);
		}
		;

sendbuf		: NOTHING			{
			free(topts.sendbuf);	/* a second check */
			topts.sendbuf = NULL;
		}
		| STRING			{
			free(topts.sendbuf);
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
		| LEASTSTATES		{ $$ = RELAY_DSTMODE_LEASTSTATES; }
		;


/*
 * Redirections and routers: checked as OpenBSD checks them, run on
 * nftables and rtnetlink (see kernel.c).
 */
rdrdef		: REDIRECT STRING		{
			if (!kernel_available()) {
				yyerror("redirect %s: redirections are not "
				    "available on %s", $2, RELAYD_PLATFORM);
				FREEARG($2);
				YYERROR;
			}
			if (rdr_name_taken($2, "redirection") == -1) {
				FREEARG($2);
				YYERROR;
			}
			free(rdr);	/* one an error left */
			if ((rdr = calloc(1, sizeof(*rdr))) == NULL)
				fatal("out of memory");
			if (strlcpy(rdr->conf.name, $2,
			    sizeof(rdr->conf.name)) >=
			    sizeof(rdr->conf.name)) {
				yyerror("redirection name truncated");
				FREEARG($2);
				free(rdr);
				rdr = NULL;
				YYERROR;
			}
			FREEARG($2);
			rdr->conf.id = ++last_rdr_id;
			rdr->conf.timeout = RELAY_TIMEOUT;
			memset(&pfo, 0, sizeof(pfo));
			pfo.active = 1;
		} '{' optnl rdropts_l '}'	{
			int	 i;

			pfo.active = 0;
			if (pfo.ntables == 0) {
				yyerror("redirection %s has no table",
				    rdr->conf.name);
				YYERROR;
			}
			if (rdr->conf.nvirts == 0) {
				yyerror("redirection %s has no virtual ip",
				    rdr->conf.name);
				YYERROR;
			}
			if (rdr_route_check(rdr) == -1)
				YYERROR;
			for (i = 0; (rdr->conf.flags & F_ANNOUNCE) &&
			    i < rdr->conf.nvirts; i++)
				if (announce_check("redirection",
				    rdr->conf.name, &rdr->conf.virts[i].ss) ==
				    -1)
					YYERROR;
			TAILQ_INSERT_TAIL(&conf->sc_rdrs, rdr, entry);
			rdr = NULL;
		}
		;

rdropts_l	: rdropts_l rdroptsl nl
		| rdroptsl optnl
		;

rdroptsl	: forwardmode TO		{
			topts_reset();
			topts.timeout = conf->sc_conf.timeout;
			topts.mode = RELAY_DSTMODE_ROUNDROBIN;
		} tablename tableopts_l interface	{
			if (rdr_table($1, &$4, &$6) == -1)
				YYERROR;
		}
		| LISTEN ON STRING redirect_proto port interface pflog {
			struct sockaddr_storage	 ss;
			struct rdr_virt		*v;

			if (host_resolve($3, &ss, 1) <= 0 ||
			    ss.ss_family == AF_UNIX) {
				yyerror("invalid virtual ip: %s", $3);
				FREEARG($3);
				FREEARG($6);
				YYERROR;
			}
			FREEARG($3);
			if (rdr->conf.nvirts >= RDR_MAXVIRTS) {
				yyerror("too many virtual ips (%d at most)",
				    RDR_MAXVIRTS);
				FREEARG($6);
				YYERROR;
			}
			v = &rdr->conf.virts[rdr->conf.nvirts++];
			v->ss = ss;
			v->port = $5;
			v->port_high = pfo.port_high;
			v->proto = $4;
			v->pflog = $7;
			if ($6 != NULL && strlcpy(v->ifname, $6,
			    sizeof(v->ifname)) >= sizeof(v->ifname)) {
				yyerror("invalid interface name: %s", $6);
				FREEARG($6);
				YYERROR;
			}
			FREEARG($6);
			if (pfo.port == 0)
				pfo.port = $5;
		}
		| DISABLE			{
			rdr->conf.flags |= F_DISABLE;
		}
		| STICKYADDR			{
			rdr->conf.flags |= F_STICKY;
		}
		| ANNOUNCE			{
			rdr->conf.flags |= F_ANNOUNCE;
		}
		| optmatch PFTAG STRING		{
			int	 i;

			if (strlen($3) >= sizeof(rdr->conf.tag)) {
				yyerror("redirection tag name truncated");
				FREEARG($3);
				YYERROR;
			}
			for (i = 0; i < npftags; i++)
				if (strcmp(pftags[i], $3) == 0)
					break;
			if (i == npftags) {
				if (npftags == (int)nitems(pftags)) {
					yyerror("too many pftag names (%d "
					    "at most)", (int)nitems(pftags));
					FREEARG($3);
					YYERROR;
				}
				(void)strlcpy(pftags[npftags++], $3,
				    sizeof(pftags[0]));
			}
			(void)strlcpy(rdr->conf.tag, $3,
			    sizeof(rdr->conf.tag));
			rdr->conf.tagmark = RDR_TAGMARK + i + 1;
			rdr->conf.tagmatch = $1;
			FREEARG($3);
		}
		| SESSION TIMEOUT NUMBER	{
			if ($3 < 0) {
				yyerror("invalid timeout: %lld",
				    (long long)$3);
				YYERROR;
			}
			if ($3 > INT_MAX) {
				yyerror("timeout too large: %lld",
				    (long long)$3);
				YYERROR;
			}
			rdr->conf.timeout = $3;
		}
		| include
		;

optmatch	: /* empty */			{ $$ = 0; }
		| MATCH				{ $$ = 1; }
		;

redirect_proto	: /* empty */			{ $$ = IPPROTO_TCP; }
		| TCP				{ $$ = IPPROTO_TCP; }
		| STRING			{
			struct protoent	*pe;

			if ((pe = getprotobyname($1)) == NULL) {
				yyerror("invalid protocol: %s", $1);
				FREEARG($1);
				YYERROR;
			}
			FREEARG($1);
			$$ = pe->p_proto;
		}
		;

interface	: /* empty */			{ $$ = NULL; }
		| INTERFACE STRING		{ $$ = $2; }
		;

pflog		: /* empty */			{ $$ = 0; }
		| PFLOG				{ $$ = 1; }
		;

routerdef	: ROUTER STRING			{
			if (!kernel_available()) {
				yyerror("router %s: routers are not "
				    "available on %s", $2, RELAYD_PLATFORM);
				FREEARG($2);
				YYERROR;
			}
			if (rdr_name_taken($2, "router") == -1) {
				FREEARG($2);
				YYERROR;
			}
			free(router);	/* one an error left */
			if ((router = calloc(1, sizeof(*router))) == NULL)
				fatal("out of memory");
			if (strlcpy(router->conf.name, $2,
			    sizeof(router->conf.name)) >=
			    sizeof(router->conf.name)) {
				yyerror("router name truncated");
				FREEARG($2);
				free(router);
				router = NULL;
				YYERROR;
			}
			FREEARG($2);
			router->conf.id = ++last_router_id;
			router->conf.proto = ROUTER_PROTO;
			router->conf.rtable = -1;
			router->conf.buckets = ROUTER_BUCKETS;
			router->conf.bucket_idle = ROUTER_BUCKET_IDLE;
			memset(&pfo, 0, sizeof(pfo));
		} '{' optnl routeopts_l '}'	{
			if (router->conf.nroutes == 0) {
				yyerror("router %s without routes",
				    router->conf.name);
				YYERROR;
			}
			if (pfo.ntables == 0) {
				yyerror("router %s has no table",
				    router->conf.name);
				YYERROR;
			}
			if (router->conf.rtable == -1)
				router->conf.rtable = 0;
			TAILQ_INSERT_TAIL(&conf->sc_routers, router, entry);
			router = NULL;
		}
		;

routeopts_l	: routeopts_l routeoptsl nl
		| routeoptsl optnl
		;

routeoptsl	: ROUTE addrprefix		{
			struct router_config	*rc = &router->conf;

			if (rc->af == 0)
				rc->af = $2.addr.ss_family;
			else if (rc->af != $2.addr.ss_family) {
				yyerror("router %s address family mismatch",
				    rc->name);
				YYERROR;
			}
			if (rc->nroutes >= ROUTER_MAXROUTES) {
				yyerror("router %s: too many routes (%d at "
				    "most)", rc->name, ROUTER_MAXROUTES);
				YYERROR;
			}
			rc->routes[rc->nroutes] = $2.addr;
			rc->prefixlen[rc->nroutes++] = $2.prefixlen;
		}
		| FORWARD TO			{
			topts_reset();
			topts.timeout = conf->sc_conf.timeout;
		} tablename tableopts_l		{
			struct table	*def, *tb;

			if (pfo.ntables) {
				yyerror("router %s table already specified",
				    router->conf.name);
				free(topts.sendbuf);
				topts.sendbuf = NULL;
				FREEARG($4);
				YYERROR;
			}
			TAILQ_FOREACH(def, &deftables, entry)
				if (strcmp(def->conf.name, $4) == 0)
					break;
			if (def == NULL) {
				yyerror("no such table: %s", $4);
				free(topts.sendbuf);
				topts.sendbuf = NULL;
				FREEARG($4);
				YYERROR;
			}
			FREEARG($4);
			if (table_kernel_fits(def, "router",
			    router->conf.name, ROUTER_MAXGATEWAYS) == -1)
				tb = NULL;
			else
				tb = table_use(def, &topts);
			free(topts.sendbuf);
			topts.sendbuf = NULL;
			if (tb == NULL)
				YYERROR;
			router->conf.table = tb->conf.id;
			pfo.ntables++;
		}
		| RTABLE NUMBER			{
			if (router->conf.rtable != -1) {
				yyerror("router %s rtable already specified",
				    router->conf.name);
				YYERROR;
			}
			if ($2 < 0 || $2 > 255) {
				yyerror("invalid rtable id %lld",
				    (long long)$2);
				YYERROR;
			}
			router->conf.rtable = $2;
		}
		| RTLABEL STRING		{
			int	 i;

			if (strlen($2) >= sizeof(router->conf.label)) {
				yyerror("route label truncated");
				FREEARG($2);
				YYERROR;
			}
			for (i = 0; i < nrtlabels; i++)
				if (strcmp(rtlabels[i], $2) == 0)
					break;
			if (i == nrtlabels) {
				if (nrtlabels == (int)nitems(rtlabels)) {
					yyerror("too many route labels (%d "
					    "at most)", (int)nitems(rtlabels));
					FREEARG($2);
					YYERROR;
				}
				(void)strlcpy(rtlabels[nrtlabels++], $2,
				    sizeof(rtlabels[0]));
			}
			(void)strlcpy(router->conf.label, $2,
			    sizeof(router->conf.label));
			router->conf.proto = ROUTER_PROTO_LABEL + i;
			FREEARG($2);
		}
		| BUCKETS NUMBER		{
			if ($2 < ROUTER_MAXGATEWAYS || $2 > UINT16_MAX) {
				yyerror("router %s: invalid buckets: %lld (%d "
				    "to %d)", router->conf.name, (long long)$2,
				    ROUTER_MAXGATEWAYS, UINT16_MAX);
				YYERROR;
			}
			router->conf.buckets = $2;
		}
		| BUCKETIDLE NUMBER		{
			if ($2 < 0 || $2 > 3600) {
				yyerror("router %s: invalid bucket-idle: %lld "
				    "(0 to 3600 seconds)", router->conf.name,
				    (long long)$2);
				YYERROR;
			}
			router->conf.bucket_idle = $2;
		}
		| DISABLE			{
			/* OpenBSD's grammar sets it on no router either */
			log_warnx("%s:%d: disable: no effect in a router",
			    file->name, yylval.lineno);
		}
		| include
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

	char			 at[128];
	int			 syntax;

	file->errors++;
	/* the parser's own complaint adds nothing to ours */
	syntax = strcmp(fmt, "syntax error") == 0;
	if (syntax && lastfile == file->name && lastline == yylval.lineno)
		return (0);
	lastfile = file->name;
	lastline = yylval.lineno;
	if (syntax) {
		syntax_at(at, sizeof(at));
		/* the end of the file: the line of the last thing in it */
		log_warnx("%s:%d: syntax error%s", file->name,
		    yychar == 0 && file->lastline > 0 ? file->lastline :
		    yylval.lineno, at);
		return (0);
	}
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		fatalx("yyerror vasprintf");
	va_end(ap);
	log_warnx("%s:%d: %s", file->name, yylval.lineno, msg);
	free(msg);
	return (0);
}

/*
 * forward ... inet | inet6 prefix: the relay maps the destinations of
 * all its forward lines; a line without it keeps what another gave, two
 * different ones are an error.
 */
static int
dstaf_set(int af, const struct in6_addr *prefix)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = af;
	if (prefix != NULL)
		sin6->sin6_addr = *prefix;
	if (rlay->rl_conf.dstaf.ss_family != AF_UNSPEC &&
	    memcmp(&rlay->rl_conf.dstaf, &ss, sizeof(ss)) != 0) {
		yyerror("relay %s: one inet or inet6 mapping for all forward "
		    "lines", rlay->rl_conf.name);
		return (-1);
	}
	rlay->rl_conf.dstaf = ss;
	return (0);
}

static void
needs_pf(const char *what)
{
	yyerror("%s needs pf(4), not available on %s", what,
	    RELAYD_PLATFORM);
}

/*
 * A redirection or router name is used once among both, even by one an
 * error dropped (as OpenBSD counts them).
 */
static int
rdr_name_taken(const char *name, const char *what)
{
	char	(*n)[MAX_NAME_SIZE];
	int	 i;

	for (i = 0; i < npfnames; i++)
		if (strcmp(pfnames[i], name) == 0) {
			yyerror("%s %s defined twice", what, name);
			return (-1);
		}
	if ((n = reallocarray(pfnames, npfnames + 1, sizeof(*n))) == NULL)
		fatal("out of memory");
	pfnames = n;
	(void)strlcpy(pfnames[npfnames++], name, sizeof(pfnames[0]));
	return (0);
}

/* A redirection's forward to or route to: its interface, if any. */
static int
rdr_route_if(int fwd, const char *ifname)
{
	if (fwd == FWD_ROUTE && ifname == NULL) {
		yyerror("missing interface to route to");
		return (-1);
	}
	if (fwd != FWD_ROUTE && ifname != NULL) {
		yyerror("superfluous interface");
		return (-1);
	}
	if (pfo.ntables > 0 && (fwd == FWD_ROUTE) !=
	    (rdr->conf.routeif[0] != '\0')) {
		yyerror("redirection %s: route to and forward to mixed",
		    rdr->conf.name);
		return (-1);
	}
	if (fwd == FWD_ROUTE) {
		if (rdr->conf.routeif[0] != '\0' &&
		    strcmp(rdr->conf.routeif, ifname) != 0) {
			yyerror("redirection %s routes to two interfaces",
			    rdr->conf.name);
			return (-1);
		}
		if (strlcpy(rdr->conf.routeif, ifname,
		    sizeof(rdr->conf.routeif)) >= sizeof(rdr->conf.routeif)) {
			yyerror("invalid interface name: %s", ifname);
			return (-1);
		}
	}
	return (0);
}

/*
 * forward to <table> (or route to) in a redirection; frees *name and
 * *ifname, and clears them for the parser's destructor.
 */
static int
rdr_table(int fwd, char **namep, char **ifnamep)
{
	char		*name = *namep, *ifname = *ifnamep;
	struct table	*def, *tb;
	int		 ret = -1;

	if (rdr_route_if(fwd, ifname) == -1)
		goto done;
	if (fwd == FWD_TRANS) {
		yyerror("no transparent forward here");
		goto done;
	}
	TAILQ_FOREACH(def, &deftables, entry)
		if (strcmp(def->conf.name, name) == 0)
			break;
	if (def == NULL) {
		yyerror("no such table: %s", name);
		goto done;
	}
	if (topts.check == CHECK_NOCHECK) {
		yyerror("table %s has no check", name);
		goto done;
	}
	switch (topts.mode) {
	case RELAY_DSTMODE_ROUNDROBIN:
	case RELAY_DSTMODE_RANDOM:
	case RELAY_DSTMODE_SRCHASH:
		break;
	case RELAY_DSTMODE_LEASTSTATES:
		yyerror("mode least-states: nftables has no choice by "
		    "the fewest connections; use roundrobin, random or "
		    "source-hash");
		goto done;
	default:
		yyerror("mode %s not supported for redirections",
		    relay_mode_name(topts.mode));
		goto done;
	}
	if (pfo.ntables == 2) {
		yyerror("only one backup table is allowed");
		goto done;
	}
	if (topts.port == 0)
		topts.port = pfo.port;
	if (topts.port == 0) {
		yyerror("table %s has no port (give one, or listen on "
		    "before forward to)", name);
		goto done;
	}
	if (pfo.ntables == 1) {
		if (topts.mode != rdr->conf.mode) {
			yyerror("backup table for %s with different mode",
			    rdr->conf.name);
			goto done;
		}
		if (topts.port != rdr->conf.port) {
			yyerror("redirection %s uses two different ports "
			    "for its table and backup table",
			    rdr->conf.name);
			goto done;
		}
	}
	if (table_kernel_fits(def, "redirection", rdr->conf.name,
	    RDR_MAXHOSTS) == -1)
		goto done;
	if ((tb = table_use(def, &topts)) == NULL)
		goto done;
	if (pfo.ntables == 0) {
		rdr->conf.table = tb->conf.id;
		rdr->conf.mode = topts.mode;
		rdr->conf.port = topts.port;
		rdr->conf.seed = rdr_seed(rdr->conf.name,
		    topts.hashkey_set ? topts.hashkey : NULL);
	} else
		rdr->conf.backup = tb->conf.id;
	pfo.ntables++;
	ret = 0;
 done:
	free(topts.sendbuf);
	topts.sendbuf = NULL;
	FREEARG(*namep);
	FREEARG(*ifnamep);
	return (ret);
}

/*
 * route to forwards in the ingress of the virtual addresses' interfaces,
 * before this host's connection tracking and filter rules: what needs
 * them is refused.
 */
static int
rdr_route_check(struct rdr *r)
{
	int	 i;

	if (r->conf.routeif[0] == '\0')
		return (0);
	for (i = 0; i < r->conf.nvirts; i++)
		if (r->conf.virts[i].ifname[0] == '\0') {
			yyerror("redirection %s: route to needs an interface "
			    "on every listen on (where packets are taken)",
			    r->conf.name);
			return (-1);
		} else if (r->conf.virts[i].pflog) {
			yyerror("redirection %s: no pflog with route to",
			    r->conf.name);
			return (-1);
		}
	if (r->conf.tagmark != 0) {
		yyerror("redirection %s: no pftag with route to: its packets "
		    "never reach this host's rules", r->conf.name);
		return (-1);
	}
	return (0);
}

/* What an error left half built. */
static void
rdr_purge(void)
{
	free(pfnames);
	pfnames = NULL;
	npfnames = 0;
	free(rdr);
	rdr = NULL;
	free(router);
	router = NULL;
}

static int
table_defined(const char *name, int use)
{
	struct table	*tb;

	TAILQ_FOREACH(tb, &deftables, entry)
		if (strcmp(tb->conf.name, name) == 0) {
			if (use)
				tb->conf.flags |= F_USED;
			return (1);
		}
	return (0);
}

/* addr[/prefixlen] of a rule or a route; takes s. */
static int
addr_prefix(char *s, int64_t len, struct rule_addr *ra)
{
	int	 max;

	memset(ra, 0, sizeof(*ra));
	if (host_resolve(s, &ra->addr, 1) <= 0 ||
	    ra->addr.ss_family == AF_UNIX) {
		yyerror("invalid host %s", s);
		free(s);
		return (-1);
	}
	free(s);
	max = ra->addr.ss_family == AF_INET ? 32 : 128;
	if (len > max || len < -1) {
		yyerror("invalid prefixlen %lld", (long long)len);
		return (-1);
	}
	ra->prefixlen = len == -1 ? max : len;
	return (0);
}

/* One key of a rule: takes key and value. */
static int
rule_kv_set(enum key_type type, enum key_option option, int keymatch,
    char *key, char *value)
{
	static const char	*names[KEY_TYPE_MAX] = {
		"", "cookie", "header", "path", "query", "url"
	};
	struct rule_kv		*kv = &rule->rule_kv[type];
	int			 vmatch = value != NULL ? valmatch : 0;
	const char		*errstr;

	if ((type == KEY_TYPE_QUERY || type == KEY_TYPE_URL) &&
	    (option == KEY_OPTION_APPEND || option == KEY_OPTION_SET ||
	    option == KEY_OPTION_REMOVE))
		yyerror("combining %s type and the given option is not "
		    "supported", names[type]);
	else if (kv->kv_set)
		yyerror("%s given twice in a rule", names[type]);
	else if ((keymatch || vmatch) && (option == KEY_OPTION_APPEND ||
	    option == KEY_OPTION_SET))
		yyerror("%s %s: no glob or pattern with set or append",
		    names[type], option == KEY_OPTION_SET ? "set" : "append");
	else if (keymatch == KV_MATCH_PATTERN && key != NULL &&
	    pattern_check(key, &errstr) == -1)
		yyerror("%s pattern \"%s\": %s", names[type], key, errstr);
	else if (vmatch == KV_MATCH_PATTERN &&
	    pattern_check(value, &errstr) == -1)
		yyerror("%s value pattern \"%s\": %s", names[type], value,
		    errstr);
	else {
		kv->kv_set = 1;
		kv->kv_option = option;
		kv->kv_keymatch = keymatch;
		kv->kv_valmatch = vmatch;
		kv->kv_key = key;
		kv->kv_value = value;
		rulekey = type;
		return (0);
	}
	free(key);
	free(value);
	return (-1);
}

static struct relay_rule *
rule_copy(const struct relay_rule *r)
{
	struct relay_rule	*c;
	int			 i;

	if ((c = malloc(sizeof(*c))) == NULL)
		fatal("out of memory");
	*c = *r;
	for (i = 0; i < KEY_TYPE_MAX; i++) {
		if (r->rule_kv[i].kv_key != NULL &&
		    (c->rule_kv[i].kv_key = strdup(r->rule_kv[i].kv_key)) ==
		    NULL)
			fatal("out of memory");
		if (r->rule_kv[i].kv_value != NULL &&
		    (c->rule_kv[i].kv_value =
		    strdup(r->rule_kv[i].kv_value)) == NULL)
			fatal("out of memory");
	}
	return (c);
}

/*
 * Add the rule, or with "file" one rule per line of the file: the first
 * word of every line that is not empty or a comment is the key.
 */
/*
 * A glob or pattern keyword needs a key to match, or the file that
 * gives the keys; log alone may go without.
 */
static int
rule_kv_check(struct relay_rule *r, const char *path)
{
	static const char	*names[KEY_TYPE_MAX] = {
		"", "cookie", "header", "path", "query", "url"
	};
	struct rule_kv		*kv;
	int			 i;

	for (i = 1; i < KEY_TYPE_MAX; i++) {
		kv = &r->rule_kv[i];
		if (!kv->kv_set || kv->kv_keymatch == KV_MATCH_DEFAULT ||
		    kv->kv_key != NULL || kv->kv_option == KEY_OPTION_LOG ||
		    (path != NULL && (int)rulekey == i))
			continue;
		yyerror("%s: glob or pattern without a key or file",
		    names[i]);
		return (-1);
	}
	return (0);
}

static int
rule_add(struct protocol *p, struct relay_rule *r, const char *path)
{
	struct relay_rule	*c;
	FILE			*fp;
	char			*line = NULL, *k;
	size_t			 size = 0;
	ssize_t			 len;
	int			 n = 0;

	if (r->rule_dir == RELAY_DIR_RESPONSE &&
	    (r->rule_kv[KEY_TYPE_PATH].kv_set ||
	    r->rule_kv[KEY_TYPE_QUERY].kv_set ||
	    r->rule_kv[KEY_TYPE_URL].kv_set)) {
		yyerror("path, query and url are for request rules only");
		rule_free(r);
		return (-1);
	}
	if (rule_kv_check(r, path) == -1) {
		rule_free(r);
		return (-1);
	}
	if (path == NULL) {
		r->rule_id = ++last_rule_id;
		TAILQ_INSERT_TAIL(&p->rules, r, rule_entry);
		return (0);
	}
	if ((fp = fopen(path, "r")) == NULL) {
		yyerror("failed to load rules from %s: %s", path,
		    strerror(errno));
		rule_free(r);
		return (-1);
	}
	if (!regular_file(fp, path)) {
		yyerror("failed to load rules from %s", path);
		fclose(fp);
		rule_free(r);
		return (-1);
	}
	while ((len = getline(&line, &size, fp)) != -1) {
		k = line + strspn(line, " \t");
		k[strcspn(k, " \t\r\n")] = '\0';
		if (*k == '\0' || *k == '#')
			continue;
		c = rule_copy(r);
		free(c->rule_kv[rulekey].kv_key);
		if ((c->rule_kv[rulekey].kv_key = strdup(k)) == NULL)
			fatal("out of memory");
		c->rule_id = ++last_rule_id;
		TAILQ_INSERT_TAIL(&p->rules, c, rule_entry);
		n++;
	}
	free(line);
	fclose(fp);
	rule_free(r);
	if (n == 0) {
		yyerror("failed to load rules from %s: no rules", path);
		return (-1);
	}
	return (0);
}

/* A string option of a protocol, the last one given wins; takes s. */
static int
proto_strset(char **dst, char *s, const char *what)
{
	if (strlen(s) >= PATH_MAX) {
		yyerror("%s too long", what);
		free(s);
		return (-1);
	}
	free(*dst);
	*dst = s;
	return (0);
}

/* What libtls would refuse at run time is refused here, as OpenBSD. */
static int
tls_validate(const char *what, char *s)
{
	struct tls_config	*cfg;
	int			 ret;

	if ((cfg = tls_config_new()) == NULL)
		fatalx("tls_config_new failed");
	if (strcmp(what, "ciphers") == 0)
		ret = tls_config_set_ciphers(cfg, s);
	else if (strcmp(what, "ecdhe") == 0)
		ret = tls_config_set_ecdhecurves(cfg, s);
	else
		ret = tls_config_set_dheparams(cfg, s);
	if (ret != 0) {
		yyerror("tls %s %s: %s", what, s, tls_config_error(cfg));
		free(s);
	}
	tls_config_free(cfg);
	return (ret != 0 ? -1 : 0);
}

static int
kw_cmp(const void *k, const void *e)
{
	return (strcmp(k, ((const struct keywords *)e)->k_name));
}

/* The keywords, sorted for bsearch(3) */
static const struct keywords keywords[] = {
	{ "agentx",		AGENTX },
	{ "announce",		ANNOUNCE },
	{ "append",		APPEND },
	{ "backend",		BACKEND },
	{ "backlog",		BACKLOG },
	{ "backup",		BACKUP },
	{ "binary",		BINARY },
	{ "block",		BLOCK },
	{ "bucket-idle",	BUCKETIDLE },
	{ "buckets",		BUCKETS },
	{ "buffer",		BUFFER },
	{ "burst",		BURST },
	{ "ca",			CA },
	{ "cache",		CACHE },
	{ "cert",		CERTIFICATE },
	{ "changes",		CHANGES },
	{ "check",		CHECK },
	{ "checks",		CHECKS },
	{ "ciphers",		CIPHERS },
	{ "client",		CLIENT },
	{ "code",		CODE },
	{ "connection",		CONNECTION },
	{ "connections",	CONNECTIONS },
	{ "context",		CONTEXT },
	{ "cookie",		COOKIE },
	{ "crl",		CRL },
	{ "demote",		DEMOTE },
	{ "destination",	DESTINATION },
	{ "digest",		DIGEST },
	{ "directory",		DIRECTORY },
	{ "disable",		DISABLE },
	{ "ecdhe",		ECDHE },
	{ "edh",		EDH },
	{ "engine",		ENGINE },
	{ "error",		ERROR },
	{ "errors",		ERRORS },
	{ "expect",		EXPECT },
	{ "expire",		EXPIRE },
	{ "external",		EXTERNAL },
	{ "file",		FILENAME },
	{ "flush",		FLUSH },
	{ "forward",		FORWARD },
	{ "from",		FROM },
	{ "glob",		GLOB },
	{ "group",		GROUP },
	{ "hash",		HASH },
	{ "header",		HEADER },
	{ "headerlen",		HEADERLEN },
	{ "host",		HOST },
	{ "http",		HTTP },
	{ "http2",		HTTP2 },
	{ "icmp",		ICMP },
	{ "idle",		IDLE },
	{ "ignorecase",	IGNORECASE },
	{ "include",		INCLUDE },
	{ "inet",		INET },
	{ "inet6",		INET6 },
	{ "interface",		INTERFACE },
	{ "interval",		INTERVAL },
	{ "ip",			IP },
	{ "key",		KEY },
	{ "keypair",		KEYPAIR },
	{ "label",		LABEL },
	{ "least-states",	LEASTSTATES },
	{ "listen",		LISTEN },
	{ "loadbalance",	LOADBALANCE },
	{ "log",		LOG },
	{ "lookup",		LOOKUP },
	{ "match",		MATCH },
	{ "max-src-conn",	MAXSRCCONN },
	{ "max-src-conn-rate",	MAXSRCCONNRATE },
	{ "max-src-request-rate", MAXSRCREQRATE },
	{ "method",		METHOD },
	{ "mode",		MODE },
	{ "nat",		NAT },
	{ "no",			NO },
	{ "nodelay",		NODELAY },
	{ "nothing",		NOTHING },
	{ "on",			ON },
	{ "overload",		OVERLOAD },
	{ "owner",		OWNER },
	{ "params",		PARAMS },
	{ "parent",		PARENT },
	{ "pass",		PASS },
	{ "password",		PASSWORD },
	{ "path",		PATH },
	{ "pattern",		PATTERN },
	{ "pflog",		PFLOG },
	{ "pftag",		PFTAG },
	{ "pipeline",		PIPELINE },
	{ "port",		PORT },
	{ "prefork",		PREFORK },
	{ "priority",		PRIORITY },
	{ "protocol",		PROTO },
	{ "proxy-protocol",	PROXYPROTO },
	{ "query",		QUERYSTR },
	{ "quick",		QUICK },
	{ "random",		RANDOM },
	{ "real",		REAL },
	{ "redirect",		REDIRECT },
	{ "relay",		RELAY },
	{ "remove",		REMOVE },
	{ "request",		REQUEST },
	{ "response",		RESPONSE },
	{ "restricted",		RESTRICTED },
	{ "retry",		RETRY },
	{ "return",		RETURN },
	{ "roundrobin",		ROUNDROBIN },
	{ "route",		ROUTE },
	{ "router",		ROUTER },
	{ "rtable",		RTABLE },
	{ "rtlabel",		RTLABEL },
	{ "sack",		SACK },
	{ "script",		SCRIPT },
	{ "send",		SEND },
	{ "session",		SESSION },
	{ "set",		SET },
	{ "socket",		SOCKET },
	{ "source-hash",	SRCHASH },
	{ "splice",		SPLICE },
	{ "src-prefix",		SRCPREFIX },
	{ "state",		STATE },
	{ "sticky-address",	STICKYADDR },
	{ "streams",		STREAMS },
	{ "strip",		STRIP },
	{ "style",		STYLE },
	{ "table",		TABLE },
	{ "tag",		TAG },
	{ "tagged",		TAGGED },
	{ "tcp",		TCP },
	{ "tickets",		TICKETS },
	{ "timeout",		TIMEOUT },
	{ "tls",		TLS },
	{ "to",			TO },
	{ "transparent",	TRANSPARENT },
	{ "url",		URL },
	{ "v1",			V1 },
	{ "v2",			V2 },
	{ "value",		VALUE },
	{ "websockets",		WEBSOCKETS },
	{ "with",		WITH }
};

/* A word of the file in a message: what was quoted may hold anything. */
static void
syntax_word(char *buf, size_t len, const char *s)
{
	size_t	 i;

	for (i = 0; i + 4 < len && s[i] != '\0'; i++)
		buf[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
	(void)strlcpy(buf + i, s[i] != '\0' ? "..." : "", len - i);
}

/*
 * Where the parser's "syntax error" stopped: the token it could not
 * take (yychar, its value in yylval), as the file spells it.
 */
static void
syntax_at(char *buf, size_t len)
{
	char		 word[48];
	size_t		 i;

	switch (yychar) {
	case 0:
		(void)strlcpy(buf, " at end of file", len);
		return;
	case '\n':
		(void)strlcpy(buf, " at end of line", len);
		return;
	case NUMBER:
		(void)snprintf(buf, len, " at %lld", (long long)yylval.v.number);
		return;
	case STRING:
		if (yylval.v.string == NULL)
			break;
		syntax_word(word, sizeof(word), yylval.v.string);
		(void)snprintf(buf, len, " at \"%s\"", word);
		return;
	default:
		if (yychar > 0 && yychar < 256 && isprint(yychar)) {
			(void)snprintf(buf, len, " at \"%c\"", yychar);
			return;
		}
		for (i = 0; i < nitems(keywords); i++)
			if (keywords[i].k_val == yychar) {
				(void)snprintf(buf, len, " at \"%s\" (a keyword: "
				    "quote it where a name is meant)",
				    keywords[i].k_name);
				return;
			}
		break;
	}
	buf[0] = '\0';
}

static int
lookup(char *s)
{
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

/*
 * A word after '<' is a table's name, never a keyword: "table
 * <backend>" stays good whatever words the grammar takes on.
 */
static int	 yylex_prev;

static int
yylex(void)
{
	return (yylex_prev = yylex_token());
}

static int
yylex_token(void)
{
	char		 buf[MAXTOKEN];
	char		*p;
	const char	*errstr;
	int		 c, token;

top:
	p = buf;
	while ((c = lgetc(0)) == ' ' || c == '\t')
		; /* nothing */

	yylval.lineno = file->lineno;
	if (c != '\n' && c != EOF)
		file->lastline = file->lineno;
	if (c == '#')
		while ((c = lgetc(0)) != '\n' && c != EOF)
			; /* nothing */
	if (c == '$' && !expanding) {
		if (yylex_macro(buf, sizeof(buf), &token) == -1)
			return (token);
		goto top;
	}
	if (c == '\'' || c == '"')
		return (yylex_quoted(c, buf, sizeof(buf)));

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
		token = yylex_prev == '<' ? STRING : lookup(buf);
		if (token == STRING)
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

/*
 * $name: the macro's value goes back into the input, between the marks
 * of an expansion.  0 when it did, -1 with the token to return.
 */
static int
yylex_macro(char *buf, size_t len, int *token)
{
	char	*p = buf, *val;
	int	 c;

	for (;;) {
		if ((c = lgetc(0)) == EOF) {
			*token = 0;
			return (-1);
		}
		if (p + 1 >= buf + len - 1) {
			yyerror("string too long");
			*token = findeol();
			return (-1);
		}
		if (isalnum(c) || c == '_') {
			*p++ = c;
			continue;
		}
		*p = '\0';
		lungetc(c);
		break;
	}
	if ((val = symget(buf)) == NULL) {
		yyerror("macro '%s' not defined", buf);
		*token = findeol();
		return (-1);
	}
	/* a macro that doubles itself must fail fast, not parse for hours */
	if (strlen(val) > MACRO_MAXTOTAL - expanded) {
		yyerror("macros expand to more than %d bytes",
		    MACRO_MAXTOTAL);
		*token = findeol();
		return (-1);
	}
	expanded += strlen(val);
	p = val + strlen(val) - 1;
	lungetc(DONE_EXPAND);
	while (p >= val) {
		lungetc((unsigned char)*p);
		p--;
	}
	lungetc(START_EXPAND);
	return (0);
}

/* A string in quotec quotes: \ before the quote, a blank or a newline. */
static int
yylex_quoted(int quotec, char *buf, size_t len)
{
	char	*p = buf;
	int	 c, next;

	for (;;) {
		if ((c = lgetc(quotec)) == EOF)
			return (0);
		if (c == '\n') {
			file->lineno++;
			continue;
		} else if (c == '\\') {
			if ((next = lgetc(quotec)) == EOF)
				return (0);
			if (next == quotec || next == ' ' || next == '\t')
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
		if (p + 1 >= buf + len - 1) {
			yyerror("string too long");
			return (findeol());
		}
		*p++ = c;
	}
	if ((yylval.v.string = strdup(buf)) == NULL)
		fatal("yylex: strdup");
	return (STRING);
}

static int
regular_file(FILE *fp, const char *name)
{
	struct stat	 st;

	if (fstat(fileno(fp), &st) == -1) {
		log_warn("%s", name);
		return (0);
	}
	if (!S_ISREG(st.st_mode)) {
		log_warnx("%s: not a regular file", name);
		return (0);
	}
	return (1);
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
	/* a device or a fifo could be read forever */
	if (!regular_file(nfile->stream, nfile->name)) {
		fclose(nfile->stream);
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
	last_rule_id = 0;
	rdr = NULL;
	router = NULL;
	last_rdr_id = last_router_id = 0;
	npftags = nrtlabels = 0;
	memset(&pfo, 0, sizeof(pfo));
	memset(&topts, 0, sizeof(topts));
	rule = NULL;
	rulefile = NULL;
	yylval.lineno = 0;
	expanded = 0;

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
		relay_free(rlay);
		rlay = NULL;
	}
	if (proto != NULL) {
		protocol_free(proto);
		free(proto);
		proto = NULL;
	}
	if (rule != NULL) {
		rule_free(rule);
		rule = NULL;
	}
	free(rulefile);
	rulefile = NULL;
	free(topts.sendbuf);
	topts.sendbuf = NULL;
	rdr_purge();
	pfo.active = 0;
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
	struct protocol	*p;
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
	if (TAILQ_EMPTY(conf->sc_relays) && TAILQ_EMPTY(&conf->sc_rdrs) &&
	    TAILQ_EMPTY(&conf->sc_routers)) {
		log_warnx("%s: no actions, nothing to do", conf->sc_conffile);
		errors++;
	}
	if (strcmp(conf->sc_conf.rsocket, conf->sc_conf.socket) == 0) {
		log_warnx("%s: the restricted socket is the control socket",
		    conf->sc_conffile);
		errors++;
	}
	/* a parent is a checked host: no chains, not itself */
	TAILQ_FOREACH(h, &conf->sc_hosts, globalentry)
		if (h->conf.parentid != 0 &&
		    ((ph = host_find(conf, h->conf.parentid)) == NULL ||
		    ph == h || ph->conf.parentid != 0)) {
			log_warnx("%s: host %s in table %s: no host with id "
			    "%u to follow as parent", conf->sc_conffile,
			    h->conf.name, h->tablename, h->conf.parentid);
			errors++;
		}
	/* as OpenBSD, only a warning */
	TAILQ_FOREACH(p, conf->sc_protos, entry)
		if ((p->flags & F_USED) == 0)
			log_warnx("%s: unused protocol: %s", conf->sc_conffile,
			    p->name);
	TAILQ_FOREACH(tb, conf->sc_tables, entry)
		if (timercmp(&tb->conf.timeout, &conf->sc_conf.interval,
		    >=)) {
			log_warnx("%s: table timeout exceeds interval: %s",
			    conf->sc_conffile, tb->conf.name);
			errors++;
		}
	return (errors);
}

/*
 * The seed of a redirection's kernel hash (source-hash, and route to's
 * choice): from its name under the key of mode source-hash, so that two
 * nodes of a pair with the same configuration choose the same host for a
 * client; without a key, under one chosen at random when this process
 * started, so that a reload keeps the choices of the running kernel rules.
 */
static uint32_t
rdr_seed(const char *name, const uint8_t *key)
{
	static uint8_t	 startkey[16];
	static int	 startkey_set;
	uint64_t	 h;

	if (key == NULL) {
		if (!startkey_set) {
			arc4random_buf(startkey, sizeof(startkey));
			startkey_set = 1;
		}
		key = startkey;
	}
	if (compat_siphash_init() == -1)
		fatalx("no SipHash for the redirections' seeds");
	h = compat_siphash(key, name, strlen(name), 0);
	return ((uint32_t)(h ^ (h >> 32)));
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
/* ours: the longest path a unix socket's address holds */
static size_t
unix_path_max(void)
{
	struct sockaddr_un	 sun;

	return (sizeof(sun.sun_path) - 1);
}

/* An address host_resolve() refused: a path says why. */
static void
addr_error(const char *what, const char *s)
{
	if (*s == '/' && strlen(s) > unix_path_max())
		yyerror("invalid %s address: %s: a socket path has at most "
		    "%zu bytes", what, s, unix_path_max());
	else
		yyerror("invalid %s address: %s", what, s);
}

static int
host_resolve(const char *s, struct sockaddr_storage *ss, int max)
{
	struct addrinfo		 hints, *res0, *res;
	struct ifaddrs		*ifap, *ifa;
	struct sockaddr_in	*sin;
	struct sockaddr_in6	*sin6;
	int			 n = 0, family;

	memset(ss, 0, sizeof(*ss) * max);
	/* ours: an absolute path is a unix socket */
	if (s[0] == '/') {
		struct sockaddr_un	*sun = (struct sockaddr_un *)ss;

		if (strlcpy(sun->sun_path, s, sizeof(sun->sun_path)) >=
		    sizeof(sun->sun_path))
			return (0);
		sun->sun_family = AF_UNIX;
		return (1);
	}
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
	/* an IPv6 address with its scope, fe80::1%em0, whatever is up */
	if (strchr(s, '%') != NULL) {
		memset(&hints, 0, sizeof(hints));
		hints.ai_family = AF_INET6;
		hints.ai_socktype = SOCK_STREAM;
		hints.ai_flags = AI_NUMERICHOST;
		if (getaddrinfo(s, NULL, &hints, &res0) != 0)
			return (0);
		memcpy(sin6, res0->ai_addr, sizeof(*sin6));
		freeaddrinfo(res0);
		return (1);
	}

	if (getifaddrs(&ifap) == 0) {
		for (family = AF_INET; n == 0 && family != -1;
		    family = family == AF_INET ? AF_INET6 : -1)
			for (ifa = ifap; ifa != NULL; ifa = ifa->ifa_next) {
				if (ifa->ifa_addr == NULL ||
				    ifa->ifa_addr->sa_family != family ||
				    (strcmp(ifa->ifa_name, s) != 0 &&
				    !compat_if_in_group(ifa->ifa_name, s)))
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

	if (parse_noresolve)
		return (0);
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
	    strcmp(tb->conf.host, o->host) == 0 &&
	    strcmp(tb->conf.demote_group, o->demote) == 0 &&
	    tb->sendbuf_len == o->sendbuf_len &&
	    (o->sendbuf_len == 0 ||
	    memcmp(tb->sendbuf, o->sendbuf, o->sendbuf_len) == 0));
}

/* A new forward to: what an error left of the last one goes. */
static void
topts_reset(void)
{
	free(topts.sendbuf);
	memset(&topts, 0, sizeof(topts));
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
 * The parent hands the kernel at most max hosts of a table (an nftables
 * map, a multipath route): more is refused here, not cut there.
 */
static int
table_kernel_fits(struct table *def, const char *what, const char *name,
    unsigned int max)
{
	struct host	*h;
	unsigned int	 n = 0;

	TAILQ_FOREACH(h, &def->hosts, entry)
		n++;
	if (n > max) {
		yyerror("%s %s: table %s has %u hosts (%u at most)", what,
		    name, def->conf.name, n, max);
		return (-1);
	}
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
	(void)strlcpy(tb->conf.host, o->host, sizeof(tb->conf.host));
	if (o->demote[0] != '\0') {
		tb->conf.flags |= F_DEMOTE;
		(void)strlcpy(tb->conf.demote_group, o->demote,
		    sizeof(tb->conf.demote_group));
	}
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

/* 1: every host of the table is a unix socket, -1: some, 0: none. */
static int
table_unix(struct table *def)
{
	struct host	*h;
	int		 n = 0, all = 0;

	TAILQ_FOREACH(h, &def->hosts, entry) {
		all++;
		if (h->conf.ss.ss_family == AF_UNIX)
			n++;
	}
	return (n == 0 ? 0 : n == all ? 1 : -1);
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
	c->rl_us = -1;
	TAILQ_INIT(&c->rl_tables);
	TAILQ_INIT(&c->rl_certs);
	if (snprintf(c->rl_conf.name, sizeof(c->rl_conf.name), "%s%d:%u",
	    r->rl_conf.name, n, port) >= (int)sizeof(c->rl_conf.name)) {
		yyerror("relay name truncated");
		free(c);
		return (-1);
	}
	c->rl_conf.id = ++last_relay_id;
	c->rl_conf.ss = *ss;
	c->rl_conf.port = port;
	c->rl_conf.flags &= ~F_TLS;
	if (listen_tls[n])
		c->rl_conf.flags |= F_TLS;
	relay_ppfrom(c, n);
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
	return (relay_tls_load(c));
}

/* What listen line N says beyond its address: PROXY peers, socket modes. */
static void
relay_ppfrom(struct relay *r, int n)
{
	r->rl_conf.sun_uid = listen_uid[n];
	r->rl_conf.sun_gid = listen_gid[n];
	r->rl_conf.sun_mode = listen_mode[n] != 0 ? listen_mode[n] :
	    RELAY_SUN_MODE;
	r->rl_conf.pp_nfrom = listen_ppn[n];
	memset(r->rl_conf.pp_from, 0, sizeof(r->rl_conf.pp_from));
	if (listen_ppn[n] > 0)
		memcpy(r->rl_conf.pp_from, listen_pp[n],
		    listen_ppn[n] * sizeof(listen_pp[n][0]));
}

/* owner, group and mode: for the unix socket just listened on */
static int
sockperm_ok(void)
{
	if (listen_ss[nlisten - 1].ss_family == AF_UNIX)
		return (1);
	yyerror("owner, group and mode are for unix-socket listeners");
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
	relay_certs_free(r);
	free(r);
}

/*
 * The TLS files of a relay in the list, read now so that relayd -n
 * finds a missing one.  Not when fuzzing: no file is read then.
 */
static int
relay_tls_load(struct relay *r)
{
	char	 err[PATH_MAX + 128];

	arc4random_buf(r->rl_conf.tls_sid, sizeof(r->rl_conf.tls_sid));
	if ((r->rl_proto->tlscacert == NULL) !=
	    (r->rl_proto->tlscakey == NULL)) {
		yyerror("relay %s: tls ca cert and tls ca key go together",
		    r->rl_conf.name);
		return (-1);
	}
	/* TLS inspection: a TLS listener, a TLS backend and a CA */
	if (r->rl_proto->tlscacert != NULL &&
	    (r->rl_conf.flags & (F_TLS | F_TLSCLIENT)) ==
	    (F_TLS | F_TLSCLIENT))
		r->rl_conf.flags |= F_TLSINSPECT;
	/* h2 is chosen by ALPN: no TLS listener, no h2 */
	if (r->rl_proto->type == RELAY_PROTO_HTTP &&
	    (r->rl_proto->httpflags & HTTPFLAG_HTTP2) &&
	    ((r->rl_conf.flags & F_TLS) == 0 ||
	    (r->rl_conf.flags & F_TLSINSPECT)))
		log_warnx("%s:%d: relay %s: http2 needs a tls listener "
		    "without tls inspection: its clients get HTTP/1.1",
		    file->name, yylval.lineno, r->rl_conf.name);
	if ((r->rl_conf.flags & (F_TLS | F_TLSCLIENT)) == 0 ||
	    parse_noresolve)
		return (0);
	if (tls_load_relay(conf, r, r->rl_proto, err, sizeof(err)) == -1) {
		yyerror("cannot load certificates for relay %s:%d: %s",
		    r->rl_conf.name, r->rl_conf.port, err);
		return (-1);
	}
	return (0);
}

/* announce: an address of this node's own, not any or a unix socket. */
static int
announce_check(const char *what, const char *name,
    struct sockaddr_storage *ss)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)ss;

	if ((ss->ss_family == AF_INET &&
	    sin->sin_addr.s_addr != htonl(INADDR_ANY)) ||
	    (ss->ss_family == AF_INET6 &&
	    !IN6_IS_ADDR_UNSPECIFIED(&sin6->sin6_addr)))
		return (0);
	yyerror("%s %s: announce needs an IP address to listen on, "
	    "not %s", what, name, ss->ss_family == AF_UNIX ?
	    "a unix socket" : "any");
	return (-1);
}

/* A dns relay listens on UDP (and TCP) and sends datagrams itself. */
static int
relay_dnscheck(struct relay *r)
{
	int	 i;

	for (i = 0; i < nlisten; i++) {
		if (listen_tls[i] || (r->rl_conf.flags & F_TLSCLIENT)) {
			yyerror("relay %s: tls over udp is not supported",
			    r->rl_conf.name);
			return (-1);
		}
		if (listen_ss[i].ss_family == AF_UNIX) {
			yyerror("relay %s: a dns protocol needs an IP "
			    "address to listen on", r->rl_conf.name);
			return (-1);
		}
	}
	if (r->rl_conf.flags & (F_NATLOOK | F_DIVERT | F_TRANSPARENT)) {
		yyerror("relay %s: a dns protocol cannot forward to "
		    "destination, nat lookup or transparently",
		    r->rl_conf.name);
		return (-1);
	}
	if (r->rl_conf.dstss.ss_family == AF_UNIX) {
		yyerror("relay %s: a dns protocol cannot forward to a unix "
		    "socket", r->rl_conf.name);
		return (-1);
	}
	return (0);
}

static int
relay_finish(struct relay *r)
{
	char	 hbuf[NI_MAXHOST];
	int	 i;

	if (nlisten == 0) {
		yyerror("relay %s has no listener", r->rl_conf.name);
		relay_free(r);
		return (-1);
	}
	if ((r->rl_conf.flags & (F_NATLOOK | F_DIVERT)) ==
	    (F_NATLOOK | F_DIVERT)) {
		yyerror("relay %s with conflicting nat lookup and peer "
		    "options", r->rl_conf.name);
		relay_free(r);
		return (-1);
	}
	if ((r->rl_conf.flags & (F_NATLOOK | F_DIVERT)) == 0 &&
	    r->rl_conf.dstss.ss_family == AF_UNSPEC &&
	    TAILQ_EMPTY(&r->rl_tables)) {
		yyerror("relay %s has no target, rdr, or table",
		    r->rl_conf.name);
		relay_free(r);
		return (-1);
	}
	/* every destination ends in dstaf's family: the client's must be it */
	for (i = 0; i < nlisten; i++) {
		if ((r->rl_conf.flags & F_TRANSPARENT) == 0 ||
		    r->rl_conf.dstaf.ss_family == AF_UNSPEC ||
		    listen_ss[i].ss_family == r->rl_conf.dstaf.ss_family)
			continue;
		yyerror("relay %s: transparent forward ... %s connects over "
		    "%s: a client of listen on %s cannot be its source",
		    r->rl_conf.name,
		    r->rl_conf.dstaf.ss_family == AF_INET ? "inet" : "inet6",
		    r->rl_conf.dstaf.ss_family == AF_INET ? "IPv4" : "IPv6",
		    print_host(&listen_ss[i], hbuf, sizeof(hbuf)));
		relay_free(r);
		return (-1);
	}
	for (i = 0; (r->rl_conf.flags & F_ANNOUNCE) && i < nlisten; i++)
		if (announce_check("relay", r->rl_conf.name,
		    &listen_ss[i]) == -1) {
			relay_free(r);
			return (-1);
		}
	if (r->rl_proto == NULL) {
		r->rl_proto = &conf->sc_proto_default;
		r->rl_conf.proto = conf->sc_proto_default.id;
	}
	if (r->rl_proto->type == RELAY_PROTO_DNS && relay_dnscheck(r) == -1) {
		relay_free(r);
		return (-1);
	}
	if (relay_limitcheck(r) == -1) {
		relay_free(r);
		return (-1);
	}
	r->rl_conf.ss = listen_ss[0];
	r->rl_conf.port = listen_port[0];
	if (listen_tls[0])
		r->rl_conf.flags |= F_TLS;
	relay_ppfrom(r, 0);
	if (relay_findbyaddr(conf, &r->rl_conf) != NULL) {
		yyerror("relay %s or listener defined twice",
		    r->rl_conf.name);
		relay_free(r);
		return (-1);
	}
	TAILQ_INSERT_TAIL(conf->sc_relays, r, rl_entry);
	if (relay_tls_load(r) == -1)
		return (-1);
	for (i = 1; i < nlisten; i++)
		if (relay_clone(r, &listen_ss[i], listen_port[i], i) == -1)
			return (-1);
	return (0);
}

/* The limits per source of a relay: what they need, and agreement. */
static int
relay_limitcheck(struct relay *r)
{
	struct relay_limits	*l = &r->rl_conf.lim, *o;
	struct relay		*other;
	int			 i;

	if (RELAY_REQLIMITED(l) && r->rl_proto->type != RELAY_PROTO_HTTP &&
	    r->rl_proto->type != RELAY_PROTO_DNS) {
		yyerror("relay %s: max-src-request-rate counts the requests "
		    "of an http protocol or the queries of a dns one",
		    r->rl_conf.name);
		return (-1);
	}
	for (i = 0; i < nlisten && (RELAY_LIMITED(l) || RELAY_REQLIMITED(l));
	    i++)
		if (listen_ss[i].ss_family == AF_UNIX) {
			yyerror("relay %s: a unix socket listener has no "
			    "source address to limit", r->rl_conf.name);
			return (-1);
		}
	if (!RELAY_LIMITED(l)) {
		if (l->lim_overload[0] != '\0') {
			yyerror("relay %s: overload <%s> without max-src-conn "
			    "or max-src-conn-rate", r->rl_conf.name,
			    l->lim_overload);
			return (-1);
		}
		return (0);
	}
	if (r->rl_proto->type == RELAY_PROTO_DNS) {
		yyerror("relay %s: max-src-conn and max-src-conn-rate count "
		    "TCP connections, not a dns relay's queries",
		    r->rl_conf.name);
		return (-1);
	}
	if (l->lim_overload[0] == '\0')
		return (0);
	TAILQ_FOREACH(other, conf->sc_relays, rl_entry) {
		o = &other->rl_conf.lim;
		if (strcmp(o->lim_overload, l->lim_overload) != 0 ||
		    (o->lim_expire == l->lim_expire &&
		    o->lim_prefix4 == l->lim_prefix4 &&
		    o->lim_prefix6 == l->lim_prefix6))
			continue;
		yyerror("relay %s: overload <%s> with another expire or "
		    "src-prefix than relay %s", r->rl_conf.name,
		    l->lim_overload, other->rl_conf.name);
		return (-1);
	}
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
