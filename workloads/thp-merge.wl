# A THP region of identical pages: subpages are scanned one by one; a merge
# splits the THP first. 1024 pages are two huge pages. Page 1 finds page 0
# in the unstable tree, inside the same THP, which cannot be split while
# both are held: that merge fails once (KSM-SEMANTICS.md section 9). Page 2
# merges with page 0, and pages 512-1023 join the stable page one by one,
# splitting the second THP without trouble. The backend refuses to run if
# setup did not get both huge pages (a run without them reads
# pages_sharing 1020, pages_volatile 0 at scan 2).
#
# Expected on 6.1, 6.12 and 6.18 kernels (1023 = 3*256 + 255):
#   after scan 1: pages_volatile 1024
#   after scan 2: pages_shared 4, pages_sharing 1019, pages_volatile 1,
#                 stable_node_chains 1, stable_node_dups 4
#   after scans 3-4: pages_shared 4, pages_sharing 1020, pages_volatile 0
[global]
description = identical pages in THPs
scans = 4
pages_to_scan = 5000
sleep_millisecs = 10

[region huge]
size = 4m
fill = same
value = 3
thp = always
