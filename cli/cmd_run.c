/*
 * cmd_run.c - `ksmkit run`: a workload on this machine's kernel KSM, or with
 * --guest nodes=N on the kernel of a qemu guest with N NUMA nodes (guest.h).
 *
 * Parses the workload (exit 2 on any problem), hands it to the backend
 * (backend.h), which checks, locks, saves the knobs, runs and restores (in
 * the guest, the same backend runs inside; guest times are emulation times
 * and --measure is refused there), and prints what came back: the trace as a table (one line per full scan with
 * the main counters), CSV or JSON, or with --measure the ksm_tests-style
 * measurement instead. A progress line appears on a terminal for runs longer
 * than 2 s. The workload's [expect] sections are checked on the trace (the
 * page partition is captured at every scan when one counts duplicates). The
 * exit status is the backend's: 0 ok, 1 failed or refused (or an
 * expectation failed), 2 bad input, 77 skipped (the reason on stderr).
 */
#include "config.h"
#include "backend.h"
#include "cli.h"
#include "cli_args.h"
#include "cli_live.h"
#include "cli_output.h"
#include "expect.h"
#include "guest.h"
#include "trace.h"
#include "workload.h"
#include "xval.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRESS_AFTER_NS (2 * UINT64_C(1000000000))

enum format { FORMAT_TABLE, FORMAT_CSV, FORMAT_JSON };

struct run_args {
	const char *path;       /* the workload file */
	enum format format;
	const char *output;     /* -o FILE, or NULL for stdout */
	const char *pages_path; /* --pages FILE */
	const char *dirty_path; /* --soft-dirty FILE */
	const char *guest;      /* --guest SPEC, or NULL for this kernel */
	bool quiet;
	struct kb_options opt;
};

/* ---- callbacks (run in the runner process for progress) -------------------- */

static void print_progress(const struct kb_progress *p, void *arg)
{
	(void)arg;
	if (p->elapsed_ns < PROGRESS_AFTER_NS)
		return;
	if (p->scans_wanted)
		fprintf(stderr, "\rksmkit run: scan %" PRIu64 "/%" PRIu64 ", pages_sharing %" PRId64
				", %.1f s ",
			p->scans_done, p->scans_wanted, p->pages_sharing, (double)p->elapsed_ns / 1e9);
	else
		fprintf(stderr, "\rksmkit run: scan %" PRIu64 ", pages_sharing %" PRId64
				", %.1f of %.1f s ",
			p->scans_done, p->pages_sharing, (double)p->elapsed_ns / 1e9,
			(double)p->time_wanted_ns / 1e9);
	fflush(stderr);
}

static void print_note(const char *note, void *arg)
{
	(void)arg;
	cli_error("run: %s", note);
}

/* ---- output ------------------------------------------------------------------ */

static double mib_per_s(uint64_t bytes, uint64_t ns)
{
	return ns ? ((double)bytes / (1 << 20)) / ((double)ns / 1e9) : 0;
}

static const char *const measure_titles[] = {
	[KB_MEASURE_MERGE] = "ksm_tests -P equivalent: merge time",
	[KB_MEASURE_COW] = "ksm_tests -C equivalent: COW time",
	[KB_MEASURE_UNMERGE] = "ksm_tests -D equivalent: unmerge time",
	[KB_MEASURE_THP] = "ksm_tests -H equivalent: merge time with THP",
};

static void print_measure_human(const struct kb_measurement *m, const char *path, FILE *out)
{
	double mib = (double)m->bytes / (1 << 20);

	fprintf(out, "%s (%s)\n", measure_titles[m->kind], path);
	fprintf(out, "Total size:    %.3f MiB\n", mib);
	if (m->kind == KB_MEASURE_COW) {
		fprintf(out, "Not merged pages: %" PRIu64 ".%09" PRIu64 " s, %.3f MiB/s\n",
			m->base_time_ns / 1000000000, m->base_time_ns % 1000000000,
			mib_per_s(m->bytes, m->base_time_ns));
		fprintf(out, "Merged pages:     %" PRIu64 ".%09" PRIu64 " s, %.3f MiB/s\n",
			m->time_ns / 1000000000, m->time_ns % 1000000000,
			mib_per_s(m->bytes, m->time_ns));
		if (m->base_time_ns)
			fprintf(out, "Merged / not merged time: %.2f\n",
				(double)m->time_ns / (double)m->base_time_ns);
		return;
	}
	fprintf(out, "Total time:    %" PRIu64 ".%09" PRIu64 " s\n", m->time_ns / 1000000000,
		m->time_ns % 1000000000);
	fprintf(out, "Average speed: %.3f MiB/s\n", mib_per_s(m->bytes, m->time_ns));
	if (m->kind == KB_MEASURE_THP)
		fprintf(out, "Huge pages:    %" PRIu64 " of %" PRIu64 " 2 MiB ranges\n", m->huge_ranges,
			m->ranges);
}

static int print_measure(const struct kb_measurement *m, const char *path, enum format format,
			 FILE *out)
{
	switch (format) {
	case FORMAT_TABLE:
		print_measure_human(m, path, out);
		break;
	case FORMAT_CSV:
		fprintf(out, "measure,bytes,time_ns,mib_per_s,base_time_ns,base_mib_per_s,"
			     "huge_ranges,ranges\n");
		fprintf(out, "%s,%" PRIu64 ",%" PRIu64 ",%.3f,%" PRIu64 ",%.3f,%" PRIu64 ",%" PRIu64 "\n",
			kb_measure_name(m->kind), m->bytes, m->time_ns, mib_per_s(m->bytes, m->time_ns),
			m->base_time_ns, mib_per_s(m->bytes, m->base_time_ns), m->huge_ranges,
			m->ranges);
		break;
	case FORMAT_JSON:
		fprintf(out,
			"{\"format\": \"ksmkit-measure\", \"version\": 1, \"measure\": \"%s\", "
			"\"bytes\": %" PRIu64 ", \"time_ns\": %" PRIu64 ", \"mib_per_s\": %.3f, "
			"\"base_time_ns\": %" PRIu64 ", \"base_mib_per_s\": %.3f, "
			"\"huge_ranges\": %" PRIu64 ", \"ranges\": %" PRIu64 "}\n",
			kb_measure_name(m->kind), m->bytes, m->time_ns, mib_per_s(m->bytes, m->time_ns),
			m->base_time_ns, mib_per_s(m->bytes, m->base_time_ns), m->huge_ranges,
			m->ranges);
		break;
	}
	return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}

static void print_table(const struct kb_result *res, FILE *out)
{
	const struct trace *t = res->trace;
	char engine[160];

	if (strcmp(t->source, "guest") == 0)
		snprintf(engine, sizeof engine, "Linux %s in a qemu TCG guest (times are emulation "
			 "times, not KSM's)", t->kernel ? t->kernel : "?");
	else
		snprintf(engine, sizeof engine, "Linux %s (the kernel's KSM)",
			 t->kernel ? t->kernel : "?");
	cli_print_trace(t, engine, out);
	if (res->invalid_rows)
		fprintf(out, "# %" PRIu64 " row(s) invalid: ksmd began its next batch before the row "
			     "was read (sleep_millisecs too short?)\n",
			res->invalid_rows);
}

static int print_trace(const struct kb_result *res, enum format format, FILE *out)
{
	switch (format) {
	case FORMAT_TABLE:
		print_table(res, out);
		return fflush(out) == 0 && !ferror(out) ? 0 : -1;
	case FORMAT_CSV:
		return trace_write_csv(res->trace, out);
	case FORMAT_JSON:
		return trace_write_json(res->trace, out);
	}
	return -1;
}

/* The page partition as CSV (trace.h), names from @wl: 0, or -1 (errno set). */
static int write_pages_csv(const struct kb_result *res, const struct workload *wl, FILE *out)
{
	struct trace_page_names names;
	int rc;

	if (xval_names(wl, &names) != 0)
		return -1;
	rc = trace_pages_write_csv(res->pages, res->npages, &names, out);
	xval_names_free(&names);
	return rc;
}

/* Write a capture to @path; 0, or CLI_FAILED with a message. */
static int write_capture(const char *path, const struct kb_result *res, const struct workload *wl,
			 int (*writer)(const struct kb_result *, const struct workload *, FILE *))
{
	FILE *f = cli_output_open("run", path);
	int rc;

	if (!f)
		return CLI_FAILED;
	rc = writer(res, wl, f); /* its write errors stay in @f for cli_output_close */
	if (rc != 0 && !ferror(f)) {
		cli_error("run: cannot write %s: %s", path, strerror(errno));
		cli_output_close("run", f, path);
		return CLI_FAILED;
	}
	return cli_output_close("run", f, path);
}

/* ---- arguments --------------------------------------------------------------- */

enum {
	OPT_CSV = 256, OPT_JSON, OPT_FORCE, OPT_PER_BATCH, OPT_PAGES, OPT_DIRTY, OPT_MEASURE,
	OPT_GUEST, OPT_CMD, OPT_SCANS, OPT_DURATION, OPT_KNOB, OPT_PAGES_TO_SCAN, OPT_SLEEP,
	OPT_CAPTURE,
};

static const struct cli_opt run_options[] = {
	{ "csv", 0, false, OPT_CSV },
	{ "json", 0, false, OPT_JSON },
	{ "output", 'o', true, 'o' },
	{ "quiet", 'q', false, 'q' },
	{ "force", 0, false, OPT_FORCE },
	{ "per-batch", 0, false, OPT_PER_BATCH },
	{ "pages", 0, true, OPT_PAGES },
	{ "soft-dirty", 0, true, OPT_DIRTY },
	{ "measure", 0, true, OPT_MEASURE },
	{ "guest", 0, true, OPT_GUEST },
	{ "cmd", 0, false, OPT_CMD },
	{ "scans", 0, true, OPT_SCANS },
	{ "duration", 0, true, OPT_DURATION },
	{ "knob", 0, true, OPT_KNOB },
	{ "pages-to-scan", 0, true, OPT_PAGES_TO_SCAN },
	{ "sleep-millisecs", 0, true, OPT_SLEEP },
	{ "capture", 0, true, OPT_CAPTURE },
	{ NULL, 0, false, 0 },
};

static const struct cli_rule run_rules[] = {
	{ CLI_AT_MOST_ONE, "csv json", NULL, 0, 0, NULL },
	{ CLI_EXCLUDES, "guest measure", "a guest's times measure the emulator (TCG), not KSM",
	  0, 0, NULL },
	{ CLI_EXCLUDES, "guest force", "a guest never touches this machine's KSM", 0, 0, NULL },
	{ CLI_EXCLUDES, "cmd per-batch pages soft-dirty measure guest",
	  "--cmd measures a command, not a workload's regions", 0, 0, NULL },
	{ CLI_NEEDS, "scans cmd", "a workload says when it stops", 0, 0, NULL },
	{ CLI_NEEDS, "duration cmd", "a workload says when it stops", 0, 0, NULL },
	{ CLI_NEEDS, "knob cmd", "a workload sets knobs in its [global]", 0, 0, NULL },
	{ CLI_NEEDS, "pages-to-scan cmd", "a workload sets knobs in its [global]", 0, 0, NULL },
	{ CLI_NEEDS, "sleep-millisecs cmd", "a workload sets knobs in its [global]", 0, 0, NULL },
	{ CLI_NEEDS, "capture cmd", "ksmkit capture -- CMD captures a command alone", 0, 0,
	  NULL },
	{ CLI_OPERANDS, "cmd", NULL, 1, -1, "a command after --" },
	{ 0, NULL, NULL, 0, 0, NULL },
};

static const struct cli_spec run_spec = {
	"run", NULL, run_options, run_rules, 1, 1, "exactly one workload file",
};

/* No output file onto the workload, nor two outputs into one file. */
static int check_outputs(const struct run_args *a)
{
	const struct cli_file outputs[] = {
		{ "-o", a->output }, { "--pages", a->pages_path }, { "--soft-dirty", a->dirty_path },
	};
	const struct cli_file workload = { "the workload", a->path };

	return cli_check_outputs("run", outputs, 3, &workload, 1);
}

/* run --cmd: its options, to cmd_run_cmd.c. */
static int parse_cmd_args(struct cli_args *args, bool had_dashdash, struct run_cmd_args *c)
{
	const char *value;
	int opt, rc = 0;
	long n;

	memset(c, 0, sizeof *c);
	kb_live_init(&c->live);
	while (rc == 0 && (opt = cli_args_next(args, &value)) != -1) {
		switch (opt) {
		case OPT_CSV: c->csv = true; break;
		case OPT_JSON: c->json = true; break;
		case 'o': c->output = value; break;
		case 'q': c->quiet = true; break;
		case OPT_FORCE: c->force = true; break;
		case OPT_SCANS:
			rc = cli_number("run", "--scans", value, 1, 1000000000L, &n);
			c->live.scans = (uint64_t)n;
			break;
		case OPT_DURATION:
			if (wl_parse_time(value, &c->live.duration_ns) != 0 || !c->live.duration_ns) {
				cli_error("run: --duration: '%s' is not a time above 0 (like 30s, 2m)",
					  value);
				rc = CLI_USAGE;
			}
			break;
		case OPT_KNOB: rc = cli_live_knobs("run", value, &c->live); break;
		case OPT_PAGES_TO_SCAN:
			rc = cli_live_knob("run", "--pages-to-scan", "pages_to_scan", value, &c->live);
			break;
		case OPT_SLEEP:
			rc = cli_live_knob("run", "--sleep-millisecs", "sleep_millisecs", value,
					   &c->live);
			break;
		case OPT_CAPTURE: c->capture = value; break;
		}
	}
	if (rc)
		return rc;
	if (!had_dashdash) {
		cli_error("run: --cmd: the command goes after --: ksmkit run --cmd -- %s",
			  args->operand[0]);
		return CLI_USAGE;
	}
	c->argv = args->operand;
	return 0;
}

static int parse_args(struct cli_args *args, struct run_args *a)
{
	const char *value;
	int opt, m;

	memset(a, 0, sizeof *a);
	kb_options_init(&a->opt);
	while ((opt = cli_args_next(args, &value)) != -1) {
		switch (opt) {
		case OPT_CSV:
			a->format = FORMAT_CSV;
			break;
		case OPT_JSON:
			a->format = FORMAT_JSON;
			break;
		case 'o':
			a->output = value;
			break;
		case 'q':
			a->quiet = true;
			break;
		case OPT_FORCE:
			a->opt.force = true;
			break;
		case OPT_PER_BATCH:
			a->opt.per_batch = true;
			break;
		case OPT_PAGES:
			a->pages_path = value;
			a->opt.pages = KB_PAGES_EVERY_SCAN;
			break;
		case OPT_DIRTY:
			a->dirty_path = value;
			a->opt.soft_dirty = true;
			break;
		case OPT_MEASURE:
			m = kb_measure_lookup(value);
			if (m <= KB_MEASURE_NONE) {
				cli_error("run: --measure %s: expected merge, cow, unmerge or thp", value);
				return CLI_USAGE;
			}
			a->opt.measure = (enum kb_measure)m;
			break;
		case OPT_GUEST:
			a->guest = value;
			break;
		}
	}
	a->path = args->operand[0];
	return check_outputs(a) == 0 ? CLI_OK : CLI_USAGE;
}

/* The run inside a guest: kg_run for this one workload, as kb_run would. */
static int run_in_guest(const struct run_args *a, const struct workload *wl,
			struct kb_result *res, char *msg, size_t len)
{
	struct kg_options g;
	struct kg_session session;
	char why[200];
	int status;

	memset(res, 0, sizeof *res);
	kg_options_init(&g);
	if (kg_parse_spec(a->guest, &g, why, sizeof why) != 0) {
		snprintf(msg, len, "--guest %s: %s", a->guest, why);
		return KB_BAD_INPUT;
	}
	g.dir = kg_default_dir(GUEST_BUILD_DIR);
	g.pages = a->opt.pages != KB_PAGES_NONE;
	g.per_batch = a->opt.per_batch;
	g.soft_dirty = a->opt.soft_dirty;
	g.note = print_note;
	g.keep = getenv("KSMKIT_GUEST_KEEP") != NULL;
	status = kg_run(&wl, 1, &g, &session, msg, len);
	if (g.keep && session.workdir[0])
		cli_error("run: the guest's files are kept in %s", session.workdir);
	if (status == KB_OK) {
		status = session.run[0].status;
		snprintf(msg, len, "%s", session.run[0].message);
		*res = session.run[0].result;
		memset(&session.run[0].result, 0, sizeof session.run[0].result);
	}
	kg_session_free(&session);
	return status;
}

static int report(const struct run_args *a, const struct workload *wl, const struct kb_result *res,
		  FILE *out)
{
	int rc = CLI_OK;

	if (a->opt.measure != KB_MEASURE_NONE) {
		if (res->measurement.kind == KB_MEASURE_NONE) {
			cli_error("run: the run ended before the %s measurement was complete",
				  kb_measure_name(a->opt.measure));
			return CLI_FAILED;
		}
		if (print_measure(&res->measurement, wl->path, a->format, out) != 0)
			rc = CLI_FAILED;
	} else if (res->trace && print_trace(res, a->format, out) != 0) {
		rc = CLI_FAILED;
	}
	/* a write error of @out is reported when it is closed */
	if (a->pages_path && write_capture(a->pages_path, res, wl, write_pages_csv) != CLI_OK)
		rc = CLI_FAILED;
	if (a->dirty_path && write_capture(a->dirty_path, res, wl, kb_write_dirty_csv) != CLI_OK)
		rc = CLI_FAILED;
	return rc;
}

int cmd_run(int argc, char **argv)
{
	struct run_args a;
	struct workload *wl;
	struct wl_error err;
	struct kb_result res;
	struct cli_args args;
	char msg[2048];
	FILE *out = stdout;
	bool had_dashdash = false;
	int status, rc;

	for (int i = 1; i < argc && !had_dashdash; i++)
		had_dashdash = strcmp(argv[i], "--") == 0;
	if (cli_args_parse(&run_spec, argc, argv, &args) != 0)
		return CLI_USAGE;
	if (cli_args_has(&args, OPT_CMD)) {
		struct run_cmd_args c;

		rc = parse_cmd_args(&args, had_dashdash, &c);
		return rc != 0 ? rc : cli_run_cmd(&c);
	}
	rc = parse_args(&args, &a);
	if (rc != CLI_OK)
		return rc;
	if (wl_parse_file(a.path, &wl, &err) != 0) {
		cli_error("%s", err.text);
		return CLI_USAGE;
	}
	if (!(out = cli_output_open("run", a.output))) {
		wl_free(wl);
		return CLI_FAILED;
	}
	a.opt.note = print_note;
	if (expect_needs_pages(wl))
		a.opt.pages = KB_PAGES_EVERY_SCAN;
	if (!a.quiet && isatty(STDERR_FILENO))
		a.opt.progress = print_progress;
	if (a.guest)
		status = run_in_guest(&a, wl, &res, msg, sizeof msg);
	else
		status = kb_run(wl, &a.opt, &res, msg, sizeof msg);
	if (a.opt.progress)
		fputs("\r\033[K", stderr);
	if (status == KB_OK || (status == KB_FAILED && res.trace && res.trace->nrows)) {
		rc = report(&a, wl, &res, out);
		if (status == KB_OK)
			status = rc;
	}
	if (status == KB_OK)
		status = cli_check_expectations(wl, res.trace, res.pages, res.npages,
						a.guest ? "run (guest)" : "run", a.quiet);
	if (status != KB_OK && msg[0] && strncmp(msg, a.path, strlen(a.path)) == 0)
		cli_error("%s", msg); /* FILE:LINE: what is wrong */
	else if (status != KB_OK && msg[0])
		cli_error("run: %s", msg);
	if (cli_output_close("run", out, a.output) != CLI_OK && status == KB_OK)
		status = CLI_FAILED;
	kb_result_free(&res);
	wl_free(wl);
	return status;
}
