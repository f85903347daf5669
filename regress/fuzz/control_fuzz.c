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
 * libFuzzer target for the requests relayctl sends: pfe's control
 * dispatcher and the show, status, sessions, enable and disable handlers
 * behind it, over a configuration with tables, hosts and relays.  The
 * input is a stream of imsgs (header and data) on one control
 * connection; every answer is read back, and the connection must end.
 * control.c and pfe.c are included to reach their static state.
 */

#include "../../usr.sbin/relayd/control.c"
#include "../../usr.sbin/relayd/pfe.c"

#include <stdio.h>
#include <syslog.h>

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct relayd	*fz_env;

static const char fz_conf[] =
    "table <web> { 127.0.0.1, 127.0.0.2 retry 2 }\n"
    "table <spare> { 127.0.0.3 }\n"
    "relay www {\n"
    "\tlisten on 127.0.0.1 port 8080\n"
    "\tforward to <web> port 80 check tcp\n"
    "\tforward to <spare> port 80 check tcp\n"
    "}\n"
    "relay other {\n"
    "\tlisten on 127.0.0.1 port 8081\n"
    "\tforward to 127.0.0.1 port 9\n"
    "}\n";

static void
fz_init(void)
{
	struct privsep	*ps;
	char		 path[] = "/tmp/control_fuzz.XXXXXX";
	int		 fd;

	event_init();
	log_init(1, LOG_DAEMON);
	log_setverbose(0);
	if ((fz_env = calloc(1, sizeof(*fz_env))) == NULL ||
	    (ps = calloc(1, sizeof(*ps))) == NULL || config_init(fz_env) == -1)
		abort();
	fz_env->sc_ps = ps;
	ps->ps_env = fz_env;
	if ((fd = mkstemp(path)) == -1 ||
	    write(fd, fz_conf, sizeof(fz_conf) - 1) != sizeof(fz_conf) - 1)
		abort();
	close(fd);
	parse_noresolve = 1;
	if (parse_config(path, fz_env) == -1)
		abort();
	unlink(path);
	/*
	 * pfe's state, as pfe() and control_listen() set it, without a
	 * listening socket: connections are made below.  No relay, hce or
	 * parent process to pass requests on to.
	 */
	env = fz_env;
	ctl_env = fz_env;
	evtimer_set(&ctl_evt, control_accept, NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_conn	*c;
	static char	 buf[65536];
	uint32_t	 id;
	int		 sp[2], i;

	if (fz_env == NULL)
		fz_init();
	if (size > 65536 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sp) == -1)
		return (0);
	if ((c = calloc(1, sizeof(*c))) == NULL)
		abort();
	/* what control_accept() makes of a connection of root's */
	imsg_init(&c->iev.ibuf, sp[1]);
	c->iev.handler = control_dispatch_imsg;
	c->iev.events = EV_READ;
	c->iev.data = c;
	c->id = id = ++ctl_lastid;
	c->uid = 0;
	event_set(&c->iev.ev, sp[1], c->iev.events, c->iev.handler, c);
	event_add(&c->iev.ev, NULL);
	TAILQ_INSERT_TAIL(&ctl_conns, c, entry);

	if (size > 0 && write(sp[0], data, size) != (ssize_t)size)
		abort();
	shutdown(sp[0], SHUT_WR);
	/* the connection ends at the end of the input, or earlier */
	for (i = 0; i < 1000 && control_connbyid(id) != NULL; i++) {
		event_loop(EVLOOP_ONCE | EVLOOP_NONBLOCK);
		while (read(sp[0], buf, sizeof(buf)) > 0)
			;
	}
	if ((c = control_connbyid(id)) != NULL) {
		/* a monitor, or a sessions request with no relay to answer */
		if ((c->flags & CTL_CONN_NOTIFY) == 0 && c->waiting == 0) {
			fprintf(stderr, "connection %u did not end\n", id);
			abort();
		}
		control_close(c);
	}
	close(sp[0]);
	return (0);
}
