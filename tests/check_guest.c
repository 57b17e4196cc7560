/*
 * check_guest.c - tests of guest/ (the backend inside a qemu NUMA guest) and
 * the cross-validation it makes possible: for each kernel a guest boots
 * (6.1 and 6.12), one 4-node guest boots once and runs every NUMA workload
 * (workloads/numa-*.wl) and every other deterministic shipped workload that
 * kernel can run (workloads/selftests/ has a boot of its own: `ksmkit
 * selftest --guest` in tests/selftest.test); each must match the simulator,
 * following the semantics of the kernel that ran, counter by counter, scan
 * by scan, page by page. The
 * THP workloads (workloads/thp-*.wl) also run in a 1-node guest of each
 * kernel, the small machine where the kernel would turn THP off by itself.
 * A workload whose rows the guest's runner marked invalid (it saw a scan
 * end late, as a busy host can make qemu's vCPU) and that differs runs
 * again in another boot, at most GUEST_ATTEMPTS in all; any other
 * difference fails at once. Also: the --guest argument, refusals before any
 * boot, a missing guest or kernel, the watchdog, and soft-dirty capture
 * (which the guest's kernel has where the host's may not).
 *
 * The guest part needs qemu-system-x86 and the prepared guest (guest/prepare,
 * which this test runs: it fetches Debian's kernel packages); without them,
 * or without one of the kernels, it says why and the program exits 77 after
 * the rest passes. It never touches the host's KSM.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"
#include "xval.h"

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
	ck_assert_int_eq(o.kernel, KG_KERNEL_6_1);
	ck_assert_int_eq(kg_parse_spec("nodes=1,kernel=6.12", &o, why, sizeof(why)), 0);
	ck_assert_int_eq(o.kernel, KG_KERNEL_6_12);
	ck_assert_int_eq(kg_parse_spec("kernel=6.1,nodes=3", &o, why, sizeof(why)), 0);
	ck_assert_int_eq(o.kernel, KG_KERNEL_6_1);
	ck_assert_uint_eq(o.nodes, 3);
	ck_assert_int_eq(kg_parse_spec("nodes=1,kernel=6.18", &o, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "kernel=6.18: expected 6.1 or 6.12");
	ck_assert_int_eq(kg_parse_spec("nodes=1,kernel=", &o, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "kernel=: expected 6.1 or 6.12");
	ck_assert_int_eq(kg_parse_spec("nodes=2,cpus=4", &o, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "unknown key 'cpus' (nodes, kernel, mem, timeout)");
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

/* A guest directory without the kernel asked for: skipped, with the reason
 * guest/prepare left, or how to get it. */
START_TEST(a_kernel_not_prepared_is_skipped_with_the_reason)
{
	struct workload *wl = parse("[global]\nscans = 2\n[region a]\npages = 1\nfill = zero\n");
	const struct workload *wls[] = { wl };
	char dir[] = "/tmp/check_guest.XXXXXX", path[256];
	struct kg_options o;
	struct kg_session s;
	char msg[512];
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/initramfs.cpio", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("not empty", f);
	fclose(f);
	kg_options_init(&o);
	o.dir = dir;
	o.kernel = KG_KERNEL_6_12;
	ck_assert_int_eq(kg_run(wls, 1, &o, &s, msg, sizeof(msg)), KB_SKIPPED);
	ck_assert_msg(strstr(msg, "no 6.12 kernel in the guest directory") &&
			      strstr(msg, "run `make guest`") &&
			      strstr(msg, "Debian's linux-image-6.12-amd64 package"),
		      "%s", msg);
	kg_session_free(&s);
	snprintf(path, sizeof(path), "%s/kernels", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/kernels/6.12", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/kernels/6.12/unavailable", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("cannot download linux-image-6.12.9-amd64 (no network?)\n", f);
	fclose(f);
	ck_assert_int_eq(kg_run(wls, 1, &o, &s, msg, sizeof(msg)), KB_SKIPPED);
	ck_assert_msg(strstr(msg, "no 6.12 kernel in the guest directory") &&
			      strstr(msg, ": cannot download linux-image-6.12.9-amd64 (no network?); "
					  "skipped"),
		      "%s", msg);
	kg_session_free(&s);
	unlink(path);
	snprintf(path, sizeof(path), "%s/kernels/6.12", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/kernels", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/initramfs.cpio", dir);
	unlink(path);
	rmdir(dir);
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

/* Whether kernel @k was prepared; if not, why (what guest/prepare left). */
static bool kernel_ready(enum kg_kernel k, char *why, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), GUEST_DIR "/kernels/%s/kernel", kg_kernel_name(k));
	if (access(path, R_OK) == 0)
		return true;
	snprintf(why, len, "guest/prepare did not prepare it");
	snprintf(path, sizeof(path), GUEST_DIR "/kernels/%s/unavailable", kg_kernel_name(k));
	f = fopen(path, "r");
	if (f) {
		if (fgets(why, (int)len, f))
			why[strcspn(why, "\n")] = '\0';
		fclose(f);
	}
	return false;
}

/* Whether kernel @k (its release, "6.1") can run @wl: no knob or prctl it
 * lacks, and a deterministic run to match exactly. */
static bool runs_on(enum kg_kernel k, const struct workload *wl)
{
	enum wl_kernel semantics;
	char why[200];

	ck_assert_int_eq(wl_kernel_from_release(kg_kernel_name(k), &semantics, why, sizeof(why)),
			 0);
	for (int knob = 0; knob < WL_KNOB_COUNT; knob++)
		if (wl->knob_given[knob] && !wl_kernel_has_knob(semantics, knob))
			return false;
	for (size_t i = 0; i < wl->nregions; i++)
		if (wl->regions[i].merge == WL_MERGE_PRCTL && !wl_kernel_has_prctl_merge(semantics))
			return false;
	return wl->deterministic;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Every shipped workload named @prefix* that kernel @k can run (NUMA ones
 * first), into *@out. */
static size_t load_workloads(enum kg_kernel k, const char *prefix, struct workload ***out)
{
	DIR *dir = opendir(SRCDIR "/workloads");
	char *names[256];
	size_t n = 0, kept = 0;
	struct dirent *de;
	struct workload **wls;

	ck_assert_ptr_nonnull(dir);
	while ((de = readdir(dir)) != NULL && n < 256) {
		size_t len = strlen(de->d_name);

		if (len > 3 && strcmp(de->d_name + len - 3, ".wl") == 0 &&
		    has_prefix(de->d_name, prefix))
			names[n++] = strdup(de->d_name);
	}
	closedir(dir);
	qsort(names, n, sizeof(*names), by_name);
	wls = calloc(n ? n : 1, sizeof(*wls));
	for (int numa = 1; numa >= 0; numa--)
		for (size_t i = 0; i < n; i++) {
			char path[512];
			struct wl_error err;
			struct workload *wl;

			if (has_prefix(names[i], "numa-") != numa)
				continue;
			snprintf(path, sizeof(path), "%s/workloads/%s", SRCDIR, names[i]);
			ck_assert_msg(wl_parse_file(path, &wl, &err) == 0, "%s", err.text);
			if (numa || runs_on(k, wl))
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

/* What each NUMA or THP workload's opening comment promises, on the guest's side. */
static void check_promises(const struct workload *wl, const struct trace *t)
{
	const char *name = base_name(wl->path);
	const int64_t *c = scan_row(t, 3)->counter;

	if (strcmp(name, "numa-chains.wl") == 0) {
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
	} else if (strcmp(name, "thp-merge.wl") == 0) {
		/* the merge inside a huge page that fails once: it was one */
		const int64_t *c2 = scan_row(t, 2)->counter;

		ck_assert_int_eq(c2[TRACE_PAGES_SHARING], 1019);
		ck_assert_int_eq(c2[TRACE_PAGES_VOLATILE], 1);
		ck_assert_int_eq(c[TRACE_PAGES_SHARING], 1020);
	} else if (strcmp(name, "thp-volatile-half.wl") == 0) {
		const int64_t *c2 = scan_row(t, 2)->counter;

		ck_assert_int_eq(c2[TRACE_PAGES_SHARING], 497);
		ck_assert_int_eq(c2[TRACE_PAGES_VOLATILE], 501);
		ck_assert_int_eq(c[TRACE_PAGES_SHARING], 498);
		ck_assert_int_eq(c[TRACE_PAGES_VOLATILE], 500);
	}
}

/* Boots of one kernel a workload gets, when its runner was late. */
#define GUEST_ATTEMPTS 3

/* How a workload's run in the guest compared with the simulator. */
enum outcome {
	MATCHED,     /* identical: every counter, every partition */
	RUNNER_LATE, /* differed after rows the guest's runner marked invalid */
};

/*
 * Compare @run, workload @wl's run in kernel @k's guest (Linux @release),
 * with the simulator. A difference fails the test unless the backend marked
 * rows invalid (the runner saw a scan end late: on a busy host qemu's vCPU
 * can lose the 10 ms between two scans) and @may_retry; then it is logged
 * and RUNNER_LATE returned. Counts a NUMA workload in *@numa.
 */
static enum outcome compare_one(enum kg_kernel k, const struct workload *wl,
				struct xval_guest_run *run, const char *release, bool may_retry,
				size_t *numa)
{
	struct xval_options opt;
	struct xval_result res;
	char *text = NULL;
	size_t len = 0;
	bool equal;
	FILE *f;

	ck_assert_msg(run->status == KB_OK, "%s in the guest: %s", wl->path, run->message);
	ck_assert_str_eq(run->side.trace->source, "guest");
	xval_options_init(&opt);
	opt.pages = true;
	/* the simulator follows the kernel that ran */
	xval_follow(wl, run, &opt, &res);
	ck_assert_msg(res.verdict != XVAL_FAILED, "%s: %s", wl->path, res.why);
	/* each guest kernel has its row in the simulator's kernel table */
	ck_assert_str_eq(wl_kernel_name(res.semantics), kg_kernel_name(k));
	f = open_memstream(&text, &len);
	cmp_write_table(res.sim.trace, res.kernel.trace, &res.report, "sim", "guest", f);
	fclose(f);
	equal = res.verdict == XVAL_MATCH;
	if (!equal && res.kernel.invalid_rows > 0 && may_retry) {
		printf("# %s: the guest's runner was late for %llu rows, running it again:\n%s",
		       base_name(wl->path), (unsigned long long)res.kernel.invalid_rows, text);
	} else {
		ck_assert_msg(equal, "%s differs on Linux %s (kernel = %s, %llu invalid rows):\n%s",
			      wl->path, release, wl_kernel_name(res.semantics),
			      (unsigned long long)res.kernel.invalid_rows, text);
		ck_assert_ptr_nonnull(strstr(text, "# no scan speed: a side ran in a qemu TCG guest"));
		ck_assert_uint_gt(res.report.partitions_compared, 0);
		printf("# %-32s %zu scans, %zu partitions, as kernel = %s: identical\n",
		       base_name(wl->path), res.report.rows_compared, res.report.partitions_compared,
		       wl_kernel_name(res.semantics));
		*numa += has_prefix(base_name(wl->path), "numa-");
		check_promises(wl, res.kernel.trace);
	}
	free(text);
	xval_result_free(&res);
	return equal ? MATCHED : RUNNER_LATE;
}

/*
 * Boot kernel @k with @nodes nodes, run the workloads named @prefix* it can
 * run, and compare each with the simulator; boot again (at most
 * GUEST_ATTEMPTS in all) with those whose runner was late. Returns how many
 * workloads there were, and of those how many NUMA ones in *@numa.
 */
static size_t boot_and_compare(enum kg_kernel k, unsigned nodes, const char *prefix,
			       size_t *numa)
{
	struct workload **wls;
	size_t n = load_workloads(k, prefix, &wls), npending = n;
	const struct workload **pending = calloc(n ? n : 1, sizeof(*pending));
	char release[128], msg[1024], want[16];
	struct kg_options o;

	*numa = 0;
	memcpy(pending, wls, n * sizeof(*pending));
	kg_options_init(&o);
	o.nodes = nodes;
	o.kernel = k;
	o.dir = GUEST_DIR;
	snprintf(want, sizeof(want), "%s.", kg_kernel_name(k));
	for (int attempt = 1; npending > 0; attempt++) {
		struct xval_guest_run *runs = calloc(npending, sizeof(*runs));
		uint64_t t0 = (uint64_t)time(NULL);
		size_t again = 0;
		int status;

		status = xval_run_guest(pending, npending, &o, true, runs, release, sizeof(release),
					msg, sizeof(msg));
		ck_assert_msg(status == KB_OK, "the %s guest: %s", kg_kernel_name(k), msg);
		ck_assert_msg(has_prefix(release, want), "kernel=%s booted Linux %s",
			      kg_kernel_name(k), release);
		printf("# Linux %s, %u node%s, boot %d: %zu workloads in %llu s\n", release, nodes,
		       nodes == 1 ? "" : "s", attempt, npending,
		       (unsigned long long)((uint64_t)time(NULL) - t0));
		for (size_t i = 0; i < npending; i++)
			if (compare_one(k, pending[i], &runs[i], release, attempt < GUEST_ATTEMPTS,
					numa) == RUNNER_LATE)
				pending[again++] = pending[i];
		npending = again;
		free(runs);
	}
	for (size_t i = 0; i < n; i++)
		wl_free(wls[i]);
	free(pending);
	free(wls);
	return n;
}

/* Whether kernel @k's part can run; if not, it says why. */
static bool kernel_part_runs(enum kg_kernel k)
{
	char why[256];

	if (kernel_ready(k, why, sizeof(why)))
		return true;
	printf("# kernel %s: skipped: %s\n", kg_kernel_name(k), why);
	return false;
}

/* A kernel that was prepared, for the tests any kernel can do. */
static enum kg_kernel a_ready_kernel(void)
{
	char why[256];

	for (int k = 0; k < KG_KERNEL_COUNT; k++)
		if (kernel_ready((enum kg_kernel)k, why, sizeof(why)))
			return (enum kg_kernel)k;
	ck_abort_msg("guest/prepare succeeded without a kernel");
	return KG_KERNEL_6_1;
}

/* Per kernel (the loop index): one 4-node boot of every workload it can run. */
START_TEST(one_boot_per_kernel_matches_the_simulator_on_every_workload)
{
	size_t numa;

	if (!kernel_part_runs((enum kg_kernel)_i))
		return;
	ck_assert_uint_ge(boot_and_compare((enum kg_kernel)_i, 4, "", &numa), 18);
	ck_assert_uint_ge(numa, 4);
}
END_TEST

/* Per kernel: the THP workloads in a 1-node guest, whose 320 MiB is below
 * the 512 MiB under which the kernel turns THP off by itself. */
START_TEST(thp_workloads_match_in_a_one_node_guest)
{
	size_t numa;

	if (!kernel_part_runs((enum kg_kernel)_i))
		return;
	ck_assert_uint_eq(boot_and_compare((enum kg_kernel)_i, 1, "thp-", &numa), 2);
}
END_TEST

/*
 * Soft-dirty capture, which the host's kernel may lack (6.18 here is built
 * without it) and Debian's kernels have: after every scan a writer rewrites every
 * fourth page of 64 unique ones, and each scan interval's set must be
 * exactly those pages (the first interval, after setup, none).
 */
START_TEST(soft_dirty_sets_are_the_pages_the_writer_wrote)
{
	/* sleep_millisecs 200: a runner late under a busy TCG host would see two
	 * scans end at once, and their writes land in one interval. */
	struct workload *wl = parse("[global]\nscans = 4\nsleep_millisecs = 200\n"
				    "[region a]\npages = 64\nfill = unique\n"
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
	o.kernel = a_ready_kernel();
	o.soft_dirty = true;
	ck_assert_msg(kg_run(wls, 1, &o, &s, msg, sizeof(msg)) == KB_OK, "%s", msg);
	ck_assert_msg(s.run[0].status == KB_OK, "%s", s.run[0].message);
	r = &s.run[0].result;
	ck_assert_msg(r->invalid_rows == 0, "%llu row(s) overlapped ksmd's next batch",
		      (unsigned long long)r->invalid_rows);
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
		ck_assert_msg(per_scan[scan] == 16, "scan %d: %zu pages soft-dirty, not 16", scan,
			      per_scan[scan]);
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
	o.kernel = a_ready_kernel();
	o.timeout_ns = UINT64_C(500000000); /* no kernel boots in half a second under TCG */
	ck_assert_int_eq(kg_run(wls, 1, &o, &s, msg, sizeof(msg)), KB_FAILED);
	ck_assert_msg(strstr(msg, "the guest did not finish within 0.5 s and was killed"), "%s", msg);
	kg_session_free(&s);
	wl_free(wl);
}
END_TEST

int main(void)
{
	char skipped[1024] = "";
	Suite *s = suite_create("guest");
	TCase *tc = tcase_create("before_booting");
	SRunner *sr;
	char why[512];
	bool ready;
	int failed;

	tcase_add_test(tc, spec_is_parsed_strictly);
	tcase_add_test(tc, a_node_the_guest_lacks_is_refused_before_booting);
	tcase_add_test(tc, a_kernel_not_prepared_is_skipped_with_the_reason);
	suite_add_tcase(s, tc);
	ready = guest_ready(why, sizeof(why));
	if (ready) {
		tc = tcase_create("guest");
		tcase_set_timeout(tc, 240);
		tcase_add_loop_test(tc, one_boot_per_kernel_matches_the_simulator_on_every_workload,
				    0, KG_KERNEL_COUNT);
		tcase_add_loop_test(tc, thp_workloads_match_in_a_one_node_guest, 0,
				    KG_KERNEL_COUNT);
		tcase_add_test(tc, soft_dirty_sets_are_the_pages_the_writer_wrote);
		tcase_add_test(tc, a_guest_past_its_deadline_is_killed);
		suite_add_tcase(s, tc);
		for (int k = 0; k < KG_KERNEL_COUNT; k++) {
			char kwhy[256];

			if (!kernel_ready((enum kg_kernel)k, kwhy, sizeof(kwhy)))
				snprintf(skipped + strlen(skipped), sizeof(skipped) - strlen(skipped),
					 "%skernel %s: %s", skipped[0] ? "; " : "",
					 kg_kernel_name((enum kg_kernel)k), kwhy);
		}
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
	if (skipped[0]) {
		printf("SKIP: check_guest: %s\n", skipped);
		return 77;
	}
	return EXIT_SUCCESS;
}
