/*
 * cap_summary.c - what one snapshot says about KSM's reach: its pages,
 * present, zero and THP-mapped pages, and the distinct non-zero tokens over
 * all its streams (KSM merges across processes), whose difference from the
 * present non-zero pages bounds what merging duplicates can free. It does
 * not model KSM (no volatility, no max_page_sharing, no scan rate): that
 * is the estimator's, later.
 */
#include "cap_internal.h"

#include <string.h>

int cap_summarize(const struct cap_snapshot *snap, struct cap_summary *out, struct cap_error *err)
{
	struct cap_tokenset seen;
	size_t expect = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < snap->nstreams; i++)
		expect += snap->streams[i].npages;
	if (cap_tokenset_init(&seen, expect) != 0)
		return cap_fail(err, "out of memory for %zu tokens", expect);
	for (size_t i = 0; i < snap->nstreams; i++) {
		const struct cap_stream_state *s = &snap->streams[i];

		if (s->status == CAP_STREAM_LIVE)
			out->live_streams++;
		out->pages += s->npages;
		out->changed += s->pages_changed;
		for (size_t p = 0; p < s->npages; p++) {
			bool added;

			if (!(s->flags[p] & CAP_PRESENT))
				continue;
			out->present++;
			if (s->flags[p] & CAP_THP)
				out->thp++;
			if (s->token[p] == CAP_TOKEN_ZERO) {
				out->zero++;
				continue;
			}
			if (!cap_tokenset_add(&seen, s->token[p], &added)) {
				cap_tokenset_free(&seen);
				return cap_fail(err, "out of memory for %zu tokens", expect);
			}
			out->distinct += added;
		}
	}
	out->duplicates = out->present - out->zero - out->distinct;
	cap_tokenset_free(&seen);
	return 0;
}
