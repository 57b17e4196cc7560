# smart_scan's cost and its blind spot on one workload: mostly unique pages,
# and eight pairs of pages that become equal at different times, each pair
# made of a page whose rmap_item was created in scan 1 and one created three
# scans later (its region is made mergeable after scan 3). Under the
# kernel's countdown the two items' visits are out of phase for good once
# both are aged (early items are visited at scans 1, 2, 3, 4, 6, 9, 14, 23,
# 32, ..., late ones at 4, 5, 6, 7, 9, 12, 17, 26, 35, ...): a pair that
# becomes equal after scan 6 or later is never merged. Under the phased
# rule equal pages share their visits and merge. The unique pages are what smart scan
# saves: most of their visits are skipped, by every policy.
#
#   ksmkit sim workloads/smart-scan-mixed.wl
#   ksmkit sweep smart-scan --sim-only     (this and the shipped workloads,
#                                            under every smart_scan_policy)
#
# Expected on the simulator (6.18): pages_sharing reaches 8 by scan 42 with
# smart_scan off, by scan 49 under aligned and by scan 54 under phased; under
# upstream it stays at 1 from scan 9 on: only the pair joined after scan 4
# merges, and the other seven stay unmerged to the end.

[global]
description = smart_scan on mostly unique pages, with pairs of pages becoming equal at different times
scans = 64
pages_to_scan = 20000
sleep_millisecs = 20

[region bulk]
pages = 8192
fill = unique

# pair k: page k of early and page k of late, equal from its join on, when
# word 0 of both becomes 101 + k (the rest of each page holds 7s)
[region early]
process = p0
pages = 8
fill = same
value = 7

[region late]
process = p1
pages = 8
fill = same
value = 7
merge = none

# before the first scan, every page of early and late is made different
[event split-early]
at = after-scan:0
action = write
region = early
offset = 0
value = fresh

[event split-late]
at = after-scan:0
action = write
region = late
offset = 0
value = fresh

[event late-mergeable]
at = after-scan:3
action = merge
region = late

[event join0-early]
at = after-scan:4
action = write
region = early
pages = 0
offset = 0
value = 101

[event join0-late]
at = after-scan:4
action = write
region = late
pages = 0
offset = 0
value = 101

[event join1-early]
at = after-scan:6
action = write
region = early
pages = 1
offset = 0
value = 102

[event join1-late]
at = after-scan:6
action = write
region = late
pages = 1
offset = 0
value = 102

[event join2-early]
at = after-scan:10
action = write
region = early
pages = 2
offset = 0
value = 103

[event join2-late]
at = after-scan:10
action = write
region = late
pages = 2
offset = 0
value = 103

[event join3-early]
at = after-scan:14
action = write
region = early
pages = 3
offset = 0
value = 104

[event join3-late]
at = after-scan:14
action = write
region = late
pages = 3
offset = 0
value = 104

[event join4-early]
at = after-scan:19
action = write
region = early
pages = 4
offset = 0
value = 105

[event join4-late]
at = after-scan:19
action = write
region = late
pages = 4
offset = 0
value = 105

[event join5-early]
at = after-scan:25
action = write
region = early
pages = 5
offset = 0
value = 106

[event join5-late]
at = after-scan:25
action = write
region = late
pages = 5
offset = 0
value = 106

[event join6-early]
at = after-scan:32
action = write
region = early
pages = 6
offset = 0
value = 107

[event join6-late]
at = after-scan:32
action = write
region = late
pages = 6
offset = 0
value = 107

[event join7-early]
at = after-scan:40
action = write
region = early
pages = 7
offset = 0
value = 108

[event join7-late]
at = after-scan:40
action = write
region = late
pages = 7
offset = 0
value = 108
