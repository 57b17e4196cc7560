/*
 * workload.c - reading a workload file: phase two, each raw section's keys
 * into struct workload, and the entry points that run both phases.
 *
 * Phase one (wl_read.c) reads the lines, with bounds, into raw sections and
 * key = value pairs with their line numbers. Phase two, here, interprets the
 * raw sections in a fixed order ([global], regions, then writers and events
 * in file order), so a section may refer to one defined later in the file;
 * regions and processes are found by name through hash indexes. Whole-run
 * consistency is checked last, in wl_timeline.c. The first error wins and
 * nothing is returned with it.
 */
#include "wl_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* --- phase two: interpreting keys --------------------------------------- */

/* Everything a key handler needs: where it is, and the pair itself. */
struct keyctx {
	struct wl_ctx *ctx;
	const struct raw_section *sec;
	const struct raw_kv *kv;
};

static void key_fail(const struct keyctx *k, const char *why)
{
	wl_fail(k->ctx, k->kv->line, "%s %s = %s: %s", k->sec->title, k->kv->key, k->kv->value,
		why);
}

/*
 * The normalized form writes "key = canonical"; refuse values whose canonical
 * text would not fit on one line, so lint's output always parses back.
 */
static int check_normalized_length(const struct keyctx *k, const char *canonical)
{
	size_t n = strlen(k->kv->key) + 3 + strlen(canonical);
	char why[128];

	if (n <= WL_MAX_LINE)
		return 0;
	snprintf(why, sizeof(why), "too long once normalized (%zu characters; a line holds %d)",
		 n, WL_MAX_LINE);
	key_fail(k, why);
	return -1;
}

static const struct raw_kv *find_key(const struct raw_section *sec, const char *key)
{
	for (size_t i = 0; i < sec->nkv; i++)
		if (strcmp(sec->kv[i].key, key) == 0)
			return &sec->kv[i];
	return NULL;
}

/*
 * "unknown key 'sise' in [region a]", with "; did you mean 'size'?" when one
 * of @known (NULL-terminated; @more too, when not NULL) is a likely typo.
 */
static void fail_unknown_key(struct wl_ctx *ctx, const struct raw_section *sec,
			     const struct raw_kv *kv, const char *const *known,
			     const char *const *more)
{
	struct wl_suggest s;
	const char *meant;

	wl_suggest_init(&s, kv->key);
	for (; *known; known++)
		wl_suggest_consider(&s, *known);
	for (; more && *more; more++)
		wl_suggest_consider(&s, *more);
	meant = wl_suggest_result(&s);
	if (meant)
		wl_fail(ctx, kv->line, "unknown key '%s' in %s; did you mean '%s'?", kv->key,
			sec->title, meant);
	else
		wl_fail(ctx, kv->line, "unknown key '%s' in %s", kv->key, sec->title);
}

/* Fail on the first key of @sec not in the NULL-terminated @allowed list. */
static int check_known_keys(struct wl_ctx *ctx, const struct raw_section *sec,
			    const char *const *allowed)
{
	for (size_t i = 0; i < sec->nkv; i++) {
		const char *const *a = allowed;

		while (*a && strcmp(*a, sec->kv[i].key) != 0)
			a++;
		if (!*a) {
			fail_unknown_key(ctx, sec, &sec->kv[i], allowed, NULL);
			return -1;
		}
	}
	return 0;
}

/* Map @text onto one of @names (NULL-terminated); -1 if none. */
static int lookup_word(const char *text, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(text, names[i]) == 0)
			return i;
	return -1;
}

static int key_word(const struct keyctx *k, const char *const *names, const char *expected)
{
	int v = lookup_word(k->kv->value, names);

	if (v < 0) {
		char why[160];

		snprintf(why, sizeof(why), "expected %s", expected);
		key_fail(k, why);
	}
	return v;
}

/* key_word() for a list of choices (a policy's): the message lists them all. */
static int key_choice(const struct keyctx *k, const char *const *names)
{
	char expected[128];

	return key_word(k, names, wl_choices_text(names, expected, sizeof(expected)));
}

static int key_u64(const struct keyctx *k, uint64_t min, uint64_t max, uint64_t *out)
{
	char why[96];

	if (wl_parse_u64(k->kv->value, out) != 0) {
		bool too_large = errno == ERANGE;

		if (too_large)
			wl_too_large(why, sizeof(why), max, "");
		key_fail(k, too_large ? why : "expected a number");
		return -1;
	}
	if (*out < min || *out > max) {
		snprintf(why, sizeof(why), "must be %llu to %llu", (unsigned long long)min,
			 (unsigned long long)max);
		key_fail(k, why);
		return -1;
	}
	return 0;
}

static int key_time(const struct keyctx *k, uint64_t *ns)
{
	char why[96];
	int rc = wl_parse_time_max(k->kv->value, UINT64_MAX, ns, why, sizeof(why));

	if (rc != 0) {
		key_fail(k, rc == -2 ? why : "expected a time such as 10s, 250ms, 2m");
		return -1;
	}
	if (*ns == 0) {
		key_fail(k, "must be more than 0");
		return -1;
	}
	return 0;
}

/* --- [global] --------------------------------------------------------- */

/* the policies, from their lists (wl_policy.h) */
static const char *const detector_names[] = { WL_DETECTORS(WL_POLICY_NAME) NULL };
static const char *const thp_dirty_names[] = { WL_THP_DIRTY_POLICIES(WL_POLICY_NAME) NULL };
static const char *const checksum_names[] = { WL_CHECKSUMS(WL_POLICY_NAME) NULL };
static const char *const smart_scan_policy_names[] = { WL_SMART_SCAN_POLICIES(WL_POLICY_NAME)
							 NULL };

const char *wl_smart_scan_policy_name(enum wl_smart_scan_policy policy)
{
	return smart_scan_policy_names[policy];
}

const char *wl_checksum_name(enum wl_checksum checksum)
{
	return checksum_names[checksum];
}

const char *wl_thp_dirty_name(enum wl_thp_dirty policy)
{
	return thp_dirty_names[policy];
}

const char *wl_detector_name(enum wl_detector detector)
{
	return detector_names[detector];
}

static void set_default_knobs(struct workload *wl)
{
	for (int k = 0; k < WL_KNOB_COUNT; k++)
		wl->knobs[k] = wl_knob_info(k)->def;
}

/* The keys of [global] besides the knobs. */
static const char *const global_keys[] = {
	"description", "upstream", "requires", "kernel", "detector", "thp_dirty", "checksum",
	"smart_scan_policy", "scans", "time", "timeout", "seed", NULL
};

static void fail_unknown_global_key(const struct keyctx *k)
{
	const char *knobs[WL_KNOB_COUNT + 1];

	for (int i = 0; i < WL_KNOB_COUNT; i++)
		knobs[i] = wl_knob_info(i)->name;
	knobs[WL_KNOB_COUNT] = NULL;
	fail_unknown_key(k->ctx, k->sec, k->kv, global_keys, knobs);
}

/* Free text kept as written (description, upstream): one normalized line, no comment. */
static int key_text(const struct keyctx *k, char **out)
{
	/* "key =#x" keeps the '#', but the normalized "key = #x" would not */
	if (k->kv->value[0] == '#' || k->kv->value[0] == ';') {
		key_fail(k, "must not start with '#' or ';' (they start a comment)");
		return -1;
	}
	if (check_normalized_length(k, k->kv->value) != 0)
		return -1;
	*out = strdup(k->kv->value);
	return *out ? 0 : -1;
}

/* requires = FACT[,FACT...]: names of wl_kernel_facts, each once, no blanks. */
static int key_requires(const struct keyctx *k, uint32_t *out)
{
	const char *names[WL_FACT_COUNT + 1];
	char choices[512], why[700], *list = strdup(k->kv->value), *save = NULL;
	int rc = -1;

	if (!list)
		return -1;
	for (int f = 0; f < WL_FACT_COUNT; f++)
		names[f] = wl_kernel_fact_name((enum wl_kernel_fact)f);
	names[WL_FACT_COUNT] = NULL;
	wl_choices_text(names, choices, sizeof(choices));
	*out = 0;
	if (list[0] == '\0' || list[0] == ',' || list[strlen(list) - 1] == ',' ||
	    strstr(list, ",,")) {
		snprintf(why, sizeof(why), "expected a comma-separated list of %s", choices);
		goto fail;
	}
	for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		int f = wl_kernel_fact_lookup(name);

		if (f < 0) {
			snprintf(why, sizeof(why), "'%s' is not a kernel fact (%s)", name, choices);
			goto fail;
		}
		if (*out & (UINT32_C(1) << f)) {
			snprintf(why, sizeof(why), "'%s' is listed twice", name);
			goto fail;
		}
		*out |= UINT32_C(1) << f;
	}
	rc = 0;
	goto out;
fail:
	key_fail(k, why);
out:
	free(list);
	return rc;
}

static int global_key(const struct keyctx *k, struct workload *wl, bool *have_scans,
		      bool *have_time)
{
	const char *key = k->kv->key;
	char why[160];
	int v, knob;

	if ((knob = wl_knob_lookup(key)) >= 0) {
		if (wl_knob_parse(knob, k->kv->value, &wl->knobs[knob], why, sizeof(why)) != 0) {
			key_fail(k, why);
			return -1;
		}
		wl->knob_given[knob] = true;
		return 0;
	}
	if (strcmp(key, "description") == 0)
		return key_text(k, &wl->description);
	if (strcmp(key, "upstream") == 0)
		return key_text(k, &wl->upstream);
	if (strcmp(key, "requires") == 0)
		return key_requires(k, &wl->requires);
	if (strcmp(key, "kernel") == 0) {
		char choices[128];

		if ((v = key_word(k, wl_kernel_names(),
				  wl_kernel_choices(choices, sizeof(choices)))) < 0)
			return -1;
		wl->kernel = (enum wl_kernel)v;
		return 0;
	}
	if (strcmp(key, "detector") == 0) {
		if ((v = key_choice(k, detector_names)) < 0)
			return -1;
		wl->detector = (enum wl_detector)v;
		return 0;
	}
	if (strcmp(key, "thp_dirty") == 0) {
		if ((v = key_choice(k, thp_dirty_names)) < 0)
			return -1;
		wl->thp_dirty = (enum wl_thp_dirty)v;
		return 0;
	}
	if (strcmp(key, "checksum") == 0) {
		if ((v = key_choice(k, checksum_names)) < 0)
			return -1;
		wl->checksum = (enum wl_checksum)v;
		return 0;
	}
	if (strcmp(key, "smart_scan_policy") == 0) {
		if ((v = key_choice(k, smart_scan_policy_names)) < 0)
			return -1;
		wl->smart_scan_policy = (enum wl_smart_scan_policy)v;
		wl->smart_scan_policy_line = k->kv->line;
		return 0;
	}
	if (strcmp(key, "scans") == 0) {
		*have_scans = true;
		wl->stop = WL_STOP_SCANS;
		wl->stop_line = k->kv->line;
		return key_u64(k, 1, WL_MAX_SCANS, &wl->stop_scans);
	}
	if (strcmp(key, "time") == 0) {
		*have_time = true;
		wl->stop = WL_STOP_TIME;
		wl->stop_line = k->kv->line;
		return key_time(k, &wl->stop_time_ns);
	}
	if (strcmp(key, "timeout") == 0)
		return key_time(k, &wl->timeout_ns);
	if (strcmp(key, "seed") == 0)
		return key_u64(k, 0, UINT64_MAX, &wl->seed);
	if (strcmp(key, "run") == 0) {
		wl_fail(k->ctx, k->kv->line, "[global] run: the engines start KSM with run = 1 "
			"themselves; use an [event] with action = run to change it");
		return -1;
	}
	fail_unknown_global_key(k);
	return -1;
}

static int check_global(struct wl_ctx *ctx, const struct raw_section *sec, bool have_scans,
			bool have_time)
{
	struct workload *wl = ctx->wl;
	unsigned line = sec ? sec->line : 1;
	enum wl_knob_rule rule;
	enum wl_knob knob;
	char why[200];

	if (!have_scans && !have_time) {
		wl_fail(ctx, line, "no stop condition: [global] needs scans = N or time = T");
		return -1;
	}
	if (have_scans && have_time) {
		wl_fail(ctx, find_key(sec, "time")->line,
			"[global] has both scans and time: choose one stop condition");
		return -1;
	}
	/* the rules between knobs: wl_values.c's, which the model checker shares */
	rule = wl_knobs_check(wl->kernel, wl->knobs, wl->knob_given, wl->stop == WL_STOP_SCANS,
			      &knob, why, sizeof(why));
	if (rule != WL_KNOBS_OK) {
		wl_fail(ctx, wl->knob_given[knob] ? find_key(sec, wl_knob_info(knob)->name)->line
						  : line, "[global] %s%s", why,
			rule == WL_KNOBS_NEVER_SCANS ? " (use time = T to watch an idle ksmd)" : "");
		return -1;
	}
	if (wl->knobs[WL_KNOB_ADVISOR_MODE] == WL_ADVISOR_SCAN_TIME)
		wl->knobs[WL_KNOB_PAGES_TO_SCAN] = wl->knobs[WL_KNOB_ADVISOR_MIN_PAGES_TO_SCAN];
	return 0;
}

static int parse_global(struct wl_ctx *ctx, const struct raw_section *sec)
{
	bool have_scans = false, have_time = false;

	if (sec) {
		for (size_t i = 0; i < sec->nkv; i++) {
			struct keyctx k = { ctx, sec, &sec->kv[i] };

			if (global_key(&k, ctx->wl, &have_scans, &have_time) != 0)
				return -1;
		}
	}
	return check_global(ctx, sec, have_scans, have_time);
}

/* --- processes ------------------------------------------------------------ */

static bool same_process(const void *wl, size_t pos, const void *name)
{
	return strcmp(((const struct workload *)wl)->procs[pos].name, name) == 0;
}

static long find_process(const struct wl_ctx *ctx, const char *name)
{
	return wl_index_find(&ctx->procs, wl_index_hash(0, name), same_process, ctx->wl, name);
}

/* Index of the first process created by fork (the others come from regions). */
static size_t first_child(const struct workload *wl)
{
	return wl->nprocs_initial;
}

/* A new process called @name (the caller checked it is new). */
static long add_process(struct wl_ctx *ctx, const char *name, int parent, unsigned line)
{
	struct workload *wl = ctx->wl;
	struct wl_process *grown = wl->procs;

	if (wl->nprocs == ctx->procs_cap) {
		size_t cap = ctx->procs_cap ? 2 * ctx->procs_cap : 8;

		grown = realloc(wl->procs, cap * sizeof(*grown));
		if (grown)
			ctx->procs_cap = cap;
	}
	if (!grown || wl_index_add(&ctx->procs, wl_index_hash(0, name), wl->nprocs) != 0) {
		wl_fail(ctx, line, "out of memory");
		return -1;
	}
	wl->procs = grown;
	memset(&grown[wl->nprocs], 0, sizeof(*grown));
	snprintf(grown[wl->nprocs].name, sizeof(grown->name), "%s", name);
	grown[wl->nprocs].parent = parent;
	grown[wl->nprocs].line = line;
	return (long)wl->nprocs++;
}

/* --- [region NAME] ------------------------------------------------------- */

static const char *const fill_names[] = { "same", "unique", "zero", "groups", "none", "capture",
					  NULL };
static const char *const thp_names[] = { "never", "always", NULL };
static const char *const merge_names[] = { "madvise", "prctl", "none", NULL };

const char *wl_fill_name(enum wl_fill fill) { return fill_names[fill]; }
const char *wl_thp_name(enum wl_thp thp) { return thp_names[thp]; }
const char *wl_merge_name(enum wl_merge merge) { return merge_names[merge]; }

static const char *const region_keys[] = {
	"process", "size", "pages", "fill", "value", "groups", "node", "thp", "merge",
	"dirty_tracking", "capture", "stream", "snapshots", "every", NULL
};
static const char *const yes_no[] = { "no", "yes", NULL };

static int region_size(const struct keyctx *k, uint64_t *pages)
{
	uint64_t bytes;
	char why[96];
	int rc = wl_parse_size_max(k->kv->value, WL_MAX_REGION_PAGES * WL_PAGE_SIZE, &bytes, why,
				   sizeof(why));

	if (rc != 0) {
		key_fail(k, rc == -2 ? why : "expected a size such as 4k, 100m, 2g or 1MiB");
		return -1;
	}
	if (bytes == 0 || bytes % WL_PAGE_SIZE != 0) {
		key_fail(k, "must be a positive multiple of the page size (4096)");
		return -1;
	}
	*pages = bytes / WL_PAGE_SIZE;
	return 0;
}

static int region_node(const struct keyctx *k, int *node)
{
	uint64_t v;

	if (strcmp(k->kv->value, "any") == 0) {
		*node = -1;
		return 0;
	}
	if (key_u64(k, 0, 1023, &v) != 0)
		return -1;
	*node = (int)v;
	return 0;
}

/* The region's page count from size, pages and groups, which must agree. */
static int region_page_count(struct wl_ctx *ctx, const struct raw_section *sec,
			     struct wl_region *reg)
{
	const struct raw_kv *size = find_key(sec, "size"), *pages = find_key(sec, "pages");
	uint64_t from_groups = 0;

	if (size && pages) {
		wl_fail(ctx, pages->line, "%s has both size and pages: give one", sec->title);
		return -1;
	}
	for (size_t i = 0; i < reg->ngroups; i++) {
		if (from_groups + reg->groups[i].copies < from_groups ||
		    from_groups + reg->groups[i].copies > WL_MAX_REGION_PAGES) {
			wl_fail(ctx, find_key(sec, "groups")->line, "%s groups: too many pages",
				sec->title);
			return -1;
		}
		from_groups += reg->groups[i].copies;
	}
	/* where the page count was given, for messages about its size */
	reg->size_line = size ? size->line : pages ? pages->line : sec->line;
	reg->size_key = size ? "size" : "pages";
	if (!size && !pages) {
		if (reg->fill == WL_FILL_CAPTURE)
			return 0; /* the capture gives it (wl_capture_load) */
		if (reg->fill != WL_FILL_GROUPS) {
			wl_fail(ctx, sec->line, "%s needs size or pages", sec->title);
			return -1;
		}
		reg->pages = from_groups;
		reg->size_line = find_key(sec, "groups")->line;
		reg->size_key = "groups";
	}
	if (reg->fill == WL_FILL_GROUPS && reg->pages != from_groups) {
		wl_fail(ctx, (size ? size : pages)->line,
			"%s: the groups hold %llu pages but the region has %llu", sec->title,
			(unsigned long long)from_groups, (unsigned long long)reg->pages);
		return -1;
	}
	return 0;
}

/* snapshots = all, N or A-B (A <= B). */
static int region_snapshots(const struct keyctx *k, struct wl_capture_spec *spec)
{
	char text[64], *dash;

	spec->snapshots_line = k->kv->line;
	if (strcmp(k->kv->value, "all") == 0)
		return 0;
	snprintf(text, sizeof text, "%s", k->kv->value);
	dash = strchr(text, '-');
	if (dash)
		*dash = 0;
	if (strlen(k->kv->value) >= sizeof text || wl_parse_u64(text, &spec->first) != 0 ||
	    (dash && wl_parse_u64(dash + 1, &spec->last) != 0) ||
	    (dash && spec->last < spec->first)) {
		key_fail(k, "expected all, a snapshot N or a range A-B of snapshots (A <= B)");
		return -1;
	}
	if (!dash)
		spec->last = spec->first;
	spec->all = false;
	return 0;
}

/* The keys of fill = capture. */
static int capture_key(const struct keyctx *k, struct wl_capture_spec *spec)
{
	const char *key = k->kv->key, *v = k->kv->value;

	if (strcmp(key, "capture") == 0) {
		/* the normalized form prints the absolute path as one word */
		if (!*v || strpbrk(v, " \t#;")) {
			key_fail(k, "expected a file name without blanks, '#' or ';'");
			return -1;
		}
		spec->path = v;
		spec->line = k->kv->line;
		return 0;
	}
	if (strcmp(key, "stream") == 0) {
		spec->stream_line = k->kv->line;
		return key_u64(k, 0, UINT32_MAX, &spec->stream);
	}
	if (strcmp(key, "every") == 0) {
		spec->every_line = k->kv->line;
		if (strcmp(v, "capture") == 0 || strcmp(v, "time") == 0) {
			spec->every = 0;
			spec->by_time = v[0] == 't';
			return 0;
		}
		return key_u64(k, 1, WL_MAX_SCANS, &spec->every);
	}
	return region_snapshots(k, spec);
}

static int region_key(const struct keyctx *k, struct wl_region *reg, const char **process,
		      struct wl_capture_spec *spec)
{
	const char *key = k->kv->key;
	struct wl_value value;
	char why[160];
	int v;

	if (strcmp(key, "process") == 0) {
		if (wl_parse_name(k->kv->value, why, sizeof(why)) != 0) {
			key_fail(k, why);
			return -1;
		}
		*process = k->kv->value;
	} else if (strcmp(key, "size") == 0) {
		return region_size(k, &reg->pages);
	} else if (strcmp(key, "pages") == 0) {
		return key_u64(k, 1, WL_MAX_REGION_PAGES, &reg->pages);
	} else if (strcmp(key, "fill") == 0) {
		if ((v = key_word(k, fill_names, "same, unique, zero, groups, none or capture")) < 0)
			return -1;
		reg->fill = (enum wl_fill)v;
	} else if (strcmp(key, "value") == 0) {
		if (wl_parse_value(k->kv->value, &value, false, why, sizeof(why)) != 0) {
			key_fail(k, why);
			return -1;
		}
		reg->value = value.value;
	} else if (strcmp(key, "groups") == 0) {
		char canon[4096];

		if (wl_parse_groups(k->kv->value, &reg->groups, &reg->ngroups, why,
				    sizeof(why)) != 0) {
			key_fail(k, why);
			return -1;
		}
		return check_normalized_length(k, wl_groups_format(reg->groups, reg->ngroups, canon,
								   sizeof(canon)));
	} else if (strcmp(key, "node") == 0) {
		return region_node(k, &reg->node);
	} else if (strcmp(key, "thp") == 0) {
		if ((v = key_word(k, thp_names, "never or always")) < 0)
			return -1;
		reg->thp = (enum wl_thp)v;
	} else if (strcmp(key, "merge") == 0) {
		if ((v = key_word(k, merge_names, "madvise, prctl or none")) < 0)
			return -1;
		reg->merge = (enum wl_merge)v;
		if (reg->merge == WL_MERGE_PRCTL && !wl_kernel_has_prctl_merge(k->ctx->wl->kernel)) {
			snprintf(why, sizeof(why), "kernel %s has no PR_SET_MEMORY_MERGE (it came "
				 "in 6.4)", wl_kernel_name(k->ctx->wl->kernel));
			key_fail(k, why);
			return -1;
		}
	} else if (strcmp(key, "dirty_tracking") == 0) {
		if ((v = key_word(k, yes_no, "yes or no")) < 0)
			return -1;
		reg->dirty_tracking = v;
	} else {
		return capture_key(k, spec);
	}
	return 0;
}

/* fill = capture needs capture = FILE; its other keys belong to it alone. */
static int check_capture_keys(struct wl_ctx *ctx, const struct raw_section *sec,
			      const struct wl_region *reg)
{
	static const char *const only[] = { "capture", "stream", "snapshots", "every", NULL };
	const struct raw_kv *thp = find_key(sec, "thp");

	if (reg->fill == WL_FILL_CAPTURE && !find_key(sec, "capture")) {
		wl_fail(ctx, find_key(sec, "fill")->line, "%s fill = capture needs capture = FILE",
			sec->title);
		return -1;
	}
	for (size_t i = 0; reg->fill != WL_FILL_CAPTURE && only[i]; i++) {
		const struct raw_kv *kv = find_key(sec, only[i]);

		if (kv) {
			wl_fail(ctx, kv->line, "%s %s only applies to fill = capture", sec->title,
				only[i]);
			return -1;
		}
	}
	/* a THP's first touch faults in all 512 pages: absent pages would not stay so */
	if (reg->fill == WL_FILL_CAPTURE && reg->thp == WL_THP_ALWAYS) {
		wl_fail(ctx, thp->line, "%s thp = always: a capture region is replayed in small "
			"pages (a huge page's first touch would make its absent pages present)",
			sec->title);
		return -1;
	}
	return 0;
}

/* fill decides which of value and groups must, and may, be present. */
static int check_region_fill(struct wl_ctx *ctx, const struct raw_section *sec,
			     const struct wl_region *reg)
{
	const struct raw_kv *fill = find_key(sec, "fill"), *value = find_key(sec, "value"),
			    *groups = find_key(sec, "groups");

	if (!fill) {
		wl_fail(ctx, sec->line, "%s needs fill = same, unique, zero, groups, none or capture",
			sec->title);
		return -1;
	}
	if (reg->fill == WL_FILL_SAME && !value) {
		wl_fail(ctx, fill->line, "%s fill = same needs value = N", sec->title);
		return -1;
	}
	if (reg->fill != WL_FILL_SAME && value) {
		wl_fail(ctx, value->line, "%s value only applies to fill = same", sec->title);
		return -1;
	}
	if (reg->fill == WL_FILL_GROUPS && !groups) {
		wl_fail(ctx, fill->line, "%s fill = groups needs groups = COPIESxVALUE,...",
			sec->title);
		return -1;
	}
	if (reg->fill != WL_FILL_GROUPS && groups) {
		wl_fail(ctx, groups->line, "%s groups only applies to fill = groups", sec->title);
		return -1;
	}
	return check_capture_keys(ctx, sec, reg);
}

static int parse_region(struct wl_ctx *ctx, const struct raw_section *sec, struct wl_region *reg)
{
	const char *process = "main";
	struct wl_capture_spec spec = { .all = true, .every = 1 };
	long proc;

	memset(reg, 0, sizeof(*reg));
	snprintf(reg->name, sizeof(reg->name), "%s", sec->name);
	reg->line = sec->line;
	reg->node = -1;
	reg->dirty_tracking = true;
	if (check_known_keys(ctx, sec, region_keys) != 0)
		return -1;
	for (size_t i = 0; i < sec->nkv; i++) {
		struct keyctx k = { ctx, sec, &sec->kv[i] };

		if (region_key(&k, reg, &process, &spec) != 0)
			return -1;
	}
	if (check_region_fill(ctx, sec, reg) != 0 || region_page_count(ctx, sec, reg) != 0)
		return -1;
	if (!spec.stream_line)
		spec.stream_line = spec.line;
	if (!spec.every_line)
		spec.every_line = spec.line;
	if (reg->fill == WL_FILL_CAPTURE && wl_capture_load(ctx, sec->title, &spec, reg) != 0)
		return -1;
	proc = find_process(ctx, process);
	if (proc < 0)
		proc = add_process(ctx, process, -1, sec->line);
	if (proc < 0)
		return -1;
	reg->process = (size_t)proc;
	return 0;
}

/*
 * Every region of a prctl process must say so: the prctl covers them all.
 * Reported for the process of the first prctl region in file order that has
 * another kind, at the first region of that other kind.
 */
static int check_prctl_processes(struct wl_ctx *ctx)
{
	const struct workload *wl = ctx->wl;
	long *first_prctl = malloc(wl->nprocs * sizeof(long)),
	     *first_other = malloc(wl->nprocs * sizeof(long));
	int rc = 0;

	if (!first_prctl || !first_other) {
		wl_fail(ctx, 0, "out of memory");
		rc = -1;
		goto out;
	}
	for (size_t p = 0; p < wl->nprocs; p++)
		first_prctl[p] = first_other[p] = -1;
	for (size_t i = wl->nregions; i-- > 0;) {
		if (wl->regions[i].merge == WL_MERGE_PRCTL)
			first_prctl[wl->regions[i].process] = (long)i;
		else
			first_other[wl->regions[i].process] = (long)i;
	}
	for (size_t i = 0; i < wl->nregions; i++) {
		const struct wl_region *a = &wl->regions[i], *b;

		if (a->merge != WL_MERGE_PRCTL || first_other[a->process] < 0)
			continue;
		b = &wl->regions[first_other[a->process]];
		wl_fail(ctx, b->line, "[region %s] merge = %s, but region %s of the same process "
			"%s uses prctl, which makes every region of the process mergeable: say "
			"merge = prctl here too", b->name, wl_merge_name(b->merge),
			wl->regions[first_prctl[a->process]].name, wl->procs[a->process].name);
		rc = -1;
		break;
	}
out:
	free(first_prctl);
	free(first_other);
	return rc;
}

static bool same_region(const void *wl, size_t pos, const void *name)
{
	return strcmp(((const struct workload *)wl)->regions[pos].name, name) == 0;
}

static long find_region(const struct wl_ctx *ctx, const char *name)
{
	return wl_index_find(&ctx->regions, wl_index_hash(0, name), same_region, ctx->wl, name);
}

/* --- references shared by writers and events ---------------------------- */

/* Resolve region = and process = of a writer or event; *region -1 if absent. */
static int resolve_target(struct wl_ctx *ctx, const struct raw_section *sec, long *region,
			  long *process)
{
	const struct raw_kv *rkv = find_key(sec, "region"), *pkv = find_key(sec, "process");

	*region = -1;
	*process = -1;
	if (rkv) {
		*region = find_region(ctx, rkv->value);
		if (*region < 0) {
			wl_fail(ctx, rkv->line, "%s region = %s: no such region", sec->title,
				rkv->value);
			return -1;
		}
		*process = (long)ctx->wl->regions[*region].process;
	}
	if (pkv) {
		*process = find_process(ctx, pkv->value);
		if (*process < 0) {
			wl_fail(ctx, pkv->line, "%s process = %s: no such process", sec->title,
				pkv->value);
			return -1;
		}
	}
	return 0;
}

static int parse_pages_key(struct wl_ctx *ctx, const struct raw_section *sec,
			   const struct wl_region *reg, struct wl_pagesel *sel)
{
	const struct raw_kv *kv = find_key(sec, "pages");
	struct keyctx k = { ctx, sec, kv };
	char why[160], canon[4096];

	memset(sel, 0, sizeof(*sel));
	sel->kind = WL_SEL_ALL;
	if (!kv)
		return 0;
	if (wl_parse_pagesel(kv->value, reg->pages, sel, why, sizeof(why)) != 0) {
		key_fail(&k, why);
		return -1;
	}
	return check_normalized_length(&k, wl_pagesel_format(sel, canon, sizeof(canon)));
}

static int parse_write_keys(struct wl_ctx *ctx, const struct raw_section *sec,
			    struct wl_offset *offset, struct wl_value *value)
{
	const struct raw_kv *okv = find_key(sec, "offset"), *vkv = find_key(sec, "value");
	char why[160];

	offset->lo = offset->hi = 0;
	value->fresh = true;
	value->value = 0;
	if (okv && wl_parse_offset(okv->value, offset, why, sizeof(why)) != 0) {
		struct keyctx k = { ctx, sec, okv };

		key_fail(&k, why);
		return -1;
	}
	if (vkv && wl_parse_value(vkv->value, value, true, why, sizeof(why)) != 0) {
		struct keyctx k = { ctx, sec, vkv };

		key_fail(&k, why);
		return -1;
	}
	return 0;
}

/* --- [writer NAME] -------------------------------------------------------- */

static const char *const writer_keys[] = {
	"region", "process", "pages", "offset", "value", "when", "from", "until", "rate", NULL
};

static const char *const when_names[] = { "every-scan", "after-scan", "continuous", NULL };

const char *wl_when_name(enum wl_when when) { return when_names[when]; }

static int writer_when(struct wl_ctx *ctx, const struct raw_section *sec, struct wl_writer *w)
{
	const struct raw_kv *kv = find_key(sec, "when");
	struct keyctx k = { ctx, sec, kv };
	char why[160];

	if (!kv) {
		wl_fail(ctx, sec->line, "%s needs when = every-scan, after-scan:N or continuous",
			sec->title);
		return -1;
	}
	if (strcmp(kv->value, "every-scan") == 0) {
		w->when = WL_WHEN_EVERY_SCAN;
		w->from_scan = 1;
	} else if (strcmp(kv->value, "continuous") == 0) {
		w->when = WL_WHEN_CONTINUOUS;
		w->from_scan = 0;
	} else if (strncmp(kv->value, "after-scan:", 11) == 0) {
		w->when = WL_WHEN_AFTER_SCAN;
		if (wl_parse_after_scan(kv->value, &w->from_scan, why, sizeof(why)) != 0) {
			key_fail(&k, why);
			return -1;
		}
		w->until_scan = w->from_scan;
		return 0;
	} else {
		key_fail(&k, "expected every-scan, after-scan:N or continuous");
		return -1;
	}
	w->until_scan = WL_FOREVER;
	return 0;
}

/* from, until and rate: which apply depends on when. */
static int writer_schedule(struct wl_ctx *ctx, const struct raw_section *sec, struct wl_writer *w)
{
	const struct raw_kv *from = find_key(sec, "from"), *until = find_key(sec, "until"),
			    *rate = find_key(sec, "rate");
	char why[160];

	if (w->when == WL_WHEN_AFTER_SCAN && (from || until)) {
		wl_fail(ctx, (from ? from : until)->line, "%s %s only applies to when = every-scan "
			"or continuous", sec->title, from ? "from" : "until");
		return -1;
	}
	if (from) {
		struct keyctx k = { ctx, sec, from };

		if (key_u64(&k, 0, WL_MAX_SCANS - 1, &w->from_scan) != 0)
			return -1;
	}
	if (until) {
		struct keyctx k = { ctx, sec, until };

		if (key_u64(&k, 0, WL_MAX_SCANS - 1, &w->until_scan) != 0)
			return -1;
		if (w->until_scan < w->from_scan) {
			key_fail(&k, "ends before from");
			return -1;
		}
	}
	if (w->when == WL_WHEN_CONTINUOUS && !rate) {
		wl_fail(ctx, sec->line, "%s when = continuous needs rate = page writes per second",
			sec->title);
		return -1;
	}
	if (w->when != WL_WHEN_CONTINUOUS && rate) {
		wl_fail(ctx, rate->line, "%s rate only applies to when = continuous", sec->title);
		return -1;
	}
	if (rate)
		w->rate_line = rate->line;
	if (rate && wl_parse_rate(rate->value, &w->rate, why, sizeof(why)) != 0) {
		struct keyctx k = { ctx, sec, rate };

		key_fail(&k, why);
		return -1;
	}
	return 0;
}

static int parse_writer(struct wl_ctx *ctx, const struct raw_section *sec, struct wl_writer *w)
{
	long region, process;

	memset(w, 0, sizeof(*w));
	snprintf(w->name, sizeof(w->name), "%s", sec->name);
	w->line = sec->line;
	if (check_known_keys(ctx, sec, writer_keys) != 0 ||
	    resolve_target(ctx, sec, &region, &process) != 0)
		return -1;
	if (region < 0) {
		wl_fail(ctx, sec->line, "%s needs region = NAME", sec->title);
		return -1;
	}
	w->region = (size_t)region;
	w->process = (size_t)process;
	if (parse_pages_key(ctx, sec, &ctx->wl->regions[region], &w->pages) != 0 ||
	    parse_write_keys(ctx, sec, &w->offset, &w->value) != 0 ||
	    writer_when(ctx, sec, w) != 0 || writer_schedule(ctx, sec, w) != 0)
		return -1;
	return 0;
}

/* --- [event NAME] ----------------------------------------------------------- */

static const char *const action_names[] = {
	"write", "merge", "unmerge", "unmap", "fork", "exit", "set", "run", "discard", "protect",
	"exec", "merge-off", "uffd-wp", NULL
};
#define ACTION_CHOICES "write, merge, unmerge, unmap, fork, exit, set, run, discard, protect, " \
	"exec, merge-off or uffd-wp"
static const char *const expect_names[] = { "ok", "EINVAL", "EBUSY", "ERANGE", "any", NULL };
static const char *const prot_names[] = { "rw", "read", "none", NULL };

const char *wl_action_name(enum wl_action action) { return action_names[action]; }
const char *wl_expect_name(enum wl_expect expect) { return expect_names[expect]; }
const char *wl_prot_name(enum wl_prot prot) { return prot_names[prot]; }

/* Which keys each action takes besides at and action. */
static const char *const *action_keys(enum wl_action action)
{
	static const char *const write_keys[] = { "region", "process", "pages", "offset",
						  "value", NULL };
	static const char *const range_keys[] = { "region", "process", "pages", NULL };
	static const char *const whole_region_keys[] = { "region", "process", NULL };
	static const char *const protect_keys[] = { "region", "process", "prot", NULL };
	static const char *const fork_keys[] = { "process", "child", NULL };
	static const char *const process_keys[] = { "process", NULL };
	static const char *const set_keys[] = { "set", "expect", NULL };
	static const char *const run_keys[] = { "run", "expect", NULL };

	switch (action) {
	case WL_ACT_WRITE: return write_keys;
	case WL_ACT_MERGE: case WL_ACT_UNMERGE: case WL_ACT_UNMAP: case WL_ACT_DISCARD:
		return range_keys;
	case WL_ACT_PROTECT: return protect_keys;
	case WL_ACT_UFFD_WP: return whole_region_keys;
	case WL_ACT_FORK: return fork_keys;
	case WL_ACT_EXIT: case WL_ACT_EXEC: case WL_ACT_MERGE_OFF: return process_keys;
	case WL_ACT_SET: return set_keys;
	case WL_ACT_RUN: return run_keys;
	}
	return process_keys;
}

/* Every key an event may have, whatever its action. */
static const char *const event_keys[] = {
	"at", "action", "region", "process", "pages", "offset", "value", "child", "set", "run",
	"expect", "prot", NULL
};

/* The keys of @sec (all known: check_known_keys() ran) that @action takes. */
static int check_event_keys(struct wl_ctx *ctx, const struct raw_section *sec,
			    enum wl_action action)
{
	const char *const *allowed = action_keys(action);

	for (size_t i = 0; i < sec->nkv; i++) {
		const char *key = sec->kv[i].key;
		const char *const *a = allowed;

		if (strcmp(key, "at") == 0 || strcmp(key, "action") == 0)
			continue;
		while (*a && strcmp(*a, key) != 0)
			a++;
		if (*a)
			continue;
		wl_fail(ctx, sec->kv[i].line, "%s %s does not apply to action = %s", sec->title, key,
			wl_action_name(action));
		return -1;
	}
	return 0;
}

/* The expectation that matches the kernel answering @error (EINVAL/ERANGE). */
static enum wl_expect expect_for_error(int error)
{
	return error == ERANGE ? WL_EXPECT_ERANGE : WL_EXPECT_EINVAL;
}

/* Does a store answered with @error (0 = success) meet ev->expect? */
static int check_store_expectation(const struct keyctx *k, const struct wl_event *ev, int error,
				   const char *why)
{
	char msg[300];

	if (ev->expect == WL_EXPECT_ANY || ev->expect == WL_EXPECT_EBUSY ||
	    (error == 0 && ev->expect == WL_EXPECT_OK) ||
	    (error != 0 && ev->expect == expect_for_error(error)))
		return 0;
	if (error == 0)
		snprintf(msg, sizeof(msg), "expect = %s, but the kernel accepts this value",
			 wl_expect_name(ev->expect));
	else
		snprintf(msg, sizeof(msg), "%s; say expect = %s if that is the point", why,
			 wl_expect_name(expect_for_error(error)));
	key_fail(k, msg);
	return -1;
}

static int event_set(struct wl_ctx *ctx, const struct raw_section *sec, struct wl_event *ev)
{
	const struct raw_kv *kv = find_key(sec, "set");
	struct keyctx k = { ctx, sec, kv };
	char name[64], text[sizeof(ev->knob_text)], why[160] = "";
	const char *eq;
	int knob, error;

	if (!kv) {
		wl_fail(ctx, sec->line, "%s action = set needs set = KNOB=VALUE", sec->title);
		return -1;
	}
	eq = strchr(kv->value, '=');
	if (!eq || eq == kv->value || (size_t)(eq - kv->value) >= sizeof(name) || !eq[1]) {
		key_fail(&k, "expected KNOB=VALUE, e.g. merge_across_nodes=0");
		return -1;
	}
	memcpy(name, kv->value, (size_t)(eq - kv->value));
	name[eq - kv->value] = '\0';
	wl_trim(name);
	if (strcmp(name, "run") == 0) {
		key_fail(&k, "use action = run to change run");
		return -1;
	}
	if ((knob = wl_knob_lookup(name)) < 0) {
		key_fail(&k, "no such KSM knob");
		return -1;
	}
	if (!wl_kernel_has_knob(ctx->wl->kernel, (enum wl_knob)knob)) {
		const char *since;

		wl_kernel_exports(ctx->wl->kernel, name, &since);
		snprintf(why, sizeof(why), "kernel %s has no such knob (it came in %s)",
			 wl_kernel_name(ctx->wl->kernel), since);
		key_fail(&k, why);
		return -1;
	}
	if (strlen(eq + 1) >= sizeof(text)) {
		key_fail(&k, "value too long");
		return -1;
	}
	snprintf(text, sizeof(text), "%s", eq + 1);
	wl_trim(text);
	ev->knob = (enum wl_knob)knob;
	snprintf(ev->knob_text, sizeof(ev->knob_text), "%s", text);
	error = wl_knob_parse(ev->knob, ev->knob_text, &ev->knob_value, why, sizeof(why));
	return check_store_expectation(&k, ev, error, why);
}

static int event_run(struct wl_ctx *ctx, const struct raw_section *sec, struct wl_event *ev)
{
	const struct raw_kv *kv = find_key(sec, "run");
	struct keyctx k = { ctx, sec, kv };

	if (!kv) {
		wl_fail(ctx, sec->line, "%s action = run needs run = 0, 1 or 2", sec->title);
		return -1;
	}
	if (wl_parse_u64(kv->value, &ev->run) != 0) {
		key_fail(&k, errno == ERANGE ? "too large (at most 2)" : "expected 0, 1 or 2");
		return -1;
	}
	if (ev->expect == WL_EXPECT_EBUSY || ev->expect == WL_EXPECT_ERANGE) {
		key_fail(&k, "the kernel's run store never answers EBUSY or ERANGE");
		return -1;
	}
	/* run_store turns every parse or range error into EINVAL */
	return check_store_expectation(&k, ev, ev->run > 2 ? EINVAL : 0, "must be 0, 1 or 2 "
				       "(the kernel says EINVAL)");
}

static int event_fork(struct wl_ctx *ctx, const struct raw_section *sec, struct wl_event *ev,
		      size_t event_index)
{
	const struct raw_kv *kv = find_key(sec, "child");
	struct keyctx k = { ctx, sec, kv };
	char why[160];
	long child;

	if (!kv) {
		wl_fail(ctx, sec->line, "%s action = fork needs child = NAME (the new process)",
			sec->title);
		return -1;
	}
	if (wl_parse_name(kv->value, why, sizeof(why)) != 0) {
		key_fail(&k, why);
		return -1;
	}
	/* declare_fork_children() named it already, from this very line */
	child = find_process(ctx, kv->value);
	if (child < 0 || ctx->wl->procs[child].line != kv->line ||
	    ctx->wl->procs[child].parent != -1 || (size_t)child < first_child(ctx->wl)) {
		key_fail(&k, "a process of that name already exists");
		return -1;
	}
	ctx->wl->procs[child].parent = (int)ev->process;
	ctx->wl->procs[child].fork_event = event_index;
	ev->child = (size_t)child;
	return 0;
}

/* protect: prot = none, read or rw (required). */
static int event_protect(struct wl_ctx *ctx, const struct raw_section *sec, struct wl_event *ev)
{
	const struct raw_kv *kv = find_key(sec, "prot");
	struct keyctx k = { ctx, sec, kv };
	int v;

	if (!kv) {
		wl_fail(ctx, sec->line, "%s action = protect needs prot = none, read or rw",
			sec->title);
		return -1;
	}
	if ((v = key_word(&k, prot_names, "none, read or rw")) < 0)
		return -1;
	ev->prot = (enum wl_prot)v;
	return 0;
}

/* region and process: which are needed depends on the action. */
static int event_target(struct wl_ctx *ctx, const struct raw_section *sec, struct wl_event *ev)
{
	long region, process;

	if (resolve_target(ctx, sec, &region, &process) != 0)
		return -1;
	ev->region = region;
	switch (ev->action) {
	case WL_ACT_WRITE: case WL_ACT_MERGE: case WL_ACT_UNMERGE: case WL_ACT_UNMAP:
	case WL_ACT_DISCARD: case WL_ACT_PROTECT: case WL_ACT_UFFD_WP:
		if (region < 0) {
			wl_fail(ctx, sec->line, "%s action = %s needs region = NAME", sec->title,
				wl_action_name(ev->action));
			return -1;
		}
		break;
	case WL_ACT_FORK: case WL_ACT_EXIT: case WL_ACT_EXEC: case WL_ACT_MERGE_OFF:
		if (process < 0) {
			wl_fail(ctx, sec->line, "%s action = %s needs process = NAME", sec->title,
				wl_action_name(ev->action));
			return -1;
		}
		break;
	case WL_ACT_SET: case WL_ACT_RUN:
		break;
	}
	ev->process = process < 0 ? 0 : (size_t)process;
	return 0;
}

static int event_params(struct wl_ctx *ctx, const struct raw_section *sec, struct wl_event *ev,
			size_t index)
{
	const struct wl_region *reg = ev->region >= 0 ? &ctx->wl->regions[ev->region] : NULL;

	switch (ev->action) {
	case WL_ACT_WRITE:
		if (parse_write_keys(ctx, sec, &ev->offset, &ev->value) != 0)
			return -1;
		/* fall through */
	case WL_ACT_MERGE: case WL_ACT_UNMERGE: case WL_ACT_UNMAP: case WL_ACT_DISCARD:
		if (parse_pages_key(ctx, sec, reg, &ev->pages) != 0)
			return -1;
		if (reg->merge == WL_MERGE_PRCTL && ev->pages.kind != WL_SEL_ALL &&
		    (ev->action == WL_ACT_MERGE || ev->action == WL_ACT_UNMERGE)) {
			wl_fail(ctx, find_key(sec, "pages")->line, "%s: region %s uses prctl, which "
				"%ss the whole process: pages must be all", sec->title, reg->name,
				wl_action_name(ev->action));
			return -1;
		}
		return 0;
	case WL_ACT_PROTECT:
		ev->pages.kind = WL_SEL_ALL;
		return event_protect(ctx, sec, ev);
	case WL_ACT_UFFD_WP:
		ev->pages.kind = WL_SEL_ALL;
		return 0;
	case WL_ACT_FORK:
		return event_fork(ctx, sec, ev, index);
	case WL_ACT_EXIT: case WL_ACT_EXEC: case WL_ACT_MERGE_OFF:
		return 0; /* the timeline checks a merge-off's process merges by prctl */
	case WL_ACT_SET:
		return event_set(ctx, sec, ev);
	case WL_ACT_RUN:
		return event_run(ctx, sec, ev);
	}
	return 0;
}

static int parse_event(struct wl_ctx *ctx, const struct raw_section *sec, struct wl_event *ev,
		       size_t index)
{
	const struct raw_kv *at = find_key(sec, "at"), *action = find_key(sec, "action"),
			    *expect = find_key(sec, "expect");
	char why[160];
	int v;

	memset(ev, 0, sizeof(*ev));
	snprintf(ev->name, sizeof(ev->name), "%s", sec->name);
	ev->line = sec->line;
	ev->region = -1;
	/* a mistyped key first: "acton = write" is why action is missing */
	if (check_known_keys(ctx, sec, event_keys) != 0)
		return -1;
	if (!action) {
		wl_fail(ctx, sec->line, "%s needs action = " ACTION_CHOICES, sec->title);
		return -1;
	}
	{
		struct keyctx k = { ctx, sec, action };

		if ((v = key_word(&k, action_names, ACTION_CHOICES)) < 0)
			return -1;
	}
	ev->action = (enum wl_action)v;
	if (check_event_keys(ctx, sec, ev->action) != 0)
		return -1;
	if (!at) {
		wl_fail(ctx, sec->line, "%s needs at = after-scan:N", sec->title);
		return -1;
	}
	if (wl_parse_after_scan(at->value, &ev->at_scan, why, sizeof(why)) != 0) {
		struct keyctx k = { ctx, sec, at };

		key_fail(&k, why);
		return -1;
	}
	if (expect) {
		struct keyctx k = { ctx, sec, expect };

		if ((v = key_word(&k, expect_names, "ok, EINVAL, EBUSY, ERANGE or any")) < 0)
			return -1;
		ev->expect = (enum wl_expect)v;
	}
	return event_target(ctx, sec, ev) != 0 ? -1 : event_params(ctx, sec, ev, index);
}

/* --- putting it together ----------------------------------------------------- */

static size_t count_kind(const struct reader *r, enum section_kind kind)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nsec; i++)
		n += r->sec[i].kind == kind;
	return n;
}

static int allocate_sections(struct wl_ctx *ctx, const struct reader *r)
{
	struct workload *wl = ctx->wl;
	size_t nreg = count_kind(r, SEC_REGION), nwri = count_kind(r, SEC_WRITER),
	       nev = count_kind(r, SEC_EVENT);

	wl->regions = calloc(nreg ? nreg : 1, sizeof(*wl->regions));
	wl->writers = calloc(nwri ? nwri : 1, sizeof(*wl->writers));
	wl->events = calloc(nev ? nev : 1, sizeof(*wl->events));
	if (!wl->regions || !wl->writers || !wl->events) {
		wl_fail(ctx, 0, "out of memory");
		return -1;
	}
	return 0;
}

static int parse_regions(struct wl_ctx *ctx, const struct reader *r)
{
	struct workload *wl = ctx->wl;

	for (size_t i = 0; i < r->nsec; i++) {
		if (r->sec[i].kind != SEC_REGION)
			continue;
		if (parse_region(ctx, &r->sec[i], &wl->regions[wl->nregions]) != 0) {
			free(wl->regions[wl->nregions].groups);
			return -1;
		}
		if (wl_index_add(&ctx->regions, wl_index_hash(0, r->sec[i].name),
				 wl->nregions) != 0) {
			free(wl->regions[wl->nregions].groups);
			wl_fail(ctx, r->sec[i].line, "out of memory");
			return -1;
		}
		wl->nregions++;
	}
	if (wl->nregions == 0) {
		wl_fail(ctx, 0, "no [region NAME] section: a workload needs memory to merge");
		return -1;
	}
	return check_prctl_processes(ctx);
}

/*
 * Name every forked child before any writer or event is read, so that a
 * section may name a child whose fork comes later in the file (the timeline
 * check still refuses to act on it before it is born).
 */
static int declare_fork_children(struct wl_ctx *ctx, const struct reader *r)
{
	struct workload *wl = ctx->wl;
	char why[160];

	wl->nprocs_initial = wl->nprocs;
	for (size_t i = 0; i < r->nsec; i++) {
		const struct raw_section *sec = &r->sec[i];
		const struct raw_kv *action = find_key(sec, "action"), *child = find_key(sec, "child");

		if (sec->kind != SEC_EVENT || !action || strcmp(action->value, "fork") != 0 || !child ||
		    wl_parse_name(child->value, why, sizeof(why)) != 0 ||
		    find_process(ctx, child->value) >= 0)
			continue; /* parse_event() reports what is wrong */
		if (add_process(ctx, child->value, -1, child->line) < 0)
			return -1;
	}
	return 0;
}

/* Writers and events in file order: their seq is that order. */
static int parse_actions(struct wl_ctx *ctx, const struct reader *r)
{
	struct workload *wl = ctx->wl;
	size_t seq = 0;

	if (declare_fork_children(ctx, r) != 0)
		return -1;

	for (size_t i = 0; i < r->nsec; i++) {
		const struct raw_section *sec = &r->sec[i];

		if (sec->kind == SEC_WRITER) {
			struct wl_writer *w = &wl->writers[wl->nwriters];

			if (parse_writer(ctx, sec, w) != 0) {
				wl_pagesel_free(&w->pages);
				return -1;
			}
			w->seq = seq++;
			wl->nwriters++;
		} else if (sec->kind == SEC_EVENT) {
			struct wl_event *ev = &wl->events[wl->nevents];

			if (parse_event(ctx, sec, ev, wl->nevents) != 0) {
				wl_pagesel_free(&ev->pages);
				return -1;
			}
			ev->seq = seq++;
			wl->nevents++;
		}
	}
	return 0;
}

static int assign_fresh_values(struct wl_ctx *ctx)
{
	struct workload *wl = ctx->wl;
	uint64_t next = 0;

	for (size_t i = 0; i < wl->nregions; i++) {
		if (wl->regions[i].fill != WL_FILL_UNIQUE)
			continue;
		wl->regions[i].unique_base = next;
		next += wl->regions[i].pages;
	}
	if (wl_capture_assign_values(wl, &next) != 0) {
		wl_fail(ctx, 0, "out of memory");
		return -1;
	}
	wl->fresh_start = next;
	wl->deterministic = wl->stop == WL_STOP_SCANS;
	for (size_t i = 0; i < wl->nwriters; i++)
		if (wl->writers[i].when == WL_WHEN_CONTINUOUS)
			wl->deterministic = false;
	return 0;
}

static const struct raw_section *find_global(const struct reader *r)
{
	for (size_t i = 0; i < r->nsec; i++)
		if (r->sec[i].kind == SEC_GLOBAL)
			return &r->sec[i];
	return NULL;
}

static int interpret(struct wl_ctx *ctx, const struct reader *r)
{
	if (parse_global(ctx, find_global(r)) != 0 || allocate_sections(ctx, r) != 0 ||
	    parse_regions(ctx, r) != 0 || parse_actions(ctx, r) != 0 ||
	    wl_parse_expects(ctx, r) != 0)
		return -1;
	if (assign_fresh_values(ctx) != 0 || wl_check_captures(ctx) != 0)
		return -1;
	return wl_check_timeline(ctx);
}

static struct workload *new_workload(const char *name)
{
	struct workload *wl = calloc(1, sizeof(*wl));

	if (!wl)
		return NULL;
	wl->path = strdup(name);
	if (!wl->path) {
		free(wl);
		return NULL;
	}
	wl->seed = 1;
	wl->kernel = WL_KERNEL_DEFAULT;
	wl->timeout_ns = UINT64_C(300) * 1000000000;
	set_default_knobs(wl);
	return wl;
}

/* Both phases on the lines of @src, for a workload called @name. */
static int parse_source(struct wl_source *src, const char *name, struct workload **out,
			struct wl_error *err)
{
	struct wl_ctx ctx = { .err = err };
	struct reader r = { .ctx = &ctx };
	int rc = -1;

	ctx.wl = new_workload(name);
	if (!ctx.wl) {
		wl_escape(err->text, sizeof(err->text), name);
		snprintf(err->text + strlen(err->text), sizeof(err->text) - strlen(err->text),
			 ": out of memory");
		return -1;
	}
	if (wl_read(&r, src) != 0 || interpret(&ctx, &r) != 0)
		goto out;
	*out = ctx.wl;
	ctx.wl = NULL;
	rc = 0;
out:
	wl_read_free(&r);
	wl_index_free(&ctx.regions);
	wl_index_free(&ctx.procs);
	wl_free(ctx.wl);
	return rc;
}

int wl_parse_buffer(const char *text, size_t len, const char *name, struct workload **out,
		    struct wl_error *err)
{
	struct wl_source src;

	*out = NULL;
	memset(err, 0, sizeof(*err));
	wl_source_buffer(&src, text, len);
	return parse_source(&src, name, out, err);
}

int wl_parse_file(const char *path, struct workload **out, struct wl_error *err)
{
	FILE *f = fopen(path, "rb");
	struct wl_source src;
	char text[sizeof(err->text)];
	int rc;

	*out = NULL;
	memset(err, 0, sizeof(*err));
	if (!f) {
		snprintf(text, sizeof(text), "%s: %s", path, strerror(errno));
		wl_escape(err->text, sizeof(err->text), text);
		return -1;
	}
	/* read in bounded chunks: a huge line or an endless file stops at once */
	wl_source_stream(&src, f);
	rc = parse_source(&src, path, out, err);
	fclose(f);
	return rc;
}

void wl_free(struct workload *wl)
{
	if (!wl)
		return;
	for (size_t i = 0; i < wl->nregions; i++) {
		free(wl->regions[i].groups);
		wl_capture_free(wl->regions[i].capture);
	}
	for (size_t i = 0; i < wl->nwriters; i++)
		wl_pagesel_free(&wl->writers[i].pages);
	for (size_t i = 0; i < wl->nevents; i++)
		wl_pagesel_free(&wl->events[i].pages);
	wl_expects_free(wl);
	free(wl->regions);
	free(wl->writers);
	free(wl->events);
	free(wl->procs);
	free(wl->description);
	free(wl->upstream);
	free(wl->path);
	free(wl);
}

/* --- for the other phase-two files (wl_internal.h) --------------------------- */

long wl_find_process(const struct wl_ctx *ctx, const char *name)
{
	return find_process(ctx, name);
}

long wl_find_region(const struct wl_ctx *ctx, const char *name)
{
	return find_region(ctx, name);
}

void wl_fail_unknown_key(struct wl_ctx *ctx, const struct raw_section *sec,
			 const struct raw_kv *kv, const char *const *known, const char *const *more)
{
	fail_unknown_key(ctx, sec, kv, known, more);
}

size_t wl_process_root(const struct workload *wl, size_t proc)
{
	while (wl->procs[proc].parent >= 0)
		proc = (size_t)wl->procs[proc].parent;
	return proc;
}

bool wl_process_uses_prctl(const struct workload *wl, size_t proc)
{
	size_t root = wl_process_root(wl, proc);

	for (size_t i = 0; i < wl->nregions; i++)
		if (wl->regions[i].process == root)
			return wl->regions[i].merge == WL_MERGE_PRCTL;
	return false;
}

bool wl_region_initial_value(const struct wl_region *region, uint64_t page, uint64_t *value)
{
	switch (region->fill) {
	case WL_FILL_SAME:
		*value = region->value;
		return true;
	case WL_FILL_UNIQUE:
		*value = content_fresh_value(region->unique_base + page);
		return true;
	case WL_FILL_ZERO:
		*value = 0;
		return true;
	case WL_FILL_GROUPS:
		for (size_t i = 0; i < region->ngroups; i++) {
			if (page < region->groups[i].copies) {
				*value = region->groups[i].value;
				return true;
			}
			page -= region->groups[i].copies;
		}
		return false;
	case WL_FILL_NONE:
		return false;
	case WL_FILL_CAPTURE:
		return wl_capture_value(region->capture, region->capture->initial[page], value);
	}
	return false;
}

struct wl_rng wl_writer_rng(const struct workload *wl, size_t index)
{
	return wl_rng_stream(wl->seed, 2 * (uint64_t)index);
}

struct wl_rng wl_event_rng(const struct workload *wl, size_t index)
{
	return wl_rng_stream(wl->seed, 2 * (uint64_t)index + 1);
}
