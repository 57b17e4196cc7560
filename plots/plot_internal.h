/*
 * plot_internal.h - what the files of plots/ share and the public header
 * hides: the chart's representation (plot_chart.c owns it), the tick
 * computations (plot_axis.c, pure functions the tests call directly) and the
 * error-message helper.
 */
#ifndef KSMKIT_PLOT_INTERNAL_H
#define KSMKIT_PLOT_INTERNAL_H

#include "plot.h"

#include <stdbool.h>

struct plot_point {
	double x;
	double y;      /* where the point is drawn: the median of a range */
	double lo, hi; /* the error bar; lo == hi == y for a plain point */
	bool range;    /* added by plot_add_range: draw the error bar */
};

struct plot_series {
	char *name;          /* legend text, sanitized */
	int color;           /* palette index, 0 .. PLOT_COLORS-1 */
	enum plot_dash dash;
	struct plot_point *point; /* in order of addition */
	size_t npoints, points_cap;
};

struct plot_chart {
	enum plot_kind kind;
	char *title, *xlabel, *ylabel; /* NULL: none */
	enum plot_scale scale[2];      /* indexed by enum plot_axis */
	struct plot_series *series;
	size_t nseries, series_cap;
};

/* ---- ticks (plot_axis.c) -------------------------------------------------- */

#define PLOT_MAX_TICKS 40
#define PLOT_MAX_MINOR_TICKS 120
#define PLOT_TICK_LABEL_MAX 24

/* An axis' range and ticks, in data units. */
struct plot_ticks {
	enum plot_scale scale;
	double lo, hi;                        /* the axis range: lo < hi */
	size_t n;                             /* major ticks, increasing */
	double value[PLOT_MAX_TICKS];
	char label[PLOT_MAX_TICKS][PLOT_TICK_LABEL_MAX]; /* "" : unlabeled */
	size_t nminor;                        /* small unlabeled ticks (log10) */
	double minor[PLOT_MAX_MINOR_TICKS];
};

/*
 * Linear ticks covering the data range [@lo, @hi] (lo <= hi, finite): at
 * most @max_ticks (clamped to 2 .. PLOT_MAX_TICKS) major ticks, spaced 1, 2,
 * 2.5 or 5 times a power of ten, the axis range extended to whole steps
 * (a zero-width range is widened first). With @integer (every value is a
 * whole number: scans, pages) steps are whole numbers.
 */
void plot_ticks_linear(double lo, double hi, int max_ticks, bool integer, struct plot_ticks *t);

/*
 * Log10 ticks covering [@lo, @hi] (0 < lo <= hi): the axis spans whole
 * decades, majors at powers of ten (every k-th decade when there are more
 * than @max_ticks), also at 2 and 5 times them when the axis spans one
 * decade; minor ticks at 2..9 times each power of ten when the decades are
 * few enough.
 */
void plot_ticks_log10(double lo, double hi, int max_ticks, struct plot_ticks *t);

/*
 * A tick label for @value on an axis with step @step whose largest magnitude
 * is @magnitude: as many decimals as the step needs, SI suffixes (k M G T P)
 * from 10000 up ("12.5k", "2M"), "0" for zero.
 */
void plot_format_tick(double value, double step, double magnitude, char *buf, size_t len);

/* A label for a bar group's x value: shortest exact form, SI from 10^6. */
void plot_format_value(double value, char *buf, size_t len);

/* Position of @v on the axis, 0 at lo .. 1 at hi. */
double plot_axis_fraction(const struct plot_ticks *t, double v);

/* ---- errors ----------------------------------------------------------------- */

/* Format a message into @err (when @errlen > 0); returns -1. */
int plot_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A malloc'ed copy of @s with bytes outside printable ASCII and backslashes
 * replaced by '?'; NULL when out of memory. */
char *plot_sanitized_copy(const char *s);

#endif
