/*
 * restore-soak.c - SIGKILL soak of the backend's promise that nothing a run
 * does can leave the machine's KSM changed.
 *
 * Round after round it starts `ksmkit run` on a workload whose knobs are
 * all far from the machine's, waits a random moment (during setup, while
 * ksmd merges, between scans), and SIGKILLs one thing chosen at random: the
 * guardian (the ksmkit process), the guardian's process group, the
 * sentinel, the runner, the runner's process group, one workload process,
 * or every process of the run at once (then `ksmkit restore` must put the
 * knobs back, as nothing of the run is left to do it). It then watches, for
 * up to 5 s from the kill, until every writable knob is back to what it was
 * before the soak, no page is merged, no process of the run is alive (each
 * carries a marker in its environment), the state file is gone and the lock
 * is free. It prints `N/N restored, P pages left merged, Q processes left`
 * with the median and slowest time to restore, per target, and exits 0 only
 * when every round restored. Rounds stop at --rounds or --time, whichever
 * comes first.
 *
 * It holds the kernel test suites' lock (tests/suite_lock.h) so that no
 * other suite's run changes knobs meanwhile, and skips (77) when not root,
 * without KSM, or when someone else's pages are merged.
 */
#include "config.h"
#include "backend.h"
#include "suite_lock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KSM_DIR "/sys/kernel/mm/ksm/"
#define RESTORE_LIMIT_S 5.0
#define MARKER "KSMKIT_SOAK_RUN"
#define MAX_PIDS 64
/* How long to wait for someone else's run to end before reading knobs. */
#define IDLE_WAIT_NS (600 * UINT64_C(1000000000))

/* What a round kills. */
enum target {
	T_GUARDIAN,
	T_GUARDIAN_GROUP,
	T_SENTINEL,
	T_RUNNER,
	T_RUNNER_GROUP,
	T_WORKER,
	T_EVERYTHING,
	T_COUNT
};

static const char *const target_names[T_COUNT] = {
	"guardian", "guardian's group", "sentinel", "runner", "runner's group",
	"workload process", "everything",
};

/* Knobs far from any default, and two processes with merging pages. */
static const char soak_workload[] = "[global]\n"
				    "scans = 100000\n"
				    "timeout = 60s\n"
				    "pages_to_scan = 3000\n"
				    "sleep_millisecs = 5\n"
				    "max_page_sharing = 32\n"
				    "use_zero_pages = 1\n"
				    "smart_scan = 0\n"
				    "stable_node_chains_prune_millisecs = 700\n"
				    "[region a]\n"
				    "process = first\n"
				    "pages = 2000\n"
				    "fill = same\n"
				    "value = 7\n"
				    "[region b]\n"
				    "process = second\n"
				    "pages = 2000\n"
				    "fill = same\n"
				    "value = 7\n";

struct options {
	unsigned rounds;
	double seconds;
	unsigned seed;
	const char *ksmkit;
	bool verbose;
};

struct tally {
	unsigned rounds, restored, per_target[T_COUNT], failed_target[T_COUNT];
	int64_t pages_left;
	unsigned procs_left;
	double restore_s[4096];
	unsigned nrestore;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	nanosleep(&ts, NULL);
}

static int64_t counter(const char *name)
{
	char path[128], text[64] = "";
	FILE *f;

	snprintf(path, sizeof path, KSM_DIR "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(text, sizeof text, f))
		text[0] = '\0';
	fclose(f);
	return strtoll(text, NULL, 10);
}

static int64_t pages_merged(void)
{
	return counter("pages_shared") + counter("pages_sharing") +
	       (counter("ksm_zero_pages") > 0 ? counter("ksm_zero_pages") : 0);
}

/* ---- the run's processes ----------------------------------------------------------- */

/* Whether live process @pid carries @marker in its environment. */
static bool has_marker(const char *pid, const char *marker)
{
	char path[64], env[16384];
	size_t n, mlen = strlen(marker);
	FILE *f;

	snprintf(path, sizeof path, "/proc/%s/environ", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(env, 1, sizeof env, f);
	fclose(f);
	for (size_t i = 0; i + mlen <= n; i += strlen(env + i) + 1)
		if (memcmp(env + i, marker, mlen) == 0 && (i + mlen == n || env[i + mlen] == '\0'))
			return true;
	return false;
}

static bool is_zombie(const char *pid)
{
	char path[64], text[512], *close_paren;
	FILE *f;
	bool zombie = false;

	snprintf(path, sizeof path, "/proc/%s/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return true; /* gone */
	if (fgets(text, sizeof text, f) && (close_paren = strrchr(text, ')')))
		zombie = close_paren[1] == ' ' && (close_paren[2] == 'Z' || close_paren[2] == 'X');
	fclose(f);
	return zombie;
}

/* The process group of @pid, or -1. */
static pid_t pgrp_of(pid_t pid)
{
	char path[64], text[512], *p;
	int pgrp = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(text, sizeof text, f) && (p = strrchr(text, ')')))
		sscanf(p + 2, "%*c %*d %d", &pgrp);
	fclose(f);
	return pgrp;
}

/* Live processes carrying @marker, into @pids; returns how many. */
static size_t marked_processes(const char *marker, pid_t *pids, size_t max)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		if (!has_marker(de->d_name, marker) || is_zombie(de->d_name))
			continue;
		if (n < max)
			pids[n] = (pid_t)atoi(de->d_name);
		n++;
	}
	closedir(d);
	return n;
}

/* The pids the lock file names for @guardian; 0 where absent. */
static void lock_holders(pid_t guardian, pid_t *runner, pid_t *sentinel)
{
	char text[256] = "", *p;
	FILE *f = fopen(KB_LOCK_FILE, "r");
	int g = 0;

	*runner = *sentinel = 0;
	if (!f)
		return;
	if (fread(text, 1, sizeof text - 1, f) == 0)
		text[0] = '\0';
	fclose(f);
	if (sscanf(text, "guardian %d", &g) != 1 || g != guardian)
		return;
	if ((p = strstr(text, "runner ")))
		*runner = (pid_t)atoi(p + 7);
	if ((p = strstr(text, "sentinel ")))
		*sentinel = (pid_t)atoi(p + 9);
}

static bool lock_is_free(void)
{
	int fd = open(KB_LOCK_FILE, O_RDONLY | O_CLOEXEC);
	bool free_now;

	if (fd < 0)
		return true;
	free_now = flock(fd, LOCK_EX | LOCK_NB) == 0;
	if (free_now)
		flock(fd, LOCK_UN);
	close(fd);
	return free_now;
}

/* ---- one round ------------------------------------------------------------------------ */

static pid_t start_run(const struct options *o, const char *wl, const char *marker)
{
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		char *eq = strchr(marker, '=');

		setpgid(0, 0);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		setenv(MARKER, eq + 1, 1);
		execl(o->ksmkit, "ksmkit", "run", "-q", wl, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		setpgid(pid, pid);
	return pid;
}

/* A workload process of the run (in the runner's group, not the runner). */
static pid_t a_worker(const char *marker, pid_t runner)
{
	pid_t pids[MAX_PIDS];
	size_t n = marked_processes(marker, pids, MAX_PIDS);

	for (size_t i = 0; i < n && i < MAX_PIDS; i++)
		if (pids[i] != runner && runner && pgrp_of(pids[i]) == runner)
			return pids[i];
	return 0;
}

/* SIGKILL what @t names; returns the target actually hit (the guardian when
 * the one chosen does not exist yet). */
static enum target kill_target(enum target t, pid_t guardian, const char *marker)
{
	pid_t runner, sentinel, worker = 0, pids[MAX_PIDS];
	size_t n;

	lock_holders(guardian, &runner, &sentinel);
	if (t == T_WORKER && !(worker = a_worker(marker, runner)))
		t = T_GUARDIAN;
	if ((t == T_RUNNER || t == T_RUNNER_GROUP) && !runner)
		t = T_GUARDIAN;
	if (t == T_SENTINEL && !sentinel)
		t = T_GUARDIAN;
	switch (t) {
	case T_GUARDIAN:
		kill(guardian, SIGKILL);
		break;
	case T_GUARDIAN_GROUP:
		kill(-guardian, SIGKILL);
		break;
	case T_SENTINEL:
		kill(sentinel, SIGKILL);
		break;
	case T_RUNNER:
		kill(runner, SIGKILL);
		break;
	case T_RUNNER_GROUP:
		kill(-runner, SIGKILL);
		break;
	case T_WORKER:
		kill(worker, SIGKILL);
		break;
	case T_EVERYTHING:
	case T_COUNT:
		/* Every process of the run at once: stop them all first (a stopped
		 * process forks nobody), until no new one shows, then kill. The
		 * guardian by pid too: until its exec it carries no marker. */
		kill(guardian, SIGSTOP);
		for (size_t seen = 0, tries = 0; tries < 50; tries++) {
			n = marked_processes(marker, pids, MAX_PIDS);
			for (size_t i = 0; i < n && i < MAX_PIDS; i++)
				kill(pids[i], SIGSTOP);
			if (n == seen)
				break;
			seen = n;
			sleep_s(0.002);
		}
		kill(guardian, SIGKILL);
		for (size_t i = 0; i < n && i < MAX_PIDS; i++)
			kill(pids[i], SIGKILL);
		break;
	}
	return t;
}

static int run_restore(const struct options *o)
{
	pid_t pid = fork();
	int ws;

	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 1);
		execl(o->ksmkit, "ksmkit", "restore", "-q", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &ws, 0) != pid)
		return -1;
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* Whether the machine is as before: every knob, nothing merged, nothing of
 * the run alive, no state file, a free lock. */
static bool restored(const struct kb_knob_set *before, const char *marker, char *why,
		     size_t len)
{
	struct kb_knob_set now;
	char msg[256];
	pid_t pids[MAX_PIDS];
	size_t left;

	if (kb_knobs_save(&now, msg, sizeof msg) != 0) {
		snprintf(why, len, "%s", msg);
		return false;
	}
	for (size_t i = 0; i < before->n; i++) {
		const char *v = kb_knobs_get(&now, before->knob[i].name);

		if (!v || strcmp(v, before->knob[i].value) != 0) {
			snprintf(why, len, "%s = %s (was %s)", before->knob[i].name, v ? v : "?",
				 before->knob[i].value);
			return false;
		}
	}
	if (pages_merged() != 0) {
		snprintf(why, len, "%" PRId64 " pages merged", pages_merged());
		return false;
	}
	if ((left = marked_processes(marker, pids, MAX_PIDS)) != 0) {
		snprintf(why, len, "%zu processes of the run alive (pid %d)", left, (int)pids[0]);
		return false;
	}
	if (access(KB_SAVED_FILE, F_OK) == 0) {
		snprintf(why, len, "%s is still there", KB_SAVED_FILE);
		return false;
	}
	if (!lock_is_free()) {
		snprintf(why, len, "the lock is held");
		return false;
	}
	return true;
}

static void one_round(const struct options *o, const struct kb_knob_set *before, const char *wl,
		      unsigned round, struct tally *tl)
{
	enum target t = (enum target)((unsigned)rand() % T_COUNT);
	double delay = (double)(rand() % 1200) / 1000.0, t_kill, waited;
	char marker[64], why[256] = "";
	pid_t guardian, pids[MAX_PIDS];
	bool ok = false, restore_failed = false;
	int ws;

	snprintf(marker, sizeof marker, MARKER "=%d.%u", (int)getpid(), round);
	guardian = start_run(o, wl, marker);
	if (guardian < 0) {
		fprintf(stderr, "restore-soak: fork: %s\n", strerror(errno));
		exit(1);
	}
	sleep_s(delay);
	t = kill_target(t, guardian, marker);
	t_kill = now_s();
	if (t == T_EVERYTHING) {
		/* Nothing of the run is left to restore: that is what `ksmkit
		 * restore` is for, once the killed processes have exited. */
		while (marked_processes(marker, pids, MAX_PIDS) && now_s() - t_kill < 2)
			sleep_s(0.01);
		restore_failed = run_restore(o) != 0;
	}
	do {
		ok = !restore_failed && restored(before, marker, why, sizeof why);
		if (!ok)
			sleep_s(0.02);
	} while (!ok && now_s() - t_kill < RESTORE_LIMIT_S);
	waited = now_s() - t_kill;
	if (restore_failed)
		snprintf(why, sizeof why, "ksmkit restore failed");
	tl->rounds++;
	tl->per_target[t]++;
	if (ok) {
		tl->restored++;
		if (tl->nrestore < sizeof tl->restore_s / sizeof tl->restore_s[0])
			tl->restore_s[tl->nrestore++] = waited;
	} else {
		tl->failed_target[t]++;
		tl->pages_left += pages_merged();
		tl->procs_left += (unsigned)marked_processes(marker, pids, MAX_PIDS);
		fprintf(stderr, "restore-soak: round %u (%s after %.3f s): not restored in %.0f s: %s\n",
			round, target_names[t], delay, RESTORE_LIMIT_S, why);
		/* Leave the next round a clean machine, whatever this one left. */
		for (size_t n = marked_processes(marker, pids, MAX_PIDS), i = 0; i < n && i < MAX_PIDS;
		     i++)
			kill(pids[i], SIGKILL);
		sleep_s(0.5);
		run_restore(o);
	}
	if (o->verbose)
		fprintf(stderr, "round %u: %s after %.3f s: %s in %.3f s\n", round, target_names[t],
			delay, ok ? "restored" : "NOT restored", waited);
	/* Restored means no process of the run is alive: the guardian, our
	 * child, has exited (or was just killed above). */
	waitpid(guardian, &ws, 0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void print_tally(struct tally *tl)
{
	qsort(tl->restore_s, tl->nrestore, sizeof tl->restore_s[0], cmp_double);
	printf("%u/%u restored, %" PRId64 " pages left merged, %u processes left\n", tl->restored,
	       tl->rounds, tl->pages_left, tl->procs_left);
	if (tl->nrestore)
		printf("time from the kill to restored: median %.3f s, slowest %.3f s\n",
		       tl->restore_s[tl->nrestore / 2], tl->restore_s[tl->nrestore - 1]);
	for (int t = 0; t < T_COUNT; t++)
		printf("  %-18s %3u rounds, %u not restored\n", target_names[t], tl->per_target[t],
		       tl->failed_target[t]);
}

/* Why this machine cannot soak, or NULL; with @others, also whether anyone
 * (asked holding the suites' lock: not another kernel suite) has pages merged. */
static const char *skip_reason(bool others)
{
	if (geteuid() != 0)
		return "needs root (KSM's knobs are root's)";
	if (access(KSM_DIR "run", W_OK) != 0)
		return "no writable " KSM_DIR "run (no KSM)";
	if (others && pages_merged() != 0)
		return "someone else's pages are merged: the soak would disturb them";
	return NULL;
}

static void usage(FILE *out)
{
	fputs("usage: restore-soak [--rounds N] [--time SECONDS] [--seed N] [--ksmkit PATH] [-v]\n"
	      "SIGKILL a random process of a ksmkit run at a random moment, N times (default\n"
	      "100), stopping early after SECONDS (default 40, what make check runs), and\n"
	      "check each time that KSM is restored within 5 s. --ksmkit defaults to\n"
	      "$KSMKIT, else cli/ksmkit. Needs root. Exit 0 all restored, 1 not, 2 usage,\n"
	      "77 skipped.\n",
	      out);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rounds", required_argument, NULL, 'r' }, { "time", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 's' },   { "ksmkit", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },         { NULL, 0, NULL, 0 },
	};
	struct options o = { .rounds = 100, .seconds = 40, .seed = (unsigned)time(NULL),
			     .ksmkit = getenv("KSMKIT") ? getenv("KSMKIT") : "cli/ksmkit" };
	static struct tally tl;
	struct kb_knob_set before;
	char wl[] = "/tmp/ksmkit-soak-XXXXXX", msg[256];
	const char *why;
	double start;
	int opt, fd;

	while ((opt = getopt_long(argc, argv, "v", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r':
			o.rounds = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 't':
			o.seconds = strtod(optarg, NULL);
			break;
		case 's':
			o.seed = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'k':
			o.ksmkit = optarg;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || o.rounds == 0 || o.rounds > 4096 || o.seconds <= 0) {
		usage(stderr);
		return 2;
	}
	if ((why = skip_reason(false))) {
		printf("SKIP: restore-soak: %s\n", why);
		return 77;
	}
	if (lock_kernel_suites() < 0) {
		fprintf(stderr, "restore-soak: cannot lock the kernel suites\n");
		return 1;
	}
	if ((why = skip_reason(true))) {
		printf("SKIP: restore-soak: %s\n", why);
		return 77;
	}
	if (kb_knobs_save_idle(&before, IDLE_WAIT_NS, msg, sizeof msg) != 0) {
		fprintf(stderr, "restore-soak: %s\n", msg);
		return 1;
	}
	fd = mkstemp(wl);
	if (fd < 0 || write(fd, soak_workload, strlen(soak_workload)) != (ssize_t)strlen(soak_workload)) {
		fprintf(stderr, "restore-soak: cannot write %s\n", wl);
		return 1;
	}
	close(fd);
	srand(o.seed);
	printf("restore-soak: seed %u, up to %u rounds in %.0f s\n", o.seed, o.rounds, o.seconds);
	start = now_s();
	for (unsigned r = 0; r < o.rounds && now_s() - start < o.seconds; r++)
		one_round(&o, &before, wl, r, &tl);
	unlink(wl);
	print_tally(&tl);
	return tl.restored == tl.rounds && tl.rounds > 0 ? 0 : 1;
}
