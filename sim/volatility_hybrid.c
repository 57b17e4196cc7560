/*
 * volatility_hybrid.c - the dirty bit where it can be trusted, the checksum
 * where it cannot. Memory written through a secondary MMU that does not set
 * the host PTE's dirty bit (a KVM guest's RAM under EPT without accessed/dirty
 * support; DMA into pinned pages) is marked `dirty_tracking = no` in the
 * workload: its pages are judged by their checksum, every other page by its
 * dirty bit. The dirty rule alone would call such a page stable after a
 * write it never saw. It is made of the two detectors' ops, whichever the
 * page's area calls for.
 */
#include "sim_detector.h"

static bool area_tracks_dirty(const struct sim *s, uint32_t slot)
{
	if (s->cfg.mutant == SIM_MUTANT_DIRTY_UNTRACKED) /* mutant: trusted everywhere */
		return true;
	return s->area[sim_area_of_slot(s, slot)].dirty_tracking;
}

/* The detector that judges the page at @slot: by its area's dirty tracking. */
static const struct sim_detector_ops *judge(const struct sim *s, uint32_t slot)
{
	return area_tracks_dirty(s, slot) ? &sim_volatility_dirty : &sim_volatility_checksum;
}

static bool hybrid_changed(struct sim *s, uint32_t slot, uint32_t frame)
{
	return judge(s, slot)->page_changed(s, slot, frame);
}

static bool hybrid_zero_candidate(struct sim *s, uint32_t slot, uint32_t frame)
{
	return judge(s, slot)->zero_candidate(s, slot, frame);
}

const struct sim_detector_ops sim_volatility_hybrid = {
	.page_changed = hybrid_changed,
	.zero_candidate = hybrid_zero_candidate,
};
