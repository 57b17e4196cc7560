/*
 * wl_internal.h - what the workload module's files share and nobody else sees:
 * the parse context that records the first error, the value parsers each
 * section's keys are built from, and the set of unmapped pages the timeline
 * check keeps (wl_holes.c). Not installed.
 */
#ifndef KSMKIT_WL_INTERNAL_H
#define KSMKIT_WL_INTERNAL_H

#include "workload.h"

/* One parse in progress: the workload being built and its first error. */
struct wl_ctx {
	struct workload *wl;
	struct wl_error *err;
	bool failed;
};

/* Record "PATH:LINE: message" unless an error is already recorded. */
void wl_fail(struct wl_ctx *ctx, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Value parsers. Each returns 0 on success, or -1 and writes the reason
 * (what was expected) into @why, for the caller to prefix with file:line,
 * section and key.
 */
int wl_parse_name(const char *text, char *why, size_t whylen);
int wl_parse_value(const char *text, struct wl_value *value, bool allow_fresh,
		   char *why, size_t whylen);
int wl_parse_pagesel(const char *text, uint64_t npages, struct wl_pagesel *sel,
		     char *why, size_t whylen);
int wl_parse_offset(const char *text, struct wl_offset *offset, char *why, size_t whylen);
int wl_parse_groups(const char *text, struct wl_group **groups, size_t *ngroups,
		    char *why, size_t whylen);
int wl_parse_after_scan(const char *text, uint64_t *scan, char *why, size_t whylen);
int wl_parse_rate(const char *text, uint64_t *rate, char *why, size_t whylen);

void wl_pagesel_free(struct wl_pagesel *sel);
int wl_pagesel_copy(struct wl_pagesel *dst, const struct wl_pagesel *src);
bool wl_pagesel_equal(const struct wl_pagesel *a, const struct wl_pagesel *b);
/* Canonical text of a selection / offset / value / time (into @buf). */
const char *wl_pagesel_format(const struct wl_pagesel *sel, char *buf, size_t len);
const char *wl_offset_format(const struct wl_offset *offset, char *buf, size_t len);
const char *wl_value_format(const struct wl_value *value, char *buf, size_t len);
const char *wl_time_format(uint64_t ns, char *buf, size_t len);
const char *wl_groups_format(const struct wl_group *groups, size_t n, char *buf, size_t len);

/* inih's line buffer holds this many characters of one line. */
#define WL_MAX_LINE 197

/* --- wl_holes.c: pages unmapped so far, per process and region ---------------- */

/* Pages first, first + step, ... up to last (step >= 1, first <= last). */
struct wl_progression {
	uint64_t first, last, step;
};

/* The smallest page in both progressions, if any (Chinese remainder theorem). */
bool wl_progressions_meet(const struct wl_progression *a, const struct wl_progression *b,
			  uint64_t *page);

/*
 * The holes (unmapped pages) of every process's copy of every region, as the
 * timeline check replays the workload. A process forked from another starts
 * with its parent's holes (wl_holes_fork, O(1)); afterwards the two change
 * independently. Adding a run of pages and finding the first hole in a run
 * are O(log n) in the number of holes; strided holes (every:K, K > 1) are
 * compared one by one. wl_holes_add() expects @p disjoint from the holes
 * already there (the timeline check refuses unmapping a page twice).
 */
struct wl_holes;
struct wl_holes *wl_holes_new(size_t nprocs);   /* NULL when out of memory */
void wl_holes_free(struct wl_holes *h);
void wl_holes_fork(struct wl_holes *h, size_t parent, size_t child);
/* 0, or -1 when out of memory (the workload cannot be checked). */
int wl_holes_add(struct wl_holes *h, size_t proc, size_t region, const struct wl_progression *p);
/* Whether @proc has unmapped any page of @region. */
bool wl_holes_any(const struct wl_holes *h, size_t proc, size_t region);
/* The smallest page of @want that @proc has unmapped from @region, if any. */
bool wl_holes_first(const struct wl_holes *h, size_t proc, size_t region,
		    const struct wl_progression *want, uint64_t *page);

/* Whole-run checks after every section parsed: see wl_timeline.c. */
int wl_check_timeline(struct wl_ctx *ctx);

const char *wl_fill_name(enum wl_fill fill);
const char *wl_thp_name(enum wl_thp thp);
const char *wl_merge_name(enum wl_merge merge);
const char *wl_when_name(enum wl_when when);

#endif
