# ksm_tests -N -m 0 (check_ksm_numa_merge, merge_across_nodes off): one page on
# each of two NUMA nodes, same '*' content. With merge_across_nodes = 0 every
# node has its own stable and unstable tree, so the two never merge. (The
# selftest marks the two pages mergeable one after the other; here both
# register at setup.)
# Needs a machine with at least 2 NUMA nodes (nodes 0 and 1); elsewhere a
# kernel run cannot place the pages.
#
# Expected on a 6.18 kernel (KSM-SEMANTICS.md section 6):
#   after scan 1: pages_volatile 2
#   after scan 2 and 3: pages_shared 0, pages_sharing 0, pages_unshared 2
#                       (each page sits alone in its node's unstable tree)
# With merge_across_nodes = 1 the same pages would give shared 1, sharing 1.

[global]
description = ksm_tests -N: identical pages on nodes 0 and 1 stay apart (merge_across_nodes = 0)
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10
merge_across_nodes = 0

[region on-node0]
pages = 1
fill = same
value = 0x2a2a2a2a2a2a2a2a
node = 0

[region on-node1]
pages = 1
fill = same
value = 0x2a2a2a2a2a2a2a2a
node = 1
