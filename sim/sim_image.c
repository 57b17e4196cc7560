/*
 * sim_image.c - the simulated machine as bytes: one walk over the state
 * description (sim_fields.h) that writes either the canonical image, which
 * sim_hash() hashes and sim_equal() compares, or the model checker's
 * fingerprint, which leaves out what only observes and folds what the
 * checker abstracts away (sim_mc.h).
 *
 * Values are written one field at a time, a word or two each, never as raw
 * structs (padding and inactive union members are not state). The walk is
 * inlined into each of its two users with its mode a constant, so the
 * fingerprint, which the model checker takes of every state it generates,
 * pays for no field it leaves out.
 */
#include "sim_fields.h"

#include <stdlib.h>
#include <string.h>
/* XXH3 inlined: the fingerprint hashes a block per state the checker generates */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "sim_mc.h"
#include "sim_xxh3.h"

enum walk_mode { WALK_IMAGE, WALK_FINGERPRINT };

/*
 * Where the walk writes: each field as one 32-bit word, or two for a field
 * of 8 bytes (its type says which, at compile time), so the stream is
 * canonical (the first field two states differ in is the same word of
 * both). Full blocks of words are hashed (XXH3, chained through the seed)
 * or, for an image to compare, appended to a buffer that grows. Words, not
 * bytes: a byte store may alias the machine being read and would make the
 * walk reload it; packing several fields into a word costs more in branches
 * than the longer stream costs XXH3 (bench-mc, measured both ways), but
 * 32-bit words for the fields that fit them cost no branch and shorten the
 * stream (about 760 bytes a state on bench/mc-ksmd.conf, not 1,080): the
 * fingerprint takes 0.87x the time it took with 64-bit words (perf samples).
 */
#define SINK_WORDS 256u
/*
 * A record's fields (not its opaque bytes) go in without a check each: the
 * walk makes sure of this much room before each record (at most two words
 * a field: RECORD_WORDS), so word[] may run this far past SINK_WORDS.
 */
#define SINK_ROOM 64u

struct sink {
	uint32_t word[SINK_WORDS + SINK_ROOM];
	unsigned n;      /* words in word[]: the walk keeps its own cursor meanwhile */
	uint64_t hash;
	bool grows, oom;
	uint32_t *image; /* grows: every full block so far */
	size_t image_words, image_cap;
};

static void sink_init(struct sink *k, bool grows)
{
	k->n = 0;
	k->hash = 0;
	k->grows = grows;
	k->oom = false;
	k->image = NULL;
	k->image_words = k->image_cap = 0;
}

/* XXH3 of @len bytes at @data, chained through @seed: in AVX2 if the processor has it. */
static uint64_t block_hash(const void *data, size_t len, uint64_t seed)
{
#ifdef SIM_HAVE_XXH3_AVX2
	if (__builtin_cpu_supports("avx2"))
		return sim_xxh3_avx2(data, len, seed);
#endif
	return XXH3_64bits_withSeed(data, len, seed);
}

/* word[] is full: hash it, or move it into the image. */
static void sink_flush(struct sink *k)
{
	if (!k->grows) {
		k->hash = block_hash(k->word, k->n * sizeof(k->word[0]), k->hash);
	} else if (!k->oom) {
		if (k->image_words + k->n > k->image_cap) {
			size_t cap = k->image_cap ? 2 * k->image_cap : 4 * SINK_WORDS;
			uint32_t *b = realloc(k->image, cap * sizeof(*b));

			if (!b) {
				k->oom = true;
				k->n = 0;
				return;
			}
			k->image = b;
			k->image_cap = cap;
		}
		memcpy(k->image + k->image_words, k->word, k->n * sizeof(k->word[0]));
		k->image_words += k->n;
	}
	k->n = 0;
}

/*
 * The walk writes through a cursor of its own, @at, not through k->n: a
 * local whose address is never taken stays in a register, where the count
 * in the sink (which sink_flush takes) is stored and loaded again for every
 * word. sink_full flushes a full block and returns the cursor's new place.
 */
static __attribute__((noinline)) uint32_t *sink_full(struct sink *k, uint32_t *at)
{
	k->n = (unsigned)(at - k->word);
	sink_flush(k);
	return k->word;
}

#define SINK_PUT(k, at, w)                                                              \
	do {                                                                            \
		*(at)++ = (w);                                                          \
		if ((at) >= (k)->word + SINK_WORDS)                                     \
			(at) = sink_full((k), (at));                                    \
	} while (0)

/* The same where room was made (SINK_ROOM): no check. */
#define SINK_PUT_IN_ROOM(k, at, w) (*(at)++ = (w))

/* Make SINK_ROOM words of room: flush what is there when past SINK_WORDS. */
#define SINK_MAKE_ROOM(k, at)                                                           \
	do {                                                                            \
		if ((at) >= (k)->word + SINK_WORDS)                                     \
			(at) = sink_full((k), (at));                                    \
	} while (0)

static inline uint64_t double_bits(double d)
{
	uint64_t w;

	memcpy(&w, &d, sizeof(w));
	return w;
}

/*
 * A field's value as 64 bits: the bits it holds (a double's too), the upper
 * bits zero whatever the field's sign.
 */
#define FIELD_BITS(v)                                                                   \
	(_Generic((v), double: double_bits((double)(v)), default: (uint64_t)(v)) &      \
	 (sizeof(v) >= 8 ? ~UINT64_C(0) : (UINT64_C(1) << ((8 * sizeof(v)) & 63)) - 1))

/* Write field value @v with @PUT: one word, or two (low half first) for 8 bytes. */
#define SINK_PUT_FIELD(k, at, v, PUT)                                                   \
	do {                                                                            \
		const uint64_t b_ = FIELD_BITS(v);                                      \
                                                                                        \
		PUT(k, at, (uint32_t)b_);                                               \
		if (sizeof(v) > 4)                                                      \
			PUT(k, at, (uint32_t)(b_ >> 32));                               \
	} while (0)

/* Hash or keep what is left. */
static void sink_finish(struct sink *k)
{
	if (k->n)
		sink_flush(k);
}

/* --- roles and folds (sim_fields.h) ----------------------------------------- */

#define IN_IMAGE_STATE 1
#define IN_IMAGE_OBSERVED 1
#define IN_IMAGE_CACHE 0
#define IN_FINGERPRINT_STATE 1
#define IN_FINGERPRINT_OBSERVED 0
#define IN_FINGERPRINT_CACHE 0

#define FOLD_KEEP(s, v) (v)
#define FOLD_AGE(s, v) ((v) < SIM_AGE_FOLD ? (v) : SIM_AGE_FOLD)
#define FOLD_SEQNR(s, v) ((uint8_t)((s)->scan.seqnr - (v)))
#define FOLD_ADVISOR(s, v) (v)

#define FOLD_KEEPS_KEEP(s) 1
#define FOLD_KEEPS_AGE(s) 1
#define FOLD_KEEPS_SEQNR(s) 1
#define FOLD_KEEPS_ADVISOR(s) ((s)->knobs.value[WL_KNOB_ADVISOR_MODE] != WL_ADVISOR_NONE)

/* Is a field of @role (folded by @fold) written in @mode? */
#define WRITTEN(mode, role, fold, s)                                                    \
	((mode) == WALK_IMAGE ? IN_IMAGE_##role : (IN_FINGERPRINT_##role && FOLD_KEEPS_##fold(s)))

#define PUT_FIELD(k, mode, s, value, role, fold, PUT)                                   \
	do {                                                                            \
		if (WRITTEN(mode, role, fold, s)) {                                     \
			const __typeof__(value) v_ = (mode) == WALK_FINGERPRINT       \
				? (__typeof__(value))FOLD_##fold(s, (value)) : (value); \
			SINK_PUT_FIELD(k, at, v_, PUT);                                 \
		}                                                                       \
	} while (0)

#define WALK_MACHINE_FIELD(name, value, count, role, fold)                              \
	for (uint32_t i = 0; i < (uint32_t)(count); i++)                                \
		PUT_FIELD(k, mode, s, value, role, fold, SINK_PUT);

#define WALK_RECORD_FIELD(name, value, when, role, fold)                                \
	if (when)                                                                       \
		PUT_FIELD(k, mode, s, value, role, fold, SINK_PUT_IN_ROOM);

#define WALK_RECORD_BYTES(name, pointer, bytes, when, role)                             \
	if ((when) && WRITTEN(mode, role, KEEP, s))                                     \
		at = sink_bytes(k, at, pointer, bytes);

/* A group's member as its byte: folded in the fingerprint, as it is in the image. */
#define GROUP_BYTE(mode, s, v, fold)                                                    \
	((uint32_t)(uint8_t)((mode) == WALK_FINGERPRINT ? FOLD_##fold(s, (v)) : (v)))

#define WALK_RECORD_GROUP(name, when, role, v0, f0, v1, f1, v2, f2, v3, f3)             \
	if ((when) && WRITTEN(mode, role, KEEP, s))                                     \
		SINK_PUT_IN_ROOM(k, at, GROUP_BYTE(mode, s, v0, f0) |                   \
				 GROUP_BYTE(mode, s, v1, f1) << 8 |                     \
				 GROUP_BYTE(mode, s, v2, f2) << 16 |                    \
				 GROUP_BYTE(mode, s, v3, f3) << 24);

#define WALK_RECORDS(type, pool, first, count, FIELDS)                                  \
	for (uint32_t id = (first); id < (count); id++) {                               \
		const type *r = &s->pool[id];                                           \
                                                                                        \
		SINK_MAKE_ROOM(k, at);                                                  \
		FIELDS(WALK_RECORD_FIELD, WALK_RECORD_BYTES, WALK_RECORD_GROUP)         \
	}

/* The most words a record's fields write (its opaque bytes check for room themselves). */
#define COUNT_FIELD(name, value, when, role, fold) +2
#define COUNT_BYTES(name, pointer, bytes, when, role)
#define COUNT_GROUP(name, when, role, v0, f0, v1, f1, v2, f2, v3, f3) +1
#define RECORD_WORDS(FIELDS) (0 FIELDS(COUNT_FIELD, COUNT_BYTES, COUNT_GROUP))
#define ASSERT_ROOM(type, pool, first, count, FIELDS)                                   \
	_Static_assert(RECORD_WORDS(FIELDS) <= SINK_ROOM, #type " has more fields than SINK_ROOM");
SIM_RECORDS(ASSERT_ROOM)

/* @n bytes at @from, 4 a word (the last one zero-padded), written at @at: the cursor after. */
static inline __attribute__((always_inline)) uint32_t *sink_bytes(struct sink *k, uint32_t *at,
								  const uint8_t *from, uint32_t n)
{
	for (uint32_t done = 0; done < n; done += 4) {
		uint32_t w = 0;

		memcpy(&w, from + done, n - done < 4 ? n - done : 4);
		SINK_PUT(k, at, w);
	}
	return at;
}

/* Write @s into @k as @mode says: the machine's fields, then every record. */
static inline __attribute__((always_inline)) void walk(const struct sim *s, struct sink *k,
						       const enum walk_mode mode)
{
	uint32_t *at = k->word + k->n;

	SIM_MACHINE_FIELDS(WALK_MACHINE_FIELD)
	SIM_RECORDS(WALK_RECORDS)
	k->n = (unsigned)(at - k->word);
	sink_finish(k);
}

/* --- the image: hash and equality ----------------------------------------------- */

uint64_t sim_hash(const struct sim *s)
{
	struct sink k;

	sink_init(&k, false);
	walk(s, &k, WALK_IMAGE);
	return k.hash;
}

/*
 * Frames whose images are equal name equal bytes by their hash: are the
 * bytes really equal?
 */
static bool frame_contents_equal(const struct sim *a, const struct sim *b)
{
	uint8_t pa[CONTENT_PAGE_SIZE], pb[CONTENT_PAGE_SIZE];

	for (uint32_t i = 1; i < a->nframes; i++) {
		uint64_t ta = a->frame[i].content, tb = b->frame[i].content;

		if (!a->frame[i].mapcount)
			continue;
		if (!sim_content_is_patched(ta) && !sim_content_is_patched(tb)) {
			if (ta != tb)
				return false;
			continue;
		}
		sim_content_materialize(&a->content, ta, pa);
		sim_content_materialize(&b->content, tb, pb);
		if (memcmp(pa, pb, sizeof(pa)) != 0)
			return false;
	}
	return true;
}

bool sim_equal(const struct sim *a, const struct sim *b)
{
	struct sink ia, ib;
	bool same;

	sink_init(&ia, true);
	sink_init(&ib, true);
	walk(a, &ia, WALK_IMAGE);
	walk(b, &ib, WALK_IMAGE);
	same = !ia.oom && !ib.oom && ia.image_words == ib.image_words &&
	       memcmp(ia.image, ib.image, ia.image_words * sizeof(ia.image[0])) == 0;
	free(ia.image);
	free(ib.image);
	return same && frame_contents_equal(a, b);
}

/* --- the fingerprint (sim_mc.h) ----------------------------------------------------- */

uint64_t sim_fingerprint(const struct sim *s)
{
	struct sink k;

	sink_init(&k, false);
	walk(s, &k, WALK_FINGERPRINT);
	return k.hash;
}
