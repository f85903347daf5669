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
 * ca: keeps the private keys away from the processes that parse network
 * input.  The parent sends it the keys of the relays' keypairs; relay
 * instance n asks ca instance n to sign or decrypt with one, naming it
 * by the hash of its public key (tls_pkey_hash()).
 */

#include <sys/types.h>
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "relayd.h"

#define CA_MAXDATA	1024		/* 8192-bit RSA */

struct ca_key {
	char			 ck_hash[TLS_HASH_SIZE];
	EVP_PKEY		*ck_pkey;
	TAILQ_ENTRY(ca_key)	 ck_entry;
};
TAILQ_HEAD(ca_keys, ca_key);

static void	 ca_init(struct privsep *, struct privsep_proc *, void *);
static void	 ca_launch(void);
static int	 ca_dispatch_parent(int, struct privsep_proc *,
		    struct imsg *);
static int	 ca_dispatch_relay(int, struct privsep_proc *,
		    struct imsg *);
static int	 ca_keyop(struct imsg *, uint8_t *, size_t *);

static struct relayd	*env;
static struct ca_keys	 ca_keys = TAILQ_HEAD_INITIALIZER(ca_keys);

static struct privsep_proc procs[] = {
	{ "parent",	PROC_PARENT,	ca_dispatch_parent,	NULL, NULL },
	{ "relay",	PROC_RELAY,	ca_dispatch_relay,	NULL, NULL }
};

void
ca(struct privsep *ps, struct privsep_proc *p)
{
	env = ps->ps_env;
	proc_run(ps, p, procs, nitems(procs), ca_init, NULL);
}

static void
ca_init(struct privsep *ps, struct privsep_proc *p, void *arg)
{
	(void)ps;
	(void)p;
	(void)arg;
	if (compat_sandbox("ca") == -1)
		fatal("%s: sandbox", __func__);
}

/*
 * The keys of a new configuration join those ca holds: a session that
 * began before a reload may still need its key.  The PEM text goes at
 * once.
 */
static void
ca_launch(void)
{
	struct relay		*rlay;
	struct relay_cert	*rc;
	struct ca_key		*ck;
	char			 hash[TLS_HASH_SIZE];
	BIO			*bio;
	EVP_PKEY		*pkey;

	TAILQ_FOREACH(rlay, env->sc_relays, rl_entry) {
		TAILQ_FOREACH(rc, &rlay->rl_certs, rc_entry) {
			if (rc->rc_type != RELAY_CERT_KEY &&
			    rc->rc_type != RELAY_CERT_CAKEY)
				continue;
			if ((bio = BIO_new_mem_buf(rc->rc_data,
			    rc->rc_len)) == NULL)
				fatalx("%s: BIO_new_mem_buf", __func__);
			pkey = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
			BIO_free(bio);
			explicit_bzero(rc->rc_data, rc->rc_len);
			if (pkey == NULL) {
				log_warnx("relay %s: cannot read a private "
				    "key", rlay->rl_conf.name);
				continue;
			}
			if (tls_pkey_hash(pkey, hash, sizeof(hash)) == -1)
				fatalx("%s: key hash", __func__);
			TAILQ_FOREACH(ck, &ca_keys, ck_entry)
				if (strcmp(ck->ck_hash, hash) == 0)
					break;
			if (ck != NULL) {
				EVP_PKEY_free(pkey);
				continue;
			}
			if ((ck = calloc(1, sizeof(*ck))) == NULL)
				fatal("%s", __func__);
			(void)strlcpy(ck->ck_hash, hash, sizeof(ck->ck_hash));
			ck->ck_pkey = pkey;
			TAILQ_INSERT_TAIL(&ca_keys, ck, ck_entry);
			log_debug("%s: key %s", __func__, hash);
		}
	}
}

static int
ca_dispatch_parent(int fd, struct privsep_proc *p, struct imsg *imsg)
{
	(void)fd;
	(void)p;
	switch (imsg->hdr.type) {
	case IMSG_CTL_START:
		ca_launch();
		break;
	default:
		return (config_dispatch(env, imsg));
	}
	return (0);
}

/*
 * One operation with a key: out gets the result, *outlen its length.
 * RSA: sign with PKCS#1 type 1 padding or none (PSS padded by the
 * caller), decrypt with the padding asked for; ECDSA: sign a digest
 * (DER signature).
 */
static int
ca_keyop(struct imsg *imsg, uint8_t *out, size_t *outlen)
{
	struct ctl_keyop	 op;
	struct ca_key		*ck;
	const uint8_t		*in;

	memcpy(&op, imsg->data, sizeof(op));
	op.hash[sizeof(op.hash) - 1] = '\0';
	in = (const uint8_t *)imsg->data + sizeof(op);
	TAILQ_FOREACH(ck, &ca_keys, ck_entry)
		if (strcmp(ck->ck_hash, op.hash) == 0)
			break;
	if (ck == NULL) {
		log_warnx("%s: no key %s", __func__, op.hash);
		return (-1);
	}
	return (tls_keyops_private(ck->ck_pkey, imsg->hdr.type, op.padding,
	    in, op.len, out, outlen));
}

static int
ca_dispatch_relay(int fd, struct privsep_proc *p, struct imsg *imsg)
{
	struct ctl_keyop	 op;
	struct imsgev		*iev;
	uint8_t			 buf[sizeof(op) + CA_MAXDATA];
	size_t			 outlen = CA_MAXDATA;

	(void)fd;
	switch (imsg->hdr.type) {
	case IMSG_CA_PRIVENC:
	case IMSG_CA_PRIVDEC:
	case IMSG_CA_ECDSA:
		IMSG_SIZE_CHECK(imsg, &op);
		memcpy(&op, imsg->data, sizeof(op));
		if (op.len != IMSG_DATA_SIZE(imsg) - sizeof(op) ||
		    op.len > CA_MAXDATA)
			fatalx("%s: bad key operation", __func__);
		if (ca_keyop(imsg, buf + sizeof(op), &outlen) == -1) {
			op.ret = -1;
			outlen = 0;
		} else
			op.ret = (int)outlen;
		op.len = outlen;
		memcpy(buf, &op, sizeof(op));
		if ((iev = proc_iev(p->p_ps, PROC_RELAY,
		    p->p_ps->ps_instance)) == NULL ||
		    imsg_compose(&iev->ibuf, imsg->hdr.type, 0, 0, -1, buf,
		    sizeof(op) + outlen) == -1)
			fatalx("%s: answer to relay", __func__);
		explicit_bzero(buf, sizeof(buf));
		/*
		 * The relay waits in its handshake: the answer goes now, not
		 * after another turn of the event loop (what the socket
		 * does not take waits for the write event).
		 */
		(void)msgbuf_write(&iev->ibuf.w);
		imsg_event_add(iev);
		break;
	default:
		return (-1);
	}
	return (0);
}
