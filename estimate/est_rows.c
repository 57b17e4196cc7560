/*
 * est_rows.c - a sweep in pieces: one point of a sweep as a line of text,
 * and the lines of every point read back. A job that computes a point
 * alone (ksmkit estimate --point) writes its row; the collector
 * (--collect) reads the rows of all the jobs and checks them. A row holds
 * every figure the sweep's outputs print of its point, exactly (integers in
 * decimal, the CPU shares as C99 hexadecimal floats, which strtod reads
 * back to the same bits), and the settings it was computed at (the point,
 * the grid's size, the kernel, the schedule, the run's length, every knob),
 * so that a row of another sweep is refused rather than printed. It runs
 * nothing and prints no message: errors go into the caller's buffer.
 */
#include "estimate.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROW_MAGIC "ksmkit-estimate-row"
#define ROW_VERSION "2" /* 2: the cost terms (cost.TERM) */
#define KNOB_PREFIX "knob."
#define COST_PREFIX "cost."
#define LINE_MAX_LEN 4096

/* ---- the fields of a row ---------------------------------------------------------- */

enum field_kind { F_U64, F_I64, F_DOUBLE, F_BOOL, F_KERNEL, F_SCHEDULE };

struct field {
	const char *name;
	enum field_kind kind;
	size_t offset; /* in struct est_row */
};

#define FIELD(name, kind, member) { name, kind, offsetof(struct est_row, member) }

/*
 * In the order a row writes them; then the knobs (knob.NAME), then ksmd's
 * CPU over the run by term of the cost model (cost.TERM, ns).
 */
static const struct field fields[] = {
	FIELD("point", F_U64, point),
	FIELD("points", F_U64, points),
	FIELD("kernel", F_KERNEL, kernel),
	FIELD("schedule", F_SCHEDULE, schedule),
	FIELD("stop_time_ns", F_U64, time_ns),
	FIELD("stop_scans", F_U64, scans),
	FIELD("streams", F_U64, result.streams),
	FIELD("snapshots", F_U64, result.snapshots),
	FIELD("last_snapshot_ns", F_U64, result.last_snapshot_ns),
	FIELD("present_pages", F_U64, result.present_pages),
	FIELD("most_saved", F_U64, result.most_saved),
	FIELD("time_ns", F_U64, result.last.time_ns),
	FIELD("ksmd_cpu_ns", F_U64, result.last.ksmd_cpu_ns),
	FIELD("full_scans", F_U64, result.last.full_scans),
	FIELD("pages_shared", F_I64, result.last.pages_shared),
	FIELD("pages_sharing", F_I64, result.last.pages_sharing),
	FIELD("ksm_zero_pages", F_I64, result.last.ksm_zero_pages),
	FIELD("general_profit", F_I64, result.last.general_profit),
	FIELD("t90_ns", F_I64, result.t90_ns),
	FIELD("cpu_mean", F_DOUBLE, result.cpu_mean),
	FIELD("cpu_steady", F_DOUBLE, result.cpu_steady),
	FIELD("settled", F_BOOL, result.settled),
};

#define NFIELDS (sizeof(fields) / sizeof(fields[0]))
#define NKEYS (NFIELDS + WL_KNOB_COUNT + SIM_TERM_COUNT)

static void *at(struct est_row *row, const struct field *f)
{
	return (char *)row + f->offset;
}

static const void *at_const(const struct est_row *row, const struct field *f)
{
	return (const char *)row + f->offset;
}

static const char *schedule_name(enum est_schedule s)
{
	return s == EST_BY_SCANS ? "scans" : "time";
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- writing ------------------------------------------------------------------------ */

void est_row_of(struct est_row *row, size_t point, size_t points, const struct est_options *opt,
		const struct est_result *r)
{
	memset(row, 0, sizeof(*row));
	row->point = point;
	row->points = points;
	row->kernel = opt->kernel;
	row->schedule = opt->schedule;
	row->time_ns = opt->time_ns;
	row->scans = opt->scans;
	row->knobs = opt->knobs;
	row->result = *r;
	row->result.series = NULL; /* the figures only */
	row->result.n = 0;
	row->result.scan_cost_ns = NULL;
	row->result.nscan_points = 0;
}

static void write_field(FILE *out, const struct est_row *row, const struct field *f)
{
	const void *p = at_const(row, f);

	fprintf(out, " %s=", f->name);
	switch (f->kind) {
	case F_U64: fprintf(out, "%" PRIu64, *(const uint64_t *)p); break;
	case F_I64: fprintf(out, "%" PRId64, *(const int64_t *)p); break;
	case F_DOUBLE: fprintf(out, "%a", *(const double *)p); break;
	case F_BOOL: fprintf(out, "%d", *(const bool *)p ? 1 : 0); break;
	case F_KERNEL: fputs(wl_kernel_name(*(const enum wl_kernel *)p), out); break;
	case F_SCHEDULE: fputs(schedule_name(*(const enum est_schedule *)p), out); break;
	}
}

int est_row_write(FILE *out, const struct est_row *row)
{
	fputs(ROW_MAGIC " " ROW_VERSION, out);
	for (size_t i = 0; i < NFIELDS; i++)
		write_field(out, row, &fields[i]);
	for (int k = 0; k < WL_KNOB_COUNT; k++) {
		char buf[32];

		fprintf(out, " " KNOB_PREFIX "%s=%s", wl_knob_info((enum wl_knob)k)->name,
			wl_knob_format((enum wl_knob)k, row->knobs.value[k], buf, sizeof(buf)));
	}
	for (int t = 0; t < SIM_TERM_COUNT; t++)
		fprintf(out, " " COST_PREFIX "%s=%" PRIu64, sim_cost_term_info(t)->name,
			row->result.cost_ns[t]);
	fputc('\n', out);
	return ferror(out) ? -1 : 0;
}

/* ---- reading one row ------------------------------------------------------------------ */

static bool parse_u64(const char *text, uint64_t *v)
{
	char *end;

	if (*text < '0' || *text > '9')
		return false;
	errno = 0;
	*v = strtoull(text, &end, 10);
	return errno == 0 && *end == '\0';
}

static bool parse_i64(const char *text, int64_t *v)
{
	char *end;

	if (!((*text >= '0' && *text <= '9') || (*text == '-' && text[1] >= '0' && text[1] <= '9')))
		return false;
	errno = 0;
	*v = strtoll(text, &end, 10);
	return errno == 0 && *end == '\0';
}

static bool parse_double(const char *text, double *v)
{
	char *end;

	if (!*text || *text == ' ')
		return false;
	errno = 0;
	*v = strtod(text, &end);
	return errno == 0 && *end == '\0' && isfinite(*v);
}

/* The value @text of field @f into @row: true, or false when it is not one. */
static bool parse_value(struct est_row *row, const struct field *f, const char *text)
{
	void *p = at(row, f);
	int k;

	switch (f->kind) {
	case F_U64: return parse_u64(text, p);
	case F_I64: return parse_i64(text, p);
	case F_DOUBLE: return parse_double(text, p);
	case F_BOOL:
		if (strcmp(text, "0") != 0 && strcmp(text, "1") != 0)
			return false;
		*(bool *)p = text[0] == '1';
		return true;
	case F_KERNEL:
		if ((k = wl_kernel_lookup(text)) < 0)
			return false;
		*(enum wl_kernel *)p = (enum wl_kernel)k;
		return true;
	case F_SCHEDULE:
		if (strcmp(text, "time") != 0 && strcmp(text, "scans") != 0)
			return false;
		*(enum est_schedule *)p = text[0] == 's' ? EST_BY_SCANS : EST_BY_TIME;
		return true;
	}
	return false;
}

/* The cost term called @name, or -1. */
static int term_lookup(const char *name)
{
	for (int t = 0; t < SIM_TERM_COUNT; t++)
		if (strcmp(name, sim_cost_term_info(t)->name) == 0)
			return t;
	return -1;
}

/* Which of the row's NKEYS keys @key is (fields, knobs, cost terms), or -1. */
static int key_index(const char *key)
{
	int knob, term;

	for (size_t i = 0; i < NFIELDS; i++)
		if (strcmp(key, fields[i].name) == 0)
			return (int)i;
	if (strncmp(key, KNOB_PREFIX, strlen(KNOB_PREFIX)) == 0 &&
	    (knob = wl_knob_lookup(key + strlen(KNOB_PREFIX))) >= 0)
		return (int)NFIELDS + knob;
	if (strncmp(key, COST_PREFIX, strlen(COST_PREFIX)) == 0 &&
	    (term = term_lookup(key + strlen(COST_PREFIX))) >= 0)
		return (int)(NFIELDS + WL_KNOB_COUNT) + term;
	return -1;
}

/* One "KEY=VALUE" of a row (cut out in @word, which is changed) into @row. */
static int parse_pair(char *word, struct est_row *row, bool *seen, char *err, size_t errlen)
{
	char *eq = strchr(word, '='), why[160];
	int i;

	if (!eq || eq == word)
		return fail(err, errlen, "'%s' is not KEY=VALUE", word);
	*eq = '\0';
	if ((i = key_index(word)) < 0)
		return fail(err, errlen, "no field is called '%s'", word);
	if (seen[i])
		return fail(err, errlen, "%s is given twice", word);
	seen[i] = true;
	if (i >= (int)(NFIELDS + WL_KNOB_COUNT)) {
		if (!parse_u64(eq + 1, &row->result.cost_ns[i - (int)(NFIELDS + WL_KNOB_COUNT)]))
			return fail(err, errlen, "%s=%s: not a count of ns", word, eq + 1);
		return 0;
	}
	if (i >= (int)NFIELDS) {
		enum wl_knob k = (enum wl_knob)(i - (int)NFIELDS);

		if (wl_knob_parse(k, eq + 1, &row->knobs.value[k], why, sizeof(why)) != 0)
			return fail(err, errlen, "%s=%s: %s", word, eq + 1, why);
		return 0;
	}
	if (!parse_value(row, &fields[i], eq + 1))
		return fail(err, errlen, "%s=%s: not a value of that field", word, eq + 1);
	return 0;
}

/* Each key once: the first left out, named. */
static int all_given(const bool *seen, char *err, size_t errlen)
{
	for (size_t i = 0; i < NKEYS; i++) {
		if (seen[i])
			continue;
		if (i < NFIELDS)
			return fail(err, errlen, "%s is missing", fields[i].name);
		if (i < NFIELDS + WL_KNOB_COUNT)
			return fail(err, errlen, KNOB_PREFIX "%s is missing",
				    wl_knob_info((enum wl_knob)(i - NFIELDS))->name);
		return fail(err, errlen, COST_PREFIX "%s is missing",
			    sim_cost_term_info((enum sim_cost_term)(i - NFIELDS - WL_KNOB_COUNT))->name);
	}
	return 0;
}

/* A row is printable ASCII: anything else is refused before a message could echo it. */
static int printable(const char *line, char *err, size_t errlen)
{
	for (const unsigned char *c = (const unsigned char *)line; *c; c++)
		if (*c < 0x20 || *c > 0x7e)
			return fail(err, errlen, "byte 0x%02x at column %zu: not a row of ksmkit "
				    "estimate --point (a row is printable ASCII)", *c,
				    (size_t)(c - (const unsigned char *)line) + 1);
	return 0;
}

int est_row_parse(const char *line, struct est_row *row, char *err, size_t errlen)
{
	bool seen[NKEYS] = { false };
	char *copy, *save = NULL, *word;
	int rc = 0;

	if (printable(line, err, errlen) != 0)
		return -1;
	if (!(copy = strdup(line)))
		return fail(err, errlen, "out of memory");
	memset(row, 0, sizeof(*row));
	word = strtok_r(copy, " ", &save);
	if (!word || strcmp(word, ROW_MAGIC) != 0)
		rc = fail(err, errlen, "not a row of ksmkit estimate --point (it starts '%.40s')",
			  line);
	else if (!(word = strtok_r(NULL, " ", &save)) || strcmp(word, ROW_VERSION) != 0)
		rc = fail(err, errlen, "a row of format %s, not %s (another ksmkit's job?)",
			  word ? word : "(none)", ROW_VERSION);
	while (rc == 0 && (word = strtok_r(NULL, " ", &save)))
		rc = parse_pair(word, row, seen, err, errlen);
	free(copy);
	return rc == 0 ? all_given(seen, err, errlen) : rc;
}

/* ---- is it this sweep's? --------------------------------------------------------------- */

static int same_settings(const struct est_row *row, const struct est_options *opt, char *err,
			 size_t errlen)
{
	if (row->kernel != opt->kernel)
		return fail(err, errlen, "computed for kernel %s, this sweep is for %s",
			    wl_kernel_name(row->kernel), wl_kernel_name(opt->kernel));
	if (row->schedule != opt->schedule)
		return fail(err, errlen, "computed by %s, this sweep by %s",
			    schedule_name(row->schedule), schedule_name(opt->schedule));
	if (row->time_ns != opt->time_ns || row->scans != opt->scans)
		return fail(err, errlen, "run for stop_time_ns=%" PRIu64 " stop_scans=%" PRIu64
			    ", this sweep for %" PRIu64 " and %" PRIu64 " (--time, --scans; 0: "
			    "the default)", row->time_ns, row->scans, opt->time_ns, opt->scans);
	return 0;
}

static int same_knobs(const struct est_row *row, const struct est_knobs *want, char *err,
		      size_t errlen)
{
	for (int k = 0; k < WL_KNOB_COUNT; k++) {
		char a[32], b[32];

		if (row->knobs.value[k] == want->value[k])
			continue;
		return fail(err, errlen, "point %" PRIu64 " was run at %s=%s, this sweep's is at "
			    "%s=%s", row->point, wl_knob_info((enum wl_knob)k)->name,
			    wl_knob_format((enum wl_knob)k, row->knobs.value[k], a, sizeof(a)),
			    wl_knob_info((enum wl_knob)k)->name,
			    wl_knob_format((enum wl_knob)k, want->value[k], b, sizeof(b)));
	}
	return 0;
}

static int same_capture(const struct est_row *row, const struct est_capture *cap, char *err,
			size_t errlen)
{
	const struct est_result *r = &row->result;

	if (r->streams != cap->streams || r->snapshots != cap->snapshots ||
	    r->present_pages != cap->present_pages || r->most_saved != cap->most_saved)
		return fail(err, errlen, "a capture of %" PRIu64 " streams, %" PRIu64 " snapshots, "
			    "%" PRIu64 " pages present, not this one (%" PRIu64 ", %" PRIu64 ", %"
			    PRIu64 ")", r->streams, r->snapshots, r->present_pages, cap->streams,
			    cap->snapshots, cap->present_pages);
	return 0;
}

int est_row_check(const struct est_row *row, const struct est_options *opt,
		  const struct est_axis *axes, size_t naxes, const struct est_capture *cap,
		  char *err, size_t errlen)
{
	size_t n = est_grid_size(axes, naxes);
	struct est_knobs want;

	if (row->points != n)
		return fail(err, errlen, "a row of a sweep of %" PRIu64 " points, this one has %zu",
			    row->points, n);
	if (row->point >= n)
		return fail(err, errlen, "point %" PRIu64 ", but the sweep's are 0 to %zu",
			    row->point, n - 1);
	est_grid_point(axes, naxes, (size_t)row->point, &opt->knobs, &want);
	if (same_settings(row, opt, err, errlen) != 0 || same_knobs(row, &want, err, errlen) != 0)
		return -1;
	return same_capture(row, cap, err, errlen);
}

/* ---- reading the rows of a sweep ------------------------------------------------------- */

/* The next line of @in into @line without its line end: 1, 0 at the end, -1 too long. */
static int next_line(FILE *in, char *line, size_t len)
{
	size_t n;

	if (!fgets(line, (int)len, in))
		return 0;
	n = strlen(line);
	if (n && line[n - 1] == '\n')
		line[--n] = '\0';
	else if (!feof(in))
		return -1;
	if (n && line[n - 1] == '\r')
		line[--n] = '\0';
	return 1;
}

int est_rows_read(FILE *in, const char *name, const struct est_options *opt,
		  const struct est_axis *axes, size_t naxes, const struct est_capture *cap,
		  struct est_result *out, unsigned *line_of, char *err, size_t errlen)
{
	char line[LINE_MAX_LEN], why[400];
	unsigned lineno = 0;
	int got;

	while ((got = next_line(in, line, sizeof(line))) != 0) {
		struct est_row row;

		lineno++;
		if (got < 0)
			return fail(err, errlen, "%s:%u: a line longer than %d bytes", name, lineno,
				    LINE_MAX_LEN - 2);
		if (line[0] == '\0' || line[0] == '#')
			continue;
		if (est_row_parse(line, &row, why, sizeof(why)) != 0 ||
		    est_row_check(&row, opt, axes, naxes, cap, why, sizeof(why)) != 0)
			return fail(err, errlen, "%s:%u: %s", name, lineno, why);
		if (line_of[row.point])
			return fail(err, errlen, "%s:%u: a second row for point %" PRIu64
				    " (the first is line %u)", name, lineno, row.point,
				    line_of[row.point]);
		line_of[row.point] = lineno;
		out[row.point] = row.result;
	}
	if (ferror(in))
		return fail(err, errlen, "%s: %s", name, strerror(errno));
	return 0;
}
