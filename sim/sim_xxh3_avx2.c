/*
 * sim_xxh3_avx2.c - XXH3 compiled for AVX2 (sim_xxh3.h): this file alone is
 * built for it, so the rest of the simulator runs on any x86-64, and its
 * caller asks the processor first.
 */
#include "sim_xxh3.h"

#ifdef SIM_HAVE_XXH3_AVX2
#pragma GCC target("avx2")
#define XXH_INLINE_ALL
#include <xxhash.h>

uint64_t sim_xxh3_avx2(const void *data, size_t len, uint64_t seed)
{
	return XXH3_64bits_withSeed(data, len, seed);
}
#endif
