/*
 * kernel_rows.h - every kernels.def row this build compiles, PZ_ARCH set
 * to the arch/ directory's name for each: csrc/kernels.c includes it once
 * for the prototypes, once for the registry and once for clear_page()'s
 * choice, with PZ_FILL, PZ_COPY and PZ_CLEAR_PAGES defined each time (no
 * include guard, on purpose).
 */
#define PZ_ARCH "any"
#include "generic/kernels.def"
#undef PZ_ARCH
#if defined(__x86_64__)
#define PZ_ARCH "x86-64"
#include "x86/kernels.def"
#undef PZ_ARCH
#elif defined(__aarch64__)
#define PZ_ARCH "arm64"
#include "arm64/kernels.def"
#undef PZ_ARCH
#endif
