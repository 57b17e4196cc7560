/*
 * kb_pagemap.c - page-level captures: which physical page backs each region
 * page, and which pages were written since the last look.
 *
 * /proc/PID/pagemap gives one 64-bit entry per virtual page: bit 63
 * present, bit 55 soft-dirty, bits 0-54 the page frame number (shown only to
 * root, 0 otherwise). /proc/kpageflags, indexed by frame, says whether the
 * frame is a KSM page (KPF_KSM), the zero page (KPF_ZERO_PAGE, where
 * use_zero_pages merged a page) or part of a THP. Pages that share a frame
 * are merged: that partition is what the simulator's must equal. The same
 * two files tell which 2 MiB ranges of a region are huge pages.
 *
 * Soft-dirty: writing "4" to /proc/PID/clear_refs clears the soft-dirty bits
 * of the process and write-protects its pages, so the next write to each
 * sets the bit again. Read at every scan end, then cleared, the bits are the
 * pages a PTE dirty-bit detector would have seen written during that scan
 * interval. This perturbs (every first write takes a fault), so it is only
 * done when asked for.
 */
#include "config.h"
#include "kb_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PM_PRESENT (UINT64_C(1) << 63)
#define PM_SOFT_DIRTY (UINT64_C(1) << 55)
#define PM_PFN_MASK ((UINT64_C(1) << 55) - 1)
#define KPF_COMPOUND_HEAD 15
#define KPF_COMPOUND_TAIL 16
#define KPF_THP 22
#define KPF_KSM 21
#define KPF_ZERO_PAGE 24
#define CHUNK_PAGES 4096

int kb_capture_open(struct kb_capture *c, char *msg, size_t len)
{
	memset(c, 0, sizeof *c);
	c->kpageflags_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (c->kpageflags_fd < 0)
		return kb_fail(msg, len, "cannot open /proc/kpageflags: %s", strerror(errno));
	return 0;
}

void kb_capture_free(struct kb_capture *c)
{
	if (c->kpageflags_fd >= 0)
		close(c->kpageflags_fd);
	free(c->pages);
	free(c->dirty);
	memset(c, 0, sizeof *c);
	c->kpageflags_fd = -1;
}

/* @array with room for one more item after its @n, or NULL (then @array
 * is still valid and unchanged). */
static void *room_for_one(void *array, size_t *cap, size_t n, size_t size)
{
	size_t new_cap;
	void *p;

	if (n < *cap)
		return array;
	new_cap = *cap ? *cap * 2 : 1024;
	p = realloc(array, new_cap * size);
	if (p)
		*cap = new_cap;
	return p;
}

static uint32_t frame_flags(const struct kb_capture *c, uint64_t pfn)
{
	uint64_t kf = 0;
	uint32_t flags = TRACE_PAGE_PRESENT;

	if (pread(c->kpageflags_fd, &kf, sizeof kf, (off_t)(pfn * sizeof kf)) != sizeof kf)
		return flags;
	if (kf & (UINT64_C(1) << KPF_KSM))
		flags |= TRACE_PAGE_KSM;
	if (kf & (UINT64_C(1) << KPF_ZERO_PAGE))
		flags |= TRACE_PAGE_ZERO;
	if (kf & (UINT64_C(1) << KPF_THP))
		flags |= TRACE_PAGE_THP;
	return flags;
}

static int open_pagemap(pid_t pid, char *msg, size_t len)
{
	char path[64];
	int fd;

	snprintf(path, sizeof path, "/proc/%d/pagemap", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		kb_fail(msg, len, "cannot open %s: %s", path, strerror(errno));
	return fd;
}

/* Entries of @n pages from @addr into @out. 0 or -1. */
static int read_entries(int fd, uint64_t addr, uint64_t n, uint64_t *out)
{
	size_t bytes = (size_t)n * sizeof *out;
	off_t at = (off_t)(addr / KB_PAGE_SIZE * sizeof *out);
	size_t got = 0;

	while (got < bytes) {
		ssize_t r = pread(fd, (char *)out + got, bytes - got, at + (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* What to do with each page's entry, over every region of every live process. */
typedef int (*entry_fn)(struct kb_capture *c, uint64_t scan, size_t proc, size_t region,
			uint64_t page, uint64_t entry);

static int for_each_entry(struct kb_capture *c, const struct kb_procs *ps, size_t proc,
			  size_t region, uint64_t scan, entry_fn fn, char *msg, size_t len)
{
	uint64_t entries[CHUNK_PAGES];
	uint64_t addr = kb_region_addr(ps, region), pages = ps->wl->regions[region].pages;
	int fd = open_pagemap(ps->proc[proc].pid, msg, len);

	if (fd < 0)
		return -1;
	for (uint64_t first = 0; first < pages; first += CHUNK_PAGES) {
		uint64_t n = pages - first < CHUNK_PAGES ? pages - first : CHUNK_PAGES;

		if (read_entries(fd, addr + first * KB_PAGE_SIZE, n, entries) != 0) {
			close(fd);
			return kb_fail(msg, len, "cannot read the pagemap of pid %d: %s",
				       (int)ps->proc[proc].pid, strerror(errno));
		}
		for (uint64_t i = 0; i < n; i++)
			if (fn(c, scan, proc, region, first + i, entries[i]) != 0) {
				close(fd);
				return kb_fail(msg, len, "out of memory for page captures");
			}
	}
	close(fd);
	return 0;
}

static int for_each_page(struct kb_capture *c, const struct kb_procs *ps, uint64_t scan,
			 entry_fn fn, char *msg, size_t len)
{
	for (size_t p = 0; p < ps->wl->nprocs; p++) {
		if (!ps->proc[p].alive)
			continue;
		for (size_t r = 0; r < ps->wl->nregions; r++)
			if (kb_proc_has_region(ps->wl, p, r) &&
			    for_each_entry(c, ps, p, r, scan, fn, msg, len) != 0)
				return -1;
	}
	return 0;
}

static int add_page(struct kb_capture *c, uint64_t scan, size_t proc, size_t region,
		    uint64_t page, uint64_t entry)
{
	struct trace_page *pages = room_for_one(c->pages, &c->pages_cap, c->npages, sizeof *pages);
	struct trace_page *kp;

	if (!pages)
		return -1;
	c->pages = pages;
	kp = &pages[c->npages++];
	kp->scan = scan;
	kp->proc = (uint32_t)proc;
	kp->region = (uint32_t)region;
	kp->page = page;
	kp->frame = (entry & PM_PRESENT) ? entry & PM_PFN_MASK : 0;
	kp->flags = (entry & PM_PRESENT) ? frame_flags(c, kp->frame) : 0;
	return 0;
}

static int add_dirty(struct kb_capture *c, uint64_t scan, size_t proc, size_t region,
		     uint64_t page, uint64_t entry)
{
	struct kb_dirty_page *dirty, *d;

	if (!(entry & PM_SOFT_DIRTY))
		return 0;
	dirty = room_for_one(c->dirty, &c->dirty_cap, c->ndirty, sizeof *dirty);
	if (!dirty)
		return -1;
	c->dirty = dirty;
	d = &dirty[c->ndirty++];
	d->scan = scan;
	d->proc = (uint32_t)proc;
	d->region = (uint32_t)region;
	d->page = page;
	return 0;
}

int kb_capture_partition(struct kb_capture *c, const struct kb_procs *ps, uint64_t scan,
			 char *msg, size_t len)
{
	return for_each_page(c, ps, scan, add_page, msg, len);
}

int kb_capture_soft_dirty(struct kb_capture *c, const struct kb_procs *ps, uint64_t scan,
			  bool record, char *msg, size_t len)
{
	if (record && for_each_page(c, ps, scan, add_dirty, msg, len) != 0)
		return -1;
	for (size_t p = 0; p < ps->wl->nprocs; p++) {
		char path[64];
		int err;

		if (!ps->proc[p].alive)
			continue;
		snprintf(path, sizeof path, "/proc/%d/clear_refs", (int)ps->proc[p].pid);
		err = kb_write_file(path, "4");
		if (err)
			return kb_fail(msg, len, "cannot clear soft-dirty bits (%s): %s", path,
				       strerror(err));
	}
	return 0;
}

#define RANGE_PAGES (KB_HUGE_SIZE / KB_PAGE_SIZE)

/*
 * Whether the pagemap entries @entry of a 2 MiB range show one huge page:
 * 512 consecutive frames from a 2 MiB aligned one, which /proc/kpageflags
 * shows as the head and the tails of one THP. Frames that merely follow
 * each other (small pages, or the 64 KiB folios of a kernel with mTHP)
 * have heads of their own, or none.
 */
static bool range_is_huge(const struct kb_capture *c, const uint64_t *entry)
{
	const uint64_t head = UINT64_C(1) << KPF_COMPOUND_HEAD, tail = UINT64_C(1) << KPF_COMPOUND_TAIL;
	uint64_t kf[RANGE_PAGES], pfn = entry[0] & PM_PFN_MASK;

	if (!(entry[0] & PM_PRESENT) || pfn % RANGE_PAGES != 0 ||
	    pread(c->kpageflags_fd, kf, sizeof kf, (off_t)(pfn * sizeof kf[0])) != (ssize_t)sizeof kf)
		return false;
	for (uint64_t i = 0; i < RANGE_PAGES; i++)
		if (!(entry[i] & PM_PRESENT) || (entry[i] & PM_PFN_MASK) != pfn + i ||
		    !(kf[i] & (UINT64_C(1) << KPF_THP)) || !(kf[i] & (i == 0 ? head : tail)))
			return false;
	return true;
}

static bool range_has_page(const uint64_t *entry)
{
	for (uint64_t i = 0; i < RANGE_PAGES; i++)
		if (entry[i] & PM_PRESENT)
			return true;
	return false;
}

int kb_huge_census(struct kb_capture *c, const struct kb_procs *ps, size_t proc, size_t region,
		   struct kb_huge_census *out, char *msg, size_t len)
{
	uint64_t addr = kb_region_addr(ps, region), pages = ps->wl->regions[region].pages;
	uint64_t entry[RANGE_PAGES];
	int fd = open_pagemap(ps->proc[proc].pid, msg, len);

	memset(out, 0, sizeof *out);
	out->first_small = UINT64_MAX;
	if (fd < 0)
		return -1;
	/* Regions start 2 MiB aligned; a partial last range cannot be huge. */
	for (uint64_t first = 0; first + RANGE_PAGES <= pages; first += RANGE_PAGES) {
		if (read_entries(fd, addr + first * KB_PAGE_SIZE, RANGE_PAGES, entry) != 0) {
			close(fd);
			return kb_fail(msg, len, "cannot read the pagemap of pid %d: %s",
				       (int)ps->proc[proc].pid, strerror(errno));
		}
		out->ranges++;
		if (range_is_huge(c, entry)) {
			out->huge++;
			out->populated++;
		} else if (range_has_page(entry)) {
			out->populated++;
			if (out->first_small == UINT64_MAX)
				out->first_small = first;
		}
	}
	close(fd);
	return 0;
}
