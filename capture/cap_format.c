/*
 * cap_format.c - the bytes of a capture file below the level of meaning:
 * messages, a growable buffer, little-endian and LEB128 encoding and their
 * bounded decoding, record framing (a 16-byte head with its own checksum, so
 * that a damaged length is not taken for a file cut short; the payload; an
 * XXH64 checksum of both) and the VMA list encoding the header and the snapshot
 * records share. What the records say is cap_writer.c's and cap_reader.c's.
 */
#include "cap_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

int cap_fail(struct cap_error *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	va_end(ap);
	err->offset = 0;
	return -1;
}

int cap_fail_at(struct cap_error *err, const char *name, uint64_t offset, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err->text, sizeof(err->text), "%s: at byte %llu: ", name,
			 (unsigned long long)offset);

	if (n < 0 || (size_t)n >= sizeof(err->text))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(err->text + n, sizeof(err->text) - (size_t)n, fmt, ap);
	va_end(ap);
	err->offset = offset;
	return -1;
}

int cap_grow(void **array, size_t *cap, size_t n, size_t size, size_t first)
{
	size_t want = *cap ? 2 * *cap : first;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*array, want * size);
	if (!p)
		return -1;
	*array = p;
	*cap = want;
	return 0;
}

/* ---- the buffer ---------------------------------------------------------- */

void cap_buf_reset(struct cap_buf *b)
{
	b->len = 0;
	b->failed = false;
}

void cap_buf_free(struct cap_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

uint8_t *cap_buf_reserve(struct cap_buf *b, size_t n)
{
	if (b->failed)
		return NULL;
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *p;

		while (cap - b->len < n)
			cap *= 2;
		p = realloc(b->data, cap);
		if (!p) {
			b->failed = true;
			return NULL;
		}
		b->data = p;
		b->cap = cap;
	}
	b->len += n;
	return b->data + b->len - n;
}

void cap_buf_put(struct cap_buf *b, const void *p, size_t n)
{
	uint8_t *dst = cap_buf_reserve(b, n);

	if (dst && n)
		memcpy(dst, p, n);
}

void cap_buf_u8(struct cap_buf *b, uint8_t v)
{
	cap_buf_put(b, &v, 1);
}

void cap_buf_u32(struct cap_buf *b, uint32_t v)
{
	uint8_t le[4];

	for (int i = 0; i < 4; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	cap_buf_put(b, le, sizeof(le));
}

void cap_buf_u64(struct cap_buf *b, uint64_t v)
{
	uint8_t le[8];

	for (int i = 0; i < 8; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	cap_buf_put(b, le, sizeof(le));
}

void cap_buf_varint(struct cap_buf *b, uint64_t v)
{
	uint8_t out[10];
	size_t n = 0;

	do {
		out[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			out[n] |= 0x80;
		n++;
	} while (v);
	cap_buf_put(b, out, n);
}

/* ---- records --------------------------------------------------------------- */

size_t cap_record_begin(struct cap_buf *b, enum cap_record_type type)
{
	size_t start = b->len;

	cap_buf_u32(b, (uint32_t)type);
	cap_buf_u32(b, 0);
	cap_buf_u64(b, 0); /* the length, once known */
	return start;
}

uint32_t cap_record_head_check(uint32_t type, uint64_t len)
{
	uint8_t key[12];

	for (int i = 0; i < 4; i++)
		key[i] = (uint8_t)(type >> (8 * i));
	for (int i = 0; i < 8; i++)
		key[4 + i] = (uint8_t)(len >> (8 * i));
	return XXH32(key, sizeof(key), 0);
}

void cap_record_end(struct cap_buf *b, size_t start)
{
	uint64_t len, sum;
	uint32_t check;

	if (b->failed)
		return;
	len = b->len - start - CAP_RECORD_HEAD_LEN;
	check = cap_record_head_check(cap_load_u32(b->data + start), len);
	for (int i = 0; i < 4; i++)
		b->data[start + 4 + (size_t)i] = (uint8_t)(check >> (8 * i));
	for (int i = 0; i < 8; i++)
		b->data[start + 8 + (size_t)i] = (uint8_t)(len >> (8 * i));
	sum = XXH64(b->data + start, b->len - start, 0);
	cap_buf_u64(b, sum);
}

uint32_t cap_load_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t cap_load_u64(const uint8_t *p)
{
	return (uint64_t)cap_load_u32(p) | (uint64_t)cap_load_u32(p + 4) << 32;
}

/* ---- decoding ---------------------------------------------------------------- */

const uint8_t *cap_dec_bytes(struct cap_dec *d, size_t n)
{
	const uint8_t *p = d->p;

	if (d->bad || (size_t)(d->end - d->p) < n) {
		d->bad = true;
		return NULL;
	}
	d->p += n;
	return p;
}

uint8_t cap_dec_u8(struct cap_dec *d)
{
	const uint8_t *p = cap_dec_bytes(d, 1);

	return p ? *p : 0;
}

uint64_t cap_dec_u64(struct cap_dec *d)
{
	const uint8_t *p = cap_dec_bytes(d, 8);

	return p ? cap_load_u64(p) : 0;
}

uint64_t cap_dec_varint(struct cap_dec *d)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		const uint8_t *p = cap_dec_bytes(d, 1);

		if (!p)
			return 0;
		if (shift == 63 && (*p & 0x7e)) /* more than 64 bits */
			break;
		v |= (uint64_t)(*p & 0x7f) << shift;
		if (!(*p & 0x80))
			return v;
	}
	d->bad = true;
	return 0;
}

/* ---- VMA lists ----------------------------------------------------------------- */

/*
 * A list is its count, then for each VMA the pages from the previous VMA's
 * end (from 0 for the first) to its start, and its length in pages: small
 * numbers, so a few bytes each.
 */
void cap_encode_vmas(struct cap_buf *b, const struct cap_vma *vmas, size_t n)
{
	uint64_t prev_end = 0;

	cap_buf_varint(b, n);
	for (size_t i = 0; i < n; i++) {
		cap_buf_varint(b, (vmas[i].start - prev_end) / CAP_PAGE_SIZE);
		cap_buf_varint(b, (vmas[i].end - vmas[i].start) / CAP_PAGE_SIZE);
		prev_end = vmas[i].end;
	}
}

#define CAP_ADDR_PAGES (UINT64_MAX / CAP_PAGE_SIZE) /* pages in a 64-bit address space */

struct cap_vma *cap_decode_vmas(struct cap_dec *d, size_t *n, uint64_t max_pages,
				const char **why)
{
	uint64_t count = cap_dec_varint(d), end_page = 0, pages = 0;
	struct cap_vma *vmas;

	*why = "a VMA list is cut short";
	if (d->bad)
		return NULL;
	if (count > (uint64_t)(d->end - d->p) / 2) { /* two bytes a VMA at least */
		*why = "a VMA list counts more VMAs than its record holds";
		return NULL;
	}
	vmas = calloc(count ? count : 1, sizeof(*vmas));
	if (!vmas) {
		*why = "out of memory";
		return NULL;
	}
	for (uint64_t i = 0; i < count; i++) {
		uint64_t gap = cap_dec_varint(d), len = cap_dec_varint(d);

		if (d->bad)
			goto bad;
		*why = "a VMA list is not increasing, empty or beyond 64 bits";
		if ((i > 0 && gap == 0) || len == 0 || gap > CAP_ADDR_PAGES - end_page ||
		    len > CAP_ADDR_PAGES - end_page - gap)
			goto bad;
		*why = "a VMA list maps more pages than the reader takes";
		pages += len;
		if (pages > max_pages)
			goto bad;
		vmas[i].start = (end_page + gap) * CAP_PAGE_SIZE;
		end_page += gap + len;
		vmas[i].end = end_page * CAP_PAGE_SIZE;
	}
	*n = (size_t)count;
	*why = NULL;
	return vmas;
bad:
	free(vmas);
	return NULL;
}

bool cap_vmas_equal(const struct cap_vma *a, size_t na, const struct cap_vma *b, size_t nb)
{
	return na == nb && (na == 0 || memcmp(a, b, na * sizeof(*a)) == 0);
}
