/*
 * compare.h - is the simulator right? Scan-by-scan comparison of two traces
 * (normally the simulator's and the kernel's for one workload) and of the
 * page-level partitions: which virtual pages share one physical page.
 *
 * Rows are matched by kind and scan number. Every counter of the rows is
 * compared, and every field of every process's ksm_stat; time, ksmd CPU time
 * and batch numbers are not (they measure different clocks). The counters
 * that the kernel never resets (pages_scanned, pages_skipped) are compared as
 * the change since the first matched row, so a kernel that has scanned
 * before the run still compares equal. A deterministic workload must match
 * exactly; a non-deterministic one (continuous writers, time stop) is
 * compared within a relative tolerance, and the report says so. Counters
 * and ksm_stat fields the kernel does not have (6.1 has no pages_scanned,
 * say) can be left out; both sides read them as 0 anyway. No scan speed is
 * reported for a trace measured in a guest (source "guest"): its times
 * measure the emulator, not KSM.
 *
 * This module only compares and reports; it runs nothing: the
 * cross-validation pipeline that runs both engines and calls it is xval.h.
 */
#ifndef KSMKIT_COMPARE_H
#define KSMKIT_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace.h"

/* One difference between the two sides. */
struct cmp_diff {
	uint64_t scan;
	char what[TRACE_NAME_MAX + 40]; /* "pages_sharing", "main.ksm_rmap_items", "partition" */
	int64_t a, b;                   /* the two values (partition: class counts) */
	char detail[200];               /* partition: an example page that differs */
};

struct cmp_options {
	/* 0: exact. Otherwise |a - b| <= tolerance * max(|a|, |b|, 1) passes. */
	double tolerance;
	/* rows only one side has are not differences (runs timed, not counted) */
	bool ignore_missing_rows;
	/* left out: bit (1 << c) per enum trace_counter, (1 << f) per enum
	   trace_proc_field, for what the kernel that ran does not have */
	uint32_t skip_counters, skip_fields;
};

struct cmp_report {
	size_t rows_compared;
	size_t rows_missing;     /* rows one side has and the other lacks */
	size_t partitions_compared;
	uint32_t skip_counters, skip_fields; /* as cmp_options said, for the reports */
	struct cmp_diff *diff;   /* in scan order */
	size_t ndiffs, diffs_cap;
};

void cmp_report_init(struct cmp_report *r);
void cmp_report_free(struct cmp_report *r);
/* True when nothing differed and no row was missing. */
bool cmp_report_equal(const struct cmp_report *r);

/*
 * Compare the scan rows of @a and @b (the process lists must name the same
 * processes in the same order). Appends to @r; returns 0, or -1 when out of
 * memory or the traces cannot be compared (different processes).
 */
int cmp_traces(const struct trace *a, const struct trace *b, const struct cmp_options *opt,
	       struct cmp_report *r);

/*
 * Compare page partitions scan by scan: after each scan both sides must
 * group the same present pages into the same classes (pages mapping one
 * frame), and agree on which pages are absent or KSM zero pages. Frame ids
 * themselves are not compared, nor the KSM and THP flags (the simulator
 * sets neither). @names (may be NULL: "?") names pages in the report.
 * Returns 0, or -1 when out of memory.
 */
int cmp_partitions(const struct trace_page *a, size_t na, const struct trace_page *b, size_t nb,
		   const struct trace_page_names *names, struct cmp_report *r);

/*
 * Scan speed over a trace's full-scan rows, from scan 1 to its last: pages
 * scanned (ksm_tests -P's and Nai Xia's measure: memory covered per unit of
 * time) per wall-clock second and per second of ksmd CPU, in MiB/s. Returns
 * 0, or -1 when the trace has fewer than two such rows or no time passed.
 */
int cmp_scan_speed(const struct trace *t, double *wall_mib_s, double *cpu_mib_s);
/* The same over the full-scan rows of scans @from to @to (the first row at or
 * after @from, the last at or before @to). */
int cmp_scan_speed_between(const struct trace *t, uint64_t from, uint64_t to, double *wall_mib_s,
			   double *cpu_mib_s);

/*
 * The side-by-side report: for every scan, each compared counter as
 * "a | b | diff", then the differences with the first one marked.
 */
void cmp_write_table(const struct trace *a, const struct trace *b, const struct cmp_report *r,
		     const char *name_a, const char *name_b, FILE *out);
int cmp_write_json(const struct trace *a, const struct trace *b, const struct cmp_report *r,
		   FILE *out);

#endif
