/*
 * cmd_capture.c - `ksmkit capture`: snapshots of running processes' private
 * anonymous memory (-p PID,... or a command it starts after --) into a
 * capture file, every interval or at every full scan of ksmd, and
 * `ksmkit capture --info FILE`, the summary of a file: its streams and, per
 * snapshot, what KSM could at most share. The file is written snapshot by
 * snapshot (capture/capture.h): a capture that stops early, for any
 * reason, leaves a file valid up to its last complete snapshot, and says
 * so. The target processes are only read, and with --consistent stopped
 * during their snapshot and always let go as they were (capture/cap_freeze.c).
 */
#include "config.h"
#include "cli.h"
#include "cli_args.h"
#include "capture.h"
#include "workload.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CMD "capture"
#define POLL_NS 20000000ull /* full_scans and the stop flag: every 20 ms */
#define MAX_PIDS 64

enum {
	OPT_OUTPUT = 'o', OPT_PID = 'p', OPT_QUIET = 'q',
	OPT_EVERY = 1000, OPT_COUNT, OPT_DURATION, OPT_CONSISTENT, OPT_BYTES, OPT_INFO, OPT_CSV,
	OPT_STRICT, OPT_MERGEABLE_ONLY,
};

static const struct cli_opt capture_options[] = {
	{ "output", 'o', true, OPT_OUTPUT },
	{ "pid", 'p', true, OPT_PID },
	{ "every", 0, true, OPT_EVERY },
	{ "count", 0, true, OPT_COUNT },
	{ "duration", 0, true, OPT_DURATION },
	{ "consistent", 0, false, OPT_CONSISTENT },
	{ "bytes", 0, false, OPT_BYTES },
	{ "quiet", 'q', false, OPT_QUIET },
	{ "info", 0, true, OPT_INFO },
	{ "csv", 0, false, OPT_CSV },
	{ "strict", 0, false, OPT_STRICT },
	{ "mergeable-only", 0, false, OPT_MERGEABLE_ONLY },
	{ NULL, 0, false, 0 },
};

static const struct cli_rule capture_rules[] = {
	{ CLI_EXCLUDES, "info output pid every count duration consistent bytes quiet mergeable-only",
	  "--info reads a capture file, it takes none", 0, 0, NULL },
	{ CLI_NEEDS, "csv info", NULL, 0, 0, NULL },
	{ CLI_NEEDS, "strict info", NULL, 0, 0, NULL },
	{ CLI_AT_MOST_ONE, "count duration", "each says when to stop", 0, 0, NULL },
	{ CLI_OPERANDS, "info", NULL, 0, 0, "no command with --info" },
	{ CLI_OPERANDS, "pid", NULL, 0, 0, "no command with -p: one or the other" },
	{ 0, NULL, NULL, 0, 0, NULL },
};

static const struct cli_spec capture_spec = {
	CMD, NULL, capture_options, capture_rules, 0, -1, "a command after --",
};

/* ---- what to do ------------------------------------------------------------- */

struct plan {
	const char *output;
	pid_t pids[MAX_PIDS];
	size_t npids;
	char **command;      /* after --, or NULL */
	bool at_full_scans;
	uint64_t every_ns;
	uint64_t count;      /* 0: no limit */
	uint64_t duration_ns; /* 0: no limit */
	bool consistent, bytes, quiet;
	bool mergeable_only; /* only VM_MERGEABLE VMAs (CAP_PROC_MERGEABLE_ONLY) */
};

static int parse_pids(const char *text, struct plan *pl)
{
	char *copy = strdup(text), *save = NULL;

	if (!copy)
		return CLI_FAILED;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		long pid;

		if (pl->npids == MAX_PIDS) {
			cli_error("%s: -p: at most %d processes", CMD, MAX_PIDS);
			free(copy);
			return CLI_USAGE;
		}
		if (cli_number(CMD, "-p", t, 1, 0x3fffffff, &pid) != 0) {
			free(copy);
			return CLI_USAGE;
		}
		for (size_t i = 0; i < pl->npids; i++)
			if (pl->pids[i] == (pid_t)pid) {
				cli_error("%s: -p: process %ld given twice", CMD, pid);
				free(copy);
				return CLI_USAGE;
			}
		pl->pids[pl->npids++] = (pid_t)pid;
	}
	free(copy);
	if (!pl->npids) {
		cli_error("%s: -p: no process in '%s'", CMD, text);
		return CLI_USAGE;
	}
	return 0;
}

static int parse_time_option(const char *option, const char *text, uint64_t *ns)
{
	if (wl_parse_time(text, ns) != 0 || *ns == 0) {
		cli_error("%s: %s: '%s' is not a time above 0 (like 500ms, 2s, 1m)", CMD, option,
			  text);
		return CLI_USAGE;
	}
	return 0;
}

static int read_plan(struct cli_args *a, bool had_dashdash, struct plan *pl)
{
	const char *v;
	int key, rc = 0;
	long n;

	memset(pl, 0, sizeof(*pl));
	pl->every_ns = 1000000000ull;
	while (rc == 0 && (key = cli_args_next(a, &v)) != -1) {
		switch (key) {
		case OPT_OUTPUT: pl->output = v; break;
		case OPT_PID: rc = parse_pids(v, pl); break;
		case OPT_EVERY:
			if (strcmp(v, "full-scan") == 0)
				pl->at_full_scans = true;
			else
				rc = parse_time_option("--every", v, &pl->every_ns);
			break;
		case OPT_COUNT:
			rc = cli_number(CMD, "--count", v, 1, 1000000000L, &n);
			pl->count = (uint64_t)n;
			break;
		case OPT_DURATION: rc = parse_time_option("--duration", v, &pl->duration_ns); break;
		case OPT_CONSISTENT: pl->consistent = true; break;
		case OPT_BYTES: pl->bytes = true; break;
		case OPT_QUIET: pl->quiet = true; break;
		case OPT_MERGEABLE_ONLY: pl->mergeable_only = true; break;
		}
	}
	if (rc)
		return rc;
	if (!pl->output) {
		cli_error("%s: -o FILE is needed: where the capture goes (see ksmkit capture --help)",
			  CMD);
		return CLI_USAGE;
	}
	if (a->noperands && !had_dashdash) {
		cli_error("%s: the command to capture goes after --: ksmkit capture -o FILE -- %s",
			  CMD, a->operand[0]);
		return CLI_USAGE;
	}
	if (!pl->npids && !a->noperands) {
		cli_error("%s: nothing to capture: -p PID[,PID...] or -- CMD [ARGS]", CMD);
		return CLI_USAGE;
	}
	pl->command = a->noperands ? a->operand : NULL;
	return 0;
}

/* ---- KSM's full scans, read only ------------------------------------------------ */

static int check_ksm_runs(void)
{
	char text[8] = "";
	int fd = open("/sys/kernel/mm/ksm/run", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		cli_error("%s: --every full-scan: this kernel has no KSM (/sys/kernel/mm/ksm/run)",
			  CMD);
		return CLI_USAGE;
	}
	if (text[0] != '1') {
		cli_error("%s: --every full-scan: KSM is not running here (/sys/kernel/mm/ksm/run "
			  "is %c): there are no full scans to follow", CMD, text[0]);
		return CLI_USAGE;
	}
	return 0;
}

/* ---- signals, time ----------------------------------------------------------------- */

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGXFSZ, SIG_IGN); /* RLIMIT_FSIZE: a write error (EFBIG), not a death */
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec t = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	nanosleep(&t, NULL); /* a signal cuts it short: the caller looks at stop_signal */
}

/* ---- the command started ----------------------------------------------------------- */

/*
 * Start @argv; return once it has exec'd (a close-on-exec pipe tells), so
 * that the capture follows the new program's memory. -1 when it cannot run.
 */
static pid_t start_command(char **argv)
{
	int pipefd[2], why = 0;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		cli_error("%s: pipe: %s", CMD, strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		signal(SIGXFSZ, SIG_DFL);
		execvp(argv[0], argv);
		why = errno;
		if (write(pipefd[1], &why, sizeof(why)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pipefd[1]);
	if (pid < 0) {
		cli_error("%s: fork: %s", CMD, strerror(errno));
		close(pipefd[0]);
		return -1;
	}
	while (read(pipefd[0], &why, sizeof(why)) < 0 && errno == EINTR)
		;
	close(pipefd[0]);
	if (why) {
		waitpid(pid, NULL, 0);
		cli_error("%s: cannot run %s: %s", CMD, argv[0], strerror(why));
		return -1;
	}
	return pid;
}

/* Wait for the command to end (signals that stop the capture are passed on); its status. */
static int wait_command(pid_t pid, int reaped)
{
	int st;

	if (reaped != -1)
		return reaped;
	for (;;) {
		if (waitpid(pid, &st, 0) == pid)
			return st;
		if (errno != EINTR)
			return -1;
		if (stop_signal)
			kill(pid, stop_signal);
	}
}

static void say_command_status(const char *name, int st, bool quiet)
{
	if (st == -1)
		return;
	if (WIFSIGNALED(st))
		cli_error("%s: %s was killed by signal %d", CMD, name, WTERMSIG(st));
	else if (WEXITSTATUS(st) != 0)
		cli_error("%s: %s exited with status %d", CMD, name, WEXITSTATUS(st));
	else if (!quiet)
		cli_error("%s: %s exited with status 0", CMD, name);
}

/* ---- the capture loop ----------------------------------------------------------------- */

struct run {
	const struct plan *pl;
	struct cap_proc *proc;
	struct cap_writer *writer;
	uint64_t start_ns;
	uint64_t last_full_scans;
	uint64_t *pauses;   /* --consistent: each snapshot's */
	size_t npauses, pauses_cap;
	bool progress;
};

static void note_stream_end(void *ctx, const char *text)
{
	(void)ctx;
	cli_error("%s: %s", CMD, text);
}

/* Wait for the next snapshot's moment; false when the capture is to stop instead. */
static bool wait_for_next(struct run *r, uint64_t index)
{
	const struct plan *pl = r->pl;

	for (;;) {
		uint64_t now = now_ns() - r->start_ns;

		if (stop_signal || !cap_proc_any_live(r->proc))
			return false;
		if (pl->duration_ns && now > pl->duration_ns)
			return false;
		if (pl->at_full_scans) {
			uint64_t fs = cap_read_full_scans();

			if (fs != r->last_full_scans && fs != CAP_NO_FULL_SCANS)
				return true;
			sleep_ns(POLL_NS);
			continue;
		}
		if (now >= index * pl->every_ns)
			return !(pl->duration_ns && index * pl->every_ns > pl->duration_ns);
		sleep_ns(index * pl->every_ns - now < POLL_NS * 5 ? index * pl->every_ns - now :
			 POLL_NS * 5);
	}
}

static void draw_progress(const struct run *r, const struct cap_snapshot *s)
{
	char size[32];

	if (!r->progress)
		return;
	fprintf(stderr, "\rksmkit: capture: snapshot %llu at %.1f s, %s written\033[K",
		(unsigned long long)s->index + 1, (double)s->time_ns / 1e9,
		wl_bytes_text(cap_writer_bytes(r->writer), size, sizeof(size)));
}

static int keep_pause(struct run *r, uint64_t ns)
{
	if (r->npauses == r->pauses_cap) {
		size_t cap = r->pauses_cap ? 2 * r->pauses_cap : 64;
		void *p = realloc(r->pauses, cap * sizeof(*r->pauses));

		if (!p) {
			cli_error("%s: out of memory", CMD);
			return -1;
		}
		r->pauses = p;
		r->pauses_cap = cap;
	}
	r->pauses[r->npauses++] = ns;
	return 0;
}

static int take_snapshot(struct run *r, uint64_t index)
{
	struct cap_snapshot *snap;
	struct cap_error err;
	uint64_t taken = now_ns() - r->start_ns, full_scans = cap_read_full_scans();

	if (cap_proc_snapshot(r->proc, r->pl->consistent, r->writer, note_stream_end, NULL, &snap,
			      &err) != 0) {
		cli_error("%s: %s", CMD, err.text);
		return CLI_FAILED;
	}
	snap->index = index;
	snap->time_ns = taken; /* when it started */
	snap->full_scans = full_scans;
	r->last_full_scans = snap->full_scans;
	if (cap_writer_snapshot(r->writer, snap, &err) != 0) {
		if (r->progress)
			fputc('\n', stderr);
		cli_error("%s: %s", CMD, err.text);
		return CLI_FAILED;
	}
	if (r->pl->consistent && keep_pause(r, snap->pause_ns) != 0)
		return CLI_FAILED;
	draw_progress(r, snap);
	return 0;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Say what was written: @n snapshots into the file, closed (its writer is
 * gone), of @bytes before its end record.
 */
static void say_done(struct run *r, uint64_t n, uint64_t bytes)
{
	char size[32];
	struct stat st;

	if (stat(r->pl->output, &st) == 0)
		bytes = (uint64_t)st.st_size; /* the end record included */
	if (r->progress)
		fputc('\n', stderr);
	if (r->pl->quiet)
		return;
	cli_error("%s: %llu snapshot%s of %zu process%s in %s (%s)%s", CMD, (unsigned long long)n,
		  n == 1 ? "" : "s", cap_proc_count(r->proc), cap_proc_count(r->proc) == 1 ? "" : "es",
		  r->pl->output, wl_bytes_text(bytes, size, sizeof(size)),
		  stop_signal ? ", stopped by a signal" : "");
	if (r->npauses) {
		qsort(r->pauses, r->npauses, sizeof(*r->pauses), compare_u64);
		cli_error("%s: --consistent paused each process for %.1f ms (median), %.1f ms at "
			  "most", CMD, (double)r->pauses[r->npauses / 2] / 1e6,
			  (double)r->pauses[r->npauses - 1] / 1e6);
	}
}

static int capture_loop(struct run *r)
{
	uint64_t index = 0;
	int rc = 0;

	r->start_ns = now_ns();
	r->last_full_scans = cap_read_full_scans();
	while (rc == 0 && (!r->pl->count || index < r->pl->count)) {
		/* the first snapshot at once; full-scan snapshots after it at each new scan */
		if (index > 0 && !wait_for_next(r, index))
			break;
		if (stop_signal)
			break;
		rc = take_snapshot(r, index++);
		if (!cap_proc_any_live(r->proc))
			break;
	}
	return rc;
}

static int open_streams(const struct plan *pl, pid_t child, struct cap_proc **proc)
{
	struct cap_error err;
	int why;
	pid_t one = child;

	if (cap_proc_open_flags(child > 0 ? &one : pl->pids, child > 0 ? 1 : pl->npids,
				pl->mergeable_only ? CAP_PROC_MERGEABLE_ONLY : 0, proc, &why,
				&err) == 0)
		return 0;
	cli_error("%s: %s", CMD, err.text);
	return why == EACCES || why == EPERM || why == ESRCH ? CLI_USAGE : CLI_FAILED;
}

static int capture(const struct plan *pl)
{
	struct run r = { .pl = pl, .progress = !pl->quiet && isatty(STDERR_FILENO) };
	struct cap_error err;
	pid_t child = -1;
	int rc, st;

	if (pl->at_full_scans && (rc = check_ksm_runs()) != 0)
		return rc;
	catch_signals();
	if (pl->command && (child = start_command(pl->command)) < 0)
		return CLI_USAGE;
	rc = open_streams(pl, child, &r.proc);
	if (rc == 0 && cap_writer_open(pl->output, cap_proc_streams(r.proc), cap_proc_initial(r.proc),
				       cap_proc_count(r.proc), pl->bytes, &r.writer, &err) != 0) {
		cli_error("%s: %s", CMD, err.text);
		rc = CLI_FAILED;
	}
	if (rc == 0) {
		uint64_t snapshots, bytes;

		rc = capture_loop(&r);
		snapshots = cap_writer_snapshots(r.writer);
		bytes = cap_writer_bytes(r.writer);
		if (cap_writer_close(r.writer, &err) != 0 && rc == 0) {
			cli_error("%s: %s", CMD, err.text);
			rc = CLI_FAILED;
		} else if (rc == 0) {
			say_done(&r, snapshots, bytes);
		} else if (r.progress) {
			fputc('\n', stderr);
		}
	}
	if (child > 0) {
		if (rc != 0 && !r.writer)
			kill(child, SIGKILL); /* never captured: not left running */
		st = wait_command(child, r.proc ? cap_proc_reaped(r.proc, 0) : -1);
		say_command_status(pl->command[0], st, pl->quiet);
	}
	cap_proc_close(r.proc);
	free(r.pauses);
	return rc;
}

/* ---- --info -------------------------------------------------------------------------- */

static void print_streams(const struct cap_file_info *fi, const uint64_t *ended_at,
			  const enum cap_stream_status *why)
{
	printf("streams: %zu\n", fi->nstreams);
	for (size_t i = 0; i < fi->nstreams; i++) {
		const struct cap_stream_state *s = &fi->initial[i];

		printf("  %zu: pid %d (%s), %zu VMAs of %zu pages at the start, THP from %s", i,
		       (int)fi->streams[i].pid, fi->streams[i].comm, s->nvmas, s->npages,
		       cap_thp_source_name(fi->streams[i].thp));
		if (why[i] != CAP_STREAM_LIVE)
			printf(", %s at snapshot %llu", cap_stream_status_name(why[i]),
			       (unsigned long long)ended_at[i]);
		printf("\n");
	}
}

static void print_row(bool csv, const struct cap_snapshot *s, const struct cap_summary *m)
{
	char scans[24] = "-";

	if (s->full_scans != CAP_NO_FULL_SCANS)
		snprintf(scans, sizeof(scans), "%llu", (unsigned long long)s->full_scans);
	printf(csv ? "%llu,%.3f,%s,%.3f,%llu,%llu,%llu,%llu,%llu,%llu,%llu\n" :
		     "%8llu %9.3f %10s %9.3f %9llu %9llu %9llu %9llu %9llu %10llu %9llu\n",
	       (unsigned long long)s->index, (double)s->time_ns / 1e9, scans,
	       (double)s->pause_ns / 1e6, (unsigned long long)m->pages,
	       (unsigned long long)m->present, (unsigned long long)m->zero,
	       (unsigned long long)m->thp, (unsigned long long)m->distinct,
	       (unsigned long long)m->duplicates, (unsigned long long)m->changed);
}

static void print_file_head(const char *path, const struct cap_file_info *fi)
{
	printf("%s: ksmkit capture, format version %u, page size %u, %llu bytes\n", path,
	       fi->version, fi->page_size, (unsigned long long)fi->file_size);
	if (fi->with_bytes)
		printf("bytes: %llu distinct pages stored (zstd)\n",
		       (unsigned long long)fi->ndistinct_bytes);
	else
		printf("bytes: none (tokens only)\n");
	if (fi->complete)
		printf("complete: yes\n");
	else
		printf("complete: no, it stops at byte %llu (the capture did not finish); the %llu "
		       "snapshots before are whole\n", (unsigned long long)fi->cut_offset,
		       (unsigned long long)fi->nsnapshots);
}

static int info_rows(struct cap_reader *rd, bool csv, uint64_t *ended_at,
		     enum cap_stream_status *why)
{
	const struct cap_file_info *fi = cap_reader_info(rd);
	const struct cap_snapshot *s;
	struct cap_summary m;
	struct cap_error err;
	int got;

	printf(csv ? "snapshot,time_s,full_scans,pause_ms,pages,present,zero,thp,distinct,"
		     "duplicates,changed\n" :
		     "snapshot    time_s full_scans  pause_ms     pages   present      zero       "
		     "thp  distinct duplicates   changed\n");
	while ((got = cap_reader_next(rd, &s, &err)) == 1) {
		if (cap_summarize(s, &m, &err) != 0)
			break;
		for (size_t i = 0; i < fi->nstreams; i++)
			if (why[i] == CAP_STREAM_LIVE && s->streams[i].status != CAP_STREAM_LIVE) {
				why[i] = s->streams[i].status;
				ended_at[i] = s->index;
			}
		print_row(csv, s, &m);
	}
	if (got != 0) {
		cli_error("%s: %s", CMD, err.text);
		return CLI_FAILED;
	}
	return 0;
}

static int info(const char *path, bool csv, bool strict)
{
	struct cap_reader *rd;
	struct cap_error err;
	const struct cap_file_info *fi;
	uint64_t *ended_at;
	enum cap_stream_status *why;
	int rc;

	if (cap_reader_open(path, strict ? CAP_OPEN_STRICT : 0, &rd, &err) != 0) {
		cli_error("%s: %s", CMD, err.text);
		return CLI_USAGE;
	}
	fi = cap_reader_info(rd);
	ended_at = calloc(fi->nstreams, sizeof(*ended_at));
	why = calloc(fi->nstreams, sizeof(*why));
	if (!ended_at || !why) {
		rc = CLI_FAILED;
		goto out;
	}
	if (!csv)
		print_file_head(path, fi);
	else if (!fi->complete)
		cli_error("%s: %s stops at byte %llu (the capture did not finish)", CMD, path,
			  (unsigned long long)fi->cut_offset);
	rc = info_rows(rd, csv, ended_at, why);
	if (!csv && rc == 0) {
		printf("snapshots: %llu\n", (unsigned long long)fi->nsnapshots);
		print_streams(fi, ended_at, why);
	}
out:
	free(ended_at);
	free(why);
	cap_reader_close(rd);
	return rc;
}

/* ---- the command ---------------------------------------------------------------------- */

int cmd_capture(int argc, char **argv)
{
	struct cli_args args;
	struct plan pl;
	bool had_dashdash = false;
	int rc;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			had_dashdash = true;
			break;
		}
	if (cli_args_parse(&capture_spec, argc, argv, &args) != 0)
		return CLI_USAGE;
	if (cli_args_has(&args, OPT_INFO))
		return info(cli_args_value(&args, OPT_INFO), cli_args_has(&args, OPT_CSV),
			    cli_args_has(&args, OPT_STRICT));
	rc = read_plan(&args, had_dashdash, &pl);
	if (rc != 0)
		return rc;
	return capture(&pl);
}

int cli_capture(const struct cli_capture_request *req)
{
	struct plan pl = {
		.output = req->output,
		.command = req->command,
		.every_ns = req->every_ns,
		.duration_ns = req->duration_ns,
		.quiet = req->quiet,
		.mergeable_only = req->mergeable_only,
	};

	if (req->npids > MAX_PIDS) {
		cli_error("%s: -p: at most %d processes", CMD, MAX_PIDS);
		return CLI_USAGE;
	}
	memcpy(pl.pids, req->pids, req->npids * sizeof(*req->pids));
	pl.npids = req->npids;
	return capture(&pl);
}
