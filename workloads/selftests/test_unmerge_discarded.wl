# ksm_functional_tests test_unmerge_discarded: 2 MiB of identical pages are
# merged, MADV_DONTNEED discards the first half (its PTEs become none), then
# MADV_UNMERGEABLE over the whole range must still unmerge the rest: no two
# pages may map the same frame. (0xcf is written 0x4f, see test_unmerge.wl.)

[global]
description = test_unmerge_discarded: unmerging a range with pte_none entries
upstream = ksm_functional_tests test_unmerge_discarded
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10

[region map]
size = 2m
fill = same
value = 0x4f4f4f4f4f4f4f4f

[event discard-half]
at = after-scan:2
action = discard
region = map
pages = 0-255

[event unmerge]
at = after-scan:2
action = unmerge
region = map

[expect merged]
at = after-scan:2
main.ksm_merging_pages >= 1

[expect unmerged]
at = end
region = map
duplicates = none
