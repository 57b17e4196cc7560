/*
 * check_trace.c - Check suite for the trace stage (trace/): the name tables,
 * building a trace, the CSV format (exact text, round trips, every kind of
 * malformed input the reader must reject with file:line and a precise
 * message), the JSON writer (parsed back by python3 when it is installed),
 * page partitions and their CSV (exact text, round trip, malformed input),
 * and write errors reported by every writer.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "trace.h"

/* ---- helpers ------------------------------------------------------------- */

/* What trace_write_csv / trace_write_json produce for @t, NUL-terminated. */
static char *written_text(const struct trace *t, int (*writer)(const struct trace *, FILE *))
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(writer(t, out), 0);
	ck_assert_int_eq(fclose(out), 0);
	return text;
}

/* Parse @text as "t.csv"; NULL with the message in @err on failure. */
static struct trace *read_text(const char *text, char *err, size_t errlen)
{
	struct trace *t = (struct trace *)1;
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	int rc;

	/* fmemopen refuses a zero-length buffer on some libcs: use /dev/null. */
	if (!in && strlen(text) == 0)
		in = fopen("/dev/null", "r");
	ck_assert_ptr_nonnull(in);
	rc = trace_read_csv(in, "t.csv", &t, err, errlen);
	fclose(in);
	if (rc < 0) {
		ck_assert_ptr_null(t);
		return NULL;
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_ptr_nonnull(t);
	return t;
}

static struct trace *round_trip(const struct trace *t)
{
	char err[256];
	char *text = written_text(t, trace_write_csv);
	struct trace *back = read_text(text, err, sizeof err);

	ck_assert_msg(back != NULL, "reading back failed: %s\n%s", err, text);
	free(text);
	return back;
}

static void fill_proc(struct trace_proc_stat *ps, int64_t base)
{
	ps->present = true;
	for (int f = 0; f < TRACE_PROC_FIELD_COUNT; f++)
		ps->field[f] = base + f;
}

/*
 * Two processes, five rows of both kinds: a process absent in some rows,
 * negative profits, extreme 64-bit values, an invalid row; three outcomes.
 */
static struct trace *sample_trace(void)
{
	const char *names[] = { "qemu-1", "worker_2" };
	struct trace *t = trace_new("sim", 2, names);
	struct trace_row *row;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(trace_set_info(t, "two-vms.wl", "6.18", "checksum", true), 0);

	row = trace_append(t, TRACE_ROW_SCAN); /* both processes absent */
	ck_assert_ptr_nonnull(row);

	row = trace_append(t, TRACE_ROW_BATCH); /* only the first exists */
	ck_assert_ptr_nonnull(row);
	row->batch = 1;
	row->time_ns = 12345;
	row->ksmd_cpu_ns = 678;
	row->counter[TRACE_PAGES_SCANNED] = 100;
	row->counter[TRACE_PAGES_TO_SCAN] = 100;
	fill_proc(&row->proc[0], 10);

	row = trace_append(t, TRACE_ROW_SCAN); /* both, losses, not valid */
	ck_assert_ptr_nonnull(row);
	row->scan = 1;
	row->batch = 4;
	row->time_ns = 50000000;
	row->valid = false;
	for (int c = 0; c < TRACE_COUNTER_COUNT; c++)
		row->counter[c] = 7 * c;
	row->counter[TRACE_GENERAL_PROFIT] = -3 * 4096;
	fill_proc(&row->proc[0], 20);
	fill_proc(&row->proc[1], 30);
	row->proc[1].field[TRACE_KSM_PROCESS_PROFIT] = -8192;

	row = trace_append(t, TRACE_ROW_BATCH); /* only the second exists */
	ck_assert_ptr_nonnull(row);
	row->scan = 1;
	row->batch = 5;
	fill_proc(&row->proc[1], 40);

	row = trace_append(t, TRACE_ROW_SCAN); /* extremes */
	ck_assert_ptr_nonnull(row);
	row->scan = UINT64_MAX;
	row->batch = UINT64_MAX - 1;
	row->time_ns = UINT64_MAX;
	row->ksmd_cpu_ns = UINT64_C(1) << 63;
	for (int c = 0; c < TRACE_COUNTER_COUNT; c++)
		row->counter[c] = INT64_MAX;
	row->counter[TRACE_GENERAL_PROFIT] = INT64_MIN;
	fill_proc(&row->proc[0], INT64_MAX - 5);
	fill_proc(&row->proc[1], INT64_MIN);

	ck_assert_int_eq(trace_add_outcome(t, 0, "start", 0), 0);
	ck_assert_int_eq(trace_add_outcome(t, 3, "raise-pages", EBUSY), 0);
	ck_assert_int_eq(trace_add_outcome(t, 7, "odd", EIO), 0);
	return t;
}

/* ---- names --------------------------------------------------------------- */

START_TEST(test_counter_names)
{
	static const char *const expected[TRACE_COUNTER_COUNT] = {
		"pages_shared",       "pages_sharing",    "pages_unshared", "pages_volatile",
		"pages_scanned",      "pages_skipped",    "full_scans",     "stable_node_chains",
		"stable_node_dups",   "ksm_zero_pages",   "general_profit", "pages_to_scan",
	};

	for (int c = 0; c < TRACE_COUNTER_COUNT; c++) {
		ck_assert_str_eq(trace_counter_name(c), expected[c]);
		ck_assert_int_eq(trace_counter_lookup(expected[c]), c);
	}
	ck_assert_ptr_null(trace_counter_name(TRACE_COUNTER_COUNT));
	ck_assert_int_eq(trace_counter_lookup("pages_shred"), -1);
	ck_assert_int_eq(trace_counter_lookup(""), -1);
	ck_assert_int_eq(trace_counter_lookup(NULL), -1);
	ck_assert_int_eq(trace_counter_lookup("ksm_rmap_items"), -1);
}
END_TEST

START_TEST(test_proc_field_names)
{
	static const char *const expected[TRACE_PROC_FIELD_COUNT] = {
		"ksm_rmap_items",     "ksm_zero_pages", "ksm_merging_pages",
		"ksm_process_profit", "ksm_merge_any",  "ksm_mergeable",
	};

	for (int f = 0; f < TRACE_PROC_FIELD_COUNT; f++) {
		ck_assert_str_eq(trace_proc_field_name(f), expected[f]);
		ck_assert_int_eq(trace_proc_field_lookup(expected[f]), f);
	}
	ck_assert_ptr_null(trace_proc_field_name(TRACE_PROC_FIELD_COUNT));
	ck_assert_int_eq(trace_proc_field_lookup("pages_shared"), -1);
	ck_assert_int_eq(trace_proc_field_lookup(NULL), -1);
	/* The one name in both tables resolves in each to its own index. */
	ck_assert_int_eq(trace_counter_lookup("ksm_zero_pages"), TRACE_KSM_ZERO_PAGES);
	ck_assert_int_eq(trace_proc_field_lookup("ksm_zero_pages"), TRACE_KSM_ZERO_PAGES_PROC);
}
END_TEST

/* ---- building ------------------------------------------------------------ */

START_TEST(test_new_and_append)
{
	const char *names[] = { "a", "B-2_z" };
	struct trace *t = trace_new("kernel", 2, names);
	struct trace_row *row;

	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(t->source, "kernel");
	ck_assert_uint_eq(t->nprocs, 2);
	ck_assert_str_eq(t->proc_name[1], "B-2_z");
	ck_assert_uint_eq(t->nrows, 0);
	ck_assert_ptr_null(t->workload);

	row = trace_append(t, TRACE_ROW_BATCH);
	ck_assert_ptr_nonnull(row);
	ck_assert_int_eq(row->kind, TRACE_ROW_BATCH);
	ck_assert(row->valid);
	ck_assert_uint_eq(row->scan, 0);
	ck_assert_uint_eq(row->time_ns, 0);
	for (int c = 0; c < TRACE_COUNTER_COUNT; c++)
		ck_assert_int_eq(row->counter[c], 0);
	ck_assert_ptr_nonnull(row->proc);
	for (int p = 0; p < 2; p++) {
		ck_assert(!row->proc[p].present);
		for (int f = 0; f < TRACE_PROC_FIELD_COUNT; f++)
			ck_assert_int_eq(row->proc[p].field[f], 0);
	}

	/* Growth keeps earlier rows. */
	for (uint64_t i = 1; i < 1000; i++) {
		row = trace_append(t, TRACE_ROW_SCAN);
		ck_assert_ptr_nonnull(row);
		row->scan = i;
		row->proc[i % 2].present = true;
	}
	ck_assert_uint_eq(t->nrows, 1000);
	ck_assert_uint_ge(t->rows_cap, 1000);
	for (uint64_t i = 1; i < 1000; i++) {
		ck_assert_uint_eq(t->row[i].scan, i);
		ck_assert(t->row[i].proc[i % 2].present);
		ck_assert(!t->row[i].proc[(i + 1) % 2].present);
	}
	trace_free(t);
}
END_TEST

START_TEST(test_info_and_outcomes)
{
	struct trace *t = trace_new("sim", 0, NULL);
	char long_event[TRACE_NAME_MAX + 2];

	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->nprocs, 0);
	ck_assert_int_eq(trace_set_info(t, "a.wl", "6.10", "dirty", false), 0);
	ck_assert_int_eq(trace_set_info(t, "b.wl", NULL, "hybrid", true), 0);
	ck_assert_str_eq(t->workload, "b.wl");
	ck_assert_ptr_null(t->kernel);
	ck_assert_str_eq(t->detector, "hybrid");
	ck_assert(t->time_simulated);

	/* Without processes a row has no process array to fill. */
	ck_assert_ptr_nonnull(trace_append(t, TRACE_ROW_SCAN));

	for (int i = 0; i < 100; i++)
		ck_assert_int_eq(trace_add_outcome(t, (uint64_t)i, "ev", i % 3 ? EBUSY : 0), 0);
	ck_assert_uint_eq(t->noutcomes, 100);
	ck_assert_uint_eq(t->outcome[99].scan, 99);
	ck_assert_str_eq(t->outcome[99].event, "ev");
	ck_assert_int_eq(t->outcome[98].error, EBUSY);
	ck_assert_int_eq(t->outcome[99].error, 0);

	memset(long_event, 'e', sizeof long_event - 1);
	long_event[sizeof long_event - 1] = '\0';
	errno = 0;
	ck_assert_int_eq(trace_add_outcome(t, 1, long_event, 0), -1);
	ck_assert_int_eq(errno, EINVAL);
	long_event[TRACE_NAME_MAX] = '\0';
	ck_assert_int_eq(trace_add_outcome(t, 1, long_event, 0), 0);
	ck_assert_str_eq(t->outcome[100].event, long_event);
	trace_free(t);
	trace_free(NULL);
}
END_TEST

START_TEST(test_new_rejects_bad_names)
{
	char longest[TRACE_NAME_MAX + 1], too_long[TRACE_NAME_MAX + 2];
	const char *bad[] = { "", "a.b", "a b", "a,b", "caf\xc3\xa9", "x/y", too_long };
	const char *good[] = { longest, "Az09_-" };
	const char *twice[] = { "dup", "other", "dup" };
	struct trace *t;

	memset(longest, 'n', TRACE_NAME_MAX);
	longest[TRACE_NAME_MAX] = '\0';
	memset(too_long, 'n', TRACE_NAME_MAX + 1);
	too_long[TRACE_NAME_MAX + 1] = '\0';

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *names[] = { "fine", bad[i] };

		errno = 0;
		ck_assert_msg(trace_new("sim", 2, names) == NULL, "accepted '%s'", bad[i]);
		ck_assert_int_eq(errno, EINVAL);
	}
	errno = 0;
	ck_assert_ptr_null(trace_new("sim", 3, twice));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(trace_new("a-source-too-long", 0, NULL));

	t = trace_new("sim", 2, good);
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(t->proc_name[0], longest);
	trace_free(t);
}
END_TEST

START_TEST(test_equal_sees_every_field)
{
	struct trace *a = sample_trace();
	struct trace *b = sample_trace();

	ck_assert(trace_equal(a, b));

#define CHECK_DIFFERS(lvalue, other)                          \
	do {                                                  \
		__typeof__(lvalue) saved_ = (lvalue);         \
		(lvalue) = (other);                           \
		ck_assert_msg(!trace_equal(a, b), #lvalue);   \
		(lvalue) = saved_;                            \
		ck_assert(trace_equal(a, b));                 \
	} while (0)

	CHECK_DIFFERS(b->time_simulated, false);
	CHECK_DIFFERS(b->row[2].kind, TRACE_ROW_BATCH);
	CHECK_DIFFERS(b->row[2].scan, 2);
	CHECK_DIFFERS(b->row[2].batch, 3);
	CHECK_DIFFERS(b->row[2].time_ns, 1);
	CHECK_DIFFERS(b->row[2].ksmd_cpu_ns, 1);
	CHECK_DIFFERS(b->row[2].valid, true);
	CHECK_DIFFERS(b->row[2].counter[TRACE_PAGES_TO_SCAN], 1);
	CHECK_DIFFERS(b->row[2].proc[1].field[TRACE_KSM_MERGEABLE], 9);
	CHECK_DIFFERS(b->row[1].proc[1].present, true);
	CHECK_DIFFERS(b->outcome[1].scan, 4);
	CHECK_DIFFERS(b->outcome[1].error, EPERM);
	CHECK_DIFFERS(b->outcome[1].event[0], 'R');
	CHECK_DIFFERS(b->proc_name[1][0], 'W');
	CHECK_DIFFERS(b->source[0], 'S');
	CHECK_DIFFERS(b->nrows, 4);
	CHECK_DIFFERS(b->noutcomes, 2);
#undef CHECK_DIFFERS

	/* The fields of an absent process are not part of the trace. */
	b->row[0].proc[0].field[0] = 77;
	ck_assert(trace_equal(a, b));

	ck_assert_int_eq(trace_set_info(b, "two-vms.wl", "6.18", "dirty", true), 0);
	ck_assert(!trace_equal(a, b));
	ck_assert_int_eq(trace_set_info(b, "other.wl", "6.18", "checksum", true), 0);
	ck_assert(!trace_equal(a, b));
	ck_assert_int_eq(trace_set_info(b, "two-vms.wl", "6.10", "checksum", true), 0);
	ck_assert(!trace_equal(a, b));

	/* Unset and empty descriptive fields are the same thing. */
	ck_assert_int_eq(trace_set_info(a, NULL, "", "checksum", true), 0);
	ck_assert_int_eq(trace_set_info(b, "", NULL, "checksum", true), 0);
	ck_assert(trace_equal(a, b));
	trace_free(a);
	trace_free(b);
}
END_TEST

/* ---- CSV ----------------------------------------------------------------- */

#define COUNTER_COLUMNS                                                                   \
	"pages_shared,pages_sharing,pages_unshared,pages_volatile,pages_scanned,"         \
	"pages_skipped,full_scans,stable_node_chains,stable_node_dups,ksm_zero_pages,"    \
	"general_profit,pages_to_scan"
#define HEADER0 "kind,scan,batch,time_ns,ksmd_cpu_ns,valid," COUNTER_COLUMNS
#define PROC_A                                                                            \
	",a.ksm_rmap_items,a.ksm_zero_pages,a.ksm_merging_pages,a.ksm_process_profit,"    \
	"a.ksm_merge_any,a.ksm_mergeable"
#define LINE1 "# ksmkit-trace 1 source=sim kernel=6.18 detector=checksum time=simulated workload=foo.wl\n"
#define ROW0 "scan,1,4,100,50,1,1,2,3,4,5,6,7,8,9,10,-11,100"

START_TEST(test_csv_exact_text)
{
	const char *names[] = { "a" };
	struct trace *t = trace_new("sim", 1, names);
	struct trace_row *row;
	char *text;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(trace_set_info(t, "foo.wl", "6.18", "checksum", true), 0);
	ck_assert_int_eq(trace_add_outcome(t, 3, "grow", EBUSY), 0);
	ck_assert_int_eq(trace_add_outcome(t, 4, "shrink", 0), 0);
	ck_assert_int_eq(trace_add_outcome(t, 5, "odd", 133), 0);
	row = trace_append(t, TRACE_ROW_SCAN);
	row->scan = 1;
	row->batch = 4;
	row->time_ns = 100;
	row->ksmd_cpu_ns = 50;
	for (int c = 0; c < TRACE_COUNTER_COUNT; c++)
		row->counter[c] = c + 1;
	row->counter[TRACE_GENERAL_PROFIT] = -11;
	row->counter[TRACE_PAGES_TO_SCAN] = 100;
	fill_proc(&row->proc[0], -3);
	row = trace_append(t, TRACE_ROW_BATCH);
	row->valid = false;
	row->batch = 5;

	text = written_text(t, trace_write_csv);
	ck_assert_str_eq(text, LINE1 "# outcome scan=3 event=grow error=EBUSY\n"
				   "# outcome scan=4 event=shrink error=0\n"
				   "# outcome scan=5 event=odd error=133\n" HEADER0 PROC_A "\n" ROW0
				   ",-3,-2,-1,0,1,2\n"
				   "batch,0,5,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,,,,,,\n");
	free(text);
	trace_free(t);
}
END_TEST

START_TEST(test_csv_round_trip)
{
	struct trace *t = sample_trace();
	struct trace *back = round_trip(t);

	ck_assert(trace_equal(t, back));
	ck_assert_uint_eq(back->nrows, 5);
	ck_assert_uint_eq(back->row[4].scan, UINT64_MAX);
	ck_assert_int_eq(back->row[4].counter[TRACE_GENERAL_PROFIT], INT64_MIN);
	ck_assert_int_eq(back->row[2].proc[1].field[TRACE_KSM_PROCESS_PROFIT], -8192);
	ck_assert(!back->row[2].valid);
	ck_assert(!back->row[1].proc[1].present);
	ck_assert(back->row[1].proc[0].present);
	ck_assert_int_eq(back->row[1].kind, TRACE_ROW_BATCH);
	ck_assert_str_eq(back->proc_name[1], "worker_2");
	trace_free(back);
	trace_free(t);
}
END_TEST

/* Cost columns: named once, written last as cost_NAME_ns, read back, compared. */
START_TEST(test_csv_cost_columns)
{
	const char *names[] = { "visit", "tree_level" }, *bad[] = { "Visit" }, *twice[] = { "a", "a" };
	const char *procs[] = { "main" };
	struct trace *t = trace_new("sim", 1, procs), *back;
	struct trace_row *row;
	char err[256], *text;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(trace_set_costs(t, 1, bad), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(trace_set_costs(t, 2, twice), -1);
	ck_assert_int_eq(trace_set_costs(t, 2, names), 0);
	row = trace_append(t, TRACE_ROW_SCAN);
	ck_assert_ptr_nonnull(row);
	row->cost[0] = 260;
	row->cost[1] = UINT64_MAX;
	ck_assert_int_eq(trace_set_costs(t, 2, names), -1); /* rows already */
	text = written_text(t, trace_write_csv);
	ck_assert_ptr_nonnull(strstr(text, "main.ksm_mergeable,cost_visit_ns,cost_tree_level_ns\n"));
	ck_assert_ptr_nonnull(strstr(text, ",260,18446744073709551615\n"));
	back = round_trip(t);
	ck_assert_uint_eq(back->ncosts, 2);
	ck_assert_str_eq(back->cost_name[1], "tree_level");
	ck_assert(trace_equal(t, back));
	back->row[0].cost[0]++;
	ck_assert(!trace_equal(t, back));
	trace_free(back);
	free(text);
	text = written_text(t, trace_write_json);
	ck_assert_ptr_nonnull(strstr(text, "\"costs_ns\":{\"visit\":260,\"tree_level\":18446744073709551615}"));
	free(text);
	/* a process column after a cost column is refused, naming it */
	text = written_text(t, trace_write_csv);
	{
		char *h = strstr(text, "cost_visit_ns,cost_tree_level_ns");

		memcpy(h, "cost_visit_ns,main.pages_xxxxxx", strlen("cost_visit_ns,cost_tree_level_ns"));
	}
	ck_assert_ptr_null(read_text(text, err, sizeof err));
	ck_assert_msg(strstr(err, "expected a cost column") != NULL, "%s", err);
	free(text);
	trace_free(t);
}
END_TEST

START_TEST(test_csv_outcomes_round_trip)
{
	static const int errors[] = { 0, EINVAL, EBUSY, EPERM, ENOENT, ENOMEM, EAGAIN, EIO, 4095 };
	struct trace *t = trace_new("kernel", 0, NULL);
	struct trace *back;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(trace_set_info(t, "o.wl", "6.8.0-generic", "checksum", false), 0);
	for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
		ck_assert_int_eq(trace_add_outcome(t, i * 1000, "knob-store", errors[i]), 0);
	ck_assert_int_eq(trace_add_outcome(t, UINT64_MAX, "a b=c,d%e\"f\tg", EBUSY), 0);
	ck_assert_int_eq(trace_add_outcome(t, 1, "", 0), 0);

	back = round_trip(t);
	ck_assert(trace_equal(t, back));
	ck_assert_uint_eq(back->noutcomes, sizeof errors / sizeof errors[0] + 2);
	ck_assert_int_eq(back->outcome[7].error, EIO);
	ck_assert_str_eq(back->outcome[9].event, "a b=c,d%e\"f\tg");
	ck_assert(!back->time_simulated);
	ck_assert_uint_eq(back->nrows, 0);
	trace_free(back);
	trace_free(t);
}
END_TEST

START_TEST(test_csv_info_escaping)
{
	const char *workload = "my runs/50% shared, \"big\" = 1\n\x01\x7f\xc3\xa9.wl";
	struct trace *t = trace_new("sim", 0, NULL);
	struct trace *back;
	char *text;

	ck_assert_int_eq(trace_set_info(t, workload, "6.18 (patched)", NULL, true), 0);
	text = written_text(t, trace_write_csv);
	ck_assert_str_eq(text, "# ksmkit-trace 1 source=sim kernel=6.18%20(patched) detector= "
			       "time=simulated workload=my%20runs/50%25%20shared%2C%20%22big%22%20%3D%201"
			       "%0A%01%7F%C3%A9.wl\n" HEADER0 "\n");
	free(text);

	back = round_trip(t);
	ck_assert(trace_equal(t, back));
	ck_assert_str_eq(back->workload, workload);
	ck_assert_str_eq(back->kernel, "6.18 (patched)");
	ck_assert_ptr_null(back->detector);
	trace_free(back);
	trace_free(t);
}
END_TEST

START_TEST(test_csv_line_endings)
{
	char err[256];
	const char *text = "# ksmkit-trace 1 source=kernel kernel=6.18.1 detector=checksum time=measured "
			   "workload=x.wl\r\n# outcome scan=2 event=e error=ENOMEM\r\n" HEADER0 PROC_A
			   "\r\n" ROW0 ",,,,,,\r\nbatch,1,5,200,60,0,1,2,3,4,5,6,7,8,9,10,11,12,1,2,3,-4,0,1";
	struct trace *t = read_text(text, err, sizeof err);

	ck_assert_msg(t != NULL, "%s", err);
	ck_assert_str_eq(t->source, "kernel");
	ck_assert(!t->time_simulated);
	ck_assert_str_eq(t->kernel, "6.18.1");
	ck_assert_uint_eq(t->noutcomes, 1);
	ck_assert_int_eq(t->outcome[0].error, ENOMEM);
	ck_assert_uint_eq(t->nprocs, 1);
	ck_assert_str_eq(t->proc_name[0], "a");
	ck_assert_uint_eq(t->nrows, 2);
	ck_assert_int_eq(t->row[0].counter[TRACE_GENERAL_PROFIT], -11);
	ck_assert(!t->row[0].proc[0].present);
	ck_assert(!t->row[1].valid);
	ck_assert(t->row[1].proc[0].present);
	ck_assert_int_eq(t->row[1].proc[0].field[TRACE_KSM_PROCESS_PROFIT], -4);
	ck_assert_int_eq(t->row[1].proc[0].field[TRACE_KSM_MERGEABLE], 1);
	ck_assert_int_eq(t->row[1].counter[TRACE_PAGES_TO_SCAN], 12);
	trace_free(t);
}
END_TEST

START_TEST(test_csv_long_lines)
{
	enum { NPROCS = 200, NAME_LEN = 10000 };
	char (*names)[16] = calloc(NPROCS, sizeof *names);
	const char *name_ptr[NPROCS];
	char *workload = malloc(NAME_LEN + 1);
	struct trace *t, *back;

	ck_assert_ptr_nonnull(names);
	ck_assert_ptr_nonnull(workload);
	for (int p = 0; p < NPROCS; p++) {
		snprintf(names[p], sizeof names[p], "proc-%d", p);
		name_ptr[p] = names[p];
	}
	memset(workload, ' ', NAME_LEN); /* each one written as %20 */
	workload[NAME_LEN] = '\0';
	t = trace_new("sim", NPROCS, name_ptr);
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(trace_set_info(t, workload, "6.18", "checksum", true), 0);
	for (int i = 0; i < 3; i++) {
		struct trace_row *row = trace_append(t, TRACE_ROW_SCAN);

		ck_assert_ptr_nonnull(row);
		row->scan = (uint64_t)i;
		for (int p = i; p < NPROCS; p += 2)
			fill_proc(&row->proc[p], INT64_MAX - 10 - p);
	}
	back = round_trip(t);
	ck_assert(trace_equal(t, back));
	ck_assert_str_eq(back->proc_name[NPROCS - 1], "proc-199");
	ck_assert_uint_eq(strlen(back->workload), NAME_LEN);
	trace_free(back);
	trace_free(t);
	free(workload);
	free(names);
}
END_TEST

/* Malformed inputs and the exact message each must produce. */
static const struct {
	const char *text;
	const char *error;
} malformed[] = {
	{ "", "t.csv:1: not a ksmkit trace (expected '# ksmkit-trace 1 ...')" },
	{ HEADER0 "\n", "t.csv:1: not a ksmkit trace (expected '# ksmkit-trace 1 ...')" },
	{ "# ksmkit-trace one source=sim\n", "t.csv:1: not a ksmkit trace (expected '# ksmkit-trace 1 ...')" },
	{ "# ksmkit-trace 2 source=sim kernel=6.18 detector=checksum time=simulated workload=w\n" HEADER0 "\n",
	  "t.csv:1: unsupported trace format version 2 (this ksmkit reads 1)" },
	{ "# ksmkit-trace 1 source=sim kernel=6.18 detector=checksum time=simulated\n",
	  "t.csv:1: first line: missing key 'workload'" },
	{ "# ksmkit-trace 1 source=sim kernel=6.18 colour=red detector=checksum time=simulated workload=w\n",
	  "t.csv:1: first line: unknown key 'colour'" },
	{ "# ksmkit-trace 1 source=sim source=sim kernel=6.18 detector=checksum time=simulated workload=w\n",
	  "t.csv:1: first line: duplicate key 'source'" },
	{ "# ksmkit-trace 1 source=sim kernel=6.18 detector=checksum time=wallclock workload=w\n",
	  "t.csv:1: first line: time: 'wallclock' is not simulated or measured" },
	{ "# ksmkit-trace 1 source=sim kernel=6.18 detector=checksum time=simulated workload=foo%2\n",
	  "t.csv:1: first line: workload: bad escape in 'foo%2'" },
	{ "# ksmkit-trace 1 source=sim kernel=6.18 detector=checksum time=simulated workload=a,b\n",
	  "t.csv:1: first line: workload: byte 0x2C must be escaped in 'a,b'" },
	{ "# ksmkit-trace 1 source=simulator-v2-long kernel=6.18 detector=c time=simulated workload=w\n",
	  "t.csv:1: first line: source: 'simulator-v2-long' is too long" },
	{ LINE1, "t.csv:2: missing header line" },
	{ LINE1 "# outcome scan=1 event=x error=EBUSY\n", "t.csv:3: missing header line" },
	{ LINE1 ROW0 "\n", "t.csv:2: missing header line (expected 'kind,scan,batch,...')" },
	{ LINE1 "# a note\n" HEADER0 "\n",
	  "t.csv:2: unexpected comment line (only '# outcome' lines may come before the header)" },
	{ LINE1 "\n" HEADER0 "\n", "t.csv:2: empty line" },
	{ LINE1 "# outcome scan=1 event=x error=EFOO\n" HEADER0 "\n",
	  "t.csv:2: outcome: error: 'EFOO' is not 0, an errno name or a number" },
	{ LINE1 "# outcome scan=1 error=0 event=x\n" HEADER0 "\n",
	  "t.csv:2: outcome: expected '# outcome scan=N event=NAME error=E'" },
	{ LINE1 "# outcome scan=-1 event=x error=0\n" HEADER0 "\n",
	  "t.csv:2: outcome: scan: '-1' is not an unsigned integer" },
	{ LINE1 "# outcome scan=1 event=" "0123456789012345678901234567890123456789012345678901234567890123"
		" error=0\n" HEADER0 "\n",
	  "t.csv:2: outcome: event: name longer than 63 bytes" },
	{ LINE1 "# outcome scan=3 event=x error=EBUSY\n"
		"kind,scan,batch,time_ns,ksmd_cpu_ns,valid,pages_shred\n",
	  "t.csv:3: header: unknown column 'pages_shred'" },
	{ LINE1 "kind,scan,scan,batch\n", "t.csv:2: header: duplicate column 'scan'" },
	{ LINE1 "kind,scan,time_ns,batch\n", "t.csv:2: header: column 3 is 'time_ns', expected 'batch'" },
	{ LINE1 "kind,scan,batch,time_ns,ksmd_cpu_ns,valid,pages_shared,pages_sharing\n",
	  "t.csv:2: header: missing column 'pages_unshared'" },
	{ LINE1 HEADER0 ",\n", "t.csv:2: header: unknown column ''" },
	{ LINE1 HEADER0 ",a.ksm_rmap_items,a.ksm_zero_pages\n", "t.csv:2: header: process 'a' has 2 of 6 columns" },
	{ LINE1 HEADER0 ",a.ksm_zero_pages,a.ksm_rmap_items,a.ksm_merging_pages,a.ksm_process_profit,"
		"a.ksm_merge_any,a.ksm_mergeable\n",
	  "t.csv:2: header: column 19 is 'a.ksm_zero_pages', expected 'a.ksm_rmap_items' "
	  "(process columns come in groups of 6 in field order)" },
	{ LINE1 HEADER0 ",a.ksm_rmap_items,b.ksm_zero_pages\n",
	  "t.csv:2: header: column 20 is 'b.ksm_zero_pages', expected 'a.ksm_zero_pages' "
	  "(process columns come in groups of 6 in field order)" },
	{ LINE1 HEADER0 PROC_A PROC_A "\n", "t.csv:2: header: duplicate column 'a.ksm_rmap_items'" },
	{ LINE1 HEADER0 ",a b.ksm_rmap_items\n", "t.csv:2: header: column 19: 'a b' is not a valid process name" },
	{ LINE1 HEADER0 ",a.ksm_stat\n", "t.csv:2: header: unknown column 'a.ksm_stat'" },
	{ LINE1 HEADER0 ",pages_shared\n", "t.csv:2: header: duplicate column 'pages_shared'" },
	{ LINE1 "# outcome scan=1 event=x error=0\n" HEADER0 "\n" ROW0 "\n"
		"scan,1,4,100,50,1,1,2,3,4,5,6,7,8,9,10,100\n",
	  "t.csv:5: 17 fields, the header has 18" },
	{ LINE1 HEADER0 "\nscan\n", "t.csv:3: 1 field, the header has 18" },
	{ LINE1 HEADER0 "\n" "scan,1,4,100,50,1,1,2,3,4,5,6,7,8,9,10,x12,100\n",
	  "t.csv:3: column general_profit: 'x12' is not an integer" },
	{ LINE1 HEADER0 "\n" "scn,1,4,100,50,1,1,2,3,4,5,6,7,8,9,10,-11,100\n",
	  "t.csv:3: column kind: 'scn' is not scan or batch" },
	{ LINE1 HEADER0 "\n" "scan,18446744073709551616,4,100,50,1,1,2,3,4,5,6,7,8,9,10,-11,100\n",
	  "t.csv:3: column scan: '18446744073709551616' is out of range" },
	{ LINE1 HEADER0 "\n" "scan,1,4,-100,50,1,1,2,3,4,5,6,7,8,9,10,-11,100\n",
	  "t.csv:3: column time_ns: '-100' is not an unsigned integer" },
	{ LINE1 HEADER0 "\n" "scan,1,4,100,50,1,9223372036854775808,2,3,4,5,6,7,8,9,10,-11,100\n",
	  "t.csv:3: column pages_shared: '9223372036854775808' is out of range" },
	{ LINE1 HEADER0 "\n" "scan,1,4,100,50,1,1,2,3,4,5,6,7,8,9,10,-9223372036854775809,100\n",
	  "t.csv:3: column general_profit: '-9223372036854775809' is out of range" },
	{ LINE1 HEADER0 "\n" "scan,1,4,100,50,1,1,2,3,4,5,6,7,8,9,10,+11,100\n",
	  "t.csv:3: column general_profit: '+11' is not an integer" },
	{ LINE1 HEADER0 "\n" "scan,1,4,100,50,1,1, 2,3,4,5,6,7,8,9,10,11,100\n",
	  "t.csv:3: column pages_sharing: ' 2' is not an integer" },
	{ LINE1 HEADER0 "\n" "scan,1,4,100,50,yes,1,2,3,4,5,6,7,8,9,10,-11,100\n",
	  "t.csv:3: column valid: 'yes' is not 0 or 1" },
	{ LINE1 HEADER0 PROC_A "\n" ROW0 ",1,2,,4,5,6\n",
	  "t.csv:3: process a: 1 of 6 fields are empty (an absent process has all empty)" },
	{ LINE1 HEADER0 PROC_A "\n" ROW0 ",1,2,3,-4,5,six\n",
	  "t.csv:3: column a.ksm_mergeable: 'six' is not an integer" },
	{ LINE1 HEADER0 "\n" ROW0 "\n\n", "t.csv:4: empty line" },
	{ LINE1 HEADER0 "\n" ROW0 "\n# outcome scan=1 event=x error=0\n",
	  "t.csv:4: '#' line after the header (outcome lines come before it)" },
};

START_TEST(test_csv_malformed)
{
	char err[256] = "untouched";
	struct trace *t = read_text(malformed[_i].text, err, sizeof err);

	ck_assert_msg(t == NULL, "case %d was accepted", _i);
	ck_assert_str_eq(err, malformed[_i].error);
}
END_TEST

START_TEST(test_csv_error_buffer_limits)
{
	char err[8];
	struct trace *t = (struct trace *)1;
	FILE *in = fmemopen((void *)"nope\n", 5, "r");

	ck_assert_ptr_nonnull(in);
	memset(err, 'x', sizeof err);
	ck_assert_int_eq(trace_read_csv(in, "t.csv", &t, err, sizeof err), -1);
	ck_assert_ptr_null(t);
	ck_assert_str_eq(err, "t.csv:1");
	rewind(in);
	ck_assert_int_eq(trace_read_csv(in, "t.csv", &t, NULL, 0), -1);
	fclose(in);
}
END_TEST

/* ---- JSON ---------------------------------------------------------------- */

static bool have_python3(void)
{
	return system("command -v python3 >/dev/null 2>&1") == 0;
}

/*
 * Exit status of the shell command @command (a python3 invocation) with
 * @json on its standard input.
 */
static int run_with_input(const char *command, const char *json)
{
	FILE *pipe = popen(command, "w");
	int status;

	ck_assert_ptr_nonnull(pipe);
	fputs(json, pipe);
	status = pclose(pipe);
	ck_assert_int_ne(status, -1);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* @script must hold no single quote. */
static int python3_on(const char *script, const char *json, bool quiet)
{
	char command[4096];

	ck_assert_ptr_null(strchr(script, '\''));
	snprintf(command, sizeof command, "python3 -c '%s'%s", script, quiet ? " 2>/dev/null" : "");
	return run_with_input(command, json);
}

static bool json_tool_accepts(const char *json)
{
	return run_with_input("python3 -m json.tool >/dev/null", json) == 0;
}

START_TEST(test_json_content)
{
	struct trace *t = sample_trace();
	char *json = written_text(t, trace_write_json);

	ck_assert_ptr_nonnull(strstr(json, "{\"format\":\"ksmkit-trace\",\"version\":1,"));
	ck_assert_ptr_nonnull(strstr(json, "\"source\":\"sim\",\"kernel\":\"6.18\",\"detector\":\"checksum\","
					   "\"workload\":\"two-vms.wl\",\"time\":\"simulated\""));
	ck_assert_ptr_nonnull(strstr(json, "\"processes\":[\"qemu-1\",\"worker_2\"]"));
	ck_assert_ptr_nonnull(strstr(json, "{\"scan\":3,\"event\":\"raise-pages\",\"error\":\"EBUSY\"}"));
	ck_assert_ptr_nonnull(strstr(json, "{\"scan\":0,\"event\":\"start\",\"error\":\"0\"}"));
	ck_assert_ptr_nonnull(strstr(json, "\"error\":\"5\""));
	ck_assert_ptr_nonnull(strstr(json, "{\"kind\":\"batch\",\"scan\":0,\"batch\":1,\"time_ns\":12345,"
					   "\"ksmd_cpu_ns\":678,\"valid\":true,\"counters\":{\"pages_shared\":0,"));
	ck_assert_ptr_nonnull(strstr(json, "\"general_profit\":-12288,"));
	ck_assert_ptr_nonnull(strstr(json, "\"valid\":false"));
	ck_assert_ptr_nonnull(strstr(json, "\"processes\":{\"qemu-1\":null,\"worker_2\":null}"));
	ck_assert_ptr_nonnull(strstr(json, "\"worker_2\":{\"ksm_rmap_items\":30,\"ksm_zero_pages\":31,"
					   "\"ksm_merging_pages\":32,\"ksm_process_profit\":-8192,"
					   "\"ksm_merge_any\":34,\"ksm_mergeable\":35}"));
	ck_assert_ptr_nonnull(strstr(json, "\"scan\":18446744073709551615,\"batch\":18446744073709551614,"));
	ck_assert_ptr_nonnull(strstr(json, "\"general_profit\":-9223372036854775808,"));
	free(json);
	trace_free(t);
}
END_TEST

START_TEST(test_json_string_escaping)
{
	struct trace *t = trace_new("sim", 0, NULL);
	char *json;

	ck_assert_int_eq(trace_set_info(t, "q\"b\\s/n\n\tc\x01\x7f d\xc3\xa9 bad\xff\xc3 end", NULL, "c", false), 0);
	json = written_text(t, trace_write_json);
	ck_assert_ptr_nonnull(strstr(json, "\"workload\":\"q\\\"b\\\\s/n\\u000a\\u0009c\\u0001\\u007f "
					   "d\xc3\xa9 bad\\ufffd\\ufffd end\""));
	ck_assert_ptr_nonnull(strstr(json, "\"kernel\":null"));
	ck_assert_ptr_nonnull(strstr(json, "\"time\":\"measured\""));
	ck_assert_ptr_nonnull(strstr(json, "\"processes\":[]"));
	ck_assert_ptr_nonnull(strstr(json, "\"outcomes\":[]"));
	ck_assert_ptr_nonnull(strstr(json, "\"rows\":[]"));
	if (have_python3())
		ck_assert(json_tool_accepts(json));
	free(json);
	trace_free(t);
}
END_TEST

START_TEST(test_json_parses)
{
	static const char script[] =
		"import json, sys\n"
		"d = json.load(sys.stdin)\n"
		"assert d[\"format\"] == \"ksmkit-trace\" and d[\"version\"] == 1\n"
		"assert d[\"workload\"] == \"a \\\"b\\\"\\\\c\\n\\u00e9\\ufffd.wl\", d[\"workload\"]\n"
		"assert d[\"processes\"] == [\"qemu-1\", \"worker_2\"]\n"
		"assert d[\"outcomes\"][1] == {\"scan\": 3, \"event\": \"raise-pages\", \"error\": \"EBUSY\"}\n"
		"r = d[\"rows\"]\n"
		"assert len(r) == 5 and r[1][\"kind\"] == \"batch\" and r[2][\"valid\"] is False\n"
		"assert r[4][\"scan\"] == 2**64 - 1 and r[4][\"ksmd_cpu_ns\"] == 2**63\n"
		"assert r[4][\"counters\"][\"general_profit\"] == -2**63\n"
		"assert r[2][\"counters\"][\"general_profit\"] == -12288\n"
		"assert len(r[2][\"counters\"]) == 12\n"
		"assert r[1][\"processes\"][\"worker_2\"] is None\n"
		"assert r[2][\"processes\"][\"worker_2\"][\"ksm_process_profit\"] == -8192\n"
		"assert r[4][\"processes\"][\"worker_2\"][\"ksm_rmap_items\"] == -2**63\n";
	struct trace *t;
	char *json;

	if (!have_python3()) {
		fprintf(stderr, "test_json_parses: python3 not found, JSON not parsed\n");
		return;
	}
	t = sample_trace();
	ck_assert_int_eq(trace_set_info(t, "a \"b\"\\c\n\xc3\xa9\xfe.wl", "6.18", "checksum", true), 0);
	json = written_text(t, trace_write_json);
	ck_assert(json_tool_accepts(json));
	ck_assert_int_eq(python3_on(script, json, false), 0);
	/* The parser is really checking: a broken document must fail. */
	json[strlen(json) - 3] = ',';
	ck_assert_int_ne(python3_on("import json, sys; json.load(sys.stdin)", json, true), 0);
	free(json);
	trace_free(t);
}
END_TEST

/* ---- write errors -------------------------------------------------------- */

static void check_write_fails(const char *path, const char *mode, int expected_errno)
{
	int (*writers[])(const struct trace *, FILE *) = { trace_write_csv, trace_write_json };
	struct trace *t = sample_trace();

	for (size_t i = 0; i < 2; i++) {
		FILE *out = fopen(path, mode);

		if (!out) {
			fprintf(stderr, "%s: cannot open (%s), write error not tested\n", path, strerror(errno));
			break;
		}
		errno = 0;
		ck_assert_int_eq(writers[i](t, out), -1);
		ck_assert_int_eq(errno, expected_errno);
		fclose(out);
	}
	trace_free(t);
}

START_TEST(test_write_to_full_device)
{
	/* The rows fit the stdio buffer: only the writer's flush sees ENOSPC. */
	check_write_fails("/dev/full", "w", ENOSPC);
}
END_TEST

START_TEST(test_write_to_read_only_stream)
{
	/* Here the very first fprintf fails. */
	check_write_fails("/dev/null", "r", EBADF);
}
END_TEST

/* ---- page partitions ------------------------------------------------------ */

static const char *const page_procs[] = { "main", "child" };
static const char *const page_regions[] = { "buf", "vol" };
static const struct trace_page_names page_names = { page_procs, 2, page_regions, 2 };

/* Every flag alone and together, both processes and regions, extremes. */
static const struct trace_page sample_pages[] = {
	{ 0, 0, 0, 0, 0, 0 },
	{ 1, 0, 1, 7, 50, TRACE_PAGE_PRESENT },
	{ 2, 1, 0, 3, 51, TRACE_PAGE_PRESENT | TRACE_PAGE_KSM },
	{ 2, 1, 1, 4, 52, TRACE_PAGE_PRESENT | TRACE_PAGE_ZERO },
	{ 3, 0, 0, 1, 53, TRACE_PAGE_PRESENT | TRACE_PAGE_THP | TRACE_PAGE_KSM },
	{ UINT64_MAX, 1, 1, UINT64_MAX, UINT64_MAX,
	  TRACE_PAGE_PRESENT | TRACE_PAGE_KSM | TRACE_PAGE_ZERO | TRACE_PAGE_THP },
};
#define NSAMPLE_PAGES (sizeof sample_pages / sizeof sample_pages[0])

static char *written_pages(const struct trace_page *pages, size_t n)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(trace_pages_write_csv(pages, n, &page_names, out), 0);
	ck_assert_int_eq(fclose(out), 0);
	return text;
}

/* Field by field: struct padding is not part of a page. */
static bool same_page(const struct trace_page *a, const struct trace_page *b)
{
	return a->scan == b->scan && a->proc == b->proc && a->region == b->region &&
	       a->page == b->page && a->frame == b->frame && a->flags == b->flags;
}

/* Read @text as "p.csv": 0 and the pages, or -1 with the message in @err. */
static int read_pages(const char *text, struct trace_page **pages, size_t *n, char *err,
		      size_t errlen)
{
	FILE *in = strlen(text) ? fmemopen((void *)text, strlen(text), "r")
				: fopen("/dev/null", "r");
	int rc;

	ck_assert_ptr_nonnull(in);
	rc = trace_pages_read_csv(in, "p.csv", &page_names, pages, n, err, errlen);
	fclose(in);
	if (rc != 0)
		ck_assert_ptr_null(*pages);
	return rc;
}

START_TEST(test_pages_exact_text)
{
	char *text = written_pages(sample_pages, 5);

	ck_assert_str_eq(text, "# ksmkit-pages 1\n"
			       "scan,process,region,page,pfn,present,ksm,zero,thp\n"
			       "0,main,buf,0,0,0,0,0,0\n"
			       "1,main,vol,7,50,1,0,0,0\n"
			       "2,child,buf,3,51,1,1,0,0\n"
			       "2,child,vol,4,52,1,0,1,0\n"
			       "3,main,buf,1,53,1,1,0,1\n");
	free(text);
	text = written_pages(NULL, 0);
	ck_assert_str_eq(text, "# ksmkit-pages 1\nscan,process,region,page,pfn,present,ksm,zero,thp\n");
	free(text);
}
END_TEST

START_TEST(test_pages_round_trip)
{
	char *text = written_pages(sample_pages, NSAMPLE_PAGES), err[256];
	struct trace_page *back = NULL;
	size_t n = 0;

	ck_assert_msg(read_pages(text, &back, &n, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(n, NSAMPLE_PAGES);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(same_page(&back[i], &sample_pages[i]), "page %zu changed", i);
	free(back);
	free(text);
	/* CRLF line endings, no final newline: the same pages */
	ck_assert_int_eq(read_pages("# ksmkit-pages 1\r\nscan,process,region,page,pfn,present,"
				    "ksm,zero,thp\r\n1,main,vol,7,50,1,0,0,0", &back, &n, err,
				    sizeof err), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert(same_page(back, &sample_pages[1]));
	free(back);
	/* no pages at all */
	ck_assert_int_eq(read_pages("# ksmkit-pages 1\nscan,process,region,page,pfn,present,ksm,"
				    "zero,thp\n", &back, &n, err, sizeof err), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(back);
}
END_TEST

#define PAGES_HEADER "# ksmkit-pages 1\nscan,process,region,page,pfn,present,ksm,zero,thp\n"

static const struct {
	const char *text, *error;
} malformed_pages[] = {
	{ "", "p.csv:1: not a ksmkit page partition (expected '# ksmkit-pages 1')" },
	{ "# ksmkit-trace 1\n", "p.csv:1: not a ksmkit page partition (expected '# ksmkit-pages 1')" },
	{ "# ksmkit-pages 2\n", "p.csv:1: unsupported page partition format version 2 (this ksmkit "
			       "reads 1)" },
	{ "# ksmkit-pages 1\n", "p.csv:2: expected the header 'scan,process,region,page,pfn,"
			       "present,ksm,zero,thp'" },
	{ "# ksmkit-pages 1\nscan,process,region,page,pfn\n", "p.csv:2: expected the header "
	  "'scan,process,region,page,pfn,present,ksm,zero,thp'" },
	{ PAGES_HEADER "1,main,buf,0,5,1,0,0\n", "p.csv:3: 8 fields, the header has 9" },
	{ PAGES_HEADER "1,main,buf,0,5,1,0,0,0,0\n", "p.csv:3: 10 fields, the header has 9" },
	{ PAGES_HEADER "x,main,buf,0,5,1,0,0,0\n", "p.csv:3: column scan: 'x' is not an unsigned "
						  "integer" },
	{ PAGES_HEADER "1,qemu,buf,0,5,1,0,0,0\n", "p.csv:3: column process: no process 'qemu'" },
	{ PAGES_HEADER "1,main,heap,0,5,1,0,0,0\n", "p.csv:3: column region: no region 'heap'" },
	{ PAGES_HEADER "1,main,buf,-1,5,1,0,0,0\n", "p.csv:3: column page: '-1' is not an "
						   "unsigned integer" },
	{ PAGES_HEADER "1,main,buf,0,18446744073709551616,1,0,0,0\n",
	  "p.csv:3: column pfn: '18446744073709551616' is out of range" },
	{ PAGES_HEADER "1,main,buf,0,5,1,0,2,0\n", "p.csv:3: column zero: '2' is not 0 or 1" },
	{ PAGES_HEADER "1,main,buf,0,5,1,0,0,\n", "p.csv:3: column thp: '' is not 0 or 1" },
	{ PAGES_HEADER "\n", "p.csv:3: empty line" },
	{ PAGES_HEADER "1,main,buf,0,5,1,0,0,0\n# note\n", "p.csv:4: 1 field, the header has 9" },
};

START_TEST(test_pages_malformed)
{
	struct trace_page *pages = (struct trace_page *)1;
	char err[256];
	size_t n = 1;

	ck_assert_int_eq(read_pages(malformed_pages[_i].text, &pages, &n, err, sizeof err), -1);
	ck_assert_str_eq(err, malformed_pages[_i].error);
	ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(test_pages_append_grows)
{
	struct trace_page *pages = NULL;
	size_t n = 0, cap = 0;

	for (uint64_t i = 0; i < 3000; i++) {
		struct trace_page p = { .scan = i / 1000, .page = i, .frame = i + 1,
					.flags = TRACE_PAGE_PRESENT };

		ck_assert_int_eq(trace_pages_append(&pages, &n, &cap, &p), 0);
	}
	ck_assert_uint_eq(n, 3000);
	ck_assert_uint_ge(cap, 3000);
	for (uint64_t i = 0; i < 3000; i++)
		ck_assert(pages[i].page == i && pages[i].frame == i + 1 && pages[i].scan == i / 1000);
	free(pages);
}
END_TEST

START_TEST(test_pages_write_errors)
{
	FILE *out = fopen("/dev/full", "w");

	ck_assert_ptr_nonnull(out);
	errno = 0;
	ck_assert_int_eq(trace_pages_write_csv(sample_pages, NSAMPLE_PAGES, &page_names, out), -1);
	ck_assert_int_eq(errno, ENOSPC);
	fclose(out);
}
END_TEST

/* ---- suite --------------------------------------------------------------- */

static Suite *trace_suite(void)
{
	Suite *s = suite_create("trace");
	TCase *tc;

	tc = tcase_create("names");
	tcase_add_test(tc, test_counter_names);
	tcase_add_test(tc, test_proc_field_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("build");
	tcase_add_test(tc, test_new_and_append);
	tcase_add_test(tc, test_info_and_outcomes);
	tcase_add_test(tc, test_new_rejects_bad_names);
	tcase_add_test(tc, test_equal_sees_every_field);
	suite_add_tcase(s, tc);

	tc = tcase_create("csv");
	tcase_add_test(tc, test_csv_exact_text);
	tcase_add_test(tc, test_csv_round_trip);
	tcase_add_test(tc, test_csv_outcomes_round_trip);
	tcase_add_test(tc, test_csv_cost_columns);
	tcase_add_test(tc, test_csv_info_escaping);
	tcase_add_test(tc, test_csv_line_endings);
	tcase_add_test(tc, test_csv_long_lines);
	suite_add_tcase(s, tc);

	tc = tcase_create("csv_malformed");
	tcase_add_loop_test(tc, test_csv_malformed, 0, (int)(sizeof malformed / sizeof malformed[0]));
	tcase_add_test(tc, test_csv_error_buffer_limits);
	suite_add_tcase(s, tc);

	tc = tcase_create("json");
	tcase_add_test(tc, test_json_content);
	tcase_add_test(tc, test_json_string_escaping);
	tcase_add_test(tc, test_json_parses);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);

	tc = tcase_create("pages");
	tcase_add_test(tc, test_pages_exact_text);
	tcase_add_test(tc, test_pages_round_trip);
	tcase_add_loop_test(tc, test_pages_malformed, 0,
			    (int)(sizeof malformed_pages / sizeof malformed_pages[0]));
	tcase_add_test(tc, test_pages_append_grows);
	tcase_add_test(tc, test_pages_write_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("write_errors");
	tcase_add_test(tc, test_write_to_full_device);
	tcase_add_test(tc, test_write_to_read_only_stream);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(trace_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
