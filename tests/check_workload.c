/*
 * check_workload.c - tests of the workload language (workload/): every key
 * and value form, the normalized round trip, page selections, the schedule of
 * steps, the random streams (any draw at hand, remainders by multiplication),
 * and a table of bad inputs each asserting the exact error message
 * (file:line, section, key and what is wrong).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <unistd.h>

#include "wl_internal.h" /* also the value parsers */

/* Parse @text as "t.wl"; fail the test with the error if it does not parse. */
static struct workload *parse_ok(const char *text)
{
	struct workload *wl;
	struct wl_error err;

	if (wl_parse_buffer(text, strlen(text), "t.wl", &wl, &err) != 0)
		ck_abort_msg("unexpected parse error: %s", err.text);
	return wl;
}

/* The error message @text produces, or "" if it parses. */
static const char *parse_error(const char *text)
{
	static struct wl_error err;
	struct workload *wl;

	if (wl_parse_buffer(text, strlen(text), "t.wl", &wl, &err) == 0) {
		wl_free(wl);
		return "";
	}
	ck_assert_ptr_null(wl);
	return err.text;
}

#define BASE "[global]\nscans = 3\n[region a]\npages = 10\nfill = same\nvalue = 1\n"

/* Print, reparse, and require an equal workload and identical text. */
static void assert_round_trip(const struct workload *wl)
{
	char *buf = NULL, *buf2 = NULL;
	size_t len = 0, len2 = 0;
	FILE *f = open_memstream(&buf, &len);
	struct workload *again, *third;
	struct wl_error err;

	ck_assert_int_eq(wl_print(wl, f), 0);
	fclose(f);
	if (wl_parse_buffer(buf, len, wl->path, &again, &err) != 0)
		ck_abort_msg("normalized output does not parse: %s\n%s", err.text, buf);
	ck_assert_msg(wl_equal(wl, again), "round trip changed the workload:\n%s", buf);
	f = open_memstream(&buf2, &len2);
	wl_print(again, f);
	fclose(f);
	ck_assert_str_eq(buf, buf2);
	ck_assert_int_eq(wl_parse_buffer(buf2, len2, "x", &third, &err), 0);
	wl_free(third);
	wl_free(again);
	free(buf);
	free(buf2);
}

/* --- units ---------------------------------------------------------------- */

START_TEST(sizes_are_base_2)
{
	uint64_t b;

	ck_assert_int_eq(wl_parse_size("4k", &b), 0);
	ck_assert_uint_eq(b, 4096);
	ck_assert_int_eq(wl_parse_size("100m", &b), 0);
	ck_assert_uint_eq(b, 100u << 20);
	ck_assert_int_eq(wl_parse_size("2g", &b), 0);
	ck_assert_uint_eq(b, UINT64_C(2) << 30);
	ck_assert_int_eq(wl_parse_size("1MiB", &b), 0);
	ck_assert_uint_eq(b, 1u << 20);
	ck_assert_int_eq(wl_parse_size("3KB", &b), 0);
	ck_assert_uint_eq(b, 3072);
	ck_assert_int_eq(wl_parse_size("1t", &b), 0);
	ck_assert_uint_eq(b, UINT64_C(1) << 40);
	ck_assert_int_eq(wl_parse_size("8192", &b), 0);
	ck_assert_uint_eq(b, 8192);
	ck_assert_int_eq(wl_parse_size("0x1000", &b), 0);
	ck_assert_uint_eq(b, 4096);
	ck_assert_int_eq(wl_parse_size("4 k", &b), -1);
	ck_assert_int_eq(wl_parse_size("4x", &b), -1);
	ck_assert_int_eq(wl_parse_size("", &b), -1);
	ck_assert_int_eq(wl_parse_size("-4k", &b), -1);
	ck_assert_int_eq(wl_parse_size("99999999999999999999", &b), -1);
	ck_assert_int_eq(wl_parse_size("17179869184g", &b), -1); /* overflows */
}
END_TEST

START_TEST(times_have_suffixes)
{
	uint64_t ns;

	ck_assert_int_eq(wl_parse_time("10s", &ns), 0);
	ck_assert_uint_eq(ns, UINT64_C(10000000000));
	ck_assert_int_eq(wl_parse_time("250ms", &ns), 0);
	ck_assert_uint_eq(ns, UINT64_C(250000000));
	ck_assert_int_eq(wl_parse_time("2m", &ns), 0);
	ck_assert_uint_eq(ns, UINT64_C(120000000000));
	ck_assert_int_eq(wl_parse_time("3", &ns), 0);
	ck_assert_uint_eq(ns, UINT64_C(3000000000));
	ck_assert_int_eq(wl_parse_time("1h", &ns), 0);
	ck_assert_uint_eq(ns, UINT64_C(3600000000000));
	ck_assert_int_eq(wl_parse_time("7us", &ns), 0);
	ck_assert_uint_eq(ns, 7000);
	ck_assert_int_eq(wl_parse_time("5ns", &ns), 0);
	ck_assert_uint_eq(ns, 5);
	ck_assert_int_eq(wl_parse_time("5 s", &ns), -1);
	ck_assert_int_eq(wl_parse_time("1d", &ns), -1);
	ck_assert_int_eq(wl_parse_time("s", &ns), -1);
}
END_TEST

START_TEST(knobs_follow_the_kernel)
{
	uint64_t v;
	char why[128];

	ck_assert_int_eq(wl_knob_lookup("max_page_sharing"), WL_KNOB_MAX_PAGE_SHARING);
	ck_assert_int_eq(wl_knob_lookup("run"), -1);
	ck_assert_int_eq(wl_knob_parse(WL_KNOB_MAX_PAGE_SHARING, "2", &v, why, sizeof(why)), 0);
	ck_assert_int_eq(wl_knob_parse(WL_KNOB_MAX_PAGE_SHARING, "1", &v, why, sizeof(why)), EINVAL);
	ck_assert_str_eq(why, "at least 2 (the kernel says EINVAL)");
	ck_assert_int_eq(wl_knob_parse(WL_KNOB_MAX_PAGE_SHARING, "2147483648", &v, why,
				       sizeof(why)), ERANGE);
	ck_assert_str_eq(why, "at most 2147483647 (the kernel says ERANGE)");
	ck_assert_int_eq(wl_knob_parse(WL_KNOB_USE_ZERO_PAGES, "yes", &v, why, sizeof(why)), 0);
	ck_assert_uint_eq(v, 1);
	ck_assert_int_eq(wl_knob_parse(WL_KNOB_SMART_SCAN, "off", &v, why, sizeof(why)), 0);
	ck_assert_uint_eq(v, 0);
	/* kstrtobool also takes e(nable)/d(isable); kstrtouint a leading '+' */
	ck_assert_int_eq(wl_knob_parse(WL_KNOB_SMART_SCAN, "enable", &v, why, sizeof(why)), 0);
	ck_assert_uint_eq(v, 1);
	ck_assert_int_eq(wl_knob_parse(WL_KNOB_SMART_SCAN, "D", &v, why, sizeof(why)), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(wl_knob_parse(WL_KNOB_PAGES_TO_SCAN, "+5", &v, why, sizeof(why)), 0);
	ck_assert_uint_eq(v, 5);
	ck_assert_int_eq(wl_knob_parse(WL_KNOB_PAGES_TO_SCAN, " 5", &v, why, sizeof(why)), EINVAL);
	ck_assert_int_eq(wl_knob_parse(WL_KNOB_USE_ZERO_PAGES, "2", &v, why, sizeof(why)), EINVAL);
	ck_assert_int_eq(wl_knob_parse(WL_KNOB_SLEEP_MILLISECS, "4294967296", &v, why,
				       sizeof(why)), EINVAL);
	ck_assert_int_eq(wl_knob_parse(WL_KNOB_SLEEP_MILLISECS, "0x10", &v, why, sizeof(why)), EINVAL);
	ck_assert_int_eq(wl_knob_parse(WL_KNOB_ADVISOR_MODE, "scan-time", &v, why, sizeof(why)), 0);
	ck_assert_uint_eq(v, WL_ADVISOR_SCAN_TIME);
	ck_assert_int_eq(wl_knob_parse(WL_KNOB_ADVISOR_TARGET_SCAN_TIME, "0", &v, why,
				       sizeof(why)), EINVAL);
	ck_assert_int_eq(wl_knob_parse(WL_KNOB_MERGE_ACROSS_NODES, "2", &v, why, sizeof(why)), EINVAL);
	ck_assert_int_eq(wl_knob_parse(WL_KNOB_MERGE_ACROSS_NODES, "99999999999999999999", &v, why,
				       sizeof(why)), ERANGE);
	ck_assert_int_eq(wl_knob_parse(WL_KNOB_PAGES_TO_SCAN, "0", &v, why, sizeof(why)), 0);
}
END_TEST

/* --- every key --------------------------------------------------------------- */

START_TEST(global_keys)
{
	struct workload *wl = parse_ok(
		"[global]\n"
		"description = every global key\n"
		"upstream = ksm_functional_tests test_prot_none\n"
		"requires = reaches_prot_none,unshares_zero_pages\n"
		"kernel = 6.10\n"
		"detector = hybrid\n"
		"thp_dirty = split\n"
		"smart_scan_policy = phased\n"
		"scans = 9\n"
		"timeout = 90s\n"
		"seed = 0x2a\n"
		"pages_to_scan = 5000\n"
		"sleep_millisecs = 10\n"
		"max_page_sharing = 16\n"
		"merge_across_nodes = 0\n"
		"use_zero_pages = 1\n"
		"smart_scan = n\n"
		"stable_node_chains_prune_millisecs = 100\n"
		"advisor_mode = none\n"
		"advisor_max_cpu = 50\n"
		"advisor_min_pages_to_scan = 600\n"
		"advisor_max_pages_to_scan = 9000\n"
		"advisor_target_scan_time = 10\n"
		"[region a]\npages = 1\nfill = zero\n");

	ck_assert_str_eq(wl->description, "every global key");
	ck_assert_str_eq(wl->upstream, "ksm_functional_tests test_prot_none");
	ck_assert_uint_eq(wl->requires, (1u << WL_FACT_REACHES_PROT_NONE) |
						(1u << WL_FACT_UNSHARES_ZERO_PAGES));
	ck_assert_int_eq(wl->kernel, WL_KERNEL_6_10);
	ck_assert_int_eq(wl->detector, WL_DETECTOR_HYBRID);
	ck_assert_int_eq(wl->thp_dirty, WL_THP_DIRTY_SPLIT);
	ck_assert_int_eq(wl->smart_scan_policy, WL_SMART_SCAN_PHASED);
	ck_assert_uint_eq(wl->smart_scan_policy_line, 8);
	ck_assert_int_eq(wl->stop, WL_STOP_SCANS);
	ck_assert_uint_eq(wl->stop_scans, 9);
	ck_assert_uint_eq(wl->timeout_ns, UINT64_C(90000000000));
	ck_assert_uint_eq(wl->seed, 42);
	ck_assert_uint_eq(wl->knobs[WL_KNOB_PAGES_TO_SCAN], 5000);
	ck_assert_uint_eq(wl->knobs[WL_KNOB_SLEEP_MILLISECS], 10);
	ck_assert_uint_eq(wl->knobs[WL_KNOB_MAX_PAGE_SHARING], 16);
	ck_assert_uint_eq(wl->knobs[WL_KNOB_MERGE_ACROSS_NODES], 0);
	ck_assert_uint_eq(wl->knobs[WL_KNOB_USE_ZERO_PAGES], 1);
	ck_assert_uint_eq(wl->knobs[WL_KNOB_SMART_SCAN], 0);
	ck_assert_uint_eq(wl->knobs[WL_KNOB_STABLE_NODE_CHAINS_PRUNE_MILLISECS], 100);
	ck_assert_uint_eq(wl->knobs[WL_KNOB_ADVISOR_MAX_CPU], 50);
	ck_assert_uint_eq(wl->knobs[WL_KNOB_ADVISOR_MIN_PAGES_TO_SCAN], 600);
	ck_assert_uint_eq(wl->knobs[WL_KNOB_ADVISOR_MAX_PAGES_TO_SCAN], 9000);
	ck_assert_uint_eq(wl->knobs[WL_KNOB_ADVISOR_TARGET_SCAN_TIME], 10);
	ck_assert(wl->deterministic);
	assert_round_trip(wl);
	wl_free(wl);
}
END_TEST

START_TEST(global_defaults_are_the_kernels)
{
	struct workload *wl = parse_ok(BASE);

	ck_assert_int_eq(wl->kernel, WL_KERNEL_6_18);
	ck_assert_int_eq(wl->detector, WL_DETECTOR_CHECKSUM);
	ck_assert_int_eq(wl->thp_dirty, WL_THP_DIRTY_ALL);
	ck_assert_int_eq(wl->smart_scan_policy, WL_SMART_SCAN_UPSTREAM);
	ck_assert_uint_eq(wl->smart_scan_policy_line, 0);
	ck_assert(wl->regions[0].dirty_tracking);
	ck_assert_uint_eq(wl->knobs[WL_KNOB_PAGES_TO_SCAN], 100);
	ck_assert_uint_eq(wl->knobs[WL_KNOB_SLEEP_MILLISECS], 20);
	ck_assert_uint_eq(wl->knobs[WL_KNOB_MAX_PAGE_SHARING], 256);
	ck_assert_uint_eq(wl->knobs[WL_KNOB_MERGE_ACROSS_NODES], 1);
	ck_assert_uint_eq(wl->knobs[WL_KNOB_USE_ZERO_PAGES], 0);
	ck_assert_uint_eq(wl->knobs[WL_KNOB_SMART_SCAN], 1);
	ck_assert_uint_eq(wl->knobs[WL_KNOB_STABLE_NODE_CHAINS_PRUNE_MILLISECS], 2000);
	ck_assert_uint_eq(wl->knobs[WL_KNOB_ADVISOR_MODE], WL_ADVISOR_NONE);
	ck_assert_uint_eq(wl->seed, 1);
	ck_assert_uint_eq(wl->timeout_ns, UINT64_C(300000000000));
	ck_assert_ptr_null(wl->description);
	wl_free(wl);
}
END_TEST

/* wl_print_given: only the knobs the file gave, and it parses back equal. */
START_TEST(print_given_keeps_only_given_knobs)
{
	struct workload *wl = parse_ok("[global]\nscans = 2\nmax_page_sharing = 16\n"
				       "[region a]\npages = 4\nfill = same\nvalue = 1\n");
	struct workload *again;
	struct wl_error err;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_int_eq(wl_print_given(wl, f), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "max_page_sharing = 16\n"));
	ck_assert_ptr_null(strstr(text, "smart_scan"));
	ck_assert_ptr_null(strstr(text, "pages_to_scan"));
	ck_assert_int_eq(wl_parse_buffer(text, len, "again.wl", &again, &err), 0);
	ck_assert(wl_equal(wl, again));
	ck_assert(again->knob_given[WL_KNOB_MAX_PAGE_SHARING]);
	ck_assert(!again->knob_given[WL_KNOB_SMART_SCAN]);
	wl_free(again);
	wl_free(wl);
	free(text);
}
END_TEST

/* A built kernel's row sets [global] keys over a struct copy (guest.h's
 * KG_PATCHES): the copy changes, the original does not, and what a row may
 * not change, or gets wrong, is refused naming the row. */
START_TEST(settings_apply_over_a_copy)
{
	struct workload *wl = parse_ok("[global]\nscans = 2\nsmart_scan = 1\n"
				       "[region a]\npages = 4\nfill = same\nvalue = 1\n");
	struct workload copy = *wl;
	struct wl_error err;

	ck_assert_int_eq(wl_apply_global(&copy, "smart_scan = 0\ndetector = dirty\n", "row",
					 &err), 0);
	ck_assert_uint_eq(copy.knobs[WL_KNOB_SMART_SCAN], 0);
	ck_assert_int_eq(copy.detector, WL_DETECTOR_DIRTY);
	ck_assert_uint_eq(wl->knobs[WL_KNOB_SMART_SCAN], 1);
	ck_assert_int_eq(wl->detector, WL_DETECTOR_CHECKSUM);
	ck_assert_str_eq(copy.path, "t.wl");
	copy = *wl;
	ck_assert_int_eq(wl_apply_global(&copy, "scans = 5", "row", &err), -1);
	ck_assert_str_eq(err.text, "row:1: [global] scans = 5: is the workload's own: a kernel's "
				   "settings choose policies and knobs only");
	ck_assert_int_eq(wl_apply_global(&copy, "smart_scan = 0\nsmart_scna = 1", "row", &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "row:2: "));
	ck_assert_int_eq(wl_apply_global(&copy, "pages_to_scan = 0", "row", &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "row: "));
	ck_assert_str_eq(copy.path, "t.wl");
	wl_free(wl);
}
END_TEST

START_TEST(advisor_starts_from_min_pages)
{
	struct workload *wl = parse_ok("[global]\ntime = 2m\nadvisor_mode = scan-time\n"
				       "advisor_min_pages_to_scan = 700\n"
				       "[region a]\nsize = 1m\nfill = unique\n");

	ck_assert_uint_eq(wl->knobs[WL_KNOB_PAGES_TO_SCAN], 700);
	ck_assert_int_eq(wl->stop, WL_STOP_TIME);
	ck_assert_uint_eq(wl->stop_time_ns, UINT64_C(120000000000));
	ck_assert(!wl->deterministic);
	assert_round_trip(wl);
	wl_free(wl);
}
END_TEST

START_TEST(region_keys)
{
	struct workload *wl = parse_ok(
		"[global]\nscans = 2\n"
		"[region a]\nprocess = vm1\nsize = 2MiB\nfill = same\nvalue = 0x10\n"
		"node = 1\nthp = always\nmerge = madvise\n"
		"[region b]\nprocess = vm2\npages = 4\nfill = unique\nmerge = prctl\n"
		"[region c]\nprocess = vm1\nfill = groups\ngroups = 3x1,1x2,2x0\nnode = any\n"
		"[region d]\nprocess = vm2\npages = 3\nfill = unique\nmerge = prctl\n"
		"[region e]\nprocess = vm1\npages = 2\nfill = zero\nthp = never\n"
		"dirty_tracking = no\n"
		"[region f]\nprocess = vm1\npages = 2\nfill = none\nmerge = none\n");
	uint64_t v;

	ck_assert_uint_eq(wl->nregions, 6);
	ck_assert_uint_eq(wl->nprocs, 2);
	ck_assert_str_eq(wl->procs[wl->regions[0].process].name, "vm1");
	ck_assert_str_eq(wl->procs[wl->regions[1].process].name, "vm2");
	ck_assert_uint_eq(wl->regions[0].pages, 512);
	ck_assert_uint_eq(wl->regions[0].value, 16);
	ck_assert_int_eq(wl->regions[0].node, 1);
	ck_assert_int_eq(wl->regions[0].thp, WL_THP_ALWAYS);
	ck_assert_int_eq(wl->regions[1].merge, WL_MERGE_PRCTL);
	ck_assert_uint_eq(wl->regions[2].pages, 6);
	ck_assert_int_eq(wl->regions[2].node, -1);
	ck_assert(wl_region_initial_value(&wl->regions[2], 2, &v));
	ck_assert_uint_eq(v, 1);
	ck_assert(wl_region_initial_value(&wl->regions[2], 3, &v));
	ck_assert_uint_eq(v, 2);
	ck_assert(wl_region_initial_value(&wl->regions[2], 5, &v));
	ck_assert_uint_eq(v, 0);
	/* unique values: distinct across regions, fresh values start after them */
	ck_assert(wl_region_initial_value(&wl->regions[1], 3, &v));
	ck_assert_uint_eq(v, content_fresh_value(3));
	ck_assert(wl_region_initial_value(&wl->regions[3], 0, &v));
	ck_assert_uint_eq(v, content_fresh_value(4));
	ck_assert_uint_eq(wl->fresh_start, 7);
	ck_assert(wl_region_initial_value(&wl->regions[4], 1, &v));
	ck_assert_uint_eq(v, 0);
	ck_assert(!wl_region_initial_value(&wl->regions[5], 0, &v));
	ck_assert(!wl->regions[4].dirty_tracking);
	ck_assert(wl->regions[3].dirty_tracking);
	assert_round_trip(wl);
	wl_free(wl);
}
END_TEST

START_TEST(writer_keys)
{
	struct workload *wl = parse_ok(
		"[global]\ntime = 10s\n"
		"[region a]\npages = 100\nfill = same\nvalue = 1\n"
		"[writer w1]\nregion = a\npages = 0-9,20,30-31\noffset = 4088\nvalue = 7\n"
		"when = every-scan\nfrom = 2\nuntil = 5\n"
		"[writer w2]\nregion = a\nprocess = main\npages = every:3+1\noffset = random:4000-4088\n"
		"value = fresh\nwhen = continuous\nrate = 5000/s\n"
		"[writer w3]\nregion = a\npages = random:10\nwhen = after-scan:4\n");
	const struct wl_writer *w1 = &wl->writers[0], *w2 = &wl->writers[1], *w3 = &wl->writers[2];

	ck_assert_uint_eq(wl->nwriters, 3);
	ck_assert_int_eq(w1->pages.kind, WL_SEL_LIST);
	ck_assert_uint_eq(w1->pages.nranges, 3);
	ck_assert_uint_eq(wl_pagesel_count(&w1->pages, 100), 13);
	ck_assert_uint_eq(w1->offset.lo, 4088);
	ck_assert(!w1->value.fresh);
	ck_assert_uint_eq(w1->value.value, 7);
	ck_assert_int_eq(w1->when, WL_WHEN_EVERY_SCAN);
	ck_assert_uint_eq(w1->from_scan, 2);
	ck_assert_uint_eq(w1->until_scan, 5);
	ck_assert_int_eq(w2->pages.kind, WL_SEL_EVERY);
	ck_assert_uint_eq(w2->pages.step, 3);
	ck_assert_uint_eq(w2->pages.start, 1);
	ck_assert_uint_eq(wl_pagesel_count(&w2->pages, 100), 33);
	ck_assert_uint_eq(w2->offset.lo, 4000);
	ck_assert_uint_eq(w2->offset.hi, 4088);
	ck_assert(w2->value.fresh);
	ck_assert_int_eq(w2->when, WL_WHEN_CONTINUOUS);
	ck_assert_uint_eq(w2->rate, 5000);
	ck_assert_uint_eq(w2->from_scan, 0);
	ck_assert_int_eq(w3->when, WL_WHEN_AFTER_SCAN);
	ck_assert_uint_eq(w3->from_scan, 4);
	ck_assert_uint_eq(w3->until_scan, 4);
	ck_assert_int_eq(w3->pages.kind, WL_SEL_RANDOM);
	ck_assert(w3->value.fresh);
	ck_assert_uint_eq(w3->offset.lo, 0);
	ck_assert(!wl->deterministic);
	assert_round_trip(wl);
	wl_free(wl);
}
END_TEST

START_TEST(event_keys)
{
	struct workload *wl = parse_ok(
		"[global]\nscans = 8\n"
		"[region a]\npages = 10\nfill = same\nvalue = 1\nmerge = none\n"
		"[event m]\nat = after-scan:0\naction = merge\nregion = a\n"
		"[event w]\nat = after-scan:2\naction = write\nregion = a\npages = 1-2\n"
		"offset = 8\nvalue = 3\n"
		"[event f]\nat = after-scan:2\naction = fork\nprocess = main\nchild = kid\n"
		"[event um]\nat = after-scan:3\naction = unmerge\nregion = a\nprocess = kid\n"
		"pages = 5-9\n"
		"[event x]\nat = after-scan:3\naction = unmap\nregion = a\npages = 0\n"
		"[event s]\nat = after-scan:4\naction = set\nset = use_zero_pages=1\n"
		"[event s2]\nat = after-scan:4\naction = set\nset = max_page_sharing=1\n"
		"expect = EINVAL\n"
		"[event s3]\nat = after-scan:4\naction = set\nset = merge_across_nodes=0\n"
		"expect = EBUSY\n"
		"[event r0]\nat = after-scan:5\naction = run\nrun = 2\n"
		"[event r1]\nat = after-scan:5\naction = run\nrun = 1\nexpect = any\n"
		"[event e]\nat = after-scan:6\naction = exit\nprocess = kid\n");

	ck_assert_uint_eq(wl->nevents, 11);
	ck_assert_uint_eq(wl->nprocs, 2);
	ck_assert_int_eq(wl->events[0].action, WL_ACT_MERGE);
	ck_assert_uint_eq(wl->events[0].at_scan, 0);
	ck_assert_int_eq(wl->events[1].action, WL_ACT_WRITE);
	ck_assert_uint_eq(wl->events[1].offset.lo, 8);
	ck_assert_uint_eq(wl->events[1].value.value, 3);
	ck_assert_int_eq(wl->events[2].action, WL_ACT_FORK);
	ck_assert_str_eq(wl->procs[wl->events[2].child].name, "kid");
	ck_assert_int_eq(wl->procs[1].parent, 0);
	ck_assert_uint_eq(wl->procs[1].fork_event, 2);
	ck_assert_uint_eq(wl->events[3].process, 1);
	ck_assert_int_eq(wl->events[5].knob, WL_KNOB_USE_ZERO_PAGES);
	ck_assert_uint_eq(wl->events[5].knob_value, 1);
	ck_assert_int_eq(wl->events[6].expect, WL_EXPECT_EINVAL);
	ck_assert_str_eq(wl->events[6].knob_text, "1");
	ck_assert_int_eq(wl->events[7].expect, WL_EXPECT_EBUSY);
	ck_assert_uint_eq(wl->events[8].run, 2);
	ck_assert_int_eq(wl->events[9].expect, WL_EXPECT_ANY);
	ck_assert_int_eq(wl->events[10].action, WL_ACT_EXIT);
	ck_assert_uint_eq(wl->events[10].process, 1);
	assert_round_trip(wl);
	wl_free(wl);
}
END_TEST

/* The actions the kernel's selftests need, read and printed back. */
START_TEST(selftest_actions)
{
	struct workload *wl = parse_ok(
		"[global]\nscans = 6\n"
		"[region a]\npages = 10\nfill = same\nvalue = 1\nmerge = prctl\n"
		"[event d]\nat = after-scan:1\naction = discard\nregion = a\npages = 0-4\n"
		"[event p]\nat = after-scan:1\naction = protect\nregion = a\nprot = none\n"
		"[event w]\nat = after-scan:2\naction = write\nregion = a\npages = 1\n"
		"[event wp]\nat = after-scan:2\naction = uffd-wp\nregion = a\n"
		"[event f]\nat = after-scan:3\naction = fork\nprocess = main\nchild = kid\n"
		"[event kw]\nat = after-scan:3\naction = write\nregion = a\nprocess = kid\n"
		"[event x]\nat = after-scan:4\naction = exec\nprocess = kid\n"
		"[event off]\nat = after-scan:4\naction = merge-off\nprocess = main\n"
		"[event xw]\nat = after-scan:5\naction = write\nregion = a\nprocess = kid\n");

	ck_assert_uint_eq(wl->nevents, 9);
	ck_assert_int_eq(wl->events[0].action, WL_ACT_DISCARD);
	ck_assert_int_eq(wl->events[0].pages.kind, WL_SEL_LIST);
	ck_assert_int_eq(wl->events[1].action, WL_ACT_PROTECT);
	ck_assert_int_eq(wl->events[1].prot, WL_PROT_NONE);
	ck_assert_int_eq(wl->events[1].pages.kind, WL_SEL_ALL);
	ck_assert_int_eq(wl->events[3].action, WL_ACT_UFFD_WP);
	ck_assert_int_eq(wl->events[6].action, WL_ACT_EXEC);
	ck_assert_uint_eq(wl->events[6].process, 1);
	ck_assert_int_eq(wl->events[7].action, WL_ACT_MERGE_OFF);
	ck_assert_str_eq(wl_action_name(WL_ACT_MERGE_OFF), "merge-off");
	ck_assert_str_eq(wl_prot_name(WL_PROT_READ), "read");
	ck_assert(wl_process_uses_prctl(wl, 1));
	ck_assert_uint_eq(wl_process_root(wl, 1), 0);
	assert_round_trip(wl);
	wl_free(wl);
}
END_TEST

/* [expect] sections: every comparison, both kinds, and their normalized form. */
START_TEST(expect_sections)
{
	struct workload *wl = parse_ok(
		BASE "process = main\n"
		"[event s]\nat = after-scan:1\naction = set\nset = max_page_sharing=8\n"
		"expect = any\n"
		"[expect merged]\nat = after-scan:2\npages_shared = 1\npages_sharing >= 9\n"
		"pages_unshared <= 0\ngeneral_profit > -1\nmain.ksm_merging_pages != 3\n"
		"main.ksm_zero_pages < 1\n"
		"[expect apart]\nat: end\nregion = a\nduplicates = none\n"
		"[expect busy]\nevent = s\nerrno = EBUSY\n");
	const struct wl_expectation *ex = wl->expects;
	char what[128];

	ck_assert_uint_eq(wl->nexpects, 3);
	ck_assert_str_eq(ex[0].name, "merged");
	ck_assert(!ex[0].at_end);
	ck_assert_uint_eq(ex[0].at_scan, 2);
	ck_assert_uint_eq(ex[0].nchecks, 6);
	ck_assert_int_eq(ex[0].checks[0].kind, WL_CHECK_COUNTER);
	ck_assert_int_eq(ex[0].checks[0].index, TRACE_PAGES_SHARED);
	ck_assert_int_eq(ex[0].checks[0].cmp, WL_CMP_EQ);
	ck_assert_int_eq(ex[0].checks[1].cmp, WL_CMP_GE);
	ck_assert_int_eq(ex[0].checks[1].value, 9);
	ck_assert_int_eq(ex[0].checks[2].cmp, WL_CMP_LE);
	ck_assert_int_eq(ex[0].checks[3].cmp, WL_CMP_GT);
	ck_assert_int_eq(ex[0].checks[3].value, -1);
	ck_assert_int_eq(ex[0].checks[4].kind, WL_CHECK_PROC_FIELD);
	ck_assert_int_eq(ex[0].checks[4].index, TRACE_KSM_MERGING_PAGES);
	ck_assert_int_eq(ex[0].checks[4].cmp, WL_CMP_NE);
	/* the per-process ksm_zero_pages, not the global counter of that name */
	ck_assert_int_eq(ex[0].checks[5].index, TRACE_KSM_ZERO_PAGES_PROC);
	ck_assert_int_eq(ex[0].checks[5].cmp, WL_CMP_LT);
	ck_assert_str_eq(wl_check_what(wl, &ex[0].checks[5], what, sizeof(what)),
			 "main.ksm_zero_pages");
	ck_assert(ex[1].at_end);
	ck_assert_int_eq(ex[1].checks[0].kind, WL_CHECK_DUPLICATES);
	ck_assert_int_eq(ex[1].checks[0].value, 0);
	ck_assert_str_eq(wl_check_what(wl, &ex[1].checks[0], what, sizeof(what)),
			 "duplicates in region a of process main");
	ck_assert_int_eq(ex[2].event, 0);
	ck_assert_int_eq(ex[2].error, WL_EXPECT_EBUSY);
	ck_assert_int_eq(ex[2].nchecks, 0);
	ck_assert(wl_cmp_holds(WL_CMP_GE, 9, 9) && !wl_cmp_holds(WL_CMP_GT, 9, 9));
	ck_assert(wl_cmp_holds(WL_CMP_NE, -1, 0) && wl_cmp_holds(WL_CMP_LT, -2, -1));
	assert_round_trip(wl);
	wl_free(wl);
}
END_TEST

START_TEST(syntax_forgiveness)
{
	/* comments, blank lines, indentation, CRLF, name:value, BOM */
	struct workload *wl = parse_ok(
		"\xef\xbb\xbf# leading comment\r\n"
		"; another\r\n"
		"   [global]   \r\n"
		"    scans = 2    # trailing comment\r\n"
		"\r\n"
		"\t[region a] ; comment\r\n"
		"  pages: 3\r\n"
		"  fill = same\r\n"
		"  value = 9 ; inline\r\n");

	ck_assert_uint_eq(wl->stop_scans, 2);
	ck_assert_uint_eq(wl->regions[0].pages, 3);
	ck_assert_uint_eq(wl->regions[0].value, 9);
	wl_free(wl);
}
END_TEST

START_TEST(sections_may_refer_forward)
{
	struct workload *wl = parse_ok("[global]\nscans = 3\n"
				       "[writer w]\nregion = late\nwhen = every-scan\n"
				       "[region late]\npages = 2\nfill = unique\n");

	ck_assert_uint_eq(wl->writers[0].region, 0);
	wl_free(wl);
}
END_TEST

/* --- page selections and schedule ---------------------------------------- */

static uint64_t collect(const struct wl_pagesel *sel, uint64_t npages, struct wl_rng *rng,
			uint64_t *out, size_t max)
{
	struct wl_page_iter it;
	uint64_t page, n = 0;

	wl_page_iter_init(&it, sel, npages, rng);
	while (wl_page_iter_next(&it, &page)) {
		if (n < max)
			out[n] = page;
		n++;
	}
	return n;
}

START_TEST(page_iteration)
{
	struct wl_pagesel sel;
	char why[128];
	uint64_t got[64];

	ck_assert_int_eq(wl_parse_pagesel("7,0-2,4-5", 10, &sel, why, sizeof(why)), 0);
	ck_assert_uint_eq(collect(&sel, 10, NULL, got, 64), 6);
	ck_assert_uint_eq(got[0], 0);
	ck_assert_uint_eq(got[2], 2);
	ck_assert_uint_eq(got[3], 4);
	ck_assert_uint_eq(got[5], 7);
	free(sel.ranges);
	ck_assert_int_eq(wl_parse_pagesel("every:4+2", 15, &sel, why, sizeof(why)), 0);
	ck_assert_uint_eq(collect(&sel, 15, NULL, got, 64), 4);
	ck_assert_uint_eq(got[0], 2);
	ck_assert_uint_eq(got[3], 14);
	ck_assert_int_eq(wl_parse_pagesel("all", 5, &sel, why, sizeof(why)), 0);
	ck_assert_uint_eq(collect(&sel, 5, NULL, got, 64), 5);
	ck_assert_uint_eq(got[4], 4);
}
END_TEST

START_TEST(random_pages_are_distinct_sorted_and_seeded)
{
	struct wl_pagesel sel;
	char why[128];
	uint64_t a[40], b[40], c[40];
	struct wl_rng r1 = wl_rng_stream(5, 0), r2 = wl_rng_stream(5, 0), r3 = wl_rng_stream(6, 0);

	ck_assert_int_eq(wl_parse_pagesel("random:40", 1000, &sel, why, sizeof(why)), 0);
	ck_assert_uint_eq(collect(&sel, 1000, &r1, a, 40), 40);
	ck_assert_uint_eq(collect(&sel, 1000, &r2, b, 40), 40);
	ck_assert_uint_eq(collect(&sel, 1000, &r3, c, 40), 40);
	ck_assert_mem_eq(a, b, sizeof(a));
	ck_assert(memcmp(a, c, sizeof(a)) != 0);
	for (int i = 1; i < 40; i++)
		ck_assert_uint_lt(a[i - 1], a[i]);
	ck_assert_uint_lt(a[39], 1000);
	/* the next application draws a different set from the same stream */
	ck_assert_uint_eq(collect(&sel, 1000, &r1, b, 40), 40);
	ck_assert(memcmp(a, b, sizeof(a)) != 0);
	/* all pages: every page exactly once */
	ck_assert_int_eq(wl_parse_pagesel("random:40", 40, &sel, why, sizeof(why)), 0);
	ck_assert_uint_eq(collect(&sel, 40, &r1, a, 40), 40);
	for (uint64_t i = 0; i < 40; i++)
		ck_assert_uint_eq(a[i], i);
}
END_TEST

/* splitmix64 counts: any draw is at hand without those before (sim_deferred.h). */
START_TEST(a_draw_is_at_hand_without_the_ones_before)
{
	struct wl_rng seq = wl_rng_stream(42, 7), start = seq, skipped = seq;

	for (uint64_t d = 0; d < 1000; d++)
		ck_assert_uint_eq(wl_rng_peek(&start, d), wl_rng_next(&seq));
	wl_rng_skip(&skipped, 1000);
	ck_assert_uint_eq(wl_rng_next(&skipped), wl_rng_next(&seq));
}
END_TEST

/* The finalizer undone, and the first draw below a limit found without drawing. */
START_TEST(the_first_draw_below_a_limit_is_found_without_drawing)
{
	struct wl_rng rng = wl_rng_stream(3, 1), planted, seq;
	uint64_t first;

	for (int i = 0; i < 1000; i++) {
		uint64_t z = wl_rng_next(&rng);

		ck_assert_uint_eq(wl_rng_unmix(wl_rng_mix(z)), z);
		ck_assert_uint_eq(wl_rng_mix(wl_rng_unmix(z)), z);
	}
	ck_assert_uint_eq(wl_rng_first_below(&rng, 0), UINT64_MAX);
	/* a stream whose draw 5000 is 7: the first below 100, and none before it */
	planted.state = wl_rng_unmix(7) - 5001 * WL_RNG_GAMMA;
	first = wl_rng_first_below(&planted, 100);
	ck_assert_uint_eq(first, 5000);
	seq = planted;
	for (uint64_t d = 0; d < first; d++)
		ck_assert_uint_ge(wl_rng_next(&seq), 100);
	ck_assert_uint_eq(wl_rng_next(&seq), 7);
	/* any stream: what it finds is a draw below the limit */
	first = wl_rng_first_below(&rng, 4088);
	ck_assert_uint_lt(wl_rng_peek(&rng, first), 4088);
}
END_TEST

/* A strided cursor returns the draws a drawing stream returns there. */
START_TEST(strided_draws_are_the_stream_s_draws)
{
	static const uint64_t strides[] = { 1, 2, 65536, UINT64_C(1) << 40 };
	struct wl_rng rng = wl_rng_stream(9, 4);

	for (size_t i = 0; i < sizeof(strides) / sizeof(strides[0]); i++) {
		struct wl_rng_strided c = wl_rng_stride(&rng, 17, strides[i]);
		struct wl_rng seq = rng;

		wl_rng_skip(&seq, 17);
		for (int k = 0; k < 100; k++) {
			ck_assert_uint_eq(wl_rng_strided_next(&c), wl_rng_peek(&rng, 17 + k * strides[i]));
			if (strides[i] == 1)
				ck_assert_uint_eq(wl_rng_peek(&rng, 17 + (uint64_t)k), wl_rng_next(&seq));
		}
	}
}
END_TEST

START_TEST(the_remainder_by_multiplication_is_the_remainder)
{
	static const uint64_t divisors[] = { 2, 3, 7, 89, 256, 4089, 1000003, UINT64_C(1) << 32,
					     (UINT64_C(1) << 63) + 1, UINT64_MAX };
	struct wl_rng rng = wl_rng_stream(1, 2);

	for (size_t i = 0; i < sizeof(divisors) / sizeof(divisors[0]); i++) {
		uint64_t d = divisors[i];
		unsigned __int128 m = wl_mod_magic(d);
		const uint64_t edges[] = { 0, 1, d - 1, d, d + 1, UINT64_MAX, UINT64_MAX - 1 };

		for (size_t e = 0; e < sizeof(edges) / sizeof(edges[0]); e++)
			ck_assert_uint_eq(wl_mod(edges[e], m, d), edges[e] % d);
		for (int n = 0; n < 100000; n++) {
			uint64_t x = wl_rng_next(&rng);

			ck_assert_uint_eq(wl_mod(x, m, d), x % d);
		}
	}
}
END_TEST

START_TEST(random_offsets_stay_in_range)
{
	struct wl_offset off = { 4000, 4088 };
	struct wl_rng rng = wl_rng_stream(1, 3);
	bool seen_lo = false, seen_hi = false;

	for (int i = 0; i < 20000; i++) {
		uint32_t o = wl_offset_pick(&off, &rng);

		ck_assert_uint_ge(o, 4000);
		ck_assert_uint_le(o, 4088);
		seen_lo |= o == 4000;
		seen_hi |= o == 4088;
	}
	ck_assert(seen_lo && seen_hi);
	off.lo = off.hi = 12;
	ck_assert_uint_eq(wl_offset_pick(&off, &rng), 12);
}
END_TEST

START_TEST(steps_follow_file_order)
{
	struct workload *wl = parse_ok(
		"[global]\nscans = 6\n"
		"[region a]\npages = 4\nfill = same\nvalue = 1\n"
		"[event e1]\nat = after-scan:2\naction = write\nregion = a\n"
		"[writer w1]\nregion = a\nwhen = every-scan\nfrom = 2\nuntil = 3\n"
		"[event e2]\nat = after-scan:2\naction = set\nset = smart_scan=0\n"
		"[writer w2]\nregion = a\nwhen = after-scan:3\n"
		"[writer w3]\nregion = a\nwhen = continuous\nrate = 10\n");
	struct wl_step s[8];

	ck_assert_uint_eq(wl_steps_after_scan(wl, 1, s, 8), 0);
	ck_assert_uint_eq(wl_steps_after_scan(wl, 2, s, 8), 3);
	ck_assert(s[0].is_event && s[0].index == 0);
	ck_assert(!s[1].is_event && s[1].index == 0);
	ck_assert(s[2].is_event && s[2].index == 1);
	ck_assert_uint_eq(wl_steps_after_scan(wl, 3, s, 8), 2);
	ck_assert(!s[0].is_event && s[0].index == 0);
	ck_assert(!s[1].is_event && s[1].index == 1);
	ck_assert_uint_eq(wl_steps_after_scan(wl, 4, s, 8), 0);
	ck_assert_uint_eq(wl_steps_after_scan(wl, 2, s, 1), 3); /* count beyond max */
	wl_free(wl);
}
END_TEST

START_TEST(fork_child_inherits_unmapped_state)
{
	/* the child's copy lacks page 3 too, so this write must be rejected */
	ck_assert_str_eq(parse_error(
		"[global]\nscans = 5\n[region a]\npages = 4\nfill = same\nvalue = 1\n"
		"[event x]\nat = after-scan:1\naction = unmap\nregion = a\npages = 3\n"
		"[event f]\nat = after-scan:2\naction = fork\nprocess = main\nchild = k\n"
		"[event w]\nat = after-scan:3\naction = write\nregion = a\nprocess = k\n"),
		"t.wl:17: [event w]: page 3 of region a in process k is unmapped by then");
	/* while the parent's own write to pages 0-2 is fine */
	ck_assert_str_eq(parse_error(
		"[global]\nscans = 5\n[region a]\npages = 4\nfill = same\nvalue = 1\n"
		"[event x]\nat = after-scan:1\naction = unmap\nregion = a\npages = 3\n"
		"[event f]\nat = after-scan:2\naction = fork\nprocess = main\nchild = k\n"
		"[event w]\nat = after-scan:3\naction = write\nregion = a\nprocess = k\n"
		"pages = 0-2\n"), "");
}
END_TEST

/* Every workload in @dirpath parses and round-trips; returns how many. */
static int round_trip_dir(const char *dirpath)
{
	DIR *dir = opendir(dirpath);
	struct dirent *de;
	int seen = 0;

	ck_assert_ptr_nonnull(dir);
	while ((de = readdir(dir)) != NULL) {
		char path[4096];
		struct workload *wl;
		struct wl_error err;
		size_t n = strlen(de->d_name);

		if (n < 4 || strcmp(de->d_name + n - 3, ".wl") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dirpath, de->d_name);
		if (wl_parse_file(path, &wl, &err) != 0)
			ck_abort_msg("shipped workload does not parse: %s", err.text);
		assert_round_trip(wl);
		wl_free(wl);
		seen++;
	}
	closedir(dir);
	return seen;
}

START_TEST(shipped_workloads_round_trip)
{
	ck_assert_int_ge(round_trip_dir(SRCDIR "/workloads"), 1);
	/* the selftests: ten functional tests, twenty ksm_tests runs */
	ck_assert_int_eq(round_trip_dir(SRCDIR "/workloads/selftests"), 30);
}
END_TEST

START_TEST(child_may_be_named_before_its_fork_section)
{
	struct workload *wl = parse_ok(BASE
		"[writer w]\nregion = a\nprocess = kid\nwhen = every-scan\nfrom = 2\n"
		"[event f]\nat = after-scan:1\naction = fork\nprocess = main\nchild = kid\n");

	ck_assert_uint_eq(wl->writers[0].process, 1);
	ck_assert_int_eq(wl->procs[1].parent, 0);
	ck_assert_uint_eq(wl->procs[1].fork_event, 0);
	assert_round_trip(wl);
	wl_free(wl);
	/* ... but still not act on it before it is born */
	ck_assert_str_eq(parse_error(BASE
		"[writer w]\nregion = a\nprocess = kid\nwhen = every-scan\n"
		"[event f]\nat = after-scan:1\naction = fork\nprocess = main\nchild = kid\n"),
		"t.wl:7: [writer w]: process kid does not exist yet (it is forked by [event f])");
}
END_TEST

START_TEST(nul_byte_in_file_is_an_error)
{
	char path[] = "/tmp/check_workload_XXXXXX";
	int fd = mkstemp(path);
	static const char text[] = "[global]\nscans=3\n[region a]\npages = 1\0000\nfill=zero\n";
	struct workload *wl;
	struct wl_error err;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	ck_assert_int_eq(wl_parse_file(path, &wl, &err), -1);
	unlink(path);
	ck_assert_ptr_null(strstr(err.text, ":4: NUL byte in line") ? NULL : err.text);
}
END_TEST

START_TEST(unterminated_buffer_with_a_bad_last_line)
{
	/* found by the fuzzer: the syntax-error path read past the buffer */
	static const char text[] = "[global]\nscans = 3\n[region a]\npages = 1\nbad line";
	char *exact = malloc(sizeof(text) - 1); /* no NUL: ASan sees any over-read */
	struct workload *wl;
	struct wl_error err;

	memcpy(exact, text, sizeof(text) - 1);
	ck_assert_int_eq(wl_parse_buffer(exact, sizeof(text) - 1, "t.wl", &wl, &err), -1);
	ck_assert_str_eq(err.text, "t.wl:5: expected 'key = value' or '[section]'");
	free(exact);
}
END_TEST

START_TEST(missing_file_is_reported)
{
	struct workload *wl;
	struct wl_error err;

	ck_assert_int_eq(wl_parse_file("/nonexistent/x.wl", &wl, &err), -1);
	ck_assert_str_eq(err.text, "/nonexistent/x.wl: No such file or directory");
	ck_assert_ptr_null(wl);
}
END_TEST

/* --- bounded reads ------------------------------------------------------------ */

/* Write @len bytes of @text to a new temporary file; its path goes to @path. */
static void write_temp(char *path, const char *text, size_t len)
{
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	for (size_t done = 0; done < len;) {
		ssize_t n = write(fd, text + done, len - done);

		ck_assert_int_gt(n, 0);
		done += (size_t)n;
	}
	close(fd);
}

START_TEST(huge_line_is_refused_at_its_line)
{
	size_t len = 10u << 20;
	char *text = malloc(len + 32), path[] = "/tmp/check_workload_XXXXXX";
	struct workload *wl;
	struct wl_error err;

	/* a 10 MB value, as a buffer and as a file read in bounded chunks */
	memcpy(text, "[global]\nscans = 3\ndescription = ", 33);
	memset(text + 33, 'x', len - 33);
	text[len - 1] = '\n';
	ck_assert_int_eq(wl_parse_buffer(text, len, "t.wl", &wl, &err), -1);
	ck_assert_str_eq(err.text, "t.wl:3: line too long (at most 197 characters)");
	ck_assert_uint_eq(err.line, 3);
	write_temp(path, text, len);
	ck_assert_int_eq(wl_parse_file(path, &wl, &err), -1);
	unlink(path);
	ck_assert_ptr_nonnull(strstr(err.text, ":3: line too long (at most 197 characters)"));
	/* one line of 10 MB without a newline at all */
	memset(text, 'x', len);
	ck_assert_int_eq(wl_parse_buffer(text, len, "t.wl", &wl, &err), -1);
	ck_assert_str_eq(err.text, "t.wl:1: line too long (at most 197 characters)");
	free(text);
}
END_TEST

START_TEST(dev_zero_is_refused_at_line_1)
{
	struct workload *wl;
	struct wl_error err;

	/* an endless file: read a line's bound of it, not all of it */
	ck_assert_int_eq(wl_parse_file("/dev/zero", &wl, &err), -1);
	ck_assert_str_eq(err.text, "/dev/zero:1: NUL byte in line");
	ck_assert_ptr_null(wl);
}
END_TEST

START_TEST(file_size_is_bounded)
{
	/* 64 MiB of comment lines, then one more */
	static const char head[] = "[global]\nscans = 3\n";
	size_t line = 700, lines = (size_t)(WL_MAX_FILE_BYTES / line) + 1, at = strlen(head);
	size_t len = at + lines * line;
	char *text = malloc(len), path[] = "/tmp/check_workload_XXXXXX";
	struct workload *wl;
	struct wl_error err;
	char want[128];

	memcpy(text, head, at);
	for (size_t i = 0; i < lines; i++) {
		memset(text + at + i * line, '#', line - 1);
		text[at + (i + 1) * line - 1] = '\n';
	}
	ck_assert_int_eq(wl_parse_buffer(text, len, "t.wl", &wl, &err), -1);
	snprintf(want, sizeof(want), "t.wl:%zu: the file is larger than 64 MiB, the limit for a "
		 "workload", (size_t)2 + lines);
	ck_assert_str_eq(err.text, want);
	write_temp(path, text, len);
	ck_assert_int_eq(wl_parse_file(path, &wl, &err), -1);
	unlink(path);
	ck_assert_ptr_nonnull(strstr(err.text, want + 4));
	free(text);
}
END_TEST

/* A file is read the same way as a buffer: a normal workload through both. */
START_TEST(file_and_buffer_read_alike)
{
	static const char text[] = "\xef\xbb\xbf[global]\r\nscans = 3\r\n[region a]\r\n"
				   "pages = 4\r\nfill = zero";
	char path[] = "/tmp/check_workload_XXXXXX";
	struct workload *a, *b;
	struct wl_error err;

	write_temp(path, text, sizeof(text) - 1);
	ck_assert_int_eq(wl_parse_file(path, &a, &err), 0);
	unlink(path);
	b = parse_ok(text);
	ck_assert(wl_equal(a, b));
	ck_assert_uint_eq(a->regions[0].pages, 4);
	wl_free(a);
	wl_free(b);
}
END_TEST

/* --- scale: linear parsing (the timing is bench/parser-scaling's) -------------- */

/* A growing text buffer for generated workloads. */
struct gen {
	char *text;
	size_t len;
	FILE *f;
};

static void gen_open(struct gen *g)
{
	g->text = NULL;
	g->len = 0;
	g->f = open_memstream(&g->text, &g->len);
	ck_assert_ptr_nonnull(g->f);
}

static struct workload *gen_parse(struct gen *g)
{
	struct workload *wl;
	struct wl_error err;

	fclose(g->f);
	if (wl_parse_buffer(g->text, g->len, "big.wl", &wl, &err) != 0)
		ck_abort_msg("generated workload does not parse: %s", err.text);
	free(g->text);
	return wl;
}

START_TEST(two_hundred_thousand_events_parse)
{
	const unsigned n = 200000, last = n / 10 + 1;
	struct workload *wl;
	struct gen g;

	gen_open(&g);
	fprintf(g.f, "[global]\nscans = %u\n[region a]\npages = %u\nfill = unique\n", last + 1, n);
	for (unsigned i = 0; i < n; i++) {
		unsigned page = (unsigned)((uint64_t)i * 7919 % n);

		if (i % 10 == 9)
			fprintf(g.f, "[event e%u]\nat = after-scan:%u\naction = unmap\nregion = a\n"
				"pages = %u\n", i, last, page);
		else
			fprintf(g.f, "[event e%u]\nat = after-scan:%u\naction = write\nregion = a\n"
				"pages = %u\nvalue = %u\n", i, i % last, page, i);
	}
	wl = gen_parse(&g);
	ck_assert_uint_eq(wl->nevents, n);
	ck_assert_str_eq(wl->events[n - 1].name, "e199999");
	ck_assert_int_eq(wl->events[n - 1].action, WL_ACT_UNMAP);
	ck_assert_uint_eq(wl->events[n - 1].pages.ranges[0].first, (uint64_t)(n - 1) * 7919 % n);
	wl_free(wl);
}
END_TEST

START_TEST(fifty_thousand_regions_parse)
{
	const unsigned n = 50000;
	struct workload *wl;
	struct gen g;

	gen_open(&g);
	fprintf(g.f, "[global]\nscans = 2\n");
	for (unsigned i = 0; i < n; i++)
		fprintf(g.f, "[region r%u]\nprocess = p%u\npages = 1\nfill = unique\n", i, i);
	/* and an event on the last, found by name */
	fprintf(g.f, "[event w]\nat = after-scan:1\naction = write\nregion = r%u\n", n - 1);
	wl = gen_parse(&g);
	ck_assert_uint_eq(wl->nregions, n);
	ck_assert_uint_eq(wl->nprocs, n);
	ck_assert_str_eq(wl->procs[wl->regions[n - 1].process].name, "p49999");
	ck_assert_uint_eq(wl->events[0].region, n - 1);
	ck_assert_uint_eq(wl->events[0].process, n - 1);
	wl_free(wl);
}
END_TEST

/* Many unmaps, forks and writes: the holes each process sees stay its own. */
START_TEST(many_forks_keep_their_own_holes)
{
	const unsigned n = 20000;
	struct workload *wl;
	struct gen g;

	gen_open(&g);
	fprintf(g.f, "[global]\nscans = 4\n[region a]\npages = %u\nfill = zero\n", 2 * n);
	/* main unmaps the odd pages, forking a child after each unmap */
	for (unsigned i = 0; i < n; i++)
		fprintf(g.f, "[event x%u]\nat = after-scan:1\naction = unmap\nregion = a\n"
			"pages = %u\n[event f%u]\nat = after-scan:1\naction = fork\n"
			"process = main\nchild = k%u\n", i, 2 * i + 1, i, i);
	/* child k_i lacks pages 1, 3, ..., 2i+1 only: it may write page 2i+3 */
	for (unsigned i = 0; i + 1 < n; i++)
		fprintf(g.f, "[event w%u]\nat = after-scan:2\naction = write\nregion = a\n"
			"process = k%u\npages = %u-%u\n", i, i, 2 * i + 2, 2 * i + 3);
	wl = gen_parse(&g);
	ck_assert_uint_eq(wl->nprocs, n + 1);
	wl_free(wl);
	/* ... and not page 2i+1 */
	ck_assert_str_eq(parse_error("[global]\nscans = 4\n[region a]\npages = 8\nfill = zero\n"
		"[event x0]\nat = after-scan:1\naction = unmap\nregion = a\npages = 1\n"
		"[event f0]\nat = after-scan:1\naction = fork\nprocess = main\nchild = k0\n"
		"[event x1]\nat = after-scan:1\naction = unmap\nregion = a\npages = 3\n"
		"[event w]\nat = after-scan:2\naction = write\nregion = a\nprocess = k0\n"
		"pages = 2-3\n"
		"[event v]\nat = after-scan:2\naction = write\nregion = a\npages = every:2+1\n"),
		"t.wl:27: [event v]: page 1 of region a in process main is unmapped by then");
}
END_TEST

/*
 * wl_holes against a page-by-page model: random unmaps (runs and strides),
 * forks and queries over a few processes of a 96-page region.
 */
START_TEST(holes_match_a_page_model)
{
	enum { PROCS = 6, PAGES = 96, ROUNDS = 4000 };
	static bool gone[PROCS][PAGES];
	struct wl_holes *h = wl_holes_new(PROCS);
	struct wl_rng rng = wl_rng_stream(7, 0);
	unsigned nprocs = 1;

	memset(gone, 0, sizeof(gone));
	ck_assert_ptr_nonnull(h);
	for (unsigned round = 0; round < ROUNDS; round++) {
		unsigned proc = (unsigned)wl_rng_below(&rng, nprocs), op = (unsigned)wl_rng_below(&rng, 8);
		struct wl_progression p;
		uint64_t got = 0, want = PAGES;

		p.first = wl_rng_below(&rng, PAGES);
		p.last = p.first + wl_rng_below(&rng, PAGES - p.first);
		p.step = wl_rng_below(&rng, 3) ? 1 : 1 + wl_rng_below(&rng, 7);
		for (uint64_t q = p.first; q <= p.last; q += p.step)
			if (gone[proc][q] && want == PAGES)
				want = q;
		if (op == 0 && nprocs < PROCS) {
			wl_holes_fork(h, proc, nprocs);
			memcpy(gone[nprocs], gone[proc], sizeof(gone[proc]));
			nprocs++;
		} else if (op < 4 && want == PAGES) {
			ck_assert_int_eq(wl_holes_add(h, proc, 0, &p), 0);
			for (uint64_t q = p.first; q <= p.last; q += p.step)
				gone[proc][q] = true;
		} else {
			bool found = wl_holes_first(h, proc, 0, &p, &got);

			ck_assert_msg(found == (want < PAGES), "round %u: process %u, pages %llu-%llu "
				      "step %llu: found %d", round, proc, (unsigned long long)p.first,
				      (unsigned long long)p.last, (unsigned long long)p.step, found);
			if (found)
				ck_assert_uint_eq(got, want);
		}
		/* no other region is touched */
		ck_assert(!wl_holes_any(h, proc, 1));
	}
	wl_holes_free(h);
}
END_TEST

/* --- bad inputs: each names file:line and exactly what is wrong ------------ */

#define X46 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
#define X184 X46 X46 X46 X46

struct bad_case {
	const char *text;
	const char *error;
};

static const struct bad_case bad_cases[] = {
	/* syntax */
	{ "[global]\nscans = 3\nthis line has no equals\n",
	  "t.wl:3: expected 'key = value' or '[section]'" },
	{ "[global\nscans = 3\n", "t.wl:1: section header without closing ']'" },
	{ "scans = 3\n[global]\n", "t.wl:1: 'scans' is outside any section (start with [global])" },
	{ "[global]\nscans = 3\n[globl]\n",
	  "t.wl:3: unknown section [globl] (expected [global], [region NAME], [writer NAME], "
	  "[event NAME] or [expect NAME])" },
	{ "[global x]\nscans = 3\n", "t.wl:1: [global] takes no name" },
	{ "[global]\nscans = 3\n[region]\n", "t.wl:3: [region]: a name is needed" },
	{ "[global]\nscans = 3\n[region a.b]\n",
	  "t.wl:3: [region a.b]: names use only letters, digits, '_' and '-'" },
	{ BASE "[region a]\npages = 1\n", "t.wl:7: duplicate section [region a] (first at line 3)" },
	{ BASE "pages = 2\n", "t.wl:7: duplicate key 'pages' in [region a] (first at line 4)" },
	{ "[global]\nscans = 3\n[region a]\nfill = same\nvalue = 1\npages = 1\nxyz = 1234567890"
	  "1234567890123456789012345678901234567890123456789012345678901234567890123456789012345"
	  "6789012345678901234567890123456789012345678901234567890123456789012345678901234567890"
	  "1234567890123\n", "t.wl:7: line too long (at most 197 characters)" },
	{ "[global]\nscans = 3\n[region a]\npages = 1\nfill = same\nvalue = 1\0\n",
	  "t.wl:6: NUL byte in line" },
	/* [global] */
	{ "[global]\nsans = 3\n", "t.wl:2: unknown key 'sans' in [global]; did you mean 'scans'?" },
	{ "[global]\n[region a]\npages = 1\nfill = zero\n",
	  "t.wl:1: no stop condition: [global] needs scans = N or time = T" },
	{ "[region a]\npages = 1\nfill = zero\n",
	  "t.wl:1: no stop condition: [global] needs scans = N or time = T" },
	{ "[global]\nscans = 3\ntime = 1s\n",
	  "t.wl:3: [global] has both scans and time: choose one stop condition" },
	{ "[global]\nscans = 0\n", "t.wl:2: [global] scans = 0: must be 1 to 4294967296" },
	{ "[global]\nscans = three\n", "t.wl:2: [global] scans = three: expected a number" },
	{ "[global]\ntime = 10d\n",
	  "t.wl:2: [global] time = 10d: expected a time such as 10s, 250ms, 2m" },
	{ "[global]\ntime = 0s\n", "t.wl:2: [global] time = 0s: must be more than 0" },
	{ "[global]\nscans = 3\nkernel = 5.4\n",
	  "t.wl:3: [global] kernel = 5.4: expected 6.18, 6.12, 6.10 or 6.1" },
	{ "[global]\nsmart_scan = 0\nscans = 3\nkernel = 6.1\n",
	  "t.wl:2: [global] smart_scan: kernel 6.1 has no such knob (it came in 6.7)" },
	{ "[global]\nscans = 3\nkernel = 6.1\nadvisor_mode = none\n",
	  "t.wl:4: [global] advisor_mode: kernel 6.1 has no such knob (it came in 6.8)" },
	{ "[global]\nscans = 3\nkernel = 6.1\n[region a]\npages = 1\nfill = zero\nmerge = prctl\n",
	  "t.wl:7: [region a] merge = prctl: kernel 6.1 has no PR_SET_MEMORY_MERGE (it came in 6.4)" },
	{ "[global]\nscans = 3\nkernel = 6.1\n[region a]\npages = 1\nfill = zero\n"
	  "[event e]\nat = after-scan:1\naction = set\nset = smart_scan=0\n",
	  "t.wl:10: [event e] set = smart_scan=0: kernel 6.1 has no such knob (it came in 6.7)" },
	{ "[global]\nscans = 3\ndetector = magic\n",
	  "t.wl:3: [global] detector = magic: expected checksum, dirty, hybrid or partial" },
	{ "[global]\nscans = 3\nmax_page_sharing = 1\n",
	  "t.wl:3: [global] max_page_sharing = 1: at least 2 (the kernel says EINVAL)" },
	{ "[global]\nscans = 3\nmerge_across_nodes = 2\n",
	  "t.wl:3: [global] merge_across_nodes = 2: at most 1 (the kernel says EINVAL)" },
	{ "[global]\nscans = 3\nuse_zero_pages = maybe\n",
	  "t.wl:3: [global] use_zero_pages = maybe: expected 0 or 1 (the kernel says EINVAL)" },
	{ "[global]\nscans = 3\nsleep_millisecs = 20ms\n",
	  "t.wl:3: [global] sleep_millisecs = 20ms: expected a decimal number (the kernel says "
	  "EINVAL)" },
	{ "[global]\nscans = 3\nadvisor_mode = auto\n",
	  "t.wl:3: [global] advisor_mode = auto: expected none or scan-time (the kernel says "
	  "EINVAL)" },
	{ "[global]\nscans = 3\nadvisor_mode = scan-time\npages_to_scan = 100\n",
	  "t.wl:4: [global] pages_to_scan cannot be set while advisor_mode = scan-time (the "
	  "kernel answers EINVAL; the advisor starts from advisor_min_pages_to_scan)" },
	{ "[global]\nscans = 3\npages_to_scan = 0\n",
	  "t.wl:3: [global] pages_to_scan = 0: ksmd would never complete a scan (use time = T "
	  "to watch an idle ksmd)" },
	{ "[global]\nscans = 3\nrun = 1\n",
	  "t.wl:3: [global] run: the engines start KSM with run = 1 themselves; use an [event] "
	  "with action = run to change it" },
	{ "[global]\nscans = 3\n", "t.wl: no [region NAME] section: a workload needs memory to merge" },
	/* [region] */
	{ "[global]\nscans = 3\n[region a]\nsise = 4k\n", "t.wl:4: unknown key 'sise' in [region a]; did you mean 'size'?" },
	{ "[global]\nscans = 3\n[region a]\nsize = 5000\nfill = zero\n",
	  "t.wl:4: [region a] size = 5000: must be a positive multiple of the page size (4096)" },
	{ "[global]\nscans = 3\n[region a]\nsize = 4q\nfill = zero\n",
	  "t.wl:4: [region a] size = 4q: expected a size such as 4k, 100m, 2g or 1MiB" },
	{ "[global]\nscans = 3\n[region a]\nsize = 4k\npages = 1\nfill = zero\n",
	  "t.wl:5: [region a] has both size and pages: give one" },
	{ "[global]\nscans = 3\n[region a]\nfill = zero\n", "t.wl:3: [region a] needs size or pages" },
	{ "[global]\nscans = 3\n[region a]\npages = 1\n",
	  "t.wl:3: [region a] needs fill = same, unique, zero, groups, none or capture" },
	{ "[global]\nscans = 3\n[region a]\npages = 1\nfill = same\n",
	  "t.wl:5: [region a] fill = same needs value = N" },
	{ "[global]\nscans = 3\n[region a]\npages = 1\nfill = zero\nvalue = 3\n",
	  "t.wl:6: [region a] value only applies to fill = same" },
	{ "[global]\nscans = 3\n[region a]\npages = 1\nfill = same\nvalue = 0x8000000000000000\n",
	  "t.wl:6: [region a] value = 0x8000000000000000: values must be below 2^63 (the upper "
	  "half is reserved for fresh values)" },
	{ "[global]\nscans = 3\n[region a]\npages = 1\nfill = ones\n",
	  "t.wl:5: [region a] fill = ones: expected same, unique, zero, groups, none or capture" },
	{ "[global]\nscans = 3\n[region a]\nfill = groups\ngroups = 3x1,2*2\n",
	  "t.wl:5: [region a] groups = 3x1,2*2: expected COPIESxVALUE[,COPIESxVALUE...], e.g. "
	  "300x1,50x0" },
	{ "[global]\nscans = 3\n[region a]\nfill = groups\ngroups = 3x1,0x2\n",
	  "t.wl:5: [region a] groups = 3x1,0x2: group 2 has 0 copies" },
	{ "[global]\nscans = 3\n[region a]\npages = 5\nfill = groups\ngroups = 3x1,1x2\n",
	  "t.wl:4: [region a]: the groups hold 4 pages but the region has 5" },
	{ "[global]\nscans = 3\n[region a]\npages = 5\nfill = same\nvalue = 1\ngroups = 5x1\n",
	  "t.wl:7: [region a] groups only applies to fill = groups" },
	{ "[global]\nscans = 3\n[region a]\nfill = groups\n",
	  "t.wl:4: [region a] fill = groups needs groups = COPIESxVALUE,..." },
	{ "[global]\nscans = 3\n[region a]\npages = 1\nfill = zero\nnode = 1024\n",
	  "t.wl:6: [region a] node = 1024: must be 0 to 1023" },
	{ "[global]\nscans = 3\n[region a]\npages = 1\nfill = zero\nthp = madvise\n",
	  "t.wl:6: [region a] thp = madvise: expected never or always" },
	{ "[global]\nscans = 3\nthp_dirty = some\n",
	  "t.wl:3: [global] thp_dirty = some: expected all, split or checksum" },
	{ "[global]\nscans = 3\nsmart_scan_policy = countdown\n",
	  "t.wl:3: [global] smart_scan_policy = countdown: expected upstream, aligned or phased" },
	{ "[global]\nscans = 3\nsmart_scan_policy = Phased\n",
	  "t.wl:3: [global] smart_scan_policy = Phased: expected upstream, aligned or phased" },
	{ "[global]\nscans = 3\nsmart_scan_policy =\n",
	  "t.wl:3: [global] smart_scan_policy = : expected upstream, aligned or phased" },
	{ "[global]\nscans = 3\n[region a]\npages = 1\nfill = zero\ndirty_tracking = ept\n",
	  "t.wl:6: [region a] dirty_tracking = ept: expected yes or no" },
	{ "[global]\nscans = 3\n[region a]\npages = 1\nfill = zero\nmerge = ksm\n",
	  "t.wl:6: [region a] merge = ksm: expected madvise, prctl or none" },
	{ "[global]\nscans = 3\n[region a]\npages = 1\nfill = zero\nmerge = prctl\n"
	  "[region b]\npages = 1\nfill = zero\n",
	  "t.wl:7: [region b] merge = madvise, but region a of the same process main uses prctl, "
	  "which makes every region of the process mergeable: say merge = prctl here too" },
	{ "[global]\nscans = 3\n[region a]\npages = 1\nfill = zero\nprocess = my proc\n",
	  "t.wl:6: [region a] process = my proc: names use only letters, digits, '_' and '-'" },
	/* [writer] */
	{ BASE "[writer w]\nregion = b\nwhen = every-scan\n",
	  "t.wl:8: [writer w] region = b: no such region" },
	{ BASE "[writer w]\nwhen = every-scan\n", "t.wl:7: [writer w] needs region = NAME" },
	{ BASE "[writer w]\nregion = a\n",
	  "t.wl:7: [writer w] needs when = every-scan, after-scan:N or continuous" },
	{ BASE "[writer w]\nregion = a\nwhen = sometimes\n",
	  "t.wl:9: [writer w] when = sometimes: expected every-scan, after-scan:N or continuous" },
	{ BASE "[writer w]\nregion = a\nwhen = after-scan:x\n",
	  "t.wl:9: [writer w] when = after-scan:x: expected after-scan:N" },
	{ BASE "[writer w]\nregion = a\nwhen = continuous\n",
	  "t.wl:7: [writer w] when = continuous needs rate = page writes per second" },
	{ BASE "[writer w]\nregion = a\nwhen = every-scan\nrate = 5\n",
	  "t.wl:10: [writer w] rate only applies to when = continuous" },
	{ BASE "[writer w]\nregion = a\nwhen = continuous\nrate = fast\n",
	  "t.wl:10: [writer w] rate = fast: expected page writes per second, e.g. 1000 or 1000/s" },
	{ BASE "[writer w]\nregion = a\nwhen = after-scan:1\nfrom = 1\n",
	  "t.wl:10: [writer w] from only applies to when = every-scan or continuous" },
	{ BASE "[writer w]\nregion = a\nwhen = every-scan\nfrom = 2\nuntil = 1\n",
	  "t.wl:11: [writer w] until = 1: ends before from" },
	{ BASE "[writer w]\nregion = a\nwhen = every-scan\npages = 5-12\n",
	  "t.wl:10: [writer w] pages = 5-12: page 12 is past the region's last page 9" },
	{ BASE "[writer w]\nregion = a\nwhen = every-scan\npages = 5-2\n",
	  "t.wl:10: [writer w] pages = 5-2: range 5-2 runs backwards" },
	{ BASE "[writer w]\nregion = a\nwhen = every-scan\npages = 0-5,3-7\n",
	  "t.wl:10: [writer w] pages = 0-5,3-7: pages 0-5 and 3-7 overlap" },
	{ BASE "[writer w]\nregion = a\nwhen = every-scan\npages = some\n",
	  "t.wl:10: [writer w] pages = some: expected all, N, A-B[,...], every:K[+J] or random:N" },
	{ BASE "[writer w]\nregion = a\nwhen = every-scan\npages = every:0\n",
	  "t.wl:10: [writer w] pages = every:0: expected every:K or every:K+J with K >= 1" },
	{ BASE "[writer w]\nregion = a\nwhen = every-scan\npages = random:11\n",
	  "t.wl:10: [writer w] pages = random:11: random:11 picks more pages than the region's 10" },
	{ BASE "[writer w]\nregion = a\nwhen = every-scan\noffset = 4089\n",
	  "t.wl:10: [writer w] offset = 4089: expected a byte offset 0-4088 or random:LO-HI" },
	{ BASE "[writer w]\nregion = a\nwhen = every-scan\noffset = random:9-9\n",
	  "t.wl:10: [writer w] offset = random:9-9: random:LO-HI needs LO < HI" },
	{ BASE "[writer w]\nregion = a\nwhen = every-scan\nvalue = new\n",
	  "t.wl:10: [writer w] value = new: expected fresh or a number" },
	{ BASE "[writer w]\nregion = a\nwhen = after-scan:3\n",
	  "t.wl:7: [writer w] never writes: it starts after scan 3 and the workload stops after "
	  "scan 3" },
	{ BASE "[writer w]\nregion = a\nwhen = every-scan\nprocess = ghost\n",
	  "t.wl:10: [writer w] process = ghost: no such process" },
	/* [event] */
	{ BASE "[event e]\nat = after-scan:1\n",
	  "t.wl:7: [event e] needs action = write, merge, unmerge, unmap, fork, exit, set, run, "
	  "discard, protect, exec, merge-off or uffd-wp" },
	{ BASE "[event e]\naction = write\nregion = a\n", "t.wl:7: [event e] needs at = after-scan:N" },
	{ BASE "[event e]\nat = scan:1\naction = write\nregion = a\n",
	  "t.wl:8: [event e] at = scan:1: expected after-scan:N" },
	{ BASE "[event e]\nat = after-scan:1\naction = explode\n",
	  "t.wl:9: [event e] action = explode: expected write, merge, unmerge, unmap, fork, exit, "
	  "set, run, discard, protect, exec, merge-off or uffd-wp" },
	{ BASE "[event e]\nat = after-scan:1\naction = write\n",
	  "t.wl:7: [event e] action = write needs region = NAME" },
	{ BASE "[event e]\nat = after-scan:1\naction = exit\n",
	  "t.wl:7: [event e] action = exit needs process = NAME" },
	{ BASE "[event e]\nat = after-scan:1\naction = fork\nprocess = main\n",
	  "t.wl:7: [event e] action = fork needs child = NAME (the new process)" },
	{ BASE "[event e]\nat = after-scan:1\naction = fork\nprocess = main\nchild = main\n",
	  "t.wl:11: [event e] child = main: a process of that name already exists" },
	{ BASE "[event e]\nat = after-scan:1\naction = unmap\nregion = a\nvalue = 3\n",
	  "t.wl:11: [event e] value does not apply to action = unmap" },
	{ BASE "[event e]\nat = after-scan:1\naction = unmap\nregion = a\ncolour = red\n",
	  "t.wl:11: unknown key 'colour' in [event e]" },
	{ BASE "[event e]\nat = after-scan:1\naction = set\n",
	  "t.wl:7: [event e] action = set needs set = KNOB=VALUE" },
	{ BASE "[event e]\nat = after-scan:1\naction = set\nset = max_page_sharing\n",
	  "t.wl:10: [event e] set = max_page_sharing: expected KNOB=VALUE, e.g. "
	  "merge_across_nodes=0" },
	{ BASE "[event e]\nat = after-scan:1\naction = set\nset = max_sharing=4\n",
	  "t.wl:10: [event e] set = max_sharing=4: no such KSM knob" },
	{ BASE "[event e]\nat = after-scan:1\naction = set\nset = run=2\n",
	  "t.wl:10: [event e] set = run=2: use action = run to change run" },
	{ BASE "[event e]\nat = after-scan:1\naction = set\nset = max_page_sharing=1\n",
	  "t.wl:10: [event e] set = max_page_sharing=1: at least 2 (the kernel says EINVAL); say "
	  "expect = EINVAL if that is the point" },
	{ BASE "[event e]\nat = after-scan:1\naction = set\nset = max_page_sharing=4\n"
	  "expect = EINVAL\n",
	  "t.wl:10: [event e] set = max_page_sharing=4: expect = EINVAL, but the kernel accepts "
	  "this value" },
	{ BASE "[event e]\nat = after-scan:1\naction = set\nset = smart_scan=0\nexpect = maybe\n",
	  "t.wl:11: [event e] expect = maybe: expected ok, EINVAL, EBUSY, ERANGE or any" },
	{ BASE "[event e]\nat = after-scan:1\naction = run\n",
	  "t.wl:7: [event e] action = run needs run = 0, 1 or 2" },
	{ BASE "[event e]\nat = after-scan:3\naction = write\nregion = a\n",
	  "t.wl:7: [event e] at = after-scan:3 never happens: the workload stops after scan 3" },
	/* whole-run checks */
	{ BASE "[event e]\nat = after-scan:1\naction = run\nrun = 0\n",
	  "t.wl:7: full scans stop after scan 1: run = 0 there and no later event at "
	  "after-scan:1 sets run = 1, but the workload waits for scans = 3" },
	{ BASE "[event e]\nat = after-scan:1\naction = exit\nprocess = main\n",
	  "t.wl:7: no live process has mergeable memory after scan 1, so full scans would never "
	  "complete (the workload waits for scans = 3)" },
	{ "[global]\nscans = 3\n[region a]\npages = 1\nfill = zero\nmerge = none\n",
	  "t.wl:1: no live process has mergeable memory after scan 0, so full scans would never "
	  "complete (the workload waits for scans = 3)" },
	{ BASE "[region b]\nprocess = p2\npages = 1\nfill = zero\n"
	  "[event e]\nat = after-scan:1\naction = exit\nprocess = p2\n"
	  "[event w]\nat = after-scan:2\naction = write\nregion = b\n",
	  "t.wl:15: [event w]: process p2 has already exited" },
	{ BASE "[event e]\nat = after-scan:1\naction = unmap\nregion = a\npages = 4-5\n"
	  "[writer w]\nregion = a\nwhen = every-scan\n",
	  "t.wl:12: [writer w]: page 4 of region a in process main is unmapped by then" },
	{ BASE "[writer w]\nregion = a\nwhen = every-scan\npages = 0-4\n"
	  "[event e]\nat = after-scan:2\naction = unmap\nregion = a\npages = 4-5\n",
	  "t.wl:7: [writer w]: page 4 of region a in process main is unmapped by then" },
	{ BASE "[event e]\nat = after-scan:1\naction = unmap\nregion = a\npages = 4-5\n"
	  "[writer w]\nregion = a\nwhen = every-scan\npages = random:2\n",
	  "t.wl:12: [writer w]: pages = random:N on region a, part of which is unmapped by then" },
	{ BASE "[event f]\nat = after-scan:2\naction = fork\nprocess = main\nchild = kid\n"
	  "[event w]\nat = after-scan:1\naction = write\nregion = a\nprocess = kid\n",
	  "t.wl:12: [event w]: process kid does not exist yet (it is forked by [event f])" },
	{ BASE "[region b]\nprocess = p2\npages = 1\nfill = zero\n"
	  "[event w]\nat = after-scan:1\naction = write\nregion = b\nprocess = main\n",
	  "t.wl:11: [event w]: process main has no region b (it belongs to p2)" },
	{ "[global]\nscans = 3\nadvisor_mode = scan-time\n[region a]\npages = 1\nfill = zero\n"
	  "[event s]\nat = after-scan:1\naction = set\nset = pages_to_scan=200\n",
	  "t.wl:7: [event s] set = pages_to_scan=200: the advisor is on (advisor_mode = "
	  "scan-time), so the kernel answers EINVAL; say expect = EINVAL if that is the point" },
	{ "[global]\nscans = 3\n[region a]\npages = 4\nfill = zero\nmerge = prctl\n"
	  "[event m]\nat = after-scan:1\naction = unmerge\nregion = a\npages = 1\n",
	  "t.wl:11: [event m]: region a uses prctl, which unmerges the whole process: pages must "
	  "be all" },
	{ "[global]\ndescription=#x\nscans = 3\n",
	  "t.wl:2: [global] description = #x: must not start with '#' or ';' (they start a comment)" },
	{ "[global]\nupstream=;x\nscans = 3\n",
	  "t.wl:2: [global] upstream = ;x: must not start with '#' or ';' (they start a comment)" },
	{ "[global]\nscans = 3\nrequires = prctl\n",
	  "t.wl:3: [global] requires = prctl: 'prctl' is not a kernel fact (checksum_first, "
	  "unshares_zero_pages, fork_resets_counts, prctl_merge, exec_keeps_merge_any, "
	  "unshares_uffd_wp or reaches_prot_none)" },
	{ "[global]\nscans = 3\nrequires = prctl_merge,prctl_merge\n",
	  "t.wl:3: [global] requires = prctl_merge,prctl_merge: 'prctl_merge' is listed twice" },
	{ "[global]\nscans = 3\nrequires = prctl_merge,,checksum_first\n",
	  "t.wl:3: [global] requires = prctl_merge,,checksum_first: expected a comma-separated "
	  "list of checksum_first, unshares_zero_pages, fork_resets_counts, prctl_merge, "
	  "exec_keeps_merge_any, unshares_uffd_wp or reaches_prot_none" },
	{ "[global]\nscans = 3\nrequires = prctl_merge,\n",
	  "t.wl:3: [global] requires = prctl_merge,: expected a comma-separated list of "
	  "checksum_first, unshares_zero_pages, fork_resets_counts, prctl_merge, "
	  "exec_keeps_merge_any, unshares_uffd_wp or reaches_prot_none" },
	{ "[global]\nscans = 3\nrequires =\n",
	  "t.wl:3: [global] requires = : expected a comma-separated list of checksum_first, "
	  "unshares_zero_pages, fork_resets_counts, prctl_merge, exec_keeps_merge_any, "
	  "unshares_uffd_wp or reaches_prot_none" },
	{ "[global]\nscans = 5\n[region a]\npages = 100\nfill = zero\n"
	  "[event x]\nat = after-scan:1\naction = unmap\nregion = a\npages = every:3+1\n"
	  "[event w]\nat = after-scan:2\naction = write\nregion = a\npages = every:2\n",
	  "t.wl:11: [event w]: page 4 of region a in process main is unmapped by then" },
	{ "[global]\nscans = 5\n[region a]\npages = 4294967296\nfill = zero\n"
	  "[event x]\nat = after-scan:1\naction = unmap\nregion = a\npages = 4294967000-4294967295\n"
	  "[event w]\nat = after-scan:2\naction = write\nregion = a\npages = every:1000+7\n",
	  "t.wl:11: [event w]: page 4294967007 of region a in process main is unmapped by then" },
	{ BASE "[event x]\nat = after-scan:1\naction = unmap\nregion = a\npages = random:2\n",
	  "t.wl:7: [event x] unmap with pages = random:N: later steps could not be checked "
	  "against the pages it unmaps" },
	{ BASE "[region b] oops\nvalue = 7\n", "t.wl:7: unexpected text after ']' in section header" },
	{ "[global]\ndescription=" X184 "\nscans = 3\n",
	  "t.wl:2: [global] description = " X184 ": too long once normalized (198 characters; a "
	  "line holds 197)" },
	{ "[global]\nscans = 3\n[region a]\nfill = groups\ngroups = 0x7,0x7,0x7,0x7,0x7,0x7,0x7,"
	  "0x7\n", "t.wl:5: [region a] groups = 0x7,0x7,0x7,0x7,0x7,0x7,0x7,0x7: group 1 has 0 "
	  "copies" },
	{ BASE "[event e]\nat = after-scan:1\naction = set\nset = max_page_sharing=3000000000\n"
	  "expect = EINVAL\n",
	  "t.wl:10: [event e] set = max_page_sharing=3000000000: at most 2147483647 (the kernel "
	  "says ERANGE); say expect = ERANGE if that is the point" },
	{ BASE "[event e]\nat = after-scan:1\naction = run\nrun = 3\nexpect = ok\n",
	  "t.wl:10: [event e] run = 3: must be 0, 1 or 2 (the kernel says EINVAL); say "
	  "expect = EINVAL if that is the point" },
	{ BASE "[event e]\nat = after-scan:1\naction = run\nrun = 1\nexpect = EBUSY\n",
	  "t.wl:10: [event e] run = 1: the kernel's run store never answers EBUSY or ERANGE" },
	{ BASE "[event e]\nat = after-scan:1\naction = set\nset = pages_to_scan=0\n",
	  "t.wl:7: [event e] set = pages_to_scan=0: ksmd would never complete another scan, but "
	  "the workload waits for scans = 3" },
	{ BASE "[event a]\nat = after-scan:1\naction = fork\nprocess = main\nchild = k\n"
	  "[event b]\nat = after-scan:1\naction = fork\nprocess = main\nchild = k\n",
	  "t.wl:16: [event b] child = k: a process of that name already exists" },
	/* numbers that overflow are too large, not "not a number" */
	{ "[global]\nscans = 3\nseed = 18446744073709551616\n",
	  "t.wl:3: [global] seed = 18446744073709551616: too large (at most 18446744073709551615)" },
	{ "[global]\nscans = 3\nseed = 0x10000000000000000\n",
	  "t.wl:3: [global] seed = 0x10000000000000000: too large (at most 18446744073709551615)" },
	{ "[global]\nscans = 99999999999999999999\n",
	  "t.wl:2: [global] scans = 99999999999999999999: too large (at most 4294967296)" },
	{ "[global]\ntime = 99999999999999999999s\n",
	  "t.wl:2: [global] time = 99999999999999999999s: too large (at most 18446744073s)" },
	{ "[global]\nscans = 3\ntimeout = 9999999999H\n",
	  "t.wl:3: [global] timeout = 9999999999H: too large (at most 5124095H)" },
	{ "[global]\nscans = 3\n[region a]\nsize = 99999999999t\nfill = zero\n",
	  "t.wl:4: [region a] size = 99999999999t: too large (at most 16t)" },
	{ "[global]\nscans = 3\n[region a]\nsize = 17TiB\nfill = zero\n",
	  "t.wl:4: [region a] size = 17TiB: too large (at most 16TiB)" },
	{ "[global]\nscans = 3\n[region a]\nsize = 99999999999999999999\nfill = zero\n",
	  "t.wl:4: [region a] size = 99999999999999999999: too large (at most 17592186044416)" },
	{ "[global]\nscans = 3\n[region a]\npages = 99999999999999999999\nfill = zero\n",
	  "t.wl:4: [region a] pages = 99999999999999999999: too large (at most 4294967296)" },
	{ "[global]\nscans = 3\n[region a]\npages = 1\nfill = zero\nnode = 99999999999999999999\n",
	  "t.wl:6: [region a] node = 99999999999999999999: too large (at most 1023)" },
	{ "[global]\nscans = 3\n[region a]\npages = 1\nfill = same\nvalue = 99999999999999999999\n",
	  "t.wl:6: [region a] value = 99999999999999999999: too large (at most 9223372036854775807: "
	  "the upper half of 64 bits is reserved for fresh values)" },
	{ BASE "[event e]\nat = after-scan:99999999999999999999\naction = exit\nprocess = main\n",
	  "t.wl:8: [event e] at = after-scan:99999999999999999999: too large (at most 4294967295)" },
	{ BASE "[writer w]\nregion = a\nwhen = every-scan\nuntil = 99999999999999999999\n",
	  "t.wl:10: [writer w] until = 99999999999999999999: too large (at most 4294967295)" },
	{ BASE "[writer w]\nregion = a\nwhen = continuous\nrate = 99999999999999999999/s\n",
	  "t.wl:10: [writer w] rate = 99999999999999999999/s: too large (at most 1000000000 page "
	  "writes per second)" },
	{ BASE "[writer w]\nregion = a\nwhen = every-scan\npages = 1,99999999999999999999\n",
	  "t.wl:10: [writer w] pages = 1,99999999999999999999: page 99999999999999999999 is too "
	  "large (the region's last page is 9)" },
	{ BASE "[writer w]\nregion = a\nwhen = every-scan\npages = random:99999999999999999999\n",
	  "t.wl:10: [writer w] pages = random:99999999999999999999: random:99999999999999999999: "
	  "too large (the region has 10 pages)" },
	{ BASE "[event e]\nat = after-scan:1\naction = run\nrun = 99999999999999999999\n",
	  "t.wl:10: [event e] run = 99999999999999999999: too large (at most 2)" },
	{ "[global]\nscans = 3\n[region a]\nfill = groups\ngroups = 99999999999999999999x1\n",
	  "t.wl:5: [region a] groups = 99999999999999999999x1: group 1: too many copies (at most "
	  "4294967296)" },
	/* an unknown key is named at its own line, before what it leaves missing */
	{ BASE "[event e]\nat = after-scan:1\nacton = write\nregion = a\n",
	  "t.wl:9: unknown key 'acton' in [event e]; did you mean 'action'?" },
	{ BASE "[writer w]\nregoin = a\nwhen = every-scan\n",
	  "t.wl:8: unknown key 'regoin' in [writer w]; did you mean 'region'?" },
	{ "[global]\nscans = 3\nmax_page_shraing = 4\n",
	  "t.wl:3: unknown key 'max_page_shraing' in [global]; did you mean 'max_page_sharing'?" },
	{ BASE "[event e]\nat = after-scan:1\naction = exit\nprocess = main\nwhen = now\n",
	  "t.wl:11: unknown key 'when' in [event e]" },
	/* byte order marks, carriage returns */
	{ "[global]\n\xef\xbb\xbfscans = 3\n",
	  "t.wl:2: a UTF-8 byte order mark (BOM) in the middle of the file (one is allowed only as "
	  "the file's first bytes)" },
	{ "\xef\xbb\xbf\xef\xbb\xbf[global]\nscans = 3\n",
	  "t.wl:1: a UTF-8 byte order mark (BOM) in the middle of the file (one is allowed only as "
	  "the file's first bytes)" },
	{ "[global]\rscans = 3\r[region a]\rpages = 1\rfill = zero\r",
	  "t.wl:1: carriage return (\\r) inside a line: lines must end in \\n or \\r\\n (is this a "
	  "file with old Mac line ends?)" },
	{ "[global]\r\nscans = 3\r\r\n",
	  "t.wl:2: carriage return (\\r) inside a line: lines must end in \\n or \\r\\n (is this a "
	  "file with old Mac line ends?)" },
	/* input quoted in a message is escaped: no byte drives the terminal */
	{ "[global]\nscans = 3\n[region a]\npages = 1\nfill = \x1b[31mred\n",
	  "t.wl:5: [region a] fill = \\x1b[31mred: expected same, unique, zero, groups, none or capture" },
	{ "[global]\nscans = 3\n[region \xff\xfe]\n",
	  "t.wl:3: [region \\xff\\xfe]: names use only letters, digits, '_' and '-'" },
	{ "[global]\nscans = 3\nkernel = \xc2\x9b" "6.1\n",
	  "t.wl:3: [global] kernel = \\xc2\\x9b6.1: expected 6.18, 6.12, 6.10 or 6.1" },
	{ "[global]\nscans = 3\nkernel = n\xc3\xa9\x07\n",
	  "t.wl:3: [global] kernel = n\xc3\xa9\\x07: expected 6.18, 6.12, 6.10 or 6.1" },
	{ "[glob\x7f" "al]\n", "t.wl:1: unknown section [glob\\x7fal] (expected [global], [region NAME], "
	  "[writer NAME], [event NAME] or [expect NAME])" },
	/* the actions that came with the selftests */
	{ BASE "[event u]\nat = after-scan:1\naction = unmap\nregion = a\npages = 3\n"
	  "[event d]\nat = after-scan:2\naction = discard\nregion = a\npages = 2-4\n",
	  "t.wl:12: [event d]: page 3 of region a in process main is unmapped by then" },
	{ BASE "[event p]\nat = after-scan:1\naction = protect\nregion = a\n",
	  "t.wl:7: [event p] action = protect needs prot = none, read or rw" },
	{ BASE "[event p]\nat = after-scan:1\naction = protect\nregion = a\nprot = rwx\n",
	  "t.wl:11: [event p] prot = rwx: expected none, read or rw" },
	{ BASE "[event p]\nat = after-scan:1\naction = protect\nregion = a\nprot = none\n"
	  "pages = 1\n",
	  "t.wl:12: [event p] pages does not apply to action = protect" },
	{ BASE "[event w]\nat = after-scan:1\naction = write\nregion = a\nprot = none\n",
	  "t.wl:11: [event w] prot does not apply to action = write" },
	{ BASE "[event p]\nat = after-scan:1\naction = uffd-wp\nregion = a\npages = 1\n",
	  "t.wl:11: [event p] pages does not apply to action = uffd-wp" },
	{ BASE "[event x]\nat = after-scan:1\naction = exec\n",
	  "t.wl:7: [event x] action = exec needs process = NAME" },
	{ BASE "[event x]\nat = after-scan:1\naction = exec\nprocess = main\nregion = a\n",
	  "t.wl:11: [event x] region does not apply to action = exec" },
	{ BASE "[event off]\nat = after-scan:1\naction = merge-off\nprocess = main\n",
	  "t.wl:7: [event off] action = merge-off: process main has no region with merge = prctl "
	  "(merge-off is prctl(PR_SET_MEMORY_MERGE, 0); use action = unmerge on a region that "
	  "merges by madvise)" },
	{ BASE "[event wp]\nat = after-scan:1\naction = uffd-wp\nregion = a\n"
	  "[event w]\nat = after-scan:2\naction = write\nregion = a\npages = 0\n",
	  "t.wl:11: [event w]: region a in process main is write-protected by userfaultfd by then "
	  "([event wp]): with no fault handler the write would wait forever" },
	{ BASE "[writer w]\nregion = a\nwhen = every-scan\n"
	  "[event wp]\nat = after-scan:1\naction = uffd-wp\nregion = a\n",
	  "t.wl:7: [writer w]: region a in process main is write-protected by userfaultfd by then "
	  "([event wp]): with no fault handler the write would wait forever" },
	{ "[global]\ntime = 2s\n[region a]\npages = 10\nfill = same\nvalue = 1\n"
	  "[writer w]\nregion = a\nwhen = continuous\nrate = 10/s\n"
	  "[event x]\nat = after-scan:1\naction = exec\nprocess = main\n",
	  "t.wl:11: [event x]: process main execs while [writer w] writes into it continuously "
	  "(end the writer before: until = 1)" },
	{ "[global]\ntime = 2s\n[region a]\npages = 10\nfill = same\nvalue = 1\n"
	  "[writer w]\nregion = a\nwhen = continuous\nrate = 10/s\n"
	  "[event p]\nat = after-scan:1\naction = protect\nregion = a\nprot = read\n",
	  "t.wl:7: [writer w]: region a in process main is protected (prot = read) by then "
	  "([event p]): a continuous writer writes with process_vm_writev(), which the "
	  "protection stops; write at scan points instead (those go through /proc/PID/mem)" },
	/* an exec gives the process its pages back */
	{ BASE "[event u]\nat = after-scan:1\naction = unmap\nregion = a\npages = 3\n"
	  "[event x]\nat = after-scan:1\naction = exec\nprocess = main\n"
	  "[event w]\nat = after-scan:2\naction = write\nregion = a\npages = 3\n"
	  "[event u2]\nat = after-scan:2\naction = unmap\nregion = a\npages = 3\n"
	  "[event w2]\nat = after-scan:2\naction = write\nregion = a\npages = 3\n",
	  "t.wl:26: [event w2]: page 3 of region a in process main is unmapped by then" },
	/* [expect] sections */
	{ BASE "[expect e]\npages_sharing = 9\n",
	  "t.wl:7: [expect e] needs at = after-scan:N or end, or event = NAME" },
	{ BASE "[expect e]\nat = end\npages_sharng = 9\n",
	  "t.wl:9: unknown key 'pages_sharng' in [expect e]; did you mean 'pages_sharing'?" },
	{ BASE "[expect e]\nat = after-scan:4\npages_sharing = 9\n",
	  "t.wl:8: [expect e] at = after-scan:4: never happens: the workload stops after scan 3" },
	{ BASE "[expect e]\nat = soon\npages_sharing = 9\n",
	  "t.wl:8: [expect e] at = soon: expected after-scan:N or end" },
	{ BASE "[expect e]\nat = end\npages_sharing = many\n",
	  "t.wl:9: [expect e] pages_sharing = many: expected a number" },
	{ BASE "[expect e]\nat >= after-scan:2\npages_sharing = 9\n",
	  "t.wl:8: [expect e] at >= after-scan:2: only counters are compared: say = here" },
	{ BASE "[expect e]\nat = end\npages_shared ! 1\n",
	  "t.wl:9: expected a comparison: =, !=, <, <=, > or >=" },
	{ BASE "[expect e]\nat = end\nmain.ksm_merging_page = 1\n",
	  "t.wl:9: [expect e] main.ksm_merging_page = 1: no such ksm_stat field (ksm_rmap_items, "
	  "ksm_zero_pages, ksm_merging_pages, ksm_process_profit, ksm_merge_any or "
	  "ksm_mergeable)" },
	{ BASE "[expect e]\nat = end\nkid.ksm_rmap_items < 3\n",
	  "t.wl:9: [expect e] kid.ksm_rmap_items < 3: no such process kid" },
	{ "[global]\nscans = 3\nkernel = 6.1\n[region a]\npages = 1\nfill = zero\n"
	  "[expect e]\nat = end\npages_scanned > 0\n",
	  "t.wl:9: [expect e] pages_scanned > 0: kernel 6.1 has no pages_scanned (it came in 6.6)" },
	{ BASE "[expect e]\nat = end\n",
	  "t.wl:7: [expect e] checks nothing: give a counter, PROCESS.FIELD or duplicates" },
	{ BASE "[expect e]\nat = end\npages_shared >= 1\npages_shared <= 3\npages_shared>=2\n",
	  "t.wl:11: duplicate check 'pages_shared >=' in [expect e] (first at line 9)" },
	{ BASE "[expect e]\nat = end\nduplicates = none\n",
	  "t.wl:9: [expect e] duplicates = none: needs region = NAME" },
	{ BASE "[expect e]\nat = end\nregion = a\npages_shared = 1\n",
	  "t.wl:9: [expect e] region applies only to duplicates" },
	{ BASE "[expect e]\nat = end\nregion = b\nduplicates = none\n",
	  "t.wl:9: [expect e] region = b: no such region" },
	{ BASE "[expect e]\nat = end\nregion = a\nduplicates = some\n",
	  "t.wl:10: [expect e] duplicates = some: expected none or a number of pages" },
	{ BASE "[expect e]\nat = end\nerrno = EBUSY\n",
	  "t.wl:9: [expect e] errno = EBUSY: errno needs event = NAME (a set or run event)" },
	{ BASE "[event f]\nat = after-scan:1\naction = fork\nprocess = main\nchild = kid\n"
	  "[expect e]\nevent = f\nerrno = ok\n",
	  "t.wl:13: [expect e] event = f: errno is checked for a store: an event with action = "
	  "set or run" },
	{ BASE "[event s]\nat = after-scan:1\naction = set\nset = max_page_sharing=8\n"
	  "[expect e]\nevent = s\nerrno = EBUSY\n",
	  "t.wl:13: [expect e] errno = EBUSY: [event s] says expect = ok, and a run stops at any "
	  "other answer (say expect = any there)" },
	{ BASE "[event s]\nat = after-scan:1\naction = set\nset = max_page_sharing=8\n"
	  "expect = any\n[expect e]\nevent = s\nat = end\nerrno = EBUSY\n",
	  "t.wl:14: [expect e] checks the answer of [event s]: it takes no at or counters (the "
	  "event says when)" },
	{ BASE "[event f]\nat = after-scan:2\naction = fork\nprocess = main\nchild = kid\n"
	  "[expect e]\nat = after-scan:2\nkid.ksm_rmap_items = 0\n",
	  "t.wl:14: [expect e] kid.ksm_rmap_items: process kid is forked after scan 2 ([event f]), "
	  "so the row of scan 2 does not have it" },
	{ BASE "[event x]\nat = after-scan:1\naction = exit\nprocess = main\n"
	  "[expect e]\nat = end\nmain.ksm_rmap_items = 0\n",
	  "t.wl:13: [expect e] main.ksm_rmap_items: process main has exited by then ([event x] "
	  "after scan 1)" },
};

/* kernel = 6.1: only what 6.1 has, and the normalized form says no more */
START_TEST(kernel_6_1_has_only_its_knobs)
{
	struct workload *wl = parse_ok("[global]\nkernel = 6.1\nscans = 2\nmerge_across_nodes = 0\n"
				       "[region a]\npages = 4\nfill = same\nvalue = 7\nnode = 1\n");
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_int_eq(wl->kernel, WL_KERNEL_6_1);
	ck_assert(!wl_kernel_has_knob(WL_KERNEL_6_1, WL_KNOB_SMART_SCAN));
	ck_assert(wl_kernel_has_knob(WL_KERNEL_6_1, WL_KNOB_MERGE_ACROSS_NODES));
	ck_assert(wl_kernel_has_knob(WL_KERNEL_6_10, WL_KNOB_ADVISOR_MODE));
	ck_assert(!wl_kernel_exports(WL_KERNEL_6_1, "pages_scanned", NULL));
	ck_assert(!wl_kernel_exports(WL_KERNEL_6_10, "ksm_mergeable", NULL));
	ck_assert(wl_kernel_exports(WL_KERNEL_6_18, "ksm_mergeable", NULL));
	ck_assert(wl_kernel_exports(WL_KERNEL_6_1, "ksm_merging_pages", NULL));
	ck_assert(!wl_kernel_has_prctl_merge(WL_KERNEL_6_1));
	ck_assert_int_eq(wl_print(wl, f), 0);
	fclose(f);
	ck_assert_ptr_null(strstr(text, "smart_scan"));
	ck_assert_ptr_null(strstr(text, "advisor"));
	ck_assert_ptr_nonnull(strstr(text, "kernel = 6.1\n"));
	free(text);
	assert_round_trip(wl);
	wl_free(wl);
}
END_TEST

START_TEST(kernel_semantics_from_a_release)
{
	static const struct {
		const char *release;
		int kernel; /* -1: no row models it */
	} cases[] = {
		{ "6.1.0-28-amd64", WL_KERNEL_6_1 }, { "6.10.14", WL_KERNEL_6_10 },
		{ "6.11.0", WL_KERNEL_6_12 },        { "6.12.117+deb12-amd64", WL_KERNEL_6_12 },
		{ "6.13.2", WL_KERNEL_6_12 },        { "6.14.0", WL_KERNEL_6_18 },
		{ "6.18.0-rc3+", WL_KERNEL_6_18 },   { "7.0.1", WL_KERNEL_6_18 },
		{ "6.6.58", -1 },                    { "5.15.0", -1 },
		{ "linux", -1 },
	};
	enum wl_kernel k;
	char why[300];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = wl_kernel_from_release(cases[i].release, &k, why, sizeof(why));

		ck_assert_msg(rc == (cases[i].kernel < 0 ? -1 : 0), "%s: %s", cases[i].release, why);
		if (rc == 0)
			ck_assert_msg((int)k == cases[i].kernel, "%s: %s", cases[i].release,
				      wl_kernel_name(k));
	}
	ck_assert_int_eq(wl_kernel_from_release("6.6.58", &k, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "the simulator has no semantics for Linux 6.6.58: it models "
			      "6.14 or later (as 6.18), 6.11 to 6.13 (as 6.12), 6.10 and 6.1");
}
END_TEST

/* A kernel built with a smart-scan policy says so at the end of its release. */
START_TEST(kernel_smart_scan_policy_from_a_release)
{
	static const struct {
		const char *release;
		enum wl_smart_scan_policy policy;
	} cases[] = {
		{ "6.12.57+phased", WL_SMART_SCAN_PHASED },
		{ "6.12.0-ksmkit+aligned", WL_SMART_SCAN_ALIGNED },
		{ "6.12+phased", WL_SMART_SCAN_PHASED },
		{ "6.12.117+deb12-amd64", WL_SMART_SCAN_UPSTREAM },
		{ "6.18.0-rc3+", WL_SMART_SCAN_UPSTREAM },
		{ "6.12.57+phasedx", WL_SMART_SCAN_UPSTREAM },
		{ "6.12.57-phased", WL_SMART_SCAN_UPSTREAM },
		{ "+phased", WL_SMART_SCAN_PHASED },
		{ "phased", WL_SMART_SCAN_UPSTREAM },
		{ "", WL_SMART_SCAN_UPSTREAM },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(wl_kernel_smart_scan_policy(cases[i].release) == cases[i].policy,
			      "%s", cases[i].release);
	ck_assert_int_eq(wl_kernel_smart_scan_policy(NULL), WL_SMART_SCAN_UPSTREAM);
}
END_TEST

/* Each row's columns say what its kernel does, and the names come from the rows. */
START_TEST(kernel_rows_hold_each_difference)
{
	char choices[128];

	ck_assert(!wl_kernel_row(WL_KERNEL_6_1)->checksum_first);
	ck_assert(!wl_kernel_row(WL_KERNEL_6_10)->checksum_first);
	ck_assert(wl_kernel_row(WL_KERNEL_6_12)->checksum_first);
	ck_assert(wl_kernel_row(WL_KERNEL_6_18)->checksum_first);
	ck_assert(!wl_kernel_row(WL_KERNEL_6_1)->unshares_zero_pages);
	ck_assert(wl_kernel_row(WL_KERNEL_6_10)->unshares_zero_pages);
	ck_assert(wl_kernel_row(WL_KERNEL_6_1)->fork_copies_counts);
	ck_assert(!wl_kernel_row(WL_KERNEL_6_18)->fork_copies_counts);
	ck_assert(!wl_kernel_has_prctl_merge(WL_KERNEL_6_1));
	ck_assert(wl_kernel_has_prctl_merge(WL_KERNEL_6_12));
	/* what the selftests' actions meet, measured in the guests and here */
	ck_assert(!wl_kernel_row(WL_KERNEL_6_1)->exec_keeps_merge_any);
	ck_assert(wl_kernel_row(WL_KERNEL_6_12)->exec_keeps_merge_any);
	ck_assert(!wl_kernel_row(WL_KERNEL_6_1)->unshares_uffd_wp);
	ck_assert(wl_kernel_row(WL_KERNEL_6_12)->unshares_uffd_wp);
	ck_assert(!wl_kernel_row(WL_KERNEL_6_1)->reaches_prot_none);
	ck_assert(wl_kernel_row(WL_KERNEL_6_18)->reaches_prot_none);
	/* the facts a workload may require, read from the same columns */
	ck_assert(!wl_kernel_has_fact(WL_KERNEL_6_1, WL_FACT_FORK_RESETS_COUNTS));
	ck_assert(wl_kernel_has_fact(WL_KERNEL_6_12, WL_FACT_FORK_RESETS_COUNTS));
	ck_assert(!wl_kernel_has_fact(WL_KERNEL_6_1, WL_FACT_UNSHARES_UFFD_WP));
	ck_assert(wl_kernel_has_fact(WL_KERNEL_6_18, WL_FACT_REACHES_PROT_NONE));
	ck_assert(!wl_kernel_has_fact(WL_KERNEL_6_10, WL_FACT_CHECKSUM_FIRST));
	ck_assert_int_eq(wl_kernel_lacks(WL_KERNEL_6_18, ~0u >> (32 - WL_FACT_COUNT)), -1);
	ck_assert_int_eq(wl_kernel_lacks(WL_KERNEL_6_1, (1u << WL_FACT_PRCTL_MERGE) |
							    (1u << WL_FACT_UNSHARES_UFFD_WP)),
			 WL_FACT_PRCTL_MERGE);
	ck_assert_int_eq(wl_kernel_lacks(WL_KERNEL_6_12, 1u << WL_FACT_UNSHARES_UFFD_WP), -1);
	ck_assert_int_eq(wl_kernel_fact_lookup("unshares_uffd_wp"), WL_FACT_UNSHARES_UFFD_WP);
	ck_assert_int_eq(wl_kernel_fact_lookup("uffd"), -1);
	ck_assert_str_eq(wl_kernel_fact_name(WL_FACT_FORK_RESETS_COUNTS), "fork_resets_counts");
	/* which files and lines exist: by release, from the since table */
	ck_assert(!wl_kernel_exports(WL_KERNEL_6_1, "smart_scan", NULL));
	ck_assert(wl_kernel_exports(WL_KERNEL_6_12, "smart_scan", NULL));
	ck_assert(!wl_kernel_exports(WL_KERNEL_6_12, "ksm_merge_any", NULL));
	ck_assert(wl_kernel_exports(WL_KERNEL_6_18, "ksm_merge_any", NULL));
	ck_assert(!wl_kernel_exports_all(WL_KERNEL_6_12));
	ck_assert(wl_kernel_exports_all(WL_KERNEL_6_18));
	ck_assert_str_eq(wl_export_since("ksm_mergeable"), "6.14");
	ck_assert_ptr_null(wl_export_since("pages_shared"));
	ck_assert_int_eq(wl_kernel_lookup("6.12"), WL_KERNEL_6_12);
	ck_assert_int_eq(wl_kernel_lookup("6.2"), -1);
	ck_assert_str_eq(wl_kernel_choices(choices, sizeof(choices)), "6.18, 6.12, 6.10 or 6.1");
	for (int k = 0; k < WL_KERNEL_COUNT; k++)
		ck_assert_str_eq(wl_kernel_names()[k], wl_kernel_name((enum wl_kernel)k));
	ck_assert_ptr_null(wl_kernel_names()[WL_KERNEL_COUNT]);
}
END_TEST

START_TEST(bad_input_is_rejected_exactly)
{
	const struct bad_case *c = &bad_cases[_i];
	size_t len = strlen(c->text);
	struct workload *wl;
	struct wl_error err;

	/* the NUL case carries its NUL inside the text: measure past it */
	if (strstr(c->error, "NUL byte"))
		len += 1 + strlen(c->text + len + 1);
	ck_assert_int_eq(wl_parse_buffer(c->text, len, "t.wl", &wl, &err), -1);
	ck_assert_ptr_null(wl);
	ck_assert_str_eq(err.text, c->error);
}
END_TEST

static Suite *workload_suite(void)
{
	Suite *s = suite_create("workload");
	TCase *tc;

	tc = tcase_create("units");
	tcase_add_test(tc, sizes_are_base_2);
	tcase_add_test(tc, times_have_suffixes);
	tcase_add_test(tc, knobs_follow_the_kernel);
	suite_add_tcase(s, tc);

	tc = tcase_create("keys");
	tcase_add_test(tc, global_keys);
	tcase_add_test(tc, global_defaults_are_the_kernels);
	tcase_add_test(tc, print_given_keeps_only_given_knobs);
	tcase_add_test(tc, settings_apply_over_a_copy);
	tcase_add_test(tc, kernel_6_1_has_only_its_knobs);
	tcase_add_test(tc, kernel_semantics_from_a_release);
	tcase_add_test(tc, kernel_smart_scan_policy_from_a_release);
	tcase_add_test(tc, kernel_rows_hold_each_difference);
	tcase_add_test(tc, advisor_starts_from_min_pages);
	tcase_add_test(tc, region_keys);
	tcase_add_test(tc, writer_keys);
	tcase_add_test(tc, event_keys);
	tcase_add_test(tc, selftest_actions);
	tcase_add_test(tc, expect_sections);
	tcase_add_test(tc, syntax_forgiveness);
	tcase_add_test(tc, sections_may_refer_forward);
	suite_add_tcase(s, tc);

	tc = tcase_create("schedule");
	tcase_add_test(tc, page_iteration);
	tcase_add_test(tc, random_pages_are_distinct_sorted_and_seeded);
	tcase_add_test(tc, random_offsets_stay_in_range);
	tcase_add_test(tc, a_draw_is_at_hand_without_the_ones_before);
	tcase_add_test(tc, the_first_draw_below_a_limit_is_found_without_drawing);
	tcase_add_test(tc, strided_draws_are_the_stream_s_draws);
	tcase_add_test(tc, the_remainder_by_multiplication_is_the_remainder);
	tcase_add_test(tc, steps_follow_file_order);
	tcase_add_test(tc, fork_child_inherits_unmapped_state);
	suite_add_tcase(s, tc);

	tc = tcase_create("files");
	tcase_add_test(tc, shipped_workloads_round_trip);
	tcase_add_test(tc, missing_file_is_reported);
	tcase_add_test(tc, nul_byte_in_file_is_an_error);
	tcase_add_test(tc, unterminated_buffer_with_a_bad_last_line);
	tcase_add_test(tc, child_may_be_named_before_its_fork_section);
	suite_add_tcase(s, tc);

	tc = tcase_create("bounds");
	tcase_add_test(tc, huge_line_is_refused_at_its_line);
	tcase_add_test(tc, dev_zero_is_refused_at_line_1);
	tcase_add_test(tc, file_size_is_bounded);
	tcase_add_test(tc, file_and_buffer_read_alike);
	suite_add_tcase(s, tc);

	/*
	 * Large inputs. Not a timing test (bench/parser-scaling measures), but
	 * the timeout is a backstop: these take about a second here and a
	 * quadratic parser over two minutes, while sanitizer builds on a busy
	 * machine stay well inside it.
	 */
	tc = tcase_create("scale");
	tcase_set_timeout(tc, 100);
	tcase_add_test(tc, two_hundred_thousand_events_parse);
	tcase_add_test(tc, fifty_thousand_regions_parse);
	tcase_add_test(tc, many_forks_keep_their_own_holes);
	tcase_add_test(tc, holes_match_a_page_model);
	suite_add_tcase(s, tc);

	tc = tcase_create("bad_input");
	tcase_add_loop_test(tc, bad_input_is_rejected_exactly, 0,
			    (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(workload_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
