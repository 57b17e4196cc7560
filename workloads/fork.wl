# Fork of a process with merged pages: main's 100 pages are one KSM page after
# scan 2; main forks kid, which inherits the KSM mappings; kid exits later.
#
# Expected on a 6.18 kernel with the late-2025 fork counter fix (KSM-SEMANTICS.md
# sections 1, 3.A and 4):
#   after scan 2: pages_shared 1, pages_sharing 99, ksm_rmap_items 100
#   fork after scan 2: kid is registered at the end of the mm list; its
#                 ksm_stat starts at ksm_rmap_items 0, ksm_merging_pages 0
#   after scan 3: kid's forked KSM pages join the node on their first visit:
#                 pages_shared 1, pages_sharing 199, ksm_rmap_items 200,
#                 ksm_merging_pages 100 in main and 100 in kid
#   after scan 4: unchanged; then kid exits (no counter moves at exit)
#   after scan 5: ksmd frees kid's items first thing: pages_shared 1,
#                 pages_sharing 99, ksm_rmap_items 100

[global]
description = main forks kid after its pages merged; kid shares them, then exits
scans = 5
pages_to_scan = 5000
sleep_millisecs = 10

[region heap]
process = main
pages = 100
fill = same
value = 0x4242424242424242

[event fork]
at = after-scan:2
action = fork
process = main
child = kid

[event kid-exits]
at = after-scan:4
action = exit
process = kid
