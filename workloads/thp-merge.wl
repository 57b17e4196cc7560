# A THP region of identical pages: subpages are scanned one by one; a merge
# splits the THP first.
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
