# Half volatile, half identical: 2000 pages of one content; after every full
# scan the first 1000 get a fresh value at offset 0, so each of them changes
# between any two visits and never passes the checksum test. The other 1000
# merge (1000 = 3*256 + 232 with max_page_sharing 256).
#
# Expected on a 6.18 kernel:
#   after scan 1: pages_volatile 2000
#   after scans 2-8: pages_shared 4, pages_sharing 996, pages_unshared 0,
#                    pages_volatile 1000, stable_node_chains 1,
#                    stable_node_dups 4
#   smart_scan skips each volatile page on its visits 5, 7 and 8:
#   after scan 8: pages_skipped 3000, pages_scanned 8000 + 5000 = 13000
# The dirty-bit detector sees the same: every rewritten page is dirty.

[global]
description = 1000 pages rewritten with fresh values after every scan, 1000 identical pages
scans = 8
pages_to_scan = 5000
sleep_millisecs = 10

[region mixed]
pages = 2000
fill = same
value = 0x1111111111111111

[writer churn]
region = mixed
pages = 0-999
offset = 0
value = fresh
when = every-scan   # after scans 1, 2, ... (from = 1 by default)
