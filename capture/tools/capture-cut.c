/*
 * capture-cut.c - cut a capture file down to some address ranges of each
 * stream, for captures small enough to ship (workloads/captures/): a qemu
 * guest's RAM is its process's largest private anonymous mapping, so the
 * ranges are given as offsets into that mapping (the largest VMA each
 * stream has in the file's header), which ASLR places differently in every
 * process. Every snapshot is copied with each stream's VMAs cut to the
 * ranges (a VMA that misses them all is left out), its pages' tokens and
 * flags as they were, the times, full_scans and pauses as they were, and,
 * for a --bytes capture, the bytes of the tokens the cut keeps. Built with
 * `make capture/tools/capture-cut`; uses libksmcapture's public contract only.
 *
 *   capture-cut IN OUT OFFSET+LENGTH[,OFFSET+LENGTH...]   (bytes, 4 KiB multiples,
 *                                                          0x for hex)
 */
#include "config.h"

#include "capture.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANGES 16

struct range {
	uint64_t offset, length;
};

static int parse_ranges(const char *text, struct range *out, size_t *n)
{
	const char *p = text;

	*n = 0;
	while (*p && *n < MAX_RANGES) {
		char *end;

		out[*n].offset = strtoull(p, &end, 0);
		if (*end != '+')
			return -1;
		out[*n].length = strtoull(end + 1, &end, 0);
		if (out[*n].length == 0 || (out[*n].offset | out[*n].length) % CAP_PAGE_SIZE)
			return -1;
		(*n)++;
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		p = end;
	}
	return *p ? -1 : 0;
}

/* The start of @s's largest VMA. */
static uint64_t largest_start(const struct cap_stream_state *s)
{
	uint64_t best = 0, start = 0;

	for (size_t i = 0; i < s->nvmas; i++)
		if (s->vmas[i].end - s->vmas[i].start > best) {
			best = s->vmas[i].end - s->vmas[i].start;
			start = s->vmas[i].start;
		}
	return start;
}

/* @vmas cut to [base + range) for every range (sorted, disjoint), into @out. */
static size_t cut_vmas(const struct cap_vma *vmas, size_t nvmas, uint64_t base,
		       const struct range *ranges, size_t nranges, struct cap_vma *out)
{
	size_t n = 0;

	for (size_t r = 0; r < nranges; r++) {
		uint64_t lo = base + ranges[r].offset, hi = lo + ranges[r].length;

		for (size_t i = 0; i < nvmas; i++) {
			uint64_t s = vmas[i].start > lo ? vmas[i].start : lo,
				 e = vmas[i].end < hi ? vmas[i].end : hi;

			if (s < e)
				out[n++] = (struct cap_vma){ s, e };
		}
	}
	return n;
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Stream @s of a snapshot, cut: VMAs, tokens and flags, the status. */
static int cut_state(const struct cap_stream_state *s, uint64_t base, const struct range *ranges,
		     size_t nranges, struct cap_stream_state *out, struct cap_error *err)
{
	struct cap_vma *vmas = malloc((s->nvmas * nranges + 1) * sizeof *vmas);
	size_t n;
	int rc;

	if (!vmas) {
		snprintf(err->text, sizeof err->text, "out of memory");
		return -1;
	}
	n = cut_vmas(s->vmas, s->nvmas, base, ranges, nranges, vmas);
	rc = cap_stream_state_init(out, vmas, n, err);
	free(vmas);
	if (rc != 0)
		return -1;
	out->status = s->status;
	for (size_t v = 0, page = 0; v < out->nvmas; v++)
		for (uint64_t a = out->vmas[v].start; a < out->vmas[v].end; a += CAP_PAGE_SIZE, page++) {
			size_t from = cap_stream_page_of(s, a);

			out->token[page] = s->token[from];
			out->flags[page] = s->flags[from];
		}
	return 0;
}

/* Hand the writer the bytes of every token of @st it still wants. */
static int keep_bytes(struct cap_reader *in, struct cap_writer *w,
		      const struct cap_stream_state *st, struct cap_error *err)
{
	uint8_t page[CAP_PAGE_SIZE];

	for (size_t i = 0; i < st->npages; i++) {
		if (!(st->flags[i] & CAP_PRESENT) || st->token[i] == CAP_TOKEN_ZERO ||
		    !cap_writer_wants_bytes(w, st->token[i]))
			continue;
		if (cap_reader_page_bytes(in, st->token[i], page, err) != 0 ||
		    cap_writer_put_bytes(w, st->token[i], page, err) != 0)
			return -1;
	}
	return 0;
}

static int cut(const char *inpath, const char *outpath, struct range *ranges, size_t nranges,
	       struct cap_error *err)
{
	struct cap_reader *in = NULL;
	struct cap_writer *w = NULL;
	const struct cap_file_info *info;
	const struct cap_snapshot *snap;
	struct cap_stream_state *initial = NULL, *states = NULL;
	uint64_t *base = NULL;
	size_t ns = 0;
	int rc = -1, got;

	if (cap_reader_open(inpath, 0, &in, err) != 0)
		return -1;
	info = cap_reader_info(in);
	ns = info->nstreams;
	initial = calloc(ns, sizeof *initial);
	states = calloc(ns, sizeof *states);
	base = calloc(ns, sizeof *base);
	if (!initial || !states || !base) {
		snprintf(err->text, sizeof err->text, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < ns; i++) {
		base[i] = largest_start(&info->initial[i]);
		if (cut_state(&info->initial[i], base[i], ranges, nranges, &initial[i], err) != 0)
			goto out;
	}
	if (cap_writer_open(outpath, info->streams, initial, ns, info->with_bytes, &w, err) != 0)
		goto out;
	while ((got = cap_reader_next(in, &snap, err)) == 1) {
		struct cap_snapshot copy = *snap;

		for (size_t i = 0; i < ns; i++) {
			cap_stream_state_free(&states[i]);
			if (cut_state(&snap->streams[i], base[i], ranges, nranges, &states[i], err) != 0)
				goto out;
			if (info->with_bytes && keep_bytes(in, w, &states[i], err) != 0)
				goto out;
		}
		copy.streams = states;
		if (cap_writer_snapshot(w, &copy, err) != 0)
			goto out;
	}
	if (got < 0)
		goto out;
	rc = cap_writer_close(w, err);
	w = NULL;
out:
	if (w)
		cap_writer_close(w, err);
	for (size_t i = 0; initial && states && i < ns; i++) {
		cap_stream_state_free(&initial[i]);
		cap_stream_state_free(&states[i]);
	}
	free(initial);
	free(states);
	free(base);
	cap_reader_close(in);
	return rc;
}

int main(int argc, char **argv)
{
	struct range ranges[MAX_RANGES];
	struct cap_error err = { "", 0 };
	size_t n;

	if (argc != 4 || parse_ranges(argv[3], ranges, &n) != 0) {
		fprintf(stderr, "usage: capture-cut IN OUT OFFSET+LENGTH[,OFFSET+LENGTH...]\n"
				"  (offsets into each stream's largest VMA, 4 KiB multiples)\n");
		return 2;
	}
	qsort(ranges, n, sizeof *ranges, range_cmp);
	for (size_t i = 1; i < n; i++)
		if (ranges[i].offset < ranges[i - 1].offset + ranges[i - 1].length) {
			fprintf(stderr, "capture-cut: the ranges overlap\n");
			return 2;
		}
	if (cut(argv[1], argv[2], ranges, n, &err) != 0) {
		fprintf(stderr, "capture-cut: %s\n", err.text);
		return 1;
	}
	return 0;
}
