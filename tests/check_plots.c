/*
 * check_plots.c - Check suite for plots/: tick choice and labels (pure
 * functions), charts written as PNG (signature, IHDR size, no creation time,
 * so the same chart is the same bytes) and SVG (well-formed XML per python3
 * when installed, pixel size, and the data reaching the picture: one
 * <polyline> per line series, the legend's text, one <rect> per bar), the
 * sweep CSV reader (good input and every kind of bad line, named FILE:LINE),
 * traces as counter series, and the errors plot_write must return instead
 * of drawing.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../plots/plot.h"
#include "../plots/plot_internal.h"
#include "trace.h"

/* ---- helpers ------------------------------------------------------------- */

static char tmpdir[256];

static void make_tmpdir(void)
{
	const char *base = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/check_plots.XXXXXX", base && *base ? base : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	char path[512];

	if (!d)
		return;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
			snprintf(path, sizeof(path), "%s/%s", tmpdir, e->d_name);
			unlink(path);
		}
	closedir(d);
	rmdir(tmpdir);
}

static const char *tmp_path(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

/* The whole file, NUL-terminated; *size its length. */
static char *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_ge(n, 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (size)
		*size = (size_t)n;
	return buf;
}

static size_t count_substrings(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static bool file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static uint32_t big_endian32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Three series of five points: a rising line, a range series, a dashed one. */
static struct plot_chart *known_chart(void)
{
	struct plot_chart *c = plot_new(PLOT_LINES);
	char err[256];
	int a, b, d;

	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(plot_set_labels(c, "Scan speed & friends", "volatile fraction",
					 "MiB/s", err, sizeof(err)), 0);
	a = plot_add_series(c, "kernel measured", err, sizeof(err));
	b = plot_add_series(c, "sim checksum", err, sizeof(err));
	d = plot_add_series(c, "sim dirty", err, sizeof(err));
	ck_assert_int_eq(a, 0);
	ck_assert_int_eq(b, 1);
	ck_assert_int_eq(d, 2);
	plot_series_style(c, d, 5, PLOT_DASHED);
	for (int i = 0; i < 5; i++) {
		double x = i / 4.0;

		ck_assert_int_eq(plot_add_range(c, a, x, 90 - 40 * x, 100 - 40 * x, 104 - 40 * x,
						err, sizeof(err)), 0);
		ck_assert_int_eq(plot_add_point(c, b, x, 98 - 38 * x, err, sizeof(err)), 0);
		ck_assert_int_eq(plot_add_point(c, d, x, 400 - 100 * x, err, sizeof(err)), 0);
	}
	return c;
}

static bool have_python3(void)
{
	return system("command -v python3 >/dev/null 2>&1") == 0;
}

/* ---- ticks and labels ---------------------------------------------------- */

START_TEST(test_linear_ticks_are_nice)
{
	struct plot_ticks t;

	plot_ticks_linear(0, 97, 6, false, &t);
	ck_assert_double_eq(t.lo, 0);
	ck_assert_double_eq(t.hi, 100);
	ck_assert_uint_eq(t.n, 6);
	ck_assert_str_eq(t.label[0], "0");
	ck_assert_str_eq(t.label[1], "20");
	ck_assert_str_eq(t.label[5], "100");

	plot_ticks_linear(0.13, 0.87, 5, false, &t);
	ck_assert_double_eq_tol(t.lo, 0, 1e-12);
	ck_assert_double_eq_tol(t.hi, 1, 1e-12);
	ck_assert_str_eq(t.label[1], "0.25");
	ck_assert_str_eq(t.label[4], "1.00");

	plot_ticks_linear(-3, 7, 11, false, &t);
	ck_assert_str_eq(t.label[0], "-3");
	for (size_t i = 0; i < t.n; i++)
		ck_assert_str_ne(t.label[i], "-0");
}
END_TEST

START_TEST(test_integer_axis_has_whole_steps)
{
	struct plot_ticks t;

	/* 0..10 in 5 ticks would be 2.5 apart: not for scan numbers */
	plot_ticks_linear(0, 10, 5, true, &t);
	for (size_t i = 0; i < t.n; i++)
		ck_assert_double_eq(t.value[i], floor(t.value[i]));
	plot_ticks_linear(0, 2, 10, true, &t);
	ck_assert_uint_eq(t.n, 3); /* 0 1 2, no halves */
	ck_assert_str_eq(t.label[1], "1");
}
END_TEST

START_TEST(test_degenerate_range_is_widened)
{
	struct plot_ticks t;

	plot_ticks_linear(0, 0, 5, false, &t);
	ck_assert(t.hi > t.lo);
	plot_ticks_linear(42, 42, 5, false, &t);
	ck_assert(t.lo <= 42 && t.hi >= 42 && t.hi > t.lo);
}
END_TEST

START_TEST(test_tick_count_respects_the_limit)
{
	struct plot_ticks t;

	for (int max = 2; max <= 12; max++) {
		plot_ticks_linear(0.7, 12345.6, max, false, &t);
		ck_assert_uint_le(t.n, (size_t)max);
		ck_assert(t.lo <= 0.7 && t.hi >= 12345.6);
	}
}
END_TEST

START_TEST(test_large_values_get_si_suffixes)
{
	struct plot_ticks t;
	char buf[PLOT_TICK_LABEL_MAX];

	plot_ticks_linear(0, 512000, 7, true, &t);
	ck_assert_str_eq(t.label[1], "100k");
	ck_assert_str_eq(t.label[t.n - 1], "600k");
	plot_format_tick(12500, 2500, 50000, buf, sizeof(buf));
	ck_assert_str_eq(buf, "12.5k");
	plot_format_tick(2e6, 1e6, 5e6, buf, sizeof(buf));
	ck_assert_str_eq(buf, "2M");
	plot_format_value(4096, buf, sizeof(buf));
	ck_assert_str_eq(buf, "4096");
	plot_format_value(0.25, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0.25");
}
END_TEST

START_TEST(test_log_ticks_are_decades)
{
	struct plot_ticks t;

	plot_ticks_log10(4096, 268435456, 10, &t);
	ck_assert_double_eq(t.lo, 1e3);
	ck_assert_double_eq(t.hi, 1e9);
	ck_assert_uint_eq(t.n, 7);
	ck_assert_str_eq(t.label[0], "1k");
	ck_assert_str_eq(t.label[1], "10k");
	ck_assert_str_eq(t.label[3], "1M");
	ck_assert_uint_eq(t.nminor, 6 * 8);

	plot_ticks_log10(20, 80, 10, &t); /* one decade: 2 and 5 labeled too */
	ck_assert_double_eq(t.lo, 10);
	ck_assert_double_eq(t.hi, 100);
	ck_assert_str_eq(t.label[0], "10");
	ck_assert_str_eq(t.label[1], "20");
	ck_assert_str_eq(t.label[2], "50");

	plot_ticks_log10(1e-3, 1e12, 4, &t); /* many decades: every k-th */
	ck_assert_uint_le(t.n, 4 + 1);
	ck_assert_uint_eq(t.nminor, 0);
	ck_assert_double_eq_tol(plot_axis_fraction(&t, 1e-3), 0, 1e-12);
	ck_assert_double_eq_tol(plot_axis_fraction(&t, t.hi), 1, 1e-12);
}
END_TEST

/* ---- PNG and SVG ------------------------------------------------------------ */

START_TEST(test_png_has_signature_and_size)
{
	static const unsigned char signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	struct plot_chart *c = known_chart();
	const char *path = tmp_path("known.png");
	unsigned char *png;
	size_t size;
	char err[256];

	ck_assert_msg(plot_write(c, path, 640, 400, err, sizeof(err)) == 0, "%s", err);
	png = (unsigned char *)slurp(path, &size);
	ck_assert_uint_gt(size, 33);
	ck_assert_mem_eq(png, signature, 8);
	ck_assert_mem_eq(png + 12, "IHDR", 4);
	ck_assert_uint_eq(big_endian32(png + 16), 640);
	ck_assert_uint_eq(big_endian32(png + 20), 400);
	/* no creation time: the same chart gives the same bytes at any time */
	ck_assert_ptr_null(memmem(png, size, "Creation Time", 13));
	ck_assert_ptr_nonnull(memmem(png, size, "IEND", 4));
	free(png);
	/* the extension decides, whatever its case */
	ck_assert_int_eq(plot_write(c, tmp_path("upper.PNG"), 300, 200, err, sizeof(err)), 0);
	png = (unsigned char *)slurp(tmp_path("upper.PNG"), &size);
	ck_assert_mem_eq(png, signature, 8);
	free(png);
	plot_free(c);
}
END_TEST

START_TEST(test_svg_is_wellformed_sized_and_holds_the_data)
{
	struct plot_chart *c = known_chart();
	const char *path = tmp_path("known.svg");
	char cmd[700], err[256];
	char *svg;

	ck_assert_msg(plot_write(c, path, 820, 510, err, sizeof(err)) == 0, "%s", err);
	svg = slurp(path, NULL);
	ck_assert_ptr_nonnull(strstr(svg, "<svg "));
	ck_assert_ptr_nonnull(strstr(svg, " width=\"820\" height=\"510\""));
	/* libplot's SVG driver draws each series' line as one <polyline>,
	 * and nothing else as one (markers are circles, rects, polygons) */
	ck_assert_uint_eq(count_substrings(svg, "<polyline "), plot_series_count(c));
	ck_assert_uint_eq(count_substrings(svg, "<polyline "), 3);
	/* the legend names every series in a <text> element */
	ck_assert_ptr_nonnull(strstr(svg, ">kernel measured</text>"));
	ck_assert_ptr_nonnull(strstr(svg, ">sim checksum</text>"));
	ck_assert_ptr_nonnull(strstr(svg, ">sim dirty</text>"));
	/* the dashed series is dashed, the axis labels and the title are there */
	ck_assert_ptr_nonnull(strstr(svg, "stroke-dasharray=\""));
	ck_assert_ptr_nonnull(strstr(svg, ">volatile fraction</text>"));
	ck_assert_ptr_nonnull(strstr(svg, "<title>Scan speed &amp; friends</title>"));
	free(svg);
	if (!have_python3()) {
		fprintf(stderr, "check_plots: SKIP XML well-formedness: python3 not found\n");
	} else {
		snprintf(cmd, sizeof(cmd),
			 "python3 -c 'import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])' '%s'",
			 path);
		ck_assert_msg(system(cmd) == 0, "%s is not well-formed XML", path);
	}
	plot_free(c);
}
END_TEST

START_TEST(test_long_series_is_one_polyline)
{
	struct plot_chart *c = plot_new(PLOT_LINES);
	char err[256];
	char *svg;
	int s;

	s = plot_add_series(c, "long", err, sizeof(err));
	for (int i = 0; i < 1500; i++)
		ck_assert_int_eq(plot_add_point(c, s, i, (i * 37) % 1000, err, sizeof(err)), 0);
	ck_assert_int_eq(plot_write(c, tmp_path("long.svg"), 800, 500, err, sizeof(err)), 0);
	svg = slurp(tmp_path("long.svg"), NULL);
	ck_assert_uint_eq(count_substrings(svg, "<polyline "), 1);
	free(svg);
	plot_free(c);
}
END_TEST

START_TEST(test_bars_are_one_rect_per_point)
{
	struct plot_chart *c = plot_new(PLOT_BARS);
	char err[256];
	char *svg;
	int merged, plain;

	merged = plot_add_series(c, "merged", err, sizeof(err));
	plain = plot_add_series(c, "not merged", err, sizeof(err));
	for (int node = 0; node < 3; node++) {
		ck_assert_int_eq(plot_add_range(c, merged, node, 4, 5, 6, err, sizeof(err)), 0);
		ck_assert_int_eq(plot_add_range(c, plain, node, 1, 2, 2.5, err, sizeof(err)), 0);
	}
	ck_assert_int_eq(plot_write(c, tmp_path("bars.svg"), 600, 400, err, sizeof(err)), 0);
	svg = slurp(tmp_path("bars.svg"), NULL);
	/* series 0 is palette color 0, #1f77b4: three bars and the legend swatch */
	ck_assert_uint_eq(count_substrings(svg, "fill=\"#1f77b4\""), 3 + 1);
	ck_assert_uint_eq(count_substrings(svg, "fill=\"#ff7f0e\""), 3 + 1);
	ck_assert_uint_eq(count_substrings(svg, "<polyline "), 0);
	ck_assert_ptr_nonnull(strstr(svg, ">not merged</text>"));
	free(svg);
	ck_assert_int_eq(plot_write(c, tmp_path("bars.png"), 600, 400, err, sizeof(err)), 0);
	plot_free(c);
}
END_TEST

START_TEST(test_log_axes_draw)
{
	struct plot_chart *c = known_chart();
	char err[256];

	plot_set_scale(c, PLOT_Y, PLOT_LOG10);
	ck_assert_msg(plot_write(c, tmp_path("logy.png"), 500, 300, err, sizeof(err)) == 0, "%s",
		      err);
	plot_free(c);
}
END_TEST

START_TEST(test_text_is_sanitized)
{
	struct plot_chart *c = plot_new(PLOT_LINES);
	char err[256];
	char *svg;
	int s;

	s = plot_add_series(c, "back\\slash caf\xc3\xa9", err, sizeof(err));
	ck_assert_int_eq(plot_add_point(c, s, 1, 1, err, sizeof(err)), 0);
	ck_assert_int_eq(plot_write(c, tmp_path("text.svg"), 400, 300, err, sizeof(err)), 0);
	svg = slurp(tmp_path("text.svg"), NULL);
	ck_assert_ptr_nonnull(strstr(svg, ">back?slash caf?" "?</text>")); /* no trigraph */
	free(svg);
	plot_free(c);
}
END_TEST

/* ---- errors: returned, and no file written --------------------------------- */

START_TEST(test_unknown_extension_is_refused)
{
	struct plot_chart *c = known_chart();
	char err[256] = "";

	ck_assert_int_eq(plot_write(c, tmp_path("chart.pdf"), 800, 500, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "unknown image type"));
	ck_assert(!file_exists(tmp_path("chart.pdf")));
	ck_assert_int_eq(plot_write(c, tmp_path("noext"), 800, 500, err, sizeof(err)), -1);
	plot_free(c);
}
END_TEST

START_TEST(test_unwritable_path_is_reported)
{
	struct plot_chart *c = known_chart();
	char err[256] = "";

	ck_assert_int_eq(plot_write(c, tmp_path("no/such/dir.png"), 800, 500, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "cannot write"));
	ck_assert_ptr_nonnull(strstr(err, "No such file or directory"));
	plot_free(c);
}
END_TEST

START_TEST(test_empty_charts_are_refused)
{
	struct plot_chart *c = plot_new(PLOT_LINES);
	char err[256] = "";

	ck_assert_int_eq(plot_write(c, tmp_path("empty.png"), 800, 500, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "the chart has no series");
	ck_assert_int_eq(plot_add_series(c, "lonely", err, sizeof(err)), 0);
	ck_assert_int_eq(plot_check(c, err, sizeof(err)), -1);
	ck_assert_int_eq(plot_write(c, tmp_path("empty.png"), 800, 500, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "series 'lonely' has no points");
	ck_assert(!file_exists(tmp_path("empty.png")));
	ck_assert_int_eq(plot_add_series(c, "", err, sizeof(err)), -1);
	plot_free(c);
}
END_TEST

START_TEST(test_bad_values_are_refused)
{
	struct plot_chart *c = plot_new(PLOT_LINES);
	char err[256] = "", long_text[PLOT_TEXT_MAX + 2];
	int s = plot_add_series(c, "s", err, sizeof(err));

	ck_assert_int_eq(plot_add_point(c, s, NAN, 1, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not finite"));
	ck_assert_int_eq(plot_add_point(c, s, 1, INFINITY, err, sizeof(err)), -1);
	ck_assert_int_eq(plot_add_point(c, s, 1, 1e200, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "too large"));
	ck_assert_int_eq(plot_add_range(c, s, 1, 3, 2, 4, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not in order"));
	ck_assert_uint_eq(plot_point_count(c, s), 0);
	memset(long_text, 'a', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = '\0';
	ck_assert_int_eq(plot_set_labels(c, long_text, NULL, NULL, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "longer than"));
	ck_assert_int_eq(plot_add_series(c, long_text, err, sizeof(err)), -1);
	/* log axes need positive values */
	ck_assert_int_eq(plot_add_point(c, s, 0, 5, err, sizeof(err)), 0);
	plot_set_scale(c, PLOT_X, PLOT_LOG10);
	ck_assert_int_eq(plot_write(c, tmp_path("log.png"), 800, 500, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "log10 x axis: series 's' has x = 0"));
	ck_assert(!file_exists(tmp_path("log.png")));
	plot_set_scale(c, PLOT_X, PLOT_LINEAR);
	/* sizes */
	ck_assert_int_eq(plot_write(c, tmp_path("tiny.png"), 10, 500, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "image size 10x500"));
	ck_assert_int_eq(plot_write(c, tmp_path("ok.png"), 800, 500, NULL, 0), 0);
	plot_free(c);
}
END_TEST

/* ---- sweep CSV ---------------------------------------------------------------- */

/* Read @text as "t.csv" into a new lines chart; NULL (message in @err) on failure. */
static struct plot_chart *read_sweep(const char *text, char *err, size_t errlen)
{
	struct plot_chart *c = plot_new(PLOT_LINES);
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	int rc;

	if (!in && strlen(text) == 0)
		in = fopen("/dev/null", "r");
	ck_assert_ptr_nonnull(in);
	rc = plot_read_sweep_csv(in, "t.csv", c, err, errlen);
	fclose(in);
	if (rc < 0) {
		plot_free(c);
		return NULL;
	}
	return c;
}

static void expect_sweep_error(const char *text, const char *message)
{
	char err[256] = "";
	struct plot_chart *c = read_sweep(text, err, sizeof(err));

	ck_assert_msg(c == NULL, "accepted: %s", text);
	ck_assert_msg(strcmp(err, message) == 0, "got '%s', wanted '%s'", err, message);
}

START_TEST(test_sweep_reads_series_in_order)
{
	char err[256];
	struct plot_chart *c = read_sweep("# scan speed, MiB/s\n"
					  "\n"
					  "series,x,min,median,max\r\n"
					  "kernel,0.5,180,181,190\n"
					  "sim checksum, 0.5, 200, 200, 200\n"
					  "# a comment between points\n"
					  "kernel,0,400,420,430\n",
					  err, sizeof(err));

	ck_assert_msg(c != NULL, "%s", err);
	ck_assert_uint_eq(plot_series_count(c), 2);
	ck_assert_str_eq(c->series[0].name, "kernel");
	ck_assert_str_eq(c->series[1].name, "sim checksum");
	ck_assert_uint_eq(plot_point_count(c, 0), 2);
	ck_assert_uint_eq(plot_point_count(c, 1), 1);
	ck_assert_double_eq(c->series[0].point[1].x, 0);
	ck_assert_double_eq(c->series[0].point[1].lo, 400);
	ck_assert_double_eq(c->series[0].point[1].y, 420);
	ck_assert_double_eq(c->series[0].point[1].hi, 430);
	ck_assert(c->series[0].point[1].range);
	ck_assert_int_eq(plot_write(c, tmp_path("sweep.svg"), 800, 500, err, sizeof(err)), 0);
	plot_free(c);
}
END_TEST

START_TEST(test_sweep_rejects_bad_input_with_file_and_line)
{
	expect_sweep_error("", "t.csv:1: no header: expected 'series,x,min,median,max'");
	expect_sweep_error("# only a comment\n", "t.csv:1: no header: expected 'series,x,min,median,max'");
	expect_sweep_error("# results\nseries,x,median\nk,1,2\n",
			   "t.csv:2: expected the header 'series,x,min,median,max', got 'series,x,median'");
	expect_sweep_error("series,x,min,median,max\n",
			   "t.csv:1: no data: expected lines of series,x,min,median,max");
	expect_sweep_error("series,x,min,median,max\nk,1,2,3\n",
			   "t.csv:2: expected 5 fields (series,x,min,median,max), got 4");
	expect_sweep_error("series,x,min,median,max\nk,1,2,3,4,5\n",
			   "t.csv:2: expected 5 fields (series,x,min,median,max), got 6");
	expect_sweep_error("series,x,min,median,max\nk,1,2,3,4\nk,2,1,abc,4\n",
			   "t.csv:3: median 'abc' is not a number");
	expect_sweep_error("series,x,min,median,max\nk,,1,2,3\n", "t.csv:2: x is empty");
	expect_sweep_error("series,x,min,median,max\nk,1,2,3,1e101\n",
			   "t.csv:2: max '1e101' is out of range");
	expect_sweep_error("series,x,min,median,max\nk,1,nan,3,4\n",
			   "t.csv:2: min 'nan' is out of range");
	expect_sweep_error("series,x,min,median,max\nk,1,5,3,4\n",
			   "t.csv:2: min 5, median 3, max 4: expected min <= median <= max");
	expect_sweep_error("series,x,min,median,max\n,1,2,3,4\n", "t.csv:2: the series name is empty");
	expect_sweep_error("series,x,min,median,max\n\"k\",1,2,3,4\n",
			   "t.csv:2: series name \"k\": quotes are not allowed");
	expect_sweep_error("series,x,min,median,max\nk,1,2,3,4\nj,1,2,3,4\nk,1.0,2,3,4\n",
			   "t.csv:4: series 'k' already has a point at x = 1");
}
END_TEST

/* ---- traces ------------------------------------------------------------------- */

static struct trace *three_scan_trace(void)
{
	const char *names[] = { "main" };
	struct trace *t = trace_new("sim", 1, names);

	ck_assert_ptr_nonnull(t);
	for (int scan = 0; scan < 3; scan++) {
		struct trace_row *row = trace_append(t, TRACE_ROW_SCAN);

		row->scan = (uint64_t)scan;
		row->counter[TRACE_PAGES_SHARED] = scan;
		row->counter[TRACE_PAGES_SHARING] = 10 * scan;
		row = trace_append(t, TRACE_ROW_BATCH); /* left out of the chart */
		row->scan = (uint64_t)scan;
		row->counter[TRACE_PAGES_SHARING] = 999;
	}
	return t;
}

START_TEST(test_trace_counters_become_series)
{
	struct trace *t = three_scan_trace();
	struct plot_chart *c = plot_new(PLOT_LINES);
	const int counters[] = { TRACE_PAGES_SHARED, TRACE_PAGES_SHARING };
	char err[256];
	char *svg;

	ck_assert_int_eq(plot_add_trace_counters(c, t, NULL, counters, 2, PLOT_SOLID, err,
						 sizeof(err)), 0);
	ck_assert_int_eq(plot_add_trace_counters(c, t, "kernel", counters, 2, PLOT_DASHED, err,
						 sizeof(err)), 0);
	ck_assert_uint_eq(plot_series_count(c), 4);
	ck_assert_str_eq(c->series[1].name, "pages_sharing");
	ck_assert_str_eq(c->series[3].name, "kernel pages_sharing");
	ck_assert_int_eq(c->series[1].color, c->series[3].color);
	ck_assert_int_eq(c->series[3].dash, PLOT_DASHED);
	ck_assert_uint_eq(plot_point_count(c, 1), 3);
	ck_assert_double_eq(c->series[1].point[2].x, 2);
	ck_assert_double_eq(c->series[1].point[2].y, 20);
	ck_assert_int_eq(plot_write(c, tmp_path("trace.svg"), 800, 500, err, sizeof(err)), 0);
	svg = slurp(tmp_path("trace.svg"), NULL);
	ck_assert_uint_eq(count_substrings(svg, "<polyline "), 4);
	ck_assert_ptr_nonnull(strstr(svg, ">kernel pages_sharing</text>"));
	free(svg);
	plot_free(c);
	trace_free(t);
}
END_TEST

START_TEST(test_trace_without_scans_is_refused)
{
	const char *names[] = { "main" };
	struct trace *t = trace_new("kernel", 1, names);
	struct plot_chart *c = plot_new(PLOT_LINES);
	const int counters[] = { TRACE_PAGES_SHARED };
	const int bogus[] = { TRACE_COUNTER_COUNT };
	char err[256];

	trace_append(t, TRACE_ROW_BATCH);
	ck_assert_int_eq(plot_add_trace_counters(c, t, NULL, counters, 1, PLOT_SOLID, err,
						 sizeof(err)), -1);
	ck_assert_str_eq(err, "the trace has no full-scan rows");
	trace_append(t, TRACE_ROW_SCAN);
	ck_assert_int_eq(plot_add_trace_counters(c, t, NULL, bogus, 1, PLOT_SOLID, err,
						 sizeof(err)), -1);
	ck_assert_uint_eq(plot_series_count(c), 0);
	plot_free(c);
	trace_free(t);
}
END_TEST

static Suite *plots_suite(void)
{
	Suite *s = suite_create("plots");
	TCase *ticks = tcase_create("ticks");
	TCase *images = tcase_create("images");
	TCase *errors = tcase_create("errors");
	TCase *sweep = tcase_create("sweep");
	TCase *traces = tcase_create("traces");

	tcase_add_test(ticks, test_linear_ticks_are_nice);
	tcase_add_test(ticks, test_integer_axis_has_whole_steps);
	tcase_add_test(ticks, test_degenerate_range_is_widened);
	tcase_add_test(ticks, test_tick_count_respects_the_limit);
	tcase_add_test(ticks, test_large_values_get_si_suffixes);
	tcase_add_test(ticks, test_log_ticks_are_decades);
	suite_add_tcase(s, ticks);

	tcase_add_checked_fixture(images, make_tmpdir, remove_tmpdir);
	tcase_add_test(images, test_png_has_signature_and_size);
	tcase_add_test(images, test_svg_is_wellformed_sized_and_holds_the_data);
	tcase_add_test(images, test_long_series_is_one_polyline);
	tcase_add_test(images, test_bars_are_one_rect_per_point);
	tcase_add_test(images, test_log_axes_draw);
	tcase_add_test(images, test_text_is_sanitized);
	suite_add_tcase(s, images);

	tcase_add_checked_fixture(errors, make_tmpdir, remove_tmpdir);
	tcase_add_test(errors, test_unknown_extension_is_refused);
	tcase_add_test(errors, test_unwritable_path_is_reported);
	tcase_add_test(errors, test_empty_charts_are_refused);
	tcase_add_test(errors, test_bad_values_are_refused);
	suite_add_tcase(s, errors);

	tcase_add_checked_fixture(sweep, make_tmpdir, remove_tmpdir);
	tcase_add_test(sweep, test_sweep_reads_series_in_order);
	tcase_add_test(sweep, test_sweep_rejects_bad_input_with_file_and_line);
	suite_add_tcase(s, sweep);

	tcase_add_checked_fixture(traces, make_tmpdir, remove_tmpdir);
	tcase_add_test(traces, test_trace_counters_become_series);
	tcase_add_test(traces, test_trace_without_scans_is_refused);
	suite_add_tcase(s, traces);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(plots_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
