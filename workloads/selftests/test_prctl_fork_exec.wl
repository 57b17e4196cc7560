# ksm_functional_tests test_prctl_fork_exec: after PR_SET_MEMORY_MERGE 1 a
# fork child execs (the test program again); in the new image the flag must
# still be set and new memory must merge through it alone. Here the child
# execs right after the fork: its regions are set up anew in the new image,
# mergeable only through the surviving flag, and must merge. The flag is
# read in ksm_stat (ksm_merge_any, 6.14; not checked on 6.12).
#
# Needs exec_keeps_merge_any (ksm_execve, 6.9); 6.1 has no
# PR_SET_MEMORY_MERGE at all: skipped there.

[global]
description = test_prctl_fork_exec: PR_SET_MEMORY_MERGE survives fork and exec, new memory merges
upstream = ksm_functional_tests test_prctl_fork_exec
requires = prctl_merge,exec_keeps_merge_any
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10

[region map]
size = 2m
fill = same
value = 0x4f4f4f4f4f4f4f4f
merge = prctl

[event fork]
at = after-scan:0
action = fork
process = main
child = child

[event child-execs]
at = after-scan:0
action = exec
process = child

[expect inherited]
at = after-scan:2
child.ksm_merge_any = 1
child.ksm_merging_pages >= 1
