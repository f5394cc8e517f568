/*
 * arm64 fill kernels built from ordinary instructions: DC ZVA and STP/STNP
 * pair loops. Each body gets dst aligned to its row's align and a length
 * that is a non-zero multiple of its row's unit (see kernels.def);
 * kernels.c handles the rest.
 *
 * No body has a barrier: the fault path's smp_wmb() (dmb ishst here) comes
 * once per folio, after the whole clear, and the replays pay it there
 * (csrc/kernels.h, pz_publish_clear()); memset pays none, as perf's does.
 * STNP needs no barrier of its own: unlike x86's streaming stores, the same
 * thread's later accesses see them in order.
 */
#include <stddef.h>
#include <stdint.h>

#include "kernels.h"

#define PZ_BYTE_X8(c) (0x0101010101010101ull * (unsigned char)(c))

/*
 * Zeros are the subject, and the kernel stores them from xzr: the "rZ"
 * constraint prints xzr when @v is the constant 0, which the always_inline
 * callers below pass for c == 0; any other byte goes through a register.
 */
static inline __attribute__((always_inline)) void stp_loop(char *p, size_t len, uint64_t v)
{
	const char *end = p + len;

	__asm__ volatile("1:\n\t"
			 "stp %x[v], %x[v], [%[p]]\n\t"
			 "stp %x[v], %x[v], [%[p], #16]\n\t"
			 "stp %x[v], %x[v], [%[p], #32]\n\t"
			 "stp %x[v], %x[v], [%[p], #48]\n\t"
			 "add %[p], %[p], #64\n\t"
			 "cmp %[p], %[end]\n\t"
			 "b.ne 1b"
			 : [p] "+r"(p)
			 : [end] "r"(end), [v] "rZ"(v)
			 : "memory", "cc");
}

static inline __attribute__((always_inline)) void stnp_loop(char *p, size_t len, uint64_t v)
{
	const char *end = p + len;

	__asm__ volatile("1:\n\t"
			 "stnp %x[v], %x[v], [%[p]]\n\t"
			 "stnp %x[v], %x[v], [%[p], #16]\n\t"
			 "stnp %x[v], %x[v], [%[p], #32]\n\t"
			 "stnp %x[v], %x[v], [%[p], #48]\n\t"
			 "add %[p], %[p], #64\n\t"
			 "cmp %[p], %[end]\n\t"
			 "b.ne 1b"
			 : [p] "+r"(p)
			 : [end] "r"(end), [v] "rZ"(v)
			 : "memory", "cc");
}

/* Temporal pairs: what memset() does for a large fill when it skips DC ZVA. */
void pz_fill_arm64_stp(void *dst, int c, size_t len)
{
	if ((unsigned char)c == 0)
		stp_loop(dst, len, 0);
	else
		stp_loop(dst, len, PZ_BYTE_X8(c));
}

/* Non-temporal pairs: clear_page()'s loop where DCZID_EL0.DZP forbids DC ZVA. */
void pz_fill_arm64_stnp(void *dst, int c, size_t len)
{
	if ((unsigned char)c == 0)
		stnp_loop(dst, len, 0);
	else
		stnp_loop(dst, len, PZ_BYTE_X8(c));
}

/*
 * DC ZVA zeroes the whole block holding its address without reading it;
 * the row's unit and align are that block (kernels.c sets them from
 * DCZID_EL0.BS), so every address here starts a block. The block size is
 * read again per call, as clear_page() does: one mrs, and no state shared
 * with the registry. Its stores are ordered like ordinary stores, so,
 * unlike x86's clzero, it needs no barrier of its own; whether the lines land in the
 * cache is the implementation's choice (on AmpereOne, the review of "arm64:
 * clear_page[s] using memset" (2026) reckons it behaves like STP). Zeros only: the caller never passes
 * another byte.
 */
void pz_fill_arm64_dc_zva(void *dst, int c, size_t len)
{
	char *p = dst;
	const char *end = p + len;
	uint64_t dczid;
	size_t block;

	(void)c;
	__asm__ volatile("mrs %0, dczid_el0" : "=r"(dczid));
	block = (size_t)4 << (dczid & 0xf);
	for (; p < end; p += block)
		__asm__ volatile("dc zva, %0" : : "r"(p) : "memory");
}
