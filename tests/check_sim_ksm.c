/*
 * check_sim_ksm.c - the simulator's KSM semantics, one rule per test, as
 * KSM-SEMANTICS.md states them: the worked example (also page by page through
 * scan 2), stragglers, zero pages, smart scan's schedule, lazy counters after
 * COW, run = 2, merge_across_nodes = 0, the smart-scan policies' schedules, EBUSY on knob stores, fork children,
 * the 6.10 and 6.18 orders, 6.1's missing knobs and counters, registration order, exit, munmap, chains,
 * and what the kernel's selftests do: MADV_DONTNEED, PROT_NONE with forced
 * writes, userfaultfd write-protection, exec and PR_SET_MEMORY_MERGE 0.
 * Each test drives the step API directly (sim.h).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "content.h"
#include "sim.h"

/* A machine with one process holding one region, ready to scan. */
struct fixture {
	struct sim *s;
	int mm, area;
};

static struct sim *new_sim(enum wl_kernel kernel, unsigned nodes)
{
	struct sim_config cfg;
	char err[128];
	struct sim *s;

	sim_config_default(&cfg);
	cfg.kernel = kernel;
	cfg.nr_nodes = nodes;
	s = sim_new(&cfg, err, sizeof(err));
	ck_assert_msg(s != NULL, "%s", err);
	return s;
}

/* @n pages of value @value (0 = the zero page's bytes), madvised, run = 1,
 * on @kernel's semantics. */
static struct fixture identical_pages_on(enum wl_kernel kernel, uint64_t n, uint64_t value,
					 uint64_t max_page_sharing)
{
	struct fixture f;

	f.s = new_sim(kernel, 1);
	ck_assert_int_eq(sim_knob_store(f.s, WL_KNOB_MAX_PAGE_SHARING, max_page_sharing), 0);
	f.mm = sim_process_new(f.s);
	f.area = sim_mmap(f.s, f.mm, n, -1, false, 0);
	ck_assert_int_ge(f.area, 0);
	for (uint64_t p = 0; p < n; p++)
		ck_assert_int_eq(sim_fill(f.s, f.area, p, value), 0);
	ck_assert_int_eq(sim_madvise(f.s, f.area, 0, n, true), 0);
	ck_assert_int_eq(sim_run_store(f.s, 1), 0);
	return f;
}

static struct fixture identical_pages(uint64_t n, uint64_t value, uint64_t max_page_sharing)
{
	return identical_pages_on(WL_KERNEL_6_18, n, value, max_page_sharing);
}

/* Step ksmd until the current full scan ends; returns pages processed. */
static uint64_t full_scan(struct sim *s)
{
	uint64_t n = 0, before = sim_full_scans(s);

	while (sim_ksmd_step(s))
		n++;
	ck_assert_uint_eq(sim_full_scans(s), before + 1);
	return n;
}

static int64_t counter(const struct sim *s, enum trace_counter c)
{
	int64_t v[TRACE_COUNTER_COUNT];

	sim_counters(s, v);
	return v[c];
}

static int64_t proc_field(const struct sim *s, int mm, enum trace_proc_field f)
{
	struct trace_proc_stat st;

	sim_process_stat(s, mm, &st);
	return st.field[f];
}

/* --- batches in bulk ------------------------------------------------------- */

/* One batch the slow way: sim_ksmd_step() page by page up to pages_to_scan. */
static void batch_by_single_steps(struct sim *s)
{
	uint64_t budget = sim_knob(s, WL_KNOB_PAGES_TO_SCAN), n = 0;

	if (!sim_ksmd_batch_begin(s))
		return;
	while (n < budget && sim_ksmd_step(s))
		n++;
	sim_ksmd_batch_end(s, NULL);
}

static void assert_same_machine(const struct sim *a, const struct sim *b)
{
	struct sim_work wa, wb;

	ck_assert(sim_equal(a, b));
	ck_assert_uint_eq(sim_full_scans(a), sim_full_scans(b));
	ck_assert_uint_eq(sim_now_ns(a), sim_now_ns(b));
	ck_assert_uint_eq(sim_ksmd_cpu_ns(a), sim_ksmd_cpu_ns(b));
	sim_work_get(a, &wa);
	sim_work_get(b, &wb);
	ck_assert_mem_eq(&wa, &wb, sizeof(wa));
}

/*
 * sim_ksmd_steps() takes runs of steady pages (stable, mapped to their KSM
 * page) in bulk: the machine it leaves is the one single steps leave, with
 * batches ending inside runs, runs broken by COW writes, a hole punched by
 * munmap (items passed over) and a second process.
 */
START_TEST(bulk_steady_runs_equal_single_steps)
{
	struct fixture f = identical_pages(3000, 42, 16);
	struct sim *single;
	int mm2, area2;

	mm2 = sim_process_new(f.s);
	area2 = sim_mmap(f.s, mm2, 700, -1, false, 0);
	ck_assert_int_ge(area2, 0);
	for (uint64_t p = 0; p < 700; p++)
		ck_assert_int_eq(sim_fill(f.s, area2, p, p % 3 ? 42 : 1000 + p), 0);
	ck_assert_int_eq(sim_madvise(f.s, area2, 0, 700, true), 0);
	ck_assert_int_eq(sim_knob_store(f.s, WL_KNOB_PAGES_TO_SCAN, 333), 0);
	single = sim_clone(f.s);
	ck_assert_ptr_nonnull(single);
	for (int b = 0; b < 60; b++) {
		if (b == 25)
			for (uint64_t p = 100; p < 3000; p += 97) {
				ck_assert_int_eq(sim_write(f.s, f.area, p, 8, 5 + p), 0);
				ck_assert_int_eq(sim_write(single, f.area, p, 8, 5 + p), 0);
			}
		if (b == 40) {
			ck_assert_int_eq(sim_munmap(f.s, f.area, 1500, 200), 0);
			ck_assert_int_eq(sim_munmap(single, f.area, 1500, 200), 0);
		}
		sim_ksmd_batch(f.s);
		batch_by_single_steps(single);
		assert_same_machine(f.s, single);
	}
	ck_assert_int_gt(counter(f.s, TRACE_PAGES_SHARING), 0);
	ck_assert_uint_ge(sim_full_scans(f.s), 4);
	sim_free(single);
	sim_free(f.s);
}
END_TEST

/* --- the worked example ------------------------------------------------- */

START_TEST(worked_example_after_two_scans)
{
	struct fixture f = identical_pages(25600, 42, 256);

	ck_assert_uint_eq(full_scan(f.s), 25600);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_VOLATILE), 25600);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARED), 0);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 0);
	full_scan(f.s);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARED), 100);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 25500);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_UNSHARED), 0);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_VOLATILE), 0);
	ck_assert_int_eq(counter(f.s, TRACE_STABLE_NODE_CHAINS), 1);
	ck_assert_int_eq(counter(f.s, TRACE_STABLE_NODE_DUPS), 100);
	ck_assert_int_eq(counter(f.s, TRACE_FULL_SCANS), 2);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SCANNED), 51200);
	ck_assert_int_eq(counter(f.s, TRACE_GENERAL_PROFIT), 102809600);
	ck_assert_int_eq(proc_field(f.s, f.mm, TRACE_KSM_MERGING_PAGES), 25600);
	ck_assert_int_eq(proc_field(f.s, f.mm, TRACE_KSM_PROCESS_PROFIT), 103219200);
	ck_assert_int_eq(proc_field(f.s, f.mm, TRACE_KSM_RMAP_ITEMS), 25600);
	sim_free(f.s);
}
END_TEST

/* During scan 2, after k pages (q = k / 256, r = k % 256), the formulas hold. */
START_TEST(worked_example_page_by_page)
{
	struct fixture f = identical_pages(25600, 42, 256);
	uint64_t k = 0;

	full_scan(f.s);
	for (uint64_t checkpoint = 1; checkpoint <= 25600; checkpoint += 37) {
		int64_t q, r;

		while (k < checkpoint) {
			ck_assert(sim_ksmd_step(f.s));
			k++;
		}
		q = (int64_t)(k / 256);
		r = (int64_t)(k % 256);
		ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARED), q + (r >= 2));
		ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 255 * q + (r > 1 ? r - 1 : 0));
		ck_assert_int_eq(counter(f.s, TRACE_PAGES_UNSHARED), r == 1);
		ck_assert_int_eq(counter(f.s, TRACE_PAGES_VOLATILE), 25600 - (int64_t)k);
		ck_assert_int_eq(counter(f.s, TRACE_STABLE_NODE_CHAINS), k >= 258);
		if (k >= 258)
			ck_assert_int_eq(counter(f.s, TRACE_STABLE_NODE_DUPS),
					 counter(f.s, TRACE_PAGES_SHARED));
	}
	sim_free(f.s);
}
END_TEST

START_TEST(straggler_when_n_mod_m_is_one)
{
	struct fixture f = identical_pages(257, 9, 256);

	full_scan(f.s);
	full_scan(f.s);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARED), 1);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 255);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_UNSHARED), 1);
	ck_assert_int_eq(counter(f.s, TRACE_STABLE_NODE_CHAINS), 0);
	sim_free(f.s);
}
END_TEST

START_TEST(general_formula_for_n_and_m)
{
	static const uint64_t cases[][2] = { { 10, 4 }, { 1000, 16 }, { 17, 2 }, { 300, 299 } };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t n = cases[i][0], m = cases[i][1], r = n % m;
		struct fixture f = identical_pages(n, 5, m);

		full_scan(f.s);
		full_scan(f.s);
		ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARED), (int64_t)(n / m + (r >= 2)));
		ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING),
				 (int64_t)(n / m * (m - 1) + (r > 1 ? r - 1 : 0)));
		sim_free(f.s);
	}
}
END_TEST

/* --- zero pages ---------------------------------------------------------- */

START_TEST(zero_pages_merge_like_any_content_without_use_zero_pages)
{
	struct fixture f = identical_pages(10, 0, 256);

	full_scan(f.s);
	full_scan(f.s);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARED), 1);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 9);
	ck_assert_int_eq(counter(f.s, TRACE_KSM_ZERO_PAGES), 0);
	sim_free(f.s);
}
END_TEST

START_TEST(use_zero_pages_maps_the_zero_page)
{
	struct fixture f = identical_pages(10, 0, 256);

	ck_assert_int_eq(sim_knob_store(f.s, WL_KNOB_USE_ZERO_PAGES, 1), 0);
	full_scan(f.s);
	full_scan(f.s);
	ck_assert_int_eq(counter(f.s, TRACE_KSM_ZERO_PAGES), 10);
	ck_assert_int_eq(proc_field(f.s, f.mm, TRACE_KSM_ZERO_PAGES_PROC), 10);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARED), 0);
	/* the flagless items count as volatile until the next scan frees them */
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_VOLATILE), 10);
	ck_assert_int_eq(sim_page_frame(f.s, f.area, 3), -1);
	full_scan(f.s);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_VOLATILE), 0);
	ck_assert_int_eq(proc_field(f.s, f.mm, TRACE_KSM_RMAP_ITEMS), 0);
	/* a write to a KSM zero page drops the count at once */
	ck_assert_int_eq(sim_write(f.s, f.area, 3, 0, 1), 0);
	ck_assert_int_eq(counter(f.s, TRACE_KSM_ZERO_PAGES), 9);
	ck_assert_int_eq(counter(f.s, TRACE_GENERAL_PROFIT), 9 * 4096);
	sim_free(f.s);
}
END_TEST

/* --- smart scan ------------------------------------------------------------ */

START_TEST(smart_scan_visits_a_never_merging_page_on_schedule)
{
	static const int processed[] = { 1, 2, 3, 4, 6, 9, 14, 23, 32, 41, 50 };
	struct sim *s = new_sim(WL_KERNEL_6_18, 1);
	int mm = sim_process_new(s), area = sim_mmap(s, mm, 1, -1, false, 0);
	size_t next = 0;

	sim_fill(s, area, 0, 1234);
	sim_madvise(s, area, 0, 1, true);
	sim_run_store(s, 1);
	for (int scan = 1; scan <= 50; scan++) {
		int64_t before = counter(s, TRACE_PAGES_SCANNED);

		full_scan(s);
		if (next < sizeof(processed) / sizeof(processed[0]) && processed[next] == scan) {
			ck_assert_msg(counter(s, TRACE_PAGES_SCANNED) == before + 1,
				      "visit %d should be processed", scan);
			next++;
		} else {
			ck_assert_msg(counter(s, TRACE_PAGES_SCANNED) == before,
				      "visit %d should be skipped", scan);
		}
	}
	ck_assert_uint_eq(next, sizeof(processed) / sizeof(processed[0]));
	ck_assert_int_eq(counter(s, TRACE_PAGES_SKIPPED), 50 - 11);
	sim_free(s);
}
END_TEST

/* One unique page of @value under smart-scan @policy, run = 1 on 6.18. */
static struct sim *lone_page(enum wl_smart_scan_policy policy, uint64_t value)
{
	struct sim_config cfg;
	char err[128];
	struct sim *s;
	int mm, area;

	sim_config_default(&cfg);
	cfg.smart_scan_policy = policy;
	s = sim_new(&cfg, err, sizeof(err));
	ck_assert_msg(s != NULL, "%s", err);
	mm = sim_process_new(s);
	area = sim_mmap(s, mm, 1, -1, false, 0);
	sim_fill(s, area, 0, value);
	sim_madvise(s, area, 0, 1, true);
	sim_run_store(s, 1);
	return s;
}

/*
 * Full scans 1..@scans of @s, asserting that exactly the scans of @visited
 * (ascending, @n of them) process the page and that every other one skips it.
 */
static void assert_visits(struct sim *s, int scans, const int *visited, size_t n)
{
	size_t next = 0;

	for (int scan = 1; scan <= scans; scan++) {
		int64_t before = counter(s, TRACE_PAGES_SCANNED);
		bool visit = next < n && visited[next] == scan;

		full_scan(s);
		ck_assert_msg(counter(s, TRACE_PAGES_SCANNED) == before + visit,
			      "scan %d should %s the page", scan, visit ? "process" : "skip");
		next += visit;
	}
	ck_assert_uint_eq(next, n);
}

/*
 * Scan k runs with seqnr = k - 1 and meets the page at age k - 1: ages 0-2
 * are visited (scans 1-3), then periods 2 (ages 3-5, scans 4-6), 4 (ages
 * 6-8, scans 7-9) and 8 (scan 10 on). Aligned visits where seqnr is a
 * multiple of the period: scans 5, 9, then 17, 25, 33, 41, 49.
 */
START_TEST(aligned_smart_scan_visits_where_seqnr_is_a_multiple_of_the_period)
{
	static const int visited[] = { 1, 2, 3, 5, 9, 17, 25, 33, 41, 49 };
	struct sim *s = lone_page(WL_SMART_SCAN_ALIGNED, 1234);

	assert_visits(s, 50, visited, sizeof(visited) / sizeof(visited[0]));
	ck_assert_int_eq(counter(s, TRACE_PAGES_SKIPPED), 50 - 10);
	sim_free(s);
}
END_TEST

/*
 * Phased visits where seqnr + oldchecksum is a multiple of the period, with
 * the kernel's checksum (xxh64): 1234's is 0x53fad8ca, 2 modulo 8, so scans
 * k with (k + 1) % period == 0 once aged: 5, 7, then 15, 23, ..., 47; 4's
 * is 0xa0386021, 1 modulo 8: k % period == 0, so 4, 6, 8, then 16, ..., 48.
 */
START_TEST(phased_smart_scan_visits_where_seqnr_plus_checksum_is_a_multiple)
{
	static const int visited_1234[] = { 1, 2, 3, 5, 7, 15, 23, 31, 39, 47 };
	static const int visited_4[] = { 1, 2, 3, 4, 6, 8, 16, 24, 32, 40, 48 };
	struct sim *s = lone_page(WL_SMART_SCAN_PHASED, 1234);

	ck_assert_uint_eq(content_value_checksum(1234), 0x53fad8ca);
	ck_assert_uint_eq(content_value_checksum(4), 0xa0386021);
	assert_visits(s, 50, visited_1234, sizeof(visited_1234) / sizeof(visited_1234[0]));
	sim_free(s);
	s = lone_page(WL_SMART_SCAN_PHASED, 4);
	assert_visits(s, 50, visited_4, sizeof(visited_4) / sizeof(visited_4[0]));
	ck_assert_int_eq(counter(s, TRACE_PAGES_SKIPPED), 50 - 11);
	sim_free(s);
}
END_TEST

/* The policy's word is upstream's countdown by default, as the kernel's. */
START_TEST(upstream_smart_scan_is_the_default_countdown)
{
	static const int visited[] = { 1, 2, 3, 4, 6, 9, 14, 23, 32, 41, 50 };
	struct sim_config cfg;
	struct sim *s = lone_page(WL_SMART_SCAN_UPSTREAM, 1234);

	sim_config_default(&cfg);
	ck_assert_int_eq(cfg.smart_scan_policy, WL_SMART_SCAN_UPSTREAM);
	assert_visits(s, 50, visited, sizeof(visited) / sizeof(visited[0]));
	sim_free(s);
}
END_TEST

/*
 * run = 2 frees every item and resets seqnr to 0, as the kernel's
 * unmerge_and_remove_all_rmap_items does: the schedule starts again as on a
 * fresh machine, the phase included.
 */
START_TEST(phased_smart_scan_restarts_after_run_2)
{
	static const int visited[] = { 1, 2, 3, 5, 7, 15, 23 };
	struct sim *s = lone_page(WL_SMART_SCAN_PHASED, 1234);

	for (int scan = 0; scan < 13; scan++)
		full_scan(s);
	ck_assert_int_eq(sim_run_store(s, 2), 0);
	ck_assert_uint_eq(sim_full_scans(s), 0);
	ck_assert_int_eq(sim_run_store(s, 1), 0);
	assert_visits(s, 25, visited, sizeof(visited) / sizeof(visited[0]));
	sim_free(s);
}
END_TEST

START_TEST(smart_scan_off_visits_every_time)
{
	struct sim *s = new_sim(WL_KERNEL_6_18, 1);
	int mm = sim_process_new(s), area = sim_mmap(s, mm, 1, -1, false, 0);

	sim_knob_store(s, WL_KNOB_SMART_SCAN, 0);
	sim_fill(s, area, 0, 1234);
	sim_madvise(s, area, 0, 1, true);
	sim_run_store(s, 1);
	for (int scan = 1; scan <= 20; scan++)
		ck_assert_uint_eq(full_scan(s), 1);
	ck_assert_int_eq(counter(s, TRACE_PAGES_SKIPPED), 0);
	sim_free(s);
}
END_TEST

/* --- COW, laziness, stale nodes ------------------------------------------------- */

START_TEST(cow_counts_drop_only_at_the_next_visit)
{
	struct fixture f = identical_pages(10, 7, 256);

	full_scan(f.s);
	full_scan(f.s);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 9);
	ck_assert_int_eq(sim_write(f.s, f.area, 4, 0, 8), 0);
	ck_assert_int_ne(sim_page_frame(f.s, f.area, 4), sim_page_frame(f.s, f.area, 5));
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 9); /* nothing yet */
	for (int i = 0; i < 4; i++)
		ck_assert(sim_ksmd_step(f.s)); /* pages 0-3: steady */
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 9);
	ck_assert(sim_ksmd_step(f.s)); /* page 4 */
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 8);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_VOLATILE), 1);
	sim_free(f.s);
}
END_TEST

START_TEST(cow_back_to_the_same_bytes_remerges_at_once)
{
	/* 6.18 keeps the pre-merge checksum: same content, merged on that visit */
	struct fixture f = identical_pages(10, 7, 256);

	full_scan(f.s);
	full_scan(f.s);
	ck_assert_int_eq(sim_write(f.s, f.area, 4, 0, 7), 0); /* COW, bytes unchanged */
	full_scan(f.s);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 9);
	ck_assert_int_eq(sim_page_frame(f.s, f.area, 4), sim_page_frame(f.s, f.area, 5));
	sim_free(f.s);
}
END_TEST

START_TEST(stale_node_drops_all_its_items_at_once)
{
	/* two processes share a KSM page; both COW away; the node goes stale */
	struct sim *s = new_sim(WL_KERNEL_6_18, 1);
	int a = sim_process_new(s), b = sim_process_new(s);
	int aa = sim_mmap(s, a, 1, -1, false, 0), ba = sim_mmap(s, b, 1, -1, false, 0);

	sim_fill(s, aa, 0, 3);
	sim_fill(s, ba, 0, 3);
	sim_madvise(s, aa, 0, 1, true);
	sim_madvise(s, ba, 0, 1, true);
	sim_run_store(s, 1);
	full_scan(s);
	full_scan(s);
	ck_assert_int_eq(counter(s, TRACE_PAGES_SHARED), 1);
	ck_assert_int_eq(counter(s, TRACE_PAGES_SHARING), 1);
	sim_write(s, aa, 0, 0, 100);
	sim_write(s, ba, 0, 0, 200);
	ck_assert(sim_ksmd_step(s)); /* a's page: the node is found stale */
	ck_assert_int_eq(counter(s, TRACE_PAGES_SHARED), 0);
	ck_assert_int_eq(counter(s, TRACE_PAGES_SHARING), 0);
	ck_assert_int_eq(proc_field(s, b, TRACE_KSM_MERGING_PAGES), 0);
	sim_free(s);
}
END_TEST

START_TEST(munmap_counts_drop_when_the_cursor_passes)
{
	struct fixture f = identical_pages(10, 7, 256);

	full_scan(f.s);
	full_scan(f.s);
	ck_assert_int_eq(sim_munmap(f.s, f.area, 5, 5), 0);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 9);
	ck_assert_int_eq(proc_field(f.s, f.mm, TRACE_KSM_RMAP_ITEMS), 10);
	full_scan(f.s);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 4);
	ck_assert_int_eq(proc_field(f.s, f.mm, TRACE_KSM_RMAP_ITEMS), 5);
	sim_free(f.s);
}
END_TEST

START_TEST(unmerge_unshares_at_once_and_counts_later)
{
	struct fixture f = identical_pages(10, 7, 256);

	full_scan(f.s);
	full_scan(f.s);
	ck_assert_int_eq(sim_madvise(f.s, f.area, 0, 10, false), 0);
	ck_assert_int_ne(sim_page_frame(f.s, f.area, 0), sim_page_frame(f.s, f.area, 1));
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 9); /* lazily */
	full_scan(f.s);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARED), 0);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 0);
	/* no mergeable VMA left: the mm lost its slot during that scan */
	ck_assert(!sim_ksmd_runnable(f.s));
	sim_free(f.s);
}
END_TEST

/* --- what the kernel's selftests do -------------------------------------------- */

/* test_unmerge_discarded: MADV_DONTNEED zaps at once, the items go later. */
START_TEST(discard_zaps_now_and_counts_later)
{
	struct fixture f = identical_pages(10, 7, 256);

	full_scan(f.s);
	full_scan(f.s);
	ck_assert_int_eq(sim_discard(f.s, f.area, 0, 5), 0);
	ck_assert_int_eq(sim_page_frame(f.s, f.area, 0), 0);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 9); /* lazily */
	ck_assert_int_eq(proc_field(f.s, f.mm, TRACE_KSM_RMAP_ITEMS), 10);
	full_scan(f.s);
	/* the cursor passed the five empty PTEs and freed their items */
	ck_assert_int_eq(proc_field(f.s, f.mm, TRACE_KSM_RMAP_ITEMS), 5);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARED), 1);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 4);
	/* the mapping stayed mergeable: the next touch reads zeros and merges again */
	ck_assert_int_eq(sim_write(f.s, f.area, 0, 8, 0), 0);
	ck_assert_int_eq(sim_write(f.s, f.area, 1, 8, 0), 0);
	full_scan(f.s);
	full_scan(f.s);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARED), 2);
	ck_assert_int_eq(sim_page_frame(f.s, f.area, 0), sim_page_frame(f.s, f.area, 1));
	ck_assert_int_eq(sim_discard(f.s, f.area, 8, 3), EINVAL);
	sim_free(f.s);
}
END_TEST

/* A discarded KSM zero page leaves ksm_zero_pages at once (its PTE is zapped). */
START_TEST(discarding_a_zero_page_counts_at_once)
{
	struct fixture f = identical_pages(10, 0, 256);

	ck_assert_int_eq(sim_knob_store(f.s, WL_KNOB_USE_ZERO_PAGES, 1), 0);
	full_scan(f.s);
	full_scan(f.s);
	ck_assert_int_eq(counter(f.s, TRACE_KSM_ZERO_PAGES), 10);
	ck_assert_int_eq(sim_discard(f.s, f.area, 0, 4), 0);
	ck_assert_int_eq(counter(f.s, TRACE_KSM_ZERO_PAGES), 6);
	ck_assert_int_eq(proc_field(f.s, f.mm, TRACE_KSM_ZERO_PAGES_PROC), 6);
	sim_free(f.s);
}
END_TEST

/* test_prot_none: PROT_NONE pages merge; a forced write breaks COW, an unmerge unshares. */
START_TEST(prot_none_pages_merge_and_forced_writes_break_cow)
{
	struct fixture f = identical_pages(8, 0x11, 256);

	ck_assert_int_eq(sim_mprotect(f.s, f.area, WL_PROT_NONE), 0);
	full_scan(f.s);
	full_scan(f.s);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 7);
	for (uint64_t p = 0; p < 4; p++)
		ck_assert_int_eq(sim_write(f.s, f.area, p, 0, 100 + p), 0);
	ck_assert_int_eq(sim_madvise(f.s, f.area, 4, 4, false), 0);
	for (uint64_t a = 0; a < 8; a++)
		for (uint64_t b = a + 1; b < 8; b++)
			ck_assert_int_ne(sim_page_frame(f.s, f.area, a), sim_page_frame(f.s, f.area, b));
	/* a second forced write to a private read-only page reuses it */
	ck_assert_int_eq(sim_write(f.s, f.area, 0, 8, 5), 0);
	full_scan(f.s);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARED), 0);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 0);
	sim_free(f.s);
}
END_TEST

/* Debian's 6.1 (measured): follow_page() does not reach PROT_NONE pages, so an
 * unstable walk meeting one gives up and break_ksm leaves one merged. */
START_TEST(kernel_6_1_does_not_reach_prot_none_pages)
{
	struct fixture f = identical_pages_on(WL_KERNEL_6_1, 4, 7, 256);
	int none = sim_mmap(f.s, f.mm, 4, -1, false, 1);

	ck_assert(!wl_kernel_row(WL_KERNEL_6_1)->reaches_prot_none);
	ck_assert(wl_kernel_row(WL_KERNEL_6_12)->reaches_prot_none);
	for (uint64_t p = 0; p < 4; p++)
		ck_assert_int_eq(sim_fill(f.s, none, p, 9), 0);
	ck_assert_int_eq(sim_madvise(f.s, none, 0, 4, true), 0);
	ck_assert_int_eq(sim_mprotect(f.s, none, WL_PROT_NONE), 0);
	full_scan(f.s);
	full_scan(f.s);
	/* the first PROT_NONE page waits in the tree; the others cannot read it */
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 3);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_UNSHARED), 1);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_VOLATILE), 3);
	/* a PROT_NONE page merges into a page it finds: then it cannot be unshared */
	ck_assert_int_eq(sim_mprotect(f.s, f.area, WL_PROT_NONE), 0);
	ck_assert_int_eq(sim_madvise(f.s, f.area, 0, 4, false), 0);
	ck_assert_int_eq(sim_page_frame(f.s, f.area, 0), sim_page_frame(f.s, f.area, 3));
	sim_free(f.s);
}
END_TEST

/* test_unmerge_uffd_wp: FAULT_FLAG_UNSHARE goes through write-protection; before
 * 6.2 the write fault break_ksm used stopped there (the row's column). */
START_TEST(uffd_wp_pages_unmerge_where_the_row_says)
{
	static const enum wl_kernel kernels[] = { WL_KERNEL_6_18, WL_KERNEL_6_1 };

	for (size_t k = 0; k < 2; k++) {
		struct fixture f = identical_pages_on(kernels[k], 8, 7, 256);
		bool unshares = wl_kernel_row(kernels[k])->unshares_uffd_wp;

		full_scan(f.s);
		full_scan(f.s);
		ck_assert_int_eq(sim_uffd_wp(f.s, f.area), 0);
		ck_assert_int_eq(sim_write(f.s, f.area, 0, 0, 1), EDEADLK);
		ck_assert_int_eq(sim_madvise(f.s, f.area, 0, 8, false), 0);
		ck_assert_msg((sim_page_frame(f.s, f.area, 0) != sim_page_frame(f.s, f.area, 1)) ==
				      unshares, "kernel %s", wl_kernel_name(kernels[k]));
		/* a fork child's copy is not registered: it may write */
		ck_assert_int_eq(sim_write(f.s, sim_area_find(f.s, sim_fork(f.s, f.mm), 0), 0, 0, 1),
				 0);
		sim_free(f.s);
	}
	ck_assert(wl_kernel_row(WL_KERNEL_6_18)->unshares_uffd_wp);
}
END_TEST

/* test_prctl_fork_exec: exec keeps PR_SET_MEMORY_MERGE where the kernel has ksm_execve. */
START_TEST(exec_keeps_merge_any_and_leaves_the_old_items)
{
	struct sim *s = new_sim(WL_KERNEL_6_18, 1);
	int mm = sim_process_new(s), area = sim_mmap(s, mm, 6, -1, false, 0), fresh, again;

	for (uint64_t p = 0; p < 6; p++)
		ck_assert_int_eq(sim_fill(s, area, p, 7), 0);
	ck_assert_int_eq(sim_prctl_merge(s, mm, true), 0);
	ck_assert_int_eq(sim_run_store(s, 1), 0);
	full_scan(s);
	full_scan(s);
	ck_assert_int_eq(counter(s, TRACE_PAGES_SHARING), 5);
	fresh = sim_exec(s, mm);
	ck_assert_int_ge(fresh, 0);
	ck_assert_int_eq(proc_field(s, fresh, TRACE_KSM_MERGE_ANY), 1);
	/* the old mm's items linger until ksmd frees them with its slot */
	ck_assert_int_eq(counter(s, TRACE_PAGES_SHARING), 5);
	again = sim_mmap(s, fresh, 6, -1, false, 0);
	for (uint64_t p = 0; p < 6; p++)
		ck_assert_int_eq(sim_fill(s, again, p, 7), 0);
	full_scan(s);
	ck_assert_int_eq(counter(s, TRACE_PAGES_SHARED), 0);
	ck_assert_int_eq(counter(s, TRACE_PAGES_VOLATILE), 6);
	full_scan(s);
	ck_assert_int_eq(counter(s, TRACE_PAGES_SHARING), 5);
	ck_assert_int_eq(proc_field(s, fresh, TRACE_KSM_MERGING_PAGES), 6);
	ck_assert_int_eq(sim_exec(s, mm), -EINVAL); /* the old one is gone */
	/* PR_SET_MEMORY_MERGE 0 unmerges it all and clears the flag */
	ck_assert_int_eq(sim_prctl_merge(s, fresh, false), 0);
	ck_assert_int_eq(proc_field(s, fresh, TRACE_KSM_MERGE_ANY), 0);
	ck_assert_int_ne(sim_page_frame(s, again, 0), sim_page_frame(s, again, 1));
	sim_free(s);
}
END_TEST

/* A madvise process's exec: the new mm has no slot until it madvises again. */
START_TEST(exec_of_a_madvise_process_starts_unregistered)
{
	struct fixture f = identical_pages(4, 7, 256);
	int fresh;

	full_scan(f.s);
	fresh = sim_exec(f.s, f.mm);
	ck_assert_int_ge(fresh, 0);
	ck_assert_int_eq(proc_field(f.s, fresh, TRACE_KSM_MERGE_ANY), 0);
	full_scan(f.s); /* frees the old mm's items and slot */
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_VOLATILE), 0);
	ck_assert(!sim_ksmd_runnable(f.s));
	sim_free(f.s);
}
END_TEST

/* --- run, knobs ---------------------------------------------------------------- */

START_TEST(run_2_unmerges_and_resets)
{
	struct fixture f = identical_pages(100, 7, 256);

	full_scan(f.s);
	full_scan(f.s);
	ck_assert_int_eq(sim_run_store(f.s, 2), 0);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARED), 0);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 0);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_VOLATILE), 0);
	ck_assert_int_eq(counter(f.s, TRACE_FULL_SCANS), 0);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SCANNED), 200); /* kept */
	ck_assert_int_ne(sim_page_frame(f.s, f.area, 0), sim_page_frame(f.s, f.area, 1));
	ck_assert(!sim_ksmd_runnable(f.s));
	ck_assert_int_eq(sim_run_store(f.s, 1), 0);
	full_scan(f.s); /* from scratch: all volatile again */
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_VOLATILE), 100);
	full_scan(f.s);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 99);
	ck_assert_int_eq(sim_run_store(f.s, 3), EINVAL);
	sim_free(f.s);
}
END_TEST

START_TEST(knob_stores_answer_ebusy_while_shared)
{
	struct fixture f = identical_pages(10, 7, 256);

	full_scan(f.s);
	full_scan(f.s);
	ck_assert_int_eq(sim_knob_store(f.s, WL_KNOB_MAX_PAGE_SHARING, 10), EBUSY);
	ck_assert_int_eq(sim_knob_store(f.s, WL_KNOB_MAX_PAGE_SHARING, 256), 0); /* same value */
	ck_assert_int_eq(sim_knob_store(f.s, WL_KNOB_MERGE_ACROSS_NODES, 0), EBUSY);
	ck_assert_int_eq(sim_knob_store(f.s, WL_KNOB_MAX_PAGE_SHARING, 1), EINVAL);
	ck_assert_int_eq(sim_knob_store_text(f.s, WL_KNOB_MERGE_ACROSS_NODES, "2"), EINVAL);
	ck_assert_int_eq(sim_run_store(f.s, 2), 0);
	ck_assert_int_eq(sim_knob_store(f.s, WL_KNOB_MAX_PAGE_SHARING, 10), 0);
	ck_assert_int_eq(sim_knob_store(f.s, WL_KNOB_MERGE_ACROSS_NODES, 0), 0);
	sim_free(f.s);
}
END_TEST

START_TEST(advisor_owns_pages_to_scan)
{
	struct sim *s = new_sim(WL_KERNEL_6_18, 1);

	ck_assert_int_eq(sim_knob_store(s, WL_KNOB_ADVISOR_MODE, WL_ADVISOR_SCAN_TIME), 0);
	ck_assert_uint_eq(sim_knob(s, WL_KNOB_PAGES_TO_SCAN), 500);
	ck_assert_int_eq(sim_knob_store(s, WL_KNOB_PAGES_TO_SCAN, 1000), EINVAL);
	ck_assert_int_eq(sim_knob_store(s, WL_KNOB_ADVISOR_MODE, WL_ADVISOR_NONE), 0);
	ck_assert_uint_eq(sim_knob(s, WL_KNOB_PAGES_TO_SCAN), 100);
	sim_free(s);
}
END_TEST

/* --- NUMA ------------------------------------------------------------------------- */

static struct sim *two_nodes(uint64_t merge_across_nodes)
{
	struct sim *s = new_sim(WL_KERNEL_6_18, 2);
	int mm = sim_process_new(s);

	ck_assert_int_eq(sim_knob_store(s, WL_KNOB_MERGE_ACROSS_NODES, merge_across_nodes), 0);
	for (int node = 0; node < 2; node++) {
		int area = sim_mmap(s, mm, 4, node, false, (uint32_t)node);

		for (uint64_t p = 0; p < 4; p++)
			sim_fill(s, area, p, 5);
		sim_madvise(s, area, 0, 4, true);
	}
	sim_run_store(s, 1);
	full_scan(s);
	full_scan(s);
	return s;
}

START_TEST(merge_across_nodes_0_keeps_merges_inside_a_node)
{
	struct sim *across = two_nodes(1), *apart = two_nodes(0);

	ck_assert_int_eq(counter(across, TRACE_PAGES_SHARED), 1);
	ck_assert_int_eq(counter(across, TRACE_PAGES_SHARING), 7);
	ck_assert_int_eq(counter(apart, TRACE_PAGES_SHARED), 2);
	ck_assert_int_eq(counter(apart, TRACE_PAGES_SHARING), 6);
	ck_assert_int_ne(sim_page_frame(apart, 0, 0), sim_page_frame(apart, 1, 0));
	sim_free(across);
	sim_free(apart);
}
END_TEST

/* --- fork, exit, registration ------------------------------------------------------- */

START_TEST(fork_child_merges_on_its_first_visit)
{
	struct fixture f = identical_pages(10, 7, 256);
	int child;

	full_scan(f.s);
	full_scan(f.s);
	child = sim_fork(f.s, f.mm);
	ck_assert_int_ge(child, 0);
	ck_assert_int_eq(proc_field(f.s, child, TRACE_KSM_MERGING_PAGES), 0);
	ck_assert_int_eq(proc_field(f.s, child, TRACE_KSM_RMAP_ITEMS), 0);
	/* the cursor was at the head: the child's slot went to the end */
	full_scan(f.s);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARED), 1);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 19);
	ck_assert_int_eq(proc_field(f.s, child, TRACE_KSM_MERGING_PAGES), 10);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_VOLATILE), 0);
	sim_free(f.s);
}
END_TEST

/*
 * A frame's mapcount is 23 bits (sim_internal.h): a fork that could take one
 * past it, less the max_page_sharing merges a KSM page may still take, fails
 * with ENOMEM, and nothing is forked; one mapping fewer and it forks.
 */
START_TEST(a_fork_past_a_frames_mapcount_fails)
{
	const uint64_t mps = 4194303, n = (8388607 - mps) / 2 + 1;
	struct fixture f = identical_pages(n, 7, mps);
	int child;

	full_scan(f.s);
	full_scan(f.s);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), (int64_t)n - 1); /* mapped n times */
	ck_assert_int_eq(sim_fork(f.s, f.mm), -ENOMEM);
	ck_assert_int_eq(sim_nprocesses(f.s), 1);
	ck_assert_int_eq(sim_madvise(f.s, f.area, 0, 1, false), 0); /* unmerge one */
	child = sim_fork(f.s, f.mm);
	ck_assert_int_ge(child, 1);
	ck_assert_int_eq(sim_page_frame(f.s, sim_area_find(f.s, child, 0), 1),
			 sim_page_frame(f.s, f.area, 1));
	sim_free(f.s);
}
END_TEST

START_TEST(forked_ksm_pages_exceed_max_page_sharing)
{
	struct fixture f = identical_pages(4, 7, 4);

	full_scan(f.s);
	full_scan(f.s);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 3);
	sim_fork(f.s, f.mm);
	full_scan(f.s);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARED), 1);
	ck_assert_int_eq(counter(f.s, TRACE_PAGES_SHARING), 7); /* 8 mappings, limit 4 */
	sim_free(f.s);
}
END_TEST

START_TEST(exit_frees_items_when_ksmd_passes)
{
	struct sim *s = new_sim(WL_KERNEL_6_18, 1);
	int a = sim_process_new(s), b = sim_process_new(s);
	int aa = sim_mmap(s, a, 5, -1, false, 0), ba = sim_mmap(s, b, 5, -1, false, 0);

	for (int p = 0; p < 5; p++) {
		sim_fill(s, aa, (uint64_t)p, 3);
		sim_fill(s, ba, (uint64_t)p, 3);
	}
	sim_madvise(s, aa, 0, 5, true);
	sim_madvise(s, ba, 0, 5, true);
	sim_run_store(s, 1);
	full_scan(s);
	full_scan(s);
	ck_assert_int_eq(counter(s, TRACE_PAGES_SHARING), 9);
	ck_assert_int_eq(sim_exit(s, b), 0);
	ck_assert_int_eq(counter(s, TRACE_PAGES_SHARING), 9); /* lazily */
	full_scan(s);
	ck_assert_int_eq(counter(s, TRACE_PAGES_SHARING), 4);
	ck_assert_int_eq(counter(s, TRACE_PAGES_VOLATILE), 0);
	sim_free(s);
}
END_TEST

START_TEST(late_registration_is_scanned_after_a_full_scan)
{
	/* mm b registers while the cursor is inside mm a: it lands before a and
	 * is first visited in the next full scan */
	struct sim *s = new_sim(WL_KERNEL_6_18, 1);
	int a = sim_process_new(s), b = sim_process_new(s);
	int aa = sim_mmap(s, a, 4, -1, false, 0), ba = sim_mmap(s, b, 4, -1, false, 0);
	int64_t scanned;

	for (int p = 0; p < 4; p++) {
		sim_fill(s, aa, (uint64_t)p, 3);
		sim_fill(s, ba, (uint64_t)p, 3);
	}
	sim_madvise(s, aa, 0, 4, true);
	sim_run_store(s, 1);
	ck_assert(sim_ksmd_step(s)); /* cursor inside a */
	sim_madvise(s, ba, 0, 4, true);
	full_scan(s); /* finishes scan 1: only a's 4 pages */
	ck_assert_int_eq(counter(s, TRACE_PAGES_SCANNED), 4);
	scanned = (int64_t)full_scan(s);
	ck_assert_int_eq(scanned, 8); /* b first, then a */
	sim_free(s);
}
END_TEST

/* --- 6.10 vs 6.18 ------------------------------------------------------------------- */

/* Pages 0-9 hold 7 and merge; page 10 holds 8, then is rewritten to 7. */
static int64_t visits_until_merged(enum wl_kernel kernel)
{
	struct sim *s = new_sim(kernel, 1);
	int mm = sim_process_new(s), area = sim_mmap(s, mm, 11, -1, false, 0);
	int64_t scans = 0;

	for (uint64_t p = 0; p < 11; p++)
		sim_fill(s, area, p, p < 10 ? 7 : 8);
	sim_madvise(s, area, 0, 11, true);
	sim_run_store(s, 1);
	full_scan(s);
	full_scan(s);
	ck_assert_int_eq(counter(s, TRACE_PAGES_SHARING), 9);
	sim_fill(s, area, 10, 7);
	while (counter(s, TRACE_PAGES_SHARING) == 9) {
		full_scan(s);
		scans++;
		ck_assert_int_lt(scans, 5);
	}
	sim_free(s);
	return scans;
}

START_TEST(kernel_6_10_merges_a_new_page_on_its_first_visit)
{
	ck_assert_int_eq(visits_until_merged(WL_KERNEL_6_10), 1);
	ck_assert_int_eq(visits_until_merged(WL_KERNEL_6_18), 2);
}
END_TEST

START_TEST(kernel_6_1_searches_the_stable_tree_first_too)
{
	ck_assert_int_eq(visits_until_merged(WL_KERNEL_6_1), 1);
}
END_TEST

/* 6.1 has no smart scan: a page that never merges is processed every scan */
START_TEST(kernel_6_1_never_skips_and_lacks_the_newer_counters)
{
	struct sim *s = new_sim(WL_KERNEL_6_1, 1);
	int mm = sim_process_new(s), area = sim_mmap(s, mm, 4, -1, false, 0);
	struct trace_proc_stat st;

	for (uint64_t p = 0; p < 4; p++)
		sim_fill(s, area, p, 100 + p);
	sim_madvise(s, area, 0, 4, true);
	sim_run_store(s, 1);
	for (int scan = 0; scan < 12; scan++)
		ck_assert_uint_eq(full_scan(s), 4);
	ck_assert_int_eq(counter(s, TRACE_PAGES_SKIPPED), 0);
	ck_assert_int_eq(counter(s, TRACE_PAGES_SCANNED), 0); /* no such file in 6.1 */
	ck_assert_int_eq(counter(s, TRACE_GENERAL_PROFIT), 0);
	ck_assert_int_eq(counter(s, TRACE_PAGES_UNSHARED), 4); /* all in the unstable tree */
	ck_assert_int_eq(counter(s, TRACE_FULL_SCANS), 12);
	sim_process_stat(s, mm, &st);
	ck_assert_int_eq(st.field[TRACE_KSM_RMAP_ITEMS], 4);
	ck_assert_int_eq(st.field[TRACE_KSM_PROCESS_PROFIT], 0);
	ck_assert_int_eq(st.field[TRACE_KSM_MERGEABLE], 0);
	ck_assert_int_eq(sim_knob_store(s, WL_KNOB_SMART_SCAN, 1), ENOENT);
	ck_assert_int_eq(sim_knob_store(s, WL_KNOB_ADVISOR_MODE, WL_ADVISOR_SCAN_TIME), ENOENT);
	ck_assert_int_eq(sim_knob_store(s, WL_KNOB_USE_ZERO_PAGES, 1), 0);
	ck_assert_int_eq(sim_prctl_merge(s, mm, true), EINVAL);
	sim_free(s);
}
END_TEST

/* 6.1 copies the parent's per-mm counts into a fork child (no fork counter fix) */
START_TEST(kernel_6_1_fork_child_starts_with_the_parents_counts)
{
	for (int k = 0; k < 2; k++) {
		struct sim *s = new_sim(k ? WL_KERNEL_6_1 : WL_KERNEL_6_18, 1);
		int mm = sim_process_new(s), area = sim_mmap(s, mm, 8, -1, false, 0), child;

		for (uint64_t p = 0; p < 8; p++)
			sim_fill(s, area, p, 5);
		sim_madvise(s, area, 0, 8, true);
		sim_run_store(s, 1);
		full_scan(s);
		full_scan(s);
		ck_assert_int_eq(proc_field(s, mm, TRACE_KSM_MERGING_PAGES), 8);
		child = sim_fork(s, mm);
		ck_assert_int_ge(child, 0);
		ck_assert_int_eq(proc_field(s, child, TRACE_KSM_MERGING_PAGES), k ? 8 : 0);
		ck_assert_int_eq(proc_field(s, child, TRACE_KSM_RMAP_ITEMS), k ? 8 : 0);
		sim_free(s);
	}
}
END_TEST

/* 6.1's MADV_UNMERGEABLE unshares KSM pages but leaves zero pages mapped */
START_TEST(kernel_6_1_unmerge_leaves_zero_pages)
{
	for (int k = 0; k < 2; k++) {
		struct sim *s = new_sim(k ? WL_KERNEL_6_1 : WL_KERNEL_6_18, 1);
		int mm = sim_process_new(s), area = sim_mmap(s, mm, 4, -1, false, 0);

		for (uint64_t p = 0; p < 4; p++)
			sim_fill(s, area, p, 0);
		ck_assert_int_eq(sim_knob_store(s, WL_KNOB_USE_ZERO_PAGES, 1), 0);
		sim_madvise(s, area, 0, 4, true);
		sim_run_store(s, 1);
		full_scan(s);
		full_scan(s);
		ck_assert_int_eq(sim_page_frame(s, area, 0), -1);
		ck_assert_int_eq(counter(s, TRACE_KSM_ZERO_PAGES), k ? 0 : 4);
		sim_madvise(s, area, 0, 4, false);
		ck_assert_int_eq(sim_page_frame(s, area, 0) == -1, k == 1);
		sim_free(s);
	}
}
END_TEST

/* --- THP ------------------------------------------------------------------------------ */

START_TEST(thp_subpages_of_one_folio_merge_after_a_split)
{
	struct sim *s = new_sim(WL_KERNEL_6_18, 1);
	int mm = sim_process_new(s), area = sim_mmap(s, mm, 512, -1, true, 0);

	for (uint64_t p = 0; p < 512; p++)
		sim_fill(s, area, p, p < 2 ? 9 : 1000 + p);
	sim_madvise(s, area, 0, 512, true);
	sim_run_store(s, 1);
	ck_assert_int_eq(sim_page_frame(s, area, 1), sim_page_frame(s, area, 0) + 1);
	full_scan(s);
	full_scan(s); /* page 1 meets page 0 of the same folio: split, no merge */
	ck_assert_int_eq(counter(s, TRACE_PAGES_SHARING), 0);
	full_scan(s);
	ck_assert_int_eq(counter(s, TRACE_PAGES_SHARED), 1);
	ck_assert_int_eq(counter(s, TRACE_PAGES_SHARING), 1);
	sim_free(s);
}
END_TEST

static Suite *sim_ksm_suite(void)
{
	Suite *s = suite_create("sim_ksm");
	TCase *tc;

	tc = tcase_create("worked_example");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, worked_example_after_two_scans);
	tcase_add_test(tc, worked_example_page_by_page);
	tcase_add_test(tc, straggler_when_n_mod_m_is_one);
	tcase_add_test(tc, general_formula_for_n_and_m);
	suite_add_tcase(s, tc);

	tc = tcase_create("zero_pages");
	tcase_add_test(tc, zero_pages_merge_like_any_content_without_use_zero_pages);
	tcase_add_test(tc, use_zero_pages_maps_the_zero_page);
	suite_add_tcase(s, tc);

	tc = tcase_create("smart_scan");
	tcase_add_test(tc, smart_scan_visits_a_never_merging_page_on_schedule);
	tcase_add_test(tc, smart_scan_off_visits_every_time);
	tcase_add_test(tc, aligned_smart_scan_visits_where_seqnr_is_a_multiple_of_the_period);
	tcase_add_test(tc, phased_smart_scan_visits_where_seqnr_plus_checksum_is_a_multiple);
	tcase_add_test(tc, upstream_smart_scan_is_the_default_countdown);
	tcase_add_test(tc, phased_smart_scan_restarts_after_run_2);
	suite_add_tcase(s, tc);

	tc = tcase_create("laziness");
	tcase_add_test(tc, cow_counts_drop_only_at_the_next_visit);
	tcase_add_test(tc, cow_back_to_the_same_bytes_remerges_at_once);
	tcase_add_test(tc, stale_node_drops_all_its_items_at_once);
	tcase_add_test(tc, munmap_counts_drop_when_the_cursor_passes);
	tcase_add_test(tc, unmerge_unshares_at_once_and_counts_later);
	suite_add_tcase(s, tc);

	tc = tcase_create("selftests");
	tcase_add_test(tc, discard_zaps_now_and_counts_later);
	tcase_add_test(tc, discarding_a_zero_page_counts_at_once);
	tcase_add_test(tc, prot_none_pages_merge_and_forced_writes_break_cow);
	tcase_add_test(tc, kernel_6_1_does_not_reach_prot_none_pages);
	tcase_add_test(tc, uffd_wp_pages_unmerge_where_the_row_says);
	tcase_add_test(tc, exec_keeps_merge_any_and_leaves_the_old_items);
	tcase_add_test(tc, exec_of_a_madvise_process_starts_unregistered);
	suite_add_tcase(s, tc);

	tc = tcase_create("sysfs");
	tcase_add_test(tc, run_2_unmerges_and_resets);
	tcase_add_test(tc, knob_stores_answer_ebusy_while_shared);
	tcase_add_test(tc, advisor_owns_pages_to_scan);
	tcase_add_test(tc, merge_across_nodes_0_keeps_merges_inside_a_node);
	suite_add_tcase(s, tc);

	tc = tcase_create("processes");
	tcase_add_test(tc, fork_child_merges_on_its_first_visit);
	tcase_add_test(tc, forked_ksm_pages_exceed_max_page_sharing);
	tcase_add_test(tc, exit_frees_items_when_ksmd_passes);
	tcase_add_test(tc, late_registration_is_scanned_after_a_full_scan);
	suite_add_tcase(s, tc);

	/* two million pages merged: seconds under the sanitizers */
	tc = tcase_create("limits");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, a_fork_past_a_frames_mapcount_fails);
	suite_add_tcase(s, tc);

	tc = tcase_create("bulk");
	tcase_add_test(tc, bulk_steady_runs_equal_single_steps);
	suite_add_tcase(s, tc);

	tc = tcase_create("versions");
	tcase_add_test(tc, kernel_6_10_merges_a_new_page_on_its_first_visit);
	tcase_add_test(tc, kernel_6_1_searches_the_stable_tree_first_too);
	tcase_add_test(tc, kernel_6_1_never_skips_and_lacks_the_newer_counters);
	tcase_add_test(tc, kernel_6_1_fork_child_starts_with_the_parents_counts);
	tcase_add_test(tc, kernel_6_1_unmerge_leaves_zero_pages);
	tcase_add_test(tc, thp_subpages_of_one_folio_merge_after_a_split);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sim_ksm_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
