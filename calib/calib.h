/*
 * calib.h - calibrating the simulator's cost model on this machine.
 *
 * Two sources of truth. Userspace microbenchmarks time what ksmd does in
 * the same way in the kernel: xxh64 over a 4 KiB page, memcmp of two pages,
 * and (through /proc/self/clear_refs, which walks PTEs clearing a bit and
 * flushing the TLB as a dirty-bit detector would) the test and the
 * test-and-clear of a PTE bit; and the ratio of a sampled checksum's time (16
 * words, a cache line each) to a page's, on pages not in the cache, which
 * makes a sampled word's cost that share of checksum_ns, before and after
 * the fit. Then the real ksmd runs calibration workloads, in rounds of one
 * run each (large hosts at rest, unique, volatile in 4 KiB pages and in
 * THPs; tiny hosts in one process, many processes, many mappings and many
 * batches, and after short, default and long sleeps; tiny and medium hosts
 * busy; the default knobs; discards, execs and zero pages: one apart from
 * the others for each fitted term), and the simulator runs the same
 * workloads as far as the kernel went, counting the work of each term of
 * the cost model (SIM_COST_TERMS, sim.h) in every scan; a least-squares
 * fit of ksmd's measured CPU time per scan against those counts, each scan
 * divided by what the model says it measures (relative errors, reweighted
 * from each fit), gives the SIM_COST_FIT terms with their standard errors,
 * and the rows with a plain sleep give how long a sleep really lasts. The
 * SIM_COST_KEPT terms (a THP split, a chain prune's dup) are isolated by
 * no run and keep their defaults. The calibration
 * workloads are generated here and are not shipped: the shipped workloads
 * stay free to validate the model.
 */
#ifndef KSMKIT_CALIB_H
#define KSMKIT_CALIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim.h"

#define CALIB_MAX_REPEATS 20

struct calib_options {
	uint64_t pages;     /* pages per calibration workload (default 65536) */
	unsigned runs;      /* microbenchmark repetitions, median taken (default 7) */
	unsigned repeats;   /* kernel runs of each calibration workload, every scan
			       of each an equation of the fit (default 3, at most
			       CALIB_MAX_REPEATS) */
	bool kernel;        /* also run the kernel workloads (needs root) */
	bool force;         /* run the kernel side although others use KSM */
	void (*note)(const char *line, void *arg); /* progress notes (may be NULL) */
	void *note_arg;
};

/* One calibration workload's fit: measured and modelled ksmd CPU per scan. */
struct calib_fit_row {
	char workload[32];
	uint64_t scan;
	double measured_ns;
	double modelled_ns;
};

/* One term of the fit (SIM_COST_FIT terms only; the others stay zeroed). */
struct calib_term {
	bool fitted;  /* the fit gave it a positive cost */
	double value; /* the fit's value, now in costs (0: its column dropped) */
	double se;    /* its standard error, from the residuals */
};

/*
 * refill's time constants the fit tries, ms: the one whose fit leaves the
 * least weighted residual is kept (in costs.refill_tau_ms).
 */
#define CALIB_TAU_MS 10.0, 15.0, 25.0, 40.0, 60.0, 100.0
#define CALIB_TAU_COUNT 6

struct calib_result {
	struct sim_costs costs;   /* the calibrated model (defaults where unmeasured) */
	bool kernel_measured;     /* the kernel workloads ran */
	char kernel_skip[512];    /* why not, otherwise */
	struct calib_term term[SIM_TERM_COUNT];
	struct calib_fit_row *row;
	size_t nrows;
	double max_error;         /* largest |modelled - measured| / measured */
	double tau_ms[CALIB_TAU_COUNT];       /* refill's time constants tried (0: */
	double tau_residual[CALIB_TAU_COUNT]; /* none, the simulator stood in), and
						 each one's weighted residual */
};

void calib_options_init(struct calib_options *opt);

/*
 * Measure. Returns 0 (with the kernel part skipped, and the reason in
 * res->kernel_skip, when it cannot run here), or -1 with a message.
 */
int calib_run(const struct calib_options *opt, struct calib_result *res, char *err,
	      size_t errlen);
void calib_result_free(struct calib_result *res);

/*
 * Over the fit's rows of calibration workload @name: how many (0: none),
 * and the sums of what ksmd measured and of what the fitted model gives,
 * ns. Whether the model holds for a host as a whole, where its scans
 * spread by tens of percent one by one.
 */
size_t calib_host_totals(const struct calib_result *res, const char *name, double *measured,
			 double *modelled);

/*
 * A calibration spread over someone else's time: the same microbenchmarks,
 * calibration workloads and fit as calib_run, with the kernel's runs made
 * when the caller wants them, between its own measurements (ksmkit sweep
 * predict --calibrate spreads them over its rounds, a few before each of
 * its own runs, so that the fit and what it is checked against see the
 * machine in the same minutes).
 *
 * Open runs the microbenchmarks and parses the workloads (no kernel yet):
 * 0, or -1 with a message. The kernel's runs follow calib_run's schedule of
 * rounds: round runs the rest of the current round, step the next run of
 * it alone; each returns 0, 1 when the kernel cannot run here (the reason
 * in @skip), or -1 with a message in @err. runs_in says how many runs that
 * many rounds hold, runs how many ran. Fit may be called after any run, and
 * again after more: 0, or -1 with a message (no run yet, or a singular
 * system). Close frees it all.
 */
struct calib_session;
int calib_session_open(const struct calib_options *opt, struct calib_session **s, char *err,
		       size_t errlen);
int calib_session_round(struct calib_session *s, char *skip, size_t skiplen, char *err,
			size_t errlen);
int calib_session_step(struct calib_session *s, char *skip, size_t skiplen, char *err,
		       size_t errlen);
size_t calib_session_runs_in(unsigned rounds);
size_t calib_session_runs(const struct calib_session *s);
int calib_session_fit(struct calib_session *s, struct calib_result *res, char *err,
		      size_t errlen);
void calib_session_close(struct calib_session *s);

/* The per-unit microbenchmarks alone (no kernel): fills those fields of @c. */
void calib_micro(unsigned runs, struct sim_costs *c);

/*
 * Least squares for A x = b with A m-by-n (row-major), n <= CALIB_MAX_UNKNOWNS,
 * x >= 0 (columns whose solution would go negative are dropped and the rest
 * refitted); with @se (may be NULL), each unknown's standard error. Returns
 * 0, or -1 when the system is singular.
 */
#define CALIB_MAX_UNKNOWNS 32
int calib_solve(const double *a, const double *b, size_t m, size_t n, double *x, double *se);

/*
 * The fit's mechanics, with the simulator in the kernel's place: every
 * calibration workload runs in the simulator at the costs @truth, its own
 * ksmd CPU time is the measurement, and the fit must give @truth back for
 * every term it solves for. With @noise > 0 the measured scans are taken
 * 1 - @noise and 1 + @noise times in turn, a spread whose mean is the
 * truth, as the kernel's tiny hosts spread. 0, or -1 with a message
 * (singular: some term no calibration workload exercises apart from the
 * others).
 */
int calib_check_fit(const struct calib_options *opt, const struct sim_costs *truth,
		    double noise, struct calib_result *res, char *err, size_t errlen);

/* The calibration workloads (generated, never shipped): how many, their
 * names, and the text of one for @pages pages (0, or -1 if @len is short). */
#define CALIB_TEXT_MAX 16384
size_t calib_workload_count(void);
const char *calib_workload_name(size_t i);
int calib_workload_text(size_t i, uint64_t pages, char *buf, size_t len);

#endif
