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
 * The copy back end: read into a buffer, write it out.  It is the
 * reference the other back ends are tested against, the fallback where
 * the system cannot splice, and the relay's path for "tcp no splice".
 * Back-pressure: while the buffer cannot be written, nothing is read.
 */

#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "splice.h"

#define COPY_BUFSIZE	(64 * 1024)
#define COPY_ROUNDS	16		/* reads per event, for fairness */

struct copy_state {
	struct event	 cs_evread;
	struct event	 cs_evwrite;
	int		 cs_evset;
	char		 cs_buf[COPY_BUFSIZE];
	size_t		 cs_len;
	size_t		 cs_off;
};

static int	 copy_available(void);
static int	 copy_start(struct rsplice *);
static void	 copy_stop(struct rsplice *);
static void	 copy_free(struct rsplice *);
static size_t	 copy_pending(const struct rsplice *);
static int	 copy_flush(struct rsplice *);
static void	 copy_read(int, short, void *);
static void	 copy_write(int, short, void *);

const struct splice_backend splice_copy_backend = {
	"copy", SPLICE_ENGINE_COPY, 0, 1, copy_available, copy_start, copy_stop,
	copy_free, NULL, copy_pending, NULL
};

static int
copy_available(void)
{
	return (1);
}

static int
copy_start(struct rsplice *sp)
{
	struct copy_state	*cs = sp->sp_state;

	if (cs == NULL) {
		if ((cs = malloc(sizeof(*cs))) == NULL)
			return (-1);
		cs->cs_len = cs->cs_off = 0;
		sp->sp_state = cs;
	}
	event_set(&cs->cs_evread, sp->sp_src, EV_READ | EV_PERSIST,
	    copy_read, sp);
	event_set(&cs->cs_evwrite, sp->sp_drain, EV_WRITE, copy_write, sp);
	cs->cs_evset = 1;
	if (cs->cs_len > cs->cs_off)
		event_add(&cs->cs_evwrite, NULL);
	else
		event_add(&cs->cs_evread, NULL);
	return (0);
}

static void
copy_stop(struct rsplice *sp)
{
	struct copy_state	*cs = sp->sp_state;

	if (cs == NULL || !cs->cs_evset)
		return;
	event_del(&cs->cs_evread);
	event_del(&cs->cs_evwrite);
	cs->cs_evset = 0;
}

static void
copy_free(struct rsplice *sp)
{
	free(sp->sp_state);
	sp->sp_state = NULL;
}

static size_t
copy_pending(const struct rsplice *sp)
{
	const struct copy_state	*cs = sp->sp_state;

	return (cs == NULL ? 0 : cs->cs_len - cs->cs_off);
}

/*
 * Write what the buffer holds.  Returns 1 when the buffer is empty, 0
 * when the drain is full (a write event is waiting), -1 when the splice
 * ended (and may be gone).
 */
static int
copy_flush(struct rsplice *sp)
{
	struct copy_state	*cs = sp->sp_state;
	ssize_t			 n;

	while (cs->cs_off < cs->cs_len) {
		n = send(sp->sp_drain, cs->cs_buf + cs->cs_off,
		    cs->cs_len - cs->cs_off, MSG_NOSIGNAL);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				event_del(&cs->cs_evread);
				event_add(&cs->cs_evwrite, NULL);
				return (0);
			}
			splice_finish(sp, errno);
			return (-1);
		}
		cs->cs_off += n;
		if (cs->cs_off == cs->cs_len)
			cs->cs_off = cs->cs_len = 0;
		if (splice_moved(sp, n, SPLICE_COPIED))
			return (-1);
	}
	return (1);
}

static void
copy_read(int fd, short event, void *arg)
{
	struct rsplice		*sp = arg;
	struct copy_state	*cs = sp->sp_state;
	off_t			 room;
	ssize_t			 n;
	int			 i;

	(void)fd;
	(void)event;
	for (i = 0; i < COPY_ROUNDS; i++) {
		if (copy_flush(sp) != 1)
			return;
		room = splice_room(sp, 0);
		if (room > COPY_BUFSIZE)
			room = COPY_BUFSIZE;
		if (room == 0)
			return;
		n = read(sp->sp_src, cs->cs_buf, room);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			splice_finish(sp, errno);
			return;
		}
		if (n == 0) {
			sp->sp_srceof = 1;
			splice_finish(sp, 0);
			return;
		}
		cs->cs_off = 0;
		cs->cs_len = n;
	}
	(void)copy_flush(sp);
}

static void
copy_write(int fd, short event, void *arg)
{
	struct rsplice		*sp = arg;
	struct copy_state	*cs = sp->sp_state;

	(void)fd;
	(void)event;
	if (copy_flush(sp) != 1)
		return;
	event_add(&cs->cs_evread, NULL);
	/* the source may have data and no edge to tell us */
	copy_read(sp->sp_src, EV_READ, sp);
}
