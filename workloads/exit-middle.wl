# Three processes share content; the middle one exits after scan 2. Its items
# go when ksmd passes, and the KSM pages lose its mappings.
[global]
description = one of three sharing processes exits mid-run
scans = 5
pages_to_scan = 5000
sleep_millisecs = 10

[region a]
process = first
pages = 50
fill = same
value = 11

[region b]
process = second
pages = 50
fill = same
value = 11

[region c]
process = third
pages = 50
fill = groups
groups = 25x11,25x12

[event bye]
at = after-scan:2
action = exit
process = second
