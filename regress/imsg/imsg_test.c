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

/* The imsg framing of compat/imsg.c: round trips, descriptors, bad frames. */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atf-c.h>

#include "compat/imsg.h"

static int	 sv[2];

static void
pair(void)
{
	ATF_REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
}

/* Write raw bytes, optionally with a descriptor on the first byte. */
static void
raw_send(int s, const void *buf, size_t len, int fd)
{
	struct msghdr	 msg;
	struct iovec	 iov;
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int))];
	} cbuf;
	struct cmsghdr	*cmsg;

	memset(&msg, 0, sizeof(msg));
	iov.iov_base = (void *)(uintptr_t)buf;
	iov.iov_len = len;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (fd != -1) {
		memset(&cbuf, 0, sizeof(cbuf));
		msg.msg_control = cbuf.buf;
		msg.msg_controllen = sizeof(cbuf.buf);
		cmsg = CMSG_FIRSTHDR(&msg);
		cmsg->cmsg_len = CMSG_LEN(sizeof(int));
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	}
	ATF_REQUIRE(sendmsg(s, &msg, 0) == (ssize_t)len);
}

static void
hdr_send(int s, uint32_t type, uint16_t len, uint16_t flags, int fd)
{
	struct imsg_hdr	 hdr;

	memset(&hdr, 0, sizeof(hdr));
	hdr.type = type;
	hdr.len = len;
	hdr.flags = flags;
	raw_send(s, &hdr, sizeof(hdr), fd);
}

ATF_TC_WITHOUT_HEAD(roundtrip);
ATF_TC_BODY(roundtrip, tc)
{
	struct imsgbuf	 w, r;
	struct imsg	 imsg;
	const char	 data[] = "hello, relayd";

	pair();
	imsg_init(&w, sv[0]);
	imsg_init(&r, sv[1]);
	ATF_REQUIRE(imsg_compose(&w, 42, 7, 1234, -1, data,
	    sizeof(data)) == 1);
	ATF_REQUIRE(imsg_compose(&w, 43, 0, 0, -1, NULL, 0) == 1);
	ATF_REQUIRE(imsg_flush(&w) == 0);
	ATF_REQUIRE(imsg_read(&r) > 0);

	ATF_REQUIRE_EQ(imsg_get(&r, &imsg),
	    (ssize_t)(IMSG_HEADER_SIZE + sizeof(data)));
	ATF_CHECK_EQ(imsg.hdr.type, 42);
	ATF_CHECK_EQ(imsg.hdr.peerid, 7);
	ATF_CHECK_EQ(imsg.hdr.pid, 1234);
	ATF_CHECK_EQ(imsg.fd, -1);
	ATF_CHECK(memcmp(imsg.data, data, sizeof(data)) == 0);
	imsg_free(&imsg);

	ATF_REQUIRE_EQ(imsg_get(&r, &imsg), (ssize_t)IMSG_HEADER_SIZE);
	ATF_CHECK_EQ(imsg.hdr.type, 43);
	ATF_CHECK(imsg.data == NULL);
	imsg_free(&imsg);
	ATF_CHECK_EQ(imsg_get(&r, &imsg), 0);
}

ATF_TC_WITHOUT_HEAD(fd_passing);
ATF_TC_BODY(fd_passing, tc)
{
	struct imsgbuf	 w, r;
	struct imsg	 imsg;
	int		 p[2], i;
	char		 c;

	pair();
	imsg_init(&w, sv[0]);
	imsg_init(&r, sv[1]);
	/* three messages, the middle one with a pipe's write end */
	ATF_REQUIRE(pipe(p) == 0);
	ATF_REQUIRE(imsg_compose(&w, 1, 0, 0, -1, "a", 1) == 1);
	ATF_REQUIRE(imsg_compose(&w, 2, 0, 0, p[1], "b", 1) == 1);
	ATF_REQUIRE(imsg_compose(&w, 3, 0, 0, -1, "c", 1) == 1);
	ATF_REQUIRE(imsg_flush(&w) == 0);
	/* the sender closed its copy once it was sent */
	ATF_CHECK(fcntl(p[1], F_GETFD) == -1 && errno == EBADF);

	for (i = 1; i <= 3; i++) {
		while (imsg_get(&r, &imsg) == 0)
			ATF_REQUIRE(imsg_read(&r) > 0);
		ATF_CHECK_EQ(imsg.hdr.type, (uint32_t)i);
		if (i == 2) {
			ATF_REQUIRE(imsg.fd != -1);
			ATF_REQUIRE(write(imsg.fd, "x", 1) == 1);
			ATF_REQUIRE(read(p[0], &c, 1) == 1);
			ATF_CHECK_EQ(c, 'x');
			close(imsg.fd);
		} else
			ATF_CHECK_EQ(imsg.fd, -1);
		imsg_free(&imsg);
	}
}

ATF_TC_WITHOUT_HEAD(fd_before_message);
ATF_TC_BODY(fd_before_message, tc)
{
	struct imsgbuf	 r;
	struct imsg	 imsg;
	struct imsg_hdr	 hdr;
	unsigned char	 buf[IMSG_HEADER_SIZE + 4];
	int		 p[2];

	pair();
	imsg_init(&r, sv[1]);
	ATF_REQUIRE(pipe(p) == 0);
	memset(&hdr, 0, sizeof(hdr));
	hdr.type = 9;
	hdr.len = sizeof(buf);
	hdr.flags = IMSGF_HASFD;
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), "data", 4);

	/* the descriptor comes with the first 5 bytes, the rest later */
	raw_send(sv[0], buf, 5, p[1]);
	ATF_REQUIRE_EQ(imsg_read(&r), 5);
	ATF_CHECK_EQ(imsg_get(&r, &imsg), 0);
	raw_send(sv[0], buf + 5, sizeof(buf) - 5, -1);
	ATF_REQUIRE(imsg_read(&r) > 0);
	ATF_REQUIRE_EQ(imsg_get(&r, &imsg), (ssize_t)sizeof(buf));
	ATF_CHECK(imsg.fd != -1);
	ATF_CHECK(memcmp(imsg.data, "data", 4) == 0);
	close(imsg.fd);
	imsg_free(&imsg);
}

ATF_TC_WITHOUT_HEAD(partial_reads);
ATF_TC_BODY(partial_reads, tc)
{
	struct imsgbuf	 w, r;
	struct imsg	 imsg;
	struct ibuf	*b;
	unsigned char	 data[1000];
	size_t		 i, len;

	pair();
	imsg_init(&w, sv[0]);
	imsg_init(&r, sv[1]);
	for (i = 0; i < sizeof(data); i++)
		data[i] = i * 7;
	ATF_REQUIRE(imsg_compose(&w, 5, 0, 0, -1, data, sizeof(data)) == 1);
	b = TAILQ_FIRST(&w.w.bufs);
	len = b->wpos;
	/* one byte at a time: nothing is complete until the last */
	for (i = 0; i < len; i++) {
		raw_send(sv[0], b->buf + i, 1, -1);
		ATF_REQUIRE_EQ(imsg_read(&r), 1);
		if (i + 1 < len)
			ATF_REQUIRE_EQ(imsg_get(&r, &imsg), 0);
	}
	ATF_REQUIRE_EQ(imsg_get(&r, &imsg), (ssize_t)len);
	ATF_CHECK(memcmp(imsg.data, data, sizeof(data)) == 0);
	imsg_free(&imsg);
	imsg_clear(&w);
}

ATF_TC_WITHOUT_HEAD(partial_writes);
ATF_TC_BODY(partial_writes, tc)
{
	struct imsgbuf	 w, r;
	struct imsg	 imsg;
	unsigned char	 data[MAX_IMSGSIZE - IMSG_HEADER_SIZE];
	int		 sz = 4096, sent = 0, got = 0, n = 200;
	uint32_t	 i;

	pair();
	ATF_REQUIRE(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz,
	    sizeof(sz)) == 0);
	ATF_REQUIRE(fcntl(sv[0], F_SETFL, O_NONBLOCK) == 0);
	ATF_REQUIRE(fcntl(sv[1], F_SETFL, O_NONBLOCK) == 0);
	imsg_init(&w, sv[0]);
	imsg_init(&r, sv[1]);
	for (i = 0; i < (uint32_t)n; i++) {
		memset(data, i & 0xff, sizeof(data));
		ATF_REQUIRE(imsg_compose(&w, i, 0, 0, -1, data,
		    sizeof(data)) == 1);
	}
	/* the socket takes a little at a time; every message arrives whole */
	while (got < n) {
		if (w.w.queued > 0 && msgbuf_write(&w.w) == 1)
			sent++;
		if (imsg_read(&r) == -1)
			ATF_REQUIRE(errno == EAGAIN);
		while (imsg_get(&r, &imsg) > 0) {
			ATF_REQUIRE_EQ(imsg.hdr.type, (uint32_t)got);
			memset(data, got & 0xff, sizeof(data));
			ATF_REQUIRE(memcmp(imsg.data, data,
			    sizeof(data)) == 0);
			imsg_free(&imsg);
			got++;
		}
	}
	ATF_CHECK(sent > n);
	ATF_CHECK_EQ(w.w.queued, 0);
}

ATF_TC_WITHOUT_HEAD(compose_too_large);
ATF_TC_BODY(compose_too_large, tc)
{
	struct imsgbuf	 w;
	static char	 data[MAX_IMSGSIZE];

	pair();
	imsg_init(&w, sv[0]);
	ATF_CHECK_EQ(imsg_compose(&w, 1, 0, 0, -1, data,
	    MAX_IMSGSIZE - IMSG_HEADER_SIZE + 1), -1);
	ATF_CHECK_EQ(errno, ERANGE);
	ATF_CHECK_EQ(w.w.queued, 0);
	ATF_CHECK_EQ(imsg_compose(&w, 1, 0, 0, -1, data,
	    MAX_IMSGSIZE - IMSG_HEADER_SIZE), 1);
	imsg_clear(&w);
}

ATF_TC_WITHOUT_HEAD(oversized_frame);
ATF_TC_BODY(oversized_frame, tc)
{
	struct imsgbuf	 r;
	struct imsg	 imsg;

	pair();
	imsg_init(&r, sv[1]);
	hdr_send(sv[0], 1, MAX_IMSGSIZE + 1, 0, -1);
	ATF_REQUIRE(imsg_read(&r) > 0);
	ATF_CHECK_EQ(imsg_get(&r, &imsg), -1);
	ATF_CHECK_EQ(errno, ERANGE);
}

ATF_TC_WITHOUT_HEAD(short_frame);
ATF_TC_BODY(short_frame, tc)
{
	struct imsgbuf	 r;
	struct imsg	 imsg;

	pair();
	imsg_init(&r, sv[1]);
	hdr_send(sv[0], 1, IMSG_HEADER_SIZE - 1, 0, -1);
	ATF_REQUIRE(imsg_read(&r) > 0);
	ATF_CHECK_EQ(imsg_get(&r, &imsg), -1);
	ATF_CHECK_EQ(errno, ERANGE);
}

ATF_TC_WITHOUT_HEAD(unknown_flags);
ATF_TC_BODY(unknown_flags, tc)
{
	struct imsgbuf	 r;
	struct imsg	 imsg;

	pair();
	imsg_init(&r, sv[1]);
	hdr_send(sv[0], 1, IMSG_HEADER_SIZE, 0x80, -1);
	ATF_REQUIRE(imsg_read(&r) > 0);
	ATF_CHECK_EQ(imsg_get(&r, &imsg), -1);
	ATF_CHECK_EQ(errno, ERANGE);
}

ATF_TC_WITHOUT_HEAD(truncated_frame);
ATF_TC_BODY(truncated_frame, tc)
{
	struct imsgbuf	 r;
	struct imsg	 imsg;

	pair();
	imsg_init(&r, sv[1]);
	/* a header that promises 100 bytes, 20 of them, then the end */
	hdr_send(sv[0], 1, 100, 0, -1);
	raw_send(sv[0], "0123", 4, -1);
	close(sv[0]);
	ATF_REQUIRE_EQ(imsg_read(&r), 20);
	ATF_CHECK_EQ(imsg_get(&r, &imsg), 0);
	ATF_CHECK_EQ(imsg_read(&r), 0);
	ATF_CHECK_EQ(imsg_get(&r, &imsg), 0);
}

ATF_TC_WITHOUT_HEAD(fd_announced_missing);
ATF_TC_BODY(fd_announced_missing, tc)
{
	struct imsgbuf	 r;
	struct imsg	 imsg;

	pair();
	imsg_init(&r, sv[1]);
	hdr_send(sv[0], 1, IMSG_HEADER_SIZE, IMSGF_HASFD, -1);
	ATF_REQUIRE(imsg_read(&r) > 0);
	ATF_CHECK_EQ(imsg_get(&r, &imsg), -1);
	ATF_CHECK_EQ(errno, EBADMSG);
}

ATF_TC_WITHOUT_HEAD(too_many_fds);
ATF_TC_BODY(too_many_fds, tc)
{
	struct imsgbuf	 r;
	int		 p[2], i, bad = 0;
	ssize_t		 n;

	pair();
	imsg_init(&r, sv[1]);
	ATF_REQUIRE(pipe(p) == 0);
	/* descriptors without their messages, more than may wait */
	for (i = 0; i < IMSG_MAXQUEUEDFDS + 2; i++) {
		raw_send(sv[0], "z", 1, p[1]);
		if ((n = imsg_read(&r)) == -1) {
			ATF_CHECK_EQ(errno, EBADMSG);
			bad = 1;
			break;
		}
	}
	ATF_CHECK(bad);
	ATF_CHECK(r.nfds <= IMSG_MAXQUEUEDFDS);
	imsg_clear(&r);
	ATF_CHECK_EQ(r.nfds, 0);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, roundtrip);
	ATF_TP_ADD_TC(tp, fd_passing);
	ATF_TP_ADD_TC(tp, fd_before_message);
	ATF_TP_ADD_TC(tp, partial_reads);
	ATF_TP_ADD_TC(tp, partial_writes);
	ATF_TP_ADD_TC(tp, compose_too_large);
	ATF_TP_ADD_TC(tp, oversized_frame);
	ATF_TP_ADD_TC(tp, short_frame);
	ATF_TP_ADD_TC(tp, unknown_flags);
	ATF_TP_ADD_TC(tp, truncated_frame);
	ATF_TP_ADD_TC(tp, fd_announced_missing);
	ATF_TP_ADD_TC(tp, too_many_fds);
	return (atf_no_error());
}
