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
 * The kernel engines a system does not have: never available, so that
 * "splice engine pipe" on a BSD or "splice engine so_splice" on Linux
 * says so and the relays copy.  The Makefile builds this file in place
 * of the back end's own, with SPLICE_NONE_PIPE or SPLICE_NONE_SO.
 */

#include <sys/types.h>

#include <errno.h>

#include "splice.h"

static int
none_available(void)
{
	return (0);
}

static int
none_start(struct rsplice *sp)
{
	(void)sp;
	errno = EOPNOTSUPP;
	return (-1);
}

static void
none_stop(struct rsplice *sp)
{
	(void)sp;
}

#ifdef SPLICE_NONE_PIPE
const struct splice_backend splice_pipe_backend = {
	"pipe", SPLICE_ENGINE_PIPE, 0, 0, none_available, none_start,
	none_stop, none_stop, NULL, NULL, NULL
};
#endif

#ifdef SPLICE_NONE_SO
const struct splice_backend splice_so_backend = {
	"so_splice", SPLICE_ENGINE_SO_SPLICE, 0, 0, none_available,
	none_start, none_stop, none_stop, NULL, NULL, NULL
};
#endif
