/*
 * kb_internal.h - what the backend's files share and nobody else sees: small
 * I/O helpers, the knob store, the lock, the preflight checks, counter
 * sampling, page captures, the workload processes and their command protocol,
 * and the runner, guardian and continuous-writer entry points.
 *
 * Process model (kb_guard.c and kb_sentinel.c have the whole story): the
 * caller of kb_run() is the guardian; it forks the sentinel, in a session of
 * its own; the sentinel forks one runner; the runner forks one workload
 * process per initial workload process, and those fork the others on fork
 * events. The runner and the workload processes share a process group whose
 * id is the runner's pid, so the sentinel (or the guardian) can end them all
 * at once.
 */
#ifndef KSMKIT_KB_INTERNAL_H
#define KSMKIT_KB_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend.h"

#define KB_KSM_DIR "/sys/kernel/mm/ksm"
#define KB_PAGE_SIZE ((uint64_t)WL_PAGE_SIZE)
#define KB_HUGE_SIZE (UINT64_C(2) << 20)
#define KB_NSEC UINT64_C(1000000000)

#define KB_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* ---- kb_util.c: time, files, messages ------------------------------------ */

/* CLOCK_MONOTONIC_RAW in ns, the clock ksm_tests measures with. */
uint64_t kb_now_ns(void);
void kb_sleep_ns(uint64_t ns);
/* Format a message into @msg; always returns -1, for `return kb_fail(...)`. */
int kb_fail(char *msg, size_t len, const char *fmt, ...) KB_PRINTF(3, 4);
/* Append "; " and a message to what @msg already holds. */
void kb_append(char *msg, size_t len, const char *fmt, ...) KB_PRINTF(3, 4);
/* Read up to @len - 1 bytes of @path, NUL-terminated. Bytes read, or -1 (errno). */
ssize_t kb_read_file(const char *path, char *buf, size_t len);
/* Write @text to @path in one write(). 0, or the positive errno. */
int kb_write_file(const char *path, const char *text);
/* Parse the signed decimal at the start of what pread(@fd, 0) gives. 0 or -1. */
int kb_pread_int(int fd, int64_t *value);
/* All of @len bytes, retrying on EINTR and short transfers. 0 or -1 (errno;
 * EPIPE when the other side closed). */
int kb_write_full(int fd, const void *buf, size_t len);
int kb_read_full(int fd, void *buf, size_t len);
/* "EBUSY" for EBUSY, strerror-free names for the errors knob stores give. */
const char *kb_errno_name(int err);
/* "1.5 GiB", "512 KiB" */
const char *kb_size_text(uint64_t bytes, char *buf, size_t len);
/* The process's command name (comm), or "?" */
void kb_comm_of(pid_t pid, char *buf, size_t len);
/* SIGKILL every child of this process (of any of its threads: forked, or
 * reparented to it as a subreaper); how many. Only for a process whose every
 * child belongs to the run (the sentinel, the live runner). */
unsigned kb_kill_children(void);

/* ---- kb_knobs.c: the knob store --------------------------------------------- */

/* Write @text to knob @name. 0, or the positive errno the kernel answered. */
int kb_knob_store(const char *name, const char *text);
/* The knob's current value as kb_knob_set holds it. 0, or -1 (errno). */
int kb_knob_read(const char *name, char *buf, size_t len);
bool kb_knob_exists(const char *name);
/* Write every knob of @wl's [global] (defaults included) in a valid order,
 * starting with run = 0; run itself is left at 0. 0, or -1 with a message. */
int kb_knobs_apply_workload(const struct workload *wl, char *msg, size_t len);
/* The state file: write @set (atomically), read it back. 0, or -1 with a
 * message; reading a missing file gives -1 with errno ENOENT. */
int kb_knobs_write_file(const struct kb_knob_set *set, const char *path, char *msg, size_t len);
int kb_knobs_read_file(struct kb_knob_set *set, const char *path, pid_t *saver, char *msg,
		       size_t len);

/* ---- kb_lock.c: one backend at a time ---------------------------------------- */

struct kb_lock {
	int fd; /* the open, flock()ed KB_LOCK_FILE, or -1 */
};

/* Take the lock, waiting up to @wait_ns for another backend (a note says so).
 * 0, or -1 with a message naming the holder. */
int kb_lock_acquire(struct kb_lock *lock, uint64_t wait_ns, const struct kb_options *opt,
		    char *msg, size_t len);
/* Record who holds it, for people and tests: "guardian PID\nrunner PID\n
 * sentinel PID\n" (a zero pid is left out). */
void kb_lock_note_pids(struct kb_lock *lock, pid_t guardian, pid_t runner, pid_t sentinel);
void kb_lock_release(struct kb_lock *lock);

/* ---- kb_preflight.c: may this run start here? --------------------------------- */

/* The measurement's needs (bad input first, whatever the machine), then
 * root, KSM, NUMA nodes, soft-dirty and THP when asked for.
 * KB_OK, or KB_BAD_INPUT / KB_SKIPPED with the reason. */
int kb_check_machine(const struct workload *wl, const struct kb_options *opt, char *msg,
		     size_t len);
/* Someone else using KSM: merged pages, or processes (other than this one)
 * with mergeable memory. 0 nobody, 1 somebody (named in @msg), -1 error. */
int kb_check_others(char *msg, size_t len);
/* Whether another process (outside @our_pgid) has pages merged by KSM now. */
bool kb_others_have_merged(pid_t our_pgid, char *who, size_t len);
/* The workload's memory against 80% of MemAvailable. 0, or -1 with a message. */
int kb_check_memory(const struct workload *wl, char *msg, size_t len);
/* The same for @need bytes that @what ("the commands") will use. */
int kb_check_memory_need(uint64_t need, const char *what, char *msg, size_t len);
/* Root and KSM, the checks every run makes first: KB_OK or KB_SKIPPED. */
int kb_check_root_and_ksm(char *msg, size_t len);
/* NUMA nodes with memory, from sysfs (1 without NUMA). */
int kb_node_count(void);
/* The THP settings a huge page depends on, for messages:
 * ".../enabled is madvise, defrag madvise". */
void kb_thp_settings(char *out, size_t len);
bool kb_node_has_memory(int node);

/* ---- kb_sample.c: counters and the trace row ---------------------------------- */

struct kb_sampler {
	int counter_fd[TRACE_COUNTER_COUNT]; /* open /sys/kernel/mm/ksm files; -1 if absent */
	pid_t ksmd;          /* ksmd's pid, 0 when not found */
	int ksmd_fd;         /* where ksmd's CPU time is read, -1 if unknown */
	enum kb_cpu_clock {
		KB_CPU_TASK_CLOCK, /* a perf task-clock event on ksmd: exact ns */
		KB_CPU_SCHEDSTAT,  /* /proc/<ksmd>/schedstat: ns, but only as
				    * fresh as ksmd's last tick or switch */
		KB_CPU_TICKS,      /* /proc/<ksmd>/stat utime + stime */
	} ksmd_clock;
	uint64_t ksmd_cpu0;  /* ksmd CPU ns when the run started */
};

int kb_sampler_open(struct kb_sampler *s, char *msg, size_t len);
void kb_sampler_close(struct kb_sampler *s);
/* One counter now. 0, or -1 (absent counters read as 0 and succeed). */
int kb_sample_counter(const struct kb_sampler *s, enum trace_counter c, int64_t *value);
int kb_sample_counters(const struct kb_sampler *s, int64_t counter[TRACE_COUNTER_COUNT]);
/*
 * A new row of @kind in @t with every counter read now and ksmd's CPU since
 * the run started (the caller fills the rest). NULL with a message in @msg.
 */
struct trace_row *kb_sample_row(const struct kb_sampler *s, struct trace *t,
				enum trace_row_kind kind, char *msg, size_t len);
/* ksmd's CPU time in ns from some fixed origin (0 if unknown). */
uint64_t kb_ksmd_cpu_ns(const struct kb_sampler *s);
/* /proc/@pid/ksm_stat into @ps (present = true). 0, or -1 (errno). Sets
 * *@has_mergeable when the kernel prints the ksm_mergeable line (6.14+). */
int kb_read_ksm_stat(pid_t pid, struct trace_proc_stat *ps, bool *has_mergeable);

/* ---- kb_proc.c / kb_worker.c: workload processes ------------------------------ */

/* Commands the runner sends a workload process over its socket. */
enum kb_op {
	KB_OP_RESERVE, /* reserve the address range of its regions; reply.value = base */
	KB_OP_MAP,     /* map a region: node (or -1), flags KB_CMD_HUGE */
	KB_OP_FILL,    /* write the region's initial contents */
	KB_OP_MERGE,   /* madvise(MADV_MERGEABLE) on kb_range payload, or prctl */
	KB_OP_UNMERGE, /* madvise(MADV_UNMERGEABLE) on kb_range payload, or prctl */
	KB_OP_UNMAP,   /* munmap of kb_range payload */
	KB_OP_WRITE,   /* kb_write payload; KB_CMD_RESTORE puts the initial values back */
	KB_OP_FORK,    /* fork; the child's socket comes with SCM_RIGHTS; reply.value = pid */
	KB_OP_EXIT,    /* reply, then exit without unmerging (a workload exit event) */
	KB_OP_QUIT,    /* unmerge everything, unmap, reply (elapsed = unmerge), exit */
	KB_OP_DISCARD, /* madvise(MADV_DONTNEED) on kb_range payload */
	KB_OP_PROTECT, /* mprotect of the whole region to arg (enum wl_prot) */
	KB_OP_UFFD_WP, /* userfaultfd: register the whole region (write-protect mode), protect it */
	KB_OP_EXEC,    /* exec the program again with the workload's text (SCM_RIGHTS): the
			  new image answers, with an empty address space of its regions */
	KB_OP_PAGES,   /* kb_page payload: whole pages' bytes (a capture replayed) */
};

#define KB_CMD_HUGE 0x1u    /* KB_OP_MAP: MADV_HUGEPAGE (else MADV_NOHUGEPAGE) */
#define KB_CMD_PRCTL 0x2u   /* KB_OP_MERGE/UNMERGE: PR_SET_MEMORY_MERGE instead */
#define KB_CMD_RESTORE 0x4u /* KB_OP_WRITE: untimed, refill the pages afterwards */
#define KB_CMD_AT 0x8u      /* KB_OP_RESERVE: at address count (an exec keeps the layout) */
#define KB_CMD_INHERITED 0x10u /* KB_OP_MERGE with KB_CMD_PRCTL: no prctl call, the flag is
				  what exec left; only the program's own memory is unmerged */

struct kb_cmd {
	uint32_t op;     /* enum kb_op */
	uint32_t region; /* index into wl->regions, where the op takes one */
	uint32_t flags;  /* KB_CMD_* */
	int32_t arg;     /* KB_OP_MAP: NUMA node or -1; KB_OP_FORK: child's index */
	uint64_t count;  /* payload entries following the command */
};

struct kb_range {
	uint64_t first, last; /* pages, inclusive */
};

struct kb_write {
	uint64_t page;
	uint64_t value;  /* content value stored as 8 little-endian bytes */
	uint32_t offset; /* byte offset in the page */
	uint32_t pad;
};

/* A whole page's bytes, for fill = capture (KB_OP_PAGES). */
struct kb_page {
	uint64_t page;
	uint8_t bytes[4096];
};

struct kb_reply {
	int32_t error;       /* 0 or the errno of the failed call */
	uint32_t pad;
	uint64_t value;      /* op-specific */
	uint64_t elapsed_ns; /* how long the operation itself took, in the process */
	char message[200];   /* what failed, when error != 0 */
};

/* One workload process as the runner sees it. */
struct kb_proc {
	pid_t pid;  /* 0 before it exists; kept after it exits */
	int pidfd;  /* readable once it has exited; -1 when closed */
	int sock;   /* command socket; -1 when closed */
	bool alive; /* started and not yet exited */
};

struct kb_procs {
	const struct workload *wl;
	struct kb_proc *proc; /* wl->nprocs entries, indexed like wl->procs */
	uint64_t *base;       /* per initial process: start of its reserved range */
	int text_fd;          /* memfd holding the normalized workload for exec'ed
				 processes, or -1 (then they are plain forks) */
};

/* Offset of @region in its owner's reserved range, and that range's size.
 * Regions are laid out in file order, 2 MiB aligned, 2 MiB guard gaps. */
uint64_t kb_layout_offset(const struct workload *wl, size_t region);
uint64_t kb_layout_size(const struct workload *wl, size_t proc);
/* The initial process whose regions @proc has (itself, or its fork ancestor). */
size_t kb_proc_root(const struct workload *wl, size_t proc);
bool kb_proc_has_region(const struct workload *wl, size_t proc, size_t region);

int kb_procs_init(struct kb_procs *ps, const struct workload *wl, char *msg, size_t len);
/* Fork initial process @index and have it reserve its range. */
int kb_procs_spawn(struct kb_procs *ps, size_t index, char *msg, size_t len);
/*
 * Send @cmd (+ @payload of @payload_len bytes) to process @index and read the
 * reply. Returns 0 when the operation succeeded, -1 with a message when it
 * failed or the process is gone (@reply holds the process's answer if any).
 */
int kb_proc_call(struct kb_procs *ps, size_t index, const struct kb_cmd *cmd,
		 const void *payload, size_t payload_len, struct kb_reply *reply, char *msg,
		 size_t len);
int kb_proc_fork(struct kb_procs *ps, size_t parent, size_t child, char *msg, size_t len);
/* Process @index execs itself (kb_worker_exec) and reserves its regions'
 * range at the address it had: the caller maps them again. */
int kb_proc_exec(struct kb_procs *ps, size_t index, char *msg, size_t len);
/* A workload exit: the process exits; returns once its memory is gone. */
int kb_proc_exit(struct kb_procs *ps, size_t index, char *msg, size_t len);
/* Teardown: unmerge, unmap, exit. *unmerge_ns gets the MADV_UNMERGEABLE time. */
int kb_proc_quit(struct kb_procs *ps, size_t index, uint64_t *unmerge_ns, char *msg, size_t len);
/* Whether every process the runner believes alive still is: -1 with a
 * message naming the first that died (SIGKILLed by someone), else 0. */
int kb_procs_check_alive(const struct kb_procs *ps, char *msg, size_t len);
/* SIGKILL whatever is still alive and forget it (error paths). */
void kb_procs_kill(struct kb_procs *ps);
void kb_procs_free(struct kb_procs *ps);
/* Address of @region's page 0 in every process that has it. */
uint64_t kb_region_addr(const struct kb_procs *ps, size_t region);

/* The workload process's command loop; never returns. */
void kb_worker_main(const struct workload *wl, size_t proc, int sock) __attribute__((noreturn));
/* In a just-forked child (or a workload process's exec event): exec the
 * running program as workload process @proc of the workload in @text_fd;
 * with @answer the new image first replies to the command that asked for
 * it. Returns only if that fails. */
void kb_worker_exec(const struct workload *wl, size_t proc, int sock, int text_fd, bool answer);

/* ---- kb_pagemap.c: page-level captures ------------------------------------------ */

struct kb_capture {
	struct trace_page *pages;       /* partition captures, in capture order */
	size_t npages, pages_cap;    /* used and allocated entries */
	struct kb_dirty_page *dirty; /* soft-dirty captures, in capture order */
	size_t ndirty, dirty_cap;    /* used and allocated entries */
	int kpageflags_fd;           /* /proc/kpageflags, or -1 */
};

int kb_capture_open(struct kb_capture *c, char *msg, size_t len);
void kb_capture_free(struct kb_capture *c);
/* Append every region page of every live process, tagged with @scan. */
int kb_capture_partition(struct kb_capture *c, const struct kb_procs *ps, uint64_t scan,
			 char *msg, size_t len);
/* If @record, append the soft-dirty pages (tagged @scan); then clear the
 * soft-dirty bits of every live process (clear_refs 4). */
int kb_capture_soft_dirty(struct kb_capture *c, const struct kb_procs *ps, uint64_t scan,
			  bool record, char *msg, size_t len);
/* What backs the whole 2 MiB ranges of a region (kb_huge_census). */
struct kb_huge_census {
	uint64_t ranges;      /* whole 2 MiB ranges in the region */
	uint64_t populated;   /* of those, the ones with a page present */
	uint64_t huge;        /* of those, the ones one huge page maps */
	uint64_t first_small; /* page 0 of the first populated range that is not
				 huge; UINT64_MAX when none */
};
/* Count how @region's 2 MiB ranges are backed in process @proc. 0 or -1. */
int kb_huge_census(struct kb_capture *c, const struct kb_procs *ps, size_t proc, size_t region,
		   struct kb_huge_census *out, char *msg, size_t len);

/* ---- kb_writer.c: continuous writers ------------------------------------------- */

struct kb_cwriter; /* one thread writing at a rate into one process */

/* Start writer @index (when = continuous) writing into its process. */
int kb_cwriter_start(struct kb_cwriter **out, const struct workload *wl, size_t index,
		     const struct kb_procs *ps, char *msg, size_t len);
/* Stop and join it; 0, or -1 with the error it met. Frees it. NULL is fine. */
int kb_cwriter_stop(struct kb_cwriter *w, char *msg, size_t len);
/* Whether it has stopped on an error. */
bool kb_cwriter_failed(struct kb_cwriter *w);

/* ---- kb_run.c: the runner ------------------------------------------------------ */

/* What the runner hands the guardian: this struct in a shared mapping, and
 * the trace (CSV), then npages struct trace_page, then ndirty struct
 * kb_dirty_page in a memfd. */
struct kb_report {
	int status;          /* KB_*; KB_FAILED until the runner sets it */
	bool finished;       /* the runner got as far as writing its results */
	char message[512];   /* with status != KB_OK */
	struct kb_measurement measurement;
	uint64_t invalid_rows;
	uint64_t trace_bytes;
	uint64_t npages, ndirty;
	int32_t live_end;         /* live runs: enum kb_live_end */
	int32_t live_exit_index;  /* live runs: the command that exited, or -1 */
	int32_t live_exit_status; /* its wait status */
};

/* The runner's whole life: knobs, processes, lockstep, teardown, results.
 * Returns the status it also put in @report. */
int kb_runner_main(const struct workload *wl, const struct kb_options *opt,
		   struct kb_report *report, int data_fd);
/* The results a runner hands over: @trace as CSV into @data_fd, then @c's
 * captures (may be NULL); sets the report's sizes and finished. 0 or -1. */
int kb_report_results(struct kb_report *rep, const struct trace *trace,
		      const struct kb_capture *c, int data_fd);

/* ---- kb_session.c: a guarded run of any kind ------------------------------------ */

/*
 * What a guarded run does in its runner process: a workload (kb_run.c) or
 * live commands (kb_live.c). The session around it is the same: lock,
 * sentinel, recovery, refusals, knobs saved, the runner, settle, restore.
 */
struct kb_job {
	/* The runner's whole life; returns the status it also put in @report. */
	int (*main)(const void *arg, const struct kb_options *opt, struct kb_report *report,
		    int data_fd);
	const void *arg;
	uint64_t timeout_ns;   /* the runner's own limit, after which the guardian kills
				  it (with a grace period); 0: none */
	uint64_t lock_wait_ns; /* waiting for another backend, unless opt->lock_wait_ns */
	/* Refuse what does not fit in memory: 0, or -1 with a message. */
	int (*check_memory)(const void *arg, char *msg, size_t len);
	/* Once the runner has ended: what its report says beyond the result
	 * (may be NULL). */
	void (*take_report)(void *out, const struct kb_report *rep);
	void *out;
};

/* kb_run() after its machine checks: everything from the lock on, for @job. */
int kb_session_run(const struct kb_job *job, const struct kb_options *opt, struct kb_result *res,
		   char *msg, size_t msglen);

/* ---- kb_guard.c: the guardian --------------------------------------------------- */

/* Install the signal handlers (SIGINT, SIGTERM, SIGHUP count and are forwarded
 * to the runner, through the sentinel) for the duration of a run; restore the
 * caller's ones. */
void kb_signals_install(void);
void kb_signals_restore(void);
/* A SIGINT/SIGTERM/SIGHUP arrived (in the guardian, or in the runner). */
bool kb_interrupted(void);
/* Make the current process the runner: its own handlers, no forwarding. */
void kb_signals_become_runner(void);
/* Make the current process the sentinel: those signals ignored. */
void kb_signals_become_sentinel(void);

/*
 * One run's processes as the guardian holds them. kb_guard_open() forks the
 * sentinel (kb_sentinel.c), which will fork the runner; from then on,
 * whichever of the guardian and the sentinel outlives the other restores the
 * knobs (kb_recover_saved) and ends the run's processes.
 */
struct kb_guard {
	const struct kb_job *job;
	const struct kb_options *opt;
	struct kb_report *report; /* shared with the runner (MAP_SHARED) */
	int data_fd;              /* the runner's results (memfd) */
	pid_t sentinel;           /* 0 when there is none */
	int sock;                 /* to the sentinel; -1 when closed */
	pid_t runner;             /* 0 until the sentinel has started it */
	int was_subreaper;        /* the caller's PR_GET_CHILD_SUBREAPER */
};

/* Prepare the shared report and fork the sentinel, which holds @lock's open
 * file (so the lock lasts as long as it does), and wait until it has a
 * session of its own. 0, or -1 with a message. */
int kb_guard_open(struct kb_guard *g, const struct kb_job *job, const struct kb_options *opt,
		  char *msg, size_t len);
/* Have the sentinel fork the runner, wait for it and every workload process,
 * read its report into @res. Returns the run's KB_* status with @msg. */
int kb_guard_run(struct kb_guard *g, struct kb_lock *lock, struct kb_result *res, char *msg,
		 size_t len);
/* The guardian has restored everything: dismiss the sentinel, wait for it
 * to exit, free what kb_guard_open() made. Safe on a failed open. */
void kb_guard_close(struct kb_guard *g);

/* ---- kb_sentinel.c: the sentinel ---------------------------------------------- */

/* What the guardian sends the sentinel: one byte each. */
enum kb_sentinel_cmd {
	KB_SENTINEL_START = 'R',   /* fork the runner */
	KB_SENTINEL_TERM = 'T',    /* SIGTERM to the runner (it tears down) */
	KB_SENTINEL_KILL = 'K',    /* SIGKILL to the runner */
	KB_SENTINEL_DISMISS = 'D', /* the guardian restored everything: exit */
};

/* What the sentinel tells the guardian. */
struct kb_sentinel_report {
	int32_t kind;  /* KB_SENTINEL_DETACHED, _STARTED or _ENDED */
	int32_t value; /* the sentinel's pid; the runner's pid; its wait status */
};
#define KB_SENTINEL_STARTED 1  /* the runner runs */
#define KB_SENTINEL_ENDED 2    /* it and every process of its group are gone */
#define KB_SENTINEL_DETACHED 3 /* the sentinel has a session of its own: a kill
				* of the guardian's process group misses it */

/* In the just-forked sentinel: serve @g's guardian over @sock; never
 * returns. */
void kb_sentinel_main(struct kb_guard *g, int sock) __attribute__((noreturn));

/* ---- kb_settle.c, kb_restore.c: after a run ------------------------------------ */

/* After the workload's processes are gone: let ksmd drop their leftover
 * items, then run = 2 if nobody else has pages merged, so that the restored
 * kernel has no stale stable nodes. 0, or -1 with a message. */
int kb_settle(char *msg, size_t len);

/*
 * If the state file (KB_SAVED_FILE) is there, a run has not restored its
 * knobs yet: settle, restore them, note what changed in @rep, remove the
 * file. The caller holds the lock. 0 (also when there was no file: then
 * rep->had_saved is false), or -1 with a message.
 */
int kb_recover_saved(struct kb_restore_report *rep, char *msg, size_t len);
/* "run 1 -> 0, pages_to_scan 5000 -> 100", or "no knob needed it". */
void kb_changes_text(const struct kb_restore_report *rep, char *buf, size_t len);
/* Append one line about a sentinel's rescue to KB_RESCUE_LOG. */
void kb_log_rescue(const char *text);

#endif
