/*
 * cmd_sim.c - `ksmkit sim`: run a workload on the simulator and print its
 * trace (a table, CSV or JSON). Admission first: a workload whose run would
 * not fit in this machine's memory is refused before anything is allocated
 * (cli_admit). A progress line goes to stderr when stderr is a terminal
 * (cli_progress). The workload's [expect] sections are checked on the trace
 * (and, when one counts duplicates, the page partition at every scan row).
 */
#include "cli.h"
#include "cli_args.h"
#include "cli_output.h"
#include "cli_sim.h"
#include "expect.h"

#include <stdlib.h>
#include <string.h>

enum format { FORMAT_TABLE, FORMAT_CSV, FORMAT_JSON };

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
	{ "walk-every-insert", 0, false, 'W' },
	{ "eager-writes", 0, false, 'E' },
	{ "skip-page-by-page", 0, false, 'K' },
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
	struct cli_progress prog;
	bool quiet = false;
	enum format format = FORMAT_TABLE;
	const char *output = NULL, *value;
	struct cli_args args;
	struct workload *wl;
	struct wl_error werr;
	struct trace *trace;
	struct sim_capture capture = { 0 };
	char err[512];
	int c, rc;

	if (parse_args(argc, argv, &args) != 0)
		return CLI_USAGE;
	while ((c = cli_args_next(&args, &value)) != -1) {
		switch (c) {
		case 'c': format = FORMAT_CSV; break;
		case 'j': format = FORMAT_JSON; break;
		case 'b': opt.per_batch = true; break;
		case 'o': output = value; break;
		case 'q': quiet = true; break;
		case 'W': opt.walk_every_insert = true; break;
		case 'E': opt.eager_writes = true; break;
		case 'K': opt.skip_page_by_page = true; break;
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
	if (cli_admit(wl, &(struct sim_admit_options){ .per_batch = opt.per_batch,
						       .costs = opt.costs }, err, sizeof(err))) {
		cli_error("%s", err);
		wl_free(wl);
		return CLI_USAGE;
	}
	cli_progress_init(&prog, "sim", quiet);
	opt.progress = cli_progress_hook;
	opt.progress_arg = &prog;
	opt.progress_steps = CLI_PROGRESS_STEPS;
	if (expect_needs_pages(wl)) {
		capture.wl = wl;
		opt.scan_hook = sim_capture_pages;
		opt.hook_arg = &capture;
	}
	rc = sim_run_workload(wl, &opt, &trace, err, sizeof(err));
	cli_progress_done(&prog);
	if (rc != 0)
		cli_error("sim: %s: %s", args.operand[0], err);
	if (trace && (rc == 0 || format == FORMAT_TABLE)) {
		int wrc = write_trace(trace, format, output);

		if (rc == 0)
			rc = wrc;
	}
	if (rc == 0 && capture.oom) {
		cli_error("sim: %s: out of memory capturing the pages", args.operand[0]);
		rc = CLI_FAILED;
	}
	if (rc == 0)
		rc = cli_check_expectations(wl, trace, capture.page, capture.n, "sim", quiet);
	free(capture.page);
	trace_free(trace);
	wl_free(wl);
	return rc == 0 ? CLI_OK : CLI_FAILED;
}
