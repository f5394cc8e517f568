/*
 * cpu.h - CPU features the kernels need, detected at run time: CPUID on
 * x86-64 (and the kernel's flags line in /proc/cpuinfo for what Linux alone
 * decides), getauxval(AT_HWCAP2) and DCZID_EL0 on arm64.
 */
#ifndef PZ_CPU_H
#define PZ_CPU_H

#include "pz.h"

/* One bit per feature a kernel can need. The names are /proc/cpuinfo's. */
#define PZ_FEAT_SSE2 (1ull << 0)
#define PZ_FEAT_AVX (1ull << 1)
#define PZ_FEAT_AVX2 (1ull << 2)
#define PZ_FEAT_AVX512F (1ull << 3)
#define PZ_FEAT_AVX512BW (1ull << 4)
#define PZ_FEAT_ERMS (1ull << 5)
#define PZ_FEAT_FSRM (1ull << 6)
#define PZ_FEAT_CLZERO (1ull << 7)
#define PZ_FEAT_TSC (1ull << 8)
#define PZ_FEAT_INVARIANT_TSC (1ull << 9)
#define PZ_FEAT_MOPS (1ull << 10) /* arm64 FEAT_MOPS: SETP/SETM/SETE (HWCAP2_MOPS) */
#define PZ_FEAT_DCZVA \
	(1ull << 11) /* arm64 DC ZVA allowed: DCZID_EL0.DZP clear (no cpuinfo name of its own) */
/*
 * x86 REP_GOOD: a Linux flag, not a CPUID bit (its name in /proc/cpuinfo is rep_good):
 * the kernel's verdict that rep stosq beats its unrolled loop. No kernel row needs it to
 * run; clear_pages() needs it to pick rep stosq (the PZ_CLEAR_PAGES rows of
 * arch/x86/kernels.def).
 */
#define PZ_FEAT_REP_GOOD (1ull << 12)
#define PZ_FEAT_COUNT 13

/*
 * Features this CPU (and its OS, for the vector register state) supports,
 * less those the test switch PAGEZERO_HIDE_FEATURES names (switches.h).
 */
uint64_t pz_cpu_features(void);

/* Name of feature bit number @i (0 <= i < PZ_FEAT_COUNT). */
const char *pz_feature_name(unsigned i);

/*
 * Write a comma-separated list of the features in @mask into @buf
 * (always NUL-terminated); returns the number of features written.
 */
unsigned pz_feature_list(uint64_t mask, char *buf, size_t n);

/*
 * As pz_feature_list(), for features this CPU lacks: a name is followed by
 * what detection found, in parentheses, where it found more than "absent"
 * (e.g. "dczva (DCZID_EL0.DZP is set: DC ZVA is prohibited)"). A feature
 * the CPU has but PAGEZERO_HIDE_FEATURES hides gets its bare name.
 */
unsigned pz_missing_list(uint64_t mask, char *buf, size_t n);

/*
 * The DC ZVA block in bytes (4 << DCZID_EL0.BS) on arm64, whether or not
 * DC ZVA is allowed; 0 on other architectures.
 */
size_t pz_cpu_dczva_block(void);

#endif /* PZ_CPU_H */
