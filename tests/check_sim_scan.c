/*
 * check_sim_scan.c - tests of sim/sim_scan.c's walk: a run of smart-scan
 * skips taken at once (countdown_skips()) is not observable. Every workload
 * here and every shipped one runs twice, once taking each skip a page at a
 * time (sim_config.skip_page_by_page), and the two runs must agree batch by
 * batch (every counter, every process field, simulated time and ksmd's CPU)
 * and at every scan row in the machine's whole state (sim_hash) and in
 * ksmd's counts of work. The workloads built here make runs of skips and
 * cut them every way a run can end: a KSM page, an item in a tree, the
 * zero page, a page unmapped, discarded or no longer mergeable (a VMA
 * boundary), an item young enough to be visited, the end of a cold batch's
 * first visits, THP folios, per-node trees and the kernels' orders.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sim_runs.h"

/* Run @wl both ways and compare; returns the skips taken in runs. */
static uint64_t assert_bulk_skips_unobservable(const struct workload *wl, const char *what)
{
	static struct scan_marks paged, bulk;
	struct trace *a = run_marked(wl, (struct sim_run_options){ .skip_page_by_page = true },
				     &paged);
	struct trace *b = run_marked(wl, (struct sim_run_options){ 0 }, &bulk);

	ck_assert_uint_eq(paged.bulk_skips, 0);
	assert_same_runs(a, &paged, b, &bulk, what);
	trace_free(a);
	trace_free(b);
	return bulk.bulk_skips;
}

static uint64_t check_text(const char *text)
{
	struct workload *wl;
	struct wl_error e;
	uint64_t skips;

	ck_assert_msg(wl_parse_buffer(text, strlen(text), "scan.wl", &wl, &e) == 0, "%s", e.text);
	skips = assert_bulk_skips_unobservable(wl, text);
	wl_free(wl);
	return skips;
}

/*
 * Nai Xia's experiment, small: every page written between its visits, so
 * nearly every stop is a skip; ksmd sleeps between batches, so each batch
 * starts with its cold visits, which a run of skips crosses.
 */
START_TEST(volatile_pages_skip_in_runs_across_cold_visits)
{
	uint64_t n = check_text("[global]\ntime = 6s\npages_to_scan = 100\nsleep_millisecs = 20\n"
				"[region area]\npages = 2000\nfill = same\n"
				"value = 0x0101010101010101\n"
				"[writer scribble]\nregion = area\npages = all\n"
				"offset = random:4000-4088\nvalue = fresh\nwhen = continuous\n"
				"rate = 20000/s\n");

	ck_assert_uint_gt(n, 10000);
}
END_TEST

/*
 * Runs of unique pages cut by KSM pages, zero pages merged with the zero
 * page, items in the unstable tree, and pages unmapped, discarded, made
 * unmergeable and mergeable again mid-run; busy batches (no sleep).
 */
START_TEST(runs_end_at_ksm_pages_trees_and_vma_boundaries)
{
	char text[4096], *p = text;
	size_t left = sizeof(text);
	int used;

	used = snprintf(p, left, "[global]\nscans = 40\npages_to_scan = 150\nsleep_millisecs = 0\n"
				 "use_zero_pages = 1\n");
	p += used, left -= (size_t)used;
	for (int r = 0; r < 4; r++) { /* a line of groups has room for 30 */
		used = snprintf(p, left, "[region g%d]\nfill = groups\ngroups = ", r);
		p += used, left -= (size_t)used;
		for (int i = 0; i < 30; i++) {
			used = snprintf(p, left, "%s%dx%d", i ? "," : "", (i + r) % 3 + 1,
					i % 5 == 0 ? 0 : i % 2 ? 7 : 100 * r + i);
			p += used, left -= (size_t)used;
		}
		used = snprintf(p, left, "\n");
		p += used, left -= (size_t)used;
	}
	used = snprintf(p, left,
			"[region u]\npages = 800\nfill = unique\n"
			"[writer w]\nregion = u\npages = random:40\nvalue = fresh\nwhen = every-scan\n"
			"until = 11\n"
			"[writer v]\nregion = u\npages = 100-139\nvalue = fresh\nwhen = every-scan\n"
			"from = 12\n"
			"[event cut]\nat = after-scan:12\naction = unmap\nregion = u\npages = 300-349\n"
			"[event off]\nat = after-scan:14\naction = unmerge\nregion = u\n"
			"pages = 500-549\n"
			"[event gone]\nat = after-scan:16\naction = discard\nregion = u\n"
			"pages = 600-629\n"
			"[event on]\nat = after-scan:20\naction = merge\nregion = u\npages = 500-549\n"
			"[event same]\nat = after-scan:24\naction = write\nregion = u\n"
			"pages = 700-719\nvalue = 7\n");
	ck_assert_int_lt(used, (int)left);
	ck_assert_uint_gt(check_text(text), 1000);
}
END_TEST

/* THP folios (a stop per subpage) and per-node trees, some pages at rest. */
START_TEST(thp_and_per_node_trees_skip_alike)
{
	ck_assert_uint_gt(check_text("[global]\nscans = 30\npages_to_scan = 64\n"
				     "merge_across_nodes = 0\n"
				     "[region t]\nsize = 4m\nfill = unique\nthp = always\nnode = 0\n"
				     "[region b]\npages = 500\nfill = unique\nnode = 1\n"
				     "[writer w]\nregion = b\npages = every:3\nvalue = fresh\n"
				     "when = every-scan\n"),
			  1000);
}
END_TEST

/*
 * The kernel rows (6.1 has no smart scan, 6.10 searches the stable tree
 * first), a fork whose child's items are young, and an exit mid-run.
 */
START_TEST(every_kernel_row_forks_and_exits_skip_alike)
{
	static const char *const kernels[] = { "6.18", "6.12", "6.10", "6.1" };
	char text[1024];

	for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++) {
		uint64_t n;

		snprintf(text, sizeof(text),
			 "[global]\nkernel = %s\nscans = 36\npages_to_scan = 97\n"
			 "[region a]\npages = 600\nfill = groups\ngroups = 300x3,300x0\n"
			 "[region u]\npages = 400\nfill = unique\n"
			 "[writer w]\nregion = u\npages = random:5\nvalue = fresh\n"
			 "when = every-scan\nfrom = 6\n"
			 "[event f]\nat = after-scan:10\naction = fork\nprocess = main\n"
			 "child = kid\n"
			 "[event x]\nat = after-scan:25\naction = exit\nprocess = kid\n",
			 kernels[k]);
		n = check_text(text);
		if (k == 3)
			ck_assert_uint_eq(n, 0); /* 6.1: no smart scan, nothing skipped */
		else
			ck_assert_uint_gt(n, 1000);
	}
}
END_TEST

/* The other policies are not a countdown: they skip a page at a time. */
START_TEST(only_the_countdown_skips_in_runs)
{
	ck_assert_uint_eq(check_text("[global]\nscans = 30\nsmart_scan_policy = aligned\n"
				     "[region u]\npages = 400\nfill = unique\n"),
			  0);
	ck_assert_uint_gt(check_text("[global]\nscans = 30\n"
				     "[region u]\npages = 400\nfill = unique\n"),
			  0);
}
END_TEST

/*
 * 64 unique pages, made mergeable a quarter at each of the first four full
 * scans (their countdowns out of phase, so a scan both visits and skips),
 * taking skips a page at a time or not, after @scans full scans.
 */
static struct sim *out_of_phase(bool page_by_page, int scans)
{
	struct sim_config cfg;
	char err[128];
	struct sim *s;
	int mm, area;

	sim_config_default(&cfg);
	cfg.skip_page_by_page = page_by_page;
	s = sim_new(&cfg, err, sizeof(err));
	ck_assert_msg(s != NULL, "%s", err);
	mm = sim_process_new(s);
	area = sim_mmap(s, mm, 64, -1, false, 0);
	ck_assert_int_eq(area, 0);
	for (uint64_t p = 0; p < 64; p++)
		ck_assert_int_eq(sim_fill(s, area, p, 5000 + p), 0);
	ck_assert_int_eq(sim_run_store(s, 1), 0);
	for (uint64_t q = 0; q < 4; q++) {
		ck_assert_int_eq(sim_madvise(s, area, 16 * q, 16, true), 0);
		while (sim_ksmd_step(s))
			;
	}
	while (sim_full_scans(s) < (uint64_t)scans)
		sim_ksmd_step(s);
	return s;
}

/* Step @a and @b alike until both have completed @scans full scans. */
static void step_alike(struct sim *a, struct sim *b, uint64_t scans)
{
	while (sim_full_scans(a) < scans) {
		bool stepped = sim_ksmd_step(a);

		ck_assert_int_eq(stepped, sim_ksmd_step(b));
		ck_assert_uint_eq(sim_full_scans(a), sim_full_scans(b));
	}
}

/*
 * A page made unmergeable between two steps: where it is the page just
 * behind the cursor, the walk then enters another VMA at the cursor's page,
 * where the kernel charges a VMA boundary, though the cursor's item is the
 * next one. (A workload's events come between full scans, where the cursor
 * is at an mm's start: only the step API reaches this.) After every step of
 * a scan, each page in turn.
 */
START_TEST(a_vma_boundary_behind_the_cursor_ends_a_run)
{
	uint64_t bulk = 0;

	for (int scans = 8; scans < 16; scans++) {
		struct sim *a = out_of_phase(true, scans), *b = out_of_phase(false, scans);

		while (sim_full_scans(a) == (uint64_t)scans) {
			ck_assert_int_eq(sim_ksmd_step(a), sim_ksmd_step(b));
			for (int j = 0; j < 64; j++) {
				struct sim *x = sim_clone(a), *y = sim_clone(b);

				ck_assert_int_eq(sim_madvise(x, 0, (uint64_t)j, 1, false), 0);
				ck_assert_int_eq(sim_madvise(y, 0, (uint64_t)j, 1, false), 0);
				step_alike(x, y, (uint64_t)scans + 3);
				ck_assert_msg(sim_equal(x, y), "page %d made unmergeable in scan %d", j,
					      scans + 1);
				bulk += sim_bulk_skips(y);
				sim_free(x);
				sim_free(y);
			}
		}
		sim_free(a);
		sim_free(b);
	}
	ck_assert_uint_gt(bulk, 0);
}
END_TEST

static void bulk_skips_unobservable_on(struct workload *wl, const char *path)
{
	assert_bulk_skips_unobservable(wl, path);
}

/* Every shipped workload gives the same run either way (sim_runs.h). */
START_TEST(every_shipped_workload_runs_alike)
{
	ck_assert_uint_ge(for_each_shipped_workload(bulk_skips_unobservable_on), 40);
}
END_TEST

static Suite *sim_scan_suite(void)
{
	Suite *s = suite_create("sim_scan");
	TCase *tc = tcase_create("bulk skips");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, volatile_pages_skip_in_runs_across_cold_visits);
	tcase_add_test(tc, runs_end_at_ksm_pages_trees_and_vma_boundaries);
	tcase_add_test(tc, thp_and_per_node_trees_skip_alike);
	tcase_add_test(tc, every_kernel_row_forks_and_exits_skip_alike);
	tcase_add_test(tc, only_the_countdown_skips_in_runs);
	tcase_add_test(tc, a_vma_boundary_behind_the_cursor_ends_a_run);
	tcase_add_test(tc, every_shipped_workload_runs_alike);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sim_scan_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
