# Two identical qemu TCG guests (Debian's 6.1 kernel and ksmkit's initramfs,
# 64 MiB of RAM each, idle at a shell) captured side by side with
# `ksmkit capture --bytes -p QEMU1,QEMU2` (3 snapshots, 3 s apart), then cut
# to 4 MiB of each guest's RAM (README). Both guests boot the same image, so
# most present pages of one have a twin in the other; 484 are zero pages,
# which use_zero_pages merges with the kernel's zero page; a few pages (the
# guests' clocks) change between snapshots. Each stream is one process here,
# as each guest was one qemu.
[global]
description = two idle qemu guests side by side, 4 MiB of each one's RAM, replayed from a capture
scans = 6
pages_to_scan = 5000
sleep_millisecs = 10
use_zero_pages = 1

[region vm1-ram]
process = vm1
fill = capture
capture = guests.cap
stream = 0
every = 2                # snapshot 1 after scan 2, snapshot 2 after scan 4

[region vm2-ram]
process = vm2
fill = capture
capture = guests.cap
stream = 1
every = 2
