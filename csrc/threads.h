/*
 * threads.h - memset/memcpy under measured conditions: cache-cold targets,
 * several CPUs at once, a NUMA node, hardware counters.
 *
 * bench.c keeps the plain hot, one-thread loop (its speed is compared with
 * perf and with a C loop); every run that asks for more comes here.
 *
 * Threads: N threads, each pinned to its own CPU when @cpus is given, clear
 * disjoint, consecutive parts of one region (SHARED: the way a parallel
 * gigantic-page clear would) or each its own region of @size bytes
 * (PRIVATE: a pre-zeroing daemon per CPU). Every loop starts behind a
 * pthread barrier; each thread reads the clock around its own part.
 *
 * Cold: before every kernel call the chunk it will clear (and, for memcpy,
 * its source) is flushed from the caches, outside the timing; the clock is
 * then read around each chunk and a loop's sample is the sum. Hot: the
 * clock is read around the whole pass, as bench.c does.
 */
#ifndef PZ_THREADS_H
#define PZ_THREADS_H

#include "pz.h"
#include "cache.h"
#include "clock.h"
#include "counters.h"
#include "kernels.h"
#include "region.h"
#include "team.h"

enum pz_threads_mode { PZ_THREADS_SHARED = 0, PZ_THREADS_PRIVATE = 1 };

/* What a test hook sees, in each thread's order. */
enum pz_run_event {
	PZ_EV_START = 0,   /* passed the first barrier; len = threads that had arrived */
	PZ_EV_FLUSH,       /* flushed [p, p + len) before a kernel call (cold) */
	PZ_EV_CLEAR,       /* the kernel call on [p, p + len) returned (cold) */
	PZ_EV_PREFAULT,    /* prefaulted its part [p, p + len), pinned, before the start
			      barrier (pz_bench_threads only) */
};

typedef void (*pz_run_hook)(void *ctx, unsigned thread, enum pz_run_event ev,
			    const void *p, size_t len);

struct pz_run_params {
	const struct pz_kernel *kernel;  /* available */
	size_t size;                     /* SHARED: the region; PRIVATE: each thread's */
	size_t chunk;                    /* bytes per kernel call, > 0 (a part may be shorter) */
	unsigned page_shift;
	enum pz_thp thp;
	unsigned loops;                  /* > 0 */
	int value;                       /* fill byte; PZ_VALUE_LOOP for the loop index */
	int value_step;                  /* thread t writes value + t * value_step (tests) */
	int cold;                        /* flush each chunk before its call */
	struct pz_flusher flush;         /* cold: how; evict buffers are mapped by the run */
	unsigned threads;                /* 1 .. PZ_MAX_THREADS */
	enum pz_threads_mode mode;
	const int *cpus;                 /* NULL, or threads CPU numbers to pin to */
	int node;                        /* -1, or the NUMA node to bind the buffers to */
	int counters;                    /* read pz_counters around each loop */
	pz_run_hook hook;                /* NULL, or called from every thread (tests) */
	void *hook_ctx;
};

/* Arrays of threads * loops, [t * loops + i]; counters: * PZ_CTR_COUNT more. */
struct pz_run_out {
	uint64_t *samples;       /* thread t's time for its part in loop i */
	uint64_t *start, *end;   /* the clock readings that began and ended it */
	uint64_t *counters;      /* NULL unless counters: deltas over loop i */
	unsigned failed_counter; /* counters refused: which one (0 also when a read failed) */
	unsigned loops_done;     /* loops every thread completed: the valid samples */
};

/*
 * Map (bound to @p->node if asked), run, unmap; each thread prefaults its
 * own part, pinned, before the start barrier (untimed). 0 or -errno:
 * mapping errors as pz_region_map, -ENOMEM when a thread's prefault could
 * not get its hugetlb pages (pz_region_prefault), -EINVAL from pinning to
 * a CPU not allowed or binding to a node that does not exist, counters'
 * errors (out->failed_counter says which; a failed read: the read's
 * -errno, -EBUSY for a multiplexed group), -EAGAIN when a thread could not
 * start, -EINTR when a stop request (stop.h) ended the run: then
 * out->loops_done loops were completed by every thread and their samples
 * are valid, the interrupted loop's are not.
 */
int pz_bench_threads(const struct pz_run_params *p, const struct pz_clock *clock,
		     struct pz_run_out *out);

/*
 * The timed part alone, on buffers the caller mapped (and prefaulted):
 * SHARED uses dst[0] (and src[0]) of @p->size bytes, PRIVATE dst[t]
 * (src[t]) for each thread. Errors as pz_bench_threads, but mapping's.
 */
int pz_run_threads(const struct pz_run_params *p, const struct pz_clock *clock,
		   char *const *dst, const char *const *src, struct pz_run_out *out);

#endif /* PZ_THREADS_H */
