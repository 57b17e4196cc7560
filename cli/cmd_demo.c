/*
 * cmd_demo.c - `ksmkit demo`: the main job. Every workload of the default
 * set (or those named) runs on the simulator and on this kernel; one line per
 * workload says whether they match, and where they first diverge; the traces
 * (CSV) and a chart per workload (sim vs kernel, when ksmkit was built with
 * GNU libplot) go to an output directory. Where the kernel side cannot run
 * (not root, no KSM, a NUMA node this machine lacks), the simulator's side is
 * still run and saved, and the reason is given.
 */
#include "config.h"
#include "cli.h"
#include "cli_engines.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HAVE_PLOT
#include "../plots/plot.h"
#endif

struct demo {
	const char *outdir;
	struct sim_costs costs;
	bool force, quiet;
	unsigned matched, within, differed, sim_only, failed;
};

/* --- the default set ---------------------------------------------------------- */

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.wl files of @dir, sorted; NULL when the directory cannot be read. */
static char **workloads_in(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **list = NULL;

	*n = 0;
	if (!d)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		char **grown;

		if (len < 4 || strcmp(de->d_name + len - 3, ".wl") != 0)
			continue;
		grown = realloc(list, (*n + 1) * sizeof(*list));
		if (!grown)
			break;
		list = grown;
		if (asprintf(&list[*n], "%s/%s", dir, de->d_name) < 0)
			break;
		(*n)++;
	}
	closedir(d);
	if (list)
		qsort(list, *n, sizeof(*list), by_name);
	return list;
}

/* ./workloads in a source tree, else the installed set. */
static char **default_set(size_t *n)
{
	char **list = workloads_in("workloads", n);

	if (list && *n)
		return list;
	free(list);
	return workloads_in(PKGDATADIR "/workloads", n);
}

/* --- outputs ------------------------------------------------------------------- */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static void save_trace(const struct demo *d, const char *name, const char *side,
		       const struct trace *t)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%.*s.%s.csv", d->outdir,
		 (int)(strlen(name) - 3), name, side);
	f = fopen(path, "w");
	if (!f || trace_write_csv(t, f) != 0)
		cli_error("demo: cannot write %s: %s", path, strerror(errno));
	if (f)
		fclose(f);
}

#ifdef HAVE_PLOT
static void save_chart(const struct demo *d, const char *name, const struct trace *sim,
		       const struct trace *kernel)
{
	static const int counters[] = { TRACE_PAGES_SHARED, TRACE_PAGES_SHARING,
					TRACE_PAGES_UNSHARED, TRACE_PAGES_VOLATILE };
	struct plot_chart *c = plot_new(PLOT_LINES);
	char path[4096], title[160], err[256];
	int rc = -1;

	if (!c)
		return;
	snprintf(path, sizeof(path), "%s/%.*s.png", d->outdir, (int)(strlen(name) - 3), name);
	snprintf(title, sizeof(title), "%s: simulator (solid) vs kernel (dashed)", name);
	if (plot_add_trace_counters(c, sim, kernel ? "sim" : NULL, counters, 4, PLOT_SOLID, err,
				    sizeof(err)) == 0 &&
	    (!kernel || plot_add_trace_counters(c, kernel, "kernel", counters, 4, PLOT_DASHED, err,
						sizeof(err)) == 0) &&
	    plot_set_labels(c, kernel ? title : name, "full scans", "pages", err, sizeof(err)) == 0)
		rc = plot_write(c, path, 800, 500, err, sizeof(err));
	if (rc != 0)
		cli_error("demo: chart %s: %s", path, err);
	plot_free(c);
}
#else
static void save_chart(const struct demo *d, const char *name, const struct trace *sim,
		       const struct trace *kernel)
{
	(void)d, (void)name, (void)sim, (void)kernel; /* plots: not built */
}
#endif

/* --- one workload ---------------------------------------------------------------- */

static void print_verdict(struct demo *d, const char *name, const struct workload *wl,
			  const struct cmp_report *rep)
{
	const struct cmp_diff *first = rep->ndiffs ? &rep->diff[0] : NULL;

	if (cmp_report_equal(rep) && wl->deterministic) {
		d->matched++;
		printf("%-28s match     %zu scans, %zu page partitions, every counter\n", name,
		       rep->rows_compared, rep->partitions_compared);
	} else if (cmp_report_equal(rep)) {
		d->within++;
		printf("%-28s within %.0f%% (not deterministic: continuous writers or a time "
		       "stop), %zu scans\n", name, ENGINES_TOLERANCE * 100, rep->rows_compared);
	} else {
		d->differed++;
		printf("%-28s DIFFERS   scan %llu %s: sim %lld, kernel %lld%s%s\n", name,
		       (unsigned long long)first->scan, first->what, (long long)first->a,
		       (long long)first->b, first->detail[0] ? ": " : "", first->detail);
	}
}

static void run_one(struct demo *d, const char *path)
{
	const char *name = base_name(path);
	struct engine_run sim = { 0 }, kernel = { 0 };
	struct kb_options kopt;
	struct cmp_report rep;
	struct workload *wl;
	struct wl_error werr;
	char msg[512];
	int status;

	cmp_report_init(&rep);
	if (wl_parse_file(path, &wl, &werr) != 0) {
		d->failed++;
		printf("%-28s BAD       %s\n", name, werr.text);
		return;
	}
	if (!d->quiet && isatty(STDOUT_FILENO))
		printf("%-28s running...\r", name), fflush(stdout);
	if (engines_run_sim(wl, wl->deterministic, &d->costs, &sim, msg, sizeof(msg)) != 0) {
		d->failed++;
		printf("%-28s FAILED    simulator: %s\n", name, msg);
		goto out;
	}
	save_trace(d, name, "sim", sim.trace);
	kb_options_init(&kopt);
	kopt.force = d->force;
	status = engines_run_kernel(wl, &kopt, wl->deterministic, &kernel, msg, sizeof(msg));
	if (status == KB_SKIPPED) {
		d->sim_only++;
		printf("%-28s sim only  kernel side skipped: %s\n", name, msg);
		save_chart(d, name, sim.trace, NULL);
		goto out;
	}
	if (status != KB_OK) {
		d->failed++;
		printf("%-28s FAILED    kernel: %s\n", name, msg);
		goto out;
	}
	save_trace(d, name, "kernel", kernel.trace);
	if (!wl->deterministic) {
		/* a timed run: partitions are not compared, and were not captured */
		free(sim.pages);
		sim.pages = NULL;
		sim.npages = 0;
	}
	if (engines_compare(wl, &sim, &kernel, &rep) != 0) {
		d->failed++;
		printf("%-28s FAILED    out of memory\n", name);
		goto out;
	}
	print_verdict(d, name, wl, &rep);
	save_chart(d, name, sim.trace, kernel.trace);
out:
	fflush(stdout);
	cmp_report_free(&rep);
	engines_free(&sim);
	engines_free(&kernel);
	wl_free(wl);
}

int cmd_demo(int argc, char **argv)
{
	static const struct option options[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "costs", required_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	struct demo d = { .outdir = "ksmkit-demo" };
	const char *costs = NULL;
	char **list = NULL;
	size_t n = 0;
	int c;

	while ((c = getopt_long(argc, argv, "o:q", options, NULL)) != -1) {
		switch (c) {
		case 'o': d.outdir = optarg; break;
		case 'f': d.force = true; break;
		case 'q': d.quiet = true; break;
		case 'C': costs = optarg; break;
		default: return CLI_USAGE;
		}
	}
	if (engines_load_costs(costs, &d.costs) != 0)
		return CLI_USAGE;
	if (optind < argc) {
		list = argv + optind;
		n = (size_t)(argc - optind);
	} else if (!(list = default_set(&n)) || n == 0) {
		cli_error("demo: no workloads: neither ./workloads nor %s/workloads has any",
			  PKGDATADIR);
		return CLI_USAGE;
	}
	if (mkdir(d.outdir, 0777) != 0 && errno != EEXIST) {
		cli_error("demo: cannot create %s: %s", d.outdir, strerror(errno));
		return CLI_FAILED;
	}
	printf("# ksmkit demo: %zu workloads on the simulator and this kernel; traces and "
	       "charts in %s/\n", n, d.outdir);
	for (size_t i = 0; i < n; i++)
		run_one(&d, list[i]);
	printf("# %u match, %u within tolerance, %u differ, %u simulator only, %u failed\n",
	       d.matched, d.within, d.differed, d.sim_only, d.failed);
	if (optind >= argc) {
		for (size_t i = 0; i < n; i++)
			free(list[i]);
		free(list);
	}
	return d.differed || d.failed ? CLI_FAILED : CLI_OK;
}
