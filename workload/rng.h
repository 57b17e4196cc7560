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

#define WL_RNG_GAMMA UINT64_C(0x9e3779b97f4a7c15)

/* The output for state @z (splitmix64's finalizer). */
static inline uint64_t wl_rng_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static inline uint64_t wl_rng_next(struct wl_rng *rng)
{
	return wl_rng_mix(rng->state += WL_RNG_GAMMA);
}

/*
 * The draw @d (0 for the next) that @rng will return, without drawing: the
 * state only counts, so any draw is at hand (the simulator's deferred writes).
 */
static inline uint64_t wl_rng_peek(const struct wl_rng *rng, uint64_t d)
{
	return wl_rng_mix(rng->state + (d + 1) * WL_RNG_GAMMA);
}

/*
 * Draws @d, @d + @stride, @d + 2 @stride, ... of @rng in turn, without
 * drawing (wl_rng_peek() of each): the state only counts, so the next
 * draw's state is one addition away.
 */
struct wl_rng_strided {
	uint64_t state, step;
};

static inline struct wl_rng_strided wl_rng_stride(const struct wl_rng *rng, uint64_t d,
						 uint64_t stride)
{
	return (struct wl_rng_strided){ rng->state + (d + 1) * WL_RNG_GAMMA, stride * WL_RNG_GAMMA };
}

static inline uint64_t wl_rng_strided_next(struct wl_rng_strided *c)
{
	uint64_t z = c->state;

	c->state += c->step;
	return wl_rng_mix(z);
}

/* x ^ (x >> @shift) undone. */
static inline uint64_t wl_rng_unxorshift(uint64_t z, unsigned shift)
{
	uint64_t x = z;

	for (unsigned i = 0; i < 64 / shift; i++) /* each pass fixes @shift more bits */
		x = z ^ (x >> shift);
	return x;
}

/* The inverse of odd @a mod 2^64 (Newton's steps double the bits that are right). */
static inline uint64_t wl_rng_inverse_odd(uint64_t a)
{
	uint64_t x = a;

	for (int i = 0; i < 5; i++)
		x *= 2 - a * x;
	return x;
}

/* The state @z whose output wl_rng_mix(z) is @x: the finalizer is a bijection. */
static inline uint64_t wl_rng_unmix(uint64_t x)
{
	uint64_t z = wl_rng_unxorshift(x, 31);

	z = wl_rng_unxorshift(z * wl_rng_inverse_odd(UINT64_C(0x94d049bb133111eb)), 27);
	return wl_rng_unxorshift(z * wl_rng_inverse_odd(UINT64_C(0xbf58476d1ce4e5b9)), 30);
}

/*
 * The first draw d (0 for the next) that @rng returns below @limit, found
 * without drawing: draw d is below it when the state after d + 1 steps is
 * wl_rng_unmix(v) for some v < limit, and since the step is odd, each v
 * names one d. UINT64_MAX when @limit is 0. O(limit): for the offsets
 * wl_rng_below() would redraw (limit = 2^64 mod its bound, below the bound).
 */
static inline uint64_t wl_rng_first_below(const struct wl_rng *rng, uint64_t limit)
{
	const uint64_t inv_gamma = wl_rng_inverse_odd(WL_RNG_GAMMA);
	uint64_t first = UINT64_MAX;

	for (uint64_t v = 0; v < limit; v++) {
		uint64_t d = (wl_rng_unmix(v) - rng->state) * inv_gamma - 1;

		if (d < first)
			first = d;
	}
	return first;
}

/* @rng after @d draws. */
static inline void wl_rng_skip(struct wl_rng *rng, uint64_t d)
{
	rng->state += d * WL_RNG_GAMMA;
}

/* A stream for user @stream (a writer or event index) of workload @seed. */
static inline struct wl_rng wl_rng_stream(uint64_t seed, uint64_t stream)
{
	struct wl_rng mix = { seed ^ (stream * UINT64_C(0xd1b54a32d192ed03)) };
	struct wl_rng rng = { wl_rng_next(&mix) };

	return rng;
}

/*
 * x % d by multiplications, for a divisor d >= 2 known in advance: its
 * magic wl_mod_magic(d) is ceil(2^128 / d), and with 128 fraction bits the
 * remainder is exact for every 64-bit x and d (Lemire, Kaser and Kurz,
 * "Faster remainder by direct computation", 2019). A division is some forty
 * cycles; this, three multiplications.
 */
static inline unsigned __int128 wl_mod_magic(uint64_t d)
{
	return ~(unsigned __int128)0 / d + 1;
}

static inline uint64_t wl_mod(uint64_t x, unsigned __int128 magic, uint64_t d)
{
	unsigned __int128 frac = magic * x; /* the fraction of x / d, mod 2^128 */
	unsigned __int128 low = ((unsigned __int128)(uint64_t)frac * d) >> 64;

	return (uint64_t)(((frac >> 64) * d + low) >> 64);
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
