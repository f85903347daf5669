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
 * The HTTP relay.  So far its parser of HTTP/1.x message heads, line by
 * line: the request or status line, the header fields, and what frames
 * the body.  It knows nothing of sessions; every error is the status code relayd answers
 * with (OpenBSD's where it has one, RFC 9112's where it is silent):
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
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "relayd.h"

#define HTTP_CHUNKLINE_MAX	1024	/* size and extensions */

static int	 http_error(struct http_msg *, int);
static int	 http_first_line(struct http_msg *, char *);
static int	 http_field(struct http_msg *, char *);
static int	 http_length(const char *, off_t *);

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

/* A fault of the client is its status code; one of the backend is 502. */
static int
http_error(struct http_msg *m, int code)
{
	return (m->hm_dir == RELAY_DIR_RESPONSE ? 502 : code);
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
	char	*copy;
	int	 ret;

	if (m->hm_done)
		return (http_error(m, 400));
	/* a NUL or a bare CR anywhere is a smuggling attempt */
	if (memchr(line, '\0', len) != NULL || memchr(line, '\r', len) != NULL)
		return (http_error(m, 400));
	m->hm_headerlen += len + 2;
	if (m->hm_maxlen > 0 && m->hm_headerlen > m->hm_maxlen)
		return (http_error(m, 413));
	if (len == 0) {
		if (m->hm_nlines == 0)
			return (http_error(m, 406));
		m->hm_done = 1;
		return (http_msg_done(m));
	}
	if ((copy = strndup(line, len)) == NULL)
		return (http_error(m, 500));
	ret = m->hm_nlines++ == 0 ? http_first_line(m, copy) :
	    http_field(m, copy);
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
		return (http_error(m, m->hm_dir == RELAY_DIR_REQUEST &&
		    *line != '\0' && http_method_byname(line) == 0 ? 500 :
		    400));
	*sp1++ = '\0';
	if (m->hm_dir == RELAY_DIR_REQUEST) {
		/* METHOD SP target SP HTTP/1.x */
		if (*line == '\0')
			return (406);
		if ((sp2 = strchr(sp1, ' ')) == NULL)
			return (400);
		*sp2++ = '\0';
		if ((m->hm_method = http_method_byname(line)) == 0)
			return (500);
		if (*sp1 == '\0' || strchr(sp1, ' ') != NULL ||
		    strchr(sp1, '\t') != NULL || http_version(m, sp2) == -1)
			return (400);
		if ((m->hm_target = strdup(sp1)) == NULL)
			return (500);
		/* HTTP/1.0 closes after the answer unless asked to keep */
		m->hm_close = m->hm_minor == 0;
		return (0);
	}
	/* HTTP/1.x SP 3DIGIT SP reason */
	if (http_version(m, line) == -1)
		return (502);
	if ((sp2 = strchr(sp1, ' ')) != NULL)
		*sp2++ = '\0';
	if (strlen(sp1) != 3 || !isdigit((unsigned char)sp1[0]) ||
	    !isdigit((unsigned char)sp1[1]) ||
	    !isdigit((unsigned char)sp1[2]))
		return (502);
	m->hm_code = strtonum(sp1, 100, 999, &errstr);
	if (errstr != NULL)
		return (502);
	if ((m->hm_reason = strdup(sp2 != NULL ? sp2 : "")) == NULL)
		return (502);
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
	struct http_header	*h;
	char			*colon, *value, *end;
	off_t			 len;

	/* obsolete line folding, or whitespace before the name */
	if (*line == ' ' || *line == '\t')
		return (http_error(m, 400));
	if ((colon = strchr(line, ':')) == NULL || colon == line)
		return (http_error(m, 400));
	*colon = '\0';
	for (end = line; *end != '\0'; end++)
		if (!http_tchar((unsigned char)*end))
			return (http_error(m, 400));
	value = colon + 1;
	while (*value == ' ' || *value == '\t')
		value++;
	end = value + strlen(value);
	while (end > value && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';

	if (strcasecmp(line, "Host") == 0 && m->hm_dir == RELAY_DIR_REQUEST &&
	    http_header_get(m, "Host") != NULL)
		return (400);
	if (strcasecmp(line, "Content-Length") == 0) {
		if (http_length(value, &len) == -1)
			return (http_error(m, 500));
		if (m->hm_clen != -1 && m->hm_clen != len)
			return (http_error(m, 400));
		m->hm_clen = len;
	}
	if (strcasecmp(line, "Transfer-Encoding") == 0) {
		/* only chunked, and only once */
		if (strcasecmp(value, "chunked") != 0 || m->hm_chunked)
			return (http_error(m, 400));
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

	if ((h = calloc(1, sizeof(*h))) == NULL ||
	    (h->hh_name = strdup(line)) == NULL ||
	    (h->hh_value = strdup(value)) == NULL) {
		if (h != NULL) {
			free(h->hh_name);
			free(h);
		}
		return (http_error(m, 500));
	}
	/* repeated fields stay, in the order they came */
	TAILQ_INSERT_TAIL(&m->hm_headers, h, hh_entry);
	return (0);
}

/* Content-Length: digits only, no sign, no overflow. */
static int
http_length(const char *s, off_t *len)
{
	off_t	 n = 0;

	if (*s == '\0')
		return (-1);
	for (; *s != '\0'; s++) {
		if (!isdigit((unsigned char)*s))
			return (-1);
		if (n > (LLONG_MAX - 9) / 10)
			return (-1);
		n = n * 10 + (*s - '0');
	}
	*len = n;
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

	if (m->hm_chunked && m->hm_clen != -1)
		return (http_error(m, 400));
	if (m->hm_dir == RELAY_DIR_REQUEST) {
		method = http_method_name(m->hm_method);
		if (m->hm_clen > 0 && (strcmp(method, "TRACE") == 0 ||
		    strcmp(method, "CONNECT") == 0))
			return (400);
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
		return (502);
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

/* The value of the first field of that name, NULL when there is none. */
const char *
http_header_get(struct http_msg *m, const char *name)
{
	struct http_header	*h;

	TAILQ_FOREACH(h, &m->hm_headers, hh_entry)
		if (strcasecmp(h->hh_name, name) == 0)
			return (h->hh_value);
	return (NULL);
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

	if (len == 0 || len > HTTP_CHUNKLINE_MAX ||
	    memchr(line, '\0', len) != NULL || memchr(line, '\r', len) != NULL)
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
