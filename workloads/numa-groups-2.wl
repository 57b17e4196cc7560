# Groups of identical pages on two NUMA nodes with merge_across_nodes = 0:
# each node merges only its own pages, in its own stable tree, and a group
# larger than max_page_sharing (256) becomes a chain on that node. Memory
# placed nowhere in particular (node = any) is allocated on node 0, where
# the guest's only CPU is, and joins node 0's groups.
# Needs 2 NUMA nodes: --guest nodes=2 (or more).
#
# Expected (KSM-SEMANTICS.md sections 4-6), per node then in total:
#   node 0: value 1 x 400 (300 + 100 unplaced): shared 2, sharing 398 (a chain
#           of 2 dups: 256 + 144); value 2 x 200: 1 and 199; value 3 x 12: 1, 11
#   node 1: value 1 x 300: 2 and 298 (a chain of 2 dups); value 2: 1, 199;
#           value 3: 1, 11
#   after scan 2 and 3: pages_shared 8, pages_sharing 1116, pages_unshared 0,
#   pages_volatile 0, stable_node_chains 2, stable_node_dups 4
#   (with merge_across_nodes = 1 it would be 5 shared in 1 chain of 3 dups)

[global]
description = groups of identical pages on 2 nodes, merged per node (merge_across_nodes = 0)
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10
merge_across_nodes = 0

[region n0]
pages = 512
fill = groups
groups = 300x1,200x2,12x3
node = 0

[region n1]
pages = 512
fill = groups
groups = 300x1,200x2,12x3
node = 1

[region unplaced]
pages = 100
fill = same
value = 1
