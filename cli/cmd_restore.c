/*
 * cmd_restore.c - `ksmkit restore`: put back the KSM knobs that a run killed
 * whole (guardian, sentinel and runner at once) left changed, from its
 * state file, and say what changed. A run's own processes restore
 * everything else; this is for what nothing was left alive to do.
 */
#include "cli.h"
#include "backend.h"

#include <getopt.h>
#include <stdio.h>

#define RESTORE_WAIT_NS (30 * UINT64_C(1000000000))

static void print_report(const struct kb_restore_report *rep, bool quiet)
{
	if (!rep->had_saved) {
		if (quiet)
			return;
		printf("nothing to restore: no run left the KSM knobs changed\n");
		if (rep->last_rescue[0])
			printf("last rescue by a sentinel: %s\n", rep->last_rescue);
		return;
	}
	if (rep->nchanges == 0) {
		printf("restored the knobs saved by run %d: none had changed\n", (int)rep->saver);
		return;
	}
	printf("restored the knobs saved by run %d:\n", (int)rep->saver);
	for (size_t i = 0; i < rep->nchanges; i++)
		printf("  %-36s %s -> %s\n", rep->change[i].name, rep->change[i].was,
		       rep->change[i].now);
}

int cmd_restore(int argc, char **argv)
{
	static const struct option options[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	struct kb_restore_report rep;
	char msg[1024];
	bool quiet = false;
	int opt, status;

	while ((opt = getopt_long(argc, argv, "q", options, NULL)) != -1) {
		if (opt != 'q')
			return CLI_USAGE;
		quiet = true;
	}
	if (optind < argc) {
		cli_error("restore: unexpected argument '%s' (see ksmkit restore --help)",
			  argv[optind]);
		return CLI_USAGE;
	}
	status = kb_restore(RESTORE_WAIT_NS, &rep, msg, sizeof msg);
	if (status == KB_SKIPPED) {
		cli_error("restore: %s; skipped", msg);
		return CLI_SKIPPED;
	}
	if (msg[0])
		cli_error("restore: %s", msg);
	if (status != KB_OK)
		return CLI_FAILED;
	print_report(&rep, quiet);
	return CLI_OK;
}
