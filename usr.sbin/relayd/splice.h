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
 * The splice engine: OpenBSD's SO_SPLICE contract (shared/SO_SPLICE.md
 * in the design notes) as a user-space object.  A splice moves bytes one
 * way, from src to drain, until EOF, max bytes, idle time, or an error,
 * then calls sp_done once with the reason: 0 (EOF), EFBIG (max reached),
 * ETIMEDOUT (idle), or an errno.  EOF is never passed on: the caller
 * shuts the drain down when it wants to.
 */

#ifndef RELAYD_SPLICE_H
#define RELAYD_SPLICE_H

#include <sys/types.h>
#include <sys/time.h>

#include <stdint.h>

#include <event.h>

#define SPLICE_ENGINE_AUTO	0
#define SPLICE_ENGINE_COPY	1
#define SPLICE_ENGINE_PIPE	2
#define SPLICE_ENGINE_SO_SPLICE	3

/* splice_start() flags */
#define SPLICE_F_COPY		0x01	/* the copy back end, whatever */
#define SPLICE_F_UNIX		0x02	/* unix sockets too (relayd's) */
#define SPLICE_F_TRUSTED	0x04	/* connected stream sockets: no checks */

/* What moved a byte: the kernel (spliced) or a copy through user space */
#define SPLICE_SPLICED		0
#define SPLICE_COPIED		1

struct rsplice;

/*
 * A back end.  Its state hangs off sp_state, private to it; the common
 * part only calls these operations.  sb_start may be called again on a
 * splice whose state the back end already holds (data of the last
 * splice still on its way goes first).
 */
struct splice_backend {
	const char	*sb_name;
	int		 sb_engine;		/* SPLICE_ENGINE_* */
	int		 sb_native_idle;	/* the kernel keeps sp_idle */
	int		 sb_unix;		/* splices unix sockets */
	int		(*sb_available)(void);
	int		(*sb_start)(struct rsplice *);
	void		(*sb_stop)(struct rsplice *);
	void		(*sb_free)(struct rsplice *);
	void		(*sb_poll)(struct rsplice *);	/* refresh counts */
	size_t		(*sb_pending)(const struct rsplice *);
	int		(*sb_fds_held)(void);		/* every splice's */
};

struct rsplice {
	int			 sp_src;
	int			 sp_drain;
	off_t			 sp_max;	/* 0: no limit */
	struct timeval		 sp_idle;	/* 0: no limit */
	off_t			 sp_count;	/* this splice */
	uint64_t		 sp_bytes[2];	/* every splice, by mover */
	int			 sp_active;
	int			 sp_srceof;
	struct timeval		 sp_lastmove;
	void			(*sp_done)(struct rsplice *, int, void *);
	void			*sp_arg;
	const struct splice_backend *sp_be;
	void			*sp_state;	/* the back end's */
	struct event		 sp_evidle;
};

/* splice.c */
int	 splice_engine_init(int);
int	 splice_engine_byname(const char *, char *, size_t);
const char *
	 splice_engine_name(int);
int	 splice_engine_id(void);
const char *
	 splice_engine_current(void);
void	 splice_init(struct rsplice *);
int	 splice_start(struct rsplice *, int, int, off_t,
	    const struct timeval *, void (*)(struct rsplice *, int, void *),
	    void *, int);
void	 splice_stop(struct rsplice *);
void	 splice_free(struct rsplice *);
off_t	 splice_count(struct rsplice *);
uint64_t splice_bytes(struct rsplice *, int);
uint64_t splice_total(struct rsplice *);
int	 splice_active(const struct rsplice *);
const struct timeval *
	 splice_lastmove(const struct rsplice *);
size_t	 splice_pending(const struct rsplice *);
int	 splice_check(int, int);
int	 splice_fds_held(void);

/* called by the back ends */
int	 splice_moved(struct rsplice *, size_t, int);
void	 splice_finish(struct rsplice *, int);
void	 splice_fallback(struct rsplice *);
off_t	 splice_room(const struct rsplice *, size_t);

/*
 * util.c: the monotonic clocks, the event loop's of the idle limit and
 * every other deadline, the exact one of durations
 */
struct event_base;
void	 getevtime_init(struct event_base *);
void	 getevtime(struct timeval *);
struct event;
int	 evtimer_early(struct event *, const struct timeval *);
void	 getmonotime(struct timeval *);
time_t	 getmonosec(void);
struct timespec;
long long timespec_ms(const struct timespec *, const struct timespec *);

/* the back ends, each in its own file */
extern const struct splice_backend splice_copy_backend;
extern const struct splice_backend splice_pipe_backend;
extern const struct splice_backend splice_so_backend;

#endif /* RELAYD_SPLICE_H */
