/*
 * guest.h - ksmkit's guest backend: run workloads on the KSM of a second
 * kernel, inside a small qemu guest with as many NUMA nodes as asked for.
 *
 * This machine has one NUMA node, so the kernel's per-node trees
 * (merge_across_nodes = 0) cannot be exercised on it. A guest can: qemu
 * (TCG, the emulator; no KVM) boots one of Debian's kernels directly (an
 * uncompressed vmlinux, PVH entry) with one RAM backend and one -numa node
 * per node, and an initramfs of busybox and ksmkit-guest, a statically
 * linked program running the ordinary backend (backend.h). The host packs
 * the workloads into a second archive appended to that initramfs, and reads
 * every result back from the guest's second serial port. One boot runs any
 * number of workloads, one after the other.
 *
 * The guest is invisible to the host's KSM: qemu is started with
 * mem-merge=off on the machine and merge=off on every RAM backend, and
 * kg_run() checks that qemu's memory carries no mergeable flag on the host
 * (and stops the guest if it ever does). Every run is bounded by a
 * wall-clock timeout, after which the guest is killed with a clear error.
 *
 * Times measured in a guest are emulation times: traces from here have
 * source "guest", and nothing reports a scan speed from them.
 *
 * The assets (the kernels, the base initramfs) come from a directory that
 * guest/prepare fills (`make guest`); without them, or without qemu, kg_run()
 * answers KB_SKIPPED with the reason. Nothing here prints.
 */
#ifndef KSMKIT_GUEST_H
#define KSMKIT_GUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "workload.h"

/* Most NUMA nodes a guest may have. */
#define KG_MAX_NODES 8

/*
 * The kernels a guest boots (--guest ...,kernel=NAME), each a Debian
 * package that guest/prepare fetches (asking `ksmkit-guest --kernels` for
 * this list) into DIR/kernels/NAME/. The first is the default: Debian 12's
 * own kernel, the one of the older semantics (6.1, stable search before the
 * checksum) that a newer host cannot show.
 * X(ENUM, "name", "the package whose dependency is the image")
 */
#define KG_KERNELS(X)                                                                  \
	X(6_1, "6.1", "linux-image-amd64")                                             \
	X(6_12, "6.12", "linux-image-6.12-amd64")

#define KG_KERNEL_ENUM_(id, name, package) KG_KERNEL_##id,
enum kg_kernel { KG_KERNELS(KG_KERNEL_ENUM_) KG_KERNEL_COUNT };
#undef KG_KERNEL_ENUM_

/* "6.1", "6.12"; the package guest/prepare fetches for it. */
const char *kg_kernel_name(enum kg_kernel k);
const char *kg_kernel_package(enum kg_kernel k);

/*
 * The kernels `make kernel` builds (guest/build-kernel): Debian's source of a
 * base release above, with a patch of patches/ applied (none: "upstream"),
 * installed as DIR/kernels/BASE+NAME/ and booted with
 * --guest ...,kernel=BASE+NAME. A built kernel's release is BASE.N+NAME
 * (CONFIG_LOCALVERSION="+NAME", as the backend's smart_scan_policy check
 * reads it: wl_kernel_smart_scan_policy), and the simulator follows it as its
 * base release's row (wl_kernel_from_release) with the row's settings
 * applied to the workload's [global] (wl_apply_global): the policy the
 * patch implements.
 * NAME is the last word of the patch's file name, as build-kernel names it.
 * X(ENUM, "name", base (a KG_KERNELS ENUM), "patch" or NULL,
 *   "settings": [global] lines, "" for none, "what it is")
 */
#define KG_PATCHES(X)                                                                  \
	X(UPSTREAM, "upstream", 6_12, NULL, "",                                        \
	  "Debian's 6.12 source as it is, built with guest/kernel.config")             \
	X(PHASED, "phased", 6_12, "patches/ksm-smart-scan-phased.patch",                \
	  "smart_scan_policy = phased",                                                \
	  "smart_scan's skips phased by the full scan count and the checksum")

/* KG_PATCH_NONE: one of Debian's own kernels, as packaged. */
#define KG_PATCH_ENUM_(id, ...) KG_PATCH_##id,
enum kg_patch { KG_PATCH_NONE, KG_PATCHES(KG_PATCH_ENUM_) KG_PATCH_COUNT };
#undef KG_PATCH_ENUM_

/* One row of KG_PATCHES (@p is not KG_PATCH_NONE). */
struct kg_patch_row {
	const char *name;       /* "phased": kernel=6.12+phased, the release's +phased */
	enum kg_kernel base;    /* the release whose source it patches */
	const char *patch;      /* the patch file in ksmkit's source tree, or NULL */
	const char *settings;   /* what the simulator sets in [global] to follow it */
	const char *doc;
};
const struct kg_patch_row *kg_patch_row(enum kg_patch p);

/*
 * The directory name under DIR/kernels/ of kernel @k patched with @p:
 * "6.12", or "6.12+phased", into @buf. Returns @buf.
 */
const char *kg_kernel_dir_name(enum kg_kernel k, enum kg_patch p, char *buf, size_t len);

/*
 * Which row built the kernel of release @release: one ending in +NAME, NAME
 * a row's ("6.12.117+phased"); KG_PATCH_NONE for any other release (Debian's
 * "6.12.117+deb12-amd64" among them) and for NULL.
 */
enum kg_patch kg_patch_from_release(const char *release);

struct kg_options {
	unsigned nodes;        /* NUMA nodes, 1 to KG_MAX_NODES */
	enum kg_kernel kernel; /* which prepared kernel boots (default 6.1) */
	enum kg_patch patch;   /* built from its source with this row's patch
				  (make kernel), or KG_PATCH_NONE: Debian's */
	uint64_t node_mem;     /* bytes of RAM per node; 0: enough for the workloads */
	uint64_t timeout_ns;   /* the whole guest, wall clock; 0: 60 s to boot and
				  stop, plus every workload's own timeout */
	const char *dir;       /* prepared assets; NULL: kg_default_dir() */
	const char *qemu;      /* the qemu binary; NULL: qemu-system-x86_64 on PATH */
	bool pages;            /* capture the page partition after every scan */
	bool per_batch;        /* rows after every batch too (needs pages_scanned) */
	bool soft_dirty;       /* capture soft-dirty sets per scan interval (the
				  guest's kernel tracks them where the host's may not) */
	bool keep;             /* keep the temporary directory (console log) */
	kb_note_fn note;       /* notes from the host side and the guest; may be NULL */
	void *note_arg;
};

/* One workload's outcome, as kb_run() gives it on a host. */
struct kg_run {
	int status;            /* KB_*: the backend's status inside the guest */
	char message[2048];    /* with status != KB_OK */
	struct kb_result result; /* trace (source "guest"), page captures */
};

struct kg_session {
	char release[128];     /* the guest kernel's uname -r */
	char nodes[64];        /* its NUMA nodes with memory ("0-3") */
	uint64_t wall_ns;      /* qemu's whole life, boot included */
	char workdir[256];     /* the temporary directory, when kept */
	size_t nruns;
	struct kg_run *run;    /* one per workload, in order */
};

/* Defaults: 1 node, kernel 6.1, sizes and timeout computed, no captures. */
void kg_options_init(struct kg_options *opt);

/*
 * The assets directory used when kg_options.dir is NULL: $KSMKIT_GUEST_DIR,
 * else @fallback (the build tree's guest/ for ksmkit itself).
 */
const char *kg_default_dir(const char *fallback);

/*
 * Boot one guest and run @n workloads in it, in order. Returns KB_OK when
 * the guest ran them all (each run has its own status: a refused or failed
 * workload does not stop the others), KB_SKIPPED when this machine cannot
 * run a guest (no qemu, no prepared kernel; @msg says which and how to get
 * it), KB_BAD_INPUT for impossible options or a workload that needs more
 * NUMA nodes than asked for, KB_FAILED when the guest could not start, died,
 * timed out or was seen mergeable on the host. @out is always initialized
 * and owned by the caller afterwards (kg_session_free); after a failure it
 * holds whatever the guest reported before it stopped.
 */
int kg_run(const struct workload *const *wls, size_t n, const struct kg_options *opt,
	   struct kg_session *out, char *msg, size_t len);

void kg_session_free(struct kg_session *s);

/*
 * Parse "nodes=N[,kernel=NAME][,mem=SIZE][,timeout=TIME]" (the --guest
 * argument) into @opt; NAME is a kernel of KG_KERNELS ("6.12") or one built
 * from it ("6.12+phased"). 0, or -1 with the reason in @why.
 */
int kg_parse_spec(const char *spec, struct kg_options *opt, char *why, size_t whylen);

#endif
