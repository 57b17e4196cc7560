/*
 * wl_holes.c - the pages each process has unmapped from each region, as the
 * timeline check (wl_timeline.c) replays a workload: "is any page this step
 * touches gone, and which is the first?"
 *
 * Holes are arithmetic progressions. Runs of pages (all, N, A-B, every:1)
 * live in an ordered map from first page to last page, so a run of pages is
 * checked against all of a process's holes in O(log n); strided holes
 * (every:K with K > 1, rare) are kept in a list and checked one by one. Each
 * process finds its maps through an ordered map from region to maps.
 *
 * The maps are treaps (binary search trees balanced by random priorities)
 * whose nodes live in one array. They are persistent: a fork gives the child
 * its parent's maps in O(1), sharing every node, and a later unmap by either
 * copies only the nodes on its path. Nodes carry the stamp of the process
 * version that may change them in place, so a process that has not forked
 * since it made a node updates it without copying, and a workload without
 * forks uses one node per hole. Nothing is freed before the whole set is.
 */
#include "wl_internal.h"

#include <stdlib.h>
#include <string.h>

/* One tree node; index 0 is the empty tree. */
struct node {
	uint64_t key;      /* region map: region index; page map: first page */
	uint64_t value;    /* region map: page map root << 32 | stride list; page map: last page */
	uint32_t left, right;
	uint32_t priority; /* a heap on these keeps the tree balanced */
	uint32_t stamp;    /* the process version that may change it in place */
};

/* One strided hole in a list that is never changed, only extended at its head. */
struct stride {
	struct wl_progression pages;
	uint32_t next;     /* 0 ends the list */
};

struct wl_holes {
	struct node *node;
	size_t nnodes, node_cap;
	struct stride *stride;
	size_t nstrides, stride_cap;
	uint32_t *map;     /* [nprocs]: root of the process's region map */
	uint32_t *stamp;   /* [nprocs]: the process's current version */
	uint32_t next_stamp;
	uint32_t seed;     /* of the priorities */
	bool out_of_memory;
};

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* x with a*x == 1 (mod m), for gcd(a, m) == 1 and m > 1 (extended Euclid). */
static unsigned __int128 inverse_mod(unsigned __int128 a, unsigned __int128 m)
{
	__int128 t = 0, new_t = 1, r = (__int128)m, new_r = (__int128)(a % m);

	while (new_r != 0) {
		__int128 q = r / new_r, tmp;

		tmp = t - q * new_t, t = new_t, new_t = tmp;
		tmp = r - q * new_r, r = new_r, new_r = tmp;
	}
	return (unsigned __int128)(t < 0 ? t + (__int128)m : t);
}

bool wl_progressions_meet(const struct wl_progression *a, const struct wl_progression *b,
			  uint64_t *page)
{
	uint64_t lo = a->first > b->first ? a->first : b->first;
	uint64_t hi = a->last < b->last ? a->last : b->last;
	uint64_t g = gcd_u64(a->step, b->step), diff;
	unsigned __int128 m, k, x, lcm;

	if (lo > hi)
		return false;
	diff = b->first >= a->first ? b->first - a->first : a->first - b->first;
	if (diff % g != 0)
		return false;
	/* x = a.first + a.step * k with a.step * k == b.first - a.first (mod b.step) */
	m = b->step / g;
	k = 0;
	if (m > 1) {
		unsigned __int128 d = (unsigned __int128)((b->first + (m * g) - a->first % (m * g)) %
							   (m * g)) / g;

		k = d * inverse_mod(a->step / g, m) % m;
	}
	x = (unsigned __int128)a->first + (unsigned __int128)a->step * k;
	lcm = (unsigned __int128)(a->step / g) * b->step;
	if (x < lo)
		x += (lo - x + lcm - 1) / lcm * lcm;
	if (x > hi)
		return false;
	*page = (uint64_t)x;
	return true;
}

/* --- treaps -------------------------------------------------------------------- */

/* A well-mixed 32-bit value per call (a counter through a finalizer). */
static uint32_t next_priority(struct wl_holes *h)
{
	uint32_t x = h->seed += 0x9e3779b9u;

	x ^= x >> 16;
	x *= 0x85ebca6bu;
	x ^= x >> 13;
	x *= 0xc2b2ae35u;
	return x ^ (x >> 16);
}

/* A new leaf, or 0 with out_of_memory set. */
static uint32_t new_node(struct wl_holes *h, uint64_t key, uint64_t value, uint32_t stamp)
{
	if (h->nnodes == h->node_cap) {
		size_t cap = 2 * h->node_cap;
		struct node *grown = cap < UINT32_MAX ? realloc(h->node, cap * sizeof(*grown)) : NULL;

		if (!grown) {
			h->out_of_memory = true;
			return 0;
		}
		h->node = grown;
		h->node_cap = cap;
	}
	h->node[h->nnodes] = (struct node){ key, value, 0, 0, next_priority(h), stamp };
	return (uint32_t)h->nnodes++;
}

/* @t itself when @stamp may change it, else a copy that it may. */
static uint32_t own(struct wl_holes *h, uint32_t t, uint32_t stamp)
{
	uint32_t copy;

	if (h->node[t].stamp == stamp)
		return t;
	copy = new_node(h, 0, 0, stamp);
	if (!copy)
		return t;
	h->node[copy] = h->node[t];
	h->node[copy].stamp = stamp;
	return copy;
}

static uint32_t rotate_right(struct wl_holes *h, uint32_t t)
{
	uint32_t l = h->node[t].left;

	h->node[t].left = h->node[l].right;
	h->node[l].right = t;
	return l;
}

static uint32_t rotate_left(struct wl_holes *h, uint32_t t)
{
	uint32_t r = h->node[t].right;

	h->node[t].right = h->node[r].left;
	h->node[r].left = t;
	return r;
}

/*
 * The root of tree @t with @key mapped to @value, under @stamp. Only nodes
 * on the path are changed, each copied first unless @stamp owns it. On
 * running out of memory the tree is left unchanged and out_of_memory set.
 */
static uint32_t insert(struct wl_holes *h, uint32_t t, uint64_t key, uint64_t value,
		       uint32_t stamp)
{
	uint32_t child;

	if (t == 0)
		return new_node(h, key, value, stamp);
	t = own(h, t, stamp);
	if (h->out_of_memory)
		return t;
	if (key == h->node[t].key) {
		h->node[t].value = value;
		return t;
	}
	if (key < h->node[t].key) {
		child = insert(h, h->node[t].left, key, value, stamp);
		if (h->out_of_memory)
			return t;
		h->node[t].left = child;
		if (h->node[child].priority > h->node[t].priority)
			t = rotate_right(h, t);
	} else {
		child = insert(h, h->node[t].right, key, value, stamp);
		if (h->out_of_memory)
			return t;
		h->node[t].right = child;
		if (h->node[child].priority > h->node[t].priority)
			t = rotate_left(h, t);
	}
	return t;
}

/* The node of @t with @key, or 0. */
static uint32_t find(const struct wl_holes *h, uint32_t t, uint64_t key)
{
	while (t && h->node[t].key != key)
		t = key < h->node[t].key ? h->node[t].left : h->node[t].right;
	return t;
}

/* The node of @t with the greatest key <= @key, or 0. */
static uint32_t at_or_below(const struct wl_holes *h, uint32_t t, uint64_t key)
{
	uint32_t best = 0;

	while (t) {
		if (h->node[t].key <= key) {
			best = t;
			t = h->node[t].right;
		} else {
			t = h->node[t].left;
		}
	}
	return best;
}

/* The node of @t with the least key > @key, or 0. */
static uint32_t above(const struct wl_holes *h, uint32_t t, uint64_t key)
{
	uint32_t best = 0;

	while (t) {
		if (h->node[t].key > key) {
			best = t;
			t = h->node[t].left;
		} else {
			t = h->node[t].right;
		}
	}
	return best;
}

/* --- the set ------------------------------------------------------------------- */

struct wl_holes *wl_holes_new(size_t nprocs)
{
	struct wl_holes *h = calloc(1, sizeof(*h));

	if (!h || nprocs >= UINT32_MAX / 4)
		goto fail;
	h->node_cap = 64;
	h->stride_cap = 16;
	h->node = malloc(h->node_cap * sizeof(*h->node));
	h->stride = malloc(h->stride_cap * sizeof(*h->stride));
	h->map = calloc(nprocs ? nprocs : 1, sizeof(*h->map));
	h->stamp = malloc((nprocs ? nprocs : 1) * sizeof(*h->stamp));
	if (!h->node || !h->stride || !h->map || !h->stamp)
		goto fail;
	memset(&h->node[0], 0, sizeof(h->node[0]));
	h->nnodes = 1;
	h->nstrides = 1;
	for (size_t p = 0; p < nprocs; p++)
		h->stamp[p] = (uint32_t)p + 1;
	h->next_stamp = (uint32_t)nprocs + 1;
	return h;
fail:
	wl_holes_free(h);
	return NULL;
}

void wl_holes_free(struct wl_holes *h)
{
	if (!h)
		return;
	free(h->node);
	free(h->stride);
	free(h->map);
	free(h->stamp);
	free(h);
}

void wl_holes_fork(struct wl_holes *h, size_t parent, size_t child)
{
	h->map[child] = h->map[parent];
	/* from now on neither may change the nodes they share */
	h->stamp[parent] = h->next_stamp++;
	h->stamp[child] = h->next_stamp++;
}

void wl_holes_clear(struct wl_holes *h, size_t proc)
{
	/* the nodes may be shared with a fork relative: leave them to it */
	h->map[proc] = 0;
	h->stamp[proc] = h->next_stamp++;
}

/* The region map entry of @proc for @region: its page map root and stride list. */
static bool region_maps(const struct wl_holes *h, size_t proc, size_t region, uint32_t *pages,
			uint32_t *strides)
{
	uint32_t t = find(h, h->map[proc], region);

	if (!t)
		return false;
	*pages = (uint32_t)(h->node[t].value >> 32);
	*strides = (uint32_t)h->node[t].value;
	return true;
}

bool wl_holes_any(const struct wl_holes *h, size_t proc, size_t region)
{
	uint32_t pages, strides;

	return region_maps(h, proc, region, &pages, &strides);
}

/* A new head for the stride list @head, or 0 with out_of_memory set. */
static uint32_t push_stride(struct wl_holes *h, uint32_t head, const struct wl_progression *p)
{
	if (h->nstrides == h->stride_cap) {
		size_t cap = 2 * h->stride_cap;
		struct stride *grown = cap < UINT32_MAX ? realloc(h->stride, cap * sizeof(*grown))
							: NULL;

		if (!grown) {
			h->out_of_memory = true;
			return 0;
		}
		h->stride = grown;
		h->stride_cap = cap;
	}
	h->stride[h->nstrides] = (struct stride){ *p, head };
	return (uint32_t)h->nstrides++;
}

int wl_holes_add(struct wl_holes *h, size_t proc, size_t region, const struct wl_progression *p)
{
	uint32_t stamp = h->stamp[proc], pages = 0, strides = 0;

	region_maps(h, proc, region, &pages, &strides);
	if (p->step == 1 || p->last - p->first < p->step)
		pages = insert(h, pages, p->first, p->step == 1 ? p->last : p->first, stamp);
	else
		strides = push_stride(h, strides, p);
	if (!h->out_of_memory)
		h->map[proc] = insert(h, h->map[proc], region,
				      (uint64_t)pages << 32 | strides, stamp);
	return h->out_of_memory ? -1 : 0;
}

/* The smallest page of @want in the runs of page map @root, if any. */
static bool first_in_runs(const struct wl_holes *h, uint32_t root,
			  const struct wl_progression *want, uint64_t *page)
{
	uint32_t t = at_or_below(h, root, want->first);

	if (!t || h->node[t].value < want->first)
		t = above(h, root, want->first);
	/* runs are disjoint, so in key order the first one met holds the answer */
	for (; t && h->node[t].key <= want->last; t = above(h, root, h->node[t].key)) {
		struct wl_progression run = { h->node[t].key, h->node[t].value, 1 };

		if (wl_progressions_meet(want, &run, page))
			return true;
	}
	return false;
}

bool wl_holes_first(const struct wl_holes *h, size_t proc, size_t region,
		    const struct wl_progression *want, uint64_t *page)
{
	uint32_t pages, strides;
	bool found;

	if (!region_maps(h, proc, region, &pages, &strides))
		return false;
	found = first_in_runs(h, pages, want, page);
	for (uint32_t s = strides; s; s = h->stride[s].next) {
		uint64_t p;

		if (wl_progressions_meet(want, &h->stride[s].pages, &p) && (!found || p < *page)) {
			*page = p;
			found = true;
		}
	}
	return found;
}
