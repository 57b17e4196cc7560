# ksm_tests -Z -p 10 -z 1 -t 1 (check_ksm_zero_page_merge, prctl merge type): 10
# zero-filled, faulted-in pages. With use_zero_pages = 1 each is replaced by
# the kernel's zero page instead of merging into a KSM page:
# assert_ksm_pages_count(0), pages_shared = 0 and pages_sharing = 0.
# 6.1 has no PR_SET_MEMORY_MERGE: the kernel run is skipped there.
#
# Expected on a 6.18 kernel:
#   after scan 1: pages_volatile 10
#   after scan 2: pages_shared 0, pages_sharing 0, ksm_zero_pages 10,
#                 pages_volatile 10 (the flagless items linger),
#                 ksm_rmap_items 10, general_profit = 10*4096 - 10*64 = 40320
#   after scan 3: the zero-page PTEs are no longer eligible, so ksmd frees the
#                 10 items: ksm_rmap_items 0, pages_volatile 0,
#                 ksm_zero_pages 10, general_profit 40960; pages_scanned 20

[global]
description = ksm_tests -Z -z 1: 10 zero pages become the kernel zero page (use_zero_pages = 1), prctl
upstream = ksm_tests -Z -p 10 -z 1 -t 1
requires = prctl_merge
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10
use_zero_pages = 1

[region zeros]
pages = 10
fill = zero
merge = prctl

[expect counted]           # assert_ksm_pages_count(0)
at = after-scan:2
pages_shared = 0
pages_sharing = 0
