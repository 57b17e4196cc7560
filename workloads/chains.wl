# Identical pages beyond max_page_sharing: 1000 pages of one content with
# max_page_sharing = 16 build one stable_node chain of dups of 16 mappings
# each, plus a last dup for the r = 1000 mod 16 = 8 remaining pages.
#
# Expected on a 6.18 kernel (KSM-SEMANTICS.md sections 4-5; 1000 = 62*16 + 8):
#   after scan 1: pages_volatile 1000
#   after scan 2: pages_shared 62 + 1 = 63, pages_sharing 62*15 + 7 = 937,
#                 pages_unshared 0, pages_volatile 0,
#                 stable_node_chains 1, stable_node_dups 63,
#                 general_profit = 937*4096 - 1000*64 = 3773952
#   after scan 3: unchanged (KSM pages stay put; no search touches the chain)

[global]
description = 1000 identical pages with max_page_sharing = 16: one chain of 63 dups
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10
max_page_sharing = 16

[region same]
pages = 1000
fill = same
value = 0x5a5a5a5a5a5a5a5a
