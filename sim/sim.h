/*
 * sim.h - libksmsim: the kernel's KSM as a userspace simulator.
 *
 * A struct sim is one simulated machine: processes with anonymous mappings,
 * page tables and page frames, and KSM's whole state (the mm_slot list and
 * scan cursor, rmap_items, stable and unstable trees, chains, counters, the
 * knobs). It is a value: it can be cloned, hashed and compared, and nothing
 * outside it changes when it runs, so a run is a pure function of its inputs
 * (this is what makes deterministic tests and model checking possible).
 *
 * The API is fine-grained steps: ksmd processes one page, user writes one
 * page, madvise, prctl, munmap, fork, exit, sysfs stores. Whole batches and
 * whole workloads (sim_driver.h) are loops over these steps. Semantics follow
 * ../shared/KSM-SEMANTICS.md for kernel 6.18 (checksum before the stable
 * search), 6.10 (stable search first) or 6.1 (as 6.10, with only the knobs
 * and counters 6.1 has: knob stores it lacks answer ENOENT, counters it lacks
 * read 0); see sim_internal.h for the model.
 *
 * Errors: functions return 0 or a positive errno (EINVAL, EBUSY, ENOMEM,
 * EFAULT for an address that is not mapped), never print, never abort on bad
 * input; preconditions on ids are asserted.
 */
#ifndef KSMKIT_SIM_H
#define KSMKIT_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace.h"
#include "workload.h"

struct sim;

/*
 * The cost model: ksmd's CPU time as a sum of terms, each a kind of work the
 * simulator counts (a field of struct sim_work) times what one unit costs
 * (a field of struct sim_costs, in ns). One row per term:
 *
 *   X(name, cost field, work field, how `ksmkit calibrate` gets it, doc)
 *
 * name is the term's column in `ksmkit sim --csv` (cost_NAME_ns) and its
 * line in calibrate's report; the cost field is also its key in a cost
 * file. How: SIM_COST_FIT, fitted to ksmd's measured CPU time;
 * SIM_COST_MICRO, a userspace microbenchmark (calib.h); SIM_COST_KEPT, no
 * run isolates it and the default stands. A batch that follows a sleep (or
 * a pause for a workload's steps) finds the host's page tables, rmap_items
 * and pages gone from the caches: its first SIM_COLD_VISITS visits cost
 * cold_visit_ns more each (a long batch warms up, so a scan of 65536 pages
 * in one batch costs about its visits; 100 pages a batch after 20 ms sleeps,
 * the kernel's defaults, cost a quarter more), and the batch itself and
 * every mm_slot it enters cost batch_ns and mm_slot_ns, the batch the more
 * the longer ksmd slept (refill, below). A batch that
 * starts straight after the last (sleep_millisecs 0, no steps between)
 * is busy: no wakeup, nothing cold, busy_batch_ns, busy_scan_ns and
 * busy_mm_slot_ns instead (a full scan of 64 pages cost the kernel 24 us
 * busy and 39 us after 20 ms sleeps, the medians of the busy-tiny and tiny
 * rows of bench/results/cpu/calibrate.txt, 2026-12-06). A new term is a
 * row here, a default in sim_config_default() and a charge where the
 * kernel does that work; the cost file, calibrate's fit and the CSV
 * columns follow.
 */
#define SIM_COST_TERMS(X)                                                                    \
	X(visit, visit_ns, pte_visits, SIM_COST_FIT,                                         \
	  "a page the scanner stops at (PTE walk, rmap_item lookup)")                       \
	X(visit_pmd, visit_pmd_ns, pmd_visits, SIM_COST_FIT,                                 \
	  "the same for a subpage of a PMD-mapped THP")                                      \
	X(cold_visit, cold_visit_ns, cold_visits, SIM_COST_FIT,                              \
	  "more for one of the first SIM_COLD_VISITS visits of a batch after a sleep")       \
	X(busy_visit, busy_visit_ns, busy_visits, SIM_COST_FIT,                              \
	  "a page visited in a busy batch (sleep_millisecs 0), the host's tables still cached") \
	X(checksum, checksum_ns, checksums, SIM_COST_FIT, "xxh64 of one 4 KiB page")           \
	X(sample_word, sample_word_ns, sampled_words, SIM_COST_MICRO,                        \
	  "one word of a sampled checksum, a cache line of its own")                         \
	X(memcmp_byte, memcmp_byte_ns, memcmp_bytes, SIM_COST_FIT,                           \
	  "memcmp, per byte compared until the first difference")                           \
	X(tree_level, tree_level_ns, tree_levels, SIM_COST_FIT,                              \
	  "one node of a tree walk, beside its memcmp")                                      \
	X(dirty_test, dirty_test_ns, dirty_tests, SIM_COST_MICRO, "test a PTE's dirty bit")    \
	X(tlb_flush, tlb_flush_ns, tlb_flushes, SIM_COST_MICRO,                              \
	  "clear a 4 KiB PTE's dirty bit and flush it")                                      \
	X(thp_flush, thp_flush_ns, thp_flushes, SIM_COST_MICRO,                              \
	  "clear a PMD's dirty bit and flush 2 MiB")                                         \
	X(merge, merge_ns, merges, SIM_COST_FIT, "write-protect one page and replace its PTE") \
	X(merge_free, merge_free_ns, merge_frees, SIM_COST_FIT,                              \
	  "free the page a merge replaced, where that was its last mapping (not forked)")    \
	X(cold_merge, cold_merge_ns, cold_merges, SIM_COST_FIT,                              \
	  "more for one of a batch's first SIM_COLD_MERGES merges, a thousandth of it a refill") \
	X(first_merge, first_merge_ns, first_merges, SIM_COST_FIT,                           \
	  "more for a batch's first merge")                                                  \
	X(zero_merge, zero_merge_ns, zero_merges, SIM_COST_FIT,                              \
	  "map the zero page in place of an empty page (use_zero_pages)")                   \
	X(thp_split, thp_split_ns, thp_splits, SIM_COST_KEPT, "split one THP")                 \
	X(skip, skip_ns, skips, SIM_COST_FIT, "a smart-scan skip, in place of its visit")       \
	X(batch, batch_ns, batches, SIM_COST_FIT,                                            \
	  "a batch after a sleep or steps: the wakeup, its locks, caches refilled")          \
	X(refill, refill_ns, refills, SIM_COST_FIT,                                          \
	  "a thousandth of what a batch after a sleep grows by with the sleep's length")     \
	X(busy_batch, busy_batch_ns, busy_batches, SIM_COST_FIT,                             \
	  "a batch straight after the last (sleep_millisecs 0): no wakeup, caches warm")    \
	X(scan, scan_ns, scans, SIM_COST_FIT, "the start of a full scan in a batch after a sleep") \
	X(busy_scan, busy_scan_ns, busy_scans, SIM_COST_FIT,                                 \
	  "the same in a busy batch, the mm list and trees still cached")                   \
	X(lru_drain, lru_drain_ns, lru_drains, SIM_COST_FIT,                                 \
	  "a full scan's start after pages were faulted in or copied: drain the LRU caches") \
	X(mm_slot, mm_slot_ns, mm_slots, SIM_COST_FIT,                                       \
	  "an mm_slot the cursor enters (its mmap lock, the VMA lookup), in a batch after a sleep") \
	X(busy_mm_slot, busy_mm_slot_ns, busy_mm_slots, SIM_COST_FIT,                        \
	  "the same in a busy batch, its mm and VMAs still in the caches")                  \
	X(vma, vma_ns, vmas, SIM_COST_FIT,                                                   \
	  "a mapping the cursor passes through, mergeable or not")                          \
	X(absent_page, absent_page_ns, absent_pages, SIM_COST_FIT,                           \
	  "an address in a mergeable mapping with no page to visit")                        \
	X(zero_pte, zero_pte_ns, zero_ptes, SIM_COST_FIT,                                    \
	  "a PTE that maps the zero page (use_zero_pages): walked past, no visit")          \
	X(rmap_alloc, rmap_alloc_ns, rmap_allocs, SIM_COST_FIT, "allocate an rmap_item")       \
	X(rmap_free, rmap_free_ns, rmap_frees, SIM_COST_FIT,                                 \
	  "free an rmap_item, out of its tree (unmap, unmerge, exit)")                      \
	X(prune, prune_ns, prune_dups, SIM_COST_FIT,                                          \
	  "a dup of a chain looked at: all at a prune, else up to the first with room")

#define SIM_COLD_VISITS 256u
/*
 * A merge after a sleep costs more the longer ksmd slept, as its wakeup
 * does: the kernel's merge scan less its scan at rest, an 8-page host,
 * cost 2.6, 3.1 and 5.0 us a merge after sleeps of 5, 20 and 100 ms; 64
 * pages after 20 ms 2.56; 300 pages after 10 or 20 ms 2.0-2.1; 65,536
 * pages 2.12 (2026-12-06). So each of the first SIM_COLD_MERGES merges of
 * a batch after a sleep costs cold_merge_ns for each of the batch's
 * refills (sim.h, below: 0 to SIM_REFILL_UNITS by how long ksmd slept).
 */
#define SIM_COLD_MERGES 64u

/*
 * A batch that merges pays once more for it (first_merge): the kernel's
 * merge scan of 2, 4, 8 and 32 equal pages less their scans at rest, 10
 * ms sleeps, cost 12.4, 17.6, 24.8 and 83.7 us (1, 3, 7 and 31 merges;
 * two pairs, 2 merges, 15.2: medians of 12 runs each, 2026-12-06), about
 * 10 us and 2.4 a merge, where the model without the term (at a
 * calibration's costs that day) gave 3.3, 8.8, 19.8 and 85.6: no
 * intercept. What the kernel spends it on is not known here: not the new
 * KSM page (two pairs cost less than four equal pages).
 */

/*
 * The longer ksmd sleeps, the more of what it left in the caches is gone
 * when it wakes: a batch after a sleep of t costs refill_ns times
 * SIM_REFILL_UNITS (1 - exp(-t / refill_tau_ms)) beside batch_ns (the
 * refills counted are those thousandths; the first batch, after ksmd was
 * idle for long, all SIM_REFILL_UNITS). An 8-page host at rest cost the
 * kernel about 16, 19, 26, 29 and 31 us a scan with sleep_millisecs 10,
 * 20, 40, 80 and 160 (2026-12-06, sleeps of 16 to 164 ms once rounded up
 * to jiffies), which that curve follows with a time constant of 25 ms
 * (refill_tau_ms: calibrate tries several and keeps the one whose fit
 * leaves the least residual; their residuals lay within 3% of each other
 * from 10 to 100 ms in the first calibration that did, and 25 won; with
 * cold_merge, 40, 40 and 100 in the next three).
 * Charged to the scan's start instead (where ksmd drains every CPU's LRU
 * caches), the fit came out worse: 14 of 21 validation workloads within
 * 15% at their own knobs, against 19 charged to every batch.
 */
#define SIM_REFILL_UNITS 1000u
#define SIM_REFILL_TAU_MS 25.0 /* the default of sim_costs.refill_tau_ms */

/*
 * Every full scan starts by draining each CPU's LRU caches (the kernel's
 * lru_add_drain_all), which is work ksmd queues on the CPUs that hold any
 * and waits for. A page faulted in or copied on write since the last scan
 * began sits in such a cache, so the next scan's start costs lru_drain_ns
 * more (counted once however many pages: a cache holds a few dozen). Two
 * pages faulted in a region KSM does not scan, between scans of a 2-page
 * host at rest, cost the kernel about 15 us at the next scan (median of 30
 * runs, paired with the same host without them; rewriting pages already
 * there, 2 us: 2026-12-06). ksm_tests -U's writes, which copy its two KSM
 * pages, are such faults. calibrate's few-faults host has a scan with a
 * drain and one without, in turn.
 */

/* How `ksmkit calibrate` obtains a term's cost (the fourth column above). */
enum sim_cost_source { SIM_COST_FIT, SIM_COST_MICRO, SIM_COST_KEPT };

#define SIM_COST_TERM_ENUM_(name, cost, work, how, doc) SIM_TERM_##name,
enum sim_cost_term { SIM_COST_TERMS(SIM_COST_TERM_ENUM_) SIM_TERM_COUNT };
#undef SIM_COST_TERM_ENUM_

/*
 * What each unit of ksmd work costs in simulated time, in ns: one field per
 * term, besides the tick rate and how long a sleep really lasts. The
 * defaults were measured on the project's test machine (a 6.18 kernel on
 * x86); `ksmkit calibrate` measures them on the machine at hand and writes
 * a file that sim_costs_load() reads.
 */
#define SIM_COST_FIELD_(name, cost, work, how, doc) double cost;
struct sim_costs {
	uint64_t hz;           /* kernel tick rate: sleeps round up to jiffies */
	SIM_COST_TERMS(SIM_COST_FIELD_)
	double sleep_adjust_ns; /* a sleep lasts its jiffies plus this (may be < 0) */
	double refill_tau_ms;   /* refill's time constant, ms (> 0; calibrate
				   chooses it: CALIB_TAU_MS in calib.h) */
};
#undef SIM_COST_FIELD_

/*
 * Read a cost file (INI, [costs] section, keys named as the fields above) over
 * @costs: keys left out keep their values. 0, or -1 with "FILE:LINE: why".
 */
int sim_costs_load(const char *path, struct sim_costs *costs, char *err, size_t errlen);
/* Write @costs in that format, with an optional comment line. 0, or -1. */
int sim_costs_write(const struct sim_costs *costs, const char *comment, FILE *out);

/*
 * The work ksmd did: one counter per term (the units it charges), then what
 * is observed without a cost of its own.
 */
#define SIM_WORK_FIELD_(name, cost, work, how, doc) uint64_t work;
struct sim_work {
	SIM_COST_TERMS(SIM_WORK_FIELD_)
	uint64_t visits;        /* every page the scanner stopped at (pte + pmd) */
	/* the detector's verdicts against the truth (the bytes): only counted
	 * for detectors other than the checksum */
	uint64_t false_stable;  /* called stable although the bytes changed */
	uint64_t false_volatile; /* called volatile although the bytes did not */
};
#undef SIM_WORK_FIELD_

/* A term, as data: its name, cost key, how it is calibrated, what it is. */
struct sim_cost_term_info {
	const char *name;
	const char *cost_key;
	enum sim_cost_source how;
	const char *doc;
};

const struct sim_cost_term_info *sim_cost_term_info(enum sim_cost_term t);
/* A term's cost per unit in @c, its units in @w, and the ns they come to. */
double sim_cost_of(const struct sim_costs *c, enum sim_cost_term t);
void sim_cost_set(struct sim_costs *c, enum sim_cost_term t, double ns);
uint64_t sim_work_of(const struct sim_work *w, enum sim_cost_term t);
static inline double sim_term_ns(const struct sim_costs *c, const struct sim_work *w,
				 enum sim_cost_term t)
{
	return (double)sim_work_of(w, t) * sim_cost_of(c, t);
}

/*
 * Dirty-bit detectors and PMD-mapped THPs (sim/volatility_dirty.c): the
 * workload's thp_dirty policies, one value per entry of WL_THP_DIRTY_POLICIES
 * (wl_policy.h), equal to its enum wl_thp_dirty value.
 */
#define SIM_THP_DIRTY_ENUM_(e, name, doc) SIM_THP_DIRTY_##e = WL_THP_DIRTY_##e,
enum sim_thp_dirty { WL_THP_DIRTY_POLICIES(SIM_THP_DIRTY_ENUM_) };
#undef SIM_THP_DIRTY_ENUM_

struct sim_config {
	enum wl_kernel kernel;
	enum wl_detector detector;
	enum sim_thp_dirty thp_dirty;
	/* how a page's checksum is computed (WL_CHECKSUMS, wl_policy.h): a hash
	 * of the content's identity (the default, O(1)), or the kernel's xxh64
	 * over the 4096 bytes; only their equality is observable, unless the
	 * smart-scan policy reads their value (phased), and then the machine
	 * computes the kernel's whatever this says (sim_new) */
	enum wl_checksum checksum;
	/* which scans smart scan visits an aged page in (WL_SMART_SCAN_POLICIES,
	 * wl_policy.h; sim_scan.c's table of rules): the kernel's countdown by
	 * default */
	enum wl_smart_scan_policy smart_scan_policy;
	unsigned nr_nodes;      /* NUMA nodes, >= 1 */
	struct sim_costs costs;
	unsigned mutant;        /* a seeded bug, enum sim_mutant (sim_mutant.h); 0 = none */
	/* walk the unstable tree at every insert, even where a scan repeats
	 * the last one's tree and its walks are known (sim_memo.c): the same
	 * results, only slower; the model checker walks, as its invariants
	 * read the tree mid-scan */
	bool walk_every_insert;
	/* take every smart-scan skip through the scanner's walk, a page at a
	 * time; by default a run of pages that the kernel's countdown skips is
	 * taken at once (sim_scan.c): the same results, only slower (a machine
	 * with a seeded bug, mutant, always takes them a page at a time: the
	 * runs rely on an invariant a bug may break) */
	bool skip_page_by_page;
	/* walk a stable node chain's dups at every search, even where the
	 * kernel's walk would end on the head (no dup stale, none with room
	 * but the head, sim_merge.c): the same results, only slower */
	bool walk_every_chain;
};

/* The default config: kernel 6.18, checksum detector, one node, default costs. */
void sim_config_default(struct sim_config *cfg);

/*
 * A new machine with no processes, KSM knobs at the kernel's defaults and
 * run = 0. NULL with a reason in @err when @cfg is invalid or memory is short.
 */
struct sim *sim_new(const struct sim_config *cfg, char *err, size_t errlen);
void sim_free(struct sim *s);
/* An independent copy that evolves identically. NULL when out of memory. */
struct sim *sim_clone(const struct sim *s);
/*
 * How many unstable-tree inserts were charged from memory (a scan repeating
 * the last one's tree, sim_config.walk_every_insert) rather than walked.
 */
uint64_t sim_memo_inserts(const struct sim *s);
/* How many smart-scan skips were taken in runs (sim_config.skip_page_by_page). */
uint64_t sim_bulk_skips(const struct sim *s);
/* Equal states hash equal (contents are hashed by their bytes). */
uint64_t sim_hash(const struct sim *s);
bool sim_equal(const struct sim *a, const struct sim *b);

/* --- user-side steps ------------------------------------------------------ */

/* A new process with an empty address space; returns its id (>= 0) or -ENOMEM. */
int sim_process_new(struct sim *s);

/*
 * Map @npages anonymous pages in process @mm, above its other mappings, on
 * NUMA @node (-1: node 0), as THP when @thp. @label names the mapping for
 * sim_area_find (fork copies it). Returns the area id (>= 0) or -errno.
 */
int sim_mmap(struct sim *s, int mm, uint64_t npages, int node, bool thp, uint32_t label);

/*
 * Whether writes to the area set the host PTE's dirty bit (default yes). No:
 * memory written through a secondary MMU without dirty bits (EPT without
 * A/D), where only faults (first touch, COW) dirty the PTE.
 */
void sim_area_set_dirty_tracking(struct sim *s, int area, bool tracked);

/* The area of process @mm with @label, or -1. */
int sim_area_find(const struct sim *s, int mm, uint32_t label);

/* Store @value as the whole page (a fill, like memset), faulting it in. */
int sim_fill(struct sim *s, int area, uint64_t page, uint64_t value);

/* Store @value's 8 bytes at @offset of the page (COW, faults as the kernel). */
int sim_write(struct sim *s, int area, uint64_t page, uint32_t offset, uint64_t value);

/*
 * A hint, no effect on the machine: writes to the area's pages are coming
 * at @page + k * @step for k = 1, 2, ... On a large host each of a write's
 * reads (the page table entry, its frame, the content entry, its intern
 * bucket and patches) is a cache miss that depends on the one before; call
 * this once before each write, with the step between the writer's last two
 * pages: it starts each read for the page as many writes ahead as the read
 * before it had time to arrive (64, 48, 32 and 16 writes ahead). Pages out
 * of range are ignored.
 */
void sim_prefetch_writes(const struct sim *s, int area, uint64_t page, int64_t step);

/* madvise(MADV_MERGEABLE or MADV_UNMERGEABLE) on pages [first, first + count). */
int sim_madvise(struct sim *s, int area, uint64_t first, uint64_t count, bool mergeable);

/* prctl(PR_SET_MEMORY_MERGE, on). */
int sim_prctl_merge(struct sim *s, int mm, bool on);

/* munmap pages [first, first + count) of the area. */
int sim_munmap(struct sim *s, int area, uint64_t first, uint64_t count);

/* fork(): returns the child's id (>= 0) or -errno. */
int sim_fork(struct sim *s, int mm);

/* The process exits. */
int sim_exit(struct sim *s, int mm);

/*
 * madvise(MADV_DONTNEED) on pages [first, first + count): their PTEs become
 * none (a KSM zero page leaves ksm_zero_pages at once), the mapping stays and
 * stays mergeable, and the next touch faults in a zeroed page. rmap_items
 * are not touched: ksmd frees them when it passes. 0, EINVAL, or ENOMEM
 * when part of the range is unmapped (the rest is discarded, as madvise does).
 */
int sim_discard(struct sim *s, int area, uint64_t first, uint64_t count);

/*
 * mprotect of the whole area to @prot. ksmd scans and merges PROT_READ and
 * PROT_NONE pages like any others, except where the row says
 * !reaches_prot_none: there the unstable tree cannot read a PROT_NONE page
 * (a walk that meets one gives up) and unmerging cannot unshare one. Writes to
 * an area that is not writable model /proc/PID/mem (FOLL_FORCE): they break
 * COW as a write fault does and leave the PTE read-only.
 */
int sim_mprotect(struct sim *s, int area, enum wl_prot prot);

/*
 * userfaultfd: register the whole area in write-protect mode and protect it.
 * Writes to it then answer EDEADLK (with no fault handler they would wait
 * forever). Unmerging still breaks COW where the kernel's row says
 * unshares_uffd_wp. A fork child's copy is not registered.
 */
int sim_uffd_wp(struct sim *s, int area);

/*
 * execve() of process @mm: a new process with an empty address space (the
 * caller maps its regions again), merge-any and registered with KSM at once
 * when @mm was merge-any and the row says exec_keeps_merge_any (ksm_execve);
 * then @mm's old memory goes as at exit. Returns the new process's id or -errno.
 */
int sim_exec(struct sim *s, int mm);

/* --- sysfs ------------------------------------------------------------- */

/* Store a knob as the kernel would: 0, EINVAL or EBUSY (value already parsed);
 * ENOENT for a knob the semantics' kernel does not have. */
int sim_knob_store(struct sim *s, enum wl_knob knob, uint64_t value);
/* Store the knob from text exactly as written to sysfs (for EINVAL cases). */
int sim_knob_store_text(struct sim *s, enum wl_knob knob, const char *text);
uint64_t sim_knob(const struct sim *s, enum wl_knob knob);
/* Write run (0, 1, 2; others EINVAL). */
int sim_run_store(struct sim *s, uint64_t run);
unsigned sim_run(const struct sim *s);

/* --- ksmd ------------------------------------------------------------------ */

/*
 * One iteration of ksmd's batch loop: find the next page and merge it. Returns
 * true when a page was processed, false when the cursor wrapped (a full scan
 * ended: the batch ends) or there is nothing to scan.
 */
bool sim_ksmd_step(struct sim *s);

/*
 * What ksmd does in one wake-up: if run = 1 and some mm is registered, a batch
 * of up to pages_to_scan steps; then time advances by the batch's cost and
 * the sleep. Returns the number of pages processed.
 */
uint64_t sim_ksmd_batch(struct sim *s);

/*
 * The same, and *@ended_ns says when the batch ended: after its work, before
 * its sleep (when the kernel's full_scans would change, for trace rows).
 */
uint64_t sim_ksmd_batch_ended(struct sim *s, uint64_t *ended_ns);

/* Whether ksmd would scan now (run = 1 and some mm registered). */
bool sim_ksmd_runnable(const struct sim *s);

/*
 * The same batch in pieces, for a caller that reports progress inside a long
 * batch: sim_ksmd_batch_begin() (false, and nothing changed, when ksmd would
 * not run now), then sim_ksmd_steps() as often as it likes, each doing up to
 * @max steps and setting *@ended once the batch is over (pages_to_scan
 * reached, or the cursor wrapped), then sim_ksmd_batch_end(), which charges
 * the batch, sets *@ended_ns (may be NULL) and sleeps. sim_ksmd_batch_ended()
 * is exactly these three; the knobs must not change in between.
 */
bool sim_ksmd_batch_begin(struct sim *s);
uint64_t sim_ksmd_steps(struct sim *s, uint64_t max, bool *ended);
void sim_ksmd_batch_end(struct sim *s, uint64_t *ended_ns);

/* --- steps as values (for the model checker) ------------------------------ */

enum sim_step_kind {
	SIM_STEP_KSMD,     /* ksmd processes one page (or wraps): sim_ksmd_step */
	SIM_STEP_WRITE,    /* a write of @value at @offset of page @page of @area */
	SIM_STEP_MADVISE,  /* madvise pages [page, page + count) of @area, @on */
	SIM_STEP_PRCTL,    /* prctl(PR_SET_MEMORY_MERGE, @on) for process @mm */
	SIM_STEP_MUNMAP,   /* munmap pages [page, page + count) of @area */
	SIM_STEP_FORK,     /* process @mm forks */
	SIM_STEP_EXIT,     /* process @mm exits */
	SIM_STEP_KNOB,     /* store @value into knob @knob */
	SIM_STEP_RUN,      /* store @value into run */
};

struct sim_step {
	enum sim_step_kind kind;
	int mm, area;
	uint64_t page, count;
	uint32_t offset;
	uint64_t value;
	enum wl_knob knob;
	bool on;
};

/* Apply @step; returns what the underlying call returns (0, errno, or for
 * a fork the child's id). */
long sim_apply(struct sim *s, const struct sim_step *step);

/*
 * What a small configuration lets happen next. User steps are generated
 * from this alphabet; ksmd's step is enabled when ksmd would scan.
 */
struct sim_alphabet {
	const uint64_t *values;   /* values a write may store */
	size_t nvalues;
	uint32_t offset;          /* where writes store them */
	bool writes, unmerge, unmap, fork, exit;
	const struct sim_step *extra; /* further steps offered as they are */
	size_t nextra;
};

/*
 * Fill @out (up to @max) with the steps enabled in @s under @alpha, in a
 * fixed order; returns how many there are (may exceed @max).
 */
size_t sim_enabled_steps(const struct sim *s, const struct sim_alphabet *alpha,
			 struct sim_step *out, size_t max);

/* --- admission: what a workload's run will hold, before it starts --------- */

/*
 * Page writes admission lets one run schedule: at some ten million a second
 * (the simulator's pace on a busy host), more than a day of host time.
 */
#define SIM_ADMIT_MAX_WRITES UINT64_C(1000000000000)
/* sim_estimate.writes of a run whose writes are known only as it runs */
#define SIM_WRITES_UNKNOWN UINT64_MAX

/* What the caller of sim_run_workload() will keep beside the simulator. */
struct sim_admit_options {
	bool per_batch;             /* rows after every batch (sim_run_options.per_batch) */
	const struct sim_costs *costs; /* the run's cost model; NULL: the defaults */
	unsigned traces;            /* traces of this size held at once; 0 means 1 */
	size_t capture_bytes;       /* bytes kept per simulated page at every scan row
				     * (a scan hook's page partition); 0: none */
};

/*
 * An upper bound on the memory (resident bytes) a run of the workload on the
 * simulator can take, by part, with the counts behind it. Every part is
 * derived from the structs the simulator really allocates and their growth
 * rules (the model, and what it assumes of stable nodes, is described at the
 * top of sim_admit.c); a part that has no bound is UINT64_MAX.
 */
struct sim_estimate {
	uint64_t bytes;          /* the bound: the sum of the parts */
	uint64_t page_bytes;     /* page slots and frames */
	uint64_t node_bytes;     /* stable nodes */
	uint64_t content_bytes;  /* written (patched) page contents */
	uint64_t trace_bytes;    /* trace rows, their per-process columns, outcomes */
	uint64_t capture_bytes;  /* the caller's page captures */
	uint64_t other_bytes;    /* the machine, processes, areas, driver, allocator */
	uint64_t pages;          /* simulated pages, every process's copy */
	uint64_t thp_pages;      /* of those, in THP regions (they cost frames twice) */
	unsigned page_cost;      /* bytes a simulated page costs in slots and frames */
	uint64_t stable_nodes;   /* stable nodes at most */
	uint64_t contents;       /* patched contents at most */
	uint64_t rows;           /* trace rows at most */
	uint64_t writes;         /* page writes scheduled, or SIM_WRITES_UNKNOWN (a
				  * continuous writer in a run that stops after scans) */
	uint64_t continuous_writes; /* of those, by continuous writers */
	long top_writer;         /* the continuous writer with the most writes, or -1 */
};

/* Fill @out for a run of @wl with @opt (NULL: none). 0, or -1 out of memory. */
int sim_estimate(const struct workload *wl, const struct sim_admit_options *opt,
		 struct sim_estimate *out);

/*
 * Admission: may @wl run on a machine with @available bytes of memory? 0 when
 * it fits. -1 with "FILE:LINE: what does not fit, what it needs and what is
 * available" in @err, LINE being that of the key to change: the size of the
 * largest region when pages, stable nodes or contents dominate (or the
 * workload maps more than the simulator's 2^32 - 2 pages, every process's
 * copy counted; page captures count on this side), [global] scans or time
 * when trace rows dominate (or nothing bounds a time stop's batches), the rate of the
 * continuous writer (or scans or time) when the run schedules more than
 * SIM_ADMIT_MAX_WRITES page writes. @est (may be NULL) gets the estimate.
 * Reads nothing of the machine: the caller measures @available.
 */
int sim_admit(const struct workload *wl, const struct sim_admit_options *opt, uint64_t available,
	      struct sim_estimate *est, char *err, size_t errlen);

/* --- observation ---------------------------------------------------------- */

/* Every counter of /sys/kernel/mm/ksm, as trace.h names them. */
void sim_counters(const struct sim *s, int64_t out[TRACE_COUNTER_COUNT]);
/* /proc/PID/ksm_stat of process @mm; present = false once it has exited. */
void sim_process_stat(const struct sim *s, int mm, struct trace_proc_stat *out);
uint64_t sim_full_scans(const struct sim *s);
uint64_t sim_now_ns(const struct sim *s);
uint64_t sim_ksmd_cpu_ns(const struct sim *s);
/* The work done so far. */
void sim_work_get(const struct sim *s, struct sim_work *out);
/* What each cost term has charged so far, ns (its work times its cost):
 * together they are ksmd's CPU time, the batch under way included (to a ns
 * a batch: ksmd's CPU time is kept in whole ns, the terms are rounded). */
void sim_term_costs_ns(const struct sim *s, uint64_t out[SIM_TERM_COUNT]);

/* Advance the simulated clock (user time passing while ksmd sleeps). */
void sim_advance_ns(struct sim *s, uint64_t ns);
/* ksmd was held while something else ran (a workload's steps): its next
 * batch starts cold, whatever its sleep (cold_visit, SIM_COST_TERMS). */
void sim_ksmd_cool(struct sim *s);
int sim_nprocesses(const struct sim *s);

/*
 * The physical frame mapping page @page of @area: a positive frame id, 0
 * when not present, -1 for KSM's zero page. Pages sharing a frame share one
 * physical page (the partition compare checks against pagemap).
 */
long sim_page_frame(const struct sim *s, int area, uint64_t page);

#endif
