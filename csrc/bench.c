/*
 * bench.c - the timed loops of the memset and memcpy benchmarks.
 *
 * As perf bench mem: buffers are mapped populated and prefaulted by the
 * function under test before any timing; each pass walks the region in
 * chunk-sized calls. Unlike perf, the clock is read around every pass so
 * each pass is a sample of its own (perf reads it once around all loops).
 * Nothing here allocates, prints or can fail once timing has started.
 */
#include <string.h>

#include "bench.h"

static int pass_value(const struct pz_mem_params *p, unsigned loop)
{
	/* perf: memset(dst, i, size), the int truncated to a byte by memset. */
	return p->value == PZ_VALUE_LOOP ? (int)(loop & 0xff) : p->value;
}

static void fill_pass(const struct pz_mem_params *p, char *dst, int c)
{
	size_t off;

	for (off = 0; off < p->size; off += p->chunk)
		pz_kernel_fill(p->kernel, dst + off, c, PZ_MIN(p->chunk, p->size - off));
}

static void copy_pass(const struct pz_mem_params *p, char *dst, const char *src)
{
	size_t off;

	for (off = 0; off < p->size; off += p->chunk)
		pz_kernel_copy(p->kernel, dst + off, src + off, PZ_MIN(p->chunk, p->size - off));
}

int pz_bench_mem(const struct pz_mem_params *p, const struct pz_clock *clock,
		 uint64_t *samples)
{
	const int copy = p->kernel->kind == PZ_KIND_COPY;
	struct pz_region dst, src = { 0 };
	unsigned i;
	int ret;

	ret = pz_region_map(&dst, p->size, p->page_shift, p->thp, 1, 0);
	if (ret)
		return ret;
	if (copy) {
		ret = pz_region_map(&src, p->size, p->page_shift, p->thp, 1, 0);
		if (ret)
			goto out;
	}

	/*
	 * Prefault through the function under test, as perf does, so the first
	 * pass finds its pages mapped and warm: perf fills with -1, except
	 * that a zero-only kernel can only write zeros.
	 */
	if (copy) {
		memset(src.addr, 0, p->size);
		copy_pass(p, dst.addr, src.addr);
	} else {
		fill_pass(p, dst.addr, (p->kernel->flags & PZ_ZERO_ONLY) ? 0 : 0xff);
	}

	for (i = 0; i < p->loops; i++) {
		uint64_t t0, t1;

		t0 = pz_clock_read(clock);
		if (copy)
			copy_pass(p, dst.addr, src.addr);
		else
			fill_pass(p, dst.addr, pass_value(p, i));
		t1 = pz_clock_read(clock);
		samples[i] = t1 - t0;
	}
out:
	pz_region_unmap(&src);
	pz_region_unmap(&dst);
	return ret;
}
