/*
 * x86-64 copy kernels for the memcpy benchmark, the counterparts of
 * arch/x86/lib/memcpy_64.S's variants plus a non-temporal one.
 * Same body contract as fill.c: dst aligned, length a multiple of the unit.
 */
#include <immintrin.h>
#include <stdint.h>

/* Eight 8-byte loads and stores per 64-byte line, as memcpy_orig. */
void pz_copy_x86_unrolled(void *dst, const void *src, size_t len)
{
	size_t lines = len / 64;

	__asm__ volatile(".p2align 4\n"
			 "1:\n\t"
			 "movq 0*8(%[s]), %%r8\n\t"
			 "movq 1*8(%[s]), %%r9\n\t"
			 "movq 2*8(%[s]), %%r10\n\t"
			 "movq 3*8(%[s]), %%r11\n\t"
			 "movq %%r8, 0*8(%[d])\n\t"
			 "movq %%r9, 1*8(%[d])\n\t"
			 "movq %%r10, 2*8(%[d])\n\t"
			 "movq %%r11, 3*8(%[d])\n\t"
			 "movq 4*8(%[s]), %%r8\n\t"
			 "movq 5*8(%[s]), %%r9\n\t"
			 "movq 6*8(%[s]), %%r10\n\t"
			 "movq 7*8(%[s]), %%r11\n\t"
			 "movq %%r8, 4*8(%[d])\n\t"
			 "movq %%r9, 5*8(%[d])\n\t"
			 "movq %%r10, 6*8(%[d])\n\t"
			 "movq %%r11, 7*8(%[d])\n\t"
			 "leaq 64(%[s]), %[s]\n\t"
			 "leaq 64(%[d]), %[d]\n\t"
			 "decq %[n]\n\t"
			 "jnz 1b"
			 : [d] "+r"(dst), [s] "+r"(src), [n] "+r"(lines)
			 :
			 : "r8", "r9", "r10", "r11", "memory", "cc");
}

void pz_copy_x86_movsq(void *dst, const void *src, size_t len)
{
	size_t words = len / 8;

	__asm__ volatile("rep movsq" : "+D"(dst), "+S"(src), "+c"(words) : : "memory");
}

void pz_copy_x86_movsb(void *dst, const void *src, size_t len)
{
	__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(len) : : "memory");
}

/* Unaligned 32-byte loads, streaming 32-byte stores: the copy leaves no lines in cache. */
__attribute__((target("avx"))) void pz_copy_x86_avx_nt(void *dst, const void *src, size_t len)
{
	__m256i *d = dst, *end = (__m256i *)((char *)dst + len);
	const __m256i *s = src;

	for (; d < end; d += 4, s += 4) {
		__m256i a = _mm256_loadu_si256(s + 0);
		__m256i b = _mm256_loadu_si256(s + 1);
		__m256i c = _mm256_loadu_si256(s + 2);
		__m256i e = _mm256_loadu_si256(s + 3);

		_mm256_stream_si256(d + 0, a);
		_mm256_stream_si256(d + 1, b);
		_mm256_stream_si256(d + 2, c);
		_mm256_stream_si256(d + 3, e);
	}
	_mm_sfence();
}
