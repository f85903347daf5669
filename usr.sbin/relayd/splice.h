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

#include <event.h>

struct rsplice;

struct splice_backend {
	const char	*sb_name;
	int		 sb_engine;		/* SPLICE_ENGINE_* */
	int		 sb_native_idle;	/* keeps idle time itself */
	int		(*sb_available)(void);
	int		(*sb_start)(struct rsplice *);
	void		(*sb_stop)(struct rsplice *);
	void		(*sb_free)(struct rsplice *);
	void		(*sb_poll)(struct rsplice *);	/* refresh counts */
};

struct rsplice {
	int			 sp_src;
	int			 sp_drain;
	off_t			 sp_max;	/* 0: no limit */
	struct timeval		 sp_idle;	/* 0: no limit */
	off_t			 sp_count;	/* bytes moved to the drain */
	off_t			 sp_total;	/* over every splice */
	int			 sp_active;
	int			 sp_srceof;
	struct timeval		 sp_lastmove;
	void			(*sp_done)(struct rsplice *, int, void *);
	void			*sp_arg;
	const struct splice_backend *sp_be;

	/* back end state */
	struct event		 sp_evread;
	struct event		 sp_evwrite;
	struct event		 sp_evidle;
	int			 sp_evset;
	int			 sp_pipe[2];	/* pipe */
	size_t			 sp_inpipe;
	size_t			 sp_pipesize;
	char			*sp_buf;	/* copy */
	size_t			 sp_buflen;
	size_t			 sp_bufoff;
};

/* splice.c */
int	 splice_engine_init(int);
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
size_t	 splice_pending(const struct rsplice *);
int	 splice_check(int, int);
int	 splice_fds_held(void);

/* called by the back ends */
int	 splice_moved(struct rsplice *, size_t);
void	 splice_finish(struct rsplice *, int);
void	 splice_idle_arm(struct rsplice *);
off_t	 splice_room(const struct rsplice *, size_t);

/* splice_copy.c */
extern const struct splice_backend splice_copy_backend;
int	 splice_copy_flush(struct rsplice *);

/* splice_pipe.c */
extern const struct splice_backend splice_pipe_backend;
int	 splice_pipe_fds(void);

/* splice_so.c */
extern const struct splice_backend splice_so_backend;

#endif /* RELAYD_SPLICE_H */
