/*
 * wl_index.c - a hash index from names to positions, so that the parser finds
 * a section, a key, a region or a process by name in O(1) expected time and
 * stays linear in the size of a workload (wl_internal.h has the contract).
 *
 * It owns no keys: each slot holds a position in the caller's array and 32
 * bits of the key's hash (XXH64 of the name, seeded with its name space), and
 * the caller's callback compares the key itself. Linear probing in a table at
 * most half full, doubled as it fills; entries are never removed.
 */
#include "wl_internal.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define INITIAL_SLOTS 64

uint32_t wl_index_hash(uint64_t space, const char *name)
{
	uint64_t h = XXH64(name, strlen(name), space);

	return (uint32_t)(h ^ (h >> 32));
}

long wl_index_find(const struct wl_index *ix, uint32_t hash, wl_index_same same,
		   const void *ctx, const void *key)
{
	if (!ix->slot)
		return -1;
	for (size_t i = hash & ix->mask;; i = (i + 1) & ix->mask) {
		const struct wl_index_slot *s = &ix->slot[i];

		if (s->pos == 0)
			return -1;
		if (s->hash == hash && same(ctx, s->pos - 1, key))
			return (long)(s->pos - 1);
	}
}

/* Put @hash/@pos1 (position + 1) into the first free slot of its chain. */
static void place(struct wl_index_slot *slot, size_t mask, uint32_t hash, uint32_t pos1)
{
	size_t i = hash & mask;

	while (slot[i].pos != 0)
		i = (i + 1) & mask;
	slot[i].hash = hash;
	slot[i].pos = pos1;
}

/* Double the table (or make the first one), rehashing from the stored hashes. */
static int grow(struct wl_index *ix)
{
	size_t slots = ix->slot ? 2 * (ix->mask + 1) : INITIAL_SLOTS;
	struct wl_index_slot *slot = calloc(slots, sizeof(*slot));

	if (!slot)
		return -1;
	if (ix->slot)
		for (size_t i = 0; i <= ix->mask; i++)
			if (ix->slot[i].pos != 0)
				place(slot, slots - 1, ix->slot[i].hash, ix->slot[i].pos);
	free(ix->slot);
	ix->slot = slot;
	ix->mask = slots - 1;
	return 0;
}

int wl_index_add(struct wl_index *ix, uint32_t hash, size_t pos)
{
	if (pos >= UINT32_MAX)
		return -1;
	if ((!ix->slot || 2 * (ix->count + 1) > ix->mask + 1) && grow(ix) != 0)
		return -1;
	place(ix->slot, ix->mask, hash, (uint32_t)pos + 1);
	ix->count++;
	return 0;
}

void wl_index_free(struct wl_index *ix)
{
	free(ix->slot);
	memset(ix, 0, sizeof(*ix));
}
