/*
 * cmd_demo.c - `ksmkit demo`: the main job. Every workload of the default
 * set (or those named) runs on this kernel, or with --guest nodes=N all of
 * them in one qemu NUMA guest, and on the simulator following the semantics
 * of the kernel that ran; one line per workload says whether they match, and
 * where they first diverge; the traces (CSV) and a chart per workload (sim
 * vs kernel, when ksmkit was built with GNU libplot) go to an output
 * directory. Where the kernel side cannot run (not root, no KSM, a NUMA node
 * this machine lacks, a knob the kernel lacks), the simulator's side is
 * still run and saved, and the reason is given. Each workload goes through
 * the cross-validation pipeline (compare/xval.h); this file turns its
 * results into lines, files and the exit status.
 */
#include "config.h"
#include "cli.h"
#include "cli_args.h"
#include "cli_output.h"
#include "cli_sim.h"
#include "xval.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HAVE_PLOT
#include "../plots/plot.h"
#endif

struct demo {
	const char *outdir;
	const char *guest;      /* --guest SPEC, or NULL for this kernel */
	struct sim_costs costs;
	bool force, quiet;
	unsigned matched, within, differed, sim_only, failed;
	unsigned unwritten;     /* traces and charts that could not be written */
};

/* --- outputs ------------------------------------------------------------------- */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Where a workload's output of @kind ("sim.csv", "png") goes. */
static void output_path(const struct demo *d, const char *name, const char *kind, char *path,
			size_t len)
{
	snprintf(path, len, "%s/%.*s.%s", d->outdir, (int)(strlen(name) - 3), name, kind);
}

static void save_trace(struct demo *d, const char *name, const char *side,
		       const struct trace *t)
{
	char path[4096], kind[32];
	FILE *f;

	snprintf(kind, sizeof(kind), "%s.csv", side);
	output_path(d, name, kind, path, sizeof(path));
	if (!(f = cli_output_open("demo", path))) {
		d->unwritten++;
		return;
	}
	trace_write_csv(t, f);
	if (cli_output_close("demo", f, path) != CLI_OK)
		d->unwritten++;
}

#ifdef HAVE_PLOT
static void save_chart(struct demo *d, const char *name, const struct trace *sim,
		       const struct trace *kernel)
{
	static const int counters[] = { TRACE_PAGES_SHARED, TRACE_PAGES_SHARING,
					TRACE_PAGES_UNSHARED, TRACE_PAGES_VOLATILE };
	struct plot_chart *c = plot_new(PLOT_LINES);
	char path[4096], title[160], err[256];
	int rc = -1;

	if (!c)
		return;
	output_path(d, name, "png", path, sizeof(path));
	snprintf(title, sizeof(title), "%s: simulator (solid) vs kernel (dashed)", name);
	if (plot_add_trace_counters(c, sim, kernel ? "sim" : NULL, counters, 4, PLOT_SOLID, err,
				    sizeof(err)) == 0 &&
	    (!kernel || plot_add_trace_counters(c, kernel, "kernel", counters, 4, PLOT_DASHED, err,
						sizeof(err)) == 0) &&
	    plot_set_labels(c, kernel ? title : name, "full scans", "pages", err, sizeof(err)) == 0)
		rc = plot_write(c, path, 800, 500, err, sizeof(err));
	if (rc != 0) {
		cli_error("demo: chart %s: %s", path, err);
		d->unwritten++;
	}
	plot_free(c);
}
#else
static void save_chart(struct demo *d, const char *name, const struct trace *sim,
		       const struct trace *kernel)
{
	(void)d, (void)name, (void)sim, (void)kernel; /* plots: not built */
}
#endif

/* --- one workload ---------------------------------------------------------------- */

static void print_verdict(struct demo *d, const char *name, const struct xval_result *res)
{
	const struct cmp_report *rep = &res->report;
	const struct cmp_diff *first = rep->ndiffs ? &rep->diff[0] : NULL;

	switch (res->verdict) {
	case XVAL_MATCH:
		d->matched++;
		printf("%-28s match     %zu scans, %zu page partitions, every counter\n", name,
		       rep->rows_compared, rep->partitions_compared);
		break;
	case XVAL_WITHIN:
		d->within++;
		printf("%-28s within %.0f%% (not deterministic: continuous writers or a time "
		       "stop), %zu scans\n", name, XVAL_TOLERANCE * 100, rep->rows_compared);
		break;
	default:
		d->differed++;
		printf("%-28s DIFFERS   scan %llu %s: sim %lld, kernel %lld%s%s\n", name,
		       (unsigned long long)first->scan, first->what, (long long)first->a,
		       (long long)first->b, first->detail[0] ? ": " : "", first->detail);
	}
}

/* The line of a workload a step of the pipeline failed for. */
static void print_failure(struct demo *d, const char *name, const struct xval_result *res)
{
	d->failed++;
	switch (res->failed) {
	case XVAL_STEP_KERNEL:
		printf("%-28s FAILED    kernel: %s\n", name, res->kernel_message);
		break;
	case XVAL_STEP_SEMANTICS:
		printf("%-28s FAILED    %s\n", name, res->why);
		break;
	case XVAL_STEP_SIM:
		printf("%-28s FAILED    simulator: %s\n", name, res->why);
		break;
	default:
		printf("%-28s FAILED    out of memory\n", name);
	}
}

/* The verdict line of @res, with the traces and the chart it leaves. */
static void report_one(struct demo *d, const char *name, const struct xval_result *res,
		       bool guest)
{
	if (res->verdict == XVAL_FAILED && res->failed != XVAL_STEP_COMPARE) {
		print_failure(d, name, res);
		return;
	}
	save_trace(d, name, "sim", res->sim.trace);
	if (res->verdict == XVAL_SIM_ONLY) {
		d->sim_only++;
		printf("%-28s sim only  kernel side skipped: %s\n", name, res->kernel_message);
		save_chart(d, name, res->sim.trace, NULL);
		return;
	}
	save_trace(d, name, guest ? "guest" : "kernel", res->kernel.trace);
	if (res->verdict == XVAL_FAILED) {
		print_failure(d, name, res);
		return;
	}
	print_verdict(d, name, res);
	save_chart(d, name, res->sim.trace, res->kernel.trace);
}

/*
 * One workload: the kernel side (@guest's run, taken, or a run here), then
 * the simulator in the semantics of the kernel that ran, then the verdict.
 * Partitions are captured where they are compared: deterministic runs.
 */
static void run_one(struct demo *d, struct workload *wl, struct xval_guest_run *guest)
{
	const char *name = base_name(wl->path);
	struct xval_options opt;
	struct xval_result res;
	struct kb_options host;

	if (!d->quiet && isatty(STDOUT_FILENO))
		printf("%-28s running...\r", name), fflush(stdout);
	xval_options_init(&opt);
	opt.costs = &d->costs;
	opt.pages = wl->deterministic;
	kb_options_init(&host);
	host.force = d->force;
	opt.host = &host;
	if (guest)
		xval_follow(wl, guest, &opt, &res);
	else
		xval_run(wl, &opt, &res);
	report_one(d, name, &res, guest != NULL);
	fflush(stdout);
	xval_result_free(&res);
}

/* Parse every file; a bad one gets its verdict line now and is left out. */
static size_t parse_all(struct demo *d, char **paths, size_t n, struct workload **wls)
{
	size_t ok = 0;

	for (size_t i = 0; i < n; i++) {
		struct wl_error werr;

		if (wl_parse_file(paths[i], &wls[ok], &werr) == 0) {
			/* refused by admission (cli_sim.h): as bad as a parse error */
			if (cli_admit(wls[ok], &(struct sim_admit_options){
					      .costs = &d->costs, .traces = 2,
					      .capture_bytes = XVAL_CAPTURE_BYTES },
				      werr.text, sizeof(werr.text)) == 0) {
				ok++;
				continue;
			}
			wl_free(wls[ok]);
		}
		d->failed++;
		printf("%-28s BAD       %s\n", base_name(paths[i]), werr.text);
	}
	return ok;
}

/* Every workload: in one guest, or one after the other on this kernel. */
static int run_all(struct demo *d, char **paths, size_t n)
{
	struct workload **wls = calloc(n ? n : 1, sizeof(*wls));
	struct xval_guest_run *runs = NULL;
	size_t ok;
	int rc = CLI_OK;

	if (!wls) {
		cli_error("demo: out of memory");
		return CLI_FAILED;
	}
	ok = parse_all(d, paths, n, wls);
	if (d->guest && ok) {
		struct kg_options g;
		char why[200], release[128], msg[2048];
		int status;

		kg_options_init(&g);
		runs = calloc(ok, sizeof(*runs));
		if (!runs || kg_parse_spec(d->guest, &g, why, sizeof(why)) != 0) {
			cli_error("demo: --guest %s: %s", d->guest, runs ? why : "out of memory");
			rc = CLI_USAGE;
			goto out;
		}
		g.dir = kg_default_dir(GUEST_BUILD_DIR);
		status = xval_run_guest((const struct workload *const *)wls, ok, &g, true, runs,
					release, sizeof(release), msg, sizeof(msg));
		if (status != KB_OK) {
			/* the guest itself could not run: every kernel side says why */
			for (size_t i = 0; i < ok; i++) {
				xval_side_free(&runs[i].side);
				runs[i].status = status == KB_SKIPPED ? KB_SKIPPED : KB_FAILED;
				snprintf(runs[i].message, sizeof(runs[i].message), "%s", msg);
			}
		} else {
			printf("# one guest, Linux %s with %s, ran them all\n", release, d->guest);
		}
	}
	for (size_t i = 0; i < ok; i++)
		run_one(d, wls[i], runs ? &runs[i] : NULL);
out:
	for (size_t i = 0; i < ok; i++)
		wl_free(wls[i]);
	free(wls);
	free(runs);
	return rc;
}

static const struct cli_opt demo_options[] = {
	{ "output", 'o', true, 'o' },
	{ "force", 0, false, 'f' },
	{ "quiet", 'q', false, 'q' },
	{ "costs", 0, true, 'C' },
	{ "guest", 0, true, 'G' },
	{ NULL, 0, false, 0 },
};

static const struct cli_rule demo_rules[] = {
	{ CLI_AT_MOST_ONE, "guest force", "a guest never touches this machine's KSM", 0, 0, NULL },
	{ 0, NULL, NULL, 0, 0, NULL },
};

static const struct cli_spec demo_spec = {
	"demo", NULL, demo_options, demo_rules, 0, -1, "workload files, or none",
};

/* No trace or chart written over a workload or the costs file (links included). */
static int check_outputs(const struct demo *d, char **list, size_t n, const char *costs)
{
	static const char *const kinds[] = { "sim.csv", "kernel.csv", "guest.csv", "png" };
	struct cli_file *inputs = calloc(n + 1, sizeof(*inputs));
	char paths[4][4096];
	int rc = 0;

	if (!inputs) {
		cli_error("demo: out of memory");
		return CLI_FAILED;
	}
	for (size_t i = 0; i < n; i++)
		inputs[i] = (struct cli_file){ "the workload", list[i] };
	inputs[n] = (struct cli_file){ "the costs file", costs };
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct cli_file outputs[4];

		for (size_t k = 0; k < 4; k++) {
			output_path(d, base_name(list[i]), kinds[k], paths[k], sizeof(paths[k]));
			outputs[k] = (struct cli_file){ "the output", paths[k] };
		}
		rc = cli_check_outputs("demo", outputs, 4, inputs, n + 1);
	}
	free(inputs);
	return rc;
}

int cmd_demo(int argc, char **argv)
{
	struct demo d = { .outdir = "ksmkit-demo" };
	struct cli_args args;
	const char *costs = NULL, *value;
	char **list = NULL;
	size_t n = 0;
	int c, rc;

	if (cli_args_parse(&demo_spec, argc, argv, &args) != 0)
		return CLI_USAGE;
	while ((c = cli_args_next(&args, &value)) != -1) {
		switch (c) {
		case 'o': d.outdir = value; break;
		case 'f': d.force = true; break;
		case 'q': d.quiet = true; break;
		case 'C': costs = value; break;
		case 'G': d.guest = value; break;
		}
	}
	if (cli_load_costs(costs, &d.costs) != 0)
		return CLI_USAGE;
	if (args.noperands) {
		list = args.operand;
		n = (size_t)args.noperands;
	} else if (!(list = cli_default_set("workloads", &n)) || n == 0) {
		cli_error("demo: no workloads: neither ./workloads nor %s/workloads has any",
			  PKGDATADIR);
		free(list);
		return CLI_USAGE;
	}
	if ((rc = check_outputs(&d, list, n, costs)) != 0)
		goto out;
	if (mkdir(d.outdir, 0777) != 0 && errno != EEXIST) {
		cli_error("demo: cannot create %s: %s", d.outdir, strerror(errno));
		rc = CLI_FAILED;
		goto out;
	}
	printf("# ksmkit demo: %zu workloads on the simulator and %s; traces and "
	       "charts in %s/\n", n, d.guest ? "a qemu NUMA guest's kernel" : "this kernel",
	       d.outdir);
	if (run_all(&d, list, n) != CLI_OK) {
		rc = CLI_USAGE;
		goto out;
	}
	printf("# %u match, %u within tolerance, %u differ, %u simulator only, %u failed\n",
	       d.matched, d.within, d.differed, d.sim_only, d.failed);
	if (d.unwritten)
		cli_error("demo: %u trace(s) or chart(s) could not be written", d.unwritten);
	rc = d.differed || d.failed || d.unwritten ? CLI_FAILED : CLI_OK;
out:
	if (!args.noperands)
		cli_workloads_free(list, n);
	return rc;
}
