/*
 * cmd_selftest.c - `ksmkit selftest`: the kernel's own KSM selftests
 * (workloads/selftests/, docs/selftests.md), or the workloads named, each
 * run on the simulator in its workload's kernel semantics and on a real
 * kernel (this machine's, or with --guest every one of them in one qemu
 * guest), reported in TAP 13 as kselftest reports: a plan, one line per
 * test and engine, skips with their reasons, a totals line. A kernel test
 * passes when the run's [expect] sections hold there and the run matches
 * the simulator following the kernel that ran, scan by scan and page by
 * page (compare/xval.h); the first difference is the failure's reason. A
 * kernel that lacks what a test needs (prctl, uffd-wp, a NUMA node, THP, a
 * fact the workload requires) is a skip, never a failure. For ksm_tests'
 * timed modes (-P, -H, -D, -C) a kernel run here also gives the figure
 * ksm_tests prints, beside ksm_tests' own when that program is on PATH
 * (run right after, under the backend's lock, its knobs restored): a
 * diagnostic, never a verdict. This file owns the order of the runs, the
 * verdicts and the TAP text; the runs themselves are the pipeline's.
 *
 * Exit status: 0 every test passed or was skipped, 1 one failed or could
 * not run, 2 bad usage or a bad workload (nothing runs then).
 */
#include "config.h"
#include "cli.h"
#include "cli_args.h"
#include "cli_sim.h"
#include "expect.h"
#include "xval.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * Runs a workload gets when its runner was late (as check_guest): boots of
 * a guest, or runs on this kernel (xval_run's attempts).
 */
#define GUEST_ATTEMPTS 3
#define HOST_ATTEMPTS 3

enum tap_result { TAP_PASS, TAP_FAIL, TAP_SKIP, TAP_ERROR };

/* One TAP line: its verdict and why (a skip's or a failure's reason). */
struct tap_line {
	enum tap_result result;
	char reason[1024];
	char figure[512];       /* a diagnostic after the line (ksm_tests' figure), or "" */
};

struct selftest {
	const char *guest;      /* --guest SPEC, or NULL */
	bool sim_only, force, quiet;
	char ksm_tests[4096];   /* ksm_tests found on PATH, or "" */
	unsigned number;        /* of the last TAP line printed */
	unsigned count[4];      /* per enum tap_result */
};

/* One workload of the set and what became of it. */
struct test {
	struct workload *wl;
	char name[256];         /* the upstream test, else the file's name */
	struct tap_line sim, kernel;
};

/* --- TAP ---------------------------------------------------------------------- */

static void tap_print(struct selftest *st, const char *engine, const char *name,
		      const struct tap_line *l)
{
	static const char *const words[] = { "ok", "not ok", "ok", "not ok" };

	st->number++;
	st->count[l->result]++;
	printf("%s %u %s: %s", words[l->result], st->number, engine, name);
	if (l->result == TAP_SKIP)
		printf(" # SKIP %s", l->reason);
	else if (l->result == TAP_ERROR)
		printf(" # error: %s", l->reason);
	else if (l->result == TAP_FAIL)
		printf(" # %s", l->reason);
	putchar('\n');
	if (l->figure[0])
		printf("# %s\n", l->figure);
	fflush(stdout);
}

static void set_line(struct tap_line *l, enum tap_result r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_line(struct tap_line *l, enum tap_result r, const char *fmt, ...)
{
	va_list ap;

	l->result = r;
	va_start(ap, fmt);
	vsnprintf(l->reason, sizeof(l->reason), fmt, ap);
	va_end(ap);
}

static void progress(const struct selftest *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void progress(const struct selftest *st, const char *fmt, ...)
{
	va_list ap;

	if (st->quiet)
		return;
	fputs("ksmkit: selftest: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* --- verdicts ------------------------------------------------------------------ */

/* The first failed check of @rep, as "[expect NAME] after scan 2: CHECK: it is V". */
static void first_failure(const struct workload *wl, const struct expect_report *rep, char *buf,
			  size_t len)
{
	for (size_t e = 0; e < rep->n; e++) {
		const struct expect_result *r = &rep->result[e];

		for (size_t i = 0; i < r->nchecks; i++) {
			char text[600];

			if (r->check[i].verdict != EXPECT_FAIL)
				continue;
			snprintf(buf, len, "[expect %s] %s", r->ex->name,
				 expect_check_text(wl, r, i, text, sizeof(text)));
			return;
		}
	}
	snprintf(buf, len, "an expectation fails");
}

/* The first check that does not apply, for a skip's reason. */
static const char *first_not_applicable(const struct expect_report *rep)
{
	for (size_t e = 0; e < rep->n; e++)
		for (size_t i = 0; i < rep->result[e].nchecks; i++)
			if (rep->result[e].check[i].verdict == EXPECT_NOT_APPLICABLE)
				return rep->result[e].check[i].why;
	return "no expectation applies";
}

/*
 * The verdict of @wl's expectations on @side: fail (the first failed check),
 * skip (the kernel lacks a required fact, or no check applies), or pass.
 */
static void judge_expectations(const struct workload *wl, const struct xval_side *side,
			       struct tap_line *l)
{
	struct expect_report rep;

	if (expect_evaluate(wl, side->trace, side->pages, side->npages, &rep) != 0) {
		set_line(l, TAP_ERROR, "out of memory checking the expectations");
		return;
	}
	if (rep.failed) {
		l->result = TAP_FAIL;
		first_failure(wl, &rep, l->reason, sizeof(l->reason));
	} else if (rep.unmet[0]) {
		set_line(l, TAP_SKIP, "%s", rep.unmet);
	} else if (rep.n > 0 && rep.passed == 0) {
		set_line(l, TAP_SKIP, "%s", first_not_applicable(&rep));
	} else {
		set_line(l, TAP_PASS, "%zu of %zu expectations hold", rep.passed, rep.n);
	}
	expect_report_free(&rep);
}

/* The simulator in the workload's own kernel semantics. */
static void sim_test(struct test *t)
{
	struct xval_side side;
	char err[1024];

	if (xval_run_sim(t->wl, t->wl->kernel, expect_needs_pages(t->wl), NULL, &side, err,
			 sizeof(err)) != 0) {
		set_line(&t->sim, TAP_ERROR, "simulator: %s", err);
	} else {
		judge_expectations(t->wl, &side, &t->sim);
	}
	xval_side_free(&side);
}

/* "scan 3 pages_sharing: sim 9, kernel 8", the first row the two sides differ in. */
static void first_difference(const struct xval_result *res, char *buf, size_t len)
{
	const struct cmp_report *rep = &res->report;

	if (rep->ndiffs == 0) {
		snprintf(buf, len, "the traces differ");
		return;
	}
	snprintf(buf, len, "differs from the simulator (as kernel %s) at scan %llu: %s: sim %lld, "
		 "kernel %lld%s%s%s", wl_kernel_name(res->semantics),
		 (unsigned long long)rep->diff[0].scan, rep->diff[0].what,
		 (long long)rep->diff[0].a, (long long)rep->diff[0].b,
		 rep->diff[0].detail[0] ? " (" : "", rep->diff[0].detail,
		 rep->diff[0].detail[0] ? ")" : "");
}

/* A kernel test's verdict from the pipeline's result. */
static void kernel_verdict(const struct workload *wl, const struct xval_result *res,
			   struct tap_line *l)
{
	switch (res->verdict) {
	case XVAL_SIM_ONLY:
		set_line(l, TAP_SKIP, "%s", res->kernel_message);
		return;
	case XVAL_FAILED:
		if (res->failed == XVAL_STEP_KERNEL)
			set_line(l, TAP_ERROR, "kernel: %s", res->kernel_message);
		else if (res->failed == XVAL_STEP_COMPARE)
			set_line(l, TAP_ERROR, "out of memory, or the traces name different "
			 "processes");
		else
			set_line(l, TAP_ERROR, "%s", res->why);
		return;
	case XVAL_DIFFERS:
		l->result = TAP_FAIL;
		first_difference(res, l->reason, sizeof(l->reason));
		return;
	case XVAL_MATCH:
	case XVAL_WITHIN:
		judge_expectations(wl, &res->kernel, l);
		/* what was checked all the same */
		if (l->result == TAP_SKIP)
			strncat(l->reason, "; the run matches the simulator",
				sizeof(l->reason) - strlen(l->reason) - 1);
		return;
	}
}

/* --- ksm_tests' figures --------------------------------------------------------- */

/* The timed modes of ksm_tests, by their flag, and what the backend measures for each. */
static const struct timed_mode {
	const char *flag;
	enum kb_measure measure;
} timed_modes[] = {
	{ "-P", KB_MEASURE_MERGE },
	{ "-H", KB_MEASURE_THP },
	{ "-D", KB_MEASURE_UNMERGE },
	{ "-C", KB_MEASURE_COW },
};

#define MAX_UPSTREAM_ARGS 16

/*
 * @wl's upstream command as an argv ("ksm_tests", "-P", ...) in @words
 * (split into @buf), when it is a ksm_tests run; its number of words, else 0.
 */
static int ksm_tests_argv(const struct workload *wl, char *buf, size_t len, char **words)
{
	int n = 0;
	char *save = NULL;

	if (!wl->upstream || strncmp(wl->upstream, "ksm_tests ", 10) != 0)
		return 0;
	snprintf(buf, len, "%s", wl->upstream);
	for (char *w = strtok_r(buf, " ", &save); w && n < MAX_UPSTREAM_ARGS - 1;
	     w = strtok_r(NULL, " ", &save))
		words[n++] = w;
	words[n] = NULL;
	return n;
}

/* What the backend should measure for @wl: its ksm_tests mode's figure, or none. */
static enum kb_measure timed_mode_of(const struct workload *wl)
{
	char buf[256], *words[MAX_UPSTREAM_ARGS];
	int n = ksm_tests_argv(wl, buf, sizeof(buf), words);

	for (int i = 1; i < n; i++)
		for (size_t m = 0; m < sizeof(timed_modes) / sizeof(timed_modes[0]); m++)
			if (strcmp(words[i], timed_modes[m].flag) == 0)
				return timed_modes[m].measure;
	return KB_MEASURE_NONE;
}

/* The first executable regular file named @prog in $PATH, into @out ("" if none). */
static void find_on_path(const char *prog, char *out, size_t len)
{
	const char *path = getenv("PATH");

	out[0] = '\0';
	while (path && *path) {
		const char *end = strchr(path, ':');
		size_t dirlen = end ? (size_t)(end - path) : strlen(path);
		struct stat sb;

		snprintf(out, len, "%.*s/%s", (int)dirlen, dirlen ? path : ".", prog);
		if (stat(out, &sb) == 0 && S_ISREG(sb.st_mode) && access(out, X_OK) == 0)
			return;
		path = end ? end + 1 : NULL;
	}
	out[0] = '\0';
}

static double mib_per_s(uint64_t bytes, uint64_t ns)
{
	return ns ? ((double)bytes / (1 << 20)) / ((double)ns / 1e9) : 0;
}

/*
 * Run @prog with @argv (ksm_tests' own arguments), its standard output into
 * @out; the kernel's knobs are saved first and put back after, under the
 * backend's lock, as ksm_tests changes them itself. 0 with its exit status in
 * *@status, or -1 with a message in @out.
 */
static int run_ksm_tests(const char *prog, char **argv, char *out, size_t len, int *status)
{
	struct kb_knob_set saved;
	char msg[512];
	int fd = kb_lock_hold(UINT64_C(60000000000), msg, sizeof(msg)), pipefd[2];
	size_t used = 0;
	ssize_t got;
	pid_t pid;

	if (fd < 0 || kb_knobs_save(&saved, msg, sizeof(msg)) != 0 || pipe(pipefd) != 0) {
		snprintf(out, len, "%s", fd < 0 || errno == 0 ? msg : strerror(errno));
		if (fd >= 0)
			kb_lock_drop(fd);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		dup2(pipefd[1], STDOUT_FILENO);
		close(pipefd[0]);
		close(pipefd[1]);
		execv(prog, argv);
		_exit(127);
	}
	close(pipefd[1]);
	while (pid > 0 && used + 1 < len && (got = read(pipefd[0], out + used, len - 1 - used)) > 0)
		used += (size_t)got;
	out[used] = '\0';
	close(pipefd[0]);
	if (pid > 0 && waitpid(pid, status, 0) < 0)
		*status = -1;
	if (kb_knobs_restore(&saved, msg, sizeof(msg)) != 0)
		snprintf(out, len, "restoring the knobs after ksm_tests: %s", msg);
	kb_lock_drop(fd);
	return pid > 0 ? 0 : -1;
}

/* The @nth "Average speed: X MiB/s" of ksm_tests' output, or -1. */
static double average_speed(const char *text, int nth)
{
	const char *p = text;
	double v;

	for (int i = 0; (p = strstr(p, "Average speed:")) != NULL; i++, p++)
		if (i == nth && sscanf(p, "Average speed: %lf", &v) == 1)
			return v;
	return -1;
}

/*
 * The figure of a timed mode's kernel run @m, and ksm_tests' own beside it
 * when the program was found: "ksm_tests -P -s 100 -t 0: ksmkit 912.3 MiB/s,
 * ksm_tests 950.1 MiB/s" into @l->figure.
 */
static void figure(const struct selftest *st, const struct workload *wl,
		   const struct kb_measurement *m, struct tap_line *l)
{
	char ours[160], theirs[256], buf[256], output[16384], *argv[MAX_UPSTREAM_ARGS];
	bool cow = m->kind == KB_MEASURE_COW;
	int status = -1;

	output[0] = '\0';
	if (m->kind == KB_MEASURE_NONE)
		return;
	if (cow)
		snprintf(ours, sizeof(ours), "ksmkit %.3f MiB/s not merged, %.3f MiB/s merged",
			 mib_per_s(m->bytes, m->base_time_ns), mib_per_s(m->bytes, m->time_ns));
	else
		snprintf(ours, sizeof(ours), "ksmkit %.3f MiB/s (%.1f MiB in %.3f s)",
			 mib_per_s(m->bytes, m->time_ns), (double)m->bytes / (1 << 20),
			 (double)m->time_ns / 1e9);
	if (!st->ksm_tests[0]) {
		snprintf(theirs, sizeof(theirs), "ksm_tests not found on PATH");
	} else if (ksm_tests_argv(wl, buf, sizeof(buf), argv) == 0 ||
		   run_ksm_tests(st->ksm_tests, argv, output, sizeof(output), &status) != 0) {
		snprintf(theirs, sizeof(theirs), "ksm_tests did not run: %.200s", output);
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
		   average_speed(output, cow ? 1 : 0) < 0) {
		snprintf(theirs, sizeof(theirs), "%.200s exited with status %d, no figure",
			 st->ksm_tests, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	} else if (cow) {
		snprintf(theirs, sizeof(theirs), "ksm_tests %.3f MiB/s not merged, %.3f MiB/s merged",
			 average_speed(output, 0), average_speed(output, 1));
	} else {
		snprintf(theirs, sizeof(theirs), "ksm_tests %.3f MiB/s", average_speed(output, 0));
	}
	snprintf(l->figure, sizeof(l->figure), "%s: %s; %s", wl->upstream, ours, theirs);
}

/* --- the kernel side ---------------------------------------------------------------- */

struct rerun_note {
	const struct selftest *st;
	const struct test *t;
};

/* Why a differing run is run again (xval_may_be_transient). */
static const char *transient_reason(const struct xval_result *res)
{
	if (res->kernel.invalid_rows > 0)
		return "the runner was late for some rows";
	if (xval_caught_up(&res->report, res->sim.trace))
		return "the kernel caught up by its last scan";
	return "a huge page's split may have met a transient reference";
}

/* xval_run runs @t again on this kernel: say why. */
static void note_rerun(const struct xval_result *res, void *arg)
{
	const struct rerun_note *n = arg;

	progress(n->st, "%s: %s, running it again", n->t->name, transient_reason(res));
}

/* This machine's kernel, one workload after the other. */
static void host_test(const struct selftest *st, struct test *t)
{
	struct rerun_note note = { st, t };
	struct xval_options opt;
	struct xval_result res;
	struct kb_options host;

	xval_options_init(&opt);
	opt.pages = t->wl->deterministic;
	opt.attempts = HOST_ATTEMPTS;
	opt.rerun = note_rerun;
	opt.rerun_arg = &note;
	kb_options_init(&host);
	host.force = st->force;
	host.measure = timed_mode_of(t->wl);
	opt.host = &host;
	xval_run(t->wl, &opt, &res);
	kernel_verdict(t->wl, &res, &t->kernel);
	if (res.verdict == XVAL_MATCH || res.verdict == XVAL_DIFFERS)
		figure(st, t->wl, &res.kernel.measurement, &t->kernel);
	xval_result_free(&res);
}

/* NUMA nodes @wl places memory on: its highest node + 1 (0 when it places none). */
static unsigned nodes_needed(const struct workload *wl)
{
	unsigned need = 0;

	for (size_t i = 0; i < wl->nregions; i++)
		if (wl->regions[i].node >= 0 && (unsigned)wl->regions[i].node + 1 > need)
			need = (unsigned)wl->regions[i].node + 1;
	return need;
}

/*
 * One boot of the guest @g for the tests in @pending (their in_guest set),
 * each followed by the simulator; a test that differed after rows the
 * guest's runner marked invalid stays pending for another boot when
 * @may_retry. Returns how many are still pending, or -1 when the guest could
 * not run at all (each pending test's kernel line then says why).
 */
static long guest_boot(const struct selftest *st, const struct kg_options *g, struct test **pending,
		       size_t n, bool may_retry)
{
	const struct workload **wls = calloc(n, sizeof(*wls));
	struct xval_guest_run *runs = calloc(n, sizeof(*runs));
	char release[128], msg[2048];
	size_t again = 0;
	int status;

	if (!wls || !runs) {
		free(wls);
		free(runs);
		for (size_t i = 0; i < n; i++)
			set_line(&pending[i]->kernel, TAP_ERROR, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		wls[i] = pending[i]->wl;
	progress(st, "booting a qemu guest (%s) for %zu workloads", st->guest, n);
	status = xval_run_guest(wls, n, g, true, runs, release, sizeof(release), msg, sizeof(msg));
	if (status != KB_OK) {
		for (size_t i = 0; i < n; i++) {
			xval_side_free(&runs[i].side);
			set_line(&pending[i]->kernel, status == KB_SKIPPED ? TAP_SKIP : TAP_ERROR,
				 "guest: %s", msg);
		}
		free(wls);
		free(runs);
		return -1;
	}
	progress(st, "Linux %s ran them; comparing with the simulator", release);
	for (size_t i = 0; i < n; i++) {
		struct xval_options opt;
		struct xval_result res;

		xval_options_init(&opt);
		opt.pages = true;
		xval_follow(pending[i]->wl, &runs[i], &opt, &res);
		if (may_retry && xval_may_be_transient(pending[i]->wl, &res)) {
			progress(st, "%s: %s, running it again", pending[i]->name,
				 transient_reason(&res));
			pending[again++] = pending[i];
		} else {
			kernel_verdict(pending[i]->wl, &res, &pending[i]->kernel);
		}
		xval_result_free(&res);
	}
	free(wls);
	free(runs);
	return (long)again;
}

/* Every test in one guest (more boots only for runs a late runner spoiled). */
static int guest_tests(const struct selftest *st, struct test *tests, size_t n)
{
	struct test **pending = calloc(n ? n : 1, sizeof(*pending));
	struct kg_options g;
	char why[200];
	long npending = 0;

	kg_options_init(&g);
	if (!pending || kg_parse_spec(st->guest, &g, why, sizeof(why)) != 0) {
		cli_error("selftest: --guest %s: %s", st->guest, pending ? why : "out of memory");
		free(pending);
		return CLI_USAGE;
	}
	g.dir = kg_default_dir(GUEST_BUILD_DIR);
	for (size_t i = 0; i < n; i++) {
		unsigned need = nodes_needed(tests[i].wl);

		if (need > g.nodes)
			set_line(&tests[i].kernel, TAP_SKIP, "needs %u NUMA nodes, the guest has %u "
				 "(--guest nodes=%u)", need, g.nodes, need);
		else
			pending[npending++] = &tests[i];
	}
	for (int boot = 1; npending > 0; boot++)
		npending = guest_boot(st, &g, pending, (size_t)npending, boot < GUEST_ATTEMPTS);
	free(pending);
	return CLI_OK;
}

/* --- the set ---------------------------------------------------------------------- */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Parse and admit every file; the first bad one is an error (nothing runs). */
static int load_tests(char **paths, size_t n, struct test *tests)
{
	for (size_t i = 0; i < n; i++) {
		struct wl_error werr;
		struct test *t = &tests[i];

		if (wl_parse_file(paths[i], &t->wl, &werr) != 0) {
			cli_error("%s", werr.text);
			return CLI_USAGE;
		}
		if (cli_admit(t->wl, &(struct sim_admit_options){ .traces = 2,
				      .capture_bytes = XVAL_CAPTURE_BYTES },
			      werr.text, sizeof(werr.text)) != 0) {
			cli_error("%s", werr.text);
			return CLI_USAGE;
		}
		if (t->wl->upstream)
			snprintf(t->name, sizeof(t->name), "%.200s", t->wl->upstream);
		else
			snprintf(t->name, sizeof(t->name), "%.*s", (int)strlen(base_name(paths[i])) - 3,
				 base_name(paths[i]));
	}
	return CLI_OK;
}

static int run_set(struct selftest *st, char **paths, size_t n)
{
	struct test *tests = calloc(n ? n : 1, sizeof(*tests));
	bool kernel = !st->sim_only, root = geteuid() == 0;
	const char *engine = st->guest ? "guest" : "kernel";
	int rc;

	if (!tests) {
		cli_error("selftest: out of memory");
		return CLI_FAILED;
	}
	if ((rc = load_tests(paths, n, tests)) != CLI_OK)
		goto out;
	printf("TAP version 13\n");
	printf("# ksmkit selftest: %zu workloads on the simulator%s\n", n,
	       !kernel ? "" : st->guest ? " and in a qemu guest" : " and on this kernel");
	printf("1..%zu\n", kernel ? 2 * n : n);
	fflush(stdout);
	if (kernel && !st->guest && !root)
		printf("# not root: the kernel side of every test is skipped\n");
	if (kernel && !st->guest && root) {
		find_on_path("ksm_tests", st->ksm_tests, sizeof(st->ksm_tests));
		if (st->ksm_tests[0])
			printf("# ksm_tests: %s (run beside -P, -H, -D and -C)\n", st->ksm_tests);
	}
	for (size_t i = 0; i < n; i++)
		sim_test(&tests[i]);
	if (kernel && st->guest && (rc = guest_tests(st, tests, n)) != CLI_OK)
		goto out;
	for (size_t i = 0; i < n; i++) {
		tap_print(st, "sim", tests[i].name, &tests[i].sim);
		if (!kernel)
			continue;
		if (!st->guest && !root) {
			set_line(&tests[i].kernel, TAP_SKIP, "not root (the kernel's KSM needs root)");
		} else if (!st->guest) {
			progress(st, "[%zu/%zu] %s on this kernel", i + 1, n, tests[i].name);
			host_test(st, &tests[i]);
		}
		tap_print(st, engine, tests[i].name, &tests[i].kernel);
	}
	printf("# Totals: pass:%u fail:%u xfail:0 xpass:0 skip:%u error:%u\n",
	       st->count[TAP_PASS], st->count[TAP_FAIL], st->count[TAP_SKIP], st->count[TAP_ERROR]);
	rc = st->count[TAP_FAIL] || st->count[TAP_ERROR] ? CLI_FAILED : CLI_OK;
out:
	for (size_t i = 0; i < n; i++)
		wl_free(tests[i].wl);
	free(tests);
	return rc;
}

static const struct cli_opt selftest_options[] = {
	{ "guest", 0, true, 'G' },
	{ "sim-only", 0, false, 's' },
	{ "force", 0, false, 'f' },
	{ "quiet", 'q', false, 'q' },
	{ NULL, 0, false, 0 },
};

static const struct cli_rule selftest_rules[] = {
	{ CLI_EXCLUDES, "sim-only guest force", "--sim-only runs no kernel", 0, 0, NULL },
	{ CLI_AT_MOST_ONE, "guest force", "a guest never touches this machine's KSM", 0, 0, NULL },
	{ 0, NULL, NULL, 0, 0, NULL },
};

static const struct cli_spec selftest_spec = {
	"selftest", NULL, selftest_options, selftest_rules, 0, -1, "workload files, or none",
};

int cmd_selftest(int argc, char **argv)
{
	struct selftest st = { 0 };
	struct cli_args args;
	const char *value;
	char **list;
	size_t n;
	int c, rc;

	if (cli_args_parse(&selftest_spec, argc, argv, &args) != 0)
		return CLI_USAGE;
	while ((c = cli_args_next(&args, &value)) != -1) {
		switch (c) {
		case 'G': st.guest = value; break;
		case 's': st.sim_only = true; break;
		case 'f': st.force = true; break;
		case 'q': st.quiet = true; break;
		}
	}
	if (args.noperands)
		return run_set(&st, args.operand, (size_t)args.noperands);
	if (!(list = cli_default_set("workloads/selftests", &n)) || n == 0) {
		cli_error("selftest: no workloads: neither ./workloads/selftests nor "
			  "%s/workloads/selftests has any", PKGDATADIR);
		free(list);
		return CLI_USAGE;
	}
	rc = run_set(&st, list, n);
	cli_workloads_free(list, n);
	return rc;
}
