/*
 * arm64 FEAT_MOPS fill kernels: one SET prologue/main/epilogue triple does
 * the whole fill, at any alignment and length, with the CPU choosing how.
 * SETP/SETM/SETE is what memset() uses on MOPS CPUs; SETPN/SETMN/SETEN,
 * the non-temporal hint, is what clear_page() uses. "arm64: clear_page[s]
 * using memset" (2026) expects them to perform alike and could not check (no tested machine had MOPS):
 * these rows let a MOPS machine answer.
 *
 * The instructions are written as .inst words: binutils learnt the
 * mnemonics only in 2.38, and the arm64 distributions pip must still
 * build on (Amazon Linux 2, Ubuntu 20.04, RHEL 8) ship older assemblers
 * that would reject this file and with it the whole extension. An .inst
 * cannot name an asm operand's register, so the operands are pinned to
 * x0 (destination), x1 (length) and x2 (byte) with register variables.
 * tests/c/cross_arm64.sh disassembles the result and checks every word
 * decodes to the instruction its comment names.
 *
 * Encoding (Arm ARM, "Memory Set"): 0x19c00400 | Rs << 16 | op2 << 12 |
 * Rn << 5 | Rd, op2 = 0 (P), 4 (M), 8 (E), plus 2 for the non-temporal
 * forms. Rs = 31 is xzr: the kernel clears from xzr, and so do we for
 * zeros.
 *
 * The prologue sets NZCV to tell the main and epilogue instructions which
 * algorithm it picked, hence the "cc" clobber; all three must run back to
 * back on the same registers, which one asm statement guarantees.
 */
#include <stddef.h>
#include <stdint.h>

#include "kernels.h"

/* Rd = x0, Rn = x1: SETx [x0]!, x1!, xzr, then the same with Rs = x2. */
#define PZ_SETP_ZR ".inst 0x19df0420\n\t"  /* setp  [x0]!, x1!, xzr */
#define PZ_SETM_ZR ".inst 0x19df4420\n\t"  /* setm  [x0]!, x1!, xzr */
#define PZ_SETE_ZR ".inst 0x19df8420\n\t"  /* sete  [x0]!, x1!, xzr */
#define PZ_SETPN_ZR ".inst 0x19df2420\n\t" /* setpn [x0]!, x1!, xzr */
#define PZ_SETMN_ZR ".inst 0x19df6420\n\t" /* setmn [x0]!, x1!, xzr */
#define PZ_SETEN_ZR ".inst 0x19dfa420\n\t" /* seten [x0]!, x1!, xzr */
#define PZ_SETP_X2 ".inst 0x19c20420\n\t"  /* setp  [x0]!, x1!, x2 */
#define PZ_SETM_X2 ".inst 0x19c24420\n\t"  /* setm  [x0]!, x1!, x2 */
#define PZ_SETE_X2 ".inst 0x19c28420\n\t"  /* sete  [x0]!, x1!, x2 */
#define PZ_SETPN_X2 ".inst 0x19c22420\n\t" /* setpn [x0]!, x1!, x2 */
#define PZ_SETMN_X2 ".inst 0x19c26420\n\t" /* setmn [x0]!, x1!, x2 */
#define PZ_SETEN_X2 ".inst 0x19c2a420\n\t" /* seten [x0]!, x1!, x2 */

void pz_fill_arm64_mops(void *dst, int c, size_t len)
{
	register void *d __asm__("x0") = dst;
	register size_t n __asm__("x1") = len;

	if ((unsigned char)c == 0) {
		__asm__ volatile(PZ_SETP_ZR PZ_SETM_ZR PZ_SETE_ZR
				 : "+r"(d), "+r"(n)
				 :
				 : "memory", "cc");
	} else {
		register uint64_t v __asm__("x2") = (unsigned char)c;

		__asm__ volatile(PZ_SETP_X2 PZ_SETM_X2 PZ_SETE_X2
				 : "+r"(d), "+r"(n)
				 : "r"(v)
				 : "memory", "cc");
	}
}

/* clear_page()'s own, over the page where the kernel has MOPS (kernels.def). */
void pz_fill_arm64_mops_nt(void *dst, int c, size_t len)
{
	register void *d __asm__("x0") = dst;
	register size_t n __asm__("x1") = len;

	if ((unsigned char)c == 0) {
		__asm__ volatile(PZ_SETPN_ZR PZ_SETMN_ZR PZ_SETEN_ZR
				 : "+r"(d), "+r"(n)
				 :
				 : "memory", "cc");
	} else {
		register uint64_t v __asm__("x2") = (unsigned char)c;

		__asm__ volatile(PZ_SETPN_X2 PZ_SETMN_X2 PZ_SETEN_X2
				 : "+r"(d), "+r"(n)
				 : "r"(v)
				 : "memory", "cc");
	}
}
