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
 * The relay side of private-key operations.  A relay process holds
 * certificates only (libtls's fake private key); the RSA and EC_KEY
 * methods installed here send every private-key operation to the
 * process's ca instance and wait for the answer.
 *
 * A handshake that runs as a job (relay_tls_handshake(), compat/tlsjob.c)
 * waits without blocking: its job pauses, the relay process goes on with
 * its other sessions, and the answer (relay_dispatch_ca() ->
 * tls_keyops_answer()) or the deadline takes the job up again.  Any
 * other caller (TLS inspection's certificate, a handshake with no job
 * to be had) waits for the answer in poll(2), as OpenBSD's relayd does.
 *
 * This is the one file that uses OpenSSL's deprecated key-method API
 * (RSA_METHOD, EC_KEY_METHOD): it is built for the 1.1.1 API.  It works
 * with OpenSSL's default provider; a FIPS provider bypasses the methods.
 */

#include <sys/types.h>
#include <sys/queue.h>

#include <err.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "relayd.h"
#include "relay.h"

#define KEYOP_MAXDATA	1024

static struct privsep	*keyops_ps;
static uint32_t		 keyops_id;
static struct keyop_wait *keyops_waiter;
static TAILQ_HEAD(, keyop_wait) keyops_pending =
    TAILQ_HEAD_INITIALIZER(keyops_pending);
static RSA_METHOD	*rsae_method;
static EC_KEY_METHOD	*ecdsae_method;
static ECDSA_SIG *(*ecdsa_sign_sig_default)(const unsigned char *, int,
    const BIGNUM *, const BIGNUM *, EC_KEY *);

#ifdef RELAYD_KEYOPS_TEST
/*
 * Test builds only (regress/daemon/relayd-sbtest, never installed):
 * RELAYD_KEYOPS_TEST=FILE has the relay make its signatures itself with
 * the private key in FILE, read when each process starts (before its
 * chroot; a file that cannot be read stops it), instead of asking ca.
 * make bench runs it beside relayd to show what keeping keys in ca
 * costs a handshake.
 */
static EVP_PKEY		*keyops_test_key;

static void __attribute__((constructor))
keyops_test_load(void)
{
	const char	*path;
	FILE		*fp;

	if ((path = getenv("RELAYD_KEYOPS_TEST")) == NULL)
		return;
	if ((fp = fopen(path, "r")) == NULL)
		err(1, "RELAYD_KEYOPS_TEST %s", path);
	keyops_test_key = PEM_read_PrivateKey(fp, NULL, NULL, NULL);
	(void)fclose(fp);
	if (keyops_test_key == NULL)
		errx(1, "RELAYD_KEYOPS_TEST %s: no private key", path);
}
#endif

/* Where a key keeps its name, made once (ex_data of RSA and EC_KEY). */
static int		 keyops_rsa_idx = -1, keyops_ec_idx = -1;

static void
keyops_name_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx,
    long argl, void *argp)
{
	(void)parent;
	(void)ad;
	(void)idx;
	(void)argl;
	(void)argp;
	free(ptr);
}

/*
 * The name ca knows a key by, as tls_pkey_hash() makes it: the first
 * operation with a key makes it (an encoding and a SHA-256), the key
 * keeps it for the next handshakes.
 */
static const char *
keyops_name(void *key, int ec)
{
	unsigned char	*der = NULL;
	char		*name;
	int		 len;

	name = ec ? EC_KEY_get_ex_data(key, keyops_ec_idx) :
	    RSA_get_ex_data(key, keyops_rsa_idx);
	if (name != NULL)
		return (name);
	len = ec ? i2o_ECPublicKey(key, &der) : i2d_RSAPublicKey(key, &der);
	if ((name = malloc(TLS_HASH_SIZE)) != NULL &&
	    tls_der_hash(der, len, name, TLS_HASH_SIZE) == -1) {
		free(name);
		name = NULL;
	}
	OPENSSL_free(der);
	if (name != NULL && (ec ? EC_KEY_set_ex_data(key, keyops_ec_idx,
	    name) : RSA_set_ex_data(key, keyops_rsa_idx, name)) != 1) {
		free(name);
		name = NULL;
	}
	return (name);
}

static struct ctl_keyopstats	 keyops_stats;

/* What this relay process asked of its ca process, for pfe. */
void
tls_keyops_stats(struct ctl_keyopstats *st)
{
	*st = keyops_stats;
}

static void
keyops_count(struct timespec *start, int ret)
{
	struct timespec	 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	keyops_stats.ops++;
	if (ret < 0)
		keyops_stats.failed++;
	keyops_stats.us += (now.tv_sec - start->tv_sec) * 1000000 +
	    (now.tv_nsec - start->tv_nsec) / 1000;
}

static int
keyops_elapsed(struct timespec *start)
{
	struct timespec	 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return ((now.tv_sec - start->tv_sec) * 1000 +
	    (now.tv_nsec - start->tv_nsec) / 1000000);
}

static int	 keyops_wait(struct imsgbuf *, uint32_t, struct timespec *,
		    unsigned char *, size_t);
static int	 keyops_paused(struct keyop_wait *, uint32_t, const void *,
		    size_t, unsigned char *, size_t);
static int	 keyops_take(struct imsg *, int);
static void	 keyops_event(int, short, void *);

/*
 * One round trip to ca: what arrives meanwhile on the same channel is
 * only ever a late answer, dropped.  -1, or the length of the result.
 */
static int
keyops_call(uint32_t type, const char *hash, int padding,
    const unsigned char *in, size_t inlen, unsigned char *out, size_t outlen)
{
	struct imsgbuf		*ibuf;
	struct ctl_keyop	 op;
	struct timespec		 start;
	unsigned char		 buf[sizeof(op) + KEYOP_MAXDATA];
	int			 ret;

#ifdef RELAYD_KEYOPS_TEST
	if (keyops_test_key != NULL) {
		size_t	 n = outlen;

		if (tls_keyops_private(keyops_test_key, type, padding, in,
		    inlen, out, &n) == -1)
			return (-1);
		return ((int)n);
	}
#endif
	if (keyops_ps == NULL || inlen > KEYOP_MAXDATA || (ibuf =
	    proc_ibuf(keyops_ps, PROC_CA, keyops_ps->ps_instance)) == NULL)
		return (-1);
	memset(&op, 0, sizeof(op));
	(void)strlcpy(op.hash, hash, sizeof(op.hash));
	op.id = ++keyops_id;
	op.padding = padding;
	op.len = inlen;
	memcpy(buf, &op, sizeof(op));
	memcpy(buf + sizeof(op), in, inlen);
	if (keyops_waiter != NULL && compat_tlsjob_current())
		return (keyops_paused(keyops_waiter, type, buf,
		    sizeof(op) + inlen, out, outlen));
	if (imsg_compose(ibuf, type, 0, 0, -1, buf, sizeof(op) + inlen) ==
	    -1 || imsg_flush(ibuf) == -1) {
		log_warn("%s: to ca", __func__);
		return (-1);
	}

	clock_gettime(CLOCK_MONOTONIC, &start);
	ret = keyops_wait(ibuf, type, &start, out, outlen);
	keyops_count(&start, ret);
	return (ret);
}

/* An answer's result, op its header, into out: its length, or -1. */
static int
keyops_result(struct imsg *imsg, struct ctl_keyop *op, unsigned char *out,
    size_t outlen)
{
	if (op->ret < 0 || op->len != IMSG_DATA_SIZE(imsg) - sizeof(*op) ||
	    op->len > outlen)
		return (-1);
	memcpy(out, (unsigned char *)imsg->data + sizeof(*op), op->len);
	return ((int)op->len);
}

/* What came while waiting: the answer to keyops_id ends the wait. */
static void
keyops_mine(struct imsg *imsg, uint32_t type, unsigned char *out,
    size_t outlen, int *ret, int *done)
{
	struct ctl_keyop	 op;

	if (imsg->hdr.type != type || IMSG_DATA_SIZE(imsg) < sizeof(op)) {
		log_warnx("%s: unexpected %s from ca", __func__,
		    imsg_type_name(imsg->hdr.type));
		return;
	}
	memcpy(&op, imsg->data, sizeof(op));
	if (op.id != keyops_id) {
		log_warnx("%s: late answer from ca dropped", __func__);
		return;
	}
	*ret = keyops_result(imsg, &op, out, outlen);
	*done = 1;
}

/* The answer to the request keyops_id, until TLS_PRIV_TIMEOUT. */
static int
keyops_wait(struct imsgbuf *ibuf, uint32_t type, struct timespec *start,
    unsigned char *out, size_t outlen)
{
	struct imsg		 imsg;
	struct pollfd		 pfd;
	ssize_t			 n;
	int			 ret = -1, done = 0, left;

	while (!done) {
		if ((left = TLS_PRIV_TIMEOUT - keyops_elapsed(start)) <= 0) {
			log_warnx("%s: no answer from ca in %d ms", __func__,
			    TLS_PRIV_TIMEOUT);
			return (-1);
		}
		pfd.fd = ibuf->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, left) == -1) {
			if (errno == EINTR)
				continue;
			return (-1);
		}
		if ((pfd.revents & (POLLIN | POLLHUP)) == 0)
			continue;
		if ((n = imsg_read(ibuf)) == -1 && errno != EAGAIN)
			return (-1);
		if (n == 0)
			fatalx("%s: ca went away", __func__);
		/* everything read is taken: the event loop will not see it */
		while ((n = imsg_get(ibuf, &imsg)) > 0) {
			/* a paused handshake's answer goes to it */
			if (keyops_take(&imsg, 1) == -1)
				keyops_mine(&imsg, type, out, outlen, &ret,
				    &done);
			imsg_free(&imsg);
		}
		if (n == -1)
			return (-1);
	}
	return (ret);
}

/*
 * Within a handshake's job: send the request, pause until the answer or
 * the deadline (keyops_event()), and say what came.
 */
static int
keyops_paused(struct keyop_wait *w, uint32_t type, const void *buf,
    size_t len, unsigned char *out, size_t outlen)
{
	struct timeval	 tv;

	w->id = keyops_id;
	w->type = type;
	w->out = out;
	w->outlen = outlen;
	w->ret = -1;
	clock_gettime(CLOCK_MONOTONIC, &w->start);
	if (proc_compose_imsg(keyops_ps, PROC_CA, keyops_ps->ps_instance,
	    type, 0, -1, buf, len) == -1) {
		log_warn("%s: to ca", __func__);
		return (-1);
	}
	w->state = KEYOP_WAITING;
	TAILQ_INSERT_TAIL(&keyops_pending, w, entry);
	tv.tv_sec = TLS_PRIV_TIMEOUT / 1000;
	tv.tv_usec = (TLS_PRIV_TIMEOUT % 1000) * 1000;
	evtimer_set(&w->ev, keyops_event, w);
	evtimer_add(&w->ev, &tv);
	if (compat_tlsjob_pause() == -1)
		tls_keyops_cancel(w);
	/* taken up again: answered, too late, or abandoned */
	keyops_count(&w->start, w->ret);
	return (w->ret);
}

/* The deadline of a waiting operation, or the delivery of its answer. */
static void
keyops_event(int fd, short event, void *arg)
{
	struct keyop_wait	*w = arg;

	(void)fd;
	(void)event;
	if (w->state == KEYOP_WAITING) {
		TAILQ_REMOVE(&keyops_pending, w, entry);
		log_warnx("%s: no answer from ca in %d ms", __func__,
		    TLS_PRIV_TIMEOUT);
	}
	w->state = KEYOP_IDLE;
	w->done(w->arg);
}

/*
 * An answer for a paused handshake: its result to the job, which goes
 * on now, or (later) from the event loop when the caller must not be
 * interrupted.  -1 when no paused handshake waits for it.
 */
static int
keyops_take(struct imsg *imsg, int later)
{
	struct keyop_wait	*w;
	struct ctl_keyop	 op;
	struct timeval		 tv = { 0, 0 };

	if (IMSG_DATA_SIZE(imsg) < sizeof(op))
		return (-1);
	memcpy(&op, imsg->data, sizeof(op));
	TAILQ_FOREACH(w, &keyops_pending, entry)
		if (w->id == op.id && w->type == imsg->hdr.type)
			break;
	if (w == NULL)
		return (-1);
	TAILQ_REMOVE(&keyops_pending, w, entry);
	evtimer_del(&w->ev);
	w->ret = keyops_result(imsg, &op, w->out, w->outlen);
	w->state = KEYOP_ANSWERED;
	if (later)
		evtimer_add(&w->ev, &tv);
	else
		keyops_event(-1, 0, w);
	return (0);
}

/* From ca: the answer of a paused handshake's operation, -1 if none. */
int
tls_keyops_answer(struct imsg *imsg)
{
	return (keyops_take(imsg, 0));
}

/*
 * The key operations of the job about to run go to w, and its answer
 * to done(arg); NULL after the run.
 */
void
tls_keyops_waiter(struct keyop_wait *w, void (*done)(void *), void *arg)
{
	keyops_waiter = w;
	if (w != NULL) {
		w->done = done;
		w->arg = arg;
	}
}

/* The handshake goes: its operation fails, the answer is dropped. */
void
tls_keyops_cancel(struct keyop_wait *w)
{
	if (w->state == KEYOP_IDLE)
		return;
	if (w->state == KEYOP_WAITING)
		TAILQ_REMOVE(&keyops_pending, w, entry);
	evtimer_del(&w->ev);
	w->state = KEYOP_IDLE;
	w->ret = -1;
}

static int
rsae_priv_enc(int flen, const unsigned char *from, unsigned char *to,
    RSA *rsa, int padding)
{
	const char	*hash;

	if (RSA_get0_d(rsa) != NULL)
		return (RSA_meth_get_priv_enc(RSA_PKCS1_OpenSSL())(flen, from,
		    to, rsa, padding));
	if (flen < 0 || (hash = keyops_name(rsa, 0)) == NULL)
		return (-1);
	return (keyops_call(IMSG_CA_PRIVENC, hash, padding, from, flen, to,
	    RSA_size(rsa)));
}

static int
rsae_priv_dec(int flen, const unsigned char *from, unsigned char *to,
    RSA *rsa, int padding)
{
	const char	*hash;

	if (RSA_get0_d(rsa) != NULL)
		return (RSA_meth_get_priv_dec(RSA_PKCS1_OpenSSL())(flen, from,
		    to, rsa, padding));
	if (flen < 0 || (hash = keyops_name(rsa, 0)) == NULL)
		return (-1);
	return (keyops_call(IMSG_CA_PRIVDEC, hash, padding, from, flen, to,
	    RSA_size(rsa)));
}

static ECDSA_SIG *
ecdsae_do_sign(const unsigned char *dgst, int dlen, const BIGNUM *inv,
    const BIGNUM *rp, EC_KEY *eckey)
{
	const char	*hash;
	unsigned char	 sig[KEYOP_MAXDATA];
	const unsigned char *p = sig;
	int		 len;

	if (EC_KEY_get0_private_key(eckey) != NULL)
		return (ecdsa_sign_sig_default(dgst, dlen, inv, rp, eckey));
	if (dlen < 0 || (hash = keyops_name(eckey, 1)) == NULL)
		return (NULL);
	if ((len = keyops_call(IMSG_CA_ECDSA, hash, 0, dgst, dlen, sig,
	    sizeof(sig))) <= 0)
		return (NULL);
	return (d2i_ECDSA_SIG(NULL, &p, len));
}

/*
 * Before any tls_configure(): keys made from then on use these methods
 * (a key with its private part still uses OpenSSL's own).
 */
int
tls_keyops_init(struct privsep *ps)
{
	int (*sign)(int, const unsigned char *, int, unsigned char *,
	    unsigned int *, const BIGNUM *, const BIGNUM *, EC_KEY *);
	int (*setup)(EC_KEY *, BN_CTX *, BIGNUM **, BIGNUM **);

	keyops_ps = ps;
	if (rsae_method != NULL)
		return (0);
	if ((keyops_rsa_idx = RSA_get_ex_new_index(0, NULL, NULL, NULL,
	    keyops_name_free)) == -1 || (keyops_ec_idx =
	    EC_KEY_get_ex_new_index(0, NULL, NULL, NULL,
	    keyops_name_free)) == -1)
		return (-1);
	if ((rsae_method = RSA_meth_dup(RSA_PKCS1_OpenSSL())) == NULL ||
	    RSA_meth_set1_name(rsae_method, "relayd ca") != 1 ||
	    RSA_meth_set_priv_enc(rsae_method, rsae_priv_enc) != 1 ||
	    RSA_meth_set_priv_dec(rsae_method, rsae_priv_dec) != 1 ||
	    RSA_meth_set_flags(rsae_method, RSA_meth_get_flags(rsae_method) |
	    RSA_METHOD_FLAG_NO_CHECK) != 1)
		return (-1);
	RSA_set_default_method(rsae_method);
	if ((ecdsae_method = EC_KEY_METHOD_new(EC_KEY_OpenSSL())) == NULL)
		return (-1);
	EC_KEY_METHOD_get_sign(ecdsae_method, &sign, &setup,
	    &ecdsa_sign_sig_default);
	EC_KEY_METHOD_set_sign(ecdsae_method, sign, setup, ecdsae_do_sign);
	EC_KEY_set_default_method(ecdsae_method);
	return (0);
}

/*
 * ca: one operation with a private key, for a relay process: RSA sign
 * (PKCS#1 type 1 padding, or none when the caller padded for PSS) or
 * decrypt with the padding asked for, or an ECDSA signature (DER) of a
 * digest.  The key's legacy form, made once by libcrypto and kept with
 * the key, goes straight to its method: the EVP way looks its algorithm
 * up in the provider's tables again for every operation.  out has
 * *outlen bytes; *outlen gets the result's length.
 */
int
tls_keyops_private(EVP_PKEY *pkey, uint32_t type, int padding,
    const uint8_t *in, size_t inlen, uint8_t *out, size_t *outlen)
{
	RSA		*rsa;
	EC_KEY		*ec;
	unsigned int	 siglen;
	int		 n = -1;

	if (inlen > INT_MAX)
		return (-1);
	/* libcrypto's own copy of the key: another reference to it */
	switch (type) {
	case IMSG_CA_PRIVENC:
	case IMSG_CA_PRIVDEC:
		if ((rsa = EVP_PKEY_get1_RSA(pkey)) == NULL)
			return (-1);
		if (*outlen >= (size_t)RSA_size(rsa))
			n = type == IMSG_CA_PRIVENC ?
			    RSA_private_encrypt(inlen, in, out, rsa, padding) :
			    RSA_private_decrypt(inlen, in, out, rsa, padding);
		RSA_free(rsa);
		break;
	case IMSG_CA_ECDSA:
		if ((ec = EVP_PKEY_get1_EC_KEY(pkey)) == NULL)
			return (-1);
		if (*outlen >= (size_t)ECDSA_size(ec) &&
		    ECDSA_sign(0, in, inlen, out, &siglen, ec) == 1)
			n = (int)siglen;
		EC_KEY_free(ec);
		break;
	}
	if (n < 0)
		return (-1);
	*outlen = n;
	return (0);
}

static X509 *
keyops_x509(const uint8_t *pem, size_t len)
{
	BIO	*bio;
	X509	*x;

	if ((bio = BIO_new_mem_buf(pem, len)) == NULL)
		return (NULL);
	x = PEM_read_bio_X509(bio, NULL, NULL, NULL);
	BIO_free(bio);
	return (x);
}

/*
 * A key of the legacy kind, made from a public key: its private-key
 * operations go through the methods above, to ca.
 */
static EVP_PKEY *
keyops_legacy_pkey(EVP_PKEY *pub)
{
	EVP_PKEY	*pkey;
	const RSA	*prsa;
	const EC_KEY	*pec;
	RSA		*rsa;
	EC_KEY		*ec;

	if ((pkey = EVP_PKEY_new()) == NULL)
		return (NULL);
	switch (EVP_PKEY_base_id(pub)) {
	case EVP_PKEY_RSA:
		if ((prsa = EVP_PKEY_get0_RSA(pub)) == NULL ||
		    (rsa = RSA_new()) == NULL)
			break;
		if (RSA_set0_key(rsa, BN_dup(RSA_get0_n(prsa)),
		    BN_dup(RSA_get0_e(prsa)), NULL) != 1 ||
		    EVP_PKEY_assign_RSA(pkey, rsa) != 1) {
			RSA_free(rsa);
			break;
		}
		return (pkey);
	case EVP_PKEY_EC:
		if ((pec = EVP_PKEY_get0_EC_KEY(pub)) == NULL ||
		    (ec = EC_KEY_new()) == NULL)
			break;
		if (EC_KEY_set_group(ec, EC_KEY_get0_group(pec)) != 1 ||
		    EC_KEY_set_public_key(ec, EC_KEY_get0_public_key(pec)) !=
		    1 || EVP_PKEY_assign_EC_KEY(pkey, ec) != 1) {
			EC_KEY_free(ec);
			break;
		}
		return (pkey);
	}
	EVP_PKEY_free(pkey);
	return (NULL);
}

/*
 * TLS inspection: the backend's certificate (first of the PEM chain
 * peer) again, with the public key of the relay's keypair (keycert)
 * and issued by the inspection CA (cacert), whose key signs it in ca.
 * Extensions that name the old issuer or key go.  Returns PEM, to be
 * freed, and its length in *outlen; NULL on failure.
 */
uint8_t *
tls_keyops_resign(const uint8_t *peer, size_t peerlen, const uint8_t *cacert,
    size_t calen, const uint8_t *keycert, size_t keylen, size_t *outlen)
{
	static const int drop[] = {
		NID_authority_key_identifier, NID_subject_key_identifier,
		NID_info_access, NID_crl_distribution_points,
		NID_ct_precert_scts
	};
	X509		*x = NULL, *ca = NULL, *kx = NULL;
	EVP_PKEY	*capkey = NULL;
	BIO		*bio = NULL;
	BUF_MEM		*bm;
	uint8_t		*out = NULL;
	size_t		 i;
	int		 pos;

	if ((x = keyops_x509(peer, peerlen)) == NULL ||
	    (ca = keyops_x509(cacert, calen)) == NULL ||
	    (kx = keyops_x509(keycert, keylen)) == NULL)
		goto done;
	for (i = 0; i < nitems(drop); i++)
		while ((pos = X509_get_ext_by_NID(x, drop[i], -1)) >= 0)
			X509_EXTENSION_free(X509_delete_ext(x, pos));
	if (X509_set_pubkey(x, X509_get0_pubkey(kx)) != 1 ||
	    X509_set_issuer_name(x, X509_get_subject_name(ca)) != 1 ||
	    (capkey = keyops_legacy_pkey(X509_get0_pubkey(ca))) == NULL ||
	    X509_sign(x, capkey, EVP_sha256()) <= 0)
		goto done;
	if ((bio = BIO_new(BIO_s_mem())) == NULL ||
	    PEM_write_bio_X509(bio, x) != 1)
		goto done;
	BIO_get_mem_ptr(bio, &bm);
	if ((out = malloc(bm->length)) == NULL)
		goto done;
	memcpy(out, bm->data, bm->length);
	*outlen = bm->length;
 done:
	BIO_free(bio);
	EVP_PKEY_free(capkey);
	X509_free(x);
	X509_free(ca);
	X509_free(kx);
	return (out);
}
