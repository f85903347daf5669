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
 * relaybench: load for the benchmarks, on 127.0.0.1 only.  Every mode is
 * bounded in bytes, count and time.
 *
 *   relaybench sink PORTFILE SECONDS        backend: read and discard
 *   relaybench echo PORTFILE SECONDS        backend: echo
 *   relaybench tput PORT STREAMS BYTES      push BYTES on each of STREAMS,
 *                                           print Gbit/s
 *   relaybench rtt PORT COUNT               64-byte ping-pong, print the
 *                                           median and p99 in microseconds
 *   relaybench conn PORT SECONDS PROCS [RATE]
 *                                           short connections (100 bytes
 *                                           each way), print conn/s errors;
 *                                           with RATE, at most RATE
 *                                           attempts a second in all
 *   relaybench probe PORT                   exit 0 when PORT accepts
 *   relaybench idle PORT CONNS SECONDS      hold CONNS idle connections;
 *                                           print "ready" once they are up
 *   relaybench http PORTFILE SECONDS        HTTP/1.1 backend, keep-alive
 *                                           (an HTTP/1.0 request closes):
 *                                           GET /N answers N bytes
 *                                           (GET /N?ms=M after M ms), a
 *                                           request body is discarded
 *   relaybench get PORT BYTES               download BYTES, print Gbit/s
 *   relaybench put PORT BYTES               upload BYTES, print Gbit/s
 *
 * With RB_CONNWAIT=MS, a TCP connect that is not through in MS
 * milliseconds fails (a firewall that drops SYNs).
 * With RB_UNIX=PATH in the environment, servers listen on and clients
 * connect to the unix socket PATH instead (the port is then ignored);
 * with RB_ADDR=ADDRESS, on that IPv4 address instead of 127.0.0.1.
 */

#include <sys/types.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUFSZ	(256 * 1024)

static double
now(void)
{
	struct timeval	 tv;

	gettimeofday(&tv, NULL);
	return (tv.tv_sec + tv.tv_usec / 1e6);
}

/*
 * RB_UNIX=PATH in the environment: the unix socket PATH instead of a
 * port of 127.0.0.1, for servers and clients alike.
 */
static int
unix_sock(struct sockaddr_un *sun)
{
	const char	*path = getenv("RB_UNIX");

	if (path == NULL)
		return (0);
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun->sun_path))
		errx(1, "%s: too long", path);
	memcpy(sun->sun_path, path, strlen(path) + 1);
	return (1);
}

/*
 * RB_ADDR=ADDRESS in the environment: that IPv4 address instead of
 * 127.0.0.1, for servers and clients alike (the short-connection test
 * runs them in network namespaces).
 */
static in_addr_t
inet_addr_env(void)
{
	const char	*a = getenv("RB_ADDR");
	struct in_addr	 in;

	if (a == NULL)
		return (htonl(INADDR_LOOPBACK));
	if (inet_pton(AF_INET, a, &in) != 1)
		errx(1, "RB_ADDR %s: not an IPv4 address", a);
	return (in.s_addr);
}

static int
connect_port(int port)
{
	struct sockaddr_in	 sin;
	struct sockaddr_un	 sun;
	struct timeval		 tv;
	const char		*wait;
	int			 s;

	if (unix_sock(&sun)) {
		if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
			return (-1);
		if (connect(s, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
			close(s);
			return (-1);
		}
		return (s);
	}
	if ((s = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return (-1);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = inet_addr_env();
	sin.sin_port = htons(port);
	/* RB_CONNWAIT=MS: a connect not through by then failed (dropped) */
	if ((wait = getenv("RB_CONNWAIT")) != NULL) {
		tv.tv_sec = atoi(wait) / 1000;
		tv.tv_usec = atoi(wait) % 1000 * 1000;
		(void)setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	if (connect(s, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		close(s);
		return (-1);
	}
	if (wait != NULL) {
		timerclear(&tv);
		(void)setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	return (s);
}

static void
serve_conn(int s, int echo)
{
	static char	 buf[BUFSZ];
	ssize_t		 n, w, off;
	int		 one = 1;

	(void)setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	while ((n = read(s, buf, sizeof(buf))) > 0) {
		if (!echo)
			continue;
		for (off = 0; off < n; off += w)
			if ((w = write(s, buf + off, n - off)) <= 0)
				_exit(0);
	}
	_exit(0);
}

/*
 * A listener on 127.0.0.1, its port written to portfile; the process
 * ends after secs.
 */
static int
listen_portfile(const char *portfile, int secs)
{
	struct sockaddr_in	 sin;
	struct sockaddr_un	 sun;
	socklen_t		 len = sizeof(sin);
	FILE			*f;
	int			 l, on = 1;

	signal(SIGCHLD, SIG_IGN);
	if (unix_sock(&sun)) {
		(void)unlink(sun.sun_path);
		if ((l = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
		    bind(l, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
		    listen(l, 4096) == -1)
			err(1, "listen %s", sun.sun_path);
		memset(&sin, 0, sizeof(sin));
	} else {
		if ((l = socket(AF_INET, SOCK_STREAM, 0)) == -1)
			err(1, "socket");
		(void)setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &on,
		    sizeof(on));
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = inet_addr_env();
		if (bind(l, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
		    listen(l, 4096) == -1 ||
		    getsockname(l, (struct sockaddr *)&sin, &len) == -1)
			err(1, "listen");
	}
	if ((f = fopen(portfile, "w")) == NULL)
		err(1, "%s", portfile);
	fprintf(f, "%d\n", ntohs(sin.sin_port));
	fclose(f);
	alarm(secs);
	return (l);
}

static int
serve(const char *portfile, int secs, int echo)
{
	int	 l, s;

	l = listen_portfile(portfile, secs);
	for (;;) {
		if ((s = accept(l, NULL, NULL)) == -1)
			continue;
		switch (fork()) {
		case 0:
			close(l);
			serve_conn(s, echo);
			_exit(0);
		case -1:
			break;
		default:
			break;
		}
		close(s);
	}
}

/* Write all of buf, or exit: the peer went away. */
static void
writeall(int s, const char *buf, size_t len)
{
	ssize_t	 w;

	for (; len > 0; buf += w, len -= w)
		if ((w = write(s, buf, len)) <= 0)
			_exit(0);
}

/* Bytes of zeros, after what is already in buf (off bytes of BUFSZ). */
static void
write_zeros(int s, char *buf, size_t off, long long n)
{
	size_t	 part;

	part = n < (long long)(BUFSZ - off) ? (size_t)n : BUFSZ - off;
	memset(buf + off, 0, part);
	writeall(s, buf, off + part);
	n -= part;
	memset(buf, 0, BUFSZ);
	while (n > 0) {
		part = n < BUFSZ ? (size_t)n : BUFSZ;
		writeall(s, buf, part);
		n -= part;
	}
}

static void
serve_http_conn(int s)
{
	static char	 buf[BUFSZ], out[BUFSZ];
	char		*end, *p;
	size_t		 have = 0, used;
	long long	 len, n;
	ssize_t		 r;
	int		 one = 1, get, last;

	(void)setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (;;) {
		while ((end = memmem(buf, have, "\r\n\r\n", 4)) == NULL) {
			if (have == sizeof(buf) - 1 ||
			    (r = read(s, buf + have, sizeof(buf) - 1 - have)) <= 0)
				_exit(0);
			have += r;
		}
		*end = '\0';
		/* an HTTP/1.0 request: the answer, then the end */
		if ((p = strstr(buf, "\r\n")) == NULL)
			p = end;
		last = p - buf >= 8 && strncmp(p - 8, "HTTP/1.0", 8) == 0;
		get = strncmp(buf, "GET /", 5) == 0;
		n = get ? atoll(buf + 5) : 0;
		/* a slow answer: GET /N?ms=M */
		if (get && (p = strstr(buf, "?ms=")) != NULL &&
		    strchr(buf, '\n') > p)
			usleep(atoi(p + 4) * 1000);
		len = 0;
		if ((p = strcasestr(buf, "\r\ncontent-length:")) != NULL)
			len = atoll(p + 17);
		used = end + 4 - buf;
		/* the body: what came with the head, then the rest */
		if ((long long)(have - used) >= len) {
			used += len;
			len = 0;
		} else {
			len -= have - used;
			used = have;
		}
		memmove(buf, buf + used, have - used);
		have -= used;
		while (len > 0) {
			r = read(s, out, len < BUFSZ ? (size_t)len : BUFSZ);
			if (r <= 0)
				_exit(0);
			len -= r;
		}
		r = snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\n"
		    "Content-Length: %lld\r\n\r\n", n);
		write_zeros(s, out, r, n);
		if (last)
			_exit(0);
	}
}

static int
serve_http(const char *portfile, int secs)
{
	int	 l, s;

	l = listen_portfile(portfile, secs);
	for (;;) {
		if ((s = accept(l, NULL, NULL)) == -1)
			continue;
		if (fork() == 0) {
			close(l);
			serve_http_conn(s);
		}
		close(s);
	}
	/* NOTREACHED */
	return (0);
}

/* One GET or PUT of bytes through PORT; Gbit/s until the answer ended. */
static int
http_xfer(int port, int put, long long bytes)
{
	static char	 buf[BUFSZ];
	char		*end;
	size_t		 have = 0;
	long long	 left;
	double		 t0;
	ssize_t		 r;
	int		 s, n;

	if ((s = connect_port(port)) == -1)
		err(1, "connect");
	t0 = now();
	if (put) {
		n = snprintf(buf, sizeof(buf), "PUT / HTTP/1.1\r\nHost: b\r\n"
		    "Content-Length: %lld\r\n\r\n", bytes);
		write_zeros(s, buf, n, bytes);
	} else {
		n = snprintf(buf, sizeof(buf), "GET /%lld HTTP/1.1\r\n"
		    "Host: b\r\n\r\n", bytes);
		writeall(s, buf, n);
	}
	while ((end = memmem(buf, have, "\r\n\r\n", 4)) == NULL) {
		if (have == sizeof(buf) - 1 ||
		    (r = read(s, buf + have, sizeof(buf) - 1 - have)) <= 0)
			errx(1, "no answer");
		have += r;
	}
	buf[have] = '\0';
	if (strncmp(buf, "HTTP/1.1 200 ", 13) != 0)
		errx(1, "answer: %.40s", buf);
	left = put ? 0 : bytes - (long long)(have - (end + 4 - buf));
	while (left > 0) {
		if ((r = read(s, buf, sizeof(buf))) <= 0)
			errx(1, "short answer");
		left -= r;
	}
	printf("%.2f\n", bytes * 8 / (now() - t0) / 1e9);
	close(s);
	return (0);
}

static int
tput(int port, int streams, long long bytes)
{
	static char	 buf[BUFSZ];
	double		 t0, t1;
	int		 i, st;
	pid_t		 pid;

	alarm(300);
	memset(buf, 'x', sizeof(buf));
	t0 = now();
	for (i = 0; i < streams; i++) {
		if ((pid = fork()) == -1)
			err(1, "fork");
		if (pid == 0) {
			long long	 left = bytes;
			ssize_t		 n;
			int		 s;

			if ((s = connect_port(port)) == -1)
				_exit(1);
			while (left > 0) {
				n = write(s, buf, left < BUFSZ ? left : BUFSZ);
				if (n <= 0)
					_exit(1);
				left -= n;
			}
			/* the end: once the backend saw it all and closed */
			shutdown(s, SHUT_WR);
			while (read(s, buf, sizeof(buf)) > 0)
				;
			_exit(0);
		}
	}
	st = 0;
	for (i = 0; i < streams; i++) {
		int	 status;

		wait(&status);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			st = 1;
	}
	t1 = now();
	printf("%.2f\n", st ? 0 : bytes * streams * 8 / (t1 - t0) / 1e9);
	return (st);
}

static int
cmpd(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

static int
rtt(int port, int count)
{
	char	 buf[64];
	double	*t, t0;
	ssize_t	 n, got;
	int	 s, i, one = 1;

	alarm(120);
	if ((t = calloc(count, sizeof(*t))) == NULL)
		err(1, NULL);
	if ((s = connect_port(port)) == -1)
		err(1, "connect");
	(void)setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	memset(buf, 'p', sizeof(buf));
	for (i = 0; i < count; i++) {
		t0 = now();
		if (write(s, buf, sizeof(buf)) != sizeof(buf))
			err(1, "write");
		for (got = 0; got < (ssize_t)sizeof(buf); got += n)
			if ((n = read(s, buf + got, sizeof(buf) - got)) <= 0)
				err(1, "read");
		t[i] = (now() - t0) * 1e6;
	}
	qsort(t, count, sizeof(*t), cmpd);
	printf("%.0f %.0f\n", t[count / 2], t[(int)(count * 0.99)]);
	return (0);
}

static int
conn(int port, int secs, int procs, double rate)
{
	int	 fds[2], i;
	long	 ok = 0, bad = 0, a, b;
	FILE	*f;

	if (pipe(fds) == -1)
		err(1, "pipe");
	for (i = 0; i < procs; i++) {
		if (fork() == 0) {
			char	 buf[100];
			double	 t, next = now(), end = next + secs;
			double	 gap = rate > 0 ? procs / rate : 0;
			long	 c = 0, e = 0;
			ssize_t	 n, got;
			int	 s;

			memset(buf, 'c', sizeof(buf));
			while ((t = now()) < end) {
				/* paced: one attempt every gap, no catching up */
				if (gap > 0) {
					if (t < next)
						usleep((next - t) * 1e6);
					next = (t > next + gap ? t : next) + gap;
				}
				if ((s = connect_port(port)) == -1) {
					e++;
					continue;
				}
				if (write(s, buf, sizeof(buf)) != sizeof(buf)) {
					e++;
					close(s);
					continue;
				}
				for (got = 0; got < 100; got += n)
					if ((n = read(s, buf, 100 - got)) <= 0)
						break;
				if (got == 100)
					c++;
				else
					e++;
				close(s);
			}
			dprintf(fds[1], "%ld %ld\n", c, e);
			_exit(0);
		}
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	while (fscanf(f, "%ld %ld", &a, &b) == 2) {
		ok += a;
		bad += b;
	}
	while (wait(NULL) > 0)
		;
	printf("%.0f %ld\n", (double)ok / secs, bad);
	return (0);
}

static int
idle(int port, int conns, int secs)
{
	struct rlimit	 rl;
	int		 i;

	rl.rlim_cur = rl.rlim_max = conns + 64;
	(void)setrlimit(RLIMIT_NOFILE, &rl);
	alarm(secs);
	for (i = 0; i < conns; i++)
		if (connect_port(port) == -1)
			err(1, "connect %d", i);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

int
main(int argc, char *argv[])
{
	sigset_t	 set;

	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	signal(SIGALRM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	if (argc == 4 && strcmp(argv[1], "sink") == 0)
		return (serve(argv[2], atoi(argv[3]), 0));
	if (argc == 4 && strcmp(argv[1], "echo") == 0)
		return (serve(argv[2], atoi(argv[3]), 1));
	if (argc == 5 && strcmp(argv[1], "tput") == 0)
		return (tput(atoi(argv[2]), atoi(argv[3]), atoll(argv[4])));
	if (argc == 4 && strcmp(argv[1], "rtt") == 0)
		return (rtt(atoi(argv[2]), atoi(argv[3])));
	if ((argc == 5 || argc == 6) && strcmp(argv[1], "conn") == 0)
		return (conn(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]),
		    argc == 6 ? atof(argv[5]) : 0));
	if (argc == 3 && strcmp(argv[1], "probe") == 0) {
		int s = connect_port(atoi(argv[2]));

		return (s == -1);
	}
	if (argc == 4 && strcmp(argv[1], "http") == 0)
		return (serve_http(argv[2], atoi(argv[3])));
	if (argc == 4 && strcmp(argv[1], "get") == 0)
		return (http_xfer(atoi(argv[2]), 0, atoll(argv[3])));
	if (argc == 4 && strcmp(argv[1], "put") == 0)
		return (http_xfer(atoi(argv[2]), 1, atoll(argv[3])));
	if (argc == 5 && strcmp(argv[1], "idle") == 0)
		return (idle(atoi(argv[2]), atoi(argv[3]), atoi(argv[4])));
	fprintf(stderr, "usage: see the comment at the top of relaybench.c\n");
	return (2);
}
