/*
 * check_calib.c - Check suite for calib/: the non-negative least-squares
 * fit (exact recovery, a column whose cost would go negative dropped and
 * the rest refitted, singular and ill-shaped systems refused), and the
 * microbenchmark-only calibration filling the measured costs with usable
 * values and saying why the kernel part did not run, and a calibration
 * session refusing to fit before a kernel round. Times are never
 * compared with a bound: only that they were measured.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"

/* b = A x for A m-by-n row-major. */
static void multiply(const double *a, const double *x, size_t m, size_t n, double *b)
{
	for (size_t i = 0; i < m; i++) {
		b[i] = 0;
		for (size_t j = 0; j < n; j++)
			b[i] += a[i * n + j] * x[j];
	}
}

START_TEST(test_solve_recovers_exact_costs)
{
	/* six "scans" of three kinds of work, costs 265, 760 and 15000 */
	const double a[] = { 20000, 20000, 1, 20000, 0, 1, 40000, 20000, 2,
			     10000, 10000, 40, 30000, 1000, 3, 5000, 5000, 1 };
	const double want[] = { 265, 760, 15000 };
	double b[6], x[3];

	multiply(a, want, 6, 3, b);
	ck_assert_int_eq(calib_solve(a, b, 6, 3, x, NULL), 0);
	for (size_t j = 0; j < 3; j++)
		ck_assert_double_eq_tol(x[j], want[j], 1e-6 * want[j]);
}
END_TEST

START_TEST(test_solve_fits_noise_in_least_squares)
{
	const double a[] = { 1, 1, 1, 2, 1, 3, 1, 4 };
	const double b[] = { 6, 5, 7, 10 }; /* best line: 3.5 + 1.4 t */
	double x[2];

	ck_assert_int_eq(calib_solve(a, b, 4, 2, x, NULL), 0);
	ck_assert_double_eq_tol(x[0], 3.5, 1e-9);
	ck_assert_double_eq_tol(x[1], 1.4, 1e-9);
}
END_TEST

START_TEST(test_solve_drops_negative_costs)
{
	/* the second column only explains noise downwards: unconstrained least
	 * squares gives it a negative cost, which no work can have */
	const double a[] = { 1, 0, 2, 1, 3, 0, 4, 1 };
	const double b[] = { 10, 19, 30, 39 };
	double x[2];

	ck_assert_int_eq(calib_solve(a, b, 4, 2, x, NULL), 0);
	ck_assert_double_eq(x[1], 0);
	ck_assert(x[0] > 9.5 && x[0] < 10);
	for (size_t j = 0; j < 2; j++)
		ck_assert(x[j] >= 0);
}
END_TEST

START_TEST(test_solve_refuses_what_it_cannot_determine)
{
	const double dup[] = { 1, 1, 2, 2, 3, 3 }; /* two equal columns */
	const double b[] = { 1, 2, 3 };
	double x[CALIB_MAX_UNKNOWNS + 1], big[(CALIB_MAX_UNKNOWNS + 1) * (CALIB_MAX_UNKNOWNS + 1)] = { 0 },
	       bb[CALIB_MAX_UNKNOWNS + 1] = { 0 };

	ck_assert_int_eq(calib_solve(dup, b, 3, 2, x, NULL), -1);
	ck_assert_int_eq(calib_solve(dup, b, 1, 2, x, NULL), -1);  /* fewer rows than unknowns */
	ck_assert_int_eq(calib_solve(big, bb, CALIB_MAX_UNKNOWNS + 1, CALIB_MAX_UNKNOWNS + 1, x, NULL),
			 -1); /* too many unknowns */
}
END_TEST

START_TEST(test_microbenchmarks_only)
{
	struct calib_options opt;
	struct calib_result res;
	struct sim_config cfg;
	char err[256];

	calib_options_init(&opt);
	opt.kernel = false;
	opt.runs = 3;
	ck_assert_int_eq(calib_run(&opt, &res, err, sizeof(err)), 0);
	ck_assert(!res.kernel_measured);
	ck_assert_str_eq(res.kernel_skip, "not asked for");
	ck_assert_uint_eq(res.nrows, 0);
	/* measured: finite and positive (their size is the machine's business) */
	ck_assert(isfinite(res.costs.checksum_ns) && res.costs.checksum_ns > 0);
	ck_assert(isfinite(res.costs.sample_word_ns) && res.costs.sample_word_ns > 0);
	ck_assert(isfinite(res.costs.memcmp_byte_ns) && res.costs.memcmp_byte_ns > 0);
	/* the costs only the kernel can tell keep the defaults */
	sim_config_default(&cfg);
	ck_assert_double_eq(res.costs.visit_ns, cfg.costs.visit_ns);
	ck_assert_double_eq(res.costs.merge_ns, cfg.costs.merge_ns);
	calib_result_free(&res);
}
END_TEST

/*
 * A session (sweep predict --calibrate) opens on the microbenchmarks alone:
 * no kernel round has run, so there is nothing to fit, and it says so.
 */
START_TEST(test_session_fits_nothing_before_a_round)
{
	struct calib_session *s = NULL;
	struct calib_options opt;
	struct calib_result res;
	char err[256] = "";

	calib_options_init(&opt);
	opt.runs = 1;
	ck_assert_msg(calib_session_open(&opt, &s, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(calib_session_runs(s), 0);
	ck_assert_int_eq(calib_session_fit(s, &res, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "no calibration round") != NULL, "%s", err);
	calib_session_close(s);
	/* the schedule: every workload in round 0, the pooled ones every round */
	ck_assert_uint_eq(calib_session_runs_in(1), calib_workload_count());
	ck_assert_uint_gt(calib_session_runs_in(2), calib_workload_count());
	ck_assert_uint_lt(calib_session_runs_in(2), 2 * calib_workload_count());
	ck_assert_uint_eq(calib_session_runs_in(8), 2 * calib_session_runs_in(4));
}
END_TEST

START_TEST(test_solve_gives_standard_errors)
{
	/* the line above: residuals 1.1 -1.3 -0.7 0.9, so s^2 = 4.2 / 2, and
	 * (X'X)^-1 has 1.5 and 0.2 on its diagonal */
	const double a[] = { 1, 1, 1, 2, 1, 3, 1, 4 };
	const double b[] = { 6, 5, 7, 10 };
	double x[2], se[2];

	ck_assert_int_eq(calib_solve(a, b, 4, 2, x, se), 0);
	ck_assert_double_eq_tol(se[0], sqrt(2.1 * 1.5), 1e-9);
	ck_assert_double_eq_tol(se[1], sqrt(2.1 * 0.2), 1e-9);
	/* an exact system has no spread */
	ck_assert_int_eq(calib_solve(a, (const double[]){ 4.9, 6.3, 7.7, 9.1 }, 4, 2, x, se), 0);
	ck_assert(se[0] < 1e-6 && se[1] < 1e-6);
}
END_TEST

/*
 * The fit's mechanics end to end, the simulator standing in for the kernel:
 * at costs unlike the defaults (each fitted term its own value), every
 * term calibrate fits must come back, which also says that the calibration
 * workloads exercise each one apart from the others.
 */
START_TEST(test_fit_recovers_every_fitted_term)
{
	struct calib_options opt;
	struct calib_result res;
	struct sim_costs truth;
	struct sim_config cfg;
	char err[512];

	sim_config_default(&cfg);
	truth = cfg.costs;
	for (int t = 0; t < SIM_TERM_COUNT; t++)
		if (sim_cost_term_info(t)->how == SIM_COST_FIT)
			sim_cost_set(&truth, t, 10.0 * (t + 1) + sim_cost_of(&cfg.costs, t) / 2);
	truth.refill_tau_ms = 40; /* one of CALIB_TAU_MS, not the default */
	calib_options_init(&opt);
	opt.pages = 4096;
	ck_assert_msg(calib_check_fit(&opt, &truth, 0, &res, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_gt(res.nrows, 0);
	for (int t = 0; t < SIM_TERM_COUNT; t++) {
		const double want = sim_cost_of(&truth, t);

		if (sim_cost_term_info(t)->how != SIM_COST_FIT)
			continue;
		ck_assert_msg(res.term[t].fitted, "%s not fitted", sim_cost_term_info(t)->name);
		ck_assert_msg(fabs(res.term[t].value - want) <= 1e-3 * want, "%s: fitted %g, truth %g",
			      sim_cost_term_info(t)->name, res.term[t].value, want);
		ck_assert_double_eq(sim_cost_of(&res.costs, t), res.term[t].value);
		ck_assert(res.term[t].se <= 1e-3 * want);
	}
	ck_assert(res.max_error < 1e-3);
	/* refill's time constant: the truth's, the others leaving a residual */
	ck_assert(res.costs.refill_tau_ms == 40);
	for (size_t k = 0; k < CALIB_TAU_COUNT; k++)
		ck_assert_msg(res.tau_ms[k] == 40 ? res.tau_residual[k] < 1e-9
						  : res.tau_residual[k] > 1e-6,
			      "tau %g: residual %g", res.tau_ms[k], res.tau_residual[k]);
	for (size_t w = 0; w < calib_workload_count(); w++) {
		double measured, modelled;
		size_t n = calib_host_totals(&res, calib_workload_name(w), &measured, &modelled);

		ck_assert_msg(n > 0 && measured > 0, "%s: no scan in the fit", calib_workload_name(w));
		ck_assert_msg(fabs(modelled / measured - 1) < 1e-3, "%s: modelled / measured %g",
			      calib_workload_name(w), modelled / measured);
	}
	ck_assert_uint_eq(calib_host_totals(&res, "no such host", &(double){ 0 }, &(double){ 0 }),
			  0);
	calib_result_free(&res);
}
END_TEST

static int cmp_ratio(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * A spread around the truth must not pull the fit below it: every measured
 * scan 0.6 and 1.4 times the simulator's in turn (the kernel's tiny hosts
 * spread by a CV of 0.3 to 0.5), and the fitted terms must still be the
 * truth, in their median within 10% (a term that few scans pin down moves
 * more, either way). Dividing each equation by its own measurement, as
 * calibrate did until 2026-12-06, gave the cheap scans the larger weights:
 * then every term came out near 0.72 of the truth, their median 0.71.
 */
START_TEST(test_fit_is_not_pulled_below_a_spread)
{
	double ratio[SIM_TERM_COUNT];
	struct calib_options opt;
	struct calib_result res;
	struct sim_config cfg;
	size_t n = 0;
	char err[512];

	sim_config_default(&cfg);
	calib_options_init(&opt);
	opt.pages = 4096;
	ck_assert_msg(calib_check_fit(&opt, &cfg.costs, 0.4, &res, err, sizeof(err)) == 0, "%s",
		      err);
	for (int t = 0; t < SIM_TERM_COUNT; t++) {
		const double want = sim_cost_of(&cfg.costs, t);

		if (sim_cost_term_info(t)->how == SIM_COST_FIT && want > 0)
			ratio[n++] = res.term[t].value / want;
	}
	ck_assert_uint_ge(n, 10);
	qsort(ratio, n, sizeof(ratio[0]), cmp_ratio);
	ck_assert_msg(fabs(ratio[n / 2] - 1) < 0.10, "median fitted / truth %.3f", ratio[n / 2]);
	calib_result_free(&res);
}
END_TEST

/* Each calibration workload is a valid workload, and none is a shipped one. */
START_TEST(test_calibration_workloads_parse)
{
	char text[CALIB_TEXT_MAX];

	ck_assert_uint_ge(calib_workload_count(), 15);
	for (size_t i = 0; i < calib_workload_count(); i++) {
		struct workload *wl = NULL;
		struct wl_error werr;

		ck_assert_int_eq(calib_workload_text(i, 65536, text, sizeof(text)), 0);
		ck_assert_msg(wl_parse_buffer(text, strlen(text), calib_workload_name(i), &wl,
					      &werr) == 0,
			      "%s: %s", calib_workload_name(i), werr.text);
		wl_free(wl);
	}
	ck_assert_int_eq(calib_workload_text(0, 65536, text, 16), -1); /* too short */
}
END_TEST

static Suite *calib_suite(void)
{
	Suite *s = suite_create("calib");
	TCase *tc = tcase_create("calib");

	tcase_add_test(tc, test_solve_recovers_exact_costs);
	tcase_add_test(tc, test_solve_fits_noise_in_least_squares);
	tcase_add_test(tc, test_solve_drops_negative_costs);
	tcase_add_test(tc, test_solve_refuses_what_it_cannot_determine);
	tcase_add_test(tc, test_microbenchmarks_only);
	tcase_add_test(tc, test_session_fits_nothing_before_a_round);
	tcase_add_test(tc, test_solve_gives_standard_errors);
	tcase_add_test(tc, test_fit_recovers_every_fitted_term);
	tcase_add_test(tc, test_fit_is_not_pulled_below_a_spread);
	tcase_add_test(tc, test_calibration_workloads_parse);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(calib_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
