/*
 * sim_driver.h - running a whole workload (workload.h) on the simulator and
 * recording its trace (trace.h): `ksmkit sim`, and the simulator side of
 * `ksmkit compare`.
 *
 * The driver sets the machine up as the backend does (knobs, then processes
 * and regions in file order: map, fill, mark mergeable), starts ksmd, and
 * alternates ksmd batches with the workload's schedule: steps after each full
 * scan, continuous writers in simulated time. Full scans are counted by the
 * workload itself (run = 2 resets the kernel's full_scans, not this count).
 * The trace starts with a row for scan 0: the state after setup, before any
 * scan, which is also the baseline of counters the kernel never resets.
 */
#ifndef KSMKIT_SIM_DRIVER_H
#define KSMKIT_SIM_DRIVER_H

#include "sim.h"

/*
 * Where a run is, for a progress line: handed to sim_run_options.progress
 * after every full scan and, when progress_steps is set, every that many
 * units of work (pages set up, ksmd steps, page writes) between them.
 */
struct sim_progress {
	bool setup;               /* still mapping and filling the regions */
	uint64_t setup_pages;     /* setup: pages filled so far ... */
	uint64_t setup_total;     /* ... of this many (every region's) */
	bool scan_ended;          /* this call comes right after a full scan */
	uint64_t scans;           /* full scans completed since the start */
	uint64_t stop_scans;      /* the workload's scans = N, or 0 for a time stop */
	uint64_t now_ns;          /* simulated time */
	uint64_t stop_ns;         /* the workload's time = T, or 0 for a scans stop */
	uint64_t scan_pages;      /* pages ksmd visited in the scan under way */
	uint64_t last_scan_pages; /* pages the last full scan visited (0 before one) */
	uint64_t mergeable_pages; /* pages in mergeable mappings now */
	uint64_t writes;          /* page writes done so far (writers and events) */
	uint64_t planned_writes;  /* the workload's, or SIM_WRITES_UNKNOWN (sim_estimate) */
};

struct sim_run_options {
	bool per_batch;             /* a trace row after every batch, too */
	const struct sim_costs *costs; /* NULL: the defaults */
	unsigned nr_nodes;          /* 0: as many as the workload's regions name */
	/* follow @kernel's semantics instead of the workload's kernel key (compare
	   follows the kernel that actually ran) */
	bool override_kernel;
	enum wl_kernel kernel;
	/* likewise, follow @smart_scan_policy instead of the workload's (compare
	   follows the policy the kernel that ran was built with) */
	bool override_smart_scan_policy;
	enum wl_smart_scan_policy smart_scan_policy;
	/* called after every full scan, and every progress_steps units of work
	   when that is not 0 (may be NULL) */
	void (*progress)(void *arg, const struct sim_progress *p, const struct sim *s);
	void *progress_arg;
	uint64_t progress_steps;
	/*
	 * Called at every scan row, before the steps that follow it, with the
	 * machine and the map from workload processes to its processes (-1: not
	 * born yet); e.g. to read the page partition (may be NULL).
	 */
	void (*scan_hook)(void *arg, uint64_t scan, const struct sim *s, const int *mm_of);
	void *hook_arg;
	/* walk the unstable tree at every insert (sim_config.walk_every_insert):
	   the same run, only slower */
	bool walk_every_insert;
	/* take every smart-scan skip a page at a time
	   (sim_config.skip_page_by_page): the same run, only slower */
	bool skip_page_by_page;
	/* walk a chain's dups at every search (sim_config.walk_every_chain):
	   the same run, only slower */
	bool walk_every_chain;
	/* apply every continuous write when it falls due, none deferred to
	   when its page is read (sim_deferred.h): the same run, only slower */
	bool eager_writes;
};

/*
 * A scan hook that keeps the page partition (trace.h's struct trace_page) at
 * every scan row: every page of every live process's regions, its frame or
 * KSM's zero page. Hook sim_capture_pages with a zeroed struct sim_capture
 * (wl set) as its argument; the caller frees @page. oom says a page was lost.
 */
struct sim_capture {
	const struct workload *wl;
	struct trace_page *page;
	size_t n, cap;
	bool oom;
};
void sim_capture_pages(void *arg, uint64_t scan, const struct sim *s, const int *mm_of);

/*
 * Run @wl. Returns 0 and a trace in *out (the caller frees it), or -1 with
 * "what went wrong" in @err: a store answered otherwise than the event
 * expected, full scans stopped advancing, or memory ran out. On -1, *out
 * still holds the trace up to the failure when one was started (else NULL).
 */
int sim_run_workload(const struct workload *wl, const struct sim_run_options *opt,
		     struct trace **out, char *err, size_t errlen);

#endif
