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
 * ctlflood: a relayctl monitor that never reads, and a flood of events
 * for it.
 *
 *   ctlflood SOCKET HOST PAIRS
 *
 * opens a monitor connection to relayd's control SOCKET and reads
 * nothing from it, then disables and enables HOST PAIRS times over a
 * second connection (each answer read: two events per pair), then
 * reads the monitor for at most 10 seconds.  It prints "closed N" when
 * the daemon closed the monitor (N bytes of events came before the
 * end), "open N" when it is still connected.
 *
 *   ctlflood SOCKET -pipeline N
 *
 * sends N "show summary" requests on one connection without reading
 * an answer, then waits at most 10 seconds for the daemon to hang up,
 * still reading nothing: "closed" when it did, "open" when not.
 *
 *   ctlflood SOCKET -clients N REQUESTS
 *
 * opens N connections at once and sends REQUESTS "status" requests on
 * each without reading an answer; once every connection has sent them
 * all or been closed by the daemon (10 seconds at most), it prints
 * "open O closed C" and holds the open ones until its standard input
 * ends.
 */

#include <sys/socket.h>
#include <sys/un.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "relayd.h"

static int
ctl_connect(const char *path)
{
	struct sockaddr_un	 sun;
	int			 s;

	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		err(1, "socket");
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlcpy(sun.sun_path, path, sizeof(sun.sun_path)) >=
	    sizeof(sun.sun_path))
		errx(1, "%s: name too long", path);
	if (connect(s, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		err(1, "connect %s", path);
	return (s);
}

static void
ctl_request(struct imsgbuf *ib, uint32_t type, struct ctl_id *id)
{
	struct imsg	 imsg;
	ssize_t		 n;

	if (imsg_compose(ib, type, 0, 0, -1, id, sizeof(*id)) == -1 ||
	    imsg_flush(ib) == -1)
		err(1, "send");
	for (;;) {
		if ((n = imsg_get(ib, &imsg)) == -1)
			errx(1, "bad answer");
		if (n > 0) {
			if (imsg.hdr.type != IMSG_CTL_OK)
				errx(1, "request refused (%u)",
				    imsg.hdr.type);
			imsg_free(&imsg);
			return;
		}
		if ((n = imsg_read(ib)) == -1 && errno != EAGAIN)
			err(1, "read");
		if (n == 0)
			errx(1, "the daemon closed the request connection");
	}
}

static int
pipeline(const char *path, int n)
{
	struct imsgbuf	 ib;
	struct pollfd	 pfd;
	int		 i;

	signal(SIGPIPE, SIG_IGN);
	imsg_init(&ib, ctl_connect(path));
	for (i = 0; i < n; i++) {
		if (imsg_compose(&ib, IMSG_CTL_SHOW_SUM, 0, 0, -1, NULL,
		    0) == -1)
			err(1, "compose");
		/* the daemon may hang up while the requests go */
		if (ib.w.queued >= 1024 && imsg_flush(&ib) == -1)
			break;
	}
	if (i == n)
		(void)imsg_flush(&ib);
	pfd.fd = ib.fd;
	pfd.events = POLLRDHUP;
	if (poll(&pfd, 1, 10000) > 0 &&
	    (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
		printf("closed\n");
		return (0);
	}
	printf("open\n");
	return (0);
}

/* Send what ib holds; 0 when all is sent, -1 when the daemon hung up. */
static int
send_some(struct imsgbuf *ib)
{
	if (msgbuf_write(&ib->w) == -1 && errno != EAGAIN)
		return (-1);
	return (ib->w.queued > 0);
}

static int
clients(const char *path, int n, int reqs)
{
	struct imsgbuf	*ib;
	struct pollfd	*pfd;
	char		 c;
	int		 i, j, busy, open = 0, closed = 0, waited;

	signal(SIGPIPE, SIG_IGN);
	if ((ib = calloc(n, sizeof(*ib))) == NULL ||
	    (pfd = calloc(n, sizeof(*pfd))) == NULL)
		err(1, NULL);
	for (i = 0; i < n; i++) {
		imsg_init(&ib[i], ctl_connect(path));
		if (fcntl(ib[i].fd, F_SETFL, O_NONBLOCK) == -1)
			err(1, "fcntl");
		for (j = 0; j < reqs; j++)
			if (imsg_compose(&ib[i], IMSG_CTL_STATUS, 0, 0, -1,
			    NULL, 0) == -1)
				err(1, "compose");
		pfd[i].fd = ib[i].fd;
	}
	for (waited = 0; waited < 10000; waited += 10) {
		busy = 0;
		for (i = 0; i < n; i++) {
			if (pfd[i].fd == -1)
				continue;
			switch (send_some(&ib[i])) {
			case -1:
				msgbuf_clear(&ib[i].w);
				pfd[i].fd = -1;
				closed++;
				break;
			case 1:
				busy++;
				pfd[i].events = POLLOUT | POLLRDHUP;
				break;
			default:
				pfd[i].events = POLLRDHUP;
				break;
			}
		}
		if (busy == 0)
			break;
		(void)poll(pfd, n, 10);
	}
	/* those the daemon hangs up on, until it has said nothing for 1 s */
	for (i = 0; i < n; i++)
		pfd[i].events = POLLRDHUP;
	while (poll(pfd, n, 1000) > 0)
		for (i = 0; i < n; i++)
			if (pfd[i].fd != -1 && (pfd[i].revents &
			    (POLLRDHUP | POLLHUP | POLLERR))) {
				pfd[i].fd = -1;
				closed++;
			}
	for (i = 0; i < n; i++)
		open += pfd[i].fd != -1;
	printf("open %d closed %d\n", open, closed);
	fflush(stdout);
	while (read(STDIN_FILENO, &c, 1) > 0)
		;
	return (0);
}

int
main(int argc, char *argv[])
{
	struct imsgbuf	 mon, req;
	struct ctl_id	 id;
	struct pollfd	 pfd;
	char		 buf[65536];
	unsigned long	 total = 0;
	ssize_t		 n;
	int		 i, pairs, waited;

	if (argc == 4 && strcmp(argv[2], "-pipeline") == 0)
		return (pipeline(argv[1], atoi(argv[3])));
	if (argc == 5 && strcmp(argv[2], "-clients") == 0)
		return (clients(argv[1], atoi(argv[3]), atoi(argv[4])));
	if (argc != 4)
		errx(2, "usage: ctlflood SOCKET HOST PAIRS");
	pairs = atoi(argv[3]);
	imsg_init(&mon, ctl_connect(argv[1]));
	if (imsg_compose(&mon, IMSG_CTL_NOTIFY, 0, 0, -1, NULL, 0) == -1 ||
	    imsg_flush(&mon) == -1)
		err(1, "monitor");
	imsg_init(&req, ctl_connect(argv[1]));
	memset(&id, 0, sizeof(id));
	id.id = EMPTY_ID;
	if (strlcpy(id.name, argv[2], sizeof(id.name)) >= sizeof(id.name))
		errx(1, "%s: name too long", argv[2]);
	for (i = 0; i < pairs; i++) {
		ctl_request(&req, IMSG_CTL_HOST_DISABLE, &id);
		ctl_request(&req, IMSG_CTL_HOST_ENABLE, &id);
	}

	pfd.fd = mon.fd;
	pfd.events = POLLIN;
	for (waited = 0; waited < 10000; ) {
		if (poll(&pfd, 1, 100) == 0) {
			waited += 100;
			continue;
		}
		if ((n = read(mon.fd, buf, sizeof(buf))) == -1) {
			if (errno == ECONNRESET)
				n = 0;
			else
				err(1, "read monitor");
		}
		if (n == 0) {
			printf("closed %lu\n", total);
			return (0);
		}
		total += n;
	}
	printf("open %lu\n", total);
	return (0);
}
