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
 * rtool: the peers of the end-to-end tests, on loopback only.
 *
 *   rtool freeport                      print a free TCP port of 127.0.0.1
 *   rtool echo PORTFILE [SECONDS]       echo server; port written to file
 *   rtool reset PORTFILE [SECONDS]      read some bytes, then reset
 *   rtool client PORT CONNS BYTES [SECONDS [RATE]]
 *                                       CONNS streams of BYTES each, sent,
 *                                       half-closed and read back checked;
 *                                       with RATE, each stream sends RATE
 *                                       bytes a second and the longest
 *                                       wait for bytes back is printed;
 *                                       SIGUSR1 ends the pacing: the rest
 *                                       goes at once
 *   rtool idle PORT SECONDS             connect, send one byte, wait for the
 *                                       close; print how long it took
 *   rtool sink PORTFILE [SECONDS]       read everything, answer nothing
 *   rtool late PORTFILE MS [SECONDS]    read to the end of file, wait MS
 *                                       milliseconds, answer "late\n" and
 *                                       close
 *   rtool trickle PORT SECONDS          one byte every 100 ms for SECONDS,
 *                                       then half-close; fails if the
 *                                       connection ends early
 *   rtool ident ADDR PORT NAME [SECONDS]
 *                                       on ADDR:PORT, say NAME and close
 *   rtool get PORT                      print what the server says
 *   rtool probe PORT                    connect and close: is it listening?
 *   rtool hold PORT CONNS SECONDS       keep CONNS connections open
 *   rtool greet PORTFILE BYTES [SECONDS]
 *                                       send BYTES, half-close, then read
 *                                       and check BYTES; the count read
 *                                       goes to PORTFILE.got
 *   rtool converse PORT BYTES           read and check BYTES to the end of
 *                                       file, then send BYTES, half-close
 *   rtool stall PORTFILE [SECONDS]      listen with the smallest backlog and
 *                                       never accept: once the queue is
 *                                       full, handshakes are not answered
 *   rtool http PORT [SECONDS]           a tiny HTTP server on 127.0.0.1:PORT
 *                                       that says hello (make run's backend)
 *   rtool answer PORTFILE FILE [SECONDS]
 *                                       on every connection: send what FILE
 *                                       holds now (read again each time),
 *                                       half-close, read to the end
 *   rtool ctlsend SOCKET TYPE LEN [FLAGS]
 *                                       send one raw imsg header to a unix
 *                                       socket, print "closed" once the
 *                                       peer hangs up
 *
 * With RTOOL_UNIX=PATH in the environment, servers listen on the unix
 * socket PATH (their port is 0) and clients connect to it.
 *
 * Servers count the connections they accept, a byte each, in PORTFILE.conns.
 * Every mode ends by itself: servers after SECONDS (default 60), clients
 * when done or after SECONDS.
 */

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUFSZ	(128 * 1024)

static unsigned char
pattern(uint64_t off)
{
	uint64_t	 x = off / 8 + 0x9e3779b97f4a7c15ULL;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 29;
	return ((x >> ((off % 8) * 8)) & 0xff);
}

static void
fill(unsigned char *buf, uint64_t off, size_t len)
{
	size_t	 i;

	for (i = 0; i < len; i++)
		buf[i] = pattern(off + i);
}

/* RTOOL_UNIX=PATH: servers listen on, clients connect to, that socket. */
static int
unix_socket(const char *path, int listening)
{
	struct sockaddr_un	 sun;
	int			 s;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		errx(1, "%s: too long", path);
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		err(1, "socket");
	if (!listening) {
		if (connect(s, (struct sockaddr *)&sun, sizeof(sun)) == -1)
			err(1, "connect %s", path);
		return (s);
	}
	(void)unlink(path);
	if (bind(s, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		err(1, "bind %s", path);
	if (listen(s, 512) == -1)
		err(1, "listen");
	return (s);
}

static int
listen_any(const char *portfile)
{
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	FILE			*f;
	int			 s, on = 1;

	if (getenv("RTOOL_UNIX") != NULL) {
		s = unix_socket(getenv("RTOOL_UNIX"), 1);
		memset(&sin, 0, sizeof(sin));
	} else if ((s = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		err(1, "socket");
	else {
		(void)setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &on,
		    sizeof(on));
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (bind(s, (struct sockaddr *)&sin, sizeof(sin)) == -1)
			err(1, "bind");
		if (listen(s, 512) == -1)
			err(1, "listen");
		if (getsockname(s, (struct sockaddr *)&sin, &len) == -1)
			err(1, "getsockname");
	}
	if (portfile != NULL) {
		char tmp[1024];

		(void)snprintf(tmp, sizeof(tmp), "%s.tmp", portfile);
		if ((f = fopen(tmp, "w")) == NULL)
			err(1, "%s", tmp);
		fprintf(f, "%d\n", ntohs(sin.sin_port));
		fclose(f);
		if (rename(tmp, portfile) == -1)
			err(1, "rename");
	} else
		printf("%d\n", ntohs(sin.sin_port));
	return (s);
}

/*
 * A port for a listener to come: print one that 127.0.0.1 can listen on
 * now, outside the range the kernel hands out to connect(2) where that
 * range is known (Linux's ip_local_port_range).  A port from that range
 * can be taken by an outgoing connection, and kept in TIME_WAIT, before
 * the listener binds it: between a test's two starts of relayd on the
 * same port, say.
 */
static int
freeport(void)
{
	struct sockaddr_in	 sin;
	FILE			*f;
	int			 lo = 0, hi = 0, first, last, i, port, s;
	int			 on = 1;

	if ((f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) !=
	    NULL) {
		if (fscanf(f, "%d %d", &lo, &hi) != 2)
			lo = hi = 0;
		fclose(f);
	}
	if (lo > 11024) {
		first = 10000;
		last = lo - 1;
	} else if (hi > 0 && hi < 64511) {
		first = hi + 1;
		last = 65535;
	} else {
		/* unknown: the kernel's choice */
		s = listen_any(NULL);
		close(s);
		return (0);
	}
	for (i = 0; i < 1000; i++) {
		port = first + arc4random_uniform(last - first + 1);
		if ((s = socket(AF_INET, SOCK_STREAM, 0)) == -1)
			err(1, "socket");
		(void)setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sin.sin_port = htons(port);
		if (bind(s, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
		    listen(s, 1) == 0) {
			close(s);
			printf("%d\n", port);
			return (0);
		}
		close(s);
	}
	errx(1, "no free port in %d-%d", first, last);
}

static int
connect_port(int port)
{
	struct sockaddr_in	 sin;
	int			 s;

	if (getenv("RTOOL_UNIX") != NULL)
		return (unix_socket(getenv("RTOOL_UNIX"), 0));
	if ((s = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		err(1, "socket");
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(port);
	if (connect(s, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		err(1, "connect %d", port);
	return (s);
}

static void
echo_conn(int s)
{
	static unsigned char	 buf[BUFSZ];
	ssize_t			 n, w, off;

	while ((n = read(s, buf, sizeof(buf))) > 0)
		for (off = 0; off < n; off += w)
			if ((w = write(s, buf + off, n - off)) <= 0)
				_exit(1);
	/* the peer half-closed: so do we, after all of it went back */
	shutdown(s, SHUT_WR);
	while (read(s, buf, sizeof(buf)) > 0)
		;
	_exit(0);
}

static void
reset_conn(int s)
{
	unsigned char	 buf[1024];
	struct linger	 l = { 1, 0 };

	(void)read(s, buf, sizeof(buf));
	(void)setsockopt(s, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(s);
	_exit(0);
}

static int
serve(const char *portfile, int secs, void (*conn)(int))
{
	int	 l, s;

	char	 path[PATH_MAX];
	int	 cfd;

	signal(SIGCHLD, SIG_IGN);
	l = listen_any(portfile);
	/* one byte per connection accepted, for tests that count them */
	(void)snprintf(path, sizeof(path), "%s.conns", portfile);
	if ((cfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND,
	    0644)) == -1)
		err(1, "%s", path);
	alarm(secs);
	for (;;) {
		if ((s = accept(l, NULL, NULL)) == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			err(1, "accept");
		}
		if (write(cfd, ".", 1) != 1)
			err(1, "%s", path);
		switch (fork()) {
		case -1:
			err(1, "fork");
		case 0:
			close(l);
			alarm(secs);
			conn(s);
			_exit(0);
		default:
			close(s);
		}
	}
}

struct stream {
	int		 s;
	uint64_t	 sent;
	uint64_t	 rcvd;
	int		 wdone;
	int		 rdone;
};

/* CONNS streams at once; every byte sent must come back in order. */
static double
since(const struct timeval *t0)
{
	struct timeval	 now;

	gettimeofday(&now, NULL);
	return ((now.tv_sec - t0->tv_sec) + (now.tv_usec - t0->tv_usec) / 1e6);
}

/* SIGUSR1 to a paced client: send the rest unpaced */
static volatile sig_atomic_t hurry;

static void
client_hurry(int sig)
{
	(void)sig;
	hurry = 1;
}

static int
client(int port, int conns, uint64_t bytes, int secs, uint64_t rate)
{
	struct stream	*st;
	struct pollfd	*pfd;
	unsigned char	*out, *in, *want;
	struct timeval	 t0, t1;
	uint64_t	 total = 0;
	ssize_t		 n;
	size_t		 len;
	int		 i, left = conns, bad = 0;
	double		 el, allowed, gap, maxgap = 0, *last;

	if ((st = calloc(conns, sizeof(*st))) == NULL ||
	    (last = calloc(conns, sizeof(*last))) == NULL ||
	    (pfd = calloc(conns, sizeof(*pfd))) == NULL ||
	    (out = malloc(BUFSZ)) == NULL || (in = malloc(BUFSZ)) == NULL ||
	    (want = malloc(BUFSZ)) == NULL)
		err(1, NULL);
	signal(SIGUSR1, client_hurry);
	alarm(secs);
	gettimeofday(&t0, NULL);
	for (i = 0; i < conns; i++) {
		st[i].s = connect_port(port);
		fcntl(st[i].s, F_SETFL, O_NONBLOCK);
		if (bytes == 0) {
			shutdown(st[i].s, SHUT_WR);
			st[i].wdone = 1;
		}
	}
	while (left > 0) {
		for (i = 0; i < conns; i++) {
			pfd[i].fd = st[i].rdone ? -1 : st[i].s;
			pfd[i].events = POLLIN | (st[i].wdone ? 0 : POLLOUT);
		}
		if (poll(pfd, conns, rate ? 10 : 1000) == -1 && errno != EINTR)
			err(1, "poll");
		for (i = 0; i < conns; i++) {
			if (pfd[i].revents & POLLOUT && !st[i].wdone) {
				len = bytes - st[i].sent < BUFSZ ?
				    bytes - st[i].sent : BUFSZ;
				if (rate && !hurry) {
					/* paced: rate bytes a second */
					allowed = since(&t0) * rate -
					    st[i].sent;
					if (allowed < 1)
						continue;
					if (len > allowed)
						len = allowed;
				}
				fill(out, st[i].sent, len);
				n = write(st[i].s, out, len);
				if (n > 0)
					st[i].sent += n;
				if (st[i].sent == bytes) {
					shutdown(st[i].s, SHUT_WR);
					st[i].wdone = 1;
				}
			}
			if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) {
				n = read(st[i].s, in, BUFSZ);
				if (n > 0) {
					fill(want, st[i].rcvd, n);
					if (memcmp(in, want, n) != 0 ||
					    st[i].rcvd + n > bytes) {
						warnx("stream %d: wrong data "
						    "at %llu", i, (unsigned long
						    long)st[i].rcvd);
						bad++;
					}
					st[i].rcvd += n;
					/* the longest wait for bytes */
					el = since(&t0);
					gap = el - last[i];
					if (st[i].rcvd > (uint64_t)n &&
					    gap > maxgap)
						maxgap = gap;
					last[i] = el;
				} else if (n == 0 || (errno != EAGAIN &&
				    errno != EINTR)) {
					if (n == -1)
						warn("stream %d", i);
					st[i].rdone = 1;
					left--;
					close(st[i].s);
				}
			}
		}
	}
	gettimeofday(&t1, NULL);
	el = (t1.tv_sec - t0.tv_sec) + (t1.tv_usec - t0.tv_usec) / 1e6;
	for (i = 0; i < conns; i++) {
		total += st[i].rcvd;
		if (st[i].rcvd != bytes) {
			warnx("stream %d: %llu of %llu bytes came back", i,
			    (unsigned long long)st[i].rcvd,
			    (unsigned long long)bytes);
			bad++;
		}
	}
	printf("%s %d streams %llu bytes %.3f s %.2f Gbit/s",
	    bad ? "FAIL" : "ok", conns, (unsigned long long)total, el,
	    el > 0 ? total * 8 / el / 1e9 : 0);
	if (rate)
		printf(", longest gap %d ms", (int)(maxgap * 1000));
	printf("\n");
	return (bad ? 1 : 0);
}

static int
idle(int port, int secs)
{
	struct timeval	 t0, t1;
	char		 c = 'x';
	int		 s;

	alarm(secs);
	s = connect_port(port);
	gettimeofday(&t0, NULL);
	(void)write(s, &c, 1);
	while (read(s, &c, 1) > 0)
		;
	gettimeofday(&t1, NULL);
	printf("%.1f\n", (t1.tv_sec - t0.tv_sec) +
	    (t1.tv_usec - t0.tv_usec) / 1e6);
	return (0);
}

/* A raw frame to the control socket, as a broken client would send. */
static int
ctlsend(const char *path, uint32_t type, uint16_t len, uint16_t flags)
{
	struct sockaddr_un	 sun;
	struct {
		uint32_t	 type;
		uint16_t	 len;
		uint16_t	 flags;
		uint32_t	 peerid;
		uint32_t	 pid;
	} hdr;
	char			 buf[64];
	int			 s;

	alarm(10);
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		err(1, "socket");
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	(void)snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if (connect(s, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		err(1, "connect %s", path);
	memset(&hdr, 0, sizeof(hdr));
	hdr.type = type;
	hdr.len = len;
	hdr.flags = flags;
	if (write(s, &hdr, sizeof(hdr)) != sizeof(hdr))
		err(1, "write");
	while (read(s, buf, sizeof(buf)) > 0)
		;
	printf("closed\n");
	return (0);
}

static void
http_conn(int s)
{
	char		 buf[8192], body[256], head[256];
	size_t		 off = 0;
	ssize_t		 n;
	int		 blen, hlen;

	/* the request ends with an empty line; its content does not matter */
	while (off < sizeof(buf) - 1 &&
	    (n = read(s, buf + off, sizeof(buf) - 1 - off)) > 0) {
		off += n;
		buf[off] = '\0';
		if (strstr(buf, "\r\n\r\n") != NULL ||
		    strstr(buf, "\n\n") != NULL)
			break;
	}
	blen = snprintf(body, sizeof(body),
	    "hello from the demo backend, pid %d\n", (int)getpid());
	hlen = snprintf(head, sizeof(head), "HTTP/1.0 200 OK\r\n"
	    "Content-Type: text/plain\r\nContent-Length: %d\r\n"
	    "Connection: close\r\n\r\n", blen);
	(void)write(s, head, hlen);
	(void)write(s, body, blen);
	shutdown(s, SHUT_WR);
	while (read(s, buf, sizeof(buf)) > 0)
		;
	_exit(0);
}

static int
stall(const char *portfile, int secs)
{
	int	 l;

	l = listen_any(portfile);
	if (listen(l, 0) == -1)
		err(1, "listen");
	alarm(secs);
	for (;;)
		pause();
}

static int
http_serve(int port, int secs)
{
	struct sockaddr_in	 sin;
	int			 l, s, on = 1;

	signal(SIGCHLD, SIG_IGN);
	if ((l = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		err(1, "socket");
	(void)setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(port);
	if (bind(l, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(l, 128) == -1)
		err(1, "listen 127.0.0.1:%d", port);
	if (secs > 0)
		alarm(secs);
	for (;;) {
		if ((s = accept(l, NULL, NULL)) == -1)
			continue;
		if (fork() == 0) {
			close(l);
			alarm(30);
			http_conn(s);
		}
		close(s);
	}
}

static void
read_to_eof(int s)
{
	static unsigned char	 buf[BUFSZ];

	while (read(s, buf, sizeof(buf)) > 0)
		;
}

static void
sink_conn(int s)
{
	read_to_eof(s);
	_exit(0);
}

static int	 late_ms;

static void
late_conn(int s)
{
	read_to_eof(s);
	usleep(late_ms * 1000);
	(void)write(s, "late\n", 5);
	_exit(0);
}

static int
trickle(int port, int secs)
{
	char		 c = 't';
	int		 s, i;

	alarm(secs + 10);
	s = connect_port(port);
	for (i = 0; i < secs * 10; i++) {
		if (write(s, &c, 1) != 1) {
			printf("FAIL: closed after %d.%d s\n", i / 10, i % 10);
			return (1);
		}
		usleep(100000);
	}
	shutdown(s, SHUT_WR);
	while (read(s, &c, 1) > 0)
		;
	printf("ok\n");
	return (0);
}

static const char	*answer_file;

static void
answer_conn(int s)
{
	struct pollfd	 pfd;
	char		 buf[4096];
	ssize_t		 n;
	int		 fd;

	if ((fd = open(answer_file, O_RDONLY)) == -1)
		err(1, "%s", answer_file);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(s, buf, n) != n)
			_exit(1);
	close(fd);
	shutdown(s, SHUT_WR);
	pfd.fd = s;
	pfd.events = POLLIN;
	while (poll(&pfd, 1, 2000) == 1 && read(s, buf, sizeof(buf)) > 0)
		;
	close(s);
}

static int
ident(const char *addr, int port, const char *name, int secs)
{
	struct sockaddr_in	 sin;
	int			 l, s, on = 1;

	alarm(secs);
	if (getenv("RTOOL_UNIX") != NULL)
		l = unix_socket(getenv("RTOOL_UNIX"), 1);
	else {
		if ((l = socket(AF_INET, SOCK_STREAM, 0)) == -1)
			err(1, "socket");
		(void)setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &on,
		    sizeof(on));
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = htons(port);
		if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
			errx(1, "bad address %s", addr);
		if (bind(l, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
		    listen(l, 4096) == -1)
			err(1, "listen %s:%d", addr, port);
	}
	for (;;) {
		if ((s = accept(l, NULL, NULL)) == -1)
			continue;
		(void)write(s, name, strlen(name));
		(void)write(s, "\n", 1);
		close(s);
	}
}

static int
get(int port)
{
	char	 buf[256];
	ssize_t	 n;
	int	 s;

	alarm(10);
	s = connect_port(port);
	while ((n = read(s, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, n, stdout);
	return (0);
}

static __attribute__((__noreturn__)) int
hold(int port, int conns, int secs)
{
	int	 i;

	/* connects may wait on a full backlog: the alarm ends it all */
	signal(SIGALRM, SIG_DFL);
	alarm(secs);
	for (i = 0; i < conns; i++)
		(void)connect_port(port);
	for (;;)
		pause();
}

static uint64_t	 greet_bytes;
static const char *greet_file;

/* Read and check BYTES of the pattern to the end; return what came. */
static uint64_t
read_checked(int s, uint64_t bytes, int *bad)
{
	static unsigned char	 in[BUFSZ], want[BUFSZ];
	uint64_t		 got = 0;
	ssize_t			 n;

	while ((n = read(s, in, sizeof(in))) > 0) {
		fill(want, got, n);
		if (got + n > bytes || memcmp(in, want, n) != 0)
			*bad = 1;
		got += n;
	}
	return (got);
}

static void
write_pattern(int s, uint64_t bytes)
{
	static unsigned char	 out[BUFSZ];
	uint64_t		 off = 0;
	size_t			 len;
	ssize_t			 n;

	while (off < bytes) {
		len = bytes - off < BUFSZ ? bytes - off : BUFSZ;
		fill(out, off, len);
		if ((n = write(s, out, len)) <= 0)
			_exit(1);
		off += n;
	}
}

static void
greet_conn(int s)
{
	char		 path[1024], tmp[1040];
	FILE		*f;
	uint64_t	 got;
	int		 bad = 0;

	write_pattern(s, greet_bytes);
	shutdown(s, SHUT_WR);
	got = read_checked(s, greet_bytes, &bad);
	/* whole or not at all: a test may be reading the last one's */
	(void)snprintf(path, sizeof(path), "%s.got", greet_file);
	(void)snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((f = fopen(tmp, "w")) != NULL) {
		fprintf(f, "%s %llu\n", bad ? "FAIL" : "ok",
		    (unsigned long long)got);
		if (fclose(f) == 0)
			(void)rename(tmp, path);
	}
	_exit(0);
}

static int
converse(int port, uint64_t bytes)
{
	uint64_t	 got;
	int		 s, bad = 0;

	alarm(60);
	s = connect_port(port);
	got = read_checked(s, bytes, &bad);
	write_pattern(s, bytes);
	shutdown(s, SHUT_WR);
	printf("%s %llu\n", bad || got != bytes ? "FAIL" : "ok",
	    (unsigned long long)got);
	return (bad || got != bytes);
}

int
main(int argc, char *argv[])
{
	sigset_t set;

	/* every mode ends by alarm: it must not be blocked or ignored */
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	signal(SIGALRM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 2 && strcmp(argv[1], "freeport") == 0)
		return (freeport());
	if (argc >= 3 && strcmp(argv[1], "echo") == 0)
		return (serve(argv[2], argc > 3 ? atoi(argv[3]) : 60,
		    echo_conn));
	if (argc >= 3 && strcmp(argv[1], "reset") == 0)
		return (serve(argv[2], argc > 3 ? atoi(argv[3]) : 60,
		    reset_conn));
	if (argc >= 5 && strcmp(argv[1], "client") == 0)
		return (client(atoi(argv[2]), atoi(argv[3]),
		    strtoull(argv[4], NULL, 10), argc > 5 ? atoi(argv[5]) :
		    120, argc > 6 ? strtoull(argv[6], NULL, 10) : 0));
	if (argc >= 4 && strcmp(argv[1], "idle") == 0)
		return (idle(atoi(argv[2]), atoi(argv[3])));
	if (argc >= 3 && strcmp(argv[1], "stall") == 0)
		return (stall(argv[2], argc > 3 ? atoi(argv[3]) : 60));
	if (argc >= 3 && strcmp(argv[1], "http") == 0)
		return (http_serve(atoi(argv[2]), argc > 3 ? atoi(argv[3]) :
		    0));
	if (argc >= 3 && strcmp(argv[1], "sink") == 0)
		return (serve(argv[2], argc > 3 ? atoi(argv[3]) : 60,
		    sink_conn));
	if (argc >= 4 && strcmp(argv[1], "late") == 0) {
		late_ms = atoi(argv[3]);
		return (serve(argv[2], argc > 4 ? atoi(argv[4]) : 60,
		    late_conn));
	}
	if (argc >= 4 && strcmp(argv[1], "trickle") == 0)
		return (trickle(atoi(argv[2]), atoi(argv[3])));
	if (argc >= 5 && strcmp(argv[1], "ident") == 0)
		return (ident(argv[2], atoi(argv[3]), argv[4],
		    argc > 5 ? atoi(argv[5]) : 60));
	if (argc >= 3 && strcmp(argv[1], "probe") == 0) {
		alarm(5);
		close(connect_port(atoi(argv[2])));
		return (0);
	}
	if (argc >= 3 && strcmp(argv[1], "get") == 0)
		return (get(atoi(argv[2])));
	if (argc >= 5 && strcmp(argv[1], "hold") == 0)
		return (hold(atoi(argv[2]), atoi(argv[3]), atoi(argv[4])));
	if (argc >= 4 && strcmp(argv[1], "greet") == 0) {
		greet_file = argv[2];
		greet_bytes = strtoull(argv[3], NULL, 10);
		return (serve(argv[2], argc > 4 ? atoi(argv[4]) : 60,
		    greet_conn));
	}
	if (argc >= 4 && strcmp(argv[1], "converse") == 0)
		return (converse(atoi(argv[2]), strtoull(argv[3], NULL, 10)));
	if (argc >= 4 && strcmp(argv[1], "answer") == 0) {
		answer_file = argv[3];
		return (serve(argv[2], argc > 4 ? atoi(argv[4]) : 60,
		    answer_conn));
	}
	if (argc >= 5 && strcmp(argv[1], "ctlsend") == 0)
		return (ctlsend(argv[2], strtoul(argv[3], NULL, 0),
		    strtoul(argv[4], NULL, 0), argc > 5 ?
		    strtoul(argv[5], NULL, 0) : 0));
	fprintf(stderr, "usage: see the comment at the top of rtool.c\n");
	return (2);
}
