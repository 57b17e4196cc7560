# ksm_functional_tests test_unmerge: 2 MiB of identical pages (memset 0xcf),
# MADV_MERGEABLE, two full scans (some page must be merged: the test's own
# precondition), then MADV_UNMERGEABLE over the whole range, after which no
# two pages of it may map the same frame (!range_maps_duplicates).
# A workload value must be below 2^63, so 0xcfcf... is written 0x4f4f...: any
# one non-zero byte repeated behaves the same for KSM.
#
# Expected on 6.18, 6.12 and 6.1: after scan 2 pages_shared 2, pages_sharing
# 510 (max_page_sharing 256: two dups); after the unmerge and scan 3 nothing
# is merged and the region maps 512 distinct frames.

[global]
description = test_unmerge: merged pages, MADV_UNMERGEABLE, no frame mapped twice
upstream = ksm_functional_tests test_unmerge
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10

[region map]
size = 2m
fill = same
value = 0x4f4f4f4f4f4f4f4f

[event unmerge]
at = after-scan:2
action = unmerge
region = map

[expect merged]            # mmap_and_merge_range: "No pages got merged" otherwise
at = after-scan:2
main.ksm_merging_pages >= 1

[expect unmerged]          # ksft_test_result(!range_maps_duplicates(map, size))
at = end
region = map
duplicates = none
