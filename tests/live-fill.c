/*
 * live-fill.c - the program `ksmkit run --cmd` tests measure: it maps PAGES
 * pages of private anonymous memory with mmap (nothing marks them
 * mergeable: PR_SET_MEMORY_MERGE, set by ksmkit before exec, does), fills
 * page i with the value i % DISTINCT in every word, so KSM can merge them
 * into DISTINCT KSM pages, says "filled" on stdout, and sleeps SECONDS (0:
 * until killed) before exiting 0. Built without sanitizers: AddressSanitizer's
 * shadow would be mergeable too.
 *
 * usage: live-fill PAGES DISTINCT [SECONDS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096u

int main(int argc, char **argv)
{
	unsigned long pages, distinct, seconds = 0;
	uint64_t *mem;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: live-fill PAGES DISTINCT [SECONDS]\n");
		return 2;
	}
	pages = strtoul(argv[1], NULL, 10);
	distinct = strtoul(argv[2], NULL, 10);
	if (argc == 4)
		seconds = strtoul(argv[3], NULL, 10);
	if (!pages || !distinct) {
		fprintf(stderr, "live-fill: PAGES and DISTINCT must be above 0\n");
		return 2;
	}
	mem = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("live-fill: mmap");
		return 1;
	}
	madvise(mem, pages * PAGE, MADV_NOHUGEPAGE);
	for (unsigned long p = 0; p < pages; p++)
		for (unsigned w = 0; w < PAGE / sizeof *mem; w++)
			mem[p * (PAGE / sizeof *mem) + w] = 0x6b736d6b69740000ull + p % distinct;
	printf("filled\n");
	fflush(stdout);
	if (seconds)
		sleep((unsigned)seconds);
	else
		for (;;)
			pause();
	return 0;
}
