/*
 * wl_expect.c - [expect NAME] sections: what a run must show, as the
 * workload states it. This file reads them into struct wl_expectation
 * (phase two, after the events, whose names they use), checks them against
 * the whole run (the row they read exists, the processes they name live
 * there, the kernel has the counters), prints their normalized form and
 * compares them. It does not evaluate them: that needs a trace, and
 * compare/expect.c does it for both engines alike.
 *
 * A section either checks counters at one row,
 *     at = after-scan:3        (or end: the run's last row)
 *     pages_sharing = 511      (any counter of /sys/kernel/mm/ksm)
 *     main.ksm_zero_pages >= 1 (PROCESS.FIELD: a line of its ksm_stat)
 *     region = map             (with duplicates: the pages of region map,
 *     duplicates = none         in process = P, default its owner, that
 *                               share a frame with another of them)
 * with =, !=, <, <=, > or >= (wl_read.c takes the operator off the line),
 * or checks what one store answered: event = NAME, errno = EBUSY.
 */
#include "wl_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const cmp_names[] = { "=", "!=", "<", "<=", ">", ">=", NULL };

const char *wl_cmp_name(enum wl_cmp cmp) { return cmp_names[cmp]; }

bool wl_cmp_holds(enum wl_cmp cmp, int64_t got, int64_t want)
{
	switch (cmp) {
	case WL_CMP_EQ: return got == want;
	case WL_CMP_NE: return got != want;
	case WL_CMP_LT: return got < want;
	case WL_CMP_LE: return got <= want;
	case WL_CMP_GT: return got > want;
	case WL_CMP_GE: return got >= want;
	}
	return false;
}

const char *wl_check_what(const struct workload *wl, const struct wl_check *check, char *buf,
			  size_t len)
{
	switch (check->kind) {
	case WL_CHECK_COUNTER:
		snprintf(buf, len, "%s", trace_counter_name((enum trace_counter)check->index));
		break;
	case WL_CHECK_PROC_FIELD:
		snprintf(buf, len, "%s.%s", wl->procs[check->process].name,
			 trace_proc_field_name((enum trace_proc_field)check->index));
		break;
	case WL_CHECK_DUPLICATES:
		snprintf(buf, len, "duplicates in region %s of process %s",
			 wl->regions[check->region].name, wl->procs[check->process].name);
		break;
	}
	return buf;
}

/* --- reading a section ------------------------------------------------------- */

static const char *const expect_keys[] = { "at", "event", "errno", "region", "process",
					   "duplicates", NULL };

/* One section being read: where, and what it says so far. */
struct expect_reader {
	struct wl_ctx *ctx;
	const struct raw_section *sec;
	struct wl_expectation *ex;
	size_t cap;
	const struct raw_kv *at, *event, *error, *region, *process, *duplicates;
};

static void kv_fail(struct expect_reader *er, const struct raw_kv *kv, const char *why)
{
	wl_fail(er->ctx, kv->line, "%s %s %s %s: %s", er->sec->title, kv->key, kv->op, kv->value,
		why);
}

static int cmp_of(const char *op)
{
	for (int i = 0; cmp_names[i]; i++)
		if (strcmp(op, cmp_names[i]) == 0)
			return i;
	return -1;
}

/* A signed decimal, or "none" (0) where @none is allowed. */
static int parse_number(const char *text, bool none, int64_t *out)
{
	bool negative = text[0] == '-';
	uint64_t v;

	if (none && strcmp(text, "none") == 0) {
		*out = 0;
		return 0;
	}
	if (wl_parse_u64(text + negative, &v) != 0 || v > (uint64_t)INT64_MAX)
		return -1;
	*out = negative ? -(int64_t)v : (int64_t)v;
	return 0;
}

static struct wl_check *new_check(struct expect_reader *er, const struct raw_kv *kv)
{
	struct wl_expectation *ex = er->ex;

	if (ex->nchecks == er->cap) {
		size_t cap = er->cap ? 2 * er->cap : 4;
		struct wl_check *grown = realloc(ex->checks, cap * sizeof(*grown));

		if (!grown) {
			wl_fail(er->ctx, kv->line, "out of memory");
			return NULL;
		}
		ex->checks = grown;
		er->cap = cap;
	}
	memset(&ex->checks[ex->nchecks], 0, sizeof(ex->checks[0]));
	ex->checks[ex->nchecks].line = kv->line;
	ex->checks[ex->nchecks].cmp = (enum wl_cmp)cmp_of(kv->op);
	return &ex->checks[ex->nchecks++];
}

/* A counter or PROCESS.FIELD key: the check it makes, or -1. */
static int counter_check(struct expect_reader *er, const struct raw_kv *kv)
{
	const struct workload *wl = er->ctx->wl;
	const char *dot = strchr(kv->key, '.'), *name = dot ? dot + 1 : kv->key, *since;
	int index = dot ? trace_proc_field_lookup(name) : trace_counter_lookup(name);
	char why[200], process[WL_NAME_MAX + 2];
	struct wl_check *check;
	long proc = -1;

	if (index < 0) {
		if (!dot) {
			const char *counters[TRACE_COUNTER_COUNT + 1];

			for (int c = 0; c < TRACE_COUNTER_COUNT; c++)
				counters[c] = trace_counter_name((enum trace_counter)c);
			counters[TRACE_COUNTER_COUNT] = NULL;
			wl_fail_unknown_key(er->ctx, er->sec, kv, expect_keys, counters);
		} else
			kv_fail(er, kv, "no such ksm_stat field (ksm_rmap_items, ksm_zero_pages, "
				"ksm_merging_pages, ksm_process_profit, ksm_merge_any or ksm_mergeable)");
		return -1;
	}
	if (dot) {
		snprintf(process, sizeof(process), "%.*s", (int)(dot - kv->key), kv->key);
		if ((proc = wl_find_process(er->ctx, process)) < 0) {
			snprintf(why, sizeof(why), "no such process %s", process);
			kv_fail(er, kv, why);
			return -1;
		}
	}
	if (!wl_kernel_exports(wl->kernel, name, &since)) {
		snprintf(why, sizeof(why), "kernel %s has no %s (it came in %s)",
			 wl_kernel_name(wl->kernel), name, since);
		kv_fail(er, kv, why);
		return -1;
	}
	check = new_check(er, kv);
	if (!check)
		return -1;
	check->kind = dot ? WL_CHECK_PROC_FIELD : WL_CHECK_COUNTER;
	check->index = index;
	check->process = proc < 0 ? 0 : (size_t)proc;
	if (parse_number(kv->value, false, &check->value) != 0) {
		kv_fail(er, kv, "expected a number");
		return -1;
	}
	return 0;
}

/* Note a structural key (at, event, ...); only a check takes a comparison. */
static int structural_key(struct expect_reader *er, const struct raw_kv *kv)
{
	const struct raw_kv **slot = NULL;

	if (strcmp(kv->key, "at") == 0)
		slot = &er->at;
	else if (strcmp(kv->key, "event") == 0)
		slot = &er->event;
	else if (strcmp(kv->key, "errno") == 0)
		slot = &er->error;
	else if (strcmp(kv->key, "region") == 0)
		slot = &er->region;
	else if (strcmp(kv->key, "process") == 0)
		slot = &er->process;
	if (!slot)
		return 1;
	if (strcmp(kv->op, "=") != 0) {
		kv_fail(er, kv, "only counters are compared: say = here");
		return -1;
	}
	*slot = kv;
	return 0;
}

static int read_at(struct expect_reader *er)
{
	const struct workload *wl = er->ctx->wl;
	struct wl_expectation *ex = er->ex;
	char why[160];

	if (strcmp(er->at->value, "end") == 0) {
		ex->at_end = true;
		return 0;
	}
	if (wl_parse_after_scan(er->at->value, &ex->at_scan, why, sizeof(why)) != 0) {
		snprintf(why, sizeof(why), "expected after-scan:N or end");
		kv_fail(er, er->at, why);
		return -1;
	}
	if (wl->stop == WL_STOP_SCANS && ex->at_scan > wl->stop_scans) {
		snprintf(why, sizeof(why), "never happens: the workload stops after scan %llu",
			 (unsigned long long)wl->stop_scans);
		kv_fail(er, er->at, why);
		return -1;
	}
	return 0;
}

static const char *const errno_names[] = { "ok", "EINVAL", "EBUSY", "ERANGE", NULL };

/* event = NAME, errno = ...: what a set or run event's store answered. */
static int read_errno_check(struct expect_reader *er)
{
	const struct workload *wl = er->ctx->wl;
	struct wl_expectation *ex = er->ex;
	const struct wl_event *ev;
	char why[200];
	int v = -1;

	for (size_t i = 0; i < wl->nevents && ex->event < 0; i++)
		if (strcmp(wl->events[i].name, er->event->value) == 0)
			ex->event = (long)i;
	if (ex->event < 0) {
		kv_fail(er, er->event, "no such event");
		return -1;
	}
	ev = &wl->events[ex->event];
	if (ev->action != WL_ACT_SET && ev->action != WL_ACT_RUN) {
		kv_fail(er, er->event, "errno is checked for a store: an event with action = set "
			"or run");
		return -1;
	}
	if (!er->error) {
		wl_fail(er->ctx, er->sec->line, "%s event = %s needs errno = ok, EINVAL, EBUSY or "
			"ERANGE", er->sec->title, er->event->value);
		return -1;
	}
	for (int i = 0; errno_names[i]; i++)
		if (strcmp(er->error->value, errno_names[i]) == 0)
			v = i;
	if (v < 0) {
		kv_fail(er, er->error, "expected ok, EINVAL, EBUSY or ERANGE");
		return -1;
	}
	ex->error = (enum wl_expect)v;
	if (ev->expect != WL_EXPECT_ANY && ev->expect != ex->error) {
		snprintf(why, sizeof(why), "[event %s] says expect = %s, and a run stops at any "
			 "other answer (say expect = any there)", ev->name, wl_expect_name(ev->expect));
		kv_fail(er, er->error, why);
		return -1;
	}
	return 0;
}

/* region (and process) and duplicates: pages of one region sharing frames. */
static int read_duplicates(struct expect_reader *er)
{
	struct wl_ctx *ctx = er->ctx;
	const struct workload *wl = ctx->wl;
	struct wl_check *check;
	long region, proc;
	char why[200];

	if (!er->duplicates) {
		wl_fail(ctx, (er->region ? er->region : er->process)->line, "%s %s applies only to "
			"duplicates", er->sec->title, er->region ? "region" : "process");
		return -1;
	}
	if (!er->region) {
		kv_fail(er, er->duplicates, "needs region = NAME");
		return -1;
	}
	if ((region = wl_find_region(ctx, er->region->value)) < 0) {
		kv_fail(er, er->region, "no such region");
		return -1;
	}
	proc = (long)wl->regions[region].process;
	if (er->process && (proc = wl_find_process(ctx, er->process->value)) < 0) {
		kv_fail(er, er->process, "no such process");
		return -1;
	}
	if (wl_process_root(wl, (size_t)proc) != wl->regions[region].process) {
		snprintf(why, sizeof(why), "process %s has no region %s", wl->procs[proc].name,
			 wl->regions[region].name);
		kv_fail(er, er->process, why);
		return -1;
	}
	check = new_check(er, er->duplicates);
	if (!check)
		return -1;
	check->kind = WL_CHECK_DUPLICATES;
	check->region = (size_t)region;
	check->process = (size_t)proc;
	if (parse_number(er->duplicates->value, true, &check->value) != 0 || check->value < 0) {
		kv_fail(er, er->duplicates, "expected none or a number of pages");
		return -1;
	}
	return 0;
}

/* Which kind of section it is, and that it has what that kind needs. */
static int check_shape(struct expect_reader *er)
{
	const struct wl_expectation *ex = er->ex;
	const struct raw_kv *stray;

	if (er->event) {
		stray = er->at ? er->at : er->region ? er->region : er->process ? er->process
			: er->duplicates;
		if (stray || ex->nchecks) {
			wl_fail(er->ctx, stray ? stray->line : ex->checks[0].line, "%s checks the "
				"answer of [event %s]: it takes no at or counters (the event says "
				"when)", er->sec->title, er->event->value);
			return -1;
		}
		return read_errno_check(er);
	}
	if (er->error) {
		kv_fail(er, er->error, "errno needs event = NAME (a set or run event)");
		return -1;
	}
	if (!er->at) {
		wl_fail(er->ctx, er->sec->line, "%s needs at = after-scan:N or end, or event = "
			"NAME", er->sec->title);
		return -1;
	}
	if (read_at(er) != 0)
		return -1;
	if ((er->region || er->process || er->duplicates) && read_duplicates(er) != 0)
		return -1;
	if (ex->nchecks == 0) {
		wl_fail(er->ctx, er->sec->line, "%s checks nothing: give a counter, PROCESS.FIELD "
			"or duplicates", er->sec->title);
		return -1;
	}
	return 0;
}

static int parse_expect(struct wl_ctx *ctx, const struct raw_section *sec,
			struct wl_expectation *ex)
{
	struct expect_reader er = { .ctx = ctx, .sec = sec, .ex = ex };

	memset(ex, 0, sizeof(*ex));
	snprintf(ex->name, sizeof(ex->name), "%s", sec->name);
	ex->line = sec->line;
	ex->event = -1;
	for (size_t i = 0; i < sec->nkv; i++) {
		const struct raw_kv *kv = &sec->kv[i];
		int rc = structural_key(&er, kv);

		if (rc < 0)
			return -1;
		if (rc == 0)
			continue;
		if (strcmp(kv->key, "duplicates") == 0)
			er.duplicates = kv;
		else if (counter_check(&er, kv) != 0)
			return -1;
	}
	return check_shape(&er);
}

/* --- whole-run checks ---------------------------------------------------------- */

/* Whether process @proc is in the row of scan @scan (@end: the last row). */
static const char *absent_from_row(const struct workload *wl, size_t proc, uint64_t scan,
				   bool end, char *why, size_t len)
{
	for (size_t i = 0; i < wl->nevents; i++) {
		const struct wl_event *ev = &wl->events[i];

		/* a fork after scan N happens after the row of N; an exit too */
		if (ev->action == WL_ACT_FORK && ev->child == proc && !end && ev->at_scan >= scan) {
			snprintf(why, len, "process %s is forked after scan %llu ([event %s]), so the "
				 "row of scan %llu does not have it", wl->procs[proc].name,
				 (unsigned long long)ev->at_scan, ev->name, (unsigned long long)scan);
			return why;
		}
		if (ev->action == WL_ACT_EXIT && ev->process == proc && (end || ev->at_scan < scan)) {
			snprintf(why, len, "process %s has exited by then ([event %s] after scan %llu)",
				 wl->procs[proc].name, ev->name, (unsigned long long)ev->at_scan);
			return why;
		}
	}
	return NULL;
}

static int check_processes_live(struct wl_ctx *ctx, const struct wl_expectation *ex)
{
	char why[300], what[160];

	for (size_t i = 0; i < ex->nchecks; i++) {
		const struct wl_check *c = &ex->checks[i];

		if (c->kind == WL_CHECK_COUNTER ||
		    !absent_from_row(ctx->wl, c->process, ex->at_scan, ex->at_end, why, sizeof(why)))
			continue;
		wl_fail(ctx, c->line, "[expect %s] %s: %s", ex->name,
			wl_check_what(ctx->wl, c, what, sizeof(what)), why);
		return -1;
	}
	return 0;
}

int wl_parse_expects(struct wl_ctx *ctx, const struct reader *r)
{
	struct workload *wl = ctx->wl;
	size_t n = 0;

	for (size_t i = 0; i < r->nsec; i++)
		n += r->sec[i].kind == SEC_EXPECT;
	wl->expects = calloc(n ? n : 1, sizeof(*wl->expects));
	if (!wl->expects) {
		wl_fail(ctx, 0, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < r->nsec; i++) {
		struct wl_expectation *ex = &wl->expects[wl->nexpects];

		if (r->sec[i].kind != SEC_EXPECT)
			continue;
		wl->nexpects++; /* freed with the workload, whole or not */
		if (parse_expect(ctx, &r->sec[i], ex) != 0 || check_processes_live(ctx, ex) != 0)
			return -1;
	}
	return 0;
}

void wl_expects_free(struct workload *wl)
{
	for (size_t i = 0; i < wl->nexpects; i++)
		free(wl->expects[i].checks);
	free(wl->expects);
}

/* --- normalized form and equality -------------------------------------------------- */

static void print_check(const struct workload *wl, const struct wl_check *c, FILE *out)
{
	const char *op = wl_cmp_name(c->cmp);

	switch (c->kind) {
	case WL_CHECK_COUNTER:
		fprintf(out, "%s %s %lld\n", trace_counter_name((enum trace_counter)c->index), op,
			(long long)c->value);
		break;
	case WL_CHECK_PROC_FIELD:
		fprintf(out, "%s.%s %s %lld\n", wl->procs[c->process].name,
			trace_proc_field_name((enum trace_proc_field)c->index), op,
			(long long)c->value);
		break;
	case WL_CHECK_DUPLICATES:
		fprintf(out, "region = %s\nprocess = %s\nduplicates %s %lld\n",
			wl->regions[c->region].name, wl->procs[c->process].name, op,
			(long long)c->value);
		break;
	}
}

void wl_print_expects(const struct workload *wl, FILE *out)
{
	for (size_t i = 0; i < wl->nexpects; i++) {
		const struct wl_expectation *ex = &wl->expects[i];

		fprintf(out, "\n[expect %s]\n", ex->name);
		if (ex->event >= 0) {
			fprintf(out, "event = %s\nerrno = %s\n", wl->events[ex->event].name,
				wl_expect_name(ex->error));
			continue;
		}
		if (ex->at_end)
			fprintf(out, "at = end\n");
		else
			fprintf(out, "at = after-scan:%llu\n", (unsigned long long)ex->at_scan);
		for (size_t c = 0; c < ex->nchecks; c++)
			print_check(wl, &ex->checks[c], out);
	}
}

static bool check_equal(const struct wl_check *a, const struct wl_check *b)
{
	return a->kind == b->kind && a->index == b->index && a->cmp == b->cmp &&
	       a->value == b->value &&
	       (a->kind == WL_CHECK_COUNTER || a->process == b->process) &&
	       (a->kind != WL_CHECK_DUPLICATES || a->region == b->region);
}

bool wl_expects_equal(const struct workload *a, const struct workload *b)
{
	if (a->nexpects != b->nexpects)
		return false;
	for (size_t i = 0; i < a->nexpects; i++) {
		const struct wl_expectation *x = &a->expects[i], *y = &b->expects[i];

		if (strcmp(x->name, y->name) != 0 || x->at_end != y->at_end ||
		    x->at_scan != y->at_scan || x->event != y->event || x->error != y->error ||
		    x->nchecks != y->nchecks)
			return false;
		for (size_t c = 0; c < x->nchecks; c++)
			if (!check_equal(&x->checks[c], &y->checks[c]))
				return false;
	}
	return true;
}
