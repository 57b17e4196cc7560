/*
 * check_capture.c - Check suite for capture/ (libksmcapture): the writer
 * and reader round trip (streams, VMAs changing, a stream ending, --bytes
 * pages), the delta encoding (an unchanged snapshot costs a few bytes, one
 * changed page one entry), damage found at every byte of a file and named
 * at or before it, a file cut at every length (read up to its last whole
 * snapshot, or refused in strict mode naming the cut record), a writer
 * under RLIMIT_FSIZE leaving a valid file, and live captures of child
 * processes whose pages are known: equal tokens for equal pages, zero
 * pages and absent pages marked, a THP marked when one forms, a process
 * that exits or execs ending its stream, --consistent stopping every
 * thread and letting a process go as it was.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture.h"

#define PAGE CAP_PAGE_SIZE

/* ---- helpers ------------------------------------------------------------- */

static char tmpdir[] = "/tmp/check_capture.XXXXXX";

static const char *tmp_path(const char *name)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data;

	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	data = malloc(*len ? *len : 1);
	ck_assert_uint_eq(fread(data, 1, *len, f), *len);
	fclose(f);
	return data;
}

/* A page whose bytes all come from @seed (never all zeros). */
static void fill_page(uint8_t *page, unsigned seed)
{
	for (size_t i = 0; i < PAGE; i++)
		page[i] = (uint8_t)(seed * 131u + i * 7u + 1u);
}

/*
 * The synthetic capture the round-trip tests write: two streams, four
 * snapshots. Stream 0: one VMA of 8 pages, then a VMA added and one page
 * changed, then nothing changed, then page 3 gone absent. Stream 1: 4
 * pages, then exits at snapshot 2.
 */
#define NSNAP 4
struct synthetic {
	struct cap_stream_info info[2];
	struct cap_stream_state initial[2];
	struct cap_stream_state state[NSNAP][2];
	struct cap_snapshot snap[NSNAP];
	uint8_t pages[16][PAGE]; /* bytes of the tokens used */
	uint64_t tokens[16];
};

static void set_page(struct synthetic *sy, struct cap_stream_state *s, size_t i, unsigned which)
{
	s->flags[i] = CAP_PRESENT;
	s->token[i] = which == 0 ? CAP_TOKEN_ZERO : sy->tokens[which];
}

static void make_synthetic(struct synthetic *sy)
{
	struct cap_vma a = { 0x10000, 0x10000 + 8 * PAGE }, b[2] = { a, { 0x40000, 0x40000 + 2 * PAGE } };
	struct cap_vma c = { 0x7f0000, 0x7f0000 + 4 * PAGE };
	struct cap_error err;

	memset(sy, 0, sizeof(*sy));
	for (unsigned i = 1; i < 16; i++) {
		fill_page(sy->pages[i], i);
		sy->tokens[i] = cap_page_token(sy->pages[i]);
	}
	sy->info[0] = (struct cap_stream_info){ 100, "first", CAP_THP_KPAGEFLAGS };
	sy->info[1] = (struct cap_stream_info){ 200, "second", CAP_THP_NONE };
	ck_assert_int_eq(cap_stream_state_init(&sy->initial[0], &a, 1, &err), 0);
	ck_assert_int_eq(cap_stream_state_init(&sy->initial[1], &c, 1, &err), 0);
	for (int k = 0; k < NSNAP; k++) {
		ck_assert_int_eq(cap_stream_state_init(&sy->state[k][0], k ? b : &a, k ? 2 : 1, &err), 0);
		ck_assert_int_eq(cap_stream_state_init(&sy->state[k][1], &c, k < 2 ? 1 : 0, &err), 0);
		for (size_t i = 0; i < 8; i++)
			set_page(sy, &sy->state[k][0], i, (unsigned)(i % 3)); /* zero, 1, 2, ... */
		sy->state[k][0].flags[7] |= CAP_THP;
		if (k >= 1) {
			set_page(sy, &sy->state[k][0], 5, 9);
			set_page(sy, &sy->state[k][0], 8, 4);
		}
		if (k >= 3)
			sy->state[k][0].flags[3] = 0, sy->state[k][0].token[3] = 0;
		for (size_t i = 0; k < 2 && i < 4; i++)
			set_page(sy, &sy->state[k][1], i, 1);
		sy->state[k][1].status = k < 2 ? CAP_STREAM_LIVE : CAP_STREAM_EXITED;
		sy->snap[k] = (struct cap_snapshot){ (uint64_t)k, (uint64_t)k * 1000000u,
						     k == 0 ? CAP_NO_FULL_SCANS : (uint64_t)k + 5,
						     (uint64_t)k * 7, 2, sy->state[k] };
	}
}

static void free_synthetic(struct synthetic *sy)
{
	for (int s = 0; s < 2; s++) {
		cap_stream_state_free(&sy->initial[s]);
		for (int k = 0; k < NSNAP; k++)
			cap_stream_state_free(&sy->state[k][s]);
	}
}

/* Write @sy to @path; with bytes, every token's bytes before its snapshot. */
static void write_synthetic(struct synthetic *sy, const char *path, bool bytes)
{
	struct cap_writer *w;
	struct cap_error err;

	ck_assert_msg(cap_writer_open(path, sy->info, sy->initial, 2, bytes, &w, &err) == 0, "%s",
		      err.text);
	for (int k = 0; k < NSNAP; k++) {
		for (unsigned t = 1; bytes && t < 16; t++)
			ck_assert_int_eq(cap_writer_put_bytes(w, sy->tokens[t], sy->pages[t], &err), 0);
		ck_assert_msg(cap_writer_snapshot(w, &sy->snap[k], &err) == 0, "%s", err.text);
	}
	ck_assert_uint_eq(cap_writer_snapshots(w), NSNAP);
	ck_assert_msg(cap_writer_close(w, &err) == 0, "%s", err.text);
}

static void assert_state_equal(const struct cap_stream_state *got,
			       const struct cap_stream_state *want)
{
	ck_assert_int_eq(got->status, want->status);
	if (want->status != CAP_STREAM_LIVE) {
		ck_assert_uint_eq(got->npages, 0);
		return;
	}
	ck_assert_uint_eq(got->nvmas, want->nvmas);
	ck_assert_uint_eq(got->npages, want->npages);
	ck_assert_int_eq(memcmp(got->vmas, want->vmas, want->nvmas * sizeof(*want->vmas)), 0);
	for (size_t i = 0; i < want->npages; i++) {
		ck_assert_uint_eq(got->token[i], want->token[i]);
		ck_assert_uint_eq(got->flags[i], want->flags[i]);
	}
}

/* ---- round trip, delta ---------------------------------------------------------- */

START_TEST(test_round_trip)
{
	struct synthetic sy;
	struct cap_reader *r;
	struct cap_error err;
	const struct cap_snapshot *got;
	const struct cap_file_info *fi;
	const char *path = tmp_path("round.cap");

	make_synthetic(&sy);
	write_synthetic(&sy, path, false);
	ck_assert_msg(cap_reader_open(path, CAP_OPEN_STRICT, &r, &err) == 0, "%s", err.text);
	fi = cap_reader_info(r);
	ck_assert_uint_eq(fi->version, CAP_FORMAT_VERSION);
	ck_assert_uint_eq(fi->nstreams, 2);
	ck_assert_uint_eq(fi->nsnapshots, NSNAP);
	ck_assert(fi->complete);
	ck_assert(!fi->with_bytes);
	ck_assert_int_eq(fi->streams[0].pid, 100);
	ck_assert_str_eq(fi->streams[1].comm, "second");
	ck_assert_int_eq(fi->streams[0].thp, CAP_THP_KPAGEFLAGS);
	ck_assert_uint_eq(fi->initial[0].npages, 8);
	for (int pass = 0; pass < 2; pass++) { /* and again after a rewind */
		for (int k = 0; k < NSNAP; k++) {
			ck_assert_int_eq(cap_reader_next(r, &got, &err), 1);
			ck_assert_uint_eq(got->index, (uint64_t)k);
			ck_assert_uint_eq(got->time_ns, sy.snap[k].time_ns);
			ck_assert_uint_eq(got->full_scans, sy.snap[k].full_scans);
			ck_assert_uint_eq(got->pause_ns, sy.snap[k].pause_ns);
			for (int s = 0; s < 2; s++)
				assert_state_equal(&got->streams[s], &sy.state[k][s]);
		}
		ck_assert_int_eq(cap_reader_next(r, &got, &err), 0);
		cap_reader_rewind(r);
	}
	cap_reader_close(r);
	free_synthetic(&sy);
}
END_TEST

/* Each snapshot record carries only what changed: pages_changed and the record sizes say so. */
START_TEST(test_delta_encoding)
{
	struct synthetic sy;
	struct cap_reader *r;
	struct cap_error err;
	const struct cap_snapshot *got;
	size_t changed[NSNAP], want[NSNAP] = { 8 + 4, 2, 0, 1 };
	bool vmas[NSNAP], want_vmas[NSNAP] = { false, true, false, false };
	const char *path = tmp_path("delta.cap");

	make_synthetic(&sy);
	write_synthetic(&sy, path, false);
	ck_assert_int_eq(cap_reader_open(path, 0, &r, &err), 0);
	for (int k = 0; k < NSNAP; k++) {
		ck_assert_int_eq(cap_reader_next(r, &got, &err), 1);
		changed[k] = got->streams[0].pages_changed + got->streams[1].pages_changed;
		vmas[k] = got->streams[0].vmas_changed;
		ck_assert_msg(changed[k] == want[k], "snapshot %d changed %zu pages, not %zu", k,
			      changed[k], want[k]);
		ck_assert_msg(vmas[k] == want_vmas[k], "snapshot %d: VMAs changed %d", k,
			      vmas[k]);
	}
	cap_reader_close(r);
	free_synthetic(&sy);
}
END_TEST

/* A large stream with one page changed: the second snapshot is a few dozen bytes. */
START_TEST(test_delta_is_small)
{
	struct cap_stream_info info = { 1, "big", CAP_THP_NONE };
	struct cap_vma v = { 1u << 20, (1u << 20) + 10000u * PAGE };
	struct cap_stream_state st;
	struct cap_snapshot snap = { 0, 0, CAP_NO_FULL_SCANS, 0, 1, &st };
	struct cap_writer *w;
	struct cap_error err;
	uint64_t after_first;
	const char *path = tmp_path("small.cap");

	ck_assert_int_eq(cap_stream_state_init(&st, &v, 1, &err), 0);
	for (size_t i = 0; i < st.npages; i++) {
		st.flags[i] = CAP_PRESENT;
		st.token[i] = i * 0x9e3779b97f4a7c15ull + 1;
	}
	ck_assert_int_eq(cap_writer_open(path, &info, &st, 1, false, &w, &err), 0);
	ck_assert_int_eq(cap_writer_snapshot(w, &snap, &err), 0);
	after_first = cap_writer_bytes(w);
	ck_assert_uint_gt(after_first, st.npages * 9);
	st.token[4321] ^= 1;
	snap.index = 1;
	ck_assert_int_eq(cap_writer_snapshot(w, &snap, &err), 0);
	ck_assert_uint_lt(cap_writer_bytes(w) - after_first, 64);
	ck_assert_int_eq(cap_writer_close(w, &err), 0);
	cap_stream_state_free(&st);
}
END_TEST

START_TEST(test_bytes_round_trip)
{
	struct synthetic sy;
	struct cap_reader *r;
	struct cap_error err;
	uint8_t page[PAGE];
	const char *path = tmp_path("bytes.cap");

	make_synthetic(&sy);
	write_synthetic(&sy, path, true);
	ck_assert_int_eq(cap_reader_open(path, CAP_OPEN_STRICT, &r, &err), 0);
	ck_assert(cap_reader_info(r)->with_bytes);
	ck_assert_uint_eq(cap_reader_info(r)->ndistinct_bytes, 15);
	for (unsigned t = 15; t >= 1; t--) { /* out of order */
		ck_assert_int_eq(cap_reader_page_bytes(r, sy.tokens[t], page, &err), 0);
		ck_assert_int_eq(memcmp(page, sy.pages[t], PAGE), 0);
	}
	ck_assert_int_eq(cap_reader_page_bytes(r, CAP_TOKEN_ZERO, page, &err), 0);
	ck_assert_int_eq(page[100], 0);
	ck_assert_int_eq(cap_reader_page_bytes(r, 12345, page, &err), -1);
	cap_reader_close(r);
	free_synthetic(&sy);
}
END_TEST

/* A --bytes writer refuses a snapshot whose page bytes it was not given. */
START_TEST(test_bytes_must_come_first)
{
	struct synthetic sy;
	struct cap_writer *w;
	struct cap_error err;

	make_synthetic(&sy);
	ck_assert_int_eq(cap_writer_open(tmp_path("nobytes.cap"), sy.info, sy.initial, 2, true, &w,
					 &err), 0);
	ck_assert_int_eq(cap_writer_snapshot(w, &sy.snap[0], &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "bytes were not given"));
	cap_writer_close(w, &err);
	free_synthetic(&sy);
}
END_TEST

START_TEST(test_tokens)
{
	uint8_t a[PAGE], b[PAGE], z[PAGE] = { 0 };

	fill_page(a, 3);
	memcpy(b, a, PAGE);
	ck_assert_uint_eq(cap_page_token(z), CAP_TOKEN_ZERO);
	ck_assert_uint_eq(cap_page_token(a), cap_page_token(b));
	ck_assert_uint_ne(cap_page_token(a), CAP_TOKEN_ZERO);
	b[PAGE - 1] ^= 1;
	ck_assert_uint_ne(cap_page_token(a), cap_page_token(b));
	z[2000] = 1; /* one byte off zero is not the zero page */
	ck_assert_uint_ne(cap_page_token(z), CAP_TOKEN_ZERO);
}
END_TEST

START_TEST(test_summary)
{
	struct synthetic sy;
	struct cap_summary m;
	struct cap_error err;

	make_synthetic(&sy);
	/* snapshot 1: stream 0 pages 0..7 = z,1,2,z,1,9,z,1 + VMA b: 4, absent; stream 1: 1,1,1,1 */
	ck_assert_int_eq(cap_summarize(&sy.snap[1], &m, &err), 0);
	ck_assert_uint_eq(m.pages, 10 + 4);
	ck_assert_uint_eq(m.present, 9 + 4);
	ck_assert_uint_eq(m.zero, 3);
	ck_assert_uint_eq(m.thp, 1);
	ck_assert_uint_eq(m.distinct, 4); /* 1, 2, 9, 4 */
	ck_assert_uint_eq(m.duplicates, 13 - 3 - 4);
	ck_assert_uint_eq(m.live_streams, 2);
	free_synthetic(&sy);
}
END_TEST

/* ---- damage and cuts ------------------------------------------------------------------- */

/* Every single-byte change anywhere is refused, and named at or before the byte changed. */
START_TEST(test_damage_at_every_byte)
{
	struct synthetic sy;
	size_t len;
	uint8_t *data;
	const char *path = tmp_path("damage.cap");

	make_synthetic(&sy);
	write_synthetic(&sy, path, true);
	data = read_file(path, &len);
	for (size_t i = 0; i < len; i++) {
		struct cap_reader *r;
		struct cap_error err;

		data[i] ^= 0x20;
		ck_assert_msg(cap_reader_open_buffer(data, len, "d.cap", 0, &r, &err) == -1,
			      "a change at byte %zu was not noticed", i);
		ck_assert_msg(err.offset <= i, "byte %zu changed, damage named at %llu: %s", i,
			      (unsigned long long)err.offset, err.text);
		ck_assert_msg(strstr(err.text, "d.cap: at byte ") == err.text, "%s", err.text);
		data[i] ^= 0x20;
	}
	free(data);
	free_synthetic(&sy);
}
END_TEST

/* Record boundaries of @data: the offsets where each record starts, and the end. */
static size_t record_starts(const uint8_t *data, size_t len, size_t *starts, uint32_t *types)
{
	size_t n = 0, off = 16;

	while (off < len) {
		uint64_t plen = 0;

		for (int i = 0; i < 8; i++)
			plen |= (uint64_t)data[off + 8 + (size_t)i] << (8 * i);
		types[n] = data[off];
		starts[n++] = off;
		off += 16 + (size_t)plen + 8;
	}
	starts[n] = off;
	return n;
}

/* A file cut at any length: up to its last whole snapshot, or refused (strict) at the cut. */
START_TEST(test_cut_at_every_length)
{
	struct synthetic sy;
	size_t len, starts[64], nrec;
	uint32_t types[64];
	uint8_t *data;
	const char *path = tmp_path("cut.cap");

	make_synthetic(&sy);
	write_synthetic(&sy, path, true);
	data = read_file(path, &len);
	nrec = record_starts(data, len, starts, types);
	ck_assert_uint_eq(starts[nrec], len);
	for (size_t cut = 0; cut < len; cut++) {
		struct cap_reader *r;
		struct cap_error err;
		uint64_t whole = 0;
		size_t in = 0; /* the record the cut falls in (or after) */

		while (in < nrec && starts[in + 1] <= cut) {
			whole += types[in] == 3;
			in++;
		}
		if (cut < starts[1]) { /* no whole header: nothing to read */
			ck_assert_int_eq(cap_reader_open_buffer(data, cut, "c.cap", 0, &r, &err), -1);
			continue;
		}
		ck_assert_msg(cap_reader_open_buffer(data, cut, "c.cap", 0, &r, &err) == 0,
			      "cut at %zu: %s", cut, err.text);
		ck_assert_uint_eq(cap_reader_info(r)->nsnapshots, whole);
		ck_assert(!cap_reader_info(r)->complete);
		ck_assert_uint_eq(cap_reader_info(r)->cut_offset, starts[in]);
		cap_reader_close(r);
		ck_assert_int_eq(cap_reader_open_buffer(data, cut, "c.cap", CAP_OPEN_STRICT, &r, &err),
				 -1);
		ck_assert_msg(err.offset == starts[in], "cut at %zu named at %llu, not %zu", cut,
			      (unsigned long long)err.offset, starts[in]);
	}
	free(data);
	free_synthetic(&sy);
}
END_TEST

/* RLIMIT_FSIZE (a disk too full): the writer fails, the file reads up to its last snapshot. */
START_TEST(test_file_size_limit)
{
	struct cap_stream_info info = { 1, "big", CAP_THP_NONE };
	struct cap_vma v = { 1u << 20, (1u << 20) + 2000u * PAGE };
	struct cap_stream_state st;
	struct cap_snapshot snap = { 0, 0, CAP_NO_FULL_SCANS, 0, 1, &st };
	struct rlimit lim = { 60000, 60000 };
	struct cap_writer *w;
	struct cap_reader *r;
	struct cap_error err;
	uint64_t written = 0;
	const char *path = tmp_path("limit.cap");
	int rc = 0;

	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0); /* this test runs in its own process */
	ck_assert_int_eq(cap_stream_state_init(&st, &v, 1, &err), 0);
	ck_assert_int_eq(cap_writer_open(path, &info, &st, 1, false, &w, &err), 0);
	for (uint64_t k = 0; k < 100 && rc == 0; k++) {
		for (size_t i = 0; i < st.npages; i++) {
			st.flags[i] = CAP_PRESENT;
			st.token[i] = (k << 32) + i + 1; /* every page changes: ~18 KB a snapshot */
		}
		snap.index = k;
		rc = cap_writer_snapshot(w, &snap, &err);
		if (rc == 0)
			written++;
	}
	ck_assert_int_eq(rc, -1);
	ck_assert_msg(strstr(err.text, "File too large") && strstr(err.text, "complete snapshot"),
		      "%s", err.text);
	ck_assert_uint_eq(cap_writer_snapshots(w), written);
	ck_assert_uint_gt(written, 0);
	cap_writer_close(w, &err);
	ck_assert_int_eq(cap_reader_open(path, 0, &r, &err), 0);
	ck_assert_uint_eq(cap_reader_info(r)->nsnapshots, written);
	ck_assert_uint_eq(cap_reader_info(r)->cut_offset, cap_reader_info(r)->file_size);
	cap_reader_close(r);
	cap_stream_state_free(&st);
}
END_TEST

/* ---- live captures of children ------------------------------------------------------- */

#define LIVE_PAGES 40

struct child {
	pid_t pid;
	int cmd;   /* parent writes commands: 'x' exit, 'e' exec sleep */
	int reply; /* child writes its addresses */
};

/* The child's side: pages known by construction, then wait for a command. */
static void child_main(int cmd, int reply, void (*setup)(uint64_t addr[2]))
{
	uint64_t addr[2] = { 0, 0 };
	char c = 0;

	setup(addr);
	if (write(reply, addr, sizeof(addr)) != sizeof(addr))
		_exit(3);
	if (read(cmd, &c, 1) != 1)
		_exit(4);
	if (c == 'e')
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
	_exit(0);
}

static struct child spawn(void (*setup)(uint64_t addr[2]), uint64_t addr[2])
{
	int to_child[2], from_child[2];
	struct child c;

	ck_assert_int_eq(pipe(to_child), 0);
	ck_assert_int_eq(pipe(from_child), 0);
	c.pid = fork();
	ck_assert_int_ge(c.pid, 0);
	if (c.pid == 0) {
		close(to_child[1]);
		close(from_child[0]);
		child_main(to_child[0], from_child[1], setup);
	}
	close(to_child[0]);
	close(from_child[1]);
	c.cmd = to_child[1];
	c.reply = from_child[0];
	ck_assert_int_eq(read(c.reply, addr, 2 * sizeof(*addr)), 2 * (int)sizeof(*addr));
	return c;
}

static void tell(struct child *c, char what)
{
	ck_assert_int_eq(write(c->cmd, &what, 1), 1);
}

static void finish(struct child *c)
{
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
	close(c->cmd);
	close(c->reply);
}

/*
 * Pages 0-9 written then zeroed (present zero pages), 10-19 equal, 20-29
 * unique, 30-39 never touched; a shared mapping beside (never captured).
 */
static void known_pages(uint64_t addr[2])
{
	uint8_t *m = mmap(NULL, LIVE_PAGES * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *shared = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			       -1, 0);

	if (m == MAP_FAILED || shared == MAP_FAILED)
		_exit(2);
	madvise(m, LIVE_PAGES * PAGE, MADV_NOHUGEPAGE);
	for (int i = 0; i < 10; i++) {
		m[i * PAGE] = 1;
		m[i * PAGE] = 0;
	}
	for (int i = 10; i < 20; i++)
		fill_page(m + i * PAGE, 7);
	for (int i = 20; i < 30; i++)
		fill_page(m + i * PAGE, 100 + (unsigned)i);
	memset(shared, 5, 4 * PAGE);
	addr[0] = (uint64_t)(uintptr_t)m;
	addr[1] = (uint64_t)(uintptr_t)shared;
}

static struct cap_proc *open_child(pid_t pid)
{
	struct cap_proc *p;
	struct cap_error err;
	int why;

	ck_assert_msg(cap_proc_open(&pid, 1, &p, &why, &err) == 0, "%s", err.text);
	return p;
}

static struct cap_snapshot *snapshot_of(struct cap_proc *p, bool consistent)
{
	struct cap_snapshot *s;
	struct cap_error err;

	ck_assert_msg(cap_proc_snapshot(p, consistent, NULL, NULL, NULL, &s, &err) == 0, "%s",
		      err.text);
	return s;
}

static void check_known_pages(const struct cap_stream_state *s, uint64_t addr, uint64_t shared)
{
	size_t first = cap_stream_page_of(s, addr);
	uint8_t page[PAGE];
	uint64_t equal;

	ck_assert_uint_ne(first, SIZE_MAX);
	ck_assert_uint_eq(cap_stream_page_of(s, shared), SIZE_MAX);
	fill_page(page, 7);
	equal = cap_page_token(page);
	for (size_t i = 0; i < LIVE_PAGES; i++) {
		size_t at = first + i;

		if (i < 10) {
			ck_assert_uint_eq(s->flags[at] & CAP_PRESENT, CAP_PRESENT);
			ck_assert_uint_eq(s->token[at], CAP_TOKEN_ZERO);
		} else if (i < 20) {
			ck_assert_uint_eq(s->token[at], equal);
		} else if (i < 30) {
			fill_page(page, 100 + (unsigned)i);
			ck_assert_uint_eq(s->token[at], cap_page_token(page));
			ck_assert_uint_ne(s->token[at], equal);
		} else {
			ck_assert_uint_eq(s->flags[at], 0);
		}
	}
}

/* A mapping of twice this machine's memory and swap, reserved, one page touched. */
static void sparse_mapping(uint64_t addr[2])
{
	struct sysinfo si;
	size_t len;
	char *m;

	if (sysinfo(&si) != 0)
		_exit(1);
	len = 2 * ((size_t)si.totalram + si.totalswap) * si.mem_unit;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (m == MAP_FAILED)
		_exit(1);
	m[0] = 1;
	addr[0] = (uint64_t)(uintptr_t)m;
	addr[1] = len;
}

/* Address space never touched, by the terabyte: refused with the reason, no allocation. */
START_TEST(test_sparse_mappings_are_refused)
{
	uint64_t addr[2];
	struct child c = spawn(sparse_mapping, addr);
	struct cap_proc *p;
	struct cap_error err;
	int why;

	ck_assert_int_ne(cap_proc_open(&c.pid, 1, &p, &why, &err), 0);
	ck_assert_int_eq(why, EFBIG);
	ck_assert_ptr_nonnull(strstr(err.text, "more than this machine's memory and swap"));
	finish(&c);
}
END_TEST

START_TEST(test_live_known_pages)
{
	uint64_t addr[2];
	struct child c = spawn(known_pages, addr);
	struct cap_proc *p = open_child(c.pid);
	struct cap_snapshot *s;

	ck_assert_int_eq(cap_proc_streams(p)[0].pid, c.pid);
	s = snapshot_of(p, false);
	ck_assert_int_eq(s->streams[0].status, CAP_STREAM_LIVE);
	check_known_pages(&s->streams[0], addr[0], addr[1]);
	s = snapshot_of(p, true); /* the same through --consistent */
	check_known_pages(&s->streams[0], addr[0], addr[1]);
	ck_assert_uint_gt(s->pause_ns, 0);
	cap_proc_close(p);
	finish(&c);
}
END_TEST

/* Two private mappings, the second one (addr[1]) MADV_MERGEABLE, both filled. */
static void one_mergeable(uint64_t addr[2])
{
	uint8_t *plain = mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			      -1, 0);
	uint8_t *merge = mmap(NULL, 6 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			      -1, 0);

	if (plain == MAP_FAILED || merge == MAP_FAILED || madvise(merge, 6 * PAGE, MADV_MERGEABLE))
		_exit(2);
	for (int i = 0; i < 8; i++)
		fill_page(plain + i * PAGE, 3);
	for (int i = 0; i < 6; i++)
		fill_page(merge + i * PAGE, 9);
	addr[0] = (uint64_t)(uintptr_t)plain;
	addr[1] = (uint64_t)(uintptr_t)merge;
}

/* Pages 0-5 only read (the shared zero page), 6-9 written with zeros (their own). */
static void zero_page_reads(uint64_t addr[2])
{
	volatile uint8_t *m = mmap(NULL, 10 * PAGE, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t sum = 0;

	if (m == MAP_FAILED)
		_exit(2);
	madvise((void *)m, 10 * PAGE, MADV_NOHUGEPAGE);
	for (int i = 0; i < 6; i++)
		sum += m[i * PAGE];
	for (int i = 6; i < 10; i++)
		m[i * PAGE] = sum;
	addr[0] = (uint64_t)(uintptr_t)m;
	addr[1] = 0;
}

/* Where kpageflags is readable (root), a page on the shared zero page is absent. */
START_TEST(test_live_zero_page_is_absent)
{
	uint64_t addr[2];
	struct child c;
	struct cap_proc *p;
	struct cap_snapshot *s;
	size_t first;

	if (access("/proc/kpageflags", R_OK) != 0) {
		printf("# zero page reads: skipped (needs /proc/kpageflags, root)\n");
		return;
	}
	c = spawn(zero_page_reads, addr);
	p = open_child(c.pid);
	s = snapshot_of(p, false);
	first = cap_stream_page_of(&s->streams[0], addr[0]);
	ck_assert_uint_ne(first, SIZE_MAX);
	for (size_t i = 0; i < 10; i++) {
		uint8_t f = s->streams[0].flags[first + i];

		if (i < 6)
			ck_assert_msg(!(f & CAP_PRESENT), "page %zu, only read, is present", i);
		else
			ck_assert_msg((f & CAP_PRESENT) &&
					      s->streams[0].token[first + i] == CAP_TOKEN_ZERO,
				      "page %zu, written with zeros, is not a present zero page", i);
	}
	cap_proc_close(p);
	finish(&c);
}
END_TEST

/* CAP_PROC_MERGEABLE_ONLY: only the VMAs smaps calls mergeable ("mg"), all their pages. */
START_TEST(test_live_mergeable_only)
{
	uint64_t addr[2];
	struct child c = spawn(one_mergeable, addr);
	struct cap_proc *p;
	struct cap_snapshot *s;
	struct cap_error err;
	uint8_t page[PAGE];
	int why;

	ck_assert_msg(cap_proc_open_flags(&c.pid, 1, CAP_PROC_MERGEABLE_ONLY, &p, &why, &err) == 0,
		      "%s", err.text);
	s = snapshot_of(p, false);
	ck_assert_uint_eq(s->streams[0].nvmas, 1);
	ck_assert_uint_eq(s->streams[0].vmas[0].start, addr[1]);
	ck_assert_uint_eq(s->streams[0].vmas[0].end, addr[1] + 6 * PAGE);
	ck_assert_uint_eq(cap_stream_page_of(&s->streams[0], addr[0]), SIZE_MAX);
	fill_page(page, 9);
	for (size_t i = 0; i < 6; i++)
		ck_assert_uint_eq(s->streams[0].token[i], cap_page_token(page));
	cap_proc_close(p);
	/* without the flag both are there */
	p = open_child(c.pid);
	s = snapshot_of(p, false);
	ck_assert_uint_ne(cap_stream_page_of(&s->streams[0], addr[0]), SIZE_MAX);
	ck_assert_uint_ne(cap_stream_page_of(&s->streams[0], addr[1]), SIZE_MAX);
	cap_proc_close(p);
	finish(&c);
}
END_TEST

/* A live capture written and read back: the file holds the pages as taken. */
START_TEST(test_live_through_file)
{
	uint64_t addr[2];
	struct child c = spawn(known_pages, addr);
	struct cap_proc *p = open_child(c.pid);
	struct cap_writer *w;
	struct cap_reader *r;
	struct cap_error err;
	struct cap_snapshot *s;
	const struct cap_snapshot *got;
	uint8_t page[PAGE], want[PAGE];
	const char *path = tmp_path("live.cap");

	ck_assert_int_eq(cap_writer_open(path, cap_proc_streams(p), cap_proc_initial(p), 1, true, &w,
					 &err), 0);
	ck_assert_msg(cap_proc_snapshot(p, false, w, NULL, NULL, &s, &err) == 0, "%s", err.text);
	ck_assert_int_eq(cap_writer_snapshot(w, s, &err), 0);
	ck_assert_int_eq(cap_writer_close(w, &err), 0);
	ck_assert_int_eq(cap_reader_open(path, CAP_OPEN_STRICT, &r, &err), 0);
	ck_assert_int_eq(cap_reader_next(r, &got, &err), 1);
	check_known_pages(&got->streams[0], addr[0], addr[1]);
	fill_page(want, 120);
	ck_assert_int_eq(cap_reader_page_bytes(r, cap_page_token(want), page, &err), 0);
	ck_assert_int_eq(memcmp(page, want, PAGE), 0);
	cap_reader_close(r);
	cap_proc_close(p);
	finish(&c);
}
END_TEST

/* The state letter of thread @tid of @pid (@tid 0: the process), or 0 when it is gone. */
static char thread_state(pid_t pid, pid_t tid)
{
	char path[96], text[512], *paren;
	FILE *f;
	size_t n;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	paren = strrchr(text, ')');
	return paren && paren[1] == ' ' ? paren[2] : 0;
}

static void wait_for_state(pid_t pid, char want)
{
	for (int tries = 0; tries < 500; tries++) {
		char got = thread_state(pid, 0);

		if (!got || got == want)
			return;
		usleep(10000);
	}
	ck_abort_msg("process %d never reached state %c", (int)pid, want);
}

static void wait_for_comm(pid_t pid, const char *want)
{
	for (int tries = 0; tries < 500; tries++) {
		char path[64], comm[32] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		f = fopen(path, "r");
		if (f && fgets(comm, sizeof(comm), f) && strncmp(comm, want, strlen(want)) == 0) {
			fclose(f);
			return;
		}
		if (f)
			fclose(f);
		usleep(10000);
	}
	ck_abort_msg("process %d never became %s", (int)pid, want);
}

/*
 * Exit mid-capture, as a zombie (_i = 0, --consistent: a zombie cannot be
 * stopped) and reaped (1): the stream ends, "exited".
 */
START_TEST(test_live_exit)
{
	uint64_t addr[2];
	struct child c = spawn(known_pages, addr);
	struct cap_proc *p = open_child(c.pid);
	struct cap_snapshot *s = snapshot_of(p, false);
	struct cap_error err;

	ck_assert_int_eq(s->streams[0].status, CAP_STREAM_LIVE);
	tell(&c, 'x');
	if (_i == 1)
		waitpid(c.pid, NULL, 0);
	else
		wait_for_state(c.pid, 'Z');
	ck_assert_msg(cap_proc_snapshot(p, _i == 0, NULL, NULL, NULL, &s, &err) == 0, "%s",
		      err.text);
	ck_assert_int_eq(s->streams[0].status, CAP_STREAM_EXITED);
	ck_assert(!cap_proc_any_live(p));
	cap_proc_close(p);
	if (_i == 0)
		waitpid(c.pid, NULL, 0);
	close(c.cmd);
	close(c.reply);
}
END_TEST

static void count_note(void *ctx, const char *text)
{
	(*(int *)ctx)++;
	ck_assert_ptr_nonnull(strstr(text, "exec'd"));
}

START_TEST(test_live_exec)
{
	uint64_t addr[2];
	struct child c = spawn(known_pages, addr);
	struct cap_proc *p = open_child(c.pid);
	struct cap_snapshot *s = snapshot_of(p, false);
	struct cap_error err;
	int noted = 0;

	tell(&c, 'e');
	wait_for_comm(c.pid, "sleep");
	ck_assert_int_eq(cap_proc_snapshot(p, false, NULL, count_note, &noted, &s, &err), 0);
	ck_assert_int_eq(s->streams[0].status, CAP_STREAM_EXECED);
	ck_assert_int_eq(noted, 1);
	ck_assert_int_eq(cap_proc_snapshot(p, false, NULL, count_note, &noted, &s, &err), 0);
	ck_assert_int_eq(noted, 1); /* said once */
	cap_proc_close(p);
	finish(&c);
}
END_TEST

static void huge_pages(uint64_t addr[2])
{
	size_t len = 8u << 20;
	uint8_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *aligned;

	if (m == MAP_FAILED)
		_exit(2);
	aligned = (uint8_t *)(((uintptr_t)m + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1));
	madvise(aligned, 4u << 20, MADV_HUGEPAGE);
	for (size_t i = 0; i < (4u << 20); i += PAGE)
		aligned[i] = (uint8_t)(i / PAGE + 1);
	addr[0] = (uint64_t)(uintptr_t)aligned;
	addr[1] = 0;
}

static long anon_huge_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = 0, v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &v) == 1)
			kib = v;
	fclose(f);
	return kib;
}

START_TEST(test_live_thp)
{
	uint64_t addr[2];
	struct child c = spawn(huge_pages, addr);
	struct cap_proc *p = open_child(c.pid);
	struct cap_snapshot *s;
	size_t first, thp = 0;

	if (cap_proc_streams(p)[0].thp == CAP_THP_NONE) {
		fprintf(stderr, "# SKIP test_live_thp: /proc/kpageflags is not readable (not root)\n");
		goto out;
	}
	if (anon_huge_kib(c.pid) == 0) {
		fprintf(stderr, "# SKIP test_live_thp: no THP formed (AnonHugePages 0: THP off?)\n");
		goto out;
	}
	s = snapshot_of(p, false);
	first = cap_stream_page_of(&s->streams[0], addr[0]);
	ck_assert_uint_ne(first, SIZE_MAX);
	for (size_t i = 0; i < 1024; i++)
		thp += (s->streams[0].flags[first + i] & CAP_THP) != 0;
	ck_assert_msg(thp >= 512 && thp * 4 >= (size_t)anon_huge_kib(c.pid),
		      "%zu pages marked THP, AnonHugePages %ld kB", thp, anon_huge_kib(c.pid));
out:
	cap_proc_close(p);
	finish(&c);
}
END_TEST

#include "cap_freeze.h"

/* --consistent's stop: every thread stopped (t), then as before: running, or still stopped (T). */
START_TEST(test_freeze_restores)
{
	uint64_t addr[2];
	struct child c = spawn(known_pages, addr);
	struct cap_freeze f;
	struct cap_error err;

	ck_assert_msg(cap_freeze(c.pid, &f, &err) == 0, "%s", err.text);
	ck_assert_uint_eq(f.n, 1);
	ck_assert_int_eq(thread_state(c.pid, c.pid), 't');
	cap_thaw(&f);
	ck_assert_int_ne(thread_state(c.pid, c.pid), 't');
	ck_assert_int_ne(thread_state(c.pid, c.pid), 'T');
	kill(c.pid, SIGSTOP);
	wait_for_state(c.pid, 'T');
	ck_assert_int_eq(cap_freeze(c.pid, &f, &err), 0);
	cap_thaw(&f);
	/* stopped before: stopped after (the detach wakes it to stop again, at once) */
	wait_for_state(c.pid, 'T');
	usleep(100000);
	ck_assert_int_eq(thread_state(c.pid, c.pid), 'T');
	kill(c.pid, SIGCONT);
	tell(&c, 'x');
	waitpid(c.pid, NULL, 0);
	close(c.cmd);
	close(c.reply);
}
END_TEST

START_TEST(test_no_such_process)
{
	struct cap_proc *p;
	struct cap_error err;
	int why;
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	ck_assert_int_eq(cap_proc_open(&pid, 1, &p, &why, &err), -1);
	ck_assert_int_eq(why, ESRCH);
	ck_assert_ptr_nonnull(strstr(err.text, "no process"));
}
END_TEST

/* ---- the suite ---------------------------------------------------------------------------- */

static Suite *capture_suite(void)
{
	Suite *s = suite_create("capture");
	TCase *tc = tcase_create("file");

	tcase_add_test(tc, test_tokens);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_delta_encoding);
	tcase_add_test(tc, test_delta_is_small);
	tcase_add_test(tc, test_bytes_round_trip);
	tcase_add_test(tc, test_bytes_must_come_first);
	tcase_add_test(tc, test_summary);
	tcase_add_test(tc, test_file_size_limit);
	suite_add_tcase(s, tc);

	tc = tcase_create("damage");
	tcase_add_test(tc, test_damage_at_every_byte);
	tcase_add_test(tc, test_cut_at_every_length);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);

	tc = tcase_create("live");
	tcase_add_test(tc, test_sparse_mappings_are_refused);
#ifdef __SANITIZE_ADDRESS__
	/* the children are forks of this program, ASan's shadow and all: the
	 * test above is what capturing them does */
	printf("# live captures of children: skipped under AddressSanitizer (its "
	       "shadow mapping makes every child a sparse mapping capture refuses)\n");
	(void)test_live_known_pages;
	(void)test_live_mergeable_only;
	(void)test_live_zero_page_is_absent;
	(void)test_live_through_file;
	(void)test_live_exit;
	(void)test_live_exec;
	(void)test_live_thp;
#else
	tcase_add_test(tc, test_live_known_pages);
	tcase_add_test(tc, test_live_mergeable_only);
	tcase_add_test(tc, test_live_zero_page_is_absent);
	tcase_add_test(tc, test_live_through_file);
	tcase_add_loop_test(tc, test_live_exit, 0, 2);
	tcase_add_test(tc, test_live_exec);
	tcase_add_test(tc, test_live_thp);
#endif
	tcase_add_test(tc, test_freeze_restores);
	tcase_add_test(tc, test_no_such_process);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(capture_suite());
	char rm[300];
	int failed;

	if (!mkdtemp(tmpdir))
		return 99;
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	snprintf(rm, sizeof(rm), "rm -rf '%s'", tmpdir);
	if (system(rm) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
