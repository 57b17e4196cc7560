/*
 * cmd_calibrate.c - `ksmkit calibrate`: measure the simulator's cost model
 * on this machine (calib.h) and write it to a cost file that `ksmkit sim`,
 * `compare` and `demo` read with --costs.
 */
#include "cli.h"
#include "calib.h"
#include "cli_args.h"
#include "cli_output.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void print_note(const char *line, void *arg)
{
	if (!*(const bool *)arg)
		fprintf(stderr, "%s\n", line);
}

/* How the term's value came about, for the report's last column. */
static void describe_term(const struct calib_result *res, const struct sim_costs *def,
			  enum sim_cost_term t, char *buf, size_t len)
{
	const struct calib_term *ct = &res->term[t];
	const bool micro = sim_cost_of(&res->costs, t) != sim_cost_of(def, t);

	switch (sim_cost_term_info(t)->how) {
	case SIM_COST_FIT: /* a checksum and memcmp are microbenchmarked first */
		if (!res->kernel_measured)
			snprintf(buf, len, micro ? "microbenchmark (no fit)" : "no fit: default");
		else if (ct->fitted)
			snprintf(buf, len, "fit +- %.3f", ct->se);
		else
			snprintf(buf, len, "fit gave 0");
		return;
	case SIM_COST_MICRO:
		snprintf(buf, len, "microbenchmark");
		return;
	case SIM_COST_KEPT:
		snprintf(buf, len, "not measured (default)");
		return;
	}
}

/* Every term's default and calibrated cost, with how the latter was had. */
static void print_costs(const struct sim_costs *def, const struct calib_result *res, FILE *out)
{
	char how[64];

	fprintf(out, "%-16s %12s %12s  %s\n", "cost", "default", "measured", "how (+- standard error)");
	for (int t = 0; t < SIM_TERM_COUNT; t++) {
		describe_term(res, def, t, how, sizeof(how));
		fprintf(out, "%-16s %12.3f %12.3f  %s\n", sim_cost_term_info(t)->cost_key,
			sim_cost_of(def, t), sim_cost_of(&res->costs, t), how);
	}
	fprintf(out, "%-16s %12.3f %12.3f  %s\n", "sleep_adjust_ns", def->sleep_adjust_ns,
		res->costs.sleep_adjust_ns, res->kernel_measured ? "wall clock" : "default");
	fprintf(out, "%-16s %12llu %12llu\n", "hz", (unsigned long long)def->hz,
		(unsigned long long)res->costs.hz);
	fprintf(out, "%-16s %12.3f %12.3f  %s\n", "refill_tau_ms", def->refill_tau_ms,
		res->costs.refill_tau_ms,
		res->tau_ms[0] > 0 ? "the least residual of those tried (below)" : "default");
}

/* refill's time constants tried, and each one's fit's weighted residual. */
static void print_taus(const struct calib_result *res, FILE *out)
{
	if (!(res->tau_ms[0] > 0))
		return;
	fprintf(out, "# refill's time constant tried, ms: the fit's weighted residual\n");
	for (size_t k = 0; k < CALIB_TAU_COUNT; k++)
		fprintf(out, "# %6g %12.4f%s\n", res->tau_ms[k], res->tau_residual[k],
			res->tau_ms[k] == res->costs.refill_tau_ms ? "  (kept)" : "");
}

static void print_fit(const struct calib_result *res, FILE *out)
{
	fprintf(out, "# fit: ksmd CPU per full scan, measured vs modelled\n");
	for (size_t i = 0; i < res->nrows; i++) {
		const struct calib_fit_row *r = &res->row[i];

		fprintf(out, "%-12s scan %2llu %12.0f ns %12.0f ns %+6.1f%%\n", r->workload,
			(unsigned long long)r->scan, r->measured_ns, r->modelled_ns,
			r->measured_ns > 0 ? 100 * (r->modelled_ns - r->measured_ns) / r->measured_ns
					   : 0);
	}
	fprintf(out, "# largest error %.1f%%\n", res->max_error * 100);
}

/* Each calibration workload's scans summed: whether the model holds for it as a whole. */
static void print_hosts(const struct calib_result *res, FILE *out)
{
	fprintf(out, "# by calibration workload, its scans summed: modelled / measured\n");
	for (size_t w = 0; w < calib_workload_count(); w++) {
		double measured, modelled;
		size_t n = calib_host_totals(res, calib_workload_name(w), &measured, &modelled);

		if (n && measured > 0)
			fprintf(out, "# %-18s %4zu scans %6.3f\n", calib_workload_name(w), n,
				modelled / measured);
	}
}

void cli_calib_report(const struct calib_result *res, FILE *out)
{
	struct sim_config def;

	sim_config_default(&def);
	print_costs(&def.costs, res, out);
	if (res->kernel_measured) {
		print_fit(res, out);
		print_taus(res, out);
		print_hosts(res, out);
	}
}

int cli_calib_write_costs(const char *cmd, const struct calib_result *res, const char *comment,
			  const char *path)
{
	FILE *f = cli_output_open(cmd, path);

	if (f)
		sim_costs_write(&res->costs, comment, f);
	return cli_output_close(cmd, f, path) == CLI_OK ? 0 : -1;
}

static const struct cli_opt calibrate_options[] = {
	{ "output", 'o', true, 'o' },
	{ "pages", 0, true, 'p' },
	{ "runs", 0, true, 'r' },
	{ "repeats", 0, true, 'R' },
	{ "no-kernel", 0, false, 'n' },
	{ "force", 0, false, 'f' },
	{ "quiet", 'q', false, 'q' },
	{ NULL, 0, false, 0 },
};

static const struct cli_rule calibrate_rules[] = {
	{ CLI_EXCLUDES, "no-kernel force repeats", "--no-kernel runs the microbenchmarks only", 0,
	  0, NULL },
	{ 0, NULL, NULL, 0, 0, NULL },
};

static const struct cli_spec calibrate_spec = {
	"calibrate", NULL, calibrate_options, calibrate_rules, 0, 0, "no arguments but options",
};

/* The options into @opt, @output and @quiet: 0, or CLI_USAGE (reported). */
static int parse_args(int argc, char **argv, struct calib_options *opt, const char **output,
		      bool *quiet)
{
	struct cli_args args;
	const char *value;
	long v;
	int c;

	if (cli_args_parse(&calibrate_spec, argc, argv, &args) != 0)
		return CLI_USAGE;
	while ((c = cli_args_next(&args, &value)) != -1) {
		switch (c) {
		case 'o': *output = value; break;
		case 'p':
			if (wl_parse_u64(value, &opt->pages) != 0 || opt->pages < 1000 ||
			    opt->pages > 10000000) {
				cli_error("calibrate: --pages wants 1000 to 10000000");
				return CLI_USAGE;
			}
			break;
		case 'r':
			if (cli_number("calibrate", "--runs", value, 1, 101, &v) != 0)
				return CLI_USAGE;
			opt->runs = (unsigned)v;
			break;
		case 'R':
			if (cli_number("calibrate", "--repeats", value, 1, CALIB_MAX_REPEATS, &v) != 0)
				return CLI_USAGE;
			opt->repeats = (unsigned)v;
			break;
		case 'n': opt->kernel = false; break;
		case 'f': opt->force = true; break;
		case 'q': *quiet = true; break;
		}
	}
	return 0;
}

int cmd_calibrate(int argc, char **argv)
{
	struct calib_options opt;
	struct calib_result res;
	const char *output = "ksmkit-costs.ini";
	bool quiet = false;
	char err[512], comment[512];

	calib_options_init(&opt);
	if (parse_args(argc, argv, &opt, &output, &quiet) != 0)
		return CLI_USAGE;
	opt.note = print_note;
	opt.note_arg = &quiet;
	if (calib_run(&opt, &res, err, sizeof(err)) != 0) {
		cli_error("calibrate: %s", err);
		return CLI_FAILED;
	}
	cli_calib_report(&res, stdout);
	snprintf(comment, sizeof(comment), "%s; %llu pages per calibration workload",
		 res.kernel_measured ? "microbenchmarks and a fit of the kernel's ksmd CPU time"
				     : "microbenchmarks only (the kernel part did not run)",
		 (unsigned long long)opt.pages);
	if (cli_calib_write_costs("calibrate", &res, comment, output) != 0) {
		calib_result_free(&res);
		return CLI_FAILED;
	}
	printf("# wrote %s (use: ksmkit sim|compare|demo --costs %s)\n", output, output);
	if (!res.kernel_measured) {
		cli_error("calibrate: kernel part skipped: %s; %s has microbenchmark costs only",
			  res.kernel_skip, output);
		calib_result_free(&res);
		return opt.kernel ? CLI_SKIPPED : CLI_OK;
	}
	calib_result_free(&res);
	return CLI_OK;
}
