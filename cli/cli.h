/*
 * cli.h - what the ksmkit subcommands share: exit codes, messages, and the
 * table of subcommands. Each subcommand lives in its own cmd_*.c file and is
 * a function taking argc/argv (argv[0] is the subcommand's name) and returning
 * an exit code.
 */
#ifndef KSMKIT_CLI_H
#define KSMKIT_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One meaning per exit code. */
enum cli_exit {
	CLI_OK = 0,
	CLI_FAILED = 1,          /* the run failed, or results differ */
	CLI_USAGE = 2,           /* bad usage or bad input */
	CLI_SKIPPED = 77,        /* could not run here (reason printed) */
};

struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary; /* one line for `ksmkit --help` */
	const char *usage;   /* full --help text */
	const char *const *subcommands; /* NULL-terminated, e.g. plot's charts; or NULL */
};

extern const struct cli_command cli_commands[];

/* "ksmkit: message" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print @cmd's usage to @out. */
void cli_print_usage(const struct cli_command *cmd, FILE *out);

/* A trace for people: a line per row (scan or batch), then event outcomes. */
struct trace;
void cli_print_trace(const struct trace *t, const char *engine, FILE *out);

/*
 * The workload's [expect] sections against @engine's trace (and partition):
 * each failed check on stderr, and unless @quiet the checks the kernel
 * cannot make and a summary. CLI_OK when none fails (or there are none),
 * else CLI_FAILED.
 */
struct workload;
struct trace_page;
int cli_check_expectations(const struct workload *wl, const struct trace *t,
			   const struct trace_page *pages, size_t npages, const char *engine,
			   bool quiet);

/*
 * The *.wl files of @dir, sorted, as "DIR/NAME" strings (free with
 * cli_workloads_free); NULL when the directory cannot be read.
 * cli_default_set: those of @subdir ("workloads") relative to the current
 * directory, a source tree, else of PKGDATADIR/@subdir, the installed set.
 */
char **cli_workloads_in(const char *dir, size_t *n);
char **cli_default_set(const char *subdir, size_t *n);
void cli_workloads_free(char **list, size_t n);

int cmd_lint(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_restore(int argc, char **argv);
int cmd_selftest(int argc, char **argv);
int cmd_capture(int argc, char **argv);
int cmd_vms(int argc, char **argv);
int cmd_estimate(int argc, char **argv);

/*
 * What ksmkit calibrate prints of a calibration (cmd_calibrate.c), for
 * sweep predict --calibrate too: every cost, default and measured, then the
 * fit's rows and each calibration workload's modelled / measured; and its
 * costs written to @path as a cost file with @comment (0, or -1 reported
 * as @cmd's error).
 */
struct calib_result;
void cli_calib_report(const struct calib_result *res, FILE *out);
int cli_calib_write_costs(const char *cmd, const struct calib_result *res, const char *comment,
			  const char *path);

/*
 * cmd_capture.c, for another command (estimate): capture the processes
 * @pids (@npids, at most 64) or the command @command (argv, NULL-ended)
 * into @output, tokens only, every @every_ns, for @duration_ns (0: until
 * the processes end or SIGINT/SIGTERM ends the capture, which then keeps
 * what it has), with ksmkit capture's messages and progress. An exit
 * code (CLI_OK when the file holds at least one snapshot).
 */
#include <sys/types.h>
struct cli_capture_request {
	const char *output;
	const pid_t *pids;
	size_t npids;
	char **command;
	uint64_t every_ns, duration_ns;
	bool quiet;
	bool mergeable_only; /* only the VMAs KSM may merge now (capture --mergeable-only) */
};
int cli_capture(const struct cli_capture_request *req);

/*
 * cmd_estimate.c, for another command (vms): one estimate of @cap at @opt,
 * its workload admitted against this machine's memory first, with a
 * progress line under @cmd's name unless @quiet. CLI_OK and @out filled
 * (est_result_free it), or CLI_USAGE (the workload, admission) or
 * CLI_FAILED (the run) with the reason in @err.
 */
struct est_options;
struct est_capture;
struct est_result;
int cli_estimate_run(const char *cmd, const struct est_options *opt,
		     const struct est_capture *cap, struct est_result *out, bool quiet, char *err,
		     size_t errlen);

#endif
