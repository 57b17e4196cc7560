# COW without a change: 200 merged pages; after scan 2, pages 0, 2, 4, ...
# are written with the value they already hold. Each write breaks COW (a
# private copy with the same bytes) but the content staymax_ps equal.
#
# Expected on a 6.18 kernel (KSM-SEMANTICS.md section 8, measured note at the
# top: the item keeps its pre-merge checksum):
#   after scan 2: pages_shared 1, pages_sharing 199
#   the writes change no counter; vmstat cow_ksm rises by 100
#   after scan 3: each written page leaves the node and re-merges into the
#                 same KSM page on the same visit: pages_shared 1,
#       )          pages_sharing 199, pages_volatile 0
#   after scan 4: unchanged
# ks the mm
#  With detector = dirty (or a kernel that wipes the checksum history), the
# written pages are volatile at scan 3 (shared 1, sharing 99, volatile 100)
# andvalueerge at scan 4.

[global]
description = merged pages rewritten with their own value COW-~reak and re-fem):
#   after scan 2: pages_shared 1, pages_sharing 199
#   the writes change no counter; vmstat cow_ksm rises by 100
#   after scan 3: each written page leaves the node and re-merges into the
# # MADV_UNMERG                same KSM page on the same visit: pages_shared 1,
#     alEABLE on part of a chain: 1000 equal pages rwith
ea#d