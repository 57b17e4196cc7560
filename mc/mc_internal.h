/*
 * mc_internal.h - what the model checker's files share: the parsed
 * configuration, the model's part of a search state (action budgets, the
 * shadow of expected page contents, a knob store in progress), actions, and
 * the entry points of each file. Not installed.
 *
 * A search state is a struct sim (the simulated machine) plus a struct
 * mc_extra. The shadow in mc_extra is the user's view of memory: for every
 * page slot, the abstract content the user last wrote there (a base value and
 * the value of the last write at the configuration's offset). Data integrity
 * compares it with the simulator's bytes; it is kept apart from the simulator
 * so that a simulator bug cannot hide itself.
 *
 * Locks (docs/model-checking.md, "Locks"): mc_extra also holds who holds
 * each lock that a modelled path keeps across steps. That is
 * ksm_thread_mutex alone: ksmd holds it for a whole batch, and the run,
 * merge_across_nodes and max_page_sharing stores take it. Every other lock
 * of the modelled paths (the mmap lock around a page's walk or an madvise,
 * the page lock around a merge, ksm_mmlist_lock) is taken and released
 * inside one step, so it can neither block another step nor deadlock.
 */
#ifndef KSMKIT_MC_INTERNAL_H
#define KSMKIT_MC_INTERNAL_H

#include "mc.h"
#include "sim_internal.h"
#include "sim_mc.h"

#define MC_MAX_VALUES 14      /* distinct page values, initial and written */
#define MC_MAX_REGIONS 16
#define MC_MAX_PROCS 16       /* configured processes plus fork children */
#define MC_MAX_SLOTS 192      /* page slots of the machine, fork copies included */
#define MC_MAX_STORES 8       /* store_values entries */
#define MC_NO_CONTENT 0xffu   /* shadow: no expectation (unmapped, exited) */
#define MC_VALUE_UNTOUCHED 0xffu /* region contents: never written (fill none) */
#define MC_NAME_MAX 63

/* Budgets of user actions: how many of each kind a run may take. */
enum mc_budget {
	MC_B_WRITES,
	MC_B_MERGES,
	MC_B_UNMERGES,
	MC_B_UNMAPS,
	MC_B_FORKS,
	MC_B_EXITS,
	MC_B_STORES,
	MC_B_RUNS,
	MC_B_COUNT
};

struct mc_region {
	char name[MC_NAME_MAX + 1];
	unsigned line;
	unsigned process;        /* index into procs[] */
	uint32_t npages;
	uint8_t *value;          /* per page: index into values[], or MC_VALUE_UNTOUCHED */
	int node;                /* -1: node 0, like the workload's "any" */
	int merge;               /* enum wl_merge */
	bool dirty_tracking;
};

struct mc_store {
	enum wl_knob knob;
	uint64_t value;
	char text[32];           /* as written in the configuration */
};

/* One abstract page content: a base value and maybe the last write on it. */
struct mc_content {
	uint8_t base;            /* index into values[] */
	uint8_t written;         /* index into values[] + 1, or 0: no write */
	bool plain;              /* its bytes are one value's repeated word */
	uint64_t plain_value;    /* ... that value */
	uint8_t npatch;          /* else: bytes differing from base (sorted) */
	struct sim_patch_byte patch[8];
};

struct mc_config {
	char *path;
	char *description;
	enum wl_kernel kernel;
	enum wl_detector detector;
	enum wl_thp_dirty thp_dirty;
	enum wl_smart_scan_policy smart_scan_policy;
	uint64_t knobs[WL_KNOB_COUNT];
	bool knob_given[WL_KNOB_COUNT];   /* set in [check], for wl_knobs_check */
	unsigned knob_line[WL_KNOB_COUNT]; /* where, for messages */
	bool ksmd_scan;          /* ksmd steps are whole full scans, not pages */
	enum mc_search search;
	uint64_t depth;          /* 0: no bound */
	bool check[MC_INV_COUNT];
	unsigned liveness_scans; /* K */
	uint64_t values[MC_MAX_VALUES];
	unsigned nvalues;
	uint8_t write_value[MC_MAX_VALUES]; /* indexes into values[] of the write alphabet */
	unsigned nwrite_values;
	uint32_t offset;         /* where writes store their value */
	uint8_t budget[MC_B_COUNT];
	struct mc_store store[MC_MAX_STORES];
	unsigned nstores;
	uint8_t run_value[3];
	unsigned nrun_values;
	char proc_name[MC_MAX_PROCS][MC_NAME_MAX + 1];
	unsigned nprocs;
	struct mc_region region[MC_MAX_REGIONS];
	unsigned nregions;
	unsigned nr_nodes;
	unsigned nslots_initial; /* page slots after setup */
	/* a batch of pages_to_scan pages can end before a full scan does */
	bool batch_by_count;
	/* abstract contents: id = base * (nvalues + 1) + written */
	struct mc_content content[MC_MAX_VALUES * (MC_MAX_VALUES + 1)];
	unsigned ncontents;
};

/* The locks a state records (mc_extra.lock[]): X(ENUM, "kernel name"). */
#define MC_LOCKS(X) X(KSM_THREAD_MUTEX, "ksm_thread_mutex")
#define MC_LOCK_ENUM_(name, text) MC_LOCK_##name,
enum mc_lock { MC_LOCKS(MC_LOCK_ENUM_) MC_LOCK_COUNT };
#undef MC_LOCK_ENUM_

/* Who holds a lock: nobody, ksmd, or store[h - MC_HOLDER_STORE] (its syscall). */
enum mc_holder {
	MC_HOLDER_NONE = 0,
	MC_HOLDER_KSMD = 1,
	MC_HOLDER_STORE = 2,
};

/* The model's part of a state. Only [0, nslots) of expect[] is meaningful. */
struct mc_extra {
	uint8_t budget[MC_B_COUNT];
	int8_t pending;          /* store[] index begun and not yet committed, or -1 */
	uint8_t lock[MC_LOCK_COUNT]; /* each lock's holder: enum mc_holder */
	/*
	 * While ksmd holds ksm_thread_mutex (a batch in progress): the pages
	 * it may still process before the batch ends by count; 0 between
	 * batches. Where no batch can end by count (mc_config.batch_by_count
	 * false) it is only 1 or 0, so that it adds no states.
	 */
	uint8_t batch_left;
	uint8_t nprocs;          /* processes so far (fork children get names) */
	uint16_t nslots;
	uint8_t expect[MC_MAX_SLOTS]; /* per page slot: content id or MC_NO_CONTENT */
};

enum mc_action_kind {
	MC_ACT_KSMD,         /* ksmd processes one page (or wraps), or a full scan */
	MC_ACT_WRITE,        /* write values[arg] at the offset of page @page of @area */
	MC_ACT_MERGE,        /* madvise(MADV_MERGEABLE) on that page */
	MC_ACT_UNMERGE,      /* madvise(MADV_UNMERGEABLE) on that page */
	MC_ACT_UNMAP,        /* munmap that page */
	MC_ACT_FORK,         /* process @area forks */
	MC_ACT_EXIT,         /* process @area exits */
	MC_ACT_STORE,        /* store[arg], in one step */
	MC_ACT_STORE_BEGIN,  /* store[arg]: what runs before ksm_thread_mutex */
	MC_ACT_STORE_COMMIT, /* the pending store, under ksm_thread_mutex */
	MC_ACT_RUN,          /* write @arg (0, 1 or 2) into run */
};

struct mc_action {
	uint8_t kind;
	uint8_t arg;
	uint16_t area;           /* area, or process for fork and exit */
	uint32_t page;
};

/* What one action did, for transition invariants and traces. */
struct mc_effect {
	long ret;                /* what the simulator call returned */
	bool processed;          /* a ksmd page step handed a page to cmp_and_merge_page */
	uint32_t slot;           /* ... that page's slot */
	unsigned wraps;          /* full scans completed by this action */
};

/* --- mc_config.c --------------------------------------------------------- */
/* Whether a knob's store is split around ksm_thread_mutex (checks state). */
bool mc_store_is_split(enum wl_knob knob);
/* Whether a knob's store (its committing half, when split) takes ksm_thread_mutex. */
bool mc_store_takes_mutex(enum wl_knob knob);
/* The kernel's name of lock @l. */
const char *mc_lock_name(enum mc_lock l);

/* --- mc_model.c: the transition system --------------------------------------- */

/* The machine after setup (as sim_driver.c sets a workload up), and its extra. */
struct sim *mc_initial_state(const struct mc_config *cfg, unsigned mutant,
			     struct mc_extra *x, char *err, size_t errlen);
/* Actions enabled in a state, in a fixed order; returns how many (<= max). */
size_t mc_enabled(const struct mc_config *cfg, const struct sim *s, const struct mc_extra *x,
		  struct mc_action *out, size_t max);
#define MC_MAX_ACTIONS (1 + MC_MAX_SLOTS * (MC_MAX_VALUES + 3) + 4 * MC_MAX_PROCS + \
			MC_MAX_STORES + 4)
/*
 * One ksmd page step (time kept still); fills @eff. With @x, ksmd takes
 * ksm_thread_mutex if its batch is just starting and releases it when the
 * batch ends (the wrap, or pages_to_scan pages); NULL for ksmd alone (a
 * liveness continuation, where no one else takes the mutex).
 */
void mc_ksmd_page_step(const struct mc_config *cfg, struct sim *s, struct mc_extra *x,
		       struct mc_effect *eff);
/* Whether ksmd could step but waits for a lock (a deadlock's blocked actor). */
bool mc_ksmd_blocked(const struct sim *s, const struct mc_extra *x);
/* Apply a user action (not MC_ACT_KSMD) to @s and @x; fills @eff. */
void mc_apply_user(const struct mc_config *cfg, struct sim *s, struct mc_extra *x,
		   const struct mc_action *a, struct mc_effect *eff);
/* The page slot of page @page of area @area. */
static inline uint32_t mc_slot(const struct sim *s, unsigned area, uint32_t page)
{
	return s->area[area].slot + page;
}
/* Name of process @mm (configured, or a fork child's "PARENT-fork-N"). */
void mc_process_name(const struct mc_config *cfg, const struct sim *s, unsigned mm,
		     char *buf, size_t len);
/* One line describing @a ("write 0x2 at page 1 of a in p0"). */
void mc_action_describe(const struct mc_config *cfg, const struct sim *s,
			const struct mc_action *a, char *buf, size_t len);
/* Whether the cursor is between full scans (where a workload event can act). */
static inline bool mc_between_scans(const struct sim *s)
{
	return s->scan.mm == SIM_NO_SLOT;
}

/* --- mc_invariant.c ------------------------------------------------------------ */

/*
 * Check the state invariants of @s (and @x) that @cfg enables. 0 when all
 * hold, else the failing invariant + 1 with a message in @msg.
 */
int mc_check_state(const struct mc_config *cfg, const struct sim *s, const struct mc_extra *x,
		   char *msg, size_t len);
/*
 * Same for the transition invariants of a ksmd step from @parent to @s. Of
 * @parent they read its pages and frames only (nslots, nframes and the two
 * pools): the search may pass a machine holding just those.
 */
int mc_check_transition(const struct mc_config *cfg, const struct sim *parent,
			const struct mc_effect *eff, const struct sim *s, char *msg, size_t len);
/*
 * Whether every group of equal mergeable pages is merged (the liveness goal,
 * docs/model-checking.md); false with the first unmerged group in @msg
 * (which may be NULL: then only the verdict is computed, quickly).
 */
bool mc_all_merged(const struct mc_config *cfg, const struct sim *s, char *msg, size_t len);
/* Whether a liveness run starts at this state (run = 1, no store pending). */
bool mc_liveness_applies(const struct sim *s, const struct mc_extra *x);

/* --- mc_search.c / mc_trace.c ------------------------------------------------ */

struct mc_trace_step {
	struct mc_action action;
	struct mc_effect effect;
	bool user_stopped;       /* part of a liveness continuation: ksmd alone */
	bool between_scans;      /* the cursor was between full scans before it */
	uint64_t scans;          /* full scans completed after it (the workload's count) */
	int64_t counter[TRACE_COUNTER_COUNT];
	unsigned run;            /* run after it */
	char text[200];          /* what happened, for people */
	/* for the workload writer: who acted, on what (user actions) */
	char proc[80], region[MC_NAME_MAX + 1], child[80];
};

struct mc_trace {
	int64_t initial[TRACE_COUNTER_COUNT];
	struct mc_trace_step *step;
	size_t nsteps;
	size_t liveness_from;    /* steps from here on are ksmd alone (== nsteps: none) */
};

/*
 * Replay @path (actions from the initial state; then @liveness_scans full
 * scans of ksmd alone, for a liveness counterexample) into a trace. With
 * @unmerged, also say there what is still not merged at the end.
 */
struct mc_trace *mc_trace_build(const struct mc_config *cfg, unsigned mutant,
				const struct mc_action *path, size_t n, unsigned liveness_scans,
				char *unmerged, size_t unmerged_len, char *err, size_t errlen);
void mc_trace_free(struct mc_trace *t);

#endif
