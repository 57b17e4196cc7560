/*
 * xval.c - the cross-validation pipeline (xval.h): each engine's side of a
 * workload with its page partition captured at every scan row (the
 * simulator through its scan hook, the backend through pagemap captures at
 * the same points, here or in a guest), the choice of the simulator's
 * semantics from the kernel that ran, the comparison, and the verdict,
 * with the rerun of a kernel run that caught up by its last scan.
 */
#include "xval.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void xval_side_free(struct xval_side *side)
{
	trace_free(side->trace);
	free(side->pages);
	memset(side, 0, sizeof(*side));
}

/* ---- the simulator's side ------------------------------------------------------ */

int xval_run_sim(const struct workload *wl, enum wl_kernel kernel, bool pages,
		 const struct sim_costs *costs, struct xval_side *out, char *err, size_t errlen)
{
	return xval_run_sim_as(wl, kernel, wl->smart_scan_policy, pages, costs, out, err, errlen);
}

int xval_run_sim_as(const struct workload *wl, enum wl_kernel kernel,
		    enum wl_smart_scan_policy policy, bool pages, const struct sim_costs *costs,
		    struct xval_side *out, char *err, size_t errlen)
{
	struct sim_capture c = { .wl = wl };
	struct sim_run_options opt = { .costs = costs, .override_kernel = true, .kernel = kernel,
				       .override_smart_scan_policy = true,
				       .smart_scan_policy = policy };
	int rc;

	memset(out, 0, sizeof(*out));
	if (pages) {
		opt.scan_hook = sim_capture_pages;
		opt.hook_arg = &c;
	}
	rc = sim_run_workload(wl, &opt, &out->trace, err, errlen);
	out->pages = c.page;
	out->npages = c.n;
	if (rc == 0 && c.oom) {
		snprintf(err, errlen, "out of memory capturing pages");
		rc = -1;
	}
	return rc;
}

/* ---- the kernel's side --------------------------------------------------------- */

/* Move @res's trace and page captures into @out, and free the rest. */
static void take_result(struct kb_result *res, struct xval_side *out)
{
	out->trace = res->trace;
	out->pages = res->pages;
	out->npages = res->npages;
	out->invalid_rows = res->invalid_rows;
	out->measurement = res->measurement;
	res->trace = NULL;
	res->pages = NULL;
	res->npages = 0;
	kb_result_free(res);
}

int xval_run_host(const struct workload *wl, const struct kb_options *base, bool pages,
		  struct xval_side *out, char *msg, size_t msglen)
{
	struct kb_options opt = *base;
	struct kb_result res;
	int status;

	if (pages)
		opt.pages = KB_PAGES_EVERY_SCAN;
	status = kb_run(wl, &opt, &res, msg, msglen);
	take_result(&res, out);
	return status;
}

int xval_run_guest(const struct workload *const *wls, size_t n, const struct kg_options *opt,
		   bool pages, struct xval_guest_run *out, char *release, size_t rlen, char *msg,
		   size_t msglen)
{
	struct kg_options o = *opt;
	struct kg_session session;
	int status;

	o.pages = o.pages || pages;
	memset(out, 0, n * sizeof(*out));
	for (size_t i = 0; i < n; i++)
		out[i].status = KB_FAILED;
	status = kg_run(wls, n, &o, &session, msg, msglen);
	snprintf(release, rlen, "%s", session.release);
	for (size_t i = 0; i < session.nruns && i < n; i++) {
		out[i].status = session.run[i].status;
		snprintf(out[i].message, sizeof(out[i].message), "%s", session.run[i].message);
		take_result(&session.run[i].result, &out[i].side);
	}
	kg_session_free(&session);
	return status;
}

/* ---- comparing ------------------------------------------------------------------ */

int xval_semantics(const struct trace *kernel, enum wl_kernel *out, char *why, size_t len)
{
	return wl_kernel_from_release(kernel ? kernel->kernel : NULL, out, why, len);
}

const char *xval_settings(const struct trace *kernel)
{
	enum kg_patch patch = kg_patch_from_release(kernel ? kernel->kernel : NULL);

	return patch == KG_PATCH_NONE ? "" : kg_patch_row(patch)->settings;
}

int xval_names(const struct workload *wl, struct trace_page_names *out)
{
	const char **procs = calloc(wl->nprocs ? wl->nprocs : 1, sizeof(*procs));
	const char **regions = calloc(wl->nregions ? wl->nregions : 1, sizeof(*regions));

	if (!procs || !regions) {
		free(procs);
		free(regions);
		return -1;
	}
	for (size_t i = 0; i < wl->nprocs; i++)
		procs[i] = wl->procs[i].name;
	for (size_t i = 0; i < wl->nregions; i++)
		regions[i] = wl->regions[i].name;
	*out = (struct trace_page_names){ procs, wl->nprocs, regions, wl->nregions };
	return 0;
}

void xval_names_free(struct trace_page_names *names)
{
	free((void *)names->proc);
	free((void *)names->region);
	memset(names, 0, sizeof(*names));
}

/* What the kernel that ran lacks is not compared (both sides read 0). */
static void skip_what_the_kernel_lacks(const struct trace *kernel, struct cmp_options *opt)
{
	enum wl_kernel semantics;
	char why[200];

	if (xval_semantics(kernel, &semantics, why, sizeof(why)) != 0)
		return;
	for (int c = 0; c < TRACE_COUNTER_COUNT; c++)
		if (!wl_kernel_exports(semantics, trace_counter_name(c), NULL))
			opt->skip_counters |= UINT32_C(1) << c;
	for (int f = 0; f < TRACE_PROC_FIELD_COUNT; f++)
		if (!wl_kernel_exports(semantics, trace_proc_field_name(f), NULL))
			opt->skip_fields |= UINT32_C(1) << f;
}

int xval_compare(const struct workload *wl, const struct xval_side *sim,
		 const struct xval_side *kernel, struct cmp_report *rep)
{
	struct cmp_options opt = { .tolerance = wl->deterministic ? 0 : XVAL_TOLERANCE,
				   .ignore_missing_rows = !wl->deterministic };
	struct trace_page_names names;
	int rc = -1;

	cmp_report_init(rep);
	if (xval_names(wl, &names) != 0)
		return -1;
	skip_what_the_kernel_lacks(kernel->trace, &opt);
	if (cmp_traces(sim->trace, kernel->trace, &opt, rep) != 0)
		goto out;
	/* pages are compared only where the run is deterministic */
	if (wl->deterministic &&
	    cmp_partitions(sim->pages, sim->npages, kernel->pages, kernel->npages, &names, rep) != 0)
		goto out;
	rc = 0;
out:
	xval_names_free(&names);
	return rc;
}

bool xval_caught_up(const struct cmp_report *rep, const struct trace *sim)
{
	uint64_t last;

	if (rep->ndiffs == 0 || sim->nrows == 0 || rep->rows_missing)
		return false;
	last = sim->row[sim->nrows - 1].scan;
	for (size_t i = 0; i < rep->ndiffs; i++)
		if (rep->diff[i].scan >= last && strcmp(rep->diff[i].what, "partition") != 0)
			return false;
	return true;
}

/* ---- the pipeline ----------------------------------------------------------------- */

void xval_options_init(struct xval_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->attempts = 1;
}

static void note(const struct xval_options *opt, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note(const struct xval_options *opt, const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	if (!opt->note)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	opt->note(text, opt->note_arg);
}

static enum xval_verdict fail(struct xval_result *res, enum xval_step step)
{
	res->failed = step;
	return res->verdict = XVAL_FAILED;
}

/* The kernel side as @opt says, into @res: its status, message and side. */
static void run_kernel_side(const struct workload *wl, const struct xval_options *opt,
			    struct xval_result *res)
{
	char *msg = res->kernel_message;
	size_t len = sizeof(res->kernel_message);

	res->kernel_runs++;
	if (opt->kernel) {
		res->status = opt->kernel(wl, opt->pages, &res->kernel, msg, len, opt->kernel_arg);
	} else if (opt->guest) {
		struct kg_options g = *opt->guest;
		struct xval_guest_run run;
		char release[128];

		if (!g.note) {
			g.note = opt->note;
			g.note_arg = opt->note_arg;
		}
		res->status = xval_run_guest(&wl, 1, &g, opt->pages, &run, release, sizeof(release),
					     msg, len);
		if (res->status == KB_OK) {
			res->status = run.status;
			snprintf(msg, len, "%s", run.message);
		}
		res->kernel = run.side;
	} else {
		struct kb_options kb;

		if (opt->host)
			kb = *opt->host;
		else
			kb_options_init(&kb);
		if (!kb.note) {
			kb.note = opt->note;
			kb.note_arg = opt->note_arg;
		}
		res->status = xval_run_host(wl, &kb, opt->pages, &res->kernel, msg, len);
	}
}

/* Compare the two sides in @res and judge. */
static enum xval_verdict judge(const struct workload *wl, struct xval_result *res)
{
	if (xval_compare(wl, &res->sim, &res->kernel, &res->report) != 0)
		return fail(res, XVAL_STEP_COMPARE);
	if (!cmp_report_equal(&res->report))
		return res->verdict = XVAL_DIFFERS;
	return res->verdict = wl->deterministic ? XVAL_MATCH : XVAL_WITHIN;
}

/* After the kernel side in @res: semantics, the simulator, the verdict. */
static enum xval_verdict follow_kernel(const struct workload *wl, const struct xval_options *opt,
				       struct xval_result *res)
{
	enum wl_kernel semantics = wl->kernel;
	/* the workload as the simulator runs it: a copy, when settings apply */
	struct workload followed = *wl;
	struct wl_error err;

	res->settings = "";
	if (res->status != KB_OK && res->status != KB_SKIPPED)
		return fail(res, XVAL_STEP_KERNEL);
	if (res->status == KB_OK) {
		if (xval_semantics(res->kernel.trace, &semantics, res->why, sizeof(res->why)) != 0)
			return fail(res, XVAL_STEP_SEMANTICS);
		res->settings = xval_settings(res->kernel.trace);
		if (res->settings[0] &&
		    wl_apply_global(&followed, res->settings, res->kernel.trace->kernel, &err) != 0) {
			snprintf(res->why, sizeof(res->why), "%s", err.text);
			return fail(res, XVAL_STEP_SEMANTICS);
		}
		if (semantics != wl->kernel || res->settings[0])
			note(opt, "the kernel that ran is Linux %s: the simulator follows kernel = %s%s%s "
				  "(the workload says %s)", res->kernel.trace->kernel,
			     wl_kernel_name(semantics), res->settings[0] ? " with " : "", res->settings,
			     wl_kernel_name(wl->kernel));
	}
	res->semantics = semantics;
	if (xval_run_sim(&followed, semantics, opt->pages, opt->costs, &res->sim, res->why,
			 sizeof(res->why)) != 0)
		return fail(res, XVAL_STEP_SIM);
	if (res->status == KB_SKIPPED)
		return res->verdict = XVAL_SIM_ONLY;
	if (!wl->deterministic)
		note(opt, "%s is not deterministic (continuous writers or a time stop): counters "
			  "compared within %.0f%%, the scans both runs have, no page partition",
		     wl->path, XVAL_TOLERANCE * 100);
	return judge(wl, res);
}

static void result_init(struct xval_result *res)
{
	memset(res, 0, sizeof(*res));
	res->status = KB_FAILED;
	cmp_report_init(&res->report);
}

bool xval_may_be_transient(const struct workload *wl, const struct xval_result *res)
{
	if (res->verdict != XVAL_DIFFERS)
		return false;
	if (res->kernel.invalid_rows > 0 || xval_caught_up(&res->report, res->sim.trace))
		return true;
	for (size_t i = 0; i < wl->nregions; i++)
		if (wl->regions[i].thp == WL_THP_ALWAYS)
			return true;
	return false;
}

/*
 * A difference the kernel's run may not own (xval_may_be_transient): another
 * run can tell, and a deterministic divergence differs every time.
 */
static bool worth_another_run(const struct workload *wl, const struct xval_options *opt,
			      const struct xval_result *res)
{
	return res->kernel_runs < opt->attempts && xval_may_be_transient(wl, res);
}

enum xval_verdict xval_run(const struct workload *wl, const struct xval_options *opt,
			   struct xval_result *res)
{
	result_init(res);
	run_kernel_side(wl, opt, res);
	follow_kernel(wl, opt, res);
	while (worth_another_run(wl, opt, res)) {
		if (opt->rerun)
			opt->rerun(res, opt->rerun_arg);
		xval_side_free(&res->kernel);
		cmp_report_free(&res->report);
		run_kernel_side(wl, opt, res);
		if (res->status == KB_SKIPPED)
			return res->verdict = XVAL_SIM_ONLY;
		if (res->status != KB_OK)
			return fail(res, XVAL_STEP_KERNEL);
		judge(wl, res);
	}
	return res->verdict;
}

enum xval_verdict xval_follow(const struct workload *wl, struct xval_guest_run *kernel,
			      const struct xval_options *opt, struct xval_result *res)
{
	result_init(res);
	res->kernel_runs = 1;
	res->status = kernel->status;
	snprintf(res->kernel_message, sizeof(res->kernel_message), "%s", kernel->message);
	res->kernel = kernel->side;
	memset(&kernel->side, 0, sizeof(kernel->side));
	return follow_kernel(wl, opt, res);
}

void xval_result_free(struct xval_result *res)
{
	xval_side_free(&res->sim);
	xval_side_free(&res->kernel);
	cmp_report_free(&res->report);
}
