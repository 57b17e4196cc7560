/*
 * cmd_vms.c - `ksmkit vms`: the seed's experiment on this machine. N
 * identical qemu guests (the project's guest kernel and initramfs from
 * `make guest`, each filling the same memory: ksmkit.fill=MIB, guest/init;
 * or the user's own qemu command line after --qemu --) run side by side,
 * their RAM mergeable on the host (qemu's mem-merge=on marks it
 * MADV_MERGEABLE), while the host's KSM is measured full scan by full scan
 * (kb_live_run: the backend's lock, knobs restored, the sentinel, the
 * refusal when anyone else uses KSM, checked before the guests start) and
 * `capture` follows the qemu processes into a file per run. Repeated
 * --runs R times; then the table of the final pages_shared and
 * pages_sharing per run, their mean and standard deviation, and a chart of
 * pages_sharing over time, one line per run. Every file of a run goes into
 * the output directory: runR.csv (the trace), runR.cap (the capture),
 * runR-vmI.console and runR-vmI.log (each guest's console and qemu's
 * output), pages_sharing.png.
 */
#include "config.h"
#include "cli.h"
#include "cli_args.h"
#include "cli_live.h"
#include "cli_output.h"
#include "estimate.h"
#include "guest.h"
#ifdef HAVE_PLOT
#include "../plots/plot.h"
#endif

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define CMD "vms"
#define QEMU "qemu-system-x86_64"
#define MIB (UINT64_C(1) << 20)
#define ARG_MAX_TEXT 320
#define QEMU_ARGS 24
/* The guest kernel and its initramfs leave a guest this much at least. */
#define GUEST_KERNEL_MIB 64
/* qemu's own memory beside the guest's, for the memory check. */
#define QEMU_OVERHEAD_MIB 64
#define DEFAULT_DURATION_NS (45 * UINT64_C(1000000000))
#define DEFAULT_PAGES_TO_SCAN "1000"
#define DEFAULT_SLEEP_MS "10"

enum {
	OPT_OUTPUT = 'o', OPT_QUIET = 'q',
	OPT_GUESTS = 1000, OPT_RUNS, OPT_MEM, OPT_FILL, OPT_KERNEL, OPT_QEMU, OPT_CHART,
	OPT_NO_CAPTURE, OPT_CSV, OPT_FORCE, OPT_SCANS, OPT_DURATION, OPT_KNOB, OPT_PAGES_TO_SCAN,
	OPT_SLEEP,
};

static const struct cli_opt vms_options[] = {
	{ "guests", 0, true, OPT_GUESTS },
	{ "runs", 0, true, OPT_RUNS },
	{ "mem", 0, true, OPT_MEM },
	{ "fill", 0, true, OPT_FILL },
	{ "kernel", 0, true, OPT_KERNEL },
	{ "qemu", 0, false, OPT_QEMU },
	{ "output", 'o', true, OPT_OUTPUT },
	{ "chart", 0, true, OPT_CHART },
	{ "no-capture", 0, false, OPT_NO_CAPTURE },
	{ "csv", 0, false, OPT_CSV },
	{ "quiet", 'q', false, OPT_QUIET },
	{ "force", 0, false, OPT_FORCE },
	{ "scans", 0, true, OPT_SCANS },
	{ "duration", 0, true, OPT_DURATION },
	{ "knob", 0, true, OPT_KNOB },
	{ "pages-to-scan", 0, true, OPT_PAGES_TO_SCAN },
	{ "sleep-millisecs", 0, true, OPT_SLEEP },
	{ NULL, 0, false, 0 },
};

static const struct cli_rule vms_rules[] = {
	{ CLI_EXCLUDES, "qemu mem fill kernel",
	  "--qemu runs your command line as it is: its memory and kernel are yours", 0, 0, NULL },
	{ CLI_OPERANDS, "qemu", NULL, 1, -1, "a qemu command line after --" },
	{ 0, NULL, NULL, 0, 0, NULL },
};

static const struct cli_spec vms_spec = {
	CMD, NULL, vms_options, vms_rules, 0, 0, "no operands (a qemu command line goes "
	"after --qemu --)",
};

/* ---- the request -------------------------------------------------------------- */

struct plan {
	unsigned guests, runs;
	uint64_t mem_mib, fill_mib;
	const char *kernel;   /* kernel name (kg_kernel_name) */
	char **qemu_argv;     /* --qemu -- ARGS, or NULL: the project's guest */
	const char *dir;      /* -o DIR */
	const char *chart;    /* --chart FILE, or NULL: DIR/pages_sharing.png */
	bool capture, csv, quiet, force;
	struct kb_live live;  /* knobs, scans, duration */
};

static int parse_mib(const char *option, const char *text, uint64_t *mib)
{
	uint64_t bytes;

	if (wl_parse_size(text, &bytes) != 0 || bytes < MIB || bytes % MIB || bytes > (64ull << 30)) {
		cli_error("%s: %s: '%s' is not a size in whole MiB from 1m to 64g (like 128m)", CMD,
			  option, text);
		return CLI_USAGE;
	}
	*mib = bytes / MIB;
	return 0;
}

static int parse_kernel(const char *text, struct plan *pl)
{
	for (int k = 0; k < KG_KERNEL_COUNT; k++)
		if (strcmp(text, kg_kernel_name((enum kg_kernel)k)) == 0) {
			pl->kernel = kg_kernel_name((enum kg_kernel)k);
			return 0;
		}
	cli_error("%s: --kernel: no guest kernel '%s' (%s or %s)", CMD, text,
		  kg_kernel_name((enum kg_kernel)0), kg_kernel_name((enum kg_kernel)1));
	return CLI_USAGE;
}

static int read_option(struct plan *pl, int key, const char *v)
{
	long n;
	int rc = 0;

	switch (key) {
	case OPT_GUESTS:
		rc = cli_number(CMD, "--guests", v, 1, KB_LIVE_MAX_CMDS, &n);
		pl->guests = (unsigned)n;
		break;
	case OPT_RUNS:
		rc = cli_number(CMD, "--runs", v, 1, 1000, &n);
		pl->runs = (unsigned)n;
		break;
	case OPT_MEM: rc = parse_mib("--mem", v, &pl->mem_mib); break;
	case OPT_FILL: rc = parse_mib("--fill", v, &pl->fill_mib); break;
	case OPT_KERNEL: rc = parse_kernel(v, pl); break;
	case OPT_OUTPUT: pl->dir = v; break;
	case OPT_CHART: pl->chart = v; break;
	case OPT_NO_CAPTURE: pl->capture = false; break;
	case OPT_CSV: pl->csv = true; break;
	case OPT_QUIET: pl->quiet = true; break;
	case OPT_FORCE: pl->force = true; break;
	case OPT_SCANS:
		rc = cli_number(CMD, "--scans", v, 1, 1000000000L, &n);
		pl->live.scans = (uint64_t)n;
		break;
	case OPT_DURATION:
		if (wl_parse_time(v, &pl->live.duration_ns) != 0 || !pl->live.duration_ns) {
			cli_error("%s: --duration: '%s' is not a time above 0 (like 30s, 2m)", CMD, v);
			rc = CLI_USAGE;
		}
		break;
	case OPT_KNOB: rc = cli_live_knobs(CMD, v, &pl->live); break;
	case OPT_PAGES_TO_SCAN:
		rc = cli_live_knob(CMD, "--pages-to-scan", "pages_to_scan", v, &pl->live);
		break;
	case OPT_SLEEP:
		rc = cli_live_knob(CMD, "--sleep-millisecs", "sleep_millisecs", v, &pl->live);
		break;
	}
	return rc;
}

/* Knobs that reach a steady state in seconds on a few hundred MiB, unless given. */
static void default_knobs(struct plan *pl)
{
	if (!pl->live.knob_given[WL_KNOB_PAGES_TO_SCAN] &&
	    pl->live.knobs[WL_KNOB_ADVISOR_MODE] != WL_ADVISOR_SCAN_TIME)
		cli_live_knob(CMD, "", "pages_to_scan", DEFAULT_PAGES_TO_SCAN, &pl->live);
	if (!pl->live.knob_given[WL_KNOB_SLEEP_MILLISECS])
		cli_live_knob(CMD, "", "sleep_millisecs", DEFAULT_SLEEP_MS, &pl->live);
}

static int read_plan(struct cli_args *a, bool had_dashdash, struct plan *pl)
{
	const char *v;
	int key, rc = 0;

	memset(pl, 0, sizeof *pl);
	kb_live_init(&pl->live);
	pl->guests = 2;
	pl->runs = 1;
	pl->mem_mib = 192; /* the 6.1 kernel, the initramfs in RAM and 48 MiB filled */
	pl->fill_mib = 48;
	pl->kernel = kg_kernel_name((enum kg_kernel)0);
	pl->dir = "ksmkit-vms";
	pl->capture = true;
	while (rc == 0 && (key = cli_args_next(a, &v)) != -1)
		rc = read_option(pl, key, v);
	if (rc)
		return rc;
	if (cli_args_has(a, OPT_QEMU)) {
		if (!had_dashdash) {
			cli_error("%s: --qemu: the qemu command line goes after --: ksmkit vms --qemu "
				  "-- %s ...", CMD, a->operand[0]);
			return CLI_USAGE;
		}
		pl->qemu_argv = a->operand;
	} else if (pl->mem_mib < GUEST_KERNEL_MIB + 32 ||
		   pl->fill_mib > pl->mem_mib - GUEST_KERNEL_MIB) {
		cli_error("%s: --fill %" PRIu64 "m in --mem %" PRIu64 "m: the guest's kernel needs "
			  "%d MiB beside the fill, and --mem at least %d MiB", CMD, pl->fill_mib,
			  pl->mem_mib, GUEST_KERNEL_MIB, GUEST_KERNEL_MIB + 32);
		return CLI_USAGE;
	}
	if (!pl->live.scans && !pl->live.duration_ns)
		pl->live.duration_ns = DEFAULT_DURATION_NS;
	default_knobs(pl);
	return cli_live_check_knobs(CMD, &pl->live, pl->live.scans > 0);
}

/* ---- the guests ------------------------------------------------------------------- */

/* One run's command lines, as kb_live takes them. */
struct guests {
	struct kb_live_cmd cmd[KB_LIVE_MAX_CMDS];
	char name[KB_LIVE_MAX_CMDS][16];
	char log[KB_LIVE_MAX_CMDS][ARG_MAX_TEXT];
	char console[KB_LIVE_MAX_CMDS][ARG_MAX_TEXT];
	char text[KB_LIVE_MAX_CMDS][QEMU_ARGS][ARG_MAX_TEXT];
	char *argv[KB_LIVE_MAX_CMDS][QEMU_ARGS + 1];
	char qemu[4096];
	char kernel[ARG_MAX_TEXT], initrd[ARG_MAX_TEXT];
};

/* Where the guest's kernel and initramfs are; CLI_SKIPPED when not prepared. */
static int find_guest(const struct plan *pl, struct guests *g)
{
	const char *dir = kg_default_dir(GUEST_BUILD_DIR);

	snprintf(g->kernel, sizeof g->kernel, "%s/kernels/%s/kernel", dir, pl->kernel);
	snprintf(g->initrd, sizeof g->initrd, "%s/initramfs.cpio", dir);
	if (access(g->kernel, R_OK) != 0 || access(g->initrd, R_OK) != 0) {
		cli_error("%s: no prepared guest kernel %s in %s (run `make guest` in ksmkit's "
			  "build tree, or set KSMKIT_GUEST_DIR); skipped", CMD, pl->kernel, dir);
		return CLI_SKIPPED;
	}
	return 0;
}

static void put_arg(struct guests *g, unsigned i, int *n, const char *text)
{
	if (*n >= QEMU_ARGS)
		return;
	snprintf(g->text[i][*n], ARG_MAX_TEXT, "%s", text);
	g->argv[i][*n] = g->text[i][*n];
	g->argv[i][++*n] = NULL;
}

/* The project's guest @i: TCG, its RAM mergeable on the host, filling. */
static void project_guest(const struct plan *pl, struct guests *g, unsigned i)
{
	char mem[32], append[128], serial[ARG_MAX_TEXT + 8];
	const char *const args[] = {
		g->qemu, "-machine", "q35,accel=tcg,mem-merge=on", "-cpu", "max", "-smp", "1",
		"-m", mem, "-kernel", g->kernel, "-initrd", g->initrd, "-append", append,
		"-nodefaults", "-no-reboot", "-display", "none", "-serial", serial,
	};
	int n = 0;

	snprintf(mem, sizeof mem, "%" PRIu64 "M", pl->mem_mib);
	snprintf(append, sizeof append,
		 "console=ttyS0 panic=-1 quiet mitigations=off ksmkit.fill=%" PRIu64, pl->fill_mib);
	snprintf(serial, sizeof serial, "file:%s", g->console[i]);
	for (size_t k = 0; k < sizeof args / sizeof args[0]; k++)
		put_arg(g, i, &n, args[k]);
}

static void build_guests(const struct plan *pl, struct guests *g, unsigned run)
{
	for (unsigned i = 0; i < pl->guests; i++) {
		struct kb_live_cmd *c = &g->cmd[i];

		snprintf(g->name[i], sizeof g->name[i], "vm%u", i + 1);
		snprintf(g->log[i], sizeof g->log[i], "%s/run%u-vm%u.log", pl->dir, run, i + 1);
		snprintf(g->console[i], sizeof g->console[i], "%s/run%u-vm%u.console", pl->dir, run,
			 i + 1);
		c->name = g->name[i];
		c->path = g->qemu;
		c->log_path = g->log[i];
		c->merge_any = false; /* qemu marks its RAM itself (mem-merge=on) */
		if (pl->qemu_argv) {
			c->argv = pl->qemu_argv;
			continue;
		}
		project_guest(pl, g, i);
		c->argv = g->argv[i];
	}
}

/* Whether guest @i's console says its fill is done. */
static bool guest_filled(const struct guests *g, unsigned i)
{
	char text[8192];
	FILE *f = fopen(g->console[i], "r");
	size_t n;

	if (!f)
		return false;
	n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = '\0';
	return strstr(text, "ksmkit-guest: filled ") != NULL;
}

/* ---- one run ------------------------------------------------------------------------ */

struct outcome {
	int status;
	uint64_t scans;
	double time_s, ksmd_cpu_s;
	int64_t shared, sharing, zero, profit;
	long long snapshots;  /* -1: no capture */
	bool estimated;       /* ksmkit estimate ran on the run's capture */
	int64_t est_shared, est_sharing;
	unsigned filled;      /* guests whose console says the fill is done */
	struct trace *trace;  /* kept for the chart */
};

static int write_trace(const char *path, const struct trace *t)
{
	FILE *f = cli_output_open(CMD, path);

	if (!f)
		return CLI_FAILED;
	if (trace_write_csv(t, f) != 0 && !ferror(f))
		cli_error("%s: cannot write %s: %s", CMD, path, strerror(errno));
	return cli_output_close(CMD, f, path);
}

static void take_outcome(const struct plan *pl, const struct guests *g,
			 const struct kb_live_result *res, struct outcome *o)
{
	const struct trace_row *last = &res->run.trace->row[res->run.trace->nrows - 1];

	o->scans = last->scan;
	o->time_s = (double)last->time_ns / 1e9;
	o->ksmd_cpu_s = (double)last->ksmd_cpu_ns / 1e9;
	o->shared = last->counter[TRACE_PAGES_SHARED];
	o->sharing = last->counter[TRACE_PAGES_SHARING];
	o->zero = last->counter[TRACE_KSM_ZERO_PAGES];
	o->profit = last->counter[TRACE_GENERAL_PROFIT];
	for (unsigned i = 0; i < pl->guests && !pl->qemu_argv; i++)
		o->filled += guest_filled(g, i);
}

/* ---- the estimate of a run --------------------------------------------------------- */

/* The semantics of this machine's kernel for the simulator (6.18 when unknown). */
static enum wl_kernel host_kernel(void)
{
	enum wl_kernel k = WL_KERNEL_6_18;
	struct utsname u;
	char why[160];

	if (uname(&u) == 0)
		wl_kernel_from_release(u.release, &k, why, sizeof why);
	return k;
}

/*
 * What ksmkit estimate predicts for run @run from its capture alone (the
 * guests' mergeable memory, snapshot by snapshot), at the run's knobs and
 * for as many full scans as the run had, each snapshot after the scan it
 * was taken at (--schedule scans): the figure the measured one checks.
 */
static void estimate_run(const struct plan *pl, unsigned run, const char *cap, struct outcome *o)
{
	/* scan for scan: the capture knows ksmd's full_scans at each snapshot */
	struct est_options opt = { .capture = cap, .schedule = EST_BY_SCANS, .scans = o->scans,
				   .kernel = host_kernel() };
	struct est_capture ec;
	struct est_result r;
	char err[640];

	for (int k = 0; k < WL_KNOB_COUNT; k++)
		opt.knobs.value[k] = pl->live.knobs[k];
	if (est_capture_read(cap, &ec, err, sizeof err) != 0) {
		cli_error("%s: run %u: no estimate: %s", CMD, run, err);
		return;
	}
	if (cli_estimate_run(CMD, &opt, &ec, &r, true, err, sizeof err) != CLI_OK) {
		cli_error("%s: run %u: no estimate: %s", CMD, run, err);
	} else {
		o->estimated = true;
		o->est_shared = r.last.pages_shared;
		o->est_sharing = r.last.pages_sharing;
		est_result_free(&r);
	}
	est_capture_free(&ec);
}

static int one_run(const struct plan *pl, struct guests *g, unsigned run, struct outcome *o)
{
	struct kb_live live = pl->live;
	struct kb_live_result res;
	struct kb_options opt;
	struct cli_follow follow;
	char msg[2048], what[64], name[64], path[ARG_MAX_TEXT], cap[ARG_MAX_TEXT];

	memset(o, 0, sizeof *o);
	o->snapshots = -1;
	build_guests(pl, g, run);
	snprintf(name, sizeof name, "vms run %u", run);
	snprintf(what, sizeof what, "vms: run %u/%u", run, pl->runs);
	snprintf(cap, sizeof cap, "%s/run%u.cap", pl->dir, run);
	live.name = name;
	live.cmds = g->cmd;
	live.ncmds = pl->guests;
	live.memory_bytes = pl->qemu_argv ? 0 : pl->guests * (pl->mem_mib + QEMU_OVERHEAD_MIB) * MIB;
	if (pl->capture)
		cli_follow_init(&follow, cap, &live.hooks);
	kb_options_init(&opt);
	opt.force = pl->force;
	opt.note = cli_live_note;
	opt.note_arg = (void *)CMD;
	if (!pl->quiet && isatty(STDERR_FILENO)) {
		opt.progress = cli_live_progress;
		opt.progress_arg = what;
	}
	o->status = kb_live_run(&live, &opt, &res, msg, sizeof msg);
	if (opt.progress)
		fputs("\r\033[K", stderr);
	if (o->status != KB_OK)
		cli_error("%s: run %u: %s", CMD, run, msg);
	if (res.run.trace && res.run.trace->nrows) {
		snprintf(path, sizeof path, "%s/run%u.csv", pl->dir, run);
		if (write_trace(path, res.run.trace) != 0 && o->status == KB_OK)
			o->status = CLI_FAILED;
		take_outcome(pl, g, &res, o);
		o->trace = res.run.trace;
		res.run.trace = NULL;
	}
	if (pl->capture && res.end != KB_LIVE_END_NONE)
		o->snapshots = cli_follow_count(CMD, cap);
	if (o->snapshots > 0 && o->trace)
		estimate_run(pl, run, cap, o);
	if (o->status == KB_OK && !pl->qemu_argv && o->filled < pl->guests) {
		cli_error("%s: run %u: only %u of %u guests said their fill was done (their consoles "
			  "are %s/run%u-vm*.console): the run measured something else", CMD, run,
			  o->filled, pl->guests, pl->dir, run);
		o->status = CLI_FAILED;
	}
	kb_live_result_free(&res);
	return o->status;
}

/* ---- what it says ------------------------------------------------------------------ */

/* Which figure of a run mean_stdev() takes. */
enum figure { SHARED, SHARING, EST_SHARED, EST_SHARING };

static double figure_of(const struct outcome *o, enum figure f)
{
	switch (f) {
	case SHARED: return (double)o->shared;
	case SHARING: return (double)o->sharing;
	case EST_SHARED: return (double)o->est_shared;
	case EST_SHARING: return (double)o->est_sharing;
	}
	return 0;
}

/* Over the runs that have the figure (an estimate needs a capture); how many. */
static unsigned mean_stdev(const struct outcome *o, unsigned n, enum figure f, double *mean,
			   double *sd)
{
	double sum = 0, sq = 0;
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++)
		if (f < EST_SHARED || o[i].estimated) {
			sum += figure_of(&o[i], f);
			k++;
		}
	*mean = k ? sum / k : 0;
	for (unsigned i = 0; i < n; i++)
		if (f < EST_SHARED || o[i].estimated) {
			double d = figure_of(&o[i], f) - *mean;

			sq += d * d;
		}
	*sd = k > 1 ? sqrt(sq / (k - 1)) : 0; /* the sample's */
	return k;
}

static void print_csv(const struct outcome *o, unsigned n, FILE *out)
{
	fprintf(out, "run,full_scans,time_s,pages_shared,pages_sharing,ksm_zero_pages,"
		     "general_profit,ksmd_cpu_s,snapshots,guests_filled,status,"
		     "estimated_pages_shared,estimated_pages_sharing\n");
	for (unsigned i = 0; i < n; i++) {
		fprintf(out, "%u,%" PRIu64 ",%.3f,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
			     ",%.3f,%lld,%u,%d,",
			i + 1, o[i].scans, o[i].time_s, o[i].shared, o[i].sharing, o[i].zero,
			o[i].profit, o[i].ksmd_cpu_s, o[i].snapshots, o[i].filled, o[i].status);
		if (o[i].estimated)
			fprintf(out, "%" PRId64 ",%" PRId64 "\n", o[i].est_shared, o[i].est_sharing);
		else
			fprintf(out, ",\n");
	}
}

/* "NAME: MEAN ± SD pages" over the runs that have the figure. */
static unsigned print_mean(FILE *out, const char *name, const struct outcome *o, unsigned n,
			   enum figure f, double *mean)
{
	double sd;
	unsigned k = mean_stdev(o, n, f, mean, &sd);

	if (!k)
		return 0;
	fprintf(out, "%-24s %.0f", name, *mean);
	if (k > 1)
		fprintf(out, " ± %.0f pages (mean ± sample stdev of %u runs)\n", sd, k);
	else
		fprintf(out, " pages (one run)\n");
	return k;
}

static void print_table(const struct plan *pl, const struct outcome *o, unsigned n, FILE *out)
{
	double measured, estimated, unused;

	if (pl->qemu_argv)
		fprintf(out, "# ksmkit vms: %u guests of your qemu command line (%s)", pl->guests,
			pl->qemu_argv[0]);
	else
		fprintf(out, "# ksmkit vms: %u guests of Linux %s, %" PRIu64 " MiB each, %" PRIu64
			     " MiB filled alike", pl->guests, pl->kernel, pl->mem_mib, pl->fill_mib);
	fprintf(out, "; pages_to_scan %" PRIu64 ", sleep_millisecs %" PRIu64 "\n",
		pl->live.knobs[WL_KNOB_PAGES_TO_SCAN], pl->live.knobs[WL_KNOB_SLEEP_MILLISECS]);
	fprintf(out, "%4s %10s %8s %13s %14s %11s %10s %7s %15s\n", "run", "full_scans", "time_s",
		"pages_shared", "pages_sharing", "ksmd_cpu_s", "snapshots", "filled",
		"estimated");
	for (unsigned i = 0; i < n; i++) {
		char snaps[24] = "-", est[24] = "-";

		if (o[i].snapshots >= 0)
			snprintf(snaps, sizeof snaps, "%lld", o[i].snapshots);
		if (o[i].estimated)
			snprintf(est, sizeof est, "%" PRId64, o[i].est_sharing);
		fprintf(out, "%4u %10" PRIu64 " %8.1f %13" PRId64 " %14" PRId64 " %11.2f %10s %4u/%u "
			     "%15s%s\n",
			i + 1, o[i].scans, o[i].time_s, o[i].shared, o[i].sharing, o[i].ksmd_cpu_s,
			snaps, o[i].filled, pl->qemu_argv ? 0 : pl->guests, est,
			o[i].status == KB_OK ? "" : "  FAILED");
	}
	print_mean(out, "pages_shared:", o, n, SHARED, &unused);
	print_mean(out, "pages_sharing:", o, n, SHARING, &measured);
	print_mean(out, "estimated pages_shared:", o, n, EST_SHARED, &unused);
	if (print_mean(out, "estimated pages_sharing:", o, n, EST_SHARING, &estimated) &&
	    measured > 0)
		fprintf(out, "estimated / measured pages_sharing: %.3f (ksmkit estimate of each "
			     "run's capture, at its knobs and length)\n", estimated / measured);
}

#ifdef HAVE_PLOT
static int draw_chart(const struct plan *pl, const struct outcome *o, unsigned n,
		      const char *path)
{
	struct plot_chart *c = plot_new(PLOT_LINES);
	char err[300], title[200];
	int rc = 0;

	snprintf(title, sizeof title, "%u identical guests on this host's KSM: pages_sharing, "
		 "%u run%s", pl->guests, n, n == 1 ? "" : "s");
	if (!c || plot_set_labels(c, title, "time (s)", "pages_sharing", err, sizeof err) != 0)
		rc = -1;
	for (unsigned r = 0; rc == 0 && r < n; r++) {
		char name[32];
		int s;

		if (!o[r].trace)
			continue;
		snprintf(name, sizeof name, "run %u", r + 1);
		if ((s = plot_add_series(c, name, err, sizeof err)) < 0)
			rc = -1;
		for (size_t i = 0; rc == 0 && i < o[r].trace->nrows; i++) {
			const struct trace_row *row = &o[r].trace->row[i];

			rc = plot_add_point(c, s, (double)row->time_ns / 1e9,
					    (double)row->counter[TRACE_PAGES_SHARING], err, sizeof err);
		}
	}
	if (rc == 0 && plot_write(c, path, 900, 540, err, sizeof err) != 0)
		rc = -1;
	if (rc != 0)
		cli_error("%s: chart %s: %s", CMD, path, c ? err : "out of memory");
	plot_free(c);
	return rc == 0 ? 0 : CLI_FAILED;
}
#else
static int draw_chart(const struct plan *pl, const struct outcome *o, unsigned n,
		      const char *path)
{
	(void)pl, (void)o, (void)n;
	cli_error("%s: no chart %s: ksmkit was built without GNU libplot", CMD, path);
	return 0;
}
#endif

/* ---- the command ------------------------------------------------------------------ */

static int prepare(const struct plan *pl, struct guests *g)
{
	int rc;

	if (pl->qemu_argv)
		rc = cli_live_resolve(CMD, "--qemu", pl->qemu_argv[0], g->qemu, sizeof g->qemu);
	else if (cli_live_resolve(CMD, "qemu", QEMU, g->qemu, sizeof g->qemu) != 0)
		rc = CLI_SKIPPED; /* said: not found in PATH (apt-get install qemu-system-x86) */
	else
		rc = find_guest(pl, g);
	if (rc)
		return rc;
	if (mkdir(pl->dir, 0755) != 0 && errno != EEXIST) {
		cli_error("%s: cannot create %s: %s", CMD, pl->dir, strerror(errno));
		return CLI_FAILED;
	}
	return 0;
}

static int vms(const struct plan *pl)
{
	struct guests *g = calloc(1, sizeof *g);
	struct outcome *o = calloc(pl->runs, sizeof *o);
	char chart[ARG_MAX_TEXT];
	unsigned done = 0;
	int rc = g && o ? prepare(pl, g) : CLI_FAILED;

	for (unsigned r = 1; rc == 0 && r <= pl->runs; r++) {
		int st = one_run(pl, g, r, &o[r - 1]);

		done += o[r - 1].trace != NULL;
		if (st == KB_SKIPPED || st == KB_BAD_INPUT || (st != KB_OK && !o[r - 1].trace))
			rc = st; /* nothing more can run */
		else if (st != KB_OK)
			rc = CLI_FAILED;
	}
	if (done) {
		if (pl->csv)
			print_csv(o, done, stdout);
		else
			print_table(pl, o, done, stdout);
		snprintf(chart, sizeof chart, "%s/pages_sharing.png", pl->dir);
		if (draw_chart(pl, o, done, pl->chart ? pl->chart : chart) != 0 && rc == 0)
			rc = CLI_FAILED;
		else if (!pl->quiet)
			cli_error("%s: traces, captures, consoles and the chart (%s) are in %s/", CMD,
				  pl->chart ? pl->chart : chart, pl->dir);
	}
	for (unsigned r = 0; o && r < pl->runs; r++)
		trace_free(o[r].trace);
	free(o);
	free(g);
	return rc;
}

int cmd_vms(int argc, char **argv)
{
	struct cli_args args;
	struct plan pl;
	bool had_dashdash = false;
	int rc;

	for (int i = 1; i < argc && !had_dashdash; i++)
		had_dashdash = strcmp(argv[i], "--") == 0;
	if (cli_args_parse(&vms_spec, argc, argv, &args) != 0)
		return CLI_USAGE;
	rc = read_plan(&args, had_dashdash, &pl);
	return rc != 0 ? rc : vms(&pl);
}
