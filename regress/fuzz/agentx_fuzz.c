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
 * agentx_fuzz: one PDU of the master agent (a 20-byte header, then its
 * body) through pfe's AgentX parser and the answers it builds, over a
 * state with a table and two hosts.  agentx.c is included for its
 * static functions; with no session, answers are built and dropped.
 */

#include <syslog.h>

#include "../../usr.sbin/relayd/agentx.c"

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct relayd	 fenv;

static void
fuzz_init(void)
{
	struct table	*tb;
	struct host	*h;
	int		 i;

	if (config_init(&fenv) == -1)
		abort();
	if ((tb = calloc(1, sizeof(*tb))) == NULL)
		abort();
	tb->conf.id = 1;
	(void)strlcpy(tb->conf.name, "web:80", sizeof(tb->conf.name));
	TAILQ_INIT(&tb->hosts);
	TAILQ_INSERT_TAIL(fenv.sc_tables, tb, entry);
	for (i = 1; i <= 2; i++) {
		if ((h = calloc(1, sizeof(*h))) == NULL)
			abort();
		h->conf.id = i;
		h->conf.tableid = 1;
		h->conf.ss.ss_family = AF_INET;
		(void)snprintf(h->conf.name, sizeof(h->conf.name),
		    "127.0.0.%d", i);
		h->up = i == 1 ? HOST_UP : HOST_DOWN;
		TAILQ_INSERT_TAIL(&tb->hosts, h, entry);
		TAILQ_INSERT_TAIL(&fenv.sc_hosts, h, globalentry);
	}
	env = &fenv;
	log_init(0, LOG_DAEMON);
	log_setverbose(0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int	 done;

	if (!done) {
		fuzz_init();
		done = 1;
	}
	if (size < 20)
		return (0);
	(void)agentx_pdu(data, data + 20, (size - 20) & ~(size_t)3);
	return (0);
}
