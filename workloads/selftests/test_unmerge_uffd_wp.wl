# ksm_functional_tests test_unmerge_uffd_wp: 2 MiB of identical pages are
# merged, registered with userfaultfd in write-protect mode and
# write-protected (UFFDIO_WRITEPROTECT), then MADV_UNMERGEABLE must unmerge
# them all the same: no two pages may map the same frame. A kernel without
# UFFD_FEATURE_PAGEFAULT_FLAG_WP skips the run, as upstream skips.
#
# Needs unshares_uffd_wp (6.2: unmerging breaks COW with FAULT_FLAG_UNSHARE,
# which uffd-wp lets through): on Debian's 6.1 the pages stay merged, so
# there the expectation does not apply (upstream's test fails there).

[global]
description = test_unmerge_uffd_wp: uffd-wp protected merged pages still unmerge
upstream = ksm_functional_tests test_unmerge_uffd_wp
requires = unshares_uffd_wp
scans = 3
pages_to_scan = 5000
sleep_millisecs = 10

[region map]
size = 2m
fill = same
value = 0x4f4f4f4f4f4f4f4f

[event wp]
at = after-scan:2
action = uffd-wp
region = map

[event unmerge]
at = after-scan:2
action = unmerge
region = map

[expect merged]
at = after-scan:2
main.ksm_merging_pages >= 1

[expect unmerged]
at = end
region = map
duplicates = none
