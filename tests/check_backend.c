/*
 * check_backend.c - Check suites for backend/ on this machine's real KSM.
 *
 * ksm_tests: the kernel's own tests (tools/testing/selftests/mm/ksm_tests.c
 *   -M, -U, -Z 0/1, -N, -P, -C, -D, -H, and ksm_functional_tests.c's unmerge,
 *   discard (MADV_DONTNEED), PROT_NONE, uffd-wp, prctl and exec cases) as
 *   workloads, each asserting the counters the semantics predict
 *   (KSM-SEMANTICS.md), not just "something merged".
 * lockstep: events between scans (fork, munmap, registration order, a knob
 *   answered EBUSY, run = 2 with the workload's own scan count), writers
 *   drawing the same pages the simulator draws, --per-batch rows, continuous
 *   writers, soft-dirty capture (or its skip), the timeout, the page
 *   partition.
 * safety: knobs restored after runs that started from non-default knobs
 *   (the advisor included), and within 5 s after SIGINT, SIGTERM, SIGHUP
 *   or SIGKILL of any process of a run (the guardian and its process group,
 *   the sentinel, the runner and its group, a workload process), with
 *   nothing of the run left merged or alive; a run killed whole is restored
 *   by the next run or by `ksmkit restore`.
 * refusals: another process with mergeable memory (and --force), a workload
 *   larger than 80% of MemAvailable, a thp = always region without its huge
 *   pages, two backends at once (the second waits), not root, a NUMA node
 *   this machine lacks, bad measurements.
 *
 * Needs root and KSM, and a machine where nobody else uses KSM: otherwise it
 * exits 77 saying why. Every test ends by checking that every knob is as it
 * was and that pages_shared and pages_sharing are 0. Sizes are small and
 * pages_to_scan large so the whole suite takes seconds.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "suite_lock.h"
#include "trace.h"
#include "workload.h"

#define KSMKIT BUILDDIR "/cli/ksmkit"
#define KSM "/sys/kernel/mm/ksm/"

/* ---- the machine ---------------------------------------------------------- */

/* A counter of /sys/kernel/mm/ksm now, or -1 if unreadable. */
static int64_t counter(const char *name)
{
	char path[128], text[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, KSM "%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, text, sizeof text - 1);
	close(fd);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	return strtoll(text, NULL, 10);
}

/* How long the suite waits for another backend (someone else's run) to end
 * before it touches or snapshots knobs itself. */
#define IDLE_WAIT_NS (600 * UINT64_C(1000000000))

/* Write a knob as a user would, holding the backend lock meanwhile. */
static void set_knob(const char *name, const char *value)
{
	char path[128], msg[256];
	int fd, lock = kb_lock_hold(IDLE_WAIT_NS, msg, sizeof msg);

	ck_assert_msg(lock >= 0, "%s", msg);
	snprintf(path, sizeof path, KSM "%s", name);
	fd = open(path, O_WRONLY);
	ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
	ck_assert_msg(write(fd, value, strlen(value)) == (ssize_t)strlen(value), "%s=%s: %s", name,
		      value, strerror(errno));
	close(fd);
	kb_lock_drop(lock);
}

/* The knobs as they are while no backend runs. */
static void save_knobs(struct kb_knob_set *set)
{
	char msg[256];

	ck_assert_msg(kb_knobs_save_idle(set, IDLE_WAIT_NS, msg, sizeof msg) == 0, "%s", msg);
}

/* Processes whose command name starts with "wl:" (workload processes), or
 * is live-fill (what the run --cmd tests measure). */
static int workload_processes(void)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	int count = 0;

	ck_assert_ptr_nonnull(proc);
	while ((de = readdir(proc)) != NULL) {
		char path[300], comm[32];
		ssize_t n;
		int fd;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/comm", de->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		n = read(fd, comm, sizeof comm - 1);
		close(fd);
		if ((n > 3 && strncmp(comm, "wl:", 3) == 0) ||
		    (n >= 9 && strncmp(comm, "live-fill", 9) == 0))
			count++;
	}
	closedir(proc);
	return count;
}

/* Every knob as in @before, nothing merged, no workload process left. */
static void assert_as_before(const struct kb_knob_set *before)
{
	struct kb_knob_set now;

	save_knobs(&now);
	ck_assert_int_eq(now.n, before->n);
	for (size_t i = 0; i < before->n; i++) {
		const char *v = kb_knobs_get(&now, before->knob[i].name);

		ck_assert_msg(v && strcmp(v, before->knob[i].value) == 0, "%s is %s, was %s",
			      before->knob[i].name, v ? v : "(gone)", before->knob[i].value);
	}
	ck_assert_int_eq(counter("pages_shared"), 0);
	ck_assert_int_eq(counter("pages_sharing"), 0);
	ck_assert_int_eq(counter("ksm_zero_pages"), 0);
	ck_assert_int_eq(workload_processes(), 0);
}

/* ---- workloads and runs ------------------------------------------------- */

static struct workload *load(const char *name)
{
	char path[512];
	struct workload *wl;
	struct wl_error err;

	snprintf(path, sizeof path, "%s/workloads/%s", SRCDIR, name);
	ck_assert_msg(wl_parse_file(path, &wl, &err) == 0, "%s", err.text);
	return wl;
}

static struct workload *parse(const char *text)
{
	struct workload *wl;
	struct wl_error err;

	ck_assert_msg(wl_parse_buffer(text, strlen(text), "inline.wl", &wl, &err) == 0, "%s",
		      err.text);
	return wl;
}

static void print_note(const char *note, void *arg)
{
	(void)arg;
	printf("# note: %s\n", note);
}

static void run_ok(const struct workload *wl, const struct kb_options *opt, struct kb_result *res)
{
	struct kb_options with_notes = *opt;
	char msg[2048];
	int status;

	if (!with_notes.note)
		with_notes.note = print_note;
	status = kb_run(wl, &with_notes, res, msg, sizeof msg);

	ck_assert_msg(status == KB_OK, "kb_run: status %d: %s", status, msg);
	ck_assert_ptr_nonnull(res->trace);
	ck_assert_int_eq(res->invalid_rows, 0);
}

/* Run @wl with @opt (NULL: defaults), checking the machine before and after. */
static void run_checked(const struct workload *wl, const struct kb_options *opt,
			struct kb_result *res)
{
	struct kb_knob_set before;
	struct kb_options defaults;

	kb_options_init(&defaults);
	save_knobs(&before);
	run_ok(wl, opt ? opt : &defaults, res);
	assert_as_before(&before);
}

static const struct trace_row *scan_row(const struct kb_result *res, uint64_t scan)
{
	for (size_t i = 0; i < res->trace->nrows; i++)
		if (res->trace->row[i].kind == TRACE_ROW_SCAN && res->trace->row[i].scan == scan)
			return &res->trace->row[i];
	ck_abort_msg("no row for scan %" PRIu64, scan);
	return NULL;
}

static size_t proc_index(const struct kb_result *res, const char *name)
{
	for (size_t i = 0; i < res->trace->nprocs; i++)
		if (strcmp(res->trace->proc_name[i], name) == 0)
			return i;
	ck_abort_msg("no process %s", name);
	return 0;
}

/* Expected counter values after a scan. */
struct expect {
	uint64_t scan;
	enum trace_counter counter;
	int64_t value;
};

static void check_rows(const struct kb_result *res, const struct expect *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct trace_row *row = scan_row(res, e[i].scan);

		ck_assert_msg(row->counter[e[i].counter] == e[i].value,
			      "after scan %" PRIu64 ": %s = %" PRId64 ", expected %" PRId64, e[i].scan,
			      trace_counter_name(e[i].counter), row->counter[e[i].counter], e[i].value);
		ck_assert_msg(row->valid, "row of scan %" PRIu64 " invalid", e[i].scan);
	}
}

#define CHECK_ROWS(res, ...)                                                                  \
	do {                                                                                  \
		const struct expect expected_[] = { __VA_ARGS__ };                            \
		check_rows(res, expected_, sizeof expected_ / sizeof expected_[0]);           \
	} while (0)

static int64_t proc_field(const struct kb_result *res, uint64_t scan, const char *proc,
			  enum trace_proc_field f)
{
	const struct trace_row *row = scan_row(res, scan);
	size_t p = proc_index(res, proc);

	ck_assert_msg(row->proc[p].present, "%s absent after scan %" PRIu64, proc, scan);
	return row->proc[p].field[f];
}

static int64_t scanned_between(const struct kb_result *res, uint64_t from, uint64_t to)
{
	return scan_row(res, to)->counter[TRACE_PAGES_SCANNED] -
	       scan_row(res, from)->counter[TRACE_PAGES_SCANNED];
}

/* ---- the page partition -------------------------------------------------- */

/* Whether two present pages of the capture after @scan share a frame other
 * than the zero page (ksm_functional_tests' range_maps_duplicates). */
static bool maps_duplicates(const struct kb_result *res, uint64_t scan)
{
	for (size_t i = 0; i < res->npages; i++) {
		const struct trace_page *a = &res->pages[i];

		if (a->scan != scan || !(a->flags & TRACE_PAGE_PRESENT) || (a->flags & TRACE_PAGE_ZERO))
			continue;
		for (size_t j = i + 1; j < res->npages; j++)
			if (res->pages[j].scan == scan && res->pages[j].frame == a->frame &&
			    (res->pages[j].flags & TRACE_PAGE_PRESENT))
				return true;
	}
	return false;
}

static size_t pages_with(const struct kb_result *res, uint64_t scan, uint32_t flags)
{
	size_t n = 0;

	for (size_t i = 0; i < res->npages; i++)
		n += res->pages[i].scan == scan && (res->pages[i].flags & flags) == flags;
	return n;
}

static size_t distinct_frames(const struct kb_result *res, uint64_t scan)
{
	size_t n = 0;

	for (size_t i = 0; i < res->npages; i++) {
		bool seen = false;

		if (res->pages[i].scan != scan || !(res->pages[i].flags & TRACE_PAGE_PRESENT))
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = res->pages[j].scan == scan && res->pages[j].frame == res->pages[i].frame;
		n += !seen;
	}
	return n;
}

/* ---- the ksmkit program --------------------------------------------------- */

struct cli {
	pid_t pid;       /* ksmkit, the leader of its own process group */
	int err_fd;      /* its stderr */
	int out_fd;      /* its stdout when captured, else -1 (/dev/null) */
	char err[8192];  /* what it said */
	char out[8192];  /* what it printed, when captured (small outputs only) */
	int status;      /* exit code, or 128 + signal */
};

static void cli_start_capturing(struct cli *c, bool as_nobody, bool capture_out,
				const char *const *args)
{
	int pipefd[2], outfd[2] = { -1, -1 };

	memset(c, 0, sizeof *c);
	ck_assert_int_eq(pipe(pipefd), 0);
	if (capture_out)
		ck_assert_int_eq(pipe(outfd), 0);
	c->pid = fork();
	ck_assert_int_ge(c->pid, 0);
	if (c->pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		setpgid(0, 0);
		dup2(pipefd[1], STDERR_FILENO);
		dup2(capture_out ? outfd[1] : null, STDOUT_FILENO);
		close(pipefd[0]);
		if (as_nobody && (setgid(65534) != 0 || setuid(65534) != 0))
			_exit(99);
		execv(KSMKIT, (char *const *)args);
		_exit(98);
	}
	setpgid(c->pid, c->pid);
	close(pipefd[1]);
	c->err_fd = pipefd[0];
	c->out_fd = -1;
	if (capture_out) {
		close(outfd[1]);
		c->out_fd = outfd[0];
	}
}

static void cli_start(struct cli *c, bool as_nobody, const char *const *args)
{
	cli_start_capturing(c, as_nobody, false, args);
}

static void read_all_of(int fd, char *buf, size_t cap)
{
	size_t got = 0;
	ssize_t n;

	while ((n = read(fd, buf + got, cap - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	close(fd);
}

static int cli_finish(struct cli *c)
{
	int ws;

	if (c->out_fd >= 0)
		read_all_of(c->out_fd, c->out, sizeof c->out);
	read_all_of(c->err_fd, c->err, sizeof c->err);
	ck_assert_int_eq(waitpid(c->pid, &ws, 0), c->pid);
	c->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	return c->status;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Process @role ("runner", "sentinel") of the backend whose guardian is
 * @guardian, from the lock file (waiting for it to be named there). */
static pid_t holder_of(pid_t guardian, const char *role)
{
	for (double end = now_s() + 20; now_s() < end; usleep(5000)) {
		char text[128] = "", *at;
		int g = 0;
		FILE *f = fopen(KB_LOCK_FILE, "r");

		if (!f)
			continue;
		if (fread(text, 1, sizeof text - 1, f) > 0 && sscanf(text, "guardian %d", &g) == 1 &&
		    g == guardian && (at = strstr(text, role)) && atoi(at + strlen(role) + 1) > 0) {
			fclose(f);
			return (pid_t)atoi(at + strlen(role) + 1);
		}
		fclose(f);
	}
	ck_abort_msg("no %s for guardian %d", role, (int)guardian);
	return 0;
}

static pid_t runner_of(pid_t guardian)
{
	return holder_of(guardian, "runner");
}

/* A workload process of the run whose runner is @runner (its process group). */
static pid_t worker_of(pid_t runner)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;

	ck_assert_ptr_nonnull(proc);
	while (!found && (de = readdir(proc)) != NULL) {
		char path[300], text[512], *paren;
		int pgrp = 0;
		FILE *f;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(text, sizeof text, f) && strstr(text, "(wl:") &&
		    (paren = strrchr(text, ')')) && sscanf(paren + 2, "%*c %*d %d", &pgrp) == 1 &&
		    pgrp == runner)
			found = (pid_t)atoi(de->d_name);
		fclose(f);
	}
	closedir(proc);
	ck_assert_msg(found, "no workload process in group %d", (int)runner);
	return found;
}

static void wait_until_merged(void)
{
	for (double end = now_s() + 20; now_s() < end; usleep(5000))
		if (counter("pages_sharing") > 0)
			return;
	ck_abort_msg("nothing merged");
}

static char *temp_workload(const char *text)
{
	char *path = strdup("/tmp/ksmkit-check-XXXXXX");
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* Long enough to be interrupted, with knobs far from the defaults. */
static const char long_workload[] = "[global]\n"
				    "scans = 100000\n"
				    "timeout = 60s\n"
				    "pages_to_scan = 5000\n"
				    "sleep_millisecs = 10\n"
				    "max_page_sharing = 64\n"
				    "use_zero_pages = 1\n"
				    "smart_scan = 0\n"
				    "stable_node_chains_prune_millisecs = 500\n"
				    "[region buf]\n"
				    "pages = 1000\n"
				    "fill = same\n"
				    "value = 7\n";

/* ======================= ksm_tests =========================================== */

/* -M: 10 identical pages merge into one KSM page. */
START_TEST(test_merge_M)
{
	struct workload *wl = load("selftests/ksm_tests-M-t0.wl");
	struct kb_options opt;
	struct kb_result res;

	kb_options_init(&opt);
	opt.pages = KB_PAGES_EVERY_SCAN;
	run_checked(wl, &opt, &res);
	CHECK_ROWS(&res, { 1, TRACE_PAGES_VOLATILE, 10 }, { 1, TRACE_PAGES_SHARED, 0 },
		   { 1, TRACE_PAGES_SHARING, 0 }, { 2, TRACE_PAGES_SHARED, 1 },
		   { 2, TRACE_PAGES_SHARING, 9 }, { 2, TRACE_PAGES_UNSHARED, 0 },
		   { 2, TRACE_PAGES_VOLATILE, 0 }, { 2, TRACE_GENERAL_PROFIT, 36224 },
		   { 3, TRACE_PAGES_SHARED, 1 }, { 3, TRACE_PAGES_SHARING, 9 });
	ck_assert_int_eq(proc_field(&res, 2, "main", TRACE_KSM_RMAP_ITEMS), 10);
	ck_assert_int_eq(proc_field(&res, 2, "main", TRACE_KSM_MERGING_PAGES), 10);
	ck_assert_int_eq(proc_field(&res, 2, "main", TRACE_KSM_PROCESS_PROFIT), 40320);
	ck_assert_int_eq(scanned_between(&res, 1, 3), 20);
	/* Page level: 10 pages, one KSM frame after scan 2, ten frames before. */
	ck_assert_int_eq(distinct_frames(&res, 1), 10);
	ck_assert_int_eq(distinct_frames(&res, 2), 1);
	ck_assert_int_eq(pages_with(&res, 2, TRACE_PAGE_KSM), 10);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* -M -t 1: the same with prctl; the process's other memory counts too. */
START_TEST(test_merge_prctl)
{
#ifdef __SANITIZE_ADDRESS__
	/* The worker keeps PR_SET_MEMORY_MERGE to the workload's regions with
	 * MADV_UNMERGEABLE on its other mappings: over ASan's 15 TB of shadow
	 * the kernel unmerges one address at a time, for about 3 minutes (as
	 * long as the test's timeout). The plain build checks it. */
	printf("# ksm_tests -M prctl: skipped under AddressSanitizer (unmerging the "
	       "shadow mapping takes minutes)\n");
	return;
#endif
	struct workload *wl = load("selftests/ksm_tests-M-t1.wl");
	struct kb_options opt;
	struct kb_result res;

	kb_options_init(&opt);
	opt.pages = KB_PAGES_FINAL;
	run_checked(wl, &opt, &res);
	ck_assert_int_eq(proc_field(&res, 2, "main", TRACE_KSM_MERGE_ANY), 1);
	ck_assert_int_eq(proc_field(&res, 2, "main", TRACE_KSM_MERGEABLE), 1);
	ck_assert_int_ge(scan_row(&res, 2)->counter[TRACE_PAGES_SHARED], 1);
	ck_assert_int_ge(scan_row(&res, 2)->counter[TRACE_PAGES_SHARING], 9);
	ck_assert_int_ge(proc_field(&res, 2, "main", TRACE_KSM_MERGING_PAGES), 10);
	ck_assert_int_eq(distinct_frames(&res, 3), 1);
	ck_assert_int_eq(pages_with(&res, 3, TRACE_PAGE_KSM), 10);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* -U: two merged pages each get a different 1-byte change and unmerge. */
START_TEST(test_unmerge_U)
{
	struct workload *wl = load("selftests/ksm_tests-U-t0.wl");
	struct kb_options opt;
	struct kb_result res;

	kb_options_init(&opt);
	opt.pages = KB_PAGES_FINAL;
	run_checked(wl, &opt, &res);
	CHECK_ROWS(&res, { 2, TRACE_PAGES_SHARED, 1 }, { 2, TRACE_PAGES_SHARING, 1 },
		   { 3, TRACE_PAGES_SHARED, 0 }, { 3, TRACE_PAGES_SHARING, 0 },
		   { 3, TRACE_PAGES_UNSHARED, 0 }, { 3, TRACE_PAGES_VOLATILE, 2 });
	ck_assert_int_eq(proc_field(&res, 3, "main", TRACE_KSM_RMAP_ITEMS), 2);
	ck_assert_int_eq(proc_field(&res, 3, "main", TRACE_KSM_MERGING_PAGES), 0);
	ck_assert(!maps_duplicates(&res, 3));
	ck_assert_int_eq(pages_with(&res, 3, TRACE_PAGE_KSM), 0);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* -Z -z 0: zero-filled pages merge with each other like any content. */
START_TEST(test_zero_pages_0)
{
	struct workload *wl = load("selftests/ksm_tests-Z-z0-t0.wl");
	struct kb_result res;

	run_checked(wl, NULL, &res);
	CHECK_ROWS(&res, { 1, TRACE_PAGES_VOLATILE, 10 }, { 2, TRACE_PAGES_SHARED, 1 },
		   { 2, TRACE_PAGES_SHARING, 9 }, { 2, TRACE_KSM_ZERO_PAGES, 0 },
		   { 2, TRACE_GENERAL_PROFIT, 36224 }, { 3, TRACE_PAGES_SHARED, 1 },
		   { 3, TRACE_PAGES_SHARING, 9 });
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* -Z -z 1: each zero page becomes the kernel's zero page; items linger a scan. */
START_TEST(test_zero_pages_1)
{
	struct workload *wl = load("selftests/ksm_tests-Z-z1-t0.wl");
	struct kb_options opt;
	struct kb_result res;

	kb_options_init(&opt);
	opt.pages = KB_PAGES_FINAL;
	run_checked(wl, &opt, &res);
	CHECK_ROWS(&res, { 1, TRACE_PAGES_VOLATILE, 10 }, { 2, TRACE_PAGES_SHARED, 0 },
		   { 2, TRACE_PAGES_SHARING, 0 }, { 2, TRACE_KSM_ZERO_PAGES, 10 },
		   { 2, TRACE_PAGES_VOLATILE, 10 }, { 2, TRACE_GENERAL_PROFIT, 40320 },
		   { 3, TRACE_PAGES_VOLATILE, 0 }, { 3, TRACE_KSM_ZERO_PAGES, 10 },
		   { 3, TRACE_GENERAL_PROFIT, 40960 });
	ck_assert_int_eq(proc_field(&res, 2, "main", TRACE_KSM_RMAP_ITEMS), 10);
	ck_assert_int_eq(proc_field(&res, 3, "main", TRACE_KSM_RMAP_ITEMS), 0);
	ck_assert_int_eq(proc_field(&res, 3, "main", TRACE_KSM_ZERO_PAGES_PROC), 10);
	ck_assert_int_eq(scanned_between(&res, 1, 3), 10);
	ck_assert_int_eq(pages_with(&res, 3, TRACE_PAGE_ZERO), 10);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

static int nodes_with_memory(void)
{
	char list[256] = "";
	int first, last, n = 0;
	FILE *f = fopen("/sys/devices/system/node/has_memory", "r");

	if (!f)
		return 1;
	if (fgets(list, sizeof list, f)) {
		for (char *p = list; *p;) {
			int used = 0;

			if (sscanf(p, "%d-%d%n", &first, &last, &used) == 2)
				n += last - first + 1;
			else if (sscanf(p, "%d%n", &first, &used) == 1)
				n++;
			if (!used)
				break;
			p += used;
			if (*p == ',')
				p++;
			else
				break;
		}
	}
	fclose(f);
	return n ? n : 1;
}

/* -N: skipped, with the reason, on a machine without node 1
 * (tests/check_backend_numa.c runs it where there is one). */
START_TEST(test_numa_N_skips_here)
{
	struct workload *wl = load("selftests/ksm_tests-N-m0-t0.wl");
	struct kb_knob_set before;
	struct kb_options opt;
	struct kb_result res;
	char msg[512];

	if (nodes_with_memory() >= 2) {
		printf("# -N runs in check_backend_numa on this machine\n");
		wl_free(wl);
		return;
	}
	save_knobs(&before);
	kb_options_init(&opt);
	ck_assert_int_eq(kb_run(wl, &opt, &res, msg, sizeof msg), KB_SKIPPED);
	ck_assert_msg((strstr(msg, "no NUMA node 1") || strstr(msg, "NUMA placement not built")) &&
			      strstr(msg, "skipped"),
		      "%s", msg);
	ck_assert_ptr_null(res.trace);
	printf("# ksm_tests -N: %s\n", msg);
	assert_as_before(&before);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* -P: 100 MiB of identical pages, the worked example of KSM-SEMANTICS.md 4. */
START_TEST(test_merge_time_P)
{
	struct workload *wl = load("selftests/ksm_tests-P-t0.wl");
	struct kb_options opt;
	struct kb_result res;

	kb_options_init(&opt);
	opt.measure = KB_MEASURE_MERGE;
	run_checked(wl, &opt, &res);
	CHECK_ROWS(&res, { 1, TRACE_PAGES_VOLATILE, 25600 }, { 1, TRACE_PAGES_SHARED, 0 },
		   { 2, TRACE_PAGES_SHARED, 100 }, { 2, TRACE_PAGES_SHARING, 25500 },
		   { 2, TRACE_PAGES_UNSHARED, 0 }, { 2, TRACE_PAGES_VOLATILE, 0 },
		   { 2, TRACE_STABLE_NODE_CHAINS, 1 }, { 2, TRACE_STABLE_NODE_DUPS, 100 },
		   { 2, TRACE_GENERAL_PROFIT, 102809600 });
	ck_assert_int_eq(proc_field(&res, 2, "main", TRACE_KSM_MERGING_PAGES), 25600);
	ck_assert_int_eq(proc_field(&res, 2, "main", TRACE_KSM_PROCESS_PROFIT), 103219200);
	ck_assert_int_eq(scanned_between(&res, 1, 2), 25600);
	ck_assert_int_eq(res.measurement.kind, KB_MEASURE_MERGE);
	ck_assert_int_eq(res.measurement.bytes, 100 << 20);
	ck_assert_int_gt(res.measurement.time_ns, 0);
	/* The measurement ends when scan 2 is seen, just before its row is read. */
	ck_assert_uint_le(res.measurement.time_ns, scan_row(&res, 2)->time_ns + 1000000000ull);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* -C: COW-break every other page of a merged region, then re-merge. */
START_TEST(test_cow_C)
{
	struct workload *wl = load("selftests/ksm_tests-C-t0.wl");
	struct kb_options opt;
	struct kb_result res;

	kb_options_init(&opt);
	opt.measure = KB_MEASURE_COW;
	run_checked(wl, &opt, &res);
	CHECK_ROWS(&res, { 2, TRACE_PAGES_SHARED, 16 }, { 2, TRACE_PAGES_SHARING, 3984 },
		   { 2, TRACE_STABLE_NODE_CHAINS, 1 }, { 2, TRACE_STABLE_NODE_DUPS, 16 },
		   { 2, TRACE_PAGES_VOLATILE, 0 }, { 3, TRACE_PAGES_SHARED, 16 },
		   { 3, TRACE_PAGES_SHARING, 1984 }, { 3, TRACE_PAGES_VOLATILE, 2000 },
		   { 4, TRACE_PAGES_SHARED, 24 }, { 4, TRACE_PAGES_SHARING, 3976 },
		   { 4, TRACE_PAGES_VOLATILE, 0 }, { 4, TRACE_STABLE_NODE_CHAINS, 2 },
		   { 4, TRACE_STABLE_NODE_DUPS, 24 });
	ck_assert_int_eq(res.measurement.kind, KB_MEASURE_COW);
	ck_assert_int_eq(res.measurement.bytes, 2000 * 4096);
	ck_assert_int_gt(res.measurement.time_ns, 0);
	ck_assert_int_gt(res.measurement.base_time_ns, 0);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* -D: MADV_UNMERGEABLE of a merged region, timed. */
START_TEST(test_unmerge_time_D)
{
	struct workload *wl = parse("[global]\nscans = 2\npages_to_scan = 5000\n"
				    "sleep_millisecs = 10\n"
				    "[region buf]\npages = 2000\nfill = same\nvalue = 42\n");
	struct kb_options opt;
	struct kb_result res;

	kb_options_init(&opt);
	opt.measure = KB_MEASURE_UNMERGE;
	run_checked(wl, &opt, &res);
	CHECK_ROWS(&res, { 2, TRACE_PAGES_SHARED, 8 }, { 2, TRACE_PAGES_SHARING, 1992 });
	ck_assert_int_eq(res.measurement.kind, KB_MEASURE_UNMERGE);
	ck_assert_int_eq(res.measurement.bytes, 2000 * 4096);
	ck_assert_int_gt(res.measurement.time_ns, 0);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* Whether THP is on here; if not, says that @what is skipped. */
static bool thp_available(const char *what)
{
	char text[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	bool ok = false;

	if (f) {
		ok = fgets(text, sizeof text, f) && !strstr(text, "[never]");
		fclose(f);
	}
	if (!ok)
		printf("# %s: skipped: transparent huge pages are off\n", what);
	return ok;
}

/* -H: merge time of an area backed by huge pages. Two subpages of one folio
 * fail once and split the folio; they merge on a later visit. */
START_TEST(test_thp_H)
{
	struct workload *wl;
	struct kb_options opt;
	struct kb_result res;

	if (!thp_available("ksm_tests -H"))
		return;
	wl = parse("[global]\nscans = 4\npages_to_scan = 5000\nsleep_millisecs = 10\n"
		   "[region buf]\nsize = 8m\nfill = same\nvalue = 42\n");
	kb_options_init(&opt);
	opt.measure = KB_MEASURE_THP;
	opt.pages = KB_PAGES_EVERY_SCAN;
	run_checked(wl, &opt, &res);
	ck_assert_int_eq(res.measurement.kind, KB_MEASURE_THP);
	ck_assert_int_eq(res.measurement.ranges, 4);
	ck_assert_int_le(res.measurement.huge_ranges, 4);
	ck_assert_int_eq(res.measurement.bytes, 8 << 20);
	printf("# ksm_tests -H: %" PRIu64 " of 4 ranges huge at setup\n", res.measurement.huge_ranges);
	/* By the last scan every page is merged: 2048 = 8 * 256. */
	CHECK_ROWS(&res, { 4, TRACE_PAGES_SHARED, 8 }, { 4, TRACE_PAGES_SHARING, 2040 });
	ck_assert_int_eq(pages_with(&res, 4, TRACE_PAGE_KSM), 2048);
	if (res.measurement.huge_ranges)
		ck_assert_int_gt(pages_with(&res, 1, TRACE_PAGE_THP), 0);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* A thp = always region is backed by huge pages from setup on, as the
 * simulator assumes: every page of its two whole 2 MiB ranges is in a THP
 * at scan 0 (the last 488 pages, less than 2 MiB, are small). */
START_TEST(test_thp_region_is_huge_at_setup)
{
	struct workload *wl;
	struct kb_options opt;
	struct kb_result res;

	if (!thp_available("thp = always"))
		return;
	wl = parse("[global]\nscans = 1\npages_to_scan = 5000\nsleep_millisecs = 10\n"
		   "[region buf]\npages = 1512\nfill = unique\nthp = always\n");
	kb_options_init(&opt);
	opt.pages = KB_PAGES_EVERY_SCAN;
	run_checked(wl, &opt, &res);
	ck_assert_int_eq(pages_with(&res, 0, TRACE_PAGE_PRESENT), 1512);
	ck_assert_int_eq(pages_with(&res, 0, TRACE_PAGE_THP), 1024);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* ksm_functional_tests test_unmerge and test_unmerge_discarded (its 0xcf
 * bytes are a value above 2^63, which workloads reserve: 0x4f instead). */
START_TEST(test_functional_unmerge)
{
	static const char *const texts[] = {
		"[global]\nscans = 3\npages_to_scan = 5000\nsleep_millisecs = 10\n"
		"[region map]\nsize = 2m\nfill = same\nvalue = 0x4f4f4f4f4f4f4f4f\n"
		"[event unmerge]\nat = after-scan:2\naction = unmerge\nregion = map\n",
		/* half of it discarded first (MADV_DONTNEED: pte_none entries in the range) */
		"[global]\nscans = 3\npages_to_scan = 5000\nsleep_millisecs = 10\n"
		"[region map]\nsize = 2m\nfill = same\nvalue = 0x4f4f4f4f4f4f4f4f\n"
		"[event discard]\nat = after-scan:2\naction = discard\nregion = map\n"
		"pages = 0-255\n"
		"[event unmerge]\nat = after-scan:2\naction = unmerge\nregion = map\n",
	};

	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		struct workload *wl = parse(texts[i]);
		struct kb_options opt;
		struct kb_result res;

		kb_options_init(&opt);
		opt.pages = KB_PAGES_EVERY_SCAN;
		run_checked(wl, &opt, &res);
		CHECK_ROWS(&res, { 2, TRACE_PAGES_SHARED, 2 }, { 2, TRACE_PAGES_SHARING, 510 },
			   { 3, TRACE_PAGES_SHARED, 0 }, { 3, TRACE_PAGES_SHARING, 0 });
		ck_assert(maps_duplicates(&res, 2));
		ck_assert(!maps_duplicates(&res, 3));
		ck_assert_int_eq(pages_with(&res, 3, TRACE_PAGE_KSM), 0);
		ck_assert_int_eq(proc_field(&res, 3, "main", TRACE_KSM_RMAP_ITEMS), 0);
		kb_result_free(&res);
		wl_free(wl);
	}
}
END_TEST

/* The row of @res for scan @scan has the discarded half's pages absent. */
static size_t absent_pages(const struct kb_result *res, uint64_t scan)
{
	size_t n = 0;

	for (size_t i = 0; i < res->npages; i++)
		n += res->pages[i].scan == scan && !(res->pages[i].flags & TRACE_PAGE_PRESENT);
	return n;
}

/* test_unmerge_discarded's MADV_DONTNEED: the discarded PTEs are none at once,
 * their items linger until ksmd passes, and a touch reads zeros. */
START_TEST(test_functional_discard)
{
	struct workload *wl = parse("[global]\nscans = 4\npages_to_scan = 5000\n"
				    "sleep_millisecs = 10\n"
				    "[region map]\npages = 64\nfill = same\nvalue = 7\n"
				    "[event discard]\nat = after-scan:2\naction = discard\n"
				    "region = map\npages = 0-31\n"
				    "[event touch]\nat = after-scan:3\naction = write\nregion = map\n"
				    "pages = 0-1\nvalue = 0\noffset = 8\n");
	struct kb_options opt;
	struct kb_result res;

	kb_options_init(&opt);
	opt.pages = KB_PAGES_EVERY_SCAN;
	run_checked(wl, &opt, &res);
	CHECK_ROWS(&res, { 2, TRACE_PAGES_SHARING, 63 }, { 3, TRACE_PAGES_SHARED, 1 },
		   { 3, TRACE_PAGES_SHARING, 31 }, { 4, TRACE_PAGES_VOLATILE, 2 });
	ck_assert_int_eq(proc_field(&res, 3, "main", TRACE_KSM_RMAP_ITEMS), 32);
	ck_assert_int_eq(absent_pages(&res, 3), 32);
	ck_assert_int_eq(absent_pages(&res, 4), 30);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* test_prot_none: PROT_NONE pages merge; writes through /proc/PID/mem
 * (FOLL_FORCE) break COW on one half, MADV_UNMERGEABLE the other. */
START_TEST(test_functional_prot_none)
{
	struct workload *wl = parse("[global]\nscans = 3\npages_to_scan = 5000\n"
				    "sleep_millisecs = 10\n"
				    "[region map]\nsize = 2m\nfill = same\nvalue = 0x1111111111111111\n"
				    "[event none]\nat = after-scan:0\naction = protect\nregion = map\n"
				    "prot = none\n"
				    "[event poke]\nat = after-scan:2\naction = write\nregion = map\n"
				    "pages = 0-255\nvalue = fresh\n"
				    "[event unmerge]\nat = after-scan:2\naction = unmerge\n"
				    "region = map\npages = 256-511\n");
	struct kb_options opt;
	struct kb_result res;

	kb_options_init(&opt);
	opt.pages = KB_PAGES_EVERY_SCAN;
	run_checked(wl, &opt, &res);
	CHECK_ROWS(&res, { 2, TRACE_PAGES_SHARED, 2 }, { 2, TRACE_PAGES_SHARING, 510 },
		   { 3, TRACE_PAGES_SHARED, 0 }, { 3, TRACE_PAGES_SHARING, 0 });
	ck_assert(maps_duplicates(&res, 2));
	ck_assert(!maps_duplicates(&res, 3));
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* test_unmerge_uffd_wp: MADV_UNMERGEABLE of a userfaultfd write-protected range
 * still unmerges (or the kernel lacks the feature: skipped, saying so). */
START_TEST(test_functional_uffd_wp)
{
	struct workload *wl = parse("[global]\nscans = 3\npages_to_scan = 5000\n"
				    "sleep_millisecs = 10\n"
				    "[region map]\nsize = 2m\nfill = same\nvalue = 0x4f4f4f4f4f4f4f4f\n"
				    "[event wp]\nat = after-scan:2\naction = uffd-wp\nregion = map\n"
				    "[event unmerge]\nat = after-scan:2\naction = unmerge\n"
				    "region = map\n");
	struct kb_knob_set before;
	struct kb_options opt;
	struct kb_result res;
	char msg[1024];
	int status;

	kb_options_init(&opt);
	opt.pages = KB_PAGES_EVERY_SCAN;
	save_knobs(&before);
	status = kb_run(wl, &opt, &res, msg, sizeof msg);
	if (status == KB_SKIPPED) {
		printf("# uffd-wp skipped: %s\n", msg);
		ck_assert_ptr_nonnull(strstr(msg, "UFFD"));
	} else {
		ck_assert_msg(status == KB_OK, "%s", msg);
		CHECK_ROWS(&res, { 2, TRACE_PAGES_SHARING, 510 }, { 3, TRACE_PAGES_SHARING, 0 });
		ck_assert(!maps_duplicates(&res, 3));
	}
	assert_as_before(&before);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* test_prctl_fork_exec: the child execs; the flag survives (ksm_execve) and
 * its new pages merge; merge-off (PR_SET_MEMORY_MERGE 0) unmerges the parent. */
START_TEST(test_functional_prctl_exec)
{
#ifdef __SANITIZE_ADDRESS__
	printf("# prctl exec: skipped under AddressSanitizer (PR_SET_MEMORY_MERGE 0 walks its "
	       "shadow mapping page by page for minutes)\n");
	return;
#endif
	struct workload *wl = parse("[global]\nscans = 6\npages_to_scan = 5000\n"
				    "sleep_millisecs = 10\n"
				    "[region map]\npages = 32\nfill = same\nvalue = 0x4f4f4f4f4f4f4f4f\n"
				    "merge = prctl\n"
				    "[event kid]\nat = after-scan:2\naction = fork\nprocess = main\n"
				    "child = kid\n"
				    "[event kid-exec]\nat = after-scan:2\naction = exec\nprocess = kid\n"
				    "[event off]\nat = after-scan:4\naction = merge-off\nprocess = main\n");
	struct kb_options opt;
	struct kb_result res;

	kb_options_init(&opt);
	opt.pages = KB_PAGES_EVERY_SCAN;
	run_checked(wl, &opt, &res);
	ck_assert_int_eq(proc_field(&res, 3, "kid", TRACE_KSM_MERGE_ANY), 1);
	ck_assert_int_eq(proc_field(&res, 3, "kid", TRACE_KSM_MERGING_PAGES), 0);
	ck_assert_int_eq(proc_field(&res, 4, "kid", TRACE_KSM_MERGING_PAGES), 32);
	ck_assert_int_eq(proc_field(&res, 5, "main", TRACE_KSM_MERGE_ANY), 0);
	ck_assert_int_eq(proc_field(&res, 5, "main", TRACE_KSM_MERGING_PAGES), 0);
	CHECK_ROWS(&res, { 4, TRACE_PAGES_SHARING, 63 }, { 5, TRACE_PAGES_SHARING, 31 });
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* ksm_functional_tests test_unmerge_zero_pages: KSM zero pages counted per
 * process, dropped at once by MADV_UNMERGEABLE and by writes. */
START_TEST(test_functional_unmerge_zero_pages)
{
	struct workload *wl = parse("[global]\nscans = 4\npages_to_scan = 5000\n"
				    "sleep_millisecs = 10\nuse_zero_pages = 1\n"
				    "[region map]\nsize = 2m\nfill = zero\n"
				    "[event unmerge-half]\nat = after-scan:2\naction = unmerge\n"
				    "region = map\npages = 0-255\n"
				    "[event write-other-half]\nat = after-scan:3\naction = write\n"
				    "region = map\npages = 256-511\nvalue = fresh\n");
	struct kb_options opt;
	struct kb_result res;

	kb_options_init(&opt);
	opt.pages = KB_PAGES_FINAL;
	run_checked(wl, &opt, &res);
	ck_assert_int_eq(proc_field(&res, 2, "main", TRACE_KSM_ZERO_PAGES_PROC), 512);
	ck_assert_int_eq(proc_field(&res, 3, "main", TRACE_KSM_ZERO_PAGES_PROC), 256);
	ck_assert_int_eq(proc_field(&res, 4, "main", TRACE_KSM_ZERO_PAGES_PROC), 0);
	CHECK_ROWS(&res, { 2, TRACE_KSM_ZERO_PAGES, 512 }, { 4, TRACE_KSM_ZERO_PAGES, 0 });
	ck_assert(!maps_duplicates(&res, 4));
	ck_assert_int_eq(pages_with(&res, 4, TRACE_PAGE_ZERO), 0);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* ksm_functional_tests test_prctl_unmerge and test_prctl_fork. */
START_TEST(test_functional_prctl)
{
#ifdef __SANITIZE_ADDRESS__
	/* PR_SET_MEMORY_MERGE 0 makes 6.18 (ksm_del_vmas) try every page of
	 * every VMA, mergeable or not, one address at a time: over ASan's
	 * terabytes of shadow that takes minutes. The plain build checks it. */
	printf("# prctl unmerge: skipped under AddressSanitizer (the kernel walks its "
	       "shadow mapping page by page for minutes)\n");
	return;
#endif

	struct workload *wl = parse("[global]\nscans = 4\npages_to_scan = 5000\n"
				    "sleep_millisecs = 10\n"
				    "[region map]\nsize = 2m\nfill = same\nvalue = 0x4f4f4f4f4f4f4f4f\n"
				    "merge = prctl\n"
				    "[event clone]\nat = after-scan:2\naction = fork\nprocess = main\n"
				    "child = kid\n"
				    "[event off]\nat = after-scan:3\naction = unmerge\nregion = map\n");
	struct kb_options opt;
	struct kb_result res;

	kb_options_init(&opt);
	opt.pages = KB_PAGES_EVERY_SCAN;
	run_checked(wl, &opt, &res);
	ck_assert_int_eq(proc_field(&res, 3, "kid", TRACE_KSM_MERGE_ANY), 1);
	ck_assert_int_eq(proc_field(&res, 3, "main", TRACE_KSM_MERGE_ANY), 1);
	ck_assert_int_eq(proc_field(&res, 4, "main", TRACE_KSM_MERGE_ANY), 0);
	ck_assert_int_eq(proc_field(&res, 4, "main", TRACE_KSM_MERGEABLE), 0);
	ck_assert_int_eq(proc_field(&res, 4, "kid", TRACE_KSM_MERGE_ANY), 1);
	/* main's pages are its own again; kid still maps the KSM pages. */
	for (size_t i = 0; i < res.npages; i++) {
		const struct trace_page *p = &res.pages[i];

		if (p->scan == 4 && p->proc == proc_index(&res, "main"))
			ck_assert_msg(!(p->flags & TRACE_PAGE_KSM), "main page %" PRIu64 " still KSM",
				      p->page);
	}
	ck_assert_int_eq(pages_with(&res, 4, TRACE_PAGE_KSM), 512);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* ======================= lockstep ============================================ */

/* fork.wl: the child inherits the KSM pages and joins the node at once. */
START_TEST(test_fork)
{
	struct workload *wl = load("fork.wl");
	struct kb_result res;
	size_t kid;

	run_checked(wl, NULL, &res);
	CHECK_ROWS(&res, { 2, TRACE_PAGES_SHARED, 1 }, { 2, TRACE_PAGES_SHARING, 99 },
		   { 3, TRACE_PAGES_SHARED, 1 }, { 3, TRACE_PAGES_SHARING, 199 },
		   { 4, TRACE_PAGES_SHARING, 199 }, { 5, TRACE_PAGES_SHARED, 1 },
		   { 5, TRACE_PAGES_SHARING, 99 });
	ck_assert_int_eq(proc_field(&res, 3, "kid", TRACE_KSM_RMAP_ITEMS), 100);
	ck_assert_int_eq(proc_field(&res, 3, "kid", TRACE_KSM_MERGING_PAGES), 100);
	ck_assert_int_eq(proc_field(&res, 3, "main", TRACE_KSM_MERGING_PAGES), 100);
	kid = proc_index(&res, "kid");
	ck_assert(!scan_row(&res, 2)->proc[kid].present);
	ck_assert(!scan_row(&res, 5)->proc[kid].present);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* registration-order.wl: a late MADV_MERGEABLE registers at the list's end. */
START_TEST(test_registration_order)
{
	struct workload *wl = load("registration-order.wl");
	struct kb_result res;

	run_checked(wl, NULL, &res);
	CHECK_ROWS(&res, { 1, TRACE_PAGES_VOLATILE, 200 }, { 2, TRACE_PAGES_SHARED, 1 },
		   { 2, TRACE_PAGES_SHARING, 199 }, { 3, TRACE_PAGES_SHARING, 199 },
		   { 3, TRACE_PAGES_VOLATILE, 100 }, { 4, TRACE_PAGES_SHARED, 2 },
		   { 4, TRACE_PAGES_SHARING, 298 }, { 4, TRACE_STABLE_NODE_CHAINS, 1 },
		   { 4, TRACE_STABLE_NODE_DUPS, 2 });
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* munmap-middle.wl and unmerge-part-of-chain.wl: lazy item freeing. */
START_TEST(test_unmap_and_unmerge_events)
{
	struct workload *wl = load("munmap-middle.wl");
	struct kb_result res;

	run_checked(wl, NULL, &res);
	CHECK_ROWS(&res, { 2, TRACE_PAGES_SHARING, 199 }, { 3, TRACE_PAGES_SHARED, 1 },
		   { 3, TRACE_PAGES_SHARING, 99 }, { 4, TRACE_PAGES_SHARING, 99 });
	ck_assert_int_eq(proc_field(&res, 3, "main", TRACE_KSM_RMAP_ITEMS), 100);
	kb_result_free(&res);
	wl_free(wl);

	wl = load("unmerge-part-of-chain.wl");
	run_checked(wl, NULL, &res);
	CHECK_ROWS(&res, { 2, TRACE_PAGES_SHARED, 63 }, { 2, TRACE_PAGES_SHARING, 937 },
		   { 3, TRACE_PAGES_SHARED, 57 }, { 3, TRACE_PAGES_SHARING, 843 },
		   { 3, TRACE_STABLE_NODE_DUPS, 57 }, { 4, TRACE_PAGES_SHARED, 57 });
	ck_assert_int_eq(proc_field(&res, 3, "main", TRACE_KSM_RMAP_ITEMS), 900);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* A knob store's answer is recorded; an unexpected one fails the run. */
START_TEST(test_set_event_answers)
{
	static const char text[] = "[global]\nscans = 3\npages_to_scan = 5000\n"
				   "sleep_millisecs = 10\n"
				   "[region buf]\npages = 100\nfill = same\nvalue = 5\n"
				   "[event limit]\nat = after-scan:2\naction = set\n"
				   "set = max_page_sharing=100\nexpect = %s\n";
	struct kb_knob_set before;
	struct kb_options opt;
	struct kb_result res;
	char buf[512], msg[1024];
	struct workload *wl;

	snprintf(buf, sizeof buf, text, "EBUSY");
	wl = parse(buf);
	run_checked(wl, NULL, &res);
	ck_assert_int_eq(res.trace->noutcomes, 1);
	ck_assert_str_eq(res.trace->outcome[0].event, "limit");
	ck_assert_int_eq(res.trace->outcome[0].scan, 2);
	ck_assert_int_eq(res.trace->outcome[0].error, EBUSY);
	kb_result_free(&res);
	wl_free(wl);

	snprintf(buf, sizeof buf, text, "ok");
	wl = parse(buf);
	save_knobs(&before);
	kb_options_init(&opt);
	ck_assert_int_eq(kb_run(wl, &opt, &res, msg, sizeof msg), KB_FAILED);
	ck_assert_msg(strstr(msg, "[event limit]") && strstr(msg, "answered EBUSY") &&
			      strstr(msg, "expects ok"),
		      "%s", msg);
	ck_assert_int_eq(res.trace->noutcomes, 1);
	assert_as_before(&before);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* run = 2 unmerges everything and resets full_scans, not the workload's count. */
START_TEST(test_run2_event)
{
	struct workload *wl = parse("[global]\nscans = 5\npages_to_scan = 5000\n"
				    "sleep_millisecs = 10\n"
				    "[region buf]\npages = 100\nfill = same\nvalue = 5\n"
				    "[event stop]\nat = after-scan:2\naction = run\nrun = 2\n"
				    "[event go]\nat = after-scan:2\naction = run\nrun = 1\n");
	struct kb_result res;

	run_checked(wl, NULL, &res);
	CHECK_ROWS(&res, { 2, TRACE_PAGES_SHARED, 1 }, { 2, TRACE_PAGES_SHARING, 99 },
		   { 3, TRACE_PAGES_SHARED, 0 }, { 3, TRACE_PAGES_SHARING, 0 },
		   { 3, TRACE_PAGES_VOLATILE, 100 }, { 3, TRACE_FULL_SCANS, 1 },
		   { 4, TRACE_PAGES_SHARED, 1 }, { 4, TRACE_PAGES_SHARING, 99 },
		   { 4, TRACE_FULL_SCANS, 2 }, { 5, TRACE_FULL_SCANS, 3 });
	ck_assert_int_eq(res.trace->noutcomes, 2);
	ck_assert_int_eq(res.trace->outcome[0].error, 0);
	ck_assert_int_eq(res.trace->outcome[1].error, 0);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* Writers choose pages from their own random stream, as the simulator does. */
START_TEST(test_writer_pages_reproducible)
{
	struct workload *wl = parse("[global]\nscans = 4\npages_to_scan = 5000\n"
				    "sleep_millisecs = 10\nseed = 1234\n"
				    "[region buf]\npages = 256\nfill = same\nvalue = 5\n"
				    "[writer noise]\nregion = buf\npages = random:16\n"
				    "offset = random:0-4088\nvalue = fresh\nwhen = every-scan\n"
				    "from = 1\nuntil = 3\n");
	bool written[256] = { false };
	struct wl_rng rng = wl_writer_rng(wl, 0);
	struct kb_options opt;
	struct kb_result res;
	size_t nwritten = 0;

	/* The writer's three applications, drawn here independently. */
	for (int application = 0; application < 3; application++) {
		struct wl_page_iter it;
		uint64_t page;

		wl_page_iter_init(&it, &wl->writers[0].pages, 256, &rng);
		while (wl_page_iter_next(&it, &page)) {
			wl_offset_pick(&wl->writers[0].offset, &rng);
			nwritten += !written[page];
			written[page] = true;
		}
	}
	kb_options_init(&opt);
	opt.pages = KB_PAGES_FINAL;
	run_checked(wl, &opt, &res);
	/* Fresh values never repeat: exactly the written pages stay unmerged. */
	for (size_t i = 0; i < res.npages; i++) {
		const struct trace_page *p = &res.pages[i];

		ck_assert_msg(!(p->flags & TRACE_PAGE_KSM) == written[p->page],
			      "page %" PRIu64 ": ksm %d, written %d", p->page,
			      !!(p->flags & TRACE_PAGE_KSM), written[p->page]);
	}
	ck_assert_int_eq(pages_with(&res, 4, TRACE_PAGE_KSM), 256 - nwritten);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* --per-batch: 1000 pages at pages_to_scan 100 are ten batches and the
 * empty batch that wraps, each with its row (the last one also ends the
 * scan, whose row follows with the same numbers). */
START_TEST(test_per_batch_rows)
{
	struct workload *wl = parse("[global]\nscans = 2\npages_to_scan = 100\n"
				    "sleep_millisecs = 5\n"
				    "[region buf]\npages = 1000\nfill = same\nvalue = 9\n");
	struct kb_options opt;
	struct kb_result res;
	const struct trace_row *prev = NULL;
	uint64_t batches = 0;

	kb_options_init(&opt);
	opt.per_batch = true;
	run_checked(wl, &opt, &res);
	for (size_t i = 0; i < res.trace->nrows; i++) {
		const struct trace_row *row = &res.trace->row[i];

		ck_assert(row->valid);
		if (row->kind != TRACE_ROW_BATCH) {
			if (row->scan > 0) /* a scan row repeats the batch row before it */
				ck_assert_int_eq(row->batch, prev->batch);
			continue;
		}
		batches++;
		ck_assert_int_eq(row->batch, batches);
		if (prev && prev->kind == TRACE_ROW_BATCH)
			ck_assert_int_eq(row->counter[TRACE_PAGES_SCANNED] -
						 prev->counter[TRACE_PAGES_SCANNED],
					 batches % 11 == 0 ? 0 : 100);
		prev = row;
	}
	ck_assert_int_eq(batches, 22);
	ck_assert_int_eq(scan_row(&res, 1)->batch, 11);
	ck_assert_int_eq(scan_row(&res, 2)->batch, 22);
	CHECK_ROWS(&res, { 2, TRACE_PAGES_SHARED, 4 }, { 2, TRACE_PAGES_SHARING, 996 });
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* A continuous writer runs in its own thread at its rate while ksmd scans. */
START_TEST(test_continuous_writer)
{
	/* ksmd sleeps 50 ms between scans, so that the runner, which reads a
	 * row while ksmd sleeps, has room even on a loaded machine. */
	struct workload *wl = parse("[global]\ntime = 1s\npages_to_scan = 5000\n"
				    "sleep_millisecs = 50\n"
				    "[region buf]\npages = 512\nfill = same\nvalue = 3\n"
				    "[writer churn]\nregion = buf\nvalue = fresh\nwhen = continuous\n"
				    "rate = 5000/s\n");
	struct kb_result res;
	const struct trace_row *last;

	run_checked(wl, NULL, &res);
	ck_assert_int_ge(res.trace->nrows, 3);
	last = &res.trace->row[res.trace->nrows - 1];
	/* 5000 writes cycle over 512 pages: fresh values leave little to share. */
	ck_assert_int_lt(last->counter[TRACE_PAGES_SHARING], 511);
	ck_assert_int_gt(last->counter[TRACE_PAGES_VOLATILE] + last->counter[TRACE_PAGES_UNSHARED],
			 0);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* Soft-dirty capture: the pages written in each scan interval, where the
 * kernel tracks soft-dirty bits; a skip with the reason where it does not. */
START_TEST(test_soft_dirty)
{
	struct workload *wl = parse("[global]\nscans = 4\npages_to_scan = 5000\n"
				    "sleep_millisecs = 10\n"
				    "[region u]\npages = 64\nfill = unique\n"
				    "[writer w]\nregion = u\npages = 0-9\nwhen = every-scan\n");
	struct kb_knob_set before;
	struct kb_options opt;
	struct kb_result res;
	char msg[512];
	int status;

	save_knobs(&before);
	kb_options_init(&opt);
	opt.soft_dirty = true;
	status = kb_run(wl, &opt, &res, msg, sizeof msg);
	if (status == KB_SKIPPED) {
		ck_assert_msg(strstr(msg, "CONFIG_MEM_SOFT_DIRTY is off"), "%s", msg);
		printf("# soft-dirty: %s\n", msg);
	} else {
		ck_assert_msg(status == KB_OK, "%s", msg);
		/* Written after scans 1-3: seen dirty at the end of scans 2-4. */
		for (uint64_t scan = 2; scan <= 4; scan++) {
			size_t n = 0;

			for (size_t i = 0; i < res.ndirty; i++)
				if (res.dirty[i].scan == scan) {
					ck_assert_uint_lt(res.dirty[i].page, 10);
					n++;
				}
			ck_assert_uint_eq(n, 10);
		}
	}
	assert_as_before(&before);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* The workload's timeout ends a run that cannot finish, with cleanup. */
START_TEST(test_timeout)
{
	struct workload *wl = parse("[global]\nscans = 1000000\ntimeout = 1s\n"
				    "pages_to_scan = 5000\nsleep_millisecs = 10\n"
				    "[region buf]\npages = 100\nfill = same\nvalue = 5\n");
	struct kb_knob_set before;
	struct kb_options opt;
	struct kb_result res;
	char msg[1024];
	double t0 = now_s();

	save_knobs(&before);
	kb_options_init(&opt);
	ck_assert_int_eq(kb_run(wl, &opt, &res, msg, sizeof msg), KB_FAILED);
	ck_assert_msg(strstr(msg, "timed out after 1 s"), "%s", msg);
	ck_assert_double_lt(now_s() - t0, 10);
	ck_assert_int_gt(res.trace->nrows, 5);
	assert_as_before(&before);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* ======================= safety ============================================== */

/* Knobs far from the defaults before a run are what they were after it. */
START_TEST(test_restores_changed_knobs)
{
	struct workload *wl = load("selftests/ksm_tests-M-t0.wl");
	struct kb_knob_set defaults, changed;
	struct kb_result res;

	save_knobs(&defaults);
	set_knob("sleep_millisecs", "37");
	set_knob("pages_to_scan", "123");
	set_knob("max_page_sharing", "300");
	set_knob("use_zero_pages", "1");
	set_knob("smart_scan", "0");
	set_knob("stable_node_chains_prune_millisecs", "1999");
	set_knob("advisor_max_cpu", "60");
	run_checked(wl, NULL, &res); /* asserts every knob came back */
	kb_result_free(&res);

	/* The advisor on: it owns pages_to_scan, which comes back through it. */
	set_knob("advisor_mode", "scan-time");
	save_knobs(&changed);
	ck_assert_str_eq(kb_knobs_get(&changed, "advisor_mode"), "scan-time");
	run_checked(wl, NULL, &res);
	kb_result_free(&res);
	wl_free(wl);
	ck_assert_int_eq(kb_knobs_restore_idle(&defaults, IDLE_WAIT_NS, NULL, 0), 0);
}
END_TEST

static bool lock_is_free(void)
{
	int fd = open(KB_LOCK_FILE, O_RDONLY);
	bool free_now;

	if (fd < 0)
		return true;
	free_now = flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd);
	return free_now;
}

/* Whether the machine is as in @before (assert_as_before without asserting),
 * the state file gone and the lock free. */
static bool is_restored(const struct kb_knob_set *before)
{
	struct kb_knob_set now;

	save_knobs(&now);
	for (size_t i = 0; i < before->n; i++) {
		const char *v = kb_knobs_get(&now, before->knob[i].name);

		if (!v || strcmp(v, before->knob[i].value) != 0)
			return false;
	}
	return counter("pages_shared") == 0 && counter("pages_sharing") == 0 &&
	       counter("ksm_zero_pages") == 0 && workload_processes() == 0 &&
	       access(KB_SAVED_FILE, F_OK) != 0 && lock_is_free();
}

/* The promise: whatever was killed, within 5 s everything is as before. */
static void assert_restored_within_5s(const struct kb_knob_set *before, double since)
{
	while (!is_restored(before) && now_s() - since < 5)
		usleep(10000);
	assert_as_before(before);
	ck_assert_msg(access(KB_SAVED_FILE, F_OK) != 0, "%s is still there", KB_SAVED_FILE);
	ck_assert_msg(lock_is_free(), "the lock is still held");
	ck_assert_msg(now_s() - since < 5, "restored only after %.1f s", now_s() - since);
}

/* The last line of the sentinels' rescue log, or "". */
static void last_rescue(char *buf, size_t len)
{
	char line[2048];
	FILE *f = fopen(KB_RESCUE_LOG, "r");

	buf[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof line, f))
		snprintf(buf, len, "%s", line);
	fclose(f);
}

/* Interrupting or killing a run, whatever is hit, leaves knobs as they
 * were and nothing merged, within 5 s. */
enum victim { V_GUARDIAN, V_GUARDIAN_GROUP, V_SENTINEL, V_RUNNER, V_RUNNER_GROUP, V_WORKER };

static const struct interruption {
	enum victim victim;
	int signal;
	int status;       /* ksmkit's exit status (128 + signal: it was killed) */
	const char *says; /* on stderr; NULL when ksmkit itself was killed */
} interruptions[] = {
	{ V_RUNNER, SIGKILL, 1, "was killed by SIGKILL" },
	{ V_RUNNER, SIGTERM, 1, "interrupted by a signal" },
	{ V_GUARDIAN, SIGINT, 1, "interrupted by a signal" },
	{ V_GUARDIAN, SIGTERM, 1, "interrupted by a signal" },
	{ V_GUARDIAN, SIGHUP, 1, "interrupted by a signal" },
	{ V_GUARDIAN, SIGKILL, 128 + SIGKILL, NULL },
	{ V_GUARDIAN_GROUP, SIGKILL, 128 + SIGKILL, NULL },
	{ V_SENTINEL, SIGKILL, 1, "the sentinel (pid" },
	{ V_RUNNER_GROUP, SIGKILL, 1, "was killed by SIGKILL" },
	{ V_WORKER, SIGKILL, 1, "workload process main (pid" },
};

static void hit(enum victim v, int sig, pid_t guardian, pid_t runner, pid_t sentinel)
{
	switch (v) {
	case V_GUARDIAN:
		kill(guardian, sig);
		break;
	case V_GUARDIAN_GROUP:
		kill(-guardian, sig);
		break;
	case V_SENTINEL:
		kill(sentinel, sig);
		break;
	case V_RUNNER:
		kill(runner, sig);
		break;
	case V_RUNNER_GROUP:
		kill(-runner, sig);
		break;
	case V_WORKER:
		kill(worker_of(runner), sig);
		break;
	}
}

START_TEST(test_interrupted_run)
{
	const struct interruption *in = &interruptions[_i];
	char *path = temp_workload(long_workload), rescue[2048], who[64];
	const char *args[] = { "ksmkit", "run", "-q", path, NULL };
	struct kb_knob_set before;
	pid_t runner, sentinel;
	struct cli c;
	double t_hit;

	save_knobs(&before);
	cli_start(&c, false, args);
	runner = runner_of(c.pid);
	sentinel = holder_of(c.pid, "sentinel");
	wait_until_merged();
	ck_assert_int_eq(counter("max_page_sharing"), 64);
	hit(in->victim, in->signal, c.pid, runner, sentinel);
	t_hit = now_s();
	ck_assert_int_eq(cli_finish(&c), in->status);
	if (in->says)
		ck_assert_msg(strstr(c.err, in->says), "stderr: %s", c.err);
	if (in->victim == V_RUNNER && in->signal == SIGKILL) {
		snprintf(who, sizeof who, "the runner (pid %d)", (int)runner);
		ck_assert_msg(strstr(c.err, who), "stderr: %s", c.err);
	}
	assert_restored_within_5s(&before, t_hit);
	if (!in->says) { /* the sentinel did it, and logged it */
		snprintf(who, sizeof who, "sentinel %d: the guardian (pid %d) died", (int)sentinel,
			 (int)c.pid);
		last_rescue(rescue, sizeof rescue);
		ck_assert_msg(strstr(rescue, who) && strstr(rescue, "max_page_sharing 64 -> "),
			      "last rescue: %s", rescue);
	}
	unlink(path);
	free(path);
}
END_TEST

/* A snapshot of the machine's knobs never takes a running backend's
 * workload knobs for them: it waits for the run, or fails. */
START_TEST(test_idle_snapshot_waits_for_a_run)
{
	char *path = temp_workload(long_workload), msg[256];
	const char *args[] = { "ksmkit", "run", "-q", path, NULL };
	struct kb_knob_set before, during;
	struct cli c;

	save_knobs(&before);
	cli_start(&c, false, args);
	runner_of(c.pid);
	wait_until_merged();
	ck_assert_int_eq(counter("max_page_sharing"), 64);
	ck_assert_int_eq(kb_knobs_save_idle(&during, UINT64_C(300000000), msg, sizeof msg), -1);
	ck_assert_msg(strstr(msg, "another ksmkit backend"), "%s", msg);
	kill(c.pid, SIGINT);
	ck_assert_int_eq(cli_finish(&c), 1);
	save_knobs(&during);
	ck_assert_str_eq(kb_knobs_get(&during, "max_page_sharing"),
			 kb_knobs_get(&before, "max_page_sharing"));
	assert_as_before(&before);
	unlink(path);
	free(path);
}
END_TEST

static void collect_note(const char *note, void *arg)
{
	char *notes = arg;

	strncat(notes, note, 4095 - strlen(notes));
	strncat(notes, "\n", 4095 - strlen(notes));
}

/*
 * Every process of a run at once (stopped first, so none can fork or act,
 * then SIGKILLed): nothing is left to restore, so the knobs stay changed,
 * the state file says so, and the lock is free once they are gone.
 */
static void kill_whole_run(const char *path)
{
	const char *args[] = { "ksmkit", "run", "-q", path, NULL };
	pid_t runner, sentinel, worker;
	struct cli c;

	cli_start(&c, false, args);
	runner = runner_of(c.pid);
	sentinel = holder_of(c.pid, "sentinel");
	wait_until_merged();
	worker = worker_of(runner);
	kill(c.pid, SIGSTOP);
	kill(sentinel, SIGSTOP);
	kill(-runner, SIGSTOP);
	kill(c.pid, SIGKILL);
	kill(sentinel, SIGKILL);
	kill(-runner, SIGKILL);
	ck_assert_int_eq(cli_finish(&c), 128 + SIGKILL);
	for (double end = now_s() + 20;
	     now_s() < end && !(lock_is_free() && !workload_processes() && kill(worker, 0) != 0);)
		usleep(10000);
	ck_assert(lock_is_free());
	ck_assert_int_eq(workload_processes(), 0);
	ck_assert_int_eq(access(KB_SAVED_FILE, F_OK), 0);
	ck_assert_int_eq(counter("max_page_sharing"), 64); /* not restored */
}

/* Killed whole: the next run restores from the state file, and says so. */
START_TEST(test_killed_whole_next_run_restores)
{
	char *path = temp_workload(long_workload), notes[4096] = "";
	struct workload *wl = load("selftests/ksm_tests-M-t0.wl");
	struct kb_knob_set before;
	struct kb_options opt;
	struct kb_result res;

	save_knobs(&before);
	kill_whole_run(path);
	kb_options_init(&opt);
	opt.note = collect_note;
	opt.note_arg = notes;
	run_ok(wl, &opt, &res);
	ck_assert_msg(strstr(notes, "restored the KSM knobs saved by an earlier run") &&
			      strstr(notes, "max_page_sharing 64 -> "),
		      "%s", notes);
	CHECK_ROWS(&res, { 2, TRACE_PAGES_SHARED, 1 }, { 2, TRACE_PAGES_SHARING, 9 });
	assert_as_before(&before);
	ck_assert_int_ne(access(KB_SAVED_FILE, F_OK), 0);
	kb_result_free(&res);
	wl_free(wl);
	unlink(path);
	free(path);
}
END_TEST

/* Killed whole: `ksmkit restore` puts the knobs back, naming each; then
 * there is nothing more to do, and it says that, with exit 0 both times. */
START_TEST(test_restore_command)
{
	const char *args[] = { "ksmkit", "restore", NULL };
	const char *extra[] = { "ksmkit", "restore", "now", NULL };
	char *path = temp_workload(long_workload);
	struct kb_knob_set before;
	struct cli c;

	save_knobs(&before);
	kill_whole_run(path);
	cli_start_capturing(&c, false, true, args);
	ck_assert_int_eq(cli_finish(&c), 0);
	ck_assert_msg(strstr(c.out, "restored the knobs saved by run") &&
			      strstr(c.out, "max_page_sharing") && strstr(c.out, "64 -> ") &&
			      strstr(c.out, "smart_scan") && strstr(c.out, "0 -> 1"),
		      "stdout: %s", c.out);
	assert_as_before(&before);
	ck_assert_int_ne(access(KB_SAVED_FILE, F_OK), 0);

	cli_start_capturing(&c, false, true, args);
	ck_assert_int_eq(cli_finish(&c), 0);
	ck_assert_msg(strstr(c.out, "nothing to restore"), "stdout: %s", c.out);
	cli_start(&c, false, extra);
	ck_assert_int_eq(cli_finish(&c), 2);
	ck_assert_msg(strstr(c.err, "unexpected argument 'now'"), "stderr: %s", c.err);
	assert_as_before(&before);
	unlink(path);
	free(path);
}
END_TEST

/* ======================= refusals ============================================ */

/* A process of someone else's with mergeable memory: refused, named; --force runs. */
START_TEST(test_refuses_other_ksm_user)
{
	const char *args[] = { "ksmkit", "run", SRCDIR "/workloads/selftests/ksm_tests-M-t0.wl", NULL };
	const char *forced[] = { "ksmkit", "run", "--force",
				 SRCDIR "/workloads/selftests/ksm_tests-M-t0.wl", NULL };
	struct workload *wl = load("selftests/ksm_tests-M-t0.wl");
	struct kb_knob_set before;
	struct kb_result res;
	char name[64], ready;
	int sync[2];
	struct cli c;
	pid_t other;

	save_knobs(&before);
	ck_assert_int_eq(pipe(sync), 0);
	other = fork();
	ck_assert_int_ge(other, 0);
	if (other == 0) {
		char *m = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		for (int i = 0; i < 4; i++)
			memset(m + i * 4096, 'a' + i, 4096); /* nothing to merge */
		if (madvise(m, 4 * 4096, MADV_MERGEABLE) != 0 || write(sync[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ck_assert_int_eq(read(sync[0], &ready, 1), 1);
	cli_start(&c, false, args);
	ck_assert_int_eq(cli_finish(&c), 1);
	snprintf(name, sizeof name, "pid %d", (int)other);
	ck_assert_msg(strstr(c.err, "another process has mergeable memory") && strstr(c.err, name) &&
			      strstr(c.err, "--force"),
		      "stderr: %s", c.err);
	assert_as_before(&before);

	cli_start(&c, false, forced);
	ck_assert_int_eq(cli_finish(&c), 0);
	ck_assert_msg(strstr(c.err, "running anyway (--force)"), "stderr: %s", c.err);

	kill(other, SIGKILL);
	waitpid(other, NULL, 0);
	close(sync[0]);
	close(sync[1]);
	/* Its leftover items go with the next run's cleanup. */
	run_checked(wl, NULL, &res);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

START_TEST(test_refuses_too_much_memory)
{
	struct workload *wl = parse("[global]\nscans = 2\n[region huge]\nsize = 4t\n"
				    "fill = same\nvalue = 1\n");
	struct kb_knob_set before;
	struct kb_options opt;
	struct kb_result res;
	char msg[512];

	save_knobs(&before);
	kb_options_init(&opt);
	ck_assert_int_eq(kb_run(wl, &opt, &res, msg, sizeof msg), KB_FAILED);
	ck_assert_msg(strstr(msg, "needs 4.0 TiB") && strstr(msg, "80% of MemAvailable"), "%s", msg);
	ck_assert_ptr_null(res.trace);
	assert_as_before(&before);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/*
 * A thp = always region the kernel backs with small pages is refused before
 * the first scan, naming the region and the first range that is not huge.
 * PR_SET_THP_DISABLE (inherited by the run's processes; this test is a
 * process of its own) denies huge pages without touching the machine's
 * THP settings.
 */
START_TEST(test_refuses_thp_region_without_huge_pages)
{
	struct workload *wl;
	struct kb_knob_set before;
	struct kb_options opt;
	struct kb_result res;
	char msg[1024];

	if (!thp_available("thp = always refusal"))
		return;
	wl = parse("[global]\nscans = 2\n[region buf]\nsize = 4m\nfill = same\nvalue = 1\n"
		   "thp = always\n");
	save_knobs(&before);
	ck_assert_int_eq(prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0), 0);
	kb_options_init(&opt);
	ck_assert_int_eq(kb_run(wl, &opt, &res, msg, sizeof msg), KB_FAILED);
	ck_assert_msg(strstr(msg, "inline.wl:3: [region buf] thp = always: only 0 of 2 2 MiB "
				  "ranges are huge pages after setup (the first that is not: "
				  "pages 0-511; /sys/kernel/mm/transparent_hugepage/enabled is ") &&
			      strstr(msg, "refusing to measure something else"),
		      "%s", msg);
	assert_as_before(&before);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* Two backends at once: the second waits for the first, then runs. */
START_TEST(test_second_backend_waits)
{
	char *path = temp_workload("[global]\nscans = 80\npages_to_scan = 5000\n"
				   "sleep_millisecs = 10\n"
				   "[region buf]\npages = 200\nfill = same\nvalue = 8\n");
	const char *first_args[] = { "ksmkit", "run", "-q", path, NULL };
	const char *second_args[] = { "ksmkit", "run", "-q", SRCDIR "/workloads/selftests/ksm_tests-M-t0.wl",
				      NULL };
	struct kb_knob_set before;
	struct cli first, second;
	int ws;

	save_knobs(&before);
	cli_start(&first, false, first_args);
	runner_of(first.pid);
	cli_start(&second, false, second_args);
	ck_assert_int_eq(cli_finish(&second), 0);
	ck_assert_msg(strstr(second.err, "waiting for another ksmkit backend (guardian"),
		      "stderr: %s", second.err);
	/* The first had finished (and restored) before the second could start. */
	ck_assert_int_eq(waitpid(first.pid, &ws, WNOHANG), first.pid);
	ck_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	close(first.err_fd);
	assert_as_before(&before);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_skips_when_not_root)
{
	const char *args[] = { "ksmkit", "run", SRCDIR "/workloads/selftests/ksm_tests-M-t0.wl", NULL };
	struct cli c;

	cli_start(&c, true, args);
	ck_assert_int_eq(cli_finish(&c), 77);
	ck_assert_msg(strstr(c.err, "needs root") && strstr(c.err, "skipped"), "stderr: %s", c.err);
}
END_TEST

START_TEST(test_bad_measurement)
{
	struct workload *wl = load("selftests/ksm_tests-M-t0.wl");
	struct kb_options opt;
	struct kb_result res;
	char msg[512];

	kb_options_init(&opt);
	opt.measure = KB_MEASURE_COW;
	ck_assert_int_eq(kb_run(wl, &opt, &res, msg, sizeof msg), KB_BAD_INPUT);
	ck_assert_msg(strstr(msg, "no [event] with action = write"), "%s", msg);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

/* ======================= the suites ========================================== */

/* ---- live runs: ksmkit run --cmd ---------------------------------------------- */

#define LIVE_FILL BUILDDIR "/tests/live-fill"

/* The trace ksmkit printed as CSV in @c. */
static struct trace *read_cli_trace(struct cli *c)
{
	FILE *in = fmemopen(c->out, strlen(c->out), "r");
	struct trace *t = NULL;
	char err[256];

	ck_assert_ptr_nonnull(in);
	ck_assert_msg(trace_read_csv(in, "run --cmd", &t, err, sizeof err) == 0, "%s\n%s", err,
		      c->out);
	fclose(in);
	return t;
}

/*
 * 2000 pages of 4 values, 500 copies each: with max_page_sharing 256 each
 * value needs a chain of two KSM pages, so 8 pages shared and 1992 sharing,
 * 4 chains of 2 dups, and the command's own ksm_merging_pages 2000; its
 * own few pages (stack, libc's data) are each unique.
 */
START_TEST(test_live_cmd_merges)
{
	char cap[] = "/tmp/ksmkit-check-cap-XXXXXX";
	const char *args[] = { "ksmkit", "run", "--cmd", "--scans", "8", "--pages-to-scan",
			       "5000", "--sleep-millisecs", "10", "--csv", "--capture", cap, "--",
			       LIVE_FILL, "2000", "4", NULL };
	struct kb_knob_set before;
	const struct trace_row *last;
	struct trace *t;
	struct cli c;
	int fd = mkstemp(cap);

	ck_assert_int_ge(fd, 0);
	close(fd);
	save_knobs(&before);
	cli_start_capturing(&c, false, true, args);
	ck_assert_msg(cli_finish(&c) == 0, "exit %d: %s", c.status, c.err);
	t = read_cli_trace(&c);
	ck_assert_int_eq(t->nrows, 9);
	ck_assert_int_eq(t->nprocs, 1);
	last = &t->row[t->nrows - 1];
	ck_assert_int_eq(last->scan, 8);
	ck_assert_int_eq(last->counter[TRACE_PAGES_SHARED], 8);
	ck_assert_int_eq(last->counter[TRACE_PAGES_SHARING], 1992);
	ck_assert_int_eq(last->counter[TRACE_STABLE_NODE_CHAINS], 4);
	ck_assert_int_eq(last->counter[TRACE_STABLE_NODE_DUPS], 8);
	ck_assert(last->proc[0].present);
	ck_assert_int_eq(last->proc[0].field[TRACE_KSM_MERGING_PAGES], 2000);
	ck_assert_int_eq(last->proc[0].field[TRACE_KSM_MERGE_ANY], 1);
	ck_assert_int_eq(t->row[0].counter[TRACE_PAGES_SHARING], 0);
	ck_assert_msg(strstr(c.err, "ended: 8 full scans done"), "stderr: %s", c.err);
	ck_assert_msg(strstr(c.err, "snapshots in "), "stderr: %s", c.err);
	trace_free(t);
	assert_as_before(&before);
	unlink(cap);
}
END_TEST

/* The command's exit ends the run, and is said. */
START_TEST(test_live_cmd_exit_ends_run)
{
	const char *args[] = { "ksmkit", "run", "--cmd", "--pages-to-scan", "5000", "--", LIVE_FILL,
			       "300", "3", "1", NULL };
	struct kb_knob_set before;
	struct cli c;

	save_knobs(&before);
	cli_start_capturing(&c, false, true, args);
	ck_assert_msg(cli_finish(&c) == 0, "exit %d: %s", c.status, c.err);
	ck_assert_msg(strstr(c.out, "# ended: " LIVE_FILL " exited with status 0"), "out: %s",
		      c.out);
	assert_as_before(&before);
}
END_TEST

/* A file exec refuses (ENOEXEC) is bad input, found by the runner: exit 2,
 * knobs restored. */
START_TEST(test_live_cmd_cannot_exec)
{
	char path[] = "/tmp/ksmkit-check-noexec-XXXXXX";
	const char *args[] = { "ksmkit", "run", "--cmd", "--pages-to-scan", "5000", "--", path,
			       NULL };
	struct kb_knob_set before;
	struct cli c;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "\x7f\x45\x4c\x46garbage", 11), 11);
	close(fd);
	ck_assert_int_eq(chmod(path, 0755), 0);
	save_knobs(&before);
	cli_start(&c, false, args);
	ck_assert_msg(cli_finish(&c) == 2, "exit %d: %s", c.status, c.err);
	ck_assert_msg(strstr(c.err, "cannot run ") && strstr(c.err, "Exec format error"),
		      "stderr: %s", c.err);
	assert_as_before(&before);
	unlink(path);
}
END_TEST

/* The live-fill process of the run (the suite runs one at a time). */
static pid_t live_fill_pid(void)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;

	ck_assert_ptr_nonnull(proc);
	while (!found && (de = readdir(proc)) != NULL) {
		char path[300], comm[32] = "";
		ssize_t n;
		int fd;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/comm", de->d_name);
		if ((fd = open(path, O_RDONLY)) < 0)
			continue;
		n = read(fd, comm, sizeof comm - 1);
		close(fd);
		if (n >= 9 && strncmp(comm, "live-fill", 9) == 0)
			found = (pid_t)atoi(de->d_name);
	}
	closedir(proc);
	ck_assert_msg(found, "no live-fill process");
	return found;
}

/* Whatever is hit, the command is gone and KSM as it was within 5 s. */
static const struct interruption live_interruptions[] = {
	{ V_GUARDIAN, SIGTERM, 1, "interrupted by a signal" },
	{ V_GUARDIAN, SIGINT, 1, "interrupted by a signal" },
	{ V_GUARDIAN, SIGKILL, 128 + SIGKILL, NULL },
	{ V_GUARDIAN_GROUP, SIGKILL, 128 + SIGKILL, NULL },
	{ V_SENTINEL, SIGKILL, 1, "the sentinel (pid" },
	{ V_RUNNER, SIGKILL, 1, "was killed by SIGKILL" },
	{ V_WORKER, SIGKILL, 0, "was killed by signal 9" }, /* the command: its end */
};

START_TEST(test_live_cmd_interrupted)
{
	const struct interruption *in = &live_interruptions[_i];
	char out[] = "/tmp/ksmkit-check-out-XXXXXX", table[65536] = "";
	const char *args[] = { "ksmkit", "run", "--cmd", "-q", "-o", out, "--pages-to-scan", "5000",
			       "--sleep-millisecs", "10", "--knob", "max_page_sharing=64", "--",
			       LIVE_FILL, "4000", "2", NULL };
	struct kb_knob_set before;
	pid_t runner, sentinel, command;
	struct cli c;
	double t_hit;
	int fd = mkstemp(out);

	ck_assert_int_ge(fd, 0);
	save_knobs(&before);
	cli_start(&c, false, args);
	runner = runner_of(c.pid);
	sentinel = holder_of(c.pid, "sentinel");
	wait_until_merged();
	command = live_fill_pid();
	ck_assert_int_eq(counter("max_page_sharing"), 64);
	ck_assert_int_ne(getpgid(command), runner); /* its own group */
	if (in->victim == V_WORKER)
		kill(command, in->signal);
	else
		hit(in->victim, in->signal, c.pid, runner, sentinel);
	t_hit = now_s();
	ck_assert_int_eq(cli_finish(&c), in->status);
	read_all_of(fd, table, sizeof table);
	if (in->says)
		ck_assert_msg(strstr(c.err, in->says) || strstr(table, in->says), "stderr: %s",
			      c.err);
	assert_restored_within_5s(&before, t_hit);
	ck_assert_int_eq(kill(command, 0), -1);
	unlink(out);
}
END_TEST

static TCase *tcase(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, 180);
	suite_add_tcase(s, tc);
	return tc;
}

static Suite *backend_suite(void)
{
	Suite *s = suite_create("backend");
	TCase *tc;

	tc = tcase(s, "ksm_tests");
	tcase_add_test(tc, test_merge_M);
	tcase_add_test(tc, test_merge_prctl);
	tcase_add_test(tc, test_unmerge_U);
	tcase_add_test(tc, test_zero_pages_0);
	tcase_add_test(tc, test_zero_pages_1);
	tcase_add_test(tc, test_numa_N_skips_here);
	tcase_add_test(tc, test_merge_time_P);
	tcase_add_test(tc, test_cow_C);
	tcase_add_test(tc, test_unmerge_time_D);
	tcase_add_test(tc, test_thp_H);
	tcase_add_test(tc, test_thp_region_is_huge_at_setup);
	tcase_add_test(tc, test_functional_unmerge);
	tcase_add_test(tc, test_functional_unmerge_zero_pages);
	tcase_add_test(tc, test_functional_discard);
	tcase_add_test(tc, test_functional_prot_none);
	tcase_add_test(tc, test_functional_uffd_wp);
	tcase_add_test(tc, test_functional_prctl_exec);
	tcase_add_test(tc, test_functional_prctl);

	tc = tcase(s, "lockstep");
	tcase_add_test(tc, test_fork);
	tcase_add_test(tc, test_registration_order);
	tcase_add_test(tc, test_unmap_and_unmerge_events);
	tcase_add_test(tc, test_set_event_answers);
	tcase_add_test(tc, test_run2_event);
	tcase_add_test(tc, test_writer_pages_reproducible);
	tcase_add_test(tc, test_per_batch_rows);
	tcase_add_test(tc, test_continuous_writer);
	tcase_add_test(tc, test_soft_dirty);
	tcase_add_test(tc, test_timeout);

	tc = tcase(s, "safety");
	tcase_add_test(tc, test_restores_changed_knobs);
	tcase_add_loop_test(tc, test_interrupted_run, 0,
			    (int)(sizeof interruptions / sizeof interruptions[0]));
	tcase_add_test(tc, test_idle_snapshot_waits_for_a_run);
	tcase_add_test(tc, test_killed_whole_next_run_restores);
	tcase_add_test(tc, test_restore_command);

	tc = tcase(s, "live");
	tcase_add_test(tc, test_live_cmd_merges);
	tcase_add_test(tc, test_live_cmd_exit_ends_run);
	tcase_add_test(tc, test_live_cmd_cannot_exec);
	tcase_add_loop_test(tc, test_live_cmd_interrupted, 0,
			    (int)(sizeof live_interruptions / sizeof live_interruptions[0]));

	tc = tcase(s, "refusals");
	tcase_add_test(tc, test_refuses_other_ksm_user);
	tcase_add_test(tc, test_refuses_too_much_memory);
	tcase_add_test(tc, test_refuses_thp_region_without_huge_pages);
	tcase_add_test(tc, test_second_backend_waits);
	tcase_add_test(tc, test_skips_when_not_root);
	tcase_add_test(tc, test_bad_measurement);
	return s;
}

/* Why this machine cannot run the suite, or NULL. */
static const char *machine_skip_reason(void)
{
	if (geteuid() != 0)
		return "needs root (KSM's knobs are root's)";
	if (access(KSM "run", F_OK) != 0)
		return "this kernel has no KSM (" KSM " is missing)";
	return NULL;
}

/* Why the suite would disturb someone, or NULL; asked holding the suites'
 * lock, so another kernel suite's pages are not mistaken for someone else's. */
static const char *others_skip_reason(void)
{
	static char others[256];

	if (counter("pages_shared") || counter("pages_sharing") || counter("ksm_zero_pages")) {
		snprintf(others, sizeof others, "someone else's pages are merged (pages_shared %" PRId64
						"): the tests would disturb them",
			 counter("pages_shared"));
		return others;
	}
	return NULL;
}

int main(void)
{
	const char *why = machine_skip_reason();
	struct kb_knob_set found;
	char msg[512];
	SRunner *sr;
	int failed;

	if (why) {
		printf("SKIP: check_backend: %s\n", why);
		return 77;
	}
	if (lock_kernel_suites() < 0) {
		printf("check_backend: cannot lock %s/check-suites.lock\n", KB_STATE_DIR);
		return 99;
	}
	if ((why = others_skip_reason())) {
		printf("SKIP: check_backend: %s\n", why);
		return 77;
	}
	if (kb_knobs_save_idle(&found, IDLE_WAIT_NS, msg, sizeof msg) != 0) {
		printf("check_backend: %s\n", msg);
		return 99;
	}
	sr = srunner_create(backend_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	/* Whatever a failed test left behind, leave the knobs as found. */
	if (kb_knobs_restore_idle(&found, IDLE_WAIT_NS, msg, sizeof msg) != 0) {
		printf("check_backend: could not restore the knobs: %s\n", msg);
		failed++;
	}
	return failed ? 1 : 0;
}
