/*
 * kg_internal.h - what the host side of the guest backend shares between
 * its files and nobody else sees: the job archive (kg_initrd.c), the qemu
 * process (kg_qemu.c) and the results reader (kg_results.c). kg_session.c
 * puts them together behind guest.h.
 */
#ifndef KSMKIT_KG_INTERNAL_H
#define KSMKIT_KG_INTERNAL_H

#include <stdio.h>
#include <sys/types.h>

#include "guest.h"

#define KG_NSEC UINT64_C(1000000000)
#define KG_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* Format a message into @msg; always returns -1, for `return kg_fail(...)`. */
int kg_fail(char *msg, size_t len, const char *fmt, ...) KG_PRINTF(3, 4);

/* ---- kg_initrd.c: the initramfs of one session -------------------------- */

/*
 * Write @path: the prepared base initramfs @base, then a second cpio
 * archive with /dev/console and the job (kg_proto.h) for @wls. 0, or -1
 * with a message.
 */
int kg_initrd_write(const char *path, const char *base, const struct workload *const *wls,
		    size_t n, const struct kg_options *opt, char *msg, size_t len);

/* ---- kg_qemu.c: the emulator ---------------------------------------------- */

struct kg_qemu {
	pid_t pid;          /* 0 before the start and after the end */
	int status;         /* wait status once it ended */
	bool timed_out;     /* killed at the deadline */
	bool mergeable;     /* killed: its memory was mergeable on the host */
};

/*
 * Start qemu: @kernel, @initrd, @nodes nodes of @node_mem bytes each,
 * console to @console, results port to @results; its own output to @log.
 * 0, or -1 with a message.
 */
int kg_qemu_start(struct kg_qemu *q, const char *qemu, const char *kernel, const char *initrd,
		  unsigned nodes, uint64_t node_mem, const char *console, const char *results,
		  const char *log, char *msg, size_t len);
/* Wait until qemu exits, or kill it at @deadline_ns (CLOCK_MONOTONIC) or
 * when it shows mergeable memory. 0 once it ended (see @q), -1 on error. */
int kg_qemu_wait(struct kg_qemu *q, uint64_t deadline_ns, char *msg, size_t len);
uint64_t kg_now_ns(void);

/* ---- kg_results.c: what the guest wrote ---------------------------------------- */

/*
 * Read the results file @path into @s (runs appended as they appear).
 * Returns 1 when the guest finished ("done"), 0 when it stopped before,
 * -1 when the file is not in the format (with a message).
 */
int kg_results_read(const char *path, struct kg_session *s, const struct kg_options *opt,
		    char *msg, size_t len);

#endif
