/*
 * cmd_check.c - `ksmkit check`: model-check the simulator on a small
 * configuration (mc/, docs/model-checking.md) and report the statistics, or
 * the shortest counterexample, as text or JSON, optionally writing the
 * counterexample as a workload file for `ksmkit sim` and `ksmkit run`.
 */
#include "cli.h"
#include "cli_args.h"
#include "cli_output.h"
#include "mc.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_MAX_SETS 8

struct check_args {
	const char *config, *output;
	bool json, quiet;
	struct mc_options opt;
	/* --set KEY=VALUE: [check] keys in place of the file's (values point into argv) */
	struct mc_setting set[CHECK_MAX_SETS];
	size_t nset;
	char set_key[CHECK_MAX_SETS][64];
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

static const struct cli_opt check_options[] = {
	{ "json", 0, false, 'j' },
	{ "mutant", 0, true, 'm' },
	{ "bfs", 0, false, 'b' },
	{ "dfs", 0, true, 'd' },
	{ "output", 'o', true, 'o' },
	{ "max-states", 0, true, 'M' },
	{ "workers", 'j', true, 'W' },
	{ "bitstate", 0, true, 'B' },
	{ "quiet", 'q', false, 'q' },
	{ "list-mutants", 0, false, 'L' },
	{ "list-invariants", 0, false, 'I' },
	{ "set", 0, true, 's' },
	{ NULL, 0, false, 0 },
};

static const struct cli_rule check_rules[] = {
	{ CLI_ALONE, "list-mutants list-invariants", NULL, 0, 0, NULL },
	{ CLI_AT_MOST_ONE, "bfs dfs", NULL, 0, 0, NULL },
	{ CLI_AT_MOST_ONE, "bfs bitstate", NULL, 0, 0, NULL },
	{ CLI_REPEATS, "set", NULL, 0, 0, NULL },
	{ 0, NULL, NULL, 0, 0, NULL },
};

static const struct cli_spec check_spec = {
	"check", NULL, check_options, check_rules, 1, 1, "exactly one configuration file",
};

/* One more --set KEY=VALUE into @a->set. 0, or -1 after saying what is wrong. */
static int parse_setting(const char *text, struct check_args *a)
{
	const char *eq = strchr(text, '=');
	char *key = a->set_key[a->nset];

	if (!eq || eq == text || (size_t)(eq - text) >= sizeof(a->set_key[0])) {
		cli_error("check: --set needs KEY=VALUE (a [check] key, such as "
			  "smart_scan_policy=phased), not '%s'", text);
		return -1;
	}
	memcpy(key, text, (size_t)(eq - text));
	key[eq - text] = '\0';
	for (size_t i = 0; i < a->nset; i++)
		if (strcmp(a->set[i].key, key) == 0) {
			cli_error("check: --set %s given twice", key);
			return -1;
		}
	if (a->nset == CHECK_MAX_SETS) {
		cli_error("check: at most %d --set", CHECK_MAX_SETS);
		return -1;
	}
	a->set[a->nset++] = (struct mc_setting){ key, eq + 1 };
	return 0;
}

/* 1: handled (listing), 0: go on, -1: bad usage */
static int parse_args(int argc, char **argv, struct check_args *a)
{
	struct cli_args args;
	struct cli_file output = { "-o", NULL }, config = { "the configuration", NULL };
	const char *value;
	uint64_t n;
	int c, m;

	if (cli_args_parse(&check_spec, argc, argv, &args) != 0)
		return -1;
	while ((c = cli_args_next(&args, &value)) != -1) {
		switch (c) {
		case 'j': a->json = true; break;
		case 'o': a->output = value; break;
		case 'q': a->quiet = true; break;
		case 'b': a->opt.search = MC_SEARCH_BFS; break;
		case 's':
			if (parse_setting(value, a) != 0)
				return -1;
			break;
		case 'L': return list_mutants() == CLI_OK ? 1 : -1;
		case 'I': return list_invariants() == CLI_OK ? 1 : -1;
		case 'm':
			if ((m = mc_mutant_lookup(value)) < 0) {
				cli_error("check: no mutant '%s' (ksmkit check --list-mutants)", value);
				return -1;
			}
			a->opt.mutant = (unsigned)m;
			break;
		case 'd':
			a->opt.search = MC_SEARCH_DFS;
			if (!strcmp(value, "none")) {
				a->opt.depth = MC_DEPTH_NONE;
			} else if (parse_count(value, &a->opt.depth) != 0 || !a->opt.depth ||
				   a->opt.depth == MC_DEPTH_NONE) {
				cli_error("check: --dfs needs a depth bound above 0 or 'none', "
					  "not '%s'", value);
				return -1;
			}
			break;
		case 'W':
			if (parse_count(value, &n) != 0 || n < 1 || n > 8) {
				cli_error("check: --workers needs a number of threads from 1 to 8, "
					  "not '%s'", value);
				return -1;
			}
			a->opt.workers = (unsigned)n;
			break;
		case 'B':
			if (parse_count(value, &n) != 0 || n < 20 || n > 36) {
				cli_error("check: --bitstate needs the log2 of its bits, from 20 "
					  "(128 KiB) to 36 (8 GiB), not '%s'", value);
				return -1;
			}
			a->opt.bitstate_log2 = (unsigned)n;
			break;
		case 'M':
			if (parse_count(value, &a->opt.max_states) != 0) {
				cli_error("check: --max-states needs a number, not '%s'", value);
				return -1;
			}
			break;
		}
	}
	a->config = args.operand[0];
	output.path = a->output;
	config.path = a->config;
	return cli_check_outputs("check", &output, 1, &config, 1) == 0 ? 0 : -1;
}

/* Bitstate hashing: its bits, SPIN's hash factor, and the coverage estimate. */
static void print_bitstate(const struct mc_result *res)
{
	const struct mc_stats *s = &res->stats;
	double bits = (double)((uint64_t)1 << res->bitstate_log2);

	printf("search: depth-first%s, bitstate hashing, %s; 2^%u bits (%.0f MiB), %.2f%% set, "
	       "%u a state; hash factor %.0f (bits per state); estimated coverage %.4f%% of the "
	       "states met\n",
	       res->depth_bound ? " with a depth bound" : "",
	       res->verdict == MC_VIOLATION ? "stopped at the violation" : "not exhaustive",
	       res->bitstate_log2, bits / 8 / 1048576, 100.0 * (double)s->bits_set / bits,
	       MC_BITS_PER_STATE,
	       s->distinct ? bits / (double)s->distinct : 0.0, 100.0 * s->coverage);
}

static void print_stats(const struct check_args *a, const struct mc_config *cfg,
			const struct mc_result *res)
{
	const struct mc_stats *s = &res->stats;
	double n = (double)s->distinct;

	printf("%s: %s\n", "configuration", mc_config_description(cfg) ? mc_config_description(cfg)
								       : "(no description)");
	for (size_t i = 0; i < a->nset; i++)
		printf("set: %s = %s (in place of the file's)\n", a->set[i].key, a->set[i].value);
	if (res->bitstate_log2)
		print_bitstate(res);
	else
		printf("search: %s%s%s, %s; fingerprints: 64-bit XXH3 (any two of these %llu "
		       "states collide with probability about %.1e)\n",
		       res->search == MC_SEARCH_DFS ? "depth-first" : "breadth-first",
		       res->workers > 1 ? " on several workers" : "",
		       res->depth_bound ? " with a depth bound" : "",
		       s->exhaustive ? "exhaustive"
				     : res->verdict == MC_VIOLATION ? "stopped at the violation"
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

/*
 * The counterexample as a workload in @path. It is said in memory first: a
 * trace the workload language cannot say touches no file (and no file is
 * ever removed: -o /dev/stdout is a path too).
 */
static int write_counterexample(const struct mc_config *cfg, const struct mc_result *res,
				const char *path)
{
	char why[512], *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len), *f;
	int rc = -1;

	if (mem) {
		rc = mc_trace_write_workload(cfg, res, mem, why, sizeof(why));
		if (fclose(mem) != 0 && rc == 0)
			rc = -1, snprintf(why, sizeof(why), "out of memory");
	} else {
		snprintf(why, sizeof(why), "out of memory");
	}
	if (rc != 0) {
		cli_error("check: no workload file written: %s", why);
		free(text);
		return CLI_FAILED;
	}
	if ((f = cli_output_open("check", path)))
		fwrite(text, 1, len, f);
	free(text);
	if (cli_output_close("check", f, path) != CLI_OK)
		return CLI_FAILED;
	if (!res->mutant)
		fprintf(stderr, "ksmkit check: counterexample written to %s (replay: ksmkit sim %s)\n",
			path, path);
	else
		fprintf(stderr, "ksmkit check: counterexample written to %s\n", path);
	return CLI_OK;
}

static void report_text(const struct check_args *a, const struct mc_config *cfg,
			const struct mc_result *res)
{
	if (res->verdict == MC_VIOLATION) {
		mc_trace_print(cfg, res, stdout);
		putchar('\n');
	}
	print_stats(a, cfg, res);
	if (res->verdict == MC_PASS) {
		/* the invariants the configuration checks, not every one there is */
		printf("all invariants hold in every state explored:");
		for (int i = 0; i < MC_INV_COUNT; i++)
			if (mc_config_checks(cfg, i))
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
	if (mc_config_parse_file_with(a.config, a.set, a.nset, &cfg, &perr) != 0) {
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
		report_text(&a, cfg, &res);
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
