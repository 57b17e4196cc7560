/*
 * cmd_run_cmd.c - `ksmkit run --cmd [OPTIONS] -- CMD [ARGS]`: a command of
 * the user's with PR_SET_MEMORY_MERGE set before it execs (as systemd's
 * MemoryKSM= does), measured on this machine's KSM full scan by full scan
 * (backend.h, kb_live_run: the backend's lock, knobs restored whatever ends
 * the run, the refusal when others use KSM), with the same trace rows as
 * `ksmkit run FILE.wl`; optionally captured at every full scan
 * (--capture FILE). The run ends after --scans N, after --duration T, or
 * when the command exits; the command is killed then if it still runs.
 * Everything about the request is checked here first (the command must be
 * one that can be exec'd), so bad input is exit 2 before anything starts.
 */
#include "config.h"
#include "cli.h"
#include "cli_live.h"
#include "cli_output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CMD "run"

static int print_result(const struct run_cmd_args *c, const struct kb_live_result *res,
			const char *end, FILE *out)
{
	const struct trace *t = res->run.trace;
	char engine[200];

	if (c->csv)
		return trace_write_csv(t, out);
	if (c->json)
		return trace_write_json(t, out);
	snprintf(engine, sizeof engine, "Linux %s (the kernel's KSM), PR_SET_MEMORY_MERGE set "
		 "before exec", t->kernel ? t->kernel : "?");
	cli_print_trace(t, engine, out);
	fprintf(out, "# ended: %s\n", end);
	if (res->run.invalid_rows)
		fprintf(out, "# %llu row(s) invalid: ksmd began its next batch before the row was "
			     "read\n", (unsigned long long)res->run.invalid_rows);
	return 0;
}

static int check_files(const struct run_cmd_args *c, const char *program)
{
	const struct cli_file outputs[] = { { "-o", c->output }, { "--capture", c->capture } };
	const struct cli_file inputs[] = { { "the command", program } };

	return cli_check_outputs(CMD, outputs, 2, inputs, 1);
}

int cli_run_cmd(struct run_cmd_args *c)
{
	struct kb_live_cmd cmd = { .name = "cmd", .argv = c->argv, .merge_any = true };
	struct kb_live_result res;
	struct kb_options opt;
	struct cli_follow follow;
	char program[4096], msg[2048], end[300];
	FILE *out;
	int status, rc;

	if ((rc = cli_live_resolve(CMD, "--cmd", c->argv[0], program, sizeof program)) != 0 ||
	    (rc = cli_live_check_knobs(CMD, &c->live, c->live.scans > 0)) != 0 ||
	    (rc = check_files(c, program)) != 0)
		return rc;
	cmd.path = program;
	c->live.name = c->argv[0];
	c->live.cmds = &cmd;
	c->live.ncmds = 1;
	c->live.end_on_exit_ok = true;
	if (c->capture)
		cli_follow_init(&follow, c->capture, &c->live.hooks);
	kb_options_init(&opt);
	opt.force = c->force;
	opt.note = cli_live_note;
	opt.note_arg = (void *)CMD;
	if (!c->quiet && isatty(STDERR_FILENO)) {
		opt.progress = cli_live_progress;
		opt.progress_arg = (void *)"run --cmd";
	}
	if (!(out = cli_output_open(CMD, c->output)))
		return CLI_FAILED;
	status = kb_live_run(&c->live, &opt, &res, msg, sizeof msg);
	if (opt.progress)
		fputs("\r\033[K", stderr);
	cli_live_end_text(&c->live, &res, end, sizeof end);
	if (res.run.trace && res.run.trace->nrows && print_result(c, &res, end, out) != 0 &&
	    status == KB_OK)
		status = CLI_FAILED;
	if (status != KB_OK && msg[0])
		cli_error("%s: %s", CMD, msg);
	else if (status == KB_OK && (c->csv || c->json) && !c->quiet)
		cli_error("%s: ended: %s", CMD, end);
	if (c->capture && res.end != KB_LIVE_END_NONE) {
		long long n = cli_follow_count(CMD, c->capture);

		if (n < 0 && status == KB_OK)
			status = CLI_FAILED;
		else if (n >= 0 && !c->quiet)
			cli_error("%s: --capture: %lld snapshot%s in %s", CMD, n, n == 1 ? "" : "s",
				  c->capture);
	}
	if (cli_output_close(CMD, out, c->output) != CLI_OK && status == KB_OK)
		status = CLI_FAILED;
	kb_live_result_free(&res);
	return status;
}
