/*
 * kb_live.c - live runs (kb_live_run, backend.h): commands started here, a
 * program of the user's or qemu guests, measured on the kernel's KSM full
 * scan by full scan, inside the same guarded session as a workload
 * (kb_session.c: lock, sentinel, refusals, knobs saved and restored).
 *
 * The runner writes the knobs (run = 0 first), starts every command in one
 * process group of its own (the first command leads it), each with
 * PR_SET_PDEATHSIG so that it dies with the runner, and, where asked,
 * PR_SET_MEMORY_MERGE set between fork and exec, as systemd's MemoryKSM=
 * does: the kernel keeps the flag across execve and marks every VMA the new
 * program maps. A close-on-exec pipe tells the runner whether exec worked.
 * Then the hooks' started() runs (a capture following the commands), the
 * row of "scan 0" is taken, and ksmd starts (run = 1).
 *
 * Nothing is done between scans, so ksmd is never paused: the runner polls
 * full_scans every 200 us and reads a row when it moves, while ksmd sleeps;
 * the row is marked invalid when ksmd moved on before it was read (more
 * than one scan ended, or pages_scanned changed). The run ends after the
 * full scans or the time asked for (a last batch row then shows where ksmd
 * stood), or when a command exits: the end of a run --cmd, a failure for a
 * guest. Teardown on every path: the hooks' stopping(), run = 0, SIGKILL to
 * the commands' group and to every child the runner has (it is a child
 * subreaper, so a command's descendant that left the group comes back to
 * it), every one reaped. Their memory goes with them; the guardian then
 * settles (ksmd drops their items) and restores the knobs.
 */
#include "config.h"
#include "kb_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67
#define PR_GET_MEMORY_MERGE 68
#endif

#define POLL_NS (200 * UINT64_C(1000))
#define PROGRESS_NS (250 * UINT64_C(1000000))
#define EXIT_CHECK_NS (20 * UINT64_C(1000000))
/* How long teardown waits for the killed commands to be reaped. */
#define REAP_NS (30 * KB_NSEC)
/* Beyond the duration asked for, before the guardian gives up on the runner. */
#define LIVE_GRACE_NS (120 * KB_NSEC)
#define LOCK_WAIT_NS (600 * KB_NSEC)

/* What the child tells the runner when it cannot become the command. */
struct exec_failure {
	int32_t stage; /* 0 exec, 1 the log file, 2 PR_SET_MEMORY_MERGE */
	int32_t err;
};

struct live_runner {
	const struct kb_live *live;
	const struct kb_options *opt;
	struct kb_report *report;
	struct kb_sampler sampler;
	struct trace *trace;
	pid_t pid[KB_LIVE_MAX_CMDS];
	bool alive[KB_LIVE_MAX_CMDS];
	pid_t pgid;              /* the commands' group: the first command's pid */
	bool hooks_started;
	bool ksmd_running;
	uint64_t scan;           /* full scans since the commands started */
	int64_t kernel_scans;    /* full_scans at the last row */
	int64_t scanned_at_scan; /* pages_scanned at the last scan row */
	int64_t pages_to_scan;
	uint64_t batches;
	uint64_t t_start, last_progress, last_exit_check;
	char *msg;
	size_t msglen;
};

void kb_live_init(struct kb_live *live)
{
	memset(live, 0, sizeof *live);
	for (int k = 0; k < WL_KNOB_COUNT; k++)
		live->knobs[k] = wl_knob_info((enum wl_knob)k)->def;
}

void kb_live_result_free(struct kb_live_result *res)
{
	kb_result_free(&res->run);
	res->end = KB_LIVE_END_NONE;
	res->exit_index = -1;
}

/* ---- the commands ---------------------------------------------------------- */

static void __attribute__((noreturn)) become_command(const struct kb_live_cmd *cmd, pid_t pgid,
						     pid_t runner, int report_fd)
{
	static const int reset[] = { SIGCHLD, SIGPIPE, SIGTTOU, SIGINT, SIGTERM, SIGHUP };
	struct exec_failure why = { 0, 0 };
	sigset_t none;
	int null;

	setpgid(0, pgid);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != runner)
		_exit(127); /* the runner is gone already */
	/* ignored signals stay ignored across exec: give the command defaults */
	for (size_t i = 0; i < sizeof reset / sizeof reset[0]; i++)
		signal(reset[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null >= 0)
		dup2(null, STDIN_FILENO);
	if (cmd->log_path) {
		int fd = open(cmd->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd < 0) {
			why = (struct exec_failure){ 1, errno };
			goto failed;
		}
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	} else {
		dup2(STDERR_FILENO, STDOUT_FILENO); /* ksmkit's own output stays clean */
	}
	if (cmd->merge_any && prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0) != 0) {
		why = (struct exec_failure){ 2, errno };
		goto failed;
	}
	if (cmd->path)
		execv(cmd->path, cmd->argv);
	else
		execvp(cmd->argv[0], cmd->argv);
	why = (struct exec_failure){ 0, errno };
failed:
	if (write(report_fd, &why, sizeof why) != (ssize_t)sizeof why)
		_exit(127);
	_exit(127);
}

static int exec_failed(struct live_runner *r, size_t i, const struct exec_failure *why)
{
	const struct kb_live_cmd *cmd = &r->live->cmds[i];

	r->report->status = KB_BAD_INPUT;
	switch (why->stage) {
	case 1:
		r->report->status = KB_FAILED;
		return kb_fail(r->msg, r->msglen, "cannot write %s (the log of %s): %s",
			       cmd->log_path, cmd->name, strerror(why->err));
	case 2:
		r->report->status = KB_FAILED;
		return kb_fail(r->msg, r->msglen, "%s: prctl(PR_SET_MEMORY_MERGE, 1): %s", cmd->name,
			       strerror(why->err));
	default:
		return kb_fail(r->msg, r->msglen, "cannot run %s: %s",
			       cmd->path ? cmd->path : cmd->argv[0], strerror(why->err));
	}
}

/* Start command @i; return once it has exec'd. 0, or -1 with a message. */
static int start_command(struct live_runner *r, size_t i)
{
	struct exec_failure why;
	int pipefd[2];
	ssize_t n;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) != 0)
		return kb_fail(r->msg, r->msglen, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		become_command(&r->live->cmds[i], r->pgid, getppid(), pipefd[1]);
	}
	close(pipefd[1]);
	if (pid < 0) {
		close(pipefd[0]);
		return kb_fail(r->msg, r->msglen, "cannot fork %s: %s", r->live->cmds[i].name,
			       strerror(errno));
	}
	setpgid(pid, r->pgid ? r->pgid : pid); /* also done by the child: whoever is first */
	if (!r->pgid)
		r->pgid = pid;
	r->pid[i] = pid;
	r->alive[i] = true;
	do
		n = read(pipefd[0], &why, sizeof why);
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	if (n == (ssize_t)sizeof why) {
		waitpid(pid, NULL, 0);
		r->alive[i] = false;
		return exec_failed(r, i, &why);
	}
	return 0;
}

/* A command that has exited since the last look: its index (status in
 * *@wstatus), or -1. */
static int exited_command(struct live_runner *r, int *wstatus)
{
	for (size_t i = 0; i < r->live->ncmds; i++)
		if (r->alive[i] && waitpid(r->pid[i], wstatus, WNOHANG) == r->pid[i]) {
			r->alive[i] = false;
			return (int)i;
		}
	return -1;
}

/* Kill the commands' group and every child left, reap them all. */
static void end_commands(struct live_runner *r)
{
	uint64_t end = kb_now_ns() + REAP_NS;

	for (;;) {
		pid_t pid;

		if (r->pgid > 0)
			kill(-r->pgid, SIGKILL);
		kb_kill_children();
		while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
			for (size_t i = 0; i < r->live->ncmds; i++)
				if (r->pid[i] == pid)
					r->alive[i] = false;
		if ((pid < 0 && errno == ECHILD) || kb_now_ns() > end)
			return;
		kb_sleep_ns(10 * UINT64_C(1000000));
	}
}

/* ---- rows ------------------------------------------------------------------- */

static int read_counter(struct live_runner *r, enum trace_counter c, int64_t *v)
{
	if (kb_sample_counter(&r->sampler, c, v) != 0)
		return kb_fail(r->msg, r->msglen, "cannot read %s/%s: %s", KB_KSM_DIR,
			       trace_counter_name(c), strerror(errno));
	return 0;
}

static struct trace_row *take_row(struct live_runner *r, enum trace_row_kind kind, uint64_t t)
{
	struct trace_row *row = kb_sample_row(&r->sampler, r->trace, kind, r->msg, r->msglen);

	if (!row)
		return NULL;
	for (size_t i = 0; i < r->live->ncmds; i++) {
		bool has_line;

		if (!r->alive[i] || kb_read_ksm_stat(r->pid[i], &row->proc[i], &has_line) != 0)
			row->proc[i].present = false;
	}
	row->time_ns = t - r->t_start;
	row->scan = r->scan;
	row->batch = r->batches;
	if (r->pages_to_scan > 0)
		row->batch += (uint64_t)((row->counter[TRACE_PAGES_SCANNED] - r->scanned_at_scan) /
					 r->pages_to_scan);
	return row;
}

/* A full scan (or more) ended: seen at @t with @full_scans, @scanned. */
static int on_scan_end(struct live_runner *r, int64_t full_scans, int64_t scanned, uint64_t t)
{
	int64_t ended = full_scans - r->kernel_scans, after;
	struct trace_row *row;

	if (ended < 1)
		ended = 1; /* someone else wrote run = 2: count it as one */
	r->scan += (uint64_t)ended;
	row = take_row(r, TRACE_ROW_SCAN, t);
	if (!row || read_counter(r, TRACE_FULL_SCANS, &after) != 0)
		return -1;
	if (r->pages_to_scan > 0)
		r->batches += (uint64_t)((row->counter[TRACE_PAGES_SCANNED] - r->scanned_at_scan) /
					 r->pages_to_scan) +
			      (uint64_t)ended;
	row->batch = r->batches;
	row->valid = ended == 1 && after == full_scans &&
		     row->counter[TRACE_PAGES_SCANNED] == scanned;
	r->report->invalid_rows += !row->valid;
	r->kernel_scans = full_scans;
	r->scanned_at_scan = row->counter[TRACE_PAGES_SCANNED];
	r->pages_to_scan = row->counter[TRACE_PAGES_TO_SCAN];
	return 0;
}

static void report_progress(struct live_runner *r, uint64_t now)
{
	const struct kb_live *live = r->live;
	struct kb_progress p = { 0 };

	if (!r->opt->progress || now - r->last_progress < PROGRESS_NS)
		return;
	r->last_progress = now;
	p.scans_done = r->scan;
	p.scans_wanted = live->scans;
	p.time_wanted_ns = live->duration_ns;
	p.elapsed_ns = now - r->t_start;
	kb_sample_counter(&r->sampler, TRACE_PAGES_SHARING, &p.pages_sharing);
	r->opt->progress(&p, r->opt->progress_arg);
}

static int set_run(struct live_runner *r, bool on)
{
	int err = kb_knob_store("run", on ? "1" : "0");

	if (err)
		return kb_fail(r->msg, r->msglen, "cannot write run = %d: %s", on, kb_errno_name(err));
	r->ksmd_running = on;
	return 0;
}

/* A command has exited with @wstatus: the end, or a failure. */
static int command_ended(struct live_runner *r, int index, int wstatus, uint64_t now)
{
	const struct kb_live_cmd *cmd = &r->live->cmds[index];

	r->report->live_end = KB_LIVE_END_EXITED;
	r->report->live_exit_index = index;
	r->report->live_exit_status = wstatus;
	if (!take_row(r, TRACE_ROW_BATCH, now))
		return -1;
	if (r->live->end_on_exit_ok)
		return 0;
	if (WIFSIGNALED(wstatus))
		return kb_fail(r->msg, r->msglen, "%s (pid %d) was killed by signal %d during the run",
			       cmd->name, (int)r->pid[index], WTERMSIG(wstatus));
	return kb_fail(r->msg, r->msglen, "%s (pid %d) exited with status %d during the run",
		       cmd->name, (int)r->pid[index], WEXITSTATUS(wstatus));
}

static int live_loop(struct live_runner *r)
{
	const struct kb_live *live = r->live;

	if (read_counter(r, TRACE_FULL_SCANS, &r->kernel_scans) ||
	    read_counter(r, TRACE_PAGES_SCANNED, &r->scanned_at_scan) ||
	    read_counter(r, TRACE_PAGES_TO_SCAN, &r->pages_to_scan) || set_run(r, true) != 0)
		return -1;
	for (;;) {
		int64_t full_scans, scanned;
		uint64_t now;
		int index, wstatus;

		if (read_counter(r, TRACE_FULL_SCANS, &full_scans) ||
		    read_counter(r, TRACE_PAGES_SCANNED, &scanned))
			return -1;
		now = kb_now_ns();
		if (full_scans != r->kernel_scans && on_scan_end(r, full_scans, scanned, now) != 0)
			return -1;
		if (live->scans && r->scan >= live->scans) {
			r->report->live_end = KB_LIVE_END_SCANS;
			return 0;
		}
		if (live->duration_ns && now - r->t_start >= live->duration_ns) {
			r->report->live_end = KB_LIVE_END_DURATION;
			return take_row(r, TRACE_ROW_BATCH, now) ? 0 : -1;
		}
		if (now - r->last_exit_check >= EXIT_CHECK_NS) {
			r->last_exit_check = now;
			if ((index = exited_command(r, &wstatus)) >= 0)
				return command_ended(r, index, wstatus, now);
		}
		if (kb_interrupted())
			return kb_fail(r->msg, r->msglen,
				       "interrupted by a signal after %" PRIu64 " full scans", r->scan);
		report_progress(r, now);
		kb_sleep_ns(POLL_NS);
	}
}

/* ---- the runner --------------------------------------------------------------- */

static int live_setup(struct live_runner *r)
{
	const struct kb_live *live = r->live;
	struct workload knobs;

	/* the knobs as a workload's [global] would write them */
	memset(&knobs, 0, sizeof knobs);
	knobs.path = (char *)"--knob";
	memcpy(knobs.knobs, live->knobs, sizeof knobs.knobs);
	memcpy(knobs.knob_given, live->knob_given, sizeof knobs.knob_given);
	if (kb_knobs_apply_workload(&knobs, r->msg, r->msglen) != 0)
		return -1;
	for (size_t i = 0; i < live->ncmds; i++)
		if (start_command(r, i) != 0)
			return -1;
	if (live->hooks.started) {
		r->hooks_started = true;
		if (live->hooks.started(r->pid, live->ncmds, live->hooks.arg, r->msg, r->msglen) != 0)
			return -1;
	}
	r->t_start = r->last_progress = r->last_exit_check = kb_now_ns();
	r->sampler.ksmd_cpu0 = kb_ksmd_cpu_ns(&r->sampler);
	return take_row(r, TRACE_ROW_SCAN, r->t_start) ? 0 : -1;
}

/* Teardown, whatever happened: 0, or -1 with a message when @ok and it failed. */
static int live_finish(struct live_runner *r, bool ok)
{
	char why[256] = "";
	int rc = 0;

	if (r->hooks_started && r->live->hooks.stopping &&
	    r->live->hooks.stopping(r->live->hooks.arg, why, sizeof why) != 0) {
		if (ok)
			kb_fail(r->msg, r->msglen, "%s", why);
		rc = -1;
	}
	if (r->ksmd_running && kb_knob_store("run", "0") != 0 && ok && rc == 0)
		rc = kb_fail(r->msg, r->msglen, "cannot write run = 0");
	r->ksmd_running = false;
	end_commands(r);
	return rc;
}

static int live_init(struct live_runner *r, const struct kb_live *live,
		     const struct kb_options *opt, struct kb_report *report)
{
	const char *names[KB_LIVE_MAX_CMDS];
	char release[128] = "";

	memset(r, 0, sizeof *r);
	r->live = live;
	r->opt = opt;
	r->report = report;
	r->msg = report->message;
	r->msglen = sizeof report->message;
	report->live_exit_index = -1;
	for (int c = 0; c < TRACE_COUNTER_COUNT; c++)
		r->sampler.counter_fd[c] = -1;
	r->sampler.ksmd_fd = -1;
	for (size_t i = 0; i < live->ncmds; i++)
		names[i] = live->cmds[i].name;
	r->trace = trace_new("kernel", live->ncmds, names);
	if (kb_read_file("/proc/sys/kernel/osrelease", release, sizeof release) > 0)
		release[strcspn(release, "\n")] = '\0';
	if (!r->trace || trace_set_info(r->trace, live->name ? live->name : "live", release, "checksum", false) != 0)
		return kb_fail(r->msg, r->msglen, "out of memory (or a bad command name)");
	return kb_sampler_open(&r->sampler, r->msg, r->msglen);
}

static int live_main(const void *arg, const struct kb_options *opt, struct kb_report *report,
		     int data_fd)
{
	struct live_runner r;
	struct sigaction sa;
	bool ok;

	/* the commands' exit statuses are waited for: SIGCHLD stays default */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sigaction(SIGTTOU, &sa, NULL);
	/* a command's descendant that leaves its group is still ours to end */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	report->status = KB_FAILED;
	ok = live_init(&r, arg, opt, report) == 0;
	ok = ok && live_setup(&r) == 0 && live_loop(&r) == 0;
	if (live_finish(&r, ok) != 0)
		ok = false;
	if (r.trace && kb_report_results(report, r.trace, NULL, data_fd) != 0 && ok)
		ok = kb_fail(report->message, sizeof report->message,
			     "cannot hand the results to the guardian: %s", strerror(errno)) == 0;
	if (ok)
		report->status = KB_OK;
	else if (report->status == KB_OK)
		report->status = KB_FAILED;
	kb_sampler_close(&r.sampler);
	trace_free(r.trace);
	return report->status;
}

/* ---- the guardian's side ----------------------------------------------------------- */

static int live_memory(const void *arg, char *msg, size_t len)
{
	const struct kb_live *live = arg;

	return live->memory_bytes ? kb_check_memory_need(live->memory_bytes, "the commands", msg, len)
				  : 0;
}

static void live_take_report(void *out, const struct kb_report *rep)
{
	struct kb_live_result *res = out;

	res->end = (enum kb_live_end)rep->live_end;
	res->exit_index = rep->live_exit_index;
	res->exit_status = rep->live_exit_status;
}

static int check_live(const struct kb_live *live, char *msg, size_t len)
{
	bool merge_any = false;

	if (live->ncmds < 1 || live->ncmds > KB_LIVE_MAX_CMDS) {
		kb_fail(msg, len, "a live run takes 1 to %d commands, not %zu", KB_LIVE_MAX_CMDS,
			live->ncmds);
		return KB_BAD_INPUT;
	}
	for (size_t i = 0; i < live->ncmds; i++) {
		if (!live->cmds[i].argv || !live->cmds[i].argv[0] || !live->cmds[i].name) {
			kb_fail(msg, len, "command %zu has no program to run", i + 1);
			return KB_BAD_INPUT;
		}
		merge_any = merge_any || live->cmds[i].merge_any;
	}
	if (kb_check_root_and_ksm(msg, len) != KB_OK)
		return KB_SKIPPED;
	if (merge_any && prctl(PR_GET_MEMORY_MERGE, 0, 0, 0, 0) < 0 && errno == EINVAL) {
		kb_fail(msg, len, "this kernel has no PR_SET_MEMORY_MERGE (it came in 6.4); "
				  "skipped");
		return KB_SKIPPED;
	}
	return KB_OK;
}

int kb_live_run(const struct kb_live *live, const struct kb_options *opt,
		struct kb_live_result *res, char *msg, size_t msglen)
{
	struct kb_job job = { .main = live_main, .arg = live, .lock_wait_ns = LOCK_WAIT_NS,
			      .check_memory = live_memory, .take_report = live_take_report,
			      .out = res };
	int status;

	memset(res, 0, sizeof *res);
	res->exit_index = -1;
	if (msg && msglen)
		msg[0] = '\0';
	status = check_live(live, msg, msglen);
	if (status != KB_OK)
		return status;
	if (live->duration_ns)
		job.timeout_ns = live->duration_ns + LIVE_GRACE_NS;
	return kb_session_run(&job, opt, &res->run, msg, msglen);
}
