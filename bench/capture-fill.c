/*
 * capture-fill.c - the process `make bench-capture` captures: it maps SIZE
 * (default 2 GiB) of private anonymous memory and fills it with a known mix,
 * a quarter zero pages (written, then zeroed: present), a quarter copies of
 * 64 distinct pages, half unique pages; then prints "ready PID" and, until
 * killed, rewrites one word of WORK pages in turn (default 0: it sleeps),
 * printing every second the pages it rewrote in that second, so that a
 * capture's cost to the process it reads can be seen as a drop in that rate.
 * Usage: capture-fill [SIZE_MIB] [WORK]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096u

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void fill(uint8_t *m, size_t pages)
{
	for (size_t i = 0; i < pages; i++) {
		uint64_t *w = (uint64_t *)(m + i * PAGE);
		uint64_t seed;

		switch (i % 4) {
		case 0: /* zero: present, all zeros */
			w[0] = 1;
			w[0] = 0;
			continue;
		case 1: seed = i % 64 + 1; break;      /* duplicate: one of 64 */
		default: seed = i * 0x9e3779b97f4a7c15ull + 1000; /* unique */
		}
		for (size_t k = 0; k < PAGE / 8; k++)
			w[k] = seed * (k + 1);
	}
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 2048;
	size_t work = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
	size_t pages = mib * 256, next = 2, done = 0; /* next: a unique page */
	uint8_t *m = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	double mark;

	if (m == MAP_FAILED || !pages) {
		perror("capture-fill: mmap");
		return 1;
	}
	madvise(m, pages * PAGE, MADV_NOHUGEPAGE); /* a 4 KiB page mix, as the counts say */
	fill(m, pages);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!work)
		for (;;)
			pause();
	mark = now_s();
	for (;;) {
		for (size_t k = 0; k < work; k++) {
			((volatile uint64_t *)(m + next * PAGE))[1]++;
			next = (next + 4) % pages; /* unique pages only stay unique */
		}
		done += work;
		if (now_s() - mark >= 1) {
			printf("rate %zu\n", done);
			fflush(stdout);
			done = 0;
			mark = now_s();
		}
	}
}
