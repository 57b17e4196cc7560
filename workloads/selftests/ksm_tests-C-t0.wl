# ksm_tests -C (ksm_cow_time): the time to write one byte ('-') into
# every other page of 4000 pages, first never merged, then merged, in MiB/s
# of the pages written. The upstream program first makes 2000 distinct pairs
# of pages; this workload keeps one content for all 4000 (a workload line
# cannot list 2000 groups), so max_page_sharing = 256 builds a chain of 16
# dups: each written page still breaks COW on a KSM page mapped by others,
# which is what -C times. The write stores 0x2a2a2a2a2a2a2a2d at offset 0:
# only byte 0 changes. The never-merged baseline is written at setup by the
# backend's cow measurement, before the pages are mergeable.
# Its only assertion is that every write succeeds; ksmkit adds the merge the
# writes break (after scan 2) and that the written pages merge again with
# each other (after scan 4). The figure is informational, never a pass or a
# fail: `ksmkit selftest` prints it for this kernel's run, beside ksm_tests'
# own when ksm_tests is on PATH.
#
# Expected on a 6.18 kernel (4000 = 15*256 + 160):
#   after scan 2: pages_shared 16, pages_sharing 3984, stable_node_chains 1,
#                 stable_node_dups 16, pages_volatile 0
#   the writes change no counter; vmstat cow_ksm rises by 2000
#   after scan 3: the 2000 written pages leave their dups (each dup keeps
#                 half its pages) and are volatile (new checksum):
#                 pages_shared 16, pages_sharing 1984, pages_volatile 2000
#   after scan 4: the written pages, all equal to each other, merge
#                 (2000 = 7*256 + 208): pages_shared 24, pages_sharing 3976,
#                 pages_volatile 0, stable_node_chains 2, stable_node_dups 24

[global]
description = ksm_tests -C: COW-break every other page of a merged region (madvise), then re-merge
upstream = ksm_tests -C -t 0
scans = 4
pages_to_scan = 5000
sleep_millisecs = 10

[region buf]
pages = 4000
fill = same
value = 0x2a2a2a2a2a2a2a2a
merge = madvise

[event cow]
at = after-scan:2
action = write
region = buf
pages = every:2
offset = 0
value = 0x2a2a2a2a2a2a2a2d   # byte 0 becomes '-'

[expect merged]
at = after-scan:2
pages_shared = 16
pages_sharing = 3984

[expect remerged]
at = end
pages_shared = 24
pages_sharing = 3976
