/*
 * kg_results.c - reading what the guest wrote on its results port (the
 * format is in kg_proto.h) back into kb_result values, as if each workload
 * had run on this host: the trace through trace_read_csv, the page captures
 * line by line. The guest may have stopped anywhere (killed at the timeout,
 * a kernel panic), so a truncated file is an answer too: what came before
 * the break is kept, and the caller is told the guest did not finish.
 */
#include "config.h"
#include "kg_internal.h"
#include "kg_proto.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct reader {
	FILE *f;
	const char *path;
	char *line;
	size_t cap;
	unsigned lineno;
	const struct kg_options *opt;
};

/* The next line without its newline; NULL at the end of the file. */
static const char *next_line(struct reader *r)
{
	ssize_t n = getline(&r->line, &r->cap, r->f);

	if (n <= 0)
		return NULL;
	r->lineno++;
	if (r->line[n - 1] == '\n')
		r->line[n - 1] = '\0';
	return r->line;
}

static int bad(struct reader *r, char *msg, size_t len, const char *what)
{
	return kg_fail(msg, len, "%s:%u: %s", r->path, r->lineno, what);
}

/* The text after "KEY " on the next line, or NULL (end, or another key). */
static const char *value_of(struct reader *r, const char *key)
{
	const char *line = next_line(r);
	size_t n = strlen(key);

	if (!line || strncmp(line, key, n) != 0 || (line[n] != ' ' && line[n] != '\0'))
		return NULL;
	return line[n] ? line + n + 1 : line + n;
}

static int read_trace(struct reader *r, struct kg_run *run, char *msg, size_t len)
{
	const char *v = value_of(r, "trace");
	char *end, err[512];
	unsigned long long bytes;
	char *text;
	FILE *mem;
	int rc;

	if (!v || (bytes = strtoull(v, &end, 10), *end))
		return bad(r, msg, len, "expected 'trace BYTES'");
	if (bytes == 0)
		return 0;
	text = malloc(bytes);
	if (!text)
		return kg_fail(msg, len, "out of memory");
	if (fread(text, 1, bytes, r->f) != bytes) {
		free(text);
		return bad(r, msg, len, "the trace is cut short");
	}
	mem = fmemopen(text, bytes, "r");
	if (!mem) {
		free(text);
		return kg_fail(msg, len, "out of memory");
	}
	rc = trace_read_csv(mem, "the guest's trace", &run->result.trace, err, sizeof err);
	fclose(mem);
	/* the CSV's own lines do not count in ours */
	free(text);
	if (rc != 0)
		return kg_fail(msg, len, "%s", err);
	return 0;
}

/*
 * A "KEY COUNT" line opening @count entries of @size bytes, into @*array
 * (left NULL when COUNT is 0). 0, or -1 with a message.
 */
static int read_counted(struct reader *r, const char *key, size_t size, void **array,
			size_t *count, char *msg, size_t len)
{
	const char *v = value_of(r, key);
	unsigned long long n;
	char *end, what[64];

	*array = NULL;
	if (!v || (n = strtoull(v, &end, 10), *end)) {
		snprintf(what, sizeof what, "expected '%s COUNT'", key);
		return bad(r, msg, len, what);
	}
	*count = (size_t)n;
	if (n && !(*array = calloc(n, size)))
		return kg_fail(msg, len, "out of memory");
	return 0;
}

static int read_pages(struct reader *r, struct kg_run *run, char *msg, size_t len)
{
	struct trace_page at = { 0 };
	void *array;
	size_t count;

	if (read_counted(r, "pages", sizeof(struct trace_page), &array, &count, msg, len) != 0)
		return -1;
	run->result.pages = array;
	for (size_t i = 0; i < count;) {
		const char *line = next_line(r);
		uint64_t frame;
		uint32_t flags;

		if (!line)
			return bad(r, msg, len, "the page captures are cut short");
		if (line[0] == '=') {
			if (sscanf(line, "= %" SCNu64 " %" SCNu32 " %" SCNu32 " %" SCNu64, &at.scan,
				   &at.proc, &at.region, &at.page) != 4)
				return bad(r, msg, len, "expected '= SCAN PROC REGION PAGE'");
			continue;
		}
		if (sscanf(line, "%" SCNx64 " %" SCNx32, &frame, &flags) != 2)
			return bad(r, msg, len, "expected 'PFN FLAGS'");
		at.frame = frame;
		at.flags = flags;
		run->result.pages[i++] = at;
		run->result.npages = i;
		at.page++;
	}
	return 0;
}

static int read_dirty(struct reader *r, struct kg_run *run, char *msg, size_t len)
{
	void *array;
	size_t count;

	if (read_counted(r, "dirty", sizeof(struct kb_dirty_page), &array, &count, msg, len) != 0)
		return -1;
	run->result.dirty = array;
	for (size_t i = 0; i < count; i++) {
		const char *line = next_line(r);
		struct kb_dirty_page *d = &run->result.dirty[i];

		if (!line)
			return bad(r, msg, len, "the soft-dirty captures are cut short");
		if (sscanf(line, "%" SCNu64 " %" SCNu32 " %" SCNu32 " %" SCNu64, &d->scan, &d->proc,
			   &d->region, &d->page) != 4)
			return bad(r, msg, len, "expected 'SCAN PROC REGION PAGE'");
		run->result.ndirty = i + 1;
	}
	return 0;
}

/* One "run INDEX" block; 0, or -1 with a message. */
static int read_run(struct reader *r, struct kg_session *s, size_t index, char *msg, size_t len)
{
	struct kg_run *grown = realloc(s->run, (s->nruns + 1) * sizeof *grown), *run;
	const char *v;
	char *end;

	if (!grown)
		return kg_fail(msg, len, "out of memory");
	s->run = grown;
	run = &s->run[s->nruns++];
	memset(run, 0, sizeof *run);
	run->status = KB_FAILED;
	if (index + 1 != s->nruns)
		return bad(r, msg, len, "runs out of order");
	if (!(v = value_of(r, "status")))
		return bad(r, msg, len, "expected 'status N'");
	run->status = (int)strtol(v, &end, 10);
	if (!(v = value_of(r, "invalid")))
		return bad(r, msg, len, "expected 'invalid N'");
	run->result.invalid_rows = strtoull(v, &end, 10);
	if (!(v = value_of(r, "message")))
		return bad(r, msg, len, "expected 'message TEXT'");
	snprintf(run->message, sizeof run->message, "%s", v);
	if (read_trace(r, run, msg, len) != 0 || read_pages(r, run, msg, len) != 0 ||
	    read_dirty(r, run, msg, len) != 0)
		return -1;
	if (!(v = value_of(r, "end")))
		return bad(r, msg, len, "expected 'end INDEX'");
	return 0;
}

int kg_results_read(const char *path, struct kg_session *s, const struct kg_options *opt,
		    char *msg, size_t len)
{
	struct reader r = { .f = fopen(path, "re"), .path = path, .opt = opt };
	const char *line;
	int rc = -1;

	if (!r.f)
		return kg_fail(msg, len, "cannot read the guest's results %s: %s", path,
			       strerror(errno));
	line = next_line(&r);
	if (!line) {
		rc = 0; /* the guest never got as far as writing */
		goto out;
	}
	if (strcmp(line, KG_RESULT_MAGIC) != 0) {
		bad(&r, msg, len, "not a ksmkit-guest results file");
		goto out;
	}
	while ((line = next_line(&r)) != NULL) {
		size_t index;

		if (strncmp(line, "release ", 8) == 0) {
			snprintf(s->release, sizeof s->release, "%s", line + 8);
		} else if (strncmp(line, "nodes ", 6) == 0) {
			snprintf(s->nodes, sizeof s->nodes, "%s", line + 6);
		} else if (strncmp(line, "note ", 5) == 0) {
			if (opt->note)
				opt->note(line + 5, opt->note_arg);
		} else if (sscanf(line, "run %zu", &index) == 1) {
			if (read_run(&r, s, index, msg, len) != 0)
				goto out;
		} else if (strcmp(line, "done") == 0) {
			rc = 1;
			goto out;
		} else {
			bad(&r, msg, len, "unexpected line");
			goto out;
		}
	}
	rc = 0;
out:
	free(r.line);
	fclose(r.f);
	return rc;
}
