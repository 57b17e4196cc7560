# ksm_tests -M (tools/testing/selftests/mm/ksm_tests.c, check_ksm_merge):
# 10 anonymous pages filled with '*' (0x2a) and marked MADV_MERGEABLE; after
# two full scans exactly one KSM page must back all ten.
#
# Expected on a 6.18 kernel (KSM-SEMANTICS.md sections 3-4; max_page_sharing
# 256 > 10, so no chain):
#   after scan 1: pages_volatile 10, every other page counter 0 (first visits
#                 only store a checksum)
#   after scan 2: pages_shared 1, pages_sharing 9, pages_unshared 0,
#                 pages_volatile 0, ksm_rmap_items 10,
#                 general_profit = 9*4096 - 10*64 = 36224
#                 ksm_merging_pages (main) 10, ksm_process_profit 40320
#   after scan 3: unchanged (KSM pages are revisited but stay put);
#                 pages_scanned 30
# ksm_tests itself runs with sleep_millisecs 0 and pages_to_scan = page count.

[global]
description = ksm_tests -M: 10 identical pages (madvise) merge into one KSM page
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10

[region buf]
pages = 10
fill = same
value = 0x2a2a2a2a2a2a2a2a   # memset(buf, '*', ...)
merge = madvise
