/*
 * sim_user.c - what user processes do to the simulated machine: faults and
 * writes (with copy-on-write exactly where the kernel copies), madvise
 * (MERGEABLE, UNMERGEABLE, DONTNEED), mprotect, userfaultfd write-protection,
 * prctl, munmap, fork, exec and exit.
 *
 * None of these touches a KSM counter except ksm_zero_pages, which the kernel
 * updates at once when a KSM-placed zero page is replaced or zapped; every
 * other count waits for ksmd (the laziness that KSM-SEMANTICS.md section 4
 * describes). Registration (mm_slot placement) is delegated to sim_scan.c.
 */
#include "sim_internal.h"

#include <assert.h>
#include <errno.h>
#include <string.h>

static struct sim_area *area_at(struct sim *s, int area)
{
	assert(area >= 0 && (uint32_t)area < s->narea);
	return &s->area[area];
}

/* Drop what the PTE maps: a frame reference, or a KSM zero page (counted). */
void sim_zap_pte(struct sim *s, uint32_t mm, uint32_t slot)
{
	struct sim_page *p = &s->page[slot];

	if (p->pte & PTE_KSM_ZERO) {
		s->count.ksm_zero_pages--;
		s->mm[mm].zero_pages--;
	} else if (p->pte & PTE_PRESENT) {
		sim_frame_put(s, p->frame);
	}
	p->frame = 0;
	p->pte &= (uint8_t)~(PTE_PRESENT | PTE_WRITE | PTE_DIRTY | PTE_KSM_ZERO);
}

/*
 * A write fault on a page that is not present: a zeroed page, or with THP the
 * whole 2 MiB folio around it when that folio lies inside the mapping and none
 * of it is present yet (what a huge-page fault would allocate).
 */
static int fault_in(struct sim *s, struct sim_area *a, uint64_t page)
{
	uint64_t first = page / SIM_THP_PAGES * SIM_THP_PAGES;
	uint32_t frame;

	a->anon_vma = true;
	if (a->thp && (a->start % SIM_THP_PAGES) == 0 && first + SIM_THP_PAGES <= a->npages) {
		bool empty = true;

		for (uint64_t p = first; p < first + SIM_THP_PAGES && empty; p++)
			empty = !(s->page[a->slot + p].pte & (PTE_PRESENT | PTE_KSM_ZERO)) &&
				(s->page[a->slot + p].pte & PTE_MAPPED);
		if (empty) {
			if (sim_frames_alloc_thp(s, a->node, &frame) != 0)
				return ENOMEM;
			for (uint64_t p = 0; p < SIM_THP_PAGES; p++) {
				struct sim_page *pte = &s->page[a->slot + first + p];

				pte->frame = frame + (uint32_t)p;
				pte->pte |= PTE_PRESENT | PTE_WRITE | PTE_DIRTY | PTE_SOFT_DIRTY;
			}
			return 0;
		}
	}
	frame = sim_frame_alloc(s, 0, a->node);
	if (!frame)
		return ENOMEM;
	s->page[a->slot + page].frame = frame;
	s->page[a->slot + page].pte |= PTE_PRESENT | PTE_WRITE | PTE_DIRTY | PTE_SOFT_DIRTY;
	return 0;
}

/* Give the PTE a private copy of what it maps (COW), writable or not. */
static int copy_page(struct sim *s, struct sim_area *a, uint32_t slot, bool writable)
{
	struct sim_page *p = &s->page[slot];
	uint64_t content = (p->pte & PTE_KSM_ZERO) ? 0 : s->frame[p->frame].content;
	uint32_t frame = sim_frame_alloc(s, content, a->node);

	if (!frame)
		return ENOMEM;
	sim_zap_pte(s, a->mm, slot);
	p->frame = frame;
	p->pte |= PTE_PRESENT;
	if (writable)
		p->pte |= PTE_WRITE | PTE_DIRTY | PTE_SOFT_DIRTY;
	return 0;
}

/*
 * A write that needed no fault: the MMU sets the dirty bit, of the PTE, or of
 * the PMD for a PMD-mapped THP (one bit for all 512 subpages). Writes through
 * a secondary MMU without dirty tracking (dirty_tracking = no) set nothing.
 */
static void mark_written(struct sim *s, struct sim_area *a, uint64_t page)
{
	struct sim_page *p = &s->page[a->slot + page];
	uint32_t frame = p->frame;

	if (!a->dirty_tracking)
		return;
	if (!(s->frame[frame].flags & FRAME_LARGE)) {
		p->pte |= PTE_DIRTY | PTE_SOFT_DIRTY;
		return;
	}
	/* the folio's bits are set and cleared all at once (fault_in,
	 * clean_folio in volatility_dirty.c): set here, set on every subpage */
	if ((p->pte & (PTE_DIRTY | PTE_SOFT_DIRTY)) == (PTE_DIRTY | PTE_SOFT_DIRTY))
		return;
	/* the folio's subpages around this one, as this area maps them */
	for (uint32_t i = 0; i < SIM_THP_PAGES; i++) {
		uint64_t q = page - (frame % SIM_THP_PAGES) + i;

		if (q < a->npages && s->page[a->slot + q].frame / SIM_THP_PAGES == frame / SIM_THP_PAGES)
			s->page[a->slot + q].pte |= PTE_DIRTY | PTE_SOFT_DIRTY;
	}
}

/*
 * Make the page writable by this process alone, as a write fault does: fault
 * it in, copy a KSM page, a KSM zero page or a page shared after fork, or
 * reuse an exclusive read-only page; a fault leaves the PTE dirty. A page
 * already writable is written in place (mark_written).
 */
static int make_private_writable(struct sim *s, struct sim_area *a, uint64_t page)
{
	uint32_t slot = a->slot + (uint32_t)page;
	struct sim_page *p = &s->page[slot];
	int err = 0;

	if (!(p->pte & PTE_MAPPED))
		return EFAULT;
	if (a->uffd_wp)
		return EDEADLK; /* the fault would wait for a handler nobody runs */
	if (p->pte & PTE_WRITE) {
		mark_written(s, a, page);
		return 0;
	}
	if (!(p->pte & PTE_PRESENT))
		err = fault_in(s, a, page);
	else if (p->pte & PTE_KSM_ZERO)
		err = copy_page(s, a, slot, true);
	else if (s->cfg.mutant == SIM_MUTANT_COW_REUSES_KSM && s->frame[p->frame].mapcount == 1)
		p->pte |= PTE_WRITE; /* mutant: a KSM page mapped once is reused */
	else if ((s->frame[p->frame].flags & FRAME_KSM) || s->frame[p->frame].mapcount > 1)
		err = copy_page(s, a, slot, true); /* a KSM page is never reused */
	else
		p->pte |= PTE_WRITE;
	if (!err)
		p->pte |= PTE_DIRTY | PTE_SOFT_DIRTY;
	if (a->prot != WL_PROT_RW)
		p->pte &= (uint8_t)~PTE_WRITE; /* FOLL_FORCE: maybe_mkwrite() leaves it so */
	return err;
}

/* Replace the frame's content with @token (already computed). */
static void set_content(struct sim *s, uint32_t frame, uint64_t token)
{
	struct sim_frame *f = &s->frame[frame];

	if (f->content == token)
		return;
	sim_content_ref(&s->content, token);
	sim_content_unref(&s->content, f->content);
	f->content = token;
	f->flags &= (uint8_t)~FRAME_CSUM_VALID;
}

int sim_fill(struct sim *s, int area, uint64_t page, uint64_t value)
{
	struct sim_area *a = area_at(s, area);
	int err;

	if (page >= a->npages)
		return EFAULT;
	sim_memo_written(s, a->slot + (uint32_t)page);
	err = make_private_writable(s, a, page);
	if (err)
		return err;
	set_content(s, s->page[a->slot + page].frame, value);
	return 0;
}

void sim_prefetch_writes(const struct sim *s, int area, uint64_t page, int64_t step)
{
	/*
	 * Writes ahead per stage: with a write in place (sim_content.c) taking a
	 * few loads, Nai Xia's writer outran 16/8/4/2 (47674c1). The deferred
	 * writer's settles need none: they follow ksmd's visits in page order,
	 * which the hardware streams (d7139ae).
	 */
	static const unsigned ahead[] = { 64, 48, 32, 16 };
	const struct sim_area *a;

	if (area < 0 || (uint32_t)area >= s->narea)
		return;
	a = &s->area[area];
	for (unsigned stage = 0; stage < sizeof(ahead) / sizeof(ahead[0]); stage++) {
		uint64_t p = page + (uint64_t)(step * ahead[stage]);

		if (p < a->npages)
			sim_prefetch_slot(s, a->slot + (uint32_t)p, stage);
	}
}

/* The bytes of a writable page's frame after a write that makes a new content. */
static int write_new_content(struct sim *s, uint32_t frame, uint32_t offset, uint64_t value)
{
	uint64_t token = sim_content_after_write(&s->content, s->frame[frame].content, offset,
						 value);

	if (token == UINT64_MAX)
		return ENOMEM;
	set_content(s, frame, token);
	return 0;
}

/* The bytes of a writable page's frame after one write. */
static int write_content(struct sim *s, uint32_t frame, uint32_t offset, uint64_t value)
{
	if (sim_content_write_in_place(&s->content, s->frame[frame].content, offset, value)) {
		s->frame[frame].flags &= (uint8_t)~FRAME_CSUM_VALID;
		return 0;
	}
	return write_new_content(s, frame, offset, value);
}

int sim_write(struct sim *s, int area, uint64_t page, uint32_t offset, uint64_t value)
{
	struct sim_area *a = area_at(s, area);
	int err;

	if (page >= a->npages || offset > CONTENT_MAX_OFFSET)
		return EFAULT;
	sim_memo_written(s, a->slot + (uint32_t)page);
	err = make_private_writable(s, a, page);
	if (err)
		return err;
	return write_content(s, s->page[a->slot + page].frame, offset, value);
}

/*
 * What sim_write() of each of @n writes in turn does: after the first, the
 * page is writable, and what the fault and the memo make of the others is
 * already done (the dirty bits set, the walk forgotten).
 */
int sim_write_many(struct sim *s, int area, uint64_t page, const struct sim_page_write *w,
		   size_t n)
{
	struct sim_area *a = area_at(s, area);
	uint32_t frame;
	int err;

	if (!n)
		return 0;
	if (page >= a->npages)
		return EFAULT;
	for (size_t i = 0; i < n; i++)
		if (w[i].offset > CONTENT_MAX_OFFSET)
			return EFAULT;
	sim_memo_written(s, a->slot + (uint32_t)page);
	err = make_private_writable(s, a, page);
	if (err)
		return err;
	frame = s->page[a->slot + page].frame;
	if (!(s->page[a->slot + page].pte & PTE_WRITE)) { /* FOLL_FORCE: each write faults */
		err = write_content(s, frame, w[0].offset, w[0].value);
		for (size_t i = 1; i < n && !err; i++)
			err = sim_write(s, area, page, w[i].offset, w[i].value);
		return err;
	}
	for (size_t i = 0; i < n && !err; i++) {
		size_t done = sim_content_write_many_in_place(&s->content, s->frame[frame].content,
							      w + i, n - i);

		if (done) {
			s->frame[frame].flags &= (uint8_t)~FRAME_CSUM_VALID;
			i += done;
			if (i == n)
				break;
		}
		err = write_new_content(s, frame, w[i].offset, w[i].value);
	}
	return err;
}

/*
 * break_ksm: an UNSHARE fault on a KSM page or KSM zero page gives the PTE a
 * private copy, mapped read-only and clean (unshare is not a write).
 */
void sim_unshare_page(struct sim *s, uint32_t slot)
{
	struct sim_page *p = &s->page[slot];
	uint32_t ai = sim_area_of_slot(s, slot);

	if (!(p->pte & PTE_PRESENT))
		return;
	if (!(p->pte & PTE_KSM_ZERO) && !(s->frame[p->frame].flags & FRAME_KSM))
		return;
	if ((p->pte & PTE_KSM_ZERO) && !sim_kernel_row(s)->unshares_zero_pages)
		return; /* before 6.6, break_ksm leaves zero pages mapped */
	if (s->frame[p->frame].flags & FRAME_LARGE && !(p->pte & PTE_KSM_ZERO))
		return; /* break_ksm only touches small folios */
	if (s->area[ai].uffd_wp && !sim_kernel_row(s)->unshares_uffd_wp)
		return; /* break_ksm's write fault stops at the uffd-wp PTE */
	if (s->area[ai].prot == WL_PROT_NONE && !sim_kernel_row(s)->reaches_prot_none)
		return; /* break_ksm's follow_page() finds no page there */
	sim_deferred_settle(s, slot);
	copy_page(s, &s->area[ai], slot, false);
	sim_deferred_protected(s, slot);
}

static void set_mergeable(struct sim *s, struct sim_area *a, uint64_t page, bool on)
{
	struct sim_page *p = &s->page[a->slot + page];
	bool was = p->pte & PTE_MERGEABLE;

	if (was == on)
		return;
	if (on) {
		p->pte |= PTE_MERGEABLE;
		s->mm[a->mm].mergeable_pages++;
	} else {
		p->pte &= (uint8_t)~PTE_MERGEABLE;
		s->mm[a->mm].mergeable_pages--;
	}
}

/* MADV_UNMERGEABLE on one page: unshare KSM pages, then clear the flag. */
static void unmerge_page(struct sim *s, struct sim_area *a, uint64_t page)
{
	if (!(s->page[a->slot + page].pte & PTE_MERGEABLE))
		return;
	if (a->anon_vma)
		sim_unshare_page(s, a->slot + (uint32_t)page);
	set_mergeable(s, a, page, false);
}

int sim_madvise(struct sim *s, int area, uint64_t first, uint64_t count, bool mergeable)
{
	struct sim_area *a = area_at(s, area);
	struct sim_mm *mm = &s->mm[a->mm];
	bool hole = false, any = false;

	sim_memo_break(s); /* the scan's order or its pages may change */
	if (mm->state != MM_ALIVE || first > a->npages || count > a->npages - first)
		return EINVAL;
	for (uint64_t p = first; p < first + count; p++) {
		if (!(s->page[a->slot + p].pte & PTE_MAPPED)) {
			hole = true;
			continue;
		}
		any = true;
		if (!mergeable) {
			unmerge_page(s, a, p);
			continue;
		}
		if (!(s->page[a->slot + p].pte & PTE_MERGEABLE) && !mm->registered)
			sim_slot_enter(s, a->mm);
		set_mergeable(s, a, p, true);
	}
	(void)any;
	return hole ? ENOMEM : 0; /* madvise applies to what is mapped, then says ENOMEM */
}

int sim_prctl_merge(struct sim *s, int mmid, bool on)
{
	struct sim_mm *mm = &s->mm[mmid];

	sim_memo_break(s); /* the scan's order or its pages may change */
	if (mm->state != MM_ALIVE || !wl_kernel_has_prctl_merge(s->cfg.kernel))
		return EINVAL;
	if (on == mm->merge_any)
		return 0;
	if (on && !mm->registered)
		sim_slot_enter(s, (uint32_t)mmid);
	for (uint32_t i = 0; i < s->narea; i++) {
		struct sim_area *a = &s->area[i];

		if (a->mm != (uint32_t)mmid || a->dead)
			continue;
		for (uint64_t p = 0; p < a->npages; p++) {
			if (!(s->page[a->slot + p].pte & PTE_MAPPED))
				continue;
			if (on)
				set_mergeable(s, a, p, true);
			else
				unmerge_page(s, a, p);
		}
	}
	mm->merge_any = on;
	return 0;
}

int sim_munmap(struct sim *s, int area, uint64_t first, uint64_t count)
{
	struct sim_area *a = area_at(s, area);

	sim_memo_break(s); /* the scan's order or its pages may change */
	if (s->mm[a->mm].state != MM_ALIVE || first > a->npages || count > a->npages - first)
		return EINVAL;
	for (uint64_t p = first; p < first + count; p++) {
		struct sim_page *pte = &s->page[a->slot + p];

		if (!(pte->pte & PTE_MAPPED))
			continue;
		set_mergeable(s, a, p, false);
		sim_zap_pte(s, a->mm, a->slot + (uint32_t)p);
		pte->pte = 0;
	}
	return 0;
}

/* Copy one area into the child: PTEs shared copy-on-write, items not copied. */
static int fork_area(struct sim *s, uint32_t parent_area, int child)
{
	struct sim_area pa = s->area[parent_area];
	int ca = sim_mmap(s, child, pa.npages, pa.node, pa.thp, pa.label);
	struct sim_area *c;

	if (ca < 0)
		return -ca;
	c = &s->area[ca];
	c->start = pa.start;
	c->anon_vma = pa.anon_vma;
	c->dirty_tracking = pa.dirty_tracking;
	c->prot = pa.prot; /* uffd_wp is not inherited: no EVENT_FORK */
	for (uint64_t p = 0; p < pa.npages; p++) {
		struct sim_page *from = &s->page[pa.slot + p], *to = &s->page[c->slot + p];

		if (!(from->pte & PTE_MAPPED)) {
			to->pte = 0;
			continue;
		}
		if ((from->pte & PTE_PRESENT) && !(from->pte & PTE_KSM_ZERO))
			s->frame[from->frame].mapcount++;
		from->pte &= (uint8_t)~PTE_WRITE; /* both sides copy on write */
		to->frame = from->frame; /* the PTE only: items are not copied */
		to->pte = from->pte;
	}
	return 0;
}

/*
 * Could forking @parent take a frame past what sim_frame.mapcount holds? A
 * frame gains at most the mappings it has (the parent's are among them),
 * and a KSM page made of it may still take max_page_sharing merges.
 */
static bool fork_overflows(const struct sim *s, int parent)
{
	uint64_t room = SIM_MAX_MAPCOUNT, mps = s->knobs.value[WL_KNOB_MAX_PAGE_SHARING];

	room = mps < room ? room - mps : 0;
	for (uint32_t i = 0; i < s->narea; i++) {
		const struct sim_area *a = &s->area[i];

		if (a->mm != (uint32_t)parent || a->dead)
			continue;
		for (uint64_t p = 0; p < a->npages; p++) {
			const struct sim_page *pg = &s->page[a->slot + p];

			if ((pg->pte & PTE_PRESENT) && !(pg->pte & PTE_KSM_ZERO) &&
			    2 * (uint64_t)s->frame[pg->frame].mapcount > room)
				return true;
		}
	}
	return false;
}

int sim_fork(struct sim *s, int parent)
{
	uint32_t narea = s->narea;
	int child;
	struct sim_mm *pm, *cm;

	sim_memo_break(s); /* the scan's order or its pages may change */
	if (s->mm[parent].state != MM_ALIVE)
		return -EINVAL;
	if (fork_overflows(s, parent))
		return -ENOMEM; /* a frame would be mapped more than SIM_MAX_MAPCOUNT times */
	child = sim_process_new(s);
	if (child < 0)
		return child;
	pm = &s->mm[parent];
	cm = &s->mm[child];
	cm->merge_any = pm->merge_any;
	for (uint32_t i = 0; i < narea; i++) {
		int err;

		if (s->area[i].mm != (uint32_t)parent || s->area[i].dead)
			continue;
		err = fork_area(s, i, child);
		if (err)
			return -err;
	}
	pm = &s->mm[parent];
	cm = &s->mm[child];
	cm->next_vpn = pm->next_vpn;
	cm->mergeable_pages = pm->mergeable_pages;
	/* before the fork counter fix, the child starts with the parent's counts */
	if (sim_kernel_row(s)->fork_copies_counts) {
		cm->rmap_items = pm->rmap_items;
		cm->merging_pages = pm->merging_pages;
	}
	/* the child keeps the copied zero-page markers, and they count */
	cm->zero_pages = pm->zero_pages;
	s->count.ksm_zero_pages += cm->zero_pages;
	if (pm->registered)
		sim_slot_enter(s, (uint32_t)child);
	return child;
}

int sim_exit(struct sim *s, int mmid)
{
	struct sim_mm *mm = &s->mm[mmid];

	sim_memo_break(s); /* the scan's order or its pages may change */
	if (mm->state != MM_ALIVE)
		return EINVAL;
	if (mm->registered)
		sim_slot_exit(s, (uint32_t)mmid);
	for (uint32_t i = 0; i < s->narea; i++) {
		struct sim_area *a = &s->area[i];

		if (a->mm != (uint32_t)mmid)
			continue;
		for (uint64_t p = 0; p < a->npages; p++) {
			sim_zap_pte(s, a->mm, a->slot + (uint32_t)p);
			s->page[a->slot + p].pte = 0;
		}
	}
	mm->state = MM_EXITED;
	mm->mergeable_pages = 0;
	return 0;
}

int sim_discard(struct sim *s, int area, uint64_t first, uint64_t count)
{
	struct sim_area *a = area_at(s, area);
	bool hole = false;

	sim_memo_break(s); /* the scan's order or its pages may change */
	if (s->mm[a->mm].state != MM_ALIVE || first > a->npages || count > a->npages - first)
		return EINVAL;
	for (uint64_t p = first; p < first + count; p++) {
		if (!(s->page[a->slot + p].pte & PTE_MAPPED)) {
			hole = true;
			continue;
		}
		/* the PTE is none; VM_MERGEABLE, the anon_vma and the item stay */
		sim_zap_pte(s, a->mm, a->slot + (uint32_t)p);
		s->page[a->slot + p].pte &= (uint8_t)~PTE_SOFT_DIRTY;
	}
	return hole ? ENOMEM : 0;
}

/* Clear the write bit of every PTE of @a (change_protection, or UFFDIO_WRITEPROTECT). */
static void write_protect_area(struct sim *s, struct sim_area *a)
{
	for (uint64_t p = 0; p < a->npages; p++)
		s->page[a->slot + p].pte &= (uint8_t)~PTE_WRITE;
}

int sim_mprotect(struct sim *s, int area, enum wl_prot prot)
{
	struct sim_area *a = area_at(s, area);

	sim_memo_break(s); /* the scan's order or its pages may change */
	if (s->mm[a->mm].state != MM_ALIVE)
		return EINVAL;
	a->prot = (uint8_t)prot;
	/* making it writable again sets no PTE writable: the next write faults and
	 * reuses an exclusive page, as a write after fork does */
	if (prot != WL_PROT_RW)
		write_protect_area(s, a);
	return 0;
}

int sim_uffd_wp(struct sim *s, int area)
{
	struct sim_area *a = area_at(s, area);

	sim_memo_break(s); /* the scan's order or its pages may change */
	if (s->mm[a->mm].state != MM_ALIVE)
		return EINVAL;
	a->uffd_wp = true;
	write_protect_area(s, a);
	return 0;
}

int sim_exec(struct sim *s, int mmid)
{
	bool keep;
	int fresh;

	sim_memo_break(s); /* the scan's order or its pages may change */
	if (s->mm[mmid].state != MM_ALIVE)
		return -EINVAL;
	keep = s->mm[mmid].merge_any && sim_kernel_row(s)->exec_keeps_merge_any;
	fresh = sim_process_new(s);
	if (fresh < 0)
		return fresh;
	/* ksm_execve registers the new mm before the old one is released */
	if (keep) {
		s->mm[fresh].merge_any = true;
		sim_slot_enter(s, (uint32_t)fresh);
	}
	sim_exit(s, mmid);
	return fresh;
}
