/*
 * wl_timeline.c - whole-run checks of a parsed workload, and the schedule of
 * steps both engines follow.
 *
 * A workload can be well-formed section by section and still impossible: a
 * write to a page an earlier event unmapped, an event for a process that has
 * exited or is not forked yet, an event scheduled after the run stops, or a
 * run = 0 that leaves the scan count stuck while the stop condition waits for
 * more scans. This file replays the schedule once, symbolically, in the order
 * the engines will execute it (by scan point, then file order) and rejects
 * such workloads with the line of the offending section. It tracks per
 * process: alive or not, and which pages of each region are still mapped.
 */
#include "wl_internal.h"

#include <stdlib.h>
#include <string.h>

/* Where in the run something happens: after scan @scan, at file position @seq. */
struct moment {
	uint64_t scan;
	size_t seq;
};

static int moment_cmp(struct moment a, struct moment b)
{
	if (a.scan != b.scan)
		return a.scan < b.scan ? -1 : 1;
	return a.seq < b.seq ? -1 : a.seq > b.seq;
}

/*
 * Pages as an arithmetic progression first, first + step, ... <= last. Every
 * page selection except random:N is a union of these, so unmapped sets and
 * write targets are compared arithmetically, never page by page: lint stays
 * instant on terabyte regions.
 */
struct progression {
	uint64_t first, last, step;
};

/* The unmapped pages of one process's copy of one region. */
struct mapping {
	struct progression *unmapped;
	size_t n;
};

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* x with a*x == 1 (mod m), for gcd(a, m) == 1 and m > 1 (extended Euclid). */
static unsigned __int128 inverse_mod(unsigned __int128 a, unsigned __int128 m)
{
	__int128 t = 0, new_t = 1, r = (__int128)m, new_r = (__int128)(a % m);

	while (new_r != 0) {
		__int128 q = r / new_r, tmp;

		tmp = t - q * new_t, t = new_t, new_t = tmp;
		tmp = r - q * new_r, r = new_r, new_r = tmp;
	}
	return (unsigned __int128)(t < 0 ? t + (__int128)m : t);
}

/* The smallest page in both progressions, if any (Chinese remainder theorem). */
static bool progressions_meet(const struct progression *a, const struct progression *b,
			      uint64_t *page)
{
	uint64_t lo = a->first > b->first ? a->first : b->first;
	uint64_t hi = a->last < b->last ? a->last : b->last;
	uint64_t g = gcd_u64(a->step, b->step), diff;
	unsigned __int128 m, k, x, lcm;

	if (lo > hi)
		return false;
	diff = b->first >= a->first ? b->first - a->first : a->first - b->first;
	if (diff % g != 0)
		return false;
	/* x = a.first + a.step * k with a.step * k == b.first - a.first (mod b.step) */
	m = b->step / g;
	k = 0;
	if (m > 1) {
		unsigned __int128 d = (unsigned __int128)((b->first + (m * g) - a->first % (m * g)) %
							   (m * g)) / g;

		k = d * inverse_mod(a->step / g, m) % m;
	}
	x = (unsigned __int128)a->first + (unsigned __int128)a->step * k;
	lcm = (unsigned __int128)(a->step / g) * b->step;
	if (x < lo)
		x += (lo - x + lcm - 1) / lcm * lcm;
	if (x > hi)
		return false;
	*page = (uint64_t)x;
	return true;
}

/* The progressions a page selection of a region with @npages pages covers. */
static size_t selection_progressions(const struct wl_pagesel *sel, uint64_t npages,
				     struct progression *out, size_t max)
{
	switch (sel->kind) {
	case WL_SEL_ALL:
		if (max)
			out[0] = (struct progression){ 0, npages - 1, 1 };
		return 1;
	case WL_SEL_EVERY:
		if (max)
			out[0] = (struct progression){ sel->start, npages - 1, sel->step };
		return 1;
	case WL_SEL_LIST:
		for (size_t i = 0; i < sel->nranges && i < max; i++)
			out[i] = (struct progression){ sel->ranges[i].first, sel->ranges[i].last, 1 };
		return sel->nranges;
	case WL_SEL_RANDOM:
		return 0;
	}
	return 0;
}

struct replay {
	struct wl_ctx *ctx;
	const struct workload *wl;
	bool *alive;               /* [nprocs] */
	bool *born;                /* [nprocs]: created (initial, or forked already) */
	bool *registered;          /* [nprocs]: has had mergeable memory */
	struct mapping *map;       /* [nprocs * nregions] */
	uint64_t run;
	uint64_t advisor;          /* advisor_mode as set so far */
};

static struct mapping *mapping_of(struct replay *rp, size_t proc, size_t region)
{
	return &rp->map[proc * rp->wl->nregions + region];
}

/* The first page of @sel that is unmapped in @m, if any. */
static bool first_unmapped(const struct mapping *m, const struct wl_pagesel *sel,
			   uint64_t npages, uint64_t *page)
{
	size_t n = selection_progressions(sel, npages, NULL, 0);
	struct progression *want = calloc(n ? n : 1, sizeof(*want));
	bool found = false;

	if (!want)
		return false;
	selection_progressions(sel, npages, want, n);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < m->n; j++) {
			uint64_t p;

			if (progressions_meet(&want[i], &m->unmapped[j], &p) && (!found || p < *page)) {
				*page = p;
				found = true;
			}
		}
	free(want);
	return found;
}

/* Does a process own a copy of @region (its own, or inherited by fork)? */
static bool process_has_region(const struct workload *wl, size_t proc, size_t region)
{
	for (long p = (long)proc; p >= 0; p = wl->procs[p].parent)
		if (wl->regions[region].process == (size_t)p)
			return true;
	return false;
}

static const char *step_title(const struct replay *rp, bool is_event, size_t index, char *buf,
			      size_t len)
{
	snprintf(buf, len, "[%s %s]", is_event ? "event" : "writer",
		 is_event ? rp->wl->events[index].name : rp->wl->writers[index].name);
	return buf;
}

/*
 * Check that @proc can act on @sel of @region now: alive, owns the region,
 * and (with @need_mapped) every selected page is still mapped.
 */
static int check_target(struct replay *rp, unsigned line, const char *title, size_t proc,
			long region, const struct wl_pagesel *sel, bool need_mapped)
{
	const struct workload *wl = rp->wl;
	const struct wl_process *p = &wl->procs[proc];
	const struct wl_region *reg;
	struct mapping *m;
	uint64_t page = 0;

	if (!rp->born[proc]) {
		wl_fail(rp->ctx, line, "%s: process %s does not exist yet (it is forked by [event %s])",
			title, p->name, wl->events[p->fork_event].name);
		return -1;
	}
	if (!rp->alive[proc]) {
		wl_fail(rp->ctx, line, "%s: process %s has already exited", title, p->name);
		return -1;
	}
	if (region < 0)
		return 0;
	reg = &wl->regions[region];
	if (!process_has_region(wl, proc, (size_t)region)) {
		wl_fail(rp->ctx, line, "%s: process %s has no region %s (it belongs to %s)", title,
			p->name, reg->name, wl->procs[reg->process].name);
		return -1;
	}
	m = mapping_of(rp, proc, (size_t)region);
	if (!need_mapped || m->n == 0)
		return 0;
	if (sel->kind == WL_SEL_RANDOM) {
		wl_fail(rp->ctx, line, "%s: pages = random:N on region %s, part of which is "
			"unmapped by then", title, reg->name);
		return -1;
	}
	if (first_unmapped(m, sel, reg->pages, &page)) {
		wl_fail(rp->ctx, line, "%s: page %llu of region %s in process %s is "
			"unmapped by then", title, (unsigned long long)page, reg->name, p->name);
		return -1;
	}
	return 0;
}

static int check_writer(struct replay *rp, size_t index)
{
	const struct wl_writer *w = &rp->wl->writers[index];
	char title[WL_NAME_MAX + 16];

	return check_target(rp, w->line, step_title(rp, false, index, title, sizeof(title)),
			    w->process, (long)w->region, &w->pages, true);
}

static int apply_unmap(struct replay *rp, const struct wl_event *ev)
{
	const struct wl_region *reg = &rp->wl->regions[ev->region];
	struct mapping *m = mapping_of(rp, ev->process, (size_t)ev->region);
	size_t n = selection_progressions(&ev->pages, reg->pages, NULL, 0);
	struct progression *grown;

	if (ev->pages.kind == WL_SEL_RANDOM) {
		wl_fail(rp->ctx, ev->line, "[event %s] unmap with pages = random:N: later steps "
			"could not be checked against the pages it unmaps", ev->name);
		return -1;
	}
	grown = realloc(m->unmapped, (m->n + n) * sizeof(*grown));
	if (!grown) {
		wl_fail(rp->ctx, ev->line, "out of memory");
		return -1;
	}
	m->unmapped = grown;
	selection_progressions(&ev->pages, reg->pages, grown + m->n, n);
	m->n += n;
	return 0;
}

static int apply_fork(struct replay *rp, const struct wl_event *ev)
{
	const struct workload *wl = rp->wl;

	rp->born[ev->child] = rp->alive[ev->child] = true;
	rp->registered[ev->child] = rp->registered[ev->process];
	for (size_t r = 0; r < wl->nregions; r++) {
		const struct mapping *parent = mapping_of(rp, ev->process, r);
		struct mapping *child = mapping_of(rp, ev->child, r);

		if (parent->n == 0)
			continue;
		child->unmapped = malloc(parent->n * sizeof(*parent->unmapped));
		if (!child->unmapped) {
			wl_fail(rp->ctx, ev->line, "out of memory");
			return -1;
		}
		memcpy(child->unmapped, parent->unmapped, parent->n * sizeof(*parent->unmapped));
		child->n = parent->n;
	}
	return 0;
}

static int check_set(struct replay *rp, const struct wl_event *ev)
{
	bool accepted = ev->expect == WL_EXPECT_OK || ev->expect == WL_EXPECT_ANY;
	/* wl_values.c's rules, which the model checker's stores share */
	enum wl_knob_rule rule = wl_knob_store_check(ev->knob, ev->knob_value,
						     rp->advisor == WL_ADVISOR_SCAN_TIME,
						     rp->wl->stop == WL_STOP_SCANS);

	if (rule == WL_KNOBS_NEVER_SCANS && accepted) {
		wl_fail(rp->ctx, ev->line, "[event %s] set = pages_to_scan=0: ksmd would never "
			"complete another scan, but the workload waits for scans = %llu", ev->name,
			(unsigned long long)rp->wl->stop_scans);
		return -1;
	}
	if (rule == WL_KNOBS_ADVISOR_OWNS && ev->expect != WL_EXPECT_EINVAL &&
	    ev->expect != WL_EXPECT_ANY) {
		wl_fail(rp->ctx, ev->line, "[event %s] set = pages_to_scan=%s: the advisor is on "
			"(advisor_mode = scan-time), so the kernel answers EINVAL; say "
			"expect = EINVAL if that is the point", ev->name, ev->knob_text);
		return -1;
	}
	if (ev->knob == WL_KNOB_ADVISOR_MODE && accepted)
		rp->advisor = ev->knob_value;
	return 0;
}

static int apply_event(struct replay *rp, size_t index)
{
	const struct wl_event *ev = &rp->wl->events[index];
	char title[WL_NAME_MAX + 16];
	bool mapped = ev->action != WL_ACT_FORK && ev->action != WL_ACT_EXIT;

	step_title(rp, true, index, title, sizeof(title));
	if (ev->action != WL_ACT_SET && ev->action != WL_ACT_RUN &&
	    check_target(rp, ev->line, title, ev->process, ev->region, &ev->pages, mapped) != 0)
		return -1;
	switch (ev->action) {
	case WL_ACT_UNMAP:
		return apply_unmap(rp, ev);
	case WL_ACT_FORK:
		return apply_fork(rp, ev);
	case WL_ACT_EXIT:
		rp->alive[ev->process] = false;
		return 0;
	case WL_ACT_MERGE:
		rp->registered[ev->process] = true;
		return 0;
	case WL_ACT_SET:
		return check_set(rp, ev);
	case WL_ACT_RUN:
		if (ev->run <= 2) /* others are refused with EINVAL */
			rp->run = ev->run;
		return 0;
	case WL_ACT_WRITE: case WL_ACT_UNMERGE:
		return 0;
	}
	return 0;
}

/* Writers still writing after @now whose process or pages @ev took away. */
static int recheck_writers(struct replay *rp, const struct wl_event *ev, struct moment now)
{
	const struct workload *wl = rp->wl;

	if (ev->action != WL_ACT_UNMAP && ev->action != WL_ACT_EXIT)
		return 0;
	for (size_t i = 0; i < wl->nwriters; i++) {
		const struct wl_writer *w = &wl->writers[i];
		struct moment first = { w->from_scan, w->seq }, last = { w->until_scan, w->seq };

		if (w->process != ev->process || moment_cmp(first, now) > 0 ||
		    moment_cmp(last, now) < 0)
			continue;
		if (w->when == WL_WHEN_AFTER_SCAN)
			continue;
		if (check_writer(rp, i) != 0)
			return -1;
	}
	return 0;
}

static bool any_registered_alive(const struct replay *rp)
{
	for (size_t p = 0; p < rp->wl->nprocs; p++)
		if (rp->alive[p] && rp->registered[p])
			return true;
	return false;
}

/* After all steps at point @scan: can the next full scan happen? */
static int check_scans_advance(struct replay *rp, uint64_t scan, unsigned line)
{
	const struct workload *wl = rp->wl;

	if (wl->stop != WL_STOP_SCANS || scan >= wl->stop_scans)
		return 0;
	if (rp->run != 1) {
		wl_fail(rp->ctx, line, "full scans stop after scan %llu: run = %llu there and no "
			"later event at after-scan:%llu sets run = 1, but the workload waits for "
			"scans = %llu", (unsigned long long)scan, (unsigned long long)rp->run,
			(unsigned long long)scan,
			(unsigned long long)wl->stop_scans);
		return -1;
	}
	if (!any_registered_alive(rp)) {
		wl_fail(rp->ctx, line, "no live process has mergeable memory after scan %llu, so "
			"full scans would never complete (the workload waits for scans = %llu)",
			(unsigned long long)scan, (unsigned long long)wl->stop_scans);
		return -1;
	}
	return 0;
}

static int check_reachable(struct replay *rp)
{
	const struct workload *wl = rp->wl;

	if (wl->stop != WL_STOP_SCANS)
		return 0;
	for (size_t i = 0; i < wl->nevents; i++)
		if (wl->events[i].at_scan >= wl->stop_scans) {
			wl_fail(rp->ctx, wl->events[i].line, "[event %s] at = after-scan:%llu never "
				"happens: the workload stops after scan %llu", wl->events[i].name,
				(unsigned long long)wl->events[i].at_scan,
				(unsigned long long)wl->stop_scans);
			return -1;
		}
	for (size_t i = 0; i < wl->nwriters; i++)
		if (wl->writers[i].from_scan >= wl->stop_scans) {
			wl_fail(rp->ctx, wl->writers[i].line, "[writer %s] never writes: it starts "
				"after scan %llu and the workload stops after scan %llu",
				wl->writers[i].name, (unsigned long long)wl->writers[i].from_scan,
				(unsigned long long)wl->stop_scans);
			return -1;
		}
	return 0;
}

/* One schedule entry: an event, or the first application of a writer. */
struct entry {
	struct moment at;
	bool is_event;
	size_t index;
};

static int entry_cmp(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;

	return moment_cmp(a->at, b->at);
}

static struct entry *build_schedule(const struct workload *wl, size_t *n)
{
	struct entry *e = calloc(wl->nevents + wl->nwriters + 1, sizeof(*e));

	if (!e)
		return NULL;
	*n = 0;
	for (size_t i = 0; i < wl->nevents; i++)
		e[(*n)++] = (struct entry){ { wl->events[i].at_scan, wl->events[i].seq }, true, i };
	for (size_t i = 0; i < wl->nwriters; i++)
		e[(*n)++] = (struct entry){ { wl->writers[i].from_scan, wl->writers[i].seq }, false,
					    i };
	qsort(e, *n, sizeof(*e), entry_cmp);
	return e;
}

static void init_processes(struct replay *rp)
{
	const struct workload *wl = rp->wl;

	for (size_t p = 0; p < wl->nprocs; p++)
		rp->born[p] = rp->alive[p] = wl->procs[p].parent < 0;
	for (size_t r = 0; r < wl->nregions; r++)
		if (wl->regions[r].merge != WL_MERGE_NONE)
			rp->registered[wl->regions[r].process] = true;
	rp->run = 1;
	rp->advisor = wl->knobs[WL_KNOB_ADVISOR_MODE];
}

static int replay_schedule(struct replay *rp, const struct entry *e, size_t n)
{
	uint64_t point = 0;
	unsigned last_line = 1;

	for (size_t i = 0; i < n; i++) {
		if (e[i].at.scan != point) {
			if (check_scans_advance(rp, point, last_line) != 0)
				return -1;
			point = e[i].at.scan;
		}
		if (e[i].is_event) {
			const struct wl_event *ev = &rp->wl->events[e[i].index];

			last_line = ev->line;
			if (apply_event(rp, e[i].index) != 0 || recheck_writers(rp, ev, e[i].at) != 0)
				return -1;
		} else {
			last_line = rp->wl->writers[e[i].index].line;
			if (check_writer(rp, e[i].index) != 0)
				return -1;
		}
	}
	return check_scans_advance(rp, point, last_line);
}

static void free_replay(struct replay *rp)
{
	if (rp->map)
		for (size_t i = 0; i < rp->wl->nprocs * rp->wl->nregions; i++)
			free(rp->map[i].unmapped);
	free(rp->map);
	free(rp->alive);
	free(rp->born);
	free(rp->registered);
}

int wl_check_timeline(struct wl_ctx *ctx)
{
	const struct workload *wl = ctx->wl;
	struct replay rp = { .ctx = ctx, .wl = wl };
	struct entry *sched = NULL;
	size_t n = 0;
	int rc = -1;

	if (check_reachable(&rp) != 0)
		return -1;
	rp.alive = calloc(wl->nprocs, sizeof(bool));
	rp.born = calloc(wl->nprocs, sizeof(bool));
	rp.registered = calloc(wl->nprocs, sizeof(bool));
	rp.map = calloc(wl->nprocs * wl->nregions, sizeof(*rp.map));
	sched = build_schedule(wl, &n);
	if (!rp.alive || !rp.born || !rp.registered || !rp.map || !sched) {
		wl_fail(ctx, 0, "out of memory");
		goto out;
	}
	init_processes(&rp);
	rc = replay_schedule(&rp, sched, n);
out:
	free(sched);
	free_replay(&rp);
	return rc;
}

/* Does writer @w write after scan @scan? */
static bool writer_due(const struct wl_writer *w, uint64_t scan)
{
	switch (w->when) {
	case WL_WHEN_EVERY_SCAN:
		return scan >= w->from_scan && scan <= w->until_scan;
	case WL_WHEN_AFTER_SCAN:
		return scan == w->from_scan;
	case WL_WHEN_CONTINUOUS:
		return false;
	}
	return false;
}

size_t wl_steps_after_scan(const struct workload *wl, uint64_t scan, struct wl_step *steps,
			   size_t max)
{
	size_t n = 0, wi = 0, ei = 0;

	/* Writers and events are each already in file order: merge by seq. */
	while (wi < wl->nwriters || ei < wl->nevents) {
		bool take_event = wi >= wl->nwriters ||
				  (ei < wl->nevents && wl->events[ei].seq < wl->writers[wi].seq);
		bool due;
		size_t index;

		if (take_event) {
			index = ei++;
			due = wl->events[index].at_scan == scan;
		} else {
			index = wi++;
			due = writer_due(&wl->writers[index], scan);
		}
		if (!due)
			continue;
		if (n < max)
			steps[n] = (struct wl_step){ take_event, index };
		n++;
	}
	return n;
}
