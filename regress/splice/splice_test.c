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
 * The splice engine against the rules of SO_SPLICE, one test case per
 * rule and back end.  Sockets are real TCP sockets on 127.0.0.1.
 */

#include <sys/types.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atf-c.h>

#include "relayd.h"

struct result {
	int	 done;
	int	 reason;
	off_t	 count;
};

static int
tcp_listener(in_port_t *port)
{
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	int			 l;

	ATF_REQUIRE((l = socket(AF_INET, SOCK_STREAM, 0)) != -1);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ATF_REQUIRE(bind(l, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	ATF_REQUIRE(listen(l, 16) == 0);
	ATF_REQUIRE(getsockname(l, (struct sockaddr *)&sin, &len) == 0);
	*port = sin.sin_port;
	return (l);
}

/* A connected pair: *a the connecting end, *b the accepted one. */
static void
tcp_pair(int *a, int *b)
{
	struct sockaddr_in	 sin;
	int			 l;

	memset(&sin, 0, sizeof(sin));
	l = tcp_listener(&sin.sin_port);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ATF_REQUIRE((*a = socket(AF_INET, SOCK_STREAM, 0)) != -1);
	ATF_REQUIRE(connect(*a, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	ATF_REQUIRE((*b = accept(l, NULL, NULL)) != -1);
	close(l);
	ATF_REQUIRE(fcntl(*a, F_SETFL, O_NONBLOCK) == 0);
	ATF_REQUIRE(fcntl(*b, F_SETFL, O_NONBLOCK) == 0);
}

/*
 * The usual set-up: the client writes into cs, the engine splices src
 * into drain, and the server reads ds.
 */
static int	 cs, src, drain, ds;

static void
setup(int engine)
{
	event_init();
	ATF_REQUIRE(splice_engine_init(engine) == 0);
	ATF_REQUIRE(splice_engine_id() == engine);
	tcp_pair(&cs, &src);
	tcp_pair(&drain, &ds);
}

static void
done_cb(struct rsplice *sp, int reason, void *arg)
{
	struct result	*r = arg;

	r->done = 1;
	r->reason = reason;
	r->count = splice_count(sp);
}

/* Run the event loop until the splice ends or ms pass. */
static void
run(struct result *r, int ms)
{
	struct timeval	 t0, now;
	long		 el;

	gettimeofday(&t0, NULL);
	while (!r->done) {
		event_loop(EVLOOP_ONCE | EVLOOP_NONBLOCK);
		gettimeofday(&now, NULL);
		el = (now.tv_sec - t0.tv_sec) * 1000 +
		    (now.tv_usec - t0.tv_usec) / 1000;
		if (el >= ms)
			break;
		usleep(1000);
	}
}

static void
spin(int ms)
{
	struct result	 never;

	memset(&never, 0, sizeof(never));
	run(&never, ms);
}

static void
put(int s, const void *buf, size_t len)
{
	size_t	 off = 0;
	ssize_t	 n;

	while (off < len) {
		n = write(s, (const char *)buf + off, len - off);
		if (n == -1 && errno == EAGAIN) {
			spin(1);
			continue;
		}
		ATF_REQUIRE(n > 0);
		off += n;
	}
}

/* Read what there is within ms, at most len bytes. */
static size_t
get(int s, void *buf, size_t len, int ms)
{
	size_t	 off = 0;
	ssize_t	 n;
	int	 waited = 0;

	while (off < len && waited < ms) {
		n = read(s, (char *)buf + off, len - off);
		if (n > 0) {
			off += n;
			continue;
		}
		if (n == 0)
			break;
		spin(1);
		waited++;
	}
	return (off);
}

static struct timeval	 no_idle = { 0, 0 };

/*
 * Every case runs against every back end.  so_splice runs where the
 * kernel has SO_SPLICE; the cases that show a difference of the
 * user-space engines (userspace set) do not apply to it.
 */
#define ENGINE_TCS_(name, userspace)					\
static void t_##name(int);						\
ATF_TC_WITHOUT_HEAD(name##_copy);					\
ATF_TC_BODY(name##_copy, tc) { t_##name(SPLICE_ENGINE_COPY); }		\
ATF_TC_WITHOUT_HEAD(name##_pipe);					\
ATF_TC_BODY(name##_pipe, tc)						\
{									\
	if (splice_engine_init(SPLICE_ENGINE_PIPE) == -1)		\
		atf_tc_skip("no splice(2) on this system");		\
	t_##name(SPLICE_ENGINE_PIPE);					\
}									\
ATF_TC_WITHOUT_HEAD(name##_so_splice);					\
ATF_TC_BODY(name##_so_splice, tc)					\
{									\
	if (userspace)							\
		atf_tc_skip("a difference of the user-space engines; "	\
		    "the kernel's SO_SPLICE behaves as the rule says");	\
	if (splice_engine_init(SPLICE_ENGINE_SO_SPLICE) == -1)		\
		atf_tc_skip("no SO_SPLICE on this system (OpenBSD and "	\
		    "FreeBSD >= 14.2 have it)");			\
	t_##name(SPLICE_ENGINE_SO_SPLICE);				\
}
#define ENGINE_TCS(name)		ENGINE_TCS_(name, 0)
#define ENGINE_TCS_USERSPACE(name)	ENGINE_TCS_(name, 1)

#define ADD_ENGINE_TCS(tp, name) do {					\
	ATF_TP_ADD_TC(tp, name##_copy);					\
	ATF_TP_ADD_TC(tp, name##_pipe);					\
	ATF_TP_ADD_TC(tp, name##_so_splice);				\
} while (0)

/* Rule 9, 10: data moves in order, and data already waiting goes at once. */
ENGINE_TCS(moves_waiting_data)
static void
t_moves_waiting_data(int engine)
{
	struct rsplice	 sp;
	struct result	 r;
	char		 buf[16];

	setup(engine);
	put(cs, "early", 5);
	usleep(10000);
	splice_init(&sp);
	memset(&r, 0, sizeof(r));
	ATF_REQUIRE(splice_start(&sp, src, drain, 0, &no_idle, done_cb, &r,
	    0) == 0);
	ATF_CHECK_EQ(splice_count(&sp), 0);
	put(cs, " late", 5);
	ATF_REQUIRE_EQ(get(ds, buf, 10, 2000), 10);
	ATF_CHECK(memcmp(buf, "early late", 10) == 0);
	ATF_CHECK_EQ(splice_count(&sp), 10);
	splice_free(&sp);
}

/* Rule 12: exactly max bytes, EFBIG, the rest still in the source. */
ENGINE_TCS(max_exact)
static void
t_max_exact(int engine)
{
	struct rsplice	 sp;
	struct result	 r;
	char		*buf, *got;
	size_t		 total = 8 * 1024 * 1024, max = 1000003, n, rest;
	size_t		 i;

	setup(engine);
	ATF_REQUIRE((buf = malloc(total)) != NULL);
	ATF_REQUIRE((got = malloc(total)) != NULL);
	for (i = 0; i < total; i++)
		buf[i] = (char)(i * 31 + i / 251);
	splice_init(&sp);
	memset(&r, 0, sizeof(r));
	ATF_REQUIRE(splice_start(&sp, src, drain, max, &no_idle, done_cb, &r,
	    0) == 0);
	/* a writer child, so that the kernel buffers cannot stall us */
	if (fork() == 0) {
		close(ds);
		fcntl(cs, F_SETFL, 0);
		n = write(cs, buf, total);
		_exit(n == total ? 0 : 1);
	}
	n = 0;
	while (!r.done) {
		run(&r, 10);
		n += get(ds, got + n, total - n, 1);
	}
	n += get(ds, got + n, total - n, 200);
	ATF_CHECK_EQ(r.reason, EFBIG);
	ATF_CHECK_EQ((size_t)r.count, max);
	ATF_CHECK_EQ(n, max);
	ATF_CHECK(memcmp(got, buf, max) == 0);
	/* the rest is readable from the source, continuous */
	rest = get(src, got, total - max, 5000);
	ATF_CHECK_EQ(rest, total - max);
	ATF_CHECK(memcmp(got, buf + max, rest) == 0);
	/* rule 11: the count stays readable after the end */
	ATF_CHECK_EQ((size_t)splice_count(&sp), max);
	splice_free(&sp);
	wait(NULL);
	free(buf);
	free(got);
}

/* Rule 13, 9: a short splice, then again with the remaining max. */
ENGINE_TCS(count_reset_on_restart)
static void
t_count_reset_on_restart(int engine)
{
	struct rsplice	 sp;
	struct result	 r;
	char		 buf[64];

	setup(engine);
	splice_init(&sp);
	memset(&r, 0, sizeof(r));
	ATF_REQUIRE(splice_start(&sp, src, drain, 10, &no_idle, done_cb, &r,
	    0) == 0);
	put(cs, "0123456789abcdef", 16);
	run(&r, 2000);
	ATF_REQUIRE(r.done);
	ATF_CHECK_EQ(r.reason, EFBIG);
	ATF_CHECK_EQ(splice_count(&sp), 10);
	memset(&r, 0, sizeof(r));
	ATF_REQUIRE(splice_start(&sp, src, drain, 6, &no_idle, done_cb, &r,
	    0) == 0);
	ATF_CHECK_EQ(splice_count(&sp), 0);
	run(&r, 2000);
	ATF_CHECK_EQ(r.reason, EFBIG);
	ATF_CHECK_EQ(splice_count(&sp), 6);
	ATF_REQUIRE_EQ(get(ds, buf, 16, 2000), 16);
	ATF_CHECK(memcmp(buf, "0123456789abcdef", 16) == 0);
	splice_free(&sp);
}

/* Rule 14: EOF ends the splice without error and is not passed on. */
ENGINE_TCS(eof_not_forwarded)
static void
t_eof_not_forwarded(int engine)
{
	struct rsplice	 sp;
	struct result	 r;
	char		 buf[8];

	setup(engine);
	splice_init(&sp);
	memset(&r, 0, sizeof(r));
	ATF_REQUIRE(splice_start(&sp, src, drain, 0, &no_idle, done_cb, &r,
	    0) == 0);
	put(cs, "bye", 3);
	shutdown(cs, SHUT_WR);
	run(&r, 2000);
	ATF_REQUIRE(r.done);
	ATF_CHECK_EQ(r.reason, 0);
	ATF_CHECK_EQ(r.count, 3);
	ATF_REQUIRE_EQ(get(ds, buf, 3, 2000), 3);
	/* no end of file on the far side: the drain is still open */
	ATF_CHECK(read(ds, buf, 1) == -1 && errno == EAGAIN);
	/* a later read on the source says end of file */
	ATF_CHECK_EQ(read(src, buf, 1), 0);
	splice_free(&sp);
}

/* Rule 17: no byte for the idle time: ETIMEDOUT. */
ENGINE_TCS(idle_timeout)
static void
t_idle_timeout(int engine)
{
	struct rsplice	 sp;
	struct result	 r;
	struct timeval	 idle = { 0, 300000 }, t0, t1;
	long		 ms;

	setup(engine);
	splice_init(&sp);
	memset(&r, 0, sizeof(r));
	gettimeofday(&t0, NULL);
	ATF_REQUIRE(splice_start(&sp, src, drain, 0, &idle, done_cb, &r,
	    0) == 0);
	run(&r, 3000);
	gettimeofday(&t1, NULL);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_usec - t0.tv_usec) / 1000;
	ATF_REQUIRE(r.done);
	ATF_CHECK_EQ(r.reason, ETIMEDOUT);
	ATF_CHECK_MSG(ms >= 290 && ms < 1000, "ended after %ld ms", ms);
	splice_free(&sp);
}

/* Rule 17: every move re-arms the idle timer. */
ENGINE_TCS(idle_rearmed_by_traffic)
static void
t_idle_rearmed_by_traffic(int engine)
{
	struct rsplice	 sp;
	struct result	 r;
	struct timeval	 idle = { 0, 300000 };
	char		 buf[16];
	int		 i;

	setup(engine);
	splice_init(&sp);
	memset(&r, 0, sizeof(r));
	ATF_REQUIRE(splice_start(&sp, src, drain, 0, &idle, done_cb, &r,
	    0) == 0);
	for (i = 0; i < 10; i++) {
		put(cs, "x", 1);
		run(&r, 100);
		ATF_REQUIRE_MSG(!r.done, "timed out while busy, after %d", i);
	}
	run(&r, 2000);
	ATF_CHECK(r.done);
	ATF_CHECK_EQ(r.reason, ETIMEDOUT);
	ATF_CHECK_EQ(r.count, 10);
	ATF_CHECK_EQ(get(ds, buf, 10, 1000), 10);
	splice_free(&sp);
}

/* Rule 15: a drain that cannot send ends the splice with its error. */
ENGINE_TCS(drain_peer_gone)
static void
t_drain_peer_gone(int engine)
{
	struct rsplice	 sp;
	struct result	 r;
	struct linger	 l = { 1, 0 };
	char		 buf[65536];
	int		 i;

	setup(engine);
	splice_init(&sp);
	memset(&r, 0, sizeof(r));
	ATF_REQUIRE(splice_start(&sp, src, drain, 0, &no_idle, done_cb, &r,
	    0) == 0);
	/* the far end of the drain goes away with a reset */
	ATF_REQUIRE(setsockopt(ds, SOL_SOCKET, SO_LINGER, &l,
	    sizeof(l)) == 0);
	close(ds);
	memset(buf, 'p', sizeof(buf));
	for (i = 0; i < 10 && !r.done; i++) {
		(void)write(cs, buf, sizeof(buf));
		run(&r, 100);
	}
	ATF_REQUIRE(r.done);
	ATF_CHECK_MSG(r.reason == EPIPE || r.reason == ECONNRESET,
	    "reason %d", r.reason);
	splice_free(&sp);
}

/* Rule 10: userland writes to the drain keep their order around a splice. */
ENGINE_TCS(userland_writes_ordered)
static void
t_userland_writes_ordered(int engine)
{
	struct rsplice	 sp;
	struct result	 r;
	char		 buf[16];

	setup(engine);
	put(drain, "A", 1);
	splice_init(&sp);
	memset(&r, 0, sizeof(r));
	ATF_REQUIRE(splice_start(&sp, src, drain, 1, &no_idle, done_cb, &r,
	    0) == 0);
	put(cs, "B", 1);
	run(&r, 2000);
	ATF_REQUIRE(r.done);
	put(drain, "C", 1);
	ATF_REQUIRE_EQ(get(ds, buf, 3, 2000), 3);
	ATF_CHECK(memcmp(buf, "ABC", 3) == 0);
	splice_free(&sp);
}

/* Rule 8: busy sources and drains; both directions; a socket to itself. */
ENGINE_TCS(busy_and_both_ways)
static void
t_busy_and_both_ways(int engine)
{
	struct rsplice	 a, b, c, e;
	struct result	 r;
	char		 buf[8];

	setup(engine);
	splice_init(&a);
	splice_init(&b);
	splice_init(&c);
	splice_init(&e);
	memset(&r, 0, sizeof(r));
	ATF_REQUIRE(splice_start(&a, src, drain, 0, &no_idle, done_cb, &r,
	    0) == 0);
	ATF_CHECK(splice_start(&b, src, ds, 0, &no_idle, done_cb, &r,
	    0) == -1 && errno == EBUSY);
	ATF_CHECK(splice_start(&b, cs, drain, 0, &no_idle, done_cb, &r,
	    0) == -1 && errno == EBUSY);
	/* the other direction of the same pair is fine */
	ATF_CHECK(splice_start(&c, drain, src, 0, &no_idle, done_cb, &r,
	    0) == 0);
	/* and a socket spliced to itself echoes */
	ATF_CHECK(splice_start(&e, ds, ds, 0, &no_idle, done_cb, &r,
	    0) == 0);
	put(drain, "echo", 4);
	ATF_CHECK_EQ(get(cs, buf, 4, 2000), 4);
	ATF_CHECK(memcmp(buf, "echo", 4) == 0);
	splice_stop(&a);
	splice_stop(&c);
	splice_free(&e);
	splice_free(&a);
	splice_free(&c);
}

/* Rules 2, 3, 5, 6, 7: bad arguments, in SO_SPLICE's order. */
ENGINE_TCS(bad_arguments)
static void
t_bad_arguments(int engine)
{
	struct rsplice	 sp;
	struct result	 r;
	struct timeval	 bad = { 0, 1000000 }, neg = { -1, 0 };
	int		 u[2], p[2], l, fresh, udp;
	in_port_t	 port;

	setup(engine);
	splice_init(&sp);
	memset(&r, 0, sizeof(r));
	ATF_REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, u) == 0);
	ATF_CHECK(splice_start(&sp, u[0], drain, 0, &no_idle, done_cb, &r,
	    0) == -1 && errno == EPROTONOSUPPORT);
	ATF_CHECK(splice_start(&sp, src, drain, -1, &no_idle, done_cb, &r,
	    0) == -1 && errno == EINVAL);
	ATF_CHECK(splice_start(&sp, src, drain, 0, &bad, done_cb, &r,
	    0) == -1 && errno == EINVAL);
	ATF_CHECK(splice_start(&sp, src, drain, 0, &neg, done_cb, &r,
	    0) == -1 && errno == EINVAL);
	ATF_CHECK(splice_start(&sp, src, 1000, 0, &no_idle, done_cb, &r,
	    0) == -1 && errno == EBADF);
	ATF_REQUIRE(pipe(p) == 0);
	ATF_CHECK(splice_start(&sp, src, p[1], 0, &no_idle, done_cb, &r,
	    0) == -1 && errno == ENOTSOCK);
	ATF_REQUIRE((udp = socket(AF_INET, SOCK_DGRAM, 0)) != -1);
	ATF_CHECK(splice_start(&sp, src, udp, 0, &no_idle, done_cb, &r,
	    0) == -1 && errno == EPROTONOSUPPORT);
	l = tcp_listener(&port);
	ATF_CHECK(splice_start(&sp, l, drain, 0, &no_idle, done_cb, &r,
	    0) == -1 && errno == EOPNOTSUPP);
	ATF_CHECK(splice_start(&sp, src, l, 0, &no_idle, done_cb, &r,
	    0) == -1 && errno == EOPNOTSUPP);
	ATF_REQUIRE((fresh = socket(AF_INET, SOCK_STREAM, 0)) != -1);
	ATF_CHECK(splice_start(&sp, src, fresh, 0, &no_idle, done_cb, &r,
	    0) == -1 && errno == ENOTCONN);
	ATF_CHECK(splice_start(&sp, fresh, drain, 0, &no_idle, done_cb, &r,
	    0) == -1 && errno == ENOTCONN);
	/* none of that left the sockets busy */
	ATF_CHECK(splice_start(&sp, src, drain, 0, &no_idle, done_cb, &r,
	    0) == 0);
	splice_free(&sp);
}

/* Rule 24: a drain whose non-blocking connect is still in progress. */
ENGINE_TCS(connecting_drain)
static void
t_connecting_drain(int engine)
{
	struct rsplice		 sp;
	struct result		 r;
	struct sockaddr_in	 sin;
	char			 buf[8];
	int			 l, d, peer;

	setup(engine);
	memset(&sin, 0, sizeof(sin));
	l = tcp_listener(&sin.sin_port);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ATF_REQUIRE((d = socket(AF_INET, SOCK_STREAM, 0)) != -1);
	ATF_REQUIRE(fcntl(d, F_SETFL, O_NONBLOCK) == 0);
	ATF_REQUIRE(connect(d, (struct sockaddr *)&sin, sizeof(sin)) == 0 ||
	    errno == EINPROGRESS);
	splice_init(&sp);
	memset(&r, 0, sizeof(r));
	ATF_REQUIRE(splice_start(&sp, src, d, 0, &no_idle, done_cb, &r,
	    0) == 0);
	put(cs, "conn", 4);
	ATF_REQUIRE((peer = accept(l, NULL, NULL)) != -1);
	ATF_REQUIRE(fcntl(peer, F_SETFL, O_NONBLOCK) == 0);
	ATF_CHECK_EQ(get(peer, buf, 4, 2000), 4);
	ATF_CHECK(memcmp(buf, "conn", 4) == 0);
	splice_free(&sp);
}

/* Rule 22: unsplicing sets no error and leaves new data in the source. */
ENGINE_TCS(unsplice_leaves_data)
static void
t_unsplice_leaves_data(int engine)
{
	struct rsplice	 sp;
	struct result	 r;
	char		 buf[8];

	setup(engine);
	splice_init(&sp);
	memset(&r, 0, sizeof(r));
	ATF_REQUIRE(splice_start(&sp, src, drain, 0, &no_idle, done_cb, &r,
	    0) == 0);
	splice_stop(&sp);
	put(cs, "kept", 4);
	spin(50);
	ATF_CHECK(!r.done);
	ATF_CHECK_EQ(get(src, buf, 4, 2000), 4);
	ATF_CHECK(memcmp(buf, "kept", 4) == 0);
	splice_free(&sp);
}

/*
 * Rule 19, a documented difference: a user-space engine cannot see a
 * chain of splices that feeds itself, so there is no ELOOP; the bytes go
 * round until something else ends the splices.
 */
ENGINE_TCS_USERSPACE(loop_not_detected)
static void
t_loop_not_detected(int engine)
{
	struct rsplice	 a, b;
	struct result	 ra, rb;
	struct timespec	 t0, t;
	int		 waited = 0;

	setup(engine);
	/* src -> drain, and what arrives at ds goes back into cs */
	splice_init(&a);
	splice_init(&b);
	memset(&ra, 0, sizeof(ra));
	memset(&rb, 0, sizeof(rb));
	ATF_REQUIRE(splice_start(&a, src, drain, 0, &no_idle, done_cb, &ra,
	    0) == 0);
	ATF_REQUIRE(splice_start(&b, ds, cs, 0, &no_idle, done_cb, &rb,
	    0) == 0);
	put(cs, "o", 1);
	/*
	 * Run the loop until the byte has gone round more than 128 times
	 * (a kernel engine would have said ELOOP by then), at most 10 s:
	 * a loaded machine makes each hop slower, not fewer.
	 */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (splice_count(&a) <= 128 && waited < 10000) {
		spin(10);
		clock_gettime(CLOCK_MONOTONIC, &t);
		waited = (t.tv_sec - t0.tv_sec) * 1000 +
		    (t.tv_nsec - t0.tv_nsec) / 1000000;
	}
	ATF_CHECK(!ra.done && !rb.done);
	ATF_CHECK_MSG(splice_count(&a) > 128, "%lld hops",
	    (long long)splice_count(&a));
	splice_free(&a);
	splice_free(&b);
}

/* Rule 10 at size: 1 GiB through the engine, every byte checked. */
ENGINE_TCS(integrity_1gib)
static void
t_integrity_1gib(int engine)
{
	struct rsplice	 sp;
	struct result	 r;
	uint64_t	 total = 1ULL << 30;
	pid_t		 wpid, rpid;
	int		 status;

	setup(engine);
	if ((wpid = fork()) == 0) {
		static unsigned char	 b[65536];
		uint64_t		 off;
		size_t			 i;

		close(ds);
		close(src);
		close(drain);
		fcntl(cs, F_SETFL, 0);
		for (off = 0; off < total; off += sizeof(b)) {
			for (i = 0; i < sizeof(b); i += 8)
				*(uint64_t *)(b + i) = (off + i) * 0x9e3779b1;
			if (write(cs, b, sizeof(b)) != sizeof(b))
				_exit(1);
		}
		_exit(0);
	}
	if ((rpid = fork()) == 0) {
		static unsigned char	 b[65536];
		uint64_t		 off = 0, v;
		ssize_t			 n;
		size_t			 i;

		/* only the writer may hold the source's peer open */
		close(cs);
		close(src);
		close(drain);
		fcntl(ds, F_SETFL, 0);
		while (off < total) {
			/* whole words only, to check them in place */
			if ((n = read(ds, b, sizeof(b))) <= 0)
				_exit(2);
			while (n % 8) {
				ssize_t m = read(ds, b + n, 8 - n % 8);
				if (m <= 0)
					_exit(2);
				n += m;
			}
			for (i = 0; i < (size_t)n; i += 8) {
				memcpy(&v, b + i, 8);
				if (v != (uint64_t)((off + i) * 0x9e3779b1))
					_exit(3);
			}
			off += n;
		}
		_exit(read(ds, b, 1) == 0 ? 0 : 4);
	}
	close(cs);
	splice_init(&sp);
	memset(&r, 0, sizeof(r));
	ATF_REQUIRE(splice_start(&sp, src, drain, 0, &no_idle, done_cb, &r,
	    0) == 0);
	while (!r.done)
		event_loop(EVLOOP_ONCE);
	ATF_CHECK_EQ(r.reason, 0);
	ATF_CHECK_EQ((uint64_t)r.count, total);
	shutdown(drain, SHUT_WR);
	close(ds);
	ATF_REQUIRE(waitpid(wpid, &status, 0) == wpid);
	ATF_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ATF_REQUIRE(waitpid(rpid, &status, 0) == rpid);
	ATF_CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "reader exit %d", WEXITSTATUS(status));
	splice_free(&sp);
}

/*
 * Bytes are counted by what moved them: through a pipe they are spliced;
 * when the pipe back end cannot have a pipe (no descriptor left) the
 * copy back end takes the splice over, and its bytes are copies.
 */
static void
count_kinds(int nofds, uint64_t *spliced, uint64_t *copied)
{
	struct rsplice	 sp;
	struct result	 r;
	struct rlimit	 rl;
	char		*buf, *got;
	size_t		 len = 200000, i;
	int		 top;

	if (splice_engine_init(SPLICE_ENGINE_PIPE) == -1)
		atf_tc_skip("no splice(2) on this system");
	setup(SPLICE_ENGINE_PIPE);
	ATF_REQUIRE((buf = malloc(len)) != NULL);
	ATF_REQUIRE((got = malloc(len)) != NULL);
	for (i = 0; i < len; i++)
		buf[i] = (char)(i * 7 + i / 253);
	if (nofds) {
		top = cs > src ? cs : src;
		top = top > drain ? top : drain;
		top = top > ds ? top : ds;
		ATF_REQUIRE(getrlimit(RLIMIT_NOFILE, &rl) == 0);
		rl.rlim_cur = top + 1;
		ATF_REQUIRE(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	}
	splice_init(&sp);
	memset(&r, 0, sizeof(r));
	ATF_REQUIRE(splice_start(&sp, src, drain, 0, &no_idle, done_cb, &r,
	    0) == 0);
	put(cs, buf, len);
	ATF_REQUIRE_EQ(get(ds, got, len, 5000), len);
	ATF_CHECK(memcmp(buf, got, len) == 0);
	*spliced = splice_bytes(&sp, SPLICE_SPLICED);
	*copied = splice_bytes(&sp, SPLICE_COPIED);
	ATF_CHECK_EQ(splice_total(&sp), len);
	splice_free(&sp);
	free(buf);
	free(got);
}

ATF_TC_WITHOUT_HEAD(pipe_counts_spliced);
ATF_TC_BODY(pipe_counts_spliced, tc)
{
	uint64_t	 spliced, copied;

	count_kinds(0, &spliced, &copied);
	ATF_CHECK_EQ(spliced, 200000);
	ATF_CHECK_EQ(copied, 0);
}

ATF_TC_WITHOUT_HEAD(pipe_fallback_counts_copied);
ATF_TC_BODY(pipe_fallback_counts_copied, tc)
{
	uint64_t	 spliced, copied;

	count_kinds(1, &spliced, &copied);
	ATF_CHECK_EQ(spliced, 0);
	ATF_CHECK_EQ(copied, 200000);
}

ATF_TC_WITHOUT_HEAD(engine_choice);
ATF_TC_BODY(engine_choice, tc)
{
	ATF_REQUIRE(splice_engine_init(SPLICE_ENGINE_COPY) == 0);
	ATF_CHECK_STREQ(splice_engine_current(), "copy");
	ATF_REQUIRE(splice_engine_init(SPLICE_ENGINE_AUTO) == 0);
#ifdef __linux__
	ATF_CHECK_STREQ(splice_engine_current(), "pipe");
#endif
	/* an engine that is not there is refused, copy stands in */
	ATF_CHECK_EQ(splice_engine_init(SPLICE_ENGINE_SO_SPLICE),
#ifdef SO_SPLICE
	    0);
#else
	    -1);
	ATF_CHECK_STREQ(splice_engine_current(), "copy");
#endif
}

/*
 * The relay sets a protocol's socket options on its listener only: an
 * accepted socket must come with them (Linux and the BSDs copy them).
 */
ATF_TC_WITHOUT_HEAD(accepted_inherits_options);
ATF_TC_BODY(accepted_inherits_options, tc)
{
	struct protocol		 p;
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	int			 l, a, b, val;

	memset(&p, 0, sizeof(p));
	p.tcpflags = TCPFLAG_NODELAY | TCPFLAG_BUFSIZ | TCPFLAG_IPTTL;
	p.tcpbufsiz = 40000;
	p.tcpipttl = 33;
	ATF_REQUIRE((l = socket(AF_INET, SOCK_STREAM, 0)) != -1);
	relay_socket_opts(l, AF_INET, &p, 1);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ATF_REQUIRE(bind(l, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	ATF_REQUIRE(listen(l, 1) == 0);
	ATF_REQUIRE(getsockname(l, (struct sockaddr *)&sin, &len) == 0);
	ATF_REQUIRE((a = socket(AF_INET, SOCK_STREAM, 0)) != -1);
	ATF_REQUIRE(connect(a, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	ATF_REQUIRE((b = accept(l, NULL, NULL)) != -1);

	len = sizeof(val);
	ATF_REQUIRE(getsockopt(b, IPPROTO_TCP, TCP_NODELAY, &val, &len) == 0);
	ATF_CHECK(val != 0);
	ATF_REQUIRE(getsockopt(b, IPPROTO_IP, IP_TTL, &val, &len) == 0);
	ATF_CHECK_EQ(val, 33);
	/* Linux reports twice what was set, the BSDs what was set */
	ATF_REQUIRE(getsockopt(b, SOL_SOCKET, SO_RCVBUF, &val, &len) == 0);
	ATF_CHECK(val == 40000 || val == 80000);
	ATF_REQUIRE(getsockopt(b, SOL_SOCKET, SO_SNDBUF, &val, &len) == 0);
	ATF_CHECK(val == 40000 || val == 80000);
	close(a);
	close(b);
	close(l);
}

ATF_TP_ADD_TCS(tp)
{
	signal(SIGPIPE, SIG_IGN);
	ATF_TP_ADD_TC(tp, engine_choice);
	ATF_TP_ADD_TC(tp, accepted_inherits_options);
	ATF_TP_ADD_TC(tp, pipe_counts_spliced);
	ATF_TP_ADD_TC(tp, pipe_fallback_counts_copied);
	ADD_ENGINE_TCS(tp, moves_waiting_data);
	ADD_ENGINE_TCS(tp, max_exact);
	ADD_ENGINE_TCS(tp, count_reset_on_restart);
	ADD_ENGINE_TCS(tp, eof_not_forwarded);
	ADD_ENGINE_TCS(tp, idle_timeout);
	ADD_ENGINE_TCS(tp, idle_rearmed_by_traffic);
	ADD_ENGINE_TCS(tp, drain_peer_gone);
	ADD_ENGINE_TCS(tp, userland_writes_ordered);
	ADD_ENGINE_TCS(tp, busy_and_both_ways);
	ADD_ENGINE_TCS(tp, bad_arguments);
	ADD_ENGINE_TCS(tp, connecting_drain);
	ADD_ENGINE_TCS(tp, unsplice_leaves_data);
	ADD_ENGINE_TCS(tp, loop_not_detected);
	ADD_ENGINE_TCS(tp, integrity_1gib);
	return (atf_no_error());
}
