/*
 * sim-throughput.c - how fast the simulator scans, and how much memory a
 * simulated page costs:
 *   bench/sim-throughput [--kernel-pages-per-s N] [PAGES] [RUNS]
 *
 * Three machines of PAGES pages (default 1M) each: (a) all identical, (b) all
 * unique, (c) a 25% volatile mix (a quarter of the pages rewritten with fresh
 * values before every scan, the rest identical). Each is scanned for 4 full
 * scans, RUNS times (default 5); the figure is the median of simulated pages
 * processed per second of host time. Peak RSS per page comes from building a
 * fresh machine in a child process and reading its ru_maxrss (the whole
 * process's peak, libraries included), forked before any timing run so that
 * it inherits no memory from them. Then a 16M-page (64 GiB) host of unique
 * pages is taken through 2 full scans, timed once.
 * Timings here are noisy: compare medians side by side, never across runs.
 *
 * The real kernel's figure is an input, never a constant: pass the pages per
 * second that ksmd was measured to scan on the unique workload (mix b) with
 * --kernel-pages-per-s N, or in KSMKIT_KERNEL_PAGES_PER_S, and the ratio of
 * the simulator's rate to it is printed. This program does not measure the
 * kernel itself (that needs root and a quiet machine).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"

enum mix { MIX_IDENTICAL, MIX_UNIQUE, MIX_VOLATILE };

static const char *const mix_name[] = { "identical", "unique", "25% volatile" };

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static struct sim *build(enum mix mix, uint64_t pages, int *area)
{
	struct sim_config cfg;
	char err[128];
	struct sim *s;
	int mm;

	sim_config_default(&cfg);
	s = sim_new(&cfg, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "sim_new: %s\n", err);
		exit(1);
	}
	sim_knob_store(s, WL_KNOB_PAGES_TO_SCAN, 100000);
	mm = sim_process_new(s);
	*area = sim_mmap(s, mm, pages, -1, false, 0);
	if (*area < 0) {
		fprintf(stderr, "sim_mmap failed\n");
		exit(1);
	}
	for (uint64_t p = 0; p < pages; p++)
		sim_fill(s, *area, p, mix == MIX_UNIQUE ? content_fresh_value(p) : 7);
	sim_madvise(s, *area, 0, pages, true);
	sim_run_store(s, 1);
	return s;
}

/* Run @scans full scans; returns pages processed. */
static uint64_t scan(struct sim *s, enum mix mix, int area, uint64_t pages, int scans,
		     uint64_t *fresh)
{
	uint64_t processed = 0;

	for (int i = 0; i < scans; i++) {
		uint64_t start = sim_full_scans(s);

		if (mix == MIX_VOLATILE)
			for (uint64_t p = 0; p < pages; p += 4)
				sim_write(s, area, p, 4088, content_fresh_value((*fresh)++));
		while (sim_full_scans(s) == start)
			processed += sim_ksmd_batch(s);
	}
	return processed;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median_rate(enum mix mix, uint64_t pages, int runs)
{
	double *rate = calloc((size_t)runs, sizeof(*rate)), m;

	for (int r = 0; r < runs; r++) {
		int area;
		uint64_t fresh = pages, done;
		struct sim *s = build(mix, pages, &area);
		double t0 = now_s();

		done = scan(s, mix, area, pages, 4, &fresh);
		rate[r] = (double)done / (now_s() - t0);
		sim_free(s);
	}
	qsort(rate, (size_t)runs, sizeof(*rate), cmp_double);
	m = rate[runs / 2];
	free(rate);
	return m;
}

/* Peak RSS of a child that builds the machine and scans it twice, per page. */
static double bytes_per_page(enum mix mix, uint64_t pages)
{
	pid_t pid = fork();
	struct rusage ru;
	int status;

	if (pid == 0) {
		int area;
		uint64_t fresh = pages;
		struct sim *s = build(mix, pages, &area);

		scan(s, mix, area, pages, 2, &fresh);
		_exit(0);
	}
	if (pid < 0 || wait4(pid, &status, 0, &ru) < 0)
		return -1;
	return (double)ru.ru_maxrss * 1024 / (double)pages;
}

/* A positive pages/s figure, or 0 when @text is not one. */
static double parse_rate(const char *text)
{
	char *end;
	double v;

	if (!text || !*text)
		return 0;
	v = strtod(text, &end);
	return *end == '\0' && v > 0 ? v : 0;
}

static int usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [--kernel-pages-per-s N] [PAGES] [RUNS]\n", argv0);
	return 2;
}

int main(int argc, char **argv)
{
	const char *env = getenv("KSMKIT_KERNEL_PAGES_PER_S");
	double kernel_rate = parse_rate(env), unique_rate = 0, bpp[MIX_VOLATILE + 1];
	uint64_t pages = 1u << 20;
	int runs = 5, npos = 0;
	uint64_t big = UINT64_C(16) << 20;
	double t0, t1;
	int area;
	struct sim *s;
	uint64_t fresh = big;

	if (env && *env && !kernel_rate) {
		fprintf(stderr, "KSMKIT_KERNEL_PAGES_PER_S: not a positive number: %s\n", env);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--kernel-pages-per-s") == 0) {
			if (i + 1 == argc || !(kernel_rate = parse_rate(argv[++i])))
				return usage(argv[0]);
		} else if (argv[i][0] == '-' || npos == 2) {
			return usage(argv[0]);
		} else if (npos++ == 0) {
			pages = strtoull(argv[i], NULL, 0);
		} else {
			runs = atoi(argv[i]);
		}
	}
	if (runs < 1)
		runs = 1;
	printf("# sim-throughput: %llu pages, 4 full scans, median of %d runs\n",
	       (unsigned long long)pages, runs);
	printf("%-14s %16s %14s\n", "mix", "pages/s (host)", "bytes/page");
	/* memory first: a child forked later would start with the RSS that the
	 * timing runs left in this process (freed but still resident heap) */
	for (int mix = MIX_IDENTICAL; mix <= MIX_VOLATILE; mix++)
		bpp[mix] = bytes_per_page(mix, pages);
	for (int mix = MIX_IDENTICAL; mix <= MIX_VOLATILE; mix++) {
		double rate = median_rate(mix, pages, runs);

		if (mix == MIX_UNIQUE)
			unique_rate = rate;
		printf("%-14s %16.0f %14.1f\n", mix_name[mix], rate, bpp[mix]);
	}
	if (kernel_rate)
		printf("# unique pages: the simulator is %.1fx the real ksmd (%.0f pages/s measured)\n",
		       unique_rate / kernel_rate, kernel_rate);
	else
		printf("# no kernel figure: pass --kernel-pages-per-s N (or set "
		       "KSMKIT_KERNEL_PAGES_PER_S) with ksmd's measured pages/s on unique pages "
		       "to print the ratio\n");
	t0 = now_s();
	s = build(MIX_UNIQUE, big, &area);
	t1 = now_s();
	scan(s, MIX_UNIQUE, area, big, 2, &fresh);
	printf("16M-page (64 GiB) unique host: setup %.1f s, 2 full scans %.1f s\n", t1 - t0,
	       now_s() - t1);
	sim_free(s);
	return 0;
}
