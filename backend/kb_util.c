/*
 * kb_util.c - the backend's small helpers: the clock ksm_tests uses
 * (CLOCK_MONOTONIC_RAW), sleeping, message formatting into caller buffers,
 * whole-file reads and one-shot writes (sysfs and procfs files), full reads
 * and writes on sockets and pipes, and a few names. No state; nothing here
 * knows about KSM.
 */
#include "config.h"
#include "kb_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

uint64_t kb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * KB_NSEC + (uint64_t)ts.tv_nsec;
}

void kb_sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / KB_NSEC), (long)(ns % KB_NSEC) };

	/* An interrupted sleep is fine: every caller re-checks its condition. */
	nanosleep(&ts, NULL);
}

int kb_fail(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (msg && len) {
		va_start(ap, fmt);
		vsnprintf(msg, len, fmt, ap);
		va_end(ap);
	}
	return -1;
}

void kb_append(char *msg, size_t len, const char *fmt, ...)
{
	size_t used;
	va_list ap;

	if (!msg || !len)
		return;
	used = strnlen(msg, len);
	if (used && used + 2 < len) {
		memcpy(msg + used, "; ", 3);
		used += 2;
	}
	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(msg + used, len - used, fmt, ap);
	va_end(ap);
}

ssize_t kb_read_file(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (got + 1 < len) {
		ssize_t n = read(fd, buf + got, len - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int saved = errno;

			close(fd);
			errno = saved;
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	close(fd);
	return (ssize_t)got;
}

int kb_write_file(const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int err = 0;

	if (fd < 0)
		return errno;
	/* sysfs takes a store in one write; its answer is that write's errno. */
	do
		n = write(fd, text, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		err = errno;
	else if ((size_t)n != len)
		err = EIO;
	close(fd);
	return err;
}

int kb_pread_int(int fd, int64_t *value)
{
	char buf[32];
	ssize_t n;
	char *end;

	do
		n = pread(fd, buf, sizeof buf - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	errno = 0;
	*value = strtoll(buf, &end, 10);
	if (end == buf || errno)
		return -1;
	return 0;
}

int kb_write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int kb_read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EPIPE;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

const char *kb_errno_name(int err)
{
	switch (err) {
	case 0:
		return "ok";
	case EINVAL:
		return "EINVAL";
	case EBUSY:
		return "EBUSY";
	case ERANGE:
		return "ERANGE";
	case EPERM:
		return "EPERM";
	case EACCES:
		return "EACCES";
	case ENOENT:
		return "ENOENT";
	case ENOMEM:
		return "ENOMEM";
	case EAGAIN:
		return "EAGAIN";
	case EINTR:
		return "EINTR";
	default:
		return strerror(err);
	}
}

const char *kb_size_text(uint64_t bytes, char *buf, size_t len)
{
	return wl_bytes_text(bytes, buf, len);
}

void kb_comm_of(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	n = kb_read_file(path, buf, len);
	if (n <= 0) {
		snprintf(buf, len, "?");
		return;
	}
	buf[strcspn(buf, "\n")] = '\0';
}

unsigned kb_kill_children(void)
{
	char path[320], text[4096];
	unsigned killed = 0;
	DIR *tasks = opendir("/proc/self/task");
	struct dirent *de;

	if (!tasks)
		return 0;
	/* each thread's children: a process forked by any thread, or reparented */
	while ((de = readdir(tasks)) != NULL) {
		char *p, *end;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/children", de->d_name);
		if (kb_read_file(path, text, sizeof text) <= 0)
			continue;
		for (p = text;; p = end) {
			long pid = strtol(p, &end, 10);

			if (end == p || pid <= 0)
				break;
			if (kill((pid_t)pid, SIGKILL) == 0)
				killed++;
		}
	}
	closedir(tasks);
	return killed;
}
