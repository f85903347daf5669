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
 * A TLS handshake that can stop halfway and go on later: while its key
 * operation waits for ca, the relay process serves its other sessions.
 *
 * libtls maps OpenSSL's SSL_ERROR_WANT_ASYNC to an error, so OpenSSL's
 * own asynchronous mode (SSL_MODE_ASYNC) is of no use through it.
 * Instead the whole libtls call runs as one of OpenSSL's asynchronous
 * jobs (ASYNC_start_job(3), a stack of its own): the key method pauses
 * the job where it would wait (compat_tlsjob_pause()), the call returns
 * COMPAT_TLSJOB_PAUSED, and a later compat_tlsjob_run() on the same job
 * takes it up where it stopped.  libtls and libssl never see a pause.
 *
 * Where there are no jobs (LibreSSL has no ASYNC API; OpenSSL built
 * without it, or a job pool used up) the call runs to its end at once,
 * compat_tlsjob_current() says so, and the key method waits as before.
 */

#include <openssl/opensslv.h>
#include <openssl/opensslconf.h>

#include <stddef.h>

#include "compat.h"

#if !defined(LIBRESSL_VERSION_NUMBER) && !defined(OPENSSL_NO_ASYNC)

#include <openssl/async.h>

struct tlsjob_call {
	int	(*fn)(void *);
	void	 *arg;
};

static int		 tlsjob_ok = -1;
/* no descriptors to wait for; OpenSSL wants one all the same */
static ASYNC_WAIT_CTX	*tlsjob_waitctx;

static int
tlsjob_start(void *arg)
{
	struct tlsjob_call	*call = arg;

	return (call->fn(call->arg));
}

int
compat_tlsjob_init(unsigned int maxjobs)
{
	if (tlsjob_ok == -1)
		tlsjob_ok = ASYNC_is_capable() &&
		    ASYNC_init_thread(maxjobs, 0) == 1 &&
		    (tlsjob_waitctx = ASYNC_WAIT_CTX_new()) != NULL;
	return (tlsjob_ok ? 0 : -1);
}

int
compat_tlsjob_run(void **job, int (*fn)(void *), void *arg, int *ret)
{
	struct tlsjob_call	 call;

	if (tlsjob_ok != 1 && *job == NULL) {
		*ret = fn(arg);
		return (COMPAT_TLSJOB_DONE);
	}
	call.fn = fn;
	call.arg = arg;
	switch (ASYNC_start_job((ASYNC_JOB **)job, tlsjob_waitctx, ret,
	    tlsjob_start, &call, sizeof(call))) {
	case ASYNC_PAUSE:
		return (COMPAT_TLSJOB_PAUSED);
	case ASYNC_FINISH:
		*job = NULL;
		return (COMPAT_TLSJOB_DONE);
	default:
		/* no job to be had (the pool is used up): at once */
		if (*job != NULL)
			return (-1);
		*ret = fn(arg);
		return (COMPAT_TLSJOB_DONE);
	}
}

int
compat_tlsjob_current(void)
{
	return (ASYNC_get_current_job() != NULL);
}

int
compat_tlsjob_pause(void)
{
	return (ASYNC_pause_job() == 1 ? 0 : -1);
}

#else

int
compat_tlsjob_init(unsigned int maxjobs)
{
	(void)maxjobs;
	return (-1);
}

int
compat_tlsjob_run(void **job, int (*fn)(void *), void *arg, int *ret)
{
	(void)job;
	*ret = fn(arg);
	return (COMPAT_TLSJOB_DONE);
}

int
compat_tlsjob_current(void)
{
	return (0);
}

int
compat_tlsjob_pause(void)
{
	return (-1);
}

#endif
