# ksm_tests -N -m 0 -t 1 (check_ksm_numa_merge, merge_across_nodes off, prctl merge type):
# one page of '*' on each of two NUMA nodes. With merge_across_nodes = 0 each node
# has its own stable and unstable tree, so the two never meet:
# assert_ksm_pages_count(0), pages_shared = 0 and pages_sharing = 0.
# (The selftest marks the two pages mergeable one after the other; here both
# register at setup.)
# Needs 2 NUMA nodes, as upstream skips without them ("At least 2 NUMA nodes
# with memory must be available"): a host run without node 1 is skipped, and
# `ksmkit selftest --guest nodes=2` runs it.
# 6.1 has no PR_SET_MEMORY_MERGE: the kernel run is skipped there.
#
# Expected (KSM-SEMANTICS.md section 6):
#   after scan 1: pages_volatile 2
#   after scans 2 and 3: pages_shared 0, pages_sharing 0, pages_unshared 2

[global]
description = ksm_tests -N, merge_across_nodes = 0: identical pages on two nodes stay apart (prctl)
upstream = ksm_tests -N -m 0 -t 1
requires = prctl_merge
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10
merge_across_nodes = 0

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

[expect counted]           # assert_ksm_pages_count(0)
at = after-scan:2
pages_shared = 0
pages_sharing = 0
