/*
 * cli_output.h - where the output of a ksmkit command goes, and making sure
 * it got there. Output files are opened and closed here, and every write
 * error, the one fclose finds in stdio's buffer included, is reported with
 * its reason (exit status 1); an output path that is one of the command's
 * inputs (the same file: same device and inode, through symlinks and hard
 * links too) is refused before anything runs (exit status 2); standard
 * output is checked once, by main, when the command is done, so that
 * `ksmkit lint x.wl >/dev/full` fails as it should.
 */
#ifndef KSMKIT_CLI_OUTPUT_H
#define KSMKIT_CLI_OUTPUT_H

#include <stdio.h>

/* A file a command reads or writes, and how messages name it. */
struct cli_file {
	const char *what; /* "-o", "--pages", "the workload", "--costs" */
	const char *path; /* NULL: none (skipped) */
};

/*
 * Refuse outputs that would overwrite an input, or each other: returns 0,
 * or CLI_USAGE after "ksmkit: CMD: -o x.wl is the workload x.wl: refusing to
 * overwrite it". An output that does not exist yet overwrites nothing (but
 * two such outputs with one path are still one file).
 */
int cli_check_outputs(const char *cmd, const struct cli_file *outputs, size_t noutputs,
		      const struct cli_file *inputs, size_t ninputs);

/*
 * Open @path for writing, or standard output when @path is NULL. NULL after
 * "ksmkit: CMD: cannot write PATH: reason".
 */
FILE *cli_output_open(const char *cmd, const char *path);

/*
 * Close what cli_output_open returned. For a file: 0, or CLI_FAILED after
 * "ksmkit: CMD: cannot write PATH: reason" when any write to it failed.
 * For standard output: flushed only, and CLI_FAILED without a message when
 * it failed (cli_finish_stdout says why, once).
 */
int cli_output_close(const char *cmd, FILE *out, const char *path);

/*
 * At start: put standard output on a stream that keeps the reason of a
 * failed write (stdio drops it with the buffer), for cli_finish_stdout.
 */
void cli_watch_stdout(void);

/*
 * At exit: flush and close standard output. Returns @status, or when a write
 * to standard output failed CLI_FAILED (unless @status is CLI_USAGE) after
 * "ksmkit: writing standard output: reason".
 */
int cli_finish_stdout(int status);

#endif
