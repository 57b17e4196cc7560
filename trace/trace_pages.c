/*
 * trace_pages.c - page partitions (struct trace_page): growing a capture,
 * and their CSV form, written (ksmkit run --pages) and read back strictly.
 *
 * The CSV is a first line naming the format and its version, a fixed
 * header, then one line per page in capture order: scan, the process's and
 * the region's names, the page index, the frame (column "pfn", whichever
 * engine captured it) and the four flags as 0 or 1. The reader accepts
 * exactly what the writer produces (give or take "\r\n" line endings and a
 * missing final newline), maps names back to the indices of the names it is
 * given, and stops at the first thing wrong with "NAME:LINE: what". How two
 * partitions are compared is compare/'s business.
 */
#include "trace_internal.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define PAGES_MAGIC "# ksmkit-pages "
#define PAGES_FORMAT_VERSION 1
#define PAGES_HEADER "scan,process,region,page,pfn,present,ksm,zero,thp"

/* The columns, in order. */
enum pages_column {
	PAGES_SCAN,
	PAGES_PROCESS,
	PAGES_REGION,
	PAGES_PAGE,
	PAGES_FRAME,
	PAGES_PRESENT, /* the flag columns follow in flag_of_column's order */
	PAGES_COLUMN_COUNT = PAGES_PRESENT + 4
};

static const uint32_t flag_of_column[4] = { TRACE_PAGE_PRESENT, TRACE_PAGE_KSM, TRACE_PAGE_ZERO,
					    TRACE_PAGE_THP };

int trace_pages_append(struct trace_page **pages, size_t *n, size_t *cap,
		       const struct trace_page *page)
{
	if (*n == *cap) {
		size_t new_cap = *cap ? *cap * 2 : 1024;
		struct trace_page *grown;

		if (new_cap < *cap || new_cap > SIZE_MAX / sizeof(*grown)) {
			errno = ENOMEM;
			return -1;
		}
		grown = realloc(*pages, new_cap * sizeof(*grown));
		if (!grown)
			return -1;
		*pages = grown;
		*cap = new_cap;
	}
	(*pages)[(*n)++] = *page;
	return 0;
}

/* ---- writing -------------------------------------------------------------- */

static int write_page(const struct trace_page *p, const struct trace_page_names *names, FILE *out)
{
	assert(p->proc < names->nprocs && p->region < names->nregions);
	if (trace_put(out, "%" PRIu64 ",%s,%s,%" PRIu64 ",%" PRIu64, p->scan, names->proc[p->proc],
		      names->region[p->region], p->page, p->frame) < 0)
		return -1;
	for (size_t f = 0; f < 4; f++)
		if (trace_put(out, ",%d", (p->flags & flag_of_column[f]) ? 1 : 0) < 0)
			return -1;
	return trace_put_char(out, '\n');
}

int trace_pages_write_csv(const struct trace_page *pages, size_t n,
			  const struct trace_page_names *names, FILE *out)
{
	if (trace_put(out, PAGES_MAGIC "%d\n" PAGES_HEADER "\n", PAGES_FORMAT_VERSION) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (write_page(&pages[i], names, out) < 0)
			return -1;
	return trace_finish_output(out);
}

/* ---- reading -------------------------------------------------------------- */

/* Line 1: the format and the one version this reads. */
static int read_magic(struct trace_reader *r)
{
	int rc = trace_reader_line(r);
	uint64_t version;

	if (rc < 0)
		return -1;
	if (rc == 0)
		r->lineno = 1;
	if (rc == 0 || !trace_starts_with(r->line, PAGES_MAGIC) ||
	    trace_parse_digits(r->line + strlen(PAGES_MAGIC), UINT64_MAX, &version) ==
		    TRACE_NUMBER_MALFORMED)
		return trace_reader_fail(r, "not a ksmkit page partition (expected '" PAGES_MAGIC
					    "%d')", PAGES_FORMAT_VERSION);
	if (strcmp(r->line + strlen(PAGES_MAGIC), "1") != 0)
		return trace_reader_fail(r, "unsupported page partition format version %s (this "
					    "ksmkit reads %d)", r->line + strlen(PAGES_MAGIC),
					 PAGES_FORMAT_VERSION);
	return 0;
}

static int read_header(struct trace_reader *r)
{
	int rc = trace_reader_line(r);

	if (rc < 0)
		return -1;
	if (rc == 0)
		r->lineno++;
	if (rc == 0 || strcmp(r->line, PAGES_HEADER) != 0)
		return trace_reader_fail(r, "expected the header '" PAGES_HEADER "'");
	return trace_reader_take_header(r);
}

/* The index of the name in field @column among @names[0..count). */
static int read_name(struct trace_reader *r, size_t column, const char *const *names,
		     size_t count, uint32_t *index)
{
	int found = trace_find_name(names, count, r->field[column]);

	if (found < 0)
		return trace_reader_fail(r, "column %s: no %s '%s'", r->column[column],
					 r->column[column], r->field[column]);
	*index = (uint32_t)found;
	return 0;
}

static int read_flags(struct trace_reader *r, uint32_t *flags)
{
	*flags = 0;
	for (size_t f = 0; f < 4; f++) {
		const char *text = r->field[PAGES_PRESENT + f];

		if (strcmp(text, "0") != 0 && strcmp(text, "1") != 0)
			return trace_reader_fail(r, "column %s: '%s' is not 0 or 1",
						 r->column[PAGES_PRESENT + f], text);
		if (text[0] == '1')
			*flags |= flag_of_column[f];
	}
	return 0;
}

static int read_page(struct trace_reader *r, const struct trace_page_names *names,
		     struct trace_page *p)
{
	if (r->line[0] == '\0')
		return trace_reader_fail(r, "empty line");
	if (trace_reader_split_row(r) < 0 || trace_reader_uint64(r, PAGES_SCAN, &p->scan) < 0 ||
	    read_name(r, PAGES_PROCESS, names->proc, names->nprocs, &p->proc) < 0 ||
	    read_name(r, PAGES_REGION, names->region, names->nregions, &p->region) < 0 ||
	    trace_reader_uint64(r, PAGES_PAGE, &p->page) < 0 ||
	    trace_reader_uint64(r, PAGES_FRAME, &p->frame) < 0)
		return -1;
	return read_flags(r, &p->flags);
}

int trace_pages_read_csv(FILE *in, const char *name, const struct trace_page_names *names,
			 struct trace_page **out, size_t *n, char *err, size_t errlen)
{
	struct trace_reader r = { .in = in, .name = name ? name : "-", .err = err,
				  .errlen = errlen };
	struct trace_page *pages = NULL, page;
	size_t count = 0, cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (errlen > 0)
		err[0] = '\0';
	if (read_magic(&r) < 0 || read_header(&r) < 0)
		goto fail;
	while ((rc = trace_reader_line(&r)) == 1) {
		if (read_page(&r, names, &page) < 0)
			goto fail;
		if (trace_pages_append(&pages, &count, &cap, &page) < 0) {
			trace_reader_fail(&r, "out of memory");
			goto fail;
		}
	}
	if (rc < 0)
		goto fail;
	trace_reader_release(&r);
	*out = pages;
	*n = count;
	return 0;

fail:
	free(pages);
	trace_reader_release(&r);
	return -1;
}
