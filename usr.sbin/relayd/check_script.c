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
 * check script: hce asks the parent, which is outside the chroot, to run
 * "path hostname" as the unprivileged user with the table's timeout.
 * Exit status above 0 is up, 0 is down; a script that cannot be run or
 * is killed at the timeout leaves the host unknown.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "relayd.h"

/* hce: hand the script to the parent. */
void
check_script(struct relayd *env, struct host *h, struct table *tb)
{
	struct ctl_script	 scr;

	memset(&scr, 0, sizeof(scr));
	scr.host = h->conf.id;
	scr.timeout = tb->conf.timeout;
	(void)strlcpy(scr.name, h->conf.name, sizeof(scr.name));
	(void)strlcpy(scr.path, tb->conf.path, sizeof(scr.path));
	getmonotime(&h->check_start);
	proc_compose(env->sc_ps, PROC_PARENT, IMSG_SCRIPT, &scr, sizeof(scr));
}

/* hce: the parent's answer. */
void
script_done(struct relayd *env, struct ctl_script *scr)
{
	struct host	*h;

	if ((h = host_find(env, scr->host)) == NULL ||
	    (h->flags & F_CHECK_SENT) == 0 || (h->flags & F_CHECK_DONE))
		return;		/* aborted, or of an older round */
	if (scr->retval < 0)
		hce_notify_state(h, HCE_SCRIPT_FAIL, HOST_UNKNOWN);
	else if (scr->retval == 0)
		hce_notify_state(h, HCE_SCRIPT_FAIL, HOST_DOWN);
	else
		hce_notify_state(h, HCE_SCRIPT_OK, HOST_UP);
}

/*
 * Parent: run it and wait at most the timeout.  A pipe that closes on
 * exec tells a script that ran from one that could not start.
 */
int
script_exec(struct relayd *env, struct ctl_script *scr)
{
	struct passwd	*pw = env->sc_ps->ps_pw;
	struct timespec	 now, deadline, nap = { 0, 5 * 1000 * 1000 };
	pid_t		 pid;
	int		 p[2], status, err = 0;
	ssize_t		 n;

	scr->path[sizeof(scr->path) - 1] = '\0';
	scr->name[sizeof(scr->name) - 1] = '\0';
	if (pipe2(p, O_CLOEXEC) == -1) {
		log_warn("%s: pipe", __func__);
		return (-1);
	}
	switch (pid = fork()) {
	case -1:
		log_warn("%s: fork", __func__);
		close(p[0]);
		close(p[1]);
		return (-1);
	case 0:
		(void)setsid();
		signal(SIGPIPE, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		close(p[0]);
		if (p[1] != 3) {
			if (dup3(p[1], 3, O_CLOEXEC) == -1)
				_exit(0);
			close(p[1]);
		}
		closefrom(4);
		if (setgroups(1, &pw->pw_gid) == -1 ||
		    setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) == -1 ||
		    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) == -1)
			err = errno;
		else {
			execl(scr->path, scr->path, scr->name, (char *)NULL);
			err = errno;
		}
		/* the parent sees the error, or the end of the pipe */
		_exit(write(3, &err, sizeof(err)) == sizeof(err) ? 0 : 1);
	}
	close(p[1]);
	n = read(p[0], &err, sizeof(err));
	close(p[0]);
	if (n == sizeof(err)) {
		(void)waitpid(pid, NULL, 0);
		log_warnx("check script %s: %s", scr->path, strerror(err));
		return (-1);
	}

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += scr->timeout.tv_sec;
	deadline.tv_nsec += scr->timeout.tv_usec * 1000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	for (;;) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > deadline.tv_sec ||
		    (now.tv_sec == deadline.tv_sec &&
		    now.tv_nsec >= deadline.tv_nsec)) {
			/* the script and whatever it started */
			(void)kill(-pid, SIGKILL);
			(void)kill(pid, SIGKILL);
			(void)waitpid(pid, &status, 0);
			log_warnx("check script %s, host %s: timeout after "
			    "%lldms, killed", scr->path, scr->name,
			    (long long)scr->timeout.tv_sec * 1000 +
			    scr->timeout.tv_usec / 1000);
			return (-1);
		}
		nanosleep(&nap, NULL);
	}
	if (WIFEXITED(status))
		return (WEXITSTATUS(status));
	return (-1);
}
