/*
 * check_sim_deferred.c - tests of sim/sim_deferred.c: a continuous writer's
 * writes applied when their page is read are not observable. Each workload
 * here runs twice, once with every write applied when due
 * (sim_run_options.eager_writes), and the two traces must agree batch by
 * batch; a second pair of runs compares the machine's whole state (sim_hash)
 * at every scan row. The workloads defer where they can and then make it
 * hard: merges of written pages (their writes go eager, copy on write,
 * and come back), zero pages, THP folios (one dirty bit), every detector,
 * per-node trees, user steps between scans (fork, discard, unmerge, an
 * unmap, another writer taking fresh values), smart scan; and a workload
 * whose writer must redraw an offset, which ends deferral. (The stream's
 * draws at hand and the remainder by multiplication: check_workload.)
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "content.h"
#include "rng.h"
#include "sim_deferred.h"
#include "sim_internal.h"
#include "sim_runs.h"

/* @wl with writes deferred or not, a row a batch, no hook. */
static struct trace *run(const struct workload *wl, bool eager)
{
	struct sim_run_options opt = { .per_batch = true, .eager_writes = eager };
	struct trace *t;
	char err[512];

	if (sim_run_workload(wl, &opt, &t, err, sizeof(err)) != 0)
		ck_abort_msg("run failed: %s", err);
	return t;
}

static struct workload *parse(const char *text)
{
	struct workload *wl;
	struct wl_error e;

	ck_assert_msg(wl_parse_buffer(text, strlen(text), "deferred.wl", &wl, &e) == 0, "%s",
		      e.text);
	return wl;
}

/*
 * @text both ways, row by row; then again with the machine's state hashed
 * at every scan row (the hook reads every page), state by state.
 */
static void check_text(const char *text)
{
	static struct scan_marks eager, late;
	struct workload *wl = parse(text);
	struct trace *a = run(wl, true), *b = run(wl, false);

	assert_same_rows(a, b, text);
	trace_free(a);
	trace_free(b);
	a = run_marked(wl, (struct sim_run_options){ .eager_writes = true }, &eager);
	b = run_marked(wl, (struct sim_run_options){ 0 }, &late);
	ck_assert_uint_gt(eager.n, 1);
	assert_same_runs(a, &eager, b, &late, text);
	trace_free(a);
	trace_free(b);
	wl_free(wl);
}

/* Nai Xia's writer, small: ten writes a page between visits. */
#define NAI_XIA(detector, thp)                                                               \
	"[global]\ntime = 200ms\nsmart_scan = 0\npages_to_scan = 300\nsleep_millisecs = 0\n"   \
	"detector = " detector "\n"                                                            \
	"[region area]\npages = 4096\nfill = same\nvalue = 0x0101010101010101\nthp = " thp "\n" \
	"[writer scribble]\nregion = area\npages = all\noffset = random:4000-4088\n"            \
	"value = fresh\nwhen = continuous\nrate = 1000000/s\n"

START_TEST(nai_xia_with_every_detector)
{
	static const char *const detectors[] = { "checksum", "dirty", "hybrid", "partial" };

	for (size_t i = 0; i < sizeof(detectors) / sizeof(detectors[0]); i++) {
		char text[1024];

		snprintf(text, sizeof(text), NAI_XIA("%s", "never"), detectors[i]);
		check_text(text);
		snprintf(text, sizeof(text), NAI_XIA("%s", "always"), detectors[i]);
		check_text(text);
	}
}
END_TEST

/* A slow writer among identical pages: written pages merge, then copy on write. */
START_TEST(merged_pages_take_their_writes_when_due)
{
	check_text("[global]\nscans = 12\nsmart_scan = 0\npages_to_scan = 400\nsleep_millisecs = 5\n"
		   "[region r]\npages = 3000\nfill = same\nvalue = 7\n"
		   "[writer w]\nregion = r\npages = every:3\noffset = 8\nvalue = fresh\n"
		   "when = continuous\nrate = 3000/s\n");
	/* a fixed value: every write to a KSM page copies it, the content the same */
	check_text("[global]\nscans = 12\nsmart_scan = 0\npages_to_scan = 400\nsleep_millisecs = 5\n"
		   "[region r]\npages = 2000\nfill = same\nvalue = 7\n"
		   "[writer w]\nregion = r\npages = all\noffset = 16\nvalue = 7\n"
		   "when = continuous\nrate = 20000/s\n");
	/* THP folios split by merges while the writer goes on */
	check_text("[global]\nscans = 10\nsmart_scan = 0\npages_to_scan = 500\nsleep_millisecs = 5\n"
		   "detector = dirty\n"
		   "[region r]\npages = 2048\nfill = same\nvalue = 9\nthp = always\n"
		   "[writer w]\nregion = r\npages = every:5\noffset = random:0-4088\nvalue = fresh\n"
		   "when = continuous\nrate = 4000/s\n");
}
END_TEST

START_TEST(zero_pages_and_node_trees)
{
	check_text("[global]\nscans = 10\nsmart_scan = 0\npages_to_scan = 400\nsleep_millisecs = 5\n"
		   "use_zero_pages = 1\n"
		   "[region r]\npages = 2000\nfill = same\nvalue = 0\n"
		   "[writer w]\nregion = r\npages = every:2\noffset = 0\nvalue = 0\n"
		   "when = continuous\nrate = 5000/s\n");
	check_text("[global]\nscans = 10\nsmart_scan = 0\npages_to_scan = 400\nsleep_millisecs = 5\n"
		   "merge_across_nodes = 0\n"
		   "[region a]\npages = 1000\nfill = same\nvalue = 3\nnode = 0\n"
		   "[region b]\npages = 1000\nfill = same\nvalue = 3\nnode = 1\n"
		   "[writer w]\nregion = b\npages = all\noffset = random:0-64\nvalue = fresh\n"
		   "when = continuous\nfrom = 2\nuntil = 6\nrate = 8000/s\n");
}
END_TEST

/* Steps between scans read and change pages: they see every write due. */
START_TEST(user_steps_between_scans_see_every_write)
{
	/* a fork shares every page (copy on write), a discard empties some */
	check_text("[global]\nscans = 12\nsmart_scan = 0\npages_to_scan = 500\nsleep_millisecs = 5\n"
		   "[region r]\npages = 1500\nfill = groups\ngroups = 1000x5,500x6\n"
		   "[region s]\npages = 300\nfill = same\nvalue = 5\n"
		   "[writer w]\nregion = r\npages = all\noffset = random:0-200\nvalue = fresh\n"
		   "when = continuous\nrate = 10000/s\n"
		   "[writer every]\nregion = r\npages = 0-99\noffset = 40\nvalue = fresh\n"
		   "when = every-scan\n"
		   "[event f]\nat = after-scan:3\naction = fork\nprocess = main\nchild = kid\n"
		   "[event d]\nat = after-scan:5\naction = discard\nregion = r\npages = 100-199\n"
		   "[event u]\nat = after-scan:6\naction = unmerge\nregion = r\npages = 0-49\n"
		   "[event gone]\nat = after-scan:7\naction = unmap\nregion = s\npages = 0-99\n");
}
END_TEST

/* --- the writer's fresh values, through the API ---------------------------------- */

/* Write @n of @rng's writer on @s now: page j % 64, offset 100 + draw % 50, fresh @fresh. */
static void write_eagerly(struct sim *s, struct wl_rng *rng, uint64_t *j, uint64_t n,
			  uint64_t fresh)
{
	for (uint64_t i = 0; i < n; i++, (*j)++)
		ck_assert_int_eq(sim_write(s, 0, *j % 64, 100 + (uint32_t)wl_rng_below(rng, 50),
					   content_fresh_value(fresh + i)),
				 0);
}

/*
 * Fresh values count on from one issue to the next; where others took some
 * (fresh_first jumps) while writes wait, the writer gives up (EAGAIN: the
 * driver flushes and goes on eagerly); after a flush it starts the count
 * anew. The result is the same machine as every write applied when due.
 */
START_TEST(fresh_values_jump_only_when_nothing_waits)
{
	struct sim *late = test_machine(64, 1), *eager = test_machine(64, 1); /* zeros */
	struct wl_rng rng = wl_rng_stream(11, 0), draws = rng;
	struct sim_deferred_spec spec = { .area = 0, .first = 0, .step = 1, .count = 64,
					  .off_lo = 100, .off_span = 50, .rng = rng,
					  .fresh = true };
	uint64_t issued, j = 0;

	ck_assert_int_eq(sim_deferred_start(late, &spec), 0);
	ck_assert_int_eq(sim_deferred_issue(late, 100, 1000, &issued), 0);
	ck_assert_uint_eq(issued, 100);
	ck_assert_int_eq(sim_deferred_issue(late, 30, 1100, &issued), 0); /* goes on */
	ck_assert_uint_eq(issued, 30);
	write_eagerly(eager, &draws, &j, 130, 1000);
	ck_assert_int_eq(sim_deferred_issue(late, 5, 5000, &issued), EAGAIN);
	ck_assert_uint_eq(issued, 0);
	ck_assert_int_eq(sim_deferred_flush(late), 0);
	ck_assert_uint_eq(sim_hash(late), sim_hash(eager));
	ck_assert_int_eq(sim_deferred_issue(late, 70, 5000, &issued), 0); /* nothing waits */
	ck_assert_uint_eq(issued, 70);
	write_eagerly(eager, &draws, &j, 70, 5000);
	ck_assert_int_eq(sim_deferred_flush(late), 0);
	ck_assert_uint_eq(sim_hash(late), sim_hash(eager));
	sim_deferred_stop(late, &issued);
	ck_assert_uint_eq(issued, 200);
	sim_free(late);
	sim_free(eager);
}
END_TEST

/* A page smart scan skips keeps its writes waiting: the skip reads only the rmap_item. */
START_TEST(smart_scan_skips_what_the_writer_leaves_alone)
{
	static const char *const policies[] = { "upstream", "aligned", "phased" };

	check_text("[global]\nscans = 14\nsmart_scan = 1\npages_to_scan = 600\nsleep_millisecs = 2\n"
		   "[region r]\npages = 3000\nfill = unique\n"
		   "[writer w]\nregion = r\npages = every:7\noffset = random:100-120\n"
		   "value = fresh\nwhen = continuous\nrate = 2000/s\n");
	for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++) {
		char text[1024];

		snprintf(text, sizeof(text),
			 "[global]\ntime = 1s\nsmart_scan = 1\nsmart_scan_policy = %s\n"
			 "pages_to_scan = 500\nsleep_millisecs = 5\n"
			 "[region area]\npages = 4096\nfill = same\nvalue = 1\n"
			 "[writer scribble]\nregion = area\npages = all\n"
			 "offset = random:4000-4088\nvalue = fresh\nwhen = continuous\n"
			 "rate = 20000/s\n",
			 policies[i]);
		check_text(text);
	}
}
END_TEST

/* --- a redraw ------------------------------------------------------------------ */

/* The stream whose next draw is @x. */
static struct wl_rng stream_drawing_next(uint64_t x)
{
	return (struct wl_rng){ wl_rng_unmix(x) - WL_RNG_GAMMA };
}

/*
 * A redraw (a draw below 2^64 mod span: once in 10^16 writes) shifts every
 * later write's draw: the writer stops deferring there and goes on eagerly.
 * The workload's seed is chosen so that its writer's 5000th write draws 0
 * (below the limit of span 4089).
 */
START_TEST(a_redraw_ends_deferral_where_it_falls)
{
	const uint64_t j = 5000;
	struct wl_rng want = stream_drawing_next(0); /* the state before a draw of 0 */
	uint64_t seed;
	struct workload *wl;
	struct wl_rng rng;
	char text[1024];

	want.state -= j * WL_RNG_GAMMA;         /* the writer's stream: draw j is 0 */
	seed = stream_drawing_next(want.state).state; /* wl_rng_stream(seed, 0) is it */
	snprintf(text, sizeof(text),
		 "[global]\nseed = %llu\ntime = 100ms\nsmart_scan = 0\npages_to_scan = 200\n"
		 "sleep_millisecs = 0\n"
		 "[region r]\npages = 1024\nfill = same\nvalue = 3\n"
		 "[writer w]\nregion = r\npages = all\noffset = random:0-4088\nvalue = fresh\n"
		 "when = continuous\nrate = 200000/s\n",
		 (unsigned long long)seed);
	wl = parse(text);
	rng = wl_writer_rng(wl, 0);
	ck_assert_uint_eq(wl_rng_peek(&rng, j), 0);
	ck_assert_uint_ne(wl_rng_peek(&rng, j + 1), 0);
	wl_free(wl);
	check_text(text);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sim_deferred");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, nai_xia_with_every_detector);
	tcase_add_test(tc, merged_pages_take_their_writes_when_due);
	tcase_add_test(tc, zero_pages_and_node_trees);
	tcase_add_test(tc, user_steps_between_scans_see_every_write);
	tcase_add_test(tc, fresh_values_jump_only_when_nothing_waits);
	tcase_add_test(tc, smart_scan_skips_what_the_writer_leaves_alone);
	tcase_add_test(tc, a_redraw_ends_deferral_where_it_falls);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
