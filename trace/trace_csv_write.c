/*
 * trace_csv_write.c - a trace as CSV, the form traces are saved and exchanged
 * in (ksmkit sim --csv, run --csv, demo's output, the guest's results).
 *
 * The format is line-oriented: a first line naming the format, its version
 * and the run (values percent-escaped so they never hold a space), one
 * "# outcome" line per event outcome, a header naming every column (units
 * in the names: time_ns), then one line per row; an absent process's fields
 * are empty. A simulator's trace ends each line with its cost terms
 * (cost_NAME_ns: ns of that term since the run started). Counters are int64 in memory and written as signed decimals,
 * so any value round-trips; unset descriptive fields are written empty.
 * trace_csv_read.c reads exactly this back.
 */
#include "trace_internal.h"

#include <inttypes.h>

static int put_percent_escaped(FILE *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		int rc = trace_needs_percent_escape(*p) ? trace_put(out, "%%%02X", *p)
							: trace_put_char(out, (char)*p);

		if (rc < 0)
			return -1;
	}
	return 0;
}

static int write_csv_first_line(const struct trace *t, FILE *out)
{
	if (trace_put(out, TRACE_MAGIC "%d source=", TRACE_FORMAT_VERSION) < 0 ||
	    put_percent_escaped(out, t->source) < 0 || trace_put(out, " kernel=") < 0 ||
	    put_percent_escaped(out, t->kernel) < 0 || trace_put(out, " detector=") < 0 ||
	    put_percent_escaped(out, t->detector) < 0 ||
	    trace_put(out, " time=%s workload=", t->time_simulated ? "simulated" : "measured") < 0 ||
	    put_percent_escaped(out, t->workload) < 0 || trace_put(out, "\n") < 0)
		return -1;
	return 0;
}

static int write_csv_outcome(const struct trace_outcome *o, FILE *out)
{
	if (trace_put(out, TRACE_OUTCOME_PREFIX "scan=%" PRIu64 " event=", o->scan) < 0 ||
	    put_percent_escaped(out, o->event) < 0 || trace_put(out, " error=") < 0 ||
	    trace_put_error_token(out, o->error) < 0 || trace_put(out, "\n") < 0)
		return -1;
	return 0;
}

static int write_csv_header(const struct trace *t, FILE *out)
{
	for (size_t i = 0; i < TRACE_FIXED_COLUMN_COUNT; i++)
		if (trace_put(out, "%s,", trace_fixed_column_names[i]) < 0)
			return -1;
	for (size_t c = 0; c < TRACE_COUNTER_COUNT; c++)
		if (trace_put(out, c ? ",%s" : "%s", trace_counter_name(c)) < 0)
			return -1;
	for (size_t p = 0; p < t->nprocs; p++)
		for (size_t f = 0; f < TRACE_PROC_FIELD_COUNT; f++)
			if (trace_put(out, ",%s.%s", t->proc_name[p], trace_proc_field_name(f)) < 0)
				return -1;
	for (size_t c = 0; c < t->ncosts; c++)
		if (trace_put(out, "," TRACE_COST_PREFIX "%s" TRACE_COST_SUFFIX, t->cost_name[c]) < 0)
			return -1;
	return trace_put(out, "\n");
}

static int write_csv_proc(const struct trace_proc_stat *ps, FILE *out)
{
	for (size_t f = 0; f < TRACE_PROC_FIELD_COUNT; f++) {
		int rc = ps->present ? trace_put(out, ",%" PRId64, ps->field[f])
				     : trace_put_char(out, ',');

		if (rc < 0)
			return -1;
	}
	return 0;
}

static int write_csv_row(const struct trace *t, const struct trace_row *row, FILE *out)
{
	if (trace_put(out, "%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%d",
		      trace_row_kind_names[row->kind], row->scan, row->batch, row->time_ns,
		      row->ksmd_cpu_ns, row->valid ? 1 : 0) < 0)
		return -1;
	for (size_t c = 0; c < TRACE_COUNTER_COUNT; c++)
		if (trace_put(out, ",%" PRId64, row->counter[c]) < 0)
			return -1;
	for (size_t p = 0; p < t->nprocs; p++)
		if (write_csv_proc(&row->proc[p], out) < 0)
			return -1;
	for (size_t c = 0; c < t->ncosts; c++)
		if (trace_put(out, ",%" PRIu64, row->cost[c]) < 0)
			return -1;
	return trace_put(out, "\n");
}

int trace_write_csv(const struct trace *t, FILE *out)
{
	if (write_csv_first_line(t, out) < 0)
		return -1;
	for (size_t i = 0; i < t->noutcomes; i++)
		if (write_csv_outcome(&t->outcome[i], out) < 0)
			return -1;
	if (write_csv_header(t, out) < 0)
		return -1;
	for (size_t i = 0; i < t->nrows; i++)
		if (write_csv_row(t, &t->row[i], out) < 0)
			return -1;
	return trace_finish_output(out);
}
