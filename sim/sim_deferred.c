/*
 * sim_deferred.c - a continuous writer's writes kept until their page is
 * read: per position of the writer's pages, how many of its writes were
 * applied and whether it is eager; where its fresh values count from. See
 * sim_deferred.h for the contract.
 */
#include "sim_deferred.h"
#include "sim.h"
#include "sim_internal.h"
#include "content.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* done[k]: writes applied to position k; this bit when they are applied when due. */
#define EAGER_BIT UINT32_C(0x80000000)
#define DONE_MASK (~EAGER_BIT)

struct sim_deferred {
	struct sim_deferred_spec w;
	uint64_t issued;       /* writes due so far: j < issued */
	uint64_t rounds, next; /* issued = rounds * count + next, next < count */
	uint64_t redraw_at;    /* the first write whose draw wl_rng_below() redraws */
	unsigned __int128 magic; /* wl_mod_magic(off_span) */
	uint32_t *done;        /* per position */
	/* per 2 MiB of the area's addresses: the writes issued when its THP
	 * was last settled whole (so that its other pages need not be) */
	uint64_t *folio_settled;
	uint64_t nfolios;
	/* fresh values: write j >= fresh_j stores fresh_first + (j - fresh_j);
	 * every write before fresh_j is applied (note_fresh()) */
	uint64_t fresh_j, fresh_first;
	bool waiting;          /* writes issued since the last flush may wait */
	bool marks_stale;      /* retake the eager marks before the next issue */
	int err;
};

/* --- what write j stores, and where --------------------------------------------- */

/*
 * A position's writes j, j + count, j + 2 * count, ... in turn: where each
 * lands in its page (its offset draw, one addition on from the last) and
 * what it stores (a fresh value, count on from the last).
 */
struct write_cursor {
	const struct sim_deferred_spec *w;
	unsigned __int128 magic;
	struct wl_rng_strided draw;
	uint64_t fresh; /* the fresh value's count, when the writer stores fresh values */
};

static struct write_cursor cursor_at(const struct sim_deferred *d, uint64_t j)
{
	struct write_cursor c = { &d->w, d->magic, wl_rng_stride(&d->w.rng, j, d->w.count), 0 };

	if (d->w.fresh) {
		assert(j >= d->fresh_j);
		c.fresh = d->fresh_first + (j - d->fresh_j);
	}
	return c;
}

/* The cursor's write, and the cursor on to the position's next one. */
static struct sim_page_write next_write(struct write_cursor *c)
{
	const struct sim_deferred_spec *w = c->w;
	struct sim_page_write pw = { w->off_lo, w->value };

	if (w->off_span > 1)
		pw.offset += (uint32_t)wl_mod(wl_rng_strided_next(&c->draw), c->magic, w->off_span);
	if (w->fresh) {
		pw.value = content_fresh_value(c->fresh);
		c->fresh += w->count;
	}
	return pw;
}

/* --- positions ----------------------------------------------------------------- */

/* Writes issued so far to position @k. */
static uint64_t issued_to(const struct sim_deferred *d, uint64_t k)
{
	return d->rounds + (k < d->next);
}

/* Apply what position @k still waits for, a bufferful at a time. */
static int settle_position(struct sim *s, struct sim_deferred *d, uint64_t k)
{
	uint64_t due = issued_to(d, k), r = d->done[k] & DONE_MASK;
	struct sim_page_write buf[32];
	struct write_cursor c;
	int err = 0;

	if (r == due)
		return 0;
	c = cursor_at(d, r * d->w.count + k);
	while (r < due && !err) {
		size_t n = 0;

		for (; r < due && n < sizeof(buf) / sizeof(buf[0]); r++)
			buf[n++] = next_write(&c);
		err = sim_write_many(s, d->w.area, d->w.first + d->w.step * k, buf, n);
	}
	d->done[k] = (d->done[k] & EAGER_BIT) | (uint32_t)r;
	if (err && !d->err)
		d->err = err; /* the run ends on it: what was applied no longer matters */
	return err;
}

/* The position of @slot among the writer's pages, or false. */
static bool position_of(const struct sim *s, const struct sim_deferred *d, uint32_t slot,
			uint64_t *k)
{
	const struct sim_area *a = &s->area[d->w.area];
	uint64_t off;

	if (slot < a->slot || slot - a->slot >= a->npages || slot - a->slot < d->w.first)
		return false;
	off = slot - a->slot - d->w.first;
	if (d->w.step != 1) { /* a division is dear: pages = all has none */
		if (off % d->w.step)
			return false;
		off /= d->w.step;
	}
	*k = off;
	return off < d->w.count;
}

/* Can a write to @slot wait: a present page, private and writable? */
static bool writes_can_wait(const struct sim *s, uint32_t slot)
{
	const uint8_t want = PTE_MAPPED | PTE_PRESENT | PTE_WRITE;

	return (s->page[slot].pte & (want | PTE_KSM_ZERO)) == want;
}

static void take_marks(struct sim *s, struct sim_deferred *d)
{
	const struct sim_area *a = &s->area[d->w.area];

	for (uint64_t k = 0; k < d->w.count; k++) {
		uint32_t slot = a->slot + (uint32_t)(d->w.first + d->w.step * k);

		if (writes_can_wait(s, slot))
			d->done[k] &= DONE_MASK;
		else
			d->done[k] |= EAGER_BIT;
	}
	d->marks_stale = false;
}

/* --- the hooks ------------------------------------------------------------------- */

void sim_deferred_settle_slot(struct sim *s, uint32_t slot)
{
	struct sim_deferred *d = s->deferred;
	const struct sim_area *a = &s->area[d->w.area];
	const struct sim_page *p = &s->page[slot];
	uint64_t k, first, folio;

	if (slot < a->slot || slot - a->slot >= a->npages)
		return;
	if (!(p->pte & PTE_PRESENT) || !(s->frame[p->frame].flags & FRAME_LARGE)) {
		sim_deferred_settle_bytes_slot(s, slot); /* a small page: its bytes are all */
		return;
	}
	/*
	 * A write to a THP dirties its whole folio: settle the folio's pages,
	 * written by the writer or not (this one may be among the others).
	 */
	first = slot - a->slot - p->frame % SIM_THP_PAGES;
	folio = (first + a->start % SIM_THP_PAGES) / SIM_THP_PAGES; /* virtually aligned */
	if (folio < d->nfolios && d->folio_settled[folio] == d->issued)
		return;
	if (folio < d->nfolios)
		d->folio_settled[folio] = d->issued;
	for (uint64_t q = 0; q < SIM_THP_PAGES; q++) {
		uint64_t page = first + q;

		if (page < a->npages && position_of(s, d, a->slot + (uint32_t)page, &k))
			settle_position(s, d, k);
	}
}

void sim_deferred_settle_bytes_slot(struct sim *s, uint32_t slot)
{
	uint64_t k;

	if (position_of(s, s->deferred, slot, &k))
		settle_position(s, s->deferred, k);
}

void sim_deferred_protected_slot(struct sim *s, uint32_t slot)
{
	struct sim_deferred *d = s->deferred;
	uint64_t k;

	if (position_of(s, d, slot, &k)) {
		assert((d->done[k] & DONE_MASK) == issued_to(d, k)); /* settled before */
		d->done[k] |= EAGER_BIT;
	}
}

/* --- the writer -------------------------------------------------------------------- */

bool sim_deferred_sequence(const struct wl_pagesel *sel, uint64_t npages, uint64_t *first,
			   uint64_t *step, uint64_t *count)
{
	if (sel->kind != WL_SEL_ALL && sel->kind != WL_SEL_EVERY)
		return false;
	*first = sel->kind == WL_SEL_EVERY ? sel->start : 0;
	*step = sel->kind == WL_SEL_EVERY ? sel->step : 1;
	*count = wl_pagesel_count(sel, npages);
	return true;
}

int sim_deferred_start(struct sim *s, const struct sim_deferred_spec *spec)
{
	struct sim_deferred *d;

	if (s->deferred || spec->area < 0 || (uint32_t)spec->area >= s->narea || !spec->count ||
	    !spec->step || spec->count > UINT32_MAX ||
	    spec->first + spec->step * (spec->count - 1) >= s->area[spec->area].npages)
		return EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return ENOMEM;
	d->done = calloc(spec->count, sizeof(*d->done));
	d->nfolios = s->area[spec->area].npages / SIM_THP_PAGES + 2;
	d->folio_settled = malloc(d->nfolios * sizeof(*d->folio_settled));
	if (!d->done || !d->folio_settled) {
		sim_deferred_free(d);
		return ENOMEM;
	}
	memset(d->folio_settled, 0xff, d->nfolios * sizeof(*d->folio_settled));
	d->w = *spec;
	d->redraw_at = UINT64_MAX;
	if (spec->off_span > 1) {
		/* a draw below 2^64 mod off_span is redrawn */
		d->redraw_at = wl_rng_first_below(&spec->rng, -(uint64_t)spec->off_span %
								   spec->off_span);
		d->magic = wl_mod_magic(spec->off_span);
	}
	d->marks_stale = true;
	s->deferred = d;
	return 0;
}

/*
 * Does write @j's draw fall below 2^64 mod off_span, so that wl_rng_below()
 * draws again (once in 10^16 writes)? Write j then takes draw j + 1 and every
 * later write shifts: the writer stops deferring there. Found when the
 * writer starts (wl_rng_first_below()), not drawn a write at a time.
 */
static bool redraws(const struct sim_deferred *d, uint64_t j)
{
	return j == d->redraw_at;
}

/*
 * Fresh values of the writes from now on count from @fresh_first. Where
 * they do not go on from the last (other writes took some: they run at
 * steps, after a flush), no write may be waiting, since a write's value is
 * computed from the one start: EAGAIN otherwise (the writer then goes on
 * eagerly, as at a redraw).
 */
static int note_fresh(struct sim_deferred *d, uint64_t fresh_first)
{
	if (!d->w.fresh || d->fresh_first + (d->issued - d->fresh_j) == fresh_first)
		return 0;
	if (d->waiting)
		return EAGAIN;
	d->fresh_j = d->issued;
	d->fresh_first = fresh_first;
	return 0;
}

/* The writes to positions next, next + 1, ..., @to - 1 are issued. */
static void issued_up_to(struct sim_deferred *d, uint64_t to, uint64_t *issued)
{
	d->issued += to - d->next;
	*issued += to - d->next;
	d->next = to;
	if (d->next == d->w.count) {
		d->next = 0;
		d->rounds++;
	}
}

/*
 * Issue the writes to positions next, ..., next + @m - 1 (within the round):
 * the memo forgets each written page now, as sim_write() would, and an
 * eager page takes its write now, in order (settle_position()).
 */
static int issue_span(struct sim *s, struct sim_deferred *d, uint64_t m, uint64_t *issued)
{
	const struct sim_area *a = &s->area[d->w.area];
	uint64_t end = d->next + m, counted = d->next; /* issued_up_to(counted) done */
	int err;

	for (uint64_t k = d->next; k < end; k++) {
		uint32_t slot = a->slot + (uint32_t)(d->w.first + d->w.step * k);

		sim_memo_written(s, slot);
		if (!(d->done[k] & EAGER_BIT))
			continue;
		issued_up_to(d, counted = k + 1, issued); /* settle_position() counts it */
		err = settle_position(s, d, k);
		if (err)
			return err;
		if (writes_can_wait(s, slot))
			d->done[k] &= DONE_MASK;
	}
	if (counted != end)
		issued_up_to(d, end, issued);
	return 0;
}

int sim_deferred_issue(struct sim *s, uint64_t n, uint64_t fresh_first, uint64_t *issued)
{
	struct sim_deferred *d = s->deferred;
	int err;

	*issued = 0;
	if (d->err)
		return d->err;
	err = note_fresh(d, fresh_first);
	if (err)
		return err;
	if (d->marks_stale)
		take_marks(s, d);
	d->waiting = d->waiting || n;
	while (n) {
		/* to the round's end, and short of a redraw */
		uint64_t m = d->w.count - d->next < n ? d->w.count - d->next : n;

		/* done[] counts up to 2^31 - 1 rounds: then, as at a redraw, stop */
		if (d->rounds + 1 >= DONE_MASK || redraws(d, d->issued))
			return EAGAIN;
		if (d->redraw_at - d->issued < m)
			m = d->redraw_at - d->issued;
		err = issue_span(s, d, m, issued);
		if (err)
			return err;
		n -= m;
	}
	return 0;
}

int sim_deferred_flush(struct sim *s)
{
	struct sim_deferred *d = s->deferred;

	if (!d)
		return 0;
	for (uint64_t k = 0; k < d->w.count && !d->err; k++)
		settle_position(s, d, k);
	d->marks_stale = true;
	d->waiting = d->err != 0;
	return d->err;
}

bool sim_deferred_usable(const struct sim *s, int area)
{
	const struct sim_deferred *d = s->deferred;
	const struct sim_area *a;

	if (!d || area != d->w.area)
		return false;
	a = &s->area[area];
	return !a->dead && !a->uffd_wp &&
	       d->w.first + d->w.step * (d->w.count - 1) < a->npages;
}

void sim_deferred_stop(struct sim *s, uint64_t *issued)
{
	struct sim_deferred *d = s->deferred;

	if (!d)
		return;
	*issued = d->issued;
	sim_deferred_free(d);
	s->deferred = NULL;
}

void sim_deferred_sizes(uint64_t count, uint64_t pages, uint64_t alloc[SIM_DEFERRED_ALLOCS])
{
	alloc[0] = sizeof(struct sim_deferred);
	alloc[1] = count * sizeof(uint32_t);                           /* done */
	alloc[2] = (pages / SIM_THP_PAGES + 2) * sizeof(uint64_t);      /* folio_settled */
}

int sim_deferred_error(const struct sim *s)
{
	return s->deferred ? s->deferred->err : 0;
}

void sim_deferred_free(struct sim_deferred *d)
{
	if (!d)
		return;
	free(d->done);
	free(d->folio_settled);
	free(d);
}
