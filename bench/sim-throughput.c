/*
 * sim-throughput.c - how fast the simulator scans against the real ksmd, per
 * page and per size, and how much memory a simulated page costs:
 *   bench/sim-throughput [--sizes SIZE,...] [--runs N] [--kernel MIX=TRACE.csv ...]
 *   bench/sim-throughput --print-workload MIX SIZE
 *
 * The mixes are workloads (the same text drives `ksmkit run` on the kernel,
 * printed by --print-workload): SIZE of memory, pages_to_scan = every page
 * (one batch a full scan), sleep_millisecs = 0, smart_scan = 0, 5 full scans.
 *   unique      every page a fresh value: scan 1 takes the checksums, scan 2
 *               builds the unstable tree of them all (walking it), scans 3-5
 *               rebuild the same tree (the steady state)
 *   identical   every page the same value: scans 1-2 merge them into chains
 *               of max_page_sharing (256), scans 3-5 are the steady state
 *   volatile    every page rewritten after every scan, a fresh value at
 *               byte 4088 (so every visit finds its checksum changed)
 *   volatile25  a quarter of the pages so (every 4th), the rest identical
 * Each (mix, size) runs in a child process through sim_run_workload(), the
 * path of `ksmkit sim`; a scan's host time is the child's CPU time (as the
 * kernel's figure is ksmd's, so that time the child waits for a CPU on a
 * busy machine counts on neither side) from the trace row of the scan
 * before to its own, so it includes the workload's writes after that row.
 * A phase's per-page cost is the median over its scans of host time /
 * pages; at the first size it is the median of --runs runs (default 9: a
 * build scan there is some 15 ms, and three runs of it moved 1.4x on this
 * machine within minutes) of that, at the others one run. Memory is the
 * child's peak RSS (the whole process, libraries included) per simulated
 * page. Setup (mapping and filling) is not part of any phase and is printed
 * on its own. Beside each phase, the unstable-tree levels a page that its
 * scans charged (sim_work.tree_levels: the levels the kernel's walks take
 * there, walked by the simulator or repeated by a memo scan); the ratio of
 * sizes prints their growth in brackets, the part of a walk's growth that
 * is the tree getting deeper with the pages, on the kernel too.
 *
 * The kernel's figures are inputs, never constants: --kernel MIX=FILE reads
 * a trace that `ksmkit run --csv` wrote for --print-workload MIX SIZE (the
 * first size), and the kernel's s/scan of a phase is the median over its
 * rows of ksmd's CPU time per scan (ksmd_cpu_ns; with sleep 0 it is busy
 * the whole scan; kernel_figures() says which rows). The ratio printed is kernel s/scan over simulator s/scan,
 * both at the first size. make bench-sim does all of it (the kernel side as
 * root, skipped with the reason otherwise). Timings here are noisy: compare
 * figures of one run, side by side, never across runs.
 */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"
#include "sim_driver.h"
#include "trace.h"
#include "workload.h"

#define SCANS 5u
#define MAX_SIZES 4
#define MAX_RUNS 9

/* A phase: the full scans [first, last] of a mix, measured together. */
struct phase {
	const char *name;
	unsigned first, last;
};

struct mix {
	const char *name;
	const char *doc;
	const char *writer; /* the [writer] section, or NULL */
	const char *fill;   /* the region's fill lines */
	struct phase phase[2];
};

static const struct mix mixes[] = {
	{ "unique", "every page a fresh value", NULL, "fill = unique\n",
	  { { "build", 2, 2 }, { "steady", 3, SCANS } } },
	{ "identical", "every page the same value", NULL, "fill = same\nvalue = 7\n",
	  { { "merge", 1, 2 }, { "steady", 3, SCANS } } },
	{ "volatile", "every page rewritten before every scan at byte 4088",
	  "[writer w]\nregion = r\npages = all\noffset = 4088\nvalue = fresh\nwhen = every-scan\n",
	  "fill = same\nvalue = 7\n", { { "steady", 3, SCANS }, { NULL, 0, 0 } } },
	{ "volatile25", "every 4th page rewritten so, the rest identical",
	  "[writer w]\nregion = r\npages = every:4\noffset = 4088\nvalue = fresh\n"
	  "when = every-scan\n",
	  "fill = same\nvalue = 7\n", { { "merge", 1, 2 }, { "steady", 3, SCANS } } },
};

#define NMIXES (sizeof(mixes) / sizeof(mixes[0]))

/*
 * What one child measured: seconds per scan of each phase, setup, memory,
 * and the unstable-tree levels a page of each phase cost (those the kernel's
 * walks take, which the simulator charges whether it walked them or a memo
 * scan repeated them: sim_work.tree_levels).
 */
struct result {
	double phase_s[2];  /* median host seconds of one scan of the phase */
	double levels[2];   /* tree levels a page, over the phase's scans */
	double setup_s;
	double bytes_per_page;
	int ok;
};

static double now_s(void)
{
	struct timespec t;

	/* CPU time, as ksmd's is: a busy machine's other work does not count */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const struct mix *mix_lookup(const char *name)
{
	for (size_t i = 0; i < NMIXES; i++)
		if (strcmp(mixes[i].name, name) == 0)
			return &mixes[i];
	return NULL;
}

/* The workload text of @m over @pages pages (malloc'd). */
static char *workload_text(const struct mix *m, uint64_t pages)
{
	char *text = NULL;

	if (asprintf(&text,
		     "# bench/sim-throughput, mix %s: %s\n"
		     "[global]\n"
		     "description = bench-sim mix %s, %" PRIu64 " pages\n"
		     "scans = %u\n"
		     "timeout = 30m\n"
		     "pages_to_scan = %" PRIu64 "\n"
		     "sleep_millisecs = 0\n"
		     "smart_scan = 0\n"
		     "\n[region r]\npages = %" PRIu64 "\n%s%s%s",
		     m->name, m->doc, m->name, pages, SCANS, pages, pages, m->fill,
		     m->writer ? "\n" : "", m->writer ? m->writer : "") < 0)
		return NULL;
	return text;
}

/* The host time and the tree levels so far at each trace row: row k ends full scan k. */
struct clock_hook {
	double at[SCANS + 1];
	uint64_t levels[SCANS + 1];
	unsigned rows;
};

static void time_row(void *arg, uint64_t scan, const struct sim *s, const int *mm_of)
{
	struct clock_hook *h = arg;
	struct sim_work w;

	(void)mm_of;
	if (scan <= SCANS) {
		h->at[scan] = now_s();
		sim_work_get(s, &w);
		h->levels[scan] = w.tree_levels;
	}
	h->rows++;
}

/* Median over the phase's scans of @at[k] - @at[k - 1]. */
static double phase_median(const struct phase *p, const double *at)
{
	double d[SCANS];
	size_t n = 0;

	for (unsigned k = p->first; k <= p->last; k++)
		d[n++] = at[k] - at[k - 1];
	return median(d, n);
}

/* Tree levels a page over the phase's scans of @pages pages. */
static double phase_levels(const struct phase *p, const uint64_t *levels, uint64_t pages)
{
	return (double)(levels[p->last] - levels[p->first - 1]) /
	       ((double)pages * (p->last - p->first + 1));
}

/* In the child: run @m over @pages pages once. */
static int run_once(const struct mix *m, uint64_t pages, struct result *res)
{
	struct sim_run_options opt = { .scan_hook = time_row };
	struct clock_hook hook = { .rows = 0 };
	char *text = workload_text(m, pages), err[256];
	struct workload *wl = NULL;
	struct trace *t = NULL;
	struct wl_error werr;
	double t0;
	int rc = -1;

	if (!text)
		return -1;
	if (wl_parse_buffer(text, strlen(text), m->name, &wl, &werr) != 0) {
		fprintf(stderr, "sim-throughput: %s: %s\n", m->name, werr.text);
		goto out;
	}
	opt.hook_arg = &hook;
	t0 = now_s();
	if (sim_run_workload(wl, &opt, &t, err, sizeof(err)) != 0) {
		fprintf(stderr, "sim-throughput: %s: %s\n", m->name, err);
		goto out;
	}
	res->setup_s = hook.at[0] - t0;
	for (int i = 0; i < 2 && m->phase[i].name; i++) {
		res->phase_s[i] = phase_median(&m->phase[i], hook.at);
		res->levels[i] = phase_levels(&m->phase[i], hook.levels, pages);
	}
	rc = 0;
out:
	trace_free(t);
	wl_free(wl);
	free(text);
	return rc;
}

/* Run @m over @pages pages @runs times in a child; medians of the runs. */
static struct result measure(const struct mix *m, uint64_t pages, int runs)
{
	struct result res = { .ok = 0 };
	struct rusage ru;
	int fd[2], status;
	pid_t pid;

	if (pipe(fd) != 0)
		return res;
	pid = fork();
	if (pid == 0) {
		struct result one[MAX_RUNS], out = { .ok = 1 };
		double v[MAX_RUNS];

		close(fd[0]);
		for (int r = 0; r < runs; r++)
			if (run_once(m, pages, &one[r]) != 0)
				_exit(1);
		for (int i = 0; i < 2; i++) {
			for (int r = 0; r < runs; r++)
				v[r] = one[r].phase_s[i];
			out.phase_s[i] = median(v, (size_t)runs);
			out.levels[i] = one[0].levels[i]; /* the same in every run */
		}
		for (int r = 0; r < runs; r++)
			v[r] = one[r].setup_s;
		out.setup_s = median(v, (size_t)runs);
		if (write(fd[1], &out, sizeof(out)) != (ssize_t)sizeof(out))
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	if (pid > 0 && read(fd[0], &res, sizeof(res)) != (ssize_t)sizeof(res))
		res.ok = 0;
	close(fd[0]);
	if (pid < 0 || wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		res.ok = 0;
	else
		res.bytes_per_page = (double)ru.ru_maxrss * 1024 / (double)pages;
	return res;
}

/*
 * The kernel's s/scan of each phase of @m from trace @path: over each pair of
 * consecutive scan rows inside the phase (the scan before its first to its
 * last, or beyond when the runner's poll saw two scans end at once), ksmd's
 * CPU time per scan; the median of those. *@invalid counts the rows a
 * workload step overlapped (the kernel kept scanning while the runner wrote).
 */
static int kernel_figures(const struct mix *m, const char *path, double out[2], int *invalid)
{
	FILE *in = fopen(path, "r");
	struct trace *t = NULL;
	char err[256];

	*invalid = 0;
	if (!in) {
		fprintf(stderr, "sim-throughput: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (trace_read_csv(in, path, &t, err, sizeof(err)) != 0) {
		fprintf(stderr, "sim-throughput: %s\n", err);
		fclose(in);
		return -1;
	}
	fclose(in);
	for (int i = 0; i < 2 && m->phase[i].name; i++) {
		const struct phase *p = &m->phase[i];
		const struct trace_row *prev = NULL;
		double d[64];
		size_t n = 0;

		for (size_t r = 0; r < t->nrows && n < 64; r++) {
			const struct trace_row *row = &t->row[r];

			if (row->kind != TRACE_ROW_SCAN)
				continue;
			if (prev && prev->scan + 1 >= p->first && prev->scan < p->last &&
			    row->scan > prev->scan) {
				d[n++] = (double)(row->ksmd_cpu_ns - prev->ksmd_cpu_ns) / 1e9 /
					 (double)(row->scan - prev->scan);
				*invalid += !row->valid;
			}
			prev = row;
		}
		if (!n) {
			fprintf(stderr, "sim-throughput: %s: no rows for scans %u-%u\n", path,
				p->first, p->last);
			trace_free(t);
			return -1;
		}
		out[i] = median(d, n);
	}
	trace_free(t);
	return 0;
}

/* Was a kernel trace given for any of the mixes measured? */
static bool any_kernel_trace(const bool *want, const char *const *kernel_trace)
{
	for (size_t m = 0; m < NMIXES; m++)
		if (want[m] && kernel_trace[m])
			return true;
	return false;
}

static int usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [--sizes SIZE,...] [--runs N] [--mixes MIX,...] [--kernel MIX=TRACE.csv ...]\n"
		"       %s --print-workload MIX SIZE\n"
		"mixes:", argv0, argv0);
	for (size_t i = 0; i < NMIXES; i++)
		fprintf(stderr, " %s", mixes[i].name);
	fprintf(stderr, "\n");
	return 2;
}

static int parse_pages(const char *text, uint64_t *pages)
{
	uint64_t bytes;

	if (wl_parse_size(text, &bytes) != 0 || bytes < 4096 || bytes % 4096)
		return -1;
	*pages = bytes / 4096;
	return 0;
}

/* "512m" for printing: the size as given. */
struct size {
	const char *text;
	uint64_t pages;
};

int main(int argc, char **argv)
{
	struct size size[MAX_SIZES] = { { "512m", 131072 }, { "64g", UINT64_C(16) << 20 } };
	const char *kernel_trace[NMIXES] = { NULL };
	bool want[NMIXES] = { true, true, true, false };
	struct result res[NMIXES][MAX_SIZES];
	int nsizes = 2, runs = 9;

	if (argc == 4 && strcmp(argv[1], "--print-workload") == 0) {
		const struct mix *m = mix_lookup(argv[2]);
		uint64_t pages;
		char *text;

		if (!m || parse_pages(argv[3], &pages) != 0)
			return usage(argv[0]);
		text = workload_text(m, pages);
		if (!text)
			return 1;
		fputs(text, stdout);
		free(text);
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
			char *list = argv[++i], *tok, *save = NULL;

			nsizes = 0;
			for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (nsizes == MAX_SIZES || parse_pages(tok, &size[nsizes].pages) != 0)
					return usage(argv[0]);
				size[nsizes++].text = tok;
			}
			if (!nsizes)
				return usage(argv[0]);
		} else if (strcmp(argv[i], "--mixes") == 0 && i + 1 < argc) {
			char *list = argv[++i], *tok, *save = NULL;

			memset(want, 0, sizeof(want));
			for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				const struct mix *m = mix_lookup(tok);

				if (!m)
					return usage(argv[0]);
				want[m - mixes] = true;
			}
		} else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
			runs = atoi(argv[++i]);
			if (runs < 1 || runs > MAX_RUNS)
				return usage(argv[0]);
		} else if (strcmp(argv[i], "--kernel") == 0 && i + 1 < argc) {
			char *eq = strchr(argv[++i], '=');
			const struct mix *m;

			if (!eq)
				return usage(argv[0]);
			*eq = '\0';
			m = mix_lookup(argv[i]);
			if (!m)
				return usage(argv[0]);
			kernel_trace[m - mixes] = eq + 1;
		} else {
			return usage(argv[0]);
		}
	}
	printf("# sim-throughput: pages_to_scan = all, sleep 0, smart_scan 0, %u full scans;\n"
	       "# CPU time per scan, median over the phase's scans (and of %d runs at %s)\n",
	       SCANS, runs, size[0].text);
	printf("%-11s %-7s %-6s %12s %10s %12s %9s %12s\n", "mix", "size", "phase", "s/scan",
	       "ns/page", "levels/page", "setup s", "bytes/page");
	for (size_t m = 0; m < NMIXES; m++) {
		if (!want[m])
			continue;
		for (int z = 0; z < nsizes; z++) {
			res[m][z] = measure(&mixes[m], size[z].pages, z == 0 ? runs : 1);
			for (int i = 0; i < 2 && mixes[m].phase[i].name; i++) {
				if (!res[m][z].ok) {
					printf("%-11s %-7s %-6s %12s\n", mixes[m].name, size[z].text,
					       mixes[m].phase[i].name, "failed");
					continue;
				}
				printf("%-11s %-7s %-6s %12.4f %10.1f %12.2f %9.2f %12.1f\n",
				       mixes[m].name, size[z].text, mixes[m].phase[i].name,
				       res[m][z].phase_s[i],
				       res[m][z].phase_s[i] * 1e9 / (double)size[z].pages,
				       res[m][z].levels[i], res[m][z].setup_s,
				       res[m][z].bytes_per_page);
			}
			fflush(stdout);
		}
	}
	if (nsizes > 1) {
		printf("\n# per-page cost at each size over its cost at %s (in brackets: the tree\n"
		       "# levels a page over %s's, the part of the growth that is the kernel's own\n"
		       "# walks getting deeper)\n", size[0].text, size[0].text);
		for (size_t m = 0; m < NMIXES; m++)
			for (int i = 0; want[m] && i < 2 && mixes[m].phase[i].name; i++) {
				printf("%-11s %-6s", mixes[m].name, mixes[m].phase[i].name);
				for (int z = 1; z < nsizes; z++) {
					double a = res[m][0].phase_s[i] / (double)size[0].pages;
					double b = res[m][z].phase_s[i] / (double)size[z].pages;

					if (!res[m][0].ok || !res[m][z].ok)
						continue;
					printf("  %s %.2fx", size[z].text, b / a);
					if (res[m][0].levels[i] > 0)
						printf(" [%.2fx]",
						       res[m][z].levels[i] / res[m][0].levels[i]);
				}
				printf("\n");
			}
	}
	if (!any_kernel_trace(want, kernel_trace)) {
		printf("\n# the real ksmd: no kernel trace given (--kernel MIX=TRACE.csv)\n");
		return 0;
	}
	printf("\n# the real ksmd at %s: ksmd CPU s/scan (median of the phase's scans) "
	       "and the simulator's speed-up over it\n", size[0].text);
	for (size_t m = 0; m < NMIXES; m++) {
		double k[2] = { 0, 0 };
		int invalid;

		if (!want[m])
			continue;
		if (!kernel_trace[m]) {
			printf("%-11s no kernel trace (--kernel %s=TRACE.csv)\n", mixes[m].name,
			       mixes[m].name);
			continue;
		}
		if (kernel_figures(&mixes[m], kernel_trace[m], k, &invalid) != 0)
			return 1;
		for (int i = 0; i < 2 && mixes[m].phase[i].name; i++)
			printf("%-11s %-6s kernel %.4f s/scan  sim %.4f s/scan  %.1fx\n",
			       mixes[m].name, mixes[m].phase[i].name, k[i], res[m][0].phase_s[i],
			       res[m][0].ok && res[m][0].phase_s[i] > 0 ? k[i] / res[m][0].phase_s[i]
									 : 0);
		if (invalid)
			printf("%-11s (%d of the kernel's rows overlapped a workload step)\n",
			       mixes[m].name, invalid);
	}
	return 0;
}
