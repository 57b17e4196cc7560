/*
 * kb_measure.c - ksm_tests' measurements, with its definitions, inside a
 * workload run.
 *
 *   merge (-P): from just before the first MADV_MERGEABLE (or prctl) of
 *     setup until the second full scan is seen to be complete, over the
 *     bytes of the regions setup makes mergeable; speed = MiB / s.
 *   thp (-H): the same, every region advised MADV_HUGEPAGE and 2 MiB
 *     aligned; the 2 MiB ranges a huge page backs after filling are counted,
 *     as ksm_tests reports its "huge pages".
 *   cow (-C): the first write event, timed in the writing process, on pages
 *     merged by then; and the same writes (same pages, offsets) timed at
 *     setup on the same pages before they were ever mergeable, after which
 *     the pages get their initial contents back. ksm_tests' "not merged"
 *     case likewise writes pages that are already present.
 *   unmerge (-D): MADV_UNMERGEABLE of the first unmerge event, or else of
 *     every region at teardown, timed in the processes.
 *
 * The runner calls these hooks at the right moments; nothing else here
 * touches the run.
 */
#include "config.h"
#include "kb_runner.h"

#include <stdlib.h>

static bool measuring(const struct kb_runner *r, enum kb_measure m)
{
	return r->opt->measure == m;
}

static uint64_t mergeable_bytes(const struct workload *wl)
{
	uint64_t bytes = 0;

	for (size_t i = 0; i < wl->nregions; i++)
		if (wl->regions[i].merge != WL_MERGE_NONE && wl->regions[i].fill != WL_FILL_NONE)
			bytes += wl->regions[i].pages * KB_PAGE_SIZE;
	return bytes;
}

void kb_measure_init(struct kb_runner *r)
{
	struct kb_measurement *m = &r->report->measurement;

	r->measure.cow_event = -1;
	for (size_t i = 0; i < r->wl->nevents && r->measure.cow_event < 0; i++)
		if (r->wl->events[i].action == WL_ACT_WRITE)
			r->measure.cow_event = (long)i;
	m->kind = KB_MEASURE_NONE;
	if (measuring(r, KB_MEASURE_MERGE) || measuring(r, KB_MEASURE_THP))
		m->bytes = mergeable_bytes(r->wl);
}

bool kb_measure_forces_thp(const struct kb_runner *r)
{
	return measuring(r, KB_MEASURE_THP);
}

void kb_measure_merge_marking(struct kb_runner *r)
{
	if (!r->measure.merge_start)
		r->measure.merge_start = kb_now_ns();
}

void kb_measure_scan_seen(struct kb_runner *r, uint64_t scan, uint64_t t)
{
	struct kb_measurement *m = &r->report->measurement;

	if (r->measure.merge_done || scan < 2 || !r->measure.merge_start)
		return;
	if (!measuring(r, KB_MEASURE_MERGE) && !measuring(r, KB_MEASURE_THP))
		return;
	r->measure.merge_done = true;
	m->kind = r->opt->measure;
	m->time_ns = t - r->measure.merge_start;
}

/* The cow baseline: event @index's writes, on region pages never merged. */
static int cow_baseline(struct kb_runner *r, size_t index)
{
	const struct wl_event *ev = &r->wl->events[index];
	struct wl_rng rng = wl_event_rng(r->wl, index); /* the event draws the same */
	uint64_t fresh = r->fresh_next, n, elapsed;
	size_t owner = r->wl->regions[ev->region].process;
	struct kb_write *writes = kb_steps_writes(r, (size_t)ev->region, &ev->pages, &ev->offset,
						  &ev->value, &rng, &fresh, &n);
	int rc;

	if (!writes)
		return -1;
	rc = kb_steps_send_writes(r, owner, (size_t)ev->region, writes, n, KB_CMD_RESTORE,
				  &elapsed);
	free(writes);
	if (rc == 0)
		r->report->measurement.base_time_ns = elapsed;
	return rc;
}

int kb_measure_region_filled(struct kb_runner *r, size_t region)
{
	struct kb_measurement *m = &r->report->measurement;

	if (measuring(r, KB_MEASURE_COW) && r->measure.cow_event >= 0 &&
	    (size_t)r->wl->events[r->measure.cow_event].region == region)
		return cow_baseline(r, (size_t)r->measure.cow_event);
	if (measuring(r, KB_MEASURE_THP) && r->wl->regions[region].merge != WL_MERGE_NONE) {
		struct kb_huge_census census;

		if (kb_huge_census(&r->capture, &r->procs, r->wl->regions[region].process, region,
				   &census, r->msg, r->msglen) != 0)
			return -1;
		m->huge_ranges += census.huge;
		m->ranges += census.ranges;
	}
	return 0;
}

void kb_measure_write_event(struct kb_runner *r, size_t event, uint64_t pages, uint64_t elapsed_ns)
{
	struct kb_measurement *m = &r->report->measurement;

	if (!measuring(r, KB_MEASURE_COW) || r->measure.cow_event != (long)event)
		return;
	m->kind = KB_MEASURE_COW;
	m->bytes = pages * KB_PAGE_SIZE;
	m->time_ns = elapsed_ns;
}

void kb_measure_unmerge_event(struct kb_runner *r, uint64_t pages, uint64_t elapsed_ns)
{
	struct kb_measurement *m = &r->report->measurement;

	if (!measuring(r, KB_MEASURE_UNMERGE) || r->measure.unmerge_done)
		return;
	r->measure.unmerge_done = true;
	m->kind = KB_MEASURE_UNMERGE;
	m->bytes = pages * KB_PAGE_SIZE;
	m->time_ns = elapsed_ns;
}

void kb_measure_teardown(struct kb_runner *r, uint64_t elapsed_ns)
{
	struct kb_measurement *m = &r->report->measurement;

	if (!measuring(r, KB_MEASURE_UNMERGE) || r->measure.unmerge_done)
		return;
	m->kind = KB_MEASURE_UNMERGE;
	m->bytes = mergeable_bytes(r->wl);
	m->time_ns = elapsed_ns;
}
