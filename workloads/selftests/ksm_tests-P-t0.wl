# ksm_tests -P -s 100 (ksm_merge_time): 100 MiB of '*' pages,
# timed from MADV_MERGEABLE until two full scans are done, in MiB/s. Its
# only assertion is that the two scans finish within -l (120 s): timeout =
# 120s. ksmkit adds what the two scans must have done (the worked example of
# KSM-SEMANTICS.md section 4: 25600 identical pages, max_page_sharing 256,
# 100 dups): after scan 2 pages_shared 100, pages_sharing 25500.
# The figure is informational, never a pass or a fail: `ksmkit selftest`
# prints it for this kernel's run, beside ksm_tests' own when ksm_tests is on
# PATH. ksm_tests runs with pages_to_scan = -p (10) and sleep_millisecs 0;
# here one batch covers a full scan and ksmd sleeps 10 ms between scans,
# which the lockstep runner needs: the same measurement under other knobs.

[global]
description = ksm_tests -P: merge speed of 100 MiB of identical pages (madvise)
upstream = ksm_tests -P -s 100 -t 0
scans = 2
timeout = 120s
pages_to_scan = 30000
sleep_millisecs = 10

[region buf]
size = 100m
fill = same
value = 0x2a2a2a2a2a2a2a2a
merge = madvise

[expect merged]
at = end
pages_shared = 100
pages_sharing = 25500
