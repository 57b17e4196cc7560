/*
 * mc.h - libksmmc: an explicit-state model checker over the KSM simulator.
 *
 * A configuration file (docs/model-checking.md; INI like the workload
 * language) describes a small machine: processes, regions and their page
 * contents, KSM's knobs and semantics, and a budget of user actions (writes
 * from a value alphabet, unmerges, unmaps, forks, exits, knob and run
 * stores). The checker explores every interleaving of those actions with
 * ksmd's steps (one page, or one full scan, at a time), breadth-first for a
 * shortest counterexample or depth-first under a depth bound, and checks
 * named invariants after every step: data integrity, KSM pages read-only,
 * the trees' shape, the max_page_sharing limit, the counters, NUMA
 * separation, ksmd's volatility rule, deadlock freedom (ksm_thread_mutex is
 * part of the state), and bounded liveness.
 *
 * Visited states are remembered by 64-bit fingerprints (XXH3 over the
 * behaviour-relevant state, sim_mc.h): two distinct states share one with
 * probability 2^-64, so a search over n states wrongly skips one with
 * probability at most about n^2 / 2^65 (1e-6 for 6 million states).
 *
 * A violation comes with the shortest trace (BFS) from the initial state,
 * replayed step by step with the counters, and can be written as a workload
 * file that `ksmkit sim` and `ksmkit run` replay when every user action falls
 * between full scans. Seeded bugs of the simulator (sim_mutant.h) are
 * selected by mc_options.mutant.
 *
 * Errors are returned with a message, never printed; nothing here exits.
 */
#ifndef KSMKIT_MC_H
#define KSMKIT_MC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct mc_config;
struct mc_trace;

/* A configuration error: "FILE:LINE: message" (line 0: the file as a whole). */
struct mc_error {
	unsigned line;
	char text[512];
};

/*
 * Parse the configuration at @path (or @len bytes of @text named @name).
 * 0 and *out (free with mc_config_free), or -1 with *out NULL and @err set.
 */
int mc_config_parse_file(const char *path, struct mc_config **out, struct mc_error *err);
int mc_config_parse_buffer(const char *text, size_t len, const char *name,
			   struct mc_config **out, struct mc_error *err);
/*
 * A [check] key given apart from the file (ksmkit check --set KEY=VALUE):
 * read as if the file's [check] said it, in place of the file's own line
 * for that key if it has one; its errors name "--set" and no line. The _with
 * parsers take @nset of them (the plain ones none).
 */
struct mc_setting {
	const char *key, *value;
};
int mc_config_parse_file_with(const char *path, const struct mc_setting *set, size_t nset,
			      struct mc_config **out, struct mc_error *err);
int mc_config_parse_buffer_with(const char *text, size_t len, const char *name,
				const struct mc_setting *set, size_t nset,
				struct mc_config **out, struct mc_error *err);
void mc_config_free(struct mc_config *cfg);
/* The configuration's description line, or NULL. */
const char *mc_config_description(const struct mc_config *cfg);

/* --- invariants and mutants --------------------------------------------------- */

enum mc_invariant {
	MC_INV_DATA,          /* every page reads what the user last wrote to it */
	MC_INV_KSM_READONLY,  /* no KSM page (nor KSM's zero page) is mapped writable */
	MC_INV_STABLE_TREE,   /* stable trees ordered, one node per content, chains sound */
	MC_INV_UNSTABLE_TREE, /* unstable trees hold exactly this scan's unstable items */
	MC_INV_VISIT,         /* after a visit, a page's rmap_item agrees with its page */
	MC_INV_MAX_SHARING,   /* no merge makes a KSM page exceed max_page_sharing */
	MC_INV_COUNTERS,      /* every counter equals its recomputation from the state */
	MC_INV_NUMA,          /* merge_across_nodes = 0: no KSM page spans nodes */
	MC_INV_VOLATILITY,    /* a page whose bytes changed since its last visit waits */
	MC_INV_DEADLOCK,      /* no lock outlives its holder, no one waits forever */
	MC_INV_LIVENESS,      /* once the user stops, K full scans merge every group */
	MC_INV_COUNT
};

const char *mc_invariant_name(int inv);
/* Whether @cfg checks invariant @inv (its `invariants` key; all by default). */
bool mc_config_checks(const struct mc_config *cfg, int inv);
/* One paragraph: exactly what is checked. */
const char *mc_invariant_doc(int inv);
/* The invariant called @name, or -1. */
int mc_invariant_lookup(const char *name);

/* Seeded simulator bugs (sim_mutant.h): names, one-line descriptions. */
unsigned mc_mutant_count(void); /* including 0, "none" */
const char *mc_mutant_name(unsigned mutant);
const char *mc_mutant_doc(unsigned mutant);
/* The mutant called @name ("none" is 0), or -1. */
int mc_mutant_lookup(const char *name);

/* --- checking -------------------------------------------------------------- */

enum mc_search {
	MC_SEARCH_DEFAULT, /* as the configuration says */
	MC_SEARCH_BFS,     /* breadth-first: shortest counterexamples */
	MC_SEARCH_DFS,     /* depth-first, under a depth bound or none: less memory */
};

/*
 * mc_options.depth for a depth-first search without a bound, whatever the
 * configuration says. Each state is then expanded once, as SPIN does: with a
 * bound, a state met again at a smaller depth must be expanded again, for
 * what lies beyond the bound from its first visit.
 */
#define MC_DEPTH_NONE UINT64_MAX

struct mc_stats {
	uint64_t generated;   /* successor states computed (revisits included) */
	uint64_t distinct;    /* distinct states (by fingerprint) */
	uint64_t depth;       /* deepest level reached (steps from the initial state) */
	uint64_t cut;         /* states not expanded because of the depth bound */
	uint64_t liveness_runs; /* K-scan continuations simulated for liveness */
	double seconds;       /* wall-clock time of the search */
	bool exhaustive;      /* every reachable state was explored */
	/* bitstate: the estimated fraction of the states met that were explored */
	double coverage;
	uint64_t bits_set;    /* bitstate: bits set of the 2^bitstate_log2 */
};

struct mc_options {
	enum mc_search search;
	/* depth bound; 0: the configuration's (0 there: none); MC_DEPTH_NONE: none */
	uint64_t depth;
	unsigned mutant;      /* enum sim_mutant; 0: the simulator as written */
	uint64_t max_states;  /* stop after this many distinct states; 0: no limit */
	/*
	 * Threads for a breadth-first search (0 or 1: one, at most 8): the
	 * states and counts are one thread's; the trace printed may take
	 * another shortest path. A depth-first search always has one.
	 */
	unsigned workers;
	/*
	 * Bitstate hashing (SPIN's supertrace) instead of the visited set: a
	 * depth-first search, without a depth bound unless one is given, that
	 * remembers 2^bitstate_log2 bits (20 to 36) and two bits a state, so a
	 * state may be wrongly taken as seen; the coverage is estimated. 0: off.
	 */
	unsigned bitstate_log2;
#define MC_BITS_PER_STATE 2 /* bitstate hashing: bits set for each state */
	/* called about once a second during the search (may be NULL) */
	void (*progress)(void *arg, const struct mc_stats *stats);
	void *progress_arg;
};

enum mc_verdict {
	MC_PASS,      /* no invariant failed in the states explored */
	MC_VIOLATION, /* an invariant failed: see invariant, message, trace */
};

struct mc_result {
	enum mc_verdict verdict;
	struct mc_stats stats;
	enum mc_search search;     /* the search that ran */
	unsigned workers;          /* the threads it ran on */
	unsigned bitstate_log2;    /* bitstate hashing's 2^N bits; 0: the visited set */
	uint64_t depth_bound;      /* 0: none */
	unsigned mutant;
	int invariant;             /* MC_VIOLATION: enum mc_invariant */
	char message[512];         /* MC_VIOLATION: what is wrong in the last state */
	struct mc_trace *trace;    /* MC_VIOLATION: the steps that lead there */
};

/*
 * Explore @cfg's state space under @opt (NULL: defaults). Returns 0 with
 * @res filled (free it with mc_result_free), or -1 with a reason in @err
 * (out of memory, or a configuration the simulator refuses).
 */
int mc_check(const struct mc_config *cfg, const struct mc_options *opt,
	     struct mc_result *res, char *err, size_t errlen);
void mc_result_free(struct mc_result *res);

/* --- counterexamples ------------------------------------------------------- */

/*
 * The trace as text: the initial state, then one line per step (what
 * happened, and every counter that changed), the violation last.
 */
int mc_trace_print(const struct mc_config *cfg, const struct mc_result *res, FILE *out);

/* The statistics (and the violation with its trace) as one JSON object. */
int mc_result_write_json(const struct mc_config *cfg, const struct mc_result *res, FILE *out);

/*
 * Write the trace as a workload file (docs/workload.md) that `ksmkit sim`
 * replays: regions and knobs from the configuration, each user action as an
 * event at its full-scan point, `scans` so that the run passes the violation.
 * Returns 0, or -1 with the reason in @why when the trace cannot be said in
 * the workload language (a user action in the middle of a full scan, or a
 * knob store split around ksmd's steps).
 */
int mc_trace_write_workload(const struct mc_config *cfg, const struct mc_result *res,
			    FILE *out, char *why, size_t whylen);

/* Number of steps in a trace. */
size_t mc_trace_length(const struct mc_trace *trace);

#endif
