/*
 * kb_result.c - what a run hands back: freeing it, the measurement names,
 * and the CSV form of the soft-dirty captures (the trace and the page
 * partition have theirs in trace/).
 */
#include "config.h"
#include "kb_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const measure_names[] = {
	[KB_MEASURE_NONE] = "none",   [KB_MEASURE_MERGE] = "merge", [KB_MEASURE_COW] = "cow",
	[KB_MEASURE_UNMERGE] = "unmerge", [KB_MEASURE_THP] = "thp",
};

const char *kb_measure_name(enum kb_measure measure)
{
	if ((unsigned)measure >= sizeof measure_names / sizeof measure_names[0])
		return NULL;
	return measure_names[measure];
}

int kb_measure_lookup(const char *name)
{
	for (size_t i = 0; i < sizeof measure_names / sizeof measure_names[0]; i++)
		if (strcmp(measure_names[i], name) == 0)
			return (int)i;
	return -1;
}

void kb_result_free(struct kb_result *res)
{
	trace_free(res->trace);
	free(res->pages);
	free(res->dirty);
	memset(res, 0, sizeof *res);
}

static int finish(FILE *out)
{
	if (fflush(out) != 0 || ferror(out))
		return -1;
	return 0;
}

int kb_write_dirty_csv(const struct kb_result *res, const struct workload *wl, FILE *out)
{
	fprintf(out, "# ksmkit-soft-dirty 1\nscan,process,region,page\n");
	for (size_t i = 0; i < res->ndirty; i++) {
		const struct kb_dirty_page *d = &res->dirty[i];

		fprintf(out, "%" PRIu64 ",%s,%s,%" PRIu64 "\n", d->scan, wl->procs[d->proc].name,
			wl->regions[d->region].name, d->page);
	}
	return finish(out);
}
