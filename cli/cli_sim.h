/*
 * cli_sim.h - what the commands that run the simulator on a user's workload
 * share: the progress line on a terminal.
 */
#ifndef KSMKIT_CLI_SIM_H
#define KSMKIT_CLI_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "sim_driver.h"

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

/* The line for @sp after @elapsed seconds (@run_elapsed since setup), in @buf. */
void cli_progress_format(const char *what, const struct sim_progress *sp, double elapsed,
			 double run_elapsed, char *buf, size_t len);

#endif
