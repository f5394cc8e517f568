/*
 * policy_bench.h - the timed loops of the clearing policies.
 *
 * Batches (batch_bench.c): clear a run of pages in batches of B pages, as
 * clear_pages() under a cooperative preemption model does, reading the
 * clock after every batch, with an optional yield point (sched_yield)
 * between batches.
 *
 * Folios (folio_bench.c): clear a folio in a strategy's order (policy.h),
 * then time how long touching the fault neighbourhood takes right after,
 * and the same touch once the neighbourhood has been pushed out of the
 * caches (the cold baseline).
 *
 * Both run on a team (team.h), the plain run being a team of one thread
 * with the measured conditions left zero (hot, no counters), so a plain run
 * and a conditioned one are the same code (policy_bench.c runs the team).
 * Both work on memory the caller mapped; nothing here maps, allocates
 * (beyond the team's bookkeeping), prints or can fail once timing started,
 * but for a counter read.
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

/* The measured conditions both policies share; left zero: hot, no counters. */
struct pz_policy_cond {
	int cold;                /* flush what is cleared before its clock read, untimed */
	struct pz_flusher flush; /* cold: how (evict: the caller's buffer) */
	int counters;            /* read pz_counters around each clear, never the flushes */
	pz_flush_hook hook;      /* NULL, or told of every cold flush (tests) */
	void *hook_ctx;
	unsigned *loops_done; /* NULL, or where the loops every thread completed go */
	/*
	 * NULL, or the counter that could not be opened (perf_event_open's
	 * -errno comes back), 0 (the group leader) when a read failed.
	 */
	unsigned *failed_counter;
};

/*
 * One thread's clock and counters. Each thread opens its own: a cycles
 * clock and the counters count the thread that opened them.
 */
struct pz_meter {
	struct pz_clock clock;
	struct pz_counters ctr;
	int counters; /* ctr is open */
	int counting; /* snap begins an open count */
	struct pz_counter_snap snap;
};

/* With counters: begin a count (one reading). 0 or the read's -errno; 0 without counters. */
int pz_meter_start(struct pz_meter *m);
/* With counters: end the count begun, adding it to @acc. 0, -errno or -EBUSY (multiplexed). */
int pz_meter_stop(struct pz_meter *m, uint64_t acc[PZ_CTR_COUNT]);

/* A policy run on a team: what the two benchmarks give policy_bench.c. */
struct pz_policy_team {
	unsigned threads;             /* 1 .. PZ_MAX_THREADS */
	const int *cpus;              /* NULL, or threads CPUs to pin them to */
	unsigned loops;               /* >= 1 */
	const struct pz_clock *clock; /* the kind each thread opens for itself */
	const struct pz_policy_cond *cond;
	/* Thread @t, pinned, its meter open, before the start barrier: untimed work. */
	int (*prepare)(void *ctx, unsigned t, struct pz_meter *m);
	/*
	 * Timed loop @i of thread @t: 0 (recorded), -EINTR (a stop request cut
	 * it short: not recorded) or a counter read's -errno.
	 */
	int (*loop)(void *ctx, unsigned t, unsigned i, struct pz_meter *m);
	void *ctx;
};

/*
 * Run @r: every thread prepares, then the loops start together, loop after
 * loop, until all are done, a stop request (stop.h) comes or a thread's
 * loop failed. 0; -EINTR when a stop request ended the run with
 * *cond->loops_done loops completed by every thread (their results are
 * valid, the rest are not); -EINVAL, -ENOMEM, -EAGAIN (a thread could not
 * start), a prepare's, the clock's or the counters' -errno.
 */
int pz_policy_team_run(const struct pz_policy_team *r);

/* 0, or -EINVAL when @c asks for eviction without a buffer to read. */
int pz_policy_cond_check(const struct pz_policy_cond *c);

/* Batches ------------------------------------------------------------------ */

struct pz_batch_params {
	const struct pz_kernel *kernel; /* available */
	size_t nr_pages;                /* pages of each thread's region, >= 1 */
	size_t batch_pages;             /* 1 <= batch_pages <= nr_pages */
	unsigned loops;                 /* >= 1 */
	int yield;                      /* sched_yield() between batches */
	unsigned threads;               /* 1 .. PZ_MAX_THREADS, each on its own region */
	const int *cpus;                /* NULL, or threads CPU numbers to pin them to */
	struct pz_policy_cond cond;     /* cold: each batch's range flushed before it */
};

/* One thread's results. */
struct pz_batch_out {
	uint64_t *pass_ticks, *pass_worst, *batch_ticks; /* loops, loops, loops * batches */
	uint64_t *start, *end;   /* NULL, or loops: the clock readings around each pass */
	uint64_t *counters;      /* cond.counters: loops * PZ_CTR_COUNT deltas, pass by pass */
	struct pz_step_log *log; /* NULL, or the steps of the timed passes */
};

/* Batches per pass: nr_pages / batch_pages rounded up; 0 unless 0 < batch_pages <= nr_pages. */
size_t pz_batch_count(const struct pz_batch_params *p);

/*
 * On a team of @p->threads threads (pinned to @p->cpus when given),
 * thread t prefaults @bases[t] (@p->nr_pages pages, its own region), makes
 * one untimed pass through the kernel (as perf does), then @p->loops timed
 * passes into @out[t], every pass started together behind the team's
 * barrier. pass_ticks[i] is pass i's duration, yields included, flushes
 * left out; pass_worst[i] its slowest batch; batch_ticks every batch of
 * every pass, pass by pass (loops * pz_batch_count() entries), each
 * without the yield after it. Cold: each batch's range is flushed before
 * its clock read. Counters count each pass (hot) or each batch's clear
 * alone (cold). A stop request is seen between batches. Errors as
 * pz_policy_team_run (-EINVAL for bad parameters or a CPU not allowed).
 */
int pz_bench_batches(const struct pz_batch_params *p, char *const *bases,
		     const struct pz_clock *clock, struct pz_batch_out *out);

struct pz_tick_summary {
	uint64_t max;
	uint64_t p99;    /* nearest rank: the ceil(0.99 n)-th smallest */
	uint64_t median; /* the ceil(n/2)-th smallest */
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

/* Folios ------------------------------------------------------------------- */

/* How the cold baseline gets the neighbourhood out of the caches. */
enum pz_cold {
	PZ_COLD_CLFLUSH = 0, /* clflush each line (x86-64 only) */
	PZ_COLD_EVICT = 1,   /* read a buffer larger than the LLC (anywhere) */
	PZ_COLD_COUNT
};

/* The baselines' names, by id (names.h: pz_name, pz_lookup). */
extern const struct pz_names pz_cold_names;
/* 1 when this build can use @c. */
int pz_cold_available(enum pz_cold c);

struct pz_folio_params {
	enum pz_strategy strategy;
	size_t nr_pages;                   /* >= 1 */
	size_t fault;                      /* < nr_pages */
	size_t batch_pages;                /* >= 1 */
	const struct pz_kernel *kernel;    /* temporal steps */
	const struct pz_kernel *nt_kernel; /* non-temporal steps, when the strategy has any */
	unsigned loops;                    /* >= 1 */
	enum pz_cold baseline;             /* how the cold touch's neighbourhood is evicted */
	struct pz_policy_cond cond;        /* cold: the whole folio flushed before each clear */
};

struct pz_folio_sample {
	uint64_t clear; /* clearing the folio in the strategy's order */
	uint64_t touch; /* touching the neighbourhood right after */
	uint64_t cold;  /* the same touch after the neighbourhood was evicted */
};

/*
 * On a team of one thread, @loops times: fill the folio with a non-zero
 * byte and read @scrub (@scrub_len bytes, larger than the LLC) so the folio
 * starts as a freshly allocated one would, out of cache; then time the
 * clear, the touch of the neighbourhood (pz_neighbourhood) and, after
 * evicting it with @p->baseline, the same touch again. The touch reads each
 * line with a load whose address depends on the previous load, then writes
 * it: a chain, so the time is how long finding each line takes, not the
 * memory bandwidth. Counters (@counters: loops * PZ_CTR_COUNT deltas) are
 * read around the clear, outside both touches. A stop request is seen
 * between loops. Errors as pz_policy_team_run.
 */
int pz_bench_folio(const struct pz_folio_params *p, char *folio, const char *scrub,
		   size_t scrub_len, const struct pz_clock *clock, struct pz_folio_sample *out,
		   uint64_t *counters);

/* Lines the folio touch walks: the neighbourhood's pages times 64 lines each. */
size_t pz_folio_touch_lines(const struct pz_folio_params *p);

#endif /* PZ_POLICY_BENCH_H */
