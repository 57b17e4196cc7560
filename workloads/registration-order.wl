# Registration order: p1 and p2 register at setup (in file order), late only
# after scan 2 through a merge event, so its slot goes at the end of the mm
# list and its pages are first visited in scan 3. All 300 pages are equal.
#
# Expected on a 6.18 kernel (checksum before stable search):
#   after scan 1: pages_volatile 200 (late is not registered)
#   after scan 2: pages_shared 1, pages_sharing 199 (p1 and p2)
#   after scan 3: late's first visits only store checksums:
#                 pages_shared 1, pages_sharing 199, pages_volatile 100
#   after scan 4: 56 of late's pages fill the node to 256; the other 44 make
#                 a new dup: pages_shared 2, pages_sharing 298,
#                 stable_node_chains 1, stable_node_dups 2, pages_volatile 0
# With kernel = 6.10 (stable search first) late's pages join the node on
# their first visit: after scan 3 pages_shared 1, pages_sharing 255,
# pages_volatile 44; after scan 4 the same as 6.18.

[global]
description = p1 and p2 register at setup, late registers after scan 2 via MADV_MERGEABLE
scans = 4
pages_to_scan = 5000
sleep_millisecs = 10

[region p1-heap]
process = p1
pages = 100
fill = same
value = 0x3333333333333333

[region p2-heap]
process = p2
pages = 100
fill = same
value = 0x3333333333333333

[region late-heap]
process = late
pages = 100
fill = same
value = 0x3333333333333333
merge = none

[event late-registers]
at = after-scan:2
action = merge
region = late-heap
