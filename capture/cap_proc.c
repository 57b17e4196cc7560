/*
 * cap_proc.c - snapshots of live processes' private anonymous memory, read
 * only. For each process the /proc files are opened once, at the start:
 * maps (which VMAs), pagemap (which pages are present, and their frames),
 * mem (their bytes, read in chunks of up to 4 MiB of present pages; absent
 * pages are never touched, so reading faults nothing in), and, where it is
 * readable (root), /proc/kpageflags for the THP bit of each frame and to
 * know a page that maps the shared zero page (a read of untouched memory:
 * no memory of its own, never visited by KSM), which is taken as absent. The files
 * stay bound to the memory (the mm) they were opened on: when the process
 * execs or exits they read empty, which is how a stream's end is seen, and
 * a recycled pid is never mistaken for the process followed.
 *
 * Which VMAs: private (p), anonymous (no file: inode 0), unnamed or [heap],
 * [stack] or a named anonymous one ([anon:NAME]); adjacent ones are joined.
 * Left out, as KSM leaves them out or cannot see them: shared mappings
 * (MAP_SHARED, shmem, /dev/zero shared), file-backed ones (their page cache
 * pages are not KSM's; a private file mapping's COWed pages are, and are
 * left out here: see docs/capture.md), hugetlb (a file on hugetlbfs),
 * VM_PFNMAP/VM_IO device mappings (a device file), and the kernel's special
 * ones ([vdso], [vvar], [vsyscall], [uprobes]).
 */
#include "cap_freeze.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#define PM_PRESENT (UINT64_C(1) << 63)
#define PM_SWAP (UINT64_C(1) << 62)
#define PM_PFN_MASK ((UINT64_C(1) << 55) - 1)
#define KPF_THP (UINT64_C(1) << 22)
#define KPF_ZERO_PAGE (UINT64_C(1) << 24) /* the shared zero page (or the huge one) */
#define CHUNK_PAGES 1024u      /* pages read from mem at once: 4 MiB */
#define PAGEMAP_CHUNK 65536u   /* pagemap entries read at once: 256 MiB of memory */

struct proc_stream {
	pid_t pid;
	int maps_fd, pagemap_fd, mem_fd;
	int smaps_fd;  /* CAP_PROC_MERGEABLE_ONLY: VmFlags say which are mergeable */
	int reaped; /* wait status when cap_freeze reaped it, else -1 */
};

struct cap_proc {
	size_t n;
	struct proc_stream *ps;
	struct cap_stream_info *info;
	struct cap_stream_state *initial, *cur;
	struct cap_snapshot snap;
	int kpageflags_fd;
	uint8_t *buf;       /* CHUNK_PAGES pages */
	uint64_t *pm;       /* PAGEMAP_CHUNK entries */
	uint64_t *kpf;      /* PAGEMAP_CHUNK flags */
	struct cap_buf maps;
	bool mergeable_only; /* CAP_PROC_MERGEABLE_ONLY */
};

/* ---- /proc/PID/maps ------------------------------------------------------------ */

/* Whether a maps line's pathname is private anonymous memory KSM can merge. */
static bool anonymous_name(const char *name)
{
	return !*name || strcmp(name, "[heap]") == 0 || strncmp(name, "[stack", 6) == 0 ||
	       strncmp(name, "[anon:", 6) == 0;
}

/* Read all of a /proc file through its open fd (from the start) into @b, NUL-terminated. */
static int read_whole(int fd, struct cap_buf *b)
{
	cap_buf_reset(b);
	if (lseek(fd, 0, SEEK_SET) < 0)
		return -1;
	for (;;) {
		uint8_t *p = cap_buf_reserve(b, 65536);
		ssize_t n;

		if (!p)
			return -1;
		n = read(fd, p, 65536);
		if (n < 0 && errno == EINTR)
			n = 0;
		if (n < 0)
			return -1;
		b->len -= 65536 - (size_t)n;
		if (n == 0)
			break;
	}
	cap_buf_u8(b, 0);
	b->len--;
	return b->failed ? -1 : 0;
}

/* Add [start, end) to @v, joined to the last VMA when adjacent. */
static int add_vma(struct cap_buf *v, uint64_t start, uint64_t end)
{
	struct cap_vma *last = v->len ? (struct cap_vma *)(v->data + v->len) - 1 : NULL;
	struct cap_vma one = { start, end };

	if (last && last->end == start) {
		last->end = end;
		return 0;
	}
	cap_buf_put(v, &one, sizeof(one));
	return v->failed ? -1 : 0;
}

/* Whether a smaps VmFlags line has "mg" (VM_MERGEABLE). */
static bool flags_mergeable(const char *line)
{
	for (const char *f = strchr(line, ':') + 1; (f = strstr(f, "mg")); f += 2)
		if (f[-1] == ' ' && (f[2] == ' ' || f[2] == '\0'))
			return true;
	return false;
}

/*
 * The private anonymous VMAs of the maps text in @p->maps, as a malloc'd
 * array (*@out, *@n); with p->mergeable_only the text is smaps, and only
 * those whose VmFlags say mergeable are kept. -1 on a malformed line or no
 * memory.
 */
static int parse_maps(struct cap_proc *p, struct cap_vma **out, size_t *n)
{
	struct cap_buf v = { 0 };
	char *line = (char *)p->maps.data, *next;
	unsigned long long start = 0, end = 0;
	bool candidate = false;

	for (; line && *line; line = next) {
		unsigned long long lo, hi, inode;
		char perms[8];
		int name_at = 0;
		bool anon;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (p->mergeable_only && strncmp(line, "VmFlags:", 8) == 0) {
			if (candidate && flags_mergeable(line) && add_vma(&v, start, end) != 0)
				goto fail;
			candidate = false;
			continue;
		}
		if (sscanf(line, "%llx-%llx %7s %*x %*x:%*x %llu %n", &lo, &hi, perms, &inode,
			   &name_at) < 4 || !name_at) {
			if (p->mergeable_only && strchr(line, ':'))
				continue; /* another field of the VMA above */
			goto fail;
		}
		start = lo;
		end = hi;
		anon = perms[3] == 'p' && inode == 0 && anonymous_name(line + name_at);
		if (p->mergeable_only)
			candidate = anon;
		else if (anon && add_vma(&v, start, end) != 0)
			goto fail;
	}
	*n = v.len / sizeof(struct cap_vma);
	*out = (struct cap_vma *)v.data;
	if (!*out)
		*out = calloc(1, sizeof(**out));
	return *out ? 0 : -1;
fail:
	cap_buf_free(&v);
	return -1;
}

/* The stream's VMAs now; 1 when its memory is gone (the maps file reads empty). */
static int read_vmas(struct cap_proc *p, size_t i, struct cap_vma **vmas, size_t *n,
		     struct cap_error *err)
{
	if (read_whole(p->mergeable_only ? p->ps[i].smaps_fd : p->ps[i].maps_fd, &p->maps) != 0)
		return errno == ESRCH ? 1 : cap_fail(err, "process %d: cannot read its maps: %s",
						     (int)p->ps[i].pid, strerror(errno));
	if (p->maps.len == 0)
		return 1;
	if (parse_maps(p, vmas, n) != 0)
		return cap_fail(err, "process %d: a line of its maps is not understood",
				(int)p->ps[i].pid);
	return 0;
}

/* Why a stream's memory is gone: exited (or a zombie), or exec'd (alive, another mm). */
static enum cap_stream_status why_gone(pid_t pid)
{
	char path[64], text[512], *close_paren;
	FILE *f;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return CAP_STREAM_EXITED;
	len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = 0;
	close_paren = strrchr(text, ')');
	if (!close_paren || close_paren[1] != ' ' || close_paren[2] == 'Z' ||
	    close_paren[2] == 'X')
		return CAP_STREAM_EXITED;
	return CAP_STREAM_EXECED;
}

/* ---- opening ------------------------------------------------------------------------ */

static int open_proc_file(pid_t pid, const char *what, int *why)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		*why = errno;
	return fd;
}

static void read_comm(pid_t pid, char comm[CAP_COMM_MAX])
{
	int why, fd = open_proc_file(pid, "comm", &why);
	ssize_t n = fd >= 0 ? read(fd, comm, CAP_COMM_MAX - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n < 0)
		n = 0;
	comm[n] = 0;
	comm[strcspn(comm, "\n")] = 0;
}

/*
 * 0 when stream @i's @vmas can be captured, -1 with the reason when they
 * span more than this machine's memory and swap: then most of them is
 * address space never touched (a sanitizer's shadow, a runtime's
 * reservation), which the per-page state of a stream cannot afford.
 */
static int refuse_sparse(const struct cap_proc *p, size_t i, const struct cap_vma *vmas,
			 size_t nvmas, struct cap_error *err)
{
	uint64_t span = 0, mem;
	struct sysinfo si;

	for (size_t v = 0; v < nvmas; v++)
		span += vmas[v].end - vmas[v].start;
	if (sysinfo(&si) != 0)
		return 0;
	mem = ((uint64_t)si.totalram + si.totalswap) * si.mem_unit;
	if (span <= mem)
		return 0;
	return cap_fail(err, "process %d (%s): its private anonymous mappings span %" PRIu64
			" MiB, more than this machine's memory and swap (%" PRIu64 " MiB): mostly "
			"address space never touched (a sanitizer's shadow, a runtime's "
			"reservation), and capture keeps state for every page mapped; mappings "
			"this sparse are not supported", (int)p->ps[i].pid, p->info[i].comm,
			span >> 20, mem >> 20);
}

static int open_stream(struct cap_proc *p, size_t i, pid_t pid, int *why, struct cap_error *err)
{
	struct proc_stream *s = &p->ps[i];
	struct cap_vma *vmas;
	size_t nvmas;
	int rc;

	s->pid = pid;
	s->reaped = -1;
	p->info[i].pid = pid;
	read_comm(pid, p->info[i].comm);
	p->info[i].thp = p->kpageflags_fd >= 0 ? CAP_THP_KPAGEFLAGS : CAP_THP_NONE;
	s->maps_fd = open_proc_file(pid, "maps", why);
	if (s->maps_fd >= 0 && p->mergeable_only)
		s->smaps_fd = open_proc_file(pid, "smaps", why);
	s->pagemap_fd = s->maps_fd >= 0 && (!p->mergeable_only || s->smaps_fd >= 0)
				? open_proc_file(pid, "pagemap", why) : -1;
	s->mem_fd = s->pagemap_fd >= 0 ? open_proc_file(pid, "mem", why) : -1;
	if (s->mem_fd < 0) {
		if (*why == ENOENT)
			*why = ESRCH;
		if (*why == ESRCH)
			return cap_fail(err, "no process %d", (int)pid);
		return cap_fail(err, "process %d (%s) is not ours to read: %s (capture needs "
				"ptrace access to it: the same user, or root)", (int)pid,
				p->info[i].comm, strerror(*why));
	}
	rc = read_vmas(p, i, &vmas, &nvmas, err);
	if (rc != 0) {
		*why = ESRCH;
		return rc < 0 ? -1 : cap_fail(err, "process %d exited before its first snapshot",
					      (int)pid);
	}
	if (refuse_sparse(p, i, vmas, nvmas, err) != 0) {
		free(vmas);
		*why = EFBIG;
		return -1;
	}
	rc = cap_stream_state_init(&p->initial[i], vmas, nvmas, err);
	free(vmas);
	return rc;
}

int cap_proc_open(const pid_t *pids, size_t n, struct cap_proc **out, int *why_errno,
		  struct cap_error *err)
{
	return cap_proc_open_flags(pids, n, 0, out, why_errno, err);
}

int cap_proc_open_flags(const pid_t *pids, size_t n, unsigned flags, struct cap_proc **out,
			int *why_errno, struct cap_error *err)
{
	struct cap_proc *p = calloc(1, sizeof(*p));

	*out = NULL;
	*why_errno = 0;
	if (!p)
		return cap_fail(err, "out of memory");
	p->n = n;
	p->mergeable_only = flags & CAP_PROC_MERGEABLE_ONLY;
	p->kpageflags_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	p->ps = calloc(n, sizeof(*p->ps));
	p->info = calloc(n, sizeof(*p->info));
	p->initial = calloc(n, sizeof(*p->initial));
	p->cur = calloc(n, sizeof(*p->cur));
	p->buf = malloc((size_t)CHUNK_PAGES * CAP_PAGE_SIZE);
	p->pm = malloc(PAGEMAP_CHUNK * sizeof(*p->pm));
	p->kpf = malloc(PAGEMAP_CHUNK * sizeof(*p->kpf));
	if (!p->ps || !p->info || !p->initial || !p->cur || !p->buf || !p->pm || !p->kpf) {
		cap_fail(err, "out of memory");
		*why_errno = ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < n; i++)
		p->ps[i].maps_fd = p->ps[i].pagemap_fd = p->ps[i].mem_fd = p->ps[i].smaps_fd = -1;
	for (size_t i = 0; i < n; i++)
		if (open_stream(p, i, pids[i], why_errno, err) != 0)
			goto fail;
	p->snap.nstreams = n;
	p->snap.streams = p->cur;
	*out = p;
	return 0;
fail:
	cap_proc_close(p);
	return -1;
}

const struct cap_stream_info *cap_proc_streams(const struct cap_proc *p)
{
	return p->info;
}

const struct cap_stream_state *cap_proc_initial(const struct cap_proc *p)
{
	return p->initial;
}

size_t cap_proc_count(const struct cap_proc *p)
{
	return p->n;
}

int cap_proc_reaped(const struct cap_proc *p, size_t i)
{
	return p->ps[i].reaped;
}

bool cap_proc_any_live(const struct cap_proc *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->cur[i].status == CAP_STREAM_LIVE)
			return true;
	return false;
}

void cap_proc_close(struct cap_proc *p)
{
	if (!p)
		return;
	for (size_t i = 0; p->ps && i < p->n; i++) {
		if (p->ps[i].maps_fd >= 0)
			close(p->ps[i].maps_fd);
		if (p->ps[i].smaps_fd >= 0)
			close(p->ps[i].smaps_fd);
		if (p->ps[i].pagemap_fd >= 0)
			close(p->ps[i].pagemap_fd);
		if (p->ps[i].mem_fd >= 0)
			close(p->ps[i].mem_fd);
	}
	for (size_t i = 0; i < p->n; i++) {
		if (p->initial)
			cap_stream_state_free(&p->initial[i]);
		if (p->cur)
			cap_stream_state_free(&p->cur[i]);
	}
	if (p->kpageflags_fd >= 0)
		close(p->kpageflags_fd);
	free(p->ps);
	free(p->info);
	free(p->initial);
	free(p->cur);
	free(p->buf);
	free(p->pm);
	free(p->kpf);
	cap_buf_free(&p->maps);
	free(p);
}

/* ---- one snapshot ------------------------------------------------------------------------ */

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, p + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	return (int)(done / CAP_PAGE_SIZE); /* whole pages read */
}

/* KPF_THP of the frames of the present entries pm[0..n): runs of consecutive frames at once. */
static void read_thp_flags(struct cap_proc *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		uint64_t pfn = p->pm[i] & PM_PFN_MASK;
		size_t j = i + 1;

		p->kpf[i] = 0;
		if (!(p->pm[i] & PM_PRESENT) || (p->pm[i] & PM_SWAP) || pfn == 0) {
			i++;
			continue;
		}
		while (j < n && (p->pm[j] & PM_PRESENT) && !(p->pm[j] & PM_SWAP) &&
		       (p->pm[j] & PM_PFN_MASK) == pfn + (j - i))
			j++;
		if (pread(p->kpageflags_fd, p->kpf + i, (j - i) * sizeof(*p->kpf),
			  (off_t)(pfn * sizeof(*p->kpf))) != (ssize_t)((j - i) * sizeof(*p->kpf)))
			memset(p->kpf + i, 0, (j - i) * sizeof(*p->kpf));
		i = j;
	}
}

/*
 * Tokens (and bytes) of the present pages among @n pages from @addr, whose
 * states start at @first of @s: runs of present pages read at once. A page
 * that cannot be read (unmapped since pagemap said present) stays absent.
 */
static int read_pages(struct cap_proc *p, size_t i, uint64_t addr, size_t n, size_t first,
		      struct cap_writer *writer, struct cap_error *err)
{
	struct cap_stream_state *s = &p->cur[i];

	for (size_t k = 0; k < n;) {
		size_t run = 0, got;

		if (!(s->flags[first + k] & CAP_PRESENT)) {
			k++;
			continue;
		}
		while (k + run < n && run < CHUNK_PAGES && (s->flags[first + k + run] & CAP_PRESENT))
			run++;
		got = (size_t)pread_all(p->ps[i].mem_fd, p->buf, run * CAP_PAGE_SIZE,
					addr + k * CAP_PAGE_SIZE);
		for (size_t j = 0; j < run; j++) {
			size_t at = first + k + j;
			const uint8_t *page = p->buf + j * CAP_PAGE_SIZE;

			if (j >= got) {
				s->flags[at] = 0;
				continue;
			}
			s->token[at] = cap_page_token(page);
			if (writer && cap_writer_wants_bytes(writer, s->token[at]) &&
			    cap_writer_put_bytes(writer, s->token[at], page, err) != 0)
				return -1;
		}
		k += run;
	}
	return 0;
}

/* Presence (and THP) of one VMA's pages from pagemap, then their tokens. */
static int read_vma(struct cap_proc *p, size_t i, const struct cap_vma *v, size_t first,
		    struct cap_writer *writer, struct cap_error *err)
{
	struct cap_stream_state *s = &p->cur[i];
	size_t pages = (size_t)((v->end - v->start) / CAP_PAGE_SIZE);

	for (size_t done = 0; done < pages;) {
		size_t n = pages - done < PAGEMAP_CHUNK ? pages - done : PAGEMAP_CHUNK;
		uint64_t addr = v->start + done * CAP_PAGE_SIZE;
		ssize_t got = pread(p->ps[i].pagemap_fd, p->pm, n * sizeof(*p->pm),
				    (off_t)(addr / CAP_PAGE_SIZE * sizeof(*p->pm)));

		if (got < 0)
			got = 0; /* unmapped meanwhile: absent */
		n = (size_t)got / sizeof(*p->pm);
		if (n == 0)
			break;
		if (p->kpageflags_fd >= 0)
			read_thp_flags(p, n);
		for (size_t k = 0; k < n; k++) {
			bool present = (p->pm[k] & PM_PRESENT) && !(p->pm[k] & PM_SWAP);

			/*
			 * A read of untouched memory maps the shared zero page: no
			 * memory of its own, and KSM never visits it (it has no
			 * rmap_item): absent, as far as KSM is concerned.
			 */
			if (present && p->kpageflags_fd >= 0 && (p->kpf[k] & KPF_ZERO_PAGE))
				present = false;
			s->flags[first + done + k] = present ? CAP_PRESENT : 0;
			if (present && p->kpageflags_fd >= 0 && (p->kpf[k] & KPF_THP))
				s->flags[first + done + k] |= CAP_THP;
		}
		if (read_pages(p, i, addr, n, first + done, writer, err) != 0)
			return -1;
		done += n;
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void end_stream(struct cap_proc *p, size_t i, enum cap_stream_status why,
		       cap_note_fn *note, void *ctx)
{
	char text[160];

	cap_stream_state_free(&p->cur[i]);
	p->cur[i].status = why;
	snprintf(text, sizeof(text), "process %d (%s) %s: its stream ends here",
		 (int)p->ps[i].pid, p->info[i].comm,
		 why == CAP_STREAM_EXECED ? "exec'd" : why == CAP_STREAM_EXITED ? "exited" :
		 "can no longer be read");
	if (note)
		note(ctx, text);
}

/* One stream's state now, into p->cur[i]; 1 when its memory is gone. */
static int read_stream(struct cap_proc *p, size_t i, struct cap_writer *writer,
		       struct cap_error *err)
{
	struct cap_vma *vmas;
	size_t nvmas, first = 0;
	int rc = read_vmas(p, i, &vmas, &nvmas, err);

	if (rc != 0)
		return rc;
	cap_stream_state_free(&p->cur[i]);
	rc = refuse_sparse(p, i, vmas, nvmas, err);
	if (rc == 0)
		rc = cap_stream_state_init(&p->cur[i], vmas, nvmas, err);
	free(vmas);
	for (size_t v = 0; rc == 0 && v < p->cur[i].nvmas; v++) {
		rc = read_vma(p, i, &p->cur[i].vmas[v], first, writer, err);
		first += (size_t)((p->cur[i].vmas[v].end - p->cur[i].vmas[v].start) / CAP_PAGE_SIZE);
	}
	if (rc == 0 && read_whole(p->ps[i].maps_fd, &p->maps) == 0 && p->maps.len == 0)
		return 1; /* gone while it was read: what was read may be of the next program */
	return rc;
}

/*
 * Stop stream @i's process: 0, or 1 when its memory is gone instead (a
 * process that is exiting cannot be stopped, and may keep its memory for a
 * moment: it is asked again for up to FREEZE_TRIES_MS), or -1.
 */
#define FREEZE_TRIES_MS 200
static int freeze_or_gone(struct cap_proc *p, size_t i, struct cap_freeze *f,
			  struct cap_error *err)
{
	for (int ms = 0; ms < FREEZE_TRIES_MS; ms++) {
		struct cap_vma *vmas;
		size_t nvmas;
		int rc;

		if (cap_freeze(p->ps[i].pid, f, err) == 0)
			return 0;
		rc = read_vmas(p, i, &vmas, &nvmas, err);
		if (rc != 0)
			return rc;
		free(vmas);
		usleep(1000);
	}
	return cap_freeze(p->ps[i].pid, f, err) == 0 ? 0 : -1;
}

int cap_proc_snapshot(struct cap_proc *p, bool consistent, struct cap_writer *writer,
		      cap_note_fn *note, void *ctx, struct cap_snapshot **snap,
		      struct cap_error *err)
{
	p->snap.pause_ns = 0;
	for (size_t i = 0; i < p->n; i++) {
		struct cap_freeze f = { 0 };
		uint64_t t0 = now_ns();
		int rc;

		if (p->cur[i].status != CAP_STREAM_LIVE)
			continue;
		if (consistent) {
			rc = freeze_or_gone(p, i, &f, err);
			if (rc < 0)
				return -1;
			if (rc > 0) {
				end_stream(p, i, why_gone(p->ps[i].pid), note, ctx);
				continue;
			}
		}
		rc = read_stream(p, i, writer, err);
		if (consistent) {
			cap_thaw(&f);
			if (f.leader_status != -1)
				p->ps[i].reaped = f.leader_status;
			if (now_ns() - t0 > p->snap.pause_ns)
				p->snap.pause_ns = now_ns() - t0;
		}
		if (rc < 0)
			return -1;
		if (rc > 0)
			end_stream(p, i, why_gone(p->ps[i].pid), note, ctx);
		p->cur[i].vmas_changed = false;
		p->cur[i].pages_changed = 0;
	}
	*snap = &p->snap;
	return 0;
}

uint64_t cap_read_full_scans(void)
{
	char text[32];
	int fd = open("/sys/kernel/mm/ksm/full_scans", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return CAP_NO_FULL_SCANS;
	text[n] = 0;
	return strtoull(text, NULL, 10);
}
