# A child forked before any merge: COW-shared pages, then merges of both.
[global]
description = fork before merging, then writes in the child
scans = 6
pages_to_scan = 5000
sleep_millisecs = 10

[region a]
pages = 100
fill = groups
groups = 50x1,50x2

[event f]
at = after-scan:0
action = fork
process = main
child = kid

[event w]
at = after-scan:3
action = write
region = a
process = kid
pages = 0-9
value = 2
