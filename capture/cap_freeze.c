/*
 * cap_freeze.c - stopping a process for a consistent snapshot, and letting
 * it go exactly as it was: every thread is seized with ptrace
 * (PTRACE_SEIZE, which sends no signal and is invisible to the process's
 * parent, unlike SIGSTOP) and interrupted (PTRACE_INTERRUPT), the thread
 * list read again until no thread is new; thawing detaches each one, giving
 * back a signal that arrived meanwhile. A process that was stopped before
 * (group-stop) stays stopped: the kernel keeps the group stop across the
 * detach. If the capture itself dies, even by SIGKILL, the kernel detaches
 * its tracees and they run on: nothing of this needs cleaning up by hand.
 */
#include "cap_freeze.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <stdio.h>

static bool seized(const struct cap_freeze *f, pid_t tid)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->thread[i].tid == tid)
			return true;
	return false;
}

/* Wait for @tid's stop; a signal it stopped with instead is kept for the detach. */
static int wait_stopped(struct cap_freeze_thread *t)
{
	int st;

	for (;;) {
		pid_t got = waitpid(t->tid, &st, __WALL);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -1;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			t->gone = true;
			if (t->tid == t->leader)
				t->leader_status = st;
			return 0;
		}
		if (!WIFSTOPPED(st))
			continue;
		if (st >> 16 == PTRACE_EVENT_STOP)
			return 0;
		if (WSTOPSIG(st) != SIGTRAP)
			t->signal = WSTOPSIG(st); /* a signal-delivery stop: deliver it at detach */
		return 0;
	}
}

/* Seize and interrupt one thread; 1 when it is already gone. */
static int seize_one(struct cap_freeze *f, pid_t tid, struct cap_error *err)
{
	struct cap_freeze_thread *t;

	if (cap_grow((void **)&f->thread, &f->cap, f->n, sizeof(*f->thread), 16) != 0)
		return cap_fail(err, "out of memory");
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0) {
		if (errno == ESRCH)
			return 1;
		return cap_fail(err, "cannot stop process %d (thread %d) for --consistent: %s%s",
				(int)f->pid, (int)tid, strerror(errno),
				errno == EPERM ? " (is it traced already, by a debugger?)" : "");
	}
	t = &f->thread[f->n++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->leader = f->pid;
	t->leader_status = -1;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) != 0 && errno != ESRCH)
		return cap_fail(err, "cannot interrupt thread %d: %s", (int)tid, strerror(errno));
	if (wait_stopped(t) != 0)
		return cap_fail(err, "waiting for thread %d to stop: %s", (int)tid, strerror(errno));
	if (t->gone && tid == f->pid)
		f->leader_status = t->leader_status;
	return 0;
}

/* One pass over /proc/PID/task: the threads seized anew, or -1. */
static long seize_new_threads(struct cap_freeze *f, struct cap_error *err)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	long added = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)f->pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : cap_fail(err, "cannot list %s: %s", path,
						      strerror(errno));
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		int rc;

		if (tid <= 0 || seized(f, tid))
			continue;
		rc = seize_one(f, tid, err);
		if (rc < 0) {
			closedir(d);
			return -1;
		}
		added += rc == 0;
	}
	closedir(d);
	return added;
}

int cap_freeze(pid_t pid, struct cap_freeze *f, struct cap_error *err)
{
	long added;

	memset(f, 0, sizeof(*f));
	f->pid = pid;
	f->leader_status = -1;
	do
		added = seize_new_threads(f, err);
	while (added > 0);
	if (added < 0) {
		cap_thaw(f);
		return -1;
	}
	return 0;
}

void cap_thaw(struct cap_freeze *f)
{
	for (size_t i = 0; i < f->n; i++)
		if (!f->thread[i].gone)
			ptrace(PTRACE_DETACH, f->thread[i].tid, NULL,
			       (void *)(long)f->thread[i].signal);
	free(f->thread);
	f->thread = NULL;
	f->n = f->cap = 0;
}
