/*
 * plot_trace.c - ksmkit traces as chart series: the chosen KSM counters of
 * every full-scan row against the scan number. It reads the trace struct
 * (trace/trace.h) and nothing else of it: which traces to overlay and how
 * to name them is the caller's choice.
 */
#include "plot_internal.h"
#include "trace.h"

#include <stdio.h>

static size_t scan_rows(const struct trace *t)
{
	size_t n = 0;

	for (size_t i = 0; i < t->nrows; i++)
		if (t->row[i].kind == TRACE_ROW_SCAN)
			n++;
	return n;
}

static int add_counter_series(struct plot_chart *c, const struct trace *t, const char *label,
			      int counter, int color, enum plot_dash dash, char *err, size_t errlen)
{
	char name[PLOT_TEXT_MAX + 1];
	int s;

	if (label && *label)
		snprintf(name, sizeof(name), "%s %s", label, trace_counter_name(counter));
	else
		snprintf(name, sizeof(name), "%s", trace_counter_name(counter));
	s = plot_add_series(c, name, err, errlen);
	if (s < 0)
		return -1;
	plot_series_style(c, s, color, dash);
	for (size_t i = 0; i < t->nrows; i++) {
		const struct trace_row *row = &t->row[i];

		if (row->kind != TRACE_ROW_SCAN)
			continue;
		if (plot_add_point(c, s, (double)row->scan, (double)row->counter[counter], err,
				   errlen) < 0)
			return -1;
	}
	return 0;
}

int plot_add_trace_counters(struct plot_chart *c, const struct trace *t, const char *label,
			    const int *counters, size_t ncounters, enum plot_dash dash, char *err,
			    size_t errlen)
{
	if (scan_rows(t) == 0)
		return plot_fail(err, errlen, "the trace has no full-scan rows");
	for (size_t i = 0; i < ncounters; i++)
		if (counters[i] < 0 || counters[i] >= TRACE_COUNTER_COUNT)
			return plot_fail(err, errlen, "counter %d does not exist", counters[i]);
	for (size_t i = 0; i < ncounters; i++)
		if (add_counter_series(c, t, label, counters[i], (int)(i % PLOT_COLORS), dash, err,
				       errlen) < 0)
			return -1;
	return 0;
}
