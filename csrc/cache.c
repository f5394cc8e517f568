/*
 * cache.c - flushing a range out of the caches (see cache.h).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "switches.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

/* Every x86-64 and arm64 CPU pagezero runs on has 64-byte lines. */
#define PZ_FLUSH_LINE 64u

static const char *const flush_names[PZ_FLUSH_COUNT] = {
	[PZ_FLUSH_CLFLUSHOPT] = "clflushopt",
	[PZ_FLUSH_CLFLUSH] = "clflush",
	[PZ_FLUSH_EVICT] = "evict",
};

const char *pz_flush_name(enum pz_flush m)
{
	return (unsigned)m < PZ_FLUSH_COUNT ? flush_names[m] : "?";
}

int pz_flush_lookup(const char *name)
{
	int i;

	for (i = 0; i < PZ_FLUSH_COUNT; i++)
		if (strcmp(name, flush_names[i]) == 0)
			return i;
	return -1;
}

int pz_flush_available(enum pz_flush m)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;

	switch (m) {
	case PZ_FLUSH_CLFLUSHOPT:
		/* CPUID.(EAX=7,ECX=0):EBX bit 23. */
		if (__get_cpuid_max(0, NULL) < 7)
			return 0;
		__cpuid_count(7, 0, a, b, c, d);
		return !!(b & (1u << 23));
	case PZ_FLUSH_CLFLUSH:
		/* CPUID.1:EDX bit 19; every x86-64 CPU has it, but ask anyway. */
		__cpuid(1, a, b, c, d);
		return !!(d & (1u << 19));
	case PZ_FLUSH_EVICT:
		return 1;
	default:
		return 0;
	}
#else
	/* arm64's DC CIVAC may trap at EL0 (SCTLR_EL1.UCI): evicting always works. */
	return m == PZ_FLUSH_EVICT;
#endif
}

enum pz_flush pz_flush_best(void)
{
	if (pz_flush_available(PZ_FLUSH_CLFLUSHOPT))
		return PZ_FLUSH_CLFLUSHOPT;
	if (pz_flush_available(PZ_FLUSH_CLFLUSH))
		return PZ_FLUSH_CLFLUSH;
	return PZ_FLUSH_EVICT;
}

#if defined(__x86_64__)
__attribute__((target("clflushopt"))) static void flush_opt(const char *p, size_t len)
{
	const char *end = p + len;

	/* Start at the line holding p: an unaligned range still loses every line it touches. */
	for (p = (const char *)((uintptr_t)p & ~(uintptr_t)(PZ_FLUSH_LINE - 1)); p < end;
	     p += PZ_FLUSH_LINE)
		_mm_clflushopt((void *)p);
	/* clflushopt is ordered only by fences: the clear must not start before it ends. */
	_mm_mfence();
}

static void flush_plain(const char *p, size_t len)
{
	const char *end = p + len;

	for (p = (const char *)((uintptr_t)p & ~(uintptr_t)(PZ_FLUSH_LINE - 1)); p < end;
	     p += PZ_FLUSH_LINE)
		_mm_clflush(p);
	_mm_mfence();
}
#endif

/* One load per line of a buffer twice the LLC: whatever was cached before is gone. */
__attribute__((noinline)) static void evict(const char *buf, size_t len)
{
	uint64_t sum = 0;
	size_t off;

	for (off = 0; off < len; off += PZ_FLUSH_LINE)
		sum += *(const volatile uint64_t *)(buf + off);
	/* Keep the loads: their results are otherwise unused. */
	__asm__ volatile("" : : "r"(sum) : "memory");
}

/*
 * PAGEZERO_FAKE_FLUSH_US=N (switches.h) makes each flush also spend N us of wall
 * time, spinning on CLOCK_MONOTONIC: a flush magnified, so that a timed span
 * that wrongly takes the flush in (a start time read before it) grows by N us
 * per chunk, which a test sees beside a clear of a few us.
 */
static void fake_flush_time(void)
{
	const long us = (long)pz_switch(PZ_SW_FAKE_FLUSH_US);
	struct timespec t0, t;

	if (!us)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

void pz_flush(const struct pz_flusher *f, const void *p, size_t len)
{
	fake_flush_time();
	switch (f->method) {
#if defined(__x86_64__)
	case PZ_FLUSH_CLFLUSHOPT:
		flush_opt(p, len);
		break;
	case PZ_FLUSH_CLFLUSH:
		flush_plain(p, len);
		break;
#endif
	default:
		evict(f->evict, f->evict_len);
		break;
	}
}
