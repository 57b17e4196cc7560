/*
 * fuzz_trace.c - libFuzzer target for the trace CSV reader
 * (trace/trace_csv_read.c, trace_read_csv). Any input must either read into a
 * trace that survives a round trip (written as CSV, read back equal by
 * trace_equal, and written as JSON without error) or fail with
 * "fuzz.csv:LINE: ..." (or "fuzz.csv: ..."); never crash, leak or hang.
 * Built and run by tests/fuzz/run-fuzz.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *text)
{
	fprintf(stderr, "%s\n%s\n", what, text ? text : "");
	abort();
}

/* @t written as CSV must read back as the same trace. */
static void check_round_trip(const struct trace *t)
{
	char *text = NULL, err[512];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct trace *again = NULL;

	if (!f || trace_write_csv(t, f) != 0)
		fail("trace_write_csv failed", NULL);
	fclose(f);
	f = fmemopen(text, len, "r");
	if (!f)
		fail("fmemopen failed", NULL);
	if (trace_read_csv(f, "again.csv", &again, err, sizeof(err)) != 0)
		fail(err, text);
	fclose(f);
	if (!trace_equal(t, again))
		fail("a CSV round trip changed the trace:", text);
	trace_free(again);
	free(text);
}

static void check_json(const struct trace *t)
{
	FILE *f = fopen("/dev/null", "w");

	if (!f || trace_write_json(t, f) != 0)
		fail("trace_write_json failed", NULL);
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace *t = NULL;
	char err[512];
	FILE *in;
	int rc;

	/* fmemopen wants a buffer of at least one byte */
	in = size ? fmemopen((void *)data, size, "r") : fopen("/dev/null", "r");
	if (!in)
		return 0;
	rc = trace_read_csv(in, "fuzz.csv", &t, err, sizeof(err));
	fclose(in);
	if (rc != 0) {
		if (t || strncmp(err, "fuzz.csv", 8) != 0)
			fail("a refusal that does not name the input:", err);
		return 0;
	}
	check_round_trip(t);
	check_json(t);
	trace_free(t);
	return 0;
}
