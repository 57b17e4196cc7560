/*
 * check_sim_detectors.c - the simulator's volatility detectors (checksum,
 * dirty, hybrid), their THP policies, and the work counters the cost model
 * charges: where the dirty bit agrees with the kernel's checksum, where it
 * does not (writes that restore the bytes; memory without dirty tracking,
 * where it wrongly calls written pages stable and the hybrid does not), and
 * what each rule costs.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"

struct box {
	struct sim *s;
	int mm, area;
	uint64_t pages;
};

/* @pages pages holding 7, except the first @written which hold 100 + page. */
static struct box make(enum wl_detector d, enum sim_thp_dirty policy, uint64_t pages, bool thp,
		       bool tracked)
{
	struct sim_config cfg;
	char err[128];
	struct box b = { .pages = pages };

	sim_config_default(&cfg);
	cfg.detector = d;
	cfg.thp_dirty = policy;
	b.s = sim_new(&cfg, err, sizeof(err));
	ck_assert_msg(b.s != NULL, "%s", err);
	sim_knob_store(b.s, WL_KNOB_SMART_SCAN, 0);
	b.mm = sim_process_new(b.s);
	b.area = sim_mmap(b.s, b.mm, pages, -1, thp, 0);
	sim_area_set_dirty_tracking(b.s, b.area, tracked);
	for (uint64_t p = 0; p < pages; p++)
		sim_fill(b.s, b.area, p, 7);
	sim_madvise(b.s, b.area, 0, pages, true);
	sim_run_store(b.s, 1);
	return b;
}

static void full_scan(struct sim *s)
{
	uint64_t before = sim_full_scans(s);

	while (sim_ksmd_step(s))
		;
	ck_assert_uint_eq(sim_full_scans(s), before + 1);
}

static int64_t counter(const struct sim *s, enum trace_counter c)
{
	int64_t v[TRACE_COUNTER_COUNT];

	sim_counters(s, v);
	return v[c];
}

static struct sim_work work(const struct sim *s)
{
	struct sim_work w;

	sim_work_get(s, &w);
	return w;
}

START_TEST(dirty_merges_like_checksum_on_quiet_pages)
{
	struct box c = make(WL_DETECTOR_CHECKSUM, SIM_THP_DIRTY_ALL, 20, false, true);
	struct box d = make(WL_DETECTOR_DIRTY, SIM_THP_DIRTY_ALL, 20, false, true);

	full_scan(c.s);
	full_scan(d.s);
	/* fresh PTEs are dirty: the first visit is volatile for both rules */
	ck_assert_int_eq(counter(d.s, TRACE_PAGES_VOLATILE), 20);
	full_scan(c.s);
	full_scan(d.s);
	ck_assert_int_eq(counter(c.s, TRACE_PAGES_SHARING), 19);
	ck_assert_int_eq(counter(d.s, TRACE_PAGES_SHARING), 19);
	ck_assert_uint_eq(work(d.s).checksums, 0);
	ck_assert_uint_eq(work(d.s).dirty_tests, 40);
	ck_assert_uint_eq(work(c.s).checksums, 40);
	ck_assert_uint_eq(work(d.s).false_stable + work(d.s).false_volatile, 0);
	sim_free(c.s);
	sim_free(d.s);
}
END_TEST

START_TEST(dirty_sees_a_write_that_restores_the_bytes)
{
	struct box c = make(WL_DETECTOR_CHECKSUM, SIM_THP_DIRTY_ALL, 4, false, true);
	struct box d = make(WL_DETECTOR_DIRTY, SIM_THP_DIRTY_ALL, 4, false, true);

	/* scan 1 stores the checksums (and cleans the PTEs); then page 3 is
	 * written with the bytes it already holds */
	full_scan(c.s);
	full_scan(d.s);
	ck_assert_int_eq(sim_write(c.s, c.area, 3, 0, 7), 0);
	ck_assert_int_eq(sim_write(d.s, d.area, 3, 0, 7), 0);
	full_scan(c.s);
	full_scan(d.s);
	ck_assert_int_eq(counter(c.s, TRACE_PAGES_SHARING), 3); /* all four merged */
	ck_assert_int_eq(counter(d.s, TRACE_PAGES_SHARING), 2); /* page 3 waits */
	ck_assert_int_eq(counter(d.s, TRACE_PAGES_VOLATILE), 1);
	ck_assert_uint_eq(work(d.s).false_volatile, 1);
	sim_free(c.s);
	sim_free(d.s);
}
END_TEST

/*
 * Guest memory written through EPT without A/D bits: the host PTE stays clean
 * while the bytes change. Pages 0-9 are rewritten before every scan.
 */
static struct box churn(enum wl_detector d, int scans)
{
	struct box b = make(d, SIM_THP_DIRTY_ALL, 40, false, false);
	uint64_t fresh = 0;

	for (int i = 0; i < scans; i++) {
		full_scan(b.s);
		for (uint64_t p = 0; p < 10; p++)
			sim_write(b.s, b.area, p, 4088, content_fresh_value(fresh++));
	}
	full_scan(b.s);
	return b;
}

START_TEST(dirty_calls_untracked_writes_stable_and_hybrid_does_not)
{
	struct box c = churn(WL_DETECTOR_CHECKSUM, 5);
	struct box d = churn(WL_DETECTOR_DIRTY, 5);
	struct box h = churn(WL_DETECTOR_HYBRID, 5);
	struct sim_work wd = work(d.s), wh = work(h.s);

	/* the 10 rewritten pages, at each visit after a rewrite (scans 2-6),
	 * looked stable to the dirty bit: the writes never dirtied the PTE */
	ck_assert_uint_eq(wd.false_stable, 50);
	ck_assert_uint_eq(wh.false_stable, 0);
	ck_assert_uint_eq(wh.dirty_tests, 0); /* untracked: the hybrid hashes */
	/* the kernel's rule and the hybrid agree on every counter */
	for (int k = 0; k < TRACE_COUNTER_COUNT; k++)
		ck_assert_int_eq(counter(c.s, k), counter(h.s, k));
	/* the dirty rule puts changing pages in the unstable tree */
	ck_assert_int_gt(counter(d.s, TRACE_PAGES_UNSHARED), counter(c.s, TRACE_PAGES_UNSHARED));
	sim_free(c.s);
	sim_free(d.s);
	sim_free(h.s);
}
END_TEST

START_TEST(hybrid_uses_the_dirty_bit_where_it_is_tracked)
{
	struct box d = make(WL_DETECTOR_DIRTY, SIM_THP_DIRTY_ALL, 30, false, true);
	struct box h = make(WL_DETECTOR_HYBRID, SIM_THP_DIRTY_ALL, 30, false, true);

	for (int i = 0; i < 3; i++) {
		full_scan(d.s);
		full_scan(h.s);
	}
	ck_assert_uint_eq(work(h.s).checksums, 0);
	ck_assert_uint_eq(work(h.s).dirty_tests, work(d.s).dirty_tests);
	for (int k = 0; k < TRACE_COUNTER_COUNT; k++)
		ck_assert_int_eq(counter(d.s, k), counter(h.s, k));
	sim_free(d.s);
	sim_free(h.s);
}
END_TEST

/* One THP (512 subpages); page 5 is written before every scan from scan 2 on. */
static struct box thp_box(enum sim_thp_dirty policy, int scans)
{
	struct box b = make(WL_DETECTOR_DIRTY, policy, 512, true, true);
	uint64_t fresh = 0;

	full_scan(b.s);
	for (int i = 0; i < scans; i++) {
		sim_write(b.s, b.area, 5, 0, content_fresh_value(fresh++));
		full_scan(b.s);
	}
	return b;
}

START_TEST(thp_policies_of_the_dirty_rule)
{
	struct box all = thp_box(SIM_THP_DIRTY_ALL, 4);
	struct box split = thp_box(SIM_THP_DIRTY_SPLIT, 4);
	struct box sum = thp_box(SIM_THP_DIRTY_CHECKSUM, 4);

	/* all: one write dirties the PMD and so all 512 subpages every scan */
	ck_assert_int_eq(counter(all.s, TRACE_PAGES_VOLATILE), 512);
	ck_assert_int_eq(counter(all.s, TRACE_PAGES_SHARING), 0);
	ck_assert_uint_eq(work(all.s).thp_splits, 0);
	/* split: 4 KiB PTEs from the first visit on: only page 5 stays volatile */
	ck_assert_uint_ge(work(split.s).thp_splits, 1);
	ck_assert_int_eq(counter(split.s, TRACE_PAGES_VOLATILE), 1);
	ck_assert_int_eq(counter(split.s, TRACE_PAGES_SHARED) +
				 counter(split.s, TRACE_PAGES_SHARING), 511);
	/* checksum fallback: the same outcome, paid in hashing */
	ck_assert_int_eq(counter(sum.s, TRACE_PAGES_VOLATILE), 1);
	ck_assert_uint_gt(work(sum.s).checksums, 0);
	sim_free(all.s);
	sim_free(split.s);
	sim_free(sum.s);
}
END_TEST

/* All pages rewritten before every scan (Nai Xia's experiment): what a scan costs. */
static uint64_t cpu_per_scan(enum wl_detector d)
{
	struct box b = make(d, SIM_THP_DIRTY_ALL, 2000, false, true);
	uint64_t fresh = 0, before;

	full_scan(b.s);
	before = sim_ksmd_cpu_ns(b.s);
	for (int i = 0; i < 5; i++) {
		for (uint64_t p = 0; p < 2000; p++)
			sim_write(b.s, b.area, p, 4088, content_fresh_value(fresh++));
		while (sim_full_scans(b.s) == (uint64_t)i + 1)
			sim_ksmd_batch(b.s);
	}
	ck_assert_int_eq(counter(b.s, TRACE_PAGES_VOLATILE), 2000);
	before = (sim_ksmd_cpu_ns(b.s) - before) / 5;
	sim_free(b.s);
	return before;
}

START_TEST(the_dirty_bit_is_cheaper_on_volatile_pages)
{
	uint64_t checksum = cpu_per_scan(WL_DETECTOR_CHECKSUM), dirty = cpu_per_scan(WL_DETECTOR_DIRTY);
	struct sim_config cfg;

	sim_config_default(&cfg);
	ck_assert_uint_lt(dirty, checksum);
	/* the difference is the hash against test-and-clear plus a TLB flush */
	ck_assert_uint_eq(checksum - dirty,
			  (uint64_t)(2000 * (cfg.costs.checksum_ns - cfg.costs.dirty_test_ns -
					     cfg.costs.tlb_flush_ns) + 0.5));
}
END_TEST

/* ksmd's CPU time for the first full scan of @b, in one batch (time is
 * charged when a batch ends). */
static uint64_t first_scan_cost(struct box *b)
{
	sim_knob_store(b->s, WL_KNOB_PAGES_TO_SCAN, 1024);
	sim_ksmd_batch(b->s);
	ck_assert_uint_eq(sim_full_scans(b->s), 1);
	return sim_ksmd_cpu_ns(b->s);
}

START_TEST(a_visit_in_a_thp_costs_visit_pmd_ns)
{
	struct box small = make(WL_DETECTOR_CHECKSUM, SIM_THP_DIRTY_ALL, 512, false, true);
	struct box huge = make(WL_DETECTOR_CHECKSUM, SIM_THP_DIRTY_ALL, 512, true, true);
	struct box split = make(WL_DETECTOR_DIRTY, SIM_THP_DIRTY_SPLIT, 512, true, true);
	struct sim_config cfg;
	uint64_t cost_small, cost_huge;

	sim_config_default(&cfg);
	ck_assert(cfg.costs.visit_pmd_ns < cfg.costs.visit_ns);
	/* the first scan hashes every page in both: only the walk differs */
	cost_small = first_scan_cost(&small);
	cost_huge = first_scan_cost(&huge);
	ck_assert_uint_eq(work(small.s).pmd_visits, 0);
	ck_assert_uint_eq(work(huge.s).pmd_visits, 512);
	ck_assert_uint_eq(work(huge.s).visits, 512);
	ck_assert_uint_eq(cost_small - cost_huge,
			  (uint64_t)(512 * (cfg.costs.visit_ns - cfg.costs.visit_pmd_ns) + 0.5));
	/* a split THP's subpages are walked to their PTEs from then on */
	full_scan(split.s);
	full_scan(split.s);
	ck_assert_uint_ge(work(split.s).thp_splits, 1);
	ck_assert_uint_eq(work(split.s).visits, 1024);
	ck_assert_uint_le(work(split.s).pmd_visits, 512);
	sim_free(small.s);
	sim_free(huge.s);
	sim_free(split.s);
}
END_TEST

START_TEST(cost_files_round_trip_and_reject_nonsense)
{
	char path[] = "/tmp/check_costs_XXXXXX", err[256];
	struct sim_costs a, b;
	struct sim_config cfg;
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	sim_config_default(&cfg);
	a = cfg.costs;
	a.checksum_ns = 123.5;
	a.hz = 1000;
	ck_assert_int_eq(sim_costs_write(&a, "a test", f), 0);
	fclose(f);
	b = cfg.costs;
	ck_assert_int_eq(sim_costs_load(path, &b, err, sizeof(err)), 0);
	ck_assert(b.checksum_ns > 123.49 && b.checksum_ns < 123.51);
	ck_assert_uint_eq(b.hz, 1000);
	/* a file from before sample_word_ns existed keeps its default */
	f = fopen(path, "w");
	fputs("[costs]\nvisit_ns = 10\nchecksum_ns = 500\n", f);
	fclose(f);
	b = cfg.costs;
	ck_assert_int_eq(sim_costs_load(path, &b, err, sizeof(err)), 0);
	ck_assert(b.checksum_ns == 500 && b.sample_word_ns == cfg.costs.sample_word_ns);
	f = fopen(path, "w");
	fputs("[costs]\nvisit_ns = 10\nwarp_ns = 3\n", f);
	fclose(f);
	ck_assert_int_eq(sim_costs_load(path, &b, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, ":3: unknown cost 'warp_ns'"));
	f = fopen(path, "w");
	fputs("[costs]\nvisit_ns = fast\n", f);
	fclose(f);
	ck_assert_int_eq(sim_costs_load(path, &b, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, ":2: visit_ns = fast: expected a number of ns >= 0"));
	unlink(path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sim_detectors");
	TCase *tc = tcase_create("detectors");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, dirty_merges_like_checksum_on_quiet_pages);
	tcase_add_test(tc, dirty_sees_a_write_that_restores_the_bytes);
	tcase_add_test(tc, dirty_calls_untracked_writes_stable_and_hybrid_does_not);
	tcase_add_test(tc, hybrid_uses_the_dirty_bit_where_it_is_tracked);
	tcase_add_test(tc, thp_policies_of_the_dirty_rule);
	tcase_add_test(tc, the_dirty_bit_is_cheaper_on_volatile_pages);
	tcase_add_test(tc, a_visit_in_a_thp_costs_visit_pmd_ns);
	tcase_add_test(tc, cost_files_round_trip_and_reject_nonsense);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
