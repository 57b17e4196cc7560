/*
 * sim_state.c - the simulated machine as a value: creation, the pools it is
 * made of (page slots, frames, stable nodes), processes and mappings,
 * the checksum cache every detector reads, cloning, hashing, equality, and
 * reading the counters.
 *
 * KSM's algorithm is in sim_merge.c and sim_scan.c, user actions in
 * sim_user.c, sysfs in sim_sysfs.c; this file only owns storage and
 * observation. Pools grow by doubling; frames and stable nodes are recycled
 * through free lists, page slots are not (an area keeps its slots until the
 * simulator is freed, which keeps slot ids stable for rmap_item links).
 */
#include "sim_internal.h"
#include "sim_detector.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <malloc.h>
#include <string.h>
#include <xxhash.h>

#include "sim_mc.h"

void sim_config_default(struct sim_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->kernel = WL_KERNEL_DEFAULT;
	cfg->detector = WL_DETECTOR_CHECKSUM;
	cfg->nr_nodes = 1;
	cfg->thp_dirty = SIM_THP_DIRTY_ALL;
	/* measured by ksmkit calibrate on the project's test machine (6.18, x86;
	 * 65536 pages, 3 repeats, rounded medians of three calibrations;
	 * visit_pmd_ns: the median of eight, a fit that dropped it as 0;
	 * thp_split_ns and skip_ns are estimates calibrate does not measure;
	 * sample_word_ns: checksum_ns times the ratio of a 16-word sample's
	 * hash to a page's on pages not in cache, over 16; the ratio 0.40 is
	 * the median of five `calibrate --no-kernel` runs there) */
	cfg->costs = (struct sim_costs){
		.hz = 250,
		.visit_ns = 260,
		.visit_pmd_ns = 65,
		.checksum_ns = 620,
		.sample_word_ns = 15.5,
		.memcmp_byte_ns = 0.1,
		.tree_level_ns = 200,
		.dirty_test_ns = 42.5,
		.tlb_flush_ns = 16,
		.thp_flush_ns = 16,
		.merge_ns = 1000,
		.thp_split_ns = 20000,
		.skip_ns = 60,
		.batch_ns = 15000,
		.sleep_adjust_ns = 2650000,
	};
}

/* Resize @*arr (of @size-byte elements, @*cap of them) to @n, zeroing what is new. */
static int resize(void **arr, uint32_t *cap, uint32_t n, size_t size)
{
	void *p = realloc(*arr, (size_t)n * size);

	if (!p)
		return -1;
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
	return resize(arr, cap, sim_pool_cap(*cap, need), size);
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
	return resize(arr, cap, need, size);
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
	uint64_t zero[CONTENT_PAGE_SIZE / 8] = { 0 };

	if (check_config(cfg, err, errlen) != 0)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		goto oom;
	s->cfg = *cfg;
	s->item_bytes = sim_detector_of(cfg->detector)->item_bytes;
	for (int k = 0; k < WL_KNOB_COUNT; k++)
		s->knobs.value[k] = wl_knob_info(k)->def;
	/* a kernel without smart_scan never skips: as if it were off */
	if (!wl_kernel_has_knob(cfg->kernel, WL_KNOB_SMART_SCAN))
		s->knobs.value[WL_KNOB_SMART_SCAN] = 0;
	s->knobs.run = 0;
	s->scan.mm = SIM_NO_SLOT;
	s->slot_first = s->slot_last = SIM_NO_SLOT;
	s->zero_checksum = content_checksum(zero);
	/* id 0 of every pool means "none" */
	if (sim_content_store_init(&s->content) != 0 ||
	    grow_slots(s, 1, true) != 0 ||
	    grow((void **)&s->frame, &s->frames_cap, 1, sizeof(*s->frame)) != 0 ||
	    grow((void **)&s->snode, &s->snodes_cap, 1, sizeof(*s->snode)) != 0)
		goto oom;
	s->nslots = s->nframes = s->nsnodes = 1;
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
	free(s->mm);
	free(s->area);
	free(s->page);
	free(s->item_state);
	free(s->frame);
	free(s->snode);
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

	if (!c)
		return NULL;
	*c = *s;
	c->mm = NULL;
	c->area = NULL;
	c->page = NULL;
	c->item_state = NULL;
	c->frame = NULL;
	c->snode = NULL;
	memset(&c->content, 0, sizeof(c->content));
	if (clone_array((void **)&c->mm, s->mm, s->mm_cap, sizeof(*s->mm)) != 0 ||
	    clone_array((void **)&c->area, s->area, s->area_cap, sizeof(*s->area)) != 0 ||
	    clone_array((void **)&c->page, s->page, s->slots_cap, sizeof(*s->page)) != 0 ||
	    clone_array((void **)&c->item_state, s->item_state, s->items_cap, s->item_bytes) != 0 ||
	    clone_array((void **)&c->frame, s->frame, s->frames_cap, sizeof(*s->frame)) != 0 ||
	    clone_array((void **)&c->snode, s->snode, s->snodes_cap, sizeof(*s->snode)) != 0 ||
	    sim_content_store_clone(&c->content, &s->content) != 0) {
		sim_free(c);
		return NULL;
	}
	return c;
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
		if (grow((void **)&s->frame, &s->frames_cap, s->nframes + 1, sizeof(*s->frame)))
			return 0;
		id = s->nframes++;
	}
	f = &s->frame[id];
	memset(f, 0, sizeof(*f));
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

	if (grow((void **)&s->frame, &s->frames_cap, start + SIM_THP_PAGES, sizeof(*s->frame)))
		return ENOMEM;
	for (uint32_t id = s->nframes; id < start; id++) {
		memset(&s->frame[id], 0, sizeof(s->frame[id]));
		s->frame[id].stable_node = s->frame_free;
		s->frame_free = id;
	}
	for (uint32_t id = start; id < start + SIM_THP_PAGES; id++) {
		struct sim_frame *f = &s->frame[id];

		memset(f, 0, sizeof(*f));
		f->mapcount = 1;
		f->node = (uint16_t)node;
		f->flags = FRAME_LARGE;
	}
	s->nframes = start + SIM_THP_PAGES;
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
	sim_content_unref(&s->content, f->content);
	memset(f, 0, sizeof(*f));
	f->stable_node = s->frame_free;
	s->frame_free = id;
}

/* --- the checksum cache ------------------------------------------------------ */

/*
 * Fill the frame's checksum cache (sim_frame_checksum() asks when it is not
 * valid). A plain page's checksum is computed
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

	if (sim_content_is_patched(f->content)) {
		f->checksum = sim_content_checksum(&s->content, f->content);
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
		if (grow((void **)&s->snode, &s->snodes_cap, s->nsnodes + 1, sizeof(*s->snode)))
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

	assert(mmid >= 0 && (uint32_t)mmid < s->nmm);
	mm = &s->mm[mmid];
	if (mm->state != MM_ALIVE)
		return -EINVAL;
	if (npages == 0 || npages > UINT32_MAX - s->nslots)
		return -ENOMEM;
	if (node >= (int)s->cfg.nr_nodes)
		return -EINVAL;
	/* frames too, as many as the machine can ever use (sim_frames_bound) */
	if (grow((void **)&s->area, &s->area_cap, s->narea + 1, sizeof(*s->area)) ||
	    grow_slots(s, s->nslots + (uint32_t)npages, false) ||
	    reserve((void **)&s->frame, &s->frames_cap,
		    frames_bound(s, s->nslots + (uint32_t)npages, thp ? npages : 0),
		    sizeof(*s->frame)))
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

void sim_work_get(const struct sim *s, struct sim_work *out)
{
	*out = s->work;
}

uint64_t sim_full_scans(const struct sim *s) { return s->scan.seqnr; }
uint64_t sim_now_ns(const struct sim *s) { return s->now_ns; }
uint64_t sim_ksmd_cpu_ns(const struct sim *s) { return s->ksmd_cpu_ns; }
void sim_advance_ns(struct sim *s, uint64_t ns) { s->now_ns += ns; }

/* --- hashing and equality ------------------------------------------------------ */

/*
 * A canonical byte image of the state: every field that can influence the
 * future, written one by one (never raw structs: padding is not state), with
 * contents by their byte hash. Caches (checksums) are left out.
 */
struct image {
	uint8_t *buf;
	size_t len, cap;
	bool oom;
};

static void put(struct image *im, const void *p, size_t n)
{
	if (im->oom)
		return;
	if (im->len + n > im->cap) {
		size_t cap = im->cap ? im->cap * 2 : 4096;
		uint8_t *b;

		while (cap < im->len + n)
			cap *= 2;
		b = realloc(im->buf, cap);
		if (!b) {
			im->oom = true;
			return;
		}
		im->buf = b;
		im->cap = cap;
	}
	memcpy(im->buf + im->len, p, n);
	im->len += n;
}

#define PUT(im, v) do { __typeof__(v) put_tmp_ = (v); put((im), &put_tmp_, sizeof(put_tmp_)); } while (0)

static void image_ksm(struct image *im, const struct sim *s)
{
	for (int k = 0; k < WL_KNOB_COUNT; k++)
		PUT(im, s->knobs.value[k]);
	PUT(im, s->knobs.run);
	PUT(im, s->count.pages_shared);
	PUT(im, s->count.pages_sharing);
	PUT(im, s->count.pages_unshared);
	PUT(im, s->count.rmap_items);
	PUT(im, s->count.pages_scanned);
	PUT(im, s->count.pages_skipped);
	PUT(im, s->count.stable_node_chains);
	PUT(im, s->count.stable_node_dups);
	PUT(im, s->count.ksm_zero_pages);
	PUT(im, s->scan.mm);
	PUT(im, s->scan.address);
	PUT(im, s->scan.rmap_from);
	PUT(im, s->scan.seqnr);
	PUT(im, s->advisor.start_scan_ns);
	PUT(im, s->advisor.scan_time);
	PUT(im, s->advisor.change);
	PUT(im, s->advisor.cpu_time_ns);
	PUT(im, s->slot_first);
	PUT(im, s->slot_last);
	for (unsigned n = 0; n < s->cfg.nr_nodes; n++) {
		PUT(im, s->stable_root[n]);
		PUT(im, s->unstable_root[n]);
	}
	PUT(im, s->now_ns);
	PUT(im, s->ksmd_cpu_ns);
}

static void image_processes(struct image *im, const struct sim *s)
{
	PUT(im, s->nmm);
	for (uint32_t i = 0; i < s->nmm; i++) {
		const struct sim_mm *m = &s->mm[i];

		PUT(im, m->state);
		PUT(im, m->registered);
		PUT(im, m->merge_any);
		PUT(im, m->slot_prev);
		PUT(im, m->slot_next);
		PUT(im, m->rmap_items);
		PUT(im, m->zero_pages);
		PUT(im, m->merging_pages);
		PUT(im, m->mergeable_pages);
		PUT(im, m->next_vpn);
	}
	PUT(im, s->narea);
	for (uint32_t i = 0; i < s->narea; i++) {
		const struct sim_area *a = &s->area[i];

		PUT(im, a->mm);
		PUT(im, a->label);
		PUT(im, a->start);
		PUT(im, a->npages);
		PUT(im, a->slot);
		PUT(im, a->nitems);
		PUT(im, a->node);
		PUT(im, a->thp);
		PUT(im, a->dirty_tracking);
		PUT(im, a->anon_vma);
		PUT(im, a->dead);
		PUT(im, a->prot);
		PUT(im, a->uffd_wp);
	}
}

static void image_links(struct image *im, const struct rb_links *l)
{
	PUT(im, l->parent);
	PUT(im, l->left);
	PUT(im, l->right);
	PUT(im, l->black);
}

static void image_slots(struct image *im, const struct sim *s)
{
	PUT(im, s->nslots);
	for (uint32_t i = 1; i < s->nslots; i++) {
		const struct sim_page *p = &s->page[i];
		const struct sim_page *r = &s->page[i];

		PUT(im, p->frame);
		PUT(im, p->pte);
		PUT(im, r->rflags);
		if (!(r->rflags & RMAP_EXISTS))
			continue;
		if (s->item_bytes)
			put(im, s->item_state + (size_t)i * s->item_bytes, s->item_bytes);
		PUT(im, r->checksum);
		PUT(im, r->age);
		PUT(im, r->skips);
		if (r->rflags & RMAP_UNSTABLE) {
			PUT(im, r->seqnr);
			PUT(im, (uint16_t)r->nid);
			image_links(im, &r->rb);
		} else if (r->rflags & RMAP_STABLE) {
			PUT(im, r->st.head);
			PUT(im, r->st.next);
			PUT(im, r->st.prev);
		}
	}
}

static void image_frames_and_nodes(struct image *im, const struct sim *s)
{
	PUT(im, s->nframes);
	PUT(im, s->frame_free);
	for (uint32_t i = 1; i < s->nframes; i++) {
		const struct sim_frame *f = &s->frame[i];

		PUT(im, f->mapcount);
		PUT(im, sim_frame_stable_node(f)); /* the free-list link when free */
		if (!f->mapcount)
			continue;
		PUT(im, sim_content_bytes_hash(&s->content, f->content));
		PUT(im, f->node);
		PUT(im, (uint8_t)(f->flags & ~FRAME_CSUM_VALID));
		PUT(im, f->pmd_seen);
	}
	PUT(im, s->nsnodes);
	PUT(im, s->snode_free);
	for (uint32_t i = 1; i < s->nsnodes; i++) {
		const struct sim_snode *n = &s->snode[i];

		PUT(im, n->kind);
		PUT(im, n->first);
		if (n->kind == SNODE_FREE)
			continue;
		PUT(im, n->nid);
		if (n->kind != SNODE_DUP)
			image_links(im, &n->rb);
		if (n->kind == SNODE_CHAIN) {
			PUT(im, n->prune_time);
			continue;
		}
		PUT(im, n->kpfn);
		PUT(im, n->hlist_len);
		if (n->kind == SNODE_DUP) {
			PUT(im, n->chain);
			PUT(im, n->dup_next);
			PUT(im, n->dup_prev);
		}
	}
}

static int build_image(const struct sim *s, struct image *im)
{
	memset(im, 0, sizeof(*im));
	PUT(im, s->cfg.kernel);
	PUT(im, s->cfg.detector);
	PUT(im, s->cfg.thp_dirty);
	PUT(im, s->cfg.nr_nodes);
	image_ksm(im, s);
	image_processes(im, s);
	image_slots(im, s);
	image_frames_and_nodes(im, s);
	return im->oom ? -1 : 0;
}

uint64_t sim_hash(const struct sim *s)
{
	struct image im;
	uint64_t h;

	if (build_image(s, &im) != 0) {
		free(im.buf);
		return 0;
	}
	h = XXH64(im.buf, im.len, 0);
	free(im.buf);
	return h;
}

/* Frames with equal byte hashes: are the bytes really equal? */
static bool frame_contents_equal(const struct sim *a, const struct sim *b)
{
	uint8_t pa[CONTENT_PAGE_SIZE], pb[CONTENT_PAGE_SIZE];

	for (uint32_t i = 1; i < a->nframes; i++) {
		uint64_t ta = a->frame[i].content, tb = b->frame[i].content;

		if (!a->frame[i].mapcount)
			continue;
		if (!sim_content_is_patched(ta) && !sim_content_is_patched(tb)) {
			if (ta != tb)
				return false;
			continue;
		}
		sim_content_materialize(&a->content, ta, pa);
		sim_content_materialize(&b->content, tb, pb);
		if (memcmp(pa, pb, sizeof(pa)) != 0)
			return false;
	}
	return true;
}

bool sim_equal(const struct sim *a, const struct sim *b)
{
	struct image ia, ib;
	bool same;

	if (build_image(a, &ia) != 0 || build_image(b, &ib) != 0) {
		free(ia.buf);
		free(ib.buf);
		return false;
	}
	same = ia.len == ib.len && memcmp(ia.buf, ib.buf, ia.len) == 0;
	free(ia.buf);
	free(ib.buf);
	return same && frame_contents_equal(a, b);
}

/* --- fast paths for the model checker (sim_mc.h) ------------------------------ */

/*
 * Copy @n elements of @size bytes from @src into *@dst, growing it (and
 * *@cap) when it is too small. Elements past @n keep whatever they held: the
 * pool allocators initialize an element when they hand it out.
 */
static int copy_pool(void **dst, uint32_t *cap, const void *src, uint32_t n, size_t size)
{
	if (n > *cap) {
		void *p = realloc(*dst, (size_t)n * size);

		if (!p)
			return -1;
		*dst = p;
		*cap = n;
	}
	if (n)
		memcpy(*dst, src, (size_t)n * size);
	return 0;
}

/* Give @e (a copy of a spilled entry whose patch is @src) a patch buffer of
 * its own, reusing @old when it is large enough. */
static int own_patch(struct sim_patched *e, struct sim_patch_byte *old,
		     const struct sim_patch_byte *src)
{
	size_t need = (size_t)e->npatch * sizeof(*src);

	if (!old || malloc_usable_size(old) < need) {
		struct sim_patch_byte *p = realloc(old, need);

		if (!p) {
			free(old);
			e->patch = NULL;
			e->npatch = 0;
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
 * (spilled ones with their patches at entries[i].patch, or laid out one after
 * another from @stream when it is not NULL) and @hdr->nbuckets buckets,
 * reusing its memory.
 */
static int content_into(struct sim_content_store *dst, const struct sim_content_store *hdr,
			const struct sim_patched *entries, const uint32_t *buckets,
			const struct sim_patch_byte *stream)
{
	struct sim_content_store keep = *dst;
	uint32_t old_n = dst->nentries, n = hdr->nentries, top = old_n > n ? old_n : n;
	int rc = 0;

	if (n > keep.cap) {
		struct sim_patched *p = realloc(keep.entry, (size_t)hdr->cap * sizeof(*p));

		if (!p)
			return -1; /* @dst is untouched */
		keep.entry = p;
		keep.cap = hdr->cap;
	}
	*dst = *hdr;
	dst->entry = keep.entry;
	dst->cap = keep.cap;
	dst->bucket = keep.bucket;
	dst->nbuckets = keep.nbuckets;
	for (uint32_t i = 1; i < top; i++) {
		struct sim_patch_byte *old = NULL;
		const struct sim_patch_byte *src;

		if (i < old_n && sim_patched_spilled(&dst->entry[i]))
			old = dst->entry[i].patch;
		if (i >= n || !sim_patched_spilled(&entries[i])) {
			free(old);
			if (i < n)
				dst->entry[i] = entries[i];
			continue;
		}
		src = stream ? stream : entries[i].patch;
		dst->entry[i] = entries[i];
		/* on failure the entry is left without a patch: still freeable */
		if (own_patch(&dst->entry[i], old, src) != 0)
			rc = -1;
		if (stream)
			stream += entries[i].npatch;
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
struct pools {
	struct sim_mm *mm;
	struct sim_area *area;
	struct sim_page *page;
	uint8_t *item_state;
	struct sim_frame *frame;
	struct sim_snode *snode;
	uint32_t mm_cap, area_cap, slots_cap, items_cap, frames_cap, snodes_cap;
	struct sim_content_store content;
};

static void pools_take(struct pools *p, const struct sim *s)
{
	*p = (struct pools){ s->mm, s->area, s->page, s->item_state, s->frame, s->snode,
			     s->mm_cap, s->area_cap, s->slots_cap, s->items_cap, s->frames_cap,
			     s->snodes_cap, s->content };
}

static void pools_give(struct sim *s, const struct pools *p)
{
	s->mm = p->mm;
	s->area = p->area;
	s->page = p->page;
	s->item_state = p->item_state;
	s->frame = p->frame;
	s->snode = p->snode;
	s->mm_cap = p->mm_cap;
	s->area_cap = p->area_cap;
	s->slots_cap = p->slots_cap;
	s->items_cap = p->items_cap;
	s->frames_cap = p->frames_cap;
	s->snodes_cap = p->snodes_cap;
	s->content = p->content;
}

/* Copy the pools' used parts from the arrays given, into @dst's buffers. */
static int pools_copy(struct sim *dst, const struct sim_mm *mm, const struct sim_area *area,
		      const struct sim_page *page, const uint8_t *item_state,
		      const struct sim_frame *frame, const struct sim_snode *snode)
{
	uint32_t items = dst->item_bytes ? dst->nslots : 0;

	if (copy_pool((void **)&dst->mm, &dst->mm_cap, mm, dst->nmm, sizeof(*mm)) ||
	    copy_pool((void **)&dst->area, &dst->area_cap, area, dst->narea, sizeof(*area)) ||
	    copy_pool((void **)&dst->page, &dst->slots_cap, page, dst->nslots, sizeof(*page)) ||
	    copy_pool((void **)&dst->item_state, &dst->items_cap, item_state, items,
		      dst->item_bytes) ||
	    copy_pool((void **)&dst->frame, &dst->frames_cap, frame, dst->nframes, sizeof(*frame)) ||
	    copy_pool((void **)&dst->snode, &dst->snodes_cap, snode, dst->nsnodes, sizeof(*snode)))
		return -1;
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

static void header_copy(struct sim *dst, const struct sim *src)
{
	size_t roots = src->cfg.nr_nodes * sizeof(uint32_t);

	dst->cfg = src->cfg; /* costs may differ */
	memcpy((char *)dst + SIM_HEAD_START, (const char *)src + SIM_HEAD_START,
	       SIM_HEAD_END - SIM_HEAD_START);
	memcpy(dst->stable_root, src->stable_root, roots);
	memcpy(dst->unstable_root, src->unstable_root, roots);
	memcpy((char *)dst + SIM_TAIL_START, (const char *)src + SIM_TAIL_START,
	       sizeof(*dst) - SIM_TAIL_START);
}

int sim_clone_into(struct sim *dst, const struct sim *src)
{
	struct pools keep;

	if (dst == src)
		return 0;
	pools_take(&keep, dst);
	header_copy(dst, src);
	pools_give(dst, &keep);
	if (pools_copy(dst, src->mm, src->area, src->page, src->item_state, src->frame,
		       src->snode) != 0)
		return -1;
	return content_into(&dst->content, &src->content, src->content.entry,
			    src->content.bucket, NULL);
}

/*
 * Snapshot layout, 8-byte aligned: this header, the struct sim (header_save;
 * pointers meaningless), then the pools' used parts.
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

static uint64_t total_patches(const struct sim_content_store *cs)
{
	uint64_t n = 0;

	for (uint32_t i = 1; i < cs->nentries; i++)
		if (sim_patched_spilled(&cs->entry[i]))
			n += cs->entry[i].npatch;
	return n;
}

static size_t snapshot_bytes(const struct sim *s, uint64_t npatch)
{
	(void)npatch;
	return align8(sizeof(struct snapshot)) + align8(header_bytes(s)) +
	       align8((size_t)s->nmm * sizeof(*s->mm)) +
	       align8((size_t)s->narea * sizeof(*s->area)) +
	       align8((size_t)s->nslots * sizeof(*s->page)) +
	       align8((size_t)s->nslots * s->item_bytes) +
	       align8((size_t)s->nframes * sizeof(*s->frame)) +
	       align8((size_t)s->nsnodes * sizeof(*s->snode)) +
	       align8((size_t)s->content.nentries * sizeof(*s->content.entry)) +
	       align8((size_t)s->content.nbuckets * sizeof(*s->content.bucket)) +
	       align8((size_t)total_patches(&s->content) * sizeof(struct sim_patch_byte));
}

size_t sim_snapshot_size(const struct sim *s)
{
	return snapshot_bytes(s, total_patches(&s->content));
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
	uint64_t npatch = total_patches(&s->content);
	char *at = (char *)buf + align8(sizeof(*h));

	h->size = snapshot_bytes(s, npatch);
	h->nr_nodes = s->cfg.nr_nodes;
	h->header_bytes = (uint32_t)header_bytes(s);
	header_save(s, at);
	at += align8(h->header_bytes);
	at = put_block(at, s->mm, (size_t)s->nmm * sizeof(*s->mm));
	at = put_block(at, s->area, (size_t)s->narea * sizeof(*s->area));
	at = put_block(at, s->page, (size_t)s->nslots * sizeof(*s->page));
	at = put_block(at, s->item_state, (size_t)s->nslots * s->item_bytes);
	at = put_block(at, s->frame, (size_t)s->nframes * sizeof(*s->frame));
	at = put_block(at, s->snode, (size_t)s->nsnodes * sizeof(*s->snode));
	at = put_block(at, s->content.entry, (size_t)s->content.nentries *
					     sizeof(*s->content.entry));
	at = put_block(at, s->content.bucket, (size_t)s->content.nbuckets *
					      sizeof(*s->content.bucket));
	for (uint32_t i = 1; i < s->content.nentries; i++) {
		const struct sim_patched *e = &s->content.entry[i];
		size_t n = (size_t)e->npatch * sizeof(struct sim_patch_byte);

		if (!sim_patched_spilled(e) || !n)
			continue;
		memcpy(at, e->patch, n);
		at += n;
	}
}

int sim_snapshot_load(struct sim *dst, const void *buf)
{
	const struct snapshot *h = buf;
	const char *at = (const char *)buf + align8(sizeof(*h));
	const void *mm, *area, *page, *item_state, *frame, *snode, *entries, *buckets;
	struct sim_content_store saved; /* the saved store's fields (its pointers are stale) */
	struct pools keep;
	const struct sim *hs = dst;

	pools_take(&keep, dst);
	header_load(dst, at);
	saved = dst->content;
	pools_give(dst, &keep);
	at += align8(h->header_bytes);
	mm = at;
	at += align8((size_t)hs->nmm * sizeof(*hs->mm));
	area = at;
	at += align8((size_t)hs->narea * sizeof(*hs->area));
	page = at;
	at += align8((size_t)hs->nslots * sizeof(*hs->page));
	item_state = at;
	at += align8((size_t)hs->nslots * hs->item_bytes);
	frame = at;
	at += align8((size_t)hs->nframes * sizeof(*hs->frame));
	snode = at;
	at += align8((size_t)hs->nsnodes * sizeof(*hs->snode));
	entries = at;
	at += align8((size_t)saved.nentries * sizeof(*saved.entry));
	buckets = at;
	at += align8((size_t)saved.nbuckets * sizeof(*saved.bucket));
	if (pools_copy(dst, mm, area, page, item_state, frame, snode) != 0)
		return -1;
	return content_into(&dst->content, &saved, entries, buckets,
			    (const struct sim_patch_byte *)at);
}

/*
 * The fingerprint: words into a buffer, XXH3 over each full buffer chained
 * through the seed. Fields as in build_image() (keep the two in step), with
 * the model checker's abstractions described in sim_mc.h.
 */
struct fingerprint {
	uint64_t word[128];
	unsigned n;
	uint64_t hash;
};

static inline void fp_put(struct fingerprint *f, uint64_t w)
{
	f->word[f->n++] = w;
	if (f->n == sizeof(f->word) / sizeof(f->word[0])) {
		f->hash = XXH3_64bits_withSeed(f->word, sizeof(f->word), f->hash);
		f->n = 0;
	}
}

static inline uint64_t pack32(uint32_t a, uint32_t b)
{
	return (uint64_t)a << 32 | b;
}

/* should_skip() gives every age above 8 the same future: fold them. */
#define FP_AGE_FOLD 9u

static void fp_links(struct fingerprint *f, const struct rb_links *l)
{
	fp_put(f, pack32(l->parent, l->left));
	fp_put(f, pack32(l->right, l->black));
}

static void fp_ksm(struct fingerprint *f, const struct sim *s)
{
	for (int k = 0; k < WL_KNOB_COUNT; k++)
		fp_put(f, s->knobs.value[k]);
	fp_put(f, s->knobs.run);
	fp_put(f, (uint64_t)s->count.pages_shared);
	fp_put(f, (uint64_t)s->count.pages_sharing);
	fp_put(f, (uint64_t)s->count.pages_unshared);
	fp_put(f, (uint64_t)s->count.rmap_items);
	fp_put(f, (uint64_t)s->count.stable_node_chains);
	fp_put(f, (uint64_t)s->count.stable_node_dups);
	fp_put(f, (uint64_t)s->count.ksm_zero_pages);
	fp_put(f, pack32(s->scan.mm, s->slot_first));
	fp_put(f, pack32(s->slot_last, 0));
	fp_put(f, s->scan.address);
	fp_put(f, s->scan.rmap_from);
	if (s->knobs.value[WL_KNOB_ADVISOR_MODE] != WL_ADVISOR_NONE) {
		fp_put(f, s->advisor.start_scan_ns);
		fp_put(f, s->advisor.scan_time);
		fp_put(f, s->advisor.change);
		fp_put(f, s->advisor.cpu_time_ns);
	}
	for (unsigned n = 0; n < s->cfg.nr_nodes; n++)
		fp_put(f, pack32(s->stable_root[n], s->unstable_root[n]));
}

static void fp_processes(struct fingerprint *f, const struct sim *s)
{
	fp_put(f, pack32(s->nmm, s->narea));
	for (uint32_t i = 0; i < s->nmm; i++) {
		const struct sim_mm *m = &s->mm[i];

		fp_put(f, (uint64_t)m->state | (uint64_t)m->registered << 8 |
				  (uint64_t)m->merge_any << 16);
		fp_put(f, pack32(m->slot_prev, m->slot_next));
		fp_put(f, (uint64_t)m->rmap_items);
		fp_put(f, (uint64_t)m->zero_pages);
		fp_put(f, (uint64_t)m->merging_pages);
		fp_put(f, m->mergeable_pages);
		fp_put(f, m->next_vpn);
	}
	for (uint32_t i = 0; i < s->narea; i++) {
		const struct sim_area *a = &s->area[i];

		fp_put(f, pack32(a->mm, a->label));
		fp_put(f, a->start);
		fp_put(f, a->npages);
		fp_put(f, pack32(a->slot, a->node));
		fp_put(f, a->nitems);
		fp_put(f, (uint64_t)a->thp | (uint64_t)a->dirty_tracking << 8 |
				  (uint64_t)a->anon_vma << 16 | (uint64_t)a->dead << 24 |
				  (uint64_t)a->prot << 32 | (uint64_t)a->uffd_wp << 40);
	}
}

/* The detector's state of the item at @slot, 8 bytes a word (zero-padded). */
static void fp_item(struct fingerprint *f, const struct sim *s, uint32_t slot)
{
	const uint8_t *at = s->item_state + (size_t)slot * s->item_bytes;

	for (uint32_t done = 0; done < s->item_bytes; done += 8) {
		uint64_t w = 0;

		memcpy(&w, at + done, s->item_bytes - done < 8 ? s->item_bytes - done : 8);
		fp_put(f, w);
	}
}

static void fp_slots(struct fingerprint *f, const struct sim *s)
{
	fp_put(f, s->nslots);
	for (uint32_t i = 1; i < s->nslots; i++) {
		const struct sim_page *p = &s->page[i];
		uint8_t age = p->age < FP_AGE_FOLD ? p->age : FP_AGE_FOLD;

		if (!(p->rflags & RMAP_EXISTS)) {
			fp_put(f, pack32(p->frame, (uint32_t)p->pte << 8 | p->rflags));
			continue;
		}
		fp_put(f, pack32(p->frame, (uint32_t)p->pte << 24 | (uint32_t)p->rflags << 16 |
						   (uint32_t)age << 8 | p->skips));
		if (s->item_bytes)
			fp_item(f, s, i);
		if (p->rflags & RMAP_UNSTABLE) {
			fp_put(f, pack32(p->checksum, (uint32_t)(uint8_t)(s->scan.seqnr - p->seqnr) |
							      (uint32_t)p->nid << 8));
			fp_links(f, &p->rb);
		} else if (p->rflags & RMAP_STABLE) {
			fp_put(f, pack32(p->checksum, p->st.head));
			fp_put(f, pack32(p->st.next, p->st.prev));
		} else {
			fp_put(f, p->checksum);
		}
	}
}

static void fp_frames_and_nodes(struct fingerprint *f, const struct sim *s)
{
	fp_put(f, pack32(s->nframes, s->frame_free));
	for (uint32_t i = 1; i < s->nframes; i++) {
		const struct sim_frame *fr = &s->frame[i];
		bool patched;

		fp_put(f, pack32(fr->mapcount, sim_frame_stable_node(fr)));
		if (!fr->mapcount)
			continue;
		/* uniform pages are always plain tokens: the token names the bytes */
		patched = sim_content_is_patched(fr->content);
		fp_put(f, patched ? sim_content_bytes_hash(&s->content, fr->content) : fr->content);
		fp_put(f, (uint64_t)fr->node | (uint64_t)(fr->flags & ~FRAME_CSUM_VALID) << 16 |
				  (uint64_t)fr->pmd_seen << 24 | (uint64_t)patched << 63);
	}
	fp_put(f, pack32(s->nsnodes, s->snode_free));
	for (uint32_t i = 1; i < s->nsnodes; i++) {
		const struct sim_snode *n = &s->snode[i];

		fp_put(f, pack32(n->kind, n->first));
		if (n->kind == SNODE_FREE)
			continue;
		fp_put(f, n->nid);
		if (n->kind != SNODE_DUP)
			fp_links(f, &n->rb);
		if (n->kind == SNODE_CHAIN) {
			fp_put(f, n->prune_time);
			continue;
		}
		fp_put(f, pack32(n->kpfn, (uint32_t)n->hlist_len));
		if (n->kind == SNODE_DUP) {
			fp_put(f, pack32(n->chain, n->dup_next));
			fp_put(f, n->dup_prev);
		}
	}
}

uint64_t sim_fingerprint(const struct sim *s)
{
	struct fingerprint f;

	f.n = 0;
	f.hash = 0;
	fp_put(&f, pack32(s->cfg.kernel, s->cfg.detector));
	fp_put(&f, pack32(s->cfg.thp_dirty, s->cfg.nr_nodes));
	fp_ksm(&f, s);
	fp_processes(&f, s);
	fp_slots(&f, s);
	fp_frames_and_nodes(&f, s);
	return XXH3_64bits_withSeed(f.word, f.n * sizeof(f.word[0]), f.hash);
}
