/*
 * mc_mem.h - large zeroed buffers for the search (the visited set, the BFS
 * levels): anonymous mappings asked to use transparent huge pages, so that a
 * table of tens of MiB costs a few page faults instead of thousands, and
 * growth by mremap() instead of copying. Not installed.
 */
#ifndef KSMKIT_MC_MEM_H
#define KSMKIT_MC_MEM_H

#include <stddef.h>
#include <sys/mman.h>

#define MC_MEM_HUGE ((size_t)2 << 20)

static inline size_t mc_mem_round(size_t n)
{
	return (n + MC_MEM_HUGE - 1) & ~(MC_MEM_HUGE - 1);
}

/* @n zeroed bytes (rounded up to 2 MiB), or NULL. */
static inline void *mc_mem_alloc(size_t n)
{
	void *p = mmap(NULL, mc_mem_round(n), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, mc_mem_round(n), MADV_HUGEPAGE);
	return p;
}

/* Grow @p from @old to @n bytes, keeping its contents (the rest zeroed). */
static inline void *mc_mem_grow(void *p, size_t old, size_t n)
{
	void *q;

	if (!p)
		return mc_mem_alloc(n);
	q = mremap(p, mc_mem_round(old), mc_mem_round(n), MREMAP_MAYMOVE);
	if (q == MAP_FAILED)
		return NULL;
	madvise(q, mc_mem_round(n), MADV_HUGEPAGE);
	return q;
}

static inline void mc_mem_free(void *p, size_t n)
{
	if (p)
		munmap(p, mc_mem_round(n));
}

#endif
