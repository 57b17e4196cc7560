/*
 * check_xval.c - Check suite for compare/xval.c, the cross-validation
 * pipeline, without a kernel: the choice of semantics from a release, the
 * rerun classifier (xval_caught_up), the comparison of two sides, and the
 * assembly of a result from kernel sides made up here (a failed run, a
 * skipped one, a release no semantics models, a match, a difference, a
 * non-deterministic run), including the rerun loop with a fake kernel side.
 * The real kernels are check_compare's and check_guest's.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "xval.h"

/* ---- helpers ------------------------------------------------------------------ */

/* 16 pages in two groups of 8 equal ones: merged into two KSM pages at scan 2. */
static const char groups_wl[] = "[global]\nscans = 3\n[region a]\npages = 16\nfill = groups\n"
				"groups = 8x1,8x2\n";

/* The same with a time stop: not deterministic. */
static const char timed_wl[] = "[global]\ntime = 2s\n[region a]\npages = 16\nfill = groups\n"
			       "groups = 8x1,8x2\n";

static struct workload *parse(const char *text)
{
	struct workload *wl;
	struct wl_error err;

	ck_assert_msg(wl_parse_buffer(text, strlen(text), "t.wl", &wl, &err) == 0, "%s", err.text);
	return wl;
}

/* A trace whose only content is the kernel release it claims to be from. */
static struct trace *trace_from(const char *release)
{
	struct trace *t = trace_new("kernel", 0, NULL);

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(trace_set_info(t, "t.wl", release, "checksum", false), 0);
	return t;
}

/*
 * A kernel side as the backend would hand it back: the simulator's run of
 * @wl in @semantics, relabelled as measured on Linux @release.
 */
static struct xval_side kernel_side(const struct workload *wl, enum wl_kernel semantics,
				    const char *release)
{
	struct xval_side side;
	char err[256];

	ck_assert_msg(xval_run_sim(wl, semantics, true, NULL, &side, err, sizeof(err)) == 0, "%s",
		      err);
	strcpy(side.trace->source, "kernel");
	ck_assert_int_eq(trace_set_info(side.trace, wl->path, release, "checksum", false), 0);
	return side;
}

static struct xval_guest_run guest_run(int status, const char *message, struct xval_side side)
{
	struct xval_guest_run run = { .status = status, .side = side };

	snprintf(run.message, sizeof(run.message), "%s", message);
	return run;
}

/* The row of scan @scan in @t. */
static struct trace_row *row_of(struct trace *t, uint64_t scan)
{
	for (size_t i = 0; i < t->nrows; i++)
		if (t->row[i].kind == TRACE_ROW_SCAN && t->row[i].scan == scan)
			return &t->row[i];
	ck_abort_msg("no row for scan %llu", (unsigned long long)scan);
	return NULL;
}

static uint64_t last_scan(const struct trace *t)
{
	return t->row[t->nrows - 1].scan;
}

/* Notes, joined by newlines. */
struct notes {
	char text[2048];
};

static void keep_note(const char *note, void *arg)
{
	struct notes *n = arg;
	size_t len = strlen(n->text);

	snprintf(n->text + len, sizeof(n->text) - len, "%s\n", note);
}

/*
 * xval_follow of @wl after @run (its side taken), partitions captured and
 * compared where the workload is deterministic, notes into @notes.
 */
static enum xval_verdict follow(const struct workload *wl, struct xval_guest_run *run,
				struct notes *notes, struct xval_result *res)
{
	struct xval_options opt;

	xval_options_init(&opt);
	opt.pages = wl->deterministic;
	opt.note = keep_note;
	opt.note_arg = notes;
	return xval_follow(wl, run, &opt, res);
}

/* ---- semantics ------------------------------------------------------------------ */

START_TEST(semantics_follow_the_release)
{
	static const struct {
		const char *release;
		enum wl_kernel kernel;
	} known[] = {
		{ "6.18.44-fc-v1045", WL_KERNEL_6_18 },
		{ "6.1.0-28-amd64", WL_KERNEL_6_1 },
		{ "6.10.3", WL_KERNEL_6_10 },
	};
	enum wl_kernel k;
	char why[200];

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		struct trace *t = trace_from(known[i].release);

		ck_assert_int_eq(xval_semantics(t, &k, why, sizeof(why)), 0);
		ck_assert_int_eq(k, known[i].kernel);
		trace_free(t);
	}
	{
		struct trace *t = trace_from("5.15.0-91-generic");

		ck_assert_int_eq(xval_semantics(t, &k, why, sizeof(why)), -1);
		ck_assert_ptr_nonnull(strstr(why, "no semantics for Linux 5.15.0-91-generic"));
		trace_free(t);
	}
	ck_assert_int_eq(xval_semantics(NULL, &k, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "cannot read a kernel version in ''");
}
END_TEST

/* ---- the rerun classifier -------------------------------------------------------------- */

/* Whether @kernel, compared with @sim, caught up by its last scan. */
static bool caught_up(const struct workload *wl, const struct xval_side *sim,
		      const struct xval_side *kernel)
{
	struct cmp_report rep;
	bool yes;

	ck_assert_int_eq(xval_compare(wl, sim, kernel, &rep), 0);
	yes = xval_caught_up(&rep, sim->trace);
	cmp_report_free(&rep);
	return yes;
}

/* Page 15 (second group) maps the first group's frame after the last scan. */
static void merge_page_15_elsewhere(struct xval_side *kernel)
{
	uint64_t last = last_scan(kernel->trace);

	for (size_t i = 0; i < kernel->npages; i++)
		if (kernel->pages[i].scan == last && kernel->pages[i].page == 15)
			kernel->pages[i].frame = kernel->pages[i - 15].frame;
}

START_TEST(only_a_run_that_caught_up_is_run_again)
{
	struct workload *wl = parse(groups_wl);
	struct xval_side sim = kernel_side(wl, WL_KERNEL_6_18, "6.18.44");
	struct xval_side kernel = kernel_side(wl, WL_KERNEL_6_18, "6.18.44");
	uint64_t last = last_scan(kernel.trace);
	struct trace_row *at_2 = row_of(kernel.trace, 2), *at_last = row_of(kernel.trace, last);

	ck_assert_uint_gt(last, 2);
	ck_assert(!caught_up(wl, &sim, &kernel)); /* nothing differs: nothing to rerun */
	at_2->counter[TRACE_PAGES_SHARING] -= 3; /* late at scan 2, caught up by the last */
	ck_assert(caught_up(wl, &sim, &kernel));
	merge_page_15_elsewhere(&kernel); /* and into another page at the end */
	ck_assert(caught_up(wl, &sim, &kernel));
	at_last->counter[TRACE_PAGES_SHARING] -= 1; /* still behind at the end */
	ck_assert(!caught_up(wl, &sim, &kernel));
	at_last->counter[TRACE_PAGES_SHARING] += 1;
	at_last->proc[0].field[TRACE_KSM_MERGING_PAGES] -= 1; /* a process behind at the end */
	ck_assert(!caught_up(wl, &sim, &kernel));
	at_last->proc[0].field[TRACE_KSM_MERGING_PAGES] += 1;
	kernel.trace->nrows--; /* the last scan missing */
	ck_assert(!caught_up(wl, &sim, &kernel));
	kernel.trace->nrows++;
	ck_assert(caught_up(wl, &sim, &kernel));
	xval_side_free(&sim);
	xval_side_free(&kernel);
	wl_free(wl);
}
END_TEST

/* ---- comparing two sides -------------------------------------------------------- */

START_TEST(identical_sides_compare_every_scan_and_partition)
{
	struct workload *wl = parse(groups_wl);
	struct xval_side sim, kernel = kernel_side(wl, WL_KERNEL_6_18, "6.18.44");
	struct cmp_report rep;
	char err[256];

	ck_assert_int_eq(xval_run_sim(wl, WL_KERNEL_6_18, true, NULL, &sim, err, sizeof(err)), 0);
	ck_assert_int_eq(xval_compare(wl, &sim, &kernel, &rep), 0);
	ck_assert(cmp_report_equal(&rep));
	ck_assert_uint_eq(rep.rows_compared, sim.trace->nrows);
	ck_assert_uint_eq(rep.partitions_compared, sim.trace->nrows);
	ck_assert_uint_eq(rep.skip_counters, 0);
	/* every page of the region at every scan row, two KSM pages in the end */
	ck_assert_uint_eq(sim.npages, 16 * sim.trace->nrows);
	ck_assert_int_eq(row_of(sim.trace, last_scan(sim.trace))->counter[TRACE_PAGES_SHARED], 2);
	cmp_report_free(&rep);
	xval_side_free(&sim);
	xval_side_free(&kernel);
	wl_free(wl);
}
END_TEST

START_TEST(a_page_merged_elsewhere_is_a_partition_difference)
{
	struct workload *wl = parse(groups_wl);
	struct xval_side sim, kernel = kernel_side(wl, WL_KERNEL_6_18, "6.18.44");
	uint64_t last = last_scan(kernel.trace);
	struct cmp_report rep;
	char err[256];

	ck_assert_int_eq(xval_run_sim(wl, WL_KERNEL_6_18, true, NULL, &sim, err, sizeof(err)), 0);
	merge_page_15_elsewhere(&kernel);
	ck_assert_int_eq(xval_compare(wl, &sim, &kernel, &rep), 0);
	ck_assert(!cmp_report_equal(&rep));
	ck_assert_uint_eq(rep.ndiffs, 1);
	ck_assert_uint_eq(rep.diff[0].scan, last);
	ck_assert_str_eq(rep.diff[0].what, "partition");
	ck_assert_str_eq(rep.diff[0].detail, "main/a page 15 shares a page with main/a page 0 "
					     "on one side only");
	cmp_report_free(&rep);
	xval_side_free(&sim);
	xval_side_free(&kernel);
	wl_free(wl);
}
END_TEST

START_TEST(what_the_kernel_lacks_is_not_compared)
{
	struct workload *wl = parse(groups_wl);
	struct xval_side sim, kernel = kernel_side(wl, WL_KERNEL_6_1, "6.1.0-28-amd64");
	struct cmp_report rep;
	char err[256];

	ck_assert_int_eq(xval_run_sim(wl, WL_KERNEL_6_1, true, NULL, &sim, err, sizeof(err)), 0);
	/* 6.1 has no pages_scanned: whatever the kernel side says of it counts not */
	for (size_t i = 0; i < kernel.trace->nrows; i++)
		kernel.trace->row[i].counter[TRACE_PAGES_SCANNED] = 7 * (int64_t)i;
	ck_assert_int_eq(xval_compare(wl, &sim, &kernel, &rep), 0);
	ck_assert(cmp_report_equal(&rep));
	ck_assert((rep.skip_counters >> TRACE_PAGES_SCANNED) & 1);
	ck_assert((rep.skip_counters >> TRACE_GENERAL_PROFIT) & 1);
	ck_assert(!((rep.skip_counters >> TRACE_PAGES_SHARING) & 1));
	ck_assert((rep.skip_fields >> TRACE_KSM_PROCESS_PROFIT) & 1);
	cmp_report_free(&rep);
	/* on a 6.18 kernel it is compared */
	ck_assert_int_eq(trace_set_info(kernel.trace, wl->path, "6.18.44", "checksum", false), 0);
	ck_assert_int_eq(xval_compare(wl, &sim, &kernel, &rep), 0);
	ck_assert(!cmp_report_equal(&rep));
	ck_assert_str_eq(rep.diff[0].what, "pages_scanned");
	cmp_report_free(&rep);
	xval_side_free(&sim);
	xval_side_free(&kernel);
	wl_free(wl);
}
END_TEST

/* ---- results from made-up kernel sides ------------------------------------------- */

START_TEST(a_failed_kernel_run_is_reported_and_nothing_else_runs)
{
	struct workload *wl = parse(groups_wl);
	struct xval_guest_run run = guest_run(KB_FAILED, "the guest panicked",
					      (struct xval_side){ .trace = NULL });
	struct xval_result res;
	struct notes notes = { "" };

	ck_assert_int_eq(follow(wl, &run, &notes, &res), XVAL_FAILED);
	ck_assert_int_eq(res.failed, XVAL_STEP_KERNEL);
	ck_assert_int_eq(res.status, KB_FAILED);
	ck_assert_str_eq(res.kernel_message, "the guest panicked");
	ck_assert_ptr_null(res.sim.trace);
	ck_assert_str_eq(notes.text, "");
	xval_result_free(&res);
	wl_free(wl);
}
END_TEST

START_TEST(a_skipped_kernel_side_leaves_the_simulator_alone)
{
	struct workload *wl = parse(groups_wl);
	struct xval_guest_run run = guest_run(KB_SKIPPED, "t.wl:4: no NUMA node 1",
					      (struct xval_side){ .trace = NULL });
	struct xval_result res;
	struct notes notes = { "" };

	ck_assert_int_eq(follow(wl, &run, &notes, &res), XVAL_SIM_ONLY);
	ck_assert_int_eq(res.semantics, wl->kernel);
	ck_assert_str_eq(res.kernel_message, "t.wl:4: no NUMA node 1");
	ck_assert_str_eq(notes.text, ""); /* no kernel ran: nothing to follow */
	ck_assert_ptr_nonnull(res.sim.trace);
	ck_assert_str_eq(res.sim.trace->kernel, "6.18");
	ck_assert_uint_gt(res.sim.npages, 0);
	xval_result_free(&res);
	wl_free(wl);
}
END_TEST

START_TEST(a_release_no_semantics_models_fails_before_the_simulator)
{
	struct workload *wl = parse(groups_wl);
	struct xval_guest_run run = guest_run(KB_OK, "", kernel_side(wl, WL_KERNEL_6_18, "4.19.0"));
	struct xval_result res;
	struct notes notes = { "" };

	ck_assert_int_eq(follow(wl, &run, &notes, &res), XVAL_FAILED);
	ck_assert_int_eq(res.failed, XVAL_STEP_SEMANTICS);
	ck_assert_ptr_nonnull(strstr(res.why, "no semantics for Linux 4.19.0"));
	ck_assert_ptr_null(res.sim.trace);
	ck_assert_ptr_nonnull(res.kernel.trace); /* taken from the run */
	ck_assert_ptr_null(run.side.trace);
	xval_result_free(&res);
	wl_free(wl);
}
END_TEST

START_TEST(the_simulator_follows_the_kernel_that_ran)
{
	struct workload *wl = parse(groups_wl);
	struct xval_guest_run run =
		guest_run(KB_OK, "", kernel_side(wl, WL_KERNEL_6_1, "6.1.0-28-amd64"));
	struct xval_result res;
	struct notes notes = { "" };

	ck_assert_int_eq(follow(wl, &run, &notes, &res), XVAL_MATCH);
	ck_assert_int_eq(res.semantics, WL_KERNEL_6_1);
	ck_assert_str_eq(res.sim.trace->kernel, "6.1");
	ck_assert_str_eq(notes.text, "the kernel that ran is Linux 6.1.0-28-amd64: the simulator "
				     "follows kernel = 6.1 (the workload says 6.18)\n");
	ck_assert_uint_eq(res.report.partitions_compared, res.sim.trace->nrows);
	ck_assert_uint_eq(res.kernel_runs, 1);
	xval_result_free(&res);
	wl_free(wl);
}
END_TEST

START_TEST(a_difference_is_the_verdict)
{
	struct workload *wl = parse(groups_wl);
	struct xval_guest_run run = guest_run(KB_OK, "", kernel_side(wl, WL_KERNEL_6_18, "6.18.44"));
	struct xval_result res;
	struct notes notes = { "" };

	row_of(run.side.trace, last_scan(run.side.trace))->counter[TRACE_PAGES_SHARED] = 3;
	ck_assert_int_eq(follow(wl, &run, &notes, &res), XVAL_DIFFERS);
	ck_assert_str_eq(notes.text, ""); /* same semantics, deterministic: nothing to say */
	ck_assert_str_eq(res.report.diff[0].what, "pages_shared");
	ck_assert_int_eq(res.report.diff[0].a, 2);
	ck_assert_int_eq(res.report.diff[0].b, 3);
	ck_assert(!xval_caught_up(&res.report, res.sim.trace));
	xval_result_free(&res);
	wl_free(wl);
}
END_TEST

START_TEST(a_timed_run_is_compared_within_the_tolerance)
{
	struct workload *wl = parse(timed_wl);
	struct xval_guest_run run = guest_run(KB_OK, "", kernel_side(wl, WL_KERNEL_6_18, "6.18.44"));
	struct xval_result res;
	struct notes notes = { "" };
	struct trace_row *last;

	ck_assert(!wl->deterministic);
	/* one scan fewer on the kernel's side (put back before it is freed), and a
	   fifth more pages_sharing at its last */
	run.side.trace->nrows--;
	last = row_of(run.side.trace, last_scan(run.side.trace));
	ck_assert_int_gt(last->counter[TRACE_PAGES_SHARING], 5);
	last->counter[TRACE_PAGES_SHARING] += last->counter[TRACE_PAGES_SHARING] / 5;
	ck_assert_int_eq(follow(wl, &run, &notes, &res), XVAL_WITHIN);
	ck_assert_uint_eq(res.report.partitions_compared, 0);
	ck_assert_uint_eq(res.report.rows_missing, 0);
	ck_assert_str_eq(notes.text, "t.wl is not deterministic (continuous writers or a time "
				     "stop): counters compared within 25%, the scans both runs "
				     "have, no page partition\n");
	res.kernel.trace->nrows++;
	xval_result_free(&res);
	wl_free(wl);
}
END_TEST

/* ---- the rerun loop, with a kernel side made up here ------------------------------ */

/* What the fake kernel side answers on its runs 1, 2, ... */
enum fake_run { LATE_AT_SCAN_2, BEHIND_AT_THE_END, LATE_RUNNER, MATCHES, SKIPPED };

struct fake_kernel {
	const enum fake_run *answers;
	size_t nanswers, runs;
	unsigned reruns; /* times the rerun callback was called */
};

static int fake_kernel(const struct workload *wl, bool pages, struct xval_side *out, char *msg,
		       size_t msglen, void *arg)
{
	struct fake_kernel *k = arg;
	enum fake_run answer = k->answers[k->runs < k->nanswers ? k->runs : k->nanswers - 1];

	ck_assert(pages);
	k->runs++;
	if (answer == SKIPPED) {
		snprintf(msg, msglen, "another backend holds the lock");
		memset(out, 0, sizeof(*out));
		return KB_SKIPPED;
	}
	*out = kernel_side(wl, WL_KERNEL_6_18, "6.18.44");
	if (answer == LATE_AT_SCAN_2)
		row_of(out->trace, 2)->counter[TRACE_PAGES_SHARING] -= 1;
	if (answer == BEHIND_AT_THE_END || answer == LATE_RUNNER)
		row_of(out->trace, last_scan(out->trace))->counter[TRACE_PAGES_SHARING] -= 1;
	if (answer == LATE_RUNNER)
		out->invalid_rows = 1; /* the runner saw two scans end at once */
	return KB_OK;
}

static void count_rerun(const struct xval_result *res, void *arg)
{
	struct fake_kernel *k = arg;

	ck_assert_int_eq(res->verdict, XVAL_DIFFERS);
	ck_assert_uint_eq(res->kernel_runs, k->runs);
	k->reruns++;
}

/* xval_run of groups_wl with @attempts against the fake's @answers. */
static enum xval_verdict run_against(const enum fake_run *answers, size_t nanswers,
				     unsigned attempts, struct fake_kernel *k,
				     struct xval_result *res)
{
	struct workload *wl = parse(groups_wl);
	struct xval_options opt;
	enum xval_verdict v;

	*k = (struct fake_kernel){ .answers = answers, .nanswers = nanswers };
	xval_options_init(&opt);
	opt.pages = true;
	opt.attempts = attempts;
	opt.kernel = fake_kernel;
	opt.kernel_arg = k;
	opt.rerun = count_rerun;
	opt.rerun_arg = k;
	v = xval_run(wl, &opt, res);
	wl_free(wl);
	return v;
}

START_TEST(a_run_that_caught_up_runs_again_until_it_matches)
{
	static const enum fake_run answers[] = { LATE_AT_SCAN_2, MATCHES };
	struct fake_kernel k;
	struct xval_result res;

	ck_assert_int_eq(run_against(answers, 2, 3, &k, &res), XVAL_MATCH);
	ck_assert_uint_eq(res.kernel_runs, 2);
	ck_assert_uint_eq(k.reruns, 1);
	ck_assert(cmp_report_equal(&res.report));
	xval_result_free(&res);
	/* one attempt allowed: the first difference stands */
	ck_assert_int_eq(run_against(answers, 2, 1, &k, &res), XVAL_DIFFERS);
	ck_assert_uint_eq(res.kernel_runs, 1);
	ck_assert_uint_eq(k.reruns, 0);
	ck_assert_uint_eq(res.report.diff[0].scan, 2);
	xval_result_free(&res);
}
END_TEST

START_TEST(a_run_behind_at_the_end_is_not_run_again)
{
	static const enum fake_run answers[] = { BEHIND_AT_THE_END, MATCHES };
	struct fake_kernel k;
	struct xval_result res;

	ck_assert_int_eq(run_against(answers, 2, 3, &k, &res), XVAL_DIFFERS);
	ck_assert_uint_eq(res.kernel_runs, 1);
	ck_assert_uint_eq(k.reruns, 0);
	xval_result_free(&res);
}
END_TEST

START_TEST(a_run_a_late_runner_spoiled_runs_again)
{
	static const enum fake_run answers[] = { LATE_RUNNER, MATCHES };
	struct fake_kernel k;
	struct xval_result res;

	/* behind at the end, which alone is no reason; its invalid rows are */
	ck_assert_int_eq(run_against(answers, 2, 3, &k, &res), XVAL_MATCH);
	ck_assert_uint_eq(res.kernel_runs, 2);
	ck_assert_uint_eq(k.reruns, 1);
	xval_result_free(&res);
	ck_assert_int_eq(run_against(answers, 2, 1, &k, &res), XVAL_DIFFERS);
	ck_assert_uint_eq(res.kernel_runs, 1);
	ck_assert_uint_eq(res.kernel.invalid_rows, 1);
	xval_result_free(&res);
}
END_TEST

START_TEST(attempts_bound_the_reruns)
{
	static const enum fake_run late[] = { LATE_AT_SCAN_2 };
	static const enum fake_run then_skipped[] = { LATE_AT_SCAN_2, SKIPPED };
	struct fake_kernel k;
	struct xval_result res;

	ck_assert_int_eq(run_against(late, 1, 3, &k, &res), XVAL_DIFFERS);
	ck_assert_uint_eq(res.kernel_runs, 3);
	ck_assert_uint_eq(k.runs, 3);
	ck_assert_uint_eq(k.reruns, 2);
	ck_assert(xval_caught_up(&res.report, res.sim.trace));
	xval_result_free(&res);
	ck_assert_int_eq(run_against(then_skipped, 2, 3, &k, &res), XVAL_SIM_ONLY);
	ck_assert_uint_eq(res.kernel_runs, 2);
	ck_assert_str_eq(res.kernel_message, "another backend holds the lock");
	xval_result_free(&res);
}
END_TEST

/* ---- names ------------------------------------------------------------------------ */

START_TEST(names_are_the_workloads_in_order)
{
	struct workload *wl = parse("[global]\nscans = 2\n[region a]\npages = 1\nfill = zero\n"
				    "[region b]\npages = 1\nfill = zero\n");
	struct trace_page_names names;

	ck_assert_int_eq(xval_names(wl, &names), 0);
	ck_assert_uint_eq(names.nprocs, wl->nprocs);
	ck_assert_str_eq(names.proc[0], "main");
	ck_assert_uint_eq(names.nregions, 2);
	ck_assert_str_eq(names.region[0], "a");
	ck_assert_str_eq(names.region[1], "b");
	xval_names_free(&names);
	ck_assert_ptr_null(names.proc);
	wl_free(wl);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("xval");
	TCase *tc = tcase_create("pieces");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, semantics_follow_the_release);
	tcase_add_test(tc, only_a_run_that_caught_up_is_run_again);
	tcase_add_test(tc, identical_sides_compare_every_scan_and_partition);
	tcase_add_test(tc, a_page_merged_elsewhere_is_a_partition_difference);
	tcase_add_test(tc, what_the_kernel_lacks_is_not_compared);
	tcase_add_test(tc, names_are_the_workloads_in_order);
	suite_add_tcase(s, tc);
	tc = tcase_create("results");
	tcase_add_test(tc, a_failed_kernel_run_is_reported_and_nothing_else_runs);
	tcase_add_test(tc, a_skipped_kernel_side_leaves_the_simulator_alone);
	tcase_add_test(tc, a_release_no_semantics_models_fails_before_the_simulator);
	tcase_add_test(tc, the_simulator_follows_the_kernel_that_ran);
	tcase_add_test(tc, a_difference_is_the_verdict);
	tcase_add_test(tc, a_timed_run_is_compared_within_the_tolerance);
	suite_add_tcase(s, tc);
	tc = tcase_create("reruns");
	tcase_add_test(tc, a_run_that_caught_up_runs_again_until_it_matches);
	tcase_add_test(tc, a_run_behind_at_the_end_is_not_run_again);
	tcase_add_test(tc, a_run_a_late_runner_spoiled_runs_again);
	tcase_add_test(tc, attempts_bound_the_reruns);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
