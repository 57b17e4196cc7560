/*
 * kb_settle.c - after a run's processes are gone: leave the kernel's KSM as
 * clean as it was before the run.
 *
 * Exited processes leave rmap_items behind until ksmd's cursor next passes
 * their mm, and stable nodes (chains above all) outlive their items. Both
 * would show in the next run's first rows, and in everyone's counters. So
 * ksmd is run flat out until one full scan has passed the leftovers, then
 * run = 2 frees the stable nodes, but only when nobody else has pages
 * merged or memory registered (run = 2 would unmerge theirs). The knobs
 * this changes are the caller's to restore next (kb_recover_saved, or
 * kb_run's own restore). Used by the guardian, the sentinel and
 * `ksmkit restore` alike.
 */
#include "config.h"
#include "kb_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_POLL_NS (10 * UINT64_C(1000000))
#define SETTLE_WAIT_NS (20 * KB_NSEC)
/* How long a stable node may stay mapped by an exiting process's __mmput. */
#define STABLE_RACE_NS (2 * KB_NSEC)

static int64_t counter_now(const char *name)
{
	char path[128], text[32];

	snprintf(path, sizeof path, KB_KSM_DIR "/%s", name);
	if (kb_read_file(path, text, sizeof text) <= 0)
		return -1;
	return strtoll(text, NULL, 10);
}

static bool items_remain(void)
{
	return counter_now("pages_shared") > 0 || counter_now("pages_sharing") > 0 ||
	       counter_now("pages_unshared") > 0 || counter_now("pages_volatile") > 0;
}

/* Run ksmd until it has passed the exited processes once. 0, or -1. */
static int drop_leftover_items(char *msg, size_t len)
{
	int64_t scans = counter_now("full_scans");
	uint64_t deadline = kb_now_ns() + SETTLE_WAIT_NS;
	int err;

	/* The advisor would refuse pages_to_scan; these knobs are restored next. */
	if (kb_knob_exists("advisor_mode"))
		kb_knob_store("advisor_mode", "none");
	kb_knob_store("pages_to_scan", "100000");
	kb_knob_store("sleep_millisecs", "1");
	if ((err = kb_knob_store("run", "1")) != 0)
		return kb_fail(msg, len, "cannot start ksmd to drop the run's leftovers: %s",
			       kb_errno_name(err));
	while (counter_now("full_scans") == scans && items_remain() && kb_now_ns() < deadline)
		kb_sleep_ns(WAIT_POLL_NS);
	kb_knob_store("run", "0");
	if (counter_now("full_scans") == scans && items_remain())
		return kb_fail(msg, len, "ksmd did not complete a scan in %" PRIu64 " s to drop "
					 "the run's leftovers",
			       SETTLE_WAIT_NS / KB_NSEC);
	return 0;
}

static bool stable_nodes_remain(void)
{
	return counter_now("stable_node_chains") > 0 || counter_now("stable_node_dups") > 0 ||
	       counter_now("pages_shared") > 0;
}

/*
 * run = 2 frees every stable node it can. One whose page is still mapped
 * stays (the kernel says this races with an exiting process's __mmput), so
 * try again for a while; writing 2 over 2 does nothing, hence run = 0 first.
 */
static int free_stable_nodes(char *msg, size_t len)
{
	uint64_t deadline = kb_now_ns() + STABLE_RACE_NS;
	int err;

	for (;;) {
		if ((err = kb_knob_store("run", "2")) != 0) {
			kb_append(msg, len, "run = 2 after the run: %s", kb_errno_name(err));
			return -1;
		}
		if (!stable_nodes_remain())
			return 0;
		if (kb_now_ns() >= deadline) {
			kb_append(msg, len, "stable nodes still mapped %" PRIu64 " s after the run",
				  STABLE_RACE_NS / KB_NSEC);
			return -1;
		}
		kb_sleep_ns(WAIT_POLL_NS);
		kb_knob_store("run", "0");
	}
}

int kb_settle(char *msg, size_t len)
{
	char others[512];
	int rc = 0;

	if (items_remain() && drop_leftover_items(msg, len) != 0)
		rc = -1;
	/* run = 2 frees the stable nodes left behind (chains survive the items);
	 * only when nobody else has pages merged or memory registered. */
	if (kb_check_others(others, sizeof others) != 0)
		return rc;
	if (free_stable_nodes(msg, len) != 0)
		rc = -1;
	return rc;
}
