/*
 * policy_bench.h - the timed loops of the clearing policies.
 *
 * Batches: clear a run of pages in batches of B pages, as clear_pages()
 * under a cooperative preemption model does, reading the clock after every
 * batch, with an optional yield point (sched_yield) between batches.
 *
 * Folios: clear a folio in a strategy's order (policy.h), then time how
 * long touching the fault neighbourhood takes right after, and the same
 * touch once the neighbourhood has been pushed out of the caches (the cold
 * baseline).
 *
 * Both work on memory the caller mapped and populated; nothing here maps,
 * allocates, prints or can fail once timing has started.
 */
#ifndef PZ_POLICY_BENCH_H
#define PZ_POLICY_BENCH_H

#include "pz.h"
#include "cache.h"
#include "clock.h"
#include "counters.h"
#include "kernels.h"
#include "policy.h"

/* Cache line size the touch and the flush step by. */
#define PZ_LINE_SIZE 64u

/* Test hook: thread @t flushed [p, p + len) before timing the clear of it (cache cold). */
typedef void (*pz_flush_hook)(void *ctx, unsigned t, const void *p, size_t len);

struct pz_batch_params {
	const struct pz_kernel *kernel;  /* available */
	size_t nr_pages;                 /* pages of the region, >= 1 */
	size_t batch_pages;              /* 1 <= batch_pages <= nr_pages */
	unsigned loops;                  /* >= 1 */
	int yield;                       /* sched_yield() between batches */
	/* Measured conditions (issue 7): left zero, the plain loop runs unchanged. */
	int cold;                        /* flush each batch's range before it, untimed */
	struct pz_flusher flush;         /* cold: how (evict: the caller's buffer) */
	int counters;                    /* read pz_counters around each timed pass */
	pz_flush_hook hook;              /* NULL, or told of every cold flush (tests) */
	void *hook_ctx;
	unsigned *loops_done;            /* NULL, or where the passes completed go */
};

/* Batches per pass: nr_pages / batch_pages rounded up. */
size_t pz_batch_count(const struct pz_batch_params *p);

/*
 * One untimed pass through the kernel (prefault, as perf does), then
 * @loops timed passes over @base. pass_ticks[i] is pass i's duration,
 * yields included; pass_worst[i] its slowest batch; batch_ticks holds every
 * batch of every pass, pass by pass (loops * pz_batch_count() entries),
 * each without the yield after it. @log, when not NULL, records the steps
 * of the timed passes. 0, -EINVAL, or -EINTR when a stop request (stop.h)
 * ended the run between batches: *@p->loops_done passes are complete and
 * recorded, the interrupted one is not.
 */
int pz_bench_batches(const struct pz_batch_params *p, char *base, const struct pz_clock *clock,
		     uint64_t *pass_ticks, uint64_t *pass_worst, uint64_t *batch_ticks,
		     struct pz_step_log *log);

/* One thread's results under pz_bench_batch_team: pz_bench_batches' arrays and more. */
struct pz_batch_out {
	uint64_t *pass_ticks, *pass_worst, *batch_ticks;  /* loops, loops, loops * batches */
	uint64_t *start, *end;   /* loops: the clock readings around each pass */
	uint64_t *counters;      /* counters: loops * PZ_CTR_COUNT deltas, pass by pass */
	struct pz_step_log *log; /* NULL, or the steps of the timed passes */
};

/*
 * pz_bench_batches under measured conditions, on a team (threads.h) of
 * @threads threads, pinned to @cpus when given: thread t clears
 * @bases[t] (@p->nr_pages pages, its own region) into @out[t], every pass
 * started together behind the team's barrier. Cold: each batch's range is
 * flushed before its clock read, and a pass's ticks leave the flushes out.
 * Each thread reads its own clock (pz_clock_open_thread). Counters count
 * each pass (hot) or each batch's clear alone (cold), never the flushes.
 * 0 or -errno: -EINVAL for bad parameters or a CPU not allowed, counters'
 * errors with @failed_counter set (to 0 when a read failed: the read's
 * -errno, -EBUSY for a multiplexed group), -EAGAIN when a thread could not
 * start, -EINTR when a stop request ended the run (*@p->loops_done passes,
 * completed by every thread, are recorded).
 */
int pz_bench_batch_team(const struct pz_batch_params *p, unsigned threads, const int *cpus,
			char *const *bases, const struct pz_clock *clock,
			struct pz_batch_out *out, unsigned *failed_counter);

/* How the cold baseline gets the neighbourhood out of the caches. */
enum pz_cold {
	PZ_COLD_CLFLUSH = 0,    /* clflush each line (x86-64 only) */
	PZ_COLD_EVICT = 1,      /* read a buffer larger than the LLC (anywhere) */
	PZ_COLD_COUNT
};

const char *pz_cold_name(enum pz_cold c);
int pz_cold_lookup(const char *name);
/* 1 when this build can use @c. */
int pz_cold_available(enum pz_cold c);

struct pz_folio_params {
	enum pz_strategy strategy;
	size_t nr_pages;                 /* >= 1 */
	size_t fault;                    /* < nr_pages */
	size_t batch_pages;              /* >= 1 */
	const struct pz_kernel *kernel;  /* temporal steps */
	const struct pz_kernel *nt_kernel; /* non-temporal steps, when the strategy has any */
	unsigned loops;                  /* >= 1 */
	enum pz_cold cold;
	/* Measured conditions (issue 7): left zero, the plain loop runs unchanged. */
	int flush_folio;                 /* cache cold: flush the whole folio before each clear */
	struct pz_flusher flush;         /* flush_folio: how */
	struct pz_counters *ctr;         /* NULL, or counters opened by the caller, read around each clear */
	uint64_t *counters;              /* ctr: loops * PZ_CTR_COUNT deltas */
	pz_flush_hook hook;              /* NULL, or told of every folio flush (tests) */
	void *hook_ctx;
	unsigned *loops_done;            /* NULL, or where the loops completed go */
};

struct pz_folio_sample {
	uint64_t clear;         /* clearing the folio in the strategy's order */
	uint64_t touch;         /* touching the neighbourhood right after */
	uint64_t cold;          /* the same touch after the neighbourhood was evicted */
};

/*
 * @loops times: fill the folio with a non-zero byte and read @scrub
 * (@scrub_len bytes, larger than the LLC) so the folio starts as a freshly
 * allocated one would, out of cache; then time the clear, the touch of the
 * neighbourhood (pz_neighbourhood) and, after evicting it with @p->cold,
 * the same touch again. The touch reads each line with a load whose address
 * depends on the previous load, then writes it: a chain, so the time is
 * how long finding each line takes, not the memory bandwidth. Counters,
 * when given, are read around the clear, outside both touches. 0, -EINVAL,
 * a counter read's -errno (-EBUSY: multiplexed), or -EINTR when a stop
 * request (stop.h) came between loops (*@p->loops_done loops are valid).
 */
int pz_bench_folio(const struct pz_folio_params *p, char *folio, const char *scrub,
		   size_t scrub_len, const struct pz_clock *clock, struct pz_folio_sample *out);

/* Lines the folio touch walks: the neighbourhood's pages times 64 lines each. */
size_t pz_folio_touch_lines(const struct pz_folio_params *p);

struct pz_tick_summary {
	uint64_t max;
	uint64_t p99;           /* nearest rank: the ceil(0.99 n)-th smallest */
	uint64_t median;        /* the ceil(n/2)-th smallest */
	double mean;
};

/*
 * The slowest batch position, taking for each position the median over the
 * @loops passes of @ticks (loops x nb, pass by pass): in user space another
 * task can take the CPU for a whole tick in any batch, which says nothing
 * about the batch; a position that is slow pass after pass does.
 * @scratch holds @loops entries.
 */
uint64_t pz_batch_typical_worst(const uint64_t *ticks, unsigned loops, size_t nb,
				uint64_t *scratch);

/* Summarise @n >= 1 durations; sorts @ticks in place. */
void pz_ticks_summarize(uint64_t *ticks, size_t n, struct pz_tick_summary *s);

#endif /* PZ_POLICY_BENCH_H */
