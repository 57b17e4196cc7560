/*
 * wl_capture.c - fill = capture: a region made of one stream of a capture
 * file (libksmcapture), its snapshots replayed at scan boundaries.
 *
 * At parse time the file is read once, whole: the region's pages are the
 * union of the stream's VMAs over the snapshots replayed (so a heap that
 * grows, or a VMA that comes and goes, has one place), and each snapshot
 * becomes the list of pages whose content differs from the snapshot before
 * it. A content is coded (workload.h, struct wl_capture): absent, a zero
 * page, or the index of a distinct non-zero token, which the engines turn
 * into a workload value (the simulator) or the captured bytes (the
 * backend). Distinct tokens are distinct bytes, so both engines see the
 * same pages equal. This file also owns the rules that keep a replay exact
 * on both engines (wl_check_captures): nothing else may write, unmap or
 * protect a capture region, its process may not exec, and it may not exit
 * while snapshots are still to come. It does not read bytes: the backend
 * does, with the reader, when it writes the pages.
 */
#include "wl_internal.h"

#include "capture.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- the distinct tokens: token -> index, open addressing ------------------ */

struct token_map {
	uint64_t *key;   /* 0: empty (the zero token is never a key) */
	uint64_t *index;
	size_t mask, count;
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	return x;
}

static int map_grow(struct token_map *m)
{
	size_t n = m->mask ? (m->mask + 1) * 2 : 1024;
	uint64_t *key = calloc(n, sizeof *key), *index = calloc(n, sizeof *index);

	if (!key || !index) {
		free(key);
		free(index);
		return -1;
	}
	for (size_t i = 0; m->mask && i <= m->mask; i++) {
		size_t j;

		if (!m->key[i])
			continue;
		for (j = mix64(m->key[i]) & (n - 1); key[j]; j = (j + 1) & (n - 1))
			;
		key[j] = m->key[i];
		index[j] = m->index[i];
	}
	free(m->key);
	free(m->index);
	m->key = key;
	m->index = index;
	m->mask = n - 1;
	return 0;
}

/* The index of @token, added as the next one if new; UINT64_MAX when out of memory. */
static uint64_t map_index(struct token_map *m, uint64_t token)
{
	size_t j;

	if ((m->count + 1) * 2 > m->mask + 1 && map_grow(m) != 0)
		return UINT64_MAX;
	for (j = mix64(token) & m->mask; m->key[j]; j = (j + 1) & m->mask)
		if (m->key[j] == token)
			return m->index[j];
	m->key[j] = token;
	m->index[j] = m->count;
	return m->count++;
}

static void map_free(struct token_map *m)
{
	free(m->key);
	free(m->index);
}

/* ---- the union of VMAs ------------------------------------------------------- */

struct vma_union {
	struct cap_vma *vma; /* sorted, disjoint, not adjacent */
	uint64_t *before;    /* pages of the union below vma[i] */
	size_t n;
};

/* @u becomes the union of @u and the @n sorted VMAs @add. */
static int union_add(struct vma_union *u, const struct cap_vma *add, size_t n)
{
	struct cap_vma *out = malloc((u->n + n + 1) * sizeof *out);
	size_t i = 0, j = 0, k = 0;

	if (!out)
		return -1;
	while (i < u->n || j < n) {
		struct cap_vma next = (j >= n || (i < u->n && u->vma[i].start <= add[j].start))
					      ? u->vma[i++] : add[j++];

		if (k && next.start <= out[k - 1].end) {
			if (next.end > out[k - 1].end)
				out[k - 1].end = next.end;
		} else {
			out[k++] = next;
		}
	}
	free(u->vma);
	u->vma = out;
	u->n = k;
	return 0;
}

/* Fill before[]; the union's page count. */
static int union_index(struct vma_union *u, uint64_t *pages)
{
	uint64_t total = 0;

	free(u->before);
	if (!(u->before = malloc((u->n ? u->n : 1) * sizeof *u->before)))
		return -1;
	for (size_t i = 0; i < u->n; i++) {
		u->before[i] = total;
		total += (u->vma[i].end - u->vma[i].start) / CAP_PAGE_SIZE;
	}
	*pages = total;
	return 0;
}

/* The union's page of address @addr, which a VMA of the union holds. */
static uint64_t union_page(const struct vma_union *u, uint64_t addr)
{
	size_t lo = 0, hi = u->n;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (u->vma[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return u->before[lo] + (addr - u->vma[lo].start) / CAP_PAGE_SIZE;
}

/* ---- loading ----------------------------------------------------------------- */

struct loader {
	struct wl_ctx *ctx;
	const struct wl_capture_spec *spec;
	const char *title;
	struct cap_reader *reader;
	struct wl_capture *cap;
	struct vma_union u;
	struct token_map tokens;
	uint64_t *state;      /* per page: the content of the snapshot before */
	uint64_t scans0;      /* every = capture: full_scans at snapshot first */
	uint64_t time0;       /* every = time: time_ns of snapshot first */
	uint64_t last_at;     /* the point of the last snapshot chosen */
	size_t changes_cap, steps_cap;
};

/* The path of @spec's file: as written when absolute, else beside the workload. */
static char *capture_path(const char *workload, const char *written)
{
	const char *slash = strrchr(workload, '/');
	size_t dir = written[0] == '/' || !slash ? 0 : (size_t)(slash - workload) + 1;
	char *joined = malloc(dir + strlen(written) + 1), *real;

	if (!joined)
		return NULL;
	memcpy(joined, workload, dir);
	strcpy(joined + dir, written);
	real = realpath(joined, NULL);
	if (!real && errno == ENOMEM) {
		free(joined);
		return NULL;
	}
	if (real) {
		free(joined);
		return real;
	}
	return joined; /* opening it says why it cannot be read */
}

/*
 * The point of snapshot @snap: after-scan:(index - first) * every, or with
 * every = capture the full scans the capture saw since the first snapshot
 * replayed (ld->scans0), which must be known and grow; with every = time,
 * the capture's nanoseconds since that snapshot. 0, or -1 with the error
 * recorded.
 */
static int snapshot_point(struct loader *ld, const struct cap_snapshot *snap, uint64_t *at)
{
	const struct wl_capture *cap = ld->cap;
	unsigned line = ld->spec->every_line;

	if (cap->by_time) {
		if (snap->index == cap->first)
			ld->time0 = snap->time_ns;
		*at = snap->time_ns >= ld->time0 ? snap->time_ns - ld->time0 : 0;
		return 0;
	}
	if (cap->every) {
		*at = (snap->index - cap->first) * cap->every;
		return 0;
	}
	if (snap->full_scans == CAP_NO_FULL_SCANS) {
		wl_fail(ld->ctx, line, "%s every = capture: snapshot %llu of %s has no full_scans "
			"(KSM's counter was unreadable when it was taken)", ld->title,
			(unsigned long long)snap->index, ld->spec->path);
		return -1;
	}
	if (snap->index == cap->first) {
		ld->scans0 = snap->full_scans;
		*at = 0;
		return 0;
	}
	if (snap->full_scans < ld->scans0 || snap->full_scans - ld->scans0 <= ld->last_at) {
		wl_fail(ld->ctx, line, "%s every = capture: snapshot %llu of %s was taken at "
			"full_scans %llu, no later than the snapshot before it: two snapshots "
			"cannot be replayed at one point (take the capture with --every full-scan)",
			ld->title, (unsigned long long)snap->index, ld->spec->path,
			(unsigned long long)snap->full_scans);
		return -1;
	}
	*at = snap->full_scans - ld->scans0;
	return 0;
}

/*
 * Whether a snapshot at point @at is reached before the run stops: a point
 * in scans against scans = N, one in time (every = time) against time = T.
 */
static bool reached(const struct loader *ld, uint64_t at)
{
	const struct workload *wl = ld->ctx->wl;

	if (ld->cap->by_time)
		return wl->stop != WL_STOP_TIME || at < wl->stop_time_ns;
	return wl->stop != WL_STOP_SCANS || at < wl->stop_scans;
}

/* Pass one: which snapshots are replayed, and the union of their VMAs. */
static int choose_snapshots(struct loader *ld)
{
	const struct wl_capture_spec *spec = ld->spec;
	struct wl_capture *cap = ld->cap;
	const struct cap_snapshot *snap;
	struct cap_error cerr;
	bool any = false;
	int rc;

	while ((rc = cap_reader_next(ld->reader, &snap, &cerr)) == 1) {
		const struct cap_stream_state *st = &snap->streams[cap->stream];
		uint64_t at;

		if (snap->index < cap->first || (!cap->all && snap->index > spec->last))
			continue;
		if (st->status == CAP_STREAM_LIVE && snapshot_point(ld, snap, &at) != 0)
			return -1;
		if (st->status != CAP_STREAM_LIVE || !reached(ld, at)) {
			if (cap->all && any)
				break;
			if (st->status != CAP_STREAM_LIVE)
				wl_fail(ld->ctx, spec->snapshots_line ? spec->snapshots_line : spec->line,
					"%s stream %u has %s by snapshot %llu of %s", ld->title,
					cap->stream, cap_stream_status_name(st->status),
					(unsigned long long)snap->index, spec->path);
			else if (cap->by_time)
				wl_fail(ld->ctx, spec->snapshots_line,
					"%s snapshot %llu would be replayed %.3f s into the run, "
					"which never comes: the workload stops at time = %.3f s",
					ld->title, (unsigned long long)snap->index, at / 1e9,
					ld->ctx->wl->stop_time_ns / 1e9);
			else
				wl_fail(ld->ctx, spec->snapshots_line,
					"%s snapshot %llu would be replayed at after-scan:%llu, "
					"which never happens: the workload stops after scan %llu",
					ld->title, (unsigned long long)snap->index,
					(unsigned long long)at,
					(unsigned long long)ld->ctx->wl->stop_scans);
			return -1;
		}
		if (union_add(&ld->u, st->vmas, st->nvmas) != 0) {
			wl_fail(ld->ctx, spec->line, "out of memory");
			return -1;
		}
		cap->last = snap->index;
		ld->last_at = at;
		any = true;
	}
	if (rc < 0) {
		wl_fail(ld->ctx, spec->line, "%s capture = %s: %s", ld->title, spec->path, cerr.text);
		return -1;
	}
	if (!any) {
		wl_fail(ld->ctx, spec->snapshots_line ? spec->snapshots_line : spec->line,
			"%s capture = %s has %llu snapshots: no snapshot %llu", ld->title, spec->path,
			(unsigned long long)cap_reader_info(ld->reader)->nsnapshots,
			(unsigned long long)cap->first);
		return -1;
	}
	if (!cap->all && cap->last != spec->last) {
		wl_fail(ld->ctx, spec->snapshots_line, "%s capture = %s has %llu snapshots: no "
			"snapshot %llu", ld->title, spec->path,
			(unsigned long long)cap_reader_info(ld->reader)->nsnapshots,
			(unsigned long long)spec->last);
		return -1;
	}
	return 0;
}

static int add_change(struct loader *ld, uint64_t page, uint64_t content)
{
	struct wl_capture *cap = ld->cap;

	if (cap->nchanges == ld->changes_cap) {
		size_t n = ld->changes_cap ? ld->changes_cap * 2 : 1024;
		struct wl_capture_change *grown = realloc(cap->changes, n * sizeof *grown);

		if (!grown)
			return -1;
		cap->changes = grown;
		ld->changes_cap = n;
	}
	cap->changes[cap->nchanges++] = (struct wl_capture_change){ page, content };
	return 0;
}

static int add_step(struct loader *ld, uint64_t snapshot, uint64_t at, size_t first)
{
	struct wl_capture *cap = ld->cap;

	if (cap->nsteps == ld->steps_cap) {
		size_t n = ld->steps_cap ? ld->steps_cap * 2 : 16;
		struct wl_capture_step *grown = realloc(cap->steps, n * sizeof *grown);

		if (!grown)
			return -1;
		cap->steps = grown;
		ld->steps_cap = n;
	}
	cap->steps[cap->nsteps++] = (struct wl_capture_step){
		.snapshot = snapshot,
		.at_scan = cap->by_time ? UINT64_MAX : at,
		.at_ns = cap->by_time ? at : 0,
		.first = first,
		.count = cap->nchanges - first,
	};
	return 0;
}

/* The coded content of page @i of @st; UINT64_MAX - 1 when out of memory. */
static uint64_t coded(struct loader *ld, const struct cap_stream_state *st, size_t i)
{
	uint64_t index;

	if (!(st->flags[i] & CAP_PRESENT))
		return WL_CAPTURE_ABSENT;
	if (st->token[i] == CAP_TOKEN_ZERO)
		return 0;
	index = map_index(&ld->tokens, st->token[i]);
	return index == UINT64_MAX ? UINT64_MAX - 1 : index + 1;
}

/* @st's pages at their places in the region, into @next (every page). */
static int lay_out(struct loader *ld, const struct cap_stream_state *st, uint64_t *next,
		   uint64_t pages)
{
	size_t i = 0;

	for (uint64_t p = 0; p < pages; p++)
		next[p] = WL_CAPTURE_ABSENT;
	for (size_t v = 0; v < st->nvmas; v++) {
		uint64_t base = union_page(&ld->u, st->vmas[v].start),
			 n = (st->vmas[v].end - st->vmas[v].start) / CAP_PAGE_SIZE;

		for (uint64_t k = 0; k < n; k++, i++) {
			uint64_t c = coded(ld, st, i);

			if (c == UINT64_MAX - 1)
				return -1;
			next[base + k] = c;
		}
	}
	return 0;
}

/* Pass two: the initial contents and each later snapshot's changes. */
static int build_steps(struct loader *ld, uint64_t pages)
{
	struct wl_capture *cap = ld->cap;
	const struct cap_snapshot *snap;
	struct cap_error cerr;
	uint64_t *next = malloc(pages * sizeof *next);
	int rc;

	ld->state = malloc(pages * sizeof *ld->state);
	cap->initial = malloc(pages * sizeof *cap->initial);
	if (!next || !ld->state || !cap->initial)
		goto oom;
	cap_reader_rewind(ld->reader);
	while ((rc = cap_reader_next(ld->reader, &snap, &cerr)) == 1 && snap->index <= cap->last) {
		uint64_t *was = ld->state, at;
		size_t first = cap->nchanges;

		if (snap->index < cap->first)
			continue;
		if (lay_out(ld, &snap->streams[cap->stream], next, pages) != 0)
			goto oom;
		if (snap->index > cap->first) {
			for (uint64_t p = 0; p < pages; p++)
				if (next[p] != was[p] && add_change(ld, p, next[p]) != 0)
					goto oom;
			if (snapshot_point(ld, snap, &at) != 0) /* pass one found it fine */
				goto out;
			ld->last_at = at;
			if (add_step(ld, snap->index, at, first) != 0)
				goto oom;
		} else {
			memcpy(cap->initial, next, pages * sizeof *next);
			if (snapshot_point(ld, snap, &at) != 0) /* sets scans0 */
				goto out;
			ld->last_at = 0;
		}
		ld->state = next;
		next = was;
	}
	free(next);
	if (rc < 0) {
		wl_fail(ld->ctx, ld->spec->line, "%s capture = %s: %s", ld->title, ld->spec->path,
			cerr.text);
		return -1;
	}
	return 0;
oom:
	wl_fail(ld->ctx, ld->spec->line, "out of memory");
out:
	free(next);
	return -1;
}

static int open_capture(struct loader *ld)
{
	const struct wl_capture_spec *spec = ld->spec;
	const struct cap_file_info *info;
	struct cap_error cerr;
	struct stat st;
	char streams[160] = "";

	if (!(ld->cap->path = capture_path(ld->ctx->wl->path, spec->path))) {
		wl_fail(ld->ctx, spec->line, "out of memory");
		return -1;
	}
	/* a FIFO or a device would block or stream forever: files only */
	if (stat(ld->cap->path, &st) == 0 && !S_ISREG(st.st_mode)) {
		wl_fail(ld->ctx, spec->line, "%s capture = %s: %s is not a regular file", ld->title,
			spec->path, ld->cap->path);
		return -1;
	}
	if (cap_reader_open(ld->cap->path, 0, &ld->reader, &cerr) != 0) {
		wl_fail(ld->ctx, spec->line, "%s capture = %s: %s", ld->title, spec->path, cerr.text);
		return -1;
	}
	info = cap_reader_info(ld->reader);
	ld->cap->with_bytes = info->with_bytes;
	if (spec->stream < info->nstreams)
		return 0;
	for (size_t i = 0; i < info->nstreams && strlen(streams) < sizeof streams - 40; i++)
		snprintf(streams + strlen(streams), sizeof streams - strlen(streams), "%s%zu (pid %d %s)",
			 i ? ", " : "", i, (int)info->streams[i].pid, info->streams[i].comm);
	wl_fail(ld->ctx, spec->stream_line, "%s stream = %llu: %s has %zu stream%s: %s", ld->title,
		(unsigned long long)spec->stream, spec->path, info->nstreams,
		info->nstreams == 1 ? "" : "s", streams);
	return -1;
}

int wl_capture_load(struct wl_ctx *ctx, const char *title, const struct wl_capture_spec *spec,
		    struct wl_region *reg)
{
	struct loader ld = { .ctx = ctx, .spec = spec, .title = title };
	uint64_t pages;
	int rc = -1;

	if (!(ld.cap = calloc(1, sizeof *ld.cap))) {
		wl_fail(ctx, spec->line, "out of memory");
		return -1;
	}
	ld.cap->line = spec->line;
	ld.cap->stream = (uint32_t)spec->stream;
	ld.cap->all = spec->all;
	ld.cap->first = spec->first;
	ld.cap->last = spec->last;
	ld.cap->every = spec->every;
	ld.cap->by_time = spec->by_time;
	if (open_capture(&ld) != 0 || choose_snapshots(&ld) != 0)
		goto out;
	if (union_index(&ld.u, &pages) != 0) {
		wl_fail(ctx, spec->line, "out of memory");
		goto out;
	}
	if (pages == 0 || pages > WL_MAX_REGION_PAGES) {
		wl_fail(ctx, spec->line, "%s capture = %s: stream %u has %s pages", title, spec->path,
			ld.cap->stream, pages ? "too many" : "no");
		goto out;
	}
	if (reg->pages && reg->pages != pages) {
		wl_fail(ctx, reg->size_line, "%s: the capture's stream %u holds %llu pages but the "
			"region has %llu", title, ld.cap->stream, (unsigned long long)pages,
			(unsigned long long)reg->pages);
		goto out;
	}
	if (build_steps(&ld, pages) != 0)
		goto out;
	ld.cap->ntokens = ld.tokens.count;
	if (!(ld.cap->tokens = malloc((ld.tokens.count ? ld.tokens.count : 1) * sizeof(uint64_t)))) {
		wl_fail(ctx, spec->line, "out of memory");
		goto out;
	}
	for (size_t j = 0; ld.tokens.mask && j <= ld.tokens.mask; j++)
		if (ld.tokens.key[j])
			ld.cap->tokens[ld.tokens.index[j]] = ld.tokens.key[j];
	reg->pages = pages;
	reg->capture = ld.cap;
	ld.cap = NULL;
	rc = 0;
out:
	cap_reader_close(ld.reader);
	wl_capture_free(ld.cap);
	map_free(&ld.tokens);
	free(ld.u.vma);
	free(ld.u.before);
	free(ld.state);
	return rc;
}

void wl_capture_free(struct wl_capture *cap)
{
	if (!cap)
		return;
	free(cap->path);
	free(cap->initial);
	free(cap->steps);
	free(cap->changes);
	free(cap->tokens);
	free(cap->fresh);
	free(cap);
}

int wl_capture_assign_values(struct workload *wl, uint64_t *next)
{
	struct token_map all = { 0 };
	int rc = 0;

	for (size_t r = 0; r < wl->nregions && rc == 0; r++) {
		struct wl_capture *cap = wl->regions[r].capture;

		if (!cap)
			continue;
		if (!(cap->fresh = malloc((cap->ntokens ? cap->ntokens : 1) * sizeof *cap->fresh))) {
			rc = -1;
			break;
		}
		for (uint64_t i = 0; i < cap->ntokens; i++) {
			uint64_t index = map_index(&all, cap->tokens[i]);

			if (index == UINT64_MAX) {
				rc = -1;
				break;
			}
			cap->fresh[i] = *next + index;
		}
	}
	*next += all.count;
	map_free(&all);
	return rc;
}

/* ---- the engines' view ------------------------------------------------------- */

bool wl_capture_value(const struct wl_capture *cap, uint64_t content, uint64_t *value)
{
	if (content == WL_CAPTURE_ABSENT)
		return false;
	*value = content == 0 ? 0 : content_fresh_value(cap->fresh[content - 1]);
	return true;
}

uint64_t wl_capture_token(const struct wl_capture *cap, uint64_t content)
{
	return content == 0 || content == WL_CAPTURE_ABSENT ? CAP_TOKEN_ZERO
							    : cap->tokens[content - 1];
}

const struct wl_capture_step *wl_capture_step_at(const struct wl_capture *cap, uint64_t scan)
{
	size_t lo = 0, hi = cap->nsteps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cap->steps[mid].at_scan < scan)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < cap->nsteps && cap->steps[lo].at_scan == scan ? &cap->steps[lo] : NULL;
}

size_t wl_capture_steps_due(const struct wl_capture *cap, uint64_t now_ns)
{
	size_t lo = 0, hi = cap->nsteps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cap->steps[mid].at_ns <= now_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---- what keeps a replay exact ----------------------------------------------- */

/* The capture region @region's last point, or 0 when it has no later snapshot. */
static uint64_t last_point(const struct wl_region *reg)
{
	const struct wl_capture *cap = reg->capture;

	return cap->nsteps ? cap->steps[cap->nsteps - 1].at_scan : 0;
}

static int check_event(struct wl_ctx *ctx, const struct wl_event *ev)
{
	const struct workload *wl = ctx->wl;

	if (ev->region >= 0 && wl->regions[ev->region].capture &&
	    (ev->action == WL_ACT_WRITE || ev->action == WL_ACT_UNMAP ||
	     ev->action == WL_ACT_PROTECT || ev->action == WL_ACT_UFFD_WP)) {
		wl_fail(ctx, ev->line, "[event %s] action = %s: region %s is filled from a capture, "
			"whose snapshots alone write it (docs/capture.md, \"Replay\")", ev->name,
			wl_action_name(ev->action), wl->regions[ev->region].name);
		return -1;
	}
	if (ev->action != WL_ACT_EXEC && ev->action != WL_ACT_EXIT)
		return 0;
	for (size_t i = 0; i < wl->nregions; i++) {
		const struct wl_region *reg = &wl->regions[i];

		if (!reg->capture || reg->process != ev->process)
			continue;
		if (ev->action == WL_ACT_EXEC) {
			wl_fail(ctx, ev->line, "[event %s] action = exec: process %s replays a capture "
				"in region %s, which an exec would start over", ev->name,
				wl->procs[ev->process].name, reg->name);
			return -1;
		}
		if (reg->capture->by_time && reg->capture->nsteps) {
			wl_fail(ctx, ev->line, "[event %s] action = exit: region %s of process %s "
				"replays snapshots in time (every = time), which no scan point "
				"is sure to follow", ev->name, reg->name, wl->procs[ev->process].name);
			return -1;
		}
		if (last_point(reg) > ev->at_scan) {
			wl_fail(ctx, ev->line, "[event %s] action = exit at after-scan:%llu: region %s "
				"of process %s still replays snapshots until after-scan:%llu",
				ev->name, (unsigned long long)ev->at_scan, reg->name,
				wl->procs[ev->process].name, (unsigned long long)last_point(reg));
			return -1;
		}
	}
	return 0;
}

int wl_check_captures(struct wl_ctx *ctx)
{
	const struct workload *wl = ctx->wl;

	for (size_t i = 0; i < wl->nwriters; i++) {
		const struct wl_writer *w = &wl->writers[i];

		if (wl->regions[w->region].capture) {
			wl_fail(ctx, w->line, "[writer %s]: region %s is filled from a capture, whose "
				"snapshots alone write it: a write of 8 bytes into a captured page "
				"could make it equal another captured page on the kernel, which "
				"the simulator, knowing tokens only, cannot see", w->name,
				wl->regions[w->region].name);
			return -1;
		}
	}
	for (size_t i = 0; i < wl->nevents; i++)
		if (check_event(ctx, &wl->events[i]) != 0)
			return -1;
	return 0;
}
