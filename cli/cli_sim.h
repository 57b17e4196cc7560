/*
 * cli_sim.h - what the commands that run the simulator on a user's workload
 * share (sim, compare, demo, sweep): admission against this machine's memory
 * before anything is allocated, the --costs file, and the progress line on a
 * terminal.
 */
#ifndef KSMKIT_CLI_SIM_H
#define KSMKIT_CLI_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "sim_driver.h"

/*
 * The memory admission may count on: KSMKIT_MEM_AVAILABLE when set (a size,
 * "64g": to plan for another machine, or for tests), else MemAvailable from
 * /proc/meminfo. 0, -1 when neither can be read (*bytes is then UINT64_MAX),
 * -2 for a KSMKIT_MEM_AVAILABLE that is not a size.
 */
int cli_mem_available(uint64_t *bytes);

/*
 * Admission of a run of @wl with @opt (sim_admit) against cli_mem_available().
 * 0 when it may run; -1 with "FILE:LINE: ..." in @err when it may not (the
 * caller prints it and exits 2). Where memory cannot be read, only the rules
 * that do not depend on it (the simulator's page limit, the page writes) apply.
 */
int cli_admit(const struct workload *wl, const struct sim_admit_options *opt, char *err,
	      size_t errlen);

/*
 * Load a cost file (--costs) into @costs, starting from the defaults; NULL
 * @path leaves the defaults. 0, or -1 with the message printed as ksmkit's
 * error.
 */
int cli_load_costs(const char *path, struct sim_costs *costs);

/*
 * The progress line: "ksmkit: sim: scan 3/10, 34%, 00:03:12 left" on stderr,
 * redrawn with \r at most four times a second from half a second into the run,
 * and only when stderr is a terminal and not silenced. cli_progress_done()
 * erases it. Hook cli_progress_hook (with the struct as its argument and
 * CLI_PROGRESS_STEPS) into sim_run_options.
 */
#define CLI_PROGRESS_STEPS 65536u

struct cli_progress {
	const char *what;        /* the command, "sim" */
	bool enabled;            /* stderr is a terminal and not -q */
	struct timespec start;   /* when the command started */
	struct timespec run;     /* when the setup ended (0: not yet) */
	double last;             /* seconds since start of the last line drawn */
	int width;               /* characters of the line on the screen now */
};

void cli_progress_init(struct cli_progress *p, const char *what, bool quiet);
void cli_progress_hook(void *arg, const struct sim_progress *sp, const struct sim *s);
void cli_progress_done(struct cli_progress *p);

/*
 * The line for @sp after @elapsed seconds (@run_elapsed since setup), in @buf,
 * at most @width characters (0: any): the page writes are left out first.
 */
void cli_progress_format(const char *what, const struct sim_progress *sp, double elapsed,
			 double run_elapsed, size_t width, char *buf, size_t len);

#endif
