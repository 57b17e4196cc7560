/*
 * check_sweep.c - Check suite for sweep/: every sweep's definition is
 * consistent and every workload it runs parses; a point measured on the
 * simulator alone gives the values the semantics require (pages_shared with
 * merge_across_nodes 1 and 0), repeated for every run with min = median =
 * max; the hybrid detector does less work than the checksum on a volatile
 * mix; partial hashing is faster than the checksum on idle pages and misjudges
 * pages written at random; every smart_scan_policy's series runs its policy,
 * and only upstream leaves smart-scan-mixed's equal pages unmerged; rows
 * round-trip through the CSV format, concatenated job outputs
 * included, a measured point to the last bit, and bad rows are named
 * FILE:LINE; a point without rows is found; result files are written;
 * repetitions in rounds run point after point and reduce as point by point,
 * a sweep's hooks run before each run and what the last one rewrites is
 * what is reduced.
 * Nothing here touches the kernel or measures time.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sweep.h"
#include "sweep_internal.h"
#include "workload.h"

static struct sweep_env sim_env(double scale)
{
	struct sweep_env env;

	sweep_env_init(&env);
	env.kernel = false;
	env.scale = scale;
	env.workloads_dir = SRCDIR "/workloads";
	return env;
}

static size_t series_index(const struct sweep_def *d, const char *name)
{
	for (size_t s = 0; s < d->nseries; s++)
		if (strcmp(d->series[s].name, name) == 0)
			return s;
	ck_abort_msg("%s has no series %s", d->name, name);
	return 0;
}

/* ---- repetitions in rounds ------------------------------------------------------ */

/*
 * A sweep of 3 points whose run gives the kernel series 10 * point + the
 * point's repetition number (from 1) and the simulator's point + 0.5, and
 * logs the order of its calls.
 */
enum { FAKE_POINTS = 3, FAKE_RUNS = 4 };
static unsigned fake_calls[FAKE_POINTS], fake_log[(FAKE_POINTS + 1) * FAKE_RUNS], fake_nlog;

static int fake_run(const struct sweep_def *d, size_t point, const struct sweep_env *env,
		    const bool *want, double *y, char *err, size_t errlen)
{
	(void)d, (void)env, (void)err, (void)errlen;
	fake_calls[point]++;
	fake_log[fake_nlog++] = (unsigned)point;
	if (want[0])
		y[0] = 10.0 * (double)point + fake_calls[point];
	if (want[1])
		y[1] = (double)point + 0.5;
	return 0;
}

static const double fake_x[FAKE_POINTS] = { 1, 2, 3 };
static const struct sweep_series fake_series[] = { { "kernel", SWEEP_KERNEL },
						   { "sim", SWEEP_SIM } };
static const struct sweep_ratio fake_ratio[] = { { 1, 0 } };
static const struct sweep_def fake_def = {
	.name = "fake", .x = fake_x, .npoints = FAKE_POINTS, .series = fake_series,
	.nseries = 2, .ratio = fake_ratio, .nratios = 1, .run = fake_run, .rounds = true,
};

static void assert_same_stat(const struct sweep_stat *a, const struct sweep_stat *b)
{
	ck_assert_uint_eq(a->n, b->n);
	ck_assert(a->min == b->min && a->median == b->median && a->max == b->max);
}

static void fake_reset(void)
{
	memset(fake_calls, 0, sizeof(fake_calls));
	fake_nlog = 0;
}

/*
 * sweep_rounds visits every point once a round, and gives each point what
 * sweep_point gives from the same repetitions (the simulator measured in
 * the first only).
 */
START_TEST(test_rounds_interleave_and_reduce_as_points_do)
{
	struct sweep_point_result rounds[FAKE_POINTS], point;
	struct sweep_env env = sim_env(1.0);
	char err[256];

	fake_reset();
	ck_assert_msg(sweep_rounds(&fake_def, FAKE_RUNS, &env, NULL, NULL, rounds, err,
				   sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(fake_nlog, FAKE_POINTS * FAKE_RUNS);
	for (unsigned i = 0; i < fake_nlog; i++)
		ck_assert_uint_eq(fake_log[i], i % FAKE_POINTS);
	for (size_t p = 0; p < FAKE_POINTS; p++) {
		fake_reset();
		ck_assert_msg(sweep_point(&fake_def, p, FAKE_RUNS, &env, NULL, NULL, &point, err,
					  sizeof(err)) == 0, "%s", err);
		assert_same_stat(&rounds[p].series[0], &point.series[0]);
		assert_same_stat(&rounds[p].series[1], &point.series[1]);
		assert_same_stat(&rounds[p].ratio[0], &point.ratio[0]);
		ck_assert_uint_eq(rounds[p].series[0].n, FAKE_RUNS);
		ck_assert(rounds[p].series[0].min == 10.0 * (double)p + 1);
		ck_assert(rounds[p].series[0].max == 10.0 * (double)p + FAKE_RUNS);
		ck_assert(rounds[p].series[1].min == rounds[p].series[1].max);
	}
}
END_TEST

/*
 * A sweep's hooks: before_run runs before each point's run (here logged as
 * 100 + the round, once a round, before its first point), and what
 * rounds_done writes into the rows (here the simulator's series doubled,
 * as predict --calibrate puts its series at the fitted costs) is what the
 * series and ratios reduce.
 */
static int fake_before_run(const struct sweep_def *d, const struct sweep_env *env,
			   size_t point, unsigned round, unsigned runs, char *err, size_t errlen)
{
	(void)d, (void)env, (void)runs, (void)err, (void)errlen;
	if (point == 0)
		fake_log[fake_nlog++] = 100 + round;
	return 0;
}

static int fake_rounds_done(const struct sweep_def *d, const struct sweep_env *env,
			    size_t first, size_t n, unsigned runs, double *y, char *err,
			    size_t errlen)
{
	(void)env, (void)first, (void)err, (void)errlen;
	for (size_t i = 0; i < n * runs; i++)
		y[i * d->nseries + 1] *= 2;
	return 0;
}

START_TEST(test_hooks_run_before_each_run_and_rewrite_rows)
{
	struct sweep_def def = fake_def;
	struct sweep_point_result res[FAKE_POINTS];
	struct sweep_env env = sim_env(1.0);
	char err[256];

	def.before_run = fake_before_run;
	def.rounds_done = fake_rounds_done;
	fake_reset();
	ck_assert_msg(sweep_rounds(&def, FAKE_RUNS, &env, NULL, NULL, res, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_uint_eq(fake_nlog, FAKE_RUNS * (FAKE_POINTS + 1));
	for (unsigned r = 0; r < FAKE_RUNS; r++) {
		ck_assert_uint_eq(fake_log[r * (FAKE_POINTS + 1)], 100 + r);
		for (unsigned p = 0; p < FAKE_POINTS; p++)
			ck_assert_uint_eq(fake_log[r * (FAKE_POINTS + 1) + 1 + p], p);
	}
	for (size_t p = 0; p < FAKE_POINTS; p++) {
		double sim = 2 * ((double)p + 0.5);

		ck_assert(res[p].series[1].min == sim && res[p].series[1].max == sim);
		/* the ratio sim / kernel of the first round: the doubled value over 10p + 1 */
		ck_assert(fabs(res[p].ratio[0].max - sim / (10.0 * (double)p + 1)) < 1e-5);
	}
}
END_TEST

/* ---- definitions ------------------------------------------------------------ */

START_TEST(test_definitions_consistent)
{
	ck_assert_uint_ge(sweep_count(), 6);
	for (size_t i = 0; i < sweep_count(); i++) {
		const struct sweep_def *d = sweep_at(i);

		ck_assert_ptr_eq(sweep_find(d->name), d);
		ck_assert_uint_ge(d->npoints, 1);
		ck_assert_uint_le(d->npoints, SWEEP_MAX_POINTS);
		ck_assert_uint_ge(d->nseries, 1);
		ck_assert_uint_le(d->nseries, SWEEP_MAX_SERIES);
		ck_assert_uint_le(d->nratios, SWEEP_MAX_RATIOS);
		for (size_t q = 0; q < d->nratios; q++) {
			ck_assert_int_lt(d->ratio[q].num, (int)d->nseries);
			ck_assert_int_lt(d->ratio[q].den, (int)d->nseries);
			ck_assert_int_ne(d->ratio[q].num, d->ratio[q].den);
		}
		for (size_t p = 1; p < d->npoints; p++)
			ck_assert_msg(d->x[p] > d->x[p - 1], "%s: x must increase", d->name);
		for (size_t s = 0; s < d->nseries; s++)
			ck_assert_ptr_null(strchr(d->series[s].name, ','));
	}
	ck_assert_ptr_null(sweep_find("nonesuch"));
}
END_TEST

START_TEST(test_every_workload_parses)
{
	struct sweep_env env = sim_env(1);
	static char text[32768];
	char err[512];

	for (size_t i = 0; i < sweep_count(); i++) {
		const struct sweep_def *d = sweep_at(i);

		for (size_t p = 0; p < d->npoints; p++)
			for (size_t s = 0; s < d->nseries; s++) {
				struct workload *wl = NULL;
				struct wl_error e;

				ck_assert_msg(sweep_workload_text(d, p, s, &env, text, sizeof(text), err,
								  sizeof(err)) == 0,
					      "%s point %zu series %zu: %s", d->name, p, s, err);
				ck_assert_msg(wl_parse_buffer(text, strlen(text), d->name, &wl, &e) == 0,
					      "%s point %zu series %zu: %s", d->name, p, s, e.text);
				wl_free(wl);
			}
	}
	ck_assert_int_eq(sweep_workload_text(sweep_find("numa"), 99, 0, &env, text, sizeof(text),
					     err, sizeof(err)),
			 -1);
}
END_TEST

/* ---- measuring on the simulator ------------------------------------------------ */

START_TEST(test_numa_point_values)
{
	const struct sweep_def *d = sweep_find("numa");
	struct sweep_env env = sim_env(1);
	struct sweep_point_result res;
	char err[512];
	size_t mac1 = series_index(d, "sim mac=1"), mac0 = series_index(d, "sim mac=0");
	size_t kernel = series_index(d, "kernel mac=1");

	/* point 2: four nodes, four groups on each */
	ck_assert_msg(sweep_point(d, 2, 5, &env, NULL, NULL, &res, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_uint_eq(res.series[mac1].n, 5);
	ck_assert_double_eq(res.series[mac1].median, 4);  /* one KSM page per group */
	ck_assert_double_eq(res.series[mac0].median, 16); /* one per group per node */
	ck_assert_double_eq(res.series[mac0].min, res.series[mac0].max);
	ck_assert_uint_eq(res.series[kernel].n, 0);       /* not measured */
	ck_assert_double_eq(res.ratio[0].median, 4);      /* sim mac=0 / sim mac=1 */
	ck_assert_uint_eq(res.ratio[1].n, 0);             /* needs the kernel */
}
END_TEST

/* Node by node: with merge_across_nodes = 1 every KSM page sits on node 0 (its
 * first pages come first in the scan), with 0 each node keeps its own. */
START_TEST(test_numa_per_node_values)
{
	const struct sweep_def *ksm = sweep_find("numa-ksm"), *merged = sweep_find("numa-merged");
	struct sweep_env env = sim_env(1);
	struct sweep_point_result res;
	char err[512];
	size_t mac1 = series_index(ksm, "sim mac=1"), mac0 = series_index(ksm, "sim mac=0");

	ck_assert(ksm->once && merged->once);
	for (size_t node = 0; node < 4; node++) {
		ck_assert_msg(sweep_point(ksm, node, 3, &env, NULL, NULL, &res, err,
					  sizeof(err)) == 0, "%s", err);
		ck_assert_uint_eq(res.series[mac1].n, 3);
		ck_assert_double_eq(res.series[mac1].median, node == 0 ? 4 : 0);
		ck_assert_double_eq(res.series[mac0].median, 4);
		ck_assert_uint_eq(res.series[series_index(ksm, "guest mac=0")].n, 0);
		ck_assert_msg(sweep_point(merged, node, 1, &env, NULL, NULL, &res, err,
					  sizeof(err)) == 0, "%s", err);
		/* a group has 50 copies on each node: 199 merged into one KSM page, or
		 * 49 into one per node */
		ck_assert_double_eq(res.series[mac1].median, node == 0 ? 4 * (200 - 1) : 0);
		ck_assert_double_eq(res.series[mac0].median, 4 * (50 - 1));
	}
}
END_TEST

START_TEST(test_hybrid_beats_checksum_when_all_volatile)
{
	const struct sweep_def *d = sweep_find("volatile");
	struct sweep_env env = sim_env(0.05);
	struct sweep_point_result res;
	char err[512];
	size_t checksum = series_index(d, "sim checksum"), hybrid = series_index(d, "sim hybrid");

	ck_assert_msg(sweep_point(d, d->npoints - 1, 1, &env, NULL, NULL, &res, err,
				  sizeof(err)) == 0,
		      "%s", err);
	ck_assert(isfinite(res.series[checksum].median) && res.series[checksum].median > 0);
	/* the half with dirty bits costs a PTE test instead of a 4 KiB hash */
	ck_assert_double_gt(res.series[hybrid].median, res.series[checksum].median);
}
END_TEST

/* Partial hashing: cheaper visits to idle pages, paid in mistakes on pages written at random. */
START_TEST(test_partial_hashing_trades_speed_for_mistakes)
{
	const struct sweep_def *d = sweep_find("detectors"), *e = sweep_find("detector-errors");
	struct sweep_env env = sim_env(0.05);
	struct sweep_point_result res;
	char err[512];
	size_t checksum = series_index(d, "sim checksum"), partial = series_index(d, "sim partial");
	size_t stable = series_index(e, "partial false stable");
	size_t wrong_volatile = series_index(e, "partial false volatile");
	size_t hybrid = series_index(e, "hybrid false stable");

	ck_assert_uint_eq(d->nseries, WL_DETECTOR_COUNT); /* every detector of the list */
	ck_assert_msg(sweep_point(d, 0, 1, &env, NULL, NULL, &res, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_double_gt(res.series[partial].median, res.series[checksum].median);
	ck_assert_msg(sweep_point(e, 3, 1, &env, NULL, NULL, &res, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_double_eq(e->x[3], 0.1);
	ck_assert_double_gt(res.series[stable].median, 0);
	ck_assert_double_gt(res.series[wrong_volatile].median, 0);
	ck_assert_double_eq(res.series[hybrid].median, 0);
	/* every page written before every scan is never trusted: no mistake */
	ck_assert_msg(sweep_point(e, e->npoints - 1, 1, &env, NULL, NULL, &res, err,
				  sizeof(err)) == 0, "%s", err);
	ck_assert_double_eq(res.series[stable].median, 0);
	ck_assert_double_eq(res.series[wrong_volatile].median, 0);
}
END_TEST

/* smart-scan: every policy's series runs the workload with smart_scan and its policy. */
START_TEST(test_smart_scan_series_set_the_policy)
{
	const struct sweep_def *d = sweep_find("smart-scan");
	struct sweep_env env = sim_env(1);
	static char text[32768];
	char err[512];
	size_t unique;

	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(d->nseries, WL_SMART_SCAN_COUNT + 1); /* every policy, then off */
	for (unique = 0; strcmp(d->xname[unique], "smart-scan-unique") != 0; unique++)
		ck_assert_uint_lt(unique + 1, d->npoints);
	for (size_t s = 0; s < d->nseries; s++) {
		struct workload *wl = NULL;
		struct wl_error e;

		ck_assert_int_eq(sweep_workload_text(d, unique, s, &env, text, sizeof(text), err,
						     sizeof(err)), 0);
		/* the file's own smart_scan = 1 is replaced, not repeated */
		ck_assert_msg(wl_parse_buffer(text, strlen(text), "t.wl", &wl, &e) == 0, "%s",
			      e.text);
		ck_assert_uint_eq(wl->knobs[WL_KNOB_SMART_SCAN], s < WL_SMART_SCAN_COUNT);
		if (s < WL_SMART_SCAN_COUNT)
			ck_assert_int_eq(wl->smart_scan_policy, (int)s);
		wl_free(wl);
	}
}
END_TEST

/*
 * smart-scan-mixed: smart scan saves four fifths of ksmd's CPU under every
 * policy; upstream never merges what smart scan off merges, and aligned and
 * phased do.
 */
START_TEST(test_smart_scan_mixed_merges_under_the_fix)
{
	const struct sweep_def *d = sweep_find("smart-scan");
	struct sweep_env env = sim_env(1);
	struct sweep_point_result res;
	size_t mixed = d->npoints - 1, off = WL_SMART_SCAN_COUNT;
	char err[512], *text = NULL, *row;
	size_t len = 0;
	FILE *out;

	ck_assert_str_eq(d->xname[mixed], "smart-scan-mixed");
	ck_assert_msg(sweep_point(d, mixed, 1, &env, NULL, NULL, &res, err, sizeof(err)) == 0,
		      "%s", err);
	for (size_t s = 0; s < WL_SMART_SCAN_COUNT; s++)
		ck_assert_double_lt(res.series[s].median * 4, res.series[off].median);
	out = open_memstream(&text, &len);
	d->explain(d, &env, NULL, out);
	fclose(out);
	row = strstr(text, "smart-scan-mixed");
	ck_assert_ptr_nonnull(row);
	for (size_t s = 0; s <= off; s++) {
		char *end = strchr(row, '\n');

		ck_assert_ptr_nonnull(end);
		*end = '\0';
		ck_assert_ptr_nonnull(strstr(row, d->series[s].name + strlen("sim ")));
		ck_assert_msg((strstr(row, " never ") != NULL) == (s == WL_SMART_SCAN_UPSTREAM),
			      "%s", row);
		row = end + 1;
	}
	free(text);
}
END_TEST

START_TEST(test_merge_point_predicts)
{
	const struct sweep_def *d = sweep_find("merge");
	struct sweep_env env = sim_env(0.25);
	struct sweep_point_result res;
	char err[512];

	ck_assert_msg(sweep_point(d, 0, 2, &env, NULL, NULL, &res, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_uint_eq(res.series[series_index(d, "sim")].n, 2);
	ck_assert(res.series[series_index(d, "sim")].median > 0);
	ck_assert_uint_eq(res.series[series_index(d, "kernel")].n, 0);
}
END_TEST

/* ---- rows and files ------------------------------------------------------------ */

static struct sweep_point_result sample_result(const struct sweep_def *d)
{
	struct sweep_point_result r;

	memset(&r, 0, sizeof(r));
	for (size_t s = 0; s < d->nseries; s++)
		r.series[s] = (struct sweep_stat){ 10.0 + (double)s, 11.5 + (double)s,
						   13.25 + (double)s, 5, 10.0 + (double)s,
						   13.25 + (double)s };
	for (size_t q = 0; q < d->nratios; q++)
		r.ratio[q] = (struct sweep_stat){ 0.5, 0.75, 1.0, 5, 0.5, 1.0 };
	return r;
}

/* Rows written into @buf (@len bytes, freed here) read back into @out. */
static void read_back(const struct sweep_def *d, char *buf, size_t len,
		      struct sweep_point_result *out)
{
	char err[256];
	FILE *f = fmemopen(buf, len, "r");

	memset(out, 0, SWEEP_MAX_POINTS * sizeof(*out));
	ck_assert_msg(sweep_read_rows(d, f, "jobs", out, err, sizeof(err)) == 0, "%s", err);
	fclose(f);
	free(buf);
}

START_TEST(test_rows_round_trip)
{
	const struct sweep_def *d = sweep_find("volatile");
	struct sweep_point_result in = sample_result(d), out[SWEEP_MAX_POINTS];
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	/* two jobs' outputs, concatenated: each with its header */
	fprintf(f, "# job 1\n");
	sweep_write_header(f);
	sweep_write_point(d, 1, &in, f);
	sweep_write_header(f);
	sweep_write_point(d, 3, &in, f);
	fclose(f);
	read_back(d, buf, len, out);
	for (size_t s = 0; s < d->nseries; s++) {
		ck_assert_double_eq(out[1].series[s].median, in.series[s].median);
		ck_assert_double_eq(out[3].series[s].max, in.series[s].max);
		ck_assert_uint_eq(out[0].series[s].n, 0);
	}
	for (size_t q = 0; q < d->nratios; q++)
		ck_assert_double_eq(out[3].ratio[q].median, 0.75);
}
END_TEST

/* A measured point, written as a job writes it and read back, is the same
 * point to the last bit: what a collected sweep draws is what it measured. */
START_TEST(test_measured_point_survives_its_rows)
{
	const struct sweep_def *d = sweep_find("detectors");
	struct sweep_env env = sim_env(0.02);
	struct sweep_point_result res, back[SWEEP_MAX_POINTS];
	char *buf = NULL, err[512];
	size_t len = 0;
	FILE *f;

	ck_assert_msg(sweep_point(d, 2, 1, &env, NULL, NULL, &res, err, sizeof(err)) == 0, "%s",
		      err);
	f = open_memstream(&buf, &len);
	sweep_write_header(f);
	sweep_write_point(d, 2, &res, f);
	fclose(f);
	read_back(d, buf, len, back);
	for (size_t s = 0; s < d->nseries; s++) {
		ck_assert_uint_eq(back[2].series[s].n, 1);
		ck_assert(res.series[s].median > 0);
		ck_assert_double_eq(back[2].series[s].min, res.series[s].min);
		ck_assert_double_eq(back[2].series[s].median, res.series[s].median);
		ck_assert_double_eq(back[2].series[s].max, res.series[s].max);
	}
	for (size_t q = 0; q < d->nratios; q++) {
		ck_assert_uint_eq(back[2].ratio[q].n, 1);
		ck_assert_double_eq(back[2].ratio[q].median, res.ratio[q].median);
	}
}
END_TEST

START_TEST(test_first_unmeasured_point)
{
	const struct sweep_def *d = sweep_find("volatile");
	struct sweep_point_result res[SWEEP_MAX_POINTS];

	memset(res, 0, sizeof(res));
	for (size_t p = 0; p < d->npoints; p++)
		res[p] = sample_result(d);
	ck_assert_int_eq(sweep_first_unmeasured(d, res), -1);
	memset(&res[3], 0, sizeof(res[3]));
	ck_assert_int_eq(sweep_first_unmeasured(d, res), 3);
	res[3].ratio[0] = (struct sweep_stat){ 1, 1, 1, 1, 1, 1 }; /* a ratio alone counts */
	ck_assert_int_eq(sweep_first_unmeasured(d, res), -1);
}
END_TEST

/*
 * The median's interval: min and max up to 8 measurements (5: 1 in 32 a
 * side), the second smallest and largest from 9 (10 in 512), the third
 * from 11; NaNs (unmeasured repetitions) are left out first.
 */
START_TEST(test_stat_interval_by_binomial_odds)
{
	double five[] = { 5, 1, 4, 2, 3 };
	double nine[] = { 9, 1, 8, 2, 7, 3, 6, 4, 5 };
	double eleven[] = { 11, 1, 10, 2, 9, 3, 8, 4, 7, 5, 6 };
	double holes[] = { NAN, 5, 1, NAN, 4, 2, 3, 9, 8, 7, 6 };
	struct sweep_stat st;

	st = sweep_stat_of(five, 5);
	ck_assert(st.lo == 1 && st.hi == 5 && st.median == 3);
	st = sweep_stat_of(nine, 9);
	ck_assert(st.lo == 2 && st.hi == 8 && st.min == 1 && st.max == 9);
	st = sweep_stat_of(eleven, 11);
	ck_assert(st.lo == 3 && st.hi == 9);
	st = sweep_stat_of(holes, 11);
	ck_assert_uint_eq(st.n, 9);
	ck_assert(st.lo == 2 && st.hi == 8 && st.median == 5);
}
END_TEST

/*
 * predict's verdict: a CPU ratio within 0.85-1.15 counts; one outside is
 * out when its median's interval lies beyond the same edge, and named with
 * the interval when that reaches into the band or past its other edge,
 * however narrow the kernel's own spread; points without a ratio are not
 * counted.
 */
START_TEST(test_predict_verdict)
{
	const struct sweep_def *d = sweep_find("predict");
	struct sweep_env env = sim_env(1);
	struct sweep_point_result res[SWEEP_MAX_POINTS];
	size_t kcpu = series_index(d, "kernel cpu");
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	memset(res, 0, sizeof(res));
	res[0].series[kcpu] = (struct sweep_stat){ 0.9, 1.0, 1.1, 5, 0.9, 1.1 };
	res[0].ratio[1] = (struct sweep_stat){ 1.0, 1.1, 1.2, 5, 1.0, 1.2 };         /* within */
	res[1].series[kcpu] = (struct sweep_stat){ 0.95, 1.0, 1.05, 5, 0.95, 1.05 };
	res[1].ratio[1] = (struct sweep_stat){ 1.0, 1.3, 1.9, 5, 1.0, 1.9 };         /* named */
	res[2].series[kcpu] = (struct sweep_stat){ 0.6, 1.0, 1.2, 5, 0.6, 1.2 };
	res[2].ratio[1] = (struct sweep_stat){ 0.6, 0.7, 0.8, 5, 0.6, 0.8 };         /* out */
	res[3].ratio[1] = (struct sweep_stat){ 0.7, 0.84, 1.2, 9, 0.8, 1.16 };       /* named */
	res[4].ratio[1] = (struct sweep_stat){ 1.1, 1.2, 1.3, 9, 1.151, 1.25 };      /* out */
	out = open_memstream(&text, &len);
	d->explain(d, &env, res, out);
	fclose(out);
	ck_assert_msg(strstr(text, "CPU ratio own knobs: 1 of 5 within 0.85-1.15") != NULL, "%s",
		      text);
	ck_assert_msg(strstr(text, "into the band: chains 1.30 (1.00-1.90), exit-middle 0.84 "
				   "(0.80-1.16);") != NULL, "%s", text);
	ck_assert_msg(strstr(text, "out, the median and its interval: cow-remerge 0.70 "
				   "(0.60-0.80), fork-cow 1.20 (1.15-1.25)\n") != NULL, "%s", text);
	ck_assert_msg(strstr(text, "their median over the workloads: 1.10\n") != NULL, "%s", text);
	ck_assert_msg(strstr(text, "CPU ratio busy") == NULL, "no busy ratio to judge: %s", text);
	free(text);
}
END_TEST

static void expect_bad_rows(const char *text, const char *message)
{
	const struct sweep_def *d = sweep_find("volatile");
	struct sweep_point_result out[SWEEP_MAX_POINTS];
	char err[256];
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	memset(out, 0, sizeof(out));
	ck_assert_int_eq(sweep_read_rows(d, f, "rows.csv", out, err, sizeof(err)), -1);
	fclose(f);
	ck_assert_msg(strstr(err, message) != NULL, "'%s' lacks '%s'", err, message);
}

START_TEST(test_bad_rows_named)
{
	expect_bad_rows("series,x,min,median,max\nnobody,0.5,1,2,3\n",
			"rows.csv:2: sweep volatile has no series 'nobody'");
	expect_bad_rows("kernel,0.3,1,2,3\n", "rows.csv:1: sweep volatile has no point x = 0.3");
	expect_bad_rows("kernel,0.5,1,2\n", "rows.csv:1: expected 5 comma-separated fields");
	expect_bad_rows("kernel,0.5,1,x,3\n", "rows.csv:1: 'x' is not a number");
	expect_bad_rows("kernel,0.5,3,2,1\n", "rows.csv:1: min <= median <= max does not hold");
	expect_bad_rows("kernel,0.5,1,2,3\n\nkernel,0.5,1,2,3\n",
			"rows.csv:3: a second row for 'kernel' at x = 0.5");
}
END_TEST

static bool file_has(const char *path, const char *needle)
{
	static char buf[1 << 20];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

START_TEST(test_results_written)
{
	const struct sweep_def *d = sweep_find("volatile");
	struct sweep_point_result res[SWEEP_MAX_POINTS];
	char dir[] = "/tmp/check_sweep.XXXXXX", path[512], err[256];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (size_t p = 0; p < d->npoints; p++)
		res[p] = sample_result(d);
	ck_assert_msg(sweep_write_results(d, res, dir, err, sizeof(err)) == 0, "%s", err);
	snprintf(path, sizeof(path), "%s/volatile.csv", dir);
	ck_assert(file_has(path, "series,x,min,median,max\nkernel,0,10,11.5,13.25\n"));
	unlink(path);
	snprintf(path, sizeof(path), "%s/volatile-ratios.csv", dir);
	ck_assert(file_has(path, "sim checksum / kernel,1,0.5,0.75,1\n"));
	unlink(path);
#ifdef HAVE_PLOT
	snprintf(path, sizeof(path), "%s/volatile.svg", dir);
	ck_assert(file_has(path, "sim hybrid"));
	unlink(path);
	snprintf(path, sizeof(path), "%s/volatile.png", dir);
	ck_assert(file_has(path, "PNG"));
	unlink(path);
#endif
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static Suite *sweep_suite(void)
{
	Suite *s = suite_create("sweep");
	TCase *tc = tcase_create("sweep");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_definitions_consistent);
	tcase_add_test(tc, test_every_workload_parses);
	tcase_add_test(tc, test_numa_point_values);
	tcase_add_test(tc, test_numa_per_node_values);
	tcase_add_test(tc, test_hybrid_beats_checksum_when_all_volatile);
	tcase_add_test(tc, test_partial_hashing_trades_speed_for_mistakes);
	tcase_add_test(tc, test_merge_point_predicts);
	tcase_add_test(tc, test_smart_scan_series_set_the_policy);
	tcase_add_test(tc, test_smart_scan_mixed_merges_under_the_fix);
	tcase_add_test(tc, test_rows_round_trip);
	tcase_add_test(tc, test_measured_point_survives_its_rows);
	tcase_add_test(tc, test_first_unmeasured_point);
	tcase_add_test(tc, test_stat_interval_by_binomial_odds);
	tcase_add_test(tc, test_predict_verdict);
	tcase_add_test(tc, test_rounds_interleave_and_reduce_as_points_do);
	tcase_add_test(tc, test_hooks_run_before_each_run_and_rewrite_rows);
	tcase_add_test(tc, test_bad_rows_named);
	tcase_add_test(tc, test_results_written);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sweep_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
