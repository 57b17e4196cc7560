# use_zero_pages = 1: zero pages map the kernel's zero page; writes COW them
# away (ksm_zero_pages drops at once); rewritten zeros merge again.
[global]
description = KSM zero pages, COW and re-merge
scans = 6
pages_to_scan = 5000
sleep_millisecs = 10
use_zero_pages = 1

[region z]
pages = 64
fill = zero

[event dirty]
at = after-scan:3
action = write
region = z
pages = 0-15
value = 5

[event clean]
at = after-scan:4
action = write
region = z
pages = 0-7
value = 0
