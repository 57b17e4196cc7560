/*
 * trace_csv_read.c - the strict reader of trace CSV (trace_csv_write.c's
 * format): ksmkit compare --sim-only, ksmkit plot and the guest's results
 * read traces through it.
 *
 * It accepts exactly what the writer produces, give or take "\r\n" line
 * endings and a missing final newline, so a trace survives a round trip
 * unchanged; and it stops at the first thing wrong with "NAME:LINE: what"
 * (a bad escape, an unknown or misplaced column, a field that is not a
 * number, a version it does not read) rather than guessing. Empty
 * descriptive fields read back as NULL. tests/fuzz/fuzz_trace.c fuzzes it.
 */
#include "trace_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The keys of the first line, in the order they are written. */
enum info_key { INFO_SOURCE, INFO_KERNEL, INFO_DETECTOR, INFO_TIME, INFO_WORKLOAD, INFO_KEY_COUNT };

static const char *const info_key_names[INFO_KEY_COUNT] = {
	[INFO_SOURCE] = "source", [INFO_KERNEL] = "kernel",     [INFO_DETECTOR] = "detector",
	[INFO_TIME] = "time",     [INFO_WORKLOAD] = "workload",
};

/* ---- percent-escaped values ---------------------------------------------- */

static int hex_digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/*
 * Check that @s is a percent-escaped value as the writer makes them: every
 * '%' starts %XX (not %00), and no byte that must be escaped appears raw.
 * Returns 0, or -1 with a message about @what (after @context).
 */
static int check_percent_escaped(struct trace_reader *r, const char *context, const char *what,
				 const char *s)
{
	for (const char *p = s; *p; p++) {
		if (*p == '%') {
			if (hex_digit_value(p[1]) < 0 || hex_digit_value(p[2]) < 0 ||
			    (p[1] == '0' && p[2] == '0'))
				return trace_reader_fail(r, "%s%s: bad escape in '%s'", context,
							 what, s);
			p += 2;
		} else if (trace_needs_percent_escape((unsigned char)*p)) {
			return trace_reader_fail(r, "%s%s: byte 0x%02X must be escaped in '%s'",
						 context, what, (unsigned char)*p, s);
		}
	}
	return 0;
}

/* Decode a value that passed check_percent_escaped, in place. */
static void percent_decode(char *s)
{
	char *to = s;

	for (const char *from = s; *from; from++) {
		if (*from == '%') {
			*to++ = (char)(hex_digit_value(from[1]) * 16 + hex_digit_value(from[2]));
			from += 2;
		} else {
			*to++ = *from;
		}
	}
	*to = '\0';
}

static int decode_value(struct trace_reader *r, const char *context, const char *what, char *value)
{
	if (check_percent_escaped(r, context, what, value) < 0)
		return -1;
	percent_decode(value);
	return 0;
}

/* ---- CSV reader: the lines before the rows ------------------------------- */

static int fail_not_a_trace(struct trace_reader *r)
{
	return trace_reader_fail(r, "not a ksmkit trace (expected '" TRACE_MAGIC "%d ...')",
				 TRACE_FORMAT_VERSION);
}

/*
 * The version token of the first line, which starts with TRACE_MAGIC: what
 * follows it, or NULL (message set). Only this version is read: the columns
 * of another one may mean something else.
 */
static char *check_version(struct trace_reader *r)
{
	char *version = r->line + strlen(TRACE_MAGIC);
	size_t len = strcspn(version, " ");
	uint64_t number = 0;
	char saved = version[len];
	enum trace_number status;

	version[len] = '\0';
	status = trace_parse_digits(version, UINT64_MAX, &number);
	version[len] = saved;
	if (status == TRACE_NUMBER_MALFORMED) {
		fail_not_a_trace(r);
		return NULL;
	}
	if (status != TRACE_NUMBER_OK || number != TRACE_FORMAT_VERSION) {
		trace_reader_fail(r, "unsupported trace format version %.*s (this ksmkit reads %d)",
				  (int)len, version, TRACE_FORMAT_VERSION);
		return NULL;
	}
	return version + len;
}

/* Split the key=value tokens after the version into @value[INFO_*]. */
static int read_info_values(struct trace_reader *r, char *rest, char *value[INFO_KEY_COUNT])
{
	char *cursor = *rest ? rest + 1 : NULL; /* past the space after the version */
	char *token;

	while ((token = strsep(&cursor, " ")) != NULL) {
		char *eq = strchr(token, '=');
		int key;

		if (!eq)
			return trace_reader_fail(r, "first line: '%s' is not key=value", token);
		*eq = '\0';
		key = trace_find_name(info_key_names, INFO_KEY_COUNT, token);
		if (key < 0)
			return trace_reader_fail(r, "first line: unknown key '%s'", token);
		if (value[key])
			return trace_reader_fail(r, "first line: duplicate key '%s'", token);
		if (decode_value(r, "first line: ", info_key_names[key], eq + 1) < 0)
			return -1;
		value[key] = eq + 1;
	}
	for (size_t k = 0; k < INFO_KEY_COUNT; k++)
		if (!value[k])
			return trace_reader_fail(r, "first line: missing key '%s'",
						 info_key_names[k]);
	return 0;
}

static const char *empty_to_null(const char *s)
{
	return *s ? s : NULL;
}

/* Line 1: the format, its version and the run's description. */
static int read_first_line(struct trace_reader *r, struct trace **out)
{
	char *value[INFO_KEY_COUNT] = { NULL };
	bool time_simulated;
	char *rest;
	struct trace *t;
	int rc = trace_reader_line(r);

	if (rc < 0)
		return -1;
	if (rc == 0) {
		r->lineno = 1;
		return fail_not_a_trace(r);
	}
	if (!trace_starts_with(r->line, TRACE_MAGIC))
		return fail_not_a_trace(r);
	rest = check_version(r);
	if (!rest || read_info_values(r, rest, value) < 0)
		return -1;
	if (strcmp(value[INFO_TIME], "simulated") != 0 && strcmp(value[INFO_TIME], "measured") != 0)
		return trace_reader_fail(r, "first line: time: '%s' is not simulated or measured",
					 value[INFO_TIME]);
	time_simulated = strcmp(value[INFO_TIME], "simulated") == 0;
	if (strlen(value[INFO_SOURCE]) >= sizeof t->source)
		return trace_reader_fail(r, "first line: source: '%s' is too long",
					 value[INFO_SOURCE]);
	t = trace_new(value[INFO_SOURCE], 0, NULL);
	if (!t)
		return trace_reader_fail(r, "out of memory");
	if (trace_set_info(t, empty_to_null(value[INFO_WORKLOAD]),
			   empty_to_null(value[INFO_KERNEL]), empty_to_null(value[INFO_DETECTOR]),
			   time_simulated) < 0) {
		trace_free(t);
		return trace_reader_fail(r, "out of memory");
	}
	*out = t;
	return 0;
}

/* The error token of an outcome line: 0, an errno name, or a positive number. */
static int parse_error_token(const char *token, int *error)
{
	uint64_t number = 0;

	if (trace_parse_digits(token, INT32_MAX, &number) == TRACE_NUMBER_OK) {
		*error = (int)number;
		return 0;
	}
	*error = trace_errno_lookup(token);
	return *error < 0 ? -1 : 0;
}

/* "# outcome scan=N event=NAME error=E", exactly in that order. */
static int read_outcome_line(struct trace_reader *r, struct trace *t)
{
	static const char *const keys[] = { "scan=", "event=", "error=" };
	char *token[3];
	uint64_t scan = 0;
	int error;
	char *rest = r->line + strlen(TRACE_OUTCOME_PREFIX);

	if (trace_count_fields(rest, ' ') != 3)
		goto malformed;
	trace_split_fields(rest, ' ', token, 3);
	for (size_t i = 0; i < 3; i++) {
		if (!trace_starts_with(token[i], keys[i]))
			goto malformed;
		token[i] += strlen(keys[i]);
	}
	switch (trace_parse_digits(token[0], UINT64_MAX, &scan)) {
	case TRACE_NUMBER_OK:
		break;
	case TRACE_NUMBER_OUT_OF_RANGE:
		return trace_reader_fail(r, "outcome: scan: '%s' is out of range", token[0]);
	default:
		return trace_reader_fail(r, "outcome: scan: '%s' is not an unsigned integer",
					 token[0]);
	}
	if (decode_value(r, "outcome: ", "event", token[1]) < 0)
		return -1;
	if (strlen(token[1]) > TRACE_NAME_MAX)
		return trace_reader_fail(r, "outcome: event: name longer than %d bytes",
					 TRACE_NAME_MAX);
	if (parse_error_token(token[2], &error) < 0)
		return trace_reader_fail(
			r, "outcome: error: '%s' is not 0, an errno name or a number", token[2]);
	if (trace_add_outcome(t, scan, token[1], error) < 0)
		return trace_reader_fail(r, "out of memory");
	return 0;

malformed:
	return trace_reader_fail(r, "outcome: expected '" TRACE_OUTCOME_PREFIX
				    "scan=N event=NAME error=E'");
}

/* The name the writer gives column @i of the fixed and counter columns. */
static const char *canonical_column(size_t i)
{
	return i < TRACE_FIRST_COUNTER_COLUMN ? trace_fixed_column_names[i]
					      : trace_counter_name(i - TRACE_FIRST_COUNTER_COLUMN);
}

/* "P.F" with a valid process name P and a known field F: field index, or -1. */
static int proc_column_field(const char *column)
{
	const char *dot = strchr(column, '.');

	if (!dot || !trace_valid_proc_name(column, (size_t)(dot - column)))
		return -1;
	return trace_proc_field_lookup(dot + 1);
}

static bool is_known_column(const char *column)
{
	for (size_t i = 0; i < TRACE_FIRST_PROC_COLUMN; i++)
		if (strcmp(canonical_column(i), column) == 0)
			return true;
	return proc_column_field(column) >= 0;
}

static bool column_seen_before(const struct trace_reader *r, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (strcmp(r->column[j], r->column[i]) == 0)
			return true;
	return false;
}

/* Column @i is not what the writer puts there: say the most useful thing. */
static int fail_misplaced_column(struct trace_reader *r, size_t i, const char *expected)
{
	const char *column = r->column[i];

	if (!is_known_column(column))
		return trace_reader_fail(r, "header: unknown column '%s'", column);
	if (column_seen_before(r, i))
		return trace_reader_fail(r, "header: duplicate column '%s'", column);
	if (proc_column_field(column) >= 0)
		return trace_reader_fail(r, "header: missing column '%s'", expected);
	return trace_reader_fail(r, "header: column %zu is '%s', expected '%s'", i + 1, column,
				 expected);
}

static int check_fixed_columns(struct trace_reader *r)
{
	for (size_t i = 0; i < TRACE_FIRST_PROC_COLUMN; i++) {
		if (i >= r->ncolumns)
			return trace_reader_fail(r, "header: missing column '%s'",
						 canonical_column(i));
		if (strcmp(r->column[i], canonical_column(i)) != 0)
			return fail_misplaced_column(r, i, canonical_column(i));
	}
	return 0;
}

/* "cost_NAME_ns" with a valid term name: the length of NAME, or 0. */
static size_t cost_column_name(const char *column)
{
	const size_t pre = strlen(TRACE_COST_PREFIX), suf = strlen(TRACE_COST_SUFFIX);
	size_t len = strlen(column);

	if (len <= pre + suf || !trace_starts_with(column, TRACE_COST_PREFIX) ||
	    strcmp(column + len - suf, TRACE_COST_SUFFIX) != 0 ||
	    !trace_valid_cost_name(column + pre, len - pre - suf))
		return 0;
	return len - pre - suf;
}

/* Where the cost columns begin: the first one, or the end of the header. */
static size_t first_cost_column(const struct trace_reader *r)
{
	size_t i = TRACE_FIRST_PROC_COLUMN;

	while (i < r->ncolumns && !cost_column_name(r->column[i]))
		i++;
	return i;
}

/* The cost columns, from @first to the end: each cost_NAME_ns, distinct. */
static int read_cost_columns(struct trace_reader *r, struct trace *t, size_t first)
{
	const char *name[TRACE_MAX_COSTS];
	char buf[TRACE_MAX_COSTS][TRACE_NAME_MAX + 1];
	size_t n = r->ncolumns - first;

	if (n > TRACE_MAX_COSTS)
		return trace_reader_fail(r, "header: %zu cost columns, at most %d", n,
					 TRACE_MAX_COSTS);
	for (size_t i = 0; i < n; i++) {
		const char *column = r->column[first + i];
		size_t len = cost_column_name(column);

		if (!len)
			return trace_reader_fail(r, "header: column %zu is '%s', expected a cost "
						    "column (cost columns come last)",
						 first + i + 1, column);
		memcpy(buf[i], column + strlen(TRACE_COST_PREFIX), len);
		buf[i][len] = '\0';
		name[i] = buf[i];
	}
	if (trace_set_costs(t, n, name) != 0)
		return trace_reader_fail(r, errno == ENOMEM ? "out of memory"
							   : "header: duplicate cost column");
	return 0;
}

/*
 * The process columns: whole groups of TRACE_PROC_FIELD_COUNT, one per
 * process, fields in enum order, up to the cost columns. Fills t's process
 * names.
 */
static int read_proc_columns(struct trace_reader *r, struct trace *t, size_t end)
{
	size_t nprocs = (end - TRACE_FIRST_PROC_COLUMN + TRACE_PROC_FIELD_COUNT - 1) /
			TRACE_PROC_FIELD_COUNT;
	char(*name)[TRACE_NAME_MAX + 1];

	if (nprocs == 0)
		return 0;
	name = calloc(nprocs, sizeof *name);
	if (!name)
		return trace_reader_fail(r, "out of memory");
	/* Owned by t from here: trace_free releases it on any error below. */
	t->proc_name = name;
	t->nprocs = nprocs;
	for (size_t p = 0; p < nprocs; p++) {
		size_t first = TRACE_FIRST_PROC_COLUMN + p * TRACE_PROC_FIELD_COUNT;

		for (size_t f = 0; f < TRACE_PROC_FIELD_COUNT; f++) {
			size_t i = first + f;
			const char *column;
			size_t name_len;

			if (i >= end)
				return trace_reader_fail(
					r, "header: process '%s' has %zu of %d columns", name[p], f,
					TRACE_PROC_FIELD_COUNT);
			column = r->column[i];
			name_len = strcspn(column, ".");
			if (column[name_len] == '.' && !trace_valid_proc_name(column, name_len))
				return trace_reader_fail(
					r, "header: column %zu: '%.*s' is not a valid process name",
					i + 1, (int)name_len, column);
			if (proc_column_field(column) < 0)
				return fail_misplaced_column(r, i, "a process column");
			if (f == 0) {
				memcpy(name[p], column, name_len);
				for (size_t q = 0; q < p; q++)
					if (strcmp(name[q], name[p]) == 0)
						return trace_reader_fail(
							r, "header: duplicate column '%s'", column);
			}
			if (name_len != strlen(name[p]) || memcmp(column, name[p], name_len) != 0 ||
			    proc_column_field(column) != (int)f)
				return trace_reader_fail(r,
							 "header: column %zu is '%s', expected "
							 "'%s.%s' (process columns "
							 "come in groups of %d in field order)",
							 i + 1, column, name[p],
							 trace_proc_field_name(f),
							 TRACE_PROC_FIELD_COUNT);
		}
	}
	return 0;
}

/* The header line: every column, in the order the writer puts them. */
static int read_header(struct trace_reader *r, struct trace *t)
{
	size_t costs;

	if (!trace_starts_with(r->line, "kind,") && strcmp(r->line, "kind") != 0)
		return trace_reader_fail(r, "missing header line (expected 'kind,scan,batch,...')");
	if (trace_reader_take_header(r) < 0 || check_fixed_columns(r) < 0)
		return -1;
	costs = first_cost_column(r);
	if (read_proc_columns(r, t, costs) < 0)
		return -1;
	return read_cost_columns(r, t, costs);
}

/* Outcome lines, then the header. */
static int read_preamble(struct trace_reader *r, struct trace *t)
{
	for (;;) {
		int rc = trace_reader_line(r);

		if (rc < 0)
			return -1;
		if (rc == 0) {
			r->lineno++;
			return trace_reader_fail(r, "missing header line");
		}
		if (r->line[0] == '\0')
			return trace_reader_fail(r, "empty line");
		if (trace_starts_with(r->line, TRACE_OUTCOME_PREFIX)) {
			if (read_outcome_line(r, t) < 0)
				return -1;
			continue;
		}
		if (r->line[0] == '#')
			return trace_reader_fail(r, "unexpected comment line (only '# outcome' "
						    "lines may come before the header)");
		return read_header(r, t);
	}
}

/* ---- CSV reader: rows ---------------------------------------------------- */

static int read_kind_field(struct trace_reader *r, enum trace_row_kind *kind)
{
	const char *text = r->field[TRACE_COLUMN_KIND];
	int found = trace_find_name(trace_row_kind_names, 2, text);

	if (found < 0)
		return trace_reader_fail(r, "column kind: '%s' is not scan or batch", text);
	*kind = (enum trace_row_kind)found;
	return 0;
}

static int read_valid_field(struct trace_reader *r, bool *valid)
{
	const char *text = r->field[TRACE_COLUMN_VALID];

	if (strcmp(text, "0") != 0 && strcmp(text, "1") != 0)
		return trace_reader_fail(r, "column valid: '%s' is not 0 or 1", text);
	*valid = text[0] == '1';
	return 0;
}

/* Process @p's group of fields: all empty (absent) or all integers. */
static int read_proc_fields(struct trace_reader *r, const struct trace *t, size_t p,
			    struct trace_proc_stat *ps)
{
	size_t first = TRACE_FIRST_PROC_COLUMN + p * TRACE_PROC_FIELD_COUNT;
	size_t empty = 0;

	for (size_t f = 0; f < TRACE_PROC_FIELD_COUNT; f++)
		empty += r->field[first + f][0] == '\0';
	if (empty == TRACE_PROC_FIELD_COUNT)
		return 0;
	if (empty > 0)
		return trace_reader_fail(
			r,
			"process %s: %zu of %d fields are empty (an absent process has all empty)",
			t->proc_name[p], empty, TRACE_PROC_FIELD_COUNT);
	ps->present = true;
	for (size_t f = 0; f < TRACE_PROC_FIELD_COUNT; f++)
		if (trace_reader_int64(r, first + f, &ps->field[f]) < 0)
			return -1;
	return 0;
}

static int read_row(struct trace_reader *r, struct trace *t)
{
	enum trace_row_kind kind = TRACE_ROW_SCAN;
	struct trace_row *row;

	if (trace_reader_split_row(r) < 0 || read_kind_field(r, &kind) < 0)
		return -1;
	row = trace_append(t, kind);
	if (!row)
		return trace_reader_fail(r, "out of memory");
	if (trace_reader_uint64(r, TRACE_COLUMN_SCAN, &row->scan) < 0 ||
	    trace_reader_uint64(r, TRACE_COLUMN_BATCH, &row->batch) < 0 ||
	    trace_reader_uint64(r, TRACE_COLUMN_TIME_NS, &row->time_ns) < 0 ||
	    trace_reader_uint64(r, TRACE_COLUMN_KSMD_CPU_NS, &row->ksmd_cpu_ns) < 0 ||
	    read_valid_field(r, &row->valid) < 0)
		return -1;
	for (size_t c = 0; c < TRACE_COUNTER_COUNT; c++)
		if (trace_reader_int64(r, TRACE_FIRST_COUNTER_COLUMN + c, &row->counter[c]) < 0)
			return -1;
	for (size_t p = 0; p < t->nprocs; p++)
		if (read_proc_fields(r, t, p, &row->proc[p]) < 0)
			return -1;
	for (size_t c = 0; c < t->ncosts; c++)
		if (trace_reader_uint64(r, TRACE_FIRST_PROC_COLUMN + t->nprocs * TRACE_PROC_FIELD_COUNT + c,
					&row->cost[c]) < 0)
			return -1;
	return 0;
}

static int read_rows(struct trace_reader *r, struct trace *t)
{
	int rc;

	while ((rc = trace_reader_line(r)) == 1) {
		if (r->line[0] == '\0')
			return trace_reader_fail(r, "empty line");
		if (r->line[0] == '#')
			return trace_reader_fail(
				r, "'#' line after the header (outcome lines come before it)");
		if (read_row(r, t) < 0)
			return -1;
	}
	return rc;
}

int trace_read_csv(FILE *in, const char *name, struct trace **out, char *err, size_t errlen)
{
	struct trace_reader r = { .in = in, .name = name ? name : "-", .err = err,
				  .errlen = errlen };
	struct trace *t = NULL;

	*out = NULL;
	if (errlen > 0)
		err[0] = '\0';
	if (read_first_line(&r, &t) < 0)
		goto fail;
	if (read_preamble(&r, t) < 0 || read_rows(&r, t) < 0)
		goto fail;
	trace_reader_release(&r);
	*out = t;
	return 0;

fail:
	trace_free(t);
	trace_reader_release(&r);
	return -1;
}
