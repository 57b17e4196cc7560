/*
 * xval.h - the cross-validation pipeline: is the simulator right about the
 * kernel that actually ran? For one workload, the kernel side runs (this
 * machine's KSM through the backend, or a qemu guest's), the release of the
 * kernel that ran picks the semantics the simulator follows (xval_semantics,
 * the one place that choice is made), the simulator runs the same workload
 * in them, and compare.h diffs the two traces scan by scan and, for a
 * deterministic workload, the page partitions. `ksmkit compare`, `ksmkit
 * demo`, the sweeps that run both engines and the kernel test suites
 * (check_compare, check_guest) all go through here.
 *
 * A deterministic workload must match exactly; one that cannot be
 * deterministic (continuous writers, a time stop) is compared within
 * XVAL_TOLERANCE on the scans both runs have, without page partitions. What
 * the kernel that ran does not export (6.1 has no pages_scanned) is not
 * compared. A kernel run that differed only before its last scan (it caught
 * up with the simulator, xval_caught_up) may run again, as often as the
 * caller allows; any other difference stands. The simulator runs once: it
 * is deterministic.
 *
 * Nothing here prints: notes go to the caller's callback, reasons into the
 * result. The pieces (xval_run_sim, xval_run_host, xval_run_guest,
 * xval_compare) are public for callers that run only part of the pipeline
 * (a sweep counting per-node pages on both engines).
 */
#ifndef KSMKIT_XVAL_H
#define KSMKIT_XVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "compare.h"
#include "guest.h"
#include "sim_driver.h"
#include "trace.h"
#include "workload.h"

/*
 * Relative tolerance for workloads that cannot be deterministic (continuous
 * writers, a time stop): their counters depend on when writes land relative
 * to ksmd's batches, which only the real machine decides.
 */
#define XVAL_TOLERANCE 0.25

/*
 * What cross-validating a run keeps per simulated page at every scan row:
 * the simulator's page partition and the kernel's (for admission,
 * sim_admit_options.capture_bytes).
 */
#define XVAL_CAPTURE_BYTES (2 * sizeof(struct trace_page))

/* A note worth telling the user, one line without a newline. */
typedef void (*xval_note_fn)(const char *note, void *arg);

/* What one engine produced for one workload; owned by whoever holds it. */
struct xval_side {
	struct trace *trace;      /* NULL when the engine did not get as far */
	struct trace_page *pages; /* the page partition at every scan row, when captured */
	size_t npages;
	uint64_t invalid_rows;    /* kernel: rows a scan overlapped */
	struct kb_measurement measurement; /* kernel: ksm_tests' figure, when the backend's
					      options asked for one (kb_options.measure) */
};

void xval_side_free(struct xval_side *side);

/* ---- the pieces ------------------------------------------------------------- */

/*
 * The simulator on @wl following @kernel's semantics (whatever the
 * workload's kernel key says), with @costs (NULL: the defaults), the page
 * partition captured at every scan row when @pages. 0, or -1 with a message.
 */
int xval_run_sim(const struct workload *wl, enum wl_kernel kernel, bool pages,
		 const struct sim_costs *costs, struct xval_side *out, char *err, size_t errlen);
/* The same under smart-scan @policy (whatever the workload's key says): the
 * policy of a patched kernel that ran (wl_kernel_smart_scan_policy). */
int xval_run_sim_as(const struct workload *wl, enum wl_kernel kernel,
		    enum wl_smart_scan_policy policy, bool pages, const struct sim_costs *costs,
		    struct xval_side *out, char *err, size_t errlen);

/* This machine's kernel: kb_run with @base, plus the partition at every scan
 * when @pages. A KB_* status (message in @msg unless KB_OK). */
int xval_run_host(const struct workload *wl, const struct kb_options *base, bool pages,
		  struct xval_side *out, char *msg, size_t msglen);

/* One workload's outcome in a guest. */
struct xval_guest_run {
	int status;         /* KB_* inside the guest */
	char message[2048]; /* with status != KB_OK */
	struct xval_side side;
};

/*
 * @n workloads in one qemu guest (kg_run with @opt, plus the partitions when
 * @pages). Fills @out[0..n) and the guest kernel's release; returns the
 * session's KB_* status (KB_OK: every workload has its own status).
 */
int xval_run_guest(const struct workload *const *wls, size_t n, const struct kg_options *opt,
		   bool pages, struct xval_guest_run *out, char *release, size_t rlen, char *msg,
		   size_t msglen);

/*
 * The semantics the simulator follows for the kernel a trace came from (its
 * release, as the backend records it): the only place ksmkit makes that
 * choice. 0, or -1 with the reason (a release no semantics models) in @why.
 */
int xval_semantics(const struct trace *kernel, enum wl_kernel *out, char *why, size_t len);

/*
 * What the simulator sets over the workload's [global] to follow the kernel
 * a trace came from, beside its semantics: a kernel ksmkit built with a
 * patch (release BASE.N+NAME) is its base release's row plus the policy the
 * patch implements, the settings of its row in KG_PATCHES (guest.h); any
 * other kernel, "".
 */
const char *xval_settings(const struct trace *kernel);

/*
 * Compare the two sides: traces (exactly, or within XVAL_TOLERANCE for a
 * non-deterministic workload, matching only the scans both have), leaving
 * out what @kernel's release does not export, and, for a deterministic
 * workload, the page partitions. Fills @rep (initialized here; the caller
 * frees it). 0, or -1 when out of memory or the traces name different
 * processes.
 */
int xval_compare(const struct workload *wl, const struct xval_side *sim,
		 const struct xval_side *kernel, struct cmp_report *rep);

/*
 * Whether a kernel run that differs from the simulator's @sim caught up by
 * its last row: every counter difference is before the last scan (page
 * partitions may still differ at it: merges made late can land in other
 * chain dups), and no row is missing. Merges on the kernel can fail for a
 * moment for reasons no model of KSM sees: a page another task holds
 * (kcompactd migrating it, an LRU batch's reference) fails
 * write_protect_page's reference count check, and the page merges at its
 * next visit. Seen once in CI on thp-merge.wl: one page of a just-split THP
 * merged one scan late. False when nothing differs.
 */
bool xval_caught_up(const struct cmp_report *rep, const struct trace *sim);

/* ---- the pipeline ------------------------------------------------------------ */

enum xval_verdict {
	XVAL_MATCH,    /* deterministic, and identical: every counter and partition */
	XVAL_WITHIN,   /* not deterministic, and within XVAL_TOLERANCE */
	XVAL_DIFFERS,  /* the report holds the differences */
	XVAL_SIM_ONLY, /* the kernel side was skipped (KB_SKIPPED): the simulator ran alone */
	XVAL_FAILED,   /* a step failed: xval_result.failed says which */
};

/* The step that failed, with XVAL_FAILED. */
enum xval_step {
	XVAL_STEP_NONE,
	XVAL_STEP_KERNEL,    /* the kernel side: status and kernel_message say why */
	XVAL_STEP_SEMANTICS, /* no semantics model the kernel that ran: why */
	XVAL_STEP_SIM,       /* the simulator: why */
	XVAL_STEP_COMPARE,   /* out of memory, or the traces name different processes */
};

struct xval_result;

/* Called with the differing result before the kernel side runs again. */
typedef void (*xval_rerun_fn)(const struct xval_result *res, void *arg);

/* A kernel side of one's own (a test's fake, say): as xval_run_host, it
 * fills @out (and @msg unless KB_OK) and returns a KB_* status. */
typedef int (*xval_kernel_fn)(const struct workload *wl, bool pages, struct xval_side *out,
			      char *msg, size_t msglen, void *arg);

struct xval_options {
	const struct sim_costs *costs;  /* the simulator's; NULL: the defaults */
	bool pages;                     /* capture (both sides) and compare page partitions */
	const struct kb_options *host;  /* the kernel side here; NULL: kb_options_init's */
	const struct kg_options *guest; /* or in a qemu guest, booted for this workload */
	xval_kernel_fn kernel;          /* or this, when set (then host and guest are unused) */
	void *kernel_arg;
	unsigned attempts;              /* kernel runs at most while each caught up or had
					   invalid rows (0, 1: one) */
	xval_note_fn note;              /* the pipeline's notes, and the backend's and the
					   guest's unless their options have their own; may be NULL */
	void *note_arg;
	xval_rerun_fn rerun;            /* may be NULL */
	void *rerun_arg;
};

/* Defaults: the simulator's costs, no pages, this machine, one attempt, silent. */
void xval_options_init(struct xval_options *opt);

struct xval_result {
	enum xval_verdict verdict;
	enum xval_step failed;          /* with XVAL_FAILED */
	int status;                     /* the kernel side's KB_* */
	char kernel_message[2048];      /* the kernel side's, with status != KB_OK */
	char why[2048];                 /* with XVAL_STEP_SEMANTICS or XVAL_STEP_SIM */
	enum wl_kernel semantics;       /* what the simulator followed */
	const char *settings;           /* ... with these [global] lines over the
					   workload's (xval_settings), or "" */
	unsigned kernel_runs;           /* how many times the kernel side ran */
	struct xval_side sim, kernel;   /* what each side produced (kernel: its last run) */
	struct cmp_report report;       /* with XVAL_MATCH, XVAL_WITHIN, XVAL_DIFFERS */
};

/*
 * The whole pipeline for @wl: the kernel side as @opt says, then
 * xval_follow's steps, then, while the verdict is XVAL_DIFFERS, the kernel
 * caught up (xval_caught_up) or its runner was late for some rows (invalid
 * rows), and @opt->attempts allow, the kernel side again
 * (opt->rerun told first) and the comparison with the same simulator run.
 * Fills @res (the caller frees it with xval_result_free) and returns its
 * verdict.
 */
enum xval_verdict xval_run(const struct workload *wl, const struct xval_options *opt,
			   struct xval_result *res);

/*
 * The pipeline after a kernel side that already ran (@kernel, one of a
 * guest's runs; its side is taken, left empty): unless it failed, the
 * semantics of the kernel that ran (the workload's own when it was
 * skipped), the simulator in them, and the comparison. Fills @res and
 * returns its verdict; no rerun.
 */
enum xval_verdict xval_follow(const struct workload *wl, struct xval_guest_run *kernel,
			      const struct xval_options *opt, struct xval_result *res);

/*
 * Whether a difference may be the kernel run's own accident, worth another
 * run: the kernel caught up by its last scan (xval_caught_up), its runner
 * was late for some rows (invalid rows: ksmd ended a second scan before the
 * runner saw the first), or the workload has a thp = always region (a huge
 * page's split fails while something holds a transient reference to it,
 * such as a per-CPU LRU batch, and the merge waits for a later scan).
 */
bool xval_may_be_transient(const struct workload *wl, const struct xval_result *res);

void xval_result_free(struct xval_result *res);

/*
 * The process and region names of @wl, for page partitions' CSV and
 * reports (pointers into @wl, which must outlive them). 0, or -1 when out
 * of memory. xval_names_free releases the arrays.
 */
int xval_names(const struct workload *wl, struct trace_page_names *out);
void xval_names_free(struct trace_page_names *names);

#endif
