/*
 * check_sim_admit.c - admission (sim_admit, sim/sim_admit.c) and the
 * driver's progress reports: a workload that does not fit a given budget is
 * refused naming the line of the key that does not fit (a region's size,
 * scans, time, a writer's rate), one that fits is accepted (1 TiB in a budget
 * like this project's 24 GiB machine's), and the estimate is an upper bound
 * on the memory a real run takes, within twice it, at 1 GiB simulated. The
 * progress callback sees setup, every full scan and the writes; a batch run
 * in pieces is the same batch.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim_content.h"
#include "sim_driver.h"

#define GIB (UINT64_C(1) << 30)
/* MemAvailable of the project's machine with nothing else running */
#define BUDGET_22G (UINT64_C(22) * GIB)

static struct workload *parse(const char *text)
{
	struct workload *wl;
	struct wl_error err;

	if (wl_parse_buffer(text, strlen(text), "t.wl", &wl, &err) != 0)
		ck_abort_msg("%s", err.text);
	return wl;
}

/* sim_admit's verdict on @text with @budget; the message in @err. */
static int admit(const char *text, const struct sim_admit_options *opt, uint64_t budget,
		 struct sim_estimate *est, char *err, size_t len)
{
	struct workload *wl = parse(text);
	int rc;

	err[0] = '\0';
	rc = sim_admit(wl, opt, budget, est, err, len);
	wl_free(wl);
	return rc;
}

static void assert_starts(const char *err, const char *prefix)
{
	ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0, "wanted '%s...', got '%s'", prefix,
		      err);
}

/* --- refusals name the right line ------------------------------------------------ */

START_TEST(a_region_too_large_is_refused_at_its_size_line)
{
	struct sim_estimate est;
	char err[1024];

	ck_assert_int_eq(admit("[global]\nscans = 2\n\n[region small]\npages = 10\nfill = same\n"
			       "value = 1\n\n[region vm]\nfill = same\nvalue = 1\nsize = 2t\n",
			       NULL, BUDGET_22G, &est, err, sizeof(err)),
			 -1);
	assert_starts(err, "t.wl:12: [region vm] size = 2t needs ");
	ck_assert_msg(strstr(err, "44 bytes a page") && strstr(err, "22.0 GiB available"), "%s",
		      err);
	/* 2 TiB of 4 KiB pages at 44 bytes each: 22 GiB, and the rest makes it more */
	ck_assert_uint_ge(est.page_bytes, UINT64_C(22) * GIB);
	ck_assert_uint_eq(est.pages, (UINT64_C(2) << 40) / 4096 + 10);
	ck_assert_uint_eq(est.page_cost, 44);
}
END_TEST

START_TEST(forked_copies_count)
{
	struct sim_estimate one, two;
	char err[1024];

	/* 300 GiB fits 22 GiB; a fork doubles the slots (600 GiB still fits) */
	ck_assert_int_eq(admit("[global]\nscans = 2\n[region a]\nsize = 300g\nfill = unique\n",
			       NULL, BUDGET_22G, &one, err, sizeof(err)), 0);
	ck_assert_int_eq(admit("[global]\nscans = 2\n[region a]\nsize = 300g\nfill = unique\n"
			       "[event f]\nat = after-scan:1\naction = fork\nprocess = main\n"
			       "child = kid\n",
			       NULL, BUDGET_22G, &two, err, sizeof(err)), 0);
	ck_assert_uint_eq(two.pages, 2 * one.pages);
	ck_assert_uint_ge(two.page_bytes, 2 * one.page_bytes - 4096);
	/* and 1 TiB with a fork is 2 TiB of pages: refused at the size line */
	ck_assert_int_eq(admit("[global]\nscans = 2\n[region a]\nsize = 1t\nfill = unique\n"
			       "[event f]\nat = after-scan:1\naction = fork\nprocess = main\n"
			       "child = kid\n",
			       NULL, BUDGET_22G, &two, err, sizeof(err)), -1);
	assert_starts(err, "t.wl:4: [region a] size = 1t needs ");
}
END_TEST

START_TEST(more_pages_than_the_simulator_holds_are_refused)
{
	char err[1024];

	/* 2 x 9 TiB: beyond the 32-bit page ids whatever the memory */
	ck_assert_int_eq(admit("[global]\nscans = 1\n[region a]\nsize = 9t\nfill = none\n"
			       "[region b]\nsize = 9t\nfill = none\n",
			       NULL, UINT64_MAX, NULL, err, sizeof(err)), -1);
	assert_starts(err, "t.wl:4: [region a] size = 9t: the simulator holds at most ");
}
END_TEST

START_TEST(too_many_trace_rows_are_refused_at_the_scans_line)
{
	struct sim_estimate est;
	char err[1024];

	ck_assert_int_eq(admit("[global]\npages_to_scan = 100\nscans = 1000000000\n"
			       "[region a]\npages = 100\nfill = same\nvalue = 1\n",
			       NULL, BUDGET_22G, &est, err, sizeof(err)), -1);
	assert_starts(err, "t.wl:3: [global] scans = 1000000000 needs ");
	ck_assert_uint_eq(est.rows, UINT64_C(1000000001));
	/* every row is a struct trace_row and its process columns */
	ck_assert_uint_ge(est.trace_bytes, est.rows * sizeof(struct trace_row));
	/* a thousand scans of it fit easily */
	ck_assert_int_eq(admit("[global]\npages_to_scan = 100\nscans = 1000\n"
			       "[region a]\npages = 100\nfill = same\nvalue = 1\n",
			       NULL, BUDGET_22G, &est, err, sizeof(err)), 0);
	ck_assert_uint_eq(est.rows, 1001);
}
END_TEST

START_TEST(per_batch_rows_count)
{
	struct sim_admit_options opt = { .per_batch = true };
	struct sim_estimate est;
	char err[1024];

	/* 1 GiB scanned 100 pages a batch, 100000 times: 2.6e8 batch rows */
	ck_assert_int_eq(admit("[global]\npages_to_scan = 100\nscans = 100000\n"
			       "[region a]\nsize = 1g\nfill = same\nvalue = 1\n",
			       &opt, BUDGET_22G, &est, err, sizeof(err)), -1);
	assert_starts(err, "t.wl:3: [global] scans = 100000 needs ");
	ck_assert_uint_ge(est.rows, UINT64_C(100000) * 262144 / 100);
	/* without per-batch rows, the same run fits */
	ck_assert_int_eq(admit("[global]\npages_to_scan = 100\nscans = 100000\n"
			       "[region a]\nsize = 1g\nfill = same\nvalue = 1\n",
			       NULL, BUDGET_22G, &est, err, sizeof(err)), 0);
}
END_TEST

START_TEST(a_continuous_writer_too_fast_is_refused_at_its_rate_line)
{
	struct sim_estimate est;
	char err[1024];
	const char *fast = "[global]\ntime = 1h\n[region a]\npages = 100\nfill = same\n"
			   "value = 1\n[writer w]\nregion = a\nwhen = continuous\n"
			   "rate = 1000000000\n";

	ck_assert_int_eq(admit(fast, NULL, BUDGET_22G, &est, err, sizeof(err)), -1);
	assert_starts(err, "t.wl:10: [writer w] rate = 1000000000: 3.6e+12 page writes over "
			   "time = 1h");
	ck_assert_uint_eq(est.writes, UINT64_C(3600000000000) + 1);
	/* a thousand a second for an hour is 3.6 million writes: fine */
	ck_assert_int_eq(admit("[global]\ntime = 1h\n[region a]\npages = 100\nfill = same\n"
			       "value = 1\n[writer w]\nregion = a\nwhen = continuous\nrate = 1000\n",
			       NULL, BUDGET_22G, &est, err, sizeof(err)), 0);
	ck_assert_uint_eq(est.writes, UINT64_C(3600001));
	/* in a run that stops after scans, their count is known only as it runs */
	ck_assert_int_eq(admit("[global]\nscans = 3\n[region a]\npages = 100\nfill = same\n"
			       "value = 1\n[writer w]\nregion = a\nwhen = continuous\nrate = 1000\n",
			       NULL, BUDGET_22G, &est, err, sizeof(err)), 0);
	ck_assert_uint_eq(est.writes, SIM_WRITES_UNKNOWN);
}
END_TEST

START_TEST(every_scan_writes_are_counted_and_bounded)
{
	struct sim_estimate est;
	char err[1024];

	/* 2^28 pages written after each of 9999 scans: 2.7e12 writes */
	ck_assert_int_eq(admit("[global]\nscans = 10000\n[region a]\nsize = 1t\nfill = same\n"
			       "value = 1\n[writer w]\nregion = a\nwhen = every-scan\n"
			       "value = fresh\n",
			       NULL, UINT64_MAX, &est, err, sizeof(err)), -1);
	assert_starts(err, "t.wl:2: [global] scans = 10000: the writers write 2.68e+12 pages");
	ck_assert_int_eq(admit("[global]\nscans = 10\n[region a]\npages = 1000\nfill = same\n"
			       "value = 1\n[writer w]\nregion = a\npages = 0-99\nwhen = every-scan\n"
			       "from = 2\n[event e]\nat = after-scan:3\naction = write\nregion = a\n"
			       "pages = 0-9\nvalue = 5\n",
			       NULL, UINT64_MAX, &est, err, sizeof(err)), 0);
	/* after scans 2..9 (not after the last one), and the event's ten */
	ck_assert_uint_eq(est.writes, 8 * 100 + 10);
}
END_TEST

START_TEST(a_time_stop_without_a_shortest_batch_is_refused_at_the_time_line)
{
	struct sim_config cfg;
	struct sim_admit_options opt;
	char err[1024];

	sim_config_default(&cfg);
	cfg.costs.busy_batch_ns = 0;
	/* a full scan still visits its 10 pages: the scan rows are bounded */
	opt = (struct sim_admit_options){ .costs = &cfg.costs };
	ck_assert_msg(admit("[global]\nsleep_millisecs = 0\ntime = 10s\n[region a]\npages = 10\n"
			    "fill = same\nvalue = 1\n",
			    &opt, BUDGET_22G, NULL, err, sizeof(err)) == 0, "%s", err);
	/* but not the rows of batches, nor scans that cost nothing */
	opt.per_batch = true;
	ck_assert_int_eq(admit("[global]\nsleep_millisecs = 0\ntime = 10s\n[region a]\npages = 10\n"
			       "fill = same\nvalue = 1\n",
			       &opt, BUDGET_22G, NULL, err, sizeof(err)), -1);
	assert_starts(err, "t.wl:3: [global] time = 10s: ");
	opt.per_batch = false;
	cfg.costs.visit_ns = cfg.costs.visit_pmd_ns = 0;
	ck_assert_int_eq(admit("[global]\nsleep_millisecs = 0\ntime = 10s\n[region a]\npages = 10\n"
			       "fill = same\nvalue = 1\n",
			       &opt, BUDGET_22G, NULL, err, sizeof(err)), -1);
	assert_starts(err, "t.wl:3: [global] time = 10s: ");
	/* with the default costs a batch lasts at least 15 us */
	ck_assert_int_eq(admit("[global]\nsleep_millisecs = 0\ntime = 10s\n[region a]\npages = 10\n"
			       "fill = same\nvalue = 1\n",
			       NULL, BUDGET_22G, NULL, err, sizeof(err)), 0);
}
END_TEST

START_TEST(page_captures_count)
{
	struct sim_admit_options opt = { .traces = 2, .capture_bytes = 80 };
	struct sim_estimate without, with;
	char err[1024];
	const char *text = "[global]\nscans = 19\n[region a]\nsize = 64g\nfill = same\nvalue = 1\n";

	ck_assert_int_eq(admit(text, NULL, BUDGET_22G, &without, err, sizeof(err)), 0);
	/* 16M pages at 20 scan rows, 80 bytes each: 25 GiB more, refused at the size */
	ck_assert_int_eq(admit(text, &opt, BUDGET_22G, &with, err, sizeof(err)), -1);
	assert_starts(err, "t.wl:4: [region a] size = 64g needs ");
	ck_assert_msg(strstr(err, "page captures at every scan: "), "%s", err);
	ck_assert_uint_ge(with.capture_bytes, UINT64_C(20) * (16 << 20) * 80);
	ck_assert_uint_eq(with.page_bytes, without.page_bytes);
}
END_TEST

/*
 * A frame's mapcount is 23 bits: max_page_sharing above half of that is
 * refused, in [global] and in an event naming its line, and the machine's
 * own store says ERANGE; the largest it takes is accepted.
 */
START_TEST(a_max_page_sharing_past_a_frames_mapcount_is_refused)
{
	struct sim_estimate est;
	struct sim_config cfg;
	struct sim *s;
	char err[1024];

	ck_assert_int_eq(admit("[global]\nscans = 2\nmax_page_sharing = 4194304\n[region a]\n"
			       "pages = 10\nfill = same\nvalue = 1\n",
			       NULL, BUDGET_22G, &est, err, sizeof(err)),
			 -1);
	assert_starts(err, "t.wl: [global] max_page_sharing = 4194304: the simulator takes at "
			   "most 4194303");
	ck_assert_int_eq(admit("[global]\nscans = 2\n[region a]\npages = 10\nfill = same\n"
			       "value = 1\n[event e]\nat = after-scan:1\naction = set\n"
			       "set = max_page_sharing=5000000\n",
			       NULL, BUDGET_22G, &est, err, sizeof(err)),
			 -1);
	assert_starts(err, "t.wl:7: [event e] set = max_page_sharing=5000000: the simulator");
	ck_assert_int_eq(admit("[global]\nscans = 2\nmax_page_sharing = 4194303\n[region a]\n"
			       "pages = 10\nfill = same\nvalue = 1\n",
			       NULL, BUDGET_22G, &est, err, sizeof(err)),
			 0);
	sim_config_default(&cfg);
	s = sim_new(&cfg, err, sizeof(err));
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(sim_knob_store(s, WL_KNOB_MAX_PAGE_SHARING, 4194304), ERANGE);
	ck_assert_int_eq(sim_knob_store(s, WL_KNOB_MAX_PAGE_SHARING, 4194303), 0);
	sim_free(s);
}
END_TEST

/* --- one tebibyte fits ---------------------------------------------------------- */

START_TEST(one_tib_is_accepted_in_22_gib)
{
	static const char *const fills[] = { "fill = unique\n", "fill = same\nvalue = 7\n",
					     "fill = zero\n" };
	struct sim_estimate est;
	char text[512], err[1024];

	for (size_t i = 0; i < sizeof(fills) / sizeof(fills[0]); i++) {
		snprintf(text, sizeof(text),
			 "[global]\nscans = 2\npages_to_scan = 100000000\nsleep_millisecs = 0\n"
			 "[region vm]\nsize = 1t\n%s", fills[i]);
		ck_assert_msg(admit(text, NULL, BUDGET_22G, &est, err, sizeof(err)) == 0, "%s: %s",
			      fills[i], err);
		/* 44 bytes a page, and little else: 11 GiB and some */
		ck_assert_uint_eq(est.pages, UINT64_C(1) << 28);
		ck_assert_uint_ge(est.bytes, UINT64_C(11) * GIB);
		ck_assert_uint_le(est.bytes, UINT64_C(12) * GIB);
	}
	/* 2 TiB is more than 22 GiB can hold at 44 bytes a page */
	ck_assert_int_eq(admit("[global]\nscans = 2\n[region vm]\nsize = 2t\nfill = unique\n", NULL,
			       BUDGET_22G, &est, err, sizeof(err)), -1);
}
END_TEST

START_TEST(writes_make_stable_nodes_and_contents_count)
{
	struct sim_estimate still, fresh, fixed, random;
	char err[1024];
	const char *base = "[global]\nscans = 4\n[region a]\npages = 100000\nfill = same\n"
			   "value = 1\n";
	char text[512];

	ck_assert_int_eq(admit(base, NULL, BUDGET_22G, &still, err, sizeof(err)), 0);
	/* identical pages that stay identical: a dup per max_page_sharing (256) */
	ck_assert_uint_le(still.stable_nodes, 100000 / 256 + 3);
	ck_assert_uint_eq(still.contents, 0);
	/* fresh values from after scan 1, before anything merged: those pages never merge */
	snprintf(text, sizeof(text), "%s[writer w]\nregion = a\npages = 0-9999\nwhen = every-scan\n"
		 "value = fresh\noffset = 8\n", base);
	ck_assert_int_eq(admit(text, NULL, BUDGET_22G, &fresh, err, sizeof(err)), 0);
	ck_assert_uint_le(fresh.stable_nodes, still.stable_nodes);
	/* each a word token over the plain base: no entry (fresh_words_need_no_entry) */
	ck_assert_uint_eq(fresh.contents, 0);
	/* from after scan 2, once merging may have begun: a KSM page per two pages */
	snprintf(text, sizeof(text), "%s[writer w]\nregion = a\npages = 0-9999\nwhen = every-scan\n"
		 "value = fresh\noffset = 8\nfrom = 2\n", base);
	ck_assert_int_eq(admit(text, NULL, BUDGET_22G, &fresh, err, sizeof(err)), 0);
	ck_assert_uint_ge(fresh.stable_nodes, 100000 / 2);
	snprintf(text, sizeof(text), "%s[writer w]\nregion = a\npages = 0-9999\nwhen = every-scan\n"
		 "value = 5\noffset = 8\n", base);
	ck_assert_int_eq(admit(text, NULL, BUDGET_22G, &fixed, err, sizeof(err)), 0);
	/* fixed values can make pages equal again and again: two nodes a page */
	ck_assert_uint_ge(fixed.stable_nodes, 2 * 10000);
	/* random offsets: each content may spill its patches out of the window */
	snprintf(text, sizeof(text), "%s[writer w]\nregion = a\npages = 0-9999\nwhen = every-scan\n"
		 "value = fresh\noffset = random:0-4088\n", base);
	ck_assert_int_eq(admit(text, NULL, BUDGET_22G, &random, err, sizeof(err)), 0);
	ck_assert_uint_ge(random.content_bytes,
			  fresh.content_bytes + 10000 * 4096 * sizeof(struct sim_patch_byte));
}
END_TEST

/*
 * Fresh values at one offset over identical pages are word tokens, with no
 * entry, while the content store's sites last; anything that can take a site
 * first, or give a page an entry, brings the entries back.
 */
START_TEST(fresh_words_need_no_entry_while_sites_last)
{
	static const struct {
		const char *extra;
		uint64_t contents;
	} cases[] = {
		{ "", 0 },
		/* a second offset: a page written at both holds an entry */
		{ "[writer v]\nregion = a\npages = 0-99\nwhen = every-scan\nvalue = fresh\n"
		  "offset = 16\n", 10100 },
		/* a fixed value: an entry, which later fresh writes copy */
		{ "[event e]\nat = after-scan:1\naction = write\nregion = a\npages = 0\n"
		  "value = 3\n", 10001 },
		/* fresh values over unique pages take the sites first */
		{ "[region u]\npages = 100\nfill = unique\n[writer v]\nregion = u\n"
		  "pages = all\nwhen = every-scan\nvalue = fresh\noffset = 0\n", 10100 },
		/* a discard brings the pages back as zeros, another base */
		{ "[event d]\nat = after-scan:2\naction = discard\nregion = a\npages = 0-9\n",
		  10000 },
	};
	const char *base = "[global]\nscans = 4\n[region a]\npages = 100000\nfill = same\n"
			   "value = 1\n[writer w]\nregion = a\npages = 0-9999\nwhen = every-scan\n"
			   "value = fresh\noffset = 8\n";
	struct sim_estimate est;
	char err[1024], text[2048];
	int n;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "%s%s", base, cases[i].extra);
		ck_assert_int_eq(admit(text, NULL, BUDGET_22G, &est, err, sizeof(err)), 0);
		ck_assert_msg(est.contents == cases[i].contents, "case %zu: %llu contents, not %llu",
			      i, (unsigned long long)est.contents,
			      (unsigned long long)cases[i].contents);
	}
	/* nine regions, nine sites: one more than the store has */
	for (unsigned k = 1; k <= 9; k++) {
		n = snprintf(text, sizeof(text), "[global]\nscans = 4\n");
		for (unsigned r = 0; r < k; r++)
			n += snprintf(text + n, sizeof(text) - (size_t)n,
				      "[region r%u]\npages = 10\nfill = same\nvalue = %u\n"
				      "[writer w%u]\nregion = r%u\npages = all\nwhen = every-scan\n"
				      "value = fresh\noffset = 0\n", r, r + 1, r, r);
		ck_assert_int_eq(admit(text, NULL, BUDGET_22G, &est, err, sizeof(err)), 0);
		ck_assert_uint_eq(est.contents, k <= SIM_WORD_SITES ? 0 : 10 * k);
	}
}
END_TEST

/* --- the estimate against a real run ---------------------------------------------- */

static void last_writes(void *arg, const struct sim_progress *p, const struct sim *s)
{
	(void)s;
	*(uint64_t *)arg = p->writes;
}

START_TEST(a_time_stop_has_no_more_rows_or_writes_than_estimated)
{
	static const char *const runs[] = {
		"[global]\ntime = 2s\nsleep_millisecs = 0\n[region a]\npages = 4096\n"
		"fill = same\nvalue = 3\n[writer w]\nregion = a\npages = every:8\n"
		"when = continuous\nrate = 100000\nvalue = fresh\n",
		"[global]\ntime = 30s\n[region a]\npages = 2048\nfill = unique\nthp = always\n"
		"[writer w]\nregion = a\npages = random:10\nwhen = every-scan\nfrom = 0\n"
		"value = fresh\n",
		"[global]\ntime = 5s\npages_to_scan = 50\nsleep_millisecs = 0\n[region a]\n"
		"pages = 300\nfill = zero\n[region b]\npages = 100\nfill = same\nvalue = 1\n"
		"merge = none\n",
	};

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		for (int per_batch = 0; per_batch < 2; per_batch++) {
			struct workload *wl = parse(runs[i]);
			struct sim_admit_options aopt = { .per_batch = per_batch };
			uint64_t writes = 0;
			struct sim_run_options opt = { .per_batch = per_batch,
						       .progress = last_writes,
						       .progress_arg = &writes,
						       .progress_steps = 1 };
			struct sim_estimate est;
			struct trace *t;
			char err[512];

			ck_assert_int_eq(sim_estimate(wl, &aopt, &est), 0);
			ck_assert_int_eq(sim_run_workload(wl, &opt, &t, err, sizeof(err)), 0);
			ck_assert_msg(t->nrows <= est.rows, "run %zu: %zu rows, %llu estimated", i,
				      t->nrows, (unsigned long long)est.rows);
			ck_assert_msg(writes <= est.writes, "run %zu: %llu writes, %llu estimated", i,
				      (unsigned long long)writes, (unsigned long long)est.writes);
			trace_free(t);
			wl_free(wl);
		}
	}
}
END_TEST

static uint64_t status_kib(const char *field)
{
	char line[256];
	uint64_t kib = 0;
	FILE *f = fopen("/proc/self/status", "r");
	size_t n = strlen(field);

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, n) == 0 && line[n] == ':')
			kib = strtoull(line + n + 1, NULL, 10);
	fclose(f);
	return kib;
}

/*
 * In a child: the peak resident memory a run of @text adds, in bytes (the
 * peak is reset first: clear_refs 5), and the estimate.
 */
static void measure(const char *text, uint64_t *grew, uint64_t *estimate)
{
	int fd[2];
	uint64_t got[2] = { 0, 0 };
	pid_t pid;
	int status;

	ck_assert_int_eq(pipe(fd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct workload *wl = parse(text);
		struct sim_estimate est;
		struct trace *t;
		char err[512];
		uint64_t before, after;
		FILE *f = fopen("/proc/self/clear_refs", "w");

		if (f) {
			fputs("5", f);
			fclose(f);
		}
		sim_estimate(wl, NULL, &est);
		before = status_kib("VmRSS");
		if (sim_run_workload(wl, NULL, &t, err, sizeof(err)) != 0)
			_exit(3);
		after = status_kib("VmHWM");
		got[0] = (after - before) * 1024;
		got[1] = est.bytes;
		if (write(fd[1], got, sizeof(got)) != sizeof(got))
			_exit(4);
		_exit(0);
	}
	close(fd[1]);
	ck_assert_int_eq(read(fd[0], got, sizeof(got)), (ssize_t)sizeof(got));
	close(fd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	*grew = got[0];
	*estimate = got[1];
}

START_TEST(the_estimate_bounds_a_real_run_within_twice)
{
	/* 1 GiB simulated (262144 pages), four ways; @twice: within 2x is asserted */
	static const struct {
		const char *text;
		bool twice;
	} mixes[] = {
		{ "[region a]\nsize = 1g\nfill = same\nvalue = 7\n", true },
		{ "[region a]\nsize = 1g\nfill = unique\n", true },
		/* a quarter rewritten with fresh values after every scan */
		{ "[region a]\nsize = 1g\nfill = same\nvalue = 7\n[writer w]\nregion = a\n"
		  "pages = every:4\nwhen = every-scan\nvalue = fresh\noffset = 4088\n", true },
		/* Nai Xia's writer over 24 bytes: each page a run, its block larger
		 * than the spilled array of the bytes it spans */
		{ "[region a]\nsize = 1g\nfill = same\nvalue = 1\n[writer w]\nregion = a\n"
		  "pages = all\nwhen = continuous\nrate = 10000000/s\nvalue = fresh\n"
		  "offset = random:4000-4016\n", true },
		/*
		 * Forked, then half of the child's copy rewritten once merging has
		 * begun: the stable-node bound assumes the worst interleaving (a
		 * KSM page for every two pages), about 2.1-2.3x what this run takes.
		 */
		{ "[region a]\nsize = 512m\nfill = same\nvalue = 7\n[event f]\nat = after-scan:1\n"
		  "action = fork\nprocess = main\nchild = kid\n[event w]\nat = after-scan:2\n"
		  "action = write\nregion = a\nprocess = kid\npages = every:2\nvalue = fresh\n",
		  false },
	};

#ifdef __SANITIZE_ADDRESS__
	return; /* shadow memory and redzones are not the simulator's */
#endif
	for (size_t i = 0; i < sizeof(mixes) / sizeof(mixes[0]); i++) {
		char text[1024];
		uint64_t grew, est;

		snprintf(text, sizeof(text), "[global]\nscans = 4\npages_to_scan = 100000\n"
			 "sleep_millisecs = 0\n%s", mixes[i].text);
		measure(text, &grew, &est);
		fprintf(stderr, "mix %zu: estimate %.1f MiB, real growth %.1f MiB (%.2fx)\n", i,
			(double)est / (1 << 20), (double)grew / (1 << 20), (double)est / (double)grew);
		ck_assert_msg(est >= grew, "mix %zu: estimate %llu < real %llu", i,
			      (unsigned long long)est, (unsigned long long)grew);
		ck_assert_msg(!mixes[i].twice || est <= 2 * grew,
			      "mix %zu: estimate %llu > twice real %llu", i,
			      (unsigned long long)est, (unsigned long long)grew);
	}
}
END_TEST

/* A detector that keeps state per rmap_item (partial hashing: 12 bytes) pays for it. */
START_TEST(a_detectors_item_state_is_counted)
{
	static const char fmt[] = "[global]\nscans = 4\npages_to_scan = 100000\nsleep_millisecs = 0\n"
				  "detector = %s\n[region a]\nsize = 1g\nfill = unique\n";
	struct sim_estimate sum, part;
	char text[512], err[1024];
	uint64_t grew, est;

	snprintf(text, sizeof(text), fmt, "checksum");
	ck_assert_int_eq(admit(text, NULL, BUDGET_22G, &sum, err, sizeof(err)), 0);
	snprintf(text, sizeof(text), fmt, "partial");
	ck_assert_int_eq(admit(text, NULL, BUDGET_22G, &part, err, sizeof(err)), 0);
	ck_assert_uint_eq(sum.page_cost, 44);
	ck_assert_uint_eq(part.page_cost, 56);
	ck_assert_uint_ge(part.page_bytes - sum.page_bytes, 12 * sum.pages);
#ifdef __SANITIZE_ADDRESS__
	return; /* shadow memory and redzones are not the simulator's */
#endif
	measure(text, &grew, &est);
	ck_assert_msg(est >= grew && est <= 2 * grew, "estimate %llu, real %llu",
		      (unsigned long long)est, (unsigned long long)grew);
}
END_TEST

/* --- progress ------------------------------------------------------------------------ */

struct seen {
	uint64_t calls, setup_calls, scan_calls, last_scans, last_writes, planned;
	uint64_t last_setup_pages;
	bool monotone;
};

static void record(void *arg, const struct sim_progress *p, const struct sim *s)
{
	struct seen *seen = arg;

	ck_assert_ptr_nonnull(s);
	seen->calls++;
	if (p->setup) {
		seen->setup_calls++;
		if (p->setup_pages < seen->last_setup_pages || p->setup_pages > p->setup_total)
			seen->monotone = false;
		seen->last_setup_pages = p->setup_pages;
		return;
	}
	if (p->scans < seen->last_scans || p->writes < seen->last_writes)
		seen->monotone = false;
	if (p->scan_ended) {
		seen->scan_calls++;
		if (p->scans != seen->last_scans + 1)
			seen->monotone = false;
	}
	seen->last_scans = p->scans;
	seen->last_writes = p->writes;
	seen->planned = p->planned_writes;
	ck_assert_uint_eq(p->stop_scans, 5);
}

START_TEST(progress_sees_setup_scans_and_writes)
{
	struct workload *wl = parse("[global]\nscans = 5\npages_to_scan = 1000\n"
				    "[region a]\npages = 20000\nfill = same\nvalue = 3\n"
				    "[writer w]\nregion = a\npages = 0-999\nwhen = every-scan\n"
				    "value = fresh\n");
	struct seen seen = { .monotone = true };
	struct sim_run_options opt = { .progress = record, .progress_arg = &seen,
				       .progress_steps = 1000 };
	struct trace *t;
	char err[512];

	ck_assert_int_eq(sim_run_workload(wl, &opt, &t, err, sizeof(err)), 0);
	ck_assert(seen.monotone);
	ck_assert_uint_ge(seen.setup_calls, 20000 / 1000 - 1);
	ck_assert_uint_eq(seen.scan_calls, 5);
	ck_assert_uint_eq(seen.last_scans, 5);
	/* writes after scans 1..4 (every-scan starts after scan 1), as planned */
	ck_assert_uint_eq(seen.last_writes, 4 * 1000);
	ck_assert_uint_eq(seen.planned, 4 * 1000);
	/* between the scans too: 5 scans of 20000 pages every 1000 steps */
	ck_assert_uint_ge(seen.calls, seen.setup_calls + 5 + 5 * 20000 / 1000 - 5);
	trace_free(t);
	wl_free(wl);
}
END_TEST

START_TEST(a_batch_in_pieces_is_the_same_batch)
{
	struct sim_config cfg;
	struct sim *a, *b;
	char err[128];

	sim_config_default(&cfg);
	a = sim_new(&cfg, err, sizeof(err));
	ck_assert_ptr_nonnull(a);
	sim_knob_store(a, WL_KNOB_PAGES_TO_SCAN, 37);
	sim_mmap(a, sim_process_new(a), 500, -1, false, 0);
	for (uint64_t p = 0; p < 500; p++)
		sim_fill(a, 0, p, p % 7);
	sim_madvise(a, 0, 0, 500, true);
	sim_run_store(a, 1);
	b = sim_clone(a);
	for (int i = 0; i < 60; i++) {
		uint64_t ea, eb, n = 0;
		bool ended = false;

		n = sim_ksmd_batch_ended(a, &ea);
		ck_assert(sim_ksmd_batch_begin(b));
		for (uint64_t got = 0; !ended; got += sim_ksmd_steps(b, 5, &ended))
			ck_assert_uint_le(got, n);
		sim_ksmd_batch_end(b, &eb);
		ck_assert_uint_eq(ea, eb);
		ck_assert(sim_equal(a, b));
	}
	ck_assert_uint_ge(sim_full_scans(a), 3);
	sim_free(a);
	sim_free(b);
}
END_TEST

static Suite *sim_admit_suite(void)
{
	Suite *s = suite_create("sim_admit");
	TCase *tc = tcase_create("refusals");

	tcase_add_test(tc, a_region_too_large_is_refused_at_its_size_line);
	tcase_add_test(tc, forked_copies_count);
	tcase_add_test(tc, more_pages_than_the_simulator_holds_are_refused);
	tcase_add_test(tc, too_many_trace_rows_are_refused_at_the_scans_line);
	tcase_add_test(tc, per_batch_rows_count);
	tcase_add_test(tc, a_continuous_writer_too_fast_is_refused_at_its_rate_line);
	tcase_add_test(tc, every_scan_writes_are_counted_and_bounded);
	tcase_add_test(tc, a_time_stop_without_a_shortest_batch_is_refused_at_the_time_line);
	tcase_add_test(tc, page_captures_count);
	tcase_add_test(tc, a_max_page_sharing_past_a_frames_mapcount_is_refused);
	suite_add_tcase(s, tc);
	tc = tcase_create("fits");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, one_tib_is_accepted_in_22_gib);
	tcase_add_test(tc, writes_make_stable_nodes_and_contents_count);
	tcase_add_test(tc, fresh_words_need_no_entry_while_sites_last);
	tcase_add_test(tc, a_time_stop_has_no_more_rows_or_writes_than_estimated);
	tcase_add_test(tc, the_estimate_bounds_a_real_run_within_twice);
	tcase_add_test(tc, a_detectors_item_state_is_counted);
	suite_add_tcase(s, tc);
	tc = tcase_create("progress");
	tcase_add_test(tc, progress_sees_setup_scans_and_writes);
	tcase_add_test(tc, a_batch_in_pieces_is_the_same_batch);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sim_admit_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
