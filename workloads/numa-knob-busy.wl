# Changing merge_across_nodes: the kernel answers EBUSY while KSM pages
# exist, and accepts the change after run = 2 has unmerged everything (the
# documented procedure: run = 2, change the knob, run = 1). 300 identical
# pages on node 0 and 300 on node 1 merge across nodes first, then per node.
# Needs 2 NUMA nodes: --guest nodes=2 (or more).
#
# Expected (KSM-SEMANTICS.md sections 6-7):
#   scan 2 (one tree): 600 = 2 x 256 + 88: shared 3, sharing 597, 1 chain,
#     3 dups; then merge_across_nodes=0 answers EBUSY
#   after scan 3: run = 2 unmerges (full_scans restarts at 0), the store now
#     succeeds, run = 1 starts from scratch
#   scan 4: every page is volatile again (pages_volatile 600)
#   scan 5 (per node): 300 = 256 + 44 on each: shared 4, sharing 596,
#     2 chains, 4 dups; merge_across_nodes=1 answers EBUSY again

[global]
description = merge_across_nodes: EBUSY while pages are shared, accepted after run = 2
scans = 6
pages_to_scan = 5000
sleep_millisecs = 10
merge_across_nodes = 1

[region n0]
pages = 300
fill = same
value = 0x4b4b4b4b4b4b4b4b
node = 0

[region n1]
pages = 300
fill = same
value = 0x4b4b4b4b4b4b4b4b
node = 1

[event busy]
at = after-scan:2
action = set
set = merge_across_nodes=0
expect = EBUSY

[event stop]
at = after-scan:3
action = run
run = 2

[event per-node]
at = after-scan:3
action = set
set = merge_across_nodes=0

[event go]
at = after-scan:3
action = run
run = 1

[event busy-again]
at = after-scan:5
action = set
set = merge_across_nodes=1
expect = EBUSY
