# ksm_tests -D -s 100 -t 1 (ksm_unmerge_time, prctl merge type): 100 MiB of '*' pages
# are merged, then unmerging all of them is timed, in MiB/s (the size is
# ours: run_vmtests.sh does not run -D, and -D needs -s; 100 as for -P).
# Here the unmerge is an unmerge event: on a prctl region that is PR_SET_MEMORY_MERGE 0,
# which unmerges every page of the process.
# Its only assertion is that every call succeeds; ksmkit adds that the pages
# were merged (pages_shared 100, pages_sharing 25500 after scan 2) and that
# nothing is merged afterwards.
# The figure is informational, never a pass or a fail: `ksmkit selftest`
# prints it for this kernel's run, beside ksm_tests' own when ksm_tests is on
# PATH. ksm_tests runs with pages_to_scan = -p (10) and sleep_millisecs 0;
# here one batch covers a full scan and ksmd sleeps 10 ms between scans,
# which the lockstep runner needs: the same measurement under other knobs.
# 6.1 has no PR_SET_MEMORY_MERGE: the kernel run is skipped there.

[global]
description = ksm_tests -D: unmerge speed of 100 MiB of merged pages (prctl)
upstream = ksm_tests -D -s 100 -t 1
requires = prctl_merge
scans = 3
timeout = 120s
pages_to_scan = 30000
sleep_millisecs = 10

[region buf]
size = 100m
fill = same
value = 0x2a2a2a2a2a2a2a2a
merge = prctl

[event unmerge]
at = after-scan:2
action = unmerge
region = buf

[expect merged]
at = after-scan:2
pages_shared = 100
pages_sharing = 25500

[expect unmerged]
at = end
pages_shared = 0
pages_sharing = 0
