/*
 * bench.h - the timed loops of `perf bench mem memset|memcpy`.
 *
 * One call maps the buffers, prefaults them (untimed), runs @loops passes
 * over the region in @chunk-sized kernel calls, reading the clock around
 * every pass, and unmaps. samples[i] is pass i's duration in clock units.
 */
#ifndef PZ_BENCH_H
#define PZ_BENCH_H

#include "pz.h"
#include "clock.h"
#include "kernels.h"
#include "region.h"

#define PZ_VALUE_LOOP (-1)      /* fill with the loop index, as perf does */

struct pz_mem_params {
	const struct pz_kernel *kernel;  /* fill or copy; available */
	size_t size;                     /* bytes per pass, > 0 */
	size_t chunk;                    /* bytes per kernel call, 0 < chunk <= size */
	unsigned page_shift;
	enum pz_thp thp;
	unsigned loops;                  /* > 0 */
	int value;                       /* fill byte 0..255 or PZ_VALUE_LOOP */
	size_t offset;                   /* buffers start this far past a page boundary */
};

/* 0 or -errno from mapping (see pz_region_map); -EINTR as pz_bench_mem_loops. */
int pz_bench_mem(const struct pz_mem_params *p, const struct pz_clock *clock,
		 uint64_t *samples);

/*
 * pz_bench_mem, also saying how far it got: -EINTR when a stop request
 * (stop.h) came between two chunks, with *@loops_done passes complete and
 * in samples[0 .. *loops_done - 1] (the interrupted pass is dropped).
 */
int pz_bench_mem_loops(const struct pz_mem_params *p, const struct pz_clock *clock,
		       uint64_t *samples, unsigned *loops_done);

#endif /* PZ_BENCH_H */
