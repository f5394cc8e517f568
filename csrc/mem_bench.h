/*
 * mem_bench.h - the memset/memcpy benchmark, under any conditions, on a team.
 *
 * One entry, pz_bench_mem(), runs perf bench mem's memset and memcpy: the
 * plain run (hot, one unpinned thread, no node, no counters: perf's
 * conditions, whose rate benchmarks/vs_perf.py and vs_c_loop.py compare) is
 * the same call with default conditions, not a loop of its own.
 *
 * Threads: N threads (one by default), each pinned to its own CPU when
 * @cpus is given, clear disjoint, consecutive parts of one region (SHARED:
 * the way a parallel gigantic-page clear would) or each its own region of
 * @size bytes (PRIVATE: a pre-zeroing daemon per CPU). SHARED parts start
 * on the mapping's pages (hugetlb's 2MB or 1GB, THP's 2MB with PZ_THP_ON,
 * else 4KB): every part but the last is size / threads rounded down to a
 * whole number of pages, the last takes the rest, and a size under one page
 * per thread is refused. Every loop starts
 * behind a barrier (team.h); each thread reads its own clock around its
 * own part.
 *
 * Hot (the default): the clock is read around the whole pass, which calls
 * the kernel's body directly for whole-unit chunks and checks nothing per
 * chunk but the stop flag. Cold: before every kernel call the chunk it will
 * clear (and, for memcpy, its source) is flushed from the caches, outside
 * the timing; the clock is then read around each chunk and a loop's sample
 * is the sum.
 */
#ifndef PZ_MEM_BENCH_H
#define PZ_MEM_BENCH_H

#include "pz.h"
#include "cache.h"
#include "clock.h"
#include "counters.h"
#include "kernels.h"
#include "region.h"
#include "team.h"

#define PZ_VALUE_LOOP (-1) /* fill with the loop index, as perf does */

enum pz_threads_mode { PZ_THREADS_SHARED = 0, PZ_THREADS_PRIVATE = 1 };

/* What a test hook sees, in each thread's order. */
enum pz_run_event {
	PZ_EV_START = 0, /* passed the first barrier; len = threads that had arrived */
	PZ_EV_FLUSH,     /* flushed [p, p + len) before a kernel call (cold) */
	PZ_EV_CLEAR,     /* the kernel call on [p, p + len) returned (cold) */
	PZ_EV_PREFAULT,  /* prefaulted its part [p, p + len), pinned, before the start
			      barrier (pz_bench_mem only) */
};

/*
 * The step a failed run was taking, so that an error names it: -EINVAL
 * from sched_setaffinity (a CPU not allowed) and from mbind (a node that
 * does not exist) are the same number, and a counter read that failed is
 * not a counter that could not be opened.
 */
enum pz_run_stage {
	PZ_STAGE_NONE = 0,     /* no failure (or -EINTR: stopped, not failed) */
	PZ_STAGE_ARGS,         /* the parameters themselves */
	PZ_STAGE_MAP,          /* mapping a buffer (pz_region_map) */
	PZ_STAGE_BIND,         /* binding it to the node (mbind) */
	PZ_STAGE_START,        /* starting the threads (pthread_create, memory) */
	PZ_STAGE_PIN,          /* pinning a thread to its CPU (sched_setaffinity) */
	PZ_STAGE_CLOCK,        /* opening a thread's cycles clock (perf_event_open) */
	PZ_STAGE_COUNTERS,     /* opening the counters: failed_counter says which */
	PZ_STAGE_PREFAULT,     /* a thread's prefault: hugetlb pages short */
	PZ_STAGE_COUNTER_READ, /* a counter read in a loop: -EIO failed, -EBUSY multiplexed */
};

typedef void (*pz_run_hook)(void *ctx, unsigned thread, enum pz_run_event ev, const void *p,
			    size_t len);

struct pz_run_params {
	const struct pz_kernel *kernel; /* fill or copy; available */
	size_t size;                    /* SHARED: the region; PRIVATE: each thread's */
	size_t chunk;                   /* bytes per kernel call, > 0 (a part may be shorter) */
	unsigned page_shift;
	enum pz_thp thp;
	unsigned loops;          /* > 0 */
	int value;               /* fill byte; PZ_VALUE_LOOP for the loop index */
	int value_step;          /* thread t writes value + t * value_step (tests) */
	size_t offset;           /* buffers start this far past a page boundary, < 4096 */
	int cold;                /* flush each chunk before its call */
	struct pz_flusher flush; /* cold: how; evict buffers are mapped by the run */
	unsigned threads;        /* 1 .. PZ_MAX_THREADS */
	enum pz_threads_mode mode;
	const int *cpus; /* NULL, or threads CPU numbers to pin to */
	int node;        /* -1, or the NUMA node to bind the buffers to */
	int counters;    /* read pz_counters around each loop */
	/*
	 * 0, or the most untimed loops to settle the buffer before timing
	 * (hot, one thread; 2 at least): see PZ_SETTLE_* below.
	 */
	unsigned settle;
	pz_run_hook hook; /* NULL, or called from every thread (tests) */
	void *hook_ctx;
};

/*
 * Hot means settled: a freshly mapped buffer does not clear at its level on its
 * first passes, even in cache (an Intel Xeon VM's 64MB: 8.9, 9.7, 11.7, 15.4,
 * 18.8, 20.9, 21.8, 23.4, then 22-24 GB/s; an AMD EPYC VM's 8MB: 11, 12, 13,
 * 13, 18, 26, 33, 36, then 35-45), and a warm-up on another mapping warms
 * nothing. With @settle, the pass is repeated, untimed, in the same mapping
 * until two passes in a row take times within PZ_SETTLE_TOLERANCE_PCT of each
 * other, after PZ_SETTLE_MIN_LOOPS at least (fewer when @settle is smaller):
 * the climb can start flat (the 11, 12, 13, 13 above), so two early passes
 * that agree do not say it is over. 5%: a settled buffer's passes agree within
 * 1-4% on a quiet machine (23.4, 22-24 above), while a climb's steps are 8-25%;
 * the bound is @settle, passes run whether they agree or not.
 */
#define PZ_SETTLE_TOLERANCE_PCT 5u
#define PZ_SETTLE_MIN_LOOPS 8u

/* Arrays of threads * loops, [t * loops + i]; counters: * PZ_CTR_COUNT more. */
struct pz_run_out {
	uint64_t *samples;     /* thread t's time for its part in loop i */
	uint64_t *start, *end; /* the clock readings that began and ended it */
	uint64_t *counters;    /* NULL unless counters: deltas over loop i */
	unsigned loops_done;   /* loops every thread completed: the valid samples */
	/*
	 * pz_bench_mem with PZ_THP_ON: the buffers' bytes (each thread's,
	 * memcpy's sources) and how many of them smaps shows on huge pages,
	 * read once the run ends, before munmap (the prefault decided the
	 * pages). Both 0 otherwise, or when smaps could not be read.
	 */
	uint64_t buffer_bytes, huge_bytes;
	/* With @settle: the untimed loops run, and 1 when the last two agreed (else the bound). */
	unsigned settle_loops;
	int settled;
	/* On failure: */
	enum pz_run_stage stage; /* the step that failed */
	unsigned thread;         /* the thread that failed (stages PIN .. COUNTER_READ) */
	unsigned failed_counter; /* PZ_STAGE_COUNTERS: the counter perf_event_open refused */
};

/*
 * Where SHARED parts start (the mapping's page: hugetlb's, THP's 2MB with
 * PZ_THP_ON, else the base page), and thread t's bytes of @p->size: every
 * part but the last whole pages, the last the rest (@p->size for PRIVATE or
 * one thread). Only @p->size, threads, mode, page_shift and thp are read.
 */
size_t pz_part_align(const struct pz_run_params *p);
size_t pz_part_len(const struct pz_run_params *p, unsigned t);

/*
 * 0, or -EINVAL for parameters the run refuses (the fields' comments above
 * say what each takes; a cycles clock times one thread only; each thread's
 * fill byte is 0..255, or 0 for a zeros-only kernel). The runs check them
 * first too; a caller checks before mapping or opening anything.
 */
int pz_bench_mem_check(const struct pz_run_params *p, enum pz_clock_id clock);

/*
 * The benchmark: map (bound to @p->node if asked), run, unmap; each thread
 * prefaults its own part, pinned, before the start barrier (untimed).
 * 0, or -errno with out->stage saying which step failed: mapping errors as
 * pz_region_map, -EINVAL from pinning to a CPU not allowed or binding to a
 * node that does not exist, -ENOMEM from a prefault that could not get its
 * hugetlb pages (pz_region_prefault), opening errors of a clock or the
 * counters, a counter read's -errno or -EBUSY for a multiplexed group,
 * -EAGAIN when a thread could not start. -EINTR when a stop request
 * (stop.h) ended the run: then out->loops_done loops were completed by
 * every thread and their samples are valid, the interrupted loop's are not.
 */
int pz_bench_mem(const struct pz_run_params *p, const struct pz_clock *clock,
		 struct pz_run_out *out);

/*
 * The timed part alone, on buffers the caller mapped (and prefaulted),
 * @p->offset and @p->node ignored: SHARED uses dst[0] (and src[0]) of
 * @p->size bytes, PRIVATE dst[t] (src[t]) for each thread. Errors as
 * pz_bench_mem, but mapping's.
 */
int pz_bench_mem_on(const struct pz_run_params *p, const struct pz_clock *clock, char *const *dst,
		    const char *const *src, struct pz_run_out *out);

#endif /* PZ_MEM_BENCH_H */
