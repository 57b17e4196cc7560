/*
 * cli_util.c - the messages and usage text every ksmkit subcommand prints.
 */
#include "cli.h"

#include <stdarg.h>

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("ksmkit: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_print_usage(const struct cli_command *cmd, FILE *out)
{
	fputs(cmd->usage, out);
}
