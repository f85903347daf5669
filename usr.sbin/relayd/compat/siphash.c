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
 * with OpenSSL 3, its EVP_MAC, fetched once, before the sandbox.
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

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "compat.h"

static EVP_MAC	*siphash_mac;

int
compat_siphash_init(void)
{
	if (siphash_mac == NULL)
		siphash_mac = EVP_MAC_fetch(NULL, "SIPHASH", NULL);
	return (siphash_mac == NULL ? -1 : 0);
}

/*
 * The 64-bit SipHash of prev (a chain of hashes) then len bytes of
 * data, under the 16 bytes of key; prev when it cannot be had.
 */
uint64_t
compat_siphash(const uint8_t *key, const void *data, size_t len,
    uint64_t prev)
{
	EVP_MAC_CTX	*ctx;
	OSSL_PARAM	 params[2];
	size_t		 outlen = 8, out;
	unsigned char	 buf[8];
	uint64_t	 h = 0;

	if (siphash_mac == NULL ||
	    (ctx = EVP_MAC_CTX_new(siphash_mac)) == NULL)
		return (prev);
	params[0] = OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE,
	    &outlen);
	params[1] = OSSL_PARAM_construct_end();
	if (EVP_MAC_init(ctx, key, 16, params) == 1 &&
	    EVP_MAC_update(ctx, (const unsigned char *)&prev,
	    sizeof(prev)) == 1 &&
	    EVP_MAC_update(ctx, data, len) == 1 &&
	    EVP_MAC_final(ctx, buf, &out, sizeof(buf)) == 1)
		memcpy(&h, buf, sizeof(h));
	EVP_MAC_CTX_free(ctx);
	return (h);
}

#endif
