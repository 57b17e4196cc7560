/*
 * cmd_lint.c - `ksmkit lint`: validate workload files and print them
 * normalized. Every file is checked even after a bad one, so one run reports
 * each file's first problem.
 */
#include "cli.h"
#include "workload.h"

#include <getopt.h>

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
		if (wl_print(wl, stdout) != 0) {
			cli_error("lint: cannot write output");
			wl_free(wl);
			return CLI_FAILED;
		}
	}
	wl_free(wl);
	return CLI_OK;
}

int cmd_lint(int argc, char **argv)
{
	static const struct option options[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	bool quiet = false;
	int opt, status = CLI_OK;

	while ((opt = getopt_long(argc, argv, "q", options, NULL)) != -1) {
		switch (opt) {
		case 'q':
			quiet = true;
			break;
		default:
			return CLI_USAGE;
		}
	}
	if (optind >= argc) {
		cli_error("lint: no workload file given (see ksmkit lint --help)");
		return CLI_USAGE;
	}
	for (int i = optind; i < argc; i++) {
		int rc = lint_one(argv[i], quiet, argc - optind > 1);

		if (rc > status)
			status = rc;
	}
	return status;
}
