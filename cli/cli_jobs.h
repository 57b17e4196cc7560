/*
 * cli_jobs.h - what the commands that split their work into GNU parallel
 * jobs share (sweep and estimate: --emit-jobs, --point, --collect): a job
 * as one self-contained shell command line, this program and every file it
 * reads named by an absolute path and quoted for the shell, and the rows
 * file the jobs' output is collected from (a file, or "-" for standard
 * input). What a job computes and how its rows read are each command's own.
 */
#ifndef KSMKIT_CLI_JOBS_H
#define KSMKIT_CLI_JOBS_H

#include <stddef.h>
#include <stdio.h>

/*
 * @word to @out as one shell word: as it is when it holds only characters
 * no shell treats specially, else in single quotes (a ' inside as '\'').
 */
void cli_job_word(FILE *out, const char *word);

/*
 * The program a job runs, into @buf: @given (--ksmkit CMD) when not NULL,
 * else this program by its absolute path (/proc/self/exe; from an
 * uninstalled libtool build, the wrapper script DIR/NAME for DIR/.libs/
 * [lt-]NAME, which alone knows where the uninstalled libraries are), or
 * "ksmkit" (found in PATH) when /proc cannot be read.
 */
void cli_job_program(const char *given, char *buf, size_t len);

/* @path made absolute, into @buf (a job may run in another directory or on another host). */
void cli_job_path(const char *path, char *buf, size_t len);

/*
 * The rows to collect: @path opened for reading, or standard input for
 * "-". NULL after "ksmkit: CMD: PATH: reason". cli_rows_close closes what
 * it opened (never standard input).
 */
FILE *cli_rows_open(const char *cmd, const char *path);
void cli_rows_close(FILE *in);

#endif
