/*
 * expect.h - a workload's [expect] sections against what a run produced:
 * one engine's trace (its counters, each process's ksm_stat, the answers of
 * its stores) and page partition. The same evaluation serves the simulator,
 * this machine's kernel and a guest's, so `ksmkit sim`, `run`, `compare`
 * and `selftest` agree on what passed.
 *
 * An expectation reads one row: the row of scan N (at = after-scan:N,
 * before that point's steps) or the run's last row (at = end). Each check
 * passes, fails, or does not apply: a counter or ksm_stat line the kernel
 * that ran lacks (6.12 has no ksm_merge_any line) is not checked, with the
 * reason. An expectation fails when one check fails, does not apply when no
 * check applies, and passes otherwise. No check applies on a kernel that
 * lacks a fact the workload requires ([global] requires: a selftest of a
 * fix, on a kernel without it). duplicates counts, at that row, the
 * pages of the region in the process whose frame another of them maps
 * (KSM's zero page counts as one frame); a page whose frame the kernel did
 * not expose (pfn 0) is left out, as ksm_functional_tests'
 * range_maps_duplicates() leaves it out.
 *
 * Nothing here runs an engine or prints unless asked to write a report.
 */
#ifndef KSMKIT_EXPECT_H
#define KSMKIT_EXPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace.h"
#include "workload.h"

enum expect_verdict { EXPECT_PASS, EXPECT_FAIL, EXPECT_NOT_APPLICABLE };

/* One check of an expectation (for an errno check, the store's answer). */
struct expect_check_result {
	enum expect_verdict verdict;
	bool have_value;      /* got is what the row says (else why says what was missing) */
	int64_t got;
	char why[200];        /* NOT_APPLICABLE, or a FAIL without a value */
};

struct expect_result {
	const struct wl_expectation *ex;
	enum expect_verdict verdict;
	uint64_t scan;        /* the row read (at = end: the last one's) */
	struct expect_check_result *check; /* ex->nchecks entries, or 1 for an errno check */
	size_t nchecks;
};

struct expect_report {
	struct expect_result *result; /* one per expectation, in file order */
	size_t n;
	size_t passed, failed, not_applicable;
	char kernel[64];      /* the semantics the checks were judged by ("6.12") */
	char unmet[200];      /* "": the kernel has every fact the workload requires; else
				 why no check applies ("kernel 6.1 lacks unshares_uffd_wp ...") */
};

/*
 * Evaluate every expectation of @wl against @t (and @pages, the partition at
 * the scan rows; may be NULL when no expectation counts duplicates). What
 * exists is judged by the kernel @t came from (its release, or the
 * simulator's semantics; the workload's own kernel when @t names none
 * that ksmkit models). 0, or -1 when out of memory.
 */
int expect_evaluate(const struct workload *wl, const struct trace *t,
		    const struct trace_page *pages, size_t npages, struct expect_report *rep);
void expect_report_free(struct expect_report *rep);

/* Whether some expectation of @wl counts duplicates (needs a partition). */
bool expect_needs_pages(const struct workload *wl);

/*
 * One line for check @i of @r: "pages_sharing >= 511: 510" or, with @why,
 * the reason it does not apply; into @buf. Returns @buf.
 */
const char *expect_check_text(const struct workload *wl, const struct expect_result *r, size_t i,
			      char *buf, size_t len);

/*
 * For people: every failed check as "FILE:LINE: [expect NAME] after scan N:
 * CHECK" on @out, prefixed by @prefix ("ksmkit: "), and with @verbose the
 * checks that passed or do not apply too.
 */
void expect_write_report(const struct workload *wl, const struct expect_report *rep,
			 const char *prefix, bool verbose, FILE *out);

/*
 * compare's view: for every expectation both sides' values, side by side,
 * each marked where it fails: "# expect merged (after scan 2): pages_sharing
 * >= 511: sim 511, kernel 510 FAILS on kernel".
 */
void expect_write_both(const struct workload *wl, const struct expect_report *a,
		       const struct expect_report *b, const char *name_a, const char *name_b,
		       FILE *out);

#endif
