/*
 * check_sim_memo.c - tests of sim/sim_memo.c: a scan that repeats the last
 * one's unstable tree from memory is not observable. Every workload here
 * and every shipped one runs twice, once walking the tree at every insert
 * (sim_config.walk_every_insert), and the two runs must agree batch by
 * batch (every counter, every process field, simulated time and ksmd's
 * CPU), and at every scan row in the machine's whole state (sim_hash: the
 * tree's links and colours included) and in ksmd's counts of work. The
 * workloads built here make the memo engage (memory at rest, smart scan
 * off) and then break it every way it can break mid-scan: a page of the
 * tree written, an item passed and not re-inserted, a merge with a tree
 * page, per-node trees, THP folios, and user steps between scans.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "sim_runs.h"

/* Run @wl both ways and compare; returns the inserts charged from memory. */
static uint64_t assert_memo_unobservable(const struct workload *wl, const char *what)
{
	static struct scan_marks walked, memo;
	struct trace *a = run_marked(wl, (struct sim_run_options){ .walk_every_insert = true },
				     &walked);
	struct trace *b = run_marked(wl, (struct sim_run_options){ 0 }, &memo);

	ck_assert_uint_eq(walked.memo_inserts, 0);
	assert_same_runs(a, &walked, b, &memo, what);
	trace_free(a);
	trace_free(b);
	return memo.memo_inserts;
}

static struct workload *parse(const char *text)
{
	struct workload *wl;
	struct wl_error e;

	ck_assert_msg(wl_parse_buffer(text, strlen(text), "memo.wl", &wl, &e) == 0, "%s", e.text);
	return wl;
}

static uint64_t check_text(const char *text)
{
	struct workload *wl = parse(text);
	uint64_t inserts = assert_memo_unobservable(wl, text);

	wl_free(wl);
	return inserts;
}

#define AT_REST_FOR(scans) "[global]\nscans = " #scans "\nsmart_scan = 0\nsleep_millisecs = 1\n"
#define AT_REST AT_REST_FOR(8)

/* Unique pages at rest: scans 3 on re-insert every item from memory. */
START_TEST(unique_pages_at_rest_are_inserted_from_memory)
{
	uint64_t n = check_text(AT_REST "pages_to_scan = 300\n"
					"[region a]\npages = 1000\nfill = unique\n");

	/* scan 2 builds the first tree; scans 3-8 repeat it, 1000 items each */
	ck_assert_uint_eq(n, 6 * 1000);
}
END_TEST

/* A writer mid-scan: pages of this scan's tree and of the last one change. */
START_TEST(writes_to_tree_pages_mid_scan_rebuild_the_tree)
{
	uint64_t n = check_text(AT_REST "pages_to_scan = 64\n"
					"[region a]\npages = 2000\nfill = unique\n"
					"[writer w]\nregion = a\npages = random:3\nvalue = fresh\n"
					"when = continuous\nfrom = 4\nuntil = 5\nrate = 300/s\n");

	ck_assert_uint_gt(n, 0);
}
END_TEST

/*
 * A write to a page of the last tree forgets the walk its item remembers,
 * even one that stores the bytes the page already holds (its checksum and
 * its content then stay as they were): every scan from 5 on stops
 * repeating at the first page so rewritten, so fewer inserts come from
 * memory than when the pages are written once, at scan 4.
 */
#define WRITTEN_ONCE AT_REST "pages_to_scan = 100\n"                                       \
	"[region a]\npages = 500\nfill = groups\ngroups = 250x5,250x9\n"                   \
	"[region u]\npages = 500\nfill = unique\n"                                          \
	"[writer w]\nregion = u\npages = every:7\nvalue = 12345\nwhen = after-scan:4\n"

START_TEST(a_rewrite_with_the_same_bytes_forgets_the_walk)
{
	uint64_t once = check_text(WRITTEN_ONCE);
	uint64_t again = check_text(WRITTEN_ONCE "[writer same]\nregion = u\npages = every:7\n"
						 "value = 12345\nwhen = every-scan\nfrom = 5\n");

	ck_assert_uint_gt(again, 0);
	ck_assert_uint_lt(again, once);
}
END_TEST

/* A page written to equal another: the next scan finds it in the tree. */
START_TEST(a_page_becoming_equal_merges_as_when_walking)
{
	uint64_t n = check_text(AT_REST "pages_to_scan = 50\n"
					"[region a]\npages = 300\nfill = unique\n"
					"[region b]\npages = 300\nfill = unique\n"
					"[writer w]\nregion = b\npages = 100-120\nvalue = 77\n"
					"when = continuous\nfrom = 4\nuntil = 4\nrate = 50/s\n");

	ck_assert_uint_gt(n, 0);
}
END_TEST

/* Steps between scans: the next scan walks, the one after repeats it. */
START_TEST(user_steps_between_scans_make_the_next_scan_walk)
{
	uint64_t n = check_text(AT_REST_FOR(10) "pages_to_scan = 1000\n"
					"[region a]\npages = 800\nfill = unique\n"
					"[region b]\npages = 200\nfill = unique\n"
					"[event cut]\nat = after-scan:4\naction = unmap\nregion = a\n"
					"pages = 100-199\n"
					"[event f]\nat = after-scan:6\naction = fork\nprocess = main\n"
					"child = kid\n"
					"[event k]\nat = after-scan:8\naction = set\n"
					"set = pages_to_scan=700\n");

	ck_assert_uint_gt(n, 0);
}
END_TEST

/* Per-node trees, and THP folios (a visit per subpage, one tree each). */
START_TEST(per_node_trees_and_thp_repeat_alike)
{
	ck_assert_uint_gt(check_text(AT_REST "pages_to_scan = 128\nmerge_across_nodes = 0\n"
					     "[region a]\npages = 400\nfill = unique\nnode = 0\n"
					     "[region b]\npages = 400\nfill = unique\nnode = 1\n"
					     "[writer w]\nregion = b\npages = random:2\n"
					     "value = fresh\nwhen = every-scan\nfrom = 5\n"),
			  0);
	ck_assert_uint_gt(check_text(AT_REST "pages_to_scan = 200\n"
					     "[region t]\nsize = 4m\nfill = unique\nthp = always\n"
					     "[writer w]\nregion = t\npages = every:300\n"
					     "value = fresh\nwhen = after-scan:5\n"),
			  0);
}
END_TEST

/* The kernel rows (6.10 and 6.1 search the stable tree first), smart scan on and off. */
START_TEST(every_kernel_row_and_smart_scan_repeat_alike)
{
	static const char *const kernels[] = { "6.18", "6.12", "6.10", "6.1" };
	char text[512];

	for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++) {
		snprintf(text, sizeof(text),
			 "[global]\nkernel = %s\nscans = 9\n%spages_to_scan = 97\n"
			 "[region a]\npages = 600\nfill = groups\ngroups = 300x3,300x0\n"
			 "[region u]\npages = 400\nfill = unique\n"
			 "[writer w]\nregion = u\npages = random:5\nvalue = fresh\n"
			 "when = every-scan\nfrom = 6\n",
			 kernels[k], k == 3 ? "" : k % 2 ? "smart_scan = 1\n" : "smart_scan = 0\n");
		check_text(text);
	}
}
END_TEST

static void memo_unobservable_on(struct workload *wl, const char *path)
{
	assert_memo_unobservable(wl, path);
}

/* Every shipped workload gives the same run either way (sim_runs.h). */
START_TEST(every_shipped_workload_runs_alike)
{
	ck_assert_uint_ge(for_each_shipped_workload(memo_unobservable_on), 40);
}
END_TEST

static Suite *sim_memo_suite(void)
{
	Suite *s = suite_create("sim_memo");
	TCase *tc = tcase_create("memo");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, unique_pages_at_rest_are_inserted_from_memory);
	tcase_add_test(tc, writes_to_tree_pages_mid_scan_rebuild_the_tree);
	tcase_add_test(tc, a_rewrite_with_the_same_bytes_forgets_the_walk);
	tcase_add_test(tc, a_page_becoming_equal_merges_as_when_walking);
	tcase_add_test(tc, user_steps_between_scans_make_the_next_scan_walk);
	tcase_add_test(tc, per_node_trees_and_thp_repeat_alike);
	tcase_add_test(tc, every_kernel_row_and_smart_scan_repeat_alike);
	tcase_add_test(tc, every_shipped_workload_runs_alike);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sim_memo_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
