/*
 * sim_content.h - compact page contents for the simulator.
 *
 * A page's content is a 64-bit token. A token below SIM_TOKEN_PATCHED is a
 * plain workload value V (the page holds V's repeated word, content.h); a
 * token at or above it names a "patched" content: a base value plus the bytes
 * where the page differs from it. Equal tokens are equal bytes; equal bytes
 * are one token except where a write stored a fresh value, whose content
 * is kept out of the intern table (nothing was ever written with those bytes
 * before, and looking costs two cache misses a write): so every comparison
 * goes by bytes (sim_content_cmp), never by token. Descriptions are
 * canonical: a write that restores the base bytes drops the patch, a patched
 * page whose bytes become uniform turns back into a plain token, and the
 * other patched contents are interned by a hash of their bytes that does not
 * depend on how they were reached.
 *
 * The store answers what KSM asks of page bytes without materializing them:
 * memcmp order (sim_content_cmp), the kernel's checksum, and the result of a
 * write. It is a value inside struct sim (cloned, freed, hashed with it).
 * Patched contents are reference-counted by the frames that hold them. Fresh
 * values (content_fresh_value) must stay below 2^62 counts.
 *
 * The commonest patched content of a volatile host, a fresh value written
 * over a plain page, needs no entry at all: its token (a word token, at or
 * above SIM_TOKEN_WORD) names a site of the store (the plain base and the
 * write's offset, one of SIM_WORD_SITES, taken on first use and kept) and
 * the fresh value's count. Such contents are not reference-counted; when
 * the sites are taken, or the count does not fit, the write makes an entry.
 *
 * Size matters (one entry per patched page of a large host): an entry is 32
 * bytes. A write changes at most 8 contiguous bytes, so most patched contents
 * fit an 8-byte window kept inside the entry; only contents whose differing
 * bytes span more than 8 bytes spill into an allocated array. A spilled
 * content that a write may rewrite in place (unlisted, one frame) becomes a
 * run when its bytes span at most SIM_RUN_MAX: the page's bytes over that
 * span as they are, 1 byte a byte where the sorted array takes 3 a patch
 * and a search for the write's place. The checksum is
 * not stored (frames cache it), and the intern table is open-addressed, so
 * entries carry no chain links: 8 to 16 bytes of table per content (an id
 * and the hash's low bits, so that a probe never reads an entry).
 */
#ifndef KSMKIT_SIM_CONTENT_H
#define KSMKIT_SIM_CONTENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wl_policy.h"

#define SIM_TOKEN_PATCHED (UINT64_C(3) << 62)
/* Word tokens: SIM_TOKEN_WORD | site << SIM_WORD_SITE_SHIFT | fresh count. */
#define SIM_TOKEN_WORD (UINT64_C(7) << 61)
#define SIM_WORD_SITES 8u
#define SIM_WORD_SITE_SHIFT 57
#define SIM_WORD_COUNT_MASK ((UINT64_C(1) << SIM_WORD_SITE_SHIFT) - 1)
_Static_assert(SIM_WORD_SITES <= 1u << (61 - SIM_WORD_SITE_SHIFT), "a word token's site field");

/* One differing byte of a patched content. */
struct __attribute__((packed)) sim_patch_byte {
	uint16_t offset;
	uint8_t byte;
};

/* Bytes of the inline window; a content spills when its patches span more. */
#define SIM_PATCH_WINDOW 8u
/* sim_patched.start of a content whose patches are in an allocated array. */
#define SIM_PATCH_SPILLED UINT16_MAX
/* sim_patched.start of a content whose bytes are a run (struct sim_patch_run). */
#define SIM_PATCH_RUN (UINT16_MAX - 1)
/* Bytes a run spans at most; a view of any content decodes up to this many patches. */
#define SIM_RUN_MAX 128u
#define SIM_PATCH_VIEW SIM_RUN_MAX

/*
 * The bytes of a run content from @start, base bytes among them: the bytes
 * outside [start, start + len) are the base's. It holds whole aligned words
 * (start and len multiples of 8, so that a write reads and writes the words
 * the byte hash sums); its first and last bytes need not differ from the
 * base; npatch counts the bytes that do.
 */
struct sim_patch_run {
	uint16_t start;
	uint16_t len;               /* 8 to SIM_RUN_MAX */
	uint8_t byte[];
};

struct sim_patched {
	uint64_t base;              /* the value whose word fills unpatched bytes;
				     * in a free slot, the next free slot */
	union {
		uint64_t window;    /* inline: the page's 8 bytes at start (little-endian) */
		struct sim_patch_byte *patch; /* spilled: sorted by offset */
		struct sim_patch_run *run;    /* a run */
	};
	uint64_t bytes_hash;        /* representation-independent hash of the bytes */
	uint32_t refs;              /* frames holding it (bits 0-30); bit 31 set:
				     * not in the intern table; 0 = free slot */
	uint16_t npatch;            /* bytes differing from base; 0 only in a free slot */
	uint16_t start;             /* inline: the window's offset; or SIM_PATCH_SPILLED,
				     * SIM_PATCH_RUN */
};

/*
 * A slot of the intern table: the entry and the low 32 bits of its bytes'
 * hash, so that probing and deleting read the table alone, not the entries
 * (each entry read is a cache miss on a large host).
 */
struct sim_bucket {
	uint32_t id;                /* entry id, 0 = empty */
	uint32_t hash;              /* (uint32_t)entry[id].bytes_hash */
};

/* Where word tokens' fresh values are written: a plain base and an offset. */
struct sim_word_site {
	uint64_t base;
	uint64_t base_hash;         /* byte hash of the base's uniform page */
	uint32_t offset;            /* of the written bytes, 0 to 4088 */
};

struct sim_content_store {
	struct sim_patched *entry;  /* [1, nentries): entry 0 unused */
	uint32_t nentries, cap;
	uint32_t free_head;         /* free entry list through base */
	struct sim_bucket *bucket;  /* intern table: linear probing */
	uint32_t nbuckets;          /* power of two, at most 3/4 full */
	uint32_t live;
	uint64_t weight_sum;        /* byte hash: the sum of the words' weights */
	uint32_t nsites;            /* sites taken, never given back */
	struct sim_word_site site[SIM_WORD_SITES];
};

int sim_content_store_init(struct sim_content_store *cs);
void sim_content_store_free(struct sim_content_store *cs);
int sim_content_store_clone(struct sim_content_store *dst, const struct sim_content_store *src);

/* Is the content other than a plain value (an entry's or a word token)? */
static inline bool sim_content_is_patched(uint64_t token)
{
	return token >= SIM_TOKEN_PATCHED;
}

/* Does the content live in an entry (patched, and not a word token)? */
static inline bool sim_content_has_entry(uint64_t token)
{
	return token >= SIM_TOKEN_PATCHED && token < SIM_TOKEN_WORD;
}

/*
 * The top bit of sim_patched.refs marks a content kept out of the intern
 * table (a fresh value's write, sim_content_after_write); the bits below
 * count the frames that hold it.
 */
#define SIM_REFS_UNLISTED (UINT32_C(1) << 31)

/* Is the entry in the intern table? */
static inline bool sim_patched_listed(const struct sim_patched *e)
{
	return !(e->refs & SIM_REFS_UNLISTED);
}

/*
 * Prefetch hints for a coming write to a frame holding @token: stage 0 the
 * token's entry, stage 1 (after 0 has had time) the entry's intern bucket
 * and its patches. always_inline: GCC takes a function of prefetches alone
 * for pure and drops its calls.
 */
static inline __attribute__((always_inline)) void
sim_content_prefetch(const struct sim_content_store *cs, uint64_t token, unsigned stage)
{
	const struct sim_patched *e;

	if (!sim_content_has_entry(token))
		return;
	e = &cs->entry[token - SIM_TOKEN_PATCHED];
	if (stage == 0) {
		__builtin_prefetch(e, 1);
		return;
	}
	if (sim_patched_listed(e))
		__builtin_prefetch(&cs->bucket[(uint32_t)e->bytes_hash & (cs->nbuckets - 1)], 1);
	if (e->start == SIM_PATCH_SPILLED) /* the patches the write copies */
		for (uint32_t b = 0; b < e->npatch * sizeof(*e->patch) && b < 512; b += 64)
			__builtin_prefetch((const char *)e->patch + b);
	else if (e->start == SIM_PATCH_RUN) /* the run, as far as it can reach */
		for (uint32_t b = 0; b < sizeof(*e->run) + SIM_RUN_MAX; b += 64)
			__builtin_prefetch((const char *)e->run + b, 1);
}

/* Does the entry keep its patches in an allocated array (e->patch)? */
static inline bool sim_patched_spilled(const struct sim_patched *e)
{
	return e->start == SIM_PATCH_SPILLED;
}

/* Are the entry's bytes a run (e->run)? */
static inline bool sim_patched_run(const struct sim_patched *e)
{
	return e->start == SIM_PATCH_RUN;
}

/* Does the entry own an allocated block (a spilled array or a run)? */
static inline bool sim_patched_owns_block(const struct sim_patched *e)
{
	return e->start >= SIM_PATCH_RUN;
}

/*
 * A run's block has room for SIM_RUN_MAX bytes whatever its len, so that a
 * write that widens it moves its bytes instead of reallocating (Nai Xia's
 * runs widen a few times each, and the churn was 7% of the run).
 */
#define SIM_RUN_BLOCK_BYTES (sizeof(struct sim_patch_run) + SIM_RUN_MAX)

/* The bytes to allocate for a block of @e whose used size is @used. */
static inline size_t sim_patched_block_room(const struct sim_patched *e, size_t used)
{
	return sim_patched_spilled(e) ? used : SIM_RUN_BLOCK_BYTES;
}

/* The size of the block of @e (spilled or a run) whose bytes are at @block. */
static inline size_t sim_patched_block_bytes(const struct sim_patched *e, const void *block)
{
	struct sim_patch_run head;

	if (sim_patched_spilled(e))
		return (size_t)e->npatch * sizeof(struct sim_patch_byte);
	__builtin_memcpy(&head, block, sizeof(head)); /* @block may be unaligned */
	return sizeof(head) + head.len;
}

/*
 * The content as base value + sorted differing bytes: returns how many, sets
 * *base and *patch. *patch points into the store (valid until it changes) or
 * into @buf (an inline window or a run, decoded). A plain token has no patches.
 */
uint32_t sim_content_patches(const struct sim_content_store *cs, uint64_t token, uint64_t *base,
			     struct sim_patch_byte buf[SIM_PATCH_VIEW],
			     const struct sim_patch_byte **patch);

/*
 * Is the content exactly @base with the @n sorted differing bytes @patch
 * (a canonical description: none of them equal to @base's byte there)?
 * What sim_content_patches() would answer compared, without decoding an
 * inline window.
 */
bool sim_content_is_base_with(const struct sim_content_store *cs, uint64_t token, uint64_t base,
			      const struct sim_patch_byte *patch, uint32_t n);


/* A frame starts or stops holding @token (patched contents are counted). */
void sim_content_ref(struct sim_content_store *cs, uint64_t token);
void sim_content_unref(struct sim_content_store *cs, uint64_t token);

/* One write of a word: @value's 8 little-endian bytes at @offset. */
struct sim_page_write {
	uint32_t offset;
	uint64_t value;
};

/*
 * Store a fresh @value's 8 little-endian bytes at @offset of @token's bytes in
 * place, when that needs no new content: @token is an unlisted entry that one
 * frame holds (so the write's frame is its only holder), spilled or a run.
 * A spilled entry whose bytes and the write's span at most SIM_RUN_MAX
 * becomes a run first; a run takes any write that leaves it within that
 * span and some byte still differing from the base; a spilled entry that
 * cannot become a run takes a write whose eight bytes are all patched
 * already, before and after (its patched offsets stay). True when done (the
 * frame's cached checksum is the caller's to drop); false, with the bytes
 * unchanged, when the write needs sim_content_after_write().
 */
bool sim_content_write_in_place(struct sim_content_store *cs, uint64_t token, uint32_t offset,
				uint64_t value);

/*
 * sim_content_write_in_place() of @w[0], @w[1], ... in turn, while each is
 * done: returns how many were (the first that is not is left to
 * sim_content_after_write(), the ones after it to another call). One call
 * for a page's writes instead of one a write: ten million a simulated second
 * in Nai Xia's experiment.
 */
size_t sim_content_write_many_in_place(struct sim_content_store *cs, uint64_t token,
				       const struct sim_page_write *w, size_t n);

/*
 * The token of @token's bytes after storing @value's 8 little-endian bytes at
 * @offset. The result is not referenced yet: the caller refs it. Returns
 * UINT64_MAX when out of memory.
 */
uint64_t sim_content_after_write(struct sim_content_store *cs, uint64_t token, uint32_t offset,
			     uint64_t value);

/* memcmp order of the two contents' bytes: <0, 0, >0. */
int sim_content_cmp(const struct sim_content_store *cs, uint64_t a, uint64_t b);

/* The same, and how many bytes memcmp reads: first difference + 1, or 4096. */
int sim_content_cmp_bytes(const struct sim_content_store *cs, uint64_t a, uint64_t b,
			  uint32_t *bytes);

/* Plain contents: the bytes memcmp reads (their order is content_value_cmp). */
static inline uint32_t sim_plain_cmp_bytes(uint64_t a, uint64_t b)
{
	return a == b ? 4096u : (uint32_t)__builtin_ctzll(a ^ b) / 8 + 1;
}

/* The checksums of two plain contents (tokens below SIM_TOKEN_PATCHED). */
void sim_plain_checksums(uint64_t a, uint64_t b, uint32_t *ca, uint32_t *cb);

/* The checksums of @n (1 to SIM_CHECKSUM_BATCH) plain contents at once:
 * four per AVX-512 pass where the CPU has it, else two per scalar pass. */
#define SIM_CHECKSUM_BATCH 4u
void sim_plain_checksums_batch(const uint64_t *word, unsigned n, uint32_t *sum);

/* The kernel's checksum of the content: the low 32 bits of xxh64 over its
 * 4096 bytes (a patched page is materialized for it). */
uint32_t sim_content_checksum(struct sim_content_store *cs, uint64_t token);

/*
 * The checksum of the content as @kind computes it (computed: callers cache
 * it). WL_CHECKSUM_XXH64 is sim_content_checksum(). WL_CHECKSUM_CONTENT is
 * 32 bits of a bijective mix of a plain token's value or a patched content's
 * byte hash (sim_content_bytes_hash), both canonical names of the bytes:
 * equal bytes give equal checksums, always; two
 * distinct contents collide with a chance of about 2^-32, the same as the
 * kernel's 32 bits of xxh64 (the byte hash itself collides far less often).
 */
uint32_t sim_content_checksum_as(struct sim_content_store *cs, uint64_t token,
				 enum wl_checksum kind);

/* Byte @offset of the content. */
uint8_t sim_content_byte(const struct sim_content_store *cs, uint64_t token, uint32_t offset);

/* Hash of the bytes, equal for equal bytes whatever the tokens (for sim_hash). */
uint64_t sim_content_bytes_hash(const struct sim_content_store *cs, uint64_t token);

/* Write the 4096 bytes of the content into @page. */
void sim_content_materialize(const struct sim_content_store *cs, uint64_t token, void *page);

#endif
