/*
 * check_sim_state.c - the simulator as a value (clone, hash, equality) and
 * as a workload runner (sim_driver.c): clones evolve identically, equal
 * states hash equal, runs are deterministic, traces carry rows, process
 * stats and event outcomes, and failing expectations fail the run.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_driver.h"
#include "sim_internal.h"
#include "sim_runs.h"
#include "rng.h"

static struct sim *build(void)
{
	struct sim *s = test_machine(40, 3);

	sim_write(s, 0, 7, 100, 5);
	sim_madvise(s, 0, 0, 40, true);
	sim_run_store(s, 1);
	return s;
}

START_TEST(a_clone_evolves_identically)
{
	struct sim *s = build(), *c;

	for (int i = 0; i < 50; i++)
		sim_ksmd_step(s);
	c = sim_clone(s);
	ck_assert_ptr_nonnull(c);
	ck_assert(sim_equal(s, c));
	ck_assert_uint_eq(sim_hash(s), sim_hash(c));
	for (int i = 0; i < 200; i++) {
		ck_assert_int_eq(sim_ksmd_step(s), sim_ksmd_step(c));
		if (i == 100) {
			ck_assert_int_eq(sim_write(s, 0, 3, 8, 77), 0);
			ck_assert(!sim_equal(s, c));
			ck_assert_int_eq(sim_write(c, 0, 3, 8, 77), 0);
		}
		ck_assert(sim_equal(s, c));
		ck_assert_uint_eq(sim_hash(s), sim_hash(c));
	}
	sim_free(s);
	/* the clone owns its memory */
	for (int i = 0; i < 50; i++)
		sim_ksmd_step(c);
	sim_free(c);
}
END_TEST

START_TEST(equal_states_built_apart_hash_equal)
{
	struct sim *a = build(), *b = build();

	for (int i = 0; i < 77; i++) {
		sim_ksmd_step(a);
		sim_ksmd_step(b);
	}
	ck_assert(sim_equal(a, b));
	ck_assert_uint_eq(sim_hash(a), sim_hash(b));
	sim_ksmd_step(a);
	ck_assert(!sim_equal(a, b));
	ck_assert_uint_ne(sim_hash(a), sim_hash(b));
	sim_free(a);
	sim_free(b);
}
END_TEST

START_TEST(equal_bytes_reached_differently_are_equal)
{
	/* one page written 5 then restored: same bytes as never written */
	struct sim *a = build(), *b = build();

	ck_assert_int_eq(sim_write(a, 0, 2, 0, 5), 0);
	ck_assert_int_eq(sim_write(a, 0, 2, 0, 2), 0);
	/* the write cycle left PTE dirty/soft-dirty bits as b has them (filled) */
	ck_assert(sim_equal(a, b));
	sim_free(a);
	sim_free(b);
}
END_TEST

/* --- steps -------------------------------------------------------------------------- */

START_TEST(enabled_steps_follow_the_state)
{
	static const uint64_t values[] = { 1, 2 };
	struct sim_alphabet alpha = { .values = values, .nvalues = 2, .writes = true,
				      .unmerge = true, .fork = true, .exit = true };
	struct sim *s = build();
	struct sim_step steps[256];
	size_t n = sim_enabled_steps(s, &alpha, steps, 256);

	/* ksmd, then 40 pages x (2 writes + 1 unmerge), then fork and exit */
	ck_assert_uint_eq(n, 1 + 40 * 3 + 2);
	ck_assert_int_eq(steps[0].kind, SIM_STEP_KSMD);
	ck_assert_int_eq(steps[1].kind, SIM_STEP_WRITE);
	ck_assert_int_eq(steps[n - 1].kind, SIM_STEP_EXIT);
	ck_assert_int_eq(sim_run_store(s, 0), 0);
	ck_assert_uint_eq(sim_enabled_steps(s, &alpha, steps, 0), 40 * 3 + 2); /* no ksmd */
	sim_free(s);
}
END_TEST

/* A long random walk over enabled steps: a clone taking the same step stays
 * equal, and no counter ever goes negative. */
/*
 * A chain's index of its dups (sim_internal.h: room_dups, stale_dups) is what
 * a walk of its dups counts, after every step of a random walk that merges
 * into chains of 3, COWs, unmerges, unmaps, forks and exits. Returns how many
 * chains had stale dups, so the walk is seen to reach that case.
 */
static unsigned assert_chain_index_exact(const struct sim *s)
{
	unsigned with_stale = 0;

	for (uint32_t c = 1; c < s->nsnodes; c++) {
		const struct sim_snode *chain = &s->snode[c];
		uint32_t room = 0, stale = 0;

		if (chain->kind != SNODE_CHAIN)
			continue;
		for (uint32_t d = chain->first; d; d = s->snode[d].dup_next) {
			const struct sim_snode *dup = &s->snode[d];
			const struct sim_frame *f = &s->frame[dup->kpfn];

			room += dup->hlist_len > 0 &&
				(uint64_t)dup->hlist_len < s->knobs.value[WL_KNOB_MAX_PAGE_SHARING];
			stale += !(f->mapcount && (f->flags & FRAME_KSM) && f->stable_node == d);
		}
		ck_assert_uint_eq(chain->room_dups, room);
		ck_assert_uint_eq(chain->stale_dups, stale);
		with_stale += stale > 0;
	}
	return with_stale;
}

/*
 * The next step of a random walk over chains: one of @s's enabled steps of
 * @alpha, ksmd's three times in four; a fork past 4 processes or an exit
 * below 3 is passed over. 1 with the step in *@st, 0 passed over, -1 when
 * every process exited.
 */
static int chain_walk_step(struct sim *s, const struct sim_alphabet *alpha, struct wl_rng *rng,
			   struct sim_step *st)
{
	static struct sim_step steps[4096];
	size_t n = sim_enabled_steps(s, alpha, steps, 4096);

	if (n == 0)
		return -1;
	*st = steps[0].kind == SIM_STEP_KSMD && wl_rng_below(rng, 4) ? steps[0]
								      : steps[wl_rng_below(rng, n)];
	if ((st->kind == SIM_STEP_FORK && sim_nprocesses(s) > 4) ||
	    (st->kind == SIM_STEP_EXIT && sim_nprocesses(s) < 3))
		return 0;
	return 1;
}

START_TEST(chain_index_counts_what_a_walk_finds)
{
	static const uint64_t values[] = { 1, 2 };
	struct sim_alphabet alpha = { .values = values, .nvalues = 2, .offset = 0,
				      .writes = true, .unmerge = true, .unmap = true,
				      .fork = true, .exit = true };
	struct wl_rng rng = wl_rng_stream(15, 0);
	unsigned stale_seen = 0;
	struct sim *s = test_machine(24, 1); /* 24 equal pages */

	ck_assert_int_eq(sim_knob_store(s, WL_KNOB_MAX_PAGE_SHARING, 3), 0);
	ck_assert_int_eq(sim_knob_store(s, WL_KNOB_SMART_SCAN, 0), 0);
	sim_madvise(s, 0, 0, 24, true);
	sim_run_store(s, 1);
	for (int i = 0; i < 20000; i++) {
		struct sim_step st;
		int took = chain_walk_step(s, &alpha, &rng, &st);

		if (took < 0)
			break;
		if (!took)
			continue;
		sim_apply(s, &st);
		stale_seen += assert_chain_index_exact(s) > 0;
	}
	ck_assert_uint_gt(stale_seen, 0);
	sim_free(s);
}
END_TEST

/*
 * A chain's choice of dup known without its walk (sim_merge.c: no dup stale,
 * none with room but the head; at a prune too) is the walk's: two machines,
 * one walking every chain at every search (sim_config.walk_every_chain),
 * take the same random walk of merges into chains of dups of 4 pages at
 * most, COWs, unmerges, unmaps, forks and exits, and stay equal
 * (sim_equal: every counter, node and charge) at every step; with a prune
 * at every search and every 2 s.
 */
START_TEST(a_chain_choice_known_without_the_walk_is_the_walk_s)
{
	static const uint64_t values[] = { 1, 2 };
	static const uint64_t prune_ms[] = { 0, 2000 };
	struct sim_alphabet alpha = { .values = values, .nvalues = 2, .offset = 0,
				      .writes = true, .unmerge = true, .unmap = true,
				      .fork = true, .exit = true };

	for (size_t k = 0; k < sizeof(prune_ms) / sizeof(prune_ms[0]); k++) {
		struct wl_rng rng = wl_rng_stream(16, k);
		struct sim_config cfg;
		struct sim *known, *walked;

		sim_config_default(&cfg);
		known = test_machine_of(&cfg, 80, 2);
		cfg.walk_every_chain = true;
		walked = test_machine_of(&cfg, 80, 2);
		for (struct sim *s = known; s; s = s == known ? walked : NULL) {
			ck_assert_int_eq(sim_knob_store(s, WL_KNOB_MAX_PAGE_SHARING, 4), 0);
			ck_assert_int_eq(sim_knob_store(s, WL_KNOB_SMART_SCAN, 0), 0);
			ck_assert_int_eq(sim_knob_store(s, WL_KNOB_STABLE_NODE_CHAINS_PRUNE_MILLISECS,
							prune_ms[k]), 0);
			sim_madvise(s, 0, 0, 80, true);
			sim_run_store(s, 1);
		}
		for (int i = 0; i < 20000; i++) {
			struct sim_step st;
			int took = chain_walk_step(known, &alpha, &rng, &st);

			if (took < 0)
				break;
			if (!took)
				continue;
			ck_assert_int_eq(sim_apply(known, &st), sim_apply(walked, &st));
			ck_assert_msg(sim_equal(known, walked), "prune every %llu ms: step %d differs",
				      (unsigned long long)prune_ms[k], i);
		}
		ck_assert_uint_gt(sim_full_scans(known), 10);
		sim_free(known);
		sim_free(walked);
	}
}
END_TEST

START_TEST(random_walk_stays_sane_and_deterministic)
{
	static const uint64_t values[] = { 0, 1, 2 };
	struct sim_step extra[] = {
		{ .kind = SIM_STEP_RUN, .value = 1 },
		{ .kind = SIM_STEP_RUN, .value = 2 },
		{ .kind = SIM_STEP_KNOB, .knob = WL_KNOB_USE_ZERO_PAGES, .value = 1 },
		{ .kind = SIM_STEP_KNOB, .knob = WL_KNOB_MAX_PAGE_SHARING, .value = 3 },
	};
	struct sim_alphabet alpha = { .values = values, .nvalues = 3, .offset = 0,
				      .writes = true, .unmerge = true, .unmap = true,
				      .fork = true, .exit = true, .extra = extra, .nextra = 4 };
	struct sim *s = build();
	struct wl_rng rng = wl_rng_stream(11, 0);
	static struct sim_step steps[4096];

	for (int i = 0; i < 3000; i++) {
		size_t n = sim_enabled_steps(s, &alpha, steps, 4096);
		struct sim_step st;
		struct sim *c;
		int64_t v[TRACE_COUNTER_COUNT];

		ck_assert_uint_gt(n, 0);
		ck_assert_uint_le(n, 4096);
		/* mostly ksmd, so that merging happens between the user's steps */
		st = steps[0].kind == SIM_STEP_KSMD && wl_rng_below(&rng, 3)
			     ? steps[0] : steps[wl_rng_below(&rng, n)];
		if (st.kind == SIM_STEP_FORK && sim_nprocesses(s) > 6)
			continue;
		c = sim_clone(s);
		sim_apply(s, &st);
		sim_apply(c, &st);
		ck_assert(sim_equal(s, c));
		sim_free(c);
		sim_counters(s, v);
		for (int k = 0; k < TRACE_COUNTER_COUNT; k++)
			if (k != TRACE_GENERAL_PROFIT)
				ck_assert_int_ge(v[k], 0);
	}
	sim_free(s);
}
END_TEST

/* --- the driver ----------------------------------------------------------------- */

static struct workload *parse(const char *text)
{
	struct workload *wl;
	struct wl_error err;

	if (wl_parse_buffer(text, strlen(text), "t.wl", &wl, &err) != 0)
		ck_abort_msg("%s", err.text);
	return wl;
}

static struct trace *run_ok(const struct workload *wl, bool per_batch)
{
	struct sim_run_options opt = { .per_batch = per_batch };
	struct trace *t;
	char err[512];

	if (sim_run_workload(wl, &opt, &t, err, sizeof(err)) != 0)
		ck_abort_msg("run failed: %s", err);
	return t;
}

/*
 * The 6.12 row says: as 6.18, without the 6.14 ksm_stat lines. A run that
 * forks, writes, unmerges and exits (every path a row could change) gives
 * the same trace under both, but for those two fields, which read 0.
 */
START_TEST(kernel_rows_change_only_what_they_say)
{
	static const char text[] = "[global]\nkernel = %s\nscans = 6\nmax_page_sharing = 8\n"
				   "use_zero_pages = 1\n"
				   "[region a]\npages = 64\nfill = groups\ngroups = 16x3,16x4,16x5,16x6\n"
				   "[region z]\npages = 16\nfill = zero\n"
				   "[writer w]\nregion = a\npages = every:5\nvalue = fresh\n"
				   "when = after-scan:2\n"
				   "[event f]\nat = after-scan:3\naction = fork\nprocess = main\n"
				   "child = kid\n"
				   "[event u]\nat = after-scan:4\naction = unmerge\nregion = z\n"
				   "process = kid\n"
				   "[event x]\nat = after-scan:5\naction = exit\nprocess = kid\n";
	char buf[1024];
	struct workload *wl18, *wl12;
	struct trace *t18, *t12;

	snprintf(buf, sizeof(buf), text, "6.18");
	wl18 = parse(buf);
	snprintf(buf, sizeof(buf), text, "6.12");
	wl12 = parse(buf);
	t18 = run_ok(wl18, false);
	t12 = run_ok(wl12, false);
	ck_assert_uint_eq(t18->nrows, t12->nrows);
	ck_assert_str_eq(t12->kernel, "6.12");
	for (size_t i = 0; i < t18->nrows; i++) {
		const struct trace_row *a = &t18->row[i], *b = &t12->row[i];

		for (int c = 0; c < TRACE_COUNTER_COUNT; c++)
			ck_assert_msg(a->counter[c] == b->counter[c], "row %zu %s: %lld vs %lld", i,
				      trace_counter_name(c), (long long)a->counter[c],
				      (long long)b->counter[c]);
		for (size_t p = 0; p < t18->nprocs; p++)
			for (int f = 0; f < TRACE_PROC_FIELD_COUNT; f++) {
				bool lacks = !wl_kernel_exports(WL_KERNEL_6_12,
								trace_proc_field_name(f), NULL);

				ck_assert_msg(b->proc[p].field[f] ==
						      (lacks ? 0 : a->proc[p].field[f]),
					      "row %zu proc %zu %s", i, p, trace_proc_field_name(f));
			}
	}
	/* and the lines 6.12 lacks were not all 0 under 6.18 */
	ck_assert_int_eq(t18->row[1].proc[0].field[TRACE_KSM_MERGEABLE], 1);
	trace_free(t18);
	trace_free(t12);
	wl_free(wl18);
	wl_free(wl12);
}
END_TEST

START_TEST(a_run_has_a_row_per_full_scan)
{
	struct workload *wl = parse("[global]\nscans = 4\nmax_page_sharing = 16\n"
				    "[region a]\npages = 1000\nfill = same\nvalue = 9\n");
	struct trace *t = run_ok(wl, false);

	/* scan 0 (after setup) and four full scans */
	ck_assert_uint_eq(t->nrows, 5);
	for (size_t i = 0; i < 5; i++) {
		ck_assert_uint_eq(t->row[i].scan, i);
		ck_assert_int_eq(t->row[i].kind, TRACE_ROW_SCAN);
		ck_assert_int_eq(t->row[i].counter[TRACE_FULL_SCANS], (int64_t)i);
		ck_assert(t->row[i].proc[0].present);
	}
	ck_assert_int_eq(t->row[0].counter[TRACE_PAGES_SCANNED], 0);
	ck_assert_int_eq(t->row[0].proc[0].field[TRACE_KSM_MERGEABLE], 1);
	ck_assert_int_eq(t->row[2].counter[TRACE_PAGES_SHARED], 63);
	ck_assert_int_eq(t->row[2].counter[TRACE_PAGES_SHARING], 937);
	ck_assert_int_eq(t->row[2].counter[TRACE_STABLE_NODE_DUPS], 63);
	ck_assert(t->row[4].time_ns > t->row[1].time_ns);
	ck_assert_str_eq(t->source, "sim");
	ck_assert(t->time_simulated);
	trace_free(t);
	wl_free(wl);
}
END_TEST

START_TEST(per_batch_rows_come_between_scans)
{
	struct workload *wl = parse("[global]\nscans = 2\npages_to_scan = 30\n"
				    "[region a]\npages = 100\nfill = unique\n");
	struct trace *t = run_ok(wl, true);
	size_t batches = 0, scans = 0;

	for (size_t i = 0; i < t->nrows; i++) {
		if (t->row[i].kind == TRACE_ROW_BATCH)
			batches++;
		else
			scans++;
	}
	ck_assert_uint_eq(scans, 3); /* 0, 1, 2 */
	/* 100 pages at 30 a batch: 4 batches, the wrap ends the 4th (10 pages) */
	ck_assert_uint_eq(batches, 8);
	trace_free(t);
	wl_free(wl);
}
END_TEST

START_TEST(runs_are_deterministic)
{
	struct workload *wl = parse(
		"[global]\nscans = 6\nseed = 9\n"
		"[region a]\npages = 300\nfill = groups\ngroups = 100x1,100x2,100x3\n"
		"[writer w]\nregion = a\npages = random:40\noffset = random:0-4088\n"
		"value = fresh\nwhen = every-scan\nuntil = 3\n");
	struct trace *a = run_ok(wl, false), *b = run_ok(wl, false);

	ck_assert(trace_equal(a, b));
	trace_free(a);
	trace_free(b);
	wl_free(wl);
}
END_TEST

START_TEST(event_outcomes_are_recorded)
{
	struct workload *wl = parse(
		"[global]\nscans = 4\n[region a]\npages = 10\nfill = same\nvalue = 1\n"
		"[event busy]\nat = after-scan:2\naction = set\nset = max_page_sharing=10\n"
		"expect = EBUSY\n"
		"[event stop]\nat = after-scan:2\naction = run\nrun = 2\n"
		"[event go]\nat = after-scan:2\naction = run\nrun = 1\n"
		"[event now]\nat = after-scan:2\naction = set\nset = max_page_sharing=10\n");
	struct trace *t = run_ok(wl, false);

	ck_assert_uint_eq(t->noutcomes, 4);
	ck_assert_str_eq(t->outcome[0].event, "busy");
	ck_assert_int_eq(t->outcome[0].error, EBUSY);
	ck_assert_int_eq(t->outcome[3].error, 0);
	/* run = 2 reset the kernel's full_scans; the trace keeps counting */
	ck_assert_uint_eq(t->row[3].scan, 3);
	ck_assert_int_eq(t->row[3].counter[TRACE_FULL_SCANS], 1);
	ck_assert_int_eq(t->row[3].counter[TRACE_PAGES_VOLATILE], 10);
	ck_assert_int_eq(t->row[4].counter[TRACE_PAGES_SHARING], 9);
	trace_free(t);
	wl_free(wl);
}
END_TEST

START_TEST(an_unexpected_answer_fails_the_run)
{
	struct workload *wl = parse(
		"[global]\nscans = 4\n[region a]\npages = 10\nfill = same\nvalue = 1\n"
		"[event busy]\nat = after-scan:2\naction = set\nset = max_page_sharing=10\n");
	struct sim_run_options opt = { 0 };
	struct trace *t;
	char err[512];

	ck_assert_int_eq(sim_run_workload(wl, &opt, &t, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "[event busy] after scan 2: the store answered EBUSY, the workload "
			      "expects ok");
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->nrows, 3); /* scans 0, 1, 2: the failure came after 2 */
	trace_free(t);
	wl_free(wl);
}
END_TEST

START_TEST(forked_and_exited_processes_come_and_go)
{
	struct workload *wl = parse(
		"[global]\nscans = 5\n[region a]\npages = 10\nfill = same\nvalue = 1\n"
		"[event f]\nat = after-scan:2\naction = fork\nprocess = main\nchild = kid\n"
		"[event x]\nat = after-scan:3\naction = exit\nprocess = kid\n");
	struct trace *t = run_ok(wl, false);

	ck_assert_uint_eq(t->nprocs, 2);
	ck_assert(!t->row[2].proc[1].present);
	ck_assert(t->row[3].proc[1].present);
	ck_assert_int_eq(t->row[3].proc[1].field[TRACE_KSM_MERGING_PAGES], 10);
	ck_assert_int_eq(t->row[3].counter[TRACE_PAGES_SHARING], 19);
	ck_assert(!t->row[4].proc[1].present);
	ck_assert_int_eq(t->row[5].counter[TRACE_PAGES_SHARING], 9);
	trace_free(t);
	wl_free(wl);
}
END_TEST

START_TEST(time_limited_runs_end_with_a_row)
{
	struct workload *wl = parse(
		"[global]\ntime = 2s\n[region a]\npages = 50\nfill = same\nvalue = 1\n"
		"[writer w]\nregion = a\npages = 0-9\nvalue = fresh\nwhen = continuous\nrate = 100\n");
	struct trace *t = run_ok(wl, false);
	const struct trace_row *last = &t->row[t->nrows - 1];

	ck_assert_int_eq(last->kind, TRACE_ROW_BATCH);
	ck_assert_uint_ge(last->time_ns, 2000000000u);
	/* the written pages never settle; the other 40 merge */
	ck_assert_int_eq(last->counter[TRACE_PAGES_SHARED] + last->counter[TRACE_PAGES_SHARING], 40);
	trace_free(t);
	wl_free(wl);
}
END_TEST

START_TEST(every_shipped_workload_runs)
{
	static const char *const files[] = {
		"chains.wl", "chains-straggler.wl", "cow-remerge.wl", "fork.wl",
		"selftests/ksm_tests-C-t0.wl", "selftests/ksm_tests-M-t0.wl",
		"selftests/ksm_tests-M-t1.wl", "selftests/ksm_tests-N-m0-t0.wl",
		"selftests/ksm_tests-U-t0.wl", "selftests/ksm_tests-Z-z0-t0.wl",
		"selftests/ksm_tests-Z-z1-t0.wl", "munmap-middle.wl", "registration-order.wl",
		"smart-scan-unique.wl", "unmerge-part-of-chain.wl", "volatile-half.wl",
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[512];
		struct workload *wl;
		struct wl_error werr;
		struct trace *t;

		snprintf(path, sizeof(path), "%s/workloads/%s", SRCDIR, files[i]);
		if (wl_parse_file(path, &wl, &werr) != 0)
			ck_abort_msg("%s", werr.text);
		t = run_ok(wl, false);
		ck_assert_uint_eq(t->nrows, wl->stop_scans + 1);
		trace_free(t);
		wl_free(wl);
	}
}
END_TEST

/*
 * A smart-scan policy other than upstream names the trace's kernel as the
 * patched kernel carrying it would ("6.18+phased"), the workload's or the
 * one a comparison makes the simulator follow.
 */
START_TEST(a_policy_names_the_traces_kernel)
{
	static const char text[] = "[global]\nscans = 2\nsmart_scan_policy = phased\n"
				   "[region a]\npages = 4\nfill = same\nvalue = 1\n";
	const struct sim_run_options follow = { .override_smart_scan_policy = true,
						.smart_scan_policy = WL_SMART_SCAN_ALIGNED };
	struct workload *wl;
	struct wl_error e;
	struct trace *t;
	char err[256];

	ck_assert_msg(wl_parse_buffer(text, strlen(text), "p.wl", &wl, &e) == 0, "%s", e.text);
	t = run_ok(wl, false);
	ck_assert_str_eq(t->kernel, "6.18+phased");
	ck_assert_int_eq(wl_kernel_smart_scan_policy(t->kernel), WL_SMART_SCAN_PHASED);
	trace_free(t);
	wl->smart_scan_policy = WL_SMART_SCAN_UPSTREAM;
	t = run_ok(wl, false);
	ck_assert_str_eq(t->kernel, "6.18");
	trace_free(t);
	/* compare follows a patched kernel's policy whatever the workload says */
	ck_assert_int_eq(sim_run_workload(wl, &follow, &t, err, sizeof(err)), 0);
	ck_assert_str_eq(t->kernel, "6.18+aligned");
	trace_free(t);
	wl_free(wl);
}
END_TEST

/* Run @wl with each checksum kind (and @detector) and compare every row. */
static void assert_checksums_agree(struct workload *wl, enum wl_detector detector,
				   const char *path)
{
	struct trace *t[WL_CHECKSUM_COUNT];
	char what[600];

	wl->detector = detector;
	for (int k = 0; k < WL_CHECKSUM_COUNT; k++) {
		wl->checksum = (enum wl_checksum)k;
		t[k] = run_ok(wl, true);
	}
	for (int k = 1; k < WL_CHECKSUM_COUNT; k++) {
		snprintf(what, sizeof(what), "%s, detector %s, checksum %s", path,
			 wl_detector_name(detector), wl_checksum_name((enum wl_checksum)k));
		assert_same_rows(t[0], t[k], what);
	}
	for (int k = 0; k < WL_CHECKSUM_COUNT; k++)
		trace_free(t[k]);
}

/*
 * Only the equality of checksums is observable: every shipped workload
 * gives the same trace, batch by batch, whether checksums are content hashes
 * or the kernel's xxh64, with the file's detector and with every detector
 * (runs stopped by time cut to 2 simulated seconds, sim_runs.h).
 */
/* The file's detector and every other one, each with both checksum kinds. */
static void checksums_agree_on(struct workload *wl, const char *path)
{
	enum wl_detector own = wl->detector;

	assert_checksums_agree(wl, own, path);
	for (int det = 0; det < WL_DETECTOR_COUNT; det++)
		if (det != (int)own)
			assert_checksums_agree(wl, (enum wl_detector)det, path);
}

START_TEST(both_checksums_give_every_row_alike)
{
	ck_assert_uint_ge(for_each_shipped_workload(checksums_agree_on), 40);
}
END_TEST

static Suite *sim_state_suite(void)
{
	Suite *s = suite_create("sim_state");
	TCase *tc = tcase_create("value");

	tcase_add_test(tc, a_clone_evolves_identically);
	tcase_add_test(tc, equal_states_built_apart_hash_equal);
	tcase_add_test(tc, equal_bytes_reached_differently_are_equal);
	suite_add_tcase(s, tc);
	tc = tcase_create("steps");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, enabled_steps_follow_the_state);
	tcase_add_test(tc, random_walk_stays_sane_and_deterministic);
	tcase_add_test(tc, chain_index_counts_what_a_walk_finds);
	tcase_add_test(tc, a_chain_choice_known_without_the_walk_is_the_walk_s);
	suite_add_tcase(s, tc);
	tc = tcase_create("driver");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_run_has_a_row_per_full_scan);
	tcase_add_test(tc, kernel_rows_change_only_what_they_say);
	tcase_add_test(tc, per_batch_rows_come_between_scans);
	tcase_add_test(tc, runs_are_deterministic);
	tcase_add_test(tc, event_outcomes_are_recorded);
	tcase_add_test(tc, an_unexpected_answer_fails_the_run);
	tcase_add_test(tc, forked_and_exited_processes_come_and_go);
	tcase_add_test(tc, time_limited_runs_end_with_a_row);
	tcase_add_test(tc, every_shipped_workload_runs);
	tcase_add_test(tc, a_policy_names_the_traces_kernel);
	suite_add_tcase(s, tc);
	tc = tcase_create("checksums");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, both_checksums_give_every_row_alike);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sim_state_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
