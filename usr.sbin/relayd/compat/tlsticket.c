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
 * TLS session tickets with libtls on OpenSSL (libretls); its buffers below.
 *
 * libtls encrypts tickets in a callback it gives OpenSSL with the keys
 * tls_config_add_ticket_key() gave it (relayd's parent makes them and
 * rotates them, as on OpenBSD).  Its callback follows LibreSSL's
 * convention and returns 0 when it has set a ticket up; OpenSSL reads 0
 * as "no ticket" (SSL_CTX_set_tlsext_ticket_key_cb(3): 1 is success),
 * so no ticket is ever sent and nothing resumes.  libtls exposes no
 * SSL_CTX, so relayd takes the one call through which libtls installs
 * that callback: SSL_CTX_callback_ctrl() defined here is found before
 * libssl's (a symbol the executable defines comes first), installs a
 * wrapper that turns that 0 into 1, and passes every other call on to
 * libssl's.  Decryption keeps libtls's answers, which are OpenSSL's.
 * A context with tickets also sends TLS 1.3 tickets again: relayd's
 * OpenSSL configuration sends none by default (compat_tlsconf_init()).
 *
 * With LibreSSL (OpenBSD, and libtls built on it) none of this is
 * compiled: the convention is the library's own.
 */

#include <openssl/opensslv.h>

#ifndef LIBRESSL_VERSION_NUMBER

#include <dlfcn.h>
#include <stddef.h>

#include <openssl/conf.h>
#include <openssl/ssl.h>

#include "compat.h"

#define TICKETS_TLS13	1	/* TLS 1.3 tickets after each handshake */

typedef long	(*callback_ctrl_fn)(SSL_CTX *, int, void (*)(void));
typedef long	(*ctx_ctrl_fn)(SSL_CTX *, int, long, void *);
/* the ticket callback; its two context types as opaque pointers */
typedef int	(*ticket_cb_fn)(SSL *, unsigned char *, unsigned char *,
		    void *, void *, int);

static callback_ctrl_fn	 real_callback_ctrl;
static ctx_ctrl_fn	 real_ctx_ctrl;
static ticket_cb_fn	 libtls_ticket_cb;

long	SSL_CTX_callback_ctrl(SSL_CTX *, int, void (*)(void));
long	SSL_CTX_ctrl(SSL_CTX *, int, long, void *);

/* Resolved before the sandbox; lazily if something calls earlier. */
int
compat_tlsticket_init(void)
{
	if (real_callback_ctrl == NULL)
		real_callback_ctrl = (callback_ctrl_fn)dlsym(RTLD_NEXT,
		    "SSL_CTX_callback_ctrl");
	return (real_callback_ctrl == NULL ? -1 : 0);
}

static int
compat_ticket_cb(SSL *ssl, unsigned char *name, unsigned char *iv,
    void *cctx, void *hctx, int enc)
{
	int	 ret;

	ret = libtls_ticket_cb(ssl, name, iv, cctx, hctx, enc);
	if (enc == 1 && ret == 0)
		return (1);
	return (ret);
}

long
SSL_CTX_callback_ctrl(SSL_CTX *ctx, int cmd, void (*fp)(void))
{
	if (compat_tlsticket_init() == -1)
		return (0);
	if (cmd == SSL_CTRL_SET_TLSEXT_TICKET_KEY_CB && fp != NULL) {
		libtls_ticket_cb = (ticket_cb_fn)fp;
		(void)SSL_CTX_set_num_tickets(ctx, TICKETS_TLS13);
		fp = (void (*)(void))compat_ticket_cb;
	}
	return (real_callback_ctrl(ctx, cmd, fp));
}

/*
 * Buffers.  OpenSSL keeps a connection's read and write buffers, 17 KiB
 * each, from its first record to its end, unless the mode
 * SSL_MODE_RELEASE_BUFFERS hands them back whenever they are empty (as
 * HAProxy and nginx set it).  libtls sets modes on each SSL_CTX it makes
 * (SSL_CTX_set_mode() is SSL_CTX_ctrl(SSL_CTRL_MODE)) but not that one,
 * so SSL_CTX_ctrl() defined here adds it: an idle TLS session after
 * some traffic held 52 KiB of a relay process, and holds 19 now.
 * Resolved before the sandbox, by every process that makes TLS contexts
 * (relay, hce); lazily for anything that calls earlier.
 */
int
compat_tlsbuf_init(void)
{
	if (real_ctx_ctrl == NULL)
		real_ctx_ctrl = (ctx_ctrl_fn)dlsym(RTLD_NEXT, "SSL_CTX_ctrl");
	return (real_ctx_ctrl == NULL ? -1 : 0);
}

long
SSL_CTX_ctrl(SSL_CTX *ctx, int cmd, long larg, void *parg)
{
	if (compat_tlsbuf_init() == -1)
		return (0);
	if (cmd == SSL_CTRL_MODE)
		larg |= SSL_MODE_RELEASE_BUFFERS;
	return (real_ctx_ctrl(ctx, cmd, larg, parg));
}

/*
 * TLS 1.3 on OpenSSL sends two session tickets after each handshake
 * even with tickets off (libtls here cannot issue them anyway; LibreSSL's
 * libtls sends none): a client that never reads turns its close into a
 * reset then, which can discard the last bytes it sent.  libtls has no
 * knob for it: OpenSSL's own configuration of the relay process, applied
 * to every SSL_CTX it makes, sends none ("NumTickets = 0").
 */
int
compat_tlsconf_init(void)
{
	static const char	 text[] = "relayd = relayd_init\n"
	    "[relayd_init]\nssl_conf = relayd_ssl\n"
	    "[relayd_ssl]\nsystem_default = relayd_tls\n"
	    "[relayd_tls]\nNumTickets = 0\n";
	CONF			*cnf;
	BIO			*bio;
	long			 line;
	int			 ret = -1;

	OPENSSL_load_builtin_modules();
	if ((cnf = NCONF_new(NULL)) == NULL)
		return (-1);
	if ((bio = BIO_new_mem_buf(text, sizeof(text) - 1)) != NULL &&
	    NCONF_load_bio(cnf, bio, &line) == 1 &&
	    CONF_modules_load(cnf, "relayd", 0) == 1)
		ret = 0;
	BIO_free(bio);
	NCONF_free(cnf);
	return (ret);
}

#else /* LibreSSL */

#include "compat.h"

/* LibreSSL's libtls is the library's own convention: left as it is */
int
compat_tlsbuf_init(void)
{
	return (0);
}

int
compat_tlsticket_init(void)
{
	return (0);
}

int
compat_tlsconf_init(void)
{
	return (0);
}

#endif
