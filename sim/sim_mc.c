/*
 * sim_mc.c - the model checker's fast paths over the simulated machine:
 * copying one machine into another without allocating (sim_clone_into) and
 * flat snapshots a search frontier holds by the million (sim_mc.h).
 *
 * Both copy memory as it lies: the struct sim without the pool pointers and
 * the roots of nodes the configuration lacks, then the used part of every
 * pool that SIM_POOLS (sim_fields.h) lists, then the content store. What the
 * state means field by field is sim_fields.h's business; that the copies
 * keep it is check_mc's (sim_equal before and after).
 */
#include "sim_fields.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "sim_mc.h"

/*
 * memcpy for the tens to hundreds of bytes a small machine's pool holds: up
 * to 256 bytes, a call into libc (and its dispatch on the size) costs as
 * much as the copy, and clones are what the model checker does most; libc's
 * vector code wins beyond. 32 bytes a move, the last one overlapping the
 * one before; gcc must not turn the loop back into a call (KEEP_LOOP).
 */
#if defined(__GNUC__) && !defined(__clang__)
#define KEEP_LOOP __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define KEEP_LOOP
#endif
static inline __attribute__((always_inline)) KEEP_LOOP
void copy_bytes(void *dst, const void *src, size_t n)
{
	char *d = dst;
	const char *s = src;

	if (n > 256) {
		memcpy(d, s, n);
	} else if (n >= 32) {
		size_t i;

		for (i = 0; i + 32 <= n; i += 32)
			__builtin_memcpy(d + i, s + i, 32);
		if (i < n)
			__builtin_memcpy(d + n - 32, s + n - 32, 32);
	} else if (n >= 8) {
		for (size_t i = 0; i + 8 <= n; i += 8)
			__builtin_memcpy(d + i, s + i, 8);
		__builtin_memcpy(d + n - 8, s + n - 8, 8);
	} else {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	}
}

/*
 * Copy @n elements of @size bytes from @src into *@dst, growing it (and
 * *@cap) when it is too small. Elements past @n keep whatever they held: the
 * pool allocators initialize an element when they hand it out.
 */
static inline __attribute__((always_inline)) int copy_pool(void **dst, uint32_t *cap,
							  const void *src, uint32_t n, size_t size)
{
	if (n > *cap) {
		void *p = realloc(*dst, (size_t)n * size);

		if (!p)
			return -1;
		*dst = p;
		*cap = n;
	}
	copy_bytes(*dst, src, (size_t)n * size);
	return 0;
}

/* Give @e (a copy of a spilled or run entry whose block is @src, @need
 * bytes) a block of its own, reusing @old when it is large enough. */
static int own_block(struct sim_patched *e, void *old, const void *src, size_t need)
{
	size_t room = sim_patched_block_room(e, need);

	if (!old || malloc_usable_size(old) < room) {
		void *p = realloc(old, room);

		if (!p) {
			free(old);
			/* no block: a spilled entry of no patches, still freeable */
			e->patch = NULL;
			e->npatch = 0;
			e->start = SIM_PATCH_SPILLED;
			return -1;
		}
		old = p;
	}
	memcpy(old, src, need);
	e->patch = old;
	return 0;
}

/*
 * Make @dst's content store hold @hdr->nentries entries copied from @entries
 * (spilled and run ones with their blocks at entries[i].patch, or laid out
 * one after another from @stream when it is not NULL) and @hdr->nbuckets
 * buckets, reusing its memory.
 */
static int content_into(struct sim_content_store *dst, const struct sim_content_store *hdr,
			const struct sim_patched *entries, const struct sim_bucket *buckets,
			const char *stream)
{
	uint32_t old_n = dst->nentries, n = hdr->nentries, top = old_n > n ? old_n : n;
	int rc = 0;

	if (n > dst->cap) {
		struct sim_patched *p = realloc(dst->entry, (size_t)hdr->cap * sizeof(*p));

		if (!p)
			return -1; /* @dst is untouched */
		dst->entry = p;
		dst->cap = hdr->cap;
	}
	/*
	 * The fields one by one, not the struct: its lane weights are the same
	 * in every store, and only the sites taken need copying (a clone is
	 * what the model checker does most).
	 */
	dst->nentries = n;
	dst->free_head = hdr->free_head;
	dst->live = hdr->live;
	dst->nsites = hdr->nsites;
	for (uint32_t i = 0; i < hdr->nsites; i++)
		dst->site[i] = hdr->site[i];
	for (uint32_t i = 1; i < top; i++) {
		const void *src;
		void *old = NULL;
		size_t bytes;

		if (i < old_n && sim_patched_owns_block(&dst->entry[i]))
			old = dst->entry[i].patch;
		if (i >= n || !sim_patched_owns_block(&entries[i])) {
			if (old) /* only a spilled or run entry has a block: no free(NULL) per entry */
				free(old);
			if (i < n)
				dst->entry[i] = entries[i];
			continue;
		}
		src = stream ? (const void *)stream : (const void *)entries[i].patch;
		bytes = sim_patched_block_bytes(&entries[i], src);
		dst->entry[i] = entries[i];
		/* on failure the entry is left without a block: still freeable */
		if (own_block(&dst->entry[i], old, src, bytes) != 0)
			rc = -1;
		if (stream)
			stream += bytes;
	}
	if (n)
		memset(&dst->entry[0], 0, sizeof(dst->entry[0]));
	if (rc || copy_pool((void **)&dst->bucket, &dst->nbuckets, buckets, hdr->nbuckets,
			    sizeof(*buckets)) != 0)
		return -1;
	dst->nbuckets = hdr->nbuckets;
	return 0;
}

/* The pool pointers and capacities of @dst, kept across *dst = *src. */

/* The pool pointers and capacities of a machine, kept across a header copy. */
struct pools {
#define POOL_MEMBERS(p, cap, used, elem) __typeof__(((struct sim *)0)->p) p; uint32_t cap;
	SIM_POOLS(POOL_MEMBERS, s)
#undef POOL_MEMBERS
	struct sim_content_store content;
};

/* The pools of SIM_POOLS alone (a clone leaves the content store in place). */
static void pools_take_only(struct pools *keep, const struct sim *s)
{
#define TAKE_POOL(p, cap, used, elem) keep->p = s->p; keep->cap = s->cap;
	SIM_POOLS(TAKE_POOL, s)
#undef TAKE_POOL
}

static void pools_give_only(struct sim *s, const struct pools *keep)
{
#define GIVE_POOL(p, cap, used, elem) s->p = keep->p; s->cap = keep->cap;
	SIM_POOLS(GIVE_POOL, s)
#undef GIVE_POOL
}

/* ... and the content store with them, across a header load that overwrites it. */
static void pools_take(struct pools *keep, const struct sim *s)
{
	pools_take_only(keep, s);
	keep->content = s->content;
}

static void pools_give(struct sim *s, const struct pools *keep)
{
	pools_give_only(s, keep);
	s->content = keep->content;
}

/* Where the used part of each pool to copy lies. */
struct pool_source {
#define SOURCE_MEMBER(p, cap, used, elem) const void *p;
	SIM_POOLS(SOURCE_MEMBER, s)
#undef SOURCE_MEMBER
};

/* Copy the pools' used parts (as @dst's counts say) from @src into @dst's buffers. */
static int pools_copy(struct sim *dst, const struct pool_source *src)
{
#define COPY_POOL(p, cap, used, elem) \
	if (copy_pool((void **)&dst->p, &dst->cap, src->p, used, elem) != 0) \
		return -1;
	SIM_POOLS(COPY_POOL, dst)
#undef COPY_POOL
	return 0;
}

/*
 * The struct sim itself without what a machine of the same configuration
 * already holds (sim_mc.h's precondition): the config, and the tree roots of
 * nodes that do not exist (RB_NIL: unstable roots are reset for every node,
 * stable ones are never set). Three spans, the live roots in the middle.
 */
#define SIM_HEAD_START offsetof(struct sim, knobs)
#define SIM_HEAD_END offsetof(struct sim, stable_root)
#define SIM_TAIL_START offsetof(struct sim, content)
_Static_assert(offsetof(struct sim, cfg) == 0 &&
	       SIM_HEAD_START < sizeof(struct sim_config) + sizeof(uint64_t),
	       "struct sim must start with cfg, then knobs");
_Static_assert(offsetof(struct sim, unstable_root) == SIM_HEAD_END + SIM_MAX_NODES * 4 &&
	       SIM_TAIL_START >= SIM_HEAD_END + 2 * SIM_MAX_NODES * 4 &&
	       SIM_TAIL_START < SIM_HEAD_END + 2 * SIM_MAX_NODES * 4 + sizeof(uint64_t),
	       "struct sim: stable_root, unstable_root, content must follow each other");

static size_t header_bytes(const struct sim *s)
{
	return SIM_HEAD_END - SIM_HEAD_START + 2 * s->cfg.nr_nodes * sizeof(uint32_t) +
	       (sizeof(struct sim) - SIM_TAIL_START);
}

static void header_save(const struct sim *s, char *at)
{
	size_t roots = s->cfg.nr_nodes * sizeof(uint32_t);

	memcpy(at, (const char *)s + SIM_HEAD_START, SIM_HEAD_END - SIM_HEAD_START);
	at += SIM_HEAD_END - SIM_HEAD_START;
	memcpy(at, s->stable_root, roots);
	memcpy(at + roots, s->unstable_root, roots);
	memcpy(at + 2 * roots, (const char *)s + SIM_TAIL_START, sizeof(*s) - SIM_TAIL_START);
}

/* The inverse of header_save(), into a machine of the same configuration. */
static void header_load(struct sim *s, const char *at)
{
	size_t roots = s->cfg.nr_nodes * sizeof(uint32_t);

	memcpy((char *)s + SIM_HEAD_START, at, SIM_HEAD_END - SIM_HEAD_START);
	at += SIM_HEAD_END - SIM_HEAD_START;
	memcpy(s->stable_root, at, roots);
	memcpy(s->unstable_root, at + roots, roots);
	memcpy((char *)s + SIM_TAIL_START, at + 2 * roots, sizeof(*s) - SIM_TAIL_START);
}

/* What follows the content store: the tail a clone copies (content_into does the store). */
#define SIM_AFTER_CONTENT (offsetof(struct sim, content) + sizeof(struct sim_content_store))

/* The header as header_save() writes it, but for the content store, which stays @dst's. */
static void header_copy(struct sim *dst, const struct sim *src)
{
	size_t roots = src->cfg.nr_nodes * sizeof(uint32_t);

	copy_bytes((char *)dst + SIM_HEAD_START, (const char *)src + SIM_HEAD_START,
		   SIM_HEAD_END - SIM_HEAD_START);
	copy_bytes(dst->stable_root, src->stable_root, roots);
	copy_bytes(dst->unstable_root, src->unstable_root, roots);
	copy_bytes((char *)dst + SIM_AFTER_CONTENT, (const char *)src + SIM_AFTER_CONTENT,
		   sizeof(*dst) - SIM_AFTER_CONTENT);
}

int sim_clone_into(struct sim *dst, const struct sim *src)
{
	struct pools keep;
	struct pool_source from = {
#define SOURCE_OF(p, cap, used, elem) .p = src->p,
		SIM_POOLS(SOURCE_OF, src)
#undef SOURCE_OF
	};

	if (dst == src)
		return 0;
	pools_take_only(&keep, dst);
	header_copy(dst, src);
	pools_give_only(dst, &keep);
	if (pools_copy(dst, &from) != 0)
		return -1;
	return content_into(&dst->content, &src->content, src->content.entry,
			    src->content.bucket, NULL);
}

int sim_copy_pages_and_frames(struct sim *dst, const struct sim *src)
{
	if (copy_pool((void **)&dst->page, &dst->slots_cap, src->page, src->nslots,
		      sizeof(*src->page)) != 0 ||
	    copy_pool((void **)&dst->frame, &dst->frames_cap, src->frame, src->nframes,
		      sizeof(*src->frame)) != 0 ||
	    copy_pool((void **)&dst->folio_seen, &dst->folios_cap, src->folio_seen,
		      SIM_FOLIOS(src->nframes), 1) != 0)
		return -1;
	dst->nslots = src->nslots;
	dst->nframes = src->nframes;
	return 0;
}

/* --- snapshots ----------------------------------------------------------------- */

/*
 * Snapshot layout, 8-byte aligned: this header, the struct sim (header_save;
 * pointers meaningless), the pools' used parts in SIM_POOLS order, the
 * content store's entries and buckets, then the spilled patches one after
 * another.
 */
struct snapshot {
	uint64_t size;
	uint32_t nr_nodes;
	uint32_t header_bytes;
};

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* The bytes of the spilled arrays and runs, laid out one after another. */
static uint64_t total_block_bytes(const struct sim_content_store *cs)
{
	uint64_t n = 0;

	for (uint32_t i = 1; i < cs->nentries; i++)
		if (sim_patched_owns_block(&cs->entry[i]))
			n += sim_patched_block_bytes(&cs->entry[i], cs->entry[i].patch);
	return n;
}

static size_t snapshot_bytes(const struct sim *s, uint64_t blocks)
{
	size_t n = align8(sizeof(struct snapshot)) + align8(header_bytes(s));

#define POOL_BYTES(p, cap, used, elem) n += align8((size_t)(used) * (elem));
	SIM_POOLS(POOL_BYTES, s)
#undef POOL_BYTES
	return n + align8((size_t)s->content.nentries * sizeof(*s->content.entry)) +
	       align8((size_t)s->content.nbuckets * sizeof(*s->content.bucket)) +
	       align8((size_t)blocks);
}

size_t sim_snapshot_size(const struct sim *s)
{
	return snapshot_bytes(s, total_block_bytes(&s->content));
}

static char *put_block(char *at, const void *src, size_t n)
{
	if (n)
		memcpy(at, src, n);
	return at + align8(n);
}

void sim_snapshot_save(const struct sim *s, void *buf)
{
	struct snapshot *h = buf;
	char *at = (char *)buf + align8(sizeof(*h));

	h->size = snapshot_bytes(s, total_block_bytes(&s->content));
	h->nr_nodes = s->cfg.nr_nodes;
	h->header_bytes = (uint32_t)header_bytes(s);
	header_save(s, at);
	at += align8(h->header_bytes);
#define SAVE_POOL(p, cap, used, elem) at = put_block(at, s->p, (size_t)(used) * (elem));
	SIM_POOLS(SAVE_POOL, s)
#undef SAVE_POOL
	at = put_block(at, s->content.entry, (size_t)s->content.nentries *
					     sizeof(*s->content.entry));
	at = put_block(at, s->content.bucket, (size_t)s->content.nbuckets *
					      sizeof(*s->content.bucket));
	for (uint32_t i = 1; i < s->content.nentries; i++) {
		const struct sim_patched *e = &s->content.entry[i];
		size_t n;

		if (!sim_patched_owns_block(e) ||
		    !(n = sim_patched_block_bytes(e, e->patch)))
			continue;
		memcpy(at, e->patch, n);
		at += n;
	}
}

int sim_snapshot_load(struct sim *dst, const void *buf)
{
	const struct snapshot *h = buf;
	const char *at = (const char *)buf + align8(sizeof(*h));
	const void *entries, *buckets;
	struct sim_content_store saved; /* the saved store's fields (its pointers are stale) */
	struct pool_source from;
	struct pools keep;

	pools_take(&keep, dst);
	header_load(dst, at);
	saved = dst->content;
	pools_give(dst, &keep);
	at += align8(h->header_bytes);
	/* the counts are the saved machine's now */
#define LOCATE_POOL(p, cap, used, elem) from.p = at; at += align8((size_t)(used) * (elem));
	SIM_POOLS(LOCATE_POOL, dst)
#undef LOCATE_POOL
	entries = at;
	at += align8((size_t)saved.nentries * sizeof(*saved.entry));
	buckets = at;
	at += align8((size_t)saved.nbuckets * sizeof(*saved.bucket));
	if (pools_copy(dst, &from) != 0)
		return -1;
	return content_into(&dst->content, &saved, entries, buckets, at);
}
