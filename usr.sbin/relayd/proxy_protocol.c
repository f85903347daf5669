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
 * The PROXY protocol (HAProxy's, versions 1 and 2): the header relayd
 * writes to a backend before the client's first byte ("forward to ...
 * proxy-protocol v1|v2", as OpenBSD's), and the header it reads from a
 * trusted load balancer ("listen on ... proxy-protocol from ...", ours).
 */

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "relayd.h"

#define PP_V1_MAX	107		/* the longest v1 line, CRLF too */
#define PP_V2_HDR	16
#define PP_V2_CMD_LOCAL	0x0
#define PP_V2_CMD_PROXY	0x1
#define PP_V2_TCP4	0x11
#define PP_V2_TCP6	0x21

static const uint8_t pp_v2_sig[12] = {
	0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a
};
static const char pp_v1_sig[] = "PROXY ";

/*
 * The header for one session: the client's address and port, then the
 * address and port it reached.  Addresses other than IPv4 or IPv6 (a
 * unix-socket client) are sent as UNKNOWN (v1) or UNSPEC (v2), as the
 * protocol says.  Returns its length, or -1 when it does not fit.
 */
ssize_t
pp_header(int version, struct sockaddr_storage *src,
    struct sockaddr_storage *dst, uint8_t *buf, size_t len)
{
	char		 sa[INET6_ADDRSTRLEN], da[INET6_ADDRSTRLEN];
	uint8_t		*p;
	size_t		 alen;
	int		 n;

	if (src->ss_family != dst->ss_family ||
	    (src->ss_family != AF_INET && src->ss_family != AF_INET6)) {
		if (version == 1) {
			n = snprintf((char *)buf, len, "PROXY UNKNOWN\r\n");
			return (n < 0 || (size_t)n >= len ? -1 : n);
		}
		if (len < PP_V2_HDR)
			return (-1);
		memcpy(buf, pp_v2_sig, sizeof(pp_v2_sig));
		buf[12] = 0x20 | PP_V2_CMD_PROXY;
		buf[13] = 0x00;
		buf[14] = buf[15] = 0;
		return (PP_V2_HDR);
	}
	if (version == 1) {
		if (print_host(src, sa, sizeof(sa)) == NULL ||
		    print_host(dst, da, sizeof(da)) == NULL)
			return (-1);
		n = snprintf((char *)buf, len, "PROXY %s %s %s %d %d\r\n",
		    src->ss_family == AF_INET ? "TCP4" : "TCP6", sa, da,
		    ss_port(src), ss_port(dst));
		return (n < 0 || (size_t)n >= len ? -1 : n);
	}
	alen = src->ss_family == AF_INET ? 4 : 16;
	if (len < PP_V2_HDR + 2 * alen + 4)
		return (-1);
	memcpy(buf, pp_v2_sig, sizeof(pp_v2_sig));
	buf[12] = 0x20 | PP_V2_CMD_PROXY;
	buf[13] = src->ss_family == AF_INET ? PP_V2_TCP4 : PP_V2_TCP6;
	buf[14] = 0;
	buf[15] = 2 * alen + 4;
	p = buf + PP_V2_HDR;
	if (src->ss_family == AF_INET) {
		memcpy(p, &((struct sockaddr_in *)src)->sin_addr, 4);
		memcpy(p + 4, &((struct sockaddr_in *)dst)->sin_addr, 4);
		memcpy(p + 8, &((struct sockaddr_in *)src)->sin_port, 2);
		memcpy(p + 10, &((struct sockaddr_in *)dst)->sin_port, 2);
	} else {
		memcpy(p, &((struct sockaddr_in6 *)src)->sin6_addr, 16);
		memcpy(p + 16, &((struct sockaddr_in6 *)dst)->sin6_addr, 16);
		memcpy(p + 32, &((struct sockaddr_in6 *)src)->sin6_port, 2);
		memcpy(p + 34, &((struct sockaddr_in6 *)dst)->sin6_port, 2);
	}
	return (PP_V2_HDR + 2 * alen + 4);
}

/* A decimal port, 0-65535, without sign, spaces or leading zeros. */
static int
pp_v1_port(const char *s, in_port_t *port)
{
	const char	*errstr;
	long long	 n;

	if (s[0] == '\0' || (s[0] == '0' && s[1] != '\0') ||
	    strspn(s, "0123456789") != strlen(s))
		return (-1);
	n = strtonum(s, 0, 65535, &errstr);
	if (errstr != NULL)
		return (-1);
	*port = n;
	return (0);
}

static int
pp_v1_addr(int af, const char *s, in_port_t port,
    struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	ss->ss_family = af;
	if (af == AF_INET) {
		if (inet_pton(AF_INET, s,
		    &((struct sockaddr_in *)ss)->sin_addr) != 1)
			return (-1);
	} else if (inet_pton(AF_INET6, s,
	    &((struct sockaddr_in6 *)ss)->sin6_addr) != 1)
		return (-1);
	ss_setport(ss, port);
	return (0);
}

/* "PROXY TCP4|TCP6 SRC DST SPORT DPORT" or "PROXY UNKNOWN ...". */
static int
pp_v1_parse(char *line, struct sockaddr_storage *src,
    struct sockaddr_storage *dst)
{
	char		*f[6], *p = line;
	in_port_t	 sport, dport;
	int		 i, af;

	for (i = 0; i < 6; i++) {
		f[i] = p;
		if ((p = strchr(p, ' ')) == NULL)
			break;
		*p++ = '\0';
	}
	if (strcmp(f[0], "PROXY") != 0 || i == 0)
		return (-1);
	if (strcmp(f[1], "UNKNOWN") == 0)
		return (0);		/* the connection's own addresses */
	if (i != 5)
		return (-1);
	if (strcmp(f[1], "TCP4") == 0)
		af = AF_INET;
	else if (strcmp(f[1], "TCP6") == 0)
		af = AF_INET6;
	else
		return (-1);
	if (pp_v1_port(f[4], &sport) == -1 || pp_v1_port(f[5], &dport) == -1 ||
	    pp_v1_addr(af, f[2], sport, src) == -1 ||
	    pp_v1_addr(af, f[3], dport, dst) == -1)
		return (-1);
	return (1);
}

static int
pp_v2_parse(const uint8_t *buf, size_t hlen, struct sockaddr_storage *src,
    struct sockaddr_storage *dst)
{
	const uint8_t		*p = buf + PP_V2_HDR;
	struct sockaddr_in	*s4, *d4;
	struct sockaddr_in6	*s6, *d6;

	if ((buf[12] & 0xf0) != 0x20)
		return (-1);
	switch (buf[12] & 0x0f) {
	case PP_V2_CMD_LOCAL:
		return (0);		/* the balancer's own health check */
	case PP_V2_CMD_PROXY:
		break;
	default:
		return (-1);
	}
	memset(src, 0, sizeof(*src));
	memset(dst, 0, sizeof(*dst));
	switch (buf[13]) {
	case PP_V2_TCP4:
		if (hlen < PP_V2_HDR + 12)
			return (-1);
		s4 = (struct sockaddr_in *)src;
		d4 = (struct sockaddr_in *)dst;
		s4->sin_family = d4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, p, 4);
		memcpy(&d4->sin_addr, p + 4, 4);
		memcpy(&s4->sin_port, p + 8, 2);
		memcpy(&d4->sin_port, p + 10, 2);
		return (1);
	case PP_V2_TCP6:
		if (hlen < PP_V2_HDR + 36)
			return (-1);
		s6 = (struct sockaddr_in6 *)src;
		d6 = (struct sockaddr_in6 *)dst;
		s6->sin6_family = d6->sin6_family = AF_INET6;
		memcpy(&s6->sin6_addr, p, 16);
		memcpy(&d6->sin6_addr, p + 16, 16);
		memcpy(&s6->sin6_port, p + 32, 2);
		memcpy(&d6->sin6_port, p + 34, 2);
		return (1);
	default:
		/* UNSPEC, UDP, unix: keep the connection's addresses */
		return (0);
	}
}

/*
 * Look at the first LEN bytes a trusted peer sent.  Returns 1 with
 * *hlen (and the addresses in src and dst, or their families left
 * AF_UNSPEC for LOCAL and UNKNOWN headers) when a whole header is
 * there; 0 when all LEN bytes are the start of a header that goes on;
 * -1 when they are not a PROXY header.
 */
int
pp_parse(const uint8_t *buf, size_t len, size_t *hlen,
    struct sockaddr_storage *src, struct sockaddr_storage *dst)
{
	char		 line[PP_V1_MAX + 1];
	const uint8_t	*crlf;
	size_t		 n, need;

	memset(src, 0, sizeof(*src));
	memset(dst, 0, sizeof(*dst));
	if (len == 0)
		return (0);
	if (buf[0] == pp_v2_sig[0] && (len < 2 || buf[1] == pp_v2_sig[1])) {
		n = len < sizeof(pp_v2_sig) ? len : sizeof(pp_v2_sig);
		if (memcmp(buf, pp_v2_sig, n) != 0)
			return (-1);
		if (len < PP_V2_HDR)
			return (0);
		need = PP_V2_HDR + ((size_t)buf[14] << 8 | buf[15]);
		if (need > PP_MAXHDR)
			return (-1);
		if (len < need)
			return (0);
		if (pp_v2_parse(buf, need, src, dst) == -1)
			return (-1);
		*hlen = need;
		return (1);
	}
	n = len < sizeof(pp_v1_sig) - 1 ? len : sizeof(pp_v1_sig) - 1;
	if (memcmp(buf, pp_v1_sig, n) != 0)
		return (-1);
	/* the CR of the CRLF comes at PP_V1_MAX - 2 at the latest */
	n = len < PP_V1_MAX - 1 ? len : PP_V1_MAX - 1;
	if ((crlf = memchr(buf, '\r', n)) == NULL)
		return (len >= PP_V1_MAX - 1 ? -1 : 0);
	if ((size_t)(crlf - buf) + 1 == len)
		return (0);		/* the LF is still to come */
	if (crlf[1] != '\n')
		return (-1);
	n = crlf - buf;
	if (memchr(buf, '\0', n) != NULL)
		return (-1);
	memcpy(line, buf, n);
	line[n] = '\0';
	if (pp_v1_parse(line, src, dst) == -1)
		return (-1);
	*hlen = n + 2;
	return (1);
}
