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
 * patterns(7): the Lua-style patterns of filter rules' "pattern"
 * keyword, as OpenBSD's httpd and relayd match them.  A pattern matches
 * anywhere in the string unless "^" anchors it; classes %a %c %d %g %l
 * %p %s %u %w %x (upper case: the complement), sets [...], the
 * quantifiers * + - ?, captures, back-references %1-%9, %b and %f.
 * Matching is bounded: a pattern that would take too long fails.
 */

#include <sys/types.h>

#include <ctype.h>
#include <string.h>

#include "relayd.h"

#define PAT_MAXCAPTURES	32
#define PAT_MAXSTEPS	100000		/* calls of pat_do() a match */
#define PAT_POSITION	(-2)		/* a () capture */
#define PAT_OPEN	(-1)		/* a capture not closed yet */

struct pat_state {
	const char	*src_init;
	const char	*src_end;
	const char	*p_end;
	int		 level;
	int		 steps;
	const char	*error;
	struct {
		const char	*init;
		ssize_t		 len;
	}		 capture[PAT_MAXCAPTURES];
};

static const char	*pat_do(struct pat_state *, const char *,
			    const char *);

static int
pat_class(int c, int cl)
{
	int	 res;

	switch (tolower(cl)) {
	case 'a': res = isalpha(c); break;
	case 'c': res = iscntrl(c); break;
	case 'd': res = isdigit(c); break;
	case 'g': res = isgraph(c); break;
	case 'l': res = islower(c); break;
	case 'p': res = ispunct(c); break;
	case 's': res = isspace(c); break;
	case 'u': res = isupper(c); break;
	case 'w': res = isalnum(c); break;
	case 'x': res = isxdigit(c); break;
	default: return (cl == c);
	}
	if (isupper(cl))
		res = !res;
	return (res != 0);
}

/* The end of the single-character class at p, or NULL (an error). */
static const char *
pat_class_end(struct pat_state *ms, const char *p)
{
	if (p >= ms->p_end)
		return (NULL);
	if (*p == '%') {
		if (++p >= ms->p_end) {
			ms->error = "malformed pattern (ends with '%')";
			return (NULL);
		}
		return (p + 1);
	}
	if (*p++ == '[') {
		if (p < ms->p_end && *p == '^')
			p++;
		do {
			if (p >= ms->p_end) {
				ms->error = "malformed pattern (missing ']')";
				return (NULL);
			}
			if (*(p++) == '%' && p < ms->p_end)
				p++;
		} while (*p != ']');
		return (p + 1);
	}
	return (p);
}

/* Does c belong to the set [p, ec) ("[" at p, "]" at ec - 1)? */
static int
pat_set(int c, const char *p, const char *ec)
{
	int	 sig = 1;

	if (*(p + 1) == '^') {
		sig = 0;
		p++;
	}
	while (++p < ec) {
		if (*p == '%') {
			p++;
			if (pat_class(c, (unsigned char)*p))
				return (sig);
		} else if (*(p + 1) == '-' && p + 2 < ec) {
			p += 2;
			if ((unsigned char)*(p - 2) <= c &&
			    c <= (unsigned char)*p)
				return (sig);
		} else if ((unsigned char)*p == c)
			return (sig);
	}
	return (!sig);
}

static int
pat_single(struct pat_state *ms, const char *s, const char *p,
    const char *ep)
{
	int	 c;

	if (s >= ms->src_end)
		return (0);
	c = (unsigned char)*s;
	switch (*p) {
	case '.':
		return (1);
	case '%':
		return (pat_class(c, (unsigned char)*(p + 1)));
	case '[':
		return (pat_set(c, p, ep - 1));
	default:
		return ((unsigned char)*p == c);
	}
}

static const char *
pat_balance(struct pat_state *ms, const char *s, const char *p)
{
	int	 b, e, cont = 1;

	if (p + 1 >= ms->p_end) {
		ms->error = "malformed pattern (missing arguments to '%b')";
		return (NULL);
	}
	if (s >= ms->src_end || *s != *p)
		return (NULL);
	b = *p;
	e = *(p + 1);
	while (++s < ms->src_end) {
		if (*s == e) {
			if (--cont == 0)
				return (s + 1);
		} else if (*s == b)
			cont++;
	}
	return (NULL);
}

/* Greedy (*, +): the longest run first, then shorter ones. */
static const char *
pat_max(struct pat_state *ms, const char *s, const char *p, const char *ep)
{
	const char	*res;
	ssize_t		 i = 0;

	while (pat_single(ms, s + i, p, ep))
		i++;
	while (i >= 0) {
		if ((res = pat_do(ms, s + i, ep + 1)) != NULL)
			return (res);
		if (ms->error != NULL)
			return (NULL);
		i--;
	}
	return (NULL);
}

/* Lazy (-): the shortest run first. */
static const char *
pat_min(struct pat_state *ms, const char *s, const char *p, const char *ep)
{
	const char	*res;

	for (;;) {
		if ((res = pat_do(ms, s, ep + 1)) != NULL)
			return (res);
		if (ms->error != NULL)
			return (NULL);
		if (!pat_single(ms, s, p, ep))
			return (NULL);
		s++;
	}
}

static const char *
pat_start_capture(struct pat_state *ms, const char *s, const char *p,
    ssize_t what)
{
	const char	*res;

	if (ms->level >= PAT_MAXCAPTURES) {
		ms->error = "too many captures";
		return (NULL);
	}
	ms->capture[ms->level].init = s;
	ms->capture[ms->level].len = what;
	ms->level++;
	if ((res = pat_do(ms, s, p)) == NULL)
		ms->level--;
	return (res);
}

static const char *
pat_end_capture(struct pat_state *ms, const char *s, const char *p)
{
	const char	*res;
	int		 l;

	for (l = ms->level - 1; l >= 0; l--)
		if (ms->capture[l].len == PAT_OPEN)
			break;
	if (l < 0) {
		ms->error = "invalid pattern capture";
		return (NULL);
	}
	ms->capture[l].len = s - ms->capture[l].init;
	if ((res = pat_do(ms, s, p)) == NULL)
		ms->capture[l].len = PAT_OPEN;
	return (res);
}

static const char *
pat_backref(struct pat_state *ms, const char *s, int l)
{
	size_t	 len;

	l -= '1';
	if (l < 0 || l >= ms->level || ms->capture[l].len < 0) {
		ms->error = "invalid capture index";
		return (NULL);
	}
	len = ms->capture[l].len;
	if ((size_t)(ms->src_end - s) >= len &&
	    memcmp(ms->capture[l].init, s, len) == 0)
		return (s + len);
	return (NULL);
}

/* %f[set]: a frontier, where the previous character is not in the set */
static const char *
pat_frontier(struct pat_state *ms, const char *s, const char *p)
{
	const char	*ep;
	int		 prev;

	if (*p != '[') {
		ms->error = "missing '[' after '%f' in pattern";
		return (NULL);
	}
	if ((ep = pat_class_end(ms, p)) == NULL)
		return (NULL);
	prev = s == ms->src_init ? '\0' : (unsigned char)*(s - 1);
	if (!pat_set(prev, p, ep - 1) &&
	    pat_set(s < ms->src_end ? (unsigned char)*s : '\0', p, ep - 1))
		return (pat_do(ms, s, ep));
	return (NULL);
}

/* The end of a match of [p, p_end) at s, or NULL. */
static const char *
pat_do(struct pat_state *ms, const char *s, const char *p)
{
	const char	*ep;

	if (++ms->steps > PAT_MAXSTEPS) {
		ms->error = "pattern too complex";
		return (NULL);
	}
	if (p == ms->p_end)
		return (s);
	switch (*p) {
	case '(':
		return (pat_start_capture(ms, s, p + (p[1] == ')' ? 2 : 1),
		    p[1] == ')' ? PAT_POSITION : PAT_OPEN));
	case ')':
		return (pat_end_capture(ms, s, p + 1));
	case '$':
		if (p + 1 == ms->p_end)
			return (s == ms->src_end ? s : NULL);
		break;
	case '%':
		if (p + 1 < ms->p_end && p[1] == 'b') {
			if ((s = pat_balance(ms, s, p + 2)) == NULL)
				return (NULL);
			return (pat_do(ms, s, p + 4));
		}
		if (p + 1 < ms->p_end && p[1] == 'f')
			return (pat_frontier(ms, s, p + 2));
		if (p + 1 < ms->p_end && isdigit((unsigned char)p[1])) {
			if ((s = pat_backref(ms, s, (unsigned char)p[1])) ==
			    NULL)
				return (NULL);
			return (pat_do(ms, s, p + 2));
		}
		break;
	}
	if ((ep = pat_class_end(ms, p)) == NULL) {
		if (ms->error == NULL)
			ms->error = "malformed pattern";
		return (NULL);
	}
	if (ep < ms->p_end) {
		switch (*ep) {
		case '?':
			if (pat_single(ms, s, p, ep)) {
				const char *res;

				if ((res = pat_do(ms, s + 1, ep + 1)) != NULL)
					return (res);
				if (ms->error != NULL)
					return (NULL);
			}
			return (pat_do(ms, s, ep + 1));
		case '+':
			return (pat_single(ms, s, p, ep) ?
			    pat_max(ms, s + 1, p, ep) : NULL);
		case '*':
			return (pat_max(ms, s, p, ep));
		case '-':
			return (pat_min(ms, s, p, ep));
		}
	}
	if (!pat_single(ms, s, p, ep))
		return (NULL);
	return (pat_do(ms, s + 1, ep));
}

/*
 * Does pattern match somewhere in str?  1 or 0; -1 with *errstr for a
 * pattern that is malformed or takes too long.
 */
int
pattern_match(const char *str, const char *pattern, const char **errstr)
{
	struct pat_state	 ms;
	const char		*s = str, *p = pattern;
	int			 anchor;

	memset(&ms, 0, sizeof(ms));
	if ((anchor = *p == '^'))
		p++;
	ms.src_init = str;
	ms.src_end = str + strlen(str);
	ms.p_end = pattern + strlen(pattern);
	do {
		ms.level = 0;
		if (pat_do(&ms, s, p) != NULL)
			return (1);
		if (ms.error != NULL) {
			if (errstr != NULL)
				*errstr = ms.error;
			return (-1);
		}
	} while (s++ < ms.src_end && !anchor);
	return (0);
}

/*
 * Is pattern well formed?  0, or -1 with *errstr: what the parser says
 * of a rule's pattern.
 */
int
pattern_check(const char *pattern, const char **errstr)
{
	struct pat_state	 ms;
	const char		*p = pattern;
	int			 depth = 0;

	memset(&ms, 0, sizeof(ms));
	ms.p_end = pattern + strlen(pattern);
	if (*p == '^')
		p++;
	while (p < ms.p_end && ms.error == NULL) {
		if (*p == '(' || *p == ')') {
			depth += *p == '(' ? 1 : -1;
			if (depth < 0)
				ms.error = "invalid pattern capture";
			p++;
		} else if (*p == '%' && p + 1 < ms.p_end && p[1] == 'b') {
			if (p + 3 >= ms.p_end)
				ms.error = "malformed pattern (missing "
				    "arguments to '%b')";
			p += 4;
		} else if (*p == '%' && p + 1 < ms.p_end && p[1] == 'f') {
			p += 2;
			if (p >= ms.p_end || *p != '[')
				ms.error = "missing '[' after '%f' in pattern";
			else
				p = pat_class_end(&ms, p);
		} else if ((p = pat_class_end(&ms, p)) != NULL &&
		    p < ms.p_end && strchr("*+-?", *p) != NULL)
			p++;
	}
	if (ms.error == NULL && depth > 0)
		ms.error = "unfinished capture";
	if (ms.error != NULL) {
		*errstr = ms.error;
		return (-1);
	}
	return (0);
}
