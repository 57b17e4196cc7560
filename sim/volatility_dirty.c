/*
 * volatility_dirty.c - the 2011 proposal's volatility rule: at each visit,
 * test and clear the PTE dirty bit; a page written since the last visit is
 * volatile. Fresh anonymous PTEs are dirty, so a first visit is volatile too.
 * Clearing a set bit costs a TLB flush.
 *
 * A PMD-mapped THP has one dirty bit for its 512 subpages: any write dirties
 * them all, and clearing it cleans and flushes the whole 2 MiB. What to do
 * about it is a policy (thp_dirty in the workload's [global], one rule
 * thp_<name>() below per entry of WL_THP_DIRTY_POLICIES in wl_policy.h):
 *   all       the first subpage found dirty in a scan makes the whole folio
 *             volatile for that scan, with one 2 MiB flush;
 *   split     split the THP at its first visit, then track 4 KiB PTEs (a
 *             split copies the PMD's dirty bit into every PTE);
 *   checksum  fall back to the checksum detector for PMD-mapped subpages.
 */
#include "sim_detector.h"

static uint32_t folio_head(uint32_t frame)
{
	return frame / SIM_THP_PAGES * SIM_THP_PAGES;
}

/* A marker for "found dirty during this scan", never 0. */
static uint8_t scan_marker(const struct sim *s)
{
	uint8_t m = (uint8_t)(s->scan.seqnr % 255 + 1);

	return m;
}

/* Clear the dirty bit of every PTE of this area mapping the folio. */
static void clean_folio(struct sim *s, uint32_t slot, uint32_t frame)
{
	uint32_t first = slot - (frame - folio_head(frame));

	for (uint32_t i = 0; i < SIM_THP_PAGES; i++)
		s->page[first + i].pte &= (uint8_t)~PTE_DIRTY;
}

static bool pte_changed(struct sim *s, uint32_t slot)
{
	struct sim_page *p = &s->page[slot];

	if (!(p->pte & PTE_DIRTY))
		return false;
	if (s->cfg.mutant == SIM_MUTANT_DIRTY_NO_CLEAR) /* mutant: the bit stays set */
		goto tested;
	p->pte &= (uint8_t)~PTE_DIRTY;
tested:
	s->work.tlb_flushes++;
	sim_charge(s, s->cfg.costs.tlb_flush_ns);
	return true;
}

/* --- the thp_dirty policies, for a subpage of a PMD-mapped THP ------------------ */

static bool thp_all(struct sim *s, uint32_t slot, uint32_t frame)
{
	uint8_t *seen = &s->folio_seen[folio_head(frame) / SIM_THP_PAGES];

	if (*seen == scan_marker(s))
		return true;
	if (!(s->page[slot].pte & PTE_DIRTY))
		return false;
	clean_folio(s, slot, frame);
	s->work.thp_flushes++;
	sim_charge(s, s->cfg.costs.thp_flush_ns);
	*seen = scan_marker(s);
	return true;
}

static bool thp_split(struct sim *s, uint32_t slot, uint32_t frame)
{
	sim_split_folio(s, frame);
	return pte_changed(s, slot); /* the PTEs keep the PMD's dirty bit: track them */
}

static bool thp_checksum(struct sim *s, uint32_t slot, uint32_t frame)
{
	return sim_volatility_checksum.page_changed(s, slot, frame);
}

#define THP_RULE_(e, name, doc) [SIM_THP_DIRTY_##e] = thp_##name,
static bool (*const thp_rule[WL_THP_DIRTY_COUNT])(struct sim *s, uint32_t slot,
						   uint32_t frame) = {
	WL_THP_DIRTY_POLICIES(THP_RULE_)
};
#undef THP_RULE_

static bool dirty_changed(struct sim *s, uint32_t slot, uint32_t frame)
{
	s->work.dirty_tests++;
	sim_charge(s, s->cfg.costs.dirty_test_ns);
	if (s->frame[frame].flags & FRAME_LARGE)
		return thp_rule[s->cfg.thp_dirty](s, slot, frame);
	return pte_changed(s, slot);
}

/* Without a checksum, a zero page candidate is found by comparing bytes. */
static bool dirty_zero_candidate(struct sim *s, uint32_t slot, uint32_t frame)
{
	(void)slot;
	s->work.memcmp_bytes += CONTENT_PAGE_SIZE;
	sim_charge(s, s->cfg.costs.memcmp_byte_ns * CONTENT_PAGE_SIZE);
	return s->frame[frame].content == 0;
}

const struct sim_detector_ops sim_volatility_dirty = {
	.page_changed = dirty_changed,
	.zero_candidate = dirty_zero_candidate,
};
