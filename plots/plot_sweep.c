/*
 * plot_sweep.c - the reader of sweep results, the CSV the benchmarks write
 * ("series,x,min,median,max", one line per measured point; the format is
 * described in plot.h and ksmkit(1)). It checks every line strictly and
 * names the file and line of the first problem; it turns lines into chart
 * series and nothing else (the benchmarks own what the numbers mean).
 */
#include "plot_internal.h"
#include "trace.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define SWEEP_HEADER "series,x,min,median,max"
#define SWEEP_FIELDS 5

struct sweep_reader {
	FILE *in;
	const char *name;
	struct plot_chart *c;
	char *err;
	size_t errlen;
	char *line;
	size_t line_cap;
	size_t lineno;
};

__attribute__((format(printf, 2, 3))) static int sweep_fail(struct sweep_reader *r,
							     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	trace_vfail_at(r->err, r->errlen, r->name, r->lineno, fmt, ap);
	va_end(ap);
	return -1;
}

static char *trim(char *s)
{
	char *end = s + strlen(s);

	while (*s == ' ' || *s == '\t')
		s++;
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r' || end[-1] == '\n'))
		*--end = '\0';
	return s;
}

/*
 * The next line that is neither blank nor a comment, trimmed, in *@text.
 * Returns 1, 0 at the end of the file, or -1 on a read error.
 */
static int next_line(struct sweep_reader *r, char **text)
{
	for (;;) {
		ssize_t n = getline(&r->line, &r->line_cap, r->in);
		char *t;

		if (n < 0) {
			if (ferror(r->in))
				return sweep_fail(r, "read error: %s", strerror(errno));
			return 0;
		}
		r->lineno++;
		if (memchr(r->line, '\0', (size_t)n))
			return sweep_fail(r, "a NUL byte: not a text file");
		t = trim(r->line);
		if (*t && *t != '#') {
			*text = t;
			return 1;
		}
	}
}

/* Split @text at commas into exactly SWEEP_FIELDS trimmed fields. */
static int split_fields(struct sweep_reader *r, char *text, char *field[SWEEP_FIELDS])
{
	size_t n = 0;
	char *p = text;

	for (;;) {
		char *comma = strchr(p, ',');

		if (n < SWEEP_FIELDS)
			field[n] = p;
		n++;
		if (!comma)
			break;
		*comma = '\0';
		p = comma + 1;
	}
	if (n != SWEEP_FIELDS)
		return sweep_fail(r, "expected 5 fields (" SWEEP_HEADER "), got %zu", n);
	for (size_t i = 0; i < SWEEP_FIELDS; i++)
		field[i] = trim(field[i]);
	return 0;
}

static int parse_number(struct sweep_reader *r, const char *column, const char *text,
			double *value)
{
	char *end;

	if (!*text)
		return sweep_fail(r, "%s is empty", column);
	errno = 0;
	*value = strtod(text, &end);
	if (*end || end == text)
		return sweep_fail(r, "%s '%s' is not a number", column, text);
	if (!isfinite(*value) || fabs(*value) > PLOT_VALUE_MAX || errno == ERANGE)
		return sweep_fail(r, "%s '%s' is out of range", column, text);
	return 0;
}

static int check_series_name(struct sweep_reader *r, const char *name)
{
	if (!*name)
		return sweep_fail(r, "the series name is empty");
	if (strchr(name, '"'))
		return sweep_fail(r, "series name %s: quotes are not allowed", name);
	if (strlen(name) > PLOT_TEXT_MAX)
		return sweep_fail(r, "series name is longer than %d bytes", PLOT_TEXT_MAX);
	return 0;
}

/* The series called @name, added when new; -1 when out of memory. */
static int series_named(struct sweep_reader *r, const char *name)
{
	char err[128];
	char *clean = plot_sanitized_copy(name);
	int found = -1;

	if (!clean)
		return sweep_fail(r, "out of memory");
	for (size_t i = 0; i < r->c->nseries && found < 0; i++)
		if (strcmp(r->c->series[i].name, clean) == 0)
			found = (int)i;
	free(clean);
	if (found >= 0)
		return found;
	found = plot_add_series(r->c, name, err, sizeof(err));
	if (found < 0)
		return sweep_fail(r, "%s", err);
	return found;
}

static int check_new_x(struct sweep_reader *r, int series, double x)
{
	const struct plot_series *s = &r->c->series[series];

	for (size_t i = 0; i < s->npoints; i++)
		if (s->point[i].x == x)
			return sweep_fail(r, "series '%s' already has a point at x = %g", s->name,
					  x);
	return 0;
}

static int read_point(struct sweep_reader *r, char *text)
{
	static const char *const column[SWEEP_FIELDS] = { "series", "x", "min", "median", "max" };
	char *field[SWEEP_FIELDS];
	double v[SWEEP_FIELDS];
	char err[256];
	int series;

	if (split_fields(r, text, field) < 0 || check_series_name(r, field[0]) < 0)
		return -1;
	for (size_t i = 1; i < SWEEP_FIELDS; i++)
		if (parse_number(r, column[i], field[i], &v[i]) < 0)
			return -1;
	if (!(v[2] <= v[3] && v[3] <= v[4]))
		return sweep_fail(r, "min %s, median %s, max %s: expected min <= median <= max",
				  field[2], field[3], field[4]);
	series = series_named(r, field[0]);
	if (series < 0 || check_new_x(r, series, v[1]) < 0)
		return -1;
	if (plot_add_range(r->c, series, v[1], v[2], v[3], v[4], err, sizeof(err)) < 0)
		return sweep_fail(r, "%s", err);
	return 0;
}

int plot_read_sweep_csv(FILE *in, const char *name, struct plot_chart *c, char *err,
			size_t errlen)
{
	struct sweep_reader r = { .in = in, .name = name ? name : "-", .c = c, .err = err,
				  .errlen = errlen };
	char *text;
	size_t points = 0;
	int rc;

	rc = next_line(&r, &text);
	if (rc == 0) {
		r.lineno = r.lineno ? r.lineno : 1;
		rc = sweep_fail(&r, "no header: expected '" SWEEP_HEADER "'");
		goto out;
	}
	if (rc < 0)
		goto out;
	if (strcmp(text, SWEEP_HEADER) != 0) {
		rc = sweep_fail(&r, "expected the header '" SWEEP_HEADER "', got '%.60s'", text);
		goto out;
	}
	while ((rc = next_line(&r, &text)) > 0) {
		if (read_point(&r, text) < 0) {
			rc = -1;
			goto out;
		}
		points++;
	}
	if (rc == 0 && points == 0) {
		rc = sweep_fail(&r, "no data: expected lines of " SWEEP_HEADER);
		goto out;
	}
out:
	free(r.line);
	return rc == 0 ? 0 : -1;
}
