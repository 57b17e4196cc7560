/*
 * workload.h - the workload language: the contract between ksmkit's engines.
 *
 * A workload is an INI job file (docs/workload.md is the full reference):
 * a [global] section of KSM knobs and run settings, [region NAME] sections
 * describing anonymous mappings and their initial contents, [writer NAME]
 * sections of repeated writes and [event NAME] sections of one-shot actions.
 * Time is counted in full scans: "after-scan:N" means after the N-th full scan
 * since the workload started has completed and before the next one begins.
 * Everything scheduled at one point runs in file order.
 *
 * This module parses such a file strictly (any unknown key, bad value or
 * impossible combination is an error naming file:line, and no workload is
 * returned), checks the whole timeline (processes alive, pages mapped, scans
 * able to advance), and prints the normalized form, which parses back to an
 * equal workload. It does not run anything: the simulator (sim/) and the
 * backend (backend/) execute a struct workload, each in its own way, using the
 * helpers below for anything both must do identically (initial page values,
 * page selections, random picks, fresh values).
 */
#ifndef KSMKIT_WORKLOAD_H
#define KSMKIT_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "content.h"
#include "rng.h"
#include "trace.h"
#include "wl_policy.h"

#define WL_PAGE_SIZE CONTENT_PAGE_SIZE
/* Longest section name (region, writer, event, process), NUL excluded. */
#define WL_NAME_MAX 63
/* A value in a file never reaches this (the top half is for fresh values). */
#define WL_VALUE_LIMIT CONTENT_FRESH_BASE
/* Bounds on a workload, so sizes and counts never overflow downstream. */
#define WL_MAX_REGION_PAGES (UINT64_C(1) << 32) /* 16 TiB */
#define WL_MAX_SCANS (UINT64_C(1) << 32)

/*
 * The kernel releases whose KSM the simulator follows: one row each, and
 * every behaviour that differs between them a column (struct wl_kernel_row,
 * wl_kernels.c). Behaviour code reads the row; it never compares versions.
 * Following a new release is one line here plus its tests
 * (docs/adding-a-kernel.md). Columns, in order:
 *   ID, name (what `kernel =` takes and traces say), release (major * 100 +
 *   minor: which knobs, counters and ksm_stat lines exist, from the table of
 *   when each came), first and last release it stands for (0: no end),
 *   checksum_first, unshares_zero_pages, fork_copies_counts, prctl_merge,
 *   exec_keeps_merge_any, unshares_uffd_wp, reaches_prot_none (struct
 *   wl_kernel_row says what each means), and a line of doc.
 * Newest first: the first row is the default, WL_KERNEL_DEFAULT (so a
 * zeroed configuration follows it too).
 */
#define WL_KERNELS(X)                                                                        \
	X(6_18, "6.18", 618, 614, 0, true, true, false, true, true, true, true,              \
	  "checksum before the stable search; this project's host kernel")                   \
	X(6_12, "6.12", 612, 611, 613, true, true, false, true, true, true, true,            \
	  "checksum before the stable search; no ksm_merge_any/ksm_mergeable lines")         \
	X(6_10, "6.10", 610, 610, 610, false, true, false, true, true, true, true,           \
	  "stable search before the checksum (the order before 6.11)")                       \
	X(6_1, "6.1", 601, 601, 601, false, false, true, false, false, false, false,         \
	  "stable search before the checksum; no smart_scan, advisor, zero-page counts, "    \
	  "general_profit or PR_SET_MEMORY_MERGE; fork copies the per-mm counts; uffd-wp "   \
	  "stops unmerging; PROT_NONE pages are out of follow_page()'s reach")

/* Which kernel's KSM semantics the simulator follows: WL_KERNEL_6_18, ... */
enum wl_kernel {
#define WL_KERNEL_ENUM(id, ...) WL_KERNEL_##id,
	WL_KERNELS(WL_KERNEL_ENUM)
#undef WL_KERNEL_ENUM
	WL_KERNEL_COUNT
};
#define WL_KERNEL_DEFAULT WL_KERNEL_6_18

/* One kernel release's KSM, as far as the simulator's counters can tell. */
struct wl_kernel_row {
	const char *name;        /* "6.18": the kernel = value, and traces' kernel */
	unsigned release;        /* 618: knobs, counters and ksm_stat lines are those of this release */
	unsigned first, last;    /* the releases it models (wl_kernel_from_release); last 0: any later */
	bool checksum_first;     /* 6.11+: a page not yet KSM passes the checksum test before the
				    stable tree is searched (before, a first visit could join a KSM page) */
	bool unshares_zero_pages; /* 6.6+: unmerging also replaces KSM-placed zero pages */
	bool fork_copies_counts; /* before the late-2025 fix: a fork child starts with its parent's
				    ksm_rmap_items and ksm_merging_pages */
	bool prctl_merge;        /* 6.4+: prctl(PR_SET_MEMORY_MERGE) */
	bool exec_keeps_merge_any; /* ksm_execve (6.9, and stable): after execve a process that
				      was PR_SET_MEMORY_MERGE is still merge-any and registered */
	bool unshares_uffd_wp;   /* 6.2+: unmerging breaks COW with FAULT_FLAG_UNSHARE, which
				    userfaultfd write-protection lets through (before, the write
				    fault it used stopped at a uffd-wp PTE: the page stayed KSM;
				    measured on Debian's 6.1.192) */
	bool reaches_prot_none;  /* KSM's follow_page() lookups reach pages of a PROT_NONE
				    mapping (6.12, 6.18); measured on Debian's 6.1.192 they do
				    not: an unstable tree walk that meets one gives up, and
				    unmerging (break_ksm) leaves one merged. ksmd's own scan
				    still visits them, and they merge into other pages */
	const char *doc;         /* one line: what sets it apart */
};

/*
 * What a workload may require of the kernel that runs it ([global] requires):
 * a column of the rows above, by name, and what a kernel has when its row
 * has it (want). A selftest asserts what a fix made true; on a kernel
 * without the fix its expectations do not apply (compare/expect.h), though
 * both engines still run it and must agree. X(ID, name, column, want, what
 * holds on a kernel with it, and since when).
 */
#define WL_KERNEL_FACTS(X)                                                                   \
	X(CHECKSUM_FIRST, "checksum_first", checksum_first, true,                            \
	  "a page's checksum is tested before the stable tree is searched, 6.11")            \
	X(UNSHARES_ZERO_PAGES, "unshares_zero_pages", unshares_zero_pages, true,             \
	  "unmerging also replaces KSM-placed zero pages, 6.6")                              \
	X(FORK_RESETS_COUNTS, "fork_resets_counts", fork_copies_counts, false,               \
	  "a fork child's ksm_stat counts start at zero, the late-2025 fork counter fix")    \
	X(PRCTL_MERGE, "prctl_merge", prctl_merge, true, "PR_SET_MEMORY_MERGE exists, 6.4") \
	X(EXEC_KEEPS_MERGE_ANY, "exec_keeps_merge_any", exec_keeps_merge_any, true,          \
	  "PR_SET_MEMORY_MERGE survives execve, ksm_execve in 6.9")                          \
	X(UNSHARES_UFFD_WP, "unshares_uffd_wp", unshares_uffd_wp, true,                      \
	  "unmerging breaks COW of userfaultfd write-protected pages, 6.2")                  \
	X(REACHES_PROT_NONE, "reaches_prot_none", reaches_prot_none, true,                   \
	  "KSM reaches pages of PROT_NONE mappings to compare and unmerge them, 6.2")

enum wl_kernel_fact {
#define WL_KERNEL_FACT_ENUM(id, ...) WL_FACT_##id,
	WL_KERNEL_FACTS(WL_KERNEL_FACT_ENUM)
#undef WL_KERNEL_FACT_ENUM
	WL_FACT_COUNT
};

/* The fact's name ("unshares_uffd_wp"), what it says, lookup by name (-1: none). */
const char *wl_kernel_fact_name(enum wl_kernel_fact fact);
const char *wl_kernel_fact_doc(enum wl_kernel_fact fact);
int wl_kernel_fact_lookup(const char *name);
/* Whether @kernel's row has @fact. */
bool wl_kernel_has_fact(enum wl_kernel kernel, enum wl_kernel_fact fact);
/* The first fact of the set @facts (bit 1 << fact) that @kernel lacks, or -1. */
int wl_kernel_lacks(enum wl_kernel kernel, uint32_t facts);

/* The row of @kernel (a valid enum value). */
const struct wl_kernel_row *wl_kernel_row(enum wl_kernel kernel);
/* The kernel named @name ("6.12"), or -1. */
int wl_kernel_lookup(const char *name);
/* "6.1, 6.10, 6.12 or 6.18", for messages. Returns @buf. */
const char *wl_kernel_choices(char *buf, size_t len);
/* Every kernel name, NULL-terminated, in the table's order. */
const char *const *wl_kernel_names(void);

/* The simulator's policies chosen by name: enum wl_detector (how it decides
 * a page is volatile), enum wl_thp_dirty (dirty bits of PMD-mapped THPs),
 * enum wl_checksum (what a checksum is) and enum wl_smart_scan_policy (which
 * scans smart scan visits an aged page in), each generated from its list in
 * wl_policy.h. */

/* The writable KSM knobs under /sys/kernel/mm/ksm, except run. */
enum wl_knob {
	WL_KNOB_PAGES_TO_SCAN,
	WL_KNOB_SLEEP_MILLISECS,
	WL_KNOB_MAX_PAGE_SHARING,
	WL_KNOB_MERGE_ACROSS_NODES,
	WL_KNOB_USE_ZERO_PAGES,
	WL_KNOB_SMART_SCAN,
	WL_KNOB_STABLE_NODE_CHAINS_PRUNE_MILLISECS,
	WL_KNOB_ADVISOR_MODE,
	WL_KNOB_ADVISOR_MAX_CPU,
	WL_KNOB_ADVISOR_MIN_PAGES_TO_SCAN,
	WL_KNOB_ADVISOR_MAX_PAGES_TO_SCAN,
	WL_KNOB_ADVISOR_TARGET_SCAN_TIME,
	WL_KNOB_COUNT
};

/* advisor_mode values (the knob's value in knobs[]). */
enum wl_advisor_mode { WL_ADVISOR_NONE = 0, WL_ADVISOR_SCAN_TIME = 1 };

enum wl_knob_kind {
	WL_KNOB_UINT, /* a decimal number in [min, max] */
	WL_KNOB_BOOL, /* kstrtobool: 0/1, y/n, yes/no, on/off */
	WL_KNOB_ADVISOR, /* none | scan-time */
};

/* What the kernel accepts for one knob, and its default. */
struct wl_knob_info {
	const char *name; /* sysfs file name */
	enum wl_knob_kind kind;
	uint64_t def; /* the kernel's boot default */
	uint64_t min, max; /* accepted range; outside it the kernel says EINVAL */
	const char *doc; /* one line: what it controls */
};

const struct wl_knob_info *wl_knob_info(enum wl_knob knob);
/* The knob called @name, or -1. */
int wl_knob_lookup(const char *name);
/*
 * Parse @text as the kernel would for @knob. Returns 0 and sets *value, or
 * the errno the kernel would answer (EINVAL or ERANGE) with a reason in @why.
 */
int wl_knob_parse(enum wl_knob knob, const char *text, uint64_t *value, char *why, size_t whylen);
/* Format @value as the text written to sysfs ("scan-time", "1", "256"). */
const char *wl_knob_format(enum wl_knob knob, uint64_t value, char *buf, size_t len);

enum wl_stop {
	WL_STOP_SCANS, /* after stop_scans full scans */
	WL_STOP_TIME,  /* after stop_time_ns of (simulated or real) time */
};

/* A process: an address space. Initial ones come from regions, others from fork. */
struct wl_process {
	char name[WL_NAME_MAX + 1];
	int parent;         /* index of the forking process, or -1 */
	size_t fork_event;  /* FORK event creating it (valid when parent >= 0) */
	unsigned line;      /* where it is first named */
};

enum wl_fill {
	WL_FILL_SAME,   /* every page holds @value */
	WL_FILL_UNIQUE, /* every page a distinct fresh value */
	WL_FILL_ZERO,   /* zero-filled, faulted in (real anonymous pages) */
	WL_FILL_GROUPS, /* runs of COPIESxVALUE in address order */
	WL_FILL_NONE,   /* never touched: no page is present */
	WL_FILL_CAPTURE, /* one stream of a capture file, its snapshots replayed (wl_capture) */
};

enum wl_thp { WL_THP_NEVER, WL_THP_ALWAYS };

/* How a region becomes mergeable at setup. */
enum wl_merge {
	WL_MERGE_MADVISE, /* madvise(MADV_MERGEABLE) on the region */
	WL_MERGE_PRCTL,   /* prctl(PR_SET_MEMORY_MERGE) for its process */
	WL_MERGE_NONE,    /* not at setup (an event may merge it later) */
};

struct wl_group {
	uint64_t copies;
	uint64_t value;
};

/*
 * fill = capture (wl_capture.c, docs/capture.md "Replay"): a region holding
 * one stream of a capture file. Its pages are the union of the stream's VMAs
 * over the snapshots replayed, in address order (a page outside one
 * snapshot's VMAs is absent in it). Snapshot @first fills the region at
 * setup; snapshot first + k is applied at after-scan:k * @every (or, with
 * every 0, after as many scans as the capture saw since @first; or with
 * by_time, once the run's time reaches the capture's time since @first), as the
 * changes from the snapshot before it, before the point's writers and
 * events. A page's content is coded: WL_CAPTURE_ABSENT (not present: never
 * faulted in, or discarded), 0 (a page of zeros, faulted in) or 1 + i for
 * the i-th distinct non-zero token of the capture (tokens[i], in order of
 * first use), whose workload value is content_fresh_value(fresh[i]), the
 * same for the same token in every capture region of the workload: the
 * simulator needs no bytes, only which pages are equal. The backend
 * writes the captured bytes of tokens[i] instead (a --bytes capture).
 */
#define WL_CAPTURE_ABSENT UINT64_MAX

struct wl_capture_change {
	uint64_t page;
	uint64_t content; /* coded as above */
};

/* One snapshot after the first: the pages it changes, sorted by page. */
struct wl_capture_step {
	uint64_t snapshot;   /* its index in the file */
	uint64_t at_scan;    /* applied at after-scan:at_scan (UINT64_MAX with by_time) */
	uint64_t at_ns;      /* by_time: applied once the run's time reaches it */
	size_t first, count; /* its changes: changes[first .. first + count) */
};

struct wl_capture {
	char *path;            /* absolute (the key's file, relative to the workload's) */
	unsigned line;         /* of the capture key */
	uint32_t stream;       /* which stream of the file */
	bool all;              /* snapshots = all: every live one the run reaches */
	uint64_t first, last;  /* the snapshots replayed, inclusive */
	uint64_t every;        /* scans between two snapshots; 0: the full scans the
				  capture recorded (every = capture), or by_time */
	bool by_time;          /* every = time (the simulator only): snapshot k at the
				  run's time t_k - t_first, the capture's own clock,
				  applied between two ksmd batches */
	bool with_bytes;       /* the file holds the distinct pages' bytes (--bytes) */
	uint64_t *initial;     /* per page: its content at snapshot first */
	struct wl_capture_step *steps; /* snapshots first + 1 .. last */
	size_t nsteps;
	struct wl_capture_change *changes;
	size_t nchanges;
	uint64_t *tokens;      /* the distinct non-zero tokens, in order of first use */
	uint64_t ntokens;
	uint64_t *fresh;       /* per token: the fresh counter of its value */
};

/*
 * An anonymous private mapping. Regions of one process are laid out in file
 * order at increasing addresses, each its own VMA, and set up in file order:
 * map, fill, then mark mergeable. A process's KSM registration order is thus
 * the order of its first region with merge != none.
 */
struct wl_region {
	char name[WL_NAME_MAX + 1];
	unsigned line;          /* of the [region NAME] header */
	unsigned size_line;     /* of its size, pages or groups key */
	const char *size_key;   /* which of the three ("size", "pages", "groups") */
	size_t process;         /* owning process */
	uint64_t pages;
	enum wl_fill fill;
	uint64_t value;         /* WL_FILL_SAME */
	struct wl_group *groups; /* WL_FILL_GROUPS */
	size_t ngroups;
	uint64_t unique_base;   /* WL_FILL_UNIQUE: page i holds fresh value unique_base + i */
	int node;               /* NUMA node, or -1 for the kernel's choice */
	enum wl_thp thp;
	enum wl_merge merge;
	bool dirty_tracking;    /* simulator: writes set the PTE dirty bit (default) */
	struct wl_capture *capture; /* WL_FILL_CAPTURE, else NULL */
};

/* Which pages of a region an action touches. */
enum wl_sel_kind {
	WL_SEL_ALL,    /* every page */
	WL_SEL_LIST,   /* sorted, disjoint ranges */
	WL_SEL_EVERY,  /* start, start + step, ... */
	WL_SEL_RANDOM, /* count distinct pages, drawn anew at each application */
};

struct wl_range {
	uint64_t first, last; /* inclusive */
};

struct wl_pagesel {
	enum wl_sel_kind kind;
	struct wl_range *ranges; /* WL_SEL_LIST */
	size_t nranges;
	uint64_t step, start;    /* WL_SEL_EVERY */
	uint64_t count;          /* WL_SEL_RANDOM */
};

/* Where in the page a write lands: fixed (lo == hi) or uniform in [lo, hi]. */
struct wl_offset {
	uint32_t lo, hi;
};

/* What a write stores: a fixed value or a never-seen one each time. */
struct wl_value {
	bool fresh;
	uint64_t value;
};

enum wl_when {
	WL_WHEN_EVERY_SCAN, /* after each full scan in [from_scan, until_scan] */
	WL_WHEN_AFTER_SCAN, /* once, after scan from_scan (== until_scan) */
	WL_WHEN_CONTINUOUS, /* at @rate page writes per second, from after
			       scan from_scan until after scan until_scan */
};

#define WL_FOREVER UINT64_MAX

struct wl_writer {
	char name[WL_NAME_MAX + 1];
	unsigned line;
	size_t seq;            /* position among writers and events (file order) */
	size_t region;
	size_t process;        /* the process whose copy of the region is written */
	struct wl_pagesel pages;
	struct wl_offset offset;
	struct wl_value value;
	enum wl_when when;
	uint64_t from_scan, until_scan; /* until_scan may be WL_FOREVER */
	uint64_t rate;         /* WL_WHEN_CONTINUOUS: page writes per second */
	unsigned rate_line;    /* of the rate key (0 without one) */
};

enum wl_action {
	WL_ACT_WRITE,   /* write a value into pages */
	WL_ACT_MERGE,   /* MADV_MERGEABLE, or PR_SET_MEMORY_MERGE 1 for a prctl region */
	WL_ACT_UNMERGE, /* MADV_UNMERGEABLE, or PR_SET_MEMORY_MERGE 0 for a prctl region */
	WL_ACT_UNMAP,   /* munmap pages */
	WL_ACT_FORK,    /* fork the process; the child is a new process */
	WL_ACT_EXIT,    /* the process exits */
	WL_ACT_SET,     /* write a KSM knob */
	WL_ACT_RUN,     /* write /sys/kernel/mm/ksm/run */
	WL_ACT_DISCARD, /* madvise(MADV_DONTNEED): the PTEs become none, the pages read
			   as zero at their next touch (KSM's items linger until ksmd
			   passes) */
	WL_ACT_PROTECT, /* mprotect of the whole region: prot = none, read or rw */
	WL_ACT_EXEC,    /* the process execs itself: its old memory goes as at exit,
			   what survives exec survives (the prctl flag, where the
			   kernel has ksm_execve), and its regions are set up again */
	WL_ACT_MERGE_OFF, /* prctl(PR_SET_MEMORY_MERGE, 0) for a prctl process */
	WL_ACT_UFFD_WP, /* register the whole region with userfaultfd in write-protect
			   mode, then write-protect it (no handler: nothing may write
			   it afterwards) */
};

/* What an mprotect leaves a region: PROT_READ | PROT_WRITE, PROT_READ, PROT_NONE.
 * Writes to a region that is not rw go through /proc/PID/mem (FOLL_FORCE). */
enum wl_prot { WL_PROT_RW, WL_PROT_READ, WL_PROT_NONE };

/* What a SET or RUN store is expected to answer. */
enum wl_expect {
	WL_EXPECT_OK,
	WL_EXPECT_EINVAL,
	WL_EXPECT_EBUSY,
	WL_EXPECT_ERANGE,
	WL_EXPECT_ANY,
};

struct wl_event {
	char name[WL_NAME_MAX + 1];
	unsigned line;
	size_t seq;
	uint64_t at_scan;
	enum wl_action action;
	long region;           /* -1 where the action takes none */
	size_t process;        /* the acting process (not for SET/RUN) */
	struct wl_pagesel pages; /* WRITE, MERGE, UNMERGE, UNMAP */
	struct wl_offset offset; /* WRITE */
	struct wl_value value;   /* WRITE */
	size_t child;          /* FORK: the new process */
	enum wl_knob knob;     /* SET */
	char knob_text[32];    /* SET: the text stored, exactly as written */
	uint64_t knob_value;   /* SET: parsed, when the kernel accepts it */
	uint64_t run;          /* RUN: 0, 1 or 2 (others only with expect = EINVAL) */
	enum wl_expect expect; /* SET, RUN */
	enum wl_prot prot;     /* PROTECT */
};

/*
 * [expect NAME]: what a run must show, checked by both engines on their
 * trace afterwards. Either checks of counters at one row (at = after-scan:N
 * or end), or the answer of one store (event = E, errno = ...).
 */
enum wl_check_kind {
	WL_CHECK_COUNTER,    /* a counter of /sys/kernel/mm/ksm (enum trace_counter) */
	WL_CHECK_PROC_FIELD, /* PROCESS.FIELD: a line of its ksm_stat (enum trace_proc_field) */
	WL_CHECK_DUPLICATES, /* pages of region R (in process P) whose frame another of them maps */
};

enum wl_cmp { WL_CMP_EQ, WL_CMP_NE, WL_CMP_LT, WL_CMP_LE, WL_CMP_GT, WL_CMP_GE };

struct wl_check {
	enum wl_check_kind kind;
	int index;        /* COUNTER: enum trace_counter; PROC_FIELD: enum trace_proc_field */
	size_t process;   /* PROC_FIELD, DUPLICATES */
	size_t region;    /* DUPLICATES */
	enum wl_cmp cmp;
	int64_t value;    /* what the counter is compared with */
	unsigned line;
};

struct wl_expectation {
	char name[WL_NAME_MAX + 1];
	unsigned line;
	bool at_end;          /* at = end: the last row of the run */
	uint64_t at_scan;     /* at = after-scan:N: the row of scan N (before its steps) */
	struct wl_check *checks;
	size_t nchecks;
	long event;           /* an errno check: the set or run event, else -1 */
	enum wl_expect error; /* with event: what the store answered (ok, EINVAL, ...) */
};

struct workload {
	char *path;            /* name used in messages */
	char *description;     /* free text, or NULL */
	char *upstream;        /* the upstream test it is ("ksm_tests -P -s 100"), or NULL */
	uint32_t requires;     /* kernel facts its expectations need: bit 1 << wl_kernel_fact */
	enum wl_kernel kernel;
	enum wl_detector detector;
	enum wl_thp_dirty thp_dirty;
	enum wl_checksum checksum; /* simulator only: how it computes checksums */
	/* simulator only, or a kernel built with it: when smart scan visits an aged page */
	enum wl_smart_scan_policy smart_scan_policy;
	unsigned smart_scan_policy_line; /* of [global] smart_scan_policy, 0 if not given */
	uint64_t knobs[WL_KNOB_COUNT]; /* every knob, defaults filled in */
	bool knob_given[WL_KNOB_COUNT];
	enum wl_stop stop;
	uint64_t stop_scans;
	uint64_t stop_time_ns;
	unsigned stop_line;    /* of [global] scans or time */
	uint64_t timeout_ns;   /* wall-clock limit of a kernel run */
	uint64_t seed;
	struct wl_process *procs; /* initial processes first, then forked ones */
	size_t nprocs;
	size_t nprocs_initial;
	struct wl_region *regions;
	size_t nregions;
	struct wl_writer *writers;
	size_t nwriters;
	struct wl_event *events;
	size_t nevents;
	struct wl_expectation *expects; /* in file order */
	size_t nexpects;
	uint64_t fresh_start;  /* first fresh counter not taken by fill = unique */
	bool deterministic;    /* no continuous writer and no time stop */
};

/* A parse error: "FILE:LINE: message", and the line alone. */
struct wl_error {
	unsigned line;
	char text[512];
};

/*
 * Parse the workload file at @path. On success returns 0 and a workload the
 * caller frees with wl_free(). On failure returns -1, sets *out to NULL and
 * fills @err ("path:line: what is wrong", line 0 when the file cannot be read).
 */
int wl_parse_file(const char *path, struct workload **out, struct wl_error *err);

/* Same, from @len bytes of @text (need not be NUL-terminated), named @name. */
int wl_parse_buffer(const char *text, size_t len, const char *name,
		    struct workload **out, struct wl_error *err);

void wl_free(struct workload *wl);

/* Print the normalized workload: every key explicit, canonical forms. */
int wl_print(const struct workload *wl, FILE *out);
/*
 * The same, but with only the knobs the workload gave: knobs left out keep
 * their defaults, and a kernel that lacks a knob can tell a knob the
 * workload wants (given) from one it merely inherits. Parses back equal.
 */
int wl_print_given(const struct workload *wl, FILE *out);

/* Whether two workloads mean the same run (names, lines and path ignored
 * where they do not change meaning: section names do count). */
bool wl_equal(const struct workload *a, const struct workload *b);

const char *wl_kernel_name(enum wl_kernel kernel);

/*
 * Whether @kernel has the file or field called @name: a knob or counter under
 * /sys/kernel/mm/ksm, or a line of /proc/PID/ksm_stat (ksm_merging_pages
 * counts as present in every kernel: older ones print it in its own file).
 * Names this table does not know exist everywhere. When @since is not NULL it
 * gets the release that added @name ("6.7").
 */
bool wl_kernel_exports(enum wl_kernel kernel, const char *name, const char **since);
bool wl_kernel_has_knob(enum wl_kernel kernel, enum wl_knob knob);
/* Whether @kernel has every knob, counter and line the table knows. */
bool wl_kernel_exports_all(enum wl_kernel kernel);
/* The release that added @name ("6.7"), or NULL for names every kernel has. */
const char *wl_export_since(const char *name);
/* Whether @kernel has prctl(PR_SET_MEMORY_MERGE) (6.4 and later). */
bool wl_kernel_has_prctl_merge(enum wl_kernel kernel);

/* The initial process whose regions @proc has: itself, or its fork ancestor. */
size_t wl_process_root(const struct workload *wl, size_t proc);
/* Whether @proc's regions say merge = prctl (then all of them do). */
bool wl_process_uses_prctl(const struct workload *wl, size_t proc);

/*
 * The rules KSM's knobs obey beyond each value's own range (wl_knob_parse),
 * one list for every reader of knobs: the workload language's [global] and
 * [event] set = KNOB=VALUE, and the model checker's [check] and its
 * store_values. Each check returns the first rule broken, or WL_KNOBS_OK,
 * with the knob at fault and a reason (without the caller's "[global] ").
 */
enum wl_knob_rule {
	WL_KNOBS_OK,
	WL_KNOBS_NOT_IN_KERNEL,   /* a knob @kernel lacks ("smart_scan: kernel 6.1 has no ...") */
	WL_KNOBS_ADVISOR_OWNS,    /* pages_to_scan set while advisor_mode = scan-time: EINVAL */
	WL_KNOBS_NEVER_SCANS,     /* pages_to_scan 0 where full scans are awaited: they never end */
};

/*
 * The knobs a run starts with: @knobs[k] (the defaults where !@given[k]) on
 * @kernel; @awaits_scans when the run stops after full scans (or explores
 * them, as the model checker does). The advisor's pages_to_scan is
 * advisor_min_pages_to_scan.
 */
enum wl_knob_rule wl_knobs_check(enum wl_kernel kernel, const uint64_t *knobs, const bool *given,
				 bool awaits_scans, enum wl_knob *knob, char *why, size_t whylen);

/*
 * A store of @value into @knob during a run: @advisor_on when advisor_mode
 * is scan-time at that moment. WL_KNOBS_NEVER_SCANS and WL_KNOBS_ADVISOR_OWNS
 * only; the kernel's own answer to the store's text is wl_knob_parse's.
 */
enum wl_knob_rule wl_knob_store_check(enum wl_knob knob, uint64_t value, bool advisor_on,
				      bool awaits_scans);

/*
 * The semantics that model the kernel whose `uname -r` is @release
 * ("6.1.0-28-amd64", "6.18.2"): the row whose first..last holds it (6.1.x,
 * 6.10.x, 6.11 to 6.13 as 6.12, 6.14 or later as 6.18). Returns 0, or -1
 * with a reason in @why for a release no row models.
 */
int wl_kernel_from_release(const char *release, enum wl_kernel *kernel, char *why,
			   size_t whylen);
/*
 * The smart-scan policy the kernel whose `uname -r` is @release carries:
 * the hook the backend asks before it runs a workload's smart_scan_policy
 * on a real kernel, and the one a comparison asks to make the simulator
 * follow a patched kernel. A kernel built with a policy other than upstream
 * says so at the end of its release, "+NAME" (CONFIG_LOCALVERSION="+phased":
 * the guest kernel "6.12+phased"); any other release (and NULL) carries
 * upstream, the kernel's own countdown.
 */
enum wl_smart_scan_policy wl_kernel_smart_scan_policy(const char *release);
/* The word a workload writes for each policy (wl_policy.h's lists). */
const char *wl_detector_name(enum wl_detector detector);
const char *wl_thp_dirty_name(enum wl_thp_dirty policy);
const char *wl_checksum_name(enum wl_checksum checksum);
const char *wl_smart_scan_policy_name(enum wl_smart_scan_policy policy);
const char *wl_action_name(enum wl_action action);
const char *wl_expect_name(enum wl_expect expect);
const char *wl_prot_name(enum wl_prot prot);
/* "=", "!=", "<", "<=", ">", ">=" */
const char *wl_cmp_name(enum wl_cmp cmp);
/* Whether @got compares with @want as @cmp says (got CMP want). */
bool wl_cmp_holds(enum wl_cmp cmp, int64_t got, int64_t want);
/* What an expectation's checks read, for messages: "pages_sharing",
 * "main.ksm_zero_pages", "duplicates in region map of main". Returns @buf. */
const char *wl_check_what(const struct workload *wl, const struct wl_check *check, char *buf,
			  size_t len);

/*
 * Initial content of page @page of @region: returns true and sets *value
 * when the page is present after setup, false for fill = none.
 */
bool wl_region_initial_value(const struct wl_region *region, uint64_t page, uint64_t *value);

/*
 * Capture regions: the workload value of a coded content (false for
 * WL_CAPTURE_ABSENT), the capture token behind it (CAP_TOKEN_ZERO, 0, for a
 * zero page), and the snapshot applied after scan @scan (NULL: none then).
 */
bool wl_capture_value(const struct wl_capture *cap, uint64_t content, uint64_t *value);
uint64_t wl_capture_token(const struct wl_capture *cap, uint64_t content);
const struct wl_capture_step *wl_capture_step_at(const struct wl_capture *cap, uint64_t scan);
/* every = time: how many of the steps are due at the run's time @now_ns. */
size_t wl_capture_steps_due(const struct wl_capture *cap, uint64_t now_ns);

/* Number of pages @sel picks in a region of @npages pages. */
uint64_t wl_pagesel_count(const struct wl_pagesel *sel, uint64_t npages);

/*
 * Iterate over the pages @sel picks, in increasing order. A random selection
 * draws from @rng (advancing it); others ignore it.
 */
struct wl_page_iter {
	const struct wl_pagesel *sel;
	uint64_t npages;
	struct wl_rng *rng;
	uint64_t next;     /* next candidate page */
	size_t range;      /* WL_SEL_LIST: current range */
	uint64_t wanted;   /* WL_SEL_RANDOM: pages still to pick */
};

void wl_page_iter_init(struct wl_page_iter *it, const struct wl_pagesel *sel,
		       uint64_t npages, struct wl_rng *rng);
bool wl_page_iter_next(struct wl_page_iter *it, uint64_t *page);

/* The offset of one write: fixed, or drawn from @rng. */
uint32_t wl_offset_pick(const struct wl_offset *offset, struct wl_rng *rng);

/* Random stream of writer @index / event @index (disjoint streams). */
struct wl_rng wl_writer_rng(const struct workload *wl, size_t index);
struct wl_rng wl_event_rng(const struct workload *wl, size_t index);

/*
 * Steps scheduled after scan @scan (0 = after setup, before the first scan),
 * in file order: writers with when = every-scan or after-scan, and events.
 * Continuous writers are not steps. Fills @steps (up to @max) and returns the
 * total number, which may exceed @max.
 */
struct wl_step {
	bool is_event;
	size_t index; /* into writers[] or events[] */
};
size_t wl_steps_after_scan(const struct workload *wl, uint64_t scan,
			   struct wl_step *steps, size_t max);

/*
 * Number helpers shared with the CLI. Each takes the whole text and returns
 * 0, or -1 with errno ERANGE when the number does not fit in 64 bits (too
 * large) and EINVAL when the text is not such a number.
 */
/* Sizes: "4k", "100m", "2g", "1MiB" (base 2). */
int wl_parse_size(const char *text, uint64_t *bytes);
/* Times: "10s", "250ms", "2m", "1h", "500us", "7ns" (bare numbers are seconds). */
int wl_parse_time(const char *text, uint64_t *ns);
/* A decimal or 0x-hexadecimal unsigned number. */
int wl_parse_u64(const char *text, uint64_t *value);
/* A byte count for people: "512 bytes", "1.5 GiB", "more than 16 EiB" for
 * UINT64_MAX (an unbounded amount). Returns @buf. */
const char *wl_bytes_text(uint64_t bytes, char *buf, size_t len);

/* Line helpers for ksmkit's INI-like readers (workloads, model-checker
 * configurations): cut a '#' or ';' comment that starts @s or follows
 * whitespace; strip leading and trailing whitespace in place. */
void wl_strip_comment(char *s);
void wl_trim(char *s);
/* The choices of a NULL-terminated list of @names for a message: "a, b or c"
 * ("a" alone, "a or b"), into @buf, which is returned (cut to fit @len). */
const char *wl_choices_text(const char *const *names, char *buf, size_t len);

#endif
