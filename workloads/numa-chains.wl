# Stable-node chains per NUMA node, with the default max_page_sharing (256):
# 600 identical pages on node 0 and 600 on node 1, merge_across_nodes = 0.
# Each node's stable tree grows its own chain: 600 = 2 x 256 + 88, so three
# dups per node. One tree for both (merge_across_nodes = 1) would give one
# chain of five dups (1200 = 4 x 256 + 176).
# Needs 2 NUMA nodes: --guest nodes=2 (or more).
#
# Expected (KSM-SEMANTICS.md sections 4-6), after scans 2 and 3:
#   per node: shared 3, sharing 2 x 255 + 87 = 597, 1 chain, 3 dups
#   pages_shared 6, pages_sharing 1194, pages_unshared 0, pages_volatile 0,
#   stable_node_chains 2, stable_node_dups 6

[global]
description = one chain per node: 600 identical pages on each of 2 nodes, max_page_sharing 256
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10
merge_across_nodes = 0

[region n0]
pages = 600
fill = same
value = 0x6363636363636363
node = 0

[region n1]
pages = 600
fill = same
value = 0x6363636363636363
node = 1
