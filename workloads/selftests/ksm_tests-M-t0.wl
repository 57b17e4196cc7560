# ksm_tests -M -p 10 (check_ksm_merge): 10 anonymous pages
# filled with '*' (0x2a), marked MADV_MERGEABLE; after two full scans exactly one
# KSM page must back all ten: assert_ksm_pages_count(10), which for 10 pages
# under max_page_sharing 256 is pages_shared = 1 and pages_sharing = 9.
# ksm_tests runs with pages_to_scan = 10 and sleep_millisecs = 0; here one
# batch covers a scan and ksmd sleeps 10 ms, which the lockstep runner needs
# to read rows between scans; the counters after two scans are the same.
#
# Expected on a 6.18 kernel (KSM-SEMANTICS.md sections 3-4):
#   after scan 1: pages_volatile 10, every other page counter 0 (first visits
#                 only store a checksum)
#   after scan 2: pages_shared 1, pages_sharing 9, pages_unshared 0,
#                 pages_volatile 0, ksm_rmap_items 10,
#                 general_profit = 9*4096 - 10*64 = 36224
#                 ksm_merging_pages (main) 10, ksm_process_profit 40320
#   after scan 3: unchanged (KSM pages are revisited but stay put);
#                 pages_scanned 30

[global]
description = ksm_tests -M: 10 identical pages (madvise) merge into one KSM page
upstream = ksm_tests -M -p 10 -t 0
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10

[region buf]
pages = 10
fill = same
value = 0x2a2a2a2a2a2a2a2a   # memset(buf, '*', ...)
merge = madvise

[expect merged]            # assert_ksm_pages_count(10)
at = after-scan:2
pages_shared = 1
pages_sharing = 9
