/*
 * mc_config.c - the model checker's configuration language: interpreting
 * the raw sections of mc_ini.c into struct mc_config, strictly (an unknown
 * key, a bad value or an impossible combination is an error naming the file
 * and line), and deriving the tables the search needs: the value table and
 * the abstract page contents (a base value and the last write on it) with
 * the bytes each one stands for. docs/model-checking.md is the reference.
 */
#include "mc_internal.h"
#include "mc_ini.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "content.h"

static const char *const budget_names[MC_B_COUNT] = {
	[MC_B_WRITES] = "writes", [MC_B_MERGES] = "merges", [MC_B_UNMERGES] = "unmerges",
	[MC_B_UNMAPS] = "unmaps", [MC_B_FORKS] = "forks", [MC_B_EXITS] = "exits",
	[MC_B_STORES] = "stores", [MC_B_RUNS] = "runs",
};

bool mc_store_is_split(enum wl_knob knob)
{
	/* the stores that check KSM's state under ksm_thread_mutex */
	return knob == WL_KNOB_MERGE_ACROSS_NODES || knob == WL_KNOB_MAX_PAGE_SHARING;
}

bool mc_store_takes_mutex(enum wl_knob knob)
{
	/* run_store takes it too (MC_ACT_RUN); the split stores do, under it */
	return mc_store_is_split(knob);
}

const char *mc_lock_name(enum mc_lock l)
{
#define MC_LOCK_NAME_(name, text) [MC_LOCK_##name] = text,
	static const char *const names[MC_LOCK_COUNT] = { MC_LOCKS(MC_LOCK_NAME_) };
#undef MC_LOCK_NAME_

	return l < MC_LOCK_COUNT ? names[l] : "?";
}

/*
 * Whether a batch of ksmd (pages_to_scan pages, read when it starts) can end
 * before its full scan does: a full scan processes each of at most @worst
 * page slots once, so a batch longer than that always ends at the wrap.
 */
static bool batch_can_end_by_count(const struct mc_config *cfg, unsigned worst)
{
	uint64_t fewest = cfg->knobs[WL_KNOB_PAGES_TO_SCAN];

	for (unsigned i = 0; cfg->budget[MC_B_STORES] && i < cfg->nstores; i++)
		if (cfg->store[i].knob == WL_KNOB_PAGES_TO_SCAN && cfg->store[i].value < fewest)
			fewest = cfg->store[i].value;
	return fewest <= worst;
}

const char *mc_config_description(const struct mc_config *cfg)
{
	return cfg->description;
}

bool mc_config_checks(const struct mc_config *cfg, int inv)
{
	return inv >= 0 && inv < MC_INV_COUNT && cfg->check[inv];
}

/* --- one key at a time --------------------------------------------------------- */

struct parse {
	struct mc_config *cfg;
	struct mc_error *err;
	const struct mc_ini_section *sec;
	struct mc_ini_kv *kv;
};

static int bad(const struct parse *p, const char *why)
{
	return mc_fail(p->err, p->cfg->path, p->kv->line, "%s %s = %s: %s", p->sec->title,
		       p->kv->key, p->kv->value, why);
}

static int word(const struct parse *p, const char *const *names, const char *expected)
{
	char why[128];

	for (int i = 0; names[i]; i++)
		if (strcmp(p->kv->value, names[i]) == 0)
			return i;
	snprintf(why, sizeof(why), "expected %s", expected);
	return bad(p, why);
}

static int number(const struct parse *p, uint64_t min, uint64_t max, uint64_t *out)
{
	char why[96];

	if (wl_parse_u64(p->kv->value, out) != 0)
		return bad(p, "expected a number");
	if (*out < min || *out > max) {
		snprintf(why, sizeof(why), "must be %llu to %llu", (unsigned long long)min,
			 (unsigned long long)max);
		return bad(p, why);
	}
	return 0;
}

/* Split a comma list in place: calls @fn on each item (blanks trimmed). */
static int each_item(const struct parse *p, int (*fn)(const struct parse *, const char *, void *),
		     void *arg)
{
	char buf[256], *rest, *item;

	if (strlen(p->kv->value) >= sizeof(buf))
		return bad(p, "too long");
	snprintf(buf, sizeof(buf), "%s", p->kv->value);
	if (!buf[0])
		return bad(p, "expected a comma-separated list");
	for (rest = buf; (item = strsep(&rest, ","));) {
		while (isspace((unsigned char)*item))
			item++;
		for (char *e = item + strlen(item); e > item && isspace((unsigned char)e[-1]);)
			*--e = '\0';
		if (!*item)
			return bad(p, "empty item in the list");
		if (fn(p, item, arg) != 0)
			return -1;
	}
	return 0;
}

/* Index of @v in the value table, adding it. */
static int value_index(const struct parse *p, uint64_t v)
{
	struct mc_config *cfg = p->cfg;

	for (unsigned i = 0; i < cfg->nvalues; i++)
		if (cfg->values[i] == v)
			return (int)i;
	if (cfg->nvalues == MC_MAX_VALUES)
		return bad(p, "too many distinct values in the configuration (at most 14)");
	cfg->values[cfg->nvalues] = v;
	return (int)cfg->nvalues++;
}

static int parse_value(const struct parse *p, const char *text, uint64_t *v)
{
	if (wl_parse_u64(text, v) != 0)
		return bad(p, "expected numbers below 2^63");
	if (*v >= WL_VALUE_LIMIT)
		return bad(p, "values must be below 2^63 (the upper half is for fresh values)");
	return 0;
}

static int add_write_value(const struct parse *p, const char *text, void *arg)
{
	struct mc_config *cfg = p->cfg;
	uint64_t v;
	int idx;

	(void)arg;
	if (parse_value(p, text, &v) != 0 || (idx = value_index(p, v)) < 0)
		return -1;
	for (unsigned i = 0; i < cfg->nwrite_values; i++)
		if (cfg->write_value[i] == idx)
			return bad(p, "a value is listed twice");
	cfg->write_value[cfg->nwrite_values++] = (uint8_t)idx;
	return 0;
}

static int add_store(const struct parse *p, const char *text, void *arg)
{
	struct mc_config *cfg = p->cfg;
	const char *eq = strchr(text, '=');
	char knob[64], val[32], why[160];
	struct mc_store *st;
	int k;

	(void)arg;
	if (!eq || (size_t)(eq - text) >= sizeof(knob) || strlen(eq + 1) >= sizeof(val))
		return bad(p, "expected KNOB=VALUE items");
	memcpy(knob, text, (size_t)(eq - text));
	knob[eq - text] = '\0';
	snprintf(val, sizeof(val), "%s", eq + 1);
	if ((k = wl_knob_lookup(knob)) < 0)
		return bad(p, "unknown knob (run changes go in run_values)");
	if (k == WL_KNOB_ADVISOR_MODE)
		return bad(p, "advisor_mode cannot change: time stands still in the model");
	if (cfg->nstores == MC_MAX_STORES)
		return bad(p, "at most 8 stores");
	st = &cfg->store[cfg->nstores];
	st->knob = (enum wl_knob)k;
	snprintf(st->text, sizeof(st->text), "%s", val);
	if (wl_knob_parse(st->knob, val, &st->value, why, sizeof(why)) != 0)
		return bad(p, why);
	/* as lint refuses set = pages_to_scan=0 in a workload that waits for scans */
	if (wl_knob_store_check(st->knob, st->value, false, true) == WL_KNOBS_NEVER_SCANS)
		return bad(p, "ksmd would never complete another scan");
	cfg->nstores++;
	return 0;
}

static int add_run_value(const struct parse *p, const char *text, void *arg)
{
	struct mc_config *cfg = p->cfg;

	(void)arg;
	if (strlen(text) != 1 || text[0] < '0' || text[0] > '2')
		return bad(p, "expected run values 0, 1 or 2");
	for (unsigned i = 0; i < cfg->nrun_values; i++)
		if (cfg->run_value[i] == text[0] - '0')
			return bad(p, "a value is listed twice");
	cfg->run_value[cfg->nrun_values++] = (uint8_t)(text[0] - '0');
	return 0;
}

static int add_invariant(const struct parse *p, const char *text, void *arg)
{
	int inv;

	(void)arg;
	if (strcmp(text, "all") == 0) {
		for (int i = 0; i < MC_INV_COUNT; i++)
			p->cfg->check[i] = true;
		return 0;
	}
	if ((inv = mc_invariant_lookup(text)) < 0)
		return bad(p, "unknown invariant (ksmkit check --list-invariants shows them)");
	p->cfg->check[inv] = true;
	return 0;
}

/* --- [check] ------------------------------------------------------------------- */

/* the policies, from their lists (wl_policy.h) */
static const char *const detector_names[] = { WL_DETECTORS(WL_POLICY_NAME) NULL };
static const char *const smart_scan_policy_names[] = { WL_SMART_SCAN_POLICIES(WL_POLICY_NAME)
							 NULL };
static const char *const ksmd_names[] = { "page", "scan", NULL };
static const char *const search_names[] = { "bfs", "dfs", NULL };

/* One of a policy list's @names, or -1 with a message listing them. */
static int policy_word(const struct parse *p, const char *const *names)
{
	char choices[128];

	return word(p, names, wl_choices_text(names, choices, sizeof(choices)));
}

static int check_budget_key(const struct parse *p)
{
	uint64_t v;

	for (int b = 0; b < MC_B_COUNT; b++) {
		if (strcmp(p->kv->key, budget_names[b]) != 0)
			continue;
		if (number(p, 0, 100, &v) != 0)
			return -1;
		p->cfg->budget[b] = (uint8_t)v;
		return 1;
	}
	return 0;
}

static int check_knob_key(const struct parse *p)
{
	int k = wl_knob_lookup(p->kv->key);
	char why[160];

	if (k < 0)
		return 0;
	if (wl_knob_parse((enum wl_knob)k, p->kv->value, &p->cfg->knobs[k], why, sizeof(why)))
		return bad(p, why);
	p->cfg->knob_given[k] = true;
	p->cfg->knob_line[k] = p->kv->line;
	if (k == WL_KNOB_ADVISOR_MODE && p->cfg->knobs[k] != WL_ADVISOR_NONE)
		return bad(p, "the advisor needs time to pass, and time stands still in the model");
	return 1;
}

static int check_key(struct parse *p)
{
	struct mc_config *cfg = p->cfg;
	const char *key = p->kv->key;
	uint64_t v;
	int w, rc;

	if ((rc = check_budget_key(p)) != 0 || (rc = check_knob_key(p)) != 0)
		return rc < 0 ? -1 : 0;
	if (strcmp(key, "description") == 0) {
		free(cfg->description);
		cfg->description = strdup(p->kv->value);
		return cfg->description ? 0 : bad(p, "out of memory");
	}
	if (strcmp(key, "kernel") == 0) {
		char choices[128];

		if ((w = word(p, wl_kernel_names(), wl_kernel_choices(choices, sizeof(choices)))) < 0)
			return -1;
		cfg->kernel = (enum wl_kernel)w;
	} else if (strcmp(key, "detector") == 0) {
		if ((w = policy_word(p, detector_names)) < 0)
			return -1;
		cfg->detector = (enum wl_detector)w;
	} else if (strcmp(key, "smart_scan_policy") == 0) {
		if ((w = policy_word(p, smart_scan_policy_names)) < 0)
			return -1;
		cfg->smart_scan_policy = (enum wl_smart_scan_policy)w;
	} else if (strcmp(key, "ksmd") == 0) {
		if ((w = word(p, ksmd_names, "page or scan")) < 0)
			return -1;
		cfg->ksmd_scan = w == 1;
	} else if (strcmp(key, "search") == 0) {
		if ((w = word(p, search_names, "bfs or dfs")) < 0)
			return -1;
		cfg->search = w == 0 ? MC_SEARCH_BFS : MC_SEARCH_DFS;
	} else if (strcmp(key, "depth") == 0) {
		return number(p, 0, UINT32_MAX, &cfg->depth);
	} else if (strcmp(key, "liveness_scans") == 0) {
		if (number(p, 1, 64, &v) != 0)
			return -1;
		cfg->liveness_scans = (unsigned)v;
	} else if (strcmp(key, "invariants") == 0) {
		memset(cfg->check, 0, sizeof(cfg->check));
		return each_item(p, add_invariant, NULL);
	} else if (strcmp(key, "values") == 0) {
		return each_item(p, add_write_value, NULL);
	} else if (strcmp(key, "offset") == 0) {
		if (number(p, 0, CONTENT_MAX_OFFSET, &v) != 0)
			return -1;
		cfg->offset = (uint32_t)v;
	} else if (strcmp(key, "store_values") == 0) {
		return each_item(p, add_store, NULL);
	} else if (strcmp(key, "run_values") == 0) {
		return each_item(p, add_run_value, NULL);
	} else {
		return mc_fail(p->err, cfg->path, p->kv->line, "unknown key '%s' in [check]", key);
	}
	return 0;
}

/* --- [region NAME] ---------------------------------------------------------------- */

static const char *const merge_names[] = { "madvise", "prctl", "none", NULL };
static const char *const yes_no[] = { "no", "yes", NULL };

static int valid_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > MC_NAME_MAX)
		return 0;
	for (const char *c = name; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-')
			return 0;
	return 1;
}

static int process_index(const struct parse *p, const char *name)
{
	struct mc_config *cfg = p->cfg;

	if (!valid_name(name))
		return bad(p, "names use 1 to 63 letters, digits, '_' and '-'");
	for (unsigned i = 0; i < cfg->nprocs; i++)
		if (strcmp(cfg->proc_name[i], name) == 0)
			return (int)i;
	if (cfg->nprocs == MC_MAX_PROCS)
		return bad(p, "too many processes");
	snprintf(cfg->proc_name[cfg->nprocs], sizeof(cfg->proc_name[0]), "%s", name);
	return (int)cfg->nprocs++;
}

static int add_content(const struct parse *p, const char *text, void *arg)
{
	struct mc_region *reg = arg;
	uint8_t *grown;
	uint64_t v;
	int idx;

	if (strcmp(text, "-") == 0) {
		if ((idx = value_index(p, 0)) < 0) /* an untouched page reads zeros */
			return -1;
		idx = MC_VALUE_UNTOUCHED;
	} else if (parse_value(p, text, &v) != 0 || (idx = value_index(p, v)) < 0) {
		return -1;
	}
	grown = realloc(reg->value, reg->npages + 1);
	if (!grown)
		return bad(p, "out of memory");
	reg->value = grown;
	reg->value[reg->npages++] = (uint8_t)idx;
	return 0;
}

static int region_key(struct parse *p, struct mc_region *reg, bool *have_process)
{
	const char *key = p->kv->key;
	int w;

	if (strcmp(key, "process") == 0) {
		if ((w = process_index(p, p->kv->value)) < 0)
			return -1;
		reg->process = (unsigned)w;
		*have_process = true;
	} else if (strcmp(key, "contents") == 0) {
		return each_item(p, add_content, reg);
	} else if (strcmp(key, "node") == 0) {
		uint64_t v;

		if (strcmp(p->kv->value, "any") == 0) {
			reg->node = -1;
			return 0;
		}
		if (number(p, 0, 7, &v) != 0)
			return -1;
		reg->node = (int)v;
	} else if (strcmp(key, "merge") == 0) {
		if ((w = word(p, merge_names, "madvise, prctl or none")) < 0)
			return -1;
		reg->merge = w;
	} else if (strcmp(key, "dirty_tracking") == 0) {
		if ((w = word(p, yes_no, "yes or no")) < 0)
			return -1;
		reg->dirty_tracking = w == 1;
	} else {
		return mc_fail(p->err, p->cfg->path, p->kv->line, "unknown key '%s' in %s", key,
			       p->sec->title);
	}
	return 0;
}

static int parse_region(struct mc_config *cfg, const struct mc_ini_section *sec,
			struct mc_error *err)
{
	struct parse p = { cfg, err, sec, NULL };
	struct mc_region *reg;
	bool have_process = false;

	if (!valid_name(sec->name))
		return mc_fail(err, cfg->path, sec->line, "%s: region names use 1 to 63 letters, "
			       "digits, '_' and '-'", sec->title);
	if (cfg->nregions == MC_MAX_REGIONS)
		return mc_fail(err, cfg->path, sec->line, "too many regions (at most %d)",
			       MC_MAX_REGIONS);
	reg = &cfg->region[cfg->nregions++];
	memset(reg, 0, sizeof(*reg));
	snprintf(reg->name, sizeof(reg->name), "%s", sec->name);
	reg->line = sec->line;
	reg->node = -1;
	reg->merge = WL_MERGE_MADVISE;
	reg->dirty_tracking = true;
	for (size_t i = 0; i < sec->nkv; i++) {
		p.kv = &sec->kv[i];
		if (region_key(&p, reg, &have_process) != 0)
			return -1;
	}
	if (!have_process) {
		struct mc_ini_kv fake = { (char *)"process", (char *)"main", sec->line, false };
		int proc;

		p.kv = &fake;
		if ((proc = process_index(&p, "main")) < 0)
			return -1;
		reg->process = (unsigned)proc;
	}
	if (!reg->npages)
		return mc_fail(err, cfg->path, sec->line, "%s needs contents = V1,V2,... "
			       "(one value per page, '-' for a page never touched)", sec->title);
	return 0;
}

/* --- whole-configuration checks and derived tables ------------------------------ */

/*
 * The knobs by the workload language's own rules (wl_knobs_check), so that
 * the checker refuses what lint refuses: the configuration explores full
 * scans, and its counterexamples are workloads that wait for them.
 */
static int check_knobs(const struct mc_config *cfg, struct mc_error *err)
{
	enum wl_knob knob;
	char why[200];

	if (wl_knobs_check(cfg->kernel, cfg->knobs, cfg->knob_given, true, &knob, why,
			   sizeof(why)) == WL_KNOBS_OK)
		return 0;
	return mc_fail(err, cfg->path, cfg->knob_line[knob], "[check] %s", why);
}

static int check_whole(struct mc_config *cfg, struct mc_error *err)
{
	unsigned slots = 0, worst = 0;

	if (check_knobs(cfg, err) != 0)
		return -1;
	if (!cfg->nregions)
		return mc_fail(err, cfg->path, 0, "no [region NAME] section: nothing to merge");
	cfg->nr_nodes = 1;
	for (unsigned i = 0; i < cfg->nregions; i++) {
		const struct mc_region *reg = &cfg->region[i];

		slots += reg->npages;
		if (reg->node >= 0 && (unsigned)reg->node + 1 > cfg->nr_nodes)
			cfg->nr_nodes = (unsigned)reg->node + 1;
		for (unsigned j = 0; j < cfg->nregions; j++)
			if (cfg->region[j].process == reg->process &&
			    (cfg->region[j].merge == WL_MERGE_PRCTL) != (reg->merge == WL_MERGE_PRCTL))
				return mc_fail(err, cfg->path, reg->line, "[region %s]: prctl makes every "
					       "region of process %s mergeable: all its regions must say "
					       "merge = prctl", reg->name, cfg->proc_name[reg->process]);
	}
	/* each fork can at most double the pages */
	worst = slots << (cfg->budget[MC_B_FORKS] < 8 ? cfg->budget[MC_B_FORKS] : 8);
	if (worst + 1 > MC_MAX_SLOTS)
		return mc_fail(err, cfg->path, 0, "too large for the model checker: %u pages, "
			       "%u after forks (at most %u)", slots, worst, MC_MAX_SLOTS - 1);
	if (cfg->nprocs + cfg->budget[MC_B_FORKS] > MC_MAX_PROCS)
		return mc_fail(err, cfg->path, 0, "too many processes with forks (at most %d)",
			       MC_MAX_PROCS);
	if (cfg->budget[MC_B_WRITES] && !cfg->nwrite_values)
		return mc_fail(err, cfg->path, 0, "[check] writes = %u needs values = V1,V2,...",
			       cfg->budget[MC_B_WRITES]);
	if (cfg->budget[MC_B_STORES] && !cfg->nstores)
		return mc_fail(err, cfg->path, 0, "[check] stores = %u needs store_values = "
			       "KNOB=VALUE,...", cfg->budget[MC_B_STORES]);
	if (cfg->budget[MC_B_RUNS] && !cfg->nrun_values)
		return mc_fail(err, cfg->path, 0, "[check] runs = %u needs run_values = 0,1,2",
			       cfg->budget[MC_B_RUNS]);
	if (cfg->search == MC_SEARCH_DFS && !cfg->depth)
		return mc_fail(err, cfg->path, 0, "[check] search = dfs needs depth = N");
	cfg->nslots_initial = slots + 1;
	cfg->batch_by_count = batch_can_end_by_count(cfg, worst);
	return 0;
}

/*
 * The abstract contents: base value b with the last write w (values[w - 1])
 * at the offset, or none (w = 0). A write that leaves the bytes as they were
 * is the base itself, so equal bytes have one id.
 */
static void derive_contents(struct mc_config *cfg)
{
	uint8_t base[CONTENT_PAGE_SIZE], page[CONTENT_PAGE_SIZE];
	unsigned nv = cfg->nvalues;

	cfg->ncontents = nv * (nv + 1);
	for (unsigned b = 0; b < nv; b++) {
		content_fill(base, cfg->values[b]);
		for (unsigned w = 0; w <= nv; w++) {
			struct mc_content *c = &cfg->content[b * (nv + 1) + w];

			memset(c, 0, sizeof(*c));
			c->base = (uint8_t)b;
			memcpy(page, base, sizeof(page));
			if (w)
				content_write(page, cfg->offset, cfg->values[w - 1]);
			for (uint32_t o = cfg->offset; o < cfg->offset + CONTENT_WORD_SIZE; o++)
				if (page[o] != base[o])
					c->patch[c->npatch++] = (struct sim_patch_byte){ (uint16_t)o,
											 page[o] };
			c->written = c->npatch ? (uint8_t)w : 0;
			c->plain = c->npatch == 0;
			c->plain_value = cfg->values[b];
		}
	}
}

/* --- entry points ------------------------------------------------------------------- */

static void set_defaults(struct mc_config *cfg)
{
	for (int k = 0; k < WL_KNOB_COUNT; k++)
		cfg->knobs[k] = wl_knob_info((enum wl_knob)k)->def;
	cfg->kernel = WL_KERNEL_DEFAULT;
	cfg->detector = WL_DETECTOR_CHECKSUM;
	cfg->smart_scan_policy = WL_SMART_SCAN_UPSTREAM;
	cfg->search = MC_SEARCH_BFS;
	cfg->liveness_scans = 3;
	for (int i = 0; i < MC_INV_COUNT; i++)
		cfg->check[i] = true;
}

static bool is_set(const struct mc_setting *set, size_t nset, const char *key)
{
	for (size_t i = 0; i < nset; i++)
		if (strcmp(set[i].key, key) == 0)
			return true;
	return false;
}

/* [check]'s keys: the file's, but those @set replaces, then @set's. */
static int check_keys(struct mc_config *cfg, const struct mc_ini_section *check,
		      const struct mc_setting *set, size_t nset, struct mc_error *err)
{
	const struct mc_ini_section given = { .kind = "check", .title = "--set" };

	for (size_t i = 0; i < check->nkv; i++) {
		struct parse p = { cfg, err, check, &check->kv[i] };

		if (!is_set(set, nset, check->kv[i].key) && check_key(&p) != 0)
			return -1;
	}
	for (size_t i = 0; i < nset; i++) {
		struct mc_ini_kv kv = { (char *)set[i].key, (char *)set[i].value, 0, false };
		struct parse p = { cfg, err, &given, &kv };

		if (check_key(&p) != 0)
			return -1;
	}
	return 0;
}

static int interpret(struct mc_config *cfg, struct mc_ini *ini, const struct mc_setting *set,
		     size_t nset, struct mc_error *err)
{
	const struct mc_ini_section *check = NULL;

	for (size_t i = 0; i < ini->nsec; i++) {
		const struct mc_ini_section *sec = &ini->sec[i];

		if (strcmp(sec->kind, "check") == 0) {
			if (sec->name[0])
				return mc_fail(err, cfg->path, sec->line, "[check] takes no name");
			check = sec;
		} else if (strcmp(sec->kind, "region") != 0) {
			return mc_fail(err, cfg->path, sec->line, "unknown section %s (expected "
				       "[check] or [region NAME])", sec->title);
		}
	}
	if (!check)
		return mc_fail(err, cfg->path, 0, "no [check] section");
	if (check_keys(cfg, check, set, nset, err) != 0)
		return -1;
	for (size_t i = 0; i < ini->nsec; i++)
		if (strcmp(ini->sec[i].kind, "region") == 0 && parse_region(cfg, &ini->sec[i], err))
			return -1;
	if (check_whole(cfg, err) != 0)
		return -1;
	derive_contents(cfg);
	return 0;
}

int mc_config_parse_buffer(const char *text, size_t len, const char *name,
			   struct mc_config **out, struct mc_error *err)
{
	return mc_config_parse_buffer_with(text, len, name, NULL, 0, out, err);
}

int mc_config_parse_buffer_with(const char *text, size_t len, const char *name,
				const struct mc_setting *set, size_t nset,
				struct mc_config **out, struct mc_error *err)
{
	struct mc_config *cfg = calloc(1, sizeof(*cfg));
	struct mc_ini ini;

	*out = NULL;
	memset(err, 0, sizeof(*err));
	if (!cfg || !(cfg->path = strdup(name))) {
		free(cfg);
		snprintf(err->text, sizeof(err->text), "%s: out of memory", name);
		return -1;
	}
	set_defaults(cfg);
	if (mc_ini_read(text, len, cfg->path, &ini, err) != 0) {
		mc_config_free(cfg);
		return -1;
	}
	if (interpret(cfg, &ini, set, nset, err) != 0) {
		mc_ini_free(&ini);
		mc_config_free(cfg);
		return -1;
	}
	mc_ini_free(&ini);
	*out = cfg;
	return 0;
}

int mc_config_parse_file(const char *path, struct mc_config **out, struct mc_error *err)
{
	return mc_config_parse_file_with(path, NULL, 0, out, err);
}

int mc_config_parse_file_with(const char *path, const struct mc_setting *set, size_t nset,
			      struct mc_config **out, struct mc_error *err)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	size_t len = 0, cap = 0;
	int rc;

	*out = NULL;
	memset(err, 0, sizeof(*err));
	if (!f)
		return mc_fail(err, path, 0, "cannot read: %s", strerror(errno));
	for (;;) {
		size_t n;

		if (len + 4096 > cap) {
			char *grown = realloc(text, cap = cap * 2 + 4096);

			if (!grown) {
				free(text);
				fclose(f);
				return mc_fail(err, path, 0, "out of memory");
			}
			text = grown;
		}
		n = fread(text + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	rc = ferror(f) ? mc_fail(err, path, 0, "cannot read: %s", strerror(errno))
		       : mc_config_parse_buffer_with(text, len, path, set, nset, out, err);
	fclose(f);
	free(text);
	return rc;
}

void mc_config_free(struct mc_config *cfg)
{
	if (!cfg)
		return;
	for (unsigned i = 0; i < cfg->nregions; i++)
		free(cfg->region[i].value);
	free(cfg->description);
	free(cfg->path);
	free(cfg);
}
