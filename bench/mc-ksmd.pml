/*
 * mc-ksmd.pml - bench/mc-ksmd.conf in Promela, for the SPIN cross-check of
 * ksmkit check's state count with ksmd running (bench/spin-crosscheck).
 *
 * What it models: one process, NP pages that all start with value 1, writes
 * of values 1..NV at offset 0, and ksmd one page at a time (ksmd = page):
 * the checksum gate (a page whose checksum changed since its last visit
 * stores the new one and enters no tree), the unstable tree (emptied when a
 * full scan starts; items inserted in the previous scan keep their flag and
 * links, one scan old, until their page is visited), and the stable tree of
 * KSM pages: merging two equal pages, joining an existing KSM page, COW on a
 * write to a KSM page, and stale stable nodes (their page freed) dropped
 * when a walk meets them. smart_scan = 0, so no page is ever skipped;
 * max_page_sharing is never reached, so there are no chains.
 *
 * The bijection with the checker's fingerprint (sim/sim_fields.h): every
 * field below is one of the simulator's fingerprinted fields, or a function
 * of them, under the same ids (page slots 1..NP, frame ids, stable node ids
 * offset by NP; 0 is "none"), and every field the fingerprint leaves out
 * under its condition (an item's tree links while it is in no tree, a free
 * frame's content, a free stable node's links) is kept at 0 here, so that
 * two states are equal here exactly when their fingerprints are. What the
 * checker keeps and is a function of what is here is left out: the counters
 * (pages_shared, ..., those of the process and the mapping, each node's
 * rmap_hlist_len is kept), the PTE bits (writable and dirty exactly when
 * the frame is not a KSM page), the shadow of expected contents (the
 * frames' contents), and ksm_thread_mutex with batch_left (held exactly
 * while the cursor is inside the mm). A page's content is one number c: the
 * page holds value 1 with c written at offset 0 (c = 1: as filled), so
 * memcmp orders contents as numbers. A stored checksum is the content it
 * was taken of, 0 for a new rmap_item (which stores checksum 0). The order
 * of the checks is kernel 6.18's: the checksum before the stable tree.
 *
 * The red-black trees are the kernel's algorithm as sim/sim_rbtree.c has
 * it, written again over arrays (the same insert fix-up cases, erase by
 * successor and colour repair), because shapes are state. Each ksmd step
 * and each write is one d_step, as each is one step of the checker;
 * temporaries are hidden, so they are not state.
 */
#ifndef NP
#define NP 4            /* pages */
#endif
#ifndef NV
#define NV 3            /* write values 1..NV */
#endif
#ifndef WRITES
#define WRITES 4        /* the write budget */
#endif
#define NF (NP + 2)     /* frame ids 0..NP+1: a COW of a page mapped once allocates first */
#define NS 8            /* stable node ids (asserted) */

#define R_UNSTABLE 2    /* rmap_item flags, as sim_internal.h's */
#define R_STABLE 4

/*
 * pages (page slots 1..NP): the PTE's frame and the rmap_item. SPIN stores
 * its initial state before any statement runs, and an array starts with one
 * value everywhere, so the state keeps a page's frame as its distance from
 * the page's own slot (frame p at first) and its content, not the frame's:
 * the frames' mapcounts and contents are functions of these two, derived at
 * the start of each step into hidden arrays (derive, commit below).
 */
byte pfd[NP + 1];       /* frame mapped, minus the slot (mod 256) */
byte pct[NP + 1] = 1;   /* its content (every page starts with value 1) */
byte rfl[NP + 1];       /* 0: no rmap_item; else 1 | R_UNSTABLE | R_STABLE */
byte rck[NP + 1];       /* stored checksum: the content it was taken of, 0 when new */
bit rage[NP + 1];       /* unstable: full scans since it was inserted (0 or 1) */
byte sth[NP + 1], stn[NP + 1], stp[NP + 1]; /* stable: node, hlist next and prev */

/* frames: KSM flag, stable node (free: next free) */
byte fsn[NF];
bit fksm[NF];
byte nframes = NP + 1;
byte ffree;

/*
 * stable nodes: plain (1) or free (0), first rmap (free: next free), page,
 * rmap_hlist_len. The simulator's stable node k is node NP + k here, so that
 * one set of tree links serves both trees: tP, tL, tR, tB at 1..NP are the
 * unstable tree's (page slots), from NP + 1 on the stable tree's.
 */
#define NT (NP + NS)
bit skind[NT];
byte sfirst[NT], skpfn[NT], slen[NT];
byte nsnodes = NP + 1;
byte sfree;

byte tP[NT], tL[NT], tR[NT];
bit tB[NT];             /* tree links and colour (1 black) */

byte sroot, uroot;
byte pos;               /* cursor: 0 between full scans, k after page k */
byte writes = WRITES;

/* --- temporaries (not state) ---------------------------------------------- */
hidden byte pfr[NP + 1];             /* frame mapped */
hidden byte fmc[NF], fct[NF];        /* frames: mapcount, content while mapped */
hidden byte rb_node, rb_parent, rb_g, rb_u, rb_t, rb_x, rb_child, rb_succ, rb_par2, rb_c2;
hidden byte rb_rebal, rb_sib, rb_near, rb_far, rsp, rb_root;
hidden byte rb_more, rb_done, rb_nb, rb_sb;
hidden byte sa_f, rn_slot, rn_next, ri_node, ss_n, ss_kf, si_n, si_par, si_new, tu_n, tu_par;
hidden byte tu_found, tu_tf, vf, wf, wn, fa_id;
hidden byte sa_ok, si_left, tu_left;

/* --- red-black trees (sim/sim_rbtree.c), over tP, tL, tR, tB and rb_root -------- */

inline change_child(old, new, parent)
{
	if
	:: parent == 0 -> rb_root = new
	:: else ->
		if
		:: tL[parent] == old -> tL[parent] = new
		:: else -> tR[parent] = new
		fi
	fi
}

inline rotate_set_parents(old, new, colour)
{
	rsp = tP[old];
	tP[new] = rsp;
	tB[new] = tB[old];
	tP[old] = new;
	tB[old] = colour;
	change_child(old, new, rsp)
}

/* @rb_parent red, the left child of @rb_g; rb_more: continue upwards */
inline insert_fix_left()
{
	rb_u = tR[rb_g];
	if
	:: rb_u != 0 && !tB[rb_u] ->
		tB[rb_u] = 1;
		tB[rb_parent] = 1;
		rb_node = rb_g;
		rb_parent = tP[rb_g];
		tB[rb_g] = 0;
		rb_more = 1
	:: else ->
		rb_t = tR[rb_parent];
		if
		:: rb_node == rb_t ->
			rb_t = tL[rb_node];
			tR[rb_parent] = rb_t;
			tL[rb_node] = rb_parent;
			if
			:: rb_t != 0 -> tP[rb_t] = rb_parent; tB[rb_t] = 1
			:: else -> skip
			fi;
			tP[rb_parent] = rb_node;
			tB[rb_parent] = 0;
			rb_parent = rb_node;
			rb_t = tR[rb_node]
		:: else -> skip
		fi;
		tL[rb_g] = rb_t;
		tR[rb_parent] = rb_g;
		if
		:: rb_t != 0 -> tP[rb_t] = rb_g; tB[rb_t] = 1
		:: else -> skip
		fi;
		rotate_set_parents(rb_g, rb_parent, 0);
		rb_more = 0
	fi
}

inline insert_fix_right()
{
	rb_u = tL[rb_g];
	if
	:: rb_u != 0 && !tB[rb_u] ->
		tB[rb_u] = 1;
		tB[rb_parent] = 1;
		rb_node = rb_g;
		rb_parent = tP[rb_g];
		tB[rb_g] = 0;
		rb_more = 1
	:: else ->
		rb_t = tL[rb_parent];
		if
		:: rb_node == rb_t ->
			rb_t = tR[rb_node];
			tL[rb_parent] = rb_t;
			tR[rb_node] = rb_parent;
			if
			:: rb_t != 0 -> tP[rb_t] = rb_parent; tB[rb_t] = 1
			:: else -> skip
			fi;
			tP[rb_parent] = rb_node;
			tB[rb_parent] = 0;
			rb_parent = rb_node;
			rb_t = tL[rb_node]
		:: else -> skip
		fi;
		tR[rb_g] = rb_t;
		tL[rb_parent] = rb_g;
		if
		:: rb_t != 0 -> tP[rb_t] = rb_g; tB[rb_t] = 1
		:: else -> skip
		fi;
		rotate_set_parents(rb_g, rb_parent, 0);
		rb_more = 0
	fi
}

/* link @n as the @lft (1) or right child of @par (0: as the rb_root), rebalance */
inline rb_insert(n, par, lft)
{
	rb_node = n;
	rb_parent = par;
	tP[rb_node] = rb_parent;
	tB[rb_node] = 0;
	tL[rb_node] = 0;
	tR[rb_node] = 0;
	if
	:: rb_parent == 0 -> rb_root = rb_node
	:: rb_parent != 0 && lft -> tL[rb_parent] = rb_node
	:: rb_parent != 0 && !lft -> tR[rb_parent] = rb_node
	fi;
	do
	:: rb_parent == 0 -> tP[rb_node] = 0; tB[rb_node] = 1; break
	:: rb_parent != 0 && tB[rb_parent] -> break
	:: rb_parent != 0 && !tB[rb_parent] ->
		rb_g = tP[rb_parent];
		if
		:: rb_parent != tR[rb_g] -> insert_fix_left()
		:: else -> insert_fix_right()
		fi;
		if
		:: rb_more -> skip
		:: else -> break
		fi
	od
}

/* black deficit below rb_parent, on rb_node's side (the left one) */
inline erase_fix_left()
{
	rb_sib = tR[rb_parent];
	if
	:: !tB[rb_sib] ->
		rb_near = tL[rb_sib];
		tR[rb_parent] = rb_near;
		tL[rb_sib] = rb_parent;
		tP[rb_near] = rb_parent;
		tB[rb_near] = 1;
		rotate_set_parents(rb_parent, rb_sib, 0);
		rb_sib = rb_near
	:: else -> skip
	fi;
	rb_far = tR[rb_sib];
	rb_done = 0;
	rb_more = 0;
	if
	:: rb_far == 0 || tB[rb_far] ->
		rb_near = tL[rb_sib];
		if
		:: rb_near == 0 || tB[rb_near] ->
			tB[rb_sib] = 0;
			if
			:: !tB[rb_parent] -> tB[rb_parent] = 1
			:: else ->
				rb_node = rb_parent;
				rb_parent = tP[rb_node];
				rb_more = rb_parent != 0
			fi;
			rb_done = 1
		:: else ->
			rb_far = tR[rb_near];
			tL[rb_sib] = rb_far;
			tR[rb_near] = rb_sib;
			tR[rb_parent] = rb_near;
			if
			:: rb_far != 0 -> tP[rb_far] = rb_sib; tB[rb_far] = 1
			:: else -> skip
			fi;
			rb_far = rb_sib;
			rb_sib = rb_near
		fi
	:: else -> skip
	fi;
	if
	:: !rb_done ->
		rb_near = tL[rb_sib];
		tR[rb_parent] = rb_near;
		tL[rb_sib] = rb_parent;
		tP[rb_far] = rb_sib;
		tB[rb_far] = 1;
		if
		:: rb_near != 0 -> tP[rb_near] = rb_parent
		:: else -> skip
		fi;
		rotate_set_parents(rb_parent, rb_sib, 1)
	:: else -> skip
	fi
}

inline erase_fix_right()
{
	rb_sib = tL[rb_parent];
	if
	:: !tB[rb_sib] ->
		rb_near = tR[rb_sib];
		tL[rb_parent] = rb_near;
		tR[rb_sib] = rb_parent;
		tP[rb_near] = rb_parent;
		tB[rb_near] = 1;
		rotate_set_parents(rb_parent, rb_sib, 0);
		rb_sib = rb_near
	:: else -> skip
	fi;
	rb_far = tL[rb_sib];
	rb_done = 0;
	rb_more = 0;
	if
	:: rb_far == 0 || tB[rb_far] ->
		rb_near = tR[rb_sib];
		if
		:: rb_near == 0 || tB[rb_near] ->
			tB[rb_sib] = 0;
			if
			:: !tB[rb_parent] -> tB[rb_parent] = 1
			:: else ->
				rb_node = rb_parent;
				rb_parent = tP[rb_node];
				rb_more = rb_parent != 0
			fi;
			rb_done = 1
		:: else ->
			rb_far = tL[rb_near];
			tR[rb_sib] = rb_far;
			tL[rb_near] = rb_sib;
			tL[rb_parent] = rb_near;
			if
			:: rb_far != 0 -> tP[rb_far] = rb_sib; tB[rb_far] = 1
			:: else -> skip
			fi;
			rb_far = rb_sib;
			rb_sib = rb_near
		fi
	:: else -> skip
	fi;
	if
	:: !rb_done ->
		rb_near = tR[rb_sib];
		tL[rb_parent] = rb_near;
		tR[rb_sib] = rb_parent;
		tP[rb_far] = rb_sib;
		tB[rb_far] = 1;
		if
		:: rb_near != 0 -> tP[rb_near] = rb_parent
		:: else -> skip
		fi;
		rotate_set_parents(rb_parent, rb_sib, 1)
	:: else -> skip
	fi
}

/* the node erased is rb_x; rb_rebal: where the colour repair starts, or 0 */
inline erase_with_successor()
{
	rb_child = tR[rb_x];
	rb_succ = rb_child;
	rb_nb = tB[rb_x];
	rb_t = tL[rb_child];
	if
	:: rb_t == 0 ->
		rb_par2 = rb_succ;
		rb_c2 = tR[rb_succ]
	:: else ->
		do
		:: rb_par2 = rb_succ;
			rb_succ = rb_t;
			rb_t = tL[rb_t];
			if
			:: rb_t == 0 -> break
			:: else -> skip
			fi
		od;
		rb_c2 = tR[rb_succ];
		tL[rb_par2] = rb_c2;
		tR[rb_succ] = rb_child;
		tP[rb_child] = rb_succ
	fi;
	rb_t = tL[rb_x];
	tL[rb_succ] = rb_t;
	tP[rb_t] = rb_succ;
	change_child(rb_x, rb_succ, tP[rb_x]);
	rb_sb = tB[rb_succ];
	tP[rb_succ] = tP[rb_x];
	tB[rb_succ] = rb_nb;
	if
	:: rb_c2 != 0 -> tP[rb_c2] = rb_par2; tB[rb_c2] = 1; rb_rebal = 0
	:: rb_c2 == 0 && rb_sb -> rb_rebal = rb_par2
	:: rb_c2 == 0 && !rb_sb -> rb_rebal = 0
	fi
}

/* remove @n from the tree and rebalance (its own links are left as they are) */
inline rb_erase(n)
{
	rb_x = n;
	rb_child = tR[rb_x];
	rb_t = tL[rb_x];
	rb_rebal = 0;
	if
	:: rb_t == 0 ->
		change_child(rb_x, rb_child, tP[rb_x]);
		if
		:: rb_child != 0 -> tP[rb_child] = tP[rb_x]; tB[rb_child] = tB[rb_x]
		:: rb_child == 0 && tB[rb_x] -> rb_rebal = tP[rb_x]
		:: rb_child == 0 && !tB[rb_x] -> skip
		fi
	:: rb_t != 0 && rb_child == 0 ->
		tP[rb_t] = tP[rb_x];
		tB[rb_t] = tB[rb_x];
		change_child(rb_x, rb_t, tP[rb_x])
	:: rb_t != 0 && rb_child != 0 -> erase_with_successor()
	fi;
	if
	:: rb_rebal != 0 ->
		rb_node = 0;
		rb_parent = rb_rebal;
		do
		:: rb_node != tR[rb_parent] ->
			erase_fix_left();
			if
			:: rb_more -> skip
			:: else -> break
			fi
		:: rb_node == tR[rb_parent] ->
			erase_fix_right();
			if
			:: rb_more -> skip
			:: else -> break
			fi
		od
	:: else -> skip
	fi;
	/* id 0 is no node: whatever landed there is not state */
	tP[0] = 0; tL[0] = 0; tR[0] = 0; tB[0] = 0
}

/* --- frames (sim/sim_state.c) ------------------------------------------------- */

/* fa_id: a new frame with content @c, from the free list first */
inline frame_alloc(c)
{
	if
	:: ffree != 0 -> fa_id = ffree; ffree = fsn[fa_id]; fsn[fa_id] = 0
	:: else -> fa_id = nframes; nframes++; assert(nframes <= NF)
	fi;
	fct[fa_id] = c;
	fmc[fa_id] = 1
}

/* one mapping fewer; the last one frees the frame onto the free list */
inline frame_put(f)
{
	fmc[f]--;
	if
	:: fmc[f] == 0 -> fct[f] = 0; fksm[f] = 0; fsn[f] = ffree; ffree = f
	:: else -> skip
	fi
}

/* --- sim_merge.c ---------------------------------------------------------------- */

/*
 * cmp_and_merge_page (kernel 6.18: the checksum before the stable tree) as
 * a loop over phases, so that the code of an erase from a tree and of a
 * stale stable node's removal is written once (SPIN bounds the size of a
 * d_step): ph is the phase, ERASE and KILL are subroutines that return to
 * the phase in er_ret and ki_ret.
 */
#define PH_DONE 0
#define PH_START 1      /* the page's item leaves its tree */
#define PH_GATE 2       /* the checksum gate */
#define PH_SEARCH 3     /* stable_tree_search, one level per round */
#define PH_RESTART 4    /* ... a stale node left the tree: from the root again */
#define PH_UNSTABLE 5   /* unstable_tree_search_insert */
#define PH_MERGED 6     /* merge_two_pages done: the tree page's item left the tree */
#define PH_INSERT 7     /* stable_tree_insert, one level per round */
#define PH_REINSERT 8   /* ... a stale node left the tree: from the root again */
#define PH_NEWNODE 9    /* the new stable node and both items in it */
#define PH_ERASE 10     /* rb_erase(er_node) from the stable (er_stable) or unstable tree */
#define PH_KILL 11      /* remove_node_from_stable_tree(ki_node) */
#define PH_KILLED 12

hidden byte ph, er_ret, er_node, er_stable, ki_ret, ki_node;

inline clear_stable_links(p)
{
	sth[p] = 0; stn[p] = 0; stp[p] = 0
}

inline clear_unstable_links(p)
{
	tP[p] = 0; tL[p] = 0; tR[p] = 0; tB[p] = 0; rage[p] = 0
}

/* sa_ok: is stable node @n's frame still its KSM page (the keyhole check)? */
inline snode_alive(n)
{
	sa_f = skpfn[n];
	sa_ok = fmc[sa_f] != 0 && fksm[sa_f] && fsn[sa_f] == n
}

/* go to PH_KILL for stale node @n, then back to phase @ret */
inline kill(n, ret)
{
	ki_node = n;
	ki_ret = ret;
	ph = PH_KILL
}

/* go to PH_ERASE for node @n of the stable (@stable) or unstable tree, then to @ret */
inline erase(n, stable, ret)
{
	er_node = n;
	er_stable = stable;
	er_ret = ret;
	ph = PH_ERASE
}

/* the item of page @p joins stable node @n's hlist, at the head */
inline stable_tree_append(p, n)
{
	slen[n]++;
	rfl[p] = 1 | R_STABLE;
	sth[p] = n;
	stp[p] = 0;
	stn[p] = sfirst[n];
	if
	:: sfirst[n] != 0 -> stp[sfirst[n]] = p
	:: else -> skip
	fi;
	sfirst[n] = p
}

/* remove_rmap_item_from_tree for page @p, then PH_GATE */
inline phase_start(p)
{
	if
	:: rfl[p] & R_STABLE ->
		ri_node = sth[p];
		snode_alive(ri_node);
		if
		:: !sa_ok -> kill(ri_node, PH_GATE) /* the whole node goes, this item with it */
		:: else ->
			if
			:: stp[p] != 0 -> stn[stp[p]] = stn[p]
			:: else -> sfirst[ri_node] = stn[p]
			fi;
			if
			:: stn[p] != 0 -> stp[stn[p]] = stp[p]
			:: else -> skip
			fi;
			slen[ri_node]--;
			rfl[p] = 1;
			clear_stable_links(p);
			ph = PH_GATE
		fi
	:: rfl[p] & R_UNSTABLE ->
		rfl[p] = 1;
		if
		:: rage[p] == 0 -> erase(p, 0, PH_GATE) /* which clears its links */
		:: else -> clear_unstable_links(p); ph = PH_GATE
		fi
	:: else -> ph = PH_GATE
	fi
}

/* the checksum gate: a page changed since its last visit is volatile */
inline phase_gate(p)
{
	if
	:: rck[p] != fct[vf] -> rck[p] = fct[vf]; ph = PH_DONE
	:: else -> ss_n = sroot; ph = PH_SEARCH
	fi
}

/* one level of stable_tree_search (max_page_sharing is never reached) */
inline phase_search(p)
{
	if
	:: ss_n == 0 -> tu_n = uroot; tu_par = 0; ph = PH_UNSTABLE
	:: else ->
		snode_alive(ss_n);
		if
		:: !sa_ok -> kill(ss_n, PH_RESTART)
		:: sa_ok && fct[vf] < fct[skpfn[ss_n]] -> ss_n = tL[ss_n]
		:: sa_ok && fct[vf] > fct[skpfn[ss_n]] -> ss_n = tR[ss_n]
		:: sa_ok && fct[vf] == fct[skpfn[ss_n]] ->
			/* merge_into_stable: map the KSM page, join its node */
			ss_kf = skpfn[ss_n];
			fmc[ss_kf]++;
			pfr[p] = ss_kf;
			frame_put(vf);
			stable_tree_append(p, fsn[ss_kf]);
			ph = PH_DONE
		fi
	fi
}

/* unstable_tree_search_insert: merge with an equal page, or insert this one */
inline phase_unstable(p)
{
	do
	:: tu_n == 0 ->
		rfl[p] = 1 | R_UNSTABLE;
		rage[p] = 0;
		rb_root = uroot;
		rb_insert(p, tu_par, tu_left);
		uroot = rb_root;
		ph = PH_DONE;
		break
	:: tu_n != 0 && fct[vf] < fct[pfr[tu_n]] -> tu_par = tu_n; tu_n = tL[tu_n]; tu_left = 1
	:: tu_n != 0 && fct[vf] > fct[pfr[tu_n]] -> tu_par = tu_n; tu_n = tR[tu_n]; tu_left = 0
	:: tu_n != 0 && fct[vf] == fct[pfr[tu_n]] ->
		/* merge_two_pages: this page becomes the KSM page, the tree page maps it */
		assert(pfr[tu_n] != vf);
		tu_found = tu_n;
		tu_tf = pfr[tu_found];
		fksm[vf] = 1;
		fsn[vf] = 0;
		fmc[vf]++;
		pfr[tu_found] = vf;
		frame_put(tu_tf);
		rfl[tu_found] = 1;
		erase(tu_found, 0, PH_MERGED);
		break
	od
}

/* one level of stable_tree_insert for the new KSM page vf */
inline phase_insert()
{
	if
	:: si_n == 0 -> ph = PH_NEWNODE
	:: else ->
		snode_alive(si_n);
		if
		:: !sa_ok -> kill(si_n, PH_REINSERT)
		:: sa_ok && fct[vf] < fct[skpfn[si_n]] -> si_par = si_n; si_n = tL[si_n]; si_left = 1
		:: sa_ok && fct[vf] > fct[skpfn[si_n]] -> si_par = si_n; si_n = tR[si_n]; si_left = 0
		:: sa_ok && fct[vf] == fct[skpfn[si_n]] -> assert(false) /* would make a chain */
		fi
	fi
}

/* the new plain stable node for vf, with the tree page's item, then this page's */
inline phase_newnode(p)
{
	if
	:: sfree != 0 -> si_new = sfree; sfree = sfirst[si_new]; sfirst[si_new] = 0
	:: else -> si_new = nsnodes; nsnodes++; assert(nsnodes <= NT)
	fi;
	skind[si_new] = 1;
	skpfn[si_new] = vf;
	rb_root = sroot;
	rb_insert(si_new, si_par, si_left);
	sroot = rb_root;
	fsn[vf] = si_new;
	stable_tree_append(tu_found, si_new);
	stable_tree_append(p, si_new);
	ph = PH_DONE
}

/* remove_node_from_stable_tree: every item leaves at once, then the node */
inline phase_kill()
{
	rn_slot = sfirst[ki_node];
	do
	:: rn_slot == 0 -> break
	:: else ->
		rn_next = stn[rn_slot];
		slen[ki_node]--;
		rfl[rn_slot] = 1;
		clear_stable_links(rn_slot);
		rn_slot = rn_next
	od;
	erase(ki_node, 1, PH_KILLED)
}

inline phase_killed()
{
	skind[ki_node] = 0;
	tP[ki_node] = 0; tL[ki_node] = 0; tR[ki_node] = 0; tB[ki_node] = 0;
	skpfn[ki_node] = 0; slen[ki_node] = 0;
	sfirst[ki_node] = sfree;
	sfree = ki_node;
	ph = ki_ret
}

/* rb_erase, with the erased node's own links cleared (they are not state) */
inline phase_erase()
{
	if
	:: er_stable -> rb_root = sroot
	:: else -> rb_root = uroot
	fi;
	rb_erase(er_node);
	if
	:: er_stable -> sroot = rb_root
	:: else -> uroot = rb_root
	fi;
	if
	:: er_stable -> tP[er_node] = 0; tL[er_node] = 0; tR[er_node] = 0; tB[er_node] = 0
	:: else -> clear_unstable_links(er_node)
	fi;
	ph = er_ret
}

inline cmp_and_merge_page(p)
{
	vf = pfr[p];
	if
	:: fksm[vf] -> assert((rfl[p] & R_STABLE) && sth[p] == fsn[vf]) /* the steady state */
	:: else ->
		ph = PH_START;
		do
		:: ph == PH_DONE -> break
		:: ph == PH_START -> phase_start(p)
		:: ph == PH_GATE -> phase_gate(p)
		:: ph == PH_SEARCH -> phase_search(p)
		:: ph == PH_RESTART -> ss_n = sroot; ph = PH_SEARCH
		:: ph == PH_UNSTABLE -> phase_unstable(p)
		:: ph == PH_MERGED -> si_par = 0; si_n = sroot; ph = PH_INSERT
		:: ph == PH_INSERT -> phase_insert()
		:: ph == PH_REINSERT -> si_par = 0; si_n = sroot; ph = PH_INSERT
		:: ph == PH_NEWNODE -> phase_newnode(p)
		:: ph == PH_KILL -> phase_kill()
		:: ph == PH_KILLED -> phase_killed()
		:: ph == PH_ERASE -> phase_erase()
		od
	fi
}

/* --- the steps ------------------------------------------------------------------ */

/* the working copies: frames mapped, mapcounts and contents */
inline derive()
{
	wn = 0;
	do
	:: wn == NF -> break
	:: else -> fmc[wn] = 0; fct[wn] = 0; wn++
	od;
	wn = 1;
	do
	:: wn > NP -> break
	:: else ->
		pfr[wn] = (pfd[wn] + wn) % 256;
		fmc[pfr[wn]]++;
		fct[pfr[wn]] = pct[wn];
		wn++
	od
}

/* back into the state: each page's frame and content */
inline commit()
{
	wn = 1;
	do
	:: wn > NP -> break
	:: else ->
		pfd[wn] = (pfr[wn] + 256 - wn) % 256;
		pct[wn] = fct[pfr[wn]];
		wn++
	od;
	wn = 0 /* a statement after the loop, inside the d_step */
}

/* sim_ksmd_step: the next page (a new rmap_item at its first visit), or the wrap */
inline ksmd()
{
	d_step {
		derive();
		if
		:: pos == 0 -> uroot = 0 /* a full scan starts: the unstable tree empties */
		:: else -> skip
		fi;
		if
		:: pos < NP ->
			pos++;
			if
			:: rfl[pos] == 0 -> rfl[pos] = 1; rck[pos] = 0
			:: else -> skip
			fi;
			cmp_and_merge_page(pos)
		:: else ->
			/* the wrap: this scan's unstable items are one scan old */
			pos = 0;
			wn = 1;
			do
			:: wn > NP -> break
			:: else ->
				if
				:: rfl[wn] & R_UNSTABLE -> assert(rage[wn] == 0); rage[wn] = 1
				:: else -> skip
				fi;
				wn++
			od
		fi;
		commit()
	}
}

/* a write of @w at offset 0 of page @p: in place, or a COW of a KSM page */
inline write(p, w)
{
	d_step {
		writes > 0 ->
		derive();
		wf = pfr[p];
		if
		:: fksm[wf] ->
			frame_alloc(fct[wf]);
			frame_put(wf);
			pfr[p] = fa_id;
			wf = fa_id
		:: else -> skip
		fi;
		fct[wf] = w;
		writes--;
		commit()
	}
}

/* writes of values 1..NV (at most 4) to page @p */
#define WRITE_ANY(p, w) :: write(p, w)
#if NV >= 4
#define WRITES_TO(p) WRITE_ANY(p, 1) WRITE_ANY(p, 2) WRITE_ANY(p, 3) WRITE_ANY(p, 4)
#elif NV == 3
#define WRITES_TO(p) WRITE_ANY(p, 1) WRITE_ANY(p, 2) WRITE_ANY(p, 3)
#elif NV == 2
#define WRITES_TO(p) WRITE_ANY(p, 1) WRITE_ANY(p, 2)
#else
#define WRITES_TO(p) WRITE_ANY(p, 1)
#endif

active proctype user()
{
end:
	do
	:: ksmd()
	WRITES_TO(1)
	WRITES_TO(2)
#if NP >= 3
	WRITES_TO(3)
#endif
#if NP >= 4
	WRITES_TO(4)
#endif
#if NP >= 5
	WRITES_TO(5)
#endif
	od
}
