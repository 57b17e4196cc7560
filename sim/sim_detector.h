/*
 * sim_detector.h - volatility detectors: how ksmd decides, at a visit, that a
 * page that is not KSM changed since its last visit and should wait.
 *
 * One interface, one sibling file per policy (like Redis's ae_*.c):
 *   volatility_checksum.c  the kernel's rule: the page's checksum (xxh64)
 *                          differs from the one stored at the last visit;
 *   volatility_dirty.c     the 2011 proposal: test and clear the PTE dirty
 *                          bit (a TLB flush when it was set);
 *   volatility_hybrid.c    the dirty bit where the writer's mapping tracks
 *                          dirty bits, the checksum where it does not.
 * A prototyper adds a detector by adding a file and one line in
 * sim_detector(); the scan loop does not change.
 */
#ifndef KSMKIT_SIM_DETECTOR_H
#define KSMKIT_SIM_DETECTOR_H

#include "sim_internal.h"

struct sim_detector_ops {
	const char *name;
	/*
	 * At a visit of the non-KSM page at @slot mapping @frame: true when the
	 * page is volatile (ksmd moves on), false when it may be searched for.
	 * Updates whatever per-item or per-PTE state the rule keeps, and
	 * charges its costs.
	 */
	bool (*page_changed)(struct sim *s, uint32_t slot, uint32_t frame);
	/* For use_zero_pages: may this page be the zero page's content? */
	bool (*zero_candidate)(struct sim *s, uint32_t slot, uint32_t frame);
};

extern const struct sim_detector_ops sim_volatility_checksum;
extern const struct sim_detector_ops sim_volatility_dirty;
extern const struct sim_detector_ops sim_volatility_hybrid;

static inline const struct sim_detector_ops *sim_detector(const struct sim *s)
{
	switch (s->cfg.detector) {
	case WL_DETECTOR_DIRTY:
		return &sim_volatility_dirty;
	case WL_DETECTOR_HYBRID:
		return &sim_volatility_hybrid;
	case WL_DETECTOR_CHECKSUM:
		break;
	}
	return &sim_volatility_checksum;
}

/* The frame's checksum (cached), without charging ksmd for it; not for a KSM page. */
uint32_t sim_frame_checksum(struct sim *s, uint32_t slot, uint32_t frame);

/* The checksum rule, for the hybrid to fall back on. */
bool sim_checksum_changed(struct sim *s, uint32_t slot, uint32_t frame);
bool sim_checksum_zero_candidate(struct sim *s, uint32_t slot, uint32_t frame);
/* The dirty-bit rule, for the hybrid. */
bool sim_dirty_changed(struct sim *s, uint32_t slot, uint32_t frame);
bool sim_dirty_zero_candidate(struct sim *s, uint32_t slot, uint32_t frame);

#endif
