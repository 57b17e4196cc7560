/*
 * compare.c - row-by-row and page-by-page comparison of two runs of one
 * workload, and the reports (table, JSON). See compare.h for what is
 * compared and how.
 */
#include "compare.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void cmp_report_init(struct cmp_report *r)
{
	memset(r, 0, sizeof(*r));
}

void cmp_report_free(struct cmp_report *r)
{
	free(r->diff);
	cmp_report_init(r);
}

bool cmp_report_equal(const struct cmp_report *r)
{
	return r->ndiffs == 0 && r->rows_missing == 0;
}

static int add_diff(struct cmp_report *r, uint64_t scan, const char *what, int64_t a, int64_t b,
		    const char *detail)
{
	struct cmp_diff *d;

	if (r->ndiffs == r->diffs_cap) {
		size_t cap = r->diffs_cap ? r->diffs_cap * 2 : 16;
		struct cmp_diff *grown = realloc(r->diff, cap * sizeof(*grown));

		if (!grown)
			return -1;
		r->diff = grown;
		r->diffs_cap = cap;
	}
	d = &r->diff[r->ndiffs++];
	memset(d, 0, sizeof(*d));
	d->scan = scan;
	snprintf(d->what, sizeof(d->what), "%s", what);
	d->a = a;
	d->b = b;
	snprintf(d->detail, sizeof(d->detail), "%s", detail ? detail : "");
	return 0;
}

static bool close_enough(int64_t a, int64_t b, const struct cmp_options *opt)
{
	double x = (double)a, y = (double)b, m;

	if (a == b)
		return true;
	if (!opt || opt->tolerance <= 0)
		return false;
	m = x < 0 ? -x : x;
	if ((y < 0 ? -y : y) > m)
		m = y < 0 ? -y : y;
	if (m < 1)
		m = 1;
	return (x > y ? x - y : y - x) <= opt->tolerance * m;
}

/* --- traces ----------------------------------------------------------------- */

/* Counters the kernel never resets: compared as the change since the first row. */
static bool cumulative(enum trace_counter c)
{
	return c == TRACE_PAGES_SCANNED || c == TRACE_PAGES_SKIPPED;
}

static const struct trace_row *find_row(const struct trace *t, enum trace_row_kind kind,
					uint64_t scan)
{
	for (size_t i = 0; i < t->nrows; i++)
		if (t->row[i].kind == kind && t->row[i].scan == scan)
			return &t->row[i];
	return NULL;
}

static bool same_processes(const struct trace *a, const struct trace *b)
{
	if (a->nprocs != b->nprocs)
		return false;
	for (size_t i = 0; i < a->nprocs; i++)
		if (strcmp(a->proc_name[i], b->proc_name[i]) != 0)
			return false;
	return true;
}

static int compare_counters(const struct trace_row *ra, const struct trace_row *rb,
			    const struct trace_row *base_a, const struct trace_row *base_b,
			    const struct cmp_options *opt, struct cmp_report *r)
{
	for (int c = 0; c < TRACE_COUNTER_COUNT; c++) {
		int64_t a = ra->counter[c], b = rb->counter[c];

		if (opt && (opt->skip_counters >> c) & 1)
			continue;
		if (cumulative(c)) {
			if (ra == base_a)
				continue; /* the offsets are unknown at the first row */
			a -= base_a->counter[c];
			b -= base_b->counter[c];
		}
		if (!close_enough(a, b, opt) &&
		    add_diff(r, ra->scan, trace_counter_name(c), a, b, NULL) != 0)
			return -1;
	}
	return 0;
}

static int compare_processes(const struct trace *t, const struct trace_row *ra,
			     const struct trace_row *rb, const struct cmp_options *opt,
			     struct cmp_report *r)
{
	char what[TRACE_NAME_MAX + 40];

	for (size_t p = 0; p < t->nprocs; p++) {
		const struct trace_proc_stat *pa = &ra->proc[p], *pb = &rb->proc[p];

		if (pa->present != pb->present) {
			snprintf(what, sizeof(what), "%s.present", t->proc_name[p]);
			if (add_diff(r, ra->scan, what, pa->present, pb->present, NULL) != 0)
				return -1;
			continue;
		}
		if (!pa->present)
			continue;
		for (int f = 0; f < TRACE_PROC_FIELD_COUNT; f++) {
			if ((opt && (opt->skip_fields >> f) & 1) ||
			    close_enough(pa->field[f], pb->field[f], opt))
				continue;
			snprintf(what, sizeof(what), "%s.%s", t->proc_name[p], trace_proc_field_name(f));
			if (add_diff(r, ra->scan, what, pa->field[f], pb->field[f], NULL) != 0)
				return -1;
		}
	}
	return 0;
}

int cmp_traces(const struct trace *a, const struct trace *b, const struct cmp_options *opt,
	       struct cmp_report *r)
{
	const struct trace_row *base_a = NULL, *base_b = NULL;

	if (!same_processes(a, b))
		return -1;
	if (opt) {
		r->skip_counters = opt->skip_counters;
		r->skip_fields = opt->skip_fields;
	}
	for (size_t i = 0; i < a->nrows; i++) {
		const struct trace_row *ra = &a->row[i], *rb;

		if (ra->kind != TRACE_ROW_SCAN)
			continue;
		rb = find_row(b, TRACE_ROW_SCAN, ra->scan);
		if (!rb && opt && opt->ignore_missing_rows)
			continue;
		if (!rb) {
			r->rows_missing++;
			if (add_diff(r, ra->scan, "row missing on the second side", 1, 0, NULL) != 0)
				return -1;
			continue;
		}
		if (!ra->valid || !rb->valid)
			continue; /* a row the backend itself distrusts proves nothing */
		if (!base_a) {
			base_a = ra;
			base_b = rb;
		}
		r->rows_compared++;
		if (compare_counters(ra, rb, base_a, base_b, opt, r) != 0 ||
		    compare_processes(a, ra, rb, opt, r) != 0)
			return -1;
	}
	for (size_t i = 0; i < b->nrows && !(opt && opt->ignore_missing_rows); i++)
		if (b->row[i].kind == TRACE_ROW_SCAN && !find_row(a, TRACE_ROW_SCAN, b->row[i].scan)) {
			r->rows_missing++;
			if (add_diff(r, b->row[i].scan, "row missing on the first side", 0, 1, NULL))
				return -1;
		}
	return 0;
}

/* --- partitions ----------------------------------------------------------- */

/* A page with its side's class: the smallest key among pages of its frame. */
struct keyed {
	uint64_t key[3];   /* proc, region, page */
	uint64_t frame;
	uint32_t flags;
	uint64_t rep[3];   /* the class representative's key */
};

static int key_cmp(const uint64_t *x, const uint64_t *y)
{
	for (int i = 0; i < 3; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

static int by_key(const void *pa, const void *pb)
{
	return key_cmp(((const struct keyed *)pa)->key, ((const struct keyed *)pb)->key);
}

static int by_frame_then_key(const void *pa, const void *pb)
{
	const struct keyed *a = pa, *b = pb;

	if (a->frame != b->frame)
		return a->frame < b->frame ? -1 : 1;
	return key_cmp(a->key, b->key);
}

/* The pages of scan @scan as keyed records with representatives, sorted by key. */
static struct keyed *side_of_scan(const struct trace_page *p, size_t n, uint64_t scan, size_t *count)
{
	struct keyed *k = calloc(n ? n : 1, sizeof(*k));
	size_t m = 0;

	if (!k)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (p[i].scan != scan)
			continue;
		k[m].key[0] = p[i].proc;
		k[m].key[1] = p[i].region;
		k[m].key[2] = p[i].page;
		k[m].frame = p[i].frame;
		k[m].flags = p[i].flags;
		m++;
	}
	/* representatives: within each frame, the first key (absent and zero pages stand alone) */
	qsort(k, m, sizeof(*k), by_frame_then_key);
	for (size_t i = 0; i < m; i++) {
		bool shares = (k[i].flags & TRACE_PAGE_PRESENT) && !(k[i].flags & TRACE_PAGE_ZERO);

		if (shares && i > 0 && k[i - 1].frame == k[i].frame &&
		    (k[i - 1].flags & TRACE_PAGE_PRESENT) && !(k[i - 1].flags & TRACE_PAGE_ZERO))
			memcpy(k[i].rep, k[i - 1].rep, sizeof(k[i].rep));
		else
			memcpy(k[i].rep, k[i].key, sizeof(k[i].rep));
	}
	qsort(k, m, sizeof(*k), by_key);
	*count = m;
	return k;
}

static void describe_page(const uint64_t *key, const struct trace_page_names *names, char *buf,
			  size_t len)
{
	snprintf(buf, len, "%s/%s page %" PRIu64, names ? names->proc[key[0]] : "?",
		 names ? names->region[key[1]] : "?", key[2]);
}

static uint32_t page_kind(uint32_t flags)
{
	return flags & (TRACE_PAGE_PRESENT | TRACE_PAGE_ZERO);
}

static int compare_one_scan(const struct keyed *a, size_t na, const struct keyed *b, size_t nb,
			    uint64_t scan, const struct trace_page_names *names, struct cmp_report *r)
{
	char x[64], y[64], detail[200];

	if (na != nb)
		return add_diff(r, scan, "partition pages", (int64_t)na, (int64_t)nb, NULL);
	for (size_t i = 0; i < na; i++) {
		if (key_cmp(a[i].key, b[i].key) != 0) {
			describe_page(a[i].key, names, x, sizeof(x));
			return add_diff(r, scan, "partition pages", (int64_t)na, (int64_t)nb, x);
		}
		if (page_kind(a[i].flags) != page_kind(b[i].flags)) {
			describe_page(a[i].key, names, x, sizeof(x));
			snprintf(detail, sizeof(detail), "%s: present/zero flags differ", x);
			return add_diff(r, scan, "partition", (int64_t)a[i].flags, (int64_t)b[i].flags,
					detail);
		}
		if (key_cmp(a[i].rep, b[i].rep) != 0) {
			describe_page(a[i].key, names, x, sizeof(x));
			describe_page(key_cmp(a[i].rep, b[i].rep) < 0 ? a[i].rep : b[i].rep, names,
				      y, sizeof(y));
			snprintf(detail, sizeof(detail), "%s shares a page with %s on one side only",
				 x, y);
			return add_diff(r, scan, "partition", 0, 0, detail);
		}
	}
	return 0;
}

int cmp_partitions(const struct trace_page *a, size_t na, const struct trace_page *b, size_t nb,
		   const struct trace_page_names *names, struct cmp_report *r)
{
	uint64_t last = UINT64_MAX;

	for (size_t i = 0; i < na; i++) {
		uint64_t scan = a[i].scan;
		struct keyed *ka, *kb;
		size_t ca, cb;
		bool on_b = false;
		int rc;

		if (scan == last)
			continue;
		last = scan;
		for (size_t j = 0; j < nb && !on_b; j++)
			on_b = b[j].scan == scan;
		if (!on_b)
			continue;
		ka = side_of_scan(a, na, scan, &ca);
		kb = side_of_scan(b, nb, scan, &cb);
		rc = ka && kb ? compare_one_scan(ka, ca, kb, cb, scan, names, r) : -1;
		free(ka);
		free(kb);
		if (rc != 0)
			return -1;
		r->partitions_compared++;
	}
	return 0;
}

/* --- scan speed ------------------------------------------------------------- */

int cmp_scan_speed(const struct trace *t, double *wall_mib_s, double *cpu_mib_s)
{
	return cmp_scan_speed_between(t, 1, UINT64_MAX, wall_mib_s, cpu_mib_s);
}

int cmp_scan_speed_between(const struct trace *t, uint64_t from, uint64_t to, double *wall_mib_s,
			   double *cpu_mib_s)
{
	const struct trace_row *first = NULL, *last = NULL;
	double mib;

	for (size_t i = 0; i < t->nrows; i++) {
		const struct trace_row *r = &t->row[i];

		if (r->kind != TRACE_ROW_SCAN || r->scan < from || r->scan > to)
			continue;
		if (!first)
			first = r;
		last = r;
	}
	if (!first || first == last || last->time_ns <= first->time_ns)
		return -1;
	mib = (double)(last->counter[TRACE_PAGES_SCANNED] - first->counter[TRACE_PAGES_SCANNED]) *
	      4096.0 / (1024.0 * 1024.0);
	*wall_mib_s = mib / ((double)(last->time_ns - first->time_ns) / 1e9);
	*cpu_mib_s = last->ksmd_cpu_ns > first->ksmd_cpu_ns
			     ? mib / ((double)(last->ksmd_cpu_ns - first->ksmd_cpu_ns) / 1e9)
			     : 0;
	return 0;
}

/* --- reports ------------------------------------------------------------------ */

static const struct cmp_diff *first_diff_of_scan(const struct cmp_report *r, uint64_t scan)
{
	for (size_t i = 0; i < r->ndiffs; i++)
		if (r->diff[i].scan == scan)
			return &r->diff[i];
	return NULL;
}

static void print_side_by_side(const struct trace_row *ra, const struct trace_row *rb,
			       uint32_t skip, FILE *out)
{
	static const enum trace_counter shown[] = {
		TRACE_PAGES_SHARED, TRACE_PAGES_SHARING, TRACE_PAGES_UNSHARED,
		TRACE_PAGES_VOLATILE, TRACE_STABLE_NODE_CHAINS, TRACE_STABLE_NODE_DUPS,
		TRACE_KSM_ZERO_PAGES, TRACE_GENERAL_PROFIT,
	};

	for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
		int64_t a = ra->counter[shown[i]], b = rb ? rb->counter[shown[i]] : 0;

		if ((skip >> shown[i]) & 1)
			continue;
		fprintf(out, " %s %" PRId64 "|", trace_counter_name(shown[i]), a);
		if (rb)
			fprintf(out, "%" PRId64 "%s", b, a == b ? "" : "*");
		else
			fprintf(out, "-");
	}
	fputc('\n', out);
}

/* Why no scan speed is reported for these traces, or NULL. */
static const char *no_speed_because(const struct trace *a, const struct trace *b,
				    const struct cmp_report *r)
{
	if (strcmp(a->source, "guest") == 0 || strcmp(b->source, "guest") == 0)
		return "a side ran in a qemu TCG guest, whose times measure the emulator, not KSM";
	if ((r->skip_counters >> TRACE_PAGES_SCANNED) & 1)
		return "the kernel that ran has no pages_scanned counter";
	return NULL;
}

/* Scan speeds side by side: the simulator's prediction against the measure. */
static void print_speeds(const struct trace *a, const struct trace *b, const struct cmp_report *r,
			 const char *name_a, const char *name_b, FILE *out)
{
	const char *why = no_speed_because(a, b, r);
	double wa, ca, wb, cb;

	if (why) {
		fprintf(out, "# no scan speed: %s\n", why);
		return;
	}
	if (cmp_scan_speed(a, &wa, &ca) != 0 || cmp_scan_speed(b, &wb, &cb) != 0)
		return;
	fprintf(out, "# scan speed, MiB/s: wall clock %s %.1f, %s %.1f (%s/%s %.2f); ksmd CPU %s "
		     "%.1f, %s %.1f (%.2f)\n", name_a, wa, name_b, wb, name_a, name_b,
		wb > 0 ? wa / wb : 0, name_a, ca, name_b, cb, cb > 0 ? ca / cb : 0);
}

void cmp_write_table(const struct trace *a, const struct trace *b, const struct cmp_report *r,
		     const char *name_a, const char *name_b, FILE *out)
{
	int skipped = __builtin_popcount(r->skip_counters);

	if (skipped)
		fprintf(out, "# %s | %s, per full scan (* differs); %d counters and the ksm_stat "
			     "fields the kernel has are compared (it lacks %d:", name_a, name_b,
			TRACE_COUNTER_COUNT - skipped, skipped);
	for (int c = 0; skipped && c < TRACE_COUNTER_COUNT; c++)
		if ((r->skip_counters >> c) & 1)
			fprintf(out, " %s", trace_counter_name(c));
	if (skipped)
		fputs(")\n", out);
	else
		fprintf(out, "# %s | %s, per full scan (* differs); all %d counters and every "
			     "process's ksm_stat are compared\n", name_a, name_b, TRACE_COUNTER_COUNT);
	for (size_t i = 0; i < a->nrows; i++) {
		const struct trace_row *ra = &a->row[i];
		const struct cmp_diff *d;

		if (ra->kind != TRACE_ROW_SCAN)
			continue;
		fprintf(out, "scan %3" PRIu64 ":", ra->scan);
		print_side_by_side(ra, find_row(b, TRACE_ROW_SCAN, ra->scan), r->skip_counters, out);
		d = first_diff_of_scan(r, ra->scan);
		if (d && d == &r->diff[0])
			fprintf(out, "  >>> first divergence: scan %" PRIu64 ", %s: %s %" PRId64
				     ", %s %" PRId64 "%s%s\n", d->scan, d->what, name_a, d->a, name_b,
				d->b, d->detail[0] ? ": " : "", d->detail);
	}
	for (size_t i = 0; i < r->ndiffs; i++) {
		const struct cmp_diff *d = &r->diff[i];

		fprintf(out, "%s scan %" PRIu64 " %s: %s %" PRId64 ", %s %" PRId64 " (diff %" PRId64
			     ")%s%s\n", i == 0 ? "FIRST" : "     ", d->scan, d->what, name_a, d->a,
			name_b, d->b, d->a - d->b, d->detail[0] ? ": " : "", d->detail);
	}
	print_speeds(a, b, r, name_a, name_b, out);
	fprintf(out, "# %zu rows compared, %zu missing, %zu partitions compared: %s\n",
		r->rows_compared, r->rows_missing, r->partitions_compared,
		cmp_report_equal(r) ? "identical" : "DIFFERENT");
}

static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(out, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

static void json_diff(FILE *out, const struct cmp_diff *d)
{
	fprintf(out, "{\"scan\":%" PRIu64 ",\"what\":", d->scan);
	json_string(out, d->what);
	fprintf(out, ",\"a\":%" PRId64 ",\"b\":%" PRId64 ",\"detail\":", d->a, d->b);
	json_string(out, d->detail);
	fputc('}', out);
}

static void json_counters(FILE *out, const struct trace_row *row)
{
	fputc('{', out);
	for (int c = 0; c < TRACE_COUNTER_COUNT; c++)
		fprintf(out, "%s\"%s\":%" PRId64, c ? "," : "", trace_counter_name(c),
			row->counter[c]);
	fputc('}', out);
}

int cmp_write_json(const struct trace *a, const struct trace *b, const struct cmp_report *r,
		   FILE *out)
{
	bool first = true;

	fprintf(out, "{\"format\":\"ksmkit-compare\",\"version\":1,\"equal\":%s,"
		     "\"rows_compared\":%zu,\"rows_missing\":%zu,\"partitions_compared\":%zu,"
		     "\"first_divergence\":",
		cmp_report_equal(r) ? "true" : "false", r->rows_compared, r->rows_missing,
		r->partitions_compared);
	if (r->ndiffs)
		json_diff(out, &r->diff[0]);
	else
		fputs("null", out);
	fputs(",\"differences\":[", out);
	for (size_t i = 0; i < r->ndiffs; i++) {
		if (i)
			fputc(',', out);
		json_diff(out, &r->diff[i]);
	}
	fputs("]", out);
	if (no_speed_because(a, b, r)) {
		fputs(",\"scan_speed_omitted\":", out);
		json_string(out, no_speed_because(a, b, r));
	} else {
		double wa, ca, wb, cb;

		if (cmp_scan_speed(a, &wa, &ca) == 0 && cmp_scan_speed(b, &wb, &cb) == 0)
			fprintf(out, ",\"scan_speed_mib_s\":{\"a_wall\":%.3f,\"b_wall\":%.3f,"
				     "\"a_cpu\":%.3f,\"b_cpu\":%.3f}", wa, wb, ca, cb);
	}
	fputs(",\"rows\":[", out);
	for (size_t i = 0; i < a->nrows; i++) {
		const struct trace_row *ra = &a->row[i], *rb;

		if (ra->kind != TRACE_ROW_SCAN)
			continue;
		rb = find_row(b, TRACE_ROW_SCAN, ra->scan);
		fprintf(out, "%s{\"scan\":%" PRIu64 ",\"a\":", first ? "" : ",", ra->scan);
		json_counters(out, ra);
		fputs(",\"b\":", out);
		if (rb)
			json_counters(out, rb);
		else
			fputs("null", out);
		fputc('}', out);
		first = false;
	}
	fputs("]}\n", out);
	return ferror(out) ? -1 : 0;
}
