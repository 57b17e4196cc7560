/*
 * cap_state.c - the in-memory model of a captured stream: content tokens of
 * pages, a stream's state (VMAs, a token and flags per page) and carrying
 * it over to a new list of VMAs, which is the step of the delta encoding
 * that the writer and the reader must do alike. Names of the enums.
 */
#include "cap_internal.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* Whether @page is all zeros: called only when its hash says it may be. */
static bool page_is_zero(const void *page)
{
	const uint64_t *w = page;

	for (size_t i = 0; i < CAP_PAGE_SIZE / sizeof(*w); i++)
		if (w[i])
			return false;
	return true;
}

/*
 * One pass over the bytes: the hash, compared with the zero page's (known
 * once), and only then the zero test.
 */
uint64_t cap_page_token(const void *page)
{
	static const uint8_t zeros[CAP_PAGE_SIZE];
	static uint64_t zero_hash;
	uint64_t h = XXH3_64bits(page, CAP_PAGE_SIZE);

	if (!zero_hash) /* a constant: computing it twice in two threads is harmless */
		zero_hash = XXH3_64bits(zeros, sizeof(zeros));
	if (h == zero_hash && page_is_zero(page))
		return CAP_TOKEN_ZERO;
	return h == CAP_TOKEN_ZERO ? 1 : h;
}

const char *cap_stream_status_name(enum cap_stream_status s)
{
	static const char *const names[CAP_STREAM_STATUS_COUNT] = {
		[CAP_STREAM_LIVE] = "live",
		[CAP_STREAM_EXITED] = "exited",
		[CAP_STREAM_EXECED] = "exec'd",
		[CAP_STREAM_UNREADABLE] = "unreadable",
	};

	return (unsigned)s < CAP_STREAM_STATUS_COUNT ? names[s] : "?";
}

const char *cap_thp_source_name(enum cap_thp_source s)
{
	static const char *const names[CAP_THP_SOURCE_COUNT] = {
		[CAP_THP_NONE] = "unknown (no /proc/kpageflags)",
		[CAP_THP_KPAGEFLAGS] = "kpageflags",
	};

	return (unsigned)s < CAP_THP_SOURCE_COUNT ? names[s] : "?";
}

static size_t pages_of(const struct cap_vma *vmas, size_t n)
{
	size_t pages = 0;

	for (size_t i = 0; i < n; i++)
		pages += (size_t)((vmas[i].end - vmas[i].start) / CAP_PAGE_SIZE);
	return pages;
}

int cap_stream_state_init(struct cap_stream_state *s, const struct cap_vma *vmas, size_t nvmas,
			  struct cap_error *err)
{
	size_t npages = pages_of(vmas, nvmas);

	memset(s, 0, sizeof(*s));
	s->vmas = malloc((nvmas ? nvmas : 1) * sizeof(*vmas));
	s->token = calloc(npages ? npages : 1, sizeof(*s->token));
	s->flags = calloc(npages ? npages : 1, sizeof(*s->flags));
	if (!s->vmas || !s->token || !s->flags) {
		cap_stream_state_free(s);
		return cap_fail(err, "out of memory for a stream of %zu pages", npages);
	}
	if (nvmas)
		memcpy(s->vmas, vmas, nvmas * sizeof(*vmas));
	s->nvmas = nvmas;
	s->npages = npages;
	return 0;
}

void cap_stream_state_free(struct cap_stream_state *s)
{
	free(s->vmas);
	free(s->token);
	free(s->flags);
	memset(s, 0, sizeof(*s));
}

size_t cap_stream_page_of(const struct cap_stream_state *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nvmas, first = 0;

	/* binary search for the VMA, then the pages of those before it */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->vmas[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == s->nvmas || addr < s->vmas[lo].start)
		return SIZE_MAX;
	first = pages_of(s->vmas, lo);
	return first + (size_t)((addr - s->vmas[lo].start) / CAP_PAGE_SIZE);
}

/*
 * Walk both sorted lists at once: for each new VMA, the old VMAs that
 * overlap it give their pages at the same addresses.
 */
static void carry_pages(const struct cap_stream_state *old, struct cap_stream_state *new)
{
	size_t o = 0, old_first = 0, new_first = 0;

	for (size_t n = 0; n < new->nvmas; n++) {
		const struct cap_vma *nv = &new->vmas[n];

		while (o < old->nvmas && old->vmas[o].end <= nv->start) {
			old_first += (size_t)((old->vmas[o].end - old->vmas[o].start) / CAP_PAGE_SIZE);
			o++;
		}
		size_t k_first = old_first;

		for (size_t k = o; k < old->nvmas && old->vmas[k].start < nv->end; k++) {
			const struct cap_vma *ov = &old->vmas[k];
			uint64_t from = ov->start > nv->start ? ov->start : nv->start;
			uint64_t to = ov->end < nv->end ? ov->end : nv->end;

			if (from < to) {
				size_t src = k_first + (size_t)((from - ov->start) / CAP_PAGE_SIZE);
				size_t dst = new_first + (size_t)((from - nv->start) / CAP_PAGE_SIZE);
				size_t count = (size_t)((to - from) / CAP_PAGE_SIZE);

				memcpy(new->token + dst, old->token + src,
				       count * sizeof(*new->token));
				memcpy(new->flags + dst, old->flags + src, count);
			}
			k_first += (size_t)((ov->end - ov->start) / CAP_PAGE_SIZE);
		}
		new_first += (size_t)((nv->end - nv->start) / CAP_PAGE_SIZE);
	}
}

int cap_stream_state_remap(struct cap_stream_state *s, const struct cap_vma *vmas, size_t nvmas,
			   struct cap_error *err)
{
	struct cap_stream_state new;

	if (cap_stream_state_init(&new, vmas, nvmas, err) != 0)
		return -1;
	carry_pages(s, &new);
	new.status = s->status;
	cap_stream_state_free(s);
	*s = new;
	return 0;
}
