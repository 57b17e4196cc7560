/*
 * check_content.c - tests of workload/content.c: the value-to-bytes mapping,
 * writes, the kernel's checksum (cross-checked against libxxhash directly),
 * fresh values and the memcmp order of values.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "content.h"

START_TEST(fill_repeats_little_endian_word)
{
	uint8_t page[CONTENT_PAGE_SIZE];

	content_fill(page, UINT64_C(0x0102030405060708));
	for (unsigned off = 0; off < CONTENT_PAGE_SIZE; off += 8) {
		ck_assert_uint_eq(page[off], 0x08);
		ck_assert_uint_eq(page[off + 7], 0x01);
	}
}
END_TEST

START_TEST(value_zero_is_the_zero_page)
{
	uint8_t page[CONTENT_PAGE_SIZE], zero[CONTENT_PAGE_SIZE] = { 0 };

	memset(page, 0xaa, sizeof(page));
	content_fill(page, 0);
	ck_assert_mem_eq(page, zero, sizeof(page));
}
END_TEST

START_TEST(write_changes_only_eight_bytes)
{
	uint8_t page[CONTENT_PAGE_SIZE], before[CONTENT_PAGE_SIZE];

	content_fill(page, 5);
	memcpy(before, page, sizeof(page));
	content_write(page, 4093 - 5, UINT64_C(0xffeeddccbbaa9988));
	ck_assert_mem_eq(page, before, 4088);
	ck_assert_uint_eq(page[4088], 0x88);
	ck_assert_uint_eq(page[4095], 0xff);
}
END_TEST

START_TEST(write_of_own_word_restores_bytes)
{
	uint8_t page[CONTENT_PAGE_SIZE], orig[CONTENT_PAGE_SIZE];

	content_fill(page, 77);
	memcpy(orig, page, sizeof(page));
	content_write(page, 16, 1234);
	ck_assert(memcmp(page, orig, sizeof(page)) != 0);
	content_write(page, 16, 77);
	ck_assert_mem_eq(page, orig, sizeof(page));
}
END_TEST

START_TEST(checksum_is_low_32_bits_of_xxh64_seed_0)
{
	uint8_t page[CONTENT_PAGE_SIZE];

	for (uint64_t v = 0; v < 50; v++) {
		content_fill(page, v * UINT64_C(0x9e3779b97f4a7c15));
		ck_assert_uint_eq(content_checksum(page),
				  (uint32_t)(XXH64(page, sizeof(page), 0) & 0xffffffffu));
		ck_assert_uint_eq(content_value_checksum(v * UINT64_C(0x9e3779b97f4a7c15)),
				  content_checksum(page));
	}
}
END_TEST

START_TEST(checksum_sees_a_one_byte_change)
{
	uint8_t page[CONTENT_PAGE_SIZE];
	uint32_t before;

	content_fill(page, 3);
	before = content_checksum(page);
	page[4095] ^= 1;
	ck_assert_uint_ne(content_checksum(page), before);
}
END_TEST

START_TEST(fresh_values_are_reserved_and_distinct)
{
	ck_assert_uint_ge(content_fresh_value(0), CONTENT_FRESH_BASE);
	ck_assert_uint_ne(content_fresh_value(0), content_fresh_value(1));
	ck_assert_uint_eq(content_fresh_value(12345), CONTENT_FRESH_BASE + 12345);
}
END_TEST

START_TEST(value_order_matches_memcmp_of_pages)
{
	static uint8_t pa[CONTENT_PAGE_SIZE], pb[CONTENT_PAGE_SIZE];
	uint64_t seedv = 88172645463325252ull;

	for (int i = 0; i < 2000; i++) {
		uint64_t a, b;
		int want, got;

		seedv ^= seedv << 13, seedv ^= seedv >> 7, seedv ^= seedv << 17;
		a = seedv;
		seedv ^= seedv << 13, seedv ^= seedv >> 7, seedv ^= seedv << 17;
		b = (i % 3 == 0) ? a ^ (UINT64_C(1) << (i % 64)) : seedv;
		if (i % 7 == 0)
			b = a;
		content_fill(pa, a);
		content_fill(pb, b);
		want = memcmp(pa, pb, CONTENT_PAGE_SIZE);
		got = content_value_cmp(a, b);
		ck_assert_int_eq(want < 0 ? -1 : want > 0, got < 0 ? -1 : got > 0);
	}
}
END_TEST

static Suite *content_suite(void)
{
	Suite *s = suite_create("content");
	TCase *tc = tcase_create("bytes");

	tcase_add_test(tc, fill_repeats_little_endian_word);
	tcase_add_test(tc, value_zero_is_the_zero_page);
	tcase_add_test(tc, write_changes_only_eight_bytes);
	tcase_add_test(tc, write_of_own_word_restores_bytes);
	suite_add_tcase(s, tc);
	tc = tcase_create("checksum");
	tcase_add_test(tc, checksum_is_low_32_bits_of_xxh64_seed_0);
	tcase_add_test(tc, checksum_sees_a_one_byte_change);
	suite_add_tcase(s, tc);
	tc = tcase_create("values");
	tcase_add_test(tc, fresh_values_are_reserved_and_distinct);
	tcase_add_test(tc, value_order_matches_memcmp_of_pages);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(content_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
