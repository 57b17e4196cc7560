/*
 * mc_visited.c - the visited-state set of mc_visited.h: fingerprints are
 * already uniform 64-bit hashes, so their low bits index the table directly,
 * and key and number share a 16-byte slot (one cache miss per lookup). The
 * table lives in huge pages (mc_mem.h). Also the bit array of bitstate
 * hashing, for searches larger than the table could hold.
 */
#include "config.h"
#include "mc_visited.h"
#include "mc_mem.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

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

/* Put a slot moved from a smaller table into @to; other threads may be moving theirs. */
static void move_slot(struct mc_visited *to, const struct mc_visited_slot *s)
{
	size_t i = (size_t)s->key & (to->cap - 1);

	for (;;) {
		uint64_t empty = 0;

		if (__atomic_compare_exchange_n(&to->slot[i].key, &empty, s->key, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			to->slot[i].depth = s->depth; /* read by nobody before the threads join */
			return;
		}
		i = (i + 1) & (to->cap - 1);
	}
}

/*
 * One thread's share of a grow: its slice of the new table faulted in (the
 * kernel's zeroing of fresh pages is most of a grow's time, so each thread
 * zeroes a part), then its slice of the old table moved over.
 */
struct regrow {
	const struct mc_visited *from;
	struct mc_visited *to;
	unsigned part, parts;
};

static void fault_in_slice(struct mc_visited *to, unsigned part, unsigned parts)
{
#ifdef MADV_POPULATE_WRITE
	size_t bytes = to->cap * sizeof(*to->slot), page = 4096;
	size_t lo = bytes / parts * part & ~(page - 1);
	size_t hi = part + 1 == parts ? bytes : bytes / parts * (part + 1);

	madvise((char *)to->slot + lo, hi - lo, MADV_POPULATE_WRITE); /* a hint: may fail */
#else
	(void)to, (void)part, (void)parts;
#endif
}

static void *regrow_part(void *arg)
{
	const struct regrow *r = arg;
	size_t lo = r->from->cap / r->parts * r->part;
	size_t hi = r->part + 1 == r->parts ? r->from->cap : r->from->cap / r->parts * (r->part + 1);

	if (r->parts > 1)
		fault_in_slice(r->to, r->part, r->parts);
	for (size_t i = lo; i < hi; i++)
		if (r->from->slot[i].key)
			move_slot(r->to, &r->from->slot[i]);
	return NULL;
}

static int grow_on(struct mc_visited *v, unsigned threads)
{
	struct regrow part[MC_VISITED_MAX_THREADS];
	pthread_t tid[MC_VISITED_MAX_THREADS];
	bool started[MC_VISITED_MAX_THREADS] = { false };
	struct mc_visited bigger;

	if (threads < 1)
		threads = 1;
	if (threads > MC_VISITED_MAX_THREADS)
		threads = MC_VISITED_MAX_THREADS;
	if (mc_visited_init(&bigger, v->cap) != 0)
		return -1;
	for (unsigned t = 0; t < threads; t++)
		part[t] = (struct regrow){ v, &bigger, t, threads };
	for (unsigned t = 1; t < threads; t++)
		started[t] = pthread_create(&tid[t], NULL, regrow_part, &part[t]) == 0;
	regrow_part(&part[0]);
	for (unsigned t = 1; t < threads; t++) {
		if (started[t])
			pthread_join(tid[t], NULL);
		else
			regrow_part(&part[t]); /* no thread for it: this one does its share */
	}
	bigger.n = v->n;
	mc_visited_free(v);
	*v = bigger;
	return 0;
}

static int grow(struct mc_visited *v)
{
	return grow_on(v, 1);
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

/* A spinning thread's hint to the processor. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

int mc_visited_grow(struct mc_visited *v, unsigned threads)
{
	return grow_on(v, threads);
}

bool mc_visited_full(const struct mc_visited *v)
{
	return 4 * (__atomic_load_n(&v->n, __ATOMIC_RELAXED) + MC_VISITED_QUOTA) > 3 * v->cap;
}

/* Room for MC_VISITED_QUOTA more claims of this thread, unless the set is too full. */
static bool take_quota(struct mc_visited *v, struct mc_visited_quota *q)
{
	size_t n = __atomic_add_fetch(&v->n, MC_VISITED_QUOTA, __ATOMIC_RELAXED);

	if (4 * n > 3 * v->cap) {
		__atomic_fetch_sub(&v->n, MC_VISITED_QUOTA, __ATOMIC_RELAXED);
		return false;
	}
	q->left = MC_VISITED_QUOTA;
	return true;
}

enum mc_visit mc_visited_claim(struct mc_visited *v, struct mc_visited_quota *q, uint64_t fp,
			       uint32_t *stored, size_t *slot)
{
	uint64_t key = fp ? fp : 1;
	size_t i = (size_t)key & (v->cap - 1);

	for (;;) {
		uint64_t seen = __atomic_load_n(&v->slot[i].key, __ATOMIC_ACQUIRE);
		uint32_t number;

		if (!seen) {
			if (!q->left && !take_quota(v, q))
				return MC_VISIT_OOM;
			if (__atomic_compare_exchange_n(&v->slot[i].key, &seen, key, false,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				q->left--;
				*slot = i;
				return MC_VISIT_NEW;
			}
			/* another thread took this slot first: look at what it put there */
		}
		if (seen == key) {
			while (!(number = __atomic_load_n(&v->slot[i].depth, __ATOMIC_ACQUIRE)))
				cpu_relax();
			*stored = number - 1;
			return MC_VISIT_SEEN;
		}
		if (seen)
			i = (i + 1) & (v->cap - 1);
	}
}

void mc_visited_publish(struct mc_visited *v, size_t slot, uint32_t number)
{
	__atomic_store_n(&v->slot[slot].depth, number + 1, __ATOMIC_RELEASE);
}

bool mc_visited_find(const struct mc_visited *v, uint64_t fp, uint32_t *depth)
{
	size_t i = slot_of(v, fp ? fp : 1);

	if (!v->slot[i].key)
		return false;
	*depth = v->slot[i].depth;
	return true;
}

/* --- bitstate ------------------------------------------------------------------------ */

int mc_bits_init(struct mc_bits *b, unsigned log2)
{
	memset(b, 0, sizeof(*b));
	b->word = mc_mem_alloc(((size_t)1 << log2) / 8);
	b->log2 = b->word ? log2 : 0;
	return b->word ? 0 : -1;
}

void mc_bits_free(struct mc_bits *b)
{
	if (b->word)
		mc_mem_free(b->word, ((size_t)1 << b->log2) / 8);
	memset(b, 0, sizeof(*b));
}

/* The i-th of a state's bits: two independent-looking indexes from one 64-bit hash. */
static uint64_t bit_of(const struct mc_bits *b, uint64_t fp, unsigned i)
{
	uint64_t h = i ? (fp >> 32 | fp << 32) * 0x9e3779b97f4a7c15ull : fp;

	return h >> (64 - b->log2);
}

enum mc_visit mc_bits_add(struct mc_bits *b, uint64_t fp)
{
	double f = (double)b->set / (double)((uint64_t)1 << b->log2), odds = 1;
	bool fresh = false;

	for (unsigned i = 0; i < MC_BITS_PER_STATE; i++) {
		uint64_t bit = bit_of(b, fp, i), mask = (uint64_t)1 << (bit & 63);

		odds *= f;
		if (!(b->word[bit >> 6] & mask)) {
			b->word[bit >> 6] |= mask;
			b->set++;
			fresh = true;
		}
	}
	if (!fresh)
		return MC_VISIT_SEEN;
	b->added++;
	b->skip_odds += odds;
	return MC_VISIT_NEW;
}

double mc_bits_coverage(const struct mc_bits *b)
{
	return b->added ? 1.0 - b->skip_odds / (double)b->added : 1.0;
}
