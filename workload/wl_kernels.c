/*
 * wl_kernels.c - the kernel releases ksmkit follows, as data: the rows of
 * WL_KERNELS (workload.h), the table of when each knob, counter and
 * ksm_stat line came, and the lookups every layer uses (the workload's
 * `kernel =` key, lint's knob checks, the simulator's behaviour, the
 * counters it reports, and which row models the kernel a backend ran on).
 * Nothing here branches on a version: a question about a kernel is a
 * column of its row, or its release against the since table.
 */
#include "workload.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const struct wl_kernel_row kernel_rows[WL_KERNEL_COUNT] = {
#define WL_KERNEL_ROW(id, name, release, first, last, checksum_first, unshares_zero_pages,      \
		      fork_copies_counts, prctl_merge, exec_keeps_merge_any, unshares_uffd_wp,     \
		      reaches_prot_none, doc)                                                        \
	[WL_KERNEL_##id] = { name, release, first, last, checksum_first, unshares_zero_pages, \
			     fork_copies_counts, prctl_merge, exec_keeps_merge_any,             \
			     unshares_uffd_wp, reaches_prot_none, doc },
	WL_KERNELS(WL_KERNEL_ROW)
#undef WL_KERNEL_ROW
};

static const char *const kernel_names[WL_KERNEL_COUNT + 1] = {
#define WL_KERNEL_NAME(id, name, ...) [WL_KERNEL_##id] = name,
	WL_KERNELS(WL_KERNEL_NAME)
#undef WL_KERNEL_NAME
};

/*
 * What came after 6.1, by release (major * 100 + minor), for the names of
 * knobs, counters and ksm_stat lines that older kernels lack. From the
 * kernels' own sources; 6.1 was checked in a guest (ksmkit run --guest).
 */
static const struct since {
	const char *name;
	unsigned release;
	const char *text; /* the release, as people write it */
} since_table[] = {
	{ "general_profit", 604, "6.4" },     { "ksm_process_profit", 604, "6.4" },
	{ "pages_scanned", 606, "6.6" },      { "ksm_zero_pages", 606, "6.6" },
	{ "smart_scan", 607, "6.7" },         { "pages_skipped", 607, "6.7" },
	{ "advisor_mode", 608, "6.8" },       { "advisor_max_cpu", 608, "6.8" },
	{ "advisor_min_pages_to_scan", 608, "6.8" }, { "advisor_max_pages_to_scan", 608, "6.8" },
	{ "advisor_target_scan_time", 608, "6.8" },
	{ "ksm_merge_any", 614, "6.14" },     { "ksm_mergeable", 614, "6.14" },
};

#define NSINCE (sizeof(since_table) / sizeof(since_table[0]))

const struct wl_kernel_row *wl_kernel_row(enum wl_kernel kernel)
{
	return &kernel_rows[kernel];
}

const char *wl_kernel_name(enum wl_kernel kernel)
{
	return kernel_rows[kernel].name;
}

const char *const *wl_kernel_names(void)
{
	return kernel_names;
}

int wl_kernel_lookup(const char *name)
{
	for (int k = 0; k < WL_KERNEL_COUNT; k++)
		if (strcmp(kernel_rows[k].name, name) == 0)
			return k;
	return -1;
}

const char *wl_kernel_choices(char *buf, size_t len)
{
	return wl_choices_text(kernel_names, buf, len);
}

static const struct since *since_of(const char *name)
{
	for (size_t i = 0; i < NSINCE; i++)
		if (strcmp(since_table[i].name, name) == 0)
			return &since_table[i];
	return NULL;
}

bool wl_kernel_exports(enum wl_kernel kernel, const char *name, const char **since)
{
	const struct since *s = since_of(name);

	if (!s)
		return true;
	if (since)
		*since = s->text;
	return kernel_rows[kernel].release >= s->release;
}

const char *wl_export_since(const char *name)
{
	const struct since *s = since_of(name);

	return s ? s->text : NULL;
}

bool wl_kernel_exports_all(enum wl_kernel kernel)
{
	for (size_t i = 0; i < NSINCE; i++)
		if (kernel_rows[kernel].release < since_table[i].release)
			return false;
	return true;
}

bool wl_kernel_has_knob(enum wl_kernel kernel, enum wl_knob knob)
{
	return wl_kernel_exports(kernel, wl_knob_info(knob)->name, NULL);
}

bool wl_kernel_has_prctl_merge(enum wl_kernel kernel)
{
	return kernel_rows[kernel].prctl_merge;
}

/* What the rows model, for the message about a release none does. */
static void models_text(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int k = 0; k < WL_KERNEL_COUNT && used < len; k++) {
		const struct wl_kernel_row *r = &kernel_rows[k];
		const char *sep = k == 0 ? "" : k + 1 == WL_KERNEL_COUNT ? " and " : ", ";
		int n;

		if (r->last == 0)
			n = snprintf(buf + used, len - used, "%s%u.%u or later (as %s)", sep,
				     r->first / 100, r->first % 100, r->name);
		else if (r->first != r->last)
			n = snprintf(buf + used, len - used, "%s%u.%u to %u.%u (as %s)", sep,
				     r->first / 100, r->first % 100, r->last / 100, r->last % 100,
				     r->name);
		else
			n = snprintf(buf + used, len - used, "%s%s", sep, r->name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

int wl_kernel_from_release(const char *release, enum wl_kernel *kernel, char *why,
			   size_t whylen)
{
	unsigned major, minor, rel;
	char models[256];

	if (!release || sscanf(release, "%u.%u", &major, &minor) != 2 || minor > 99) {
		snprintf(why, whylen, "cannot read a kernel version in '%s'", release ? release : "");
		return -1;
	}
	rel = major * 100 + minor;
	for (int k = 0; k < WL_KERNEL_COUNT; k++) {
		const struct wl_kernel_row *r = &kernel_rows[k];

		if (rel >= r->first && (r->last == 0 || rel <= r->last)) {
			*kernel = (enum wl_kernel)k;
			return 0;
		}
	}
	models_text(models, sizeof(models));
	snprintf(why, whylen, "the simulator has no semantics for Linux %s: it models %s", release,
		 models);
	return -1;
}

/*
 * A policy's kernel is built with CONFIG_LOCALVERSION="+NAME", so that its
 * `uname -r` ends in it ("6.12.57+phased"): what a kernel carries is read
 * off its release, and the guest that boots one needs no table of its own.
 */
enum wl_smart_scan_policy wl_kernel_smart_scan_policy(const char *release)
{
	size_t len = release ? strlen(release) : 0;

	for (int p = 0; p < WL_SMART_SCAN_COUNT; p++) {
		const char *name = wl_smart_scan_policy_name((enum wl_smart_scan_policy)p);
		size_t n = strlen(name);

		if (p != WL_SMART_SCAN_UPSTREAM && len > n && release[len - n - 1] == '+' &&
		    strcmp(release + len - n, name) == 0)
			return (enum wl_smart_scan_policy)p;
	}
	return WL_SMART_SCAN_UPSTREAM;
}

/* --- facts a workload may require ---------------------------------------------- */

static const struct fact {
	const char *name;
	size_t column; /* offsetof the row's bool */
	bool want;
	const char *doc;
} facts[WL_FACT_COUNT] = {
#define WL_KERNEL_FACT_ROW(id, name, column, want, doc)                                     \
	[WL_FACT_##id] = { name, offsetof(struct wl_kernel_row, column), want, doc },
	WL_KERNEL_FACTS(WL_KERNEL_FACT_ROW)
#undef WL_KERNEL_FACT_ROW
};

const char *wl_kernel_fact_name(enum wl_kernel_fact fact)
{
	return facts[fact].name;
}

const char *wl_kernel_fact_doc(enum wl_kernel_fact fact)
{
	return facts[fact].doc;
}

int wl_kernel_fact_lookup(const char *name)
{
	for (int f = 0; f < WL_FACT_COUNT; f++)
		if (strcmp(facts[f].name, name) == 0)
			return f;
	return -1;
}

bool wl_kernel_has_fact(enum wl_kernel kernel, enum wl_kernel_fact fact)
{
	const bool *column = (const bool *)((const char *)&kernel_rows[kernel] + facts[fact].column);

	return *column == facts[fact].want;
}

int wl_kernel_lacks(enum wl_kernel kernel, uint32_t wanted)
{
	for (int f = 0; f < WL_FACT_COUNT; f++)
		if ((wanted & (UINT32_C(1) << f)) && !wl_kernel_has_fact(kernel, (enum wl_kernel_fact)f))
			return f;
	return -1;
}
