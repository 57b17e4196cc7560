/*
 * mc_invariant.c - the invariants, each named, and what exactly each checks
 * (the docs say the same in prose, docs/model-checking.md).
 *
 * State invariants look at one state: the shadow of expected contents
 * against the simulator's bytes (data), PTE permissions (ksm-readonly), the
 * trees' structure (stable-tree, unstable-tree), the kept counters against a
 * recount (counters), node separation (numa), the locks (deadlock).
 * Transition invariants also look
 * at the state before a ksmd step and at the page it processed (visit,
 * max-sharing, volatility). Liveness's goal, mc_all_merged(), is here; the
 * K-scan runs that test it are the search's (mc_search.c). Everything reads
 * the simulator's internals (sim_internal.h) and changes nothing.
 */
#include "mc_internal.h"

#include <stdarg.h>
#include <string.h>

static const struct {
	const char *name, *doc;
} invariants[MC_INV_COUNT] = {
	[MC_INV_DATA] = { "data",
		"every mapped page of every live process reads exactly the bytes the user last "
		"wrote to it (its initial contents, then the last write at the configured "
		"offset), compared byte for byte with the simulator's page through its content "
		"store; a page never touched reads zeros" },
	[MC_INV_KSM_READONLY] = { "ksm-readonly",
		"no PTE maps a KSM page, or KSM's zero page, writable" },
	[MC_INV_STABLE_TREE] = { "stable-tree",
		"each stable tree is a valid red-black tree (links, colours, black height) whose "
		"live nodes are in strictly increasing memcmp order of their pages, so it holds "
		"one node per content; a chain's dups belong to it, live ones share one content; "
		"every stable node is in a tree or a chain; each node's rmap list holds "
		"rmap_hlist_len items, all flagged stable and pointing back at it; a KSM page "
		"that names a stable node is that node's page" },
	[MC_INV_UNSTABLE_TREE] = { "unstable-tree",
		"each unstable tree is a valid red-black tree of exactly the rmap_items flagged "
		"unstable in the current full scan for that tree's node; unstable items of the "
		"previous scan (not yet revisited) are in no tree; none is older" },
	[MC_INV_VISIT] = { "visit",
		"right after ksmd processes a page, its rmap_item agrees with its page: a stable "
		"item's page maps its stable node's KSM page, and a KSM page's item is linked "
		"into that page's stable node" },
	[MC_INV_MAX_SHARING] = { "max-sharing",
		"a ksmd step links an rmap_item into a stable node that then holds more than "
		"max_page_sharing items only when the page already mapped that KSM page before "
		"(a forked KSM page: the kernel's max_page_sharing_bypass); merges never exceed it" },
	[MC_INV_COUNTERS] = { "counters",
		"pages_shared, pages_sharing, pages_unshared, ksm_rmap_items, stable_node_chains, "
		"stable_node_dups and ksm_zero_pages, each process's ksm_rmap_items, "
		"ksm_zero_pages, ksm_merging_pages and mergeable page count, each area's item "
		"count, each stable node's rmap_hlist_len and each page's mapcount equal their "
		"recount from the state (pages_scanned, pages_skipped and full_scans only count "
		"events and are not checked)" },
	[MC_INV_NUMA] = { "numa",
		"with merge_across_nodes = 0, every page mapping a KSM page belongs to a mapping "
		"on that page's NUMA node, and every live stable node's page is on its tree's node" },
	[MC_INV_VOLATILITY] = { "volatility",
		"a page whose bytes changed since ksmd last processed it (its item's stored "
		"checksum differs from the new one) is called volatile: at that visit it enters "
		"no unstable tree and (kernel 6.18; 6.10 may join an existing KSM page first) "
		"is merged with nothing" },
	[MC_INV_DEADLOCK] = { "deadlock",
		"no lock is held by an actor that has finished (a store that returned with "
		"ksm_thread_mutex held: ksmd's next batch and every later store that takes it "
		"would wait forever), and no state has nothing left but steps waiting for a lock; "
		"ksmd holds ksm_thread_mutex for a whole batch, and the run, merge_across_nodes "
		"and max_page_sharing stores take it" },
	[MC_INV_LIVENESS] = { "liveness",
		"once the user stops (from every state reached by a user action, with run = 1 and "
		"no store in progress), liveness_scans full scans of ksmd alone leave every group "
		"of equal mergeable pages merged: its pages that are not KSM pages share one "
		"frame, and if there are such pages every KSM page of the group is full "
		"(max_page_sharing mappings); with use_zero_pages every zero-filled page is "
		"KSM's zero page or a KSM page; and no ksmd step ever undoes that" },
};

const char *mc_invariant_name(int inv)
{
	return inv >= 0 && inv < MC_INV_COUNT ? invariants[inv].name : "?";
}

const char *mc_invariant_doc(int inv)
{
	return inv >= 0 && inv < MC_INV_COUNT ? invariants[inv].doc : "";
}

int mc_invariant_lookup(const char *name)
{
	for (int i = 0; i < MC_INV_COUNT; i++)
		if (strcmp(invariants[i].name, name) == 0)
			return i;
	return -1;
}

/* --- shared helpers -------------------------------------------------------------- */

struct ctx {
	const struct mc_config *cfg;
	const struct sim *s;
	char *msg;
	size_t len;
};

static bool failf(const struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool failf(const struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->msg)
		return false; /* the caller only wants the verdict */
	va_start(ap, fmt);
	vsnprintf(c->msg, c->len, fmt, ap);
	va_end(ap);
	return false;
}

/* "page 2 of a in p0" */
static void page_name(const struct mc_config *cfg, const struct sim *s, uint32_t slot, char *buf,
		      size_t len)
{
	uint32_t ai = sim_area_of_slot(s, slot);
	const struct sim_area *a = &s->area[ai];
	char proc[80];

	mc_process_name(cfg, s, a->mm, proc, sizeof(proc));
	snprintf(buf, len, "page %u of %s in %s", slot - a->slot,
		 a->label < cfg->nregions ? cfg->region[a->label].name : "?", proc);
}

/* The content token a page reads: its frame's, or zeros. */
static uint64_t page_token(const struct sim *s, uint32_t slot)
{
	const struct sim_page *p = &s->page[slot];

	if ((p->pte & (PTE_PRESENT | PTE_KSM_ZERO)) != PTE_PRESENT)
		return 0;
	return s->frame[p->frame].content;
}

static bool maps_frame(const struct sim *s, uint32_t slot)
{
	return (s->page[slot].pte & (PTE_PRESENT | PTE_KSM_ZERO)) == PTE_PRESENT;
}

static bool snode_alive(const struct sim *s, uint32_t n)
{
	const struct sim_snode *node = &s->snode[n];
	const struct sim_frame *f;

	if (node->kind != SNODE_PLAIN && node->kind != SNODE_DUP)
		return false;
	f = &s->frame[node->kpfn];
	return node->kpfn < s->nframes && f->mapcount && (f->flags & FRAME_KSM) &&
	       f->stable_node == n;
}

static bool mm_live(const struct sim *s, uint32_t mm)
{
	return s->mm[mm].state == MM_ALIVE;
}

/* --- data ------------------------------------------------------------------------------ */

/* Does the content @token hold exactly the bytes of abstract content @c? */
static bool content_is(const struct mc_config *cfg, const struct sim *s, uint64_t token,
		       const struct mc_content *c)
{
	struct sim_patch_byte buf[SIM_PATCH_VIEW];
	const struct sim_patch_byte *patch;
	uint64_t base = cfg->values[c->base], ebase;

	if (!sim_content_is_patched(token))
		return c->plain && token == c->plain_value;
	if (c->plain)
		return false; /* patched contents are never uniform */
	/* canonical: patches are exactly the bytes that differ from the base */
	if (sim_content_is_base_with(&s->content, token, base, c->patch, c->npatch))
		return true;
	(void)sim_content_patches(&s->content, token, &ebase, buf, &patch);
	if (ebase == base)
		return false;
	/* another description of maybe the same bytes: compare them all */
	for (uint32_t o = 0; o < CONTENT_PAGE_SIZE; o++) {
		uint8_t want = (uint8_t)(base >> (8 * (o % CONTENT_WORD_SIZE)));

		for (unsigned i = 0; i < c->npatch; i++)
			if (c->patch[i].offset == o)
				want = c->patch[i].byte;
		if (sim_content_byte(&s->content, token, o) != want)
			return false;
	}
	return true;
}

static void describe_content(const struct mc_config *cfg, const struct mc_content *c,
			     char *buf, size_t len)
{
	if (!c->written)
		snprintf(buf, len, "%#llx", (unsigned long long)cfg->values[c->base]);
	else
		snprintf(buf, len, "%#llx with %#llx at offset %u",
			 (unsigned long long)cfg->values[c->base],
			 (unsigned long long)cfg->values[c->written - 1], cfg->offset);
}

static void describe_token(const struct sim *s, uint64_t token, char *buf, size_t len)
{
	struct sim_patch_byte window[SIM_PATCH_VIEW];
	const struct sim_patch_byte *patch;
	uint64_t base;
	uint32_t npatch;
	int n;

	if (!sim_content_is_patched(token)) {
		snprintf(buf, len, "%#llx", (unsigned long long)token);
		return;
	}
	npatch = sim_content_patches(&s->content, token, &base, window, &patch);
	n = snprintf(buf, len, "%#llx with bytes", (unsigned long long)base);
	for (uint32_t i = 0; i < npatch && i < 8 && n > 0 && (size_t)n < len; i++)
		n += snprintf(buf + n, len - (size_t)n, " [%u]=%#x", patch[i].offset,
			      patch[i].byte);
}

static bool check_data(const struct ctx *c, const struct mc_extra *x)
{
	const struct sim *s = c->s;

	for (uint32_t i = 0; i < s->narea; i++) {
		const struct sim_area *a = &s->area[i];

		if (a->dead || !mm_live(s, a->mm))
			continue;
		for (uint32_t p = 0; p < a->npages; p++) {
			uint32_t slot = a->slot + p;
			uint8_t id = slot < MC_MAX_SLOTS ? x->expect[slot] : MC_NO_CONTENT;
			uint64_t token;
			char where[160], want[96], got[160];

			if (!(s->page[slot].pte & PTE_MAPPED) || id == MC_NO_CONTENT)
				continue;
			token = page_token(s, slot);
			if (content_is(c->cfg, s, token, &c->cfg->content[id]))
				continue;
			page_name(c->cfg, s, slot, where, sizeof(where));
			describe_content(c->cfg, &c->cfg->content[id], want, sizeof(want));
			describe_token(s, token, got, sizeof(got));
			return failf(c, "%s reads %s, but the user last wrote %s", where, got, want);
		}
	}
	return true;
}

/* --- ksm-readonly ------------------------------------------------------------------ */

static bool check_readonly(const struct ctx *c)
{
	const struct sim *s = c->s;
	char where[160];

	for (uint32_t slot = 1; slot < s->nslots; slot++) {
		const struct sim_page *p = &s->page[slot];

		if (!(p->pte & PTE_PRESENT) || !(p->pte & PTE_WRITE))
			continue;
		if (!(p->pte & PTE_KSM_ZERO) && !(s->frame[p->frame].flags & FRAME_KSM))
			continue;
		page_name(c->cfg, s, slot, where, sizeof(where));
		return failf(c, "%s maps %s writable", where,
			     (p->pte & PTE_KSM_ZERO) ? "KSM's zero page" : "a KSM page");
	}
	return true;
}

/* --- red-black trees ---------------------------------------------------------------- */

struct rb_walk {
	struct rb_layout l;
	uint32_t limit;     /* more nodes than ids: a cycle */
	uint32_t count;
	const char *what;
	const struct ctx *c;
};

/*
 * Check the subtree at @n: parent links, no two reds in a row; returns its
 * black height, or -1 after failf().
 */
static int rb_check(struct rb_walk *w, uint32_t n, uint32_t parent, bool parent_red)
{
	const struct rb_links *l;
	int left, right;

	if (n == RB_NIL)
		return 1;
	if (++w->count > w->limit)
		return failf(w->c, "%s: a cycle in the tree links", w->what), -1;
	l = rb_at(&w->l, n);
	if (l->parent != parent)
		return failf(w->c, "%s: node %u's parent link is %u, not %u", w->what, n,
			     l->parent, parent), -1;
	if (!l->black && parent_red)
		return failf(w->c, "%s: red node %u has a red parent", w->what, n), -1;
	if ((left = rb_check(w, l->left, n, !l->black)) < 0 ||
	    (right = rb_check(w, l->right, n, !l->black)) < 0)
		return -1;
	if (left != right)
		return failf(w->c, "%s: black heights %d and %d under node %u", w->what, left,
			     right, n), -1;
	return left + (l->black ? 1 : 0);
}

static bool rb_valid(struct rb_walk *w, uint32_t root)
{
	if (root != RB_NIL && !rb_at(&w->l, root)->black)
		return failf(w->c, "%s: the root is red", w->what);
	return rb_check(w, root, RB_NIL, false) >= 0;
}

/* In-order successor (for walking a tree already checked). */
static uint32_t rb_next_node(const struct rb_layout *l, uint32_t n)
{
	uint32_t p;

	if (rb_at(l, n)->right != RB_NIL) {
		n = rb_at(l, n)->right;
		while (rb_at(l, n)->left != RB_NIL)
			n = rb_at(l, n)->left;
		return n;
	}
	while ((p = rb_at(l, n)->parent) != RB_NIL && rb_at(l, p)->right == n)
		n = p;
	return p;
}

/* --- stable-tree ------------------------------------------------------------------- */

/* The rmap list of a plain node or dup: items flagged stable, pointing back. */
static bool check_hlist(const struct ctx *c, uint32_t n, uint32_t *items)
{
	const struct sim *s = c->s;
	uint32_t prev = 0, count = 0;

	for (uint32_t slot = s->snode[n].first; slot; slot = s->page[slot].st.next) {
		const struct sim_page *r = &s->page[slot];

		if (slot >= s->nslots || ++count > s->nslots)
			return failf(c, "stable node %u: its rmap list is broken", n);
		if ((r->rflags & (RMAP_EXISTS | RMAP_STABLE)) != (RMAP_EXISTS | RMAP_STABLE) ||
		    (r->rflags & RMAP_UNSTABLE) || r->st.head != n || r->st.prev != prev)
			return failf(c, "stable node %u: item of page slot %u is not a stable item "
				     "linked to it", n, slot);
		prev = slot;
	}
	if ((int32_t)count != s->snode[n].hlist_len)
		return failf(c, "stable node %u: rmap_hlist_len is %d but %u items are linked", n,
			     s->snode[n].hlist_len, count);
	*items += count;
	return true;
}

/* A chain's dups: kind, back links, one content among the live ones. */
static bool check_chain(const struct ctx *c, uint32_t chain, uint32_t *seen, uint32_t *items,
			uint64_t *content, bool *live)
{
	const struct sim *s = c->s;
	uint32_t prev = 0;

	*live = false;
	for (uint32_t d = s->snode[chain].first; d; d = s->snode[d].dup_next) {
		const struct sim_snode *dup = &s->snode[d];
		uint64_t t;

		if (d >= s->nsnodes || ++*seen > s->nsnodes)
			return failf(c, "chain %u: its dup list is broken", chain);
		if (dup->kind != SNODE_DUP || dup->chain != chain || dup->dup_prev != prev ||
		    dup->nid != s->snode[chain].nid)
			return failf(c, "chain %u: node %u in its dup list is not its dup", chain, d);
		if (!check_hlist(c, d, items))
			return false;
		prev = d;
		if (!snode_alive(s, d))
			continue;
		t = s->frame[dup->kpfn].content;
		if (*live && sim_content_cmp(&s->content, t, *content) != 0)
			return failf(c, "chain %u: dups %u and another hold different contents", chain, d);
		*content = t;
		*live = true;
	}
	return true;
}

/* One stable tree: shape, node kinds, order of live contents. */
static bool check_stable_tree(const struct ctx *c, unsigned nid, uint32_t *seen, uint32_t *items)
{
	const struct sim *s = c->s;
	static const char what[] = "a stable tree";
	struct rb_walk w = { sim_stable_layout(s), s->nsnodes, 0, what, c };
	uint32_t root = s->stable_root[nid];
	uint64_t prev = 0;
	bool have_prev = false;

	if (!rb_valid(&w, root))
		return false;
	*seen += w.count;
	if (root == RB_NIL)
		return true;
	for (uint32_t n = rb_first(&w.l, root); n != RB_NIL; n = rb_next_node(&w.l, n)) {
		const struct sim_snode *node = &s->snode[n];
		uint64_t t = 0;
		bool live;

		if (node->kind != SNODE_PLAIN && node->kind != SNODE_CHAIN)
			return failf(c, "%s: node %u is neither a plain node nor a chain", what, n);
		if (node->nid != nid)
			return failf(c, "%s: node %u says it belongs to tree %u", what, n, node->nid);
		if (node->kind == SNODE_CHAIN) {
			if (!check_chain(c, n, seen, items, &t, &live))
				return false;
		} else {
			if (!check_hlist(c, n, items))
				return false;
			live = snode_alive(s, n);
			t = s->frame[node->kpfn].content;
		}
		if (!live)
			continue; /* stale: its page is gone, the kernel's walk drops it */
		if (have_prev && sim_content_cmp(&s->content, prev, t) >= 0)
			return failf(c, "%s: node %u's page is not above its predecessor's in memcmp "
				     "order (%s)", what, n,
				     sim_content_cmp(&s->content, prev, t) ? "out of order"
									    : "two nodes of one content");
		prev = t;
		have_prev = true;
	}
	return true;
}

static bool check_stable(const struct ctx *c)
{
	const struct sim *s = c->s;
	uint32_t seen = 0, items = 0, in_use = 0, stable_items = 0;

	for (unsigned nid = 0; nid < s->cfg.nr_nodes; nid++)
		if (!check_stable_tree(c, nid, &seen, &items))
			return false;
	for (uint32_t n = 1; n < s->nsnodes; n++)
		in_use += s->snode[n].kind != SNODE_FREE;
	if (seen != in_use)
		return failf(c, "%u stable nodes are in use but %u are in trees and chains", in_use,
			     seen);
	for (uint32_t slot = 1; slot < s->nslots; slot++)
		stable_items += (s->page[slot].rflags & RMAP_STABLE) != 0;
	if (stable_items != items)
		return failf(c, "%u items are flagged stable but %u are in stable nodes' lists",
			     stable_items, items);
	for (uint32_t f = 1; f < s->nframes; f++) {
		const struct sim_frame *fr = &s->frame[f];

		if (!fr->mapcount || !(fr->flags & FRAME_KSM) || !fr->stable_node)
			continue;
		if (fr->stable_node >= s->nsnodes || s->snode[fr->stable_node].kpfn != f ||
		    (s->snode[fr->stable_node].kind != SNODE_PLAIN &&
		     s->snode[fr->stable_node].kind != SNODE_DUP))
			return failf(c, "KSM page %u names stable node %u, which is not its node", f,
				     fr->stable_node);
	}
	return true;
}

/* --- unstable-tree ----------------------------------------------------------------- */

static bool check_unstable(const struct ctx *c)
{
	const struct sim *s = c->s;
	uint8_t gen = (uint8_t)(s->scan.seqnr - (mc_between_scans(s) ? 1 : 0));
	uint32_t in_trees = 0, current = 0;
	static const char what[] = "an unstable tree";

	for (unsigned nid = 0; nid < s->cfg.nr_nodes; nid++) {
		struct rb_walk w = { sim_unstable_layout(s), s->nslots, 0, what, c };
		uint32_t root = s->unstable_root[nid];

		if (!rb_valid(&w, root))
			return false;
		in_trees += w.count;
		if (root == RB_NIL)
			continue;
		for (uint32_t n = rb_first(&w.l, root); n != RB_NIL; n = rb_next_node(&w.l, n)) {
			const struct sim_page *r = &s->page[n];
			char where[160];

			if ((r->rflags & (RMAP_EXISTS | RMAP_UNSTABLE | RMAP_STABLE)) ==
				    (RMAP_EXISTS | RMAP_UNSTABLE) &&
			    r->nid == nid && r->seqnr == gen)
				continue;
			page_name(c->cfg, s, n, where, sizeof(where));
			return failf(c, "%s holds the item of %s, which is %s", what, where,
				     !(r->rflags & RMAP_UNSTABLE) ? "not flagged unstable"
				     : r->nid != nid ? "filed under another node"
						     : "left over from an earlier full scan");
		}
	}
	for (uint32_t slot = 1; slot < s->nslots; slot++) {
		const struct sim_page *r = &s->page[slot];
		uint8_t age;

		if (!(r->rflags & RMAP_UNSTABLE))
			continue;
		age = (uint8_t)(gen - r->seqnr);
		if (age > 1 || (r->rflags & RMAP_STABLE)) {
			char where[160];

			page_name(c->cfg, s, slot, where, sizeof(where));
			return failf(c, "the item of %s is flagged unstable %s", where,
				     age > 1 ? "from two or more full scans ago" : "and stable");
		}
		current += age == 0;
	}
	if (current != in_trees)
		return failf(c, "%u items are unstable in this full scan but the unstable trees "
			     "hold %u", current, in_trees);
	return true;
}

/* --- counters ------------------------------------------------------------------------ */

/* The per-process counts of a recount. */
struct recount_mm {
	int64_t items, zero, merging;
	uint64_t mergeable;
};

/*
 * What the counters should say, counted from the state. Only the entries of
 * the machine's processes and mappings are zeroed and filled: this runs on
 * every new state.
 */
struct recount {
	int64_t shared, sharing, unshared, rmap_items, chains, dups, zero;
	struct recount_mm mm[MC_MAX_PROCS];
	uint64_t area_items[MC_MAX_SLOTS]; /* a mapping has at least one page */
};

static void recount_pages(const struct sim *s, struct recount *r)
{
	for (uint32_t i = 0; i < s->narea; i++) {
		const struct sim_area *a = &s->area[i];
		struct recount_mm *m = &r->mm[a->mm];
		uint64_t items = 0;

		for (uint32_t p = 0; p < a->npages; p++) {
			const struct sim_page *pg = &s->page[a->slot + p];

			items += (pg->rflags & RMAP_EXISTS) != 0;
			if (pg->rflags & RMAP_UNSTABLE)
				r->unshared++;
			if (pg->rflags & RMAP_STABLE)
				m->merging++;
			if ((pg->pte & (PTE_PRESENT | PTE_KSM_ZERO)) == (PTE_PRESENT | PTE_KSM_ZERO)) {
				r->zero++;
				m->zero++;
			}
			if ((pg->pte & (PTE_MAPPED | PTE_MERGEABLE)) == (PTE_MAPPED | PTE_MERGEABLE))
				m->mergeable++;
		}
		r->rmap_items += (int64_t)items;
		m->items += (int64_t)items;
		r->area_items[i] = items;
	}
}

static void recount_nodes(const struct sim *s, struct recount *r)
{
	for (uint32_t n = 1; n < s->nsnodes; n++) {
		const struct sim_snode *node = &s->snode[n];
		int64_t len = 0;

		if (node->kind == SNODE_CHAIN)
			r->chains++;
		if (node->kind == SNODE_DUP)
			r->dups++;
		if (node->kind != SNODE_PLAIN && node->kind != SNODE_DUP)
			continue;
		for (uint32_t slot = node->first; slot && len <= s->nslots; slot = s->page[slot].st.next)
			len++;
		if (len) {
			r->shared++;
			r->sharing += len - 1;
		}
	}
}

#define SAME(c, name, kept, counted)                                                        \
	do {                                                                                \
		if ((int64_t)(kept) != (int64_t)(counted))                                  \
			return failf(c, "%s is %lld, but the state holds %lld", name,       \
				     (long long)(kept), (long long)(counted));              \
	} while (0)

static bool check_mapcounts(const struct ctx *c)
{
	const struct sim *s = c->s;
	uint32_t maps[4 * MC_MAX_SLOTS];

	if (s->nframes > sizeof(maps) / sizeof(maps[0]))
		return true; /* more frames than a configuration can make: not checked */
	for (uint32_t f = 0; f < s->nframes; f++)
		maps[f] = 0;
	for (uint32_t slot = 1; slot < s->nslots; slot++)
		if (maps_frame(s, slot) && s->page[slot].frame < s->nframes)
			maps[s->page[slot].frame]++;
	for (uint32_t f = 1; f < s->nframes; f++)
		if (maps[f] != s->frame[f].mapcount)
			return failf(c, "page frame %u has mapcount %u but %u PTEs map it", f,
				     s->frame[f].mapcount, maps[f]);
	return true;
}

static bool check_counters(const struct ctx *c)
{
	const struct sim *s = c->s;
	uint32_t nmm = s->nmm < MC_MAX_PROCS ? s->nmm : MC_MAX_PROCS;
	struct recount r;

	if (s->narea > MC_MAX_SLOTS)
		return true; /* more mappings than a configuration can make: not checked */
	r.shared = r.sharing = r.unshared = r.rmap_items = r.chains = r.dups = r.zero = 0;
	for (uint32_t m = 0; m < nmm; m++)
		r.mm[m] = (struct recount_mm){ 0, 0, 0, 0 };
	recount_pages(s, &r);
	recount_nodes(s, &r);
	SAME(c, "pages_shared", s->count.pages_shared, r.shared);
	SAME(c, "pages_sharing", s->count.pages_sharing, r.sharing);
	SAME(c, "pages_unshared", s->count.pages_unshared, r.unshared);
	SAME(c, "ksm_rmap_items", s->count.rmap_items, r.rmap_items);
	SAME(c, "stable_node_chains", s->count.stable_node_chains, r.chains);
	SAME(c, "stable_node_dups", s->count.stable_node_dups, r.dups);
	SAME(c, "ksm_zero_pages", s->count.ksm_zero_pages, r.zero);
	/* A kernel whose fork copies the parent's per-mm counts (the bug the
	 * late-2025 fix removed) keeps them off the recount from then on. */
	bool exact = !sim_kernel_row(s)->fork_copies_counts;

	for (uint32_t m = 0; m < nmm; m++) {
		const struct sim_mm *mm = &s->mm[m];
		const struct recount_mm *rm = &r.mm[m];
		const char *what = exact && mm->rmap_items != rm->items ? "ksm_rmap_items"
				   : mm->zero_pages != rm->zero ? "ksm_zero_pages"
				   : exact && mm->merging_pages != rm->merging ? "ksm_merging_pages"
				   : mm->mergeable_pages != rm->mergeable ? "mergeable page count"
									  : NULL;
		char proc[80];

		if (!what)
			continue;
		mc_process_name(c->cfg, s, m, proc, sizeof(proc));
		return failf(c, "%s's %s is wrong (ksm_rmap_items %lld, recount %lld; "
			     "ksm_zero_pages %lld, recount %lld; ksm_merging_pages %lld, recount "
			     "%lld; mergeable pages %llu, recount %llu)", proc, what,
			     (long long)mm->rmap_items, (long long)rm->items,
			     (long long)mm->zero_pages, (long long)rm->zero,
			     (long long)mm->merging_pages, (long long)rm->merging,
			     (unsigned long long)mm->mergeable_pages,
			     (unsigned long long)rm->mergeable);
	}
	for (uint32_t i = 0; i < s->narea; i++)
		if (s->area[i].nitems != r.area_items[i])
			return failf(c, "mapping %u counts %llu rmap_items, but %llu exist", i,
				     (unsigned long long)s->area[i].nitems,
				     (unsigned long long)r.area_items[i]);
	return check_mapcounts(c);
}

/* --- numa ------------------------------------------------------------------------------- */

static bool check_numa(const struct ctx *c)
{
	const struct sim *s = c->s;
	char where[160];

	if (s->knobs.value[WL_KNOB_MERGE_ACROSS_NODES])
		return true;
	for (uint32_t slot = 1; slot < s->nslots; slot++) {
		const struct sim_frame *f;
		uint16_t node;

		if (!maps_frame(s, slot))
			continue;
		f = &s->frame[s->page[slot].frame];
		node = s->area[sim_area_of_slot(s, slot)].node;
		if (!(f->flags & FRAME_KSM) || f->node == node)
			continue;
		page_name(c->cfg, s, slot, where, sizeof(where));
		return failf(c, "merge_across_nodes = 0, but %s (node %u) maps a KSM page on "
			     "node %u", where, node, f->node);
	}
	for (uint32_t n = 1; n < s->nsnodes; n++) {
		const struct sim_snode *node = &s->snode[n];

		if (snode_alive(s, n) && s->frame[node->kpfn].node != node->nid)
			return failf(c, "merge_across_nodes = 0, but stable tree %u holds a KSM page "
				     "on node %u", node->nid, s->frame[node->kpfn].node);
	}
	return true;
}

/* --- transition invariants: the page a ksmd step processed ------------------------------ */

static bool check_visit(const struct ctx *c, uint32_t slot)
{
	const struct sim *s = c->s;
	const struct sim_page *r = &s->page[slot];
	char where[160];

	if (r->rflags & RMAP_STABLE) {
		uint32_t n = r->st.head;

		if (!snode_alive(s, n) || !maps_frame(s, slot) || r->frame != s->snode[n].kpfn) {
			page_name(c->cfg, s, slot, where, sizeof(where));
			return failf(c, "after ksmd processed %s, its item is linked to stable node %u "
				     "but the page does not map that node's KSM page", where, n);
		}
	}
	if (maps_frame(s, slot) && (s->frame[r->frame].flags & FRAME_KSM) &&
	    snode_alive(s, s->frame[r->frame].stable_node) &&
	    (!(r->rflags & RMAP_STABLE) || r->st.head != s->frame[r->frame].stable_node)) {
		page_name(c->cfg, s, slot, where, sizeof(where));
		return failf(c, "after ksmd processed %s, a KSM page, its item is not linked to "
			     "the page's stable node", where);
	}
	return true;
}

static bool check_max_sharing(const struct ctx *c, const struct sim *parent, uint32_t slot)
{
	const struct sim *s = c->s;
	const struct sim_page *r = &s->page[slot], *before = &parent->page[slot];
	uint64_t limit = s->knobs.value[WL_KNOB_MAX_PAGE_SHARING];
	uint32_t n;
	char where[160];

	if (!(r->rflags & RMAP_STABLE))
		return true;
	n = r->st.head;
	if ((before->rflags & RMAP_STABLE) && before->st.head == n)
		return true; /* not linked by this step */
	if ((uint64_t)s->snode[n].hlist_len <= limit)
		return true;
	if (maps_frame(parent, slot) && before->frame == s->snode[n].kpfn)
		return true; /* a forked KSM page: max_page_sharing_bypass */
	page_name(c->cfg, s, slot, where, sizeof(where));
	return failf(c, "ksmd merged %s into a KSM page that now has %d mappings, above "
		     "max_page_sharing = %llu", where, s->snode[n].hlist_len,
		     (unsigned long long)limit);
}

static bool check_volatility(const struct ctx *c, const struct sim *parent, uint32_t slot)
{
	const struct sim *s = c->s;
	const struct sim_page *r = &s->page[slot], *before = &parent->page[slot];
	bool merged, became_ksm_itself;
	char where[160];

	if (!maps_frame(parent, slot) || (parent->frame[before->frame].flags & FRAME_KSM))
		return true; /* only non-KSM pages go through the volatility test */
	if (!(before->rflags & RMAP_EXISTS) || before->checksum == 0 ||
	    !(r->rflags & RMAP_EXISTS) || r->checksum == before->checksum)
		return true; /* no history, or unchanged bytes */
	became_ksm_itself = maps_frame(s, slot) && r->frame == before->frame &&
			    (s->frame[r->frame].flags & FRAME_KSM);
	merged = (s->page[slot].pte & PTE_KSM_ZERO) ||
		 (maps_frame(s, slot) && (s->frame[r->frame].flags & FRAME_KSM));
	if (!(r->rflags & RMAP_UNSTABLE) &&
	    !(!sim_kernel_row(s)->checksum_first
		      ? became_ksm_itself || (s->page[slot].pte & PTE_KSM_ZERO) /* may join a KSM page */
		      : merged))
		return true;
	page_name(c->cfg, s, slot, where, sizeof(where));
	return failf(c, "the bytes of %s changed since ksmd last processed it, yet this visit %s",
		     where, (r->rflags & RMAP_UNSTABLE) ? "put it into the unstable tree"
							: "merged it");
}

/* --- deadlock ----------------------------------------------------------------------------- */

/*
 * A lock whose holder has finished: every step that takes the lock waits
 * forever. Only a store can be such a holder (ksmd holds the mutex only
 * while its batch runs, and its batch always goes on).
 */
static bool check_lock_holders(const struct ctx *c, const struct mc_extra *x)
{
	for (int l = 0; l < MC_LOCK_COUNT; l++) {
		const struct mc_store *st;

		if (x->lock[l] < MC_HOLDER_STORE)
			continue;
		st = &c->cfg->store[x->lock[l] - MC_HOLDER_STORE];
		return failf(c, "%s is still held by the store %s=%s, which has returned: ksmd's "
			     "next batch and every later store that takes %s wait for it forever",
			     mc_lock_name((enum mc_lock)l), wl_knob_info(st->knob)->name, st->text,
			     mc_lock_name((enum mc_lock)l));
	}
	return true;
}

/* Nothing can run, yet ksmd waits for a lock: every actor is blocked for good. */
static bool check_someone_can_run(const struct ctx *c, const struct mc_extra *x)
{
	if (!mc_ksmd_blocked(c->s, x) || mc_enabled(c->cfg, c->s, x, NULL, 0) > 0)
		return true;
	return failf(c, "no step can run: ksmd waits for %s, and no one else can act",
		     mc_lock_name(MC_LOCK_KSM_THREAD_MUTEX));
}

static bool check_deadlock(const struct ctx *c, const struct mc_extra *x)
{
	return check_lock_holders(c, x) && check_someone_can_run(c, x);
}

/* --- entry points ----------------------------------------------------------------------- */

/*
 * The invariants checked on every new state, and on every ksmd transition,
 * in the order of enum mc_invariant (the first that fails is the one
 * reported): C(invariant, check) with the context c, the state's extra x,
 * the transition's parent and page slot. Unrolled: a loop over every
 * invariant and a switch cost more than the checks on a small state.
 */
#define STATE_CHECKS(C)                                                                     \
	C(MC_INV_DATA, check_data(&c, x))                                                   \
	C(MC_INV_KSM_READONLY, check_readonly(&c))                                          \
	C(MC_INV_STABLE_TREE, check_stable(&c))                                             \
	C(MC_INV_UNSTABLE_TREE, check_unstable(&c))                                         \
	C(MC_INV_COUNTERS, check_counters(&c))                                              \
	C(MC_INV_NUMA, check_numa(&c))                                                      \
	C(MC_INV_DEADLOCK, check_deadlock(&c, x))
#define TRANSITION_CHECKS(C)                                                                \
	C(MC_INV_VISIT, check_visit(&c, slot))                                              \
	C(MC_INV_MAX_SHARING, check_max_sharing(&c, parent, slot))                          \
	C(MC_INV_VOLATILITY, check_volatility(&c, parent, slot))

_Static_assert(MC_INV_DATA < MC_INV_KSM_READONLY && MC_INV_KSM_READONLY < MC_INV_STABLE_TREE &&
	       MC_INV_STABLE_TREE < MC_INV_UNSTABLE_TREE && MC_INV_UNSTABLE_TREE < MC_INV_COUNTERS &&
	       MC_INV_COUNTERS < MC_INV_NUMA && MC_INV_NUMA < MC_INV_DEADLOCK &&
	       MC_INV_VISIT < MC_INV_MAX_SHARING && MC_INV_MAX_SHARING < MC_INV_VOLATILITY,
	       "STATE_CHECKS and TRANSITION_CHECKS list the invariants in enum order");

#define RUN_CHECK(inv, holds)                                                               \
	if (cfg->check[inv] && !(holds))                                                    \
		return (inv) + 1;

int mc_check_state(const struct mc_config *cfg, const struct sim *s, const struct mc_extra *x,
		   char *msg, size_t len)
{
	struct ctx c = { cfg, s, msg, len };

	STATE_CHECKS(RUN_CHECK)
	return 0;
}

int mc_check_transition(const struct mc_config *cfg, const struct sim *parent,
			const struct mc_effect *eff, const struct sim *s, char *msg, size_t len)
{
	struct ctx c = { cfg, s, msg, len };
	uint32_t slot = eff->slot;

	if (!eff->processed)
		return 0;
	TRANSITION_CHECKS(RUN_CHECK)
	return 0;
}

/* --- liveness's goal ------------------------------------------------------------------- */

/* A page ksmd would scan: present, in a mergeable faulted mapping of a registered mm. */
static bool eligible(const struct sim *s, uint32_t slot)
{
	const struct sim_page *p = &s->page[slot];

	return (p->pte & (PTE_MAPPED | PTE_MERGEABLE | PTE_PRESENT | PTE_KSM_ZERO)) ==
		       (PTE_MAPPED | PTE_MERGEABLE | PTE_PRESENT) &&
	       !(s->frame[p->frame].flags & FRAME_LARGE);
}

struct member {
	uint32_t slot, frame;
	uint64_t token;
	unsigned nid;
	bool ksm;
};

static size_t collect(const struct sim *s, struct member *m, size_t max)
{
	size_t n = 0;

	for (uint32_t i = 0; i < s->narea; i++) {
		const struct sim_area *a = &s->area[i];

		if (a->dead || a->thp || !a->anon_vma || !mm_live(s, a->mm) || !s->mm[a->mm].registered)
			continue;
		for (uint32_t p = 0; p < a->npages && n < max; p++) {
			uint32_t slot = a->slot + p, f = s->page[slot].frame;

			if (!eligible(s, slot))
				continue;
			m[n++] = (struct member){ slot, f, s->frame[f].content,
						  sim_tree_nid(s, s->frame[f].node),
						  (s->frame[f].flags & FRAME_KSM) != 0 };
		}
	}
	return n;
}

/* Is group @g (members with equal bytes and tree) merged as far as ksmd goes? */
static bool group_merged(const struct ctx *c, const struct member *m, const size_t *g, size_t n)
{
	const struct sim *s = c->s;
	uint64_t limit = s->knobs.value[WL_KNOB_MAX_PAGE_SHARING];
	uint32_t lone = 0;
	bool spare_room = false;
	char a[160], b[160];

	for (size_t i = 0; i < n; i++) {
		const struct member *p = &m[g[i]];

		if (p->ksm) {
			spare_room |= s->frame[p->frame].mapcount < limit;
			continue;
		}
		if (lone && p->frame != lone) {
			if (!c->msg)
				return false;
			page_name(c->cfg, s, p->slot, a, sizeof(a));
			for (size_t j = 0; j < n; j++)
				if (!m[g[j]].ksm && m[g[j]].frame == lone)
					page_name(c->cfg, s, m[g[j]].slot, b, sizeof(b));
			return failf(c, "%s and %s hold equal bytes but are still not merged", b, a);
		}
		lone = p->frame;
	}
	if (!lone || !spare_room)
		return true;
	if (!c->msg)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!m[g[i]].ksm)
			page_name(c->cfg, s, m[g[i]].slot, a, sizeof(a));
	return failf(c, "%s is still not merged, though a KSM page of its content has room "
		     "for it (below max_page_sharing = %llu)", a, (unsigned long long)limit);
}

bool mc_all_merged(const struct mc_config *cfg, const struct sim *s, char *msg, size_t len)
{
	struct ctx c = { cfg, s, msg, len };
	struct member m[MC_MAX_SLOTS];
	size_t n = collect(s, m, MC_MAX_SLOTS), g[MC_MAX_SLOTS];
	bool done[MC_MAX_SLOTS]; /* only the first n are used: zeroed one by one, as
				    a constant-size initializer costs more than the walk */
	bool zero_pages = s->knobs.value[WL_KNOB_USE_ZERO_PAGES];

	for (size_t i = 0; i < n; i++)
		done[i] = false;

	for (size_t i = 0; i < n; i++) {
		size_t k = 0;
		char where[160];

		if (zero_pages && m[i].token == 0 && !m[i].ksm) {
			if (!msg)
				return false;
			page_name(cfg, s, m[i].slot, where, sizeof(where));
			return failf(&c, "%s is zero-filled and use_zero_pages = 1, but it is not "
				     "KSM's zero page", where);
		}
		if (done[i])
			continue;
		for (size_t j = i; j < n; j++)
			if (!done[j] && m[j].token == m[i].token && m[j].nid == m[i].nid) {
				done[j] = true;
				g[k++] = j;
			}
		if (k >= 2 && !group_merged(&c, m, g, k))
			return false;
	}
	return true;
}

bool mc_liveness_applies(const struct sim *s, const struct mc_extra *x)
{
	/* ... and ksmd is not waiting for a lock that no one will release */
	return sim_run(s) == 1 && x->pending < 0 && !mc_ksmd_blocked(s, x);
}
