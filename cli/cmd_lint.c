/*
 * cmd_lint.c - `ksmkit lint`: validate workload files and print them
 * normalized. Every file is checked even after a bad one, so one run reports
 * each file's first problem. The normalized text goes to standard output,
 * whose write errors main reports once, at exit (exit status 1).
 */
#include "cli.h"
#include "cli_args.h"
#include "workload.h"

static int lint_one(const char *path, bool quiet, bool several)
{
	struct workload *wl;
	struct wl_error err;

	if (wl_parse_file(path, &wl, &err) != 0) {
		cli_error("%s", err.text);
		return CLI_USAGE;
	}
	if (!quiet) {
		if (several)
			printf("; ---- %s\n", path);
		wl_print(wl, stdout); /* a write error: main reports it, at exit */
	}
	wl_free(wl);
	return CLI_OK;
}

static const struct cli_opt lint_options[] = {
	{ "quiet", 'q', false, 'q' },
	{ NULL, 0, false, 0 },
};

static const struct cli_spec lint_spec = {
	"lint", NULL, lint_options, NULL, 1, -1, "one or more workload files",
};

int cmd_lint(int argc, char **argv)
{
	struct cli_args args;
	const char *value;
	bool quiet = false;
	int status = CLI_OK;

	if (cli_args_parse(&lint_spec, argc, argv, &args) != 0)
		return CLI_USAGE;
	while (cli_args_next(&args, &value) == 'q')
		quiet = true;
	for (int i = 0; i < args.noperands; i++) {
		int rc = lint_one(args.operand[i], quiet, args.noperands > 1);

		if (rc > status)
			status = rc;
	}
	return status;
}
