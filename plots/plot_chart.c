/*
 * plot_chart.c - the chart as a value: title, labels, scales, series and
 * their points, with the checks every value must pass on the way in (finite
 * numbers, min <= median <= max, text length). It draws nothing
 * (plot_render.c does) and reads no file (plot_sweep.c, plot_trace.c do).
 */
#include "plot_internal.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int plot_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen == 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

char *plot_sanitized_copy(const char *s)
{
	size_t len = strlen(s);
	char *copy = malloc(len + 1);

	if (!copy)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		copy[i] = (ch < 0x20 || ch > 0x7e || ch == '\\') ? '?' : (char)ch;
	}
	copy[len] = '\0';
	return copy;
}

struct plot_chart *plot_new(enum plot_kind kind)
{
	struct plot_chart *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->kind = kind;
	c->scale[PLOT_X] = PLOT_LINEAR;
	c->scale[PLOT_Y] = PLOT_LINEAR;
	return c;
}

void plot_free(struct plot_chart *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nseries; i++) {
		free(c->series[i].name);
		free(c->series[i].point);
	}
	free(c->series);
	free(c->title);
	free(c->xlabel);
	free(c->ylabel);
	free(c);
}

/* Copy optional text @s into *@copy (NULL for none); -1 when too long or out of memory. */
static int copy_optional_text(const char *what, const char *s, char **copy, char *err,
			      size_t errlen)
{
	*copy = NULL;
	if (!s || !*s)
		return 0;
	if (strlen(s) > PLOT_TEXT_MAX)
		return plot_fail(err, errlen, "%s is longer than %d bytes", what, PLOT_TEXT_MAX);
	*copy = plot_sanitized_copy(s);
	if (!*copy)
		return plot_fail(err, errlen, "out of memory");
	return 0;
}

int plot_set_labels(struct plot_chart *c, const char *title, const char *xlabel,
		    const char *ylabel, char *err, size_t errlen)
{
	char *t = NULL, *x = NULL, *y = NULL;

	assert(c);
	if (copy_optional_text("the title", title, &t, err, errlen) < 0)
		goto fail;
	if (copy_optional_text("the x axis label", xlabel, &x, err, errlen) < 0)
		goto fail;
	if (copy_optional_text("the y axis label", ylabel, &y, err, errlen) < 0)
		goto fail;
	free(c->title);
	free(c->xlabel);
	free(c->ylabel);
	c->title = t;
	c->xlabel = x;
	c->ylabel = y;
	return 0;
fail:
	free(x);
	free(t);
	return -1;
}

void plot_set_scale(struct plot_chart *c, enum plot_axis axis, enum plot_scale scale)
{
	assert(c && (axis == PLOT_X || axis == PLOT_Y));
	c->scale[axis] = scale;
}

int plot_add_series(struct plot_chart *c, const char *name, char *err, size_t errlen)
{
	struct plot_series *s;

	assert(c && name);
	if (!*name)
		return plot_fail(err, errlen, "a series needs a name");
	if (strlen(name) > PLOT_TEXT_MAX)
		return plot_fail(err, errlen, "series name '%.40s...' is longer than %d bytes", name,
				 PLOT_TEXT_MAX);
	if (c->nseries >= (size_t)INT32_MAX)
		return plot_fail(err, errlen, "too many series");
	if (c->nseries == c->series_cap) {
		size_t cap = c->series_cap ? 2 * c->series_cap : 8;
		struct plot_series *grown = realloc(c->series, cap * sizeof(*grown));

		if (!grown)
			return plot_fail(err, errlen, "out of memory");
		c->series = grown;
		c->series_cap = cap;
	}
	s = &c->series[c->nseries];
	memset(s, 0, sizeof(*s));
	s->name = plot_sanitized_copy(name);
	if (!s->name)
		return plot_fail(err, errlen, "out of memory");
	s->color = (int)(c->nseries % PLOT_COLORS);
	s->dash = PLOT_SOLID;
	return (int)c->nseries++;
}

void plot_series_style(struct plot_chart *c, int series, int color, enum plot_dash dash)
{
	assert(c && series >= 0 && (size_t)series < c->nseries);
	assert(color >= 0 || color == PLOT_AUTO_COLOR);
	if (color >= 0)
		c->series[series].color = color % PLOT_COLORS;
	c->series[series].dash = dash;
}

size_t plot_series_count(const struct plot_chart *c)
{
	return c->nseries;
}

size_t plot_point_count(const struct plot_chart *c, int series)
{
	assert(series >= 0 && (size_t)series < c->nseries);
	return c->series[series].npoints;
}

static int append_point(struct plot_series *s, const struct plot_point *p, char *err,
			size_t errlen)
{
	if (s->npoints == s->points_cap) {
		size_t cap = s->points_cap ? 2 * s->points_cap : 16;
		struct plot_point *grown;

		if (cap > SIZE_MAX / sizeof(*grown))
			return plot_fail(err, errlen, "out of memory");
		grown = realloc(s->point, cap * sizeof(*grown));
		if (!grown)
			return plot_fail(err, errlen, "out of memory");
		s->point = grown;
		s->points_cap = cap;
	}
	s->point[s->npoints++] = *p;
	return 0;
}

/* Finite and not absurd: axis arithmetic stays finite well beyond these. */
static bool plottable(double v)
{
	return isfinite(v) && fabs(v) <= PLOT_VALUE_MAX;
}

int plot_add_point(struct plot_chart *c, int series, double x, double y, char *err,
		   size_t errlen)
{
	struct plot_point p = { .x = x, .y = y, .lo = y, .hi = y, .range = false };

	assert(c && series >= 0 && (size_t)series < c->nseries);
	if (!plottable(x) || !plottable(y))
		return plot_fail(err, errlen, "series '%s': point (%g, %g) is not finite or too large",
				 c->series[series].name, x, y);
	return append_point(&c->series[series], &p, err, errlen);
}

int plot_add_range(struct plot_chart *c, int series, double x, double min, double median,
		   double max, char *err, size_t errlen)
{
	struct plot_point p = { .x = x, .y = median, .lo = min, .hi = max, .range = true };

	assert(c && series >= 0 && (size_t)series < c->nseries);
	if (!plottable(x) || !plottable(min) || !plottable(median) || !plottable(max))
		return plot_fail(err, errlen, "series '%s' at x = %g: a value is not finite or too large",
				 c->series[series].name, x);
	if (!(min <= median && median <= max))
		return plot_fail(err, errlen,
				 "series '%s' at x = %g: min %g, median %g, max %g are not in order",
				 c->series[series].name, x, min, median, max);
	return append_point(&c->series[series], &p, err, errlen);
}
