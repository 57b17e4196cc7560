/*
 * cmd_restore.c - `ksmkit restore`: put back the KSM knobs that a run killed
 * whole (guardian, sentinel and runner at once) left changed, from its
 * state file, and say what changed. A run's own processes restore
 * everything else; this is for what nothing was left alive to do. Its
 * report goes to standard output, whose write errors main reports.
 */
#include "cli.h"
#include "cli_args.h"
#include "backend.h"

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

static const struct cli_opt restore_options[] = {
	{ "quiet", 'q', false, 'q' },
	{ NULL, 0, false, 0 },
};

static const struct cli_spec restore_spec = {
	"restore", NULL, restore_options, NULL, 0, 0, "no operand",
};

int cmd_restore(int argc, char **argv)
{
	struct kb_restore_report rep;
	struct cli_args args;
	const char *value;
	char msg[1024];
	bool quiet = false;
	int status;

	if (cli_args_parse(&restore_spec, argc, argv, &args) != 0)
		return CLI_USAGE;
	while (cli_args_next(&args, &value) == 'q')
		quiet = true;
	status = kb_restore(RESTORE_WAIT_NS, &rep, msg, sizeof msg);
	if (status == KB_SKIPPED) {
		cli_error("restore: %s; skipped", msg);
		return CLI_SKIPPED;
	}
	if (msg[0])
		cli_error("restore: %s", msg);
	if (status != KB_OK)
		return CLI_FAILED;
	print_report(&rep, quiet); /* a write error: main reports it, at exit */
	return CLI_OK;
}
