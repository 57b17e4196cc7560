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
#include <stdarg.h>
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
 * a scan (one per scan) to memcmp bytes (10^9 per scan). With @se, each
 * unknown's standard error too, from the residuals and the diagonal of the
 * inverse normal matrix (0 where there are no more equations than unknowns).
 */
static int solve_columns(const double *a, const double *b, size_t m, size_t n, const bool *use,
			 double *x, double *se)
{
	enum { N = CALIB_MAX_UNKNOWNS };
	double ata[N][2 * N + 1], scale[N], rss = 0;
	size_t idx[N], k = 0;

	memset(ata, 0, sizeof(ata));
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
	/* [AᵀA | Aᵀb | I]: elimination leaves x and (AᵀA)⁻¹ */
	for (size_t r = 0; r < k; r++) {
		for (size_t c = 0; c < k; c++)
			for (size_t i = 0; i < m; i++)
				ata[r][c] += a[i * n + idx[r]] / scale[r] * a[i * n + idx[c]] / scale[c];
		for (size_t i = 0; i < m; i++)
			ata[r][k] += a[i * n + idx[r]] / scale[r] * b[i];
		ata[r][k + 1 + r] = 1;
	}
	for (size_t col = 0; col < k; col++) { /* Gauss-Jordan, partial pivoting */
		size_t piv = col;

		for (size_t r = col + 1; r < k; r++)
			if (fabs(ata[r][col]) > fabs(ata[piv][col]))
				piv = r;
		if (fabs(ata[piv][col]) < 1e-9 * (double)m)
			return -1;
		for (size_t c = 0; c <= 2 * k; c++) {
			double t = ata[col][c];

			ata[col][c] = ata[piv][c];
			ata[piv][c] = t;
		}
		for (size_t r = 0; r < k; r++) {
			double f;

			if (r == col)
				continue;
			f = ata[r][col] / ata[col][col];
			for (size_t c = col; c <= 2 * k; c++)
				ata[r][c] -= f * ata[col][c];
		}
	}
	for (size_t j = 0; j < n; j++) {
		x[j] = 0;
		if (se)
			se[j] = 0;
	}
	for (size_t r = 0; r < k; r++)
		x[idx[r]] = ata[r][k] / ata[r][r] / scale[r];
	if (!se || m <= k)
		return 0;
	for (size_t i = 0; i < m; i++) {
		double e = -b[i];

		for (size_t j = 0; j < n; j++)
			e += a[i * n + j] * x[j];
		rss += e * e;
	}
	for (size_t r = 0; r < k; r++) {
		double inv = ata[r][k + 1 + r] / ata[r][r]; /* row r of the inverse, scaled */

		se[idx[r]] = sqrt(rss / (double)(m - k) * fabs(inv)) / scale[r];
	}
	return 0;
}

int calib_solve(const double *a, const double *b, size_t m, size_t n, double *x, double *se)
{
	bool use[CALIB_MAX_UNKNOWNS];

	if (n > CALIB_MAX_UNKNOWNS || m < n)
		return -1;
	for (size_t j = 0; j < n; j++)
		use[j] = true;
	for (;;) {
		size_t worst = n;

		if (solve_columns(a, b, m, n, use, x, se) != 0)
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

/* A workload's text, built for a page count (the one number that varies). */
struct text {
	char buf[CALIB_TEXT_MAX];
	size_t len;
	bool overflow;
};

static void __attribute__((format(printf, 2, 3))) put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, sizeof(t->buf) - t->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(t->buf) - t->len)
		t->overflow = true;
	else
		t->len += (size_t)n;
}

/* smart_scan = 0 so that every page is processed every scan; pages_to_scan
 * above the page count so that a full scan is one batch; @sleep_ms between. */
static void global_sleeping(struct text *t, unsigned scans, unsigned sleep_ms, const char *more)
{
	put(t, "[global]\nscans = %u\nsmart_scan = 0\npages_to_scan = 100000000\n"
	       "sleep_millisecs = %u\n%s", scans, sleep_ms, more);
}

/* The same with the kernel's default sleep. */
#define DEFAULT_SLEEP_MS 20u

static void global(struct text *t, unsigned scans, const char *more)
{
	global_sleeping(t, scans, DEFAULT_SLEEP_MS, more);
}

static void same_region(struct text *t, const char *name, const char *process, uint64_t pages,
			unsigned value)
{
	put(t, "[region %s]\nprocess = %s\npages = %llu\nfill = same\nvalue = %u\n", name, process,
	    (unsigned long long)pages, value);
}

static void fresh_writer(struct text *t, bool thp)
{
	put(t, "%s[writer w]\nregion = a\noffset = 4088\nvalue = fresh\nwhen = every-scan\n",
	    thp ? "thp = always\n" : "");
}

static void build_at_rest(struct text *t, uint64_t pages)
{
	global(t, 6, "");
	same_region(t, "a", "main", pages, 5);
}

/* a quarter of the pages at rest: what a scan costs apart from its pages
 * (every other workload has the same page count, so the two would move
 * together) */
static void build_at_rest_quarter(struct text *t, uint64_t pages)
{
	build_at_rest(t, pages / 4);
}

/* the same at rest, in 40 batches a scan: the cost of a batch */
static void build_batches(struct text *t, uint64_t pages)
{
	put(t, "[global]\nscans = 5\nsmart_scan = 0\npages_to_scan = %llu\nsleep_millisecs = 1\n",
	    (unsigned long long)(pages / 40));
	same_region(t, "a", "main", pages, 5);
}

static void build_unique(struct text *t, uint64_t pages)
{
	global(t, 5, "");
	put(t, "[region a]\npages = %llu\nfill = unique\n", (unsigned long long)pages);
}

static void build_volatile(struct text *t, uint64_t pages)
{
	global(t, 5, "");
	same_region(t, "a", "main", pages, 5);
	fresh_writer(t, false);
}

/* the same in THPs: what a visit costs where the walk ends at a PMD */
static void build_volatile_thp(struct text *t, uint64_t pages)
{
	global(t, 5, "");
	same_region(t, "a", "main", pages, 5);
	fresh_writer(t, true);
}

static void build_late_differ(struct text *t, uint64_t pages)
{
	global(t, 5, "");
	same_region(t, "a", "main", pages, 5);
	put(t, "[event e]\nat = after-scan:0\naction = write\nregion = a\noffset = 4088\n"
	       "value = fresh\n");
}

/*
 * Pages at rest at the kernel's default knobs (100 pages a batch, 20 ms
 * sleeps), as most hosts and most validation workloads run: what a batch
 * costs when ksmd wakes from a real sleep, its caches gone cold.
 */
#define DEFAULT_KNOBS_PAGES 4096u

static void build_default_knobs(struct text *t, uint64_t pages)
{
	(void)pages;
	put(t, "[global]\nscans = 4\nsmart_scan = 0\n");
	same_region(t, "a", "main", DEFAULT_KNOBS_PAGES, 5);
}

/*
 * Tiny hosts, where a scan's fixed costs are all there is: TINY_PAGES pages
 * at rest for TINY_SCANS scans, in one mapping of one process; in
 * TINY_SPLIT processes; in TINY_SPLIT mappings of one process; and in
 * TINY_BATCHES batches a scan, each after a 20 ms sleep. (With the large
 * workloads' pages these
 * costs are a thousandth of a scan, below its noise.)
 */
#define TINY_PAGES 64u
#define FEW_PAGES 8u
#define TINY_SCANS 20u
/*
 * A tiny host's scan is one wakeup of ksmd, whose cost moves from run to
 * run: the 64-page host averaged 46, 57 and 77 us a scan in three
 * calibrations of 3 runs each (2026-12-06), and the validation workloads
 * of 2 to 200 pages swung with them. Each repeat is TINY_POOL runs, their
 * equations weighed so that together they count as one run's.
 */
#define TINY_POOL 4u
#define TINY_SPLIT 32u
#define TINY_BATCHES 8u

/* @n same pages in one process, at rest after @sleep_ms sleeps, TINY_SCANS scans */
static void tiny_same(struct text *t, uint64_t n, unsigned sleep_ms)
{
	global_sleeping(t, TINY_SCANS, sleep_ms, "");
	same_region(t, "a", "main", n, 5);
}

static void build_tiny(struct text *t, uint64_t pages)
{
	(void)pages;
	tiny_same(t, TINY_PAGES, DEFAULT_SLEEP_MS);
}

/*
 * FEW_PAGES pages at rest after sleeps: with the tiny host, a scan's
 * fixed costs apart from its cold visits (64 and 8 pages, every visit among
 * a batch's first SIM_COLD_VISITS).
 */
static void build_few(struct text *t, uint64_t pages)
{
	(void)pages;
	tiny_same(t, FEW_PAGES, DEFAULT_SLEEP_MS);
}

/*
 * FEW_PAGES pages at rest after shorter and longer sleeps than 20 ms (5 and
 * 100 ms: about 12 and 104 once rounded up to jiffies): how much of a
 * batch's cost grows with the sleep before it (the refill term, sim.h),
 * apart from the batch itself. The validation workloads sleep 10 ms, the
 * kernel's default is 20.
 */
#define FEW_SHORT_SLEEP_MS 5u
#define FEW_LONG_SLEEP_MS 100u

static void build_few_short(struct text *t, uint64_t pages)
{
	(void)pages;
	tiny_same(t, FEW_PAGES, FEW_SHORT_SLEEP_MS);
}

static void build_few_long(struct text *t, uint64_t pages)
{
	(void)pages;
	tiny_same(t, FEW_PAGES, FEW_LONG_SLEEP_MS);
}

/*
 * FEW_PAGES pages at rest, and beside them a page KSM does not scan,
 * discarded and written again (faulted in afresh) after every other scan
 * from the second: the scan after it drains an LRU cache (lru_drain, sim.h)
 * and the next does not, with nothing else between them to tell apart.
 */
static void build_few_faults(struct text *t, uint64_t pages)
{
	(void)pages;
	tiny_same(t, FEW_PAGES, DEFAULT_SLEEP_MS);
	put(t, "[region other]\nprocess = main\npages = 1\nfill = same\nvalue = 7\n"
	       "merge = none\n");
	for (unsigned scan = 2; scan < TINY_SCANS; scan += 2)
		put(t, "[event d%u]\nat = after-scan:%u\naction = discard\nregion = other\n"
		       "[event f%u]\nat = after-scan:%u\naction = write\nregion = other\n"
		       "value = 7\n", scan, scan, scan, scan);
}

/* TINY_PAGES same pages in TINY_BATCHES batches a scan, @sleep_ms apart */
static void tiny_in_batches(struct text *t, unsigned scans, unsigned sleep_ms)
{
	put(t, "[global]\nscans = %u\nsmart_scan = 0\npages_to_scan = %u\nsleep_millisecs = %u\n",
	    scans, TINY_PAGES / TINY_BATCHES, sleep_ms);
	same_region(t, "a", "main", TINY_PAGES, 5);
}

static void build_tiny_batches(struct text *t, uint64_t pages)
{
	(void)pages;
	tiny_in_batches(t, TINY_SCANS, 20);
}

/* TINY_PAGES at rest in TINY_SPLIT processes */
static void tiny_processes(struct text *t)
{
	for (unsigned i = 0; i < TINY_SPLIT; i++) {
		char name[16], proc[16];

		snprintf(name, sizeof(name), "r%u", i);
		snprintf(proc, sizeof(proc), "p%u", i);
		same_region(t, name, proc, TINY_PAGES / TINY_SPLIT, 5);
	}
}

static void build_tiny_mms(struct text *t, uint64_t pages)
{
	(void)pages;
	global(t, TINY_SCANS, "");
	tiny_processes(t);
}

static void build_tiny_vmas(struct text *t, uint64_t pages)
{
	(void)pages;
	global(t, TINY_SCANS, "");
	for (unsigned i = 0; i < TINY_SPLIT; i++) {
		char name[16];

		snprintf(name, sizeof(name), "r%u", i);
		same_region(t, name, "main", TINY_PAGES / TINY_SPLIT, 5);
	}
}

/*
 * Tiny hosts again, busy: sleep_millisecs 0, so that every batch starts
 * straight after the last, with nothing cold (busy_batch and busy_mm_slot,
 * sim.h). A busy ksmd of 64 pages finishes a full scan in microseconds,
 * tens of them between two reads of the runner, so these run BUSY_SCANS
 * scans and the rows that enter the fit span many each.
 */
#define BUSY_SCANS 3000u
#define BUSY_WINDOW 250u

static void busy_global(struct text *t)
{
	put(t, "[global]\nscans = %u\nsmart_scan = 0\npages_to_scan = 100000000\n"
	       "sleep_millisecs = 0\n", BUSY_SCANS);
}

/* @n same pages in one process, busy */
static void busy_same(struct text *t, uint64_t n)
{
	busy_global(t);
	same_region(t, "a", "main", n, 5);
}

static void build_busy_tiny(struct text *t, uint64_t pages)
{
	(void)pages;
	busy_same(t, TINY_PAGES);
}

static void build_busy_tiny_mms(struct text *t, uint64_t pages)
{
	(void)pages;
	busy_global(t);
	tiny_processes(t);
}

/*
 * A busy scan's fixed costs apart from its visits: FEW_PAGES pages (a
 * scan of them is mostly its start and its mm_slot), and TINY_PAGES in
 * TINY_BATCHES busy batches a scan (busy_batch apart from busy_scan, which
 * one batch a scan cannot tell apart).
 */
static void build_busy_few(struct text *t, uint64_t pages)
{
	(void)pages;
	busy_same(t, FEW_PAGES);
}

static void build_busy_tiny_batches(struct text *t, uint64_t pages)
{
	(void)pages;
	tiny_in_batches(t, BUSY_SCANS, 0);
}

/*
 * A host of BUSY_MEDIUM_PAGES pages at rest, busy: a visit in a batch that
 * follows the last with no sleep (busy_visit), its page tables and
 * rmap_items still cached. The tiny busy hosts have too few pages to tell
 * it from their batch and mm_slot; the large hosts above scan in one batch
 * after a 20 ms sleep. BUSY_MEDIUM_SCANS scans, BUSY_MEDIUM_WINDOW an
 * equation (a scan is about a millisecond, a busy ksmd's row is not exact).
 */
#define BUSY_MEDIUM_PAGES 4096u
#define BUSY_MEDIUM_SCANS 600u
#define BUSY_MEDIUM_WINDOW 50u

static void build_busy_medium(struct text *t, uint64_t pages)
{
	(void)pages;
	put(t, "[global]\nscans = %u\nsmart_scan = 0\npages_to_scan = 100000000\n"
	       "sleep_millisecs = 0\n", BUSY_MEDIUM_SCANS);
	same_region(t, "a", "main", BUSY_MEDIUM_PAGES, 5);
}

/*
 * BUSY_MEDIUM_PAGES unique pages, busy, with smart scan on: most visits
 * are skipped once the pages have aged, so a skip has equations of its own
 * (the validation workloads have smart scan on unless they say otherwise).
 */
static void build_busy_skips(struct text *t, uint64_t pages)
{
	(void)pages;
	put(t, "[global]\nscans = %u\nsmart_scan = 1\npages_to_scan = 100000000\n"
	       "sleep_millisecs = 0\n", BUSY_MEDIUM_SCANS);
	put(t, "[region a]\nprocess = main\npages = %u\nfill = unique\n", BUSY_MEDIUM_PAGES);
}

/*
 * Half the pages, forked before the first scan: the parent's pages merge
 * while the child still maps them (nothing freed), the child's then free
 * theirs. A merge apart from freeing the page it replaced (merge_free),
 * which every merge of the other hosts does. Only its scan 2 merges, one
 * equation a run: it runs TINY_POOL times a repeat too.
 */
static void build_forked(struct text *t, uint64_t pages)
{
	global(t, 5, "");
	same_region(t, "a", "main", pages / 2, 5);
	put(t, "[event f]\nat = after-scan:0\naction = fork\nprocess = main\nchild = kid\n");
}

/*
 * CHAIN_PAGES equal pages with max_page_sharing 2, pruned at every search
 * (stable_node_chains_prune_millisecs 0): scan 2 merges them into one
 * chain of CHAIN_PAGES / 2 dups, each page's search walking every dup
 * made before it (prune, sim.h); after every other scan from the third,
 * CHAIN_SEARCHES of them are written with the value they hold (a COW copy,
 * no longer KSM), and at the next scan each searches the chain, walks all
 * its dups and merges back. The scans between search nothing.
 */
#define CHAIN_PAGES 2048u
#define CHAIN_SEARCHES 16u
#define CHAIN_SCANS 12u

static void build_chain_prunes(struct text *t, uint64_t pages)
{
	(void)pages;
	global(t, CHAIN_SCANS, "max_page_sharing = 2\nstable_node_chains_prune_millisecs = 0\n");
	same_region(t, "a", "main", CHAIN_PAGES, 5);
	for (unsigned scan = 3; scan < CHAIN_SCANS; scan += 2)
		put(t, "[event w%u]\nat = after-scan:%u\naction = write\nregion = a\n"
		       "pages = 0-%u\nvalue = 5\n", scan, scan, CHAIN_SEARCHES - 1);
}

/* three quarters of the pages discarded after scan 1: ksmd frees their
 * rmap_items at its next pass, then finds nothing at those addresses */
static void build_discarded(struct text *t, uint64_t pages)
{
	global(t, 5, "");
	same_region(t, "a", "main", pages, 5);
	put(t, "[event d]\nat = after-scan:1\naction = discard\nregion = a\npages = 0-%llu\n",
	    (unsigned long long)(pages / 4 * 3 - 1));
}

/* the process execs itself after every scan: its old items are freed with
 * its slot, and its new pages get new ones */
static void build_exec_churn(struct text *t, uint64_t pages)
{
	global(t, 5, "");
	same_region(t, "a", "main", pages, 5);
	for (unsigned scan = 1; scan <= 4; scan++)
		put(t, "[event x%u]\nat = after-scan:%u\naction = exec\nprocess = main\n", scan,
		    scan);
}

/* empty pages with use_zero_pages = 1, written again after every scan from
 * the second on: each scan maps the zero page over every one of them */
static void build_zero(struct text *t, uint64_t pages)
{
	global(t, 5, "use_zero_pages = 1\n");
	same_region(t, "a", "main", pages, 0);
	for (unsigned scan = 2; scan <= 4; scan++)
		put(t, "[event z%u]\nat = after-scan:%u\naction = write\nregion = a\nvalue = 0\n",
		    scan, scan);
}

/* empty pages with use_zero_pages = 1 left alone: merged into the zero page
 * at scan 2, then every scan walks past their zero-page PTEs (zero_pte) */
static void build_zero_at_rest(struct text *t, uint64_t pages)
{
	global(t, 6, "use_zero_pages = 1\n");
	same_region(t, "a", "main", pages, 0);
}

struct calib_workload {
	const char *name;
	void (*build)(struct text *t, uint64_t pages);
	uint64_t first_scan; /* rows from this scan on enter the fit */
	bool steady_sleeps;  /* a plain 20 ms sleep a scan, no steps: the sleep's length */
	uint64_t window;     /* busy: scans an equation spans at least (0: one a row) */
	unsigned pool;       /* kernel runs per --repeats, their equations
				weighed down to count as one run's */
};

static const struct calib_workload workloads[] = {
	{ "at-rest", build_at_rest, 2, true, 0, 1 },
	{ "at-rest-quarter", build_at_rest_quarter, 2, true, 0, 1 },
	{ "batches", build_batches, 3, false, 0, 1 },
	{ "unique", build_unique, 2, true, 0, 1 },
	{ "volatile", build_volatile, 2, false, 0, 1 },
	{ "volatile-thp", build_volatile_thp, 2, false, 0, 1 },
	{ "late-differ", build_late_differ, 2, true, 0, 1 },
	{ "default-knobs", build_default_knobs, 2, false, 0, 1 },
	{ "tiny", build_tiny, 2, true, 0, TINY_POOL },
	{ "few", build_few, 2, true, 0, TINY_POOL },
	{ "few-short", build_few_short, 2, false, 0, TINY_POOL },
	{ "few-long", build_few_long, 2, false, 0, TINY_POOL },
	{ "few-faults", build_few_faults, 2, false, 0, TINY_POOL },
	{ "tiny-batches", build_tiny_batches, 3, false, 0, TINY_POOL },
	{ "tiny-mms", build_tiny_mms, 2, true, 0, TINY_POOL },
	{ "tiny-vmas", build_tiny_vmas, 2, true, 0, TINY_POOL },
	{ "busy-tiny", build_busy_tiny, 3, false, BUSY_WINDOW, 1 },
	{ "busy-tiny-mms", build_busy_tiny_mms, 3, false, BUSY_WINDOW, 1 },
	{ "busy-few", build_busy_few, 3, false, BUSY_WINDOW, 1 },
	{ "busy-tiny-batches", build_busy_tiny_batches, 3, false, BUSY_WINDOW, 1 },
	{ "busy-medium", build_busy_medium, 3, false, BUSY_MEDIUM_WINDOW, 1 },
	{ "busy-skips", build_busy_skips, 3, false, BUSY_MEDIUM_WINDOW, 1 },
	{ "forked", build_forked, 2, false, 0, TINY_POOL },
	{ "chain-prunes", build_chain_prunes, 2, false, 0, 1 },
	{ "discarded", build_discarded, 2, false, 0, 1 },
	{ "exec-churn", build_exec_churn, 2, false, 0, 1 },
	{ "zero", build_zero, 2, false, 0, 1 },
	{ "zero-at-rest", build_zero_at_rest, 2, true, 0, 1 },
};

#define NWORKLOADS (sizeof(workloads) / sizeof(workloads[0]))

size_t calib_workload_count(void)
{
	return NWORKLOADS;
}

const char *calib_workload_name(size_t i)
{
	return workloads[i].name;
}

int calib_workload_text(size_t i, uint64_t pages, char *buf, size_t len)
{
	struct text *t = calloc(1, sizeof(*t));
	int rc = -1;

	if (!t)
		return -1;
	workloads[i].build(t, pages);
	if (!t->overflow && t->len < len) {
		memcpy(buf, t->buf, t->len + 1);
		rc = 0;
	}
	free(t);
	return rc;
}

/* The simulator's work per full scan, recorded by the scan hook. */
struct work_log {
	struct sim_work *w;
	size_t n, cap;
	bool failed; /* out of memory: the log ends early */
};

static void log_work(void *arg, uint64_t scan, const struct sim *s, const int *mm_of)
{
	struct work_log *log = arg;

	(void)mm_of;
	if (scan != log->n || log->failed)
		return;
	if (log->n == log->cap) {
		size_t cap = log->cap ? 2 * log->cap : 64;
		struct sim_work *w = realloc(log->w, cap * sizeof(*w));

		if (!w) {
			log->failed = true;
			return;
		}
		log->w = w;
		log->cap = cap;
	}
	sim_work_get(s, &log->w[log->n++]);
}

/* The fit's unknowns: the terms calibrate fits (SIM_COST_FIT), in order. */
struct unknowns {
	enum sim_cost_term term[SIM_TERM_COUNT];
	size_t n;
};

/* The terms calibrate fits, counted at compile time: each is an unknown. */
#define COUNT_FITTED_(name, cost, work, how, doc) +((how) == SIM_COST_FIT)
enum { FITTED_TERMS = 0 SIM_COST_TERMS(COUNT_FITTED_) };
#undef COUNT_FITTED_
_Static_assert(FITTED_TERMS <= CALIB_MAX_UNKNOWNS, "raise CALIB_MAX_UNKNOWNS (calib.h)");

static void fitted_terms(struct unknowns *u)
{
	u->n = 0;
	for (int t = 0; t < SIM_TERM_COUNT; t++)
		if (sim_cost_term_info(t)->how == SIM_COST_FIT)
			u->term[u->n++] = t;
}

#define MAX_EQUATIONS 4096

struct system {
	struct unknowns u;
	double raw_a[MAX_EQUATIONS * SIM_TERM_COUNT]; /* work by unknown, as counted */
	double a[MAX_EQUATIONS * SIM_TERM_COUNT], b[MAX_EQUATIONS]; /* the same, weighed */
	double measured[MAX_EQUATIONS]; /* ksmd's CPU time less the known terms, ns */
	double idle[MAX_EQUATIONS]; /* wall time between the rows not spent by ksmd, ns */
	double share[MAX_EQUATIONS]; /* the equation's weight beside its scale's (weigh_by_model) */
	bool steps[MAX_EQUATIONS];  /* no plain sleep a scan (steps pause ksmd, or batches) */
	double noise; /* calib_check_fit: the measured scans 1 -/+ noise times in turn */
	char name[MAX_EQUATIONS][32];
	uint64_t scan[MAX_EQUATIONS];
	size_t m;
};

/*
 * One equation per scan: the work of that scan, by unknown. What the fit
 * does not solve for (microbenchmarked and kept terms) is known: its cost
 * comes off the measured side.
 */
static void work_row(const struct unknowns *u, const struct sim_work *now,
		     const struct sim_work *before, const struct sim_costs *c, double *row,
		     double *known_ns)
{
	*known_ns = 0;
	for (size_t j = 0; j < u->n; j++)
		row[j] = (double)(sim_work_of(now, u->term[j]) - sim_work_of(before, u->term[j]));
	for (int t = 0; t < SIM_TERM_COUNT; t++)
		if (sim_cost_term_info(t)->how != SIM_COST_FIT)
			*known_ns += (double)(sim_work_of(now, t) - sim_work_of(before, t)) *
				     sim_cost_of(c, t);
}

static void note(const struct calib_options *opt, const char *what)
{
	char line[256];

	if (!opt->note)
		return;
	snprintf(line, sizeof(line), "calibrate: %s", what);
	opt->note(line, opt->note_arg);
}


static void add_equation(const struct calib_workload *cw, const struct work_log *log,
			 const struct trace_row *p, const struct trace_row *r,
			 const struct sim_costs *c, struct system *sys)
{
	double known, cpu = (double)(r->ksmd_cpu_ns - p->ksmd_cpu_ns);

	if (sys->noise > 0)
		cpu *= sys->m % 2 ? 1 + sys->noise : 1 - sys->noise;
	work_row(&sys->u, &log->w[r->scan], &log->w[p->scan], c, &sys->raw_a[sys->m * sys->u.n],
		 &known);
	sys->measured[sys->m] = cpu - known;
	sys->idle[sys->m] = (double)(r->time_ns - p->time_ns) -
			    (double)(r->ksmd_cpu_ns - p->ksmd_cpu_ns);
	sys->steps[sys->m] = !cw->steady_sleeps;
	/* cw->pool runs' squared errors count as one run's */
	sys->share[sys->m] = 1 / sqrt((double)cw->pool);
	snprintf(sys->name[sys->m], sizeof(sys->name[0]), "%s", cw->name);
	sys->scan[sys->m] = r->scan;
	sys->m++;
}

/*
 * The equations of the measured trace @kt: the work from one row to a later
 * one, from the simulator's @log, against ksmd's CPU time between them in
 * @kt. A sleeping ksmd's rows are read while it sleeps, each at the end of
 * its scan: one equation per valid row, from the row before. A busy one's
 * run on while they are read (none is valid, and its CPU time and counters
 * are a few microseconds apart): one equation per window of at least
 * cw->window scans, where that is noise.
 */
static void add_equations(const struct calib_workload *cw, const struct work_log *log,
			  const struct trace *kt, const struct sim_costs *c, struct system *sys)
{
	const struct trace_row *from = NULL;

	for (size_t i = 0; i < kt->nrows && sys->m < MAX_EQUATIONS; i++) {
		const struct trace_row *r = &kt->row[i], *p = i ? &kt->row[i - 1] : NULL;

		if (r->kind != TRACE_ROW_SCAN || r->scan >= log->n)
			continue;
		if (cw->window) {
			if (!from && r->scan + 1 >= cw->first_scan)
				from = r;
			else if (from && r->scan >= from->scan + cw->window) {
				add_equation(cw, log, from, r, c, sys);
				from = r;
			}
			continue;
		}
		if (p && p->kind == TRACE_ROW_SCAN && r->valid && p->scan + 1 >= cw->first_scan &&
		    r->scan > p->scan)
			add_equation(cw, log, p, r, c, sys);
	}
}

/*
 * Where the measured side comes from: the kernel (kb_run, @repeats times),
 * or for calib_check_fit the simulator itself with known costs.
 */
struct source {
	const struct sim_costs *truth; /* NULL: the kernel */
	const struct calib_options *opt;
	double noise;                  /* with truth: calib_check_fit's spread */
};

/* The last full scan any of @n traces has a row for. */
static uint64_t last_scan(struct kb_result *res, unsigned n)
{
	uint64_t last = 0;

	for (unsigned i = 0; i < n; i++)
		for (size_t r = 0; r < res[i].trace->nrows; r++)
			if (res[i].trace->row[r].scan > last)
				last = res[i].trace->row[r].scan;
	return last;
}

/*
 * One calibration workload: its text parsed, and the kernel's runs of it
 * (none when the simulator stands in for the kernel).
 */
struct host {
	const struct calib_workload *cw;
	struct workload *wl;
	struct kb_result res[CALIB_MAX_REPEATS];
	unsigned n;
};

static void hosts_free(struct host *h, size_t n)
{
	for (size_t i = 0; h && i < n; i++) {
		for (unsigned r = 0; r < CALIB_MAX_REPEATS; r++)
			kb_result_free(&h[i].res[r]);
		wl_free(h[i].wl);
	}
	free(h);
}

/* Every calibration workload parsed into @*hosts; 0, or -1 with a message. */
static int hosts_parse(const struct source *src, struct host **hosts, char *err, size_t errlen)
{
	char *text = malloc(CALIB_TEXT_MAX);
	struct host *h = calloc(NWORKLOADS, sizeof(*h));
	struct wl_error werr;

	*hosts = h;
	if (!text || !h) {
		free(text);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < NWORKLOADS; i++) {
		h[i].cw = &workloads[i];
		if (calib_workload_text(i, src->opt->pages, text, CALIB_TEXT_MAX) != 0)
			snprintf(werr.text, sizeof(werr.text), "longer than %u bytes", CALIB_TEXT_MAX);
		else if (wl_parse_buffer(text, strlen(text), workloads[i].name, &h[i].wl, &werr) == 0)
			continue;
		snprintf(err, errlen, "calibration workload %s: %s", workloads[i].name, werr.text);
		free(text);
		return -1;
	}
	free(text);
	return 0;
}

/*
 * The kernel's runs go in rounds: every calibration workload once a round,
 * but a pooled one (cw->pool runs a repeat) in every round and the others
 * in every CALIB_POOL_MAX / pool-th, so that --repeats x CALIB_POOL_MAX
 * rounds run each --repeats times. Run host by host, a host's runs came
 * minutes apart from the others', and ksmd's cost of a wakeup moves by a
 * quarter within minutes (2026-12-06): the 8-page host after 5 ms sleeps
 * measured more than after 20 ms, the other way round from the same hosts
 * alternated. In rounds the drift falls on every host alike.
 */
#define CALIB_POOL_MAX 4u

static bool runs_in_round(const struct calib_workload *cw, unsigned k)
{
	return k % (CALIB_POOL_MAX / cw->pool) == 0;
}

/* One kernel run of @h: 0, 1 when the kernel cannot run here (why in @skip), -1. */
static int kernel_run(const struct calib_options *opt, struct host *h, char *skip,
		      size_t skiplen, char *err, size_t errlen)
{
	struct kb_options kopt;
	char msg[512];
	int status;

	if (h->n == CALIB_MAX_REPEATS)
		return 0; /* as many as the fit keeps */
	kb_options_init(&kopt);
	kopt.force = opt->force;
	status = kb_run(h->wl, &kopt, &h->res[h->n++], msg, sizeof(msg));
	if (status == KB_OK)
		return 0;
	snprintf(skip, skiplen, "%s", msg);
	if (status == KB_SKIPPED)
		return 1;
	snprintf(err, errlen, "calibration workload %s: kernel: %s", h->cw->name, msg);
	return -1;
}

/*
 * The simulator's run of host @h at the costs @c (the known terms' costs,
 * and refill's time constant, on which the refills counted depend) and its
 * equations, one set a kernel run (or its own at the truth, standing in for
 * the kernel). A busy ksmd (no sleep) finishes scans faster than the runner
 * reads its counters, so the kernel's rows may be far apart and its last
 * one beyond the workload's scans: the simulator then runs as far, so that
 * every row has its work.
 */
static int host_equations(const struct source *src, struct host *h, struct system *sys,
			  const struct sim_costs *c, char *err, size_t errlen)
{
	struct work_log log = { 0 };
	struct sim_run_options sopt = { .scan_hook = log_work, .hook_arg = &log, .costs = c };
	struct sim_run_options topt = { .costs = src->truth };
	struct trace *st = NULL, *tt = NULL;
	char msg[512];
	int rc = -1;

	if (h->wl->stop == WL_STOP_SCANS && last_scan(h->res, h->n) > h->wl->stop_scans)
		h->wl->stop_scans = last_scan(h->res, h->n);
	if (sim_run_workload(h->wl, &sopt, &st, msg, sizeof(msg)) != 0 || log.failed) {
		snprintf(err, errlen, "calibration workload %s: simulator: %s", h->cw->name,
			 log.failed ? "out of memory" : msg);
		goto out;
	}
	/* standing in for the kernel: the simulator at the truth, whose
	 * refill time constant may not be @c's */
	if (src->truth && sim_run_workload(h->wl, &topt, &tt, msg, sizeof(msg)) != 0) {
		snprintf(err, errlen, "calibration workload %s: simulator: %s", h->cw->name, msg);
		goto out;
	}
	if (tt)
		add_equations(h->cw, &log, tt, c, sys);
	for (unsigned i = 0; i < h->n; i++)
		add_equations(h->cw, &log, h->res[i].trace, c, sys);
	rc = 0;
out:
	trace_free(tt);
	trace_free(st);
	free(log.w);
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

/*
 * Each fitted term's value into @c and @res. A term the fit puts at 0 (its
 * column dropped: the equations want it below nothing beside the others)
 * costs 0, as in the fit's own rows: keeping its default instead made the
 * model the simulator runs another than the one calibrate reported, by
 * 640 ns a mapping on tiny-vmas (2026-12-06).
 */
static void apply_fit(const struct system *sys, const double *x, const double *se,
		      struct sim_costs *c, struct calib_result *res)
{
	for (size_t j = 0; j < sys->u.n; j++) {
		enum sim_cost_term t = sys->u.term[j];
		struct calib_term *ct = &res->term[t];

		ct->fitted = x[j] > 0;
		ct->value = x[j];
		ct->se = se[j];
		if (t == SIM_TERM_checksum && x[j] > 0) /* a sample keeps its share of a page's hash */
			c->sample_word_ns *= x[j] / c->checksum_ns;
		sim_cost_set(c, t, x[j]);
	}
}

/* What the model at @x says equation @i's measured side is, ns. */
static double modelled(const struct system *sys, size_t i, const double *x)
{
	double model = 0;

	for (size_t j = 0; j < sys->u.n; j++)
		model += sys->raw_a[i * sys->u.n + j] * x[j];
	return model;
}

static int record_fit(const struct system *sys, const double *x, struct calib_result *res)
{
	res->row = calloc(sys->m ? sys->m : 1, sizeof(*res->row));
	if (!res->row)
		return -1;
	res->nrows = sys->m;
	res->max_error = 0;
	for (size_t i = 0; i < sys->m; i++) {
		double model = modelled(sys, i, x);

		snprintf(res->row[i].workload, sizeof(res->row[i].workload), "%s", sys->name[i]);
		res->row[i].scan = sys->scan[i];
		res->row[i].measured_ns = sys->measured[i];
		res->row[i].modelled_ns = model;
		if (sys->measured[i] > 0 &&
		    fabs(model - sys->measured[i]) / sys->measured[i] > res->max_error)
			res->max_error = fabs(model - sys->measured[i]) / sys->measured[i];
	}
	return 0;
}

/*
 * The fit minimises relative errors, so that a tiny host's scan (tens of
 * microseconds) counts as much as a large one's (tens of milliseconds), as
 * the accuracy asked of the model is relative: each equation is divided by
 * its scale, and by the square root of its pool (cw->pool runs' squared
 * errors count as one run's). The scale is what the model at @x says the
 * equation measures, not the measurement itself: a tiny host's scans
 * spread by a CV of 0.3 to 0.5 from run to run, and dividing each by its
 * own measurement weighs the cheap ones more, which pulls the fit below
 * their mean: the five tiny hosts came out 10 to 29% under what they
 * measured on average (2026-12-06), and the tiny validation workloads with
 * them. An equation the model gives no work keeps its measurement as its
 * scale.
 */
static void weigh_by_model(struct system *sys, const double *x)
{
	for (size_t i = 0; i < sys->m; i++) {
		double scale = modelled(sys, i, x), w;

		if (!(scale > 0))
			scale = sys->measured[i];
		w = scale > 0 ? sys->share[i] / scale : 0;
		for (size_t j = 0; j < sys->u.n; j++)
			sys->a[i * sys->u.n + j] = sys->raw_a[i * sys->u.n + j] * w;
		sys->b[i] = sys->measured[i] * w;
	}
}

/*
 * Iteratively reweighted least squares: the scales from the costs before
 * the fit (@c, the defaults), then from each fit in turn, FIT_PASSES fits.
 */
#define FIT_PASSES 4

static int solve_reweighted(struct system *sys, const struct sim_costs *c, double *x, double *se)
{
	for (size_t j = 0; j < sys->u.n; j++)
		x[j] = sim_cost_of(c, sys->u.term[j]);
	for (unsigned pass = 0; pass < FIT_PASSES; pass++) {
		weigh_by_model(sys, x);
		if (calib_solve(sys->a, sys->b, sys->m, sys->u.n, x, se) != 0)
			return -1;
	}
	return 0;
}

/* Why the fit has no solution: a term no equation has work of, if one. */
static void explain_singular(const struct system *sys, char *err, size_t errlen)
{
	for (size_t j = 0; j < sys->u.n; j++) {
		bool any = false;

		for (size_t i = 0; i < sys->m && !any; i++)
			any = sys->a[i * sys->u.n + j] != 0;
		if (!any) {
			snprintf(err, errlen,
				 "the calibration runs do not determine the costs: no scan measured "
				 "has work of %s (%zu equations)",
				 sim_cost_term_info(sys->u.term[j])->name, sys->m);
			return;
		}
	}
	snprintf(err, errlen,
		 "the calibration runs do not determine the costs (singular: some terms "
		 "moved together in every scan measured; %zu equations)",
		 sys->m);
}

/*
 * A calibration in progress: the calibration workloads parsed, the kernel's
 * runs so far (none when the simulator stands in for the kernel), and the
 * costs the fit starts from and keeps for what it does not solve for.
 */
struct calib_session {
	struct calib_options opt; /* the caller's, which src.opt points to */
	struct source src;
	struct host *hosts;
	struct sim_costs start;
	unsigned round; /* the kernel runs' schedule: the round it is in, */
	size_t next;    /* and the calibration workload it looks at next */
};

static int session_open(const struct source *src, const struct sim_costs *start,
			struct calib_session **out, char *err, size_t errlen)
{
	struct calib_session *s = calloc(1, sizeof(*s));

	*out = s;
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->opt = *src->opt;
	s->src = *src;
	s->src.opt = &s->opt;
	s->start = *start;
	if (hosts_parse(&s->src, &s->hosts, err, errlen) != 0) {
		calib_session_close(s);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* The fit's weighted residual sum of squares at @x: what it minimises. */
static double weighted_residual(struct system *sys, const double *x)
{
	double sum = 0;

	weigh_by_model(sys, x);
	for (size_t i = 0; i < sys->m; i++) {
		double r = -sys->b[i];

		for (size_t j = 0; j < sys->u.n; j++)
			r += sys->a[i * sys->u.n + j] * x[j];
		sum += r * r;
	}
	return sum;
}

/*
 * Every calibration workload's equations from the runs so far, the
 * simulator at @c, and their fit into @x and @se (@sys is overwritten).
 */
static int fit_at(struct calib_session *s, const struct sim_costs *c, struct system *sys,
		  double *x, double *se, char *err, size_t errlen)
{
	sys->m = 0;
	fitted_terms(&sys->u);
	sys->noise = s->src.noise;
	for (size_t i = 0; i < NWORKLOADS; i++)
		if (host_equations(&s->src, &s->hosts[i], sys, c, err, errlen) != 0)
			return -1;
	if (solve_reweighted(sys, c, x, se) != 0) {
		explain_singular(sys, err, errlen);
		return -1;
	}
	return 0;
}

static const double tau_candidates[CALIB_TAU_COUNT] = { CALIB_TAU_MS };

/*
 * Refill's time constant: the candidate whose fit leaves the least
 * weighted residual (each a whole fit: the refills counted depend on it,
 * the rest of the model is linear).
 */
static int choose_tau(struct calib_session *s, struct system *sys, struct calib_result *res,
		      char *err, size_t errlen)
{
	double x[SIM_TERM_COUNT], se[SIM_TERM_COUNT], best = INFINITY;
	char line[96];

	for (size_t k = 0; k < CALIB_TAU_COUNT; k++) {
		struct sim_costs trial = res->costs;

		snprintf(line, sizeof(line), "fit with refill's time constant at %g ms",
			 tau_candidates[k]);
		note(&s->opt, line);
		trial.refill_tau_ms = tau_candidates[k];
		if (fit_at(s, &trial, sys, x, se, err, errlen) != 0)
			return -1;
		res->tau_ms[k] = tau_candidates[k];
		res->tau_residual[k] = weighted_residual(sys, x);
		if (res->tau_residual[k] < best) {
			best = res->tau_residual[k];
			res->costs.refill_tau_ms = tau_candidates[k];
		}
	}
	return 0;
}

/* refill's time constant, then every calibration workload's equations and their fit. */
static int session_fit(struct calib_session *s, struct calib_result *res, char *err,
		       size_t errlen)
{
	const struct source *src = &s->src;
	struct system *sys = calloc(1, sizeof(*sys));
	double x[SIM_TERM_COUNT], se[SIM_TERM_COUNT];
	int rc = -1;

	memset(res, 0, sizeof(*res));
	res->costs = s->start;
	if (!sys) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (choose_tau(s, sys, res, err, errlen) != 0 ||
	    fit_at(s, &res->costs, sys, x, se, err, errlen) != 0)
		goto out;
	apply_fit(sys, x, se, &res->costs, res);
	if (!src->truth) {
		res->costs.hz = kernel_hz(res->costs.hz);
		fit_sleep(sys, &res->costs);
	}
	res->kernel_measured = !src->truth;
	rc = record_fit(sys, x, res);
	if (rc != 0)
		snprintf(err, errlen, "out of memory");
out:
	free(sys);
	return rc;
}

/* The default costs with the microbenchmarked ones measured here, into @c. */
static void micro_costs(const struct calib_options *opt, struct sim_costs *c)
{
	struct sim_config cfg;

	sim_config_default(&cfg);
	*c = cfg.costs;
	note(opt, "userspace microbenchmarks");
	calib_micro(opt->runs, c);
}

int calib_session_open(const struct calib_options *opt, struct calib_session **s, char *err,
		       size_t errlen)
{
	struct source src = { NULL, opt, 0 };
	struct sim_costs start;

	micro_costs(opt, &start);
	return session_open(&src, &start, s, err, errlen);
}

int calib_session_round(struct calib_session *s, char *skip, size_t skiplen, char *err,
			size_t errlen)
{
	for (; s->next < NWORKLOADS; s->next++) {
		struct host *h = &s->hosts[s->next];
		int rc;

		if (runs_in_round(h->cw, s->round) &&
		    (rc = kernel_run(&s->opt, h, skip, skiplen, err, errlen)) != 0)
			return rc;
	}
	s->next = 0;
	s->round++;
	return 0;
}

int calib_session_step(struct calib_session *s, char *skip, size_t skiplen, char *err,
		       size_t errlen)
{
	for (;;) {
		struct host *h;

		if (s->next == NWORKLOADS) {
			s->next = 0;
			s->round++;
		}
		h = &s->hosts[s->next++];
		if (runs_in_round(h->cw, s->round))
			return kernel_run(&s->opt, h, skip, skiplen, err, errlen);
	}
}

size_t calib_session_runs_in(unsigned rounds)
{
	size_t n = 0;

	for (unsigned k = 0; k < rounds; k++)
		for (size_t i = 0; i < NWORKLOADS; i++)
			n += runs_in_round(&workloads[i], k);
	return n;
}

size_t calib_session_runs(const struct calib_session *s)
{
	size_t n = 0;

	for (size_t i = 0; i < NWORKLOADS; i++)
		n += s->hosts[i].n;
	return n;
}

int calib_session_fit(struct calib_session *s, struct calib_result *res, char *err,
		      size_t errlen)
{
	if (!calib_session_runs(s)) {
		memset(res, 0, sizeof(*res));
		snprintf(err, errlen, "no calibration round has run on the kernel");
		return -1;
	}
	return session_fit(s, res, err, errlen);
}

void calib_session_close(struct calib_session *s)
{
	if (!s)
		return;
	hosts_free(s->hosts, NWORKLOADS);
	free(s);
}

int calib_run(const struct calib_options *opt, struct calib_result *res, char *err,
	      size_t errlen)
{
	unsigned rounds = (opt->repeats ? opt->repeats : 1) * CALIB_POOL_MAX;
	struct calib_session *s = NULL;
	char line[64];
	int rc;

	memset(res, 0, sizeof(*res));
	if (!opt->kernel) {
		micro_costs(opt, &res->costs);
		snprintf(res->kernel_skip, sizeof(res->kernel_skip), "not asked for");
		return 0;
	}
	if (calib_session_open(opt, &s, err, errlen) != 0)
		return -1;
	for (unsigned k = 0; k < rounds; k++) {
		snprintf(line, sizeof(line), "kernel runs, round %u of %u", k + 1, rounds);
		note(opt, line);
		rc = calib_session_round(s, res->kernel_skip, sizeof(res->kernel_skip), err, errlen);
		if (rc > 0) { /* the kernel part cannot run here: microbenchmarks only */
			res->costs = s->start;
			calib_session_close(s);
			return 0;
		}
		if (rc < 0)
			goto out;
	}
	rc = session_fit(s, res, err, errlen);
out:
	calib_session_close(s);
	return rc;
}

int calib_check_fit(const struct calib_options *opt, const struct sim_costs *truth,
		    double noise, struct calib_result *res, char *err, size_t errlen)
{
	struct source src = { truth, opt, noise };
	struct calib_session *s = NULL;
	int rc;

	/* what the fit does not solve for is known: the truth's */
	if (session_open(&src, truth, &s, err, errlen) != 0)
		return -1;
	rc = session_fit(s, res, err, errlen);
	calib_session_close(s);
	return rc;
}

size_t calib_host_totals(const struct calib_result *res, const char *name, double *measured,
			 double *modelled)
{
	size_t n = 0;

	*measured = *modelled = 0;
	for (size_t i = 0; i < res->nrows; i++) {
		if (strcmp(res->row[i].workload, name) != 0)
			continue;
		*measured += res->row[i].measured_ns;
		*modelled += res->row[i].modelled_ns;
		n++;
	}
	return n;
}

void calib_result_free(struct calib_result *res)
{
	free(res->row);
	memset(res, 0, sizeof(*res));
}
