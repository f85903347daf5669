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
 * baretls: the floor of a TLS handshake's CPU, with the private key in
 * the process or in another one.  It accepts on 127.0.0.1:PORT, does
 * TLS handshakes with OpenSSL's own socket I/O in a poll(2) loop, reads
 * until the client goes and closes; nothing else: no privilege
 * separation, no configuration, no logging.
 *
 *   baretls key|local|ca CERT KEY PORT [BACKEND]
 *
 * key: OpenSSL holds the key, as HAProxy and nginx do.  local: the key's
 * signatures go through an RSA or EC key method, as relayd's relay
 * process makes them, but are made in this process.  ca: the same
 * method sends each one to a child process that holds the key, over a
 * socketpair, and waits for the answer without returning to its loop:
 * the cheapest round trip there is, one write and one read each way.
 * Each handshake sends one TLS 1.3 session ticket, as relayd's.
 *
 * With BACKEND, a port on 127.0.0.1, a request (s_time -www, for resumed
 * sessions) goes to a connection to it, opened then, as HAProxy's and
 * relayd's tcp relays open theirs at a client's first bytes, and its
 * answer, read to its end without returning to the loop, to the client;
 * then the connections end.  Without it, baretls answers 1 byte itself.
 */

#define OPENSSL_API_COMPAT	10101

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <err.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#define MAXCONN		1024
#define MAXDATA		1024

enum { OP_PRIVENC, OP_PRIVDEC, OP_ECDSA };

struct op {
	uint32_t	 type;
	int32_t		 padding;
	uint32_t	 len;	/* of the data that follows */
};

#define ANSWER	"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx"

struct conn {
	SSL		*ssl;
	int		 open;	/* handshake done */
	int		 bfd;	/* to the backend, or -1 */
};

static EVP_PKEY		*privkey;	/* local mode, and the ca child */
static int		 signer = -1;	/* ca mode: the socketpair */
static RSA_METHOD	*rsa_meth;
static EC_KEY_METHOD	*ec_meth;

static struct pollfd	 pfd[MAXCONN + 1];
static struct conn	 conns[MAXCONN + 1];
static int		 nfds;
static int		 backend;	/* its port, or 0 */

__attribute__((noreturn)) static void
usage(void)
{
	fprintf(stderr,
	    "usage: baretls key|local|ca cert key port [backend]\n");
	exit(2);
}

/* The operation with the private key itself: the result's length or -1. */
static int
keyop(uint32_t type, int padding, const unsigned char *in, int inlen,
    unsigned char *out)
{
	RSA		*rsa;
	EC_KEY		*ec;
	unsigned int	 siglen;
	int		 n = -1;

	switch (type) {
	case OP_PRIVENC:
	case OP_PRIVDEC:
		if ((rsa = EVP_PKEY_get1_RSA(privkey)) == NULL)
			return (-1);
		if (RSA_size(rsa) <= MAXDATA)
			n = type == OP_PRIVENC ?
			    RSA_private_encrypt(inlen, in, out, rsa, padding) :
			    RSA_private_decrypt(inlen, in, out, rsa, padding);
		RSA_free(rsa);
		break;
	case OP_ECDSA:
		if ((ec = EVP_PKEY_get1_EC_KEY(privkey)) == NULL)
			return (-1);
		if (ECDSA_size(ec) <= MAXDATA &&
		    ECDSA_sign(0, in, inlen, out, &siglen, ec) == 1)
			n = (int)siglen;
		EC_KEY_free(ec);
		break;
	}
	return (n);
}

/* All of len bytes from fd, or -1. */
static int
read_all(int fd, void *buf, size_t len)
{
	unsigned char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		if ((n = read(fd, p, len)) == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return (-1);
		p += n;
		len -= n;
	}
	return (0);
}

/* local: the operation here; ca: one request to the child, one answer. */
static int
sign_op(uint32_t type, int padding, const unsigned char *in, int inlen,
    unsigned char *out)
{
	unsigned char	 buf[sizeof(struct op) + MAXDATA];
	struct op	 op;
	int32_t		 ret;

	if (inlen < 0 || inlen > MAXDATA)
		return (-1);
	if (signer == -1)
		return (keyop(type, padding, in, inlen, out));
	op.type = type;
	op.padding = padding;
	op.len = inlen;
	memcpy(buf, &op, sizeof(op));
	memcpy(buf + sizeof(op), in, inlen);
	if (write(signer, buf, sizeof(op) + inlen) !=
	    (ssize_t)(sizeof(op) + inlen))
		err(1, "write to the signer");
	if (read_all(signer, &ret, sizeof(ret)) == -1)
		errx(1, "the signer went away");
	if (ret > MAXDATA || (ret > 0 && read_all(signer, out, ret) == -1))
		errx(1, "the signer went away");
	return (ret);
}

/* The child of ca mode: answers until the parent goes. */
__attribute__((noreturn)) static void
signer_loop(int fd)
{
	unsigned char	 in[MAXDATA], out[sizeof(int32_t) + MAXDATA];
	struct op	 op;
	int32_t		 ret;

	for (;;) {
		if (read_all(fd, &op, sizeof(op)) == -1)
			_exit(0);
		if (op.len > MAXDATA || read_all(fd, in, op.len) == -1)
			_exit(1);
		ret = keyop(op.type, op.padding, in, op.len,
		    out + sizeof(ret));
		memcpy(out, &ret, sizeof(ret));
		if (write(fd, out, sizeof(ret) + (ret > 0 ? ret : 0)) == -1)
			_exit(1);
	}
}

static int
rsa_priv_enc(int flen, const unsigned char *from, unsigned char *to,
    RSA *rsa, int padding)
{
	(void)rsa;
	return (sign_op(OP_PRIVENC, padding, from, flen, to));
}

static int
rsa_priv_dec(int flen, const unsigned char *from, unsigned char *to,
    RSA *rsa, int padding)
{
	(void)rsa;
	return (sign_op(OP_PRIVDEC, padding, from, flen, to));
}

static ECDSA_SIG *
ec_do_sign(const unsigned char *dgst, int dlen, const BIGNUM *inv,
    const BIGNUM *rp, EC_KEY *eckey)
{
	unsigned char		 sig[MAXDATA];
	const unsigned char	*p = sig;
	int			 len;

	(void)inv;
	(void)rp;
	(void)eckey;
	if ((len = sign_op(OP_ECDSA, 0, dgst, dlen, sig)) <= 0)
		return (NULL);
	return (d2i_ECDSA_SIG(NULL, &p, len));
}

/*
 * The certificate's public key as a legacy key whose private-key
 * operations go through the methods above.
 */
static EVP_PKEY *
method_key(X509 *cert)
{
	EVP_PKEY	*pub, *pkey;
	RSA		*rsa;
	EC_KEY		*ec;
	int		 (*sign)(int, const unsigned char *, int,
			    unsigned char *, unsigned int *, const BIGNUM *,
			    const BIGNUM *, EC_KEY *);
	int		 (*setup)(EC_KEY *, BN_CTX *, BIGNUM **, BIGNUM **);

	if ((pub = X509_get_pubkey(cert)) == NULL ||
	    (pkey = EVP_PKEY_new()) == NULL)
		errx(1, "no public key");
	switch (EVP_PKEY_base_id(pub)) {
	case EVP_PKEY_RSA:
		if ((rsa_meth = RSA_meth_dup(RSA_PKCS1_OpenSSL())) == NULL ||
		    RSA_meth_set_priv_enc(rsa_meth, rsa_priv_enc) != 1 ||
		    RSA_meth_set_priv_dec(rsa_meth, rsa_priv_dec) != 1 ||
		    RSA_meth_set_flags(rsa_meth, RSA_meth_get_flags(rsa_meth) |
		    RSA_METHOD_FLAG_NO_CHECK) != 1)
			errx(1, "RSA method");
		if ((rsa = RSA_new()) == NULL ||
		    RSA_set_method(rsa, rsa_meth) != 1 ||
		    RSA_set0_key(rsa, BN_dup(RSA_get0_n(EVP_PKEY_get0_RSA(pub))),
		    BN_dup(RSA_get0_e(EVP_PKEY_get0_RSA(pub))), NULL) != 1 ||
		    EVP_PKEY_assign_RSA(pkey, rsa) != 1)
			errx(1, "RSA key");
		break;
	case EVP_PKEY_EC:
		if ((ec_meth = EC_KEY_METHOD_new(EC_KEY_OpenSSL())) == NULL)
			errx(1, "EC method");
		EC_KEY_METHOD_get_sign(ec_meth, &sign, &setup, NULL);
		EC_KEY_METHOD_set_sign(ec_meth, sign, setup, ec_do_sign);
		if ((ec = EC_KEY_new()) == NULL ||
		    EC_KEY_set_method(ec, ec_meth) != 1 ||
		    EC_KEY_set_group(ec, EC_KEY_get0_group(
		    EVP_PKEY_get0_EC_KEY(pub))) != 1 ||
		    EC_KEY_set_public_key(ec, EC_KEY_get0_public_key(
		    EVP_PKEY_get0_EC_KEY(pub))) != 1 ||
		    EVP_PKEY_assign_EC_KEY(pkey, ec) != 1)
			errx(1, "EC key");
		break;
	default:
		errx(1, "neither an RSA nor an EC key");
	}
	EVP_PKEY_free(pub);
	return (pkey);
}

static void
conn_close(int i)
{
	SSL_free(conns[i].ssl);
	close(pfd[i].fd);
	if (conns[i].bfd != -1)
		close(conns[i].bfd);
	nfds--;
	pfd[i] = pfd[nfds];
	conns[i] = conns[nfds];
}

/* A connection to the backend, blocking, or -1 */
static int
backend_connect(void)
{
	struct sockaddr_in	 sin;
	int			 s, one = 1;

	if ((s = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return (-1);
	(void)setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(backend);
	if (connect(s, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		close(s);
		return (-1);
	}
	return (s);
}

/* A request's answer to the client, from the backend or baretls: 0 or -1 */
static int
answer(struct conn *c, const char *req, int reqlen)
{
	char		 buf[4096];
	ssize_t		 n;

	if (backend == 0)
		return (SSL_write(c->ssl, ANSWER, sizeof(ANSWER) - 1) ==
		    sizeof(ANSWER) - 1 ? 0 : -1);
	if ((c->bfd = backend_connect()) == -1 ||
	    write(c->bfd, req, reqlen) != reqlen)
		return (-1);
	while ((n = read(c->bfd, buf, sizeof(buf))) > 0)
		if (SSL_write(c->ssl, buf, n) != n)
			return (-1);
	return (n == 0 ? 0 : -1);
}

/*
 * Handshake, then read until the client goes, answering a request:
 * 0, or -1 closed.
 */
static int
conn_run(int i)
{
	struct conn	*c = &conns[i];
	char		 buf[4096];
	int		 n;

	ERR_clear_error();
	if (!c->open) {
		if ((n = SSL_accept(c->ssl)) != 1)
			goto want;
		c->open = 1;
	}
	while ((n = SSL_read(c->ssl, buf, sizeof(buf))) > 0) {
		/* a request's end (it comes in one record): the answer */
		if (memmem(buf, n, "\r\n\r\n", 4) == NULL)
			continue;
		if (answer(c, buf, n) == 0)
			(void)SSL_shutdown(c->ssl);
		break;
	}
	if (n > 0) {
		conn_close(i);
		return (-1);
	}
 want:
	switch (SSL_get_error(c->ssl, n)) {
	case SSL_ERROR_WANT_READ:
		pfd[i].events = POLLIN;
		return (0);
	case SSL_ERROR_WANT_WRITE:
		pfd[i].events = POLLOUT;
		return (0);
	}
	conn_close(i);
	return (-1);
}

static void
conn_accept(SSL_CTX *ctx)
{
	SSL	*ssl;
	int	 s, one = 1;

	while (nfds <= MAXCONN &&
	    (s = accept4(pfd[0].fd, NULL, NULL, SOCK_NONBLOCK)) != -1) {
		(void)setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one,
		    sizeof(one));
		if ((ssl = SSL_new(ctx)) == NULL || SSL_set_fd(ssl, s) != 1) {
			SSL_free(ssl);
			close(s);
			continue;
		}
		pfd[nfds].fd = s;
		pfd[nfds].events = POLLIN;
		pfd[nfds].revents = 0;
		conns[nfds].ssl = ssl;
		conns[nfds].open = 0;
		conns[nfds].bfd = -1;
		nfds++;
		(void)conn_run(nfds - 1);
	}
}

int
main(int argc, char *argv[])
{
	struct sockaddr_in	 sin;
	SSL_CTX			*ctx;
	X509			*cert;
	FILE			*f;
	int			 mode, i, on = 1, sv[2];

	if (argc != 5 && argc != 6)
		usage();
	if (strcmp(argv[1], "key") == 0)
		mode = 0;
	else if (strcmp(argv[1], "local") == 0)
		mode = 1;
	else if (strcmp(argv[1], "ca") == 0)
		mode = 2;
	else
		usage();
	if (argc == 6 && (backend = atoi(argv[5])) <= 0)
		usage();
	signal(SIGPIPE, SIG_IGN);
	if ((f = fopen(argv[3], "r")) == NULL)
		err(1, "%s", argv[3]);
	if ((privkey = PEM_read_PrivateKey(f, NULL, NULL, NULL)) == NULL)
		errx(1, "%s: no private key", argv[3]);
	fclose(f);
	if (mode == 2) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
			err(1, "socketpair");
		switch (fork()) {
		case -1:
			err(1, "fork");
		case 0:
			close(sv[0]);
			signer_loop(sv[1]);
		}
		close(sv[1]);
		signer = sv[0];
		/* the key lives in the child only */
		EVP_PKEY_free(privkey);
		privkey = NULL;
	}

	if ((ctx = SSL_CTX_new(TLS_server_method())) == NULL ||
	    SSL_CTX_use_certificate_file(ctx, argv[2], SSL_FILETYPE_PEM) != 1 ||
	    (cert = SSL_CTX_get0_certificate(ctx)) == NULL)
		errx(1, "%s: no certificate", argv[2]);
	if (SSL_CTX_use_PrivateKey(ctx, mode == 0 ? privkey :
	    method_key(cert)) != 1)
		errx(1, "the key does not fit the certificate");
	SSL_CTX_set_num_tickets(ctx, 1);

	if ((pfd[0].fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) ==
	    -1)
		err(1, "socket");
	(void)setsockopt(pfd[0].fd, SOL_SOCKET, SO_REUSEADDR, &on,
	    sizeof(on));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(atoi(argv[4]));
	if (bind(pfd[0].fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(pfd[0].fd, 512) == -1)
		err(1, "listen %s", argv[4]);
	pfd[0].events = POLLIN;
	nfds = 1;

	for (;;) {
		if (poll(pfd, nfds, -1) == -1) {
			if (errno == EINTR)
				continue;
			err(1, "poll");
		}
		/* from the end: a closed one takes the last one's place */
		for (i = nfds - 1; i > 0; i--)
			if (pfd[i].revents != 0)
				(void)conn_run(i);
		if (pfd[0].revents & POLLIN)
			conn_accept(ctx);
	}
}
