/*
 * cmd_estimate.c - `ksmkit estimate`: what KSM would save on a capture (a
 * file, or processes and a command captured first), how fast and at what
 * ksmd CPU, before KSM runs. The model is estimate.h's (the capture
 * replayed on the simulator in simulated time); this file reads the command
 * line, takes the capture when given processes, runs one estimate or a
 * sweep with its recommendation, and prints it for people, as CSV or as
 * JSON, with an optional chart. It reads the machine's KSM knobs, never
 * writes them.
 *
 * A sweep of a capture file can also run in pieces, as GNU parallel jobs
 * (docs/parallel.md): --emit-jobs prints one self-contained command line
 * per point (--point I, at every knob and setting written out, so that no
 * worker's own knobs enter), each job prints its point's row
 * (estimate/est_rows.c), and --collect reads the rows back and prints what
 * the sweep in one process prints, byte for byte: the simulator is
 * deterministic and a row keeps every figure exactly.
 */
#include "config.h"
#include "cli.h"
#include "cli_args.h"
#include "cli_jobs.h"
#include "cli_output.h"
#include "cli_sim.h"
#include "estimate.h"

#include <limits.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_PLOT
#include "../plots/plot.h"
#endif

#define CMD "estimate"
#define MAX_PIDS 64
#define TABLE_ROWS 12 /* rows of the human table over time */

enum {
	OPT_OUTPUT = 'o', OPT_PID = 'p', OPT_QUIET = 'q',
	OPT_KNOBS = 1000, OPT_DEFAULTS, OPT_TIME, OPT_SWEEP, OPT_MAX_CPU, OPT_CHART, OPT_CSV,
	OPT_JSON, OPT_COSTS, OPT_KERNEL, OPT_PRINT, OPT_EVERY, OPT_DURATION, OPT_KEEP,
	OPT_MERGEABLE_ONLY, OPT_SCHEDULE, OPT_SCANS, OPT_EMIT_JOBS, OPT_POINT, OPT_COLLECT,
	OPT_KSMKIT,
};

static const struct cli_opt estimate_options[] = {
	{ "pid", 'p', true, OPT_PID },
	{ "knobs", 0, true, OPT_KNOBS },
	{ "defaults", 0, false, OPT_DEFAULTS },
	{ "time", 0, true, OPT_TIME },
	{ "sweep", 0, true, OPT_SWEEP },
	{ "max-cpu", 0, true, OPT_MAX_CPU },
	{ "chart", 0, true, OPT_CHART },
	{ "csv", 0, false, OPT_CSV },
	{ "json", 0, false, OPT_JSON },
	{ "output", 'o', true, OPT_OUTPUT },
	{ "costs", 0, true, OPT_COSTS },
	{ "kernel", 0, true, OPT_KERNEL },
	{ "print-workload", 0, false, OPT_PRINT },
	{ "every", 0, true, OPT_EVERY },
	{ "duration", 0, true, OPT_DURATION },
	{ "keep", 0, true, OPT_KEEP },
	{ "mergeable-only", 0, false, OPT_MERGEABLE_ONLY },
	{ "schedule", 0, true, OPT_SCHEDULE },
	{ "scans", 0, true, OPT_SCANS },
	{ "quiet", 'q', false, OPT_QUIET },
	{ "emit-jobs", 0, false, OPT_EMIT_JOBS },
	{ "point", 0, true, OPT_POINT },
	{ "collect", 0, true, OPT_COLLECT },
	{ "ksmkit", 0, true, OPT_KSMKIT },
	{ NULL, 0, false, 0 },
};

static const struct cli_rule estimate_rules[] = {
	{ CLI_AT_MOST_ONE, "csv json", NULL, 0, 0, NULL },
	{ CLI_NEEDS, "max-cpu sweep", "a recommendation chooses among sweep points", 0, 0, NULL },
	{ CLI_EXCLUDES, "print-workload sweep chart csv json output",
	  "--print-workload prints the workload and runs nothing", 0, 0, NULL },
	{ CLI_OPERANDS, "pid", NULL, 0, 0, "no capture file or command with -p" },
	{ CLI_AT_MOST_ONE, "time scans", "each says how long to run", 0, 0, NULL },
	{ CLI_AT_MOST_ONE, "emit-jobs point collect", NULL, 0, 0, NULL },
	{ CLI_NEEDS, "emit-jobs sweep", "the jobs are a sweep's points", 0, 0, NULL },
	{ CLI_NEEDS, "point sweep", "a point is one of a sweep's", 0, 0, NULL },
	{ CLI_NEEDS, "collect sweep", "the rows are a sweep's points", 0, 0, NULL },
	{ CLI_NEEDS, "ksmkit emit-jobs", NULL, 0, 0, NULL },
	{ CLI_EXCLUDES, "emit-jobs max-cpu chart csv json output",
	  "the jobs print rows; the output is --collect's", 0, 0, NULL },
	{ CLI_EXCLUDES, "point max-cpu chart csv json output",
	  "a point prints its row on standard output; the output is --collect's", 0, 0, NULL },
	{ 0, NULL, NULL, 0, 0, NULL },
};

static const struct cli_spec estimate_spec = {
	CMD, NULL, estimate_options, estimate_rules, 1, -1,
	"a capture file, or a command after --",
};

/* ---- what to do ----------------------------------------------------------------- */

struct plan {
	const char *capture;       /* the file, or NULL when capturing first */
	pid_t pids[MAX_PIDS];
	size_t npids;
	char **command;
	uint64_t every_ns, duration_ns;
	const char *keep;
	struct est_options opt;
	struct est_axis axes[EST_MAX_AXES];
	size_t naxes;
	bool recommend;
	double max_cpu;
	const char *chart, *output;
	enum { OUT_TABLE, OUT_CSV, OUT_JSON } format;
	bool print_workload, quiet, knobs_from_machine, mergeable_only, knobs_given;
	struct sim_costs costs;
	const char *costs_path, *sweep_text; /* as given, for the jobs */
	bool emit_jobs;
	const char *ksmkit;        /* --emit-jobs: the program the jobs run */
	long point;                /* --point I, or -1 */
	const char *collect;       /* --collect FILE, "-" standard input */
};

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int bad(const char *fmt, ...)
{
	char msg[640];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cli_error("%s: %s", CMD, msg);
	return CLI_USAGE;
}

static int parse_pids(const char *text, struct plan *pl)
{
	char *copy = strdup(text), *save = NULL;
	int rc = 0;

	if (!copy)
		return CLI_FAILED;
	for (char *t = strtok_r(copy, ",", &save); t && rc == 0; t = strtok_r(NULL, ",", &save)) {
		long pid;

		if (pl->npids == MAX_PIDS)
			rc = bad("-p: at most 64 processes");
		else if ((rc = cli_number(CMD, "-p", t, 1, 0x3fffffff, &pid)) == 0)
			pl->pids[pl->npids++] = (pid_t)pid;
	}
	free(copy);
	if (rc == 0 && !pl->npids)
		rc = bad("-p: no process in '%s'", text);
	return rc;
}

static int parse_knobs(const char *text, struct est_knobs *k)
{
	char *copy = strdup(text), *save = NULL, err[256];
	int rc = 0;

	if (!copy)
		return CLI_FAILED;
	for (char *t = strtok_r(copy, ",", &save); t && rc == 0; t = strtok_r(NULL, ",", &save))
		if (est_knobs_assign(k, t, err, sizeof(err)) != 0)
			rc = bad("--knobs: %s", err);
	free(copy);
	return rc;
}

/* --sweep 'KNOB=V1,V2;KNOB=V1,V2': axes separated by ';' or blanks. */
static int parse_sweep(const char *text, struct plan *pl)
{
	char *copy = strdup(text), *save = NULL, err[256];
	int rc = 0;

	if (!copy)
		return CLI_FAILED;
	for (char *t = strtok_r(copy, "; \t", &save); t && rc == 0; t = strtok_r(NULL, "; \t", &save)) {
		if (pl->naxes == EST_MAX_AXES)
			rc = bad("--sweep: at most 4 knobs");
		else if (est_axis_parse(t, &pl->axes[pl->naxes], err, sizeof(err)) != 0)
			rc = bad("--sweep: %s", err);
		else
			for (size_t i = 0; i < pl->naxes && rc == 0; i++)
				if (pl->axes[i].knob == pl->axes[pl->naxes].knob)
					rc = bad("--sweep: %s is swept twice",
						 wl_knob_info(pl->axes[i].knob)->name);
		pl->naxes++;
	}
	free(copy);
	if (rc == 0 && !pl->naxes)
		rc = bad("--sweep: no knob in '%s'", text);
	if (rc == 0 && est_grid_size(pl->axes, pl->naxes) > EST_MAX_POINTS)
		rc = bad("--sweep: more than 256 points");
	return rc;
}

static int parse_percent(const char *text, double *fraction)
{
	char *end;
	double v = strtod(text, &end);

	if (end == text || (*end && strcmp(end, "%") != 0) || !(v > 0) || v > 100)
		return bad("--max-cpu: '%s' is not a share of one CPU above 0 and at most 100%% "
			   "(like 10%%)", text);
	*fraction = v / 100;
	return 0;
}

static int parse_time(const char *option, const char *text, uint64_t *ns)
{
	if (wl_parse_time(text, ns) != 0 || *ns == 0)
		return bad("%s: '%s' is not a time above 0 (like 500ms, 30s, 10m)", option, text);
	return 0;
}

static int one_option(struct plan *pl, int key, const char *v)
{
	int k;

	switch (key) {
	case OPT_PID: return parse_pids(v, pl);
	case OPT_KNOBS: return 0; /* after the base set (--defaults) is known */
	case OPT_DEFAULTS: pl->knobs_from_machine = false; return 0;
	case OPT_TIME: return parse_time("--time", v, &pl->opt.time_ns);
	case OPT_SWEEP: pl->sweep_text = v; return parse_sweep(v, pl);
	case OPT_MAX_CPU: pl->recommend = true; return parse_percent(v, &pl->max_cpu);
	case OPT_CHART: pl->chart = v; return 0;
	case OPT_CSV: pl->format = OUT_CSV; return 0;
	case OPT_JSON: pl->format = OUT_JSON; return 0;
	case OPT_OUTPUT: pl->output = v; return 0;
	case OPT_COSTS:
		if (cli_load_costs(v, &pl->costs) != 0)
			return CLI_USAGE;
		pl->opt.costs = &pl->costs;
		pl->costs_path = v;
		return 0;
	case OPT_KERNEL:
		if ((k = wl_kernel_lookup(v)) < 0)
			return bad("--kernel: no kernel row is called '%s'", v);
		pl->opt.kernel = (enum wl_kernel)k;
		return 0;
	case OPT_PRINT: pl->print_workload = true; return 0;
	case OPT_EVERY: return parse_time("--every", v, &pl->every_ns);
	case OPT_DURATION: return parse_time("--duration", v, &pl->duration_ns);
	case OPT_KEEP: pl->keep = v; return 0;
	case OPT_MERGEABLE_ONLY: pl->mergeable_only = true; return 0;
	case OPT_SCHEDULE:
		if (strcmp(v, "time") == 0)
			pl->opt.schedule = EST_BY_TIME;
		else if (strcmp(v, "scans") == 0)
			pl->opt.schedule = EST_BY_SCANS;
		else
			return bad("--schedule: '%s': expected time or scans", v);
		return 0;
	case OPT_SCANS: {
		long n;

		if (cli_number(CMD, "--scans", v, 1, 1000000000L, &n) != 0)
			return CLI_USAGE;
		pl->opt.scans = (uint64_t)n;
		return 0;
	}
	case OPT_QUIET: pl->quiet = true; return 0;
	case OPT_EMIT_JOBS: pl->emit_jobs = true; return 0;
	case OPT_POINT: return cli_number(CMD, "--point", v, 0, EST_MAX_POINTS - 1, &pl->point);
	case OPT_COLLECT: pl->collect = v; return 0;
	case OPT_KSMKIT: pl->ksmkit = v; return 0;
	}
	return 0;
}

/* --emit-jobs, --point and --collect: a capture file, and a point the sweep has. */
static int read_pieces(const struct plan *pl)
{
	size_t n = est_grid_size(pl->axes, pl->naxes);

	if (!pl->emit_jobs && pl->point < 0 && !pl->collect)
		return 0;
	if (!pl->capture)
		return bad("--emit-jobs, --point and --collect are for a capture file, which every "
			   "job reads: capture first (ksmkit capture -o FILE -p PID, or -- CMD), "
			   "then ksmkit estimate FILE --sweep ...");
	if (pl->point >= 0 && (size_t)pl->point >= n)
		return bad("--point %ld: the sweep has points 0 to %zu", pl->point, n - 1);
	return 0;
}

static int read_plan(struct cli_args *a, bool had_dashdash, struct plan *pl)
{
	const char *v;
	int key, rc = 0;

	memset(pl, 0, sizeof(*pl));
	pl->every_ns = 1000000000ull;
	pl->knobs_from_machine = true;
	pl->opt.kernel = WL_KERNEL_6_18;
	pl->point = -1;
	while (rc == 0 && (key = cli_args_next(a, &v)) != -1)
		rc = one_option(pl, key, v);
	if (rc)
		return rc;
	if (pl->knobs_from_machine)
		est_knobs_current(&pl->opt.knobs, NULL);
	else
		est_knobs_default(&pl->opt.knobs);
	if ((v = cli_args_value(a, OPT_KNOBS)) && (rc = parse_knobs(v, &pl->opt.knobs)) != 0)
		return rc;
	pl->knobs_given = v != NULL;
	if (had_dashdash) {
		pl->command = a->operand;
	} else if (!pl->npids) {
		if (a->noperands != 1)
			return bad("one capture file, or -p PID, or -- COMMAND; got %s",
				   a->noperands ? "several operands" : "none");
		pl->capture = a->operand[0];
	}
	if (pl->capture && (cli_args_has(a, OPT_EVERY) || cli_args_has(a, OPT_DURATION) ||
			    pl->keep || pl->mergeable_only))
		return bad("--every, --duration, --keep and --mergeable-only are for capturing "
			   "(-p or --), not for a capture file");
	if (pl->opt.schedule == EST_BY_TIME && pl->opt.scans)
		return bad("--scans is for --schedule scans (with time, say --time)");
	if (pl->opt.schedule == EST_BY_SCANS && pl->opt.time_ns)
		return bad("--time is for --schedule time (by scans, say --scans)");
	if (!pl->capture && !pl->command && !cli_args_has(a, OPT_DURATION))
		pl->duration_ns = 10ull * 1000000000ull; /* -p: processes may run for ever */
	return read_pieces(pl);
}

/* ---- capturing first ------------------------------------------------------------------ */

/* Take the capture into --keep FILE or a temporary file; its path in @path. */
static int capture_first(struct plan *pl, char *path, size_t len)
{
	struct cli_capture_request req = {
		.output = path, .pids = pl->pids, .npids = pl->npids, .command = pl->command,
		.every_ns = pl->every_ns, .duration_ns = pl->duration_ns, .quiet = pl->quiet,
		.mergeable_only = pl->mergeable_only,
	};
	int rc;

	if (pl->keep) {
		snprintf(path, len, "%s", pl->keep);
	} else {
		const char *dir = getenv("TMPDIR");
		int fd;

		snprintf(path, len, "%s/ksmkit-estimate-XXXXXX", dir && *dir ? dir : "/tmp");
		fd = mkstemp(path);
		if (fd < 0) {
			cli_error("%s: a temporary capture file in %s: %m", CMD,
				  dir && *dir ? dir : "/tmp");
			return CLI_FAILED;
		}
		close(fd);
	}
	rc = cli_capture(&req);
	/* the capture caught SIGINT and SIGTERM to stop cleanly: the estimate may die of them */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (rc != CLI_OK && !pl->keep)
		unlink(path);
	pl->capture = path;
	return rc;
}

/* ---- running ------------------------------------------------------------------------------ */

static int load(struct plan *pl, struct est_capture *cap)
{
	char err[640];

	if (est_capture_read(pl->capture, cap, err, sizeof(err)) != 0) {
		cli_error("%s: %s", CMD, err);
		return CLI_USAGE;
	}
	return 0;
}

/* One estimate at @opt's knobs: the workload admitted, then run. */
int cli_estimate_run(const char *cmd, const struct est_options *opt,
		     const struct est_capture *cap, struct est_result *out, bool quiet, char *err,
		     size_t errlen)
{
	struct cli_progress prog;
	struct workload *wl;
	struct est_options o = *opt;
	int rc;

	if (est_workload(&o, cap, &wl, err, errlen) != 0)
		return CLI_USAGE;
	if (cli_admit(wl, &(struct sim_admit_options){ .per_batch = true, .costs = o.costs },
		      err, errlen) != 0) {
		wl_free(wl);
		return CLI_USAGE;
	}
	cli_progress_init(&prog, cmd, quiet);
	o.progress = cli_progress_hook;
	o.progress_arg = &prog;
	o.progress_steps = CLI_PROGRESS_STEPS;
	rc = est_run(&o, cap, wl, out, err, errlen);
	cli_progress_done(&prog);
	wl_free(wl);
	return rc != 0 ? CLI_FAILED : CLI_OK;
}

/* One estimate at @opt's knobs, its error said. */
static int run_one(const struct est_options *opt, const struct est_capture *cap,
		   struct est_result *out, bool quiet)
{
	char err[640];
	int rc = cli_estimate_run(CMD, opt, cap, out, quiet, err, sizeof(err));

	if (rc != CLI_OK)
		cli_error("%s: %s", CMD, err);
	return rc;
}

/* ---- output: one estimate ------------------------------------------------------------------ */

static double mib(int64_t pages)
{
	return (double)pages * 4096 / (1024.0 * 1024.0);
}

static double sec(uint64_t ns)
{
	return (double)ns / 1e9;
}

static void print_knob_line(FILE *out, const struct est_knobs *k, bool machine, bool given)
{
	static const enum wl_knob shown[] = {
		WL_KNOB_PAGES_TO_SCAN, WL_KNOB_SLEEP_MILLISECS, WL_KNOB_MAX_PAGE_SHARING,
		WL_KNOB_USE_ZERO_PAGES, WL_KNOB_SMART_SCAN, WL_KNOB_ADVISOR_MODE,
	};
	const char *sep = "";

	fprintf(out, "knobs:");
	for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
		char buf[32];

		fprintf(out, "%s %s %s", sep, wl_knob_info(shown[i])->name,
			wl_knob_format(shown[i], k->value[shown[i]], buf, sizeof(buf)));
		sep = ",";
	}
	fprintf(out, " (%s%s)\n", machine ? "this machine's" : "the kernel's defaults",
		given ? ", changed by --knobs" : "");
}

static void print_head(FILE *out, const struct plan *pl, const struct est_result *r)
{
	fprintf(out, "ksmkit estimate of %s: %llu process%s, %llu snapshot%s over %.1f s;\n"
		     "%llu pages present at the last, of which at most %llu (%.1f MiB) can be "
		     "saved (zero pages and duplicates)\n",
		pl->capture, (unsigned long long)r->streams, r->streams == 1 ? "" : "es",
		(unsigned long long)r->snapshots, r->snapshots == 1 ? "" : "s",
		sec(r->last_snapshot_ns), (unsigned long long)r->present_pages,
		(unsigned long long)r->most_saved, mib((int64_t)r->most_saved));
	print_knob_line(out, &pl->opt.knobs, pl->knobs_from_machine, pl->knobs_given);
}

static void print_row(FILE *out, const struct est_point *p)
{
	fprintf(out, "%10.2f %6llu %13lld %14lld %15lld %10.2f %15.2f %10.3f\n", sec(p->time_ns),
		(unsigned long long)p->full_scans, (long long)p->pages_shared,
		(long long)p->pages_sharing, (long long)p->ksm_zero_pages, mib(est_saved(p)),
		(double)p->general_profit / (1024.0 * 1024.0), sec(p->ksmd_cpu_ns));
}

/* Where ksmd's CPU went over the run, by term, the largest first (1% and up). */
static void print_cost_shares(FILE *out, const struct est_result *r)
{
	bool shown[SIM_TERM_COUNT] = { false };
	uint64_t total = 0;

	for (int t = 0; t < SIM_TERM_COUNT; t++)
		total += r->cost_ns[t];
	if (!total)
		return;
	fprintf(out, "  by term:");
	for (;;) {
		int best = -1;

		for (int t = 0; t < SIM_TERM_COUNT; t++)
			if (!shown[t] && (best < 0 || r->cost_ns[t] > r->cost_ns[best]))
				best = t;
		if (best < 0 || 100 * r->cost_ns[best] < total)
			break;
		shown[best] = true;
		fprintf(out, " %s %.0f%%", sim_cost_term_info(best)->name,
			100.0 * (double)r->cost_ns[best] / (double)total);
	}
	fputc('\n', out);
}

static void print_summary(FILE *out, const struct est_result *r)
{
	int64_t saved = est_saved(&r->last);

	fprintf(out, "\nsaves %lld pages (%.1f MiB): pages_sharing %lld + ksm_zero_pages %lld; "
		     "general_profit %.2f MiB\n",
		(long long)saved, mib(saved), (long long)r->last.pages_sharing,
		(long long)r->last.ksm_zero_pages, (double)r->last.general_profit / 1048576.0);
	if (r->most_saved)
		fprintf(out, "that is %.0f%% of what the capture could give\n",
			100.0 * (double)saved / (double)r->most_saved);
	if (r->t90_ns >= 0)
		fprintf(out, "90%% of it after %.2f s\n", sec((uint64_t)r->t90_ns));
	fprintf(out, "ksmd CPU: %.2f%% of one CPU over the run, %.2f%% over the last full scan "
		     "(the simulator's cost model)\n", 100 * r->cpu_mean, 100 * r->cpu_steady);
	print_cost_shares(out, r);
	fprintf(out, "%s\n", r->settled ? "settled: the saving did not move over the last full scan"
				       : "not settled: the saving still moved in the last full scan "
					 "(run it longer: --time, or --scans)");
}

static void print_table(FILE *out, const struct plan *pl, const struct est_result *r)
{
	size_t shown = 0;

	print_head(out, pl, r);
	fprintf(out, "simulated %.1f s, %llu full scans\n\n", sec(r->last.time_ns),
		(unsigned long long)r->last.full_scans);
	fprintf(out, "%10s %6s %13s %14s %15s %10s %15s %10s\n", "time s", "scans", "pages_shared",
		"pages_sharing", "ksm_zero_pages", "saved MiB", "general_profit", "ksmd cpu s");
	for (size_t i = 0; i < r->n; i++) {
		size_t want = shown * (r->n - 1) / (TABLE_ROWS - 1);

		if (i == want || i == r->n - 1) {
			print_row(out, &r->series[i]);
			shown++;
			if (i == r->n - 1)
				break;
		}
	}
	print_summary(out, r);
}

/* ",cost_TERM_ns" for every term of the cost model: a CSV header's columns. */
static void csv_cost_header(FILE *out)
{
	for (int t = 0; t < SIM_TERM_COUNT; t++)
		fprintf(out, ",cost_%s_ns", sim_cost_term_info(t)->name);
}

/* @ns, SIM_TERM_COUNT of them (NULL: none known, empty cells), as CSV cells. */
static void csv_costs(FILE *out, const uint64_t *ns)
{
	for (int t = 0; t < SIM_TERM_COUNT; t++)
		if (ns)
			fprintf(out, ",%llu", (unsigned long long)ns[t]);
		else
			fputc(',', out);
}

/*
 * A row at each scan point (est_scan_point), with ksmd's CPU so far by term
 * of the cost model, as ksmkit sim --csv has them.
 */
static void print_csv(FILE *out, const struct est_result *r)
{
	fprintf(out, "time_s,full_scans,pages_shared,pages_sharing,ksm_zero_pages,saved_pages,"
		     "general_profit,ksmd_cpu_s");
	csv_cost_header(out);
	fputc('\n', out);
	for (size_t i = 0, k = 0; i < r->n; i++) {
		const struct est_point *p = &r->series[i];

		if (!est_scan_point(r, i))
			continue;
		fprintf(out, "%.6f,%llu,%lld,%lld,%lld,%lld,%lld,%.6f", sec(p->time_ns),
			(unsigned long long)p->full_scans, (long long)p->pages_shared,
			(long long)p->pages_sharing, (long long)p->ksm_zero_pages,
			(long long)est_saved(p), (long long)p->general_profit,
			sec(p->ksmd_cpu_ns));
		csv_costs(out, est_scan_costs(r, k++));
		fputc('\n', out);
	}
}

static void json_knobs(FILE *out, const struct est_knobs *k)
{
	fprintf(out, "{");
	for (int i = 0; i < WL_KNOB_COUNT; i++) {
		char buf[32];
		const char *text = wl_knob_format((enum wl_knob)i, k->value[i], buf, sizeof(buf));

		if (wl_knob_info((enum wl_knob)i)->kind == WL_KNOB_ADVISOR)
			fprintf(out, "%s\"%s\": \"%s\"", i ? ", " : "", wl_knob_info((enum wl_knob)i)->name,
				text);
		else
			fprintf(out, "%s\"%s\": %s", i ? ", " : "", wl_knob_info((enum wl_knob)i)->name,
				text);
	}
	fprintf(out, "}");
}

static void json_figures(FILE *out, const struct est_result *r)
{
	fprintf(out, "\"saved_pages\": %lld, \"pages_shared\": %lld, \"pages_sharing\": %lld, "
		     "\"ksm_zero_pages\": %lld, \"general_profit\": %lld, \"t90_s\": ",
		(long long)est_saved(&r->last), (long long)r->last.pages_shared,
		(long long)r->last.pages_sharing, (long long)r->last.ksm_zero_pages,
		(long long)r->last.general_profit);
	if (r->t90_ns >= 0)
		fprintf(out, "%.6f", sec((uint64_t)r->t90_ns));
	else
		fprintf(out, "null");
	fprintf(out, ", \"cpu_mean\": %.6f, \"cpu_steady\": %.6f, \"settled\": %s, "
		     "\"time_s\": %.6f, \"full_scans\": %llu",
		r->cpu_mean, r->cpu_steady, r->settled ? "true" : "false", sec(r->last.time_ns),
		(unsigned long long)r->last.full_scans);
}

/* @lead, then "costs_ns": {TERM: ns, ...} of @ns (nothing when NULL). */
static void json_cost_object(FILE *out, const char *lead, const uint64_t *ns)
{
	if (!ns)
		return;
	fprintf(out, "%s\"costs_ns\": {", lead);
	for (int t = 0; t < SIM_TERM_COUNT; t++)
		fprintf(out, "%s\"%s\": %llu", t ? ", " : "", sim_cost_term_info(t)->name,
			(unsigned long long)ns[t]);
	fprintf(out, "}");
}

static void print_json(FILE *out, const struct plan *pl, const struct est_result *r)
{
	fprintf(out, "{\"capture\": \"%s\", \"streams\": %llu, \"snapshots\": %llu, "
		     "\"present_pages\": %llu, \"most_saved\": %llu,\n \"knobs\": ",
		pl->capture, (unsigned long long)r->streams, (unsigned long long)r->snapshots,
		(unsigned long long)r->present_pages, (unsigned long long)r->most_saved);
	json_knobs(out, &pl->opt.knobs);
	fprintf(out, ",\n ");
	json_figures(out, r);
	json_cost_object(out, ",\n ", r->cost_ns);
	fprintf(out, ",\n \"series\": [");
	for (size_t i = 0, k = 0; i < r->n; i++) {
		const struct est_point *p = &r->series[i];

		if (!est_scan_point(r, i))
			continue;
		fprintf(out, "%s\n  {\"time_s\": %.6f, \"full_scans\": %llu, \"pages_shared\": %lld, "
			     "\"pages_sharing\": %lld, \"ksm_zero_pages\": %lld, "
			     "\"general_profit\": %lld, \"ksmd_cpu_s\": %.6f",
			k ? "," : "", sec(p->time_ns), (unsigned long long)p->full_scans,
			(long long)p->pages_shared, (long long)p->pages_sharing,
			(long long)p->ksm_zero_pages, (long long)p->general_profit,
			sec(p->ksmd_cpu_ns));
		json_cost_object(out, ", ", est_scan_costs(r, k++));
		fprintf(out, "}");
	}
	fprintf(out, "\n ]}\n");
}

/* ---- output: a sweep ------------------------------------------------------------------------ */

static void sweep_header(FILE *out, const struct plan *pl, const char *sep)
{
	for (size_t a = 0; a < pl->naxes; a++)
		fprintf(out, "%s%s", a ? sep : "", wl_knob_info(pl->axes[a].knob)->name);
}

/* The swept knobs' values of @k, each @width wide (0: as they are), @sep between. */
static void sweep_knobs(FILE *out, const struct plan *pl, const struct est_knobs *k, int width,
			const char *sep)
{
	for (size_t a = 0; a < pl->naxes; a++) {
		char buf[32];

		fprintf(out, "%s%*s", a ? sep : "", width,
			wl_knob_format(pl->axes[a].knob, k->value[pl->axes[a].knob], buf,
				       sizeof(buf)));
	}
}

/* The swept knobs of @k as "NAME=VALUE NAME=VALUE", into @buf. */
static const char *point_name(const struct plan *pl, const struct est_knobs *k, char *buf,
			      size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t a = 0; a < pl->naxes && used < len; a++) {
		char value[32];

		used += (size_t)snprintf(buf + used, len - used, "%s%s=%s", a ? " " : "",
					 wl_knob_info(pl->axes[a].knob)->name,
					 wl_knob_format(pl->axes[a].knob, k->value[pl->axes[a].knob],
							value, sizeof(value)));
	}
	return buf;
}

static void print_sweep_table(FILE *out, const struct plan *pl, const struct est_knobs *knobs,
			      const struct est_result *r, size_t n, long best)
{
	char name[EST_MAX_AXES * 96];

	print_head(out, pl, &r[0]);
	fprintf(out, "\n");
	for (size_t a = 0; a < pl->naxes; a++)
		fprintf(out, "%16s ", wl_knob_info(pl->axes[a].knob)->name);
	fprintf(out, "%12s %10s %10s %14s %10s %8s\n", "saved pages", "saved MiB", "90% after",
		"cpu (steady)", "cpu (run)", "settled");
	for (size_t i = 0; i < n; i++) {
		char t90[32];

		sweep_knobs(out, pl, &knobs[i], 16, " ");
		if (r[i].t90_ns >= 0)
			snprintf(t90, sizeof(t90), "%.2f s", sec((uint64_t)r[i].t90_ns));
		else
			snprintf(t90, sizeof(t90), "-");
		fprintf(out, " %12lld %10.2f %10s %13.2f%% %9.2f%% %8s\n",
			(long long)est_saved(&r[i].last), mib(est_saved(&r[i].last)), t90,
			100 * r[i].cpu_steady, 100 * r[i].cpu_mean, r[i].settled ? "yes" : "no");
	}
	if (!pl->recommend)
		return;
	if (best < 0) {
		fprintf(out, "\nno point keeps ksmd within %.1f%% of one CPU once steady\n",
			100 * pl->max_cpu);
		return;
	}
	fprintf(out, "\nrecommended for ksmd within %.1f%% of one CPU: %s (saves %lld pages, "
		     "%.2f%% CPU once steady)\n", 100 * pl->max_cpu,
		point_name(pl, &knobs[best], name, sizeof(name)),
		(long long)est_saved(&r[best].last), 100 * r[best].cpu_steady);
}

static void print_sweep_csv(FILE *out, const struct plan *pl, const struct est_knobs *knobs,
			    const struct est_result *r, size_t n, long best)
{
	sweep_header(out, pl, ",");
	fprintf(out, ",saved_pages,pages_shared,pages_sharing,ksm_zero_pages,general_profit,"
		     "t90_s,cpu_steady,cpu_mean,settled,recommended");
	csv_cost_header(out);
	fputc('\n', out);
	for (size_t i = 0; i < n; i++) {
		sweep_knobs(out, pl, &knobs[i], 0, ",");
		fprintf(out, ",%lld,%lld,%lld,%lld,%lld,", (long long)est_saved(&r[i].last),
			(long long)r[i].last.pages_shared, (long long)r[i].last.pages_sharing,
			(long long)r[i].last.ksm_zero_pages, (long long)r[i].last.general_profit);
		if (r[i].t90_ns >= 0)
			fprintf(out, "%.6f", sec((uint64_t)r[i].t90_ns));
		fprintf(out, ",%.6f,%.6f,%d,%d", r[i].cpu_steady, r[i].cpu_mean, r[i].settled,
			(long)i == best);
		csv_costs(out, r[i].cost_ns);
		fputc('\n', out);
	}
}

static void print_sweep_json(FILE *out, const struct plan *pl, const struct est_knobs *knobs,
			     const struct est_result *r, size_t n, long best)
{
	fprintf(out, "{\"capture\": \"%s\", \"points\": [", pl->capture);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "%s\n  {\"knobs\": ", i ? "," : "");
		json_knobs(out, &knobs[i]);
		fprintf(out, ", ");
		json_figures(out, &r[i]);
		json_cost_object(out, ", ", r[i].cost_ns);
		fprintf(out, "}");
	}
	fprintf(out, "\n ]");
	if (pl->recommend) {
		fprintf(out, ", \"max_cpu\": %.6f, \"recommended\": ", pl->max_cpu);
		if (best >= 0)
			fprintf(out, "%ld", best);
		else
			fprintf(out, "null");
	}
	fprintf(out, "}\n");
}

/* ---- charts ------------------------------------------------------------------------------------ */

#ifdef HAVE_PLOT

static int chart_over_time(const char *path, const struct est_result *r, char *err, size_t len)
{
	struct plot_chart *c = plot_new(PLOT_LINES);
	int saved, profit, rc = -1;

	if (!c)
		return -1;
	if (plot_set_labels(c, "ksmkit estimate: what KSM saves over time", "simulated time (s)",
			    "MiB", err, len) != 0 ||
	    (saved = plot_add_series(c, "saved (pages_sharing + ksm_zero_pages)", err, len)) < 0 ||
	    (profit = plot_add_series(c, "general_profit", err, len)) < 0)
		goto out;
	for (size_t i = 0; i < r->n; i++) {
		const struct est_point *p = &r->series[i];

		if (!est_scan_point(r, i))
			continue;
		if (plot_add_point(c, saved, sec(p->time_ns), mib(est_saved(p)), err, len) != 0 ||
		    plot_add_point(c, profit, sec(p->time_ns), (double)p->general_profit / 1048576.0,
				   err, len) != 0)
			goto out;
	}
	rc = plot_write(c, path, 800, 500, err, len);
out:
	plot_free(c);
	return rc;
}

static int chart_sweep(const char *path, const struct est_result *r, size_t n, char *err,
		       size_t len)
{
	struct plot_chart *c = plot_new(PLOT_LINES);
	int s, rc = -1;

	if (!c)
		return -1;
	if (plot_set_labels(c, "ksmkit estimate: saving against ksmd CPU",
			    "ksmd CPU once steady (% of one CPU)", "saved (MiB)", err, len) != 0 ||
	    (s = plot_add_series(c, "sweep points", err, len)) < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (plot_add_point(c, s, 100 * r[i].cpu_steady, mib(est_saved(&r[i].last)), err,
				   len) != 0)
			goto out;
	rc = plot_write(c, path, 800, 500, err, len);
out:
	plot_free(c);
	return rc;
}

static int write_chart(const struct plan *pl, const struct est_result *r, size_t n, bool sweep)
{
	char err[512] = "out of memory";

	if (!pl->chart)
		return CLI_OK;
	if ((sweep ? chart_sweep(pl->chart, r, n, err, sizeof(err))
		   : chart_over_time(pl->chart, r, err, sizeof(err))) != 0) {
		cli_error("%s: --chart %s: %s", CMD, pl->chart, err);
		return CLI_FAILED;
	}
	return CLI_OK;
}
#else
static int write_chart(const struct plan *pl, const struct est_result *r, size_t n, bool sweep)
{
	if (!pl->chart)
		return CLI_OK;
	cli_error("%s: --chart: this ksmkit was built without GNU libplot", CMD);
	return CLI_SKIPPED;
}
#endif

/* ---- the command ---------------------------------------------------------------------------------- */

static int estimate_one(const struct plan *pl, const struct est_capture *cap)
{
	struct est_result r;
	FILE *out;
	int rc = run_one(&pl->opt, cap, &r, pl->quiet);

	if (rc != 0)
		return rc;
	out = cli_output_open(CMD, pl->output);
	if (!out) {
		est_result_free(&r);
		return CLI_FAILED;
	}
	if (pl->format == OUT_CSV)
		print_csv(out, &r);
	else if (pl->format == OUT_JSON)
		print_json(out, pl, &r);
	else
		print_table(out, pl, &r);
	rc = cli_output_close(CMD, out, pl->output);
	if (rc == CLI_OK)
		rc = write_chart(pl, &r, 1, false);
	est_result_free(&r);
	return rc;
}

/* The knobs of every point of the sweep, into @knobs (est_grid_size of them). */
static void grid_knobs(const struct plan *pl, struct est_knobs *knobs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		est_grid_point(pl->axes, pl->naxes, i, &pl->opt.knobs, &knobs[i]);
}

/*
 * What a sweep prints from its points' knobs and results, in one process
 * or collected: the recommendation, the table, CSV or JSON, the chart.
 */
static int print_sweep(const struct plan *pl, const struct est_knobs *knobs,
		       const struct est_result *r, size_t n)
{
	long best = pl->recommend ? est_recommend(r, n, pl->max_cpu) : -1;
	FILE *out = cli_output_open(CMD, pl->output);
	int rc;

	if (!out)
		return CLI_FAILED;
	if (pl->format == OUT_CSV)
		print_sweep_csv(out, pl, knobs, r, n, best);
	else if (pl->format == OUT_JSON)
		print_sweep_json(out, pl, knobs, r, n, best);
	else
		print_sweep_table(out, pl, knobs, r, n, best);
	rc = cli_output_close(CMD, out, pl->output);
	if (rc == CLI_OK)
		rc = write_chart(pl, r, n, true);
	return rc;
}

static int estimate_sweep(const struct plan *pl, const struct est_capture *cap)
{
	size_t n = est_grid_size(pl->axes, pl->naxes), done = 0;
	struct est_result *r = calloc(n, sizeof(*r));
	struct est_knobs *knobs = calloc(n, sizeof(*knobs));
	int rc = CLI_FAILED;

	if (!r || !knobs)
		goto out;
	grid_knobs(pl, knobs, n);
	for (; done < n; done++) {
		struct est_options o = pl->opt;

		o.knobs = knobs[done];
		if (!pl->quiet && isatty(STDERR_FILENO))
			fprintf(stderr, "ksmkit estimate: point %zu of %zu\n", done + 1, n);
		if ((rc = run_one(&o, cap, &r[done], pl->quiet)) != 0)
			goto out;
	}
	rc = print_sweep(pl, knobs, r, n);
out:
	for (size_t i = 0; r && i < done; i++)
		est_result_free(&r[i]);
	free(r);
	free(knobs);
	return rc;
}

/* ---- a sweep in pieces: jobs, a point, collecting --------------------------------------- */

/* " --knobs NAME=V,..." with every knob of @k: a job runs at these, not at its host's. */
static void job_knobs(FILE *out, const struct est_knobs *k)
{
	fputs(" --defaults --knobs ", out);
	for (int i = 0; i < WL_KNOB_COUNT; i++) {
		char buf[32];

		fprintf(out, "%s%s=%s", i ? "," : "", wl_knob_info((enum wl_knob)i)->name,
			wl_knob_format((enum wl_knob)i, k->value[i], buf, sizeof(buf)));
	}
}

/* The settings a point's result depends on, as a job's options. */
static void job_settings(FILE *out, const struct plan *pl, const char *costs)
{
	job_knobs(out, &pl->opt.knobs);
	fprintf(out, " --kernel %s", wl_kernel_name(pl->opt.kernel));
	if (pl->opt.schedule == EST_BY_SCANS)
		fputs(" --schedule scans", out);
	if (pl->opt.time_ns)
		fprintf(out, " --time %lluns", (unsigned long long)pl->opt.time_ns);
	if (pl->opt.scans)
		fprintf(out, " --scans %llu", (unsigned long long)pl->opt.scans);
	if (costs) {
		fputs(" --costs ", out);
		cli_job_word(out, costs);
	}
}

/*
 * One command line per point of the sweep: this program (or --ksmkit),
 * the capture and the costs file by absolute paths, every setting written
 * out. The capture is read first, and its workload (at the base knobs)
 * built, so that what the jobs would all refuse is refused here.
 */
static int emit_jobs(const struct plan *pl, const struct est_capture *cap)
{
	char prog[PATH_MAX], capture[PATH_MAX], costs[PATH_MAX], err[640];
	size_t n = est_grid_size(pl->axes, pl->naxes);
	struct workload *wl;

	if (est_workload(&pl->opt, cap, &wl, err, sizeof(err)) != 0) {
		cli_error("%s: %s", CMD, err);
		return CLI_USAGE;
	}
	wl_free(wl);
	cli_job_program(pl->ksmkit, prog, sizeof(prog));
	cli_job_path(pl->capture, capture, sizeof(capture));
	if (pl->costs_path)
		cli_job_path(pl->costs_path, costs, sizeof(costs));
	for (size_t i = 0; i < n; i++) {
		cli_job_word(stdout, prog);
		fputs(" estimate ", stdout);
		cli_job_word(stdout, capture);
		fputs(" --sweep ", stdout);
		cli_job_word(stdout, pl->sweep_text);
		fprintf(stdout, " --point %zu -q", i);
		job_settings(stdout, pl, pl->costs_path ? costs : NULL);
		fputc('\n', stdout);
	}
	return CLI_OK;
}

/* --point I: that point alone, its row on standard output. */
static int run_point(const struct plan *pl, const struct est_capture *cap)
{
	size_t n = est_grid_size(pl->axes, pl->naxes);
	struct est_options o = pl->opt;
	struct est_result r;
	struct est_row row;
	int rc;

	est_grid_point(pl->axes, pl->naxes, (size_t)pl->point, &pl->opt.knobs, &o.knobs);
	if ((rc = run_one(&o, cap, &r, pl->quiet)) != 0)
		return rc;
	est_row_of(&row, (size_t)pl->point, n, &o, &r);
	est_result_free(&r);
	return est_row_write(stdout, &row) == 0 ? CLI_OK : CLI_FAILED;
}

/* The first point without a row, said with how to run its job alone: CLI_USAGE; else CLI_OK. */
static int check_every_point(const struct plan *pl, const struct est_knobs *knobs,
			     const unsigned *line_of, size_t n)
{
	char name[EST_MAX_AXES * 96];

	for (size_t i = 0; i < n; i++)
		if (!line_of[i]) {
			cli_error("%s: %s: no row for point %zu (%s): did its job fail? (its line of "
				  "--emit-jobs, with --point %zu, runs it alone)", CMD,
				  pl->collect, i, point_name(pl, &knobs[i], name, sizeof(name)), i);
			return CLI_USAGE;
		}
	return CLI_OK;
}

/* --collect FILE: the jobs' rows, every point once, printed as the sweep in one process. */
static int collect_rows(const struct plan *pl, const struct est_capture *cap)
{
	size_t n = est_grid_size(pl->axes, pl->naxes);
	struct est_result *r = calloc(n, sizeof(*r));
	struct est_knobs *knobs = calloc(n, sizeof(*knobs));
	unsigned *line_of = calloc(n, sizeof(*line_of));
	char err[1024];
	int rc = CLI_FAILED;
	FILE *in;

	if (!r || !knobs || !line_of)
		goto out;
	grid_knobs(pl, knobs, n);
	rc = CLI_USAGE;
	if (!(in = cli_rows_open(CMD, pl->collect)))
		goto out;
	if (est_rows_read(in, pl->collect, &pl->opt, pl->axes, pl->naxes, cap, r, line_of, err,
			  sizeof(err)) != 0)
		cli_error("%s: %s", CMD, err);
	else if (check_every_point(pl, knobs, line_of, n) == CLI_OK)
		rc = print_sweep(pl, knobs, r, n);
	cli_rows_close(in);
out:
	free(line_of);
	free(knobs);
	free(r);
	return rc;
}

static int print_workload(const struct plan *pl, const struct est_capture *cap)
{
	char *text, err[640];

	if (est_workload_text(&pl->opt, cap, &text, err, sizeof(err)) != 0) {
		cli_error("%s: %s", CMD, err);
		return CLI_USAGE;
	}
	fputs(text, stdout);
	free(text);
	return fflush(stdout) == 0 ? CLI_OK : CLI_FAILED;
}

/* What the plan says to do with the capture read. */
static int run_plan(const struct plan *pl, const struct est_capture *cap)
{
	if (pl->print_workload)
		return print_workload(pl, cap);
	if (pl->emit_jobs)
		return emit_jobs(pl, cap);
	if (pl->point >= 0)
		return run_point(pl, cap);
	if (pl->collect)
		return collect_rows(pl, cap);
	return pl->naxes ? estimate_sweep(pl, cap) : estimate_one(pl, cap);
}

int cmd_estimate(int argc, char **argv)
{
	struct est_capture cap;
	struct cli_args args;
	struct plan *pl = calloc(1, sizeof(*pl));
	char path[4096];
	bool had_dashdash = false, temporary = false;
	int rc;

	if (!pl)
		return CLI_FAILED;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			had_dashdash = true;
			break;
		}
	rc = cli_args_parse(&estimate_spec, argc, argv, &args);
	if (rc == 0)
		rc = read_plan(&args, had_dashdash, pl);
	if (rc != 0)
		goto out;
	if (!pl->capture) {
		temporary = !pl->keep;
		if ((rc = capture_first(pl, path, sizeof(path))) != 0)
			goto out; /* capture_first removed a temporary file it could not fill */
	}
	pl->opt.capture = pl->capture;
	if ((rc = load(pl, &cap)) != 0)
		goto out_file;
	rc = run_plan(pl, &cap);
	est_capture_free(&cap);
out_file:
	if (temporary)
		unlink(path);
out:
	free(pl);
	return rc;
}
