/*
 * cap_writer.c - writing a capture file: the preamble and the header, then
 * snapshot by snapshot a record of what changed since the previous one
 * (after the bytes records of the pages it brings, with --bytes), then the
 * end record. Each record is assembled in memory and written whole, and
 * the file is flushed to the disk after every snapshot, so that whatever
 * stops a capture (a kill, a full disk, RLIMIT_FSIZE) leaves a file that
 * reads up to its last complete snapshot; on a write error the writer cuts
 * the file back to that point itself. The format is docs/capture-format.md.
 */
#include "cap_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

struct cap_writer {
	int fd;
	char *path;
	bool with_bytes;
	bool failed;            /* a write failed: only close is left */
	uint64_t size;          /* bytes written */
	uint64_t good_size;     /* the end of the last complete record */
	uint64_t nsnapshots;
	size_t nstreams;
	struct cap_stream_state *prev; /* each stream as the last snapshot left it */
	bool *ended;            /* the stream's end was written */
	struct cap_buf rec;     /* the record being assembled */
	/* --bytes: tokens stored or pending, the pending pages, the compressor */
	struct cap_tokenset stored;
	size_t npending;
	uint64_t *pending_token;
	uint8_t *pending_page;
	ZSTD_CCtx *zc;
	void *zout;
	size_t zout_cap;
};

/* Write all of @b at the end of the file; on failure cut back to the last whole record. */
static int append(struct cap_writer *w, const struct cap_buf *b, struct cap_error *err)
{
	const uint8_t *p = b->data;
	size_t left = b->len;
	int why = 0;

	if (w->failed)
		return cap_fail(err, "%s: an earlier write failed", w->path);
	if (b->failed)
		return cap_fail(err, "%s: out of memory for a record", w->path);
	while (left) {
		ssize_t n = write(w->fd, p, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			why = n < 0 ? errno : ENOSPC;
			break;
		}
		p += n;
		left -= (size_t)n;
		w->size += (uint64_t)n;
	}
	if (!left) {
		w->good_size = w->size;
		return 0;
	}
	w->failed = true;
	if (ftruncate(w->fd, (off_t)w->good_size) == 0)
		w->size = w->good_size;
	return cap_fail(err, "cannot write %s: %s (it keeps the %llu complete snapshot%s "
			"before, %llu bytes)", w->path, strerror(why),
			(unsigned long long)w->nsnapshots, w->nsnapshots == 1 ? "" : "s",
			(unsigned long long)w->size);
}

static void encode_preamble_and_header(struct cap_writer *w, const struct cap_stream_info *streams,
				       const struct cap_stream_state *initial)
{
	size_t rec;

	cap_buf_put(&w->rec, CAP_MAGIC, CAP_MAGIC_LEN);
	cap_buf_u32(&w->rec, CAP_FORMAT_VERSION);
	cap_buf_u32(&w->rec, CAP_PAGE_SIZE);
	rec = cap_record_begin(&w->rec, CAP_REC_HEADER);
	cap_buf_u8(&w->rec, w->with_bytes);
	cap_buf_varint(&w->rec, w->nstreams);
	for (size_t i = 0; i < w->nstreams; i++) {
		char comm[CAP_COMM_MAX] = { 0 };

		strncpy(comm, streams[i].comm, sizeof(comm) - 1);
		cap_buf_varint(&w->rec, (uint32_t)streams[i].pid);
		cap_buf_put(&w->rec, comm, sizeof(comm));
		cap_buf_u8(&w->rec, (uint8_t)streams[i].thp);
		cap_encode_vmas(&w->rec, initial[i].vmas, initial[i].nvmas);
	}
	cap_record_end(&w->rec, rec);
}

static int alloc_bytes_side(struct cap_writer *w)
{
	w->zout_cap = ZSTD_compressBound((size_t)CAP_BYTES_PER_RECORD * CAP_PAGE_SIZE);
	w->zc = ZSTD_createCCtx();
	w->zout = malloc(w->zout_cap);
	w->pending_token = malloc(CAP_BYTES_PER_RECORD * sizeof(*w->pending_token));
	w->pending_page = malloc((size_t)CAP_BYTES_PER_RECORD * CAP_PAGE_SIZE);
	if (!w->zc || !w->zout || !w->pending_token || !w->pending_page ||
	    cap_tokenset_init(&w->stored, 1 << 16) != 0)
		return -1;
	return 0;
}

static void free_writer(struct cap_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	for (size_t i = 0; w->prev && i < w->nstreams; i++)
		cap_stream_state_free(&w->prev[i]);
	free(w->prev);
	free(w->ended);
	cap_buf_free(&w->rec);
	cap_tokenset_free(&w->stored);
	free(w->pending_token);
	free(w->pending_page);
	ZSTD_freeCCtx(w->zc);
	free(w->zout);
	free(w->path);
	free(w);
}

int cap_writer_open(const char *path, const struct cap_stream_info *streams,
		    const struct cap_stream_state *initial, size_t nstreams, bool with_bytes,
		    struct cap_writer **out, struct cap_error *err)
{
	struct cap_writer *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (!w)
		return cap_fail(err, "out of memory");
	w->fd = -1;
	w->with_bytes = with_bytes;
	w->nstreams = nstreams;
	w->path = strdup(path);
	w->prev = calloc(nstreams ? nstreams : 1, sizeof(*w->prev));
	w->ended = calloc(nstreams ? nstreams : 1, sizeof(*w->ended));
	if (!w->path || !w->prev || !w->ended || (with_bytes && alloc_bytes_side(w) != 0)) {
		cap_fail(err, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < nstreams; i++)
		if (cap_stream_state_init(&w->prev[i], initial[i].vmas, initial[i].nvmas, err) != 0)
			goto fail;
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (w->fd < 0) {
		cap_fail(err, "cannot create %s: %s", path, strerror(errno));
		goto fail;
	}
	encode_preamble_and_header(w, streams, initial);
	if (append(w, &w->rec, err) != 0)
		goto fail;
	*out = w;
	return 0;
fail:
	free_writer(w);
	return -1;
}

bool cap_writer_wants_bytes(const struct cap_writer *w, uint64_t token)
{
	return w->with_bytes && token != CAP_TOKEN_ZERO && !cap_tokenset_find(&w->stored, token);
}

/* The pending pages as one bytes record: their tokens, then one zstd frame of their bytes. */
static int flush_bytes(struct cap_writer *w, struct cap_error *err)
{
	size_t rec, z;

	if (!w->npending)
		return 0;
	z = ZSTD_compressCCtx(w->zc, w->zout, w->zout_cap, w->pending_page,
			      w->npending * CAP_PAGE_SIZE, CAP_ZSTD_LEVEL);
	if (ZSTD_isError(z))
		return cap_fail(err, "%s: zstd: %s", w->path, ZSTD_getErrorName(z));
	cap_buf_reset(&w->rec);
	rec = cap_record_begin(&w->rec, CAP_REC_BYTES);
	cap_buf_varint(&w->rec, w->npending);
	for (size_t i = 0; i < w->npending; i++)
		cap_buf_u64(&w->rec, w->pending_token[i]);
	cap_buf_put(&w->rec, w->zout, z);
	cap_record_end(&w->rec, rec);
	w->npending = 0;
	return append(w, &w->rec, err);
}

int cap_writer_put_bytes(struct cap_writer *w, uint64_t token, const void *page,
			 struct cap_error *err)
{
	bool added;

	if (!cap_writer_wants_bytes(w, token))
		return 0;
	if (!cap_tokenset_add(&w->stored, token, &added))
		return cap_fail(err, "out of memory for the tokens stored");
	w->pending_token[w->npending] = token;
	memcpy(w->pending_page + w->npending * CAP_PAGE_SIZE, page, CAP_PAGE_SIZE);
	if (++w->npending == CAP_BYTES_PER_RECORD)
		return flush_bytes(w, err);
	return 0;
}

/* ---- snapshots ----------------------------------------------------------------- */

static bool page_differs(const struct cap_stream_state *a, const struct cap_stream_state *b,
			 size_t i)
{
	return a->token[i] != b->token[i] || a->flags[i] != b->flags[i];
}

/* The changed pages of @cur against @prev (same VMAs) as runs: gap, count, pages. */
static void encode_runs(struct cap_buf *b, const struct cap_stream_state *prev,
			const struct cap_stream_state *cur)
{
	size_t nruns = 0, end = 0;

	for (size_t i = 0; i < cur->npages; i++)
		if (page_differs(prev, cur, i) && (i == 0 || !page_differs(prev, cur, i - 1)))
			nruns++;
	cap_buf_varint(b, nruns);
	for (size_t i = 0; i < cur->npages;) {
		size_t j;

		if (!page_differs(prev, cur, i)) {
			i++;
			continue;
		}
		for (j = i; j < cur->npages && page_differs(prev, cur, j); j++)
			;
		cap_buf_varint(b, i - end);
		cap_buf_varint(b, j - i);
		for (size_t k = i; k < j; k++) {
			bool token = cur->token[k] != CAP_TOKEN_ZERO;

			cap_buf_u8(b, (uint8_t)(cur->flags[k] | (token ? CAP_ENC_TOKEN : 0)));
			if (token)
				cap_buf_u64(b, cur->token[k]);
		}
		end = i = j;
	}
}

/* What the writer promises the reader: pages that fit the VMAs, tokens only where present. */
static int check_stream(const struct cap_writer *w, size_t i, const struct cap_stream_state *s,
			struct cap_error *err)
{
	struct cap_stream_state probe = { .vmas = s->vmas, .nvmas = s->nvmas };

	if (s->nvmas && cap_stream_page_of(&probe, s->vmas[s->nvmas - 1].end - 1) + 1 != s->npages)
		return cap_fail(err, "stream %zu: %zu pages do not fill its VMAs", i, s->npages);
	for (size_t k = 0; k < s->nvmas; k++)
		if (s->vmas[k].start >= s->vmas[k].end || s->vmas[k].start % CAP_PAGE_SIZE ||
		    s->vmas[k].end % CAP_PAGE_SIZE ||
		    (k && s->vmas[k].start <= s->vmas[k - 1].end))
			return cap_fail(err, "stream %zu: VMA %zu is empty, unaligned, or not above "
					"the one before and apart from it", i, k);
	for (size_t p = 0; p < s->npages; p++) {
		if ((s->flags[p] & ~CAP_PAGE_FLAGS) ||
		    (!(s->flags[p] & CAP_PRESENT) && (s->flags[p] || s->token[p])))
			return cap_fail(err, "stream %zu: page %zu has flags 0x%x and a token "
					"though absent", i, p, s->flags[p]);
		if (w->with_bytes && s->token[p] != CAP_TOKEN_ZERO &&
		    !cap_tokenset_find(&w->stored, s->token[p]))
			return cap_fail(err, "stream %zu: page %zu's bytes were not given", i, p);
	}
	if (s->nvmas == 0 && s->npages != 0)
		return cap_fail(err, "stream %zu: pages without VMAs", i);
	return 0;
}

static int encode_stream(struct cap_writer *w, size_t i, const struct cap_stream_state *cur,
			 struct cap_error *err)
{
	struct cap_stream_state *prev = &w->prev[i];
	bool vmas_changed;

	if (w->ended[i]) {
		if (cur->status == CAP_STREAM_LIVE)
			return cap_fail(err, "stream %zu: live again after its end", i);
		return 0;
	}
	if (cur->status != CAP_STREAM_LIVE) {
		cap_buf_varint(&w->rec, i);
		cap_buf_u8(&w->rec, (uint8_t)cur->status);
		w->ended[i] = true;
		return 0;
	}
	if (check_stream(w, i, cur, err) != 0)
		return -1;
	vmas_changed = !cap_vmas_equal(prev->vmas, prev->nvmas, cur->vmas, cur->nvmas);
	if (vmas_changed && cap_stream_state_remap(prev, cur->vmas, cur->nvmas, err) != 0)
		return -1;
	if (!vmas_changed && (prev->npages == 0 ||
			      (memcmp(prev->token, cur->token, cur->npages * sizeof(*cur->token)) == 0 &&
			       memcmp(prev->flags, cur->flags, cur->npages) == 0)))
		return 0; /* unchanged: no entry */
	cap_buf_varint(&w->rec, i);
	cap_buf_u8(&w->rec, CAP_STREAM_LIVE);
	cap_buf_u8(&w->rec, vmas_changed);
	if (vmas_changed)
		cap_encode_vmas(&w->rec, cur->vmas, cur->nvmas);
	encode_runs(&w->rec, prev, cur);
	memcpy(prev->token, cur->token, cur->npages * sizeof(*cur->token));
	memcpy(prev->flags, cur->flags, cur->npages);
	return 0;
}

/* The count of stream entries goes first: counted on a copy of the streams' ends. */
static size_t count_entries(const struct cap_writer *w, const struct cap_snapshot *snap)
{
	size_t n = 0;

	for (size_t i = 0; i < w->nstreams; i++) {
		const struct cap_stream_state *cur = &snap->streams[i], *prev = &w->prev[i];

		if (w->ended[i])
			continue;
		if (cur->status != CAP_STREAM_LIVE ||
		    !cap_vmas_equal(prev->vmas, prev->nvmas, cur->vmas, cur->nvmas) ||
		    (cur->npages && (memcmp(prev->token, cur->token,
					    cur->npages * sizeof(*cur->token)) != 0 ||
				     memcmp(prev->flags, cur->flags, cur->npages) != 0)))
			n++;
	}
	return n;
}

int cap_writer_snapshot(struct cap_writer *w, const struct cap_snapshot *snap,
			struct cap_error *err)
{
	size_t rec;

	if (w->failed)
		return cap_fail(err, "%s: an earlier write failed", w->path);
	if (snap->nstreams != w->nstreams)
		return cap_fail(err, "a snapshot of %zu streams for a file of %zu", snap->nstreams,
				w->nstreams);
	if (flush_bytes(w, err) != 0)
		return -1;
	cap_buf_reset(&w->rec);
	rec = cap_record_begin(&w->rec, CAP_REC_SNAPSHOT);
	cap_buf_varint(&w->rec, w->nsnapshots);
	cap_buf_varint(&w->rec, snap->time_ns);
	cap_buf_varint(&w->rec, snap->full_scans + 1); /* 0: none */
	cap_buf_varint(&w->rec, snap->pause_ns);
	cap_buf_varint(&w->rec, count_entries(w, snap));
	for (size_t i = 0; i < w->nstreams; i++)
		if (encode_stream(w, i, &snap->streams[i], err) != 0)
			return -1;
	cap_record_end(&w->rec, rec);
	if (append(w, &w->rec, err) != 0)
		return -1;
	w->nsnapshots++;
	if (fdatasync(w->fd) != 0 && errno != EINVAL)
		return cap_fail(err, "cannot flush %s: %s", w->path, strerror(errno));
	return 0;
}

uint64_t cap_writer_snapshots(const struct cap_writer *w)
{
	return w->nsnapshots;
}

uint64_t cap_writer_bytes(const struct cap_writer *w)
{
	return w->size;
}

int cap_writer_close(struct cap_writer *w, struct cap_error *err)
{
	int rc = 0;

	if (!w)
		return 0;
	if (!w->failed) {
		size_t rec;

		cap_buf_reset(&w->rec);
		rec = cap_record_begin(&w->rec, CAP_REC_END);
		cap_buf_varint(&w->rec, w->nsnapshots);
		cap_record_end(&w->rec, rec);
		rc = append(w, &w->rec, err);
		if (rc == 0 && fdatasync(w->fd) != 0 && errno != EINVAL)
			rc = cap_fail(err, "cannot flush %s: %s", w->path, strerror(errno));
	}
	if (close(w->fd) != 0 && rc == 0)
		rc = cap_fail(err, "cannot write %s: %s", w->path, strerror(errno));
	w->fd = -1;
	free_writer(w);
	return rc;
}
