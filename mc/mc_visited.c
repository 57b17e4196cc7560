/*
 * mc_visited.c - the visited-state set of mc_visited.h: fingerprints are
 * already uniform 64-bit hashes, so their low bits index the table directly,
 * and key and number share a 16-byte slot (one cache miss per lookup). The
 * table lives in huge pages (mc_mem.h).
 */
#include "config.h"
#include "mc_visited.h"
#include "mc_mem.h"

int mc_visited_init(struct mc_visited *v, size_t expected)
{
	size_t cap = 1024;

	while (cap < expected + expected / 3)
		cap *= 2;
	v->slot = mc_mem_alloc(cap * sizeof(*v->slot));
	v->cap = v->slot ? cap : 0;
	v->n = 0;
	return v->slot ? 0 : -1;
}

void mc_visited_free(struct mc_visited *v)
{
	mc_mem_free(v->slot, v->cap * sizeof(*v->slot));
	v->slot = NULL;
	v->cap = v->n = 0;
}

static size_t slot_of(const struct mc_visited *v, uint64_t key)
{
	size_t i = (size_t)key & (v->cap - 1);

	while (v->slot[i].key && v->slot[i].key != key)
		i = (i + 1) & (v->cap - 1);
	return i;
}

static int grow(struct mc_visited *v)
{
	struct mc_visited bigger;

	if (mc_visited_init(&bigger, v->cap) != 0)
		return -1;
	for (size_t i = 0; i < v->cap; i++)
		if (v->slot[i].key)
			bigger.slot[slot_of(&bigger, v->slot[i].key)] = v->slot[i];
	bigger.n = v->n;
	mc_visited_free(v);
	*v = bigger;
	return 0;
}

enum mc_visit mc_visited_add(struct mc_visited *v, uint64_t fp, uint32_t depth,
			     uint32_t *stored)
{
	uint64_t key = fp ? fp : 1;
	size_t i = slot_of(v, key);

	if (v->slot[i].key) {
		enum mc_visit r = MC_VISIT_SEEN;

		if (v->slot[i].depth > depth) {
			v->slot[i].depth = depth;
			r = MC_VISIT_SHALLOWER;
		}
		if (stored)
			*stored = v->slot[i].depth;
		return r;
	}
	if (4 * (v->n + 1) > 3 * v->cap) {
		if (grow(v) != 0)
			return MC_VISIT_OOM;
		i = slot_of(v, key);
	}
	v->slot[i].key = key;
	v->slot[i].depth = depth;
	v->n++;
	if (stored)
		*stored = depth;
	return MC_VISIT_NEW;
}

bool mc_visited_find(const struct mc_visited *v, uint64_t fp, uint32_t *depth)
{
	size_t i = slot_of(v, fp ? fp : 1);

	if (!v->slot[i].key)
		return false;
	*depth = v->slot[i].depth;
	return true;
}
