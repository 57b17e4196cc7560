/*
 * kb_guard.c - the guardian: the caller's side of a run that is safe to
 * kill.
 *
 * The caller of kb_run() is the guardian. kb_guard_open() forks the
 * sentinel (kb_sentinel.c), which lives in a session of its own and forks
 * the runner on the guardian's word; the runner does the whole run in its
 * own process group (the workload processes join it). The guardian talks to
 * the sentinel over a socket pair: it asks for the runner, passes signals
 * on, and hears when the runner and every process of its group are gone,
 * with the runner's wait status. Then it reads the runner's results, and
 * kb_run() settles and restores every knob before it dismisses the sentinel.
 *
 * Either side may die: if the guardian is SIGKILLed (alone, with its process
 * group, by the OOM killer), the socket's end tells the sentinel, which ends
 * the run's processes and restores the knobs itself. If the sentinel dies,
 * the runner dies with it (PR_SET_PDEATHSIG), the guardian, a child
 * subreaper for the run, inherits and reaps what is left, and restores as
 * usual. Only both dying at once leaves the knobs for the next run or
 * `ksmkit restore` (the state file).
 *
 * Signals: SIGINT, SIGTERM and SIGHUP are counted; in the guardian the first
 * is passed on (through the sentinel) to the runner as SIGTERM (it tears
 * down and reports "interrupted"), a second as SIGKILL. The runner is in
 * another session, so a terminal's ^C or hangup reaches only the guardian.
 */
#include "config.h"
#include "kb_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define WAIT_POLL_MS 10
#define WAIT_POLL_NS (WAIT_POLL_MS * UINT64_C(1000000))
/* Beyond the workload's own timeout, before the guardian kills the runner. */
#define RUNNER_GRACE_NS (60 * KB_NSEC)
/* How long the sentinel may take to fork the runner, or to exit when dismissed. */
#define SENTINEL_ANSWER_NS (10 * KB_NSEC)
#define GROUP_REAP_TRIES 3000

/*
 * The backend's only mutable globals, because signal handlers can reach
 * nothing else: how many SIGINT/SIGTERM/SIGHUP arrived, and the socket to
 * the sentinel that the guardian passes them on through (-1 when there is
 * none, and in the runner and the sentinel). saved_actions holds the
 * caller's handlers while a run has its own.
 */
static volatile sig_atomic_t signal_count;
static volatile sig_atomic_t forward_fd = -1;
static const int handled_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NHANDLED (sizeof handled_signals / sizeof handled_signals[0])
static struct sigaction saved_actions[NHANDLED];

static void on_signal(int sig)
{
	char cmd = signal_count > 0 ? KB_SENTINEL_KILL : KB_SENTINEL_TERM;

	(void)sig;
	signal_count++;
	if (forward_fd >= 0 && send(forward_fd, &cmd, 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return; /* the sentinel is gone: the runner is ending anyway */
}

static void set_handlers(void (*handler)(int), struct sigaction *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NHANDLED; i++)
		sigaction(handled_signals[i], &sa, old ? &old[i] : NULL);
}

void kb_signals_install(void)
{
	signal_count = 0;
	forward_fd = -1;
	set_handlers(on_signal, saved_actions);
}

void kb_signals_restore(void)
{
	for (size_t i = 0; i < NHANDLED; i++)
		sigaction(handled_signals[i], &saved_actions[i], NULL);
	forward_fd = -1;
}

bool kb_interrupted(void)
{
	return signal_count > 0;
}

void kb_signals_become_runner(void)
{
	forward_fd = -1;
	signal_count = 0;
	set_handlers(on_signal, NULL); /* the sentinel ignored them */
}

void kb_signals_become_sentinel(void)
{
	forward_fd = -1;
	signal_count = 0;
	set_handlers(SIG_IGN, NULL);
}

/* ---- talking to the sentinel ------------------------------------------------ */

static int tell_sentinel(struct kb_guard *g, char cmd)
{
	ssize_t n;

	if (g->sock < 0)
		return -1;
	do
		n = send(g->sock, &cmd, 1, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : -1;
}

/* The sentinel's next report, waiting until @deadline (0: forever); on
 * @deadline with @kill_at_deadline, SIGKILL the runner and keep waiting.
 * 0, or -1 when the sentinel is gone (EOF) or the deadline passed. */
static int hear_sentinel(struct kb_guard *g, struct kb_sentinel_report *rep, uint64_t deadline,
			 bool kill_at_deadline)
{
	size_t got = 0;

	while (got < sizeof *rep) {
		struct pollfd pfd = { .fd = g->sock, .events = POLLIN };
		ssize_t n;

		if (deadline && kb_now_ns() > deadline) {
			if (!kill_at_deadline)
				return -1;
			tell_sentinel(g, KB_SENTINEL_KILL);
			deadline = 0;
		}
		if (poll(&pfd, 1, WAIT_POLL_MS) <= 0)
			continue;
		n = recv(g->sock, (char *)rep + got, sizeof *rep - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
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

/*
 * The sentinel died while the runner ran. The runner dies with it
 * (PR_SET_PDEATHSIG) and comes to the guardian, a subreaper, as does
 * every workload process: end and reap them all. Returns the runner's
 * wait status.
 */
static int end_orphaned_run(struct kb_guard *g)
{
	int wstatus = 0;

	kill(-g->runner, SIGKILL);
	for (uint64_t end = kb_now_ns() + SENTINEL_ANSWER_NS; kb_now_ns() < end;) {
		if (waitpid(g->runner, &wstatus, WNOHANG) == g->runner)
			break;
		kb_sleep_ns(WAIT_POLL_NS);
	}
	end_group(g->runner);
	return wstatus;
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
	/* a live command that cannot be exec'd is the caller's bad input */
	return rep->status == KB_OK || rep->status == KB_BAD_INPUT ? rep->status : KB_FAILED;
}

/*
 * Until the sentinel has left the guardian's session, a kill of the
 * guardian's process group (what a shell's job control or a supervisor
 * sends) ends both, and nothing would put back a knob changed meanwhile:
 * bench/restore-soak caught one such round, the group killed 12 ms after
 * the start, the state file left behind. So nothing is saved or changed
 * before the sentinel says it has a session of its own.
 */
static int await_detached(struct kb_guard *g, char *msg, size_t len)
{
	struct kb_sentinel_report heard;

	if (hear_sentinel(g, &heard, kb_now_ns() + SENTINEL_ANSWER_NS, false) != 0 ||
	    heard.kind != KB_SENTINEL_DETACHED)
		return kb_fail(msg, len, "the sentinel (pid %d) did not leave the session",
			       (int)g->sentinel);
	return 0;
}

int kb_guard_open(struct kb_guard *g, const struct kb_job *job, const struct kb_options *opt,
		  char *msg, size_t len)
{
	int sv[2];

	memset(g, 0, sizeof *g);
	g->job = job;
	g->opt = opt;
	g->data_fd = g->sock = -1;
	g->report = mmap(NULL, sizeof *g->report, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g->report == MAP_FAILED) {
		g->report = NULL;
		return kb_fail(msg, len, "mmap: %s", strerror(errno));
	}
	memset(g->report, 0, sizeof *g->report);
	g->report->status = KB_FAILED;
	g->data_fd = memfd_create("ksmkit-results", MFD_CLOEXEC);
	if (g->data_fd < 0)
		return kb_fail(msg, len, "memfd_create: %s", strerror(errno));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return kb_fail(msg, len, "socketpair: %s", strerror(errno));
	/* If the sentinel dies, the run's processes come to the guardian. */
	prctl(PR_GET_CHILD_SUBREAPER, &g->was_subreaper, 0, 0, 0);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	fflush(NULL); /* nothing buffered may be written twice */
	g->sentinel = fork();
	if (g->sentinel == 0) {
		close(sv[0]);
		kb_sentinel_main(g, sv[1]);
	}
	close(sv[1]);
	if (g->sentinel < 0) {
		int err = errno;

		g->sentinel = 0;
		close(sv[0]);
		return kb_fail(msg, len, "cannot fork the sentinel: %s", strerror(err));
	}
	g->sock = sv[0];
	forward_fd = g->sock;
	return await_detached(g, msg, len);
}

int kb_guard_run(struct kb_guard *g, struct kb_lock *lock, struct kb_result *res, char *msg,
		 size_t len)
{
	struct kb_report *rep = g->report;
	struct kb_sentinel_report heard;
	int status, wstatus;

	if (tell_sentinel(g, KB_SENTINEL_START) != 0 ||
	    hear_sentinel(g, &heard, kb_now_ns() + SENTINEL_ANSWER_NS, false) != 0 ||
	    heard.kind != KB_SENTINEL_STARTED)
		return kb_fail(msg, len, "the sentinel (pid %d) did not start the runner",
			       (int)g->sentinel);
	if (heard.value <= 0)
		return kb_fail(msg, len, "cannot fork the runner: %s", strerror(-heard.value));
	g->runner = heard.value;
	kb_lock_note_pids(lock, getpid(), g->runner, g->sentinel);
	if (hear_sentinel(g, &heard,
			  g->job->timeout_ns ? kb_now_ns() + g->job->timeout_ns + RUNNER_GRACE_NS : 0,
			  true) == 0 &&
	    heard.kind == KB_SENTINEL_ENDED) {
		wstatus = heard.value;
		status = runner_status(wstatus, g->runner, rep, msg, len);
	} else {
		end_orphaned_run(g);
		kb_fail(msg, len, "the sentinel (pid %d) died during the run, and the runner "
				  "(pid %d) with it",
			(int)g->sentinel, (int)g->runner);
		status = KB_FAILED;
	}
	kb_lock_note_pids(lock, getpid(), 0, g->sentinel);
	if (g->job->take_report)
		g->job->take_report(g->job->out, rep);
	res->measurement = rep->measurement;
	res->invalid_rows = rep->invalid_rows;
	if (rep->finished && read_results(rep, g->data_fd, res, msg, len) != 0)
		status = KB_FAILED;
	return status;
}

/* Wait for the dismissed sentinel; SIGKILL it if it does not go. */
static void reap_sentinel(pid_t sentinel)
{
	uint64_t end = kb_now_ns() + SENTINEL_ANSWER_NS;

	while (waitpid(sentinel, NULL, WNOHANG) == 0) {
		if (kb_now_ns() > end) {
			kill(sentinel, SIGKILL);
			waitpid(sentinel, NULL, 0);
			return;
		}
		kb_sleep_ns(WAIT_POLL_NS);
	}
}

void kb_guard_close(struct kb_guard *g)
{
	forward_fd = -1;
	if (g->sentinel > 0) {
		tell_sentinel(g, KB_SENTINEL_DISMISS);
		reap_sentinel(g->sentinel);
		g->sentinel = 0;
	}
	if (g->sock >= 0)
		close(g->sock);
	g->sock = -1;
	if (g->data_fd >= 0)
		close(g->data_fd);
	g->data_fd = -1;
	if (g->report)
		munmap(g->report, sizeof *g->report);
	g->report = NULL;
	prctl(PR_SET_CHILD_SUBREAPER, g->was_subreaper, 0, 0, 0);
}
