/*
 * check_estimate.c - ksmkit estimate's model (estimate/): the figures read
 * off a series (the final saving, the time to 90%, ksmd's CPU over the run
 * and over the last full scan, settled or not), knob sets (current ones
 * read from a sysfs-like directory, NAME=VALUE), sweep axes and grids, the
 * recommendation for a CPU budget, and whole estimates of captures written
 * here with known contents, whose savings follow from KSM's rules: equal
 * pages share one, zero pages go to the zero page with use_zero_pages, and
 * a snapshot changes the saving at its own time into the run, not before.
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
