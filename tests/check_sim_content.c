/*
 * check_sim_content.c - tests of the simulator's building blocks that stand
 * alone: compact page contents (sim_content.c: memcmp order, checksums,
 * canonical tokens, the fresh values' unlisted ones and word tokens, each checked against
 * the real 4 KiB bytes) and the
 * kernel-shaped red-black tree (sim_rbtree.c: invariants after random inserts
 * and erases, order, replace).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "content.h"
#include "rng.h"
#include "sim_content.h"
#include "sim_rbtree.h"

/* --- contents ----------------------------------------------------------- */

static int sign(int x)
{
	return (x > 0) - (x < 0);
}

START_TEST(plain_checksum_equals_xxh64_of_the_bytes)
{
	struct sim_content_store cs;
	uint8_t page[CONTENT_PAGE_SIZE];
	struct wl_rng rng = wl_rng_stream(1, 1);

	ck_assert_int_eq(sim_content_store_init(&cs), 0);
	for (int i = 0; i < 200; i++) {
		uint64_t v = i < 3 ? (uint64_t)i : wl_rng_next(&rng) >> 1;

		content_fill(page, v);
		ck_assert_uint_eq(sim_content_checksum(&cs, v), content_checksum(page));
	}
	sim_content_store_free(&cs);
}
END_TEST

/* One to four at once (AVX-512 where the CPU has it): the same checksums. */
START_TEST(four_plain_checksums_equal_xxh64_of_the_bytes)
{
	uint8_t page[CONTENT_PAGE_SIZE];
	struct wl_rng rng = wl_rng_stream(5, 2);

	for (int i = 0; i < 50; i++) {
		uint64_t word[4];
		uint32_t sum[4];

		for (int k = 0; k < 4; k++)
			word[k] = i == 0 ? (uint64_t)k : wl_rng_next(&rng) >> (k % 2);
		sim_plain_checksums_batch(word, (unsigned)(i % 4 + 1), sum);
		for (int k = 0; k <= i % 4; k++) {
			content_fill(page, word[k]);
			ck_assert_uint_eq(sum[k], content_checksum(page));
		}
	}
}
END_TEST

/*
 * A store and @n pages of it, alternately the plain values @a and @b, as
 * tokens and as their real bytes: where the random-write tests start.
 */
static void start_pages(struct sim_content_store *cs, uint8_t (*real)[CONTENT_PAGE_SIZE],
			uint64_t *token, int n, uint64_t a, uint64_t b)
{
	ck_assert_int_eq(sim_content_store_init(cs), 0);
	for (int p = 0; p < n; p++) {
		token[p] = p % 2 ? b : a;
		content_fill(real[p], token[p]);
	}
}

/* Write @value at @offset over @token's page, as a frame would: ref the new, unref the old. */
static uint64_t rewrite(struct sim_content_store *cs, uint64_t token, uint32_t offset,
			uint64_t value)
{
	uint64_t t = sim_content_after_write(cs, token, offset, value);

	ck_assert_uint_ne(t, UINT64_MAX);
	sim_content_ref(cs, t);
	sim_content_unref(cs, token);
	return t;
}

/* Apply the same random writes to real pages and to tokens; compare. */
START_TEST(tokens_agree_with_real_bytes)
{
	enum { NPAGES = 6, ROUNDS = 3000 };
	struct sim_content_store cs;
	static uint8_t real[NPAGES][CONTENT_PAGE_SIZE];
	uint64_t token[NPAGES];
	struct wl_rng rng = wl_rng_stream(7, 0);

	start_pages(&cs, real, token, NPAGES, 1, 2);
	for (int round = 0; round < ROUNDS; round++) {
		int p = (int)wl_rng_below(&rng, NPAGES), q = (int)wl_rng_below(&rng, NPAGES);
		/* few offsets and values, so that pages collide and restore often */
		uint32_t offset = (uint32_t)wl_rng_below(&rng, 4) * 1012;
		uint64_t value = wl_rng_below(&rng, 3) + 1;
		uint8_t mat[CONTENT_PAGE_SIZE];

		token[p] = rewrite(&cs, token[p], offset, value);
		content_write(real[p], offset, value);

		sim_content_materialize(&cs, token[p], mat);
		ck_assert_mem_eq(mat, real[p], CONTENT_PAGE_SIZE);
		ck_assert_int_eq(sign(sim_content_cmp(&cs, token[p], token[q])),
				 sign(memcmp(real[p], real[q], CONTENT_PAGE_SIZE)));
		/* canonical: equal bytes, equal tokens */
		ck_assert_int_eq(token[p] == token[q],
				 memcmp(real[p], real[q], CONTENT_PAGE_SIZE) == 0);
		ck_assert_uint_eq(sim_content_checksum(&cs, token[p]), content_checksum(real[p]));
		ck_assert_uint_eq(sim_content_byte(&cs, token[p], offset), real[p][offset]);
	}
	for (int p = 0; p < NPAGES; p++)
		sim_content_unref(&cs, token[p]);
	ck_assert_uint_eq(cs.live, 0); /* every patched content was released */
	sim_content_store_free(&cs);
}
END_TEST

/*
 * Fresh values' contents stay out of the intern table, so equal bytes may
 * have two tokens: writes mixing two fresh values and two plain ones (pages
 * collide often) must still agree with the real bytes in order, checksums
 * and byte hash, equal bytes must compare equal whatever their tokens, and
 * every content must be freed at the end.
 */
START_TEST(fresh_writes_compare_by_bytes_not_by_token)
{
	enum { NPAGES = 6, ROUNDS = 3000 };
	struct sim_content_store cs;
	static uint8_t real[NPAGES][CONTENT_PAGE_SIZE];
	uint64_t token[NPAGES];
	struct wl_rng rng = wl_rng_stream(9, 0);
	bool split = false; /* equal bytes under two tokens were seen */

	ck_assert_int_eq(sim_content_store_init(&cs), 0);
	for (int p = 0; p < NPAGES; p++) {
		token[p] = 1;
		content_fill(real[p], 1);
	}
	for (int round = 0; round < ROUNDS; round++) {
		int p = (int)wl_rng_below(&rng, NPAGES), q = (int)wl_rng_below(&rng, NPAGES);
		uint32_t offset = (uint32_t)wl_rng_below(&rng, 3) * 2044;
		uint64_t pick = wl_rng_below(&rng, 4);
		uint64_t value = pick < 2 ? content_fresh_value(pick) : pick - 1;
		bool same;

		token[p] = rewrite(&cs, token[p], offset, value);
		content_write(real[p], offset, value);
		same = memcmp(real[p], real[q], CONTENT_PAGE_SIZE) == 0;
		split |= same && token[p] != token[q];
		ck_assert_int_eq(sign(sim_content_cmp(&cs, token[p], token[q])),
				 sign(memcmp(real[p], real[q], CONTENT_PAGE_SIZE)));
		if (token[p] == token[q])
			ck_assert(same);
		ck_assert_int_eq(sim_content_bytes_hash(&cs, token[p]) ==
					 sim_content_bytes_hash(&cs, token[q]), same);
		ck_assert_int_eq(sim_content_checksum_as(&cs, token[p], WL_CHECKSUM_CONTENT) ==
					 sim_content_checksum_as(&cs, token[q], WL_CHECKSUM_CONTENT),
				 same);
		ck_assert_uint_eq(sim_content_checksum(&cs, token[p]), content_checksum(real[p]));
	}
	ck_assert_msg(split, "no two tokens of equal bytes: the test exercised nothing new");
	for (int p = 0; p < NPAGES; p++)
		sim_content_unref(&cs, token[p]);
	ck_assert_uint_eq(cs.live, 0);
	for (uint32_t i = 1; i < cs.nentries; i++)
		ck_assert_uint_eq(cs.entry[i].refs, 0); /* listed or not, every one freed */
	sim_content_store_free(&cs);
}
END_TEST

/*
 * Writes that overlap, straddle and end the page: contents that fit the
 * entry's 8-byte window (at the page's last word too) and contents that
 * spill out of it must agree with the real bytes, in order and checksum.
 */
START_TEST(inline_and_spilled_patches_agree_with_real_bytes)
{
	enum { NPAGES = 4, ROUNDS = 4000 };
	struct sim_content_store cs;
	static uint8_t real[NPAGES][CONTENT_PAGE_SIZE];
	uint64_t token[NPAGES];
	struct wl_rng rng = wl_rng_stream(11, 3);

	start_pages(&cs, real, token, NPAGES, UINT64_C(0x0101010101010101),
		    UINT64_C(0x0202020202020202));
	for (int round = 0; round < ROUNDS; round++) {
		int p = (int)wl_rng_below(&rng, NPAGES), q = (int)wl_rng_below(&rng, NPAGES);
		uint32_t offset = wl_rng_below(&rng, 2) ? CONTENT_MAX_OFFSET - (uint32_t)wl_rng_below(&rng, 12)
						      : (uint32_t)wl_rng_below(&rng, 12);
		/* bytes of 1 or 2: some equal the base's, some not */
		uint64_t value = 0;
		uint8_t mat[CONTENT_PAGE_SIZE];

		for (int k = 0; k < 8; k++)
			value |= (wl_rng_below(&rng, 2) + 1) << (8 * k);
		token[p] = rewrite(&cs, token[p], offset, value);
		content_write(real[p], offset, value);

		sim_content_materialize(&cs, token[p], mat);
		ck_assert_mem_eq(mat, real[p], CONTENT_PAGE_SIZE);
		ck_assert_int_eq(sign(sim_content_cmp(&cs, token[p], token[q])),
				 sign(memcmp(real[p], real[q], CONTENT_PAGE_SIZE)));
		ck_assert_int_eq(token[p] == token[q],
				 memcmp(real[p], real[q], CONTENT_PAGE_SIZE) == 0);
		ck_assert_uint_eq(sim_content_checksum(&cs, token[p]), content_checksum(real[p]));
		for (uint32_t k = 0; k < 16; k++) {
			uint32_t o = offset + k < CONTENT_PAGE_SIZE ? offset + k : offset - k;

			ck_assert_uint_eq(sim_content_byte(&cs, token[p], o), real[p][o]);
		}
	}
	for (int p = 0; p < NPAGES; p++)
		sim_content_unref(&cs, token[p]);
	ck_assert_uint_eq(cs.live, 0);
	sim_content_store_free(&cs);
}
END_TEST

/* Are the two descriptions the same patches? */
static bool same_patches(const struct sim_patch_byte *a, const struct sim_patch_byte *b,
			 uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (a[i].offset != b[i].offset || a[i].byte != b[i].byte)
			return false;
	return true;
}

/*
 * Nai Xia's writer: fresh values at random offsets in the last 96 bytes,
 * each write first offered in place as sim_write() does. The page must hold
 * the real bytes, and its byte hash, checksum, description and order against
 * the other pages must be those of the same bytes reached by new contents
 * alone (a second store that never writes in place); a shared entry is never
 * written in place. Both paths must run, and runs must have held the bytes.
 */
START_TEST(writes_in_place_agree_with_new_contents)
{
	enum { NPAGES = 3, ROUNDS = 6000 };
	struct sim_content_store cs, ref;
	static uint8_t real[NPAGES][CONTENT_PAGE_SIZE];
	uint64_t token[NPAGES], other[NPAGES];
	struct wl_rng rng = wl_rng_stream(13, 5);
	unsigned in_place = 0, refused = 0, runs = 0;

	start_pages(&cs, real, token, NPAGES, UINT64_C(0x0101010101010101),
		    UINT64_C(0x0101010101010101));
	ck_assert_int_eq(sim_content_store_init(&ref), 0);
	for (int p = 0; p < NPAGES; p++)
		other[p] = token[p];
	for (unsigned round = 0; round < ROUNDS; round++) {
		int p = (int)wl_rng_below(&rng, NPAGES), q = (p + 1) % NPAGES;
		uint32_t offset = 4000 + (uint32_t)wl_rng_below(&rng, 89);
		/* a low byte of 1 restores the base's byte there: the patch goes */
		uint64_t value = content_fresh_value(wl_rng_below(&rng, 4) ? round : 1);
		struct sim_patch_byte bufa[SIM_PATCH_VIEW], bufb[SIM_PATCH_VIEW];
		const struct sim_patch_byte *pa, *pb;
		uint8_t mat[CONTENT_PAGE_SIZE];
		uint32_t n, read, read_ref;
		uint64_t t;

		if (sim_content_write_in_place(&cs, token[p], offset, value)) {
			in_place++;
		} else {
			refused++;
			token[p] = rewrite(&cs, token[p], offset, value);
		}
		other[p] = rewrite(&ref, other[p], offset, value);
		content_write(real[p], offset, value);

		sim_content_materialize(&cs, token[p], mat);
		ck_assert_mem_eq(mat, real[p], CONTENT_PAGE_SIZE);
		ck_assert_uint_eq(sim_content_bytes_hash(&cs, token[p]),
				  sim_content_bytes_hash(&ref, other[p]));
		ck_assert_uint_eq(sim_content_checksum(&cs, token[p]), content_checksum(real[p]));
		/* canonical: the patched bytes the new contents have */
		n = sim_content_patches(&cs, token[p], &t, bufa, &pa);
		ck_assert_uint_eq(n, sim_content_patches(&ref, other[p], &t, bufb, &pb));
		ck_assert(same_patches(pa, pb, n));
		ck_assert_uint_eq(sim_content_byte(&cs, token[p], offset + 3), real[p][offset + 3]);
		ck_assert_int_eq(sign(sim_content_cmp_bytes(&cs, token[p], token[q], &read)),
				 sign(memcmp(real[p], real[q], CONTENT_PAGE_SIZE)));
		/* and reads as many bytes as the new contents' sorted patches say */
		(void)sim_content_cmp_bytes(&ref, other[p], other[q], &read_ref);
		ck_assert_uint_eq(read, read_ref);
		runs += sim_content_has_entry(token[p]) &&
			sim_patched_run(&cs.entry[token[p] - SIM_TOKEN_PATCHED]);
	}
	ck_assert_uint_gt(in_place, ROUNDS / 2);
	ck_assert_uint_gt(refused, 0);
	ck_assert_uint_gt(runs, ROUNDS / 2);
	/* a second frame holds page 0's content: a write must not change it for both */
	sim_content_ref(&cs, token[0]);
	ck_assert(!sim_content_write_in_place(&cs, token[0], 4000, content_fresh_value(ROUNDS)));
	sim_content_unref(&cs, token[0]);
	for (int p = 0; p < NPAGES; p++) {
		sim_content_unref(&cs, token[p]);
		sim_content_unref(&ref, other[p]);
	}
	sim_content_store_free(&cs);
	sim_content_store_free(&ref);
}
END_TEST

START_TEST(writing_the_old_bytes_back_restores_the_plain_token)
{
	struct sim_content_store cs;
	uint64_t t;

	ck_assert_int_eq(sim_content_store_init(&cs), 0);
	t = sim_content_after_write(&cs, 5, 4088, 99);
	ck_assert(sim_content_is_patched(t));
	sim_content_ref(&cs, t);
	ck_assert_uint_eq(sim_content_after_write(&cs, t, 4088, 5), 5);
	/* a write of the page's own word changes nothing */
	ck_assert_uint_eq(sim_content_after_write(&cs, 5, 16, 5), 5);
	sim_content_unref(&cs, t);
	sim_content_store_free(&cs);
}
END_TEST

START_TEST(overwriting_every_word_gives_the_other_plain_token)
{
	struct sim_content_store cs;
	uint64_t t = 3;

	ck_assert_int_eq(sim_content_store_init(&cs), 0);
	for (uint32_t off = 0; off <= CONTENT_MAX_OFFSET; off += 8) {
		uint64_t n = sim_content_after_write(&cs, t, off, 77);

		sim_content_ref(&cs, n);
		sim_content_unref(&cs, t);
		t = n;
	}
	ck_assert_uint_eq(t, 77);
	ck_assert_uint_eq(cs.live, 0);
	sim_content_store_free(&cs);
}
END_TEST

START_TEST(equal_bytes_from_different_bases_share_one_token)
{
	struct sim_content_store cs;
	uint64_t a = 1, b = 2;

	ck_assert_int_eq(sim_content_store_init(&cs), 0);
	/* page a: value 1 with 2 everywhere but its last word; page b: value 2 with 1 there */
	for (uint32_t off = 0; off < CONTENT_MAX_OFFSET; off += 8) {
		uint64_t n = sim_content_after_write(&cs, a, off, 2);

		sim_content_ref(&cs, n);
		sim_content_unref(&cs, a);
		a = n;
	}
	b = sim_content_after_write(&cs, b, CONTENT_MAX_OFFSET, 1);
	ck_assert(sim_content_is_patched(a));
	ck_assert_uint_eq(a, b);
	ck_assert_uint_eq(sim_content_bytes_hash(&cs, a), sim_content_bytes_hash(&cs, b));
	sim_content_unref(&cs, a);
	sim_content_store_free(&cs);
}
END_TEST

/* Two tokens name the same bytes, in every way a visit asks. */
static void assert_same_bytes(struct sim_content_store *cs, uint64_t a, uint64_t b,
			      const uint8_t *real)
{
	uint8_t mat[CONTENT_PAGE_SIZE];

	sim_content_materialize(cs, a, mat);
	ck_assert_mem_eq(mat, real, CONTENT_PAGE_SIZE);
	sim_content_materialize(cs, b, mat);
	ck_assert_mem_eq(mat, real, CONTENT_PAGE_SIZE);
	ck_assert_int_eq(sim_content_cmp(cs, a, b), 0);
	ck_assert_uint_eq(sim_content_bytes_hash(cs, a), sim_content_bytes_hash(cs, b));
	ck_assert_uint_eq(sim_content_checksum_as(cs, a, WL_CHECKSUM_CONTENT),
			  sim_content_checksum_as(cs, b, WL_CHECKSUM_CONTENT));
	ck_assert_uint_eq(sim_content_checksum(cs, a), content_checksum(real));
	ck_assert_uint_eq(sim_content_checksum(cs, b), content_checksum(real));
}

/*
 * sim_content_is_base_with() answers as the decoded description does: a
 * content is each other content's canonical description exactly when
 * their bytes are equal (plain tokens, inline and spilled entries, word
 * tokens), and a description with one byte changed is not.
 */
START_TEST(is_base_with_answers_as_the_bytes_do)
{
	enum { NPAGES = 6, ROUNDS = 3000 };
	struct sim_content_store cs;
	static uint8_t real[NPAGES][CONTENT_PAGE_SIZE];
	uint64_t token[NPAGES];
	struct wl_rng rng = wl_rng_stream(12, 5);
	unsigned kinds[4] = { 0 }; /* plain, inline, spilled, word: each met */

	start_pages(&cs, real, token, NPAGES, UINT64_C(0x0101010101010101),
		    UINT64_C(0x0202020202020202));
	for (int round = 0; round < ROUNDS; round++) {
		int p = (int)wl_rng_below(&rng, NPAGES);
		uint32_t offset = (uint32_t)wl_rng_below(&rng, 24);
		uint64_t value = 0;

		if (wl_rng_below(&rng, 8) == 0) {
			value = content_fresh_value((uint64_t)round);
			offset = 4088;
		} else {
			for (int k = 0; k < 8; k++)
				value |= (wl_rng_below(&rng, 2) + 1) << (8 * k);
		}
		token[p] = rewrite(&cs, token[p], offset, value);
		content_write(real[p], offset, value);
		for (int q = 0; q < NPAGES; q++) {
			struct sim_patch_byte buf[SIM_PATCH_VIEW], desc[64];
			const struct sim_patch_byte *patch;
			uint64_t base;
			uint32_t n = sim_content_patches(&cs, token[q], &base, buf, &patch);
			bool equal = memcmp(real[p], real[q], CONTENT_PAGE_SIZE) == 0;

			kinds[!sim_content_is_patched(token[q])       ? 0
			      : !sim_content_has_entry(token[q])      ? 3
			      : sim_patched_spilled(&cs.entry[token[q] - SIM_TOKEN_PATCHED]) ? 2
										   : 1]++;
			ck_assert_uint_le(n, 64);
			if (n) /* a plain token has no patch array */
				memcpy(desc, patch, n * sizeof(*desc));
			ck_assert_int_eq(sim_content_is_base_with(&cs, token[p], base, desc, n), equal);
			if (!n)
				continue;
			/* one differing byte changed to another that still differs */
			desc[n - 1].byte = (uint8_t)(desc[n - 1].byte == 0xee ? 0xef : 0xee);
			ck_assert(!sim_content_is_base_with(&cs, token[q], base, desc, n));
			/* or one left out */
			ck_assert(!sim_content_is_base_with(&cs, token[q], base, patch, n - 1));
		}
	}
	for (int k = 0; k < 4; k++)
		ck_assert_uint_gt(kinds[k], 0);
	for (int p = 0; p < NPAGES; p++)
		sim_content_unref(&cs, token[p]);
	sim_content_store_free(&cs);
}
END_TEST

/*
 * A fresh value over a plain page is a word token, with no entry; the same
 * bytes reached through an entry (a listed write first) are the same bytes
 * in order, hash and both checksums.
 */
START_TEST(a_fresh_write_over_a_plain_page_needs_no_entry)
{
	const uint64_t fresh = content_fresh_value(41), fresh2 = content_fresh_value(42);
	struct sim_content_store cs;
	uint8_t real[CONTENT_PAGE_SIZE];
	uint64_t a, b, c;
	uint32_t entries;

	ck_assert_int_eq(sim_content_store_init(&cs), 0);
	a = rewrite(&cs, 7, 4088, fresh);
	ck_assert(sim_content_is_patched(a) && !sim_content_has_entry(a));
	ck_assert_uint_eq(cs.nentries, 1); /* entry 0 only: none was made */
	b = rewrite(&cs, rewrite(&cs, 7, 4088, 99), 4088, fresh);
	ck_assert(sim_content_has_entry(b));
	content_fill(real, 7);
	content_write(real, 4088, fresh);
	assert_same_bytes(&cs, a, b, real);
	ck_assert_uint_eq(sim_content_byte(&cs, a, 4095), real[4095]);
	ck_assert_uint_eq(sim_content_byte(&cs, a, 4087), real[4087]);

	/* the next fresh value at the same offset: another word token, no entry */
	entries = cs.nentries;
	c = rewrite(&cs, a, 4088, fresh2);
	ck_assert(!sim_content_has_entry(c) && c != a);
	ck_assert_uint_eq(cs.nentries, entries);
	/* the base's word back: the plain page */
	ck_assert_uint_eq(sim_content_after_write(&cs, c, 4088, 7), 7);
	/* a second offset: an entry holding both writes */
	content_write(real, 4088, fresh2);
	content_write(real, 0, fresh);
	b = rewrite(&cs, b, 4088, fresh2);
	b = rewrite(&cs, b, 0, fresh);
	c = rewrite(&cs, c, 0, fresh);
	ck_assert(sim_content_has_entry(c));
	assert_same_bytes(&cs, b, c, real);
	sim_content_unref(&cs, b);
	sim_content_unref(&cs, c);
	ck_assert_uint_eq(cs.live, 0);
	for (uint32_t i = 1; i < cs.nentries; i++)
		ck_assert_uint_eq(cs.entry[i].refs, 0);
	sim_content_store_free(&cs);
}
END_TEST

/* Sites are few and kept: once they are taken, and for a count past the
 * token's field, a fresh write makes an entry, with the same bytes. */
START_TEST(past_the_sites_a_fresh_write_makes_an_entry)
{
	const uint64_t huge = CONTENT_FRESH_BASE | (SIM_WORD_COUNT_MASK + 1);
	struct sim_content_store cs;
	uint8_t real[CONTENT_PAGE_SIZE];
	uint64_t t[SIM_WORD_SITES + 1];

	ck_assert_int_eq(sim_content_store_init(&cs), 0);
	for (uint32_t i = 0; i <= SIM_WORD_SITES; i++) {
		t[i] = rewrite(&cs, 100 + i, 2044, content_fresh_value(i));
		ck_assert_int_eq(sim_content_has_entry(t[i]), i == SIM_WORD_SITES);
		content_fill(real, 100 + i);
		content_write(real, 2044, content_fresh_value(i));
		assert_same_bytes(&cs, t[i], t[i], real);
	}
	ck_assert_uint_eq(cs.nsites, SIM_WORD_SITES);
	/* a taken site serves every page of its base and offset */
	ck_assert(!sim_content_has_entry(rewrite(&cs, 100, 2044, content_fresh_value(77))));
	t[0] = rewrite(&cs, t[0], 2044, huge);
	ck_assert(sim_content_has_entry(t[0]));
	content_fill(real, 100);
	content_write(real, 2044, huge);
	assert_same_bytes(&cs, t[0], t[0], real);
	for (uint32_t i = 0; i <= SIM_WORD_SITES; i++)
		sim_content_unref(&cs, t[i]);
	for (uint32_t i = 1; i < cs.nentries; i++)
		ck_assert_uint_eq(cs.entry[i].refs, 0);
	sim_content_store_free(&cs);
}
END_TEST

/*
 * A spilled content of a fresh value's, its bytes within SIM_RUN_MAX, turns
 * into a run of whole aligned words at a write in place and widens to later
 * writes; a write that would take it past SIM_RUN_MAX bytes is refused and
 * makes a new content. A clone copies the run.
 */
START_TEST(a_run_takes_writes_within_its_span_and_no_further)
{
	const uint64_t base = UINT64_C(0x0101010101010101);
	static uint8_t real[CONTENT_PAGE_SIZE], mat[CONTENT_PAGE_SIZE];
	struct sim_content_store cs, copy;
	const struct sim_patched *e;
	uint64_t t = base, run;

	ck_assert_int_eq(sim_content_store_init(&cs), 0);
	content_fill(real, base);
	t = rewrite(&cs, t, 4000, content_fresh_value(0x10));
	t = rewrite(&cs, t, 4020, content_fresh_value(0x20));
	content_write(real, 4000, content_fresh_value(0x10));
	content_write(real, 4020, content_fresh_value(0x20));
	ck_assert(sim_content_has_entry(t));
	e = &cs.entry[t - SIM_TOKEN_PATCHED];
	ck_assert(sim_patched_spilled(e));

	ck_assert(sim_content_write_in_place(&cs, t, 4010, content_fresh_value(0x30)));
	content_write(real, 4010, content_fresh_value(0x30));
	ck_assert(sim_patched_run(e));
	ck_assert_uint_eq(e->run->start, 4000);
	ck_assert_uint_eq(e->run->len, 32); /* bytes 4000-4027, to a word's end */
	ck_assert(sim_content_write_in_place(&cs, t, 4088, content_fresh_value(0x40)));
	content_write(real, 4088, content_fresh_value(0x40));
	ck_assert_uint_eq(e->run->len, 96);
	sim_content_materialize(&cs, t, mat);
	ck_assert_mem_eq(mat, real, CONTENT_PAGE_SIZE);
	ck_assert_uint_eq(sim_content_checksum(&cs, t), content_checksum(real));

	ck_assert_int_eq(sim_content_store_clone(&copy, &cs), 0);
	ck_assert(!sim_content_write_in_place(&cs, t, 3960, content_fresh_value(0x50)));
	sim_content_materialize(&cs, t, mat); /* refused: unchanged */
	ck_assert_mem_eq(mat, real, CONTENT_PAGE_SIZE);
	run = t;
	t = rewrite(&cs, t, 3960, content_fresh_value(0x50));
	ck_assert(sim_patched_spilled(&cs.entry[t - SIM_TOKEN_PATCHED]));
	sim_content_materialize(&copy, run, mat); /* the clone's run, as it was */
	ck_assert_mem_eq(mat, real, CONTENT_PAGE_SIZE);
	content_write(real, 3960, content_fresh_value(0x50));
	sim_content_materialize(&cs, t, mat);
	ck_assert_mem_eq(mat, real, CONTENT_PAGE_SIZE);

	sim_content_unref(&cs, t);
	for (uint32_t i = 1; i < cs.nentries; i++)
		ck_assert_uint_eq(cs.entry[i].refs, 0);
	sim_content_store_free(&cs);
	sim_content_store_free(&copy);
}
END_TEST

/*
 * An inline content of a fresh value's (its 8 bytes in the entry) turns
 * into a run at its next write in place, its window among the run's bytes,
 * and hashes as the same bytes reached the general way.
 */
START_TEST(an_inline_window_becomes_a_run_at_a_write_in_place)
{
	const uint64_t base = UINT64_C(0x0101010101010101);
	const uint64_t huge = CONTENT_FRESH_BASE | (SIM_WORD_COUNT_MASK + 1); /* no word token */
	static uint8_t real[CONTENT_PAGE_SIZE], mat[CONTENT_PAGE_SIZE];
	struct sim_content_store cs;
	const struct sim_patched *e;
	uint64_t t, other;

	ck_assert_int_eq(sim_content_store_init(&cs), 0);
	content_fill(real, base);
	t = rewrite(&cs, base, 4003, huge);
	content_write(real, 4003, huge);
	ck_assert(sim_content_has_entry(t));
	e = &cs.entry[t - SIM_TOKEN_PATCHED];
	ck_assert(!sim_patched_spilled(e) && !sim_patched_run(e));

	ck_assert(sim_content_write_in_place(&cs, t, 4030, content_fresh_value(0x77)));
	content_write(real, 4030, content_fresh_value(0x77));
	ck_assert(sim_patched_run(e));
	ck_assert_uint_eq(e->run->start, 4000);
	ck_assert_uint_eq(e->run->len, 40); /* bytes 4000-4039: whole words */
	sim_content_materialize(&cs, t, mat);
	ck_assert_mem_eq(mat, real, CONTENT_PAGE_SIZE);
	/* the same bytes written the general way, as new contents */
	other = rewrite(&cs, rewrite(&cs, base, 4003, huge), 4030, content_fresh_value(0x77));
	ck_assert(!sim_patched_run(&cs.entry[other - SIM_TOKEN_PATCHED]));
	ck_assert_uint_eq(sim_content_bytes_hash(&cs, t), sim_content_bytes_hash(&cs, other));
	ck_assert_int_eq(sim_content_cmp(&cs, t, other), 0);
	sim_content_unref(&cs, other);
	sim_content_unref(&cs, t);
	sim_content_store_free(&cs);
}
END_TEST

START_TEST(clone_is_independent)
{
	struct sim_content_store cs, copy;
	uint64_t t;

	ck_assert_int_eq(sim_content_store_init(&cs), 0);
	t = sim_content_after_write(&cs, 9, 8, 1);
	sim_content_ref(&cs, t);
	ck_assert_int_eq(sim_content_store_clone(&copy, &cs), 0);
	sim_content_unref(&cs, t);
	sim_content_store_free(&cs);
	ck_assert_uint_eq(sim_content_byte(&copy, t, 8), 1);
	ck_assert_uint_eq(sim_content_byte(&copy, t, 16), 9);
	sim_content_unref(&copy, t);
	sim_content_store_free(&copy);
}
END_TEST

/* --- red-black trees ------------------------------------------------------- */

struct tnode {
	struct rb_links rb;
	uint32_t key;
	int in;
};

static struct rb_layout layout_of(struct tnode *nodes)
{
	return (struct rb_layout){ (char *)nodes, sizeof(struct tnode), offsetof(struct tnode, rb) };
}

/*
 * Black height of the subtree, or -1 when an invariant is broken (parent
 * links, order, no red-red, equal black heights). Counts nodes in *count.
 * Plain C checks: a ck_assert per node would make the test slow.
 */
static int check_subtree(const struct rb_layout *l, struct tnode *nodes, uint32_t n,
			 uint32_t parent, uint32_t lo, uint32_t hi, int *count)
{
	int left, right;
	struct rb_links *x;

	if (n == RB_NIL)
		return 1;
	x = rb_at(l, n);
	if (x->parent != parent || nodes[n].key < lo || nodes[n].key > hi)
		return -1;
	if (!x->black && ((x->left != RB_NIL && !rb_at(l, x->left)->black) ||
			  (x->right != RB_NIL && !rb_at(l, x->right)->black)))
		return -1;
	(*count)++;
	left = check_subtree(l, nodes, x->left, n, lo, nodes[n].key, count);
	right = check_subtree(l, nodes, x->right, n, nodes[n].key, hi, count);
	if (left < 0 || right < 0 || left != right)
		return -1;
	return left + x->black;
}

static void insert_key(struct tnode *nodes, uint32_t *root, uint32_t id)
{
	struct rb_layout l = layout_of(nodes);
	uint32_t n = *root, parent = RB_NIL;
	int left = 0;

	while (n != RB_NIL) {
		parent = n;
		left = nodes[id].key < nodes[n].key;
		n = left ? rb_at(&l, n)->left : rb_at(&l, n)->right;
	}
	rb_insert(&l, root, id, parent, left);
	nodes[id].in = 1;
}

START_TEST(random_inserts_and_erases_keep_the_invariants)
{
	enum { N = 600 };
	static struct tnode nodes[N + 2];
	struct rb_layout l = layout_of(nodes);
	struct wl_rng rng = wl_rng_stream(3, 3);
	uint32_t root = RB_NIL;
	int live = 0;

	memset(nodes, 0, sizeof(nodes));
	for (uint32_t i = 1; i <= N; i++)
		nodes[i].key = (uint32_t)wl_rng_below(&rng, 1000);
	for (int round = 0; round < 5000; round++) {
		uint32_t id = 1 + (uint32_t)wl_rng_below(&rng, N);
		int count = 0;

		if (nodes[id].in) {
			rb_erase(&l, &root, id);
			nodes[id].in = 0;
			live--;
		} else {
			insert_key(nodes, &root, id);
			live++;
		}
		if (root != RB_NIL) {
			ck_assert(rb_at(&l, root)->black);
			ck_assert_uint_eq(rb_at(&l, root)->parent, RB_NIL);
		}
		if (check_subtree(&l, nodes, root, RB_NIL, 0, UINT32_MAX, &count) < 0 ||
		    count != live)
			ck_abort_msg("tree broken after round %d", round);
	}
}
END_TEST

START_TEST(ascending_inserts_give_the_kernels_shape)
{
	/*
	 * keys 1..7 inserted in order, worked through the kernel's cases by
	 * hand: 2 black at the root, 1 black on its left, 4 red on its right
	 * with 3 black and 6 black below, and 5, 7 red under 6
	 */
	static struct tnode nodes[9];
	struct rb_layout l = layout_of(nodes);
	uint32_t root = RB_NIL;

	memset(nodes, 0, sizeof(nodes));
	for (uint32_t i = 1; i <= 7; i++) {
		nodes[i].key = i;
		insert_key(nodes, &root, i);
	}
	ck_assert_uint_eq(root, 2);
	ck_assert_uint_eq(rb_at(&l, 2)->left, 1);
	ck_assert_uint_eq(rb_at(&l, 2)->right, 4);
	ck_assert_uint_eq(rb_at(&l, 4)->left, 3);
	ck_assert_uint_eq(rb_at(&l, 4)->right, 6);
	ck_assert_uint_eq(rb_at(&l, 6)->left, 5);
	ck_assert_uint_eq(rb_at(&l, 6)->right, 7);
	ck_assert(rb_at(&l, 1)->black && !rb_at(&l, 4)->black);
	ck_assert(rb_at(&l, 3)->black && rb_at(&l, 6)->black);
	ck_assert(!rb_at(&l, 5)->black && !rb_at(&l, 7)->black);
	/*
	 * erasing the root: its successor 3 takes its place, and the repair
	 * rotates left at 4 (case 4): 6 red over 4 black (5 red under it) and 7
	 */
	rb_erase(&l, &root, 2);
	ck_assert_uint_eq(root, 3);
	ck_assert_uint_eq(rb_at(&l, 3)->left, 1);
	ck_assert_uint_eq(rb_at(&l, 3)->right, 6);
	ck_assert_uint_eq(rb_at(&l, 6)->left, 4);
	ck_assert_uint_eq(rb_at(&l, 6)->right, 7);
	ck_assert_uint_eq(rb_at(&l, 4)->right, 5);
	ck_assert(!rb_at(&l, 6)->black && rb_at(&l, 4)->black && rb_at(&l, 7)->black);
	ck_assert(!rb_at(&l, 5)->black);
	ck_assert_uint_eq(rb_first(&l, root), 1);
}
END_TEST

START_TEST(replace_keeps_the_shape)
{
	static struct tnode nodes[6];
	struct rb_layout l = layout_of(nodes);
	uint32_t root = RB_NIL;

	memset(nodes, 0, sizeof(nodes));
	for (uint32_t i = 1; i <= 3; i++) {
		nodes[i].key = i * 10;
		insert_key(nodes, &root, i);
	}
	nodes[5].key = 20;
	rb_replace(&l, &root, 2, 5);
	ck_assert_uint_eq(root, 5);
	ck_assert_uint_eq(rb_at(&l, 5)->left, 1);
	ck_assert_uint_eq(rb_at(&l, 1)->parent, 5);
	ck_assert_uint_eq(rb_at(&l, 3)->parent, 5);
}
END_TEST

static Suite *sim_content_suite(void)
{
	Suite *s = suite_create("sim_content");
	TCase *tc = tcase_create("content");

	tcase_add_test(tc, plain_checksum_equals_xxh64_of_the_bytes);
	tcase_add_test(tc, four_plain_checksums_equal_xxh64_of_the_bytes);
	tcase_add_test(tc, tokens_agree_with_real_bytes);
	tcase_add_test(tc, fresh_writes_compare_by_bytes_not_by_token);
	tcase_add_test(tc, inline_and_spilled_patches_agree_with_real_bytes);
	tcase_add_test(tc, is_base_with_answers_as_the_bytes_do);
	tcase_add_test(tc, writes_in_place_agree_with_new_contents);
	tcase_add_test(tc, writing_the_old_bytes_back_restores_the_plain_token);
	tcase_add_test(tc, overwriting_every_word_gives_the_other_plain_token);
	tcase_add_test(tc, equal_bytes_from_different_bases_share_one_token);
	tcase_add_test(tc, a_fresh_write_over_a_plain_page_needs_no_entry);
	tcase_add_test(tc, past_the_sites_a_fresh_write_makes_an_entry);
	tcase_add_test(tc, a_run_takes_writes_within_its_span_and_no_further);
	tcase_add_test(tc, an_inline_window_becomes_a_run_at_a_write_in_place);
	tcase_add_test(tc, clone_is_independent);
	suite_add_tcase(s, tc);
	tc = tcase_create("rbtree");
	tcase_add_test(tc, random_inserts_and_erases_keep_the_invariants);
	tcase_add_test(tc, ascending_inserts_give_the_kernels_shape);
	tcase_add_test(tc, replace_keeps_the_shape);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sim_content_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
