/*
 * est_knobs.c - the KSM knobs an estimate runs at: the kernel's defaults,
 * the machine's current values (read from sysfs, never written), and one
 * knob set from NAME=VALUE as the kernel would parse it (workload.h's knob
 * table is the one list of knobs, names, ranges and defaults).
 */
#include "estimate.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define KSM_DIR "/sys/kernel/mm/ksm"

void est_knobs_default(struct est_knobs *k)
{
	for (int i = 0; i < WL_KNOB_COUNT; i++)
		k->value[i] = wl_knob_info((enum wl_knob)i)->def;
}

/* The file's first line, a bracketed choice ("[none] scan-time") reduced to it. */
static int read_knob_text(const char *dir, const char *name, char *text, size_t len)
{
	char path[256], *lb, *rb;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, text, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	text[strcspn(text, "\n")] = '\0';
	lb = strchr(text, '[');
	if (lb && (rb = strchr(lb, ']'))) {
		*rb = '\0';
		memmove(text, lb + 1, (size_t)(rb - lb));
	}
	return 0;
}

int est_knobs_current(struct est_knobs *k, const char *dir)
{
	int read = 0;

	est_knobs_default(k);
	for (int i = 0; i < WL_KNOB_COUNT; i++) {
		char text[128], why[128];
		uint64_t v;

		if (read_knob_text(dir ? dir : KSM_DIR, wl_knob_info((enum wl_knob)i)->name, text,
				   sizeof(text)) != 0)
			continue;
		if (wl_knob_parse((enum wl_knob)i, text, &v, why, sizeof(why)) != 0)
			continue;
		k->value[i] = v;
		read++;
	}
	return read;
}

int est_knobs_assign(struct est_knobs *k, const char *assignment, char *err, size_t errlen)
{
	const char *eq = strchr(assignment, '=');
	char name[64], why[160];
	uint64_t v;
	int knob;

	if (!eq || eq == assignment || (size_t)(eq - assignment) >= sizeof(name)) {
		snprintf(err, errlen, "'%s': expected NAME=VALUE, a KSM knob and its value",
			 assignment);
		return -1;
	}
	memcpy(name, assignment, (size_t)(eq - assignment));
	name[eq - assignment] = '\0';
	knob = wl_knob_lookup(name);
	if (knob < 0) {
		snprintf(err, errlen, "'%s': no KSM knob is called %s (run is not a knob here)",
			 assignment, name);
		return -1;
	}
	if (wl_knob_parse((enum wl_knob)knob, eq + 1, &v, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "'%s': %s", assignment, why);
		return -1;
	}
	k->value[knob] = v;
	return 0;
}
