/*
 * kb_session.c - kb_run(): one run from start to finish, in the order that
 * keeps the machine safe.
 *
 *   1. checks: what the measurement needs, root, KSM, NUMA nodes, THP,
 *      soft-dirty: bad input or skip before anything is touched;
 *   2. the lock (waiting for another backend);
 *   3. the sentinel (kb_sentinel.c): from here on, if this process dies,
 *      the sentinel finishes the run and restores from the state file;
 *   4. recovery: if a state file is left by a run that died whole, put its
 *      knobs back first;
 *   5. refusals: other KSM users (unless forced), memory;
 *   6. save every knob, in memory and in the state file; with nobody else
 *      using KSM, settle first (items of long-gone processes would show);
 *   7. the sentinel forks the runner, the guardian waits (kb_guard.c);
 *   8. settle (leftover items, run = 2 when safe) and restore every knob,
 *      then remove the state file, dismiss the sentinel, release the lock.
 * From step 3 on, SIGINT/SIGTERM/SIGHUP are caught (and passed on to the
 * runner), so no signal can skip step 8; SIGKILL leaves it to the sentinel.
 */
#include "config.h"
#include "kb_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void kb_options_init(struct kb_options *opt)
{
	memset(opt, 0, sizeof *opt);
	opt->pages = KB_PAGES_NONE;
	opt->measure = KB_MEASURE_NONE;
}

static void note(const struct kb_options *opt, const char *text)
{
	if (opt->note)
		opt->note(text, opt->note_arg);
}

/* Settle and restore @saved. 0, or -1 with what went wrong in @msg. */
static int put_back(const struct kb_options *opt, const struct kb_knob_set *saved, char *msg,
		    size_t len)
{
	char settle[256] = "", restore[512] = "";
	int rc = 0;

	if (kb_settle(settle, sizeof settle) != 0) {
		char text[320];

		snprintf(text, sizeof text, "cleaning up after the run: %s", settle);
		note(opt, text);
	}
	if (kb_knobs_restore(saved, restore, sizeof restore) != 0) {
		kb_fail(msg, len, "restoring the KSM knobs failed for %s", restore);
		rc = -1;
	}
	return rc;
}

/* A state file means a run died without restoring: restore its knobs now. */
static int recover(const struct kb_options *opt, char *msg, size_t len)
{
	struct kb_restore_report rep;
	char changes[600], text[800];

	if (kb_recover_saved(&rep, msg, len) != 0)
		return -1;
	if (msg && len && msg[0]) {
		note(opt, msg);
		msg[0] = '\0';
	}
	if (!rep.had_saved)
		return 0;
	kb_changes_text(&rep, changes, sizeof changes);
	snprintf(text, sizeof text,
		 "restored the KSM knobs saved by an earlier run (pid %d) that did not finish: %s",
		 (int)rep.saver, changes);
	note(opt, text);
	return 0;
}

/* 0 nobody else uses KSM, 1 somebody does and --force says run, -1 refused. */
static int refuse_or_note_others(const struct kb_options *opt, char *msg, size_t len)
{
	char others[1024], text[1100];
	int rc = kb_check_others(others, sizeof others);

	if (rc < 0) {
		kb_fail(msg, len, "%s", others);
		return -1;
	}
	if (rc > 0 && !opt->force) {
		kb_fail(msg, len, "%s; their pages would count in every global counter (use --force "
				  "to run anyway)",
			others);
		return -1;
	}
	if (rc > 0) {
		snprintf(text, sizeof text, "running anyway (--force): %s", others);
		note(opt, text);
	}
	return rc;
}

/* Steps 5 to 7 with the sentinel standing by. */
static int guarded_run(struct kb_guard *guard, struct kb_lock *lock, const struct kb_job *job,
		       const struct kb_options *opt, struct kb_result *res, char *msg,
		       size_t msglen)
{
	struct kb_knob_set saved;
	char restore[512] = "";
	int status = KB_FAILED, others;

	if (recover(opt, msg, msglen) != 0 || (others = refuse_or_note_others(opt, msg, msglen)) < 0 ||
	    job->check_memory(job->arg, msg, msglen) != 0 ||
	    kb_knobs_save(&saved, msg, msglen) != 0 ||
	    kb_knobs_write_file(&saved, KB_SAVED_FILE, msg, msglen) != 0)
		return KB_FAILED;
	/* Items of processes gone since some earlier run would show in the
	 * first rows: let ksmd drop them first (only with nobody else around). */
	if (!others && kb_settle(restore, sizeof restore) != 0)
		note(opt, restore);
	if (kb_interrupted())
		kb_fail(msg, msglen, "interrupted by a signal before the run started");
	else
		status = kb_guard_run(guard, lock, res, msg, msglen);
	restore[0] = '\0';
	if (put_back(opt, &saved, restore, sizeof restore) == 0) {
		unlink(KB_SAVED_FILE);
	} else if (status == KB_OK) {
		kb_fail(msg, msglen, "%s", restore);
		status = KB_FAILED;
	} else {
		kb_append(msg, msglen, "%s", restore);
	}
	return status;
}

int kb_session_run(const struct kb_job *job, const struct kb_options *opt, struct kb_result *res,
		   char *msg, size_t msglen)
{
	struct kb_guard guard;
	struct kb_lock lock;
	int status;

	if (kb_lock_acquire(&lock, opt->lock_wait_ns ? opt->lock_wait_ns : job->lock_wait_ns, opt,
			    msg, msglen) != 0)
		return KB_FAILED;
	kb_signals_install();
	status = KB_FAILED;
	if (kb_guard_open(&guard, job, opt, msg, msglen) == 0) {
		kb_lock_note_pids(&lock, getpid(), 0, guard.sentinel);
		status = guarded_run(&guard, &lock, job, opt, res, msg, msglen);
	}
	kb_guard_close(&guard);
	kb_signals_restore();
	kb_lock_release(&lock);
	return status;
}

static int workload_main(const void *arg, const struct kb_options *opt, struct kb_report *report,
			 int data_fd)
{
	return kb_runner_main(arg, opt, report, data_fd);
}

static int workload_memory(const void *arg, char *msg, size_t len)
{
	return kb_check_memory(arg, msg, len);
}

int kb_run(const struct workload *wl, const struct kb_options *opt, struct kb_result *res,
	   char *msg, size_t msglen)
{
	struct kb_job job = { .main = workload_main, .arg = wl, .timeout_ns = wl->timeout_ns,
			      .lock_wait_ns = wl->timeout_ns, .check_memory = workload_memory };
	int status;

	memset(res, 0, sizeof *res);
	if (msg && msglen)
		msg[0] = '\0';
	status = kb_check_machine(wl, opt, msg, msglen);
	if (status != KB_OK)
		return status;
	return kb_session_run(&job, opt, res, msg, msglen);
}
