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

#ifndef RELAYD_H
#define RELAYD_H

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/time.h>

#include <netinet/in.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <pwd.h>
#include <event.h>

#include "compat/compat.h"
#include "compat/imsg.h"
#include "splice.h"

#define RELAYD_VERSION		"0.1.0"
#ifndef CONF_FILE
#define CONF_FILE		"/etc/relayd.conf"
#endif
#define AGENTX_PATH		"/var/agentx/master"
#ifndef TLS_CERT_DIR
#define TLS_CERT_DIR		"/etc/ssl"	/* NAME.crt, private/NAME.key */
#endif
#define TLS_TICKET_REKEY	1800		/* a new ticket key, seconds */
#define TLS_SESSION_LIFETIME	7200		/* how long a ticket is good */
#define TLS_TICKET_KEYS		4		/* kept: a lifetime's worth */
#define TLS_PRIV_TIMEOUT	1000		/* ms for an answer of ca */
#define DEMOTE_GROUP_SIZE	16		/* carp's interface groups */
#define RELAY_HEARTBEAT_MS	200		/* a child's heartbeat */
#define RELAY_HEARTBEAT_DEAD_MS	600		/* without one: silent */
#define PROC_DISPATCH_MS	50		/* imsgs, then the loop turns */
#ifndef DEMOTE_DIR
#define DEMOTE_DIR		"/run/relayd/demote"
#endif
#define TLS_MAXJOBS		64		/* handshakes paused for ca */
#define TLS_HASH_SIZE		72		/* "SHA256:" + 64 hex + NUL */
#ifndef RELAYD_SOCKET
#define RELAYD_SOCKET		"/var/run/relayd.sock"
#endif
#ifndef RELAYD_USER
#define RELAYD_USER		"_relayd"
#endif

#define CHECK_INTERVAL		10
#define CHECK_TIMEOUT		200
#define RELAY_TIMEOUT		600
#define RELAY_BACKLOG		10
#define RELAY_DNS_RCVBUF	(1024 * 1024)	/* a dns relay's receive buffer */
#define RELAY_MAXBACKLOG	512
#define RELAY_NUMPROC		3
#define RELAY_PPFROM_MAX	16	/* proxy-protocol from addresses */
#define RELAY_PPFROM_ALL	-1	/* every peer of a unix listener */
#define RELAY_SUN_MODE		0666	/* a unix listener, as a TCP one */
#define RELAY_STATINTERVAL	60
#define RELAY_TRIM_PEAK		64	/* sessions and links: a peak to trim */
#define RELAY_MAXPROTOTTL	255
#define PROC_MAX_INSTANCES	32
#define FD_RESERVE		5
#define FD_NEEDED		6
#define SRV_NAME_SIZE		64
#define TABLE_NAME_SIZE		64
#define MAX_NAME_SIZE		64
#define RELAYD_HOSTNAME_MAX	255

#define PROC_PARENT_SOCK_FILENO	3

typedef uint32_t		 objid_t;
#define EMPTY_ID		 UINT32_MAX

/*
 * Messages.  Adding one is one entry here and one case in the dispatcher
 * of the process that receives it.
 */
enum imsg_type {
	IMSG_NONE,
	IMSG_CTL_OK,			/* answer to relayctl */
	IMSG_CTL_FAIL,
	IMSG_CTL_END,
	IMSG_CTL_VERBOSE,
	IMSG_CTL_PROCFD,		/* parent -> child: socket to a peer */
	IMSG_CTL_SOCKFD,		/* parent -> pfe: control socket */
	IMSG_CTL_METRICSFD,		/* parent -> pfe: metrics listener */
	IMSG_CTL_PROCINFO,		/* parent -> pfe: who runs where */
	IMSG_CTL_RESET,			/* parent -> children: purge config */
	IMSG_CTL_START,			/* parent -> children: go live */
	IMSG_CTL_RELOAD,		/* pfe -> parent: reload (path) */
	IMSG_CTL_RELOAD_BUSY,		/* parent -> relayctl: reload under way */
	IMSG_CTL_SHUTDOWN,
	IMSG_CTL_NOTIFY,		/* relayctl monitor */
	IMSG_CTL_SHOW_SUM,
	IMSG_CTL_STATUS,
	IMSG_CTL_STATUS_INFO,
	IMSG_CTL_RELAY,
	IMSG_CTL_TABLE,
	IMSG_CTL_HOST,
	IMSG_CTL_PROC,
	IMSG_CTL_POLL,
	IMSG_CTL_HOST_ENABLE,
	IMSG_CTL_HOST_DISABLE,
	IMSG_CTL_TABLE_ENABLE,
	IMSG_CTL_TABLE_DISABLE,
	IMSG_CTL_SESSION,
	IMSG_CFG_GLOBAL,
	IMSG_CFG_TABLE,
	IMSG_CFG_HOST,
	IMSG_CFG_PROTO,
	IMSG_CFG_RULE,			/* of the protocol sent last */
	IMSG_CFG_RELAY,
	IMSG_CFG_RELAY_TABLE,
	IMSG_CFG_RELAY_FD,
	IMSG_CFG_DONE,
	IMSG_STATISTICS,
	IMSG_HOST_STATUS,		/* hce -> pfe -> relays */
	IMSG_SPLICE_ENGINE,		/* relay -> pfe: the engine in use */
	IMSG_SCRIPT,			/* hce <-> parent */
	IMSG_CFG_RELAY_CERT,		/* parent -> relay, ca: TLS files */
	IMSG_CA_PRIVENC,		/* relay <-> ca: RSA sign */
	IMSG_CA_PRIVDEC,		/* relay <-> ca: RSA decrypt */
	IMSG_CA_ECDSA,			/* relay <-> ca: ECDSA sign */
	IMSG_CA_CERT,			/* relay <-> ca: inspection cert */
	IMSG_TLSTICKET_REKEY,		/* parent -> relay: ticket key */
	IMSG_BINDANY,			/* relay <-> parent: a transparent
					   socket */
	IMSG_UNIXCONNECT,		/* relay, hce <-> parent: a socket
					   connected to a unix-socket backend */
	IMSG_CFG_RDR,			/* parent -> pfe: a redirection */
	IMSG_CFG_ROUTER,		/* parent -> pfe: a router */
	IMSG_RDR_SYNC,			/* pfe -> parent: its hosts up */
	IMSG_ROUTER_SYNC,		/* pfe -> parent: its gateways up */
	IMSG_RDR_STATS,			/* parent -> pfe: kernel counters */
	IMSG_CTL_RDR,			/* pfe -> relayctl */
	IMSG_CTL_ROUTER,		/* pfe -> relayctl */
	IMSG_CTL_RDR_ENABLE,
	IMSG_CTL_RDR_DISABLE,
	IMSG_AGENTX_SOCK,		/* pfe <-> parent: the master's socket */
	IMSG_KEYOP_STATS,		/* relay -> pfe: its ca round trips */
	IMSG_DEMOTE,			/* pfe -> parent: a group's count */
	IMSG_ANNOUNCE,			/* pfe -> parent: can an address be
					   announced (ctl_announce) */
	IMSG_CTL_DEMOTE,		/* pfe -> relayctl: the same */
	IMSG_CTL_ANNOUNCE,		/* pfe -> relayctl: an address, and
					   whether it is announced */
	IMSG_HEARTBEAT,			/* relay -> parent: its instance,
					   every second */
	IMSG_CTL_STALLED,		/* parent -> pfe: a process stops or
					   starts answering */
	IMSG_LOG_LINE,			/* child -> parent: a syslog line
					   its own socket did not take */
	IMSG_LOG_RECONNECT,		/* the same, and a socket asked */
	IMSG_LOG_SOCKET,		/* parent -> child: a new one */
	IMSG_CTL_DENIED,		/* pfe -> relayctl: not permitted on
					   the restricted socket */
	IMSG_LIMIT_FLUSH,		/* parent -> relay: a source went
					   into an overload ... flush table */
	IMSG_LIMIT_STATS,		/* parent -> pfe: what nftables
					   refused, per relay */
	IMSG_CTL_OVERLOAD,		/* relayctl show overload: the
					   sources in overload tables */
	IMSG_CTL_OVERLOAD_DEL,		/* relayctl overload delete|flush */
	IMSG_MAX
};

enum privsep_procid {
	PROC_PARENT = 0,
	PROC_PFE,
	PROC_HCE,
	PROC_RELAY,
	PROC_CA,
	PROC_MAX
};

struct privsep;
struct privsep_proc;

struct imsgev {
	struct imsgbuf		 ibuf;
	void			(*handler)(int, short, void *);
	struct event		 ev;
	struct event		 ev_more;	/* the rest of a batch */
	struct privsep_proc	*proc;
	void			*data;
	short			 events;
	enum privsep_procid	 peer;
	unsigned int		 instance;
};

#define IMSG_SIZE_CHECK(imsg, p) do {					\
	if (IMSG_DATA_SIZE(imsg) < sizeof(*p))				\
		fatalx("%s: bad length imsg received (%s)", __func__,	\
		    imsg_type_name((imsg)->hdr.type));			\
} while (0)
#define IMSG_EXACT_SIZE_CHECK(imsg, p) do {				\
	if (IMSG_DATA_SIZE(imsg) != sizeof(*p))				\
		fatalx("%s: bad length imsg received (%s)", __func__,	\
		    imsg_type_name((imsg)->hdr.type));			\
} while (0)
#define IMSG_DATA_SIZE(imsg)	((imsg)->hdr.len - IMSG_HEADER_SIZE)

struct privsep_proc {
	const char		*p_title;
	enum privsep_procid	 p_id;
	int			(*p_cb)(int, struct privsep_proc *,
				    struct imsg *);
	void			(*p_run)(struct privsep *,
				    struct privsep_proc *);
	struct privsep		*p_ps;
};

struct privsep {
	struct imsgev		*ps_ievs[PROC_MAX][PROC_MAX_INSTANCES];
	unsigned int		 ps_instances[PROC_MAX];
	pid_t			 ps_pids[PROC_MAX][PROC_MAX_INSTANCES];
	enum privsep_procid	 ps_id;
	unsigned int		 ps_instance;
	const char		*ps_title;
	struct passwd		*ps_pw;
	int			 ps_debug;
	int			 ps_verbose;
	int			 ps_csock;
	gid_t			 ps_csock_gid;
	struct relayd		*ps_env;
	struct privsep_proc	*ps_procs;
	unsigned int		 ps_nprocs;
	char			 ps_execpath[PATH_MAX];
	int			 ps_argc;
	char			**ps_argv;
	struct event		 ps_evsigint;
	struct event		 ps_evsigterm;
	struct event		 ps_evsighup;
	struct event		 ps_evsigpipe;
	struct event		 ps_evsigusr1;
	struct event		 ps_evsigchld;
};

struct ctl_procfd {
	enum privsep_procid	 cp_id;
	unsigned int		 cp_instance;
};

/* What pfe is told of every process, for relayctl status. */
struct ctl_procinfo {
	enum privsep_procid	 pi_id;
	unsigned int		 pi_instance;
	pid_t			 pi_pid;
	char			 pi_title[16];
	int			 pi_silent;	/* no heartbeat lately */
};

/* A relayctl argument: an id, or a name */
struct ctl_id {
	objid_t			 id;
	char			 name[MAX_NAME_SIZE];
};

/* Addresses and ports */
struct portrange {
	in_port_t		 val[2];
	uint8_t			 op;
};

/* Global configuration, as sent to every process */
struct relayd_config {
	struct timeval		 interval;
	struct timeval		 timeout;
	unsigned int		 prefork_relay;
	uint32_t		 opts;
	uint32_t		 flags;
	int			 splice_engine;
	char			 socket[PATH_MAX];
	char			 rsocket[108];		/* restricted: sun_path */
	char			 demote_dir[256];	/* a file per group */
	int			 announce_table;	/* announce: routes' */
	char			 tlsdir[PATH_MAX];	/* tls directory */
	char			 agentx_context[32];
	char			 agentx_path[108];	/* sun_path */
	struct sockaddr_storage	 metrics_ss;	/* metrics listen on */
};

#define RELAYD_OPT_VERBOSE	0x01
#define RELAYD_OPT_NOACTION	0x04
#define RELAYD_OPT_LOGUPDATE	0x08
#define RELAYD_OPT_LOGHOSTCHECK	0x10
#define RELAYD_OPT_LOGCON	0x20
#define RELAYD_OPT_LOGCONERR	0x40
#define RELAYD_OPT_LOGNOTIFY	(RELAYD_OPT_LOGUPDATE | \
				    RELAYD_OPT_LOGHOSTCHECK)
#define RELAYD_OPT_LOGALL	(RELAYD_OPT_LOGNOTIFY | \
				    RELAYD_OPT_LOGCON | RELAYD_OPT_LOGCONERR)

/* Object flags */
#define F_DISABLE		0x00000001
#define F_BACKUP		0x00000002
#define F_USED			0x00000004
#define F_DOWN			0x00000008
#define F_ADD			0x00000010
#define F_DEL			0x00000020
#define F_CHANGED		0x00000040
#define F_ACTIVE_RULESET	0x00000080
#define F_CHECK_SENT		0x00000100
#define F_CHECK_DONE		0x00000200
#define F_PORT			0x00000400
#define F_TLS			0x00000800
#define F_TLSCLIENT		0x00001000
#define F_NEEDPF		0x00002000
#define F_STICKY		0x00004000
#define F_RETRY			0x00008000
#define F_DEMOTE		0x00010000
#define F_PARENT		0x00020000
#define F_HASHKEY		0x00040000
#define F_NATLOOK		0x00080000
#define F_DIVERT		0x00100000
#define F_TRANSPARENT		0x00200000
#define F_RETURN		0x00400000
#define F_AGENTX		0x00800000
#define F_TLSINSPECT		0x01000000
#define F_PROXYV1		0x02000000	/* forward ... proxy-protocol */
#define F_PROXYV2		0x04000000
#define F_ANNOUNCE		0x08000000	/* relay, redirect: announce */

/* Host check types (issue: health checks) */
enum table_check {
	CHECK_NOCHECK		= 0,
	CHECK_ICMP		= 1,
	CHECK_TCP		= 2,
	CHECK_HTTP_CODE		= 3,
	CHECK_HTTP_DIGEST	= 4,
	CHECK_SEND_EXPECT	= 5,
	CHECK_BINSEND_EXPECT	= 6,
	CHECK_SCRIPT		= 7,
	CHECK_HTTP2_CODE	= 8	/* an extension: h2c, :status */
};

enum host_status {
	HOST_DOWN		= -1,
	HOST_UNKNOWN		= 0,
	HOST_UP			= 1
};
#define HOST_ISUP(x)		((x) == HOST_UP)

enum host_error {
	HCE_NONE = 0,
	HCE_ABORT,
	HCE_INTERVAL_TIMEOUT,
	HCE_ICMP_OK,
	HCE_ICMP_READ_TIMEOUT,
	HCE_ICMP_WRITE_TIMEOUT,
	HCE_TCP_SOCKET_ERROR,
	HCE_TCP_SOCKET_LIMIT,
	HCE_TCP_SOCKET_OPTION,
	HCE_TCP_CONNECT_FAIL,
	HCE_TCP_CONNECT_TIMEOUT,
	HCE_TCP_CONNECT_OK,
	HCE_TCP_WRITE_TIMEOUT,
	HCE_TCP_WRITE_FAIL,
	HCE_TCP_READ_TIMEOUT,
	HCE_TCP_READ_FAIL,
	HCE_SCRIPT_OK,
	HCE_SCRIPT_FAIL,
	HCE_TLS_CONNECT_ERROR,
	HCE_TLS_CONNECT_FAIL,
	HCE_TLS_CONNECT_OK,
	HCE_TLS_CONNECT_TIMEOUT,
	HCE_TLS_READ_TIMEOUT,
	HCE_TLS_WRITE_TIMEOUT,
	HCE_TLS_READ_ERROR,
	HCE_TLS_WRITE_ERROR,
	HCE_SEND_EXPECT_FAIL,
	HCE_SEND_EXPECT_OK,
	HCE_HTTP_CODE_ERROR,
	HCE_HTTP_CODE_FAIL,
	HCE_HTTP_CODE_OK,
	HCE_HTTP_DIGEST_ERROR,
	HCE_HTTP_DIGEST_FAIL,
	HCE_HTTP_DIGEST_OK
};

#define DIGEST_NONE		0
#define DIGEST_SHA1		1
#define DIGEST_MD5		2

#define TABLE_EXBUF_SIZE	258	/* 128 bytes of binary expect, in hex */

enum forwardmode {
	RELAY_DSTMODE_LOADBALANCE = 0,
	RELAY_DSTMODE_ROUNDROBIN,
	RELAY_DSTMODE_HASH,
	RELAY_DSTMODE_SRCHASH,
	RELAY_DSTMODE_LEASTSTATES,
	RELAY_DSTMODE_RANDOM
};
#define RELAY_DSTMODE_DEFAULT	RELAY_DSTMODE_ROUNDROBIN

struct host_config {
	objid_t			 id;
	objid_t			 parentid;
	objid_t			 tableid;
	int			 retry;
	char			 name[RELAYD_HOSTNAME_MAX + 1];
	struct sockaddr_storage	 ss;
	int			 ttl;
	int			 priority;
};

struct host {
	TAILQ_ENTRY(host)	 entry;
	TAILQ_ENTRY(host)	 globalentry;
	struct host_config	 conf;
	uint32_t		 flags;
	char			*tablename;
	int			 up;
	int			 last_up;
	unsigned long		 check_cnt;
	unsigned long		 up_cnt;
	int			 retry_cnt;
	int			 idx;
	enum host_error		 he;
	int			 code;		/* http code of the last check */
	uint64_t		 check_us;	/* how long it took */
	struct timeval		 check_start;
	struct check_event	*cte;		/* hce: the check under way */
};
TAILQ_HEAD(hostlist, host);

/* hce -> pfe -> relays: the outcome of a check */
struct ctl_hoststatus {
	objid_t			 id;
	int			 up;
	int			 retry_cnt;
	unsigned long		 check_cnt;
	unsigned long		 up_cnt;
	enum host_error		 he;
	int			 code;
	uint64_t		 check_us;	/* the check's duration */
};

/* hce <-> parent: check script */
struct ctl_script {
	objid_t			 host;
	int			 retval;
	struct timeval		 timeout;
	char			 name[RELAYD_HOSTNAME_MAX + 1];
	char			 path[PATH_MAX];
};

struct table_config {
	objid_t			 id;
	objid_t			 rdrid;
	uint32_t		 flags;
	int			 check;
	struct timeval		 timeout;
	in_port_t		 port;
	int			 retcode;
	int			 skip_cnt;
	char			 name[TABLE_NAME_SIZE];
	char			 path[PATH_MAX];
	char			 exbuf[TABLE_EXBUF_SIZE];
	char			 digest[41];
	int			 digest_type;
	/* check http(s) ... host: the Host header, and https's SNI */
	char			 host[RELAYD_HOSTNAME_MAX + 1];
	enum forwardmode	 fwdmode;
	char			 demote_group[DEMOTE_GROUP_SIZE];
};

struct table {
	TAILQ_ENTRY(table)	 entry;
	struct table_config	 conf;
	int			 up;
	int			 skipped;
	struct hostlist		 hosts;
	char			*sendbuf;
	size_t			 sendbuf_len;
};
TAILQ_HEAD(tablelist, table);

/*
 * Redirections (nftables on Linux) and routers (rtnetlink on Linux).
 * pfe keeps their state; the parent, which holds CAP_NET_ADMIN, puts
 * them in the kernel.
 */
#define RDR_MAXVIRTS		16
#define RDR_MAXHOSTS		1024	/* hosts a redirection sends to */
#define ROUTER_MAXROUTES	32
#define ROUTER_MAXGATEWAYS	64	/* nexthops of a multipath route */
#define RDR_CTMARK		0x72640000	/* + id: a redirection's flows */
#define RDR_TAGMARK		0x72650000	/* + n: pftag's packet mark */
#define RDR_STATINTERVAL	2	/* s between kernel counter reads */
#define ROUTER_PROTO		201	/* route protocol without rtlabel */
#define ROUTER_PROTO_LABEL	202	/* the first rtlabel's */
#define ROUTER_PROTO_MAX	249
#define ANNOUNCE_PROTO		250	/* announce: the routes' protocol */
#define ANNOUNCE_TABLE		250	/* and their table, by default */
#define ROUTER_BUCKETS		512	/* a resilient group's, by default */
#define ROUTER_BUCKET_IDLE	120	/* s a bucket idles to move, default */

struct rdr_virt {
	struct sockaddr_storage	 ss;
	in_port_t		 port;		/* host order */
	in_port_t		 port_high;	/* a range's last, or 0 */
	int			 proto;
	int			 pflog;
	char			 ifname[16];
};

struct rdr_config {
	objid_t			 id;
	uint32_t		 flags;		/* F_DISABLE, F_STICKY */
	objid_t			 table;
	objid_t			 backup;
	int			 mode;
	in_port_t		 port;		/* of the hosts, host order */
	int			 timeout;	/* session timeout, s */
	int			 tagmatch;	/* match pftag */
	uint32_t		 tagmark;	/* pftag's mark, or 0 */
	uint32_t		 seed;		/* source-hash */
	char			 name[MAX_NAME_SIZE];
	char			 tag[64];
	char			 routeif[16];	/* route to: the hosts' side */
	int			 nvirts;
	struct rdr_virt		 virts[RDR_MAXVIRTS];
};

enum rdr_state {
	RDR_DOWN = 0,
	RDR_ACTIVE,
	RDR_BACKUP		/* active, by its backup table */
};

/* pfe -> parent: the hosts a redirection or router uses now */
struct ctl_kernsync {
	objid_t			 id;
	int			 state;		/* enum rdr_state */
	unsigned int		 nhosts;
	objid_t			 hosts[RDR_MAXHOSTS];
};

/* parent -> pfe: what the kernel counted */
struct ctl_rdrstats {
	objid_t			 id;
	uint64_t		 sessions;	/* connections redirected */
	uint64_t		 packets;	/* of those, both ways */
	uint64_t		 bytes;
	uint64_t		 states;	/* conntrack entries now */
};

/* pfe: a redirection's last and average connections, as a relay's */
struct rdr_rate {
	uint64_t		 cnt;		/* the total at the last tick */
	uint64_t		 interval;
	uint64_t		 last;
	uint64_t		 avg;
	uint64_t		 last_hour;
	uint64_t		 avg_hour;
	uint64_t		 last_day;
	uint64_t		 avg_day;
};

struct rdr {
	TAILQ_ENTRY(rdr)	 entry;
	struct rdr_config	 conf;
	enum rdr_state		 state;		/* pfe */
	struct ctl_rdrstats	 stats;		/* pfe */
	struct rdr_rate		 rate;		/* pfe */
	time_t			 rate_next;	/* pfe: the next interval */
	struct ctl_kernsync	 ks;		/* pfe: sent, parent: applied */
	struct sockaddr_storage	*rd_init;	/* parent: the hosts its rules */
	unsigned int		 rd_ninit;	/* start with at a reload */
};
TAILQ_HEAD(rdrlist, rdr);

struct router_config {
	objid_t			 id;
	uint32_t		 flags;		/* F_DISABLE */
	objid_t			 table;
	int			 rtable;	/* 0: main */
	int			 af;
	int			 proto;		/* route protocol */
	char			 name[MAX_NAME_SIZE];
	char			 label[64];
	int			 nroutes;
	struct sockaddr_storage	 routes[ROUTER_MAXROUTES];
	int			 prefixlen[ROUTER_MAXROUTES];
	int			 buckets;	/* of its resilient groups */
	int			 bucket_idle;	/* seconds idle before moving */
};

struct router {
	TAILQ_ENTRY(router)	 entry;
	struct router_config	 conf;
	struct ctl_kernsync	 ks;		/* pfe: sent, parent: applied */
};
TAILQ_HEAD(routerlist, router);

/* Protocols */
enum prototype {
	RELAY_PROTO_TCP		= 0,
	RELAY_PROTO_HTTP,
	RELAY_PROTO_DNS
};

#define TCPFLAG_NODELAY		0x01
#define TCPFLAG_NNODELAY	0x02
#define TCPFLAG_SACK		0x04
#define TCPFLAG_NSACK		0x08
#define TCPFLAG_BUFSIZ		0x10
#define TCPFLAG_IPTTL		0x20
#define TCPFLAG_IPMINTTL	0x40
#define TCPFLAG_NSPLICE		0x80
#define TCPFLAG_DEFAULT		0x00

#define TLSFLAG_SSLV3			0x01
#define TLSFLAG_TLSV1_0			0x02
#define TLSFLAG_TLSV1_1			0x04
#define TLSFLAG_TLSV1_2			0x08
#define TLSFLAG_TLSV1_3			0x10
#define TLSFLAG_TLSV1			(TLSFLAG_TLSV1_2 | TLSFLAG_TLSV1_3)
#define TLSFLAG_CIPHER_SERVER_PREF	0x20
#define TLSFLAG_CLIENT_RENEG		0x40
/* the versions libtls still speaks: at least one must be left */
#define TLSFLAG_VERSION			(TLSFLAG_TLSV1_2 | TLSFLAG_TLSV1_3)
#define TLSFLAG_DEFAULT \
	(TLSFLAG_TLSV1_2 | TLSFLAG_TLSV1_3 | TLSFLAG_CIPHER_SERVER_PREF)
#define TLSCIPHERS_DEFAULT		"HIGH:!aNULL"
#define TLSECDHECURVES_DEFAULT		"default"
#define TLSDHPARAM_DEFAULT		"none"

#define HTTPFLAG_WEBSOCKETS		0x01
#define HTTPFLAG_HTTP2			0x02	/* ALPN h2 on TLS (ours) */
#define HTTPFLAG_H2BACKEND		0x04	/* backends speak h2 (ours) */
#define RELAY_H2B_STREAMS		100	/* a backend connection's */
#define RELAY_H2B_CONNS			2	/* a process's, to a host */
#define RELAY_H2B_CONNS_MAX		64
#define RELAY_H2B_IDLE			60	/* s an idle one is kept */
#define RELAY_H2STREAMS			100	/* http2 streams at once */
#define RELAY_H2STREAMS_MAX		1000
#define RELAY_H2PIPELINE		1	/* requests on the backend */
#define RELAY_H2PIPELINE_MAX		100
#define RELAY_H2CONNS		0	/* backend connections: 0, as many
					   as http2 streams */
#define RELAY_H2CONNS_MAX		1000
#define RELAY_DEFHEADERLENGTH		8192
#define RELAY_MAXHEADERLENGTH		131072
#define RELAY_HEADTIMEOUT		30	/* s for a request head */
#define RELAY_READ_SIZE			(64 * 1024)	/* one read of a side */
#define RELAY_READ_FIRST		(8 * 1024)	/* the first read's */

/* Filter rules of a protocol (parsed; evaluated by the HTTP relay) */
enum rule_action {
	RULE_ACTION_MATCH = 0,
	RULE_ACTION_PASS,
	RULE_ACTION_BLOCK
};

enum rule_dir {
	RELAY_DIR_REQUEST = 0,		/* client to backend */
	RELAY_DIR_RESPONSE		/* backend to client */
};

enum key_type {
	KEY_TYPE_NONE = 0,
	KEY_TYPE_COOKIE,
	KEY_TYPE_HEADER,
	KEY_TYPE_PATH,
	KEY_TYPE_QUERY,
	KEY_TYPE_URL,
	KEY_TYPE_MAX
};

enum key_option {
	KEY_OPTION_NONE = 0,
	KEY_OPTION_APPEND,
	KEY_OPTION_SET,
	KEY_OPTION_REMOVE,
	KEY_OPTION_HASH,
	KEY_OPTION_LOG,
	KEY_OPTION_STRIP
};

/* How a rule's key or value matches: glob, glob ignorecase, pattern */
enum kv_match {
	KV_MATCH_DEFAULT = 0,		/* the key type's own */
	KV_MATCH_GLOB,
	KV_MATCH_GLOB_ICASE,
	KV_MATCH_PATTERN		/* patterns(7), case-sensitive */
};

struct rule_kv {
	int			 kv_set;
	enum key_option		 kv_option;
	int			 kv_keymatch;	/* enum kv_match */
	int			 kv_valmatch;
	int			 kv_digest;	/* DIGEST_* for url digest */
	char			*kv_key;	/* NULL: any */
	char			*kv_value;	/* NULL: any */
};

struct rule_addr {
	struct sockaddr_storage	 addr;
	int			 prefixlen;
};

#define RULE_FLAG_QUICK		0x01
#define RULE_FLAG_LOG		0x02	/* pass log, block log */
#define RULE_SETNAME_SIZE	64
#define RULE_NO			(-1)	/* no tag, no label */

struct relay_rule {
	objid_t			 rule_id;
	enum rule_action	 rule_action;
	enum rule_dir		 rule_dir;
	int			 rule_flags;
	int			 rule_af;
	struct rule_addr	 rule_src;
	struct rule_addr	 rule_dst;
	int			 rule_method;	/* index + 1, 0: any */
	struct rule_kv		 rule_kv[KEY_TYPE_MAX];
	char			 rule_tablename[TABLE_NAME_SIZE];
	int			 rule_tag;	/* 1 set, RULE_NO: no tag */
	char			 rule_tagname[RULE_SETNAME_SIZE];
	char			 rule_taggedname[RULE_SETNAME_SIZE];
	int			 rule_label;	/* 1 set, RULE_NO: no label */
	char			 rule_labelname[RULE_SETNAME_SIZE];
	int			 rule_lineno;
	TAILQ_ENTRY(relay_rule)	 rule_entry;
};
TAILQ_HEAD(relay_rules, relay_rule);

struct keyname {
	char			*name;
	TAILQ_ENTRY(keyname)	 entry;
};
TAILQ_HEAD(keynamelist, keyname);

/*
 * The pointers and lists below are the parser's: they are not sent to
 * the children (config_getproto() clears them there).
 */
struct protocol {
	objid_t			 id;
	uint32_t		 flags;
	uint32_t		 tcpflags;
	int			 tcpbufsiz;
	int			 tcpbacklog;
	uint8_t			 tcpipttl;
	uint8_t			 tcpipminttl;
	enum prototype		 type;
	char			 name[MAX_NAME_SIZE];
	uint32_t		 tlsflags;
	int			 tickets;
	int			 httpheaderlen;
	int			 httpheadtimeout; /* s, a request head's (ours) */
	uint32_t		 httpflags;
	int			 httpstreams;	/* http2 streams at once */
	int			 httppipeline;	/* their requests at once */
	int			 httpconns;	/* backend connections */
	int			 h2bstreams;	/* http2 backend: streams, */
	int			 h2bconns;	/* connections to a host, */
	int			 h2bidle;	/* s idle ones are kept */
	char			*tlsciphers;
	char			*tlsdhparams;
	char			*tlsecdhecurves;
	char			*tlsca;
	char			*tlscacert;
	char			*tlscakey;
	char			*tlscapass;
	char			*tlsclientca;
	char			*tlsclientcrl;
	char			*style;
	struct keynamelist	 tlscerts;
	struct relay_rules	 rules;
	TAILQ_ENTRY(protocol)	 entry;
};
TAILQ_HEAD(protolist, protocol);
#define PROTO_NSTR		4	/* strings sent with a protocol */

/* Relays */
/*
 * Limits per client source (max-src-conn, max-src-conn-rate, overload):
 * nftables enforces them where the parent can (lim_kernel), the relay
 * processes, each for itself, where it cannot (relay_limit.c).
 */
struct relay_limits {
	uint32_t		 lim_maxconn;	/* sessions at once; 0: none */
	uint32_t		 lim_rate;	/* new connections ... */
	uint32_t		 lim_rateint;	/* ... per so many s; 0: none */
	char			 lim_overload[TABLE_NAME_SIZE]; /* "": none */
	int			 lim_flush;	/* overload ends its sessions */
	uint32_t		 lim_expire;	/* s in the overload table */
	uint8_t			 lim_prefix4;	/* sources grouped by prefix */
	uint8_t			 lim_prefix6;
	int			 lim_kernel;	/* the parent installed them */
	uint32_t		 lim_req;	/* http requests ... */
	uint32_t		 lim_reqint;	/* ... per so many s; 0: none */
	uint32_t		 lim_reqburst;	/* at once, after a pause */
	int			 lim_steered;	/* a source, one relay process */
};
#define RELAY_LIMIT_EXPIRE	600	/* overload: refused for 10 minutes */
#define RELAY_LIMIT_PREFIX6	64	/* IPv6 sources: a /64 is one */
#define RELAY_LIMITED(l)	((l)->lim_maxconn > 0 || (l)->lim_rateint > 0)
#define RELAY_REQLIMITED(l)	((l)->lim_reqint > 0)
/* a dns relay's query rate: nftables drops what goes over it */
#define RELAY_QUERYLIMITED(r)	(RELAY_REQLIMITED(&(r)->rl_conf.lim) && \
	(r)->rl_proto != NULL && (r)->rl_proto->type == RELAY_PROTO_DNS)
/* limits the parent puts in nftables */
#define RELAY_KLIMITED(r)	(RELAY_LIMITED(&(r)->rl_conf.lim) || \
	RELAY_QUERYLIMITED(r))
#define RELAY_LIMIT_SOURCES	65536	/* sources counted a set */
#define RELAY_LIMIT_HOLD_MS	1000	/* a refused session waits */

/* Why a connection was refused by its source's limits */
enum relay_lim {
	RELAY_LIM_CONN = 0,		/* max-src-conn */
	RELAY_LIM_RATE,			/* max-src-conn-rate */
	RELAY_LIM_OVERLOAD,		/* in the overload table */
	RELAY_LIM_REQUEST,		/* max-src-request-rate (429) */
	RELAY_LIM_MAX
};

/* parent -> pfe: a relay's connections nftables refused, and why */
struct ctl_limstats {
	objid_t			 id;
	uint64_t		 refused[RELAY_LIM_MAX];
};

/*
 * A source in an overload table, as relayctl show overload lists it
 * (pid 0: nftables has it, else that relay process); to relayctl
 * overload delete, af 0 means every source of the table.
 */
struct ctl_overload {
	char			 table[TABLE_NAME_SIZE];
	int			 af;
	uint8_t			 addr[16];
	uint8_t			 prefix;
	uint32_t		 expires;	/* in so many seconds */
	pid_t			 pid;
};

/* parent -> relay: a source in an overload table (its masked address) */
struct ctl_limflush {
	char			 table[TABLE_NAME_SIZE];
	int			 af;
	uint8_t			 addr[16];
};

struct relay_config {
	objid_t			 id;
	uint32_t		 flags;
	objid_t			 proto;
	char			 name[MAX_NAME_SIZE];
	in_port_t		 port;
	in_port_t		 dstport;
	int			 dstretry;
	struct sockaddr_storage	 ss;
	struct sockaddr_storage	 dstss;
	struct timeval		 timeout;
	enum forwardmode	 fwdmode;
	struct sockaddr_storage	 dstaf;		/* forward ... inet|inet6 */
	uint8_t			 tls_sid[32];	/* TLS session id context */
	union {
		uint8_t		 key8[16];
		uint64_t	 key64[2];
	} hashkey;
	/* a unix-socket listener: its owner, group and mode */
	uid_t			 sun_uid;	/* -1: the parent's */
	gid_t			 sun_gid;
	mode_t			 sun_mode;
	/* listen on ... proxy-protocol from: who may send a header */
	int			 pp_nfrom;	/* RELAY_PPFROM_ALL: all */
	struct rule_addr	 pp_from[RELAY_PPFROM_MAX];
	/* when the first of its listener's certificates expires; 0: none */
	int64_t			 tls_notafter;
	struct relay_limits	 lim;
};

struct relay_table {
	struct table		*rlt_table;
	uint32_t		 rlt_flags;
	enum forwardmode	 rlt_mode;
	uint32_t		 rlt_index;
	struct host		**rlt_host;	/* the table's hosts, by idx */
	int			 rlt_nhosts;
	TAILQ_ENTRY(relay_table) rlt_entry;
};
TAILQ_HEAD(relaytables, relay_table);

struct ctl_relaytable {
	objid_t			 id;
	objid_t			 relayid;
	enum forwardmode	 mode;
	uint32_t		 flags;
};

struct ctl_relayfd {
	objid_t			 relayid;
	int			 type;
#define RELAY_FD_LISTEN		 0	/* the TCP (or unix) listener */
#define RELAY_FD_UDP		 1	/* a dns relay's datagram socket */
};

/* How sessions ended, for relayctl show metrics */
enum relay_end {
	RELAY_END_OK = 0,		/* an end that is no error */
	RELAY_END_ERROR,		/* failed, refused, reset, aborted */
	RELAY_END_TIMEOUT,		/* a timeout of any kind */
	RELAY_END_MAX
};

struct relay_stats {
	uint64_t		 interval;
	uint64_t		 cnt;
	uint64_t		 tick;
	uint64_t		 avg;
	uint64_t		 last;
	uint64_t		 avg_hour;
	uint64_t		 last_hour;
	uint64_t		 avg_day;
	uint64_t		 last_day;
	uint64_t		 active;
	uint64_t		 sessions;
	uint64_t		 requests;	/* http */
	uint64_t		 bytes[2][2];	/* [dir][spliced, copied] */
	uint64_t		 deferred;	/* accept stopped: no fds */
	uint64_t		 dropped;	/* dns: datagrams dropped */
	uint64_t		 ends[RELAY_END_MAX];	/* how sessions ended */
	uint64_t		 cfailed;	/* found no backend */
	uint64_t		 lim_refused[RELAY_LIM_MAX]; /* relay_limit.c */
	objid_t			 id;
	unsigned int		 proc;
};

/*
 * The TLS files of a relay, read by the parent: certificates (and OCSP
 * staples) go to the relays, private keys only to ca.
 */
enum relay_certtype {
	RELAY_CERT_CERT = 0,		/* a keypair's certificate (chain) */
	RELAY_CERT_KEY,			/* its private key: ca only */
	RELAY_CERT_OCSP,		/* its OCSP staple */
	RELAY_CERT_CA,			/* tls ca file: backends */
	RELAY_CERT_CLIENTCA,		/* tls client ca */
	RELAY_CERT_CRL,			/* tls client ca ... crl */
	RELAY_CERT_CACERT,		/* tls ca cert: inspection */
	RELAY_CERT_CAKEY,		/* tls ca key: ca only */
	RELAY_CERT_MAX
};

struct relay_cert {
	enum relay_certtype	 rc_type;
	int			 rc_index;	/* of the keypair */
	uint8_t			*rc_data;
	size_t			 rc_len;
	TAILQ_ENTRY(relay_cert)	 rc_entry;
};
TAILQ_HEAD(relay_certs, relay_cert);

/* One piece of a TLS file on its way (MAX_IMSGSIZE is small). */
struct ctl_relaycert {
	objid_t			 relayid;
	enum relay_certtype	 type;
	int			 index;
	size_t			 total;
	size_t			 offset;
};

/* transparent forward: a socket bound to the client's address */
struct ctl_bindany {
	objid_t			 id;		/* the session */
	uint32_t		 seq;		/* which try */
	unsigned int		 instance;	/* of the relay process */
	struct sockaddr_storage	 ss;		/* port 0 */
};

/*
 * A unix-socket backend: the relay and hce processes cannot reach its
 * path from their chroot, so the parent connects and passes the socket
 * (or none, with the errno).  It connects only to paths its
 * configuration names.
 */
struct ctl_unixconnect {
	objid_t			 id;		/* the session, or host */
	uint32_t		 seq;		/* which try */
	unsigned int		 instance;	/* of the relay process */
	int			 error;
	struct sockaddr_storage	 ss;
};

/* A session ticket key, parent -> relays */
struct ctl_ticketkey {
	uint32_t		 keyrev;
	unsigned char		 key[48];	/* TLS_TICKET_KEY_SIZE */
};

/* A private-key operation, relay -> ca and back. */
struct ctl_keyop {
	char			 hash[TLS_HASH_SIZE];
	uint32_t		 id;
	int			 padding;
	size_t			 len;		/* of the data that follows */
	int			 ret;		/* answer: length, -1 */
};

struct dns_session;

struct http_canned;
struct relay {
	TAILQ_ENTRY(relay)	 rl_entry;
	struct relay_config	 rl_conf;
	int			 rl_up;
	struct protocol		*rl_proto;
	int			 rl_s;
	int			 rl_unlink;	/* parent: its socket file */
	struct event		 rl_ev;
	struct event		 rl_evt;
	int			 rl_us;		/* dns: the datagram socket */
	struct event		 rl_uev;
	struct event		 rl_dnst;	/* dns: the oldest query's end */
	TAILQ_HEAD(, dns_session) rl_dnsq;	/* dns: queries, oldest first */
	struct relaytables	 rl_tables;
	struct relay_stats	 rl_stats[PROC_MAX_INSTANCES];
	int			 rl_retired;	/* of an older configuration */
	struct relay_certs	 rl_certs;
	struct tls_config	*rl_tls_cfg;		/* listen ... tls */
	struct tls		*rl_tls_ctx;
	struct tls_config	*rl_tls_client_cfg;	/* forward with tls */
	struct relay_verify	*rl_tls_verify;	/* its tls ca file, read */
	struct relay_icache	*rl_icache;	/* TLS inspection's */
	uint64_t		 rl_limrefused[RELAY_LIM_MAX]; /* pfe: by
						   nftables (ctl_limstats) */
	/* parent: listeners steered by source, one a relay process */
	int			 rl_steer[PROC_MAX_INSTANCES];
	unsigned int		 rl_nsteer;	/* rl_steer[0] is rl_s */
	char			*rl_page429;	/* max-src-request-rate's */
	struct http_canned	*rl_429[2];	/* its answer: closing, kept */
	int			 rl_usteer[PROC_MAX_INSTANCES]; /* dns */
	unsigned int		 rl_nusteer;	/* rl_usteer[0] is rl_us */
};
TAILQ_HEAD(relaylist, relay);

/* Sessions (relay processes): relay.h */
#define RELAY_REQUEST_SIZE	128	/* the request show sessions shows */
#define RELAY_BYTES_SPLICED	SPLICE_SPLICED
#define RELAY_BYTES_COPIED	SPLICE_COPIED

/* One session as relayctl show sessions sees it */
struct ctl_session {
	objid_t			 cs_id;
	objid_t			 cs_relayid;
	char			 cs_relay[MAX_NAME_SIZE];
	struct sockaddr_storage	 cs_src;
	struct sockaddr_storage	 cs_dst;
	struct timeval		 cs_start;
	struct timeval		 cs_last;
	struct timeval		 cs_now;
	pid_t			 cs_pid;
	unsigned int		 cs_instance;
	int			 cs_running;
	int			 cs_tls;	/* 1 client side, 2 backend */
	uint64_t		 cs_bytes[2][2];	/* [dir][spliced, copied] */
	char			 cs_request[RELAY_REQUEST_SIZE];
	int			 cs_h2;		/* HTTP/2: its streams */
	unsigned int		 cs_streams;	/* open now */
	unsigned int		 cs_requests;	/* so far */
	unsigned int		 cs_links;	/* backend connections */
};

/* What pfe tells relayctl status */
struct ctl_status {
	char			 version[32];
	pid_t			 parent_pid;
	time_t			 started;
	time_t			 now;
	char			 engine[16];
	char			 conffile[PATH_MAX];
	unsigned int		 nrelays;
	unsigned int		 ntables;
	unsigned int		 nhosts;
	unsigned int		 generation;	/* the configuration's */
	uint64_t		 keyops;	/* private-key operations in ca */
	uint64_t		 keyops_failed;
	uint64_t		 keyops_us;	/* their round trips, summed */
	unsigned int		 relays_stalled; /* relay processes that
						   do not answer */
	unsigned int		 procs_stalled;	/* any process's */
};

/*
 * carp's demotion on Linux: a demote group's count (its demoting tables
 * that are down, and one from the start until every table was checked),
 * which the parent writes where keepalived reads it.
 */
struct ctl_demote {
	char			 group[DEMOTE_GROUP_SIZE];
	int			 count;
};

/* pfe -> parent: may this address be announced, by relays and redirects */
struct ctl_announce {
	struct sockaddr_storage	 ss;		/* the address, port 0 */
	int			 up;
};

/* relay -> pfe: a relay process's round trips to its ca process */
struct ctl_keyopstats {
	unsigned int		 proc;
	uint64_t		 ops;
	uint64_t		 failed;
	uint64_t		 us;
};

/* Control connections (pfe) */
/* A control socket the parent passes to pfe (IMSG_CTL_SOCKFD) */
struct ctl_sock {
	gid_t			 cs_gid;	/* its group may connect */
	int			 cs_restricted;	/* anyone may, to look */
};

struct ctl_conn {
	TAILQ_ENTRY(ctl_conn)	 entry;
	uint8_t			 flags;
#define CTL_CONN_NOTIFY		 0x01
#define CTL_CONN_RESTRICTED	 0x02	/* looks, changes nothing */
	unsigned int		 waiting;	/* relay answers still due */
	uint32_t		 id;
	uid_t			 uid;
	struct imsgev		 iev;
};
TAILQ_HEAD(ctl_connlist, ctl_conn);

/* The whole state of one process */
struct relayd {
	struct relayd_config	 sc_conf;
	const char		*sc_conffile;
	struct tablelist	*sc_tables;
	struct relaylist	*sc_relays;
	struct protolist	*sc_protos;
	struct hostlist		 sc_hosts;
	struct rdrlist		 sc_rdrs;
	struct routerlist	 sc_routers;
	struct protocol		 sc_proto_default;
	struct privsep		*sc_ps;
	int			 sc_reload;
	time_t			 sc_started;	/* getmonosec() */
	time_t			 sc_started_wall;
	pid_t			 sc_parentpid;
	struct ctl_procinfo	 sc_procinfo[2 + 2 * PROC_MAX_INSTANCES];
	unsigned int		 sc_nprocinfo;
	char			 sc_engine[16];	/* pfe: as the relays say */
	unsigned int		 sc_generation;	/* configurations received */
	struct ctl_keyopstats	 sc_keyops[PROC_MAX_INSTANCES];	/* pfe */
	int			 sc_nsessions;	/* relay: of a replaced one */
};

/* parse.y */
int		 parse_config(const char *, struct relayd *);
int		 cmdline_symset(char *);
extern int	 parse_noresolve;

/* printconf.c */
void		 print_config(struct relayd *);
void		 relay_protodebug(struct relay *, struct protocol *);

/* proc.c */
void		 proc_init(struct privsep *, struct privsep_proc *,
		    unsigned int, int, char **, enum privsep_procid);
void		 proc_connect(struct privsep *);
int		 proc_kill(struct privsep *);
__dead void	 proc_run(struct privsep *, struct privsep_proc *,
		    struct privsep_proc *, unsigned int,
		    void (*)(struct privsep *, struct privsep_proc *, void *),
		    void *);
void		 proc_dispatch(int, short, void *);
int		 proc_compose_imsg(struct privsep *, enum privsep_procid, int,
		    uint32_t, uint32_t, int, const void *, size_t);
int		 proc_compose(struct privsep *, enum privsep_procid,
		    uint32_t, const void *, size_t);
int		 proc_forward_imsg(struct privsep *, struct imsg *,
		    enum privsep_procid, int);
struct imsgbuf	*proc_ibuf(struct privsep *, enum privsep_procid, int);
struct imsgev	*proc_iev(struct privsep *, enum privsep_procid, int);
unsigned int	 proc_ninstances(struct privsep *, enum privsep_procid);
void		 imsg_event_add(struct imsgev *);
int		 imsg_compose_event(struct imsgev *, uint32_t, uint32_t,
		    pid_t, int, const void *, size_t);
const char	*imsg_type_name(uint32_t);
const char	*proc_name(enum privsep_procid);

/* config.c */
int		 config_init(struct relayd *);
void		 config_purge(struct relayd *);
void		 config_free(struct relayd *);
void		 config_replace(struct relayd *, struct relayd *);
void		 protocol_init(struct protocol *);
void		 protocol_free(struct protocol *);
void		 rule_free(struct relay_rule *);
int		 config_setreset(struct relayd *);
int		 config_getreset(struct relayd *, struct imsg *);
void		 config_keepstats(struct relayd *);
struct relayd	*config_retain(struct relayd *);
int		 config_getcfg(struct relayd *, struct imsg *);
int		 config_setglobal(struct relayd *);
int		 config_settable(struct relayd *, struct table *);
int		 config_gettable(struct relayd *, struct imsg *);
int		 config_gethost(struct relayd *, struct imsg *);
int		 config_setproto(struct relayd *, struct protocol *);
int		 config_getrule(struct relayd *, struct imsg *);
int		 config_getproto(struct relayd *, struct imsg *);
int		 config_setrelay(struct relayd *, struct relay *);
int		 config_getrelay(struct relayd *, struct imsg *);
int		 config_getrelaytable(struct relayd *, struct imsg *);
int		 config_getrelayfd(struct relayd *, struct imsg *);
int		 config_setrelaycerts(struct relayd *, struct relay *);
int		 config_getrelaycert(struct relayd *, struct imsg *);
int		 config_setrdr(struct relayd *, struct rdr *);
int		 config_getrdr(struct relayd *, struct imsg *);
int		 config_setrouter(struct relayd *, struct router *);
int		 config_getrouter(struct relayd *, struct imsg *);
int		 config_setdone(struct relayd *);
int		 config_dispatch(struct relayd *, struct imsg *);

/* pfe.c */
void		 pfe(struct privsep *, struct privsep_proc *);

void		 show(struct ctl_conn *);
void		 show_status(struct ctl_conn *);
void		 show_sessions(struct ctl_conn *);
void		 show_overload(struct ctl_conn *);
void		 overload_delete(struct ctl_conn *, struct imsg *);
void		 pfe_ctl_answer(struct imsg *);
int		 pfe_enable(uint32_t, struct ctl_id *);
int		 pfe_rdr_enable(uint32_t, struct ctl_id *);

/* agentx.c */
void		 agentx_init(struct relayd *);
void		 agentx_getsock(int);
int		 agentx_connect(struct relayd *);

/* kernel.c: redirections and routers, in the parent */
int		 kernel_init(struct relayd *);
int		 kernel_configure(struct relayd *);
void		 kernel_reload(struct relayd *, struct relayd *);
void		 kernel_sync(struct relayd *, uint32_t, struct ctl_kernsync *);
void		 kernel_cleanup(struct relayd *);
void		 kernel_limits(struct relayd *);
void		 kernel_limits_show(struct relayd *, uint32_t);
void		 kernel_limits_delete(struct relayd *, struct ctl_overload *);
struct rdr	*rdr_find(struct relayd *, objid_t);
struct router	*router_find(struct relayd *, objid_t);

/* hce.c */
void		 hce(struct privsep *, struct privsep_proc *);
void		 hce_notify_done(struct host *, enum host_error);
void		 hce_notify_state(struct host *, enum host_error, int);
struct table	*hce_table(struct host *);

/* check_h2.c */
struct h2check;
int		 h2check_request(const char *, const char *, int, char **,
		    size_t *);
struct h2check	*h2check_new(void);
void		 h2check_free(struct h2check *);
int		 h2check_status(struct h2check *, const uint8_t *, size_t,
		    size_t *);

/* check_tcp.c */
void		 check_tcp_init(struct privsep *);
void		 check_tcp(struct host *, struct table *);
void		 check_tcp_unix(struct imsg *);
void		 check_tcp_abort(struct host *);

/* check_icmp.c */
void		 check_icmp_init(void);
void		 check_icmp(struct relayd *, struct timeval *);
void		 check_icmp_abort(void);

/* check_script.c */
void		 check_script(struct relayd *, struct host *, struct table *);
void		 script_done(struct relayd *, struct ctl_script *);
int		 script_exec(struct relayd *, struct ctl_script *);

/* relay.c */
void		 relay(struct privsep *, struct privsep_proc *);

/* metrics.c */
struct metrics;
void		 relay_stats_sum(struct relay *, struct relay_stats *);
struct metrics	*metrics_new(void);
void		 metrics_free(struct metrics *);
void		 metrics_status(struct metrics *, struct ctl_status *);
int		 metrics_relay(struct metrics *, struct relay *);
int		 metrics_rdr(struct metrics *, struct rdr *);
int		 metrics_router(struct metrics *, struct router *);
int		 metrics_demote(struct metrics *, struct ctl_demote *);
int		 metrics_announce(struct metrics *, struct ctl_announce *);
int		 metrics_table(struct metrics *, struct table *);
int		 metrics_host(struct metrics *, struct host *);
void		 metrics_print(struct metrics *, FILE *);

/* parent_relay.c */
int		 relay_privinit(struct relayd *, struct relay *, unsigned int);
void		 relay_listeners_close(struct relay *);
void		 parent_bindany(struct privsep *, struct imsg *);
void		 relay_unix_unlink(struct relayd *, struct relayd *);
void		 parent_unixconnect(struct privsep *, struct imsg *,
		    enum privsep_procid);
void		 relay_transparent_check(struct relay *);

/* ca.c */
void		 ca(struct privsep *, struct privsep_proc *);

/* tls_load.c */
int		 tls_load_relay(struct relayd *, struct relay *,
		    struct protocol *, char *, size_t);
struct relay_cert *
		 relay_cert_new(struct relay *, enum relay_certtype, int);
struct relay_cert *
		 relay_cert_find(struct relay *, enum relay_certtype, int);
void		 relay_certs_free(struct relay *);
int		 tls_pubkey_hash(const uint8_t *, size_t, char *, size_t);
struct evp_pkey_st;
int		 tls_pkey_hash(struct evp_pkey_st *, char *, size_t);
int		 tls_der_hash(const unsigned char *, int, char *, size_t);
struct stack_st_X509_INFO;
struct stack_st_X509_INFO
		*tls_pem_read(const uint8_t *, size_t);

/* relay_http.c */
void		 http_canned_free(struct http_canned **);

/* relay_tls.c */
int		 relay_tls_setup(struct relayd *, struct relay *);
void		 relay_tls_free(struct relay *);
void		 relay_tls_ticket_rekey(struct relayd *, struct imsg *);

/* tls_keyops.c */
int		 tls_keyops_init(struct privsep *);
int		 tls_keyops_private(struct evp_pkey_st *, uint32_t, int,
		    const uint8_t *, size_t, uint8_t *, size_t *);
void		 tls_keyops_stats(struct ctl_keyopstats *);
uint8_t		*tls_keyops_resign(const uint8_t *, size_t, const uint8_t *,
		    size_t, const uint8_t *, size_t, size_t *);

/* control.c */
int		 control_init(const char *, int, gid_t *);
void		 control_listen(struct relayd *, int, struct ctl_sock *);
void		 control_reply(uint32_t, uint32_t);
void		 control_cleanup(const char *);
void		 control_imsg_forward(struct privsep *, struct imsg *);
void		 control_notify(uint32_t, const void *, size_t);
struct ctl_conn	*control_connbyid(uint32_t);
void		 control_close_all(void);

/* patterns.c */
int		 pattern_match(const char *, const char *, const char **);
int		 pattern_check(const char *, const char **);

/* proxy_protocol.c */
#define PP_MAXHDR		2048	/* a v2 header with its TLVs */
ssize_t		 pp_header(int, struct sockaddr_storage *,
		    struct sockaddr_storage *, uint8_t *, size_t);
int		 pp_parse(const uint8_t *, size_t, size_t *,
		    struct sockaddr_storage *, struct sockaddr_storage *);

/* tls_hello.c */
#define TLS_HELLO_MAX		16384	/* the ClientHello read for SNI */
#define TLS_HELLO_NAMEMAX	255
int		 tls_hello_servername(const uint8_t *, size_t, char *,
		    size_t);

/* maglev.c */
#define MAGLEV_SLOTS		8191	/* a prime */
int		 maglev_fill(uint16_t *, uint32_t,
		    const struct sockaddr_storage *, unsigned int, uint32_t);

/* util.c */
int		 demote_group_valid(const char *);
void		 relay_socket_opts(int, int, struct protocol *, int);
struct table	*table_find(struct relayd *, objid_t);
struct table	*table_findbyname(struct relayd *, const char *);
struct table	*table_findbyconf(struct relayd *, struct table *);
struct host	*host_find(struct relayd *, objid_t);
struct host	*host_findbyname(struct relayd *, const char *);
struct host	*host_enable_imsg(struct relayd *, struct imsg *);
struct table	*table_enable_imsg(struct relayd *, struct imsg *);
struct relay	*relay_find(struct relayd *, objid_t);
void		 addr_masked(const uint8_t *, int, uint8_t *);
struct relay	*relay_findbyname(struct relayd *, const char *);
struct relay	*relay_findbyaddr(struct relayd *, struct relay_config *);
struct protocol	*proto_find(struct relayd *, objid_t);
const char	*host_status(enum host_status);
const char	*table_check(enum table_check);
const char	*host_error(enum host_error);
const char	*relay_mode_name(enum forwardmode);
const char	*print_availability(unsigned long, unsigned long);
const char	*print_host(struct sockaddr_storage *, char *, size_t);
const char	*print_time(struct timeval *, struct timeval *, char *,
		    size_t);
const char	*printb_flags(const uint32_t, const char *);
int		 ss_port(struct sockaddr_storage *);
void		 ss_setport(struct sockaddr_storage *, in_port_t);
socklen_t	 ss_len(const struct sockaddr_storage *);
int		 sock_v6only(int, int);
int		 ss_mapaf(struct sockaddr_storage *,
		    const struct sockaddr_storage *);
int		 addr_match(struct rule_addr *, struct sockaddr_storage *);
void		 socket_set_blockmode(int, int);
int		 accept_reserve(int, struct sockaddr *, socklen_t *, int,
		    volatile int *);

/*
 * The kernel back ends of redirections and routers, in the parent: the
 * Makefile picks kernel_nft.c and kernel_rtnl.c (Linux) or kernel_none.c.
 */
int		 kernel_available(void);
int		 kernel_rdr_setup(struct rdrlist *, struct rdrlist *);
int		 kernel_rdr_rules(struct rdr *, struct sockaddr_storage *,
		    unsigned int, int);
int		 kernel_rdr_stats(struct rdr *, struct ctl_rdrstats *);
void		 kernel_rdr_cleanup(void);
int		 kernel_route_set(struct router *, int,
		    struct sockaddr_storage *, unsigned int, int);
void		 kernel_route_stale(void);
int		 kernel_announce(struct sockaddr_storage *, int, int);
void		 kernel_announce_cleanup(void);
int		 kernel_limits_setup(struct relaylist *);
void		 kernel_limits_cleanup(void);
int		 kernel_limits_overloaded(const char *, uint32_t, int,
		    uint8_t **, uint32_t **);
int		 kernel_limits_unload(const char *, uint32_t, int,
		    const uint8_t *);
int		 kernel_limits_refused(const char *, uint64_t *);

/* demote.c */
void		 demote_init(struct relayd *);
void		 demote_set(struct relayd *, struct ctl_demote *);
void		 demote_shutdown(struct relayd *);
void		 demote_stalled(struct relayd *, int);

/* announce.c */
void		 announce_set(struct relayd *, struct ctl_announce *);
void		 announce_stalled(struct relayd *, int);
void		 announce_shutdown(struct relayd *);

/* log.c */
/*
 * A line for something that can happen very often: logged at most once
 * per interval seconds, with the count of the events since the last one.
 */
struct log_ratelimit {
	int		 interval;	/* seconds */
	time_t		 last;		/* when logged, monotonic; 0: never */
	uint64_t	 count;		/* events since, this one included */
	int		 said;		/* the last call logged */
};
#define LOG_RATELIMIT(_interval)	{ (_interval), 0, 0, 0 }

int		 log_ratelimit(struct log_ratelimit *);
#define LOG_MAXLINE	8192		/* a syslog line, header included */
void		 log_init(int, int);
int		 log_connect(void);
void		 log_setsocket(int);
void		 log_setrelay(void (*)(const char *, size_t, int));
void		 log_relayed(const void *, size_t);
void		 log_procinit(const char *);
void		 log_setverbose(int);
int		 log_getverbose(void);
void		 log_warn(const char *, ...)
		    __attribute__((__format__ (printf, 1, 2)));
void		 log_warnx(const char *, ...)
		    __attribute__((__format__ (printf, 1, 2)));
void		 log_info(const char *, ...)
		    __attribute__((__format__ (printf, 1, 2)));
void		 log_debug(const char *, ...)
		    __attribute__((__format__ (printf, 1, 2)));
void		 logit(int, const char *, ...)
		    __attribute__((__format__ (printf, 2, 3)));
void		 vlog(int, const char *, va_list)
		    __attribute__((__format__ (printf, 2, 0)));
__dead void	 fatal(const char *, ...)
		    __attribute__((__format__ (printf, 1, 2)));
__dead void	 fatalx(const char *, ...)
		    __attribute__((__format__ (printf, 1, 2)));

#endif /* RELAYD_H */
