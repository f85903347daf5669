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
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imsg.h"

#ifndef IOV_MAX
#define IOV_MAX		1024
#endif
#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL	0
#endif

/* Room for a few descriptors in one read; more is a protocol error. */
#define IMSG_CMSGFDS	8

static void	 msgbuf_consume(struct msgbuf *, size_t);
static int	 imsg_queuefds(struct imsgbuf *, struct msghdr *);

void
imsg_init(struct imsgbuf *ibuf, int fd)
{
	memset(ibuf, 0, sizeof(*ibuf));
	TAILQ_INIT(&ibuf->fds);
	TAILQ_INIT(&ibuf->w.bufs);
	ibuf->fd = fd;
	ibuf->w.fd = fd;
	ibuf->pid = getpid();
}

static int
imsg_queuefds(struct imsgbuf *ibuf, struct msghdr *msg)
{
	struct cmsghdr	*cmsg;
	struct imsg_fd	*ifd;
	int		 fd, bad = 0;
	size_t		 i, n;

	for (cmsg = CMSG_FIRSTHDR(msg); cmsg != NULL;
	    cmsg = CMSG_NXTHDR(msg, cmsg)) {
		if (cmsg->cmsg_level != SOL_SOCKET ||
		    cmsg->cmsg_type != SCM_RIGHTS)
			continue;
		n = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int),
			    sizeof(fd));
			if (bad || ibuf->nfds >= IMSG_MAXQUEUEDFDS ||
			    (ifd = calloc(1, sizeof(*ifd))) == NULL) {
				close(fd);
				bad = 1;
				continue;
			}
			ifd->fd = fd;
			TAILQ_INSERT_TAIL(&ibuf->fds, ifd, entry);
			ibuf->nfds++;
		}
	}
	if (msg->msg_flags & MSG_CTRUNC)
		bad = 1;
	return (bad ? -1 : 0);
}

/*
 * Read what the socket has.  Returns the number of bytes read, 0 on end
 * of file, -1 on error (EAGAIN when nothing is there yet; EBADMSG when
 * descriptors were lost or too many arrived).
 */
ssize_t
imsg_read(struct imsgbuf *ibuf)
{
	struct msghdr	 msg;
	struct iovec	 iov;
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int) * IMSG_CMSGFDS)];
	} cmsgbuf;
	ssize_t		 n;

	if (ibuf->r.wpos >= sizeof(ibuf->r.buf)) {
		errno = ENOBUFS;
		return (-1);
	}
	memset(&msg, 0, sizeof(msg));
	memset(&cmsgbuf, 0, sizeof(cmsgbuf));
	iov.iov_base = ibuf->r.buf + ibuf->r.wpos;
	iov.iov_len = sizeof(ibuf->r.buf) - ibuf->r.wpos;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cmsgbuf.buf;
	msg.msg_controllen = sizeof(cmsgbuf.buf);

	do {
		n = recvmsg(ibuf->fd, &msg, 0);
	} while (n == -1 && errno == EINTR);
	if (n == -1)
		return (-1);
	ibuf->r.wpos += n;
	if (imsg_queuefds(ibuf, &msg) == -1) {
		errno = EBADMSG;
		return (-1);
	}
	return (n);
}

/*
 * Take the next complete message out of the read buffer.  Returns its
 * whole length (header included), 0 when none is complete yet, or -1 for
 * a frame that cannot be valid (ERANGE: bad length or flags; EBADMSG: a
 * descriptor announced but never received).
 */
ssize_t
imsg_get(struct imsgbuf *ibuf, struct imsg *imsg)
{
	struct imsg_fd	*ifd;
	size_t		 datalen;

	if (ibuf->r.wpos < IMSG_HEADER_SIZE)
		return (0);
	memcpy(&imsg->hdr, ibuf->r.buf, sizeof(imsg->hdr));
	if (imsg->hdr.len < IMSG_HEADER_SIZE ||
	    imsg->hdr.len > MAX_IMSGSIZE ||
	    (imsg->hdr.flags & ~IMSGF_HASFD) != 0) {
		errno = ERANGE;
		return (-1);
	}
	if (imsg->hdr.len > ibuf->r.wpos)
		return (0);
	datalen = imsg->hdr.len - IMSG_HEADER_SIZE;

	imsg->fd = -1;
	if (imsg->hdr.flags & IMSGF_HASFD) {
		if ((ifd = TAILQ_FIRST(&ibuf->fds)) == NULL) {
			errno = EBADMSG;
			return (-1);
		}
		imsg->fd = ifd->fd;
		TAILQ_REMOVE(&ibuf->fds, ifd, entry);
		ibuf->nfds--;
		free(ifd);
	}

	imsg->data = NULL;
	if (datalen > 0) {
		if ((imsg->data = malloc(datalen)) == NULL) {
			if (imsg->fd != -1)
				close(imsg->fd);
			return (-1);
		}
		memcpy(imsg->data, ibuf->r.buf + IMSG_HEADER_SIZE, datalen);
	}

	ibuf->r.wpos -= imsg->hdr.len;
	memmove(ibuf->r.buf, ibuf->r.buf + imsg->hdr.len, ibuf->r.wpos);

	return (imsg->hdr.len);
}

int
imsg_compose(struct imsgbuf *ibuf, uint32_t type, uint32_t peerid, pid_t pid,
    int fd, const void *data, size_t datalen)
{
	struct imsg_hdr	 hdr;
	struct ibuf	*buf;

	if (datalen > MAX_IMSGSIZE - IMSG_HEADER_SIZE) {
		errno = ERANGE;
		return (-1);
	}
	if ((buf = calloc(1, sizeof(*buf))) == NULL)
		return (-1);
	buf->size = IMSG_HEADER_SIZE + datalen;
	if ((buf->buf = malloc(buf->size)) == NULL) {
		free(buf);
		return (-1);
	}

	memset(&hdr, 0, sizeof(hdr));
	hdr.type = type;
	hdr.len = buf->size;
	hdr.flags = fd == -1 ? 0 : IMSGF_HASFD;
	hdr.peerid = peerid;
	hdr.pid = pid == 0 ? ibuf->pid : pid;
	memcpy(buf->buf, &hdr, sizeof(hdr));
	if (datalen > 0)
		memcpy(buf->buf + IMSG_HEADER_SIZE, data, datalen);
	buf->wpos = buf->size;
	buf->fd = fd;

	TAILQ_INSERT_TAIL(&ibuf->w.bufs, buf, entry);
	ibuf->w.queued++;
	ibuf->w.queuedlen += buf->size;
	return (1);
}

static void
msgbuf_consume(struct msgbuf *msgbuf, size_t n)
{
	struct ibuf	*buf;
	size_t		 left;

	msgbuf->queuedlen -= n;
	while (n > 0 && (buf = TAILQ_FIRST(&msgbuf->bufs)) != NULL) {
		/* the descriptor went with the first byte of its buffer */
		if (buf->fd != -1) {
			close(buf->fd);
			buf->fd = -1;
		}
		left = buf->wpos - buf->rpos;
		if (n < left) {
			buf->rpos += n;
			return;
		}
		n -= left;
		TAILQ_REMOVE(&msgbuf->bufs, buf, entry);
		msgbuf->queued--;
		free(buf->buf);
		free(buf);
	}
}

/*
 * Write as much as the socket takes.  A buffer carrying a descriptor is
 * sent alone so that the descriptor arrives with its own header.
 */
int
msgbuf_write(struct msgbuf *msgbuf)
{
	struct iovec	 iov[IOV_MAX];
	struct msghdr	 msg;
	struct ibuf	*buf;
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int))];
	} cmsgbuf;
	struct cmsghdr	*cmsg;
	ssize_t		 n;
	int		 i = 0, fd = -1;

	memset(&msg, 0, sizeof(msg));
	memset(&cmsgbuf, 0, sizeof(cmsgbuf));
	TAILQ_FOREACH(buf, &msgbuf->bufs, entry) {
		if (i >= IOV_MAX || (i > 0 && buf->fd != -1))
			break;
		iov[i].iov_base = buf->buf + buf->rpos;
		iov[i].iov_len = buf->wpos - buf->rpos;
		i++;
		if (buf->fd != -1) {
			fd = buf->fd;
			break;
		}
	}
	if (i == 0)
		return (1);
	msg.msg_iov = iov;
	msg.msg_iovlen = i;
	if (fd != -1) {
		msg.msg_control = cmsgbuf.buf;
		msg.msg_controllen = sizeof(cmsgbuf.buf);
		cmsg = CMSG_FIRSTHDR(&msg);
		cmsg->cmsg_len = CMSG_LEN(sizeof(int));
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	}

	do {
		n = sendmsg(msgbuf->fd, &msg, MSG_NOSIGNAL);
	} while (n == -1 && errno == EINTR);
	if (n == -1)
		return (-1);
	msgbuf_consume(msgbuf, n);
	return (1);
}

void
msgbuf_clear(struct msgbuf *msgbuf)
{
	struct ibuf	*buf;

	while ((buf = TAILQ_FIRST(&msgbuf->bufs)) != NULL) {
		TAILQ_REMOVE(&msgbuf->bufs, buf, entry);
		if (buf->fd != -1)
			close(buf->fd);
		free(buf->buf);
		free(buf);
	}
	msgbuf->queued = 0;
	msgbuf->queuedlen = 0;
}

/* Write everything queued, waiting for the socket when it is full. */
int
imsg_flush(struct imsgbuf *ibuf)
{
	struct pollfd	 pfd;

	while (ibuf->w.queued > 0) {
		if (msgbuf_write(&ibuf->w) == 1)
			continue;
		if (errno != EAGAIN)
			return (-1);
		pfd.fd = ibuf->fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, -1) == -1 && errno != EINTR)
			return (-1);
	}
	return (0);
}

void
imsg_clear(struct imsgbuf *ibuf)
{
	struct imsg_fd	*ifd;

	msgbuf_clear(&ibuf->w);
	while ((ifd = TAILQ_FIRST(&ibuf->fds)) != NULL) {
		TAILQ_REMOVE(&ibuf->fds, ifd, entry);
		close(ifd->fd);
		free(ifd);
	}
	ibuf->nfds = 0;
	ibuf->r.wpos = 0;
}

void
imsg_free(struct imsg *imsg)
{
	free(imsg->data);
	imsg->data = NULL;
}
