/*
 * trace.c - the in-memory trace, its name tables, its CSV and JSON writers and
 * its strict CSV reader.
 *
 * A trace is a flat array of rows (each with its own array of per-process
 * stats) and an array of event outcomes, grown by doubling. The CSV format is
 * line-oriented: a first line naming the format, its version and the run
 * (values percent-escaped so they never hold a space), one "# outcome" line
 * per event outcome, a header naming every column, then one line per row; an
 * absent process's fields are empty. The reader accepts exactly what the
 * writer produces (give or take "\r\n" line endings and a missing final
 * newline), so a trace survives a round trip unchanged, and it stops at the
 * first thing wrong with "NAME:LINE: what" rather than guessing. Counters are
 * int64 in memory and written as signed decimals, so any value round-trips.
 * Unset descriptive fields (workload, kernel, detector) are written empty and
 * read back as NULL; trace_equal treats NULL and "" alike. This file knows
 * nothing of where the numbers came from, nor of comparing two traces beyond
 * plain equality.
 */
#include "trace.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* ---- name tables --------------------------------------------------------- */

static const char *const counter_names[TRACE_COUNTER_COUNT] = {
	[TRACE_PAGES_SHARED] = "pages_shared",
	[TRACE_PAGES_SHARING] = "pages_sharing",
	[TRACE_PAGES_UNSHARED] = "pages_unshared",
	[TRACE_PAGES_VOLATILE] = "pages_volatile",
	[TRACE_PAGES_SCANNED] = "pages_scanned",
	[TRACE_PAGES_SKIPPED] = "pages_skipped",
	[TRACE_FULL_SCANS] = "full_scans",
	[TRACE_STABLE_NODE_CHAINS] = "stable_node_chains",
	[TRACE_STABLE_NODE_DUPS] = "stable_node_dups",
	[TRACE_KSM_ZERO_PAGES] = "ksm_zero_pages",
	[TRACE_GENERAL_PROFIT] = "general_profit",
	[TRACE_PAGES_TO_SCAN] = "pages_to_scan",
};

static const char *const proc_field_names[TRACE_PROC_FIELD_COUNT] = {
	[TRACE_KSM_RMAP_ITEMS] = "ksm_rmap_items",
	[TRACE_KSM_ZERO_PAGES_PROC] = "ksm_zero_pages",
	[TRACE_KSM_MERGING_PAGES] = "ksm_merging_pages",
	[TRACE_KSM_PROCESS_PROFIT] = "ksm_process_profit",
	[TRACE_KSM_MERGE_ANY] = "ksm_merge_any",
	[TRACE_KSM_MERGEABLE] = "ksm_mergeable",
};

/* The CSV columns before the counters, in order. */
enum fixed_column {
	COLUMN_KIND,
	COLUMN_SCAN,
	COLUMN_BATCH,
	COLUMN_TIME_NS,
	COLUMN_KSMD_CPU_NS,
	COLUMN_VALID,
	FIXED_COLUMN_COUNT
};

static const char *const fixed_column_names[FIXED_COLUMN_COUNT] = {
	[COLUMN_KIND] = "kind",
	[COLUMN_SCAN] = "scan",
	[COLUMN_BATCH] = "batch",
	[COLUMN_TIME_NS] = "time_ns",
	[COLUMN_KSMD_CPU_NS] = "ksmd_cpu_ns",
	[COLUMN_VALID] = "valid",
};

/* Index of the first counter column and of the first process column. */
#define FIRST_COUNTER_COLUMN ((size_t)FIXED_COLUMN_COUNT)
#define FIRST_PROC_COLUMN (FIRST_COUNTER_COLUMN + TRACE_COUNTER_COUNT)

static const char *const row_kind_names[] = {
	[TRACE_ROW_SCAN] = "scan",
	[TRACE_ROW_BATCH] = "batch",
};

/* Errors a knob or run store plausibly answers, written by name. */
static const struct errno_name {
	int number;
	const char *name;
} errno_names[] = {
	{ EINVAL, "EINVAL" }, { EBUSY, "EBUSY" },   { EPERM, "EPERM" },
	{ ENOENT, "ENOENT" }, { ENOMEM, "ENOMEM" }, { EAGAIN, "EAGAIN" },
};

/* The keys of the first line, in the order they are written. */
enum info_key { INFO_SOURCE, INFO_KERNEL, INFO_DETECTOR, INFO_TIME, INFO_WORKLOAD, INFO_KEY_COUNT };

static const char *const info_key_names[INFO_KEY_COUNT] = {
	[INFO_SOURCE] = "source",     [INFO_KERNEL] = "kernel", [INFO_DETECTOR] = "detector",
	[INFO_TIME] = "time",         [INFO_WORKLOAD] = "workload",
};

#define TRACE_MAGIC "# ksmkit-trace "
#define OUTCOME_PREFIX "# outcome "

const char *trace_counter_name(enum trace_counter c)
{
	if ((unsigned)c >= TRACE_COUNTER_COUNT)
		return NULL;
	return counter_names[c];
}

const char *trace_proc_field_name(enum trace_proc_field f)
{
	if ((unsigned)f >= TRACE_PROC_FIELD_COUNT)
		return NULL;
	return proc_field_names[f];
}

static int find_name(const char *const *names, size_t count, const char *name)
{
	if (!name)
		return -1;
	for (size_t i = 0; i < count; i++)
		if (strcmp(names[i], name) == 0)
			return (int)i;
	return -1;
}

int trace_counter_lookup(const char *name)
{
	return find_name(counter_names, TRACE_COUNTER_COUNT, name);
}

int trace_proc_field_lookup(const char *name)
{
	return find_name(proc_field_names, TRACE_PROC_FIELD_COUNT, name);
}

/* "EBUSY" for EBUSY, NULL for a number without a name here. */
static const char *errno_to_name(int number)
{
	for (size_t i = 0; i < sizeof errno_names / sizeof errno_names[0]; i++)
		if (errno_names[i].number == number)
			return errno_names[i].name;
	return NULL;
}

static int errno_from_name(const char *name)
{
	for (size_t i = 0; i < sizeof errno_names / sizeof errno_names[0]; i++)
		if (strcmp(errno_names[i].name, name) == 0)
			return errno_names[i].number;
	return -1;
}

/* ---- building a trace ---------------------------------------------------- */

static bool is_ascii_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/*
 * A process name is 1..TRACE_NAME_MAX bytes of [A-Za-z0-9_-]: it then needs
 * no escaping in a CSV column name, nor in a JSON key.
 */
static bool is_valid_proc_name(const char *name, size_t len)
{
	if (len == 0 || len > TRACE_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!is_ascii_alnum(name[i]) && name[i] != '_' && name[i] != '-')
			return false;
	return true;
}

/* Copy validated, distinct process names into @t, which has none yet. */
static int set_processes(struct trace *t, size_t nprocs, const char *const *names)
{
	char(*copy)[TRACE_NAME_MAX + 1];

	assert(t->nprocs == 0 && t->nrows == 0);
	if (nprocs == 0)
		return 0;
	copy = calloc(nprocs, sizeof *copy);
	if (!copy)
		return -1;
	for (size_t i = 0; i < nprocs; i++) {
		size_t len = strnlen(names[i], TRACE_NAME_MAX + 1);

		if (!is_valid_proc_name(names[i], len))
			goto invalid;
		for (size_t j = 0; j < i; j++)
			if (strcmp(copy[j], names[i]) == 0)
				goto invalid;
		memcpy(copy[i], names[i], len);
	}
	t->proc_name = copy;
	t->nprocs = nprocs;
	return 0;

invalid:
	free(copy);
	errno = EINVAL;
	return -1;
}

struct trace *trace_new(const char *source, size_t nprocs, const char *const *names)
{
	struct trace *t;
	int saved_errno;

	assert(source && (nprocs == 0 || names));
	if (strlen(source) >= sizeof t->source) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	strcpy(t->source, source);
	if (set_processes(t, nprocs, names) < 0)
		goto fail;
	return t;

fail:
	saved_errno = errno;
	free(t);
	errno = saved_errno;
	return NULL;
}

/* A copy of @s in *@copy (NULL stays NULL). */
static int dup_optional(const char *s, char **copy)
{
	*copy = NULL;
	if (!s)
		return 0;
	*copy = strdup(s);
	return *copy ? 0 : -1;
}

int trace_set_info(struct trace *t, const char *workload, const char *kernel,
		   const char *detector, bool time_simulated)
{
	char *new_workload, *new_kernel = NULL, *new_detector = NULL;

	/* All or nothing: the trace is untouched when a copy fails. */
	if (dup_optional(workload, &new_workload) < 0)
		goto fail;
	if (dup_optional(kernel, &new_kernel) < 0)
		goto fail_kernel;
	if (dup_optional(detector, &new_detector) < 0)
		goto fail_detector;
	free(t->workload);
	free(t->kernel);
	free(t->detector);
	t->workload = new_workload;
	t->kernel = new_kernel;
	t->detector = new_detector;
	t->time_simulated = time_simulated;
	return 0;

fail_detector:
	free(new_kernel);
fail_kernel:
	free(new_workload);
fail:
	errno = ENOMEM;
	return -1;
}

/*
 * @array (holding *@cap elements of @size bytes) resized to twice the room,
 * or NULL with @array untouched when that cannot be had.
 */
static void *grow_array(void *array, size_t *cap, size_t size)
{
	size_t new_cap = *cap ? *cap * 2 : 16;
	void *grown;

	if (new_cap < *cap || new_cap > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	grown = realloc(array, new_cap * size);
	if (grown)
		*cap = new_cap;
	return grown;
}

struct trace_row *trace_append(struct trace *t, enum trace_row_kind kind)
{
	struct trace_proc_stat *proc = NULL;
	struct trace_row *row;

	assert(kind == TRACE_ROW_SCAN || kind == TRACE_ROW_BATCH);
	if (t->nprocs > 0) {
		proc = calloc(t->nprocs, sizeof *proc);
		if (!proc)
			return NULL;
	}
	if (t->nrows == t->rows_cap) {
		struct trace_row *grown = grow_array(t->row, &t->rows_cap, sizeof *t->row);

		if (!grown) {
			free(proc);
			return NULL;
		}
		t->row = grown;
	}
	row = &t->row[t->nrows++];
	memset(row, 0, sizeof *row);
	row->kind = kind;
	row->valid = true;
	row->proc = proc;
	return row;
}

int trace_add_outcome(struct trace *t, uint64_t scan, const char *event, int error)
{
	struct trace_outcome *outcome;
	size_t len = strlen(event);

	assert(error >= 0);
	if (len > TRACE_NAME_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (t->noutcomes == t->outcomes_cap) {
		struct trace_outcome *grown =
			grow_array(t->outcome, &t->outcomes_cap, sizeof *t->outcome);

		if (!grown)
			return -1;
		t->outcome = grown;
	}
	outcome = &t->outcome[t->noutcomes++];
	memset(outcome, 0, sizeof *outcome);
	outcome->scan = scan;
	memcpy(outcome->event, event, len);
	outcome->error = error;
	return 0;
}

void trace_free(struct trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nrows; i++)
		free(t->row[i].proc);
	free(t->row);
	free(t->outcome);
	free(t->proc_name);
	free(t->workload);
	free(t->kernel);
	free(t->detector);
	free(t);
}

/* ---- equality ------------------------------------------------------------ */

/* An unset descriptive field reads back from CSV as NULL: same as "". */
static bool same_text(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* An absent process's fields are not written, so they do not count. */
static bool same_proc_stat(const struct trace_proc_stat *a, const struct trace_proc_stat *b)
{
	if (a->present != b->present)
		return false;
	if (!a->present)
		return true;
	for (size_t f = 0; f < TRACE_PROC_FIELD_COUNT; f++)
		if (a->field[f] != b->field[f])
			return false;
	return true;
}

static bool same_row(const struct trace_row *a, const struct trace_row *b, size_t nprocs)
{
	if (a->kind != b->kind || a->scan != b->scan || a->batch != b->batch ||
	    a->time_ns != b->time_ns || a->ksmd_cpu_ns != b->ksmd_cpu_ns || a->valid != b->valid)
		return false;
	for (size_t c = 0; c < TRACE_COUNTER_COUNT; c++)
		if (a->counter[c] != b->counter[c])
			return false;
	for (size_t p = 0; p < nprocs; p++)
		if (!same_proc_stat(&a->proc[p], &b->proc[p]))
			return false;
	return true;
}

static bool same_outcome(const struct trace_outcome *a, const struct trace_outcome *b)
{
	return a->scan == b->scan && strcmp(a->event, b->event) == 0 && a->error == b->error;
}

static bool same_info(const struct trace *a, const struct trace *b)
{
	return strcmp(a->source, b->source) == 0 && same_text(a->workload, b->workload) &&
	       same_text(a->kernel, b->kernel) && same_text(a->detector, b->detector) &&
	       a->time_simulated == b->time_simulated;
}

bool trace_equal(const struct trace *a, const struct trace *b)
{
	if (!same_info(a, b) || a->nprocs != b->nprocs || a->nrows != b->nrows ||
	    a->noutcomes != b->noutcomes)
		return false;
	for (size_t p = 0; p < a->nprocs; p++)
		if (strcmp(a->proc_name[p], b->proc_name[p]) != 0)
			return false;
	for (size_t i = 0; i < a->nrows; i++)
		if (!same_row(&a->row[i], &b->row[i], a->nprocs))
			return false;
	for (size_t i = 0; i < a->noutcomes; i++)
		if (!same_outcome(&a->outcome[i], &b->outcome[i]))
			return false;
	return true;
}

/* ---- checked output ------------------------------------------------------ */

/*
 * fprintf that reports failure as -1 with errno set (EIO when the stream
 * failed without saying why, as a stream already in error may).
 */
__attribute__((format(printf, 2, 3))) static int put(FILE *out, const char *fmt, ...)
{
	int saved_errno = errno;
	va_list ap;
	int n;

	errno = 0;
	va_start(ap, fmt);
	n = vfprintf(out, fmt, ap);
	va_end(ap);
	if (n < 0) {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	errno = saved_errno;
	return 0;
}

static int put_char(FILE *out, char c)
{
	return put(out, "%c", c);
}

/*
 * Flush, so that an error still sitting in the buffer (a full disk) is
 * reported by the writer rather than lost at fclose.
 */
static int finish_output(FILE *out)
{
	int saved_errno = errno;

	errno = 0;
	if (fflush(out) == EOF || ferror(out)) {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	errno = saved_errno;
	return 0;
}

/* ---- CSV writer ---------------------------------------------------------- */

/* Bytes a first-line or outcome value must not hold raw. */
static bool needs_percent_escape(unsigned char c)
{
	return c <= ' ' || c >= 0x7f || c == '%' || c == ',' || c == '=' || c == '"';
}

static int put_percent_escaped(FILE *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		int rc = needs_percent_escape(*p) ? put(out, "%%%02X", *p) : put_char(out, (char)*p);

		if (rc < 0)
			return -1;
	}
	return 0;
}

/* "0", "EBUSY", or the number: the same token in CSV and JSON. */
static int put_error_token(FILE *out, int error)
{
	const char *name = errno_to_name(error);

	return name ? put(out, "%s", name) : put(out, "%d", error);
}

static int write_csv_first_line(const struct trace *t, FILE *out)
{
	if (put(out, TRACE_MAGIC "%d source=", TRACE_FORMAT_VERSION) < 0 ||
	    put_percent_escaped(out, t->source) < 0 || put(out, " kernel=") < 0 ||
	    put_percent_escaped(out, t->kernel) < 0 || put(out, " detector=") < 0 ||
	    put_percent_escaped(out, t->detector) < 0 ||
	    put(out, " time=%s workload=", t->time_simulated ? "simulated" : "measured") < 0 ||
	    put_percent_escaped(out, t->workload) < 0 || put(out, "\n") < 0)
		return -1;
	return 0;
}

static int write_csv_outcome(const struct trace_outcome *o, FILE *out)
{
	if (put(out, OUTCOME_PREFIX "scan=%" PRIu64 " event=", o->scan) < 0 ||
	    put_percent_escaped(out, o->event) < 0 || put(out, " error=") < 0 ||
	    put_error_token(out, o->error) < 0 || put(out, "\n") < 0)
		return -1;
	return 0;
}

static int write_csv_header(const struct trace *t, FILE *out)
{
	for (size_t i = 0; i < FIXED_COLUMN_COUNT; i++)
		if (put(out, "%s,", fixed_column_names[i]) < 0)
			return -1;
	for (size_t c = 0; c < TRACE_COUNTER_COUNT; c++)
		if (put(out, c ? ",%s" : "%s", counter_names[c]) < 0)
			return -1;
	for (size_t p = 0; p < t->nprocs; p++)
		for (size_t f = 0; f < TRACE_PROC_FIELD_COUNT; f++)
			if (put(out, ",%s.%s", t->proc_name[p], proc_field_names[f]) < 0)
				return -1;
	return put(out, "\n");
}

static int write_csv_proc(const struct trace_proc_stat *ps, FILE *out)
{
	for (size_t f = 0; f < TRACE_PROC_FIELD_COUNT; f++) {
		int rc = ps->present ? put(out, ",%" PRId64, ps->field[f]) : put_char(out, ',');

		if (rc < 0)
			return -1;
	}
	return 0;
}

static int write_csv_row(const struct trace *t, const struct trace_row *row, FILE *out)
{
	if (put(out, "%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%d",
		row_kind_names[row->kind], row->scan, row->batch, row->time_ns, row->ksmd_cpu_ns,
		row->valid ? 1 : 0) < 0)
		return -1;
	for (size_t c = 0; c < TRACE_COUNTER_COUNT; c++)
		if (put(out, ",%" PRId64, row->counter[c]) < 0)
			return -1;
	for (size_t p = 0; p < t->nprocs; p++)
		if (write_csv_proc(&row->proc[p], out) < 0)
			return -1;
	return put(out, "\n");
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
	return finish_output(out);
}

/* ---- JSON writer --------------------------------------------------------- */

/*
 * Length of the well-formed UTF-8 sequence starting at @p (1 for ASCII), or 0
 * when the bytes there are not one. Stops at the string's NUL.
 */
static size_t utf8_sequence_length(const unsigned char *p)
{
	unsigned char second_min = 0x80, second_max = 0xBF;
	size_t len;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xC2 && p[0] <= 0xDF) {
		len = 2;
	} else if (p[0] >= 0xE0 && p[0] <= 0xEF) {
		len = 3;
		if (p[0] == 0xE0)
			second_min = 0xA0; /* overlong */
		if (p[0] == 0xED)
			second_max = 0x9F; /* surrogates */
	} else if (p[0] >= 0xF0 && p[0] <= 0xF4) {
		len = 4;
		if (p[0] == 0xF0)
			second_min = 0x90; /* overlong */
		if (p[0] == 0xF4)
			second_max = 0x8F; /* beyond U+10FFFF */
	} else {
		return 0;
	}
	if (p[1] < second_min || p[1] > second_max)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((p[i] & 0xC0) != 0x80)
			return 0;
	return len;
}

/*
 * @s as a JSON string, or null for NULL. Control characters become \u00XX;
 * bytes that are not UTF-8 (a file name can hold anything) become U+FFFD, so
 * the output is always valid JSON.
 */
static int put_json_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!s)
		return put(out, "null");
	if (put_char(out, '"') < 0)
		return -1;
	while (*p) {
		size_t len = utf8_sequence_length(p);
		int rc;

		if (len == 0) {
			rc = put(out, "\\ufffd");
			len = 1;
		} else if (*p == '"' || *p == '\\') {
			rc = put(out, "\\%c", *p);
		} else if (*p < 0x20 || *p == 0x7f) {
			rc = put(out, "\\u%04x", *p);
		} else {
			rc = put(out, "%.*s", (int)len, (const char *)p);
		}
		if (rc < 0)
			return -1;
		p += len;
	}
	return put_char(out, '"');
}

static int write_json_info(const struct trace *t, FILE *out)
{
	if (put(out, "{\"format\":\"ksmkit-trace\",\"version\":%d,\"source\":", TRACE_FORMAT_VERSION) < 0 ||
	    put_json_string(out, t->source) < 0 || put(out, ",\"kernel\":") < 0 ||
	    put_json_string(out, t->kernel) < 0 || put(out, ",\"detector\":") < 0 ||
	    put_json_string(out, t->detector) < 0 || put(out, ",\"workload\":") < 0 ||
	    put_json_string(out, t->workload) < 0 ||
	    put(out, ",\"time\":\"%s\",\n\"processes\":[", t->time_simulated ? "simulated" : "measured") < 0)
		return -1;
	for (size_t p = 0; p < t->nprocs; p++)
		if ((p && put_char(out, ',') < 0) || put_json_string(out, t->proc_name[p]) < 0)
			return -1;
	return put(out, "],\n");
}

static int write_json_outcomes(const struct trace *t, FILE *out)
{
	if (put(out, "\"outcomes\":[") < 0)
		return -1;
	for (size_t i = 0; i < t->noutcomes; i++) {
		const struct trace_outcome *o = &t->outcome[i];

		if (put(out, "%s{\"scan\":%" PRIu64 ",\"event\":", i ? ",\n" : "\n", o->scan) < 0 ||
		    put_json_string(out, o->event) < 0 || put(out, ",\"error\":\"") < 0 ||
		    put_error_token(out, o->error) < 0 || put(out, "\"}") < 0)
			return -1;
	}
	return put(out, "],\n");
}

static int write_json_proc(const char *name, const struct trace_proc_stat *ps, bool first, FILE *out)
{
	if ((!first && put_char(out, ',') < 0) || put_json_string(out, name) < 0 || put_char(out, ':') < 0)
		return -1;
	if (!ps->present)
		return put(out, "null");
	for (size_t f = 0; f < TRACE_PROC_FIELD_COUNT; f++)
		if (put(out, "%c\"%s\":%" PRId64, f ? ',' : '{', proc_field_names[f], ps->field[f]) < 0)
			return -1;
	return put_char(out, '}');
}

static int write_json_row(const struct trace *t, const struct trace_row *row, FILE *out)
{
	if (put(out,
		"{\"kind\":\"%s\",\"scan\":%" PRIu64 ",\"batch\":%" PRIu64 ",\"time_ns\":%" PRIu64
		",\"ksmd_cpu_ns\":%" PRIu64 ",\"valid\":%s,\"counters\":",
		row_kind_names[row->kind], row->scan, row->batch, row->time_ns, row->ksmd_cpu_ns,
		row->valid ? "true" : "false") < 0)
		return -1;
	for (size_t c = 0; c < TRACE_COUNTER_COUNT; c++)
		if (put(out, "%c\"%s\":%" PRId64, c ? ',' : '{', counter_names[c], row->counter[c]) < 0)
			return -1;
	if (put(out, "},\"processes\":{") < 0)
		return -1;
	for (size_t p = 0; p < t->nprocs; p++)
		if (write_json_proc(t->proc_name[p], &row->proc[p], p == 0, out) < 0)
			return -1;
	return put(out, "}}");
}

int trace_write_json(const struct trace *t, FILE *out)
{
	if (write_json_info(t, out) < 0 || write_json_outcomes(t, out) < 0 || put(out, "\"rows\":[") < 0)
		return -1;
	for (size_t i = 0; i < t->nrows; i++)
		if (put(out, i ? ",\n" : "\n") < 0 || write_json_row(t, &t->row[i], out) < 0)
			return -1;
	if (put(out, "]}\n") < 0)
		return -1;
	return finish_output(out);
}

/* ---- CSV reader: lines, fields, numbers ---------------------------------- */

struct csv_reader {
	FILE *in;
	const char *name;  /* for messages */
	char *err;
	size_t errlen;
	char *line;        /* the current line, line ending removed */
	size_t line_cap;
	size_t lineno;     /* of the current line, from 1 */
	char *header;      /* a copy of the header line, split into column[] */
	char **column;     /* ncolumns names */
	char **field;      /* the current row split, ncolumns entries */
	size_t ncolumns;
};

int trace_vfail_at(char *err, size_t errlen, const char *name, size_t lineno, const char *fmt,
		   va_list ap)
{
	int n;

	if (errlen == 0)
		return -1;
	n = snprintf(err, errlen, "%s:%zu: ", name, lineno);
	if (n >= 0 && (size_t)n < errlen)
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	return -1;
}

__attribute__((format(printf, 2, 3))) static int reader_fail(struct csv_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	trace_vfail_at(r->err, r->errlen, r->name, r->lineno, fmt, ap);
	va_end(ap);
	return -1;
}

static void reader_release(struct csv_reader *r)
{
	free(r->line);
	free(r->header);
	free(r->column);
	free(r->field);
}

/* 1: a line is in r->line; 0: end of file; -1: read error (message set). */
static int read_line(struct csv_reader *r)
{
	ssize_t n;

	errno = 0;
	n = getline(&r->line, &r->line_cap, r->in);
	if (n < 0) {
		if (ferror(r->in) || errno == ENOMEM) {
			r->lineno++;
			return reader_fail(r, "read error: %s", strerror(errno ? errno : EIO));
		}
		return 0;
	}
	r->lineno++;
	if (memchr(r->line, '\0', (size_t)n))
		return reader_fail(r, "NUL byte in line");
	if (n > 0 && r->line[n - 1] == '\n')
		r->line[--n] = '\0';
	if (n > 0 && r->line[n - 1] == '\r')
		r->line[--n] = '\0';
	return 1;
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static size_t count_fields(const char *s, char separator)
{
	size_t n = 1;

	for (; *s; s++)
		n += *s == separator;
	return n;
}

/* Cut @s at every @separator, in place, into exactly @n pieces. */
static void split_fields(char *s, char separator, char **piece, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *end = strchr(s, separator);

		piece[i] = s;
		if (end) {
			*end = '\0';
			s = end + 1;
		}
	}
}

enum number_status { NUMBER_OK, NUMBER_MALFORMED, NUMBER_OUT_OF_RANGE };

/* One or more decimal digits and nothing else, at most @limit. */
static enum number_status parse_digits(const char *s, uint64_t limit, uint64_t *value)
{
	uint64_t v = 0;

	if (*s == '\0')
		return NUMBER_MALFORMED;
	for (; *s; s++) {
		unsigned digit;

		if (*s < '0' || *s > '9')
			return NUMBER_MALFORMED;
		digit = (unsigned)(*s - '0');
		if (v > (limit - digit) / 10)
			goto out_of_range;
		v = v * 10 + digit;
	}
	*value = v;
	return NUMBER_OK;

out_of_range:
	/* Still malformed if a non-digit follows the overflow. */
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return NUMBER_MALFORMED;
	return NUMBER_OUT_OF_RANGE;
}

static enum number_status parse_int64(const char *s, int64_t *value)
{
	bool negative = *s == '-';
	uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	uint64_t magnitude = 0;
	enum number_status status = parse_digits(s + negative, limit, &magnitude);

	if (status != NUMBER_OK)
		return status;
	if (!negative)
		*value = (int64_t)magnitude;
	else if (magnitude == (uint64_t)INT64_MAX + 1)
		*value = INT64_MIN;
	else
		*value = -(int64_t)magnitude;
	return NUMBER_OK;
}

static int read_uint64_field(struct csv_reader *r, size_t column, uint64_t *value)
{
	const char *text = r->field[column];

	switch (parse_digits(text, UINT64_MAX, value)) {
	case NUMBER_OK:
		return 0;
	case NUMBER_OUT_OF_RANGE:
		return reader_fail(r, "column %s: '%s' is out of range", r->column[column], text);
	case NUMBER_MALFORMED:
	default:
		return reader_fail(r, "column %s: '%s' is not an unsigned integer", r->column[column], text);
	}
}

static int read_int64_field(struct csv_reader *r, size_t column, int64_t *value)
{
	const char *text = r->field[column];

	switch (parse_int64(text, value)) {
	case NUMBER_OK:
		return 0;
	case NUMBER_OUT_OF_RANGE:
		return reader_fail(r, "column %s: '%s' is out of range", r->column[column], text);
	case NUMBER_MALFORMED:
	default:
		return reader_fail(r, "column %s: '%s' is not an integer", r->column[column], text);
	}
}

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
static int check_percent_escaped(struct csv_reader *r, const char *context, const char *what,
				 const char *s)
{
	for (const char *p = s; *p; p++) {
		if (*p == '%') {
			if (hex_digit_value(p[1]) < 0 || hex_digit_value(p[2]) < 0 ||
			    (p[1] == '0' && p[2] == '0'))
				return reader_fail(r, "%s%s: bad escape in '%s'", context, what, s);
			p += 2;
		} else if (needs_percent_escape((unsigned char)*p)) {
			return reader_fail(r, "%s%s: byte 0x%02X must be escaped in '%s'", context,
					   what, (unsigned char)*p, s);
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

static int decode_value(struct csv_reader *r, const char *context, const char *what, char *value)
{
	if (check_percent_escaped(r, context, what, value) < 0)
		return -1;
	percent_decode(value);
	return 0;
}

/* ---- CSV reader: the lines before the rows ------------------------------- */

static int fail_not_a_trace(struct csv_reader *r)
{
	return reader_fail(r, "not a ksmkit trace (expected '" TRACE_MAGIC "%d ...')", TRACE_FORMAT_VERSION);
}

/*
 * The version token of the first line, which starts with TRACE_MAGIC: what
 * follows it, or NULL (message set). Only this version is read: the columns
 * of another one may mean something else.
 */
static char *check_version(struct csv_reader *r)
{
	char *version = r->line + strlen(TRACE_MAGIC);
	size_t len = strcspn(version, " ");
	uint64_t number = 0;
	char saved = version[len];
	enum number_status status;

	version[len] = '\0';
	status = parse_digits(version, UINT64_MAX, &number);
	version[len] = saved;
	if (status == NUMBER_MALFORMED) {
		fail_not_a_trace(r);
		return NULL;
	}
	if (status != NUMBER_OK || number != TRACE_FORMAT_VERSION) {
		reader_fail(r, "unsupported trace format version %.*s (this ksmkit reads %d)", (int)len,
			    version, TRACE_FORMAT_VERSION);
		return NULL;
	}
	return version + len;
}

/* Split the key=value tokens after the version into @value[INFO_*]. */
static int read_info_values(struct csv_reader *r, char *rest, char *value[INFO_KEY_COUNT])
{
	char *cursor = *rest ? rest + 1 : NULL; /* past the space after the version */
	char *token;

	while ((token = strsep(&cursor, " ")) != NULL) {
		char *eq = strchr(token, '=');
		int key;

		if (!eq)
			return reader_fail(r, "first line: '%s' is not key=value", token);
		*eq = '\0';
		key = find_name(info_key_names, INFO_KEY_COUNT, token);
		if (key < 0)
			return reader_fail(r, "first line: unknown key '%s'", token);
		if (value[key])
			return reader_fail(r, "first line: duplicate key '%s'", token);
		if (decode_value(r, "first line: ", info_key_names[key], eq + 1) < 0)
			return -1;
		value[key] = eq + 1;
	}
	for (size_t k = 0; k < INFO_KEY_COUNT; k++)
		if (!value[k])
			return reader_fail(r, "first line: missing key '%s'", info_key_names[k]);
	return 0;
}

static const char *empty_to_null(const char *s)
{
	return *s ? s : NULL;
}

/* Line 1: the format, its version and the run's description. */
static int read_first_line(struct csv_reader *r, struct trace **out)
{
	char *value[INFO_KEY_COUNT] = { NULL };
	bool time_simulated;
	char *rest;
	struct trace *t;
	int rc = read_line(r);

	if (rc < 0)
		return -1;
	if (rc == 0) {
		r->lineno = 1;
		return fail_not_a_trace(r);
	}
	if (!starts_with(r->line, TRACE_MAGIC))
		return fail_not_a_trace(r);
	rest = check_version(r);
	if (!rest || read_info_values(r, rest, value) < 0)
		return -1;
	if (strcmp(value[INFO_TIME], "simulated") != 0 && strcmp(value[INFO_TIME], "measured") != 0)
		return reader_fail(r, "first line: time: '%s' is not simulated or measured", value[INFO_TIME]);
	time_simulated = strcmp(value[INFO_TIME], "simulated") == 0;
	if (strlen(value[INFO_SOURCE]) >= sizeof t->source)
		return reader_fail(r, "first line: source: '%s' is too long", value[INFO_SOURCE]);
	t = trace_new(value[INFO_SOURCE], 0, NULL);
	if (!t)
		return reader_fail(r, "out of memory");
	if (trace_set_info(t, empty_to_null(value[INFO_WORKLOAD]), empty_to_null(value[INFO_KERNEL]),
			   empty_to_null(value[INFO_DETECTOR]), time_simulated) < 0) {
		trace_free(t);
		return reader_fail(r, "out of memory");
	}
	*out = t;
	return 0;
}

/* The error token of an outcome line: 0, an errno name, or a positive number. */
static int parse_error_token(const char *token, int *error)
{
	uint64_t number = 0;

	if (parse_digits(token, INT32_MAX, &number) == NUMBER_OK) {
		*error = (int)number;
		return 0;
	}
	*error = errno_from_name(token);
	return *error < 0 ? -1 : 0;
}

/* "# outcome scan=N event=NAME error=E", exactly in that order. */
static int read_outcome_line(struct csv_reader *r, struct trace *t)
{
	static const char *const keys[] = { "scan=", "event=", "error=" };
	char *token[3];
	uint64_t scan = 0;
	int error;
	char *rest = r->line + strlen(OUTCOME_PREFIX);

	if (count_fields(rest, ' ') != 3)
		goto malformed;
	split_fields(rest, ' ', token, 3);
	for (size_t i = 0; i < 3; i++) {
		if (!starts_with(token[i], keys[i]))
			goto malformed;
		token[i] += strlen(keys[i]);
	}
	switch (parse_digits(token[0], UINT64_MAX, &scan)) {
	case NUMBER_OK:
		break;
	case NUMBER_OUT_OF_RANGE:
		return reader_fail(r, "outcome: scan: '%s' is out of range", token[0]);
	default:
		return reader_fail(r, "outcome: scan: '%s' is not an unsigned integer", token[0]);
	}
	if (decode_value(r, "outcome: ", "event", token[1]) < 0)
		return -1;
	if (strlen(token[1]) > TRACE_NAME_MAX)
		return reader_fail(r, "outcome: event: name longer than %d bytes", TRACE_NAME_MAX);
	if (parse_error_token(token[2], &error) < 0)
		return reader_fail(r, "outcome: error: '%s' is not 0, an errno name or a number", token[2]);
	if (trace_add_outcome(t, scan, token[1], error) < 0)
		return reader_fail(r, "out of memory");
	return 0;

malformed:
	return reader_fail(r, "outcome: expected '" OUTCOME_PREFIX "scan=N event=NAME error=E'");
}

/* The name the writer gives column @i of the fixed and counter columns. */
static const char *canonical_column(size_t i)
{
	return i < FIRST_COUNTER_COLUMN ? fixed_column_names[i] : counter_names[i - FIRST_COUNTER_COLUMN];
}

/* "P.F" with a valid process name P and a known field F: field index, or -1. */
static int proc_column_field(const char *column)
{
	const char *dot = strchr(column, '.');

	if (!dot || !is_valid_proc_name(column, (size_t)(dot - column)))
		return -1;
	return trace_proc_field_lookup(dot + 1);
}

static bool is_known_column(const char *column)
{
	for (size_t i = 0; i < FIRST_PROC_COLUMN; i++)
		if (strcmp(canonical_column(i), column) == 0)
			return true;
	return proc_column_field(column) >= 0;
}

static bool column_seen_before(const struct csv_reader *r, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (strcmp(r->column[j], r->column[i]) == 0)
			return true;
	return false;
}

/* Column @i is not what the writer puts there: say the most useful thing. */
static int fail_misplaced_column(struct csv_reader *r, size_t i, const char *expected)
{
	const char *column = r->column[i];

	if (!is_known_column(column))
		return reader_fail(r, "header: unknown column '%s'", column);
	if (column_seen_before(r, i))
		return reader_fail(r, "header: duplicate column '%s'", column);
	if (proc_column_field(column) >= 0)
		return reader_fail(r, "header: missing column '%s'", expected);
	return reader_fail(r, "header: column %zu is '%s', expected '%s'", i + 1, column, expected);
}

static int check_fixed_columns(struct csv_reader *r)
{
	for (size_t i = 0; i < FIRST_PROC_COLUMN; i++) {
		if (i >= r->ncolumns)
			return reader_fail(r, "header: missing column '%s'", canonical_column(i));
		if (strcmp(r->column[i], canonical_column(i)) != 0)
			return fail_misplaced_column(r, i, canonical_column(i));
	}
	return 0;
}

/*
 * The process columns: whole groups of TRACE_PROC_FIELD_COUNT, one per
 * process, fields in enum order. Fills t's process names.
 */
static int read_proc_columns(struct csv_reader *r, struct trace *t)
{
	size_t nprocs = (r->ncolumns - FIRST_PROC_COLUMN + TRACE_PROC_FIELD_COUNT - 1) / TRACE_PROC_FIELD_COUNT;
	char(*name)[TRACE_NAME_MAX + 1];

	if (nprocs == 0)
		return 0;
	name = calloc(nprocs, sizeof *name);
	if (!name)
		return reader_fail(r, "out of memory");
	/* Owned by t from here: trace_free releases it on any error below. */
	t->proc_name = name;
	t->nprocs = nprocs;
	for (size_t p = 0; p < nprocs; p++) {
		size_t first = FIRST_PROC_COLUMN + p * TRACE_PROC_FIELD_COUNT;

		for (size_t f = 0; f < TRACE_PROC_FIELD_COUNT; f++) {
			size_t i = first + f;
			const char *column;
			size_t name_len;

			if (i >= r->ncolumns)
				return reader_fail(r, "header: process '%s' has %zu of %d columns", name[p], f,
						   TRACE_PROC_FIELD_COUNT);
			column = r->column[i];
			name_len = strcspn(column, ".");
			if (column[name_len] == '.' && !is_valid_proc_name(column, name_len))
				return reader_fail(r, "header: column %zu: '%.*s' is not a valid process name",
						   i + 1, (int)name_len, column);
			if (proc_column_field(column) < 0)
				return fail_misplaced_column(r, i, "a process column");
			if (f == 0) {
				memcpy(name[p], column, name_len);
				for (size_t q = 0; q < p; q++)
					if (strcmp(name[q], name[p]) == 0)
						return reader_fail(r, "header: duplicate column '%s'", column);
			}
			if (name_len != strlen(name[p]) || memcmp(column, name[p], name_len) != 0 ||
			    proc_column_field(column) != (int)f)
				return reader_fail(r,
						   "header: column %zu is '%s', expected '%s.%s' (process columns "
						   "come in groups of %d in field order)",
						   i + 1, column, name[p], proc_field_names[f], TRACE_PROC_FIELD_COUNT);
		}
	}
	return 0;
}

/* The header line: every column, in the order the writer puts them. */
static int read_header(struct csv_reader *r, struct trace *t)
{
	if (!starts_with(r->line, "kind,") && strcmp(r->line, "kind") != 0)
		return reader_fail(r, "missing header line (expected 'kind,scan,batch,...')");
	r->header = strdup(r->line);
	if (!r->header)
		return reader_fail(r, "out of memory");
	r->ncolumns = count_fields(r->header, ',');
	r->column = calloc(r->ncolumns, sizeof *r->column);
	r->field = calloc(r->ncolumns, sizeof *r->field);
	if (!r->column || !r->field)
		return reader_fail(r, "out of memory");
	split_fields(r->header, ',', r->column, r->ncolumns);
	if (check_fixed_columns(r) < 0)
		return -1;
	return read_proc_columns(r, t);
}

/* Outcome lines, then the header. */
static int read_preamble(struct csv_reader *r, struct trace *t)
{
	for (;;) {
		int rc = read_line(r);

		if (rc < 0)
			return -1;
		if (rc == 0) {
			r->lineno++;
			return reader_fail(r, "missing header line");
		}
		if (r->line[0] == '\0')
			return reader_fail(r, "empty line");
		if (starts_with(r->line, OUTCOME_PREFIX)) {
			if (read_outcome_line(r, t) < 0)
				return -1;
			continue;
		}
		if (r->line[0] == '#')
			return reader_fail(r, "unexpected comment line (only '# outcome' lines may come before the header)");
		return read_header(r, t);
	}
}

/* ---- CSV reader: rows ---------------------------------------------------- */

static int read_kind_field(struct csv_reader *r, enum trace_row_kind *kind)
{
	const char *text = r->field[COLUMN_KIND];
	int found = find_name(row_kind_names, sizeof row_kind_names / sizeof row_kind_names[0], text);

	if (found < 0)
		return reader_fail(r, "column kind: '%s' is not scan or batch", text);
	*kind = (enum trace_row_kind)found;
	return 0;
}

static int read_valid_field(struct csv_reader *r, bool *valid)
{
	const char *text = r->field[COLUMN_VALID];

	if (strcmp(text, "0") != 0 && strcmp(text, "1") != 0)
		return reader_fail(r, "column valid: '%s' is not 0 or 1", text);
	*valid = text[0] == '1';
	return 0;
}

/* Process @p's group of fields: all empty (absent) or all integers. */
static int read_proc_fields(struct csv_reader *r, const struct trace *t, size_t p,
			    struct trace_proc_stat *ps)
{
	size_t first = FIRST_PROC_COLUMN + p * TRACE_PROC_FIELD_COUNT;
	size_t empty = 0;

	for (size_t f = 0; f < TRACE_PROC_FIELD_COUNT; f++)
		empty += r->field[first + f][0] == '\0';
	if (empty == TRACE_PROC_FIELD_COUNT)
		return 0;
	if (empty > 0)
		return reader_fail(r, "process %s: %zu of %d fields are empty (an absent process has all empty)",
				   t->proc_name[p], empty, TRACE_PROC_FIELD_COUNT);
	ps->present = true;
	for (size_t f = 0; f < TRACE_PROC_FIELD_COUNT; f++)
		if (read_int64_field(r, first + f, &ps->field[f]) < 0)
			return -1;
	return 0;
}

static int read_row(struct csv_reader *r, struct trace *t)
{
	size_t nfields = count_fields(r->line, ',');
	enum trace_row_kind kind = TRACE_ROW_SCAN;
	struct trace_row *row;

	if (nfields != r->ncolumns)
		return reader_fail(r, "%zu field%s, the header has %zu", nfields, nfields == 1 ? "" : "s",
				   r->ncolumns);
	split_fields(r->line, ',', r->field, nfields);
	if (read_kind_field(r, &kind) < 0)
		return -1;
	row = trace_append(t, kind);
	if (!row)
		return reader_fail(r, "out of memory");
	if (read_uint64_field(r, COLUMN_SCAN, &row->scan) < 0 ||
	    read_uint64_field(r, COLUMN_BATCH, &row->batch) < 0 ||
	    read_uint64_field(r, COLUMN_TIME_NS, &row->time_ns) < 0 ||
	    read_uint64_field(r, COLUMN_KSMD_CPU_NS, &row->ksmd_cpu_ns) < 0 ||
	    read_valid_field(r, &row->valid) < 0)
		return -1;
	for (size_t c = 0; c < TRACE_COUNTER_COUNT; c++)
		if (read_int64_field(r, FIRST_COUNTER_COLUMN + c, &row->counter[c]) < 0)
			return -1;
	for (size_t p = 0; p < t->nprocs; p++)
		if (read_proc_fields(r, t, p, &row->proc[p]) < 0)
			return -1;
	return 0;
}

static int read_rows(struct csv_reader *r, struct trace *t)
{
	int rc;

	while ((rc = read_line(r)) == 1) {
		if (r->line[0] == '\0')
			return reader_fail(r, "empty line");
		if (r->line[0] == '#')
			return reader_fail(r, "'#' line after the header (outcome lines come before it)");
		if (read_row(r, t) < 0)
			return -1;
	}
	return rc;
}

int trace_read_csv(FILE *in, const char *name, struct trace **out, char *err, size_t errlen)
{
	struct csv_reader r = { .in = in, .name = name ? name : "-", .err = err, .errlen = errlen };
	struct trace *t = NULL;

	*out = NULL;
	if (errlen > 0)
		err[0] = '\0';
	if (read_first_line(&r, &t) < 0)
		goto fail;
	if (read_preamble(&r, t) < 0 || read_rows(&r, t) < 0)
		goto fail;
	reader_release(&r);
	*out = t;
	return 0;

fail:
	trace_free(t);
	reader_release(&r);
	return -1;
}
