/*
 * kernels.h - the registry of fill (memset) and copy (memcpy) kernels.
 *
 * The rows are declared once per architecture in arch/<arch>/kernels.def and
 * expanded twice by kernels.c: once for prototypes, once for the table.
 *
 * A kernel body only ever sees the part of the buffer it can handle: dst
 * aligned to ->align and a length that is a non-zero multiple of ->unit.
 * pz_kernel_fill() / pz_kernel_copy() peel the unaligned head and the short
 * tail with shared byte-wise code, so every kernel accepts any pointer and
 * any length.
 */
#ifndef PZ_KERNELS_H
#define PZ_KERNELS_H

#include "pz.h"

typedef void (*pz_fill_fn)(void *dst, int c, size_t len);
typedef void (*pz_copy_fn)(void *dst, const void *src, size_t len);

enum pz_kernel_kind { PZ_KIND_FILL = 0, PZ_KIND_COPY = 1 };

/* Row flags. */
#define PZ_TEMPORAL 0u /* ordinary stores: lines are allocated in cache */
#define PZ_NONTEMPORAL \
	(1u << 0)              /* streaming stores (on x86-64 the body ends with
				     sfence; every clear row's barrier: pz_publish_clear()) */
#define PZ_ZERO_ONLY (1u << 1) /* can only write zeros (clzero, dc zva) */

/*
 * A row's unit and align when they are the DC ZVA block: a property of the
 * CPU (DCZID_EL0.BS: 64 bytes on most arm64 cores, 256 on A64FX, 512 under
 * qemu's "max" CPU), not of the code. The registry replaces it with the
 * block size before anyone sees the row.
 */
#define PZ_DCZVA_BLOCK 0

/*
 * The barrier the kernel's fault path pays between clearing a folio and
 * mapping it: __folio_mark_uptodate()'s smp_wmb() (include/linux/page-flags.h),
 * so that no other CPU that sees the new PTE can see the folio's old bytes.
 * It is paid once per folio, after the whole clear, whatever the walk (page by
 * page or in extents): so the replays pay it once, after the strategy's walk
 * (folio_bench.c, and batch_bench.c after each pass), and no kernel body has
 * it. Ordering within the clear needs none: the clearing thread sees its own
 * stores in order, and the one barrier orders all of them before what
 * follows. memset (mem_bench.c) pays none, as perf bench mem memset does not.
 * The same rule for temporal and non-temporal rows:
 *
 *   x86-64  smp_wmb() is barrier(), a compiler barrier (ordinary stores are
 *           ordered under TSO): nothing here. Non-temporal stores are not
 *           ordered by TSO, so those rows end with the sfence a kernel
 *           clear made of them needs before the PTE store (the 2022
 *           clear_pages_incoherent() RFC's clear_page_make_coherent(); the 2012
 *           clear_page_nocache had none): that is their stores' cost, in
 *           their bodies (arch/x86/fill.c).
 *   arm64   smp_wmb() is dmb ishst (arch/arm64/include/asm/barrier.h), after
 *           the folio's clear, temporal stores or not.
 *
 * Copy rows model memcpy (perf bench mem memcpy) and pay nothing extra.
 */
static inline __attribute__((always_inline)) void pz_publish_clear(void)
{
#if defined(__aarch64__)
	__asm__ volatile("dmb ishst" : : : "memory");
#endif
	/*
	 * Elsewhere nothing, not even barrier(): the kernel's is there to keep its C
	 * compiler from sinking the clear's stores past the PTE store, which has no
	 * counterpart here, and an asm statement after memset() would cost "default"
	 * its tail call (a call and a return per chunk that perf's memset does not pay).
	 */
}

struct pz_kernel {
	const char *name;
	const char *description;
	const char *arch;
	enum pz_kernel_kind kind;
	uint64_t features; /* PZ_FEAT_* bits the body needs */
	unsigned flags;    /* PZ_NONTEMPORAL, PZ_ZERO_ONLY */
	size_t unit;       /* body lengths are multiples of this (a power of two) */
	size_t align;      /* body destinations are aligned to this (a power of two) */
	union {
		pz_fill_fn fill;
		pz_copy_fn copy;
	} fn;
};

size_t pz_kernel_count(void);
const struct pz_kernel *pz_kernel_at(size_t i);
const struct pz_kernel *pz_kernel_find(enum pz_kernel_kind kind, const char *name);

/*
 * 1 when this CPU can run @k; otherwise 0 and a reason such as
 * "this CPU lacks avx512f" is written to @reason (NUL-terminated).
 */
int pz_kernel_available(const struct pz_kernel *k, char *reason, size_t n);

/*
 * The clear kernel Linux's clear_page() uses on this CPU: the first of this
 * arch's PZ_CLEAR_PAGES rows (arch/<arch>/kernels.def) that this CPU can run
 * and whose condition holds; "default" where there is none. Never NULL.
 */
const struct pz_kernel *pz_kernel_clear_pages(void);

/* Fill/copy any [dst, dst+len) with @k. The caller checked availability. */
void pz_kernel_fill(const struct pz_kernel *k, void *dst, int c, size_t len);
void pz_kernel_copy(const struct pz_kernel *k, void *dst, const void *src, size_t len);

#endif /* PZ_KERNELS_H */
