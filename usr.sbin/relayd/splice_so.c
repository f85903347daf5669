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
 * The so_splice back end (OpenBSD, FreeBSD >= 14.2): the kernel does all
 * of it, the idle timer included.  The end of a splice shows as the
 * source becoming readable, and SO_ERROR says why.  Linux has no
 * SO_SPLICE: the Makefile builds splice_none.c there instead, and `make
 * lint' compiles this file against regress/splice/bsd_splice.h, which
 * declares SO_SPLICE and struct splice as the BSDs' <sys/socket.h> do.
 */

#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "splice.h"

struct so_state {
	struct event	 ss_ev;
	int		 ss_evset;
};

static int	 so_available(void);
static int	 so_start(struct rsplice *);
static void	 so_stop(struct rsplice *);
static void	 so_free(struct rsplice *);
static void	 so_done(int, short, void *);
static void	 so_poll(struct rsplice *);

const struct splice_backend splice_so_backend = {
	"so_splice", SPLICE_ENGINE_SO_SPLICE, 1, 0, so_available, so_start,
	so_stop, so_free, so_poll, NULL, NULL
};

static int
so_available(void)
{
	return (1);
}

static int
so_start(struct rsplice *sp)
{
	struct so_state	*ss = sp->sp_state;
	struct splice	 ksp;

	if (ss == NULL) {
		if ((ss = calloc(1, sizeof(*ss))) == NULL)
			return (-1);
		sp->sp_state = ss;
	}
	memset(&ksp, 0, sizeof(ksp));
	ksp.sp_fd = sp->sp_drain;
	ksp.sp_max = sp->sp_max;
	ksp.sp_idle = sp->sp_idle;
	if (setsockopt(sp->sp_src, SOL_SOCKET, SO_SPLICE, &ksp,
	    sizeof(ksp)) == -1)
		return (-1);
	event_set(&ss->ss_ev, sp->sp_src, EV_READ, so_done, sp);
	event_add(&ss->ss_ev, NULL);
	ss->ss_evset = 1;
	return (0);
}

/* The kernel's count of this splice; what it adds was spliced. */
static void
so_poll(struct rsplice *sp)
{
	off_t		 n = 0;
	socklen_t	 len = sizeof(n);

	if (getsockopt(sp->sp_src, SOL_SOCKET, SO_SPLICE, &n, &len) == -1)
		return;
	if (n > sp->sp_count) {
		sp->sp_bytes[SPLICE_SPLICED] += n - sp->sp_count;
		sp->sp_count = n;
	}
}

static void
so_stop(struct rsplice *sp)
{
	struct so_state	*ss = sp->sp_state;

	if (ss == NULL || !ss->ss_evset)
		return;
	event_del(&ss->ss_ev);
	ss->ss_evset = 0;
	so_poll(sp);
	(void)setsockopt(sp->sp_src, SOL_SOCKET, SO_SPLICE, NULL, 0);
}

static void
so_free(struct rsplice *sp)
{
	free(sp->sp_state);
	sp->sp_state = NULL;
}

static void
so_done(int fd, short event, void *arg)
{
	struct rsplice	*sp = arg;
	struct so_state	*ss = sp->sp_state;
	int		 error = 0;
	socklen_t	 len = sizeof(error);

	(void)event;
	ss->ss_evset = 0;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == -1)
		error = errno;
	so_poll(sp);
	splice_finish(sp, error);
}
