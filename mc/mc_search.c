/*
 * mc_search.c - the explicit-state search: breadth-first level by level
 * (so the first violation found has a shortest trace) or depth-first under a
 * depth bound, over states fingerprinted by sim_fingerprint() plus the
 * model's extra state, remembered in mc_visited.c's set.
 *
 * Per generated transition the transition invariants are checked (visit,
 * max-sharing, volatility, and for liveness that a ksmd step never undoes a
 * merge); per new state the state invariants. Liveness needs, per state, the
 * number of full scans ksmd alone takes to merge everything ("settle"). Since
 * ksmd's step is deterministic and merged stays merged, settle(X) is 0 when X
 * is merged and otherwise settle(ksmd(X)) plus one if that step ends a full
 * scan. BFS records each state's ksmd successor and computes settle for all
 * states once the search is over, reporting the shallowest state whose
 * settle exceeds liveness_scans; states it did not expand (depth bound) and
 * every new state of a DFS get a simulated run instead, remembered per machine
 * so that runs share their work.
 *
 * BFS keeps two levels of states as snapshots in byte arenas and, per state,
 * a 20-byte record (parent, action from it, ksmd successor, liveness bits);
 * DFS keeps one machine per level of its stack.
 *
 * A breadth-first search can run on several workers (mc_options.workers):
 * each expands chunks of the level it claims, with its own machines, into
 * its own next-level arena; the visited set and the records are shared,
 * inserted into concurrently (mc_visited_claim) under a read lock that a
 * worker upgrades only to grow them. Levels end at a join, so depths, counts
 * and the states explored are those of one worker; which parent a state
 * records (and so which shortest trace is printed) may differ.
 *
 * A depth-first search without a bound runs on several workers too: each
 * has its own stack and claims states in the shared set; a worker whose
 * stack empties asks another, which between two of its steps gives it a
 * copy of a state it has kept but not entered, the one nearest the start of
 * its stack. The search ends when every worker is idle. Each state is still
 * expanded once, so the counts are one worker's; traces come from the
 * records' parent links.
 */
#include "config.h"
#include "mc_internal.h"
#include "mc_mem.h"
#include "mc_visited.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>

#define MC_BATCH 32 /* successors computed before the visited set is asked */
#define NO_ID UINT32_MAX
#define MC_MAX_WORKERS 8
#define MC_CHUNK 8  /* level entries a worker claims at a time */
#define REC_BLOCK 64 /* record ids a parallel worker takes at a time */

/* settle values besides 0..K+1 */
#define SETTLE_UNKNOWN 250  /* not computable (not expanded, broken machine) */
#define SETTLE_TODO 251     /* not computed yet */
#define SETTLE_BUSY 252     /* being computed (a cycle when met again) */

enum record_flag {
	REC_MERGED = 1 << 0,   /* every group merged (mc_all_merged) */
	REC_APPLIES = 1 << 1,  /* liveness starts here: run = 1, no store pending */
	REC_WRAPS = 1 << 2,    /* ksmd's step from here ends a full scan */
	REC_EXPANDED = 1 << 3, /* its successors were generated */
};

struct record {
	uint32_t parent;            /* NO_ID for the initial state */
	uint32_t ksmd_next;         /* the state ksmd's action leads to, or NO_ID */
	struct mc_action action;    /* the action from the parent */
	uint8_t flags;
	uint8_t settle;
};

/* A growable byte buffer holding one BFS level: [entry][extra][snapshot]... */
struct arena {
	char *buf;
	size_t len, cap;
	size_t *off;                  /* where each entry starts, so that no walk reads them */
	size_t n, off_cap;
};

struct entry {
	uint32_t id;
	uint32_t extra_len;
	uint64_t snap_len;
};

/* A machine a liveness run passed, and the full scans it had done then. */
struct settle_point {
	uint64_t fp;
	uint32_t wraps;
};

#define DFS_BATCH 8 /* successors a frame computes before it asks the visited set */

/*
 * A state on the depth-first stack. Its successors are computed DFS_BATCH
 * at a time and asked of the visited set together, so that their slots load
 * meanwhile; the new ones wait in kid[] and are entered one by one. A state
 * is marked visited when it is generated, and expanded when its turn comes.
 */
struct frame {
	size_t first, n, next;     /* its enabled actions in st->actions; the next to compute */
	size_t taken;              /* the action into the state above it on the stack */
	uint32_t id;               /* st->dfs_records: the state's record */
	bool merged;
	struct mc_extra x;
	unsigned nkids, kid_next;  /* new successors waiting, and the next to enter */
	struct sim *kid[DFS_BATCH];
	struct mc_extra kid_x[DFS_BATCH];
	size_t kid_act[DFS_BATCH];
	uint32_t kid_id[DFS_BATCH];
};

struct dfs {
	struct frame *frame;
	struct sim **sim;          /* the machine at each depth */
	size_t cap;
};

struct search;

/* What the workers of one search share. */
struct shared {
	struct mc_visited seen;       /* fingerprint -> id (BFS) or depth (DFS) */
	struct mc_bits bits;          /* bitstate DFS: in place of seen */
	struct record *rec;           /* BFS and unbounded DFS: per state id */
	size_t rec_cap;
	size_t holes;                 /* record ids dropped unused (drop_record_blocks) */
	bool parallel;                /* more than one worker: lock */
	pthread_rwlock_t lock;        /* read: using seen and rec; write: growing them */
	size_t first[MC_MAX_WORKERS]; /* the level being expanded: each worker's first entry */
	size_t nentries;              /* in the numbering across workers' arenas */
	int stop;                     /* atomic: a worker found a violation, or failed */
	int grow_wanted;              /* atomic: workers waiting for the write lock (share_yield) */
	uint64_t depth;
	struct search *worker[MC_MAX_WORKERS];
	unsigned nworkers;
	/*
	 * Written by every worker at once, so each on a cache line of its own:
	 * beside the pointers above they would be fetched from the other core
	 * on every read of those.
	 */
	/* the records taken (parallel: in blocks, holes among them); atomic while workers run */
	_Alignas(64) size_t nrec;
	_Alignas(64) size_t next;     /* atomic: the next entry to claim */
	_Alignas(64) unsigned idle;   /* atomic, parallel DFS: workers without a state to explore */
};

/* A parallel DFS worker's answer to another's request for a state (search.mailbox). */
enum gift_state {
	GIFT_NONE,    /* no request out */
	GIFT_WAITING, /* asked, no answer yet */
	GIFT_GIVEN,   /* search.gift holds a state to explore */
	GIFT_REFUSED, /* the one asked had nothing to spare */
};

struct search {
	const struct mc_config *cfg;
	const struct mc_options *opt;
	struct mc_result *res;        /* worker 0: the caller's; others: their own */
	struct mc_result own;         /* a worker's other than 0: its counts and verdict */
	uint64_t bound;               /* depth bound, 0: none */
	bool liveness;
	/*
	 * Depth-first without a bound or bits: states are records (their ids in
	 * the visited set), and liveness comes from the ksmd links after the
	 * search, as breadth-first; otherwise it is simulated state by state.
	 */
	bool dfs_records;
	struct shared *sh;
	int rc;                       /* a worker's outcome on the last level */
	struct sim *init, *work, *child, *prev, *live;
	struct sim *kid[MC_BATCH];    /* BFS: a batch of successors */
	struct mc_extra kid_x[MC_BATCH];
	struct mc_effect kid_eff[MC_BATCH];
	struct mc_extra x0;
	struct mc_visited settled;    /* simulated runs: machine -> full scans to merge */
	struct mc_visited_quota quota; /* parallel: this worker's room in the shared set */
	size_t rec_next, rec_end;     /* parallel: this worker's block of record ids */
	struct settle_point *path;    /* a simulated run's machines */
	size_t path_cap;
	struct mc_action *actions;
	size_t actions_cap;
	struct arena level[2];        /* BFS: this worker's part of the level, and of the next */
	struct dfs dfs;               /* DFS: this worker's stack */
	unsigned index;               /* in shared.worker[] */
	/*
	 * Parallel DFS: a worker whose stack is empty asks another for a state
	 * by writing its own index into that one's requester; the one asked
	 * answers, between two of its steps, by copying a state it has kept
	 * but not entered into the asker's gift and setting the asker's
	 * mailbox. Each on a line of its own: requester is read at every step
	 * of its owner and written by others.
	 */
	_Alignas(64) int requester;   /* atomic: the worker asking this one, or -1 */
	_Alignas(64) int mailbox;     /* atomic: enum gift_state */
	struct sim *gift;
	struct mc_extra gift_x;
	uint32_t gift_id;
	struct timespec start, last_progress;
	char msg[512];
	char *err;
	size_t errlen;
	char errbuf[256];             /* a worker's other than 0: its error */
};

/* --- bookkeeping ---------------------------------------------------------------- */

static double since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) / 1e9;
}

/* The counts of every worker so far (the others' read as they run). */
static struct mc_stats all_stats(const struct search *st)
{
	/* the depth changes only between levels, when no other worker runs */
	struct mc_stats t = { .depth = st->sh->worker[0]->res->stats.depth };

	for (unsigned i = 0; i < st->sh->nworkers; i++) {
		const struct mc_stats *w = &st->sh->worker[i]->res->stats;

		t.generated += __atomic_load_n(&w->generated, __ATOMIC_RELAXED);
		t.distinct += __atomic_load_n(&w->distinct, __ATOMIC_RELAXED);
		t.cut += __atomic_load_n(&w->cut, __ATOMIC_RELAXED);
		t.liveness_runs += __atomic_load_n(&w->liveness_runs, __ATOMIC_RELAXED);
	}
	return t;
}

/* About once a second, from the first worker only (the caller's thread). */
static void maybe_progress(struct search *st)
{
	struct mc_stats t;

	if (!st->opt->progress || st != st->sh->worker[0] || since(&st->last_progress) < 1)
		return;
	clock_gettime(CLOCK_MONOTONIC, &st->last_progress);
	t = all_stats(st);
	t.seconds = since(&st->start);
	st->opt->progress(st->opt->progress_arg, &t);
}

/* --- sharing between workers ------------------------------------------------------ */

static void share_read(struct shared *sh)
{
	if (sh->parallel)
		pthread_rwlock_rdlock(&sh->lock);
}

static void share_done(struct shared *sh)
{
	if (sh->parallel)
		pthread_rwlock_unlock(&sh->lock);
}

/*
 * Room for a record per state the visited set can take before it grows,
 * and for the ids left unused at the end of each worker's block.
 */
static int reserve_records(struct shared *sh)
{
	size_t need = sh->seen.cap / 4 * 3 + sh->holes + MC_MAX_WORKERS * REC_BLOCK + 1;
	struct record *grown;

	if (sh->rec_cap >= need)
		return 0;
	if (!(grown = realloc(sh->rec, need * sizeof(*grown))))
		return -1;
	sh->rec = grown;
	sh->rec_cap = need;
	return 0;
}

/* With the read lock held: grow the visited set and the records, alone. */
static int share_grow(struct shared *sh)
{
	int rc = 0;

	if (sh->parallel) {
		__atomic_fetch_add(&sh->grow_wanted, 1, __ATOMIC_RELAXED);
		pthread_rwlock_unlock(&sh->lock);
		pthread_rwlock_wrlock(&sh->lock);
	}
	if (mc_visited_full(&sh->seen))
		rc = mc_visited_grow(&sh->seen, sh->nworkers);
	if (rc == 0)
		rc = reserve_records(sh);
	if (sh->parallel) {
		__atomic_fetch_sub(&sh->grow_wanted, 1, __ATOMIC_RELAXED);
		pthread_rwlock_unlock(&sh->lock);
		pthread_rwlock_rdlock(&sh->lock);
	}
	return rc;
}

/*
 * A parallel DFS worker holds the read lock throughout, and lets it go
 * between two of its steps only when another waits to grow the set: the
 * lock is writer-preferring (setup_workers), so the read lock is not taken
 * again before the grow is done.
 */
static void share_yield(struct shared *sh)
{
	if (__atomic_load_n(&sh->grow_wanted, __ATOMIC_RELAXED)) {
		pthread_rwlock_unlock(&sh->lock);
		pthread_rwlock_rdlock(&sh->lock);
	}
}

static int oom(struct search *st)
{
	snprintf(st->err, st->errlen, "out of memory after %llu distinct states",
		 (unsigned long long)all_stats(st).distinct);
	return -1;
}

static uint64_t state_fp(const struct sim *s, const struct mc_extra *x)
{
	return XXH3_64bits_withSeed(x, offsetof(struct mc_extra, expect) + x->nslots,
				    sim_fingerprint(s));
}

static void copy_extra(struct mc_extra *dst, const struct mc_extra *src)
{
	memcpy(dst, src, offsetof(struct mc_extra, expect) + src->nslots);
}

static int ensure_actions(struct search *st, size_t n)
{
	struct mc_action *a;

	if (n <= st->actions_cap)
		return 0;
	a = realloc(st->actions, n * sizeof(*a));
	if (!a)
		return -1;
	st->actions = a;
	st->actions_cap = n;
	return 0;
}

static size_t enabled(struct search *st, const struct sim *s, const struct mc_extra *x,
		      size_t at)
{
	size_t n;

	if (ensure_actions(st, at + MC_MAX_ACTIONS) != 0)
		return SIZE_MAX;
	n = mc_enabled(st->cfg, s, x, st->actions + at, MC_MAX_ACTIONS);
	return n > MC_MAX_ACTIONS ? MC_MAX_ACTIONS : n;
}

static bool out_of_budget(const struct search *st)
{
	return st->opt->max_states && all_stats(st).distinct >= st->opt->max_states;
}

/* --- violations ------------------------------------------------------------------- */

/* Record the violation and its trace: @path (n actions), then maybe ksmd alone. */
static int report(struct search *st, int inv, const struct mc_action *path, size_t n,
		  bool liveness)
{
	struct mc_result *res = st->res;
	char unmerged[400];

	res->verdict = MC_VIOLATION;
	res->invariant = inv;
	res->trace = mc_trace_build(st->cfg, res->mutant, path, n,
				    liveness ? st->cfg->liveness_scans : 0, liveness ? unmerged : NULL,
				    sizeof(unmerged), st->err, st->errlen);
	if (liveness)
		snprintf(st->msg, sizeof(st->msg), "after %u full scans of ksmd alone: %s",
			 st->cfg->liveness_scans, unmerged);
	snprintf(res->message, sizeof(res->message), "%s", st->msg);
	return res->trace ? 1 : -1;
}

/* The path the records' parent links give to state @id, then @last (if not NULL). */
static int report_by_records(struct search *st, int inv, uint32_t id,
			     const struct mc_action *last, bool liveness)
{
	size_t n, len = last ? 1 : 0;
	struct mc_action *path;
	int rc;

	for (uint32_t i = id; st->sh->rec[i].parent != NO_ID; i = st->sh->rec[i].parent)
		len++;
	path = malloc((len ? len : 1) * sizeof(*path));
	if (!path)
		return oom(st);
	if (last)
		path[len - 1] = *last;
	n = len - (last ? 1 : 0);
	for (uint32_t i = id; st->sh->rec[i].parent != NO_ID; i = st->sh->rec[i].parent)
		path[--n] = st->sh->rec[i].action;
	rc = report(st, inv, path, len, liveness);
	free(path);
	return rc;
}

/* --- liveness by simulation ---------------------------------------------------------- */

/*
 * Full scans ksmd alone takes from @from (@x its extra) until every group is
 * merged: 0..K, K + 1 for "more than K", or SETTLE_UNKNOWN when a machine on
 * the way breaks a safety invariant (the search reaches that state too, by a
 * shorter path, and reports it there; a broken machine is not run further).
 * Every machine passed is remembered with its own count (st->settled), so
 * that a later run meeting one of them is done.
 */
static unsigned simulate_settle(struct search *st, const struct sim *from,
				const struct mc_extra *x)
{
	struct sim *s = st->live;
	unsigned k = st->cfg->liveness_scans, wraps = 0, need = k + 1;
	uint64_t guard = (uint64_t)(k + 2) * (from->nslots + 2) + 16;
	size_t n = 0;
	char why[400];

	__atomic_fetch_add(&st->res->stats.liveness_runs, 1, __ATOMIC_RELAXED);
	if (sim_clone_into(s, from) != 0)
		return SETTLE_UNKNOWN;
	for (;;) {
		uint64_t fp = sim_fingerprint(s);
		uint32_t rest;
		struct mc_effect eff;

		if (mc_visited_find(&st->settled, fp, &rest)) {
			need = wraps + rest < k + 1 ? wraps + rest : k + 1;
			break;
		}
		if (n < st->path_cap)
			st->path[n++] = (struct settle_point){ fp, wraps };
		if (mc_all_merged(st->cfg, s, NULL, 0)) {
			need = wraps;
			break;
		}
		if (wraps > k || !guard-- || !sim_ksmd_runnable(s))
			break; /* more than k */
		if (sim_clone_into(st->prev, s) != 0)
			return SETTLE_UNKNOWN;
		mc_ksmd_page_step(st->cfg, s, NULL, &eff);
		wraps += eff.wraps;
		if (mc_check_transition(st->cfg, st->prev, &eff, s, why, sizeof(why)) ||
		    mc_check_state(st->cfg, s, x, why, sizeof(why)))
			return SETTLE_UNKNOWN;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t left = need - st->path[i].wraps;

		if (mc_visited_add(&st->settled, st->path[i].fp, left <= k ? left : k + 1, NULL) ==
		    MC_VISIT_OOM)
			break;
	}
	return need;
}

/* --- one transition -------------------------------------------------------------------- */

/*
 * ksmd's action from st->work into @c: one page step, or steps up to the end
 * of a full scan with every invariant checked in between. Returns the
 * failing invariant + 1, 0, or -1 when out of memory.
 */
static int ksmd_action(struct search *st, const struct sim *parent, struct sim *c,
		       struct mc_extra *x, struct mc_effect *eff)
{
	int inv;

	if (!st->cfg->ksmd_scan) {
		mc_ksmd_page_step(st->cfg, c, x, eff);
		return mc_check_transition(st->cfg, parent, eff, c, st->msg, sizeof(st->msg));
	}
	memset(eff, 0, sizeof(*eff));
	for (;;) {
		struct mc_effect inner;

		if (sim_clone_into(st->prev, c) != 0)
			return -1;
		mc_ksmd_page_step(st->cfg, c, x, &inner);
		eff->ret += inner.processed;
		if ((inv = mc_check_transition(st->cfg, st->prev, &inner, c, st->msg,
					       sizeof(st->msg))) ||
		    (inv = mc_check_state(st->cfg, c, x, st->msg, sizeof(st->msg))))
			return inv;
		if (inner.wraps || !sim_ksmd_runnable(c)) {
			eff->wraps = inner.wraps;
			return 0;
		}
	}
}

/*
 * Apply @a to st->work (@xw) into @child (@xc, @eff) and check what every
 * transition must satisfy. Returns 0, the failing invariant + 1, or -1.
 * @child may be st->work itself (the action is then applied in place), with
 * st->work's pages and frames kept in st->prev for the transition checks,
 * which read nothing else of the parent (mc_internal.h).
 */
static int transition(struct search *st, const struct mc_extra *xw, bool work_merged,
		      const struct mc_action *a, struct sim *child, struct mc_extra *xc,
		      struct mc_effect *eff, bool *child_merged)
{
	const struct sim *parent = child == st->work ? st->prev : st->work;
	int inv = 0;

	*child_merged = false;
	if (sim_clone_into(child, st->work) != 0)
		return -1;
	copy_extra(xc, xw);
	__atomic_fetch_add(&st->res->stats.generated, 1, __ATOMIC_RELAXED);
	if (a->kind != MC_ACT_KSMD) {
		mc_apply_user(st->cfg, child, xc, a, eff);
		return 0;
	}
	if ((inv = ksmd_action(st, parent, child, xc, eff)) != 0)
		return inv;
	if (st->liveness && work_merged && !mc_all_merged(st->cfg, child, NULL, 0)) {
		size_t n;

		mc_all_merged(st->cfg, child, st->msg, sizeof(st->msg));
		n = strlen(st->msg);
		snprintf(st->msg + n, sizeof(st->msg) - n, " (a ksmd step undid a merge)");
		return MC_INV_LIVENESS + 1;
	}
	*child_merged = st->liveness && work_merged;
	return 0;
}

static bool merged(struct search *st, const struct sim *s)
{
	return st->liveness && mc_all_merged(st->cfg, s, NULL, 0);
}

/* --- breadth-first ---------------------------------------------------------------- */

static int arena_push(struct arena *ar, uint32_t id, const struct sim *s, const struct mc_extra *x)
{
	size_t extra_len = offsetof(struct mc_extra, expect) + x->nslots;
	size_t snap = sim_snapshot_size(s);
	size_t need = sizeof(struct entry) + ((extra_len + 7) & ~(size_t)7) + snap;
	struct entry *e;

	if (ar->len + need > ar->cap) {
		size_t cap = ar->cap ? ar->cap * 2 : MC_MEM_HUGE;
		char *b;

		while (cap < ar->len + need)
			cap *= 2;
		if (!(b = mc_mem_grow(ar->buf, ar->cap, cap)))
			return -1;
		ar->buf = b;
		ar->cap = cap;
	}
	if (ar->n == ar->off_cap) {
		size_t cap = ar->off_cap ? ar->off_cap * 2 : 1024;
		size_t *off = realloc(ar->off, cap * sizeof(*off));

		if (!off)
			return -1;
		ar->off = off;
		ar->off_cap = cap;
	}
	ar->off[ar->n++] = ar->len;
	e = (struct entry *)(ar->buf + ar->len);
	e->id = id;
	e->extra_len = (uint32_t)extra_len;
	e->snap_len = snap;
	memcpy(e + 1, x, extra_len);
	sim_snapshot_save(s, (char *)(e + 1) + ((extra_len + 7) & ~(size_t)7));
	ar->len += need;
	return 0;
}

/*
 * The next record id: one at a time alone; with several workers from a
 * block of REC_BLOCK the worker takes, so that they do not all write one
 * count (nor, mostly, each other's records' cache lines).
 */
static size_t new_record_id(struct search *st)
{
	struct shared *sh = st->sh;

	if (!sh->parallel)
		return sh->nrec++;
	if (st->rec_next == st->rec_end) {
		st->rec_next = __atomic_fetch_add(&sh->nrec, REC_BLOCK, __ATOMIC_RELAXED);
		st->rec_end = st->rec_next + REC_BLOCK;
	}
	return st->rec_next++;
}

/*
 * Every worker's unused record ids become holes, which nothing reads (no
 * state, no settle to compute): between two levels, so that a BFS's ids
 * stay in the order of the levels, and at the end of a search. Room is
 * made for the records the next level may take beside them.
 */
static int drop_record_blocks(struct shared *sh)
{
	for (unsigned w = 0; w < sh->nworkers; w++) {
		struct search *st = sh->worker[w];

		for (; st->rec_next < st->rec_end; st->rec_next++, sh->holes++)
			sh->rec[st->rec_next] = (struct record){ .parent = NO_ID,
								 .ksmd_next = NO_ID,
								 .settle = SETTLE_UNKNOWN };
	}
	return reserve_records(sh);
}

/*
 * A record for a new state, its id the index (room was reserved with the
 * visited set's slot it was claimed in: reserve_records). @known_merged: the
 * transition to it already found every group merged. Returns the id.
 */
static uint32_t record(struct search *st, uint32_t parent, const struct mc_action *a,
		       const struct sim *s, const struct mc_extra *x, bool known_merged)
{
	size_t id = new_record_id(st);
	struct record *r = &st->sh->rec[id];

	memset(r, 0, sizeof(*r));
	r->parent = parent;
	r->ksmd_next = NO_ID;
	if (a)
		r->action = *a;
	r->settle = SETTLE_TODO;
	if (known_merged || merged(st, s))
		r->flags |= REC_MERGED;
	if (mc_liveness_applies(s, x))
		r->flags |= REC_APPLIES;
	return (uint32_t)id;
}

/* A new state, claimed at @slot: record it (its id in *id), check it, queue it. */
static int bfs_new(struct search *st, uint32_t parent, const struct mc_action *a,
		   struct sim *s, const struct mc_extra *x, bool known_merged,
		   struct arena *next, size_t slot, uint32_t *id)
{
	int inv;

	__atomic_fetch_add(&st->res->stats.distinct, 1, __ATOMIC_RELAXED);
	*id = record(st, parent, a, s, x, known_merged);
	mc_visited_publish(&st->sh->seen, slot, *id);
	if ((inv = mc_check_state(st->cfg, s, x, st->msg, sizeof(st->msg))))
		return report_by_records(st, inv - 1, *id, NULL, false);
	if (arena_push(next, *id, s, x) != 0)
		return oom(st);
	return 0;
}

/* A state the depth bound leaves unexpanded: its liveness by simulation. */
static void bfs_cut(struct search *st, const struct entry *e, const struct mc_extra *x, size_t n)
{
	struct record *r = &st->sh->rec[e->id];

	__atomic_fetch_add(&st->res->stats.cut, n > 0, __ATOMIC_RELAXED);
	if (!st->liveness)
		return;
	r->settle = (r->flags & REC_MERGED) ? 0 : (uint8_t)simulate_settle(st, st->work, x);
}

/*
 * Generate a batch of successors of st->work (actions [first, first + m)),
 * then ask the visited set about all of them: their slots load meanwhile.
 */
static int bfs_batch(struct search *st, const struct entry *e, const struct mc_extra *xw,
		     bool work_merged, size_t first, size_t m, struct arena *next)
{
	uint64_t fp[MC_BATCH];
	bool kid_merged[MC_BATCH];

	for (size_t i = 0; i < m; i++) {
		int inv = transition(st, xw, work_merged, &st->actions[first + i], st->kid[i],
				     &st->kid_x[i], &st->kid_eff[i], &kid_merged[i]);

		if (inv < 0)
			return oom(st);
		if (inv)
			return report_by_records(st, inv - 1, e->id, &st->actions[first + i], false);
		fp[i] = state_fp(st->kid[i], &st->kid_x[i]);
		mc_visited_prefetch(&st->sh->seen, fp[i]);
	}
	for (size_t i = 0; i < m; i++) {
		uint32_t id = NO_ID;
		size_t slot;
		enum mc_visit v;
		int rc;

		while ((v = mc_visited_claim(&st->sh->seen, &st->quota, fp[i], &id, &slot)) ==
		       MC_VISIT_OOM)
			if (share_grow(st->sh) != 0)
				return oom(st);
		if (v == MC_VISIT_NEW &&
		    (rc = bfs_new(st, e->id, &st->actions[first + i], st->kid[i], &st->kid_x[i],
				  kid_merged[i], next, slot, &id)))
			return rc;
		if (st->actions[first + i].kind == MC_ACT_KSMD) {
			st->sh->rec[e->id].ksmd_next = id;
			if (st->kid_eff[i].wraps)
				st->sh->rec[e->id].flags |= REC_WRAPS;
		}
		if (out_of_budget(st))
			return 0;
	}
	return 0;
}

/* Expand one state of the current level into the next. */
static int bfs_expand(struct search *st, const struct entry *e, uint64_t depth, struct arena *next)
{
	struct mc_extra xw;
	size_t n;
	bool work_merged;

	memcpy(&xw, e + 1, e->extra_len);
	if (sim_snapshot_load(st->work, (const char *)(e + 1) + ((e->extra_len + 7) & ~(size_t)7)))
		return oom(st);
	if ((n = enabled(st, st->work, &xw, 0)) == SIZE_MAX)
		return oom(st);
	if (st->bound && depth >= st->bound) {
		bfs_cut(st, e, &xw, n);
		return 0;
	}
	work_merged = st->sh->rec[e->id].flags & REC_MERGED;
	for (size_t first = 0; first < n; first += MC_BATCH) {
		size_t m = n - first < MC_BATCH ? n - first : MC_BATCH;
		int rc = bfs_batch(st, e, &xw, work_merged, first, m, next);

		if (rc || out_of_budget(st))
			return rc;
	}
	st->sh->rec[e->id].flags |= REC_EXPANDED;
	maybe_progress(st);
	return 0;
}

/*
 * settle for state @id by walking its ksmd successors up to a state whose
 * value is known, then back: settle(X) = settle(ksmd(X)) + (wraps ? 1 : 0).
 */
static uint8_t settle_of(struct search *st, uint32_t id, uint32_t *stack)
{
	unsigned k = st->cfg->liveness_scans;
	size_t top = 0;
	uint8_t v;
	uint32_t cur = id;

	for (;;) {
		struct record *r = &st->sh->rec[cur];

		if (r->settle <= k + 1 || r->settle == SETTLE_UNKNOWN) {
			v = r->settle;
			break;
		}
		if (r->settle == SETTLE_BUSY) {
			v = (uint8_t)(k + 1); /* a cycle of ksmd steps that never merges */
			break;
		}
		if (r->flags & REC_MERGED) {
			v = r->settle = 0;
			break;
		}
		if (!(r->flags & REC_EXPANDED)) {
			v = r->settle = SETTLE_UNKNOWN;
			break;
		}
		if (r->ksmd_next == NO_ID) {
			v = r->settle = (uint8_t)(k + 1); /* ksmd cannot run, and not merged */
			break;
		}
		r->settle = SETTLE_BUSY;
		stack[top++] = cur;
		cur = r->ksmd_next;
	}
	while (top) {
		struct record *r = &st->sh->rec[stack[--top]];

		if (v != SETTLE_UNKNOWN) {
			v += (r->flags & REC_WRAPS) ? 1 : 0;
			v = v > k + 1 ? (uint8_t)(k + 1) : v;
		}
		r->settle = v;
	}
	return st->sh->rec[id].settle;
}

/*
 * After the search: the first recorded state where liveness starts and
 * fails (breadth-first, the shallowest). The records are settled from the
 * last to the first: a state's ksmd successor was mostly recorded after it,
 * so its settle is known by then and each walk is one step, not a chain of
 * cache misses down to a merged state (a settle does not depend on the
 * order it is computed in: a walk met in a cycle gives K + 1 either way).
 */
static int liveness_by_records(struct search *st)
{
	size_t nrec = st->sh->nrec;
	uint32_t *stack = malloc((nrec ? nrec : 1) * sizeof(*stack));
	unsigned k = st->cfg->liveness_scans;
	uint32_t first_failed = NO_ID;

	if (!stack)
		return oom(st);
	for (uint32_t id = (uint32_t)nrec; id-- > 0;) {
		uint8_t v = settle_of(st, id, stack);

		if ((st->sh->rec[id].flags & REC_APPLIES) && v != SETTLE_UNKNOWN && v > k)
			first_failed = id;
	}
	free(stack);
	if (first_failed == NO_ID)
		return 0;
	return report_by_records(st, MC_INV_LIVENESS, first_failed, NULL, true);
}

/*
 * The level to expand: every worker's current arena, in worker order. Only
 * the counts are read: a walk of the entries themselves, alone between two
 * parallel levels, cost a tenth of a two-worker search in cache misses.
 */
static void index_level(struct shared *sh)
{
	sh->nentries = 0;
	for (unsigned w = 0; w < sh->nworkers; w++) {
		sh->first[w] = sh->nentries;
		sh->nentries += sh->worker[w]->level[0].n;
	}
}

/* Entry @i of the indexed level. */
static const struct entry *level_entry(const struct shared *sh, size_t i)
{
	unsigned w = sh->nworkers - 1;
	const struct arena *ar;

	while (i < sh->first[w])
		w--;
	ar = &sh->worker[w]->level[0];
	return (const struct entry *)(ar->buf + ar->off[i - sh->first[w]]);
}

static bool stopping(const struct search *st)
{
	return __atomic_load_n(&st->sh->stop, __ATOMIC_RELAXED) || out_of_budget(st);
}

/* A worker's part of the level: chunks of MC_CHUNK entries, claimed in turn. */
static int expand_share(struct search *st)
{
	struct shared *sh = st->sh;
	int rc = 0;

	while (!rc && !stopping(st)) {
		size_t first = __atomic_fetch_add(&sh->next, MC_CHUNK, __ATOMIC_RELAXED);
		size_t end = first + MC_CHUNK < sh->nentries ? first + MC_CHUNK : sh->nentries;

		if (first >= sh->nentries)
			break;
		share_read(sh);
		for (size_t i = first; i < end && !rc && !stopping(st); i++)
			rc = bfs_expand(st, level_entry(sh, i), sh->depth, &st->level[1]);
		share_done(sh);
	}
	if (rc)
		__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	return rc;
}

static void *worker_main(void *arg)
{
	struct search *w = arg;

	w->rc = expand_share(w);
	return NULL;
}

/* Expand the indexed level on every worker; the first failure's outcome. */
static int run_level(struct search *st)
{
	struct shared *sh = st->sh;
	pthread_t tid[MC_MAX_WORKERS];
	unsigned started = 1;
	int rc = 0;

	sh->next = 0;
	for (unsigned w = 1; w < sh->nworkers; w++, started++)
		if (pthread_create(&tid[w], NULL, worker_main, sh->worker[w]) != 0)
			break; /* the others take its share */
	st->rc = expand_share(st);
	for (unsigned w = 1; w < started; w++)
		pthread_join(tid[w], NULL);
	for (unsigned w = 0; w < started && !rc; w++)
		rc = sh->worker[w]->rc;
	for (unsigned w = 0; w < sh->nworkers; w++)
		sh->worker[w]->rc = 0;
	return rc;
}

/* The next level becomes the current one, in every worker; whether it has states. */
static bool next_level(struct shared *sh)
{
	bool any = false;

	for (unsigned w = 0; w < sh->nworkers; w++) {
		struct arena *lv = sh->worker[w]->level, t = lv[0];

		lv[0] = lv[1];
		lv[1] = t;
		lv[1].len = lv[1].n = 0;
		any |= lv[0].len > 0;
	}
	return any;
}

static int bfs(struct search *st)
{
	struct shared *sh = st->sh;
	uint64_t depth = 0;
	uint32_t id;
	size_t slot;
	int rc;

	if (mc_visited_claim(&sh->seen, &st->quota, state_fp(st->init, &st->x0), &id,
			     &slot) != MC_VISIT_NEW)
		return oom(st);
	id = record(st, NO_ID, NULL, st->init, &st->x0, false);
	mc_visited_publish(&sh->seen, slot, id);
	if (arena_push(&st->level[0], id, st->init, &st->x0) != 0)
		return oom(st);
	if ((rc = mc_check_state(st->cfg, st->init, &st->x0, st->msg, sizeof(st->msg))))
		return report(st, rc - 1, NULL, 0, false);
	for (;;) {
		index_level(sh);
		if (!sh->nentries || out_of_budget(st))
			break;
		st->res->stats.depth = depth;
		sh->depth = depth;
		if ((rc = run_level(st)))
			return rc;
		if (drop_record_blocks(sh) != 0)
			return oom(st);
		if (next_level(sh))
			depth++;
	}
	return st->liveness ? liveness_by_records(st) : 0;
}

/* --- depth-first -------------------------------------------------------------------- */

/* Room for a frame at @depth; new frames start without machines. */
static int dfs_grow(struct dfs *d, size_t depth)
{
	size_t cap = d->cap ? d->cap * 2 : 64;
	struct frame *f;
	struct sim **s;

	if (depth < d->cap)
		return 0;
	if (!(f = realloc(d->frame, cap * sizeof(*f))))
		return -1;
	memset(f + d->cap, 0, (cap - d->cap) * sizeof(*f));
	d->frame = f;
	if (!(s = realloc(d->sim, cap * sizeof(*s))))
		return -1;
	d->sim = s;
	for (size_t i = d->cap; i < cap; i++)
		d->sim[i] = NULL;
	d->cap = cap;
	return 0;
}

static void dfs_free(struct dfs *d)
{
	for (size_t i = 0; i < d->cap; i++) {
		sim_free(d->sim[i]);
		for (unsigned j = 0; j < DFS_BATCH; j++)
			sim_free(d->frame[i].kid[j]);
	}
	free(d->sim);
	free(d->frame);
}

/*
 * The trace to the state at @depth, then @last: the stack's actions, or the
 * records' parent links where there are records (the same path, and the
 * only one a worker has whose stack starts from another's state).
 */
static int dfs_report(struct search *st, struct dfs *d, size_t depth, int inv,
		      const struct mc_action *last, bool liveness)
{
	struct mc_action *path;
	size_t n = 0;
	int rc;

	if (st->dfs_records)
		return report_by_records(st, inv, d->frame[depth].id, last, liveness);
	if (!(path = malloc((depth + 1) * sizeof(*path))))
		return oom(st);
	for (size_t i = 0; i < depth; i++)
		path[n++] = st->actions[d->frame[i].taken];
	if (last)
		path[n++] = *last;
	rc = report(st, inv, path, n, liveness);
	free(path);
	return rc;
}

/*
 * Remember a DFS state at @depth: in the bits; under a depth bound in the
 * visited set with its depth, so that a state met again nearer the start is
 * expanded again (MC_VISIT_SHALLOWER); or, st->dfs_records, in the visited
 * set with the id its record will have (*id: that id, or the seen state's),
 * room for the record kept with the set's. With several workers the state is
 * claimed instead, and a new one's id is published at *@slot once recorded
 * (dfs_record).
 */
static enum mc_visit dfs_visit(struct search *st, uint64_t fp, uint32_t depth, uint32_t *id,
			       size_t *slot)
{
	struct shared *sh = st->sh;
	enum mc_visit v;

	if (sh->bits.word)
		return mc_bits_add(&sh->bits, fp);
	if (!st->dfs_records)
		return mc_visited_add(&sh->seen, fp, depth, NULL);
	if (sh->parallel) {
		while ((v = mc_visited_claim(&sh->seen, &st->quota, fp, id, slot)) == MC_VISIT_OOM)
			if (share_grow(sh) != 0)
				return MC_VISIT_OOM;
		return v;
	}
	v = mc_visited_add(&sh->seen, fp, (uint32_t)sh->nrec, id);
	if (v == MC_VISIT_NEW && reserve_records(st->sh) != 0)
		return MC_VISIT_OOM;
	return v;
}

/* A new state's record (dfs_visit said MC_VISIT_NEW); its id, published where claimed. */
static uint32_t dfs_record(struct search *st, uint32_t parent, const struct mc_action *a,
			   const struct sim *s, const struct mc_extra *x, bool known_merged,
			   size_t slot)
{
	uint32_t id = record(st, parent, a, s, x, known_merged);

	if (st->sh->parallel)
		mc_visited_publish(&st->sh->seen, slot, id);
	return id;
}

/* A count only its worker writes, which worker 0's progress reads meanwhile. */
static void count_one(uint64_t *n)
{
	__atomic_store_n(n, __atomic_load_n(n, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

/* st->dfs_records: what the frame's state learns of its action into @id. */
static void dfs_link(struct search *st, const struct frame *f, const struct mc_action *a,
		     const struct mc_effect *eff, uint32_t id)
{
	struct record *r = &st->sh->rec[f->id];

	if (a->kind != MC_ACT_KSMD)
		return;
	r->ksmd_next = id;
	if (eff->wraps)
		r->flags |= REC_WRAPS;
}

/*
 * Push the machine *@machine at @depth (room made with dfs_grow) and list
 * its actions: it moves to the stack and *@machine takes the one that was
 * there (or a new one), so no state is copied.
 */
static int dfs_push(struct search *st, struct dfs *d, size_t depth, struct sim **machine,
		    const struct mc_extra *x, uint32_t id)
{
	size_t first = depth ? d->frame[depth - 1].first + d->frame[depth - 1].n : 0;
	struct sim *spare;
	struct frame *f;

	if (!(spare = d->sim[depth]) && !(spare = sim_clone(st->init)))
		return -1;
	d->sim[depth] = *machine;
	*machine = spare;
	f = &d->frame[depth];
	f->first = first;
	f->next = 0;
	f->nkids = f->kid_next = 0;
	f->id = id;
	copy_extra(&f->x, x);
	if ((f->n = enabled(st, d->sim[depth], x, first)) == SIZE_MAX)
		return -1;
	f->merged = st->dfs_records ? st->sh->rec[id].flags & REC_MERGED
				    : merged(st, d->sim[depth]);
	if (st->bound && depth >= st->bound) {
		st->res->stats.cut += f->n > 0;
		f->n = 0;
	}
	if (depth > st->res->stats.depth)
		st->res->stats.depth = depth;
	return 0;
}

/* The state invariants of a new DFS state @s, and liveness from it (simulated). */
static int dfs_new(struct search *st, const struct mc_action *a, const struct sim *s,
		   const struct mc_extra *x, bool *liveness_failed)
{
	int inv = mc_check_state(st->cfg, s, x, st->msg, sizeof(st->msg));
	unsigned need;

	*liveness_failed = false;
	if (inv || !st->liveness || st->dfs_records || (a && a->kind == MC_ACT_KSMD) ||
	    !mc_liveness_applies(s, x))
		return inv;
	need = simulate_settle(st, s, x);
	if (need == SETTLE_UNKNOWN || need <= st->cfg->liveness_scans)
		return 0;
	*liveness_failed = true;
	return MC_INV_LIVENESS + 1;
}

/* Successor @i of the frame's batch is new, or again nearer the start: keep it. */
static void dfs_keep(struct frame *f, unsigned i, size_t act, uint32_t id)
{
	unsigned k = f->nkids++;

	if (k != i) {
		struct sim *t = f->kid[k];

		f->kid[k] = f->kid[i];
		f->kid[i] = t;
		copy_extra(&f->kid_x[k], &f->kid_x[i]);
	}
	f->kid_act[k] = act;
	f->kid_id[k] = id;
}

/*
 * The frame at @depth computes its next batch of successors, then asks the
 * visited set about all of them and keeps those to enter. 0, or stop.
 */
static int dfs_batch(struct search *st, struct dfs *d, size_t depth)
{
	struct frame *f = &d->frame[depth];
	unsigned m = f->n - f->next < DFS_BATCH ? (unsigned)(f->n - f->next) : DFS_BATCH;
	struct mc_effect eff[DFS_BATCH];
	uint64_t fp[DFS_BATCH];
	bool kid_merged[DFS_BATCH];

	st->work = d->sim[depth];
	for (unsigned i = 0; i < m; i++) {
		const struct mc_action *a = &st->actions[f->first + f->next + i];
		int inv;

		if (i + 1 == m && f->next + m == f->n &&
		    (a->kind != MC_ACT_KSMD || !st->cfg->ksmd_scan)) {
			/*
			 * The frame's last successor: the frame's machine is not
			 * needed after it, so the action is applied to it in
			 * place and it moves to the kid's place. What a ksmd
			 * step's checks read of the parent is kept first.
			 */
			struct sim *spare = f->kid[i];

			if (a->kind == MC_ACT_KSMD &&
			    sim_copy_pages_and_frames(st->prev, st->work) != 0)
				return oom(st);
			f->kid[i] = d->sim[depth];
			d->sim[depth] = spare; /* NULL: dfs_push makes one */
		} else if (!f->kid[i] && !(f->kid[i] = sim_clone(st->init))) {
			return oom(st);
		}
		inv = transition(st, &f->x, f->merged, a, f->kid[i], &f->kid_x[i], &eff[i],
				 &kid_merged[i]);
		if (inv < 0)
			return oom(st);
		if (inv)
			return dfs_report(st, d, depth, inv - 1, a, false);
		fp[i] = state_fp(f->kid[i], &f->kid_x[i]);
		if (!st->sh->bits.word)
			mc_visited_prefetch(&st->sh->seen, fp[i]);
	}
	f->nkids = f->kid_next = 0;
	for (unsigned i = 0; i < m && !out_of_budget(st); i++) {
		size_t act = f->first + f->next + i;
		const struct mc_action *a = &st->actions[act];
		enum mc_visit v;
		uint32_t id = NO_ID;
		size_t slot = 0;
		bool live_failed;
		int inv;

		if ((v = dfs_visit(st, fp[i], (uint32_t)depth + 1, &id, &slot)) == MC_VISIT_OOM)
			return oom(st);
		if (v == MC_VISIT_NEW && st->dfs_records)
			id = dfs_record(st, f->id, a, f->kid[i], &f->kid_x[i], kid_merged[i], slot);
		if (st->dfs_records)
			dfs_link(st, f, a, &eff[i], id);
		if (v == MC_VISIT_SEEN)
			continue;
		if (v == MC_VISIT_NEW) {
			count_one(&st->res->stats.distinct);
			if ((inv = dfs_new(st, a, f->kid[i], &f->kid_x[i], &live_failed)))
				return dfs_report(st, d, depth, inv - 1, a, live_failed);
		}
		dfs_keep(f, i, act, id);
	}
	f->next += m;
	maybe_progress(st);
	return 0;
}

/* Enter the frame's next kept successor: 2 pushed, else stop. */
static int dfs_enter(struct search *st, struct dfs *d, size_t depth)
{
	struct frame *f;
	unsigned j;

	if (dfs_grow(d, depth + 1) != 0)
		return oom(st);
	f = &d->frame[depth];
	j = f->kid_next++;
	f->taken = f->kid_act[j];
	if (dfs_push(st, d, depth + 1, &f->kid[j], &f->kid_x[j], f->kid_id[j]) != 0)
		return oom(st);
	return 2;
}

/* The initial state: remembered, recorded, checked, and pushed at depth 0. */
static int dfs_initial(struct search *st)
{
	uint64_t fp = state_fp(st->init, &st->x0);
	bool live_failed;
	uint32_t id = NO_ID;
	size_t slot = 0;
	int rc;

	if (dfs_visit(st, fp, 0, &id, &slot) == MC_VISIT_OOM ||
	    sim_clone_into(st->child, st->init) != 0)
		return oom(st);
	if (st->dfs_records)
		id = dfs_record(st, NO_ID, NULL, st->init, &st->x0, false, slot);
	if ((rc = dfs_new(st, NULL, st->child, &st->x0, &live_failed)))
		return report(st, rc - 1, NULL, 0, live_failed);
	if (dfs_grow(&st->dfs, 0) != 0 || dfs_push(st, &st->dfs, 0, &st->child, &st->x0, id) != 0)
		return oom(st);
	return 0;
}

/*
 * The answer to the worker asking this one, if any: a copy of @gift's kept
 * successor @k, or a refusal. Whether it was given.
 */
static bool dfs_answer(struct search *st, const struct frame *gift, unsigned k)
{
	struct shared *sh = st->sh;
	int asker = __atomic_load_n(&st->requester, __ATOMIC_ACQUIRE);
	struct search *to;
	int answer = GIFT_REFUSED;

	if (asker < 0)
		return false;
	to = sh->worker[asker];
	if (gift && sim_clone_into(to->gift, gift->kid[k]) == 0) {
		copy_extra(&to->gift_x, &gift->kid_x[k]);
		to->gift_id = gift->kid_id[k];
		/* the asker is no longer idle before it is told, so all idle means done */
		__atomic_fetch_sub(&sh->idle, 1, __ATOMIC_RELAXED);
		answer = GIFT_GIVEN;
	}
	__atomic_store_n(&st->requester, -1, __ATOMIC_RELAXED);
	__atomic_store_n(&to->mailbox, answer, __ATOMIC_RELEASE);
	return answer == GIFT_GIVEN;
}

/*
 * Between two steps, a worker asked for a state gives the kept successor
 * nearest the start of its stack (the largest part of the search it has not
 * begun), if it has one: it will not enter it itself.
 */
static void dfs_give(struct search *st, size_t depth)
{
	struct dfs *d = &st->dfs;

	if (__atomic_load_n(&st->requester, __ATOMIC_RELAXED) < 0)
		return;
	for (size_t i = 0; i <= depth; i++) {
		struct frame *f = &d->frame[i];

		if (f->kid_next < f->nkids) {
			if (dfs_answer(st, f, f->nkids - 1))
				f->nkids--;
			return;
		}
	}
	(void)dfs_answer(st, NULL, 0);
}

/*
 * Explore from the state on frame 0 until the stack is empty, or the search
 * stops. 0, or what stopped it (a violation reported: 1, or -1).
 */
static int dfs_explore(struct search *st)
{
	struct dfs *d = &st->dfs;
	struct sim *work = st->work;
	size_t depth = 0;
	int rc = 0;

	while (!rc && !stopping(st)) {
		struct frame *f = &d->frame[depth];

		if (st->sh->parallel) {
			share_yield(st->sh);
			dfs_give(st, depth);
		}
		if (f->kid_next < f->nkids) {
			rc = dfs_enter(st, d, depth);
		} else if (f->next < f->n) {
			rc = dfs_batch(st, d, depth);
		} else {
			if (st->dfs_records)
				st->sh->rec[f->id].flags |= REC_EXPANDED;
			if (depth == 0)
				break;
			depth--;
		}
		if (rc == 2) {
			depth++;
			rc = 0;
		}
	}
	st->work = work;
	return rc;
}

/*
 * An idle worker asks the others in turn for a state until one gives it one
 * (1: pushed at depth 0), every worker is idle or the search stops (0), or
 * -1. Asked itself meanwhile, it refuses; it lets a grow have the lock.
 */
static int dfs_await(struct search *st)
{
	struct shared *sh = st->sh;
	unsigned victim = st->index, wait = 0;

	for (;;) {
		int m = __atomic_load_n(&st->mailbox, __ATOMIC_ACQUIRE);

		(void)dfs_answer(st, NULL, 0);
		if (m == GIFT_GIVEN) {
			__atomic_store_n(&st->mailbox, GIFT_NONE, __ATOMIC_RELAXED);
			if (dfs_grow(&st->dfs, 0) != 0 ||
			    dfs_push(st, &st->dfs, 0, &st->gift, &st->gift_x, st->gift_id) != 0)
				return oom(st);
			return 1;
		}
		if (__atomic_load_n(&sh->stop, __ATOMIC_RELAXED) ||
		    __atomic_load_n(&sh->idle, __ATOMIC_ACQUIRE) == sh->nworkers)
			return 0;
		if (m != GIFT_WAITING && wait-- == 0) {
			int nobody = -1;

			victim = (victim + 1) % sh->nworkers;
			if (victim == st->index)
				victim = (victim + 1) % sh->nworkers;
			__atomic_store_n(&st->mailbox, GIFT_WAITING, __ATOMIC_RELAXED);
			if (!__atomic_compare_exchange_n(&sh->worker[victim]->requester, &nobody,
							 (int)st->index, false, __ATOMIC_RELEASE,
							 __ATOMIC_RELAXED))
				__atomic_store_n(&st->mailbox, GIFT_NONE, __ATOMIC_RELAXED);
			wait = 256; /* after a refusal, a while before asking again */
		}
		share_yield(sh);
		maybe_progress(st);
		__builtin_ia32_pause();
	}
}

/*
 * One worker's part of a depth-first search: from the initial state (@first)
 * or from states the others give it, until every worker is idle. With one
 * worker, the initial state's exploration is the whole search.
 */
static int dfs_work(struct search *st, bool first)
{
	struct shared *sh = st->sh;
	bool counted_idle = !first; /* dfs() counts the workers that start without a state */
	int rc = 0;

	share_read(sh);
	if (sh->parallel && !st->gift && !(st->gift = sim_clone(st->init)))
		rc = oom(st);
	if (rc == 0 && first && (rc = dfs_initial(st)) == 0)
		rc = dfs_explore(st);
	for (; rc == 0; counted_idle = false) {
		if (!counted_idle)
			__atomic_fetch_add(&sh->idle, 1, __ATOMIC_RELEASE);
		if ((rc = dfs_await(st)) <= 0)
			break;
		rc = dfs_explore(st);
	}
	if (rc)
		__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	share_done(sh);
	return rc;
}

static void *dfs_worker_main(void *arg)
{
	struct search *w = arg;

	w->rc = dfs_work(w, false);
	return NULL;
}

/*
 * The depth-first search, on every worker (workers but the first start
 * idle and ask for states), then liveness from the records.
 */
static int dfs(struct search *st)
{
	struct shared *sh = st->sh;
	pthread_t tid[MC_MAX_WORKERS];
	unsigned started = 1;
	int rc;

	sh->idle = sh->nworkers - 1;
	for (; started < sh->nworkers; started++)
		if (pthread_create(&tid[started], NULL, dfs_worker_main, sh->worker[started]) != 0)
			break;
	if (started < sh->nworkers) {
		/* a worker that never runs would be asked forever */
		__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
		snprintf(st->err, st->errlen, "could not start worker %u of %u", started + 1,
			 sh->nworkers);
		rc = -1;
	} else {
		rc = dfs_work(st, true);
	}
	for (unsigned w = 1; w < started; w++) {
		pthread_join(tid[w], NULL);
		if (!rc)
			rc = sh->worker[w]->rc;
	}
	if (!rc && drop_record_blocks(sh) != 0)
		rc = oom(st);
	if (!rc && st->dfs_records && st->liveness)
		rc = liveness_by_records(st);
	return rc;
}

/* --- entry points -------------------------------------------------------------------- */

/* A worker's own machines and buffers, each a copy of the initial state's. */
static int setup_machines(struct search *st)
{
	if (!(st->work = sim_clone(st->init)) || !(st->child = sim_clone(st->init)) ||
	    !(st->prev = sim_clone(st->init)) || !(st->live = sim_clone(st->init)) ||
	    mc_visited_init(&st->settled, 1 << 12) != 0)
		return -1;
	for (int i = 0; i < MC_BATCH; i++)
		if (!(st->kid[i] = sim_clone(st->init)))
			return -1;
	st->path_cap = (size_t)(st->cfg->liveness_scans + 2) * (MC_MAX_SLOTS + 2) + 16;
	return (st->path = malloc(st->path_cap * sizeof(*st->path))) ? 0 : -1;
}

static void teardown_machines(struct search *st)
{
	dfs_free(&st->dfs);
	sim_free(st->gift);
	sim_free(st->work);
	sim_free(st->child);
	sim_free(st->prev);
	sim_free(st->live);
	for (int i = 0; i < MC_BATCH; i++)
		sim_free(st->kid[i]);
	mc_visited_free(&st->settled);
	free(st->path);
	free(st->actions);
	mc_mem_free(st->level[0].buf, st->level[0].cap);
	mc_mem_free(st->level[1].buf, st->level[1].cap);
	free(st->level[0].off);
	free(st->level[1].off);
}

/* The first worker: the initial state and what every worker shares. */
static int setup(struct search *st)
{
	struct shared *sh = st->sh;

	st->init = mc_initial_state(st->cfg, st->res->mutant, &st->x0, st->err, st->errlen);
	if (!st->init)
		return -1;
	if (setup_machines(st) != 0 || mc_visited_init(&sh->seen, 1 << 16) != 0 ||
	    reserve_records(sh) != 0 ||
	    (st->res->bitstate_log2 && mc_bits_init(&sh->bits, st->res->bitstate_log2) != 0))
		return oom(st);
	st->res->stats.distinct = 1;
	return 0;
}

/* Worker @i (i > 0) of a parallel search: a copy of @st with machines of its own. */
static struct search *new_worker(const struct search *st)
{
	/* aligned: the asking and answering fields are a cache line each */
	struct search *w = aligned_alloc(_Alignof(struct search), sizeof(*w));

	if (!w)
		return NULL;
	memset(w, 0, sizeof(*w));
	w->requester = -1;
	w->cfg = st->cfg;
	w->opt = st->opt;
	w->res = &w->own;
	w->own.mutant = st->res->mutant;
	w->bound = st->bound;
	w->liveness = st->liveness;
	w->dfs_records = st->dfs_records;
	w->sh = st->sh;
	w->init = st->init; /* read only: each worker clones it */
	w->x0 = st->x0;
	w->start = st->start;
	w->last_progress = st->last_progress;
	w->err = w->errbuf;
	w->errlen = sizeof(w->errbuf);
	if (setup_machines(w) != 0) {
		teardown_machines(w);
		free(w);
		return NULL;
	}
	return w;
}

static int setup_workers(struct search *st, unsigned n)
{
	struct shared *sh = st->sh; /* worker 0, st, is there already (mc_check) */
	pthread_rwlockattr_t attr;
	int rc;

	if (n <= 1)
		return 0;
	/*
	 * Writer-preferring: a parallel DFS worker lets the read lock go only
	 * for a grow to take it (share_yield), so it must not get it back first.
	 */
	if (pthread_rwlockattr_init(&attr) != 0)
		return oom(st);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	rc = pthread_rwlock_init(&sh->lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	if (rc != 0)
		return oom(st);
	sh->parallel = true;
	for (; sh->nworkers < n; sh->nworkers++) {
		if (!(sh->worker[sh->nworkers] = new_worker(st)))
			return oom(st);
		sh->worker[sh->nworkers]->index = sh->nworkers;
	}
	return 0;
}

/* The other workers' counts into the first's, and the first violation or error. */
static void merge_workers(struct search *st, int rc)
{
	struct shared *sh = st->sh;

	for (unsigned i = 1; i < sh->nworkers; i++) {
		struct search *w = sh->worker[i];
		struct mc_result *r = &w->own;

		st->res->stats.generated += r->stats.generated;
		st->res->stats.distinct += r->stats.distinct;
		st->res->stats.cut += r->stats.cut;
		st->res->stats.liveness_runs += r->stats.liveness_runs;
		if (r->stats.depth > st->res->stats.depth) /* DFS: each its stack's */
			st->res->stats.depth = r->stats.depth;
		if (rc < 0 && w->errbuf[0] && !st->err[0])
			snprintf(st->err, st->errlen, "%s", w->errbuf);
		if (r->verdict == MC_VIOLATION && st->res->verdict != MC_VIOLATION) {
			st->res->verdict = r->verdict;
			st->res->invariant = r->invariant;
			memcpy(st->res->message, r->message, sizeof(r->message));
			st->res->trace = r->trace;
			r->trace = NULL;
		}
	}
}

static void teardown(struct search *st)
{
	struct shared *sh = st->sh;

	for (unsigned i = 1; i < sh->nworkers; i++) {
		teardown_machines(sh->worker[i]);
		mc_result_free(&sh->worker[i]->own);
		free(sh->worker[i]);
	}
	if (sh->parallel)
		pthread_rwlock_destroy(&sh->lock);
	sim_free(st->init);
	teardown_machines(st);
	mc_visited_free(&sh->seen);
	mc_bits_free(&sh->bits);
	free(sh->rec);
}

/* The depth bound a search runs under (0: none), from the caller's and the configuration's. */
static uint64_t depth_bound(uint64_t asked, uint64_t configured)
{
	if (asked == MC_DEPTH_NONE)
		return 0;
	return asked ? asked : configured;
}

int mc_check(const struct mc_config *cfg, const struct mc_options *opt,
	     struct mc_result *res, char *err, size_t errlen)
{
	static const struct mc_options defaults;
	struct shared sh = { 0 };
	struct search st = { .cfg = cfg, .opt = opt ? opt : &defaults, .res = res, .err = err,
			     .errlen = errlen, .sh = &sh };
	unsigned workers;
	bool budget_spent;
	int rc;

	memset(res, 0, sizeof(*res));
	if (errlen)
		err[0] = 0;
	res->mutant = st.opt->mutant;
	res->search = st.opt->search != MC_SEARCH_DEFAULT ? st.opt->search : cfg->search;
	res->depth_bound = depth_bound(st.opt->depth, cfg->depth);
	st.liveness = cfg->check[MC_INV_LIVENESS];
	if (st.opt->mutant >= SIM_MUTANT_COUNT) {
		snprintf(err, errlen, "no such mutant");
		return -1;
	}
	if (st.opt->workers > MC_MAX_WORKERS) {
		snprintf(err, errlen, "at most %d workers", MC_MAX_WORKERS);
		return -1;
	}
	if (st.opt->bitstate_log2) {
		if (st.opt->bitstate_log2 < 20 || st.opt->bitstate_log2 > 36) {
			snprintf(err, errlen, "bitstate hashing takes 2^20 to 2^36 bits");
			return -1;
		}
		if (st.opt->search == MC_SEARCH_BFS) {
			snprintf(err, errlen, "bitstate hashing is a depth-first search");
			return -1;
		}
		/* the bits cannot say at which depth a state was seen: no bound but the caller's */
		res->search = MC_SEARCH_DFS;
		res->depth_bound = depth_bound(st.opt->depth, 0);
		res->bitstate_log2 = st.opt->bitstate_log2;
	}
	st.bound = res->depth_bound;
	st.dfs_records = res->search == MC_SEARCH_DFS && !st.bound && !res->bitstate_log2;
	/* a depth-first search under a bound or over bits is one worker's */
	workers = res->search == MC_SEARCH_DFS && !st.dfs_records ? 1 : st.opt->workers;
	res->workers = workers ? workers : 1;
	clock_gettime(CLOCK_MONOTONIC, &st.start);
	st.last_progress = st.start;
	sh.worker[0] = &st;
	sh.nworkers = 1;
	st.requester = -1;
	rc = setup(&st);
	if (rc == 0)
		rc = setup_workers(&st, res->workers);
	if (rc == 0)
		rc = res->search == MC_SEARCH_DFS ? dfs(&st) : bfs(&st);
	budget_spent = out_of_budget(&st); /* counts every worker's states */
	merge_workers(&st, rc);
	res->stats.seconds = since(&st.start);
	res->stats.coverage = sh.bits.word ? mc_bits_coverage(&sh.bits) : 1.0;
	res->stats.bits_set = sh.bits.set;
	res->stats.exhaustive = rc == 0 && !res->stats.cut && !budget_spent &&
				res->verdict == MC_PASS && !sh.bits.word;
	teardown(&st);
	if (rc < 0) {
		mc_result_free(res);
		return -1;
	}
	return 0;
}

void mc_result_free(struct mc_result *res)
{
	mc_trace_free(res->trace);
	res->trace = NULL;
}
