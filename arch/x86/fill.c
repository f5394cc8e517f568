/*
 * x86-64 fill kernels. Each body gets dst aligned to its row's align and a
 * length that is a non-zero multiple of its row's unit (see kernels.def);
 * kernels.c handles the rest.
 *
 * Vector kernels carry a target attribute instead of a global -mavx512f, so
 * the extension builds everywhere and only runs them when CPUID says so.
 *
 * The fault path's smp_wmb() is the replays' to pay, once per folio
 * (csrc/kernels.h, pz_publish_clear(): on x86-64 nothing, the kernel's being
 * a compiler barrier). The non-temporal bodies end with sfence: their stores
 * are weakly ordered, and a kernel clear made of them would need it before
 * the PTE store.
 */
#include <immintrin.h>
#include <stdint.h>

#include "kernels.h"

#define PZ_BYTE_X8(c) (0x0101010101010101ull * (unsigned char)(c))

/*
 * The fill value as a vector register. Zero, the case that matters, is
 * vpxor, which has no latency; a broadcast costs an imul and a shuffle
 * (~7 cycles) before the first store, which is 10% of a 4KB clear in L1.
 */
__attribute__((target("avx512f"))) static inline __m512i splat512(int c)
{
	return c ? _mm512_set1_epi64((long long)PZ_BYTE_X8(c)) : _mm512_setzero_si512();
}

__attribute__((target("avx"))) static inline __m256i splat256(int c)
{
	return c ? _mm256_set1_epi64x((long long)PZ_BYTE_X8(c)) : _mm256_setzero_si256();
}

/* The kernel's memzero_page_aligned_unrolled: one 64-byte line per iteration. */
void pz_fill_x86_unrolled(void *dst, int c, size_t len)
{
	uint64_t v = PZ_BYTE_X8(c);
	size_t lines = len / 64;

	__asm__ volatile(".p2align 4\n"
			 "1:\n\t"
			 "movq %[v], 0*8(%[p])\n\t"
			 "movq %[v], 1*8(%[p])\n\t"
			 "movq %[v], 2*8(%[p])\n\t"
			 "movq %[v], 3*8(%[p])\n\t"
			 "movq %[v], 4*8(%[p])\n\t"
			 "movq %[v], 5*8(%[p])\n\t"
			 "movq %[v], 6*8(%[p])\n\t"
			 "movq %[v], 7*8(%[p])\n\t"
			 "leaq 64(%[p]), %[p]\n\t"
			 "decq %[n]\n\t"
			 "jnz 1b"
			 : [p] "+r"(dst), [n] "+r"(lines)
			 : [v] "r"(v)
			 : "memory", "cc");
}

/* rep stosq: the REP_GOOD clear_page; the CPU batches the 8-byte stores. */
void pz_fill_x86_stosq(void *dst, int c, size_t len)
{
	size_t words = len / 8;

	__asm__ volatile("rep stosq" : "+D"(dst), "+c"(words) : "a"(PZ_BYTE_X8(c)) : "memory");
}

/*
 * rep stosb: the ERMS clear_page. Microcode picks the store width, and on
 * AMD Zen a long enough stosb stops allocating cache lines (above ~LLC size).
 */
void pz_fill_x86_stosb(void *dst, int c, size_t len)
{
	__asm__ volatile("rep stosb" : "+D"(dst), "+c"(len) : "a"(c) : "memory");
}

/* The 2012 clear_page_nocache: 8-byte movnti, a line per iteration. */
void pz_fill_x86_movnti(void *dst, int c, size_t len)
{
	long long *p = dst, *end = (long long *)((char *)dst + len);
	long long v = (long long)PZ_BYTE_X8(c);

	for (; p < end; p += 8) {
		_mm_stream_si64(p + 0, v);
		_mm_stream_si64(p + 1, v);
		_mm_stream_si64(p + 2, v);
		_mm_stream_si64(p + 3, v);
		_mm_stream_si64(p + 4, v);
		_mm_stream_si64(p + 5, v);
		_mm_stream_si64(p + 6, v);
		_mm_stream_si64(p + 7, v);
	}
	/* Streaming stores are weakly ordered: fence before anyone reads. */
	_mm_sfence();
}

void pz_fill_x86_sse2_nt(void *dst, int c, size_t len)
{
	__m128i *p = dst, *end = (__m128i *)((char *)dst + len);
	const __m128i v = _mm_set1_epi8((char)c);

	for (; p < end; p += 8) {
		_mm_stream_si128(p + 0, v);
		_mm_stream_si128(p + 1, v);
		_mm_stream_si128(p + 2, v);
		_mm_stream_si128(p + 3, v);
		_mm_stream_si128(p + 4, v);
		_mm_stream_si128(p + 5, v);
		_mm_stream_si128(p + 6, v);
		_mm_stream_si128(p + 7, v);
	}
	_mm_sfence();
}

__attribute__((target("avx"))) void pz_fill_x86_avx_nt(void *dst, int c, size_t len)
{
	__m256i *p = dst, *end = (__m256i *)((char *)dst + len);
	const __m256i v = splat256(c);

	for (; p < end; p += 8) {
		_mm256_stream_si256(p + 0, v);
		_mm256_stream_si256(p + 1, v);
		_mm256_stream_si256(p + 2, v);
		_mm256_stream_si256(p + 3, v);
		_mm256_stream_si256(p + 4, v);
		_mm256_stream_si256(p + 5, v);
		_mm256_stream_si256(p + 6, v);
		_mm256_stream_si256(p + 7, v);
	}
	/* gcc adds the vzeroupper that spares SSE code the AVX transition penalty. */
	_mm_sfence();
}

__attribute__((target("avx512f"))) void pz_fill_x86_avx512_nt(void *dst, int c, size_t len)
{
	__m512i *p = dst, *end = (__m512i *)((char *)dst + len);
	const __m512i v = splat512(c);

	for (; p < end; p += 4) {
		_mm512_stream_si512(p + 0, v);
		_mm512_stream_si512(p + 1, v);
		_mm512_stream_si512(p + 2, v);
		_mm512_stream_si512(p + 3, v);
	}
	_mm_sfence();
}

__attribute__((target("avx512f"))) void pz_fill_x86_avx512(void *dst, int c, size_t len)
{
	__m512i *p = dst, *end = (__m512i *)((char *)dst + len);
	const __m512i v = splat512(c);

	for (; p < end; p += 4) {
		_mm512_store_si512(p + 0, v);
		_mm512_store_si512(p + 1, v);
		_mm512_store_si512(p + 2, v);
		_mm512_store_si512(p + 3, v);
	}
}

/*
 * AMD clzero zeroes the whole 64-byte line holding its address (so the row
 * demands 64-byte alignment) and can write nothing but zeros; the caller
 * never passes another byte. Its stores are weakly ordered, like streaming
 * stores, hence the fence. Encoded as bytes: older assemblers lack it.
 */
void pz_fill_x86_clzero(void *dst, int c, size_t len)
{
	char *p = dst, *end = (char *)dst + len;

	(void)c;
	for (; p < end; p += 64)
		__asm__ volatile(".byte 0x0f, 0x01, 0xfc" : : "a"(p) : "memory");
	_mm_sfence();
}
