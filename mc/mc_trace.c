/*
 * mc_trace.c - counterexamples for people and programs: a violating path is
 * replayed from the initial state (the search keeps only actions), recording
 * after each step what happened and every counter; then printed as text or,
 * with the search statistics, as JSON. The workload-file form is
 * mc_workload.c's.
 */
#include "mc_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

size_t mc_trace_length(const struct mc_trace *t)
{
	return t ? t->nsteps : 0;
}

void mc_trace_free(struct mc_trace *t)
{
	if (!t)
		return;
	free(t->step);
	free(t);
}

/* --- replay ----------------------------------------------------------------------- */

static const char *ksmd_outcome(const struct sim *before, const struct sim *after, uint32_t slot)
{
	const struct sim_page *b = &before->page[slot], *a = &after->page[slot];

	if (a->pte & PTE_KSM_ZERO)
		return "merged with KSM's zero page";
	if (a->rflags & RMAP_UNSTABLE)
		return "into the unstable tree";
	if ((a->rflags & RMAP_STABLE) && (!(b->rflags & RMAP_STABLE) || b->st.head != a->st.head))
		return a->frame == b->frame ? "now a KSM page" : "merged into a KSM page";
	if (a->rflags & RMAP_STABLE)
		return "a KSM page, nothing to do";
	if (!(b->rflags & RMAP_EXISTS))
		return "first visit: volatile";
	if (b->checksum != a->checksum)
		return "changed since the last visit: volatile";
	return "no merge";
}

static void page_label(const struct mc_config *cfg, const struct sim *s, uint32_t slot,
		       struct mc_trace_step *st, char *buf, size_t len)
{
	uint32_t ai = sim_area_of_slot(s, slot);
	const struct sim_area *a = &s->area[ai];

	mc_process_name(cfg, s, a->mm, st->proc, sizeof(st->proc));
	snprintf(buf, len, "page %u of %s in %s", slot - a->slot,
		 a->label < cfg->nregions ? cfg->region[a->label].name : "?", st->proc);
}

/* One ksmd page step, described. @before is scratch. */
static void replay_ksmd_page(const struct mc_config *cfg, struct sim *s, struct mc_extra *x,
			     struct sim *before, struct mc_trace_step *st, uint64_t *scans)
{
	char where[200];

	sim_clone_into(before, s);
	mc_ksmd_page_step(cfg, s, x, &st->effect);
	if (st->effect.processed) {
		page_label(cfg, s, st->effect.slot, st, where, sizeof(where));
		snprintf(st->text, sizeof(st->text), "ksmd: %.150s: %.40s", where,
			 ksmd_outcome(before, s, st->effect.slot));
	} else {
		*scans += 1;
		snprintf(st->text, sizeof(st->text), "ksmd: full scan %llu ends",
			 (unsigned long long)*scans);
	}
}

static void replay_ksmd_scan(const struct mc_config *cfg, struct sim *s, struct mc_extra *x,
			     struct mc_trace_step *st, uint64_t *scans)
{
	unsigned pages = 0;
	struct mc_effect eff;

	do {
		mc_ksmd_page_step(cfg, s, x, &eff);
		pages += eff.processed;
	} while (!eff.wraps && sim_ksmd_runnable(s));
	st->effect = eff;
	st->effect.ret = pages;
	*scans += eff.wraps;
	snprintf(st->text, sizeof(st->text), "ksmd: full scan %llu (%u page%s processed)",
		 (unsigned long long)*scans, pages, pages == 1 ? "" : "s");
}

static const char *errno_text(long err)
{
	switch (err) {
	case 0: return "ok";
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case ERANGE: return "ERANGE";
	case ENOMEM: return "ENOMEM";
	default: return "an error";
	}
}

static void replay_user(const struct mc_config *cfg, struct sim *s, struct mc_extra *x,
			const struct mc_action *a, struct mc_trace_step *st)
{
	size_t n;

	mc_action_describe(cfg, s, a, st->text, sizeof(st->text));
	if (a->kind >= MC_ACT_WRITE && a->kind <= MC_ACT_UNMAP && a->page != UINT32_MAX) {
		const struct sim_area *ar = &s->area[a->area];

		mc_process_name(cfg, s, ar->mm, st->proc, sizeof(st->proc));
		snprintf(st->region, sizeof(st->region), "%s", cfg->region[ar->label].name);
	} else if (a->kind >= MC_ACT_MERGE && a->kind <= MC_ACT_EXIT) {
		mc_process_name(cfg, s, a->area, st->proc, sizeof(st->proc));
		for (uint32_t i = 0; i < s->narea && !st->region[0]; i++)
			if (s->area[i].mm == a->area && s->area[i].label < cfg->nregions)
				snprintf(st->region, sizeof(st->region), "%s",
					 cfg->region[s->area[i].label].name);
	}
	mc_apply_user(cfg, s, x, a, &st->effect);
	n = strlen(st->text);
	if (a->kind == MC_ACT_FORK && st->effect.ret >= 0) {
		mc_process_name(cfg, s, (unsigned)st->effect.ret, st->child, sizeof(st->child));
		snprintf(st->text + n, sizeof(st->text) - n, ": child %s", st->child);
	} else if (a->kind >= MC_ACT_STORE || st->effect.ret) {
		snprintf(st->text + n, sizeof(st->text) - n, ": %s", errno_text(st->effect.ret));
	}
	n = strlen(st->text);
	for (int l = 0; l < MC_LOCK_COUNT; l++)
		if (x->lock[l] >= MC_HOLDER_STORE)
			snprintf(st->text + n, sizeof(st->text) - n, ", returning with %s held",
				 mc_lock_name((enum mc_lock)l));
}

static struct mc_trace_step *new_step(struct mc_trace *t, size_t *cap)
{
	if (t->nsteps == *cap) {
		size_t c = *cap ? *cap * 2 : 32;
		struct mc_trace_step *s = realloc(t->step, c * sizeof(*s));

		if (!s)
			return NULL;
		t->step = s;
		*cap = c;
	}
	memset(&t->step[t->nsteps], 0, sizeof(t->step[0]));
	return &t->step[t->nsteps++];
}

static void finish_step(const struct sim *s, struct mc_trace_step *st, uint64_t scans)
{
	sim_counters(s, st->counter);
	st->scans = scans;
	st->run = sim_run(s);
}

struct mc_trace *mc_trace_build(const struct mc_config *cfg, unsigned mutant,
				const struct mc_action *path, size_t n, unsigned liveness_scans,
				char *unmerged, size_t unmerged_len, char *err, size_t errlen)
{
	struct mc_trace *t = calloc(1, sizeof(*t));
	struct mc_extra x;
	struct sim *s = NULL, *before = NULL;
	uint64_t scans = 0;
	size_t cap = 0;

	if (!t || !(s = mc_initial_state(cfg, mutant, &x, err, errlen)) || !(before = sim_clone(s)))
		goto fail;
	sim_counters(s, t->initial);
	for (size_t i = 0; i < n; i++) {
		struct mc_trace_step *st = new_step(t, &cap);

		if (!st)
			goto fail;
		st->action = path[i];
		st->between_scans = mc_between_scans(s);
		if (path[i].kind != MC_ACT_KSMD)
			replay_user(cfg, s, &x, &path[i], st);
		else if (cfg->ksmd_scan)
			replay_ksmd_scan(cfg, s, &x, st, &scans);
		else
			replay_ksmd_page(cfg, s, &x, before, st, &scans);
		finish_step(s, st, scans);
	}
	t->liveness_from = t->nsteps;
	for (unsigned wraps = 0; wraps < liveness_scans && sim_ksmd_runnable(s);) {
		struct mc_trace_step *st = new_step(t, &cap);

		if (!st)
			goto fail;
		st->action = (struct mc_action){ MC_ACT_KSMD, 0, 0, 0 };
		st->user_stopped = true;
		st->between_scans = mc_between_scans(s);
		/* ksmd alone: no one else takes the mutex */
		if (cfg->ksmd_scan)
			replay_ksmd_scan(cfg, s, NULL, st, &scans);
		else
			replay_ksmd_page(cfg, s, NULL, before, st, &scans);
		wraps += st->effect.wraps;
		finish_step(s, st, scans);
	}
	if (unmerged)
		mc_all_merged(cfg, s, unmerged, unmerged_len);
	sim_free(s);
	sim_free(before);
	return t;
fail:
	if (t && s)
		snprintf(err, errlen, "out of memory");
	sim_free(s);
	sim_free(before);
	mc_trace_free(t);
	return NULL;
}

/* --- text ------------------------------------------------------------------------- */

static void print_counters(FILE *out, const int64_t *now, const int64_t *was)
{
	bool any = false;

	for (int c = 0; c < TRACE_COUNTER_COUNT; c++) {
		if (c == TRACE_PAGES_TO_SCAN || c == TRACE_GENERAL_PROFIT)
			continue;
		if (was && now[c] == was[c])
			continue;
		fprintf(out, "%s%s=%lld", any ? " " : "", trace_counter_name((enum trace_counter)c),
			(long long)now[c]);
		any = true;
	}
	if (!any)
		fputs("-", out);
}

static const char *search_name(const struct mc_result *res)
{
	return res->search == MC_SEARCH_DFS ? "dfs" : "bfs";
}

int mc_trace_print(const struct mc_config *cfg, const struct mc_result *res, FILE *out)
{
	const struct mc_trace *t = res->trace;

	if (res->verdict != MC_VIOLATION || !t)
		return 0;
	fprintf(out, "Counterexample: %zu steps from the initial state to a violation of '%s'%s.\n",
		t->nsteps, mc_invariant_name(res->invariant),
		res->search == MC_SEARCH_BFS ? " (breadth-first: no shorter trace exists)"
					     : " (depth-first: maybe not the shortest)");
	if (res->mutant)
		fprintf(out, "Simulator mutant: %s (%s).\n", mc_mutant_name(res->mutant),
			mc_mutant_doc(res->mutant));
	fprintf(out, "Counters shown after each step when they change (scan = full scans "
		     "completed).\n\n");
	fprintf(out, "   0  scan 0  initial state (after setup, run = 1)\n          ");
	print_counters(out, t->initial, NULL);
	fputc('\n', out);
	for (size_t i = 0; i < t->nsteps; i++) {
		const struct mc_trace_step *st = &t->step[i];

		if (i == t->liveness_from)
			fprintf(out, "      -- the user stops: %u full scans of ksmd alone --\n",
				cfg->liveness_scans);
		fprintf(out, "%4zu  scan %llu  %s\n          ", i + 1, (unsigned long long)st->scans,
			st->text);
		print_counters(out, st->counter, i ? t->step[i - 1].counter : t->initial);
		fputc('\n', out);
	}
	fprintf(out, "\nViolation of '%s': %s\n", mc_invariant_name(res->invariant), res->message);
	return ferror(out) ? -1 : 0;
}

/* --- JSON ------------------------------------------------------------------------- */

static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void json_counters(FILE *out, const int64_t *c)
{
	fputc('{', out);
	for (int i = 0; i < TRACE_COUNTER_COUNT; i++)
		fprintf(out, "%s\"%s\":%lld", i ? "," : "", trace_counter_name((enum trace_counter)i),
			(long long)c[i]);
	fputc('}', out);
}

static void json_trace(FILE *out, const struct mc_trace *t)
{
	fputs(",\"initial_counters\":", out);
	json_counters(out, t->initial);
	fputs(",\"steps\":[", out);
	for (size_t i = 0; i < t->nsteps; i++) {
		const struct mc_trace_step *st = &t->step[i];

		fprintf(out, "%s{\"step\":%zu,\"scans\":%llu,\"user_stopped\":%s,\"action\":",
			i ? "," : "", i + 1, (unsigned long long)st->scans,
			st->user_stopped ? "true" : "false");
		json_string(out, st->text);
		fputs(",\"counters\":", out);
		json_counters(out, st->counter);
		fputc('}', out);
	}
	fputc(']', out);
}

int mc_result_write_json(const struct mc_config *cfg, const struct mc_result *res, FILE *out)
{
	const struct mc_stats *s = &res->stats;

	fputs("{\"format_version\":1,\"config\":", out);
	json_string(out, cfg->path);
	fprintf(out, ",\"search\":\"%s\",\"workers\":%u,\"depth_bound\":%llu,\"mutant\":",
		search_name(res), res->workers, (unsigned long long)res->depth_bound);
	json_string(out, mc_mutant_name(res->mutant));
	fprintf(out, ",\"fingerprint\":\"xxh3-64\",\"verdict\":\"%s\"",
		res->verdict == MC_VIOLATION ? "violation" : "pass");
	fprintf(out, ",\"stats\":{\"generated_states\":%llu,\"distinct_states\":%llu,"
		     "\"depth\":%llu,\"cut_by_depth_bound\":%llu,\"liveness_runs\":%llu,"
		     "\"time_s\":%.3f,\"states_per_s\":%.0f,\"exhaustive\":%s,"
		     "\"collision_probability\":%.2g,\"bitstate_log2\":%u,\"coverage\":%.6f}",
		(unsigned long long)s->generated, (unsigned long long)s->distinct,
		(unsigned long long)s->depth, (unsigned long long)s->cut,
		(unsigned long long)s->liveness_runs, s->seconds,
		s->seconds > 0 ? (double)s->generated / s->seconds : 0.0,
		s->exhaustive ? "true" : "false",
		(double)s->distinct * (double)s->distinct / 36893488147419103232.0 /* 2^65 */,
		res->bitstate_log2, s->coverage);
	if (res->verdict == MC_VIOLATION) {
		fputs(",\"violation\":{\"invariant\":", out);
		json_string(out, mc_invariant_name(res->invariant));
		fputs(",\"message\":", out);
		json_string(out, res->message);
		if (res->trace)
			json_trace(out, res->trace);
		fputc('}', out);
	}
	fputs("}\n", out);
	return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}
