# ksm_functional_tests test_prctl: PR_SET_MEMORY_MERGE 1 must make
# PR_GET_MEMORY_MERGE answer 1, and PR_SET_MEMORY_MERGE 0 make it answer 0.
# ksmkit reads the flag in the process's ksm_stat (ksm_merge_any, 6.14) and
# checks what the flag does: the process's pages merge while it is set (2 MiB
# of identical pages), and none stays merged nor mergeable once it is
# cleared. On 6.12 the ksm_merge_any and ksm_mergeable lines do not exist:
# only the merging is checked there. 6.1 has no PR_SET_MEMORY_MERGE: the
# kernel run is skipped, as upstream skips ("PR_SET_MEMORY_MERGE not
# supported").

[global]
description = test_prctl: PR_SET_MEMORY_MERGE set and cleared, as ksm_stat and merging show
upstream = ksm_functional_tests test_prctl
requires = prctl_merge
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10

[region map]
size = 2m
fill = same
value = 0x4f4f4f4f4f4f4f4f
merge = prctl

[event clear]
at = after-scan:2
action = merge-off
process = main

[expect set]               # PR_GET_MEMORY_MERGE == 1: "PR_SET_MEMORY_MERGE=1 not effective"
at = after-scan:2
main.ksm_merge_any = 1
main.ksm_merging_pages >= 1

[expect cleared]           # PR_GET_MEMORY_MERGE == 0: "PR_SET_MEMORY_MERGE=0 not effective"
at = end
main.ksm_merge_any = 0
main.ksm_mergeable = 0
main.ksm_merging_pages = 0
