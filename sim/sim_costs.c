/*
 * sim_costs.c - the cost model's file: what `ksmkit calibrate` writes and
 * the simulator reads, and the cost model's terms as data (SIM_COST_TERMS,
 * sim.h). An INI file with one [costs] section, one key per field of struct
 * sim_costs, values in ns (hz in Hz); keys left out keep their defaults,
 * unknown keys are errors ("FILE:LINE: ...").
 */
#include "sim.h"

#include <errno.h>
#include <ini.h>
#include <stdlib.h>
#include <string.h>

/* The terms (SIM_COST_TERMS), with where each keeps its cost and its work. */
static const struct {
	struct sim_cost_term_info info;
	size_t cost_offset, work_offset;
} term[SIM_TERM_COUNT] = {
#define SIM_COST_TERM_ROW_(name, cost, work, how, doc)                                      \
	[SIM_TERM_##name] = { { #name, #cost, how, doc }, offsetof(struct sim_costs, cost),   \
			      offsetof(struct sim_work, work) },
	SIM_COST_TERMS(SIM_COST_TERM_ROW_)
#undef SIM_COST_TERM_ROW_
};

const struct sim_cost_term_info *sim_cost_term_info(enum sim_cost_term t)
{
	return &term[t].info;
}

double sim_cost_of(const struct sim_costs *c, enum sim_cost_term t)
{
	return *(const double *)((const char *)c + term[t].cost_offset);
}

void sim_cost_set(struct sim_costs *c, enum sim_cost_term t, double ns)
{
	*(double *)((char *)c + term[t].cost_offset) = ns;
}

uint64_t sim_work_of(const struct sim_work *w, enum sim_cost_term t)
{
	return *(const uint64_t *)((const char *)w + term[t].work_offset);
}

#define SLEEP_ADJUST_KEY "sleep_adjust_ns"
#define REFILL_TAU_KEY "refill_tau_ms"

struct loader {
	struct sim_costs *costs;
	const char *path;
	int line;       /* current line, counted by the reader */
	FILE *f;
	char *err;
	size_t errlen;
	bool failed;
};

static char *read_line(char *str, int num, void *stream)
{
	struct loader *l = stream;
	char *r = fgets(str, num, l->f);

	if (r)
		l->line++;
	return r;
}

static int set_field(struct loader *l, const char *name, const char *value)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(value, &end);
	if (errno || end == value || *end || (v < 0 && strcmp(name, SLEEP_ADJUST_KEY) != 0)) {
		snprintf(l->err, l->errlen, "%s:%d: %s = %s: expected a number of ns >= 0", l->path,
			 l->line, name, value);
		return -1;
	}
	if (strcmp(name, "hz") == 0) {
		if (v < 1) {
			snprintf(l->err, l->errlen, "%s:%d: hz must be at least 1", l->path, l->line);
			return -1;
		}
		l->costs->hz = (uint64_t)v;
		return 0;
	}
	if (strcmp(name, SLEEP_ADJUST_KEY) == 0) {
		l->costs->sleep_adjust_ns = v;
		return 0;
	}
	if (strcmp(name, REFILL_TAU_KEY) == 0) {
		if (!(v > 0)) {
			snprintf(l->err, l->errlen, "%s:%d: %s must be above 0 (ms)", l->path,
				 l->line, REFILL_TAU_KEY);
			return -1;
		}
		l->costs->refill_tau_ms = v;
		return 0;
	}
	for (int t = 0; t < SIM_TERM_COUNT; t++)
		if (strcmp(term[t].info.cost_key, name) == 0) {
			sim_cost_set(l->costs, t, v);
			return 0;
		}
	snprintf(l->err, l->errlen, "%s:%d: unknown cost '%s'", l->path, l->line, name);
	return -1;
}

static int handle(void *user, const char *section, const char *name, const char *value)
{
	struct loader *l = user;

	if (l->failed)
		return 1;
	if (strcmp(section, "costs") != 0) {
		snprintf(l->err, l->errlen, "%s:%d: '%s' outside [costs]", l->path, l->line, name);
		l->failed = true;
		return 1;
	}
	if (set_field(l, name, value) != 0)
		l->failed = true;
	return 1;
}

int sim_costs_load(const char *path, struct sim_costs *costs, char *err, size_t errlen)
{
	struct loader l = { costs, path, 0, NULL, err, errlen, false };
	int rc;

	l.f = fopen(path, "r");
	if (!l.f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	rc = ini_parse_stream(read_line, &l, handle, &l);
	fclose(l.f);
	if (rc > 0 && !l.failed) {
		snprintf(err, errlen, "%s:%d: expected 'key = value' or '[costs]'", path, rc);
		return -1;
	}
	return l.failed ? -1 : 0;
}

int sim_costs_write(const struct sim_costs *costs, const char *comment, FILE *out)
{
	fprintf(out, "# ksmkit cost model (sim_costs): ns per unit of ksmd work\n");
	if (comment)
		fprintf(out, "# %s\n", comment);
	fprintf(out, "[costs]\nhz = %llu\n", (unsigned long long)costs->hz);
	for (int t = 0; t < SIM_TERM_COUNT; t++)
		fprintf(out, "%-15s = %.4f   ; %s\n", term[t].info.cost_key, sim_cost_of(costs, t),
			term[t].info.doc);
	fprintf(out, "%-15s = %.4f   ; %s\n", SLEEP_ADJUST_KEY, costs->sleep_adjust_ns,
		"a sleep lasts its jiffies plus this");
	fprintf(out, "%-15s = %.4f   ; %s\n", REFILL_TAU_KEY, costs->refill_tau_ms,
		"refill's time constant, ms (not ns)");
	return ferror(out) ? -1 : 0;
}
