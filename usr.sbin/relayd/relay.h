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
 * The relay processes: the core (relay.c, and relay_stats.c for its
 * reports: the end line, statistics, show sessions) and its protocols
 * (tcp in relay.c, http in relay_http.c and relay_http_rules.c, HTTP/2
 * clients of http relays in relay_h2.c, both reading HTTP/1.x with
 * http_msg.c, dns in relay_dns.c), and the TLS side of a session
 * (relay_tls.c, tls_keyops.c).
 *
 * Who owns what.  The core owns every rsession and both of its sides:
 * it accepts, connects, splices or reads, counts, times out and closes
 * them; a side's bufferevent, splice and TLS context are the core's.
 * A protocol owns se_priv (made in ro_init, freed in ro_free) and
 * decides, from what its hooks see, what passes and when: it parses,
 * moves bytes with relay_take()/relay_pass(), and when it wants
 * something of the core (a backend, another backend, an end passed on)
 * it says so in its hook's answer, enum relay_verdict, which the core
 * carries out (relay_act()).  A protocol never connects, never calls a
 * libevent callback, and never runs a hook itself; from a timer of its
 * own it asks with relay_wish() what a hook would have answered.
 *
 * A session may hold links (relay_link_open()): more backend
 * connections, each a backend-only rsession that the core connects,
 * reads, times out and closes as it does a session's backend, calling
 * the hooks the protocol gave it; its bytes count as its session's and
 * it has no end line, statistics or show sessions entry of its own.
 * When one connects, the core makes its backend the session's (the
 * end line names it) before the link's ro_connected.
 *
 * The calls go one way: the core calls the hooks of struct relay_ops;
 * a hook calls the functions under "what a protocol may call" below.
 */

#ifndef RELAYD_RELAY_H
#define RELAYD_RELAY_H

/*
 * The contract: what a protocol's hooks answer, the hooks, and the
 * calls a protocol may make.
 */

#define TOREAD_UNLIMITED	(-1)	/* pass everything */

struct rsession;
struct ctl_relay_event;
struct ctl_session;

/*
 * What a protocol's hook asks of the core when it returns; the core acts
 * on it (relay_act()), the protocol never connects or calls back itself.
 */
enum relay_verdict {
	RELAY_V_DONE,			/* nothing: it passed what it could */
	RELAY_V_CLOSED,			/* it ended the session: hands off */
	RELAY_V_READ,			/* read the client before a backend */
	RELAY_V_CONNECT,		/* connect to a backend now; what the
					   input still holds is read again */
	RELAY_V_RECONNECT,		/* another backend, for what comes */
	RELAY_V_EOF,			/* the end goes on to the other side */
	RELAY_V_OTHER			/* the other direction has input to
					   look at again */
};

/* Why a session got no backend (relay_connect_failed) */
enum relay_cfail {
	RELAY_CFAIL_NOHOST,		/* no host of its tables is up */
	RELAY_CFAIL_SESSION,		/* connect(2) failed at once */
	RELAY_CFAIL_SOCKET,		/* the connect failed later */
	RELAY_CFAIL_TIMEOUT		/* or took too long */
};

/*
 * What a protocol plugs into a session (relay.c chooses by protocol
 * type, and after TLS by ALPN).  Every hook is there for every
 * protocol, but ro_drained and ro_show, which may be NULL.
 */
struct relay_ops {
	const char	*ro_name;
	/*
	 * 1: the protocol reads both directions (bufferevents), and a
	 * client's end before the backend is up waits for ro_connected;
	 * 0: with no TLS, both directions are spliced at the connect.
	 */
	int		 ro_userland;
	/*
	 * after accept (and TLS; the ops are chosen again then, by ALPN):
	 * READ, CONNECT or CLOSED.  With TLS inspection the backend is
	 * there already: READ or CONNECT start the session.
	 */
	enum relay_verdict (*ro_init)(struct rsession *);
	/* bytes arrived in cre->bev's input */
	enum relay_verdict (*ro_read)(struct ctl_relay_event *);
	/* cre->toread bytes passed (a splice with max ended with EFBIG) */
	enum relay_verdict (*ro_passed)(struct ctl_relay_event *);
	/* the backend is connected, both sides have their bufferevents */
	enum relay_verdict (*ro_connected)(struct rsession *);
	/* end of file from cre: EOF, or CLOSED */
	enum relay_verdict (*ro_eof)(struct ctl_relay_event *);
	/* no backend (why, errno): answer the client and close */
	void		(*ro_abort)(struct rsession *, enum relay_cfail, int);
	void		(*ro_free)(struct rsession *);
	/*
	 * cre's output was all written (NULL: nothing to do then); a
	 * protocol that holds bytes back for want of room goes on.
	 */
	enum relay_verdict (*ro_drained)(struct ctl_relay_event *);
	/*
	 * relayctl show sessions: what the protocol counts of the session
	 * (NULL: nothing of its own)
	 */
	void		(*ro_show)(struct rsession *, struct ctl_session *);
};

/*
 * What a protocol may call (relay.c).  A call that returns -1 closed
 * the session: the caller returns RELAY_V_CLOSED and touches it no more.
 */
/* moving bytes */
int		 relay_take(struct ctl_relay_event *, struct evbuffer *);
int		 relay_pass(struct ctl_relay_event *);
int		 relay_flush_passed(struct ctl_relay_event *);
ssize_t		 relay_send_now(struct ctl_relay_event *, const void *,
		    size_t);
void		 relay_read_on(struct ctl_relay_event *);
void		 relay_read_off(struct ctl_relay_event *);
void		 relay_read_again(struct ctl_relay_event *);
/* ending */
void		 relay_end(struct ctl_relay_event *, const char *);
int		 relay_end_written(struct ctl_relay_event *, const char *);
void		 relay_close(struct rsession *, const char *, int);
/* from a protocol's own timer: what a hook would have answered */
void		 relay_wish(struct rsession *, enum relay_verdict);
/* the session end line, show sessions, statistics (relay_stats.c) */
void		 relay_log(struct rsession *, const char *);
void		 relay_log_backend(struct rsession *);
/* a line of the session's before its end line (relay.c) */
void		 relay_log_note(struct rsession *, int, const char *, ...)
		    __attribute__((__format__ (printf, 3, 4)));
void		 relay_request(struct rsession *, const char *);
struct sockaddr_storage
		*relay_sockname(struct rsession *);
struct relay_stats
		*relay_stats_mine(struct relay *);
/* a datagram's session (dns): made and given a backend by its protocol */
struct rsession	*relay_session_new(struct relay *, size_t,
		    const struct relay_ops *, int, struct sockaddr_storage *);
/* the most sessions and their links since last asked, and now */
unsigned int	 relay_sessions_peak(unsigned int *);
struct host	*relay_from_table(struct rsession *);
/*
 * a link: one more backend connection of a session's (HTTP/2 clients),
 * connected by the core, heard of through ops's hooks; it ends with
 * relay_close(), quietly, and with its session at the latest
 */
struct rsession	*relay_link_open(struct rsession *, const struct relay_ops *,
		    struct relay_table *);
/*
 * a shared link: a backend connection to host of table for the sessions
 * of the relay (HTTP/2 backends), the process's, not con's; its bytes
 * count as the sessions' the protocol names (relay_count()), and a
 * session names it in its end line (relay_link_name())
 */
struct rsession	*relay_link_shared(struct rsession *,
		    const struct relay_ops *, struct relay_table *,
		    struct host *);
void		 relay_link_name(struct rsession *, struct rsession *);
void		 relay_count(struct rsession *, int, size_t);
struct host	*relay_choose(struct rsession *, struct relay_table *);
#define RELAY_LINK(con)	((con)->se_parent != NULL || (con)->se_shared)


/* The core's own structures: a session and its sides. */

/*
 * The socket as libtls reads it (relay_tls_recv()): OpenSSL asks for a
 * record's header, then for its body, a read(2) each; one read takes
 * more, and what OpenSSL did not ask for yet waits here.
 */
struct relay_tlsin {
	u_char			*buf;		/* read ahead; NULL when empty */
	int			 ahead;		/* buf is RELAY_TLS_AHEAD long */
	size_t			 off;
	size_t			 len;
	int			 up;		/* the handshake is through */
	int			 eof;		/* the socket's end, unseen by
						   OpenSSL */
	int			 drained;	/* the last read emptied the
						   socket */
	int			 asked;		/* OpenSSL read since reset */
	int			 gone;		/* the peer left with its
						   handshake: no close_notify */
};

/*
 * A key operation that a handshake waits for while the relay process
 * goes on (tls_keyops.c): the answer, or its deadline, takes the
 * handshake up again through done(arg).
 */
enum keyop_state {
	KEYOP_IDLE = 0,
	KEYOP_WAITING,			/* for ca, until the deadline */
	KEYOP_ANSWERED			/* the answer is in out, to deliver */
};

struct keyop_wait {
	TAILQ_ENTRY(keyop_wait)	 entry;
	enum keyop_state	 state;
	uint32_t		 id;
	uint32_t		 type;
	unsigned char		*out;
	size_t			 outlen;
	int			 ret;		/* -1, or the length in out */
	struct timespec		 start;
	struct event		 ev;		/* deadline, or delivery */
	void			(*done)(void *);
	void			*arg;
};

/*
 * One side of a session: its socket, and what comes from it.  Bytes from
 * this side go to the other one spliced (sp) or, in userland, through
 * bev: read into its input, written from the other side's output.
 */
struct ctl_relay_event {
	int			 s;
	struct sockaddr_storage	 ss;
	struct rsession		*con;
	struct ctl_relay_event	*dst;		/* the other side */
	struct rsplice		 sp;		/* this side to the other */
	struct bufferevent	*bev;		/* NULL: never in userland */
	struct evbuffer_cb_entry *cb;		/* counts what bev wrote */
	struct event		 rev;		/* reads into bev's input */
	int			 reading;
	off_t			 toread;	/* to pass before the protocol
						   looks again */
	uint64_t		 copied;	/* from here, written by dst's
						   bev */
	off_t			 mark;		/* spliced at the last look */
	struct timeval		 tv_moved;	/* userland last wrote from
						   here */
	int			 splicing;	/* passing toread by splice */
	int			 done;		/* end of file seen */
	int			 dir;
	struct tls		*tls;		/* NULL: plain */
	struct event		 tev;		/* TLS handshake */
	struct event		 wev;		/* TLS output waits */
	int			 writing;
	int			 tlsheld;	/* libtls may hold more to read */
	struct relay_tlsin	 tin;		/* what libtls reads */
	void			*tlsjob;	/* a handshake paused for ca */
	struct keyop_wait	 keyop;		/* what it waits for */
	TAILQ_ENTRY(ctl_relay_event) jobentry;	/* waits for a job */
	int			 jobwait;
	size_t			 readsize;	/* the next read's reservation */
};

/* Where a session's connect to its backend is (relay_connect) */
enum relay_cstate {
	RELAY_CONN_NONE,		/* no socket yet */
	RELAY_CONN_BINDANY,		/* the parent makes a transparent one */
	RELAY_CONN_UNIX,		/* the parent connects a unix one */
	RELAY_CONN_PORTWAIT,		/* no local port: trying again soon */
	RELAY_CONN_CONNECTING,		/* connect(2) under way */
	RELAY_CONN_CONNECTED
};

struct rsession {
	objid_t			 se_id;
	objid_t			 se_relayid;
	struct relay		*se_relay;
	struct relayd		*se_conf;	/* replaced by a reload */
	const struct relay_ops	*se_ops;
	void			*se_priv;	/* the protocol's */
	struct ctl_relay_event	 se_in;		/* the client */
	struct ctl_relay_event	 se_out;	/* the backend */
	struct event		 se_ev;		/* connect */
	struct timeval		 se_tv_start;
	struct timeval		 se_tv_last;	/* userland bytes moved */
	struct host		*se_host;
	struct relay_table	*se_table;	/* a rule's forward to */
	uint64_t		 se_hash;	/* what rules' hash fed */
	struct relay_inspected	*se_inspected;	/* TLS inspection: the
						   server context it uses */
	int			 se_nconnects;
	char			*se_log;	/* texts for the end line */
	int			 se_haslog;	/* a rule logged */
	char			 se_tag[RULE_SETNAME_SIZE];
	char			 se_label[RULE_SETNAME_SIZE];
	char			 se_request[RELAY_REQUEST_SIZE];
	size_t			 se_loglen;
	int			 se_retry;
	int			 se_retrycount;
	int			 se_portwaits;	/* tries without a local port */
	int			 se_portmoves;	/* other hosts tried for one */
	int			 se_fdwaits;	/* seconds waited for an fd */
	int			 se_nosplice;
	int			 se_dgram;	/* a datagram's: no socket */
	enum relay_cstate	 se_cstate;	/* the backend's connect */
	uint32_t		 se_cseq;	/* asks of the parent */
	const char		*se_endmsg;	/* ends once output is out */
	struct sockaddr_storage	 se_sockname;	/* what the client reached */
	int			 se_socknamed;	/* se_sockname is known */
	struct pp_read		*se_pp;		/* a PROXY header coming in */
	char			*se_sni;	/* TLS inspection: the name the
						   client's hello asks for */
	struct lim_ent		*se_lim;	/* its source's counts */
	struct lim_ent		*se_limq;	/* its source's requests */
	struct rsession		*se_parent;	/* a link: whose it is */
	int			 se_shared;	/* a shared link: nobody's */
	struct host		*se_pinned;	/* its host, chosen before */
	TAILQ_HEAD(rsession_links, rsession) se_links;	/* its links */
	TAILQ_ENTRY(rsession)	 se_link;
	const char		*se_why;	/* a link's end, for ro_free */
	TAILQ_ENTRY(rsession)	 se_entry;
};
TAILQ_HEAD(sessionlist, rsession);

/*
 * The core's own, for its reports: the sessions of the process (links
 * among them), the relay a session counts in (the new one of its name
 * after a reload), and what a session moved so far (relay.c); the end
 * line of a session (active: the sessions of the process), statistics
 * and show sessions (relay_stats.c).
 */
extern struct sessionlist relay_sessions;
struct relay	*relay_counted(struct relay *);
void		 relay_session_bytes(struct rsession *, uint64_t [2][2]);
void		 relay_stats_init(struct privsep *);
void		 relay_log_end(struct rsession *, const char *, int,
		    uint64_t [2][2], int);
void		 relay_sessions_send(struct privsep *, uint32_t);

/* What the TLS side calls (relay_tls.c) in the core. */
void		 relay_tls_established(struct ctl_relay_event *);
int		 relay_start_left(struct rsession *, struct timeval *);
void		 relay_drained(struct ctl_relay_event *);
void		 relay_timeout(struct ctl_relay_event *, int);

/* The protocols: their hooks, and what the core asks of them else. */
extern const struct relay_ops relay_http_ops;

/* relay_http_rules.c: what both HTTP protocols share above http_msg.c */
struct http_msg;
int		 http_rules(struct ctl_relay_event *, struct http_msg *,
		    struct relay_table **);
char		*http_error_page(struct rsession *, int, const char *);

/* relay_h2.c: an http relay's TLS clients that chose h2 (ALPN) */
extern const struct relay_ops relay_h2_ops;
/* relay_h1b.c: HTTP/1.1 clients of a relay whose backends speak h2 */
extern const struct relay_ops relay_h1b_ops;
/* relay_h2b.c: HTTP/2 backends, their connections shared */
void		 relay_h2b_retire(void);

/* relay_dns.c */
#define RELAY_DNS_MAXPENDING	16384	/* queries waiting, per process */
struct dns_msg {
	uint16_t		 id;
	uint8_t			 flags0;
	uint8_t			 flags1;
	uint16_t		 qdcount;
	size_t			 qlen;		/* the first question */
	const uint8_t		*q;		/* where it is */
};
#define DNS_QUESTIONMAX		(255 + 2 + 4)	/* name, type, class */
void		 relay_dns_launch(struct relayd *, struct relay *);
void		 relay_dns_stop(struct relay *);
int		 relay_dns_parse(const uint8_t *, size_t, struct dns_msg *);
unsigned int	 relay_dns_sockets(void);

/* relay_limit.c: limits per source the kernel does not keep */
struct lim_ent;
int		 relay_limit_accept(struct relay *, struct sockaddr_storage *,
		    struct lim_ent **);
void		 relay_limit_release(struct lim_ent *);
void		 relay_limit_flush(const char *, int, const uint8_t *);
void		 relay_limit_flushed(struct imsg *);
int		 relay_limit_request(struct relay *, struct sockaddr_storage *,
		    struct lim_ent **);
void		 relay_limit_hold(struct ctl_relay_event *, struct event *);
struct ctl_overload;
void		 relay_limit_show(struct privsep *, uint32_t);
void		 relay_limit_delete(struct ctl_overload *);

/* The TLS side of a session (relay_tls.c, tls_keyops.c). */
int		 relay_tls_inspect(struct rsession *);
void		 relay_tls_inspected_drop(struct rsession *);
int		 relay_tls_accept(struct tls *, struct ctl_relay_event *);
int		 relay_tls_connect(struct ctl_relay_event *,
		    struct tls_config *, const char *);
void		 relay_tls_handshake(int, short, void *);
void		 relay_tls_in_free(struct ctl_relay_event *);
void		 relay_tls_abandon(struct ctl_relay_event *);
ssize_t		 relay_tls_read(struct ctl_relay_event *, struct iovec *,
		    int, int *);
int		 relay_tls_flush(struct ctl_relay_event *);
void		 relay_tls_writecb(int, short, void *);
void		 tls_keyops_waiter(struct keyop_wait *, void (*)(void *),
		    void *);
int		 tls_keyops_answer(struct imsg *);
void		 tls_keyops_cancel(struct keyop_wait *);

#endif /* RELAYD_RELAY_H */
