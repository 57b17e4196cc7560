/*
 * cmd_compare.c - `ksmkit compare`: run a workload on this kernel (or, with
 * --guest nodes=N, on the kernel of a qemu guest with N NUMA nodes) and on
 * the simulator, and compare them scan by scan (every counter the kernel
 * has, every process's ksm_stat, the page partition); or compare two saved
 * CSV traces. The pipeline is compare/xval.h's: the kernel runs first, the
 * simulator then follows the semantics of the kernel that actually ran (its
 * release), whatever the workload's kernel key says. This file turns its
 * result into the report, the messages and the exit status. The workload's
 * [expect] sections are checked on both sides, and the report shows each
 * check's value on each (compare/expect.h).
 *
 * Exit status: 0 identical (and every expectation holds on both sides), 1
 * different, an expectation failed, or a run failed, 2 bad usage or input,
 * 77 the kernel side could not run here (the simulator's side is still
 * printed, with the reason).
 */
#include "cli.h"
#include "cli_args.h"
#include "cli_output.h"
#include "cli_sim.h"
#include "expect.h"
#include "xval.h"

#include <string.h>
#include <unistd.h>

struct compare_args {
	bool json, quiet, force, saved;
	const char *output;
	const char *guest;  /* --guest SPEC */
	struct sim_costs costs;
};

/*
 * Both sides' expectations (none: @sides NULL): the table shows them, and
 * each failed check is said on stderr as FILE:LINE. CLI_OK when every one
 * holds (or does not apply) on both sides.
 */
struct both_sides {
	const struct workload *wl;
	const struct xval_side *a, *b;
	struct expect_report ra, rb;
};

static int judge_both(struct both_sides *sides, const char *name_a, const char *name_b)
{
	const struct workload *wl = sides->wl;
	char prefix_a[64], prefix_b[64];

	if (expect_evaluate(wl, sides->a->trace, sides->a->pages, sides->a->npages, &sides->ra) ||
	    expect_evaluate(wl, sides->b->trace, sides->b->pages, sides->b->npages, &sides->rb)) {
		cli_error("compare: out of memory checking the expectations");
		return CLI_FAILED;
	}
	snprintf(prefix_a, sizeof(prefix_a), "ksmkit: compare: %s: ", name_a);
	snprintf(prefix_b, sizeof(prefix_b), "ksmkit: compare: %s: ", name_b);
	expect_write_report(wl, &sides->ra, prefix_a, false, stderr);
	expect_write_report(wl, &sides->rb, prefix_b, false, stderr);
	return sides->ra.failed || sides->rb.failed ? CLI_FAILED : CLI_OK;
}

static int report(const struct trace *a, const struct trace *b, const struct cmp_report *rep,
		  const struct compare_args *args, const char *name_a, const char *name_b,
		  struct both_sides *sides)
{
	FILE *out = cli_output_open("compare", args->output);
	int judged = sides && sides->wl->nexpects ? judge_both(sides, name_a, name_b) : CLI_OK;

	if (!out)
		return CLI_FAILED;
	if (args->json) {
		cmp_write_json(a, b, rep, out);
	} else {
		cmp_write_table(a, b, rep, name_a, name_b, out);
		if (sides && sides->wl->nexpects)
			expect_write_both(sides->wl, &sides->ra, &sides->rb, name_a, name_b, out);
	}
	if (sides) {
		expect_report_free(&sides->ra);
		expect_report_free(&sides->rb);
	}
	if (cli_output_close("compare", out, args->output) != CLI_OK)
		return CLI_FAILED;
	return cmp_report_equal(rep) && judged == CLI_OK ? CLI_OK : CLI_FAILED;
}

/* --sim-only A.csv B.csv: two saved traces. */
static int compare_saved(const char *pa, const char *pb, const struct compare_args *args)
{
	struct trace *t[2] = { NULL, NULL };
	const char *path[2] = { pa, pb };
	struct cmp_report rep;
	struct cmp_options opt = { 0 };
	char err[512];
	int rc = CLI_USAGE;

	cmp_report_init(&rep);
	for (int i = 0; i < 2; i++) {
		FILE *f = fopen(path[i], "r");

		if (!f) {
			cli_error("compare: %s: %m", path[i]);
			goto out;
		}
		if (trace_read_csv(f, path[i], &t[i], err, sizeof(err)) != 0) {
			fclose(f);
			cli_error("compare: %s", err);
			goto out;
		}
		fclose(f);
	}
	if (cmp_traces(t[0], t[1], &opt, &rep) != 0) {
		cli_error("compare: the traces name different processes");
		goto out;
	}
	rc = report(t[0], t[1], &rep, args, pa, pb, NULL);
out:
	cmp_report_free(&rep);
	trace_free(t[0]);
	trace_free(t[1]);
	return rc;
}

static void print_note(const char *note, void *arg)
{
	if (!*(const bool *)arg)
		fprintf(stderr, "ksmkit compare: %s\n", note);
}

/* The kernel could not run: show the simulator's side and say why. */
static int sim_side_only(const struct workload *wl, const struct xval_side *sim, const char *why,
			 const struct compare_args *args)
{
	FILE *out;

	cli_error("compare: the kernel side was skipped: %s", why);
	if (cli_check_expectations(wl, sim->trace, sim->pages, sim->npages, "compare: sim",
				   args->quiet) != CLI_OK)
		return CLI_FAILED;
	if (!(out = cli_output_open("compare", args->output)))
		return CLI_FAILED;
	if (args->json)
		trace_write_json(sim->trace, out);
	else
		cli_print_trace(sim->trace, "the simulator (kernel side skipped)", out);
	if (cli_output_close("compare", out, args->output) != CLI_OK)
		return CLI_FAILED;
	return CLI_SKIPPED;
}

/* A step of the pipeline failed: say which, as FILE:LINE when the kernel side says so. */
static int report_failure(const char *path, const struct compare_args *args,
			  const struct xval_result *res)
{
	switch (res->failed) {
	case XVAL_STEP_KERNEL:
		if (strncmp(res->kernel_message, path, strlen(path)) == 0)
			cli_error("%s", res->kernel_message); /* FILE:LINE: what is wrong */
		else
			cli_error("compare: %s: %s: %s", path, args->guest ? "guest" : "kernel",
				  res->kernel_message);
		return res->status == KB_BAD_INPUT ? CLI_USAGE : CLI_FAILED;
	case XVAL_STEP_SEMANTICS:
		cli_error("compare: %s: %s", path, res->why);
		return CLI_FAILED;
	case XVAL_STEP_SIM:
		cli_error("compare: %s: simulator: %s", path, res->why);
		return CLI_FAILED;
	default:
		cli_error("compare: out of memory, or the traces name different processes");
		return CLI_FAILED;
	}
}

/*
 * The pipeline's options for @args: pages compared, notes unless -q, the
 * kernel side here (--force) or in the guest --guest asks for. 0, or
 * CLI_USAGE after the message for a bad --guest.
 */
static int pipeline_options(const char *path, const struct compare_args *args,
			    struct xval_options *opt, struct kb_options *host,
			    struct kg_options *guest)
{
	char why[200];

	xval_options_init(opt);
	opt->costs = &args->costs;
	opt->pages = true;
	opt->note = print_note;
	opt->note_arg = (void *)&args->quiet;
	kb_options_init(host);
	host->force = args->force;
	opt->host = host;
	if (!args->guest)
		return 0;
	kg_options_init(guest);
	if (kg_parse_spec(args->guest, guest, why, sizeof(why)) != 0) {
		cli_error("compare: %s: guest: --guest %s: %s", path, args->guest, why);
		return CLI_USAGE;
	}
	guest->dir = kg_default_dir(GUEST_BUILD_DIR);
	opt->guest = guest;
	return 0;
}

static int compare_workload(const char *path, const struct compare_args *args)
{
	struct xval_options opt;
	struct xval_result res;
	struct kb_options host;
	struct kg_options guest;
	struct workload *wl;
	struct wl_error werr;
	char msg[2048];
	int rc;

	if (wl_parse_file(path, &wl, &werr) != 0) {
		cli_error("%s", werr.text);
		return CLI_USAGE;
	}
	/* before the kernel runs: the simulator's side must fit beside both traces */
	if (cli_admit(wl, &(struct sim_admit_options){ .costs = &args->costs, .traces = 2,
						       .capture_bytes = XVAL_CAPTURE_BYTES },
		      msg, sizeof(msg)) != 0) {
		cli_error("%s", msg);
		wl_free(wl);
		return CLI_USAGE;
	}
	if (pipeline_options(path, args, &opt, &host, &guest) != 0) {
		wl_free(wl);
		return CLI_USAGE;
	}
	switch (xval_run(wl, &opt, &res)) {
	case XVAL_FAILED:
		rc = report_failure(path, args, &res);
		break;
	case XVAL_SIM_ONLY:
		rc = sim_side_only(wl, &res.sim, res.kernel_message, args);
		break;
	default: {
		struct both_sides sides = { .wl = wl, .a = &res.sim, .b = &res.kernel };

		rc = report(res.sim.trace, res.kernel.trace, &res.report, args, "sim",
			    args->guest ? "guest" : "kernel", &sides);
	}
	}
	xval_result_free(&res);
	wl_free(wl);
	return rc;
}

static const struct cli_opt compare_options[] = {
	{ "json", 0, false, 'j' },
	{ "sim-only", 0, false, 's' },
	{ "force", 0, false, 'f' },
	{ "output", 'o', true, 'o' },
	{ "quiet", 'q', false, 'q' },
	{ "costs", 0, true, 'C' },
	{ "guest", 0, true, 'G' },
	{ NULL, 0, false, 0 },
};

#define SAVED_ONLY "--sim-only compares saved traces and runs nothing"

static const struct cli_rule compare_rules[] = {
	{ CLI_EXCLUDES, "sim-only guest force costs", SAVED_ONLY, 0, 0, NULL },
	{ CLI_AT_MOST_ONE, "guest force", "a guest never touches this machine's KSM", 0, 0, NULL },
	{ CLI_OPERANDS, "sim-only", NULL, 2, 2, "two saved traces (CSV)" },
	{ 0, NULL, NULL, 0, 0, NULL },
};

static const struct cli_spec compare_spec = {
	"compare", NULL, compare_options, compare_rules, 1, 1, "exactly one workload file",
};

/* -o onto none of the inputs: the workload and costs, or the two traces. */
static int check_output(const struct compare_args *args, const struct cli_args *parsed,
			const char *costs)
{
	const struct cli_file output = { "-o", args->output };
	struct cli_file inputs[2] = { { "the workload", parsed->operand[0] },
				      { "the costs file", costs } };

	if (args->saved) {
		inputs[0].what = inputs[1].what = "the trace";
		inputs[1].path = parsed->operand[1];
	}
	return cli_check_outputs("compare", &output, 1, inputs, 2);
}

int cmd_compare(int argc, char **argv)
{
	struct compare_args args = { 0 };
	struct cli_args parsed;
	const char *costs = NULL, *value;
	int c;

	if (cli_args_parse(&compare_spec, argc, argv, &parsed) != 0)
		return CLI_USAGE;
	while ((c = cli_args_next(&parsed, &value)) != -1) {
		switch (c) {
		case 'j': args.json = true; break;
		case 's': args.saved = true; break;
		case 'f': args.force = true; break;
		case 'o': args.output = value; break;
		case 'q': args.quiet = true; break;
		case 'C': costs = value; break;
		case 'G': args.guest = value; break;
		}
	}
	if (check_output(&args, &parsed, costs) != 0)
		return CLI_USAGE;
	if (args.saved)
		return compare_saved(parsed.operand[0], parsed.operand[1], &args);
	if (cli_load_costs(costs, &args.costs) != 0)
		return CLI_USAGE;
	return compare_workload(parsed.operand[0], &args);
}
