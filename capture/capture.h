/*
 * capture.h - real memory as data (libksmcapture): snapshots of the private
 * anonymous memory of running processes, page by page as 64-bit content
 * tokens, in a versioned file (docs/capture-format.md) that a writer appends
 * to snapshot by snapshot and a reader validates and plays back. This
 * header is the whole contract of the library: the in-memory model of one
 * snapshot (streams, their VMAs, each page's token and flags), the writer,
 * the reader, the per-snapshot summary (what KSM could at most share), and
 * the process reader that takes snapshots of live processes (cap_proc_*).
 * It does not know what the tokens are used for: replay (fill = capture),
 * ksmkit estimate and the CLI build on it.
 *
 * Files: cap_format.c (records, checksums, varints, buffers), cap_state.c
 * (page tokens, stream states, remapping onto new VMAs), cap_tokenset.c (a
 * set of tokens), cap_writer.c, cap_reader.c, cap_summary.c, cap_proc.c
 * (reading /proc/PID), cap_freeze.c (stopping a process for --consistent).
 *
 * Errors: every function that can fail returns 0 or -1 and fills a struct
 * cap_error whose text names the file (and byte offset) or the process.
 */
#ifndef KSMKIT_CAPTURE_H
#define KSMKIT_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CAP_FORMAT_VERSION 1
#define CAP_PAGE_SIZE 4096u  /* the only page size written and read in version 1 */
#define CAP_COMM_MAX 16      /* /proc/PID/comm, NUL included */
#define CAP_NO_FULL_SCANS UINT64_MAX /* a snapshot taken where KSM's counter was unreadable */

/* An error: a message, and for a damaged file the byte offset it names. */
struct cap_error {
	char text[512];
	uint64_t offset; /* reader: where the damage starts; else 0 */
};

/*
 * Content tokens. A present page's token is XXH3-64 of its 4096 bytes,
 * except that a page of zeros is CAP_TOKEN_ZERO (and a non-zero page whose
 * hash is 0 becomes 1): equal tokens mean equal bytes up to XXH3's 2^-64.
 * An absent page has token CAP_TOKEN_ZERO too; its flags say it is absent.
 */
#define CAP_TOKEN_ZERO UINT64_C(0)
uint64_t cap_page_token(const void *page);

/* A page's flags. */
enum cap_page_flag {
	CAP_PRESENT = 1u << 0, /* mapped (pagemap bit 63); absent: never touched,
				* swapped out or discarded: nothing for KSM */
	CAP_THP = 1u << 1,     /* mapped as part of a transparent huge page */
	CAP_PAGE_FLAGS = CAP_PRESENT | CAP_THP,
};

/* A VMA: [start, end), page-aligned, start < end. */
struct cap_vma {
	uint64_t start, end;
};

/* Why a stream has no more snapshots. */
enum cap_stream_status {
	CAP_STREAM_LIVE = 0,
	CAP_STREAM_EXITED = 1,     /* the process exited */
	CAP_STREAM_EXECED = 2,     /* it exec'd: the memory captured is gone */
	CAP_STREAM_UNREADABLE = 3, /* its memory could no longer be read */
	CAP_STREAM_STATUS_COUNT
};
const char *cap_stream_status_name(enum cap_stream_status s); /* "live", "exited", ... */

/* How a stream's THP flags were obtained (stored per stream in the file). */
enum cap_thp_source {
	CAP_THP_NONE = 0,       /* not known: every page has CAP_THP clear */
	CAP_THP_KPAGEFLAGS = 1, /* /proc/kpageflags KPF_THP of each present page (root) */
	CAP_THP_SOURCE_COUNT
};
const char *cap_thp_source_name(enum cap_thp_source s);

/* A captured process, as the file's header lists it. */
struct cap_stream_info {
	int32_t pid;
	char comm[CAP_COMM_MAX];
	enum cap_thp_source thp;
};

/*
 * One stream's memory at one snapshot: its VMAs in increasing address order,
 * not overlapping, and its pages VMA after VMA (page i of the stream is the
 * i-th page of the concatenated VMAs), each with a token and flags.
 */
struct cap_stream_state {
	enum cap_stream_status status;
	size_t nvmas;
	struct cap_vma *vmas;
	size_t npages;
	uint64_t *token;
	uint8_t *flags;
	bool vmas_changed; /* reader: the VMAs differ from the previous snapshot's */
	size_t pages_changed; /* reader: pages whose token or flags the snapshot changed */
};

/* One snapshot: every stream of the file, ended ones with no pages. */
struct cap_snapshot {
	uint64_t index;      /* 0, 1, ... */
	uint64_t time_ns;    /* since the capture started (CLOCK_MONOTONIC) */
	uint64_t full_scans; /* /sys/kernel/mm/ksm/full_scans when taken, or CAP_NO_FULL_SCANS */
	uint64_t pause_ns;   /* how long the processes were stopped (0: not stopped) */
	size_t nstreams;
	struct cap_stream_state *streams;
};

/* Stream states: allocation (pages zeroed: absent), copy, free. */
int cap_stream_state_init(struct cap_stream_state *s, const struct cap_vma *vmas, size_t nvmas,
			  struct cap_error *err);
void cap_stream_state_free(struct cap_stream_state *s);
/* The page index of address @addr in @s, or SIZE_MAX when no VMA holds it. */
size_t cap_stream_page_of(const struct cap_stream_state *s, uint64_t addr);

/* ---- the writer ---------------------------------------------------------- */

struct cap_writer;

/*
 * Create @path (truncated) and write the header: the streams, their VMAs at
 * the start (@initial[i].vmas; pages are not read from it), and whether
 * pages' bytes follow (@with_bytes). On success *@out owns the open file.
 */
int cap_writer_open(const char *path, const struct cap_stream_info *streams,
		    const struct cap_stream_state *initial, size_t nstreams, bool with_bytes,
		    struct cap_writer **out, struct cap_error *err);

/*
 * With bytes: whether @token's bytes are still to be stored (neither stored
 * nor pending); then cap_writer_put_bytes(@token, @page) keeps them, to be
 * written (compressed) before the next snapshot that uses them. The zero
 * token's bytes are never stored.
 */
bool cap_writer_wants_bytes(const struct cap_writer *w, uint64_t token);
int cap_writer_put_bytes(struct cap_writer *w, uint64_t token, const void *page,
			 struct cap_error *err);

/*
 * Append @snap (all streams, in header order; index, time, full scans and
 * pause as given) as a delta against the previous snapshot (the first,
 * against the header's VMAs with every page absent), after the pending
 * bytes, and flush it to the disk (fdatasync). A stream whose status is not
 * live is written as ended once and never again. On a write error (a full
 * disk, RLIMIT_FSIZE) the file is cut back to the end of the last complete
 * snapshot, which the message names; the writer is then unusable but can be
 * closed.
 */
int cap_writer_snapshot(struct cap_writer *w, const struct cap_snapshot *snap,
			struct cap_error *err);

/* Snapshots written, and the file's size, so far. */
uint64_t cap_writer_snapshots(const struct cap_writer *w);
uint64_t cap_writer_bytes(const struct cap_writer *w);

/*
 * Write the end record (the capture ended as planned) unless the writer
 * failed, close the file, free @w (NULL: nothing). Returns 0 or -1.
 */
int cap_writer_close(struct cap_writer *w, struct cap_error *err);

/* ---- the reader ---------------------------------------------------------- */

struct cap_reader;

/* What a file holds, as cap_reader_open found it. */
struct cap_file_info {
	uint32_t version, page_size;
	bool with_bytes;
	size_t nstreams;
	const struct cap_stream_info *streams;
	const struct cap_stream_state *initial; /* each stream's header VMAs (pages absent) */
	uint64_t nsnapshots;
	uint64_t ndistinct_bytes; /* pages whose bytes are stored */
	bool complete;        /* the end record is there: the capture ended as planned */
	uint64_t cut_offset;  /* !complete: where the file stops being whole (its size, or
			       * the start of a record cut short) */
	uint64_t file_size;
};

enum cap_open_flag {
	CAP_OPEN_STRICT = 1u << 0, /* refuse a file cut short (default: read up to the cut) */
};

/*
 * Open and validate all of @path: every record's length and checksum, every
 * snapshot's structure. A damaged file (a bad magic, version, checksum,
 * length or content) is refused with the offset of the record at fault in
 * err->offset and the text. A file cut short (a capture killed, a record
 * incomplete at the end) reads up to its last complete snapshot, unless
 * CAP_OPEN_STRICT, which refuses it naming where the cut record starts.
 */
int cap_reader_open(const char *path, unsigned flags, struct cap_reader **out,
		    struct cap_error *err);

/* The same from @len bytes of memory (copied); @name names it in messages. */
int cap_reader_open_buffer(const void *data, size_t len, const char *name, unsigned flags,
			   struct cap_reader **out, struct cap_error *err);

const struct cap_file_info *cap_reader_info(const struct cap_reader *r);

/*
 * The next snapshot, with every stream's full state (deltas applied): 1 and
 * *@snap (owned by the reader, valid until the next call), 0 after the last,
 * -1 on an error. cap_reader_rewind starts again from the first.
 */
int cap_reader_next(struct cap_reader *r, const struct cap_snapshot **snap,
		    struct cap_error *err);
void cap_reader_rewind(struct cap_reader *r);

/*
 * With bytes: copy @token's 4096 bytes into @page. CAP_TOKEN_ZERO gives
 * zeros. -1 when the file has no bytes for it.
 */
int cap_reader_page_bytes(struct cap_reader *r, uint64_t token, void *page,
			  struct cap_error *err);

void cap_reader_close(struct cap_reader *r);

/* ---- what KSM could share -------------------------------------------------- */

/* One snapshot summed over its streams. */
struct cap_summary {
	uint64_t pages;           /* pages in the VMAs */
	uint64_t present;         /* present pages */
	uint64_t zero;            /* present pages of zeros */
	uint64_t thp;             /* present pages mapped by a THP */
	uint64_t distinct;        /* distinct tokens among the present non-zero pages */
	uint64_t duplicates;      /* present non-zero pages less distinct: at most what
				   * KSM can free by merging them (pages_sharing) */
	uint64_t changed;         /* pages the snapshot changed */
	size_t live_streams;
};

/* The summary of @snap. -1 only when memory runs out. */
int cap_summarize(const struct cap_snapshot *snap, struct cap_summary *out,
		  struct cap_error *err);

/* ---- taking snapshots of live processes ------------------------------------ */

struct cap_proc;

/*
 * Follow the processes @pids (@n of them): open their /proc files now (a
 * process not ours to read is refused here, naming it: errno EACCES/EPERM
 * in *@why_errno, ESRCH when there is no such process) and read their
 * VMAs. *@out owns them.
 */
int cap_proc_open(const pid_t *pids, size_t n, struct cap_proc **out, int *why_errno,
		  struct cap_error *err);

/*
 * The same with @flags. CAP_PROC_MERGEABLE_ONLY: take only the VMAs KSM may
 * merge now (VM_MERGEABLE, "mg" among /proc/PID/smaps' VmFlags, as
 * MADV_MERGEABLE and PR_SET_MEMORY_MERGE make them) instead of every private
 * anonymous one: what a running KSM sees (a qemu guest's RAM with
 * mem-merge=on, not qemu's own heap), rather than what it could see once
 * enabled for the whole process.
 */
enum cap_proc_flag { CAP_PROC_MERGEABLE_ONLY = 1u << 0 };
int cap_proc_open_flags(const pid_t *pids, size_t n, unsigned flags, struct cap_proc **out,
			int *why_errno, struct cap_error *err);

/* The streams and their VMAs now, for cap_writer_open. */
const struct cap_stream_info *cap_proc_streams(const struct cap_proc *p);
const struct cap_stream_state *cap_proc_initial(const struct cap_proc *p);
size_t cap_proc_count(const struct cap_proc *p);

/*
 * Take one snapshot of every live stream into *@snap (owned by @p, valid
 * until the next call): re-read the VMAs (private anonymous only: see
 * docs/capture.md), pagemap for presence, kpageflags for THP where
 * readable, and the present pages' bytes from /proc/PID/mem in large
 * chunks, never writing to the process. With @consistent each process is
 * stopped (ptrace seize + interrupt, every thread) from before its VMAs are
 * read until its last page is, and resumed as it was; the pause goes into
 * snap->pause_ns (the longest over the streams). With @writer (a --bytes
 * capture) the bytes of each token it wants are handed to it. A stream
 * whose process exited or exec'd gets that status (and keeps it); its
 * message, once, goes to @note (may be NULL). -1 only for errors that end
 * the capture (memory, the writer).
 */
typedef void cap_note_fn(void *ctx, const char *text);
int cap_proc_snapshot(struct cap_proc *p, bool consistent, struct cap_writer *writer,
		      cap_note_fn *note, void *ctx, struct cap_snapshot **snap,
		      struct cap_error *err);

/*
 * The wait status of stream @i's process when cap_proc_snapshot reaped it
 * (it was the caller's child and died while being stopped), else -1.
 */
int cap_proc_reaped(const struct cap_proc *p, size_t i);

/* KSM's full_scans now (/sys/kernel/mm/ksm/full_scans, read only), or CAP_NO_FULL_SCANS. */
uint64_t cap_read_full_scans(void);

/* Whether any stream is still live. */
bool cap_proc_any_live(const struct cap_proc *p);

void cap_proc_close(struct cap_proc *p);

#endif
