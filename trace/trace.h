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
 * the rows. This library (libksmtrace) owns the trace in memory and its
 * formats: CSV (written and read back, a format version in the first line,
 * units in column names) and JSON (written). It does not know how the
 * numbers were obtained, nor how two runs are compared (compare.h).
 *
 * Files: trace.c (the model, names, equality), trace_csv_write.c,
 * trace_json.c, trace_csv_read.c, trace_io.c (checked output and CSV
 * reading they share).
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

#endif
