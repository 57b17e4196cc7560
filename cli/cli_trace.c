/*
 * cli_trace.c - printing a trace for people: one line per full scan with the
 * counters that matter most, then the event outcomes. Machines get
 * trace_write_csv / trace_write_json instead (every counter).
 */
#include "cli.h"
#include "trace.h"

#include <inttypes.h>
#include <string.h>

/* The sum of one ksm_stat field over the processes present in the row. */
static int64_t proc_sum(const struct trace_row *row, size_t nprocs, enum trace_proc_field f)
{
	int64_t sum = 0;

	for (size_t i = 0; i < nprocs; i++)
		if (row->proc[i].present)
			sum += row->proc[i].field[f];
	return sum;
}

static void print_row(const struct trace *t, const struct trace_row *r, FILE *out)
{
	const int64_t *c = r->counter;

	fprintf(out,
		"%5" PRIu64 " %-5s %9.3f %7" PRId64 " %8" PRId64 " %8" PRId64 " %8" PRId64 " %6" PRId64
		" %6" PRId64 " %6" PRId64 " %8" PRId64 " %10" PRId64 " %14" PRId64 " %8" PRId64
		" %5s\n",
		r->scan, r->kind == TRACE_ROW_SCAN ? "scan" : "batch", (double)r->time_ns / 1e9,
		c[TRACE_PAGES_SHARED], c[TRACE_PAGES_SHARING], c[TRACE_PAGES_UNSHARED],
		c[TRACE_PAGES_VOLATILE], c[TRACE_KSM_ZERO_PAGES], c[TRACE_STABLE_NODE_CHAINS],
		c[TRACE_STABLE_NODE_DUPS], c[TRACE_PAGES_SKIPPED], c[TRACE_PAGES_SCANNED],
		c[TRACE_GENERAL_PROFIT], proc_sum(r, t->nprocs, TRACE_KSM_MERGING_PAGES),
		r->valid ? "yes" : "NO");
}

void cli_print_trace(const struct trace *t, const char *engine, FILE *out)
{
	fprintf(out, "# %s on %s; --csv or --json for every counter\n",
		t->workload ? t->workload : "?", engine);
	fprintf(out, "%5s %-5s %9s %7s %8s %8s %8s %6s %6s %6s %8s %10s %14s %8s %5s\n", "scan",
		"row", "time_s", "shared", "sharing", "unshared", "volatile", "zero", "chains",
		"dups", "skipped", "scanned", "general_profit", "merging", "valid");
	for (size_t i = 0; i < t->nrows; i++)
		print_row(t, &t->row[i], out);
	for (size_t i = 0; i < t->noutcomes; i++)
		fprintf(out, "# after scan %" PRIu64 ": [event %s] answered %s\n", t->outcome[i].scan,
			t->outcome[i].event,
			t->outcome[i].error ? strerror(t->outcome[i].error) : "ok");
}
