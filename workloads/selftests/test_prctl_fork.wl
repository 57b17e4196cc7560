# ksm_functional_tests test_prctl_fork: after PR_SET_MEMORY_MERGE 1 a fork
# child must have the flag too (PR_GET_MEMORY_MERGE == 1 in the child), and
# merging must really happen in the child. Upstream's child maps new memory;
# a ksmkit fork child has copies of its parent's regions, so the child
# rewrites its copy (value 0x2b... in every page: new frames, all equal)
# and those pages must merge. The flag is read in the child's ksm_stat
# (ksm_merge_any, 6.14); on 6.12 only the merging is checked, and that the
# child's copy merges would follow from its VM_MERGEABLE mapping alone. 6.1
# has no PR_SET_MEMORY_MERGE: skipped there.

[global]
description = test_prctl_fork: a fork child inherits PR_SET_MEMORY_MERGE and merges
upstream = ksm_functional_tests test_prctl_fork
requires = prctl_merge
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

[event child-fills]
at = after-scan:0
action = write
region = map
process = child
value = 0x2b2b2b2b2b2b2b2b

[expect inherited]         # test_child_ksm: PR_GET_MEMORY_MERGE == 1, then "Merge in child"
at = after-scan:2
child.ksm_merge_any = 1
child.ksm_merging_pages >= 1
