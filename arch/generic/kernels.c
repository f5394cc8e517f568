/*
 * Portable kernels: glibc's memset/memcpy (what user space gets by default)
 * and a plain C loop, which is what a compiler makes of clearing without
 * any help. Built on every architecture.
 */
#include <stdint.h>
#include <string.h>

#include "kernels.h"

/*
 * Buffers come from anywhere (bytearray, numpy): access them through a type
 * that may alias. Copy sources are not aligned (only dst is), hence aligned(1).
 */
typedef uint64_t __attribute__((may_alias)) pz_word;
typedef uint64_t __attribute__((may_alias, aligned(1))) pz_unaligned_word;

#define PZ_BYTE_X8(c) (0x0101010101010101ull * (unsigned char)(c))

/* No barrier here: the replays pay the fault path's once per folio (kernels.h, pz_publish_clear()). */
void pz_fill_libc(void *dst, int c, size_t len)
{
	memset(dst, c, len);
}

void pz_copy_libc(void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
}

/*
 * The loops below stay loops only because of the flags this file is built
 * with (setup.py's KEEP_LOOPS: gcc's -fno-tree-loop-distribute-patterns,
 * clang's -fno-builtin-memset/-memcpy/-memmove); otherwise the compiler may
 * turn them into calls to memset/memcpy and "generic" would measure glibc.
 * tests/c/check_loops.sh looks for such a call in their disassembly.
 */
void pz_fill_generic(void *dst, int c, size_t len)
{
	pz_word *p = dst;
	const uint64_t v = PZ_BYTE_X8(c);
	size_t i, n = len / sizeof(*p);

	for (i = 0; i < n; i++)
		p[i] = v;
}

void pz_copy_generic(void *dst, const void *src, size_t len)
{
	pz_word *d = dst;
	const pz_unaligned_word *s = src;
	size_t i, n = len / sizeof(*d);

	for (i = 0; i < n; i++)
		d[i] = s[i];
}
