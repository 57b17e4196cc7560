/*
 * kg_qemu.c - the emulator process of one guest session: its command line,
 * starting it, and waiting for it with a deadline.
 *
 * The command line is the whole safety story, so it is built in one place:
 * TCG only (this machine's /dev/kvm cannot boot Linux, so KVM is never
 * tried), mem-merge=off on the machine and merge=off on every RAM backend so
 * that the host's KSM never sees the guest's memory, no default devices, no
 * network, no disk, the kernel booted directly, one vCPU on node 0 (so that
 * memory a workload leaves unplaced is allocated on node 0, as the simulator
 * places it), serial port 0 to a console log and serial port 1 to the
 * results file. While it runs, its /proc/PID/smaps is checked for the
 * mergeable flag; seeing it, or the deadline passing, kills it.
 */
#include "config.h"
#include "kg_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define POLL_NS (50 * UINT64_C(1000000))
/* When qemu's smaps is checked for the mergeable flag: once its RAM is
 * mapped, then every second. */
#define SMAPS_FIRST_NS (300 * UINT64_C(1000000))
#define SMAPS_EVERY_NS KG_NSEC
#define MAX_ARGS (32 + 4 * KG_MAX_NODES)
#define ARG_TEXT 256

uint64_t kg_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * KG_NSEC + (uint64_t)ts.tv_nsec;
}

struct argv_buf {
	char *argv[MAX_ARGS + 1];
	char text[MAX_ARGS][ARG_TEXT];
	int n;
};

static void arg(struct argv_buf *a, const char *fmt, ...) KG_PRINTF(2, 3);

static void arg(struct argv_buf *a, const char *fmt, ...)
{
	va_list ap;

	if (a->n >= MAX_ARGS)
		return;
	va_start(ap, fmt);
	vsnprintf(a->text[a->n], ARG_TEXT, fmt, ap);
	va_end(ap);
	a->argv[a->n] = a->text[a->n];
	a->argv[++a->n] = NULL;
}

static void build_argv(struct argv_buf *a, const char *qemu, const char *kernel,
		       const char *initrd, unsigned nodes, uint64_t node_mem, const char *console,
		       const char *results)
{
	uint64_t mib = node_mem >> 20;

	a->n = 0;
	arg(a, "%s", qemu);
	arg(a, "-machine");
	arg(a, "q35,accel=tcg,mem-merge=off");
	arg(a, "-cpu");
	arg(a, "max");
	arg(a, "-smp");
	arg(a, "1");
	arg(a, "-m");
	arg(a, "%" PRIu64 "M", mib * nodes);
	for (unsigned i = 0; i < nodes; i++) {
		arg(a, "-object");
		arg(a, "memory-backend-ram,id=ram%u,size=%" PRIu64 "M,merge=off", i, mib);
		arg(a, "-numa");
		if (i == 0)
			arg(a, "node,nodeid=0,cpus=0,memdev=ram0");
		else
			arg(a, "node,nodeid=%u,memdev=ram%u", i, i);
	}
	arg(a, "-kernel");
	arg(a, "%s", kernel);
	arg(a, "-initrd");
	arg(a, "%s", initrd);
	arg(a, "-append");
	arg(a, "console=ttyS0 panic=-1 quiet mitigations=off");
	arg(a, "-nodefaults");
	arg(a, "-no-reboot");
	arg(a, "-display");
	arg(a, "none");
	arg(a, "-serial");
	arg(a, "file:%s", console);
	arg(a, "-serial");
	arg(a, "file:%s", results);
}

int kg_qemu_start(struct kg_qemu *q, const char *qemu, const char *kernel, const char *initrd,
		  unsigned nodes, uint64_t node_mem, const char *console, const char *results,
		  const char *log, char *msg, size_t len)
{
	struct argv_buf *a = calloc(1, sizeof *a);
	int fd;

	memset(q, 0, sizeof *q);
	if (!a)
		return kg_fail(msg, len, "out of memory");
	build_argv(a, qemu, kernel, initrd, nodes, node_mem, console, results);
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		free(a);
		return kg_fail(msg, len, "cannot write %s: %s", log, strerror(errno));
	}
	q->pid = fork();
	if (q->pid < 0) {
		int err = errno;

		close(fd);
		free(a);
		q->pid = 0;
		return kg_fail(msg, len, "cannot start qemu: %s", strerror(err));
	}
	if (q->pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		/* qemu must not outlive us, whatever ends us */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (null >= 0)
			dup2(null, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		execvp(a->argv[0], a->argv);
		dprintf(fd, "cannot run %s: %s\n", a->argv[0], strerror(errno));
		_exit(127);
	}
	close(fd);
	free(a);
	return 0;
}

static void kill_and_reap(struct kg_qemu *q)
{
	kill(q->pid, SIGKILL);
	while (waitpid(q->pid, &q->status, 0) < 0 && errno == EINTR)
		;
	q->pid = 0;
}

int kg_qemu_wait(struct kg_qemu *q, uint64_t deadline_ns, char *msg, size_t len)
{
	uint64_t next_smaps = kg_now_ns() + SMAPS_FIRST_NS;

	while (q->pid) {
		pid_t got = waitpid(q->pid, &q->status, WNOHANG);
		uint64_t now = kg_now_ns();
		struct timespec nap = { 0, (long)POLL_NS };

		if (got == q->pid) {
			q->pid = 0;
			break;
		}
		if (got < 0 && errno != EINTR) {
			int err = errno;

			kill_and_reap(q);
			return kg_fail(msg, len, "waiting for qemu: %s", strerror(err));
		}
		if (now >= next_smaps) {
			next_smaps = now + SMAPS_EVERY_NS;
			if (kb_pid_has_mergeable_vma(q->pid)) {
				q->mergeable = true;
				kill_and_reap(q);
				break;
			}
		}
		if (now >= deadline_ns) {
			q->timed_out = true;
			kill_and_reap(q);
			break;
		}
		nanosleep(&nap, NULL);
	}
	return 0;
}
