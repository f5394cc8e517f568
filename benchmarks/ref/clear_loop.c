/*
 * clear_loop: an independent reference for pagezero's clear kernels.
 *
 *   clear_loop SIZE CHUNK LOOPS [MODE]   (bytes, bytes, count; CHUNK 0 = SIZE)
 *
 * MODE, optional, comma-separated: "thp" asks transparent huge pages for the
 * region (MADV_HUGEPAGE before it is faulted); "nt" clears with the widest
 * non-temporal stores the compiler's target has (64-byte vmovntdq with AVX-512,
 * 32-byte with AVX, else 8-byte movnti; stnp on arm64) and a store fence per
 * loop; "stosb" and "stosq" (x86-64) with one rep stosb or rep stosq per chunk,
 * as the kernel's clear_page() variants do, instead of the plain loop; "warm"
 * clears the whole region once, untimed, before the timed loops.
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
#include <string.h>
#include <sys/mman.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <time.h>

/* noinline: one call per chunk, as a kernel call per chunk in pagezero. */
static __attribute__((noinline)) void clear_chunk(uint64_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = 0;
	/* The stores are visible to the outside world: gcc may not elide them. */
	__asm__ volatile("" : : "r"(p) : "memory");
}

/* Non-temporal stores: where the other kernels' stores skip the caches, this
 * loop's do too, so the reference stands beside both kinds. */
static __attribute__((noinline)) int clear_chunk_nt(uint64_t *p, size_t n)
{
#if defined(__x86_64__)
	for (size_t i = 0; i < n; i++)
		_mm_stream_si64((long long *)&p[i], 0);
	return 0;
#elif defined(__aarch64__)
	for (size_t i = 0; i + 1 < n; i += 2)
		__asm__ volatile("stnp xzr, xzr, [%0]" : : "r"(&p[i]) : "memory");
	return 0;
#else
	(void)p;
	(void)n;
	return -1;
#endif
}

/* The widest streaming store the target has, 8-byte movnti for the tail. */
static __attribute__((noinline)) void clear_chunk_nt_wide(uint64_t *p, size_t n)
{
	size_t i = 0;
#if defined(__x86_64__) && defined(__AVX512F__)
	for (; i + 8 <= n && ((uintptr_t)&p[i] & 63) == 0; i += 8)
		_mm512_stream_si512((void *)&p[i], _mm512_setzero_si512());
#elif defined(__x86_64__) && defined(__AVX__)
	for (; i + 4 <= n && ((uintptr_t)&p[i] & 31) == 0; i += 4)
		_mm256_stream_si256((__m256i *)&p[i], _mm256_setzero_si256());
#endif
	clear_chunk_nt(p + i, n - i);
}

/* One string instruction per chunk: rep stosb (unit 1) or rep stosq (unit 8). */
static __attribute__((noinline)) int clear_chunk_string(uint64_t *p, size_t n, int bytes)
{
#if defined(__x86_64__)
	void *d = p;
	size_t c = bytes ? n * 8 : n;

	if (bytes)
		__asm__ volatile("rep stosb" : "+D"(d), "+c"(c) : "a"(0) : "memory");
	else
		__asm__ volatile("rep stosq" : "+D"(d), "+c"(c) : "a"(0) : "memory");
	return 0;
#else
	(void)p;
	(void)n;
	(void)bytes;
	return -1;
#endif
}

static void store_fence(void)
{
#if defined(__x86_64__)
	_mm_sfence();
#elif defined(__aarch64__)
	__asm__ volatile("dmb ishst" : : : "memory");
#endif
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
	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: %s SIZE CHUNK LOOPS [thp,warm,nt|stosb|stosq]\n", argv[0]);
		return 2;
	}
	const char *mode = argc == 5 ? argv[4] : "";
	int thp = strstr(mode, "thp") != NULL, nt = strstr(mode, "nt") != NULL;
	int stosb = strstr(mode, "stosb") != NULL, stosq = strstr(mode, "stosq") != NULL;
	int warm = strstr(mode, "warm") != NULL;
	if (nt && clear_chunk_nt(NULL, 0)) {
		fprintf(stderr, "clear_loop: no non-temporal store for this architecture\n");
		return 2;
	}
	if ((stosb || stosq) && clear_chunk_string(NULL, 0, stosb)) {
		fprintf(stderr, "clear_loop: rep stos is x86-64's\n");
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
	/* thp: mapped without MAP_POPULATE, advised, then faulted by the prefault
	 * below, so the faults can take huge pages. */
	char *buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 (thp ? 0 : MAP_POPULATE) | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf != MAP_FAILED && thp && madvise(buf, size, MADV_HUGEPAGE))
		perror("clear_loop: madvise(MADV_HUGEPAGE)");
	double *rate = malloc(loops * sizeof(*rate));
	if (buf == MAP_FAILED || !rate) {
		perror("clear_loop");
		return 1;
	}
	/* Prefault: MAP_POPULATE maps the shared zero page on some kernels for
	 * reads only; writing every page makes them private and present. */
	for (size_t off = 0; off < size; off += 4096)
		buf[off] = 1;

	/* warm: loop -1, the same pass as the timed ones, its time dropped. */
	for (long l = warm ? -1 : 0; l < loops; l++) {
		double t0 = now();
		for (size_t off = 0; off < size; off += chunk) {
			if (nt)
				clear_chunk_nt_wide((uint64_t *)(buf + off), chunk / 8);
			else if (stosb || stosq)
				clear_chunk_string((uint64_t *)(buf + off), chunk / 8, stosb);
			else
				clear_chunk((uint64_t *)(buf + off), chunk / 8);
		}
		if (nt)
			store_fence();
		if (l >= 0)
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
