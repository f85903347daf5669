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
 * libFuzzer target for the lexer and parser: every input is a
 * relayd.conf, parsed as relayd -n would (names are not resolved, so no
 * input reaches the network), then freed; AddressSanitizer reports
 * overflows and leaks.  What parses is printed as relayd -nv prints
 * it, so the printer is fuzzed too.
 */

#include <sys/types.h>
#include <sys/queue.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "relayd.h"

int	 LLVMFuzzerInitialize(int *, char ***);
int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static char	 conffile[] = "/tmp/relayd-fuzz.XXXXXX";
static int	 conffd = -1;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if ((conffd = mkstemp(conffile)) == -1) {
		perror("mkstemp");
		exit(1);
	}
	/* messages to stderr: make fuzz runs with -close_fd_mask=3 */
	log_init(1, LOG_DAEMON);
	parse_noresolve = 1;
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct relayd	*env;

	if (ftruncate(conffd, 0) == -1 ||
	    pwrite(conffd, data, size, 0) != (ssize_t)size)
		abort();
	if ((env = calloc(1, sizeof(*env))) == NULL ||
	    config_init(env) == -1)
		abort();
	env->sc_conffile = conffile;
	if (parse_config(conffile, env) == 0) {
		/* the printer must cope with whatever parsed */
		print_config(env);
	}
	config_purge(env);
	free(env->sc_tables);
	free(env->sc_relays);
	free(env->sc_protos);
	free(env);
	return (0);
}
