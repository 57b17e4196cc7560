/*
 * ksmkit.c - the ksmkit program: finds the subcommand and runs it.
 *
 * Every subcommand answers --help from its usage text here, so `ksmkit X
 * --help` always tells the truth, including "not implemented yet" for those
 * whose work has not landed.
 */
#include "config.h"
#include "cli.h"

#include <string.h>

static const char lint_usage[] =
	"usage: ksmkit lint [-q|--quiet] FILE.wl...\n"
	"\n"
	"Check workload files strictly and print each in normalized form (every key\n"
	"explicit; the output parses back to the same workload). The first problem\n"
	"in each file is reported as FILE:LINE: message.\n"
	"\n"
	"  -q, --quiet   only report problems; print nothing for good files\n"
	"\n"
	"Exit status: 0 all files are valid, 2 a file is invalid or unreadable.\n";

static const char sim_usage[] =
	"usage: ksmkit sim FILE.wl [--csv|--json] [--per-batch]\n"
	"\n"
	"Run a workload on the KSM simulator and print its trace.\n"
	"Not implemented yet: this subcommand answers with exit status 4.\n";

static const char run_usage[] =
	"usage: ksmkit run FILE.wl [--csv|--json] [--quiet] [--measure merge|cow|unmerge|thp]\n"
	"\n"
	"Run a workload on this machine's kernel KSM (root) and print its trace.\n"
	"Not implemented yet: this subcommand answers with exit status 4.\n";

static const char compare_usage[] =
	"usage: ksmkit compare FILE.wl [--json]\n"
	"\n"
	"Run a workload on the simulator and the kernel and compare them scan by scan.\n"
	"Not implemented yet: this subcommand answers with exit status 4.\n";

static const char check_usage[] =
	"usage: ksmkit check CONFIG [--json]\n"
	"\n"
	"Model-check the simulator on a small configuration: every interleaving.\n"
	"Not implemented yet: this subcommand answers with exit status 4.\n";

static const char plot_usage[] =
	"usage: ksmkit plot TRACE.csv... -o OUT.png|OUT.svg\n"
	"\n"
	"Draw scan-speed and counter charts with GNU libplot.\n"
	"Not implemented yet: this subcommand answers with exit status 4.\n";

static const char calibrate_usage[] =
	"usage: ksmkit calibrate [-o COSTS]\n"
	"\n"
	"Measure the simulator's per-operation costs on this machine.\n"
	"Not implemented yet: this subcommand answers with exit status 4.\n";

const struct cli_command cli_commands[] = {
	{ "lint", cmd_lint, "check workload files and print them normalized", lint_usage },
	{ "sim", cli_not_implemented, "run a workload on the simulator (not implemented yet)",
	  sim_usage },
	{ "run", cli_not_implemented, "run a workload on the kernel's KSM (not implemented yet)",
	  run_usage },
	{ "compare", cli_not_implemented, "compare simulator and kernel (not implemented yet)",
	  compare_usage },
	{ "check", cli_not_implemented, "model-check the simulator (not implemented yet)",
	  check_usage },
	{ "plot", cli_not_implemented, "draw charts of traces (not implemented yet)", plot_usage },
	{ "calibrate", cli_not_implemented, "measure the cost model (not implemented yet)",
	  calibrate_usage },
	{ NULL, NULL, NULL, NULL },
};

static void print_main_usage(FILE *out)
{
	fprintf(out, "usage: ksmkit COMMAND [ARGS...]\n"
		     "       ksmkit COMMAND --help\n"
		     "       ksmkit --version\n"
		     "\n"
		     "ksmkit is a lab for Linux KSM (Kernel Samepage Merging): one workload file\n"
		     "drives a simulator and the real kernel. Commands:\n\n");
	for (const struct cli_command *c = cli_commands; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->summary);
	fprintf(out, "\nExit status: 0 ok, 1 failure, 2 bad usage or input, 4 not implemented "
		     "yet,\n77 skipped (the reason is printed).\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		print_main_usage(stderr);
		return CLI_USAGE;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		print_main_usage(stdout);
		return CLI_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("ksmkit %s\n", PACKAGE_VERSION);
		return CLI_OK;
	}
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		if (strcmp(argv[1], c->name) != 0)
			continue;
		if (cli_wants_help(argc - 1, argv + 1)) {
			cli_print_usage(c, stdout);
			return CLI_OK;
		}
		return c->run(argc - 1, argv + 1);
	}
	cli_error("unknown command '%s' (see ksmkit --help)", argv[1]);
	return CLI_USAGE;
}
