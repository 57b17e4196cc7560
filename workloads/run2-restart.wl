# run = 2 in the middle: everything unmerges, full_scans resets, and knob
# stores that were EBUSY while pages were shared now succeed.
[global]
description = run = 2 mid-run, then knob changes and a fresh start
scans = 7
pages_to_scan = 5000
sleep_millisecs = 10

[region a]
pages = 300
fill = groups
groups = 100x1,100x2,100x3

[event busy]
at = after-scan:2
action = set
set = max_page_sharing=16
expect = EBUSY

[event stop]
at = after-scan:3
action = run
run = 2

[event fewer]
at = after-scan:3
action = set
set = max_page_sharing=16

[event go]
at = after-scan:3
action = run
run = 1
