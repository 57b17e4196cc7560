# ksm_functional_tests test_unmerge_zero_pages: with use_zero_pages = 1,
# 2 MiB of zero pages are merged with the kernel's zero page; ksm_stat's
# ksm_zero_pages must then be 512. MADV_UNMERGEABLE on the first half must
# bring it to 256, and writing the second half (a write fault on a KSM zero
# page) to 0; finally no two pages may map the same frame (the shared zero
# page counts as one frame).
# ksmkit's rows are taken at the ends of full scans: the unmerge happens
# after scan 2 and is read at scan 3, the writes after scan 3 and read at
# scan 4. Nothing ksmd does in between moves these counts (the unmerged half
# is no longer mergeable; zero-page PTEs are no longer candidates).
#
# Needs unshares_zero_pages (6.6): on 6.1 unmerging leaves KSM-placed zero
# pages mapped, and 6.1 has no ksm_zero_pages line, so there the
# expectations do not apply (upstream's test fails there).

[global]
description = test_unmerge_zero_pages: ksm_zero_pages follows unmerging and write faults
upstream = ksm_functional_tests test_unmerge_zero_pages
requires = unshares_zero_pages
scans = 4
pages_to_scan = 5000
sleep_millisecs = 10
use_zero_pages = 1

[region map]
size = 2m
fill = zero

[event unmerge-half]
at = after-scan:2
action = unmerge
region = map
pages = 0-255

[event write-half]         # *((unsigned int *)&map[offs]) = offs: a value per page
at = after-scan:3
action = write
region = map
pages = 256-511
value = fresh

[expect merged]            # "'ksm_zero_pages' updated after merging"
at = after-scan:2
main.ksm_zero_pages = 512

[expect half-unmerged]     # "'ksm_zero_pages' updated after unmerging"
at = after-scan:3
main.ksm_zero_pages = 256

[expect written]           # "'ksm_zero_pages' updated after write fault", then no duplicates
at = end
main.ksm_zero_pages = 0
region = map
duplicates = none
