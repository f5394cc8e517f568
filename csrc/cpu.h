/* cpu.h - CPU features the kernels need, detected at run time (CPUID on x86). */
#ifndef PZ_CPU_H
#define PZ_CPU_H

#include "pz.h"

/* One bit per feature a kernel can need. The names are /proc/cpuinfo's. */
#define PZ_FEAT_SSE2     (1ull << 0)
#define PZ_FEAT_AVX      (1ull << 1)
#define PZ_FEAT_AVX2     (1ull << 2)
#define PZ_FEAT_AVX512F  (1ull << 3)
#define PZ_FEAT_AVX512BW (1ull << 4)
#define PZ_FEAT_ERMS     (1ull << 5)
#define PZ_FEAT_FSRM     (1ull << 6)
#define PZ_FEAT_CLZERO   (1ull << 7)
#define PZ_FEAT_TSC      (1ull << 8)
#define PZ_FEAT_INVARIANT_TSC (1ull << 9)
#define PZ_FEAT_COUNT    10

/*
 * Features this CPU (and its OS, for the vector register state) supports,
 * less those named in $PAGEZERO_HIDE_FEATURES (comma-separated).
 */
uint64_t pz_cpu_features(void);

/* Name of feature bit number @i (0 <= i < PZ_FEAT_COUNT). */
const char *pz_feature_name(unsigned i);

/*
 * Write a comma-separated list of the features in @mask into @buf
 * (always NUL-terminated); returns the number of features written.
 */
unsigned pz_feature_list(uint64_t mask, char *buf, size_t n);

#endif /* PZ_CPU_H */
