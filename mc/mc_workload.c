/*
 * mc_workload.c - a counterexample as a workload file (docs/workload.md) that
 * `ksmkit sim` and `ksmkit run` replay: the configuration's regions and knobs
 * become [global] and [region] sections, set up exactly as the checker's
 * initial state (mc_model.c follows sim_driver.c), and each user action of
 * the trace an [event] at the full-scan point where it happened. That needs
 * every user action to fall between full scans (ksmd = scan configurations
 * always do) and no store split around ksmd's steps; otherwise the reason is
 * returned instead. The text is parsed back with wl_parse_buffer() before it
 * is written, so what comes out always passes `ksmkit lint`.
 */
#include "mc_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static bool why(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static bool why(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return false;
}

/* Can every step be said as an event between full scans? */
static bool expressible(const struct mc_config *cfg, const struct mc_trace *t, char *buf,
			size_t len)
{
	for (size_t i = 0; i < t->nsteps; i++) {
		const struct mc_trace_step *st = &t->step[i];

		if (st->action.kind == MC_ACT_STORE_BEGIN && st->effect.ret == 0 &&
		    (i + 1 == t->nsteps || t->step[i + 1].action.kind != MC_ACT_STORE_COMMIT))
			return why(buf, len, "step %zu begins a store of %s that other steps "
				   "interrupt: a workload's store is one event", i + 1,
				   wl_knob_info(cfg->store[st->action.arg].knob)->name);
	}
	for (size_t i = 0; i < t->nsteps; i++) {
		const struct mc_trace_step *st = &t->step[i];

		if (st->action.kind != MC_ACT_KSMD && !st->between_scans)
			return why(buf, len, "step %zu (%s) happens in the middle of full scan %llu; "
				   "the workload language acts only between full scans (try ksmd = "
				   "scan in the configuration)", i + 1, st->text,
				   (unsigned long long)st->scans + 1);
	}
	for (unsigned r = 0; r < cfg->nregions; r++) {
		bool some = false, all = true;

		for (uint32_t p = 0; p < cfg->region[r].npages; p++) {
			bool untouched = cfg->region[r].value[p] == MC_VALUE_UNTOUCHED;

			some |= untouched;
			all &= untouched;
		}
		if (some && !all)
			return why(buf, len, "[region %s] mixes untouched and filled pages, which a "
				   "workload region cannot say", cfg->region[r].name);
	}
	return true;
}

/* --- sections ------------------------------------------------------------------------ */

static void write_global(FILE *f, const struct mc_config *cfg, uint64_t scans)
{
	char text[64];

	fprintf(f, "[global]\n");
	fprintf(f, "description = counterexample found by ksmkit check %s\n", cfg->path);
	fprintf(f, "kernel = %s\ndetector = %s\nscans = %llu\n", wl_kernel_name(cfg->kernel),
		wl_detector_name(cfg->detector), (unsigned long long)scans);
	if (cfg->smart_scan_policy != WL_SMART_SCAN_UPSTREAM)
		fprintf(f, "smart_scan_policy = %s\n",
			wl_smart_scan_policy_name(cfg->smart_scan_policy));
	for (int k = 0; k < WL_KNOB_COUNT; k++) {
		uint64_t v = cfg->knobs[k];

		if (k == WL_KNOB_STABLE_NODE_CHAINS_PRUNE_MILLISECS && v) {
			fprintf(f, "# time stands still in the model: chains are never pruned by age\n");
			v = UINT32_MAX;
		}
		fprintf(f, "%s = %s\n", wl_knob_info((enum wl_knob)k)->name,
			wl_knob_format((enum wl_knob)k, v, text, sizeof(text)));
	}
}

static const char *merge_word(int merge)
{
	return merge == WL_MERGE_PRCTL ? "prctl" : merge == WL_MERGE_NONE ? "none" : "madvise";
}

static void write_region(FILE *f, const struct mc_config *cfg, const struct mc_region *reg)
{
	bool same = true;

	fprintf(f, "\n[region %s]\nprocess = %s\npages = %u\n", reg->name,
		cfg->proc_name[reg->process], reg->npages);
	for (uint32_t p = 1; p < reg->npages; p++)
		same &= reg->value[p] == reg->value[0];
	if (reg->value[0] == MC_VALUE_UNTOUCHED) {
		fprintf(f, "fill = none\n");
	} else if (same) {
		fprintf(f, "fill = same\nvalue = %llu\n",
			(unsigned long long)cfg->values[reg->value[0]]);
	} else {
		fprintf(f, "fill = groups\ngroups = ");
		for (uint32_t p = 0; p < reg->npages;) {
			uint32_t run = 1;

			while (p + run < reg->npages && reg->value[p + run] == reg->value[p])
				run++;
			fprintf(f, "%s%ux%llu", p ? "," : "", run,
				(unsigned long long)cfg->values[reg->value[p]]);
			p += run;
		}
		fputc('\n', f);
	}
	if (reg->node >= 0)
		fprintf(f, "node = %d\n", reg->node);
	fprintf(f, "merge = %s\n", merge_word(reg->merge));
	if (!reg->dirty_tracking)
		fprintf(f, "dirty_tracking = no\n");
}

static const char *expect_word(long ret, unsigned mutant)
{
	if (mutant)
		return "any"; /* the simulator as written may answer otherwise */
	switch (ret) {
	case 0: return "ok";
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case ERANGE: return "ERANGE";
	default: return "any";
	}
}

/* One user action as an event (a store's begin-commit pair as one). */
static void write_event(FILE *f, const struct mc_config *cfg, const struct mc_trace *t, size_t i,
			unsigned mutant)
{
	const struct mc_trace_step *st = &t->step[i];
	const struct mc_action *a = &st->action;
	const struct mc_store *store = &cfg->store[a->arg];
	long ret = st->effect.ret;

	if (a->kind == MC_ACT_STORE_COMMIT)
		return; /* written with its begin */
	if (a->kind == MC_ACT_STORE_BEGIN && ret == 0 && i + 1 < t->nsteps)
		ret = t->step[i + 1].effect.ret;
	fprintf(f, "\n# step %zu: %s\n[event step%zu]\nat = after-scan:%llu\n", i + 1, st->text,
		i + 1, (unsigned long long)st->scans);
	switch (a->kind) {
	case MC_ACT_WRITE:
		fprintf(f, "action = write\nregion = %s\nprocess = %s\npages = %u\noffset = %u\n"
			   "value = %llu\n", st->region, st->proc, a->page, cfg->offset,
			(unsigned long long)cfg->values[a->arg]);
		break;
	case MC_ACT_MERGE:
	case MC_ACT_UNMERGE:
		fprintf(f, "action = %s\nregion = %s\nprocess = %s\n",
			a->kind == MC_ACT_MERGE ? "merge" : "unmerge", st->region, st->proc);
		if (a->page == UINT32_MAX)
			fprintf(f, "pages = all\n");
		else
			fprintf(f, "pages = %u\n", a->page);
		break;
	case MC_ACT_UNMAP:
		fprintf(f, "action = unmap\nregion = %s\nprocess = %s\npages = %u\n", st->region,
			st->proc, a->page);
		break;
	case MC_ACT_FORK:
		fprintf(f, "action = fork\nprocess = %s\nchild = %s\n", st->proc, st->child);
		break;
	case MC_ACT_EXIT:
		fprintf(f, "action = exit\nprocess = %s\n", st->proc);
		break;
	case MC_ACT_STORE:
	case MC_ACT_STORE_BEGIN:
		fprintf(f, "action = set\nset = %s=%s\nexpect = %s\n", wl_knob_info(store->knob)->name,
			store->text, expect_word(ret, mutant));
		break;
	case MC_ACT_RUN:
		fprintf(f, "action = run\nrun = %u\nexpect = %s\n", a->arg, expect_word(ret, mutant));
		break;
	}
}

/* Full scans the replay needs: up to the last step, or the scan it is in. */
static uint64_t scans_needed(const struct mc_trace *t)
{
	const struct mc_trace_step *last = &t->step[t->nsteps - 1];
	bool ends_scan = last->action.kind == MC_ACT_KSMD && last->effect.wraps;

	return last->scans + (ends_scan ? 0 : 1);
}

static void write_expected_rows(FILE *f, const struct mc_trace *t)
{
	fprintf(f, "# Counters the checker saw at each full scan's end (ksmkit sim's rows):\n");
	for (size_t i = 0; i < t->nsteps; i++) {
		const struct mc_trace_step *st = &t->step[i];

		if (st->action.kind != MC_ACT_KSMD || !st->effect.wraps)
			continue;
		fprintf(f, "#   scan %llu: pages_shared=%lld pages_sharing=%lld pages_unshared=%lld "
			   "pages_volatile=%lld\n", (unsigned long long)st->scans,
			(long long)st->counter[TRACE_PAGES_SHARED],
			(long long)st->counter[TRACE_PAGES_SHARING],
			(long long)st->counter[TRACE_PAGES_UNSHARED],
			(long long)st->counter[TRACE_PAGES_VOLATILE]);
	}
}

static void write_all(FILE *f, const struct mc_config *cfg, const struct mc_result *res)
{
	const struct mc_trace *t = res->trace;
	uint64_t scans = scans_needed(t);
	const struct mc_trace_step *last = &t->step[t->nsteps - 1];

	fprintf(f, "# Written by ksmkit check from %s: a trace of %zu steps that violates '%s':\n"
		   "#   %s\n", cfg->path, t->nsteps, mc_invariant_name(res->invariant), res->message);
	if (res->mutant)
		fprintf(f, "# Found with --mutant %s (%s); the simulator as written replays the "
			   "same actions and may well behave correctly.\n",
			mc_mutant_name(res->mutant), mc_mutant_doc(res->mutant));
	if (res->invariant == MC_INV_DEADLOCK)
		fprintf(f, "# What cannot be replayed: the deadlock. A workload has no lock to leak; "
			   "the kernel,\n# like the simulator, answers the store and releases "
			   "ksm_thread_mutex, and ksmd goes on.\n");
	fprintf(f, "# Replay: ksmkit sim FILE.wl (the violation happens during full scan %llu).\n",
		(unsigned long long)scans);
	write_expected_rows(f, t);
	fputc('\n', f);
	write_global(f, cfg, scans);
	for (unsigned r = 0; r < cfg->nregions; r++)
		write_region(f, cfg, &cfg->region[r]);
	for (size_t i = 0; i < t->nsteps; i++)
		if (t->step[i].action.kind != MC_ACT_KSMD)
			write_event(f, cfg, t, i, res->mutant);
	if (last->run != 1 && !(last->action.kind == MC_ACT_KSMD && last->effect.wraps))
		fprintf(f, "\n# after the violation: run = 1 again, so that the last full scan "
			   "can complete\n[event resume]\nat = after-scan:%llu\naction = run\nrun = 1\n"
			   "expect = any\n", (unsigned long long)last->scans);
}

int mc_trace_write_workload(const struct mc_config *cfg, const struct mc_result *res,
			    FILE *out, char *whybuf, size_t whylen)
{
	struct workload *wl = NULL;
	struct wl_error err;
	char *text = NULL;
	size_t len = 0;
	FILE *mem;
	int rc = -1;

	if (res->verdict != MC_VIOLATION || !res->trace || !res->trace->nsteps)
		return why(whybuf, whylen, "no counterexample to write"), -1;
	if (!expressible(cfg, res->trace, whybuf, whylen))
		return -1;
	if (!(mem = open_memstream(&text, &len)))
		return why(whybuf, whylen, "out of memory"), -1;
	write_all(mem, cfg, res);
	if (fclose(mem) != 0) {
		why(whybuf, whylen, "out of memory");
		goto out;
	}
	if (wl_parse_buffer(text, len, "counterexample", &wl, &err) != 0) {
		why(whybuf, whylen, "the trace does not make a valid workload: %s", err.text);
		goto out;
	}
	rc = fwrite(text, 1, len, out) == len && fflush(out) == 0 ? 0 : -1;
	if (rc)
		why(whybuf, whylen, "cannot write: %s", strerror(errno));
out:
	wl_free(wl);
	free(text);
	return rc;
}
