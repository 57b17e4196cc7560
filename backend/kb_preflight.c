/*
 * kb_preflight.c - may this run start on this machine now?
 *
 * Three kinds of answer. Skip (KB_SKIPPED, automake's 77): not root, no KSM,
 * a region placed on a NUMA node this machine does not have (or a build
 * without libnuma), no THP for --measure thp or a thp = always region, no
 * soft-dirty tracking in the kernel for a soft-dirty capture, no
 * pages_scanned counter (before 6.6) for per-batch rows, a knob the workload
 * sets or PR_SET_MEMORY_MERGE missing from this kernel (an older one, such
 * as the NUMA guest's 6.1), userfaultfd or its write-protect faults
 * (UFFD_FEATURE_PAGEFAULT_FLAG_WP) missing for a uffd-wp event, a prctl
 * region in a build with AddressSanitizer. Refuse (a failure): someone
 * else uses KSM, because their pages would inflate every global counter and
 * run = 2 would unmerge them; or the workload wants more than 80% of
 * MemAvailable. Bad input: a measurement the workload cannot provide, or a
 * smart_scan_policy this kernel was not built with.
 *
 * "Someone else" is found the way an administrator would: the global
 * counters (pages_shared, pages_sharing, ksm_zero_pages) and every process's
 * /proc/PID/ksm_stat (rmap items, merged pages, the ksm_mergeable and
 * ksm_merge_any lines of 6.14+), with the "mg" flag of /proc/PID/smaps
 * VmFlags where ksm_stat has no ksm_mergeable line. A qemu guest, whose RAM
 * qemu marks mergeable by default, is the usual case.
 */
#include "config.h"
#include "kb_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifdef HAVE_LINUX_USERFAULTFD_H
#include <linux/userfaultfd.h>
#endif

#ifndef PR_GET_MEMORY_MERGE
#define PR_GET_MEMORY_MERGE 68
#endif

#define THP_DIR "/sys/kernel/mm/transparent_hugepage"
#define THP_ENABLED THP_DIR "/enabled"
#define NODE_HAS_MEMORY "/sys/devices/system/node/has_memory"
#define MEMORY_SHARE_PERCENT 80

/* ---- the machine ------------------------------------------------------------ */

/* Whether @node is in a sysfs node list such as "0-1,3". */
static bool node_in_list(const char *list, int node)
{
	const char *p = list;

	while (*p && isdigit((unsigned char)*p)) {
		char *end;
		long first = strtol(p, &end, 10), last = first;

		if (*end == '-')
			last = strtol(end + 1, &end, 10);
		if (node >= first && node <= last)
			return true;
		if (*end != ',')
			break;
		p = end + 1;
	}
	return false;
}

/* The nodes with memory, as sysfs lists them ("0-1,3"); "0" without NUMA. */
static void nodes_with_memory(char *list, size_t len)
{
	if (kb_read_file(NODE_HAS_MEMORY, list, len) <= 0)
		snprintf(list, len, "0");
}

bool kb_node_has_memory(int node)
{
	char list[256];

	nodes_with_memory(list, sizeof list);
	return node >= 0 && node_in_list(list, node);
}

int kb_node_count(void)
{
	char list[256];
	int count = 0;

	nodes_with_memory(list, sizeof list);
	for (int node = 0; node < 1024; node++)
		count += node_in_list(list, node);
	return count ? count : 1;
}

/* The word in brackets of a sysfs choice ("always [madvise] never"), into
 * @out; "missing" when the file is. */
static void thp_setting(const char *name, char *out, size_t len)
{
	char path[128], text[128], *open, *close;

	snprintf(path, sizeof path, THP_DIR "/%s", name);
	if (kb_read_file(path, text, sizeof text) <= 0 || !(open = strchr(text, '[')) ||
	    !(close = strchr(open, ']'))) {
		snprintf(out, len, "missing");
		return;
	}
	snprintf(out, len, "%.*s", (int)(close - open - 1), open + 1);
}

void kb_thp_settings(char *out, size_t len)
{
	char enabled[32], defrag[32];

	thp_setting("enabled", enabled, sizeof enabled);
	thp_setting("defrag", defrag, sizeof defrag);
	snprintf(out, len, THP_DIR "/enabled is %s, defrag %s", enabled, defrag);
}

static bool thp_available(void)
{
	char enabled[32];

	thp_setting("enabled", enabled, sizeof enabled);
	return strcmp(enabled, "never") != 0 && strcmp(enabled, "missing") != 0;
}

/* A thp = always region, which the simulator backs with huge pages. */
static const struct wl_region *huge_region(const struct workload *wl)
{
	for (size_t i = 0; i < wl->nregions; i++)
		if (wl->regions[i].thp == WL_THP_ALWAYS)
			return &wl->regions[i];
	return NULL;
}

/*
 * Whether this kernel tracks soft-dirty bits (CONFIG_MEM_SOFT_DIRTY): a page
 * just written in a new mapping reads back soft-dirty in pagemap (bit 55)
 * exactly when it does.
 */
static bool soft_dirty_available(void)
{
	uint64_t entry = 0;
	bool dirty = false;
	char *page = mmap(NULL, KB_PAGE_SIZE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd;

	if (page == MAP_FAILED)
		return false;
	page[0] = 1;
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (pread(fd, &entry, sizeof entry,
			  (off_t)((uintptr_t)page / KB_PAGE_SIZE * sizeof entry)) == sizeof entry)
			dirty = (entry >> 55) & 1;
		close(fd);
	}
	munmap(page, KB_PAGE_SIZE);
	return dirty;
}

static int check_nodes(const struct workload *wl, char *msg, size_t len)
{
	for (size_t i = 0; i < wl->nregions; i++) {
		const struct wl_region *r = &wl->regions[i];

		if (r->node < 0)
			continue;
#ifndef HAVE_NUMA
		return kb_fail(msg, len,
			       "%s:%u: [region %s] node = %d: NUMA placement not built (ksmkit "
			       "was configured --without-numa); skipped",
			       wl->path, r->line, r->name, r->node);
#else
		if (!kb_node_has_memory(r->node))
			return kb_fail(msg, len,
				       "%s:%u: [region %s] node = %d: this machine has no NUMA node %d "
				       "with memory (it has %d); skipped",
				       wl->path, r->line, r->name, r->node, r->node, kb_node_count());
#endif
	}
	return 0;
}

/* Whether setup makes some region mergeable (a merge measurement needs it). */
static bool merges_at_setup(const struct workload *wl)
{
	for (size_t i = 0; i < wl->nregions; i++)
		if (wl->regions[i].merge != WL_MERGE_NONE && wl->regions[i].fill != WL_FILL_NONE)
			return true;
	return false;
}

static bool has_write_event(const struct workload *wl)
{
	for (size_t i = 0; i < wl->nevents; i++)
		if (wl->events[i].action == WL_ACT_WRITE)
			return true;
	return false;
}

/* What the measurement needs from the workload (bad input when missing). */
static int check_measurement(const struct workload *wl, enum kb_measure m, char *msg, size_t len)
{
	switch (m) {
	case KB_MEASURE_NONE:
		return KB_OK;
	case KB_MEASURE_MERGE:
	case KB_MEASURE_THP:
	case KB_MEASURE_UNMERGE:
		if (!merges_at_setup(wl)) {
			kb_fail(msg, len, "--measure %s: %s has no region with contents that is "
					  "mergeable at setup",
				kb_measure_name(m), wl->path);
			return KB_BAD_INPUT;
		}
		if (m != KB_MEASURE_UNMERGE && wl->stop == WL_STOP_SCANS && wl->stop_scans < 2) {
			kb_fail(msg, len, "--measure %s: %s stops before the 2 full scans the "
					  "measurement waits for",
				kb_measure_name(m), wl->path);
			return KB_BAD_INPUT;
		}
		return KB_OK;
	case KB_MEASURE_COW:
		if (!has_write_event(wl)) {
			kb_fail(msg, len, "--measure cow: %s has no [event] with action = write "
					  "(the writes whose COW breaks are timed)",
				wl->path);
			return KB_BAD_INPUT;
		}
		return KB_OK;
	}
	return KB_OK;
}

/*
 * A capture region is written with the captured bytes: a capture of tokens
 * alone (no --bytes) cannot be replayed here, nor one in simulated time
 * (every = time: the runner applies steps at scan points only). Bad input.
 */
static int check_captures(const struct workload *wl, char *msg, size_t len)
{
	for (size_t i = 0; i < wl->nregions; i++) {
		const struct wl_capture *cap = wl->regions[i].capture;

		if (cap && cap->by_time) {
			kb_fail(msg, len, "%s:%u: [region %s] every = time replays the snapshots "
				"in the simulator's time; on the kernel snapshots are applied at "
				"scan points: say every = N or every = capture", wl->path,
				cap->line, wl->regions[i].name);
			return KB_BAD_INPUT;
		}
		if (cap && !cap->with_bytes) {
			kb_fail(msg, len, "%s:%u: [region %s] capture = %s holds content tokens "
				"only: the kernel is given the pages' bytes, so capture with "
				"--bytes (the simulator replays it as it is)", wl->path, cap->line,
				wl->regions[i].name, cap->path);
			return KB_BAD_INPUT;
		}
	}
	return KB_OK;
}

/* The first uffd-wp event of @wl, or NULL. */
static const struct wl_event *uffd_wp_event(const struct workload *wl)
{
	for (size_t i = 0; i < wl->nevents; i++)
		if (wl->events[i].action == WL_ACT_UFFD_WP)
			return &wl->events[i];
	return NULL;
}

/* What test_unmerge_uffd_wp probes: userfaultfd, then its write-protect
 * faults. 0 when a uffd-wp event can run here (or there is none). */
static int check_uffd_wp(const struct workload *wl, char *msg, size_t len)
{
	const struct wl_event *ev = uffd_wp_event(wl);
	const char *lacks = NULL;

	if (!ev)
		return 0;
#ifdef HAVE_LINUX_USERFAULTFD_H
	{
		struct uffdio_api api = { .api = UFFD_API,
					  .features = UFFD_FEATURE_PAGEFAULT_FLAG_WP };
		int fd = (int)syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);

		if (fd < 0)
			lacks = "userfaultfd(2) (CONFIG_USERFAULTFD is off, or it is not allowed)";
		else if (ioctl(fd, UFFDIO_API, &api) != 0 ||
			 !(api.features & UFFD_FEATURE_PAGEFAULT_FLAG_WP))
			lacks = "UFFD_FEATURE_PAGEFAULT_FLAG_WP (write-protect faults)";
		if (fd >= 0)
			close(fd);
	}
#else
	lacks = "userfaultfd support (built without linux/userfaultfd.h)";
#endif
	if (!lacks)
		return 0;
	return kb_fail(msg, len, "%s:%u: [event %s] action = uffd-wp: this kernel has no %s; "
		       "skipped", wl->path, ev->line, ev->name, lacks);
}

/*
 * A smart_scan_policy other than upstream is the simulator's, unless this
 * kernel was built with it (wl_kernel_smart_scan_policy reads its release):
 * any other kernel would run its own countdown and answer for another
 * policy. Bad input, since no machine without that kernel can run it.
 */
static int check_smart_scan_policy(const struct workload *wl, char *msg, size_t len)
{
	const char *name = wl_smart_scan_policy_name(wl->smart_scan_policy);
	struct utsname u;

	if (wl->smart_scan_policy == WL_SMART_SCAN_UPSTREAM)
		return KB_OK;
	if (uname(&u) == 0 && wl_kernel_smart_scan_policy(u.release) == wl->smart_scan_policy)
		return KB_OK;
	kb_fail(msg, len, "%s:%u: [global] smart_scan_policy = %s: this kernel (%s) runs "
			  "upstream's smart scan; the policy is the simulator's (ksmkit sim), or a "
			  "guest kernel built with its patch (a release ending in +%s, as in "
			  "--guest nodes=1,kernel=6.12+%s)",
		wl->path, wl->smart_scan_policy_line, name, uname(&u) == 0 ? u.release : "?", name,
		name);
	return KB_BAD_INPUT;
}

int kb_check_root_and_ksm(char *msg, size_t len)
{
	if (geteuid() != 0) {
		kb_fail(msg, len, "ksmkit run needs root: KSM's knobs are root's, and only root "
				  "sees page frames in pagemap; skipped");
		return KB_SKIPPED;
	}
	if (access(KB_KSM_DIR "/run", F_OK) != 0) {
		kb_fail(msg, len, "this kernel has no KSM (no " KB_KSM_DIR
				  ": CONFIG_KSM is off); skipped");
		return KB_SKIPPED;
	}
	return KB_OK;
}

int kb_check_machine(const struct workload *wl, const struct kb_options *opt, char *msg,
		     size_t len)
{
	int status = check_measurement(wl, opt->measure, msg, len);

	if (status == KB_OK)
		status = check_captures(wl, msg, len);
	if (status == KB_OK)
		status = check_smart_scan_policy(wl, msg, len);
	if (status != KB_OK)
		return status;
	status = kb_check_root_and_ksm(msg, len);
	if (status != KB_OK)
		return status;
	if (wl->knob_given[WL_KNOB_MERGE_ACROSS_NODES] && !kb_knob_exists("merge_across_nodes")) {
		kb_fail(msg, len, "%s: [global] merge_across_nodes: this kernel has no such knob "
				  "(CONFIG_NUMA is off); skipped",
			wl->path);
		return KB_SKIPPED;
	}
	for (int k = 0; k < WL_KNOB_COUNT; k++) {
		const char *since;

		if (!wl->knob_given[k] || kb_knob_exists(wl_knob_info(k)->name))
			continue;
		since = wl_export_since(wl_knob_info(k)->name);
		kb_fail(msg, len, "%s: [global] %s: this kernel has no such knob%s%s%s; skipped",
			wl->path, wl_knob_info(k)->name, since ? " (it came in " : "",
			since ? since : "", since ? ")" : "");
		return KB_SKIPPED;
	}
	for (size_t i = 0; i < wl->nregions; i++) {
		if (wl->regions[i].merge != WL_MERGE_PRCTL ||
		    prctl(PR_GET_MEMORY_MERGE, 0, 0, 0, 0) >= 0 || errno != EINVAL)
			continue;
		kb_fail(msg, len, "%s:%u: [region %s] merge = prctl: this kernel has no "
				  "PR_SET_MEMORY_MERGE (it came in 6.4); skipped",
			wl->path, wl->regions[i].line, wl->regions[i].name);
		return KB_SKIPPED;
	}
#ifdef __SANITIZE_ADDRESS__
	/* The workload processes carry ASan's shadow mapping (about 15 TB of
	 * private anonymous memory): PR_SET_MEMORY_MERGE takes it in, and
	 * unmerging walks it one address at a time, for minutes a run. */
	for (size_t i = 0; i < wl->nregions; i++) {
		if (wl->regions[i].merge != WL_MERGE_PRCTL)
			continue;
		kb_fail(msg, len, "%s:%u: [region %s] merge = prctl: not under AddressSanitizer "
				  "(its shadow mapping would be merged, and takes minutes to "
				  "unmerge); skipped",
			wl->path, wl->regions[i].line, wl->regions[i].name);
		return KB_SKIPPED;
	}
#endif
	if (check_nodes(wl, msg, len) != 0 || check_uffd_wp(wl, msg, len) != 0)
		return KB_SKIPPED;
	if (opt->per_batch && !kb_knob_exists("pages_scanned")) {
		kb_fail(msg, len, "--per-batch: this kernel has no " KB_KSM_DIR "/pages_scanned "
				  "(it came in 6.6), so the end of a batch cannot be seen; skipped");
		return KB_SKIPPED;
	}
	if (opt->soft_dirty && !soft_dirty_available()) {
		kb_fail(msg, len, "--soft-dirty: this kernel does not track soft-dirty bits "
				  "(CONFIG_MEM_SOFT_DIRTY is off); skipped");
		return KB_SKIPPED;
	}
	if (opt->measure == KB_MEASURE_THP && !thp_available()) {
		kb_fail(msg, len, "--measure thp: transparent huge pages are not available "
				  "(" THP_ENABLED " is [never] or missing); skipped");
		return KB_SKIPPED;
	}
	if (huge_region(wl) && !thp_available()) {
		kb_fail(msg, len, "%s:%u: [region %s] thp = always: transparent huge pages are not "
				  "available (" THP_ENABLED " is [never] or missing); skipped",
			wl->path, huge_region(wl)->line, huge_region(wl)->name);
		return KB_SKIPPED;
	}
	return KB_OK;
}

/* ---- other KSM users ---------------------------------------------------------- */

bool kb_pid_has_mergeable_vma(pid_t pid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/smaps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && getline(&line, &cap, f) > 0)
		if (strncmp(line, "VmFlags:", 8) == 0 && strstr(line + 8, " mg"))
			found = true;
	free(line);
	fclose(f);
	return found;
}

/* A process other than us and outside @our_pgid, or 0 at the end. */
static pid_t next_other_pid(DIR *proc, pid_t our_pgid)
{
	struct dirent *de;

	while ((de = readdir(proc)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid == getpid())
			continue;
		if (our_pgid > 0 && getpgid((pid_t)pid) == our_pgid)
			continue;
		return (pid_t)pid;
	}
	return 0;
}

static bool uses_ksm(pid_t pid, struct trace_proc_stat *ps)
{
	bool has_mergeable_line = false;
	const int64_t *f = ps->field;

	if (kb_read_ksm_stat(pid, ps, &has_mergeable_line) != 0)
		return false; /* gone, or a kernel thread: no mm */
	if (f[TRACE_KSM_RMAP_ITEMS] > 0 || f[TRACE_KSM_MERGING_PAGES] > 0 ||
	    f[TRACE_KSM_ZERO_PAGES_PROC] > 0 || f[TRACE_KSM_MERGE_ANY] || f[TRACE_KSM_MERGEABLE])
		return true;
	return !has_mergeable_line && kb_pid_has_mergeable_vma(pid);
}

static int64_t read_counter(const char *name)
{
	char path[128], text[32];

	snprintf(path, sizeof path, KB_KSM_DIR "/%s", name);
	if (kb_read_file(path, text, sizeof text) <= 0)
		return 0;
	return strtoll(text, NULL, 10);
}

int kb_check_others(char *msg, size_t len)
{
	int64_t shared = read_counter("pages_shared"), sharing = read_counter("pages_sharing");
	int64_t zero = read_counter("ksm_zero_pages");
	DIR *proc = opendir("/proc");
	unsigned users = 0;
	pid_t pid;

	if (!proc)
		return kb_fail(msg, len, "cannot list /proc: %s", strerror(errno));
	if (msg && len)
		msg[0] = '\0';
	if (shared || sharing || zero)
		kb_append(msg, len,
			  "pages are already merged by someone else (pages_shared %" PRId64
			  ", pages_sharing %" PRId64 ", ksm_zero_pages %" PRId64 ")",
			  shared, sharing, zero);
	while ((pid = next_other_pid(proc, 0)) != 0) {
		struct trace_proc_stat ps;
		char comm[32];

		if (!uses_ksm(pid, &ps))
			continue;
		kb_comm_of(pid, comm, sizeof comm);
		if (users++ < 8)
			kb_append(msg, len,
				  "another process has mergeable memory: pid %d (%s), ksm_rmap_items "
				  "%" PRId64 ", ksm_merging_pages %" PRId64,
				  (int)pid, comm, ps.field[TRACE_KSM_RMAP_ITEMS],
				  ps.field[TRACE_KSM_MERGING_PAGES]);
	}
	closedir(proc);
	if (users > 8)
		kb_append(msg, len, "and %u more processes", users - 8);
	return users || shared || sharing || zero ? 1 : 0;
}

bool kb_others_have_merged(pid_t our_pgid, char *who, size_t len)
{
	DIR *proc = opendir("/proc");
	bool found = false;
	pid_t pid;

	if (!proc)
		return true; /* cannot tell: assume the worst */
	while (!found && (pid = next_other_pid(proc, our_pgid)) != 0) {
		struct trace_proc_stat ps;
		bool has_line;
		char comm[32];

		if (kb_read_ksm_stat(pid, &ps, &has_line) != 0 ||
		    (ps.field[TRACE_KSM_MERGING_PAGES] <= 0 && ps.field[TRACE_KSM_ZERO_PAGES_PROC] <= 0))
			continue;
		kb_comm_of(pid, comm, sizeof comm);
		snprintf(who, len, "pid %d (%s) has %" PRId64 " merged pages", (int)pid, comm,
			 ps.field[TRACE_KSM_MERGING_PAGES] + ps.field[TRACE_KSM_ZERO_PAGES_PROC]);
		found = true;
	}
	closedir(proc);
	return found;
}

/* ---- memory ------------------------------------------------------------------ */

static int mem_available(uint64_t *bytes)
{
	char text[4096], *p;

	if (kb_read_file("/proc/meminfo", text, sizeof text) <= 0)
		return -1;
	p = strstr(text, "MemAvailable:");
	if (!p)
		return -1;
	*bytes = strtoull(p + strlen("MemAvailable:"), NULL, 10) * 1024;
	return 0;
}

int kb_check_memory_need(uint64_t need, const char *what, char *msg, size_t len)
{
	uint64_t avail;
	char a[32], b[32];

	if (mem_available(&avail) != 0)
		return kb_fail(msg, len, "cannot read MemAvailable from /proc/meminfo");
	if (need / MEMORY_SHARE_PERCENT > avail / 100)
		return kb_fail(msg, len,
			       "%s needs %s of memory, more than %d%% of MemAvailable (%s): "
			       "refusing to run it",
			       what, kb_size_text(need, a, sizeof a), MEMORY_SHARE_PERCENT,
			       kb_size_text(avail, b, sizeof b));
	return 0;
}

int kb_check_memory(const struct workload *wl, char *msg, size_t len)
{
	uint64_t need = 0;

	for (size_t i = 0; i < wl->nregions; i++)
		if (wl->regions[i].fill != WL_FILL_NONE)
			need += wl->regions[i].pages * KB_PAGE_SIZE;
	return kb_check_memory_need(need, wl->path, msg, len);
}
