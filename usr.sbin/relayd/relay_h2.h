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
 * What the two halves of HTTP/2 share: the client side (relay_h2.c)
 * and, for "http2 backend", the backend side (relay_h2b.c), whose
 * connections the sessions of a relay process share.  A client stream
 * is the client side's; while it is on a backend connection
 * (H2_BACKEND) the backend side fills its answer (st_resp, its head
 * through h2_answer_head()) and takes its body (st_body).
 */

#ifndef RELAYD_RELAY_H2_H
#define RELAYD_RELAY_H2_H

#define H2_OUT_MAX		(256 * 1024)	/* unwritten output */
#define H2_STREAM_RESP_MAX	(64 * 1024)	/* an answer held, a stream */

#define H2_RESETS_KEPT		64		/* our last resets, kept */

struct h2b_conn;
struct h2_link;
TAILQ_HEAD(h2_links, h2_link);

enum h2_where {
	H2_NOWHERE,		/* nghttp2's only */
	H2_WAITING,		/* a request for a backend */
	H2_PIPE,		/* on a link, waiting for its answer */
	H2_BACKEND		/* a stream on an HTTP/2 backend's */
};

struct h2_session;
struct h2_link;

struct h2_stream {
	TAILQ_ENTRY(h2_stream)	 st_entry;	/* waiting, or a pipe */
	TAILQ_ENTRY(h2_stream)	 st_all;
	struct h2_session	*st_h2;
	int32_t			 st_id;
	struct timeval		 st_born;	/* the event loop's clock */
	enum h2_where		 st_where;
	struct h2_link		*st_link;	/* whose pipe it is on */
	int			 st_tries;	/* sent to a backend */
	int			 st_closed;	/* nghttp2 is through with it */
	struct http_msg		 st_req;
	size_t			 st_hdrlen;
	int			 st_error;	/* a status to answer with */
	const char		*st_errmsg;
	char			*st_authority;
	char			*st_cookie;
	int			 st_headdone;	/* the request head came */
	int			 st_reqdone;	/* and all of its body */
	int			 st_chunked;	/* it goes in chunks */
	struct relay_table	*st_table;
	struct evbuffer		*st_body;	/* body for the backend */
	struct evbuffer		*st_trailers;	/* its trailer lines */
	int			 st_retry;	/* 429: Retry-After, s */
	struct evbuffer		*st_resp;	/* answer for the client */
	struct http_msg		 st_rtrailers;	/* the answer's trailers */
	int			 st_answered;	/* a response was submitted */
	int			 st_respdone;	/* all of it is in st_resp */
	int			 st_deferred;	/* nghttp2 waits for st_resp */
	int			 st_discard;	/* the backend's answer goes */
	struct event		 st_ev;		/* the request's deadline */
	struct timeval		 st_due;	/* when it is */
	/* on an HTTP/2 backend (relay_h2b.c) */
	TAILQ_ENTRY(h2_stream)	 st_bentry;
	struct h2b_conn		*st_bc;
	int32_t			 st_bid;	/* the backend's stream */
	size_t			 st_bsent;	/* body bytes sent on it */
	int			 st_bdeferred;	/* its body waits for more */
	int			 st_bhead;	/* the answer's head came */
	size_t			 st_bhdrlen;	/* its fields so far */
	int			 st_bgone;	/* the backend's stream ended */
	int			 st_grpc;	/* application/grpc */
	long long		 st_gtimeout;	/* its grpc-timeout, ms */
	struct event		 st_gev;	/* then it ends */
	struct http_msg		 st_bmsg;	/* the answer's head coming */
	struct http_msg		 st_qtrailers;	/* the request's trailers */
};
TAILQ_HEAD(h2_streams, h2_stream);

/*
 * A client that is no HTTP/2 client (relay_h1b.c: HTTP/1.1 to HTTP/2
 * backends): what relay_h2.c does to a client's nghttp2 session it asks
 * of the front instead.  f_wake runs the session from its timer (the
 * session's h2_againev is the front's).
 */
struct h2_front {
	int	(*f_head)(struct h2_stream *, struct http_msg *, int, int);
	void	(*f_reset)(struct h2_stream *, uint32_t);
	void	(*f_taken)(struct h2_stream *, size_t);
};

struct h2_session {
	const struct h2_front	*h2_front;	/* NULL: an HTTP/2 client */
	struct rsession		*h2_con;
	nghttp2_session		*h2_ng;
	struct h2_streams	 h2_all;
	struct h2_streams	 h2_waiting;
	struct h2_links		 h2_links;
	size_t			 h2_maxhdr;
	/* abuse */
	unsigned int		 h2_resets;
	unsigned int		 h2_answers;
	unsigned int		 h2_nstreams;	/* open now */
	unsigned int		 h2_requests;	/* so far */
	unsigned int		 h2_toolarge;	/* header lists refused */
	int			 h2_inmore;	/* input left for a turn */
	int			 h2_tokens;
	time_t			 h2_tokentime;
	int			 h2_answered;	/* since the last one */
	int			 h2_conts;
	const char		*h2_fault;	/* why it is cut off */
	uint32_t		 h2_faultcode;	/* with which GOAWAY */
	int32_t			 h2_maxid;	/* the client's last stream */
	int32_t			 h2_reset[H2_RESETS_KEPT];
	unsigned int		 h2_nreset;	/* of them, so far */
	struct event		 h2_againev;	/* h2_run() goes on */
	int			 h2_held;	/* a request was answered 429 */
	struct event		 h2_holdev;	/* the client is read again */
};

/* relay_h2.c: what the backend side calls */
extern struct h2_session *h2_turn;	/* the one whose timer runs */
void		 h2_wake(struct h2_session *);
struct h2_stream *h2_stream_new(struct h2_session *, int32_t);
struct evbuffer	*h2_buf_new(void);
void		 h2_body_taken(struct h2_stream *, size_t);
int		 h2_answer_head(struct h2_stream *, struct http_msg *, int);
void		 h2_answer_more(struct h2_stream *);
void		 h2_answer_end(struct h2_stream *);
void		 h2_answer_reset(struct h2_stream *, uint32_t);
void		 h2_refuse(struct h2_stream *, int, const char *);
void		 h2_hold(struct h2_session *);
void		 h2_stream_release(struct h2_stream *);
int		 h2_hop_field(struct http_msg *, const char *);
int		 h2_hop_static(const char *);
int		 h2_hop_named(struct http_msg *, const char *);
int		 h2_trailer(struct http_msg *, char *);

/* relay_h2b.c: what the client side calls */
int		 h2b_submit(struct h2_stream *);
void		 h2b_cancel(struct h2_stream *);
void		 h2b_body_more(struct h2_stream *);
void		 h2b_consumed(struct h2_stream *, size_t);
void		 h2b_flush(void);

#endif /* RELAYD_RELAY_H2_H */
