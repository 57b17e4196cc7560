# Groups of identical pages spread over four NUMA nodes with
# merge_across_nodes = 0: every node merges its own copies and nothing
# crosses a node, so each content is shared once per node that holds it,
# and a content alone on its node stays unshared.
# Needs 4 NUMA nodes: --guest nodes=4.
#
# Expected (KSM-SEMANTICS.md section 6), after scans 2 and 3:
#   value 7 (100 per node) and value 8 (50 per node) on nodes 0-3:
#     4 x (1 shared + 99 sharing) and 4 x (1 shared + 49 sharing)
#   value 9: 10 pages on node 2 (1 shared, 9 sharing), 1 page on node 3
#     (alone in node 3's unstable tree)
#   pages_shared 9, pages_sharing 601, pages_unshared 1, pages_volatile 0,
#   stable_node_chains 0, stable_node_dups 0
#   (with merge_across_nodes = 1: shared 3, sharing 608, unshared 0)

[global]
description = groups of identical pages on 4 nodes, merged per node (merge_across_nodes = 0)
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10
merge_across_nodes = 0

[region n0]
pages = 150
fill = groups
groups = 100x7,50x8
node = 0

[region n1]
pages = 150
fill = groups
groups = 100x7,50x8
node = 1

[region n2]
pages = 160
fill = groups
groups = 100x7,50x8,10x9
node = 2

[region n3]
pages = 151
fill = groups
groups = 100x7,50x8,1x9
node = 3
