/*
 * sim_driver.c - a workload run on the simulator: setup, the lockstep loop of
 * ksmd batches and workload steps, continuous writers in simulated time, and
 * the trace rows. See sim_driver.h for the contract.
 *
 * Every random choice (random pages, random offsets) comes from the
 * per-writer and per-event streams of workload.h, and fresh values from one
 * counter consumed in schedule order, so the backend can reproduce exactly
 * the same writes.
 */
#include "sim_driver.h"
#include "sim_deferred.h"
#include "sim_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The step between a writer's last two pages: where to prefetch (prefetch_ahead). */
struct stride {
	uint64_t last;
	int64_t step;
};

/* A continuous writer between its start and end. */
struct stream {
	struct wl_rng rng;
	struct wl_page_iter it;
	struct stride stride;
	uint64_t next_ns;    /* when its next write is due */
	uint64_t interval_ns;
	bool active, done;
	bool deferred;       /* its writes go through sim_deferred.h */
};

/* The driver's per-item state stays within what admission counts. */
_Static_assert(sizeof(struct stream) + sizeof(struct wl_rng) <= SIM_DRIVER_ITEM_BYTES &&
	       sizeof(int) + sizeof(bool) + TRACE_NAME_MAX + 1 + sizeof(char *) <=
		       SIM_DRIVER_ITEM_BYTES,
	       "the driver's state per writer or process outgrew SIM_DRIVER_ITEM_BYTES");

struct run {
	const struct workload *wl;
	const struct sim_run_options *opt;
	enum wl_kernel kernel;   /* the semantics followed */
	enum wl_smart_scan_policy policy; /* the smart-scan policy followed */
	struct sim *s;
	struct trace *trace;
	int *mm_of;              /* workload process -> sim mm (-1: not yet born) */
	bool *exited;
	struct wl_rng *writer_rng;
	struct wl_rng *event_rng;
	struct stream *stream;
	size_t *timed_done;      /* per region: every = time snapshots applied */
	uint64_t fresh;          /* next fresh counter */
	bool may_defer;          /* a continuous writer may defer (sim_deferred.h) */
	uint64_t scans;          /* full scans completed since the start */
	struct sim_progress prog; /* what the progress callback is told */
	uint64_t work;           /* units of work since the last progress call */
	uint64_t scan_start;     /* ksmd's visits when the scan under way began */
	char *err;
	size_t errlen;
};

static int fail(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct run *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, r->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* --- progress ------------------------------------------------------------------- */

static uint64_t mergeable_pages(const struct sim *s)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < s->nmm; i++)
		if (s->mm[i].state == MM_ALIVE)
			n += s->mm[i].mergeable_pages;
	return n;
}

static void report(struct run *r, bool scan_ended)
{
	struct sim_progress *p = &r->prog;

	r->work = 0;
	if (!r->opt || !r->opt->progress)
		return;
	p->scan_ended = scan_ended;
	p->scans = r->scans;
	if (r->s) {
		p->now_ns = sim_now_ns(r->s);
		p->scan_pages = r->s->work.visits - r->scan_start;
		p->mergeable_pages = mergeable_pages(r->s);
	}
	r->opt->progress(r->opt->progress_arg, p, r->s);
}

/* @n more units of work done: tell the callback every progress_steps. */
static inline void worked(struct run *r, uint64_t n)
{
	r->work += n;
	if (r->opt && r->opt->progress_steps && r->work >= r->opt->progress_steps)
		report(r, false);
}

/* --- rows --------------------------------------------------------------------- */

/* A row of everything now, at time @t. */
static int record_row_at(struct run *r, enum trace_row_kind kind, uint64_t t)
{
	struct trace_row *row = trace_append(r->trace, kind);

	if (!row)
		return fail(r, "out of memory");
	row->scan = r->scans;
	row->batch = r->s->batches;
	row->time_ns = t;
	row->ksmd_cpu_ns = sim_ksmd_cpu_ns(r->s);
	row->valid = true;
	sim_counters(r->s, row->counter);
	sim_term_costs_ns(r->s, row->cost);
	for (size_t p = 0; p < r->wl->nprocs; p++)
		if (r->mm_of[p] >= 0)
			sim_process_stat(r->s, r->mm_of[p], &row->proc[p]);
	return 0;
}

static int record_row(struct run *r, enum trace_row_kind kind)
{
	return record_row_at(r, kind, sim_now_ns(r->s));
}

/* --- writes ---------------------------------------------------------------------- */

static uint64_t value_of(struct run *r, const struct wl_value *v)
{
	return v->fresh ? content_fresh_value(r->fresh++) : v->value;
}

static int area_for(struct run *r, size_t proc, size_t region)
{
	return sim_area_find(r->s, r->mm_of[proc], (uint32_t)region);
}

/* Before anything but ksmd reads or changes pages: every deferred write applied. */
static int flush_deferred(struct run *r)
{
	int err = sim_deferred_flush(r->s);

	return err ? fail(r, "a continuous writer's write failed: %s", strerror(err)) : 0;
}

/*
 * Writes to many pages are a chain of cache misses on a large host; most
 * selections step through the region at a fixed stride, so guess the pages
 * to come from the last step and start on them (sim_prefetch_writes). A wrong
 * guess costs a few wasted fetches, nothing else.
 */
static void prefetch_ahead(const struct sim *s, int area, uint64_t page, struct stride *st)
{
	st->step = (int64_t)(page - st->last);
	st->last = page;
	sim_prefetch_writes(s, area, page, st->step);
}

/* One write of every selected page, in page order. */
static int write_pages(struct run *r, size_t proc, size_t region, const struct wl_pagesel *sel,
		       const struct wl_offset *off, const struct wl_value *val, struct wl_rng *rng)
{
	int area = area_for(r, proc, region);
	struct stride stride = { 0, 0 };
	struct wl_page_iter it;
	uint64_t page;

	if (area < 0)
		return fail(r, "region %s is not mapped in process %s", r->wl->regions[region].name,
			    r->wl->procs[proc].name);
	wl_page_iter_init(&it, sel, r->wl->regions[region].pages, rng);
	while (wl_page_iter_next(&it, &page)) {
		uint32_t offset = wl_offset_pick(off, rng);
		int err;

		prefetch_ahead(r->s, area, page, &stride);
		err = sim_write(r->s, area, page, offset, value_of(r, val));

		if (err)
			return fail(r, "write to page %llu of region %s: %s",
				    (unsigned long long)page, r->wl->regions[region].name,
				    strerror(err));
		r->prog.writes++;
		worked(r, 1);
	}
	return 0;
}

/* Apply @fn to the selected pages as runs of consecutive pages. */
static int for_each_run(struct run *r, int area, const struct wl_pagesel *sel, uint64_t npages,
			struct wl_rng *rng, int (*fn)(struct sim *, int, uint64_t, uint64_t, bool),
			bool flag)
{
	struct wl_page_iter it;
	uint64_t page, first = 0, count = 0;

	wl_page_iter_init(&it, sel, npages, rng);
	while (wl_page_iter_next(&it, &page)) {
		if (count && page == first + count) {
			count++;
			continue;
		}
		if (count && fn(r->s, area, first, count, flag) == ENOMEM)
			return ENOMEM;
		first = page;
		count = 1;
	}
	return count ? fn(r->s, area, first, count, flag) : 0;
}

static int madvise_fn(struct sim *s, int area, uint64_t first, uint64_t count, bool on)
{
	return sim_madvise(s, area, first, count, on);
}

static int munmap_fn(struct sim *s, int area, uint64_t first, uint64_t count, bool unused)
{
	return sim_munmap(s, area, first, count);
}

static int discard_fn(struct sim *s, int area, uint64_t first, uint64_t count, bool unused)
{
	return sim_discard(s, area, first, count);
}

/* --- events -------------------------------------------------------------------- */

static int expectation_met(enum wl_expect expect, int err)
{
	switch (expect) {
	case WL_EXPECT_OK: return err == 0;
	case WL_EXPECT_EINVAL: return err == EINVAL;
	case WL_EXPECT_EBUSY: return err == EBUSY;
	case WL_EXPECT_ERANGE: return err == ERANGE;
	case WL_EXPECT_ANY: return 1;
	}
	return 0;
}

static const char *errno_name(int err)
{
	switch (err) {
	case 0: return "ok";
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case ERANGE: return "ERANGE";
	default: return strerror(err);
	}
}

static int record_store(struct run *r, const struct wl_event *ev, int err)
{
	if (trace_add_outcome(r->trace, r->scans, ev->name, err) != 0)
		return fail(r, "out of memory");
	if (!expectation_met(ev->expect, err))
		return fail(r, "[event %s] after scan %llu: the store answered %s, the workload "
			    "expects %s", ev->name, (unsigned long long)r->scans, errno_name(err),
			    wl_expect_name(ev->expect));
	return 0;
}

/* PR_SET_MEMORY_MERGE @on for the event's process. */
static int prctl_event(struct run *r, const struct wl_event *ev, bool on)
{
	int err = sim_prctl_merge(r->s, r->mm_of[ev->process], on);

	return err ? fail(r, "[event %s] prctl(PR_SET_MEMORY_MERGE, %d): %s", ev->name, on,
			  strerror(err)) : 0;
}

/* merge / unmerge: madvise on the pages, or the prctl for a prctl region. */
static int merge_event(struct run *r, const struct wl_event *ev, size_t index, bool on)
{
	const struct wl_region *reg = &r->wl->regions[ev->region];
	int area = area_for(r, ev->process, (size_t)ev->region);

	if (reg->merge == WL_MERGE_PRCTL)
		return prctl_event(r, ev, on);
	for_each_run(r, area, &ev->pages, reg->pages, &r->event_rng[index], madvise_fn, on);
	return 0;
}

static int map_and_fill(struct run *r, size_t index, int mm);
static void mark_mergeable(struct run *r, size_t index, int mm, int area);

/*
 * exec: the process gets a new mm (sim_exec: merge-any carried over where
 * the kernel does), and its regions are set up again in file order, as at
 * setup: mapped, filled, and madvised; a prctl region is mergeable through
 * the flag that survived, or not at all.
 */
static int exec_event(struct run *r, const struct wl_event *ev)
{
	size_t root = wl_process_root(r->wl, ev->process);
	int mm = sim_exec(r->s, r->mm_of[ev->process]);

	if (mm < 0)
		return fail(r, "[event %s] exec failed: %s", ev->name, strerror(-mm));
	r->mm_of[ev->process] = mm;
	for (size_t i = 0; i < r->wl->nregions; i++) {
		int area;

		if (r->wl->regions[i].process != root)
			continue;
		if ((area = map_and_fill(r, i, mm)) < 0)
			return -1;
		if (r->wl->regions[i].merge == WL_MERGE_MADVISE)
			mark_mergeable(r, i, mm, area);
	}
	return 0;
}

/* protect and uffd-wp: the whole region of the event's process. */
static int region_event(struct run *r, const struct wl_event *ev)
{
	int area = area_for(r, ev->process, (size_t)ev->region);
	int err = ev->action == WL_ACT_PROTECT ? sim_mprotect(r->s, area, ev->prot)
					       : sim_uffd_wp(r->s, area);

	return err ? fail(r, "[event %s] %s failed: %s", ev->name, wl_action_name(ev->action),
			  strerror(err)) : 0;
}

static int fork_event(struct run *r, const struct wl_event *ev)
{
	int child = sim_fork(r->s, r->mm_of[ev->process]);

	if (child < 0)
		return fail(r, "[event %s] fork failed: %s", ev->name, strerror(-child));
	r->mm_of[ev->child] = child;
	return 0;
}

static int apply_event(struct run *r, size_t index)
{
	const struct wl_event *ev = &r->wl->events[index];
	int area;

	switch (ev->action) {
	case WL_ACT_WRITE:
		return write_pages(r, ev->process, (size_t)ev->region, &ev->pages, &ev->offset,
				   &ev->value, &r->event_rng[index]);
	case WL_ACT_MERGE:
		return merge_event(r, ev, index, true);
	case WL_ACT_UNMERGE:
		return merge_event(r, ev, index, false);
	case WL_ACT_UNMAP: case WL_ACT_DISCARD:
		area = area_for(r, ev->process, (size_t)ev->region);
		for_each_run(r, area, &ev->pages, r->wl->regions[ev->region].pages,
			     &r->event_rng[index], ev->action == WL_ACT_UNMAP ? munmap_fn : discard_fn,
			     false);
		return 0;
	case WL_ACT_PROTECT: case WL_ACT_UFFD_WP:
		return region_event(r, ev);
	case WL_ACT_EXEC:
		return exec_event(r, ev);
	case WL_ACT_MERGE_OFF:
		return prctl_event(r, ev, false);
	case WL_ACT_FORK:
		return fork_event(r, ev);
	case WL_ACT_EXIT:
		r->exited[ev->process] = true;
		return sim_exit(r->s, r->mm_of[ev->process]) ? fail(r, "exit failed") : 0;
	case WL_ACT_SET:
		return record_store(r, ev, sim_knob_store_text(r->s, ev->knob, ev->knob_text));
	case WL_ACT_RUN:
		return record_store(r, ev, sim_run_store(r->s, ev->run));
	}
	return 0;
}

/*
 * One snapshot of capture region @i: each changed page is filled with its
 * token's value, or discarded when the snapshot has it absent (the next
 * snapshot that has it present faults it in again).
 */
static int apply_capture_step(struct run *r, size_t i, const struct wl_capture_step *step)
{
	const struct wl_region *reg = &r->wl->regions[i];
	int area;

	if (flush_deferred(r) != 0)
		return -1;
	area = area_for(r, reg->process, i);
	for (size_t c = step->first; c < step->first + step->count; c++) {
		const struct wl_capture_change *ch = &reg->capture->changes[c];
		uint64_t value;
		int err = wl_capture_value(reg->capture, ch->content, &value)
				  ? sim_fill(r->s, area, ch->page, value)
				  : sim_discard(r->s, area, ch->page, 1);

		if (err)
			return fail(r, "[region %s]: snapshot %llu, page %llu: %s", reg->name,
				    (unsigned long long)step->snapshot,
				    (unsigned long long)ch->page, strerror(err));
		r->prog.writes++;
		worked(r, 1);
	}
	return 0;
}

/*
 * The snapshots of capture regions due at this point, region by region in
 * file order, before the point's writers and events.
 */
static int replay_captures(struct run *r)
{
	for (size_t i = 0; i < r->wl->nregions; i++) {
		const struct wl_region *reg = &r->wl->regions[i];
		const struct wl_capture_step *step;

		if (!reg->capture || !(step = wl_capture_step_at(reg->capture, r->scans)))
			continue;
		if (apply_capture_step(r, i, step) != 0)
			return -1;
	}
	return 0;
}

/*
 * every = time: the snapshots whose time has come, between two batches,
 * region by region in file order (in a run that stops at time = T, none due
 * after T).
 */
static int replay_timed_captures(struct run *r)
{
	uint64_t now = sim_now_ns(r->s);

	if (r->wl->stop == WL_STOP_TIME && now > r->wl->stop_time_ns)
		now = r->wl->stop_time_ns;
	for (size_t i = 0; i < r->wl->nregions; i++) {
		const struct wl_capture *cap = r->wl->regions[i].capture;
		size_t due;

		if (!cap || !cap->by_time)
			continue;
		due = wl_capture_steps_due(cap, now);
		for (; r->timed_done[i] < due; r->timed_done[i]++)
			if (apply_capture_step(r, i, &cap->steps[r->timed_done[i]]) != 0)
				return -1;
	}
	return 0;
}

static int apply_steps(struct run *r)
{
	struct wl_step steps[64], *all = steps;
	size_t n = wl_steps_after_scan(r->wl, r->scans, steps, 64);
	int rc = 0;

	if (replay_captures(r) != 0 || (n && flush_deferred(r) != 0))
		return -1;

	if (n > 64) {
		all = malloc(n * sizeof(*all));
		if (!all)
			return fail(r, "out of memory");
		wl_steps_after_scan(r->wl, r->scans, all, n);
	}
	if (n)
		sim_ksmd_cool(r->s); /* the kernel's runner holds ksmd while it applies them */
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (all[i].is_event) {
			rc = apply_event(r, all[i].index);
		} else {
			const struct wl_writer *w = &r->wl->writers[all[i].index];

			rc = write_pages(r, w->process, w->region, &w->pages, &w->offset, &w->value,
					 &r->writer_rng[all[i].index]);
		}
	}
	if (all != steps)
		free(all);
	return rc;
}

/* --- continuous writers ------------------------------------------------------------ */

static int start_deferring(struct run *r, size_t i);

/* Start or stop continuous writers whose window opens or closes at this point. */
static void update_streams(struct run *r)
{
	for (size_t i = 0; i < r->wl->nwriters; i++) {
		const struct wl_writer *w = &r->wl->writers[i];
		struct stream *st = &r->stream[i];

		if (w->when != WL_WHEN_CONTINUOUS || st->done)
			continue;
		if (!st->active && r->scans >= w->from_scan) {
			st->active = true;
			st->interval_ns = 1000000000u / w->rate;
			st->next_ns = sim_now_ns(r->s);
			wl_page_iter_init(&st->it, &w->pages, r->wl->regions[w->region].pages,
					  &r->writer_rng[i]);
			st->deferred = r->may_defer && start_deferring(r, i) == 0;
		}
		if (st->active && w->until_scan != WL_FOREVER && r->scans >= w->until_scan) {
			st->active = false;
			st->done = true;
		}
	}
}

/*
 * The writes of writer @i as sim_deferred.h describes them: pages all or
 * every:N (an arithmetic sequence that takes no draws), its stream as it
 * stands before its first write. 0, or why not.
 */
static int start_deferring(struct run *r, size_t i)
{
	const struct wl_writer *w = &r->wl->writers[i];
	struct sim_deferred_spec spec = {
		.area = area_for(r, w->process, w->region),
		.off_lo = w->offset.lo,
		.off_span = w->offset.hi - w->offset.lo + 1,
		.rng = r->writer_rng[i],
		.fresh = w->value.fresh,
		.value = w->value.value,
	};

	if (!sim_deferred_sequence(&w->pages, r->wl->regions[w->region].pages, &spec.first,
				   &spec.step, &spec.count))
		return EINVAL; /* its pages take draws */
	if (!r->stream[i].interval_ns || w->offset.hi > CONTENT_MAX_OFFSET)
		return EINVAL; /* the eager loop reports what is wrong */
	return sim_deferred_start(r->s, &spec);
}

/*
 * Writer @i's area changed under it (sim_deferred_usable()), or its next
 * draw is one that wl_rng_below() draws again: apply what waits, then go
 * on eagerly from the write and the draw it stopped at.
 */
static int stop_deferring(struct run *r, size_t i)
{
	const struct wl_writer *w = &r->wl->writers[i];
	struct stream *st = &r->stream[i];
	uint64_t npages = r->wl->regions[w->region].pages, issued = 0, first, step, count;

	if (flush_deferred(r) != 0)
		return -1;
	sim_deferred_stop(r->s, &issued);
	if (w->offset.hi != w->offset.lo)
		wl_rng_skip(&r->writer_rng[i], issued); /* one draw a write */
	wl_page_iter_init(&st->it, &w->pages, npages, &r->writer_rng[i]);
	sim_deferred_sequence(&w->pages, npages, &first, &step, &count); /* it deferred */
	st->it.next = first + step * (issued % count);
	st->deferred = false;
	return 0;
}

/* Writer @i's writes due by @now, deferred (those it does not take: eager). */
static int issue_deferred(struct run *r, size_t i, uint64_t now)
{
	const struct wl_writer *w = &r->wl->writers[i];
	struct stream *st = &r->stream[i];
	uint64_t n, issued;
	int err;

	if (st->next_ns > now)
		return 0;
	n = (now - st->next_ns) / st->interval_ns + 1;
	err = sim_deferred_issue(r->s, n, r->fresh, &issued);
	if (w->value.fresh)
		r->fresh += issued;
	st->next_ns += issued * st->interval_ns;
	r->prog.writes += issued;
	worked(r, issued);
	if (err == EAGAIN)
		return stop_deferring(r, i);
	if (err)
		return fail(r, "[writer %s]: write failed: %s", w->name, strerror(err));
	return 0;
}

/*
 * Every continuous write due by now, in time order per writer; in a run that
 * stops at time = T, none due after T (the batch that crossed T ends the run).
 */
static int run_streams(struct run *r)
{
	uint64_t now = sim_now_ns(r->s);

	if (r->wl->stop == WL_STOP_TIME && now > r->wl->stop_time_ns)
		now = r->wl->stop_time_ns;

	for (size_t i = 0; i < r->wl->nwriters; i++) {
		const struct wl_writer *w = &r->wl->writers[i];
		struct stream *st = &r->stream[i];
		int area;

		if (!st->active)
			continue;
		area = area_for(r, w->process, w->region);
		if (st->deferred && !sim_deferred_usable(r->s, area) && stop_deferring(r, i) != 0)
			return -1;
		if (st->deferred && issue_deferred(r, i, now) != 0)
			return -1;
		if (st->deferred)
			continue;
		while (st->next_ns <= now) {
			uint64_t page;
			int err;

			if (!wl_page_iter_next(&st->it, &page)) {
				/* one round done: start the selection over */
				wl_page_iter_init(&st->it, &w->pages, r->wl->regions[w->region].pages,
						  &r->writer_rng[i]);
				if (!wl_page_iter_next(&st->it, &page))
					break;
			}
			prefetch_ahead(r->s, area, page, &st->stride);
			err = sim_write(r->s, area, page, wl_offset_pick(&w->offset, &r->writer_rng[i]),
					value_of(r, &w->value));
			if (err)
				return fail(r, "[writer %s]: write failed: %s", w->name, strerror(err));
			st->next_ns += st->interval_ns;
			r->prog.writes++;
			worked(r, 1);
		}
	}
	return 0;
}

/* --- setup --------------------------------------------------------------------- */

static int store_global_knobs(struct run *r)
{
	const struct workload *wl = r->wl;

	for (int k = 0; k < WL_KNOB_COUNT; k++) {
		int err;

		if (k == WL_KNOB_PAGES_TO_SCAN &&
		    wl->knobs[WL_KNOB_ADVISOR_MODE] == WL_ADVISOR_SCAN_TIME)
			continue; /* the advisor sets it */
		/* as the backend: a default the kernel lacks is left alone */
		if (!wl_kernel_has_knob(r->kernel, k) && !wl->knob_given[k])
			continue;
		err = sim_knob_store(r->s, k, wl->knobs[k]);
		if (err == ENOENT)
			return fail(r, "[global] %s: kernel %s has no such knob",
				    wl_knob_info(k)->name, wl_kernel_name(r->kernel));
		if (err)
			return fail(r, "[global] %s: the store answered %s", wl_knob_info(k)->name,
				    errno_name(err));
	}
	/* advisor_mode last reset pages_to_scan: store it again when allowed */
	if (wl->knobs[WL_KNOB_ADVISOR_MODE] == WL_ADVISOR_NONE)
		sim_knob_store(r->s, WL_KNOB_PAGES_TO_SCAN, wl->knobs[WL_KNOB_PAGES_TO_SCAN]);
	return 0;
}

/* Map region @index in process @mm and fill it: the area, or -1. */
static int map_and_fill(struct run *r, size_t index, int mm)
{
	const struct wl_region *reg = &r->wl->regions[index];
	int area = sim_mmap(r->s, mm, reg->pages, reg->node, reg->thp == WL_THP_ALWAYS,
			    (uint32_t)index);

	if (area < 0)
		return fail(r, "[region %s]: mmap failed: %s", reg->name, strerror(-area));
	sim_area_set_dirty_tracking(r->s, area, reg->dirty_tracking);
	for (uint64_t p = 0; p < reg->pages; p++) {
		uint64_t value;

		if (wl_region_initial_value(reg, p, &value) && sim_fill(r->s, area, p, value))
			return fail(r, "[region %s]: out of memory", reg->name);
		r->prog.setup_pages++;
		worked(r, 1);
	}
	return area;
}

/* The region's merge key at setup: madvise the area, or the process's prctl. */
static void mark_mergeable(struct run *r, size_t index, int mm, int area)
{
	const struct wl_region *reg = &r->wl->regions[index];

	if (reg->merge == WL_MERGE_MADVISE)
		sim_madvise(r->s, area, 0, reg->pages, true);
	else if (reg->merge == WL_MERGE_PRCTL)
		sim_prctl_merge(r->s, mm, true);
}

static int setup_region(struct run *r, size_t index)
{
	int mm = r->mm_of[r->wl->regions[index].process];
	int area = map_and_fill(r, index, mm);

	if (area < 0)
		return -1;
	mark_mergeable(r, index, mm, area);
	return 0;
}

static int setup(struct run *r)
{
	for (size_t p = 0; p < r->wl->nprocs; p++) {
		r->mm_of[p] = -1;
		if (r->wl->procs[p].parent < 0 && (r->mm_of[p] = sim_process_new(r->s)) < 0)
			return fail(r, "out of memory");
	}
	if (store_global_knobs(r) != 0)
		return -1;
	for (size_t i = 0; i < r->wl->nregions; i++)
		if (setup_region(r, i) != 0)
			return -1;
	sim_run_store(r->s, 1);
	r->prog.setup = false;
	return 0;
}

/* --- the page partition at scan rows ------------------------------------------------ */

/* The partition entry of one page: its frame, or KSM's zero page, or absent. */
static struct trace_page page_entry(const struct sim *s, int area, uint64_t scan, size_t proc,
				    size_t region, uint64_t page)
{
	long frame = sim_page_frame(s, area, page);
	struct trace_page tp = { .scan = scan, .proc = (uint32_t)proc, .region = (uint32_t)region,
				 .page = page };

	if (frame > 0) {
		tp.frame = (uint64_t)frame;
		tp.flags = TRACE_PAGE_PRESENT;
	} else if (frame < 0) {
		tp.flags = TRACE_PAGE_PRESENT | TRACE_PAGE_ZERO;
	}
	return tp;
}

void sim_capture_pages(void *arg, uint64_t scan, const struct sim *s, const int *mm_of)
{
	struct sim_capture *c = arg;

	for (size_t p = 0; p < c->wl->nprocs && !c->oom; p++) {
		struct trace_proc_stat st;

		if (mm_of[p] < 0)
			continue;
		sim_process_stat(s, mm_of[p], &st);
		if (!st.present)
			continue;
		for (size_t r = 0; r < c->wl->nregions && !c->oom; r++) {
			int area = sim_area_find(s, mm_of[p], (uint32_t)r);

			for (uint64_t page = 0; area >= 0 && page < c->wl->regions[r].pages; page++) {
				struct trace_page tp = page_entry(s, area, scan, p, r, page);

				if (trace_pages_append(&c->page, &c->n, &c->cap, &tp) != 0) {
					c->oom = true;
					break;
				}
			}
		}
	}
}

/* --- the loop ------------------------------------------------------------------- */

static bool finished(const struct run *r)
{
	if (r->wl->stop == WL_STOP_SCANS)
		return r->scans >= r->wl->stop_scans;
	return sim_now_ns(r->s) >= r->wl->stop_time_ns;
}

/* ksmd cannot run: let time pass to the next thing that can happen. */
static int idle(struct run *r)
{
	uint64_t step = 10000000; /* 10 ms */

	if (r->wl->stop == WL_STOP_SCANS)
		return fail(r, "full scans stopped advancing after scan %llu: %s",
			    (unsigned long long)r->scans,
			    sim_run(r->s) != 1 ? "run is not 1" : "no process is registered with KSM");
	sim_advance_ns(r->s, step);
	return 0;
}

/* The row of a full scan (or of scan 0) at time @t, then the scan hook. */
static int scan_row(struct run *r, const struct sim_run_options *opt, uint64_t t)
{
	if (record_row_at(r, TRACE_ROW_SCAN, t) != 0)
		return -1;
	if (opt && opt->scan_hook) {
		if (flush_deferred(r) != 0)
			return -1;
		opt->scan_hook(opt->hook_arg, r->scans, r->s, r->mm_of);
	}
	return 0;
}

/* A full scan ended at @ended (its row shows that time, as the kernel's would). */
static int after_full_scan(struct run *r, const struct sim_run_options *opt, uint64_t ended)
{
	r->scans++;
	if (scan_row(r, opt, ended) != 0)
		return -1;
	r->prog.last_scan_pages = r->s->work.visits - r->scan_start;
	r->scan_start = r->s->work.visits;
	report(r, true);
	if (finished(r))
		return 0;
	if (apply_steps(r) != 0)
		return -1;
	update_streams(r);
	return 0;
}

/* A batch's steps, in pieces when progress is reported (sim_ksmd_steps). */
static void batch(struct run *r)
{
	uint64_t every = r->opt && r->opt->progress ? r->opt->progress_steps : 0;
	bool ended = false;

	while (!ended) {
		uint64_t want = every ? (every > r->work ? every - r->work : 1) : UINT64_MAX;

		worked(r, sim_ksmd_steps(r->s, want, &ended));
	}
}

static int loop(struct run *r, const struct sim_run_options *opt)
{
	while (!finished(r)) {
		uint64_t before = sim_full_scans(r->s), ended = sim_now_ns(r->s);

		if (!sim_ksmd_batch_begin(r->s)) {
			if (idle(r) != 0)
				return -1;
			ended = sim_now_ns(r->s);
		} else {
			batch(r);
			sim_ksmd_batch_end(r->s, &ended);
			if (sim_deferred_error(r->s))
				return fail(r, "a continuous writer's write failed: %s",
					    strerror(sim_deferred_error(r->s)));
		}
		if (opt && opt->per_batch && record_row_at(r, TRACE_ROW_BATCH, ended) != 0)
			return -1;
		if (sim_full_scans(r->s) == before + 1 && after_full_scan(r, opt, ended) != 0)
			return -1;
		if (run_streams(r) != 0 || replay_timed_captures(r) != 0)
			return -1;
	}
	/* a time-limited run ends between scans: show where it stopped */
	if (r->wl->stop == WL_STOP_TIME)
		return record_row(r, TRACE_ROW_BATCH);
	return 0;
}

static unsigned nodes_needed(const struct workload *wl)
{
	unsigned n = 1;

	for (size_t i = 0; i < wl->nregions; i++)
		if (wl->regions[i].node >= 0 && (unsigned)wl->regions[i].node + 1 > n)
			n = (unsigned)wl->regions[i].node + 1;
	return n;
}

/*
 * The trace's kernel: the semantics followed ("6.12"), and a smart-scan
 * policy other than upstream as the patched kernel that carries it names
 * itself ("6.12+phased": wl_kernel_smart_scan_policy reads it back).
 */
static void trace_kernel_name(enum wl_kernel kernel, enum wl_smart_scan_policy policy,
			      char *buf, size_t len)
{
	if (policy == WL_SMART_SCAN_UPSTREAM)
		snprintf(buf, len, "%s", wl_kernel_name(kernel));
	else
		snprintf(buf, len, "%s+%s", wl_kernel_name(kernel),
			 wl_smart_scan_policy_name(policy));
}

/* The trace's cost columns: one per term of the cost model, by its name. */
static int set_cost_terms(struct trace *t)
{
	const char *names[SIM_TERM_COUNT];

	for (int i = 0; i < SIM_TERM_COUNT; i++)
		names[i] = sim_cost_term_info(i)->name;
	return trace_set_costs(t, SIM_TERM_COUNT, names);
}

static struct trace *new_trace(const struct workload *wl, enum wl_kernel kernel,
			       enum wl_smart_scan_policy policy)
{
	const char **names = calloc(wl->nprocs ? wl->nprocs : 1, sizeof(*names));
	char kernel_name[64];
	struct trace *t;

	if (!names)
		return NULL;
	for (size_t i = 0; i < wl->nprocs; i++)
		names[i] = wl->procs[i].name;
	t = trace_new("sim", wl->nprocs, names);
	free(names);
	if (t && set_cost_terms(t) != 0) {
		trace_free(t);
		return NULL;
	}
	trace_kernel_name(kernel, policy, kernel_name, sizeof(kernel_name));
	if (t && trace_set_info(t, wl->path, kernel_name, wl_detector_name(wl->detector),
				true) != 0) {
		trace_free(t);
		t = NULL;
	}
	return t;
}

static size_t continuous_writers(const struct workload *wl)
{
	size_t n = 0;

	for (size_t i = 0; i < wl->nwriters; i++)
		n += wl->writers[i].when == WL_WHEN_CONTINUOUS;
	return n;
}

static int alloc_run(struct run *r, const struct workload *wl)
{
	size_t np = wl->nprocs ? wl->nprocs : 1, nw = wl->nwriters ? wl->nwriters : 1,
	       ne = wl->nevents ? wl->nevents : 1, nr = wl->nregions ? wl->nregions : 1;

	r->mm_of = calloc(np, sizeof(*r->mm_of));
	r->exited = calloc(np, sizeof(*r->exited));
	r->writer_rng = calloc(nw, sizeof(*r->writer_rng));
	r->event_rng = calloc(ne, sizeof(*r->event_rng));
	r->stream = calloc(nw, sizeof(*r->stream));
	r->timed_done = calloc(nr, sizeof(*r->timed_done));
	r->trace = new_trace(wl, r->kernel, r->policy);
	if (!r->mm_of || !r->exited || !r->writer_rng || !r->event_rng || !r->stream ||
	    !r->timed_done || !r->trace)
		return -1;
	for (size_t i = 0; i < wl->nwriters; i++)
		r->writer_rng[i] = wl_writer_rng(wl, i);
	for (size_t i = 0; i < wl->nevents; i++)
		r->event_rng[i] = wl_event_rng(wl, i);
	r->fresh = wl->fresh_start;
	return 0;
}

static void free_run(struct run *r)
{
	free(r->mm_of);
	free(r->exited);
	free(r->writer_rng);
	free(r->event_rng);
	free(r->stream);
	free(r->timed_done);
	sim_free(r->s);
}

int sim_run_workload(const struct workload *wl, const struct sim_run_options *opt,
		     struct trace **out, char *err, size_t errlen)
{
	struct run r = { .wl = wl, .opt = opt, .err = err, .errlen = errlen };
	struct sim_admit_options aopt = { .per_batch = opt && opt->per_batch,
					  .costs = opt ? opt->costs : NULL };
	struct sim_estimate est;
	struct sim_config cfg;
	int rc = -1;

	*out = NULL;
	sim_config_default(&cfg);
	cfg.kernel = r.kernel = opt && opt->override_kernel ? opt->kernel : wl->kernel;
	cfg.detector = wl->detector;
	cfg.thp_dirty = (enum sim_thp_dirty)wl->thp_dirty;
	cfg.checksum = wl->checksum;
	cfg.smart_scan_policy = r.policy = opt && opt->override_smart_scan_policy
						   ? opt->smart_scan_policy
						   : wl->smart_scan_policy;
	cfg.nr_nodes = opt && opt->nr_nodes ? opt->nr_nodes : nodes_needed(wl);
	if (opt && opt->costs)
		cfg.costs = *opt->costs;
	r.may_defer = !(opt && opt->eager_writes) && continuous_writers(wl) == 1;
	cfg.walk_every_insert = opt && opt->walk_every_insert;
	cfg.skip_page_by_page = opt && opt->skip_page_by_page;
	cfg.walk_every_chain = opt && opt->walk_every_chain;
	if (alloc_run(&r, wl) != 0) {
		fail(&r, "out of memory");
		goto out;
	}
	r.prog.setup = true;
	r.prog.stop_scans = wl->stop == WL_STOP_SCANS ? wl->stop_scans : 0;
	r.prog.stop_ns = wl->stop == WL_STOP_TIME ? wl->stop_time_ns : 0;
	r.prog.planned_writes = SIM_WRITES_UNKNOWN;
	if (opt && opt->progress && sim_estimate(wl, &aopt, &est) == 0)
		r.prog.planned_writes = est.writes;
	for (size_t i = 0; i < wl->nregions; i++)
		r.prog.setup_total += wl->regions[i].pages;
	r.s = sim_new(&cfg, err, errlen);
	if (!r.s)
		goto out;
	if (setup(&r) != 0 || scan_row(&r, opt, sim_now_ns(r.s)) != 0 || apply_steps(&r) != 0)
		goto out;
	update_streams(&r);
	rc = loop(&r, opt);
out:
	*out = r.trace;
	free_run(&r);
	return rc;
}
