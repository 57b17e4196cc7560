# ksm_tests -U (check_ksm_unmerge): two '*' pages are merged,
# then one byte of each is changed ('-' in page 0, '+' in page 1); after one
# more full scan no page may be merged: assert_ksm_pages_count(0), that is
# pages_shared = 0 and pages_sharing = 0. Our writes store an 8-byte
# little-endian word, so 0x2a2a2a2a2a2a2a2d at offset 0 changes exactly byte
# 0 to '-' (0x2d), and 0x2a2a2a2a2a2a2a2b changes it to '+' (0x2b), as
# memset(p, '-', 1) does.
#
# Expected on a 6.18 kernel:
#   after scan 2: pages_shared 1, pages_sharing 1
#   the writes COW both mappings; no counter moves until ksmd revisits them
#   after scan 3: pages_shared 0, pages_sharing 0, pages_unshared 0,
#                 pages_volatile 2 (new content: checksum changed),
#                 ksm_rmap_items 2, ksm_merging_pages 0

[global]
description = ksm_tests -U: two merged pages (madvise) each get a different 1-byte change and unmerge
upstream = ksm_tests -U -t 0
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10

[region buf]
pages = 2
fill = same
value = 0x2a2a2a2a2a2a2a2a
merge = madvise

[event dash]
at = after-scan:2
action = write
region = buf
pages = 0
offset = 0
value = 0x2a2a2a2a2a2a2a2d   # byte 0 becomes '-'

[event plus]
at = after-scan:2
action = write
region = buf
pages = 1
offset = 0
value = 0x2a2a2a2a2a2a2a2b   # byte 0 becomes '+'

[expect merged]            # ksm_merge_pages: what -U starts from
at = after-scan:2
pages_shared = 1
pages_sharing = 1

[expect unmerged]          # assert_ksm_pages_count(0)
at = end
pages_shared = 0
pages_sharing = 0
