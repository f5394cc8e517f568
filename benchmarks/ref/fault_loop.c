/*
 * fault_loop: an independent reference for pagezero's fault workloads.
 *
 *   fault_loop SIZE PAGE_SHIFT demand|populate LOOPS
 *
 * Each loop maps SIZE bytes of anonymous memory with pages of 1 << PAGE_SHIFT
 * bytes (12: 4KB with THP refused by MADV_NOHUGEPAGE; 21 or 30: hugetlb),
 * then for demand writes one byte at the start of every page, or for populate
 * maps with MAP_POPULATE. The clock (CLOCK_MONOTONIC_RAW) is read around the
 * mmap and the faults, munmap runs outside it: what perf bench mem mmap times.
 * Prints the median rate over the loops in bytes/sec on stdout.
 *
 * Build with: gcc -O2 fault_loop.c -o fault_loop
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: %s SIZE PAGE_SHIFT demand|populate LOOPS\n", argv[0]);
		return 2;
	}
	size_t size = strtoull(argv[1], NULL, 0);
	unsigned shift = (unsigned)strtoul(argv[2], NULL, 0);
	int demand = strcmp(argv[3], "demand") == 0;
	long loops = strtol(argv[4], NULL, 0);
	size_t page = (size_t)1 << shift;

	if ((shift != 12 && shift != 21 && shift != 30) || size == 0 || size % page || loops < 1 ||
	    (!demand && strcmp(argv[3], "populate"))) {
		fprintf(stderr, "fault_loop: bad arguments\n");
		return 2;
	}
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	if (shift != 12)
		flags |= MAP_HUGETLB | (int)(shift << MAP_HUGE_SHIFT);
	if (!demand)
		flags |= MAP_POPULATE;

	double *rate = malloc(loops * sizeof(*rate));
	if (!rate)
		return 1;
	for (long l = 0; l < loops; l++) {
		double t0 = now();
		char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, -1, 0);

		if (p == MAP_FAILED) {
			perror("fault_loop: mmap");
			return 1;
		}
		if (shift == 12 && madvise(p, size, MADV_NOHUGEPAGE)) {
			perror("fault_loop: madvise");
			return 1;
		}
		if (demand)
			for (size_t off = 0; off < size; off += page)
				((volatile char *)p)[off] = 1;
		rate[l] = size / (now() - t0);
		munmap(p, size);
	}
	qsort(rate, loops, sizeof(*rate), cmp);
	printf("%.0f\n", loops % 2 ? rate[loops / 2] : (rate[loops / 2 - 1] + rate[loops / 2]) / 2);
	free(rate);
	return 0;
}
