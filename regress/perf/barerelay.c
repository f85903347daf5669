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
 * barerelay: the practical ceiling of a splice back end.  It accepts on
 * 127.0.0.1:LPORT, connects to 127.0.0.1:BPORT and splices both ways with
 * relayd's engine, and does nothing else: no privilege separation, no
 * configuration, no accounting.
 *
 *   barerelay copy|pipe LPORT BPORT LPORT2 BPORT2
 *
 * relays LPORT to BPORT and LPORT2 to BPORT2 (the bench's sink and echo).
 */

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "relayd.h"

struct bare {
	int		 s[2];
	struct rsplice	 sp[2];
	int		 done[2];
};

struct listener {
	int		 fd;
	in_port_t	 bport;
	struct event	 ev;
};

static void
bare_close(struct bare *b)
{
	splice_free(&b->sp[0]);
	splice_free(&b->sp[1]);
	close(b->s[0]);
	close(b->s[1]);
	free(b);
}

static void
bare_done(struct rsplice *sp, int reason, void *arg)
{
	struct bare	*b = arg;
	int		 d = sp == &b->sp[0] ? 0 : 1;

	if (reason != 0) {
		bare_close(b);
		return;
	}
	b->done[d] = 1;
	shutdown(b->s[!d], SHUT_WR);
	if (b->done[!d])
		bare_close(b);
}

static void
bare_accept(int fd, short event, void *arg)
{
	struct listener		*l = arg;
	struct sockaddr_in	 sin;
	struct bare		*b;
	int			 c, one = 1;

	(void)event;
	if ((c = accept4(fd, NULL, NULL, SOCK_NONBLOCK)) == -1)
		return;
	if ((b = calloc(1, sizeof(*b))) == NULL)
		err(1, NULL);
	b->s[0] = c;
	b->s[1] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(l->bport);
	(void)setsockopt(b->s[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	(void)setsockopt(b->s[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(b->s[1], (struct sockaddr *)&sin, sizeof(sin)) == -1 &&
	    errno != EINPROGRESS) {
		close(b->s[0]);
		close(b->s[1]);
		free(b);
		return;
	}
	/* splicing a connecting socket is allowed (SO_SPLICE rule 24) */
	splice_init(&b->sp[0]);
	splice_init(&b->sp[1]);
	if (splice_start(&b->sp[0], b->s[0], b->s[1], 0, NULL, bare_done, b,
	    0) == -1 ||
	    splice_start(&b->sp[1], b->s[1], b->s[0], 0, NULL, bare_done, b,
	    0) == -1)
		bare_close(b);
}

static void
listen_on(struct listener *l, int lport, int bport)
{
	struct sockaddr_in	 sin;
	int			 on = 1;

	if ((l->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) == -1)
		err(1, "socket");
	(void)setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(lport);
	if (bind(l->fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(l->fd, 4096) == -1)
		err(1, "listen %d", lport);
	l->bport = bport;
	event_set(&l->ev, l->fd, EV_READ | EV_PERSIST, bare_accept, l);
	event_add(&l->ev, NULL);
}

int
main(int argc, char *argv[])
{
	struct listener	 l1, l2;
	int		 engine;

	if (argc != 6)
		errx(2, "usage: barerelay copy|pipe lport bport lport2 bport2");
	if (strcmp(argv[1], "copy") == 0)
		engine = SPLICE_ENGINE_COPY;
	else if (strcmp(argv[1], "pipe") == 0)
		engine = SPLICE_ENGINE_PIPE;
	else
		errx(2, "unknown engine %s", argv[1]);
	signal(SIGPIPE, SIG_IGN);
	log_init(1, 0);
	event_init();
	if (splice_engine_init(engine) == -1)
		errx(1, "engine %s not available", argv[1]);
	listen_on(&l1, atoi(argv[2]), atoi(argv[3]));
	listen_on(&l2, atoi(argv[4]), atoi(argv[5]));
	event_dispatch();
	return (0);
}
