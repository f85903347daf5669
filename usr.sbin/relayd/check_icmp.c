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
 * check icmp: one echo request to every host of the icmp tables due,
 * all at once, on two raw sockets (ICMP and ICMPv6) opened while hce is
 * still root; replies are matched by identifier, a cookie of this round
 * and the host id in the payload.  Whatever has not answered when the
 * timeout fires is down.
 *
 * Without CAP_NET_RAW (a container that drops it) a raw socket is
 * refused: then a datagram ICMP socket, Linux's "ping socket", where
 * net.ipv4.ping_group_range lets root's group have one.  Its kernel
 * sets the identifier and hands over only the replies to it, without
 * the IPv4 header.  Where the system has no such socket the call fails
 * and nothing changes.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <netinet/icmp6.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "relayd.h"

struct icmp_payload {
	uint32_t	 cookie;
	objid_t		 host;
};

static int		 icmp_s[2] = { -1, -1 };	/* inet, inet6 */
static int		 icmp_errno[2];
static int		 icmp_dgram[2];	/* a ping socket, not raw */
static struct event	 icmp_ev[2];
static struct event	 icmp_tev;
static int		 icmp_evset;
static int		 icmp_warned;
static uint16_t		 icmp_ident;
static uint16_t		 icmp_seqno;
static uint32_t		 icmp_cookie;
static struct relayd	*icmp_env;

static void	 icmp_read(int, short, void *);
static void	 icmp_timeout(int, short, void *);

void
check_icmp_init(void)
{
	int	 i;

	icmp_s[0] = socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    IPPROTO_ICMP);
	icmp_errno[0] = errno;
	icmp_s[1] = socket(AF_INET6, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    IPPROTO_ICMPV6);
	icmp_errno[1] = errno;
	for (i = 0; i < 2; i++) {
		if (icmp_s[i] != -1) {
			icmp_errno[i] = 0;
			continue;
		}
		if (icmp_errno[i] != EPERM && icmp_errno[i] != EACCES)
			continue;
		icmp_s[i] = socket(i ? AF_INET6 : AF_INET, SOCK_DGRAM |
		    SOCK_NONBLOCK | SOCK_CLOEXEC, i ? IPPROTO_ICMPV6 :
		    IPPROTO_ICMP);
		icmp_dgram[i] = icmp_s[i] != -1;
	}
	icmp_ident = arc4random() & 0xffff;
}

static int
icmp_family(int af)
{
	return (af == AF_INET6 ? 1 : 0);
}

static uint16_t
icmp_cksum(const void *data, size_t len)
{
	const uint8_t	*p = data;
	uint32_t	 sum = 0;

	while (len > 1) {
		sum += (p[0] << 8) | p[1];
		p += 2;
		len -= 2;
	}
	if (len)
		sum += p[0] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (htons(~sum & 0xffff));
}

static int
icmp_send(struct host *h)
{
	struct sockaddr_storage	 ss = h->conf.ss;
	struct icmp_payload	 pl;
	union {
		struct icmp		 i4;
		struct icmp6_hdr	 i6;
		unsigned char		 b[64];
	}			 pkt;
	struct icmp6_hdr	*i6 = &pkt.i6;
	struct icmp		*i4 = &pkt.i4;
	size_t			 len;
	int			 f = icmp_family(ss.ss_family);

	pl.cookie = icmp_cookie;
	pl.host = h->conf.id;
	memset(&pkt, 0, sizeof(pkt));
	ss_setport(&ss, 0);
	if (f == 0) {
		/* the first 8 bytes of struct icmp are the header */
		i4->icmp_type = ICMP_ECHO;
		i4->icmp_id = htons(icmp_ident);
		i4->icmp_seq = htons(icmp_seqno);
		memcpy(pkt.b + ICMP_MINLEN, &pl, sizeof(pl));
		len = ICMP_MINLEN + sizeof(pl);
		i4->icmp_cksum = icmp_cksum(pkt.b, len);
	} else {
		/* the kernel computes the ICMPv6 checksum */
		i6->icmp6_type = ICMP6_ECHO_REQUEST;
		i6->icmp6_id = htons(icmp_ident);
		i6->icmp6_seq = htons(icmp_seqno);
		memcpy(pkt.b + sizeof(*i6), &pl, sizeof(pl));
		len = sizeof(*i6) + sizeof(pl);
	}
	if (sendto(icmp_s[f], pkt.b, len, 0, (struct sockaddr *)&ss,
	    ss_len(&ss)) != (ssize_t)len) {
		log_debug("%s: host %s: %s", __func__, h->conf.name,
		    strerror(errno));
		return (-1);
	}
	return (0);
}

/* Send to every icmp host of this round that is waiting. */
void
check_icmp(struct relayd *env, struct timeval *deflt)
{
	struct table	*tb;
	struct host	*h;
	struct timeval	 tv = *deflt;
	int		 i, f, pending = 0;

	icmp_env = env;
	if (!icmp_evset) {
		for (i = 0; i < 2; i++) {
			if (icmp_s[i] == -1)
				continue;
			event_set(&icmp_ev[i], icmp_s[i], EV_READ | EV_PERSIST,
			    icmp_read, NULL);
			event_add(&icmp_ev[i], NULL);
		}
		evtimer_set(&icmp_tev, icmp_timeout, NULL);
		icmp_evset = 1;
	}
	icmp_cookie = arc4random();
	icmp_seqno++;

	TAILQ_FOREACH(tb, env->sc_tables, entry) {
		if (tb->conf.check != CHECK_ICMP)
			continue;
		TAILQ_FOREACH(h, &tb->hosts, entry) {
			if ((h->flags & F_CHECK_SENT) == 0 ||
			    (h->flags & F_CHECK_DONE))
				continue;
			f = icmp_family(h->conf.ss.ss_family);
			if (icmp_s[f] == -1) {
				/* no socket: nothing to say, unknown */
				if (!icmp_warned) {
					log_warnx("check icmp: no raw %s "
					    "socket (%s) and no ping socket: "
					    "icmp hosts stay unknown",
					    f ? "ICMPv6" : "ICMP",
					    strerror(icmp_errno[f]));
					icmp_warned = 1;
				}
				h->flags &= ~F_CHECK_SENT;
				continue;
			}
			getmonotime(&h->check_start);
			if (icmp_send(h) == -1) {
				hce_notify_done(h, HCE_ICMP_WRITE_TIMEOUT);
				continue;
			}
			if (timercmp(&tb->conf.timeout, &tv, >))
				tv = tb->conf.timeout;
			pending++;
		}
	}
	if (pending)
		evtimer_add(&icmp_tev, &tv);
}

void
check_icmp_abort(void)
{
	if (icmp_evset)
		evtimer_del(&icmp_tev);
}

static void
icmp_read(int fd, short event, void *arg)
{
	struct sockaddr_storage	 ss;
	struct icmp_payload	 pl;
	unsigned char		 buf[512], *p;
	struct icmp6_hdr	*i6;
	struct icmp		*i4;
	struct host		*h;
	struct table		*tb;
	socklen_t		 slen;
	ssize_t			 n;
	size_t			 hlen;

	(void)event;
	(void)arg;
	for (;;) {
		slen = sizeof(ss);
		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&ss,
		    &slen);
		if (n == -1)
			return;
		if (ss.ss_family == AF_INET) {
			/* a raw socket hands us the IP header too */
			hlen = icmp_dgram[0] && (buf[0] >> 4) != IPVERSION ?
			    0 : (size_t)(buf[0] & 0x0f) * 4;
			if ((size_t)n < hlen + ICMP_MINLEN + sizeof(pl))
				continue;
			i4 = (struct icmp *)(buf + hlen);
			if (i4->icmp_type != ICMP_ECHOREPLY ||
			    (!icmp_dgram[0] && ntohs(i4->icmp_id) !=
			    icmp_ident))
				continue;
			p = buf + hlen + ICMP_MINLEN;
		} else {
			if ((size_t)n < sizeof(*i6) + sizeof(pl))
				continue;
			i6 = (struct icmp6_hdr *)buf;
			if (i6->icmp6_type != ICMP6_ECHO_REPLY ||
			    (!icmp_dgram[1] && ntohs(i6->icmp6_id) !=
			    icmp_ident))
				continue;
			p = buf + sizeof(*i6);
		}
		memcpy(&pl, p, sizeof(pl));
		if (pl.cookie != icmp_cookie || icmp_env == NULL ||
		    (h = host_find(icmp_env, pl.host)) == NULL ||
		    (h->flags & F_CHECK_SENT) == 0 ||
		    (h->flags & F_CHECK_DONE) ||
		    (tb = hce_table(h)) == NULL ||
		    tb->conf.check != CHECK_ICMP)
			continue;
		hce_notify_done(h, HCE_ICMP_OK);
	}
}

static void
icmp_timeout(int fd, short event, void *arg)
{
	struct table	*tb;
	struct host	*h;

	(void)fd;
	(void)event;
	(void)arg;
	TAILQ_FOREACH(tb, icmp_env->sc_tables, entry) {
		if (tb->conf.check != CHECK_ICMP)
			continue;
		TAILQ_FOREACH(h, &tb->hosts, entry)
			if ((h->flags & F_CHECK_SENT) &&
			    (h->flags & F_CHECK_DONE) == 0)
				hce_notify_done(h, HCE_ICMP_READ_TIMEOUT);
	}
}
