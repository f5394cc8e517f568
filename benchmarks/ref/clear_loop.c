/*
 * clear_loop: an independent reference for pagezero's clear kernels.
 *
 *   clear_loop SIZE CHUNK LOOPS      (bytes, bytes, count; CHUNK 0 = SIZE)
 *
 * Maps SIZE bytes (MAP_POPULATE|MAP_PRIVATE|MAP_ANONYMOUS), prefaults them,
 * then runs LOOPS timed loops; each loop clears the whole region in
 * CHUNK-sized calls of a plain C loop of uint64_t stores.  Each loop is timed
 * with CLOCK_MONOTONIC_RAW.  Prints the median rate in bytes/sec on stdout.
 *
 * Build with: gcc -O3 -march=native -fno-tree-loop-distribute-patterns
 * (the flag stops gcc turning the loop into a memset() call: the reference
 * must be the loop itself, whatever code gcc generates for it).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

/* noinline: one call per chunk, as a kernel call per chunk in pagezero. */
static __attribute__((noinline)) void clear_chunk(uint64_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = 0;
	/* The stores are visible to the outside world: gcc may not elide them. */
	__asm__ volatile("" : : "r"(p) : "memory");
}

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
	if (argc != 4) {
		fprintf(stderr, "usage: %s SIZE CHUNK LOOPS\n", argv[0]);
		return 2;
	}
	size_t size = strtoull(argv[1], NULL, 0);
	size_t chunk = strtoull(argv[2], NULL, 0);
	long loops = strtol(argv[3], NULL, 0);
	if (chunk == 0)
		chunk = size;
	if (size == 0 || size % 8 || chunk % 8 || size % chunk || loops < 1) {
		fprintf(stderr, "clear_loop: SIZE, CHUNK must be multiples of 8, CHUNK divide SIZE, LOOPS >= 1\n");
		return 2;
	}
	char *buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_POPULATE | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double *rate = malloc(loops * sizeof(*rate));
	if (buf == MAP_FAILED || !rate) {
		perror("clear_loop");
		return 1;
	}
	/* Prefault: MAP_POPULATE maps the shared zero page on some kernels for
	 * reads only; writing every page makes them private and present. */
	for (size_t off = 0; off < size; off += 4096)
		buf[off] = 1;

	for (long l = 0; l < loops; l++) {
		double t0 = now();
		for (size_t off = 0; off < size; off += chunk)
			clear_chunk((uint64_t *)(buf + off), chunk / 8);
		rate[l] = size / (now() - t0);
	}
	qsort(rate, loops, sizeof(*rate), cmp);
	double med = loops % 2 ? rate[loops / 2]
			       : (rate[loops / 2 - 1] + rate[loops / 2]) / 2;
	printf("%.0f\n", med);
	munmap(buf, size);
	free(rate);
	return 0;
}
