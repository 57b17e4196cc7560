/*
 * sim_costs.c - the cost model's file: what `ksmkit calibrate` writes and
 * the simulator reads. An INI file with one [costs] section, one key per
 * field of struct sim_costs (sim.h), values in ns (hz in Hz); keys left out
 * keep their defaults, unknown keys are errors ("FILE:LINE: ...").
 */
#include "sim.h"

#include <errno.h>
#include <ini.h>
#include <stdlib.h>
#include <string.h>

/* The fields, by name, as offsets into struct sim_costs (hz aside). */
static const struct {
	const char *name;
	size_t offset;
	const char *doc;
} cost_field[] = {
	{ "visit_ns", offsetof(struct sim_costs, visit_ns), "find the next page (VMA, PTE, rmap_item)" },
	{ "visit_pmd_ns", offsetof(struct sim_costs, visit_pmd_ns),
	  "the same, a subpage of a PMD-mapped THP" },
	{ "checksum_ns", offsetof(struct sim_costs, checksum_ns), "xxh64 of one 4 KiB page" },
	{ "sample_word_ns", offsetof(struct sim_costs, sample_word_ns),
	  "one word of a sampled checksum" },
	{ "memcmp_byte_ns", offsetof(struct sim_costs, memcmp_byte_ns), "memcmp, per byte" },
	{ "tree_level_ns", offsetof(struct sim_costs, tree_level_ns), "one tree node, beside memcmp" },
	{ "dirty_test_ns", offsetof(struct sim_costs, dirty_test_ns), "test a PTE dirty bit" },
	{ "tlb_flush_ns", offsetof(struct sim_costs, tlb_flush_ns), "clear a PTE dirty bit + flush" },
	{ "thp_flush_ns", offsetof(struct sim_costs, thp_flush_ns), "clear a PMD dirty bit + flush" },
	{ "merge_ns", offsetof(struct sim_costs, merge_ns), "write-protect + replace one PTE" },
	{ "thp_split_ns", offsetof(struct sim_costs, thp_split_ns), "split one THP" },
	{ "skip_ns", offsetof(struct sim_costs, skip_ns), "one smart-scan skip" },
	{ "batch_ns", offsetof(struct sim_costs, batch_ns), "a batch's fixed cost" },
	{ "sleep_adjust_ns", offsetof(struct sim_costs, sleep_adjust_ns),
	  "a sleep: its jiffies plus this" },
};

#define NFIELDS (sizeof(cost_field) / sizeof(cost_field[0]))

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
	if (errno || end == value || *end || (v < 0 && strcmp(name, "sleep_adjust_ns") != 0)) {
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
	for (size_t i = 0; i < NFIELDS; i++)
		if (strcmp(cost_field[i].name, name) == 0) {
			*(double *)((char *)l->costs + cost_field[i].offset) = v;
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
	for (size_t i = 0; i < NFIELDS; i++)
		fprintf(out, "%-15s = %.4f   ; %s\n", cost_field[i].name,
			*(const double *)((const char *)costs + cost_field[i].offset),
			cost_field[i].doc);
	return ferror(out) ? -1 : 0;
}
