/*
 * expect.c - judging a workload's [expect] sections by one engine's trace and
 * page partition (expect.h): finding the row each reads, reading counters,
 * ksm_stat fields and store answers from it, counting a region's duplicate
 * pages in the partition, and the reports people read.
 */
#include "expect.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

bool expect_needs_pages(const struct workload *wl)
{
	for (size_t i = 0; i < wl->nexpects; i++)
		for (size_t c = 0; c < wl->expects[i].nchecks; c++)
			if (wl->expects[i].checks[c].kind == WL_CHECK_DUPLICATES)
				return true;
	return false;
}

/* The kernel whose files @t can have: its release's row, else the workload's. */
static enum wl_kernel judged_by(const struct workload *wl, const struct trace *t)
{
	enum wl_kernel k;
	char why[200];

	if (t->kernel && wl_kernel_from_release(t->kernel, &k, why, sizeof(why)) == 0)
		return k;
	return wl->kernel;
}

/* The row an expectation reads, or NULL (the run did not get there). */
static const struct trace_row *row_of(const struct trace *t, const struct wl_expectation *ex)
{
	const struct trace_row *last = NULL;

	for (size_t i = 0; i < t->nrows; i++) {
		const struct trace_row *row = &t->row[i];

		if (ex->at_end) {
			/* the last scan row, or a time stop's final batch row after it */
			if (row->kind == TRACE_ROW_SCAN || i + 1 == t->nrows)
				last = row;
		} else if (row->kind == TRACE_ROW_SCAN && row->scan == ex->at_scan) {
			return row;
		}
	}
	return last;
}

static uint64_t last_scan(const struct trace *t)
{
	uint64_t scan = 0;

	for (size_t i = 0; i < t->nrows; i++)
		if (t->row[i].kind == TRACE_ROW_SCAN && t->row[i].scan > scan)
			scan = t->row[i].scan;
	return scan;
}

/* Pages of @c's region in its process sharing a frame with another, at @scan;
 * -1 when no partition was captured there. */
static int64_t duplicates(const struct wl_check *c, const struct trace_page *pages, size_t n,
			  uint64_t scan)
{
	const struct trace_page **mine = NULL;
	size_t count = 0, zero = 0;
	int64_t dup = 0;
	bool captured = false;

	for (size_t i = 0; i < n; i++)
		captured |= pages[i].scan == scan;
	if (!captured)
		return -1;
	mine = calloc(n ? n : 1, sizeof(*mine));
	if (!mine)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct trace_page *p = &pages[i];

		if (p->scan != scan || p->proc != c->process || p->region != c->region ||
		    !(p->flags & TRACE_PAGE_PRESENT))
			continue;
		if (p->flags & TRACE_PAGE_ZERO)
			zero++;
		else if (p->frame != 0) /* 0: not exposed (pagemap without CAP_SYS_ADMIN) */
			mine[count++] = p;
	}
	/* few pages per region in a selftest: pairs, as range_maps_duplicates() */
	for (size_t i = 0; i < count; i++)
		for (size_t j = 0; j < count; j++)
			if (i != j && mine[i]->frame == mine[j]->frame) {
				dup++;
				break;
			}
	free(mine);
	return dup + (zero >= 2 ? (int64_t)zero : 0);
}

static void not_applicable(struct expect_check_result *r, const char *name, enum wl_kernel k)
{
	const char *since = NULL;

	wl_kernel_exports(k, name, &since);
	r->verdict = EXPECT_NOT_APPLICABLE;
	snprintf(r->why, sizeof(r->why), "kernel %s has no %s (it came in %s): not checked",
		 wl_kernel_name(k), name, since ? since : "?");
}

static void judge(struct expect_check_result *r, const struct wl_check *c, int64_t got)
{
	r->have_value = true;
	r->got = got;
	r->verdict = wl_cmp_holds(c->cmp, got, c->value) ? EXPECT_PASS : EXPECT_FAIL;
}

static void check_row(const struct workload *wl, enum wl_kernel k, const struct wl_check *c,
		      const struct trace_row *row, const struct trace_page *pages, size_t npages,
		      struct expect_check_result *r)
{
	const char *name;
	int64_t dup;

	switch (c->kind) {
	case WL_CHECK_COUNTER:
		name = trace_counter_name((enum trace_counter)c->index);
		if (!wl_kernel_exports(k, name, NULL))
			return not_applicable(r, name, k);
		return judge(r, c, row->counter[c->index]);
	case WL_CHECK_PROC_FIELD:
		name = trace_proc_field_name((enum trace_proc_field)c->index);
		if (!wl_kernel_exports(k, name, NULL))
			return not_applicable(r, name, k);
		if (!row->proc[c->process].present) {
			r->verdict = EXPECT_FAIL;
			snprintf(r->why, sizeof(r->why), "process %s is not in that row",
				 wl->procs[c->process].name);
			return;
		}
		return judge(r, c, row->proc[c->process].field[c->index]);
	case WL_CHECK_DUPLICATES:
		dup = pages ? duplicates(c, pages, npages, row->scan) : -1;
		if (dup < 0) {
			r->verdict = EXPECT_FAIL;
			snprintf(r->why, sizeof(r->why), "no page partition was captured after "
				 "scan %" PRIu64, row->scan);
			return;
		}
		return judge(r, c, dup);
	}
}

/* errno: the answer the event's store got, from the trace's outcomes. */
static void check_store(const struct workload *wl, const struct trace *t,
			const struct wl_expectation *ex, struct expect_check_result *r)
{
	static const int errnos[] = { [WL_EXPECT_OK] = 0, [WL_EXPECT_EINVAL] = EINVAL,
				      [WL_EXPECT_EBUSY] = EBUSY, [WL_EXPECT_ERANGE] = ERANGE };
	const char *event = wl->events[ex->event].name;

	for (size_t i = 0; i < t->noutcomes; i++) {
		if (strcmp(t->outcome[i].event, event) != 0)
			continue;
		r->have_value = true;
		r->got = t->outcome[i].error;
		r->verdict = t->outcome[i].error == errnos[ex->error] ? EXPECT_PASS : EXPECT_FAIL;
		return;
	}
	r->verdict = EXPECT_FAIL;
	snprintf(r->why, sizeof(r->why), "the store of [event %s] never ran", event);
}

/* An expectation's verdict from its checks'. */
static enum expect_verdict overall(const struct expect_result *r)
{
	bool any = false;

	for (size_t i = 0; i < r->nchecks; i++) {
		if (r->check[i].verdict == EXPECT_FAIL)
			return EXPECT_FAIL;
		any |= r->check[i].verdict == EXPECT_PASS;
	}
	return any ? EXPECT_PASS : EXPECT_NOT_APPLICABLE;
}

/* Every check of @r does not apply: the kernel lacks what the workload requires. */
static void unmet(struct expect_result *r, const char *unmet_why)
{
	for (size_t i = 0; i < r->nchecks; i++) {
		r->check[i].verdict = EXPECT_NOT_APPLICABLE;
		snprintf(r->check[i].why, sizeof(r->check[i].why), "%s", unmet_why);
	}
}

static int evaluate_one(const struct workload *wl, enum wl_kernel k, const struct trace *t,
			const struct trace_page *pages, size_t npages, const char *unmet_why,
			const struct wl_expectation *ex, struct expect_result *r)
{
	const struct trace_row *row = ex->event >= 0 ? NULL : row_of(t, ex);

	r->ex = ex;
	r->nchecks = ex->event >= 0 ? 1 : ex->nchecks;
	r->check = calloc(r->nchecks, sizeof(*r->check));
	if (!r->check)
		return -1;
	r->scan = row ? row->scan : ex->at_scan;
	if (unmet_why[0]) {
		unmet(r, unmet_why);
	} else if (ex->event >= 0) {
		check_store(wl, t, ex, &r->check[0]);
	} else if (!row) {
		for (size_t i = 0; i < r->nchecks; i++) {
			r->check[i].verdict = EXPECT_FAIL;
			snprintf(r->check[i].why, sizeof(r->check[i].why), "the run has no row "
				 "after scan %" PRIu64 " (it ended after scan %" PRIu64 ")",
				 ex->at_scan, last_scan(t));
		}
	} else {
		for (size_t i = 0; i < r->nchecks; i++)
			check_row(wl, k, &ex->checks[i], row, pages, npages, &r->check[i]);
	}
	r->verdict = overall(r);
	return 0;
}

int expect_evaluate(const struct workload *wl, const struct trace *t,
		    const struct trace_page *pages, size_t npages, struct expect_report *rep)
{
	enum wl_kernel k = judged_by(wl, t);
	int lacks = wl_kernel_lacks(k, wl->requires);

	memset(rep, 0, sizeof(*rep));
	snprintf(rep->kernel, sizeof(rep->kernel), "%s", wl_kernel_name(k));
	if (lacks >= 0)
		snprintf(rep->unmet, sizeof(rep->unmet), "kernel %s lacks %s (%s): not "
			 "checked", wl_kernel_name(k),
			 wl_kernel_fact_name((enum wl_kernel_fact)lacks),
			 wl_kernel_fact_doc((enum wl_kernel_fact)lacks));
	rep->result = calloc(wl->nexpects ? wl->nexpects : 1, sizeof(*rep->result));
	if (!rep->result)
		return -1;
	for (size_t i = 0; i < wl->nexpects; i++) {
		struct expect_result *r = &rep->result[rep->n++];

		if (evaluate_one(wl, k, t, pages, npages, rep->unmet, &wl->expects[i], r) != 0) {
			expect_report_free(rep);
			return -1;
		}
		rep->passed += r->verdict == EXPECT_PASS;
		rep->failed += r->verdict == EXPECT_FAIL;
		rep->not_applicable += r->verdict == EXPECT_NOT_APPLICABLE;
	}
	return 0;
}

void expect_report_free(struct expect_report *rep)
{
	for (size_t i = 0; i < rep->n; i++)
		free(rep->result[i].check);
	free(rep->result);
	memset(rep, 0, sizeof(*rep));
}

/* --- reports ----------------------------------------------------------------- */

static const char *errno_text(int64_t err)
{
	switch (err) {
	case 0: return "ok";
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case ERANGE: return "ERANGE";
	default: return strerror((int)err);
	}
}

/* "pages_sharing >= 511" (or "errno of [event s] = EBUSY") into @buf. */
static const char *wanted_text(const struct workload *wl, const struct expect_result *r, size_t i,
			       char *buf, size_t len)
{
	const struct wl_check *c;
	char what[160];

	if (r->ex->event >= 0) {
		snprintf(buf, len, "the answer to [event %s] = %s", wl->events[r->ex->event].name,
			 wl_expect_name(r->ex->error));
		return buf;
	}
	c = &r->ex->checks[i];
	snprintf(buf, len, "%s %s %" PRId64, wl_check_what(wl, c, what, sizeof(what)),
		 wl_cmp_name(c->cmp), c->value);
	return buf;
}

/* What the row said for check @i: "510", "EBUSY", or the reason there is nothing. */
static const char *got_text(const struct expect_result *r, size_t i, char *buf, size_t len)
{
	const struct expect_check_result *c = &r->check[i];

	if (!c->have_value)
		snprintf(buf, len, "%s", c->why);
	else if (r->ex->event >= 0)
		snprintf(buf, len, "%s", errno_text(c->got));
	else
		snprintf(buf, len, "%" PRId64, c->got);
	return buf;
}

const char *expect_check_text(const struct workload *wl, const struct expect_result *r, size_t i,
			      char *buf, size_t len)
{
	char want[256], got[256];

	wanted_text(wl, r, i, want, sizeof(want));
	got_text(r, i, got, sizeof(got));
	snprintf(buf, len, "%s: %s%s", want, r->check[i].have_value ? "it is " : "", got);
	return buf;
}

/* "after scan 2" / "at the end (scan 5)" / "" (a store). */
static void where(const struct expect_result *r, char *buf, size_t len)
{
	if (r->ex->event >= 0)
		buf[0] = '\0';
	else if (r->ex->at_end)
		snprintf(buf, len, " at the end (scan %" PRIu64 ")", r->scan);
	else
		snprintf(buf, len, " after scan %" PRIu64, r->scan);
}

static const char *verdict_word(enum expect_verdict v)
{
	return v == EXPECT_PASS ? "holds" : v == EXPECT_FAIL ? "FAILS" : "does not apply";
}

void expect_write_report(const struct workload *wl, const struct expect_report *rep,
			 const char *prefix, bool verbose, FILE *out)
{
	for (size_t e = 0; e < rep->n; e++) {
		const struct expect_result *r = &rep->result[e];
		char at[64], text[600];

		where(r, at, sizeof(at));
		for (size_t i = 0; i < r->nchecks; i++) {
			unsigned line = r->ex->event >= 0 ? r->ex->line : r->ex->checks[i].line;

			if (r->check[i].verdict != EXPECT_FAIL && !verbose)
				continue;
			fprintf(out, "%s%s:%u: [expect %s]%s: %s (%s)\n", prefix, wl->path, line,
				r->ex->name, at, expect_check_text(wl, r, i, text, sizeof(text)),
				verdict_word(r->check[i].verdict));
		}
	}
}

void expect_write_both(const struct workload *wl, const struct expect_report *a,
		       const struct expect_report *b, const char *name_a, const char *name_b,
		       FILE *out)
{
	for (size_t e = 0; e < a->n && e < b->n; e++) {
		const struct expect_result *ra = &a->result[e], *rb = &b->result[e];
		char at[64], want[256], ga[256], gb[256];

		where(rb, at, sizeof(at));
		for (size_t i = 0; i < ra->nchecks; i++) {
			enum expect_verdict va = ra->check[i].verdict, vb = rb->check[i].verdict;

			fprintf(out, "# expect %s%s: %s: %s %s, %s %s", ra->ex->name, at,
				wanted_text(wl, ra, i, want, sizeof(want)), name_a,
				got_text(ra, i, ga, sizeof(ga)), name_b, got_text(rb, i, gb, sizeof(gb)));
			if (va == EXPECT_FAIL || vb == EXPECT_FAIL)
				fprintf(out, " FAILS on %s", va == EXPECT_FAIL && vb == EXPECT_FAIL ? "both"
							   : va == EXPECT_FAIL	       ? name_a
										       : name_b);
			else if (va == EXPECT_NOT_APPLICABLE || vb == EXPECT_NOT_APPLICABLE)
				fprintf(out, " (not checked on %s)",
					va == EXPECT_NOT_APPLICABLE ? name_a : name_b);
			fputc('\n', out);
		}
	}
	fprintf(out, "# expectations: %s %zu of %zu hold, %s %zu of %zu hold\n", name_a, a->passed,
		a->n, name_b, b->passed, b->n);
}
