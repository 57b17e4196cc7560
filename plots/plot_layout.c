/*
 * plot_layout.c - where everything of a chart goes, in pixels, before
 * anything is drawn: the data checked (plot_check) and sorted, its extent,
 * margins sized from the fonts' real text widths (pl_flabelwidth_r) for the
 * title, axis labels and tick labels, tick counts that shrink until labels
 * no longer collide, and the legend, tried in the four corners of the plot
 * area (where it must cover no line, marker, error bar or bar) before it
 * moves to the right of the plot area. It draws nothing: plot_render.c does.
 */
#include "plot_render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- fonts ------------------------------------------------------------------- */

void plot_set_font(const struct canvas *cv, double size, bool bold)
{
	const char *name;

	if (cv->type == IMAGE_SVG)
		name = bold ? "Helvetica-Bold" : "Helvetica";
	else /* bitmap Plotters only have Hershey vector fonts */
		name = bold ? "HersheySans-Bold" : "HersheySans";
	pl_ffontname_r(cv->pl, name);
	pl_ffontsize_r(cv->pl, size);
}

double plot_text_width(const struct canvas *cv, double size, bool bold, const char *s)
{
	double w;

	pl_savestate_r(cv->pl);
	plot_set_font(cv, size, bold);
	w = pl_flabelwidth_r(cv->pl, s);
	pl_restorestate_r(cv->pl);
	return w;
}

/* ---- data extent and preparation ------------------------------------------------ */

static int compare_points_by_x(const void *a, const void *b)
{
	const struct plot_point *p = a, *q = b;

	return (p->x > q->x) - (p->x < q->x);
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static bool is_whole(double v)
{
	return v == floor(v) && fabs(v) < 9e15;
}

/* Every value a log10 axis would show must be positive. */
static int check_log_axes(const struct plot_chart *c, char *err, size_t errlen)
{
	for (size_t i = 0; i < c->nseries; i++) {
		const struct plot_series *s = &c->series[i];

		for (size_t j = 0; j < s->npoints; j++) {
			if (c->scale[PLOT_X] == PLOT_LOG10 && s->point[j].x <= 0)
				return plot_fail(err, errlen,
						 "log10 x axis: series '%s' has x = %g, not > 0",
						 s->name, s->point[j].x);
			if (c->scale[PLOT_Y] == PLOT_LOG10 && s->point[j].lo <= 0)
				return plot_fail(err, errlen,
						 "log10 y axis: series '%s' has y = %g at x = %g, not > 0",
						 s->name, s->point[j].lo, s->point[j].x);
		}
	}
	return 0;
}

int plot_check(const struct plot_chart *c, char *err, size_t errlen)
{
	if (c->nseries == 0)
		return plot_fail(err, errlen, "the chart has no series");
	for (size_t i = 0; i < c->nseries; i++)
		if (c->series[i].npoints == 0)
			return plot_fail(err, errlen, "series '%s' has no points", c->series[i].name);
	if (c->kind == PLOT_BARS && c->scale[PLOT_X] != PLOT_LINEAR)
		return plot_fail(err, errlen, "bars need a linear x axis");
	return check_log_axes(c, err, errlen);
}

static void measure_extent(struct render *r)
{
	const struct plot_chart *c = r->c;
	bool first = true;

	r->x_integer = r->y_integer = true;
	for (size_t i = 0; i < c->nseries; i++) {
		const struct plot_series *s = &c->series[i];

		if (s->dash == PLOT_DASHED)
			r->any_dashed = true;
		for (size_t j = 0; j < s->npoints; j++) {
			const struct plot_point *p = &s->point[j];

			if (first) {
				r->xmin = r->xmax = p->x;
				r->ymin = p->lo;
				r->ymax = p->hi;
				first = false;
			}
			r->xmin = fmin(r->xmin, p->x);
			r->xmax = fmax(r->xmax, p->x);
			r->ymin = fmin(r->ymin, p->lo);
			r->ymax = fmax(r->ymax, p->hi);
			r->x_integer = r->x_integer && is_whole(p->x);
			r->y_integer = r->y_integer && is_whole(p->lo) && is_whole(p->y) &&
				       is_whole(p->hi);
		}
	}
	if (c->scale[PLOT_Y] == PLOT_LINEAR) { /* a linear y axis shows its zero */
		r->ymin = fmin(r->ymin, 0);
		r->ymax = fmax(r->ymax, 0);
	}
}

/* Sorted copies of the series (lines) or the distinct x values (bars). */
static int prepare_points(struct render *r, char *err, size_t errlen)
{
	const struct plot_chart *c = r->c;
	size_t total = 0;

	r->sorted = calloc(c->nseries, sizeof(*r->sorted));
	if (!r->sorted)
		return plot_fail(err, errlen, "out of memory");
	for (size_t i = 0; i < c->nseries; i++) {
		const struct plot_series *s = &c->series[i];

		r->sorted[i] = malloc(s->npoints * sizeof(*r->sorted[i]));
		if (!r->sorted[i])
			return plot_fail(err, errlen, "out of memory");
		memcpy(r->sorted[i], s->point, s->npoints * sizeof(*s->point));
		qsort(r->sorted[i], s->npoints, sizeof(*s->point), compare_points_by_x);
		total += s->npoints;
	}
	if (c->kind != PLOT_BARS)
		return 0;
	r->cat = malloc(total * sizeof(*r->cat));
	if (!r->cat)
		return plot_fail(err, errlen, "out of memory");
	for (size_t i = 0; i < c->nseries; i++)
		for (size_t j = 0; j < c->series[i].npoints; j++)
			r->cat[r->ncat++] = c->series[i].point[j].x;
	qsort(r->cat, r->ncat, sizeof(*r->cat), compare_doubles);
	total = r->ncat;
	r->ncat = 0;
	for (size_t i = 0; i < total; i++)
		if (r->ncat == 0 || r->cat[i] != r->cat[r->ncat - 1])
			r->cat[r->ncat++] = r->cat[i];
	return 0;
}

int plot_prepare(struct render *r, char *err, size_t errlen)
{
	if (prepare_points(r, err, errlen) < 0)
		return -1;
	measure_extent(r);
	return 0;
}

void plot_release(struct render *r)
{
	if (r->sorted)
		for (size_t i = 0; i < r->c->nseries; i++)
			free(r->sorted[i]);
	free(r->sorted);
	free(r->cat);
}

/* ---- coordinates ------------------------------------------------------------------ */

double plot_px(const struct layout *l, double x)
{
	return l->x0 + plot_axis_fraction(&l->xt, x) * (l->x1 - l->x0);
}

double plot_py(const struct layout *l, double y)
{
	return l->y0 + plot_axis_fraction(&l->yt, y) * (l->y1 - l->y0);
}

static size_t category_of(const struct render *r, double x)
{
	const double *found = bsearch(&x, r->cat, r->ncat, sizeof(*r->cat), compare_doubles);

	return (size_t)(found - r->cat);
}

/* Bar of series @s at point @p: [x0, x1] in pixels, and its base and top. */
void plot_bar_geometry(const struct render *r, size_t s, const struct plot_point *p,
		       double *x0, double *x1, double *base, double *top)
{
	const struct layout *l = &r->lay;
	double slot = (l->x1 - l->x0) / (double)r->ncat;
	double width = 0.8 * slot / (double)r->c->nseries;
	double left = l->x0 + (double)category_of(r, p->x) * slot + 0.1 * slot;

	*x0 = left + (double)s * width;
	*x1 = *x0 + width;
	*base = plot_py(l, r->c->scale[PLOT_Y] == PLOT_LOG10 ? l->yt.lo : 0);
	*top = plot_py(l, p->y);
}

/* Markers only where they stay apart: 12 pixels per point on average. */
bool plot_markers_fit(const struct render *r, size_t npoints)
{
	return (r->lay.x1 - r->lay.x0) / (double)npoints >= 12;
}

double plot_marker_size(const struct canvas *cv)
{
	return 0.9 * cv->font;
}

/* ---- layout ------------------------------------------------------------------------ */

/* Labeled ticks at @pos (pixels, increasing) with extents @len keep a gap of @gap. */
static bool labels_apart(const double *pos, const double *len, size_t n, double gap)
{
	double prev_end = -INFINITY;

	for (size_t i = 0; i < n; i++) {
		if (len[i] <= 0)
			continue;
		if (pos[i] - len[i] / 2 < prev_end + gap)
			return false;
		prev_end = pos[i] + len[i] / 2;
	}
	return true;
}

static void compute_ticks(const struct render *r, enum plot_axis axis, int max_ticks,
			  struct plot_ticks *t)
{
	double lo = axis == PLOT_X ? r->xmin : r->ymin;
	double hi = axis == PLOT_X ? r->xmax : r->ymax;
	bool integer = axis == PLOT_X ? r->x_integer : r->y_integer;

	if (r->c->scale[axis] == PLOT_LOG10)
		plot_ticks_log10(lo, hi, max_ticks, t);
	else
		plot_ticks_linear(lo, hi, max_ticks, integer, t);
}

/* y ticks: as many as fit with a label height and a half between labels. */
static void choose_y_ticks(struct render *r, double y0, double y1)
{
	const struct canvas *cv = &r->cv;
	struct layout *l = &r->lay;
	int max_ticks = (int)((y1 - y0) / (2.6 * cv->tick_font)) + 1;

	for (;; max_ticks--) {
		double pos[PLOT_MAX_TICKS], len[PLOT_MAX_TICKS];

		compute_ticks(r, PLOT_Y, max_ticks, &l->yt);
		for (size_t i = 0; i < l->yt.n; i++) {
			pos[i] = y0 + plot_axis_fraction(&l->yt, l->yt.value[i]) * (y1 - y0);
			len[i] = l->yt.label[i][0] ? cv->tick_font : 0;
		}
		if (max_ticks <= 2 || labels_apart(pos, len, l->yt.n, 0.5 * cv->tick_font))
			return;
	}
}

/* Bars: a tick per group, labeled with its x; every k-th label when crowded. */
static void bar_ticks(struct render *r, double x0, double x1)
{
	const struct canvas *cv = &r->cv;
	struct plot_ticks *t = &r->lay.xt;
	double slot = (x1 - x0) / (double)r->ncat;
	double widest = 0;
	size_t every;

	memset(t, 0, sizeof(*t));
	t->scale = PLOT_LINEAR;
	t->lo = 0;
	t->hi = (double)r->ncat;
	for (size_t i = 0; i < r->ncat; i++) {
		char label[PLOT_TICK_LABEL_MAX];

		plot_format_value(r->cat[i], label, sizeof(label));
		widest = fmax(widest, plot_text_width(cv, cv->tick_font, false, label));
	}
	every = (size_t)ceil((widest + cv->tick_font) / slot);
	if (every < 1)
		every = 1;
	if (every * PLOT_MAX_TICKS < r->ncat)
		every = (r->ncat + PLOT_MAX_TICKS - 1) / PLOT_MAX_TICKS;
	for (size_t i = 0; i < r->ncat && t->n < PLOT_MAX_TICKS; i += every) {
		t->value[t->n] = (double)i + 0.5;
		plot_format_value(r->cat[i], t->label[t->n], sizeof(t->label[t->n]));
		t->n++;
	}
}

/* x ticks: as many as fit with a gap of one font size between labels. */
static void choose_x_ticks(struct render *r, double x0, double x1)
{
	const struct canvas *cv = &r->cv;
	struct layout *l = &r->lay;
	int max_ticks = (int)((x1 - x0) / (4 * cv->tick_font)) + 1;

	if (r->c->kind == PLOT_BARS) {
		bar_ticks(r, x0, x1);
		return;
	}
	for (;; max_ticks--) {
		double pos[PLOT_MAX_TICKS], len[PLOT_MAX_TICKS];

		compute_ticks(r, PLOT_X, max_ticks, &l->xt);
		for (size_t i = 0; i < l->xt.n; i++) {
			pos[i] = x0 + plot_axis_fraction(&l->xt, l->xt.value[i]) * (x1 - x0);
			len[i] = plot_text_width(cv, cv->tick_font, false, l->xt.label[i]);
		}
		if (max_ticks <= 2 || labels_apart(pos, len, l->xt.n, cv->tick_font))
			return;
	}
}

static double widest_label(const struct canvas *cv, const struct plot_ticks *t)
{
	double w = 0;

	for (size_t i = 0; i < t->n; i++)
		w = fmax(w, plot_text_width(cv, cv->tick_font, false, t->label[i]));
	return w;
}

static void size_legend(const struct render *r, struct legend *lg)
{
	const struct canvas *cv = &r->cv;
	double names = 0;

	for (size_t i = 0; i < r->c->nseries; i++)
		names = fmax(names, plot_text_width(cv, cv->font, false, r->c->series[i].name));
	if (cv->type == IMAGE_SVG)
		names *= 1.12; /* viewers substitute wider fonts for Helvetica */
	lg->row = 1.45 * cv->font;
	lg->swatch = r->c->kind == PLOT_BARS ? cv->font : 2.8 * cv->font;
	lg->x0 = lg->y0 = 0;
	lg->x1 = 1.4 * cv->font + lg->swatch + names;
	lg->y1 = 0.6 * cv->font + (double)r->c->nseries * lg->row;
}

/*
 * Frame, data area and ticks, with the legend inside (placed later) or at the
 * right. Lines keep an inset from the frame on every side, so that no series
 * hides under it; bars stand on the frame's bottom and fill their slots.
 */
static void compute_layout(struct render *r, bool legend_outside)
{
	const struct canvas *cv = &r->cv;
	const struct plot_chart *c = r->c;
	struct layout *l = &r->lay;
	double in_x = c->kind == PLOT_BARS ? 0 : cv->inset;
	double in_bottom = c->kind == PLOT_BARS ? 0 : cv->inset;
	double legend_w, top, bottom, left, right, overhang;

	size_legend(r, &l->legend);
	l->legend.outside = legend_outside;
	legend_w = l->legend.x1 - l->legend.x0;

	top = cv->height - cv->pad - 0.5 * cv->tick_font;
	if (c->title)
		top -= 1.5 * cv->title_font;
	bottom = cv->pad + cv->tick_len + 0.4 * cv->tick_font + 1.2 * cv->tick_font;
	if (c->xlabel)
		bottom += 1.6 * cv->font;
	choose_y_ticks(r, bottom + in_bottom, top - cv->inset);

	left = cv->pad + widest_label(cv, &l->yt) + 0.4 * cv->tick_font + cv->tick_len;
	if (c->ylabel)
		left += 1.6 * cv->font;
	right = cv->width - cv->pad;
	if (legend_outside)
		right -= legend_w + cv->pad;
	choose_x_ticks(r, left + in_x, right - in_x);
	/* the last x tick label is centered on the data's right edge: leave it room */
	overhang = plot_text_width(cv, cv->tick_font, false, l->xt.label[l->xt.n - 1]) / 2;
	if (!legend_outside && c->kind != PLOT_BARS &&
	    plot_axis_fraction(&l->xt, l->xt.value[l->xt.n - 1]) > 0.999 &&
	    right - in_x + overhang > cv->width - cv->pad / 2) {
		right = cv->width - cv->pad / 2 - overhang + in_x;
		choose_x_ticks(r, left + in_x, right - in_x);
	}
	l->frame = (struct box){ left, bottom, right, top };
	l->x0 = left + in_x;
	l->x1 = right - in_x;
	l->y0 = bottom + in_bottom;
	l->y1 = top - cv->inset;
}

/* ---- where the legend goes ------------------------------------------------------- */

static bool in_box(const struct box *b, double x, double y)
{
	return x >= b->x0 && x <= b->x1 && y >= b->y0 && y <= b->y1;
}

/* Does the straight line from (x0,y0) to (x1,y1) pass through @b? Sampled every 2 pixels. */
static bool segment_hits(const struct box *b, double x0, double y0, double x1, double y1)
{
	double len = hypot(x1 - x0, y1 - y0);
	size_t steps = (size_t)(len / 2) + 1;

	for (size_t k = 0; k <= steps; k++) {
		double f = (double)k / (double)steps;

		if (in_box(b, x0 + f * (x1 - x0), y0 + f * (y1 - y0)))
			return true;
	}
	return false;
}

static bool series_hits(const struct render *r, size_t i, const struct box *b)
{
	const struct plot_point *pt = r->sorted[i];
	size_t n = r->c->series[i].npoints;
	const struct layout *l = &r->lay;

	for (size_t j = 0; j < n; j++) {
		double x = plot_px(l, pt[j].x);

		if (r->c->kind == PLOT_BARS) {
			double x0, x1, base, top;

			plot_bar_geometry(r, i, &pt[j], &x0, &x1, &base, &top);
			if (x1 >= b->x0 && x0 <= b->x1 && fmax(base, plot_py(l, pt[j].hi)) >= b->y0 &&
			    fmin(base, plot_py(l, pt[j].lo)) <= b->y1)
				return true;
			continue;
		}
		if (in_box(b, x, plot_py(l, pt[j].y)))
			return true;
		if (pt[j].range && segment_hits(b, x, plot_py(l, pt[j].lo), x, plot_py(l, pt[j].hi)))
			return true;
		if (j > 0 && segment_hits(b, plot_px(l, pt[j - 1].x), plot_py(l, pt[j - 1].y), x,
					  plot_py(l, pt[j].y)))
			return true;
	}
	return false;
}

static bool box_hits_data(const struct render *r, const struct box *b)
{
	for (size_t i = 0; i < r->c->nseries; i++)
		if (series_hits(r, i, b))
			return true;
	return false;
}

/* Try the corners of the plot area; false when every corner covers data. */
static bool place_legend_inside(struct render *r)
{
	struct layout *l = &r->lay;
	const struct box *f = &l->frame;
	struct legend *lg = &l->legend;
	double w = lg->x1 - lg->x0, h = lg->y1 - lg->y0;
	double inset = 0.6 * r->cv.font;
	double margin = plot_marker_size(&r->cv) / 2 + 2; /* markers and line width spill over */
	const double corner[4][2] = {
		{ f->x1 - inset - w, f->y1 - inset - h }, /* top right */
		{ f->x0 + inset, f->y1 - inset - h },     /* top left */
		{ f->x1 - inset - w, f->y0 + inset },     /* bottom right */
		{ f->x0 + inset, f->y0 + inset },         /* bottom left */
	};

	if (w + 2 * inset > f->x1 - f->x0 || h + 2 * inset > f->y1 - f->y0)
		return false;
	for (size_t k = 0; k < 4; k++) {
		struct box b = { corner[k][0] - margin, corner[k][1] - margin,
				 corner[k][0] + w + margin, corner[k][1] + h + margin };

		if (box_hits_data(r, &b))
			continue;
		lg->x0 = corner[k][0];
		lg->y0 = corner[k][1];
		lg->x1 = lg->x0 + w;
		lg->y1 = lg->y0 + h;
		return true;
	}
	return false;
}

static void place_legend_outside(struct render *r)
{
	struct layout *l = &r->lay;
	struct legend *lg = &l->legend;
	double w = lg->x1 - lg->x0, h = lg->y1 - lg->y0;

	lg->x0 = l->frame.x1 + r->cv.pad;
	lg->x1 = lg->x0 + w;
	lg->y1 = l->frame.y1;
	lg->y0 = lg->y1 - h;
}

void plot_plan(struct render *r)
{
	compute_layout(r, false);
	if (place_legend_inside(r))
		return;
	compute_layout(r, true);
	place_legend_outside(r);
}
