/*
 * sim_memo.c - a scan of memory at rest rebuilds the same unstable tree, so
 * the simulator remembers each insert's walk instead of walking again.
 *
 * The unstable tree is emptied at the start of every full scan and rebuilt
 * by the scan's inserts, in scan order. When the previous scan's tree was
 * built by inserts alone (nothing found, no walk cut short, nothing erased)
 * and none of its pages changed, and this scan re-inserts exactly the same
 * items in the same order with the same contents, every walk meets the same
 * nodes with the same bytes: same parent, same levels, same memcmp bytes, and
 * the finished tree is link for link the previous one. So such a scan keeps
 * the previous tree's links as they are and charges each re-insert the walk
 * its item remembers (sim_page.walk: levels and bytes), in O(1) a page; the
 * work counters and the cost come out bit for bit as the walk's.
 *
 * While a memo scan is under way, the items' links are the whole previous
 * tree, not the part this scan has re-inserted. Whatever would read or
 * change the tree otherwise, or break the sequence (an item passed and not
 * re-inserted, an insert of an item the last tree did not hold, a page of
 * the tree written, any other user step, a knob store), first rebuilds the
 * real tree of this scan's re-inserts so far, uncharged (sim_memo_break),
 * and from there the scan walks as always. Nothing here is observable: the
 * machine does and reports exactly what it would with every walk made
 * (check_sim_memo runs both side by side); sim_config.walk_every_insert
 * turns memo scans off (the model checker does: its invariants read the
 * tree mid-scan).
 */
#include "sim_internal.h"

#include <assert.h>

static bool memo_allowed(const struct sim *s)
{
	/* the mutants change what a walk compares or when the tree empties */
	return !s->cfg.walk_every_insert && s->cfg.mutant == 0;
}

/* The scan's unstable item at @slot was put in the tree in this scan. */
static bool inserted_this_scan(const struct sim *s, const struct sim_page *r)
{
	return (r->rflags & RMAP_UNSTABLE) && r->seqnr == (uint8_t)s->scan.seqnr;
}

/* Insert @slot where a walk would, charging nothing (its walk was charged). */
static void insert_quietly(struct sim *s, uint32_t slot)
{
	struct rb_layout l = sim_unstable_layout(s);
	struct sim_page *r = &s->page[slot];
	uint32_t *root = &s->unstable_root[r->nid];
	uint32_t n = *root, parent = RB_NIL;
	uint64_t mine = s->frame[r->frame].content;
	int left = 0;

	while (n) {
		int ret = sim_content_cmp(&s->content, mine, s->frame[s->page[n].frame].content);

		assert(ret != 0); /* the walk it replays found no equal page */
		parent = n;
		left = ret < 0;
		n = left ? rb_at(&l, n)->left : rb_at(&l, n)->right;
	}
	rb_insert(&l, root, slot, parent, left);
}

/* The real tree of this scan's inserts so far, rebuilt in scan order. */
static void rebuild_tree(struct sim *s)
{
	for (unsigned n = 0; n < SIM_MAX_NODES; n++)
		s->unstable_root[n] = RB_NIL;
	for (uint32_t mm = s->slot_first; mm != SIM_NO_SLOT; mm = s->mm[mm].slot_next) {
		const bool at_cursor = mm == s->scan.mm;

		for (uint32_t i = 0; i < s->narea; i++) {
			const struct sim_area *a = &s->area[i];

			if (a->mm != mm)
				continue;
			for (uint64_t p = 0; p < a->npages; p++) {
				uint32_t slot = a->slot + (uint32_t)p;

				if (at_cursor && a->start + p >= s->scan.address)
					break;
				if (inserted_this_scan(s, &s->page[slot]))
					insert_quietly(s, slot);
			}
		}
		if (at_cursor)
			break;
	}
}

/*
 * This scan stops repeating the last one's (its sequence of inserts went
 * another way): the real tree from here, walked. Its own tree is still made
 * of inserts alone, so the next scan may repeat it.
 */
static void stop_repeating(struct sim *s)
{
	if (s->memo.active)
		rebuild_tree(s);
	s->memo.active = false;
	s->memo.pending = 0;
}

void sim_memo_break(struct sim *s)
{
	stop_repeating(s);
	s->memo.clean = false;
}

bool sim_memo_scan_start(struct sim *s)
{
	s->memo.active = memo_allowed(s) && s->memo.clean;
	s->memo.clean = memo_allowed(s);
	s->memo.pending = 0;
	return s->memo.active;
}

void sim_memo_scan_end(struct sim *s)
{
	if (s->memo.pending) /* the last tree's last item did not come back */
		stop_repeating(s);
	s->memo.active = false;
}

void sim_memo_passed(struct sim *s, uint32_t slot)
{
	if (!s->memo.active)
		return;
	if (s->memo.pending) { /* the one passed before did not come back */
		stop_repeating(s);
		return;
	}
	s->memo.pending = slot;
}

void sim_memo_written_unstable(struct sim *s, uint32_t slot)
{
	struct sim_page *r = &s->page[slot];

	if (inserted_this_scan(s, r)) {
		sim_memo_break(s); /* a node of this scan's tree changes */
		return;
	}
	/* in the last tree only: its walk no longer holds when it comes back */
	r->walk = SIM_WALK_NONE;
}

uint16_t sim_memo_record(uint64_t levels, uint64_t bytes)
{
	uint64_t extra = bytes - levels;

	if (levels > SIM_WALK_MAX_LEVELS || bytes < levels || extra > SIM_WALK_MAX_EXTRA)
		return SIM_WALK_NONE;
	return (uint16_t)(levels | extra << SIM_WALK_EXTRA_SHIFT);
}

bool sim_memo_insert(struct sim *s, uint32_t slot, unsigned nid)
{
	struct sim_page *r = &s->page[slot];
	uint64_t levels, bytes;

	if (!s->memo.active)
		return false;
	if (s->memo.pending != slot || r->walk == SIM_WALK_NONE || r->nid != nid) {
		stop_repeating(s);
		return false;
	}
	s->memo.pending = 0;
	levels = r->walk & SIM_WALK_LEVELS_MASK;
	bytes = levels + (r->walk >> SIM_WALK_EXTRA_SHIFT);
	s->memo.inserts++;
	sim_charge_walk(s, levels, bytes);
	r->rflags |= RMAP_UNSTABLE;
	r->seqnr = (uint8_t)s->scan.seqnr;
	s->count.pages_unshared++;
	return true;
}
