/*
 * cap_internal.h - what the files of libksmcapture share and nobody else
 * sees: the file's layout constants (docs/capture-format.md is their
 * description for people), a growable byte buffer with the little-endian
 * and LEB128 encoders the records use, a bounded decoder over one record's
 * payload, the record framing (type, length, checksum), a set of content
 * tokens, and the delta step both ends of the file share: carrying a
 * stream's pages over to a new list of VMAs.
 */
#ifndef KSMKIT_CAP_INTERNAL_H
#define KSMKIT_CAP_INTERNAL_H

#include "capture.h"

#include <stdarg.h>

#define CAP_MAGIC "ksmkcap\n"
#define CAP_MAGIC_LEN 8
#define CAP_PREAMBLE_LEN 16       /* magic, u32 version, u32 page size */
#define CAP_RECORD_HEAD_LEN 16    /* u32 type, u32 XXH32 of type and length, u64 length */
#define CAP_RECORD_TAIL_LEN 8     /* u64 XXH64 of the head and the payload */
#define CAP_RECORD_MAX (UINT64_C(1) << 34) /* a longer payload is damage */
#define CAP_BYTES_PER_RECORD 1024 /* pages in one bytes record, at most (4 MiB raw) */
#define CAP_ZSTD_LEVEL 3

enum cap_record_type {
	CAP_REC_HEADER = 1,
	CAP_REC_BYTES = 2,
	CAP_REC_SNAPSHOT = 3,
	CAP_REC_END = 4,
};

/* The per-page byte of a snapshot record: the page's flags, and whether a token follows. */
#define CAP_ENC_TOKEN 0x80u

/* Printf into @err (offset 0). Returns -1, for `return cap_fail(...)`. */
int cap_fail(struct cap_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with err->offset = @offset; the text is "NAME: at byte OFFSET: ...". */
int cap_fail_at(struct cap_error *err, const char *name, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Make room for one more element in the array *@array of *@cap elements of
 * @size bytes holding @n (doubling, from @first): 0, or -1 with *@array
 * unchanged when memory runs out.
 */
int cap_grow(void **array, size_t *cap, size_t n, size_t size, size_t first);

/* ---- encoding ------------------------------------------------------------- */

struct cap_buf {
	uint8_t *data;
	size_t len, cap;
	bool failed; /* an allocation failed: the contents are incomplete */
};
void cap_buf_reset(struct cap_buf *b);
void cap_buf_free(struct cap_buf *b);
uint8_t *cap_buf_reserve(struct cap_buf *b, size_t n); /* n more bytes at the end, or NULL */
void cap_buf_put(struct cap_buf *b, const void *p, size_t n);
void cap_buf_u8(struct cap_buf *b, uint8_t v);
void cap_buf_u32(struct cap_buf *b, uint32_t v);
void cap_buf_u64(struct cap_buf *b, uint64_t v);
void cap_buf_varint(struct cap_buf *b, uint64_t v);

/* The head's own check: XXH32 of the type and the length, little-endian (12 bytes). */
uint32_t cap_record_head_check(uint32_t type, uint64_t len);
/* Start a record of @type at the end of @b; cap_record_end fills its length and checksums. */
size_t cap_record_begin(struct cap_buf *b, enum cap_record_type type);
void cap_record_end(struct cap_buf *b, size_t start);

/* Little-endian loads. */
uint32_t cap_load_u32(const uint8_t *p);
uint64_t cap_load_u64(const uint8_t *p);

/* A bounded reader over one payload; any read past its end sets @bad. */
struct cap_dec {
	const uint8_t *p, *end;
	bool bad;
};
uint8_t cap_dec_u8(struct cap_dec *d);
uint64_t cap_dec_u64(struct cap_dec *d);
uint64_t cap_dec_varint(struct cap_dec *d);
const uint8_t *cap_dec_bytes(struct cap_dec *d, size_t n);

/* The VMA list encoding of the header and of snapshot records. */
void cap_encode_vmas(struct cap_buf *b, const struct cap_vma *vmas, size_t n);
/*
 * Decode a VMA list into a new array (*@out, *@n; free() it): NULL with
 * *@why set when it is malformed (not increasing, empty, beyond 2^64, more
 * pages than @max_pages).
 */
struct cap_vma *cap_decode_vmas(struct cap_dec *d, size_t *n, uint64_t max_pages,
				const char **why);

/* Whether two VMA lists are the same. */
bool cap_vmas_equal(const struct cap_vma *a, size_t na, const struct cap_vma *b, size_t nb);

/*
 * Replace @s's VMAs by @vmas: each page at an address both lists cover keeps
 * its token and flags, the others are absent. -1 when memory runs out (@s
 * unchanged).
 */
int cap_stream_state_remap(struct cap_stream_state *s, const struct cap_vma *vmas, size_t nvmas,
			   struct cap_error *err);

/* ---- a set of non-zero tokens, each with a 64-bit value ----------------- */

struct cap_tokenset {
	size_t n, mask; /* capacity mask + 1 is a power of two */
	uint64_t *keys; /* 0: an empty slot */
	uint64_t *vals;
};
int cap_tokenset_init(struct cap_tokenset *s, size_t expect);
void cap_tokenset_free(struct cap_tokenset *s);
/* The value's slot for @token (inserted with value 0 if new: *@added), or NULL. */
uint64_t *cap_tokenset_add(struct cap_tokenset *s, uint64_t token, bool *added);
const uint64_t *cap_tokenset_find(const struct cap_tokenset *s, uint64_t token);

#endif
