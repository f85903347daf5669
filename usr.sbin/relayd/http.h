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
 * HTTP's tables: the methods relayd knows, in the order their numbers
 * (http_method_byname(): 1 + index) follow, and the name its error pages
 * and $SERVER_NAME give, both as OpenBSD's relayd has them.
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

#endif /* RELAYD_HTTP_H */
