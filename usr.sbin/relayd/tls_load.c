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
 * TLS files, read by the parent when it parses the configuration: a
 * relay's certificates, keys, CA files and CRLs, checked there (a pair
 * that does not match, a key that needs a passphrase, a CA file with no
 * certificate, a certificate out of its dates) so that relayd -n and a
 * reload say what is wrong with file:line, and kept as each process's
 * list of a relay's certificates (the relays get certificates, ca the
 * keys).  The names ca and the relays know a key by are made here too.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <tls.h>

#include "relayd.h"

static int	 tls_load_one(struct relay *, enum relay_certtype, int,
		    const char *, char *, char *, size_t);
static int	 tls_check_key(struct relay *, int, enum relay_certtype,
		    enum relay_certtype, const char *, const char *, char *,
		    size_t);
static int	 tls_nopass(char *, int, int, void *);
static int	 tls_check_pem(struct relay *, enum relay_certtype,
		    const char *, char *, size_t);
static void	 tls_cert_why(const uint8_t *, size_t, const char *, char *,
		    size_t);
static void	 tls_cert_dates(struct relay *, int, const char *);
static int	 tls_load_pair(struct relayd *, struct relay *, const char *,
		    int, char *, size_t);
static int	 relay_cert_add(struct relay *, enum relay_certtype, int,
		    uint8_t *, size_t);

struct relay_cert *
relay_cert_new(struct relay *rlay, enum relay_certtype type, int index)
{
	struct relay_cert	*rc;

	if ((rc = calloc(1, sizeof(*rc))) == NULL)
		return (NULL);
	rc->rc_type = type;
	rc->rc_index = index;
	TAILQ_INSERT_TAIL(&rlay->rl_certs, rc, rc_entry);
	return (rc);
}

static int
relay_cert_add(struct relay *rlay, enum relay_certtype type, int index,
    uint8_t *data, size_t len)
{
	struct relay_cert	*rc;

	if ((rc = relay_cert_new(rlay, type, index)) == NULL) {
		tls_unload_file(data, len);
		return (-1);
	}
	rc->rc_data = data;
	rc->rc_len = len;
	return (0);
}

struct relay_cert *
relay_cert_find(struct relay *rlay, enum relay_certtype type, int index)
{
	struct relay_cert	*rc;

	TAILQ_FOREACH(rc, &rlay->rl_certs, rc_entry)
		if (rc->rc_type == type && rc->rc_index == index)
			return (rc);
	return (NULL);
}

void
relay_certs_free(struct relay *rlay)
{
	struct relay_cert	*rc;

	while ((rc = TAILQ_FIRST(&rlay->rl_certs)) != NULL) {
		TAILQ_REMOVE(&rlay->rl_certs, rc, rc_entry);
		if (rc->rc_data != NULL)
			tls_unload_file(rc->rc_data, rc->rc_len);
		free(rc);
	}
}

/* A file of the TLS directory, or an absolute path. */
static int
tls_path(struct relayd *conf, char *buf, size_t len, const char *sub,
    const char *name, const char *ext)
{
	const char	*dir = conf->sc_conf.tlsdir[0] != '\0' ?
			    conf->sc_conf.tlsdir : TLS_CERT_DIR;
	int		 n;

	n = snprintf(buf, len, "%s/%s%s%s", dir, sub, name, ext);
	return (n < 0 || (size_t)n >= len ? -1 : 0);
}

static int
tls_load_one(struct relay *rlay, enum relay_certtype type, int index,
    const char *path, char *password, char *err, size_t errlen)
{
	uint8_t	*data;
	size_t	 len;

	if ((data = tls_load_file(path, &len, password)) == NULL) {
		(void)snprintf(err, errlen, "%s: %s", path,
		    errno != 0 ? strerror(errno) : "cannot load");
		return (-1);
	}
	if (relay_cert_add(rlay, type, index, data, len) == -1) {
		(void)snprintf(err, errlen, "out of memory");
		return (-1);
	}
	return (0);
}

/*
 * One keypair, as OpenBSD finds it: NAME:PORT.crt, else NAME.crt; the
 * key in private/ the same way; an OCSP staple beside the certificate
 * if there is one.
 */
static int
tls_load_pair(struct relayd *conf, struct relay *rlay, const char *name,
    int index, char *err, size_t errlen)
{
	static const struct {
		enum relay_certtype	 type;
		const char		*sub;
		const char		*ext;
		int			 optional;
	} files[] = {
		{ RELAY_CERT_CERT,	"",		".crt",	0 },
		{ RELAY_CERT_KEY,	"private/",	".key",	0 },
		{ RELAY_CERT_OCSP,	"",		".ocsp", 1 }
	};
	struct stat	 st;
	char		 withport[RELAYD_HOSTNAME_MAX + 8];
	char		 path[PATH_MAX], certpath[PATH_MAX];
	size_t		 i;

	(void)snprintf(withport, sizeof(withport), "%s:%u", name,
	    rlay->rl_conf.port);
	for (i = 0; i < nitems(files); i++) {
		if (tls_path(conf, path, sizeof(path), files[i].sub,
		    withport, files[i].ext) == -1 ||
		    (stat(path, &st) == -1 && (tls_path(conf, path,
		    sizeof(path), files[i].sub, name, files[i].ext) == -1 ||
		    stat(path, &st) == -1))) {
			if (files[i].optional)
				continue;
			(void)snprintf(err, errlen, "%s: %s", path,
			    strerror(errno));
			return (-1);
		}
		if (tls_load_one(rlay, files[i].type, index, path, NULL,
		    err, errlen) == -1)
			return (-1);
		if (files[i].type == RELAY_CERT_CERT) {
			(void)strlcpy(certpath, path, sizeof(certpath));
			tls_cert_dates(rlay, index, path);
		} else if (files[i].type == RELAY_CERT_KEY &&
		    tls_check_key(rlay, index, RELAY_CERT_CERT,
		    RELAY_CERT_KEY, path, certpath, err, errlen) == -1)
			return (-1);
	}
	return (0);
}

/*
 * Why a certificate has no key name: none could be read, or its key is
 * of a type ca cannot sign with (its key methods are RSA's and EC's).
 */
static void
tls_cert_why(const uint8_t *pem, size_t len, const char *path, char *err,
    size_t errlen)
{
	BIO		*bio;
	X509		*x509 = NULL;
	EVP_PKEY	*pkey;
	const char	*type = NULL;

	if ((bio = BIO_new_mem_buf(pem, len)) != NULL) {
		x509 = PEM_read_bio_X509(bio, NULL, NULL, NULL);
		BIO_free(bio);
	}
	ERR_clear_error();
	if (x509 != NULL && (pkey = X509_get0_pubkey(x509)) != NULL &&
	    (type = OBJ_nid2sn(EVP_PKEY_base_id(pkey))) == NULL)
		type = "unknown";
	if (type != NULL)
		(void)snprintf(err, errlen, "%s: the certificate's key is "
		    "%s: relayd signs with RSA and EC keys only", path, type);
	else
		(void)snprintf(err, errlen, "%s: no certificate with a "
		    "public key", path);
	X509_free(x509);
	ERR_clear_error();
}

/*
 * A keypair's certificate: the first to expire of the relay's goes to
 * rl_conf for the metrics, and one that is not valid now (expired, or
 * valid from a date to come: a clock that is wrong) is said, as a
 * reload after an automated renewal is where it shows.
 */
static void
tls_cert_dates(struct relay *rlay, int index, const char *path)
{
	struct relay_cert	*rc;
	BIO			*bio;
	X509			*x509 = NULL;
	struct tm		 tm;
	time_t			 before, after, now = time(NULL);
	char			 date[32];

	if ((rc = relay_cert_find(rlay, RELAY_CERT_CERT, index)) == NULL)
		return;
	if ((bio = BIO_new_mem_buf(rc->rc_data, rc->rc_len)) != NULL) {
		x509 = PEM_read_bio_X509(bio, NULL, NULL, NULL);
		BIO_free(bio);
	}
	ERR_clear_error();
	if (x509 == NULL)
		return;
	memset(&tm, 0, sizeof(tm));
	before = ASN1_TIME_to_tm(X509_get0_notBefore(x509), &tm) == 1 ?
	    timegm(&tm) : -1;
	memset(&tm, 0, sizeof(tm));
	after = ASN1_TIME_to_tm(X509_get0_notAfter(x509), &tm) == 1 ?
	    timegm(&tm) : -1;
	X509_free(x509);
	if (after != -1 && (rlay->rl_conf.tls_notafter == 0 ||
	    after < rlay->rl_conf.tls_notafter))
		rlay->rl_conf.tls_notafter = after;
	if (after != -1 && after < now) {
		(void)strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC",
		    gmtime(&after));
		log_warnx("relay %s: the certificate %s expired on %s",
		    rlay->rl_conf.name, path, date);
	} else if (before != -1 && before > now) {
		(void)strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC",
		    gmtime(&before));
		log_warnx("relay %s: the certificate %s is not valid before "
		    "%s", rlay->rl_conf.name, path, date);
	}
}

/* A key that asks for a password is not read: relayd has none for it. */
static int
tls_nopass(char *buf, int size, int rwflag, void *arg)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)arg;
	return (-1);
}

/*
 * Parent: the key of a keypair is the private half of its certificate,
 * as nginx and HAProxy check.  Not checked, a certificate renewed with
 * a new key and the old key left (or the other way round) passed
 * "relayd -n" and a reload, and then every handshake failed.
 */
static int
tls_check_key(struct relay *rlay, int index, enum relay_certtype ctype,
    enum relay_certtype ktype, const char *keypath, const char *certpath,
    char *err, size_t errlen)
{
	struct relay_cert	*cert, *key;
	char			 chash[TLS_HASH_SIZE], khash[TLS_HASH_SIZE];
	BIO			*bio;
	EVP_PKEY		*pkey = NULL;
	int			 ret;

	cert = relay_cert_find(rlay, ctype, index);
	key = relay_cert_find(rlay, ktype, index);
	if (cert == NULL || key == NULL)
		return (0);
	if (tls_pubkey_hash(cert->rc_data, cert->rc_len, chash,
	    sizeof(chash)) == -1) {
		tls_cert_why(cert->rc_data, cert->rc_len, certpath, err,
		    errlen);
		return (-1);
	}
	if ((bio = BIO_new_mem_buf(key->rc_data, key->rc_len)) != NULL) {
		pkey = PEM_read_bio_PrivateKey(bio, NULL, tls_nopass, NULL);
		BIO_free(bio);
	}
	ERR_clear_error();
	if (pkey == NULL) {
		(void)snprintf(err, errlen, "%s: no private key, or one "
		    "with a password", keypath);
		return (-1);
	}
	ret = tls_pkey_hash(pkey, khash, sizeof(khash));
	EVP_PKEY_free(pkey);
	if (ret == -1 || strcmp(chash, khash) != 0) {
		(void)snprintf(err, errlen, "%s: not the key of the "
		    "certificate %s", keypath, certpath);
		return (-1);
	}
	return (0);
}

/*
 * Parent, at parse time: every file a relay's TLS needs.  On failure
 * err says which file and why.
 */
int
tls_load_relay(struct relayd *conf, struct relay *rlay, struct protocol *p,
    char *err, size_t errlen)
{
	struct keyname	*k;
	char		 name[RELAYD_HOSTNAME_MAX + 1];
	int		 index = 0;

	if (rlay->rl_conf.flags & F_TLS) {
		if (TAILQ_EMPTY(&p->tlscerts)) {
			if (print_host(&rlay->rl_conf.ss, name,
			    sizeof(name)) == NULL) {
				(void)snprintf(err, errlen, "bad address");
				return (-1);
			}
			if (tls_load_pair(conf, rlay, name, index++, err,
			    errlen) == -1)
				return (-1);
		}
		TAILQ_FOREACH(k, &p->tlscerts, entry)
			if (tls_load_pair(conf, rlay, k->name, index++, err,
			    errlen) == -1)
				return (-1);
		if (p->tlsclientca != NULL && (tls_load_one(rlay,
		    RELAY_CERT_CLIENTCA, 0, p->tlsclientca, NULL, err,
		    errlen) == -1 || tls_check_pem(rlay, RELAY_CERT_CLIENTCA,
		    p->tlsclientca, err, errlen) == -1))
			return (-1);
		if (p->tlsclientcrl != NULL && (tls_load_one(rlay,
		    RELAY_CERT_CRL, 0, p->tlsclientcrl, NULL, err,
		    errlen) == -1 || tls_check_pem(rlay, RELAY_CERT_CRL,
		    p->tlsclientcrl, err, errlen) == -1))
			return (-1);
	}
	if ((rlay->rl_conf.flags & F_TLSINSPECT) &&
	    (tls_load_one(rlay, RELAY_CERT_CACERT, 0, p->tlscacert, NULL, err,
	    errlen) == -1 || tls_load_one(rlay, RELAY_CERT_CAKEY, 0,
	    p->tlscakey, p->tlscapass, err, errlen) == -1 ||
	    tls_check_key(rlay, 0, RELAY_CERT_CACERT, RELAY_CERT_CAKEY,
	    p->tlscakey, p->tlscacert, err, errlen) == -1))
		return (-1);
	if ((rlay->rl_conf.flags & F_TLSCLIENT) && p->tlsca != NULL &&
	    (tls_load_one(rlay, RELAY_CERT_CA, 0, p->tlsca, NULL, err,
	    errlen) == -1 || tls_check_pem(rlay, RELAY_CERT_CA, p->tlsca,
	    err, errlen) == -1))
		return (-1);
	return (0);
}

/*
 * The certificates and CRLs of a PEM file, as libtls reads a CA file;
 * NULL when it has none it can read.
 */
STACK_OF(X509_INFO) *
tls_pem_read(const uint8_t *data, size_t len)
{
	STACK_OF(X509_INFO)	*xis = NULL;
	BIO			*bio;

	if (len <= INT_MAX &&
	    (bio = BIO_new_mem_buf(data, (int)len)) != NULL) {
		xis = PEM_X509_INFO_read_bio(bio, NULL, NULL, NULL);
		BIO_free(bio);
	}
	ERR_clear_error();
	return (xis);
}

/*
 * A CA file must hold a certificate, a CRL file a revocation list: the
 * relay processes would fail to set up the relay with the file, fatal
 * to the daemon, where relayd -n is the place to say so.
 */
static int
tls_check_pem(struct relay *rlay, enum relay_certtype type, const char *path,
    char *err, size_t errlen)
{
	struct relay_cert	*rc;
	STACK_OF(X509_INFO)	*xis;
	X509_INFO		*xi;
	int			 i, n = 0;

	if ((rc = relay_cert_find(rlay, type, 0)) == NULL)
		return (0);
	xis = tls_pem_read(rc->rc_data, rc->rc_len);
	for (i = 0; i < sk_X509_INFO_num(xis); i++) {
		xi = sk_X509_INFO_value(xis, i);
		if (type == RELAY_CERT_CRL ? xi->crl != NULL :
		    xi->x509 != NULL)
			n++;
	}
	sk_X509_INFO_pop_free(xis, X509_INFO_free);
	if (n > 0)
		return (0);
	(void)snprintf(err, errlen, "%s: no %s", path, type == RELAY_CERT_CRL ?
	    "certificate revocation list" : "CA certificate");
	return (-1);
}

/*
 * The name of a key: SHA-256 of its public part as libcrypto encodes it
 * (PKCS#1 for RSA, the point for EC).  ca and the relays name keys the
 * same way, so the relays never need more than a certificate.
 */
int
tls_pkey_hash(EVP_PKEY *pkey, char *out, size_t outlen)
{
	unsigned char	*der = NULL;
	int		 len, ret;

	len = i2d_PublicKey(pkey, &der);
	ret = tls_der_hash(der, len, out, outlen);
	OPENSSL_free(der);
	return (ret);
}

/* "SHA256:" and the hex of the SHA-256 of a DER public key. */
int
tls_der_hash(const unsigned char *der, int len, char *out, size_t outlen)
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 mdlen, i;

	if (der == NULL || len <= 0 ||
	    EVP_Digest(der, len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    outlen < 7 + 2 * mdlen + 1)
		return (-1);
	memcpy(out, "SHA256:", 7);
	for (i = 0; i < mdlen; i++)
		(void)snprintf(out + 7 + 2 * i, 3, "%02x", md[i]);
	return (0);
}

/* The key name of the first certificate of a PEM chain. */
int
tls_pubkey_hash(const uint8_t *pem, size_t len, char *out, size_t outlen)
{
	BIO	*bio;
	X509	*x509;
	int	 ret = -1;

	if ((bio = BIO_new_mem_buf(pem, len)) == NULL)
		return (-1);
	if ((x509 = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
		ret = tls_pkey_hash(X509_get0_pubkey(x509), out, outlen);
		X509_free(x509);
	}
	BIO_free(bio);
	return (ret);
}
