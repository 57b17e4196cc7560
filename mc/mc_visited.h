/*
 * mc_visited.h - the set of visited states: 64-bit fingerprints in an
 * open-addressing table (linear probing, at most 3/4 full, doubling), each
 * with a 32-bit number: the shallowest depth it was reached at (a
 * depth-bounded DFS explores a state again when it reaches it shallower), or
 * whatever else the caller keeps per fingerprint; or, through the claim
 * calls, shared by the threads of a parallel search. Not installed.
 */
#ifndef KSMKIT_MC_VISITED_H
#define KSMKIT_MC_VISITED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mc.h" /* MC_BITS_PER_STATE */

struct mc_visited_slot {
	uint64_t key;      /* 0: empty (fingerprint 0 is stored as 1) */
	uint32_t depth;
};

struct mc_visited {
	struct mc_visited_slot *slot;
	size_t cap, n;
};

int mc_visited_init(struct mc_visited *v, size_t expected);
void mc_visited_free(struct mc_visited *v);

enum mc_visit {
	MC_VISIT_NEW,       /* not seen before: now recorded at @depth */
	MC_VISIT_SHALLOWER, /* seen, but deeper than @depth: now recorded at @depth */
	MC_VISIT_SEEN,      /* seen at @depth or shallower */
	MC_VISIT_OOM,       /* the table could not grow */
};

/*
 * Add @fp with number @depth, or lower its number to @depth; *@stored (if
 * not NULL) receives the number the set holds for @fp afterwards.
 */
enum mc_visit mc_visited_add(struct mc_visited *v, uint64_t fp, uint32_t depth,
			     uint32_t *stored);

/* Start loading @fp's slot into the cache, ahead of an add or find. */
static inline void mc_visited_prefetch(const struct mc_visited *v, uint64_t fp)
{
	__builtin_prefetch(&v->slot[(size_t)(fp ? fp : 1) & (v->cap - 1)]);
}

/* Whether @fp is in the set; its number in *depth. */
bool mc_visited_find(const struct mc_visited *v, uint64_t fp, uint32_t *depth);

/*
 * A claiming thread's share of the room left: the set's count n is raised by
 * MC_VISITED_QUOTA slots at a time, so that claims do not all write one
 * shared word (two workers' claims on it cost a tenth of a parallel search).
 * n then counts the slots used and those handed out; a quota stays valid
 * across a grow.
 */
#define MC_VISITED_QUOTA 64
struct mc_visited_quota {
	size_t left;
};

/*
 * Concurrent insertion (a parallel breadth-first search): threads may claim
 * and publish at once, none may add or grow meanwhile. A claim either finds
 * @fp (MC_VISIT_SEEN, its number in *stored once its claimant has published
 * it: the call waits for that), or takes a slot for it (MC_VISIT_NEW, *slot
 * to publish the number in, from the thread's quota @q), or refuses because
 * no quota fits in 3/4 of the set (MC_VISIT_OOM: grow it with
 * mc_visited_grow, alone, and claim again). A
 * set used this way is used only this way: numbers are stored plus one, so
 * that 0 means "claimed, not yet published".
 */
enum mc_visit mc_visited_claim(struct mc_visited *v, struct mc_visited_quota *q, uint64_t fp,
			       uint32_t *stored, size_t *slot);
void mc_visited_publish(struct mc_visited *v, size_t slot, uint32_t number);
/* Whether the set is too full for another thread's quota. */
bool mc_visited_full(const struct mc_visited *v);
/*
 * Double the set (no claim may run meanwhile, and every claim is published)
 * on @threads threads (this one and up to MC_VISITED_MAX_THREADS - 1 it
 * starts; where one cannot start, this one does its share): the caller's
 * other workers are waiting meanwhile, so their cores are free. -1 out of
 * memory.
 */
#define MC_VISITED_MAX_THREADS 8
int mc_visited_grow(struct mc_visited *v, unsigned threads);

/*
 * Bitstate hashing (SPIN's supertrace): 2^log2 bits and no fingerprints; a
 * state is taken as seen when both of its bits (two hashes of its
 * fingerprint) are set, so a new state is wrongly skipped with probability
 * (bits set / bits)^2 at the moment it is met. The set sums those odds over
 * the states it adds, for an estimate of what was skipped.
 */
struct mc_bits {
	uint64_t *word;
	unsigned log2;
	uint64_t set;       /* bits set */
	uint64_t added;     /* states added */
	double skip_odds;   /* the sum, over the states added, of the odds of a skip then */
};

int mc_bits_init(struct mc_bits *b, unsigned log2);
void mc_bits_free(struct mc_bits *b);
/* MC_VISIT_NEW (its bits now set) or MC_VISIT_SEEN. */
enum mc_visit mc_bits_add(struct mc_bits *b, uint64_t fp);
/*
 * The estimated fraction of the states met that were explored: one minus
 * the mean of the skip odds the added states had (SPIN's hash factor is
 * bits / added).
 */
double mc_bits_coverage(const struct mc_bits *b);

#endif
