/*
 * kb_proc.c - the workload's processes, as the runner drives them.
 *
 * Every process of a workload is a real process: the initial ones are forked
 * by the runner and exec a fresh copy of the program (kb_worker.c says why),
 * the others are forked by their parent on a fork event, so they share pages
 * exactly as the kernel shares them after fork(). Each has a Unix
 * stream socket to the runner and executes one command at a time
 * (kb_worker.c): the runner sends a struct kb_cmd and its payload, the
 * process answers with a struct kb_reply. A fork command carries the child's
 * socket with SCM_RIGHTS. The runner learns that a process has exited (its
 * memory is gone, so KSM has seen the exit) through a pidfd.
 *
 * Layout: the regions of an initial process live in one range it reserves
 * (PROT_NONE), in file order at increasing addresses, each 2 MiB aligned (so
 * THP can back them) and followed by a 2 MiB guard gap, so each stays its own
 * VMA whatever its flags; ksmd walks VMAs in address order, so file order is
 * scan order. A forked process has its parent's regions at the same
 * addresses, and so has a process after an exec event (it reserves the
 * range where it was). This file does not decide what to send; kb_run.c does.
 */
#include "config.h"
#include "kb_internal.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXIT_WAIT_MS 30000

static uint64_t region_span(const struct wl_region *r)
{
	uint64_t bytes = r->pages * KB_PAGE_SIZE;

	return (bytes + KB_HUGE_SIZE - 1) / KB_HUGE_SIZE * KB_HUGE_SIZE;
}

uint64_t kb_layout_offset(const struct workload *wl, size_t region)
{
	size_t owner = wl->regions[region].process;
	uint64_t offset = KB_HUGE_SIZE; /* the range starts with a guard gap */

	for (size_t i = 0; i < region; i++)
		if (wl->regions[i].process == owner)
			offset += region_span(&wl->regions[i]) + KB_HUGE_SIZE;
	return offset;
}

uint64_t kb_layout_size(const struct workload *wl, size_t proc)
{
	uint64_t size = KB_HUGE_SIZE;

	for (size_t i = 0; i < wl->nregions; i++)
		if (wl->regions[i].process == proc)
			size += region_span(&wl->regions[i]) + KB_HUGE_SIZE;
	return size;
}

size_t kb_proc_root(const struct workload *wl, size_t proc)
{
	while (wl->procs[proc].parent >= 0)
		proc = (size_t)wl->procs[proc].parent;
	return proc;
}

bool kb_proc_has_region(const struct workload *wl, size_t proc, size_t region)
{
	return wl->regions[region].process == kb_proc_root(wl, proc);
}

uint64_t kb_region_addr(const struct kb_procs *ps, size_t region)
{
	return ps->base[ps->wl->regions[region].process] + kb_layout_offset(ps->wl, region);
}

/* The normalized workload in a memfd, for exec'ed processes; -1 if that fails. */
static int workload_text(const struct workload *wl)
{
	int fd = memfd_create("ksmkit-workload", MFD_CLOEXEC);
	FILE *f;

	if (fd < 0)
		return -1;
	f = fdopen(dup(fd), "w");
	if (!f || wl_print(wl, f) != 0 || fclose(f) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int kb_procs_init(struct kb_procs *ps, const struct workload *wl, char *msg, size_t len)
{
	ps->wl = wl;
	ps->text_fd = workload_text(wl);
	ps->proc = calloc(wl->nprocs, sizeof *ps->proc);
	ps->base = calloc(wl->nprocs_initial ? wl->nprocs_initial : 1, sizeof *ps->base);
	if (!ps->proc || !ps->base) {
		free(ps->proc);
		free(ps->base);
		ps->proc = NULL;
		ps->base = NULL;
		return kb_fail(msg, len, "out of memory");
	}
	for (size_t i = 0; i < wl->nprocs; i++) {
		ps->proc[i].pidfd = -1;
		ps->proc[i].sock = -1;
	}
	return 0;
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

/* Wait until process @p has exited (its mm is gone), then forget it. */
static int wait_gone(struct kb_proc *p, const char *name, char *msg, size_t len)
{
	int rc = 0;

	if (p->pidfd >= 0) {
		struct pollfd pfd = { p->pidfd, POLLIN, 0 };
		int n;

		do
			n = poll(&pfd, 1, EXIT_WAIT_MS);
		while (n < 0 && errno == EINTR);
		if (n <= 0)
			rc = kb_fail(msg, len, "process %s (pid %d) did not exit within %d s", name,
				     (int)p->pid, EXIT_WAIT_MS / 1000);
	} else {
		/* No pidfd (a kernel before 5.3): it is autoreaped, so ESRCH means gone. */
		for (int ms = 0; kill(p->pid, 0) == 0; ms++) {
			if (ms >= EXIT_WAIT_MS) {
				rc = kb_fail(msg, len, "process %s (pid %d) did not exit", name,
					     (int)p->pid);
				break;
			}
			kb_sleep_ns(1000000);
		}
	}
	if (p->pidfd >= 0)
		close(p->pidfd);
	if (p->sock >= 0)
		close(p->sock);
	p->pidfd = p->sock = -1;
	p->alive = false;
	return rc;
}

static void adopt(struct kb_proc *p, pid_t pid, int sock)
{
	p->pid = pid;
	p->sock = sock;
	p->pidfd = open_pidfd(pid);
	p->alive = true;
}

int kb_procs_spawn(struct kb_procs *ps, size_t index, char *msg, size_t len)
{
	struct kb_cmd cmd = { .op = KB_OP_RESERVE, .arg = -1 };
	struct kb_reply reply;
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return kb_fail(msg, len, "socketpair: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		int err = errno;

		close(sv[0]);
		close(sv[1]);
		return kb_fail(msg, len, "fork of process %s: %s", ps->wl->procs[index].name,
			       strerror(err));
	}
	if (pid == 0) {
		close(sv[0]);
		if (ps->text_fd >= 0)
			kb_worker_exec(ps->wl, index, sv[1], ps->text_fd, false);
		kb_worker_main(ps->wl, index, sv[1]);
	}
	close(sv[1]);
	adopt(&ps->proc[index], pid, sv[0]);
	if (kb_proc_call(ps, index, &cmd, NULL, 0, &reply, msg, len) != 0)
		return -1;
	ps->base[index] = reply.value;
	return 0;
}

/* Send @cmd, with @fd attached when >= 0, then the payload. */
static int send_cmd(int sock, const struct kb_cmd *cmd, int fd, const void *payload,
		    size_t payload_len)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = { (void *)cmd, sizeof *cmd };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (fd >= 0) {
		struct cmsghdr *cm;

		memset(&control, 0, sizeof control);
		mh.msg_control = control.buf;
		mh.msg_controllen = sizeof control.buf;
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof fd);
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if ((size_t)n < sizeof *cmd &&
	    kb_write_full(sock, (const char *)cmd + n, sizeof *cmd - (size_t)n) != 0)
		return -1;
	if (payload_len && kb_write_full(sock, payload, payload_len) != 0)
		return -1;
	return 0;
}

static int call_with_fd(struct kb_procs *ps, size_t index, const struct kb_cmd *cmd, int fd,
			const void *payload, size_t payload_len, struct kb_reply *reply,
			char *msg, size_t len)
{
	struct kb_proc *p = &ps->proc[index];
	const char *name = ps->wl->procs[index].name;

	memset(reply, 0, sizeof *reply);
	if (!p->alive || p->sock < 0)
		return kb_fail(msg, len, "process %s is not running", name);
	if (send_cmd(p->sock, cmd, fd, payload, payload_len) != 0 ||
	    kb_read_full(p->sock, reply, sizeof *reply) != 0)
		return kb_fail(msg, len, "process %s (pid %d) stopped answering: %s", name,
			       (int)p->pid, strerror(errno));
	reply->message[sizeof reply->message - 1] = '\0';
	if (reply->error)
		return kb_fail(msg, len, "process %s (pid %d): %s", name, (int)p->pid,
			       reply->message);
	return 0;
}

int kb_proc_call(struct kb_procs *ps, size_t index, const struct kb_cmd *cmd,
		 const void *payload, size_t payload_len, struct kb_reply *reply, char *msg,
		 size_t len)
{
	return call_with_fd(ps, index, cmd, -1, payload, payload_len, reply, msg, len);
}

int kb_proc_fork(struct kb_procs *ps, size_t parent, size_t child, char *msg, size_t len)
{
	struct kb_cmd cmd = { .op = KB_OP_FORK, .arg = (int32_t)child };
	struct kb_reply reply;
	int sv[2], rc;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return kb_fail(msg, len, "socketpair: %s", strerror(errno));
	rc = call_with_fd(ps, parent, &cmd, sv[1], NULL, 0, &reply, msg, len);
	close(sv[1]);
	if (rc != 0) {
		close(sv[0]);
		return -1;
	}
	adopt(&ps->proc[child], (pid_t)reply.value, sv[0]);
	return 0;
}

int kb_proc_exec(struct kb_procs *ps, size_t index, char *msg, size_t len)
{
	struct kb_cmd exec = { .op = KB_OP_EXEC, .arg = -1 };
	struct kb_cmd reserve = { .op = KB_OP_RESERVE, .flags = KB_CMD_AT, .arg = -1,
				  .count = ps->base[kb_proc_root(ps->wl, index)] };
	struct kb_reply reply;

	if (ps->text_fd < 0)
		return kb_fail(msg, len, "process %s cannot exec: the workload's text could not be "
			       "kept in a memfd", ps->wl->procs[index].name);
	/* the new image answers the exec command, then reserves its range */
	if (call_with_fd(ps, index, &exec, ps->text_fd, NULL, 0, &reply, msg, len) != 0)
		return -1;
	return kb_proc_call(ps, index, &reserve, NULL, 0, &reply, msg, len);
}

int kb_proc_exit(struct kb_procs *ps, size_t index, char *msg, size_t len)
{
	struct kb_cmd cmd = { .op = KB_OP_EXIT, .arg = -1 };
	struct kb_reply reply;

	if (kb_proc_call(ps, index, &cmd, NULL, 0, &reply, msg, len) != 0)
		return -1;
	return wait_gone(&ps->proc[index], ps->wl->procs[index].name, msg, len);
}

int kb_proc_quit(struct kb_procs *ps, size_t index, uint64_t *unmerge_ns, char *msg, size_t len)
{
	struct kb_cmd cmd = { .op = KB_OP_QUIT, .arg = -1 };
	struct kb_reply reply;
	int rc;

	rc = kb_proc_call(ps, index, &cmd, NULL, 0, &reply, msg, len);
	*unmerge_ns = reply.elapsed_ns;
	if (rc != 0) {
		kill(ps->proc[index].pid, SIGKILL);
		wait_gone(&ps->proc[index], ps->wl->procs[index].name, NULL, 0);
		return -1;
	}
	return wait_gone(&ps->proc[index], ps->wl->procs[index].name, msg, len);
}

/* How process @p ended, if the runner is its parent: " (killed by signal 9)". */
static void how_it_ended(const struct kb_proc *p, char *buf, size_t len)
{
	siginfo_t si;

	buf[0] = '\0';
	memset(&si, 0, sizeof si);
	if (waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid != p->pid)
		return;
	if (si.si_code == CLD_EXITED)
		snprintf(buf, len, " (exit status %d)", si.si_status);
	else
		snprintf(buf, len, " (killed by signal %d)", si.si_status);
}

int kb_procs_check_alive(const struct kb_procs *ps, char *msg, size_t len)
{
	if (!ps->proc)
		return 0;
	for (size_t i = 0; i < ps->wl->nprocs; i++) {
		const struct kb_proc *p = &ps->proc[i];
		struct pollfd pfd = { p->pidfd, POLLIN, 0 };
		char how[48];

		if (!p->alive || p->pidfd < 0 || poll(&pfd, 1, 0) <= 0)
			continue;
		how_it_ended(p, how, sizeof how);
		return kb_fail(msg, len, "workload process %s (pid %d) died during the run%s",
			       ps->wl->procs[i].name, (int)p->pid, how);
	}
	return 0;
}

void kb_procs_kill(struct kb_procs *ps)
{
	if (!ps->proc)
		return;
	for (size_t i = 0; i < ps->wl->nprocs; i++) {
		struct kb_proc *p = &ps->proc[i];

		if (!p->alive)
			continue;
		kill(p->pid, SIGKILL);
		wait_gone(p, ps->wl->procs[i].name, NULL, 0);
	}
}

void kb_procs_free(struct kb_procs *ps)
{
	kb_procs_kill(ps);
	if (ps->text_fd >= 0)
		close(ps->text_fd);
	ps->text_fd = -1;
	free(ps->proc);
	free(ps->base);
	ps->proc = NULL;
	ps->base = NULL;
}
