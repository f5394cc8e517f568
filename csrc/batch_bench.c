/*
 * batch_bench.c - timing clear_pages() batches: a region cleared B pages at
 * a time, the clock read after every batch (see policy_bench.h). The walk
 * is policy.c's sequential order; the team and the meters policy_bench.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "policy_bench.h"
#include "region.h"
#include "stop.h"
#include "team.h"

size_t pz_batch_count(const struct pz_batch_params *p)
{
	if (!p->batch_pages || p->batch_pages > p->nr_pages)
		return 0;
	return p->nr_pages / p->batch_pages + (p->nr_pages % p->batch_pages != 0);
}

/* One thread's pass in progress. */
struct batch_run {
	struct pz_clearer clr;
	const struct pz_batch_params *p;
	unsigned thread;
	struct pz_meter *m;
	uint64_t *ticks;
	size_t n, cap;
	uint64_t prev, worst;
	int stopped;      /* a stop request or a counter error ended this pass */
	uint64_t flushed; /* cold: ticks spent flushing in this pass, left out of it */
	uint64_t *acc;    /* cold counters: the pass's counts */
	int err;          /* cold counters: a read's error */
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
	now = pz_clock_read(&b->m->clock);
	d = now - b->prev;
	if (b->n < b->cap)
		b->ticks[b->n] = d;
	b->n++;
	if (d > b->worst)
		b->worst = d;
	if (b->p->yield) {
		sched_yield();
		now = pz_clock_read(&b->m->clock);
	}
	b->prev = now;
}

/*
 * Cold: flush the batch's range, then restart the batch's clock, so neither
 * the flush nor the hook is part of the batch or (via @flushed) the pass.
 * The counters are read inside that untimed window too, so they count the
 * batch's clear (and its clock read), not the flush: each batch begins a
 * count there and the next batch's window (or the pass's end) ends it.
 * A separate step function keeps the hot path's timed_step as it is.
 */
static void cold_step(void *ctx, const struct pz_step *s)
{
	struct batch_run *b = ctx;
	const struct pz_policy_cond *c = &b->p->cond;
	char *p = b->clr.base + s->first * PZ_PAGE_SIZE;
	size_t len = s->count * PZ_PAGE_SIZE;
	uint64_t t0, t1;

	if (stopped(b))
		return;
	t0 = pz_clock_read(&b->m->clock);
	b->err = pz_meter_stop(b->m, b->acc);
	pz_flush(&c->flush, p, len);
	if (c->hook)
		c->hook(c->hook_ctx, b->thread, p, len);
	if (!b->err)
		b->err = pz_meter_start(b->m);
	b->stopped = b->err != 0;
	t1 = pz_clock_read(&b->m->clock);
	b->flushed += t1 - t0;
	b->prev = t1;
	timed_step(b, s);
}

struct batch_ctx {
	const struct pz_batch_params *p;
	char *const *bases;
	struct pz_batch_out *out;
	struct batch_run *runs; /* one per thread */
	size_t nb;              /* batches per pass */
};

/*
 * Before the start barrier, pinned: fault the region in (an error, not
 * SIGBUS, where hugetlb memory bound to a node cannot get its pages
 * there), then warm up through the kernel under test, as perf does.
 */
static int batch_prepare(void *ctx, unsigned t, struct pz_meter *m)
{
	struct batch_ctx *bc = ctx;
	const struct pz_batch_params *p = bc->p;
	struct pz_clearer warm = { .base = bc->bases[t], .kernel = p->kernel };
	int ret = pz_region_prefault(warm.base, p->nr_pages * PZ_PAGE_SIZE, PZ_PAGE_SHIFT_4KB);

	bc->runs[t] = (struct batch_run){ .clr = warm, .p = p, .thread = t, .m = m };
	bc->runs[t].clr.log = bc->out[t].log;
	return ret ? ret
		   : pz_strategy_order(PZ_STRATEGY_SEQUENTIAL, p->nr_pages, 0, p->batch_pages,
				       pz_clear_step, &warm);
}

/* Timed pass @i of thread @t: 0, -EINTR (a stop request cut it short) or a counter read's error. */
static int batch_pass(void *ctx, unsigned t, unsigned i, struct pz_meter *m)
{
	struct batch_ctx *bc = ctx;
	const struct pz_batch_params *p = bc->p;
	const struct pz_batch_out *out = &bc->out[t];
	struct batch_run *b = &bc->runs[t];
	uint64_t acc[PZ_CTR_COUNT] = { 0 }, t0, t1;
	unsigned j;
	int ret;

	b->ticks = out->batch_ticks + (size_t)i * bc->nb;
	b->n = 0;
	b->cap = bc->nb;
	b->worst = 0;
	b->flushed = 0;
	b->stopped = 0;
	b->acc = acc;
	b->err = 0;
	/* Hot: the count spans the pass; cold: each batch's clear (cold_step). */
	if (!p->cond.cold && (ret = pz_meter_start(m)))
		return ret;
	t0 = pz_clock_read(&m->clock);
	b->prev = t0;
	pz_strategy_order(PZ_STRATEGY_SEQUENTIAL, p->nr_pages, 0, p->batch_pages,
			  p->cond.cold ? cold_step : timed_step, b);
	/* The folio's smp_wmb(), once after its last batch (kernels.h): the pass's, no batch's. */
	pz_publish_clear();
	t1 = pz_clock_read(&m->clock);
	ret = pz_meter_stop(m, acc);
	if (b->err || ret)
		return b->err ? b->err : ret;
	if (b->stopped)
		return -EINTR;
	for (j = 0; p->cond.counters && j < PZ_CTR_COUNT; j++)
		out->counters[(size_t)i * PZ_CTR_COUNT + j] = acc[j];
	out->pass_ticks[i] = t1 - t0 - b->flushed;
	out->pass_worst[i] = b->worst;
	if (out->start) {
		out->start[i] = t0;
		out->end[i] = t1;
	}
	return 0;
}

int pz_bench_batches(const struct pz_batch_params *p, char *const *bases,
		     const struct pz_clock *clock, struct pz_batch_out *out)
{
	struct batch_ctx bc = { .p = p, .bases = bases, .out = out };
	struct pz_policy_team team = { .threads = p->threads,
				       .cpus = p->cpus,
				       .loops = p->loops,
				       .clock = clock,
				       .cond = &p->cond,
				       .prepare = batch_prepare,
				       .loop = batch_pass,
				       .ctx = &bc };
	unsigned t;
	int ret;

	if (p->cond.loops_done)
		*p->cond.loops_done = 0;
	/* Checked here: a thread that failed alone would leave the others at the barrier. */
	if (!pz_batch_count(p) || !p->threads || p->threads > PZ_MAX_THREADS)
		return -EINVAL;
	for (t = 0; t < p->threads; t++)
		if (!bases[t] || (p->cond.counters && !out[t].counters))
			return -EINVAL;
	bc.nb = pz_batch_count(p);
	bc.runs = calloc(p->threads, sizeof(*bc.runs));
	if (!bc.runs)
		return -ENOMEM;
	ret = pz_policy_team_run(&team);
	free(bc.runs);
	return ret;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

uint64_t pz_batch_typical_worst(const uint64_t *ticks, unsigned loops, size_t nb, uint64_t *scratch)
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
