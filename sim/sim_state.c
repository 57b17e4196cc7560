/*
 * sim_state.c - the simulated machine as storage: creation, the pools it is
 * made of (page slots, frames, stable nodes), processes and mappings, the
 * checksum cache every detector reads, cloning, and reading the counters.
 *
 * KSM's algorithm is in sim_merge.c and sim_scan.c, user actions in
 * sim_user.c, sysfs in sim_sysfs.c; what the state is, field by field, is
 * described in sim_fields.h, from which sim_image.c hashes and compares it
 * and sim_mc.c copies and snapshots it for the model checker. Pools grow by
 * doubling; frames and stable nodes are recycled through free lists, page
 * slots are not (an area keeps its slots until the simulator is freed, which
 * keeps slot ids stable for rmap_item links).
 */
#include "sim_fields.h"
#include "sim_detector.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void sim_config_default(struct sim_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->kernel = WL_KERNEL_DEFAULT;
	cfg->detector = WL_DETECTOR_CHECKSUM;
	cfg->nr_nodes = 1;
	cfg->thp_dirty = SIM_THP_DIRTY_ALL;
	/* measured by ksmkit calibrate on the project's test machine (6.18,
	 * x86, 2 vCPUs; 65536 pages, 3 repeats; the rounded medians of three
	 * calibrations on 2026-12-02, bench/results/costs-2026-12-02.ini is
	 * one). scan_ns came out at 841, 0 and 2 ns, absent_page_ns and
	 * rmap_free_ns at 0 every time: below the noise of the scans that have
	 * them. thp_split_ns is an estimate calibrate does not measure;
	 * prune_ns is the first fit of calib.c's chain-prunes host (2026-12-06
	 * 15:21 UTC: 35.5 +- 1.9 ns a dup looked at; the scan that builds its
	 * chain of 1024 dups looks at 1.57 million and cost the kernel 38-42
	 * ns a dup beyond the model without the term); skip_ns is fitted
	 * since 2026-12-06 on busy unique pages with smart scan: beside its
	 * visit the fit wanted it below 0 (a skipped page does not go back to
	 * ksmd's loop: less than a visit), so since
	 * 11:20 that day a skip is charged in place of the visit, and its
	 * default is visit_ns's, the model as it was for a batch after a
	 * sleep; sample_word_ns is checksum_ns times the measured
	 * ratio of a 16-word sample's hash to a page's on pages not in cache,
	 * over 16 (calib.c). busy_batch_ns and busy_mm_slot_ns came later: the
	 * medians of three calibrations on 2026-12-02 at 10:30-10:35 UTC (0,
	 * 238 +- 797 and 0; 3444, 4021 and 3823), the machine then slower than
	 * in the morning (visit_ns 333-341, mm_slot_ns 12200-17900).
	 * zero_pte_ns came on 2026-12-03: the median of three calibrations
	 * at 08:41-08:45 UTC (27.9 +- 1.4, 26.1 and 29.0). busy_visit_ns on
	 * 2026-12-06: three calibrations minutes apart gave it 0.91, 0.79 and
	 * 0.85 of visit_ns (224/246, 228/288, 247/292, +- 7 each), so it is
	 * visit_ns times their median, 0.85. busy_scan_ns, and busy_batch_ns
	 * apart from it, on 2026-12-06 02:00-02:20 UTC: three calibrations with
	 * the busy hosts of 8 pages and of 8 batches a scan gave 1625 +- 376,
	 * 1244 +- 290 and 2109 +- 321 (busy_batch_ns 216 +- 121, 587 +- 104,
	 * 209 +- 101); the medians, rounded. merge_free_ns split from
	 * merge_ns on 2026-12-06 02:35-02:45 UTC with the forked host: 560 +-
	 * 321, 720 +- 285 and 895 +- 268 (merge_ns 706, 645 and 303; their sums
	 * 1266, 1365 and 1199, where merge_ns alone had been 1360); the
	 * medians. The kernel agreed: 200 same pages took 411-609 us to merge
	 * in scan 2, 100 forked ones (half the merges free nothing) 344-471.
	 * lru_drain_ns (2026-12-06): the kernel's scan after two pages were
	 * faulted in, less the same scan without, median of 30 paired runs;
	 * first_merge_ns: the intercept of the merge scans in sim.h */
	cfg->costs = (struct sim_costs){
		.hz = 250,
		.visit_ns = 230,
		.visit_pmd_ns = 160,
		.cold_visit_ns = 46,
		.busy_visit_ns = 195,
		.checksum_ns = 725,
		.sample_word_ns = 15.3,
		.memcmp_byte_ns = 0.073,
		.tree_level_ns = 162,
		.dirty_test_ns = 29.4,
		.tlb_flush_ns = 27.9,
		.thp_flush_ns = 27.9,
		.merge_ns = 645,
		.merge_free_ns = 720,
		.cold_merge_ns = 0,
		.first_merge_ns = 10000,
		.zero_merge_ns = 1010,
		.thp_split_ns = 20000,
		.skip_ns = 230,
		.batch_ns = 17200,
		.refill_ns = 0,
		.busy_batch_ns = 220,
		.scan_ns = 0,
		.busy_scan_ns = 1620,
		.lru_drain_ns = 15000,
		.mm_slot_ns = 12300,
		.busy_mm_slot_ns = 3800,
		.vma_ns = 640,
		.absent_page_ns = 0,
		.zero_pte_ns = 28,
		.rmap_alloc_ns = 190,
		.rmap_free_ns = 0,
		.prune_ns = 36,
		.sleep_adjust_ns = 3770000,
		.refill_tau_ms = SIM_REFILL_TAU_MS,
	};
}

/*
 * Resize @*arr (of @size-byte elements, @*cap of them) to @n, zeroing what is
 * new when @zero (a pool whose elements are set as they are allocated leaves
 * it untouched: a doubled capacity then costs no memory until it is used).
 */
static int resize(void **arr, uint32_t *cap, uint32_t n, size_t size, bool zero)
{
	void *p = realloc(*arr, (size_t)n * size);

	if (!p)
		return -1;
	if (zero)
		memset((char *)p + (size_t)*cap * size, 0, (size_t)(n - *cap) * size);
	*arr = p;
	*cap = n;
	return 0;
}

/* Grow @*arr to hold @need, by sim_pool_cap's rule (for one-at-a-time growth). */
static int grow(void **arr, uint32_t *cap, uint32_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	return resize(arr, cap, sim_pool_cap(*cap, need), size, true);
}

/* grow(), for a pool that sets each element as it allocates it. */
static int grow_unzeroed(void **arr, uint32_t *cap, uint32_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	return resize(arr, cap, sim_pool_cap(*cap, need), size, false);
}

/*
 * Grow @*arr to exactly @need (mmap and fork, which know what they need:
 * doubling there would touch memory nothing uses, and sim_admit.c could not
 * bound it as tightly).
 */
static int reserve(void **arr, uint32_t *cap, uint32_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	return resize(arr, cap, need, size, true);
}

/*
 * Page slots, and beside them the detector's state of each rmap_item
 * (sim_detector_item()), grown together: exactly to @need, or by
 * sim_pool_cap's rule when @doubling.
 */
static int grow_slots(struct sim *s, uint32_t need, bool doubling)
{
	int (*how)(void **, uint32_t *, uint32_t, size_t) = doubling ? grow : reserve;

	if (how((void **)&s->page, &s->slots_cap, need, sizeof(*s->page)))
		return -1;
	if (!s->item_bytes)
		return 0;
	return how((void **)&s->item_state, &s->items_cap, need, s->item_bytes);
}

/*
 * Frames, and beside them a marker per THP folio of them (sim.folio_seen):
 * exactly to @need, or by sim_pool_cap's rule when @doubling.
 */
static int grow_frames(struct sim *s, uint32_t need, bool doubling)
{
	int (*how)(void **, uint32_t *, uint32_t, size_t) = doubling ? grow : reserve;

	if (how((void **)&s->frame, &s->frames_cap, need, sizeof(*s->frame)))
		return -1;
	return reserve((void **)&s->folio_seen, &s->folios_cap, SIM_FOLIOS(s->frames_cap), 1);
}

/* A frame as new: zeroed, and its folio's marker when it is a folio's first. */
static void frame_clear(struct sim *s, uint32_t id)
{
	memset(&s->frame[id], 0, sizeof(s->frame[id]));
	if (id % SIM_THP_PAGES == 0)
		s->folio_seen[id / SIM_THP_PAGES] = 0;
}

static int check_config(const struct sim_config *cfg, char *err, size_t errlen)
{
	if (cfg->nr_nodes < 1 || cfg->nr_nodes > SIM_MAX_NODES) {
		snprintf(err, errlen, "nr_nodes must be 1 to %u", SIM_MAX_NODES);
		return -1;
	}
	if ((unsigned)cfg->kernel >= WL_KERNEL_COUNT) {
		snprintf(err, errlen, "unknown kernel semantics");
		return -1;
	}
	if ((unsigned)cfg->detector >= WL_DETECTOR_COUNT) {
		snprintf(err, errlen, "unknown detector");
		return -1;
	}
	if ((unsigned)cfg->checksum >= WL_CHECKSUM_COUNT) {
		snprintf(err, errlen, "unknown checksum");
		return -1;
	}
	if ((unsigned)cfg->smart_scan_policy >= WL_SMART_SCAN_COUNT) {
		snprintf(err, errlen, "unknown smart_scan_policy");
		return -1;
	}
	if ((unsigned)cfg->thp_dirty >= WL_THP_DIRTY_COUNT) {
		snprintf(err, errlen, "unknown thp_dirty policy");
		return -1;
	}
	if (cfg->costs.hz == 0) {
		snprintf(err, errlen, "costs.hz must be positive");
		return -1;
	}
	return 0;
}

struct sim *sim_new(const struct sim_config *cfg, char *err, size_t errlen)
{
	struct sim *s;

	if (check_config(cfg, err, errlen) != 0)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		goto oom;
	s->cfg = *cfg;
	s->kernel_row = wl_kernel_row(cfg->kernel);
	/* a rule that reads a checksum's value needs the kernel's value */
	if (sim_smart_scan_rule_of(cfg->smart_scan_policy)->reads_checksum)
		s->cfg.checksum = WL_CHECKSUM_XXH64;
	s->item_bytes = sim_detector_of(cfg->detector)->item_bytes;
	for (int k = 0; k < WL_KNOB_COUNT; k++)
		s->knobs.value[k] = wl_knob_info(k)->def;
	/* a kernel without smart_scan never skips: as if it were off */
	if (!wl_kernel_has_knob(cfg->kernel, WL_KNOB_SMART_SCAN))
		s->knobs.value[WL_KNOB_SMART_SCAN] = 0;
	s->knobs.run = 0;
	s->cold = true; /* ksmd's first batch finds nothing in the caches */
	s->slept_ns = UINT64_MAX;
	s->scan.mm = SIM_NO_SLOT;
	s->slot_first = s->slot_last = SIM_NO_SLOT;
	/* id 0 of every pool means "none" */
	if (sim_content_store_init(&s->content) != 0 ||
	    grow_slots(s, 1, true) != 0 ||
	    grow_frames(s, 1, true) != 0 ||
	    grow((void **)&s->snode, &s->snodes_cap, 1, sizeof(*s->snode)) != 0)
		goto oom;
	s->nslots = s->nframes = s->nsnodes = 1;
	s->zero_checksum = sim_content_checksum_as(&s->content, 0, s->cfg.checksum);
	return s;
oom:
	sim_free(s);
	snprintf(err, errlen, "out of memory");
	return NULL;
}

void sim_free(struct sim *s)
{
	if (!s)
		return;
	sim_content_store_free(&s->content);
	sim_deferred_free(s->deferred);
#define FREE_POOL(p, cap, used, elem) free(s->p);
	SIM_POOLS(FREE_POOL, s)
#undef FREE_POOL
	free(s);
}

static int clone_array(void **dst, const void *src, uint32_t cap, size_t size)
{
	*dst = NULL;
	if (!cap)
		return 0;
	*dst = malloc((size_t)cap * size);
	if (!*dst)
		return -1;
	memcpy(*dst, src, (size_t)cap * size);
	return 0;
}

struct sim *sim_clone(const struct sim *s)
{
	struct sim *c = malloc(sizeof(*c));

	assert(!s->deferred); /* its writes waiting would be lost */
	if (!c)
		return NULL;
	*c = *s;
	c->deferred = NULL;
#define FORGET_POOL(p, cap, used, elem) c->p = NULL;
	SIM_POOLS(FORGET_POOL, c)
#undef FORGET_POOL
	memset(&c->content, 0, sizeof(c->content));
#define CLONE_POOL(p, cap, used, elem) \
	if (clone_array((void **)&c->p, s->p, s->cap, elem) != 0) \
		goto oom;
	SIM_POOLS(CLONE_POOL, s)
#undef CLONE_POOL
	if (sim_content_store_clone(&c->content, &s->content) != 0)
		goto oom;
	return c;
oom:
	sim_free(c);
	return NULL;
}

/* --- pools ------------------------------------------------------------------ */

uint32_t sim_frame_alloc(struct sim *s, uint64_t content, unsigned node)
{
	uint32_t id;
	struct sim_frame *f;

	if (s->frame_free) {
		id = s->frame_free;
		s->frame_free = s->frame[id].stable_node;
	} else {
		if (grow_frames(s, s->nframes + 1, true))
			return 0;
		id = s->nframes++;
	}
	frame_clear(s, id);
	s->lru_pending = true;
	f = &s->frame[id];
	f->content = content;
	f->mapcount = 1;
	f->node = (uint16_t)node;
	sim_content_ref(&s->content, content);
	return id;
}

/*
 * A THP folio: 512 frames with consecutive, 512-aligned ids, zero-filled,
 * each mapped once. Ids skipped for alignment go to the free list.
 */
int sim_frames_alloc_thp(struct sim *s, unsigned node, uint32_t *first)
{
	uint32_t start = (s->nframes + SIM_THP_PAGES - 1) / SIM_THP_PAGES * SIM_THP_PAGES;

	if (grow_frames(s, start + SIM_THP_PAGES, true))
		return ENOMEM;
	for (uint32_t id = s->nframes; id < start; id++) {
		frame_clear(s, id);
		s->frame[id].stable_node = s->frame_free;
		s->frame_free = id;
	}
	for (uint32_t id = start; id < start + SIM_THP_PAGES; id++) {
		struct sim_frame *f = &s->frame[id];

		frame_clear(s, id);
		f->mapcount = 1;
		f->node = (uint16_t)node;
		f->flags = FRAME_LARGE;
	}
	s->nframes = start + SIM_THP_PAGES;
	s->lru_pending = true;
	*first = start;
	return 0;
}

void sim_frame_put(struct sim *s, uint32_t id)
{
	struct sim_frame *f = &s->frame[id];

	assert(f->mapcount > 0);
	if (--f->mapcount)
		return;
	/* freed: a KSM page's stable node now fails the keyhole check */
	if (f->flags & FRAME_KSM)
		sim_ksm_page_freed(s, id);
	sim_content_unref(&s->content, f->content);
	frame_clear(s, id);
	f->stable_node = s->frame_free;
	s->frame_free = id;
}

/* --- the checksum cache ------------------------------------------------------ */

/*
 * Fill the frame's checksum cache (sim_frame_checksum() asks when it is not
 * valid). With checksum = xxh64, a plain page's checksum is computed
 * together with those of the next pages' frames (usually scanned next) when
 * they are plain, not KSM and not cached yet, which divides the host time of
 * first visits; the kernel's cost is charged per visit anyway, by whichever
 * detector takes the checksum.
 */
void sim_checksum_fill(struct sim *s, uint32_t slot, uint32_t frame)
{
	struct sim_frame *f = &s->frame[frame], *batch[SIM_CHECKSUM_BATCH] = { f };
	uint64_t word[SIM_CHECKSUM_BATCH] = { 0 };
	uint32_t sum[SIM_CHECKSUM_BATCH];
	unsigned n = 1;

	if (s->cfg.checksum != WL_CHECKSUM_XXH64 || sim_content_is_patched(f->content)) {
		f->checksum = sim_content_checksum_as(&s->content, f->content, s->cfg.checksum);
		f->flags |= FRAME_CSUM_VALID;
		return;
	}
	for (uint32_t next = slot + 1; next < s->nslots && next < slot + SIM_CHECKSUM_BATCH; next++) {
		const struct sim_page *p = &s->page[next];
		struct sim_frame *g;
		bool taken = false;

		if ((p->pte & (PTE_PRESENT | PTE_KSM_ZERO)) != PTE_PRESENT)
			continue;
		g = &s->frame[p->frame];
		/* a KSM page's checksum word holds its stable node */
		if ((g->flags & (FRAME_CSUM_VALID | FRAME_KSM)) || sim_content_is_patched(g->content))
			continue;
		for (unsigned k = 0; k < n; k++)
			taken |= batch[k] == g;
		if (!taken)
			batch[n++] = g;
	}
	for (unsigned k = 0; k < n; k++)
		word[k] = batch[k]->content;
	sim_plain_checksums_batch(word, n, sum);
	for (unsigned k = 0; k < n; k++) {
		batch[k]->checksum = sum[k];
		batch[k]->flags |= FRAME_CSUM_VALID;
	}
}

uint32_t sim_snode_alloc(struct sim *s)
{
	uint32_t id;

	if (s->snode_free) {
		id = s->snode_free;
		s->snode_free = s->snode[id].first;
	} else {
		if (s->nsnodes + 1 >= RB_MAX_ID || /* snodes are tree node ids */
		    grow_unzeroed((void **)&s->snode, &s->snodes_cap, s->nsnodes + 1,
				  sizeof(*s->snode)))
			return 0;
		id = s->nsnodes++;
	}
	memset(&s->snode[id], 0, sizeof(s->snode[id]));
	return id;
}

void sim_snode_free(struct sim *s, uint32_t id)
{
	memset(&s->snode[id], 0, sizeof(s->snode[id]));
	s->snode[id].kind = SNODE_FREE;
	s->snode[id].first = s->snode_free;
	s->snode_free = id;
}

uint32_t sim_area_of_slot(const struct sim *s, uint32_t slot)
{
	uint32_t lo = 0, hi = s->narea;

	/* areas are created with increasing slots: find the last start <= slot */
	while (hi - lo > 1) {
		uint32_t mid = (lo + hi) / 2;

		if (s->area[mid].slot <= slot)
			lo = mid;
		else
			hi = mid;
	}
	assert(slot >= s->area[lo].slot && slot < s->area[lo].slot + s->area[lo].npages);
	return lo;
}

/* --- processes and mappings --------------------------------------------------- */

int sim_process_new(struct sim *s)
{
	struct sim_mm *mm;

	if (grow((void **)&s->mm, &s->mm_cap, s->nmm + 1, sizeof(*s->mm)))
		return -ENOMEM;
	mm = &s->mm[s->nmm];
	memset(mm, 0, sizeof(*mm));
	mm->state = MM_ALIVE;
	mm->slot_prev = mm->slot_next = SIM_NO_SLOT;
	mm->next_vpn = 16; /* leave low addresses unmapped: address 0 means "none" */
	return (int)s->nmm++;
}

int sim_nprocesses(const struct sim *s)
{
	return (int)s->nmm;
}

/*
 * Frame ids a machine with @nslots page slots, @more_thp of them in a new THP
 * area, can ever use: one frame per page slot mapped (slot 0 included, as
 * frame 0 is), one more while a COW copy exists beside the page it replaces,
 * and up to 1023 for each THP folio fault, which takes 512 new aligned ids
 * and leaves the skipped ones free. A THP folio faults at most once per 512
 * slots (slots are never reused), hence two ids per THP slot.
 */
static uint32_t frames_bound(const struct sim *s, uint32_t nslots, uint64_t more_thp)
{
	uint64_t thp = more_thp, n;

	for (uint32_t i = 0; i < s->narea; i++)
		if (s->area[i].thp)
			thp += s->area[i].npages;
	n = (uint64_t)nslots + 1 + 2 * thp;
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

int sim_mmap(struct sim *s, int mmid, uint64_t npages, int node, bool thp, uint32_t label)
{
	struct sim_mm *mm;
	struct sim_area *a;
	uint64_t start;

	sim_memo_break(s); /* the scan's order or its pages may change */
	assert(mmid >= 0 && (uint32_t)mmid < s->nmm);
	mm = &s->mm[mmid];
	if (mm->state != MM_ALIVE)
		return -EINVAL;
	if (npages == 0 || npages >= RB_MAX_ID - s->nslots) /* slots are tree node ids */
		return -ENOMEM;
	if (node >= (int)s->cfg.nr_nodes)
		return -EINVAL;
	/* frames too, as many as the machine can ever use (sim_frames_bound) */
	if (grow((void **)&s->area, &s->area_cap, s->narea + 1, sizeof(*s->area)) ||
	    grow_slots(s, s->nslots + (uint32_t)npages, false) ||
	    grow_frames(s, frames_bound(s, s->nslots + (uint32_t)npages, thp ? npages : 0),
			false))
		return -ENOMEM;
	/* THP areas start on a 2 MiB boundary, as the backend maps them */
	start = mm->next_vpn;
	if (thp)
		start = (start + SIM_THP_PAGES - 1) / SIM_THP_PAGES * SIM_THP_PAGES;
	a = &s->area[s->narea];
	memset(a, 0, sizeof(*a));
	a->mm = (uint32_t)mmid;
	a->label = label;
	a->start = start;
	a->npages = npages;
	a->slot = s->nslots;
	a->node = (uint16_t)(node < 0 ? 0 : node);
	a->thp = thp;
	a->dirty_tracking = true;
	for (uint64_t p = 0; p < npages; p++) {
		memset(&s->page[a->slot + p], 0, sizeof(s->page[0]));
		s->page[a->slot + p].pte = PTE_MAPPED;
		if (mm->merge_any)
			s->page[a->slot + p].pte |= PTE_MERGEABLE;
	}
	if (mm->merge_any)
		mm->mergeable_pages += npages;
	s->nslots += (uint32_t)npages;
	mm->next_vpn = start + npages + 1; /* a guard page keeps mappings apart */
	return (int)s->narea++;
}

void sim_area_set_dirty_tracking(struct sim *s, int area, bool tracked)
{
	s->area[area].dirty_tracking = tracked;
}

int sim_area_find(const struct sim *s, int mm, uint32_t label)
{
	for (uint32_t i = 0; i < s->narea; i++)
		if (s->area[i].mm == (uint32_t)mm && s->area[i].label == label && !s->area[i].dead)
			return (int)i;
	return -1;
}

long sim_page_frame(const struct sim *s, int area, uint64_t page)
{
	const struct sim_page *p = &s->page[s->area[area].slot + page];

	if (!(p->pte & PTE_PRESENT))
		return 0;
	if (p->pte & PTE_KSM_ZERO)
		return -1;
	return p->frame;
}

/* --- observation ---------------------------------------------------------- */

void sim_counters(const struct sim *s, int64_t out[TRACE_COUNTER_COUNT])
{
	const struct sim_counts *c = &s->count;
	int64_t volatile_pages = c->rmap_items - c->pages_shared - c->pages_sharing -
				 c->pages_unshared;

	out[TRACE_PAGES_SHARED] = c->pages_shared;
	out[TRACE_PAGES_SHARING] = c->pages_sharing;
	out[TRACE_PAGES_UNSHARED] = c->pages_unshared;
	out[TRACE_PAGES_VOLATILE] = volatile_pages < 0 ? 0 : volatile_pages;
	out[TRACE_PAGES_SCANNED] = c->pages_scanned;
	out[TRACE_PAGES_SKIPPED] = c->pages_skipped;
	out[TRACE_FULL_SCANS] = (int64_t)s->scan.seqnr;
	out[TRACE_STABLE_NODE_CHAINS] = c->stable_node_chains;
	out[TRACE_STABLE_NODE_DUPS] = c->stable_node_dups;
	out[TRACE_KSM_ZERO_PAGES] = c->ksm_zero_pages;
	out[TRACE_GENERAL_PROFIT] = (c->pages_sharing + c->ksm_zero_pages) *
					    (int64_t)CONTENT_PAGE_SIZE -
				    c->rmap_items * 64;
	out[TRACE_PAGES_TO_SCAN] = (int64_t)s->knobs.value[WL_KNOB_PAGES_TO_SCAN];
	/* what the kernel lacks reads 0, as the backend reads a missing file */
	for (int i = 0; !wl_kernel_exports_all(s->cfg.kernel) && i < TRACE_COUNTER_COUNT; i++)
		if (!wl_kernel_exports(s->cfg.kernel, trace_counter_name(i), NULL))
			out[i] = 0;
}

void sim_process_stat(const struct sim *s, int mmid, struct trace_proc_stat *out)
{
	const struct sim_mm *mm = &s->mm[mmid];

	memset(out, 0, sizeof(*out));
	if (mm->state != MM_ALIVE)
		return;
	out->present = true;
	out->field[TRACE_KSM_RMAP_ITEMS] = mm->rmap_items;
	out->field[TRACE_KSM_ZERO_PAGES_PROC] = mm->zero_pages;
	out->field[TRACE_KSM_MERGING_PAGES] = mm->merging_pages;
	out->field[TRACE_KSM_PROCESS_PROFIT] = (mm->merging_pages + mm->zero_pages) *
						       (int64_t)CONTENT_PAGE_SIZE -
					       mm->rmap_items * 64;
	out->field[TRACE_KSM_MERGE_ANY] = mm->merge_any;
	out->field[TRACE_KSM_MERGEABLE] = mm->mergeable_pages > 0;
	for (int i = 0; !wl_kernel_exports_all(s->cfg.kernel) && i < TRACE_PROC_FIELD_COUNT; i++)
		if (!wl_kernel_exports(s->cfg.kernel, trace_proc_field_name(i), NULL))
			out->field[i] = 0;
}

uint64_t sim_memo_inserts(const struct sim *s)
{
	return s->memo.inserts;
}

uint64_t sim_bulk_skips(const struct sim *s)
{
	return s->bulk_skips;
}

void sim_work_get(const struct sim *s, struct sim_work *out)
{
	*out = s->work;
}

void sim_term_costs_ns(const struct sim *s, uint64_t out[SIM_TERM_COUNT])
{
	for (int t = 0; t < SIM_TERM_COUNT; t++)
		out[t] = (uint64_t)(sim_term_ns(&s->cfg.costs, &s->work, t) + 0.5);
}

uint64_t sim_full_scans(const struct sim *s) { return s->scan.seqnr; }
uint64_t sim_now_ns(const struct sim *s) { return s->now_ns; }
uint64_t sim_ksmd_cpu_ns(const struct sim *s) { return s->ksmd_cpu_ns; }
void sim_advance_ns(struct sim *s, uint64_t ns)
{
	s->now_ns += ns;
	s->cold = true;
	s->slept_ns = ns > UINT64_MAX - s->slept_ns ? UINT64_MAX : s->slept_ns + ns;
}

void sim_ksmd_cool(struct sim *s)
{
	s->cold = true;
}
