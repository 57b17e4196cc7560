# munmap in the middle of a merged region: 200 pages are one KSM page after
# scan 2; pages 50-149 are then unmapped, splitting the region in two VMAs.
# KSM learns of it lazily: the 100 items are freed when the cursor passes.
#
# Expected on a 6.18 kernel (section 2, "Walking an mm"; section 4):
#   after scan 2: pages_shared 1, pages_sharing 199, ksm_rmap_items 200
#   the munmap changes no KSM counter
#   after scan 3: pages_shared 1, pages_sharing 99, ksm_rmap_items 100,
#                 ksm_merging_pages 100 (the KSM page lives on in 0-49, 150-199)
#   after scan 4: unchanged

[global]
description = unmap the middle half of a merged region after scan 2
scans = 4
pages_to_scan = 5000
sleep_millisecs = 10

[region buf]
pages = 200
fill = same
value = 0x6666666666666666

[event hole]
at = after-scan:2
action = unmap
region = buf
pages = 50-149
