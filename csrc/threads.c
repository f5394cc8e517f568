/*
 * threads.c - the memset/memcpy loops under measured conditions (see threads.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "numa.h"
#include "threads.h"

/* Parts of a shared region start on page boundaries: no two threads share a line or a page. */
#define PZ_PART_ALIGN 4096u

/* The team ------------------------------------------------------------------ */

struct pz_team_state {
	const struct pz_team *team;
	/*
	 * Threads are created one by one and creation can fail part-way, which a
	 * pthread barrier cannot absorb (its count is fixed); so they first wait
	 * at a gate the creator opens once all exist, or opens with @abort set.
	 */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int open, abort;
	pthread_barrier_t barrier;
	atomic_uint arrived;     /* threads that reached the first barrier */
	atomic_int failed;       /* a thread's setup failed: nobody times anything */
	struct pz_team_member {
		struct pz_team_state *st;
		unsigned t;
		pthread_t tid;
		int err;
	} *m;
};

void pz_team_sync(struct pz_team_state *st)
{
	pthread_barrier_wait(&st->barrier);
}

unsigned pz_team_arrived(struct pz_team_state *st)
{
	return atomic_load(&st->arrived);
}

static void *team_main(void *arg)
{
	struct pz_team_member *m = arg;
	struct pz_team_state *st = m->st;
	const struct pz_team *team = st->team;
	int set_up = 0;

	pthread_mutex_lock(&st->lock);
	while (!st->open)
		pthread_cond_wait(&st->cond, &st->lock);
	pthread_mutex_unlock(&st->lock);
	if (st->abort)
		return NULL;

	if (team->cpus) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(team->cpus[m->t], &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			m->err = -errno;
	}
	if (!m->err && team->setup) {
		m->err = team->setup(team->ctx, m->t);
		set_up = !m->err;
	}
	if (m->err)
		atomic_store(&st->failed, 1);

	atomic_fetch_add(&st->arrived, 1);
	pthread_barrier_wait(&st->barrier);
	/* Everyone's setup is done and every thread reads the same flag now. */
	if (!atomic_load(&st->failed))
		team->body(team->ctx, m->t, st);
	if (set_up && team->teardown)
		team->teardown(team->ctx, m->t);
	return NULL;
}

int pz_team_run(const struct pz_team *team)
{
	struct pz_team_state st;
	unsigned t, started = 0;
	int ret = 0;

	if (team->threads == 0 || team->threads > PZ_MAX_THREADS)
		return -EINVAL;
	memset(&st, 0, sizeof(st));
	st.team = team;
	st.m = calloc(team->threads, sizeof(*st.m));
	if (!st.m)
		return -ENOMEM;
	pthread_mutex_init(&st.lock, NULL);
	pthread_cond_init(&st.cond, NULL);
	pthread_barrier_init(&st.barrier, NULL, team->threads);
	for (; started < team->threads; started++) {
		st.m[started].st = &st;
		st.m[started].t = started;
		ret = -pthread_create(&st.m[started].tid, NULL, team_main, &st.m[started]);
		if (ret)
			break;
	}
	pthread_mutex_lock(&st.lock);
	st.open = 1;
	st.abort = ret != 0;
	pthread_cond_broadcast(&st.cond);
	pthread_mutex_unlock(&st.lock);
	for (t = 0; t < started; t++)
		pthread_join(st.m[t].tid, NULL);
	if (ret)
		ret = -EAGAIN;
	for (t = 0; !ret && t < team->threads; t++)
		ret = st.m[t].err;
	pthread_barrier_destroy(&st.barrier);
	pthread_cond_destroy(&st.cond);
	pthread_mutex_destroy(&st.lock);
	free(st.m);
	return ret;
}

/* memset/memcpy ---------------------------------------------------------- */

struct pz_run;

struct pz_worker {
	struct pz_run *run;
	unsigned t;
	char *dst;
	const char *src;
	size_t len;
	struct pz_counters ctr;
};

struct pz_run {
	const struct pz_run_params *p;
	const struct pz_clock *clock;
	struct pz_run_out *out;
	struct pz_worker *w;
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

static void hot_pass(const struct pz_run_params *p, struct pz_worker *w, int c, int direct,
		     uint64_t *t0, uint64_t *t1)
{
	const struct pz_clock *clock = w->run->clock;
	size_t off;

	*t0 = pz_clock_read(clock);
	for (off = 0; off < w->len; off += p->chunk)
		call(p->kernel, direct, w->dst + off, w->src ? w->src + off : NULL, c,
		     PZ_MIN(p->chunk, w->len - off));
	*t1 = pz_clock_read(clock);
}

/* Flush, then time, each chunk: the flushes stay outside the sum. */
static uint64_t cold_pass(const struct pz_run_params *p, struct pz_worker *w, int c, int direct,
			  uint64_t *first, uint64_t *last)
{
	const struct pz_clock *clock = w->run->clock;
	uint64_t sum = 0, t0 = 0, t1 = 0;
	size_t off;

	*first = 0;

	for (off = 0; off < w->len; off += p->chunk) {
		size_t len = PZ_MIN(p->chunk, w->len - off);
		char *d = w->dst + off;
		const char *s = w->src ? w->src + off : NULL;

		pz_flush(&p->flush, d, len);
		if (s)
			pz_flush(&p->flush, s, len);
		if (p->hook)
			p->hook(p->hook_ctx, w->t, PZ_EV_FLUSH, d, len);
		t0 = pz_clock_read(clock);
		call(p->kernel, direct, d, s, c, len);
		t1 = pz_clock_read(clock);
		if (off == 0)
			*first = t0;
		sum += t1 - t0;
		if (p->hook)
			p->hook(p->hook_ctx, w->t, PZ_EV_CLEAR, d, len);
	}
	*last = t1;
	return sum;
}

static int worker_setup(void *ctx, unsigned t)
{
	struct pz_run *run = ctx;

	return run->p->counters ? pz_counters_open(&run->w[t].ctr, &run->out->failed_counter) : 0;
}

static void worker_teardown(void *ctx, unsigned t)
{
	struct pz_run *run = ctx;

	if (run->p->counters)
		pz_counters_close(&run->w[t].ctr);
}

static void worker_body(void *ctx, unsigned t, struct pz_team_state *st)
{
	struct pz_run *run = ctx;
	struct pz_worker *w = &run->w[t];
	const struct pz_run_params *p = run->p;
	struct pz_run_out *out = run->out;
	int direct;
	unsigned i;

	direct = whole_units(p->kernel, w->dst, p->chunk, w->len) &&
		 (!w->src || whole_units(p->kernel, w->src, p->chunk, w->len));
	if (p->hook)
		p->hook(p->hook_ctx, w->t, PZ_EV_START, NULL, pz_team_arrived(st));

	for (i = 0; i < p->loops; i++) {
		const size_t k = (size_t)w->t * p->loops + i;
		uint64_t c0[PZ_CTR_COUNT], c1[PZ_CTR_COUNT], t0, t1;
		int c = pass_value(p, w->t, i);
		unsigned j;

		/* Each loop starts together, or the threads drift apart and overlap less. */
		if (i)
			pz_team_sync(st);
		if (p->counters)
			pz_counters_read(&w->ctr, c0);
		if (p->cold) {
			out->samples[k] = cold_pass(p, w, c, direct, &t0, &t1);
		} else {
			hot_pass(p, w, c, direct, &t0, &t1);
			out->samples[k] = t1 - t0;
		}
		if (p->counters) {
			pz_counters_read(&w->ctr, c1);
			for (j = 0; j < PZ_CTR_COUNT; j++)
				out->counters[k * PZ_CTR_COUNT + j] = c1[j] - c0[j];
		}
		out->start[k] = t0;
		out->end[k] = t1;
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

int pz_run_threads(const struct pz_run_params *p, const struct pz_clock *clock,
		   char *const *dst, const char *const *src, struct pz_run_out *out)
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
	free(run.w);
	return ret;
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
		ret = pz_region_map(&dst[b], p->size, p->page_shift, p->thp, p->node < 0, 0);
		if (!ret && p->node >= 0)
			ret = pz_numa_bind(dst[b].addr, dst[b].size, p->node);
		if (!ret && copy) {
			ret = pz_region_map(&src[b], p->size, p->page_shift, p->thp, p->node < 0, 0);
			if (!ret && p->node >= 0)
				ret = pz_numa_bind(src[b].addr, src[b].size, p->node);
		}
		if (ret)
			goto out;
		d[b] = dst[b].addr;
		s[b] = src[b].addr;
		/* Prefault as bench.c does: the first loop must not pay the faults. */
		if (copy) {
			memset(src[b].addr, 0, p->size);
			pz_kernel_copy(p->kernel, d[b], s[b], p->size);
		} else {
			pz_kernel_fill(p->kernel, d[b],
				       (p->kernel->flags & PZ_ZERO_ONLY) ? 0 : 0xff, p->size);
		}
	}
	if (p->cold && p->flush.method == PZ_FLUSH_EVICT && !p->flush.evict) {
		ret = pz_region_map(&evict, p->flush.evict_len, PZ_PAGE_SHIFT_4KB, PZ_THP_SYSTEM,
				    1, 0);
		if (ret)
			goto out;
		q.flush.evict = evict.addr;
	}
	ret = pz_run_threads(&q, clock, d, copy ? s : NULL, out);
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
