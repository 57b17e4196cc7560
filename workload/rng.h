/*
 * rng.h - the seeded pseudo-random generator every engine uses for workload
 * randomness (random page picks, random offsets).
 *
 * splitmix64: tiny state, full 2^64 period, and a stream per user derived
 * from (workload seed, stream id), so the simulator and the backend draw the
 * same numbers for the same writer no matter how their other work interleaves.
 * It is a value type: copying it forks the stream, which the model checker
 * relies on. Not for cryptography.
 */
#ifndef KSMKIT_RNG_H
#define KSMKIT_RNG_H

#include <stdint.h>

struct wl_rng {
	uint64_t state;
};

static inline uint64_t wl_rng_next(struct wl_rng *rng)
{
	uint64_t z = (rng->state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* A stream for user @stream (a writer or event index) of workload @seed. */
static inline struct wl_rng wl_rng_stream(uint64_t seed, uint64_t stream)
{
	struct wl_rng mix = { seed ^ (stream * UINT64_C(0xd1b54a32d192ed03)) };
	struct wl_rng rng = { wl_rng_next(&mix) };

	return rng;
}

/* Uniform in [0, bound), bound > 0, without modulo bias. */
static inline uint64_t wl_rng_below(struct wl_rng *rng, uint64_t bound)
{
	uint64_t limit = -bound % bound; /* 2^64 mod bound */
	uint64_t x;

	do
		x = wl_rng_next(rng);
	while (x < limit);
	return x % bound;
}

#endif
