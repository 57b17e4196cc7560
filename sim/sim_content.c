/*
 * sim_content.c - the simulator's page contents: tokens, patches, memcmp
 * order, checksums and interning, without materializing 4 KiB per page.
 *
 * Plain tokens are workload values (a repeated 8-byte word). Patched contents
 * keep their base word and the bytes that differ from it: inside the entry
 * when they all lie within 8 bytes (the window starts at the first of them,
 * or at the last word of the page), else as a sorted array. A fresh value
 * written over a plain page is a word token instead: the value's count and a
 * site (base and offset) of the store, with no entry.
 * Two representations of equal bytes would break KSM's equality, so every
 * content is canonical: patches never repeat the base byte, uniform pages are
 * plain tokens, and patched contents are interned through an additive hash of
 * the bytes, H = sum over aligned words j of weight(j) * code(word_j), which
 * is the same whatever base the bytes were described against, with an exact
 * byte comparison to settle collisions. The checksum of a plain page is computed
 * by running xxh64's lanes over the repeated word directly (equal to libxxhash
 * on the real bytes; tested), four pages at once in AVX-512 registers when the
 * CPU has them; a patched page's is computed on its real bytes. That is the
 * xxh64 checksum; the default one is a mix of the byte hash, which equal
 * bytes share whatever their tokens, so a visit never reads 4 KiB.
 * Neither is cached here: frames cache their checksum.
 */
#include "sim_content.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "content.h"

/* For a write's steps, inlined into sim_content_write_many_in_place()'s loop. */
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* --- byte hash -------------------------------------------------------- */

/*
 * The bytes' hash is a sum over the page's 512 aligned words, word j (bytes
 * 8j to 8j + 7, little-endian) weighed by its position: H = sum of
 * weight(j) * code(word_j), mod 2^64. A weight is a splitmix64 finalizer
 * of the word's index, made odd (so that a word's code moving always moves
 * H); a word's code folds the word's 128-bit product with an odd constant,
 * its high half onto its low (two words' codes agree by a chance of about
 * 2^-64). A write of 8 bytes changes one or two words: H moves by their
 * terms' difference, whatever the content's description.
 */
#define MIX64_A(z) (((z) ^ ((z) >> 30)) * UINT64_C(0xbf58476d1ce4e5b9))
#define MIX64_B(z) (((z) ^ ((z) >> 27)) * UINT64_C(0x94d049bb133111eb))
#define MIX64(z) (MIX64_B(MIX64_A(z)) ^ (MIX64_B(MIX64_A(z)) >> 31))
#define WORD_WEIGHT(j) (MIX64(UINT64_C(0x9e3779b97f4a7c15) * ((uint64_t)(j) + 1)) | 1)

#define TABLE_4(F, i) F(i), F((i) + 1), F((i) + 2), F((i) + 3)
#define TABLE_16(F, i) TABLE_4(F, i), TABLE_4(F, (i) + 4), TABLE_4(F, (i) + 8), TABLE_4(F, (i) + 12)
#define TABLE_64(F, i) TABLE_16(F, i), TABLE_16(F, (i) + 16), TABLE_16(F, (i) + 32), \
	TABLE_16(F, (i) + 48)
#define TABLE_256(F, i) TABLE_64(F, i), TABLE_64(F, (i) + 64), TABLE_64(F, (i) + 128), \
	TABLE_64(F, (i) + 192)

#define CONTENT_WORDS (CONTENT_PAGE_SIZE / CONTENT_WORD_SIZE)
static const uint64_t word_weights[CONTENT_WORDS] __attribute__((aligned(64))) = {
	TABLE_256(WORD_WEIGHT, 0), TABLE_256(WORD_WEIGHT, 256)
};
_Static_assert(CONTENT_WORDS == 512, "word_weights has a weight per word of a page");

static uint64_t mix64(uint64_t z)
{
	return MIX64(z);
}

/* A word's code. */
static uint64_t word_code(uint64_t word)
{
	unsigned __int128 product = (unsigned __int128)word * UINT64_C(0x9fb21c651e98df25);

	return (uint64_t)product ^ (uint64_t)(product >> 64);
}

static uint8_t word_byte(uint64_t word, uint32_t offset)
{
	return (uint8_t)(word >> (8 * (offset % CONTENT_WORD_SIZE)));
}

/* The sum of every word's weight: a uniform page's H is it times its word's code. */
static uint64_t weight_sum(void)
{
	uint64_t sum = 0;

	for (uint32_t j = 0; j < CONTENT_WORDS; j++)
		sum += word_weights[j];
	return sum;
}

/* H of a uniform page. */
static uint64_t plain_bytes_hash(const struct sim_content_store *cs, uint64_t value)
{
	return cs->weight_sum * word_code(value);
}

/*
 * The aligned words a write of @value at @offset leaves, given the page's
 * words there before it, @lo (word offset / 8) and @hi (the next one, read
 * only when @offset is not a multiple of 8).
 */
static __always_inline void words_after_write(uint32_t offset, uint64_t value, uint64_t lo,
					      uint64_t hi, uint64_t *new_lo, uint64_t *new_hi)
{
	const uint32_t shift = 8 * (offset % CONTENT_WORD_SIZE);
	const uint64_t keep = (UINT64_C(1) << shift) - 1; /* lo's bytes below the write */

	if (!shift) {
		*new_lo = value;
		*new_hi = hi;
		return;
	}
	*new_lo = (lo & keep) | value << shift;
	*new_hi = (hi & ~keep) | value >> (64 - shift);
}

/* How H moves when the words at @offset / 8 and the next go from @lo, @hi to @nlo, @nhi. */
static __always_inline uint64_t words_hash_delta(uint32_t offset, uint64_t lo, uint64_t hi,
						 uint64_t nlo, uint64_t nhi)
{
	const uint32_t j = offset / CONTENT_WORD_SIZE;
	uint64_t delta = word_weights[j] * (word_code(nlo) - word_code(lo));

	if (offset % CONTENT_WORD_SIZE)
		delta += word_weights[j + 1] * (word_code(nhi) - word_code(hi));
	return delta;
}

/* How H moves when @value's 8 bytes are written at @offset over words @lo and @hi. */
static __always_inline uint64_t write_hash_delta(uint32_t offset, uint64_t value, uint64_t lo,
						 uint64_t hi)
{
	uint64_t nlo, nhi;

	words_after_write(offset, value, lo, hi, &nlo, &nhi);
	return words_hash_delta(offset, lo, hi, nlo, nhi);
}

/* --- checksum: xxh64 over a repeated word, lane by lane ------------------ */

#define XXH_P1 UINT64_C(0x9E3779B185EBCA87)
#define XXH_P2 UINT64_C(0xC2B2AE3D27D4EB4F)
#define XXH_P3 UINT64_C(0x165667B19E3779F9)
#define XXH_P4 UINT64_C(0x85EBCA77C2B2AE63)
#define XXH_P5 UINT64_C(0x27D4EB2F165667C5)

static uint64_t rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static uint64_t xxh_round(uint64_t acc, uint64_t input)
{
	acc += input * XXH_P2;
	acc = rotl64(acc, 31);
	return acc * XXH_P1;
}

static uint64_t xxh_merge(uint64_t acc, uint64_t val)
{
	acc ^= xxh_round(0, val);
	return acc * XXH_P1 + XXH_P4;
}

static uint64_t xxh_finish(uint64_t v1, uint64_t v2, uint64_t v3, uint64_t v4)
{
	uint64_t h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);

	h = xxh_merge(h, v1);
	h = xxh_merge(h, v2);
	h = xxh_merge(h, v3);
	h = xxh_merge(h, v4);
	h += CONTENT_PAGE_SIZE;
	h ^= h >> 33;
	h *= XXH_P2;
	h ^= h >> 29;
	h *= XXH_P3;
	h ^= h >> 32;
	return h;
}

/*
 * xxh64(page, 4096, seed 0) of two uniform pages at once, @a and @b: every
 * stripe of a page whose 8-byte words all equal w (read little-endian, as
 * xxh64 reads on x86) feeds w to all four lanes, and 4096 is a whole number of
 * stripes, so no tail remains. The lanes are chains of dependent multiplies:
 * running two pages' eight chains side by side hides their latency.
 */
void sim_plain_checksums(uint64_t a, uint64_t b, uint32_t *ca, uint32_t *cb)
{
	uint64_t a1 = XXH_P1 + XXH_P2, a2 = XXH_P2, a3 = 0, a4 = (uint64_t)0 - XXH_P1;
	uint64_t b1 = a1, b2 = a2, b3 = a3, b4 = a4;

	for (unsigned stripe = 0; stripe < CONTENT_PAGE_SIZE / 32; stripe++) {
		a1 = xxh_round(a1, a);
		a2 = xxh_round(a2, a);
		a3 = xxh_round(a3, a);
		a4 = xxh_round(a4, a);
		b1 = xxh_round(b1, b);
		b2 = xxh_round(b2, b);
		b3 = xxh_round(b3, b);
		b4 = xxh_round(b4, b);
	}
	*ca = (uint32_t)xxh_finish(a1, a2, a3, a4);
	*cb = (uint32_t)xxh_finish(b1, b2, b3, b4);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_XXH_AVX512 1

/*
 * The same lanes for four pages in two 512-bit registers (vpmullq is
 * AVX-512DQ): eight chains of multiplies in flight instead of the scalar
 * path's multiplier-bound two pages at a time, about four times faster.
 * The arithmetic is the same, modulo 2^64, so the results are identical.
 */
__attribute__((target("avx512f,avx512dq")))
static void plain_checksums4_avx512(const uint64_t word[4], uint32_t sum[4])
{
	const __m512i p1 = _mm512_set1_epi64((long long)XXH_P1);
	const __m512i p2 = _mm512_set1_epi64((long long)XXH_P2);
	/* lanes 0-3: v1..v4 of the first page of the register, 4-7: the second's */
	const __m512i init = _mm512_set_epi64((long long)(0 - XXH_P1), 0, (long long)XXH_P2,
					      (long long)(XXH_P1 + XXH_P2),
					      (long long)(0 - XXH_P1), 0, (long long)XXH_P2,
					      (long long)(XXH_P1 + XXH_P2));
	__m512i acc0 = init, acc1 = init, in0, in1;
	uint64_t v[16];

	in0 = _mm512_mullo_epi64(_mm512_set_epi64((long long)word[1], (long long)word[1],
						  (long long)word[1], (long long)word[1],
						  (long long)word[0], (long long)word[0],
						  (long long)word[0], (long long)word[0]), p2);
	in1 = _mm512_mullo_epi64(_mm512_set_epi64((long long)word[3], (long long)word[3],
						  (long long)word[3], (long long)word[3],
						  (long long)word[2], (long long)word[2],
						  (long long)word[2], (long long)word[2]), p2);
	for (unsigned stripe = 0; stripe < CONTENT_PAGE_SIZE / 32; stripe++) {
		acc0 = _mm512_mullo_epi64(_mm512_rol_epi64(_mm512_add_epi64(acc0, in0), 31), p1);
		acc1 = _mm512_mullo_epi64(_mm512_rol_epi64(_mm512_add_epi64(acc1, in1), 31), p1);
	}
	_mm512_storeu_si512(v, acc0);
	_mm512_storeu_si512(v + 8, acc1);
	/*
	 * Leave the upper halves clean: the compiler does not always do it here,
	 * and dirty upper state slowed the rest of the process (SSE code, libc's
	 * memcpy) by ~12% in the model checker.
	 */
	_mm256_zeroupper();
	for (unsigned i = 0; i < 4; i++)
		sum[i] = (uint32_t)xxh_finish(v[4 * i], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3]);
}
#endif

void sim_plain_checksums_batch(const uint64_t *word, unsigned n, uint32_t *sum)
{
	uint32_t unused;

	assert(n >= 1 && n <= SIM_CHECKSUM_BATCH);
#ifdef HAVE_XXH_AVX512
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) {
		uint64_t w[SIM_CHECKSUM_BATCH];
		uint32_t c[SIM_CHECKSUM_BATCH];

		for (unsigned k = 0; k < SIM_CHECKSUM_BATCH; k++)
			w[k] = word[k < n ? k : 0];
		plain_checksums4_avx512(w, c);
		memcpy(sum, c, n * sizeof(*sum));
		return;
	}
#endif
	for (unsigned k = 0; k < n; k += 2)
		sim_plain_checksums(word[k], word[k + 1 < n ? k + 1 : k], &sum[k],
				    k + 1 < n ? &sum[k + 1] : &unused);
}

static uint32_t plain_checksum(uint64_t word)
{
	uint32_t c, unused;

	sim_plain_checksums(word, word, &c, &unused);
	return c;
}

/* --- the store ----------------------------------------------------------- */

static struct sim_patched *entry_of(const struct sim_content_store *cs, uint64_t token)
{
	assert(sim_content_has_entry(token));
	return &cs->entry[token - SIM_TOKEN_PATCHED];
}

/* --- word tokens: a fresh value over a plain page, with no entry ------------ */

static bool is_word(uint64_t token)
{
	return token >= SIM_TOKEN_WORD;
}

static const struct sim_word_site *site_of(const struct sim_content_store *cs, uint64_t token)
{
	return &cs->site[(token - SIM_TOKEN_WORD) >> SIM_WORD_SITE_SHIFT];
}

/* The fresh value a word token wrote. */
static uint64_t word_value(uint64_t token)
{
	return CONTENT_FRESH_BASE | (token & SIM_WORD_COUNT_MASK);
}

/*
 * The 8 bytes at @p as a word, byte k at bits 8k (as a write's value holds
 * them), and the other way: one load or store on a little-endian host (GCC
 * left the byte loops they replace as eight loads or stores and shifts).
 */
static uint64_t load_word(const uint8_t *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w;
}

static void store_word(uint8_t *p, uint64_t w)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	memcpy(p, &w, sizeof(w));
}

/* @offset rounded down, and up, to a multiple of 8 (an aligned word's start). */
static uint32_t word_floor(uint32_t offset)
{
	return offset & ~(CONTENT_WORD_SIZE - 1);
}

static uint32_t word_ceil(uint32_t offset)
{
	return word_floor(offset + CONTENT_WORD_SIZE - 1);
}

/* The 8 bytes of a uniform page of @base at @offset, as a little-endian word. */
static uint64_t base_bytes_at(uint64_t base, uint32_t offset)
{
	unsigned shift = 8 * (offset % CONTENT_WORD_SIZE);

	return shift ? base >> shift | base << (64 - shift) : base;
}


int sim_content_store_init(struct sim_content_store *cs)
{
	memset(cs, 0, sizeof(*cs));
	cs->nbuckets = 16;
	cs->bucket = calloc(cs->nbuckets, sizeof(*cs->bucket));
	cs->cap = 16;
	cs->entry = calloc(cs->cap, sizeof(*cs->entry));
	cs->nentries = 1;
	cs->weight_sum = weight_sum();
	if (!cs->bucket || !cs->entry) {
		sim_content_store_free(cs);
		return -1;
	}
	return 0;
}

void sim_content_store_free(struct sim_content_store *cs)
{
	if (cs->entry)
		for (uint32_t i = 1; i < cs->nentries; i++)
			if (sim_patched_owns_block(&cs->entry[i]))
				free(cs->entry[i].patch);
	free(cs->entry);
	free(cs->bucket);
	memset(cs, 0, sizeof(*cs));
}

int sim_content_store_clone(struct sim_content_store *dst, const struct sim_content_store *src)
{
	*dst = *src;
	dst->entry = malloc(src->cap * sizeof(*src->entry));
	dst->bucket = malloc(src->nbuckets * sizeof(*src->bucket));
	if (!dst->entry || !dst->bucket)
		goto fail;
	memcpy(dst->entry, src->entry, src->nentries * sizeof(*src->entry));
	memcpy(dst->bucket, src->bucket, src->nbuckets * sizeof(*src->bucket));
	for (uint32_t i = 1; i < src->nentries; i++) {
		const struct sim_patched *e = &src->entry[i];
		size_t n;

		if (!sim_patched_owns_block(e))
			continue;
		n = sim_patched_block_bytes(e, e->patch);
		dst->entry[i].patch = malloc(sim_patched_block_room(e, n));
		if (!dst->entry[i].patch) {
			/* entries from i on still point at src's arrays: forget them */
			dst->nentries = i;
			goto fail;
		}
		memcpy(dst->entry[i].patch, e->patch, n);
	}
	return 0;
fail:
	if (!dst->entry)
		dst->nentries = 0;
	sim_content_store_free(dst);
	return -1;
}

void sim_content_ref(struct sim_content_store *cs, uint64_t token)
{
	if (sim_content_has_entry(token))
		entry_of(cs, token)->refs++;
}

/* Take @id out of the intern table (backward-shift deletion). */
static void unlink_from_bucket(struct sim_content_store *cs, uint32_t id)
{
	uint32_t mask = cs->nbuckets - 1, hole = (uint32_t)cs->entry[id].bytes_hash & mask;

	while (cs->bucket[hole].id != id)
		hole = (hole + 1) & mask;
	/* move later members of the run back into the hole when their home allows */
	for (uint32_t next = (hole + 1) & mask; cs->bucket[next].id; next = (next + 1) & mask) {
		uint32_t home = cs->bucket[next].hash & mask;

		/* stays put when its home lies cyclically in (hole, next] */
		if (((next - home) & mask) < ((next - hole) & mask))
			continue;
		cs->bucket[hole] = cs->bucket[next];
		hole = next;
	}
	cs->bucket[hole] = (struct sim_bucket){ 0, 0 };
}

void sim_content_unref(struct sim_content_store *cs, uint64_t token)
{
	struct sim_patched *e;
	uint32_t id;

	if (!sim_content_has_entry(token))
		return;
	id = (uint32_t)(token - SIM_TOKEN_PATCHED);
	e = &cs->entry[id];
	if (--e->refs & ~SIM_REFS_UNLISTED)
		return;
	if (sim_patched_listed(e)) {
		unlink_from_bucket(cs, id);
		cs->live--;
	}
	if (sim_patched_owns_block(e))
		free(e->patch);
	memset(e, 0, sizeof(*e));
	e->base = cs->free_head;
	cs->free_head = id;
}

/*
 * Byte @offset of a page of @base whose 8 bytes at @start are @window (an
 * inline entry's, or a word token's fresh value).
 */
static uint8_t windowed_byte(uint64_t base, uint64_t window, uint32_t start, uint32_t offset)
{
	if (offset - start < SIM_PATCH_WINDOW)
		return word_byte(window, offset - start);
	return word_byte(base, offset);
}

/* Byte @offset of a page of @base whose bytes from r->start are @r's. */
static uint8_t run_byte(const struct sim_patch_run *r, uint64_t base, uint32_t offset)
{
	if (offset - r->start < r->len)
		return r->byte[offset - r->start];
	return word_byte(base, offset);
}

/* @base's bytes at [@offset, @offset + @n) into @dst. */
static void fill_base_bytes(uint8_t *dst, uint64_t base, uint32_t offset, uint32_t n)
{
	uint64_t word = base_bytes_at(base, offset); /* the bytes repeat every 8 */
	uint32_t k = 0;

	for (; k + CONTENT_WORD_SIZE <= n; k += CONTENT_WORD_SIZE)
		store_word(dst + k, word);
	for (; k < n; k++)
		dst[k] = word_byte(base, offset + k);
}

/* How many of the @n sorted patches lie before byte @offset. */
static uint32_t patches_before(const struct sim_patch_byte *patch, uint32_t n, uint32_t offset)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (patch[mid].offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Aligned word @j of a page of @base with the @n sorted bytes of @patch. */
static uint64_t patched_word(uint64_t base, const struct sim_patch_byte *patch, uint32_t n,
			     uint32_t j)
{
	const uint32_t first = j * CONTENT_WORD_SIZE;
	uint64_t word = base;

	for (uint32_t i = patches_before(patch, n, first);
	     i < n && patch[i].offset < first + CONTENT_WORD_SIZE; i++) {
		unsigned shift = 8 * (patch[i].offset % CONTENT_WORD_SIZE);

		word = (word & ~(UINT64_C(0xff) << shift)) | (uint64_t)patch[i].byte << shift;
	}
	return word;
}

/* write_hash_delta() of a write of @value at @offset over @base and @patch. */
static uint64_t write_delta_over(uint64_t base, const struct sim_patch_byte *patch, uint32_t n,
				 uint32_t offset, uint64_t value)
{
	const uint32_t j = offset / CONTENT_WORD_SIZE;
	uint64_t lo = patched_word(base, patch, n, j);
	uint64_t hi = offset % CONTENT_WORD_SIZE ? patched_word(base, patch, n, j + 1) : 0;

	return write_hash_delta(offset, value, lo, hi);
}

uint8_t sim_content_byte(const struct sim_content_store *cs, uint64_t token, uint32_t offset)
{
	const struct sim_patched *e;
	uint32_t lo;

	if (!sim_content_is_patched(token))
		return word_byte(token, offset);
	if (is_word(token)) {
		const struct sim_word_site *site = site_of(cs, token);

		return windowed_byte(site->base, word_value(token), site->offset, offset);
	}
	e = entry_of(cs, token);
	if (sim_patched_run(e))
		return run_byte(e->run, e->base, offset);
	if (!sim_patched_spilled(e))
		return windowed_byte(e->base, e->window, e->start, offset);
	lo = patches_before(e->patch, e->npatch, offset);
	if (lo < e->npatch && e->patch[lo].offset == offset)
		return e->patch[lo].byte;
	return word_byte(e->base, offset);
}

/* A content seen as base word + patches (plain tokens have none). */
struct view {
	uint64_t base;
	const struct sim_patch_byte *patch;
	uint32_t npatch;
};

/* A page of @base with @window at @start: the bytes that differ, into @buf. */
static struct view windowed_view(uint64_t base, uint64_t window, uint32_t start,
				 struct sim_patch_byte buf[SIM_PATCH_VIEW])
{
	uint32_t n = 0;

	for (uint32_t k = 0; k < SIM_PATCH_WINDOW; k++) {
		uint32_t off = start + k;
		uint8_t byte = word_byte(window, k);

		if (byte != word_byte(base, off))
			buf[n++] = (struct sim_patch_byte){ (uint16_t)off, byte };
	}
	return (struct view){ base, buf, n };
}

/* A run's bytes that differ from its base, into @buf. */
static struct view run_view(const struct sim_patched *e, struct sim_patch_byte buf[SIM_PATCH_VIEW])
{
	const struct sim_patch_run *r = e->run;
	uint32_t n = 0;

	for (uint32_t k = 0; k < r->len; k++) {
		uint32_t off = r->start + k;

		if (r->byte[k] != word_byte(e->base, off))
			buf[n++] = (struct sim_patch_byte){ (uint16_t)off, r->byte[k] };
	}
	assert(n == e->npatch);
	return (struct view){ e->base, buf, n };
}

/* The entry's patches, decoded into @buf when they are inline or a run. */
static struct view entry_view(const struct sim_patched *e, struct sim_patch_byte buf[SIM_PATCH_VIEW])
{
	struct view v;

	if (sim_patched_spilled(e))
		return (struct view){ e->base, e->patch, e->npatch };
	if (sim_patched_run(e))
		return run_view(e, buf);
	v = windowed_view(e->base, e->window, e->start, buf);
	assert(v.npatch == e->npatch);
	return v;
}

/* A word token's bytes that differ from its site's base, into @buf. */
static struct view word_view(const struct sim_content_store *cs, uint64_t token,
			     struct sim_patch_byte buf[SIM_PATCH_VIEW])
{
	const struct sim_word_site *site = site_of(cs, token);

	return windowed_view(site->base, word_value(token), site->offset, buf);
}

static struct view view_of(const struct sim_content_store *cs, uint64_t token,
			   struct sim_patch_byte buf[SIM_PATCH_VIEW])
{
	if (!sim_content_is_patched(token))
		return (struct view){ token, NULL, 0 };
	if (is_word(token))
		return word_view(cs, token, buf);
	return entry_view(entry_of(cs, token), buf);
}

uint32_t sim_content_patches(const struct sim_content_store *cs, uint64_t token, uint64_t *base,
			     struct sim_patch_byte buf[SIM_PATCH_VIEW],
			     const struct sim_patch_byte **patch)
{
	struct view v = view_of(cs, token, buf);

	*base = v.base;
	*patch = v.patch;
	return v.npatch;
}

/* Is @v exactly @base with the @n sorted differing bytes @patch? */
static bool view_is(const struct view *v, uint64_t base, const struct sim_patch_byte *patch,
		    uint32_t n)
{
	if (v->base != base || v->npatch != n)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (v->patch[i].offset != patch[i].offset || v->patch[i].byte != patch[i].byte)
			return false;
	return true;
}

/* The same of an entry, without decoding an inline window. */
static bool entry_is(const struct sim_patched *e, uint64_t base, const struct sim_patch_byte *patch,
		     uint32_t n)
{
	if (e->base != base || e->npatch != n)
		return false;
	if (sim_patched_spilled(e))
		return view_is(&(struct view){ e->base, e->patch, e->npatch }, base, patch, n);
	if (sim_patched_run(e)) {
		struct sim_patch_byte buf[SIM_PATCH_VIEW];
		struct view v = run_view(e, buf);

		return view_is(&v, base, patch, n);
	}
	/*
	 * The window holds all e->npatch differing bytes and @patch as many:
	 * equal when each of @patch is one of them.
	 */
	for (uint32_t i = 0; i < n; i++)
		if ((uint32_t)(patch[i].offset - e->start) >= SIM_PATCH_WINDOW ||
		    word_byte(e->window, patch[i].offset - e->start) != patch[i].byte)
			return false;
	return true;
}

bool sim_content_is_base_with(const struct sim_content_store *cs, uint64_t token, uint64_t base,
			      const struct sim_patch_byte *patch, uint32_t n)
{
	struct sim_patch_byte buf[SIM_PATCH_VIEW];
	struct view v;

	if (sim_content_has_entry(token))
		return entry_is(entry_of(cs, token), base, patch, n);
	v = view_of(cs, token, buf);
	return view_is(&v, base, patch, n);
}

/* Smallest offset >= @from in a lane where the two bases differ, or PAGE_SIZE. */
static uint32_t next_base_difference(uint64_t a, uint64_t b, uint32_t from)
{
	uint32_t best = CONTENT_PAGE_SIZE;

	for (uint32_t lane = 0; lane < CONTENT_WORD_SIZE; lane++) {
		uint32_t off;

		if (word_byte(a, lane) == word_byte(b, lane))
			continue;
		off = from <= lane ? lane
				   : lane + (from - lane + CONTENT_WORD_SIZE - 1) / CONTENT_WORD_SIZE *
						    CONTENT_WORD_SIZE;
		if (off < best)
			best = off;
	}
	return best;
}

/*
 * One side of a comparison: a view of patches read with a cursor, or a run
 * read where it is (decoding a run's hundred bytes at every tree level made
 * the walks over written pages several times slower).
 */
struct cmp_side {
	struct view v;
	const struct sim_patch_run *run; /* or NULL: v's patches */
	uint32_t cursor;
};

static struct cmp_side cmp_side_of(const struct sim_content_store *cs, uint64_t token,
				   struct sim_patch_byte buf[SIM_PATCH_VIEW])
{
	const struct sim_patched *e;

	if (sim_content_has_entry(token) && sim_patched_run(e = entry_of(cs, token)))
		return (struct cmp_side){ { e->base, NULL, 0 }, e->run, 0 };
	return (struct cmp_side){ view_of(cs, token, buf), NULL, 0 };
}

/* The first offset >= @from where the side's bytes may differ from its base. */
static uint32_t side_next(struct cmp_side *c, uint32_t from)
{
	if (c->run) {
		if (from < c->run->start)
			return c->run->start;
		return from < (uint32_t)c->run->start + c->run->len ? from : CONTENT_PAGE_SIZE;
	}
	while (c->cursor < c->v.npatch && c->v.patch[c->cursor].offset < from)
		c->cursor++;
	return c->cursor < c->v.npatch ? c->v.patch[c->cursor].offset : CONTENT_PAGE_SIZE;
}

/* The side's byte at @offset, after side_next() reached it. */
static uint8_t side_byte(const struct cmp_side *c, uint32_t offset)
{
	if (c->run)
		return run_byte(c->run, c->v.base, offset);
	if (c->cursor < c->v.npatch && c->v.patch[c->cursor].offset == offset)
		return c->v.patch[c->cursor].byte;
	return word_byte(c->v.base, offset);
}

/*
 * Walk only the offsets where the bytes can differ: patched offsets (or run
 * bytes) of either side and the lanes where the bases differ. The first
 * difference decides.
 */
int sim_content_cmp_bytes(const struct sim_content_store *cs, uint64_t a, uint64_t b,
			  uint32_t *bytes)
{
	struct sim_patch_byte bufa[SIM_PATCH_VIEW], bufb[SIM_PATCH_VIEW];
	struct cmp_side sa, sb;
	uint32_t from = 0;

	if (!sim_content_is_patched(a) && !sim_content_is_patched(b)) {
		*bytes = sim_plain_cmp_bytes(a, b);
		return content_value_cmp(a, b);
	}
	*bytes = CONTENT_PAGE_SIZE;
	if (a == b)
		return 0;
	sa = cmp_side_of(cs, a, bufa);
	sb = cmp_side_of(cs, b, bufb);
	while (from < CONTENT_PAGE_SIZE) {
		uint32_t next = next_base_difference(sa.v.base, sb.v.base, from);
		uint32_t na = side_next(&sa, from), nb = side_next(&sb, from);
		uint8_t x, y;

		if (na < next)
			next = na;
		if (nb < next)
			next = nb;
		if (next >= CONTENT_PAGE_SIZE)
			return 0;
		x = side_byte(&sa, next);
		y = side_byte(&sb, next);
		if (x != y) {
			*bytes = next + 1;
			return (int)x - (int)y;
		}
		from = next + 1;
	}
	return 0;
}

int sim_content_cmp(const struct sim_content_store *cs, uint64_t a, uint64_t b)
{
	uint32_t unused;

	return sim_content_cmp_bytes(cs, a, b, &unused);
}

static void view_materialize(const struct view *v, uint8_t *page)
{
	content_fill(page, v->base);
	for (uint32_t i = 0; i < v->npatch; i++)
		page[v->patch[i].offset] = v->patch[i].byte;
}

void sim_content_materialize(const struct sim_content_store *cs, uint64_t token, void *page)
{
	struct sim_patch_byte buf[SIM_PATCH_VIEW];
	struct view v = view_of(cs, token, buf);

	view_materialize(&v, page);
}

uint64_t sim_content_bytes_hash(const struct sim_content_store *cs, uint64_t token)
{
	if (!sim_content_is_patched(token))
		return plain_bytes_hash(cs, token);
	if (is_word(token)) {
		const struct sim_word_site *site = site_of(cs, token);

		return site->base_hash +
		       write_hash_delta(site->offset, word_value(token), site->base, site->base);
	}
	return entry_of(cs, token)->bytes_hash;
}

uint32_t sim_content_checksum(struct sim_content_store *cs, uint64_t token)
{
	uint64_t page[CONTENT_PAGE_SIZE / sizeof(uint64_t)];

	if (!sim_content_is_patched(token))
		return plain_checksum(token);
	sim_content_materialize(cs, token, page);
	return content_checksum(page);
}

/*
 * A plain token is its bytes' identity already (uniform bytes are always
 * plain, and a patched content never is): its value is mixed, without the
 * multiplications of its byte hash.
 */
static uint32_t identity_checksum(struct sim_content_store *cs, uint64_t token)
{
	if (!sim_content_is_patched(token))
		return (uint32_t)mix64(token ^ UINT64_C(0x2545f4914f6cdd1d));
	return (uint32_t)mix64(sim_content_bytes_hash(cs, token));
}

uint32_t sim_content_checksum_as(struct sim_content_store *cs, uint64_t token,
				 enum wl_checksum kind)
{
	static uint32_t (*const checksum_of[WL_CHECKSUM_COUNT])(struct sim_content_store *,
								uint64_t) = {
		[WL_CHECKSUM_CONTENT] = identity_checksum,
		[WL_CHECKSUM_XXH64] = sim_content_checksum,
	};

	return checksum_of[kind](cs, token);
}

/* --- writes and interning ------------------------------------------------ */

/* The uniform word of @page if every word is equal; else false. */
static bool page_is_uniform(const void *page, uint64_t *word)
{
	const uint8_t *p = page;

	memcpy(word, p, sizeof(*word));
	for (uint32_t off = CONTENT_WORD_SIZE; off < CONTENT_PAGE_SIZE; off += CONTENT_WORD_SIZE)
		if (memcmp(p, p + off, CONTENT_WORD_SIZE) != 0)
			return false;
	return true;
}

/* Put @id in the first empty slot of its probe sequence. */
static void table_insert(struct sim_bucket *bucket, uint32_t nbuckets, uint32_t id, uint64_t h)
{
	uint32_t mask = nbuckets - 1, i = (uint32_t)h & mask;

	while (bucket[i].id)
		i = (i + 1) & mask;
	bucket[i] = (struct sim_bucket){ id, (uint32_t)h };
}

static int grow_buckets(struct sim_content_store *cs)
{
	uint32_t n = cs->nbuckets * 2;
	struct sim_bucket *b = calloc(n, sizeof(*b));

	if (!b)
		return -1;
	for (uint32_t id = 1; id < cs->nentries; id++)
		/* live contents always have patches */
		if (cs->entry[id].npatch && sim_patched_listed(&cs->entry[id]))
			table_insert(b, n, id, cs->entry[id].bytes_hash);
	free(cs->bucket);
	cs->bucket = b;
	cs->nbuckets = n;
	return 0;
}

static uint32_t new_entry(struct sim_content_store *cs)
{
	uint32_t id;

	if (cs->free_head) {
		id = cs->free_head;
		cs->free_head = (uint32_t)cs->entry[id].base;
		return id;
	}
	if (cs->nentries == cs->cap) {
		struct sim_patched *grown = realloc(cs->entry, 2 * cs->cap * sizeof(*grown));

		if (!grown)
			return 0;
		cs->entry = grown;
		cs->cap *= 2;
	}
	id = cs->nentries++;
	memset(&cs->entry[id], 0, sizeof(cs->entry[id]));
	return id;
}

/* Look up bytes equal to @v (hash @h); 0 if none. */
static uint32_t find_equal(const struct sim_content_store *cs, const struct view *v, uint64_t h)
{
	uint8_t want[CONTENT_PAGE_SIZE], have[CONTENT_PAGE_SIZE];
	uint32_t mask = cs->nbuckets - 1;
	bool materialized = false;

	for (uint32_t i = (uint32_t)h & mask, id; (id = cs->bucket[i].id) != 0; i = (i + 1) & mask) {
		struct sim_patch_byte buf[SIM_PATCH_VIEW];
		const struct sim_patched *e;
		struct view ev;

		if (cs->bucket[i].hash != (uint32_t)h)
			continue;
		e = &cs->entry[id];
		if (e->bytes_hash != h)
			continue;
		if (entry_is(e, v->base, v->patch, v->npatch))
			return id;
		/* same hash, other description: only the bytes can tell */
		if (!materialized) {
			view_materialize(v, want);
			materialized = true;
		}
		ev = entry_view(e, buf);
		view_materialize(&ev, have);
		if (memcmp(want, have, CONTENT_PAGE_SIZE) == 0)
			return id;
	}
	return 0;
}

/* Do the patches lie within one window? Then where it starts. */
static bool fits_window(const struct sim_patch_byte *patch, uint32_t npatch, uint16_t *start)
{
	uint32_t first = patch[0].offset;

	if (patch[npatch - 1].offset - first >= SIM_PATCH_WINDOW)
		return false;
	*start = (uint16_t)(first < CONTENT_PAGE_SIZE - SIM_PATCH_WINDOW
				    ? first : CONTENT_PAGE_SIZE - SIM_PATCH_WINDOW);
	return true;
}

/* The page's 8 bytes at @start: base bytes, with the patches over them. */
static uint64_t window_of(uint64_t base, const struct sim_patch_byte *patch, uint32_t npatch,
			  uint32_t start)
{
	uint64_t w = 0;

	for (uint32_t k = 0; k < SIM_PATCH_WINDOW; k++)
		w |= (uint64_t)word_byte(base, start + k) << (8 * k);
	for (uint32_t i = 0; i < npatch; i++) {
		uint32_t k = patch[i].offset - start;

		w &= ~((uint64_t)0xff << (8 * k));
		w |= (uint64_t)patch[i].byte << (8 * k);
	}
	return w;
}

/* Where the patches to keep are made: on the stack, or allocated and given away. */
struct patch_buf {
	struct sim_patch_byte *patch;
	bool heap;  /* patch was malloc'd by the writer */
	bool taken; /* and a spilled entry now owns it */
};

/*
 * A new content base + @pb's @npatch patches (@npatch >= 1, sorted, none
 * equal to the base byte). A spilled entry takes @pb's array when it was
 * allocated (pb->taken), else gets a copy.
 */
static uint64_t add_content(struct sim_content_store *cs, uint64_t base, struct patch_buf *pb,
			    uint32_t npatch, uint64_t h, bool listed)
{
	const struct sim_patch_byte *patch = pb->patch;
	struct sim_patch_byte *copy = NULL;
	struct sim_patched *e;
	uint32_t id;
	uint16_t start;

	if (!fits_window(patch, npatch, &start)) {
		start = SIM_PATCH_SPILLED;
		copy = pb->heap ? pb->patch : malloc(npatch * sizeof(*copy));
		if (!copy)
			return UINT64_MAX;
		if (!pb->heap)
			memcpy(copy, patch, npatch * sizeof(*copy));
	}
	/* at most 3/4 full: probe runs stay short, 4 to 8 bytes per content */
	if (listed && 4 * ((uint64_t)cs->live + 1) > 3 * (uint64_t)cs->nbuckets &&
	    grow_buckets(cs) != 0)
		goto oom;
	id = new_entry(cs);
	if (!id)
		goto oom;
	e = &cs->entry[id];
	memset(e, 0, sizeof(*e));
	e->base = base;
	e->npatch = (uint16_t)npatch;
	e->start = start;
	if (copy) {
		e->patch = copy;
		pb->taken = pb->heap;
	} else {
		e->window = window_of(base, patch, npatch, start);
	}
	e->bytes_hash = h;
	if (!listed) {
		e->refs = SIM_REFS_UNLISTED;
		return SIM_TOKEN_PATCHED + id;
	}
	table_insert(cs->bucket, cs->nbuckets, id, h);
	cs->live++;
	return SIM_TOKEN_PATCHED + id;
oom:
	if (!pb->heap)
		free(copy);
	return UINT64_MAX;
}

/*
 * The token of base + @pb's patches (hash @h): an equal listed content's, or a new
 * content, listed when @listed. A fresh value's write is not listed: it is
 * looked up by nobody (its bytes were never written before, so an equal
 * content is all but impossible, and an equal one would only cost memory:
 * every comparison reads bytes), which spares the table's two cache misses,
 * the probe here and the deletion when it is overwritten.
 */
static uint64_t intern(struct sim_content_store *cs, uint64_t base, struct patch_buf *pb,
		       uint32_t npatch, uint64_t h, bool listed)
{
	struct view v = { base, pb->patch, npatch };
	uint32_t id = listed ? find_equal(cs, &v, h) : 0;

	if (id)
		return SIM_TOKEN_PATCHED + id;
	return add_content(cs, base, pb, npatch, h, listed);
}

/* The site of @base and @offset: found, or taken while one is left; else -1. */
static int site_for(struct sim_content_store *cs, uint64_t base, uint32_t offset)
{
	struct sim_word_site *site;

	for (uint32_t i = 0; i < cs->nsites; i++)
		if (cs->site[i].base == base && cs->site[i].offset == offset)
			return (int)i;
	if (cs->nsites == SIM_WORD_SITES)
		return -1;
	site = &cs->site[cs->nsites];
	site->base = base;
	site->offset = offset;
	site->base_hash = plain_bytes_hash(cs, base);
	return (int)cs->nsites++;
}

/*
 * A fresh @value written at @offset over a plain page, or over a word token
 * of the same offset (which the write overwrites whole), is a word token
 * (or the plain page itself, when @value is its bytes there): *out, true.
 * False when the write needs an entry.
 */
static bool word_after_write(struct sim_content_store *cs, uint64_t token, uint32_t offset,
			     uint64_t value, uint64_t *out)
{
	uint64_t base;
	int site;

	if (value < CONTENT_FRESH_BASE || (value & ~CONTENT_FRESH_BASE) > SIM_WORD_COUNT_MASK)
		return false;
	if (!sim_content_is_patched(token))
		base = token;
	else if (is_word(token) && site_of(cs, token)->offset == offset)
		base = site_of(cs, token)->base;
	else
		return false;
	if (base_bytes_at(base, offset) == value) {
		*out = base;
		return true;
	}
	site = site_for(cs, base, offset);
	if (site < 0)
		return false;
	*out = SIM_TOKEN_WORD | (uint64_t)site << SIM_WORD_SITE_SHIFT |
	       (value & SIM_WORD_COUNT_MASK);
	return true;
}

/*
 * A write of @value at @offset over a content whose differing bytes all lie
 * in those eight (a plain page, an inline window that starts there, a word
 * token of that offset): the new content is its base with @value there, and
 * nothing of the old one is left to merge. *out and true; false when the old
 * content has bytes elsewhere. The same content as the general path makes.
 */
static bool write_over_whole(struct sim_content_store *cs, uint64_t token, uint32_t offset,
			     uint64_t value, bool listed, uint64_t *out)
{
	struct sim_patch_byte patch[SIM_PATCH_WINDOW];
	struct patch_buf pb = { patch, false, false };
	const struct sim_patched *e;
	uint64_t base, h;
	uint32_t n = 0;

	if (!sim_content_is_patched(token))
		base = token;
	else if (is_word(token) && site_of(cs, token)->offset == offset)
		base = site_of(cs, token)->base;
	else if (!is_word(token) && !sim_patched_spilled(e = entry_of(cs, token)) &&
		 e->start == offset)
		base = e->base;
	else
		return false;
	h = plain_bytes_hash(cs, base) + write_hash_delta(offset, value, base, base);
	for (uint32_t k = 0; k < CONTENT_WORD_SIZE; k++) {
		uint32_t off = offset + k;
		uint8_t new = (uint8_t)(value >> (8 * k));

		if (new != word_byte(base, off))
			patch[n++] = (struct sim_patch_byte){ (uint16_t)off, new };
	}
	if (n && listed)
		__builtin_prefetch(&cs->bucket[(uint32_t)h & (cs->nbuckets - 1)]);
	*out = n ? intern(cs, base, &pb, n, h, listed) : base;
	return true;
}

/*
 * Where byte @offset's patch is, or would go, among @n sorted patches: the
 * patched bytes of a rewritten region are usually one run, where the offset
 * names the index; else the binary search.
 */
static uint32_t patch_index(const struct sim_patch_byte *patch, uint32_t n, uint32_t offset)
{
	uint32_t guess = offset - patch[0].offset;

	if (offset >= patch[0].offset && guess < n && patch[guess].offset == offset)
		return guess;
	return patches_before(patch, n, offset);
}

/*
 * A spilled or inline entry as a run over its differing bytes (its patches,
 * or its 8-byte window) and the @offset's 8 bytes, when they span at most
 * SIM_RUN_MAX bytes: true when done (false, unchanged, when they do not,
 * or out of memory).
 */
static bool become_run(struct sim_patched *e, uint32_t offset)
{
	const bool spilled = sim_patched_spilled(e);
	const struct sim_patch_byte *p = spilled ? e->patch : NULL;
	uint32_t n = e->npatch, lo, hi;
	struct sim_patch_run *r;

	lo = spilled ? p[0].offset : e->start;
	hi = spilled ? p[n - 1].offset + 1u : e->start + SIM_PATCH_WINDOW;
	if (offset < lo)
		lo = offset;
	if (offset + CONTENT_WORD_SIZE > hi)
		hi = offset + CONTENT_WORD_SIZE;
	lo = word_floor(lo); /* whole words: a write reads and hashes them */
	hi = word_ceil(hi);
	if (hi - lo > SIM_RUN_MAX)
		return false;
	r = malloc(SIM_RUN_BLOCK_BYTES);
	if (!r)
		return false;
	r->start = (uint16_t)lo;
	r->len = (uint16_t)(hi - lo);
	fill_base_bytes(r->byte, e->base, lo, r->len);
	if (spilled) {
		for (uint32_t i = 0; i < n; i++)
			r->byte[p[i].offset - lo] = p[i].byte;
		free(e->patch);
	} else { /* the window: the page's 8 bytes from start, base bytes among them */
		store_word(r->byte + (e->start - lo), e->window);
	}
	e->run = r;
	e->start = SIM_PATCH_RUN;
	return true;
}

/*
 * Make @e's run span [@lo, @hi) (it spans a part; its block has room for
 * SIM_RUN_MAX): the new bytes are the base's, so the content's bytes stay
 * as they were.
 */
static void widen_run(struct sim_patched *e, uint32_t lo, uint32_t hi)
{
	struct sim_patch_run *r = e->run;
	uint32_t before = r->start - lo, after = before + r->len;

	memmove(r->byte + before, r->byte, r->len);
	fill_base_bytes(r->byte, e->base, lo, before);
	fill_base_bytes(r->byte + after, e->base, lo + after, hi - lo - after);
	r->start = (uint16_t)lo;
	r->len = (uint16_t)(hi - lo);
}

/* How many of the word's 8 bytes are not zero. */
static unsigned nonzero_bytes(uint64_t x)
{
	const uint64_t low7 = UINT64_C(0x7f7f7f7f7f7f7f7f);

	/* the top bit of each byte: set where the byte is not zero */
	uint64_t top = (((x & low7) + low7) | x) & ~low7;

	/* summed into the top byte (no popcount instruction in the baseline ISA) */
	return (unsigned)(((top >> 7) * UINT64_C(0x0101010101010101)) >> 56);
}

/*
 * A run entry's fields that a page's writes move, held in registers while
 * they are applied (sim_content_write_many_in_place()): the writes store
 * into the run's bytes, which may alias anything, so fields read from the
 * entry would be read again after each, and the hash and the count would
 * pass from write to write through memory. run_batch_end() stores them.
 */
struct run_batch {
	struct sim_patched *e;
	uint8_t *byte;          /* e->run->byte: a run's block never moves */
	uint64_t base, hash;
	uint32_t start, end, npatch;
};

static __always_inline struct run_batch run_batch_begin(struct sim_patched *e)
{
	struct sim_patch_run *r = e->run;

	return (struct run_batch){ e, r->byte, e->base, e->bytes_hash,
				   r->start, (uint32_t)r->start + r->len, e->npatch };
}

static __always_inline void run_batch_end(const struct run_batch *b)
{
	b->e->npatch = (uint16_t)b->npatch;
	b->e->bytes_hash = b->hash;
}

/*
 * A write of @value at @offset within the run (which holds whole aligned
 * words). The words it touches are read and written whole, at the same
 * addresses whatever the offset, so that a write's loads take what the
 * last one stored straight from the store buffer (a load that straddles an
 * earlier store at another offset waits for it to reach the cache). The
 * count of bytes differing from the base moves by the replaced and the new
 * bytes' differences, the hash by the words' terms. False, unchanged, when
 * the bytes would all be the base's again.
 */
static __always_inline bool write_within_run(struct run_batch *b, uint32_t offset,
					     uint64_t value)
{
	uint8_t *at = b->byte + (word_floor(offset) - b->start);
	const uint32_t shift = 8 * (offset % CONTENT_WORD_SIZE);
	const uint64_t base = base_bytes_at(b->base, offset);
	uint64_t lo, hi = 0, was, nlo, nhi;
	uint32_t npatch;

	assert(b->start % CONTENT_WORD_SIZE == 0);
	lo = load_word(at);
	if (shift)
		hi = load_word(at + CONTENT_WORD_SIZE);
	was = shift ? lo >> shift | hi << (64 - shift) : lo;
	npatch = b->npatch + nonzero_bytes(value ^ base) - nonzero_bytes(was ^ base);
	if (npatch == 0)
		return false;
	words_after_write(offset, value, lo, hi, &nlo, &nhi);
	b->hash += words_hash_delta(offset, lo, hi, nlo, nhi);
	b->npatch = npatch;
	store_word(at, nlo);
	if (shift)
		store_word(at + CONTENT_WORD_SIZE, nhi);
	return true;
}

/*
 * @value's 8 bytes at @offset of a run, widened first to hold them when it
 * does not (with base bytes: the content stays what it was). False, the
 * bytes unchanged, when the run would span more than SIM_RUN_MAX or its
 * bytes would all be the base's again (a plain token then:
 * sim_content_after_write()).
 */
static __always_inline bool write_into_run(struct run_batch *b, uint32_t offset,
					   uint64_t value)
{
	uint32_t lo = b->start < word_floor(offset) ? b->start : word_floor(offset);
	uint32_t hi = word_ceil(offset + CONTENT_WORD_SIZE);

	if (b->end > hi)
		hi = b->end;
	if (hi - lo > SIM_RUN_MAX)
		return false;
	if (lo != b->start || hi != b->end) {
		widen_run(b->e, lo, hi);
		b->start = lo;
		b->end = hi;
	}
	return write_within_run(b, offset, value);
}

/*
 * @value's 8 bytes over 8 patched bytes of a spilled entry that stay
 * patched: the patches' bytes and the hash change, nothing else. False,
 * unchanged, otherwise.
 */
static bool write_over_patches(struct sim_patched *e, uint32_t offset, uint64_t value)
{
	struct sim_patch_byte *p;

	if (e->npatch >= CONTENT_PAGE_SIZE / CONTENT_WORD_SIZE)
		return false;
	p = e->patch + patch_index(e->patch, e->npatch, offset);
	/* offsets are sorted and distinct: the 8th from here at offset + 7 means all 8 */
	if (p + CONTENT_WORD_SIZE > e->patch + e->npatch || p->offset != offset ||
	    p[CONTENT_WORD_SIZE - 1].offset != offset + CONTENT_WORD_SIZE - 1)
		return false;
	for (uint32_t k = 0; k < CONTENT_WORD_SIZE; k++)
		if ((uint8_t)(value >> (8 * k)) == word_byte(e->base, offset + k))
			return false; /* the patch would go: a new content */
	e->bytes_hash += write_delta_over(e->base, e->patch, e->npatch, offset, value);
	for (uint32_t k = 0; k < CONTENT_WORD_SIZE; k++)
		p[k].byte = (uint8_t)(value >> (8 * k));
	return true;
}

/* The entry of @token when a write may change it in place (one frame holds it). */
static struct sim_patched *entry_to_write(struct sim_content_store *cs, uint64_t token)
{
	struct sim_patched *e;

	if (!sim_content_has_entry(token))
		return NULL;
	e = entry_of(cs, token);
	return e->refs == (SIM_REFS_UNLISTED | 1) ? e : NULL;
}

/*
 * Nai Xia's writer rewrites the same hundred bytes of every page ten
 * million times a simulated second. A fresh value's content that only the
 * written frame holds is rewritten where it is, instead of copied into a
 * new content: as a run of bytes when its bytes span at most SIM_RUN_MAX
 * (a hundred bytes, where the sorted patches take three hundred and a
 * search; an inline window or spilled patches become the run), else over
 * its patches when the eight bytes stay patched.
 */
static bool write_entry_in_place(struct sim_patched *e, uint32_t offset, uint64_t value)
{
	struct run_batch b;

	if (value < CONTENT_FRESH_BASE)
		return false;
	if (!sim_patched_run(e) && !become_run(e, offset))
		return sim_patched_spilled(e) && write_over_patches(e, offset, value);
	b = run_batch_begin(e);
	if (!write_into_run(&b, offset, value))
		return false;
	run_batch_end(&b);
	return true;
}

bool sim_content_write_in_place(struct sim_content_store *cs, uint64_t token, uint32_t offset,
				uint64_t value)
{
	struct sim_patched *e = entry_to_write(cs, token);

	return e && write_entry_in_place(e, offset, value);
}

size_t sim_content_write_many_in_place(struct sim_content_store *cs, uint64_t token,
				       const struct sim_page_write *w, size_t n)
{
	struct sim_patched *e = entry_to_write(cs, token);
	size_t i = 0;

	if (!e)
		return 0;
	while (i < n) {
		if (sim_patched_run(e)) { /* a run taking fresh values, the common case, inlined */
			struct run_batch b = run_batch_begin(e);

			while (i < n && w[i].value >= CONTENT_FRESH_BASE &&
			       write_into_run(&b, w[i].offset, w[i].value))
				i++;
			run_batch_end(&b);
			if (i == n)
				break;
		}
		if (!write_entry_in_place(e, w[i].offset, w[i].value))
			break;
		i++;
	}
	return i;
}

uint64_t sim_content_after_write(struct sim_content_store *cs, uint64_t token, uint32_t offset,
				 uint64_t value)
{
	struct sim_patch_byte buf[SIM_PATCH_VIEW], small[4 * SIM_PATCH_WINDOW], *patch = small;
	const bool listed = value < CONTENT_FRESH_BASE;
	uint32_t n, i, after;
	struct patch_buf pb;
	uint64_t h, ret;
	struct view v;

	if (word_after_write(cs, token, offset, value, &ret) ||
	    write_over_whole(cs, token, offset, value, listed, &ret))
		return ret;
	v = view_of(cs, token, buf);
	h = sim_content_bytes_hash(cs, token);

	/*
	 * On a large host each bucket read is a cache miss: start on the old
	 * content's (the caller's unref unlinks it when this was its last
	 * frame) so that it overlaps the probe for the new one.
	 */
	if (sim_content_has_entry(token) && sim_patched_listed(entry_of(cs, token)))
		__builtin_prefetch(&cs->bucket[(uint32_t)h & (cs->nbuckets - 1)], 1);
	if (v.npatch + CONTENT_WORD_SIZE > sizeof(small) / sizeof(small[0])) {
		patch = malloc((v.npatch + CONTENT_WORD_SIZE) * sizeof(*patch));
		if (!patch)
			return UINT64_MAX;
	}
	/* old patches before the write, the written bytes, old patches after */
	n = i = patches_before(v.patch, v.npatch, offset);
	if (n) /* a plain token's view has no patch array at all */
		memcpy(patch, v.patch, n * sizeof(*patch));
	h += write_delta_over(v.base, v.patch, v.npatch, offset, value);
	for (uint32_t k = 0; k < CONTENT_WORD_SIZE; k++) {
		uint32_t off = offset + k;
		uint8_t new = (uint8_t)(value >> (8 * k));

		if (i < v.npatch && v.patch[i].offset == off)
			i++;
		if (new != word_byte(v.base, off))
			patch[n++] = (struct sim_patch_byte){ (uint16_t)off, new };
	}
	after = v.npatch - i;
	if (after)
		memcpy(patch + n, v.patch + i, after * sizeof(*patch));
	n += after;
	pb = (struct patch_buf){ patch, patch != small, false };
	if (n && listed)
		__builtin_prefetch(&cs->bucket[(uint32_t)h & (cs->nbuckets - 1)]);
	if (n == 0) {
		ret = v.base;
	} else if (n >= CONTENT_PAGE_SIZE / CONTENT_WORD_SIZE) {
		/* enough bytes patched that the page may be uniform again */
		uint8_t page[CONTENT_PAGE_SIZE];
		struct view nv = { v.base, patch, n };
		uint64_t word;

		view_materialize(&nv, page);
		ret = page_is_uniform(page, &word) ? word : intern(cs, v.base, &pb, n, h, listed);
	} else {
		ret = intern(cs, v.base, &pb, n, h, listed);
	}
	if (pb.heap && !pb.taken)
		free(patch);
	return ret;
}
