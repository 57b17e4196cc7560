/*
 * est_model.c - one estimate: what the capture holds (streams, snapshots,
 * the most KSM could save), the workload that replays it in simulated time
 * at the knobs asked about, its run on the simulator with a row after every
 * ksmd batch, and the figures read off that series (the final saving, the
 * time to 90% of it, ksmd's CPU over the run and over the last full scan).
 * It does not take captures, print or draw.
 */
#define _GNU_SOURCE /* open_memstream */
#include "estimate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "trace.h"

#define MIN_TIME_NS (10ull * 1000000000ull)
#define MAX_TIME_NS (7ull * 24 * 3600 * 1000000000ull)
#define SETTLE_SCANS 4u

/* ---- the capture -------------------------------------------------------------- */

static int add_snapshot(struct est_capture *c, const struct cap_snapshot *snap, uint64_t t0,
			uint64_t fs0, char *err, size_t errlen)
{
	struct cap_summary sum;
	struct cap_error cerr;

	for (size_t i = 0; i < snap->nstreams && i < c->nstreams; i++)
		if (snap->streams[i].npages)
			c->replayed[i] = true;
	if (snap->nstreams && snap->streams[0].status == CAP_STREAM_LIVE) {
		c->snapshots++;
		c->last_snapshot_ns = snap->time_ns - t0;
	}
	if (snap->full_scans == CAP_NO_FULL_SCANS || snap->full_scans < fs0)
		c->full_scans_known = false;
	else
		c->full_scans_span = snap->full_scans - fs0;
	if (cap_summarize(snap, &sum, &cerr) != 0) {
		snprintf(err, errlen, "%s", cerr.text);
		return -1;
	}
	if (sum.live_streams) {
		c->present_pages = sum.present;
		c->most_saved = sum.zero + sum.duplicates;
	}
	return 0;
}

int est_capture_read(const char *path, struct est_capture *out, char *err, size_t errlen)
{
	const struct cap_snapshot *snap;
	struct cap_reader *rd;
	struct cap_error cerr;
	uint64_t t0 = 0, fs0 = 0;
	bool first = true;
	int rc;

	memset(out, 0, sizeof(*out));
	if (cap_reader_open(path, 0, &rd, &cerr) != 0) {
		snprintf(err, errlen, "%s", cerr.text);
		return -1;
	}
	out->nstreams = cap_reader_info(rd)->nstreams;
	out->replayed = calloc(out->nstreams ? out->nstreams : 1, sizeof(*out->replayed));
	if (!out->replayed) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	while ((rc = cap_reader_next(rd, &snap, &cerr)) == 1) {
		if (first) {
			t0 = snap->time_ns;
			fs0 = snap->full_scans;
			out->full_scans_known = true;
		}
		first = false;
		if (add_snapshot(out, snap, t0, fs0, err, errlen) != 0)
			goto fail;
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s", cerr.text);
		goto fail;
	}
	for (size_t i = 0; i < out->nstreams; i++)
		out->streams += out->replayed[i];
	cap_reader_close(rd);
	if (!out->streams) {
		snprintf(err, errlen, "%s: no stream has a page in any snapshot: nothing to merge",
			 path);
		est_capture_free(out);
		return -1;
	}
	return 0;
fail:
	cap_reader_close(rd);
	est_capture_free(out);
	return -1;
}

void est_capture_free(struct est_capture *c)
{
	free(c->replayed);
	c->replayed = NULL;
}

/* ---- the workload ---------------------------------------------------------------- */

uint64_t est_default_time(uint64_t last_snapshot_ns, uint64_t pages, const struct est_knobs *k)
{
	uint64_t per_batch = k->value[WL_KNOB_PAGES_TO_SCAN] ? k->value[WL_KNOB_PAGES_TO_SCAN] : 1;
	uint64_t sleep_ns = k->value[WL_KNOB_SLEEP_MILLISECS] * 1000000ull;
	uint64_t batches = (pages + per_batch - 1) / per_batch;
	double scan_ns = (double)batches * (double)(sleep_ns > 1000000 ? sleep_ns : 1000000);
	double t = (double)last_snapshot_ns + SETTLE_SCANS * scan_ns;

	if (t < MIN_TIME_NS)
		return MIN_TIME_NS;
	return t > MAX_TIME_NS ? MAX_TIME_NS : (uint64_t)t;
}

static void print_knobs(FILE *out, const struct est_knobs *k)
{
	for (int i = 0; i < WL_KNOB_COUNT; i++) {
		char buf[32];

		/* the advisor owns pages_to_scan: giving both is refused */
		if (i == WL_KNOB_PAGES_TO_SCAN &&
		    k->value[WL_KNOB_ADVISOR_MODE] == WL_ADVISOR_SCAN_TIME)
			continue;
		fprintf(out, "%s = %s\n", wl_knob_info((enum wl_knob)i)->name,
			wl_knob_format((enum wl_knob)i, k->value[i], buf, sizeof(buf)));
	}
}

int est_workload_text(const struct est_options *opt, const struct est_capture *cap, char **text,
		      char *err, size_t errlen)
{
	bool by_scans = opt->schedule == EST_BY_SCANS;
	uint64_t time_ns = opt->time_ns ? opt->time_ns
					: est_default_time(cap->last_snapshot_ns, cap->present_pages,
							   &opt->knobs);
	uint64_t scans = opt->scans ? opt->scans : cap->full_scans_span + SETTLE_SCANS;
	char *path, stop[48];

	if (by_scans && !cap->full_scans_known) {
		snprintf(err, errlen, "%s: a snapshot has no full_scans (the capture was not taken "
			 "with --every full-scan while KSM ran): it cannot be replayed by scans",
			 opt->capture);
		return -1;
	}
	if (by_scans)
		snprintf(stop, sizeof(stop), "scans = %llu", (unsigned long long)scans);
	else
		snprintf(stop, sizeof(stop), "time = %lluns", (unsigned long long)time_ns);
	path = realpath(opt->capture, NULL);
	size_t len = 0;
	FILE *out;

	if (!path) {
		snprintf(err, errlen, "%s: %s", opt->capture, strerror(errno));
		return -1;
	}
	if (strpbrk(path, " \t#;")) {
		snprintf(err, errlen, "%s: a workload cannot name a file whose path has blanks, "
			 "'#' or ';' (copy or link it elsewhere)", path);
		free(path);
		return -1;
	}
	out = open_memstream(text, &len);
	if (!out) {
		free(path);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	fprintf(out, "# ksmkit estimate: %s replayed %s, every stream\n"
		     "# mergeable (merge = prctl), at the knobs below\n"
		     "[global]\ndescription = ksmkit estimate of %s\nkernel = %s\n%s\n",
		path, by_scans ? "scan for scan" : "in simulated time", path,
		wl_kernel_name(opt->kernel), stop);
	print_knobs(out, &opt->knobs);
	for (uint64_t i = 0; i < cap->nstreams; i++)
		if (cap->replayed[i])
			fprintf(out, "\n[region s%llu]\nprocess = p%llu\nfill = capture\n"
				     "capture = %s\nstream = %llu\nevery = %s\nmerge = prctl\n",
				(unsigned long long)i, (unsigned long long)i, path,
				(unsigned long long)i, by_scans ? "capture" : "time");
	free(path);
	if (fclose(out) != 0) {
		free(*text);
		*text = NULL;
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

int est_workload(const struct est_options *opt, const struct est_capture *cap,
		 struct workload **wl, char *err, size_t errlen)
{
	struct wl_error werr;
	char *text;
	int rc;

	if (est_workload_text(opt, cap, &text, err, errlen) != 0)
		return -1;
	rc = wl_parse_buffer(text, strlen(text), "estimate", wl, &werr);
	if (rc != 0)
		snprintf(err, errlen, "%s", werr.text);
	free(text);
	return rc;
}

/* ---- the run and its figures --------------------------------------------------------- */

static struct est_point point_of(const struct trace_row *row)
{
	return (struct est_point){
		.time_ns = row->time_ns,
		.ksmd_cpu_ns = row->ksmd_cpu_ns,
		.full_scans = (uint64_t)row->counter[TRACE_FULL_SCANS],
		.pages_shared = row->counter[TRACE_PAGES_SHARED],
		.pages_sharing = row->counter[TRACE_PAGES_SHARING],
		.ksm_zero_pages = row->counter[TRACE_KSM_ZERO_PAGES],
		.general_profit = row->counter[TRACE_GENERAL_PROFIT],
	};
}

bool est_scan_point(const struct est_result *r, size_t i)
{
	return i == 0 || i == r->n - 1 || r->series[i].full_scans != r->series[i - 1].full_scans;
}

const uint64_t *est_scan_costs(const struct est_result *r, size_t k)
{
	return r->scan_cost_ns && k < r->nscan_points ? &r->scan_cost_ns[k * SIM_TERM_COUNT]
						      : NULL;
}

/* The batch rows, after a point at time 0; a full-scan row repeats its batch's. */
static int series_of(const struct trace *t, struct est_result *r)
{
	r->series = calloc(t->nrows + 1, sizeof(*r->series));
	if (!r->series)
		return -1;
	r->n = 1;
	for (size_t i = 0; i < t->nrows; i++)
		if (t->row[i].kind == TRACE_ROW_BATCH)
			r->series[r->n++] = point_of(&t->row[i]);
	return 0;
}

/*
 * The cost terms at each scan point, from the same batch rows as the
 * series (t->ncosts == SIM_TERM_COUNT: the caller checked). Only the scan
 * points: a row a batch would multiply a long run's memory several times.
 */
static int scan_costs_of(const struct trace *t, struct est_result *r)
{
	size_t k, point = 0;

	for (size_t i = 0; i < r->n; i++)
		r->nscan_points += est_scan_point(r, i);
	r->scan_cost_ns = calloc(r->nscan_points, SIM_TERM_COUNT * sizeof(*r->scan_cost_ns));
	if (!r->scan_cost_ns)
		return -1;
	k = 1; /* point 0, the start, has charged nothing */
	for (size_t i = 0; i < t->nrows; i++) {
		if (t->row[i].kind != TRACE_ROW_BATCH)
			continue;
		if (est_scan_point(r, ++point))
			memcpy(&r->scan_cost_ns[k++ * SIM_TERM_COUNT], t->row[i].cost,
			       SIM_TERM_COUNT * sizeof(*r->scan_cost_ns));
	}
	return 0;
}

static double cpu_between(const struct est_point *a, const struct est_point *b)
{
	return b->time_ns > a->time_ns
		       ? (double)(b->ksmd_cpu_ns - a->ksmd_cpu_ns) / (double)(b->time_ns - a->time_ns)
		       : 0.0;
}

void est_result_figures(struct est_result *r)
{
	const struct est_point *first = &r->series[0], *from;
	int64_t final;
	size_t w = 0;

	r->last = r->series[r->n - 1];
	final = est_saved(&r->last);
	r->t90_ns = -1;
	for (size_t i = 0; final > 0 && i < r->n; i++)
		if (10 * est_saved(&r->series[i]) >= 9 * final) {
			r->t90_ns = (int64_t)r->series[i].time_ns;
			break;
		}
	r->cpu_mean = cpu_between(first, &r->last);
	/* the last full scan: from the first point that had completed one fewer */
	if (r->last.full_scans >= 2)
		while (w < r->n && r->series[w].full_scans < r->last.full_scans - 1)
			w++;
	from = &r->series[w < r->n ? w : 0];
	r->cpu_steady = cpu_between(from, &r->last);
	r->settled = r->last.full_scans >= 2 && est_saved(from) == final &&
		     from->time_ns >= r->last_snapshot_ns;
}

int est_run(const struct est_options *opt, const struct est_capture *cap,
	    const struct workload *wl, struct est_result *out, char *err, size_t errlen)
{
	struct sim_run_options ro = {
		.per_batch = true,
		.costs = opt->costs,
		.progress = opt->progress,
		.progress_arg = opt->progress_arg,
		.progress_steps = opt->progress_steps,
	};
	struct trace *t = NULL;
	char why[512];

	memset(out, 0, sizeof(*out));
	if (sim_run_workload(wl, &ro, &t, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "the simulator: %s", why);
		trace_free(t);
		return -1;
	}
	if (t->ncosts != SIM_TERM_COUNT) {
		snprintf(err, errlen, "the simulator's trace has %u cost terms, not %d",
			 (unsigned)t->ncosts, SIM_TERM_COUNT);
		trace_free(t);
		return -1;
	}
	if (series_of(t, out) != 0 || scan_costs_of(t, out) != 0) {
		trace_free(t);
		est_result_free(out);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (t->nrows)
		memcpy(out->cost_ns, t->row[t->nrows - 1].cost, sizeof(out->cost_ns));
	trace_free(t);
	out->streams = cap->streams;
	out->snapshots = cap->snapshots;
	out->last_snapshot_ns = cap->last_snapshot_ns;
	if (opt->schedule == EST_BY_SCANS) /* it landed at a scan: when the run got there */
		for (size_t i = 0; i < out->n; i++)
			if (out->series[i].full_scans >= cap->full_scans_span) {
				out->last_snapshot_ns = out->series[i].time_ns;
				break;
			}
	out->present_pages = cap->present_pages;
	out->most_saved = cap->most_saved;
	est_result_figures(out);
	return 0;
}

void est_result_free(struct est_result *r)
{
	free(r->series);
	free(r->scan_cost_ns);
	r->series = NULL;
	r->scan_cost_ns = NULL;
	r->n = r->nscan_points = 0;
}
