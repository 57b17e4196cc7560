/*
 * ksmkit_guest.c - ksmkit-guest, the program that runs inside the qemu guest
 * (statically linked, so the initramfs needs no libraries): it reads the job
 * the host packed into the initramfs (kg_proto.h), runs each workload on the
 * guest kernel's KSM with the ordinary backend (backend.h), exactly as
 * `ksmkit run` does on a host, and writes every result to the guest's second
 * serial port for the host to read back. The guest's /init (guest/init)
 * mounts what the backend needs, starts this program, and powers off.
 *
 * It owns nothing but that loop and the result format's writing side; it
 * never decides whether results are right (the host compares them). On the
 * host, `ksmkit-guest --kernels` tells guest/prepare which kernels to fetch,
 * and `ksmkit-guest --built-kernels` tells `make check-kernel` which to build.
 * `ksmkit-guest --fill MIB` is the workload of `ksmkit vms` instead (/init
 * runs it when the kernel command line says ksmkit.fill=MIB): it fills MIB
 * MiB with pages that are distinct from each other but the same in every
 * guest, says so on the console, and waits to be killed with its guest.
 */
#include "config.h"
#include "backend.h"
#include "guest.h"
#include "kg_proto.h"
#include "workload.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <termios.h>
#include <unistd.h>

struct job {
	bool pages;     /* capture the page partition after every scan */
	bool per_batch; /* rows after every batch too */
	bool soft_dirty; /* capture soft-dirty sets per scan interval */
	size_t n;       /* workloads */
	char **name;    /* the host's file names */
};

static void job_free(struct job *job)
{
	for (size_t i = 0; i < job->n; i++)
		free(job->name[i]);
	free(job->name);
	memset(job, 0, sizeof *job);
}

/* Read @dir/job. 0, or -1 with a message. */
static int job_read(const char *dir, struct job *job, char *msg, size_t len)
{
	char path[256], line[1024];
	unsigned lineno = 0;
	FILE *f;
	int rc = -1;

	memset(job, 0, sizeof *job);
	snprintf(path, sizeof path, "%s/job", dir);
	f = fopen(path, "re");
	if (!f) {
		snprintf(msg, len, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof line, f)) {
		char **grown;
		size_t index;
		int at, flag;

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (lineno == 1) {
			if (strcmp(line, KG_JOB_MAGIC) != 0)
				goto bad;
			continue;
		}
		if (sscanf(line, "pages %d", &flag) == 1) {
			job->pages = flag;
		} else if (sscanf(line, "per-batch %d", &flag) == 1) {
			job->per_batch = flag;
		} else if (sscanf(line, "soft-dirty %d", &flag) == 1) {
			job->soft_dirty = flag;
		} else if (sscanf(line, "workload %zu %n", &index, &at) == 1 && index == job->n) {
			grown = realloc(job->name, (job->n + 1) * sizeof *grown);
			if (!grown)
				goto bad;
			job->name = grown;
			job->name[job->n] = strdup(line + at);
			if (!job->name[job->n])
				goto bad;
			job->n++;
		} else {
			goto bad;
		}
	}
	rc = 0;
	goto out;
bad:
	snprintf(msg, len, "%s:%u: not a job line: '%.80s'", path, lineno, line);
	job_free(job);
out:
	fclose(f);
	return rc;
}

/* The whole of @path in a new buffer. 0, or -1 (errno). */
static int read_text(const char *path, char **text, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	ssize_t got = -1;

	*text = NULL;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && (*text = malloc((size_t)st.st_size + 1)) != NULL)
		got = read(fd, *text, (size_t)st.st_size);
	err = errno;
	close(fd);
	if (got != st.st_size) {
		free(*text);
		*text = NULL;
		errno = got < 0 ? err : EIO;
		return -1;
	}
	*len = (size_t)got;
	return 0;
}

/* One line of text, with line breaks made blanks so the format holds. */
static void put_line(FILE *out, const char *key, const char *text)
{
	fprintf(out, "%s ", key);
	for (; *text; text++)
		fputc(*text == '\n' || *text == '\r' ? ' ' : *text, out);
	fputc('\n', out);
}

static void on_note(const char *note, void *arg)
{
	put_line(arg, "note", note);
}

static void put_pages(FILE *out, const struct kb_result *res)
{
	const struct trace_page *prev = NULL;

	fprintf(out, "pages %zu\n", res->npages);
	for (size_t i = 0; i < res->npages; i++) {
		const struct trace_page *p = &res->pages[i];

		if (!prev || p->scan != prev->scan || p->proc != prev->proc ||
		    p->region != prev->region || p->page != prev->page + 1)
			fprintf(out, "= %" PRIu64 " %" PRIu32 " %" PRIu32 " %" PRIu64 "\n", p->scan,
				p->proc, p->region, p->page);
		fprintf(out, "%" PRIx64 " %" PRIx32 "\n", p->frame, p->flags);
		prev = p;
	}
}

static void put_dirty(FILE *out, const struct kb_result *res)
{
	fprintf(out, "dirty %zu\n", res->ndirty);
	for (size_t i = 0; i < res->ndirty; i++) {
		const struct kb_dirty_page *d = &res->dirty[i];

		fprintf(out, "%" PRIu64 " %" PRIu32 " %" PRIu32 " %" PRIu64 "\n", d->scan, d->proc,
			d->region, d->page);
	}
}

static void put_trace(FILE *out, struct trace *t)
{
	char *text = NULL;
	size_t size = 0;
	FILE *mem;

	if (!t) {
		fputs("trace 0\n", out);
		return;
	}
	/* the trace says where it was measured: times here are emulation times */
	snprintf(t->source, sizeof t->source, "guest");
	mem = open_memstream(&text, &size);
	if (!mem || trace_write_csv(t, mem) != 0) {
		if (mem)
			fclose(mem);
		free(text);
		fputs("trace 0\n", out);
		return;
	}
	fclose(mem);
	fprintf(out, "trace %zu\n", size);
	fwrite(text, 1, size, out);
	free(text);
}

/* Run workload @index of the job and write its block. */
static void run_one(const char *dir, const struct job *job, size_t index, FILE *out)
{
	struct kb_result res = { 0 };
	struct kb_options opt;
	struct workload *wl = NULL;
	struct wl_error werr;
	char path[256], msg[2048] = "";
	char *text;
	size_t len;
	int status;

	snprintf(path, sizeof path, "%s/%zu.wl", dir, index);
	kb_options_init(&opt);
	opt.pages = job->pages ? KB_PAGES_EVERY_SCAN : KB_PAGES_NONE;
	opt.per_batch = job->per_batch;
	opt.soft_dirty = job->soft_dirty;
	opt.note = on_note;
	opt.note_arg = out;
	if (read_text(path, &text, &len) != 0) {
		status = KB_FAILED;
		snprintf(msg, sizeof msg, "cannot read %s in the guest: %s", path, strerror(errno));
	} else if (wl_parse_buffer(text, len, job->name[index], &wl, &werr) != 0) {
		status = KB_BAD_INPUT;
		snprintf(msg, sizeof msg, "%s", werr.text);
	} else {
		status = kb_run(wl, &opt, &res, msg, sizeof msg);
	}
	free(text);
	fprintf(out, "run %zu\nstatus %d\ninvalid %" PRIu64 "\n", index, status, res.invalid_rows);
	put_line(out, "message", msg);
	put_trace(out, res.trace);
	put_pages(out, &res);
	put_dirty(out, &res);
	fprintf(out, "end %zu\n", index);
	fflush(out);
	kb_result_free(&res);
	wl_free(wl);
}

/* The results port, raw: the tty layer must not turn "\n" into "\r\n". */
static FILE *open_port(const char *device)
{
	int fd = open(device, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	struct termios tio;
	FILE *out;

	if (fd < 0)
		return NULL;
	if (tcgetattr(fd, &tio) == 0) {
		cfmakeraw(&tio);
		tcsetattr(fd, TCSANOW, &tio);
	}
	out = fdopen(fd, "w");
	if (!out)
		close(fd);
	return out;
}

static void put_machine(FILE *out)
{
	struct utsname u;
	char nodes[256] = "0";
	FILE *f = fopen("/sys/devices/system/node/has_memory", "re");

	if (f) {
		if (!fgets(nodes, sizeof nodes, f))
			snprintf(nodes, sizeof nodes, "0");
		fclose(f);
	}
	nodes[strcspn(nodes, "\n")] = '\0';
	if (uname(&u) != 0)
		snprintf(u.release, sizeof u.release, "unknown");
	fprintf(out, "%s\nrelease %s\nnodes %s\n", KG_RESULT_MAGIC, u.release, nodes);
}

/* `ksmkit-guest --kernels`, on the host: the kernels a guest boots, one
 * "NAME PACKAGE" a line, for guest/prepare to fetch (guest.h owns the list). */
static int list_kernels(void)
{
#define PRINT_KERNEL_(id, name, package) printf("%s %s\n", name, package);
	KG_KERNELS(PRINT_KERNEL_)
#undef PRINT_KERNEL_
	return fflush(stdout) == 0 ? 0 : 1;
}

/* `ksmkit-guest --built-kernels`, on the host: the kernels `make kernel`
 * builds, one "NAME PATCH" a line ("-": none), for make check-kernel. */
static int list_built_kernels(void)
{
#define KERNEL_NAME_(id, name, package) [KG_KERNEL_##id] = name,
	static const char *const base[] = { KG_KERNELS(KERNEL_NAME_) };
#undef KERNEL_NAME_
#define PRINT_BUILT_(id, name, kernel, patch, settings, doc)                                \
	printf("%s+%s %s\n", base[KG_KERNEL_##kernel], name, patch ? patch : "-");
	KG_PATCHES(PRINT_BUILT_)
#undef PRINT_BUILT_
	return fflush(stdout) == 0 ? 0 : 1;
}

/* splitmix64: a page's words from its index, the same in every guest. */
static uint64_t mix(uint64_t x)
{
	x += UINT64_C(0x9e3779b97f4a7c15);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

/* `ksmkit-guest --fill MIB`: ksmkit vms's guest workload. */
static int fill_and_wait(const char *text)
{
	unsigned long mib = strtoul(text, NULL, 10);
	size_t words = mib << 17, per_page = 4096 / sizeof(uint64_t); /* 8-byte words */
	uint64_t *mem = malloc(words * sizeof *mem);

	if (!mib || !mem) {
		fprintf(stderr, "ksmkit-guest: --fill %s: %s\n", text,
			mib ? "out of memory" : "not a size in MiB above 0");
		return 1;
	}
	for (size_t w = 0; w < words; w++)
		mem[w] = mix(w / per_page) + w % per_page;
	printf("ksmkit-guest: filled %lu MiB\n", mib);
	fflush(stdout);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : KG_JOB_DIR;
	const char *device = argc > 2 ? argv[2] : "/dev/ttyS1";
	struct job job;
	char msg[512];
	FILE *out;

	if (argc == 2 && strcmp(argv[1], "--kernels") == 0)
		return list_kernels();
	if (argc == 2 && strcmp(argv[1], "--built-kernels") == 0)
		return list_built_kernels();
	if (argc == 3 && strcmp(argv[1], "--fill") == 0)
		return fill_and_wait(argv[2]);
	out = open_port(device);
	if (!out) {
		fprintf(stderr, "ksmkit-guest: cannot open %s: %s\n", device, strerror(errno));
		return 1;
	}
	put_machine(out);
	if (job_read(dir, &job, msg, sizeof msg) != 0) {
		put_line(out, "note", msg);
		fclose(out);
		return 1;
	}
	for (size_t i = 0; i < job.n; i++)
		run_one(dir, &job, i, out);
	fputs("done\n", out);
	fflush(out);
	tcdrain(fileno(out));
	fclose(out);
	job_free(&job);
	return 0;
}
