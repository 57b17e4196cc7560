/*
 * fuzz_capture.c - libFuzzer target for the capture file reader
 * (capture/cap_reader.c). Any input must either be refused with a message
 * "fuzz.cap: at byte N: ..." whose N lies inside the input, or open and
 * play back: every snapshot read (deltas applied, each stream's pages
 * within its VMAs), every present token's bytes readable in a --bytes file,
 * and a rewind giving the same first snapshot again. Never crash, leak or
 * hang. Built and run by tests/fuzz/run-fuzz (with CAP_READER_MAX_PAGES
 * small, so a VMA list cannot ask for gigabytes).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *text)
{
	fprintf(stderr, "%s\n%s\n", what, text ? text : "");
	abort();
}

/* Play every snapshot; the first one's summary, to compare after a rewind. */
static void play(struct cap_reader *r, struct cap_summary *first, bool *have_first)
{
	const struct cap_snapshot *s;
	struct cap_error err;
	uint8_t page[CAP_PAGE_SIZE];
	int got;

	while ((got = cap_reader_next(r, &s, &err)) == 1) {
		struct cap_summary m;

		if (cap_summarize(s, &m, &err) != 0)
			fail("summarize failed", err.text);
		if (!*have_first) {
			*first = m;
			*have_first = true;
		}
		for (size_t i = 0; i < s->nstreams; i++)
			for (size_t p = 0; p < s->streams[i].npages; p++)
				if (cap_reader_info(r)->with_bytes && s->streams[i].token[p] &&
				    cap_reader_page_bytes(r, s->streams[i].token[p], page, &err) != 0)
					fail("a token's bytes are not readable", err.text);
	}
	if (got != 0)
		fail("a validated file failed in playback", err.text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cap_reader *r;
	struct cap_error err;
	struct cap_summary first, again;
	bool have_first = false, have_again = false;

	if (cap_reader_open_buffer(data, size, "fuzz.cap", 0, &r, &err) != 0) {
		if (strncmp(err.text, "fuzz.cap: at byte ", 18) != 0 ||
		    (err.offset > size && size > 0))
			fail("a refusal without an offset in the input", err.text);
		return 0;
	}
	play(r, &first, &have_first);
	cap_reader_rewind(r);
	play(r, &again, &have_again);
	if (have_first != have_again || (have_first && memcmp(&first, &again, sizeof(first)) != 0))
		fail("a rewind played back another first snapshot", NULL);
	cap_reader_close(r);
	return 0;
}
