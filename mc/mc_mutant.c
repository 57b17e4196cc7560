/*
 * mc_mutant.c - names and descriptions of the simulator's seeded bugs, from
 * the one list in sim/sim_mutant.h, for `ksmkit check --mutant NAME`.
 */
#include "mc_internal.h"

#include <string.h>

#define MC_MUTANT_ENTRY_(name, cli, what) { cli, what },
static const struct {
	const char *name, *doc;
} mutants[SIM_MUTANT_COUNT] = {
	{ "none", "the simulator as written" },
	SIM_MUTANTS(MC_MUTANT_ENTRY_)
};
#undef MC_MUTANT_ENTRY_

unsigned mc_mutant_count(void)
{
	return SIM_MUTANT_COUNT;
}

const char *mc_mutant_name(unsigned mutant)
{
	return mutant < SIM_MUTANT_COUNT ? mutants[mutant].name : "?";
}

const char *mc_mutant_doc(unsigned mutant)
{
	return mutant < SIM_MUTANT_COUNT ? mutants[mutant].doc : "";
}

int mc_mutant_lookup(const char *name)
{
	for (unsigned i = 0; i < SIM_MUTANT_COUNT; i++)
		if (strcmp(mutants[i].name, name) == 0)
			return (int)i;
	return -1;
}
