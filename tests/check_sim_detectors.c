/*
 * check_sim_detectors.c - the simulator's volatility detectors (checksum,
 * dirty, hybrid, partial), their THP policies, and the work counters the
 * cost model charges: where the dirty bit agrees with the kernel's checksum,
 * where it does not (writes that restore the bytes; memory without dirty
 * tracking, where it wrongly calls written pages stable and the hybrid does
 * not), when partial hashing samples, misses and catches up, and what each
 * rule costs.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"
#include "sim_driver.h"

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

/* --- partial hashing (volatility_partial.c) ---------------------------------- */

/* Every counter of @a equals @b's. */
static void assert_same_counters(const struct sim *a, const struct sim *b)
{
	for (int k = 0; k < TRACE_COUNTER_COUNT; k++)
		ck_assert_int_eq(counter(a, k), counter(b, k));
}

/* @pages unique pages (100 + page), never merging, under @d. */
static struct box unique_box(enum wl_detector d, uint64_t pages)
{
	struct box b = make(d, SIM_THP_DIRTY_ALL, pages, false, true);

	for (uint64_t p = 0; p < pages; p++)
		sim_fill(b.s, b.area, p, 100 + p);
	return b;
}

START_TEST(partial_samples_idle_pages_ever_more_sparsely)
{
	struct box b = unique_box(WL_DETECTOR_PARTIAL, 50);

	for (int i = 0; i < 12; i++)
		full_scan(b.s);
	/*
	 * Per page: visits 1 and 2 read it whole (the kernel's rule), then trust
	 * 1 samples 32 words at visit 3 and audits at 4, trust 2 samples 16 at 5
	 * to 7 and audits at 8, trust 3 samples 16 at 9 to 12 (next audit: 16).
	 */
	ck_assert_uint_eq(work(b.s).checksums, 50 * 4);
	ck_assert_uint_eq(work(b.s).sampled_words, 50 * (32 + 3 * 16 + 4 * 16));
	ck_assert_uint_eq(work(b.s).false_stable + work(b.s).false_volatile, 0);
	ck_assert_int_eq(counter(b.s, TRACE_PAGES_UNSHARED), 50);
	sim_free(b.s);
}
END_TEST

/*
 * A write to word 1 (bytes 8-15), which only the whole page covers, after an
 * idle page reached trust 3 (its audit at visit 8, a sample at visit 9).
 */
static struct box write_word_after_scan_9(uint32_t offset)
{
	struct box b = unique_box(WL_DETECTOR_PARTIAL, 10);

	for (int i = 0; i < 9; i++)
		full_scan(b.s);
	for (uint64_t p = 0; p < 5; p++)
		ck_assert_int_eq(sim_write(b.s, b.area, p, offset, content_fresh_value(p)), 0);
	for (int i = 9; i < 16; i++)
		full_scan(b.s);
	return b;
}

START_TEST(partial_misses_an_unsampled_write_until_its_audit)
{
	struct box missed = write_word_after_scan_9(8), seen = write_word_after_scan_9(0);

	/* visit 10 calls each written page stable (the sample missed it); the
	 * audit at visit 16 finds the page changed since visit 8 and calls it
	 * volatile, though it did not change after visit 10 */
	ck_assert_uint_eq(work(missed.s).false_stable, 5);
	ck_assert_uint_eq(work(missed.s).false_volatile, 5);
	ck_assert_int_eq(counter(missed.s, TRACE_PAGES_VOLATILE), 5);
	/* word 0 is in every sample: seen at once, nothing misjudged */
	ck_assert_uint_eq(work(seen.s).false_stable + work(seen.s).false_volatile, 0);
	ck_assert_int_eq(counter(seen.s, TRACE_PAGES_VOLATILE), 0);
	/* the seen pages were read whole at the write's visit, then twice more
	 * (trust 0 at visit 11, the audit at 12 after trust 1): a page hashed
	 * whole again only as long as it takes to trust it */
	ck_assert_uint_eq(work(seen.s).checksums, work(missed.s).checksums + 5 * 2);
	sim_free(missed.s);
	sim_free(seen.s);
}
END_TEST

START_TEST(partial_judges_pages_written_every_scan_as_the_kernel)
{
	struct box c = unique_box(WL_DETECTOR_CHECKSUM, 40), p = unique_box(WL_DETECTOR_PARTIAL, 40);
	uint64_t fresh = 0;

	for (int i = 0; i < 8; i++) {
		full_scan(c.s);
		full_scan(p.s);
		for (uint64_t q = 0; q < 10; q++) {
			uint64_t v = content_fresh_value(fresh++);
			uint32_t at = (uint32_t)(q * 397 % 4089);

			sim_write(c.s, c.area, q, at, v);
			sim_write(p.s, p.area, q, at, v);
		}
		assert_same_counters(c.s, p.s);
	}
	/* the written pages never earn trust: every visit of theirs hashes them
	 * whole, and no verdict is wrong */
	ck_assert_uint_eq(work(p.s).false_stable + work(p.s).false_volatile, 0);
	ck_assert_int_eq(counter(p.s, TRACE_PAGES_VOLATILE), 10);
	ck_assert_uint_ge(work(p.s).checksums, 10 * 8);
	ck_assert_uint_lt(work(p.s).checksums, work(c.s).checksums);
	sim_free(c.s);
	sim_free(p.s);
}
END_TEST

START_TEST(partial_merges_and_finds_zero_pages_as_the_kernel)
{
	struct box c = make(WL_DETECTOR_CHECKSUM, SIM_THP_DIRTY_ALL, 30, false, true);
	struct box p = make(WL_DETECTOR_PARTIAL, SIM_THP_DIRTY_ALL, 30, false, true);

	for (uint64_t q = 20; q < 30; q++) {
		sim_fill(c.s, c.area, q, 0);
		sim_fill(p.s, p.area, q, 0);
	}
	sim_knob_store(c.s, WL_KNOB_USE_ZERO_PAGES, 1);
	sim_knob_store(p.s, WL_KNOB_USE_ZERO_PAGES, 1);
	for (int i = 0; i < 4; i++) {
		full_scan(c.s);
		full_scan(p.s);
		assert_same_counters(c.s, p.s);
	}
	ck_assert_int_eq(counter(p.s, TRACE_KSM_ZERO_PAGES), 10);
	ck_assert_int_eq(counter(p.s, TRACE_PAGES_SHARING), 19);
	sim_free(c.s);
	sim_free(p.s);
}
END_TEST

/* Unique pages, a sample of 16 words against a whole page: what a visit costs. */
START_TEST(a_sampled_visit_costs_its_words)
{
	struct box c = unique_box(WL_DETECTOR_CHECKSUM, 100), p = unique_box(WL_DETECTOR_PARTIAL, 100);
	uint64_t cc, pc;
	struct sim_config cfg;

	sim_config_default(&cfg);
	for (int i = 0; i < 8; i++) {
		full_scan(c.s);
		full_scan(p.s);
	}
	/* time is charged when a batch ends: scan 9 in batches of its own */
	sim_knob_store(c.s, WL_KNOB_PAGES_TO_SCAN, 1000);
	sim_knob_store(p.s, WL_KNOB_PAGES_TO_SCAN, 1000);
	cc = sim_ksmd_cpu_ns(c.s);
	pc = sim_ksmd_cpu_ns(p.s);
	sim_ksmd_batch(c.s); /* visit 9: a 16-word sample against a checksum */
	sim_ksmd_batch(p.s);
	ck_assert_uint_eq(sim_full_scans(p.s), 9);
	cc = sim_ksmd_cpu_ns(c.s) - cc;
	pc = sim_ksmd_cpu_ns(p.s) - pc;
	ck_assert_uint_eq(cc - pc, (uint64_t)(100 * (cfg.costs.checksum_ns -
						       16 * cfg.costs.sample_word_ns) + 0.5));
	sim_free(c.s);
	sim_free(p.s);
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
	a.refill_tau_ms = 40;
	ck_assert_int_eq(sim_costs_write(&a, "a test", f), 0);
	fclose(f);
	b = cfg.costs;
	ck_assert_int_eq(sim_costs_load(path, &b, err, sizeof(err)), 0);
	ck_assert(b.checksum_ns > 123.49 && b.checksum_ns < 123.51);
	ck_assert_uint_eq(b.hz, 1000);
	ck_assert(b.refill_tau_ms == 40);
	/* a file from before sample_word_ns existed keeps its default */
	f = fopen(path, "w");
	fputs("[costs]\nvisit_ns = 10\nchecksum_ns = 500\n", f);
	fclose(f);
	b = cfg.costs;
	ck_assert_int_eq(sim_costs_load(path, &b, err, sizeof(err)), 0);
	ck_assert(b.checksum_ns == 500 && b.sample_word_ns == cfg.costs.sample_word_ns);
	ck_assert(b.refill_tau_ms == SIM_REFILL_TAU_MS); /* and refill's time constant */
	f = fopen(path, "w");
	fputs("[costs]\nvisit_ns = 10\nrefill_tau_ms = 0\n", f);
	fclose(f);
	ck_assert_int_eq(sim_costs_load(path, &b, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, ":3: refill_tau_ms must be above 0"));
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

/*
 * The trace of workload @text run with every cost term at 1 ns (refill's
 * time constant @tau_ms): each cost column counts its work.
 */
static struct trace *trace_at_unit_costs_tau(const char *text, double tau_ms)
{
	struct sim_run_options opt = { 0 };
	struct sim_config cfg;
	struct sim_costs ones;
	struct workload *wl;
	struct wl_error werr;
	struct trace *t = NULL;
	char err[256];

	sim_config_default(&cfg);
	ones = cfg.costs;
	for (int i = 0; i < SIM_TERM_COUNT; i++)
		sim_cost_set(&ones, i, 1);
	ones.refill_tau_ms = tau_ms;
	opt.costs = &ones;
	ck_assert_int_eq(wl_parse_buffer(text, strlen(text), "t.wl", &wl, &werr), 0);
	ck_assert_msg(sim_run_workload(wl, &opt, &t, err, sizeof(err)) == 0, "%s", err);
	wl_free(wl);
	return t;
}

static struct trace *trace_at_unit_costs(const char *text)
{
	return trace_at_unit_costs_tau(text, SIM_REFILL_TAU_MS);
}

/* The refills of scan @scan of @t (a full scan a batch): its row's less the last's. */
static uint64_t refills_of_scan(const struct trace *t, uint64_t scan)
{
	for (size_t r = 1; r < t->nrows; r++)
		if (t->row[r].scan == scan)
			return t->row[r].cost[SIM_TERM_refill] - t->row[r - 1].cost[SIM_TERM_refill];
	ck_abort_msg("no row for scan %llu", (unsigned long long)scan);
	return 0;
}

/*
 * refill: the first batch refills all SIM_REFILL_UNITS, a batch after a
 * sleep 1000 (1 - exp(-t / tau)): the 20 ms sleep (5 jiffies and the
 * adjustment, about 23.8 ms) refills nearly all with tau 10 ms, about
 * half with 25, a fifth with 100.
 */
START_TEST(a_batch_refills_by_its_sleep_and_time_constant)
{
	const char *text = "[global]\nscans = 3\nsmart_scan = 0\npages_to_scan = 1000\n"
			   "sleep_millisecs = 20\n[region a]\npages = 4\nfill = same\nvalue = 3\n";
	const double tau[] = { 10, 25, 100 };
	uint64_t refills[3];

	for (int k = 0; k < 3; k++) {
		struct trace *t = trace_at_unit_costs_tau(text, tau[k]);

		ck_assert_uint_eq(refills_of_scan(t, 1), SIM_REFILL_UNITS);
		refills[k] = refills_of_scan(t, 3);
		ck_assert_uint_eq(refills_of_scan(t, 2), refills[k]);
		trace_free(t);
	}
	ck_assert_uint_gt(refills[0], 880);
	ck_assert_uint_lt(refills[0], 950);
	ck_assert_uint_gt(refills[1], 580);
	ck_assert_uint_lt(refills[1], 650);
	ck_assert_uint_gt(refills[2], 180);
	ck_assert_uint_lt(refills[2], 240);
}
END_TEST

/* Row of scan @scan of @t, and the one before it. */
static const struct trace_row *scan_row(const struct trace *t, uint64_t scan,
					const struct trace_row **before)
{
	for (size_t r = 1; r < t->nrows; r++)
		if (t->row[r].scan == scan) {
			*before = &t->row[r - 1];
			return &t->row[r];
		}
	ck_abort_msg("no row for scan %llu", (unsigned long long)scan);
	return NULL;
}

/*
 * cold_merge: each of a batch's first SIM_COLD_MERGES merges costs a unit
 * for each of the batch's refills: 100 equal pages merge in scan 2 (after
 * a 20 ms sleep), the first SIM_COLD_MERGES of their merges cold; a busy
 * ksmd (sleep 0), its batches never cold after the first, has none after
 * scan 1.
 */
START_TEST(the_first_merges_after_a_sleep_cost_by_its_refills)
{
	const char *sleeping = "[global]\nscans = 3\nsmart_scan = 0\npages_to_scan = 1000\n"
			       "sleep_millisecs = 20\n[region a]\npages = 100\nfill = same\n"
			       "value = 3\n";
	const char *busy = "[global]\nscans = 3\nsmart_scan = 0\npages_to_scan = 1000\n"
			   "sleep_millisecs = 0\n[region a]\npages = 100\nfill = same\n"
			   "value = 3\n";
	const struct trace_row *before, *r;
	struct trace *t = trace_at_unit_costs(sleeping);
	uint64_t merges, refills;

	r = scan_row(t, 2, &before);
	merges = r->cost[SIM_TERM_merge] - before->cost[SIM_TERM_merge];
	refills = r->cost[SIM_TERM_refill] - before->cost[SIM_TERM_refill];
	ck_assert_uint_gt(merges, SIM_COLD_MERGES);
	ck_assert_uint_gt(refills, 0);
	ck_assert_uint_eq(r->cost[SIM_TERM_cold_merge] - before->cost[SIM_TERM_cold_merge],
			  SIM_COLD_MERGES * refills);
	r = scan_row(t, 3, &before);
	ck_assert_uint_eq(r->cost[SIM_TERM_cold_merge], before->cost[SIM_TERM_cold_merge]);
	trace_free(t);
	t = trace_at_unit_costs(busy);
	r = scan_row(t, 2, &before);
	ck_assert_uint_gt(r->cost[SIM_TERM_merge] - before->cost[SIM_TERM_merge], 0);
	ck_assert_uint_eq(r->cost[SIM_TERM_cold_merge], 0);
	trace_free(t);
}
END_TEST

/*
 * first_merge: a batch that merges pays it once. 100 equal pages merge in
 * scan 2: in one batch at pages_to_scan 1000, in four at 25 (the first
 * batch merges 24, each of the others 25); no merge, none after.
 */
START_TEST(a_batch_that_merges_pays_first_merge_once)
{
	static const unsigned pages_to_scan[] = { 1000, 25 };
	static const uint64_t batches[] = { 1, 4 };

	for (unsigned i = 0; i < 2; i++) {
		char text[256];
		const struct trace_row *before, *r;
		struct trace *t;

		snprintf(text, sizeof(text),
			 "[global]\nscans = 3\nsmart_scan = 0\npages_to_scan = %u\n"
			 "[region a]\npages = 100\nfill = same\nvalue = 3\n", pages_to_scan[i]);
		t = trace_at_unit_costs(text);
		r = scan_row(t, 2, &before);
		ck_assert_uint_eq(r->cost[SIM_TERM_merge] - before->cost[SIM_TERM_merge], 99);
		ck_assert_uint_eq(r->cost[SIM_TERM_first_merge] - before->cost[SIM_TERM_first_merge],
				  batches[i]);
		r = scan_row(t, 3, &before);
		ck_assert_uint_eq(r->cost[SIM_TERM_first_merge], before->cost[SIM_TERM_first_merge]);
		trace_free(t);
	}
}
END_TEST

/*
 * A smart-scan skip is charged in place of its visit: 4 unique pages,
 * smart scan on, 12 scans; every scan stops at each page once, either a
 * visit or a skip, and the skips come (from the fourth visit on).
 */
START_TEST(a_skip_is_charged_in_place_of_its_visit)
{
	const char *text = "[global]\nscans = 12\nsmart_scan = 1\npages_to_scan = 1000\n"
			   "sleep_millisecs = 20\n[region a]\npages = 4\nfill = unique\n";
	struct trace *t = trace_at_unit_costs(text);
	const struct trace_row *last = &t->row[t->nrows - 1];

	ck_assert_uint_eq(last->scan, 12);
	ck_assert_uint_gt(last->cost[SIM_TERM_skip], 0);
	ck_assert_uint_eq(last->cost[SIM_TERM_visit] + last->cost[SIM_TERM_busy_visit] +
				  last->cost[SIM_TERM_skip],
			  4 * 12);
	ck_assert_uint_eq(last->counter[TRACE_PAGES_SKIPPED], last->cost[SIM_TERM_skip]);
	trace_free(t);
}
END_TEST

/*
 * With use_zero_pages, 6 empty pages are merged into the zero page at scan
 * 2 (scan 1 takes their checksums); from then on the walk passes their
 * zero-page PTEs without a visit, each a zero_pte, not an absent_page.
 */
START_TEST(a_zero_page_pte_costs_zero_pte_ns)
{
	const char *text = "[global]\nscans = 5\nsmart_scan = 0\npages_to_scan = 1000\n"
			   "use_zero_pages = 1\n"
			   "[region a]\npages = 6\nfill = same\nvalue = 0\n";
	struct trace *t = trace_at_unit_costs(text);
	const struct trace_row *last = &t->row[t->nrows - 1];

	ck_assert_uint_eq(last->scan, 5);
	ck_assert_uint_eq(last->counter[TRACE_KSM_ZERO_PAGES], 6);
	ck_assert_uint_eq(last->cost[SIM_TERM_zero_merge], 6);
	ck_assert_uint_eq(last->cost[SIM_TERM_zero_pte], 6 * 3);
	ck_assert_uint_eq(last->cost[SIM_TERM_absent_page], 0);
	ck_assert_uint_eq(last->cost[SIM_TERM_visit], 6 * 2);
	ck_assert_str_eq(t->cost_name[SIM_TERM_zero_pte], "zero_pte");
	trace_free(t);
}
END_TEST

/*
 * A full scan's start drains the LRU caches once if a page was faulted in
 * or copied since the last began: scan 1 (the pages of the setup); scan 3
 * after a write that copies a KSM page; scan 5 after a page of a region KSM
 * does not scan is faulted in again; not scan 2 nor 4, nor scan 6 after a
 * write into a page already there.
 */
START_TEST(a_scan_after_new_pages_drains_the_lru_caches)
{
	const char *text = "[global]\nscans = 6\nsmart_scan = 0\npages_to_scan = 1000\n"
			   "[region a]\npages = 4\nfill = same\nvalue = 3\n"
			   "[region o]\npages = 1\nfill = same\nvalue = 5\nmerge = none\n"
			   "[event w]\nat = after-scan:2\naction = write\nregion = a\npages = 0\n"
			   "value = 9\n"
			   "[event d]\nat = after-scan:4\naction = discard\nregion = o\n"
			   "[event f]\nat = after-scan:4\naction = write\nregion = o\nvalue = 6\n"
			   "[event r]\nat = after-scan:5\naction = write\nregion = o\nvalue = 8\n";
	static const uint64_t drains[] = { 0, 1, 0, 1, 0, 1, 0 };
	struct trace *t = trace_at_unit_costs(text);

	for (unsigned scan = 1; scan <= 6; scan++) {
		const struct trace_row *before, *r = scan_row(t, scan, &before);

		ck_assert_msg(r->cost[SIM_TERM_lru_drain] - before->cost[SIM_TERM_lru_drain] ==
				      drains[scan],
			      "scan %u: %llu drains", scan,
			      (unsigned long long)(r->cost[SIM_TERM_lru_drain] -
						   before->cost[SIM_TERM_lru_drain]));
	}
	trace_free(t);
}
END_TEST

/*
 * A dup of a chain is charged each time the kernel's walk looks at it,
 * whether the simulator needed the walk or not: 9 equal pages with
 * max_page_sharing 2 merge into a chain of 4 full dups and a straggler
 * that merges with none. From scan 3 on the straggler's search is the only
 * one, and it looks at all 4 dups: at a prune (interval 0) and without one,
 * the choice known either way from the chain's count of dups with room
 * (none), without the walk.
 */
START_TEST(a_search_pays_each_dup_the_kernel_looks_at)
{
	static const unsigned prune_ms[] = { 0, 100000 };

	for (unsigned i = 0; i < 2; i++) {
		char text[320];
		struct trace *t;

		snprintf(text, sizeof(text),
			 "[global]\nscans = 5\nsmart_scan = 0\npages_to_scan = 1000\n"
			 "max_page_sharing = 2\nstable_node_chains_prune_millisecs = %u\n"
			 "[region a]\npages = 9\nfill = same\nvalue = 3\n", prune_ms[i]);
		t = trace_at_unit_costs(text);
		for (unsigned scan = 3; scan <= 5; scan++) {
			const struct trace_row *before, *r = scan_row(t, scan, &before);

			ck_assert_uint_eq(r->counter[TRACE_STABLE_NODE_DUPS], 4);
			ck_assert_uint_eq(r->counter[TRACE_PAGES_SHARING] +
						  r->counter[TRACE_PAGES_SHARED], 8);
			ck_assert_msg(r->cost[SIM_TERM_prune] - before->cost[SIM_TERM_prune] == 4,
				      "prune every %u ms, scan %u: %llu dups looked at", prune_ms[i],
				      scan,
				      (unsigned long long)(r->cost[SIM_TERM_prune] -
							   before->cost[SIM_TERM_prune]));
		}
		trace_free(t);
	}
}
END_TEST

/*
 * The cost terms: with every cost 1 ns, each cost_TERM_ns column of the
 * trace counts that term's work, and in every row the columns add up to
 * ksmd's CPU time. Two processes (three mappings, the second process's a
 * mapping of 10 pages of which 6 are discarded after scan 1): per scan two
 * mm_slots, three mappings, one scan start; the discarded addresses are
 * absent from scan 2 on, and their rmap_items are freed at scan 2's pass.
 */
START_TEST(cost_terms_count_their_work_and_add_up)
{
	const char *text = "[global]\nscans = 4\nsmart_scan = 0\npages_to_scan = 1000\n"
			   "[region a]\npages = 8\nfill = same\nvalue = 3\n"
			   "[region b]\npages = 4\nfill = unique\n"
			   "[region c]\nprocess = other\npages = 10\nfill = same\nvalue = 3\n"
			   "[event d]\nat = after-scan:1\naction = discard\nregion = c\npages = 0-5\n";
	struct trace *t = trace_at_unit_costs(text);
	const struct trace_row *last;

	ck_assert_uint_eq(t->ncosts, SIM_TERM_COUNT);
	for (size_t r = 0; r < t->nrows; r++) {
		uint64_t sum = 0;

		for (size_t c = 0; c < t->ncosts; c++)
			sum += t->row[r].cost[c];
		ck_assert_uint_eq(sum, t->row[r].ksmd_cpu_ns);
	}
	last = &t->row[t->nrows - 1];
	ck_assert_uint_eq(last->scan, 4);
	ck_assert_str_eq(t->cost_name[SIM_TERM_mm_slot], "mm_slot");
	ck_assert_uint_eq(last->cost[SIM_TERM_scan], 4);
	ck_assert_uint_eq(last->cost[SIM_TERM_mm_slot], 2 * 4);
	ck_assert_uint_eq(last->cost[SIM_TERM_vma], 3 * 4);
	ck_assert_uint_eq(last->cost[SIM_TERM_absent_page], 6 * 3);
	ck_assert_uint_eq(last->cost[SIM_TERM_rmap_free], 6);
	ck_assert_uint_eq(last->cost[SIM_TERM_rmap_alloc], 8 + 4 + 10);
	ck_assert_uint_eq(last->cost[SIM_TERM_visit], 22 + 3 * 16);
	ck_assert_uint_eq(last->cost[SIM_TERM_batch], 4);
	trace_free(t);
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
	tcase_add_test(tc, partial_samples_idle_pages_ever_more_sparsely);
	tcase_add_test(tc, partial_misses_an_unsampled_write_until_its_audit);
	tcase_add_test(tc, partial_judges_pages_written_every_scan_as_the_kernel);
	tcase_add_test(tc, partial_merges_and_finds_zero_pages_as_the_kernel);
	tcase_add_test(tc, a_sampled_visit_costs_its_words);
	tcase_add_test(tc, cost_terms_count_their_work_and_add_up);
	tcase_add_test(tc, a_zero_page_pte_costs_zero_pte_ns);
	tcase_add_test(tc, a_scan_after_new_pages_drains_the_lru_caches);
	tcase_add_test(tc, a_search_pays_each_dup_the_kernel_looks_at);
	tcase_add_test(tc, a_batch_that_merges_pays_first_merge_once);
	tcase_add_test(tc, a_batch_refills_by_its_sleep_and_time_constant);
	tcase_add_test(tc, the_first_merges_after_a_sleep_cost_by_its_refills);
	tcase_add_test(tc, a_skip_is_charged_in_place_of_its_visit);
	tcase_add_test(tc, cost_files_round_trip_and_reject_nonsense);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
