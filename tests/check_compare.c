/*
 * check_compare.c - tests of compare/ (trace and partition comparison) and
 * the cross-validation itself (compare/xval.h, whose pure parts
 * check_xval.c tests): every deterministic shipped workload, the captures
 * replayed under workloads/captures/ too, run on the
 * simulator and on this machine's kernel must agree exactly, counter by
 * counter, scan by scan, and page by page; a kernel run that caught up by
 * its last scan runs again, at most twice. The kernel part needs root and
 * KSM; without them that test case says why and the program exits 77 after
 * the pure tests pass.
 */
#include <check.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xval.h"
#include "suite_lock.h"

/* --- pure comparisons ---------------------------------------------------- */

static struct trace *make_trace(int64_t sharing_at_2)
{
	const char *names[] = { "main" };
	struct trace *t = trace_new("sim", 1, names);

	for (uint64_t scan = 0; scan <= 2; scan++) {
		struct trace_row *r = trace_append(t, TRACE_ROW_SCAN);

		r->scan = scan;
		r->counter[TRACE_PAGES_SCANNED] = 1000 + 10 * (int64_t)scan;
		r->counter[TRACE_PAGES_SHARING] = scan == 2 ? sharing_at_2 : 0;
		r->proc[0].present = true;
		r->proc[0].field[TRACE_KSM_RMAP_ITEMS] = 10;
	}
	return t;
}

START_TEST(equal_traces_compare_equal)
{
	struct trace *a = make_trace(9), *b = make_trace(9);
	struct cmp_report rep;

	cmp_report_init(&rep);
	ck_assert_int_eq(cmp_traces(a, b, NULL, &rep), 0);
	ck_assert(cmp_report_equal(&rep));
	ck_assert_uint_eq(rep.rows_compared, 3);
	cmp_report_free(&rep);
	trace_free(a);
	trace_free(b);
}
END_TEST

START_TEST(first_divergence_is_reported)
{
	struct trace *a = make_trace(9), *b = make_trace(8);
	struct cmp_report rep;

	b->row[2].proc[0].field[TRACE_KSM_RMAP_ITEMS] = 11;
	cmp_report_init(&rep);
	ck_assert_int_eq(cmp_traces(a, b, NULL, &rep), 0);
	ck_assert(!cmp_report_equal(&rep));
	ck_assert_uint_eq(rep.ndiffs, 2);
	ck_assert_uint_eq(rep.diff[0].scan, 2);
	ck_assert_str_eq(rep.diff[0].what, "pages_sharing");
	ck_assert_int_eq(rep.diff[0].a, 9);
	ck_assert_int_eq(rep.diff[0].b, 8);
	ck_assert_str_eq(rep.diff[1].what, "main.ksm_rmap_items");
	cmp_report_free(&rep);
	trace_free(a);
	trace_free(b);
}
END_TEST

START_TEST(cumulative_counters_compare_as_changes)
{
	/* a kernel that scanned 5000 pages before the run still compares equal */
	struct trace *a = make_trace(9), *b = make_trace(9);
	struct cmp_report rep;

	for (size_t i = 0; i < b->nrows; i++)
		b->row[i].counter[TRACE_PAGES_SCANNED] += 5000;
	cmp_report_init(&rep);
	cmp_traces(a, b, NULL, &rep);
	ck_assert(cmp_report_equal(&rep));
	b->row[2].counter[TRACE_PAGES_SCANNED] += 1;
	cmp_traces(a, b, NULL, &rep);
	ck_assert(!cmp_report_equal(&rep));
	cmp_report_free(&rep);
	trace_free(a);
	trace_free(b);
}
END_TEST

START_TEST(tolerance_and_missing_rows)
{
	struct trace *a = make_trace(100), *b = make_trace(90);
	struct cmp_options within = { .tolerance = 0.2 }, tight = { .tolerance = 0.05 };
	struct cmp_report rep;

	cmp_report_init(&rep);
	cmp_traces(a, b, &within, &rep);
	ck_assert(cmp_report_equal(&rep));
	cmp_traces(a, b, &tight, &rep);
	ck_assert(!cmp_report_equal(&rep));
	cmp_report_free(&rep);
	b->nrows = 2; /* scan 2 missing */
	cmp_report_init(&rep);
	cmp_traces(a, b, NULL, &rep);
	ck_assert_uint_eq(rep.rows_missing, 1);
	cmp_report_free(&rep);
	cmp_report_init(&rep);
	within.ignore_missing_rows = true;
	cmp_traces(a, b, &within, &rep);
	ck_assert(cmp_report_equal(&rep));
	cmp_report_free(&rep);
	b->nrows = 3;
	trace_free(a);
	trace_free(b);
}
END_TEST

START_TEST(partitions_compare_classes_not_frame_ids)
{
	/* pages 0,1 share; 2 alone; 3 is a KSM zero page: same classes, other ids */
	struct trace_page a[] = {
		{ 1, 0, 0, 0, 50, TRACE_PAGE_PRESENT }, { 1, 0, 0, 1, 50, TRACE_PAGE_PRESENT },
		{ 1, 0, 0, 2, 51, TRACE_PAGE_PRESENT },
		{ 1, 0, 0, 3, 0, TRACE_PAGE_PRESENT | TRACE_PAGE_ZERO },
	};
	/* the kernel's side: KSM and THP flags of its own, which are not compared */
	struct trace_page b[] = {
		{ 1, 0, 0, 3, 0, TRACE_PAGE_PRESENT | TRACE_PAGE_ZERO },
		{ 1, 0, 0, 1, 9000, TRACE_PAGE_PRESENT | TRACE_PAGE_KSM },
		{ 1, 0, 0, 0, 9000, TRACE_PAGE_PRESENT | TRACE_PAGE_KSM | TRACE_PAGE_THP },
		{ 1, 0, 0, 2, 7, TRACE_PAGE_PRESENT },
	};
	const char *procs[] = { "main" }, *regions[] = { "buf" };
	const struct trace_page_names names = { procs, 1, regions, 1 };
	struct cmp_report rep;

	cmp_report_init(&rep);
	ck_assert_int_eq(cmp_partitions(a, 4, b, 4, &names, &rep), 0);
	ck_assert(cmp_report_equal(&rep));
	ck_assert_uint_eq(rep.partitions_compared, 1);
	b[3].frame = 9000; /* page 2 now shares with 0 and 1 on one side only */
	ck_assert_int_eq(cmp_partitions(a, 4, b, 4, &names, &rep), 0);
	ck_assert(!cmp_report_equal(&rep));
	ck_assert_str_eq(rep.diff[0].what, "partition");
	ck_assert_str_eq(rep.diff[0].detail,
			 "main/buf page 2 shares a page with main/buf page 0 on one side only");
	cmp_report_free(&rep);
}
END_TEST

/* --- the simulator against the kernel ------------------------------------------------ */

static bool kernel_usable(char *why, size_t len)
{
	if (geteuid() != 0) {
		snprintf(why, len, "not root");
		return false;
	}
	if (access("/sys/kernel/mm/ksm/run", W_OK) != 0) {
		snprintf(why, len, "no writable /sys/kernel/mm/ksm");
		return false;
	}
	return true;
}

/* The differences as the side-by-side table, for a failure message. */
static char *difference_table(const struct xval_result *res)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	cmp_write_table(res->sim.trace, res->kernel.trace, &res->report, "sim", "kernel", f);
	fclose(f);
	return text;
}

/* Why a step of the pipeline failed, for a failure message. */
static const char *why_failed(const struct xval_result *res)
{
	static char text[sizeof(res->kernel_message) + 16];

	switch (res->failed) {
	case XVAL_STEP_KERNEL:
		snprintf(text, sizeof(text), "kernel run: %s", res->kernel_message);
		return text;
	case XVAL_STEP_COMPARE:
		return "out of memory, or the traces name different processes";
	default:
		return res->why;
	}
}

#define KERNEL_ATTEMPTS 3

/* Before another kernel run of a run that caught up by its last row: the log. */
static void log_rerun(const struct xval_result *res, void *arg)
{
	char *text = difference_table(res);

	fprintf(stderr, "%s: kernel run %u differed but caught up by its last scan; "
			"running it again:\n%s", (const char *)arg, res->kernel_runs, text);
	free(text);
}

/*
 * Run @wl on the kernel and the simulator until they match. Only a run
 * that caught up by its last row earns another attempt (logged); any other
 * difference, or one that persists through KERNEL_ATTEMPTS runs, fails with
 * the table.
 */
static void kernel_matches_sim(const char *name, const struct workload *wl)
{
	struct xval_options opt;
	struct xval_result res;
	char *text;

	xval_options_init(&opt);
	opt.pages = true;
	opt.attempts = KERNEL_ATTEMPTS;
	opt.rerun = log_rerun;
	opt.rerun_arg = (void *)name;
	switch (xval_run(wl, &opt, &res)) {
	case XVAL_MATCH:
		break;
	case XVAL_SIM_ONLY:
		fprintf(stderr, "%s: kernel side skipped: %s\n", name, res.kernel_message);
		break;
	case XVAL_FAILED:
		ck_abort_msg("%s: %s", name, why_failed(&res));
		break;
	default:
		text = difference_table(&res);
		ck_abort_msg("%s differs (kernel run %u of at most %d):\n%s", name, res.kernel_runs,
			     KERNEL_ATTEMPTS, text);
	}
	xval_result_free(&res);
}

/* Whether @wl replays a capture in some region. */
static bool replays_capture(const struct workload *wl)
{
	for (size_t i = 0; i < wl->nregions; i++)
		if (wl->regions[i].capture)
			return true;
	return false;
}

/*
 * Compare one shipped workload of directory @sub of workloads/; on a
 * difference, fail with the report. Returns whether it replays a capture.
 */
static bool compare_file(const char *sub, const char *name)
{
	char path[512];
	struct workload *wl;
	struct wl_error werr;
	bool capture;

	snprintf(path, sizeof(path), "%s/workloads/%s%s", SRCDIR, sub, name);
	if (wl_parse_file(path, &wl, &werr) != 0)
		ck_abort_msg("%s", werr.text);
	capture = replays_capture(wl);
	if (wl->deterministic)
		kernel_matches_sim(name, wl);
	wl_free(wl);
	return capture;
}

/* Every .wl of workloads/@sub; how many replay a capture. */
static unsigned compare_directory(const char *sub)
{
	char path[512];
	DIR *dir;
	struct dirent *de;
	unsigned captures = 0;

	snprintf(path, sizeof(path), "%s/workloads/%s", SRCDIR, sub);
	dir = opendir(path);
	ck_assert_ptr_nonnull(dir);
	while ((de = readdir(dir)) != NULL) {
		size_t n = strlen(de->d_name);

		if (n > 3 && strcmp(de->d_name + n - 3, ".wl") == 0)
			captures += compare_file(sub, de->d_name);
	}
	closedir(dir);
	return captures;
}

START_TEST(shipped_deterministic_workloads_match_the_kernel)
{
	compare_directory("");
}
END_TEST

/* The shipped captures (a python3 process, two qemu guests) replay alike. */
START_TEST(shipped_captures_replay_identically_on_the_kernel)
{
	ck_assert_uint_ge(compare_directory("captures/"), 2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("compare");
	TCase *tc = tcase_create("reports");
	SRunner *sr;
	char why[128];
	int failed;
	bool kernel = kernel_usable(why, sizeof(why));

	tcase_add_test(tc, equal_traces_compare_equal);
	tcase_add_test(tc, first_divergence_is_reported);
	tcase_add_test(tc, cumulative_counters_compare_as_changes);
	tcase_add_test(tc, tolerance_and_missing_rows);
	tcase_add_test(tc, partitions_compare_classes_not_frame_ids);
	suite_add_tcase(s, tc);
	if (kernel && lock_kernel_suites() < 0) {
		printf("check_compare: cannot lock the kernel test suites\n");
		return 99;
	}
	if (kernel) {
		tc = tcase_create("kernel");
		tcase_set_timeout(tc, 300);
		tcase_add_test(tc, shipped_deterministic_workloads_match_the_kernel);
		tcase_add_test(tc, shipped_captures_replay_identically_on_the_kernel);
		suite_add_tcase(s, tc);
	}
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (failed)
		return EXIT_FAILURE;
	if (!kernel) {
		printf("SKIP: the kernel comparison needs root and KSM: %s\n", why);
		return 77;
	}
	return EXIT_SUCCESS;
}
