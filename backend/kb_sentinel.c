/*
 * kb_sentinel.c - the sentinel: the process that puts KSM back when the
 * guardian cannot.
 *
 * kb_guard_open() forks it from the guardian as soon as the backend holds
 * its lock, before any knob changes. It leaves the guardian's session
 * (setsid), so a kill of the guardian's process group, a terminal's hangup
 * or ^C does not reach it, and says so (KB_SENTINEL_DETACHED) before the
 * guardian writes the state file or changes a knob; it ignores SIGINT,
 * SIGTERM and SIGHUP; it keeps the lock's open file, so no other backend
 * starts until it has exited. On
 * the guardian's word it forks the runner (which therefore is its child, and
 * it a child subreaper, so every orphaned workload process comes to it too),
 * passes the guardian's signals on to the runner, and when the runner exits
 * ends and reaps the rest of its process group and reports the runner's wait
 * status. The guardian then restores the knobs and dismisses it.
 *
 * If the guardian's end of the socket closes without a dismissal, the
 * guardian is dead, however it died: the sentinel kills the run's process
 * group, reaps it, and does what the guardian would have done, from the
 * state file (kb_recover_saved), so it is right at every moment of a run,
 * including while the guardian itself was recovering an older run's knobs.
 * It logs what it did to KB_RESCUE_LOG and exits. Its standard streams are
 * /dev/null once the runner has them, so a pipe reading the run's output
 * ends when the guardian does.
 */
#include "config.h"
#include "kb_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define POLL_MS 10
#define POLL_NS (POLL_MS * UINT64_C(1000000))
/* Bounds the wait for the run's processes to die once SIGKILLed. */
#define END_GROUP_NS (30 * KB_NSEC)

struct sentinel {
	struct kb_guard *g; /* the guardian's, as it was at the fork */
	int sock;           /* to the guardian */
	pid_t guardian;     /* our parent at the fork */
	pid_t self;
	pid_t runner;       /* 0 before it is started and after it is reaped */
	bool runner_done;   /* it has run and been reaped */
};

/* Leave without exit hooks: a sanitizer build would leak-check the copy
 * of the guardian's heap this process is. */
static void __attribute__((noreturn)) exit_now(int code)
{
	syscall(SYS_exit_group, code);
	_exit(code); /* not reached */
}

static void become_sentinel(struct sentinel *s)
{
	s->guardian = getppid();
	setsid();
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	prctl(PR_SET_NAME, "ksmkit-sentinel", 0, 0, 0);
	kb_signals_become_sentinel();
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	s->self = getpid();
}

/* Standard streams to /dev/null: only the runner writes to them. */
static void let_go_of_streams(void)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null < 0)
		return;
	for (int fd = 0; fd <= 2; fd++)
		dup2(null, fd);
	if (null > 2)
		close(null);
}

static void report(struct sentinel *s, int32_t kind, int32_t value)
{
	struct kb_sentinel_report r = { .kind = kind, .value = value };

	/* A guardian that is gone hears nothing; the EOF tells us so next. */
	if (send(s->sock, &r, sizeof r, MSG_NOSIGNAL) != (ssize_t)sizeof r)
		return;
}

/* ---- the runner ---------------------------------------------------------------- */

static void __attribute__((noreturn)) run_child(struct sentinel *s)
{
	struct kb_guard *g = s->g;

	close(s->sock);
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != s->self)
		_exit(KB_FAILED); /* the sentinel is already gone */
	prctl(PR_SET_NAME, "ksmkit-runner", 0, 0, 0);
	kb_signals_become_runner();
	_exit(g->job->main(g->job->arg, g->opt, g->report, g->data_fd));
}

static void start_runner(struct sentinel *s)
{
	pid_t pid;

	if (s->runner || s->runner_done)
		return;
	pid = fork();
	if (pid == 0)
		run_child(s);
	if (pid < 0) {
		report(s, KB_SENTINEL_STARTED, -errno);
		return;
	}
	setpgid(pid, pid); /* also done by the runner: whoever is first */
	s->runner = pid;
	/* The runner has the streams and the results now. */
	let_go_of_streams();
	close(s->g->data_fd);
	report(s, KB_SENTINEL_STARTED, pid);
}

/*
 * Kill what is left of the runner's process group and reap every child
 * (orphaned workload processes come here: we are their subreaper, and every
 * child of ours is the run's, so each is killed) until none is left. The
 * runner itself is reaped already, or is a zombie that keeps the group's id
 * from being reused until we reap it here.
 */
static void end_group(pid_t pgid)
{
	uint64_t end = kb_now_ns() + END_GROUP_NS;

	for (;;) {
		pid_t pid;

		do
			pid = waitpid(-1, NULL, WNOHANG);
		while (pid > 0);
		if (pid < 0 && errno == ECHILD && kill(-pgid, 0) != 0)
			return;
		if (kb_now_ns() > end)
			return;
		kill(-pgid, SIGKILL);
		/* a live run's command that left the group: orphaned, it came here */
		kb_kill_children();
		kb_sleep_ns(POLL_NS);
	}
}

/* If the runner has exited: end its group and tell the guardian. */
static void check_runner(struct sentinel *s)
{
	int wstatus;

	if (!s->runner || waitpid(s->runner, &wstatus, WNOHANG) != s->runner)
		return;
	end_group(s->runner);
	s->runner = 0;
	s->runner_done = true;
	report(s, KB_SENTINEL_ENDED, wstatus);
}

static void signal_runner(struct sentinel *s, int sig)
{
	if (s->runner)
		kill(s->runner, sig);
}

/* ---- the guardian is gone ------------------------------------------------------ */

static void __attribute__((noreturn)) rescue(struct sentinel *s)
{
	struct kb_restore_report rep;
	char msg[512] = "", changes[600], runner[48] = "", line[1400];

	if (s->runner) {
		snprintf(runner, sizeof runner, ", ended its runner (pid %d)", (int)s->runner);
		kill(-s->runner, SIGKILL);
		kill(s->runner, SIGKILL);
		waitpid(s->runner, NULL, 0);
		end_group(s->runner);
		s->runner = 0;
	}
	if (kb_recover_saved(&rep, msg, sizeof msg) != 0) {
		snprintf(line, sizeof line, "sentinel %d: the guardian (pid %d) died%s; restoring "
					    "failed: %s",
			 (int)s->self, (int)s->guardian, runner, msg);
		kb_log_rescue(line);
		exit_now(1);
	}
	if (!rep.had_saved)
		exit_now(0); /* the guardian had restored everything already */
	kb_changes_text(&rep, changes, sizeof changes);
	snprintf(line, sizeof line, "sentinel %d: the guardian (pid %d) died%s; restored %s",
		 (int)s->self, (int)s->guardian, runner, changes);
	kb_log_rescue(line);
	exit_now(0);
}

/* ---- the loop -------------------------------------------------------------------- */

/* The guardian's next command: a byte, 0 at EOF, -1 when none came. */
static int next_command(int sock)
{
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	char cmd;
	ssize_t n;

	if (poll(&pfd, 1, POLL_MS) <= 0)
		return -1;
	n = recv(sock, &cmd, 1, 0);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? -1 : 0;
	return n == 0 ? 0 : (unsigned char)cmd;
}

void kb_sentinel_main(struct kb_guard *g, int sock)
{
	struct sentinel s = { .g = g, .sock = sock };

	become_sentinel(&s);
	report(&s, KB_SENTINEL_DETACHED, s.self);
	for (;;) {
		int cmd = next_command(s.sock);

		switch (cmd) {
		case 0:
			rescue(&s);
		case KB_SENTINEL_START:
			start_runner(&s);
			break;
		case KB_SENTINEL_TERM:
			signal_runner(&s, SIGTERM);
			break;
		case KB_SENTINEL_KILL:
			signal_runner(&s, SIGKILL);
			break;
		case KB_SENTINEL_DISMISS:
			if (s.runner) { /* not expected: the guardian waits for the runner */
				kill(-s.runner, SIGKILL);
				waitpid(s.runner, NULL, 0);
				end_group(s.runner);
			}
			exit_now(0);
		default:
			break;
		}
		check_runner(&s);
	}
}
