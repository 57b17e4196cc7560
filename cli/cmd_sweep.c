/*
 * cmd_sweep.c - `ksmkit sweep`: run the benchmark sweeps (sweep/), one
 * point at a time for GNU parallel, or all of them into result files, charts
 * and a summary table; and collect the rows of parallel jobs.
 *
 * The jobs --emit-jobs prints run the simulator's series only: it is
 * deterministic, so a point gives the same rows on any machine and the
 * collected sweep is byte for byte the one run here (the kernel's series
 * measure one machine and stay with `ksmkit sweep NAME` there). A job is
 * one self-contained command line: this program by its absolute path (or
 * --ksmkit CMD) and every file it reads by its absolute path.
 */
#include "config.h"
#include "cli.h"
#include "cli_args.h"
#include "cli_jobs.h"
#include "cli_output.h"
#include "cli_sim.h"
#include "calib.h"
#include "guest.h"
#include "sweep.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_DIR "ksmkit-sweeps"
#define DEFAULT_RUNS 5

struct sweep_args {
	const char *name;       /* a sweep, or "all" */
	const char *dir;
	const char *costs_path;
	const char *ksmkit;     /* --emit-jobs: the command to print */
	const char *workloads;
	unsigned runs;
	long point;             /* --point I, or -1 */
	long print_workload;    /* --print-workload I, or -1 */
	long series;            /* with --print-workload */
	double scale;
	bool sim_only, no_guest, force, quiet, emit_jobs, list;
	bool calibrate;         /* predict --calibrate: fit the costs in its rounds */
	char **collect;         /* --collect FILE...: the remaining arguments */
	int ncollect;
};

/* ---- options ------------------------------------------------------------------ */

/*
 * The files the results of sweep @d go to in @dir (SWEEP_OUTPUTS of them):
 * the last two only with predict --calibrate, its fitted costs and the fit's
 * report as ksmkit calibrate prints it.
 */
#define SWEEP_OUTPUTS 7
enum { SWEEP_OUT_COSTS = 5, SWEEP_OUT_CALIBRATE = 6 };
static void result_paths(const char *dir, const struct sweep_def *d,
			 char path[SWEEP_OUTPUTS][4096])
{
	static const char *const suffix[SWEEP_OUTPUTS] = { ".csv", "-ratios.csv", ".png", ".svg",
							    ".txt", "-costs.ini", "-calibrate.txt" };

	for (int i = 0; i < SWEEP_OUTPUTS; i++)
		snprintf(path[i], 4096, "%s/%s%s", dir, d->name, suffix[i]);
}

/* No result written over a file to collect or the costs file (links included). */
static int check_outputs(const struct sweep_args *a)
{
	struct cli_file *inputs = calloc((size_t)a->ncollect + 1, sizeof(*inputs));
	struct cli_file outputs[SWEEP_OUTPUTS];
	static char path[SWEEP_OUTPUTS][4096];
	int rc = 0;

	if (!inputs) {
		cli_error("sweep: out of memory");
		return -1;
	}
	inputs[0] = (struct cli_file){ "the costs file", a->costs_path };
	for (int i = 0; i < a->ncollect; i++)
		inputs[i + 1] = (struct cli_file){ "the rows", a->collect[i] };
	for (size_t i = 0; i < sweep_count() && rc == 0; i++) {
		const struct sweep_def *d = sweep_at(i);

		if (strcmp(a->name, "all") != 0 && strcmp(a->name, d->name) != 0)
			continue;
		result_paths(a->dir, d, path);
		for (int k = 0; k < SWEEP_OUTPUTS; k++)
			outputs[k] = (struct cli_file){ "the result", path[k] };
		if (cli_check_outputs("sweep", outputs, SWEEP_OUTPUTS, inputs,
				      (size_t)a->ncollect + 1) != 0)
			rc = -1;
	}
	free(inputs);
	return rc;
}

static int parse_long(const char *opt, const char *text, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < min || v > max) {
		cli_error("sweep: %s: '%s' is not a number from %ld to %ld", opt, text, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

static const struct cli_opt sweep_options[] = {
	{ "output", 'o', true, 'o' },
	{ "runs", 'r', true, 'r' },
	{ "point", 0, true, 'p' },
	{ "sim-only", 0, false, 'S' },
	{ "no-guest", 0, false, 'G' },
	{ "force", 0, false, 'f' },
	{ "costs", 0, true, 'C' },
	{ "scale", 0, true, 's' },
	{ "workloads", 0, true, 'w' },
	{ "emit-jobs", 0, false, 'E' },
	{ "ksmkit", 0, true, 'k' },
	{ "collect", 0, false, 'c' },
	{ "print-workload", 0, true, 'P' },
	{ "series", 0, true, 'e' },
	{ "list", 0, false, 'l' },
	{ "quiet", 'q', false, 'q' },
	{ "calibrate", 0, false, 'K' },
	{ NULL, 0, false, 0 },
};

static const struct cli_rule sweep_rules[] = {
	{ CLI_ALONE, "list", NULL, 0, 0, NULL },
	{ CLI_AT_MOST_ONE, "point emit-jobs collect print-workload", NULL, 0, 0, NULL },
	{ CLI_NEEDS, "ksmkit emit-jobs", NULL, 0, 0, NULL },
	{ CLI_NEEDS, "series print-workload", NULL, 0, 0, NULL },
	{ CLI_EXCLUDES, "print-workload output runs sim-only no-guest force costs quiet",
	  "it only prints the workload", 0, 0, NULL },
	{ CLI_EXCLUDES, "collect runs force", "it measures nothing", 0, 0, NULL },
	{ CLI_EXCLUDES, "emit-jobs force", "the jobs run the simulator only", 0, 0, NULL },
	{ CLI_EXCLUDES, "point output", "a point's rows go to standard output", 0, 0, NULL },
	{ CLI_EXCLUDES, "emit-jobs output", "the jobs print their rows (--collect writes DIR)",
	  0, 0, NULL },
	{ CLI_EXCLUDES, "calibrate costs sim-only point emit-jobs collect print-workload",
	  "it fits the costs on this kernel between the sweep's own rounds", 0, 0, NULL },
	{ CLI_OPERANDS, "collect", NULL, 2, -1, "a sweep's name, then the files to collect" },
	{ 0, NULL, NULL, 0, 0, NULL },
};

static const struct cli_spec sweep_spec = {
	"sweep", NULL, sweep_options, sweep_rules, 1, 1, "a sweep's name or 'all'",
};

/* One option into @a: 0, or -1 (reported). */
static int take_option(struct sweep_args *a, int c, const char *value)
{
	long v;

	switch (c) {
	case 'o': a->dir = value; break;
	case 'r':
		if (parse_long("--runs", value, 1, 1000, &v) != 0)
			return -1;
		a->runs = (unsigned)v;
		break;
	case 'p':
		return parse_long("--point", value, 0, SWEEP_MAX_POINTS - 1, &a->point);
	case 'P':
		return parse_long("--print-workload", value, 0, SWEEP_MAX_POINTS - 1,
				  &a->print_workload);
	case 'e':
		return parse_long("--series", value, 0, SWEEP_MAX_SERIES - 1, &a->series);
	case 'S': a->sim_only = true; break;
	case 'G': a->no_guest = true; break;
	case 'f': a->force = true; break;
	case 'C': a->costs_path = value; break;
	case 's': {
		char *end;

		a->scale = strtod(value, &end);
		if (end == value || *end || !(a->scale >= 0.01 && a->scale <= 100)) {
			cli_error("sweep: --scale: '%s' is not a number from 0.01 to 100", value);
			return -1;
		}
		break;
	}
	case 'w': a->workloads = value; break;
	case 'E': a->emit_jobs = true; break;
	case 'k': a->ksmkit = value; break;
	case 'l': a->list = true; break;
	case 'q': a->quiet = true; break;
	case 'K': a->calibrate = true; break;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct sweep_args *a)
{
	struct cli_args args;
	const char *value;
	int c;

	*a = (struct sweep_args){ .dir = DEFAULT_DIR, .runs = DEFAULT_RUNS, .point = -1,
				  .print_workload = -1, .series = 0, .scale = 1.0 };
	if (cli_args_parse(&sweep_spec, argc, argv, &args) != 0)
		return -1;
	while ((c = cli_args_next(&args, &value)) != -1)
		if (take_option(a, c, value) != 0)
			return -1;
	if (a->list)
		return 0;
	a->name = args.operand[0];
	if (cli_args_has(&args, 'c')) {
		a->collect = args.operand + 1;
		a->ncollect = args.noperands - 1;
	}
	if ((a->point >= 0 || a->ncollect || a->print_workload >= 0 || a->emit_jobs) &&
	    strcmp(a->name, "all") == 0) {
		cli_error("sweep: --point, --emit-jobs, --collect and --print-workload take one "
			  "sweep, not 'all'");
		return -1;
	}
	if (strcmp(a->name, "all") != 0 && !sweep_find(a->name)) {
		cli_error("sweep: no sweep '%s' (ksmkit sweep --list)", a->name);
		return -1;
	}
	if (a->calibrate && strcmp(a->name, "predict") != 0) {
		cli_error("sweep: --calibrate is for predict only (the sweep that judges the "
			  "costs), not '%s'", a->name);
		return -1;
	}
	return check_outputs(a);
}

/* ---- the environment ------------------------------------------------------------ */

/* Whether the kernel series can run here; if not, why. */
static bool kernel_usable(char *why, size_t len)
{
	if (geteuid() != 0) {
		snprintf(why, len, "not root");
		return false;
	}
	if (access("/sys/kernel/mm/ksm/run", W_OK) != 0) {
		snprintf(why, len, "/sys/kernel/mm/ksm/run: %s", strerror(errno));
		return false;
	}
	return true;
}

static int make_env(const struct sweep_args *a, struct sweep_env *env, struct sim_costs *costs)
{
	char why[256];

	sweep_env_init(env);
	env->force = a->force;
	env->scale = a->scale;
	env->workloads_dir = a->workloads;
	if (!env->workloads_dir)
		env->workloads_dir = access("workloads/chains.wl", R_OK) == 0
					     ? "workloads"
					     : PKGDATADIR "/workloads";
	if (a->costs_path) {
		if (cli_load_costs(a->costs_path, costs) != 0)
			return -1;
		env->costs = costs;
	}
	if (cli_mem_available(&env->mem_available) != 0)
		env->mem_available = 0; /* unknown: not checked */
	env->kernel = !a->sim_only && kernel_usable(why, sizeof(why));
	if (!a->sim_only && !a->no_guest)
		env->guest_dir = kg_default_dir(GUEST_BUILD_DIR);
	if (!a->sim_only && !env->kernel && !a->quiet && a->print_workload < 0 && !a->emit_jobs &&
	    !a->ncollect)
		cli_error("sweep: the kernel's series are left out: %s (--sim-only says so "
			  "quietly)", why);
	return 0;
}

/* ---- modes ---------------------------------------------------------------------- */

static void list_sweeps(void)
{
	for (size_t i = 0; i < sweep_count(); i++) {
		const struct sweep_def *d = sweep_at(i);

		printf("%-10s %s (%zu points:", d->name, d->summary, d->npoints);
		for (size_t s = 0; s < d->nseries; s++)
			printf("%s %zu = %s", s ? "," : "", s, d->series[s].name);
		printf(")\n");
	}
}

static void show_progress(const struct sweep_def *d, size_t point, unsigned run,
			  unsigned runs, void *arg)
{
	const bool *tty = arg;
	char label[80];

	if (d->xname)
		snprintf(label, sizeof(label), "%s", d->xname[point]);
	else
		snprintf(label, sizeof(label), "x = %g", d->x[point]);
	if (*tty)
		fprintf(stderr, "\rksmkit sweep %s: point %zu/%zu (%s), run %u/%u\033[K", d->name,
			point + 1, d->npoints, label, run + 1, runs);
	else if (run == 0)
		fprintf(stderr, "ksmkit sweep %s: point %zu/%zu (%s), %u runs\n", d->name,
			point + 1, d->npoints, label, runs);
	fflush(stderr);
}

static int run_one_point(const struct sweep_args *a, const struct sweep_env *env)
{
	const struct sweep_def *d = sweep_find(a->name);
	struct sweep_point_result res;
	bool tty = isatty(STDERR_FILENO);
	char err[512];

	if ((size_t)a->point >= d->npoints) {
		cli_error("sweep: %s has points 0 to %zu", d->name, d->npoints - 1);
		return CLI_USAGE;
	}
	if (sweep_point(d, (size_t)a->point, a->runs, env, a->quiet ? NULL : show_progress, &tty,
			&res, err, sizeof(err)) != 0) {
		cli_error("sweep: %s", err);
		return CLI_FAILED;
	}
	if (tty && !a->quiet)
		fputc('\n', stderr);
	printf("# ksmkit sweep %s --point %ld: %s\n", d->name, a->point, d->ylabel);
	sweep_write_header(stdout);
	sweep_write_point(d, (size_t)a->point, &res, stdout);
	return CLI_OK;
}

static size_t series_on(const struct sweep_def *d, enum sweep_engine engine)
{
	size_t n = 0;

	for (size_t s = 0; s < d->nseries; s++)
		n += d->series[s].engine == engine;
	return n;
}

/* On stderr: the series of @d the jobs leave out, and where they can run. */
static void note_left_out(const struct sweep_def *d)
{
	char names[SWEEP_MAX_SERIES * (SWEEP_NAME_MAX + 4)] = "";
	size_t len = 0;

	for (size_t s = 0; s < d->nseries; s++)
		if (d->series[s].engine != SWEEP_SIM && len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s'%s'",
						len ? ", " : "", d->series[s].name);
	cli_error("sweep: %s: the jobs run the simulator's series only; %s run on one machine "
		  "(ksmkit sweep %s)", d->name, names, d->name);
}

/*
 * One command line per point of @d, each measuring the simulator's series
 * there and printing its rows. A sweep without simulator series is refused
 * (CLI_USAGE); one with kernel or guest series too is told to leave them out.
 */
static int emit_jobs(const struct sweep_args *a, const struct sweep_def *d,
		     const struct sweep_env *env)
{
	char cmd[PATH_MAX], workloads[PATH_MAX], costs[PATH_MAX], scale[32];
	size_t sim = series_on(d, SWEEP_SIM);

	if (sim == 0) {
		cli_error("sweep: %s: --emit-jobs runs the simulator's series and %s has none "
			  "(run it on one machine: ksmkit sweep %s)", d->name, d->name, d->name);
		return CLI_USAGE;
	}
	if (sim < d->nseries && !a->sim_only && !a->quiet)
		note_left_out(d);
	cli_job_program(a->ksmkit, cmd, sizeof(cmd));
	cli_job_path(env->workloads_dir, workloads, sizeof(workloads));
	if (a->costs_path)
		cli_job_path(a->costs_path, costs, sizeof(costs));
	snprintf(scale, sizeof(scale), "%g", a->scale);
	for (size_t p = 0; p < d->npoints; p++) {
		cli_job_word(stdout, cmd);
		printf(" sweep %s --point %zu --runs %u -q --sim-only", d->name, p, a->runs);
		if (a->scale != 1.0)
			printf(" --scale %s", scale);
		if (a->costs_path) {
			fputs(" --costs ", stdout);
			cli_job_word(stdout, costs);
		}
		fputs(" --workloads ", stdout);
		cli_job_word(stdout, workloads);
		putchar('\n');
	}
	return CLI_OK;
}

/* The summary table and the sweep's explanation, to @out. */
static void write_summary(const struct sweep_def *d, const struct sweep_env *env,
			  const struct sweep_point_result *res, FILE *out)
{
	sweep_write_summary(d, res, out);
	if (d->explain)
		d->explain(d, env, res, out);
}

/* The summary kept beside the CSV files as DIR/NAME.txt. */
static int save_summary(const struct sweep_args *a, const struct sweep_def *d,
			const struct sweep_env *env, const struct sweep_point_result *res)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.txt", a->dir, d->name);
	if (!(f = cli_output_open("sweep", path)))
		return -1;
	write_summary(d, env, res, f);
	return cli_output_close("sweep", f, path) == CLI_OK ? 0 : -1;
}

/* Results, charts and the summary of one sweep's measured points. */
static int finish(const struct sweep_args *a, const struct sweep_def *d,
		  const struct sweep_env *env, const struct sweep_point_result *res)
{
	char err[512];
	bool any = false;

	for (size_t i = 0; i < d->npoints; i++)
		for (size_t s = 0; s < d->nseries; s++)
			any |= res[i].series[s].n > 0;
	if (!any) {
		printf("%s: nothing measured here (its series need the kernel)\n\n", d->name);
		return CLI_SKIPPED;
	}
	if (sweep_write_results(d, res, a->dir, err, sizeof(err)) != 0) {
		cli_error("sweep: %s", err);
		return CLI_FAILED;
	}
	if (save_summary(a, d, env, res) != 0)
		return CLI_FAILED;
	write_summary(d, env, res, stdout);
	printf("(results in %s/%s*)\n\n", a->dir, d->name);
	fflush(stdout);
	return CLI_OK;
}

/* predict --calibrate: the costs it fitted, and calibrate's report of the fit. */
static int save_fit(const struct sweep_args *a, const struct sweep_def *d,
		    const struct sweep_env *env)
{
	const struct calib_result *res = sweep_fit_result(env->fit);
	char path[SWEEP_OUTPUTS][4096], comment[256];
	FILE *f;

	result_paths(a->dir, d, path);
	snprintf(comment, sizeof(comment),
		 "ksmkit sweep %s --calibrate: microbenchmarks and a fit of the kernel's ksmd CPU "
		 "time in %zu calibration runs spread over the sweep's %u rounds",
		 d->name, sweep_fit_runs(env->fit), a->runs);
	if (cli_calib_write_costs("sweep", res, comment, path[SWEEP_OUT_COSTS]) != 0)
		return -1;
	if (!(f = cli_output_open("sweep", path[SWEEP_OUT_CALIBRATE])))
		return -1;
	fprintf(f, "# %s\n", comment);
	cli_calib_report(res, f);
	return cli_output_close("sweep", f, path[SWEEP_OUT_CALIBRATE]) == CLI_OK ? 0 : -1;
}

static int run_sweep(const struct sweep_args *a, const struct sweep_def *d,
		     const struct sweep_env *env)
{
	struct sweep_point_result res[SWEEP_MAX_POINTS];
	sweep_progress_fn progress = a->quiet ? NULL : show_progress;
	bool tty = isatty(STDERR_FILENO);
	char err[512];
	int rc = 0;

	if (d->rounds)
		rc = sweep_rounds(d, a->runs, env, progress, &tty, res, err, sizeof(err));
	else
		for (size_t p = 0; !rc && p < d->npoints; p++)
			rc = sweep_point(d, p, a->runs, env, progress, &tty, &res[p], err,
					 sizeof(err));
	if (rc != 0) {
		if (tty && !a->quiet)
			fputc('\n', stderr);
		cli_error("sweep: %s", err);
		return CLI_FAILED;
	}
	if (tty && !a->quiet)
		fputc('\n', stderr);
	rc = finish(a, d, env, res); /* makes the directory */
	if (rc == CLI_OK && sweep_fit_result(env->fit) && save_fit(a, d, env) != 0)
		return CLI_FAILED;
	return rc;
}

static int collect(const struct sweep_args *a, const struct sweep_env *env)
{
	const struct sweep_def *d = sweep_find(a->name);
	struct sweep_point_result res[SWEEP_MAX_POINTS];
	char err[512];

	long missing;

	memset(res, 0, sizeof(res));
	for (int i = 0; i < a->ncollect; i++) {
		FILE *f = cli_rows_open("sweep", a->collect[i]);
		int rc;

		if (!f)
			return CLI_USAGE;
		rc = sweep_read_rows(d, f, a->collect[i], res, err, sizeof(err));
		cli_rows_close(f);
		if (rc != 0) {
			cli_error("%s", err);
			return CLI_USAGE;
		}
	}
	missing = sweep_first_unmeasured(d, res);
	if (missing >= 0) {
		cli_error("sweep: %s: no rows for point %ld (x = %g): did its job fail? (ksmkit "
			  "sweep %s --point %ld runs it alone)", d->name, missing, d->x[missing],
			  d->name, missing);
		return CLI_USAGE;
	}
	return finish(a, d, env, res);
}

static int print_workload(const struct sweep_args *a, const struct sweep_env *env)
{
	const struct sweep_def *d = sweep_find(a->name);
	static char buf[32768];
	char err[512];

	if (sweep_workload_text(d, (size_t)a->print_workload, (size_t)a->series, env, buf,
				sizeof(buf), err, sizeof(err)) != 0) {
		cli_error("sweep: %s", err);
		return CLI_USAGE;
	}
	fputs(buf, stdout);
	return CLI_OK;
}

static void print_note(const char *line, void *arg)
{
	(void)arg;
	fprintf(stderr, "%s\n", line);
}

/*
 * predict --calibrate: the calibration's microbenchmarks, then the sweep
 * with the calibration's kernel runs between its own (sweep_fit_new).
 * --sim-only is refused with it by the rules: here the kernel is unusable.
 */
static int run_calibrated(const struct sweep_args *a, struct sweep_env *env)
{
	struct calib_options opt;
	char why[256], err[512];
	int rc;

	if (!env->kernel) {
		kernel_usable(why, sizeof(why));
		cli_error("sweep: --calibrate measures this kernel's ksmd, and cannot here: %s",
			  why);
		return CLI_SKIPPED;
	}
	calib_options_init(&opt);
	opt.force = a->force;
	opt.note = a->quiet ? NULL : print_note;
	if (sweep_fit_new(&opt, &env->fit, err, sizeof(err)) != 0) {
		cli_error("sweep: calibration: %s", err);
		return CLI_FAILED;
	}
	rc = run_sweep(a, sweep_find(a->name), env);
	sweep_fit_free(env->fit);
	env->fit = NULL;
	return rc;
}

int cmd_sweep(int argc, char **argv)
{
	struct sweep_args a;
	struct sweep_env env;
	struct sim_costs costs;
	int worst = CLI_OK;

	if (parse_args(argc, argv, &a) != 0)
		return CLI_USAGE;
	if (a.list) {
		list_sweeps();
		return CLI_OK;
	}
	if (make_env(&a, &env, &costs) != 0)
		return CLI_USAGE;
	if (a.calibrate)
		return run_calibrated(&a, &env);
	if (a.print_workload >= 0)
		return print_workload(&a, &env);
	if (a.point >= 0)
		return run_one_point(&a, &env);
	if (a.ncollect)
		return collect(&a, &env);
	if (a.emit_jobs)
		return emit_jobs(&a, sweep_find(a.name), &env);
	for (size_t i = 0; i < sweep_count(); i++) {
		const struct sweep_def *d = sweep_at(i);
		int rc;

		if (strcmp(a.name, "all") != 0 && strcmp(a.name, d->name) != 0)
			continue;
		rc = run_sweep(&a, d, &env);
		if (rc == CLI_FAILED || rc == CLI_USAGE)
			return rc;
		if (rc == CLI_SKIPPED && strcmp(a.name, "all") != 0)
			worst = CLI_SKIPPED;
	}
	return worst;
}
