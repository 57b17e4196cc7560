/*
 * cmd_plot.c - `ksmkit plot`: charts as PNG or SVG, drawn by plots/ with GNU
 * libplot. `plot counters` draws KSM counters per full scan of one trace, or
 * of two overlaid (the simulator solid, the kernel dashed, say); `plot sweep`
 * draws the sweep results the benchmarks write (series,x,min,median,max) as
 * lines with error bars or as grouped bars. This file owns the options and
 * the naming of series; plots/ owns the drawing. Built without libplot, every
 * use answers "not built" with exit status 77.
 */
#include "config.h"
#include "cli.h"

#ifndef HAVE_PLOT

int cmd_plot(int argc, char **argv)
{
	cli_error("plot: not built (configure found no GNU libplot)");
	return CLI_SKIPPED;
}

#else

#include "../plots/plot.h"
#include "cli_args.h"
#include "cli_output.h"
#include "trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEFAULT_WIDTH 800
#define DEFAULT_HEIGHT 500
#define MAX_TRACES 2

/* What both kinds of chart take. */
struct image_options {
	const char *output;
	const char *title;
	int width, height;
};

static const int default_counters[] = { TRACE_PAGES_SHARED, TRACE_PAGES_SHARING,
					TRACE_PAGES_UNSHARED, TRACE_PAGES_VOLATILE };

static int parse_size(const char *text, int *width, int *height)
{
	char x, end;

	if (sscanf(text, "%d%c%d%c", width, &x, height, &end) != 3 || x != 'x' ||
	    *width < PLOT_MIN_PIXELS || *width > PLOT_MAX_PIXELS || *height < PLOT_MIN_PIXELS ||
	    *height > PLOT_MAX_PIXELS) {
		cli_error("plot: --size %s: expected WIDTHxHEIGHT, each %d to %d pixels", text,
			  PLOT_MIN_PIXELS, PLOT_MAX_PIXELS);
		return -1;
	}
	return 0;
}

static int check_output(const char *kind, const struct image_options *img)
{
	const char *dot;

	if (!img->output) {
		cli_error("plot %s: -o OUT.png or -o OUT.svg is required", kind);
		return -1;
	}
	dot = strrchr(img->output, '.');
	if (!dot || (strcasecmp(dot, ".png") != 0 && strcasecmp(dot, ".svg") != 0)) {
		cli_error("plot %s: %s: the output name must end in .png or .svg", kind,
			  img->output);
		return -1;
	}
	return 0;
}

/* Check @c, then draw it: exit status 2 for a chart that cannot be drawn, 1 for a write error. */
static int draw_chart(const char *kind, const struct plot_chart *c,
		      const struct image_options *img)
{
	char err[512];

	if (plot_check(c, err, sizeof(err)) < 0) {
		cli_error("plot %s: %s", kind, err);
		return CLI_USAGE;
	}
	if (plot_write(c, img->output, img->width, img->height, err, sizeof(err)) < 0) {
		cli_error("plot %s: %s", kind, err);
		return CLI_FAILED;
	}
	return CLI_OK;
}

/* ---- plot counters -------------------------------------------------------------- */

/* Parse "a,b,c" into counter indexes; -1 (reported) on an unknown name. */
static int parse_counters(const char *list, int *counter, size_t *n)
{
	char *copy = strdup(list), *save = NULL;
	int rc = 0;

	*n = 0;
	if (!copy) {
		cli_error("plot counters: out of memory");
		return -1;
	}
	for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		int c = trace_counter_lookup(name);

		if (c < 0) {
			cli_error("plot counters: unknown counter '%s' (the names are those of "
				  "/sys/kernel/mm/ksm: pages_shared, pages_sharing, ...)", name);
			rc = -1;
			break;
		}
		if (*n == TRACE_COUNTER_COUNT) {
			cli_error("plot counters: too many counters in -c %s", list);
			rc = -1;
			break;
		}
		counter[(*n)++] = c;
	}
	if (rc == 0 && *n == 0) {
		cli_error("plot counters: -c needs at least one counter name");
		rc = -1;
	}
	free(copy);
	return rc;
}

static struct trace *read_trace(const char *path)
{
	struct trace *t = NULL;
	char err[512];
	FILE *in = fopen(path, "r");

	if (!in) {
		cli_error("%s: %s", path, strerror(errno));
		return NULL;
	}
	if (trace_read_csv(in, path, &t, err, sizeof(err)) < 0) {
		cli_error("%s", err);
		t = NULL;
	}
	fclose(in);
	return t;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * Legend prefixes for two overlaid traces: their engines ("sim", "kernel"),
 * then the detector, then the file name, whichever first tells them apart.
 */
static void name_traces(struct trace *const *t, char *const *path, char label[][64])
{
	snprintf(label[0], sizeof(label[0]), "%s", t[0]->source);
	snprintf(label[1], sizeof(label[1]), "%s", t[1]->source);
	if (strcmp(label[0], label[1]) != 0)
		return;
	if (t[0]->detector && t[1]->detector && strcmp(t[0]->detector, t[1]->detector) != 0) {
		snprintf(label[0], sizeof(label[0]), "%s %s", t[0]->source, t[0]->detector);
		snprintf(label[1], sizeof(label[1]), "%s %s", t[1]->source, t[1]->detector);
		return;
	}
	snprintf(label[0], sizeof(label[0]), "%s", base_name(path[0]));
	snprintf(label[1], sizeof(label[1]), "%s", base_name(path[1]));
}

/* "pages" when every counter counts pages, "bytes" for general_profit alone. */
static const char *counters_ylabel(const int *counter, size_t n)
{
	bool pages = true;

	if (n == 1 && counter[0] == TRACE_GENERAL_PROFIT)
		return "bytes";
	for (size_t i = 0; i < n; i++)
		if (strncmp(trace_counter_name(counter[i]), "pages_", 6) != 0 &&
		    counter[i] != TRACE_KSM_ZERO_PAGES)
			pages = false;
	return pages ? "pages" : "value";
}

static int build_counters_chart(struct plot_chart *c, struct trace *const *t, char *const *path,
				size_t ntraces, const int *counter, size_t ncounters,
				const char *title)
{
	char label[MAX_TRACES][64];
	char default_title[PLOT_TEXT_MAX + 1];
	char err[512];

	if (ntraces == 2)
		name_traces(t, path, label);
	for (size_t i = 0; i < ntraces; i++) {
		if (plot_add_trace_counters(c, t[i], ntraces == 2 ? label[i] : NULL, counter,
					    ncounters, i == 0 ? PLOT_SOLID : PLOT_DASHED, err,
					    sizeof(err)) < 0) {
			cli_error("plot counters: %s: %s", path[i], err);
			return CLI_USAGE;
		}
	}
	snprintf(default_title, sizeof(default_title), "KSM counters per full scan%s%.120s",
		 t[0]->workload && *t[0]->workload ? ": " : "",
		 t[0]->workload ? base_name(t[0]->workload) : "");
	if (plot_set_labels(c, title ? title : default_title, "full scans",
			    counters_ylabel(counter, ncounters), err, sizeof(err)) < 0) {
		cli_error("plot counters: %s", err);
		return CLI_USAGE;
	}
	return CLI_OK;
}

static const struct cli_opt counters_options[] = {
	{ "counters", 'c', true, 'c' },
	{ "output", 'o', true, 'o' },
	{ "title", 0, true, 't' },
	{ "size", 0, true, 's' },
	{ NULL, 0, false, 0 },
};

static const struct cli_spec counters_spec = {
	"plot counters", "plot", counters_options, NULL, 1, MAX_TRACES, "one or two trace files",
};

/* The image is none of the inputs (-o x.png may be a link to a trace). */
static int check_image(const char *kind, const struct image_options *img,
		       const struct cli_args *args)
{
	const struct cli_file output = { "-o", img->output };
	struct cli_file inputs[MAX_TRACES];

	for (int i = 0; i < args->noperands && i < MAX_TRACES; i++)
		inputs[i] = (struct cli_file){ "the input", args->operand[i] };
	return cli_check_outputs(kind, &output, 1, inputs,
				 (size_t)(args->noperands < MAX_TRACES ? args->noperands : MAX_TRACES));
}

static int plot_counters(int argc, char **argv)
{
	struct image_options img = { .width = DEFAULT_WIDTH, .height = DEFAULT_HEIGHT };
	int counter[TRACE_COUNTER_COUNT];
	size_t ncounters = sizeof(default_counters) / sizeof(default_counters[0]);
	struct trace *t[MAX_TRACES] = { NULL, NULL };
	struct plot_chart *c = NULL;
	struct cli_args args;
	const char *value;
	size_t ntraces;
	int opt, rc = CLI_USAGE;

	memcpy(counter, default_counters, sizeof(default_counters));
	if (cli_args_parse(&counters_spec, argc, argv, &args) != 0)
		return CLI_USAGE;
	while ((opt = cli_args_next(&args, &value)) != -1) {
		switch (opt) {
		case 'c':
			if (parse_counters(value, counter, &ncounters) < 0)
				return CLI_USAGE;
			break;
		case 'o': img.output = value; break;
		case 't': img.title = value; break;
		case 's':
			if (parse_size(value, &img.width, &img.height) < 0)
				return CLI_USAGE;
			break;
		}
	}
	ntraces = (size_t)args.noperands;
	if (check_output("counters", &img) < 0 || check_image("plot counters", &img, &args) != 0)
		return CLI_USAGE;
	for (size_t i = 0; i < ntraces; i++)
		if (!(t[i] = read_trace(args.operand[i])))
			goto out;
	c = plot_new(PLOT_LINES);
	if (!c) {
		cli_error("plot counters: out of memory");
		rc = CLI_FAILED;
		goto out;
	}
	rc = build_counters_chart(c, t, args.operand, ntraces, counter, ncounters, img.title);
	if (rc == CLI_OK)
		rc = draw_chart("counters", c, &img);
out:
	plot_free(c);
	for (size_t i = 0; i < MAX_TRACES; i++)
		trace_free(t[i]);
	return rc;
}

/* ---- plot sweep --------------------------------------------------------------------- */

struct sweep_options {
	const char *xlabel, *ylabel;
	bool logx, logy, bars;
};

static int read_sweep(const char *path, struct plot_chart *c)
{
	char err[512];
	FILE *in = fopen(path, "r");
	int rc;

	if (!in) {
		cli_error("%s: %s", path, strerror(errno));
		return -1;
	}
	rc = plot_read_sweep_csv(in, path, c, err, sizeof(err));
	fclose(in);
	if (rc < 0)
		cli_error("%s", err);
	return rc;
}

static const struct cli_opt sweep_options[] = {
	{ "output", 'o', true, 'o' },
	{ "title", 0, true, 't' },
	{ "xlabel", 0, true, 'x' },
	{ "ylabel", 0, true, 'y' },
	{ "logx", 0, false, 'X' },
	{ "logy", 0, false, 'Y' },
	{ "bars", 0, false, 'b' },
	{ "size", 0, true, 's' },
	{ NULL, 0, false, 0 },
};

static const struct cli_rule sweep_rules[] = {
	{ CLI_AT_MOST_ONE, "bars logx", "bars are groups, evenly spaced", 0, 0, NULL },
	{ 0, NULL, NULL, 0, 0, NULL },
};

static const struct cli_spec sweep_spec = {
	"plot sweep", "plot", sweep_options, sweep_rules, 1, 1, "exactly one results file",
};

static int plot_sweep(int argc, char **argv)
{
	struct image_options img = { .width = DEFAULT_WIDTH, .height = DEFAULT_HEIGHT };
	struct sweep_options so = { .xlabel = "x", .ylabel = "median, error bars min to max" };
	struct plot_chart *c = NULL;
	struct cli_args args;
	const char *value;
	char err[512];
	int opt, rc = CLI_USAGE;

	if (cli_args_parse(&sweep_spec, argc, argv, &args) != 0)
		return CLI_USAGE;
	while ((opt = cli_args_next(&args, &value)) != -1) {
		switch (opt) {
		case 'o': img.output = value; break;
		case 't': img.title = value; break;
		case 'x': so.xlabel = value; break;
		case 'y': so.ylabel = value; break;
		case 'X': so.logx = true; break;
		case 'Y': so.logy = true; break;
		case 'b': so.bars = true; break;
		case 's':
			if (parse_size(value, &img.width, &img.height) < 0)
				return CLI_USAGE;
			break;
		}
	}
	if (check_output("sweep", &img) < 0 || check_image("plot sweep", &img, &args) != 0)
		return CLI_USAGE;
	c = plot_new(so.bars ? PLOT_BARS : PLOT_LINES);
	if (!c) {
		cli_error("plot sweep: out of memory");
		return CLI_FAILED;
	}
	if (read_sweep(args.operand[0], c) < 0)
		goto out;
	if (plot_set_labels(c, img.title ? img.title : base_name(args.operand[0]), so.xlabel,
			    so.ylabel, err, sizeof(err)) < 0) {
		cli_error("plot sweep: %s", err);
		goto out;
	}
	plot_set_scale(c, PLOT_X, so.logx ? PLOT_LOG10 : PLOT_LINEAR);
	plot_set_scale(c, PLOT_Y, so.logy ? PLOT_LOG10 : PLOT_LINEAR);
	rc = draw_chart("sweep", c, &img);
out:
	plot_free(c);
	return rc;
}

int cmd_plot(int argc, char **argv)
{
	if (argc < 2) {
		cli_error("plot: say what to draw: counters or sweep (see ksmkit plot --help)");
		return CLI_USAGE;
	}
	if (strcmp(argv[1], "counters") == 0)
		return plot_counters(argc - 1, argv + 1);
	if (strcmp(argv[1], "sweep") == 0)
		return plot_sweep(argc - 1, argv + 1);
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		cli_error("plot: --help takes no other arguments (see ksmkit plot --help)");
		return CLI_USAGE;
	}
	cli_error("plot: unknown chart '%s': expected counters or sweep", argv[1]);
	return CLI_USAGE;
}

#endif
