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
 * The server name a TLS client asks for (SNI, RFC 6066), read from its
 * ClientHello before any handshake of relayd's: TLS inspection connects
 * to the backend first, and asks it for that name.  Only the bytes are
 * looked at; OpenSSL reads them again for the handshake and judges them.
 */

#include <sys/types.h>

#include <stdint.h>
#include <string.h>

#include "relayd.h"

#define TLS_RECORD_HDR		5
#define TLS_RECORD_MAX		16384	/* a plaintext record's body */
#define TLS_CT_HANDSHAKE	22
#define TLS_HS_CLIENT_HELLO	1
#define TLS_EXT_SERVER_NAME	0
#define TLS_SNI_HOST_NAME	0

struct hello_rd {
	const uint8_t	*p;
	size_t		 left;
};

static int
rd_skip(struct hello_rd *r, size_t n)
{
	if (n > r->left)
		return (-1);
	r->p += n;
	r->left -= n;
	return (0);
}

static int
rd_num(struct hello_rd *r, size_t bytes, size_t *v)
{
	size_t	 i;

	if (bytes > r->left)
		return (-1);
	for (*v = 0, i = 0; i < bytes; i++)
		*v = (*v << 8) | r->p[i];
	return (rd_skip(r, bytes));
}

/* A vector with a length of `bytes' bytes in front: skipped. */
static int
rd_vec(struct hello_rd *r, size_t bytes)
{
	size_t	 n;

	if (rd_num(r, bytes, &n) == -1)
		return (-1);
	return (rd_skip(r, n));
}

/* A host name as DNS writes it: letters, digits, '-', '_' and dots. */
static int
hello_name_ok(const uint8_t *p, size_t len)
{
	size_t	 i;

	if (len == 0 || len > TLS_HELLO_NAMEMAX)
		return (0);
	for (i = 0; i < len; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') ||
		    (p[i] >= 'A' && p[i] <= 'Z') ||
		    (p[i] >= '0' && p[i] <= '9') ||
		    p[i] == '-' || p[i] == '_' || p[i] == '.'))
			return (0);
	return (1);
}

/* The server_name extension's data: 1 with a name, else 0. */
static int
hello_sni(struct hello_rd *r, char *name, size_t namelen)
{
	size_t	 type, len;

	if (rd_num(r, 2, &len) == -1 || len != r->left)
		return (0);
	while (r->left > 0) {
		if (rd_num(r, 1, &type) == -1 || rd_num(r, 2, &len) == -1 ||
		    len > r->left)
			return (0);
		if (type == TLS_SNI_HOST_NAME) {
			if (!hello_name_ok(r->p, len) || len >= namelen)
				return (0);
			memcpy(name, r->p, len);
			name[len] = '\0';
			return (1);
		}
		(void)rd_skip(r, len);
	}
	return (0);
}

/* A whole ClientHello's body: 1 with a server name, else 0. */
static int
hello_body(struct hello_rd *r, char *name, size_t namelen)
{
	struct hello_rd	 ext;
	size_t		 type, len;

	/* version and random, session id, cipher suites, compressions */
	if (rd_skip(r, 2 + 32) == -1 || rd_vec(r, 1) == -1 ||
	    rd_vec(r, 2) == -1 || rd_vec(r, 1) == -1)
		return (0);
	/* no extensions at all: TLS 1.2 and older may send none */
	if (rd_num(r, 2, &len) == -1 || len > r->left)
		return (0);
	r->left = len;
	while (r->left > 0) {
		if (rd_num(r, 2, &type) == -1 || rd_num(r, 2, &len) == -1 ||
		    len > r->left)
			return (0);
		if (type == TLS_EXT_SERVER_NAME) {
			ext.p = r->p;
			ext.left = len;
			return (hello_sni(&ext, name, namelen));
		}
		(void)rd_skip(r, len);
	}
	return (0);
}

/*
 * The server name of the ClientHello that buf starts with, into name
 * (namelen bytes, NUL-terminated): 1 when there is one; 0 when the
 * hello is whole and has none, or the bytes are no ClientHello (the
 * handshake will say what is wrong); -1 when more bytes are needed.
 * A hello may come in several records; one of more than TLS_HELLO_MAX
 * bytes is taken for none.  A prefix of the bytes that gives 0 or 1
 * gives -1 or the same answer.
 */
int
tls_hello_servername(const uint8_t *buf, size_t len, char *name,
    size_t namelen)
{
	static uint8_t	 msg[TLS_HELLO_MAX];
	struct hello_rd	 r;
	size_t		 off = 0, mlen = 0, rlen, hlen;

	for (;;) {
		if (len - off < TLS_RECORD_HDR)
			return (-1);
		if (buf[off] != TLS_CT_HANDSHAKE || buf[off + 1] != 3)
			return (0);
		rlen = (size_t)buf[off + 3] << 8 | buf[off + 4];
		if (rlen == 0 || rlen > TLS_RECORD_MAX)
			return (0);
		if (len - off - TLS_RECORD_HDR < rlen)
			return (-1);
		if (rlen > sizeof(msg) - mlen)
			return (0);
		memcpy(msg + mlen, buf + off + TLS_RECORD_HDR, rlen);
		mlen += rlen;
		off += TLS_RECORD_HDR + rlen;
		if (mlen < 4)
			continue;
		if (msg[0] != TLS_HS_CLIENT_HELLO)
			return (0);
		hlen = (size_t)msg[1] << 16 | (size_t)msg[2] << 8 | msg[3];
		if (hlen > sizeof(msg) - 4)
			return (0);
		if (mlen - 4 >= hlen)
			break;
	}
	r.p = msg + 4;
	r.left = hlen;
	return (hello_body(&r, name, namelen));
}
