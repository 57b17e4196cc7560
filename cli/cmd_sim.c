/*
 * cmd_sim.c - `ksmkit sim`: run a workload on the simulator and print its
 * trace (a table, CSV or JSON). A progress line goes to stderr when stderr is
 * a terminal and the run takes more than two seconds.
 */
#include "cli.h"
#include "cli_args.h"
#include "cli_output.h"
#include "sim_driver.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

enum format { FORMAT_TABLE, FORMAT_CSV, FORMAT_JSON };

struct progress {
	const struct workload *wl;
	struct timespec start;
	bool enabled, shown;
};

static double elapsed_s(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

static void show_progress(void *arg, uint64_t scans, const struct sim *s)
{
	struct progress *p = arg;
	int64_t c[TRACE_COUNTER_COUNT];
	double t = elapsed_s(&p->start);

	if (!p->enabled || t < 2.0)
		return;
	sim_counters(s, c);
	if (p->wl->stop == WL_STOP_SCANS)
		fprintf(stderr, "\rksmkit sim: scan %llu/%llu, pages_sharing %lld, %.0f s ",
			(unsigned long long)scans, (unsigned long long)p->wl->stop_scans,
			(long long)c[TRACE_PAGES_SHARING], t);
	else
		fprintf(stderr, "\rksmkit sim: scan %llu, simulated %.1f/%.1f s, pages_sharing %lld ",
			(unsigned long long)scans, (double)sim_now_ns(s) / 1e9,
			(double)p->wl->stop_time_ns / 1e9, (long long)c[TRACE_PAGES_SHARING]);
	p->shown = true;
}

static int write_trace(const struct trace *t, enum format format, const char *path)
{
	FILE *out = cli_output_open("sim", path);

	if (!out)
		return CLI_FAILED;
	if (format == FORMAT_CSV)
		trace_write_csv(t, out);
	else if (format == FORMAT_JSON)
		trace_write_json(t, out);
	else
		cli_print_trace(t, "the simulator", out);
	return cli_output_close("sim", out, path);
}

static const struct cli_opt sim_options[] = {
	{ "csv", 0, false, 'c' },
	{ "json", 0, false, 'j' },
	{ "per-batch", 0, false, 'b' },
	{ "output", 'o', true, 'o' },
	{ "quiet", 'q', false, 'q' },
	{ "costs", 0, true, 'C' },
	{ NULL, 0, false, 0 },
};

static const struct cli_rule sim_rules[] = {
	{ CLI_AT_MOST_ONE, "csv json", NULL, 0, 0, NULL },
	{ 0, NULL, NULL, 0, 0, NULL },
};

static const struct cli_spec sim_spec = {
	"sim", NULL, sim_options, sim_rules, 1, 1, "exactly one workload file",
};

/* The command line as the table allows it, and -o not onto an input. */
static int parse_args(int argc, char **argv, struct cli_args *args)
{
	struct cli_file output = { "-o", NULL }, inputs[2] = { { "the workload", NULL },
							      { "the costs file", NULL } };

	if (cli_args_parse(&sim_spec, argc, argv, args) != 0)
		return CLI_USAGE;
	output.path = cli_args_value(args, 'o');
	inputs[0].path = args->operand[0];
	inputs[1].path = cli_args_value(args, 'C');
	return cli_check_outputs("sim", &output, 1, inputs, 2);
}

int cmd_sim(int argc, char **argv)
{
	struct sim_run_options opt = { 0 };
	struct sim_costs costs;
	struct sim_config defaults;
	char cerr[512];
	struct progress prog = { 0 };
	enum format format = FORMAT_TABLE;
	const char *output = NULL, *value;
	struct cli_args args;
	struct workload *wl;
	struct wl_error werr;
	struct trace *trace;
	char err[512];
	int c, rc;

	if (parse_args(argc, argv, &args) != 0)
		return CLI_USAGE;
	prog.enabled = isatty(STDERR_FILENO);
	while ((c = cli_args_next(&args, &value)) != -1) {
		switch (c) {
		case 'c': format = FORMAT_CSV; break;
		case 'j': format = FORMAT_JSON; break;
		case 'b': opt.per_batch = true; break;
		case 'o': output = value; break;
		case 'q': prog.enabled = false; break;
		case 'C':
			sim_config_default(&defaults);
			costs = defaults.costs;
			if (sim_costs_load(value, &costs, cerr, sizeof(cerr)) != 0) {
				cli_error("%s", cerr);
				return CLI_USAGE;
			}
			opt.costs = &costs;
			break;
		}
	}
	if (wl_parse_file(args.operand[0], &wl, &werr) != 0) {
		cli_error("%s", werr.text);
		return CLI_USAGE;
	}
	prog.wl = wl;
	clock_gettime(CLOCK_MONOTONIC, &prog.start);
	opt.progress = show_progress;
	opt.progress_arg = &prog;
	rc = sim_run_workload(wl, &opt, &trace, err, sizeof(err));
	if (prog.shown)
		fputc('\n', stderr);
	if (rc != 0)
		cli_error("sim: %s: %s", args.operand[0], err);
	if (trace && (rc == 0 || format == FORMAT_TABLE)) {
		int wrc = write_trace(trace, format, output);

		if (rc == 0)
			rc = wrc;
	}
	trace_free(trace);
	wl_free(wl);
	return rc == 0 ? CLI_OK : CLI_FAILED;
}
