/*
 * sim_xxh3.h - XXH3 for the fingerprint, with AVX2 where the processor has
 * it: the model checker hashes a block of the state's words for every state
 * it generates, and AVX2 takes 0.62x the time of the SSE2 code a plain x86-64
 * build gets from xxhash.h (760 bytes, measured side by side). The values are
 * XXH3's, whichever code computes them.
 */
#ifndef KSMKIT_SIM_XXH3_H
#define KSMKIT_SIM_XXH3_H

#include <stddef.h>
#include <stdint.h>

/* gcc only: its target pragma switches xxhash.h's vector code (sim_xxh3_avx2.c). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SIM_HAVE_XXH3_AVX2 1
/* XXH3_64bits_withSeed(@data, @len, @seed) in AVX2: only where the processor has it. */
uint64_t sim_xxh3_avx2(const void *data, size_t len, uint64_t seed);
#endif

#endif
