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
 * process: alive or not, which pages of each region are still mapped
 * (wl_holes.c), whether it is merge-any (prctl) and which of its regions
 * userfaultfd write-protects (nothing may write those: with no fault
 * handler, a write would wait forever); an exec gives a process all of its
 * regions again, unprotected. Every step costs O(log n) or less, except where a step must
 * be compared with many others of the same process and region (an unmap with
 * the writers still writing there, a strided write with many holes), so the
 * check stays fast on workloads of hundreds of thousands of sections.
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

/* The progressions a page selection of a region with @npages pages covers. */
/*
 * Every page selection except random:N is a union of arithmetic progressions,
 * so unmapped sets and write targets are compared arithmetically, never page
 * by page: lint stays instant on terabyte regions.
 */
static size_t selection_progressions(const struct wl_pagesel *sel, uint64_t npages,
				     struct wl_progression *out, size_t max)
{
	switch (sel->kind) {
	case WL_SEL_ALL:
		if (max)
			out[0] = (struct wl_progression){ 0, npages - 1, 1 };
		return 1;
	case WL_SEL_EVERY:
		if (max)
			out[0] = (struct wl_progression){ sel->start, npages - 1, sel->step };
		return 1;
	case WL_SEL_LIST:
		for (size_t i = 0; i < sel->nranges && i < max; i++)
			out[i] = (struct wl_progression){ sel->ranges[i].first, sel->ranges[i].last,
							  1 };
		return sel->nranges;
	case WL_SEL_RANDOM:
		return 0;
	}
	return 0;
}

/* A writer by what it writes: its process and region. */
struct target {
	size_t process, region, writer;
};

/*
 * A region of one process that a write cannot simply store into, since event
 * @event: userfaultfd write-protects it (nothing may write it), or mprotect
 * took PROT_WRITE away (writes at scan points go through /proc/PID/mem, but
 * a continuous writer's process_vm_writev() is refused).
 */
struct write_protected {
	size_t process, region, event;
	bool by_uffd;        /* else by mprotect, to prot */
	enum wl_prot prot;
};

struct replay {
	struct wl_ctx *ctx;
	const struct workload *wl;
	bool *alive;               /* [nprocs] */
	bool *born;                /* [nprocs]: created (initial, or forked already) */
	bool *registered;          /* [nprocs]: has had mergeable memory */
	size_t *lineage;           /* [nprocs]: the initial process it descends from
				      (itself for one), set when it is born */
	size_t registered_alive;   /* processes both alive and registered */
	bool *merge_any;           /* [nprocs]: PR_SET_MEMORY_MERGE 1 in force */
	struct write_protected *wp; /* the protected regions now, in no order */
	size_t nwp, wp_cap;
	struct wl_holes *holes;    /* the pages each process has unmapped */
	struct target *targets;    /* [nwriters], by process, region, writer */
	uint64_t run;
	uint64_t advisor;          /* advisor_mode as set so far */
};

/* The first page of @sel that @proc has unmapped from @region, if any. */
static bool first_unmapped(const struct replay *rp, size_t proc, size_t region,
			   const struct wl_pagesel *sel, uint64_t *page)
{
	uint64_t npages = rp->wl->regions[region].pages;
	size_t n = selection_progressions(sel, npages, NULL, 0);
	struct wl_progression *want = calloc(n ? n : 1, sizeof(*want));
	bool found = false;

	if (!want)
		return false;
	selection_progressions(sel, npages, want, n);
	for (size_t i = 0; i < n; i++) {
		uint64_t p;

		if (wl_holes_first(rp->holes, proc, region, &want[i], &p) && (!found || p < *page)) {
			*page = p;
			found = true;
		}
	}
	free(want);
	return found;
}

/*
 * Does a process own a copy of @region (its own, or inherited by fork)?
 * Regions belong to initial processes, so only the root of its lineage can
 * own one.
 */
static bool process_has_region(const struct replay *rp, size_t proc, size_t region)
{
	return rp->wl->regions[region].process == rp->lineage[proc];
}

/* The protection of @region in @proc of that kind now, or NULL. */
static struct write_protected *protected_by(const struct replay *rp, size_t proc, size_t region,
					    bool by_uffd)
{
	for (size_t i = 0; i < rp->nwp; i++)
		if (rp->wp[i].process == proc && rp->wp[i].region == region &&
		    rp->wp[i].by_uffd == by_uffd)
			return &rp->wp[i];
	return NULL;
}

/*
 * A write by @title into @region of @proc must not meet a uffd-wp region;
 * a @continuous writer's not an mprotected one either.
 */
static int check_writable(struct replay *rp, unsigned line, const char *title, size_t proc,
			  size_t region, bool continuous)
{
	const struct write_protected *wp = protected_by(rp, proc, region, true);
	const char *rname = rp->wl->regions[region].name, *pname = rp->wl->procs[proc].name;

	if (wp) {
		wl_fail(rp->ctx, line, "%s: region %s in process %s is write-protected by "
			"userfaultfd by then ([event %s]): with no fault handler the write would "
			"wait forever", title, rname, pname, rp->wl->events[wp->event].name);
		return -1;
	}
	wp = protected_by(rp, proc, region, false);
	if (!continuous || !wp)
		return 0;
	wl_fail(rp->ctx, line, "%s: region %s in process %s is protected (prot = %s) by then "
		"([event %s]): a continuous writer writes with process_vm_writev(), which the "
		"protection stops; write at scan points instead (those go through /proc/PID/mem)",
		title, rname, pname, wl_prot_name(wp->prot), rp->wl->events[wp->event].name);
	return -1;
}

/* Note a protection (@prot for mprotect), or with WL_PROT_RW lift one. */
static int add_protection(struct replay *rp, const struct write_protected *p)
{
	struct write_protected *old = protected_by(rp, p->process, p->region, p->by_uffd);

	if (!p->by_uffd && p->prot == WL_PROT_RW) {
		if (old)
			*old = rp->wp[--rp->nwp];
		return 0;
	}
	if (old) {
		*old = *p;
		return 0;
	}
	if (rp->nwp == rp->wp_cap) {
		size_t cap = rp->wp_cap ? 2 * rp->wp_cap : 8;
		struct write_protected *grown = realloc(rp->wp, cap * sizeof(*grown));

		if (!grown) {
			wl_fail(rp->ctx, rp->wl->events[p->event].line, "out of memory");
			return -1;
		}
		rp->wp = grown;
		rp->wp_cap = cap;
	}
	rp->wp[rp->nwp++] = *p;
	return 0;
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
	if (!process_has_region(rp, proc, (size_t)region)) {
		wl_fail(rp->ctx, line, "%s: process %s has no region %s (it belongs to %s)", title,
			p->name, reg->name, wl->procs[reg->process].name);
		return -1;
	}
	if (!need_mapped || !wl_holes_any(rp->holes, proc, (size_t)region))
		return 0;
	if (sel->kind == WL_SEL_RANDOM) {
		wl_fail(rp->ctx, line, "%s: pages = random:N on region %s, part of which is "
			"unmapped by then", title, reg->name);
		return -1;
	}
	if (first_unmapped(rp, proc, (size_t)region, sel, &page)) {
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

	step_title(rp, false, index, title, sizeof(title));
	if (check_target(rp, w->line, title, w->process, (long)w->region, &w->pages, true) != 0)
		return -1;
	return check_writable(rp, w->line, title, w->process, w->region,
			      w->when == WL_WHEN_CONTINUOUS);
}

static int apply_unmap(struct replay *rp, const struct wl_event *ev)
{
	const struct wl_region *reg = &rp->wl->regions[ev->region];
	size_t n = selection_progressions(&ev->pages, reg->pages, NULL, 0);
	struct wl_progression *pages;
	int rc = 0;

	if (ev->pages.kind == WL_SEL_RANDOM) {
		wl_fail(rp->ctx, ev->line, "[event %s] unmap with pages = random:N: later steps "
			"could not be checked against the pages it unmaps", ev->name);
		return -1;
	}
	pages = calloc(n ? n : 1, sizeof(*pages));
	if (!pages) {
		wl_fail(rp->ctx, ev->line, "out of memory");
		return -1;
	}
	selection_progressions(&ev->pages, reg->pages, pages, n);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = wl_holes_add(rp->holes, ev->process, (size_t)ev->region, &pages[i]);
	free(pages);
	if (rc != 0)
		wl_fail(rp->ctx, ev->line, "out of memory");
	return rc;
}

/* The child is born with its parent's holes, registration, prctl flag and
 * lineage; userfaultfd registrations are not inherited (no EVENT_FORK). */
static int apply_fork(struct replay *rp, const struct wl_event *ev)
{
	rp->born[ev->child] = rp->alive[ev->child] = true;
	rp->merge_any[ev->child] = rp->merge_any[ev->process];
	rp->registered[ev->child] = rp->registered[ev->process];
	rp->registered_alive += rp->registered[ev->child];
	rp->lineage[ev->child] = rp->lineage[ev->process];
	wl_holes_fork(rp->holes, ev->process, ev->child);
	for (size_t i = 0, n = rp->nwp; i < n; i++) {
		struct write_protected p = rp->wp[i];

		if (p.process != ev->process || p.by_uffd)
			continue;
		p.process = ev->child; /* the VMA's protection is copied */
		if (add_protection(rp, &p) != 0)
			return -1;
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

static void set_registered(struct replay *rp, size_t proc, bool registered)
{
	rp->registered_alive -= rp->registered[proc];
	rp->registered[proc] = registered;
	rp->registered_alive += registered;
}

/* Writers of @proc still writing continuously after @now. */
static long continuous_writer_after(const struct replay *rp, size_t proc, struct moment now);

/*
 * exec: a new mm with every region mapped, filled and marked as setup does;
 * registered again if a region is madvised, or the prctl flag survives
 * (ksm_execve, a kernel row's column).
 */
static int apply_exec(struct replay *rp, size_t index, struct moment now)
{
	const struct wl_event *ev = &rp->wl->events[index];
	const struct workload *wl = rp->wl;
	size_t root = rp->lineage[ev->process];
	long w = continuous_writer_after(rp, ev->process, now);
	bool madvised = false;

	if (w >= 0) {
		wl_fail(rp->ctx, ev->line, "[event %s]: process %s execs while [writer %s] writes "
			"into it continuously (end the writer before: until = %llu)", ev->name,
			wl->procs[ev->process].name, wl->writers[w].name,
			(unsigned long long)ev->at_scan);
		return -1;
	}
	for (size_t r = 0; r < wl->nregions; r++)
		madvised |= wl->regions[r].process == root && wl->regions[r].merge == WL_MERGE_MADVISE;
	if (!wl_kernel_row(wl->kernel)->exec_keeps_merge_any)
		rp->merge_any[ev->process] = false;
	set_registered(rp, ev->process, madvised || rp->merge_any[ev->process]);
	wl_holes_clear(rp->holes, ev->process);
	for (size_t i = rp->nwp; i-- > 0;)
		if (rp->wp[i].process == ev->process)
			rp->wp[i] = rp->wp[--rp->nwp];
	return 0;
}

/* merge-off is PR_SET_MEMORY_MERGE 0: for a process whose regions use prctl. */
static int apply_merge_off(struct replay *rp, const struct wl_event *ev)
{
	if (!wl_process_uses_prctl(rp->wl, ev->process)) {
		wl_fail(rp->ctx, ev->line, "[event %s] action = merge-off: process %s has no region "
			"with merge = prctl (merge-off is prctl(PR_SET_MEMORY_MERGE, 0); use action "
			"= unmerge on a region that merges by madvise)", ev->name,
			rp->wl->procs[ev->process].name);
		return -1;
	}
	rp->merge_any[ev->process] = false;
	return 0;
}

/* uffd-wp and protect: the region's protection from now on. */
static int apply_protection(struct replay *rp, size_t index)
{
	const struct wl_event *ev = &rp->wl->events[index];
	struct write_protected p = { ev->process, (size_t)ev->region, index,
				     ev->action == WL_ACT_UFFD_WP, ev->prot };

	return add_protection(rp, &p);
}

static int apply_event(struct replay *rp, size_t index, struct moment now)
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
	case WL_ACT_EXEC:
		return apply_exec(rp, index, now);
	case WL_ACT_MERGE_OFF:
		return apply_merge_off(rp, ev);
	case WL_ACT_UFFD_WP: case WL_ACT_PROTECT:
		return apply_protection(rp, index);
	case WL_ACT_EXIT:
		rp->alive[ev->process] = false;
		rp->registered_alive -= rp->registered[ev->process];
		return 0;
	case WL_ACT_MERGE:
		if (rp->wl->regions[ev->region].merge == WL_MERGE_PRCTL)
			rp->merge_any[ev->process] = true;
		set_registered(rp, ev->process, true); /* alive: check_target() said so */
		return 0;
	case WL_ACT_SET:
		return check_set(rp, ev);
	case WL_ACT_RUN:
		if (ev->run <= 2) /* others are refused with EINVAL */
			rp->run = ev->run;
		return 0;
	case WL_ACT_UNMERGE:
		if (rp->wl->regions[ev->region].merge == WL_MERGE_PRCTL)
			rp->merge_any[ev->process] = false;
		return 0;
	case WL_ACT_WRITE:
		return check_writable(rp, ev->line, title, ev->process, (size_t)ev->region, false);
	case WL_ACT_DISCARD:
		return 0;
	}
	return 0;
}

static int target_cmp(const void *pa, const void *pb)
{
	const struct target *a = pa, *b = pb;

	if (a->process != b->process)
		return a->process < b->process ? -1 : 1;
	if (a->region != b->region)
		return a->region < b->region ? -1 : 1;
	return a->writer < b->writer ? -1 : a->writer > b->writer;
}

static struct target *sort_targets(const struct workload *wl)
{
	struct target *t = calloc(wl->nwriters ? wl->nwriters : 1, sizeof(*t));

	if (!t)
		return NULL;
	for (size_t i = 0; i < wl->nwriters; i++)
		t[i] = (struct target){ wl->writers[i].process, wl->writers[i].region, i };
	qsort(t, wl->nwriters, sizeof(*t), target_cmp);
	return t;
}

/* Index of the first target at or after (@process, @region) in sort order. */
static size_t first_target(const struct replay *rp, size_t process, size_t region)
{
	struct target key = { process, region, 0 };
	size_t lo = 0, hi = rp->wl->nwriters;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (target_cmp(&rp->targets[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Is writer @w applied again after @now (so what it writes must still exist)? */
static bool writes_on_after(const struct wl_writer *w, struct moment now)
{
	struct moment first = { w->from_scan, w->seq }, last = { w->until_scan, w->seq };

	return w->when != WL_WHEN_AFTER_SCAN && moment_cmp(first, now) <= 0 &&
	       moment_cmp(last, now) >= 0;
}

/*
 * Writers still writing after @now whose process or pages @ev took away: an
 * unmap can only hurt the writers of its process and region (the others were
 * checked when their own pages changed); an exit hurts every writer of the
 * process, and the first in file order is the one reported.
 */
static int recheck_writers(struct replay *rp, const struct wl_event *ev, struct moment now)
{
	const struct workload *wl = rp->wl;
	size_t i, first_hurt = SIZE_MAX;

	if (ev->action == WL_ACT_UNMAP || ev->action == WL_ACT_UFFD_WP ||
	    ev->action == WL_ACT_PROTECT) {
		for (i = first_target(rp, ev->process, (size_t)ev->region);
		     i < wl->nwriters && rp->targets[i].process == ev->process &&
		     rp->targets[i].region == (size_t)ev->region; i++)
			if (writes_on_after(&wl->writers[rp->targets[i].writer], now) &&
			    check_writer(rp, rp->targets[i].writer) != 0)
				return -1;
	} else if (ev->action == WL_ACT_EXIT) {
		for (i = first_target(rp, ev->process, 0);
		     i < wl->nwriters && rp->targets[i].process == ev->process; i++)
			if (writes_on_after(&wl->writers[rp->targets[i].writer], now) &&
			    rp->targets[i].writer < first_hurt)
				first_hurt = rp->targets[i].writer;
		if (first_hurt != SIZE_MAX)
			return check_writer(rp, first_hurt);
	}
	return 0;
}

static long continuous_writer_after(const struct replay *rp, size_t proc, struct moment now)
{
	const struct workload *wl = rp->wl;

	for (size_t i = first_target(rp, proc, 0);
	     i < wl->nwriters && rp->targets[i].process == proc; i++) {
		const struct wl_writer *w = &wl->writers[rp->targets[i].writer];

		if (w->when == WL_WHEN_CONTINUOUS && writes_on_after(w, now))
			return (long)rp->targets[i].writer;
	}
	return -1;
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
	if (rp->registered_alive == 0) {
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

	for (size_t p = 0; p < wl->nprocs; p++) {
		rp->born[p] = rp->alive[p] = wl->procs[p].parent < 0;
		rp->lineage[p] = p;
	}
	for (size_t r = 0; r < wl->nregions; r++) {
		if (wl->regions[r].merge != WL_MERGE_NONE)
			rp->registered[wl->regions[r].process] = true;
		if (wl->regions[r].merge == WL_MERGE_PRCTL)
			rp->merge_any[wl->regions[r].process] = true;
	}
	for (size_t p = 0; p < wl->nprocs; p++)
		rp->registered_alive += rp->alive[p] && rp->registered[p];
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
			if (apply_event(rp, e[i].index, e[i].at) != 0 ||
			    recheck_writers(rp, ev, e[i].at) != 0)
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
	wl_holes_free(rp->holes);
	free(rp->merge_any);
	free(rp->wp);
	free(rp->targets);
	free(rp->alive);
	free(rp->born);
	free(rp->registered);
	free(rp->lineage);
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
	rp.lineage = calloc(wl->nprocs, sizeof(size_t));
	rp.merge_any = calloc(wl->nprocs, sizeof(bool));
	rp.holes = wl_holes_new(wl->nprocs);
	rp.targets = sort_targets(wl);
	sched = build_schedule(wl, &n);
	if (!rp.alive || !rp.born || !rp.registered || !rp.lineage || !rp.merge_any || !rp.holes ||
	    !rp.targets || !sched) {
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
