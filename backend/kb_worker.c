/*
 * kb_worker.c - inside a workload process: execute the runner's commands.
 *
 * The process is the runner's program exec'ed afresh (kb_worker_exec; a
 * constructor here takes over before main), so no page of it is shared with
 * the runner or the guardian: with prctl merging on, KSM may merge any page
 * of the process, and a page still shared with them after a fork would
 * become a KSM page they map too, which no run = 2 can free while they live.
 * It receives the workload as text and parses it again. Processes made by
 * fork events are plain forks of it, sharing pages as the workload says. If
 * the exec fails, the process is a plain fork of the runner instead. An exec
 * event execs the process again the same way (its pid stays, its memory is
 * new), and the new image answers the exec command; the runner then sets
 * its regions up again at the same addresses.
 *
 * It owns nothing but its socket: it closes every other file descriptor, ignores
 * the signals a terminal or a stray kill would send (the runner decides when
 * it ends) and reaps its own children automatically. It maps its regions in
 * one call each (never in small pieces), fills them with the content
 * generator's bytes (content.h: value V is the same 4 KiB the simulator
 * assumes), places them on NUMA nodes with mbind(), advises THP, marks them
 * mergeable with madvise() or prctl(), writes, unmerges, discards
 * (MADV_DONTNEED), protects (mprotect), write-protects with userfaultfd,
 * unmaps and forks as told. A write into a region it has protected goes
 * through /proc/self/mem, which forces it (FOLL_FORCE) as the kernel's own
 * selftests do. Operations are timed here, next to the memory, so
 * measurements do not include the command's round trip.
 *
 * When its socket reaches end of file, the runner is gone (killed, perhaps):
 * the process unmerges its pages and exits, so nothing of the run stays
 * merged. The same happens on a teardown command.
 */
#include "config.h"
#include "kb_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef HAVE_LINUX_USERFAULTFD_H
#include <linux/userfaultfd.h>
#endif

#ifdef HAVE_NUMA
#include <numaif.h>
#endif

#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67
#endif

/* The process's view of itself. */
struct worker {
	const struct workload *wl;
	size_t proc;    /* its index in wl->procs */
	int sock;       /* its command socket */
	uint8_t *base;  /* start of the reserved range holding its regions */
	uint64_t size;  /* length of that range */
	uint8_t *prot;  /* per region: enum wl_prot it was last given (NULL: all rw) */
	int mem_fd;     /* /proc/self/mem for writes into protected regions, or -1 */
	int uffd;       /* its userfaultfd, once a region is write-protected, or -1 */
};

/*
 * Leave at once, bypassing exit hooks: in a sanitizer build _exit() would
 * leak-check the process (the parsed workload is never freed, on purpose:
 * the process ends with it) and print reports nobody asked for.
 */
static void __attribute__((noreturn)) exit_now(void)
{
	syscall(SYS_exit_group, 0);
	_exit(0); /* not reached */
}

/* What a command handler wants done after it ran. */
enum after { AFTER_REPLY, AFTER_REPLY_EXIT, AFTER_NOTHING };

static int reply_error(struct kb_reply *reply, int err, const char *fmt, ...) KB_PRINTF(3, 4);

static int reply_error(struct kb_reply *reply, int err, const char *fmt, ...)
{
	va_list ap;
	size_t used;

	va_start(ap, fmt);
	vsnprintf(reply->message, sizeof reply->message, fmt, ap);
	va_end(ap);
	used = strlen(reply->message);
	snprintf(reply->message + used, sizeof reply->message - used, ": %s", strerror(err));
	reply->error = err ? err : EIO;
	return -1;
}

static uint8_t *region_start(const struct worker *w, size_t region)
{
	return w->base + kb_layout_offset(w->wl, region);
}

static void keep_only(int fd)
{
	if (fd > 3)
		close_range(3, (unsigned)fd - 1, 0);
	close_range((unsigned)fd + 1, ~0u, 0);
}

static void become_worker(struct worker *w)
{
	const char *wl_name = w->wl->procs[w->proc].name;
	size_t n = strlen(wl_name);
	struct sigaction sa;
	char name[16];

	keep_only(w->sock);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	sigaction(SIGTTOU, &sa, NULL);
	/* Children of fork events are reaped by the kernel as they exit. */
	sigaction(SIGCHLD, &sa, NULL);
	/* "wl:NAME", cut to the 15 bytes a command name holds. */
	if (n > sizeof name - 4)
		n = sizeof name - 4;
	memcpy(name, "wl:", 3);
	memcpy(name + 3, wl_name, n);
	name[3 + n] = '\0';
	prctl(PR_SET_NAME, name, 0, 0, 0);
}

/* ---- the commands ---------------------------------------------------------- */

/* The range of an exec'ed process: where its first image had it. */
static int reserve_at(struct worker *w, uint64_t at, uint64_t size, struct kb_reply *reply)
{
	uint8_t *p = mmap((void *)(uintptr_t)at, size, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return reply_error(reply, errno, "mmap of %llu bytes of address space at %#llx "
				   "after exec", (unsigned long long)size, (unsigned long long)at);
	w->base = p;
	w->size = size;
	reply->value = (uint64_t)(uintptr_t)p;
	return 0;
}

static int do_reserve(struct worker *w, const struct kb_cmd *cmd, struct kb_reply *reply)
{
	uint64_t size = kb_layout_size(w->wl, kb_proc_root(w->wl, w->proc));
	uint8_t *p, *base;
	uint64_t head;

	if (cmd->flags & KB_CMD_AT)
		return reserve_at(w, cmd->count, size, reply);
	p = mmap(NULL, size + KB_HUGE_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED)
		return reply_error(reply, errno, "mmap of %llu bytes of address space",
				   (unsigned long long)size);
	/* Keep a 2 MiB aligned range of @size and give back the rest. */
	base = (uint8_t *)(((uintptr_t)p + KB_HUGE_SIZE - 1) & ~(uintptr_t)(KB_HUGE_SIZE - 1));
	head = (uint64_t)(base - p);
	if (head)
		munmap(p, head);
	if (KB_HUGE_SIZE - head)
		munmap(base + size, KB_HUGE_SIZE - head);
	w->base = base;
	w->size = size;
	reply->value = (uint64_t)(uintptr_t)base;
	return 0;
}

#ifdef HAVE_NUMA
static int bind_to_node(void *addr, uint64_t len, int node, struct kb_reply *reply)
{
	unsigned long mask[16] = { 0 };
	const unsigned bits = 8 * sizeof mask[0];

	if (node < 0 || (unsigned)node >= bits * 16)
		return reply_error(reply, EINVAL, "NUMA node %d", node);
	mask[(unsigned)node / bits] = 1UL << ((unsigned)node % bits);
	if (mbind(addr, len, MPOL_BIND, mask, bits * 16, 0) != 0)
		return reply_error(reply, errno, "mbind to node %d", node);
	return 0;
}
#endif

static int do_map(struct worker *w, const struct kb_cmd *cmd, struct kb_reply *reply)
{
	const struct wl_region *r = &w->wl->regions[cmd->region];
	uint64_t len = r->pages * KB_PAGE_SIZE;
	uint8_t *addr = region_start(w, cmd->region);
	int advice = (cmd->flags & KB_CMD_HUGE) ? MADV_HUGEPAGE : MADV_NOHUGEPAGE;

	/* One mmap per region: large chunks, never a page at a time. */
	if (mmap(addr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
		 0) == MAP_FAILED)
		return reply_error(reply, errno, "mmap of region %s (%llu bytes)", r->name,
				   (unsigned long long)len);
	/* A kernel without THP answers EINVAL: there is nothing to advise. */
	if (madvise(addr, len, advice) != 0 && errno != EINVAL)
		return reply_error(reply, errno, "madvise(%s) on region %s",
				   advice == MADV_HUGEPAGE ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE",
				   r->name);
	if (cmd->arg >= 0) {
#ifdef HAVE_NUMA
		return bind_to_node(addr, len, cmd->arg, reply);
#else
		return reply_error(reply, ENOSYS, "NUMA placement of region %s not built", r->name);
#endif
	}
	return 0;
}

static int do_fill(struct worker *w, const struct kb_cmd *cmd, struct kb_reply *reply)
{
	const struct wl_region *r = &w->wl->regions[cmd->region];
	uint8_t *addr = region_start(w, cmd->region);

	(void)reply;
	if (r->fill == WL_FILL_CAPTURE)
		return 0; /* the runner sends the captured bytes (KB_OP_PAGES) */
	for (uint64_t i = 0; i < r->pages; i++) {
		uint64_t value;

		if (!wl_region_initial_value(r, i, &value))
			continue;
		if (r->fill == WL_FILL_ZERO)
			addr[i * KB_PAGE_SIZE] = 0; /* a real zeroed page, not the zero page */
		else
			content_fill(addr + i * KB_PAGE_SIZE, value);
	}
	return 0;
}

/*
 * After PR_SET_MEMORY_MERGE 1 every VMA of this process is mergeable, the
 * worker's own heap, stack and libraries included, which the workload does
 * not describe (and the simulator does not model): clear VM_MERGEABLE on
 * everything outside the regions' reservation again. MMF_VM_MERGE_ANY stays
 * set, so the process still reports ksm_merge_any: yes. Reads the maps with
 * a stack buffer: no allocation may create a new (mergeable) mapping here.
 */
static void unmerge_own_memory(const struct worker *w)
{
	char buf[8192];
	size_t have = 0;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	uintptr_t lo = (uintptr_t)w->base, hi = lo + w->size;

	if (fd < 0)
		return;
	for (;;) {
		ssize_t got = read(fd, buf + have, sizeof buf - 1 - have);
		char *line = buf, *nl;

		if (got <= 0)
			break;
		have += (size_t)got;
		buf[have] = '\0';
		while ((nl = strchr(line, '\n')) != NULL) {
			unsigned long start, end;

			if (sscanf(line, "%lx-%lx", &start, &end) == 2 && (end <= lo || start >= hi))
				madvise((void *)start, end - start, MADV_UNMERGEABLE);
			line = nl + 1;
		}
		have = strlen(line);
		memmove(buf, line, have);
	}
	close(fd);
}

#ifndef PR_GET_MEMORY_MERGE
#define PR_GET_MEMORY_MERGE 68
#endif

/* PR_SET_MEMORY_MERGE @on; or, @inherited, the flag as exec left it. */
static int set_memory_merge(struct worker *w, bool on, bool inherited, struct kb_reply *reply)
{
	if (inherited) {
		/* an error means no prctl merging at all: nothing of ours is mergeable */
		if (prctl(PR_GET_MEMORY_MERGE, 0, 0, 0, 0) == 1)
			unmerge_own_memory(w);
		return 0;
	}
	if (prctl(PR_SET_MEMORY_MERGE, on ? 1 : 0, 0, 0, 0) != 0)
		return reply_error(reply, errno, "prctl(PR_SET_MEMORY_MERGE, %d)", on);
	if (on)
		unmerge_own_memory(w);
	return 0;
}

/* What a range command does to one run of pages: 0, or -1 with errno. */
static int range_call(enum kb_op op, uint8_t *start, size_t len)
{
	switch (op) {
	case KB_OP_UNMAP: return munmap(start, len);
	case KB_OP_MERGE: return madvise(start, len, MADV_MERGEABLE);
	case KB_OP_UNMERGE: return madvise(start, len, MADV_UNMERGEABLE);
	case KB_OP_DISCARD: return madvise(start, len, MADV_DONTNEED);
	default: errno = EINVAL; return -1;
	}
}

static const char *range_call_name(enum kb_op op)
{
	switch (op) {
	case KB_OP_UNMAP: return "munmap";
	case KB_OP_MERGE: return "madvise(MADV_MERGEABLE)";
	case KB_OP_UNMERGE: return "madvise(MADV_UNMERGEABLE)";
	case KB_OP_DISCARD: return "madvise(MADV_DONTNEED)";
	default: return "?";
	}
}

static int do_ranges(struct worker *w, const struct kb_cmd *cmd, const struct kb_range *ranges,
		     struct kb_reply *reply)
{
	const struct wl_region *r = &w->wl->regions[cmd->region];
	uint8_t *addr = region_start(w, cmd->region);

	if ((cmd->op == KB_OP_MERGE || cmd->op == KB_OP_UNMERGE) && (cmd->flags & KB_CMD_PRCTL))
		return set_memory_merge(w, cmd->op == KB_OP_MERGE, cmd->flags & KB_CMD_INHERITED,
					reply);
	for (uint64_t i = 0; i < cmd->count; i++) {
		uint8_t *start = addr + ranges[i].first * KB_PAGE_SIZE;
		size_t len = (size_t)((ranges[i].last - ranges[i].first + 1) * KB_PAGE_SIZE);

		if (range_call((enum kb_op)cmd->op, start, len) != 0)
			return reply_error(reply, errno, "%s of pages %llu-%llu of %s",
					   range_call_name((enum kb_op)cmd->op),
					   (unsigned long long)ranges[i].first,
					   (unsigned long long)ranges[i].last, r->name);
	}
	return 0;
}

static const int prot_flags[] = {
	[WL_PROT_RW] = PROT_READ | PROT_WRITE, [WL_PROT_READ] = PROT_READ, [WL_PROT_NONE] = PROT_NONE,
};

static int do_protect(struct worker *w, const struct kb_cmd *cmd, struct kb_reply *reply)
{
	const struct wl_region *r = &w->wl->regions[cmd->region];

	if (cmd->arg < WL_PROT_RW || cmd->arg > WL_PROT_NONE)
		return reply_error(reply, EINVAL, "protection %d", cmd->arg);
	if (mprotect(region_start(w, cmd->region), r->pages * KB_PAGE_SIZE, prot_flags[cmd->arg]))
		return reply_error(reply, errno, "mprotect(%s) of region %s",
				   wl_prot_name((enum wl_prot)cmd->arg), r->name);
	w->prot[cmd->region] = (uint8_t)cmd->arg;
	return 0;
}

#ifdef HAVE_LINUX_USERFAULTFD_H
/* The process's userfaultfd, with write-protect faults: 0, or -1 (reply set). */
static int open_uffd(struct worker *w, struct kb_reply *reply)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_PAGEFAULT_FLAG_WP };

	if (w->uffd >= 0)
		return 0;
	w->uffd = (int)syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (w->uffd < 0)
		return reply_error(reply, errno, "userfaultfd");
	if (ioctl(w->uffd, UFFDIO_API, &api) != 0)
		return reply_error(reply, errno, "UFFDIO_API");
	if (!(api.features & UFFD_FEATURE_PAGEFAULT_FLAG_WP))
		return reply_error(reply, EOPNOTSUPP, "UFFD_FEATURE_PAGEFAULT_FLAG_WP");
	return 0;
}

/* Register the region for write-protect faults (no handler reads them) and
 * protect it, as test_unmerge_uffd_wp does. */
static int do_uffd_wp(struct worker *w, const struct kb_cmd *cmd, struct kb_reply *reply)
{
	const struct wl_region *r = &w->wl->regions[cmd->region];
	struct uffdio_range range = { (uint64_t)(uintptr_t)region_start(w, cmd->region),
				      r->pages * KB_PAGE_SIZE };
	struct uffdio_register reg = { .range = range, .mode = UFFDIO_REGISTER_MODE_WP };
	struct uffdio_writeprotect wp = { .range = range, .mode = UFFDIO_WRITEPROTECT_MODE_WP };

	if (open_uffd(w, reply) != 0)
		return -1;
	if (ioctl(w->uffd, UFFDIO_REGISTER, &reg) != 0)
		return reply_error(reply, errno, "UFFDIO_REGISTER (write-protect) of region %s",
				   r->name);
	if (ioctl(w->uffd, UFFDIO_WRITEPROTECT, &wp) != 0)
		return reply_error(reply, errno, "UFFDIO_WRITEPROTECT of region %s", r->name);
	return 0;
}
#else
static int do_uffd_wp(struct worker *w, const struct kb_cmd *cmd, struct kb_reply *reply)
{
	(void)w;
	(void)cmd;
	return reply_error(reply, ENOSYS, "userfaultfd was not built (no linux/userfaultfd.h)");
}
#endif

static void apply_writes(uint8_t *addr, const struct kb_write *writes, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		content_write(addr + writes[i].page * KB_PAGE_SIZE, writes[i].offset, writes[i].value);
}

/*
 * The same writes into a region without PROT_WRITE: through /proc/self/mem,
 * whose writes are forced (FOLL_FORCE) and break COW as a write fault does,
 * as test_prot_none writes its PROT_NONE pages.
 */
static int force_writes(struct worker *w, uint8_t *addr, const struct kb_write *writes,
			uint64_t n, struct kb_reply *reply)
{
	if (w->mem_fd < 0 && (w->mem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC)) < 0)
		return reply_error(reply, errno, "open /proc/self/mem");
	for (uint64_t i = 0; i < n; i++) {
		uint8_t bytes[CONTENT_WORD_SIZE];
		off_t at = (off_t)(uintptr_t)(addr + writes[i].page * KB_PAGE_SIZE + writes[i].offset);

		content_value_bytes(writes[i].value, bytes);
		if (pwrite(w->mem_fd, bytes, sizeof bytes, at) != (ssize_t)sizeof bytes)
			return reply_error(reply, errno ? errno : EIO, "write through /proc/self/mem "
					   "to page %llu", (unsigned long long)writes[i].page);
	}
	return 0;
}

static int do_write(struct worker *w, const struct kb_cmd *cmd, const struct kb_write *writes,
		    struct kb_reply *reply)
{
	const struct wl_region *r = &w->wl->regions[cmd->region];
	uint8_t *addr = region_start(w, cmd->region);
	uint64_t t0 = kb_now_ns();

	if (w->prot[cmd->region] != WL_PROT_RW) {
		if (force_writes(w, addr, writes, cmd->count, reply) != 0)
			return -1;
	} else {
		apply_writes(addr, writes, cmd->count);
	}
	reply->elapsed_ns = kb_now_ns() - t0;
	if (cmd->flags & KB_CMD_RESTORE) {
		for (uint64_t i = 0; i < cmd->count; i++) {
			uint64_t value;

			if (wl_region_initial_value(r, writes[i].page, &value))
				content_fill(addr + writes[i].page * KB_PAGE_SIZE, value);
		}
	}
	return 0;
}

/* Captured pages: each page's 4096 bytes, as the runner read them from the capture. */
static int do_pages(struct worker *w, const struct kb_cmd *cmd, const struct kb_page *pages,
		    struct kb_reply *reply)
{
	const struct wl_region *r = &w->wl->regions[cmd->region];
	uint8_t *addr = region_start(w, cmd->region);

	for (uint64_t i = 0; i < cmd->count; i++) {
		if (pages[i].page >= r->pages)
			return reply_error(reply, EINVAL, "page %llu beyond region %s",
					   (unsigned long long)pages[i].page, r->name);
		memcpy(addr + pages[i].page * KB_PAGE_SIZE, pages[i].bytes, KB_PAGE_SIZE);
	}
	return 0;
}

/*
 * Unmerge every region it has and unmap them; the caller exits next. With
 * prctl merging on, the process's other memory is unmerged by that exit, not
 * by PR_SET_MEMORY_MERGE 0: that walks every page of every VMA one address at
 * a time, which takes minutes over a sanitizer's terabytes of shadow mapping.
 */
static uint64_t tear_down(struct worker *w)
{
	uint64_t t0 = kb_now_ns(), elapsed;

	for (size_t i = 0; i < w->wl->nregions; i++) {
		/* Holes left by unmap events make madvise answer ENOMEM after it
		 * has done the mapped parts: nothing to handle. */
		if (kb_proc_has_region(w->wl, w->proc, i))
			madvise(region_start(w, i), w->wl->regions[i].pages * KB_PAGE_SIZE,
				MADV_UNMERGEABLE);
	}
	elapsed = kb_now_ns() - t0;
	if (w->base)
		munmap(w->base, w->size);
	return elapsed;
}

/* Fork: the child continues the loop on @fd; the parent answers its pid. */
static enum after do_fork(struct worker *w, const struct kb_cmd *cmd, int fd,
			  struct kb_reply *reply)
{
	pid_t pid;

	if (fd < 0) {
		reply_error(reply, EINVAL, "fork command without the child's socket");
		return AFTER_REPLY;
	}
	pid = fork();
	if (pid < 0) {
		reply_error(reply, errno, "fork");
		close(fd);
		return AFTER_REPLY;
	}
	if (pid == 0) {
		close(w->sock);
		w->sock = fd;
		w->proc = (size_t)cmd->arg;
		/* become_worker() closes them: /proc/self/mem was the parent's, and a
		 * userfaultfd without EVENT_FORK leaves the child unregistered */
		w->mem_fd = w->uffd = -1;
		become_worker(w);
		return AFTER_NOTHING;
	}
	close(fd);
	reply->value = (uint64_t)pid;
	return AFTER_REPLY;
}

/* Exec the program again as the same workload process: only a failure returns. */
static enum after do_exec(struct worker *w, int fd, struct kb_reply *reply)
{
	if (fd < 0) {
		reply_error(reply, EINVAL, "exec command without the workload's text");
		return AFTER_REPLY;
	}
	kb_worker_exec(w->wl, w->proc, w->sock, fd, true);
	reply_error(reply, errno, "exec of /proc/self/exe");
	close(fd);
	return AFTER_REPLY;
}

/* ---- reading commands ------------------------------------------------------ */

static size_t payload_size(const struct kb_cmd *cmd)
{
	switch (cmd->op) {
	case KB_OP_MERGE:
	case KB_OP_UNMERGE:
	case KB_OP_UNMAP:
	case KB_OP_DISCARD:
		return sizeof(struct kb_range);
	case KB_OP_WRITE:
		return sizeof(struct kb_write);
	case KB_OP_PAGES:
		return sizeof(struct kb_page);
	default:
		return 0;
	}
}

/* Read one command and the descriptor passed with it. 0, or -1 at EOF/error. */
static int read_cmd(int sock, struct kb_cmd *cmd, int *fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = { cmd, sizeof *cmd };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	ssize_t n;

	*fd = -1;
	mh.msg_control = control.buf;
	mh.msg_controllen = sizeof control.buf;
	do
		n = recvmsg(sock, &mh, 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
			memcpy(fd, CMSG_DATA(cm), sizeof *fd);
	if ((size_t)n < sizeof *cmd)
		return kb_read_full(sock, (char *)cmd + n, sizeof *cmd - (size_t)n);
	return 0;
}

static enum after dispatch(struct worker *w, const struct kb_cmd *cmd, const void *payload,
			   int fd, struct kb_reply *reply)
{
	uint64_t t0 = kb_now_ns();

	switch (cmd->op) {
	case KB_OP_RESERVE:
		do_reserve(w, cmd, reply);
		break;
	case KB_OP_MAP:
		do_map(w, cmd, reply);
		break;
	case KB_OP_FILL:
		do_fill(w, cmd, reply);
		break;
	case KB_OP_MERGE:
	case KB_OP_UNMERGE:
	case KB_OP_UNMAP:
	case KB_OP_DISCARD:
		do_ranges(w, cmd, payload, reply);
		break;
	case KB_OP_PROTECT:
		do_protect(w, cmd, reply);
		break;
	case KB_OP_UFFD_WP:
		do_uffd_wp(w, cmd, reply);
		break;
	case KB_OP_EXEC:
		return do_exec(w, fd, reply);
	case KB_OP_WRITE:
		do_write(w, cmd, payload, reply);
		return AFTER_REPLY; /* timed its own writes */
	case KB_OP_PAGES:
		do_pages(w, cmd, payload, reply);
		break;
	case KB_OP_FORK:
		return do_fork(w, cmd, fd, reply);
	case KB_OP_EXIT:
		return AFTER_REPLY_EXIT;
	case KB_OP_QUIT:
		reply->elapsed_ns = tear_down(w);
		return AFTER_REPLY_EXIT;
	default:
		reply_error(reply, EINVAL, "unknown command %u", cmd->op);
		return AFTER_REPLY;
	}
	reply->elapsed_ns = kb_now_ns() - t0;
	return AFTER_REPLY;
}

/* ---- a fresh address space ------------------------------------------------ */

#define WORKER_ENV "KSMKIT_WORKER"         /* "SOCKFD TEXTFD PROC ANSWER" */
#define WORKER_PATH_ENV "KSMKIT_WORKER_PATH" /* the workload's name in messages */

static bool keep_across_exec(int fd)
{
	int flags = fcntl(fd, F_GETFD);

	return flags >= 0 && fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC) == 0;
}

void kb_worker_exec(const struct workload *wl, size_t proc, int sock, int text_fd, bool answer)
{
	char spec[64];
	char *const argv[] = { "ksmkit-worker", NULL };

	snprintf(spec, sizeof spec, "%d %d %zu %d", sock, text_fd, proc, answer);
	if (!keep_across_exec(sock) || !keep_across_exec(text_fd) ||
	    setenv(WORKER_ENV, spec, 1) != 0 || setenv(WORKER_PATH_ENV, wl->path, 1) != 0)
		return;
	execv("/proc/self/exe", argv);
	unsetenv(WORKER_ENV);
	unsetenv(WORKER_PATH_ENV);
}

/* The parse error, as the answer to the exec command (@answer) or else the
 * runner's first command. */
static void __attribute__((noreturn)) refuse_to_start(int sock, bool answer, const char *why)
{
	struct kb_reply reply;
	struct kb_cmd cmd;
	int fd;

	memset(&reply, 0, sizeof reply);
	reply.error = EINVAL;
	snprintf(reply.message, sizeof reply.message, "cannot start: %s", why);
	if (answer || read_cmd(sock, &cmd, &fd) == 0)
		kb_write_full(sock, &reply, sizeof reply);
	exit_now();
}

/*
 * Before main() of whatever program the backend is linked into: a process
 * exec'ed by kb_worker_exec() is a workload process and never returns.
 */
__attribute__((constructor)) static void worker_entry(void)
{
	const char *spec = getenv(WORKER_ENV), *path = getenv(WORKER_PATH_ENV);
	int sock, text_fd, answer;
	struct kb_reply ready;
	struct workload *wl;
	struct wl_error err;
	struct stat st;
	size_t proc;
	char *text;

	if (!spec || sscanf(spec, "%d %d %zu %d", &sock, &text_fd, &proc, &answer) != 4)
		return;
	unsetenv(WORKER_ENV);
	if (fstat(text_fd, &st) != 0 || !(text = malloc((size_t)st.st_size + 1)) ||
	    pread(text_fd, text, (size_t)st.st_size, 0) != st.st_size)
		refuse_to_start(sock, answer, "cannot read the workload");
	close(text_fd);
	if (wl_parse_buffer(text, (size_t)st.st_size, path ? path : "workload", &wl, &err) != 0)
		refuse_to_start(sock, answer, err.text);
	free(text);
	if (proc >= wl->nprocs)
		refuse_to_start(sock, answer, "no such process");
	memset(&ready, 0, sizeof ready);
	if (answer && kb_write_full(sock, &ready, sizeof ready) != 0)
		exit_now();
	kb_worker_main(wl, proc, sock);
}

/* ---- the command loop -------------------------------------------------------- */

void kb_worker_main(const struct workload *wl, size_t proc, int sock)
{
	struct worker w = { .wl = wl, .proc = proc, .sock = sock, .mem_fd = -1, .uffd = -1 };

	/* before any prctl: this allocation must not be mergeable memory of ours */
	w.prot = calloc(wl->nregions ? wl->nregions : 1, sizeof *w.prot);
	if (!w.prot)
		exit_now();
	become_worker(&w);
	for (;;) {
		struct kb_reply reply;
		struct kb_cmd cmd;
		void *payload = NULL;
		size_t bytes;
		bool own_map;
		enum after next;
		int fd;

		if (read_cmd(w.sock, &cmd, &fd) != 0)
			break;
		memset(&reply, 0, sizeof reply);
		bytes = (size_t)cmd.count * payload_size(&cmd);
		/*
		 * Captured bytes get a mapping of their own, gone before the reply:
		 * freed heap memory would keep copies of them, which KSM scans in a
		 * merge-any (prctl) process once the heap grows a mergeable VMA.
		 * ksmd is paused while a point's steps run, so it never sees this one.
		 */
		own_map = cmd.op == KB_OP_PAGES;
		if (bytes) {
			payload = own_map ? mmap(NULL, bytes, PROT_READ | PROT_WRITE,
						 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
					  : malloc(bytes);
			if (payload == MAP_FAILED)
				payload = NULL;
			if (!payload || kb_read_full(w.sock, payload, bytes) != 0)
				break;
		}
		next = dispatch(&w, &cmd, payload, fd, &reply);
		if (own_map && payload)
			munmap(payload, bytes);
		else
			free(payload);
		if (next == AFTER_NOTHING)
			continue;
		if (kb_write_full(w.sock, &reply, sizeof reply) != 0)
			break;
		if (next == AFTER_REPLY_EXIT)
			exit_now();
	}
	/* The runner is gone: leave nothing of the run merged. */
	tear_down(&w);
	exit_now();
}
