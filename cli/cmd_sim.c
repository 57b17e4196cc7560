/*
 * cmd_sim.c - `ksmkit sim`: run a workload on the simulator and print its
 * trace (a table, CSV or JSON). Admission first: a workload whose run would
 * not fit in this machine's memory is refused before anything is allocated
 * (cli_admit). A progress line goes to stderr when stderr is a terminal
 * (cli_progress).
 */
#include "cli.h"
#include "cli_sim.h"

#include <getopt.h>
#include <string.h>

enum format { FORMAT_TABLE, FORMAT_CSV, FORMAT_JSON };

static int write_trace(const struct trace *t, enum format format, const char *path)
{
	FILE *out = stdout;
	int rc;

	if (path && !(out = fopen(path, "w"))) {
		cli_error("sim: cannot write %s: %m", path);
		return CLI_FAILED;
	}
	if (format == FORMAT_CSV)
		rc = trace_write_csv(t, out);
	else if (format == FORMAT_JSON)
		rc = trace_write_json(t, out);
	else {
		cli_print_trace(t, "the simulator", out);
		rc = ferror(out) ? -1 : 0;
	}
	if (path && fclose(out) != 0)
		rc = -1;
	if (rc != 0) {
		cli_error("sim: cannot write the trace");
		return CLI_FAILED;
	}
	return CLI_OK;
}

int cmd_sim(int argc, char **argv)
{
	static const struct option options[] = {
		{ "csv", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "per-batch", no_argument, NULL, 'b' },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "costs", required_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	struct sim_run_options opt = { 0 };
	struct sim_costs costs;
	struct sim_config defaults;
	char cerr[512];
	struct cli_progress prog;
	bool quiet = false;
	enum format format = FORMAT_TABLE;
	const char *output = NULL;
	struct workload *wl;
	struct wl_error werr;
	struct trace *trace;
	char err[512];
	int c, rc;

	while ((c = getopt_long(argc, argv, "o:q", options, NULL)) != -1) {
		switch (c) {
		case 'c': format = FORMAT_CSV; break;
		case 'j': format = FORMAT_JSON; break;
		case 'b': opt.per_batch = true; break;
		case 'o': output = optarg; break;
		case 'q': quiet = true; break;
		case 'C':
			sim_config_default(&defaults);
			costs = defaults.costs;
			if (sim_costs_load(optarg, &costs, cerr, sizeof(cerr)) != 0) {
				cli_error("%s", cerr);
				return CLI_USAGE;
			}
			opt.costs = &costs;
			break;
		default: return CLI_USAGE;
		}
	}
	if (optind != argc - 1) {
		cli_error("sim: give exactly one workload file (see ksmkit sim --help)");
		return CLI_USAGE;
	}
	if (wl_parse_file(argv[optind], &wl, &werr) != 0) {
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
	rc = sim_run_workload(wl, &opt, &trace, err, sizeof(err));
	cli_progress_done(&prog);
	if (rc != 0)
		cli_error("sim: %s: %s", argv[optind], err);
	if (trace && (rc == 0 || format == FORMAT_TABLE)) {
		int wrc = write_trace(trace, format, output);

		if (rc == 0)
			rc = wrc;
	}
	trace_free(trace);
	wl_free(wl);
	return rc == 0 ? CLI_OK : CLI_FAILED;
}
