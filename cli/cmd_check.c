/*
 * cmd_check.c - `ksmkit check`: model-check the simulator on a small
 * configuration (mc/, docs/model-checking.md) and report the statistics, or
 * the shortest counterexample, as text or JSON, optionally writing the
 * counterexample as a workload file for `ksmkit sim` and `ksmkit run`.
 */
#include "cli.h"
#include "mc.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct check_args {
	const char *config, *output;
	bool json, quiet;
	struct mc_options opt;
};

static void show_progress(void *arg, const struct mc_stats *st)
{
	(void)arg;
	fprintf(stderr, "\rksmkit check: %llu states (%llu distinct), depth %llu, %.0f s ",
		(unsigned long long)st->generated, (unsigned long long)st->distinct,
		(unsigned long long)st->depth, st->seconds);
}

static int list_mutants(void)
{
	for (unsigned m = 1; m < mc_mutant_count(); m++)
		printf("%-22s %s\n", mc_mutant_name(m), mc_mutant_doc(m));
	return CLI_OK;
}

static int list_invariants(void)
{
	for (int i = 0; i < MC_INV_COUNT; i++)
		printf("%s\n    %s\n", mc_invariant_name(i), mc_invariant_doc(i));
	return CLI_OK;
}

static int parse_count(const char *text, uint64_t *out)
{
	char *end;

	if (!text[0] || text[0] == '-')
		return -1;
	*out = strtoull(text, &end, 10);
	return *end ? -1 : 0;
}

/* 1: handled (listing), 0: go on, -1: bad usage */
static int parse_args(int argc, char **argv, struct check_args *a)
{
	static const struct option options[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "mutant", required_argument, NULL, 'm' },
		{ "bfs", no_argument, NULL, 'b' },
		{ "dfs", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "max-states", required_argument, NULL, 'M' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "list-mutants", no_argument, NULL, 'L' },
		{ "list-invariants", no_argument, NULL, 'I' },
		{ NULL, 0, NULL, 0 },
	};
	int c, m;

	while ((c = getopt_long(argc, argv, "o:q", options, NULL)) != -1) {
		switch (c) {
		case 'j': a->json = true; break;
		case 'o': a->output = optarg; break;
		case 'q': a->quiet = true; break;
		case 'b': a->opt.search = MC_SEARCH_BFS; break;
		case 'L': return list_mutants() == CLI_OK ? 1 : -1;
		case 'I': return list_invariants() == CLI_OK ? 1 : -1;
		case 'm':
			if ((m = mc_mutant_lookup(optarg)) < 0) {
				cli_error("check: no mutant '%s' (ksmkit check --list-mutants)", optarg);
				return -1;
			}
			a->opt.mutant = (unsigned)m;
			break;
		case 'd':
			a->opt.search = MC_SEARCH_DFS;
			if (parse_count(optarg, &a->opt.depth) != 0 || !a->opt.depth) {
				cli_error("check: --dfs needs a depth bound above 0, not '%s'", optarg);
				return -1;
			}
			break;
		case 'M':
			if (parse_count(optarg, &a->opt.max_states) != 0) {
				cli_error("check: --max-states needs a number, not '%s'", optarg);
				return -1;
			}
			break;
		default:
			return -1;
		}
	}
	if (optind != argc - 1) {
		cli_error("check: give exactly one configuration file (see ksmkit check --help)");
		return -1;
	}
	a->config = argv[optind];
	return 0;
}

static void print_stats(const struct mc_config *cfg, const struct mc_result *res)
{
	const struct mc_stats *s = &res->stats;
	double n = (double)s->distinct;

	printf("%s: %s\n", "configuration", mc_config_description(cfg) ? mc_config_description(cfg)
								       : "(no description)");
	printf("search: %s%s, %s; fingerprints: 64-bit XXH3 (any two of these %llu states "
	       "collide with probability about %.1e)\n",
	       res->search == MC_SEARCH_DFS ? "depth-first" : "breadth-first",
	       res->depth_bound ? " with a depth bound" : "",
	       s->exhaustive ? "exhaustive" : res->verdict == MC_VIOLATION ? "stopped at the violation"
								       : "not exhaustive",
	       (unsigned long long)s->distinct, n * n / 36893488147419103232.0 /* 2^65 */);
	if (res->depth_bound)
		printf("depth bound: %llu (%llu states not expanded)\n",
		       (unsigned long long)res->depth_bound, (unsigned long long)s->cut);
	printf("states: %llu generated, %llu distinct, depth %llu, %.2f s, %.0f states/s\n",
	       (unsigned long long)s->generated, (unsigned long long)s->distinct,
	       (unsigned long long)s->depth, s->seconds,
	       s->seconds > 0 ? (double)s->generated / s->seconds : 0.0);
	if (res->mutant)
		printf("simulator mutant: %s (%s)\n", mc_mutant_name(res->mutant),
		       mc_mutant_doc(res->mutant));
}

static int write_counterexample(const struct mc_config *cfg, const struct mc_result *res,
				const char *path)
{
	char why[512];
	FILE *f = fopen(path, "w");

	if (!f) {
		cli_error("check: cannot write %s: %m", path);
		return CLI_FAILED;
	}
	if (mc_trace_write_workload(cfg, res, f, why, sizeof(why)) != 0) {
		fclose(f);
		remove(path);
		cli_error("check: no workload file written: %s", why);
		return CLI_FAILED;
	}
	if (fclose(f) != 0) {
		cli_error("check: cannot write %s: %m", path);
		return CLI_FAILED;
	}
	if (!res->mutant)
		fprintf(stderr, "ksmkit check: counterexample written to %s (replay: ksmkit sim %s)\n",
			path, path);
	else
		fprintf(stderr, "ksmkit check: counterexample written to %s\n", path);
	return CLI_OK;
}

static void report_text(const struct mc_config *cfg, const struct mc_result *res)
{
	if (res->verdict == MC_VIOLATION) {
		mc_trace_print(cfg, res, stdout);
		putchar('\n');
	}
	print_stats(cfg, res);
	if (res->verdict == MC_PASS) {
		printf("all invariants hold in every state explored:");
		for (int i = 0; i < MC_INV_COUNT; i++)
			printf(" %s", mc_invariant_name(i));
		putchar('\n');
	}
}

int cmd_check(int argc, char **argv)
{
	struct check_args a = { 0 };
	struct mc_config *cfg;
	struct mc_result res;
	struct mc_error perr;
	char err[512];
	int rc;

	if ((rc = parse_args(argc, argv, &a)) != 0)
		return rc > 0 ? CLI_OK : CLI_USAGE;
	if (mc_config_parse_file(a.config, &cfg, &perr) != 0) {
		cli_error("%s", perr.text);
		return CLI_USAGE;
	}
	if (!a.quiet && isatty(STDERR_FILENO))
		a.opt.progress = show_progress;
	rc = mc_check(cfg, &a.opt, &res, err, sizeof(err));
	if (a.opt.progress)
		fputs("\r\033[K", stderr);
	if (rc != 0) {
		cli_error("check: %s: %s", a.config, err);
		mc_config_free(cfg);
		return CLI_FAILED;
	}
	if (a.json)
		mc_result_write_json(cfg, &res, stdout);
	else
		report_text(cfg, &res);
	rc = res.verdict == MC_VIOLATION ? CLI_FAILED : CLI_OK;
	if (a.output && res.verdict == MC_VIOLATION)
		write_counterexample(cfg, &res, a.output);
	else if (a.output)
		fprintf(stderr, "ksmkit check: no violation, so no counterexample written to %s\n",
			a.output);
	mc_result_free(&res);
	mc_config_free(cfg);
	return rc;
}
