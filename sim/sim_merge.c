/*
 * sim_merge.c - what ksmd does with one page: cmp_and_merge_page and the
 * trees behind it.
 *
 * The stable trees hold KSM pages, sorted by content; a node is plain (one
 * KSM page) or a chain of dups (several KSM pages of equal content, each
 * below max_page_sharing mappings, newest first). The unstable trees hold
 * rmap_items of pages whose checksum did not change since the last visit,
 * sorted by their *current* content, which may have changed since insertion:
 * walks then go wherever memcmp sends them, as in the kernel. Merging two
 * unstable pages makes the scanned one a KSM page, points the tree page's PTE
 * at it, and inserts a stable node (a new dup when equal content is already
 * stable). Counters change only where mm/ksm.c changes them: appends and
 * removals of stable items, unstable inserts and removals, chain and dup
 * creation and collapse, and the discovery of stale nodes, which drops every
 * item of the node at once.
 *
 * Order of the checks for a page that is not KSM: kernel 6.18 (6.11 and
 * later) tests the checksum before searching the stable tree; 6.10 searches
 * the stable tree first, so a page can join a KSM page on its first visit.
 */
#include "sim_internal.h"
#include "sim_detector.h"
#include "content.h"

#include <assert.h>
#include <errno.h>
#include <string.h>

/* The "kpage" argument of try_to_merge_one_page besides a frame id. */
#define KPAGE_NONE 0u          /* make the page itself a KSM page */
#define KPAGE_ZERO UINT32_MAX  /* map the zero page */

static uint32_t mm_of_slot(const struct sim *s, uint32_t slot)
{
	return s->area[sim_area_of_slot(s, slot)].mm;
}

static uint64_t jiffies_now(const struct sim *s)
{
	return (s->now_ns + (uint64_t)s->batch_cost_ns) / (1000000000u / s->cfg.costs.hz);
}

/* One tree node visited: its memcmp (charged by the bytes it reads) and walk. */
static int compare_contents(struct sim *s, uint64_t a, uint64_t b)
{
	uint32_t bytes;
	int ret;

	if (!sim_content_is_patched(a) && !sim_content_is_patched(b)) {
		bytes = sim_plain_cmp_bytes(a, b);
		ret = content_value_cmp(a, b);
	} else {
		ret = sim_content_cmp_bytes(&s->content, a, b, &bytes);
	}
	s->work.tree_levels++;
	s->work.memcmp_bytes += bytes;
	sim_charge(s, s->cfg.costs.tree_level_ns + s->cfg.costs.memcmp_byte_ns * bytes);
	return ret;
}

static int compare_pages(struct sim *s, uint32_t fa, uint32_t fb)
{
	return compare_contents(s, s->frame[fa].content, s->frame[fb].content);
}

/* --- a chain's index of its dups ----------------------------------------------- */

/* is_page_sharing_candidate with @offset more mappings. */
static bool sharing_candidate(const struct sim *s, uint32_t node, int offset)
{
	int32_t len = s->snode[node].hlist_len;

	if (s->cfg.mutant == SIM_MUTANT_DUP_OVER_LIMIT) /* mutant: <= where < belongs */
		return len && (uint64_t)(len + offset) <= s->knobs.value[WL_KNOB_MAX_PAGE_SHARING];
	return len && (uint64_t)(len + offset) < s->knobs.value[WL_KNOB_MAX_PAGE_SHARING];
}

/* Does the dup count in its chain's room_dups? (Stale or not.) */
static bool has_room(const struct sim *s, uint32_t dup)
{
	return sharing_candidate(s, dup, 0);
}

/* The keyhole check without its consequence: is the node's frame its KSM page? */
static bool page_is_nodes(const struct sim *s, uint32_t node)
{
	const struct sim_frame *f = &s->frame[s->snode[node].kpfn];

	return f->mapcount && (f->flags & FRAME_KSM) && f->stable_node == node;
}

/* rmap_hlist_len changes by @delta; a dup's chain counts its room. */
static void add_hlist_len(struct sim *s, uint32_t node, int delta)
{
	struct sim_snode *n = &s->snode[node];
	bool before = n->kind == SNODE_DUP && has_room(s, node);

	n->hlist_len += delta;
	if (n->kind == SNODE_DUP && has_room(s, node) != before)
		s->snode[n->chain].room_dups += before ? (uint32_t)-1 : 1u;
}

void sim_ksm_page_freed(struct sim *s, uint32_t frame)
{
	uint32_t node = s->frame[frame].stable_node;

	/* its mapcount is already 0: it was the node's page until now */
	if (node && s->snode[node].kind == SNODE_DUP && s->snode[node].kpfn == frame)
		s->snode[s->snode[node].chain].stale_dups++;
}

/* --- stable node hlists ------------------------------------------------------- */

static void hlist_add_head(struct sim *s, uint32_t node, uint32_t slot)
{
	struct sim_snode *n = &s->snode[node];
	struct sim_page *r = &s->page[slot];

	r->st.head = node;
	r->st.prev = 0;
	r->st.next = n->first;
	if (n->first)
		s->page[n->first].st.prev = slot;
	n->first = slot;
}

static void hlist_del(struct sim *s, uint32_t slot)
{
	struct sim_page *r = &s->page[slot];

	if (r->st.prev)
		s->page[r->st.prev].st.next = r->st.next;
	else
		s->snode[r->st.head].first = r->st.next;
	if (r->st.next)
		s->page[r->st.next].st.prev = r->st.prev;
}

/* Dups of a chain, newest first. */
static void dup_add_head(struct sim *s, uint32_t chain, uint32_t dup)
{
	struct sim_snode *c = &s->snode[chain], *d = &s->snode[dup];

	d->kind = SNODE_DUP;
	d->chain = chain;
	d->dup_prev = 0;
	d->dup_next = c->first;
	if (c->first)
		s->snode[c->first].dup_prev = dup;
	c->first = dup;
	c->room_dups += has_room(s, dup);
	c->ndups++;
	s->count.stable_node_dups++;
}

static void dup_unlink(struct sim *s, uint32_t dup)
{
	struct sim_snode *d = &s->snode[dup];

	if (d->dup_prev)
		s->snode[d->dup_prev].dup_next = d->dup_next;
	else
		s->snode[d->chain].first = d->dup_next;
	if (d->dup_next)
		s->snode[d->dup_next].dup_prev = d->dup_prev;
	s->snode[d->chain].room_dups -= has_room(s, dup);
	s->snode[d->chain].stale_dups -= !page_is_nodes(s, dup);
	s->snode[d->chain].ndups--;
}

/* --- stale nodes ------------------------------------------------------------ */

/* Take a plain node or dup out of its tree or chain (stable_node_dup_del). */
static void snode_unlink(struct sim *s, uint32_t node)
{
	struct sim_snode *n = &s->snode[node];

	if (n->kind == SNODE_DUP) {
		dup_unlink(s, node);
		s->count.stable_node_dups--;
	} else {
		struct rb_layout l = sim_stable_layout(s);

		rb_erase(&l, &s->stable_root[n->nid], node);
	}
}

/*
 * remove_node_from_stable_tree: every item goes at once, the last one in the
 * list (the oldest) having been the "shared" one.
 */
static void remove_node_from_stable_tree(struct sim *s, uint32_t node)
{
	for (uint32_t slot = s->snode[node].first; slot;) {
		struct sim_page *r = &s->page[slot];
		uint32_t next = r->st.next;

		if (s->cfg.mutant == SIM_MUTANT_SHARING_OFF_BY_ONE && !next) /* mutant: as sharing */
			s->count.pages_sharing--, s->count.pages_shared++;
		if (next)
			s->count.pages_sharing--;
		else
			s->count.pages_shared--;
		s->mm[mm_of_slot(s, slot)].merging_pages--;
		add_hlist_len(s, node, -1);
		r->rflags &= (uint8_t)~(RMAP_STABLE | RMAP_UNSTABLE);
		slot = next;
	}
	snode_unlink(s, node);
	sim_snode_free(s, node);
}

/* ksm_get_folio's keyhole check: is the node's frame still its KSM page? */
bool sim_snode_alive(struct sim *s, uint32_t node)
{
	if (s->cfg.mutant == SIM_MUTANT_NO_KEYHOLE) /* mutant: the node is trusted as it is */
		return true;
	if (page_is_nodes(s, node))
		return true;
	remove_node_from_stable_tree(s, node);
	return false;
}

/* --- removing an item from its tree ------------------------------------------ */

void sim_remove_rmap_item_from_tree_slow(struct sim *s, uint32_t slot)
{
	struct sim_page *r = &s->page[slot];

	if (r->rflags & RMAP_STABLE) {
		uint32_t node = r->st.head;

		if (!sim_snode_alive(s, node))
			return; /* the whole node went, this item with it */
		hlist_del(s, slot);
		if (s->snode[node].first)
			s->count.pages_sharing--;
		else
			s->count.pages_shared--;
		s->mm[mm_of_slot(s, slot)].merging_pages--;
		add_hlist_len(s, node, -1);
		r->rflags &= (uint8_t)~RMAP_STABLE;
	} else if (r->rflags & RMAP_UNSTABLE) {
		uint8_t age = (uint8_t)(s->scan.seqnr - r->seqnr);

		/* the tree was emptied at this scan's start unless it is this scan's */
		assert(age <= 1);
		if (age == 0) {
			struct rb_layout l = sim_unstable_layout(s);

			sim_memo_break(s); /* the real tree first */
			rb_erase(&l, &s->unstable_root[r->nid], slot);
		} else {
			sim_memo_passed(s, slot);
		}
		s->count.pages_unshared--;
		r->rflags &= (uint8_t)~RMAP_UNSTABLE;
	}
}

/* --- chains ----------------------------------------------------------------------- */

/* Make the chain's only dup a plain node in the chain's place. */
static void collapse_chain(struct sim *s, uint32_t chain, uint32_t dup)
{
	struct rb_layout l = sim_stable_layout(s);
	uint16_t nid = s->snode[chain].nid;

	rb_replace(&l, &s->stable_root[nid], chain, dup);
	s->snode[dup].kind = SNODE_PLAIN;
	s->snode[dup].nid = nid;
	sim_snode_free(s, chain);
	s->count.stable_node_chains--;
	s->count.stable_node_dups--;
}

static void free_chain(struct sim *s, uint32_t chain)
{
	struct rb_layout l = sim_stable_layout(s);

	rb_erase(&l, &s->stable_root[s->snode[chain].nid], chain);
	sim_snode_free(s, chain);
	s->count.stable_node_chains--;
}

/*
 * Without a prune, stable_node_dup's walk takes the first live dup with room,
 * or the first live dup when none has room. When no dup is stale, that is
 * the head if it has room or if no dup has any: known without the walk, which
 * at a chain of N dups would otherwise cost N for each page merged into it
 * once the head is full. A prune's walk looks at every dup and takes, of
 * those with room, the one with the most pages (the first live dup when none
 * has room): the same head when no dup is stale and at most one has room,
 * the head among them. A chain of a million dups (1 TiB of one value) is
 * pruned every two simulated seconds of a merge scan that lasts an hour.
 * (Under a mutant the walk is always taken: mutants change what "alive"
 * and "room" mean.)
 */
static bool choice_is_known(const struct sim *s, const struct sim_snode *chain, bool prune)
{
	if (s->cfg.walk_every_chain || s->cfg.mutant || chain->stale_dups ||
	    (prune && chain->room_dups > 1))
		return false;
	return chain->room_dups == 0 || has_room(s, chain->first);
}

/* The kernel's walk looked at @n dups (ksm_get_folio and the room test each). */
static void dups_looked_at(struct sim *s, uint64_t n)
{
	s->work.prune_dups += n;
	sim_charge(s, (double)n * s->cfg.costs.prune_ns);
}

/*
 * stable_node_dup: choose the dup of a chain to compare and merge with,
 * dropping stale dups met on the way. Returns the dup (0 when none lives,
 * after freeing the chain); *node becomes the dup if the chain collapsed.
 * Each dup the kernel's walk looks at is charged, whether the choice was
 * known without the walk or not: the head alone when it has room, every
 * dup when none has, every one at a prune.
 */
static uint32_t choose_dup(struct sim *s, uint32_t *node, bool prune)
{
	struct sim_snode *chain = &s->snode[*node];
	uint64_t now = jiffies_now(s);
	uint64_t interval = (s->knobs.value[WL_KNOB_STABLE_NODE_CHAINS_PRUNE_MILLISECS] *
			     s->cfg.costs.hz + 999) / 1000;
	uint32_t found = 0, dup, next;
	int32_t found_len = 0;

	if (prune && now < chain->prune_time + interval)
		prune = false;
	else if (prune)
		chain->prune_time = now;
	if (choice_is_known(s, chain, prune)) {
		found = chain->first;
		dups_looked_at(s, !prune && has_room(s, found) ? 1 : chain->ndups);
		goto chosen;
	}
	for (dup = chain->first; dup; dup = next) {
		next = s->snode[dup].dup_next;
		dups_looked_at(s, 1);
		if (!sim_snode_alive(s, dup))
			continue;
		if (!found || (sharing_candidate(s, dup, 0) &&
			       (!sharing_candidate(s, found, 0) ||
				s->snode[dup].hlist_len > found_len))) {
			found = dup;
			found_len = s->snode[dup].hlist_len;
			if (!prune && sharing_candidate(s, found, 0))
				break;
		}
	}
chosen:
	chain = &s->snode[*node];
	if (!found) {
		free_chain(s, *node);
		return 0;
	}
	if (chain->first == found && s->snode[found].dup_next == 0) {
		collapse_chain(s, *node, found);
		*node = found;
	} else if (chain->first != found && sharing_candidate(s, found, 1)) {
		dup_unlink(s, found);
		s->count.stable_node_dups--;
		dup_add_head(s, *node, found);
	}
	return found;
}

/* __stable_node_chain: the live node to compare against, or 0 if stale. */
static uint32_t resolve_node(struct sim *s, uint32_t *node, bool prune)
{
	if (s->snode[*node].kind != SNODE_CHAIN)
		return sim_snode_alive(s, *node) ? *node : 0;
	return choose_dup(s, node, prune);
}

/* --- the stable tree ------------------------------------------------------------- */

/*
 * stable_tree_search: a KSM page with the content of @frame that can take
 * one more mapping, or 0. A KSM page (a fork child's) finds itself.
 */
static uint32_t stable_tree_search(struct sim *s, uint32_t frame)
{
	struct rb_layout l;
	unsigned nid;
	uint32_t n;

	if ((s->frame[frame].flags & FRAME_KSM) && s->frame[frame].stable_node)
		return frame;
	nid = sim_tree_nid(s, s->frame[frame].node);
again:
	for (n = s->stable_root[nid]; n;) {
		uint32_t node = n, dup = resolve_node(s, &node, true);
		int ret;

		if (!dup)
			goto again; /* a stale node left the tree: start over */
		l = sim_stable_layout(s);
		ret = compare_pages(s, frame, s->snode[dup].kpfn);
		if (ret < 0)
			n = rb_at(&l, node)->left;
		else if (ret > 0)
			n = rb_at(&l, node)->right;
		else
			return sharing_candidate(s, dup, 0) ? s->snode[dup].kpfn : 0;
	}
	return 0;
}

/* A chain in @node's place, holding @node as its first dup. */
static uint32_t make_chain(struct sim *s, uint32_t node)
{
	uint32_t chain = sim_snode_alloc(s);
	struct rb_layout l = sim_stable_layout(s);
	uint16_t nid = s->snode[node].nid;

	assert(chain);
	s->snode[chain].kind = SNODE_CHAIN;
	s->snode[chain].nid = nid;
	s->snode[chain].prune_time = jiffies_now(s);
	s->count.stable_node_chains++;
	rb_replace(&l, &s->stable_root[nid], node, chain);
	dup_add_head(s, chain, node);
	s->snode[node].nid = nid;
	return chain;
}

/* stable_tree_insert: a node for the new KSM page @kframe (a dup if needed). */
static uint32_t stable_tree_insert(struct sim *s, uint32_t kframe)
{
	unsigned nid = sim_tree_nid(s, s->frame[kframe].node);
	uint32_t n, parent, node = 0, new;
	int left = 0;
	bool need_chain = false;
	struct rb_layout l;

	if (s->cfg.mutant == SIM_MUTANT_WRONG_NODE_TREE) /* mutant: node 0's tree, always */
		nid = 0;
again:
	parent = 0;
	for (n = s->stable_root[nid]; n;) {
		uint32_t dup;
		int ret;

		node = n;
		dup = resolve_node(s, &node, false);
		if (!dup)
			goto again;
		l = sim_stable_layout(s);
		ret = compare_pages(s, kframe, s->snode[dup].kpfn);
		if (s->cfg.mutant == SIM_MUTANT_INSERT_REVERSED) /* mutant: the other way round */
			ret = -ret;
		parent = node;
		if (ret < 0) {
			n = rb_at(&l, node)->left;
			left = 1;
		} else if (ret > 0) {
			n = rb_at(&l, node)->right;
			left = 0;
		} else {
			need_chain = true;
			break;
		}
	}
	new = sim_snode_alloc(s);
	assert(new);
	s->snode[new].kpfn = kframe;
	s->snode[new].nid = (uint16_t)nid;
	if (!need_chain) {
		s->snode[new].kind = SNODE_PLAIN;
		l = sim_stable_layout(s);
		rb_insert(&l, &s->stable_root[nid], new, parent, left);
	} else {
		if (s->snode[node].kind != SNODE_CHAIN)
			node = make_chain(s, node);
		dup_add_head(s, node, new);
	}
	s->frame[kframe].stable_node = new;
	return new;
}

/* stable_tree_append: the item joins the node's hlist (at the head). */
static void stable_tree_append(struct sim *s, uint32_t slot, uint32_t node)
{
	struct sim_page *r = &s->page[slot];

	add_hlist_len(s, node, 1);
	r->rflags |= RMAP_STABLE;
	hlist_add_head(s, node, slot);
	if (r->st.next)
		s->count.pages_sharing++;
	else
		s->count.pages_shared++;
	s->mm[mm_of_slot(s, slot)].merging_pages++;
}

/* --- the unstable tree ---------------------------------------------------------- */

/* find_mergeable_vma: the page's mm lives and its VMA is mergeable and faulted. */
static bool vma_is_mergeable(const struct sim *s, uint32_t slot)
{
	uint8_t flags = s->page[slot].pte;
	const struct sim_area *a;

	if ((flags & (PTE_MAPPED | PTE_MERGEABLE)) != (PTE_MAPPED | PTE_MERGEABLE))
		return false;
	/* a present page was faulted (anon_vma) and its mm lives (exit zaps all) */
	if (flags & PTE_PRESENT)
		return true;
	a = &s->area[sim_area_of_slot(s, slot)];
	return s->mm[a->mm].state == MM_ALIVE && a->anon_vma;
}

/* get_mergeable_page: the anonymous frame at the item's address, or 0. */
static uint32_t mergeable_page(const struct sim *s, uint32_t slot)
{
	const struct sim_page *p = &s->page[slot];
	const uint8_t want = PTE_MAPPED | PTE_MERGEABLE | PTE_PRESENT;

	/*
	 * vma_is_mergeable() of a present page asks only for a mapped, mergeable
	 * PTE: with the PTE's own flags that is one test, the tree walk's.
	 */
	if ((p->pte & (want | PTE_KSM_ZERO)) != want)
		return 0;
	/* where follow_page() honours PROT_NONE as a NUMA hint, it finds no page */
	if (!sim_kernel_row(s)->reaches_prot_none &&
	    s->area[sim_area_of_slot(s, slot)].prot == WL_PROT_NONE)
		return 0;
	return p->frame;
}

/*
 * unstable_tree_search_insert: an item whose page equals @frame's (its page
 * in *tree_frame), or 0 after inserting @slot (or giving up without it).
 *
 * The hot loop of a scan: each level is charged like compare_contents(), with
 * the work counters summed locally and the walk's cost charged once at the
 * end from them (sim_charge_walk), so that a scan repeating this walk from
 * memory (sim_memo.c) charges the same double.
 */
static uint32_t unstable_search_insert(struct sim *s, uint32_t slot, uint32_t frame,
				       uint32_t *tree_frame)
{
	unsigned nid = sim_tree_nid(s, s->frame[frame].node);
	struct rb_layout l = sim_unstable_layout(s);
	uint32_t n, parent = 0, found = 0;
	uint64_t mine = s->frame[frame].content, levels = 0, bytes_read = 0;
	const bool mine_plain = !sim_content_is_patched(mine);
	const bool by_checksum = s->cfg.mutant == SIM_MUTANT_CHECKSUM_AS_MEMCMP;
	bool insert = false;
	int left = 0;
	struct sim_page *r;

	if (sim_memo_insert(s, slot, nid))
		return 0;
	n = s->unstable_root[nid]; /* read after: a memo that stops rebuilds the tree */
	for (;;) {
		const struct rb_links *links;
		uint32_t tf, bytes;
		uint64_t theirs;
		int ret;

		if (!n) {
			insert = true;
			break;
		}
		links = rb_at(&l, n);
		sim_deferred_settle_bytes(s, n);
		tf = mergeable_page(s, n);
		if (!tf || tf == frame)
			break; /* page gone, or the very same page (a fork) */
		theirs = s->frame[tf].content;
		if (mine_plain && !sim_content_is_patched(theirs)) {
			bytes = sim_plain_cmp_bytes(mine, theirs);
			ret = content_value_cmp(mine, theirs);
		} else {
			ret = sim_content_cmp_bytes(&s->content, mine, theirs, &bytes);
		}
		levels++;
		bytes_read += bytes;
		if (by_checksum) /* mutant: stored checksums decide */
			ret = (s->page[slot].checksum > s->page[n].checksum) -
			      (s->page[slot].checksum < s->page[n].checksum);
		parent = n;
		if (ret < 0) {
			n = links->left;
			left = 1;
		} else if (ret > 0) {
			n = links->right;
			left = 0;
		} else {
			if (s->knobs.value[WL_KNOB_MERGE_ACROSS_NODES] || s->frame[tf].node == nid) {
				*tree_frame = tf;
				found = n;
			}
			break;
		}
	}
	sim_charge_walk(s, levels, bytes_read);
	if (!insert) {
		sim_memo_break(s); /* not a tree of inserts alone: the next scan walks */
		return found;
	}
	r = &s->page[slot];
	r->rflags |= RMAP_UNSTABLE;
	r->seqnr = (uint8_t)s->scan.seqnr;
	r->nid = (uint8_t)nid;
	r->walk = sim_memo_record(levels, bytes_read);
	rb_insert(&l, &s->unstable_root[nid], slot, parent, left);
	s->count.pages_unshared++;
	return 0;
}

/* --- merging -------------------------------------------------------------------- */

void sim_split_folio(struct sim *s, uint32_t frame)
{
	uint32_t first = frame / SIM_THP_PAGES * SIM_THP_PAGES;

	for (uint32_t f = first; f < first + SIM_THP_PAGES; f++)
		s->frame[f].flags &= (uint8_t)~FRAME_LARGE;
	s->work.thp_splits++;
	sim_charge(s, s->cfg.costs.thp_split_ns);
}

static bool same_folio(const struct sim *s, uint32_t a, uint32_t b)
{
	return (s->frame[a].flags & FRAME_LARGE) && (s->frame[b].flags & FRAME_LARGE) &&
	       a / SIM_THP_PAGES == b / SIM_THP_PAGES;
}

/*
 * try_to_merge_one_page: write-protect the page at @slot (splitting its THP,
 * which fails while @pinned, another page of the same folio, is held), then
 * make it a KSM page (KPAGE_NONE), or replace it by the zero page or by the
 * KSM page @kpage if the contents are identical. 0 on success, -1 otherwise.
 */
static int merge_one_page(struct sim *s, uint32_t slot, uint32_t frame, uint32_t kpage,
			  uint32_t pinned)
{
	struct sim_page *p = &s->page[slot];
	uint32_t mm = mm_of_slot(s, slot);
	uint64_t nth;

	if (frame == kpage)
		return 0; /* a forked KSM page */
	sim_deferred_settle(s, slot);
	if (s->frame[frame].flags & FRAME_LARGE) {
		if (pinned && same_folio(s, frame, pinned))
			return -1; /* split_huge_page fails on the extra reference */
		sim_split_folio(s, frame);
	}
	if (p->frame != frame || !(p->pte & PTE_PRESENT))
		return -1;
	if (s->cfg.mutant == SIM_MUTANT_NO_WRPROTECT) /* mutant: no write-protection */
		goto wrprotected;
	p->pte &= (uint8_t)~(PTE_WRITE | PTE_DIRTY); /* dirty moves to the folio */
wrprotected:
	sim_deferred_protected(s, slot);
	if (kpage == KPAGE_NONE) {
		/* the checksum cache's word becomes the stable node's */
		s->frame[frame].flags |= FRAME_KSM;
		s->frame[frame].flags &= (uint8_t)~FRAME_CSUM_VALID;
		s->frame[frame].stable_node = 0;
		return 0;
	}
	if (kpage == KPAGE_ZERO) {
		s->work.zero_merges++;
		sim_charge(s, s->cfg.costs.zero_merge_ns);
		if (s->frame[frame].content != 0)
			return -1;
		sim_frame_put(s, frame);
		p->frame = 0;
		p->pte |= PTE_KSM_ZERO | PTE_DIRTY;
		if (s->cfg.mutant == SIM_MUTANT_ZERO_PAGE_UNCOUNTED) /* mutant: not counted */
			s->count.ksm_zero_pages--;
		s->count.ksm_zero_pages++;
		s->mm[mm].zero_pages++;
		return 0;
	}
	s->work.merges++;
	sim_charge(s, s->cfg.costs.merge_ns);
	nth = s->work.merges - s->batch_merges0; /* of the batch's merges */
	if (nth == 1) {
		s->work.first_merges++;
		sim_charge(s, s->cfg.costs.first_merge_ns);
	}
	if (s->batch_refills && nth <= SIM_COLD_MERGES) {
		s->work.cold_merges += s->batch_refills;
		sim_charge(s, (double)s->batch_refills * s->cfg.costs.cold_merge_ns);
	}
	if (s->cfg.mutant == SIM_MUTANT_CHECKSUM_AS_MEMCMP) /* mutant: no memcmp before the swap */
		goto identical;
	if (sim_content_cmp(&s->content, s->frame[frame].content, s->frame[kpage].content) != 0)
		return -1;
identical:
	assert(s->frame[kpage].mapcount < SIM_MAX_MAPCOUNT); /* max_page_sharing is below it */
	s->frame[kpage].mapcount++;
	p->frame = kpage;
	sim_frame_put(s, frame);
	if (!s->frame[frame].mapcount) { /* its last mapping: the page is freed */
		s->work.merge_frees++;
		sim_charge(s, s->cfg.costs.merge_free_ns);
	}
	return 0;
}

/* try_to_merge_with_ksm_page: merge, then the item leaves its tree. */
static int merge_with_ksm_page(struct sim *s, uint32_t slot, uint32_t frame, uint32_t kpage,
			       uint32_t pinned)
{
	if (!vma_is_mergeable(s, slot))
		return -1;
	if (merge_one_page(s, slot, frame, kpage, pinned) != 0)
		return -1;
	sim_remove_rmap_item_from_tree(s, slot);
	return 0;
}

/* try_to_merge_with_zero_page: 0 when merged, or when the VMA went away. */
static int merge_with_zero_page(struct sim *s, uint32_t slot, uint32_t frame)
{
	if (!s->knobs.value[WL_KNOB_USE_ZERO_PAGES] ||
	    !sim_detector(s)->zero_candidate(s, slot, frame))
		return -1;
	if (!vma_is_mergeable(s, slot))
		return 0;
	return merge_one_page(s, slot, frame, KPAGE_ZERO, 0);
}

/* break_cow: undo a half-made KSM page mapped only here. */
static void break_cow(struct sim *s, uint32_t slot)
{
	if (vma_is_mergeable(s, slot))
		sim_unshare_page(s, slot);
}

/* Merge two unstable pages into a new KSM page; its frame, or 0. */
static uint32_t merge_two_pages(struct sim *s, uint32_t slot, uint32_t frame, uint32_t tree_slot,
				uint32_t tree_frame)
{
	if (merge_with_ksm_page(s, slot, frame, KPAGE_NONE, tree_frame) != 0)
		return 0;
	if (merge_with_ksm_page(s, tree_slot, tree_frame, frame, 0) != 0) {
		break_cow(s, slot);
		return 0;
	}
	return frame;
}

/*
 * The detector's verdict on a non-KSM page. For detectors other than the
 * kernel's rule, that rule is also evaluated (uncharged) as the truth, and
 * the rmap_item keeps that checksum, so their mistakes are counted.
 */
static bool page_changed(struct sim *s, uint32_t slot, uint32_t frame)
{
	const struct sim_detector_ops *d = sim_detector(s);
	uint32_t before, now;
	bool verdict, truth;

	if (d->kernel_rule)
		return d->page_changed(s, slot, frame);
	before = s->page[slot].checksum;
	now = sim_frame_checksum(s, slot, frame);
	verdict = d->page_changed(s, slot, frame);
	truth = before != now;
	s->page[slot].checksum = now;
	if (verdict && !truth)
		s->work.false_volatile++;
	else if (!verdict && truth)
		s->work.false_stable++;
	return verdict;
}

/* After the stable tree had nothing: the unstable tree, maybe a new KSM page. */
static void try_unstable(struct sim *s, uint32_t slot, uint32_t frame)
{
	uint32_t tree_frame = 0, tree_slot, kframe;
	bool split;

	tree_slot = unstable_search_insert(s, slot, frame, &tree_frame);
	if (!tree_slot)
		return;
	kframe = merge_two_pages(s, slot, frame, tree_slot, tree_frame);
	split = (s->frame[frame].flags & FRAME_LARGE) && same_folio(s, frame, tree_frame);
	if (kframe) {
		uint32_t node = stable_tree_insert(s, kframe);

		stable_tree_append(s, tree_slot, node);
		stable_tree_append(s, slot, node);
	} else if (split) {
		sim_split_folio(s, frame); /* no merge this time; the next visit can */
	}
}

/* Found a KSM page of equal content: map it here. */
static void merge_into_stable(struct sim *s, uint32_t slot, uint32_t frame, uint32_t kframe)
{
	if (merge_with_ksm_page(s, slot, frame, kframe, 0) == 0)
		stable_tree_append(s, slot, s->frame[kframe].stable_node);
}

void sim_cmp_and_merge_page(struct sim *s, uint32_t slot)
{
	uint32_t frame = s->page[slot].frame, node = 0, kframe;
	struct sim_page *r = &s->page[slot];
	bool ksm = s->frame[frame].flags & FRAME_KSM;

	if (ksm) {
		node = s->frame[frame].stable_node;
		if ((r->rflags & RMAP_STABLE) && r->st.head == node)
			return; /* the steady state */
	} else if (sim_kernel_row(s)->checksum_first) {
		if (s->cfg.mutant == SIM_MUTANT_COW_KEEPS_STABLE_ITEM && (r->rflags & RMAP_STABLE))
			goto kept; /* mutant: a COWed page keeps its stable item */
		sim_remove_rmap_item_from_tree(s, slot);
kept:
		if (page_changed(s, slot, frame))
			return;
		if (merge_with_zero_page(s, slot, frame) == 0)
			return;
	}
	kframe = stable_tree_search(s, frame);
	if (kframe && kframe == frame && (r->rflags & RMAP_STABLE) && r->st.head == node)
		return;
	sim_remove_rmap_item_from_tree(s, slot);
	if (kframe) {
		merge_into_stable(s, slot, frame, kframe);
		return;
	}
	if (!sim_kernel_row(s)->checksum_first && !ksm) { /* the stable search came first */
		if (page_changed(s, slot, frame))
			return;
		if (merge_with_zero_page(s, slot, frame) == 0)
			return;
	}
	try_unstable(s, slot, frame);
}

/* --- sysfs: removing unmapped stable nodes ---------------------------------------- */

/* remove_stable_node: gone if stale; EBUSY while its page is mapped. */
static bool node_busy(struct sim *s, uint32_t node)
{
	return sim_snode_alive(s, node);
}

/* remove_stable_node_chain: true when a page of the node is still mapped. */
static bool chain_busy(struct sim *s, uint32_t node)
{
	uint32_t dup, next;

	if (s->snode[node].kind != SNODE_CHAIN)
		return node_busy(s, node);
	for (dup = s->snode[node].first; dup; dup = next) {
		next = s->snode[dup].dup_next;
		if (node_busy(s, dup))
			return true;
	}
	free_chain(s, node);
	return false;
}

int sim_remove_all_stable_nodes(struct sim *s)
{
	int err = 0;

	for (unsigned nid = 0; nid < s->cfg.nr_nodes; nid++)
		while (s->stable_root[nid]) {
			if (chain_busy(s, s->stable_root[nid])) {
				err = EBUSY;
				break;
			}
		}
	return err;
}
