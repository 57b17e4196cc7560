/*
 * check_replay.c - tests of fill = capture, the replay of a capture on both
 * engines: how workload/wl_capture.c lays a stream's pages out (the union
 * of its VMAs), codes their contents (one value per distinct token across
 * the whole workload, zero pages value 0, absent pages absent) and cuts the
 * snapshots into steps at after-scan:k*every; what the simulator does with
 * them (counters after each snapshot); the errors, each naming FILE:LINE (a
 * missing or damaged capture with the capture's byte offset, a stream or a
 * snapshot it lacks, writes and events that would make a replay inexact);
 * and the backend's refusal of a token-only capture (bad input, before it
 * needs root). Captures are written here with libksmcapture's writer, into
 * a temporary directory beside the workloads that name them.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "capture.h"
#include "sim_driver.h"
#include "wl_internal.h"

#define PG CAP_PAGE_SIZE
#define A UINT64_C(0x10000000) /* stream 0's first VMA */
#define B UINT64_C(0x20000000) /* its second, from snapshot 1 on */
#define X UINT64_C(0x1111)     /* tokens: X twice in stream 0, once in stream 1 */
#define Y UINT64_C(0x2222)
#define Z UINT64_C(0x3333)

static char dir[] = "/tmp/check_replay.XXXXXX";

static const char *tmp_path(const char *name)
{
	static char path[4][256];
	static unsigned next;
	char *p = path[next++ % 4];

	snprintf(p, sizeof path[0], "%s/%s", dir, name);
	return p;
}

static void set_page(struct cap_stream_state *s, size_t i, uint64_t token)
{
	s->token[i] = token;
	s->flags[i] = CAP_PRESENT;
}

/* A page's bytes for a --bytes capture: its token repeated. */
static void token_bytes(uint64_t token, uint8_t *page)
{
	for (size_t i = 0; i < PG; i += 8)
		memcpy(page + i, &token, 8);
}

/*
 * Two streams, three snapshots:
 *   stream 0, snapshot 0: VMA [A, A+4p): X X zero absent
 *             snapshot 1: VMAs [A, A+4p) and [B, B+2p): X X Y X | X absent
 *             snapshot 2: as 1, page 0 now absent (discarded), page 5 Z
 *   stream 1: one page X in every snapshot.
 * The tokens are not XXH3 of the bytes written: the reader does not check
 * that, and the simulator only needs equal tokens for equal pages.
 */
static void write_capture(const char *path, bool with_bytes)
{
	struct cap_stream_info info[2] = { { .pid = 100, .comm = "first" },
					   { .pid = 200, .comm = "second" } };
	struct cap_vma one[] = { { A, A + 4 * PG } }, two[] = { { A, A + 4 * PG }, { B, B + 2 * PG } },
		       other[] = { { B, B + PG } };
	struct cap_stream_state init[2], s0, s1;
	struct cap_snapshot snap = { .nstreams = 2 };
	struct cap_stream_state streams[2];
	struct cap_writer *w;
	struct cap_error err;
	uint8_t page[PG];

	ck_assert_int_eq(cap_stream_state_init(&init[0], one, 1, &err), 0);
	ck_assert_int_eq(cap_stream_state_init(&init[1], other, 1, &err), 0);
	ck_assert_msg(cap_writer_open(path, info, init, 2, with_bytes, &w, &err) == 0, "%s",
		      err.text);
	for (uint64_t k = 0; k < 3; k++) {
		ck_assert_int_eq(cap_stream_state_init(&s0, k ? two : one, k ? 2 : 1, &err), 0);
		ck_assert_int_eq(cap_stream_state_init(&s1, other, 1, &err), 0);
		set_page(&s0, 0, X);
		set_page(&s0, 1, X);
		set_page(&s0, 2, CAP_TOKEN_ZERO);
		if (k >= 1) {
			set_page(&s0, 2, Y);
			set_page(&s0, 3, X);
			set_page(&s0, 4, X);
		}
		if (k == 2) {
			s0.flags[0] = 0;
			s0.token[0] = 0;
			set_page(&s0, 5, Z);
		}
		set_page(&s1, 0, X);
		for (int t = 0; with_bytes && t < 3; t++) {
			uint64_t tok = t == 0 ? X : t == 1 ? Y : Z;

			token_bytes(tok, page);
			if (cap_writer_wants_bytes(w, tok))
				ck_assert_int_eq(cap_writer_put_bytes(w, tok, page, &err), 0);
		}
		streams[0] = s0;
		streams[1] = s1;
		snap.index = k;
		snap.time_ns = k * 1000000;
		/* the --bytes capture was taken at full scans 10, 12, 15 */
		snap.full_scans = with_bytes ? 10 + k * (k + 3) / 2 : CAP_NO_FULL_SCANS;
		snap.streams = streams;
		ck_assert_msg(cap_writer_snapshot(w, &snap, &err) == 0, "%s", err.text);
		cap_stream_state_free(&s0);
		cap_stream_state_free(&s1);
	}
	ck_assert_int_eq(cap_writer_close(w, &err), 0);
	cap_stream_state_free(&init[0]);
	cap_stream_state_free(&init[1]);
}

/* Write @text as workload @name in the directory and parse it. */
static int parse_named(const char *name, const char *text, struct workload **wl,
		       struct wl_error *err)
{
	const char *path = tmp_path(name);
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return wl_parse_file(path, wl, err);
}

static struct workload *parse_ok(const char *text)
{
	struct workload *wl;
	struct wl_error err;

	if (parse_named("t.wl", text, &wl, &err) != 0)
		ck_abort_msg("unexpected parse error: %s", err.text);
	return wl;
}

/* The error @text gives, after the directory's name. */
static const char *parse_error(const char *text)
{
	static struct wl_error err;
	struct workload *wl;

	if (parse_named("t.wl", text, &wl, &err) == 0) {
		wl_free(wl);
		return "";
	}
	ck_assert_ptr_null(wl);
	ck_assert_msg(strncmp(err.text, dir, strlen(dir)) == 0, "%s", err.text);
	return err.text + strlen(dir) + 1;
}

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	write_capture(tmp_path("tokens.cap"), false);
	write_capture(tmp_path("bytes.cap"), true);
}

static void teardown(void)
{
	const char *names[] = { "tokens.cap", "bytes.cap", "t.wl", "bad.cap" };

	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		unlink(tmp_path(names[i]));
	rmdir(dir);
	strcpy(dir, "/tmp/check_replay.XXXXXX");
}

#define GLOBAL "[global]\nscans = 6\npages_to_scan = 1000\n"
#define TWO_STREAMS                                                                           \
	GLOBAL "[region u]\npages = 3\nfill = unique\n"                                       \
	       "[region r0]\nprocess = p0\nfill = capture\ncapture = tokens.cap\n"              \
	       "[region r1]\nprocess = p1\nfill = capture\ncapture = tokens.cap\nstream = 1\n"

static uint64_t initial(const struct wl_region *reg, uint64_t page, bool *present)
{
	uint64_t v = UINT64_MAX;

	*present = wl_region_initial_value(reg, page, &v);
	return v;
}

START_TEST(pages_are_the_union_of_the_vmas_and_tokens_become_values)
{
	struct workload *wl = parse_ok(TWO_STREAMS);
	const struct wl_region *r0 = &wl->regions[1], *r1 = &wl->regions[2];
	uint64_t x, zero, unique0;
	bool present;

	ck_assert_uint_eq(r0->pages, 6); /* [A, A+4p) and [B, B+2p) */
	ck_assert_uint_eq(r1->pages, 1);
	x = initial(r0, 0, &present);
	ck_assert(present);
	ck_assert_uint_ge(x, CONTENT_FRESH_BASE); /* a fresh value: no file names it */
	ck_assert_uint_eq(initial(r0, 1, &present), x);
	zero = initial(r0, 2, &present);
	ck_assert(present); /* a zero page is present, value 0 */
	ck_assert_uint_eq(zero, 0);
	initial(r0, 3, &present);
	ck_assert(!present);
	initial(r0, 4, &present); /* not mapped at snapshot 0 */
	ck_assert(!present);
	/* the same token in another stream is the same value */
	ck_assert_uint_eq(initial(r1, 0, &present), x);
	ck_assert(present);
	/* and no fill = unique value */
	for (uint64_t p = 0; p < 3; p++)
		ck_assert_uint_ne(initial(&wl->regions[0], p, &present), x);
	unique0 = initial(&wl->regions[0], 0, &present);
	ck_assert_uint_ne(unique0, x);
	ck_assert_uint_eq(wl->fresh_start, 3 + 3); /* 3 unique pages, tokens X, Y, Z */
	wl_free(wl);
}
END_TEST

START_TEST(snapshots_become_changes_at_their_scans)
{
	struct workload *wl = parse_ok(TWO_STREAMS);
	const struct wl_capture *cap = wl->regions[1].capture;
	const struct wl_capture_step *s1, *s2;
	uint64_t v;

	ck_assert_uint_eq(cap->nsteps, 2);
	ck_assert_ptr_null(wl_capture_step_at(cap, 0));
	s1 = wl_capture_step_at(cap, 1);
	s2 = wl_capture_step_at(cap, 2);
	ck_assert_ptr_nonnull(s1);
	ck_assert_ptr_nonnull(s2);
	ck_assert_uint_eq(s1->snapshot, 1);
	/* snapshot 1: page 2 zero -> Y, page 3 absent -> X, page 4 new -> X */
	ck_assert_uint_eq(s1->count, 3);
	ck_assert_uint_eq(cap->changes[s1->first].page, 2);
	ck_assert_uint_eq(wl_capture_token(cap, cap->changes[s1->first].content), Y);
	ck_assert_uint_eq(cap->changes[s1->first + 1].page, 3);
	ck_assert_uint_eq(wl_capture_token(cap, cap->changes[s1->first + 1].content), X);
	ck_assert_uint_eq(cap->changes[s1->first + 2].page, 4);
	/* snapshot 2: page 0 absent (discarded), page 5 Z */
	ck_assert_uint_eq(s2->count, 2);
	ck_assert_uint_eq(cap->changes[s2->first].page, 0);
	ck_assert(!wl_capture_value(cap, cap->changes[s2->first].content, &v));
	ck_assert_uint_eq(wl_capture_token(cap, cap->changes[s2->first + 1].content), Z);
	/* stream 1 never changes: no steps with changes */
	for (size_t i = 0; i < wl->regions[2].capture->nsteps; i++)
		ck_assert_uint_eq(wl->regions[2].capture->steps[i].count, 0);
	wl_free(wl);
}
END_TEST

START_TEST(every_and_snapshots_choose_the_schedule)
{
	struct workload *wl = parse_ok(GLOBAL "[region r]\nfill = capture\ncapture = tokens.cap\n"
					      "every = 3\n");
	const struct wl_capture *cap = wl->regions[0].capture;
	bool present;

	ck_assert_uint_eq(cap->nsteps, 1); /* after-scan:3; after-scan:6 never comes */
	ck_assert_uint_eq(cap->steps[0].at_scan, 3);
	ck_assert_uint_eq(cap->last, 1);
	wl_free(wl);
	wl = parse_ok(GLOBAL "[region r]\nfill = capture\ncapture = tokens.cap\nsnapshots = 1-2\n");
	cap = wl->regions[0].capture;
	ck_assert_uint_eq(cap->first, 1);
	ck_assert_uint_eq(cap->nsteps, 1);
	ck_assert_uint_eq(cap->steps[0].snapshot, 2);
	ck_assert_uint_eq(cap->steps[0].at_scan, 1);
	initial(&wl->regions[0], 4, &present); /* snapshot 1 fills at setup */
	ck_assert(present);
	wl_free(wl);
}
END_TEST

/* Print @wl, parse it back from elsewhere, require it equal; the text. */
static char *assert_round_trip(const struct workload *wl)
{
	struct workload *again;
	struct wl_error err;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_int_eq(wl_print(wl, f), 0);
	fclose(f);
	if (wl_parse_buffer(text, len, "elsewhere/n.wl", &again, &err) != 0)
		ck_abort_msg("%s\n%s", err.text, text);
	ck_assert_msg(wl_equal(wl, again), "%s", text);
	wl_free(again);
	return text;
}

START_TEST(every_capture_follows_the_full_scans_it_recorded)
{
	struct workload *wl = parse_ok(GLOBAL "[region r]\nfill = capture\ncapture = bytes.cap\n"
					      "every = capture\n");
	const struct wl_capture *cap = wl->regions[0].capture;

	ck_assert_uint_eq(cap->every, 0);
	ck_assert_uint_eq(cap->nsteps, 2);
	ck_assert_uint_eq(cap->steps[0].at_scan, 2); /* 12 - 10 */
	ck_assert_uint_eq(cap->steps[1].at_scan, 5); /* 15 - 10 */
	free(assert_round_trip(wl));
	wl_free(wl);
	wl = parse_ok(GLOBAL "[region r]\nfill = capture\ncapture = bytes.cap\nevery = capture\n"
			     "snapshots = 1-2\n");
	ck_assert_uint_eq(wl->regions[0].capture->steps[0].at_scan, 3); /* 15 - 12 */
	wl_free(wl);
}
END_TEST

START_TEST(the_normalized_form_parses_back_equal)
{
	struct workload *wl = parse_ok(TWO_STREAMS);
	char *text = assert_round_trip(wl);

	/* the capture's absolute path: the text parses anywhere */
	ck_assert_ptr_nonnull(strstr(text, "capture = /"));
	ck_assert_ptr_nonnull(strstr(text, "stream = 1\nsnapshots = all\nevery = 1\n"));
	free(text);
	wl_free(wl);
}
END_TEST


/* Counters of the simulator's run of @text at each scan. */
static struct trace *sim_trace(const char *text)
{
	struct workload *wl = parse_ok(text);
	struct trace *t = NULL;
	char err[256];

	if (sim_run_workload(wl, NULL, &t, err, sizeof err) != 0)
		ck_abort_msg("%s", err);
	wl_free(wl);
	return t;
}

static int64_t counter(const struct trace *t, uint64_t scan, enum trace_counter c)
{
	for (size_t i = 0; i < t->nrows; i++)
		if (t->row[i].kind == TRACE_ROW_SCAN && t->row[i].scan == scan)
			return t->row[i].counter[c];
	ck_abort_msg("no row for scan %llu", (unsigned long long)scan);
	return -1;
}

START_TEST(the_simulator_merges_what_the_snapshots_make_equal)
{
	struct trace *t = sim_trace(TWO_STREAMS);

	/* scan 2: X in r0 pages 0, 1 and r1 page 0 merged once checksums held */
	ck_assert_int_eq(counter(t, 2, TRACE_PAGES_SHARED), 1);
	ck_assert_int_eq(counter(t, 2, TRACE_PAGES_SHARING), 2);
	/* after-scan:1 made r0 pages 3 and 4 X too (they merge at scan 3) and
	 * page 2 Y (alone); after-scan:2 discarded page 0 and brought Z */
	ck_assert_int_eq(counter(t, 3, TRACE_PAGES_SHARING), 3);
	ck_assert_int_eq(counter(t, 4, TRACE_PAGES_SHARING), 3);
	/* Y, Z and region u's 3 unique pages */
	ck_assert_int_eq(counter(t, 4, TRACE_PAGES_UNSHARED), 5);
	ck_assert_int_eq(counter(t, 4, TRACE_PAGES_SHARED), 1);
	trace_free(t);
}
END_TEST

START_TEST(zero_pages_are_the_plain_zero_content)
{
	struct trace *t = sim_trace(GLOBAL "use_zero_pages = 1\n[region r]\nfill = capture\n"
					   "capture = tokens.cap\nsnapshots = 0\n");

	/* the one zero page of snapshot 0 becomes KSM's zero page */
	ck_assert_int_eq(counter(t, 2, TRACE_KSM_ZERO_PAGES), 1);
	trace_free(t);
}
END_TEST

struct bad {
	const char *text;
	const char *error; /* after "DIR/" */
};

static const struct bad bad_inputs[] = {
	{ GLOBAL "[region r]\nfill = capture\ncapture = nope.cap\n",
	  "t.wl:6: [region r] capture = nope.cap: cannot read " },
	{ GLOBAL "[region r]\nfill = capture\ncapture = /dev/null\n",
	  "t.wl:6: [region r] capture = /dev/null: /dev/null is not a regular file" },
	{ GLOBAL "[region r]\nfill = capture\ncapture = tokens.cap\nstream = 2\n",
	  "t.wl:7: [region r] stream = 2: tokens.cap has 2 streams: 0 (pid 100 first), "
	  "1 (pid 200 second)" },
	{ GLOBAL "[region r]\nfill = capture\ncapture = tokens.cap\nsnapshots = 1-3\n",
	  "t.wl:7: [region r] capture = tokens.cap has 3 snapshots: no snapshot 3" },
	{ GLOBAL "[region r]\nfill = capture\ncapture = tokens.cap\nsnapshots = 0-2\nevery = 3\n",
	  "t.wl:7: [region r] snapshot 2 would be replayed at after-scan:6, which never "
	  "happens: the workload stops after scan 6" },
	{ GLOBAL "[region r]\nfill = capture\ncapture = tokens.cap\nevery = capture\n",
	  "t.wl:7: [region r] every = capture: snapshot 0 of tokens.cap has no full_scans" },
	{ GLOBAL "[region r]\nfill = capture\n", "t.wl:5: [region r] fill = capture needs "
						 "capture = FILE" },
	{ GLOBAL "[region r]\nfill = zero\npages = 1\nstream = 1\n",
	  "t.wl:7: [region r] stream only applies to fill = capture" },
	{ GLOBAL "[region r]\nfill = capture\ncapture = tokens.cap\npages = 5\n",
	  "t.wl:7: [region r]: the capture's stream 0 holds 6 pages but the region has 5" },
	{ GLOBAL "[region r]\nfill = capture\ncapture = tokens.cap\nthp = always\n",
	  "t.wl:7: [region r] thp = always: a capture region is replayed in small pages" },
	{ GLOBAL "[region r]\nfill = capture\ncapture = tokens.cap\n"
		 "[writer w]\nregion = r\nwhen = after-scan:1\n",
	  "t.wl:7: [writer w]: region r is filled from a capture, whose snapshots alone "
	  "write it" },
	{ GLOBAL "[region r]\nfill = capture\ncapture = tokens.cap\n"
		 "[event e]\nat = after-scan:1\naction = unmap\nregion = r\n",
	  "t.wl:7: [event e] action = unmap: region r is filled from a capture" },
	{ GLOBAL "[region r]\nfill = capture\ncapture = tokens.cap\n[region s]\nprocess = q\n"
		 "pages = 1\nfill = zero\n"
		 "[event e]\nat = after-scan:1\naction = exit\nprocess = main\n",
	  "t.wl:11: [event e] action = exit at after-scan:1: region r of process main still "
	  "replays snapshots until after-scan:2" },
};

START_TEST(bad_inputs_name_the_line)
{
	for (size_t i = 0; i < sizeof bad_inputs / sizeof *bad_inputs; i++) {
		const char *got = parse_error(bad_inputs[i].text);

		ck_assert_msg(strncmp(got, bad_inputs[i].error, strlen(bad_inputs[i].error)) == 0,
			      "input %zu:\n got  %s\n want %s...", i, got, bad_inputs[i].error);
	}
}
END_TEST

START_TEST(a_damaged_capture_names_the_line_and_the_byte_offset)
{
	FILE *in = fopen(tmp_path("tokens.cap"), "rb"), *out = fopen(tmp_path("bad.cap"), "wb");
	char want[128];
	const char *got;
	long size;
	int c;

	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(out);
	while ((c = fgetc(in)) != EOF)
		fputc(c, out);
	size = ftell(out);
	fclose(in);
	/* a byte of the last snapshot record's payload: its checksum fails */
	fseek(out, size - 40, SEEK_SET);
	fputc(0x5a ^ 0xff, out);
	fclose(out);
	got = parse_error(GLOBAL "[region r]\nfill = capture\ncapture = bad.cap\n");
	snprintf(want, sizeof want, "t.wl:6: [region r] capture = bad.cap: %s/bad.cap: at byte ",
		 dir);
	ck_assert_msg(strncmp(got, want, strlen(want)) == 0, "got %s", got);
	ck_assert_int_gt(atol(got + strlen(want)), 16); /* after the preamble */
}
END_TEST

START_TEST(the_kernel_refuses_a_capture_of_tokens_only)
{
	struct workload *wl = parse_ok(GLOBAL "[region r]\nfill = capture\ncapture = tokens.cap\n");
	struct kb_options opt;
	struct kb_result res;
	char msg[512];

	kb_options_init(&opt);
	/* bad input, before the root check: exit status 2 on every machine */
	ck_assert_int_eq(kb_run(wl, &opt, &res, msg, sizeof msg), KB_BAD_INPUT);
	ck_assert_msg(strstr(msg, "t.wl:6: [region r] capture = ") != NULL, "%s", msg);
	ck_assert_msg(strstr(msg, "holds content tokens only") != NULL, "%s", msg);
	kb_result_free(&res);
	wl_free(wl);
	/* the --bytes capture passes that check (and whatever the machine says next) */
	wl = parse_ok(GLOBAL "[region r]\nfill = capture\ncapture = bytes.cap\n");
	ck_assert(wl->regions[0].capture->with_bytes);
	wl_free(wl);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("replay");
	TCase *tc = tcase_create("capture");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, pages_are_the_union_of_the_vmas_and_tokens_become_values);
	tcase_add_test(tc, snapshots_become_changes_at_their_scans);
	tcase_add_test(tc, every_and_snapshots_choose_the_schedule);
	tcase_add_test(tc, every_capture_follows_the_full_scans_it_recorded);
	tcase_add_test(tc, the_normalized_form_parses_back_equal);
	tcase_add_test(tc, the_simulator_merges_what_the_snapshots_make_equal);
	tcase_add_test(tc, zero_pages_are_the_plain_zero_content);
	tcase_add_test(tc, bad_inputs_name_the_line);
	tcase_add_test(tc, a_damaged_capture_names_the_line_and_the_byte_offset);
	tcase_add_test(tc, the_kernel_refuses_a_capture_of_tokens_only);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
