/*
 * test_mem_tail.c - csrc/mem_bench.c's head and tail handling, without Python:
 * every fill kernel whose body works in units of more than one byte, run hot and
 * cold over a region whose length is not a whole number of units, in chunks that
 * are. The last chunk is then short, and must go through pz_kernel_fill()'s tail
 * handling, never the body directly: the region must hold the value to its last
 * byte, which abuts a guard page (an overrun kills the test). Run plain and under
 * ASan/UBSan by tests/test_c_core.py (TEST=mem_tail tests/c/build.sh).
 * Prints "N passed, M failed".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "mem_bench.h"

#include "check.h"

static void fill_with_a_short_tail(const struct pz_kernel *k, int cold)
{
	const size_t page = 4096, size = 4 * page + 8 - 3; /* the last chunk: 5 bytes */
	const size_t mapped = 7 * page;
	struct pz_run_params p = { 0 };
	struct pz_run_out out = { 0 };
	struct pz_clock clock;
	uint64_t s[2], a[2], b[2];
	char *map, *buf;
	size_t i, wrong = 0;

	/* The region ends where the guard page after it begins. */
	map = mmap(NULL, mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(map != MAP_FAILED);
	CHECK(mprotect(map + page, 5 * page, PROT_READ | PROT_WRITE) == 0);
	buf = map + 6 * page - size;
	memset(buf, 0xff, size);
	CHECK(pz_clock_open(&clock, PZ_CLOCK_NS) == 0);
	p.kernel = k;
	p.size = size;
	p.chunk = page; /* whole units: only the length decides the tail */
	p.loops = 2;
	p.value = 0x5a;
	p.threads = 1;
	p.node = -1;
	p.cold = cold;
	p.flush.method = pz_flush_best();
	if (p.flush.method == PZ_FLUSH_EVICT) {
		static char evict_buf[1 << 20];

		p.flush.evict = evict_buf;
		p.flush.evict_len = sizeof(evict_buf);
	}
	out.samples = s;
	out.start = a;
	out.end = b;
	CHECK(pz_bench_mem_on(&p, &clock, &buf, NULL, &out) == 0);
	for (i = 0; i < size; i++)
		wrong += (unsigned char)buf[i] != 0x5a;
	if (wrong)
		printf("FAIL %s (%s): %zu of %zu bytes not filled\n", k->name,
		       cold ? "cold" : "hot", wrong, size);
	CHECK(wrong == 0);
	pz_clock_close(&clock);
	munmap(map, mapped);
}

int main(void)
{
	size_t i, tried = 0;

	for (i = 0; i < pz_kernel_count(); i++) {
		const struct pz_kernel *k = pz_kernel_at(i);
		char reason[256];

		if (k->kind != PZ_KIND_FILL || k->unit < 2 || (k->flags & PZ_ZERO_ONLY) ||
		    !pz_kernel_available(k, reason, sizeof(reason)))
			continue;
		fill_with_a_short_tail(k, 0);
		fill_with_a_short_tail(k, 1);
		tried++;
	}
	printf("%zu kernels of units above one byte\n", tried);
	CHECK(tried > 0 || pz_kernel_count() == 0);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
