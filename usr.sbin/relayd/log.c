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

#include <errno.h>
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

/* Open syslog now: the socket has to exist before chroot. */
void
log_init(int n_debug, int facility)
{
	debug = n_debug;
	verbose = n_debug;
	log_procinit(getprogname());

	if (!debug)
		openlog(getprogname(), LOG_PID | LOG_NDELAY, facility);

	tzset();
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
		vsyslog(pri, fmt, ap);

	errno = saved_errno;
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
