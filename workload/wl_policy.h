/*
 * wl_policy.h - the simulator's pluggable policies that a workload's
 * [global] (and a model checker configuration's [check]) chooses by name:
 * one list per kind of policy, and nothing else names them.
 *
 * Each entry is X(ENUM, name, "what it does"): ENUM names the enum value
 * (WL_DETECTOR_ENUM), name is the word a workload writes (`detector = name`)
 * and a C identifier, and the text is one line for people. From a list every
 * reader generates what it needs, in list order: the enum here, the workload
 * key's names, its lint message listing the choices and wl_print's word
 * (workload.c), the model checker configuration's names and message
 * (mc/mc_config.c), the simulator's ops table (sim/sim_detector.h, whose
 * entry for `name` is sim/volatility_<name>.c's sim_volatility_<name>) and
 * the build's list of detector sources (sim/detectors-am writes
 * sim/detectors.am from WL_DETECTORS, one X( per line). So a new volatility
 * detector is one file, sim/volatility_NAME.c, and one line below.
 *
 * What is not here: KSM's own knobs (merge_across_nodes, the tree layout;
 * max_page_sharing, chains; smart_scan, whether smart scan runs at all, as
 * against smart_scan_policy, how; use_zero_pages) are the kernel's one
 * implementation with a value, and live in the knob table (wl_knob_info);
 * kernel releases are rows of the kernel table (WL_KERNELS, workload.h). Only
 * choices between different implementations of one decision are policies.
 */
#ifndef KSMKIT_WL_POLICY_H
#define KSMKIT_WL_POLICY_H

/*
 * How the simulator decides, at a visit, that a page changed since its last
 * visit (it is volatile and waits). The first is the default.
 */
#define WL_DETECTORS(X)                                                                            \
	X(CHECKSUM, checksum, "the kernel's rule: the page's checksum differs from the last "      \
	  "visit's")                                                                               \
	X(DIRTY, dirty, "the 2011 proposal: test and clear the PTE dirty bit")                     \
	X(HYBRID, hybrid, "the dirty bit where writes set it, the checksum where they do not")     \
	X(PARTIAL, partial, "a checksum over a sample of the page's words, grown where it misses") \
	/* a new detector: its line above this one, its file sim/volatility_NAME.c */

/*
 * What the dirty-bit detectors do about a PMD-mapped THP, which has one dirty
 * bit for its 512 subpages (sim/volatility_dirty.c). The first is the default.
 */
#define WL_THP_DIRTY_POLICIES(X)                                                                   \
	X(ALL, all, "a dirty PMD makes the whole folio volatile for the scan")                     \
	X(SPLIT, split, "split the THP at its first visit, then track its 4 KiB PTEs")             \
	X(CHECKSUM, checksum, "checksum the subpages of a PMD-mapped THP")                         \
	/* a new policy: its line above this one, its rule thp_NAME() in volatility_dirty.c */

/*
 * What the simulator computes as a page's checksum (the value the checksum
 * rule compares between visits; sim/sim_content.c). Only equality between
 * checksums is observable, so the default is a 32-bit hash of the content's
 * identity, equal exactly when the bytes are equal up to a collision chance
 * of about 2^-32 per pair of distinct contents (the kernel's own 32 bits of
 * xxh64 have the same); xxh64 computes the kernel's value over the 4096
 * bytes, for studies of its collisions. The first is the default.
 */
#define WL_CHECKSUMS(X)                                                                            \
	X(CONTENT, content, "a 32-bit hash of the page's bytes kept with its content, O(1)")      \
	X(XXH64, xxh64, "the kernel's: the low 32 bits of xxh64 over the page's 4096 bytes")      \
	/* a new one: its line above this one, its function in sim/sim_content.c's table */

/*
 * When smart scan (the smart_scan knob, on by default) looks at a page that
 * is not KSM and has been looked at three times or more (sim/sim_scan.c's
 * table of rules). The kernel's rmap_item ages by one at every scan that
 * considers it; ages 0 to 2 are always visited. After that a page is visited
 * once in every few scans, but which ones depends on the policy: the
 * kernel's countdown starts from whenever the item was created, so two equal
 * pages can be out of phase for good (mc/configs/smart-scan.conf). The
 * other two visit in the scans where the full-scan count (seqnr) is a
 * multiple of a power-of-two period (2 to age 5, 4 to age 8, then 8), plain
 * or offset by the page's stored checksum, which equal pages share. The
 * first is the default.
 */
#define WL_SMART_SCAN_POLICIES(X)                                                                  \
	X(UPSTREAM, upstream, "the kernel's countdown: skip 1, 2, 4, then 8 scans between visits, " \
	  "counted from the item's creation")                                                      \
	X(ALIGNED, aligned, "visit when seqnr is a multiple of the period (2, 4, then 8): every "   \
	  "page of one period in the same scans")                                                  \
	X(PHASED, phased, "visit when seqnr + oldchecksum is a multiple of the period "            \
	  "(patches/ksm-smart-scan-phased.patch)")                                                 \
	/* a new policy: its line above this one, its rule in sim/sim_scan.c's table */

#define WL_POLICY_ENUM_DETECTOR_(e, name, doc) WL_DETECTOR_##e,
enum wl_detector { WL_DETECTORS(WL_POLICY_ENUM_DETECTOR_) WL_DETECTOR_COUNT };
#undef WL_POLICY_ENUM_DETECTOR_

#define WL_POLICY_ENUM_THP_DIRTY_(e, name, doc) WL_THP_DIRTY_##e,
enum wl_thp_dirty { WL_THP_DIRTY_POLICIES(WL_POLICY_ENUM_THP_DIRTY_) WL_THP_DIRTY_COUNT };
#undef WL_POLICY_ENUM_THP_DIRTY_

#define WL_POLICY_ENUM_CHECKSUM_(e, name, doc) WL_CHECKSUM_##e,
enum wl_checksum { WL_CHECKSUMS(WL_POLICY_ENUM_CHECKSUM_) WL_CHECKSUM_COUNT };
#undef WL_POLICY_ENUM_CHECKSUM_

#define WL_POLICY_ENUM_SMART_SCAN_(e, name, doc) WL_SMART_SCAN_##e,
enum wl_smart_scan_policy {
	WL_SMART_SCAN_POLICIES(WL_POLICY_ENUM_SMART_SCAN_) WL_SMART_SCAN_COUNT
};
#undef WL_POLICY_ENUM_SMART_SCAN_

/* For a reader's name table: { WL_DETECTORS(WL_POLICY_NAME) NULL }. */
#define WL_POLICY_NAME(e, name, doc) #name,

#endif
