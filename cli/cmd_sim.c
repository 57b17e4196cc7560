/*
 * cmd_sim.c - `ksmkit sim`: run a workload on the simulator and print its
 * trace (a table, CSV or JSON). A progress line goes to stderr when stderr is
 * a terminal and the run takes more than two seconds.
 */
#include "cli.h"
#include "sim_driver.h"

#include <getopt.h>
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
	struct progress prog = { 0 };
	enum format format = FORMAT_TABLE;
	const char *output = NULL;
	struct workload *wl;
	struct wl_error werr;
	struct trace *trace;
	char err[512];
	int c, rc;

	prog.enabled = isatty(STDERR_FILENO);
	while ((c = getopt_long(argc, argv, "o:q", options, NULL)) != -1) {
		switch (c) {
		case 'c': format = FORMAT_CSV; break;
		case 'j': format = FORMAT_JSON; break;
		case 'b': opt.per_batch = true; break;
		case 'o': output = optarg; break;
		case 'q': prog.enabled = false; break;
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
	prog.wl = wl;
	clock_gettime(CLOCK_MONOTONIC, &prog.start);
	opt.progress = show_progress;
	opt.progress_arg = &prog;
	rc = sim_run_workload(wl, &opt, &trace, err, sizeof(err));
	if (prog.shown)
		fputc('\n', stderr);
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
