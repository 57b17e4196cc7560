/*
 * kb_knobs.c - the KSM knobs under /sys/kernel/mm/ksm: read, save, write,
 * restore, and the saved-knobs state file.
 *
 * Every writable file in the directory is a knob, including ones this code
 * has never heard of: they are saved and restored as text. Writes happen in
 * an order the kernel accepts: run = 0 first (it waits for ksmd's current
 * batch), max_page_sharing and merge_across_nodes next (both answer EBUSY
 * while KSM pages exist, so they come before anything else can change),
 * the advisor's parameters before advisor_mode (switching the mode resets
 * pages_to_scan from them), pages_to_scan after advisor_mode (and never
 * while the advisor is on: the kernel answers EINVAL), the rest, and run
 * last. A knob already holding the wanted value is not written.
 *
 * The state file (KB_SAVED_FILE) holds the saved knobs while a run is
 * active, so a later run can restore them if both the runner and its
 * guardian died. It is plain text, one "knob NAME VALUE" per line.
 */
#include "config.h"
#include "kb_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Write order of the knobs this code knows; unknown ones rank 6, run 7. */
static const struct knob_rank {
	const char *name;
	int rank;
} knob_ranks[] = {
	{ "max_page_sharing", 1 },
	{ "merge_across_nodes", 1 },
	{ "advisor_max_cpu", 2 },
	{ "advisor_min_pages_to_scan", 2 },
	{ "advisor_max_pages_to_scan", 2 },
	{ "advisor_target_scan_time", 2 },
	{ "advisor_mode", 3 },
	{ "pages_to_scan", 4 },
	{ "sleep_millisecs", 5 },
	{ "use_zero_pages", 5 },
	{ "smart_scan", 5 },
	{ "stable_node_chains_prune_millisecs", 5 },
};

#define RANK_UNKNOWN 6
#define RANK_RUN 7

static int knob_rank(const char *name)
{
	if (strcmp(name, "run") == 0)
		return RANK_RUN;
	for (size_t i = 0; i < sizeof knob_ranks / sizeof knob_ranks[0]; i++)
		if (strcmp(knob_ranks[i].name, name) == 0)
			return knob_ranks[i].rank;
	return RANK_UNKNOWN;
}

static int knob_cmp(const void *pa, const void *pb)
{
	const struct kb_knob *a = pa, *b = pb;
	int ra = knob_rank(a->name), rb = knob_rank(b->name);

	if (ra != rb)
		return ra < rb ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void knob_path(const char *name, char *path, size_t len)
{
	snprintf(path, len, KB_KSM_DIR "/%s", name);
}

bool kb_knob_exists(const char *name)
{
	char path[128];

	knob_path(name, path, sizeof path);
	return access(path, F_OK) == 0;
}

int kb_knob_store(const char *name, const char *text)
{
	char path[128];

	knob_path(name, path, sizeof path);
	return kb_write_file(path, text);
}

/* "[none] scan-time" -> "none"; anything else: up to the first newline. */
static void normalize_value(char *text)
{
	char *open = strchr(text, '['), *close;

	if (open && (close = strchr(open, ']')) != NULL) {
		size_t n = (size_t)(close - open - 1);

		memmove(text, open + 1, n);
		text[n] = '\0';
		return;
	}
	text[strcspn(text, "\n")] = '\0';
}

int kb_knob_read(const char *name, char *buf, size_t len)
{
	char path[128];

	knob_path(name, path, sizeof path);
	if (kb_read_file(path, buf, len) < 0)
		return -1;
	normalize_value(buf);
	return 0;
}

const char *kb_knobs_get(const struct kb_knob_set *set, const char *name)
{
	for (size_t i = 0; i < set->n; i++)
		if (strcmp(set->knob[i].name, name) == 0)
			return set->knob[i].value;
	return NULL;
}

static bool is_writable_file(const char *name)
{
	char path[128];
	struct stat st;

	knob_path(name, path, sizeof path);
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & S_IWUSR);
}

int kb_knobs_save(struct kb_knob_set *set, char *msg, size_t len)
{
	DIR *dir = opendir(KB_KSM_DIR);
	struct dirent *de;

	set->n = 0;
	if (!dir)
		return kb_fail(msg, len, "cannot open %s: %s", KB_KSM_DIR, strerror(errno));
	while ((de = readdir(dir)) != NULL) {
		struct kb_knob *k;

		if (de->d_name[0] == '.' || !is_writable_file(de->d_name))
			continue;
		if (set->n == KB_KNOBS_MAX || strlen(de->d_name) >= KB_KNOB_TEXT_MAX) {
			closedir(dir);
			return kb_fail(msg, len, "cannot save %s/%s: too many or too long knobs",
				       KB_KSM_DIR, de->d_name);
		}
		k = &set->knob[set->n];
		snprintf(k->name, sizeof k->name, "%s", de->d_name);
		if (kb_knob_read(k->name, k->value, sizeof k->value) < 0) {
			int err = errno;

			closedir(dir);
			return kb_fail(msg, len, "cannot read %s/%s: %s", KB_KSM_DIR, k->name,
				       strerror(err));
		}
		set->n++;
	}
	closedir(dir);
	qsort(set->knob, set->n, sizeof set->knob[0], knob_cmp);
	return 0;
}

/* Store @value in @name unless it is there already. 0 or the errno. */
static int store_if_different(const char *name, const char *value)
{
	char now[KB_KNOB_TEXT_MAX];

	if (kb_knob_read(name, now, sizeof now) == 0 && strcmp(now, value) == 0)
		return 0;
	return kb_knob_store(name, value);
}

int kb_knobs_restore(const struct kb_knob_set *set, char *msg, size_t len)
{
	const char *advisor = kb_knobs_get(set, "advisor_mode");
	const char *run = kb_knobs_get(set, "run");
	bool failed = false;
	int err;

	if (msg && len)
		msg[0] = '\0';
	if (run && (err = store_if_different("run", "0")) != 0) {
		kb_append(msg, len, "run=0: %s", kb_errno_name(err));
		failed = true;
	}
	for (size_t i = 0; i < set->n; i++) {
		const struct kb_knob *k = &set->knob[i];

		if (strcmp(k->name, "run") == 0)
			continue;
		/* The advisor owns pages_to_scan: the kernel refuses writes to it. */
		if (strcmp(k->name, "pages_to_scan") == 0 && advisor &&
		    strcmp(advisor, "scan-time") == 0)
			continue;
		err = store_if_different(k->name, k->value);
		if (err) {
			kb_append(msg, len, "%s=%s: %s", k->name, k->value, kb_errno_name(err));
			failed = true;
		}
	}
	if (run && (err = store_if_different("run", run)) != 0) {
		kb_append(msg, len, "run=%s: %s", run, kb_errno_name(err));
		failed = true;
	}
	return failed ? -1 : 0;
}

/* The workload's knobs as a set, in write order (run excluded). */
static void workload_knob_set(const struct workload *wl, struct kb_knob_set *set)
{
	set->n = 0;
	for (int k = 0; k < WL_KNOB_COUNT; k++) {
		const struct wl_knob_info *info = wl_knob_info((enum wl_knob)k);
		struct kb_knob *knob = &set->knob[set->n++];

		snprintf(knob->name, sizeof knob->name, "%s", info->name);
		wl_knob_format((enum wl_knob)k, wl->knobs[k], knob->value, sizeof knob->value);
	}
	qsort(set->knob, set->n, sizeof set->knob[0], knob_cmp);
}

int kb_knobs_apply_workload(const struct workload *wl, char *msg, size_t len)
{
	bool advisor_on = wl->knobs[WL_KNOB_ADVISOR_MODE] == WL_ADVISOR_SCAN_TIME;
	struct kb_knob_set set;
	int err;

	if ((err = store_if_different("run", "0")) != 0)
		return kb_fail(msg, len, "cannot stop ksmd (run = 0): %s", kb_errno_name(err));
	workload_knob_set(wl, &set);
	for (size_t i = 0; i < set.n; i++) {
		const struct kb_knob *k = &set.knob[i];
		int index = wl_knob_lookup(k->name);

		if (strcmp(k->name, "pages_to_scan") == 0 && advisor_on)
			continue;
		if (!kb_knob_exists(k->name)) {
			if (index >= 0 && wl->knob_given[index])
				return kb_fail(msg, len, "%s: [global] %s: this kernel has no such knob",
					       wl->path, k->name);
			continue; /* the default of a knob this kernel lacks */
		}
		err = store_if_different(k->name, k->value);
		if (err == EBUSY)
			return kb_fail(msg, len,
				       "%s: [global] %s = %s: the kernel answered EBUSY (KSM pages "
				       "exist, so someone else's pages are merged)",
				       wl->path, k->name, k->value);
		if (err)
			return kb_fail(msg, len, "%s: [global] %s = %s: the kernel answered %s",
				       wl->path, k->name, k->value, kb_errno_name(err));
	}
	return 0;
}

int kb_knobs_write_file(const struct kb_knob_set *set, const char *path, char *msg, size_t len)
{
	char tmp[256];
	FILE *f;
	int ok;

	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return kb_fail(msg, len, "cannot write %s: %s", tmp, strerror(errno));
	fprintf(f, "# ksmkit saved-knobs 1\n"
		   "# The KSM knobs as they were before a ksmkit run; a later run restores\n"
		   "# them if this one died without doing so.\n"
		   "saver %d\n",
		(int)getpid());
	for (size_t i = 0; i < set->n; i++)
		fprintf(f, "knob %s %s\n", set->knob[i].name, set->knob[i].value);
	ok = fflush(f) == 0 && !ferror(f);
	ok = (fclose(f) == 0) && ok;
	if (!ok || rename(tmp, path) != 0) {
		int err = errno;

		unlink(tmp);
		return kb_fail(msg, len, "cannot write %s: %s", path, strerror(err));
	}
	return 0;
}

int kb_knobs_read_file(struct kb_knob_set *set, const char *path, pid_t *saver, char *msg,
		       size_t len)
{
	char line[256];
	unsigned lineno = 0;
	FILE *f = fopen(path, "re");

	set->n = 0;
	*saver = 0;
	if (!f) {
		int err = errno;

		kb_fail(msg, len, "cannot read %s: %s", path, strerror(err));
		errno = err;
		return -1;
	}
	while (fgets(line, sizeof line, f)) {
		char name[KB_KNOB_TEXT_MAX], value[KB_KNOB_TEXT_MAX];
		int pid;

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (sscanf(line, "saver %d", &pid) == 1) {
			*saver = (pid_t)pid;
			continue;
		}
		if (sscanf(line, "knob %47s %47s", name, value) == 2 && set->n < KB_KNOBS_MAX) {
			snprintf(set->knob[set->n].name, KB_KNOB_TEXT_MAX, "%s", name);
			snprintf(set->knob[set->n].value, KB_KNOB_TEXT_MAX, "%s", value);
			set->n++;
			continue;
		}
		fclose(f);
		errno = EINVAL;
		return kb_fail(msg, len, "%s:%u: not a saved knob: '%s'", path, lineno, line);
	}
	fclose(f);
	if (set->n == 0) {
		errno = EINVAL;
		return kb_fail(msg, len, "%s: no knob in it", path);
	}
	qsort(set->knob, set->n, sizeof set->knob[0], knob_cmp);
	return 0;
}
