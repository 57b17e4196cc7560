/*
 * mc-throughput.c - how fast the model checker explores: bench/mc-throughput
 * [-c] [-j WORKERS] [CONFIG] [RUNS] runs the check of CONFIG (default the
 * reference configuration, mc/configs/reference.conf) RUNS times (default 3)
 * on one worker, and prints generated and distinct states, the time, and
 * generated states per second of each run and their median; with -c, one CSV
 * line per run. With -j WORKERS (2 to 8) each run is a pair, one worker then
 * WORKERS, side by side, and the speed-up of the pair (one worker's time
 * over the other's) is printed with the median over the pairs: pairing
 * keeps the ratio meaningful when the machine's speed drifts. The goals
 * (issues 7 and 18): at least 1M generated states/s on the reference
 * configuration on one core, and at least 1.7x from two workers. A
 * benchmark, not a test: timings depend on the machine and its load.
 */
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
	unsigned workers; /* 0: one worker alone, no pairs */
	int runs;
};

/*
 * One check on @workers workers; its seconds (its generated states per second
 * in *@per_s), or a negative number on failure.
 */
static double one_run(const struct bench *b, const struct mc_config *cfg, int run,
		      unsigned workers, double *per_s)
{
	struct mc_options opt = { .workers = workers };
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

static int parse_args(int argc, char **argv, struct bench *b)
{
	int arg = 1;

	for (; arg < argc && argv[arg][0] == '-'; arg++) {
		if (strcmp(argv[arg], "-c") == 0)
			b->csv = true;
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
	struct bench b = { "mc/configs/reference.conf", false, 0, 3 };
	double rate[MAX_RUNS], speedup[MAX_RUNS];
	struct mc_config *cfg;
	struct mc_error perr;

	if (parse_args(argc, argv, &b) != 0) {
		fprintf(stderr, "usage: mc-throughput [-c] [-j WORKERS (2-8)] [CONFIG] [RUNS (1-%d)]\n",
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
		double per_s, one = one_run(&b, cfg, r + 1, 1, &rate[r]), many = 0;

		if (one < 0 ||
		    (b.workers && (many = one_run(&b, cfg, r + 1, b.workers, &per_s)) < 0)) {
			mc_config_free(cfg);
			return 1;
		}
		speedup[r] = b.workers ? one / many : 0;
	}
	qsort(rate, (size_t)b.runs, sizeof(rate[0]), by_value);
	qsort(speedup, (size_t)b.runs, sizeof(speedup[0]), by_value);
	if (!b.csv) {
		printf("median: %.2fM generated states/s on one worker (%s)\n",
		       rate[b.runs / 2] / 1e6, b.path);
		if (b.workers)
			printf("speed-up from %u workers: median %.2fx over %d pairs (min %.2fx, "
			       "max %.2fx)\n", b.workers, speedup[b.runs / 2], b.runs, speedup[0],
			       speedup[b.runs - 1]);
	}
	mc_config_free(cfg);
	return 0;
}
