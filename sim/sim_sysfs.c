/*
 * sim_sysfs.c - the writable files of /sys/kernel/mm/ksm, with the kernel's
 * answers: EINVAL for values it does not parse or accept, EBUSY when
 * merge_across_nodes or max_page_sharing would change while KSM pages
 * exist, the advisor's coupling with pages_to_scan, and run = 2's unmerge.
 */
#include "sim_internal.h"
#include "sim_mc.h"

#include <errno.h>

static void set_advisor_defaults(struct sim *s)
{
	if (s->knobs.value[WL_KNOB_ADVISOR_MODE] == WL_ADVISOR_NONE) {
		s->knobs.value[WL_KNOB_PAGES_TO_SCAN] = 100;
	} else {
		s->advisor = (struct sim_advisor){ 0 };
		s->knobs.value[WL_KNOB_PAGES_TO_SCAN] =
			s->knobs.value[WL_KNOB_ADVISOR_MIN_PAGES_TO_SCAN];
	}
}

/* A change that needs every stable node gone first (or EBUSY). */
static int store_if_no_ksm_pages(struct sim *s, enum wl_knob knob, uint64_t value)
{
	if (s->knobs.value[knob] == value)
		return 0;
	/* mutant mac-race: the check already ran, outside the mutex (sim_knob_store_begin) */
	if (s->cfg.mutant == SIM_MUTANT_MAC_RACE && knob == WL_KNOB_MERGE_ACROSS_NODES)
		goto store;
	if (s->count.pages_shared || sim_remove_all_stable_nodes(s))
		return EBUSY;
store:
	s->knobs.value[knob] = value;
	return 0;
}

int sim_knob_store(struct sim *s, enum wl_knob knob, uint64_t value)
{
	const struct wl_knob_info *info = wl_knob_info(knob);
	uint64_t old;

	sim_memo_break(s); /* the scan's order or its pages may change */
	if (!info)
		return EINVAL;
	if (!wl_kernel_has_knob(s->cfg.kernel, knob))
		return ENOENT; /* no such file under /sys/kernel/mm/ksm */
	if (value < info->min || value > info->max)
		return knob == WL_KNOB_MAX_PAGE_SHARING && value > info->max ? ERANGE : EINVAL;
	if (knob == WL_KNOB_MAX_PAGE_SHARING && value > SIM_MAX_PAGE_SHARING)
		return ERANGE; /* a frame's mapcount holds less (sim_admit() says so first) */
	switch (knob) {
	case WL_KNOB_MERGE_ACROSS_NODES:
	case WL_KNOB_MAX_PAGE_SHARING:
		return store_if_no_ksm_pages(s, knob, value);
	case WL_KNOB_PAGES_TO_SCAN:
		if (s->knobs.value[WL_KNOB_ADVISOR_MODE] != WL_ADVISOR_NONE)
			return EINVAL;
		break;
	case WL_KNOB_ADVISOR_MODE:
		old = s->knobs.value[knob];
		s->knobs.value[knob] = value;
		if (old != value)
			set_advisor_defaults(s);
		return 0;
	default:
		break;
	}
	s->knobs.value[knob] = value;
	return 0;
}

int sim_knob_store_text(struct sim *s, enum wl_knob knob, const char *text)
{
	char why[160];
	uint64_t value;
	int err = wl_knob_parse(knob, text, &value, why, sizeof(why));

	return err ? err : sim_knob_store(s, knob, value);
}

uint64_t sim_knob(const struct sim *s, enum wl_knob knob)
{
	return s->knobs.value[knob];
}

int sim_run_store(struct sim *s, uint64_t run)
{
	int err = 0;

	sim_memo_break(s); /* the scan's order or its pages may change */
	if (run > 2)
		return EINVAL;
	if (s->knobs.run != run) {
		s->knobs.run = (unsigned)run;
		if (run == 2) {
			err = sim_unmerge_all(s);
			if (err)
				s->knobs.run = 0;
		}
	}
	return err;
}

unsigned sim_run(const struct sim *s)
{
	return s->knobs.run;
}

/*
 * What a store does before it takes ksm_thread_mutex (sim_mc.h). The kernel
 * only parses there; the seed-004 bug checked run and pages_shared there, so
 * ksmd could merge before the store's change.
 */
int sim_knob_store_begin(const struct sim *s, enum wl_knob knob, uint64_t value)
{
	(void)value;
	/* mutant mac-race: refuse while ksmd runs or pages are shared, without the mutex */
	if (s->cfg.mutant == SIM_MUTANT_MAC_RACE && knob == WL_KNOB_MERGE_ACROSS_NODES)
		return s->knobs.run == 1 || s->count.pages_shared ? EBUSY : 0;
	return 0;
}
