/*
 * trace.c - the core of the trace stage: the in-memory trace (rows of every
 * counter, per-process ksm_stat, event outcomes, the run's description), its
 * name tables and plain equality.
 *
 * A trace is a flat array of rows (each with its own array of per-process
 * stats) and an array of event outcomes, grown by doubling. Unset
 * descriptive fields (workload, kernel, detector) stay NULL; trace_equal
 * treats NULL and "" alike, and an absent process's field values do not
 * count, because neither survives a CSV round trip. The file formats live
 * beside this one (trace_csv_write.c, trace_json.c, trace_csv_read.c, and
 * trace_pages.c for page partitions); this file knows nothing of where the
 * numbers came from, nor of comparing two traces beyond plain equality
 * (compare/ does that).
 */
#include "trace_internal.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- name tables --------------------------------------------------------- */

static const char *const counter_names[TRACE_COUNTER_COUNT] = {
	[TRACE_PAGES_SHARED] = "pages_shared",
	[TRACE_PAGES_SHARING] = "pages_sharing",
	[TRACE_PAGES_UNSHARED] = "pages_unshared",
	[TRACE_PAGES_VOLATILE] = "pages_volatile",
	[TRACE_PAGES_SCANNED] = "pages_scanned",
	[TRACE_PAGES_SKIPPED] = "pages_skipped",
	[TRACE_FULL_SCANS] = "full_scans",
	[TRACE_STABLE_NODE_CHAINS] = "stable_node_chains",
	[TRACE_STABLE_NODE_DUPS] = "stable_node_dups",
	[TRACE_KSM_ZERO_PAGES] = "ksm_zero_pages",
	[TRACE_GENERAL_PROFIT] = "general_profit",
	[TRACE_PAGES_TO_SCAN] = "pages_to_scan",
};

static const char *const proc_field_names[TRACE_PROC_FIELD_COUNT] = {
	[TRACE_KSM_RMAP_ITEMS] = "ksm_rmap_items",
	[TRACE_KSM_ZERO_PAGES_PROC] = "ksm_zero_pages",
	[TRACE_KSM_MERGING_PAGES] = "ksm_merging_pages",
	[TRACE_KSM_PROCESS_PROFIT] = "ksm_process_profit",
	[TRACE_KSM_MERGE_ANY] = "ksm_merge_any",
	[TRACE_KSM_MERGEABLE] = "ksm_mergeable",
};

const char *const trace_row_kind_names[2] = {
	[TRACE_ROW_SCAN] = "scan",
	[TRACE_ROW_BATCH] = "batch",
};

const char *trace_counter_name(enum trace_counter c)
{
	if ((unsigned)c >= TRACE_COUNTER_COUNT)
		return NULL;
	return counter_names[c];
}

const char *trace_proc_field_name(enum trace_proc_field f)
{
	if ((unsigned)f >= TRACE_PROC_FIELD_COUNT)
		return NULL;
	return proc_field_names[f];
}

int trace_find_name(const char *const *names, size_t count, const char *name)
{
	if (!name)
		return -1;
	for (size_t i = 0; i < count; i++)
		if (strcmp(names[i], name) == 0)
			return (int)i;
	return -1;
}

int trace_counter_lookup(const char *name)
{
	return trace_find_name(counter_names, TRACE_COUNTER_COUNT, name);
}

int trace_proc_field_lookup(const char *name)
{
	return trace_find_name(proc_field_names, TRACE_PROC_FIELD_COUNT, name);
}

/* ---- building a trace ---------------------------------------------------- */

static bool is_ascii_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool trace_valid_proc_name(const char *name, size_t len)
{
	if (len == 0 || len > TRACE_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!is_ascii_alnum(name[i]) && name[i] != '_' && name[i] != '-')
			return false;
	return true;
}

/* Copy validated, distinct process names into @t, which has none yet. */
static int set_processes(struct trace *t, size_t nprocs, const char *const *names)
{
	char(*copy)[TRACE_NAME_MAX + 1];

	assert(t->nprocs == 0 && t->nrows == 0);
	if (nprocs == 0)
		return 0;
	copy = calloc(nprocs, sizeof *copy);
	if (!copy)
		return -1;
	for (size_t i = 0; i < nprocs; i++) {
		size_t len = strnlen(names[i], TRACE_NAME_MAX + 1);

		if (!trace_valid_proc_name(names[i], len))
			goto invalid;
		for (size_t j = 0; j < i; j++)
			if (strcmp(copy[j], names[i]) == 0)
				goto invalid;
		memcpy(copy[i], names[i], len);
	}
	t->proc_name = copy;
	t->nprocs = nprocs;
	return 0;

invalid:
	free(copy);
	errno = EINVAL;
	return -1;
}

struct trace *trace_new(const char *source, size_t nprocs, const char *const *names)
{
	struct trace *t;
	int saved_errno;

	assert(source && (nprocs == 0 || names));
	if (strlen(source) >= sizeof t->source) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	strcpy(t->source, source);
	if (set_processes(t, nprocs, names) < 0)
		goto fail;
	return t;

fail:
	saved_errno = errno;
	free(t);
	errno = saved_errno;
	return NULL;
}

/* A copy of @s in *@copy (NULL stays NULL). */
static int dup_optional(const char *s, char **copy)
{
	*copy = NULL;
	if (!s)
		return 0;
	*copy = strdup(s);
	return *copy ? 0 : -1;
}

int trace_set_info(struct trace *t, const char *workload, const char *kernel,
		   const char *detector, bool time_simulated)
{
	char *new_workload, *new_kernel = NULL, *new_detector = NULL;

	/* All or nothing: the trace is untouched when a copy fails. */
	if (dup_optional(workload, &new_workload) < 0)
		goto fail;
	if (dup_optional(kernel, &new_kernel) < 0)
		goto fail_kernel;
	if (dup_optional(detector, &new_detector) < 0)
		goto fail_detector;
	free(t->workload);
	free(t->kernel);
	free(t->detector);
	t->workload = new_workload;
	t->kernel = new_kernel;
	t->detector = new_detector;
	t->time_simulated = time_simulated;
	return 0;

fail_detector:
	free(new_kernel);
fail_kernel:
	free(new_workload);
fail:
	errno = ENOMEM;
	return -1;
}

/*
 * @array (holding *@cap elements of @size bytes) resized to twice the room,
 * or NULL with @array untouched when that cannot be had.
 */
static void *grow_array(void *array, size_t *cap, size_t size)
{
	size_t new_cap = *cap ? *cap * 2 : 16;
	void *grown;

	if (new_cap < *cap || new_cap > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	grown = realloc(array, new_cap * size);
	if (grown)
		*cap = new_cap;
	return grown;
}

bool trace_valid_cost_name(const char *name, size_t len)
{
	if (len == 0 || len > TRACE_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
		      name[i] == '_'))
			return false;
	return true;
}

int trace_set_costs(struct trace *t, size_t ncosts, const char *const *names)
{
	char(*copy)[TRACE_NAME_MAX + 1];

	if (t->nrows || t->ncosts) {
		errno = EINVAL;
		return -1;
	}
	if (ncosts == 0)
		return 0;
	copy = calloc(ncosts, sizeof *copy);
	if (!copy)
		return -1;
	for (size_t i = 0; i < ncosts; i++) {
		size_t len = strlen(names[i]);
		bool twice = false;

		for (size_t j = 0; j < i; j++)
			twice |= strcmp(copy[j], names[i]) == 0;
		if (!trace_valid_cost_name(names[i], len) || twice) {
			free(copy);
			errno = EINVAL;
			return -1;
		}
		memcpy(copy[i], names[i], len);
	}
	t->cost_name = copy;
	t->ncosts = ncosts;
	return 0;
}

struct trace_row *trace_append(struct trace *t, enum trace_row_kind kind)
{
	struct trace_proc_stat *proc = NULL;
	uint64_t *cost = NULL;
	struct trace_row *row;

	assert(kind == TRACE_ROW_SCAN || kind == TRACE_ROW_BATCH);
	if (t->nprocs > 0 && !(proc = calloc(t->nprocs, sizeof *proc)))
		goto fail;
	if (t->ncosts > 0 && !(cost = calloc(t->ncosts, sizeof *cost)))
		goto fail;
	if (t->nrows == t->rows_cap) {
		struct trace_row *grown = grow_array(t->row, &t->rows_cap, sizeof *t->row);

		if (!grown)
			goto fail;
		t->row = grown;
	}
	row = &t->row[t->nrows++];
	memset(row, 0, sizeof *row);
	row->kind = kind;
	row->valid = true;
	row->proc = proc;
	row->cost = cost;
	return row;
fail:
	free(proc);
	free(cost);
	return NULL;
}

int trace_add_outcome(struct trace *t, uint64_t scan, const char *event, int error)
{
	struct trace_outcome *outcome;
	size_t len = strlen(event);

	assert(error >= 0);
	if (len > TRACE_NAME_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (t->noutcomes == t->outcomes_cap) {
		struct trace_outcome *grown =
			grow_array(t->outcome, &t->outcomes_cap, sizeof *t->outcome);

		if (!grown)
			return -1;
		t->outcome = grown;
	}
	outcome = &t->outcome[t->noutcomes++];
	memset(outcome, 0, sizeof *outcome);
	outcome->scan = scan;
	memcpy(outcome->event, event, len);
	outcome->error = error;
	return 0;
}

void trace_free(struct trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nrows; i++) {
		free(t->row[i].proc);
		free(t->row[i].cost);
	}
	free(t->row);
	free(t->cost_name);
	free(t->outcome);
	free(t->proc_name);
	free(t->workload);
	free(t->kernel);
	free(t->detector);
	free(t);
}

/* ---- equality ------------------------------------------------------------ */

/* An unset descriptive field reads back from CSV as NULL: same as "". */
static bool same_text(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* An absent process's fields are not written, so they do not count. */
static bool same_proc_stat(const struct trace_proc_stat *a, const struct trace_proc_stat *b)
{
	if (a->present != b->present)
		return false;
	if (!a->present)
		return true;
	for (size_t f = 0; f < TRACE_PROC_FIELD_COUNT; f++)
		if (a->field[f] != b->field[f])
			return false;
	return true;
}

static bool same_row(const struct trace_row *a, const struct trace_row *b, size_t nprocs,
		     size_t ncosts)
{
	if (a->kind != b->kind || a->scan != b->scan || a->batch != b->batch ||
	    a->time_ns != b->time_ns || a->ksmd_cpu_ns != b->ksmd_cpu_ns || a->valid != b->valid)
		return false;
	for (size_t c = 0; c < TRACE_COUNTER_COUNT; c++)
		if (a->counter[c] != b->counter[c])
			return false;
	for (size_t p = 0; p < nprocs; p++)
		if (!same_proc_stat(&a->proc[p], &b->proc[p]))
			return false;
	for (size_t c = 0; c < ncosts; c++)
		if (a->cost[c] != b->cost[c])
			return false;
	return true;
}

static bool same_outcome(const struct trace_outcome *a, const struct trace_outcome *b)
{
	return a->scan == b->scan && strcmp(a->event, b->event) == 0 && a->error == b->error;
}

static bool same_info(const struct trace *a, const struct trace *b)
{
	return strcmp(a->source, b->source) == 0 && same_text(a->workload, b->workload) &&
	       same_text(a->kernel, b->kernel) && same_text(a->detector, b->detector) &&
	       a->time_simulated == b->time_simulated;
}

bool trace_equal(const struct trace *a, const struct trace *b)
{
	if (!same_info(a, b) || a->nprocs != b->nprocs || a->nrows != b->nrows ||
	    a->noutcomes != b->noutcomes || a->ncosts != b->ncosts)
		return false;
	for (size_t p = 0; p < a->nprocs; p++)
		if (strcmp(a->proc_name[p], b->proc_name[p]) != 0)
			return false;
	for (size_t c = 0; c < a->ncosts; c++)
		if (strcmp(a->cost_name[c], b->cost_name[c]) != 0)
			return false;
	for (size_t i = 0; i < a->nrows; i++)
		if (!same_row(&a->row[i], &b->row[i], a->nprocs, a->ncosts))
			return false;
	for (size_t i = 0; i < a->noutcomes; i++)
		if (!same_outcome(&a->outcome[i], &b->outcome[i]))
			return false;
	return true;
}
