/*
 * cap_reader.c - reading a capture file: cap_reader_open validates all of
 * it once (the preamble, every record's framing and checksum, every
 * snapshot decoded against the one before, every token's bytes present
 * before use in a --bytes file) and indexes it: where each snapshot record
 * starts, where each stored page's bytes are. Playback (cap_reader_next)
 * then decodes the snapshots again in order, applying each delta to the
 * streams' states; page bytes are decompressed one bytes record at a time
 * on demand. A damaged file is refused naming the byte at fault; a file
 * cut short reads up to its last complete snapshot unless the caller is
 * strict. The format is docs/capture-format.md.
 */
#include "cap_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

/* Pages a reader takes in one stream: 16 TiB of memory (9 bytes each in memory). */
#ifndef CAP_READER_MAX_PAGES
#define CAP_READER_MAX_PAGES (UINT64_C(1) << 32)
#endif

struct bytes_record {
	uint64_t frame;  /* file offset of its zstd frame */
	uint64_t frame_len;
	size_t count;    /* pages in it */
};

struct cap_reader {
	char *name;
	int fd;                  /* -1: the file is @mem */
	uint8_t *mem;
	uint64_t size;
	unsigned flags;
	struct cap_file_info info;
	struct cap_stream_info *streams;
	struct cap_stream_state *initial;
	uint64_t *snap_offset;   /* each snapshot record's offset */
	size_t snap_cap;
	struct bytes_record *brec;
	size_t nbrec, brec_cap;
	struct cap_tokenset where; /* token -> bytes record << 16 | page in it */
	/* playback */
	struct cap_stream_state *state;
	struct cap_snapshot cur;
	uint64_t next;
	struct cap_buf payload;
	ZSTD_DCtx *zd;
	uint8_t *cache;          /* the pages of bytes record @cached */
	size_t cached;           /* SIZE_MAX: none */
};

static int read_at(struct cap_reader *r, uint64_t off, void *buf, size_t len)
{
	uint8_t *p = buf;

	if (off > r->size || len > r->size - off)
		return -1;
	if (r->fd < 0) {
		memcpy(buf, r->mem + off, len);
		return 0;
	}
	while (len) {
		ssize_t n = pread(r->fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

static const char *record_name(uint32_t type)
{
	switch (type) {
	case CAP_REC_HEADER: return "header";
	case CAP_REC_BYTES: return "bytes";
	case CAP_REC_SNAPSHOT: return "snapshot";
	case CAP_REC_END: return "end";
	default: return "unknown";
	}
}

/* ---- the record frame ------------------------------------------------------- */

enum frame_result { FRAME_OK, FRAME_CUT, FRAME_BAD };

/*
 * The record at @off: its type and payload (in r->payload), checksum
 * verified. FRAME_CUT: the file ends inside it.
 */
static enum frame_result read_record(struct cap_reader *r, uint64_t off, uint32_t *type,
				     struct cap_error *err)
{
	uint8_t head[CAP_RECORD_HEAD_LEN], tail[CAP_RECORD_TAIL_LEN];
	uint64_t len;
	XXH64_hash_t sum;

	if (r->size - off < CAP_RECORD_HEAD_LEN)
		return FRAME_CUT;
	if (read_at(r, off, head, sizeof(head)) != 0)
		return cap_fail_at(err, r->name, off, "cannot read: %s", strerror(errno)), FRAME_BAD;
	*type = cap_load_u32(head);
	len = cap_load_u64(head + 8);
	if (cap_load_u32(head + 4) != cap_record_head_check(*type, len)) {
		cap_fail_at(err, r->name, off, "not a whole record head (its check does not match "
			    "its type %u and length %llu)", *type, (unsigned long long)len);
		return FRAME_BAD;
	}
	if (*type < CAP_REC_HEADER || *type > CAP_REC_END) {
		cap_fail_at(err, r->name, off, "a record of unknown type %u", *type);
		return FRAME_BAD;
	}
	if (len > CAP_RECORD_MAX) {
		cap_fail_at(err, r->name, off + 8, "a %s record of %llu bytes, more than a "
			    "record can be", record_name(*type), (unsigned long long)len);
		return FRAME_BAD;
	}
	if (r->size - off - CAP_RECORD_HEAD_LEN < len + CAP_RECORD_TAIL_LEN)
		return FRAME_CUT;
	cap_buf_reset(&r->payload);
	if (!cap_buf_reserve(&r->payload, (size_t)len + 1)) {
		cap_fail_at(err, r->name, off, "out of memory for a record of %llu bytes",
			    (unsigned long long)len);
		return FRAME_BAD;
	}
	r->payload.len = (size_t)len;
	if (read_at(r, off + CAP_RECORD_HEAD_LEN, r->payload.data, (size_t)len) != 0 ||
	    read_at(r, off + CAP_RECORD_HEAD_LEN + len, tail, sizeof(tail)) != 0) {
		cap_fail_at(err, r->name, off, "cannot read: %s", strerror(errno));
		return FRAME_BAD;
	}
	{
		XXH64_state_t *st = XXH64_createState();

		if (!st) {
			cap_fail(err, "out of memory");
			return FRAME_BAD;
		}
		XXH64_reset(st, 0);
		XXH64_update(st, head, sizeof(head));
		XXH64_update(st, r->payload.data, (size_t)len);
		sum = XXH64_digest(st);
		XXH64_freeState(st);
	}
	if (sum != cap_load_u64(tail)) {
		cap_fail_at(err, r->name, off, "the %s record's checksum does not match: the "
			    "file is damaged in its %llu bytes", record_name(*type),
			    (unsigned long long)(CAP_RECORD_HEAD_LEN + len + CAP_RECORD_TAIL_LEN));
		return FRAME_BAD;
	}
	return FRAME_OK;
}

/* The byte of the payload @d is at, for messages: record at @rec. */
static uint64_t at(const struct cap_reader *r, uint64_t rec, const struct cap_dec *d)
{
	return rec + CAP_RECORD_HEAD_LEN + (uint64_t)(d->p - r->payload.data);
}

/* ---- the header ------------------------------------------------------------------ */

static int parse_header(struct cap_reader *r, uint64_t rec, struct cap_error *err)
{
	struct cap_dec d = { r->payload.data, r->payload.data + r->payload.len, false };
	uint8_t with_bytes = cap_dec_u8(&d);
	uint64_t n = cap_dec_varint(&d);
	const char *why;

	if (d.bad || with_bytes > 1 || n == 0 || n > r->payload.len / (CAP_COMM_MAX + 3))
		return cap_fail_at(err, r->name, at(r, rec, &d),
				   "the header's flags or stream count (%llu) are wrong",
				   (unsigned long long)n);
	r->info.with_bytes = with_bytes;
	r->streams = calloc((size_t)n, sizeof(*r->streams));
	r->initial = calloc((size_t)n, sizeof(*r->initial));
	r->state = calloc((size_t)n, sizeof(*r->state));
	if (!r->streams || !r->initial || !r->state)
		return cap_fail(err, "out of memory");
	r->info.nstreams = (size_t)n;
	for (size_t i = 0; i < n; i++) {
		uint64_t pid = cap_dec_varint(&d), start = at(r, rec, &d);
		const uint8_t *comm = cap_dec_bytes(&d, CAP_COMM_MAX);
		uint8_t thp = cap_dec_u8(&d);
		struct cap_vma *vmas;
		size_t nvmas;

		if (d.bad || pid > INT32_MAX || comm[CAP_COMM_MAX - 1] != 0 ||
		    thp >= CAP_THP_SOURCE_COUNT)
			return cap_fail_at(err, r->name, start, "stream %zu's pid, name or THP "
					   "source is wrong", i);
		r->streams[i].pid = (int32_t)pid;
		memcpy(r->streams[i].comm, comm, CAP_COMM_MAX);
		r->streams[i].thp = (enum cap_thp_source)thp;
		start = at(r, rec, &d);
		vmas = cap_decode_vmas(&d, &nvmas, CAP_READER_MAX_PAGES, &why);
		if (!vmas)
			return cap_fail_at(err, r->name, start, "stream %zu: %s", i, why);
		if (cap_stream_state_init(&r->initial[i], vmas, nvmas, err) != 0 ||
		    cap_stream_state_init(&r->state[i], vmas, nvmas, err) != 0) {
			free(vmas);
			return -1;
		}
		free(vmas);
	}
	if (d.p != d.end)
		return cap_fail_at(err, r->name, at(r, rec, &d), "%zu bytes after the header's "
				   "streams", (size_t)(d.end - d.p));
	r->info.streams = r->streams;
	r->info.initial = r->initial;
	return 0;
}

/* ---- bytes records ------------------------------------------------------------------ */

static int index_bytes(struct cap_reader *r, uint64_t rec, struct cap_error *err)
{
	struct cap_dec d = { r->payload.data, r->payload.data + r->payload.len, false };
	uint64_t n = cap_dec_varint(&d), frame;
	unsigned long long content;
	struct bytes_record *b;

	if (!r->info.with_bytes)
		return cap_fail_at(err, r->name, rec, "a bytes record in a file without bytes");
	if (d.bad || n == 0 || n > CAP_BYTES_PER_RECORD || n * 8 > (uint64_t)(d.end - d.p))
		return cap_fail_at(err, r->name, rec + CAP_RECORD_HEAD_LEN,
				   "a bytes record of %llu pages", (unsigned long long)n);
	if (cap_grow((void **)&r->brec, &r->brec_cap, r->nbrec, sizeof(*r->brec), 64) != 0)
		return cap_fail(err, "out of memory");
	for (uint64_t i = 0; i < n; i++) {
		uint64_t where = at(r, rec, &d), token = cap_dec_u64(&d);
		bool added;
		uint64_t *slot = cap_tokenset_add(&r->where, token, &added);

		if (token == CAP_TOKEN_ZERO || (slot && !added))
			return cap_fail_at(err, r->name, where, "token %016llx stored %s",
					   (unsigned long long)token,
					   token ? "twice" : "(the zero page's)");
		if (!slot)
			return cap_fail(err, "out of memory");
		*slot = (uint64_t)r->nbrec << 16 | i;
	}
	frame = at(r, rec, &d);
	content = ZSTD_getFrameContentSize(d.p, (size_t)(d.end - d.p));
	if (content != n * CAP_PAGE_SIZE ||
	    ZSTD_findFrameCompressedSize(d.p, (size_t)(d.end - d.p)) != (size_t)(d.end - d.p))
		return cap_fail_at(err, r->name, frame, "the bytes record's zstd frame is not "
				   "one frame of %llu pages", (unsigned long long)n);
	b = &r->brec[r->nbrec++];
	b->frame = frame;
	b->frame_len = (uint64_t)(d.end - d.p);
	b->count = (size_t)n;
	return 0;
}

/* ---- snapshots ------------------------------------------------------------------------ */

static int end_stream(struct cap_stream_state *s, enum cap_stream_status status,
		      struct cap_error *err)
{
	if (cap_stream_state_remap(s, NULL, 0, err) != 0)
		return -1;
	s->status = status;
	return 0;
}

/* One run of changed pages at page @pos of @s. */
static int apply_run(struct cap_reader *r, uint64_t rec, struct cap_dec *d,
		     struct cap_stream_state *s, size_t pos, size_t count, struct cap_error *err)
{
	for (size_t k = pos; k < pos + count; k++) {
		uint64_t where = at(r, rec, d);
		uint8_t f = cap_dec_u8(d);
		bool has_token = f & CAP_ENC_TOKEN;
		uint64_t token = has_token ? cap_dec_u64(d) : CAP_TOKEN_ZERO;

		f &= (uint8_t)~CAP_ENC_TOKEN;
		if (d->bad)
			return cap_fail_at(err, r->name, where, "the snapshot record is cut short");
		if ((f & ~CAP_PAGE_FLAGS) || (!(f & CAP_PRESENT) && (f || token)) ||
		    (has_token && token == CAP_TOKEN_ZERO))
			return cap_fail_at(err, r->name, where, "a page's flags (0x%x) are wrong", f);
		if (r->info.with_bytes && token != CAP_TOKEN_ZERO &&
		    !cap_tokenset_find(&r->where, token))
			return cap_fail_at(err, r->name, where, "token %016llx has no bytes before "
					   "it", (unsigned long long)token);
		s->token[k] = token;
		s->flags[k] = f;
	}
	return 0;
}

static int apply_stream(struct cap_reader *r, uint64_t rec, struct cap_dec *d,
			struct cap_stream_state *s, struct cap_error *err)
{
	uint64_t where = at(r, rec, d);
	uint8_t vmas_changed = cap_dec_u8(d);
	uint64_t nruns, pos = 0;
	const char *why;

	if (d->bad || vmas_changed > 1)
		return cap_fail_at(err, r->name, where, "a stream entry is wrong");
	if (vmas_changed) {
		size_t nvmas;
		struct cap_vma *vmas = cap_decode_vmas(d, &nvmas, CAP_READER_MAX_PAGES, &why);
		int rc;

		if (!vmas)
			return cap_fail_at(err, r->name, where + 1, "%s", why);
		rc = cap_stream_state_remap(s, vmas, nvmas, err);
		free(vmas);
		if (rc != 0)
			return -1;
		s->vmas_changed = true;
	}
	where = at(r, rec, d);
	nruns = cap_dec_varint(d);
	if (d->bad || nruns > s->npages)
		return cap_fail_at(err, r->name, where, "%llu runs of pages in a stream of %zu",
				   (unsigned long long)nruns, s->npages);
	for (uint64_t i = 0; i < nruns; i++) {
		uint64_t gap, count;

		where = at(r, rec, d);
		gap = cap_dec_varint(d);
		count = cap_dec_varint(d);
		if (d->bad || count == 0 || gap > s->npages - pos || count > s->npages - pos - gap)
			return cap_fail_at(err, r->name, where, "a run of %llu pages after %llu "
					   "beyond the stream's %zu", (unsigned long long)count,
					   (unsigned long long)gap, s->npages);
		pos += gap;
		if (apply_run(r, rec, d, s, (size_t)pos, (size_t)count, err) != 0)
			return -1;
		pos += count;
		s->pages_changed += (size_t)count;
	}
	return 0;
}

/* Apply the snapshot record at @rec (in r->payload) to @states; its times into @snap. */
static int apply_snapshot(struct cap_reader *r, uint64_t rec, uint64_t index,
			  struct cap_stream_state *states, struct cap_snapshot *snap,
			  struct cap_error *err)
{
	struct cap_dec d = { r->payload.data, r->payload.data + r->payload.len, false };
	uint64_t got = cap_dec_varint(&d), nentries;
	int64_t last = -1;

	snap->index = index;
	snap->time_ns = cap_dec_varint(&d);
	snap->full_scans = cap_dec_varint(&d) - 1;
	snap->pause_ns = cap_dec_varint(&d);
	nentries = cap_dec_varint(&d);
	if (d.bad || got != index || nentries > r->info.nstreams)
		return cap_fail_at(err, r->name, rec + CAP_RECORD_HEAD_LEN, "snapshot %llu's "
				   "head is wrong (it says it is snapshot %llu of %llu streams)",
				   (unsigned long long)index, (unsigned long long)got,
				   (unsigned long long)nentries);
	for (size_t i = 0; i < r->info.nstreams; i++) {
		states[i].vmas_changed = false;
		states[i].pages_changed = 0;
	}
	for (uint64_t e = 0; e < nentries; e++) {
		uint64_t where = at(r, rec, &d), stream = cap_dec_varint(&d);
		uint8_t status = cap_dec_u8(&d);
		struct cap_stream_state *s;

		if (d.bad || (int64_t)stream <= last || stream >= r->info.nstreams ||
		    status >= CAP_STREAM_STATUS_COUNT)
			return cap_fail_at(err, r->name, where, "a stream entry names stream %llu, "
					   "status %u", (unsigned long long)stream, status);
		last = (int64_t)stream;
		s = &states[stream];
		if (s->status != CAP_STREAM_LIVE)
			return cap_fail_at(err, r->name, where, "stream %llu changes after its end",
					   (unsigned long long)stream);
		if (status != CAP_STREAM_LIVE) {
			if (end_stream(s, (enum cap_stream_status)status, err) != 0)
				return -1;
			continue;
		}
		if (apply_stream(r, rec, &d, s, err) != 0)
			return -1;
	}
	if (d.p != d.end)
		return cap_fail_at(err, r->name, at(r, rec, &d), "%zu bytes after snapshot %llu's "
				   "streams", (size_t)(d.end - d.p), (unsigned long long)index);
	snap->nstreams = r->info.nstreams;
	snap->streams = states;
	return 0;
}

static int note_snapshot(struct cap_reader *r, uint64_t rec, struct cap_error *err)
{
	struct cap_snapshot snap;

	if (apply_snapshot(r, rec, r->info.nsnapshots, r->state, &snap, err) != 0)
		return -1;
	if (cap_grow((void **)&r->snap_offset, &r->snap_cap, (size_t)r->info.nsnapshots,
		     sizeof(*r->snap_offset), 64) != 0)
		return cap_fail(err, "out of memory");
	r->snap_offset[r->info.nsnapshots++] = rec;
	return 0;
}

static int check_end(struct cap_reader *r, uint64_t rec, struct cap_error *err)
{
	struct cap_dec d = { r->payload.data, r->payload.data + r->payload.len, false };
	uint64_t n = cap_dec_varint(&d);

	if (d.bad || d.p != d.end || n != r->info.nsnapshots)
		return cap_fail_at(err, r->name, rec, "the end record counts %llu snapshots, the "
				   "file has %llu", (unsigned long long)n,
				   (unsigned long long)r->info.nsnapshots);
	r->info.complete = true;
	return 0;
}

/* ---- opening ----------------------------------------------------------------------------- */

static int check_preamble(struct cap_reader *r, struct cap_error *err)
{
	uint8_t pre[CAP_PREAMBLE_LEN];

	if (r->size < CAP_PREAMBLE_LEN || read_at(r, 0, pre, sizeof(pre)) != 0)
		return cap_fail_at(err, r->name, 0, "too short for a capture file (%llu bytes)",
				   (unsigned long long)r->size);
	if (memcmp(pre, CAP_MAGIC, CAP_MAGIC_LEN) != 0)
		return cap_fail_at(err, r->name, 0, "not a ksmkit capture file (no magic)");
	r->info.version = cap_load_u32(pre + 8);
	r->info.page_size = cap_load_u32(pre + 12);
	if (r->info.version != CAP_FORMAT_VERSION)
		return cap_fail_at(err, r->name, 8, "format version %u; this ksmkit reads "
				   "version %u", r->info.version, CAP_FORMAT_VERSION);
	if (r->info.page_size != CAP_PAGE_SIZE)
		return cap_fail_at(err, r->name, 12, "page size %u; this ksmkit reads %u",
				   r->info.page_size, CAP_PAGE_SIZE);
	return 0;
}

/* One record's meaning, in its place in the file. */
static int take_record(struct cap_reader *r, uint32_t type, uint64_t off, struct cap_error *err)
{
	bool first = off == CAP_PREAMBLE_LEN;

	if (first != (type == CAP_REC_HEADER))
		return cap_fail_at(err, r->name, off, first ? "the first record is not the "
				   "header" : "a second header");
	switch (type) {
	case CAP_REC_HEADER: return parse_header(r, off, err);
	case CAP_REC_BYTES: return index_bytes(r, off, err);
	case CAP_REC_SNAPSHOT: return note_snapshot(r, off, err);
	default: return check_end(r, off, err);
	}
}

static int validate(struct cap_reader *r, struct cap_error *err)
{
	uint64_t off = CAP_PREAMBLE_LEN;

	if (check_preamble(r, err) != 0)
		return -1;
	while (off < r->size) {
		uint32_t type = 0;
		enum frame_result fr;

		if (r->info.complete)
			return cap_fail_at(err, r->name, off, "data after the end record");
		fr = read_record(r, off, &type, err);
		if (fr == FRAME_BAD)
			return -1;
		if (fr == FRAME_CUT) {
			if ((r->flags & CAP_OPEN_STRICT) || off == CAP_PREAMBLE_LEN)
				return cap_fail_at(err, r->name, off, "the file is cut short in a "
						   "record (%llu bytes are left there)",
						   (unsigned long long)(r->size - off));
			break;
		}
		if (take_record(r, type, off, err) != 0)
			return -1;
		off += CAP_RECORD_HEAD_LEN + r->payload.len + CAP_RECORD_TAIL_LEN;
	}
	if (!r->streams)
		return cap_fail_at(err, r->name, off, "no header");
	if (!r->info.complete && (r->flags & CAP_OPEN_STRICT))
		return cap_fail_at(err, r->name, off, "the file ends without its end record (the "
				   "capture did not finish)");
	r->info.cut_offset = r->info.complete ? 0 : off;
	r->info.file_size = r->size;
	r->info.ndistinct_bytes = r->where.n;
	return 0;
}

static struct cap_reader *new_reader(const char *name, unsigned flags)
{
	struct cap_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->fd = -1;
	r->flags = flags;
	r->cached = SIZE_MAX;
	r->name = strdup(name);
	if (!r->name || cap_tokenset_init(&r->where, 1024) != 0) {
		cap_reader_close(r);
		return NULL;
	}
	return r;
}

static int finish_open(struct cap_reader *r, struct cap_reader **out, struct cap_error *err)
{
	if (validate(r, err) != 0) {
		cap_reader_close(r);
		return -1;
	}
	cap_reader_rewind(r);
	*out = r;
	return 0;
}

int cap_reader_open(const char *path, unsigned flags, struct cap_reader **out,
		    struct cap_error *err)
{
	struct cap_reader *r = new_reader(path, flags);
	struct stat st;

	*out = NULL;
	if (!r)
		return cap_fail(err, "out of memory");
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0 || fstat(r->fd, &st) != 0) {
		cap_fail(err, "cannot read %s: %s", path, strerror(errno));
		cap_reader_close(r);
		return -1;
	}
	r->size = (uint64_t)st.st_size;
	return finish_open(r, out, err);
}

int cap_reader_open_buffer(const void *data, size_t len, const char *name, unsigned flags,
			   struct cap_reader **out, struct cap_error *err)
{
	struct cap_reader *r = new_reader(name, flags);

	*out = NULL;
	if (!r || !(r->mem = malloc(len ? len : 1))) {
		cap_reader_close(r);
		return cap_fail(err, "out of memory");
	}
	if (len)
		memcpy(r->mem, data, len);
	r->size = len;
	return finish_open(r, out, err);
}

const struct cap_file_info *cap_reader_info(const struct cap_reader *r)
{
	return &r->info;
}

/* ---- playback ------------------------------------------------------------------------------- */

void cap_reader_rewind(struct cap_reader *r)
{
	for (size_t i = 0; i < r->info.nstreams; i++) {
		struct cap_error ignored;

		/* the states shrink or return to the header's VMAs: the same memory at most */
		cap_stream_state_free(&r->state[i]);
		if (cap_stream_state_init(&r->state[i], r->initial[i].vmas, r->initial[i].nvmas,
					  &ignored) != 0)
			r->state[i].status = CAP_STREAM_UNREADABLE;
	}
	r->next = 0;
}

int cap_reader_next(struct cap_reader *r, const struct cap_snapshot **snap, struct cap_error *err)
{
	uint64_t off;
	uint32_t type = 0;

	*snap = NULL;
	if (r->next == r->info.nsnapshots)
		return 0;
	off = r->snap_offset[r->next];
	if (read_record(r, off, &type, err) != FRAME_OK || type != CAP_REC_SNAPSHOT) {
		if (type != CAP_REC_SNAPSHOT)
			cap_fail_at(err, r->name, off, "the file changed since it was opened");
		return -1;
	}
	if (apply_snapshot(r, off, r->next, r->state, &r->cur, err) != 0)
		return -1;
	r->next++;
	*snap = &r->cur;
	return 1;
}

static int load_bytes_record(struct cap_reader *r, size_t i, struct cap_error *err)
{
	const struct bytes_record *b = &r->brec[i];
	size_t got;

	if (r->cached == i)
		return 0;
	if (!r->zd && !(r->zd = ZSTD_createDCtx()))
		return cap_fail(err, "out of memory");
	if (!r->cache && !(r->cache = malloc((size_t)CAP_BYTES_PER_RECORD * CAP_PAGE_SIZE)))
		return cap_fail(err, "out of memory");
	cap_buf_reset(&r->payload);
	if (!cap_buf_reserve(&r->payload, (size_t)b->frame_len))
		return cap_fail(err, "out of memory");
	if (read_at(r, b->frame, r->payload.data, (size_t)b->frame_len) != 0)
		return cap_fail_at(err, r->name, b->frame, "cannot read: %s", strerror(errno));
	r->cached = SIZE_MAX;
	got = ZSTD_decompressDCtx(r->zd, r->cache, (size_t)CAP_BYTES_PER_RECORD * CAP_PAGE_SIZE,
				  r->payload.data, (size_t)b->frame_len);
	if (ZSTD_isError(got) || got != b->count * CAP_PAGE_SIZE)
		return cap_fail_at(err, r->name, b->frame, "the pages' bytes do not decompress: %s",
				   ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong size");
	r->cached = i;
	return 0;
}

int cap_reader_page_bytes(struct cap_reader *r, uint64_t token, void *page,
			  struct cap_error *err)
{
	const uint64_t *where;

	if (token == CAP_TOKEN_ZERO) {
		memset(page, 0, CAP_PAGE_SIZE);
		return 0;
	}
	where = cap_tokenset_find(&r->where, token);
	if (!where)
		return cap_fail(err, "%s: no bytes for token %016llx%s", r->name,
				(unsigned long long)token,
				r->info.with_bytes ? "" : " (captured without --bytes)");
	if (load_bytes_record(r, (size_t)(*where >> 16), err) != 0)
		return -1;
	memcpy(page, r->cache + (*where & 0xffff) * CAP_PAGE_SIZE, CAP_PAGE_SIZE);
	return 0;
}

void cap_reader_close(struct cap_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	for (size_t i = 0; i < r->info.nstreams; i++) {
		if (r->initial)
			cap_stream_state_free(&r->initial[i]);
		if (r->state)
			cap_stream_state_free(&r->state[i]);
	}
	free(r->initial);
	free(r->state);
	free(r->streams);
	free(r->snap_offset);
	free(r->brec);
	cap_tokenset_free(&r->where);
	cap_buf_free(&r->payload);
	ZSTD_freeDCtx(r->zd);
	free(r->cache);
	free(r->mem);
	free(r->name);
	free(r);
}
