/*
 * cli_live.c - the parts of `ksmkit run --cmd` and `ksmkit vms` that are
 * the same (cli_live.h): knobs from the command line, checked as a
 * workload's [global] knobs are; the capture that follows a live run's
 * commands full scan by full scan, in a thread of the backend's runner; the
 * progress line; the sentence that says how a run ended.
 */
#include "config.h"
#include "cli.h"
#include "cli_live.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FOLLOW_POLL_NS 20000000ull /* as capture --every full-scan */
#define PROGRESS_AFTER_NS (2 * UINT64_C(1000000000))

/* ---- knobs --------------------------------------------------------------------- */

int cli_live_knob(const char *cmd, const char *option, const char *name, const char *text,
		  struct kb_live *live)
{
	int k = wl_knob_lookup(name);
	char why[200];
	uint64_t value;

	if (k < 0) {
		cli_error("%s: %s: no KSM knob called '%s' (pages_to_scan, sleep_millisecs, "
			  "max_page_sharing, use_zero_pages, smart_scan, ...)", cmd, option, name);
		return CLI_USAGE;
	}
	if (live->knob_given[k]) {
		cli_error("%s: %s: %s is given twice", cmd, option, name);
		return CLI_USAGE;
	}
	if (wl_knob_parse((enum wl_knob)k, text, &value, why, sizeof why) != 0) {
		cli_error("%s: %s: %s = %s: %s", cmd, option, name, text, why);
		return CLI_USAGE;
	}
	live->knobs[k] = value;
	live->knob_given[k] = true;
	return 0;
}

int cli_live_knobs(const char *cmd, const char *list, struct kb_live *live)
{
	char *copy = strdup(list), *save = NULL;
	int rc = 0;

	if (!copy)
		return CLI_FAILED;
	for (char *t = strtok_r(copy, ",", &save); t && rc == 0; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');

		if (!eq || eq == t || !eq[1]) {
			cli_error("%s: --knob: '%s' is not NAME=VALUE (like pages_to_scan=1000)", cmd,
				  t);
			rc = CLI_USAGE;
			break;
		}
		*eq = '\0';
		rc = cli_live_knob(cmd, "--knob", t, eq + 1, live);
	}
	free(copy);
	return rc;
}

int cli_live_check_knobs(const char *cmd, const struct kb_live *live, bool awaits_scans)
{
	enum wl_knob knob;
	char why[300];

	if (wl_knobs_check(WL_KERNEL_DEFAULT, live->knobs, live->knob_given, awaits_scans, &knob,
			   why, sizeof why) == WL_KNOBS_OK)
		return 0;
	cli_error("%s: %s", cmd, why);
	return CLI_USAGE;
}

/* ---- the program ----------------------------------------------------------------- */

/* Whether @path is a file this process may execute. */
static bool executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int cli_live_resolve(const char *cmd, const char *option, const char *name, char *path,
		     size_t len)
{
	const char *dirs = getenv("PATH");

	if (!name[0]) {
		cli_error("%s: %s: the command is an empty string", cmd, option);
		return CLI_USAGE;
	}
	if (strchr(name, '/')) {
		snprintf(path, len, "%s", name);
		if (executable(path))
			return 0;
		cli_error("%s: %s: cannot run %s: %s", cmd, option, name,
			  access(name, F_OK) != 0 ? strerror(errno) : "not an executable file");
		return CLI_USAGE;
	}
	for (const char *d = dirs ? dirs : "/usr/bin:/bin"; *d;) {
		size_t n = strcspn(d, ":");

		snprintf(path, len, "%.*s/%s", (int)(n ? n : 1), n ? d : ".", name);
		if (executable(path))
			return 0;
		d += n + (d[n] == ':');
	}
	cli_error("%s: %s: cannot run %s: not found in PATH", cmd, option, name);
	return CLI_USAGE;
}

/* ---- following the commands with a capture ----------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A stream that ended is said by the run's own end; nothing to add here. */
static void quiet_note(void *ctx, const char *text)
{
	(void)ctx;
	(void)text;
}

static int follow_snapshot(struct cli_follow *f, struct cap_error *err)
{
	struct cap_snapshot *snap;
	uint64_t taken = now_ns() - f->start_ns, full_scans = cap_read_full_scans();

	if (cap_proc_snapshot(f->proc, false, NULL, quiet_note, NULL, &snap, err) != 0)
		return -1;
	snap->index = f->index++;
	snap->time_ns = taken;
	snap->full_scans = full_scans;
	f->last_full_scans = full_scans;
	return cap_writer_snapshot(f->writer, snap, err);
}

static void *follow_thread(void *arg)
{
	struct cli_follow *f = arg;
	struct cap_error err;

	while (!atomic_load(&f->stop) && cap_proc_any_live(f->proc)) {
		uint64_t fs = cap_read_full_scans();
		struct timespec t = { 0, (long)FOLLOW_POLL_NS };

		if (fs != CAP_NO_FULL_SCANS && fs != f->last_full_scans &&
		    follow_snapshot(f, &err) != 0) {
			snprintf(f->error, sizeof f->error, "--capture: %.500s", err.text);
			break;
		}
		nanosleep(&t, NULL);
	}
	return NULL;
}

static int follow_started(const pid_t *pids, size_t n, void *arg, char *msg, size_t len)
{
	struct cli_follow *f = arg;
	struct cap_error err;
	int why;

	/* what the running KSM sees: the VMAs it may merge (a guest's RAM, not qemu's heap) */
	if (cap_proc_open_flags(pids, n, CAP_PROC_MERGEABLE_ONLY, &f->proc, &why, &err) != 0 ||
	    cap_writer_open(f->path, cap_proc_streams(f->proc), cap_proc_initial(f->proc),
			    cap_proc_count(f->proc), false, &f->writer, &err) != 0) {
		snprintf(msg, len, "--capture %s: %.400s", f->path, err.text);
		return -1;
	}
	f->start_ns = now_ns();
	if (follow_snapshot(f, &err) != 0) {
		snprintf(msg, len, "--capture %s: %.400s", f->path, err.text);
		return -1;
	}
	if (pthread_create(&f->thread, NULL, follow_thread, f) != 0) {
		snprintf(msg, len, "--capture: cannot start its thread: %s", strerror(errno));
		return -1;
	}
	f->thread_started = true;
	return 0;
}

static int follow_stopping(void *arg, char *msg, size_t len)
{
	struct cli_follow *f = arg;
	struct cap_error err;
	int rc = 0;

	atomic_store(&f->stop, true);
	if (f->thread_started)
		pthread_join(f->thread, NULL);
	f->thread_started = false;
	if (f->error[0]) {
		snprintf(msg, len, "%.500s", f->error);
		rc = -1;
	}
	if (f->writer && cap_writer_close(f->writer, &err) != 0 && rc == 0) {
		snprintf(msg, len, "--capture %s: %.400s", f->path, err.text);
		rc = -1;
	}
	f->writer = NULL;
	cap_proc_close(f->proc);
	f->proc = NULL;
	return rc;
}

void cli_follow_init(struct cli_follow *f, const char *path, struct kb_live_hooks *hooks)
{
	memset(f, 0, sizeof *f);
	f->path = path;
	atomic_init(&f->stop, false);
	hooks->started = follow_started;
	hooks->stopping = follow_stopping;
	hooks->arg = f;
}

long long cli_follow_count(const char *cmd, const char *path)
{
	struct cap_reader *rd;
	struct cap_error err;
	long long n;

	if (cap_reader_open(path, 0, &rd, &err) != 0) {
		cli_error("%s: --capture: %s", cmd, err.text);
		return -1;
	}
	n = (long long)cap_reader_info(rd)->nsnapshots;
	cap_reader_close(rd);
	return n;
}

/* ---- what people see ------------------------------------------------------------------ */

void cli_live_progress(const struct kb_progress *p, void *arg)
{
	const char *what = arg;

	if (p->elapsed_ns < PROGRESS_AFTER_NS)
		return;
	fprintf(stderr, "\rksmkit: %s: scan %" PRIu64, what, p->scans_done);
	if (p->scans_wanted)
		fprintf(stderr, "/%" PRIu64, p->scans_wanted);
	fprintf(stderr, ", pages_sharing %" PRId64 ", %.1f", p->pages_sharing,
		(double)p->elapsed_ns / 1e9);
	if (p->time_wanted_ns)
		fprintf(stderr, " of %.0f", (double)p->time_wanted_ns / 1e9);
	fprintf(stderr, " s \033[K");
	fflush(stderr);
}

void cli_live_note(const char *note, void *arg)
{
	cli_error("%s: %s", (const char *)arg, note);
}

const char *cli_live_end_text(const struct kb_live *live, const struct kb_live_result *res,
			      char *buf, size_t len)
{
	int st = res->exit_status;
	const char *name;

	switch (res->end) {
	case KB_LIVE_END_SCANS:
		snprintf(buf, len, "%" PRIu64 " full scans done", live->scans);
		break;
	case KB_LIVE_END_DURATION:
		snprintf(buf, len, "%.0f s passed", (double)live->duration_ns / 1e9);
		break;
	case KB_LIVE_END_EXITED:
		name = res->exit_index >= 0 && (size_t)res->exit_index < live->ncmds ?
			       live->cmds[res->exit_index].argv[0] : "a command";
		if (WIFSIGNALED(st))
			snprintf(buf, len, "%s was killed by signal %d", name, WTERMSIG(st));
		else
			snprintf(buf, len, "%s exited with status %d", name, WEXITSTATUS(st));
		break;
	default:
		snprintf(buf, len, "the run did not start measuring");
		break;
	}
	return buf;
}
