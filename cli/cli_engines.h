/*
 * cli_engines.h - one workload on both engines, captured for comparison
 * (shared by `ksmkit compare` and `ksmkit demo`): the simulator, this
 * machine's kernel, or the kernel of a qemu guest (guest.h), and the choice
 * of the simulator's semantics from the kernel that actually ran.
 */
#ifndef KSMKIT_CLI_ENGINES_H
#define KSMKIT_CLI_ENGINES_H

#include "backend.h"
#include "compare.h"
#include "guest.h"
#include "sim_driver.h"

/*
 * Relative tolerance for workloads that cannot be deterministic (continuous
 * writers, a time stop): their counters depend on when writes land relative
 * to ksmd's batches, which only the real machine decides.
 */
#define ENGINES_TOLERANCE 0.25

/*
 * What comparing a run keeps per simulated page at every scan row: the
 * simulator's page partition and the kernel's (for admission, cli_sim.h).
 */
#define ENGINES_CAPTURE_BYTES (2 * sizeof(struct cmp_page))

/* What one engine produced. */
struct engine_run {
	struct trace *trace;
	struct cmp_page *pages; /* the page partition at every scan row */
	size_t npages;
	uint64_t invalid_rows;  /* kernel: rows a scan overlapped */
};

/* The simulator (with @costs, or the defaults when NULL): 0, or -1 with a message. */
int engines_run_sim(const struct workload *wl, bool pages, const struct sim_costs *costs,
		    struct engine_run *out, char *err, size_t errlen);

/*
 * Load a cost file into @costs (starting from the defaults); NULL @path
 * leaves the defaults. 0, or -1 with the message printed as ksmkit's error.
 */
int engines_load_costs(const char *path, struct sim_costs *costs);

/* The same, following @kernel's semantics instead of the workload's kernel key. */
int engines_run_sim_as(const struct workload *wl, enum wl_kernel kernel, bool pages,
		       const struct sim_costs *costs, struct engine_run *out, char *err,
		       size_t errlen);

/*
 * The semantics that model the kernel a trace came from (its release, as
 * the backend records it). 0, or -1 with the reason (a release no semantics
 * models) in @why.
 */
int engines_semantics(const struct trace *kernel, enum wl_kernel *out, char *why, size_t len);

/* The kernel (kb_run with @base plus page captures): a KB_* status. */
int engines_run_kernel(const struct workload *wl, const struct kb_options *base, bool pages,
		       struct engine_run *out, char *msg, size_t msglen);

/* One workload's outcome in a guest. */
struct engine_guest_run {
	int status;            /* KB_* inside the guest */
	char message[2048];    /* with status != KB_OK */
	struct engine_run run;
};

/*
 * @n workloads in one qemu guest (kg_run with @opt, plus page captures when
 * @pages). Fills @out[0..n) and the guest kernel's release; returns the
 * session's KB_* status (KB_OK: every workload has its own status).
 */
int engines_run_guest(const struct workload *const *wls, size_t n, const struct kg_options *opt,
		      bool pages, struct engine_guest_run *out, char *release, size_t rlen,
		      char *msg, size_t msglen);

void engines_free(struct engine_run *run);

/*
 * Compare the two runs: traces (exactly, or within ENGINES_TOLERANCE for a
 * non-deterministic workload, matching only the scans both have) and, for a
 * deterministic workload, the page partitions. 0, or -1 when out of memory.
 */
int engines_compare(const struct workload *wl, const struct engine_run *sim,
		    const struct engine_run *kernel, struct cmp_report *rep);

#endif
