/*
 * trace_internal.h - what the files of trace/ share and nobody else sees: the
 * trace CSV's layout (first-line magic, fixed columns), the name tables
 * the writers and readers both use, checked output (every writer reports a
 * failed write as -1 with errno), and the line, field and number reading
 * both CSV readers (traces, page partitions) are built on. The public
 * contract is trace.h.
 */
#ifndef KSMKIT_TRACE_INTERNAL_H
#define KSMKIT_TRACE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace.h"

/* ---- the trace CSV's layout (trace_csv_write.c, trace_csv_read.c) ---------- */

#define TRACE_MAGIC "# ksmkit-trace "
#define TRACE_OUTCOME_PREFIX "# outcome "

/* The CSV columns before the counters, in order. */
enum trace_fixed_column {
	TRACE_COLUMN_KIND,
	TRACE_COLUMN_SCAN,
	TRACE_COLUMN_BATCH,
	TRACE_COLUMN_TIME_NS,
	TRACE_COLUMN_KSMD_CPU_NS,
	TRACE_COLUMN_VALID,
	TRACE_FIXED_COLUMN_COUNT
};

extern const char *const trace_fixed_column_names[TRACE_FIXED_COLUMN_COUNT];

/* Bytes a first-line or outcome value must not hold raw (it is %XX-escaped). */
bool trace_needs_percent_escape(unsigned char c);

/* Index of the first counter column and of the first process column. */
#define TRACE_FIRST_COUNTER_COLUMN ((size_t)TRACE_FIXED_COLUMN_COUNT)
#define TRACE_FIRST_PROC_COLUMN (TRACE_FIRST_COUNTER_COLUMN + TRACE_COUNTER_COUNT)

/* [a-z0-9_], 1..TRACE_NAME_MAX bytes: a cost term's name (trace_set_costs). */
bool trace_valid_cost_name(const char *name, size_t len);

/* ---- names (trace.c) ------------------------------------------------------- */

/* "scan", "batch": a row's kind in every format. */
extern const char *const trace_row_kind_names[2];

/* The index of @name in @names[0..count), or -1 (also for a NULL @name). */
int trace_find_name(const char *const *names, size_t count, const char *name);

/*
 * A process name is 1..TRACE_NAME_MAX bytes of [A-Za-z0-9_-]: it then needs
 * no escaping in a CSV column name, nor in a JSON key.
 */
bool trace_valid_proc_name(const char *name, size_t len);

/* ---- checked output (trace_io.c) ------------------------------------------- */

/*
 * fprintf that reports failure as -1 with errno set (EIO when the stream
 * failed without saying why, as a stream already in error may).
 */
int trace_put(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int trace_put_char(FILE *out, char c);

/*
 * Flush, so that an error still sitting in the buffer (a full disk) is
 * reported by the writer rather than lost at fclose. 0 or -1 (errno set).
 */
int trace_finish_output(FILE *out);

/* An outcome's error as both formats write it: "0", "EBUSY", or the number. */
int trace_put_error_token(FILE *out, int error);
/* The errno named @name ("EBUSY"), or -1. */
int trace_errno_lookup(const char *name);

/* ---- reading CSV (trace_io.c) ---------------------------------------------- */

struct trace_reader {
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

/* "NAME:LINE: message" into the reader's buffer. Always returns -1. */
int trace_reader_fail(struct trace_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void trace_reader_release(struct trace_reader *r);

/* 1: a line is in r->line; 0: end of file; -1: read error (message set). */
int trace_reader_line(struct trace_reader *r);

/* Keep the current line as the header: r->column[0..ncolumns) and room for
 * as many fields. 0, or -1 (out of memory, message set). */
int trace_reader_take_header(struct trace_reader *r);

/* Split the current line into r->field[]: 0, or -1 when it does not have
 * one field per column (message set). */
int trace_reader_split_row(struct trace_reader *r);

bool trace_starts_with(const char *s, const char *prefix);
size_t trace_count_fields(const char *s, char separator);
/* Cut @s at every @separator, in place, into exactly @n pieces. */
void trace_split_fields(char *s, char separator, char **piece, size_t n);

enum trace_number { TRACE_NUMBER_OK, TRACE_NUMBER_MALFORMED, TRACE_NUMBER_OUT_OF_RANGE };

/* One or more decimal digits and nothing else, at most @limit. */
enum trace_number trace_parse_digits(const char *s, uint64_t limit, uint64_t *value);

/* Field @column of the current row as a number, or -1 with a message
 * naming the column. */
int trace_reader_uint64(struct trace_reader *r, size_t column, uint64_t *value);
int trace_reader_int64(struct trace_reader *r, size_t column, int64_t *value);

#endif
