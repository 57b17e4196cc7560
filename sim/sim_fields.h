/*
 * sim_fields.h - the simulated machine's state, described once: every field
 * of struct sim and of the records in its pools, with what it is and how the
 * model checker folds it, and the pools themselves.
 *
 * sim_image.c walks the field lists to write the canonical image (sim_hash,
 * sim_equal) and the fingerprint (sim_fingerprint); sim_state.c and sim_mc.c
 * expand SIM_POOLS to free, clone, copy and snapshot the pools. So a field
 * added to a struct of sim_internal.h is added here once, with its role, and
 * every one of those follows; a field not listed here is not state.
 *
 * Roles:
 *   STATE     can change what the machine does or reports from now on: in
 *             the image and in the fingerprint (folded as its fold says);
 *   OBSERVED  only reports what happened (work done, clocks, full scans): in
 *             the image (machines that report differently are not equal),
 *             never in the fingerprint;
 *   CACHE     recomputed from the state when missing, or derived from it
 *             and kept exact (a chain's index of its dups): in neither.
 * Folds (the fingerprint's; the image keeps every value as it is):
 *   KEEP      the value;
 *   AGE       smart_scan ages from SIM_AGE_FOLD up as one: should_skip()
 *             (sim_scan.c) gives them all the same future;
 *   SEQNR     an unstable item's scan number relative to the cursor's full
 *             scans, which are OBSERVED (but their residue modulo the
 *             smart-scan rule's period, smart_scan_phase, is STATE);
 *   ADVISOR   left out while advisor_mode is none (nothing reads it then).
 * A record's field is walked only where its condition ("when", an expression
 * over the record r, its id and the machine s) holds: an rmap_item's links
 * mean nothing unless it is in a tree.
 *
 * Machine fields: F(name, value, count, role, fold), value read at index i
 * for i < count. Record fields: F(name, value, when, role, fold);
 * B(name, pointer, bytes, when, role) for an opaque run of bytes (the
 * detector's state of an item); and G(name, when, role, v0, f0, v1, f1,
 * v2, f2, v3, f3), four values of one byte each (SIM_BYTE and friends),
 * each folded by its own fold (one that always keeps a value), written as
 * one word: the small fields of a record share a word instead of taking one
 * each, which makes the stream a fifth shorter (a member with a condition of
 * its own is 0 where that does not hold: its record's other fields say
 * which). Contents are named by sim_frame_content_id().
 */
#ifndef KSMKIT_SIM_FIELDS_H
#define KSMKIT_SIM_FIELDS_H

#include "sim_internal.h"

/*
 * A group member (G): one byte by its type, or a value known to fit one (a
 * bitfield of at most 8 bits, a NUMA node below SIM_MAX_NODES), so the
 * word it shares says exactly what the fields did; SIM_BYTE_IF is 0 where
 * @cond does not hold.
 */
#define SIM_BYTE(v)                                                                     \
	__extension__({                                                                 \
		_Static_assert(sizeof(v) == 1, "a group member is one byte");           \
		(uint8_t)(v);                                                           \
	})
#define SIM_BYTE_IF(cond, v) ((cond) ? SIM_BYTE(v) : (uint8_t)0)
#define SIM_BITS_BYTE(v, bits)                                                          \
	__extension__({                                                                 \
		_Static_assert((bits) <= 8, "a group member is one byte");              \
		(uint8_t)(v);                                                           \
	})
#define SIM_NODE_BYTE(v) SIM_BITS_BYTE(v, SIM_MAX_NODES <= 256 ? 8 : 9)
#define SIM_NO_BYTE ((uint8_t)0)

/* Ages from here on behave alike in should_skip() (sim_scan.c: skip_age and
 * skip_period, both longest from age 9). */
#define SIM_AGE_FOLD 9u

/*
 * What names a frame's bytes whatever the content store's layout: a plain
 * token is its value (uniform bytes are always plain), a patched content its
 * bytes' hash (tokens of patched contents are store indices).
 */
static inline uint64_t sim_frame_content_id(const struct sim *s, const struct sim_frame *f)
{
	return sim_content_is_patched(f->content) ? sim_content_bytes_hash(&s->content, f->content)
						  : f->content;
}

/* --- struct sim ------------------------------------------------------------- */

#define SIM_MACHINE_FIELDS(F)                                                           \
	F(kernel, s->cfg.kernel, 1, STATE, KEEP)                                        \
	F(detector, s->cfg.detector, 1, STATE, KEEP)                                    \
	F(thp_dirty, s->cfg.thp_dirty, 1, STATE, KEEP)                                  \
	F(checksum_kind, s->cfg.checksum, 1, STATE, KEEP)                               \
	F(smart_scan_policy, s->cfg.smart_scan_policy, 1, STATE, KEEP)                  \
	F(nr_nodes, s->cfg.nr_nodes, 1, STATE, KEEP)                                    \
	F(mutant, s->cfg.mutant, 1, STATE, KEEP)                                        \
	F(knob, s->knobs.value[i], WL_KNOB_COUNT, STATE, KEEP)                          \
	F(run, s->knobs.run, 1, STATE, KEEP)                                            \
	F(pages_shared, s->count.pages_shared, 1, STATE, KEEP)                          \
	F(pages_sharing, s->count.pages_sharing, 1, STATE, KEEP)                        \
	F(pages_unshared, s->count.pages_unshared, 1, STATE, KEEP)                      \
	F(rmap_items, s->count.rmap_items, 1, STATE, KEEP)                              \
	F(pages_scanned, s->count.pages_scanned, 1, OBSERVED, KEEP)                     \
	F(pages_skipped, s->count.pages_skipped, 1, OBSERVED, KEEP)                     \
	F(stable_node_chains, s->count.stable_node_chains, 1, STATE, KEEP)              \
	F(stable_node_dups, s->count.stable_node_dups, 1, STATE, KEEP)                  \
	F(ksm_zero_pages, s->count.ksm_zero_pages, 1, STATE, KEEP)                      \
	F(scan_mm, s->scan.mm, 1, STATE, KEEP)                                          \
	F(scan_address, s->scan.address, 1, STATE, KEEP)                                \
	F(scan_rmap_from, s->scan.rmap_from, 1, STATE, KEEP)                            \
	F(full_scans, s->scan.seqnr, 1, OBSERVED, KEEP)                                 \
	F(smart_scan_phase, sim_smart_scan_phase(s), 1, STATE, KEEP)                    \
	F(advisor_start_scan_ns, s->advisor.start_scan_ns, 1, STATE, ADVISOR)           \
	F(advisor_scan_time, s->advisor.scan_time, 1, STATE, ADVISOR)                   \
	F(advisor_change, s->advisor.change, 1, STATE, ADVISOR)                         \
	F(advisor_cpu_time_ns, s->advisor.cpu_time_ns, 1, STATE, ADVISOR)               \
	F(slot_first, s->slot_first, 1, STATE, KEEP)                                    \
	F(slot_last, s->slot_last, 1, STATE, KEEP)                                      \
	F(stable_root, s->stable_root[i], s->cfg.nr_nodes, STATE, KEEP)                 \
	F(unstable_root, s->unstable_root[i], s->cfg.nr_nodes, STATE, KEEP)             \
	F(zero_checksum, s->zero_checksum, 1, CACHE, KEEP)                              \
	F(memo_clean, s->memo.clean, 1, CACHE, KEEP)                                    \
	F(memo_active, s->memo.active, 1, CACHE, KEEP)                                  \
	F(memo_pending, s->memo.pending, 1, CACHE, KEEP)                                \
	F(memo_inserts, s->memo.inserts, 1, CACHE, KEEP)                                \
	F(bulk_skips, s->bulk_skips, 1, CACHE, KEEP)                                    \
	F(now_ns, s->now_ns, 1, OBSERVED, KEEP)                                         \
	F(ksmd_cpu_ns, s->ksmd_cpu_ns, 1, OBSERVED, KEEP)                               \
	F(batch_cost_ns, s->batch_cost_ns, 1, OBSERVED, KEEP)                           \
	F(batch_visits0, s->batch_visits0, 1, OBSERVED, KEEP)                           \
	F(batch_merges0, s->batch_merges0, 1, OBSERVED, KEEP)                           \
	F(batch_refills, s->batch_refills, 1, OBSERVED, KEEP)                           \
	F(lru_pending, s->lru_pending, 1, OBSERVED, KEEP)                               \
	F(cold, s->cold, 1, OBSERVED, KEEP)                                             \
	F(batch_steps, s->batch_steps, 1, OBSERVED, KEEP)                               \
	F(batches, s->batches, 1, OBSERVED, KEEP)                                       \
	F(work, ((const uint64_t *)&s->work)[i], sizeof(s->work) / 8, OBSERVED, KEEP)   \
	F(nmm, s->nmm, 1, STATE, KEEP)                                                  \
	F(narea, s->narea, 1, STATE, KEEP)                                              \
	F(nslots, s->nslots, 1, STATE, KEEP)                                            \
	F(nframes, s->nframes, 1, STATE, KEEP)                                          \
	F(frame_free, s->frame_free, 1, STATE, KEEP)                                    \
	F(nsnodes, s->nsnodes, 1, STATE, KEEP)                                          \
	F(snode_free, s->snode_free, 1, STATE, KEEP)

_Static_assert(sizeof(struct sim_work) % 8 == 0, "struct sim_work is made of uint64_t");

/* --- the records ---------------------------------------------------------------- */

#define SIM_MM_FIELDS(F, B, G)                                                          \
	G(state_registered_merge_any, true, STATE, SIM_BYTE(r->state), KEEP,            \
	  SIM_BYTE(r->registered), KEEP, SIM_BYTE(r->merge_any), KEEP, SIM_NO_BYTE, KEEP) \
	F(slot_prev, r->slot_prev, true, STATE, KEEP)                                   \
	F(slot_next, r->slot_next, true, STATE, KEEP)                                   \
	F(rmap_items, r->rmap_items, true, STATE, KEEP)                                 \
	F(zero_pages, r->zero_pages, true, STATE, KEEP)                                 \
	F(merging_pages, r->merging_pages, true, STATE, KEEP)                           \
	F(mergeable_pages, r->mergeable_pages, true, STATE, KEEP)                       \
	F(next_vpn, r->next_vpn, true, STATE, KEEP)

#define SIM_AREA_FIELDS(F, B, G)                                                        \
	F(mm, r->mm, true, STATE, KEEP)                                                 \
	F(label, r->label, true, STATE, KEEP)                                           \
	F(start, r->start, true, STATE, KEEP)                                           \
	F(npages, r->npages, true, STATE, KEEP)                                         \
	F(slot, r->slot, true, STATE, KEEP)                                             \
	F(nitems, r->nitems, true, STATE, KEEP)                                         \
	G(node_thp_dirty_tracking_anon_vma, true, STATE, SIM_NODE_BYTE(r->node), KEEP,  \
	  SIM_BYTE(r->thp), KEEP, SIM_BYTE(r->dirty_tracking), KEEP,                    \
	  SIM_BYTE(r->anon_vma), KEEP)                                                  \
	G(dead_prot_uffd_wp, true, STATE, SIM_BYTE(r->dead), KEEP, SIM_BYTE(r->prot), KEEP, \
	  SIM_BYTE(r->uffd_wp), KEEP, SIM_NO_BYTE, KEEP)

/* A page slot: the PTE half always, the rmap_item half while it exists. */
#define SIM_PAGE_ITEM (r->rflags & RMAP_EXISTS)
#define SIM_PAGE_UNSTABLE (r->rflags & RMAP_UNSTABLE)
#define SIM_PAGE_STABLE (r->rflags & RMAP_STABLE)
#define SIM_PAGE_FIELDS(F, B, G)                                                        \
	F(frame, r->frame, true, STATE, KEEP)                                           \
	G(pte_rflags_age_skips, true, STATE, SIM_BYTE(r->pte), KEEP, SIM_BYTE(r->rflags), \
	  KEEP, SIM_BYTE_IF(SIM_PAGE_ITEM, r->age), AGE,                                \
	  SIM_BYTE_IF(SIM_PAGE_ITEM, r->skips), KEEP)                                   \
	B(detector_state, s->item_state + (size_t)id * s->item_bytes, s->item_bytes,    \
	  SIM_PAGE_ITEM && s->item_bytes, STATE)                                        \
	F(oldchecksum, r->checksum, SIM_PAGE_ITEM, STATE, KEEP)                         \
	G(seqnr_nid_rb_black, SIM_PAGE_UNSTABLE, STATE, SIM_BYTE(r->seqnr), SEQNR,      \
	  SIM_BYTE(r->nid), KEEP, SIM_BITS_BYTE(r->rb.black, 1), KEEP, SIM_NO_BYTE, KEEP) \
	F(walk, r->walk, SIM_PAGE_UNSTABLE, CACHE, KEEP)                                \
	F(rb_parent, (uint32_t)r->rb.parent, SIM_PAGE_UNSTABLE, STATE, KEEP)            \
	F(rb_left, r->rb.left, SIM_PAGE_UNSTABLE, STATE, KEEP)                          \
	F(rb_right, r->rb.right, SIM_PAGE_UNSTABLE, STATE, KEEP)                        \
	F(stable_head, r->st.head, SIM_PAGE_STABLE, STATE, KEEP)                        \
	F(stable_next, r->st.next, SIM_PAGE_STABLE, STATE, KEEP)                        \
	F(stable_prev, r->st.prev, SIM_PAGE_STABLE, STATE, KEEP)

/* A frame: its mapcount and stable node (the free list's link when free) always. */
#define SIM_FRAME_MAPPED (r->mapcount != 0)
#define SIM_FRAME_FIELDS(F, B, G)                                                       \
	F(mapcount, (uint32_t)r->mapcount, true, STATE, KEEP)                           \
	F(stable_node, sim_frame_stable_node(r), true, STATE, KEEP)                     \
	F(content, sim_frame_content_id(s, r), SIM_FRAME_MAPPED, STATE, KEEP)           \
	G(patched_node_flags_pmd_seen, SIM_FRAME_MAPPED, STATE,                         \
	  SIM_BYTE((uint8_t)sim_content_is_patched(r->content)), KEEP,                  \
	  SIM_NODE_BYTE(r->node), KEEP, SIM_BITS_BYTE(r->flags & ~FRAME_CSUM_VALID, 3),  \
	  KEEP, SIM_BYTE(sim_frame_pmd_seen(s, r)), KEEP)                               \
	F(checksum, r->checksum, r->flags & FRAME_CSUM_VALID, CACHE, KEEP)              \
	F(checksum_valid, r->flags & FRAME_CSUM_VALID, SIM_FRAME_MAPPED, CACHE, KEEP)

/* A stable node: what each kind has (sim_internal.h, struct sim_snode). */
#define SIM_SNODE_LIVE (r->kind != SNODE_FREE)
#define SIM_SNODE_IN_TREE (r->kind == SNODE_PLAIN || r->kind == SNODE_CHAIN)
#define SIM_SNODE_HAS_PAGE (r->kind == SNODE_PLAIN || r->kind == SNODE_DUP)
#define SIM_SNODE_FIELDS(F, B, G)                                                       \
	G(kind_nid_rb_black, true, STATE, SIM_BYTE(r->kind), KEEP,                      \
	  SIM_BYTE_IF(SIM_SNODE_LIVE, SIM_NODE_BYTE(r->nid)), KEEP,                     \
	  SIM_BYTE_IF(SIM_SNODE_IN_TREE, SIM_BITS_BYTE(r->rb.black, 1)), KEEP,          \
	  SIM_NO_BYTE, KEEP)                                                            \
	F(first, r->first, true, STATE, KEEP)                                           \
	F(rb_parent, (uint32_t)r->rb.parent, SIM_SNODE_IN_TREE, STATE, KEEP)            \
	F(rb_left, r->rb.left, SIM_SNODE_IN_TREE, STATE, KEEP)                          \
	F(rb_right, r->rb.right, SIM_SNODE_IN_TREE, STATE, KEEP)                        \
	F(prune_time, r->prune_time, r->kind == SNODE_CHAIN, STATE, KEEP)               \
	F(kpfn, r->kpfn, SIM_SNODE_HAS_PAGE, STATE, KEEP)                               \
	F(hlist_len, r->hlist_len, SIM_SNODE_HAS_PAGE, STATE, KEEP)                     \
	F(chain, r->chain, r->kind == SNODE_DUP, STATE, KEEP)                           \
	F(dup_next, r->dup_next, r->kind == SNODE_DUP, STATE, KEEP)                     \
	F(dup_prev, r->dup_prev, r->kind == SNODE_DUP, STATE, KEEP)                     \
	F(room_dups, r->room_dups, r->kind == SNODE_CHAIN, CACHE, KEEP)                 \
	F(stale_dups, r->stale_dups, r->kind == SNODE_CHAIN, CACHE, KEEP)

/* R(type, pool, first id, ids in use, fields): the records, in walking order. */
#define SIM_RECORDS(R)                                                                  \
	R(struct sim_mm, mm, 0, s->nmm, SIM_MM_FIELDS)                                  \
	R(struct sim_area, area, 0, s->narea, SIM_AREA_FIELDS)                          \
	R(struct sim_page, page, 1, s->nslots, SIM_PAGE_FIELDS)                         \
	R(struct sim_frame, frame, 1, s->nframes, SIM_FRAME_FIELDS)                     \
	R(struct sim_snode, snode, 1, s->nsnodes, SIM_SNODE_FIELDS)

/* --- the pools ---------------------------------------------------------------- */

/*
 * P(array, capacity, elements in use, bytes per element) of machine S: what
 * sim_free() frees, sim_clone() copies whole, sim_clone_into() and the
 * snapshots copy in part. The content store is a value of its own
 * (sim_content.h), copied beside them.
 */
#define SIM_POOLS(P, S)                                                                 \
	P(mm, mm_cap, (S)->nmm, sizeof(*(S)->mm))                                       \
	P(area, area_cap, (S)->narea, sizeof(*(S)->area))                               \
	P(page, slots_cap, (S)->nslots, sizeof(*(S)->page))                             \
	P(item_state, items_cap, (S)->item_bytes ? (S)->nslots : 0, (S)->item_bytes)    \
	P(frame, frames_cap, (S)->nframes, sizeof(*(S)->frame))                         \
	P(folio_seen, folios_cap, SIM_FOLIOS((S)->nframes), 1)                          \
	P(snode, snodes_cap, (S)->nsnodes, sizeof(*(S)->snode))

#endif
