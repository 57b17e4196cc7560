/*
 * kb_sample.c - reading what the kernel counts, cheaply.
 *
 * The counter files under /sys/kernel/mm/ksm stay open for the whole run and
 * are read with pread(), so polling full_scans every few hundred
 * microseconds costs one system call. Per-process counters come from
 * /proc/PID/ksm_stat, which carries ksm_merging_pages since 6.6 (older kernels
 * print it in /proc/PID/ksm_merging_pages, read instead). ksmd's CPU time
 * comes, best first, from a perf task-clock event on ksmd (exact to the
 * nanosecond when read), from /proc/<ksmd>/schedstat (nanoseconds, but
 * advanced only at ksmd's ticks and context switches: a ksmd that never
 * sleeps, at sleep_millisecs 0, moved in steps of about 3.3 ms here) or from the
 * utime and stime of /proc/<ksmd>/stat (clock ticks): a per-scan figure
 * needs better than ticks. This file fills numbers; when to read them is
 * kb_run.c's business.
 */
#include "config.h"
#include "kb_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef HAVE_LINUX_PERF_EVENT_H
#include <linux/perf_event.h>
#include <sys/syscall.h>
#endif

static pid_t find_ksmd(void)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;

	if (!proc)
		return 0;
	while (!found && (de = readdir(proc)) != NULL) {
		char path[300], text[256];
		int ppid;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
		if (kb_read_file(path, text, sizeof text) <= 0)
			continue;
		/* "37 (ksmd) S 2 ...": a kernel thread, child of kthreadd (pid 2). */
		if (sscanf(text, "%*d (ksmd) %*c %d", &ppid) == 1 && ppid == 2)
			found = (pid_t)atoi(de->d_name);
	}
	closedir(proc);
	return found;
}

/* A task-clock counter on ksmd, or -1 (no perf events, or not allowed). */
static int open_ksmd_task_clock(pid_t ksmd)
{
#if defined(HAVE_LINUX_PERF_EVENT_H) && defined(SYS_perf_event_open)
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	return (int)syscall(SYS_perf_event_open, &attr, ksmd, -1, -1, PERF_FLAG_FD_CLOEXEC);
#else
	(void)ksmd;
	return -1;
#endif
}

static int open_ksmd_cpu(struct kb_sampler *s)
{
	char path[64], text[128];
	int fd = open_ksmd_task_clock(s->ksmd);

	if (fd >= 0) {
		s->ksmd_clock = KB_CPU_TASK_CLOCK;
		return fd;
	}
	snprintf(path, sizeof path, "/proc/%d/schedstat", (int)s->ksmd);
	/* schedstat reads "0 0 0" when the kernel keeps no sched_info. */
	if (kb_read_file(path, text, sizeof text) > 0 && strtoull(text, NULL, 10) > 0) {
		s->ksmd_clock = KB_CPU_SCHEDSTAT;
		return open(path, O_RDONLY | O_CLOEXEC);
	}
	snprintf(path, sizeof path, "/proc/%d/stat", (int)s->ksmd);
	s->ksmd_clock = KB_CPU_TICKS;
	return open(path, O_RDONLY | O_CLOEXEC);
}

int kb_sampler_open(struct kb_sampler *s, char *msg, size_t len)
{
	for (int c = 0; c < TRACE_COUNTER_COUNT; c++) {
		char path[128];

		snprintf(path, sizeof path, KB_KSM_DIR "/%s", trace_counter_name((enum trace_counter)c));
		s->counter_fd[c] = open(path, O_RDONLY | O_CLOEXEC);
	}
	s->ksmd_fd = -1;
	/* pages_scanned and the other newer counters may be absent (6.1) */
	if (s->counter_fd[TRACE_FULL_SCANS] < 0 || s->counter_fd[TRACE_PAGES_TO_SCAN] < 0) {
		kb_sampler_close(s);
		return kb_fail(msg, len, "cannot open the KSM counters in %s: %s", KB_KSM_DIR,
			       strerror(errno));
	}
	s->ksmd = find_ksmd();
	if (s->ksmd)
		s->ksmd_fd = open_ksmd_cpu(s);
	s->ksmd_cpu0 = kb_ksmd_cpu_ns(s);
	return 0;
}

void kb_sampler_close(struct kb_sampler *s)
{
	for (int c = 0; c < TRACE_COUNTER_COUNT; c++) {
		if (s->counter_fd[c] >= 0)
			close(s->counter_fd[c]);
		s->counter_fd[c] = -1;
	}
	if (s->ksmd_fd >= 0)
		close(s->ksmd_fd);
	s->ksmd_fd = -1;
}

int kb_sample_counter(const struct kb_sampler *s, enum trace_counter c, int64_t *value)
{
	if (s->counter_fd[c] < 0) {
		*value = 0;
		return 0;
	}
	return kb_pread_int(s->counter_fd[c], value);
}

int kb_sample_counters(const struct kb_sampler *s, int64_t counter[TRACE_COUNTER_COUNT])
{
	for (int c = 0; c < TRACE_COUNTER_COUNT; c++)
		if (kb_sample_counter(s, (enum trace_counter)c, &counter[c]) != 0)
			return -1;
	return 0;
}

struct trace_row *kb_sample_row(const struct kb_sampler *s, struct trace *t,
				enum trace_row_kind kind, char *msg, size_t len)
{
	struct trace_row *row = trace_append(t, kind);

	if (!row) {
		kb_fail(msg, len, "out of memory for the trace");
		return NULL;
	}
	if (kb_sample_counters(s, row->counter) != 0) {
		kb_fail(msg, len, "cannot read the KSM counters: %s", strerror(errno));
		return NULL;
	}
	row->ksmd_cpu_ns = kb_ksmd_cpu_ns(s) - s->ksmd_cpu0;
	return row;
}

uint64_t kb_ksmd_cpu_ns(const struct kb_sampler *s)
{
	unsigned long long utime, stime;
	char text[512], *p;
	uint64_t count;
	ssize_t n;

	if (s->ksmd_fd < 0)
		return 0;
	if (s->ksmd_clock == KB_CPU_TASK_CLOCK)
		return read(s->ksmd_fd, &count, sizeof count) == (ssize_t)sizeof count ? count : 0;
	n = pread(s->ksmd_fd, text, sizeof text - 1, 0);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	if (s->ksmd_clock == KB_CPU_SCHEDSTAT)
		return strtoull(text, NULL, 10);
	/* After the ") " of the command name come fields 3, 4, ...; utime and
	 * stime are fields 14 and 15. */
	p = strrchr(text, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
			 &stime) != 2)
		return 0;
	return (uint64_t)(utime + stime) * (KB_NSEC / (uint64_t)sysconf(_SC_CLK_TCK));
}

int kb_read_ksm_stat(pid_t pid, struct trace_proc_stat *ps, bool *has_mergeable)
{
	char path[64], text[1024], *line, *save = NULL;
	bool has_merging = false;

	memset(ps, 0, sizeof *ps);
	*has_mergeable = false;
	snprintf(path, sizeof path, "/proc/%d/ksm_stat", (int)pid);
	if (kb_read_file(path, text, sizeof text) <= 0) {
		if (errno == 0)
			errno = ESRCH;
		return -1;
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64], value[32];
		int f;

		if (sscanf(line, "%63[a-z_]%*[: ]%31s", name, value) != 2)
			continue;
		f = trace_proc_field_lookup(name);
		if (f < 0)
			continue;
		if (f == TRACE_KSM_MERGEABLE)
			*has_mergeable = true;
		if (f == TRACE_KSM_MERGING_PAGES)
			has_merging = true;
		if (strcmp(value, "yes") == 0 || strcmp(value, "no") == 0)
			ps->field[f] = value[0] == 'y';
		else
			ps->field[f] = strtoll(value, NULL, 10);
	}
	if (!has_merging) {
		snprintf(path, sizeof path, "/proc/%d/ksm_merging_pages", (int)pid);
		if (kb_read_file(path, text, sizeof text) > 0)
			ps->field[TRACE_KSM_MERGING_PAGES] = strtoll(text, NULL, 10);
	}
	ps->present = true;
	return 0;
}
