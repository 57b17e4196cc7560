# ksm_tests -N -m 1 (check_ksm_numa_merge with merge_across_nodes on), at
# the size the selftest uses: one page of '*' on node 0, one on node 1. One
# stable and unstable tree spans every node, so the two merge.
# Needs 2 NUMA nodes: run it with --guest nodes=2 (or more) on a one-node
# host; a host run without node 1 is skipped, and `ksmkit demo` shows the
# simulator's side only.
#
# Expected (KSM-SEMANTICS.md section 6), on 6.1 in the guest and on 6.18:
#   after scan 1: pages_volatile 2
#   after scans 2 and 3: pages_shared 1, pages_sharing 1, pages_unshared 0
#   (numa-ksm-tests-0.wl is the same with merge_across_nodes = 0)

[global]
description = ksm_tests -N, merge_across_nodes = 1: identical pages on two nodes merge
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10
merge_across_nodes = 1

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
