/*
 * cli_util.c - messages and --help detection shared by every ksmkit
 * subcommand.
 */
#include "cli.h"

#include <stdarg.h>
#include <string.h>

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("ksmkit: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

bool cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return false;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return true;
	}
	return false;
}

void cli_print_usage(const struct cli_command *cmd, FILE *out)
{
	fputs(cmd->usage, out);
}
