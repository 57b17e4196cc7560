/*
 * plot.h - charts for ksmkit, drawn with GNU libplot as PNG or SVG.
 *
 * A chart is a value built in memory and then written as one image file:
 * a title, an x and a y axis (each linear or log10, with "nice" ticks and
 * tick labels chosen from the data, e.g. 0 20 40 60 or 1 10 100 1k), axis
 * labels, a legend naming every series, and the series themselves. A chart
 * has one kind:
 *
 *   PLOT_LINES  each series is a line through its points in increasing x,
 *               with a marker at every point when they are not too dense
 *               (at least 12 pixels apart on average), and an error bar
 *               from min to max at every point added as a range;
 *   PLOT_BARS   grouped bars: one group per distinct x value (evenly spaced,
 *               labeled with the value, in increasing x), one bar per series
 *               in the group, up to the point's y (the median of a range),
 *               with an error bar from min to max for ranges.
 *
 * Axes cover every y, min and max; a linear y axis always includes 0. The
 * legend goes into a corner of the plot area where it hides no data, or to
 * the right of the plot area when every corner is taken. Series get the
 * colors of a fixed palette of ten in order (or the one asked for), the same
 * color index always giving the same color and marker shape; a dashed series
 * is drawn a shade darker with hollow markers on top of the solid ones,
 * which are then drawn wider, so a dashed series lying exactly on a solid
 * one (the kernel matching the simulator) stays visible.
 *
 * The image type follows the output file name: ".png" (bitmap, libplot's
 * Hershey vector fonts) or ".svg" (vector, text as <text> elements in
 * Helvetica; the root element's width and height are the pixel size). Text
 * is printable ASCII: other bytes and backslashes (libplot's escape
 * character) are drawn as '?'.
 *
 * Contract: functions that can fail return -1 (or NULL) and, when they take
 * @err, write a one-line message there (never printed; @errlen 0 is
 * allowed). Nothing here keeps global state of its own (libplot registers
 * its Plotters globally, so write charts from one thread at a time). It does
 * not know where numbers come from, except for the two readers at the end:
 * the sweep CSV format and ksmkit traces.
 */
#ifndef KSMKIT_PLOT_H
#define KSMKIT_PLOT_H

#include <stddef.h>
#include <stdio.h>

/* Image sizes, in pixels, that plot_write accepts (each side). */
#define PLOT_MIN_PIXELS 200
#define PLOT_MAX_PIXELS 8000
/* Longest series name, title or axis label (bytes). */
#define PLOT_TEXT_MAX 200
/* The number of distinct colors; color indexes wrap around. */
#define PLOT_COLORS 10
/* The largest magnitude a value may have. */
#define PLOT_VALUE_MAX 1e100
/* plot_series_style: keep the series' automatic color. */
#define PLOT_AUTO_COLOR (-1)

enum plot_kind {
	PLOT_LINES, /* lines through the points, markers, error bars */
	PLOT_BARS,  /* grouped bars per distinct x, error bars */
};

enum plot_axis { PLOT_X, PLOT_Y };

enum plot_scale {
	PLOT_LINEAR, /* default */
	PLOT_LOG10,  /* every value on the axis must then be > 0 */
};

enum plot_dash { PLOT_SOLID, PLOT_DASHED };

struct plot_chart;

/* A new chart without title, labels or series; NULL when out of memory. */
struct plot_chart *plot_new(enum plot_kind kind);

/* Free @c and everything in it; NULL is allowed. */
void plot_free(struct plot_chart *c);

/*
 * Set the title and the axis labels (copied; NULL or "" leaves that text
 * out). Returns 0, or -1 when a text is longer than PLOT_TEXT_MAX or memory
 * runs out (then @c keeps its previous texts).
 */
int plot_set_labels(struct plot_chart *c, const char *title, const char *xlabel,
		    const char *ylabel, char *err, size_t errlen);

/* Linear (the default) or log10 scale for @axis. Bars need a linear x. */
void plot_set_scale(struct plot_chart *c, enum plot_axis axis, enum plot_scale scale);

/*
 * Add an empty series called @name (1..PLOT_TEXT_MAX bytes, shown in the
 * legend; names need not be unique). Returns its index (0, 1, ... in order
 * of creation), or -1. Its color is the next in the palette, solid.
 */
int plot_add_series(struct plot_chart *c, const char *name, char *err, size_t errlen);

/*
 * Set series @series' color index (any int >= 0, taken modulo PLOT_COLORS;
 * PLOT_AUTO_COLOR keeps the current one) and dash.
 */
void plot_series_style(struct plot_chart *c, int series, int color, enum plot_dash dash);

/* The number of series, and of points in series @series. */
size_t plot_series_count(const struct plot_chart *c);
size_t plot_point_count(const struct plot_chart *c, int series);

/*
 * Add point (@x, @y) to series @series. Returns 0, or -1 when a value is not
 * finite or beyond +-PLOT_VALUE_MAX, or memory runs out.
 */
int plot_add_point(struct plot_chart *c, int series, double x, double y, char *err,
		   size_t errlen);

/*
 * Add a point measured several times: drawn at (@x, @median) with an error
 * bar from @min to @max. Returns 0, or -1 when a value is not finite (or
 * beyond +-PLOT_VALUE_MAX), min <= median <= max does not hold, or memory
 * runs out.
 */
int plot_add_range(struct plot_chart *c, int series, double x, double min, double median,
		   double max, char *err, size_t errlen);

/*
 * What plot_write would refuse in @c itself: no series, a series without
 * points, bars on a log10 x axis, a value <= 0 on a log10 axis. Returns 0,
 * or -1 with the reason.
 */
int plot_check(const struct plot_chart *c, char *err, size_t errlen);

/*
 * Draw @c into the file @path (created or truncated), @width x @height
 * pixels, PNG or SVG as @path ends in ".png" or ".svg" (any case). Returns 0,
 * or -1 when the type is unknown, the size is outside PLOT_MIN_PIXELS ..
 * PLOT_MAX_PIXELS, plot_check fails, libplot fails (its own message is
 * quoted) or the file cannot be written. The file is written only once the
 * whole image is drawn.
 */
int plot_write(const struct plot_chart *c, const char *path, int width, int height, char *err,
	       size_t errlen);

/*
 * Sweep results, the format the benchmarks write (docs in ksmkit(1)):
 *
 *   # any comment line; blank lines are ignored too
 *   series,x,min,median,max
 *   kernel,0.25,180.2,181.0,183.9
 *   sim checksum,0.25,190,190,190
 *
 * One line per point: the series name (its legend text: no comma, no
 * quote), x, and the min, median and max of the repeated measurement of y.
 * Points may come in any order (a series is drawn in increasing x) but a
 * series may not have two points at the same x. Series appear in the legend
 * in order of their first line.
 *
 * Reads @in (called @name in messages) into series added to @c. Returns 0,
 * or -1 with "NAME:LINE: what is wrong" in @err; @c may then hold some of
 * the series.
 */
int plot_read_sweep_csv(FILE *in, const char *name, struct plot_chart *c, char *err,
			size_t errlen);

/*
 * Add to @c one series per counter @counters[0..ncounters) (enum
 * trace_counter values) of trace @t: x is the scan number of every full-scan
 * row (batch rows are left out), y the counter. The series of counters[i]
 * has color index i and dash @dash, and is called "LABEL COUNTER" (or
 * "COUNTER" when @label is NULL or ""). Returns 0, or -1 when @t has no
 * full-scan row, a counter is out of range, or memory runs out.
 */
struct trace;
int plot_add_trace_counters(struct plot_chart *c, const struct trace *t, const char *label,
			    const int *counters, size_t ncounters, enum plot_dash dash, char *err,
			    size_t errlen);

#endif
