/*
 * volatility_checksum.c - the kernel's volatility rule: a page is volatile
 * when the low 32 bits of xxh64 over its bytes differ from the value stored
 * in its rmap_item at the last visit that computed one (new items store 0).
 * KSM's zero page is considered for a page whose stored checksum is the zero
 * page's.
 */
#include "sim_detector.h"

#include <assert.h>

/*
 * Fill the frame's checksum cache. A plain page's checksum is computed
 * together with those of the next pages' frames (usually scanned next) when
 * they are plain, not KSM and not cached yet, which divides the host time of
 * first visits; the kernel's cost is charged per visit anyway.
 */
static void compute_checksum(struct sim *s, uint32_t slot, uint32_t frame)
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

uint32_t sim_frame_checksum(struct sim *s, uint32_t slot, uint32_t frame)
{
	assert(!(s->frame[frame].flags & FRAME_KSM)); /* KSM pages have no checksum cache */
	if (!(s->frame[frame].flags & FRAME_CSUM_VALID))
		compute_checksum(s, slot, frame);
	return s->frame[frame].checksum;
}

bool sim_checksum_changed(struct sim *s, uint32_t slot, uint32_t frame)
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

bool sim_checksum_zero_candidate(struct sim *s, uint32_t slot, uint32_t frame)
{
	return s->page[slot].checksum == s->zero_checksum;
}

const struct sim_detector_ops sim_volatility_checksum = {
	.name = "checksum",
	.page_changed = sim_checksum_changed,
	.zero_candidate = sim_checksum_zero_candidate,
};
