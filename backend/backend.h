/*
 * backend.h - ksmkit's real-kernel backend: run a workload on this machine's
 * KSM, safely, and return the same trace the simulator produces.
 *
 * kb_run() executes a parsed workload (workload.h) on the running kernel:
 * real forked processes map, fill and mark their regions, ksmd scans them,
 * and the backend runs in lockstep with the kernel's full_scans counter so
 * that every "after-scan:N" step happens between two full scans, as the
 * simulator executes it. The result is a struct trace (trace.h) with one row
 * per full scan, plus optionally the page-level merge partition (which pages
 * share one physical page, as struct trace_page: the simulator's type too),
 * the soft-dirty sets a PTE dirty-bit detector would have seen, and
 * ksm_tests-style measurements.
 *
 * KSM is global state shared with everyone on the machine, so kb_run():
 *   - refuses to start (unless forced) when someone else's pages are merged
 *     or another process has mergeable memory, and when the workload needs
 *     more than 80% of MemAvailable;
 *   - skips (KB_SKIPPED) when not root, without KSM, or when the workload
 *     names a NUMA node this machine does not have;
 *   - runs one backend at a time (a lock under KB_STATE_DIR; a second caller
 *     waits for the first);
 *   - saves every writable knob under /sys/kernel/mm/ksm first, also to a
 *     state file, and restores them on every exit path: the caller's process
 *     is the guardian; a sentinel process in a session of its own forks the
 *     runner. Whichever of the two outlives the other ends the run's
 *     processes and restores the knobs: the guardian after the runner ends
 *     however it ends, the sentinel within seconds when the guardian is
 *     SIGKILLed (its process group too). If both die at once, the next
 *     kb_run() or kb_restore() restores from the state file.
 *
 * Nothing here prints: messages go to the caller's buffer, notes and
 * progress to the caller's callbacks.
 */
#ifndef KSMKIT_BACKEND_H
#define KSMKIT_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "trace.h"
#include "workload.h"

/* Where the lock and the saved-knobs state file live. */
#define KB_STATE_DIR "/run/ksmkit"
/* Held (flock) by a running backend and its sentinel; holds "guardian
 * PID\nrunner PID\nsentinel PID\n". */
#define KB_LOCK_FILE KB_STATE_DIR "/backend.lock"
/* The knobs saved before a run; present only while a run is unrestored. */
#define KB_SAVED_FILE KB_STATE_DIR "/saved-knobs"
/* One line per run whose guardian died and whose sentinel restored KSM. */
#define KB_RESCUE_LOG KB_STATE_DIR "/rescues.log"

/* What kb_run() answers; the values are ksmkit's exit codes. */
enum kb_status {
	KB_OK = 0,
	KB_FAILED = 1,    /* the run failed, was interrupted, or was refused */
	KB_BAD_INPUT = 2, /* the request cannot be run as given */
	KB_SKIPPED = 77,  /* this machine cannot run it: not root, no KSM, no such node */
};

/* ksm_tests-style measurements (same definitions as its -P, -C, -D, -H). */
enum kb_measure {
	KB_MEASURE_NONE,
	KB_MEASURE_MERGE,   /* -P: MADV_MERGEABLE until two full scans are done */
	KB_MEASURE_COW,     /* -C: a write event on merged pages vs the same writes unmerged */
	KB_MEASURE_UNMERGE, /* -D: MADV_UNMERGEABLE of merged regions */
	KB_MEASURE_THP,     /* -H: as merge, every region backed by huge pages */
};

/* When the page-level partition is captured. */
enum kb_pages_when {
	KB_PAGES_NONE,
	KB_PAGES_FINAL,      /* after the last scan */
	KB_PAGES_EVERY_SCAN, /* after every full scan (ksmd paused meanwhile) */
};

/* Handed to the progress callback about four times a second. */
struct kb_progress {
	uint64_t scans_done;    /* full scans since the workload started */
	uint64_t scans_wanted;  /* the workload's scans = N, or 0 with time = T */
	int64_t pages_sharing;  /* the kernel's counter, now */
	uint64_t elapsed_ns;    /* since the workload's setup was done */
	uint64_t time_wanted_ns; /* the workload's time = T, or 0 with scans = N */
};

typedef void (*kb_progress_fn)(const struct kb_progress *progress, void *arg);
/* A note worth telling the user ("waiting for another backend"), one line. */
typedef void (*kb_note_fn)(const char *note, void *arg);

struct kb_options {
	bool force;                /* run even though others use KSM (their pages count too) */
	bool per_batch;            /* also one TRACE_ROW_BATCH row per ksmd batch */
	enum kb_pages_when pages;  /* page-level partition capture */
	bool soft_dirty;           /* capture soft-dirty sets per scan interval; this
				      write-protects the workload's PTEs at every scan end */
	enum kb_measure measure;
	uint64_t lock_wait_ns;     /* how long to wait for another backend; 0: the
				      workload's timeout */
	kb_progress_fn progress;   /* called in the runner process; may be NULL */
	void *progress_arg;
	kb_note_fn note;           /* may be NULL */
	void *note_arg;
};

/* A region page whose soft-dirty bit was set when a scan ended. */
struct kb_dirty_page {
	uint64_t scan;   /* written between the end of scan - 1 and the end of scan */
	uint32_t proc;
	uint32_t region;
	uint64_t page;
};

struct kb_measurement {
	enum kb_measure kind;  /* KB_MEASURE_NONE: nothing was measured */
	uint64_t bytes;        /* memory covered: mergeable regions (merge, thp),
				  pages written (cow), regions unmerged (unmerge) */
	uint64_t time_ns;      /* merge, thp: from MADV_MERGEABLE until two full
				  scans are done; cow: the writes to merged pages;
				  unmerge: MADV_UNMERGEABLE */
	uint64_t base_time_ns; /* cow: the same writes to pages never merged */
	uint64_t huge_ranges;  /* thp: 2 MiB ranges a huge page backed at setup */
	uint64_t ranges;       /* thp: 2 MiB ranges in the measured regions */
};

struct kb_result {
	struct trace *trace;       /* NULL when the run never started */
	struct trace_page *pages;  /* kb_options.pages captures, in capture order (trace.h;
				      KSM and THP flags from /proc/kpageflags) */
	size_t npages;             /* entries in pages */
	struct kb_dirty_page *dirty; /* kb_options.soft_dirty captures */
	size_t ndirty;             /* entries in dirty */
	struct kb_measurement measurement;
	uint64_t invalid_rows;     /* rows where a scan overlapped a step */
};

/* Defaults: no force, no extras, no callbacks. */
void kb_options_init(struct kb_options *opt);

/*
 * Run @wl on the kernel's KSM with @opt. Returns a KB_* status; anything but
 * KB_OK comes with one line in @msg (e.g. "another process has mergeable
 * memory: pid 812 (qemu-system-x86); use --force to run anyway"). @res is
 * always initialized and owned by the caller afterwards (kb_result_free),
 * and holds the trace as far as the run got, also on failure. Every KSM knob
 * is as it was when this returns, whatever the status, unless restoring
 * itself failed, which is reported as KB_FAILED naming the knob.
 */
int kb_run(const struct workload *wl, const struct kb_options *opt, struct kb_result *res,
	   char *msg, size_t msglen);

void kb_result_free(struct kb_result *res);

/* "merge", "cow", "unmerge", "thp" (and "none"); lookup returns -1 if unknown. */
const char *kb_measure_name(enum kb_measure measure);
int kb_measure_lookup(const char *name);

/*
 * CSV of the soft-dirty captures, with process and region names from @wl:
 * a first line "# ksmkit-soft-dirty 1" naming the format, then
 * scan,process,region,page. (The page partition's CSV is the trace stage's:
 * trace_pages_write_csv.) Returns 0, or -1 on an output error (errno set).
 */
int kb_write_dirty_csv(const struct kb_result *res, const struct workload *wl, FILE *out);

/*
 * The writable knobs under /sys/kernel/mm/ksm, saved as text. kb_run() uses
 * these itself; they are public for tests and tools that change knobs and
 * must put them back.
 */
#define KB_KNOBS_MAX 32
#define KB_KNOB_TEXT_MAX 48
struct kb_knob_set {
	size_t n; /* knobs in knob[], in the order they are written back */
	struct kb_knob {
		char name[KB_KNOB_TEXT_MAX];  /* sysfs file name */
		char value[KB_KNOB_TEXT_MAX]; /* as read ("none" for advisor_mode "[none] scan-time") */
	} knob[KB_KNOBS_MAX];
};

/* Read every writable knob. Returns 0, or -1 with a message. */
int kb_knobs_save(struct kb_knob_set *set, char *msg, size_t msglen);

/*
 * Write back every knob of @set that differs from the kernel's value now, in
 * an order the kernel accepts (run = 0 first, run last). Keeps going after a
 * failure; returns 0, or -1 with the failed knobs named in @msg.
 */
int kb_knobs_restore(const struct kb_knob_set *set, char *msg, size_t msglen);

/*
 * The same, while no backend runs: take the backend lock (waiting up to
 * @wait_ns for a run to finish), save or restore, let go. A tool or test
 * suite that snapshots "the machine's own knobs" must take them this way:
 * a plain kb_knobs_save() during someone else's run would take that run's
 * workload knobs for the machine's, and a later restore would leave them.
 */
int kb_knobs_save_idle(struct kb_knob_set *set, uint64_t wait_ns, char *msg, size_t msglen);
int kb_knobs_restore_idle(const struct kb_knob_set *set, uint64_t wait_ns, char *msg,
			  size_t msglen);
/* For code that writes knobs itself: hold the backend lock meanwhile.
 * Returns the lock's fd (give it to kb_lock_drop), or -1 with a message. */
int kb_lock_hold(uint64_t wait_ns, char *msg, size_t msglen);
void kb_lock_drop(int fd);

/* The value of knob @name in @set, or NULL. */
const char *kb_knobs_get(const struct kb_knob_set *set, const char *name);

/* A knob that a restore wrote: its value before and after. */
struct kb_knob_change {
	char name[KB_KNOB_TEXT_MAX];
	char was[KB_KNOB_TEXT_MAX];
	char now[KB_KNOB_TEXT_MAX];
};

/* What a restore found and did. */
struct kb_restore_report {
	bool had_saved;  /* a run's saved knobs (KB_SAVED_FILE) were there */
	pid_t saver;     /* the guardian that saved them */
	size_t nchanges; /* knobs that differed and were written back */
	struct kb_knob_change change[KB_KNOBS_MAX];
	char last_rescue[1024]; /* the last line of KB_RESCUE_LOG, or "" */
};

/*
 * `ksmkit restore`: for when every process of a run was killed at once (the
 * sentinel too), put back the knobs its state file holds, now. Waits up to
 * @wait_ns for a running backend (or a sentinel restoring) to let go of the
 * lock. Returns KB_OK, also when there was nothing to restore
 * (rep->had_saved false); KB_FAILED with @msg when a run is still going, or
 * a knob could not be written; KB_SKIPPED without KSM. @rep says what was
 * changed, and holds the last rescue a sentinel logged.
 */
int kb_restore(uint64_t wait_ns, struct kb_restore_report *rep, char *msg, size_t msglen);

/* ---- live runs: commands started here, measured on the kernel's KSM ------ */

/*
 * kb_live_run() starts commands (a program of the user's, qemu guests) and
 * measures the kernel's KSM on them full scan by full scan, with everything
 * kb_run() promises: the lock, every knob saved and restored whatever ends
 * the run, the sentinel, the refusal when someone else's pages are merged or
 * another process has mergeable memory (checked before the commands start:
 * they are the run's own, never someone else's). The commands are the
 * runner's children, in one process group of their own, and die with it
 * (PR_SET_PDEATHSIG); whatever ends the run, that group is SIGKILLed, every
 * process left over is reaped, and ksmd then drops their items before the
 * knobs are restored. Their memory is gone, so nothing of theirs stays
 * merged. The trace has one process column per command (@name).
 */
#define KB_LIVE_MAX_CMDS 16

struct kb_live_cmd {
	const char *name;      /* trace column: [A-Za-z0-9_-], 1..TRACE_NAME_MAX */
	const char *path;      /* the program exec'd (execv, no shell fallback); NULL:
				  argv[0] looked up in PATH (execvp) */
	char *const *argv;     /* NULL-terminated */
	bool merge_any;        /* prctl(PR_SET_MEMORY_MERGE, 1) between fork and exec */
	const char *log_path;  /* its stdout and stderr go here; NULL: both to stderr */
};

/* Why a live run stopped measuring. */
enum kb_live_end {
	KB_LIVE_END_NONE,     /* it did not get as far as measuring */
	KB_LIVE_END_SCANS,    /* the full scans asked for were done */
	KB_LIVE_END_DURATION, /* the time asked for ran out */
	KB_LIVE_END_EXITED,   /* a command exited (exit_index, exit_status) */
};

/*
 * Called in the runner process: started() once every command has exec'd
 * (with their pids, in command order), before ksmd runs; stopping() when
 * the measurement is over, before the commands are killed. Either may fail
 * (-1 with a message), which fails the run. Either may be NULL.
 */
struct kb_live_hooks {
	int (*started)(const pid_t *pids, size_t n, void *arg, char *msg, size_t len);
	int (*stopping)(void *arg, char *msg, size_t len);
	void *arg;
};

struct kb_live {
	const char *name;               /* the trace's workload field ("run --cmd ./x") */
	const struct kb_live_cmd *cmds;
	size_t ncmds;                   /* 1..KB_LIVE_MAX_CMDS */
	uint64_t knobs[WL_KNOB_COUNT];  /* written before the commands start (the
					   defaults where !knob_given), as a
					   workload's [global] */
	bool knob_given[WL_KNOB_COUNT];
	uint64_t scans;                 /* stop after this many full scans; 0: no limit */
	uint64_t duration_ns;           /* stop after this long; 0: no limit */
	bool end_on_exit_ok;            /* a command exiting ends the run as a success
					   (run --cmd); else it fails the run (a guest) */
	uint64_t memory_bytes;          /* what the commands will use, against 80% of
					   MemAvailable; 0: not checked */
	struct kb_live_hooks hooks;
};

struct kb_live_result {
	struct kb_result run;   /* the trace (source "kernel", workload "live") */
	enum kb_live_end end;
	int exit_index;         /* KB_LIVE_END_EXITED: the command, else -1 */
	int exit_status;        /* its wait status */
};

/* Defaults: nothing to run, knobs at the kernel's defaults, no limit. */
void kb_live_init(struct kb_live *live);

/*
 * Run @live with @opt (force, lock_wait_ns, progress, note; the others must
 * be left at their defaults). Returns a KB_* status, with @msg: KB_BAD_INPUT
 * when a command cannot be exec'd (its name and errno), KB_SKIPPED as
 * kb_run() (and without PR_SET_MEMORY_MERGE when a command asks for it),
 * KB_FAILED when refused, interrupted, or a hook or the kernel failed.
 * @res is always initialized; free it with kb_live_result_free.
 */
int kb_live_run(const struct kb_live *live, const struct kb_options *opt,
		struct kb_live_result *res, char *msg, size_t msglen);
void kb_live_result_free(struct kb_live_result *res);

/* Whether any VMA of process @pid is mergeable (the "mg" flag in its smaps). */
bool kb_pid_has_mergeable_vma(pid_t pid);

#endif
