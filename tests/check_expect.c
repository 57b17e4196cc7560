/*
 * check_expect.c - tests of compare/expect.c: [expect] sections judged by a
 * trace and a page partition. Every comparison against real simulator runs
 * (which rows they read, after-scan:N and end), ksm_stat fields by process,
 * duplicates (KSM's zero page as one frame, unexposed frames left out), a
 * store's errno, checks the kernel that ran cannot make (not applicable,
 * never failed), a row the run never reached, and the reports' wording.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "sim_driver.h"

static struct workload *parse(const char *text)
{
	struct workload *wl;
	struct wl_error err;

	ck_assert_msg(wl_parse_buffer(text, strlen(text), "t.wl", &wl, &err) == 0, "%s", err.text);
	return wl;
}

/* @wl on the simulator, with its partition at every scan row. */
struct run {
	struct trace *trace;
	struct sim_capture pages;
};

static struct run simulate(const struct workload *wl)
{
	struct run r = { .pages = { .wl = wl } };
	struct sim_run_options opt = { .scan_hook = sim_capture_pages, .hook_arg = &r.pages };
	char err[256];

	ck_assert_msg(sim_run_workload(wl, &opt, &r.trace, err, sizeof(err)) == 0, "%s", err);
	ck_assert(!r.pages.oom);
	return r;
}

static void run_free(struct run *r)
{
	trace_free(r->trace);
	free(r->pages.page);
}

static struct expect_report judge(const struct workload *wl, const struct run *r)
{
	struct expect_report rep;

	ck_assert_int_eq(expect_evaluate(wl, r->trace, r->pages.page, r->pages.n, &rep), 0);
	ck_assert_uint_eq(rep.n, wl->nexpects);
	return rep;
}

/* 512 identical pages (2 MiB), merged after scan 2, unmerged after scan 3. */
#define MERGE_THEN_UNMERGE                                                                    \
	"[global]\nscans = 3\npages_to_scan = 5000\n"                                          \
	"[region map]\nsize = 2m\nfill = same\nvalue = 0x4f4f4f4f4f4f4f4f\n"                   \
	"[event unmerge]\nat = after-scan:2\naction = unmerge\nregion = map\n"

START_TEST(comparisons_read_the_row_they_name)
{
	struct workload *wl = parse(MERGE_THEN_UNMERGE
		"[expect eq]\nat = after-scan:2\npages_shared = 2\npages_sharing = 510\n"
		"[expect ops]\nat = after-scan:2\npages_sharing != 0\npages_sharing > 509\n"
		"pages_sharing >= 510\npages_sharing < 511\npages_sharing <= 510\n"
		"general_profit > 0\n"
		"[expect before]\nat = after-scan:1\npages_volatile = 512\npages_shared = 0\n"
		"[expect end]\nat = end\npages_sharing = 0\nmain.ksm_merging_pages = 0\n"
		"[expect wrong]\nat = after-scan:2\npages_sharing > 510\npages_shared = 2\n");
	struct run r = simulate(wl);
	struct expect_report rep = judge(wl, &r);

	ck_assert_int_eq(rep.result[0].verdict, EXPECT_PASS);
	ck_assert_int_eq(rep.result[1].verdict, EXPECT_PASS);
	ck_assert_int_eq(rep.result[2].verdict, EXPECT_PASS);
	ck_assert_uint_eq(rep.result[2].scan, 1);
	ck_assert_int_eq(rep.result[3].verdict, EXPECT_PASS);
	ck_assert_uint_eq(rep.result[3].scan, 3);
	/* one failing check fails the expectation; the others keep their verdicts */
	ck_assert_int_eq(rep.result[4].verdict, EXPECT_FAIL);
	ck_assert_int_eq(rep.result[4].check[0].verdict, EXPECT_FAIL);
	ck_assert(rep.result[4].check[0].have_value);
	ck_assert_int_eq(rep.result[4].check[0].got, 510);
	ck_assert_int_eq(rep.result[4].check[1].verdict, EXPECT_PASS);
	ck_assert_uint_eq(rep.passed, 4);
	ck_assert_uint_eq(rep.failed, 1);
	ck_assert_str_eq(rep.kernel, "6.18");
	expect_report_free(&rep);
	run_free(&r);
	wl_free(wl);
}
END_TEST

/* ksm_functional_tests' range_maps_duplicates(), on the partition. */
START_TEST(duplicates_count_the_pages_sharing_a_frame)
{
	struct workload *wl = parse(MERGE_THEN_UNMERGE
		"[region other]\npages = 4\nfill = unique\n"
		"[expect merged]\nat = after-scan:2\nregion = map\nduplicates = 512\n"
		"[expect unique]\nat = after-scan:2\nregion = other\nduplicates = none\n"
		"[expect apart]\nat = end\nregion = map\nduplicates = none\n");
	struct run r = simulate(wl);
	struct expect_report rep = judge(wl, &r);

	ck_assert_int_eq(rep.result[0].verdict, EXPECT_PASS);
	ck_assert_int_eq(rep.result[1].verdict, EXPECT_PASS);
	ck_assert_int_eq(rep.result[2].verdict, EXPECT_PASS);
	expect_report_free(&rep);
	/* without a partition a duplicates check cannot pass */
	ck_assert(expect_needs_pages(wl));
	ck_assert_int_eq(expect_evaluate(wl, r.trace, NULL, 0, &rep), 0);
	ck_assert_int_eq(rep.result[0].verdict, EXPECT_FAIL);
	ck_assert_ptr_nonnull(strstr(rep.result[0].check[0].why, "no page partition"));
	expect_report_free(&rep);
	run_free(&r);
	wl_free(wl);
}
END_TEST

/* KSM's zero page is one frame: zero-merged pages are duplicates. */
START_TEST(zero_pages_are_one_frame)
{
	struct workload *wl = parse("[global]\nscans = 2\nuse_zero_pages = 1\n"
				    "[region z]\npages = 8\nfill = zero\n"
				    "[expect zeros]\nat = end\nregion = z\nduplicates = 8\n"
				    "main.ksm_zero_pages = 8\nksm_zero_pages = 8\n");
	struct run r = simulate(wl);
	struct expect_report rep = judge(wl, &r);

	ck_assert_int_eq(rep.result[0].verdict, EXPECT_PASS);
	expect_report_free(&rep);
	/* a frame the kernel did not expose (pfn 0) is left out */
	for (size_t i = 0; i < r.pages.n; i++)
		r.pages.page[i].flags &= ~TRACE_PAGE_ZERO;
	ck_assert_int_eq(expect_evaluate(wl, r.trace, r.pages.page, r.pages.n, &rep), 0);
	/* the counters come first, duplicates (read after them) last */
	ck_assert_int_eq(rep.result[0].ex->checks[2].kind, WL_CHECK_DUPLICATES);
	ck_assert_int_eq(rep.result[0].check[2].got, 0);
	expect_report_free(&rep);
	run_free(&r);
	wl_free(wl);
}
END_TEST

START_TEST(a_stores_errno_is_checked)
{
	struct workload *wl = parse(MERGE_THEN_UNMERGE
		"[event mps]\nat = after-scan:2\naction = set\nset = max_page_sharing=300\n"
		"expect = any\n"
		"[event mps2]\nat = after-scan:1\naction = set\nset = max_page_sharing=400\n"
		"expect = any\n"
		"[expect busy]\nevent = mps\nerrno = EBUSY\n"
		"[expect idle]\nevent = mps2\nerrno = EBUSY\n");
	struct run r = simulate(wl);
	struct expect_report rep = judge(wl, &r);
	char text[600];

	/* after scan 2 pages are shared: EBUSY; after scan 1 nothing is yet */
	ck_assert_int_eq(rep.result[0].verdict, EXPECT_PASS);
	ck_assert_int_eq(rep.result[0].check[0].got, EBUSY);
	ck_assert_int_eq(rep.result[1].verdict, EXPECT_FAIL);
	ck_assert_str_eq(expect_check_text(wl, &rep.result[1], 0, text, sizeof(text)),
			 "the answer to [event mps2] = EBUSY: it is ok");
	expect_report_free(&rep);
	run_free(&r);
	wl_free(wl);
}
END_TEST

/* A line the kernel that ran lacks is not checked: ksm_merge_any on 6.12. */
START_TEST(what_the_kernel_lacks_does_not_apply)
{
	struct workload *wl = parse(MERGE_THEN_UNMERGE
		"[expect any]\nat = after-scan:2\nmain.ksm_merge_any = 0\n"
		"[expect mixed]\nat = after-scan:2\nmain.ksm_mergeable = 0\npages_shared = 2\n");
	struct run r = simulate(wl);
	struct expect_report rep;

	/* the same run, as if a 6.12 kernel had written it */
	free(r.trace->kernel);
	r.trace->kernel = strdup("6.12.117+deb12-amd64");
	rep = judge(wl, &r);
	ck_assert_str_eq(rep.kernel, "6.12");
	ck_assert_int_eq(rep.result[0].verdict, EXPECT_NOT_APPLICABLE);
	ck_assert_str_eq(rep.result[0].check[0].why,
			 "kernel 6.12 has no ksm_merge_any (it came in 6.14): not checked");
	ck_assert_int_eq(rep.result[1].verdict, EXPECT_PASS);
	ck_assert_int_eq(rep.result[1].check[0].verdict, EXPECT_NOT_APPLICABLE);
	ck_assert_uint_eq(rep.not_applicable, 1);
	ck_assert_uint_eq(rep.failed, 0);
	expect_report_free(&rep);
	run_free(&r);
	wl_free(wl);
}
END_TEST

/*
 * A workload that requires a fact (a selftest of a fix): on a kernel whose
 * row lacks it no check applies, whatever the values, and the report says
 * why; on one that has it the checks are judged as usual.
 */
START_TEST(a_kernel_without_a_required_fact_checks_nothing)
{
	struct workload *wl = parse("[global]\nrequires = fork_resets_counts\nscans = 3\n"
				    "pages_to_scan = 5000\n[region map]\npages = 8\nfill = same\n"
				    "value = 7\n[event fork]\nat = after-scan:2\naction = fork\n"
				    "process = main\nchild = kid\n"
				    "[expect own]\nat = end\nkid.ksm_merging_pages = 8\n"
				    "[expect wrong]\nat = end\npages_shared = 99\n");
	struct run r = simulate(wl);
	struct expect_report rep = judge(wl, &r);

	ck_assert_str_eq(rep.unmet, "");
	ck_assert_int_eq(rep.result[0].verdict, EXPECT_PASS);
	ck_assert_int_eq(rep.result[1].verdict, EXPECT_FAIL);
	expect_report_free(&rep);
	/* the same rows, as if Debian's 6.1 had written them */
	free(r.trace->kernel);
	r.trace->kernel = strdup("6.1.0-57-amd64");
	rep = judge(wl, &r);
	ck_assert_str_eq(rep.unmet, "kernel 6.1 lacks fork_resets_counts (a fork child's ksm_stat "
				    "counts start at zero, the late-2025 fork counter fix): not "
				    "checked");
	for (size_t e = 0; e < 2; e++) {
		ck_assert_int_eq(rep.result[e].verdict, EXPECT_NOT_APPLICABLE);
		ck_assert_str_eq(rep.result[e].check[0].why, rep.unmet);
	}
	ck_assert_uint_eq(rep.not_applicable, 2);
	ck_assert_uint_eq(rep.failed + rep.passed, 0);
	expect_report_free(&rep);
	run_free(&r);
	wl_free(wl);
}
END_TEST

/* A row the run never reached, and a process absent from a row, fail. */
START_TEST(missing_rows_and_processes_fail)
{
	struct workload *wl = parse(MERGE_THEN_UNMERGE
		"[expect late]\nat = after-scan:3\npages_sharing = 0\n"
		"[expect proc]\nat = after-scan:3\nmain.ksm_rmap_items = 0\n");
	struct run r = simulate(wl);
	struct expect_report rep;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	/* cut the trace short: the run "ended" after scan 2 */
	r.trace->nrows = 3;
	rep = judge(wl, &r);
	ck_assert_int_eq(rep.result[0].verdict, EXPECT_FAIL);
	ck_assert_str_eq(rep.result[0].check[0].why,
			 "the run has no row after scan 3 (it ended after scan 2)");
	expect_report_free(&rep);
	r.trace->nrows = 4;
	r.trace->row[3].proc[0].present = false;
	rep = judge(wl, &r);
	ck_assert_int_eq(rep.result[0].verdict, EXPECT_PASS);
	ck_assert_int_eq(rep.result[1].verdict, EXPECT_FAIL);
	ck_assert_str_eq(rep.result[1].check[0].why, "process main is not in that row");
	f = open_memstream(&text, &len);
	expect_write_report(wl, &rep, "ksmkit: ", false, f);
	fclose(f);
	ck_assert_str_eq(text, "ksmkit: t.wl:17: [expect proc] after scan 3: main.ksm_rmap_items "
			       "= 0: process main is not in that row (FAILS)\n");
	free(text);
	expect_report_free(&rep);
	run_free(&r);
	wl_free(wl);
}
END_TEST

/* compare's side-by-side lines name the side that fails. */
START_TEST(both_sides_side_by_side)
{
	struct workload *wl = parse(MERGE_THEN_UNMERGE
		"[expect merged]\nat = after-scan:2\npages_sharing = 510\n");
	struct run a = simulate(wl), b = simulate(wl);
	struct expect_report ra, rb;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	b.trace->row[2].counter[TRACE_PAGES_SHARING] = 509;
	ra = judge(wl, &a);
	rb = judge(wl, &b);
	f = open_memstream(&text, &len);
	expect_write_both(wl, &ra, &rb, "sim", "kernel", f);
	fclose(f);
	ck_assert_str_eq(text, "# expect merged after scan 2: pages_sharing = 510: sim 510, kernel "
			       "509 FAILS on kernel\n# expectations: sim 1 of 1 hold, kernel 0 of 1 "
			       "hold\n");
	free(text);
	expect_report_free(&ra);
	expect_report_free(&rb);
	run_free(&a);
	run_free(&b);
	wl_free(wl);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("expect");
	TCase *tc = tcase_create("expect");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, comparisons_read_the_row_they_name);
	tcase_add_test(tc, duplicates_count_the_pages_sharing_a_frame);
	tcase_add_test(tc, zero_pages_are_one_frame);
	tcase_add_test(tc, a_stores_errno_is_checked);
	tcase_add_test(tc, what_the_kernel_lacks_does_not_apply);
	tcase_add_test(tc, a_kernel_without_a_required_fact_checks_nothing);
	tcase_add_test(tc, missing_rows_and_processes_fail);
	tcase_add_test(tc, both_sides_side_by_side);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
