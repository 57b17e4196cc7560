/*
 * calib.c - measuring the cost model: microbenchmarks, calibration runs on
 * the kernel and in the simulator, and the least-squares fit between them.
 * See calib.h for the method.
 */
#include "calib.h"
#include "backend.h"
#include "content.h"
#include "sim_driver.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

void calib_options_init(struct calib_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->pages = 65536;
	opt->runs = 7;
	opt->repeats = 3;
	opt->kernel = true;
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_RAW, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* --- microbenchmarks ------------------------------------------------------ */

#define MICRO_REPS 4000

static double time_checksums(void)
{
	static uint8_t page[CONTENT_PAGE_SIZE];
	volatile uint32_t sink = 0;
	double t0;

	content_fill(page, 0x0123456789abcdefULL);
	t0 = now_ns();
	for (int i = 0; i < MICRO_REPS; i++) {
		page[i % CONTENT_PAGE_SIZE] ^= 1; /* a different page each time */
		sink ^= content_checksum(page);
	}
	(void)sink;
	return (now_ns() - t0) / MICRO_REPS;
}

static double time_memcmp_per_byte(void)
{
	static uint8_t a[CONTENT_PAGE_SIZE], b[CONTENT_PAGE_SIZE];
	volatile int sink = 0;
	double t0;

	content_fill(a, 77);
	content_fill(b, 77);
	t0 = now_ns();
	for (int i = 0; i < MICRO_REPS; i++) {
		b[CONTENT_PAGE_SIZE - 1] = (uint8_t)i; /* equal but the last byte */
		sink += memcmp(a, b, CONTENT_PAGE_SIZE);
	}
	(void)sink;
	return (now_ns() - t0) / MICRO_REPS / CONTENT_PAGE_SIZE;
}

/*
 * A sampled checksum (sim/volatility_partial.c's smallest sample: 16 words,
 * one every 256 bytes, each in a cache line of its own) against the whole
 * page's, both over pages that are not in the cache (128 MiB of them, four
 * times this machine's last-level cache and more than most): the ratio of
 * the two times, which is what a word of a sample costs beside a page.
 * Returns -1 when the memory cannot be had.
 */
#define SAMPLE_WORDS 16u
#define SAMPLE_PAGES 32768u

static double time_sample_ratio(void)
{
	const size_t words = CONTENT_PAGE_SIZE / 8, stride = words / SAMPLE_WORDS;
	uint64_t *mem = mmap(NULL, (size_t)SAMPLE_PAGES * CONTENT_PAGE_SIZE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t sample[SAMPLE_WORDS];
	volatile uint64_t sink = 0;
	double t0, page_ns, sample_ns;

	if (mem == MAP_FAILED)
		return -1;
	for (size_t i = 0; i < (size_t)SAMPLE_PAGES * words; i++)
		mem[i] = i * 0x9e3779b97f4a7c15ULL; /* every page different */
	t0 = now_ns();
	for (size_t p = 0; p < SAMPLE_PAGES; p++)
		sink ^= content_checksum(mem + p * words);
	page_ns = now_ns() - t0;
	t0 = now_ns();
	for (size_t p = 0; p < SAMPLE_PAGES; p++) {
		for (size_t i = 0; i < SAMPLE_WORDS; i++)
			sample[i] = mem[p * words + i * stride];
		sink ^= XXH64(sample, sizeof(sample), 0);
	}
	sample_ns = now_ns() - t0;
	(void)sink;
	munmap(mem, (size_t)SAMPLE_PAGES * CONTENT_PAGE_SIZE);
	return page_ns > 0 ? sample_ns / page_ns : -1;
}

/*
 * /proc/self/clear_refs with 1 walks every PTE clearing its young bit and
 * flushing: on freshly touched pages that is a test-and-clear with a flush;
 * right after, with the bits already clear, it is a test alone.
 */
static int time_clear_refs(double *test_ns, double *flush_ns)
{
	const size_t n = 8192;
	uint8_t *p = mmap(NULL, n * CONTENT_PAGE_SIZE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	double t0, t1, t2;
	int rc = -1;

	if (p == MAP_FAILED || fd < 0)
		goto out;
	madvise(p, n * CONTENT_PAGE_SIZE, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < n; i++)
		p[i * CONTENT_PAGE_SIZE] = 1;
	t0 = now_ns();
	if (write(fd, "1", 1) != 1)
		goto out;
	t1 = now_ns();
	if (write(fd, "1", 1) != 1)
		goto out;
	t2 = now_ns();
	*test_ns = (t2 - t1) / n;
	*flush_ns = (t1 - t0) / n - *test_ns;
	if (*flush_ns < 0)
		*flush_ns = 0;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (p != MAP_FAILED)
		munmap(p, n * CONTENT_PAGE_SIZE);
	return rc;
}

void calib_micro(unsigned runs, struct sim_costs *c)
{
	double *v = calloc(runs ? runs : 1, sizeof(*v)), *w;

	w = calloc(runs ? runs : 1, sizeof(*w));
	if (!v || !w || !runs)
		goto out;
	for (unsigned i = 0; i < runs; i++)
		v[i] = time_checksums();
	c->checksum_ns = median(v, runs);
	for (unsigned i = 0; i < runs; i++)
		v[i] = time_sample_ratio();
	if (median(v, runs) > 0)
		c->sample_word_ns = c->checksum_ns * median(v, runs) / SAMPLE_WORDS;
	for (unsigned i = 0; i < runs; i++)
		v[i] = time_memcmp_per_byte();
	c->memcmp_byte_ns = median(v, runs);
	for (unsigned i = 0; i < runs; i++)
		if (time_clear_refs(&v[i], &w[i]) != 0)
			goto out;
	c->dirty_test_ns = median(v, runs);
	c->tlb_flush_ns = median(w, runs);
	/* a PMD's bit is one entry too: its flush costs about a PTE's */
	c->thp_flush_ns = c->tlb_flush_ns;
out:
	free(v);
	free(w);
}

/* --- least squares --------------------------------------------------------- */

/*
 * Solve the normal equations over the columns in @use; 0, or -1 if singular.
 * Columns are scaled to a largest entry of 1 first: the unknowns range from
 * a batch (one per scan) to memcmp bytes (10^9 per scan).
 */
static int solve_columns(const double *a, const double *b, size_t m, size_t n, const bool *use,
			 double *x)
{
	double ata[8][9] = { { 0 } }, scale[8];
	size_t idx[8], k = 0;

	for (size_t j = 0; j < n; j++) {
		if (!use[j])
			continue;
		scale[k] = 0;
		for (size_t i = 0; i < m; i++)
			if (fabs(a[i * n + j]) > scale[k])
				scale[k] = fabs(a[i * n + j]);
		if (scale[k] == 0)
			return -1;
		idx[k++] = j;
	}
	for (size_t r = 0; r < k; r++) {
		for (size_t c = 0; c < k; c++)
			for (size_t i = 0; i < m; i++)
				ata[r][c] += a[i * n + idx[r]] / scale[r] * a[i * n + idx[c]] / scale[c];
		for (size_t i = 0; i < m; i++)
			ata[r][k] += a[i * n + idx[r]] / scale[r] * b[i];
	}
	for (size_t col = 0; col < k; col++) { /* Gaussian elimination, partial pivoting */
		size_t piv = col;

		for (size_t r = col + 1; r < k; r++)
			if (fabs(ata[r][col]) > fabs(ata[piv][col]))
				piv = r;
		if (fabs(ata[piv][col]) < 1e-9 * (double)m)
			return -1;
		for (size_t c = 0; c <= k; c++) {
			double t = ata[col][c];

			ata[col][c] = ata[piv][c];
			ata[piv][c] = t;
		}
		for (size_t r = 0; r < k; r++) {
			double f;

			if (r == col)
				continue;
			f = ata[r][col] / ata[col][col];
			for (size_t c = col; c <= k; c++)
				ata[r][c] -= f * ata[col][c];
		}
	}
	for (size_t j = 0; j < n; j++)
		x[j] = 0;
	for (size_t r = 0; r < k; r++)
		x[idx[r]] = ata[r][k] / ata[r][r] / scale[r];
	return 0;
}

int calib_solve(const double *a, const double *b, size_t m, size_t n, double *x)
{
	bool use[8];

	if (n > 8 || m < n)
		return -1;
	for (size_t j = 0; j < n; j++)
		use[j] = true;
	for (;;) {
		size_t worst = n;

		if (solve_columns(a, b, m, n, use, x) != 0)
			return -1;
		for (size_t j = 0; j < n; j++)
			if (use[j] && x[j] < 0 && (worst == n || x[j] < x[worst]))
				worst = j;
		if (worst == n)
			return 0;
		use[worst] = false; /* a negative cost: drop that column and refit */
	}
}

/* --- calibration workloads ---------------------------------------------------- */

enum unknown { U_VISIT, U_VISIT_PMD, U_CHECKSUM, U_MEMCMP, U_LEVEL, U_MERGE, U_BATCH, U_COUNT };

struct calib_workload {
	const char *name;
	const char *text; /* printf format taking the page count (batches: two) */
	uint64_t first_scan; /* rows from this scan on enter the fit */
};

/* smart_scan = 0 so that every page is processed every scan; pages_to_scan
 * above the page count so that a full scan is one batch. */
static const struct calib_workload workloads[] = {
	{ "at-rest", "[global]\nscans = 6\nsmart_scan = 0\npages_to_scan = 1000000\n"
		     "sleep_millisecs = 20\n[region a]\npages = %llu\nfill = same\nvalue = 5\n", 2 },
	/* the same at rest, in 40 batches a scan: the cost of a batch */
	{ "batches", "[global]\nscans = 5\nsmart_scan = 0\npages_to_scan = %llu\n"
		     "sleep_millisecs = 1\n[region a]\npages = %llu\nfill = same\nvalue = 5\n", 3 },
	{ "unique", "[global]\nscans = 5\nsmart_scan = 0\npages_to_scan = 1000000\n"
		    "sleep_millisecs = 20\n[region a]\npages = %llu\nfill = unique\n", 2 },
	{ "volatile", "[global]\nscans = 5\nsmart_scan = 0\npages_to_scan = 1000000\n"
		      "sleep_millisecs = 20\n[region a]\npages = %llu\nfill = same\nvalue = 5\n"
		      "[writer w]\nregion = a\noffset = 4088\nvalue = fresh\nwhen = every-scan\n", 2 },
	/* the same in THPs: what a visit costs where the walk ends at a PMD */
	{ "volatile-thp", "[global]\nscans = 5\nsmart_scan = 0\npages_to_scan = 1000000\n"
			  "sleep_millisecs = 20\n[region a]\npages = %llu\nfill = same\nvalue = 5\n"
			  "thp = always\n[writer w]\nregion = a\noffset = 4088\nvalue = fresh\n"
			  "when = every-scan\n", 2 },
	{ "late-differ", "[global]\nscans = 5\nsmart_scan = 0\npages_to_scan = 1000000\n"
			 "sleep_millisecs = 20\n[region a]\npages = %llu\nfill = same\nvalue = 5\n"
			 "[event e]\nat = after-scan:0\naction = write\nregion = a\noffset = 4088\n"
			 "value = fresh\n", 2 },
};

#define NWORKLOADS (sizeof(workloads) / sizeof(workloads[0]))

/* The simulator's work per full scan, recorded by the scan hook. */
struct work_log {
	struct sim_work w[64];
	size_t n;
};

static void log_work(void *arg, uint64_t scan, const struct sim *s, const int *mm_of)
{
	struct work_log *log = arg;

	(void)mm_of;
	if (scan < 64 && scan == log->n) {
		sim_work_get(s, &log->w[scan]);
		log->n++;
	}
}

/* One equation per scan: the work of that scan, by unknown. */
static void work_row(const struct sim_work *now, const struct sim_work *before, double *row)
{
	row[U_VISIT] = (double)((now->visits - now->pmd_visits) -
				(before->visits - before->pmd_visits));
	row[U_VISIT_PMD] = (double)(now->pmd_visits - before->pmd_visits);
	row[U_CHECKSUM] = (double)(now->checksums - before->checksums);
	row[U_MEMCMP] = (double)(now->memcmp_bytes - before->memcmp_bytes);
	row[U_LEVEL] = (double)(now->tree_levels - before->tree_levels);
	row[U_MERGE] = (double)(now->merges - before->merges);
	row[U_BATCH] = (double)(now->batches - before->batches);
}

#define MAX_EQUATIONS 256

struct system {
	double a[MAX_EQUATIONS * U_COUNT], b[MAX_EQUATIONS];
	double idle[MAX_EQUATIONS]; /* wall time between the rows not spent by ksmd, ns */
	bool steps[MAX_EQUATIONS];  /* the workload had steps after that scan (pauses) */
	char name[MAX_EQUATIONS][32];
	uint64_t scan[MAX_EQUATIONS];
	size_t m;
};

static void note(const struct calib_options *opt, const char *what)
{
	char line[256];

	if (!opt->note)
		return;
	snprintf(line, sizeof(line), "calibrate: %s", what);
	opt->note(line, opt->note_arg);
}

/* One equation per valid scan row of the kernel's @kt (the work of that scan
 * from the simulator's @log, ksmd's measured CPU time). */
static void add_equations(const struct calib_workload *cw, const struct workload *wl,
			  const struct work_log *log, const struct trace *kt, struct system *sys)
{
	for (size_t i = 1; i < kt->nrows && i < log->n; i++) {
		const struct trace_row *r = &kt->row[i], *p = &kt->row[i - 1];

		if (r->kind != TRACE_ROW_SCAN || p->kind != TRACE_ROW_SCAN || !r->valid ||
		    r->scan < cw->first_scan || sys->m >= MAX_EQUATIONS)
			continue;
		work_row(&log->w[r->scan], &log->w[r->scan - 1], &sys->a[sys->m * U_COUNT]);
		sys->b[sys->m] = (double)(r->ksmd_cpu_ns - p->ksmd_cpu_ns);
		sys->idle[sys->m] = (double)(r->time_ns - p->time_ns) - sys->b[sys->m];
		/* rows without a plain 20 ms sleep a scan say nothing about sleeps */
		sys->steps[sys->m] = wl->nwriters > 0 || strcmp(cw->name, "batches") == 0;
		snprintf(sys->name[sys->m], sizeof(sys->name[0]), "%s", cw->name);
		sys->scan[sys->m] = r->scan;
		sys->m++;
	}
}

/* Run one calibration workload on both engines and add its equations. */
static int run_workload(const struct calib_options *opt, const struct calib_workload *cw,
			struct system *sys, struct calib_result *res, char *err, size_t errlen)
{
	char text[1024], msg[512];
	struct workload *wl = NULL;
	struct wl_error werr;
	struct work_log log = { .n = 0 };
	struct sim_run_options sopt = { .scan_hook = log_work, .hook_arg = &log };
	struct trace *st = NULL;
	struct kb_options kopt;
	struct kb_result kres = { 0 };
	int status, rc = -1;

	/* the generated text is ours: the one number is the page count */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	if (strcmp(cw->name, "batches") == 0)
		snprintf(text, sizeof(text), cw->text, (unsigned long long)(opt->pages / 40),
			 (unsigned long long)opt->pages);
	else
		snprintf(text, sizeof(text), cw->text, (unsigned long long)opt->pages);
#pragma GCC diagnostic pop
	if (wl_parse_buffer(text, strlen(text), cw->name, &wl, &werr) != 0) {
		snprintf(err, errlen, "calibration workload %s: %s", cw->name, werr.text);
		return -1;
	}
	note(opt, cw->name);
	if (sim_run_workload(wl, &sopt, &st, msg, sizeof(msg)) != 0) {
		snprintf(err, errlen, "calibration workload %s: simulator: %s", cw->name, msg);
		goto out;
	}
	kb_options_init(&kopt);
	kopt.force = opt->force;
	for (unsigned rep = 0; rep < (opt->repeats ? opt->repeats : 1); rep++) {
		status = kb_run(wl, &kopt, &kres, msg, sizeof(msg));
		if (status != KB_OK) {
			snprintf(res->kernel_skip, sizeof(res->kernel_skip), "%s", msg);
			rc = status == KB_SKIPPED ? 1 : -1;
			if (rc < 0)
				snprintf(err, errlen, "calibration workload %s: kernel: %s", cw->name,
					 msg);
			goto out;
		}
		add_equations(cw, wl, &log, kres.trace, sys);
		kb_result_free(&kres);
	}
	rc = 0;
out:
	kb_result_free(&kres);
	trace_free(st);
	wl_free(wl);
	return rc;
}

/* The kernel's tick rate, from its configuration; @fallback if unknown. */
static uint64_t kernel_hz(uint64_t fallback)
{
	FILE *f = popen("zcat /proc/config.gz 2>/dev/null", "r");
	char line[256];
	unsigned long hz = 0;

	if (!f)
		return fallback;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CONFIG_HZ=%lu", &hz) == 1)
			break;
	pclose(f);
	return hz ? hz : fallback;
}

/*
 * Each calibration scan is one batch and one sleep of 20 ms: what the wall
 * clock shows beyond ksmd's CPU time is that sleep; its excess over whole
 * jiffies is the adjustment (median over rows without workload steps, which
 * pause ksmd).
 */
static void fit_sleep(const struct system *sys, struct sim_costs *c)
{
	double v[MAX_EQUATIONS], tick = 1e9 / (double)c->hz;
	double jiffies = ceil(20.0 * (double)c->hz / 1000.0);
	unsigned n = 0;

	for (size_t i = 0; i < sys->m; i++)
		if (!sys->steps[i])
			v[n++] = sys->idle[i] - jiffies * tick;
	if (n)
		c->sleep_adjust_ns = median(v, n);
}

static void apply_fit(const double *x, struct sim_costs *c)
{
	if (x[U_VISIT] > 0)
		c->visit_ns = x[U_VISIT];
	if (x[U_VISIT_PMD] > 0)
		c->visit_pmd_ns = x[U_VISIT_PMD];
	if (x[U_CHECKSUM] > 0) {
		/* a sample keeps its measured share of a page's hash */
		c->sample_word_ns *= x[U_CHECKSUM] / c->checksum_ns;
		c->checksum_ns = x[U_CHECKSUM];
	}
	if (x[U_MEMCMP] > 0)
		c->memcmp_byte_ns = x[U_MEMCMP];
	if (x[U_LEVEL] > 0)
		c->tree_level_ns = x[U_LEVEL];
	if (x[U_MERGE] > 0)
		c->merge_ns = x[U_MERGE];
	c->batch_ns = x[U_BATCH];
}

static int record_fit(const struct system *sys, const double *x, struct calib_result *res)
{
	res->row = calloc(sys->m ? sys->m : 1, sizeof(*res->row));
	if (!res->row)
		return -1;
	res->nrows = sys->m;
	res->max_error = 0;
	for (size_t i = 0; i < sys->m; i++) {
		double model = 0;

		for (size_t j = 0; j < U_COUNT; j++)
			model += sys->a[i * U_COUNT + j] * x[j];
		snprintf(res->row[i].workload, sizeof(res->row[i].workload), "%s", sys->name[i]);
		res->row[i].scan = sys->scan[i];
		res->row[i].measured_ns = sys->b[i];
		res->row[i].modelled_ns = model;
		if (sys->b[i] > 0 && fabs(model - sys->b[i]) / sys->b[i] > res->max_error)
			res->max_error = fabs(model - sys->b[i]) / sys->b[i];
	}
	return 0;
}

int calib_run(const struct calib_options *opt, struct calib_result *res, char *err,
	      size_t errlen)
{
	struct sim_config cfg;
	struct system *sys;
	double x[U_COUNT];
	int rc = -1;

	memset(res, 0, sizeof(*res));
	sim_config_default(&cfg);
	res->costs = cfg.costs;
	note(opt, "userspace microbenchmarks");
	calib_micro(opt->runs, &res->costs);
	if (!opt->kernel) {
		snprintf(res->kernel_skip, sizeof(res->kernel_skip), "not asked for");
		return 0;
	}
	sys = calloc(1, sizeof(*sys));
	if (!sys) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < NWORKLOADS; i++) {
		int r = run_workload(opt, &workloads[i], sys, res, err, errlen);

		if (r < 0)
			goto out;
		if (r > 0) { /* the kernel side cannot run here: microbenchmarks only */
			rc = 0;
			goto out;
		}
	}
	if (calib_solve(sys->a, sys->b, sys->m, U_COUNT, x) != 0) {
		snprintf(err, errlen, "the calibration runs do not determine the costs (singular)");
		goto out;
	}
	apply_fit(x, &res->costs);
	res->costs.hz = kernel_hz(res->costs.hz);
	fit_sleep(sys, &res->costs);
	res->kernel_measured = true;
	rc = record_fit(sys, x, res);
	if (rc != 0)
		snprintf(err, errlen, "out of memory");
out:
	free(sys);
	return rc;
}

void calib_result_free(struct calib_result *res)
{
	free(res->row);
	memset(res, 0, sizeof(*res));
}
