/*
 * trace_io.c - the plumbing every file format of the trace stage shares:
 * checked output (a failed write is -1 with errno, never lost in a stdio
 * buffer), the names outcome errors are written by, the trace CSV's fixed
 * columns, and the strict line, field and number reading the two CSV
 * readers (trace_csv_read.c, trace_pages.c) are built on, with its
 * "NAME:LINE: what" messages. Nothing here knows what a row means.
 */
#include "trace_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

const char *const trace_fixed_column_names[TRACE_FIXED_COLUMN_COUNT] = {
	[TRACE_COLUMN_KIND] = "kind",
	[TRACE_COLUMN_SCAN] = "scan",
	[TRACE_COLUMN_BATCH] = "batch",
	[TRACE_COLUMN_TIME_NS] = "time_ns",
	[TRACE_COLUMN_KSMD_CPU_NS] = "ksmd_cpu_ns",
	[TRACE_COLUMN_VALID] = "valid",
};

bool trace_needs_percent_escape(unsigned char c)
{
	return c <= ' ' || c >= 0x7f || c == '%' || c == ',' || c == '=' || c == '"';
}

/* ---- checked output ------------------------------------------------------ */

int trace_put(FILE *out, const char *fmt, ...)
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

int trace_put_char(FILE *out, char c)
{
	return trace_put(out, "%c", c);
}

int trace_finish_output(FILE *out)
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

/* ---- outcome errors by name ---------------------------------------------- */

/* Errors a knob or run store plausibly answers, written by name. */
static const struct errno_name {
	int number;
	const char *name;
} errno_names[] = {
	{ EINVAL, "EINVAL" }, { EBUSY, "EBUSY" },   { EPERM, "EPERM" },
	{ ENOENT, "ENOENT" }, { ENOMEM, "ENOMEM" }, { EAGAIN, "EAGAIN" },
};

/* "EBUSY" for EBUSY, NULL for a number without a name here. */
static const char *errno_to_name(int number)
{
	for (size_t i = 0; i < sizeof errno_names / sizeof errno_names[0]; i++)
		if (errno_names[i].number == number)
			return errno_names[i].name;
	return NULL;
}

int trace_errno_lookup(const char *name)
{
	for (size_t i = 0; i < sizeof errno_names / sizeof errno_names[0]; i++)
		if (strcmp(errno_names[i].name, name) == 0)
			return errno_names[i].number;
	return -1;
}

int trace_put_error_token(FILE *out, int error)
{
	const char *name = errno_to_name(error);

	return name ? trace_put(out, "%s", name) : trace_put(out, "%d", error);
}

/* ---- reading lines and fields -------------------------------------------- */

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

int trace_reader_fail(struct trace_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	trace_vfail_at(r->err, r->errlen, r->name, r->lineno, fmt, ap);
	va_end(ap);
	return -1;
}

void trace_reader_release(struct trace_reader *r)
{
	free(r->line);
	free(r->header);
	free(r->column);
	free(r->field);
}

int trace_reader_line(struct trace_reader *r)
{
	ssize_t n;

	errno = 0;
	n = getline(&r->line, &r->line_cap, r->in);
	if (n < 0) {
		if (ferror(r->in) || errno == ENOMEM) {
			r->lineno++;
			return trace_reader_fail(r, "read error: %s", strerror(errno ? errno : EIO));
		}
		return 0;
	}
	r->lineno++;
	if (memchr(r->line, '\0', (size_t)n))
		return trace_reader_fail(r, "NUL byte in line");
	if (n > 0 && r->line[n - 1] == '\n')
		r->line[--n] = '\0';
	if (n > 0 && r->line[n - 1] == '\r')
		r->line[--n] = '\0';
	return 1;
}

bool trace_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

size_t trace_count_fields(const char *s, char separator)
{
	size_t n = 1;

	for (; *s; s++)
		n += *s == separator;
	return n;
}

void trace_split_fields(char *s, char separator, char **piece, size_t n)
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

int trace_reader_take_header(struct trace_reader *r)
{
	r->header = strdup(r->line);
	if (!r->header)
		return trace_reader_fail(r, "out of memory");
	r->ncolumns = trace_count_fields(r->header, ',');
	r->column = calloc(r->ncolumns, sizeof *r->column);
	r->field = calloc(r->ncolumns, sizeof *r->field);
	if (!r->column || !r->field)
		return trace_reader_fail(r, "out of memory");
	trace_split_fields(r->header, ',', r->column, r->ncolumns);
	return 0;
}

int trace_reader_split_row(struct trace_reader *r)
{
	size_t nfields = trace_count_fields(r->line, ',');

	if (nfields != r->ncolumns)
		return trace_reader_fail(r, "%zu field%s, the header has %zu", nfields,
					 nfields == 1 ? "" : "s", r->ncolumns);
	trace_split_fields(r->line, ',', r->field, nfields);
	return 0;
}

/* ---- numbers ------------------------------------------------------------- */

enum trace_number trace_parse_digits(const char *s, uint64_t limit, uint64_t *value)
{
	uint64_t v = 0;

	if (*s == '\0')
		return TRACE_NUMBER_MALFORMED;
	for (; *s; s++) {
		unsigned digit;

		if (*s < '0' || *s > '9')
			return TRACE_NUMBER_MALFORMED;
		digit = (unsigned)(*s - '0');
		if (v > (limit - digit) / 10)
			goto out_of_range;
		v = v * 10 + digit;
	}
	*value = v;
	return TRACE_NUMBER_OK;

out_of_range:
	/* Still malformed if a non-digit follows the overflow. */
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return TRACE_NUMBER_MALFORMED;
	return TRACE_NUMBER_OUT_OF_RANGE;
}

static enum trace_number parse_int64(const char *s, int64_t *value)
{
	bool negative = *s == '-';
	uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	uint64_t magnitude = 0;
	enum trace_number status = trace_parse_digits(s + negative, limit, &magnitude);

	if (status != TRACE_NUMBER_OK)
		return status;
	if (!negative)
		*value = (int64_t)magnitude;
	else if (magnitude == (uint64_t)INT64_MAX + 1)
		*value = INT64_MIN;
	else
		*value = -(int64_t)magnitude;
	return TRACE_NUMBER_OK;
}

/* Field @column, which @status says did not parse, was to be @what. */
static int fail_number(struct trace_reader *r, size_t column, enum trace_number status,
		       const char *what)
{
	if (status == TRACE_NUMBER_OUT_OF_RANGE)
		return trace_reader_fail(r, "column %s: '%s' is out of range", r->column[column],
					 r->field[column]);
	return trace_reader_fail(r, "column %s: '%s' is not %s", r->column[column],
				 r->field[column], what);
}

int trace_reader_uint64(struct trace_reader *r, size_t column, uint64_t *value)
{
	enum trace_number status = trace_parse_digits(r->field[column], UINT64_MAX, value);

	return status == TRACE_NUMBER_OK ? 0 : fail_number(r, column, status, "an unsigned integer");
}

int trace_reader_int64(struct trace_reader *r, size_t column, int64_t *value)
{
	enum trace_number status = parse_int64(r->field[column], value);

	return status == TRACE_NUMBER_OK ? 0 : fail_number(r, column, status, "an integer");
}
