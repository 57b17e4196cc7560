/*
 * cli_engines.c - running one workload on both engines for `ksmkit compare`
 * and `ksmkit demo`: the simulator with its page partition captured at every
 * scan row, the backend with pagemap captures at the same points, and the
 * comparison of the two.
 */
#include "cli_engines.h"

#include <stdlib.h>
#include <string.h>

/* --- the simulator's side ------------------------------------------------------ */

struct capture {
	const struct workload *wl;
	struct cmp_page *page;
	size_t n, cap;
	bool oom;
};

static void capture_page(struct capture *c, const struct cmp_page *p)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		struct cmp_page *grown = realloc(c->page, cap * sizeof(*grown));

		if (!grown) {
			c->oom = true;
			return;
		}
		c->page = grown;
		c->cap = cap;
	}
	c->page[c->n++] = *p;
}

/* After each scan row: every page of every live process's regions. */
static void capture_sim_pages(void *arg, uint64_t scan, const struct sim *s, const int *mm_of)
{
	struct capture *c = arg;

	for (size_t p = 0; p < c->wl->nprocs && !c->oom; p++) {
		struct trace_proc_stat st;

		if (mm_of[p] < 0)
			continue;
		sim_process_stat(s, mm_of[p], &st);
		if (!st.present)
			continue;
		for (size_t r = 0; r < c->wl->nregions; r++) {
			int area = sim_area_find(s, mm_of[p], (uint32_t)r);

			if (area < 0)
				continue;
			for (uint64_t page = 0; page < c->wl->regions[r].pages; page++) {
				long frame = sim_page_frame(s, area, page);
				struct cmp_page cp = { scan, (uint32_t)p, (uint32_t)r, page, 0, 0 };

				if (frame > 0) {
					cp.frame = (uint64_t)frame;
					cp.flags = CMP_PAGE_PRESENT;
				} else if (frame < 0) {
					cp.flags = CMP_PAGE_PRESENT | CMP_PAGE_ZERO;
				}
				capture_page(c, &cp);
			}
		}
	}
}

int engines_load_costs(const char *path, struct sim_costs *costs)
{
	struct sim_config cfg;
	char err[512];

	sim_config_default(&cfg);
	*costs = cfg.costs;
	if (path && sim_costs_load(path, costs, err, sizeof(err)) != 0) {
		fprintf(stderr, "ksmkit: %s\n", err);
		return -1;
	}
	return 0;
}

int engines_run_sim(const struct workload *wl, bool pages, const struct sim_costs *costs,
		    struct engine_run *out, char *err, size_t errlen)
{
	return engines_run_sim_as(wl, wl->kernel, pages, costs, out, err, errlen);
}

int engines_run_sim_as(const struct workload *wl, enum wl_kernel kernel, bool pages,
		       const struct sim_costs *costs, struct engine_run *out, char *err,
		       size_t errlen)
{
	struct capture c = { .wl = wl };
	struct sim_run_options opt = { .costs = costs, .override_kernel = true, .kernel = kernel };
	int rc;

	if (pages) {
		opt.scan_hook = capture_sim_pages;
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

/* --- the kernel's side ------------------------------------------------------- */

int engines_semantics(const struct trace *kernel, enum wl_kernel *out, char *why, size_t len)
{
	return wl_kernel_from_release(kernel ? kernel->kernel : NULL, out, why, len);
}

/* Move @res's trace and page captures into @out (and free the rest). 0 or -1. */
static int take_result(struct kb_result *res, struct engine_run *out)
{
	int rc = 0;

	out->trace = res->trace;
	res->trace = NULL;
	out->pages = NULL;
	out->npages = 0;
	if (res->npages) {
		out->pages = calloc(res->npages, sizeof(*out->pages));
		if (!out->pages) {
			rc = -1;
		} else {
			for (size_t i = 0; i < res->npages; i++) {
				const struct kb_page *k = &res->pages[i];

				out->pages[i] = (struct cmp_page){ k->scan, k->proc, k->region,
								   k->page, k->pfn,
								   k->flags & (CMP_PAGE_PRESENT |
									       CMP_PAGE_ZERO) };
			}
			out->npages = res->npages;
		}
	}
	out->invalid_rows = res->invalid_rows;
	kb_result_free(res);
	return rc;
}

int engines_run_kernel(const struct workload *wl, const struct kb_options *base, bool pages,
		       struct engine_run *out, char *msg, size_t msglen)
{
	struct kb_options opt = *base;
	struct kb_result res;
	int status;

	if (pages)
		opt.pages = KB_PAGES_EVERY_SCAN;
	status = kb_run(wl, &opt, &res, msg, msglen);
	if (take_result(&res, out) != 0) {
		snprintf(msg, msglen, "out of memory");
		status = KB_FAILED;
	}
	return status;
}

int engines_run_guest(const struct workload *const *wls, size_t n, const struct kg_options *opt,
		      bool pages, struct engine_guest_run *out, char *release, size_t rlen,
		      char *msg, size_t msglen)
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
		if (take_result(&session.run[i].result, &out[i].run) != 0) {
			out[i].status = KB_FAILED;
			snprintf(out[i].message, sizeof(out[i].message), "out of memory");
		}
	}
	kg_session_free(&session);
	return status;
}

void engines_free(struct engine_run *run)
{
	trace_free(run->trace);
	free(run->pages);
	memset(run, 0, sizeof(*run));
}

/* --- comparing -------------------------------------------------------------- */

int engines_compare(const struct workload *wl, const struct engine_run *sim,
		    const struct engine_run *kernel, struct cmp_report *rep)
{
	struct cmp_options opt = { .tolerance = wl->deterministic ? 0 : ENGINES_TOLERANCE,
				   .ignore_missing_rows = !wl->deterministic };
	enum wl_kernel semantics;
	char why[200];
	const char **procs = calloc(wl->nprocs ? wl->nprocs : 1, sizeof(*procs));
	const char **regions = calloc(wl->nregions ? wl->nregions : 1, sizeof(*regions));
	int rc = -1;

	cmp_report_init(rep);
	if (!procs || !regions)
		goto out;
	/* what the kernel that ran lacks is not compared (both sides read 0) */
	if (engines_semantics(kernel->trace, &semantics, why, sizeof(why)) == 0) {
		for (int c = 0; c < TRACE_COUNTER_COUNT; c++)
			if (!wl_kernel_exports(semantics, trace_counter_name(c), NULL))
				opt.skip_counters |= UINT32_C(1) << c;
		for (int f = 0; f < TRACE_PROC_FIELD_COUNT; f++)
			if (!wl_kernel_exports(semantics, trace_proc_field_name(f), NULL))
				opt.skip_fields |= UINT32_C(1) << f;
	}
	for (size_t i = 0; i < wl->nprocs; i++)
		procs[i] = wl->procs[i].name;
	for (size_t i = 0; i < wl->nregions; i++)
		regions[i] = wl->regions[i].name;
	if (cmp_traces(sim->trace, kernel->trace, &opt, rep) != 0)
		goto out;
	/* pages are compared only where the run is deterministic */
	if (wl->deterministic &&
	    cmp_partitions(sim->pages, sim->npages, kernel->pages, kernel->npages, procs, regions,
			   rep) != 0)
		goto out;
	rc = 0;
out:
	free(procs);
	free(regions);
	return rc;
}
