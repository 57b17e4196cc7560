/*
 * sim_runs.h - what the simulator's tests share about whole runs: that two
 * traces agree row for row (every counter, time, batch and process field),
 * and two runs scan by scan (the machine's state and ksmd's work at every
 * scan row), every shipped workload, for a test that runs them all, and a
 * small machine built by hand. Header-only, for the check_sim_*.c suites (Check
 * and SRCDIR, as they are built).
 */
#ifndef KSMKIT_TESTS_SIM_RUNS_H
#define KSMKIT_TESTS_SIM_RUNS_H

#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>

#include "sim_driver.h"

/*
 * One process with @npages pages (area 0), page p holding value p % @groups,
 * on a machine of @cfg.
 */
static inline struct sim *test_machine_of(const struct sim_config *cfg, uint64_t npages,
					  uint64_t groups)
{
	char err[128];
	struct sim *s;
	int mm, area;

	s = sim_new(cfg, err, sizeof(err));
	ck_assert_ptr_nonnull(s);
	mm = sim_process_new(s);
	area = sim_mmap(s, mm, npages, -1, false, 0);
	for (uint64_t p = 0; p < npages; p++)
		ck_assert_int_eq(sim_fill(s, area, p, p % groups), 0);
	return s;
}

/* test_machine_of() the default machine. */
static inline struct sim *test_machine(uint64_t npages, uint64_t groups)
{
	struct sim_config cfg;

	sim_config_default(&cfg);
	return test_machine_of(&cfg, npages, groups);
}

/* Every row of @a and @b alike: counters, times, batches, processes. */
static inline void assert_same_rows(const struct trace *a, const struct trace *b,
				    const char *what)
{
	ck_assert_msg(a->nrows == b->nrows, "%s: %zu rows against %zu", what, a->nrows, b->nrows);
	for (size_t i = 0; i < a->nrows; i++) {
		const struct trace_row *x = &a->row[i], *y = &b->row[i];

		ck_assert_msg(x->kind == y->kind && x->scan == y->scan && x->batch == y->batch &&
				      x->time_ns == y->time_ns && x->ksmd_cpu_ns == y->ksmd_cpu_ns &&
				      x->valid == y->valid,
			      "%s: row %zu differs in its scan, batch or times", what, i);
		for (int c = 0; c < TRACE_COUNTER_COUNT; c++)
			ck_assert_msg(x->counter[c] == y->counter[c], "%s: row %zu: %s %lld against %lld",
				      what, i, trace_counter_name(c), (long long)x->counter[c],
				      (long long)y->counter[c]);
		for (size_t p = 0; p < a->nprocs; p++) {
			ck_assert_msg(x->proc[p].present == y->proc[p].present, "%s: row %zu", what, i);
			for (int f = 0; f < TRACE_PROC_FIELD_COUNT; f++)
				ck_assert_msg(x->proc[p].field[f] == y->proc[p].field[f],
					      "%s: row %zu: %s.%s differs", what, i, a->proc_name[p],
					      trace_proc_field_name(f));
		}
	}
}

/* What a run leaves at each scan row, beside its trace. */
#define SIM_RUNS_MAX_ROWS 4096
struct scan_marks {
	size_t n;
	uint64_t hash[SIM_RUNS_MAX_ROWS];          /* sim_hash: the whole state */
	struct sim_work work[SIM_RUNS_MAX_ROWS];   /* ksmd's counts of work */
	uint64_t memo_inserts, bulk_skips;         /* at the last row */
};

static inline void mark_scan(void *arg, uint64_t scan, const struct sim *s, const int *mm_of)
{
	struct scan_marks *m = arg;

	(void)scan;
	(void)mm_of;
	m->memo_inserts = sim_memo_inserts(s);
	m->bulk_skips = sim_bulk_skips(s);
	if (m->n == SIM_RUNS_MAX_ROWS)
		return;
	m->hash[m->n] = sim_hash(s);
	sim_work_get(s, &m->work[m->n]);
	m->n++;
}

/* @wl run with @opt, a row a batch, @m marked at every scan row. */
static inline struct trace *run_marked(const struct workload *wl, struct sim_run_options opt,
				       struct scan_marks *m)
{
	struct trace *t;
	char err[512];

	memset(m, 0, sizeof(*m));
	opt.per_batch = true;
	opt.scan_hook = mark_scan;
	opt.hook_arg = m;
	if (sim_run_workload(wl, &opt, &t, err, sizeof(err)) != 0)
		ck_abort_msg("run failed: %s", err);
	return t;
}

/* Two runs alike: every row of their traces, their states and work at every scan row. */
static inline void assert_same_runs(const struct trace *a, const struct scan_marks *ma,
				    const struct trace *b, const struct scan_marks *mb,
				    const char *what)
{
	assert_same_rows(a, b, what);
	ck_assert_uint_eq(ma->n, mb->n);
	for (size_t i = 0; i < ma->n; i++) {
		ck_assert_msg(ma->hash[i] == mb->hash[i], "%s: the state differs at scan row %zu",
			      what, i);
		ck_assert_msg(memcmp(&ma->work[i], &mb->work[i], sizeof(ma->work[i])) == 0,
			      "%s: the work differs at scan row %zu", what, i);
	}
}

/*
 * Call @fn on every shipped workload (workloads/ and workloads/selftests/),
 * parsed, with runs stopped by time cut to 2 simulated seconds (nai-xia
 * writes 200000 pages a second; 2 s are 64 of its scans). Returns how many.
 */
static inline size_t for_each_shipped_workload(void (*fn)(struct workload *wl, const char *path))
{
	static const char *const dirs[] = { "workloads", "workloads/selftests" };
	size_t runs = 0;

	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		char pattern[512];
		glob_t g;

		snprintf(pattern, sizeof(pattern), "%s/%s/*.wl", SRCDIR, dirs[d]);
		ck_assert_int_eq(glob(pattern, 0, NULL, &g), 0);
		for (size_t i = 0; i < g.gl_pathc; i++) {
			struct workload *wl;
			struct wl_error werr;

			if (wl_parse_file(g.gl_pathv[i], &wl, &werr) != 0)
				ck_abort_msg("%s", werr.text);
			if (wl->stop == WL_STOP_TIME && wl->stop_time_ns > 2000000000u)
				wl->stop_time_ns = 2000000000u;
			fn(wl, g.gl_pathv[i]);
			wl_free(wl);
			runs++;
		}
		globfree(&g);
	}
	return runs;
}

#endif
