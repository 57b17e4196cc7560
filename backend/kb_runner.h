/*
 * kb_runner.h - the runner's state, shared by the files that make up the
 * runner: kb_run.c (setup, the lockstep loop, teardown, results), kb_steps.c
 * (what a workload step does to the processes and the knobs) and
 * kb_measure.c (ksm_tests-style timings). Nothing outside the runner
 * process sees it.
 */
#ifndef KSMKIT_KB_RUNNER_H
#define KSMKIT_KB_RUNNER_H

#include "kb_internal.h"

#include "capture.h"

/* Where the measurement asked for stands. */
struct kb_measure_state {
	uint64_t merge_start;  /* when setup first marked a region mergeable (0: not yet) */
	bool merge_done;       /* merge/thp: the second full scan has been seen */
	long cow_event;        /* cow: index of the first write event, or -1 */
	bool unmerge_done;     /* unmerge: an unmerge event was timed */
};

struct kb_runner {
	const struct workload *wl;
	const struct kb_options *opt;
	struct kb_report *report;      /* shared with the guardian */
	struct kb_sampler sampler;
	struct kb_procs procs;
	struct kb_capture capture;
	struct trace *trace;
	struct kb_cwriter **cwriter;   /* per writer: its running thread, or NULL */
	struct wl_rng *writer_rng;     /* per writer: its random stream, advanced by
					  each application (pages, then offsets) */
	uint64_t fresh_next;           /* fresh values taken by steps so far: the next
					  is content_fresh_value(fresh_start + this) */
	uint64_t scan;                 /* full scans since the workload started */
	int64_t kernel_scans;          /* the kernel's full_scans at the last row,
					  or after a run = 2 reset it */
	int64_t scanned_at_scan;       /* pages_scanned when the current scan began */
	int64_t batch_mark;            /* pages_scanned at the last batch row */
	int64_t pages_to_scan;         /* its value for the current scan */
	uint64_t batches;              /* ksmd batches of the completed scans */
	uint64_t t_start;              /* setup done (the row of scan 0): times count from here */
	uint64_t held_ns;              /* time the runner held ksmd paused beyond its own
					  sleep (steps, captures): left out of row times */
	uint64_t paused_at;            /* when the last pause took effect (the batch in
					  progress done), 0 if ksmd was not running */
	uint64_t deadline;             /* when the workload's timeout expires */
	uint64_t last_progress;        /* when the progress callback last ran */
	uint64_t last_alive_check;     /* when the workload processes were last checked */
	int wl_run;                    /* the run value the workload wants between
					  points: 1, or what a run event left */
	bool ksmd_running;             /* run = 1 written and not paused since */
	bool captured_last;            /* the last row's partition is captured */
	struct kb_measure_state measure;
	struct cap_reader **replay;    /* per region: its capture file, opened at first use */
	char *msg;                     /* the runner's message buffer */
	size_t msglen;
};

/* ---- kb_run.c ---- */

/*
 * Set region @index up in process @proc: map, fill, check its huge pages,
 * mark it as its merge key says. At setup (the measurements see it), or
 * @after_exec: then a prctl region takes the flag exec left, no prctl call.
 * 0 or -1.
 */
int kb_runner_setup_region(struct kb_runner *r, size_t index, size_t proc, bool after_exec);

/* ---- kb_steps.c ---- */

/*
 * fill = capture: write region @region of its owner as the capture's coded
 * contents say, the @n changes @changes (pages absent are discarded, the
 * others get their token's bytes from the capture). kb_steps_replay_initial
 * does the same for the region's initial contents, at setup. 0 or -1.
 */
int kb_steps_replay(struct kb_runner *r, size_t region, const struct wl_capture_change *changes,
		    size_t n);
int kb_steps_replay_initial(struct kb_runner *r, size_t region, size_t proc);
/* Close the capture files replays opened. */
void kb_steps_replay_close(struct kb_runner *r);

/* Apply every step scheduled after scan @scan, in file order: capture
 * snapshots first (region by region), then writers and events. 0 or -1. */
int kb_steps_apply(struct kb_runner *r, uint64_t scan);
/*
 * The writes of one application: the pages of @sel (drawn from @rng when
 * random), each with an offset drawn from @rng right after its page, and
 * @value or the next fresh value from *@fresh_next. Returns a malloc'ed
 * array of *@n entries, or NULL with a message.
 */
struct kb_write *kb_steps_writes(struct kb_runner *r, size_t region, const struct wl_pagesel *sel,
				 const struct wl_offset *offset, const struct wl_value *value,
				 struct wl_rng *rng, uint64_t *fresh_next, uint64_t *n);
/* Send @n writes to process @proc in chunks; *@elapsed_ns sums their times. */
int kb_steps_send_writes(struct kb_runner *r, size_t proc, size_t region,
			 const struct kb_write *writes, uint64_t n, uint32_t flags,
			 uint64_t *elapsed_ns);

/* ---- kb_measure.c ---- */

void kb_measure_init(struct kb_runner *r);
/* Setup is about to mark its first region mergeable. */
void kb_measure_merge_marking(struct kb_runner *r);
/* A row for scan @scan was taken at time @t. */
void kb_measure_scan_seen(struct kb_runner *r, uint64_t scan, uint64_t t);
/* Setup filled region @region: cow baseline, thp counts. 0 or -1. */
int kb_measure_region_filled(struct kb_runner *r, size_t region);
/* Write event @event took @elapsed_ns over @pages pages. */
void kb_measure_write_event(struct kb_runner *r, size_t event, uint64_t pages, uint64_t elapsed_ns);
/* An unmerge event took @elapsed_ns over @pages pages. */
void kb_measure_unmerge_event(struct kb_runner *r, uint64_t pages, uint64_t elapsed_ns);
/* Teardown unmerged everything in @elapsed_ns. */
void kb_measure_teardown(struct kb_runner *r, uint64_t elapsed_ns);
/* Whether regions must be advised MADV_HUGEPAGE whatever their thp. */
bool kb_measure_forces_thp(const struct kb_runner *r);

#endif
