/*
 * kg_initrd.c - the initramfs one guest session boots with: the prepared
 * base archive (busybox, ksmkit-guest, /init; guest/prepare makes it), then
 * a second "newc" cpio archive written here with the session's job and
 * workloads (kg_proto.h) and a /dev/console node, which an unprivileged
 * build cannot put into the base. The kernel unpacks concatenated archives
 * in order, so no cpio tool runs per session.
 */
#include "config.h"
#include "kg_internal.h"
#include "kg_proto.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

int kg_fail(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (msg && len) {
		va_start(ap, fmt);
		vsnprintf(msg, len, fmt, ap);
		va_end(ap);
	}
	return -1;
}

struct archive {
	FILE *f;
	unsigned ino;
};

static void pad4(FILE *f)
{
	long at = ftell(f);

	while (at >= 0 && at % 4) {
		fputc(0, f);
		at++;
	}
}

/* One entry: @mode with its type bits, @data of @size bytes (files only). */
static void entry(struct archive *a, const char *name, unsigned mode, unsigned rdev_major,
		  unsigned rdev_minor, const void *data, size_t size)
{
	fprintf(a->f, "070701%08X%08X%08X%08X%08X%08X%08zX%08X%08X%08X%08X%08zX%08X",
		++a->ino, mode, 0u, 0u, S_ISDIR(mode) ? 2u : 1u, 0u, size, 0u, 0u, rdev_major,
		rdev_minor, strlen(name) + 1, 0u);
	fwrite(name, 1, strlen(name) + 1, a->f);
	pad4(a->f);
	if (size) {
		fwrite(data, 1, size, a->f);
		pad4(a->f);
	}
}

static void file_entry(struct archive *a, const char *name, const char *text)
{
	entry(a, name, S_IFREG | 0644, 0, 0, text, strlen(text));
}

/* Copy the base archive, then pad to a 4-byte boundary. 0 or -1. */
static int copy_base(FILE *out, const char *base, char *msg, size_t len)
{
	FILE *in = fopen(base, "re");
	char buf[65536];
	size_t got;

	if (!in)
		return kg_fail(msg, len, "cannot read the guest's initramfs %s: %s", base,
			       strerror(errno));
	while ((got = fread(buf, 1, sizeof buf, in)) > 0)
		if (fwrite(buf, 1, got, out) != got)
			break;
	if (ferror(in)) {
		fclose(in);
		return kg_fail(msg, len, "cannot read %s: %s", base, strerror(errno));
	}
	fclose(in);
	pad4(out);
	return 0;
}

/* The job file (kg_proto.h) for @n workloads. NULL when out of memory. */
static char *job_text(const struct workload *const *wls, size_t n, const struct kg_options *opt)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (!f)
		return NULL;
	fprintf(f, "%s\npages %d\nper-batch %d\nsoft-dirty %d\n", KG_JOB_MAGIC, opt->pages,
		opt->per_batch, opt->soft_dirty);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "workload %zu %s\n", i, wls[i]->path);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* The whole file at @path, NUL-terminated; NULL when unreadable. */
static char *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "re");
	char *text = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (text = malloc((size_t)n + 1)) != NULL) {
		*size = fread(text, 1, (size_t)n, f);
		text[*size] = '\0';
	}
	fclose(f);
	return text;
}

/*
 * The workload's text as the guest will parse it: the file as the user
 * wrote it when it still says the same (so FILE:LINE in the guest's
 * messages points into it), else the normalized form with the knobs it gave.
 */
static char *workload_text(const struct workload *wl)
{
	struct workload *again = NULL;
	struct wl_error err;
	size_t size = 0;
	char *text = slurp(wl->path, &size);
	FILE *f;

	if (text && wl_parse_buffer(text, size, wl->path, &again, &err) == 0 && wl_equal(again, wl)) {
		wl_free(again);
		return text;
	}
	wl_free(again);
	free(text);
	text = NULL;
	f = open_memstream(&text, &size);
	if (!f)
		return NULL;
	/* only the knobs it gave: an older kernel refuses a knob it lacks only
	 * when the workload asked for it */
	if (wl_print_given(wl, f) != 0 || fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

int kg_initrd_write(const char *path, const char *base, const struct workload *const *wls,
		    size_t n, const struct kg_options *opt, char *msg, size_t len)
{
	struct archive a = { .f = fopen(path, "we") };
	char *job = NULL, name[64];
	int rc = -1;

	if (!a.f)
		return kg_fail(msg, len, "cannot write %s: %s", path, strerror(errno));
	if (copy_base(a.f, base, msg, len) != 0)
		goto out;
	job = job_text(wls, n, opt);
	if (!job) {
		kg_fail(msg, len, "out of memory");
		goto out;
	}
	entry(&a, "dev", S_IFDIR | 0755, 0, 0, NULL, 0);
	entry(&a, "dev/console", S_IFCHR | 0600, 5, 1, NULL, 0);
	entry(&a, KG_JOB_DIR + 1, S_IFDIR | 0755, 0, 0, NULL, 0);
	snprintf(name, sizeof name, "%s/job", KG_JOB_DIR + 1);
	file_entry(&a, name, job);
	for (size_t i = 0; i < n; i++) {
		char *text = workload_text(wls[i]);

		if (!text) {
			kg_fail(msg, len, "out of memory");
			goto out;
		}
		snprintf(name, sizeof name, "%s/%zu.wl", KG_JOB_DIR + 1, i);
		file_entry(&a, name, text);
		free(text);
	}
	entry(&a, "TRAILER!!!", 0, 0, 0, NULL, 0);
	rc = 0;
out:
	free(job);
	if (fflush(a.f) != 0 || ferror(a.f)) {
		if (rc == 0)
			kg_fail(msg, len, "cannot write %s: %s", path, strerror(errno));
		rc = -1;
	}
	fclose(a.f);
	return rc;
}
