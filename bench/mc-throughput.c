/*
 * mc-throughput.c - how fast the model checker explores: bench/mc-throughput
 * [CONFIG] [RUNS] runs `ksmkit check` on CONFIG (default the reference
 * configuration, mc/configs/reference.conf) RUNS times (default 3), one core,
 * and prints generated and distinct states, the time, and generated states
 * per second of each run and their median; with -c, one CSV line per run.
 * The goal (issue 7): at least 1M generated states/s on the reference
 * configuration, exhaustively, in at most 60 s. A benchmark, not a test:
 * timings depend on the machine and its load.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mc.h"

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	const char *path = "mc/configs/reference.conf";
	bool csv = false;
	int runs = 3, arg = 1;
	struct mc_config *cfg;
	struct mc_error perr;
	double rate[64];

	if (arg < argc && strcmp(argv[arg], "-c") == 0) {
		csv = true;
		arg++;
	}
	if (arg < argc)
		path = argv[arg++];
	if (arg < argc)
		runs = atoi(argv[arg]);
	if (runs < 1 || runs > 64) {
		fprintf(stderr, "usage: mc-throughput [-c] [CONFIG] [RUNS (1-64)]\n");
		return 2;
	}
	if (mc_config_parse_file(path, &cfg, &perr) != 0) {
		fprintf(stderr, "mc-throughput: %s\n", perr.text);
		return 2;
	}
	if (csv)
		printf("config,run,generated_states,distinct_states,depth,time_s,states_per_s,"
		       "exhaustive,verdict\n");
	for (int r = 0; r < runs; r++) {
		struct mc_result res;
		char err[256];

		if (mc_check(cfg, NULL, &res, err, sizeof(err)) != 0) {
			fprintf(stderr, "mc-throughput: %s\n", err);
			return 1;
		}
		rate[r] = (double)res.stats.generated / res.stats.seconds;
		if (csv)
			printf("%s,%d,%llu,%llu,%llu,%.3f,%.0f,%s,%s\n", path, r + 1,
			       (unsigned long long)res.stats.generated,
			       (unsigned long long)res.stats.distinct,
			       (unsigned long long)res.stats.depth, res.stats.seconds, rate[r],
			       res.stats.exhaustive ? "yes" : "no",
			       res.verdict == MC_PASS ? "pass" : "violation");
		else
			printf("run %d: %llu generated, %llu distinct, depth %llu, %.2f s, "
			       "%.2fM generated states/s%s%s\n", r + 1,
			       (unsigned long long)res.stats.generated,
			       (unsigned long long)res.stats.distinct,
			       (unsigned long long)res.stats.depth, res.stats.seconds, rate[r] / 1e6,
			       res.stats.exhaustive ? ", exhaustive" : "",
			       res.verdict == MC_PASS ? "" : ", VIOLATION");
		mc_result_free(&res);
	}
	qsort(rate, (size_t)runs, sizeof(rate[0]), by_value);
	if (!csv)
		printf("median: %.2fM generated states/s (%s)\n", rate[runs / 2] / 1e6, path);
	mc_config_free(cfg);
	return 0;
}
