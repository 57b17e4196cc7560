/*
 * sim_detector.h - volatility detectors: how ksmd decides, at a visit, that a
 * page that is not KSM changed since its last visit and should wait.
 *
 * One interface, one sibling file per policy (like Redis's ae_*.c, or
 * SQLite's VFS: a struct of function pointers the core calls without asking
 * which one it holds). The policies are the entries of WL_DETECTORS
 * (workload/wl_policy.h); entry X(ENUM, name, doc) is implemented by
 * sim/volatility_<name>.c, which defines
 *   const struct sim_detector_ops sim_volatility_<name>;
 * and this header's table maps WL_DETECTOR_ENUM to it. The build compiles
 * one such file per entry (sim/detectors.am is generated from the list), so
 * a prototyper adds a detector by adding the file and the list's line; the
 * scan loop (sim_merge.c) calls the ops and never asks which detector runs.
 *
 * What a detector may use: the page's PTE and rmap_item (struct sim_page),
 * its frame, the checksum cache (sim_frame_checksum(), which never charges),
 * its own per-item state (item_bytes of it, sim_detector_item()), other
 * detectors' ops (the hybrid is made of two), and sim_charge() plus struct
 * sim_work for what it costs. Everything it keeps must live in struct sim,
 * so that clones, hashes and fingerprints see it.
 */
#ifndef KSMKIT_SIM_DETECTOR_H
#define KSMKIT_SIM_DETECTOR_H

#include "sim_internal.h"

struct sim_detector_ops {
	/*
	 * The kernel's own rule: its verdicts are the ground truth and it keeps
	 * the rmap_item's checksum itself. For every other detector the scan
	 * loop also takes that checksum (uncharged) and keeps it in the item, and
	 * counts the detector's verdicts against it (sim_work's false_stable and
	 * false_volatile; the model checker's volatility invariant reads it).
	 */
	bool kernel_rule;
	/*
	 * Bytes of state kept per rmap_item (0: none), in struct sim beside the
	 * page slots (sim_detector_item()): zeroed when the item is created,
	 * cloned, hashed, compared, snapshotted and fingerprinted with the
	 * machine, counted by admission. A detector made of others keeps what
	 * the largest of them keeps.
	 */
	uint16_t item_bytes;
	/*
	 * At a visit of the non-KSM page at @slot mapping @frame: true when the
	 * page is volatile (ksmd moves on), false when it may be searched for.
	 * Updates whatever per-item or per-PTE state the rule keeps, and
	 * charges its costs.
	 */
	bool (*page_changed)(struct sim *s, uint32_t slot, uint32_t frame);
	/* For use_zero_pages, right after page_changed said false: may this
	 * page hold the zero page's content? (The merge compares the bytes.) */
	bool (*zero_candidate)(struct sim *s, uint32_t slot, uint32_t frame);
};

#define SIM_DETECTOR_EXTERN_(e, name, doc) extern const struct sim_detector_ops sim_volatility_##name;
WL_DETECTORS(SIM_DETECTOR_EXTERN_)
#undef SIM_DETECTOR_EXTERN_

/* The ops of @detector, a valid enum wl_detector. */
static inline const struct sim_detector_ops *sim_detector_of(enum wl_detector detector)
{
#define SIM_DETECTOR_OPS_(e, name, doc) [WL_DETECTOR_##e] = &sim_volatility_##name,
	static const struct sim_detector_ops *const ops[WL_DETECTOR_COUNT] = {
		WL_DETECTORS(SIM_DETECTOR_OPS_)
	};
#undef SIM_DETECTOR_OPS_

	return ops[detector];
}

/* The detector the machine runs. */
static inline const struct sim_detector_ops *sim_detector(const struct sim *s)
{
	return sim_detector_of(s->cfg.detector);
}

#endif
