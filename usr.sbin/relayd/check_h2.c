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
 * "check http2 path [host name] code n [tls]": a HEAD request to an
 * HTTP/2 backend, in cleartext with prior knowledge (h2c) as backends of
 * "http2 backend" relays and gRPC servers speak it, or over TLS with
 * ALPN h2, and the :status of its answer.  The request is bytes that
 * hce makes for each check (its :authority is the host's): the
 * connection preface, an empty SETTINGS frame and one HEADERS frame
 * (stream 1, its fields literal, not indexed, not Huffman coded).
 * The answer's frames are read as they come; only the header block of
 * stream 1 is decoded (libnghttp2's HPACK inflater), the rest is
 * skipped.  A GOAWAY, a reset of stream 1, or its DATA before a head,
 * is an answer that fails.
 */

#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#include "relayd.h"

#define H2C_PREFACE	"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define H2C_FRAMEHDR	9
#define H2C_MAXFRAME	16384	/* SETTINGS_MAX_FRAME_SIZE's default */

#define H2C_DATA	0x0
#define H2C_HEADERS	0x1
#define H2C_RST_STREAM	0x3
#define H2C_SETTINGS	0x4
#define H2C_GOAWAY	0x7
#define H2C_CONTINUATION 0x9

#define H2C_END_STREAM	0x1
#define H2C_END_HEADERS	0x4
#define H2C_PADDED	0x8
#define H2C_PRIORITY	0x20

struct h2check {
	nghttp2_hd_inflater	*hc_inf;
	int			 hc_inblock;	/* stream 1's head goes on */
	int			 hc_status;	/* its :status so far */
};

/* An HPACK integer of a 7-bit prefix (a string's length, no Huffman). */
static size_t
h2c_int(uint8_t *p, size_t v)
{
	size_t	 n = 0;

	if (v < 127) {
		p[n++] = v;
		return (n);
	}
	p[n++] = 127;
	v -= 127;
	while (v >= 128) {
		p[n++] = (v & 0x7f) | 0x80;
		v >>= 7;
	}
	p[n++] = v;
	return (n);
}

/* A field, literal without indexing, its name new. */
static size_t
h2c_field(uint8_t *p, const char *name, const char *value)
{
	size_t	 n = 0, len;

	p[n++] = 0x00;
	len = strlen(name);
	n += h2c_int(p + n, len);
	memcpy(p + n, name, len);
	n += len;
	len = strlen(value);
	n += h2c_int(p + n, len);
	memcpy(p + n, value, len);
	n += len;
	return (n);
}

/*
 * The bytes of the check's request for path, with host as :authority
 * ("" for none), over TLS or not.  -1: the head would not fit in a
 * frame (a path of PATH_MAX and a host name of RELAYD_HOSTNAME_MAX
 * fit), or no memory.
 */
int
h2check_request(const char *path, const char *host, int tls, char **bufp,
    size_t *lenp)
{
	uint8_t		*buf, *p;
	size_t		 hlen, max, n;

	/* each field: a byte, two lengths of at most 4 bytes, the text */
	max = 4 * 9 + strlen(":method") + strlen("HEAD") +
	    strlen(":scheme") + strlen("https") + strlen(":path") +
	    strlen(path) + strlen(":authority") + strlen(host);
	if (max > H2C_MAXFRAME)
		return (-1);
	if ((buf = malloc(sizeof(H2C_PREFACE) - 1 + 2 * H2C_FRAMEHDR +
	    max)) == NULL)
		return (-1);
	p = buf;
	memcpy(p, H2C_PREFACE, sizeof(H2C_PREFACE) - 1);
	p += sizeof(H2C_PREFACE) - 1;
	/* SETTINGS, empty: the defaults do */
	memset(p, 0, H2C_FRAMEHDR);
	p[3] = H2C_SETTINGS;
	p += H2C_FRAMEHDR;
	n = H2C_FRAMEHDR;
	n += h2c_field(p + n, ":method", "HEAD");
	n += h2c_field(p + n, ":scheme", tls ? "https" : "http");
	n += h2c_field(p + n, ":path", path);
	if (*host != '\0')
		n += h2c_field(p + n, ":authority", host);
	hlen = n - H2C_FRAMEHDR;
	p[0] = hlen >> 16;
	p[1] = hlen >> 8;
	p[2] = hlen;
	p[3] = H2C_HEADERS;
	p[4] = H2C_END_STREAM | H2C_END_HEADERS;
	p[5] = p[6] = p[7] = 0;
	p[8] = 1;
	*bufp = (char *)buf;
	*lenp = p + n - buf;
	return (0);
}

struct h2check *
h2check_new(void)
{
	struct h2check	*hc;

	if ((hc = calloc(1, sizeof(*hc))) == NULL)
		return (NULL);
	if (nghttp2_hd_inflate_new(&hc->hc_inf) != 0) {
		free(hc);
		return (NULL);
	}
	return (hc);
}

void
h2check_free(struct h2check *hc)
{
	if (hc == NULL)
		return;
	nghttp2_hd_inflate_del(hc->hc_inf);
	free(hc);
}

/* A piece of stream 1's header block.  -1: it does not decode. */
static int
h2c_block(struct h2check *hc, const uint8_t *p, size_t len, int last)
{
	nghttp2_nv	 nv;
	ssize_t		 n;
	int		 flags;

	for (;;) {
		flags = 0;
		n = nghttp2_hd_inflate_hd2(hc->hc_inf, &nv, &flags, p, len,
		    last);
		if (n < 0)
			return (-1);
		p += n;
		len -= n;
		if ((flags & NGHTTP2_HD_INFLATE_EMIT) && nv.namelen == 7 &&
		    memcmp(nv.name, ":status", 7) == 0) {
			if (nv.valuelen != 3 ||
			    nv.value[0] < '1' || nv.value[0] > '9' ||
			    nv.value[1] < '0' || nv.value[1] > '9' ||
			    nv.value[2] < '0' || nv.value[2] > '9')
				return (-1);
			hc->hc_status = (nv.value[0] - '0') * 100 +
			    (nv.value[1] - '0') * 10 + (nv.value[2] - '0');
		}
		if (flags & NGHTTP2_HD_INFLATE_FINAL) {
			nghttp2_hd_inflate_end_headers(hc->hc_inf);
			return (0);
		}
		if ((flags & NGHTTP2_HD_INFLATE_EMIT) == 0 && len == 0)
			return (0);
	}
}

/*
 * Frames of the answer, buf[0..len): the final :status of stream 1
 * (200 to 999, a 1xx head is passed over), 0 when more is needed, -1
 * for an answer that fails.  *used: the bytes read, frames whole, that
 * the caller may take off buf; what is left is the start of a frame.
 */
int
h2check_status(struct h2check *hc, const uint8_t *buf, size_t len,
    size_t *used)
{
	const uint8_t	*p;
	size_t		 off = 0, flen, plen, pad;
	uint32_t	 sid;
	uint8_t		 type, flags;

	*used = 0;
	while (len - off >= H2C_FRAMEHDR) {
		p = buf + off;
		flen = (size_t)p[0] << 16 | (size_t)p[1] << 8 | p[2];
		type = p[3];
		flags = p[4];
		sid = (uint32_t)(p[5] & 0x7f) << 24 | (uint32_t)p[6] << 16 |
		    (uint32_t)p[7] << 8 | p[8];
		if (flen > H2C_MAXFRAME)
			return (-1);
		if (len - off - H2C_FRAMEHDR < flen)
			break;
		p += H2C_FRAMEHDR;
		plen = flen;
		off += H2C_FRAMEHDR + flen;
		*used = off;
		/* a head in pieces: nothing comes between them */
		if (hc->hc_inblock && (type != H2C_CONTINUATION || sid != 1))
			return (-1);
		switch (type) {
		case H2C_HEADERS:
			if (sid != 1)
				continue;
			if (flags & H2C_PADDED) {
				if (plen < 1 || (pad = p[0]) >= plen)
					return (-1);
				p++;
				plen -= pad + 1;
			}
			if (flags & H2C_PRIORITY) {
				if (plen < 5)
					return (-1);
				p += 5;
				plen -= 5;
			}
			hc->hc_status = 0;
			hc->hc_inblock = 1;
			break;
		case H2C_CONTINUATION:
			if (!hc->hc_inblock)
				return (-1);
			break;
		case H2C_GOAWAY:
			return (-1);
		case H2C_DATA:
		case H2C_RST_STREAM:
			if (sid == 1)
				return (-1);
			continue;
		default:
			/* SETTINGS, PING, WINDOW_UPDATE, ... */
			continue;
		}
		if (h2c_block(hc, p, plen, (flags & H2C_END_HEADERS) != 0) ==
		    -1)
			return (-1);
		if ((flags & H2C_END_HEADERS) == 0)
			continue;
		hc->hc_inblock = 0;
		if (hc->hc_status == 0)
			return (-1);
		if (hc->hc_status >= 200)
			return (hc->hc_status);
	}
	return (0);
}
