/*
 * sim_scan.c - ksmd's scanner: the mm_slot list, the scan cursor, rmap_item
 * lifetimes, smart scan, full-scan boundaries with the advisor, batches and
 * their simulated time, and run = 2.
 *
 * This follows scan_get_next_rmap_item() and ksm_do_scan(): the cursor walks
 * each registered mm's mergeable, faulted mappings in address order; an
 * eligible page (present, anonymous, not KSM's zero page) gets its rmap_item
 * (items passed over on the way are freed, which is how munmap, exit and
 * unmerge become visible in the counters); smart scan may skip it; otherwise
 * it goes to cmp_and_merge_page (sim_merge.c). At the end of an mm the items
 * left behind are freed, and an mm without mergeable mappings loses its slot.
 * The wrap at the list head ends the batch and counts a full scan.
 */
#include "sim_internal.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <string.h>

/* --- the mm_slot list --------------------------------------------------- */

static uint32_t *next_link(struct sim *s, uint32_t mm)
{
	return mm == SIM_NO_SLOT ? &s->slot_first : &s->mm[mm].slot_next;
}

static uint32_t *prev_link(struct sim *s, uint32_t mm)
{
	return mm == SIM_NO_SLOT ? &s->slot_last : &s->mm[mm].slot_prev;
}

/* Link @mm into the list just before @before (SIM_NO_SLOT: at the end). */
static void slot_insert_before(struct sim *s, uint32_t mm, uint32_t before)
{
	uint32_t prev = *prev_link(s, before);

	s->mm[mm].slot_prev = prev;
	s->mm[mm].slot_next = before;
	*next_link(s, prev) = mm;
	*prev_link(s, before) = mm;
}

static void slot_unlink(struct sim *s, uint32_t mm)
{
	uint32_t prev = s->mm[mm].slot_prev, next = s->mm[mm].slot_next;

	*next_link(s, prev) = next;
	*prev_link(s, next) = prev;
	s->mm[mm].slot_prev = s->mm[mm].slot_next = SIM_NO_SLOT;
}

static bool slots_empty(const struct sim *s)
{
	return s->slot_first == SIM_NO_SLOT;
}

/*
 * __ksm_enter: a new slot goes just before the cursor's slot (at the end of
 * the list when the cursor is at the head), or at the end during run = 2.
 */
void sim_slot_enter(struct sim *s, uint32_t mm)
{
	assert(!s->mm[mm].registered);
	slot_insert_before(s, mm, s->knobs.run == 2 ? SIM_NO_SLOT : s->scan.mm);
	s->mm[mm].registered = true;
}

static void slot_drop(struct sim *s, uint32_t mm)
{
	slot_unlink(s, mm);
	s->mm[mm].registered = false;
	s->mm[mm].merge_any = false;
}

/*
 * __ksm_exit: a slot that is not the cursor's and has no rmap_items goes at
 * once; one with items moves to just after the cursor's slot, for ksmd to
 * clean up next. The cursor's own slot is left to ksmd.
 */
void sim_slot_exit(struct sim *s, uint32_t mm)
{
	if (s->scan.mm == mm)
		return;
	if (s->mm[mm].rmap_items == 0) {
		slot_drop(s, mm);
		return;
	}
	slot_unlink(s, mm);
	slot_insert_before(s, mm, *next_link(s, s->scan.mm));
}

bool sim_ksmd_runnable(const struct sim *s)
{
	return (s->knobs.run & 1) && !slots_empty(s);
}

/* --- rmap_items ------------------------------------------------------------ */

void sim_free_rmap_item(struct sim *s, uint32_t mm, uint32_t slot)
{
	sim_remove_rmap_item_from_tree(s, slot);
	s->page[slot].rflags = 0;
	s->count.rmap_items--;
	s->mm[mm].rmap_items--;
	s->area[sim_area_of_slot(s, slot)].nitems--;
}

/* ksmd frees an item it passed over (the work of unmap, unmerge and exit). */
static void ksmd_free_rmap_item(struct sim *s, uint32_t mm, uint32_t slot)
{
	sim_free_rmap_item(s, mm, slot);
	s->work.rmap_frees++;
	sim_charge(s, s->cfg.costs.rmap_free_ns);
}

/* Free every item of @mm at virtual pages [from, to) ("passed over"). */
static void free_items_between(struct sim *s, uint32_t mm, uint64_t from, uint64_t to)
{
	if (s->mm[mm].rmap_items == 0 || from >= to)
		return;
	for (uint32_t i = 0; i < s->narea; i++) {
		struct sim_area *a = &s->area[i];
		uint64_t lo, hi;

		if (a->mm != mm || a->nitems == 0)
			continue;
		lo = from > a->start ? from - a->start : 0;
		hi = to < a->start + a->npages ? to - a->start : a->npages;
		if (to <= a->start)
			continue;
		for (uint64_t p = lo; p < hi && a->nitems; p++)
			if (s->page[a->slot + p].rflags & RMAP_EXISTS)
				ksmd_free_rmap_item(s, mm, a->slot + (uint32_t)p);
	}
}

/* get_next_rmap_item: free what was passed over, then reuse or create. */
static void get_rmap_item(struct sim *s, uint32_t mm, uint32_t ai, uint64_t vpn)
{
	struct sim_area *a = &s->area[ai];
	uint32_t slot = a->slot + (uint32_t)(vpn - a->start);
	struct sim_page *r;

	if (s->scan.rmap_from < vpn) /* items passed over */
		free_items_between(s, mm, s->scan.rmap_from, vpn);
	s->scan.rmap_from = vpn + 1;
	r = &s->page[slot];
	if (r->rflags & RMAP_EXISTS)
		return;
	/* a zeroed rmap_item: checksum 0, age 0, no skips (the PTE half stays),
	 * and the detector's state of it, if it keeps any, zeroed too */
	r->rflags = RMAP_EXISTS;
	r->checksum = 0;
	r->age = r->skips = r->seqnr = 0;
	r->nid = 0;
	memset(&r->rb, 0, sizeof(r->rb));
	if (s->item_bytes)
		memset(sim_detector_item(s, slot), 0, s->item_bytes);
	s->count.rmap_items++;
	s->mm[mm].rmap_items++;
	a->nitems++;
	s->work.rmap_allocs++;
	sim_charge(s, s->cfg.costs.rmap_alloc_ns);
}

/* --- smart scan ------------------------------------------------------------- */

/*
 * should_skip_rmap_item ages every item that is not KSM by one at each scan
 * that considers it, visits ages 0 to 2, and from age 3 on asks the
 * machine's policy (WL_SMART_SCAN_POLICIES, wl_policy.h) whether this scan
 * visits it: one rule per policy in the table below, so a policy is a rule
 * and a line, and nothing else here names one. A skip is the kernel's
 * whatever the rule: pages_skipped, out of the tree, no budget used.
 */

/* Every item is visited at its first considerations, ages 0 to this - 1. */
#define SMART_SCAN_VISITED_AGES 3u

/* upstream's skip_age(): how many scans the countdown skips after a visit. */
static unsigned skip_age(uint8_t age)
{
	if (age <= 3)
		return 1;
	if (age <= 5)
		return 2;
	if (age <= 8)
		return 4;
	return 8;
}

/* The countdown: visit when no skips remain, then skip skip_age(age) scans. */
static bool visit_upstream(struct sim *s, uint32_t slot, uint8_t age)
{
	struct sim_page *r = &s->page[slot];

	if (r->skips) {
		r->skips--;
		return false;
	}
	r->skips = (uint8_t)skip_age(age);
	return true;
}

/*
 * The patch's skip_period(): one scan in every period is a visit. Powers of
 * two, so that the scans of a longer period are among those of a shorter
 * one; the longest is SMART_SCAN_PHASES.
 */
#define SMART_SCAN_PHASES 8u

static uint64_t skip_period(uint8_t age)
{
	if (age <= 5)
		return 2;
	if (age <= 8)
		return 4;
	return SMART_SCAN_PHASES;
}

/* Every page of a period in the same scans: seqnr a multiple of it. */
static bool visit_aligned(struct sim *s, uint32_t slot, uint8_t age)
{
	(void)slot;
	return (s->scan.seqnr & (skip_period(age) - 1)) == 0;
}

/* The page's virtual page number, which the phase-by-address mutant reads. */
static uint64_t page_vpn(const struct sim *s, uint32_t slot)
{
	const struct sim_area *a = &s->area[sim_area_of_slot(s, slot)];

	return a->start + (slot - a->slot);
}

/*
 * The patch: (ksm_scan.seqnr + rmap_item->oldchecksum) & (period - 1) == 0,
 * an unsigned long plus an unsigned int, which wraps as this sum does (only
 * its low three bits are read). Equal pages have equal oldchecksums, so they
 * share their visits; different ones spread over the scans.
 */
static bool visit_phased(struct sim *s, uint32_t slot, uint8_t age)
{
	uint64_t offset = s->page[slot].checksum;

	if (s->cfg.mutant == SIM_MUTANT_PHASE_BY_ADDRESS) /* mutant: phase from the address */
		offset = page_vpn(s, slot);
	return ((s->scan.seqnr + offset) & (skip_period(age) - 1)) == 0;
}

static const struct sim_smart_scan_rule smart_scan_upstream = { visit_upstream, 1, false, true };
static const struct sim_smart_scan_rule smart_scan_aligned = { visit_aligned, SMART_SCAN_PHASES,
							       false, false };
static const struct sim_smart_scan_rule smart_scan_phased = { visit_phased, SMART_SCAN_PHASES,
							      true, false };

#define SMART_SCAN_RULE_(e, name, doc) [WL_SMART_SCAN_##e] = &smart_scan_##name,
static const struct sim_smart_scan_rule *const smart_scan_rules[WL_SMART_SCAN_COUNT] = {
	WL_SMART_SCAN_POLICIES(SMART_SCAN_RULE_)
};
#undef SMART_SCAN_RULE_

const struct sim_smart_scan_rule *sim_smart_scan_rule_of(enum wl_smart_scan_policy policy)
{
	assert((unsigned)policy < WL_SMART_SCAN_COUNT);
	return smart_scan_rules[policy];
}

uint64_t sim_smart_scan_phase(const struct sim *s)
{
	return s->scan.seqnr % sim_smart_scan_rule_of(s->cfg.smart_scan_policy)->scan_phases;
}

/* The rule should_skip() applies in this machine, NULL while smart_scan is 0. */
static const struct sim_smart_scan_rule *smart_scan_rule(const struct sim *s)
{
	if (!s->knobs.value[WL_KNOB_SMART_SCAN])
		return NULL;
	return sim_smart_scan_rule_of(s->cfg.smart_scan_policy);
}

/*
 * should_skip_rmap_item: age non-KSM pages, skip those @rule (from
 * smart_scan_rule(), taken once a walk) passes over.
 */
static bool should_skip(struct sim *s, const struct sim_smart_scan_rule *rule, uint32_t slot)
{
	struct sim_page *r = &s->page[slot];
	uint8_t age;

	if (!rule)
		return false;
	if (s->frame[r->frame].flags & FRAME_KSM)
		return false;
	age = r->age;
	if (age != UINT8_MAX)
		r->age++;
	if (age < SMART_SCAN_VISITED_AGES)
		return false;
	if (rule->visit(s, slot, age))
		return false;
	s->count.pages_skipped++;
	s->work.skips++;
	sim_remove_rmap_item_from_tree(s, slot);
	sim_charge(s, s->cfg.costs.skip_ns);
	return true;
}

/* --- the advisor -------------------------------------------------------------- */

static uint64_t clock_now(const struct sim *s)
{
	return s->now_ns + (uint64_t)s->batch_cost_ns;
}

static void advisor_start_scan(struct sim *s)
{
	if (s->knobs.value[WL_KNOB_ADVISOR_MODE] == WL_ADVISOR_SCAN_TIME)
		s->advisor.start_scan_ns = clock_now(s);
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* scan_time_advisor(), with simulated time and CPU time as its inputs. */
static void advisor_stop_scan(struct sim *s)
{
	struct sim_advisor *ad = &s->advisor;
	uint64_t *pages_to_scan = &s->knobs.value[WL_KNOB_PAGES_TO_SCAN];
	uint64_t scan_time, cpu_time, cpu_percent, last, factor, change, pages, per_page;

	if (s->knobs.value[WL_KNOB_ADVISOR_MODE] != WL_ADVISOR_SCAN_TIME)
		return;
	scan_time = (clock_now(s) - ad->start_scan_ns) / 1000000000u;
	scan_time = scan_time ? scan_time : 1;
	cpu_time = s->ksmd_cpu_ns + (uint64_t)s->batch_cost_ns;
	cpu_percent = (cpu_time - ad->cpu_time_ns) / 1000000u * 100 / (scan_time * 1000);
	cpu_percent = cpu_percent ? cpu_percent : 1;
	last = ad->scan_time ? ad->scan_time : scan_time;
	factor = s->knobs.value[WL_KNOB_ADVISOR_TARGET_SCAN_TIME] * 100 / scan_time;
	factor = factor ? factor : 1;
	change = scan_time * 100 / last;
	change = change ? change : 1;
	change = ((100 - 30) * ad->change + 30 * change) / 100;
	pages = *pages_to_scan * 100 / factor;
	pages = pages * change / 100;
	per_page = *pages_to_scan / cpu_percent;
	per_page = per_page ? per_page : 1;
	pages = min_u64(pages, per_page * s->knobs.value[WL_KNOB_ADVISOR_MAX_CPU]);
	pages = max_u64(pages, per_page * 10);
	pages = min_u64(pages, s->knobs.value[WL_KNOB_ADVISOR_MAX_PAGES_TO_SCAN]);
	ad->change = change;
	ad->scan_time = scan_time;
	ad->cpu_time_ns = cpu_time;
	*pages_to_scan = pages;
}

/* --- the cursor ----------------------------------------------------------------- */

/*
 * One unit of a fixed cost that has a cold kind (a batch after a sleep or
 * steps) and a busy kind (straight after the last batch): counted and
 * charged as the batch is.
 */
static void charge_cold_or_busy(struct sim *s, uint64_t *cold_units, double cold_ns,
				uint64_t *busy_units, double busy_ns)
{
	if (s->cold) {
		(*cold_units)++;
		sim_charge(s, cold_ns);
	} else {
		(*busy_units)++;
		sim_charge(s, busy_ns);
	}
}

/* Start of a full scan: drain the LRU caches if pages came since the last
 * began, empty the unstable trees, move to the first slot. */
static void start_full_scan(struct sim *s)
{
	charge_cold_or_busy(s, &s->work.scans, s->cfg.costs.scan_ns, &s->work.busy_scans,
			    s->cfg.costs.busy_scan_ns);
	if (s->lru_pending) {
		s->lru_pending = false;
		s->work.lru_drains++;
		sim_charge(s, s->cfg.costs.lru_drain_ns);
	}
	advisor_start_scan(s);
	if (s->cfg.mutant == SIM_MUTANT_NO_UNSTABLE_RESET) /* mutant: the old tree stays */
		goto kept;
	if (sim_memo_scan_start(s)) /* the last tree, to be rebuilt as it was */
		goto kept;
	for (unsigned n = 0; n < SIM_MAX_NODES; n++)
		s->unstable_root[n] = RB_NIL;
kept:
	s->scan.mm = s->slot_first;
	s->scan.address = 0;
	s->scan.rmap_from = 0;
}

static bool page_is_eligible(const struct sim *s, uint32_t slot)
{
	const struct sim_page *p = &s->page[slot];

	return (p->pte & PTE_PRESENT) && !(p->pte & PTE_KSM_ZERO);
}

/* Is a batch's @nth stop (counting from 1) one of its first SIM_COLD_VISITS, @cold? */
static bool is_cold_stop(bool cold, uint64_t nth)
{
	return cold && nth <= SIM_COLD_VISITS;
}

/*
 * A page the scanner stops at: counted, and among a cold batch's first
 * SIM_COLD_VISITS, whether it is then visited or skipped (its page table
 * and rmap_item are walked either way).
 */
static void count_stop(struct sim *s)
{
	s->work.visits++;
	if (is_cold_stop(s->cold, s->work.visits - s->batch_visits0)) {
		s->work.cold_visits++;
		sim_charge(s, s->cfg.costs.cold_visit_ns);
	}
}

/*
 * A visit costs less where the page table ends at a PMD (a THP), and in a
 * batch straight after the last (busy), whose page tables and rmap_items
 * the last batch left in the caches, than in a batch after a sleep. A
 * smart-scan skip costs skip_ns in its place (should_skip).
 */
static void charge_page_visit(struct sim *s, uint32_t slot)
{
	if (s->frame[s->page[slot].frame].flags & FRAME_LARGE) {
		s->work.pmd_visits++;
		sim_charge(s, s->cfg.costs.visit_pmd_ns);
	} else if (!s->cold) {
		s->work.busy_visits++;
		sim_charge(s, s->cfg.costs.busy_visit_ns);
	} else {
		s->work.pte_visits++;
		sim_charge(s, s->cfg.costs.visit_ns);
	}
}

static void charge_visit(struct sim *s, uint32_t slot)
{
	count_stop(s);
	charge_page_visit(s, slot);
}

/*
 * The cursor passes from page @p - 1 to page @p of @a: where the two differ
 * in being mapped and mergeable, the kernel's walk meets another VMA (an
 * area is one mapping until munmap or madvise cut it into several).
 */
static void charge_vma_boundary(struct sim *s, const struct sim_area *a, uint64_t p)
{
	const uint8_t vma_flags = PTE_MAPPED | PTE_MERGEABLE;
	const uint32_t slot = a->slot + (uint32_t)p;

	if (p == 0 || ((s->page[slot].pte ^ s->page[slot - 1].pte) & vma_flags)) {
		s->work.vmas++;
		sim_charge(s, s->cfg.costs.vma_ns);
	}
}

/*
 * An address of a mergeable mapping where the walk finds no page to visit:
 * nothing there, or a PTE of the zero page that use_zero_pages mapped,
 * which the kernel's walk reads and passes (not an anonymous folio).
 */
static void charge_no_visit(struct sim *s, uint32_t slot)
{
	if (s->page[slot].pte & PTE_KSM_ZERO) {
		s->work.zero_ptes++;
		sim_charge(s, s->cfg.costs.zero_pte_ns);
	} else {
		s->work.absent_pages++;
		sim_charge(s, s->cfg.costs.absent_page_ns);
	}
}

/*
 * Smart scan's steady state in bulk. From @page[@p] on (@p > 0 the cursor's
 * page of a faulted area whose pages are @page[0 .. @npages), its item the
 * next, none passed over), the run of pages that a countdown rule skips:
 * with the same VMA flags as the page before, present, neither the zero
 * page nor a KSM page, an item in no tree, aged past the visits every item
 * gets and its countdown not at 0. Each is counted, aged, counted down and
 * charged as walk_area()'s own loop would (a cold batch's first visits
 * included), in the same order; the cursor is left after the last. Returns
 * how many; 0 leaves the page at @p to the loop, untouched. (A countdown is
 * only ever set at a visit at age 3 or more, so the test of the age never
 * fails in a run the tests make: it is the loop's own, kept so that the two
 * paths agree whatever the state.)
 */
static uint64_t countdown_skips(struct sim *s, struct sim_page *page, uint64_t p, uint64_t npages)
{
	const uint8_t want = PTE_MAPPED | PTE_MERGEABLE | PTE_PRESENT;
	const uint8_t vma_flags = PTE_MAPPED | PTE_MERGEABLE;
	const struct sim_frame *frame = s->frame;
	const double skip_ns = s->cfg.costs.skip_ns, cold_ns = s->cfg.costs.cold_visit_ns;
	const bool batch_is_cold = s->cold;
	uint64_t seen = s->work.visits - s->batch_visits0, cold = 0, q;
	double cost = s->batch_cost_ns;

	if ((page[p].pte ^ page[p - 1].pte) & vma_flags)
		return 0; /* a VMA's first page: the loop charges the boundary */
	for (q = p; q < npages; q++) {
		struct sim_page *r = &page[q];

		if ((r->pte & (want | PTE_KSM_ZERO)) != want ||
		    (r->rflags & (RMAP_EXISTS | RMAP_STABLE | RMAP_UNSTABLE)) != RMAP_EXISTS ||
		    r->age < SMART_SCAN_VISITED_AGES || !r->skips)
			break;
		/* a KSM page is never mapped writable: a writable page's frame
		 * need not be read (MC_INV_KSM_READONLY, which the model
		 * checker proves; a seeded bug may break it: no bulk then) */
		if (!(r->pte & PTE_WRITE) && (frame[r->frame].flags & FRAME_KSM))
			break;
		if (is_cold_stop(batch_is_cold, ++seen)) {
			cold++;
			cost += cold_ns;
		}
		cost += skip_ns;
		if (r->age != UINT8_MAX)
			r->age++;
		r->skips--;
	}
	q -= p;
	s->batch_cost_ns = cost;
	s->work.visits += q;
	s->work.cold_visits += cold;
	s->work.skips += q;
	s->count.pages_skipped += q;
	s->bulk_skips += q;
	if (q) {
		s->scan.address = s->scan.rmap_from + q;
		s->scan.rmap_from += q;
	}
	return q;
}

/*
 * walk_mm() in area @ai from the cursor's address: true with the page slot
 * to process next, false at the area's end. @rule is smart scan's
 * (smart_scan_rule()); @bulk, whether runs of its countdown's skips are
 * taken at once (countdown_skips()). The area's bounds are read once
 * (nothing in a walk moves them).
 */
static bool walk_area(struct sim *s, const struct sim_smart_scan_rule *rule, bool bulk,
		      uint32_t ai, uint32_t *out)
{
	const struct sim_area *a = &s->area[ai];
	const uint32_t mm = a->mm, slot0 = a->slot;
	const uint64_t start = a->start, npages = a->npages;
	const bool faulted = a->anon_vma;
	uint64_t p = s->scan.address > start ? s->scan.address - start : 0;
	struct sim_page *const page = s->page + slot0;

	for (; p < npages; p++) {
		const uint32_t slot = slot0 + (uint32_t)p;
		const uint64_t vpn = start + p;

		if (bulk && p && faulted && s->scan.rmap_from == vpn) {
			const uint64_t n = countdown_skips(s, page, p, npages);

			if (n) {
				p += n - 1;
				continue;
			}
		}
		charge_vma_boundary(s, a, p);
		if ((page[p].pte & (PTE_MAPPED | PTE_MERGEABLE)) != (PTE_MAPPED | PTE_MERGEABLE))
			continue;
		s->scan.address = vpn + 1;
		if (!faulted)
			continue; /* never faulted: the kernel skips the whole VMA */
		if (!page_is_eligible(s, slot)) {
			charge_no_visit(s, slot);
			continue;
		}
		count_stop(s);
		get_rmap_item(s, mm, ai, vpn);
		if (should_skip(s, rule, slot))
			continue;
		charge_page_visit(s, slot);
		*out = slot;
		return true;
	}
	return false;
}

/*
 * Walk @mm's mergeable pages from the cursor's address. Returns true with the
 * page slot of the next page to process; false at the end of the mm. The
 * mappings the walk passes through and the addresses where it finds nothing
 * are charged once a scan, as the cursor passes them.
 */
static bool walk_mm(struct sim *s, uint32_t mm, uint32_t *out)
{
	const struct sim_smart_scan_rule *rule = smart_scan_rule(s);
	const bool bulk = rule && rule->countdown && !s->cfg.skip_page_by_page && !s->cfg.mutant;

	for (uint32_t i = 0; i < s->narea; i++) {
		const struct sim_area *a = &s->area[i];

		if (a->mm != mm || a->start + a->npages <= s->scan.address)
			continue;
		if (walk_area(s, rule, bulk, i, out))
			return true;
	}
	return false;
}

/* End of an mm: free the trailing items; drop the slot if nothing mergeable. */
static void finish_mm(struct sim *s, uint32_t mm)
{
	uint32_t next = s->mm[mm].slot_next;

	charge_cold_or_busy(s, &s->work.mm_slots, s->cfg.costs.mm_slot_ns, &s->work.busy_mm_slots,
			    s->cfg.costs.busy_mm_slot_ns);
	free_items_between(s, mm, s->scan.rmap_from, UINT64_MAX);
	if (s->scan.address == 0)
		slot_drop(s, mm);
	s->scan.mm = next;
	s->scan.address = 0;
	s->scan.rmap_from = 0;
}

/*
 * scan_get_next_rmap_item: the page slot to process next, or false when a
 * full scan ends (seqnr advances) or there is nothing to scan.
 */
static bool scan_next(struct sim *s, uint32_t *out)
{
	if (slots_empty(s))
		return false;
	if (s->scan.mm == SIM_NO_SLOT) {
		start_full_scan(s);
		if (s->scan.mm == SIM_NO_SLOT)
			return false;
	}
	while (s->scan.mm != SIM_NO_SLOT) {
		uint32_t mm = s->scan.mm;

		if (s->mm[mm].state == MM_ALIVE && walk_mm(s, mm, out))
			return true;
		if (s->mm[mm].state != MM_ALIVE) {
			s->scan.address = 0; /* an exiting mm: drop everything */
			s->scan.rmap_from = 0;
		}
		finish_mm(s, mm);
	}
	advisor_stop_scan(s);
	sim_memo_scan_end(s);
	s->scan.seqnr++;
	return false;
}

/* sim_ksmd_step(), saying which page it processed in *@slot. */
static bool ksmd_step_at(struct sim *s, uint32_t *slot)
{
	if (!scan_next(s, slot))
		return false;
	/* the visit reads the page: its writes first (a smart-scan skip, in
	 * scan_next(), reads only the rmap_item) */
	sim_deferred_settle(s, *slot);
	sim_cmp_and_merge_page(s, *slot);
	s->count.pages_scanned++;
	return true;
}

bool sim_ksmd_step(struct sim *s)
{
	uint32_t slot;

	return ksmd_step_at(s, &slot);
}

static uint64_t jiffy_ns(const struct sim *s)
{
	return 1000000000u / s->cfg.costs.hz;
}

/* How long a sleep of @jiffies really lasts, by the calibrated adjustment. */
static uint64_t sleep_ns(const struct sim *s, uint64_t jiffies)
{
	double ns = (double)(jiffies * jiffy_ns(s)) + s->cfg.costs.sleep_adjust_ns;

	return jiffies && ns > 0 ? (uint64_t)ns : 0;
}

uint64_t sim_ksmd_batch(struct sim *s)
{
	return sim_ksmd_batch_ended(s, NULL);
}

uint64_t sim_ksmd_batch_ended(struct sim *s, uint64_t *ended_ns)
{
	uint64_t n = 0;
	bool ended = false;

	if (!sim_ksmd_batch_begin(s)) {
		if (ended_ns)
			*ended_ns = s->now_ns;
		return 0;
	}
	n = sim_ksmd_steps(s, UINT64_MAX, &ended);
	sim_ksmd_batch_end(s, ended_ns);
	return n;
}

/* The refills (sim.h) of a batch after ksmd slept @slept_ns, for time constant @tau_ms. */
static uint64_t refills_after(uint64_t slept_ns, double tau_ms)
{
	if (slept_ns == UINT64_MAX)
		return SIM_REFILL_UNITS;
	return (uint64_t)llround(SIM_REFILL_UNITS * -expm1(-(double)slept_ns / (tau_ms * 1e6)));
}

bool sim_ksmd_batch_begin(struct sim *s)
{
	if (!sim_ksmd_runnable(s))
		return false;
	s->batch_cost_ns = s->cold ? s->cfg.costs.batch_ns : s->cfg.costs.busy_batch_ns;
	s->batch_refills = 0;
	if (s->cold) {
		s->batch_refills = refills_after(s->slept_ns, s->cfg.costs.refill_tau_ms);
		s->work.refills += s->batch_refills;
		s->batch_cost_ns += (double)s->batch_refills * s->cfg.costs.refill_ns;
	}
	s->batch_steps = 0;
	s->batch_visits0 = s->work.visits;
	s->batch_merges0 = s->work.merges;
	return true;
}

/* The area of @mm that walk_mm() would look at next, or -1. */
static int cursor_area(const struct sim *s, uint32_t mm)
{
	for (uint32_t i = 0; i < s->narea; i++) {
		const struct sim_area *a = &s->area[i];

		if (a->mm == mm && a->start + a->npages > s->scan.address)
			return (int)i;
	}
	return -1;
}

/*
 * Is the page at @slot one that sim_ksmd_step() would visit and leave as it
 * is: an existing rmap_item, stable in the node of the KSM page its present,
 * mergeable PTE maps (cmp_and_merge_page's first return)? Smart scan never
 * skips a KSM page, so nothing else is touched.
 */
static bool page_is_steady(const struct sim *s, uint32_t slot)
{
	const struct sim_page *p = &s->page[slot];
	const uint8_t want = PTE_MAPPED | PTE_MERGEABLE | PTE_PRESENT;
	const struct sim_frame *f;

	if ((p->pte & (want | PTE_KSM_ZERO)) != want ||
	    (p->rflags & (RMAP_EXISTS | RMAP_STABLE)) != (RMAP_EXISTS | RMAP_STABLE))
		return false;
	f = &s->frame[p->frame];
	return (f->flags & FRAME_KSM) && p->st.head == f->stable_node;
}

/*
 * The steady state in bulk: up to @max pages at the cursor that
 * page_is_steady() accepts, consumed with exactly the effects that many
 * sim_ksmd_step() calls have on them (a visit charged, the cursor and
 * pages_scanned advanced), in the same order. Returns how many; 0 leaves
 * everything else, run ends included, to sim_ksmd_step().
 */
#define STEADY_PREFETCH_SLOTS 64u

static uint64_t steady_run(struct sim *s, uint64_t max)
{
	uint32_t mm = s->scan.mm;
	const struct sim_area *a;
	uint64_t vpn, n = 0;
	int ai;

	if (mm == SIM_NO_SLOT || s->mm[mm].state != MM_ALIVE)
		return 0;
	ai = cursor_area(s, mm);
	if (ai < 0)
		return 0;
	a = &s->area[ai];
	if (!a->anon_vma || s->scan.address < a->start)
		return 0;
	for (vpn = s->scan.address; n < max && vpn < a->start + a->npages; vpn++, n++) {
		uint32_t slot = a->slot + (uint32_t)(vpn - a->start);

		__builtin_prefetch(&s->page[slot + STEADY_PREFETCH_SLOTS]);
		/* no item passed over (get_rmap_item would free it) */
		if (s->scan.rmap_from != vpn || !page_is_steady(s, slot))
			break;
		if (n == 0) /* the pages after it are mapped and mergeable as it is */
			charge_vma_boundary(s, a, vpn - a->start);
		charge_visit(s, slot);
		s->scan.address = vpn + 1;
		s->scan.rmap_from = vpn + 1;
		s->count.pages_scanned++;
	}
	return n;
}

/*
 * Steps in bulk where they can be: a run of steady pages is looked for
 * (steady_run()) at the start and after a step that left its page steady,
 * not after every step of a volatile host (where none comes: a steady page
 * after a page that is not is then one sim_ksmd_step(), with the same
 * effects, and the run from the next on).
 */
uint64_t sim_ksmd_steps(struct sim *s, uint64_t max, bool *ended)
{
	uint64_t budget = s->knobs.value[WL_KNOB_PAGES_TO_SCAN], n = 0;
	bool try_steady = true;

	*ended = false;
	while (n < max) {
		uint64_t steady = 0;
		uint32_t slot;

		if (s->batch_steps >= budget) {
			*ended = true;
			break;
		}
		if (try_steady)
			steady = steady_run(s, min_u64(max - n, budget - s->batch_steps));
		if (steady) {
			s->batch_steps += steady;
			n += steady;
			continue;
		}
		if (!ksmd_step_at(s, &slot)) {
			*ended = true;
			break;
		}
		try_steady = page_is_steady(s, slot);
		s->batch_steps++;
		n++;
	}
	if (s->batch_steps >= budget)
		*ended = true;
	return n;
}

void sim_ksmd_batch_end(struct sim *s, uint64_t *ended_ns)
{
	uint64_t sleep_ms = s->knobs.value[WL_KNOB_SLEEP_MILLISECS];
	uint64_t sleep_jiffies = (sleep_ms * s->cfg.costs.hz + 999) / 1000;

	s->ksmd_cpu_ns += (uint64_t)s->batch_cost_ns;
	s->now_ns += (uint64_t)s->batch_cost_ns;
	if (ended_ns)
		*ended_ns = s->now_ns;
	s->slept_ns = sleep_ns(s, sleep_jiffies);
	s->now_ns += s->slept_ns;
	if (s->cold)
		s->work.batches++;
	else
		s->work.busy_batches++;
	s->cold = sleep_jiffies > 0;
	s->batch_cost_ns = 0;
	s->batch_steps = 0;
	s->batches++;
}

/* --- run = 2 ----------------------------------------------------------------------- */

/* unmerge_and_remove_all_rmap_items: every mm, from the first slot on. */
int sim_unmerge_all(struct sim *s)
{
	s->scan.mm = s->slot_first;
	while (s->scan.mm != SIM_NO_SLOT) {
		uint32_t mm = s->scan.mm, next;

		if (s->mm[mm].state == MM_ALIVE) {
			for (uint32_t i = 0; i < s->narea; i++) {
				struct sim_area *a = &s->area[i];

				if (a->mm != mm || !a->anon_vma)
					continue;
				for (uint64_t p = 0; p < a->npages; p++)
					if (s->page[a->slot + p].pte & PTE_MERGEABLE)
						sim_unshare_page(s, a->slot + (uint32_t)p);
			}
		}
		free_items_between(s, mm, 0, UINT64_MAX);
		next = s->mm[mm].slot_next;
		s->scan.mm = next;
		if (s->mm[mm].state != MM_ALIVE)
			slot_drop(s, mm);
	}
	s->scan.address = 0;
	s->scan.rmap_from = 0;
	sim_remove_all_stable_nodes(s);
	s->scan.seqnr = 0;
	return 0;
}
