# ksm_tests -Z -p 10 -z 0 -t 1 (check_ksm_zero_page_merge, prctl merge type): 10
# zero-filled, faulted-in pages. With use_zero_pages = 0 zero pages are
# ordinary content and merge with each other into one KSM page:
# assert_ksm_pages_count(10), pages_shared = 1 and pages_sharing = 9.
# 6.1 has no PR_SET_MEMORY_MERGE: the kernel run is skipped there.
#
# Expected on a 6.18 kernel:
#   after scan 1: pages_volatile 10
#   after scan 2 and 3: pages_shared 1, pages_sharing 9, ksm_zero_pages 0,
#                       general_profit 36224

[global]
description = ksm_tests -Z -z 0: 10 zero pages merge with each other (use_zero_pages = 0), prctl
upstream = ksm_tests -Z -p 10 -z 0 -t 1
requires = prctl_merge
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10
use_zero_pages = 0

[region zeros]
pages = 10
fill = zero
merge = prctl

[expect counted]           # assert_ksm_pages_count(10)
at = after-scan:2
pages_shared = 1
pages_sharing = 9
