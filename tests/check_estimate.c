/*
 * check_estimate.c - ksmkit estimate's model (estimate/): the figures read
 * off a series (the final saving, the time to 90%, ksmd's CPU over the run
 * and over the last full scan, settled or not), knob sets (current ones
 * read from a sysfs-like directory, NAME=VALUE), sweep axes and grids, the
 * recommendation for a CPU budget, and whole estimates of captures written
 * here with known contents, whose savings follow from KSM's rules: equal
 * pages share one, zero pages go to the zero page with use_zero_pages, and
 * a snapshot changes the saving at its own time into the run, not before;
 * and a sweep in pieces: a point's row reads back to the same bits, and
 * rows that are malformed, of another sweep, repeated or foreign are refused.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture.h"
#include "estimate.h"

#define S 1000000000ull

/* ---- figures ------------------------------------------------------------------- */

static struct est_point pt(uint64_t t_s, uint64_t cpu_ms, uint64_t scans, int64_t sharing,
			   int64_t zero)
{
	return (struct est_point){ .time_ns = t_s * S, .ksmd_cpu_ns = cpu_ms * 1000000ull,
				   .full_scans = scans, .pages_shared = sharing ? 1 : 0,
				   .pages_sharing = sharing, .ksm_zero_pages = zero };
}

START_TEST(figures_come_from_the_series)
{
	struct est_point series[] = {
		pt(0, 0, 0, 0, 0), pt(1, 100, 1, 0, 0), pt(2, 200, 2, 50, 10),
		pt(3, 300, 3, 89, 10), pt(4, 340, 4, 90, 10), pt(5, 380, 5, 90, 10),
	};
	struct est_result r = { .series = series, .n = 6, .last_snapshot_ns = 2 * S };

	est_result_figures(&r);
	ck_assert_int_eq(est_saved(&r.last), 100);
	/* 90% of the final 100: 60 saved at 2 s, 99 at 3 s */
	ck_assert_int_eq(r.t90_ns, (int64_t)(3 * S));
	ck_assert_double_eq_tol(r.cpu_mean, 0.380 / 5, 1e-9);
	/* the last full scan runs from the first point with 4 scans: 4 s to 5 s */
	ck_assert_double_eq_tol(r.cpu_steady, 0.040, 1e-9);
	ck_assert(r.settled);
}
END_TEST

START_TEST(a_saving_still_moving_is_not_settled)
{
	struct est_point series[] = { pt(0, 0, 0, 0, 0), pt(1, 10, 1, 5, 0), pt(2, 20, 2, 9, 0),
				      pt(3, 30, 3, 12, 0) };
	struct est_result r = { .series = series, .n = 4 };

	est_result_figures(&r);
	ck_assert(!r.settled);
	ck_assert_int_eq(r.t90_ns, (int64_t)(3 * S));

	/* nothing saved: no time to 90% */
	struct est_point none[] = { pt(0, 0, 0, 0, 0), pt(1, 10, 1, 0, 0), pt(2, 20, 2, 0, 0) };
	struct est_result z = { .series = none, .n = 3 };

	est_result_figures(&z);
	ck_assert_int_eq(z.t90_ns, -1);
	ck_assert(z.settled);
}
END_TEST

START_TEST(settled_needs_the_last_snapshot_behind_it)
{
	struct est_point series[] = { pt(0, 0, 0, 0, 0), pt(1, 10, 1, 5, 0), pt(2, 20, 2, 5, 0),
				      pt(3, 30, 3, 5, 0) };
	struct est_result r = { .series = series, .n = 4, .last_snapshot_ns = 3 * S };

	est_result_figures(&r);
	ck_assert(!r.settled);
}
END_TEST

/* ---- knobs, axes, grids, recommendations ---------------------------------------------- */

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(current_knobs_are_read_from_the_directory)
{
	char dir[] = "/tmp/check_estimate-XXXXXX";
	struct est_knobs k;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	write_file(dir, "pages_to_scan", "1234\n");
	write_file(dir, "sleep_millisecs", "7\n");
	write_file(dir, "advisor_mode", "none [scan-time]\n");
	write_file(dir, "use_zero_pages", "banana\n"); /* unparsable: the default stays */
	ck_assert_int_eq(est_knobs_current(&k, dir), 3);
	ck_assert_uint_eq(k.value[WL_KNOB_PAGES_TO_SCAN], 1234);
	ck_assert_uint_eq(k.value[WL_KNOB_SLEEP_MILLISECS], 7);
	ck_assert_uint_eq(k.value[WL_KNOB_ADVISOR_MODE], WL_ADVISOR_SCAN_TIME);
	ck_assert_uint_eq(k.value[WL_KNOB_USE_ZERO_PAGES], 0);
	ck_assert_uint_eq(k.value[WL_KNOB_MAX_PAGE_SHARING], 256);
	for (const char *const *f = (const char *const[]){ "pages_to_scan", "sleep_millisecs",
							  "advisor_mode", "use_zero_pages", NULL };
	     *f; f++) {
		char path[512];

		snprintf(path, sizeof(path), "%s/%s", dir, *f);
		ck_assert_int_eq(unlink(path), 0);
	}
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(knob_assignments_are_parsed_as_the_kernel_would)
{
	struct est_knobs k;
	char err[256];

	est_knobs_default(&k);
	ck_assert_int_eq(est_knobs_assign(&k, "smart_scan=n", err, sizeof(err)), 0);
	ck_assert_uint_eq(k.value[WL_KNOB_SMART_SCAN], 0);
	ck_assert_int_eq(est_knobs_assign(&k, "pages_to_scan=0x10", err, sizeof(err)), -1);
	ck_assert_int_eq(est_knobs_assign(&k, "run=1", err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "no KSM knob"));
	ck_assert_int_eq(est_knobs_assign(&k, "pages_to_scan", err, sizeof(err)), -1);
	ck_assert_int_eq(est_knobs_assign(&k, "max_page_sharing=1", err, sizeof(err)), -1);
}
END_TEST

START_TEST(axes_and_their_errors)
{
	struct est_axis a;
	char err[256];

	ck_assert_int_eq(est_axis_parse("pages_to_scan=100,1000,10000", &a, err, sizeof(err)), 0);
	ck_assert_int_eq(a.knob, WL_KNOB_PAGES_TO_SCAN);
	ck_assert_uint_eq(a.n, 3);
	ck_assert_uint_eq(a.value[2], 10000);
	ck_assert_int_eq(est_axis_parse("smart_scan=0,1", &a, err, sizeof(err)), 0);
	ck_assert_int_eq(est_axis_parse("nosuch=1", &a, err, sizeof(err)), -1);
	ck_assert_int_eq(est_axis_parse("pages_to_scan=", &a, err, sizeof(err)), -1);
	ck_assert_int_eq(est_axis_parse("pages_to_scan=1,,2", &a, err, sizeof(err)), -1);
	ck_assert_int_eq(est_axis_parse("pages_to_scan=1,2,", &a, err, sizeof(err)), -1);
	ck_assert_int_eq(est_axis_parse("pages_to_scan=5,5", &a, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "twice"));
	ck_assert_int_eq(est_axis_parse("sleep_millisecs=x", &a, err, sizeof(err)), -1);
}
END_TEST

START_TEST(the_grid_varies_the_last_axis_fastest)
{
	struct est_axis ax[2];
	struct est_knobs base, k;
	char err[256];

	est_knobs_default(&base);
	ck_assert_int_eq(est_axis_parse("pages_to_scan=10,20,30", &ax[0], err, sizeof(err)), 0);
	ck_assert_int_eq(est_axis_parse("sleep_millisecs=1,2", &ax[1], err, sizeof(err)), 0);
	ck_assert_uint_eq(est_grid_size(ax, 2), 6);
	est_grid_point(ax, 2, 3, &base, &k);
	ck_assert_uint_eq(k.value[WL_KNOB_PAGES_TO_SCAN], 20);
	ck_assert_uint_eq(k.value[WL_KNOB_SLEEP_MILLISECS], 2);
	ck_assert_uint_eq(k.value[WL_KNOB_MAX_PAGE_SHARING], 256);
	est_grid_point(ax, 2, 4, &base, &k);
	ck_assert_uint_eq(k.value[WL_KNOB_PAGES_TO_SCAN], 30);
	ck_assert_uint_eq(k.value[WL_KNOB_SLEEP_MILLISECS], 1);
}
END_TEST

static struct est_result scored(int64_t saved, int64_t t90_s, double cpu)
{
	struct est_result r = { .cpu_steady = cpu, .t90_ns = t90_s < 0 ? -1 : t90_s * (int64_t)S };

	r.last.pages_sharing = saved;
	return r;
}

START_TEST(the_recommendation_saves_most_within_the_budget)
{
	struct est_result r[] = {
		scored(100, 50, 0.01), scored(400, 20, 0.30), scored(300, 9, 0.08),
		scored(300, 5, 0.09), scored(300, 5, 0.07),
	};

	/* 400 costs too much; of the 300s, the soonest, then the cheapest */
	ck_assert_int_eq(est_recommend(r, 5, 0.10), 4);
	ck_assert_int_eq(est_recommend(r, 5, 0.50), 1);
	ck_assert_int_eq(est_recommend(r, 5, 0.02), 0);
	ck_assert_int_eq(est_recommend(r, 5, 0.005), -1);
}
END_TEST

/* ---- whole estimates --------------------------------------------------------------------- */

#define PAGES 100u
#define TOKEN_A UINT64_C(0x1111)

/*
 * A capture of one process, 100 pages: 60 of one content, 20 of zeros, 20
 * unique; at 5 s a second snapshot makes 30 of the 60 unique too.
 */
static void write_capture_at(const char *path, uint64_t fs0, uint64_t fs1)
{
	struct cap_vma vma = { 0x100000, 0x100000 + PAGES * CAP_PAGE_SIZE };
	struct cap_stream_info info = { .pid = 1, .comm = "known", .thp = CAP_THP_NONE };
	struct cap_stream_state st;
	struct cap_snapshot snap = { .full_scans = fs0, .nstreams = 1, .streams = &st };
	struct cap_writer *w;
	struct cap_error err;

	ck_assert_int_eq(cap_stream_state_init(&st, &vma, 1, &err), 0);
	ck_assert_int_eq(cap_writer_open(path, &info, &st, 1, false, &w, &err), 0);
	for (size_t i = 0; i < PAGES; i++) {
		st.flags[i] = CAP_PRESENT;
		st.token[i] = i < 60 ? TOKEN_A : i < 80 ? CAP_TOKEN_ZERO : 0x9000 + i;
	}
	ck_assert_int_eq(cap_writer_snapshot(w, &snap, &err), 0);
	for (size_t i = 0; i < 30; i++)
		st.token[i] = 0x7000 + i;
	snap.index = 1;
	snap.time_ns = 5 * S;
	snap.full_scans = fs1;
	ck_assert_int_eq(cap_writer_snapshot(w, &snap, &err), 0);
	ck_assert_int_eq(cap_writer_close(w, &err), 0);
	cap_stream_state_free(&st);
}

/* Taken without KSM: no full_scans. */
static void write_capture(const char *path)
{
	write_capture_at(path, CAP_NO_FULL_SCANS, CAP_NO_FULL_SCANS);
}

static void estimate(const char *path, uint64_t use_zero_pages, struct est_result *r)
{
	struct est_options opt = { .capture = path, .time_ns = 30 * S, .kernel = WL_KERNEL_6_18 };
	struct est_capture cap;
	struct workload *wl;
	char err[640];

	est_knobs_default(&opt.knobs);
	opt.knobs.value[WL_KNOB_PAGES_TO_SCAN] = 10;
	opt.knobs.value[WL_KNOB_SLEEP_MILLISECS] = 20;
	opt.knobs.value[WL_KNOB_USE_ZERO_PAGES] = use_zero_pages;
	ck_assert_msg(est_capture_read(path, &cap, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(cap.streams, 1);
	ck_assert_uint_eq(cap.snapshots, 2);
	ck_assert_uint_eq(cap.last_snapshot_ns, 5 * S);
	ck_assert_msg(est_workload(&opt, &cap, &wl, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(est_run(&opt, &cap, wl, r, err, sizeof(err)) == 0, "%s", err);
	wl_free(wl);
	est_capture_free(&cap);
}

/* The latest point before @t_s seconds. */
static const struct est_point *before(const struct est_result *r, uint64_t t_s)
{
	const struct est_point *p = &r->series[0];

	for (size_t i = 0; i < r->n && r->series[i].time_ns < t_s * S; i++)
		p = &r->series[i];
	return p;
}

START_TEST(equal_pages_share_and_the_snapshot_lands_on_time)
{
	char path[] = "/tmp/check_estimate-cap-XXXXXX";
	int fd = mkstemp(path);
	struct est_result r;

	ck_assert_int_ge(fd, 0);
	close(fd);
	write_capture(path);
	estimate(path, 0, &r);
	/* before 5 s: 60 equal pages give 59, the 20 zero pages 19 */
	ck_assert_int_eq(before(&r, 5)->pages_sharing, 59 + 19);
	ck_assert_int_eq(before(&r, 5)->pages_shared, 2);
	/* after it: 30 left equal */
	ck_assert_int_eq(r.last.pages_sharing, 29 + 19);
	ck_assert_int_eq(r.last.ksm_zero_pages, 0);
	ck_assert_uint_eq(r.present_pages, PAGES);
	ck_assert_uint_eq(r.most_saved, 20 + 29); /* zero pages, and duplicates */
	ck_assert(r.settled);
	ck_assert(r.cpu_steady > 0 && r.cpu_steady < 1);
	ck_assert(r.t90_ns > 0);
	est_result_free(&r);

	estimate(path, 1, &r);
	ck_assert_int_eq(r.last.ksm_zero_pages, 20);
	ck_assert_int_eq(r.last.pages_sharing, 29);
	ck_assert_int_eq(est_saved(&r.last), 49);
	{ /* ksmd's CPU by term adds up to its CPU: within a rounding a term,
	   * and a truncation to whole ns a batch (r.n points, one a batch) */
		uint64_t sum = 0, slack = SIM_TERM_COUNT + r.n;

		for (int t = 0; t < SIM_TERM_COUNT; t++)
			sum += r.cost_ns[t];
		ck_assert_msg(sum + slack >= r.last.ksmd_cpu_ns && sum <= r.last.ksmd_cpu_ns + slack,
			      "%llu vs %llu", (unsigned long long)sum,
			      (unsigned long long)r.last.ksmd_cpu_ns);
		ck_assert_uint_gt(r.cost_ns[SIM_TERM_zero_merge], 0);
		ck_assert_uint_gt(r.cost_ns[SIM_TERM_visit], 0);
	}
	{ /* the terms at each scan point: from nothing, never down, to the totals */
		size_t points = 0;

		for (size_t i = 0; i < r.n; i++)
			points += est_scan_point(&r, i);
		ck_assert_uint_eq(r.nscan_points, points);
		ck_assert_uint_ge(points, 3);
		ck_assert_ptr_null(est_scan_costs(&r, points));
		for (int t = 0; t < SIM_TERM_COUNT; t++) {
			ck_assert_uint_eq(est_scan_costs(&r, 0)[t], 0);
			for (size_t k = 1; k < points; k++)
				ck_assert_uint_ge(est_scan_costs(&r, k)[t],
						  est_scan_costs(&r, k - 1)[t]);
			ck_assert_uint_eq(est_scan_costs(&r, points - 1)[t], r.cost_ns[t]);
		}
		ck_assert_uint_gt(est_scan_costs(&r, 1)[SIM_TERM_visit], 0);
	}
	est_result_free(&r);
	unlink(path);
}
END_TEST

/* Scan for scan: a capture taken at full scans 10 and 13 lands its second after scan 3. */
START_TEST(a_capture_of_a_running_ksm_replays_scan_for_scan)
{
	char path[] = "/tmp/check_estimate-cap-XXXXXX", err[640];
	int fd = mkstemp(path);
	struct est_options opt = { .schedule = EST_BY_SCANS, .kernel = WL_KERNEL_6_18 };
	struct est_capture cap;
	struct est_result r;
	struct workload *wl;
	const struct est_point *at3 = NULL;

	ck_assert_int_ge(fd, 0);
	close(fd);
	opt.capture = path;
	est_knobs_default(&opt.knobs);
	opt.knobs.value[WL_KNOB_PAGES_TO_SCAN] = 10;
	write_capture_at(path, 10, 13);
	ck_assert_int_eq(est_capture_read(path, &cap, err, sizeof(err)), 0);
	ck_assert(cap.full_scans_known);
	ck_assert_uint_eq(cap.full_scans_span, 3);
	ck_assert_msg(est_workload(&opt, &cap, &wl, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(est_run(&opt, &cap, wl, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(r.last.full_scans, 3 + 4); /* the span, and four to settle */
	for (size_t i = 0; i < r.n; i++)
		if (r.series[i].full_scans == 3) {
			at3 = &r.series[i]; /* the row of scan 3: before the snapshot */
			break;
		}
	ck_assert_ptr_nonnull(at3);
	ck_assert_int_eq(at3->pages_sharing, 59 + 19);
	ck_assert_int_eq(r.last.pages_sharing, 29 + 19);
	est_result_free(&r);
	wl_free(wl);
	est_capture_free(&cap);
	/* without full_scans it cannot */
	write_capture(path);
	ck_assert_int_eq(est_capture_read(path, &cap, err, sizeof(err)), 0);
	ck_assert(!cap.full_scans_known);
	ck_assert_int_eq(est_workload(&opt, &cap, &wl, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "--every full-scan"));
	est_capture_free(&cap);
	unlink(path);
}
END_TEST

START_TEST(the_workload_text_names_every_stream_and_knob)
{
	char path[] = "/tmp/check_estimate-cap-XXXXXX", err[256], *text;
	int fd = mkstemp(path);
	struct est_options opt = { .capture = path, .kernel = WL_KERNEL_6_18 };
	struct est_capture cap;

	ck_assert_int_ge(fd, 0);
	close(fd);
	write_capture(path);
	est_knobs_default(&opt.knobs);
	opt.knobs.value[WL_KNOB_PAGES_TO_SCAN] = 250;
	ck_assert_int_eq(est_capture_read(path, &cap, err, sizeof(err)), 0);
	ck_assert_int_eq(est_workload_text(&opt, &cap, &text, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(text, "pages_to_scan = 250\n"));
	ck_assert_ptr_nonnull(strstr(text, "every = time\n"));
	ck_assert_ptr_nonnull(strstr(text, "merge = prctl\n"));
	/* 5 s of snapshots plus four full scans of 100 pages: under 10 s, so 10 s */
	ck_assert_ptr_nonnull(strstr(text, "time = 10000000000ns\n"));
	free(text);
	/* the advisor owns pages_to_scan */
	opt.knobs.value[WL_KNOB_ADVISOR_MODE] = WL_ADVISOR_SCAN_TIME;
	ck_assert_int_eq(est_workload_text(&opt, &cap, &text, err, sizeof(err)), 0);
	ck_assert_ptr_null(strstr(text, "\npages_to_scan ="));
	free(text);
	est_capture_free(&cap);
	unlink(path);
}
END_TEST

START_TEST(a_damaged_capture_is_refused)
{
	char path[] = "/tmp/check_estimate-cap-XXXXXX", err[640];
	int fd = mkstemp(path);
	struct est_capture cap;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "not a capture at all, not even close", 36), 36);
	close(fd);
	ck_assert_int_eq(est_capture_read(path, &cap, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, path));
	unlink(path);
	ck_assert_int_eq(est_capture_read(path, &cap, err, sizeof(err)), -1);
}
END_TEST

START_TEST(default_time_covers_four_scans_past_the_last_snapshot)
{
	struct est_knobs k;

	est_knobs_default(&k); /* 100 pages a batch, 20 ms */
	/* 100000 pages: 1000 batches of 20 ms = 20 s a scan, four of them */
	ck_assert_uint_eq(est_default_time(30 * S, 100000, &k), 110 * S);
	ck_assert_uint_eq(est_default_time(0, 10, &k), 10 * S);
	k.value[WL_KNOB_SLEEP_MILLISECS] = 0; /* at least 1 ms a batch */
	ck_assert_uint_eq(est_default_time(0, 1000000, &k), 40 * S);
}
END_TEST

/* ---- a sweep in pieces: rows ------------------------------------------------------------ */

/* Point @point of the sweep "pages_to_scan=100,1000;use_zero_pages=0,1" over the defaults. */
static void sample_row(struct est_row *row, size_t point, struct est_axis *axes,
		       struct est_options *opt)
{
	struct est_result r = {
		.streams = 2, .snapshots = 3, .last_snapshot_ns = 6000081106ull,
		.present_pages = 1542, .most_saved = 1006, .t90_ns = 687715060,
		.cpu_mean = 1.0 / 3.0, .cpu_steady = 0.1 + 0.2, .settled = true,
	};
	struct est_options at;
	char err[256];

	for (int t = 0; t < SIM_TERM_COUNT; t++)
		r.cost_ns[t] = 1000003ull * (uint64_t)t + 7;
	r.last = (struct est_point){ .time_ns = 10013757391ull, .ksmd_cpu_ns = 25107391,
				     .full_scans = 27, .pages_shared = 524, .pages_sharing = 1004,
				     .ksm_zero_pages = 0, .general_profit = -4013696 };
	memset(opt, 0, sizeof(*opt));
	est_knobs_default(&opt->knobs);
	opt->kernel = WL_KERNEL_6_12;
	opt->schedule = EST_BY_SCANS;
	opt->scans = 9;
	ck_assert_int_eq(est_axis_parse("pages_to_scan=100,1000", &axes[0], err, sizeof(err)), 0);
	ck_assert_int_eq(est_axis_parse("use_zero_pages=0,1", &axes[1], err, sizeof(err)), 0);
	at = *opt;
	est_grid_point(axes, 2, point, &opt->knobs, &at.knobs);
	est_row_of(row, point, 4, &at, &r);
}

static struct est_capture sample_capture(void)
{
	return (struct est_capture){ .streams = 2, .snapshots = 3, .present_pages = 1542,
				     .most_saved = 1006 };
}

/* @row as the line est_row_write writes (without its '\n'), into @buf. */
static void row_line(const struct est_row *row, char *buf, size_t len)
{
	FILE *f = fmemopen(buf, len, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(est_row_write(f, row), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strchr(buf, '\n'));
	*strchr(buf, '\n') = '\0';
}

START_TEST(a_row_reads_back_to_the_same_bits)
{
	struct est_axis axes[2];
	struct est_options opt;
	struct est_row row, back;
	struct est_capture cap = sample_capture();
	char line[4096], err[256];

	sample_row(&row, 3, axes, &opt);
	row_line(&row, line, sizeof(line));
	ck_assert_msg(est_row_parse(line, &back, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(back.point, 3);
	ck_assert_uint_eq(back.points, 4);
	ck_assert_int_eq(back.kernel, WL_KERNEL_6_12);
	ck_assert_int_eq(back.schedule, EST_BY_SCANS);
	ck_assert_uint_eq(back.scans, 9);
	ck_assert_mem_eq(&back.knobs, &row.knobs, sizeof(row.knobs));
	ck_assert_mem_eq(&back.result.last, &row.result.last, sizeof(row.result.last));
	ck_assert_int_eq(back.result.t90_ns, 687715060);
	/* not 0.33333 nor 0.3: the very doubles, which the recommendation compares */
	ck_assert(back.result.cpu_mean == 1.0 / 3.0);
	ck_assert(back.result.cpu_steady == 0.1 + 0.2);
	ck_assert(back.result.settled);
	ck_assert_uint_eq(back.result.last_snapshot_ns, 6000081106ull);
	ck_assert_mem_eq(back.result.cost_ns, row.result.cost_ns, sizeof(row.result.cost_ns));
	ck_assert_ptr_null(back.result.scan_cost_ns);
	ck_assert_msg(est_row_check(&back, &opt, axes, 2, &cap, err, sizeof(err)) == 0, "%s", err);
}
END_TEST

/* Whether @line, est_row_parse'd, is refused with @why in the message. */
static void refused(const char *line, const char *why)
{
	struct est_row row;
	char err[256];

	ck_assert_int_eq(est_row_parse(line, &row, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, why), "'%s': got '%s'", why, err);
}

START_TEST(a_malformed_row_is_refused)
{
	struct est_axis axes[2];
	struct est_options opt;
	struct est_row row;
	char line[4096], bad[4200], *p;

	sample_row(&row, 0, axes, &opt);
	row_line(&row, line, sizeof(line));
	refused("garbage", "not a row of ksmkit estimate --point");
	refused("ksmkit-estimate-row 1 point=\033[31m", "byte 0x1b at column 29: not a row");
	refused("ksmkit-estimate-row 1 point=0", "a row of format 1, not 2");
	snprintf(bad, sizeof(bad), "%s frobs=1", line);
	refused(bad, "no field is called 'frobs'");
	snprintf(bad, sizeof(bad), "%s point=1", line);
	refused(bad, "point is given twice");
	snprintf(bad, sizeof(bad), "%s", line);
	p = strstr(bad, " cpu_steady=");
	*strchr(p + 1, ' ') = '\0'; /* everything after cpu_steady cut off */
	refused(bad, "settled is missing");
	snprintf(bad, sizeof(bad), "%s", line);
	memcpy(strstr(bad, "t90_ns=") + 7, "x", 1);
	refused(bad, "t90_ns=x");
	snprintf(bad, sizeof(bad), "%s", line);
	memcpy(strstr(bad, "points=4"), "points=-", 8);
	refused(bad, "not a value of that field");
	snprintf(bad, sizeof(bad), "%s", line);
	memcpy(strstr(bad, "knob.use_zero_pages=0"), "knob.use_zero_pages=7", 21);
	refused(bad, "knob.use_zero_pages=7");
	snprintf(bad, sizeof(bad), "%s", line);
	memcpy(strstr(bad, " cost.visit=") + 12, "x", 1);
	refused(bad, "not a count of ns");
	snprintf(bad, sizeof(bad), "%s", line);
	*strstr(bad, " cost.checksum=") = '\0'; /* the terms from checksum on cut off */
	refused(bad, "cost.checksum is missing");
	snprintf(bad, sizeof(bad), "%s cost.frob=1", line);
	refused(bad, "no field is called 'cost.frob'");
}
END_TEST

/* Whether @row is refused as a row of the sample sweep, with @why in the message. */
static void foreign(const struct est_row *row, const struct est_options *opt,
		    const struct est_axis *axes, const char *why)
{
	struct est_capture cap = sample_capture();
	char err[256];

	ck_assert_int_eq(est_row_check(row, opt, axes, 2, &cap, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, why), "'%s': got '%s'", why, err);
}

START_TEST(a_row_of_another_sweep_is_refused)
{
	struct est_axis axes[2];
	struct est_options opt, other;
	struct est_row row, r;

	sample_row(&row, 1, axes, &opt);
	r = row;
	r.points = 6;
	foreign(&r, &opt, axes, "a row of a sweep of 6 points, this one has 4");
	r = row;
	r.point = 4;
	r.points = 4;
	foreign(&r, &opt, axes, "point 4, but the sweep's are 0 to 3");
	r = row;
	r.knobs.value[WL_KNOB_USE_ZERO_PAGES] = 0; /* point 1 has use_zero_pages=1 */
	foreign(&r, &opt, axes, "point 1 was run at use_zero_pages=0, this sweep's is at "
				"use_zero_pages=1");
	other = opt;
	other.knobs.value[WL_KNOB_SLEEP_MILLISECS] = 10; /* the base set differs */
	foreign(&row, &other, axes, "sleep_millisecs=20, this sweep's is at sleep_millisecs=10");
	other = opt;
	other.kernel = WL_KERNEL_6_18;
	foreign(&row, &other, axes, "computed for kernel 6.12, this sweep is for 6.18");
	other = opt;
	other.schedule = EST_BY_TIME;
	foreign(&row, &other, axes, "computed by scans, this sweep by time");
	other = opt;
	other.scans = 0;
	foreign(&row, &other, axes, "stop_scans=9, this sweep for 0 and 0");
	r = row;
	r.result.present_pages = 1;
	foreign(&r, &opt, axes, "pages present, not this one");
}
END_TEST

/* est_rows_read of @text: its return, the message in @err. */
static int read_rows(const char *text, struct est_result *out, unsigned *line_of, char *err,
		     size_t errlen)
{
	struct est_axis axes[2];
	struct est_options opt;
	struct est_row row;
	struct est_capture cap = sample_capture();
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int rc;

	ck_assert_ptr_nonnull(f);
	sample_row(&row, 0, axes, &opt);
	memset(line_of, 0, 4 * sizeof(*line_of));
	rc = est_rows_read(f, "rows", &opt, axes, 2, &cap, out, line_of, err, errlen);
	fclose(f);
	return rc;
}

START_TEST(rows_are_read_once_each_with_comments_between)
{
	struct est_axis axes[2];
	struct est_options opt;
	struct est_row row;
	struct est_result out[4];
	unsigned line_of[4];
	char text[16384], err[512];
	size_t len = 0;

	len += (size_t)snprintf(text + len, sizeof(text) - len, "# the jobs' rows\n\n");
	for (size_t p = 4; p-- > 1;) { /* any order; point 0 left out */
		sample_row(&row, p, axes, &opt);
		row_line(&row, text + len, sizeof(text) - len);
		len += strlen(text + len);
		text[len++] = '\n';
		text[len] = '\0';
	}
	ck_assert_msg(read_rows(text, out, line_of, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(line_of[0], 0); /* missing: the caller's to say */
	ck_assert_uint_eq(line_of[3], 3);
	ck_assert_uint_eq(line_of[1], 5);
	ck_assert(out[1].cpu_steady == 0.1 + 0.2);
	ck_assert_uint_eq(out[1].cost_ns[SIM_TERM_COUNT - 1],
			  1000003ull * (SIM_TERM_COUNT - 1) + 7);
	ck_assert_ptr_null(out[1].series);
	/* point 2 again, at the end */
	sample_row(&row, 2, axes, &opt);
	row_line(&row, text + len, sizeof(text) - len);
	ck_assert_int_eq(read_rows(text, out, line_of, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "rows:6: a second row for point 2 (the first is line 4)");
	text[len] = '\0';
	snprintf(text + len, sizeof(text) - len, "ksmkit-estimate-row 2 point=\n");
	ck_assert_int_eq(read_rows(text, out, line_of, err, sizeof(err)), -1);
	ck_assert_msg(strncmp(err, "rows:6: point=: ", 16) == 0, "%s", err);
}
END_TEST

static Suite *estimate_suite(void)
{
	Suite *s = suite_create("estimate");
	TCase *tc = tcase_create("figures");

	tcase_add_test(tc, figures_come_from_the_series);
	tcase_add_test(tc, a_saving_still_moving_is_not_settled);
	tcase_add_test(tc, settled_needs_the_last_snapshot_behind_it);
	suite_add_tcase(s, tc);

	tc = tcase_create("knobs");
	tcase_add_test(tc, current_knobs_are_read_from_the_directory);
	tcase_add_test(tc, knob_assignments_are_parsed_as_the_kernel_would);
	tcase_add_test(tc, axes_and_their_errors);
	tcase_add_test(tc, the_grid_varies_the_last_axis_fastest);
	tcase_add_test(tc, the_recommendation_saves_most_within_the_budget);
	suite_add_tcase(s, tc);

	tc = tcase_create("estimates");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, equal_pages_share_and_the_snapshot_lands_on_time);
	tcase_add_test(tc, a_capture_of_a_running_ksm_replays_scan_for_scan);
	tcase_add_test(tc, the_workload_text_names_every_stream_and_knob);
	tcase_add_test(tc, a_damaged_capture_is_refused);
	tcase_add_test(tc, default_time_covers_four_scans_past_the_last_snapshot);
	suite_add_tcase(s, tc);

	tc = tcase_create("rows");
	tcase_add_test(tc, a_row_reads_back_to_the_same_bits);
	tcase_add_test(tc, a_malformed_row_is_refused);
	tcase_add_test(tc, a_row_of_another_sweep_is_refused);
	tcase_add_test(tc, rows_are_read_once_each_with_comments_between);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(estimate_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
