/*
 * est_sweep.c - estimates over a grid of knob values: an axis is one knob
 * and its values ("pages_to_scan=100,1000,10000"), the grid is the product
 * of the axes (the last varying fastest), and the recommendation for a CPU
 * budget is the point that saves the most at a steady ksmd CPU within it.
 * Running the points is the caller's (est_run for each).
 */
#include "estimate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int est_axis_parse(const char *spec, struct est_axis *axis, char *err, size_t errlen)
{
	const char *eq = strchr(spec, '='), *v;
	char name[64];
	int knob;

	if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof(name) || !eq[1]) {
		snprintf(err, errlen, "'%s': expected KNOB=V1,V2,... (e.g. pages_to_scan=100,1000)",
			 spec);
		return -1;
	}
	memcpy(name, spec, (size_t)(eq - spec));
	name[eq - spec] = '\0';
	knob = wl_knob_lookup(name);
	if (knob < 0) {
		snprintf(err, errlen, "'%s': no KSM knob is called %s", spec, name);
		return -1;
	}
	axis->knob = (enum wl_knob)knob;
	axis->n = 0;
	for (v = eq + 1; *v;) {
		size_t len = strcspn(v, ",");
		char text[64], why[160];

		if (len == 0 || len >= sizeof(text)) {
			snprintf(err, errlen, "'%s': an empty or overlong value", spec);
			return -1;
		}
		if (axis->n == EST_MAX_VALUES) {
			snprintf(err, errlen, "'%s': at most %d values", spec, EST_MAX_VALUES);
			return -1;
		}
		memcpy(text, v, len);
		text[len] = '\0';
		if (wl_knob_parse(axis->knob, text, &axis->value[axis->n], why, sizeof(why)) != 0) {
			snprintf(err, errlen, "'%s': %s: %s", spec, text, why);
			return -1;
		}
		for (size_t i = 0; i < axis->n; i++)
			if (axis->value[i] == axis->value[axis->n]) {
				snprintf(err, errlen, "'%s': %s is given twice", spec, text);
				return -1;
			}
		axis->n++;
		v += len;
		if (*v == ',' && !*++v) {
			snprintf(err, errlen, "'%s': a value is missing after the last ','", spec);
			return -1;
		}
	}
	return 0;
}

size_t est_grid_size(const struct est_axis *axes, size_t naxes)
{
	size_t n = 1;

	for (size_t i = 0; i < naxes; i++) {
		if (axes[i].n && n > EST_MAX_POINTS / axes[i].n)
			return EST_MAX_POINTS + 1;
		n *= axes[i].n;
	}
	return n;
}

void est_grid_point(const struct est_axis *axes, size_t naxes, size_t index,
		    const struct est_knobs *base, struct est_knobs *out)
{
	*out = *base;
	for (size_t i = naxes; i-- > 0;) {
		out->value[axes[i].knob] = axes[i].value[index % axes[i].n];
		index /= axes[i].n;
	}
}

/* Is @a a better recommendation than @b? */
static bool better(const struct est_result *a, const struct est_result *b)
{
	int64_t sa = est_saved(&a->last), sb = est_saved(&b->last);

	if (sa != sb)
		return sa > sb;
	if (a->t90_ns != b->t90_ns)
		return b->t90_ns < 0 || (a->t90_ns >= 0 && a->t90_ns < b->t90_ns);
	return a->cpu_steady < b->cpu_steady;
}

long est_recommend(const struct est_result *points, size_t n, double max_cpu)
{
	long best = -1;

	for (size_t i = 0; i < n; i++) {
		if (points[i].cpu_steady > max_cpu)
			continue;
		if (best < 0 || better(&points[i], &points[best]))
			best = (long)i;
	}
	return best;
}
