/*
 * policy_bench.c - timing the clearing policies: batches and folio orders.
 *
 * The walks come from policy.c; this file only wraps clocks around them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "policy_bench.h"
#include "region.h"
#include "stop.h"
#include "threads.h"

/*
 * Read by the touch so the compiler cannot prove it is zero: ANDing each
 * loaded value with it makes the next address depend on the load, in the
 * hardware, without ever changing the address.
 */
static volatile uint64_t pz_zero;
/* Results of reads that exist only for their effect on the caches. */
static volatile uint64_t pz_sink;

/* Batches ---------------------------------------------------------------- */

size_t pz_batch_count(const struct pz_batch_params *p)
{
	return p->nr_pages / p->batch_pages + (p->nr_pages % p->batch_pages != 0);
}

struct batch_run {
	struct pz_clearer clr;
	const struct pz_clock *clock;
	uint64_t *ticks;
	size_t n, cap;
	uint64_t prev, worst;
	int yield;
	int stopped;            /* a stop request or a counter error ended this pass */
	/* Cold runs only. */
	const struct pz_batch_params *p;
	unsigned thread;
	uint64_t flushed;       /* ticks spent flushing in this pass, left out of it */
	struct pz_counters *ctr;         /* NULL, or read around each batch's clear */
	struct pz_counter_snap snap;     /* the reading that began the open count */
	int counting;                    /* snap is set and not yet closed */
	uint64_t *acc;                   /* the pass's counts */
	int err;                         /* a counter read's error */
};

/* Between batches: a stop request abandons the rest of the pass (its steps do nothing). */
static int stopped(struct batch_run *b)
{
	if (!b->stopped && pz_stopping())
		b->stopped = 1;
	return b->stopped;
}

/*
 * After each batch: one clock read that ends this batch and, without a
 * yield, starts the next, so a batch costs one read of overhead, not two.
 * With a yield the clock is read again after it: the yield is the
 * scheduler's time, not the batch's.
 */
static void timed_step(void *ctx, const struct pz_step *s)
{
	struct batch_run *b = ctx;
	uint64_t now, d;

	if (stopped(b))
		return;
	pz_clear_step(&b->clr, s);
	now = pz_clock_read(b->clock);
	d = now - b->prev;
	if (b->n < b->cap)
		b->ticks[b->n] = d;
	b->n++;
	if (d > b->worst)
		b->worst = d;
	if (b->yield) {
		sched_yield();
		now = pz_clock_read(b->clock);
	}
	b->prev = now;
}

/* Cold counters: close the count the previous batch opened (adding it to the pass's). */
static void close_count(struct batch_run *b)
{
	struct pz_counter_snap z;

	if (!b->counting)
		return;
	b->counting = 0;
	b->err = pz_counters_read(b->ctr, &z);
	if (!b->err)
		b->err = pz_counters_delta(&b->snap, &z, b->acc);
	if (b->err)
		b->stopped = 1;
}

/*
 * Cold: flush the batch's range, then restart the batch's clock, so neither
 * the flush nor the hook is part of the batch or (via @flushed) the pass.
 * The counters are read inside that untimed window too, so they count the
 * batch's clear (and its clock read), not the flush: each batch opens a
 * count there and the next batch's window (or the pass's end) closes it.
 * A separate step function keeps the hot path's timed_step as it was.
 */
static void cold_step(void *ctx, const struct pz_step *s)
{
	struct batch_run *b = ctx;
	char *p = b->clr.base + s->first * PZ_PAGE_SIZE;
	size_t len = s->count * PZ_PAGE_SIZE;
	uint64_t t0, t1;

	if (stopped(b))
		return;
	t0 = pz_clock_read(b->clock);
	if (b->ctr)
		close_count(b);
	pz_flush(&b->p->flush, p, len);
	if (b->p->hook)
		b->p->hook(b->p->hook_ctx, b->thread, p, len);
	if (b->ctr && !b->stopped) {
		b->err = pz_counters_read(b->ctr, &b->snap);
		b->counting = !b->err;
		b->stopped = b->err != 0;
	}
	t1 = pz_clock_read(b->clock);
	b->flushed += t1 - t0;
	b->prev = t1;
	timed_step(b, s);
}

/*
 * One timed pass. 0, -EINTR (a stop request cut it short) or a counter
 * read's error; only a pass that returned 0 is recorded.
 */
static int batch_pass(const struct pz_batch_params *p, struct batch_run *b, unsigned i,
		      const struct pz_batch_out *out, size_t nb)
{
	uint64_t acc[PZ_CTR_COUNT] = { 0 }, t0, t1;
	struct pz_counter_snap a;
	unsigned j;
	int ret = 0;

	b->ticks = out->batch_ticks + (size_t)i * nb;
	b->n = 0;
	b->cap = nb;
	b->worst = 0;
	b->flushed = 0;
	b->stopped = 0;
	b->counting = 0;
	b->acc = acc;
	b->err = 0;
	/* Hot: around the whole pass; cold: around each clear (cold_step). */
	if (b->ctr && !p->cold && (ret = pz_counters_read(b->ctr, &a)))
		return ret;
	t0 = pz_clock_read(b->clock);
	b->prev = t0;
	pz_strategy_order(PZ_STRATEGY_SEQUENTIAL, p->nr_pages, 0, p->batch_pages,
			  p->cold ? cold_step : timed_step, b);
	t1 = pz_clock_read(b->clock);
	if (b->ctr && p->cold)
		close_count(b);
	if (b->err)
		return b->err;
	if (b->stopped)
		return -EINTR;
	if (b->ctr && !p->cold) {
		struct pz_counter_snap z;

		ret = pz_counters_read(b->ctr, &z);
		if (!ret)
			ret = pz_counters_delta(&a, &z, acc);
		if (ret)
			return ret;
	}
	for (j = 0; b->ctr && j < PZ_CTR_COUNT; j++)
		out->counters[(size_t)i * PZ_CTR_COUNT + j] = acc[j];
	out->pass_ticks[i] = t1 - t0 - b->flushed;
	out->pass_worst[i] = b->worst;
	if (out->start) {
		out->start[i] = t0;
		out->end[i] = t1;
	}
	return 0;
}

static int check_batches(const struct pz_batch_params *p)
{
	return !p->nr_pages || !p->batch_pages || p->batch_pages > p->nr_pages || !p->loops ? -EINVAL
											      : 0;
}

/*
 * The prefault and the timed passes of one thread. @team, when not NULL,
 * lines every pass up with the other threads'; @ctr, when not NULL, is
 * read around each pass (hot) or each batch's clear (cold), outside the
 * clock reads. 0, -EINTR when a stop request ended the passes (*@done
 * passes were completed) or a counter read's error.
 */
static int batch_passes(const struct pz_batch_params *p, unsigned thread, char *base,
			const struct pz_clock *clock, const struct pz_batch_out *out,
			struct pz_counters *ctr, struct pz_team_state *team, unsigned *done)
{
	struct pz_clearer warm = { .base = base, .kernel = p->kernel };
	struct batch_run b = { .clr = warm, .clock = clock, .yield = p->yield, .p = p,
			       .thread = thread, .ctr = ctr };
	size_t nb;
	unsigned i;
	int ret, give_up = 0, err = 0;

	*done = 0;
	if (check_batches(p))
		return -EINVAL;
	nb = pz_batch_count(p);
	b.clr.log = out->log;

	/*
	 * Prefault (an error, not SIGBUS, where a hugetlb region bound to a
	 * node cannot get its pages there), then warm up through the kernel
	 * under test, as perf does.
	 */
	ret = pz_region_prefault(base, p->nr_pages * PZ_PAGE_SIZE, PZ_PAGE_SHIFT_4KB);
	if (ret)
		return ret;
	ret = pz_strategy_order(PZ_STRATEGY_SEQUENTIAL, p->nr_pages, 0, p->batch_pages,
				pz_clear_step, &warm);
	if (ret)
		return ret;
	/* Every pass starts together, or the threads drift apart and overlap less. */
	for (i = 0; i < p->loops; i++) {
		if (team ? !pz_team_next(team, i, give_up) : (give_up || pz_stopping()))
			break;
		ret = batch_pass(p, &b, i, out, nb);
		if (ret) {
			if (ret != -EINTR)
				err = ret;
			give_up = 1;
			continue;
		}
		*done = i + 1;
	}
	if (err)
		return err;
	return *done < p->loops ? -EINTR : 0;
}

int pz_bench_batches(const struct pz_batch_params *p, char *base, const struct pz_clock *clock,
		     uint64_t *pass_ticks, uint64_t *pass_worst, uint64_t *batch_ticks,
		     struct pz_step_log *log)
{
	const struct pz_batch_out out = { .pass_ticks = pass_ticks, .pass_worst = pass_worst,
					  .batch_ticks = batch_ticks, .log = log };
	unsigned done;
	int ret = batch_passes(p, 0, base, clock, &out, NULL, NULL, &done);

	if (p->loops_done)
		*p->loops_done = done;
	return ret;
}

struct batch_team {
	const struct pz_batch_params *p;
	char *const *bases;
	const struct pz_clock *clock;
	struct pz_batch_out *out;
	struct pz_clock *clocks;         /* one per thread: a cycles clock counts its opener */
	struct pz_counters *ctr;         /* one per thread, when counting */
	unsigned *failed_counter;
	int *err;                        /* one per thread */
	unsigned *done;                  /* one per thread: passes completed */
};

static int batch_team_setup(void *ctx, unsigned t)
{
	struct batch_team *bt = ctx;
	int ret = pz_clock_open_thread(&bt->clocks[t], bt->clock);

	if (!ret && bt->p->counters) {
		ret = pz_counters_open(&bt->ctr[t], bt->failed_counter);
		if (ret)
			pz_clock_close(&bt->clocks[t]);
	}
	return ret;
}

static void batch_team_body(void *ctx, unsigned t, struct pz_team_state *st)
{
	struct batch_team *bt = ctx;

	bt->err[t] = batch_passes(bt->p, t, bt->bases[t], &bt->clocks[t], &bt->out[t],
				  bt->p->counters ? &bt->ctr[t] : NULL, st, &bt->done[t]);
}

static void batch_team_teardown(void *ctx, unsigned t)
{
	struct batch_team *bt = ctx;

	if (bt->p->counters)
		pz_counters_close(&bt->ctr[t]);
	pz_clock_close(&bt->clocks[t]);
}

int pz_bench_batch_team(const struct pz_batch_params *p, unsigned threads, const int *cpus,
			char *const *bases, const struct pz_clock *clock,
			struct pz_batch_out *out, unsigned *failed_counter)
{
	struct batch_team bt = { .p = p, .bases = bases, .clock = clock, .out = out,
				 .failed_counter = failed_counter };
	struct pz_team team = { .threads = threads, .cpus = cpus, .setup = batch_team_setup,
				.body = batch_team_body, .teardown = batch_team_teardown,
				.ctx = &bt };
	unsigned t, done = p->loops;
	int ret = -ENOMEM, pass_err = 0;

	/* Checked here too: a thread that failed alone would leave the others at the barrier. */
	if (check_batches(p) || threads == 0 || threads > PZ_MAX_THREADS ||
	    (p->cold && p->flush.method == PZ_FLUSH_EVICT && !p->flush.evict))
		return -EINVAL;
	bt.err = calloc(threads, sizeof(*bt.err));
	bt.ctr = calloc(threads, sizeof(*bt.ctr));
	bt.clocks = calloc(threads, sizeof(*bt.clocks));
	bt.done = calloc(threads, sizeof(*bt.done));
	if (bt.err && bt.ctr && bt.clocks && bt.done) {
		ret = pz_team_run(&team);
		/* A counter read's error first; -EINTR only when nothing else went wrong. */
		for (t = 0; !ret && t < threads; t++)
			if (bt.err[t] && bt.err[t] != -EINTR)
				ret = pass_err = bt.err[t];
		for (t = 0; t < threads; t++)
			done = PZ_MIN(done, bt.done[t]);
		if (!ret && done < p->loops)
			ret = -EINTR;
		if (pass_err && failed_counter)
			*failed_counter = 0;   /* a read failed: the group leader's */
		if (p->loops_done)
			*p->loops_done = ret && ret != -EINTR ? 0 : done;
	}
	free(bt.err);
	free(bt.ctr);
	free(bt.clocks);
	free(bt.done);
	return ret;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

uint64_t pz_batch_typical_worst(const uint64_t *ticks, unsigned loops, size_t nb,
				uint64_t *scratch)
{
	uint64_t worst = 0;
	size_t j;
	unsigned i;

	for (j = 0; j < nb; j++) {
		for (i = 0; i < loops; i++)
			scratch[i] = ticks[(size_t)i * nb + j];
		qsort(scratch, loops, sizeof(*scratch), cmp_u64);
		/* The lower median: with two passes, the better one. */
		if (scratch[(loops - 1) / 2] > worst)
			worst = scratch[(loops - 1) / 2];
	}
	return worst;
}

void pz_ticks_summarize(uint64_t *ticks, size_t n, struct pz_tick_summary *s)
{
	long double sum = 0;
	size_t i;

	qsort(ticks, n, sizeof(*ticks), cmp_u64);
	for (i = 0; i < n; i++)
		sum += ticks[i];
	s->max = ticks[n - 1];
	/* Nearest rank, in integers: rank ceil(99n/100), 1-based. */
	s->p99 = ticks[(n * 99 + 99) / 100 - 1];
	s->median = ticks[(n + 1) / 2 - 1];
	s->mean = (double)(sum / n);
}

/* Folios ----------------------------------------------------------------- */

static const char *const cold_names[PZ_COLD_COUNT] = {
	[PZ_COLD_CLFLUSH] = "clflush",
	[PZ_COLD_EVICT] = "evict",
};

const char *pz_cold_name(enum pz_cold c)
{
	return (unsigned)c < PZ_COLD_COUNT ? cold_names[c] : "?";
}

int pz_cold_lookup(const char *name)
{
	int i;

	for (i = 0; i < PZ_COLD_COUNT; i++)
		if (strcmp(name, cold_names[i]) == 0)
			return i;
	return -1;
}

int pz_cold_available(enum pz_cold c)
{
#if defined(__x86_64__)
	return (unsigned)c < PZ_COLD_COUNT;
#else
	/* Flushing by address from user space is an x86 guarantee; elsewhere, evict. */
	return c == PZ_COLD_EVICT;
#endif
}

size_t pz_folio_touch_lines(const struct pz_folio_params *p)
{
	size_t first, count;

	pz_neighbourhood(p->nr_pages, p->fault, &first, &count);
	return count * (PZ_PAGE_SIZE / PZ_LINE_SIZE);
}

/*
 * Read then write every line of [p, p + len), each load's address depending
 * on the previous load's value (always zero here, ANDed with pz_zero), so
 * the loads form a chain and out-of-order execution cannot overlap them:
 * the time says where the lines were (L1, L2, L3, memory). Each line is
 * written back with what was read, so the memory stays zero.
 */
__attribute__((noinline))
static uint64_t touch_lines(char *p, size_t len)
{
	uint64_t zero = pz_zero, dep = 0;
	size_t off;

	for (off = 0; off < len; off += PZ_LINE_SIZE) {
		volatile uint64_t *q = (volatile uint64_t *)(p + off + dep);
		uint64_t v = *q;

		*q = v;
		dep = v & zero;
	}
	return dep;
}

/* One load per line: pulls [p, p + len) through the caches, evicting others. */
__attribute__((noinline))
static uint64_t read_lines(const char *p, size_t len)
{
	uint64_t sum = 0;
	size_t off;

	for (off = 0; off < len; off += PZ_LINE_SIZE)
		sum += *(const volatile uint64_t *)(p + off);
	return sum;
}

static void flush_lines(char *p, size_t len)
{
#if defined(__x86_64__)
	size_t off;

	for (off = 0; off < len; off += PZ_LINE_SIZE)
		_mm_clflush(p + off);
	/* clflush is ordered by mfence only: the touch must not start before it ends. */
	_mm_mfence();
#else
	(void)p;
	(void)len;
#endif
}

int pz_bench_folio(const struct pz_folio_params *p, char *folio, const char *scrub,
		   size_t scrub_len, const struct pz_clock *clock, struct pz_folio_sample *out)
{
	struct pz_clearer clr = { .base = folio, .kernel = p->kernel, .nt_kernel = p->nt_kernel };
	size_t bytes = p->nr_pages * PZ_PAGE_SIZE, nb_first, nb_count, nb_len;
	char *nb;
	unsigned i, j;
	int ret;

	if (!p->nr_pages || p->fault >= p->nr_pages || !p->batch_pages || !p->loops ||
	    (unsigned)p->strategy >= PZ_STRATEGY_COUNT || !p->kernel ||
	    (unsigned)p->cold >= PZ_COLD_COUNT || !pz_cold_available(p->cold) ||
	    (pz_strategy_uses_nontemporal(p->strategy) && !p->nt_kernel) ||
	    (p->flush_folio && p->flush.method == PZ_FLUSH_EVICT && !p->flush.evict) ||
	    (p->ctr && !p->counters))
		return -EINVAL;
	/* The folio is dirtied below: fault it in first, where a failure is an error, not SIGBUS. */
	ret = pz_region_prefault(folio, bytes, PZ_PAGE_SHIFT_4KB);
	if (ret)
		return ret;
	pz_neighbourhood(p->nr_pages, p->fault, &nb_first, &nb_count);
	nb = folio + nb_first * PZ_PAGE_SIZE;
	nb_len = nb_count * PZ_PAGE_SIZE;

	if (p->loops_done)
		*p->loops_done = 0;
	for (i = 0; i < p->loops; i++) {
		uint64_t acc[PZ_CTR_COUNT] = { 0 }, t0, t1, t1c, t2, t3, t4;
		struct pz_counter_snap a, b;

		/* Between loops: a folio clear is short, a whole loop well under a second. */
		if (pz_stopping())
			return -EINTR;
		/*
		 * A folio fresh from the page allocator holds old data and is
		 * rarely in cache: dirty it, then push it out by reading more
		 * than the LLC holds (the 2012 reviewers: measure cache-cold).
		 */
		memset(folio, 0xa5, bytes);
		pz_sink += read_lines(scrub, scrub_len);
		/* Cache cold: reading the scrub evicts most lines, flushing by address all of them. */
		if (p->flush_folio) {
			pz_flush(&p->flush, folio, bytes);
			if (p->hook)
				p->hook(p->hook_ctx, 0, folio, bytes);
		}
		if (p->ctr && (ret = pz_counters_read(p->ctr, &a)))
			return ret;

		t0 = pz_clock_read(clock);
		pz_strategy_order(p->strategy, p->nr_pages, p->fault, p->batch_pages,
				  pz_clear_step, &clr);
		t1 = t1c = pz_clock_read(clock);
		if (p->ctr) {
			ret = pz_counters_read(p->ctr, &b);
			if (!ret)
				ret = pz_counters_delta(&a, &b, acc);
			if (ret)
				return ret;
			for (j = 0; j < PZ_CTR_COUNT; j++)
				p->counters[(size_t)i * PZ_CTR_COUNT + j] = acc[j];
			/*
			 * The touch starts after the counter read, as the cold
			 * touch starts after the eviction: the read (a read()
			 * syscall) is no part of finding the lines. The lines
			 * the syscall itself evicts are few (its own stack and
			 * data) and the same for every strategy.
			 */
			t1 = pz_clock_read(clock);
		}
		pz_sink += touch_lines(nb, nb_len);
		t2 = pz_clock_read(clock);

		if (p->cold == PZ_COLD_CLFLUSH)
			flush_lines(nb, nb_len);
		else
			pz_sink += read_lines(scrub, scrub_len);
		t3 = pz_clock_read(clock);
		pz_sink += touch_lines(nb, nb_len);
		t4 = pz_clock_read(clock);

		out[i].clear = t1c - t0;
		out[i].touch = t2 - t1;
		out[i].cold = t4 - t3;
		if (p->loops_done)
			*p->loops_done = i + 1;
	}
	return 0;
}
