/*
 * plot_axis.c - axis ranges, tick positions and tick labels, as pure
 * functions of the data range: "nice" linear steps (1, 2, 2.5, 5 times a
 * power of ten, after Heckbert's "Nice numbers for graph labels"), log10
 * decades with minor ticks, and compact labels (as many decimals as the step
 * needs, SI suffixes for large values). It knows nothing of pixels or fonts:
 * the renderer asks for at most as many ticks as fit.
 */
#include "plot_internal.h"

#include <math.h>
#include <string.h>

/* Relative slack for floating-point comparisons of tick arithmetic. */
#define EPS 1e-9

static int clamp_ticks(int max_ticks)
{
	if (max_ticks < 2)
		return 2;
	if (max_ticks > PLOT_MAX_TICKS)
		return PLOT_MAX_TICKS;
	return max_ticks;
}

/*
 * The smallest nice step >= @raw. Whole-number axes skip 2.5 (its multiples
 * of one are not whole) and steps below 1.
 */
static double nice_step_at_least(double raw, bool integer)
{
	static const double mantissa[] = { 1, 2, 2.5, 5, 10 };
	double mag, f;

	if (integer && raw <= 1)
		return 1;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	for (size_t i = 0; i < sizeof(mantissa) / sizeof(mantissa[0]); i++) {
		if (integer && mantissa[i] == 2.5 && mag < 10)
			continue;
		if (f <= mantissa[i] * (1 + EPS))
			return mantissa[i] * mag;
	}
	return 10 * mag;
}

/* A zero-width range made wide enough to draw. */
static void widen_degenerate(double *lo, double *hi)
{
	double d;

	if (*hi > *lo)
		return;
	if (*lo == 0) {
		*hi = 1;
		return;
	}
	d = fabs(*lo) * 0.1;
	*lo -= d;
	*hi += d;
}

void plot_ticks_linear(double lo, double hi, int max_ticks, bool integer, struct plot_ticks *t)
{
	double step, first, last;
	double magnitude;

	max_ticks = clamp_ticks(max_ticks);
	widen_degenerate(&lo, &hi);
	memset(t, 0, sizeof(*t));
	t->scale = PLOT_LINEAR;
	step = nice_step_at_least((hi - lo) / (max_ticks - 1), integer);
	for (;;) {
		first = floor(lo / step + EPS);
		last = ceil(hi / step - EPS);
		if (last - first + 1 <= max_ticks)
			break;
		step = nice_step_at_least(step * (1 + 1e-6), integer);
	}
	if (last <= first)
		last = first + 1;
	t->lo = first * step;
	t->hi = last * step;
	t->n = (size_t)(last - first) + 1;
	magnitude = fmax(fabs(t->lo), fabs(t->hi));
	for (size_t i = 0; i < t->n; i++) {
		double v = (first + (double)i) * step;

		if (fabs(v) < step * EPS)
			v = 0; /* no "-0" from rounding */
		t->value[i] = v;
		plot_format_tick(v, step, magnitude, t->label[i], sizeof(t->label[i]));
	}
}

static void add_major(struct plot_ticks *t, double v, bool labeled)
{
	if (t->n >= PLOT_MAX_TICKS)
		return;
	t->value[t->n] = v;
	/* each label on its own scale (1, 10, 100, 1000, 10k, 1M), from 1k when the axis reaches 10k */
	if (labeled)
		plot_format_tick(v, v, v >= 1000 && t->hi >= 1e4 ? fmax(v, 1e4) : v,
				 t->label[t->n], sizeof(t->label[t->n]));
	else
		t->label[t->n][0] = '\0';
	t->n++;
}

static void add_minor(struct plot_ticks *t, double v)
{
	if (t->nminor < PLOT_MAX_MINOR_TICKS)
		t->minor[t->nminor++] = v;
}

void plot_ticks_log10(double lo, double hi, int max_ticks, struct plot_ticks *t)
{
	int e0 = (int)floor(log10(lo) + EPS);
	int e1 = (int)ceil(log10(hi) - EPS);
	int decades, every;

	max_ticks = clamp_ticks(max_ticks);
	memset(t, 0, sizeof(*t));
	t->scale = PLOT_LOG10;
	if (e1 <= e0)
		e1 = e0 + 1;
	decades = e1 - e0;
	every = (decades + max_ticks - 1) / (max_ticks - 1);
	if (every < 1)
		every = 1;
	t->lo = pow(10, e0);
	t->hi = pow(10, e1);
	for (int e = e0; e <= e1; e++) {
		double p = pow(10, e);

		if ((e - e0) % every == 0)
			add_major(t, p, true);
		if (e == e1 || every > 1 || decades > 12)
			continue;
		if (decades == 1) {
			add_major(t, 2 * p, true);
			add_major(t, 5 * p, true);
		}
		for (int m = 2; m <= 9; m++)
			if (decades > 1 || (m != 2 && m != 5))
				add_minor(t, m * p);
	}
}

/* Decimals needed to write multiples of @step exactly (at most 6). */
static int decimals_for(double step)
{
	double scaled = step;

	for (int d = 0; d < 6; d++) {
		if (fabs(scaled - round(scaled)) <= EPS * 1e3 * fmax(1, fabs(scaled)))
			return d;
		scaled *= 10;
	}
	return 6;
}

void plot_format_tick(double value, double step, double magnitude, char *buf, size_t len)
{
	static const char suffix[] = "kMGTP";
	double div = 1;
	int k = 0;

	if (value == 0) {
		snprintf(buf, len, "0");
		return;
	}
	if (magnitude < 1e-3 || magnitude >= 1e18) {
		snprintf(buf, len, "%.3g", value);
		return;
	}
	if (magnitude >= 1e4) {
		k = (int)floor(log10(magnitude) / 3 + EPS);
		if (k > 5)
			k = 5;
		div = pow(1000, k);
	}
	if (k > 0)
		snprintf(buf, len, "%.*f%c", decimals_for(step / div), value / div, suffix[k - 1]);
	else
		snprintf(buf, len, "%.*f", decimals_for(step), value);
}

void plot_format_value(double value, char *buf, size_t len)
{
	double magnitude = fabs(value);

	if (magnitude >= 1e6 && magnitude < 1e18)
		plot_format_tick(value, magnitude / 1e4, magnitude, buf, len);
	else
		snprintf(buf, len, "%.6g", value);
}

double plot_axis_fraction(const struct plot_ticks *t, double v)
{
	if (t->scale == PLOT_LOG10)
		return (log10(v) - log10(t->lo)) / (log10(t->hi) - log10(t->lo));
	return (v - t->lo) / (t->hi - t->lo);
}
