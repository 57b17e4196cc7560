/*
 * sweep_defs.c - the sweeps ksmkit knows: their workloads (written here as
 * workload text, so every point is an ordinary workload anyone can rerun
 * with `ksmkit sweep NAME --print-workload`), their series and how one
 * repetition measures each series.
 *
 *   volatile  ksmd's scan speed per CPU second against the fraction of pages
 *             rewritten between scans: the kernel, and the simulator with
 *             the checksum, dirty-bit and hybrid detectors; half the memory
 *             is written without setting dirty bits (a guest under EPT);
 *   nai-xia   Nai Xia's 2011 experiment: memset 1, random writes near the
 *             end of every page, ksmd busy (sleep 0, no smart scan); scan
 *             speed on 4 KiB pages and on THP, kernel against the three
 *             detectors, per ksmd CPU second: with ksmd busy that is its
 *             full-scan speed, which the wall clock would show if the
 *             writer did not share this machine's two cores with it;
 *   merge     ksm_tests -P: merge speed against region size;
 *   cow       ksm_tests -C: time of a write to merged pages and to pages
 *             never merged;
 *   numa      pages_shared with merge_across_nodes 1 and 0 against the
 *             number of NUMA nodes the equal pages are spread over: the
 *             simulator, this kernel (where it has the nodes) and the
 *             kernel of a qemu guest with that many nodes (guest.h);
 *   numa-ksm, numa-merged
 *             the same groups on 4 nodes, node by node: the KSM pages each
 *             node holds and the pages merged into them, simulator and guest;
 *   predict   the simulator's wall-clock scan speed and ksmd CPU per MiB
 *             against the kernel's on every validation workload (the
 *             shipped ones; calibration uses its own, calib/calib.c), at
 *             the workload's knobs and busy (no sleep, a batch a scan);
 *   smart-scan
 *             every smart_scan_policy, and smart scan off, on the
 *             validation workloads and smart-scan-mixed: ksmd CPU per full
 *             scan, and in the explanation visits, skips and merges.
 *
 * Scan speed is compare's (cmp_scan_speed): pages scanned from the end of
 * the first full scan to the end of the last, per second.
 */
#include "config.h"
#include "sweep.h"
#include "sweep_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "calib.h"
#include "compare.h"
#include "guest.h"
#include "sim_driver.h"
#include "trace.h"
#include "workload.h"
#include "xval.h"

#define MIB (1024.0 * 1024.0)

/* --- building workload text ------------------------------------------------------ */

struct sweep_text {
	char buf[16384];
	size_t len;
	bool overflow;
};

static void add(struct sweep_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct sweep_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->overflow)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, sizeof(t->buf) - t->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(t->buf) - t->len)
		t->overflow = true;
	else
		t->len += (size_t)n;
}

static int parse_text(const struct sweep_text *t, const char *name, struct workload **wl, char *err,
		      size_t errlen)
{
	struct wl_error e;

	if (t->overflow)
		return sweep_fail(err, errlen, "%s: workload text too long", name);
	if (wl_parse_buffer(t->buf, t->len, name, wl, &e) != 0)
		return sweep_fail(err, errlen, "%s", e.text);
	return 0;
}

static uint64_t scaled(const struct sweep_env *env, double v)
{
	double s = v * env->scale;

	return s < 1 ? 1 : (uint64_t)llround(s);
}

/* --- running the engines ------------------------------------------------------- */

static void keep_work(void *arg, const struct sim_progress *p, const struct sim *s)
{
	(void)p;
	sim_work_get(s, arg);
}

/* The simulator's trace of @wl (and its work, when @work). */
static int sim_trace(const struct workload *wl, const struct sweep_env *env, struct trace **t,
		     struct sim_work *work, char *err, size_t errlen)
{
	struct sim_run_options opt = { .costs = env->costs };
	char why[256];

	if (work) {
		memset(work, 0, sizeof(*work));
		opt.progress = keep_work;
		opt.progress_arg = work;
	}
	*t = NULL;
	if (env->mem_available &&
	    sim_admit(wl, &(struct sim_admit_options){ .costs = env->costs }, env->mem_available,
		      NULL, why, sizeof(why)) != 0)
		return sweep_fail(err, errlen, "%s", why);
	if (sim_run_workload(wl, &opt, t, why, sizeof(why)) != 0) {
		trace_free(*t);
		*t = NULL;
		return sweep_fail(err, errlen, "%s: simulator: %s", wl->path, why);
	}
	return 0;
}

/*
 * The kernel's run of @wl. Returns 0 with @res filled, 1 when this machine
 * cannot run it (not root, no such node: the point is left unmeasured), or
 * -1 with a message.
 */
static int kernel_result(const struct workload *wl, const struct sweep_env *env,
			 enum kb_measure measure, struct kb_result *res, char *err, size_t errlen)
{
	struct kb_options opt;
	char msg[512];
	int status;

	kb_options_init(&opt);
	opt.force = env->force;
	opt.measure = measure;
	status = kb_run(wl, &opt, res, msg, sizeof(msg));
	if (status == KB_OK)
		return 0;
	kb_result_free(res);
	if (status == KB_SKIPPED)
		return 1;
	return sweep_fail(err, errlen, "%s: kernel: %s", wl->path, msg);
}

/* A run's scan speed both ways: wall-clock MiB/s, and MiB per ksmd CPU second. */
struct speeds {
	double wall, per_cpu;
};

/* Over the full-scan rows of scans @from to @to (cmp_scan_speed_between). */
static struct speeds window_speeds(const struct trace *t, uint64_t from, uint64_t to)
{
	struct speeds v = { NAN, NAN };

	if (!t || cmp_scan_speed_between(t, from, to, &v.wall, &v.per_cpu) != 0)
		return (struct speeds){ NAN, NAN };
	if (!(v.per_cpu > 0))
		v.per_cpu = NAN;
	return v;
}

/* From scan 1 to the last, as compare measures it. */
static struct speeds speeds_of(const struct trace *t)
{
	return window_speeds(t, 1, UINT64_MAX);
}

static struct speeds sim_speeds(const struct workload *wl, const struct sweep_env *env,
				struct sim_work *work, int *rc, char *err, size_t errlen)
{
	struct trace *t = NULL;
	struct speeds v = { NAN, NAN };

	*rc = sim_trace(wl, env, &t, work, err, errlen);
	if (!*rc)
		v = speeds_of(t);
	trace_free(t);
	return v;
}

static struct speeds kernel_speeds(const struct workload *wl, const struct sweep_env *env,
				   int *rc, char *err, size_t errlen)
{
	struct kb_result res;
	struct speeds v = { NAN, NAN };
	int k;

	*rc = 0;
	if (!env->kernel)
		return v;
	k = kernel_result(wl, env, KB_MEASURE_NONE, &res, err, errlen);
	if (k < 0)
		*rc = -1;
	if (k == 0) {
		/* rows ksmd outran still pair pages_scanned with the time it was read */
		v = speeds_of(res.trace);
		kb_result_free(&res);
	}
	return v;
}

static double sim_speed(const struct workload *wl, const struct sweep_env *env, bool cpu,
			struct sim_work *work, int *rc, char *err, size_t errlen)
{
	struct speeds v = sim_speeds(wl, env, work, rc, err, errlen);

	return cpu ? v.per_cpu : v.wall;
}

static double kernel_speed(const struct workload *wl, const struct sweep_env *env, bool cpu,
			   int *rc, char *err, size_t errlen)
{
	struct speeds v = kernel_speeds(wl, env, rc, err, errlen);

	return cpu ? v.per_cpu : v.wall;
}

/* Parse the workload of @series at @point. */
static int load(const struct sweep_def *d, size_t point, size_t series,
		const struct sweep_env *env, struct workload **wl, char *err, size_t errlen)
{
	struct sweep_text t = { .len = 0 };
	char name[4096];

	if (d->text(d, point, series, env, &t, name, sizeof(name), err, errlen) != 0)
		return -1;
	return parse_text(&t, name, wl, err, errlen);
}

/* The simulator's work on the workload of @series at @point: 0, or -1 with a message. */
static int sim_work_at(const struct sweep_def *d, size_t point, size_t series,
		       const struct sweep_env *env, struct sim_work *w, char *err, size_t errlen)
{
	struct workload *wl = NULL;
	int rc;

	if (load(d, point, series, env, &wl, err, errlen) != 0)
		return -1;
	(void)sim_speed(wl, env, true, w, &rc, err, errlen);
	wl_free(wl);
	return rc ? -1 : 0;
}

/* The costs a sweep's simulator runs use. */
static const struct sim_costs *costs_in_use(const struct sweep_env *env, struct sim_config *cfg)
{
	sim_config_default(cfg);
	return env->costs ? env->costs : &cfg->costs;
}

int sweep_workload_text(const struct sweep_def *d, size_t point, size_t series,
			const struct sweep_env *env, char *buf, size_t len, char *err,
			size_t errlen)
{
	struct sweep_text t = { .len = 0 };
	char name[4096];

	if (point >= d->npoints || series >= d->nseries)
		return sweep_fail(err, errlen, "%s: no point %zu or series %zu", d->name, point, series);
	if (d->text(d, point, series, env, &t, name, sizeof(name), err, errlen) != 0)
		return -1;
	if (t.overflow || t.len >= len)
		return sweep_fail(err, errlen, "%s: workload text too long", name);
	memcpy(buf, t.buf, t.len + 1);
	return 0;
}

/* Scan speed of every series, each on its own engine (per CPU second or wall). */
static int speed_run(const struct sweep_def *d, size_t point, const struct sweep_env *env,
		     bool cpu, const bool *want, double *y, char *err, size_t errlen)
{
	for (size_t s = 0; s < d->nseries; s++) {
		struct workload *wl = NULL;
		int rc = 0;

		if (!want[s] || (d->series[s].engine == SWEEP_KERNEL && !env->kernel))
			continue;
		if (load(d, point, s, env, &wl, err, errlen) != 0)
			return -1;
		if (d->series[s].engine == SWEEP_KERNEL)
			y[s] = kernel_speed(wl, env, cpu, &rc, err, errlen);
		else
			y[s] = sim_speed(wl, env, cpu, NULL, &rc, err, errlen);
		wl_free(wl);
		if (rc)
			return -1;
	}
	return 0;
}

static int cpu_speed_run(const struct sweep_def *d, size_t point, const struct sweep_env *env,
			 const bool *want, double *y, char *err, size_t errlen)
{
	return speed_run(d, point, env, true, want, y, err, errlen);
}

/* --- volatile: scan speed against the volatile fraction ---------------------------- */

static const double volatile_x[] = { 0, 0.1, 0.25, 0.5, 0.75, 1 };

/* volatile and nai-xia: the kernel, then the simulator with each detector */
static const struct sweep_series detector_series[] = {
	{ "kernel", SWEEP_KERNEL },
	{ "sim checksum", SWEEP_SIM },
	{ "sim dirty", SWEEP_SIM },
	{ "sim hybrid", SWEEP_SIM },
};

static const char *const detector_of_series[] = { "checksum", "checksum", "dirty", "hybrid" };

static const struct sweep_ratio detector_ratios[] = { { 1, 0 }, { 2, 1 }, { 3, 1 } };

/* A writer of @region storing fresh values at random offsets of @pages before every scan. */
static void churn_writer(struct sweep_text *t, const char *region, const char *pages)
{
	add(t, "\n[writer %s-churn]\nregion = %s\npages = %s\noffset = random:0-4088\n"
	       "value = fresh\nwhen = every-scan\n",
	    region, region, pages);
}

static void volatile_writer(struct sweep_text *t, const char *region, uint64_t written)
{
	char pages[48];

	if (written == 0)
		return;
	snprintf(pages, sizeof(pages), "0-%llu", (unsigned long long)written - 1);
	churn_writer(t, region, pages);
}

/* volatile and detectors: two regions of @pages unique pages, the second
 * written the way a guest under EPT without A/D bits writes (no dirty bits) */
static void host_and_guest(struct sweep_text *t, uint64_t pages)
{
	add(t, "\n[region host]\npages = %llu\nfill = unique\n", (unsigned long long)pages);
	add(t, "\n[region guest]   # written without dirty bits (EPT without A/D)\npages = %llu\n"
	       "fill = unique\ndirty_tracking = no\n",
	    (unsigned long long)pages);
}

static int volatile_text(const struct sweep_def *d, size_t point, size_t series,
			 const struct sweep_env *env, struct sweep_text *t, char *name,
			 size_t namelen, char *err, size_t errlen)
{
	double fraction = d->x[point];
	uint64_t pages = scaled(env, 32768), written = (uint64_t)llround(fraction * (double)pages);

	(void)err;
	(void)errlen;
	snprintf(name, namelen, "sweep-volatile-%g.wl", fraction);
	add(t, "[global]\ndescription = ksmkit sweep volatile: %g of the pages rewritten "
	       "before every scan\nscans = 5\nsmart_scan = 0\npages_to_scan = %llu\n"
	       "sleep_millisecs = 20\ndetector = %s\n",
	    fraction, (unsigned long long)(2 * pages), detector_of_series[series]);
	host_and_guest(t, pages);
	volatile_writer(t, "host", written);
	volatile_writer(t, "guest", written);
	return 0;
}

/* What the faster detectors get wrong: their verdicts against the bytes. */
static void volatile_explain(const struct sweep_def *d, const struct sweep_env *env,
			     const struct sweep_point_result *res, FILE *out)
{
	(void)res;
	fprintf(out, "Mistakes against the bytes (pages called stable although written, and the "
		     "reverse), per run:\n");
	for (size_t p = 0; p < d->npoints; p++)
		for (size_t s = 2; s < d->nseries; s++) {
			struct sim_work w;

			if (sim_work_at(d, p, s, env, &w, NULL, 0) == 0)
				fprintf(out, "  x = %-5g %-11s false stable %8llu, false volatile %8llu\n",
					d->x[p], d->series[s].name, (unsigned long long)w.false_stable,
					(unsigned long long)w.false_volatile);
		}
	fprintf(out, "The dirty bit alone never sees writes to the half without dirty bits: it "
		     "calls them\nstable and pays tree walks for them; hybrid checksums that half.\n");
}

/* --- nai-xia: the seed experiment ------------------------------------------------- */

static const double nai_xia_x[] = { 0, 1 };
static const char *const nai_xia_names[] = { "4 KiB pages", "THP" };

static int nai_xia_text(const struct sweep_def *d, size_t point, size_t series,
			const struct sweep_env *env, struct sweep_text *t, char *name,
			size_t namelen, char *err, size_t errlen)
{
	(void)d;
	(void)err;
	(void)errlen;
	snprintf(name, namelen, "sweep-nai-xia-%s.wl", point ? "thp" : "4k");
	add(t, "[global]\ndescription = Nai Xia 2011: memset 1, random writes near the end of "
	       "every page, ksmd busy\ntime = 1s\nsmart_scan = 0   # 2011 had none\n"
	       "pages_to_scan = 1000\nsleep_millisecs = 0\n"
	       "detector = %s\n",
	    detector_of_series[series]);
	add(t, "\n[region area]\nsize = %llum\nfill = same\nvalue = 0x0101010101010101\n"
	       "thp = %s\n",
	    (unsigned long long)scaled(env, 256), point ? "always" : "never");
	add(t, "\n[writer scribble]\nregion = area\npages = all\noffset = random:4000-4088\n"
	       "value = fresh\nwhen = continuous\nrate = 10000000/s\n");
	return 0;
}

/* ns per visited page, by term of the cost model, as the simulator charges it. */
static void print_cost_shares(const struct sim_work *w, const struct sim_costs *c, FILE *out)
{
	double visits = w->visits ? (double)w->visits : 1, total = 0;

	for (int t = 0; t < SIM_TERM_COUNT; t++)
		total += sim_term_ns(c, w, t);
	fprintf(out, " %6.0f ns/page =", total / visits);
	for (int t = 0; t < SIM_TERM_COUNT; t++)
		if (sim_term_ns(c, w, t) / visits >= 0.5)
			fprintf(out, " %s %.0f", sim_cost_term_info(t)->name,
				sim_term_ns(c, w, t) / visits);
	fputc('\n', out);
}

static void nai_xia_explain(const struct sweep_def *d, const struct sweep_env *env,
			    const struct sweep_point_result *res, FILE *out)
{
	struct sim_config cfg;
	const struct sim_costs *c = costs_in_use(env, &cfg);

	(void)res;
	fprintf(out, "The seed's claim: the dirty bit scans up to 8x (4 KiB pages) and 16x (THP) "
		     "faster than the\nchecksum. Where the simulator's time goes, per page "
		     "visited (one run each):\n");
	for (size_t p = 0; p < d->npoints; p++)
		for (size_t s = 1; s < d->nseries; s++) {
			struct sim_work w;

			if (sim_work_at(d, p, s, env, &w, NULL, 0) != 0)
				continue;
			fprintf(out, "  %-12s %-13s", nai_xia_names[p], d->series[s].name);
			print_cost_shares(&w, c, out);
		}
	/* ksmd is busy here (sleep_millisecs = 0): a 4 KiB page's visit is a busy one */
	fprintf(out, "Every visit pays a fixed part (finding the rmap_item, walking the page "
		     "table, taking\nthe page) whatever detects volatility, so the speedup is "
		     "bounded by\n(busy_visit + checksum) / (busy_visit + dirty_test + tlb_flush) = "
		     "(%.0f + %.0f) / (%.0f + %.0f + %.0f)\n= %.1fx for 4 KiB pages. In a THP the "
		     "walk ends at the PMD, a visit costs less and\none flush serves 512 pages: "
		     "(visit_pmd + checksum) / (visit_pmd + dirty_test) = %.1fx.\nThe seed's "
		     "figures leave the fixed part out.\n",
		c->busy_visit_ns, c->checksum_ns, c->busy_visit_ns, c->dirty_test_ns,
		c->tlb_flush_ns,
		(c->busy_visit_ns + c->checksum_ns) /
			(c->busy_visit_ns + c->dirty_test_ns + c->tlb_flush_ns),
		(c->visit_pmd_ns + c->checksum_ns) / (c->visit_pmd_ns + c->dirty_test_ns));
}

/* --- detectors, detector-errors: what each detector trades --------------------------- */

/*
 * Every detector of the list (wl_policy.h) on the simulator, over the
 * fraction of pages written before every scan, drawn anew each time: a page
 * written in one scan is likely left alone in the next, so partial hashing
 * comes to trust it and then misses the write that comes (the volatile
 * sweep writes the same pages every scan, which it never trusts). 20 full
 * scans, so that trust and audits reach their steady rhythm.
 */
static const double detectors_x[] = { 0, 0.01, 0.05, 0.1, 0.25, 0.5, 1 };

#define SWEEP_DETECTOR_SERIES_(e, name, doc) { "sim " #name, SWEEP_SIM },
static const struct sweep_series detectors_series[] = { WL_DETECTORS(SWEEP_DETECTOR_SERIES_) };
#undef SWEEP_DETECTOR_SERIES_

/* each detector over the first, the kernel's checksum (its {0, 0} is left out) */
#define SWEEP_DETECTOR_RATIO_(e, name, doc) { WL_DETECTOR_##e, WL_DETECTOR_CHECKSUM },
static const struct sweep_ratio detectors_ratio_all[] = { WL_DETECTORS(SWEEP_DETECTOR_RATIO_) };
#undef SWEEP_DETECTOR_RATIO_

/* detector-errors: both mistakes of every detector but the truth itself */
#define SWEEP_ERROR_SERIES_(e, name, doc) \
	{ #name " false stable", SWEEP_SIM }, { #name " false volatile", SWEEP_SIM },
static const struct sweep_series errors_series_all[] = { WL_DETECTORS(SWEEP_ERROR_SERIES_) };
#undef SWEEP_ERROR_SERIES_

_Static_assert(WL_DETECTOR_CHECKSUM == 0, "the checksum, the truth, comes first in the list");
_Static_assert(WL_DETECTOR_COUNT <= SWEEP_MAX_SERIES &&
	       WL_DETECTOR_COUNT - 1 <= SWEEP_MAX_RATIOS &&
	       2 * (WL_DETECTOR_COUNT - 1) <= SWEEP_MAX_SERIES,
	       "more detectors than a sweep's series: raise SWEEP_MAX_SERIES and _RATIOS");

static int churn_text(const struct sweep_def *d, size_t point, enum wl_detector detector,
		      const struct sweep_env *env, struct sweep_text *t, char *name,
		      size_t namelen)
{
	double fraction = d->x[point];
	uint64_t pages = scaled(env, 32768), written = (uint64_t)llround(fraction * (double)pages);
	char sel[48];

	snprintf(name, namelen, "sweep-%s-%g-%s.wl", d->name, fraction, wl_detector_name(detector));
	add(t, "[global]\ndescription = ksmkit sweep %s: %g of the pages, drawn at random, "
	       "rewritten before every scan\nscans = 20\nsmart_scan = 0\npages_to_scan = %llu\n"
	       "sleep_millisecs = 20\ndetector = %s\n",
	    d->name, fraction, (unsigned long long)(2 * pages), wl_detector_name(detector));
	host_and_guest(t, pages);
	if (written == 0)
		return 0;
	snprintf(sel, sizeof(sel), "random:%llu", (unsigned long long)written);
	churn_writer(t, "host", sel);
	churn_writer(t, "guest", sel);
	return 0;
}

static int detectors_text(const struct sweep_def *d, size_t point, size_t series,
			  const struct sweep_env *env, struct sweep_text *t, char *name,
			  size_t namelen, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	return churn_text(d, point, (enum wl_detector)series, env, t, name, namelen);
}

/* detector-errors: series 2k and 2k + 1 are detector k + 1's two mistakes */
static enum wl_detector detector_of_error_series(size_t series)
{
	return (enum wl_detector)(1 + series / 2);
}

static int errors_text(const struct sweep_def *d, size_t point, size_t series,
		       const struct sweep_env *env, struct sweep_text *t, char *name,
		       size_t namelen, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	return churn_text(d, point, detector_of_error_series(series), env, t, name, namelen);
}

/* Each detector's mistakes against the bytes, in % of the visits (verdicts, here). */
static int errors_run(const struct sweep_def *d, size_t point, const struct sweep_env *env,
		      const bool *want, double *y, char *err, size_t errlen)
{
	for (size_t s = 0; s + 1 < d->nseries; s += 2) {
		struct sim_work w;

		if (!want[s] && !want[s + 1])
			continue;
		if (sim_work_at(d, point, s, env, &w, err, errlen) != 0)
			return -1;
		y[s] = w.visits ? 100.0 * (double)w.false_stable / (double)w.visits : NAN;
		y[s + 1] = w.visits ? 100.0 * (double)w.false_volatile / (double)w.visits : NAN;
	}
	return 0;
}

static void detectors_explain(const struct sweep_def *d, const struct sweep_env *env,
			      const struct sweep_point_result *res, FILE *out)
{
	struct sim_config cfg;
	const struct sim_costs *c = costs_in_use(env, &cfg);

	(void)res;
	fprintf(out, "Where a visit's time goes with no page written (x = 0), per page visited:\n");
	for (size_t s = 0; s < d->nseries; s++) {
		struct sim_work w;

		if (sim_work_at(d, 0, s, env, &w, NULL, 0) != 0)
			continue;
		fprintf(out, "  %-13s", d->series[s].name);
		print_cost_shares(&w, c, out);
	}
	fprintf(out, "Half the pages are written without dirty bits (a guest under EPT without "
		     "A/D bits):\nthe dirty bit misses those writes, the hybrid checksums that half. "
		     "Partial hashing\nsamples 16 or 32 words of a page it has seen unchanged and "
		     "misses a write outside\nthe sample until its next audit (ksmkit sweep "
		     "detector-errors counts the mistakes).\n");
}

static void errors_explain(const struct sweep_def *d, const struct sweep_env *env,
			   const struct sweep_point_result *res, FILE *out)
{
	(void)res;
	(void)d;
	(void)env;
	fprintf(out, "Against the bytes: a false stable is a visit that calls the page unchanged "
		     "although its\ncontent changed since the item's last visit (it goes on to the "
		     "trees); a false\nvolatile calls it changed although it did not. The checksum is "
		     "the truth and makes\nneither. Partial hashing's false volatiles are audits that "
		     "catch a write missed\nbefore the previous visit.\n");
}

/* --- merge: ksm_tests -P ------------------------------------------------------------ */

static const double merge_x[] = { 16, 64, 256, 1024 };

/* merge and predict: the kernel, then the simulator */
static const struct sweep_series kernel_sim_series[] = {
	{ "kernel", SWEEP_KERNEL },
	{ "sim", SWEEP_SIM },
};

static const struct sweep_ratio sim_over_kernel[] = { { 1, 0 } };

static int merge_text(const struct sweep_def *d, size_t point, size_t series,
		      const struct sweep_env *env, struct sweep_text *t, char *name,
		      size_t namelen, char *err, size_t errlen)
{
	unsigned long long mib = scaled(env, d->x[point]);

	(void)series;
	(void)err;
	(void)errlen;
	snprintf(name, namelen, "sweep-merge-%llum.wl", mib);
	add(t, "[global]\ndescription = ksmkit sweep merge: ksm_tests -P on %llu MiB\nscans = 3\n"
	       "pages_to_scan = 30000\nsleep_millisecs = 10\n",
	    mib);
	add(t, "\n[region buf]\nsize = %llum\nfill = same\nvalue = 0x2a2a2a2a2a2a2a2a\n", mib);
	return 0;
}

/* The simulator's -P figure: MiB merged per second until two full scans end. */
static double sim_merge_speed(const struct workload *wl, const struct sweep_env *env,
			      double mib, int *rc, char *err, size_t errlen)
{
	struct trace *t = NULL;
	double v = NAN;

	*rc = sim_trace(wl, env, &t, NULL, err, errlen);
	if (*rc == 0)
		for (size_t i = 0; i < t->nrows; i++)
			if (t->row[i].kind == TRACE_ROW_SCAN && t->row[i].scan == 2 &&
			    t->row[i].time_ns > 0)
				v = mib / ((double)t->row[i].time_ns / 1e9);
	trace_free(t);
	return v;
}

static int merge_run(const struct sweep_def *d, size_t point, const struct sweep_env *env,
		     const bool *want, double *y, char *err, size_t errlen)
{
	struct workload *wl = NULL;
	int rc = 0;

	if (load(d, point, 0, env, &wl, err, errlen) != 0)
		return -1;
	if (env->kernel && want[0]) {
		struct kb_result res;
		int k = kernel_result(wl, env, KB_MEASURE_MERGE, &res, err, errlen);

		rc = k < 0 ? -1 : 0;
		if (k == 0 && res.measurement.time_ns)
			y[0] = (double)res.measurement.bytes / MIB /
			       ((double)res.measurement.time_ns / 1e9);
		if (k == 0)
			kb_result_free(&res);
	}
	if (rc == 0 && want[1])
		y[1] = sim_merge_speed(wl, env, (double)scaled(env, d->x[point]), &rc, err, errlen);
	wl_free(wl);
	return rc;
}

/* --- cow: ksm_tests -C ------------------------------------------------------------- */

static const double cow_x[] = { 4, 16, 64 };

static const struct sweep_series cow_series[] = {
	{ "merged", SWEEP_KERNEL },
	{ "not merged", SWEEP_KERNEL },
};

static const struct sweep_ratio cow_ratios[] = { { 0, 1 } };

static int cow_text(const struct sweep_def *d, size_t point, size_t series,
		    const struct sweep_env *env, struct sweep_text *t, char *name, size_t namelen,
		    char *err, size_t errlen)
{
	unsigned long long mib = scaled(env, d->x[point]);

	(void)series;
	(void)err;
	(void)errlen;
	snprintf(name, namelen, "sweep-cow-%llum.wl", mib);
	add(t, "[global]\ndescription = ksmkit sweep cow: ksm_tests -C on %llu MiB\nscans = 3\n"
	       "pages_to_scan = 30000\nsleep_millisecs = 10\n",
	    mib);
	add(t, "\n[region buf]\nsize = %llum\nfill = same\nvalue = 0x2a2a2a2a2a2a2a2a\n", mib);
	add(t, "\n[event cow]\nat = after-scan:2\naction = write\nregion = buf\npages = all\n"
	       "offset = 0\nvalue = 0x2a2a2a2a2a2a2a2d\n");
	return 0;
}

static int cow_run(const struct sweep_def *d, size_t point, const struct sweep_env *env,
		   const bool *want, double *y, char *err, size_t errlen)
{
	struct workload *wl = NULL;
	struct kb_result res;
	int k;

	if (!env->kernel || !(want[0] || want[1]))
		return 0;
	if (load(d, point, 0, env, &wl, err, errlen) != 0)
		return -1;
	k = kernel_result(wl, env, KB_MEASURE_COW, &res, err, errlen);
	wl_free(wl);
	if (k != 0)
		return k < 0 ? -1 : 0;
	if (res.measurement.bytes) {
		double pages = (double)res.measurement.bytes / 4096;

		y[0] = (double)res.measurement.time_ns / pages;
		y[1] = (double)res.measurement.base_time_ns / pages;
	}
	kb_result_free(&res);
	return 0;
}

/* --- numa: per-node stable trees --------------------------------------------------- */

static const double numa_x[] = { 1, 2, 4 };

static const struct sweep_series numa_series[] = {
	{ "sim mac=1", SWEEP_SIM },
	{ "sim mac=0", SWEEP_SIM },
	{ "kernel mac=1", SWEEP_KERNEL },
	{ "kernel mac=0", SWEEP_KERNEL },
	{ "guest mac=1", SWEEP_GUEST },
	{ "guest mac=0", SWEEP_GUEST },
};

static const struct sweep_ratio numa_ratios[] = { { 1, 0 }, { 2, 0 }, { 3, 1 },
						  { 4, 0 }, { 5, 1 } };

static int numa_text(const struct sweep_def *d, size_t point, size_t series,
		     const struct sweep_env *env, struct sweep_text *t, char *name,
		     size_t namelen, char *err, size_t errlen)
{
	unsigned nodes = (unsigned)d->x[point];
	int mac = series % 2 ? 0 : 1;

	(void)env;
	(void)err;
	(void)errlen;
	snprintf(name, namelen, "sweep-numa-%u-mac%d.wl", nodes, mac);
	/* 50 copies a node: even 4 nodes stay under max_page_sharing = 256, so
	 * merge_across_nodes = 1 makes exactly one KSM page per group */
	add(t, "[global]\ndescription = ksmkit sweep numa: 4 groups of equal pages on each of "
	       "%u nodes\nscans = 3\npages_to_scan = 5000\nsleep_millisecs = 10\n"
	       "merge_across_nodes = %d\n",
	    nodes, mac);
	for (unsigned n = 0; n < nodes; n++)
		add(t, "\n[region node%u]\npages = 200\nnode = %u\nfill = groups\n"
		       "groups = 50x1,50x2,50x3,50x4\n",
		    n, n);
	return 0;
}

/* The last full-scan row of @t, or NULL. */
static const struct trace_row *last_scan_row(const struct trace *t)
{
	for (size_t i = t ? t->nrows : 0; i-- > 0;)
		if (t->row[i].kind == TRACE_ROW_SCAN)
			return &t->row[i];
	return NULL;
}

static double last_counter(const struct trace *t, enum trace_counter c)
{
	const struct trace_row *last = last_scan_row(t);

	return last ? (double)last->counter[c] : NAN;
}

/* Both guest series at once: one boot with as many nodes as the point. */
static int numa_guest(const struct sweep_def *d, size_t point, const struct sweep_env *env,
		      const bool *want, double *y, char *err, size_t errlen)
{
	struct workload *wl[2] = { NULL, NULL };
	struct kg_options opt;
	struct kg_session ses;
	char msg[512];
	int rc = -1, status;

	if (!env->guest_dir || !(want[4] || want[5]))
		return 0;
	if (load(d, point, 4, env, &wl[0], err, errlen) != 0 ||
	    load(d, point, 5, env, &wl[1], err, errlen) != 0)
		goto out;
	kg_options_init(&opt);
	opt.nodes = (unsigned)d->x[point];
	opt.dir = env->guest_dir;
	status = kg_run((const struct workload *const *)wl, 2, &opt, &ses, msg, sizeof(msg));
	if (status == KB_OK)
		for (size_t i = 0; i < 2 && i < ses.nruns; i++)
			if (ses.run[i].status == KB_OK)
				y[4 + i] = last_counter(ses.run[i].result.trace, TRACE_PAGES_SHARED);
	kg_session_free(&ses);
	if (status != KB_OK && status != KB_SKIPPED) {
		sweep_fail(err, errlen, "numa: guest with %u nodes: %s", opt.nodes, msg);
		goto out;
	}
	rc = 0;
out:
	wl_free(wl[0]);
	wl_free(wl[1]);
	return rc;
}

static int numa_run(const struct sweep_def *d, size_t point, const struct sweep_env *env,
		    const bool *want, double *y, char *err, size_t errlen)
{
	for (size_t s = 0; s < d->nseries; s++) {
		struct workload *wl = NULL;
		struct trace *tr = NULL;
		struct kb_result res;
		int rc = 0, k;

		if (!want[s] || d->series[s].engine == SWEEP_GUEST ||
		    (d->series[s].engine == SWEEP_KERNEL && !env->kernel))
			continue;
		if (load(d, point, s, env, &wl, err, errlen) != 0)
			return -1;
		if (d->series[s].engine == SWEEP_SIM) {
			rc = sim_trace(wl, env, &tr, NULL, err, errlen);
			y[s] = last_counter(tr, TRACE_PAGES_SHARED);
			trace_free(tr);
		} else {
			/* a node this machine lacks leaves the point unmeasured */
			k = kernel_result(wl, env, KB_MEASURE_NONE, &res, err, errlen);
			rc = k < 0 ? -1 : 0;
			if (k == 0) {
				y[s] = last_counter(res.trace, TRACE_PAGES_SHARED);
				kb_result_free(&res);
			}
		}
		wl_free(wl);
		if (rc)
			return -1;
	}
	return numa_guest(d, point, env, want, y, err, errlen);
}

/* --- numa-ksm, numa-merged: where the KSM pages are, node by node ------------------ */

/*
 * The numa workload on 4 nodes, seen node by node: how many KSM pages each
 * node holds (numa-ksm) and how many pages were merged into them
 * (numa-merged). A KSM page is one of the pages that were merged (the one
 * already in a tree), so its node is the node of its frame before any
 * merge: the capture after scan 1, when every page still has its own frame
 * (first visits only take checksums), tells which. The same inference
 * serves both engines, and its totals must equal pages_shared and
 * pages_sharing.
 */
#define NUMA_NODES 4

static const double numa_node_x[NUMA_NODES] = { 0, 1, 2, 3 };

static const struct sweep_series numa_node_series[] = {
	{ "sim mac=1", SWEEP_SIM },
	{ "sim mac=0", SWEEP_SIM },
	{ "guest mac=1", SWEEP_GUEST },
	{ "guest mac=0", SWEEP_GUEST },
};

static const struct sweep_ratio numa_node_ratios[] = { { 2, 0 }, { 3, 1 } };

/* Every point runs numa's workload with 4 nodes (series 0/2: mac=1, 1/3: mac=0). */
static int numa_node_text(const struct sweep_def *d, size_t point, size_t series,
			  const struct sweep_env *env, struct sweep_text *t, char *name,
			  size_t namelen, char *err, size_t errlen)
{
	static const double four[] = { NUMA_NODES };
	struct sweep_def numa = *d;

	(void)point;
	numa.x = four;
	numa.npoints = 1;
	return numa_text(&numa, 0, series, env, t, name, namelen, err, errlen);
}

/*
 * The present pages of @side that have a frame id (the simulator gives KSM's
 * zero page none), copied into @out: 0, or -1 when out of memory.
 */
static int frames_of(const struct xval_side *side, struct trace_page **out, size_t *n)
{
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < side->npages; i++)
		if ((side->pages[i].flags & TRACE_PAGE_PRESENT) && side->pages[i].frame &&
		    trace_pages_append(out, n, &cap, &side->pages[i]) != 0)
			return -1;
	return 0;
}

static int by_frame(const void *a, const void *b)
{
	const struct trace_page *x = a, *y = b;

	return (x->frame > y->frame) - (x->frame < y->frame);
}

/* Move the pages of @scan to the front of @page[from..n), sorted by frame; their count. */
static size_t gather_scan(struct trace_page *page, size_t from, size_t n, uint64_t scan)
{
	size_t k = from;

	for (size_t i = from; i < n; i++)
		if (page[i].scan == scan) {
			struct trace_page t = page[k];

			page[k++] = page[i];
			page[i] = t;
		}
	qsort(page + from, k - from, sizeof(*page), by_frame);
	return k - from;
}

struct node_count {
	double ksm[NUMA_NODES];    /* KSM pages on the node */
	double merged[NUMA_NODES]; /* pages merged into them (their pages_sharing) */
};

/*
 * Count KSM pages and merged pages per node in @page[0..n) (@wl's frames,
 * as frames_of keeps them) at the last scan of the trace @t. 0, or -1 with
 * a message (the counts must add up to the trace's pages_shared and
 * pages_sharing).
 */
static int count_frames(const struct workload *wl, struct trace_page *page, size_t n,
			const struct trace *t, struct node_count *out, char *err, size_t errlen)
{
	const struct trace_row *last = last_scan_row(t);
	double ksm = 0, merged = 0;
	size_t nfirst, nlast;

	if (!last || last->scan < 2)
		return sweep_fail(err, errlen, "numa per node: no captures to count");
	nfirst = gather_scan(page, 0, n, 1);
	nlast = gather_scan(page, nfirst, n, last->scan);
	for (size_t i = nfirst, j; i < nfirst + nlast; i = j) {
		struct trace_page *origin;
		int node;

		for (j = i + 1; j < nfirst + nlast && page[j].frame == page[i].frame; j++)
			;
		if (j - i < 2)
			continue; /* a page of its own */
		origin = bsearch(&page[i], page, nfirst, sizeof(*page), by_frame);
		node = origin ? wl->regions[origin->region].node : -1;
		if (node < 0 || node >= NUMA_NODES)
			return sweep_fail(err, errlen, "numa per node: a shared frame no placed page had "
						 "at scan 1");
		out->ksm[node] += 1;
		out->merged[node] += (double)(j - i - 1);
		ksm += 1;
		merged += (double)(j - i - 1);
	}
	if (ksm != (double)last->counter[TRACE_PAGES_SHARED] ||
	    merged != (double)last->counter[TRACE_PAGES_SHARING])
		return sweep_fail(err, errlen, "numa per node: %g KSM pages and %g merged, but "
					 "pages_shared %lld and pages_sharing %lld", ksm, merged,
			    (long long)last->counter[TRACE_PAGES_SHARED],
			    (long long)last->counter[TRACE_PAGES_SHARING]);
	return 0;
}

/* Count KSM pages and merged pages per node from one engine's side of @wl. */
static int count_per_node(const struct workload *wl, const struct xval_side *side,
			  struct node_count *out, char *err, size_t errlen)
{
	struct trace_page *page;
	size_t n;
	int rc;

	memset(out, 0, sizeof(*out));
	if (frames_of(side, &page, &n) != 0)
		rc = sweep_fail(err, errlen, "numa per node: no captures to count");
	else
		rc = count_frames(wl, page, n, side->trace, out, err, errlen);
	free(page);
	return rc;
}

/* The value @d plots for @node: KSM pages (numa-ksm) or pages merged (numa-merged). */
static double node_value(const struct sweep_def *d, const struct node_count *nc, size_t node)
{
	return strcmp(d->name, "numa-ksm") == 0 ? nc->ksm[node] : nc->merged[node];
}

static int numa_node_sim(const struct workload *wl, const struct sweep_env *env,
			 struct node_count *out, char *err, size_t errlen)
{
	struct xval_side side = { .trace = NULL };
	char why[256];
	int rc;

	if (env->mem_available &&
	    sim_admit(wl, &(struct sim_admit_options){ .costs = env->costs,
						       .capture_bytes = sizeof(struct trace_page) },
		      env->mem_available, NULL, why, sizeof(why)) != 0)
		rc = sweep_fail(err, errlen, "%s", why);
	else if (xval_run_sim(wl, wl->kernel, true, env->costs, &side, why, sizeof(why)) != 0)
		rc = sweep_fail(err, errlen, "%s: simulator: %s", wl->path, why);
	else
		rc = count_per_node(wl, &side, out, err, errlen);
	xval_side_free(&side);
	return rc;
}

/* Both guest series: one boot with 4 nodes, page partitions captured. */
static int numa_node_guest(const struct sweep_def *d, size_t point, const struct sweep_env *env,
			   double *y, char *err, size_t errlen)
{
	struct workload *wl[2] = { NULL, NULL };
	struct xval_guest_run runs[2];
	struct node_count nc;
	struct kg_options opt;
	char msg[512], release[128];
	int rc = -1, status = KB_FAILED;

	memset(runs, 0, sizeof(runs));
	if (load(d, point, 2, env, &wl[0], err, errlen) != 0 ||
	    load(d, point, 3, env, &wl[1], err, errlen) != 0)
		goto out;
	kg_options_init(&opt);
	opt.nodes = NUMA_NODES;
	opt.dir = env->guest_dir;
	status = xval_run_guest((const struct workload *const *)wl, 2, &opt, true, runs, release,
				sizeof(release), msg, sizeof(msg));
	if (status != KB_OK && status != KB_SKIPPED) {
		sweep_fail(err, errlen, "numa per node: guest: %s", msg);
		goto out;
	}
	for (size_t i = 0; status == KB_OK && i < 2; i++) {
		if (runs[i].status != KB_OK)
			continue;
		if (count_per_node(wl[i], &runs[i].side, &nc, err, errlen) != 0)
			goto out;
		y[2 + i] = node_value(d, &nc, point);
	}
	rc = 0;
out:
	xval_side_free(&runs[0].side);
	xval_side_free(&runs[1].side);
	wl_free(wl[0]);
	wl_free(wl[1]);
	return rc;
}

static int numa_node_run(const struct sweep_def *d, size_t point, const struct sweep_env *env,
			 const bool *want, double *y, char *err, size_t errlen)
{
	for (size_t s = 0; s < 2; s++) {
		struct workload *wl = NULL;
		struct node_count nc;
		int rc;

		if (!want[s])
			continue;
		if (load(d, point, s, env, &wl, err, errlen) != 0)
			return -1;
		rc = numa_node_sim(wl, env, &nc, err, errlen);
		wl_free(wl);
		if (rc != 0)
			return -1;
		y[s] = node_value(d, &nc, point);
	}
	if (!env->guest_dir || !(want[2] || want[3]))
		return 0;
	return numa_node_guest(d, point, env, y, err, errlen);
}

/* --- editing a workload's [global] ------------------------------------------------ */

/* The key of an INI line "  key = value", or NULL with @len 0. */
static const char *line_key(const char *line, size_t *len)
{
	const char *k = line + strspn(line, " \t");

	*len = strspn(k, "abcdefghijklmnopqrstuvwxyz0123456789_");
	return *len && k[*len + strspn(k + *len, " \t")] == '=' ? k : NULL;
}

static bool is_key(const char *key, size_t len, const char *want)
{
	return key && len == strlen(want) && memcmp(key, want, len) == 0;
}

/*
 * @in with [global]'s lines of the keys in @drop (NULL-terminated) replaced
 * by @keys, written at the end of [global] (so that the lines before keep
 * their numbers in messages).
 */
static void replace_global_keys(const struct sweep_text *in, const char *const *drop,
				const char *keys, struct sweep_text *out)
{
	bool in_global = false, done = false;

	for (const char *line = in->buf; *line;) {
		size_t n = strcspn(line, "\n"), klen;
		const char *at = line + strspn(line, " \t"), *key = line_key(line, &klen);
		bool dropped = false;

		if (*at == '[') {
			if (in_global && !done)
				add(out, "%s\n", keys), done = true;
			in_global = strncmp(at, "[global]", 8) == 0;
		}
		for (const char *const *k = drop; in_global && *k; k++)
			dropped |= is_key(key, klen, *k);
		if (!dropped)
			add(out, "%.*s%s", (int)n, line, line[n] ? "\n" : "");
		line += n + (line[n] ? 1 : 0);
	}
	if (in_global && !done)
		add(out, "\n%s", keys);
	if (in->overflow)
		out->overflow = true;
}

/* --- predict: the simulator's scan speed on the validation workloads ---------------- */

/* The validation workloads (the shipped deterministic ones), by path under workloads/. */
#define SWEEP_VALIDATION_WORKLOADS(X)                                                        \
	X("chains-straggler") X("chains") X("cow-remerge") X("exit-middle") X("fork-cow")      \
	X("fork") X("selftests/ksm_tests-C-t0") X("selftests/ksm_tests-M-t1")                 \
	X("selftests/ksm_tests-P-t0") X("selftests/ksm_tests-M-t0")                           \
	X("selftests/ksm_tests-U-t0") X("selftests/ksm_tests-Z-z0-t0")                        \
	X("selftests/ksm_tests-Z-z1-t0") X("munmap-middle") X("registration-order")           \
	X("run2-restart") X("smart-scan-unique") X("thp-merge") X("unmerge-part-of-chain")    \
	X("volatile-half") X("zero-pages-cow")

#define SWEEP_WORKLOAD_NAME_(name) name,
static const char *const predict_names[] = { SWEEP_VALIDATION_WORKLOADS(SWEEP_WORKLOAD_NAME_) };

/* x of the sweeps whose points are workloads: their index */
static const double workload_x[SWEEP_MAX_POINTS] = {
	0,  1,	2,  3,	4,  5,	6,  7,	8,  9,	10, 11, 12, 13, 14, 15,
	16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
};

/* workloads/NAME.wl (or under env->workloads_dir) as it is, into @t; its path in @name. */
static int read_workload(const struct sweep_env *env, const char *workload, struct sweep_text *t,
			 char *name, size_t namelen, char *err, size_t errlen)
{
	FILE *f;

	snprintf(name, namelen, "%s/%s.wl", env->workloads_dir ? env->workloads_dir : "workloads",
		 workload);
	f = fopen(name, "r");
	if (!f)
		return sweep_fail(err, errlen, "%s: %s", name, strerror(errno));
	t->len = fread(t->buf, 1, sizeof(t->buf) - 1, f);
	t->overflow = !feof(f);
	t->buf[t->len] = '\0';
	fclose(f);
	return 0;
}

/*
 * predict's series: for each engine, each variant (the workload's own knobs,
 * and busy: sleep_millisecs 0 and a batch as large as a full scan, where
 * ksmd's CPU is all the time there is), its wall-clock scan speed and its
 * ksmd CPU per MiB scanned, both from one run. The ratios sim / kernel of
 * each: where the model is right, 1.
 */
enum predict_series {
	PREDICT_KERNEL_WALL, PREDICT_SIM_WALL, PREDICT_KERNEL_CPU, PREDICT_SIM_CPU,
	PREDICT_KERNEL_BUSY_WALL, PREDICT_SIM_BUSY_WALL, PREDICT_KERNEL_BUSY_CPU,
	PREDICT_SIM_BUSY_CPU, PREDICT_SERIES
};

static const struct sweep_series predict_series[PREDICT_SERIES] = {
	[PREDICT_KERNEL_WALL] = { "kernel wall", SWEEP_KERNEL },
	[PREDICT_SIM_WALL] = { "sim wall", SWEEP_SIM },
	[PREDICT_KERNEL_CPU] = { "kernel cpu", SWEEP_KERNEL },
	[PREDICT_SIM_CPU] = { "sim cpu", SWEEP_SIM },
	[PREDICT_KERNEL_BUSY_WALL] = { "busy kernel wall", SWEEP_KERNEL },
	[PREDICT_SIM_BUSY_WALL] = { "busy sim wall", SWEEP_SIM },
	[PREDICT_KERNEL_BUSY_CPU] = { "busy kernel cpu", SWEEP_KERNEL },
	[PREDICT_SIM_BUSY_CPU] = { "busy sim cpu", SWEEP_SIM },
};

static const struct sweep_ratio predict_ratios[] = {
	{ PREDICT_SIM_WALL, PREDICT_KERNEL_WALL },
	{ PREDICT_SIM_CPU, PREDICT_KERNEL_CPU },
	{ PREDICT_SIM_BUSY_WALL, PREDICT_KERNEL_BUSY_WALL },
	{ PREDICT_SIM_BUSY_CPU, PREDICT_KERNEL_BUSY_CPU },
};

static bool predict_busy(size_t series)
{
	return series >= PREDICT_KERNEL_BUSY_WALL;
}

/* A batch larger than any validation workload: one batch a full scan. */
#define PREDICT_BUSY_KEYS "sleep_millisecs = 0   # ksmkit sweep predict, busy\npages_to_scan = 100000000\n"

static int predict_text(const struct sweep_def *d, size_t point, size_t series,
			const struct sweep_env *env, struct sweep_text *t, char *name,
			size_t namelen, char *err, size_t errlen)
{
	static const char *const busy_drops[] = { "sleep_millisecs", "pages_to_scan", NULL };
	struct sweep_text *file;

	(void)d;
	if (!predict_busy(series))
		return read_workload(env, predict_names[point], t, name, namelen, err, errlen);
	file = malloc(sizeof(*file));
	if (!file)
		return sweep_fail(err, errlen, "out of memory");
	file->len = 0;
	if (read_workload(env, predict_names[point], file, name, namelen, err, errlen) != 0) {
		free(file);
		return -1;
	}
	replace_global_keys(file, busy_drops, PREDICT_BUSY_KEYS, t);
	free(file);
	return 0;
}

/* ksmd CPU ms per MiB scanned, from a speed in MiB per CPU second. */
static double cpu_ms_per_mib(double per_cpu)
{
	return per_cpu > 0 ? 1000 / per_cpu : NAN;
}

/*
 * The last full scan after which @wl has steps, or UINT64_MAX when they go
 * on to its end (a writer every scan for ever, a continuous one, a capture
 * replayed in time).
 */
static uint64_t last_step_scan(const struct workload *wl)
{
	uint64_t last = 0;

	for (size_t i = 0; i < wl->nevents; i++)
		last = wl->events[i].at_scan > last ? wl->events[i].at_scan : last;
	for (size_t i = 0; i < wl->nwriters; i++) {
		const struct wl_writer *w = &wl->writers[i];

		if (w->when == WL_WHEN_CONTINUOUS || w->until_scan == WL_FOREVER)
			return UINT64_MAX;
		last = w->until_scan > last ? w->until_scan : last;
	}
	for (size_t i = 0; i < wl->nregions; i++) {
		const struct wl_capture *cap = wl->regions[i].capture;

		if (!cap)
			continue;
		if (cap->by_time)
			return UINT64_MAX;
		for (size_t k = 0; k < cap->nsteps; k++)
			last = cap->steps[k].at_scan > last ? cap->steps[k].at_scan : last;
	}
	return last;
}

/*
 * Busy, a workload's steps cannot keep to their scans on the kernel: with
 * no sleep, ksmd runs on while the runner sees a scan end and pauses it, a
 * tiny host tens of scans on, so a fork due after scan 2 comes after scan
 * 30. The busy variant therefore runs PREDICT_BUSY_TAIL scans past its last
 * step, and both engines are measured over that tail, from the kernel's
 * first row PREDICT_BUSY_SETTLE scans after the row whose steps were the
 * last: by then the two have done the same steps and their pages have
 * settled, whenever the steps came.
 */
#define PREDICT_BUSY_TAIL 200u
#define PREDICT_BUSY_SETTLE 3u

/* The first and last full-scan rows of @t from scan @from on; false: none. */
static bool scan_rows_from(const struct trace *t, uint64_t from, const struct trace_row **first,
			   const struct trace_row **last)
{
	*first = *last = NULL;
	for (size_t i = 0; i < t->nrows; i++) {
		const struct trace_row *r = &t->row[i];

		if (r->kind != TRACE_ROW_SCAN || r->scan < from)
			continue;
		if (!*first)
			*first = r;
		*last = r;
	}
	return *first != NULL;
}

/*
 * A busy tail of a tiny host is over in a millisecond or two of ksmd's CPU,
 * where a timer tick or an interrupt is a tenth of the figure: ksm_tests -M
 * (10 pages, 7 us a scan) measured 6.1 to 8.6 us a scan in runs seconds
 * apart over such windows. The tail is therefore as many scans as the
 * model says take PREDICT_BUSY_CPU_NS of ksmd's CPU, at least
 * PREDICT_BUSY_TAIL and at most PREDICT_BUSY_MAX_TAIL.
 */
#define PREDICT_BUSY_CPU_NS 50000000.0
#define PREDICT_BUSY_MAX_TAIL 20000u

/*
 * The tail for @wl, whose run stops PREDICT_BUSY_TAIL scans past its last
 * step @last: from the simulator's CPU per scan over those scans.
 */
static uint64_t busy_tail(const struct workload *wl, const struct sweep_env *env, uint64_t last,
			  char *err, size_t errlen)
{
	const struct trace_row *first, *end;
	struct trace *t = NULL;
	double per_scan_ns = 0, want;

	if (sim_trace(wl, env, &t, NULL, err, errlen) != 0)
		return 0;
	if (scan_rows_from(t, last + PREDICT_BUSY_SETTLE, &first, &end) && end->scan > first->scan)
		per_scan_ns = (double)(end->ksmd_cpu_ns - first->ksmd_cpu_ns) /
			      (double)(end->scan - first->scan);
	trace_free(t);
	if (!(per_scan_ns > 0))
		return PREDICT_BUSY_TAIL;
	want = ceil(PREDICT_BUSY_CPU_NS / per_scan_ns);
	if (want <= PREDICT_BUSY_TAIL)
		return PREDICT_BUSY_TAIL;
	return want >= PREDICT_BUSY_MAX_TAIL ? PREDICT_BUSY_MAX_TAIL : (uint64_t)want;
}

/*
 * The window a busy kernel trace is measured over: from its first row
 * PREDICT_BUSY_SETTLE scans after the row whose steps were the last (@last;
 * 0: no steps, any row from scan 1 on) to its last row. Whether there is
 * such a row: a tiny host can run past the whole tail before the runner
 * sees its first scan, leaving only rows that still hold the steps.
 */
static bool busy_window(const struct trace *t, uint64_t last, uint64_t *from, uint64_t *to)
{
	uint64_t settled = 0;

	*from = *to = 0;
	for (size_t i = 0; i < t->nrows; i++) {
		const struct trace_row *r = &t->row[i];

		if (r->kind != TRACE_ROW_SCAN)
			continue;
		if (last && r->scan >= last && !settled)
			settled = r->scan + PREDICT_BUSY_SETTLE;
		if (r->scan >= 1 && r->scan >= settled && (!*from || r->scan < *from))
			*from = r->scan;
		if (r->scan > *to)
			*to = r->scan;
	}
	if (*from == *to)
		*from = 0;
	return *from != 0;
}

/*
 * Whether the busy variant of @wl can be compared: not when its steps go on
 * to its end (a writer after every scan, a continuous one, a capture
 * replayed in time). A busy ksmd cannot keep steps to their scans, so with
 * no scans past the last step to measure over, the kernel and the
 * simulator would not do the same work: volatile-half's writer, due after
 * each of its 8 scans, came after 2 of them on the kernel (2026-12-06), and
 * the busy ratio read 0.73.
 */
static bool busy_comparable(const struct workload *wl)
{
	return last_step_scan(wl) != UINT64_MAX;
}

/*
 * predict --calibrate (sweep.h): the calibration session, the round the
 * sweep is in, and the window each busy kernel run was measured over, by
 * point and round, which the simulator's busy series are measured over
 * again with the fitted costs.
 */
struct busy_window {
	uint64_t from, to, stop; /* stop: the simulator's stop_scans (0: not by scans) */
	bool kept;
};

struct sweep_fit {
	struct calib_options opt;
	struct calib_session *session;
	struct calib_result result;
	bool fitted;
	unsigned round, runs;
	struct busy_window *busy; /* [point * runs + round] */
};

static void keep_busy_window(struct sweep_fit *f, size_t point, uint64_t from, uint64_t to,
			     const struct workload *wl)
{
	struct busy_window *w;

	if (!f || !f->busy || f->round >= f->runs)
		return;
	w = &f->busy[point * f->runs + f->round];
	*w = (struct busy_window){ from, to, wl->stop == WL_STOP_SCANS ? wl->stop_scans : 0, true };
}

/*
 * The busy variant on both engines over the same scans. With no sleep, ksmd
 * finishes tens or hundreds of full scans before the runner reads the
 * counters again, so the kernel's trace has a row at scan 0 and a few far
 * apart; the simulator then runs as many scans as the kernel's last row
 * says, and both are measured from the kernel's first row after the steps
 * settled (or scan 0, when there is no other) to that last one. When the
 * kernel's first row after the steps came past the whole tail, the kernel
 * runs once more, to three times that row's scan, so that rows after it
 * give a window without the steps.
 */
static int predict_busy_run(const struct sweep_def *d, size_t point, const struct sweep_env *env,
			    double *y, char *err, size_t errlen)
{
	struct workload *wl = NULL;
	struct trace *st = NULL;
	struct kb_result res;
	struct speeds kv, sv;
	uint64_t from, to, last;
	int k, rc = -1;

	if (load(d, point, PREDICT_KERNEL_BUSY_WALL, env, &wl, err, errlen) != 0)
		return -1;
	last = last_step_scan(wl);
	if (!busy_comparable(wl)) {
		rc = 0; /* named in predict_explain: the busy series stay unmeasured */
		goto out;
	}
	if (last != UINT64_MAX && wl->stop == WL_STOP_SCANS) {
		uint64_t end = last > wl->stop_scans ? last : wl->stop_scans, tail;

		wl->stop_scans = end + PREDICT_BUSY_TAIL;
		tail = busy_tail(wl, env, last, err, errlen);
		if (!tail)
			goto out;
		wl->stop_scans = end + tail;
	} else {
		last = 0;
	}
	for (int attempt = 0;; attempt++) {
		k = kernel_result(wl, env, KB_MEASURE_NONE, &res, err, errlen);
		if (k != 0) {
			rc = k > 0 ? 0 : -1; /* skipped: the series stay unmeasured */
			goto out;
		}
		if (busy_window(res.trace, last, &from, &to) || !last || attempt)
			break; /* last != 0: the workload stops by scans */
		kb_result_free(&res);
		wl->stop_scans = 3 * (to > wl->stop_scans ? to : wl->stop_scans);
	}
	kv = window_speeds(res.trace, from, to);
	kb_result_free(&res);
	if (wl->stop == WL_STOP_SCANS && to > wl->stop_scans)
		wl->stop_scans = to;
	keep_busy_window(env->fit, point, from, to, wl);
	if (sim_trace(wl, env, &st, NULL, err, errlen) != 0)
		goto out;
	sv = window_speeds(st, from, to);
	y[PREDICT_KERNEL_BUSY_WALL] = kv.wall;
	y[PREDICT_KERNEL_BUSY_CPU] = cpu_ms_per_mib(kv.per_cpu);
	y[PREDICT_SIM_BUSY_WALL] = sv.wall;
	y[PREDICT_SIM_BUSY_CPU] = cpu_ms_per_mib(sv.per_cpu);
	rc = 0;
out:
	trace_free(st);
	wl_free(wl);
	return rc;
}

/*
 * At its own knobs a small workload's measured window is a few wakeups of
 * ksmd: ksm_tests -M's two scans are about 60 us of CPU, and its runs
 * differed by a CV of 0.39 (12 runs, 2026-12-06), as did the wakeups of an
 * 8-page host beside each, without following them (correlation -0.1 to 0.8
 * by workload: a yardstick beside each run does not track the wakeups).
 * So one repetition on the kernel pools runs until their windows hold
 * PREDICT_OWN_CPU_NS of ksmd's CPU, at most PREDICT_OWN_MAX_RUNS: each
 * run's CPU and wall time per MiB, averaged (every run scans the same MiB).
 */
#define PREDICT_OWN_CPU_NS 2000000.0
#define PREDICT_OWN_MAX_RUNS 40u

/* ksmd's CPU time over @t's full-scan rows from scan 1 on, or 0. */
static double window_cpu_ns(const struct trace *t)
{
	const struct trace_row *first, *last;

	return scan_rows_from(t, 1, &first, &last) && last->ksmd_cpu_ns > first->ksmd_cpu_ns
		       ? (double)(last->ksmd_cpu_ns - first->ksmd_cpu_ns) : 0;
}

static struct speeds kernel_pooled_speeds(const struct workload *wl, const struct sweep_env *env,
					  int *rc, char *err, size_t errlen)
{
	double cpu_ns = 0, wall_per_mib = 0, cpu_per_mib = 0;
	unsigned runs = 0;

	*rc = 0;
	while (runs < PREDICT_OWN_MAX_RUNS && cpu_ns < PREDICT_OWN_CPU_NS) {
		struct kb_result res;
		struct speeds v;
		int k = kernel_result(wl, env, KB_MEASURE_NONE, &res, err, errlen);

		if (k != 0) {
			*rc = k < 0 ? -1 : 0;
			return (struct speeds){ NAN, NAN };
		}
		v = speeds_of(res.trace);
		cpu_ns += window_cpu_ns(res.trace);
		kb_result_free(&res);
		if (!(v.wall > 0) || !(v.per_cpu > 0))
			return (struct speeds){ NAN, NAN };
		wall_per_mib += 1 / v.wall;
		cpu_per_mib += 1 / v.per_cpu;
		runs++;
	}
	return (struct speeds){ runs / wall_per_mib, runs / cpu_per_mib };
}

/*
 * Each engine once at the workload's own knobs (the kernel pooled, above),
 * that run giving its wall and CPU series; the busy variant once on both
 * (predict_busy_run), or on the simulator alone without the kernel.
 */
static int predict_run(const struct sweep_def *d, size_t point, const struct sweep_env *env,
		       const bool *want, double *y, char *err, size_t errlen)
{
	for (size_t base = 0; base < PREDICT_SERIES; base += PREDICT_KERNEL_BUSY_WALL) {
		if (base && env->kernel && (want[PREDICT_KERNEL_BUSY_WALL] || want[PREDICT_KERNEL_BUSY_CPU]))
			return predict_busy_run(d, point, env, y, err, errlen);
		for (size_t e = 0; e < 2; e++) {
			const size_t sw = base + e, sc = base + PREDICT_KERNEL_CPU + e;
			const bool kernel = d->series[sw].engine == SWEEP_KERNEL;
			struct workload *wl = NULL;
			struct speeds v;
			int rc = 0;

			if (!(want[sw] || want[sc]) || (kernel && !env->kernel))
				continue;
			if (load(d, point, sw, env, &wl, err, errlen) != 0)
				return -1;
			v = kernel ? kernel_pooled_speeds(wl, env, &rc, err, errlen)
				   : sim_speeds(wl, env, NULL, &rc, err, errlen);
			wl_free(wl);
			if (rc)
				return -1;
			y[sw] = v.wall;
			y[sc] = cpu_ms_per_mib(v.per_cpu);
		}
	}
	return 0;
}

/*
 * The calibration's kernel runs in predict's: as many as calibrate's 12
 * rounds hold (its default --repeats 3: each pooled calibration workload
 * 12 times, the others 3), spread evenly over the sweep's runs, a few
 * before each. ksmd's costs here move together by tens of percent within
 * a minute (a validation workload and the 8-page host alternated 40 times,
 * 2026-12-06: correlation 0.3 to 0.6), so the calibration's runs go where
 * the validation runs go, not in blocks of their own: run a round of them
 * before each of predict's rounds, and the fit saw 1.0 of what calibrate
 * had seen that morning while the validation workloads measured 0.75-0.97
 * of it, own knobs 8 of 21 within the band.
 */
#define PREDICT_CALIB_ROUNDS 12u

static int predict_before_run(const struct sweep_def *d, const struct sweep_env *env,
			      size_t point, unsigned round, unsigned runs, char *err,
			      size_t errlen)
{
	struct sweep_fit *f = env->fit;
	size_t total = calib_session_runs_in(PREDICT_CALIB_ROUNDS);
	size_t slots = d->npoints * (size_t)runs, slot = (size_t)round * d->npoints + point;
	size_t due = total * (slot + 1) / slots;
	char skip[512], line[96];

	if (!f || !env->kernel)
		return 0;
	if (!f->busy || f->runs != runs) {
		free(f->busy);
		f->busy = calloc(d->npoints * (size_t)runs, sizeof(*f->busy));
		if (!f->busy)
			return sweep_fail(err, errlen, "out of memory");
		f->runs = runs;
	}
	f->round = round;
	for (size_t done = calib_session_runs(f->session); done < due; done++) {
		int rc;

		if (f->opt.note && done % 10 == 0) {
			snprintf(line, sizeof(line), "calibrate: kernel run %zu of %zu", done + 1,
				 total);
			f->opt.note(line, f->opt.note_arg);
		}
		rc = calib_session_step(f->session, skip, sizeof(skip), err, errlen);
		if (rc > 0)
			return sweep_fail(err, errlen, "calibration: kernel: %s", skip);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* The simulator's own-knob series of @point at @env's costs, into every round of @y. */
static int recost_own(const struct sweep_def *d, size_t point, const struct sweep_env *env,
		      unsigned runs, double *y, char *err, size_t errlen)
{
	bool want[PREDICT_SERIES] = { [PREDICT_SIM_WALL] = true, [PREDICT_SIM_CPU] = true };
	double v[PREDICT_SERIES];

	for (size_t s = 0; s < PREDICT_SERIES; s++)
		v[s] = NAN;
	if (predict_run(d, point, env, want, v, err, errlen) != 0)
		return -1;
	for (unsigned r = 0; r < runs; r++) {
		y[r * PREDICT_SERIES + PREDICT_SIM_WALL] = v[PREDICT_SIM_WALL];
		y[r * PREDICT_SERIES + PREDICT_SIM_CPU] = v[PREDICT_SIM_CPU];
	}
	return 0;
}

/*
 * The simulator's busy series of @point at @env's costs, over the window
 * each round's kernel run was measured over: one simulator run, as long as
 * the longest of the rounds' (the simulator does the same scans whatever
 * comes after them).
 */
static int recost_busy(const struct sweep_def *d, size_t point, const struct sweep_env *env,
		       const struct busy_window *w, unsigned runs, double *y, char *err,
		       size_t errlen)
{
	struct workload *wl = NULL;
	struct trace *st = NULL;
	uint64_t stop = 0;
	bool any = false;
	int rc = -1;

	for (unsigned r = 0; r < runs; r++) {
		any |= w[r].kept;
		stop = w[r].kept && w[r].stop > stop ? w[r].stop : stop;
	}
	if (!any)
		return 0;
	if (load(d, point, PREDICT_KERNEL_BUSY_WALL, env, &wl, err, errlen) != 0)
		return -1;
	if (stop && wl->stop == WL_STOP_SCANS)
		wl->stop_scans = stop;
	if (sim_trace(wl, env, &st, NULL, err, errlen) != 0)
		goto out;
	for (unsigned r = 0; r < runs; r++) {
		struct speeds sv;

		if (!w[r].kept)
			continue;
		sv = window_speeds(st, w[r].from, w[r].to);
		y[r * PREDICT_SERIES + PREDICT_SIM_BUSY_WALL] = sv.wall;
		y[r * PREDICT_SERIES + PREDICT_SIM_BUSY_CPU] = cpu_ms_per_mib(sv.per_cpu);
	}
	rc = 0;
out:
	trace_free(st);
	wl_free(wl);
	return rc;
}

/*
 * The last round over: the fit from every calibration round, and the
 * simulator's series again at its costs. The simulator's CPU time is its
 * work by the cost of each term, and its work does not depend on the
 * costs, so this is the same as having run it with them from the start.
 */
static int predict_rounds_done(const struct sweep_def *d, const struct sweep_env *env,
			       size_t first, size_t n, unsigned runs, double *y, char *err,
			       size_t errlen)
{
	struct sweep_fit *f = env->fit;
	struct sweep_env fitted;

	if (!f || !env->kernel)
		return 0;
	if (f->fitted)
		calib_result_free(&f->result);
	f->fitted = false;
	if (calib_session_fit(f->session, &f->result, err, errlen) != 0)
		return -1;
	f->fitted = true;
	fitted = *env;
	fitted.costs = &f->result.costs;
	fitted.kernel = false; /* the simulator's series alone */
	for (size_t i = 0; i < n; i++) {
		double *rows = &y[i * runs * PREDICT_SERIES];

		if (recost_own(d, first + i, &fitted, runs, rows, err, errlen) != 0 ||
		    recost_busy(d, first + i, &fitted, &f->busy[(first + i) * runs], runs, rows,
				err, errlen) != 0)
			return -1;
	}
	return 0;
}

int sweep_fit_new(const struct calib_options *opt, struct sweep_fit **out, char *err,
		  size_t errlen)
{
	struct sweep_fit *f = calloc(1, sizeof(*f));

	*out = f;
	if (!f)
		return sweep_fail(err, errlen, "out of memory");
	f->opt = *opt;
	if (calib_session_open(&f->opt, &f->session, err, errlen) != 0) {
		sweep_fit_free(f);
		*out = NULL;
		return -1;
	}
	return 0;
}

const struct calib_result *sweep_fit_result(const struct sweep_fit *f)
{
	return f && f->fitted ? &f->result : NULL;
}

size_t sweep_fit_runs(const struct sweep_fit *f)
{
	return f ? calib_session_runs(f->session) : 0;
}

void sweep_fit_free(struct sweep_fit *f)
{
	if (!f)
		return;
	if (f->fitted)
		calib_result_free(&f->result);
	calib_session_close(f->session);
	free(f->busy);
	free(f);
}

/*
 * The band predict holds the CPU ratios to. A median outside it is a miss
 * the repetitions show when the median's confidence interval of 90% or
 * more (sweep_stat: at 5 runs their min and max, 1 in 32 each side; at 9
 * the second smallest and largest) lies beyond the same edge; when the
 * interval reaches into the band, the workload is named with it: the
 * kernel's own runs did not tell its median from the band.
 */
#define PREDICT_LO 0.85
#define PREDICT_HI 1.15

enum cpu_verdict { CPU_WITHIN, CPU_NAMED, CPU_OUT, CPU_UNMEASURED };

static enum cpu_verdict cpu_verdict(const struct sweep_stat *r)
{
	if (!r->n || !(r->median > 0))
		return CPU_UNMEASURED;
	if (r->median >= PREDICT_LO && r->median <= PREDICT_HI)
		return CPU_WITHIN;
	if (r->hi < PREDICT_LO || r->lo > PREDICT_HI)
		return CPU_OUT;
	return CPU_NAMED;
}

/* The median over the workloads of the CPU ratio @ratio, NAN if none. */
static double median_over_points(const struct sweep_def *d, const struct sweep_point_result *res,
				 size_t ratio)
{
	double v[SWEEP_MAX_POINTS];
	unsigned n = 0;

	for (size_t p = 0; p < d->npoints; p++)
		if (res[p].ratio[ratio].n && res[p].ratio[ratio].median > 0)
			v[n++] = res[p].ratio[ratio].median;
	return sweep_stat_of(v, n).median;
}

/* How many workloads have verdict @v on the CPU ratio @ratio. */
static size_t count_verdict(const struct sweep_def *d, const struct sweep_point_result *res,
			    size_t ratio, enum cpu_verdict v)
{
	size_t n = 0;

	for (size_t p = 0; p < d->npoints; p++)
		n += cpu_verdict(&res[p].ratio[ratio]) == v;
	return n;
}

/*
 * One line per verdict for the CPU ratio @ratio: how many are within the
 * band, which are named because their median's interval reaches into it
 * (with the interval), and which are out, the interval beyond one edge; then
 * the ratios' median over the workloads, which says whether they moved
 * together (predict_explain).
 */
static void judge_cpu(const struct sweep_def *d, const struct sweep_point_result *res,
		      size_t ratio, const char *what, FILE *out)
{
	size_t unmeasured = count_verdict(d, res, ratio, CPU_UNMEASURED);

	if (unmeasured == d->npoints)
		return; /* no kernel: nothing to judge */
	fprintf(out, "CPU ratio %s: %zu of %zu within %.2f-%.2f", what,
		count_verdict(d, res, ratio, CPU_WITHIN), d->npoints - unmeasured, PREDICT_LO,
		PREDICT_HI);
	for (int v = CPU_NAMED; v <= CPU_OUT; v++) {
		bool first = true;

		for (size_t p = 0; p < d->npoints; p++) {
			const struct sweep_stat *r = &res[p].ratio[ratio];

			if (cpu_verdict(r) != (enum cpu_verdict)v)
				continue;
			fprintf(out, "%s%s %.2f (%.2f-%.2f)",
				first ? (v == CPU_NAMED ? ";\n  named, the median outside, its "
							  "interval reaching into the band: "
							: ";\n  out, the median and its interval: ")
				      : ", ",
				predict_names[p], r->median, r->lo, r->hi);
			first = false;
		}
	}
	fprintf(out, "\n  their median over the workloads: %.2f\n",
		median_over_points(d, res, ratio));
}

/* Name the validation workloads predict_busy_run() leaves unmeasured, and why. */
static void explain_not_busy(const struct sweep_def *d, const struct sweep_env *env, FILE *out)
{
	bool any = false;
	char err[256];

	for (size_t p = 0; p < d->npoints; p++) {
		struct workload *wl = NULL;

		if (load(d, p, PREDICT_KERNEL_BUSY_WALL, env, &wl, err, sizeof(err)) != 0)
			continue;
		if (!busy_comparable(wl)) {
			fprintf(out, "%s%s", any ? ", " : "Not compared busy: ", predict_names[p]);
			any = true;
		}
		wl_free(wl);
	}
	if (any)
		fprintf(out, ".\nTheir steps go on to their end, and a busy ksmd cannot keep steps to\n"
			     "their scans (volatile-half's writer, due after each of 8 scans, came\n"
			     "after 2 of them on the kernel), so the two would not do the same work.\n");
	fprintf(out, "A busy host whose pages all went to the zero page (use_zero_pages) scans\n"
		     "none, and its CPU per MiB scanned has nothing to divide by: '-'.\n");
}

/* With --calibrate: where the simulator's costs came from. */
static void explain_fit(const struct sweep_env *env, FILE *out)
{
	const struct calib_result *res = sweep_fit_result(env->fit);

	if (!res)
		return;
	fprintf(out,
		"The simulator's costs: fitted (--calibrate) from %zu kernel runs of the\n"
		"calibration workloads spread between this sweep's own, %zu scans, largest\n"
		"error of a scan %.0f%%; the costs and calibrate's report of the fit are in\n"
		"predict-costs.ini and predict-calibrate.txt beside these results.\n",
		sweep_fit_runs(env->fit), res->nrows, res->max_error * 100);
}

static void predict_explain(const struct sweep_def *d, const struct sweep_env *env,
			    const struct sweep_point_result *res, FILE *out)
{
	fprintf(out,
		"Ratios sim / kernel of the wall-clock scan speed (MiB/s, as ksm_tests -P and\n"
		"Nai Xia count it) and of ksmd's CPU time per MiB scanned, at each workload's\n"
		"own knobs and busy (sleep_millisecs 0, a batch a full scan, measured over the\n"
		"scans past the workload's last step: %u, or as many as the model says take\n"
		"%.0f ms of ksmd's CPU, up to %u). The wall clock at the default knobs is\n"
		"mostly sleep, which the simulator knows exactly; the CPU ratio is the cost\n"
		"model's accuracy. Goal: every CPU ratio within 0.85 to 1.15. A median\n"
		"outside is out when its confidence interval of 90%% or more (the\n"
		"repetitions' min and max at 5 runs, their second smallest and largest at\n"
		"9, 3rd at 11) lies beyond the same edge, and named with the interval when\n"
		"it reaches into the band. A median over\n"
		"the workloads far from 1 says they moved together: the machine since the\n"
		"costs were calibrated (ksmd's wakeups here drift by a tenth or more within\n"
		"minutes), or the model for all alike.\n",
		PREDICT_BUSY_TAIL, PREDICT_BUSY_CPU_NS / 1e6, PREDICT_BUSY_MAX_TAIL);
	explain_fit(env, out);
	explain_not_busy(d, env, out);
	if (res) {
		judge_cpu(d, res, 1, "own knobs", out);
		judge_cpu(d, res, 3, "busy", out);
	}
}

/* --- smart-scan: what each smart_scan_policy costs and merges ----------------------- */

/*
 * Every policy of WL_SMART_SCAN_POLICIES (wl_policy.h), then smart scan off,
 * on the validation workloads and on workloads/smart-scan-mixed.wl (mostly
 * unique pages, pairs becoming equal at different times, 64 scans). Each
 * runs as shipped but for smart_scan and smart_scan_policy in [global].
 */
static const char *const smart_scan_names[] = {
	SWEEP_VALIDATION_WORKLOADS(SWEEP_WORKLOAD_NAME_) "smart-scan-mixed",
};

#define SMART_SCAN_OFF WL_SMART_SCAN_COUNT /* the series after the policies' */

#define SWEEP_SMART_SCAN_SERIES_(e, name, doc) { "sim " #name, SWEEP_SIM },
static const struct sweep_series smart_scan_series[] = {
	WL_SMART_SCAN_POLICIES(SWEEP_SMART_SCAN_SERIES_){ "sim smart_scan off", SWEEP_SIM },
};

/* each policy and smart scan off over upstream (upstream's own is left out) */
#define SWEEP_SMART_SCAN_RATIO_(e, name, doc) { WL_SMART_SCAN_##e, WL_SMART_SCAN_UPSTREAM },
static const struct sweep_ratio smart_scan_ratio_all[] = {
	WL_SMART_SCAN_POLICIES(SWEEP_SMART_SCAN_RATIO_){ SMART_SCAN_OFF, WL_SMART_SCAN_UPSTREAM },
};

_Static_assert(WL_SMART_SCAN_UPSTREAM == 0, "upstream, the kernel's, comes first in the list");
_Static_assert(WL_SMART_SCAN_COUNT + 1 <= SWEEP_MAX_SERIES, "the policies fit a sweep's series");
_Static_assert(WL_SMART_SCAN_COUNT <= SWEEP_MAX_RATIOS, "the policies fit a sweep's ratios");

static int smart_scan_text(const struct sweep_def *d, size_t point, size_t series,
			   const struct sweep_env *env, struct sweep_text *t, char *name,
			   size_t namelen, char *err, size_t errlen)
{
	static const char *const smart_scan_keys[] = { "smart_scan", "smart_scan_policy", NULL };
	struct sweep_text *file = malloc(sizeof(*file));
	char keys[128];

	(void)d;
	if (!file)
		return sweep_fail(err, errlen, "out of memory");
	file->len = 0;
	if (read_workload(env, smart_scan_names[point], file, name, namelen, err, errlen) != 0) {
		free(file);
		return -1;
	}
	if (series == SMART_SCAN_OFF)
		snprintf(keys, sizeof(keys), "smart_scan = 0   # ksmkit sweep smart-scan\n");
	else
		snprintf(keys, sizeof(keys), "smart_scan = 1   # ksmkit sweep smart-scan\n"
			 "smart_scan_policy = %s\n",
			 wl_smart_scan_policy_name((enum wl_smart_scan_policy)series));
	replace_global_keys(file, smart_scan_keys, keys, t);
	free(file);
	return 0;
}

/*
 * Scans from which a page created in the first has reached the longest
 * period under every policy (age 9): where a policy's bursts show.
 */
#define SMART_SCAN_STEADY 10

/* What one run did, per full scan, from its trace's scan rows. */
struct smart_scan_cost {
	uint64_t scans;
	double visited, skipped; /* pages_scanned and pages_skipped, per full scan */
	int64_t peak_visited;    /* the most pages one full scan from SMART_SCAN_STEADY on
				  * processed, or -1 for a shorter run */
	double cpu_us;           /* ksmd CPU per full scan */
	int64_t peak_sharing;    /* the most pages_sharing reached */
	uint64_t sharing_scan;   /* the first scan reaching @target's pages_sharing, 0: never */
};

static void smart_scan_cost_of(const struct trace *t, int64_t target, struct smart_scan_cost *c)
{
	const struct trace_row *last = NULL;
	int64_t scanned = 0;

	memset(c, 0, sizeof(*c));
	c->peak_visited = -1;
	for (size_t r = 0; r < t->nrows; r++) {
		const struct trace_row *row = &t->row[r];
		int64_t sharing = row->counter[TRACE_PAGES_SHARING];

		if (row->kind != TRACE_ROW_SCAN)
			continue;
		if (row->scan >= SMART_SCAN_STEADY &&
		    row->counter[TRACE_PAGES_SCANNED] - scanned > c->peak_visited)
			c->peak_visited = row->counter[TRACE_PAGES_SCANNED] - scanned;
		scanned = row->counter[TRACE_PAGES_SCANNED];
		if (sharing > c->peak_sharing)
			c->peak_sharing = sharing;
		if (!c->sharing_scan && target > 0 && sharing >= target)
			c->sharing_scan = row->scan;
		last = row;
	}
	if (!last || !last->scan)
		return;
	c->scans = last->scan;
	c->visited = (double)last->counter[TRACE_PAGES_SCANNED] / (double)c->scans;
	c->skipped = (double)last->counter[TRACE_PAGES_SKIPPED] / (double)c->scans;
	c->cpu_us = (double)last->ksmd_cpu_ns / 1e3 / (double)c->scans;
}

/* The run of @series at @point, measured against @target pages_sharing. */
static int smart_scan_measure(const struct sweep_def *d, size_t point, size_t series,
			      const struct sweep_env *env, int64_t target,
			      struct smart_scan_cost *c, char *err, size_t errlen)
{
	struct workload *wl = NULL;
	struct trace *t = NULL;
	int rc;

	if (load(d, point, series, env, &wl, err, errlen) != 0)
		return -1;
	rc = sim_trace(wl, env, &t, NULL, err, errlen);
	if (rc == 0)
		smart_scan_cost_of(t, target, c);
	trace_free(t);
	wl_free(wl);
	return rc;
}

/* y: ksmd CPU per full scan, µs. */
static int smart_scan_run(const struct sweep_def *d, size_t point, const struct sweep_env *env,
			  const bool *want, double *y, char *err, size_t errlen)
{
	for (size_t s = 0; s < d->nseries; s++) {
		struct smart_scan_cost c;

		if (!want[s])
			continue;
		if (smart_scan_measure(d, point, s, env, 0, &c, err, errlen) != 0)
			return -1;
		y[s] = c.scans ? c.cpu_us : NAN;
	}
	return 0;
}

/* "never", or the scan, in @buf. */
static const char *scan_or_never(uint64_t scan, char *buf, size_t len)
{
	if (scan)
		snprintf(buf, len, "%llu", (unsigned long long)scan);
	else
		snprintf(buf, len, "never");
	return buf;
}

/* The share of upstream's saving against off that @c keeps, in @buf ("-": none to keep). */
static const char *saving_kept(const struct smart_scan_cost *c, const struct smart_scan_cost *up,
			       const struct smart_scan_cost *off, char *buf, size_t len)
{
	double saved = off->visited - up->visited;

	if (saved < 0.5)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.0f%%", 100 * (off->visited - c->visited) / saved);
	return buf;
}

/* The peak, or "-" for a run too short to have one, in @buf. */
static const char *peak_or_dash(int64_t peak, char *buf, size_t len)
{
	if (peak < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%lld", (long long)peak);
	return buf;
}

/* One workload's rows of the table: every series, off first as the reference. */
static void smart_scan_rows(const struct sweep_def *d, size_t point, const struct sweep_env *env,
			    struct smart_scan_cost *sum, FILE *out)
{
	struct smart_scan_cost c[SWEEP_MAX_SERIES];
	char merged[24], kept[16], peak[24];

	if (smart_scan_measure(d, point, SMART_SCAN_OFF, env, 0, &c[SMART_SCAN_OFF], NULL, 0) != 0)
		return;
	for (size_t s = 0; s < d->nseries; s++) {
		if (smart_scan_measure(d, point, s, env, c[SMART_SCAN_OFF].peak_sharing, &c[s],
				       NULL, 0) != 0)
			return;
		sum[s].visited += c[s].visited;
		sum[s].skipped += c[s].skipped;
		sum[s].cpu_us += c[s].cpu_us;
	}
	for (size_t s = 0; s < d->nseries; s++)
		fprintf(out, "  %-26s %-14s %9.1f %9.1f %7s %9.1f %7lld %6s %6s\n",
			s ? "" : smart_scan_names[point], d->series[s].name + 4, c[s].visited,
			c[s].skipped, peak_or_dash(c[s].peak_visited, peak, sizeof(peak)),
			c[s].cpu_us,
			(long long)c[s].peak_sharing,
			scan_or_never(c[s].sharing_scan, merged, sizeof(merged)),
			s == SMART_SCAN_OFF ? ""
					    : saving_kept(&c[s], &c[WL_SMART_SCAN_UPSTREAM],
							  &c[SMART_SCAN_OFF], kept, sizeof(kept)));
}

static void smart_scan_explain(const struct sweep_def *d, const struct sweep_env *env,
			       const struct sweep_point_result *res, FILE *out)
{
	(void)res;
	struct smart_scan_cost sum[SWEEP_MAX_SERIES] = { { 0 } };
	char kept[16];

	fprintf(out, "Per full scan (means over the run): pages visited (pages_scanned) and "
		     "skipped; the\nmost one scan visited from scan %d on (peak); ksmd CPU "
		     "(the cost model); the most\npages_sharing reached, the scan that first "
		     "reached smart_scan off's most (never:\nit did not), and the share of "
		     "upstream's saving in visits (off - upstream) that\nthe policy keeps:\n",
		SMART_SCAN_STEADY);
	fprintf(out, "  %-26s %-14s %9s %9s %7s %9s %7s %6s %6s\n", "workload", "policy",
		"visited", "skipped", "peak", "cpu_us", "sharing", "by", "kept");
	for (size_t p = 0; p < d->npoints; p++)
		smart_scan_rows(d, p, env, sum, out);
	fprintf(out, "  %-26s\n", "all workloads, summed:");
	for (size_t s = 0; s < d->nseries; s++)
		fprintf(out, "  %-26s %-14s %9.1f %9.1f %7s %9.1f %7s %6s %6s\n", "",
			d->series[s].name + 4, sum[s].visited, sum[s].skipped, "", sum[s].cpu_us,
			"", "",
			s == SMART_SCAN_OFF ? ""
					    : saving_kept(&sum[s], &sum[WL_SMART_SCAN_UPSTREAM],
							  &sum[SMART_SCAN_OFF], kept, sizeof(kept)));
	fprintf(out, "Smart scan does nothing before a page's fourth scan, so the short "
		     "validation workloads\nbarely tell the policies apart; smart-scan-mixed "
		     "runs 64 scans, long enough for\nevery page to reach the longest period.\n");
}

/* --- the list ---------------------------------------------------------------------- */

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct sweep_def sweeps[] = {
	{ "predict", "the simulator's scan speed and ksmd CPU vs the kernel's on the validation workloads",
	  "Predicted vs measured scan speed and ksmd CPU on the validation workloads", "workload",
	  "wall: MiB scanned per second; cpu: ms of ksmd CPU per MiB", false, true, workload_x,
	  N(predict_names), predict_names, predict_series, N(predict_series), predict_ratios,
	  N(predict_ratios), predict_text, predict_run, predict_explain, false, true,
	  predict_before_run, predict_rounds_done },
	{ "smart-scan", "each smart_scan_policy's ksmd CPU, visits and merges on the workloads",
	  "ksmd CPU per full scan under each smart_scan_policy (validation workloads, "
	  "smart-scan-mixed)",
	  "workload", "ksmd CPU per full scan, us (the cost model)", false, true, workload_x,
	  N(smart_scan_names), smart_scan_names, smart_scan_series, N(smart_scan_series),
	  smart_scan_ratio_all + 1, N(smart_scan_ratio_all) - 1, smart_scan_text,
	  smart_scan_run, smart_scan_explain, true, false, NULL, NULL },
	{ "volatile", "ksmd scan speed vs the fraction of pages rewritten between scans",
	  "KSM scan speed vs volatile fraction (256 MiB, half without dirty bits)",
	  "fraction of pages rewritten before every scan", "MiB scanned per ksmd CPU second",
	  false, false, volatile_x, N(volatile_x), NULL, detector_series, N(detector_series),
	  detector_ratios, N(detector_ratios), volatile_text, cpu_speed_run, volatile_explain, false, false,
	  NULL, NULL },
	{ "nai-xia", "Nai Xia's 2011 experiment: checksum vs dirty bit, 4 KiB pages and THP",
	  "Nai Xia's experiment: scan speed, ksmd busy (256 MiB, all pages volatile)",
	  "0 = 4 KiB pages, 1 = THP", "MiB scanned per ksmd CPU second", false, true,
	  nai_xia_x, N(nai_xia_x), nai_xia_names, detector_series, N(detector_series),
	  detector_ratios, N(detector_ratios), nai_xia_text, cpu_speed_run, nai_xia_explain, false, false,
	  NULL, NULL },
	{ "detectors", "every detector's scan speed vs the fraction of pages written at random",
	  "Scan speed of the simulator's detectors vs pages rewritten at random (256 MiB, half "
	  "without dirty bits)",
	  "fraction of pages, drawn anew, rewritten before every scan",
	  "MiB scanned per ksmd CPU second", false, false, detectors_x, N(detectors_x), NULL,
	  detectors_series, N(detectors_series), detectors_ratio_all + 1,
	  N(detectors_ratio_all) - 1, detectors_text, cpu_speed_run, detectors_explain, true, false,
	  NULL, NULL },
	{ "detector-errors", "each detector's wrong verdicts vs the fraction of pages written",
	  "Wrong verdicts of the simulator's detectors (the detectors sweep's runs)",
	  "fraction of pages, drawn anew, rewritten before every scan",
	  "visits judged wrongly, % of visits", false, false, detectors_x, N(detectors_x), NULL,
	  errors_series_all + 2, N(errors_series_all) - 2, NULL, 0, errors_text, errors_run,
	  errors_explain, true, false, NULL, NULL },
	{ "merge", "ksm_tests -P: merge speed vs region size",
	  "Merge speed vs region size (ksm_tests -P)", "region size, MiB",
	  "MiB merged per second", true, false, merge_x, N(merge_x), NULL, kernel_sim_series,
	  N(kernel_sim_series), sim_over_kernel, N(sim_over_kernel), merge_text, merge_run,
	  NULL, false, false, NULL, NULL },
	{ "cow", "ksm_tests -C: write time to merged pages vs never merged",
	  "COW: a write to a merged page vs to one never merged (ksm_tests -C)",
	  "region size, MiB", "ns per page written", false, true, cow_x, N(cow_x), NULL,
	  cow_series, N(cow_series), cow_ratios, N(cow_ratios), cow_text, cow_run, NULL, false, false,
	  NULL, NULL },
	{ "numa", "pages_shared with merge_across_nodes 1 and 0 vs NUMA nodes",
	  "KSM pages with merge_across_nodes 1 and 0 (4 groups on every node)",
	  "NUMA nodes holding equal pages", "pages_shared after 3 scans", false, true, numa_x,
	  N(numa_x), NULL, numa_series, N(numa_series), numa_ratios, N(numa_ratios), numa_text,
	  numa_run, NULL, false, false, NULL, NULL },
	{ "numa-ksm", "KSM pages on each of 4 nodes, merge_across_nodes 1 and 0",
	  "KSM pages on each node (4 nodes, 4 groups of equal pages on every node)",
	  "NUMA node", "KSM pages on the node after 3 scans", false, true, numa_node_x,
	  N(numa_node_x), NULL, numa_node_series, N(numa_node_series), numa_node_ratios,
	  N(numa_node_ratios), numa_node_text, numa_node_run, NULL, true, false, NULL, NULL },
	{ "numa-merged", "pages merged into each node's KSM pages, merge_across_nodes 1 and 0",
	  "Pages merged into each node's KSM pages (4 nodes, 50 equal pages a group a node)",
	  "NUMA node of the KSM page", "pages merged (pages_sharing) after 3 scans", false, true,
	  numa_node_x, N(numa_node_x), NULL, numa_node_series, N(numa_node_series),
	  numa_node_ratios, N(numa_node_ratios), numa_node_text, numa_node_run, NULL, true, false,
	  NULL, NULL },
};

_Static_assert(N(nai_xia_names) == N(nai_xia_x), "a name per nai-xia point");
_Static_assert(N(predict_names) <= SWEEP_MAX_POINTS, "predict fits");
_Static_assert(N(smart_scan_names) <= SWEEP_MAX_POINTS, "smart-scan fits");

size_t sweep_count(void)
{
	return N(sweeps);
}

const struct sweep_def *sweep_at(size_t i)
{
	return i < N(sweeps) ? &sweeps[i] : NULL;
}

const struct sweep_def *sweep_find(const char *name)
{
	for (size_t i = 0; i < N(sweeps); i++)
		if (strcmp(sweeps[i].name, name) == 0)
			return &sweeps[i];
	return NULL;
}
