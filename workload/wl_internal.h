/*
 * wl_internal.h - what the workload module's files share and nobody else sees:
 * the name index, the parse context that records the first error and the
 * helpers that word it, phase one's raw sections (wl_read.c), the value
 * parsers each section's keys are built from, and the set of unmapped pages
 * the timeline check keeps (wl_holes.c). Not installed.
 */
#ifndef KSMKIT_WL_INTERNAL_H
#define KSMKIT_WL_INTERNAL_H

#include "workload.h"

/* --- wl_index.c: names to positions ---------------------------------------- */

/*
 * A hash index from keys (names of sections, keys, regions, processes) to
 * positions in an array the caller owns. The index stores only positions and
 * 32 bits of each key's hash; the caller's @same callback says whether the
 * entry at a position has the key looked up, so the array may move (realloc)
 * between calls. Open addressing, at most half full, doubled as it fills:
 * adding and finding are O(1) expected, and lookups of every name in a
 * workload stay linear in its size. (libc's hsearch_r has a fixed size and
 * string keys only, tsearch no context for its comparison: neither fits.)
 */
struct wl_index_slot {
	uint32_t hash;
	uint32_t pos; /* position + 1; 0 marks an empty slot */
};

struct wl_index {
	struct wl_index_slot *slot;
	size_t mask;  /* slots - 1 (a power of two less one), 0 before the first add */
	size_t count;
};

/* Whether the entry at @pos of the caller's array has the key @key. */
typedef bool (*wl_index_same)(const void *ctx, size_t pos, const void *key);

/* The hash of @name in the name space @space (a section kind, a section). */
uint32_t wl_index_hash(uint64_t space, const char *name);
/* Position of the entry with @hash that @same says is @key, or -1. */
long wl_index_find(const struct wl_index *ix, uint32_t hash, wl_index_same same,
		   const void *ctx, const void *key);
/* Add @pos (< 2^32 - 1) under @hash; the caller checked it is new. 0, or -1
 * when out of memory (the index is unchanged). */
int wl_index_add(struct wl_index *ix, uint32_t hash, size_t pos);
void wl_index_free(struct wl_index *ix);

/* --- wl_message.c: errors a user can act on ---------------------------------- */

/* One parse in progress: the workload being built and its first error. */
struct wl_ctx {
	struct workload *wl;
	struct wl_error *err;
	bool failed;
	struct wl_index regions;   /* names of wl->regions */
	struct wl_index procs;     /* names of wl->procs */
	size_t procs_cap;          /* wl->procs has room for this many */
};

/*
 * Record "PATH:LINE: message" (or "PATH: message" for line 0) unless an
 * error is already recorded. The whole text goes through wl_escape(), so
 * input quoted in a message cannot drive the user's terminal.
 */
void wl_fail(struct wl_ctx *ctx, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Copy the C string @src into @dst (@cap bytes, @cap > 0) with every byte a
 * terminal could act on, or that is not UTF-8, written as \xNN: C0 controls,
 * DEL, C1 controls (U+0080 to U+009F) and invalid or overlong sequences.
 * Valid UTF-8 is kept; the copy is truncated whole escapes or characters at
 * a time, and always terminated.
 */
void wl_escape(char *dst, size_t cap, const char *src);

/*
 * "Did you mean?": feed every word a user could have meant to
 * wl_suggest_consider(); wl_suggest_result() is the closest, when it is close
 * enough to be a typo of @typed (one edit, or two in a word of 5 or more
 * characters; an edit is an insertion, deletion, substitution or swap of
 * neighbours), else NULL.
 */
struct wl_suggest {
	const char *typed;
	const char *best;
	unsigned distance;
};
void wl_suggest_init(struct wl_suggest *s, const char *typed);
void wl_suggest_consider(struct wl_suggest *s, const char *word);
const char *wl_suggest_result(const struct wl_suggest *s);

/* --- wl_read.c: phase one, the file's lines into raw sections ----------------- */

enum section_kind { SEC_GLOBAL, SEC_REGION, SEC_WRITER, SEC_EVENT, SEC_EXPECT };

/* Bounds on what is read (docs/workload.md, "File syntax"). */
#define WL_MAX_LINE 197                      /* characters once cleaned */
#define WL_MAX_RAW_LINE (4 * WL_MAX_LINE)    /* bytes as written */
#define WL_MAX_FILE_BYTES (UINT64_C(64) << 20)

struct raw_kv {
	const char *key;
	const char *value;
	unsigned line;
	char op[3];     /* [expect] sections: "=", "!=", "<", "<=", ">" or ">="; else "=" */
};

struct raw_section {
	enum section_kind kind;
	char name[WL_NAME_MAX + 1];
	char title[WL_NAME_MAX + 16]; /* "[region a]" for messages */
	unsigned line;
	struct raw_kv *kv;            /* its keys in file order (set once reading ends) */
	size_t nkv;
	size_t first_kv;              /* where they start in reader.kv */
};

/* Where lines come from: a buffer, or a stream read in bounded chunks. */
struct wl_source {
	const char *text;     /* buffer: the whole input; stream: its chunk buffer */
	size_t len, pos;      /* bytes in text, and the next unread one */
	FILE *stream;         /* NULL for a buffer */
	char *chunk;          /* stream: owned buffer behind text, freed by wl_read() */
	bool at_eof;          /* stream: no more bytes to read */
	uint64_t consumed;    /* bytes of every line handed out so far */
};

void wl_source_buffer(struct wl_source *src, const char *text, size_t len);
void wl_source_stream(struct wl_source *src, FILE *stream);

/* What phase one read: every section in file order, each with its keys. */
struct reader {
	struct wl_ctx *ctx;
	struct wl_source *src;
	unsigned line;               /* of the line being read */
	struct raw_section *sec;
	size_t nsec, sec_cap;
	struct raw_kv *kv;           /* the keys of every section, in file order */
	size_t nkv, kv_cap;
	struct wl_index sections;    /* (kind, name) of sec[] */
	struct wl_index keys;        /* (section, key) of kv[] */
	struct wl_strings *strings;  /* the text of keys and values */
	bool in_section;
	char op[3];                  /* the comparison of the line inih is reading */
};

/*
 * Read every line of @src into @r (zeroed but for ctx). Returns 0, or -1
 * with the first problem recorded in r->ctx: a line that is too long, holds
 * a NUL, a stray byte order mark or a carriage return that does not end it,
 * a syntax error, a duplicate section or key, a file over WL_MAX_FILE_BYTES
 * or a read error. Reading stops at the first problem. Frees what @src
 * allocated; wl_read_free() frees what was read, in either case.
 */
int wl_read(struct reader *r, struct wl_source *src);
void wl_read_free(struct reader *r);

/*
 * Value parsers. Each returns 0 on success, or -1 and writes the reason
 * (what was expected) into @why, for the caller to prefix with file:line,
 * section and key.
 */
int wl_parse_name(const char *text, char *why, size_t whylen);
int wl_parse_value(const char *text, struct wl_value *value, bool allow_fresh,
		   char *why, size_t whylen);
int wl_parse_pagesel(const char *text, uint64_t npages, struct wl_pagesel *sel,
		     char *why, size_t whylen);
int wl_parse_offset(const char *text, struct wl_offset *offset, char *why, size_t whylen);
int wl_parse_groups(const char *text, struct wl_group **groups, size_t *ngroups,
		    char *why, size_t whylen);
int wl_parse_after_scan(const char *text, uint64_t *scan, char *why, size_t whylen);
int wl_parse_rate(const char *text, uint64_t *rate, char *why, size_t whylen);

/*
 * Numbers with a bound. Each returns 0 with the value; -1 when @text is not
 * such a number (@why untouched: the caller says what it expected); -2 when it
 * is more than @max, with "too large (at most N)" in @why. Sizes and times
 * state N in the unit @text is written in ("at most 16t"), and return bytes
 * and nanoseconds.
 */
int wl_parse_u64_max(const char *text, uint64_t max, uint64_t *value, char *why, size_t whylen);
int wl_parse_size_max(const char *text, uint64_t max, uint64_t *bytes, char *why, size_t whylen);
int wl_parse_time_max(const char *text, uint64_t max, uint64_t *ns, char *why, size_t whylen);
/* Write "too large (at most MAX@unit)" into @why; returns -2. */
int wl_too_large(char *why, size_t whylen, uint64_t max, const char *unit);

void wl_pagesel_free(struct wl_pagesel *sel);
int wl_pagesel_copy(struct wl_pagesel *dst, const struct wl_pagesel *src);
bool wl_pagesel_equal(const struct wl_pagesel *a, const struct wl_pagesel *b);
/* Canonical text of a selection / offset / value / time (into @buf). */
const char *wl_pagesel_format(const struct wl_pagesel *sel, char *buf, size_t len);
const char *wl_offset_format(const struct wl_offset *offset, char *buf, size_t len);
const char *wl_value_format(const struct wl_value *value, char *buf, size_t len);
const char *wl_time_format(uint64_t ns, char *buf, size_t len);
const char *wl_groups_format(const struct wl_group *groups, size_t n, char *buf, size_t len);

/* --- wl_holes.c: pages unmapped so far, per process and region ---------------- */

/* Pages first, first + step, ... up to last (step >= 1, first <= last). */
struct wl_progression {
	uint64_t first, last, step;
};

/* The smallest page in both progressions, if any (Chinese remainder theorem). */
bool wl_progressions_meet(const struct wl_progression *a, const struct wl_progression *b,
			  uint64_t *page);

/*
 * The holes (unmapped pages) of every process's copy of every region, as the
 * timeline check replays the workload. A process forked from another starts
 * with its parent's holes (wl_holes_fork, O(1)); afterwards the two change
 * independently. Adding a run of pages and finding the first hole in a run
 * are O(log n) in the number of holes; strided holes (every:K, K > 1) are
 * compared one by one. wl_holes_add() expects @p disjoint from the holes
 * already there (the timeline check refuses unmapping a page twice).
 */
struct wl_holes;
struct wl_holes *wl_holes_new(size_t nprocs);   /* NULL when out of memory */
void wl_holes_free(struct wl_holes *h);
void wl_holes_fork(struct wl_holes *h, size_t parent, size_t child);
/* @proc has every page of every region again (an exec maps them anew). O(1). */
void wl_holes_clear(struct wl_holes *h, size_t proc);
/* 0, or -1 when out of memory (the workload cannot be checked). */
int wl_holes_add(struct wl_holes *h, size_t proc, size_t region, const struct wl_progression *p);
/* Whether @proc has unmapped any page of @region. */
bool wl_holes_any(const struct wl_holes *h, size_t proc, size_t region);
/* The smallest page of @want that @proc has unmapped from @region, if any. */
bool wl_holes_first(const struct wl_holes *h, size_t proc, size_t region,
		    const struct wl_progression *want, uint64_t *page);

/* --- workload.c's helpers for the other phase-two files --------------------- */

/* The process / region called @name, or -1. */
long wl_find_process(const struct wl_ctx *ctx, const char *name);
long wl_find_region(const struct wl_ctx *ctx, const char *name);
/* "unknown key 'x' in [expect e]; did you mean 'y'?" from @known and @more
 * (NULL-terminated lists; @more may be NULL). */
void wl_fail_unknown_key(struct wl_ctx *ctx, const struct raw_section *sec,
			 const struct raw_kv *kv, const char *const *known, const char *const *more);

/* --- wl_expect.c: [expect NAME] sections ------------------------------------ */

/* Read every [expect] section of @r into ctx->wl (after the events). 0 or -1. */
int wl_parse_expects(struct wl_ctx *ctx, const struct reader *r);
void wl_expects_free(struct workload *wl);
void wl_print_expects(const struct workload *wl, FILE *out);
bool wl_expects_equal(const struct workload *a, const struct workload *b);

/* Whole-run checks after every section parsed: see wl_timeline.c. */
int wl_check_timeline(struct wl_ctx *ctx);

const char *wl_fill_name(enum wl_fill fill);
const char *wl_thp_name(enum wl_thp thp);
const char *wl_merge_name(enum wl_merge merge);
const char *wl_when_name(enum wl_when when);

/* --- wl_capture.c: fill = capture ------------------------------------------------ */

/* A capture region's keys as written. */
struct wl_capture_spec {
	const char *path;       /* capture = FILE, as written */
	unsigned line;          /* of the capture key */
	uint64_t stream;        /* stream = N (default 0) */
	unsigned stream_line;   /* of the stream key, else the capture key's */
	bool all;               /* snapshots = all (default) */
	uint64_t first, last;   /* snapshots = A-B or N */
	unsigned snapshots_line; /* of the snapshots key, 0 without one */
	uint64_t every;         /* every = N scans (default 1); 0: every = capture or time */
	bool by_time;           /* every = time */
	unsigned every_line;    /* of the every key, else the capture key's */
};

/*
 * Read the capture @spec names (relative to the workload's file) and make
 * @reg a capture region: reg->pages (which must equal a given size) and
 * reg->capture. [global] must be parsed (the stop decides which snapshots
 * are reached). 0, or -1 with the error recorded: a file that cannot be
 * read or is damaged (its message names the byte offset), a stream or
 * snapshot it lacks, a snapshot the run never reaches.
 */
int wl_capture_load(struct wl_ctx *ctx, const char *title, const struct wl_capture_spec *spec,
		    struct wl_region *reg);
void wl_capture_free(struct wl_capture *cap);
/*
 * Give every distinct token of the workload's capture regions a fresh
 * value, from counter *@next on (advanced past them): one token, one value,
 * in every region that holds it. 0, or -1 when out of memory.
 */
int wl_capture_assign_values(struct workload *wl, uint64_t *next);
/* Writers and events that would make a replay inexact, refused: 0 or -1. */
int wl_check_captures(struct wl_ctx *ctx);

#endif
