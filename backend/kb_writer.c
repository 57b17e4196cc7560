/*
 * kb_writer.c - continuous writers: one thread per `when = continuous`
 * writer, writing its pages at its rate while ksmd scans.
 *
 * The thread lives in the runner and writes into the workload process with
 * process_vm_writev(), which takes the same write faults (and COW breaks of
 * KSM pages) as the process's own stores, so the workload processes stay
 * single-threaded and simple. Pages come from the writer's selection in a
 * cycle (a random selection is drawn anew on every pass), offsets from the
 * writer's own random stream (wl_writer_rng), values as the writer says.
 * Fresh values of continuous writer W are content_fresh_value(fresh_start +
 * 2^62 + W * 2^40 + n): a range no scheduled write reaches, since a
 * continuous writer makes a workload non-deterministic anyway. Writes are
 * paced every millisecond against the wall clock, up to 1024 per system call.
 */
#include "config.h"
#include "kb_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#define BATCH 1024
#define TICK_NS UINT64_C(1000000)
#define CWRITER_FRESH_BASE (UINT64_C(1) << 62)

struct kb_cwriter {
	const struct workload *wl;
	size_t index;       /* into wl->writers */
	pid_t pid;          /* the process written into */
	uint64_t addr;      /* the region's page 0 in that process */
	pthread_t thread;
	atomic_bool stop;   /* set by the runner to end the thread */
	atomic_int error;   /* the errno that ended it early, or 0 */
	uint64_t writes;    /* page writes done (the thread's own) */
};

/* The next page of the cycle over the selection. */
static uint64_t next_page(struct wl_page_iter *it, const struct wl_pagesel *sel, uint64_t npages,
			  struct wl_rng *rng)
{
	uint64_t page;

	if (!wl_page_iter_next(it, &page)) {
		wl_page_iter_init(it, sel, npages, rng);
		if (!wl_page_iter_next(it, &page))
			page = 0; /* lint guarantees a non-empty selection */
	}
	return page;
}

static void *cwriter_thread(void *arg)
{
	struct kb_cwriter *w = arg;
	const struct wl_writer *wr = &w->wl->writers[w->index];
	uint64_t npages = w->wl->regions[wr->region].pages;
	uint64_t fresh = w->wl->fresh_start + CWRITER_FRESH_BASE + ((uint64_t)w->index << 40);
	struct wl_rng rng = wl_writer_rng(w->wl, w->index);
	static const size_t word = CONTENT_WORD_SIZE;
	uint8_t (*bytes)[CONTENT_WORD_SIZE] = calloc(BATCH, sizeof *bytes);
	struct iovec *local = calloc(BATCH, sizeof *local), *remote = calloc(BATCH, sizeof *remote);
	struct wl_page_iter it;
	uint64_t t0 = kb_now_ns();

	if (!bytes || !local || !remote) {
		atomic_store(&w->error, ENOMEM);
		goto out;
	}
	wl_page_iter_init(&it, &wr->pages, npages, &rng);
	while (!atomic_load(&w->stop)) {
		double should = (double)wr->rate * (double)(kb_now_ns() - t0) / (double)KB_NSEC;
		uint64_t due = should > (double)w->writes ? (uint64_t)should - w->writes : 0;
		size_t n = due < BATCH ? (size_t)due : BATCH;

		if (n == 0) {
			kb_sleep_ns(TICK_NS);
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			uint64_t page = next_page(&it, &wr->pages, npages, &rng);
			uint32_t offset = wl_offset_pick(&wr->offset, &rng);
			uint64_t value = wr->value.fresh ? content_fresh_value(fresh++) : wr->value.value;

			content_value_bytes(value, bytes[i]);
			local[i] = (struct iovec){ bytes[i], word };
			remote[i] = (struct iovec){ (void *)(uintptr_t)(w->addr + page * KB_PAGE_SIZE +
									 offset),
						    word };
		}
		if (process_vm_writev(w->pid, local, n, remote, n, 0) < 0) {
			atomic_store(&w->error, errno);
			break;
		}
		w->writes += n;
	}
out:
	free(bytes);
	free(local);
	free(remote);
	return NULL;
}

int kb_cwriter_start(struct kb_cwriter **out, const struct workload *wl, size_t index,
		     const struct kb_procs *ps, char *msg, size_t len)
{
	const struct wl_writer *wr = &wl->writers[index];
	struct kb_cwriter *w = calloc(1, sizeof *w);
	int err;

	*out = NULL;
	if (!w)
		return kb_fail(msg, len, "out of memory");
	w->wl = wl;
	w->index = index;
	w->pid = ps->proc[wr->process].pid;
	w->addr = kb_region_addr(ps, wr->region);
	atomic_init(&w->stop, false);
	atomic_init(&w->error, 0);
	err = pthread_create(&w->thread, NULL, cwriter_thread, w);
	if (err) {
		free(w);
		return kb_fail(msg, len, "[writer %s]: cannot start its thread: %s", wr->name,
			       strerror(err));
	}
	*out = w;
	return 0;
}

bool kb_cwriter_failed(struct kb_cwriter *w)
{
	return w && atomic_load(&w->error) != 0;
}

int kb_cwriter_stop(struct kb_cwriter *w, char *msg, size_t len)
{
	int err;

	if (!w)
		return 0;
	atomic_store(&w->stop, true);
	pthread_join(w->thread, NULL);
	err = atomic_load(&w->error);
	if (err)
		kb_fail(msg, len, "%s:%u: [writer %s]: writing into process %s stopped: %s",
			w->wl->path, w->wl->writers[w->index].line, w->wl->writers[w->index].name,
			w->wl->procs[w->wl->writers[w->index].process].name, strerror(err));
	free(w);
	return err ? -1 : 0;
}
