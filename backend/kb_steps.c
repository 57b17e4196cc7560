/*
 * kb_steps.c - what one workload step does on the real kernel: a writer
 * application or an event, turned into commands to a workload process or
 * into a knob store.
 *
 * Choices are made exactly as the simulator makes them, so both engines
 * write the same bytes into the same pages: a writer's random stream
 * (wl_writer_rng) lives for the whole run and each application draws from
 * it, an event's (wl_event_rng) is fresh for the event; for each page the
 * selection yields (in increasing order) the offset is drawn right after it;
 * the n-th fresh value written by a step, counting in schedule order, is
 * content_fresh_value(wl->fresh_start + n).
 *
 * Knob and run stores answer with the kernel's errno; the answer goes to the
 * trace (trace_add_outcome) and must be what the event expects, or the run
 * fails. Two run values are special while the runner holds ksmd paused
 * between scans: run = 1 is not written at once but when the point's steps
 * are all done (the kernel always accepts it), so no batch runs in the
 * middle of a point; run = 2 is refused while another user's pages are
 * merged, since it would unmerge them too.
 */
#include "config.h"
#include "kb_runner.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes per command, so a huge region is not one huge message. */
#define WRITES_PER_CMD (UINT64_C(1) << 16)

struct kb_write *kb_steps_writes(struct kb_runner *r, size_t region, const struct wl_pagesel *sel,
				 const struct wl_offset *offset, const struct wl_value *value,
				 struct wl_rng *rng, uint64_t *fresh_next, uint64_t *n)
{
	uint64_t npages = r->wl->regions[region].pages;
	uint64_t count = wl_pagesel_count(sel, npages), i = 0, page;
	struct kb_write *writes = calloc(count ? count : 1, sizeof *writes);
	struct wl_page_iter it;

	if (!writes) {
		kb_fail(r->msg, r->msglen, "out of memory for %" PRIu64 " writes", count);
		return NULL;
	}
	wl_page_iter_init(&it, sel, npages, rng);
	while (i < count && wl_page_iter_next(&it, &page)) {
		writes[i].page = page;
		writes[i].offset = wl_offset_pick(offset, rng);
		writes[i].value = value->fresh ? content_fresh_value(r->wl->fresh_start + (*fresh_next)++)
					       : value->value;
		i++;
	}
	*n = i;
	return writes;
}

int kb_steps_send_writes(struct kb_runner *r, size_t proc, size_t region,
			 const struct kb_write *writes, uint64_t n, uint32_t flags,
			 uint64_t *elapsed_ns)
{
	*elapsed_ns = 0;
	for (uint64_t done = 0; done < n; done += WRITES_PER_CMD) {
		uint64_t chunk = n - done < WRITES_PER_CMD ? n - done : WRITES_PER_CMD;
		struct kb_cmd cmd = { .op = KB_OP_WRITE, .region = (uint32_t)region, .flags = flags,
				      .arg = -1, .count = chunk };
		struct kb_reply reply;

		if (kb_proc_call(&r->procs, proc, &cmd, writes + done, chunk * sizeof *writes, &reply,
				 r->msg, r->msglen) != 0)
			return -1;
		*elapsed_ns += reply.elapsed_ns;
	}
	return 0;
}

/* Write @sel of @region in @proc; the number of pages and the time taken. */
static int write_selection(struct kb_runner *r, size_t proc, size_t region,
			   const struct wl_pagesel *sel, const struct wl_offset *offset,
			   const struct wl_value *value, struct wl_rng *rng, uint64_t *pages,
			   uint64_t *elapsed_ns)
{
	struct kb_write *writes = kb_steps_writes(r, region, sel, offset, value, rng,
						  &r->fresh_next, pages);
	int rc;

	if (!writes)
		return -1;
	rc = kb_steps_send_writes(r, proc, region, writes, *pages, 0, elapsed_ns);
	free(writes);
	return rc;
}

static int apply_writer(struct kb_runner *r, size_t index)
{
	const struct wl_writer *w = &r->wl->writers[index];
	uint64_t pages, elapsed;

	if (write_selection(r, w->process, w->region, &w->pages, &w->offset, &w->value,
			    &r->writer_rng[index], &pages, &elapsed) != 0) {
		kb_append(r->msg, r->msglen, "in %s:%u [writer %s]", r->wl->path, w->line, w->name);
		return -1;
	}
	return 0;
}

/* The pages of @sel as sorted ranges of consecutive pages. */
static struct kb_range *selection_ranges(struct kb_runner *r, size_t region,
					 const struct wl_pagesel *sel, struct wl_rng *rng,
					 uint64_t *nranges, uint64_t *npages)
{
	uint64_t pages = r->wl->regions[region].pages;
	uint64_t count = wl_pagesel_count(sel, pages), page;
	struct kb_range *ranges = calloc(count ? count : 1, sizeof *ranges);
	struct wl_page_iter it;
	uint64_t n = 0;

	*npages = 0;
	if (!ranges) {
		kb_fail(r->msg, r->msglen, "out of memory");
		return NULL;
	}
	wl_page_iter_init(&it, sel, pages, rng);
	while (wl_page_iter_next(&it, &page)) {
		(*npages)++;
		if (n && ranges[n - 1].last + 1 == page) {
			ranges[n - 1].last = page;
			continue;
		}
		ranges[n].first = ranges[n].last = page;
		n++;
	}
	*nranges = n;
	return ranges;
}

static int apply_ranges(struct kb_runner *r, size_t index)
{
	const struct wl_event *ev = &r->wl->events[index];
	const struct wl_region *reg = &r->wl->regions[ev->region];
	struct wl_rng rng = wl_event_rng(r->wl, index);
	struct kb_cmd cmd = { .region = (uint32_t)ev->region, .arg = -1 };
	uint64_t nranges = 0, npages = 0;
	struct kb_range *ranges = NULL;
	struct kb_reply reply;
	int rc;

	cmd.op = ev->action == WL_ACT_MERGE	 ? KB_OP_MERGE
		 : ev->action == WL_ACT_UNMERGE	 ? KB_OP_UNMERGE
		 : ev->action == WL_ACT_DISCARD ? KB_OP_DISCARD
						 : KB_OP_UNMAP;
	if ((cmd.op == KB_OP_MERGE || cmd.op == KB_OP_UNMERGE) && reg->merge == WL_MERGE_PRCTL) {
		cmd.flags = KB_CMD_PRCTL; /* the whole process; lint made pages = all */
		npages = reg->pages;
	} else {
		ranges = selection_ranges(r, ev->region, &ev->pages, &rng, &nranges, &npages);
		if (!ranges)
			return -1;
		cmd.count = nranges;
	}
	rc = kb_proc_call(&r->procs, ev->process, &cmd, ranges, nranges * sizeof *ranges, &reply,
			  r->msg, r->msglen);
	free(ranges);
	if (rc != 0)
		return -1;
	if (cmd.op == KB_OP_UNMERGE)
		kb_measure_unmerge_event(r, npages, reply.elapsed_ns);
	return 0;
}

/* merge-off: PR_SET_MEMORY_MERGE 0, what unmerge does for a prctl region. */
static int apply_merge_off(struct kb_runner *r, const struct wl_event *ev)
{
	struct kb_cmd cmd = { .op = KB_OP_UNMERGE, .flags = KB_CMD_PRCTL, .arg = -1 };
	struct kb_reply reply;

	return kb_proc_call(&r->procs, ev->process, &cmd, NULL, 0, &reply, r->msg, r->msglen);
}

/* protect (arg: the protection) and uffd-wp: a whole region. */
static int apply_region_op(struct kb_runner *r, const struct wl_event *ev)
{
	struct kb_cmd cmd = { .op = ev->action == WL_ACT_PROTECT ? KB_OP_PROTECT : KB_OP_UFFD_WP,
			      .region = (uint32_t)ev->region, .arg = (int32_t)ev->prot };
	struct kb_reply reply;

	return kb_proc_call(&r->procs, ev->process, &cmd, NULL, 0, &reply, r->msg, r->msglen);
}

/*
 * exec: the process execs itself (its old mm goes; what the kernel keeps of
 * the prctl flag, it keeps), then every region it has is set up again in
 * file order, as at setup.
 */
static int apply_exec(struct kb_runner *r, const struct wl_event *ev)
{
	size_t root = wl_process_root(r->wl, ev->process);

	if (kb_proc_exec(&r->procs, ev->process, r->msg, r->msglen) != 0)
		return -1;
	for (size_t i = 0; i < r->wl->nregions; i++)
		if (r->wl->regions[i].process == root &&
		    kb_runner_setup_region(r, i, ev->process, true) != 0)
			return -1;
	return 0;
}

static int expected_errno(enum wl_expect expect)
{
	switch (expect) {
	case WL_EXPECT_OK:
		return 0;
	case WL_EXPECT_EINVAL:
		return EINVAL;
	case WL_EXPECT_EBUSY:
		return EBUSY;
	case WL_EXPECT_ERANGE:
		return ERANGE;
	case WL_EXPECT_ANY:
		return -1;
	}
	return -1;
}

/* Record the answer @err to a store of event @ev; fail if unexpected. */
static int check_answer(struct kb_runner *r, const struct wl_event *ev, const char *what, int err)
{
	int want = expected_errno(ev->expect);

	if (trace_add_outcome(r->trace, r->scan, ev->name, err) != 0)
		return kb_fail(r->msg, r->msglen, "out of memory");
	if (want < 0 || want == err)
		return 0;
	return kb_fail(r->msg, r->msglen,
		       "%s:%u: [event %s] after scan %" PRIu64 ": %s: the kernel answered %s, the "
		       "workload expects %s",
		       r->wl->path, ev->line, ev->name, r->scan, what, kb_errno_name(err),
		       kb_errno_name(want));
}

static int apply_set(struct kb_runner *r, const struct wl_event *ev)
{
	const char *name = wl_knob_info(ev->knob)->name;
	char what[128];

	snprintf(what, sizeof what, "set %s=%s", name, ev->knob_text);
	return check_answer(r, ev, what, kb_knob_store(name, ev->knob_text));
}

static int apply_run(struct kb_runner *r, const struct wl_event *ev)
{
	char text[32], what[64], who[128];
	int err;

	snprintf(text, sizeof text, "%" PRIu64, ev->run);
	snprintf(what, sizeof what, "run = %s", text);
	switch (ev->run) {
	case 1:
		/* Written when the point's steps are done; the kernel accepts 1. */
		r->wl_run = 1;
		return check_answer(r, ev, what, 0);
	case 2:
		if (kb_others_have_merged(getpgrp(), who, sizeof who))
			return kb_fail(r->msg, r->msglen,
				       "%s:%u: [event %s]: refusing to write run = 2 while another "
				       "user's pages are merged (%s): it would unmerge them too",
				       r->wl->path, ev->line, ev->name, who);
		break;
	default:
		break;
	}
	err = kb_knob_store("run", text);
	if (!err && ev->run <= 2)
		r->wl_run = (int)ev->run;
	return check_answer(r, ev, what, err);
}

static int apply_event(struct kb_runner *r, size_t index)
{
	const struct wl_event *ev = &r->wl->events[index];
	struct wl_rng rng = wl_event_rng(r->wl, index);
	uint64_t pages, elapsed;
	int rc = 0;

	switch (ev->action) {
	case WL_ACT_WRITE:
		rc = write_selection(r, ev->process, (size_t)ev->region, &ev->pages, &ev->offset,
				     &ev->value, &rng, &pages, &elapsed);
		if (rc == 0)
			kb_measure_write_event(r, index, pages, elapsed);
		break;
	case WL_ACT_MERGE:
	case WL_ACT_UNMERGE:
	case WL_ACT_UNMAP:
	case WL_ACT_DISCARD:
		rc = apply_ranges(r, index);
		break;
	case WL_ACT_PROTECT:
	case WL_ACT_UFFD_WP:
		rc = apply_region_op(r, ev);
		break;
	case WL_ACT_EXEC:
		rc = apply_exec(r, ev);
		break;
	case WL_ACT_MERGE_OFF:
		rc = apply_merge_off(r, ev);
		break;
	case WL_ACT_FORK:
		rc = kb_proc_fork(&r->procs, ev->process, ev->child, r->msg, r->msglen);
		break;
	case WL_ACT_EXIT:
		rc = kb_proc_exit(&r->procs, ev->process, r->msg, r->msglen);
		break;
	case WL_ACT_SET:
		return apply_set(r, ev);
	case WL_ACT_RUN:
		return apply_run(r, ev);
	}
	if (rc != 0)
		kb_append(r->msg, r->msglen, "in %s:%u [event %s]", r->wl->path, ev->line, ev->name);
	return rc;
}

/* ---- fill = capture ---------------------------------------------------------- */

/* Pages per command: 1 MiB of bytes a message. */
#define PAGES_PER_CMD 256u

static struct cap_reader *replay_reader(struct kb_runner *r, size_t region)
{
	const struct wl_capture *cap = r->wl->regions[region].capture;
	struct cap_error err;

	if (!r->replay && !(r->replay = calloc(r->wl->nregions, sizeof *r->replay))) {
		kb_fail(r->msg, r->msglen, "out of memory");
		return NULL;
	}
	if (!r->replay[region] && cap_reader_open(cap->path, 0, &r->replay[region], &err) != 0) {
		kb_fail(r->msg, r->msglen, "%s:%u: [region %s] capture: %s", r->wl->path, cap->line,
			r->wl->regions[region].name, err.text);
		return NULL;
	}
	return r->replay[region];
}

void kb_steps_replay_close(struct kb_runner *r)
{
	for (size_t i = 0; r->replay && i < r->wl->nregions; i++)
		cap_reader_close(r->replay[i]);
	free(r->replay);
	r->replay = NULL;
}

/* The runs of absent pages among @changes, discarded in one command. */
static int replay_discards(struct kb_runner *r, size_t proc, size_t region,
			   const struct wl_capture_change *changes, size_t n)
{
	struct kb_range *ranges = malloc((n ? n : 1) * sizeof *ranges);
	struct kb_cmd cmd = { .op = KB_OP_DISCARD, .region = (uint32_t)region, .arg = -1 };
	struct kb_reply reply;
	int rc = 0;

	if (!ranges)
		return kb_fail(r->msg, r->msglen, "out of memory");
	for (size_t i = 0; i < n; i++) {
		if (changes[i].content != WL_CAPTURE_ABSENT)
			continue;
		if (cmd.count && ranges[cmd.count - 1].last + 1 == changes[i].page)
			ranges[cmd.count - 1].last = changes[i].page;
		else
			ranges[cmd.count++] = (struct kb_range){ changes[i].page, changes[i].page };
	}
	if (cmd.count)
		rc = kb_proc_call(&r->procs, proc, &cmd, ranges, cmd.count * sizeof *ranges, &reply,
				  r->msg, r->msglen);
	free(ranges);
	return rc;
}

int kb_steps_replay(struct kb_runner *r, size_t region, const struct wl_capture_change *changes,
		    size_t n)
{
	const struct wl_region *reg = &r->wl->regions[region];
	struct cap_reader *reader = replay_reader(r, region);
	struct kb_page *pages = malloc(PAGES_PER_CMD * sizeof *pages);
	struct kb_cmd cmd = { .op = KB_OP_PAGES, .region = (uint32_t)region, .arg = -1 };
	struct kb_reply reply;
	struct cap_error err;
	int rc = -1;

	if (!reader || !pages) {
		if (reader)
			kb_fail(r->msg, r->msglen, "out of memory");
		goto out;
	}
	if (replay_discards(r, reg->process, region, changes, n) != 0)
		goto out;
	for (size_t i = 0; i <= n; i++) {
		if (cmd.count == PAGES_PER_CMD || (i == n && cmd.count)) {
			if (kb_proc_call(&r->procs, reg->process, &cmd, pages,
					 cmd.count * sizeof *pages, &reply, r->msg, r->msglen) != 0)
				goto out;
			cmd.count = 0;
		}
		if (i == n || changes[i].content == WL_CAPTURE_ABSENT)
			continue;
		pages[cmd.count].page = changes[i].page;
		if (cap_reader_page_bytes(reader, wl_capture_token(reg->capture, changes[i].content),
					  pages[cmd.count].bytes, &err) != 0) {
			kb_fail(r->msg, r->msglen, "%s:%u: [region %s] capture: %s", r->wl->path,
				reg->capture->line, reg->name, err.text);
			goto out;
		}
		cmd.count++;
	}
	rc = 0;
out:
	free(pages);
	return rc;
}

int kb_steps_replay_initial(struct kb_runner *r, size_t region, size_t proc)
{
	const struct wl_region *reg = &r->wl->regions[region];
	struct wl_capture_change *changes = malloc(reg->pages * sizeof *changes);
	size_t n = 0;
	int rc;

	(void)proc; /* the owner: regions are set up in the process that owns them */
	if (!changes)
		return kb_fail(r->msg, r->msglen, "out of memory");
	for (uint64_t p = 0; p < reg->pages; p++)
		if (reg->capture->initial[p] != WL_CAPTURE_ABSENT)
			changes[n++] = (struct wl_capture_change){ p, reg->capture->initial[p] };
	rc = kb_steps_replay(r, region, changes, n);
	free(changes);
	return rc;
}

/* The snapshots of capture regions due after scan @scan, in region order. */
static int replay_snapshots(struct kb_runner *r, uint64_t scan)
{
	for (size_t i = 0; i < r->wl->nregions; i++) {
		const struct wl_capture *cap = r->wl->regions[i].capture;
		const struct wl_capture_step *step = cap ? wl_capture_step_at(cap, scan) : NULL;

		if (step && kb_steps_replay(r, i, cap->changes + step->first, step->count) != 0) {
			kb_append(r->msg, r->msglen, "in %s:%u [region %s], snapshot %llu",
				  r->wl->path, r->wl->regions[i].line, r->wl->regions[i].name,
				  (unsigned long long)step->snapshot);
			return -1;
		}
	}
	return 0;
}

int kb_steps_apply(struct kb_runner *r, uint64_t scan)
{
	size_t n = wl_steps_after_scan(r->wl, scan, NULL, 0);
	struct wl_step *steps;
	int rc = 0;

	if (replay_snapshots(r, scan) != 0)
		return -1;
	if (n == 0)
		return 0;
	steps = calloc(n, sizeof *steps);
	if (!steps)
		return kb_fail(r->msg, r->msglen, "out of memory");
	wl_steps_after_scan(r->wl, scan, steps, n);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = steps[i].is_event ? apply_event(r, steps[i].index) : apply_writer(r, steps[i].index);
	free(steps);
	return rc;
}
