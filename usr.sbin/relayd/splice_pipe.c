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
 * The pipe back end (Linux): splice(2) from the source socket into a
 * pipe and from the pipe into the drain, so the bytes never reach user
 * space.  A full pipe stops reading: the TCP window of the source closes
 * (back-pressure).  Where splice(2) refuses a socket, the splice carries
 * on with the copy back end.
 */

#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "splice.h"

#define PIPE_WANTSIZE	(256 * 1024)
#define PIPE_ROUNDS	16
#define PIPE_POOLMAX	128

struct pipe_state {
	struct event	 ps_evread;
	struct event	 ps_evwrite;
	int		 ps_evset;
	int		 ps_pipe[2];
	size_t		 ps_inpipe;
	size_t		 ps_pipesize;
};

struct pipe_pool_entry {
	int	 fds[2];
	size_t	 size;
};

static struct pipe_pool_entry	 pool[PIPE_POOLMAX];
static int			 npool;
static int			 npipes;	/* open, pooled or not */

static int	 pipe_available(void);
static int	 pipe_start(struct rsplice *);
static void	 pipe_stop(struct rsplice *);
static void	 pipe_free(struct rsplice *);
static size_t	 pipe_pending(const struct rsplice *);
static int	 pipe_fds(void);
static void	 pipe_read(int, short, void *);
static void	 pipe_write(int, short, void *);

const struct splice_backend splice_pipe_backend = {
	"pipe", SPLICE_ENGINE_PIPE, 0, 1, pipe_available, pipe_start, pipe_stop,
	pipe_free, NULL, pipe_pending, pipe_fds
};

static int
pipe_fds(void)
{
	return (2 * npipes);
}

static int
pipe_available(void)
{
	int	 fds[2];

	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) == -1)
		return (0);
	close(fds[0]);
	close(fds[1]);
	return (1);
}

static int
pipe_get(struct pipe_state *ps)
{
	int	 size;

	if (npool > 0) {
		npool--;
		ps->ps_pipe[0] = pool[npool].fds[0];
		ps->ps_pipe[1] = pool[npool].fds[1];
		ps->ps_pipesize = pool[npool].size;
		return (0);
	}
	if (pipe2(ps->ps_pipe, O_NONBLOCK | O_CLOEXEC) == -1)
		return (-1);
	npipes++;
	/* a larger pipe means fewer rounds; the kernel may say no */
	(void)fcntl(ps->ps_pipe[1], F_SETPIPE_SZ, PIPE_WANTSIZE);
	if ((size = fcntl(ps->ps_pipe[1], F_GETPIPE_SZ)) <= 0)
		size = 65536;
	ps->ps_pipesize = size;
	return (0);
}

/* The pool never holds more than a sixteenth of our descriptors. */
static int
pipe_poolmax(void)
{
	static int	 max = -1;

	if (max == -1) {
		max = getdtablesize() / 32;
		if (max > PIPE_POOLMAX)
			max = PIPE_POOLMAX;
	}
	return (max);
}

static void
pipe_put(struct pipe_state *ps)
{
	if (ps->ps_pipe[0] == -1)
		return;
	/*
	 * Only an empty pipe can serve another splice, and only one of the
	 * size we asked for: past the kernel's per-user pipe budget new
	 * pipes are small, and a small pipe in the pool would slow every
	 * transfer that gets it later.
	 */
	if (ps->ps_inpipe == 0 && ps->ps_pipesize >= PIPE_WANTSIZE &&
	    npool < pipe_poolmax()) {
		pool[npool].fds[0] = ps->ps_pipe[0];
		pool[npool].fds[1] = ps->ps_pipe[1];
		pool[npool].size = ps->ps_pipesize;
		npool++;
	} else {
		close(ps->ps_pipe[0]);
		close(ps->ps_pipe[1]);
		npipes--;
	}
	ps->ps_pipe[0] = ps->ps_pipe[1] = -1;
	ps->ps_inpipe = 0;
}

/*
 * A direction holds a pipe only while bytes are on their way: it takes
 * one from the pool when its source is readable and gives it back once
 * the pipe is empty, so idle sessions hold no pipe.
 */
static int
pipe_start(struct rsplice *sp)
{
	struct pipe_state	*ps = sp->sp_state;

	if (ps == NULL) {
		if ((ps = calloc(1, sizeof(*ps))) == NULL)
			return (-1);
		ps->ps_pipe[0] = ps->ps_pipe[1] = -1;
		sp->sp_state = ps;
	}
	event_set(&ps->ps_evread, sp->sp_src, EV_READ | EV_PERSIST,
	    pipe_read, sp);
	event_set(&ps->ps_evwrite, sp->sp_drain, EV_WRITE, pipe_write, sp);
	ps->ps_evset = 1;
	if (ps->ps_inpipe > 0)
		event_add(&ps->ps_evwrite, NULL);
	else
		event_add(&ps->ps_evread, NULL);
	return (0);
}

static void
pipe_stop(struct rsplice *sp)
{
	struct pipe_state	*ps = sp->sp_state;

	if (ps == NULL || !ps->ps_evset)
		return;
	event_del(&ps->ps_evread);
	event_del(&ps->ps_evwrite);
	ps->ps_evset = 0;
}

static void
pipe_free(struct rsplice *sp)
{
	struct pipe_state	*ps = sp->sp_state;

	if (ps == NULL)
		return;
	pipe_put(ps);
	free(ps);
	sp->sp_state = NULL;
}

static size_t
pipe_pending(const struct rsplice *sp)
{
	const struct pipe_state	*ps = sp->sp_state;

	return (ps == NULL ? 0 : ps->ps_inpipe);
}

/* Empty the pipe into the drain; 1 empty, 0 drain full, -1 ended. */
static int
pipe_flush(struct rsplice *sp)
{
	struct pipe_state	*ps = sp->sp_state;
	ssize_t			 n;

	while (ps->ps_inpipe > 0) {
		n = splice(ps->ps_pipe[0], NULL, sp->sp_drain, NULL,
		    ps->ps_inpipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				event_del(&ps->ps_evread);
				event_add(&ps->ps_evwrite, NULL);
				return (0);
			}
			splice_finish(sp, errno);
			return (-1);
		}
		ps->ps_inpipe -= n;
		if (splice_moved(sp, n, SPLICE_SPLICED))
			return (-1);
	}
	return (1);
}

static void
pipe_read(int fd, short event, void *arg)
{
	struct rsplice		*sp = arg;
	struct pipe_state	*ps = sp->sp_state;
	off_t			 room;
	size_t			 want;
	ssize_t			 n;
	int			 i, error;

	(void)fd;
	(void)event;
	if (ps->ps_pipe[0] == -1 && pipe_get(ps) == -1) {
		/* no descriptors for a pipe: the copy back end needs none */
		splice_fallback(sp);
		return;
	}
	for (i = 0; i < PIPE_ROUNDS; i++) {
		want = ps->ps_pipesize - ps->ps_inpipe;
		room = splice_room(sp, ps->ps_inpipe);
		if ((off_t)want > room)
			want = room;
		if (want == 0)
			break;
		n = splice(sp->sp_src, NULL, ps->ps_pipe[1], NULL, want,
		    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			if (errno == EINVAL && sp->sp_count == 0 &&
			    ps->ps_inpipe == 0) {
				/* splice(2) does not take this source */
				splice_fallback(sp);
				return;
			}
			error = errno;
			if (pipe_flush(sp) == -1)
				return;
			splice_finish(sp, error);
			return;
		}
		if (n == 0) {
			/* end of file: what is in the pipe goes first */
			sp->sp_srceof = 1;
			if (pipe_flush(sp) != 1) {
				if (sp->sp_active)
					event_del(&ps->ps_evread);
				return;
			}
			splice_finish(sp, 0);
			return;
		}
		ps->ps_inpipe += n;
		if (pipe_flush(sp) != 1)
			return;
		/*
		 * Less than asked for: the socket is most likely empty.
		 * The read event is level-triggered and comes back if it
		 * is not; asking again here would cost an EAGAIN a time.
		 */
		if ((size_t)n < want)
			break;
	}
	/* empty: back to the pool until the source has more */
	if (pipe_flush(sp) == 1)
		pipe_put(ps);
}

static void
pipe_write(int fd, short event, void *arg)
{
	struct rsplice		*sp = arg;
	struct pipe_state	*ps = sp->sp_state;

	(void)fd;
	(void)event;
	if (pipe_flush(sp) != 1)
		return;
	if (sp->sp_srceof) {
		splice_finish(sp, 0);
		return;
	}
	event_add(&ps->ps_evread, NULL);
	pipe_read(sp->sp_src, EV_READ, sp);
}
