# The N mod M = 1 case of chains: 993 identical pages, max_page_sharing = 16
# (993 = 62*16 + 1). Every dup fills up to 16 and one page is left over: it
# has no partner in the unstable tree and no dup will take it.
#
# Expected on a 6.18 kernel (KSM-SEMANTICS.md sections 4, 5 and 7):
#   after scan 1: pages_volatile 993
#   after scan 2: pages_shared 62, pages_sharing 930, pages_unshared 1
#                 (the straggler), stable_node_chains 1, stable_node_dups 62
#   after scans 3 and 4: unchanged (the straggler is searched, refused by
#                 every full dup, and reinserted in the unstable tree)
#   after scan 5: smart_scan skips the straggler on its 5th visit:
#                 pages_skipped 1, pages_unshared 0, pages_volatile 1

[global]
description = 993 identical pages with max_page_sharing = 16: 62 full dups and one straggler
scans = 5
pages_to_scan = 5000
sleep_millisecs = 10
max_page_sharing = 16

[region same]
pages = 993
fill = same
value = 0x5a5a5a5a5a5a5a5a
