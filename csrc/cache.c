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
	[PZ_FLUSH_DC_CIVAC] = "dc-civac",
	[PZ_FLUSH_EVICT] = "evict",
};

const struct pz_names pz_flush_names = { flush_names, PZ_FLUSH_COUNT };

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
#elif defined(__aarch64__) && defined(__linux__)
	/*
	 * DC CIVAC at EL0 traps only where SCTLR_EL1.UCI is clear, and Linux sets
	 * it (arch/arm64/include/asm/sysreg.h, INIT_SCTLR_EL1_MMU_ON); on the
	 * Cortex-A53s whose errata forbid user cache maintenance
	 * (arch/arm64/kernel/cpu_errata.c, ARM64_WORKAROUND_CLEAN_CACHE,
	 * cpu_enable_cache_maint_trap()) it clears UCI and emulates the
	 * instruction instead (arch/arm64/kernel/traps.c,
	 * user_cache_maint_handler()). Either way it works, by address.
	 */
	return m == PZ_FLUSH_DC_CIVAC || m == PZ_FLUSH_EVICT;
#else
	return m == PZ_FLUSH_EVICT;
#endif
}

enum pz_flush pz_flush_best(void)
{
	if (pz_flush_available(PZ_FLUSH_CLFLUSHOPT))
		return PZ_FLUSH_CLFLUSHOPT;
	if (pz_flush_available(PZ_FLUSH_CLFLUSH))
		return PZ_FLUSH_CLFLUSH;
	if (pz_flush_available(PZ_FLUSH_DC_CIVAC))
		return PZ_FLUSH_DC_CIVAC;
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

#if defined(__aarch64__)
/*
 * The smallest data cache line of any level: CTR_EL0.DminLine, log2 of it in
 * 4-byte words (readable at EL0 unless SCTLR_EL1.UCT is clear, which Linux
 * emulates too). Stepping by it misses no line, whatever the CPU's.
 */
static size_t dcache_line(void)
{
	uint64_t ctr;

	__asm__ volatile("mrs %0, ctr_el0" : "=r"(ctr));
	return (size_t)4 << ((ctr >> 16) & 0xf);
}

/* Clean and invalidate to the point of coherency, then wait until every line is done. */
static void flush_civac(const char *p, size_t len)
{
	const size_t line = dcache_line();
	const char *end = p + len;

	for (p = (const char *)((uintptr_t)p & ~(uintptr_t)(line - 1)); p < end; p += line)
		__asm__ volatile("dc civac, %0" : : "r"(p) : "memory");
	/* DC CIVAC completes only at a DSB: the clear must not start before it ends. */
	__asm__ volatile("dsb ish" : : : "memory");
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
#if defined(__aarch64__)
	case PZ_FLUSH_DC_CIVAC:
		flush_civac(p, len);
		break;
#endif
	default:
		evict(f->evict, f->evict_len);
		break;
	}
}
