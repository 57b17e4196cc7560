/*
 * kb_guard.c - the guardian: the process that makes a run safe to kill.
 *
 * The caller of kb_run() is the guardian. It forks the runner, which does
 * the whole run in its own process group (the workload processes join it),
 * and waits. However the runner ends (normally, on an error, on SIGINT or
 * SIGTERM passed on by the guardian, or by SIGKILL from anyone), the
 * guardian then kills whatever is left of the group, reaps it (it is a
 * child subreaper for the run, so orphaned workload processes come back to
 * it), lets ksmd drop the leftovers of the exited processes, writes run = 2
 * when nobody else has pages merged, and restores every knob. The runner
 * dies with the guardian (PR_SET_PDEATHSIG), and its workload processes
 * unmerge and exit when their sockets close; the saved-knobs state file lets
 * the next run restore the knobs then.
 *
 * Signals: SIGINT, SIGTERM and SIGHUP are counted; in the guardian the first
 * is passed on to the runner as SIGTERM (it tears down and reports
 * "interrupted"), a second as SIGKILL. The runner is in another process
 * group, so a terminal's ^C reaches only the guardian.
 */
#include "config.h"
#include "kb_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define WAIT_POLL_NS (10 * UINT64_C(1000000))
/* Beyond the workload's own timeout, before the guardian kills the runner. */
#define RUNNER_GRACE_NS (60 * KB_NSEC)
#define GROUP_REAP_TRIES 3000
#define SETTLE_WAIT_NS (20 * KB_NSEC)
/* How long a stable node may stay mapped by an exiting process's __mmput. */
#define STABLE_RACE_NS (2 * KB_NSEC)

/*
 * The backend's only mutable globals, because signal handlers can reach
 * nothing else: how many SIGINT/SIGTERM/SIGHUP arrived, and the runner the
 * guardian passes them on to (0 when there is none, and in the runner).
 * saved_actions holds the caller's handlers while a run has its own.
 */
static volatile sig_atomic_t signal_count;
static volatile sig_atomic_t forward_to;
static const int handled_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NHANDLED (sizeof handled_signals / sizeof handled_signals[0])
static struct sigaction saved_actions[NHANDLED];

static void on_signal(int sig)
{
	(void)sig;
	signal_count++;
	if (forward_to > 0)
		kill((pid_t)forward_to, signal_count > 1 ? SIGKILL : SIGTERM);
}

void kb_signals_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	signal_count = 0;
	forward_to = 0;
	for (size_t i = 0; i < NHANDLED; i++)
		sigaction(handled_signals[i], &sa, &saved_actions[i]);
}

void kb_signals_restore(void)
{
	for (size_t i = 0; i < NHANDLED; i++)
		sigaction(handled_signals[i], &saved_actions[i], NULL);
	forward_to = 0;
}

bool kb_interrupted(void)
{
	return signal_count > 0;
}

void kb_signals_become_runner(void)
{
	forward_to = 0;
	signal_count = 0;
}

/* ---- the runner's life ----------------------------------------------------- */

static void run_child(const struct workload *wl, const struct kb_options *opt,
		      struct kb_report *report, int data_fd, pid_t guardian)
{
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != guardian)
		_exit(KB_FAILED); /* the guardian is already gone */
	kb_signals_become_runner();
	_exit(kb_runner_main(wl, opt, report, data_fd));
}

/* Wait until @runner has exited, without reaping it (its pid stays ours). */
static void wait_runner(pid_t runner, uint64_t deadline)
{
	bool killed = false;

	for (;;) {
		siginfo_t si;

		memset(&si, 0, sizeof si);
		if (waitid(P_PID, (id_t)runner, &si, WEXITED | WNOHANG | WNOWAIT) == 0) {
			if (si.si_pid == runner)
				return;
		} else if (errno == ECHILD) {
			return;
		}
		if (!killed && kb_now_ns() > deadline) {
			kill(runner, SIGKILL);
			killed = true;
		}
		kb_sleep_ns(WAIT_POLL_NS);
	}
}

/* Kill and reap every process left in group @pgid (the runner is reaped
 * by the caller). Returns how many were still there. */
static unsigned end_group(pid_t pgid)
{
	unsigned left = 0;

	for (int i = 0; i < GROUP_REAP_TRIES; i++) {
		pid_t pid;

		while ((pid = waitpid(-pgid, NULL, WNOHANG)) > 0)
			left++;
		if (kill(-pgid, SIGKILL) != 0 && errno == ESRCH)
			break;
		kb_sleep_ns(WAIT_POLL_NS);
	}
	return left;
}

static const char *signal_name(int sig)
{
	switch (sig) {
	case SIGKILL:
		return "SIGKILL";
	case SIGTERM:
		return "SIGTERM";
	case SIGINT:
		return "SIGINT";
	case SIGSEGV:
		return "SIGSEGV";
	case SIGABRT:
		return "SIGABRT";
	default:
		return "a signal";
	}
}

/* ---- the results ------------------------------------------------------------- */

static int read_results(const struct kb_report *rep, int data_fd, struct kb_result *res,
			char *msg, size_t len)
{
	size_t pages_bytes = rep->npages * sizeof *res->pages;
	size_t dirty_bytes = rep->ndirty * sizeof *res->dirty;
	char *text = malloc(rep->trace_bytes + 1);
	char err[256];
	FILE *in;
	int rc = -1;

	res->pages = pages_bytes ? malloc(pages_bytes) : NULL;
	res->dirty = dirty_bytes ? malloc(dirty_bytes) : NULL;
	if (!text || (pages_bytes && !res->pages) || (dirty_bytes && !res->dirty)) {
		kb_fail(msg, len, "out of memory for the results");
		goto out;
	}
	if (pread(data_fd, text, rep->trace_bytes, 0) != (ssize_t)rep->trace_bytes ||
	    (pages_bytes && pread(data_fd, res->pages, pages_bytes, (off_t)rep->trace_bytes) !=
				    (ssize_t)pages_bytes) ||
	    (dirty_bytes &&
	     pread(data_fd, res->dirty, dirty_bytes, (off_t)(rep->trace_bytes + pages_bytes)) !=
		     (ssize_t)dirty_bytes)) {
		kb_fail(msg, len, "cannot read the runner's results: %s", strerror(errno));
		goto out;
	}
	res->npages = rep->npages;
	res->ndirty = rep->ndirty;
	in = fmemopen(text, rep->trace_bytes, "r");
	if (!in) {
		kb_fail(msg, len, "cannot read the runner's trace: %s", strerror(errno));
		goto out;
	}
	if (trace_read_csv(in, "runner trace", &res->trace, err, sizeof err) == 0)
		rc = 0;
	else
		kb_fail(msg, len, "the runner's trace does not read back: %s", err);
	fclose(in);
out:
	free(text);
	return rc;
}

/* The run's status from the runner's wait status and its report. */
static int runner_status(int wstatus, pid_t runner, const struct kb_report *rep, char *msg,
			 size_t len)
{
	if (WIFSIGNALED(wstatus)) {
		kb_fail(msg, len, "the runner (pid %d) was killed by %s%s%s", (int)runner,
			signal_name(WTERMSIG(wstatus)), rep->message[0] ? " after: " : "",
			rep->message);
		return KB_FAILED;
	}
	if (rep->status != KB_OK)
		kb_fail(msg, len, "%s", rep->message[0] ? rep->message : "the runner failed");
	return rep->status == KB_OK ? KB_OK : KB_FAILED;
}

int kb_guard_run(const struct workload *wl, const struct kb_options *opt, struct kb_lock *lock,
		 struct kb_result *res, char *msg, size_t len)
{
	struct kb_report *rep;
	int data_fd, status, wstatus = 0, was_subreaper = 0;
	pid_t runner;

	rep = mmap(NULL, sizeof *rep, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rep == MAP_FAILED) {
		kb_fail(msg, len, "mmap: %s", strerror(errno));
		return KB_FAILED;
	}
	data_fd = memfd_create("ksmkit-results", MFD_CLOEXEC);
	if (data_fd < 0) {
		kb_fail(msg, len, "memfd_create: %s", strerror(errno));
		munmap(rep, sizeof *rep);
		return KB_FAILED;
	}
	memset(rep, 0, sizeof *rep);
	rep->status = KB_FAILED;
	prctl(PR_GET_CHILD_SUBREAPER, &was_subreaper, 0, 0, 0);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	fflush(NULL); /* nothing buffered may be written twice */
	runner = fork();
	if (runner == 0)
		run_child(wl, opt, rep, data_fd, getppid());
	if (runner < 0) {
		kb_fail(msg, len, "cannot fork the runner: %s", strerror(errno));
		status = KB_FAILED;
		goto out;
	}
	setpgid(runner, runner); /* also done by the runner: whoever is first */
	forward_to = runner;
	kb_lock_note_pids(lock, getpid(), runner);
	wait_runner(runner, kb_now_ns() + wl->timeout_ns + RUNNER_GRACE_NS);
	forward_to = 0;
	kill(-runner, SIGKILL); /* the zombie runner keeps the group's id ours */
	waitpid(runner, &wstatus, 0);
	end_group(runner);
	kb_lock_note_pids(lock, getpid(), 0);
	status = runner_status(wstatus, runner, rep, msg, len);
	res->measurement = rep->measurement;
	res->invalid_rows = rep->invalid_rows;
	if (rep->finished && read_results(rep, data_fd, res, msg, len) != 0)
		status = KB_FAILED;
out:
	prctl(PR_SET_CHILD_SUBREAPER, was_subreaper, 0, 0, 0);
	close(data_fd);
	munmap(rep, sizeof *rep);
	return status;
}

/* ---- after the run ------------------------------------------------------------- */

static int64_t counter_now(const char *name)
{
	char path[128], text[32];

	snprintf(path, sizeof path, KB_KSM_DIR "/%s", name);
	if (kb_read_file(path, text, sizeof text) <= 0)
		return -1;
	return strtoll(text, NULL, 10);
}

static bool items_remain(void)
{
	return counter_now("pages_shared") > 0 || counter_now("pages_sharing") > 0 ||
	       counter_now("pages_unshared") > 0 || counter_now("pages_volatile") > 0;
}

/* Run ksmd until it has passed the exited processes once. 0, or -1. */
static int drop_leftover_items(char *msg, size_t len)
{
	int64_t scans = counter_now("full_scans");
	uint64_t deadline = kb_now_ns() + SETTLE_WAIT_NS;
	int err;

	/* The advisor would refuse pages_to_scan; these knobs are restored next. */
	if (kb_knob_exists("advisor_mode"))
		kb_knob_store("advisor_mode", "none");
	kb_knob_store("pages_to_scan", "100000");
	kb_knob_store("sleep_millisecs", "1");
	if ((err = kb_knob_store("run", "1")) != 0)
		return kb_fail(msg, len, "cannot start ksmd to drop the run's leftovers: %s",
			       kb_errno_name(err));
	while (counter_now("full_scans") == scans && items_remain() && kb_now_ns() < deadline)
		kb_sleep_ns(WAIT_POLL_NS);
	kb_knob_store("run", "0");
	if (counter_now("full_scans") == scans && items_remain())
		return kb_fail(msg, len, "ksmd did not complete a scan in %" PRIu64 " s to drop "
					 "the run's leftovers",
			       SETTLE_WAIT_NS / KB_NSEC);
	return 0;
}

static bool stable_nodes_remain(void)
{
	return counter_now("stable_node_chains") > 0 || counter_now("stable_node_dups") > 0 ||
	       counter_now("pages_shared") > 0;
}

/*
 * run = 2 frees every stable node it can. One whose page is still mapped
 * stays (the kernel says this races with an exiting process's __mmput), so
 * try again for a while; writing 2 over 2 does nothing, hence run = 0 first.
 */
static int free_stable_nodes(char *msg, size_t len)
{
	uint64_t deadline = kb_now_ns() + STABLE_RACE_NS;
	int err;

	for (;;) {
		if ((err = kb_knob_store("run", "2")) != 0) {
			kb_append(msg, len, "run = 2 after the run: %s", kb_errno_name(err));
			return -1;
		}
		if (!stable_nodes_remain())
			return 0;
		if (kb_now_ns() >= deadline) {
			kb_append(msg, len, "stable nodes still mapped %" PRIu64 " s after the run",
				  STABLE_RACE_NS / KB_NSEC);
			return -1;
		}
		kb_sleep_ns(WAIT_POLL_NS);
		kb_knob_store("run", "0");
	}
}

int kb_settle(char *msg, size_t len)
{
	char others[512];
	int rc = 0;

	if (items_remain() && drop_leftover_items(msg, len) != 0)
		rc = -1;
	/* run = 2 frees the stable nodes left behind (chains survive the items);
	 * only when nobody else has pages merged or memory registered. */
	if (kb_check_others(others, sizeof others) != 0)
		return rc;
	if (free_stable_nodes(msg, len) != 0)
		rc = -1;
	return rc;
}
