/*
 * fuzz_workload.c - libFuzzer target for the workload parser. Any input must
 * either parse (then print, reparse to an equal workload, and free) or fail
 * with a message naming the input; never crash, leak or hang.
 * Built by ./configure --enable-fuzz CC=clang; run by tests/fuzz/run-fuzz.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A printed workload must parse back to an equal one. */
static void check_round_trip(const struct workload *wl)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct workload *again;
	struct wl_error err;

	if (!f)
		return;
	wl_print(wl, f);
	fclose(f);
	if (wl_parse_buffer(text, len, wl->path, &again, &err) != 0) {
		fprintf(stderr, "normalized output does not parse: %s\n%s", err.text, text);
		abort();
	}
	if (!wl_equal(wl, again)) {
		fprintf(stderr, "round trip changed the workload:\n%s", text);
		abort();
	}
	wl_free(again);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct workload *wl;
	struct wl_error err;

	if (wl_parse_buffer((const char *)data, size, "fuzz.wl", &wl, &err) != 0) {
		if (strncmp(err.text, "fuzz.wl", 7) != 0)
			abort();
		return 0;
	}
	check_round_trip(wl);
	wl_free(wl);
	return 0;
}
