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
 * HTTP/1.x for relayd: the methods relayd knows, in the order their
 * numbers (http_method_byname(): 1 + index) follow, and the name its
 * error pages and $SERVER_NAME give, both as OpenBSD's relayd has them;
 * then a message as http_msg.c parses it, and its functions.
 */

#ifndef RELAYD_HTTP_H
#define RELAYD_HTTP_H

#define HTTP_SERVERNAME		"OpenBSD relayd"

#define HTTP_METHOD_NAMES {						\
	"ACL", "BASELINE-CONTROL", "CHECKIN", "CHECKOUT", "CONNECT",	\
	"COPY", "DELETE", "GET", "HEAD", "LABEL", "LOCK", "MERGE",	\
	"MKACTIVITY", "MKCOL", "MKREDIRECTREF", "MKWORKSPACE", "MOVE",	\
	"OPTIONS", "ORDERPATCH", "PATCH", "POST", "PROPFIND",		\
	"PROPPATCH", "PUT", "REPORT", "SEARCH", "TRACE", "UNCHECKOUT",	\
	"UNLOCK", "UPDATE", "UPDATEREDIRECTREF", "VERSION-CONTROL"	\
}

/* HTTP/1.x messages (http_msg.c) */
struct http_header {
	char			*hh_name;	/* in hh_buf */
	char			*hh_value;	/* in hh_buf, or its own */
	int			 hh_removed;	/* by a rule, logs yet */
	TAILQ_ENTRY(http_header) hh_entry;
	char			 hh_buf[];	/* name and first value */
};
TAILQ_HEAD(http_headers, http_header);

#define HTTP_CHUNKLINE_MAX	1024	/* a chunk's size and extensions */
#define HTTP_ARENA_SIZE		1008	/* a head's fields, most of them */

#define HTTP_BODY_NONE		0
#define HTTP_BODY_LENGTH	1	/* hm_clen bytes */
#define HTTP_BODY_CHUNKED	2
#define HTTP_BODY_CLOSE		3	/* to the end of the connection */

struct http_msg {
	int			 hm_dir;	/* RELAY_DIR_* */
	size_t			 hm_maxlen;	/* http headerlen, 0: none */
	size_t			 hm_headerlen;	/* bytes of the head so far */
	int			 hm_nlines;
	int			 hm_done;	/* the empty line came */
	int			 hm_method;	/* http_method_byname() */
	char			*hm_target;
	int			 hm_minor;	/* HTTP/1.x */
	int			 hm_code;	/* a response's status */
	char			*hm_reason;
	struct http_headers	 hm_headers;	/* in order, repeats kept */
	off_t			 hm_clen;	/* -1: no Content-Length */
	int			 hm_chunked;
	int			 hm_close;	/* no other message follows */
	int			 hm_upgrade;	/* Connection: upgrade */
	int			 hm_body;	/* HTTP_BODY_*, once done */
	const char		*hm_error;	/* what the last error was */
	char			*hm_arena;	/* fields, one after another */
	size_t			 hm_arenaused;
};

/*
 * Where the reading of a message is (http_frame()).  Once its head is
 * through, its user sets the state the head asks for: HTTP_F_BODY (the
 * length is the user's to count), HTTP_F_CHUNK, HTTP_F_RAW, or
 * HTTP_F_HEAD for no body.
 */
enum http_fstate {
	HTTP_F_HEAD,		/* a message head, line by line */
	HTTP_F_BODY,		/* a body of known length */
	HTTP_F_CHUNK,		/* a chunk-size line */
	HTTP_F_CHUNKDATA,	/* a chunk's data, fr_size bytes */
	HTTP_F_CHUNKEND,	/* the line end after a chunk */
	HTTP_F_TRAILER,		/* trailer fields, to the empty line */
	HTTP_F_RAW		/* all, to the end: a tunnel, or no length */
};

/* What one step of http_frame() found. */
enum http_fevent {
	HTTP_FR_MORE,		/* nothing whole yet: wait for input */
	HTTP_FR_HEADLINE,	/* a line of the head, parsed into the msg */
	HTTP_FR_HEAD,		/* the head is through (hm_done) */
	HTTP_FR_DATA,		/* body bytes next: the user moves them and
				   says when they are all through
				   (http_frame_data_done()) */
	HTTP_FR_LINE,		/* a chunk-size line, a chunk's end or a
				   trailer field (fr_linestate says which),
				   in fr_line */
	HTTP_FR_END,		/* the message is through; fr_line holds
				   the empty line that ended the trailer,
				   or is NULL */
	HTTP_FR_ERROR		/* fr_code, fr_error */
};

struct http_framer {
	enum http_fstate	 fr_state;
	off_t			 fr_size;	/* the last chunk's */
	size_t			 fr_trailerlen;
	char			*fr_line;	/* the user's to free */
	size_t			 fr_len;
	enum http_fstate	 fr_linestate;	/* what fr_line was */
	int			 fr_code;	/* a status, as the msg's */
	const char		*fr_error;
};

struct evbuffer;
int		 http_frame(struct http_framer *, struct http_msg *,
		    struct evbuffer *);
int		 http_frame_data_done(struct http_framer *);

const char	*http_method_name(int);
int		 http_method_byname(const char *);
void		 http_msg_init(struct http_msg *, int, size_t);
void		 http_msg_clear(struct http_msg *);
int		 http_msg_line(struct http_msg *, const char *, size_t);
int		 http_msg_done(struct http_msg *);
struct http_header
		*http_header_walk(struct http_msg *, struct http_header *,
		    int (*)(const struct http_header *, const void *),
		    const void *, int);
int		 http_header_named(const struct http_header *, const void *);
const char	*http_header_get(struct http_msg *, const char *);
int		 http_header_add(struct http_msg *, const char *, const char *);
void		 http_header_remove(struct http_msg *, struct http_header *);
int		 http_header_value(struct http_header *, const char *);
int		 http_has_token(const char *, const char *);
int		 http_chunk_line(const char *, size_t, off_t *);
int		 http_line_ctl(const char *, size_t);
int		 http_write_head(struct evbuffer *, struct http_msg *, int);
const char	*http_error_name(int);

#endif /* RELAYD_HTTP_H */
