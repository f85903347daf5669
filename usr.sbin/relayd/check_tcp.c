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
 * The checks that talk TCP: tcp, tls, http and https (code, digest),
 * send/expect and binary send/expect.  Each is a small state machine on
 * one non-blocking socket: connect, TLS handshake, write, read; every
 * step has the table's timeout, and the first step to fail names the
 * result.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <tls.h>

#include "relayd.h"

#define CTE_BUFMAX	65536	/* what we read before a verdict */

enum cte_state {
	CTE_CONNECT,
	CTE_TLS,
	CTE_WRITE,
	CTE_READ
};

struct check_event {
	struct host	*host;
	struct table	*table;
	int		 s;
	struct event	 ev;
	int		 evset;
	struct tls	*tls;
	enum cte_state	 state;
	size_t		 sent;
	char		*buf;		/* what was read, NUL-terminated */
	size_t		 len;
	EVP_MD_CTX	*md;		/* http digest: the body */
	struct h2check	*h2;		/* http2 code: the answer's frames */
	char		*req;		/* http2 code: the request */
	size_t		 reqlen;
	int		 inbody;
	uint32_t	 seq;		/* a unix socket: the parent's try */
};

static void	 cte_event(int, short, void *);
static void	 cte_wait(struct check_event *, short);
static void	 cte_done(struct check_event *, enum host_error);
static void	 cte_free(struct check_event *);
static void	 cte_connected(struct check_event *);
static void	 cte_handshake(struct check_event *);
static void	 cte_write(struct check_event *);
static void	 cte_read(struct check_event *);
static int	 cte_validate(struct check_event *, int);

static struct tls_config	*cte_tlscfg;
static struct tls_config	*cte_tlscfg_h2;	/* check http2 ... tls */
static struct privsep		*cte_ps;
static uint32_t			 cte_seq;

/* A configuration that verifies nothing, asking for alpn if not NULL. */
static struct tls_config *
cte_tlsconfig(const char *alpn)
{
	struct tls_config	*cfg;

	if ((cfg = tls_config_new()) == NULL ||
	    (alpn != NULL && tls_config_set_alpn(cfg, alpn) != 0)) {
		log_warnx("check tls: cannot make a TLS configuration");
		tls_config_free(cfg);
		return (NULL);
	}
	tls_config_insecure_noverifycert(cfg);
	tls_config_insecure_noverifyname(cfg);
	tls_config_insecure_noverifytime(cfg);
	return (cfg);
}

/* Before the chroot: libtls reads its defaults from /etc. */
void
check_tcp_init(struct privsep *ps)
{
	cte_ps = ps;
	cte_tlscfg = cte_tlsconfig(NULL);
	cte_tlscfg_h2 = cte_tlsconfig("h2");
}

void
check_tcp(struct host *h, struct table *tb)
{
	struct check_event	*cte;
	struct linger		 lng = { 1, 0 };
	int			 ttl;

	if ((cte = calloc(1, sizeof(*cte))) == NULL) {
		log_warn("%s", __func__);
		return;
	}
	cte->host = h;
	cte->table = tb;
	cte->s = -1;
	h->cte = cte;
	getmonotime(&h->check_start);

	/* a unix socket is out of reach of the chroot: the parent connects */
	if (h->conf.ss.ss_family == AF_UNIX) {
		struct ctl_unixconnect	 uc;

		memset(&uc, 0, sizeof(uc));
		uc.id = h->conf.id;
		uc.seq = cte->seq = ++cte_seq;
		uc.ss = h->conf.ss;
		cte->state = CTE_CONNECT;
		proc_compose(cte_ps, PROC_PARENT, IMSG_UNIXCONNECT, &uc,
		    sizeof(uc));
		cte_wait(cte, 0);	/* the connect timeout */
		return;
	}

	if ((cte->s = socket(h->conf.ss.ss_family, SOCK_STREAM |
	    SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) == -1) {
		cte_done(cte, errno == EMFILE || errno == ENFILE ?
		    HCE_TCP_SOCKET_LIMIT : HCE_TCP_SOCKET_ERROR);
		return;
	}
	/* no TIME_WAIT left behind by a check */
	if (setsockopt(cte->s, SOL_SOCKET, SO_LINGER, &lng,
	    sizeof(lng)) == -1) {
		cte_done(cte, HCE_TCP_SOCKET_OPTION);
		return;
	}
	if ((ttl = h->conf.ttl) > 0 && (h->conf.ss.ss_family == AF_INET ?
	    setsockopt(cte->s, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl)) :
	    setsockopt(cte->s, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &ttl,
	    sizeof(ttl))) == -1) {
		cte_done(cte, HCE_TCP_SOCKET_OPTION);
		return;
	}
	cte->state = CTE_CONNECT;
	if (connect(cte->s, (struct sockaddr *)&h->conf.ss,
	    ss_len(&h->conf.ss)) == 0) {
		cte_connected(cte);
		return;
	}
	if (errno != EINPROGRESS) {
		cte_done(cte, HCE_TCP_CONNECT_FAIL);
		return;
	}
	cte_wait(cte, EV_WRITE);
}

void
check_tcp_abort(struct host *h)
{
	if (h->cte == NULL)
		return;
	cte_free(h->cte);
	h->cte = NULL;
}

static void
cte_wait(struct check_event *cte, short what)
{
	struct timeval	 tv = cte->table->conf.timeout;

	if (cte->evset)
		event_del(&cte->ev);
	event_set(&cte->ev, cte->s, what, cte_event, cte);
	event_add(&cte->ev, &tv);
	cte->evset = 1;
}

/* The parent's answer for a unix-socket host: a connected socket. */
void
check_tcp_unix(struct imsg *imsg)
{
	struct ctl_unixconnect	 uc;
	struct check_event	*cte;
	struct host		*h;

	if (IMSG_DATA_SIZE(imsg) != sizeof(uc)) {
		if (imsg->fd != -1)
			close(imsg->fd);
		return;
	}
	memcpy(&uc, imsg->data, sizeof(uc));
	if ((h = host_find(cte_ps->ps_env, uc.id)) == NULL ||
	    (cte = h->cte) == NULL || cte->seq != uc.seq || cte->s != -1 ||
	    cte->state != CTE_CONNECT) {
		/* the check is over (a timeout, a reload) */
		if (imsg->fd != -1)
			close(imsg->fd);
		return;
	}
	if (imsg->fd == -1) {
		cte_done(cte, HCE_TCP_CONNECT_FAIL);
		return;
	}
	cte->s = imsg->fd;
	if (cte->evset) {
		event_del(&cte->ev);
		cte->evset = 0;
	}
	cte_connected(cte);
}

static void
cte_free(struct check_event *cte)
{
	if (cte->evset)
		event_del(&cte->ev);
	if (cte->tls != NULL) {
		/* no close_notify: the peer may not be listening */
		tls_free(cte->tls);
	}
	if (cte->s != -1)
		close(cte->s);
	if (cte->md != NULL)
		EVP_MD_CTX_free(cte->md);
	h2check_free(cte->h2);
	free(cte->req);
	free(cte->buf);
	free(cte);
}

static void
cte_done(struct check_event *cte, enum host_error he)
{
	struct host	*h = cte->host;

	cte_free(cte);
	h->cte = NULL;
	hce_notify_done(h, he);
}

static void
cte_event(int fd, short event, void *arg)
{
	struct check_event	*cte = arg;
	int			 tls = cte->tls != NULL, error;
	socklen_t		 len = sizeof(error);

	(void)fd;
	if (event & EV_TIMEOUT) {
		switch (cte->state) {
		case CTE_CONNECT:
			cte_done(cte, HCE_TCP_CONNECT_TIMEOUT);
			break;
		case CTE_TLS:
			cte_done(cte, HCE_TLS_CONNECT_TIMEOUT);
			break;
		case CTE_WRITE:
			cte_done(cte, tls ? HCE_TLS_WRITE_TIMEOUT :
			    HCE_TCP_WRITE_TIMEOUT);
			break;
		case CTE_READ:
			/* what arrived, if anything, decides */
			if ((cte->len == 0 && !cte->inbody) ||
			    cte_validate(cte, 1) == 0)
				cte_done(cte, tls ? HCE_TLS_READ_TIMEOUT :
				    HCE_TCP_READ_TIMEOUT);
			break;
		}
		return;
	}
	switch (cte->state) {
	case CTE_CONNECT:
		if (getsockopt(cte->s, SOL_SOCKET, SO_ERROR, &error,
		    &len) == -1 || error != 0) {
			cte_done(cte, HCE_TCP_CONNECT_FAIL);
			return;
		}
		cte_connected(cte);
		break;
	case CTE_TLS:
		cte_handshake(cte);
		break;
	case CTE_WRITE:
		cte_write(cte);
		break;
	case CTE_READ:
		cte_read(cte);
		break;
	}
}

static void
cte_connected(struct check_event *cte)
{
	struct table		*tb = cte->table;
	struct tls_config	*cfg = cte_tlscfg;

	if (tb->conf.flags & F_TLS) {
		if (tb->conf.check == CHECK_HTTP2_CODE)
			cfg = cte_tlscfg_h2;
		/* check https ... host NAME asks for NAME (SNI) */
		if (cfg == NULL || (cte->tls = tls_client()) == NULL ||
		    tls_configure(cte->tls, cfg) == -1 ||
		    tls_connect_socket(cte->tls, cte->s,
		    tb->conf.host[0] != '\0' ? tb->conf.host : NULL) == -1) {
			cte_done(cte, HCE_TLS_CONNECT_ERROR);
			return;
		}
		cte->state = CTE_TLS;
		cte_handshake(cte);
		return;
	}
	if (tb->conf.check == CHECK_TCP) {
		cte_done(cte, HCE_TCP_CONNECT_OK);
		return;
	}
	cte->state = CTE_WRITE;
	cte_write(cte);
}

static void
cte_handshake(struct check_event *cte)
{
	const char	*alpn;
	int		 r;

	r = tls_handshake(cte->tls);
	if (r == TLS_WANT_POLLIN) {
		cte_wait(cte, EV_READ);
		return;
	}
	if (r == TLS_WANT_POLLOUT) {
		cte_wait(cte, EV_WRITE);
		return;
	}
	if (r == -1) {
		log_debug("%s: host %s: %s", __func__, cte->host->conf.name,
		    tls_error(cte->tls));
		cte_done(cte, HCE_TLS_CONNECT_FAIL);
		return;
	}
	if (cte->table->conf.check == CHECK_TCP) {
		cte_done(cte, HCE_TLS_CONNECT_OK);
		return;
	}
	/* a backend that does not choose h2 does not speak it here */
	if (cte->table->conf.check == CHECK_HTTP2_CODE &&
	    ((alpn = tls_conn_alpn_selected(cte->tls)) == NULL ||
	    strcmp(alpn, "h2") != 0)) {
		log_debug("%s: host %s: no ALPN h2", __func__,
		    cte->host->conf.name);
		cte_done(cte, HCE_HTTP_CODE_ERROR);
		return;
	}
	cte->state = CTE_WRITE;
	cte_write(cte);
}

/*
 * An HTTP/2 check's :authority: "host NAME", else the host as the table
 * names it (an IPv6 address in brackets; a unix socket: localhost).
 */
static const char *
h2check_authority(struct table *tb, struct host *h)
{
	static char	 name[RELAYD_HOSTNAME_MAX + 3];

	if (tb->conf.host[0] != '\0')
		return (tb->conf.host);
	if (h->conf.name[0] == '/')
		return ("localhost");
	if (strchr(h->conf.name, ':') != NULL) {
		(void)snprintf(name, sizeof(name), "[%s]", h->conf.name);
		return (name);
	}
	return (h->conf.name);
}

static void
cte_write(struct check_event *cte)
{
	struct table	*tb = cte->table;
	const char	*out = tb->sendbuf;
	size_t		 outlen = tb->sendbuf_len;
	ssize_t		 n;

	if (tb->conf.check == CHECK_HTTP2_CODE) {
		if (cte->req == NULL && h2check_request(tb->conf.path,
		    h2check_authority(tb, cte->host), cte->tls != NULL,
		    &cte->req, &cte->reqlen) == -1) {
			cte_done(cte, HCE_TCP_WRITE_FAIL);
			return;
		}
		out = cte->req;
		outlen = cte->reqlen;
	}
	while (cte->sent < outlen) {
		if (cte->tls != NULL) {
			n = tls_write(cte->tls, out + cte->sent,
			    outlen - cte->sent);
			if (n == TLS_WANT_POLLIN || n == TLS_WANT_POLLOUT) {
				cte_wait(cte, n == TLS_WANT_POLLIN ?
				    EV_READ : EV_WRITE);
				return;
			}
			if (n == -1) {
				cte_done(cte, HCE_TLS_WRITE_ERROR);
				return;
			}
		} else {
			n = write(cte->s, out + cte->sent, outlen - cte->sent);
			if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
				cte_wait(cte, EV_WRITE);
				return;
			}
			if (n == -1) {
				cte_done(cte, HCE_TCP_WRITE_FAIL);
				return;
			}
		}
		cte->sent += n;
	}
	cte->state = CTE_READ;
	if ((cte->buf = malloc(CTE_BUFMAX + 1)) == NULL) {
		cte_done(cte, HCE_TCP_SOCKET_ERROR);
		return;
	}
	cte->buf[0] = '\0';
	cte_read(cte);
}

static void
cte_read(struct check_event *cte)
{
	ssize_t	 n;
	int	 tls = cte->tls != NULL;

	for (;;) {
		if (cte->len >= CTE_BUFMAX) {
			/* no verdict in all we keep */
			if (cte_validate(cte, 1) == 0)
				cte_done(cte, HCE_TCP_READ_FAIL);
			return;
		}
		if (tls) {
			n = tls_read(cte->tls, cte->buf + cte->len,
			    CTE_BUFMAX - cte->len);
			if (n == TLS_WANT_POLLIN || n == TLS_WANT_POLLOUT) {
				cte_wait(cte, n == TLS_WANT_POLLIN ?
				    EV_READ : EV_WRITE);
				return;
			}
		} else {
			n = read(cte->s, cte->buf + cte->len,
			    CTE_BUFMAX - cte->len);
			if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
				cte_wait(cte, EV_READ);
				return;
			}
		}
		if (n == -1) {
			/* a reset after the answer is still an answer */
			if (cte_validate(cte, 1) == 0)
				cte_done(cte, tls ? HCE_TLS_READ_ERROR :
				    HCE_TCP_READ_FAIL);
			return;
		}
		if (n == 0) {
			if (cte_validate(cte, 1) == 0)
				cte_done(cte, HCE_TCP_READ_FAIL);
			return;
		}
		cte->len += n;
		cte->buf[cte->len] = '\0';
		if (cte_validate(cte, 0))
			return;
	}
}

/* Bytes as lower-case hex, into out (2 * len + 1). */
static void
tohex(const unsigned char *p, size_t len, char *out)
{
	static const char	 digits[] = "0123456789abcdef";
	size_t			 i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 0xf];
	}
	out[2 * len] = '\0';
}

/* The status code of an answer: the verdict of an http code check. */
static int
cte_code(struct check_event *cte, int code)
{
	struct host	*h = cte->host;

	if (code != cte->table->conf.retcode) {
		log_debug("%s: host %s: http code %d, expected %d", __func__,
		    h->conf.name, code, cte->table->conf.retcode);
		h->code = code;
		cte_done(cte, HCE_HTTP_CODE_FAIL);
		return (1);
	}
	cte_done(cte, HCE_HTTP_CODE_OK);
	return (1);
}

static int
validate_http_code(struct check_event *cte, int final)
{
	const char	*p = cte->buf;
	int		 code;

	if (strchr(p, '\n') == NULL && !final)
		return (0);
	if ((strncmp(p, "HTTP/1.0 ", 9) != 0 &&
	    strncmp(p, "HTTP/1.1 ", 9) != 0) ||
	    !isdigit((unsigned char)p[9]) || !isdigit((unsigned char)p[10]) ||
	    !isdigit((unsigned char)p[11]) || isdigit((unsigned char)p[12])) {
		cte_done(cte, HCE_HTTP_CODE_ERROR);
		return (1);
	}
	code = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	return (cte_code(cte, code));
}

/* HTTP/2 frames, taken off the buffer as they are read. */
static int
validate_http2_code(struct check_event *cte, int final)
{
	size_t		 used;
	int		 code;

	if (cte->h2 == NULL && (cte->h2 = h2check_new()) == NULL) {
		cte_done(cte, HCE_HTTP_CODE_ERROR);
		return (1);
	}
	code = h2check_status(cte->h2, (uint8_t *)cte->buf, cte->len, &used);
	memmove(cte->buf, cte->buf + used, cte->len - used);
	cte->len -= used;
	cte->buf[cte->len] = '\0';
	if (code == 0 && !final)
		return (0);
	if (code <= 0) {
		cte_done(cte, HCE_HTTP_CODE_ERROR);
		return (1);
	}
	return (cte_code(cte, code));
}

/* The body is hashed as it comes, byte for byte (binary bodies too). */
static int
validate_http_digest(struct check_event *cte, int final)
{
	struct table	*tb = cte->table;
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 mdlen;
	char		 hex[2 * EVP_MAX_MD_SIZE + 1], *end;
	size_t		 skip;

	if (!cte->inbody) {
		if ((end = strstr(cte->buf, "\r\n\r\n")) != NULL)
			skip = end + 4 - cte->buf;
		else if ((end = strstr(cte->buf, "\n\n")) != NULL)
			skip = end + 2 - cte->buf;
		else {
			/* headers are text: a NUL or no end is malformed */
			if (final || strlen(cte->buf) != cte->len) {
				cte_done(cte, HCE_HTTP_DIGEST_ERROR);
				return (1);
			}
			return (0);
		}
		if ((cte->md = EVP_MD_CTX_new()) == NULL ||
		    EVP_DigestInit_ex(cte->md, tb->conf.digest_type ==
		    DIGEST_MD5 ? EVP_md5() : EVP_sha1(), NULL) != 1) {
			cte_done(cte, HCE_HTTP_DIGEST_ERROR);
			return (1);
		}
		cte->inbody = 1;
		memmove(cte->buf, cte->buf + skip, cte->len - skip);
		cte->len -= skip;
	}
	if (cte->len > 0) {
		(void)EVP_DigestUpdate(cte->md, cte->buf, cte->len);
		cte->len = 0;
	}
	if (!final)
		return (0);
	if (EVP_DigestFinal_ex(cte->md, md, &mdlen) != 1) {
		cte_done(cte, HCE_HTTP_DIGEST_ERROR);
		return (1);
	}
	tohex(md, mdlen, hex);
	if (strcmp(hex, tb->conf.digest) != 0) {
		log_debug("%s: host %s: digest %s, expected %s", __func__,
		    cte->host->conf.name, hex, tb->conf.digest);
		cte_done(cte, HCE_HTTP_DIGEST_FAIL);
	} else
		cte_done(cte, HCE_HTTP_DIGEST_OK);
	return (1);
}

static int
validate_binary(struct check_event *cte, int final)
{
	struct table	*tb = cte->table;
	size_t		 want = strlen(tb->conf.exbuf) / 2;
	char		 hex[TABLE_EXBUF_SIZE];

	if (cte->len < want) {
		if (!final)
			return (0);
		cte_done(cte, HCE_SEND_EXPECT_FAIL);
		return (1);
	}
	tohex((unsigned char *)cte->buf, want, hex);
	cte_done(cte, strcmp(hex, tb->conf.exbuf) == 0 ?
	    HCE_SEND_EXPECT_OK : HCE_SEND_EXPECT_FAIL);
	return (1);
}

/*
 * Look at what was read: 1 when the check has its verdict (and is
 * done), 0 when more is needed.  final: nothing more will come.
 */
static int
cte_validate(struct check_event *cte, int final)
{
	if (cte->buf == NULL)
		return (0);
	switch (cte->table->conf.check) {
	case CHECK_HTTP_CODE:
		if (cte->len == 0 && final) {
			cte_done(cte, HCE_HTTP_CODE_ERROR);
			return (1);
		}
		return (validate_http_code(cte, final));
	case CHECK_HTTP_DIGEST:
		return (validate_http_digest(cte, final));
	case CHECK_HTTP2_CODE:
		return (validate_http2_code(cte, final));
	case CHECK_BINSEND_EXPECT:
		return (validate_binary(cte, final));
	case CHECK_SEND_EXPECT:
		if (fnmatch(cte->table->conf.exbuf, cte->buf, 0) == 0) {
			cte_done(cte, HCE_SEND_EXPECT_OK);
			return (1);
		}
		if (final) {
			cte_done(cte, HCE_SEND_EXPECT_FAIL);
			return (1);
		}
		return (0);
	default:
		return (0);
	}
}
