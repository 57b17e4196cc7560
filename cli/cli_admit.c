/*
 * cli_admit.c - admission of a simulator run against this machine's memory:
 * MemAvailable from /proc/meminfo (or KSMKIT_MEM_AVAILABLE) handed to the
 * simulator's own estimate (sim_admit, sim/sim_admit.c), which knows what the
 * run will allocate. Reading the machine is the CLI's job, not sim/'s. Also
 * the --costs file of the commands that run the simulator beside the kernel.
 */
#include "cli_sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_mem_available(uint64_t *bytes)
{
	const char *env = getenv("KSMKIT_MEM_AVAILABLE");
	char line[256];
	int rc = -1;
	FILE *f;

	*bytes = UINT64_MAX;
	if (env && *env)
		return wl_parse_size(env, bytes) == 0 ? 0 : -2;
	f = fopen("/proc/meminfo", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long kib;

		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
			*bytes = (uint64_t)kib * 1024;
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

int cli_admit(const struct workload *wl, const struct sim_admit_options *opt, char *err,
	      size_t errlen)
{
	uint64_t available;

	if (cli_mem_available(&available) == -2) {
		snprintf(err, errlen, "KSMKIT_MEM_AVAILABLE: '%s' is not a size (e.g. 64g)",
			 getenv("KSMKIT_MEM_AVAILABLE"));
		return -1;
	}
	return sim_admit(wl, opt, available, NULL, err, errlen);
}

int cli_load_costs(const char *path, struct sim_costs *costs)
{
	struct sim_config cfg;
	char err[512];

	sim_config_default(&cfg);
	*costs = cfg.costs;
	if (path && sim_costs_load(path, costs, err, sizeof(err)) != 0) {
		fprintf(stderr, "ksmkit: %s\n", err);
		return -1;
	}
	return 0;
}
