# ksm_functional_tests test_prctl_unmerge: 2 MiB of identical pages merged
# through PR_SET_MEMORY_MERGE 1; PR_SET_MEMORY_MERGE 0 must unmerge them: no
# two pages may map the same frame. 6.1 has no PR_SET_MEMORY_MERGE: skipped.

[global]
description = test_prctl_unmerge: PR_SET_MEMORY_MERGE 0 unmerges the process
upstream = ksm_functional_tests test_prctl_unmerge
requires = prctl_merge
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10

[region map]
size = 2m
fill = same
value = 0x4f4f4f4f4f4f4f4f
merge = prctl

[event off]
at = after-scan:2
action = merge-off
process = main

[expect merged]
at = after-scan:2
main.ksm_merging_pages >= 1

[expect unmerged]
at = end
region = map
duplicates = none
