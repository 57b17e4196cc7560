# Half volatile, half identical, in huge pages: 1000 pages of one content in
# a thp = always region, whose pages 0-511 are one THP and pages 512-999
# (less than 2 MiB) small pages. After every full scan pages 0-499 get a
# fresh value at offset 0, so they never pass the checksum test; pages
# 500-999 merge, into 2 dups of one chain with max_page_sharing 256.
# Page 501 is the first to find a match inside the THP, page 500 in the
# unstable tree: the THP cannot be split while both are held, so that merge
# fails once (the THP is split by then) and succeeds at the next scan
# (KSM-SEMANTICS.md section 9). A run whose region did not get its huge
# page would merge page 501 at scan 2 (pages_sharing 498, pages_volatile
# 500), which is why the backend refuses to run without it.
#
# Expected on 6.1, 6.12 and 6.18 kernels:
#   after scan 1: pages_volatile 1000
#   after scan 2: pages_shared 2, pages_sharing 497, pages_unshared 0,
#                 pages_volatile 501, stable_node_chains 1,
#                 stable_node_dups 2, ksm_merging_pages 499
#   after scans 3-6: pages_shared 2, pages_sharing 498, pages_volatile 500,
#                 ksm_merging_pages 500
#   6.12 and 6.18 (smart_scan): each volatile page is skipped on its visit 5:
#   after scan 5: pages_skipped 500, pages_scanned 5000 - 500 = 4500
#   after scan 6: pages_skipped 500, pages_scanned 6000 - 500 = 5500

[global]
description = 1000 pages in THP, the first 500 rewritten with fresh values after every scan
scans = 6
pages_to_scan = 5000
sleep_millisecs = 10
max_page_sharing = 256

[region mixed]
pages = 1000
fill = same
value = 0x2222222222222222
thp = always

[writer churn]
region = mixed
pages = 0-499
offset = 0
value = fresh
when = every-scan   # after scans 1, 2, ... (from = 1 by default)
