# smart_scan on ps_scanned 02651.

[global]
description =#sts are skipped
scans = 12
pages_to_scan = 5000
sleep_millisecs = 10
smart_scan = 1

[region distinct]
pages = 2000
fill = unique
