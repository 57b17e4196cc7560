/*
 * sim_mc.h - what the model checker (mc/) needs from the simulator beyond
 * sim.h: copies without allocation, compact snapshots, a fingerprint of the
 * behaviour-relevant state, and the half of a sysfs store that runs before
 * ksm_thread_mutex is taken.
 *
 * An explicit-state search visits millions of states per minute, so these
 * are the fast paths of sim_clone() and sim_hash(): sim_clone_into() reuses
 * the destination's buffers and snapshots are one flat buffer (a search
 * frontier holds millions), both in sim_mc.c; sim_fingerprint() walks the
 * state description (sim_fields.h) straight into XXH3, in sim_image.c beside
 * the image sim_hash() hashes. None of them prints or aborts on bad input.
 */
#ifndef KSMKIT_SIM_MC_H
#define KSMKIT_SIM_MC_H

#include "sim.h"

/*
 * Make @dst an independent copy of @src, reusing @dst's memory (@dst comes
 * from sim_new() or sim_clone(); both must have the same struct sim_config,
 * costs included: like a snapshot, the copy leaves @dst's configuration as
 * it is). Returns 0, or -1 when out of memory, after which @dst may only be
 * freed.
 */
int sim_clone_into(struct sim *dst, const struct sim *src);

/*
 * Make @dst's page slots and frames (their counts and pools) those of @src,
 * and nothing else of it: a scratch machine that holds what a check of a
 * step reads of the step's parent (mc_check_transition). @dst is not a
 * whole machine afterwards until a sim_clone_into() or sim_snapshot_load()
 * into it. 0, or -1 when out of memory.
 */
int sim_copy_pages_and_frames(struct sim *dst, const struct sim *src);

/* Bytes sim_snapshot_save() writes for @s (8-byte aligned). */
size_t sim_snapshot_size(const struct sim *s);
/* Write the whole state of @s into @buf (sim_snapshot_size() bytes). */
void sim_snapshot_save(const struct sim *s, void *buf);
/*
 * Turn @dst (from sim_new() or sim_clone()) into the state saved in @buf,
 * reusing @dst's memory. 0, or -1 when out of memory (then @dst may only be
 * freed).
 */
int sim_snapshot_load(struct sim *dst, const void *buf);

/*
 * A 64-bit XXH3 fingerprint of what can influence the machine's future and
 * its invariants: like sim_hash(), contents by their bytes, but without the
 * counters that only observe (pages_scanned, pages_skipped, full_scans, ksmd
 * work and time), with unstable items' scan numbers relative to the cursor's,
 * and with smart-scan ages above 9 folded together (should_skip() treats them
 * alike). So states sim_equal() calls equal have equal fingerprints, and so
 * do states that differ only in what the model checker abstracts away.
 * Time must stand still (the advisor off, no sim_advance_ns), as it does in
 * the model checker.
 */
uint64_t sim_fingerprint(const struct sim *s);

/*
 * The part of a knob store that the kernel runs before it takes
 * ksm_thread_mutex: 0 to go on with sim_knob_store() (under the mutex, as
 * one atomic step), or the errno the store answers right away. In the kernel
 * this is only parsing (already done when the value is a number), so it
 * answers 0, unless a seeded bug (sim_mutant.h) checks state here.
 */
int sim_knob_store_begin(const struct sim *s, enum wl_knob knob, uint64_t value);

#endif
