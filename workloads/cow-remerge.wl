# COW without a change: 200 merged pages; after scan 2, pages 0, 2, 4, ...
# are written with the value they already hold. Each write breaks COW (a
# private copy with the same bytes) but the content stays equal.
#
# Expected on a 6.18 kernel (KSM-SEMANTICS.md section 8, measured note at the
# top: the item keeps its pre-merge checksum):
#   after scan 2: pages_shared 1, pages_sharing 199
#   the writes change no counter; vmstat cow_ksm rises by 100
#   after scan 3: each written page leaves the node and re-merges into the
#                 same KSM page on the same visit: pages_shared 1,
#                 pages_sharing 199, pages_volatile 0
#   after scan 4: unchanged
# With detector = dirty (or a kernel that wipes the checksum history), the
# written pages are volatile at scan 3 (shared 1, sharing 99, volatile 100)
# and re-merge at scan 4.

[global]
description = merged pages rewritten with their own value COW-break and re-merge
scans = 4
pages_to_scan = 5000
sleep_millisecs = 10

[region buf]
pages = 200
fill = same
value = 0x7777777777777777

[event same-value]
at = after-scan:2
action = write
region = buf
pages = every:2
offset = 0
value = 0x7777777777777777   # the value every page already holds
