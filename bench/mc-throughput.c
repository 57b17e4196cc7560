/*
 * mc-throughput.c - how fast the model checker explores: bench/mc-throughput
 * [-c] [-d] [-j WORKERS] [CONFIG] [RUNS] runs the check of CONFIG (default the
 * reference configuration, mc/configs/reference.conf) RUNS times (default 3)
 * on one worker, breadth-first or with -d depth-first without a bound (every
 * run of the bench, the ceiling's included), and prints generated and
 * distinct states, the time, and generated states per second of each run and
 * their median; with -c, one CSV line per run. With -j WORKERS (2 to 8) each run is a pair, one worker then
 * WORKERS, side by side, and the speed-up of the pair (one worker's time
 * over the other's) is printed with the median over the pairs: pairing
 * keeps the ratio meaningful when the machine's speed drifts, and the pairs
 * alternate which run goes first. Each pair is also given the machine's own
 * ceiling: WORKERS one-worker checks run at once on as many threads, and
 * WORKERS times one worker's time over the longest of theirs is the speed-up
 * the machine would give work that shares nothing (its cores' shared caches,
 * memory and clock, and the host's placement of virtual cores, are in it).
 * The goals
 * (issues 7 and 18): at least 1M generated states/s on the reference
 * configuration on one core, and at least 1.7x from two workers. A
 * benchmark, not a test: timings depend on the machine and its load.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mc.h"

#define MAX_RUNS 64

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct bench {
	const char *path;
	bool csv;
	bool dfs;         /* depth-first without a bound, not breadth-first */
	unsigned workers; /* 0: one worker alone, no pairs */
	int runs;
};

/* The options of one check of the bench on @workers. */
static struct mc_options options(const struct bench *b, unsigned workers)
{
	struct mc_options opt = { .workers = workers };

	if (b->dfs) {
		opt.search = MC_SEARCH_DFS;
		opt.depth = MC_DEPTH_NONE;
	}
	return opt;
}

/*
 * One check on @workers workers; its seconds (its generated states per second
 * in *@per_s), or a negative number on failure.
 */
static double one_run(const struct bench *b, const struct mc_config *cfg, int run,
		      unsigned workers, double *per_s)
{
	struct mc_options opt = options(b, workers);
	struct mc_result res;
	char err[256];
	double seconds, rate;

	if (mc_check(cfg, &opt, &res, err, sizeof(err)) != 0) {
		fprintf(stderr, "mc-throughput: %s\n", err);
		return -1;
	}
	seconds = res.stats.seconds;
	rate = (double)res.stats.generated / seconds;
	if (b->csv)
		printf("%s,%d,%u,%llu,%llu,%llu,%.3f,%.0f,%s,%s\n", b->path, run, workers,
		       (unsigned long long)res.stats.generated,
		       (unsigned long long)res.stats.distinct,
		       (unsigned long long)res.stats.depth, seconds, rate,
		       res.stats.exhaustive ? "yes" : "no",
		       res.verdict == MC_PASS ? "pass" : "violation");
	else
		printf("run %d, %u worker%s: %llu generated, %llu distinct, depth %llu, %.2f s, "
		       "%.2fM generated states/s%s%s\n", run, workers, workers == 1 ? "" : "s",
		       (unsigned long long)res.stats.generated,
		       (unsigned long long)res.stats.distinct,
		       (unsigned long long)res.stats.depth, seconds, rate / 1e6,
		       res.stats.exhaustive ? ", exhaustive" : "",
		       res.verdict == MC_PASS ? "" : ", VIOLATION");
	mc_result_free(&res);
	*per_s = rate;
	return seconds;
}

struct alone {
	const struct bench *b;
	const struct mc_config *cfg;
	double seconds; /* negative: the check failed */
};

static void *check_alone(void *arg)
{
	struct alone *a = arg;
	struct mc_options opt = options(a->b, 1);
	struct mc_result res;
	char err[256];

	a->seconds = -1;
	if (mc_check(a->cfg, &opt, &res, err, sizeof(err)) == 0) {
		a->seconds = res.stats.seconds;
		mc_result_free(&res);
	} else {
		fprintf(stderr, "mc-throughput: %s\n", err);
	}
	return NULL;
}

/*
 * @workers one-worker checks at once; the longest one's seconds, or a
 * negative number on failure.
 */
static double at_once(const struct bench *b, const struct mc_config *cfg, unsigned workers)
{
	struct alone a[8];
	pthread_t tid[8];
	double longest = 0;
	unsigned started = 0;

	for (unsigned w = 0; w < workers; w++)
		a[w] = (struct alone){ b, cfg, -1 };
	for (; started < workers; started++)
		if (pthread_create(&tid[started], NULL, check_alone, &a[started]) != 0)
			break;
	for (unsigned w = 0; w < started; w++)
		pthread_join(tid[w], NULL);
	for (unsigned w = 0; w < workers; w++) {
		if (a[w].seconds < 0)
			return -1;
		if (a[w].seconds > longest)
			longest = a[w].seconds;
	}
	return longest;
}

/* One pair (and the ceiling beside it); -1 on failure. */
static int one_pair(const struct bench *b, const struct mc_config *cfg, int r, double *rate,
		    double *speedup, double *ceiling)
{
	double per_s, one, many, both;

	if (r % 2 == 0) {
		one = one_run(b, cfg, r + 1, 1, rate);
		many = one < 0 ? -1 : one_run(b, cfg, r + 1, b->workers, &per_s);
	} else {
		many = one_run(b, cfg, r + 1, b->workers, &per_s);
		one = many < 0 ? -1 : one_run(b, cfg, r + 1, 1, rate);
	}
	if (one < 0 || many < 0 || (both = at_once(b, cfg, b->workers)) < 0)
		return -1;
	*speedup = one / many;
	*ceiling = b->workers * one / both;
	if (!b->csv)
		printf("run %d, %u one-worker checks at once: %.2f s, the machine's ceiling %.2fx\n",
		       r + 1, b->workers, both, *ceiling);
	return 0;
}

static int parse_args(int argc, char **argv, struct bench *b)
{
	int arg = 1;

	for (; arg < argc && argv[arg][0] == '-'; arg++) {
		if (strcmp(argv[arg], "-c") == 0)
			b->csv = true;
		else if (strcmp(argv[arg], "-d") == 0)
			b->dfs = true;
		else if (strcmp(argv[arg], "-j") == 0 && arg + 1 < argc)
			b->workers = (unsigned)atoi(argv[++arg]);
		else
			return -1;
	}
	if (arg < argc)
		b->path = argv[arg++];
	if (arg < argc)
		b->runs = atoi(argv[arg++]);
	if (arg < argc || b->runs < 1 || b->runs > MAX_RUNS ||
	    (b->workers && (b->workers < 2 || b->workers > 8)))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct bench b = { "mc/configs/reference.conf", false, false, 0, 3 };
	double rate[MAX_RUNS], speedup[MAX_RUNS], ceiling[MAX_RUNS];
	struct mc_config *cfg;
	struct mc_error perr;

	if (parse_args(argc, argv, &b) != 0) {
		fprintf(stderr,
			"usage: mc-throughput [-c] [-d] [-j WORKERS (2-8)] [CONFIG] [RUNS (1-%d)]\n",
			MAX_RUNS);
		return 2;
	}
	if (mc_config_parse_file(b.path, &cfg, &perr) != 0) {
		fprintf(stderr, "mc-throughput: %s\n", perr.text);
		return 2;
	}
	if (b.csv)
		printf("config,run,workers,generated_states,distinct_states,depth,time_s,"
		       "states_per_s,exhaustive,verdict\n");
	for (int r = 0; r < b.runs; r++) {
		int rc = b.workers ? one_pair(&b, cfg, r, &rate[r], &speedup[r], &ceiling[r])
				   : (one_run(&b, cfg, r + 1, 1, &rate[r]) < 0 ? -1 : 0);

		if (rc != 0) {
			mc_config_free(cfg);
			return 1;
		}
	}
	qsort(rate, (size_t)b.runs, sizeof(rate[0]), by_value);
	qsort(speedup, (size_t)b.runs, sizeof(speedup[0]), by_value);
	qsort(ceiling, (size_t)b.runs, sizeof(ceiling[0]), by_value);
	if (!b.csv) {
		printf("median: %.2fM generated states/s on one worker, %s (%s)\n",
		       rate[b.runs / 2] / 1e6, b.dfs ? "depth-first" : "breadth-first", b.path);
		if (b.workers)
			printf("speed-up from %u workers: median %.2fx over %d pairs (min %.2fx, "
			       "max %.2fx)\n", b.workers, speedup[b.runs / 2], b.runs, speedup[0],
			       speedup[b.runs - 1]);
		if (b.workers)
			printf("the machine's ceiling for %u workers: median %.2fx over %d pairs "
			       "(min %.2fx, max %.2fx)\n", b.workers, ceiling[b.runs / 2], b.runs,
			       ceiling[0], ceiling[b.runs - 1]);
	}
	mc_config_free(cfg);
	return 0;
}
