/*
 * sim_admit.c - admission: how much memory a workload's run on the simulator
 * can take, worked out from the workload before anything is allocated, and
 * the refusal of a run that does not fit (or would schedule more page writes
 * than can run). See sim.h for the contract.
 *
 * The bound is the sum of what sim_state.c, sim_content.c, the driver and the
 * trace allocate, counted with their real struct sizes and growth rules:
 *
 *  - page slots and frames: exact. mmap grows the slot array to exactly the
 *    pages mapped (every process's copy: fork copies all of its parent's
 *    areas, and an exec maps the process's regions anew), with the
 *    detector's per-item state beside it if it keeps any, and reserves the
 *    frame array for every frame id those slots can use (sim_state.c's
 *    frames_bound), and all are zeroed, so resident.
 *  - stable nodes: a bound per region, from what can happen to its pages
 *    (merging starts in the second full scan at the earliest, since a page
 *    merges only once its checksum held still between two visits):
 *    . pages nothing ever writes or unmerges keep their initial contents: for
 *      each content (a fill = same or zero region, each group) at most
 *      ceil(n / max_page_sharing) + 1 dups and one chain, because a new dup
 *      is made only when every dup of that content is full;
 *    . pages made unique (fresh values, a fixed selection) after scan 0 or 1,
 *      before anything merged, and fill = unique or none pages that only
 *      fresh values or writes within the page reach, never merge;
 *    . once other fresh-value writes can land on merged pages: a KSM page is
 *      made of two pages, each at most once (a page leaves a KSM page only by
 *      turning unique for good), so one node per two pages, and a chain per
 *      max_page_sharing of them; this assumes the worst interleaving, and
 *      made a forked 512 MiB run's bound 2.1-2.3x its real use (check_sim_admit);
 *    . pages that fixed-value writes, unmerge events or run = 2 reach can
 *      come back to be merged again: a KSM page per page (a live KSM page is
 *      mapped by some page) and a chain per KSM page, two nodes a page;
 *    . fill = capture pages, which each snapshot may set to any content the
 *      capture holds, are counted as the last kind: two nodes a page.
 *    The pool doubles (sim_pool_cap).
 *  - patched contents (sim_content.h): one intern entry per page a write can
 *    reach in every copy of its region (a content is made by a write and
 *    held by a frame), never more than the writes themselves; the intern
 *    table at most 3/4 full, plus the old table while it is rehashed; and
 *    for contents whose written bytes span more than the 8-byte window, a
 *    spilled array of up to every byte any write can reach, or a run's
 *    block (SIM_RUN_BLOCK_BYTES) when that is larger. None for the
 *    pages of a region whose writes are all word tokens (word_regions).
 *  - a continuous writer over pages all or every:N: the writes the
 *    simulator defers (sim_deferred.h), 4 bytes a page it writes and 8 per
 *    2 MiB of its region.
 *  - trace rows: one per full scan plus scan 0, one per batch with per-batch
 *    rows, each with its per-process columns in an allocation of its own;
 *    outcomes; the caller's page captures per scan row, if any.
 *  - glibc: a realloc below its largest heap block (32 MiB) may copy, and the
 *    old block stays resident in the heap, so each growth of a pool below
 *    that size adds its old size; small allocations cost their chunk (size
 *    plus 8, rounded up to 16, at least 32); and a fixed allowance covers the
 *    allocator's top padding, the stack and first touches of the library.
 *
 * Time: a run that stops after time = T has at most T / (the shortest batch
 * plus sleep the cost model allows) batches, and at most T / (the cheapest
 * visit times the pages every full scan must visit) full scans, which bound
 * its rows and every-scan writes; a continuous writer writes T / interval
 * pages. A run that
 * stops after N scans has exactly N + 1 scan rows, but how much simulated time
 * it spans is known only while it runs: its continuous writes are counted as
 * unknown (the progress line estimates them). More than SIM_ADMIT_MAX_WRITES
 * page writes are refused: they cannot run in a day. Nothing here allocates
 * more than a small table per region, prints, or reads the machine: the
 * caller passes the bytes available.
 */
#include "sim_internal.h"
#include "sim_deferred.h"
#include "sim_detector.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* glibc's largest heap block (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit): larger
 * ones are mmap'ed and realloc moves them with mremap, without a copy. */
#define HEAP_BLOCK_MAX (UINT64_C(32) << 20)
/* malloc's top padding and trim threshold (128 KiB each), the stack, and the
 * first touches of the program's own pages: resident, not in any pool */
#define FIXED_ALLOWANCE (UINT64_C(1) << 20)
/* The largest allocation sim_content_after_write() makes while it works. */
#define WRITE_SCRATCH ((CONTENT_PAGE_SIZE + CONTENT_WORD_SIZE) * sizeof(struct sim_patch_byte))
/* A [global] idle step of the driver when ksmd cannot run (sim_driver.c). */
#define IDLE_STEP_NS UINT64_C(10000000)
/* The pages the simulator holds in all: slot ids are tree node ids (below
 * RB_MAX_ID, sim_rbtree.h), and 0 is none. */
#define MAX_PAGES ((uint64_t)RB_MAX_ID - 2)

/* --- saturating arithmetic: an unbounded part stays unbounded ------------------ */

static uint64_t add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t mul(uint64_t a, uint64_t b)
{
	return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* A malloc chunk for @n bytes (glibc, 64-bit: header, 16-byte alignment). */
static uint64_t chunk(uint64_t n)
{
	n = add(n, 8 + 15) & ~UINT64_C(15);
	return n < 32 ? 32 : n;
}

/*
 * A pool of @size-byte elements that grows one element at a time by
 * sim_pool_cap() from @cap, until it holds @need: its final bytes, plus every
 * old block a realloc may have copied and left in the heap.
 */
static uint64_t doubling_pool(uint64_t cap, uint64_t need, size_t size)
{
	uint64_t slack = 0;

	if (need > UINT32_MAX)
		return UINT64_MAX;
	while (cap < need) {
		if (cap && cap * size <= HEAP_BLOCK_MAX)
			slack += cap * size;
		cap = sim_pool_cap((uint32_t)cap, (uint32_t)need);
	}
	return add(mul(cap, size), slack);
}

/* The same for a pool whose realloc doubles without a cap (trace.c, captures). */
static uint64_t doubling_array(uint64_t first, uint64_t need, uint64_t size)
{
	uint64_t cap = first, slack = 0;

	if (need == UINT64_MAX || need == 0)
		return need ? UINT64_MAX : 0;
	while (cap < need) {
		if (mul(cap, size) <= HEAP_BLOCK_MAX)
			slack += cap * size;
		if (cap > UINT64_MAX / 2)
			return UINT64_MAX;
		cap *= 2;
	}
	return add(mul(cap, size), slack);
}

/* --- the workload, read for what it makes the simulator hold ------------------- */

/* What writers, write events and unmerges do to one region (pages are
 * counted over the copies they name, so they add up to pages x copies). */
struct region_use {
	uint64_t copies;      /* mappings of it: its owner, the descendants, and each exec of one */
	uint64_t early;       /* pages made unique before any merge, at least */
	uint64_t fresh;       /* pages other fresh-value writes can reach */
	uint64_t fixed;       /* pages fixed-value writes can reach */
	uint64_t unmerged;    /* pages unmerge events reach */
	uint64_t written;     /* pages any write can reach */
	uint32_t word_offset; /* the offset of every fresh write here, or UINT32_MAX */
	bool words;           /* each write here is a word token: no entry (word_regions) */
};

struct plan {
	const struct workload *wl;
	const struct sim_admit_options *opt;
	struct sim_costs costs;
	struct region_use *use;
	uint64_t scans_applied; /* scans after which steps run, at most */
	uint64_t iterations;    /* driver loop iterations of a time stop, at most */
	uint64_t time_scans;    /* full scans of a time stop, at most */
	uint64_t span_bytes;    /* bytes any write can reach in a page */
	uint64_t every_scan_writes, continuous_writes;
	size_t top_writer;      /* the continuous writer with the most writes */
	uint64_t top_writer_writes;
	bool run2;              /* some event stores run = 2 */
};

static bool descends_from(const struct workload *wl, size_t proc, size_t ancestor)
{
	for (long p = (long)proc; p >= 0; p = wl->procs[p].parent)
		if ((size_t)p == ancestor)
			return true;
	return false;
}

/*
 * The areas region @r is mapped as over the run: in its owner and every
 * process forked from it, and again at each exec of one of them (an exited
 * process keeps its slots: the simulator never frees them).
 */
static uint64_t region_copies(const struct workload *wl, size_t r)
{
	uint64_t copies = 0;

	for (size_t p = 0; p < wl->nprocs; p++)
		copies += descends_from(wl, p, wl->regions[r].process);
	for (size_t i = 0; i < wl->nevents; i++)
		copies += wl->events[i].action == WL_ACT_EXEC &&
			  descends_from(wl, wl->events[i].process, wl->regions[r].process);
	return copies;
}

/* Does event @ev set @knob, as the kernel accepts? */
static bool sets_knob(const struct wl_event *ev, enum wl_knob knob)
{
	return ev->action == WL_ACT_SET && ev->knob == knob && ev->expect == WL_EXPECT_OK;
}

/* The smallest value a knob takes: its [global] value or any set event's. */
static uint64_t knob_min(const struct workload *wl, enum wl_knob knob)
{
	uint64_t v = wl->knobs[knob];

	for (size_t i = 0; i < wl->nevents; i++)
		if (sets_knob(&wl->events[i], knob) && wl->events[i].knob_value < v)
			v = wl->events[i].knob_value;
	return v;
}

/*
 * The first setting of max_page_sharing above what the simulator holds
 * (SIM_MAX_PAGE_SHARING): an event's index, wl->nevents for [global], or -1.
 */
static long page_sharing_too_large(const struct workload *wl)
{
	if (wl->knobs[WL_KNOB_MAX_PAGE_SHARING] > SIM_MAX_PAGE_SHARING)
		return (long)wl->nevents;
	for (size_t i = 0; i < wl->nevents; i++)
		if (sets_knob(&wl->events[i], WL_KNOB_MAX_PAGE_SHARING) &&
		    wl->events[i].knob_value > SIM_MAX_PAGE_SHARING)
			return (long)i;
	return -1;
}

/* The shortest a driver loop iteration can last in simulated time. */
static uint64_t shortest_iteration_ns(const struct plan *pl)
{
	const struct sim_costs *c = &pl->costs;
	uint64_t sleep_ms = knob_min(pl->wl, WL_KNOB_SLEEP_MILLISECS);
	uint64_t jiffies = (sleep_ms * c->hz + 999) / 1000, batch, sleep = 0;
	double batch_ns, ns = (double)jiffies * (double)(1000000000u / c->hz) + c->sleep_adjust_ns;

	if (jiffies && ns > 0)
		sleep = (uint64_t)ns;
	/* with no sleep a batch may be busy (sim.h), and cost busy_batch_ns */
	batch_ns = jiffies ? c->batch_ns : fmin(c->batch_ns, c->busy_batch_ns);
	batch = (batch_ns > 0 ? (uint64_t)batch_ns : 0) + sleep;
	return batch < IDLE_STEP_NS ? batch : IDLE_STEP_NS;
}

/* How often the steps of one writer run: the scans after which it applies. */
static uint64_t applications(const struct plan *pl, const struct wl_writer *w)
{
	uint64_t last = pl->scans_applied, until;

	if (last == 0 || w->from_scan > last - 1)
		return 0;
	until = w->until_scan == WL_FOREVER ? last - 1 : min64(w->until_scan, last - 1);
	return w->when == WL_WHEN_AFTER_SCAN ? 1 : until - w->from_scan + 1;
}

/* Continuous writes in a time stop: one every interval, from the start at most. */
static uint64_t continuous_writes(const struct plan *pl, const struct wl_writer *w)
{
	uint64_t interval = 1000000000u / w->rate;

	if (pl->wl->stop != WL_STOP_TIME)
		return SIM_WRITES_UNKNOWN;
	return pl->wl->stop_time_ns / interval + 1;
}

/* Pages one source reaches: its selection, drawn anew each time when random. */
static uint64_t reach(const struct wl_pagesel *sel, uint64_t npages, uint64_t times)
{
	uint64_t once = wl_pagesel_count(sel, npages);

	if (sel->kind != WL_SEL_RANDOM)
		return times ? once : 0;
	return min64(npages, mul(once, times));
}

/* The bytes of [lo, hi + 8) over every write, as sorted disjoint intervals. */
static void add_span(uint8_t *reached, const struct wl_offset *off)
{
	for (uint32_t b = off->lo; b < off->hi + CONTENT_WORD_SIZE && b < CONTENT_PAGE_SIZE; b++)
		reached[b] = 1;
}

/*
 * Merging starts in the second full scan at the earliest (a page is merged
 * only once its checksum held still between two visits): fresh values
 * written to the same pages each time, from after scan 1 at the latest, make
 * those pages unique before any of them was merged.
 */
static bool before_merging(const struct wl_pagesel *sel, uint64_t first_scan)
{
	return sel->kind != WL_SEL_RANDOM && first_scan <= 1;
}

static void note_write(struct plan *pl, size_t region, const struct wl_value *v,
		       uint64_t pages, bool early)
{
	struct region_use *u = &pl->use[region];

	if (v->fresh && early)
		u->early = pages > u->early ? pages : u->early; /* their union, at least */
	else if (v->fresh)
		u->fresh = add(u->fresh, pages);
	else
		u->fixed = add(u->fixed, pages);
	u->written = add(u->written, pages);
}

static uint64_t count_writers(struct plan *pl, uint8_t *reached)
{
	const struct workload *wl = pl->wl;
	uint64_t writes = 0;

	for (size_t i = 0; i < wl->nwriters; i++) {
		const struct wl_writer *w = &wl->writers[i];
		uint64_t npages = wl->regions[w->region].pages, n, times;

		add_span(reached, &w->offset);
		if (w->when == WL_WHEN_CONTINUOUS) {
			n = continuous_writes(pl, w);
			times = n == SIM_WRITES_UNKNOWN ? UINT64_MAX : n;
			note_write(pl, w->region, &w->value,
				   w->pages.kind == WL_SEL_RANDOM
					   ? min64(npages, times)
					   : min64(wl_pagesel_count(&w->pages, npages), times),
				   false);
			pl->continuous_writes = add(pl->continuous_writes, n);
			if (n >= pl->top_writer_writes) {
				pl->top_writer = i;
				pl->top_writer_writes = n;
			}
			writes = add(writes, n);
			continue;
		}
		times = applications(pl, w);
		n = mul(wl_pagesel_count(&w->pages, npages), times);
		note_write(pl, w->region, &w->value, reach(&w->pages, npages, times),
			   times && before_merging(&w->pages, w->from_scan));
		pl->every_scan_writes = add(pl->every_scan_writes, n);
		writes = add(writes, n);
	}
	return writes;
}

static uint64_t count_events(struct plan *pl, uint8_t *reached)
{
	const struct workload *wl = pl->wl;
	uint64_t writes = 0;

	for (size_t i = 0; i < wl->nevents; i++) {
		const struct wl_event *ev = &wl->events[i];
		uint64_t npages, n;

		if (ev->action == WL_ACT_RUN && ev->run == 2)
			pl->run2 = true;
		if (ev->action == WL_ACT_MERGE_OFF && ev->at_scan + 1 <= pl->scans_applied) {
			/* every region of the process, unmerged as by unmerge events */
			for (size_t r = 0; r < wl->nregions; r++)
				if (descends_from(wl, ev->process, wl->regions[r].process))
					pl->use[r].unmerged = add(pl->use[r].unmerged,
								  wl->regions[r].pages);
			continue;
		}
		if (ev->region < 0 || ev->at_scan + 1 > pl->scans_applied)
			continue;
		npages = wl->regions[ev->region].pages;
		n = wl_pagesel_count(&ev->pages, npages);
		if (ev->action == WL_ACT_WRITE) {
			add_span(reached, &ev->offset);
			note_write(pl, (size_t)ev->region, &ev->value, n,
				   before_merging(&ev->pages, ev->at_scan));
			writes = add(writes, n);
		} else if (ev->action == WL_ACT_UNMERGE || ev->action == WL_ACT_DISCARD) {
			/* pages return to private copies (or to zeros) and may merge again */
			pl->use[ev->region].unmerged = add(pl->use[ev->region].unmerged, n);
		}
	}
	return writes;
}

/* Whether some event of @wl does @action to region @r, or to a process holding
 * it (exit, exec, merge-off). */
static bool region_event(const struct workload *wl, size_t r, enum wl_action action)
{
	for (size_t i = 0; i < wl->nevents; i++) {
		const struct wl_event *ev = &wl->events[i];
		bool whole_process = action == WL_ACT_EXIT || action == WL_ACT_EXEC ||
				     action == WL_ACT_MERGE_OFF;

		if (ev->action == action && whole_process &&
		    descends_from(wl, ev->process, wl->regions[r].process))
			return true;
		if (ev->action == action && ev->region == (long)r)
			return true;
	}
	return false;
}

/*
 * Calls @fn on every write of @wl, a writer's or an event's, with its region,
 * offset and value; stops at the first that returns false, and returns false.
 */
static bool each_write(const struct workload *wl,
		       bool (*fn)(size_t, const struct wl_offset *, const struct wl_value *, void *),
		       void *arg)
{
	for (size_t i = 0; i < wl->nwriters; i++)
		if (!fn(wl->writers[i].region, &wl->writers[i].offset, &wl->writers[i].value, arg))
			return false;
	for (size_t i = 0; i < wl->nevents; i++) {
		const struct wl_event *ev = &wl->events[i];

		if (ev->action == WL_ACT_WRITE && ev->region >= 0 &&
		    !fn((size_t)ev->region, &ev->offset, &ev->value, arg))
			return false;
	}
	return true;
}

/* What word_regions() learns as it goes: each region's offset, the sites taken. */
struct word_scan {
	struct plan *pl;
	uint32_t sites;
};

/*
 * Is a write one that makes a word token (sim_content.h) every time: a fresh
 * value at one fixed offset, the same for every write into the region, whose
 * pages are one plain base (fill = same or zero) that only these writes
 * change? Counts the region's site when it is first seen.
 */
static bool makes_word(size_t r, const struct wl_offset *off, const struct wl_value *v,
		       void *arg)
{
	struct word_scan *ws = arg;
	enum wl_fill fill = ws->pl->wl->regions[r].fill;
	uint32_t *offset = &ws->pl->use[r].word_offset;

	if (!v->fresh)
		return true; /* an entry, counted; it takes no site */
	if ((fill != WL_FILL_SAME && fill != WL_FILL_ZERO) || off->lo != off->hi)
		return false;
	if (*offset == UINT32_MAX)
		ws->sites++;
	else if (*offset != off->lo)
		return false;
	*offset = off->lo;
	return true;
}

/*
 * The regions whose written pages need no entry. Sites are taken by the first
 * fresh write over each plain base, in any region, and never given back: the
 * credit holds only when every fresh write of the workload makes a word
 * token, their (region, offset) sites are at most SIM_WORD_SITES, and no
 * fixed-value write that runs (use->fixed) or discard (back to zeros, another
 * base) reaches such a region.
 */
static void word_regions(struct plan *pl)
{
	const struct workload *wl = pl->wl;
	struct word_scan ws = { pl, 0 };

	for (size_t r = 0; r < wl->nregions; r++)
		pl->use[r].word_offset = UINT32_MAX;
	if (!each_write(wl, makes_word, &ws) || ws.sites > SIM_WORD_SITES)
		return;
	for (size_t r = 0; r < wl->nregions; r++)
		pl->use[r].words = pl->use[r].word_offset != UINT32_MAX && pl->use[r].fixed == 0 &&
				   !region_event(wl, r, WL_ACT_DISCARD);
}

static bool writes_no_zero_into(size_t r, const struct wl_offset *off, const struct wl_value *v,
				void *arg)
{
	(void)off;
	return v->fresh || v->value != 0 || *(const size_t *)arg != r;
}

/* A write of the value 0 into region @r (a zero page, with use_zero_pages). */
static bool writes_zero(const struct workload *wl, size_t r)
{
	return !each_write(wl, writes_no_zero_into, &r);
}

/*
 * The simulated time a full scan takes at least: every page of the regions
 * mergeable from setup to the end (nothing unmaps, unmerges or exits them)
 * with contents present, and not mapped to the zero page by use_zero_pages,
 * is visited, for visit_ns (or busy_visit_ns where sleep_millisecs can be 0
 * and batches busy, if cheaper; or visit_pmd_ns in a THP region, if cheaper
 * still). This bounds how many full scans fit in time = T.
 */
static double scan_ns_at_least(const struct workload *wl, const struct sim_costs *c)
{
	bool zero_pages = wl->knobs[WL_KNOB_USE_ZERO_PAGES];
	double page = knob_min(wl, WL_KNOB_SLEEP_MILLISECS) ? c->visit_ns
							     : fmin(c->visit_ns, c->busy_visit_ns);
	double pmd = fmin(c->visit_pmd_ns, page), ns = 0;

	for (size_t i = 0; i < wl->nevents; i++)
		zero_pages |= wl->events[i].action == WL_ACT_SET &&
			      wl->events[i].knob == WL_KNOB_USE_ZERO_PAGES;
	for (size_t r = 0; r < wl->nregions; r++) {
		const struct wl_region *reg = &wl->regions[r];

		/* a capture region's absent pages are not visited: no lower bound */
		if (reg->merge == WL_MERGE_NONE || reg->fill == WL_FILL_NONE ||
		    reg->fill == WL_FILL_CAPTURE || region_event(wl, r, WL_ACT_UNMAP) || region_event(wl, r, WL_ACT_UNMERGE) ||
		    region_event(wl, r, WL_ACT_EXIT) || region_event(wl, r, WL_ACT_DISCARD) ||
		    region_event(wl, r, WL_ACT_EXEC) || region_event(wl, r, WL_ACT_MERGE_OFF))
			continue;
		if (zero_pages && (reg->fill == WL_FILL_ZERO || reg->fill == WL_FILL_GROUPS ||
				   (reg->fill == WL_FILL_SAME && reg->value == 0) ||
				   writes_zero(wl, r)))
			continue;
		ns += (double)reg->pages * (reg->thp == WL_THP_ALWAYS ? pmd : page);
	}
	return ns;
}

static int plan_init(struct plan *pl, const struct workload *wl, const struct sim_admit_options *opt)
{
	struct sim_config cfg;

	memset(pl, 0, sizeof(*pl));
	pl->wl = wl;
	pl->opt = opt;
	sim_config_default(&cfg);
	pl->costs = opt && opt->costs ? *opt->costs : cfg.costs;
	if (pl->costs.hz == 0)
		pl->costs.hz = cfg.costs.hz;
	pl->use = calloc(wl->nregions ? wl->nregions : 1, sizeof(*pl->use));
	if (!pl->use)
		return -1;
	for (size_t r = 0; r < wl->nregions; r++)
		pl->use[r].copies = region_copies(wl, r);
	if (wl->stop == WL_STOP_SCANS) {
		pl->scans_applied = wl->stop_scans;
	} else {
		uint64_t shortest = shortest_iteration_ns(pl);

		double scan_ns = scan_ns_at_least(wl, &pl->costs);

		pl->iterations = shortest ? wl->stop_time_ns / shortest + 1 : UINT64_MAX;
		/* every iteration ends at most one full scan, which visits every page */
		pl->time_scans = pl->iterations;
		if (scan_ns >= 1 && scan_ns > (double)shortest)
			pl->time_scans = (uint64_t)((double)wl->stop_time_ns / scan_ns) + 1;
		pl->scans_applied = add(pl->time_scans, 1);
	}
	return 0;
}

/* --- the parts of the bound ------------------------------------------------------- */

/* Stable nodes at most (the model is in the comment at the top). */
static uint64_t stable_nodes(const struct plan *pl)
{
	const struct workload *wl = pl->wl;
	uint64_t mps = knob_min(wl, WL_KNOB_MAX_PAGE_SHARING), nodes = 0;

	if (mps < 2)
		mps = 2;
	for (size_t r = 0; r < wl->nregions; r++) {
		const struct wl_region *reg = &wl->regions[r];
		const struct region_use *u = &pl->use[r];
		uint64_t n = mul(reg->pages, u->copies), back, early, gone, left;

		if (reg->fill == WL_FILL_UNIQUE && pl->span_bytes < CONTENT_PAGE_SIZE)
			continue; /* what is not written keeps a fresh base: unique */
		if (reg->fill == WL_FILL_CAPTURE) {
			/* snapshots may rewrite any page to any captured content */
			nodes = add(nodes, mul(2, n));
			continue;
		}
		if (reg->fill == WL_FILL_UNIQUE || reg->fill == WL_FILL_NONE) {
			/* only fixed-value writes make such pages equal */
			nodes = add(nodes, mul(2, min64(n, u->fixed)));
			continue;
		}
		back = pl->run2 ? n : min64(n, add(u->fixed, u->unmerged));
		early = pl->run2 ? 0 : min64(n - back, u->early);
		gone = min64(n - back - early, u->fresh);
		left = n - back - early - gone;
		nodes = add(nodes, mul(2, back));
		if (gone) {
			/* two creators a KSM page, each once; a chain per mps members */
			nodes = add(nodes, (gone + left) / 2 + (gone + left) / mps + 1);
		} else if (reg->fill == WL_FILL_GROUPS) {
			for (size_t g = 0; g < reg->ngroups; g++)
				nodes = add(nodes, mul(reg->groups[g].copies, u->copies) / mps + 3);
		} else {
			nodes = add(nodes, left / mps + 3);
		}
	}
	return nodes;
}

/* Patched contents at most: a page a write reaches, in every copy; or the writes. */
static uint64_t patched_contents(const struct plan *pl, uint64_t writes)
{
	uint64_t n = 0;

	for (size_t r = 0; r < pl->wl->nregions; r++) {
		const struct region_use *u = &pl->use[r];
		uint64_t all = mul(pl->wl->regions[r].pages, u->copies);

		if (!u->words)
			n = add(n, min64(all, mul(u->written, u->copies)));
	}
	return min64(n, writes);
}

static uint64_t content_bytes(const struct plan *pl, uint64_t contents)
{
	uint64_t entries, buckets = 64, bytes;

	if (contents == 0)
		return 0;
	/* entry 0 is unused; the entry array doubles from 16 */
	entries = doubling_array(16, add(contents, 1), sizeof(struct sim_patched));
	while (mul(4, add(contents, 1)) > mul(3, buckets))
		buckets = mul(buckets, 2);
	/* the new table beside the old while rehashing, and old tables in the heap */
	bytes = add(entries, mul(buckets, 2 * sizeof(struct sim_bucket)));
	if (pl->span_bytes > SIM_PATCH_WINDOW) {
		uint64_t block = mul(pl->span_bytes, sizeof(struct sim_patch_byte));

		if (block < SIM_RUN_BLOCK_BYTES) /* the content may be a run instead */
			block = SIM_RUN_BLOCK_BYTES;
		bytes = add(bytes, mul(contents, chunk(block)));
	}
	return bytes;
}

/* Trace rows at most (scan rows in *scan_rows). */
static uint64_t trace_rows(const struct plan *pl, uint64_t pages, uint64_t *scan_rows)
{
	const struct workload *wl = pl->wl;
	uint64_t batches;

	if (wl->stop == WL_STOP_SCANS) {
		uint64_t pts = knob_min(wl, WL_KNOB_PAGES_TO_SCAN);

		if (wl->knobs[WL_KNOB_ADVISOR_MODE] == WL_ADVISOR_SCAN_TIME ||
		    knob_min(wl, WL_KNOB_ADVISOR_MODE) == WL_ADVISOR_SCAN_TIME)
			pts = min64(pts, knob_min(wl, WL_KNOB_ADVISOR_MIN_PAGES_TO_SCAN));
		*scan_rows = add(wl->stop_scans, 1);
		if (!pl->opt || !pl->opt->per_batch)
			return *scan_rows;
		/* a scan of P pages takes ceil(P / pages_to_scan) batches, and one to wrap */
		batches = pts ? mul(wl->stop_scans, pages / pts + 2) : UINT64_MAX;
		return add(*scan_rows, batches);
	}
	*scan_rows = add(pl->time_scans, 1);
	/* and the row where the time ran out */
	return add(*scan_rows, pl->opt && pl->opt->per_batch ? add(pl->iterations, 1) : 1);
}

static uint64_t trace_bytes(const struct plan *pl, uint64_t rows)
{
	const struct workload *wl = pl->wl;
	uint64_t row = sizeof(struct trace_row), outcomes = 0, bytes;

	if (wl->nprocs)
		row += chunk(wl->nprocs * sizeof(struct trace_proc_stat));
	row += chunk(SIM_TERM_COUNT * sizeof(uint64_t)); /* the cost terms' columns */
	for (size_t i = 0; i < wl->nevents; i++)
		outcomes += wl->events[i].action == WL_ACT_SET || wl->events[i].action == WL_ACT_RUN;
	/* the row array doubles from 16 and holds the rows; each has its columns */
	bytes = add(doubling_array(16, rows, sizeof(struct trace_row)),
		    mul(rows, row - sizeof(struct trace_row)));
	bytes = add(bytes, doubling_array(16, outcomes, sizeof(struct trace_outcome)));
	return mul(bytes, pl->opt && pl->opt->traces ? pl->opt->traces : 1);
}

/*
 * A continuous writer whose writes the simulator may defer (sim_deferred.h:
 * pages all or every:N): its state.
 */
static uint64_t deferred_bytes(const struct plan *pl)
{
	const struct workload *wl = pl->wl;
	uint64_t bytes = 0;

	for (size_t i = 0; i < wl->nwriters; i++) {
		const struct wl_writer *w = &wl->writers[i];
		uint64_t pages = wl->regions[w->region].pages, alloc[SIM_DEFERRED_ALLOCS];
		uint64_t first, step, count;

		if (w->when != WL_WHEN_CONTINUOUS ||
		    !sim_deferred_sequence(&w->pages, pages, &first, &step, &count))
			continue;
		sim_deferred_sizes(count, pages, alloc);
		for (int a = 0; a < SIM_DEFERRED_ALLOCS; a++)
			bytes = add(bytes, chunk(alloc[a]));
	}
	return bytes;
}

/* The machine itself, processes, areas, the content store's start, the driver. */
static uint64_t other_bytes(const struct plan *pl, uint64_t areas)
{
	const struct workload *wl = pl->wl;
	uint64_t bytes = FIXED_ALLOWANCE + chunk(sizeof(struct sim)) + WRITE_SCRATCH;

	bytes = add(bytes, deferred_bytes(pl));
	bytes = add(bytes, doubling_pool(32, add(wl->nprocs, 1), sizeof(struct sim_mm)));
	bytes = add(bytes, doubling_pool(32, add(areas, 1), sizeof(struct sim_area)));
	bytes = add(bytes, 64 * sizeof(struct sim_bucket) + 16 * sizeof(struct sim_patched));
	return add(bytes, mul(add(add(wl->nprocs, wl->nwriters), wl->nevents),
			      SIM_DRIVER_ITEM_BYTES));
}

/*
 * One mmap of @n pages (THP when @thp) into the slot and frame pools. A slot
 * is its struct sim_page and, beside it in an array of their own, the
 * detector's state of its rmap_item (item_bytes, sim_detector.h).
 */
struct pools {
	uint64_t nslots, slots_cap, frames_cap, thp, slack;
	uint64_t item_bytes;
};

/* What a realloc of @array_bytes may leave behind in the heap (glibc). */
static uint64_t regrowth_slack(uint64_t array_bytes)
{
	return array_bytes <= HEAP_BLOCK_MAX ? array_bytes : 0;
}

static void replay_mmap(struct pools *p, uint64_t n, bool thp)
{
	uint64_t need = add(p->nslots, n), frames;

	if (need > p->slots_cap) {
		p->slack += regrowth_slack(mul(p->slots_cap, sizeof(struct sim_page)));
		if (p->item_bytes)
			p->slack += regrowth_slack(mul(p->slots_cap, p->item_bytes));
		p->slots_cap = need;
	}
	if (thp)
		p->thp = add(p->thp, n);
	/* sim_state.c's frames_bound() */
	frames = add(add(need, 1), mul(2, p->thp));
	if (frames > p->frames_cap) {
		p->slack += regrowth_slack(mul(p->frames_cap, sizeof(struct sim_frame)));
		p->frames_cap = frames;
	}
	p->nslots = need;
}

/*
 * The slot and frame pools after every mmap of the run, in the driver's
 * order: the regions at setup, then each fork or exec (by scan, then file
 * order) mapping a copy of every area of its process: its root's regions.
 */
static uint64_t page_pools(const struct workload *wl)
{
	struct pools p = { .nslots = 1, .slots_cap = 32, .frames_cap = 32,
			   .item_bytes = sim_detector_of(wl->detector)->item_bytes };
	uint64_t after = 0; /* forks up to (scan after, event last) are replayed */
	size_t last = 0;
	bool first = true;

	for (size_t r = 0; r < wl->nregions; r++)
		replay_mmap(&p, wl->regions[r].pages, wl->regions[r].thp == WL_THP_ALWAYS);
	/* forks in schedule order, scan by scan and file order within one (few:
	 * one pass per fork is fine) */
	for (;;) {
		const struct wl_event *ev = NULL;
		size_t at = 0;
		long root;

		for (size_t i = 0; i < wl->nevents; i++) {
			const struct wl_event *e = &wl->events[i];

			if (e->action != WL_ACT_FORK && e->action != WL_ACT_EXEC)
				continue;
			if (!first && (e->at_scan < after || (e->at_scan == after && i <= last)))
				continue;
			if (!ev || e->at_scan < ev->at_scan) {
				ev = e;
				at = i;
			}
		}
		if (!ev)
			break;
		first = false;
		after = ev->at_scan;
		last = at;
		for (root = (long)ev->process; wl->procs[root].parent >= 0;)
			root = wl->procs[root].parent;
		for (size_t r = 0; r < wl->nregions; r++)
			if (wl->regions[r].process == (size_t)root)
				replay_mmap(&p, wl->regions[r].pages,
					    wl->regions[r].thp == WL_THP_ALWAYS);
	}
	/* and a THP folio marker per 512 frames (sim.folio_seen) */
	return add(add(add(mul(p.slots_cap, add(sizeof(struct sim_page), p.item_bytes)),
			   mul(p.frames_cap, sizeof(struct sim_frame))),
		       SIM_FOLIOS(p.frames_cap)),
		   p.slack);
}

int sim_estimate(const struct workload *wl, const struct sim_admit_options *opt,
		 struct sim_estimate *out)
{
	struct plan pl;
	uint8_t reached[CONTENT_PAGE_SIZE] = { 0 };
	uint64_t thp = 0, areas = 0, writes, scan_rows;

	memset(out, 0, sizeof(*out));
	if (plan_init(&pl, wl, opt) != 0)
		return -1;
	for (size_t r = 0; r < wl->nregions; r++) {
		uint64_t n = mul(wl->regions[r].pages, pl.use[r].copies);

		out->pages = add(out->pages, n);
		areas = add(areas, pl.use[r].copies);
		if (wl->regions[r].thp == WL_THP_ALWAYS)
			thp = add(thp, n);
	}
	writes = add(count_writers(&pl, reached), count_events(&pl, reached));
	word_regions(&pl);
	for (size_t b = 0; b < CONTENT_PAGE_SIZE; b++)
		pl.span_bytes += reached[b];
	out->writes = writes;

	out->page_cost = (unsigned)(sizeof(struct sim_page) + sizeof(struct sim_frame) +
				    sim_detector_of(wl->detector)->item_bytes);
	out->thp_pages = thp;
	out->page_bytes = page_pools(wl);
	out->stable_nodes = stable_nodes(&pl);
	out->node_bytes = doubling_pool(32, add(out->stable_nodes, 1), sizeof(struct sim_snode));
	out->contents = patched_contents(&pl, writes);
	out->content_bytes = content_bytes(&pl, out->contents);
	out->rows = trace_rows(&pl, out->pages, &scan_rows);
	out->trace_bytes = trace_bytes(&pl, out->rows);
	if (opt && opt->capture_bytes)
		out->capture_bytes = doubling_array(1024, mul(scan_rows, out->pages),
						    opt->capture_bytes);
	out->other_bytes = other_bytes(&pl, areas);
	out->bytes = add(add(add(out->page_bytes, out->node_bytes), add(out->content_bytes,
									 out->trace_bytes)),
			 add(out->capture_bytes, out->other_bytes));
	out->top_writer = pl.top_writer_writes ? (long)pl.top_writer : -1;
	out->continuous_writes = pl.continuous_writes;
	free(pl.use);
	return 0;
}

/* --- the verdict ----------------------------------------------------------------- */

static int refuse(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int refuse(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* A region's size as its key says it: "size = 2t", "pages = 100", "groups (N pages)". */
static const char *size_text(const struct wl_region *reg, char *buf, size_t len)
{
	static const char suffix[] = "kmgt";
	uint64_t bytes = reg->pages * WL_PAGE_SIZE;
	int u = 3;

	while (u >= 0 && bytes % (UINT64_C(1) << (10 * (u + 1))) != 0)
		u--;
	if (reg->size_key && strcmp(reg->size_key, "groups") == 0)
		snprintf(buf, len, "groups (%" PRIu64 " pages)", reg->pages);
	else if (u < 0 || (reg->size_key && strcmp(reg->size_key, "pages") == 0))
		snprintf(buf, len, "pages = %" PRIu64, reg->pages);
	else
		snprintf(buf, len, "size = %" PRIu64 "%c", bytes >> (10 * (u + 1)), suffix[u]);
	return buf;
}

/* "scans = 1000000000" or "time = 1h". */
static const char *stop_text(const struct workload *wl, char *buf, size_t len)
{
	static const struct {
		uint64_t ns;
		const char *unit;
	} unit[] = { { UINT64_C(3600000000000), "h" }, { UINT64_C(60000000000), "m" },
		     { 1000000000, "s" }, { 1000000, "ms" }, { 1000, "us" }, { 1, "ns" } };
	size_t u = 0;

	if (wl->stop == WL_STOP_SCANS) {
		snprintf(buf, len, "scans = %" PRIu64, wl->stop_scans);
		return buf;
	}
	while (u + 1 < sizeof(unit) / sizeof(unit[0]) && wl->stop_time_ns % unit[u].ns)
		u++;
	snprintf(buf, len, "time = %" PRIu64 "%s", wl->stop_time_ns / unit[u].ns, unit[u].unit);
	return buf;
}

/* The region with the most pages (every copy), whose size line is named. */
static size_t largest_region(const struct workload *wl)
{
	uint64_t best = 0;
	size_t at = 0;

	for (size_t r = 0; r < wl->nregions; r++) {
		uint64_t n = mul(wl->regions[r].pages, region_copies(wl, r));

		if (n > best) {
			best = n;
			at = r;
		}
	}
	return at;
}

/* "(48 bytes a page for 536870912 pages: 24.0 GiB; stable nodes 6.0 GiB; ...)" */
static void parts_text(const struct sim_estimate *e, char *buf, size_t len)
{
	char a[32], b[32];
	size_t n;

	n = (size_t)snprintf(buf, len, "%u bytes a page for %" PRIu64 " pages: %s", e->page_cost,
			     e->pages, wl_bytes_text(e->page_bytes, a, sizeof(a)));
	if (e->node_bytes > (UINT64_C(1) << 20) && n < len)
		n += (size_t)snprintf(buf + n, len - n, "; %" PRIu64 " stable nodes at most: %s",
				      e->stable_nodes, wl_bytes_text(e->node_bytes, a, sizeof(a)));
	if (e->content_bytes && n < len)
		n += (size_t)snprintf(buf + n, len - n, "; %" PRIu64 " written page contents: %s",
				      e->contents, wl_bytes_text(e->content_bytes, a, sizeof(a)));
	if (e->trace_bytes > (UINT64_C(1) << 20) && n < len)
		n += (size_t)snprintf(buf + n, len - n, "; %" PRIu64 " trace rows: %s",
				      e->rows, wl_bytes_text(e->trace_bytes, a, sizeof(a)));
	if (e->capture_bytes && n < len)
		n += (size_t)snprintf(buf + n, len - n, "; page captures at every scan: %s",
				      wl_bytes_text(e->capture_bytes, a, sizeof(a)));
	if (n < len)
		snprintf(buf + n, len - n, "; the rest %s", wl_bytes_text(e->other_bytes, b, sizeof(b)));
}

int sim_admit(const struct workload *wl, const struct sim_admit_options *opt, uint64_t available,
	      struct sim_estimate *est, char *err, size_t errlen)
{
	struct sim_estimate local, *e = est ? est : &local;
	const struct wl_region *big;
	char need[32], have[32], what[64], parts[384];
	uint64_t pages_part;
	long ev;

	if (sim_estimate(wl, opt, e) != 0)
		return refuse(err, errlen, "%s: out of memory", wl->path);
	big = wl->nregions ? &wl->regions[largest_region(wl)] : NULL;
	/* slot ids and frame ids (frames_bound: THP pages take three) are 32 bits */
	if (big && (e->pages > MAX_PAGES ||
		    add(add(e->pages, 2), mul(2, e->thp_pages)) > UINT32_MAX))
		return refuse(err, errlen, "%s:%u: [region %s] %s: the simulator holds at most "
			      "%" PRIu64 " pages (8 TiB) in all, every process's copy counted "
			      "(a THP page as three); this workload maps %" PRIu64, wl->path,
			      big->size_line, big->name, size_text(big, what, sizeof(what)),
			      MAX_PAGES, e->pages);
	if ((ev = page_sharing_too_large(wl)) >= 0) {
		if ((size_t)ev == wl->nevents)
			return refuse(err, errlen, "%s: [global] max_page_sharing = %" PRIu64 ": the "
				      "simulator takes at most %u (a page's mappings are 23 bits)",
				      wl->path, wl->knobs[WL_KNOB_MAX_PAGE_SHARING],
				      SIM_MAX_PAGE_SHARING);
		return refuse(err, errlen, "%s:%u: [event %s] set = max_page_sharing=%s: the "
			      "simulator takes at most %u (a page's mappings are 23 bits)", wl->path,
			      wl->events[ev].line, wl->events[ev].name, wl->events[ev].knob_text,
			      SIM_MAX_PAGE_SHARING);
	}
	if (e->writes != SIM_WRITES_UNKNOWN && e->writes > SIM_ADMIT_MAX_WRITES) {
		if (e->top_writer >= 0 && e->continuous_writes >= e->writes / 2) {
			const struct wl_writer *w = &wl->writers[e->top_writer];

			return refuse(err, errlen, "%s:%u: [writer %s] rate = %" PRIu64 ": %.3g page "
				      "writes over %s%s; admission refuses more than %.0e (at some "
				      "ten million a second, more than a day of host time)", wl->path,
				      w->rate_line, w->name, w->rate, (double)e->continuous_writes,
				      stop_text(wl, what, sizeof(what)),
				      e->writes == e->continuous_writes ? "" : ", with the other writes",
				      (double)SIM_ADMIT_MAX_WRITES);
		}
		return refuse(err, errlen, "%s:%u: [global] %s: the writers write %.3g pages over "
			      "the run; admission refuses more than %.0e (at some ten million a "
			      "second, more than a day of host time)", wl->path, wl->stop_line,
			      stop_text(wl, what, sizeof(what)), (double)e->writes,
			      (double)SIM_ADMIT_MAX_WRITES);
	}
	if (e->rows == UINT64_MAX && wl->stop == WL_STOP_TIME)
		return refuse(err, errlen, "%s:%u: [global] %s: with this cost model a %s can "
			      "take no simulated time (batch_ns or busy_batch_ns and the sleep are 0%s), so nothing "
			      "bounds the run's trace rows", wl->path, wl->stop_line,
			      stop_text(wl, what, sizeof(what)),
			      opt && opt->per_batch ? "batch" : "full scan",
			      opt && opt->per_batch ? "" : ", and no page is visited at a cost");
	if (e->bytes <= available)
		return 0;
	wl_bytes_text(e->bytes, need, sizeof(need));
	wl_bytes_text(available, have, sizeof(have));
	parts_text(e, parts, sizeof(parts));
	/* page captures grow with the pages as much as with the rows: pages' side */
	pages_part = add(add(add(e->page_bytes, e->node_bytes), e->content_bytes),
			 e->capture_bytes);
	if (!big || e->trace_bytes > pages_part)
		return refuse(err, errlen, "%s:%u: [global] %s needs %s of simulator memory "
			      "(%s); this machine has %s available", wl->path, wl->stop_line,
			      stop_text(wl, what, sizeof(what)), need, parts, have);
	return refuse(err, errlen, "%s:%u: [region %s] %s needs %s of simulator memory (%s); "
		      "this machine has %s available", wl->path, big->size_line, big->name,
		      size_text(big, what, sizeof(what)), need, parts, have);
}
