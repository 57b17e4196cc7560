/*
 * fuzz_trace.c - libFuzzer target for the trace stage's CSV readers
 * (trace/trace_csv_read.c, trace_read_csv; trace/trace_pages.c,
 * trace_pages_read_csv). Any input must either read into a trace that
 * survives a round trip (written as CSV, read back equal by trace_equal,
 * and written as JSON without error) or fail with "fuzz.csv:LINE: ..." (or
 * "fuzz.csv: ..."); and the same for a page partition, whose names are
 * those of fuzz_names. Never crash, leak or hang. Built and run by
 * tests/fuzz/run-fuzz.
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

/* The names a fuzzed page partition may use (the seeds' workloads have them). */
static const char *const fuzz_procs[] = { "main", "child" };
static const char *const fuzz_regions[] = { "a", "z" };
static const struct trace_page_names fuzz_names = { fuzz_procs, 2, fuzz_regions, 2 };

/* A partition written as CSV must read back as the same pages. */
static void check_pages_round_trip(const struct trace_page *pages, size_t n)
{
	struct trace_page *again = NULL;
	char *text = NULL, err[512];
	size_t len = 0, nagain = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f || trace_pages_write_csv(pages, n, &fuzz_names, f) != 0)
		fail("trace_pages_write_csv failed", NULL);
	fclose(f);
	f = fmemopen(text, len, "r");
	if (!f)
		fail("fmemopen failed", NULL);
	if (trace_pages_read_csv(f, "again.csv", &fuzz_names, &again, &nagain, err, sizeof(err)) != 0)
		fail(err, text);
	fclose(f);
	if (nagain != n)
		fail("a CSV round trip changed the number of pages:", text);
	for (size_t i = 0; i < n; i++)
		if (again[i].scan != pages[i].scan || again[i].proc != pages[i].proc ||
		    again[i].region != pages[i].region || again[i].page != pages[i].page ||
		    again[i].frame != pages[i].frame || again[i].flags != pages[i].flags)
			fail("a CSV round trip changed a page:", text);
	free(again);
	free(text);
}

static void fuzz_pages(const uint8_t *data, size_t size)
{
	struct trace_page *pages = NULL;
	char err[512];
	size_t n = 0;
	FILE *in = size ? fmemopen((void *)data, size, "r") : fopen("/dev/null", "r");
	int rc;

	if (!in)
		return;
	rc = trace_pages_read_csv(in, "fuzz.csv", &fuzz_names, &pages, &n, err, sizeof(err));
	fclose(in);
	if (rc != 0) {
		if (pages || strncmp(err, "fuzz.csv", 8) != 0)
			fail("a refusal that does not name the input:", err);
		return;
	}
	check_pages_round_trip(pages, n);
	free(pages);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace *t = NULL;
	char err[512];
	FILE *in;
	int rc;

	fuzz_pages(data, size);
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
