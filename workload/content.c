/*
 * content.c - value-to-bytes generator and the kernel's page checksum.
 *
 * Implements the mapping documented in content.h. It is deliberately simple
 * (a repeated little-endian word) so that equality, memcmp order and the
 * checksum of any page the workload language can describe are cheap to derive
 * from values, while the backend still writes real, distinct bytes.
 */
#include "content.h"

#include <assert.h>
#include <string.h>
#include <xxhash.h>

void content_value_bytes(uint64_t value, uint8_t out[CONTENT_WORD_SIZE])
{
	for (unsigned i = 0; i < CONTENT_WORD_SIZE; i++)
		out[i] = (uint8_t)(value >> (8 * i));
}

void content_fill(void *page, uint64_t value)
{
	uint8_t word[CONTENT_WORD_SIZE];
	uint8_t *p = page;

	content_value_bytes(value, word);
	for (unsigned off = 0; off < CONTENT_PAGE_SIZE; off += CONTENT_WORD_SIZE)
		memcpy(p + off, word, CONTENT_WORD_SIZE);
}

void content_write(void *page, uint32_t offset, uint64_t value)
{
	uint8_t word[CONTENT_WORD_SIZE];

	assert(offset <= CONTENT_MAX_OFFSET);
	content_value_bytes(value, word);
	memcpy((uint8_t *)page + offset, word, CONTENT_WORD_SIZE);
}

uint32_t content_checksum(const void *page)
{
	return (uint32_t)XXH64(page, CONTENT_PAGE_SIZE, 0);
}

uint32_t content_value_checksum(uint64_t value)
{
	uint64_t page[CONTENT_PAGE_SIZE / sizeof(uint64_t)];

	content_fill(page, value);
	return content_checksum(page);
}
