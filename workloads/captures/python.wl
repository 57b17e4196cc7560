# A python3 process (python-phases.py: four identical 256 KiB buffers, a
# zeroed one, and one it rewrites every 250 ms) captured with
# `ksmkit capture --bytes --every 400ms --count 5 -p PID`: its heap, its
# interpreter's arenas and those buffers, 2093 pages of which 1737 present.
# Each snapshot rewrites 20 to 40 pages, so the replay has volatile pages
# every scan; merge = prctl makes the whole process mergeable, as
# PR_SET_MEMORY_MERGE (systemd's MemoryKSM=) would for the real one.
[global]
description = a python3 process replayed from 5 snapshots, one a scan
scans = 6
pages_to_scan = 5000
sleep_millisecs = 10

[region heap]
fill = capture
capture = python.cap
merge = prctl
