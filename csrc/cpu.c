/*
 * cpu.c - run-time CPU feature detection.
 *
 * A feature counts only when the CPU has it AND, for vector registers, the
 * OS saves their state (XGETBV): a CPU with AVX-512 under an OS that does
 * not enable the ZMM state would SIGILL. Kernels that need a missing
 * feature stay in the registry, marked unavailable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

static const char *const feature_names[PZ_FEAT_COUNT] = {
	"sse2", "avx", "avx2", "avx512f", "avx512bw",
	"erms", "fsrm", "clzero", "tsc", "constant_tsc",
};

#if defined(__x86_64__)
#include <cpuid.h>

static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

static uint64_t detect(void)
{
	unsigned a, b, c, d, max_leaf, max_ext;
	uint64_t f = 0, xcr0 = 0;
	int os_avx = 0, os_avx512 = 0;

	max_leaf = __get_cpuid_max(0, NULL);
	if (max_leaf < 1)
		return 0;

	__cpuid(1, a, b, c, d);
	if (d & (1u << 4))
		f |= PZ_FEAT_TSC;
	if (d & (1u << 26))
		f |= PZ_FEAT_SSE2;
	if (c & (1u << 27)) {           /* OSXSAVE: XGETBV is usable */
		xcr0 = xgetbv0();
		os_avx = (xcr0 & 0x6) == 0x6;          /* XMM | YMM */
		os_avx512 = (xcr0 & 0xe6) == 0xe6;     /* + opmask, ZMM_Hi256, Hi16_ZMM */
	}
	if ((c & (1u << 28)) && os_avx)
		f |= PZ_FEAT_AVX;

	if (max_leaf >= 7) {
		__cpuid_count(7, 0, a, b, c, d);
		if ((b & (1u << 5)) && os_avx)
			f |= PZ_FEAT_AVX2;
		if ((b & (1u << 9)))
			f |= PZ_FEAT_ERMS;
		if ((b & (1u << 16)) && os_avx512)
			f |= PZ_FEAT_AVX512F;
		if ((b & (1u << 30)) && os_avx512)
			f |= PZ_FEAT_AVX512BW;
		if (d & (1u << 4))
			f |= PZ_FEAT_FSRM;
	}

	max_ext = __get_cpuid_max(0x80000000u, NULL);
	if (max_ext >= 0x80000007u) {
		__cpuid(0x80000007u, a, b, c, d);
		if (d & (1u << 8))
			f |= PZ_FEAT_INVARIANT_TSC;
	}
	if (max_ext >= 0x80000008u) {
		__cpuid(0x80000008u, a, b, c, d);
		if (b & 1u)
			f |= PZ_FEAT_CLZERO;
	}
	return f;
}
#else
static uint64_t detect(void)
{
	return 0;
}
#endif


/*
 * PAGEZERO_HIDE_FEATURES=avx512f,clzero hides features the CPU has, the way
 * GLIBC_TUNABLES can mask hwcaps: it shows what pagezero does on an older
 * CPU (the kernels become unavailable, with the reason) without one.
 */
static uint64_t hidden_features(void)
{
	const char *env = getenv("PAGEZERO_HIDE_FEATURES");
	uint64_t mask = 0;
	unsigned i;

	if (!env)
		return 0;
	for (i = 0; i < PZ_FEAT_COUNT; i++) {
		const char *p = env;
		size_t n = strlen(feature_names[i]);

		while ((p = strstr(p, feature_names[i])) != NULL) {
			int starts = p == env || p[-1] == ',';
			int ends = p[n] == '\0' || p[n] == ',';

			if (starts && ends)
				mask |= 1ull << i;
			p += n;
		}
	}
	return mask;
}

uint64_t pz_cpu_features(void)
{
	/* CPUID is slow under a hypervisor (it traps): ask once. */
	static uint64_t features;
	static int done;

	if (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
		features = detect() & ~hidden_features();
		__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	}
	return features;
}

const char *pz_feature_name(unsigned i)
{
	return i < PZ_FEAT_COUNT ? feature_names[i] : "?";
}

unsigned pz_feature_list(uint64_t mask, char *buf, size_t n)
{
	unsigned i, count = 0;
	size_t used = 0;

	if (n)
		buf[0] = '\0';
	for (i = 0; i < PZ_FEAT_COUNT; i++) {
		int w;

		if (!(mask & (1ull << i)))
			continue;
		if (used >= n)
			break;
		w = snprintf(buf + used, n - used, "%s%s", count ? ", " : "", feature_names[i]);
		if (w < 0)
			break;
		used += (size_t)w;
		count++;
	}
	return count;
}
