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
 * The service manager's readiness protocol (sd_notify(3)), written out:
 * one datagram of "KEY=value" lines to the unix socket $NOTIFY_SOCKET
 * names (a path, or with a leading '@' an abstract name).  Without
 * NOTIFY_SOCKET, or where the socket cannot be had, nothing is sent
 * and nothing else changes.
 */

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compat.h"

static int			 sdnotify_s = -1;
static int			 sdnotify_watchdog;
static struct sockaddr_un	 sdnotify_sun;
static socklen_t		 sdnotify_len;

/*
 * The socket, once, in the parent; its name leaves the environment so
 * that no child (or check script) speaks for the daemon.  1 when there
 * is a service manager to tell, 0 when there is none, -1 on error.
 */
int
compat_sdnotify_init(void)
{
	const char	*path;
	size_t		 len;

	if ((path = getenv("NOTIFY_SOCKET")) == NULL || *path == '\0')
		return (0);
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') ||
	    len >= sizeof(sdnotify_sun.sun_path)) {
		errno = EINVAL;
		return (-1);
	}
	memset(&sdnotify_sun, 0, sizeof(sdnotify_sun));
	sdnotify_sun.sun_family = AF_UNIX;
	memcpy(sdnotify_sun.sun_path, path, len);
	if (path[0] == '@')
		sdnotify_sun.sun_path[0] = '\0';	/* abstract */
	sdnotify_len = offsetof(struct sockaddr_un, sun_path) + len +
	    (path[0] == '/' ? 1 : 0);
	if ((sdnotify_s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) ==
	    -1)
		return (-1);
	/* a watchdog for this process (WatchdogSec=) */
	if ((path = getenv("WATCHDOG_USEC")) != NULL && atoll(path) > 0 &&
	    ((path = getenv("WATCHDOG_PID")) == NULL ||
	    atoll(path) == (long long)getpid()))
		sdnotify_watchdog = 1;
	(void)unsetenv("NOTIFY_SOCKET");
	(void)unsetenv("WATCHDOG_USEC");
	(void)unsetenv("WATCHDOG_PID");
	return (1);
}

/* Tell the service manager, if there is one: -1 when it did not go. */
int
compat_sdnotify(const char *fmt, ...)
{
	char	 buf[512];
	va_list	 ap;
	int	 len;

	if (sdnotify_s == -1)
		return (0);
	va_start(ap, fmt);
	len = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(buf))
		return (-1);
	if (sendto(sdnotify_s, buf, len, MSG_NOSIGNAL,
	    (struct sockaddr *)&sdnotify_sun, sdnotify_len) == -1)
		return (-1);
	return (0);
}

/* Does the service manager want WATCHDOG=1 (at least every second)? */
int
compat_sdnotify_watchdog(void)
{
	return (sdnotify_s != -1 && sdnotify_watchdog);
}
