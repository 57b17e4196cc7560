/*
 * kb_restore.c - putting back the knobs a run saved: the one recovery that
 * kb_run() (before it starts, for a run that died), the sentinel (for its
 * dead guardian) and `ksmkit restore` (for a run killed whole) all use.
 *
 * The state file (KB_SAVED_FILE) is the truth at every moment: it exists
 * from the moment a run saved the knobs until they are restored, and
 * always holds the values to go back to. Recovering settles the kernel
 * (kb_settle), writes back every knob that differs, notes which ones did,
 * and only then removes the file, so a recovery that is itself killed is
 * done again by the next one. The caller holds the backend's lock.
 *
 * Rescues by a sentinel are logged, one line each, in KB_RESCUE_LOG (kept
 * under 64 KiB by starting it over), because nobody is there to read a
 * message when they happen.
 */
#include "config.h"
#include "kb_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RESCUE_LOG_MAX (64 * 1024)
#define LOCK_POLL_NS (50 * UINT64_C(1000000))

/* The knobs of @set that differ now from what @set holds. */
static void note_differences(const struct kb_knob_set *set, struct kb_restore_report *rep)
{
	rep->nchanges = 0;
	for (size_t i = 0; i < set->n; i++) {
		struct kb_knob_change *c = &rep->change[rep->nchanges];
		char now[KB_KNOB_TEXT_MAX];

		if (kb_knob_read(set->knob[i].name, now, sizeof now) != 0 ||
		    strcmp(now, set->knob[i].value) == 0)
			continue;
		snprintf(c->name, sizeof c->name, "%s", set->knob[i].name);
		snprintf(c->was, sizeof c->was, "%s", now);
		snprintf(c->now, sizeof c->now, "%s", set->knob[i].value);
		rep->nchanges++;
	}
}

int kb_recover_saved(struct kb_restore_report *rep, char *msg, size_t len)
{
	struct kb_knob_set saved;
	char settle[256] = "", failed[512] = "";

	memset(rep, 0, sizeof *rep);
	if (kb_knobs_read_file(&saved, KB_SAVED_FILE, &rep->saver, msg, len) != 0) {
		if (errno == ENOENT) {
			if (msg && len)
				msg[0] = '\0';
			return 0;
		}
		kb_append(msg, len, "check " KB_KSM_DIR " and remove the file");
		return -1;
	}
	rep->had_saved = true;
	/* What the run left, before settling changes more (and restore undoes it). */
	note_differences(&saved, rep);
	if (kb_settle(settle, sizeof settle) != 0)
		kb_fail(msg, len, "cleaning up after the run: %s", settle);
	if (kb_knobs_restore(&saved, failed, sizeof failed) != 0) {
		kb_fail(msg, len, "restoring the KSM knobs failed for %s", failed);
		return -1;
	}
	unlink(KB_SAVED_FILE);
	return 0;
}

void kb_changes_text(const struct kb_restore_report *rep, char *buf, size_t len)
{
	size_t used = 0;

	if (!len)
		return;
	buf[0] = '\0';
	if (rep->nchanges == 0) {
		snprintf(buf, len, "no knob needed it");
		return;
	}
	for (size_t i = 0; i < rep->nchanges && used + 1 < len; i++) {
		const struct kb_knob_change *c = &rep->change[i];
		int n = snprintf(buf + used, len - used, "%s%s %s -> %s", i ? ", " : "", c->name,
				 c->was, c->now);

		if (n < 0)
			return;
		used += (size_t)n;
	}
}

void kb_log_rescue(const char *text)
{
	char stamp[32];
	struct stat st;
	struct tm tm;
	time_t now = time(NULL);
	FILE *f;

	if (stat(KB_RESCUE_LOG, &st) == 0 && st.st_size > RESCUE_LOG_MAX)
		unlink(KB_RESCUE_LOG);
	f = fopen(KB_RESCUE_LOG, "ae");
	if (!f)
		return; /* nothing else can be done about it here */
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(f, "%s %s\n", stamp, text);
	fclose(f);
}

/* The last line of the rescue log into @buf ("" when there is none). */
static void last_rescue(char *buf, size_t len)
{
	char line[2048];
	FILE *f = fopen(KB_RESCUE_LOG, "re");

	buf[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0])
			snprintf(buf, len, "%.*s", (int)(len - 1), line);
	}
	fclose(f);
}

/* The lock, waiting up to @wait_ns; the holder's text in @holder if busy. */
static int take_lock(uint64_t wait_ns, int *fd_out, char *holder, size_t hlen)
{
	uint64_t deadline = kb_now_ns() + wait_ns;
	int fd;

	*fd_out = -1;
	if (mkdir(KB_STATE_DIR, 0755) != 0 && errno != EEXIST)
		return -1;
	fd = open(KB_LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno != EWOULDBLOCK || kb_now_ns() >= deadline) {
			ssize_t n = pread(fd, holder, hlen - 1, 0);

			holder[n > 0 ? n : 0] = '\0';
			for (char *p = holder; *p; p++)
				if (*p == '\n')
					*p = p[1] ? ',' : '\0';
			close(fd);
			errno = EWOULDBLOCK;
			return -1;
		}
		kb_sleep_ns(LOCK_POLL_NS);
	}
	*fd_out = fd;
	return 0;
}

int kb_restore(uint64_t wait_ns, struct kb_restore_report *rep, char *msg, size_t msglen)
{
	char holder[128] = "";
	int fd, rc;

	memset(rep, 0, sizeof *rep);
	if (msg && msglen)
		msg[0] = '\0';
	if (access(KB_KSM_DIR "/run", F_OK) != 0) {
		kb_fail(msg, msglen, "this kernel has no KSM (%s is missing)", KB_KSM_DIR);
		return KB_SKIPPED;
	}
	if (geteuid() != 0) {
		if (access(KB_SAVED_FILE, F_OK) != 0) {
			last_rescue(rep->last_rescue, sizeof rep->last_rescue);
			return KB_OK; /* nothing to restore, and nothing a user could */
		}
		kb_fail(msg, msglen, "%s holds knobs to restore: that needs root", KB_SAVED_FILE);
		return KB_FAILED;
	}
	if (take_lock(wait_ns, &fd, holder, sizeof holder) != 0) {
		if (errno == EWOULDBLOCK)
			kb_fail(msg, msglen, "a ksmkit backend is still running (%s); it restores the "
					     "knobs itself when it ends",
				holder[0] ? holder : "pid unknown");
		else
			kb_fail(msg, msglen, "cannot lock %s: %s", KB_LOCK_FILE, strerror(errno));
		return KB_FAILED;
	}
	rc = kb_recover_saved(rep, msg, msglen);
	last_rescue(rep->last_rescue, sizeof rep->last_rescue);
	close(fd);
	return rc == 0 ? KB_OK : KB_FAILED;
}
