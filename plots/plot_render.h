/*
 * plot_render.h - what the two halves of plot_write share, private to
 * plots/: plot_layout.c decides where everything goes (the data's extent,
 * axes with ticks that fit, the legend's place) and plot_render.c draws it
 * with GNU libplot and writes the file. Both measure in pixels, the user
 * space of the Plotter (y up).
 */
#ifndef KSMKIT_PLOT_RENDER_H
#define KSMKIT_PLOT_RENDER_H

#include "plot_internal.h"

#include <plot.h> /* GNU libplot: our own header is included as "plot.h" */

enum image_type { IMAGE_PNG, IMAGE_SVG };

/* The Plotter and the sizes everything is measured in (pixels). */
struct canvas {
	plPlotter *pl;
	enum image_type type;
	double width, height;
	double font;      /* axis labels and legend; tick labels and title scale from it */
	double tick_font;
	double title_font;
	double pad;       /* margin around the image and between elements */
	double tick_len;
	double inset;     /* between the frame and the data area */
	double line;      /* series line width */
};

struct box {
	double x0, y0, x1, y1;
};

struct legend {
	bool outside;          /* right of the plot area, not in a corner */
	double x0, y0, x1, y1; /* the box */
	double row;            /* height of one entry */
	double swatch;         /* length of the line sample */
};

struct layout {
	double x0, y0, x1, y1; /* the data area: the axes' ranges map onto it */
	struct box frame;      /* the drawn frame: data keeps off it by an inset */
	struct plot_ticks xt, yt;
	struct legend legend;
};

/* Everything one plot_write call works with. */
struct render {
	const struct plot_chart *c;
	struct canvas cv;
	struct plot_point **sorted; /* per series, its points by increasing x */
	double *cat;                /* bars: the distinct x values, increasing */
	size_t ncat;
	double xmin, xmax, ymin, ymax; /* the data's extent, error bars included */
	bool x_integer, y_integer;
	bool any_dashed;
	struct layout lay;
};

/* ---- plot_layout.c ------------------------------------------------------------ */

/* Select @cv's font (Helvetica for SVG, Hershey Sans for PNG) at @size pixels. */
void plot_set_font(const struct canvas *cv, double size, bool bold);

/* The width of @s in pixels, in that font. */
double plot_text_width(const struct canvas *cv, double size, bool bold, const char *s);

/*
 * Sort every series' points by x (a copy), collect the bar groups, measure
 * the data's extent. Returns 0, or -1 when out of memory; plot_release frees
 * what it took either way.
 */
int plot_prepare(struct render *r, char *err, size_t errlen);
void plot_release(struct render *r);

/* Lay out @r (its canvas sized, its Plotter open): frame, ticks, legend. */
void plot_plan(struct render *r);

/* Pixel coordinates of data value @x (@y) on the laid-out axes. */
double plot_px(const struct layout *l, double x);
double plot_py(const struct layout *l, double y);

/* Bar of series @s at point @p: [*x0, *x1] in pixels, its base and top. */
void plot_bar_geometry(const struct render *r, size_t s, const struct plot_point *p,
		       double *x0, double *x1, double *base, double *top);

/* Markers only where they stay apart: 12 pixels per point on average. */
bool plot_markers_fit(const struct render *r, size_t npoints);

/* The size of point markers. */
double plot_marker_size(const struct canvas *cv);

#endif
