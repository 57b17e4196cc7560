/*
 * estimate.h - what KSM would save on real memory, before it runs
 * (libksmestimate).
 *
 * A capture (capture.h) is replayed on the simulator in simulated time: one
 * process per stream, one region per stream (fill = capture, every = time,
 * so each snapshot lands at its own time into the run), every private
 * anonymous page mergeable (merge = prctl, as PR_SET_MEMORY_MERGE,
 * systemd's MemoryKSM= or qemu's mem-merge make it), at the KSM knobs asked
 * about. The trace, one row per ksmd batch, gives pages_shared,
 * pages_sharing, ksm_zero_pages and general_profit over time; from it come
 * the final saving, the time to reach 90% of it, and ksmd's CPU from the
 * simulator's cost model (the calibrated one when the caller gives it). A
 * sweep runs that over a grid of knob values and names the point that
 * saves the most within a CPU budget.
 *
 * It reads /sys/kernel/mm/ksm only to learn the current knobs, and never
 * writes anything there; taking the capture, printing and drawing are the
 * caller's (cli/cmd_estimate.c). Nothing here keeps global state.
 *
 * Files: est_knobs.c (knob sets: current, default, assigned, printed),
 * est_model.c (the workload, the run, the figures), est_sweep.c (axes, the
 * grid, the recommendation), est_rows.c (a sweep in pieces: a point's
 * figures as a line of text, and the lines of every point read back).
 * Errors: functions return 0 or -1 and write a one-line message into the
 * caller's buffer.
 */
#ifndef KSMKIT_ESTIMATE_H
#define KSMKIT_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim.h"
#include "sim_driver.h"
#include "workload.h"

/* ---- knobs ------------------------------------------------------------------- */

/* A value for every writable knob (enum wl_knob), as sysfs would hold it. */
struct est_knobs {
	uint64_t value[WL_KNOB_COUNT];
};

/* The kernel's boot defaults. */
void est_knobs_default(struct est_knobs *k);

/*
 * The knobs in @dir (NULL: /sys/kernel/mm/ksm), read only; a knob that
 * cannot be read or parsed keeps its default. Returns how many were read.
 */
int est_knobs_current(struct est_knobs *k, const char *dir);

/* Set one knob from "NAME=VALUE" (parsed as the kernel would). 0, or -1. */
int est_knobs_assign(struct est_knobs *k, const char *assignment, char *err, size_t errlen);

/* ---- one estimate -------------------------------------------------------------- */

/*
 * When the snapshots land: at their own time into the run (every = time),
 * or, for a capture taken while KSM ran (--every full-scan: each snapshot
 * knows ksmd's full_scans), after as many full scans as the real run had
 * done (every = capture): a replay of that run, scan for scan, which is
 * what matters under smart_scan, whose skips depend on how many scans a
 * page has been seen in.
 */
enum est_schedule { EST_BY_TIME, EST_BY_SCANS };

struct est_options {
	const char *capture;           /* the capture file */
	struct est_knobs knobs;
	enum est_schedule schedule;
	uint64_t time_ns;              /* EST_BY_TIME: simulated time to run; 0: est_default_time() */
	uint64_t scans;                /* EST_BY_SCANS: full scans to run; 0: the capture's
					  span plus four */
	enum wl_kernel kernel;         /* whose semantics the simulator follows */
	const struct sim_costs *costs; /* NULL: the simulator's defaults */
	/* progress, as sim_run_options has it (may be NULL) */
	void (*progress)(void *arg, const struct sim_progress *p, const struct sim *s);
	void *progress_arg;
	uint64_t progress_steps;
};

/* The counters after one ksmd batch (the first point is the start, time 0). */
struct est_point {
	uint64_t time_ns, ksmd_cpu_ns, full_scans;
	int64_t pages_shared, pages_sharing, ksm_zero_pages, general_profit;
};

/* What a page saves is a page: pages_sharing, plus ksm_zero_pages. */
static inline int64_t est_saved(const struct est_point *p)
{
	return p->pages_sharing + p->ksm_zero_pages;
}

struct est_result {
	struct est_point *series;  /* every batch, in time order */
	size_t n;
	struct est_point last;     /* series[n - 1] */
	uint64_t streams;          /* processes replayed */
	uint64_t snapshots;        /* snapshots replayed (of the first stream) */
	uint64_t last_snapshot_ns; /* when the last of them lands */
	uint64_t present_pages;    /* present at the last snapshot, all streams */
	uint64_t most_saved;       /* the capture's bound at its last snapshot:
				    * zero pages plus duplicates (cap_summary) */
	int64_t t90_ns;            /* when the saving first reached 90% of the
				    * final one; -1 when the final one is 0 */
	double cpu_mean;           /* ksmd CPU over the run, a fraction of one CPU */
	double cpu_steady;         /* ... over the last full scan */
	bool settled;              /* the saving did not move over the last full
				    * scan, after the last snapshot */
	uint64_t cost_ns[SIM_TERM_COUNT]; /* ksmd's CPU over the run, by term of the
					   * cost model (SIM_COST_TERMS) */
	uint64_t *scan_cost_ns;    /* the same so far at each scan point
				    * (est_scan_point), SIM_TERM_COUNT a point, in
				    * series order: est_scan_costs() finds them */
	size_t nscan_points;
};

/*
 * Whether series point @i is one an output gives a row to: the start, each
 * point where full_scans moved, and the last.
 */
bool est_scan_point(const struct est_result *r, size_t i);

/*
 * The cost-model terms at the @k-th scan point (0 the start, all zero), ns
 * so far; NULL when @r has none (a sweep's row read back keeps only the
 * totals, cost_ns).
 */
const uint64_t *est_scan_costs(const struct est_result *r, size_t k);

/*
 * How long to simulate when not told: past the last snapshot by four full
 * scans at @k's rate (a full scan of @pages pages takes pages /
 * pages_to_scan batches of sleep_millisecs, at least 1 ms each), at least
 * 10 s and at most 7 days.
 */
uint64_t est_default_time(uint64_t last_snapshot_ns, uint64_t pages, const struct est_knobs *k);

/*
 * What the capture holds, read once: its streams, the snapshots of the
 * first stream, when the last lands, and at that last snapshot the present
 * pages and the most KSM could save (zero pages plus duplicates, every
 * stream together). 0, or -1 (an unreadable or damaged file).
 */
struct est_capture {
	uint64_t streams;          /* streams with pages in some snapshot */
	uint64_t nstreams;         /* all the file's streams */
	bool *replayed;            /* per stream of the file: has pages, so replayed */
	uint64_t snapshots, last_snapshot_ns;
	uint64_t present_pages, most_saved;
	bool full_scans_known;     /* every snapshot has ksmd's full_scans */
	uint64_t full_scans_span;  /* then: last less first */
};
int est_capture_read(const char *path, struct est_capture *out, char *err, size_t errlen);
void est_capture_free(struct est_capture *c);

/*
 * The workload est_run() runs, as text (the user can run it with ksmkit sim:
 * the capture's absolute path is in it). @time_ns 0 in @opt takes
 * est_default_time(). *@text is the caller's to free.
 */
int est_workload_text(const struct est_options *opt, const struct est_capture *cap, char **text,
		      char *err, size_t errlen);

/* That workload, parsed (wl_free it), for the caller to admit and run. */
int est_workload(const struct est_options *opt, const struct est_capture *cap,
		 struct workload **wl, char *err, size_t errlen);

/*
 * Run @wl (from est_workload() for @opt and @cap) on the simulator and fill
 * @out (est_result_free it). Admission against the machine's memory is the
 * caller's (sim_admit). Returns 0, or -1 with a message.
 */
int est_run(const struct est_options *opt, const struct est_capture *cap,
	    const struct workload *wl, struct est_result *out, char *err, size_t errlen);
void est_result_free(struct est_result *r);

/*
 * The figures of a result from its series (est_run calls it; exposed for
 * tests): last, t90_ns, cpu_mean, cpu_steady and settled.
 */
void est_result_figures(struct est_result *r);

/* ---- sweeps ------------------------------------------------------------------------ */

#define EST_MAX_AXES 4
#define EST_MAX_VALUES 32
#define EST_MAX_POINTS 256

/* One knob and the values it takes. */
struct est_axis {
	enum wl_knob knob;
	size_t n;
	uint64_t value[EST_MAX_VALUES];
};

/*
 * Parse "NAME=V1,V2,..." (values parsed as the kernel would; pages_to_scan,
 * sleep_millisecs, smart_scan, use_zero_pages, max_page_sharing and the
 * other knobs alike). 0, or -1 with a message.
 */
int est_axis_parse(const char *spec, struct est_axis *axis, char *err, size_t errlen);

/* The grid of @naxes axes: how many points (the product), at most EST_MAX_POINTS. */
size_t est_grid_size(const struct est_axis *axes, size_t naxes);

/* Point @index of the grid (the last axis varies fastest) applied over @base. */
void est_grid_point(const struct est_axis *axes, size_t naxes, size_t index,
		    const struct est_knobs *base, struct est_knobs *out);

/*
 * The point to recommend for a CPU budget: of those whose steady ksmd CPU
 * (cpu_steady) is at most @max_cpu (a fraction of one CPU), the one that
 * saves the most, then the one that gets to 90% soonest, then the cheapest.
 * Returns its index, or -1 when none fits the budget.
 */
long est_recommend(const struct est_result *points, size_t n, double max_cpu);

/* ---- a sweep in pieces: one point's row --------------------------------------------- */

/*
 * One point of a sweep computed alone (a job, `ksmkit estimate --point`),
 * as a line of text that reads back to the same figures, bit for bit:
 * "ksmkit-estimate-row 1 point=I points=N kernel=... knob.NAME=V ...", one
 * KEY=VALUE for each member below and each knob.
 */
struct est_row {
	uint64_t point, points;    /* point @point of a grid of @points */
	enum wl_kernel kernel;     /* the settings it ran at (est_options) */
	enum est_schedule schedule;
	uint64_t time_ns, scans;   /* as given: 0 for the defaults */
	struct est_knobs knobs;    /* every knob, at the point's values */
	struct est_result result;  /* its figures; no series (NULL, n 0) */
};

/* The row of point @point of @points, run at @opt (its knobs the point's), result @r. */
void est_row_of(struct est_row *row, size_t point, size_t points, const struct est_options *opt,
		const struct est_result *r);

/* @row as one line to @out. 0, or -1 when @out has a write error. */
int est_row_write(FILE *out, const struct est_row *row);

/*
 * A line (without its line end) back into @row: 0, or -1 with what is
 * wrong (not a row, another format version, an unknown, repeated, missing
 * or malformed field).
 */
int est_row_parse(const char *line, struct est_row *row, char *err, size_t errlen);

/*
 * Whether @row belongs to the sweep over @axes (@naxes) at @opt of @cap:
 * its grid's size, its point in range, its kernel, schedule, run length
 * and every knob those of that point, its capture figures @cap's. 0, or
 * -1 with the first difference.
 */
int est_row_check(const struct est_row *row, const struct est_options *opt,
		  const struct est_axis *axes, size_t naxes, const struct est_capture *cap,
		  char *err, size_t errlen);

/*
 * Read the rows of that sweep from @in (named @name in messages): blank
 * lines and '#' comments are skipped, every other line must be a row that
 * est_row_check accepts, at most one a point. Point I's figures go to
 * @out[I] (no series: est_result_free is not needed) and its line to
 * @line_of[I], which is 0 for a point not seen yet (both of
 * est_grid_size() entries, @line_of zeroed by the caller). 0, or -1 with
 * "NAME:LINE: what is wrong". Missing points are the caller's to find
 * (their @line_of is still 0).
 */
int est_rows_read(FILE *in, const char *name, const struct est_options *opt,
		  const struct est_axis *axes, size_t naxes, const struct est_capture *cap,
		  struct est_result *out, unsigned *line_of, char *err, size_t errlen);

#endif
