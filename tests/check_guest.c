/*
 * check_guest.c - tests of guest/ (the backend inside a qemu NUMA guest) and
 * the cross-validation it makes possible: one 4-node guest boots once and
 * runs every NUMA workload (workloads/numa-*.wl) and every other
 * deterministic shipped workload its 6.1 kernel can run; each must match
 * the simulator, following the semantics of the kernel that ran, counter by
 * counter, scan by scan, page by page. Also: the --guest argument, refusals
 * before any boot, a missing guest, the watchdog, and soft-dirty capture
 * (which the guest's kernel has where the host's may not).
 *
 * The guest part needs qemu-system-x86 and the prepared guest (guest/prepare,
 * which this test runs: it fetches Debian's kernel package); without them it
 * says why and the program exits 77 after the pure tests pass. It never
 * touches the host's KSM.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_engines.h"
#include "guest.h"

#define GUEST_DIR BUILDDIR "/guest"

/* --- no guest needed ------------------------------------------------------------ */

START_TEST(spec_is_parsed_strictly)
{
	struct kg_options o;
	char why[200];

	kg_options_init(&o);
	ck_assert_int_eq(kg_parse_spec("nodes=4", &o, why, sizeof(why)), 0);
	ck_assert_uint_eq(o.nodes, 4);
	ck_assert_int_eq(kg_parse_spec("nodes=2,mem=512m,timeout=90s", &o, why, sizeof(why)), 0);
	ck_assert_uint_eq(o.nodes, 2);
	ck_assert_uint_eq(o.node_mem, UINT64_C(512) << 20);
	ck_assert_uint_eq(o.timeout_ns, UINT64_C(90000000000));
	ck_assert_int_eq(kg_parse_spec("nodes=9", &o, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "nodes=9: expected 1 to 8");
	ck_assert_int_eq(kg_parse_spec("nodes=0", &o, why, sizeof(why)), -1);
	ck_assert_int_eq(kg_parse_spec("mem=1g", &o, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "'mem=1g': nodes=N is required");
	ck_assert_int_eq(kg_parse_spec("nodes=2,cpus=4", &o, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "unknown key 'cpus' (nodes, mem, timeout)");
	ck_assert_int_eq(kg_parse_spec("nodes=2,mem=1m", &o, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "mem=1m: expected a size per node, 64m to 64g");
	ck_assert_int_eq(kg_parse_spec("2", &o, why, sizeof(why)), -1);
}
END_TEST

static struct workload *parse(const char *text)
{
	struct workload *wl;
	struct wl_error err;

	ck_assert_msg(wl_parse_buffer(text, strlen(text), "t.wl", &wl, &err) == 0, "%s", err.text);
	return wl;
}

START_TEST(a_node_the_guest_lacks_is_refused_before_booting)
{
	struct workload *wl = parse("[global]\nscans = 2\n[region a]\npages = 1\nfill = zero\n"
				    "[region b]\npages = 1\nfill = zero\nnode = 3\n");
	const struct workload *wls[] = { wl };
	struct kg_options o;
	struct kg_session s;
	char msg[512];

	kg_options_init(&o);
	o.nodes = 2;
	o.dir = "/nonexistent";
	ck_assert_int_eq(kg_run(wls, 1, &o, &s, msg, sizeof(msg)), KB_BAD_INPUT);
	ck_assert_str_eq(msg, "t.wl:6: [region b] node = 3: the guest has 2 NUMA nodes (ask for "
			      "more with --guest nodes=4)");
	ck_assert_uint_eq(s.nruns, 0);
	o.nodes = 4;
	ck_assert_int_eq(kg_run(wls, 1, &o, &s, msg, sizeof(msg)), KB_SKIPPED);
	ck_assert_ptr_nonnull(strstr(msg, "no prepared guest in /nonexistent"));
	kg_session_free(&s);
	wl_free(wl);
}
END_TEST

/* --- the guest ------------------------------------------------------------------- */

/* Whether the guest can boot here; if not, why (guest/prepare's SKIP line). */
static bool guest_ready(char *why, size_t len)
{
	char cmd[1024], line[512] = "";
	FILE *p;
	int status;

	if (access(GUEST_DIR "/ksmkit-guest", X_OK) != 0) {
		snprintf(why, len, "ksmkit-guest is not built (configure found no static "
				   "libraries)");
		return false;
	}
	snprintf(cmd, sizeof(cmd), "%s/guest/prepare %s %s/ksmkit-guest 2>&1", SRCDIR, GUEST_DIR,
		 GUEST_DIR);
	p = popen(cmd, "r");
	if (!p) {
		snprintf(why, len, "cannot run guest/prepare: %s", strerror(errno));
		return false;
	}
	while (fgets(line, sizeof(line), p))
		printf("# %s", line);
	status = pclose(p);
	line[strcspn(line, "\n")] = '\0';
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return true;
	snprintf(why, len, "%s", strncmp(line, "SKIP: ", 6) == 0 ? line + 6 : line);
	return false;
}

/* Whether the guest's 6.1 kernel can run @wl (no knob or prctl it lacks). */
static bool runs_on_6_1(const struct workload *wl)
{
	for (int k = 0; k < WL_KNOB_COUNT; k++)
		if (wl->knob_given[k] && !wl_kernel_has_knob(WL_KERNEL_6_1, k))
			return false;
	for (size_t i = 0; i < wl->nregions; i++)
		if (wl->regions[i].merge == WL_MERGE_PRCTL)
			return false;
	return wl->deterministic;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every shipped workload the guest can run, NUMA ones first. */
static size_t load_workloads(struct workload ***out)
{
	DIR *dir = opendir(SRCDIR "/workloads");
	char *names[256];
	size_t n = 0, kept = 0;
	struct dirent *de;
	struct workload **wls;

	ck_assert_ptr_nonnull(dir);
	while ((de = readdir(dir)) != NULL && n < 256) {
		size_t len = strlen(de->d_name);

		if (len > 3 && strcmp(de->d_name + len - 3, ".wl") == 0)
			names[n++] = strdup(de->d_name);
	}
	closedir(dir);
	qsort(names, n, sizeof(*names), by_name);
	wls = calloc(n, sizeof(*wls));
	for (int numa = 1; numa >= 0; numa--)
		for (size_t i = 0; i < n; i++) {
			char path[512];
			struct wl_error err;
			struct workload *wl;

			if ((strncmp(names[i], "numa-", 5) == 0) != numa)
				continue;
			snprintf(path, sizeof(path), "%s/workloads/%s", SRCDIR, names[i]);
			ck_assert_msg(wl_parse_file(path, &wl, &err) == 0, "%s", err.text);
			if (numa || runs_on_6_1(wl))
				wls[kept++] = wl;
			else
				wl_free(wl);
		}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	*out = wls;
	return kept;
}

static const struct trace_row *scan_row(const struct trace *t, uint64_t scan)
{
	for (size_t i = 0; i < t->nrows; i++)
		if (t->row[i].kind == TRACE_ROW_SCAN && t->row[i].scan == scan)
			return &t->row[i];
	ck_abort_msg("no row for scan %llu", (unsigned long long)scan);
	return NULL;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* What each NUMA workload's opening comment promises, on the guest's side. */
static void check_promises(const struct workload *wl, const struct trace *t)
{
	const char *name = base_name(wl->path);
	const int64_t *c = scan_row(t, 3)->counter;

	if (strcmp(name, "numa-ksm-tests-0.wl") == 0) {
		ck_assert_int_eq(c[TRACE_PAGES_SHARED], 0);
		ck_assert_int_eq(c[TRACE_PAGES_UNSHARED], 2);
	} else if (strcmp(name, "numa-ksm-tests-1.wl") == 0) {
		ck_assert_int_eq(c[TRACE_PAGES_SHARED], 1);
		ck_assert_int_eq(c[TRACE_PAGES_SHARING], 1);
	} else if (strcmp(name, "numa-chains.wl") == 0) {
		ck_assert_int_eq(c[TRACE_PAGES_SHARED], 6);
		ck_assert_int_eq(c[TRACE_PAGES_SHARING], 1194);
		ck_assert_int_eq(c[TRACE_STABLE_NODE_CHAINS], 2);
		ck_assert_int_eq(c[TRACE_STABLE_NODE_DUPS], 6);
	} else if (strcmp(name, "numa-groups-2.wl") == 0) {
		ck_assert_int_eq(c[TRACE_PAGES_SHARED], 8);
		ck_assert_int_eq(c[TRACE_PAGES_SHARING], 1116);
	} else if (strcmp(name, "numa-groups-4.wl") == 0) {
		ck_assert_int_eq(c[TRACE_PAGES_SHARED], 9);
		ck_assert_int_eq(c[TRACE_PAGES_SHARING], 601);
		ck_assert_int_eq(c[TRACE_PAGES_UNSHARED], 1);
	} else if (strcmp(name, "numa-knob-busy.wl") == 0) {
		const int64_t *c5 = scan_row(t, 5)->counter;

		ck_assert_int_eq(scan_row(t, 2)->counter[TRACE_STABLE_NODE_CHAINS], 1);
		ck_assert_int_eq(c5[TRACE_STABLE_NODE_CHAINS], 2);
		ck_assert_int_eq(c5[TRACE_PAGES_SHARED], 4);
		ck_assert_uint_eq(t->noutcomes, 5);
		ck_assert_int_eq(t->outcome[0].error, EBUSY); /* busy, after scan 2 */
		ck_assert_int_eq(t->outcome[2].error, 0);     /* per-node, after run = 2 */
		ck_assert_int_eq(t->outcome[4].error, EBUSY); /* busy-again */
	}
}

START_TEST(one_boot_matches_the_simulator_on_every_workload)
{
	struct workload **wls;
	size_t n = load_workloads(&wls), numa = 0;
	struct engine_guest_run *runs = calloc(n, sizeof(*runs));
	struct kg_options o;
	char release[128], msg[1024];
	int status;

	kg_options_init(&o);
	o.nodes = 4;
	o.dir = GUEST_DIR;
	status = engines_run_guest((const struct workload *const *)wls, n, &o, true, runs, release,
				   sizeof(release), msg, sizeof(msg));
	ck_assert_msg(status == KB_OK, "the guest: %s", msg);
	ck_assert_msg(strncmp(release, "6.1.", 4) == 0, "guest kernel %s", release);
	for (size_t i = 0; i < n; i++) {
		struct engine_run sim = { 0 };
		struct cmp_report rep;
		enum wl_kernel k;
		char *text = NULL;
		size_t len = 0;
		FILE *f;

		ck_assert_msg(runs[i].status == KB_OK, "%s in the guest: %s", wls[i]->path,
			      runs[i].message);
		ck_assert_str_eq(runs[i].run.trace->source, "guest");
		ck_assert_int_eq(engines_semantics(runs[i].run.trace, &k, msg, sizeof(msg)), 0);
		ck_assert_int_eq(k, WL_KERNEL_6_1);
		ck_assert_msg(engines_run_sim_as(wls[i], k, true, NULL, &sim, msg, sizeof(msg)) == 0,
			      "%s: %s", wls[i]->path, msg);
		ck_assert_int_eq(engines_compare(wls[i], &sim, &runs[i].run, &rep), 0);
		f = open_memstream(&text, &len);
		cmp_write_table(sim.trace, runs[i].run.trace, &rep, "sim", "guest", f);
		fclose(f);
		ck_assert_msg(cmp_report_equal(&rep), "%s differs:\n%s", wls[i]->path, text);
		ck_assert_ptr_nonnull(strstr(text, "# no scan speed: a side ran in a qemu TCG guest"));
		ck_assert_uint_gt(rep.partitions_compared, 0);
		printf("# %-32s %zu scans, %zu partitions: identical\n", base_name(wls[i]->path),
		       rep.rows_compared, rep.partitions_compared);
		numa += strncmp(base_name(wls[i]->path), "numa-", 5) == 0;
		check_promises(wls[i], runs[i].run.trace);
		free(text);
		cmp_report_free(&rep);
		engines_free(&sim);
		engines_free(&runs[i].run);
		wl_free(wls[i]);
	}
	ck_assert_uint_ge(numa, 6);
	free(runs);
	free(wls);
}
END_TEST

/*
 * Soft-dirty capture, which the host's kernel may lack (6.18 here is built
 * without it) and Debian's 6.1 has: after every scan a writer rewrites every
 * fourth page of 64 unique ones, and each scan interval's set must be
 * exactly those pages (the first interval, after setup, none).
 */
START_TEST(soft_dirty_sets_are_the_pages_the_writer_wrote)
{
	struct workload *wl = parse("[global]\nscans = 4\n[region a]\npages = 64\nfill = unique\n"
				    "[writer w]\nregion = a\npages = every:4\nvalue = fresh\n"
				    "when = every-scan\n");
	const struct workload *wls[] = { wl };
	struct kg_options o;
	struct kg_session s;
	struct kb_result *r;
	size_t per_scan[5] = { 0 };
	char msg[512];

	kg_options_init(&o);
	o.dir = GUEST_DIR;
	o.soft_dirty = true;
	ck_assert_msg(kg_run(wls, 1, &o, &s, msg, sizeof(msg)) == KB_OK, "%s", msg);
	ck_assert_msg(s.run[0].status == KB_OK, "%s", s.run[0].message);
	r = &s.run[0].result;
	for (size_t i = 0; i < r->ndirty; i++) {
		const struct kb_dirty_page *d = &r->dirty[i];

		ck_assert_uint_ge(d->scan, 2);
		ck_assert_uint_le(d->scan, 4);
		ck_assert_uint_eq(d->region, 0);
		ck_assert_msg(d->page % 4 == 0, "page %llu of scan %llu was not written",
			      (unsigned long long)d->page, (unsigned long long)d->scan);
		per_scan[d->scan]++;
	}
	for (int scan = 2; scan <= 4; scan++)
		ck_assert_uint_eq(per_scan[scan], 16);
	kg_session_free(&s);
	wl_free(wl);
}
END_TEST

START_TEST(a_guest_past_its_deadline_is_killed)
{
	struct workload *wl = parse("[global]\nscans = 2\n[region a]\npages = 1\nfill = zero\n");
	const struct workload *wls[] = { wl };
	struct kg_options o;
	struct kg_session s;
	char msg[512];

	kg_options_init(&o);
	o.dir = GUEST_DIR;
	o.timeout_ns = UINT64_C(500000000); /* no kernel boots in half a second under TCG */
	ck_assert_int_eq(kg_run(wls, 1, &o, &s, msg, sizeof(msg)), KB_FAILED);
	ck_assert_msg(strstr(msg, "the guest did not finish within 0.5 s and was killed"), "%s", msg);
	kg_session_free(&s);
	wl_free(wl);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("guest");
	TCase *tc = tcase_create("before_booting");
	SRunner *sr;
	char why[512];
	bool ready;
	int failed;

	tcase_add_test(tc, spec_is_parsed_strictly);
	tcase_add_test(tc, a_node_the_guest_lacks_is_refused_before_booting);
	suite_add_tcase(s, tc);
	ready = guest_ready(why, sizeof(why));
	if (ready) {
		tc = tcase_create("guest");
		tcase_set_timeout(tc, 120);
		tcase_add_test(tc, one_boot_matches_the_simulator_on_every_workload);
		tcase_add_test(tc, soft_dirty_sets_are_the_pages_the_writer_wrote);
		tcase_add_test(tc, a_guest_past_its_deadline_is_killed);
		suite_add_tcase(s, tc);
	}
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (failed)
		return EXIT_FAILURE;
	if (!ready) {
		printf("SKIP: check_guest: the guest part needs qemu and a prepared guest: %s\n", why);
		return 77;
	}
	return EXIT_SUCCESS;
}
