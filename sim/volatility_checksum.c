/*
 * volatility_checksum.c - the kernel's volatility rule: a page is volatile
 * when the low 32 bits of xxh64 over its bytes differ from the value stored
 * in its rmap_item at the last visit that computed one (new items store 0).
 * KSM's zero page is considered for a page whose stored checksum is the zero
 * page's. The checksums themselves come from the frames' cache (sim_state.c),
 * which every detector may read; this rule is what charges for them.
 */
#include "sim_detector.h"

static bool checksum_changed(struct sim *s, uint32_t slot, uint32_t frame)
{
	struct sim_page *r = &s->page[slot];
	uint32_t now = sim_frame_checksum(s, slot, frame);

	s->work.checksums++;
	sim_charge(s, s->cfg.costs.checksum_ns);
	if (r->checksum == now)
		return false;
	r->checksum = now;
	return true;
}

static bool checksum_zero_candidate(struct sim *s, uint32_t slot, uint32_t frame)
{
	(void)frame;
	return s->page[slot].checksum == s->zero_checksum;
}

const struct sim_detector_ops sim_volatility_checksum = {
	.kernel_rule = true,
	.page_changed = checksum_changed,
	.zero_candidate = checksum_zero_candidate,
};
