/*
 * bench.c - the timed loops of the memset and memcpy benchmarks.
 *
 * As perf bench mem: buffers are mapped populated and prefaulted by the
 * function under test before any timing; each pass walks the region in
 * chunk-sized calls. Unlike perf, the clock is read around every pass so
 * each pass is a sample of its own (perf reads it once around all loops).
 * Nothing here allocates, prints or can fail once timing has started;
 * a stop request (stop.h), checked between chunks, ends the run early.
 */
#include <errno.h>
#include <string.h>

#include "bench.h"
#include "stop.h"

static int pass_value(const struct pz_mem_params *p, unsigned loop)
{
	/* perf: memset(dst, i, size), the int truncated to a byte by memset. */
	return p->value == PZ_VALUE_LOOP ? (int)(loop & 0xff) : p->value;
}

/*
 * When every chunk starts aligned and spans whole units (page-aligned
 * buffers, power-of-two chunks: the usual case), a pass calls the kernel's
 * body directly, as a plain C loop would. Otherwise each call goes through
 * the head/tail handling. Decided once per run, not per chunk: at 4KB
 * chunks even a few instructions per call show in the rate.
 */
static int whole_units(const struct pz_mem_params *p, const void *dst)
{
	const struct pz_kernel *k = p->kernel;
	size_t mask = (k->unit - 1) | (k->align - 1);

	return !((uintptr_t)dst & (k->align - 1)) && !(p->chunk & mask) && !(p->size & mask);
}

/*
 * Both passes return 0, or -EINTR when a stop request came between two
 * chunks: one relaxed load per kernel call, which even 4KB chunks do not
 * feel, and a 1GB call lasts tens of ms, so a stop takes effect quickly.
 */
static int fill_pass(const struct pz_mem_params *p, char *dst, int c, int direct)
{
	const pz_fill_fn body = p->kernel->fn.fill;
	size_t off;

	for (off = 0; off < p->size; off += p->chunk) {
		size_t len = PZ_MIN(p->chunk, p->size - off);

		if (pz_stopping())
			return -EINTR;
		if (direct)
			body(dst + off, c, len);
		else
			pz_kernel_fill(p->kernel, dst + off, c, len);
	}
	return 0;
}

static int copy_pass(const struct pz_mem_params *p, char *dst, const char *src, int direct)
{
	const pz_copy_fn body = p->kernel->fn.copy;
	size_t off;

	for (off = 0; off < p->size; off += p->chunk) {
		size_t len = PZ_MIN(p->chunk, p->size - off);

		if (pz_stopping())
			return -EINTR;
		if (direct)
			body(dst + off, src + off, len);
		else
			pz_kernel_copy(p->kernel, dst + off, src + off, len);
	}
	return 0;
}

int pz_bench_mem(const struct pz_mem_params *p, const struct pz_clock *clock,
		 uint64_t *samples)
{
	unsigned done;

	return pz_bench_mem_loops(p, clock, samples, &done);
}

int pz_bench_mem_loops(const struct pz_mem_params *p, const struct pz_clock *clock,
		       uint64_t *samples, unsigned *loops_done)
{
	const int copy = p->kernel->kind == PZ_KIND_COPY;
	struct pz_region dst_map, src_map = { 0 };
	char *dst, *src = NULL;
	unsigned i;
	int ret, direct;

	*loops_done = 0;
	/*
	 * Buffers start at a page boundary, as perf's since it maps them with
	 * mmap(); @offset moves them, e.g. 16 bytes in for perf 6.1's malloc()
	 * buffers: rep stosq is several percent slower off a line boundary.
	 */
	ret = pz_region_map(&dst_map, p->size + p->offset, p->page_shift, p->thp, 1, 0);
	if (ret)
		return ret;
	dst = (char *)dst_map.addr + p->offset;
	if (copy) {
		ret = pz_region_map(&src_map, p->size + p->offset, p->page_shift, p->thp, 1, 0);
		if (ret)
			goto out;
		src = (char *)src_map.addr + p->offset;
	}

	/*
	 * Prefault through the function under test, as perf does, so the first
	 * pass finds its pages mapped and warm: perf fills with -1, except
	 * that a zero-only kernel can only write zeros.
	 */
	direct = whole_units(p, dst);
	if (copy) {
		memset(src, 0, p->size);
		ret = copy_pass(p, dst, src, direct);
	} else {
		ret = fill_pass(p, dst, (p->kernel->flags & PZ_ZERO_ONLY) ? 0 : 0xff, direct);
	}

	for (i = 0; !ret && i < p->loops; i++) {
		uint64_t t0, t1;

		t0 = pz_clock_read(clock);
		if (copy)
			ret = copy_pass(p, dst, src, direct);
		else
			ret = fill_pass(p, dst, pass_value(p, i), direct);
		t1 = pz_clock_read(clock);
		if (ret)
			break;          /* the interrupted pass is no sample */
		samples[i] = t1 - t0;
		*loops_done = i + 1;
	}
out:
	pz_region_unmap(&src_map);
	pz_region_unmap(&dst_map);
	return ret;
}
