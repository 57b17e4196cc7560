# ksm_functional_tests test_prot_none: 2 MiB of identical pages (0x11) are
# mprotect()ed PROT_NONE before KSM sees them, and merge all the same. Then a
# distinct value is written into each page of the first half through
# /proc/self/mem (FOLL_FORCE breaks COW there), MADV_UNMERGEABLE unmerges the
# second half, and no two pages may map the same frame.
#
# Needs reaches_prot_none (6.2): on Debian's 6.1 KSM's follow_page() does not
# reach PROT_NONE pages, unmerging leaves them merged, and the expectation
# does not apply there (upstream's test fails there).

[global]
description = test_prot_none: PROT_NONE pages merge, and unmerge by forced write and MADV_UNMERGEABLE
upstream = ksm_functional_tests test_prot_none
requires = reaches_prot_none
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10

[region map]
size = 2m
fill = same
value = 0x1111111111111111

[event none]
at = after-scan:0
action = protect
region = map
prot = none

[event ptrace-write]       # write(mem_fd, &i, sizeof(i)) at each page of the first half
at = after-scan:2
action = write
region = map
pages = 0-255
value = fresh

[event unmerge-half]
at = after-scan:2
action = unmerge
region = map
pages = 256-511

[expect merged]
at = after-scan:2
main.ksm_merging_pages >= 1

[expect unmerged]
at = end
region = map
duplicates = none
