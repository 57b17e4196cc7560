# ksm_tests -N -m 1 -t 1 (check_ksm_numa_merge, merge_across_nodes on, prctl merge type):
# one page of '*' on each of two NUMA nodes. One stable and unstable tree spans every node, so the
# two merge: assert_ksm_pages_count(2), pages_shared = 1 and pages_sharing = 1.
# (The selftest marks the two pages mergeable one after the other; here both
# register at setup.)
# Needs 2 NUMA nodes, as upstream skips without them ("At least 2 NUMA nodes
# with memory must be available"): a host run without node 1 is skipped, and
# `ksmkit selftest --guest nodes=2` runs it.
# 6.1 has no PR_SET_MEMORY_MERGE: the kernel run is skipped there.
#
# Expected (KSM-SEMANTICS.md section 6):
#   after scan 1: pages_volatile 2
#   after scans 2 and 3: pages_shared 1, pages_sharing 1, pages_unshared 0

[global]
description = ksm_tests -N, merge_across_nodes = 1: identical pages on two nodes merge (prctl)
upstream = ksm_tests -N -m 1 -t 1
requires = prctl_merge
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10
merge_across_nodes = 1

[region on-node0]
pages = 1
fill = same
value = 0x2a2a2a2a2a2a2a2a
node = 0
merge = prctl

[region on-node1]
pages = 1
fill = same
value = 0x2a2a2a2a2a2a2a2a
node = 1
merge = prctl

[expect counted]           # assert_ksm_pages_count(2)
at = after-scan:2
pages_shared = 1
pages_sharing = 1
