/*
 * suite_lock.h - one kernel-using test suite at a time on this machine.
 *
 * Suites that run the real kernel's KSM (check_backend, check_compare, ...)
 * compare knobs and counters before and after their runs, which another
 * suite's runs in between would change (make -j check, two build trees).
 * kb_run's own lock serializes runs, not suites: hold this for the whole
 * suite. Returns the lock's fd (keep it open), or -1.
 */
#ifndef KSMKIT_TESTS_SUITE_LOCK_H
#define KSMKIT_TESTS_SUITE_LOCK_H

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"

static inline int lock_kernel_suites(void)
{
	int fd;

	mkdir(KB_STATE_DIR, 0755);
	fd = open(KB_STATE_DIR "/check-suites.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0 && flock(fd, LOCK_EX) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

#endif
