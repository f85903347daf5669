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
 * SipHash-2-4 with a 128-bit key, as relayd.conf(5)'s hash modes want
 * (OpenBSD's relayd uses libc's SipHash24(3), as here with LibreSSL);
 * with OpenSSL, our own implementation of it, below.
 */

#include <sys/types.h>

#include <stdint.h>
#include <string.h>

#include <openssl/opensslv.h>

#ifdef LIBRESSL_VERSION_NUMBER

#include <siphash.h>

#include "compat.h"

int
compat_siphash_init(void)
{
	return (0);
}

uint64_t
compat_siphash(const uint8_t *key, const void *data, size_t len,
    uint64_t prev)
{
	SIPHASH_CTX	 ctx;
	SIPHASH_KEY	 k;

	memcpy(&k, key, sizeof(k));
	SipHash24_Init(&ctx, &k);
	SipHash24_Update(&ctx, &prev, sizeof(prev));
	SipHash24_Update(&ctx, data, len);
	return (SipHash24_End(&ctx));
}

#else /* OpenSSL */

#include "compat.h"

/*
 * SipHash-2-4 itself (Aumasson and Bernstein's paper): OpenSSL's EVP_MAC
 * allocates, initialises and frees a context for each 8 bytes of
 * output, which under a flood of connections or requests (a hash a
 * connection for the limits per source, one a session in a hash mode)
 * cost more than the hash.  Its results are the EVP_MAC's, byte for
 * byte.
 */
struct sip {
	uint64_t	 v[4];
	uint8_t		 buf[8];
	size_t		 nbuf;
	uint64_t	 total;
};

#define SIP_ROTL(x, b)	(uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static uint64_t
sip_le64(const uint8_t *p)
{
	uint64_t	 x = 0;
	int		 i;

	for (i = 7; i >= 0; i--)
		x = (x << 8) | p[i];
	return (x);
}

static void
sip_rounds(struct sip *s, int n)
{
	uint64_t	*v = s->v;

	while (n-- > 0) {
		v[0] += v[1];
		v[1] = SIP_ROTL(v[1], 13);
		v[1] ^= v[0];
		v[0] = SIP_ROTL(v[0], 32);
		v[2] += v[3];
		v[3] = SIP_ROTL(v[3], 16);
		v[3] ^= v[2];
		v[0] += v[3];
		v[3] = SIP_ROTL(v[3], 21);
		v[3] ^= v[0];
		v[2] += v[1];
		v[1] = SIP_ROTL(v[1], 17);
		v[1] ^= v[2];
		v[2] = SIP_ROTL(v[2], 32);
	}
}

static void
sip_block(struct sip *s, uint64_t m)
{
	s->v[3] ^= m;
	sip_rounds(s, 2);
	s->v[0] ^= m;
}

static void
sip_update(struct sip *s, const uint8_t *p, size_t len)
{
	size_t	 n;

	s->total += len;
	while (len > 0) {
		n = sizeof(s->buf) - s->nbuf;
		if (n > len)
			n = len;
		memcpy(s->buf + s->nbuf, p, n);
		s->nbuf += n;
		p += n;
		len -= n;
		if (s->nbuf == sizeof(s->buf)) {
			sip_block(s, sip_le64(s->buf));
			s->nbuf = 0;
		}
	}
}

int
compat_siphash_init(void)
{
	return (0);
}

uint64_t
compat_siphash(const uint8_t *key, const void *data, size_t len,
    uint64_t prev)
{
	struct sip	 s;
	uint64_t	 k0 = sip_le64(key), k1 = sip_le64(key + 8), b, h;
	uint8_t		 out[8];
	size_t		 i;

	memset(&s, 0, sizeof(s));
	s.v[0] = k0 ^ 0x736f6d6570736575ULL;
	s.v[1] = k1 ^ 0x646f72616e646f6dULL;
	s.v[2] = k0 ^ 0x6c7967656e657261ULL;
	s.v[3] = k1 ^ 0x7465646279746573ULL;
	sip_update(&s, (const uint8_t *)&prev, sizeof(prev));
	sip_update(&s, data, len);
	b = s.total << 56;
	for (i = 0; i < s.nbuf; i++)
		b |= (uint64_t)s.buf[i] << (8 * i);
	sip_block(&s, b);
	s.v[2] ^= 0xff;
	sip_rounds(&s, 4);
	b = s.v[0] ^ s.v[1] ^ s.v[2] ^ s.v[3];
	/* as the MAC's output: little-endian bytes, read as they lie */
	for (i = 0; i < sizeof(out); i++)
		out[i] = (b >> (8 * i)) & 0xff;
	memcpy(&h, out, sizeof(h));
	return (h);
}

#endif
