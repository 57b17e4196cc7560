# The seed experiment from Nai Xia's 2011 dirty-bit proposal (LKML, June
# 2011): memset a large area to 1, then write random bytes near the end of
# every page, forever. Every page keeps changing, so nothing should merge; the
# question is how much work ksmd spends discovering that (checksumming 4 KiB
# per visit with the checksum detector, one PTE test with the dirty bit).
#
# Default size 256 MiB (65536 pages). For the original 2000 MiB, edit the
# region: size = 2000m (a real kernel needs that much free memory).
#
# Not deterministic (continuous writer, stop by time). Expected on a 6.18
# kernel: after the first full scan pages_volatile stays close to the page
# count, pages_shared and pages_sharing stay close to 0 (a page merges only if
# no write hits it for two consecutive visits and another page equals it,
# which the fresh values rule out once every page has been written once).
# Compare detector = checksum with detector = dirty / hybrid in the simulator:
# the counters should agree while the scan cost differs.

[global]
description = Nai Xia 2011: memset 1, then random writes near the end of every page, forever
time = 30s
pages_to_scan = 1000
sleep_millisecs = 20

[region area]
size = 256m   # 2000m for the original experiment
fill = same
value = 0x0101010101010101   # memset(area, 1, size)

[writer scribble]
region = area
pages = all
offset = random:4000-4088
value = fresh
when = continuous
rate = 200000/s
