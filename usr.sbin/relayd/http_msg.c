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
 * HTTP/1.x messages, for the HTTP relays (relay_http.c), HTTP/2's
 * backends (relay_h2.c), the rules (relay_http_rules.c) and relayd -nv
 * (printconf.c): the parser of message heads, line by line (the request
 * or status line, the header fields, and what frames the body), the
 * header list, and the framer of a message's body (http_frame()).  It
 * knows nothing of sessions; every error of a head is the
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

#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "relayd.h"
#include "http.h"

static int	 http_error(struct http_msg *, int, const char *);
static int	 http_first_line(struct http_msg *, char *);
static int	 http_field(struct http_msg *, char *);
static const char *
		 http_length(const char *, off_t *);
static int	 http_host_agrees(const char *, const char *);
static const char *http_target_host(const char *, size_t *);
static int	 http_host_from_target(struct http_msg *);
static char	*http_frame_headline(struct evbuffer *, char *, size_t,
		    size_t *);
static int	 http_frame_over(struct http_framer *, struct http_msg *,
		    struct evbuffer *, size_t, int, const char *);
static int	 http_frame_error(struct http_framer *, struct http_msg *, int,
		    const char *);
static int	 http_frame_lineout(struct http_framer *, char *, size_t,
		    enum http_fstate);

static const char *http_methods[] = HTTP_METHOD_NAMES;

/* 1 + index, 0 for an unknown method. */
int
http_method_byname(const char *name)
{
	size_t	 i;

	for (i = 0; i < nitems(http_methods); i++)
		if (http_methods[i][0] == name[0] &&
		    strcmp(http_methods[i], name) == 0)
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

	while ((h = TAILQ_FIRST(&m->hm_headers)) != NULL)
		http_header_remove(m, h);
	free(m->hm_arena);
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
int
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

/*
 * A field at the end of the head: 0, or -1 without memory.  Its name and
 * value are in the same piece of memory; a value set later has its own
 * (http_header_value()).  The pieces come one after another from the
 * message's arena, one allocation of HTTP_ARENA_SIZE for the fields of
 * most heads (a field an allocation cost 16 of them for a gRPC call);
 * those that do not fit have their own.  The arena goes with the
 * message (http_msg_clear()).
 */
int
http_header_add(struct http_msg *m, const char *name, const char *value)
{
	struct http_header	*h;
	size_t			 nlen = strlen(name) + 1;
	size_t			 vlen = strlen(value) + 1;
	size_t			 need = sizeof(*h) + nlen + vlen;
	size_t			 step = (need + 15) & ~(size_t)15;

	if (m->hm_arena == NULL && step <= HTTP_ARENA_SIZE) {
		if ((m->hm_arena = malloc(HTTP_ARENA_SIZE)) == NULL)
			return (-1);
		m->hm_arenaused = 0;
	}
	if (m->hm_arena != NULL && HTTP_ARENA_SIZE - m->hm_arenaused >= step) {
		h = (struct http_header *)(void *)(m->hm_arena +
		    m->hm_arenaused);
		m->hm_arenaused += step;
	} else if ((h = malloc(need)) == NULL)
		return (-1);
	h->hh_name = h->hh_buf;
	h->hh_value = h->hh_buf + nlen;
	memcpy(h->hh_name, name, nlen);
	memcpy(h->hh_value, value, vlen);
	h->hh_removed = 0;
	TAILQ_INSERT_TAIL(&m->hm_headers, h, hh_entry);
	return (0);
}

/* A field's value is another one: 0, or -1 without memory. */
int
http_header_value(struct http_header *h, const char *value)
{
	char	*v;

	if ((v = strdup(value)) == NULL)
		return (-1);
	if (h->hh_value != h->hh_buf + strlen(h->hh_name) + 1)
		free(h->hh_value);
	h->hh_value = v;
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

/*
 * A field of that name (without case).  The first letters first: most
 * fields a walk passes differ there, and a call of strcasecmp() costs
 * more than the test.
 */
int
http_header_named(const struct http_header *h, const void *name)
{
	const char	*a = h->hh_name, *b = name;

	return (((a[0] ^ b[0]) & ~0x20) == 0 && strcasecmp(a, b) == 0);
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
	uintptr_t	 a = (uintptr_t)m->hm_arena, p = (uintptr_t)h;

	TAILQ_REMOVE(&m->hm_headers, h, hh_entry);
	if (h->hh_value != h->hh_buf + strlen(h->hh_name) + 1)
		free(h->hh_value);
	/* in the arena it stays, until the message goes */
	if (a == 0 || p < a || p >= a + HTTP_ARENA_SIZE)
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
 * The framer: one step of a message's reading over in, what it found
 * (enum http_fevent).  Lines are taken from in as they come whole;
 * body bytes are left for the user, who moves them its own way (the
 * HTTP relay passes them with the splice engine, HTTP/2 copies them
 * into DATA frames).  One copy of HTTP/1.1's framing rules (RFC 9112
 * 6, 7): the head within headerlen, a chunk size within
 * HTTP_CHUNKLINE_MAX, CRLF after a chunk's data, the trailer within
 * headerlen and without control characters.  An error's status is
 * the message's: the client's (400, 413) in a request, 502 in a
 * response.
 */
#define HTTP_FRAME_LINE(in, len)	evbuffer_readln((in), (len), \
				    EVBUFFER_EOL_CRLF)

/*
 * A head's line, as evbuffer_readln() reads it: in buf when it fits (a
 * head's lines are short), else allocated.  NULL: no whole line yet.
 */
static char *
http_frame_headline(struct evbuffer *in, char *buf, size_t size,
    size_t *len)
{
	struct evbuffer_ptr	 p;
	size_t			 eol;

	p = evbuffer_search_eol(in, NULL, &eol, EVBUFFER_EOL_CRLF);
	if (p.pos == -1)
		return (NULL);
	if ((size_t)p.pos + eol > size)
		return (HTTP_FRAME_LINE(in, len));
	if (evbuffer_copyout(in, buf, p.pos + eol) == -1 ||
	    evbuffer_drain(in, p.pos + eol) == -1)
		return (NULL);
	buf[p.pos] = '\0';
	*len = p.pos;
	return (buf);
}

int
http_frame(struct http_framer *fr, struct http_msg *m, struct evbuffer *in)
{
	char	*line, buf[512];
	size_t	 len, max;
	int	 code;

	fr->fr_line = NULL;
	switch (fr->fr_state) {
	case HTTP_F_HEAD:
		max = m->hm_maxlen > 0 ? m->hm_maxlen - m->hm_headerlen :
		    RELAY_MAXHEADERLENGTH;
		if ((line = http_frame_headline(in, buf, sizeof(buf),
		    &len)) == NULL)
			return (http_frame_over(fr, m, in, max + 2, 413,
			    m->hm_dir == RELAY_DIR_REQUEST ?
			    "request headers too large" :
			    "response headers too large"));
		code = http_msg_line(m, line, len);
		if (line != buf)
			free(line);
		if (code != 0) {
			fr->fr_code = code;
			fr->fr_error = m->hm_error;
			return (HTTP_FR_ERROR);
		}
		return (m->hm_done ? HTTP_FR_HEAD : HTTP_FR_HEADLINE);
	case HTTP_F_BODY:
	case HTTP_F_CHUNKDATA:
	case HTTP_F_RAW:
		return (HTTP_FR_DATA);
	case HTTP_F_CHUNK:
		if ((line = HTTP_FRAME_LINE(in, &len)) == NULL)
			return (http_frame_over(fr, m, in, HTTP_CHUNKLINE_MAX,
			    400, "chunk size too long"));
		if (http_chunk_line(line, len, &fr->fr_size) == -1) {
			free(line);
			return (http_frame_error(fr, m, 400,
			    "invalid chunk size"));
		}
		if (fr->fr_size == 0) {
			fr->fr_trailerlen = 0;
			return (http_frame_lineout(fr, line, len,
			    HTTP_F_TRAILER));
		}
		return (http_frame_lineout(fr, line, len, HTTP_F_CHUNKDATA));
	case HTTP_F_CHUNKEND:
		if ((line = HTTP_FRAME_LINE(in, &len)) == NULL)
			return (http_frame_over(fr, m, in, 1, 400,
			    "invalid chunk"));
		if (len != 0) {
			free(line);
			return (http_frame_error(fr, m, 400, "invalid chunk"));
		}
		return (http_frame_lineout(fr, line, len, HTTP_F_CHUNK));
	case HTTP_F_TRAILER:
		max = m->hm_maxlen > 0 ? m->hm_maxlen : RELAY_MAXHEADERLENGTH;
		if ((line = HTTP_FRAME_LINE(in, &len)) == NULL)
			return (http_frame_over(fr, m, in, max + 2, 413,
			    "trailer too large"));
		fr->fr_trailerlen += len;
		if (fr->fr_trailerlen > max || http_line_ctl(line, len)) {
			free(line);
			return (http_frame_error(fr, m, 400,
			    "invalid trailer"));
		}
		if (len > 0)
			return (http_frame_lineout(fr, line, len,
			    HTTP_F_TRAILER));
		(void)http_frame_lineout(fr, line, len, HTTP_F_HEAD);
		return (HTTP_FR_END);
	}
	return (HTTP_FR_MORE);
}

/*
 * A body's bytes, or a chunk's, are all through: 1 when that ended the
 * message, 0 when the chunk's line end comes next.
 */
int
http_frame_data_done(struct http_framer *fr)
{
	if (fr->fr_state == HTTP_F_CHUNKDATA) {
		fr->fr_state = HTTP_F_CHUNKEND;
		return (0);
	}
	fr->fr_state = HTTP_F_HEAD;
	return (1);
}

/* No whole line: wait, unless more than max bytes came without an end. */
static int
http_frame_over(struct http_framer *fr, struct http_msg *m,
    struct evbuffer *in, size_t max, int code, const char *why)
{
	if (evbuffer_get_length(in) <= max)
		return (HTTP_FR_MORE);
	return (http_frame_error(fr, m, code, why));
}

static int
http_frame_error(struct http_framer *fr, struct http_msg *m, int code,
    const char *why)
{
	fr->fr_code = m->hm_dir == RELAY_DIR_REQUEST ? code : 502;
	fr->fr_error = why;
	return (HTTP_FR_ERROR);
}

/* A framing line for the user, and the state it leads to. */
static int
http_frame_lineout(struct http_framer *fr, char *line, size_t len,
    enum http_fstate next)
{
	fr->fr_line = line;
	fr->fr_len = len;
	fr->fr_linestate = fr->fr_state;
	fr->fr_state = next;
	return (HTTP_FR_LINE);
}

/* The statuses relayd answers itself, and their reason phrases. */
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
	{ 429,	"Too Many Requests" },
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
