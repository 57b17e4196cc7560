/*
 * sim_deferred.h - a continuous writer's writes to pages that only it
 * changes, applied when something looks at the page instead of when they
 * fall due. Nai Xia's writer stores ten million values a second; ksmd looks
 * at each page about sixteen times a second, so applying a page's writes
 * when ksmd reaches it touches that page once instead of ten times, with the
 * same result.
 *
 * The contract. A deferred writer writes the pages first + step * k (k <
 * count) of one area in order, round after round; its write j goes to
 * position j % count, at an offset drawn from its stream (the draw that
 * wl_offset_pick() would take: splitmix64 counts, so any draw is at hand,
 * wl_rng_peek(); draw j, until a draw that wl_rng_below() would redraw,
 * where deferral stops) and with the value it would have stored. A write is
 * applied late only where nothing could tell: to a page mapped present,
 * private and writable (a write there touches that page alone: its bytes,
 * its dirty bits, or with a THP its folio's), and only until the simulator
 * reads that page: ksmd visiting it or comparing it in a tree settles it
 * first (hooks in sim_scan.c and sim_merge.c, sim_deferred_settle(); a
 * smart-scan skip reads only the rmap_item, and leaves it waiting). Every
 * other write (a page absent, KSM, shared after fork, write-protected by
 * ksmd's merge) is applied when due, in order (the page is marked eager:
 * merge and unshare tell sim_deferred_protected()). Anything else that may
 * read or change pages (workload steps, captures, scan hooks) must be
 * preceded by sim_deferred_flush(), after which the eager marks are taken
 * again from the PTEs. The memo of walks (sim_memo.c) is told of each write
 * when it falls due, as sim_write() tells it (telling it again when the
 * write is applied changes nothing: the page was not inserted in between, a
 * visit settles it first).
 *
 * check_sim_deferred runs workloads with and without deferral and requires
 * the same trace row for row and the same state at every scan row.
 */
#ifndef KSMKIT_SIM_DEFERRED_H
#define KSMKIT_SIM_DEFERRED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rng.h"
#include "workload.h"

struct sim;

/*
 * The pages @sel selects of a region of @npages as the sequence first +
 * step * k, k < count, when the selection is one that takes no draws (all,
 * every:N): the writers a deferred writer can take. False otherwise.
 */
bool sim_deferred_sequence(const struct wl_pagesel *sel, uint64_t npages, uint64_t *first,
			   uint64_t *step, uint64_t *count);

/* What the writer writes, as its eager loop would (sim_driver.c). */
struct sim_deferred_spec {
	int area;
	uint64_t first, step, count; /* its pages: first + step * k, k < count */
	uint32_t off_lo;             /* offset: off_lo, plus a uniform draw */
	uint32_t off_span;           /* below off_span when it is above 1 */
	struct wl_rng rng;           /* its stream before its first write */
	bool fresh;                  /* content_fresh_value(counter), else value */
	uint64_t value;
};

/* Attach a deferred writer to @s (one at most). 0, EINVAL or ENOMEM. */
int sim_deferred_start(struct sim *s, const struct sim_deferred_spec *spec);

/*
 * The next @n writes fell due, their fresh values (when fresh) counting from
 * @fresh_first. Writes to pages marked eager are applied now, in order; the
 * others wait. *@issued says how many were taken: all @n and 0; or fewer
 * and EAGAIN, when the next one's draw is one wl_rng_below() redraws, or
 * 2^31 - 1 rounds of the pages were issued, or @fresh_first does not go on
 * from the last issue's values while writes wait (others took fresh values
 * without a flush first) (flush, stop, and go on eagerly with it); or the
 * errno of a write that failed.
 */
int sim_deferred_issue(struct sim *s, uint64_t n, uint64_t fresh_first, uint64_t *issued);

/* Every write due applied; the eager marks retaken at the next issue. */
int sim_deferred_flush(struct sim *s);

/*
 * Can the writer go on deferring: its area the same mapping, neither
 * unmapped in part nor userfaultfd-protected? When not, flush, then
 * sim_deferred_stop() and write eagerly from where it stopped.
 */
bool sim_deferred_usable(const struct sim *s, int area);

/*
 * Detach the writer (flushed first, or its pending writes are lost): the
 * writes issued, each of which took one draw when the offset is random
 * (the eager loop goes on from there). Does nothing when none is attached.
 */
void sim_deferred_stop(struct sim *s, uint64_t *issued);

/*
 * What a deferred writer of @count positions over an area of @pages pages
 * allocates (sim_admit.c): the SIM_DEFERRED_ALLOCS blocks of @alloc.
 */
#define SIM_DEFERRED_ALLOCS 3
void sim_deferred_sizes(uint64_t count, uint64_t pages, uint64_t alloc[SIM_DEFERRED_ALLOCS]);

/* The first error a write applied late met (0: none). */
int sim_deferred_error(const struct sim *s);

#endif
