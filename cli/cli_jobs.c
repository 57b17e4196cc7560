/*
 * cli_jobs.c - jobs for GNU parallel (cli_jobs.h): shell words, the program
 * a job runs, absolute paths, and opening the rows to collect. It prints
 * nothing of a job's own arguments; the commands do.
 */
#include "config.h"
#include "cli.h"
#include "cli_jobs.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SHELL_SAFE "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-=+,"

void cli_job_word(FILE *out, const char *word)
{
	if (*word && strspn(word, SHELL_SAFE) == strlen(word)) {
		fputs(word, out);
		return;
	}
	fputc('\'', out);
	for (; *word; word++)
		if (*word == '\'')
			fputs("'\\''", out);
		else
			fputc(*word, out);
	fputc('\'', out);
}

/* /proc/self/exe, or the libtool wrapper that runs it (cli_job_program). */
static void this_program(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *base, wrapper[PATH_MAX];

	if (n <= 0) {
		snprintf(buf, len, "ksmkit");
		return;
	}
	buf[n] = '\0';
	base = strrchr(buf, '/');
	if (!base || base - buf < 6 || strncmp(base - 6, "/.libs", 6) != 0)
		return;
	if (strncmp(base + 1, "lt-", 3) == 0)
		base += 3;
	snprintf(wrapper, sizeof(wrapper), "%.*s/%s", (int)(strrchr(buf, '/') - buf - 6), buf,
		 base + 1);
	if (access(wrapper, X_OK) == 0)
		snprintf(buf, len, "%s", wrapper);
}

void cli_job_program(const char *given, char *buf, size_t len)
{
	if (given)
		snprintf(buf, len, "%s", given);
	else
		this_program(buf, len);
}

void cli_job_path(const char *path, char *buf, size_t len)
{
	char resolved[PATH_MAX];

	snprintf(buf, len, "%s", realpath(path, resolved) ? resolved : path);
}

FILE *cli_rows_open(const char *cmd, const char *path)
{
	FILE *in = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");

	if (!in)
		cli_error("%s: %s: %s", cmd, path, strerror(errno));
	return in;
}

void cli_rows_close(FILE *in)
{
	if (in && in != stdin)
		fclose(in);
}
