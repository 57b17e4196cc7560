# smart_scan on pages that never merge: 2000 pages of distinct content. Each
# page is processed on visits 1, 2, 3, 4, 6, 9, 14, ... and skipped on the
# others (KSM-SEMANTICS.md section 7), so over 12 full scans every page is
# processed 6 times (visits 1-4, 6, 9) and skipped 6 times (5, 7, 8, 10-12).
#
# Expected on a 6.18 kernel:
#   after scan 1: pages_volatile 2000
#   after scans 2-4: pages_unshared 2000 (each page alone in the unstable tree)
#   after scan 5: pages_skipped 2000, pages_unshared 0, pages_volatile 2000
#   after scan 6: pages_unshared 2000; after 7 and 8: volatile 2000 again;
#   after scan 9: unshared 2000; after 10, 11, 12: volatile 2000
#   after scan 12: pages_scanned 12000, pages_skipped 12000,
#                  pages_shared 0, pages_sharing 0
# With smart_scan = 0 every visit is processed: pages_scanned 24000.

[global]
description = smart_scan on 2000 unique pages over 12 scans: half the visits are skipped
scans = 12
pages_to_scan = 5000
sleep_millisecs = 10
smart_scan = 1

[region distinct]
pages = 2000
fill = unique
