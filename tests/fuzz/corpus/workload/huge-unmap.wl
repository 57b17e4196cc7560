[global]
description = 2
scans = 4
pages_to_scan = 5000
sleep_millisecs = 10

[region buf]
pages = 366666699
fill = same
value = 0x6666666666666666

[event hole]
at = after-scan:3
action = unmap
region = buf
#pages = 15-149
