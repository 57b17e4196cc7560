/*
 * wl_print.c - the normalized text of a workload, and workload equality.
 *
 * The normalized form states every key explicitly, in a fixed order, with
 * canonical values (pages instead of size, sorted page ranges, the largest
 * exact time unit), and keeps writers and events in file order because that
 * order is meaningful. Parsing it gives a workload wl_equal() to the original:
 * the round trip the tests hold us to.
 */
#include "wl_internal.h"

#include <string.h>

/* requires = FACT,... in the facts' order, when there are any. */
static void print_requires(uint32_t facts, FILE *out)
{
	const char *sep = "requires = ";

	for (int f = 0; f < WL_FACT_COUNT; f++)
		if (facts & (UINT32_C(1) << f)) {
			fprintf(out, "%s%s", sep, wl_kernel_fact_name((enum wl_kernel_fact)f));
			sep = ",";
		}
	if (facts)
		fputc('\n', out);
}

static void print_global(const struct workload *wl, bool only_given, FILE *out)
{
	char buf[64];

	fprintf(out, "[global]\n");
	if (wl->description)
		fprintf(out, "description = %s\n", wl->description);
	if (wl->upstream)
		fprintf(out, "upstream = %s\n", wl->upstream);
	print_requires(wl->requires, out);
	fprintf(out, "kernel = %s\n", wl_kernel_name(wl->kernel));
	fprintf(out, "detector = %s\n", wl_detector_name(wl->detector));
	fprintf(out, "thp_dirty = %s\n", wl_thp_dirty_name(wl->thp_dirty));
	if (wl->checksum != WL_CHECKSUM_CONTENT) /* the default is left out, as before it existed */
		fprintf(out, "checksum = %s\n", wl_checksum_name(wl->checksum));
	if (wl->smart_scan_policy != WL_SMART_SCAN_UPSTREAM) /* likewise */
		fprintf(out, "smart_scan_policy = %s\n",
			wl_smart_scan_policy_name(wl->smart_scan_policy));
	if (wl->stop == WL_STOP_SCANS)
		fprintf(out, "scans = %llu\n", (unsigned long long)wl->stop_scans);
	else
		fprintf(out, "time = %s\n", wl_time_format(wl->stop_time_ns, buf, sizeof(buf)));
	fprintf(out, "timeout = %s\n", wl_time_format(wl->timeout_ns, buf, sizeof(buf)));
	fprintf(out, "seed = %llu\n", (unsigned long long)wl->seed);
	for (int k = 0; k < WL_KNOB_COUNT; k++) {
		/* With the advisor on, the kernel refuses pages_to_scan writes. */
		if (k == WL_KNOB_PAGES_TO_SCAN &&
		    wl->knobs[WL_KNOB_ADVISOR_MODE] == WL_ADVISOR_SCAN_TIME)
			continue;
		/* A knob the kernel lacks cannot be stated (lint refuses it). */
		if (!wl_kernel_has_knob(wl->kernel, k) || (only_given && !wl->knob_given[k]))
			continue;
		fprintf(out, "%s = %s\n", wl_knob_info(k)->name,
			wl_knob_format(k, wl->knobs[k], buf, sizeof(buf)));
	}
}

static void print_region(const struct workload *wl, const struct wl_region *reg, FILE *out)
{
	char buf[4096];

	fprintf(out, "\n[region %s]\n", reg->name);
	fprintf(out, "process = %s\n", wl->procs[reg->process].name);
	fprintf(out, "pages = %llu\n", (unsigned long long)reg->pages);
	fprintf(out, "fill = %s\n", wl_fill_name(reg->fill));
	if (reg->fill == WL_FILL_SAME)
		fprintf(out, "value = %llu\n", (unsigned long long)reg->value);
	if (reg->fill == WL_FILL_GROUPS)
		fprintf(out, "groups = %s\n",
			wl_groups_format(reg->groups, reg->ngroups, buf, sizeof(buf)));
	if (reg->fill == WL_FILL_CAPTURE) {
		const struct wl_capture *cap = reg->capture;

		fprintf(out, "capture = %s\nstream = %u\n", cap->path, cap->stream);
		if (cap->all && cap->first == 0)
			fprintf(out, "snapshots = all\n");
		else
			fprintf(out, "snapshots = %llu-%llu\n", (unsigned long long)cap->first,
				(unsigned long long)cap->last);
		if (cap->every)
			fprintf(out, "every = %llu\n", (unsigned long long)cap->every);
		else
			fprintf(out, "every = %s\n", cap->by_time ? "time" : "capture");
	}
	if (reg->node < 0)
		fprintf(out, "node = any\n");
	else
		fprintf(out, "node = %d\n", reg->node);
	fprintf(out, "thp = %s\n", wl_thp_name(reg->thp));
	fprintf(out, "merge = %s\n", wl_merge_name(reg->merge));
	fprintf(out, "dirty_tracking = %s\n", reg->dirty_tracking ? "yes" : "no");
}

/* region, process and pages: the target of a writer or event. */
static void print_target(const struct workload *wl, size_t region, size_t process,
			 const struct wl_pagesel *pages, FILE *out)
{
	char buf[4096];

	fprintf(out, "region = %s\n", wl->regions[region].name);
	fprintf(out, "process = %s\n", wl->procs[process].name);
	fprintf(out, "pages = %s\n", wl_pagesel_format(pages, buf, sizeof(buf)));
}

static void print_write(const struct wl_offset *offset, const struct wl_value *value, FILE *out)
{
	char buf[64];

	fprintf(out, "offset = %s\n", wl_offset_format(offset, buf, sizeof(buf)));
	fprintf(out, "value = %s\n", wl_value_format(value, buf, sizeof(buf)));
}

static void print_writer(const struct workload *wl, const struct wl_writer *w, FILE *out)
{
	fprintf(out, "\n[writer %s]\n", w->name);
	print_target(wl, w->region, w->process, &w->pages, out);
	print_write(&w->offset, &w->value, out);
	if (w->when == WL_WHEN_AFTER_SCAN) {
		fprintf(out, "when = after-scan:%llu\n", (unsigned long long)w->from_scan);
		return;
	}
	fprintf(out, "when = %s\n", wl_when_name(w->when));
	fprintf(out, "from = %llu\n", (unsigned long long)w->from_scan);
	if (w->until_scan != WL_FOREVER)
		fprintf(out, "until = %llu\n", (unsigned long long)w->until_scan);
	if (w->when == WL_WHEN_CONTINUOUS)
		fprintf(out, "rate = %llu/s\n", (unsigned long long)w->rate);
}

static void print_event(const struct workload *wl, const struct wl_event *ev, FILE *out)
{
	fprintf(out, "\n[event %s]\n", ev->name);
	fprintf(out, "at = after-scan:%llu\n", (unsigned long long)ev->at_scan);
	fprintf(out, "action = %s\n", wl_action_name(ev->action));
	switch (ev->action) {
	case WL_ACT_WRITE:
		print_target(wl, (size_t)ev->region, ev->process, &ev->pages, out);
		print_write(&ev->offset, &ev->value, out);
		break;
	case WL_ACT_MERGE: case WL_ACT_UNMERGE: case WL_ACT_UNMAP: case WL_ACT_DISCARD:
		print_target(wl, (size_t)ev->region, ev->process, &ev->pages, out);
		break;
	case WL_ACT_PROTECT:
		fprintf(out, "region = %s\n", wl->regions[ev->region].name);
		fprintf(out, "process = %s\n", wl->procs[ev->process].name);
		fprintf(out, "prot = %s\n", wl_prot_name(ev->prot));
		break;
	case WL_ACT_UFFD_WP:
		fprintf(out, "region = %s\n", wl->regions[ev->region].name);
		fprintf(out, "process = %s\n", wl->procs[ev->process].name);
		break;
	case WL_ACT_FORK:
		fprintf(out, "process = %s\n", wl->procs[ev->process].name);
		fprintf(out, "child = %s\n", wl->procs[ev->child].name);
		break;
	case WL_ACT_EXIT: case WL_ACT_EXEC: case WL_ACT_MERGE_OFF:
		fprintf(out, "process = %s\n", wl->procs[ev->process].name);
		break;
	case WL_ACT_SET:
		fprintf(out, "set = %s=%s\n", wl_knob_info(ev->knob)->name, ev->knob_text);
		fprintf(out, "expect = %s\n", wl_expect_name(ev->expect));
		break;
	case WL_ACT_RUN:
		fprintf(out, "run = %llu\n", (unsigned long long)ev->run);
		fprintf(out, "expect = %s\n", wl_expect_name(ev->expect));
		break;
	}
}

static int print_workload(const struct workload *wl, bool only_given, FILE *out)
{
	size_t wi = 0, ei = 0;

	fprintf(out, "; normalized by ksmkit lint from %s\n", wl->path);
	print_global(wl, only_given, out);
	for (size_t i = 0; i < wl->nregions; i++)
		print_region(wl, &wl->regions[i], out);
	while (wi < wl->nwriters || ei < wl->nevents) {
		if (wi >= wl->nwriters ||
		    (ei < wl->nevents && wl->events[ei].seq < wl->writers[wi].seq))
			print_event(wl, &wl->events[ei++], out);
		else
			print_writer(wl, &wl->writers[wi++], out);
	}
	wl_print_expects(wl, out);
	return ferror(out) ? -1 : 0;
}

int wl_print(const struct workload *wl, FILE *out)
{
	return print_workload(wl, false, out);
}

int wl_print_given(const struct workload *wl, FILE *out)
{
	return print_workload(wl, true, out);
}

/* --- equality ----------------------------------------------------------- */

static bool str_equal(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool global_equal(const struct workload *a, const struct workload *b)
{
	if (!str_equal(a->description, b->description) || !str_equal(a->upstream, b->upstream) ||
	    a->requires != b->requires || a->kernel != b->kernel ||
	    a->detector != b->detector || a->thp_dirty != b->thp_dirty || a->checksum != b->checksum ||
	    a->smart_scan_policy != b->smart_scan_policy || a->stop != b->stop ||
	    a->timeout_ns != b->timeout_ns ||
	    a->seed != b->seed || a->fresh_start != b->fresh_start ||
	    a->deterministic != b->deterministic)
		return false;
	if (a->stop == WL_STOP_SCANS ? a->stop_scans != b->stop_scans
				     : a->stop_time_ns != b->stop_time_ns)
		return false;
	return memcmp(a->knobs, b->knobs, sizeof(a->knobs)) == 0;
}

static bool processes_equal(const struct workload *a, const struct workload *b)
{
	if (a->nprocs != b->nprocs)
		return false;
	for (size_t i = 0; i < a->nprocs; i++) {
		const struct wl_process *p = &a->procs[i], *q = &b->procs[i];

		if (strcmp(p->name, q->name) != 0 || p->parent != q->parent ||
		    (p->parent >= 0 && p->fork_event != q->fork_event))
			return false;
	}
	return true;
}

static bool region_equal(const struct wl_region *a, const struct wl_region *b)
{
	if (strcmp(a->name, b->name) != 0 || a->process != b->process || a->pages != b->pages ||
	    a->fill != b->fill || a->node != b->node || a->thp != b->thp || a->merge != b->merge ||
	    a->dirty_tracking != b->dirty_tracking || a->unique_base != b->unique_base)
		return false;
	if (a->fill == WL_FILL_SAME && a->value != b->value)
		return false;
	if (a->fill == WL_FILL_CAPTURE)
		return strcmp(a->capture->path, b->capture->path) == 0 &&
		       a->capture->stream == b->capture->stream &&
		       a->capture->first == b->capture->first && a->capture->last == b->capture->last &&
		       a->capture->every == b->capture->every &&
		       a->capture->by_time == b->capture->by_time &&
		       a->capture->ntokens == b->capture->ntokens &&
		       memcmp(a->capture->fresh, b->capture->fresh,
			      a->capture->ntokens * sizeof(*a->capture->fresh)) == 0;
	if (a->fill == WL_FILL_GROUPS)
		return a->ngroups == b->ngroups &&
		       memcmp(a->groups, b->groups, a->ngroups * sizeof(*a->groups)) == 0;
	return true;
}

static bool write_equal(const struct wl_offset *oa, const struct wl_value *va,
			const struct wl_offset *ob, const struct wl_value *vb)
{
	return oa->lo == ob->lo && oa->hi == ob->hi && va->fresh == vb->fresh &&
	       va->value == vb->value;
}

static bool writer_equal(const struct wl_writer *a, const struct wl_writer *b)
{
	return strcmp(a->name, b->name) == 0 && a->seq == b->seq && a->region == b->region &&
	       a->process == b->process && wl_pagesel_equal(&a->pages, &b->pages) &&
	       write_equal(&a->offset, &a->value, &b->offset, &b->value) && a->when == b->when &&
	       a->from_scan == b->from_scan && a->until_scan == b->until_scan &&
	       a->rate == b->rate;
}

static bool event_equal(const struct wl_event *a, const struct wl_event *b)
{
	if (strcmp(a->name, b->name) != 0 || a->seq != b->seq || a->at_scan != b->at_scan ||
	    a->action != b->action || a->region != b->region)
		return false;
	switch (a->action) {
	case WL_ACT_WRITE:
		if (!write_equal(&a->offset, &a->value, &b->offset, &b->value))
			return false;
		/* fall through */
	case WL_ACT_MERGE: case WL_ACT_UNMERGE: case WL_ACT_UNMAP: case WL_ACT_DISCARD:
		return a->process == b->process && wl_pagesel_equal(&a->pages, &b->pages);
	case WL_ACT_PROTECT:
		return a->process == b->process && a->prot == b->prot;
	case WL_ACT_FORK:
		return a->process == b->process && a->child == b->child;
	case WL_ACT_EXIT: case WL_ACT_EXEC: case WL_ACT_MERGE_OFF: case WL_ACT_UFFD_WP:
		return a->process == b->process;
	case WL_ACT_SET:
		return a->knob == b->knob && strcmp(a->knob_text, b->knob_text) == 0 &&
		       a->expect == b->expect;
	case WL_ACT_RUN:
		return a->run == b->run && a->expect == b->expect;
	}
	return false;
}

bool wl_equal(const struct workload *a, const struct workload *b)
{
	if (!global_equal(a, b) || !processes_equal(a, b) || a->nregions != b->nregions ||
	    a->nwriters != b->nwriters || a->nevents != b->nevents)
		return false;
	for (size_t i = 0; i < a->nregions; i++)
		if (!region_equal(&a->regions[i], &b->regions[i]))
			return false;
	for (size_t i = 0; i < a->nwriters; i++)
		if (!writer_equal(&a->writers[i], &b->writers[i]))
			return false;
	for (size_t i = 0; i < a->nevents; i++)
		if (!event_equal(&a->events[i], &b->events[i]))
			return false;
	return wl_expects_equal(a, b);
}
