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
 * The splice engine's common part: argument checks in the order
 * SO_SPLICE makes them, the busy registry, counters, the idle timer and
 * the choice of back end.
 */

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compat/compat.h"
#include "splice.h"

#define SPLICE_NOLIMIT	((off_t)INT64_MAX)

static const struct splice_backend *backends[] = {
	&splice_so_backend,
	&splice_pipe_backend,
	&splice_copy_backend
};

static const struct splice_backend	*engine = &splice_copy_backend;

/* which splice uses a descriptor as source, and as drain */
static struct rsplice	**busy_src;
static struct rsplice	**busy_drain;
static int		  busy_size;

static void	 splice_idle(int, short, void *);
static void	 splice_idle_arm(struct rsplice *);

/*
 * Choose the back end: the one asked for, or with SPLICE_ENGINE_AUTO the
 * best this system has.  Returns -1 when the one asked for is missing.
 */
int
splice_engine_init(int want)
{
	unsigned int	 i;

	for (i = 0; i < nitems(backends); i++) {
		if (want != SPLICE_ENGINE_AUTO &&
		    backends[i]->sb_engine != want)
			continue;
		if (backends[i]->sb_available()) {
			engine = backends[i];
			return (0);
		}
	}
	engine = &splice_copy_backend;
	return (want == SPLICE_ENGINE_AUTO ? 0 : -1);
}

/*
 * The engine of that name (relayd.conf's "splice engine"), one that this
 * system has, or -1; names, when it is not NULL, gets the list of them.
 */
int
splice_engine_byname(const char *name, char *names, size_t len)
{
	int	 i, n, left, found = -1;

	if (strcmp(name, "auto") == 0)
		found = SPLICE_ENGINE_AUTO;
	for (i = 0, left = 0; i < (int)nitems(backends); i++)
		left += backends[i]->sb_available() != 0;
	if (names != NULL)
		(void)strlcpy(names, "auto", len);
	/* the simplest first: "auto, copy or pipe" */
	for (i = nitems(backends) - 1, n = 0; i >= 0; i--) {
		if (!backends[i]->sb_available())
			continue;
		if (strcmp(name, backends[i]->sb_name) == 0)
			found = backends[i]->sb_engine;
		if (names != NULL) {
			(void)strlcat(names, ++n < left ? ", " : " or ", len);
			(void)strlcat(names, backends[i]->sb_name, len);
		}
	}
	return (found);
}

const char *
splice_engine_name(int id)
{
	unsigned int	 i;

	if (id == SPLICE_ENGINE_AUTO)
		return ("auto");
	for (i = 0; i < nitems(backends); i++)
		if (backends[i]->sb_engine == id)
			return (backends[i]->sb_name);
	return ("invalid");
}

int
splice_engine_id(void)
{
	return (engine->sb_engine);
}

const char *
splice_engine_current(void)
{
	return (engine->sb_name);
}

void
splice_init(struct rsplice *sp)
{
	memset(sp, 0, sizeof(*sp));
	sp->sp_src = -1;
	sp->sp_drain = -1;
}

static int
busy_grow(int fd)
{
	struct rsplice	**s, **d;
	int		  n;

	if (fd < busy_size)
		return (0);
	n = busy_size ? busy_size : 64;
	while (n <= fd)
		n *= 2;
	if ((s = reallocarray(busy_src, n, sizeof(*s))) == NULL)
		return (-1);
	busy_src = s;
	if ((d = reallocarray(busy_drain, n, sizeof(*d))) == NULL)
		return (-1);
	busy_drain = d;
	memset(busy_src + busy_size, 0, (n - busy_size) * sizeof(*s));
	memset(busy_drain + busy_size, 0, (n - busy_size) * sizeof(*d));
	busy_size = n;
	return (0);
}

static int
sock_stream(int fd, int *type, int *family)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len = sizeof(ss), tlen = sizeof(*type);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) == -1)
		return (-1);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, type, &tlen) == -1)
		return (-1);
	*family = ss.ss_family;
	return (0);
}

/* TCP over IPv4 and IPv6, as SO_SPLICE; unix sockets where asked. */
static int
sock_family_ok(int family, int flags)
{
	return (family == AF_INET || family == AF_INET6 ||
	    (family == AF_UNIX && (flags & SPLICE_F_UNIX)));
}

static int
sock_connected(int fd, int family)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len = sizeof(ss);

	if (family == AF_UNIX)
		return (getpeername(fd, (struct sockaddr *)&ss, &len) == 0);
	return (compat_tcp_connected(fd));
}

/*
 * The checks of SO_SPLICE, in its order, for a source and a drain that
 * are not spliced yet.  Returns 0 or an errno.  With SPLICE_F_UNIX,
 * relayd's extension, unix stream sockets pass too, with each other
 * and with TCP.
 */
static int
splice_check_flags(int src, int drain, int flags)
{
	int		 stype, dtype, sfam, dfam, acc;
	socklen_t	 len;

	if (fcntl(src, F_GETFD) == -1)
		return (EBADF);
	if (sock_stream(src, &stype, &sfam) == -1)
		return (errno);
	if (!sock_family_ok(sfam, flags) || stype != SOCK_STREAM)
		return (EPROTONOSUPPORT);
	if (drain < 0)
		return (EINVAL);
	if (fcntl(drain, F_GETFD) == -1)
		return (EBADF);
	if (sock_stream(drain, &dtype, &dfam) == -1)
		return (errno == ENOTSOCK ? ENOTSOCK : EPROTONOSUPPORT);
	if (!sock_family_ok(dfam, flags) || dtype != stype)
		return (EPROTONOSUPPORT);

	len = sizeof(acc);
	if (getsockopt(src, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) == 0 &&
	    acc)
		return (EOPNOTSUPP);
	len = sizeof(acc);
	if (getsockopt(drain, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) == 0 &&
	    acc)
		return (EOPNOTSUPP);
	if (!sock_connected(src, sfam) || !sock_connected(drain, dfam))
		return (ENOTCONN);
	return (0);
}

int
splice_check(int src, int drain)
{
	return (splice_check_flags(src, drain, 0));
}

/* Is either socket a unix one? */
static int
splice_unix(int src, int drain)
{
	int	 type, fam;

	return ((sock_stream(src, &type, &fam) == 0 && fam == AF_UNIX) ||
	    (sock_stream(drain, &type, &fam) == 0 && fam == AF_UNIX));
}

/*
 * Splice src into drain.  With SPLICE_F_COPY the copy back end is used
 * whatever the engine is; with SPLICE_F_UNIX unix sockets may be
 * spliced, by the copy back end where the engine cannot (SO_SPLICE
 * refuses them).  SPLICE_F_TRUSTED spares SO_SPLICE's checks of the
 * sockets (a caller that made and connected them itself); a socket the
 * peer closed meanwhile then ends the splice through its completion.
 * Returns 0, or -1 with errno as SO_SPLICE would set it.
 */
int
splice_start(struct rsplice *sp, int src, int drain, off_t max,
    const struct timeval *idle, void (*done)(struct rsplice *, int, void *),
    void *arg, int flags)
{
	int	 force_copy = (flags & SPLICE_F_COPY) != 0;
	int	 error;

	if (max < 0 || (idle != NULL && (idle->tv_sec < 0 ||
	    idle->tv_usec < 0 || idle->tv_usec >= 1000000))) {
		errno = EINVAL;
		return (-1);
	}
	if ((flags & SPLICE_F_TRUSTED) == 0 &&
	    (error = splice_check_flags(src, drain, flags)) != 0) {
		errno = error;
		return (-1);
	}
	if ((flags & SPLICE_F_UNIX) && !engine->sb_unix &&
	    splice_unix(src, drain))
		force_copy = 1;
	if (busy_grow(src > drain ? src : drain) == -1)
		return (-1);
	if ((busy_src[src] != NULL && busy_src[src] != sp) ||
	    (busy_drain[drain] != NULL && busy_drain[drain] != sp)) {
		errno = EBUSY;
		return (-1);
	}
	if (sp->sp_active)
		splice_stop(sp);

	/* data still held from a previous splice stays first in line */
	if (sp->sp_be != NULL && (sp->sp_src != src || sp->sp_drain != drain))
		splice_free(sp);

	sp->sp_src = src;
	sp->sp_drain = drain;
	sp->sp_max = max;
	if (idle != NULL)
		sp->sp_idle = *idle;
	else
		timerclear(&sp->sp_idle);
	sp->sp_count = 0;
	sp->sp_srceof = 0;
	sp->sp_done = done;
	sp->sp_arg = arg;
	if (sp->sp_be == NULL)
		sp->sp_be = force_copy ? &splice_copy_backend : engine;
	getevtime(&sp->sp_lastmove);

	busy_src[src] = sp;
	busy_drain[drain] = sp;
	sp->sp_active = 1;
	if (sp->sp_be->sb_start(sp) == -1) {
		error = errno;
		splice_stop(sp);
		errno = error;
		return (-1);
	}
	if (timerisset(&sp->sp_idle) && !sp->sp_be->sb_native_idle) {
		evtimer_set(&sp->sp_evidle, splice_idle, sp);
		splice_idle_arm(sp);
	}
	return (0);
}

/* Unsplice: no callback, and what the engine holds stays held. */
void
splice_stop(struct rsplice *sp)
{
	if (!sp->sp_active)
		return;
	sp->sp_active = 0;
	sp->sp_be->sb_stop(sp);
	if (timerisset(&sp->sp_idle) && !sp->sp_be->sb_native_idle)
		evtimer_del(&sp->sp_evidle);
	if (sp->sp_src >= 0 && sp->sp_src < busy_size &&
	    busy_src[sp->sp_src] == sp)
		busy_src[sp->sp_src] = NULL;
	if (sp->sp_drain >= 0 && sp->sp_drain < busy_size &&
	    busy_drain[sp->sp_drain] == sp)
		busy_drain[sp->sp_drain] = NULL;
}

/* Give back what the back end holds (pipes, buffers). */
void
splice_free(struct rsplice *sp)
{
	splice_stop(sp);
	if (sp->sp_be != NULL)
		sp->sp_be->sb_free(sp);
	sp->sp_state = NULL;
	sp->sp_be = NULL;
}

/*
 * The back end cannot serve this splice (splice(2) refuses the socket,
 * no descriptor for a pipe) before it moved anything: the copy back end
 * takes over.  The callback may run: callers return at once.
 */
void
splice_fallback(struct rsplice *sp)
{
	sp->sp_be->sb_stop(sp);
	sp->sp_be->sb_free(sp);
	sp->sp_state = NULL;
	sp->sp_be = &splice_copy_backend;
	if (sp->sp_be->sb_start(sp) == -1)
		splice_finish(sp, errno);
}

off_t
splice_count(struct rsplice *sp)
{
	if (sp->sp_active && sp->sp_be->sb_poll != NULL)
		sp->sp_be->sb_poll(sp);
	return (sp->sp_count);
}

/* Bytes moved over every splice of this source, by what moved them. */
uint64_t
splice_bytes(struct rsplice *sp, int kind)
{
	(void)splice_count(sp);
	return (sp->sp_bytes[kind]);
}

uint64_t
splice_total(struct rsplice *sp)
{
	(void)splice_count(sp);
	return (sp->sp_bytes[SPLICE_SPLICED] + sp->sp_bytes[SPLICE_COPIED]);
}

int
splice_active(const struct rsplice *sp)
{
	return (sp->sp_active);
}

/* When bytes last moved (or the splice began). */
const struct timeval *
splice_lastmove(const struct rsplice *sp)
{
	return (&sp->sp_lastmove);
}

/* Bytes taken from the source but not yet written to the drain. */
size_t
splice_pending(const struct rsplice *sp)
{
	if (sp->sp_be == NULL || sp->sp_be->sb_pending == NULL)
		return (0);
	return (sp->sp_be->sb_pending(sp));
}

/* How much more may be taken from the source, given what is held. */
off_t
splice_room(const struct rsplice *sp, size_t held)
{
	off_t	 left;

	if (sp->sp_max == 0)
		return (SPLICE_NOLIMIT);
	left = sp->sp_max - sp->sp_count - (off_t)held;
	return (left > 0 ? left : 0);
}

/*
 * End the splice and tell its owner.  The callback may free the splice:
 * callers return at once.
 */
void
splice_finish(struct rsplice *sp, int reason)
{
	splice_stop(sp);
	sp->sp_done(sp, reason, sp->sp_arg);
}

/*
 * Bytes reached the drain, moved as kind says (SPLICE_SPLICED or
 * SPLICE_COPIED).  Returns 1 when that ended the splice.
 */
int
splice_moved(struct rsplice *sp, size_t n, int kind)
{
	sp->sp_count += n;
	sp->sp_bytes[kind] += n;
	if (timerisset(&sp->sp_idle))
		getevtime(&sp->sp_lastmove);
	if (sp->sp_max != 0 && sp->sp_count >= sp->sp_max) {
		splice_finish(sp, EFBIG);
		return (1);
	}
	return (0);
}

static void
splice_idle_arm(struct rsplice *sp)
{
	struct timeval	 now, due, left;

	getevtime(&now);
	timeradd(&sp->sp_lastmove, &sp->sp_idle, &due);
	if (timercmp(&due, &now, <=))
		timerclear(&left);
	else
		timersub(&due, &now, &left);
	evtimer_add(&sp->sp_evidle, &left);
}

/* The timer is lazy: moves only note the time, the timer checks it. */
static void
splice_idle(int fd, short event, void *arg)
{
	struct rsplice	*sp = arg;
	struct timeval	 now, due;

	(void)fd;
	(void)event;
	if (!sp->sp_active)
		return;
	getevtime(&now);
	timeradd(&sp->sp_lastmove, &sp->sp_idle, &due);
	if (timercmp(&now, &due, <)) {
		splice_idle_arm(sp);
		return;
	}
	splice_finish(sp, ETIMEDOUT);
}

/* Descriptors the engine holds (pipes in use and pooled). */
int
splice_fds_held(void)
{
	unsigned int	 i;
	int		 n = 0;

	for (i = 0; i < nitems(backends); i++)
		if (backends[i]->sb_fds_held != NULL)
			n += backends[i]->sb_fds_held();
	return (n);
}
