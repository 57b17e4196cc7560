/*
 * sim_steps.c - steps as values: applying one (sim_apply), and listing those
 * enabled in a state (sim_enabled_steps), which is all an explicit-state
 * model checker needs from the simulator besides clone, hash and equality.
 */
#include "sim_internal.h"

#include <errno.h>

long sim_apply(struct sim *s, const struct sim_step *st)
{
	switch (st->kind) {
	case SIM_STEP_KSMD:
		return sim_ksmd_step(s);
	case SIM_STEP_WRITE:
		return sim_write(s, st->area, st->page, st->offset, st->value);
	case SIM_STEP_MADVISE:
		return sim_madvise(s, st->area, st->page, st->count, st->on);
	case SIM_STEP_PRCTL:
		return sim_prctl_merge(s, st->mm, st->on);
	case SIM_STEP_MUNMAP:
		return sim_munmap(s, st->area, st->page, st->count);
	case SIM_STEP_FORK:
		return sim_fork(s, st->mm);
	case SIM_STEP_EXIT:
		return sim_exit(s, st->mm);
	case SIM_STEP_KNOB:
		return sim_knob_store(s, st->knob, st->value);
	case SIM_STEP_RUN:
		return sim_run_store(s, st->value);
	}
	return EINVAL;
}

static void emit(struct sim_step *out, size_t max, size_t *n, struct sim_step step)
{
	if (*n < max)
		out[*n] = step;
	(*n)++;
}

/* Writes, unmerges and unmaps of each mapped page of each live area. */
static void page_steps(const struct sim *s, const struct sim_alphabet *alpha,
		       struct sim_step *out, size_t max, size_t *n)
{
	for (uint32_t i = 0; i < s->narea; i++) {
		const struct sim_area *a = &s->area[i];

		if (s->mm[a->mm].state != MM_ALIVE)
			continue;
		for (uint64_t p = 0; p < a->npages; p++) {
			uint8_t flags = s->page[a->slot + p].pte;

			if (!(flags & PTE_MAPPED))
				continue;
			for (size_t v = 0; alpha->writes && v < alpha->nvalues; v++)
				emit(out, max, n, (struct sim_step){ .kind = SIM_STEP_WRITE,
					.mm = (int)a->mm, .area = (int)i, .page = p,
					.offset = alpha->offset, .value = alpha->values[v] });
			if (alpha->unmerge && (flags & PTE_MERGEABLE))
				emit(out, max, n, (struct sim_step){ .kind = SIM_STEP_MADVISE,
					.mm = (int)a->mm, .area = (int)i, .page = p, .count = 1,
					.on = false });
			if (alpha->unmap)
				emit(out, max, n, (struct sim_step){ .kind = SIM_STEP_MUNMAP,
					.mm = (int)a->mm, .area = (int)i, .page = p, .count = 1 });
		}
	}
}

size_t sim_enabled_steps(const struct sim *s, const struct sim_alphabet *alpha,
			 struct sim_step *out, size_t max)
{
	size_t n = 0;

	if (sim_ksmd_runnable(s))
		emit(out, max, &n, (struct sim_step){ .kind = SIM_STEP_KSMD });
	page_steps(s, alpha, out, max, &n);
	for (uint32_t m = 0; m < s->nmm; m++) {
		if (s->mm[m].state != MM_ALIVE)
			continue;
		if (alpha->fork)
			emit(out, max, &n, (struct sim_step){ .kind = SIM_STEP_FORK, .mm = (int)m });
		if (alpha->exit)
			emit(out, max, &n, (struct sim_step){ .kind = SIM_STEP_EXIT, .mm = (int)m });
	}
	for (size_t i = 0; i < alpha->nextra; i++)
		emit(out, max, &n, alpha->extra[i]);
	return n;
}
