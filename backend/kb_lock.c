/*
 * kb_lock.c - one backend at a time on a machine.
 *
 * KSM's counters are global, so two runs at once would each see the other's
 * pages. A run holds an exclusive flock() on KB_LOCK_FILE from before its
 * preflight checks until its knobs are restored; a second run waits for it
 * (telling the user once), up to a bound. flock() locks belong to the open
 * file, so the lock also dies with the last process holding the file open:
 * the guardian, the sentinel and the runner that inherit it (workload
 * processes close it). The sentinel outlives a killed guardian until it has
 * restored the knobs, and the lock with it. The file's text names the
 * holders ("guardian PID", "runner PID", "sentinel PID") for the waiting
 * run's message and for tests that need their pids.
 */
#include "config.h"
#include "kb_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOCK_POLL_NS (50 * UINT64_C(1000000))

static void holder_text(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	for (char *p = buf; *p; p++)
		if (*p == '\n')
			*p = p[1] ? ',' : '\0';
	if (!buf[0])
		snprintf(buf, len, "pid unknown");
}

int kb_lock_acquire(struct kb_lock *lock, uint64_t wait_ns, const struct kb_options *opt,
		    char *msg, size_t len)
{
	char holder[128], note[256];
	uint64_t deadline;
	int fd;

	lock->fd = -1;
	if (mkdir(KB_STATE_DIR, 0755) != 0 && errno != EEXIST)
		return kb_fail(msg, len, "cannot create %s: %s", KB_STATE_DIR, strerror(errno));
	fd = open(KB_LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return kb_fail(msg, len, "cannot open %s: %s", KB_LOCK_FILE, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno != EWOULDBLOCK) {
			int err = errno;

			close(fd);
			return kb_fail(msg, len, "cannot lock %s: %s", KB_LOCK_FILE, strerror(err));
		}
		holder_text(fd, holder, sizeof holder);
		snprintf(note, sizeof note, "waiting for another ksmkit backend (%s) to finish",
			 holder);
		if (opt->note)
			opt->note(note, opt->note_arg);
		deadline = kb_now_ns() + wait_ns;
		while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			if (kb_now_ns() >= deadline) {
				close(fd);
				return kb_fail(msg, len,
					       "another ksmkit backend (%s) held %s for more than "
					       "%" PRIu64 " s",
					       holder, KB_LOCK_FILE, wait_ns / KB_NSEC);
			}
			kb_sleep_ns(LOCK_POLL_NS);
		}
	}
	lock->fd = fd;
	kb_lock_note_pids(lock, getpid(), 0, 0);
	return 0;
}

void kb_lock_note_pids(struct kb_lock *lock, pid_t guardian, pid_t runner, pid_t sentinel)
{
	char text[96];
	int n;

	if (lock->fd < 0)
		return;
	n = snprintf(text, sizeof text, "guardian %d\n", (int)guardian);
	if (runner)
		n += snprintf(text + n, sizeof text - (size_t)n, "runner %d\n", (int)runner);
	if (sentinel)
		n += snprintf(text + n, sizeof text - (size_t)n, "sentinel %d\n", (int)sentinel);
	/* Informational only: a failed write leaves a stale text, nothing worse. */
	if (ftruncate(lock->fd, 0) != 0 || pwrite(lock->fd, text, (size_t)n, 0) != n)
		return;
}

void kb_lock_release(struct kb_lock *lock)
{
	if (lock->fd < 0)
		return;
	/* The text stays: it is read only while the file is locked. */
	close(lock->fd);
	lock->fd = -1;
}

/* ---- for code outside a run: the lock while it touches knobs ----------------- */

int kb_lock_hold(uint64_t wait_ns, char *msg, size_t msglen)
{
	struct kb_options quiet;
	struct kb_lock lock;

	kb_options_init(&quiet);
	if (kb_lock_acquire(&lock, wait_ns, &quiet, msg, msglen) != 0)
		return -1;
	return lock.fd;
}

void kb_lock_drop(int fd)
{
	struct kb_lock lock = { fd };

	kb_lock_release(&lock);
}

int kb_knobs_save_idle(struct kb_knob_set *set, uint64_t wait_ns, char *msg, size_t msglen)
{
	int fd = kb_lock_hold(wait_ns, msg, msglen), rc;

	if (fd < 0)
		return -1;
	rc = kb_knobs_save(set, msg, msglen);
	kb_lock_drop(fd);
	return rc;
}

int kb_knobs_restore_idle(const struct kb_knob_set *set, uint64_t wait_ns, char *msg,
			  size_t msglen)
{
	int fd = kb_lock_hold(wait_ns, msg, msglen), rc;

	if (fd < 0)
		return -1;
	rc = kb_knobs_restore(set, msg, msglen);
	kb_lock_drop(fd);
	return rc;
}
