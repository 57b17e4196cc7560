/*
 * cli_expect.c - a workload's [expect] sections after `ksmkit sim` or `run`:
 * judged by the engine's trace and page partition (compare/expect.h), every
 * failed check said on stderr as FILE:LINE with what was expected and what
 * the row holds, a check the kernel cannot make noted, and the exit status.
 */
#include "cli.h"
#include "expect.h"

#include <stdio.h>

int cli_check_expectations(const struct workload *wl, const struct trace *t,
			   const struct trace_page *pages, size_t npages, const char *engine,
			   bool quiet)
{
	struct expect_report rep;
	size_t failed;

	if (wl->nexpects == 0 || !t)
		return CLI_OK;
	if (expect_evaluate(wl, t, pages, npages, &rep) != 0) {
		cli_error("%s: out of memory checking the expectations", engine);
		return CLI_FAILED;
	}
	expect_write_report(wl, &rep, "ksmkit: ", false, stderr);
	for (size_t e = 0; e < rep.n && !quiet; e++)
		for (size_t i = 0; i < rep.result[e].nchecks; i++) {
			char text[600];

			if (rep.result[e].check[i].verdict != EXPECT_NOT_APPLICABLE)
				continue;
			cli_error("%s: note: [expect %s] %s", engine, rep.result[e].ex->name,
				  expect_check_text(wl, &rep.result[e], i, text, sizeof(text)));
		}
	failed = rep.failed;
	if (!quiet || failed)
		cli_error("%s: %zu of %zu expectations hold%s (judged as kernel %s)", engine,
			  rep.passed, rep.n, failed ? ", the others FAIL" : "", rep.kernel);
	expect_report_free(&rep);
	return failed ? CLI_FAILED : CLI_OK;
}
