/*
 * kb_session.c - kb_run(): one run from start to finish, in the order that
 * keeps the machine safe.
 *
 *   1. checks: what the measurement needs, root, KSM, NUMA nodes, THP,
 *      soft-dirty: bad input or skip before anything is touched;
 *   2. the lock (waiting for another backend);
 *   3. recovery: if a state file is left by a run whose guardian died, put
 *      its knobs back first;
 *   4. refusals: other KSM users (unless forced), memory;
 *   5. save every knob, in memory and in the state file; with nobody else
 *      using KSM, settle first (items of long-gone processes would show);
 *   6. the guardian runs the runner (kb_guard.c);
 *   7. settle (leftover items, run = 2 when safe) and restore every knob,
 *      then remove the state file, release the lock.
 * From step 3 on, SIGINT/SIGTERM/SIGHUP are caught (and passed on to the
 * runner), so no signal can skip step 7.
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
	struct kb_knob_set saved;
	char text[256];
	pid_t saver;

	if (kb_knobs_read_file(&saved, KB_SAVED_FILE, &saver, msg, len) != 0) {
		if (errno == ENOENT) {
			if (msg && len)
				msg[0] = '\0';
			return 0;
		}
		kb_append(msg, len, "check " KB_KSM_DIR " and remove the file");
		return -1;
	}
	snprintf(text, sizeof text,
		 "restoring the KSM knobs saved by an earlier run (pid %d) that did not finish",
		 (int)saver);
	note(opt, text);
	if (put_back(opt, &saved, msg, len) != 0)
		return -1;
	unlink(KB_SAVED_FILE);
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

int kb_run(const struct workload *wl, const struct kb_options *opt, struct kb_result *res,
	   char *msg, size_t msglen)
{
	struct kb_knob_set saved;
	struct kb_lock lock;
	char restore[512] = "";
	int status, others = 0;
	bool restored;

	memset(res, 0, sizeof *res);
	if (msg && msglen)
		msg[0] = '\0';
	status = kb_check_machine(wl, opt, msg, msglen);
	if (status != KB_OK)
		return status;
	if (kb_lock_acquire(&lock, opt->lock_wait_ns ? opt->lock_wait_ns : wl->timeout_ns, opt,
			    msg, msglen) != 0)
		return KB_FAILED;
	kb_signals_install();
	status = KB_FAILED;
	if (recover(opt, msg, msglen) != 0 || (others = refuse_or_note_others(opt, msg, msglen)) < 0 ||
	    kb_check_memory(wl, msg, msglen) != 0 || kb_knobs_save(&saved, msg, msglen) != 0 ||
	    kb_knobs_write_file(&saved, KB_SAVED_FILE, msg, msglen) != 0)
		goto out;
	/* Items of processes gone since some earlier run would show in the
	 * first rows: let ksmd drop them first (only with nobody else around). */
	if (!others && kb_settle(restore, sizeof restore) != 0)
		note(opt, restore);
	if (kb_interrupted())
		kb_fail(msg, msglen, "interrupted by a signal before the run started");
	else
		status = kb_guard_run(wl, opt, &lock, res, msg, msglen);
	restore[0] = '\0';
	restored = put_back(opt, &saved, restore, sizeof restore) == 0;
	if (restored) {
		unlink(KB_SAVED_FILE);
	} else if (status == KB_OK) {
		kb_fail(msg, msglen, "%s", restore);
		status = KB_FAILED;
	} else {
		kb_append(msg, msglen, "%s", restore);
	}
out:
	kb_signals_restore();
	kb_lock_release(&lock);
	return status;
}
