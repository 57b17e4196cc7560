/*
 * sweep.c - what every sweep shares: repeating a point and reducing it to
 * min/median/max per series and per ratio, the sweep CSV rows in and out,
 * the result files (CSV and charts) and the summary table. The sweeps
 * themselves, their workloads and measurements, are in sweep_defs.c.
 *
 * A measured point holds exactly what its CSV rows say (values rounded as
 * they are written), so results, charts and summary are the same whether a
 * sweep ran here in one process or its points ran as separate jobs whose
 * rows were collected.
 */
#include "config.h"
#include "sweep.h"
#include "sweep_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef HAVE_PLOT
#include "../plots/plot.h"
#endif

int sweep_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

void sweep_env_init(struct sweep_env *env)
{
	memset(env, 0, sizeof(*env));
	env->scale = 1.0;
}

/* --- repeating a point --------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The largest k (at least 1) whose k-th smallest and k-th largest of @m
 * measurements hold their median with odds of 90% or more: the odds that
 * fewer than k of them fall below the median are those of fewer than k
 * heads in m tosses, and each side may take 5%.
 */
static unsigned median_ci_rank(unsigned m)
{
	double term = ldexp(1.0, -(int)m), below = 0; /* P(i heads), P(fewer than k) */
	unsigned k = 0;

	for (unsigned i = 0; i < m / 2; i++) {
		below += term;
		if (below > 0.05)
			break;
		k = i + 1;
		term = term * (m - i) / (i + 1);
	}
	return k ? k : 1;
}

struct sweep_stat sweep_stat_of(double *v, unsigned n)
{
	struct sweep_stat st = { NAN, NAN, NAN, 0, NAN, NAN };
	unsigned k;
	unsigned m = 0;

	for (unsigned i = 0; i < n; i++)
		if (!isnan(v[i]))
			v[m++] = v[i];
	if (m == 0)
		return st;
	qsort(v, m, sizeof(*v), cmp_double);
	st.min = v[0];
	st.max = v[m - 1];
	st.median = m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
	st.n = m;
	k = median_ci_rank(m);
	st.lo = v[k - 1];
	st.hi = v[m - k];
	return st;
}

/* A value as a row gives it back: written with SWEEP_VALUE_FORMAT, read by strtod. */
static double as_written(double v)
{
	char text[64];

	snprintf(text, sizeof(text), SWEEP_VALUE_FORMAT, v);
	return strtod(text, NULL);
}

static void round_as_written(struct sweep_stat *st)
{
	if (!st->n)
		return;
	st->min = as_written(st->min);
	st->median = as_written(st->median);
	st->max = as_written(st->max);
	st->lo = as_written(st->lo);
	st->hi = as_written(st->hi);
}

/*
 * Repetition @r of point @point into @row (d->nseries values): a series
 * that is the same in every repetition (the simulator's, or all of them in
 * a `once` sweep) is measured in the first only and copied from @first
 * (repetition 0's row) after it.
 */
static int run_repetition(const struct sweep_def *d, size_t point, unsigned r,
			  const struct sweep_env *env, const double *first, double *row,
			  char *err, size_t errlen)
{
	bool want[SWEEP_MAX_SERIES];

	for (size_t s = 0; s < d->nseries; s++) {
		bool sim = d->series[s].engine == SWEEP_SIM;

		want[s] = r == 0 || (!sim && !d->once);
		row[s] = want[s] ? NAN : first[s];
	}
	return d->run(d, point, env, want, row, err, errlen);
}

/*
 * The point's result from its @runs rows @y (series values, rows apart by
 * d->nseries), rounded as its rows write it. @col has room for @runs.
 */
static void reduce_point(const struct sweep_def *d, const double *y, unsigned runs, double *col,
			 struct sweep_point_result *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t s = 0; s < d->nseries; s++) {
		for (unsigned r = 0; r < runs; r++)
			col[r] = y[r * d->nseries + s];
		out->series[s] = sweep_stat_of(col, runs);
	}
	/* ratios inside each repetition, then their spread */
	for (size_t q = 0; q < d->nratios; q++) {
		for (unsigned r = 0; r < runs; r++) {
			double a = y[r * d->nseries + d->ratio[q].num];
			double b = y[r * d->nseries + d->ratio[q].den];

			col[r] = b > 0 ? a / b : NAN;
		}
		out->ratio[q] = sweep_stat_of(col, runs);
	}
	/* ratios above are taken from the full values; what is kept is what is written */
	for (size_t s = 0; s < d->nseries; s++)
		round_as_written(&out->series[s]);
	for (size_t q = 0; q < d->nratios; q++)
		round_as_written(&out->ratio[q]);
}

/*
 * Points [@first, @first + @n) of @d, @runs times each in rounds (every
 * point once a round), into @res[0..n). With one point, that is point by
 * point.
 */
static int measure(const struct sweep_def *d, size_t first, size_t n, unsigned runs,
		   const struct sweep_env *env, sweep_progress_fn progress, void *arg,
		   struct sweep_point_result *res, char *err, size_t errlen)
{
	const size_t row = d->nseries, point_rows = (size_t)runs * row;
	double *y = NULL, *col = NULL;
	int rc = -1;

	y = calloc(n * point_rows, sizeof(*y));
	col = calloc(runs, sizeof(*col));
	if (!y || !col) {
		sweep_fail(err, errlen, "out of memory");
		goto out;
	}
	for (unsigned r = 0; r < runs; r++)
		for (size_t i = 0; i < n; i++) {
			double *mine = &y[i * point_rows];

			if (progress)
				progress(d, first + i, r, runs, arg);
			if (d->before_run &&
			    d->before_run(d, env, first + i, r, runs, err, errlen) != 0)
				goto out;
			if (run_repetition(d, first + i, r, env, mine, &mine[r * row], err,
					   errlen) != 0)
				goto out;
		}
	if (d->rounds_done && d->rounds_done(d, env, first, n, runs, y, err, errlen) != 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		reduce_point(d, &y[i * point_rows], runs, col, &res[i]);
	rc = 0;
out:
	free(y);
	free(col);
	return rc;
}

int sweep_point(const struct sweep_def *d, size_t point, unsigned runs,
		const struct sweep_env *env, sweep_progress_fn progress, void *arg,
		struct sweep_point_result *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (point >= d->npoints || runs == 0)
		return sweep_fail(err, errlen, "%s: no point %zu", d->name, point);
	return measure(d, point, 1, runs, env, progress, arg, out, err, errlen);
}

int sweep_rounds(const struct sweep_def *d, unsigned runs, const struct sweep_env *env,
		 sweep_progress_fn progress, void *arg, struct sweep_point_result *res, char *err,
		 size_t errlen)
{
	if (runs == 0 || d->npoints == 0)
		return sweep_fail(err, errlen, "%s: nothing to measure", d->name);
	return measure(d, 0, d->npoints, runs, env, progress, arg, res, err, errlen);
}

/* --- rows ------------------------------------------------------------------------ */

void sweep_ratio_name(const struct sweep_def *d, size_t ratio, char *buf, size_t len)
{
	snprintf(buf, len, SWEEP_RATIO_PREFIX "%s / %s", d->series[d->ratio[ratio].num].name,
		 d->series[d->ratio[ratio].den].name);
}

void sweep_write_header(FILE *out)
{
	fputs("series,x,min,median,max\n", out);
}

static void write_row(FILE *out, const char *name, double x, const struct sweep_stat *st)
{
	if (st->n)
		fprintf(out, "%s,%.10g," SWEEP_VALUE_FORMAT "," SWEEP_VALUE_FORMAT
			     "," SWEEP_VALUE_FORMAT "\n",
			name, x, st->min, st->median, st->max);
}

void sweep_write_point(const struct sweep_def *d, size_t point,
		       const struct sweep_point_result *res, FILE *out)
{
	char name[2 * SWEEP_NAME_MAX + 16];

	for (size_t s = 0; s < d->nseries; s++)
		write_row(out, d->series[s].name, d->x[point], &res->series[s]);
	for (size_t q = 0; q < d->nratios; q++) {
		sweep_ratio_name(d, q, name, sizeof(name));
		write_row(out, name, d->x[point], &res->ratio[q]);
	}
}

/* The slot a row's series name fills: a series or ratio of @d, or NULL. */
static struct sweep_stat *row_slot(const struct sweep_def *d, struct sweep_point_result *pr,
				   const char *series)
{
	char name[2 * SWEEP_NAME_MAX + 16];

	for (size_t s = 0; s < d->nseries; s++)
		if (strcmp(series, d->series[s].name) == 0)
			return &pr->series[s];
	for (size_t q = 0; q < d->nratios; q++) {
		sweep_ratio_name(d, q, name, sizeof(name));
		if (strcmp(series, name) == 0)
			return &pr->ratio[q];
	}
	return NULL;
}

static long point_of(const struct sweep_def *d, double x)
{
	for (size_t i = 0; i < d->npoints; i++)
		if (fabs(d->x[i] - x) <= 1e-9 * fmax(1.0, fabs(x)))
			return (long)i;
	return -1;
}

static int parse_row(const struct sweep_def *d, char *line, struct sweep_point_result *res,
		     char *why, size_t whylen)
{
	char *field[5], *p = line, *end;
	double v[4];
	struct sweep_stat *slot;
	long point;

	for (int i = 0; i < 5; i++) {
		field[i] = p;
		p = strchr(p, ',');
		if ((i < 4) != (p != NULL))
			return sweep_fail(why, whylen, "expected 5 comma-separated fields");
		if (p)
			*p++ = '\0';
	}
	for (int i = 0; i < 4; i++) {
		errno = 0;
		v[i] = strtod(field[i + 1], &end);
		if (errno || end == field[i + 1] || *end)
			return sweep_fail(why, whylen, "'%s' is not a number", field[i + 1]);
	}
	point = point_of(d, v[0]);
	if (point < 0)
		return sweep_fail(why, whylen, "sweep %s has no point x = %s", d->name, field[1]);
	slot = row_slot(d, &res[point], field[0]);
	if (!slot)
		return sweep_fail(why, whylen, "sweep %s has no series '%s'", d->name, field[0]);
	if (slot->n)
		return sweep_fail(why, whylen, "a second row for '%s' at x = %s", field[0], field[1]);
	if (!(v[1] <= v[2] && v[2] <= v[3]))
		return sweep_fail(why, whylen, "min <= median <= max does not hold");
	*slot = (struct sweep_stat){ v[1], v[2], v[3], 1, v[1], v[3] };
	return 0;
}

int sweep_read_rows(const struct sweep_def *d, FILE *in, const char *name,
		    struct sweep_point_result *res, char *err, size_t errlen)
{
	char line[512], why[200];
	unsigned lineno = 0;

	while (fgets(line, sizeof(line), in)) {
		size_t n = strlen(line);

		lineno++;
		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		if (n && line[n - 1] == '\r')
			line[--n] = '\0';
		if (n == 0 || line[0] == '#' || strcmp(line, "series,x,min,median,max") == 0)
			continue;
		if (parse_row(d, line, res, why, sizeof(why)) != 0)
			return sweep_fail(err, errlen, "%s:%u: %s", name, lineno, why);
	}
	if (ferror(in))
		return sweep_fail(err, errlen, "%s: %s", name, strerror(errno));
	return 0;
}

long sweep_first_unmeasured(const struct sweep_def *d, const struct sweep_point_result *res)
{
	for (size_t i = 0; i < d->npoints; i++) {
		bool any = false;

		for (size_t s = 0; s < d->nseries; s++)
			any |= res[i].series[s].n > 0;
		for (size_t q = 0; q < d->nratios; q++)
			any |= res[i].ratio[q].n > 0;
		if (!any)
			return (long)i;
	}
	return -1;
}

/* --- result files --------------------------------------------------------------- */

static int write_csv(const struct sweep_def *d, const struct sweep_point_result *res,
		     bool ratios, const char *path, char *err, size_t errlen)
{
	char name[2 * SWEEP_NAME_MAX + 16];
	FILE *f = fopen(path, "w");

	if (!f)
		return sweep_fail(err, errlen, "%s: %s", path, strerror(errno));
	fprintf(f, "# ksmkit sweep %s: %s\n# x: %s; y: %s\n", d->name, d->title, d->xlabel,
		ratios ? "ratios, each taken within one repetition" : d->ylabel);
	for (size_t i = 0; d->xname && i < d->npoints; i++)
		fprintf(f, "# x = %g: %s\n", d->x[i], d->xname[i]);
	sweep_write_header(f);
	for (size_t i = 0; i < d->npoints; i++) {
		if (!ratios)
			for (size_t s = 0; s < d->nseries; s++)
				write_row(f, d->series[s].name, d->x[i], &res[i].series[s]);
		else
			for (size_t q = 0; q < d->nratios; q++) {
				sweep_ratio_name(d, q, name, sizeof(name));
				write_row(f, name + strlen(SWEEP_RATIO_PREFIX), d->x[i],
					  &res[i].ratio[q]);
			}
	}
	/* a write that failed before the last flush leaves only ferror() */
	errno = 0;
	if (fflush(f) != 0 || ferror(f)) {
		int saved = errno ? errno : EIO;

		fclose(f);
		return sweep_fail(err, errlen, "%s: %s", path, strerror(saved));
	}
	if (fclose(f) != 0)
		return sweep_fail(err, errlen, "%s: %s", path, strerror(errno));
	return 0;
}

#ifdef HAVE_PLOT
static int write_chart(const struct sweep_def *d, const struct sweep_point_result *res,
		       const char *path, char *err, size_t errlen)
{
	struct plot_chart *c = plot_new(d->bars ? PLOT_BARS : PLOT_LINES);
	int rc = -1;

	if (!c)
		return sweep_fail(err, errlen, "out of memory");
	if (plot_set_labels(c, d->title, d->xlabel, d->ylabel, err, errlen) != 0)
		goto out;
	if (d->logx)
		plot_set_scale(c, PLOT_X, PLOT_LOG10);
	for (size_t s = 0; s < d->nseries; s++) {
		int id = -1;

		for (size_t i = 0; i < d->npoints; i++) {
			const struct sweep_stat *st = &res[i].series[s];

			if (!st->n)
				continue;
			if (id < 0 && (id = plot_add_series(c, d->series[s].name, err, errlen)) < 0)
				goto out;
			if (id >= 0 && d->series[s].engine == SWEEP_KERNEL)
				plot_series_style(c, id, PLOT_AUTO_COLOR, PLOT_SOLID);
			if (plot_add_range(c, id, d->x[i], st->min, st->median, st->max, err,
					   errlen) != 0)
				goto out;
		}
	}
	if (plot_series_count(c) == 0) {
		rc = 0; /* nothing measured: no chart */
		goto out;
	}
	rc = plot_write(c, path, 900, 560, err, errlen);
out:
	plot_free(c);
	return rc;
}
#endif

int sweep_write_results(const struct sweep_def *d, const struct sweep_point_result *res,
			const char *dir, char *err, size_t errlen)
{
	char path[4096];

	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return sweep_fail(err, errlen, "%s: %s", dir, strerror(errno));
	snprintf(path, sizeof(path), "%s/%s.csv", dir, d->name);
	if (write_csv(d, res, false, path, err, errlen) != 0)
		return -1;
	if (d->nratios) {
		snprintf(path, sizeof(path), "%s/%s-ratios.csv", dir, d->name);
		if (write_csv(d, res, true, path, err, errlen) != 0)
			return -1;
	}
#ifdef HAVE_PLOT
	if (!d->xname || d->npoints <= 4) { /* a long table of named points is no chart */
		snprintf(path, sizeof(path), "%s/%s.png", dir, d->name);
		if (write_chart(d, res, path, err, errlen) != 0)
			return -1;
		snprintf(path, sizeof(path), "%s/%s.svg", dir, d->name);
		if (write_chart(d, res, path, err, errlen) != 0)
			return -1;
	}
#endif
	return 0;
}

/* --- summary -------------------------------------------------------------------- */

static void point_label(const struct sweep_def *d, size_t i, char *buf, size_t len)
{
	if (d->xname)
		snprintf(buf, len, "%s", d->xname[i]);
	else
		snprintf(buf, len, "%g", d->x[i]);
}

static void print_cell(const struct sweep_stat *st, int width, FILE *out)
{
	if (st->n)
		fprintf(out, " %*.4g", width, st->median);
	else
		fprintf(out, " %*s", width, "-");
}

void sweep_write_summary(const struct sweep_def *d, const struct sweep_point_result *res,
			 FILE *out)
{
	char label[SWEEP_NAME_MAX + 1], name[2 * SWEEP_NAME_MAX + 16];
	int xw = 12, cw[SWEEP_MAX_RATIOS];

	for (size_t i = 0; i < d->npoints; i++) {
		point_label(d, i, label, sizeof(label));
		if ((int)strlen(label) > xw)
			xw = (int)strlen(label);
	}
	fprintf(out, "%s: %s\nx: %s\ny: %s (medians)\n", d->name, d->title, d->xlabel, d->ylabel);
	fprintf(out, "%-*s", xw, "x");
	for (size_t s = 0; s < d->nseries; s++)
		fprintf(out, " %14s", d->series[s].name);
	fputc('\n', out);
	for (size_t i = 0; i < d->npoints; i++) {
		point_label(d, i, label, sizeof(label));
		fprintf(out, "%-*s", xw, label);
		for (size_t s = 0; s < d->nseries; s++)
			print_cell(&res[i].series[s], 14, out);
		fputc('\n', out);
	}
	if (!d->nratios)
		return;
	fprintf(out, "ratios (median over repetitions, each measured side by side):\n");
	fprintf(out, "%-*s", xw, "x");
	for (size_t q = 0; q < d->nratios; q++) {
		sweep_ratio_name(d, q, name, sizeof(name));
		cw[q] = (int)strlen(name + strlen(SWEEP_RATIO_PREFIX));
		if (cw[q] < 10)
			cw[q] = 10;
		fprintf(out, " %*s", cw[q], name + strlen(SWEEP_RATIO_PREFIX));
	}
	fputc('\n', out);
	for (size_t i = 0; i < d->npoints; i++) {
		point_label(d, i, label, sizeof(label));
		fprintf(out, "%-*s", xw, label);
		for (size_t q = 0; q < d->nratios; q++)
			print_cell(&res[i].ratio[q], cw[q], out);
		fputc('\n', out);
	}
}
