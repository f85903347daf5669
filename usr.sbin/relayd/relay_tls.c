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
 * TLS in the relay processes.  A relay process builds its libtls
 * configurations from certificates alone (the parent read the files,
 * tls_load.c): every private-key operation goes to ca (tls_keyops.c).
 * Then the handshakes, the inspection of a backend's certificate, and
 * the reads and writes of a session's TLS sides.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <tls.h>

#include "relayd.h"
#include "relay.h"

/* libretls exports it; its tls.h does not say so */
int	 tls_config_use_fake_private_key(struct tls_config *);

static int	 relay_tls_wait(struct ctl_relay_event *, int);
static void	 relay_tls_handshake_on(struct ctl_relay_event *);
static ssize_t	 relay_tls_recv(struct tls *, void *, size_t, void *);
static ssize_t	 relay_tls_send(struct tls *, const void *, size_t, void *);
static void	 relay_tls_jobwait(struct ctl_relay_event *);
static void	 relay_tls_jobkick(int, short, void *);
static int	 relay_tls_left(struct ctl_relay_event *);

/*
 * Handshakes that wait for a job.  While TLS_MAXJOBS handshakes are
 * paused for ca, another one would run without a job of its own, and
 * its key operation would wait for ca in the event loop's stead: every
 * session of the process would stand still, up to TLS_PRIV_TIMEOUT each
 * time, and the process would look stuck to the parent.  It waits here
 * instead, its socket not watched, within its session timeout, until a
 * paused one ends.
 */
static TAILQ_HEAD(, ctl_relay_event) relay_tls_jobq =
    TAILQ_HEAD_INITIALIZER(relay_tls_jobq);
static unsigned int	 relay_tls_paused;	/* jobs paused for ca */
static struct event	 relay_tls_jobev;

#define RELAY_TLS_CHUNK		(16 * 1024)	/* one record's worth */
/*
 * What a read takes beyond what OpenSSL asked for: a flight of handshake
 * records, a request behind them.  It is copied once more, so a bulk
 * stream of 16 KiB records reads best with a little: an upload of 1 GiB
 * cost the relay process about 1.1 s of CPU with 4 KiB, 1.2 s with 16
 * KiB, 1.3 s with 1 KiB and with none, more with 32 KiB.
 */
#define RELAY_TLS_AHEAD		(4 * 1024)

static uint32_t
tls_protocols(uint32_t flags)
{
	uint32_t	 protocols = 0;

	if (flags & TLSFLAG_TLSV1_2)
		protocols |= TLS_PROTOCOL_TLSv1_2;
	if (flags & TLSFLAG_TLSV1_3)
		protocols |= TLS_PROTOCOL_TLSv1_3;
	return (protocols);
}

/* What the server and the client side share. */
static int
relay_tls_common(struct relay *rlay, struct tls_config *cfg)
{
	struct protocol	*p = rlay->rl_proto;

	if (tls_config_set_protocols(cfg, tls_protocols(p->tlsflags)) != 0 ||
	    tls_config_set_ciphers(cfg, p->tlsciphers != NULL ?
	    p->tlsciphers : TLSCIPHERS_DEFAULT) != 0) {
		log_warnx("relay %s: %s", rlay->rl_conf.name,
		    tls_config_error(cfg));
		return (-1);
	}
	return (0);
}

/* The server side's settings but for its certificates. */
static struct tls_config *
relay_tls_server_cfg(struct relay *rlay)
{
	struct protocol		*p = rlay->rl_proto;
	struct tls_config	*cfg;

	if ((cfg = tls_config_new()) == NULL)
		return (NULL);
	if (relay_tls_common(rlay, cfg) == -1) {
		tls_config_free(cfg);
		return (NULL);
	}
	if (tls_config_set_ecdhecurves(cfg, p->tlsecdhecurves != NULL ?
	    p->tlsecdhecurves : TLSECDHECURVES_DEFAULT) != 0 ||
	    tls_config_set_dheparams(cfg, p->tlsdhparams != NULL ?
	    p->tlsdhparams : TLSDHPARAM_DEFAULT) != 0) {
		log_warnx("relay %s: %s", rlay->rl_conf.name,
		    tls_config_error(cfg));
		tls_config_free(cfg);
		return (NULL);
	}
	if (p->tlsflags & TLSFLAG_CIPHER_SERVER_PREF)
		tls_config_prefer_ciphers_server(cfg);
	else
		tls_config_prefer_ciphers_client(cfg);
	return (cfg);
}

static int
relay_tls_server(struct relay *rlay)
{
	struct protocol		*p = rlay->rl_proto;
	struct tls_config	*cfg;
	struct relay_cert	*rc, *ocsp;
	int			 n = 0;

	if ((rlay->rl_tls_cfg = cfg = relay_tls_server_cfg(rlay)) == NULL)
		return (-1);
	/* certificates only: the keys are in ca */
	TAILQ_FOREACH(rc, &rlay->rl_certs, rc_entry) {
		if (rc->rc_type != RELAY_CERT_CERT)
			continue;
		ocsp = relay_cert_find(rlay, RELAY_CERT_OCSP, rc->rc_index);
		if ((n++ == 0 ? tls_config_set_keypair_ocsp_mem(cfg,
		    rc->rc_data, rc->rc_len, NULL, 0,
		    ocsp != NULL ? ocsp->rc_data : NULL,
		    ocsp != NULL ? ocsp->rc_len : 0) :
		    tls_config_add_keypair_ocsp_mem(cfg, rc->rc_data,
		    rc->rc_len, NULL, 0, ocsp != NULL ? ocsp->rc_data : NULL,
		    ocsp != NULL ? ocsp->rc_len : 0)) != 0)
			goto fail;
	}
	if (n == 0) {
		log_warnx("relay %s: no certificate", rlay->rl_conf.name);
		return (-1);
	}
	if (tls_config_use_fake_private_key(cfg) == -1)
		goto fail;
	if ((rc = relay_cert_find(rlay, RELAY_CERT_CLIENTCA, 0)) != NULL) {
		if (tls_config_set_ca_mem(cfg, rc->rc_data, rc->rc_len) != 0)
			goto fail;
		tls_config_verify_client(cfg);
		if ((rc = relay_cert_find(rlay, RELAY_CERT_CRL, 0)) != NULL &&
		    tls_config_set_crl_mem(cfg, rc->rc_data, rc->rc_len) != 0)
			goto fail;
	}
	if (p->tickets) {
		if (tls_config_set_session_lifetime(cfg,
		    TLS_SESSION_LIFETIME) != 0)
			goto fail;
	} else if (tls_config_set_session_lifetime(cfg, 0) != 0)
		goto fail;
	if (tls_config_set_session_id(cfg, rlay->rl_conf.tls_sid,
	    sizeof(rlay->rl_conf.tls_sid)) != 0)
		goto fail;
	/* http2: h2 first, HTTP/1.1 for the clients that ask for it */
	if (p->type == RELAY_PROTO_HTTP && (p->httpflags & HTTPFLAG_HTTP2) &&
	    (rlay->rl_conf.flags & F_TLSINSPECT) == 0 &&
	    tls_config_set_alpn(cfg, "h2,http/1.1") != 0)
		goto fail;
	if ((rlay->rl_tls_ctx = tls_server()) == NULL) {
		log_warnx("relay %s: tls_server failed", rlay->rl_conf.name);
		return (-1);
	}
	if (tls_configure(rlay->rl_tls_ctx, cfg) != 0) {
		log_warnx("relay %s: %s", rlay->rl_conf.name,
		    tls_error(rlay->rl_tls_ctx));
		return (-1);
	}
	return (0);
 fail:
	log_warnx("relay %s: %s", rlay->rl_conf.name, tls_config_error(cfg));
	return (-1);
}

/*
 * forward with tls: the backend's chain is verified with tls ca file,
 * and not at all without it; its name never is (as OpenBSD: backends
 * are addresses).
 *
 * libtls makes a context for every connection it makes and reads the
 * whole CA file into it each time: with a system bundle (144
 * certificates) 35 ms of the relay process a session, against 2 with a
 * single CA.  So the relay reads the file once, into a store of its own
 * (struct relay_verify), lets libtls verify nothing, and verifies the
 * backend's chain itself when the handshake is through, before a byte
 * of the session goes to the backend (relay_tls_verify()).  It checks
 * what libtls would have: the chain up to a CA of the file, at most
 * libtls's depth (RELAY_VERIFY_DEPTH) below it, for a TLS server, its
 * validity in time and OpenSSL's security level; the backend proved
 * that it holds the key of the certificate in the handshake, which
 * OpenSSL checks with or without verification.  A failure reads as
 * libtls's did.
 */
#define RELAY_VERIFY_DEPTH	6

struct relay_verify {
	X509_STORE		*rv_store;
	int			 rv_level;	/* OpenSSL's security level */
};

static void
relay_verify_free(struct relay_verify *rv)
{
	if (rv == NULL)
		return;
	X509_STORE_free(rv->rv_store);
	free(rv);
}

/* The CA certificates of a PEM file in a new store; NULL on failure. */
static struct relay_verify *
relay_verify_new(const uint8_t *pem, size_t len)
{
	struct relay_verify	*rv;
	STACK_OF(X509_INFO)	*xis = NULL;
	X509_INFO		*xi;
	SSL_CTX			*sctx;
	int			 i, n = 0;

	if ((rv = calloc(1, sizeof(*rv))) == NULL)
		return (NULL);
	/* the level a context of libtls would have had */
	if ((sctx = SSL_CTX_new(TLS_client_method())) == NULL)
		goto fail;
	rv->rv_level = SSL_CTX_get_security_level(sctx);
	SSL_CTX_free(sctx);
	/* the certificates of the file, as libtls reads them */
	if ((rv->rv_store = X509_STORE_new()) == NULL ||
	    (xis = tls_pem_read(pem, len)) == NULL)
		goto fail;
	for (i = 0; i < sk_X509_INFO_num(xis); i++) {
		xi = sk_X509_INFO_value(xis, i);
		if (xi->x509 == NULL)
			continue;
		if (X509_STORE_add_cert(rv->rv_store, xi->x509) != 1)
			goto fail;
		n++;
	}
	if (n == 0)
		goto fail;
	sk_X509_INFO_pop_free(xis, X509_INFO_free);
	return (rv);
 fail:
	ERR_clear_error();
	sk_X509_INFO_pop_free(xis, X509_INFO_free);
	relay_verify_free(rv);
	return (NULL);
}

static int
relay_tls_client(struct relay *rlay)
{
	struct tls_config	*cfg;
	struct relay_cert	*rc;

	if ((rlay->rl_tls_client_cfg = cfg = tls_config_new()) == NULL)
		return (-1);
	if (relay_tls_common(rlay, cfg) == -1)
		return (-1);
	tls_config_insecure_noverifyname(cfg);
	tls_config_insecure_noverifycert(cfg);
	/* "http2 backend": the backends are asked for h2 */
	if (rlay->rl_proto != NULL &&
	    rlay->rl_proto->type == RELAY_PROTO_HTTP &&
	    (rlay->rl_proto->httpflags & HTTPFLAG_H2BACKEND) &&
	    tls_config_set_alpn(cfg, "h2") != 0)
		return (-1);
	if ((rc = relay_cert_find(rlay, RELAY_CERT_CA, 0)) != NULL &&
	    (rlay->rl_tls_verify = relay_verify_new(rc->rc_data,
	    rc->rc_len)) == NULL) {
		log_warnx("relay %s: tls ca file: no CA certificate read",
		    rlay->rl_conf.name);
		return (-1);
	}
	return (0);
}

/*
 * The backend's chain, when the relay has a tls ca file: 0 when it is
 * good (or there is nothing to check), else -1 with why in why, as
 * libtls says it.
 */
static int
relay_tls_verify(struct ctl_relay_event *cre, char *why, size_t whylen)
{
	struct relay_verify	*rv = cre->con->se_relay->rl_tls_verify;
	X509_STORE_CTX		*xctx = NULL;
	X509_VERIFY_PARAM	*param;
	STACK_OF(X509)		*chain = NULL;
	const uint8_t		*pem;
	BIO			*bio = NULL;
	X509			*x;
	size_t			 len;
	const char		*reason = NULL;
	int			 ret = -1, err;

	if (rv == NULL || cre->dir != RELAY_DIR_RESPONSE)
		return (0);
	if ((pem = tls_peer_cert_chain_pem(cre->tls, &len)) == NULL ||
	    len > INT_MAX) {
		reason = "no certificate";
		goto done;
	}
	if ((chain = sk_X509_new_null()) == NULL ||
	    (bio = BIO_new_mem_buf(pem, (int)len)) == NULL)
		goto done;
	while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL)
		if (sk_X509_push(chain, x) == 0) {
			X509_free(x);
			goto done;
		}
	ERR_clear_error();
	if (sk_X509_num(chain) == 0) {
		reason = "no certificate";
		goto done;
	}
	/* the first is the backend's, the others may lead to a CA */
	if ((xctx = X509_STORE_CTX_new()) == NULL ||
	    X509_STORE_CTX_init(xctx, rv->rv_store, sk_X509_value(chain, 0),
	    chain) != 1 ||
	    X509_STORE_CTX_set_default(xctx, "ssl_server") != 1)
		goto done;
	param = X509_STORE_CTX_get0_param(xctx);
	X509_VERIFY_PARAM_set_depth(param, RELAY_VERIFY_DEPTH);
	X509_VERIFY_PARAM_set_auth_level(param, rv->rv_level);
	if (X509_verify_cert(xctx) == 1)
		ret = 0;
	else if ((err = X509_STORE_CTX_get_error(xctx)) != X509_V_OK)
		reason = X509_verify_cert_error_string(err);
 done:
	if (ret == -1 && reason != NULL)
		(void)snprintf(why, whylen,
		    "certificate verification failed: %s", reason);
	else if (ret == -1)
		(void)strlcpy(why, "X509 verify cert failed", whylen);
	ERR_clear_error();
	X509_STORE_CTX_free(xctx);
	sk_X509_pop_free(chain, X509_free);
	BIO_free(bio);
	return (ret);
}

/*
 * TLS inspection serves the backend's certificate re-issued by the
 * inspection CA for the key of the relay's keypair (tls_keyops_resign())
 * from a server context of its own: some milliseconds of work (a
 * signature in ca, OpenSSL's SSL_CTX), five times a plain TLS relay's
 * handshake.  Each relay process keeps the last RELAY_INSPECT_CACHE of
 * them per relay, by the backend's chain, for the sessions to the same
 * site; one dropped from the list is freed by its last session, as
 * libtls's callbacks still point to it while a handshake goes on.
 */
#define RELAY_INSPECT_CACHE	32

struct relay_inspected {
	TAILQ_ENTRY(relay_inspected)	 ri_entry;
	uint8_t				*ri_peer;	/* backend's chain */
	size_t				 ri_peerlen;
	struct tls			*ri_ctx;
	struct tls_config		*ri_cfg;
	unsigned int			 ri_users;	/* sessions */
	int				 ri_dropped;	/* not in the list */
};
TAILQ_HEAD(relay_inspectedq, relay_inspected);

struct relay_icache {
	struct relay_inspectedq		 ic_list;	/* last used first */
	unsigned int			 ic_n;
};

static void
relay_inspected_free(struct relay_inspected *ri)
{
	tls_free(ri->ri_ctx);
	tls_config_free(ri->ri_cfg);
	free(ri->ri_peer);
	free(ri);
}

/* Out of the list: freed now, or by its last session. */
static void
relay_inspected_unlist(struct relay_icache *ic, struct relay_inspected *ri)
{
	TAILQ_REMOVE(&ic->ic_list, ri, ri_entry);
	ic->ic_n--;
	if (ri->ri_users == 0)
		relay_inspected_free(ri);
	else
		ri->ri_dropped = 1;
}

/* A server context for the backend's chain peer: kept, or made. */
static struct relay_inspected *
relay_tls_inspected(struct relay *rlay, const uint8_t *peer, size_t peerlen)
{
	struct relay_icache	*ic = rlay->rl_icache;
	struct relay_inspected	*ri;
	struct relay_cert	*ca, *kc;
	uint8_t			*pem;
	size_t			 len;

	if (ic == NULL) {
		if ((ic = calloc(1, sizeof(*ic))) == NULL)
			return (NULL);
		TAILQ_INIT(&ic->ic_list);
		rlay->rl_icache = ic;
	}
	TAILQ_FOREACH(ri, &ic->ic_list, ri_entry)
		if (ri->ri_peerlen == peerlen &&
		    memcmp(ri->ri_peer, peer, peerlen) == 0) {
			TAILQ_REMOVE(&ic->ic_list, ri, ri_entry);
			TAILQ_INSERT_HEAD(&ic->ic_list, ri, ri_entry);
			return (ri);
		}
	if ((ca = relay_cert_find(rlay, RELAY_CERT_CACERT, 0)) == NULL ||
	    (kc = relay_cert_find(rlay, RELAY_CERT_CERT, 0)) == NULL)
		return (NULL);
	if ((pem = tls_keyops_resign(peer, peerlen, ca->rc_data, ca->rc_len,
	    kc->rc_data, kc->rc_len, &len)) == NULL) {
		log_warnx("relay %s: cannot re-issue the backend's "
		    "certificate", rlay->rl_conf.name);
		return (NULL);
	}
	if ((ri = calloc(1, sizeof(*ri))) == NULL ||
	    (ri->ri_peer = malloc(peerlen)) == NULL ||
	    (ri->ri_cfg = relay_tls_server_cfg(rlay)) == NULL ||
	    tls_config_set_keypair_mem(ri->ri_cfg, pem, len, NULL, 0) != 0 ||
	    tls_config_use_fake_private_key(ri->ri_cfg) == -1 ||
	    (ri->ri_ctx = tls_server()) == NULL ||
	    tls_configure(ri->ri_ctx, ri->ri_cfg) != 0) {
		if (ri != NULL)
			relay_inspected_free(ri);
		free(pem);
		return (NULL);
	}
	free(pem);
	memcpy(ri->ri_peer, peer, peerlen);
	ri->ri_peerlen = peerlen;
	TAILQ_INSERT_HEAD(&ic->ic_list, ri, ri_entry);
	if (++ic->ic_n > RELAY_INSPECT_CACHE)
		relay_inspected_unlist(ic,
		    TAILQ_LAST(&ic->ic_list, relay_inspectedq));
	return (ri);
}

/* The session is over: its server context has one user less. */
void
relay_tls_inspected_drop(struct rsession *con)
{
	struct relay_inspected	*ri = con->se_inspected;

	if (ri == NULL)
		return;
	con->se_inspected = NULL;
	if (--ri->ri_users == 0 && ri->ri_dropped)
		relay_inspected_free(ri);
}

static void
relay_icache_free(struct relay *rlay)
{
	struct relay_icache	*ic = rlay->rl_icache;

	if (ic == NULL)
		return;
	while (!TAILQ_EMPTY(&ic->ic_list))
		relay_inspected_unlist(ic, TAILQ_FIRST(&ic->ic_list));
	free(ic);
	rlay->rl_icache = NULL;
}

/*
 * TLS inspection, once the backend's handshake is done: the client's
 * handshake starts with the backend's certificate, re-issued.  -1 on
 * failure.
 */
int
relay_tls_inspect(struct rsession *con)
{
	struct relay_inspected	*ri;
	const uint8_t		*peer;
	size_t			 peerlen;

	if ((peer = tls_peer_cert_chain_pem(con->se_out.tls,
	    &peerlen)) == NULL ||
	    (ri = relay_tls_inspected(con->se_relay, peer, peerlen)) == NULL ||
	    relay_tls_accept(ri->ri_ctx, &con->se_in) != 0)
		return (-1);
	ri->ri_users++;
	con->se_inspected = ri;
	return (0);
}

/* Relay process: the libtls configurations of a relay. */
int
relay_tls_setup(struct relayd *env, struct relay *rlay)
{
	(void)env;
	if ((rlay->rl_conf.flags & F_TLS) && rlay->rl_tls_ctx == NULL &&
	    relay_tls_server(rlay) == -1)
		return (-1);
	if ((rlay->rl_conf.flags & F_TLSCLIENT) &&
	    rlay->rl_tls_client_cfg == NULL && relay_tls_client(rlay) == -1)
		return (-1);
	return (0);
}

void
relay_tls_free(struct relay *rlay)
{
	tls_free(rlay->rl_tls_ctx);
	tls_config_free(rlay->rl_tls_cfg);
	tls_config_free(rlay->rl_tls_client_cfg);
	relay_verify_free(rlay->rl_tls_verify);
	rlay->rl_tls_ctx = NULL;
	rlay->rl_tls_cfg = NULL;
	rlay->rl_tls_client_cfg = NULL;
	rlay->rl_tls_verify = NULL;
	relay_icache_free(rlay);
	relay_certs_free(rlay);
}

/* A ticket key from the parent, for every relay with tickets. */
void
relay_tls_ticket_rekey(struct relayd *env, struct imsg *imsg)
{
	struct ctl_ticketkey	 tk;
	struct relay		*rlay;

	if (IMSG_DATA_SIZE(imsg) != sizeof(tk))
		return;
	memcpy(&tk, imsg->data, sizeof(tk));
	TAILQ_FOREACH(rlay, env->sc_relays, rl_entry)
		if (rlay->rl_tls_cfg != NULL && rlay->rl_proto->tickets &&
		    tls_config_add_ticket_key(rlay->rl_tls_cfg, tk.keyrev,
		    tk.key, sizeof(tk.key)) != 0)
			log_warnx("relay %s: ticket key: %s",
			    rlay->rl_conf.name,
			    tls_config_error(rlay->rl_tls_cfg));
	explicit_bzero(&tk, sizeof(tk));
}

/*
 * A TLS side's records go through relay_tls_recv() and relay_tls_send()
 * on its socket.  -1 on failure.
 */
int
relay_tls_accept(struct tls *ctx, struct ctl_relay_event *cre)
{
	return (tls_accept_cbs(ctx, &cre->tls, relay_tls_recv,
	    relay_tls_send, cre));
}

/* servername: the name to ask the backend for (SNI), or NULL */
int
relay_tls_connect(struct ctl_relay_event *cre, struct tls_config *cfg,
    const char *servername)
{
	if ((cre->tls = tls_client()) == NULL ||
	    tls_configure(cre->tls, cfg) == -1 ||
	    tls_connect_cbs(cre->tls, relay_tls_recv, relay_tls_send, cre,
	    servername) == -1)
		return (-1);
	return (0);
}

/*
 * OpenSSL reads a record's header, then its body, each with a read(2)
 * of just that size (libtls cannot turn its read-ahead on): a flight of
 * small records, or a request behind a handshake, costs two a record.
 * Here one read takes what OpenSSL asks for and, behind it, what the
 * socket has besides (up to RELAY_TLS_AHEAD), which the next calls hand
 * out.  Bytes kept here show to no poll(2): whoever reads says so
 * (relay_tls_read(), *again; relay_tls_handshake(), tlsheld).
 *
 * Once the handshake is through, the socket's end goes to OpenSSL as
 * "nothing yet", and to relay_tls_read() in tin.eof: OpenSSL takes an
 * end without close_notify for an error that fails the connection, also
 * for writing, where LibreSSL sees an end of file; a client that sent
 * its last request and half-closed still gets its answer.
 */
/*
 * A read-ahead buffer whose bytes are all taken stays here for the next
 * read of any session: most reads fill and empty one in the same turn,
 * and one this large is no small allocation, which malloc(3) would
 * split and merge again for every record.
 */
static u_char	*relay_tls_spare;

static u_char *
relay_tls_ahead(void)
{
	u_char	*p;

	if ((p = relay_tls_spare) != NULL) {
		relay_tls_spare = NULL;
		return (p);
	}
	return (malloc(RELAY_TLS_AHEAD));
}

/* The read-ahead buffer goes, to relay_tls_spare when it can. */
static void
relay_tls_unahead(struct relay_tlsin *tin)
{
	if (tin->ahead && relay_tls_spare == NULL)
		relay_tls_spare = tin->buf;
	else
		free(tin->buf);
	tin->buf = NULL;
	tin->ahead = 0;
}

static ssize_t
relay_tls_recv(struct tls *ctx, void *buf, size_t len, void *arg)
{
	struct ctl_relay_event	*cre = arg;
	struct relay_tlsin	*tin = &cre->tin;
	struct iovec		 iov[2];
	ssize_t			 n;
	int			 nv = 1;

	(void)ctx;
	tin->asked = 1;
	if (tin->len > 0) {
		n = len < tin->len ? len : tin->len;
		memcpy(buf, tin->buf + tin->off, n);
		tin->off += n;
		if ((tin->len -= n) == 0)
			relay_tls_unahead(tin);
		return (n);
	}
	if (tin->eof)
		return (TLS_WANT_POLLIN);
	iov[0].iov_base = buf;
	iov[0].iov_len = len;
	if ((tin->buf = relay_tls_ahead()) != NULL) {
		tin->ahead = 1;
		iov[1].iov_base = tin->buf;
		iov[1].iov_len = RELAY_TLS_AHEAD;
		nv = 2;
	}
	while ((n = readv(cre->s, iov, nv)) == -1 && errno == EINTR)
		;
	tin->drained = n < (ssize_t)(len + (nv == 2 ? RELAY_TLS_AHEAD : 0));
	if (n > (ssize_t)len) {
		tin->off = 0;
		tin->len = n - len;
		return (len);
	}
	relay_tls_unahead(tin);
	if (n == -1)
		return (errno == EAGAIN || errno == EWOULDBLOCK ?
		    TLS_WANT_POLLIN : -1);
	if (n == 0 && tin->up) {
		tin->eof = 1;
		return (TLS_WANT_POLLIN);
	}
	return (n);
}

static ssize_t
relay_tls_send(struct tls *ctx, const void *buf, size_t len, void *arg)
{
	struct ctl_relay_event	*cre = arg;
	ssize_t			 n;

	(void)ctx;
	while ((n = send(cre->s, buf, len, MSG_NOSIGNAL)) == -1 &&
	    errno == EINTR)
		;
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return (TLS_WANT_POLLOUT);
	return (n);
}

void
relay_tls_in_free(struct ctl_relay_event *cre)
{
	relay_tls_unahead(&cre->tin);
	memset(&cre->tin, 0, sizeof(cre->tin));
}

static int
relay_tls_handshake_call(void *arg)
{
	struct ctl_relay_event	*cre = arg;

	return (tls_handshake(cre->tls));
}

static void
relay_tls_keyop_done(void *arg)
{
	relay_tls_handshake_on(arg);
}

/*
 * One tls_handshake(), as a job that pauses while its key operation
 * waits for ca (tls_keyops.c), or taken up again where it paused.
 */
static int
relay_tls_job(struct ctl_relay_event *cre, int *ret)
{
	struct timeval	 tv = { 0, 0 };
	int		 r, had = cre->tlsjob != NULL;

	tls_keyops_waiter(&cre->keyop, relay_tls_keyop_done, cre);
	r = compat_tlsjob_run(&cre->tlsjob, relay_tls_handshake_call, cre,
	    ret);
	tls_keyops_waiter(NULL, NULL, NULL);
	if (r == -1) {
		cre->tlsjob = NULL;
		*ret = -1;
		r = COMPAT_TLSJOB_DONE;
	}
	if (!had && r == COMPAT_TLSJOB_PAUSED)
		relay_tls_paused++;
	else if (had && r == COMPAT_TLSJOB_DONE) {
		/* a job is free: the first that waits for one, from the loop */
		relay_tls_paused--;
		if (!TAILQ_EMPTY(&relay_tls_jobq)) {
			if (!event_initialized(&relay_tls_jobev))
				evtimer_set(&relay_tls_jobev,
				    relay_tls_jobkick, NULL);
			evtimer_add(&relay_tls_jobev, &tv);
		}
	}
	return (r);
}

/* No job to be had: wait for one, within what is left of the timeout. */
static void
relay_tls_jobwait(struct ctl_relay_event *cre)
{
	if (relay_tls_wait(cre, 0) == -1) {
		relay_close(cre->con, "TLS handshake timeout", 1);
		return;
	}
	cre->jobwait = 1;
	TAILQ_INSERT_TAIL(&relay_tls_jobq, cre, jobentry);
}

/* Jobs are free: the handshakes that waited go on, the first first. */
static void
relay_tls_jobkick(int fd, short event, void *arg)
{
	struct ctl_relay_event	*cre;

	(void)fd;
	(void)event;
	(void)arg;
	while (relay_tls_paused < TLS_MAXJOBS &&
	    (cre = TAILQ_FIRST(&relay_tls_jobq)) != NULL) {
		TAILQ_REMOVE(&relay_tls_jobq, cre, jobentry);
		cre->jobwait = 0;
		event_del(&cre->tev);
		if (relay_tls_left(cre)) {
			relay_close(cre->con, "TLS handshake error: "
			    "the peer left while it waited", 1);
			continue;
		}
		relay_tls_handshake_on(cre);
	}
}

/*
 * A handshake that waited its turn: has its peer gone meanwhile, as
 * clients that give up on a busy relay do?  Then ca is not asked to
 * sign for it.  What the socket holds (a ClientHello) is read ahead for
 * the handshake, so that an end behind it shows.
 */
static int
relay_tls_left(struct ctl_relay_event *cre)
{
	struct relay_tlsin	*tin = &cre->tin;
	ssize_t			 n;
	int			 error;
	char			 c;

	if (tin->len == 0 && (tin->buf = relay_tls_ahead()) != NULL) {
		tin->ahead = 1;
		while ((n = recv(cre->s, tin->buf, RELAY_TLS_AHEAD,
		    MSG_DONTWAIT)) == -1 && errno == EINTR)
			;
		if (n > 0) {
			tin->off = 0;
			tin->len = n;
			if (n == RELAY_TLS_AHEAD)
				return (0);
		} else {
			error = errno;
			relay_tls_unahead(tin);
			if (n == 0 || (error != EAGAIN &&
			    error != EWOULDBLOCK))
				return (1);
		}
	}
	return (recv(cre->s, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0);
}

/*
 * A TLS handshake goes on: with the client after accept (se_in), with
 * the backend after connect (se_out).  Both share the session timeout
 * from the session's start, as OpenBSD's.
 */
void
relay_tls_handshake(int fd, short event, void *arg)
{
	struct ctl_relay_event	*cre = arg;

	(void)fd;
	if (cre->tin.up) {
		/* the wait outlived the handshake: reading takes over */
		event_del(&cre->tev);
		return;
	}
	if (event & EV_TIMEOUT) {
		relay_close(cre->con, "TLS handshake timeout", 1);
		return;
	}
	/* paused for ca: its answer takes the handshake up */
	if (cre->tlsjob != NULL)
		return;
	relay_tls_handshake_on(cre);
}

static void
relay_tls_handshake_on(struct ctl_relay_event *cre)
{
	struct rsession		*con = cre->con;
	char			 why[160], *msg;
	int			 ret;

	if (cre->tlsjob == NULL && relay_tls_paused >= TLS_MAXJOBS) {
		relay_tls_jobwait(cre);
		return;
	}
	do {
		if (cre->tlsjob == NULL)
			cre->tin.asked = 0;
		if (relay_tls_job(cre, &ret) == COMPAT_TLSJOB_PAUSED) {
			/* the socket waits until ca has answered */
			if (event_initialized(&cre->tev))
				event_del(&cre->tev);
			return;
		}
	} while (ret == TLS_WANT_POLLIN && cre->tin.len > 0 &&
	    cre->tin.asked);
	if (ret == TLS_WANT_POLLIN || ret == TLS_WANT_POLLOUT) {
		if (relay_tls_wait(cre, ret == TLS_WANT_POLLIN ? EV_READ :
		    EV_WRITE) == -1)
			relay_close(con, "TLS handshake timeout", 1);
		return;
	}
	if (ret != 0 || relay_tls_verify(cre, why, sizeof(why)) == -1) {
		if (asprintf(&msg, "TLS handshake error: %s",
		    ret != 0 ? tls_error(cre->tls) : why) == -1)
			msg = NULL;
		relay_close(con, msg != NULL ? msg : "TLS handshake error",
		    1);
		free(msg);
		return;
	}
	cre->tin.up = 1;
	/* a request behind the handshake: read it when reading starts */
	cre->tlsheld = cre->tin.len > 0;
	relay_tls_established(cre);
}

/*
 * The side goes while its handshake is paused for ca: the wait fails,
 * and the handshake runs to its end (an error) before libtls's context
 * and the socket go.
 */
void
relay_tls_abandon(struct ctl_relay_event *cre)
{
	int	 ret;

	if (cre->jobwait) {
		TAILQ_REMOVE(&relay_tls_jobq, cre, jobentry);
		cre->jobwait = 0;
	}
	while (cre->tlsjob != NULL) {
		tls_keyops_cancel(&cre->keyop);
		(void)relay_tls_job(cre, &ret);
	}
	tls_keyops_cancel(&cre->keyop);
}

/*
 * Wait for the socket (what 0: for nothing, until the time is out),
 * within what is left of the session timeout.  The wait persists: the
 * next round of the handshake that waits for the same keeps it, and
 * after the handshake it stays until reading has the socket
 * (relay_read_on()), with no epoll_ctl(2) in between.
 */
static int
relay_tls_wait(struct ctl_relay_event *cre, int what)
{
	struct timeval	 left;
	int		 t;

	if ((t = relay_start_left(cre->con, &left)) == -1)
		return (-1);
	what |= EV_PERSIST;
	if (!event_initialized(&cre->tev) ||
	    event_get_events(&cre->tev) != what) {
		if (event_initialized(&cre->tev))
			event_del(&cre->tev);
		event_set(&cre->tev, cre->s, what, relay_tls_handshake, cre);
	}
	return (event_add(&cre->tev, t == 1 ? &left : NULL));
}

/*
 * Records until the space is full or the socket has no more; *again when
 * libtls may hold more (the space filled up, or it saw an end or an
 * error after data, which the next call reports).  A short read took
 * the rest of a record: when nothing waits in tin and the last read(2)
 * emptied the socket, the call ends without one that could only fail.
 * What came since shows to poll(2), and each call reads at least once.
 */
ssize_t
relay_tls_read(struct ctl_relay_event *cre, struct iovec *iov, int nv,
    int *again)
{
	ssize_t	 n = 0, r;
	size_t	 off = 0;
	int	 i = 0, dry = 0;

	while (i < nv) {
		if (off == iov[i].iov_len) {
			i++;
			off = 0;
			continue;
		}
		if (dry && cre->tin.len == 0 && cre->tin.drained)
			return (n);
		cre->tin.asked = 0;
		r = tls_read(cre->tls, (char *)iov[i].iov_base + off,
		    iov[i].iov_len - off);
		/*
		 * libtls turns OpenSSL's auto-retry off: a handshake message
		 * (a TLS 1.3 session ticket) ends the call with "want
		 * input", though more records wait in tin.  It read some:
		 * a call that reads nothing ends.
		 */
		if (r == TLS_WANT_POLLIN && cre->tin.len > 0 &&
		    cre->tin.asked)
			continue;
		if (r == TLS_WANT_POLLIN && cre->tin.eof) {
			/* the end the peer sent without close_notify */
			if (n > 0)
				*again = 1;
			return (n);
		}
		if (r == TLS_WANT_POLLIN || r == TLS_WANT_POLLOUT) {
			if (n > 0)
				return (n);
			errno = EAGAIN;
			return (-1);
		}
		if (r == -1 || r == 0) {
			if (n > 0) {
				/* libtls holds the end or error */
				*again = 1;
				return (n);
			}
			if (r == -1) {
				log_debug("relay %s, session %d: %s",
				    cre->con->se_relay->rl_conf.name,
				    cre->con->se_id, tls_error(cre->tls));
				errno = EIO;
			}
			return (r);
		}
		dry = (size_t)r < iov[i].iov_len - off;
		n += r;
		off += r;
	}
	*again = 1;
	return (n);
}

/*
 * TLS output: records from the start of the output buffer; what the
 * socket does not take waits for relay_tls_writecb().  libtls takes the
 * same bytes again after a TLS_WANT_*, moved or not.  -1 on an error.
 */
int
relay_tls_flush(struct ctl_relay_event *cre)
{
	struct evbuffer	*out = bufferevent_get_output(cre->bev);
	struct timeval	*tv = &cre->con->se_relay->rl_conf.timeout;
	size_t		 len;
	ssize_t		 n;
	unsigned char	*p;

	(void)evbuffer_unfreeze(out, 1);
	while ((len = evbuffer_get_length(out)) > 0) {
		if (len > RELAY_TLS_CHUNK)
			len = RELAY_TLS_CHUNK;
		if ((p = evbuffer_pullup(out, len)) == NULL)
			break;
		n = tls_write(cre->tls, p, len);
		if (n == TLS_WANT_POLLIN || n == TLS_WANT_POLLOUT)
			break;
		if (n <= 0) {
			(void)evbuffer_freeze(out, 1);
			log_debug("relay %s, session %d: %s",
			    cre->con->se_relay->rl_conf.name, cre->con->se_id,
			    tls_error(cre->tls));
			return (-1);
		}
		(void)evbuffer_drain(out, n);
	}
	(void)evbuffer_freeze(out, 1);
	/*
	 * A write that waits stays even when this emptied the output: its
	 * callback is where what waited for an empty output goes on.
	 */
	if (evbuffer_get_length(out) > 0 && !cre->writing) {
		cre->writing = 1;
		event_add(&cre->wev, timerisset(tv) ? tv : NULL);
	}
	return (0);
}

void
relay_tls_writecb(int fd, short event, void *arg)
{
	struct ctl_relay_event	*cre = arg;

	(void)fd;
	cre->writing = 0;
	if (event & EV_TIMEOUT) {
		relay_timeout(cre, 0);
		return;
	}
	if (relay_tls_flush(cre) == -1) {
		relay_end(cre, "write failed");
		return;
	}
	if (evbuffer_get_length(bufferevent_get_output(cre->bev)) == 0)
		relay_drained(cre);
}
