# MADV_UNMERGEABLE on part of a chain: 1000 equal pages with
# max_page_sharing = 16 form one chain of 63 dups (see chains.wl), dup k
# holding pages 16k .. 16k+15. After scan 2 pages 0-99 are unmerged: dups 0-5
# lose all their mappings (their KSM pages are freed), dup 6 loses 4 of 16.
#
# Expected on a 6.18 kernel (sections 1, 2 and 4):
#   after scan 2: pages_shared 63, pages_sharing 937, stable_node_chains 1,
#                 stable_node_dups 63, ksm_rmap_items 1000
#   the unmerge copies the 100 pages at once but leaves the rmap items and
#   every counter alone until ksmd walks the mm
#   after scan 3: the items of pages 0-99 are freed; the first item of each
#                 of dups 0-5 finds its node stale and deletes it:
#                 pages_shared 57, pages_sharing 843, ksm_rmap_items 900,
#                 stable_node_chains 1, stable_node_dups 57
#   after scan 4: unchanged (pages 0-99 are no longer mergeable)

[global]
description = unmerge pages 0-99 of a 1000-page chain (max_page_sharing = 16) after scan 2
scans = 4
pages_to_scan = 5000
sleep_millisecs = 10
max_page_sharing = 16

[region same]
pages = 1000
fill = same
value = 0x5a5a5a5a5a5a5a5a

[event unmerge-head]
at = after-scan:2
action = unmerge
region = same
pages = 0-99
