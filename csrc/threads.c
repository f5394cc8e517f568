/*
 * threads.c - the memset/memcpy loops under measured conditions (see threads.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "numa.h"
#include "stop.h"
#include "threads.h"

/* Parts of a shared region start on page boundaries: no two threads share a line or a page. */
#define PZ_PART_ALIGN 4096u

/* memset/memcpy ---------------------------------------------------------- */

struct pz_run;

struct pz_worker {
	struct pz_run *run;
	unsigned t;
	char *dst;
	const char *src;
	size_t len;
	struct pz_clock clock;   /* this thread's: a cycles clock counts its opener only */
	int have_clock;
	struct pz_counters ctr;
	unsigned done;           /* loops this thread completed */
	int err;                 /* a counter read failed: the run's error */
};

struct pz_run {
	const struct pz_run_params *p;
	const struct pz_clock *clock;
	struct pz_run_out *out;
	struct pz_worker *w;
	int prefault;            /* the buffers are the run's own: each thread prefaults its part */
};

static int pass_value(const struct pz_run_params *p, unsigned t, unsigned loop)
{
	int v = p->value == PZ_VALUE_LOOP ? (int)(loop & 0xff) : p->value;

	return (v + (int)t * p->value_step) & 0xff;
}

/* As bench.c: call the body directly when every chunk is whole units. */
static int whole_units(const struct pz_kernel *k, const void *dst, size_t chunk, size_t len)
{
	size_t mask = (k->unit - 1) | (k->align - 1);

	return !((uintptr_t)dst & (k->align - 1)) && !(chunk & mask) && !(len & mask);
}

static void call(const struct pz_kernel *k, int direct, char *dst, const char *src, int c,
		 size_t len)
{
	if (k->kind == PZ_KIND_COPY) {
		if (direct)
			k->fn.copy(dst, src, len);
		else
			pz_kernel_copy(k, dst, src, len);
	} else {
		if (direct)
			k->fn.fill(dst, c, len);
		else
			pz_kernel_fill(k, dst, c, len);
	}
}

/* Counters, when asked for: read before a timed span... */
static int count_from(struct pz_worker *w, struct pz_counter_snap *a)
{
	return w->run->p->counters ? pz_counters_read(&w->ctr, a) : 0;
}

/* ...and after it, adding the span's counts to @acc. */
static int count_to(struct pz_worker *w, const struct pz_counter_snap *a, uint64_t *acc)
{
	struct pz_counter_snap b;
	int ret;

	if (!w->run->p->counters)
		return 0;
	ret = pz_counters_read(&w->ctr, &b);
	return ret ? ret : pz_counters_delta(a, &b, acc);
}

/*
 * The pass timed as a whole, counters read outside its clock reads. 0,
 * -EINTR when a stop request ended it between two chunks, or a counter
 * read's error.
 */
static int hot_pass(const struct pz_run_params *p, struct pz_worker *w, int c, int direct,
		    uint64_t *t0, uint64_t *t1, uint64_t *acc)
{
	struct pz_counter_snap a;
	size_t off;
	int ret = count_from(w, &a);

	if (ret)
		return ret;
	*t0 = pz_clock_read(&w->clock);
	for (off = 0; off < w->len; off += p->chunk) {
		if (pz_stopping())
			return -EINTR;
		call(p->kernel, direct, w->dst + off, w->src ? w->src + off : NULL, c,
		     PZ_MIN(p->chunk, w->len - off));
	}
	*t1 = pz_clock_read(&w->clock);
	return count_to(w, &a, acc);
}

/*
 * Flush, then time, each chunk: the flushes stay outside the sum, and
 * outside the counters too, which are read around each kernel call alone
 * (with evict, the only way on arm64, the flush's loads would outnumber
 * the clear's). 0, -EINTR or a counter read's error, as hot_pass.
 */
static int cold_pass(const struct pz_run_params *p, struct pz_worker *w, int c, int direct,
		     uint64_t *first, uint64_t *last, uint64_t *sum, uint64_t *acc)
{
	uint64_t t0 = 0, t1 = 0;
	size_t off;
	int ret;

	*first = 0;
	*sum = 0;
	for (off = 0; off < w->len; off += p->chunk) {
		size_t len = PZ_MIN(p->chunk, w->len - off);
		char *d = w->dst + off;
		const char *s = w->src ? w->src + off : NULL;
		struct pz_counter_snap a;

		if (pz_stopping())
			return -EINTR;
		pz_flush(&p->flush, d, len);
		if (s)
			pz_flush(&p->flush, s, len);
		if (p->hook)
			p->hook(p->hook_ctx, w->t, PZ_EV_FLUSH, d, len);
		ret = count_from(w, &a);
		if (ret)
			return ret;
		t0 = pz_clock_read(&w->clock);
		call(p->kernel, direct, d, s, c, len);
		t1 = pz_clock_read(&w->clock);
		ret = count_to(w, &a, acc);
		if (ret)
			return ret;
		if (off == 0)
			*first = t0;
		*sum += t1 - t0;
		if (p->hook)
			p->hook(p->hook_ctx, w->t, PZ_EV_CLEAR, d, len);
	}
	*last = t1;
	return 0;
}

/*
 * Prefault as bench.c does (the first loop must not pay the faults), from
 * the thread that will clear the memory, after it pinned itself: the first
 * touch places each page on the toucher's node, so a region prefaulted by
 * the unpinned creator would sit on the creator's node for every thread.
 */
static int prefault(const struct pz_run_params *p, struct pz_worker *w)
{
	int ret = pz_region_prefault(w->dst, w->len, p->page_shift);

	if (!ret && w->src)
		ret = pz_region_prefault((char *)w->src, w->len, p->page_shift);
	if (ret)
		return ret;
	/* Then through the kernel under test, as perf does: warm, and the pages dirty. */
	if (w->src) {
		memset((char *)w->src, 0, w->len);
		pz_kernel_copy(p->kernel, w->dst, w->src, w->len);
	} else {
		pz_kernel_fill(p->kernel, w->dst, (p->kernel->flags & PZ_ZERO_ONLY) ? 0 : 0xff,
			       w->len);
	}
	if (p->hook)
		p->hook(p->hook_ctx, w->t, PZ_EV_PREFAULT, w->dst, w->len);
	return 0;
}

static void worker_teardown(void *ctx, unsigned t)
{
	struct pz_run *run = ctx;

	if (run->p->counters)
		pz_counters_close(&run->w[t].ctr);
	if (run->w[t].have_clock)
		pz_clock_close(&run->w[t].clock);
	run->w[t].have_clock = 0;
}

static int worker_setup(void *ctx, unsigned t)
{
	struct pz_run *run = ctx;
	struct pz_worker *w = &run->w[t];
	int ret;

	ret = pz_clock_open_thread(&w->clock, run->clock);
	if (ret)
		return ret;
	w->have_clock = 1;
	if (run->p->counters) {
		ret = pz_counters_open(&w->ctr, &run->out->failed_counter);
		if (ret) {
			pz_clock_close(&w->clock);
			w->have_clock = 0;
			return ret;
		}
	}
	ret = run->prefault ? prefault(run->p, w) : 0;
	if (ret)
		worker_teardown(run, t);
	return ret;
}

static void worker_body(void *ctx, unsigned t, struct pz_team_state *st)
{
	struct pz_run *run = ctx;
	struct pz_worker *w = &run->w[t];
	const struct pz_run_params *p = run->p;
	struct pz_run_out *out = run->out;
	int direct, give_up = 0;
	unsigned i;

	direct = whole_units(p->kernel, w->dst, p->chunk, w->len) &&
		 (!w->src || whole_units(p->kernel, w->src, p->chunk, w->len));
	if (p->hook)
		p->hook(p->hook_ctx, w->t, PZ_EV_START, NULL, pz_team_arrived(st));

	/* Each loop starts together, or the threads drift apart and overlap less. */
	for (i = 0; i < p->loops && pz_team_next(st, i, give_up); i++) {
		const size_t k = (size_t)w->t * p->loops + i;
		uint64_t acc[PZ_CTR_COUNT] = { 0 }, t0 = 0, t1 = 0, sum = 0;
		int c = pass_value(p, w->t, i), ret;
		unsigned j;

		if (p->cold)
			ret = cold_pass(p, w, c, direct, &t0, &t1, &sum, acc);
		else
			ret = hot_pass(p, w, c, direct, &t0, &t1, acc);
		if (ret) {
			/* The loop is dropped; the others stop at the next barrier. */
			if (ret != -EINTR) {
				w->err = ret;
				out->failed_counter = 0;   /* the group leader's read */
			}
			give_up = 1;
			continue;
		}
		out->samples[k] = p->cold ? sum : t1 - t0;
		if (p->counters)
			for (j = 0; j < PZ_CTR_COUNT; j++)
				out->counters[k * PZ_CTR_COUNT + j] = acc[j];
		out->start[k] = t0;
		out->end[k] = t1;
		w->done = i + 1;
	}
}

static size_t part_len(const struct pz_run_params *p, unsigned t)
{
	size_t part;

	if (p->mode == PZ_THREADS_PRIVATE || p->threads == 1)
		return p->size;
	part = p->size / p->threads & ~(size_t)(PZ_PART_ALIGN - 1);
	return t + 1 < p->threads ? part : p->size - part * (p->threads - 1);
}

static int run_team(const struct pz_run_params *p, const struct pz_clock *clock,
		    char *const *dst, const char *const *src, struct pz_run_out *out, int prefault)
{
	struct pz_run run;
	struct pz_team team = { .threads = p->threads, .cpus = p->cpus, .setup = worker_setup,
				.body = worker_body, .teardown = worker_teardown, .ctx = &run };
	unsigned t;
	int ret;

	if (p->threads == 0 || p->threads > PZ_MAX_THREADS || p->loops == 0 || p->chunk == 0 ||
	    (p->cold && p->flush.method == PZ_FLUSH_EVICT && !p->flush.evict) ||
	    (p->mode == PZ_THREADS_SHARED && p->threads > 1 &&
	     p->size / p->threads < PZ_PART_ALIGN))
		return -EINVAL;
	memset(&run, 0, sizeof(run));
	run.p = p;
	run.clock = clock;
	run.out = out;
	run.prefault = prefault;
	out->loops_done = 0;
	run.w = calloc(p->threads, sizeof(*run.w));
	if (!run.w)
		return -ENOMEM;
	for (t = 0; t < p->threads; t++) {
		struct pz_worker *w = &run.w[t];
		size_t off = p->mode == PZ_THREADS_SHARED ? part_len(p, 0) * t : 0;
		unsigned b = p->mode == PZ_THREADS_SHARED ? 0 : t;

		w->run = &run;
		w->t = t;
		w->dst = dst[b] + off;
		w->src = src ? src[b] + off : NULL;
		w->len = part_len(p, t);
	}
	ret = pz_team_run(&team);
	if (!ret) {
		out->loops_done = p->loops;
		for (t = 0; t < p->threads; t++) {
			out->loops_done = PZ_MIN(out->loops_done, run.w[t].done);
			if (run.w[t].err && !ret)
				ret = run.w[t].err;
		}
		if (!ret && out->loops_done < p->loops)
			ret = -EINTR;
	}
	free(run.w);
	return ret;
}

int pz_run_threads(const struct pz_run_params *p, const struct pz_clock *clock,
		   char *const *dst, const char *const *src, struct pz_run_out *out)
{
	return run_team(p, clock, dst, src, out, 0);
}

int pz_bench_threads(const struct pz_run_params *p, const struct pz_clock *clock,
		     struct pz_run_out *out)
{
	const int copy = p->kernel->kind == PZ_KIND_COPY;
	const unsigned nbuf = p->mode == PZ_THREADS_PRIVATE ? p->threads : 1;
	struct pz_region *dst = NULL, *src = NULL, evict = { 0 };
	struct pz_run_params q = *p;
	char **d = NULL;
	const char **s = NULL;
	unsigned b;
	int ret = -ENOMEM;

	if (p->threads == 0 || p->threads > PZ_MAX_THREADS)
		return -EINVAL;
	dst = calloc(nbuf, sizeof(*dst));
	src = calloc(nbuf, sizeof(*src));
	d = calloc(nbuf, sizeof(*d));
	s = calloc(nbuf, sizeof(*s));
	if (!dst || !src || !d || !s)
		goto out;
	for (b = 0; b < nbuf; b++) {
		/* With a node, bind before the first touch, so no page starts elsewhere. */
		/* Not populated: each thread faults its own part in (see prefault()). */
		ret = pz_region_map(&dst[b], p->size, p->page_shift, p->thp, 0, 0);
		if (!ret && p->node >= 0)
			ret = pz_numa_bind(dst[b].addr, dst[b].size, p->node);
		if (!ret && copy) {
			ret = pz_region_map(&src[b], p->size, p->page_shift, p->thp, 0, 0);
			if (!ret && p->node >= 0)
				ret = pz_numa_bind(src[b].addr, src[b].size, p->node);
		}
		if (ret)
			goto out;
		d[b] = dst[b].addr;
		s[b] = src[b].addr;
	}
	if (p->cold && p->flush.method == PZ_FLUSH_EVICT && !p->flush.evict) {
		ret = pz_region_map(&evict, p->flush.evict_len, PZ_PAGE_SHIFT_4KB, PZ_THP_SYSTEM,
				    1, 0);
		if (ret)
			goto out;
		q.flush.evict = evict.addr;
	}
	/* Each thread prefaults its own part, pinned: see prefault(). */
	ret = run_team(&q, clock, d, copy ? s : NULL, out, 1);
out:
	pz_region_unmap(&evict);
	for (b = 0; dst && src && b < nbuf; b++) {
		pz_region_unmap(&src[b]);
		pz_region_unmap(&dst[b]);
	}
	free(dst);
	free(src);
	free(d);
	free(s);
	return ret;
}
