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
#include "mc.h"
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
	ck_assert_str_eq(why, "kernel=6.18: expected 6.1, 6.12, 6.12+upstream or 6.12+phased");
	ck_assert_int_eq(kg_parse_spec("nodes=1,kernel=", &o, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "kernel=: expected 6.1, 6.12, 6.12+upstream or 6.12+phased");
	/* a kernel built from 6.12's source, then one of Debian's again */
	ck_assert_int_eq(kg_parse_spec("nodes=1,kernel=6.12+phased", &o, why, sizeof(why)), 0);
	ck_assert_int_eq(o.kernel, KG_KERNEL_6_12);
	ck_assert_int_eq(o.patch, KG_PATCH_PHASED);
	ck_assert_int_eq(kg_parse_spec("nodes=1,kernel=6.12", &o, why, sizeof(why)), 0);
	ck_assert_int_eq(o.patch, KG_PATCH_NONE);
	ck_assert_int_eq(kg_parse_spec("nodes=1,kernel=6.1+phased", &o, why, sizeof(why)), -1);
	ck_assert_int_eq(kg_parse_spec("nodes=1,kernel=6.12+nosuch", &o, why, sizeof(why)), -1);
	ck_assert_int_eq(kg_parse_spec("nodes=2,cpus=4", &o, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "unknown key 'cpus' (nodes, kernel, mem, timeout)");
	ck_assert_int_eq(kg_parse_spec("nodes=2,mem=1m", &o, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "mem=1m: expected a size per node, 64m to 64g");
	ck_assert_int_eq(kg_parse_spec("2", &o, why, sizeof(why)), -1);
}
END_TEST

/* A built kernel is known by its release: its base row, and its patch's
 * settings for the simulator (xval_settings); Debian's kernels have none. */
START_TEST(a_built_kernel_is_its_base_row_and_its_patch_row)
{
	char release[64] = "6.12.117+phased", name[64];
	struct trace t = { .kernel = release };
	enum wl_kernel semantics;
	enum kg_patch p = kg_patch_from_release(release);
	char why[256];

	ck_assert_int_eq(p, KG_PATCH_PHASED);
	ck_assert_str_eq(kg_kernel_dir_name(kg_patch_row(p)->base, p, name, sizeof(name)),
			 "6.12+phased");
	ck_assert_int_eq(xval_semantics(&t, &semantics, why, sizeof(why)), 0);
	ck_assert_int_eq(semantics, WL_KERNEL_6_12);
	ck_assert_str_eq(xval_settings(&t), "smart_scan_policy = phased");
	snprintf(release, sizeof(release), "6.12.117+upstream");
	ck_assert_int_eq(kg_patch_from_release(release), KG_PATCH_UPSTREAM);
	ck_assert_str_eq(xval_settings(&t), "");
	/* Debian's own: a '+' too, but no row's name after it */
	snprintf(release, sizeof(release), "6.12.117+deb12-amd64");
	ck_assert_int_eq(kg_patch_from_release(release), KG_PATCH_NONE);
	ck_assert_str_eq(xval_settings(&t), "");
	ck_assert_int_eq(kg_patch_from_release(NULL), KG_PATCH_NONE);
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
	/* a built kernel: how to build it */
	o.patch = KG_PATCH_PHASED;
	ck_assert_int_eq(kg_run(wls, 1, &o, &s, msg, sizeof(msg)), KB_SKIPPED);
	ck_assert_msg(strstr(msg, "no built kernel 6.12+phased in the guest directory") &&
			      strstr(msg, "run `make kernel PATCHES=patches/ksm-smart-scan-phased.patch`"),
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

/*
 * A kernel a guest boots: one of Debian's (KG_KERNELS), then the ones built
 * from their source (KG_PATCHES, `make kernel`), by the loop index @i of
 * the tests that run on each.
 */
struct gkernel {
	enum kg_kernel base;
	enum kg_patch patch;
	char name[64];          /* "6.12", "6.12+phased": kernel=NAME, its directory */
};
#define GUEST_KERNELS (KG_KERNEL_COUNT + KG_PATCH_COUNT - 1)

static struct gkernel gkernel_at(int i)
{
	struct gkernel k = { (enum kg_kernel)i, KG_PATCH_NONE, "" };

	if (i >= KG_KERNEL_COUNT) {
		k.patch = (enum kg_patch)(i - KG_KERNEL_COUNT + 1);
		k.base = kg_patch_row(k.patch)->base;
	}
	kg_kernel_dir_name(k.base, k.patch, k.name, sizeof(k.name));
	return k;
}

/* Whether kernel @k was prepared or built; if not, why (what guest/prepare
 * left, or how to build it). */
static bool kernel_ready(const struct gkernel *k, char *why, size_t len)
{
	const char *patch = k->patch == KG_PATCH_NONE ? NULL : kg_patch_row(k->patch)->patch;
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), GUEST_DIR "/kernels/%s/kernel", k->name);
	if (access(path, R_OK) == 0)
		return true;
	if (k->patch != KG_PATCH_NONE) {
		snprintf(why, len, "no built kernel: run make kernel%s%s (or make check-kernel)",
			 patch ? " PATCHES=" : "", patch ? patch : "");
		return false;
	}
	snprintf(why, len, "guest/prepare did not prepare it");
	snprintf(path, sizeof(path), GUEST_DIR "/kernels/%s/unavailable", k->name);
	f = fopen(path, "r");
	if (f) {
		if (fgets(why, (int)len, f))
			why[strcspn(why, "\n")] = '\0';
		fclose(f);
	}
	return false;
}

/* Whether kernel @k (its base release, "6.1") can run @wl: no knob or prctl
 * it lacks, and a deterministic run to match exactly. */
static bool runs_on(const struct gkernel *k, const struct workload *wl)
{
	enum wl_kernel semantics;
	char why[200];

	ck_assert_int_eq(wl_kernel_from_release(kg_kernel_name(k->base), &semantics, why,
						sizeof(why)), 0);
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
static size_t load_workloads(const struct gkernel *k, const char *prefix, struct workload ***out)
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
static enum outcome compare_one(const struct gkernel *k, const struct workload *wl,
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
	/* each guest kernel has its row in the simulator's kernel table, a built
	   one its base release's with its patch's settings */
	ck_assert_str_eq(wl_kernel_name(res.semantics), kg_kernel_name(k->base));
	ck_assert_str_eq(res.settings, k->patch == KG_PATCH_NONE ? ""
								 : kg_patch_row(k->patch)->settings);
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
		printf("# %-32s %zu scans, %zu partitions, as kernel = %s%s%s: identical\n",
		       base_name(wl->path), res.report.rows_compared, res.report.partitions_compared,
		       wl_kernel_name(res.semantics), res.settings[0] ? " with " : "", res.settings);
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
static size_t boot_and_compare(const struct gkernel *k, unsigned nodes, const char *prefix,
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
	o.kernel = k->base;
	o.patch = k->patch;
	o.dir = GUEST_DIR;
	snprintf(want, sizeof(want), "%s.", kg_kernel_name(k->base));
	for (int attempt = 1; npending > 0; attempt++) {
		struct xval_guest_run *runs = calloc(npending, sizeof(*runs));
		uint64_t t0 = (uint64_t)time(NULL);
		size_t again = 0;
		int status;

		status = xval_run_guest(pending, npending, &o, true, runs, release, sizeof(release),
					msg, sizeof(msg));
		ck_assert_msg(status == KB_OK, "the %s guest: %s", k->name, msg);
		ck_assert_msg(has_prefix(release, want), "kernel=%s booted Linux %s", k->name,
			      release);
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
static bool kernel_part_runs(const struct gkernel *k)
{
	char why[256];

	if (kernel_ready(k, why, sizeof(why)))
		return true;
	printf("# kernel %s: skipped: %s\n", k->name, why);
	return false;
}

/* One of Debian's kernels that was prepared, for the tests any kernel can do. */
static enum kg_kernel a_ready_kernel(void)
{
	char why[256];

	for (int i = 0; i < KG_KERNEL_COUNT; i++) {
		struct gkernel k = gkernel_at(i);

		if (kernel_ready(&k, why, sizeof(why)))
			return k.base;
	}
	ck_abort_msg("guest/prepare succeeded without a kernel");
	return KG_KERNEL_6_1;
}

/* Per kernel (the loop index, gkernel_at): one 4-node boot of every
 * workload it can run. */
START_TEST(one_boot_per_kernel_matches_the_simulator_on_every_workload)
{
	struct gkernel k = gkernel_at(_i);
	size_t numa;

	if (!kernel_part_runs(&k))
		return;
	ck_assert_uint_ge(boot_and_compare(&k, 4, "", &numa), 18);
	ck_assert_uint_ge(numa, 4);
}
END_TEST

/* Per kernel: the THP workloads in a 1-node guest, whose 320 MiB is below
 * the 512 MiB under which the kernel turns THP off by itself. */
START_TEST(thp_workloads_match_in_a_one_node_guest)
{
	struct gkernel k = gkernel_at(_i);
	size_t numa;

	if (!kernel_part_runs(&k))
		return;
	ck_assert_uint_eq(boot_and_compare(&k, 1, "thp-", &numa), 2);
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

/* The model checker's first finding (mc/configs/smart-scan.conf): its
 * counterexample, the workload `ksmkit check -o` writes. */
static struct workload *smart_scan_counterexample(void)
{
	struct mc_config *cfg;
	struct mc_error cerr;
	struct mc_result res;
	struct workload *wl;
	struct wl_error werr;
	char why[512], *text = NULL;
	size_t len = 0;
	FILE *f;

	ck_assert_msg(mc_config_parse_file(SRCDIR "/mc/configs/smart-scan.conf", &cfg, &cerr) == 0,
		      "%s", cerr.text);
	ck_assert_msg(mc_check(cfg, NULL, &res, why, sizeof(why)) == 0, "%s", why);
	ck_assert_int_eq(res.verdict, MC_VIOLATION);
	ck_assert_str_eq(mc_invariant_name(res.invariant), "liveness");
	f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_msg(mc_trace_write_workload(cfg, &res, f, why, sizeof(why)) == 0, "%s", why);
	fclose(f);
	ck_assert_msg(wl_parse_buffer(text, len, "smart-scan-cx.wl", &wl, &werr) == 0, "%s",
		      werr.text);
	free(text);
	mc_result_free(&res);
	mc_config_free(cfg);
	return wl;
}

/* The frame of page @page of region @region in process @proc after scan @scan, or 0. */
static uint64_t frame_of(const struct xval_side *side, uint64_t scan, uint32_t proc,
			 uint32_t region, uint64_t page)
{
	for (size_t i = 0; i < side->npages; i++) {
		const struct trace_page *p = &side->pages[i];

		if (p->scan == scan && p->proc == proc && p->region == region && p->page == page)
			return p->frame;
	}
	return 0;
}

/* The first scan after the counterexample's last write at which its two
 * pages (page 0 of each region: the liveness violation's) share a frame;
 * 0 when they never do in the run. */
static uint64_t scan_they_merge(const struct workload *wl, const struct xval_side *side)
{
	uint64_t last_write = 0;

	ck_assert_uint_eq(wl->nregions, 2);
	for (size_t i = 0; i < wl->nevents; i++)
		if (wl->events[i].at_scan > last_write)
			last_write = wl->events[i].at_scan;
	for (uint64_t scan = last_write + 1; scan <= wl->stop_scans; scan++) {
		uint64_t a = frame_of(side, scan, (uint32_t)wl->regions[0].process, 0, 0);
		uint64_t b = frame_of(side, scan, (uint32_t)wl->regions[1].process, 1, 0);

		if (a && a == b)
			return scan;
	}
	return 0;
}

/*
 * Per built kernel (the loop index, from the first of KG_PATCHES): the
 * counterexample in a 1-node guest matches the simulator, following the
 * kernel's base row with its patch's settings, scan by scan and page by
 * page. Built as it is (upstream) the kernel keeps the gap: the two equal
 * pages never merge, as on the 6.18 host; every patch of KG_PATCHES so far
 * is a fix for it, and with one they merge, at the scan the simulator says.
 */
START_TEST(smart_scan_counterexample_on_each_built_kernel)
{
	struct gkernel k = gkernel_at(KG_KERNEL_COUNT + _i);
	bool fixed = kg_patch_row(k.patch)->patch != NULL;
	struct workload *wl;
	struct xval_options opt;
	struct xval_result res;
	struct kg_options o;
	uint64_t merged;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!kernel_part_runs(&k))
		return;
	wl = smart_scan_counterexample();
	kg_options_init(&o);
	o.kernel = k.base;
	o.patch = k.patch;
	o.dir = GUEST_DIR;
	xval_options_init(&opt);
	opt.pages = true;
	opt.guest = &o;
	opt.attempts = GUEST_ATTEMPTS;
	xval_run(wl, &opt, &res);
	ck_assert_msg(res.verdict != XVAL_FAILED, "%s: %s%s", k.name, res.why, res.kernel_message);
	f = open_memstream(&text, &len);
	cmp_write_table(res.sim.trace, res.kernel.trace, &res.report, "sim", "guest", f);
	fclose(f);
	ck_assert_msg(res.verdict == XVAL_MATCH, "the counterexample differs on Linux %s:\n%s",
		      res.kernel.trace->kernel, text);
	ck_assert_str_eq(res.settings, kg_patch_row(k.patch)->settings);
	merged = scan_they_merge(wl, &res.kernel);
	ck_assert_uint_eq(merged, scan_they_merge(wl, &res.sim));
	if (fixed)
		ck_assert_msg(merged > 0, "Linux %s: the equal pages are still apart after %llu scans",
			      res.kernel.trace->kernel, (unsigned long long)wl->stop_scans);
	else
		ck_assert_msg(merged == 0, "Linux %s: the equal pages merged at scan %llu",
			      res.kernel.trace->kernel, (unsigned long long)merged);
	if (merged)
		printf("# counterexample on Linux %s: %zu scans identical, the equal pages merge at "
		       "scan %llu\n", res.kernel.trace->kernel, res.report.rows_compared,
		       (unsigned long long)merged);
	else
		printf("# counterexample on Linux %s: %zu scans identical, the equal pages never "
		       "merge\n", res.kernel.trace->kernel, res.report.rows_compared);
	free(text);
	xval_result_free(&res);
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
	tcase_add_test(tc, a_built_kernel_is_its_base_row_and_its_patch_row);
	tcase_add_test(tc, a_node_the_guest_lacks_is_refused_before_booting);
	tcase_add_test(tc, a_kernel_not_prepared_is_skipped_with_the_reason);
	suite_add_tcase(s, tc);
	ready = guest_ready(why, sizeof(why));
	if (ready) {
		tc = tcase_create("guest");
		tcase_set_timeout(tc, 240);
		tcase_add_loop_test(tc, one_boot_per_kernel_matches_the_simulator_on_every_workload,
				    0, GUEST_KERNELS);
		tcase_add_loop_test(tc, thp_workloads_match_in_a_one_node_guest, 0, GUEST_KERNELS);
		tcase_add_loop_test(tc, smart_scan_counterexample_on_each_built_kernel, 0,
				    KG_PATCH_COUNT - 1);
		tcase_add_test(tc, soft_dirty_sets_are_the_pages_the_writer_wrote);
		tcase_add_test(tc, a_guest_past_its_deadline_is_killed);
		suite_add_tcase(s, tc);
		/* Debian's kernels only: a kernel not built is skipped with its
		   reason on a comment line, as make check has not built it */
		for (int i = 0; i < KG_KERNEL_COUNT; i++) {
			struct gkernel k = gkernel_at(i);
			char kwhy[256];

			if (!kernel_ready(&k, kwhy, sizeof(kwhy)))
				snprintf(skipped + strlen(skipped), sizeof(skipped) - strlen(skipped),
					 "%skernel %s: %s", skipped[0] ? "; " : "", k.name, kwhy);
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
