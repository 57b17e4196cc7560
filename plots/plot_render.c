/*
 * plot_render.c - drawing a chart with GNU libplot and writing the image.
 *
 * One call of plot_write owns one libplot Plotter from creation to
 * deletion: its user space is the image in pixels (y up), every element is
 * drawn between pl_savestate_r and pl_restorestate_r, and the Plotter writes
 * into a memory stream, so the output file is created only once the image is
 * complete. libplot's own warnings go to a second memory stream and are
 * quoted in the error message instead of being printed.
 *
 * Where things go is plot_layout.c's business. For SVG the root element's
 * size is rewritten from inches to pixels (libplot only knows page sizes in
 * inches) and its <title> becomes the chart's title. For PNG libplot's
 * "Creation Time" text chunk is dropped, so that an image is a function of
 * its chart alone: the same results give the same bytes whenever and
 * wherever they are drawn (a sweep collected from parallel jobs, a
 * regenerated bench/results).
 */
#include "plot_render.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct rgb {
	unsigned char r, g, b;
};

/* Tableau's ten: distinguishable on white, in print and for most color-blind readers. */
static const struct rgb palette[PLOT_COLORS] = {
	{ 0x1f, 0x77, 0xb4 }, { 0xff, 0x7f, 0x0e }, { 0x2c, 0xa0, 0x2c }, { 0xd6, 0x27, 0x28 },
	{ 0x94, 0x67, 0xbd }, { 0x8c, 0x56, 0x4b }, { 0xe3, 0x77, 0xc2 }, { 0x7f, 0x7f, 0x7f },
	{ 0xbc, 0xbd, 0x22 }, { 0x17, 0xbe, 0xcf },
};

/*
 * libplot marker types, filled for solid series and hollow for dashed ones:
 * circle, square, diamond, octagon, fancy square, fancy diamond. The SVG
 * driver writes each as <circle>, <rect>, <polygon> or <line>, never as a
 * <polyline>, so the polylines of an SVG are exactly the series' lines.
 */
static const int filled_marker[] = { 16, 17, 19, 31, 21, 22 };
static const int hollow_marker[] = { 4, 6, 8, 30, 14, 15 };
#define MARKER_SHAPES (sizeof(filled_marker) / sizeof(filled_marker[0]))

static const struct rgb ink = { 0x26, 0x26, 0x26 };       /* text, frame, ticks */
static const struct rgb grid_gray = { 0xe4, 0xe4, 0xe4 }; /* grid lines */
static const struct rgb legend_edge = { 0xb0, 0xb0, 0xb0 };
static const struct rgb white = { 0xff, 0xff, 0xff };

#if defined(__has_feature) /* clang */
#if __has_feature(address_sanitizer) && !defined(__SANITIZE_ADDRESS__)
#define __SANITIZE_ADDRESS__ 1
#endif
#endif
#ifdef __SANITIZE_ADDRESS__
/*
 * libplot 4.4 leaks on its own, whatever its caller does: its PNG writer
 * never frees libpng's info struct, and each Plotter keeps copies of its
 * parameters after pl_deletepl_r. Without this, LeakSanitizer would fail
 * every sanitizer build's `make check` (and `ksmkit plot`) over memory that
 * is not ours. The hook is LeakSanitizer's; it must exist once per program.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libplot.so\nleak:libpng16.so\n";
}

/* And no table of the suppressions used on stderr at exit: a command that
 * succeeds says nothing there (cli.test checks it). */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
	return "print_suppressions=0";
}
#endif

/* ---- colors, pens, text ------------------------------------------------------ */

static struct rgb darker(struct rgb c, double f)
{
	return (struct rgb){ (unsigned char)(c.r * f), (unsigned char)(c.g * f),
			     (unsigned char)(c.b * f) };
}

static struct rgb series_rgb(const struct plot_series *s)
{
	struct rgb c = palette[s->color];

	/* a dashed series is a shade darker, so on top of its solid twin it shows */
	return s->dash == PLOT_DASHED ? darker(c, 0.62) : c;
}

static void pen(plPlotter *pl, struct rgb c)
{
	pl_pencolor_r(pl, c.r * 257, c.g * 257, c.b * 257);
}

static void fill(plPlotter *pl, struct rgb c)
{
	pl_filltype_r(pl, 1);
	pl_fillcolor_r(pl, c.r * 257, c.g * 257, c.b * 257);
}

static void segment(plPlotter *pl, double x0, double y0, double x1, double y1)
{
	pl_fmove_r(pl, x0, y0);
	pl_fcont_r(pl, x1, y1);
	pl_endpath_r(pl); /* never joined with the next segment into one path */
}

struct text_style {
	double size;
	bool bold;
	double angle; /* degrees, counterclockwise */
	char hjust;   /* 'l', 'c', 'r' along the text */
	char vjust;   /* 'b', 'c', 't' across it */
};

static void text(const struct canvas *cv, double x, double y, const struct text_style *st,
		 const char *s)
{
	pl_savestate_r(cv->pl);
	plot_set_font(cv, st->size, st->bold);
	pen(cv->pl, ink);
	pl_ftextangle_r(cv->pl, st->angle);
	pl_fmove_r(cv->pl, x, y);
	pl_alabel_r(cv->pl, st->hjust, st->vjust, s);
	pl_restorestate_r(cv->pl);
}

/* ---- drawing ----------------------------------------------------------------------- */

static void draw_grid(const struct render *r)
{
	plPlotter *pl = r->cv.pl;
	const struct layout *l = &r->lay;
	const struct box *f = &l->frame;

	pl_savestate_r(pl);
	pen(pl, grid_gray);
	pl_flinewidth_r(pl, 1);
	for (size_t i = 0; i < l->yt.n; i++)
		segment(pl, f->x0, plot_py(l, l->yt.value[i]), f->x1, plot_py(l, l->yt.value[i]));
	if (r->c->kind != PLOT_BARS)
		for (size_t i = 0; i < l->xt.n; i++)
			segment(pl, plot_px(l, l->xt.value[i]), f->y0, plot_px(l, l->xt.value[i]), f->y1);
	pl_restorestate_r(pl);
}

static void set_series_line(const struct render *r, const struct plot_series *s, double width)
{
	plPlotter *pl = r->cv.pl;

	pen(pl, series_rgb(s));
	pl_flinewidth_r(pl, width);
	pl_joinmod_r(pl, "round");
	pl_capmod_r(pl, "round");
	if (s->dash == PLOT_DASHED) {
		const double dashes[2] = { 1.6 * width + 4, 1.2 * width + 3 };

		pl_capmod_r(pl, "butt");
		pl_flinedash_r(pl, 2, dashes, 0);
	}
}

/* Solid lines are wider when dashed ones lie on top of them. */
static double series_width(const struct render *r, const struct plot_series *s)
{
	if (r->any_dashed && s->dash == PLOT_SOLID)
		return 2.2 * r->cv.line;
	return r->cv.line;
}

static void draw_error_bar(const struct render *r, double x, double lo, double hi, double cap)
{
	plPlotter *pl = r->cv.pl;

	if (hi - lo < 0.5)
		return; /* nothing to show: min, median and max coincide */
	segment(pl, x, lo, x, hi);
	segment(pl, x - cap / 2, lo, x + cap / 2, lo);
	segment(pl, x - cap / 2, hi, x + cap / 2, hi);
}

static int marker_type(const struct plot_series *s)
{
	size_t shape = (size_t)s->color % MARKER_SHAPES;

	return s->dash == PLOT_DASHED ? hollow_marker[shape] : filled_marker[shape];
}

static void draw_marker(const struct render *r, const struct plot_series *s, double x, double y)
{
	plPlotter *pl = r->cv.pl;

	pl_savestate_r(pl);
	pen(pl, series_rgb(s));
	fill(pl, series_rgb(s));
	pl_flinewidth_r(pl, fmax(1, 0.6 * r->cv.line));
	pl_fmarker_r(pl, x, y, marker_type(s), plot_marker_size(&r->cv));
	pl_restorestate_r(pl);
}

static void draw_line_series(const struct render *r, size_t i)
{
	const struct plot_series *s = &r->c->series[i];
	const struct plot_point *pt = r->sorted[i];
	const struct layout *l = &r->lay;
	plPlotter *pl = r->cv.pl;

	if (s->npoints > 1) {
		pl_savestate_r(pl);
		set_series_line(r, s, series_width(r, s));
		pl_fmove_r(pl, plot_px(l, pt[0].x), plot_py(l, pt[0].y));
		for (size_t j = 1; j < s->npoints; j++)
			pl_fcont_r(pl, plot_px(l, pt[j].x), plot_py(l, pt[j].y));
		pl_endpath_r(pl);
		pl_restorestate_r(pl);
	}
	pl_savestate_r(pl);
	pen(pl, series_rgb(s));
	pl_flinewidth_r(pl, fmax(1, 0.6 * r->cv.line));
	for (size_t j = 0; j < s->npoints; j++)
		if (pt[j].range)
			draw_error_bar(r, plot_px(l, pt[j].x), plot_py(l, pt[j].lo), plot_py(l, pt[j].hi),
				       0.6 * r->cv.font);
	pl_restorestate_r(pl);
	if (plot_markers_fit(r, s->npoints) || s->npoints == 1)
		for (size_t j = 0; j < s->npoints; j++)
			draw_marker(r, s, plot_px(l, pt[j].x), plot_py(l, pt[j].y));
}

static void draw_bar_series(const struct render *r, size_t i)
{
	const struct plot_series *s = &r->c->series[i];
	const struct plot_point *pt = r->sorted[i];
	const struct layout *l = &r->lay;
	plPlotter *pl = r->cv.pl;

	for (size_t j = 0; j < s->npoints; j++) {
		double x0, x1, base, top;

		plot_bar_geometry(r, i, &pt[j], &x0, &x1, &base, &top);
		pl_savestate_r(pl);
		fill(pl, palette[s->color]);
		pen(pl, darker(palette[s->color], 0.7));
		pl_flinewidth_r(pl, 1);
		pl_fbox_r(pl, x0, fmin(base, top), x1, fmax(base, top));
		pl_restorestate_r(pl);
		if (!pt[j].range)
			continue;
		pl_savestate_r(pl);
		pen(pl, ink);
		pl_flinewidth_r(pl, fmax(1, 0.6 * r->cv.line));
		draw_error_bar(r, (x0 + x1) / 2, plot_py(l, pt[j].lo), plot_py(l, pt[j].hi),
			       fmin(0.5 * (x1 - x0), 0.6 * r->cv.font));
		pl_restorestate_r(pl);
	}
}

static void draw_series(const struct render *r)
{
	/* solid series first, dashed ones on top of them */
	for (int pass = 0; pass < 2; pass++) {
		enum plot_dash dash = pass == 0 ? PLOT_SOLID : PLOT_DASHED;

		for (size_t i = 0; i < r->c->nseries; i++) {
			if (r->c->series[i].dash != dash)
				continue;
			if (r->c->kind == PLOT_BARS)
				draw_bar_series(r, i);
			else
				draw_line_series(r, i);
		}
	}
}

static void draw_frame_and_ticks(const struct render *r)
{
	const struct canvas *cv = &r->cv;
	const struct layout *l = &r->lay;
	const struct box *f = &l->frame;
	plPlotter *pl = cv->pl;
	const struct text_style xlab = { cv->tick_font, false, 0, 'c', 't' };
	const struct text_style ylab = { cv->tick_font, false, 0, 'r', 'c' };

	pl_savestate_r(pl);
	pen(pl, ink);
	pl_flinewidth_r(pl, 1);
	pl_filltype_r(pl, 0);
	pl_fbox_r(pl, f->x0, f->y0, f->x1, f->y1);
	for (size_t i = 0; i < l->yt.nminor; i++)
		segment(pl, f->x0, plot_py(l, l->yt.minor[i]), f->x0 - cv->tick_len / 2,
			plot_py(l, l->yt.minor[i]));
	for (size_t i = 0; i < l->xt.nminor; i++)
		segment(pl, plot_px(l, l->xt.minor[i]), f->y0, plot_px(l, l->xt.minor[i]),
			f->y0 - cv->tick_len / 2);
	for (size_t i = 0; i < l->yt.n; i++) {
		double y = plot_py(l, l->yt.value[i]);

		segment(pl, f->x0, y, f->x0 - cv->tick_len, y);
		text(cv, f->x0 - cv->tick_len - 0.4 * cv->tick_font, y, &ylab, l->yt.label[i]);
	}
	for (size_t i = 0; i < l->xt.n; i++) {
		double x = plot_px(l, l->xt.value[i]);

		segment(pl, x, f->y0, x, f->y0 - cv->tick_len);
		text(cv, x, f->y0 - cv->tick_len - 0.4 * cv->tick_font, &xlab, l->xt.label[i]);
	}
	pl_restorestate_r(pl);
}

static void draw_axis_labels(const struct render *r)
{
	const struct canvas *cv = &r->cv;
	const struct layout *l = &r->lay;
	const struct text_style xst = { cv->font, false, 0, 'c', 'b' };
	const struct text_style yst = { cv->font, false, 90, 'c', 't' };

	if (r->c->xlabel)
		text(cv, (l->frame.x0 + l->frame.x1) / 2, cv->pad, &xst, r->c->xlabel);
	if (r->c->ylabel)
		text(cv, cv->pad, (l->frame.y0 + l->frame.y1) / 2, &yst, r->c->ylabel);
}

/* Centered over the plot area, shifted (then shrunk) to stay inside the image. */
static void draw_title(const struct render *r)
{
	const struct canvas *cv = &r->cv;
	const struct layout *l = &r->lay;
	struct text_style st = { cv->title_font, true, 0, 'c', 't' };
	double room = cv->width - 2 * cv->pad;
	double w, x;

	if (!r->c->title)
		return;
	w = plot_text_width(cv, st.size, true, r->c->title);
	if (w > room) {
		st.size *= fmax(0.6, room / w);
		w = plot_text_width(cv, st.size, true, r->c->title);
	}
	x = (l->frame.x0 + l->frame.x1) / 2;
	x = fmin(x, cv->width - cv->pad - w / 2);
	x = fmax(x, cv->pad + w / 2);
	text(cv, x, cv->height - cv->pad, &st, r->c->title);
}

static void draw_legend_swatch(const struct render *r, const struct plot_series *s, double x,
			       double y)
{
	const struct legend *lg = &r->lay.legend;
	plPlotter *pl = r->cv.pl;

	pl_savestate_r(pl);
	if (r->c->kind == PLOT_BARS) {
		double h = 0.8 * r->cv.font;

		fill(pl, palette[s->color]);
		pen(pl, darker(palette[s->color], 0.7));
		pl_flinewidth_r(pl, 1);
		pl_fbox_r(pl, x, y - h / 2, x + lg->swatch, y + h / 2);
	} else {
		set_series_line(r, s, series_width(r, s));
		segment(pl, x, y, x + lg->swatch, y);
	}
	pl_restorestate_r(pl);
	if (r->c->kind != PLOT_BARS && (plot_markers_fit(r, s->npoints) || s->npoints == 1))
		draw_marker(r, s, x + lg->swatch / 2, y);
}

static void draw_legend(const struct render *r)
{
	const struct canvas *cv = &r->cv;
	const struct legend *lg = &r->lay.legend;
	const struct text_style st = { cv->font, false, 0, 'l', 'c' };
	plPlotter *pl = cv->pl;

	pl_savestate_r(pl);
	fill(pl, white);
	pen(pl, legend_edge);
	pl_flinewidth_r(pl, 1);
	pl_fbox_r(pl, lg->x0, lg->y0, lg->x1, lg->y1);
	pl_restorestate_r(pl);
	for (size_t i = 0; i < r->c->nseries; i++) {
		const struct plot_series *s = &r->c->series[i];
		double y = lg->y1 - 0.3 * cv->font - ((double)i + 0.5) * lg->row;
		double x = lg->x0 + 0.5 * cv->font;

		draw_legend_swatch(r, s, x, y);
		text(cv, x + lg->swatch + 0.4 * cv->font, y, &st, s->name);
	}
}

static void draw(const struct render *r)
{
	draw_grid(r);
	draw_series(r);
	draw_frame_and_ticks(r);
	draw_axis_labels(r);
	draw_title(r);
	draw_legend(r);
}

/* ---- the Plotter and the file ----------------------------------------------------- */

static int image_type_of(const char *path, enum image_type *type, char *err, size_t errlen)
{
	const char *dot = strrchr(path, '.');

	if (dot && strcasecmp(dot, ".png") == 0)
		*type = IMAGE_PNG;
	else if (dot && strcasecmp(dot, ".svg") == 0)
		*type = IMAGE_SVG;
	else
		return plot_fail(err, errlen, "%s: unknown image type (the name must end in .png or .svg)",
				 path);
	return 0;
}

/* Sizes in pixels, from the image's size: readable from 200 pixels to posters. */
static void size_canvas(struct canvas *cv, int width, int height)
{
	double base = fmin(width / 1.6, (double)height) / 36;

	cv->width = width;
	cv->height = height;
	cv->font = fmin(fmax(base, 10), 40);
	cv->tick_font = 0.9 * cv->font;
	cv->title_font = 1.25 * cv->font;
	cv->pad = 0.7 * cv->font;
	cv->tick_len = 0.4 * cv->font;
	cv->inset = 0.6 * cv->font;
	cv->line = fmax(1.5, cv->font / 7);
}

/* libplot's parameters for an image of @width x @height pixels. */
static plPlotterParams *new_params(enum image_type type, int width, int height)
{
	plPlotterParams *params = pl_newplparams();
	char value[96];

	if (!params)
		return NULL;
	pl_setplparam(params, "BG_COLOR", (void *)"white");
	/* one polyline per series, however long (the default splits at 500 points) */
	pl_setplparam(params, "MAX_LINE_LENGTH", (void *)"100000000");
	if (type == IMAGE_PNG) {
		snprintf(value, sizeof(value), "%dx%d", width, height);
		pl_setplparam(params, "BITMAPSIZE", value);
	} else { /* CSS pixels: 96 per inch */
		snprintf(value, sizeof(value), "letter,xsize=%.6fin,ysize=%.6fin", width / 96.0,
			 height / 96.0);
		pl_setplparam(params, "PAGESIZE", value);
	}
	return params;
}

/* Copy of @src with the value of attribute @name (` width="`) in [tag, tag_end) set to @value. */
static char *replace_attribute(const char *src, size_t tag, size_t tag_end, const char *name,
			       const char *value)
{
	const char *at = strstr(src + tag, name);
	const char *end;
	size_t head, len = strlen(src);
	char *out;

	if (!at || (size_t)(at - src) >= tag_end)
		return NULL;
	head = (size_t)(at - src) + strlen(name);
	end = strchr(src + head, '"');
	if (!end)
		return NULL;
	out = malloc(len + strlen(value) + 1);
	if (!out)
		return NULL;
	memcpy(out, src, head);
	strcpy(out + head, value);
	strcat(out, end);
	return out;
}

/* @svg (malloc'ed, NUL-terminated) with a pixel size; unchanged if its shape is unexpected. */
static char *svg_in_pixels(char *svg, int width, int height)
{
	const char *root = strstr(svg, "<svg ");
	const char *root_end = root ? strchr(root, '>') : NULL;
	char w[16], h[16];
	char *with_w, *with_h;

	if (!root || !root_end)
		return svg;
	snprintf(w, sizeof(w), "%d", width);
	snprintf(h, sizeof(h), "%d", height);
	with_w = replace_attribute(svg, (size_t)(root - svg), (size_t)(root_end - svg), " width=\"", w);
	if (!with_w)
		return svg;
	root = strstr(with_w, "<svg ");
	root_end = strchr(root, '>');
	with_h = replace_attribute(with_w, (size_t)(root - with_w), (size_t)(root_end - with_w),
				   " height=\"", h);
	free(with_w);
	if (!with_h)
		return svg;
	free(svg);
	return with_h;
}

/* @svg with its <title> set to @title (XML-escaped), or unchanged. */
static char *svg_titled(char *svg, const char *title)
{
	static const char placeholder[] = "<title>SVG drawing</title>";
	char *at = strstr(svg, placeholder);
	size_t len = strlen(svg), head;
	char *out, *o;

	if (!at || !title)
		return svg;
	out = malloc(len + 6 * strlen(title) + sizeof("<title></title>"));
	if (!out)
		return svg;
	head = (size_t)(at - svg);
	memcpy(out, svg, head);
	o = out + head + sprintf(out + head, "<title>");
	for (const char *s = title; *s; s++) {
		if (*s == '&')
			o += sprintf(o, "&amp;");
		else if (*s == '<')
			o += sprintf(o, "&lt;");
		else if (*s == '>')
			o += sprintf(o, "&gt;");
		else
			*o++ = *s;
	}
	o += sprintf(o, "</title>");
	strcpy(o, at + strlen(placeholder));
	free(svg);
	return out;
}

/* A PNG chunk: 4 bytes of length (big-endian), 4 of type, the data, 4 of CRC. */
#define PNG_SIGNATURE_SIZE 8
#define PNG_CHUNK_OVERHEAD 12

static uint32_t png_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool png_chunk_is_creation_time(const unsigned char *chunk, uint32_t len)
{
	static const char keyword[] = "Creation Time"; /* NUL-terminated in the chunk too */

	return memcmp(chunk + 4, "tEXt", 4) == 0 && len >= sizeof(keyword) &&
	       memcmp(chunk + 8, keyword, sizeof(keyword)) == 0;
}

/*
 * Drop the "Creation Time" tEXt chunk from the PNG in @png (@*size bytes), in
 * place; *@size shrinks by its length. Each chunk carries its own CRC, so
 * the others stay valid. A malformed image is left as it is.
 */
static void png_without_creation_time(char *png, size_t *size)
{
	unsigned char *p = (unsigned char *)png;
	size_t at = PNG_SIGNATURE_SIZE;

	while (at + PNG_CHUNK_OVERHEAD <= *size) {
		uint32_t len = png_be32(p + at);
		size_t whole = (size_t)len + PNG_CHUNK_OVERHEAD;

		if (whole > *size - at)
			return;
		if (png_chunk_is_creation_time(p + at, len)) {
			memmove(p + at, p + at + whole, *size - at - whole);
			*size -= whole;
			continue;
		}
		at += whole;
	}
}

static int write_file(const char *path, const char *data, size_t len, char *err, size_t errlen)
{
	FILE *out = fopen(path, "wb");
	int saved;

	if (!out)
		return plot_fail(err, errlen, "cannot write %s: %s", path, strerror(errno));
	if (fwrite(data, 1, len, out) != len || fflush(out) != 0) {
		saved = errno;
		fclose(out);
		return plot_fail(err, errlen, "cannot write %s: %s", path, strerror(saved));
	}
	if (fclose(out) != 0)
		return plot_fail(err, errlen, "cannot write %s: %s", path, strerror(errno));
	return 0;
}

/* libplot's last complaint, one line, for an error message. */
static const char *libplot_said(FILE *errs, char **text)
{
	char *nl;

	fflush(errs);
	if (!*text || !**text)
		return "no reason given";
	while ((nl = strchr(*text, '\n')) && nl[1] == '\0')
		*nl = '\0';
	return *text;
}

/* Draw @r into memory: the image's bytes in *@image (malloc'ed). */
static int render_image(struct render *r, int width, int height, char **image, size_t *size,
			char *err, size_t errlen)
{
	static const char *const type_name[] = { "png", "svg" };
	char *errtext = NULL;
	size_t errsize = 0;
	FILE *errs = NULL, *out = NULL;
	plPlotterParams *params = NULL;
	int rc = -1;

	*image = NULL;
	errs = open_memstream(&errtext, &errsize);
	out = open_memstream(image, size);
	params = new_params(r->cv.type, width, height);
	if (!errs || !out || !params) {
		plot_fail(err, errlen, "out of memory");
		goto out;
	}
	r->cv.pl = pl_newpl_r(type_name[r->cv.type], NULL, out, errs, params);
	if (!r->cv.pl) {
		plot_fail(err, errlen, "libplot cannot make a %s plotter: %s", type_name[r->cv.type],
			  libplot_said(errs, &errtext));
		goto out;
	}
	if (pl_openpl_r(r->cv.pl) < 0) {
		plot_fail(err, errlen, "libplot cannot open a %s plotter: %s", type_name[r->cv.type],
			  libplot_said(errs, &errtext));
		goto delete_plotter;
	}
	pl_fspace_r(r->cv.pl, 0, 0, width, height);
	pl_erase_r(r->cv.pl);
	plot_plan(r);
	draw(r);
	if (pl_closepl_r(r->cv.pl) < 0) {
		plot_fail(err, errlen, "libplot cannot finish the %s image: %s", type_name[r->cv.type],
			  libplot_said(errs, &errtext));
		goto delete_plotter;
	}
	rc = 0;
delete_plotter:
	pl_deletepl_r(r->cv.pl);
	r->cv.pl = NULL;
out:
	if (params)
		pl_deleteplparams(params);
	if (out && fclose(out) != 0 && rc == 0)
		rc = plot_fail(err, errlen, "out of memory");
	if (errs)
		fclose(errs);
	free(errtext);
	if (rc < 0) {
		free(*image);
		*image = NULL;
	}
	return rc;
}

int plot_write(const struct plot_chart *c, const char *path, int width, int height, char *err,
	       size_t errlen)
{
	struct render r = { .c = c };
	char *image = NULL;
	size_t size = 0;
	int rc = -1;

	if (image_type_of(path, &r.cv.type, err, errlen) < 0)
		return -1;
	if (width < PLOT_MIN_PIXELS || width > PLOT_MAX_PIXELS || height < PLOT_MIN_PIXELS ||
	    height > PLOT_MAX_PIXELS)
		return plot_fail(err, errlen, "image size %dx%d: each side must be %d to %d pixels",
				 width, height, PLOT_MIN_PIXELS, PLOT_MAX_PIXELS);
	if (plot_check(c, err, errlen) < 0)
		return -1;
	if (plot_prepare(&r, err, errlen) < 0)
		goto out;
	size_canvas(&r.cv, width, height);
	if (render_image(&r, width, height, &image, &size, err, errlen) < 0)
		goto out;
	if (r.cv.type == IMAGE_SVG) {
		image = svg_titled(svg_in_pixels(image, width, height), c->title);
		size = strlen(image);
	} else {
		png_without_creation_time(image, &size);
	}
	rc = write_file(path, image, size, err, errlen);
out:
	free(image);
	plot_release(&r);
	return rc;
}
