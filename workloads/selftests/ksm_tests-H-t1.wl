# ksm_tests -H -s 100 -t 1 (ksm_merge_hugepages_time, prctl merge type): as -P, on
# 100 MiB backed by transparent huge pages (MADV_HUGEPAGE, 2 MiB aligned,
# each huge page faulted in whole), timed from PR_SET_MEMORY_MERGE until two
# full scans are done. Upstream skips without THP, and so does the backend.
# Its only assertion is that the scans finish within 120 s; ksmkit adds what
# the two scans must have done: KSM splits the huge pages and merges them as
# in -P, except that page 1 first meets page 0 inside the same huge page,
# which cannot be split while both are held, and that merge fails once
# (KSM-SEMANTICS.md section 9; thp-merge.wl): after scan 2 pages_shared 100,
# pages_sharing 25499, pages_volatile 1.
# The figure is informational, never a pass or a fail: `ksmkit selftest`
# prints it for this kernel's run, beside ksm_tests' own when ksm_tests is on
# PATH. ksm_tests runs with pages_to_scan = -p (10) and sleep_millisecs 0;
# here one batch covers a full scan and ksmd sleeps 10 ms between scans,
# which the lockstep runner needs: the same measurement under other knobs.
# 6.1 has no PR_SET_MEMORY_MERGE: the kernel run is skipped there.

[global]
description = ksm_tests -H: merge speed of 100 MiB of identical huge pages (prctl)
upstream = ksm_tests -H -s 100 -t 1
requires = prctl_merge
scans = 2
timeout = 120s
pages_to_scan = 30000
sleep_millisecs = 10

[region buf]
size = 100m
fill = same
value = 0x2a2a2a2a2a2a2a2a
thp = always
merge = prctl

[expect merged]
at = end
pages_shared = 100
pages_sharing = 25499
pages_volatile = 1
