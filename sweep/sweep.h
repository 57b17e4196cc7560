/*
 * sweep.h - benchmark sweeps: one measurement repeated over a range of a
 * parameter, on the kernel and on the simulator side by side (ksmkit sweep,
 * make bench).
 *
 * A sweep is a list of points (x values), a list of series (the kernel, the
 * simulator with one detector, ...) and a run function that measures every
 * series once at one point: one kernel run and the simulator runs of the
 * same workload, back to back, so that the ratios between series are taken
 * inside one repetition. A point is measured RUNS times (at least 5 for a
 * figure anyone should quote); its result per series is the min, median and
 * max, and per ratio (a series over another, as the sweep names them) the
 * same over the per-repetition ratios. The simulator is deterministic (random
 * choices come from the workload's seed), so it runs once per point and its
 * value stands for every repetition: its min, median and max agree.
 *
 * Results are rows of the sweep CSV format (ksmkit plot sweep): a series
 * name, x, min, median, max. Ratios are rows too, their series named
 * "ratio: A / B", so one job's output holds all it measured and many jobs'
 * outputs, concatenated, can be collected into the results of the sweep
 * (GNU parallel, ssh hosts). Nothing here prints: progress goes through a
 * callback and errors into @err.
 */
#ifndef KSMKIT_SWEEP_H
#define KSMKIT_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sim.h"

#define SWEEP_MAX_SERIES 8
#define SWEEP_MAX_RATIOS 6
#define SWEEP_MAX_POINTS 32
#define SWEEP_NAME_MAX 64
#define SWEEP_RATIO_PREFIX "ratio: "
/* How min, median and max are written in rows; a measured point's values
 * are rounded to it (sweep_point), so rows read back give the same point. */
#define SWEEP_VALUE_FORMAT "%.6g"

/* Where a series runs: the simulator, this kernel, or a qemu NUMA guest's
 * kernel (counters only: a guest's times are emulation times). */
enum sweep_engine { SWEEP_SIM, SWEEP_KERNEL, SWEEP_GUEST };

struct sweep_series {
	const char *name;          /* legend text: "kernel", "sim checksum" */
	enum sweep_engine engine;
};

/* A ratio reported per repetition: series @num over series @den. */
struct sweep_ratio {
	int num, den;
};

struct sweep_fit; /* sweep_fit_new, below */

/* What a run needs from outside: which engines, the costs, a scale. */
struct sweep_env {
	bool kernel;                    /* measure the kernel series (root, KSM) */
	bool force;                     /* run although others use KSM */
	const struct sim_costs *costs;  /* NULL: the simulator's defaults */
	double scale;                   /* sizes multiplied by this (default 1) */
	const char *workloads_dir;      /* predict: the shipped workloads */
	const char *guest_dir;          /* a prepared guest (guest.h), or NULL: no
					   guest series */
	uint64_t mem_available;         /* simulator runs are admitted (sim_admit)
					   against this many bytes; 0: not checked */
	struct sweep_fit *fit;          /* predict: costs fitted in its own rounds
					   (sweep_fit_new), or NULL */
};

struct sweep_def;
struct sweep_text; /* workload text being built (sweep_defs.c) */

/* The workload of series @series at point @point, into @t; its name in @name. */
typedef int (*sweep_text_fn)(const struct sweep_def *d, size_t point, size_t series,
			     const struct sweep_env *env, struct sweep_text *t, char *name,
			     size_t namelen, char *err, size_t errlen);
/*
 * One repetition at point @point: y[s] for every series @want[s] asks for
 * (NAN: not measured here). The simulator is deterministic, so its series are
 * wanted in the first repetition only and their value stands for all.
 */
typedef int (*sweep_run_fn)(const struct sweep_def *d, size_t point,
			    const struct sweep_env *env, const bool *want, double *y, char *err,
			    size_t errlen);
struct sweep_point_result;
/*
 * Extra explanation after the summary table (may be NULL); @res holds the
 * results of every point (d->npoints of them), or is NULL when there are
 * none to judge.
 */
typedef void (*sweep_explain_fn)(const struct sweep_def *d, const struct sweep_env *env,
				 const struct sweep_point_result *res, FILE *out);

/*
 * Before the run of point @point in round @round of @runs (sweep_rounds;
 * sweep_point's repetitions are its rounds): 0, or -1 with a message.
 */
typedef int (*sweep_before_run_fn)(const struct sweep_def *d, const struct sweep_env *env,
				   size_t point, unsigned round, unsigned runs, char *err,
				   size_t errlen);
/*
 * After the last round, before the points are reduced: may rewrite what
 * was measured of points [@first, @first + @n), @runs rows of d->nseries
 * values each, a point after the other, in @y. 0, or -1 with a message.
 */
typedef int (*sweep_rounds_done_fn)(const struct sweep_def *d, const struct sweep_env *env,
				    size_t first, size_t n, unsigned runs, double *y, char *err,
				    size_t errlen);

struct sweep_def {
	const char *name;     /* "volatile" */
	const char *summary;  /* one line for --list */
	const char *title, *xlabel, *ylabel;
	bool logx, bars;
	const double *x;
	size_t npoints;
	const char *const *xname; /* names of the points in tables, or NULL */
	const struct sweep_series *series;
	size_t nseries;
	const struct sweep_ratio *ratio;
	size_t nratios;
	sweep_text_fn text;
	sweep_run_fn run;
	sweep_explain_fn explain;
	bool once;            /* every series is deterministic (the simulator, a
				 guest's counters): measured in the first
				 repetition only, its value standing for all */
	bool rounds;          /* a whole sweep repeats in rounds over every
				 point (sweep_rounds), not point by point */
	sweep_before_run_fn before_run;    /* may be NULL */
	sweep_rounds_done_fn rounds_done;  /* may be NULL */
};

/*
 * The workload text a point runs for one series (what --print-workload
 * shows), NUL-terminated in @buf. Returns 0, or -1 with a message.
 */
int sweep_workload_text(const struct sweep_def *d, size_t point, size_t series,
			const struct sweep_env *env, char *buf, size_t len, char *err,
			size_t errlen);

/*
 * min, median and max of @n measurements (n 0: nothing measured), and
 * [lo, hi], the median's confidence interval of at least 90% that needs no
 * assumption about their distribution: the k-th smallest and the k-th
 * largest, k as large as the binomial odds allow (1 up to 8 measurements:
 * min and max; 2 from 9, 3 from 11). Rows read back give min and max.
 */
struct sweep_stat {
	double min, median, max;
	unsigned n;
	double lo, hi;
};

/* The result of one point: per series, then per ratio. */
struct sweep_point_result {
	struct sweep_stat series[SWEEP_MAX_SERIES];
	struct sweep_stat ratio[SWEEP_MAX_RATIOS];
};

/* Every sweep, in the order `all` runs them. */
size_t sweep_count(void);
const struct sweep_def *sweep_at(size_t i);
/* By name; NULL when unknown. */
const struct sweep_def *sweep_find(const char *name);

void sweep_env_init(struct sweep_env *env);

/* Called before each repetition (may be NULL in sweep_point). */
typedef void (*sweep_progress_fn)(const struct sweep_def *d, size_t point, unsigned run,
				  unsigned runs, void *arg);

/*
 * Measure point @point @runs times. Its values are rounded as its rows write
 * them (SWEEP_VALUE_FORMAT; ratios are taken before rounding), so that
 * sweep_read_rows of its rows gives back exactly @out. Returns 0, or -1 with
 * a message: a run failed, or the kernel cannot run here (then the message
 * says why; call again with env->kernel false for the simulator's series
 * alone).
 */
int sweep_point(const struct sweep_def *d, size_t point, unsigned runs,
		const struct sweep_env *env, sweep_progress_fn progress, void *arg,
		struct sweep_point_result *out, char *err, size_t errlen);

/*
 * Measure every point of @d @runs times in rounds: repetition 1 of every
 * point, then repetition 2 of every point, and so on, so that a point's
 * repetitions are as far apart as the sweep is long and their spread shows
 * how far the machine moved meanwhile (point by point, they are seconds
 * apart). @res has d->npoints entries; each is what sweep_point would give
 * from the same repetitions. Returns 0, or -1 with a message as
 * sweep_point.
 */
int sweep_rounds(const struct sweep_def *d, unsigned runs, const struct sweep_env *env,
		 sweep_progress_fn progress, void *arg, struct sweep_point_result *res, char *err,
		 size_t errlen);

/*
 * sweep predict --calibrate: a calibration of this machine (calib.h) whose
 * kernel rounds run between the sweep's own, and the simulator's series
 * recomputed with its fit when the last round is over, so that the fit and
 * the kernel runs it is judged against see the machine in the same
 * minutes (its ksmd costs drift by tens of percent within minutes here).
 * New runs the microbenchmarks and copies @opt: 0, or -1 with a message.
 * The result is the fit of the last sweep run with it, or NULL before one.
 */
struct calib_options;
struct calib_result;
int sweep_fit_new(const struct calib_options *opt, struct sweep_fit **f, char *err,
		  size_t errlen);
const struct calib_result *sweep_fit_result(const struct sweep_fit *f);
/* Kernel runs of the calibration workloads made so far. */
size_t sweep_fit_runs(const struct sweep_fit *f);
void sweep_fit_free(struct sweep_fit *f);

/* The name a ratio's rows carry: "ratio: A / B". */
void sweep_ratio_name(const struct sweep_def *d, size_t ratio, char *buf, size_t len);

/* The CSV header, and the rows of one measured point (series then ratios). */
void sweep_write_header(FILE *out);
void sweep_write_point(const struct sweep_def *d, size_t point,
		       const struct sweep_point_result *res, FILE *out);

/*
 * Read rows of @d written by sweep_write_point (any number of outputs
 * concatenated: repeated header lines and '#' comments are skipped) into
 * @res[0..d->npoints). A point is matched by its x; a row for a series or
 * ratio @d does not have, or an x it does not have, is an error
 * ("NAME:LINE: why"). Returns 0 or -1.
 */
int sweep_read_rows(const struct sweep_def *d, FILE *in, const char *name,
		    struct sweep_point_result *res, char *err, size_t errlen);

/*
 * The first point of @res[0..d->npoints) without a single row (no series,
 * no ratio measured: a job that never ran or failed), or -1 when every point
 * has one.
 */
long sweep_first_unmeasured(const struct sweep_def *d, const struct sweep_point_result *res);

/*
 * Write the results of a whole sweep: DIR/NAME.csv (the series),
 * DIR/NAME-ratios.csv (the ratios) and, if built with libplot, DIR/NAME.png
 * and DIR/NAME.svg. Returns 0, or -1 with a message.
 */
int sweep_write_results(const struct sweep_def *d, const struct sweep_point_result *res,
			const char *dir, char *err, size_t errlen);

/* A table of medians per point and series, then the ratios' medians. */
void sweep_write_summary(const struct sweep_def *d, const struct sweep_point_result *res,
			 FILE *out);

#endif
