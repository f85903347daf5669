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

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "relayd.h"

struct table *
table_find(struct relayd *env, objid_t id)
{
	struct table	*tb;

	TAILQ_FOREACH(tb, env->sc_tables, entry)
		if (tb->conf.id == id)
			return (tb);
	return (NULL);
}

struct table *
table_findbyname(struct relayd *env, const char *name)
{
	struct table	*tb;

	TAILQ_FOREACH(tb, env->sc_tables, entry)
		if (strcmp(tb->conf.name, name) == 0)
			return (tb);
	return (NULL);
}

struct host *
host_find(struct relayd *env, objid_t id)
{
	struct host	*h;

	TAILQ_FOREACH(h, &env->sc_hosts, globalentry)
		if (h->conf.id == id)
			return (h);
	return (NULL);
}

struct host *
host_findbyname(struct relayd *env, const char *name)
{
	struct host	*h;

	TAILQ_FOREACH(h, &env->sc_hosts, globalentry)
		if (strcmp(h->conf.name, name) == 0)
			return (h);
	return (NULL);
}

struct relay *
relay_find(struct relayd *env, objid_t id)
{
	struct relay	*r;

	TAILQ_FOREACH(r, env->sc_relays, rl_entry)
		if (r->rl_conf.id == id)
			return (r);
	return (NULL);
}

struct relay *
relay_findbyname(struct relayd *env, const char *name)
{
	struct relay	*r;

	TAILQ_FOREACH(r, env->sc_relays, rl_entry)
		if (strcmp(r->rl_conf.name, name) == 0)
			return (r);
	return (NULL);
}

struct relay *
relay_findbyaddr(struct relayd *env, struct relay_config *rc)
{
	struct relay	*r;

	TAILQ_FOREACH(r, env->sc_relays, rl_entry)
		if (r->rl_conf.port == rc->port &&
		    r->rl_conf.ss.ss_family == rc->ss.ss_family &&
		    memcmp(&r->rl_conf.ss, &rc->ss, ss_len(&rc->ss)) == 0)
			return (r);
	return (NULL);
}

struct protocol *
proto_find(struct relayd *env, objid_t id)
{
	struct protocol	*p;

	if (id == env->sc_proto_default.id)
		return (&env->sc_proto_default);
	TAILQ_FOREACH(p, env->sc_protos, entry)
		if (p->id == id)
			return (p);
	return (NULL);
}

const char *
host_status(enum host_status status)
{
	switch (status) {
	case HOST_DOWN:
		return ("down");
	case HOST_UNKNOWN:
		return ("unknown");
	case HOST_UP:
		return ("up");
	}
	return ("invalid");
}

const char *
table_check(enum table_check check)
{
	switch (check) {
	case CHECK_NOCHECK:
		return ("none");
	case CHECK_ICMP:
		return ("icmp");
	case CHECK_TCP:
		return ("tcp");
	case CHECK_HTTP_CODE:
		return ("http code");
	case CHECK_HTTP_DIGEST:
		return ("http digest");
	case CHECK_SEND_EXPECT:
		return ("send expect");
	case CHECK_BINSEND_EXPECT:
		return ("binary send expect");
	case CHECK_SCRIPT:
		return ("script");
	case CHECK_HTTP2_CODE:
		return ("http2 code");
	}
	return ("invalid");
}

const char *
host_error(enum host_error he)
{
	/* the strings of relayctl(8), DIAGNOSTICS */
	static const char *const names[] = {
		[HCE_NONE] = "none",
		[HCE_ABORT] = "aborted",
		[HCE_INTERVAL_TIMEOUT] = "interval timeout",
		[HCE_ICMP_OK] = "icmp ok",
		[HCE_ICMP_READ_TIMEOUT] = "icmp read timeout",
		[HCE_ICMP_WRITE_TIMEOUT] = "icmp write timeout",
		[HCE_TCP_SOCKET_ERROR] = "tcp socket error",
		[HCE_TCP_SOCKET_LIMIT] = "tcp socket limit",
		[HCE_TCP_SOCKET_OPTION] = "tcp socket option",
		[HCE_TCP_CONNECT_FAIL] = "tcp connect failed",
		[HCE_TCP_CONNECT_TIMEOUT] = "tcp connect timeout",
		[HCE_TCP_CONNECT_OK] = "tcp connect ok",
		[HCE_TCP_WRITE_TIMEOUT] = "tcp write timeout",
		[HCE_TCP_WRITE_FAIL] = "tcp write failed",
		[HCE_TCP_READ_TIMEOUT] = "tcp read timeout",
		[HCE_TCP_READ_FAIL] = "tcp read failed",
		[HCE_SCRIPT_OK] = "script ok",
		[HCE_SCRIPT_FAIL] = "script failed",
		[HCE_TLS_CONNECT_ERROR] = "tls connect error",
		[HCE_TLS_CONNECT_FAIL] = "tls connect failed",
		[HCE_TLS_CONNECT_OK] = "tls connect ok",
		[HCE_TLS_CONNECT_TIMEOUT] = "tls connect timeout",
		[HCE_TLS_READ_TIMEOUT] = "tls read timeout",
		[HCE_TLS_WRITE_TIMEOUT] = "tls write timeout",
		[HCE_TLS_READ_ERROR] = "tls read error",
		[HCE_TLS_WRITE_ERROR] = "tls write error",
		[HCE_SEND_EXPECT_FAIL] = "send/expect failed",
		[HCE_SEND_EXPECT_OK] = "send/expect ok",
		[HCE_HTTP_CODE_ERROR] = "http code malformed",
		[HCE_HTTP_CODE_FAIL] = "http code mismatch",
		[HCE_HTTP_CODE_OK] = "http code ok",
		[HCE_HTTP_DIGEST_ERROR] = "http digest malformed",
		[HCE_HTTP_DIGEST_FAIL] = "http digest mismatch",
		[HCE_HTTP_DIGEST_OK] = "http digest ok",
	};

	if ((unsigned int)he < nitems(names) && names[he] != NULL)
		return (names[he]);
	return ("invalid");
}

const char *
relay_mode_name(enum forwardmode mode)
{
	switch (mode) {
	case RELAY_DSTMODE_LOADBALANCE:
		return ("loadbalance");
	case RELAY_DSTMODE_ROUNDROBIN:
		return ("roundrobin");
	case RELAY_DSTMODE_HASH:
		return ("hash");
	case RELAY_DSTMODE_SRCHASH:
		return ("source-hash");
	case RELAY_DSTMODE_LEASTSTATES:
		return ("least-states");
	case RELAY_DSTMODE_RANDOM:
		return ("random");
	}
	return ("invalid");
}

const char *
print_availability(unsigned long cnt, unsigned long up)
{
	static char	 buf[BUFSIZ];

	if (cnt == 0)
		return ("");
	(void)snprintf(buf, sizeof(buf), "%.2f%%", (double)up / cnt * 100);
	return (buf);
}

const char *
print_host(struct sockaddr_storage *ss, char *buf, size_t len)
{
	const void	*addr;

	if (ss->ss_family == AF_INET)
		addr = &((struct sockaddr_in *)ss)->sin_addr;
	else if (ss->ss_family == AF_INET6)
		addr = &((struct sockaddr_in6 *)ss)->sin6_addr;
	else if (ss->ss_family == AF_UNIX) {
		/* a socket's path; an unnamed peer as nginx names it */
		addr = ((struct sockaddr_un *)ss)->sun_path;
		(void)strlcpy(buf, *(const char *)addr != '\0' ? addr :
		    "unix:", len);
		return (buf);
	} else {
		(void)strlcpy(buf, "<unknown>", len);
		return (buf);
	}
	if (inet_ntop(ss->ss_family, addr, buf, len) == NULL) {
		buf[0] = '\0';
		return (NULL);
	}
	return (buf);
}

static struct event_base	*evtime_base;

/* The event loop whose timers getevtime() keeps time with. */
void
getevtime_init(struct event_base *base)
{
	evtime_base = base;
}

/*
 * Now on the clock of the event loop's timers, monotonic (a coarse one
 * on Linux), for every deadline and idle time: a step of the wall clock
 * (NTP at boot, a restored virtual machine, date(1)) neither ends
 * sessions early nor keeps them past their timeout, and a time taken
 * here is never later than the time libevent armed a timer with in a
 * later turn of the loop, so a timer that fires finds its full timeout
 * gone.  The wall clock is for what people read: log lines, Date
 * headers, when relayd started.
 */
void
getevtime(struct timeval *tv)
{
	if (evtime_base != NULL && event_gettime_monotonic(evtime_base,
	    tv) == 0)
		return;
	getmonotime(tv);
}

/*
 * A timer armed once for a deadline that moves on, kept in due (on
 * getevtime()'s clock): 1 when it fired before due, armed again for
 * the rest; 0 when due has come.  Moving a deadline then costs no
 * timer of the event loop's each time.
 */
int
evtimer_early(struct event *ev, const struct timeval *due)
{
	struct timeval	 now, tv;

	getevtime(&now);
	if (!timercmp(&now, due, <))
		return (0);
	timersub(due, &now, &tv);
	evtimer_add(ev, &tv);
	return (1);
}

/* Now on the monotonic clock, exactly: for durations. */
void
getmonotime(struct timeval *tv)
{
	struct timespec	 ts;

	/* it cannot fail; fatal() would log, and logging asks this clock */
	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		ts.tv_sec = ts.tv_nsec = 0;
	TIMESPEC_TO_TIMEVAL(tv, &ts);
}

/* The same in seconds, for the deadlines counted in seconds. */
time_t
getmonosec(void)
{
	struct timeval	 tv;

	getmonotime(&tv);
	return (tv.tv_sec);
}

/* Milliseconds from then to now. */
long long
timespec_ms(const struct timespec *now, const struct timespec *then)
{
	return ((long long)(now->tv_sec - then->tv_sec) * 1000 +
	    (now->tv_nsec - then->tv_nsec) / 1000000);
}

/* HH:MM:SS between two times, as relayctl shows age and idle. */
const char *
print_time(struct timeval *a, struct timeval *b, char *buf, size_t len)
{
	struct timeval	 tv;
	unsigned long	 h, sec, min;

	timerclear(&tv);
	timersub(a, b, &tv);
	if (tv.tv_sec < 0)
		tv.tv_sec = 0;
	sec = tv.tv_sec % 60;
	min = tv.tv_sec / 60 % 60;
	h = tv.tv_sec / 60 / 60;

	(void)snprintf(buf, len, "%.2lu:%.2lu:%.2lu", h, min, sec);
	return (buf);
}

int
ss_port(struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohs(((struct sockaddr_in *)ss)->sin_port));
	if (ss->ss_family == AF_INET6)
		return (ntohs(((struct sockaddr_in6 *)ss)->sin6_port));
	return (0);
}

void
ss_setport(struct sockaddr_storage *ss, in_port_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

socklen_t
ss_len(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (sizeof(struct sockaddr_in));
	if (ss->ss_family == AF_INET6)
		return (sizeof(struct sockaddr_in6));
	if (ss->ss_family == AF_UNIX)
		return (sizeof(struct sockaddr_un));
	return (sizeof(*ss));
}

/*
 * A listener on an IPv6 address takes IPv6 only, as on OpenBSD: "listen
 * on ::" beside "listen on 0.0.0.0" on the same port, and IPv4 clients
 * are not seen as ::ffff:a.b.c.d.
 */
int
sock_v6only(int s, int af)
{
	int	 on = 1;

	if (af != AF_INET6)
		return (0);
	return (setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on)));
}

/*
 * forward ... inet | inet6 prefix: an IPv6 destination goes to the IPv4
 * address of its last four bytes, an IPv4 one to the IPv6 prefix with
 * its last four bytes replaced by the IPv4 address; the port stays.  A
 * destination in af's family already, or af unspecified, stays as it is.
 * -1 when the address mapped to is none to connect to (any, broadcast,
 * multicast); ss is left unchanged then.
 */
int
ss_mapaf(struct sockaddr_storage *ss, const struct sockaddr_storage *af)
{
	struct sockaddr_storage		 out;
	struct sockaddr_in		*sin = (struct sockaddr_in *)&out;
	struct sockaddr_in6		*sin6 = (struct sockaddr_in6 *)&out;
	const struct sockaddr_in	*in4 = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6	*in6 = (const struct sockaddr_in6 *)ss;
	in_addr_t			 a;

	/* no mapping, or the family already: every connect passes here */
	if (af->ss_family == AF_UNSPEC || af->ss_family == ss->ss_family)
		return (0);
	memset(&out, 0, sizeof(out));
	if (af->ss_family == AF_INET && ss->ss_family == AF_INET6) {
		sin->sin_family = AF_INET;
		sin->sin_port = in6->sin6_port;
		memcpy(&sin->sin_addr, &in6->sin6_addr.s6_addr[12],
		    sizeof(sin->sin_addr));
		a = ntohl(sin->sin_addr.s_addr);
	} else if (af->ss_family == AF_INET6 && ss->ss_family == AF_INET) {
		memcpy(sin6, af, sizeof(*sin6));
		sin6->sin6_port = in4->sin_port;
		memcpy(&sin6->sin6_addr.s6_addr[12], &in4->sin_addr,
		    sizeof(in4->sin_addr));
		a = ntohl(in4->sin_addr.s_addr);
	} else
		return (0);
	if (a == INADDR_ANY || a == INADDR_BROADCAST || IN_MULTICAST(a))
		return (-1);
	*ss = out;
	return (0);
}

/* Is the address in the prefix?  An empty prefix holds everything. */
int
addr_match(struct rule_addr *ra, struct sockaddr_storage *ss)
{
	const uint8_t	*a, *b;
	size_t		 len;
	int		 bits, i;

	if (ra->addr.ss_family == 0)
		return (1);
	if (ra->addr.ss_family != ss->ss_family)
		return (0);
	if (ss->ss_family == AF_INET) {
		a = (const uint8_t *)
		    &((struct sockaddr_in *)&ra->addr)->sin_addr;
		b = (const uint8_t *)&((struct sockaddr_in *)ss)->sin_addr;
		len = 4;
	} else {
		a = (const uint8_t *)
		    &((struct sockaddr_in6 *)&ra->addr)->sin6_addr;
		b = (const uint8_t *)&((struct sockaddr_in6 *)ss)->sin6_addr;
		len = 16;
	}
	for (i = 0, bits = ra->prefixlen; bits > 0 && (size_t)i < len;
	    i++, bits -= 8) {
		if (bits >= 8) {
			if (a[i] != b[i])
				return (0);
		} else if ((a[i] ^ b[i]) & (0xff << (8 - bits)))
			return (0);
	}
	return (1);
}

void
socket_set_blockmode(int fd, int block)
{
	int	 flags;

	if ((flags = fcntl(fd, F_GETFL)) == -1)
		fatal("fcntl F_GETFL");
	if (block)
		flags &= ~O_NONBLOCK;
	else
		flags |= O_NONBLOCK;
	if (fcntl(fd, F_SETFL, flags) == -1)
		fatal("fcntl F_SETFL");
}

/*
 * accept(2), but only while reserve descriptors are left over for what
 * the new connection will need; *counter tracks connections in flight.
 */
int
accept_reserve(int sockfd, struct sockaddr *addr, socklen_t *addrlen,
    int reserve, volatile int *counter)
{
	int	 ret;

	if (getdtablecount() + reserve + *counter >= getdtablesize()) {
		errno = EMFILE;
		return (-1);
	}
	if ((ret = accept4(sockfd, addr, addrlen, SOCK_NONBLOCK |
	    SOCK_CLOEXEC)) > -1)
		(*counter)++;
	return (ret);
}

/*
 * relayctl host|table enable|disable as pfe passes it on to hce and the
 * relays: set or clear F_DISABLE on the object of that id, and return
 * it (NULL when this process does not know it).
 */
struct host *
host_enable_imsg(struct relayd *env, struct imsg *imsg)
{
	struct host	*h;
	objid_t		 id;

	IMSG_EXACT_SIZE_CHECK(imsg, &id);
	memcpy(&id, imsg->data, sizeof(id));
	if ((h = host_find(env, id)) == NULL)
		return (NULL);
	if (imsg->hdr.type == IMSG_CTL_HOST_DISABLE)
		h->flags |= F_DISABLE;
	else
		h->flags &= ~F_DISABLE;
	return (h);
}

struct table *
table_enable_imsg(struct relayd *env, struct imsg *imsg)
{
	struct table	*tb;
	objid_t		 id;

	IMSG_EXACT_SIZE_CHECK(imsg, &id);
	memcpy(&id, imsg->data, sizeof(id));
	if ((tb = table_find(env, id)) == NULL)
		return (NULL);
	if (imsg->hdr.type == IMSG_CTL_TABLE_DISABLE)
		tb->conf.flags |= F_DISABLE;
	else
		tb->conf.flags &= ~F_DISABLE;
	return (tb);
}

/* The protocol's socket options for socket s of address family af. */
void
relay_socket_opts(int s, int af, struct protocol *p, int listening)
{
	int	 val;

	if (p == NULL)
		return;
	/*
	 * HTTP: a head and its spliced body are two writes, and Nagle's
	 * wait between them costs a delayed ACK per request; nodelay
	 * unless the protocol says otherwise.
	 */
	if (af != AF_UNIX &&
	    ((p->tcpflags & (TCPFLAG_NODELAY | TCPFLAG_NNODELAY)) ||
	    p->type == RELAY_PROTO_HTTP)) {
		val = (p->tcpflags & TCPFLAG_NODELAY) ||
		    (p->tcpflags & TCPFLAG_NNODELAY) == 0 ? 1 : 0;
		if (setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &val,
		    sizeof(val)) == -1)
			log_warn("%s: TCP_NODELAY", __func__);
	}
	if (p->tcpflags & TCPFLAG_BUFSIZ) {
		val = p->tcpbufsiz;
		if (setsockopt(s, SOL_SOCKET, SO_RCVBUF, &val,
		    sizeof(val)) == -1 ||
		    setsockopt(s, SOL_SOCKET, SO_SNDBUF, &val,
		    sizeof(val)) == -1)
			log_warn("%s: socket buffer", __func__);
	}
	if (af == AF_UNIX)
		return;		/* none of IP's options */
	if (p->tcpflags & TCPFLAG_IPTTL) {
		val = p->tcpipttl;
		if (af == AF_INET6) {
			if (setsockopt(s, IPPROTO_IPV6, IPV6_UNICAST_HOPS,
			    &val, sizeof(val)) == -1)
				log_warn("%s: IPV6_UNICAST_HOPS", __func__);
		} else if (setsockopt(s, IPPROTO_IP, IP_TTL, &val,
		    sizeof(val)) == -1)
			log_warn("%s: IP_TTL", __func__);
	}
	if ((p->tcpflags & TCPFLAG_IPMINTTL) && listening &&
	    compat_minttl(s, af, p->tcpipminttl) == -1)
		log_warn("%s: minimum TTL", __func__);
}

/*
 * A demote group's name, as carp's interface groups and a file name
 * can have it: letters, digits, '-' and '_'.  -1 for another.
 */
int
demote_group_valid(const char *group)
{
	size_t	 i, len = strlen(group);

	if (len == 0 || len >= DEMOTE_GROUP_SIZE)
		return (-1);
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)group[i]) && group[i] != '-' &&
		    group[i] != '_')
			return (-1);
	return (0);
}

/* The first bits of the 16 bytes of in to out, the rest zero. */
void
addr_masked(const uint8_t *in, int bits, uint8_t *out)
{
	int	 i;

	for (i = 0; i < 16; i++, bits -= 8) {
		if (bits >= 8)
			out[i] = in[i];
		else if (bits > 0)
			out[i] = in[i] & (0xff << (8 - bits));
		else
			out[i] = 0;
	}
}
