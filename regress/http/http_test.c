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
 * The HTTP message-head parser: what it accepts, how it frames bodies,
 * and the status code of every malformed message it refuses.
 */

#include <sys/types.h>
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <atf-c.h>

#include "relayd.h"
#include "http.h"

/*
 * Feed a head, "\n" between lines ("\r\n" is the relay's to strip), the
 * empty line included.  Returns the first error, or 0.
 */
static int
feed(struct http_msg *m, int dir, size_t max, const char *head)
{
	const char	*p = head, *nl;
	int		 ret;

	http_msg_init(m, dir, max);
	while ((nl = strchr(p, '\n')) != NULL) {
		if ((ret = http_msg_line(m, p, nl - p)) != 0)
			return (ret);
		p = nl + 1;
	}
	return (0);
}

/* A whole head in one direction: its first error, or 0. */
static int
head(int dir, const char *text)
{
	struct http_msg	 m;
	int		 ret;

	ret = feed(&m, dir, 8192, text);
	http_msg_clear(&m);
	return (ret);
}
#define request(text)	head(RELAY_DIR_REQUEST, (text))
#define response(text)	head(RELAY_DIR_RESPONSE, (text))

ATF_TC_WITHOUT_HEAD(http_request_parsed);
ATF_TC_BODY(http_request_parsed, tc)
{
	struct http_msg		 m;
	struct http_header	*h;
	int			 n = 0;

	ATF_REQUIRE_EQ(feed(&m, RELAY_DIR_REQUEST, 8192,
	    "POST /up?x=1 HTTP/1.1\nHost: example\nX-A: 1\n"
	    "content-length: 12\nx-a:  2 \n\n"), 0);
	ATF_CHECK(m.hm_done);
	ATF_CHECK_STREQ(http_method_name(m.hm_method), "POST");
	ATF_CHECK_STREQ(m.hm_target, "/up?x=1");
	ATF_CHECK_EQ(m.hm_minor, 1);
	ATF_CHECK_EQ(m.hm_clen, 12);
	ATF_CHECK_EQ(m.hm_body, HTTP_BODY_LENGTH);
	ATF_CHECK_EQ(m.hm_close, 0);
	/* names case-insensitive, repeats kept in order, values trimmed */
	ATF_CHECK_STREQ(http_header_get(&m, "HOST"), "example");
	TAILQ_FOREACH(h, &m.hm_headers, hh_entry)
		if (strcasecmp(h->hh_name, "x-a") == 0)
			ATF_CHECK_STREQ(h->hh_value, n++ == 0 ? "1" : "2");
	ATF_CHECK_EQ(n, 2);
	http_msg_clear(&m);
}

ATF_TC_WITHOUT_HEAD(http_keepalive_by_version);
ATF_TC_BODY(http_keepalive_by_version, tc)
{
	struct http_msg	 m;

	ATF_REQUIRE_EQ(feed(&m, RELAY_DIR_REQUEST, 0,
	    "GET / HTTP/1.0\n\n"), 0);
	ATF_CHECK_EQ(m.hm_close, 1);
	ATF_CHECK_EQ(m.hm_body, HTTP_BODY_NONE);
	http_msg_clear(&m);
	ATF_REQUIRE_EQ(feed(&m, RELAY_DIR_REQUEST, 0,
	    "GET / HTTP/1.0\nConnection: Keep-Alive\n\n"), 0);
	ATF_CHECK_EQ(m.hm_close, 0);
	http_msg_clear(&m);
	ATF_REQUIRE_EQ(feed(&m, RELAY_DIR_REQUEST, 0,
	    "GET / HTTP/1.1\nConnection: keep-alive, close\n\n"), 0);
	ATF_CHECK_EQ(m.hm_close, 1);
	http_msg_clear(&m);
	ATF_REQUIRE_EQ(feed(&m, RELAY_DIR_REQUEST, 0,
	    "GET /chat HTTP/1.1\nConnection: Upgrade\nUpgrade: websocket\n\n"),
	    0);
	ATF_CHECK_EQ(m.hm_upgrade, 1);
	http_msg_clear(&m);
}

ATF_TC_WITHOUT_HEAD(http_response_framing);
ATF_TC_BODY(http_response_framing, tc)
{
	struct http_msg	 m;

	ATF_REQUIRE_EQ(feed(&m, RELAY_DIR_RESPONSE, 0,
	    "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n"), 0);
	ATF_CHECK_EQ(m.hm_code, 200);
	ATF_CHECK_STREQ(m.hm_reason, "OK");
	ATF_CHECK_EQ(m.hm_body, HTTP_BODY_CHUNKED);
	http_msg_clear(&m);
	/* no length: to the end of the connection, which closes */
	ATF_REQUIRE_EQ(feed(&m, RELAY_DIR_RESPONSE, 0,
	    "HTTP/1.1 200 OK\nServer: x\n\n"), 0);
	ATF_CHECK_EQ(m.hm_body, HTTP_BODY_CLOSE);
	ATF_CHECK_EQ(m.hm_close, 1);
	http_msg_clear(&m);
	ATF_REQUIRE_EQ(feed(&m, RELAY_DIR_RESPONSE, 0,
	    "HTTP/1.1 304 Not Modified\nContent-Length: 99\n\n"), 0);
	ATF_CHECK_EQ(m.hm_body, HTTP_BODY_NONE);
	http_msg_clear(&m);
	ATF_REQUIRE_EQ(feed(&m, RELAY_DIR_RESPONSE, 0,
	    "HTTP/1.1 100 Continue\n\n"), 0);
	ATF_CHECK_EQ(m.hm_body, HTTP_BODY_NONE);
	http_msg_clear(&m);
}

ATF_TC_WITHOUT_HEAD(http_te_cl_conflict_rejected);
ATF_TC_BODY(http_te_cl_conflict_rejected, tc)
{
	ATF_CHECK_EQ(request("POST / HTTP/1.1\nContent-Length: 5\n"
	    "Transfer-Encoding: chunked\n\n"), 400);
	ATF_CHECK_EQ(request("POST / HTTP/1.1\nTransfer-Encoding: chunked\n"
	    "Content-Length: 5\n\n"), 400);
	ATF_CHECK_EQ(response("HTTP/1.1 200 OK\nContent-Length: 5\n"
	    "Transfer-Encoding: chunked\n\n"), 502);
}

ATF_TC_WITHOUT_HEAD(http_two_lengths_rejected);
ATF_TC_BODY(http_two_lengths_rejected, tc)
{
	ATF_CHECK_EQ(request("POST / HTTP/1.1\nContent-Length: 5\n"
	    "Content-Length: 6\n\n"), 400);
	/* the same value twice is one length */
	ATF_CHECK_EQ(request("POST / HTTP/1.1\nContent-Length: 5\n"
	    "Content-Length: 5\n\n"), 0);
}

ATF_TC_WITHOUT_HEAD(http_bad_length_rejected);
ATF_TC_BODY(http_bad_length_rejected, tc)
{
	ATF_CHECK_EQ(request("POST / HTTP/1.1\nContent-Length: -1\n\n"), 500);
	ATF_CHECK_EQ(request("POST / HTTP/1.1\nContent-Length: +5\n\n"), 500);
	ATF_CHECK_EQ(request("POST / HTTP/1.1\nContent-Length: 5x\n\n"), 500);
	ATF_CHECK_EQ(request("POST / HTTP/1.1\nContent-Length: \n\n"), 500);
	ATF_CHECK_EQ(request("POST / HTTP/1.1\n"
	    "Content-Length: 99999999999999999999\n\n"), 500);
	ATF_CHECK_EQ(response("HTTP/1.1 200 OK\nContent-Length: x\n\n"), 502);
	/* TRACE and CONNECT have no body */
	ATF_CHECK_EQ(request("TRACE / HTTP/1.1\nContent-Length: 3\n\n"), 400);
	/* a 1xx or 204 response with one */
	ATF_CHECK_EQ(response("HTTP/1.1 204 No Content\n"
	    "Content-Length: 3\n\n"), 502);
}

ATF_TC_WITHOUT_HEAD(http_transfer_encoding_only_chunked);
ATF_TC_BODY(http_transfer_encoding_only_chunked, tc)
{
	ATF_CHECK_EQ(request("POST / HTTP/1.1\n"
	    "Transfer-Encoding: gzip, chunked\n\n"), 400);
	ATF_CHECK_EQ(request("POST / HTTP/1.1\nTransfer-Encoding: chunked\n"
	    "Transfer-Encoding: chunked\n\n"), 400);
	ATF_CHECK_EQ(request("POST / HTTP/1.1\n"
	    "Transfer-Encoding: CHUNKED\n\n"), 0);
}

ATF_TC_WITHOUT_HEAD(http_malformed_heads_rejected);
ATF_TC_BODY(http_malformed_heads_rejected, tc)
{
	static const char	 nul[] = "GET / HTTP/1.1\nX: a\0b\n\n";
	struct http_msg		 m;

	/* obsolete line folding, and whitespace before a name */
	ATF_CHECK_EQ(request("GET / HTTP/1.1\nX-A: 1\n 2\n\n"), 400);
	ATF_CHECK_EQ(request("GET / HTTP/1.1\n\tX-A: 1\n\n"), 400);
	/* no colon, empty name, a name that is not a token */
	ATF_CHECK_EQ(request("GET / HTTP/1.1\nX-A 1\n\n"), 400);
	ATF_CHECK_EQ(request("GET / HTTP/1.1\n: 1\n\n"), 400);
	ATF_CHECK_EQ(request("GET / HTTP/1.1\nX A: 1\n\n"), 400);
	ATF_CHECK_EQ(request("GET / HTTP/1.1\nX-A : 1\n\n"), 400);
	/* a bare CR, and a NUL */
	ATF_CHECK_EQ(request("GET / HTTP/1.1\nX-A: 1\r2\n\n"), 400);
	http_msg_init(&m, RELAY_DIR_REQUEST, 0);
	ATF_CHECK_EQ(http_msg_line(&m, nul, 14), 0);
	ATF_CHECK_EQ(http_msg_line(&m, nul + 15, 6), 400);
	http_msg_clear(&m);
	/* two Host fields */
	ATF_CHECK_EQ(request("GET / HTTP/1.1\nHost: a\nhost: b\n\n"), 400);
	/* request lines */
	ATF_CHECK_EQ(request("GET / HTTP/2.0\n\n"), 400);
	ATF_CHECK_EQ(request("GET /  HTTP/1.1\n\n"), 400);
	ATF_CHECK_EQ(request("GET\n\n"), 400);
	ATF_CHECK_EQ(request("FETCH / HTTP/1.1\n\n"), 500);
	ATF_CHECK_EQ(request(" / HTTP/1.1\n\n"), 406);
	ATF_CHECK_EQ(request("\n"), 406);
	/* status lines */
	ATF_CHECK_EQ(response("HTTP/1.1 20 OK\n\n"), 502);
	ATF_CHECK_EQ(response("HTTP/1.1 2000 OK\n\n"), 502);
	ATF_CHECK_EQ(response("HTTP/3 200 OK\n\n"), 502);
	ATF_CHECK_EQ(response("HTTP/1.1 200 OK\nBad Name: x\n\n"), 502);
}

ATF_TC_WITHOUT_HEAD(http_headerlen_limit);
ATF_TC_BODY(http_headerlen_limit, tc)
{
	struct http_msg	 m;
	char		*big;
	int		 ret;

	ATF_REQUIRE((big = malloc(9000)) != NULL);
	memcpy(big, "GET / HTTP/1.1\nX-Big: ", 22);
	memset(big + 22, 'a', 9000 - 22 - 3);
	memcpy(big + 9000 - 3, "\n\n", 3);
	ATF_CHECK_EQ(feed(&m, RELAY_DIR_REQUEST, 8192, big), 413);
	http_msg_clear(&m);
	ATF_CHECK_EQ(feed(&m, RELAY_DIR_RESPONSE, 8192, "HTTP/1.1 200 OK\n"),
	    0);
	/* the field line alone is over the limit: the backend's fault */
	ret = http_msg_line(&m, big + 15, 8500);
	ATF_CHECK_EQ(ret, 502);
	http_msg_clear(&m);
	/* within the limit */
	ATF_CHECK_EQ(feed(&m, RELAY_DIR_REQUEST, 131072, big), 0);
	http_msg_clear(&m);
	free(big);
}

ATF_TC_WITHOUT_HEAD(http_chunk_sizes);
ATF_TC_BODY(http_chunk_sizes, tc)
{
	off_t	 n;

	ATF_CHECK_EQ(http_chunk_line("1a", 2, &n), 0);
	ATF_CHECK_EQ(n, 26);
	ATF_CHECK_EQ(http_chunk_line("FF;name=value", 13, &n), 0);
	ATF_CHECK_EQ(n, 255);
	ATF_CHECK_EQ(http_chunk_line("0 ; ext", 7, &n), 0);
	ATF_CHECK_EQ(n, 0);
	ATF_CHECK_EQ(http_chunk_line("", 0, &n), -1);
	ATF_CHECK_EQ(http_chunk_line("-1", 2, &n), -1);
	ATF_CHECK_EQ(http_chunk_line("0x10", 4, &n), -1);
	ATF_CHECK_EQ(http_chunk_line("g", 1, &n), -1);
	ATF_CHECK_EQ(http_chunk_line("10 20", 5, &n), -1);
	ATF_CHECK_EQ(http_chunk_line("1\r", 2, &n), -1);
	/* sizes that do not fit, and overlong lines */
	ATF_CHECK_EQ(http_chunk_line("10000000000000000", 17, &n), -1);
	ATF_CHECK_EQ(http_chunk_line("7fffffffffffffff", 16, &n), 0);
	{
		char	 line[1100];

		memset(line, ' ', sizeof(line));
		line[0] = '1';
		line[1] = ';';
		ATF_CHECK_EQ(http_chunk_line(line, sizeof(line), &n), -1);
	}
}

/* patterns(7), for the "pattern" keyword of filter rules */
ATF_TC_WITHOUT_HEAD(http_patterns);
ATF_TC_BODY(http_patterns, tc)
{
	static const struct {
		const char	*str, *pattern;
		int		 match;
	} t[] = {
		{ "/api/v1", "^/api", 1 },
		{ "/v1/api", "^/api", 0 },
		{ "/v1/api", "/api", 1 },
		{ "X-Test", "^X%-Test$", 1 },
		{ "X-Tests", "^X%-Test$", 0 },
		{ "x-test", "^X%-Test$", 0 },		/* always with case */
		{ "abc123", "%d+$", 1 },
		{ "abc", "%d", 0 },
		{ "hello world", "^h.-o w", 1 },
		{ "(foo(bar))baz", "^%b()baz$", 1 },
		{ "THE (quick) fox", "%f[%a]%a+", 1 },
		{ "aa", "^(a)%1$", 1 },
		{ "ab", "^(a)%1$", 0 },
		{ "", "^$", 1 },
		{ "ABC", "[^A-Z]", 0 },
		{ "a.b", "^a%.b$", 1 },
		{ "axb", "^a%.b$", 0 },
		{ "id=42", "^id=%d+$", 1 },
		{ "colou", "^colou?r?$", 1 }
	};
	static const char	*bad[] = { "a[", "%", "(a", "a)", "%bx", "%fa" };
	const char		*errstr;
	size_t			 i;
	char			 big[200];

	for (i = 0; i < nitems(t); i++)
		ATF_CHECK_EQ_MSG(pattern_match(t[i].str, t[i].pattern, NULL),
		    t[i].match, "%s ~ %s", t[i].str, t[i].pattern);
	for (i = 0; i < nitems(bad); i++)
		ATF_CHECK_EQ_MSG(pattern_check(bad[i], &errstr), -1, "%s",
		    bad[i]);
	ATF_CHECK_EQ(pattern_check("^/api/%w+%.php$", &errstr), 0);
	/* a pattern that would backtrack for ever gives up, unmatched */
	memset(big, 'a', sizeof(big) - 2);
	big[sizeof(big) - 2] = 'b';
	big[sizeof(big) - 1] = '\0';
	ATF_CHECK(pattern_match(big, "a*a*a*a*a*a*a*a*c", &errstr) != 1);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, http_patterns);
	ATF_TP_ADD_TC(tp, http_request_parsed);
	ATF_TP_ADD_TC(tp, http_keepalive_by_version);
	ATF_TP_ADD_TC(tp, http_response_framing);
	ATF_TP_ADD_TC(tp, http_te_cl_conflict_rejected);
	ATF_TP_ADD_TC(tp, http_two_lengths_rejected);
	ATF_TP_ADD_TC(tp, http_bad_length_rejected);
	ATF_TP_ADD_TC(tp, http_transfer_encoding_only_chunked);
	ATF_TP_ADD_TC(tp, http_malformed_heads_rejected);
	ATF_TP_ADD_TC(tp, http_headerlen_limit);
	ATF_TP_ADD_TC(tp, http_chunk_sizes);
	return (atf_no_error());
}
