/*
 * mc_model.c - the transition system the checker explores: the initial
 * machine (set up exactly as sim_driver.c sets up a workload, so that a
 * counterexample replays as one), the actions enabled in a state, and what
 * each action does to the simulator and to the model's extra state (budgets,
 * the shadow of expected contents, a knob store in progress).
 *
 * ksmd's step is one iteration of its batch loop (sim_ksmd_step): a page, or
 * the wrap that ends a full scan. Time stands still: the cost of a step is
 * dropped, so chains are never pruned by age and states do not differ by
 * clock. Knob stores that check KSM's state under ksm_thread_mutex
 * (merge_across_nodes, max_page_sharing) are two actions: what the kernel
 * does before taking the mutex (sim_knob_store_begin), and the store itself,
 * with ksmd free to run in between, as it is in the kernel.
 *
 * ksm_thread_mutex is state (mc_internal.h): ksmd takes it at the first step
 * of a batch and releases it when the batch ends, so the steps that take it
 * (a store's committing half, a run store) are enabled only between ksmd's
 * batches, and ksmd's first step only while no store holds it.
 */
#include "mc_internal.h"

#include <errno.h>
#include <string.h>

/* --- the initial state ------------------------------------------------------- */

static void store_knobs(const struct mc_config *cfg, struct sim *s)
{
	/* as sim_driver.c's store_global_knobs(); the advisor is always off here */
	for (int k = 0; k < WL_KNOB_COUNT; k++)
		sim_knob_store(s, (enum wl_knob)k, cfg->knobs[k]);
	sim_knob_store(s, WL_KNOB_PAGES_TO_SCAN, cfg->knobs[WL_KNOB_PAGES_TO_SCAN]);
}

static int setup_region(const struct mc_config *cfg, struct sim *s, unsigned index,
			struct mc_extra *x, char *err, size_t errlen)
{
	const struct mc_region *reg = &cfg->region[index];
	int area = sim_mmap(s, (int)reg->process, reg->npages, reg->node, false, index);
	unsigned nv = cfg->nvalues;

	if (area < 0) {
		snprintf(err, errlen, "[region %s]: mmap failed: %s", reg->name, strerror(-area));
		return -1;
	}
	sim_area_set_dirty_tracking(s, area, reg->dirty_tracking);
	for (uint32_t p = 0; p < reg->npages; p++) {
		uint32_t slot = mc_slot(s, (unsigned)area, p);
		unsigned base = reg->value[p];

		if (base == MC_VALUE_UNTOUCHED) {
			/* never touched: reads as zeros */
			for (base = 0; cfg->values[base] != 0; base++)
				;
		} else if (sim_fill(s, area, p, cfg->values[base]) != 0) {
			snprintf(err, errlen, "[region %s]: out of memory", reg->name);
			return -1;
		}
		x->expect[slot] = (uint8_t)(base * (nv + 1));
	}
	if (reg->merge == WL_MERGE_MADVISE)
		sim_madvise(s, area, 0, reg->npages, true);
	else if (reg->merge == WL_MERGE_PRCTL)
		sim_prctl_merge(s, (int)reg->process, true);
	return 0;
}

struct sim *mc_initial_state(const struct mc_config *cfg, unsigned mutant,
			     struct mc_extra *x, char *err, size_t errlen)
{
	struct sim_config sc;
	struct sim *s;

	sim_config_default(&sc);
	sc.kernel = cfg->kernel;
	sc.detector = cfg->detector;
	sc.thp_dirty = (enum sim_thp_dirty)cfg->thp_dirty;
	sc.smart_scan_policy = cfg->smart_scan_policy;
	sc.nr_nodes = cfg->nr_nodes;
	sc.walk_every_insert = true; /* the invariants read the tree mid-scan */
	sc.mutant = mutant;
	s = sim_new(&sc, err, errlen);
	if (!s)
		return NULL;
	memset(x, 0, sizeof(*x));
	memset(x->expect, MC_NO_CONTENT, sizeof(x->expect));
	memcpy(x->budget, cfg->budget, sizeof(x->budget));
	x->pending = -1;
	for (unsigned p = 0; p < cfg->nprocs; p++)
		if (sim_process_new(s) < 0)
			goto oom;
	store_knobs(cfg, s);
	for (unsigned i = 0; i < cfg->nregions; i++)
		if (setup_region(cfg, s, i, x, err, errlen) != 0)
			goto fail;
	sim_run_store(s, 1);
	x->nprocs = (uint8_t)cfg->nprocs;
	x->nslots = (uint16_t)s->nslots;
	return s;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	sim_free(s);
	return NULL;
}

/* --- enabled actions --------------------------------------------------------- */

struct emitter {
	struct mc_action *out;
	size_t max, n;
};

static void emit(struct emitter *e, uint8_t kind, uint8_t arg, uint32_t area, uint32_t page)
{
	if (e->n < e->max)
		e->out[e->n] = (struct mc_action){ kind, arg, (uint16_t)area, page };
	e->n++;
}

static bool area_is_prctl(const struct mc_config *cfg, const struct sim_area *a)
{
	return a->label < cfg->nregions && cfg->region[a->label].merge == WL_MERGE_PRCTL;
}

/* Writes, madvise and munmap of each mapped page of each live area. */
static void page_actions(const struct mc_config *cfg, const struct sim *s,
			 const struct mc_extra *x, struct emitter *e)
{
	for (uint32_t i = 0; i < s->narea; i++) {
		const struct sim_area *a = &s->area[i];
		bool prctl = area_is_prctl(cfg, a);

		if (a->dead || s->mm[a->mm].state != MM_ALIVE)
			continue;
		for (uint32_t p = 0; p < a->npages; p++) {
			uint8_t pte = s->page[a->slot + p].pte;

			if (!(pte & PTE_MAPPED))
				continue;
			for (unsigned v = 0; x->budget[MC_B_WRITES] && v < cfg->nwrite_values; v++)
				emit(e, MC_ACT_WRITE, cfg->write_value[v], i, p);
			if (x->budget[MC_B_MERGES] && !prctl && !(pte & PTE_MERGEABLE))
				emit(e, MC_ACT_MERGE, 0, i, p);
			if (x->budget[MC_B_UNMERGES] && !prctl && (pte & PTE_MERGEABLE))
				emit(e, MC_ACT_UNMERGE, 0, i, p);
			if (x->budget[MC_B_UNMAPS])
				emit(e, MC_ACT_UNMAP, 0, i, p);
		}
	}
}

/* Whether process @mm has prctl regions (merge/unmerge are then prctl calls). */
static bool process_is_prctl(const struct mc_config *cfg, const struct sim *s, uint32_t mm)
{
	for (uint32_t i = 0; i < s->narea; i++)
		if (s->area[i].mm == mm && !s->area[i].dead && area_is_prctl(cfg, &s->area[i]))
			return true;
	return false;
}

static void process_actions(const struct mc_config *cfg, const struct sim *s,
			    const struct mc_extra *x, struct emitter *e)
{
	for (uint32_t m = 0; m < s->nmm; m++) {
		const struct sim_mm *mm = &s->mm[m];

		if (mm->state != MM_ALIVE)
			continue;
		if (process_is_prctl(cfg, s, m)) {
			if (x->budget[MC_B_MERGES] && !mm->merge_any)
				emit(e, MC_ACT_MERGE, 0, m, UINT32_MAX);
			if (x->budget[MC_B_UNMERGES] && mm->merge_any)
				emit(e, MC_ACT_UNMERGE, 0, m, UINT32_MAX);
		}
		if (x->budget[MC_B_FORKS] && x->nprocs < MC_MAX_PROCS)
			emit(e, MC_ACT_FORK, 0, m, 0);
		if (x->budget[MC_B_EXITS])
			emit(e, MC_ACT_EXIT, 0, m, 0);
	}
}

static bool mutex_free(const struct mc_extra *x)
{
	return x->lock[MC_LOCK_KSM_THREAD_MUTEX] == MC_HOLDER_NONE;
}

static void store_actions(const struct mc_config *cfg, const struct sim *s,
			  const struct mc_extra *x, struct emitter *e)
{
	/* the committing half and run_store wait for ksm_thread_mutex */
	if (x->pending >= 0 && mutex_free(x))
		emit(e, MC_ACT_STORE_COMMIT, (uint8_t)x->pending, 0, 0);
	for (unsigned i = 0; x->budget[MC_B_STORES] && x->pending < 0 && i < cfg->nstores; i++)
		if (mc_store_is_split(cfg->store[i].knob))
			emit(e, MC_ACT_STORE_BEGIN, (uint8_t)i, 0, 0);
		else if (!mc_store_takes_mutex(cfg->store[i].knob) || mutex_free(x))
			emit(e, MC_ACT_STORE, (uint8_t)i, 0, 0);
	/* writing run's current value does nothing: not an action */
	for (unsigned i = 0; x->budget[MC_B_RUNS] && mutex_free(x) && i < cfg->nrun_values; i++)
		if (cfg->run_value[i] != sim_run(s))
			emit(e, MC_ACT_RUN, cfg->run_value[i], 0, 0);
}

/* ksmd can step: in a batch (it holds the mutex), or starting one (it is free). */
static bool ksmd_enabled(const struct sim *s, const struct mc_extra *x)
{
	return x->batch_left || (sim_ksmd_runnable(s) && mutex_free(x));
}

bool mc_ksmd_blocked(const struct sim *s, const struct mc_extra *x)
{
	return !x->batch_left && sim_ksmd_runnable(s) && !mutex_free(x);
}

size_t mc_enabled(const struct mc_config *cfg, const struct sim *s, const struct mc_extra *x,
		  struct mc_action *out, size_t max)
{
	struct emitter e = { out, max, 0 };

	if (ksmd_enabled(s, x))
		emit(&e, MC_ACT_KSMD, 0, 0, 0);
	page_actions(cfg, s, x, &e);
	process_actions(cfg, s, x, &e);
	store_actions(cfg, s, x, &e);
	return e.n;
}

/* --- applying actions ---------------------------------------------------------- */

/* The slot of the page ksmd just handed to cmp_and_merge_page. */
static uint32_t processed_slot(const struct sim *s)
{
	uint64_t vpn = s->scan.address - 1;

	for (uint32_t i = 0; i < s->narea; i++) {
		const struct sim_area *a = &s->area[i];

		if (a->mm == s->scan.mm && vpn >= a->start && vpn < a->start + a->npages)
			return a->slot + (uint32_t)(vpn - a->start);
	}
	return 0;
}

/* ksmd's batch ends (ksm_do_scan returns): it releases the mutex. */
static void end_batch(struct mc_extra *x)
{
	x->batch_left = 0;
	x->lock[MC_LOCK_KSM_THREAD_MUTEX] = MC_HOLDER_NONE;
}

/* ksm_scan_thread takes the mutex and starts a batch of pages_to_scan pages. */
static void start_batch(const struct mc_config *cfg, const struct sim *s, struct mc_extra *x)
{
	uint64_t n = sim_knob(s, WL_KNOB_PAGES_TO_SCAN);

	x->lock[MC_LOCK_KSM_THREAD_MUTEX] = MC_HOLDER_KSMD;
	/* where no batch ends by count, only "in a batch" is state */
	x->batch_left = !cfg->batch_by_count ? 1 : (uint8_t)(n < MC_MAX_SLOTS ? n : MC_MAX_SLOTS);
}

void mc_ksmd_page_step(const struct mc_config *cfg, struct sim *s, struct mc_extra *x,
		       struct mc_effect *eff)
{
	memset(eff, 0, sizeof(*eff));
	if (x && !x->batch_left)
		start_batch(cfg, s, x);
	eff->processed = sim_ksmd_step(s);
	s->batch_cost_ns = 0; /* time stands still */
	if (eff->processed)
		eff->slot = processed_slot(s);
	else
		eff->wraps = 1;
	eff->ret = eff->processed;
	if (!x)
		return;
	if (cfg->batch_by_count && eff->processed)
		x->batch_left--;
	if (eff->wraps || !x->batch_left || !sim_ksmd_runnable(s))
		end_batch(x);
}

/* The content id of base @id after a write of values[v]. */
static uint8_t after_write(const struct mc_config *cfg, uint8_t id, unsigned v)
{
	unsigned nv = cfg->nvalues, base = id / (nv + 1);
	const struct mc_content *c = &cfg->content[base * (nv + 1) + v + 1];

	return (uint8_t)(base * (nv + 1) + c->written);
}

static void forget_area(const struct sim *s, uint32_t area, struct mc_extra *x)
{
	const struct sim_area *a = &s->area[area];

	memset(&x->expect[a->slot], MC_NO_CONTENT, a->npages);
}

/* The child's areas are the parent's live ones, in order: copy expectations. */
static void fork_shadow(const struct sim *s, uint32_t parent, uint32_t first_new,
			struct mc_extra *x)
{
	uint32_t next = first_new;

	for (uint32_t i = 0; i < first_new && next < s->narea; i++) {
		const struct sim_area *a = &s->area[i];

		if (a->mm != parent || a->dead)
			continue;
		memcpy(&x->expect[s->area[next].slot], &x->expect[a->slot], a->npages);
		next++;
	}
}

static long apply_merge(const struct mc_config *cfg, struct sim *s, const struct mc_action *a,
			bool on)
{
	(void)cfg;
	if (a->page == UINT32_MAX)
		return sim_prctl_merge(s, a->area, on);
	return sim_madvise(s, a->area, a->page, 1, on);
}

static long apply_fork(struct sim *s, struct mc_extra *x, uint32_t parent)
{
	uint32_t before = s->narea;
	int child = sim_fork(s, (int)parent);

	if (child >= 0) {
		fork_shadow(s, parent, before, x);
		x->nprocs++;
	}
	return child;
}

static long apply_exit(struct sim *s, struct mc_extra *x, uint32_t mm)
{
	long ret = sim_exit(s, (int)mm);

	for (uint32_t i = 0; i < s->narea; i++)
		if (s->area[i].mm == mm)
			forget_area(s, i, x);
	return ret;
}

static long apply_store_begin(const struct mc_config *cfg, struct sim *s, struct mc_extra *x,
			      unsigned i)
{
	int ret = sim_knob_store_begin(s, cfg->store[i].knob, cfg->store[i].value);

	if (ret == 0)
		x->pending = (int8_t)i;
	return ret;
}

/* The store's half under ksm_thread_mutex: mutex_lock, check and change, mutex_unlock. */
static long apply_store_commit(const struct mc_config *cfg, struct sim *s, struct mc_extra *x)
{
	unsigned i = (unsigned)x->pending;
	const struct mc_store *st = &cfg->store[i];
	long ret;

	x->pending = -1;
	x->lock[MC_LOCK_KSM_THREAD_MUTEX] = (uint8_t)(MC_HOLDER_STORE + i);
	ret = sim_knob_store(s, st->knob, st->value);
	/* mutant mac-ebusy-leak: the EBUSY return skips mutex_unlock */
	if (s->cfg.mutant == SIM_MUTANT_MAC_EBUSY_LEAK && ret == EBUSY &&
	    st->knob == WL_KNOB_MERGE_ACROSS_NODES)
		return ret;
	x->lock[MC_LOCK_KSM_THREAD_MUTEX] = MC_HOLDER_NONE;
	return ret;
}

static enum mc_budget budget_of(uint8_t kind)
{
	switch (kind) {
	case MC_ACT_WRITE: return MC_B_WRITES;
	case MC_ACT_MERGE: return MC_B_MERGES;
	case MC_ACT_UNMERGE: return MC_B_UNMERGES;
	case MC_ACT_UNMAP: return MC_B_UNMAPS;
	case MC_ACT_FORK: return MC_B_FORKS;
	case MC_ACT_EXIT: return MC_B_EXITS;
	case MC_ACT_RUN: return MC_B_RUNS;
	default: return MC_B_STORES; /* STORE and STORE_BEGIN; COMMIT is not charged */
	}
}

void mc_apply_user(const struct mc_config *cfg, struct sim *s, struct mc_extra *x,
		   const struct mc_action *a, struct mc_effect *eff)
{
	uint32_t slot;

	memset(eff, 0, sizeof(*eff));
	if (a->kind != MC_ACT_STORE_COMMIT)
		x->budget[budget_of(a->kind)]--;
	switch (a->kind) {
	case MC_ACT_WRITE:
		slot = mc_slot(s, a->area, a->page);
		eff->ret = sim_write(s, a->area, a->page, cfg->offset, cfg->values[a->arg]);
		if (eff->ret == 0)
			x->expect[slot] = after_write(cfg, x->expect[slot], a->arg);
		break;
	case MC_ACT_MERGE:
	case MC_ACT_UNMERGE:
		eff->ret = apply_merge(cfg, s, a, a->kind == MC_ACT_MERGE);
		break;
	case MC_ACT_UNMAP:
		eff->ret = sim_munmap(s, a->area, a->page, 1);
		x->expect[mc_slot(s, a->area, a->page)] = MC_NO_CONTENT;
		break;
	case MC_ACT_FORK:
		eff->ret = apply_fork(s, x, a->area);
		break;
	case MC_ACT_EXIT:
		eff->ret = apply_exit(s, x, a->area);
		break;
	case MC_ACT_STORE:
		eff->ret = sim_knob_store(s, cfg->store[a->arg].knob, cfg->store[a->arg].value);
		break;
	case MC_ACT_STORE_BEGIN:
		eff->ret = apply_store_begin(cfg, s, x, a->arg);
		break;
	case MC_ACT_STORE_COMMIT:
		eff->ret = apply_store_commit(cfg, s, x);
		break;
	case MC_ACT_RUN:
		eff->ret = sim_run_store(s, a->arg);
		break;
	}
	s->batch_cost_ns = 0;
	x->nslots = (uint16_t)s->nslots;
	/* ksmd's batch finds nothing left to scan (every mm gone): it ends */
	if (x->batch_left && !sim_ksmd_runnable(s))
		end_batch(x);
}

/* --- names ----------------------------------------------------------------------- */

void mc_process_name(const struct mc_config *cfg, const struct sim *s, unsigned mm,
		     char *buf, size_t len)
{
	if (mm < cfg->nprocs) {
		snprintf(buf, len, "%s", cfg->proc_name[mm]);
		return;
	}
	/* a fork child: named after the process its memory came from */
	for (uint32_t i = 0; i < s->narea; i++)
		if (s->area[i].mm == mm && s->area[i].label < cfg->nregions) {
			snprintf(buf, len, "%.40s-c%u",
				 cfg->proc_name[cfg->region[s->area[i].label].process], mm);
			return;
		}
	snprintf(buf, len, "proc%u", mm);
}

static const char *region_name(const struct mc_config *cfg, const struct sim *s, unsigned area)
{
	uint32_t label = s->area[area].label;

	return label < cfg->nregions ? cfg->region[label].name : "?";
}

void mc_action_describe(const struct mc_config *cfg, const struct sim *s,
			const struct mc_action *a, char *buf, size_t len)
{
	char proc[80];
	const struct mc_store *st = &cfg->store[a->arg];

	if (a->kind >= MC_ACT_WRITE && a->kind <= MC_ACT_UNMAP && a->page != UINT32_MAX)
		mc_process_name(cfg, s, s->area[a->area].mm, proc, sizeof(proc));
	else if (a->kind >= MC_ACT_MERGE && a->kind <= MC_ACT_EXIT)
		mc_process_name(cfg, s, a->area, proc, sizeof(proc));
	switch (a->kind) {
	case MC_ACT_KSMD:
		snprintf(buf, len, "ksmd");
		break;
	case MC_ACT_WRITE:
		snprintf(buf, len, "%s writes %#llx at offset %u of page %u of %s", proc,
			 (unsigned long long)cfg->values[a->arg], cfg->offset, a->page,
			 region_name(cfg, s, a->area));
		break;
	case MC_ACT_MERGE:
	case MC_ACT_UNMERGE:
		if (a->page == UINT32_MAX)
			snprintf(buf, len, "%s: prctl(PR_SET_MEMORY_MERGE, %d)", proc,
				 a->kind == MC_ACT_MERGE);
		else
			snprintf(buf, len, "%s: madvise(%s) on page %u of %s", proc,
				 a->kind == MC_ACT_MERGE ? "MADV_MERGEABLE" : "MADV_UNMERGEABLE",
				 a->page, region_name(cfg, s, a->area));
		break;
	case MC_ACT_UNMAP:
		snprintf(buf, len, "%s: munmap page %u of %s", proc, a->page,
			 region_name(cfg, s, a->area));
		break;
	case MC_ACT_FORK:
		snprintf(buf, len, "%s forks", proc);
		break;
	case MC_ACT_EXIT:
		snprintf(buf, len, "%s exits", proc);
		break;
	case MC_ACT_STORE:
		snprintf(buf, len, "store %s=%s", wl_knob_info(st->knob)->name, st->text);
		break;
	case MC_ACT_STORE_BEGIN:
		snprintf(buf, len, "store %s=%s: before ksm_thread_mutex",
			 wl_knob_info(st->knob)->name, st->text);
		break;
	case MC_ACT_STORE_COMMIT:
		snprintf(buf, len, "store %s=%s: under ksm_thread_mutex",
			 wl_knob_info(st->knob)->name, st->text);
		break;
	case MC_ACT_RUN:
		snprintf(buf, len, "store run=%u", a->arg);
		break;
	}
}
