/*
 * cpu.c - run-time CPU feature detection.
 *
 * A feature counts only when the CPU has it AND the OS lets user space use
 * it: on x86-64 the OS must save the vector registers (XGETBV), or a CPU
 * with AVX-512 under an OS that does not enable the ZMM state would SIGILL;
 * on arm64 the kernel must advertise the feature (HWCAP2_MOPS) or allow it
 * (DCZID_EL0.DZP clear for DC ZVA). Kernels that need a missing feature
 * stay in the registry, marked unavailable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "switches.h"

static const char *const feature_names[PZ_FEAT_COUNT] = {
	"sse2",   "avx", "avx2",         "avx512f", "avx512bw", "erms",     "fsrm",
	"clzero", "tsc", "constant_tsc", "mops",    "dczva",    "rep_good",
};

/* What detection found about a missing feature, where that says more than its absence. */
static const char *absent_detail[PZ_FEAT_COUNT];

static __attribute__((unused)) void note_absent(uint64_t bit, const char *why)
{
	absent_detail[__builtin_ctzll(bit)] = why;
}

#if defined(__x86_64__)
#include <cpuid.h>

static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

/* 1 when @word is one of the space-separated words of @line. */
static int has_word(const char *line, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	for (p = strstr(line, word); p; p = strstr(p + 1, word))
		if ((p == line || p[-1] == ' ' || p[-1] == '\t') &&
		    (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
			return 1;
	return 0;
}

/*
 * What Linux decided about rep string stores, from the first "flags" line of
 * /proc/cpuinfo (the boot CPU's capabilities, which clear_pages()'s
 * alternatives were patched from): a @feature bit for erms and rep_good.
 * REP_GOOD has no CPUID bit: the vendor code sets it, and not everywhere
 * (arch/x86/kernel/cpu/intel.c, early_init_intel(): from the Pentium M
 * (family 6 model 0xd) on, only where IA32_MISC_ENABLE.FAST_STRING is set;
 * before 2025, init_intel(): 64-bit family 6 only; amd.c, init_amd():
 * family 0x10 on, and init_amd_k8() for K8 from its C stepping on; hygon.c
 * always; centaur.c and zhaoxin.c from family 6). Where the BIOS turned fast strings off, early_init_intel()
 * clears ERMS too, so CPUID's ERMS alone would pick the wrong clear_page.
 * Returns @cpuid_feats adjusted, or unchanged where /proc/cpuinfo cannot be read.
 */
static uint64_t kernel_string_flags(uint64_t cpuid_feats)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[8192];
	uint64_t feats = cpuid_feats;

	if (!f) {
		note_absent(PZ_FEAT_REP_GOOD, "/proc/cpuinfo unreadable: Linux's rep_good unknown");
		return feats;
	}
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		if (has_word(line, "rep_good"))
			feats |= PZ_FEAT_REP_GOOD;
		else
			note_absent(PZ_FEAT_REP_GOOD, "not in /proc/cpuinfo's flags");
		if ((feats & PZ_FEAT_ERMS) && !has_word(line, "erms")) {
			feats &= ~PZ_FEAT_ERMS;
			note_absent(PZ_FEAT_ERMS,
				    "CPUID has it, Linux cleared it: fast strings off");
		}
		break;
	}
	fclose(f);
	return feats;
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
	if (c & (1u << 27)) { /* OSXSAVE: XGETBV is usable */
		xcr0 = xgetbv0();
		os_avx = (xcr0 & 0x6) == 0x6;      /* XMM | YMM */
		os_avx512 = (xcr0 & 0xe6) == 0xe6; /* + opmask, ZMM_Hi256, Hi16_ZMM */
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
	return kernel_string_flags(f);
}
#elif defined(__aarch64__)
#include <sys/auxv.h>

/* Linux 6.5's uapi value; older headers (Debian 12 has 6.1's) lack the name. */
#ifndef HWCAP2_MOPS
#define HWCAP2_MOPS (1ul << 43)
#endif

/* DCZID_EL0 is readable at EL0 by design: user-space memset sizes DC ZVA by it. */
static uint64_t read_dczid(void)
{
	uint64_t v;

	__asm__ volatile("mrs %0, dczid_el0" : "=r"(v));
	return v;
}

#define PZ_DCZID_DZP (1u << 4) /* DC ZVA prohibited */
#define PZ_DCZID_BS 0xfu       /* log2 of the block size in 4-byte words */

/*
 * MOPS is read from the hwcaps, never from ID_AA64ISAR2_EL1: the CPU may
 * have it while the kernel has not enabled it (SCTLR_EL1.MSCEn), and then
 * SETP traps. HWCAP2_MOPS says both are true.
 */
static uint64_t detect(void)
{
	uint64_t f = 0;

	if (getauxval(AT_HWCAP2) & HWCAP2_MOPS)
		f |= PZ_FEAT_MOPS;
	else
		note_absent(PZ_FEAT_MOPS,
			    "no HWCAP2_MOPS in AT_HWCAP2: no FEAT_MOPS, or Linux before 6.5");
	/*
	 * DZP reads as 1 when the OS (SCTLR_EL1.DZE clear) or a hypervisor
	 * (HCR_EL2.TDZ set) forbids DC ZVA: executing it would then trap.
	 */
	if (!(read_dczid() & PZ_DCZID_DZP))
		f |= PZ_FEAT_DCZVA;
	else
		note_absent(PZ_FEAT_DCZVA, "DCZID_EL0.DZP is set: DC ZVA is prohibited");
	return f;
}

size_t pz_cpu_dczva_block(void)
{
	return (size_t)4 << (read_dczid() & PZ_DCZID_BS);
}
#else
static uint64_t detect(void)
{
	return 0;
}
#endif

#if !defined(__aarch64__)
size_t pz_cpu_dczva_block(void)
{
	return 0;
}
#endif

static uint64_t detected; /* what the CPU and OS offer, before hiding */

uint64_t pz_cpu_features(void)
{
	/* CPUID is slow under a hypervisor (it traps): ask once. */
	static int done;

	if (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
		detected = detect();
		__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	}
	/* As GLIBC_TUNABLES masks hwcaps: what pagezero does on an older CPU, without one. */
	return detected & ~pz_switch(PZ_SW_HIDE_FEATURES);
}

const char *pz_feature_name(unsigned i)
{
	return i < PZ_FEAT_COUNT ? feature_names[i] : "?";
}

/* The names in @mask, comma-separated; those also in @why with their absent_detail. */
static unsigned list_features(uint64_t mask, uint64_t why, char *buf, size_t n)
{
	unsigned i, count = 0;
	size_t used = 0;

	if (n)
		buf[0] = '\0';
	for (i = 0; i < PZ_FEAT_COUNT; i++) {
		const char *detail = (why & (1ull << i)) ? absent_detail[i] : NULL;
		int w;

		if (!(mask & (1ull << i)))
			continue;
		if (used >= n)
			break;
		w = snprintf(buf + used, n - used, "%s%s%s%s%s", count ? ", " : "",
			     feature_names[i], detail ? " (" : "", detail ? detail : "",
			     detail ? ")" : "");
		if (w < 0)
			break;
		used += (size_t)w;
		count++;
	}
	return count;
}

unsigned pz_feature_list(uint64_t mask, char *buf, size_t n)
{
	return list_features(mask, 0, buf, n);
}

unsigned pz_missing_list(uint64_t mask, char *buf, size_t n)
{
	pz_cpu_features(); /* detection fills absent_detail */
	/* A feature the CPU has but that is hidden has nothing to explain beyond its name. */
	return list_features(mask, ~detected, buf, n);
}
