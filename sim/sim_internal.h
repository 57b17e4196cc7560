/*
 * sim_internal.h - the simulated machine, field by field.
 *
 * The model, top down (read this before any sim_*.c file):
 *
 * Memory. Processes ("mm") own areas: one anonymous mapping each, a run of
 * virtual pages at increasing addresses. Every virtual page of every area has
 * a "page slot", an index into the page[] pool: what the page table says
 * and KSM's rmap_item for that mm and address, when it exists.
 * A present PTE maps a frame (frames[]): a physical page with a content token
 * (sim_content.h), a mapcount, a NUMA node and, for a KSM page, its stable
 * node. KSM's zero page is not a frame: a PTE flag. THP folios are blocks of
 * 512 consecutive, 512-aligned frame ids flagged LARGE. VMA flags (mapped,
 * mergeable) live in each PTE, since the simulator never needs a VMA as an
 * object: only "is this address in a mergeable VMA" and "has the mapping
 * ever been faulted" (the anon_vma), which is per area.
 *
 * KSM. The mm_slot list is a circular list of mm ids with a head, and the
 * scan cursor (ksm_scan) points into it, as in mm/ksm.c. An rmap_item is
 * identified by its page slot. Unstable trees link rmap_items; stable trees
 * link stable nodes (snodes): plain nodes, chains and dups, with each node's
 * items in an hlist threaded through the rmap_items (newest first, like
 * hlist_add_head). Trees are red-black trees shaped exactly like the kernel's
 * (sim_rbtree.h), one stable and one unstable tree per NUMA node when
 * merge_across_nodes = 0. A stable node is stale when its frame is no longer
 * its KSM page (the kernel's keyhole check): the frame was freed, perhaps
 * reused.
 *
 * Not modelled: swap, page migration (so migrate_nodes stays empty), memory
 * hotplug, locks and trylocks (always succeed), allocation failure, GUP pins
 * (so write-protection never fails on refcounts). Everything else that
 * changes a counter is.
 *
 * Ids: index 0 of every pool is unused, so 0 means "none".
 *
 * A field added to any struct here is described in sim_fields.h (state,
 * observed or cache, and how the model checker folds it), or hashing,
 * equality and the model checker's fingerprint will not see it.
 */
#ifndef KSMKIT_SIM_INTERNAL_H
#define KSMKIT_SIM_INTERNAL_H

#include <assert.h>

#include "sim.h"
#include "sim_content.h"
#include "sim_mutant.h"
#include "sim_rbtree.h"

#define SIM_THP_PAGES 512u
#define SIM_MAX_NODES 64u
#define SIM_NO_SLOT UINT32_MAX /* the mm_slot list head, in mm links */

/* --- page tables ---------------------------------------------------------- */

enum sim_pte_flag {
	PTE_MAPPED = 1 << 0,    /* the address is inside a VMA */
	PTE_MERGEABLE = 1 << 1, /* ... with VM_MERGEABLE */
	PTE_PRESENT = 1 << 2,   /* maps a frame (or the zero page) */
	PTE_WRITE = 1 << 3,     /* writable */
	PTE_DIRTY = 1 << 4,     /* hardware dirty bit */
	PTE_KSM_ZERO = 1 << 5,  /* maps the zero page, placed by KSM (dirty-marked) */
	PTE_SOFT_DIRTY = 1 << 6, /* written since the last clear_refs (detectors) */
};

/*
 * One virtual page of one area: its PTE and KSM's rmap_item for it, side by
 * side in 28 bytes, because a tree walk needs both for every node it visits.
 * The unstable tree's links and the stable hlist's share a union; seqnr,
 * nid and walk follow the (packed) tree links and are meaningful only while
 * the item is RMAP_UNSTABLE.
 */
struct sim_page {
	uint32_t frame;     /* PTE: frame mapped, 0 when not present or the zero page */
	uint8_t pte;        /* PTE: enum sim_pte_flag */
	uint8_t rflags;     /* rmap_item: enum sim_rmap_flag */
	uint8_t age;        /* smart scan: visits as a non-KSM page, capped at 255 */
	uint8_t skips;      /* smart scan: remaining_skips */
	uint32_t checksum;  /* oldchecksum: the checksum at the last checksum visit */
	union {
		struct {
			struct rb_links rb; /* unstable tree links, while RMAP_UNSTABLE */
			uint8_t seqnr;      /* low byte of seqnr when put in the unstable tree */
			uint8_t nid;        /* the unstable tree it is in */
			uint16_t walk;      /* the walk that put it there (SIM_WALK_*, sim_memo.c) */
		};
		struct {
			uint32_t head;       /* its stable node, while RMAP_STABLE */
			uint32_t next, prev; /* that node's hlist (prev 0 at the head) */
		} st;
	};
};

/*
 * sim_page.walk: the unstable-tree walk that inserted the item, for a scan
 * that repeats it (sim_memo.c): the levels it compared in the low six bits,
 * the memcmp bytes it read beyond one a level in the ten above; SIM_WALK_NONE
 * when that does not fit, or when the page changed since.
 */
#define SIM_WALK_LEVELS_MASK 0x3fu
#define SIM_WALK_MAX_LEVELS 62u
#define SIM_WALK_EXTRA_SHIFT 6u
#define SIM_WALK_MAX_EXTRA 1022u
#define SIM_WALK_NONE 0xffffu

/* --- frames ---------------------------------------------------------------- */

enum sim_frame_flag {
	FRAME_KSM = 1 << 0,         /* a KSM page (stable_node may still be 0) */
	FRAME_LARGE = 1 << 1,       /* part of a THP folio */
	FRAME_CSUM_VALID = 1 << 2,  /* checksum caches the content's checksum */
};

/*
 * 16 bytes, one per simulated page: the stable node and the checksum cache
 * share a word, because only a page that is not KSM has its checksum taken
 * and only a KSM page has a stable node (a page that becomes KSM stays KSM
 * until it is freed); the mapcount, the flags and the NUMA node share
 * another. A THP folio's marker for the dirty detector is kept beside the
 * frames, one per folio (sim.folio_seen). So a frame is mapped at most
 * SIM_MAX_MAPCOUNT times: a fork that could take one past that less
 * max_page_sharing (the merges a KSM page may still take) fails with ENOMEM.
 */
#define SIM_MAPCOUNT_BITS 23u
#define SIM_MAX_MAPCOUNT ((UINT32_C(1) << SIM_MAPCOUNT_BITS) - 1)
/* max_page_sharing the simulator takes (the kernel's goes to INT_MAX): half,
 * so that forks keep room (sim_fork) */
#define SIM_MAX_PAGE_SHARING (SIM_MAX_MAPCOUNT / 2)

struct sim_deferred; /* sim_deferred.c */

struct sim_frame {
	uint64_t content;     /* token; meaningless when free */
	uint32_t mapcount : SIM_MAPCOUNT_BITS; /* PTEs mapping it; 0 = free */
	uint32_t flags : 3;   /* enum sim_frame_flag */
	uint32_t node : 6;    /* NUMA node, below SIM_MAX_NODES */
	union {
		uint32_t stable_node; /* KSM page: the stable node that owns it, or 0;
				       * free: the next free frame */
		uint32_t checksum;    /* any other page: cached, see FRAME_CSUM_VALID */
	};
};

/* The frame's stable node as state: 0 for a page that is not KSM. */
static inline uint32_t sim_frame_stable_node(const struct sim_frame *f)
{
	return !f->mapcount || (f->flags & FRAME_KSM) ? f->stable_node : 0;
}

/* Every simulated page costs one of each: keep them small (bench/sim-throughput). */
_Static_assert(sizeof(struct sim_page) == 28, "struct sim_page grew");
_Static_assert(sizeof(struct sim_frame) == 16, "struct sim_frame grew");
_Static_assert(SIM_MAX_NODES <= 64, "sim_frame.node is six bits");

/* --- rmap_items (in struct sim_page) ---------------------------------------- */

enum sim_rmap_flag {
	RMAP_EXISTS = 1 << 0,   /* an rmap_item exists for this page slot */
	RMAP_UNSTABLE = 1 << 1, /* UNSTABLE_FLAG: a node of an unstable tree */
	RMAP_STABLE = 1 << 2,   /* STABLE_FLAG: in a stable node's hlist */
};

/* --- stable nodes ----------------------------------------------------------- */

enum sim_snode_kind {
	SNODE_FREE,
	SNODE_PLAIN, /* a tree node with its own KSM page */
	SNODE_CHAIN, /* a tree node whose dups have the KSM pages */
	SNODE_DUP,   /* one KSM page of a chain */
};

struct sim_snode {
	struct rb_links rb;  /* PLAIN and CHAIN: stable tree links */
	uint8_t kind;
	uint16_t nid;        /* the stable tree it belongs to */
	uint32_t kpfn;       /* PLAIN, DUP: its frame */
	int32_t hlist_len;   /* PLAIN, DUP: rmap_hlist_len */
	uint32_t first;      /* PLAIN, DUP: first rmap (page slot); CHAIN: first dup */
	union {
		struct {
			uint32_t chain;      /* DUP: its chain */
			uint32_t dup_next, dup_prev; /* DUP: the chain's dup list (prev 0 at the head) */
		};
		/*
		 * CHAIN: an index of its dups, kept exact as they change, so that
		 * stable_node_dup's choice needs no walk when nothing is stale
		 * (sim_merge.c, choose_dup): how many of its dups have room
		 * (0 < hlist_len < max_page_sharing, stale or not), how many are
		 * stale (their frame was freed; the kernel finds them by walking)
		 * and how many there are (what the kernel's walk looks at when
		 * none has room: its cost).
		 */
		struct {
			uint32_t room_dups;
			uint32_t stale_dups;
			uint32_t ndups;
		};
	};
	uint64_t prune_time; /* CHAIN: jiffies of the last prune */
};

/* --- processes and areas -------------------------------------------------- */

enum sim_mm_state { MM_ALIVE, MM_EXITED };

struct sim_mm {
	uint8_t state;
	bool registered;    /* MMF_VM_MERGEABLE: it has an mm_slot */
	bool merge_any;     /* MMF_VM_MERGE_ANY (prctl) */
	uint32_t slot_prev, slot_next; /* mm_slot list links (SIM_NO_SLOT = head) */
	int64_t rmap_items; /* ksm_rmap_items */
	int64_t zero_pages; /* ksm_zero_pages of this mm */
	int64_t merging_pages;
	uint64_t mergeable_pages; /* pages in VM_MERGEABLE VMAs (ksm_mergeable) */
	uint64_t next_vpn;  /* where the next mmap goes */
};

struct sim_area {
	uint32_t mm;
	uint32_t label;
	uint64_t start;     /* first virtual page number */
	uint64_t npages;
	uint32_t slot;      /* page slot of page 0 */
	uint64_t nitems;    /* rmap_items that exist in this area */
	uint16_t node;
	bool thp;
	bool dirty_tracking; /* writes set the PTE dirty bit (see sim.h) */
	bool anon_vma;      /* faulted at least once */
	bool dead;          /* fully unmapped and without items: ignore */
	uint8_t prot;       /* enum wl_prot from mprotect; without PROT_WRITE, writes come
			       through /proc/PID/mem (FOLL_FORCE) and leave the PTE read-only */
	bool uffd_wp;       /* registered with userfaultfd and write-protected */
};

/* --- KSM --------------------------------------------------------------------- */

struct sim_knobs {
	uint64_t value[WL_KNOB_COUNT];
	unsigned run;
};

/* The kernel's counters that are kept, not derived. */
struct sim_counts {
	int64_t pages_shared, pages_sharing, pages_unshared, rmap_items;
	int64_t pages_scanned, pages_skipped;
	int64_t stable_node_chains, stable_node_dups;
	int64_t ksm_zero_pages;
};

/* ksm_scan: the cursor. */
struct sim_cursor {
	uint32_t mm;        /* current mm_slot, or SIM_NO_SLOT for the head */
	uint64_t address;   /* next virtual page to look at in that mm */
	uint64_t rmap_from; /* rmap_list position: items below it were passed */
	uint64_t seqnr;     /* full scans completed (full_scans) */
};

/* The advisor's memory between scans (times are simulated). */
struct sim_advisor {
	uint64_t start_scan_ns;
	uint64_t scan_time;  /* s */
	uint64_t change;
	uint64_t cpu_time_ns;
};

/*
 * Where a scan that repeats the last one's unstable tree stands (sim_memo.c).
 * A cache: the machine behaves the same whatever it holds.
 */
struct sim_memo {
	bool clean;        /* this scan's tree so far is made of inserts alone, and
			    * none of its pages changed: the next scan may repeat it */
	bool active;       /* this scan repeats the last one's: the items' links
			    * are still the last tree's */
	uint32_t pending;  /* the last tree's item passed and not yet re-inserted */
	uint64_t inserts;  /* re-inserts charged from memory, ever (for tests) */
};

struct sim {
	struct sim_config cfg;
	struct sim_knobs knobs;
	struct sim_counts count;
	struct sim_cursor scan;
	struct sim_advisor advisor;
	uint32_t slot_first, slot_last; /* mm_slot list ends (SIM_NO_SLOT when empty) */

	struct sim_mm *mm;
	uint32_t nmm, mm_cap;
	struct sim_area *area;
	uint32_t narea, area_cap;

	struct sim_page *page;    /* page slots */
	uint32_t nslots, slots_cap;
	/* the detector's own state per rmap_item (sim_detector_item()):
	 * item_bytes (its ops' item_bytes) per page slot, items_cap slots of
	 * it; NULL when the detector keeps none */
	uint8_t *item_state;
	uint32_t item_bytes, items_cap;

	struct sim_frame *frame;
	uint32_t nframes, frames_cap;
	uint32_t frame_free;     /* free list through frame.stable_node */
	/* the dirty detector's scan marker of each THP folio (frame id / 512,
	 * volatility_dirty.c), 0 when the head frame is (re)allocated;
	 * folios_cap covers frames_cap */
	uint8_t *folio_seen;
	uint32_t folios_cap;

	struct sim_snode *snode;
	uint32_t nsnodes, snodes_cap;
	uint32_t snode_free;     /* free list through snode.first */

	uint32_t stable_root[SIM_MAX_NODES];
	uint32_t unstable_root[SIM_MAX_NODES];

	struct sim_content_store content;
	uint32_t zero_checksum;  /* checksum of the zero page */

	uint64_t now_ns;         /* simulated wall clock */
	uint64_t ksmd_cpu_ns;    /* simulated ksmd CPU time */
	double batch_cost_ns;    /* cost of the batch in progress */
	uint64_t batch_visits0;  /* work.visits when the batch in progress began */
	uint64_t batch_merges0;  /* work.merges then */
	uint64_t batch_refills;  /* the refills it began with (0: busy) */
	bool lru_pending;        /* a page was faulted in or copied since the last
				  * full scan began: the next drains (lru_drain) */
	bool cold;               /* the batch in progress (or the next) follows a sleep
				  * or a pause: its first visits cost more */
	uint64_t slept_ns;       /* how long ksmd slept before the next batch: its
				  * refills (sim.h); UINT64_MAX before the first */
	uint64_t batch_steps;    /* pages the batch in progress has processed */
	uint64_t batches;
	struct sim_work work;    /* what ksmd did, by kind */
	struct sim_memo memo;    /* a scan repeating the last one's tree (sim_memo.c) */
	uint64_t bulk_skips;     /* smart-scan skips taken in runs (sim_scan.c), ever (for tests) */
	/* wl_kernel_row(cfg.kernel), looked up once (a tree walk asks it at
	 * every level): configuration, not state */
	const struct wl_kernel_row *kernel_row;
	/* a continuous writer's writes not applied yet (sim_deferred.h), or
	 * NULL; owned, and not carried by sim_clone() */
	struct sim_deferred *deferred;
};

/* --- deferred writes (sim_deferred.c) ---------------------------------------------- */

/* sim_write() of @w[0], ..., @w[n - 1] in turn to one page, in one go. */
int sim_write_many(struct sim *s, int area, uint64_t page, const struct sim_page_write *w,
		   size_t n);

void sim_deferred_settle_slot(struct sim *s, uint32_t slot);
void sim_deferred_settle_bytes_slot(struct sim *s, uint32_t slot);
void sim_deferred_protected_slot(struct sim *s, uint32_t slot);
void sim_deferred_free(struct sim_deferred *d);

/*
 * The page at @slot is about to be read: apply the writes it still waits
 * for, with a THP those of its whole folio (their dirty bit is the folio's).
 */
static inline void sim_deferred_settle(struct sim *s, uint32_t slot)
{
	if (s->deferred)
		sim_deferred_settle_slot(s, slot);
}

/*
 * Only the bytes of the page at @slot are about to be read (a tree walk):
 * its own writes are enough. The dirty bits they set on its folio were set
 * before the batch too, and no visit cleared them since (a visit settles
 * the whole folio first).
 */
static inline void sim_deferred_settle_bytes(struct sim *s, uint32_t slot)
{
	if (s->deferred)
		sim_deferred_settle_bytes_slot(s, slot);
}

/* The page at @slot lost its private, writable PTE: its writes go eager. */
static inline void sim_deferred_protected(struct sim *s, uint32_t slot)
{
	if (s->deferred)
		sim_deferred_protected_slot(s, slot);
}

/* The kernel row whose semantics the machine follows. */
static inline const struct wl_kernel_row *sim_kernel_row(const struct sim *s)
{
	return s->kernel_row;
}

/* THP folio markers (sim.folio_seen) that @frames frame ids span. */
#define SIM_FOLIOS(frames) (((frames) + SIM_THP_PAGES - 1) / SIM_THP_PAGES)

/*
 * The dirty detector's folio marker as frame @f holds it (the image's
 * pmd_seen): its folio's when @f is the folio's first frame, else 0.
 */
static inline uint8_t sim_frame_pmd_seen(const struct sim *s, const struct sim_frame *f)
{
	uint32_t id = (uint32_t)(f - s->frame);

	return id % SIM_THP_PAGES ? 0 : s->folio_seen[id / SIM_THP_PAGES];
}

/* Layouts of the two kinds of tree (links inside rmap items or snodes). */
static inline struct rb_layout sim_unstable_layout(const struct sim *s)
{
	return (struct rb_layout){ (char *)s->page, sizeof(struct sim_page),
				   offsetof(struct sim_page, rb) };
}

static inline struct rb_layout sim_stable_layout(const struct sim *s)
{
	return (struct rb_layout){ (char *)s->snode, sizeof(struct sim_snode),
				   offsetof(struct sim_snode, rb) };
}

/* The tree index for a page on @node: 0 unless merge_across_nodes = 0. */
static inline unsigned sim_tree_nid(const struct sim *s, unsigned node)
{
	return s->knobs.value[WL_KNOB_MERGE_ACROSS_NODES] ? 0 : node;
}

/* --- shared between the sim_*.c files ------------------------------------ */

/*
 * One stage of the chain of reads a write makes, for page slot @slot: 0 the
 * page, 1 its frame, 2 its content entry, 3 the entry's intern bucket and
 * patches; each stage reads what the one before fetched (sim_prefetch_writes).
 * always_inline: a function of loads and prefetches alone is "pure" to GCC,
 * which drops a call to it whose result is unused.
 */
static inline __attribute__((always_inline)) void sim_prefetch_slot(const struct sim *s,
								    uint32_t slot, unsigned stage)
{
	const struct sim_page *p = &s->page[slot];

	if (stage == 0)
		__builtin_prefetch(p, 1);
	else if (stage == 1)
		__builtin_prefetch(&s->frame[p->frame], 1);
	else
		sim_content_prefetch(&s->content, s->frame[p->frame].content, stage - 2);
}

/*
 * The capacity a pool of @cap elements grows to when it must hold @need
 * (@need > @cap): double it (from 16), or exactly @need when doubling falls
 * short. sim_state.c grows its pools by this rule and sim_admit.c replays it.
 */
static inline uint32_t sim_pool_cap(uint32_t cap, uint32_t need)
{
	uint32_t n = cap ? cap : 16;

	n = n <= UINT32_MAX / 2 ? n * 2 : UINT32_MAX;
	return n < need ? need : n;
}

/* sim_state.c: pools */
uint32_t sim_frame_alloc(struct sim *s, uint64_t content, unsigned node);
int sim_frames_alloc_thp(struct sim *s, unsigned node, uint32_t *first);
void sim_frame_put(struct sim *s, uint32_t frame); /* one mapping fewer */
uint32_t sim_snode_alloc(struct sim *s);
void sim_snode_free(struct sim *s, uint32_t id);
/* The area holding page slot @slot (binary search over areas). */
uint32_t sim_area_of_slot(const struct sim *s, uint32_t slot);
/*
 * The detector's state of the rmap_item at page slot @slot: s->item_bytes
 * bytes (its ops' item_bytes), zeroed when the item is created. Only for a
 * detector that keeps some.
 */
static inline void *sim_detector_item(struct sim *s, uint32_t slot)
{
	assert(s->item_bytes && slot < s->items_cap);
	return s->item_state + (size_t)slot * s->item_bytes;
}

/* The checksum cache (sim_frame_checksum below): fill @frame's. */
void sim_checksum_fill(struct sim *s, uint32_t slot, uint32_t frame);

/* sim_user.c */
/* Break COW on a KSM page or KSM zero page at @slot (an UNSHARE fault). */
void sim_unshare_page(struct sim *s, uint32_t slot);
/* Zap one PTE (munmap, exit): drop its frame or zero-page count. */
void sim_zap_pte(struct sim *s, uint32_t mm, uint32_t slot);

/*
 * sim_merge.c and sim_memo.c: an unstable-tree walk of @levels nodes and
 * @bytes memcmp bytes, counted and charged once.
 */
static inline void sim_charge_walk(struct sim *s, uint64_t levels, uint64_t bytes)
{
	s->work.tree_levels += levels;
	s->work.memcmp_bytes += bytes;
	s->batch_cost_ns = s->batch_cost_ns + (double)levels * s->cfg.costs.tree_level_ns +
			   (double)bytes * s->cfg.costs.memcmp_byte_ns;
}

/*
 * sim_memo.c: repeating the last scan's unstable tree (see the file).
 * scan_start: a full scan begins; true when it repeats the last one's tree
 * (the roots are kept, not emptied). scan_end: the full scan is over.
 * passed: the item at @slot, in the last tree, is taken out of it (visited
 * or freed). insert: put @slot (for tree @nid) in from memory if this scan
 * still repeats the last; false when it must be walked (the real tree is
 * then rebuilt first). written: the page at @slot is about to change.
 * break: anything else that reads or changes the tree, or the scan's order:
 * the real tree is rebuilt and the next scan walks. record: the walk code
 * for sim_page.walk.
 */
bool sim_memo_scan_start(struct sim *s);
void sim_memo_scan_end(struct sim *s);
void sim_memo_passed(struct sim *s, uint32_t slot);
bool sim_memo_insert(struct sim *s, uint32_t slot, unsigned nid);
void sim_memo_written_unstable(struct sim *s, uint32_t slot);
static inline void sim_memo_written(struct sim *s, uint32_t slot)
{
	/* else no tree holds it; and while no item is in one (pages_unshared
	 * counts them), the page's item need not even be read */
	if (s->count.pages_unshared && (s->page[slot].rflags & RMAP_UNSTABLE))
		sim_memo_written_unstable(s, slot);
}
void sim_memo_break(struct sim *s);
uint16_t sim_memo_record(uint64_t levels, uint64_t bytes);

/* sim_merge.c */
void sim_cmp_and_merge_page(struct sim *s, uint32_t slot);
void sim_remove_rmap_item_from_tree_slow(struct sim *s, uint32_t slot);
/* remove_rmap_item_from_tree: out of its stable node's hlist or its
 * unstable tree; nothing for an item in neither (most of a scan's skips). */
static inline void sim_remove_rmap_item_from_tree(struct sim *s, uint32_t slot)
{
	if (s->page[slot].rflags & (RMAP_STABLE | RMAP_UNSTABLE))
		sim_remove_rmap_item_from_tree_slow(s, slot);
}
/* Is the frame of this stable node still its KSM page? If not, drop the node. */
bool sim_snode_alive(struct sim *s, uint32_t node);
/* sim_frame_put: @frame, a KSM page, is being freed (its stable node goes stale). */
void sim_ksm_page_freed(struct sim *s, uint32_t frame);
/* run = 2 and knob stores: free every stable node whose page is unmapped. */
int sim_remove_all_stable_nodes(struct sim *s);

/*
 * sim_scan.c: one smart-scan policy (WL_SMART_SCAN_POLICIES, wl_policy.h),
 * the rule should_skip_rmap_item applies to the rmap_item at page slot
 * @slot, not KSM and already considered @age >= 3 times (its age before
 * this scan's increment): true to visit it in this scan, false to skip it.
 * It reads the machine's completed full scans (s->scan.seqnr, the kernel's
 * ksm_scan.seqnr) and the item's oldchecksum (s->page[slot].checksum), and
 * may keep a countdown in s->page[slot].skips. What else it reads, the
 * state and the checksum follow:
 */
struct sim_smart_scan_rule {
	/* reads the rmap_item only, never the page: a page skipped keeps the
	 * writes it waits for (sim_deferred.h) */
	bool (*visit)(struct sim *s, uint32_t slot, uint8_t age);
	/* 1 when the rule never reads seqnr; else the period seqnr is read
	 * modulo (a power of two), so that seqnr's residue is state */
	unsigned scan_phases;
	/* reads oldchecksum's value, not only its equality: the machine then
	 * computes the kernel's checksum, xxh64 (sim_new) */
	bool reads_checksum;
	/* visit is the kernel's countdown: it skips exactly while the item's
	 * skips is not 0, and counts it down by one a skip (so the walk may
	 * take a run of such skips at once) */
	bool countdown;
};

const struct sim_smart_scan_rule *sim_smart_scan_rule_of(enum wl_smart_scan_policy policy);

/* seqnr's residue modulo the machine's rule's scan_phases (0 for upstream). */
uint64_t sim_smart_scan_phase(const struct sim *s);

/* sim_scan.c */
void sim_free_rmap_item(struct sim *s, uint32_t mm, uint32_t slot);
void sim_slot_enter(struct sim *s, uint32_t mm);
void sim_slot_exit(struct sim *s, uint32_t mm);
/* run = 2: unmerge everything and free every rmap_item. */
int sim_unmerge_all(struct sim *s);

/* sim_merge.c: split a THP folio into small pages (counted and charged) */
void sim_split_folio(struct sim *s, uint32_t frame);

/*
 * What the driver (sim_driver.c) holds per workload process, writer and
 * event, at most: sim_admit.c counts it (sim_driver.c asserts it).
 */
#define SIM_DRIVER_ITEM_BYTES 128u

/*
 * The checksum cache: the kernel's checksum of the page at @slot mapping
 * @frame (not a KSM page), from the frame's cache (FRAME_CSUM_VALID, dropped
 * when its content changes), computed when missing. Never charges ksmd: a
 * detector that takes a checksum charges for it.
 */
static inline uint32_t sim_frame_checksum(struct sim *s, uint32_t slot, uint32_t frame)
{
	assert(!(s->frame[frame].flags & FRAME_KSM)); /* KSM pages have no checksum cache */
	if (!(s->frame[frame].flags & FRAME_CSUM_VALID))
		sim_checksum_fill(s, slot, frame);
	return s->frame[frame].checksum;
}

/* Cost accounting of ksmd work. */
static inline void sim_charge(struct sim *s, double ns)
{
	s->batch_cost_ns += ns;
}

#endif
