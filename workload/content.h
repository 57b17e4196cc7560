/*
 * content.h - the page content generator both engines share.
 *
 * A workload names page contents by abstract 64-bit values. This module owns
 * the one mapping from a value to the real 4 KiB of bytes, so that a page the
 * simulator calls "value 7" holds exactly the bytes the backend writes for
 * value 7, and a simulated checksum equals the kernel's checksum of them:
 *
 *   - value V fills the page with V stored as an 8-byte little-endian word,
 *     repeated 512 times; value 0 is therefore the zero page;
 *   - a write of value W at byte offset O (0 <= O <= 4088) stores W as 8
 *     little-endian bytes at O and changes nothing else;
 *   - the checksum is the kernel's: the low 32 bits of xxh64(page, 4096, 0).
 *
 * Values with the top bit set are reserved for "fresh" values (fill = unique,
 * value = fresh): the workload language accepts only values below 2^63, and
 * content_fresh_value(n) gives the n-th reserved value, so a fresh value is
 * never equal to one a user wrote. What it does not own: how an engine stores
 * page state (the simulator keeps compact tokens, the backend real memory).
 */
#ifndef KSMKIT_CONTENT_H
#define KSMKIT_CONTENT_H

#include <stddef.h>
#include <stdint.h>

#define CONTENT_PAGE_SIZE 4096u
#define CONTENT_WORD_SIZE 8u
/* Highest byte offset at which an 8-byte value still fits in the page. */
#define CONTENT_MAX_OFFSET (CONTENT_PAGE_SIZE - CONTENT_WORD_SIZE)
/* Values at or above this are reserved for fresh values. */
#define CONTENT_FRESH_BASE (UINT64_C(1) << 63)

/* Fill @page (CONTENT_PAGE_SIZE bytes) with the bytes of value @value. */
void content_fill(void *page, uint64_t value);

/*
 * Store @value as 8 little-endian bytes at byte @offset of @page.
 * Precondition (asserted): offset <= CONTENT_MAX_OFFSET.
 */
void content_write(void *page, uint32_t offset, uint64_t value);

/* The 8 little-endian bytes of @value, as the word a page holds. */
void content_value_bytes(uint64_t value, uint8_t out[CONTENT_WORD_SIZE]);

/* The kernel's KSM checksum of one page: low 32 bits of xxh64, seed 0. */
uint32_t content_checksum(const void *page);

/* The checksum of a page filled with @value (content_fill then checksum). */
uint32_t content_value_checksum(uint64_t value);

/* The n-th fresh value: never below CONTENT_FRESH_BASE, distinct for each n. */
static inline uint64_t content_fresh_value(uint64_t n)
{
	return CONTENT_FRESH_BASE | (n & ~CONTENT_FRESH_BASE);
}

/*
 * memcmp order of two uniformly filled pages: <0, 0 or >0 as
 * memcmp(fill(a), fill(b), 4096) would answer, computed from the values alone
 * (the first differing byte decides, in little-endian byte order).
 */
static inline int content_value_cmp(uint64_t a, uint64_t b)
{
	/*
	 * Both pages repeat their word, so the first word decides, byte by byte
	 * in memory (little-endian) order: that is the numeric order of the
	 * byte-swapped words.
	 */
	uint64_t x = __builtin_bswap64(a), y = __builtin_bswap64(b);

	return (x > y) - (x < y);
}

#endif
