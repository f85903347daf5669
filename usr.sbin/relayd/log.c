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

#include <errno.h>
#include <paths.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "relayd.h"

static int		 debug;
static int		 verbose;
static const char	*log_procname;

/*
 * The syslog socket.  A chrooted child cannot open another one by its
 * path: when a syslog daemon that restarted leaves this one dead, or
 * there was none at start, a child hands its lines to the parent, which
 * sends them and passes a fresh socket back (log_setrelay()).
 *
 * A syslog daemon that stops reading (rsyslog behind a full disk, a
 * stopped journald) must not stop the relays: the socket never blocks.
 * A line it has no room for is waited for a little, unless one was lost
 * in the last second, then dropped; the count of dropped lines goes
 * first when one is taken again, as OpenBSD's sendsyslog(2) says it.
 */
static int		 log_facility = LOG_DAEMON;
static int		 log_fd = -1;
static int		 log_stream;
static int		 log_asked;
static time_t		 log_retry;	/* no socket to be had before */
static int		 log_relaying;
static void		(*log_relay)(const char *, size_t, int);
static time_t		 log_nowait;	/* no wait for room before */
static size_t		 log_dropped;	/* lost since one went */
static int		 log_noroom;	/* the first for want of room */
/* what a stream socket has not taken yet of a line */
static char		 log_rest[LOG_MAXLINE + 1];
static size_t		 log_restlen;

#define LOG_WAIT_MS	10		/* the longest wait for room */

static void		 log_send(const char *, size_t);
static int		 log_out(const char *, size_t);
static int		 log_put(const char *, size_t);
static void		 log_lost(int);
static int		 log_format(char *, size_t, int, const char *,
			    va_list);
static int		 log_line(char *, size_t, int, const char *, ...)
			    __attribute__((__format__ (printf, 4, 5)));
static void		 vlog_syslog(int, const char *, va_list);

/* Open syslog now: the socket has to exist before chroot. */
void
log_init(int n_debug, int facility)
{
	debug = n_debug;
	verbose = n_debug;
	log_procinit(getprogname());
	log_facility = facility;

	if (!debug && log_fd == -1) {
		log_setsocket(log_connect());
		/* a library's syslog(3) call: our name and facility */
		openlog(getprogname(), LOG_PID, facility);
	}

	tzset();
}

/* A socket connected to the syslog daemon, or -1. */
int
log_connect(void)
{
	struct sockaddr_un	 sun;
	int			 fd, type = SOCK_DGRAM;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	(void)strlcpy(sun.sun_path, _PATH_LOG, sizeof(sun.sun_path));
 again:
	if ((fd = socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1)
		return (-1);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		close(fd);
		/* a daemon on a stream socket, as syslog(3) allows */
		if (errno == EPROTOTYPE && type == SOCK_DGRAM) {
			type = SOCK_STREAM;
			goto again;
		}
		return (-1);
	}
	return (fd);
}

/*
 * Take fd as the syslog socket; -1 from the parent: none to be had now,
 * and a child asks again in a second, not for every line till then.
 */
void
log_setsocket(int fd)
{
	int		 type;
	socklen_t	 len = sizeof(type);

	if (log_asked && fd == -1)
		log_retry = getmonosec() + 1;
	log_asked = 0;
	if (fd == -1)
		return;
	if (log_fd != -1)
		close(log_fd);
	log_fd = fd;
	log_restlen = 0;
	log_stream = getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
	    type == SOCK_STREAM;
}

/*
 * A child's way to the parent for lines its socket does not take:
 * fn(line, len, ask) sends the line, and asks for a socket if ask.
 */
void
log_setrelay(void (*fn)(const char *, size_t, int))
{
	log_relay = fn;
}

/* The parent: a child's line, formatted by the child. */
void
log_relayed(const void *data, size_t len)
{
	char	 line[LOG_MAXLINE + 1];

	/* with -d, a child writes to stderr itself */
	if (debug || len == 0 || len > LOG_MAXLINE)
		return;
	memcpy(line, data, len);
	line[len] = '\0';
	log_send(line, len);
}

static void
log_send(const char *line, size_t len)
{
	int	 retried = 0;

	/* a stream socket needs a delimiter: the NUL after the line */
	for (;;) {
		if (log_fd != -1) {
			if (log_out(line, len + log_stream) == 0)
				return;
			if (errno == EAGAIN || errno == EWOULDBLOCK ||
			    errno == ENOBUFS || errno == EINTR) {
				log_lost(1);
				return;
			}
			close(log_fd);
			log_fd = -1;
			log_restlen = 0;
		}
		if (log_relay != NULL || retried)
			break;
		log_setsocket(log_connect());
		retried = 1;
	}
	if (log_relay == NULL || log_relaying ||
	    (!log_asked && getmonosec() < log_retry)) {
		log_lost(0);
		return;
	}
	log_relaying = 1;
	log_relay(line, len, !log_asked);
	log_asked = 1;
	log_relaying = 0;
}

/* One line lost: for want of room in the syslog daemon's socket, or not. */
static void
log_lost(int noroom)
{
	if (log_dropped++ == 0)
		log_noroom = noroom;
}

/*
 * Send a line on log_fd, after what a stream socket has not taken yet
 * and the count of the lines dropped before it: 0, or -1 and errno.
 */
static int
log_out(const char *line, size_t n)
{
	char		 note[256];
	size_t		 rest;
	int		 len;

	if (log_restlen > 0) {
		rest = log_restlen;
		log_restlen = 0;
		if (log_put(log_rest, rest) == -1) {
			log_restlen = rest;
			return (-1);
		}
	}
	if (log_dropped > 0 && log_restlen == 0) {
		len = log_line(note, sizeof(note), LOG_WARNING,
		    "syslog: dropped %zu message%s: %s", log_dropped,
		    log_dropped == 1 ? "" : "s", log_noroom ?
		    "the syslog daemon had no room" :
		    "no syslog daemon took them");
		if (len != -1 && log_put(note, len + log_stream) == -1)
			return (-1);
		log_dropped = 0;
	}
	/* not a line in the middle of another */
	if (log_restlen > 0) {
		errno = EAGAIN;
		return (-1);
	}
	return (log_put(line, n));
}

/*
 * Send n bytes, waiting a little for room unless a line was lost in the
 * last second.  What a stream socket took a part of is finished before
 * the next line: -1 and errno only when not a byte went.
 */
static int
log_put(const char *buf, size_t n)
{
	struct pollfd	 pfd;
	ssize_t		 w;
	size_t		 off = 0;
	int		 waited = 0;

	while (off < n) {
		w = send(log_fd, buf + off, n - off,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			off += w;
			continue;
		}
		if (w == -1 && errno == EINTR)
			continue;
		if (w == 0 || (errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != ENOBUFS)) {
			if (w == 0)
				errno = EPIPE;
			break;
		}
		if (!waited && getmonosec() >= log_nowait) {
			waited = 1;
			pfd.fd = log_fd;
			pfd.events = POLLOUT;
			if (poll(&pfd, 1, LOG_WAIT_MS) > 0)
				continue;
		}
		log_nowait = getmonosec() + 1;
		errno = EAGAIN;
		break;
	}
	if (off == n)
		return (0);
	if (off == 0)
		return (-1);
	memmove(log_rest, buf + off, n - off);
	log_restlen = n - off;
	return (0);
}

void
log_procinit(const char *procname)
{
	if (procname != NULL)
		log_procname = procname;
}

void
log_setverbose(int v)
{
	verbose = v;
}

int
log_getverbose(void)
{
	return (verbose);
}

void
logit(int pri, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(pri, fmt, ap);
	va_end(ap);
}

/*
 * With -d, every process writes to the same stderr: each message goes
 * out in a single write so lines of different processes never mix.
 */
void
vlog(int pri, const char *fmt, va_list ap)
{
	char	 buf[4096];
	int	 n, saved_errno = errno;

	if (debug) {
		n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
		if (n < 0)
			n = 0;
		if ((size_t)n > sizeof(buf) - 2)
			n = sizeof(buf) - 2;
		buf[n++] = '\n';
		/* a line stderr does not take is lost: nowhere to say so */
		if (write(STDERR_FILENO, buf, n) != n)
			errno = saved_errno;
	} else
		vlog_syslog(pri, fmt, ap);

	errno = saved_errno;
}

static void
vlog_syslog(int pri, const char *fmt, va_list ap)
{
	char	 line[LOG_MAXLINE + 1];
	int	 n;

	if ((n = log_format(line, sizeof(line), pri, fmt, ap)) != -1)
		log_send(line, n);
}

/*
 * As syslog(3) with LOG_PID: <PRI>Mmm dd hh:mm:ss ident[pid]: message,
 * NUL-ended (a stream socket sends the NUL too); its length, or -1.
 */
static int
log_format(char *line, size_t size, int pri, const char *fmt, va_list ap)
{
	char		 ts[32];
	struct tm	 tm;
	time_t		 now;
	int		 n, m;

	now = time(NULL);
	if (localtime_r(&now, &tm) == NULL ||
	    strftime(ts, sizeof(ts), "%b %e %H:%M:%S", &tm) == 0)
		(void)strlcpy(ts, "-", sizeof(ts));
	n = snprintf(line, size, "<%d>%s %s[%d]: ",
	    log_facility | LOG_PRI(pri), ts, getprogname(), (int)getpid());
	if (n < 0 || (size_t)n >= size)
		return (-1);
	m = vsnprintf(line + n, size - n, fmt, ap);
	if (m < 0)
		return (-1);
	n += m;
	if ((size_t)n > size - 1)
		n = size - 1;
	line[n] = '\0';
	return (n);
}

static int
log_line(char *line, size_t size, int pri, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = log_format(line, size, pri, fmt, ap);
	va_end(ap);
	return (n);
}

static void
vlog_errno(int pri, int code, const char *emsg, va_list ap)
{
	char	 buf[1024];

	if (emsg == NULL) {
		logit(pri, "%s", strerror(code));
		return;
	}
	(void)vsnprintf(buf, sizeof(buf), emsg, ap);
	logit(pri, "%s: %s", buf, strerror(code));
}

void
log_warn(const char *emsg, ...)
{
	va_list	 ap;
	int	 saved_errno = errno;

	va_start(ap, emsg);
	vlog_errno(LOG_ERR, saved_errno, emsg, ap);
	va_end(ap);
	errno = saved_errno;
}

void
log_warnx(const char *emsg, ...)
{
	va_list	 ap;

	va_start(ap, emsg);
	vlog(LOG_ERR, emsg, ap);
	va_end(ap);
}

void
log_info(const char *emsg, ...)
{
	va_list	 ap;

	va_start(ap, emsg);
	vlog(LOG_INFO, emsg, ap);
	va_end(ap);
}

void
log_debug(const char *emsg, ...)
{
	va_list	 ap;

	if (verbose) {
		va_start(ap, emsg);
		vlog(LOG_DEBUG, emsg, ap);
		va_end(ap);
	}
}

static __dead void
vfatalc(int code, const char *emsg, va_list ap)
{
	char		 s[1024];
	const char	*sep;

	if (emsg != NULL) {
		(void)vsnprintf(s, sizeof(s), emsg, ap);
		sep = ": ";
	} else {
		s[0] = '\0';
		sep = "";
	}
	if (code)
		logit(LOG_CRIT, "fatal in %s: %s%s%s",
		    log_procname, s, sep, strerror(code));
	else
		logit(LOG_CRIT, "fatal in %s%s%s", log_procname, sep, s);
	exit(1);
}

void
fatal(const char *emsg, ...)
{
	va_list	 ap;

	va_start(ap, emsg);
	vfatalc(errno, emsg, ap);
	va_end(ap);
}

void
fatalx(const char *emsg, ...)
{
	va_list	 ap;

	va_start(ap, emsg);
	vfatalc(0, emsg, ap);
	va_end(ap);
}

/*
 * Count one event; 1 when its line is due (never logged, or interval
 * seconds since), rl->count then says how many events it stands for.
 */
int
log_ratelimit(struct log_ratelimit *rl)
{
	struct timespec	 now;

	if (rl->said) {
		rl->count = 0;
		rl->said = 0;
	}
	rl->count++;
	clock_gettime(CLOCK_MONOTONIC, &now);
	/* a monotonic clock may start at 0: log times are 1 and up */
	if (rl->last != 0 && now.tv_sec + 1 - rl->last < rl->interval)
		return (0);
	rl->last = now.tv_sec + 1;
	rl->said = 1;
	return (1);
}
