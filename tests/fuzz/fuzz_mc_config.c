/*
 * fuzz_mc_config.c - libFuzzer target for the model checker's configuration
 * language (mc/mc_ini.c, mc/mc_config.c). Any input must either parse into a
 * configuration that keeps the limits the search relies on (every index in
 * its table, the page slots within MC_MAX_SLOTS) and free cleanly, or fail
 * with a message naming the input; never crash, leak or hang.
 * Built and run by tests/fuzz/run-fuzz.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mc_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void expect(bool ok, const char *what, const uint8_t *data, size_t size)
{
	if (ok)
		return;
	fprintf(stderr, "parsed configuration breaks a limit: %s\n%.*s\n", what, (int)size,
		(const char *)data);
	abort();
}

/* What mc_model.c and mc_search.c index with, without checking again. */
static void check_limits(const struct mc_config *cfg, const uint8_t *data, size_t size)
{
	unsigned slots = 0;

	expect(cfg->nregions >= 1 && cfg->nregions <= MC_MAX_REGIONS, "regions", data, size);
	expect(cfg->nprocs >= 1 && cfg->nprocs <= MC_MAX_PROCS, "processes", data, size);
	expect(cfg->nvalues <= MC_MAX_VALUES, "values", data, size);
	expect(cfg->nwrite_values <= cfg->nvalues, "write values", data, size);
	expect(cfg->nstores <= MC_MAX_STORES, "stores", data, size);
	expect(cfg->ncontents == cfg->nvalues * (cfg->nvalues + 1), "contents", data, size);
	expect(cfg->nr_nodes >= 1 && cfg->nr_nodes <= 8, "nodes", data, size);
	for (unsigned i = 0; i < cfg->nwrite_values; i++)
		expect(cfg->write_value[i] < cfg->nvalues, "write value index", data, size);
	for (unsigned r = 0; r < cfg->nregions; r++) {
		const struct mc_region *reg = &cfg->region[r];

		expect(reg->npages >= 1 && reg->process < cfg->nprocs, "region", data, size);
		for (uint32_t p = 0; p < reg->npages; p++)
			expect(reg->value[p] < cfg->nvalues || reg->value[p] == MC_VALUE_UNTOUCHED,
			       "page value index", data, size);
		slots += reg->npages;
	}
	expect(cfg->nslots_initial == slots + 1 && cfg->nslots_initial < MC_MAX_SLOTS,
	       "page slots", data, size);
	expect(cfg->knobs[WL_KNOB_PAGES_TO_SCAN] > 0, "pages_to_scan (lint's rule)", data, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mc_config *cfg;
	struct mc_error err;

	if (mc_config_parse_buffer((const char *)data, size, "fuzz.conf", &cfg, &err) != 0) {
		if (cfg || strncmp(err.text, "fuzz.conf", 9) != 0) {
			fprintf(stderr, "a refusal that does not name the input: '%s'\n", err.text);
			abort();
		}
		return 0;
	}
	check_limits(cfg, data, size);
	mc_config_free(cfg);
	return 0;
}
