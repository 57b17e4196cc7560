/*
 * trace.h - the trace stage: what a run produced, the same structs from the
 * simulator and the backend, and their file formats. It is the pivot between
 * the engines (sim/, backend/, guest/) and what reads their results
 * (compare/, plots/, sweep/, the cli).
 *
 * A trace holds one row per full scan (optionally per batch) of every
 * counter of /sys/kernel/mm/ksm under its own name (plus the pages_to_scan
 * knob, which the advisor changes), each process's /proc/PID/ksm_stat
 * fields, the scan and batch numbers, and time in ns since the run started
 * (simulated by the simulator, measured by the backend; the trace says
 * which). Event outcomes (a knob store answered EBUSY, say) are kept beside
 * the rows. A page partition (struct trace_page) says which virtual pages
 * share one physical page after each scan. This library (libksmtrace) owns
 * both in memory and their formats: trace CSV (written and read back, a
 * format version in the first line, units in column names), trace JSON
 * (written), page-partition CSV (written and read back). It does not know
 * how the numbers were obtained, nor how two runs are compared (compare.h).
 *
 * Files: trace.c (the model, names, equality), trace_csv_write.c,
 * trace_json.c, trace_csv_read.c, trace_pages.c (partitions and their CSV),
 * trace_io.c (checked output and CSV reading they share).
 */
#ifndef KSMKIT_TRACE_H
#define KSMKIT_TRACE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TRACE_FORMAT_VERSION 1
#define TRACE_NAME_MAX 63

/* Global counters, in CSV column order; names are the sysfs file names. */
enum trace_counter {
	TRACE_PAGES_SHARED,
	TRACE_PAGES_SHARING,
	TRACE_PAGES_UNSHARED,
	TRACE_PAGES_VOLATILE,
	TRACE_PAGES_SCANNED,
	TRACE_PAGES_SKIPPED,
	TRACE_FULL_SCANS,
	TRACE_STABLE_NODE_CHAINS,
	TRACE_STABLE_NODE_DUPS,
	TRACE_KSM_ZERO_PAGES,
	TRACE_GENERAL_PROFIT, /* bytes, signed */
	TRACE_PAGES_TO_SCAN,  /* the knob as read: the advisor moves it */
	TRACE_COUNTER_COUNT
};

/* Per-process fields of /proc/PID/ksm_stat, in file order. */
enum trace_proc_field {
	TRACE_KSM_RMAP_ITEMS,
	TRACE_KSM_ZERO_PAGES_PROC,
	TRACE_KSM_MERGING_PAGES,
	TRACE_KSM_PROCESS_PROFIT, /* bytes, signed */
	TRACE_KSM_MERGE_ANY,      /* 0 or 1 */
	TRACE_KSM_MERGEABLE,      /* 0 or 1 */
	TRACE_PROC_FIELD_COUNT
};

enum trace_row_kind {
	TRACE_ROW_SCAN,  /* taken when a full scan completed */
	TRACE_ROW_BATCH, /* taken after a ksmd batch (--per-batch) */
};

struct trace_proc_stat {
	bool present; /* false: the process does not exist (yet, or any more) */
	int64_t field[TRACE_PROC_FIELD_COUNT];
};

struct trace_row {
	enum trace_row_kind kind;
	uint64_t scan;        /* full scans completed since the run started */
	uint64_t batch;       /* ksmd batches since the run started */
	uint64_t time_ns;     /* since the run started: simulated, or on the kernel
			       * the wall clock less the time the runner held
			       * ksmd paused beyond its sleep to apply steps */
	uint64_t ksmd_cpu_ns; /* ksmd CPU time since the run started */
	bool valid;           /* false: a scan overlapped a workload step */
	int64_t counter[TRACE_COUNTER_COUNT];
	struct trace_proc_stat *proc; /* trace->nprocs entries */
	uint64_t *cost;       /* trace->ncosts entries: ns of each cost term since the
			       * run started (the simulator's; NULL without terms) */
};

/* The answer to one knob or run store of the workload. */
struct trace_outcome {
	uint64_t scan;               /* after which scan it ran */
	char event[TRACE_NAME_MAX + 1]; /* the workload's event name */
	int error;                   /* 0 or a positive errno (EINVAL, EBUSY) */
};

struct trace {
	char source[16];    /* "sim" or "kernel" */
	char *workload;     /* workload file name */
	char *kernel;       /* semantics followed ("6.18") or kernel release */
	char *detector;     /* volatility detector ("checksum" for the kernel) */
	bool time_simulated;
	size_t nprocs;
	char (*proc_name)[TRACE_NAME_MAX + 1];
	size_t ncosts;      /* cost terms (trace_set_costs), columns cost_NAME_ns */
	char (*cost_name)[TRACE_NAME_MAX + 1];
	struct trace_row *row;
	size_t nrows, rows_cap;
	struct trace_outcome *outcome;
	size_t noutcomes, outcomes_cap;
};

/*
 * A new, empty trace for processes @names[0..nprocs). @source is "sim" or
 * "kernel". Returns NULL when out of memory (errno ENOMEM), or (errno EINVAL)
 * when @source does not fit or a process name is not 1..TRACE_NAME_MAX bytes
 * of [A-Za-z0-9_-] or appears twice: names are CSV column prefixes.
 */
struct trace *trace_new(const char *source, size_t nprocs, const char *const *names);

/*
 * Set the descriptive fields (copied; NULL means unset and is written as an
 * empty value). Returns 0, or -1 when out of memory, leaving @t unchanged.
 */
int trace_set_info(struct trace *t, const char *workload, const char *kernel,
		   const char *detector, bool time_simulated);

/*
 * Name the cost terms each row carries (the simulator's cost model,
 * SIM_COST_TERMS), before any row is appended: columns cost_NAME_ns after
 * the process columns. Names are 1..TRACE_NAME_MAX bytes of [a-z0-9_],
 * distinct. Returns 0, or -1 with errno EINVAL (a bad name, or rows already)
 * or ENOMEM.
 */
#define TRACE_COST_PREFIX "cost_"
#define TRACE_MAX_COSTS 64
#define TRACE_COST_SUFFIX "_ns"
int trace_set_costs(struct trace *t, size_t ncosts, const char *const *names);

/*
 * Append a zeroed row (valid = true, every process absent). NULL: no memory.
 * The pointer is good until the next append.
 */
struct trace_row *trace_append(struct trace *t, enum trace_row_kind kind);

/*
 * Record an event outcome. Returns 0, or -1 when out of memory or (errno
 * EINVAL) @event is longer than TRACE_NAME_MAX.
 */
int trace_add_outcome(struct trace *t, uint64_t scan, const char *event, int error);

void trace_free(struct trace *t);

const char *trace_counter_name(enum trace_counter c);
const char *trace_proc_field_name(enum trace_proc_field f);
/* The counter / field called @name, or -1. */
int trace_counter_lookup(const char *name);
int trace_proc_field_lookup(const char *name);

/*
 * Writers. Return 0, or -1 on an output error (errno set). They flush @out,
 * so an error still in the stdio buffer (a full disk) is reported here.
 */
int trace_write_csv(const struct trace *t, FILE *out);
int trace_write_json(const struct trace *t, FILE *out);

/*
 * Read a CSV trace written by trace_write_csv. Returns 0 and a new trace, or
 * -1 with "NAME:LINE: what is wrong" in @err (NAME is @name).
 */
int trace_read_csv(FILE *in, const char *name, struct trace **out, char *err, size_t errlen);

/*
 * Format "NAME:LINE: " and @fmt into @err (nothing when @errlen is 0), as the
 * CSV readers here and in plots/ report a bad line. Always returns -1.
 */
int trace_vfail_at(char *err, size_t errlen, const char *name, size_t lineno, const char *fmt,
		   va_list ap);

/*
 * Same content (rows, outcomes, processes, info). An unset descriptive field
 * equals an empty one, and an absent process's field values do not count:
 * neither survives a CSV round trip.
 */
bool trace_equal(const struct trace *a, const struct trace *b);

/* ---- page partitions ------------------------------------------------------- */

/*
 * Which virtual pages share one physical page: after a full scan, every
 * page of every live process's regions with the frame it maps, in capture
 * order. The simulator produces it from its frames, the backend from
 * /proc/PID/pagemap and /proc/kpageflags (in a guest too); compare/ diffs
 * two of them as classes of pages sharing a frame, sweep/ counts KSM pages
 * per NUMA node from them. The flags' values are also the guest's wire
 * format (guest/kg_proto.h).
 */
#define TRACE_PAGE_PRESENT 0x1u /* a page is mapped (frame is valid) */
#define TRACE_PAGE_KSM 0x2u     /* a KSM page: the kernel's KPF_KSM (kernel only) */
#define TRACE_PAGE_ZERO 0x4u    /* KSM's zero page (use_zero_pages), shared by definition */
#define TRACE_PAGE_THP 0x8u     /* part of a transparent huge page (kernel only) */

struct trace_page {
	uint64_t scan;   /* captured after this full scan */
	uint32_t proc;   /* the workload's process index */
	uint32_t region; /* the workload's region index */
	uint64_t page;   /* page index in the region */
	uint64_t frame;  /* the physical page: its pfn on the kernel (0 when not present,
			    or not root), the simulator's frame id (0 for the zero page) */
	uint32_t flags;  /* TRACE_PAGE_* */
};

/* What a partition's process and region indices name (a workload's, in order). */
struct trace_page_names {
	const char *const *proc;
	size_t nprocs;
	const char *const *region;
	size_t nregions;
};

/*
 * Append a copy of @page to *@pages (holding *@n of room for *@cap), growing
 * it by doubling. Returns 0, or -1 when out of memory, leaving it unchanged.
 */
int trace_pages_append(struct trace_page **pages, size_t *n, size_t *cap,
		       const struct trace_page *page);

/*
 * A partition as CSV, with process and region names from @names (every
 * page's indices must be within it):
 *   # ksmkit-pages 1
 *   scan,process,region,page,pfn,present,ksm,zero,thp
 * one line a page, the flags as 0 or 1; pfn is the frame, from either
 * engine. Returns 0, or -1 on an output error (errno set); flushes @out.
 */
int trace_pages_write_csv(const struct trace_page *pages, size_t n,
			  const struct trace_page_names *names, FILE *out);

/*
 * Read a partition written by trace_pages_write_csv, names mapped back to
 * indices through @names. Returns 0 with a new array in *@out (NULL for no
 * pages; the caller frees it) and its length in *@n, or -1 with
 * "NAME:LINE: what is wrong" in @err (NAME is @name).
 */
int trace_pages_read_csv(FILE *in, const char *name, const struct trace_page_names *names,
			 struct trace_page **out, size_t *n, char *err, size_t errlen);

#endif
