# ksm_tests -P -s 100 (ksm_merge_time): 100 MiB of '*' pages, timed from
# MADV_MERGEABLE until two full scans are done. Here pages_to_scan covers the
# whole region, so every full scan is a single batch; compare scan times.
#
# Expected on a 6.18 kernel (the worked example of KSM-SEMANTICS.md section 4:
# 25600 identical pages, max_page_sharing 256, 100 groups, no remainder):
#   after scan 1: pages_volatile 25600, everything else 0
#   after scan 2: pages_shared 100, pages_sharing 25500, pages_unshared 0,
#                 pages_volatile 0, stable_node_chains 1, stable_node_dups 100,
#                 pages_scanned 51200, general_profit 102809600,
#                 ksm_merging_pages 25600, ksm_process_profit 103219200
#   after scan 3: unchanged except pages_scanned 76800
# ksm_tests itself leaves pages_to_scan at its page count (10 unless -p).

[global]
description = ksm_tests -P: merge speed of 100 MiB of identical pages
scans = 3
pages_to_scan = 30000
sleep_millisecs = 10

[region buf]
size = 100m
fill = same
value = 0x2a2a2a2a2a2a2a2a
