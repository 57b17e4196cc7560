# ksm_tests -N -m 0 (check_ksm_numa_merge with merge_across_nodes off), at
# the size the selftest uses: one page of '*' on node 0, one on node 1. Each
# node has its own stable and unstable tree, so the two never meet.
# Needs 2 NUMA nodes: run it with --guest nodes=2 (or more) on a one-node
# host; a host run without node 1 is skipped, and `ksmkit demo` shows the
# simulator's side only.
#
# Expected (KSM-SEMANTICS.md section 6), on 6.1 in the guest and on 6.18:
#   after scan 1: pages_volatile 2
#   after scans 2 and 3: pages_shared 0, pages_sharing 0, pages_unshared 2
#   (numa-ksm-tests-1.wl is the same with merge_across_nodes = 1)

[global]
description = ksm_tests -N, merge_across_nodes = 0: identical pages on two nodes stay apart
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
