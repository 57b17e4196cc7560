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
#include "trace.h"

#include <errno.h>
#include <getopt.h>
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

/* getopt's answer for an option it does not know or one without its value. */
static int bad_option(const char *kind, int opt, int argc, char **argv)
{
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "?";

	if (opt == ':')
		cli_error("plot %s: option %s needs a value", kind, arg);
	else
		cli_error("plot %s: bad option '%s' (see ksmkit plot --help)", kind, arg);
	return CLI_USAGE;
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

static int plot_counters(int argc, char **argv)
{
	static const struct option options[] = {
		{ "counters", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, 't' },
		{ "size", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct image_options img = { .width = DEFAULT_WIDTH, .height = DEFAULT_HEIGHT };
	int counter[TRACE_COUNTER_COUNT];
	size_t ncounters = sizeof(default_counters) / sizeof(default_counters[0]);
	struct trace *t[MAX_TRACES] = { NULL, NULL };
	struct plot_chart *c = NULL;
	size_t ntraces;
	int opt, rc = CLI_USAGE;

	memcpy(counter, default_counters, sizeof(default_counters));
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":c:o:", options, NULL)) != -1) {
		switch (opt) {
		case 'c':
			if (parse_counters(optarg, counter, &ncounters) < 0)
				return CLI_USAGE;
			break;
		case 'o': img.output = optarg; break;
		case 't': img.title = optarg; break;
		case 's':
			if (parse_size(optarg, &img.width, &img.height) < 0)
				return CLI_USAGE;
			break;
		default: return bad_option("counters", opt, argc, argv);
		}
	}
	ntraces = (size_t)(argc - optind);
	if (ntraces < 1 || ntraces > MAX_TRACES) {
		cli_error("plot counters: give one or two trace files (see ksmkit plot --help)");
		return CLI_USAGE;
	}
	if (check_output("counters", &img) < 0)
		return CLI_USAGE;
	for (size_t i = 0; i < ntraces; i++)
		if (!(t[i] = read_trace(argv[optind + (int)i])))
			goto out;
	c = plot_new(PLOT_LINES);
	if (!c) {
		cli_error("plot counters: out of memory");
		rc = CLI_FAILED;
		goto out;
	}
	rc = build_counters_chart(c, t, argv + optind, ntraces, counter, ncounters, img.title);
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

static int plot_sweep(int argc, char **argv)
{
	static const struct option options[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, 't' },
		{ "xlabel", required_argument, NULL, 'x' },
		{ "ylabel", required_argument, NULL, 'y' },
		{ "logx", no_argument, NULL, 'X' },
		{ "logy", no_argument, NULL, 'Y' },
		{ "bars", no_argument, NULL, 'b' },
		{ "size", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct image_options img = { .width = DEFAULT_WIDTH, .height = DEFAULT_HEIGHT };
	struct sweep_options so = { .xlabel = "x", .ylabel = "median, error bars min to max" };
	struct plot_chart *c = NULL;
	char err[512];
	int opt, rc = CLI_USAGE;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:", options, NULL)) != -1) {
		switch (opt) {
		case 'o': img.output = optarg; break;
		case 't': img.title = optarg; break;
		case 'x': so.xlabel = optarg; break;
		case 'y': so.ylabel = optarg; break;
		case 'X': so.logx = true; break;
		case 'Y': so.logy = true; break;
		case 'b': so.bars = true; break;
		case 's':
			if (parse_size(optarg, &img.width, &img.height) < 0)
				return CLI_USAGE;
			break;
		default: return bad_option("sweep", opt, argc, argv);
		}
	}
	if (optind != argc - 1) {
		cli_error("plot sweep: give exactly one results file (see ksmkit plot --help)");
		return CLI_USAGE;
	}
	if (check_output("sweep", &img) < 0)
		return CLI_USAGE;
	if (so.bars && so.logx) {
		cli_error("plot sweep: --bars and --logx do not go together (bars are groups, "
			  "evenly spaced)");
		return CLI_USAGE;
	}
	c = plot_new(so.bars ? PLOT_BARS : PLOT_LINES);
	if (!c) {
		cli_error("plot sweep: out of memory");
		return CLI_FAILED;
	}
	if (read_sweep(argv[optind], c) < 0)
		goto out;
	if (plot_set_labels(c, img.title ? img.title : base_name(argv[optind]), so.xlabel,
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
	cli_error("plot: unknown chart '%s': expected counters or sweep", argv[1]);
	return CLI_USAGE;
}

#endif
