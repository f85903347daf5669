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
 * The HTTP relay: sessions of an "http protocol" (at the end of this
 * file), and the parser of HTTP/1.x message heads they use, line by
 * line: the request or status line, the header fields, and what frames
 * the body.  The parser knows nothing of sessions; every error is the
 * status code relayd answers with (OpenBSD's where it has one, RFC
 * 9112's where it is silent):
 *
 *	400	malformed request: bad request line or version, NUL or bare
 *		CR, obsolete line folding, a field without ":" or with a bad
 *		name, two Host fields, Transfer-Encoding other than chunked,
 *		both Content-Length and Transfer-Encoding, two different
 *		Content-Length values, a length on TRACE or CONNECT
 *	406	no method
 *	413	request header block over headerlen
 *	500	unknown method, a length that is not a number
 *	502	the same faults in a response (the backend's), and a 1xx or
 *		204 response with a body
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "relayd.h"
#include "relay.h"
#include "http.h"

#define HTTP_CHUNKLINE_MAX	1024	/* size and extensions */

static int	 http_error(struct http_msg *, int, const char *);
static int	 http_first_line(struct http_msg *, char *);
static int	 http_field(struct http_msg *, char *);
static const char *
		 http_length(const char *, off_t *);
static int	 http_host_agrees(const char *, const char *);
static const char *http_target_host(const char *, size_t *);
static int	 http_host_from_target(struct http_msg *);

static const char *http_methods[] = HTTP_METHOD_NAMES;

/* 1 + index, 0 for an unknown method. */
int
http_method_byname(const char *name)
{
	size_t	 i;

	for (i = 0; i < nitems(http_methods); i++)
		if (strcmp(http_methods[i], name) == 0)
			return (i + 1);
	return (0);
}

const char *
http_method_name(int id)
{
	if (id < 1 || (size_t)id > nitems(http_methods))
		return ("invalid");
	return (http_methods[id - 1]);
}

void
http_msg_init(struct http_msg *m, int dir, size_t headerlen)
{
	memset(m, 0, sizeof(*m));
	TAILQ_INIT(&m->hm_headers);
	m->hm_dir = dir;
	m->hm_maxlen = headerlen;
	m->hm_clen = -1;
}

void
http_msg_clear(struct http_msg *m)
{
	struct http_header	*h;

	while ((h = TAILQ_FIRST(&m->hm_headers)) != NULL) {
		TAILQ_REMOVE(&m->hm_headers, h, hh_entry);
		free(h->hh_name);
		free(h->hh_value);
		free(h);
	}
	free(m->hm_target);
	free(m->hm_reason);
	http_msg_init(m, m->hm_dir, m->hm_maxlen);
}

/*
 * A fault of the client is its status code; one of the backend is 502.
 * The message says what was wrong, for the log.
 */
static int
http_error(struct http_msg *m, int code, const char *msg)
{
	m->hm_error = msg;
	return (m->hm_dir == RELAY_DIR_RESPONSE ? 502 : code);
}

/*
 * A control character other than HTAB: NUL and a bare CR (smuggling), and
 * the others no request target, field or chunk line may hold (RFC 9112
 * 3.2, RFC 9110 5.5), which a backend's parser could take for a space.
 */
int
http_line_ctl(const char *line, size_t len)
{
	const unsigned char	*p = (const unsigned char *)line;
	size_t			 i;

	for (i = 0; i < len; i++)
		if ((p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7f)
			return (1);
	return (0);
}

/* RFC 9110 token characters */
static int
http_tchar(unsigned char c)
{
	return (isalnum(c) || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c)));
}

/*
 * One line of the head, without its CRLF (a bare LF ended it).  The empty
 * line ends the head: then hm_done is set and the framing is checked.
 * Returns 0 or the status code of the error.
 */
int
http_msg_line(struct http_msg *m, const char *line, size_t len)
{
	char	 buf[1024], *copy;
	int	 ret;

	if (m->hm_done)
		return (http_error(m, 400, "malformed"));
	/* a NUL, a bare CR or another control character anywhere */
	if (http_line_ctl(line, len))
		return (http_error(m, 400, "malformed"));
	/* as OpenBSD counts: the lines without their line ends */
	m->hm_headerlen += len;
	if (m->hm_maxlen > 0 && m->hm_headerlen > m->hm_maxlen)
		return (http_error(m, 413, m->hm_dir == RELAY_DIR_REQUEST ?
		    "request headers too large" :
		    "response headers too large"));
	if (len == 0) {
		if (m->hm_nlines == 0)
			return (http_error(m, 406, "no method"));
		m->hm_done = 1;
		return (http_msg_done(m));
	}
	/* most lines are short: they are parsed in a copy on the stack */
	if (len < sizeof(buf)) {
		memcpy(buf, line, len);
		buf[len] = '\0';
		copy = buf;
	} else if ((copy = strndup(line, len)) == NULL)
		return (http_error(m, 500, "out of memory"));
	ret = m->hm_nlines++ == 0 ? http_first_line(m, copy) :
	    http_field(m, copy);
	if (copy != buf)
		free(copy);
	return (ret);
}

static int
http_version(struct http_msg *m, const char *v)
{
	if (strcmp(v, "HTTP/1.1") == 0)
		m->hm_minor = 1;
	else if (strcmp(v, "HTTP/1.0") == 0)
		m->hm_minor = 0;
	else
		return (-1);
	return (0);
}

static int
http_first_line(struct http_msg *m, char *line)
{
	char		*sp1, *sp2;
	const char	*errstr;

	if ((sp1 = strchr(line, ' ')) == NULL)
		return (http_error(m, 400, "malformed"));
	*sp1++ = '\0';
	if (m->hm_dir == RELAY_DIR_REQUEST) {
		/* METHOD SP target SP HTTP/1.x */
		if (*line == '\0')
			return (http_error(m, 406, "no method"));
		if ((sp2 = strchr(sp1, ' ')) == NULL)
			return (http_error(m, 400, "malformed"));
		*sp2++ = '\0';
		if ((m->hm_method = http_method_byname(line)) == 0)
			return (http_error(m, 500, "unknown method"));
		if (*sp1 == '\0' || strchr(sp1, ' ') != NULL ||
		    strchr(sp1, '\t') != NULL || http_version(m, sp2) == -1)
			return (http_error(m, 400, "malformed"));
		if ((m->hm_target = strdup(sp1)) == NULL)
			return (http_error(m, 500, "out of memory"));
		/* HTTP/1.0 closes after the answer unless asked to keep */
		m->hm_close = m->hm_minor == 0;
		return (0);
	}
	/* HTTP/1.x SP 3DIGIT SP reason */
	if (http_version(m, line) == -1)
		return (http_error(m, 502, "malformed status line"));
	if ((sp2 = strchr(sp1, ' ')) != NULL)
		*sp2++ = '\0';
	if (strlen(sp1) != 3 || !isdigit((unsigned char)sp1[0]) ||
	    !isdigit((unsigned char)sp1[1]) ||
	    !isdigit((unsigned char)sp1[2]))
		return (http_error(m, 502, "malformed status line"));
	m->hm_code = strtonum(sp1, 100, 999, &errstr);
	if (errstr != NULL)
		return (http_error(m, 502, "malformed status line"));
	if ((m->hm_reason = strdup(sp2 != NULL ? sp2 : "")) == NULL)
		return (http_error(m, 502, "out of memory"));
	m->hm_close = m->hm_minor == 0;
	return (0);
}

/* A list of tokens (Connection, Transfer-Encoding) has this one. */
static int
http_has_token(const char *list, const char *token)
{
	size_t		 len = strlen(token);
	const char	*p = list;

	while (*p != '\0') {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (strncasecmp(p, token, len) == 0 &&
		    (p[len] == '\0' || p[len] == ',' || p[len] == ' ' ||
		    p[len] == '\t'))
			return (1);
		while (*p != '\0' && *p != ',')
			p++;
	}
	return (0);
}

static int
http_field(struct http_msg *m, char *line)
{
	char			*colon, *value, *end;
	const char		*errstr;
	off_t			 len;

	/* obsolete line folding, or whitespace before the name */
	if (*line == ' ' || *line == '\t')
		return (http_error(m, 400, "malformed"));
	if ((colon = strchr(line, ':')) == NULL || colon == line)
		return (http_error(m, 400, "malformed"));
	*colon = '\0';
	for (end = line; *end != '\0'; end++)
		if (!http_tchar((unsigned char)*end))
			return (http_error(m, 400, "malformed"));
	value = colon + 1;
	while (*value == ' ' || *value == '\t')
		value++;
	end = value + strlen(value);
	while (end > value && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';

	if (strcasecmp(line, "Host") == 0 && m->hm_dir == RELAY_DIR_REQUEST) {
		/* in OpenBSD's order: the target's host, then a second Host */
		if (!http_host_agrees(m->hm_target, value))
			return (http_error(m, 400, "malformed host"));
		if (http_header_get(m, "Host") != NULL)
			return (http_error(m, 400, "malformed header"));
	}
	if (strcasecmp(line, "Content-Length") == 0) {
		if ((errstr = http_length(value, &len)) != NULL)
			return (http_error(m, 500, errstr));
		if (m->hm_clen != -1 && m->hm_clen != len)
			return (http_error(m, 400,
			    "conflicting Content-Length"));
		m->hm_clen = len;
	}
	if (strcasecmp(line, "Transfer-Encoding") == 0) {
		/* only chunked, and only once */
		if (strcasecmp(value, "chunked") != 0 || m->hm_chunked)
			return (http_error(m, 400,
			    "invalid Transfer-Encoding"));
		m->hm_chunked = 1;
	}
	if (strcasecmp(line, "Connection") == 0) {
		if (http_has_token(value, "close"))
			m->hm_close = 1;
		else if (http_has_token(value, "keep-alive"))
			m->hm_close = 0;
		if (http_has_token(value, "upgrade"))
			m->hm_upgrade = 1;
	}

	/* repeated fields stay, in the order they came */
	if (http_header_add(m, line, value) == -1)
		return (http_error(m, 500, "out of memory"));
	return (0);
}

/*
 * Content-Length: digits only, no sign, no overflow.  NULL, or what is
 * wrong in strtonum(3)'s words, as OpenBSD logs it.
 */
static const char *
http_length(const char *s, off_t *len)
{
	off_t	 n = 0;

	if (*s == '\0')
		return ("invalid");
	for (; *s != '\0'; s++) {
		if (!isdigit((unsigned char)*s))
			return ("invalid");
		if (n > (LLONG_MAX - 9) / 10)
			n = -1;
		else if (n != -1)
			n = n * 10 + (*s - '0');
	}
	if (n == -1)
		return ("too large");
	*len = n;
	return (NULL);
}

/*
 * The host an absolute-form request target names ("http://HOST/..."):
 * its start and length, or NULL for another form.
 */
static const char *
http_target_host(const char *target, size_t *len)
{
	const char	*p;

	if (target == NULL || (p = strstr(target, ":/")) == NULL ||
	    strcspn(target, ":/") != (size_t)(p - target))
		return (NULL);
	p += strspn(p, ":/");
	*len = strcspn(p, "/");
	return (p);
}

/*
 * An absolute-form request target names its host: the Host field must
 * name the same (case aside), as OpenBSD checks.  Other targets agree.
 */
static int
http_host_agrees(const char *target, const char *host)
{
	const char	*p;
	size_t		 len;

	if ((p = http_target_host(target, &len)) == NULL)
		return (1);
	return (strlen(host) == len && strncasecmp(p, host, len) == 0);
}

/*
 * A request without a Host field whose target names its host: the
 * host is taken from the target, as OpenBSD does, so that rules, $HOST
 * and the backend see it.  0, or the status of the refusal.
 */
static int
http_host_from_target(struct http_msg *m)
{
	const char	*p;
	char		 host[RELAYD_HOSTNAME_MAX + 1];
	size_t		 len;

	if (http_header_get(m, "Host") != NULL ||
	    (p = http_target_host(m->hm_target, &len)) == NULL || len == 0)
		return (0);
	if (len >= sizeof(host))
		return (http_error(m, 400, "malformed host"));
	memcpy(host, p, len);
	host[len] = '\0';
	if (http_header_add(m, "Host", host) == -1)
		return (http_error(m, 500, "out of memory"));
	return (0);
}

/* A field at the end of the head: 0, or -1 without memory. */
int
http_header_add(struct http_msg *m, const char *name, const char *value)
{
	struct http_header	*h;

	if ((h = calloc(1, sizeof(*h))) == NULL ||
	    (h->hh_name = strdup(name)) == NULL ||
	    (h->hh_value = strdup(value)) == NULL) {
		if (h != NULL)
			free(h->hh_name);
		free(h);
		return (-1);
	}
	TAILQ_INSERT_TAIL(&m->hm_headers, h, hh_entry);
	return (0);
}

/*
 * The head is complete: what frames the body.  hm_body says what comes:
 * HTTP_BODY_NONE, _LENGTH (hm_clen bytes), _CHUNKED, or _CLOSE (to the
 * end of the connection; a response only).
 */
int
http_msg_done(struct http_msg *m)
{
	const char	*method;
	int		 error;

	if (m->hm_chunked && m->hm_clen != -1)
		return (http_error(m, 400,
		    "both Transfer-Encoding and Content-Length"));
	if (m->hm_dir == RELAY_DIR_REQUEST) {
		method = http_method_name(m->hm_method);
		if (m->hm_clen > 0 && (strcmp(method, "TRACE") == 0 ||
		    strcmp(method, "CONNECT") == 0))
			return (http_error(m, 400, "malformed"));
		if ((error = http_host_from_target(m)) != 0)
			return (error);
		if (m->hm_chunked)
			m->hm_body = HTTP_BODY_CHUNKED;
		else if (m->hm_clen > 0)
			m->hm_body = HTTP_BODY_LENGTH;
		else
			m->hm_body = HTTP_BODY_NONE;
		return (0);
	}
	/* 1xx, 204 and 304 have no body; a length on 1xx or 204 is wrong */
	if ((m->hm_code < 200 || m->hm_code == 204) && (m->hm_chunked ||
	    m->hm_clen > 0))
		return (http_error(m, 502, "Bad Gateway"));
	if (m->hm_code < 200 || m->hm_code == 204 || m->hm_code == 304)
		m->hm_body = HTTP_BODY_NONE;
	else if (m->hm_chunked)
		m->hm_body = HTTP_BODY_CHUNKED;
	else if (m->hm_clen != -1)
		m->hm_body = m->hm_clen > 0 ? HTTP_BODY_LENGTH :
		    HTTP_BODY_NONE;
	else {
		m->hm_body = HTTP_BODY_CLOSE;
		m->hm_close = 1;
	}
	return (0);
}

/*
 * The one walk over a head's fields: the first after prev (NULL: from
 * the start) that match(h, arg) accepts.  Fields a rule removed (they
 * go once every rule has logged) count only with removed.
 */
struct http_header *
http_header_walk(struct http_msg *m, struct http_header *prev,
    int (*match)(const struct http_header *, const void *), const void *arg,
    int removed)
{
	struct http_header	*h;

	h = prev == NULL ? TAILQ_FIRST(&m->hm_headers) :
	    TAILQ_NEXT(prev, hh_entry);
	for (; h != NULL; h = TAILQ_NEXT(h, hh_entry))
		if ((removed || !h->hh_removed) && match(h, arg))
			return (h);
	return (NULL);
}

/* A field of that name (without case). */
int
http_header_named(const struct http_header *h, const void *name)
{
	return (strcasecmp(h->hh_name, name) == 0);
}

/* The value of the first field of that name, NULL when there is none. */
const char *
http_header_get(struct http_msg *m, const char *name)
{
	struct http_header	*h;

	if ((h = http_header_walk(m, NULL, http_header_named, name, 1)) ==
	    NULL)
		return (NULL);
	return (h->hh_value);
}

/* A field goes from the head. */
void
http_header_remove(struct http_msg *m, struct http_header *h)
{
	TAILQ_REMOVE(&m->hm_headers, h, hh_entry);
	free(h->hh_name);
	free(h->hh_value);
	free(h);
}

/*
 * A chunk-size line without its CRLF: hex digits, then extensions after
 * ";" (skipped).  Returns -1 for anything else, an overlong line, or a
 * size that does not fit an off_t.
 */
int
http_chunk_line(const char *line, size_t len, off_t *size)
{
	off_t	 n = 0;
	size_t	 i;
	int	 d;

	if (len == 0 || len > HTTP_CHUNKLINE_MAX || http_line_ctl(line, len))
		return (-1);
	for (i = 0; i < len && isxdigit((unsigned char)line[i]); i++) {
		d = isdigit((unsigned char)line[i]) ? line[i] - '0' :
		    tolower((unsigned char)line[i]) - 'a' + 10;
		if (n > (LLONG_MAX - d) / 16)
			return (-1);
		n = n * 16 + d;
	}
	if (i == 0)
		return (-1);
	/* whitespace before the extensions, as RFC 9112 allows */
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i < len && line[i] != ';')
		return (-1);
	*size = n;
	return (0);
}

/*
 * Sessions.  Each direction reads message heads in userland and writes
 * them out again from the parsed model; a body of known length, and each
 * chunk of a chunked one, passes with relay_pass(): spliced with max set
 * to its length where the relay splices.  Then the direction reads a
 * head again.  Requests are answered in order: the methods wait in a
 * queue for their responses (HEAD and CONNECT change how a response is
 * framed).
 */

#define HTTP_PIPELINE_MAX	100	/* requests waiting for answers */

enum http_state {
	HTTP_S_HEAD,		/* a message head, line by line */
	HTTP_S_BODY,		/* toread bytes of a body */
	HTTP_S_CHUNK,		/* a chunk-size line */
	HTTP_S_CHUNKDATA,	/* toread bytes of a chunk */
	HTTP_S_CHUNKEND,	/* the line end after a chunk */
	HTTP_S_TRAILER,		/* trailer fields, to the empty line */
	HTTP_S_RAW		/* all, to the end: a tunnel, or no length */
};

struct http_dir {
	struct http_msg		 hd_msg;
	enum http_state		 hd_state;
	size_t			 hd_trailerlen;
};

struct http_session {
	struct http_dir		 hs_dir[2];
	int			 hs_methods[HTTP_PIPELINE_MAX];
	int			 hs_first;
	int			 hs_nmethods;
	int			 hs_upgrade;	/* a websocket waits */
	int			 hs_paused;	/* the queue was full */
	int			 hs_connecting;	/* a backend is asked for */
	enum relay_verdict	 hs_want;	/* for the core, after the
						   parse (http_run()) */
	int			 hs_lastreq;	/* a request said close */
	struct event		 hs_headev;	/* a request head's deadline */
	int			 hs_closing;	/* the last answer is on */
	/* the heads before the connect */
	struct evbuffer		*hs_pending;
};

static enum relay_verdict
		 http_init(struct rsession *);
static enum relay_verdict
		 http_read(struct ctl_relay_event *);
static enum relay_verdict
		 http_connected(struct rsession *);
static enum relay_verdict
		 http_eof(struct ctl_relay_event *);
static void	 http_nobackend(struct rsession *, enum relay_cfail, int);
static int	 http_ready(struct ctl_relay_event *, struct http_session *);
static void	 http_free(struct rsession *);
static enum relay_verdict
		 http_run(struct ctl_relay_event *);
static int	 http_parse(struct ctl_relay_event *, struct http_session *,
		    struct http_dir *);
static int	 http_head(struct ctl_relay_event *, struct http_session *,
		    struct http_dir *);
static int	 http_request(struct ctl_relay_event *, struct http_session *,
		    struct http_dir *);
static int	 http_request_body(struct ctl_relay_event *, struct http_dir *);
static int	 http_response(struct ctl_relay_event *,
		    struct http_session *, struct http_dir *);
static void	 http_msg_end(struct http_dir *);
static void	 http_head_timeout(int, short, void *);
static int	 http_abort(struct rsession *, int, const char *);

/* after a spliced body or chunk (ro_passed), the parser goes on */
const struct relay_ops relay_http_ops = {
	"http",
	1,
	http_init,
	http_read,
	http_read,
	http_connected,
	http_eof,
	http_nobackend,
	http_free,
	NULL
};

static const struct {
	int		 code;
	const char	*name;
} http_errors[] = {
	{ 400,	"Bad Request" },
	{ 403,	"Forbidden" },
	{ 405,	"Method Not Allowed" },
	{ 406,	"Not Acceptable" },
	{ 408,	"Request Timeout" },
	{ 413,	"Payload Too Large" },
	{ 500,	"Internal Server Error" },
	{ 502,	"Bad Gateway" },
	{ 504,	"Gateway Timeout" }
};

const char *
http_error_name(int code)
{
	size_t	 i;

	for (i = 0; i < nitems(http_errors); i++)
		if (http_errors[i].code == code)
			return (http_errors[i].name);
	return ("Unknown Error");
}

static enum relay_verdict
http_init(struct rsession *con)
{
	struct protocol		*proto = con->se_relay->rl_proto;
	struct http_session	*hs;
	size_t			 max;

	max = proto->httpheaderlen > 0 ? proto->httpheaderlen :
	    RELAY_MAXHEADERLENGTH;
	if ((hs = calloc(1, sizeof(*hs))) == NULL ||
	    (hs->hs_pending = evbuffer_new()) == NULL) {
		free(hs);
		relay_close(con, "out of memory", 1);
		return (RELAY_V_CLOSED);
	}
	http_msg_init(&hs->hs_dir[RELAY_DIR_REQUEST].hd_msg,
	    RELAY_DIR_REQUEST, max);
	http_msg_init(&hs->hs_dir[RELAY_DIR_RESPONSE].hd_msg,
	    RELAY_DIR_RESPONSE, max);
	con->se_priv = hs;
	evtimer_set(&hs->hs_headev, http_head_timeout, con);
	/* the request comes first, then the backend */
	return (RELAY_V_READ);
}

static void
http_free(struct rsession *con)
{
	struct http_session	*hs = con->se_priv;

	if (hs == NULL)
		return;
	http_msg_clear(&hs->hs_dir[0].hd_msg);
	http_msg_clear(&hs->hs_dir[1].hd_msg);
	evtimer_del(&hs->hs_headev);
	evbuffer_free(hs->hs_pending);
	free(hs);
	con->se_priv = NULL;
}

/* Bytes came, or a spliced body or chunk passed: the parser goes on. */
static enum relay_verdict
http_read(struct ctl_relay_event *cre)
{
	return (http_run(cre));
}

/* The backend is connected: what waited for it goes out. */
static enum relay_verdict
http_connected(struct rsession *con)
{
	struct http_session	*hs = con->se_priv;
	enum relay_verdict	 v;

	hs->hs_connecting = 0;
	relay_log_backend(con);
	if (evbuffer_add_buffer(bufferevent_get_output(con->se_out.bev),
	    hs->hs_pending) == -1) {
		relay_close(con, "buffer event failed", 1);
		return (RELAY_V_CLOSED);
	}
	relay_read_on(&con->se_in);
	v = http_run(&con->se_in);
	/* the client's end came while the backend was on its way */
	if (v == RELAY_V_DONE && con->se_in.done)
		return (RELAY_V_EOF);
	return (v);
}

/*
 * The parser of cre's direction, on what its input holds; then what it
 * passed goes out, and what it wants of the core is the answer: a
 * backend (a request's), the other direction's parser (an answer let
 * requests on), or CLOSED.
 */
static enum relay_verdict
http_run(struct ctl_relay_event *cre)
{
	struct http_session	*hs = cre->con->se_priv;
	struct http_dir		*hd = &hs->hs_dir[cre->dir];
	enum relay_verdict	 v;

	if (http_parse(cre, hs, hd) == -1)
		return (RELAY_V_CLOSED);
	/* all that one read brought goes out now, or none of it */
	if (relay_flush_passed(cre) == -1)
		return (RELAY_V_CLOSED);
	/* an answer with "close", or the last request's, is through */
	if (cre->dir == RELAY_DIR_RESPONSE && hs->hs_closing &&
	    hd->hd_state == HTTP_S_HEAD && hd->hd_msg.hm_nlines == 0 &&
	    relay_end_written(cre->dst, "done") == -1)
		return (RELAY_V_CLOSED);
	v = hs->hs_want;
	hs->hs_want = RELAY_V_DONE;
	return (v);
}

/*
 * The other side takes cre's bytes: it is there, and for requests no
 * other backend is asked for (until then they wait in hs_pending).
 */
static int
http_ready(struct ctl_relay_event *cre, struct http_session *hs)
{
	return (cre->dst->bev != NULL &&
	    (cre->dir == RELAY_DIR_RESPONSE || !hs->hs_connecting));
}

/* Where the bytes of cre go: the other side, or wait for its connect. */
static struct evbuffer *
http_out(struct ctl_relay_event *cre, struct http_session *hs)
{
	if (http_ready(cre, hs))
		return (bufferevent_get_output(cre->dst->bev));
	return (hs->hs_pending);
}

/*
 * A line of the input, without its line end, or NULL when it has not
 * all come.  More than max bytes without a line end is an error (*over).
 */
static char *
http_line(struct evbuffer *in, size_t *len, size_t max, int *over)
{
	char	*line;

	*over = 0;
	if ((line = evbuffer_readln(in, len, EVBUFFER_EOL_CRLF)) == NULL &&
	    evbuffer_get_length(in) > max)
		*over = 1;
	return (line);
}

/* A fault of cre's side: its status for a client, 502 for a backend. */
static int
http_fault(struct ctl_relay_event *cre, int code, const char *msg)
{
	return (http_abort(cre->con, cre->dir == RELAY_DIR_REQUEST ? code :
	    502, msg));
}

/* A line passed on as it came, with its CRLF; takes line.  -1: closed. */
static int
http_put_line(struct ctl_relay_event *cre, struct http_session *hs,
    char *line, size_t len)
{
	struct evbuffer	*out = http_out(cre, hs);
	int		 ret;

	ret = evbuffer_add(out, line, len) == -1 ||
	    evbuffer_add(out, "\r\n", 2) == -1 ? -1 : 0;
	free(line);
	if (ret == -1)
		return (http_abort(cre->con, 500, "out of memory"));
	return (0);
}

/*
 * While the backend is on its way, what is parsed waits in hs_pending,
 * up to a head's size and one read more: then reading stops until the
 * connect is through (http_connected).
 */
static int
http_pending_full(struct ctl_relay_event *cre, struct http_session *hs)
{
	struct http_msg	*m = &hs->hs_dir[cre->dir].hd_msg;
	size_t		 max;

	if (http_ready(cre, hs))
		return (0);
	max = (m->hm_maxlen > 0 ? m->hm_maxlen : RELAY_MAXHEADERLENGTH) +
	    RELAY_READ_SIZE;
	if (evbuffer_get_length(hs->hs_pending) < max)
		return (0);
	relay_read_off(cre);
	return (1);
}

/*
 * Body bytes on: to the other side, or into hs_pending before the
 * connect.  1 when the parser may go on (toread decides), 0 when it
 * waits, -1 when the session was closed.
 */
static int
http_pass(struct ctl_relay_event *cre, struct http_session *hs)
{
	if (http_ready(cre, hs))
		return (relay_pass(cre) == -1 ? -1 : 1);
	if (http_pending_full(cre, hs))
		return (0);
	if (relay_take(cre, hs->hs_pending) == -1)
		return (http_abort(cre->con, 500, "out of memory"));
	return (1);
}

/*
 * A request head has begun (some of it is read): it must be through
 * within the protocol's header timeout (ours), so that a client that
 * sends it a byte at a time cannot keep the session for the whole
 * session timeout.
 */
static void
http_head_started(struct ctl_relay_event *cre, struct http_session *hs,
    int begun)
{
	struct timeval	 tv;

	if (cre->dir != RELAY_DIR_REQUEST || !begun ||
	    evtimer_pending(&hs->hs_headev, NULL))
		return;
	tv.tv_sec = cre->con->se_relay->rl_proto->httpheadtimeout;
	tv.tv_usec = 0;
	if (tv.tv_sec > 0)
		evtimer_add(&hs->hs_headev, &tv);
}

static void
http_head_timeout(int fd, short event, void *arg)
{
	(void)fd;
	(void)event;
	(void)http_abort(arg, 408, "request header timeout");
}

/*
 * The steps of http_parse(), one a state: 1 when the state is through
 * and the parser goes on, 0 when it waits for more input (or for the
 * backend), -1 when the session was closed.
 */
static int
http_parse_head(struct ctl_relay_event *cre, struct http_session *hs,
    struct http_dir *hd, struct evbuffer *in)
{
	struct http_msg	*m = &hd->hd_msg;
	char		*line;
	size_t		 len, max;
	int		 code, over;

	if (cre->dir == RELAY_DIR_REQUEST) {
		if (hs->hs_lastreq) {
			/* RFC 9112 9.6: no request after "close" */
			relay_read_off(cre);
			(void)evbuffer_drain(in, evbuffer_get_length(in));
			return (0);
		}
		if (http_pending_full(cre, hs))
			return (0);
		if (hs->hs_nmethods == HTTP_PIPELINE_MAX) {
			/* the answers come first */
			relay_read_off(cre);
			hs->hs_paused = 1;
			return (0);
		}
	}
	max = m->hm_maxlen > 0 ? m->hm_maxlen - m->hm_headerlen :
	    RELAY_MAXHEADERLENGTH;
	if ((line = http_line(in, &len, max + 2, &over)) == NULL) {
		if (!over) {
			http_head_started(cre, hs, evbuffer_get_length(in) > 0);
			return (0);
		}
		return (http_abort(cre->con, cre->dir == RELAY_DIR_REQUEST ?
		    413 : 502, cre->dir == RELAY_DIR_REQUEST ?
		    "request headers too large" :
		    "response headers too large"));
	}
	code = http_msg_line(m, line, len);
	free(line);
	if (code != 0)
		return (http_abort(cre->con, code, m->hm_error));
	if (!m->hm_done) {
		http_head_started(cre, hs, 1);
		return (1);
	}
	if (cre->dir == RELAY_DIR_REQUEST)
		evtimer_del(&hs->hs_headev);
	if (http_head(cre, hs, hd) == -1)
		return (-1);
	return (1);
}

/* Body bytes, or a chunk's: passed on, spliced where the relay splices. */
static int
http_parse_body(struct ctl_relay_event *cre, struct http_session *hs,
    struct http_dir *hd)
{
	int	 ret;

	if (cre->toread > 0) {
		if ((ret = http_pass(cre, hs)) != 1)
			return (ret);
		if (cre->toread > 0)
			return (0);
	}
	if (hd->hd_state == HTTP_S_CHUNKDATA)
		hd->hd_state = HTTP_S_CHUNKEND;
	else
		http_msg_end(hd);
	return (1);
}

static int
http_parse_chunk(struct ctl_relay_event *cre, struct http_session *hs,
    struct http_dir *hd, struct evbuffer *in)
{
	char	*line;
	size_t	 len;
	off_t	 size;
	int	 over;

	if ((line = http_line(in, &len, HTTP_CHUNKLINE_MAX, &over)) == NULL)
		return (over ? http_fault(cre, 400, "chunk size too long") : 0);
	if (http_chunk_line(line, len, &size) == -1) {
		free(line);
		return (http_fault(cre, 400, "invalid chunk size"));
	}
	if (http_put_line(cre, hs, line, len) == -1)
		return (-1);
	if (size == 0) {
		hd->hd_state = HTTP_S_TRAILER;
		hd->hd_trailerlen = 0;
	} else {
		cre->toread = size;
		hd->hd_state = HTTP_S_CHUNKDATA;
	}
	return (1);
}

static int
http_parse_chunkend(struct ctl_relay_event *cre, struct http_session *hs,
    struct http_dir *hd, struct evbuffer *in)
{
	char	*line;
	size_t	 len;
	int	 over;

	if ((line = http_line(in, &len, 1, &over)) == NULL)
		return (over ? http_fault(cre, 400, "invalid chunk") : 0);
	free(line);
	if (len != 0)
		return (http_fault(cre, 400, "invalid chunk"));
	if (evbuffer_add(http_out(cre, hs), "\r\n", 2) == -1)
		return (http_abort(cre->con, 500, "out of memory"));
	hd->hd_state = HTTP_S_CHUNK;
	return (1);
}

static int
http_parse_trailer(struct ctl_relay_event *cre, struct http_session *hs,
    struct http_dir *hd, struct evbuffer *in)
{
	struct http_msg	*m = &hd->hd_msg;
	char		*line;
	size_t		 len, max;
	int		 over;

	max = m->hm_maxlen > 0 ? m->hm_maxlen : RELAY_MAXHEADERLENGTH;
	if ((line = http_line(in, &len, max + 2, &over)) == NULL)
		return (over ? http_fault(cre, 413, "trailer too large") : 0);
	hd->hd_trailerlen += len;
	if (hd->hd_trailerlen > max || http_line_ctl(line, len)) {
		free(line);
		return (http_fault(cre, 400, "invalid trailer"));
	}
	if (http_put_line(cre, hs, line, len) == -1)
		return (-1);
	if (len == 0)
		http_msg_end(hd);
	return (1);
}

/* Messages of one direction, from what its input holds. */
static int
http_parse(struct ctl_relay_event *cre, struct http_session *hs,
    struct http_dir *hd)
{
	struct evbuffer	*in = bufferevent_get_input(cre->bev);
	int		 ret = 1;

	/*
	 * As OpenBSD: the backend is asked for once the first head is
	 * through, and what follows it (its body) is parsed while it
	 * connects; an invalid body ends a session that had a backend.
	 */
	while (ret == 1 && !cre->splicing && hs->hs_want != RELAY_V_CONNECT) {
		switch (hd->hd_state) {
		case HTTP_S_HEAD:
			ret = http_parse_head(cre, hs, hd, in);
			break;
		case HTTP_S_BODY:
		case HTTP_S_CHUNKDATA:
			ret = http_parse_body(cre, hs, hd);
			break;
		case HTTP_S_CHUNK:
			ret = http_parse_chunk(cre, hs, hd, in);
			break;
		case HTTP_S_CHUNKEND:
			ret = http_parse_chunkend(cre, hs, hd, in);
			break;
		case HTTP_S_TRAILER:
			ret = http_parse_trailer(cre, hs, hd, in);
			break;
		case HTTP_S_RAW:
			cre->toread = TOREAD_UNLIMITED;
			return (http_pass(cre, hs) == -1 ? -1 : 0);
		}
	}
	return (ret == -1 ? -1 : 0);
}

/* Some field of that name lists the token. */
static int
http_field_has(struct http_msg *m, const char *name, const char *token)
{
	struct http_header	*h = NULL;

	while ((h = http_header_walk(m, h, http_header_named, name, 1)) !=
	    NULL)
		if (http_has_token(h->hh_value, token))
			return (1);
	return (0);
}

/* Copies s to p, returns the byte after it. */
static char *
http_cat(char *p, const char *s, size_t len)
{
	memcpy(p, s, len);
	return (p + len);
}

/*
 * The head as it goes on: from the model, Connection: close added.  It
 * is written in one piece into space reserved in out, without printf.
 */
int
http_write_head(struct evbuffer *out, struct http_msg *m, int addclose)
{
	static const char	 closehdr[] = "Connection: close\r\n";
	struct http_header	*h;
	struct evbuffer_iovec	 v;
	const char		*method = NULL;
	char			*p;
	size_t			 len;

	/* "HTTP/1.x" and CRLF; a request: "METHOD TARGET "; else " NNN" */
	len = 8 + 2;
	if (m->hm_dir == RELAY_DIR_REQUEST) {
		method = http_method_name(m->hm_method);
		len += strlen(method) + 1 + strlen(m->hm_target) + 1;
	} else {
		len += 4;
		if (*m->hm_reason != '\0')
			len += 1 + strlen(m->hm_reason);
	}
	TAILQ_FOREACH(h, &m->hm_headers, hh_entry)
		len += strlen(h->hh_name) + 2 + strlen(h->hh_value) + 2;
	if (addclose)
		len += sizeof(closehdr) - 1;
	len += 2;

	if (evbuffer_reserve_space(out, len, &v, 1) != 1 || v.iov_len < len)
		return (-1);
	p = v.iov_base;
	if (method != NULL) {
		p = http_cat(p, method, strlen(method));
		*p++ = ' ';
		p = http_cat(p, m->hm_target, strlen(m->hm_target));
		*p++ = ' ';
	}
	p = http_cat(p, "HTTP/1.", 7);
	*p++ = '0' + (m->hm_minor != 0);
	if (method == NULL) {
		*p++ = ' ';
		*p++ = '0' + m->hm_code / 100 % 10;
		*p++ = '0' + m->hm_code / 10 % 10;
		*p++ = '0' + m->hm_code % 10;
		if (*m->hm_reason != '\0') {
			*p++ = ' ';
			p = http_cat(p, m->hm_reason, strlen(m->hm_reason));
		}
	}
	p = http_cat(p, "\r\n", 2);
	TAILQ_FOREACH(h, &m->hm_headers, hh_entry) {
		p = http_cat(p, h->hh_name, strlen(h->hh_name));
		p = http_cat(p, ": ", 2);
		p = http_cat(p, h->hh_value, strlen(h->hh_value));
		p = http_cat(p, "\r\n", 2);
	}
	if (addclose)
		p = http_cat(p, closehdr, sizeof(closehdr) - 1);
	p = http_cat(p, "\r\n", 2);
	v.iov_len = p - (char *)v.iov_base;
	return (evbuffer_commit_space(out, &v, 1));
}

static int
http_head(struct ctl_relay_event *cre, struct http_session *hs,
    struct http_dir *hd)
{
	if (cre->dir == RELAY_DIR_REQUEST)
		return (http_request(cre, hs, hd));
	return (http_response(cre, hs, hd));
}

/*
 * What follows a request head, as OpenBSD frames it: CONNECT is a
 * tunnel; GET, HEAD, COPY and MOVE have no body but a chunked one (a
 * Content-Length goes from the head, and what follows is the next
 * request); the other methods but TRACE have the body their length or
 * chunks say, and without either it runs to the client's end.  1 when
 * the rest of the connection passes as it comes.
 */
static int
http_request_body(struct ctl_relay_event *cre, struct http_dir *hd)
{
	static const char	*nobody[] = { "GET", "HEAD", "COPY", "MOVE" };
	struct http_msg		*m = &hd->hd_msg;
	struct http_header	*h, *next;
	const char		*method = http_method_name(m->hm_method);
	size_t			 i;

	if (strcmp(method, "CONNECT") == 0) {
		hd->hd_state = HTTP_S_RAW;
		return (1);
	}
	if (m->hm_body == HTTP_BODY_CHUNKED) {
		hd->hd_state = HTTP_S_CHUNK;
		return (0);
	}
	for (i = 0; i < nitems(nobody); i++)
		if (strcmp(method, nobody[i]) == 0)
			break;
	if (i < nitems(nobody)) {
		for (h = TAILQ_FIRST(&m->hm_headers); h != NULL; h = next) {
			next = TAILQ_NEXT(h, hh_entry);
			if (strcasecmp(h->hh_name, "Content-Length") == 0)
				http_header_remove(m, h);
		}
		return (0);
	}
	if (m->hm_body == HTTP_BODY_LENGTH) {
		cre->toread = m->hm_clen;
		hd->hd_state = HTTP_S_BODY;
		return (0);
	}
	if (m->hm_clen == -1 && strcmp(method, "TRACE") != 0) {
		hd->hd_state = HTTP_S_RAW;
		return (1);
	}
	return (0);
}

static int
http_request(struct ctl_relay_event *cre, struct http_session *hs,
    struct http_dir *hd)
{
	struct rsession		*con = cre->con;
	struct protocol		*proto = con->se_relay->rl_proto;
	struct http_msg		*m = &hd->hd_msg;
	const char		*method = http_method_name(m->hm_method);
	char			 log[32], line[RELAY_REQUEST_SIZE];
	struct relay_table	*table;
	struct http_dir		*rd = &hs->hs_dir[RELAY_DIR_RESPONSE];
	int			 addclose = 0, code;

	if ((code = http_rules(cre, m, &table)) != 0)
		return (http_abort(con, code, NULL));
	/* no forward to: the relay's own tables again, as OpenBSD */
	if (table != con->se_table) {
		con->se_table = table;
		if (con->se_cstate == RELAY_CONN_CONNECTED || hs->hs_connecting) {
			/* another backend: once the last answer is through */
			if (hs->hs_nmethods > 0 ||
			    rd->hd_state != HTTP_S_HEAD ||
			    rd->hd_msg.hm_nlines > 0)
				return (http_abort(con, 502,
				    "forward to another table with answers "
				    "pending"));
			hs->hs_connecting = 1;
			hs->hs_want = RELAY_V_RECONNECT;
			relay_read_off(cre);
		}
	}
	if (http_field_has(m, "Upgrade", "websocket")) {
		if ((proto->httpflags & HTTPFLAG_WEBSOCKETS) == 0)
			return (http_abort(con, 403, "Websocket Forbidden"));
		if (!m->hm_upgrade)
			return (http_abort(con, 400,
			    "Bad Websocket Request"));
		if (strcmp(method, "GET") != 0)
			return (http_abort(con, 405,
			    "Websocket Method Not Allowed"));
		hs->hs_upgrade = 1;
	}

	hs->hs_methods[(hs->hs_first + hs->hs_nmethods++) %
	    HTTP_PIPELINE_MAX] = m->hm_method;
	hs->hs_lastreq = m->hm_close;
	(void)snprintf(log, sizeof(log), " %s", method);
	relay_log(con, log);
	(void)snprintf(line, sizeof(line), "%s %s HTTP/1.%d", method,
	    m->hm_target, m->hm_minor);
	relay_request(con, line);

	if (http_request_body(cre, hd) == 1)
		addclose = !http_field_has(m, "Connection", "close");

	if (http_write_head(http_out(cre, hs), m, addclose) == -1)
		return (http_abort(con, 500, "out of memory"));
	if (hd->hd_state == HTTP_S_HEAD)
		http_msg_end(hd);

	if (con->se_cstate != RELAY_CONN_CONNECTED && !hs->hs_connecting) {
		/* parsing goes on once the connect began, into hs_pending */
		hs->hs_connecting = 1;
		hs->hs_want = RELAY_V_CONNECT;
	}
	return (0);
}

static int
http_response(struct ctl_relay_event *cre, struct http_session *hs,
    struct http_dir *hd)
{
	struct rsession		*con = cre->con;
	struct protocol		*proto = con->se_relay->rl_proto;
	struct http_msg		*m = &hd->hd_msg;
	struct relay_table	*table;
	const char		*method;
	int			 addclose = 0, upgrade = 0, code;

	if (m->hm_code < 200 && m->hm_code != 101) {
		/* 100 Continue and the like: the answer is still to come */
		if (http_write_head(http_out(cre, hs), m, 0) == -1)
			return (http_abort(con, 500, "out of memory"));
		http_msg_end(hd);
		return (0);
	}
	if (hs->hs_nmethods == 0)
		return (http_abort(con, 502, "response without request"));
	if ((code = http_rules(cre, m, &table)) != 0)
		return (http_abort(con, code, NULL));
	/* the end of an answer, as OpenBSD marks it when rules log */
	if (con->se_haslog)
		relay_log(con, ";");
	method = http_method_name(hs->hs_methods[hs->hs_first]);
	hs->hs_first = (hs->hs_first + 1) % HTTP_PIPELINE_MAX;
	hs->hs_nmethods--;
	/* the last answer: the client's connection ends after it */
	if (m->hm_close || (hs->hs_lastreq && hs->hs_nmethods == 0))
		hs->hs_closing = 1;

	if (m->hm_code == 101) {
		if (!hs->hs_upgrade || !m->hm_upgrade ||
		    !http_field_has(m, "Upgrade", "websocket") ||
		    (proto->httpflags & HTTPFLAG_WEBSOCKETS) == 0)
			return (http_abort(con, 502,
			    "Bad Websocket Gateway"));
		/* a websocket: both directions pass as they come */
		upgrade = 1;
		hd->hd_state = HTTP_S_RAW;
	} else if (strcmp(method, "CONNECT") == 0 && m->hm_code < 300)
		hd->hd_state = HTTP_S_RAW;
	else if (strcmp(method, "HEAD") == 0)
		hd->hd_state = HTTP_S_HEAD;
	else {
		switch (m->hm_body) {
		case HTTP_BODY_LENGTH:
			cre->toread = m->hm_clen;
			hd->hd_state = HTTP_S_BODY;
			break;
		case HTTP_BODY_CHUNKED:
			hd->hd_state = HTTP_S_CHUNK;
			break;
		case HTTP_BODY_CLOSE:
			/* the end of the connection ends the body */
			hd->hd_state = HTTP_S_RAW;
			addclose = !http_field_has(m, "Connection", "close");
			break;
		}
	}
	hs->hs_upgrade = 0;

	if (http_write_head(http_out(cre, hs), m, addclose) == -1)
		return (http_abort(con, 500, "out of memory"));
	/* the requests that waited go on, once this parse is through */
	if (upgrade) {
		con->se_in.toread = TOREAD_UNLIMITED;
		hs->hs_dir[RELAY_DIR_REQUEST].hd_state = HTTP_S_RAW;
		hs->hs_want = RELAY_V_OTHER;
	}
	if (hs->hs_paused) {
		hs->hs_paused = 0;
		relay_read_on(&con->se_in);
		hs->hs_want = RELAY_V_OTHER;
	}
	if (hd->hd_state == HTTP_S_HEAD)
		http_msg_end(hd);
	return (0);
}

/* A message ended: the direction reads the next head. */
static void
http_msg_end(struct http_dir *hd)
{
	http_msg_clear(&hd->hd_msg);
	hd->hd_state = HTTP_S_HEAD;
}

/*
 * End of file from cre.  Between messages, or in a stream, it is the
 * usual half-close; within a body or head the message was cut short,
 * and the other side must not take it for complete: close it.
 */
static enum relay_verdict
http_eof(struct ctl_relay_event *cre)
{
	struct rsession		*con = cre->con;
	struct http_session	*hs = con->se_priv;
	struct http_dir		*hd = &hs->hs_dir[cre->dir];

	switch (hd->hd_state) {
	case HTTP_S_RAW:
		/*
		 * The close ended the client's last answer: nothing more is
		 * read from the client (its next request would be refused),
		 * so its connection ends once the answer is written, rather
		 * than half-closed while waiting for an end never read.  A
		 * tunnel (CONNECT, websocket) half-closes as tcp relays do.
		 */
		if (cre->dir == RELAY_DIR_RESPONSE && hs->hs_closing &&
		    hs->hs_dir[RELAY_DIR_REQUEST].hd_state != HTTP_S_RAW) {
			relay_end(cre, "last http content read (done)");
			return (RELAY_V_CLOSED);
		}
		return (RELAY_V_EOF);
	case HTTP_S_HEAD:
		if (hd->hd_msg.hm_nlines == 0 &&
		    evbuffer_get_length(bufferevent_get_input(cre->bev)) == 0)
			return (RELAY_V_EOF);
		relay_end(cre, "last http read (done)");
		return (RELAY_V_CLOSED);
	case HTTP_S_BODY:
		relay_end(cre, "last http content read");
		return (RELAY_V_CLOSED);
	default:
		relay_end(cre, "last http chunk read (done)");
		return (RELAY_V_CLOSED);
	}
}

/* No backend: OpenBSD's status and page for why. */
static void
http_nobackend(struct rsession *con, enum relay_cfail why, int error)
{
	static const struct {
		int		 code;
		const char	*page;
	} fails[] = {
		{ 502, "session failed" },	/* RELAY_CFAIL_NOHOST */
		{ 502, "session failed" },	/* RELAY_CFAIL_SESSION */
		{ 500, "socket error" },	/* RELAY_CFAIL_SOCKET */
		{ 504, "connect timeout" }	/* RELAY_CFAIL_TIMEOUT */
	};
	char	*msg = NULL;

	if (why == RELAY_CFAIL_SOCKET &&
	    asprintf(&msg, "%s: %s", fails[why].page, strerror(error)) == -1)
		msg = NULL;
	(void)http_abort(con, fails[why].code,
	    msg != NULL ? msg : fails[why].page);
	free(msg);
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

/*
 * A request relayd refuses, or a response it cannot pass.  With "return
 * error" the client gets OpenBSD's error page first, unless an answer
 * is on its way to it; the session closes.  Returns -1.
 */
static int
http_abort(struct rsession *con, int code, const char *msg)
{
	struct protocol		*proto = con->se_relay->rl_proto;
	struct evbuffer		*out;
	const char		*name = http_error_name(code);
	char			*body = NULL, *page = NULL, *reason = NULL;
	char			 date[64];
	struct tm		 tm;
	time_t			 t;
	ssize_t			 n;

	if (msg == NULL)
		msg = name;
	if ((proto->flags & F_RETURN) == 0) {
		relay_close(con, msg, 0);
		return (-1);
	}

	out = con->se_in.bev != NULL ?
	    bufferevent_get_output(con->se_in.bev) : NULL;
	t = time(NULL);
	if (out != NULL && evbuffer_get_length(out) == 0 &&
	    !con->se_out.splicing &&
	    gmtime_r(&t, &tm) != NULL &&
	    strftime(date, sizeof(date), "%a, %d %b %Y %T %Z", &tm) > 0 &&
	    (body = http_error_page(con, code, msg)) != NULL) {
		if (asprintf(&page, "HTTP/1.0 %03d %s\r\n"
		    "Date: %s\r\nServer: %s\r\nConnection: close\r\n"
		    "Content-Type: text/html\r\nContent-Length: %zu\r\n\r\n%s",
		    code, name, date, HTTP_SERVERNAME, strlen(body), body) != -1)
			/* as OpenBSD does: one write, what fits goes */
			if ((n = relay_send_now(&con->se_in, page,
			    strlen(page))) > 0)
				con->se_out.copied += n;
		free(body);
		free(page);
	}
	if (asprintf(&reason, "%s (%03d %s)", msg, code, name) == -1)
		reason = NULL;
	relay_close(con, reason != NULL ? reason : msg, 1);
	free(reason);
	return (-1);
}
