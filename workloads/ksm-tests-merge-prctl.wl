# ksm_tests -M with the prctl merge type (-t 1): the same 10 '*' pages, but
# the process asks for KSM with prctl(PR_SET_MEMORY_MERGE, 1), which marks
# every compatible VMA of the process, not just this region.
#
# Expected on a 6.18 kernel, for the region's pages (as ksm-tests-merge.wl):
#   after scan 1: pages_volatile 10
#   after scan 2 and 3: pages_shared 1, pages_sharing 9, pages_volatile 0
#   /proc/PID/ksm_stat: ksm_merge_any: yes, ksm_mergeable: yes (6.14+)
# On a real kernel the process's other anonymous memory (heap, stack) is
# mergeable too and may add rmap items and volatile pages of its own.

[global]
description = ksm_tests -M, prctl variant: 10 identical pages via PR_SET_MEMORY_MERGE
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10

[region buf]
pages = 10
fill = same
value = 0x2a2a2a2a2a2a2a2a
merge = prctl
