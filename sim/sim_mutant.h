/*
 * sim_mutant.h - seeded bugs: realistic mistakes in the simulator that the
 * model checker (mc/, `ksmkit check --mutant NAME`) must catch.
 *
 * A mutant is chosen at run time through struct sim_config's `mutant` field
 * (0: none, the simulator as written). Each one is a single
 * `if (s->cfg.mutant == SIM_MUTANT_X)` branch in the sim_*.c files, marked with a
 * comment naming it, so reading the hooks shows each bug exactly; a bug in a
 * lock's handling is in mc/mc_model.c, since locks are the model checker's
 * state (the simulator runs one step at a time and takes none). The list
 * below is the one place that names them: enum value, command-line name, and
 * what the mistake is. tests/check_mc.c asserts which invariant catches each.
 */
#ifndef KSMKIT_SIM_MUTANT_H
#define KSMKIT_SIM_MUTANT_H

/* X(ENUM, "name", "what the mistake is") */
#define SIM_MUTANTS(X)                                                                   \
	X(NO_WRPROTECT, "no-wrprotect",                                                  \
	  "merging without write-protecting the page that becomes the KSM page")        \
	X(CHECKSUM_AS_MEMCMP, "checksum-as-memcmp",                                      \
	  "the unstable tree compares stored checksums, and a checksum match merges "   \
	  "without the memcmp")                                                          \
	X(NO_UNSTABLE_RESET, "no-unstable-reset",                                        \
	  "a new full scan does not empty the unstable tree")                           \
	X(COW_KEEPS_STABLE_ITEM, "cow-keeps-stable-item",                                \
	  "a page copied on write keeps its stable item at its next visit")             \
	X(WRONG_NODE_TREE, "wrong-node-tree",                                            \
	  "a new KSM page goes into node 0's stable tree whatever its node")            \
	X(DUP_OVER_LIMIT, "dup-over-limit",                                              \
	  "a KSM page takes merges until it holds max_page_sharing + 1 mappings")       \
	X(SHARING_OFF_BY_ONE, "sharing-off-by-one",                                      \
	  "dropping a stale stable node counts its last item as sharing, not shared")   \
	X(MAC_RACE, "mac-race",                                                          \
	  "seed-004: the merge_across_nodes store checks run and pages_shared before "  \
	  "taking ksm_thread_mutex, so ksmd can merge between the check and the change") \
	X(MAC_EBUSY_LEAK, "mac-ebusy-leak",                                              \
	  "seed-004: the merge_across_nodes store returns EBUSY from under "             \
	  "ksm_thread_mutex without unlocking it, so ksmd's next batch and every "       \
	  "later store that takes the mutex block forever")                              \
	X(INSERT_REVERSED, "insert-reversed",                                            \
	  "stable_tree_insert goes right where the stable search goes left")            \
	X(ZERO_PAGE_UNCOUNTED, "zero-page-uncounted",                                    \
	  "merging a page with the zero page forgets ksm_zero_pages")                   \
	X(COW_REUSES_KSM, "cow-reuses-ksm",                                              \
	  "a write fault reuses a KSM page mapped only once instead of copying it")     \
	X(NO_KEYHOLE, "no-keyhole",                                                      \
	  "a stable node is trusted without checking that its page is still its KSM page") \
	X(DIRTY_NO_CLEAR, "dirty-no-clear",                                              \
	  "the dirty-bit detector tests the PTE dirty bit but forgets to clear it")     \
	X(DIRTY_UNTRACKED, "dirty-untracked",                                            \
	  "the hybrid detector trusts the dirty bit on memory without dirty tracking")  \
	X(PHASE_BY_ADDRESS, "phase-by-address",                                          \
	  "phased smart scan offsets seqnr by the page's address, not its checksum, "  \
	  "so equal pages at different addresses are visited in different scans")

#define SIM_MUTANT_ENUM_(name, cli, what) SIM_MUTANT_##name,
enum sim_mutant {
	SIM_MUTANT_NONE = 0,
	SIM_MUTANTS(SIM_MUTANT_ENUM_)
	SIM_MUTANT_COUNT
};
#undef SIM_MUTANT_ENUM_

#endif
