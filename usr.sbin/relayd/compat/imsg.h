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
 * imsg-compatible message framing over a stream socket: a 16-byte header
 * (type, len, flags, peerid, pid) followed by at most MAX_IMSGSIZE - 16
 * bytes of data, with at most one descriptor passed per message.
 */

#ifndef RELAYD_IMSG_H
#define RELAYD_IMSG_H

#include <sys/types.h>
#include <sys/queue.h>
#include <stdint.h>

#define IBUF_READ_SIZE		65535
#define IMSG_HEADER_SIZE	sizeof(struct imsg_hdr)
#define MAX_IMSGSIZE		16384
#define IMSGF_HASFD		1

struct ibuf {
	TAILQ_ENTRY(ibuf)	 entry;
	unsigned char		*buf;
	size_t			 size;
	size_t			 wpos;
	size_t			 rpos;
	int			 fd;
};

struct msgbuf {
	TAILQ_HEAD(, ibuf)	 bufs;
	uint32_t		 queued;
	size_t			 queuedlen;	/* their bytes unwritten */
	int			 fd;
};

struct imsg_fd {
	TAILQ_ENTRY(imsg_fd)	 entry;
	int			 fd;
};

struct ibuf_read {
	unsigned char		 buf[IBUF_READ_SIZE];
	size_t			 wpos;
};

struct imsgbuf {
	TAILQ_HEAD(, imsg_fd)	 fds;
	struct ibuf_read	 r;
	struct msgbuf		 w;
	int			 fd;
	pid_t			 pid;
	unsigned int		 nfds;
};

struct imsg_hdr {
	uint32_t		 type;
	uint16_t		 len;
	uint16_t		 flags;
	uint32_t		 peerid;
	uint32_t		 pid;
};

struct imsg {
	struct imsg_hdr		 hdr;
	int			 fd;
	void			*data;
};

/* At most this many descriptors may wait for their message. */
#define IMSG_MAXQUEUEDFDS	16

void	 imsg_init(struct imsgbuf *, int);
ssize_t	 imsg_read(struct imsgbuf *);
ssize_t	 imsg_get(struct imsgbuf *, struct imsg *);
int	 imsg_compose(struct imsgbuf *, uint32_t, uint32_t, pid_t, int,
	    const void *, size_t);
int	 imsg_flush(struct imsgbuf *);
void	 imsg_clear(struct imsgbuf *);
void	 imsg_free(struct imsg *);
int	 msgbuf_write(struct msgbuf *);
void	 msgbuf_clear(struct msgbuf *);

#endif /* RELAYD_IMSG_H */
