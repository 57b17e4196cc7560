/*
 * cli_live.h - what `ksmkit run --cmd` and `ksmkit vms` share: the KSM knobs
 * given on the command line (--knob NAME=VALUE,... and the two shortcuts
 * --pages-to-scan and --sleep-millisecs), a capture that follows the live
 * run's commands at every full scan (capture.h, in the backend's runner
 * process through its hooks), the progress line, and how a live run's end
 * is said.
 */
#ifndef KSMKIT_CLI_LIVE_H
#define KSMKIT_CLI_LIVE_H

#include "backend.h"
#include "capture.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Set knob @name to @text in @live (the --knob syntax's one entry; @option
 * names the option in messages). 0, or CLI_USAGE after "ksmkit: CMD:
 * OPTION: ..." naming the knob and why.
 */
int cli_live_knob(const char *cmd, const char *option, const char *name, const char *text,
		  struct kb_live *live);
/* --knob NAME=VALUE[,NAME=VALUE...]. 0 or CLI_USAGE. */
int cli_live_knobs(const char *cmd, const char *list, struct kb_live *live);
/* The rules between knobs (wl_knobs_check) with full scans awaited when
 * @awaits_scans. 0 or CLI_USAGE. */
int cli_live_check_knobs(const char *cmd, const struct kb_live *live, bool awaits_scans);

/*
 * Find program @name as execvp would (a path as it is, else in PATH) into
 * @path: 0, or CLI_USAGE after "ksmkit: CMD: OPTION: cannot run NAME: why".
 */
int cli_live_resolve(const char *cmd, const char *option, const char *name, char *path,
		     size_t len);

/*
 * A capture file written while a live run goes: hooks for kb_live (they run
 * in the backend's runner). started() opens the processes and the file and
 * takes snapshot 0; a thread then takes one at every change of full_scans
 * (skipping scans it is too slow for, as capture --every full-scan does);
 * stopping() ends it, closing the file with its end record.
 */
struct cli_follow {
	const char *path;
	struct cap_proc *proc;
	struct cap_writer *writer;
	pthread_t thread;
	bool thread_started;
	atomic_bool stop;
	uint64_t start_ns, last_full_scans, index;
	char error[600]; /* the thread's failure, or "" */
};

void cli_follow_init(struct cli_follow *f, const char *path, struct kb_live_hooks *hooks);
/* After the run, in the caller: the snapshots the file holds, read back
 * (which checks it); -1 with a message when it does not read. */
long long cli_follow_count(const char *cmd, const char *path);

/* The progress callback for kb_options (@arg: the command's name). */
void cli_live_progress(const struct kb_progress *p, void *arg);
void cli_live_note(const char *note, void *arg);

/* "30 full scans done", "./x exited with status 0", ... into @buf. */
const char *cli_live_end_text(const struct kb_live *live, const struct kb_live_result *res,
			      char *buf, size_t len);

/* `ksmkit run --cmd`'s request (cmd_run.c reads it, cmd_run_cmd.c runs it). */
struct run_cmd_args {
	struct kb_live live;   /* knobs, scans, duration */
	char **argv;           /* the command, after -- */
	const char *output;    /* -o */
	const char *capture;   /* --capture FILE */
	bool csv, json, quiet, force;
};
int cli_run_cmd(struct run_cmd_args *c);

#endif
