/*
 * kb_run.c - the runner: one workload on the kernel's KSM, in lockstep with
 * ksmd's full scans.
 *
 * Setup: the workload's knobs are written (run = 0 first), the initial
 * processes are started, and the regions are set up in file order (map,
 * fill, check that a thp = always region got its huge pages, mark
 * mergeable), so processes register with KSM in the order the workload
 * says. The steps after scan 0 run, and ksmd is started (run = 1).
 *
 * Lockstep: the workload's schedule is in full scans. The runner polls
 * full_scans with pread() every 200 us. The end of a full scan always ends a
 * ksmd batch, after which ksmd sleeps sleep_millisecs, so a change seen
 * promptly is seen while ksmd sleeps. If steps are due, ksmd is paused
 * (run = 0, which waits for a running batch) before the row is read and the
 * steps applied, then resumed (run = 1); with nothing due the row is read
 * during the sleep without pausing, which perturbs less. Either way the row
 * is checked: if pages_scanned, pages_skipped or full_scans moved between
 * seeing the increment and finishing the row (ksmd started its next batch:
 * sleep_millisecs too short, or the runner was late), or more than one scan
 * ended since the last row, the row is marked invalid rather than silently
 * wrong. The workload's scan count is the runner's own: a run = 2 event
 * resets the kernel's full_scans, not it.
 *
 * Rows, as the simulator writes them: one for "scan 0" (setup done, the
 * steps after scan 0 not yet applied), one after every full scan (before
 * that point's steps), with --per-batch one after every batch, and with
 * time = T a last batch row where the time ran out. Each holds every counter
 * under /sys/kernel/mm/ksm, each process's ksm_stat, ksmd's CPU time, the
 * time (CLOCK_MONOTONIC_RAW) since setup was done, and the batch count,
 * which for a full scan of N processed pages at pages_to_scan P is N / P + 1
 * batches (a scan always ends a batch; one that used its last unit of budget
 * on the last page needs one more, empty, batch to wrap).
 *
 * Teardown, on every path: continuous writers stop, ksmd is paused, every
 * process unmerges, unmaps and exits; the results go to the guardian. The
 * knobs are the guardian's to restore, not the runner's.
 */
#include "config.h"
#include "kb_runner.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define POLL_NS (200 * UINT64_C(1000))
#define PROGRESS_NS (250 * UINT64_C(1000000))
/* How often the lockstep loop checks that no workload process died. */
#define ALIVE_CHECK_NS (20 * UINT64_C(1000000))

/* What ended a wait for the kernel. */
enum wait_end { WAIT_SCAN, WAIT_BATCH, WAIT_TIME_UP, WAIT_FAILED };

/* The counters as first seen after a scan (or batch) ended. */
struct seen {
	int64_t full_scans;
	int64_t scanned; /* pages_scanned */
	int64_t skipped; /* pages_skipped */
	uint64_t t;
};

/* ---- ksmd ----------------------------------------------------------------- */

static int set_run(struct kb_runner *r, bool on)
{
	int err = kb_knob_store("run", on ? "1" : "0");

	if (err)
		return kb_fail(r->msg, r->msglen, "cannot write run = %d: %s", on, kb_errno_name(err));
	r->ksmd_running = on;
	return 0;
}

/* run = 0 returns once ksmd's batch in progress is done: that is when it stops. */
static int pause_ksmd(struct kb_runner *r)
{
	r->paused_at = 0;
	if (!r->ksmd_running)
		return 0;
	if (set_run(r, false) != 0)
		return -1;
	r->paused_at = kb_now_ns();
	return 0;
}

static int read_counter(struct kb_runner *r, enum trace_counter c, int64_t *v)
{
	if (kb_sample_counter(&r->sampler, c, v) != 0)
		return kb_fail(r->msg, r->msglen, "cannot read %s/%s: %s", KB_KSM_DIR,
			       trace_counter_name(c), strerror(errno));
	return 0;
}

/* ---- the state between scans ---------------------------------------------- */

/* Whether the workload goes on after scan @scan (with scans = N it stops at N). */
static bool goes_on_after(const struct kb_runner *r, uint64_t scan)
{
	return r->wl->stop != WL_STOP_SCANS || scan < r->wl->stop_scans;
}

static bool finished(const struct kb_runner *r)
{
	return !goes_on_after(r, r->scan);
}

static bool cwriter_event_at(const struct kb_runner *r, uint64_t scan)
{
	for (size_t i = 0; i < r->wl->nwriters; i++) {
		const struct wl_writer *w = &r->wl->writers[i];

		if (w->when == WL_WHEN_CONTINUOUS && (w->from_scan == scan || w->until_scan == scan))
			return true;
	}
	return false;
}

static bool capture_step_at(const struct kb_runner *r, uint64_t scan)
{
	for (size_t i = 0; i < r->wl->nregions; i++)
		if (r->wl->regions[i].capture && wl_capture_step_at(r->wl->regions[i].capture, scan))
			return true;
	return false;
}

/* Whether anything must happen after scans first..last (ksmd paused). */
static bool work_due(const struct kb_runner *r, uint64_t first, uint64_t last)
{
	const struct kb_options *opt = r->opt;

	if (opt->pages == KB_PAGES_EVERY_SCAN || opt->soft_dirty || opt->per_batch)
		return true;
	if (!goes_on_after(r, last))
		return true;
	for (uint64_t s = first; s <= last; s++)
		if (wl_steps_after_scan(r->wl, s, NULL, 0) || cwriter_event_at(r, s) ||
		    capture_step_at(r, s))
			return true;
	return false;
}

/* Stop continuous writers ending at @scan, run its steps, start those
 * beginning at it. */
static int apply_point(struct kb_runner *r, uint64_t scan)
{
	const struct workload *wl = r->wl;

	for (size_t i = 0; i < wl->nwriters; i++)
		if (r->cwriter[i] && wl->writers[i].until_scan == scan) {
			int rc = kb_cwriter_stop(r->cwriter[i], r->msg, r->msglen);

			r->cwriter[i] = NULL;
			if (rc != 0)
				return -1;
		}
	if (kb_steps_apply(r, scan) != 0)
		return -1;
	for (size_t i = 0; i < wl->nwriters; i++)
		if (wl->writers[i].when == WL_WHEN_CONTINUOUS && wl->writers[i].from_scan == scan &&
		    wl->writers[i].until_scan != scan &&
		    kb_cwriter_start(&r->cwriter[i], wl, i, &r->procs, r->msg, r->msglen) != 0)
			return -1;
	return 0;
}

static int stop_cwriters(struct kb_runner *r, bool report)
{
	int rc = 0;

	for (size_t i = 0; i < r->wl->nwriters; i++) {
		if (!r->cwriter[i])
			continue;
		if (kb_cwriter_stop(r->cwriter[i], report ? r->msg : NULL, report ? r->msglen : 0))
			rc = -1;
		r->cwriter[i] = NULL;
	}
	return rc;
}

static bool cwriter_failed(const struct kb_runner *r)
{
	for (size_t i = 0; i < r->wl->nwriters; i++)
		if (kb_cwriter_failed(r->cwriter[i]))
			return true;
	return false;
}

static struct trace_row *take_row(struct kb_runner *r, enum trace_row_kind kind, uint64_t t);
static int capture_after(struct kb_runner *r, bool last);

/* ---- setup ---------------------------------------------------------------- */

static int check_deadline(struct kb_runner *r, const char *doing)
{
	if (kb_interrupted())
		return kb_fail(r->msg, r->msglen, "interrupted by a signal while %s", doing);
	if (kb_now_ns() >= r->deadline)
		return kb_fail(r->msg, r->msglen, "%s: timed out while %s (timeout = %" PRIu64 " s)",
			       r->wl->path, doing, r->wl->timeout_ns / KB_NSEC);
	return 0;
}

/*
 * A thp = always region is backed by huge pages from its first fault on, in
 * the simulator; so must it be here before the first scan. A kernel that
 * gave it small pages instead (THP off, no free 2 MiB page) would measure
 * another workload: refuse, saying where and why it may be.
 */
static int check_huge_pages(struct kb_runner *r, size_t index, size_t proc)
{
	const struct wl_region *reg = &r->wl->regions[index];
	struct kb_huge_census census;
	char settings[160];

	if (reg->thp != WL_THP_ALWAYS)
		return 0;
	if (kb_huge_census(&r->capture, &r->procs, proc, index, &census, r->msg,
			   r->msglen) != 0)
		return -1;
	if (census.huge == census.populated)
		return 0;
	kb_thp_settings(settings, sizeof settings);
	return kb_fail(r->msg, r->msglen,
		       "%s:%u: [region %s] thp = always: only %" PRIu64 " of %" PRIu64 " 2 MiB "
		       "ranges are huge pages after setup (the first that is not: pages %" PRIu64
		       "-%" PRIu64 "; %s); refusing to measure something else",
		       r->wl->path, reg->line, reg->name, census.huge, census.populated,
		       census.first_small, census.first_small + KB_HUGE_SIZE / KB_PAGE_SIZE - 1,
		       settings);
}

int kb_runner_setup_region(struct kb_runner *r, size_t index, size_t proc, bool after_exec)
{
	const struct wl_region *reg = &r->wl->regions[index];
	bool huge = reg->thp == WL_THP_ALWAYS || kb_measure_forces_thp(r);
	struct kb_cmd map = { .op = KB_OP_MAP, .region = (uint32_t)index, .arg = reg->node,
			      .flags = huge ? KB_CMD_HUGE : 0 };
	struct kb_cmd fill = { .op = KB_OP_FILL, .region = (uint32_t)index, .arg = -1 };
	struct kb_cmd merge = { .op = KB_OP_MERGE, .region = (uint32_t)index, .arg = -1 };
	struct kb_range all = { 0, reg->pages - 1 };
	struct kb_reply reply;

	if (kb_proc_call(&r->procs, proc, &map, NULL, 0, &reply, r->msg, r->msglen) ||
	    kb_proc_call(&r->procs, proc, &fill, NULL, 0, &reply, r->msg, r->msglen) ||
	    (reg->capture && kb_steps_replay_initial(r, index, proc)) ||
	    check_huge_pages(r, index, proc) ||
	    (!after_exec && kb_measure_region_filled(r, index)) ||
	    check_deadline(r, "setting up regions"))
		return -1;
	if (reg->merge == WL_MERGE_NONE)
		return 0;
	if (reg->merge == WL_MERGE_PRCTL)
		/* after an exec the flag is what ksm_execve kept, not set again */
		merge.flags = KB_CMD_PRCTL | (after_exec ? KB_CMD_INHERITED : 0);
	else
		merge.count = 1;
	if (!after_exec)
		kb_measure_merge_marking(r);
	return kb_proc_call(&r->procs, proc, &merge, merge.count ? &all : NULL,
			    merge.count * sizeof all, &reply, r->msg, r->msglen);
}

static int runner_setup(struct kb_runner *r)
{
	const struct workload *wl = r->wl;

	if (kb_knobs_apply_workload(wl, r->msg, r->msglen) != 0)
		return -1;
	for (size_t p = 0; p < wl->nprocs_initial; p++)
		if (kb_procs_spawn(&r->procs, p, r->msg, r->msglen) != 0)
			return -1;
	for (size_t i = 0; i < wl->nregions; i++)
		if (kb_runner_setup_region(r, i, wl->regions[i].process, false) != 0)
			return -1;
	if (r->opt->soft_dirty &&
	    kb_capture_soft_dirty(&r->capture, &r->procs, 0, false, r->msg, r->msglen) != 0)
		return -1;
	/* Time counts from here, the row of "scan 0": setup done, nothing scanned. */
	r->t_start = r->last_progress = kb_now_ns();
	r->sampler.ksmd_cpu0 = kb_ksmd_cpu_ns(&r->sampler);
	if (!take_row(r, TRACE_ROW_SCAN, r->t_start) || capture_after(r, false) != 0)
		return -1;
	return apply_point(r, 0);
}

/* ---- rows ------------------------------------------------------------------ */

static void sample_procs(struct kb_runner *r, struct trace_row *row)
{
	for (size_t i = 0; i < r->wl->nprocs; i++) {
		bool has_line;

		if (!r->procs.proc[i].alive ||
		    kb_read_ksm_stat(r->procs.proc[i].pid, &row->proc[i], &has_line) != 0)
			row->proc[i].present = false;
	}
}

/* Append a row of @kind with everything read now. NULL with a message. */
static struct trace_row *take_row(struct kb_runner *r, enum trace_row_kind kind, uint64_t t)
{
	struct trace_row *row = kb_sample_row(&r->sampler, r->trace, kind, r->msg, r->msglen);

	if (!row)
		return NULL;
	sample_procs(r, row);
	row->time_ns = t - r->t_start - r->held_ns;
	row->scan = r->scan;
	return row;
}

/* Whether the counters that only ksmd moves still say what @seen says. */
static bool unmoved(struct kb_runner *r, const struct seen *seen, bool paused,
		    const struct trace_row *row)
{
	int64_t scans, scanned, skipped;

	if (paused) {
		scans = row->counter[TRACE_FULL_SCANS];
		scanned = row->counter[TRACE_PAGES_SCANNED];
		skipped = row->counter[TRACE_PAGES_SKIPPED];
	} else if (kb_sample_counter(&r->sampler, TRACE_FULL_SCANS, &scans) ||
		   kb_sample_counter(&r->sampler, TRACE_PAGES_SCANNED, &scanned) ||
		   kb_sample_counter(&r->sampler, TRACE_PAGES_SKIPPED, &skipped)) {
		return false;
	}
	return scans == seen->full_scans && scanned == seen->scanned && skipped == seen->skipped;
}

/* ---- waiting for ksmd ------------------------------------------------------- */

static void report_progress(struct kb_runner *r, uint64_t now)
{
	struct kb_progress p = { 0 };

	if (!r->opt->progress || now - r->last_progress < PROGRESS_NS)
		return;
	r->last_progress = now;
	p.scans_done = r->scan;
	p.scans_wanted = r->wl->stop == WL_STOP_SCANS ? r->wl->stop_scans : 0;
	p.time_wanted_ns = r->wl->stop == WL_STOP_TIME ? r->wl->stop_time_ns : 0;
	p.elapsed_ns = now - r->t_start;
	kb_sample_counter(&r->sampler, TRACE_PAGES_SHARING, &p.pages_sharing);
	r->opt->progress(&p, r->opt->progress_arg);
}

static enum wait_end wait_for_ksmd(struct kb_runner *r, struct seen *seen)
{
	for (;;) {
		uint64_t now;

		if (read_counter(r, TRACE_FULL_SCANS, &seen->full_scans) ||
		    read_counter(r, TRACE_PAGES_SCANNED, &seen->scanned) ||
		    read_counter(r, TRACE_PAGES_SKIPPED, &seen->skipped))
			return WAIT_FAILED;
		now = seen->t = kb_now_ns();
		if (seen->full_scans != r->kernel_scans)
			return WAIT_SCAN;
		if (r->opt->per_batch && r->ksmd_running && r->pages_to_scan > 0 &&
		    seen->scanned - r->batch_mark >= r->pages_to_scan)
			return WAIT_BATCH;
		if (r->wl->stop == WL_STOP_TIME && now - r->t_start >= r->wl->stop_time_ns)
			return WAIT_TIME_UP;
		if (now >= r->deadline) {
			kb_fail(r->msg, r->msglen,
				"%s: timed out after %" PRIu64 " s (timeout in [global]) with %" PRIu64
				" of %" PRIu64 " full scans done",
				r->wl->path, r->wl->timeout_ns / KB_NSEC, r->scan,
				r->wl->stop == WL_STOP_SCANS ? r->wl->stop_scans : r->scan);
			return WAIT_FAILED;
		}
		if (kb_interrupted()) {
			kb_fail(r->msg, r->msglen, "interrupted by a signal after %" PRIu64 " full scans",
				r->scan);
			return WAIT_FAILED;
		}
		if (cwriter_failed(r)) {
			stop_cwriters(r, true);
			return WAIT_FAILED;
		}
		if (now - r->last_alive_check >= ALIVE_CHECK_NS) {
			r->last_alive_check = now;
			if (kb_procs_check_alive(&r->procs, r->msg, r->msglen) != 0)
				return WAIT_FAILED;
		}
		report_progress(r, now);
		kb_sleep_ns(POLL_NS);
	}
}

/*
 * ksmd was paused when a scan (or batch) ended, seen at @ended. It would
 * have slept sleep_millisecs anyway; whatever the pause lasted beyond that
 * is the runner's doing, not KSM's, and leaves the row times (so scan speed
 * measures ksmd, as the simulator's clock does). A ksmd that does not sleep
 * (sleep_millisecs 0) has started its next batch by then, and the pause
 * waits for it: the hold starts when the pause took effect.
 */
static void account_hold(struct kb_runner *r, uint64_t ended)
{
	char buf[32];
	uint64_t now = kb_now_ns(), sleep_ns = 0, from;

	if (kb_knob_read("sleep_millisecs", buf, sizeof(buf)) == 0)
		sleep_ns = strtoull(buf, NULL, 10) * 1000000;
	from = ended + sleep_ns;
	if (r->paused_at > from)
		from = r->paused_at;
	if (now > from)
		r->held_ns += now - from;
}

static int resume_if_wanted(struct kb_runner *r)
{
	if (read_counter(r, TRACE_FULL_SCANS, &r->kernel_scans) ||
	    read_counter(r, TRACE_PAGES_TO_SCAN, &r->pages_to_scan))
		return -1;
	if (r->wl_run == 1 && !r->ksmd_running)
		return set_run(r, true);
	return 0;
}

static int capture_after(struct kb_runner *r, bool last)
{
	if (r->opt->soft_dirty &&
	    kb_capture_soft_dirty(&r->capture, &r->procs, r->scan, true, r->msg, r->msglen) != 0)
		return -1;
	if (r->opt->pages == KB_PAGES_EVERY_SCAN || (r->opt->pages == KB_PAGES_FINAL && last)) {
		if (kb_capture_partition(&r->capture, &r->procs, r->scan, r->msg, r->msglen) != 0)
			return -1;
		r->captured_last = true;
	}
	return 0;
}

/*
 * --per-batch: the batch that ended a scan has its row too, just before the
 * scan's row with the same numbers, but counting the scans completed before
 * it (as the simulator writes them): @scans_before.
 */
static int batch_row_before_last(struct kb_runner *r, uint64_t scans_before)
{
	struct trace_row *batch = trace_append(r->trace, TRACE_ROW_BATCH), *scan, swap;
	struct trace_proc_stat *procs;

	if (!batch)
		return kb_fail(r->msg, r->msglen, "out of memory for the trace");
	scan = batch - 1;
	procs = batch->proc;
	*batch = *scan;
	batch->kind = TRACE_ROW_BATCH;
	batch->proc = procs;
	memcpy(procs, scan->proc, r->wl->nprocs * sizeof *procs);
	batch->scan = scans_before;
	swap = *scan;
	*scan = *batch;
	*batch = swap;
	return 0;
}

/* Full scans ended since the last row, if the kernel now says @full_scans. */
static int64_t scans_since(const struct kb_runner *r, int64_t full_scans)
{
	int64_t ended = full_scans - r->kernel_scans;

	if (ended >= 1)
		return ended;
	return full_scans > 0 ? full_scans : 1; /* someone else wrote run = 2 */
}

/* A full scan (or several) ended: row, captures, steps. */
static int on_scan_end(struct kb_runner *r, const struct seen *seen)
{
	int64_t ended = scans_since(r, seen->full_scans), scans_now = seen->full_scans;
	uint64_t first = r->scan + 1;
	bool pause = work_due(r, first, r->scan + (uint64_t)ended);
	struct trace_row *row;

	if (pause && pause_ksmd(r) != 0)
		return -1;
	row = take_row(r, TRACE_ROW_SCAN, seen->t);
	if (!row)
		return -1;
	/* Scans that ended before the pause took effect count too (the row is
	 * then invalid: their steps come late). */
	if (pause && row->counter[TRACE_FULL_SCANS] != seen->full_scans) {
		scans_now = row->counter[TRACE_FULL_SCANS];
		ended = scans_since(r, scans_now);
	}
	r->scan += (uint64_t)ended;
	row->scan = r->scan;
	row->valid = ended == 1 && unmoved(r, seen, pause, row);
	r->report->invalid_rows += !row->valid;
	if (r->pages_to_scan > 0)
		r->batches += (uint64_t)((row->counter[TRACE_PAGES_SCANNED] - r->scanned_at_scan) /
					 r->pages_to_scan) +
			      (uint64_t)ended;
	row->batch = r->batches;
	r->scanned_at_scan = r->batch_mark = row->counter[TRACE_PAGES_SCANNED];
	r->pages_to_scan = row->counter[TRACE_PAGES_TO_SCAN];
	r->kernel_scans = scans_now;
	r->captured_last = false;
	if (r->opt->per_batch && batch_row_before_last(r, first - 1) != 0)
		return -1;
	kb_measure_scan_seen(r, r->scan, seen->t);
	if (pause && capture_after(r, finished(r)) != 0)
		return -1;
	for (uint64_t s = first; s <= r->scan && goes_on_after(r, s); s++)
		if (apply_point(r, s) != 0)
			return -1;
	if (finished(r) || !pause)
		return 0;
	account_hold(r, seen->t);
	return resume_if_wanted(r);
}

/* --per-batch: a batch that did not end a scan. */
static int on_batch_end(struct kb_runner *r, const struct seen *seen)
{
	struct trace_row *row;

	if (pause_ksmd(r) != 0)
		return -1;
	row = take_row(r, TRACE_ROW_BATCH, seen->t);
	if (!row)
		return -1;
	row->valid = unmoved(r, seen, true, row);
	r->report->invalid_rows += !row->valid;
	row->batch = r->batches + (uint64_t)((row->counter[TRACE_PAGES_SCANNED] - r->scanned_at_scan) /
					     r->pages_to_scan);
	r->batch_mark = row->counter[TRACE_PAGES_SCANNED];
	account_hold(r, seen->t);
	return set_run(r, true);
}

/* time = T is up: ksmd stops where it is, and a batch row shows where. */
static int on_time_up(struct kb_runner *r, const struct seen *seen)
{
	struct trace_row *row;

	if (pause_ksmd(r) != 0)
		return -1;
	row = take_row(r, TRACE_ROW_BATCH, seen->t);
	if (!row)
		return -1;
	row->valid = row->counter[TRACE_FULL_SCANS] == r->kernel_scans;
	r->report->invalid_rows += !row->valid;
	if (r->pages_to_scan > 0)
		row->batch = r->batches +
			     (uint64_t)((row->counter[TRACE_PAGES_SCANNED] - r->scanned_at_scan) /
					r->pages_to_scan);
	return 0;
}

static int runner_loop(struct kb_runner *r)
{
	if (read_counter(r, TRACE_PAGES_SCANNED, &r->scanned_at_scan) ||
	    resume_if_wanted(r) != 0)
		return -1;
	r->batch_mark = r->scanned_at_scan;
	while (!finished(r)) {
		struct seen seen;

		switch (wait_for_ksmd(r, &seen)) {
		case WAIT_SCAN:
			if (on_scan_end(r, &seen) != 0)
				return -1;
			break;
		case WAIT_BATCH:
			if (on_batch_end(r, &seen) != 0)
				return -1;
			break;
		case WAIT_TIME_UP:
			return on_time_up(r, &seen);
		case WAIT_FAILED:
			return -1;
		}
	}
	return 0;
}

/* ---- teardown and results ------------------------------------------------- */

static int runner_finish(struct kb_runner *r, bool ok)
{
	uint64_t unmerge_total = 0;
	int rc = 0;

	if (stop_cwriters(r, ok) != 0)
		rc = -1;
	if (r->ksmd_running) {
		int err = kb_knob_store("run", "0");

		r->ksmd_running = false;
		if (err && ok && rc == 0)
			rc = kb_fail(r->msg, r->msglen, "cannot write run = 0: %s", kb_errno_name(err));
	}
	ok = ok && rc == 0;
	if (ok && r->opt->pages == KB_PAGES_FINAL && !r->captured_last &&
	    kb_capture_partition(&r->capture, &r->procs, r->scan, r->msg, r->msglen) != 0)
		rc = -1;
	for (size_t i = 0; i < r->wl->nprocs; i++) {
		uint64_t unmerge_ns = 0;

		if (!r->procs.proc[i].alive)
			continue;
		if (kb_proc_quit(&r->procs, i, &unmerge_ns, ok ? r->msg : NULL, ok ? r->msglen : 0))
			rc = -1;
		unmerge_total += unmerge_ns;
	}
	if (ok && rc == 0)
		kb_measure_teardown(r, unmerge_total);
	kb_procs_kill(&r->procs);
	return rc;
}

int kb_report_results(struct kb_report *rep, const struct trace *trace,
		      const struct kb_capture *c, int data_fd)
{
	char *text = NULL;
	size_t size = 0;
	FILE *mem = open_memstream(&text, &size);
	int rc = -1;

	if (!mem)
		return -1;
	if (trace_write_csv(trace, mem) == 0 && fclose(mem) == 0) {
		mem = NULL;
		rc = kb_write_full(data_fd, text, size);
		if (rc == 0 && c && c->npages)
			rc = kb_write_full(data_fd, c->pages, c->npages * sizeof *c->pages);
		if (rc == 0 && c && c->ndirty)
			rc = kb_write_full(data_fd, c->dirty, c->ndirty * sizeof *c->dirty);
	}
	if (mem)
		fclose(mem);
	free(text);
	if (rc == 0) {
		rep->trace_bytes = size;
		rep->npages = c ? c->npages : 0;
		rep->ndirty = c ? c->ndirty : 0;
		rep->finished = true;
	}
	return rc;
}

static int write_results(struct kb_runner *r, int data_fd)
{
	return kb_report_results(r->report, r->trace, &r->capture, data_fd);
}

static int runner_init(struct kb_runner *r, const struct workload *wl, const struct kb_options *opt,
		       struct kb_report *report)
{
	const char **names = calloc(wl->nprocs ? wl->nprocs : 1, sizeof *names);
	char release[128] = "";
	FILE *f;

	memset(r, 0, sizeof *r);
	r->wl = wl;
	r->opt = opt;
	r->report = report;
	r->msg = report->message;
	r->msglen = sizeof report->message;
	r->wl_run = 1;
	r->deadline = kb_now_ns() + wl->timeout_ns;
	r->capture.kpageflags_fd = -1;
	r->procs.text_fd = -1;
	for (int c = 0; c < TRACE_COUNTER_COUNT; c++)
		r->sampler.counter_fd[c] = -1;
	r->sampler.ksmd_fd = -1;
	r->cwriter = calloc(wl->nwriters ? wl->nwriters : 1, sizeof *r->cwriter);
	r->writer_rng = calloc(wl->nwriters ? wl->nwriters : 1, sizeof *r->writer_rng);
	if (!names || !r->cwriter || !r->writer_rng) {
		free(names);
		return kb_fail(r->msg, r->msglen, "out of memory");
	}
	for (size_t i = 0; i < wl->nwriters; i++)
		r->writer_rng[i] = wl_writer_rng(wl, i);
	for (size_t i = 0; i < wl->nprocs; i++)
		names[i] = wl->procs[i].name;
	r->trace = trace_new("kernel", wl->nprocs, names);
	free(names);
	f = fopen("/proc/sys/kernel/osrelease", "re");
	if (f) {
		if (!fgets(release, sizeof release, f))
			release[0] = '\0';
		release[strcspn(release, "\n")] = '\0';
		fclose(f);
	}
	if (!r->trace || trace_set_info(r->trace, wl->path, release, "checksum", false) != 0)
		return kb_fail(r->msg, r->msglen, "out of memory");
	kb_measure_init(r);
	if (kb_sampler_open(&r->sampler, r->msg, r->msglen) != 0 ||
	    kb_capture_open(&r->capture, r->msg, r->msglen) != 0 ||
	    kb_procs_init(&r->procs, wl, r->msg, r->msglen) != 0)
		return -1;
	return 0;
}

static void runner_free(struct kb_runner *r)
{
	kb_steps_replay_close(r);
	kb_procs_free(&r->procs);
	kb_capture_free(&r->capture);
	kb_sampler_close(&r->sampler);
	trace_free(r->trace);
	free(r->cwriter);
	free(r->writer_rng);
}

int kb_runner_main(const struct workload *wl, const struct kb_options *opt,
		   struct kb_report *report, int data_fd)
{
	struct kb_runner r;
	struct sigaction sa;
	bool ok;

	/* Processes forked here are reaped by the kernel; their end is seen
	 * through pidfds. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	sigaction(SIGTTOU, &sa, NULL);
	report->status = KB_FAILED;
	ok = runner_init(&r, wl, opt, report) == 0 && r.trace;
	ok = ok && runner_setup(&r) == 0 && runner_loop(&r) == 0;
	if (r.procs.proc && runner_finish(&r, ok) != 0)
		ok = false;
	if (r.trace && write_results(&r, data_fd) != 0 && ok)
		ok = kb_fail(report->message, sizeof report->message,
			     "cannot hand the results to the guardian: %s", strerror(errno)) == 0;
	report->status = ok ? KB_OK : KB_FAILED;
	runner_free(&r);
	return report->status;
}
