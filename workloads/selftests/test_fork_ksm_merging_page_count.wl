# ksm_functional_tests test_fork_ksm_merging_page_count (6.18; the late-2025
# fork counter fix): after 2 MiB of identical pages merged, a fork child's
# ksm_merging_pages must be 0: it is not inherited. ksmkit's rows come at
# the ends of full scans, and by the end of the next one ksmd has found the
# child's 512 forked KSM mappings and counted them (KSM-SEMANTICS.md 3.A), so
# the assertion is read there as "the child counts only its own": 512
# merging pages and 512 rmap_items, where a kernel that copies the parent's
# counts at fork shows 1024 of each.
#
# Needs fork_resets_counts: Debian's 6.1 copies the counts (the expectation
# does not apply there; upstream's test fails there); Debian's 6.12.117 has
# the fix.

[global]
description = test_fork_ksm_merging_page_count: a fork child's ksm_merging_pages is its own
upstream = ksm_functional_tests test_fork_ksm_merging_page_count
requires = fork_resets_counts
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10

[region map]
size = 2m
fill = same
value = 0x4f4f4f4f4f4f4f4f

[event fork]
at = after-scan:2
action = fork
process = main
child = child

[expect merged]
at = after-scan:2
main.ksm_merging_pages >= 1

[expect not-inherited]     # "ksm_merging_page in child: %d"
at = end
child.ksm_merging_pages = 512
child.ksm_rmap_items = 512
