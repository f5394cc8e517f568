/*
 * mem_bench.c - the memset/memcpy benchmark under any conditions (see mem_bench.h).
 *
 * As perf bench mem: buffers are prefaulted by the function under test
 * before any timing; each pass walks the region in chunk-sized calls.
 * Unlike perf, the clock is read around every pass so each pass is a
 * sample of its own (perf reads it once around all loops). Nothing here
 * allocates, prints or can fail once timing has started, but a counter
 * read; a stop request (stop.h), checked between chunks, ends the run early.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "numa.h"
#include "stop.h"
#include "switches.h"
#include "mem_bench.h"

/* @offset moves the buffers less than a 4KB page past the mapping's start. */
#define PZ_OFFSET_LIMIT 4096u

struct pz_run;

struct pz_worker {
	struct pz_run *run;
	unsigned t;
	char *dst;
	const char *src;
	size_t len;
	int direct;            /* every chunk is whole units: call the kernel's body */
	struct pz_clock clock; /* this thread's: a cycles clock counts its opener only */
	int have_clock;
	struct pz_counters ctr;
	unsigned done;           /* loops this thread completed */
	int entered;             /* setup ran: the thread started and pinned itself */
	int err;                 /* setup or a counter read failed ... */
	enum pz_run_stage stage; /* ... at this step */
};

struct pz_run {
	const struct pz_run_params *p;
	const struct pz_clock *clock;
	struct pz_run_out *out;
	struct pz_worker *w;
	int prefault; /* the buffers are the run's own: each thread prefaults its part */
};

static int pass_value(const struct pz_run_params *p, unsigned t, unsigned loop)
{
	/* perf: memset(dst, i, size), the int truncated to a byte by memset. */
	unsigned v = p->value == PZ_VALUE_LOOP ? loop & 0xff : (unsigned)p->value;

	/*
	 * Unsigned: any step wraps modulo 2^32, whose low byte is the one
	 * v + t * step has; in int, a step past INT_MAX / t would overflow (undefined).
	 */
	return (int)((v + t * (unsigned)p->value_step) & 0xff);
}

/*
 * When every chunk starts aligned and spans whole units (page-aligned
 * buffers, power-of-two chunks: the usual case), a pass calls the kernel's
 * body directly, as a plain C loop would. Otherwise each call goes through
 * the head/tail handling. Decided once per run, not per chunk: at 4KB
 * chunks even a few instructions per call show in the rate.
 */
static int whole_units(const struct pz_kernel *k, const void *dst, size_t chunk, size_t len)
{
	size_t mask = (k->unit - 1) | (k->align - 1);

	return !((uintptr_t)dst & (k->align - 1)) && !(chunk & mask) && !(len & mask);
}

/* One kernel call: the prefault's, a cold chunk's, a hot chunk that is not whole units. */
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

/*
 * The hot pass's chunks: the loop a plain C program would write, plus one
 * relaxed load of the stop flag per kernel call, which even 4KB chunks do
 * not feel (and a 1GB call lasts tens of ms, so a stop takes effect
 * quickly). Everything else is read once, before the loop, into locals
 * that stay in registers across the calls; @copy is a constant at both
 * call sites, so always_inline makes a fill loop and a copy loop, with no
 * test of the kernel's kind per chunk. 0, or -EINTR between two chunks.
 */
static inline __attribute__((always_inline)) int hot_chunks(const struct pz_worker *w, int c,
							    const int copy)
{
	const struct pz_kernel *k = w->run->p->kernel;
	const pz_fill_fn fill = copy ? NULL : k->fn.fill;
	const pz_copy_fn cpy = copy ? k->fn.copy : NULL;
	char *const dst = w->dst;
	const char *const src = w->src;
	const size_t size = w->len, chunk = w->run->p->chunk;
	const int direct = w->direct;
	size_t off;

	for (off = 0; off < size; off += chunk) {
		size_t len = PZ_MIN(chunk, size - off);

		if (pz_stopping())
			return -EINTR;
		if (!direct)
			call(k, 0, dst + off, copy ? src + off : NULL, c, len);
		else if (copy)
			cpy(dst + off, src + off, len);
		else
			fill(dst + off, c, len);
	}
	return 0;
}

/* A counter read that failed: the run's error, at the counter stage. */
static int counter_error(struct pz_worker *w, int err)
{
	w->stage = PZ_STAGE_COUNTER_READ;
	return err;
}

/* Counters, when asked for: read before a timed span... */
static int count_from(struct pz_worker *w, struct pz_counter_snap *a)
{
	int ret = w->run->p->counters ? pz_counters_read(&w->ctr, a) : 0;

	return ret ? counter_error(w, ret) : 0;
}

/* ...and after it, adding the span's counts to @acc (-EBUSY: multiplexed meanwhile). */
static int count_to(struct pz_worker *w, const struct pz_counter_snap *a, uint64_t *acc)
{
	struct pz_counter_snap b;
	int ret;

	if (!w->run->p->counters)
		return 0;
	ret = pz_counters_read(&w->ctr, &b);
	if (!ret)
		ret = pz_counters_delta(a, &b, acc);
	return ret ? counter_error(w, ret) : 0;
}

/*
 * The pass timed as a whole, counters read outside its clock reads. 0,
 * -EINTR when a stop request ended it between two chunks, or a counter
 * read's error.
 */
static int hot_pass(struct pz_worker *w, int c, uint64_t *t0, uint64_t *t1, uint64_t *acc)
{
	struct pz_counter_snap a;
	int ret = count_from(w, &a);

	if (ret)
		return ret;
	*t0 = pz_clock_read(&w->clock);
	ret = w->src ? hot_chunks(w, c, 1) : hot_chunks(w, c, 0);
	*t1 = pz_clock_read(&w->clock);
	return ret ? ret : count_to(w, &a, acc);
}

/* Whether two passes' times agree within PZ_SETTLE_TOLERANCE_PCT of the shorter. */
static int agree(uint64_t a, uint64_t b)
{
	uint64_t lo = PZ_MIN(a, b), hi = a > b ? a : b;

	return (hi - lo) * 100 <= lo * PZ_SETTLE_TOLERANCE_PCT;
}

/*
 * Untimed passes in this mapping until it has settled (mem_bench.h): two in a
 * row agree, after PZ_SETTLE_MIN_LOOPS, or p->settle passes ran. The test
 * switch PAGEZERO_FAKE_UNSETTLED=N makes the passes before the Nth read as
 * an unsettled rate would, whatever the clock says. 0, or -EINTR.
 */
static int settle(struct pz_worker *w, int c, struct pz_run_out *out)
{
	const unsigned most = w->run->p->settle;
	const unsigned least = PZ_MIN(PZ_SETTLE_MIN_LOOPS, most);
	const uint64_t unsettled = pz_switch(PZ_SW_FAKE_UNSETTLED);
	uint64_t prev = 0;
	unsigned i;

	for (i = 0; i < most; i++) {
		uint64_t t0 = pz_clock_read(&w->clock), t;
		int ret = w->src ? hot_chunks(w, c, 1) : hot_chunks(w, c, 0);

		t = pz_clock_read(&w->clock) - t0;
		if (ret)
			return ret;
		if (i < unsettled)
			t *= 2 + i % 2;
		out->settle_loops = i + 1;
		if (i + 1 >= least && i > 0 && agree(prev, t)) {
			out->settled = 1;
			break;
		}
		prev = t;
	}
	return 0;
}

/*
 * Flush, then time, each chunk: the flushes stay outside the sum, and
 * outside the counters too, which are read around each kernel call alone
 * (with evict, the only way on arm64, the flush's loads would outnumber
 * the clear's). 0, -EINTR or a counter read's error, as hot_pass.
 */
static int cold_pass(struct pz_worker *w, int c, uint64_t *first, uint64_t *last, uint64_t *sum,
		     uint64_t *acc)
{
	const struct pz_run_params *p = w->run->p;
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
		call(p->kernel, w->direct, d, s, c, len);
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
 * Prefault as perf does (the first loop must not pay the faults), from the
 * thread that will clear the memory, after it pinned itself: the first
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
	/*
	 * Then through the kernel under test, as perf does: warm, and the
	 * pages dirty. perf fills with -1, except that a zero-only kernel can
	 * only write zeros.
	 */
	if (w->src)
		memset((char *)w->src, 0, w->len);
	call(p->kernel, 0, w->dst, w->src, (p->kernel->flags & PZ_ZERO_ONLY) ? 0 : 0xff, w->len);
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

/* Runs pinned (when asked): its own clock and counters, then its part prefaulted. */
static int worker_setup(void *ctx, unsigned t)
{
	struct pz_run *run = ctx;
	struct pz_worker *w = &run->w[t];
	int ret;

	w->entered = 1;
	w->stage = PZ_STAGE_CLOCK;
	ret = pz_clock_open_thread(&w->clock, run->clock);
	if (ret)
		return w->err = ret;
	w->have_clock = 1;
	if (run->p->counters) {
		w->stage = PZ_STAGE_COUNTERS;
		ret = pz_counters_open(&w->ctr, &run->out->failed_counter);
		if (ret) {
			pz_clock_close(&w->clock);
			w->have_clock = 0;
			return w->err = ret;
		}
	}
	w->stage = PZ_STAGE_PREFAULT;
	ret = run->prefault ? prefault(run->p, w) : 0;
	if (ret) {
		worker_teardown(run, t);
		return w->err = ret;
	}
	w->stage = PZ_STAGE_NONE;
	return 0;
}

static void worker_body(void *ctx, unsigned t, struct pz_team_state *st)
{
	struct pz_run *run = ctx;
	struct pz_worker *w = &run->w[t];
	const struct pz_run_params *p = run->p;
	struct pz_run_out *out = run->out;
	int give_up = 0;
	unsigned i;

	w->direct = whole_units(p->kernel, w->dst, p->chunk, w->len) &&
		    (!w->src || whole_units(p->kernel, w->src, p->chunk, w->len));
	if (p->hook)
		p->hook(p->hook_ctx, w->t, PZ_EV_START, NULL, pz_team_arrived(st));
	/* One thread (pz_bench_mem_check): the loops' first fill value, untimed. */
	if (p->settle && settle(w, pass_value(p, w->t, 0), out))
		give_up = 1;

	/* Each loop starts together, or the threads drift apart and overlap less. */
	for (i = 0; i < p->loops && pz_team_next(st, i, give_up); i++) {
		const size_t k = (size_t)w->t * p->loops + i;
		uint64_t acc[PZ_CTR_COUNT] = { 0 }, t0 = 0, t1 = 0, sum = 0;
		int c = pass_value(p, w->t, i), ret;
		unsigned j;

		if (p->cold)
			ret = cold_pass(w, c, &t0, &t1, &sum, acc);
		else
			ret = hot_pass(w, c, &t0, &t1, acc);
		if (ret) {
			/* The loop is dropped; the others stop at the next barrier. */
			if (ret != -EINTR)
				w->err = ret;
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

static const struct pz_team_ops ops = { worker_setup, worker_body, worker_teardown };

/*
 * Parts of a shared region start on the mapping's page boundaries: its
 * hugetlb page, THP's (2MB over 4KB pages) when THP was asked for, else the
 * kernel's base page (4KB; arm64's 16KB or 64KB). No two threads
 * then share a page, which matters beyond false sharing: the first touch of
 * any byte of a huge page allocates (and, with NUMA, places) all of it, and
 * each thread prefaults its own part, so a part starting inside a huge page
 * would let thread t fault in the memory thread t + 1 clears.
 */
size_t pz_part_align(const struct pz_run_params *p)
{
	if (p->page_shift == PZ_PAGE_SHIFT_2MB || p->page_shift == PZ_PAGE_SHIFT_1GB)
		return (size_t)1 << p->page_shift;
	return p->thp == PZ_THP_ON ? pz_thp_bytes() : (size_t)1 << pz_base_page_shift();
}

/*
 * Whole pages to every part but the last, which takes the rest (the size
 * need not be a multiple of threads pages): size / threads rounded down to
 * the page, and at least one page each (pz_bench_mem_check).
 */
size_t pz_part_len(const struct pz_run_params *p, unsigned t)
{
	size_t part;

	if (p->mode == PZ_THREADS_PRIVATE || p->threads == 1)
		return p->size;
	part = p->size / p->threads & ~(pz_part_align(p) - 1);
	return t + 1 < p->threads ? part : p->size - part * (p->threads - 1);
}

/* Thread t's fill byte: 0..255 (or the loop index), and only 0 for a zeros-only kernel. */
static int bad_value(const struct pz_run_params *p, unsigned t)
{
	const int zeros_only = (p->kernel->flags & PZ_ZERO_ONLY) != 0;
	/* In 64 bits: t < 2^11 and two ints cannot overflow it, as an int sum could. */
	const long long v = (long long)p->value + (long long)t * p->value_step;

	if (p->kernel->kind != PZ_KIND_FILL)
		return 0;
	if (p->value == PZ_VALUE_LOOP)
		return zeros_only;
	return v < 0 || v > 255 || (zeros_only && v != 0);
}

int pz_bench_mem_check(const struct pz_run_params *p, enum pz_clock_id clock)
{
	unsigned t;

	if (!p->kernel || p->threads == 0 || p->threads > PZ_MAX_THREADS || p->loops == 0 ||
	    p->size == 0 || p->chunk == 0 || p->chunk > p->size || p->offset >= PZ_OFFSET_LIMIT ||
	    (p->thp == PZ_THP_ON && p->page_shift != PZ_PAGE_SHIFT_4KB) ||
	    (unsigned)p->mode > PZ_THREADS_PRIVATE ||
	    (p->cold && p->flush.method == PZ_FLUSH_EVICT && !p->flush.evict &&
	     !p->flush.evict_len) ||
	    (p->mode == PZ_THREADS_SHARED && p->threads > 1 &&
	     p->size / p->threads < pz_part_align(p)))
		return -EINVAL;
	/*
	 * Settling is one thread's, hot: threads would settle apart, and a cold
	 * pass flushes what a settled one would keep. Two loops at least: one
	 * pass has nothing to agree with.
	 */
	if (p->settle && (p->settle < 2 || p->cold || p->threads != 1))
		return -EINVAL;
	/* A sample spans every thread's start and end: one clock, not one counter per thread. */
	if (clock == PZ_CLOCK_CYCLES && p->threads > 1)
		return -EINVAL;
	for (t = 0; t < p->threads; t++)
		if (bad_value(p, t))
			return -EINVAL;
	return 0;
}

/*
 * The step at which pz_team_run's error came: it returns the first failed
 * thread's error, so the first thread that failed its setup, or never got
 * to it, is the one. A thread that never set up either did not start or
 * could not pin itself; sched_setaffinity never fails with EAGAIN or
 * ENOMEM, which starting the threads does.
 */
static void team_failure(const struct pz_run *run, int ret)
{
	const struct pz_run_params *p = run->p;
	struct pz_run_out *out = run->out;
	unsigned t;

	out->stage = PZ_STAGE_START;
	for (t = 0; t < p->threads; t++) {
		const struct pz_worker *w = &run->w[t];

		if (w->entered && !w->err)
			continue;
		out->thread = t;
		if (w->entered)
			out->stage = w->stage;
		else if (p->cpus && ret != -EAGAIN && ret != -ENOMEM)
			out->stage = PZ_STAGE_PIN;
		return;
	}
}

static int run_team(const struct pz_run_params *p, const struct pz_clock *clock, char *const *dst,
		    const char *const *src, struct pz_run_out *out, int prefault)
{
	struct pz_run run;
	struct pz_team team = { .threads = p->threads, .cpus = p->cpus, .ops = &ops, .ctx = &run };
	unsigned t;
	int ret;

	memset(&run, 0, sizeof(run));
	run.p = p;
	run.clock = clock;
	run.out = out;
	run.prefault = prefault;
	run.w = calloc(p->threads, sizeof(*run.w));
	if (!run.w) {
		out->stage = PZ_STAGE_START;
		return -ENOMEM;
	}
	for (t = 0; t < p->threads; t++) {
		struct pz_worker *w = &run.w[t];
		size_t off = p->mode == PZ_THREADS_SHARED ? pz_part_len(p, 0) * t : 0;
		unsigned b = p->mode == PZ_THREADS_SHARED ? 0 : t;

		w->run = &run;
		w->t = t;
		w->dst = dst[b] + off;
		w->src = src ? src[b] + off : NULL;
		w->len = pz_part_len(p, t);
	}
	ret = pz_team_run(&team);
	if (ret) {
		team_failure(&run, ret);
	} else {
		out->loops_done = p->loops;
		for (t = 0; t < p->threads; t++) {
			out->loops_done = PZ_MIN(out->loops_done, run.w[t].done);
			if (run.w[t].err && !ret) {
				ret = run.w[t].err;
				out->stage = run.w[t].stage;
				out->thread = t;
			}
		}
		if (!ret && out->loops_done < p->loops)
			ret = -EINTR;
	}
	free(run.w);
	return ret;
}

static void start_out(struct pz_run_out *out)
{
	out->loops_done = 0;
	out->buffer_bytes = out->huge_bytes = 0;
	out->settle_loops = 0;
	out->settled = 0;
	out->stage = PZ_STAGE_NONE;
	out->thread = 0;
	out->failed_counter = PZ_CTR_COUNT;
}

int pz_bench_mem_on(const struct pz_run_params *p, const struct pz_clock *clock, char *const *dst,
		    const char *const *src, struct pz_run_out *out)
{
	start_out(out);
	if (pz_bench_mem_check(p, clock->id) ||
	    (p->cold && p->flush.method == PZ_FLUSH_EVICT && !p->flush.evict)) {
		out->stage = PZ_STAGE_ARGS;
		return -EINVAL;
	}
	return run_team(p, clock, dst, src, out, 0);
}

/* The run's buffers: @n regions (for each, memcpy's source too) and the evict buffer. */
struct pz_mem_buffers {
	unsigned n;
	struct pz_region *dst, *src, evict;
	char **d;
	const char **s;
};

static void unmap_buffers(struct pz_mem_buffers *b)
{
	unsigned i;

	pz_region_unmap(&b->evict);
	for (i = 0; b->dst && b->src && i < b->n; i++) {
		pz_region_unmap(&b->src[i]);
		pz_region_unmap(&b->dst[i]);
	}
	free(b->dst);
	free(b->src);
	free(b->d);
	free(b->s);
}

/* One buffer of size + offset, bound to the node if asked, not populated (see prefault()). */
static int map_one(const struct pz_run_params *p, struct pz_region *r, struct pz_run_out *out)
{
	int ret = pz_region_map(r, p->size + p->offset, p->page_shift, p->thp, 0, 0);

	if (ret) {
		out->stage = PZ_STAGE_MAP;
		return ret;
	}
	/* With a node, bind before the first touch, so no page starts elsewhere. */
	if (p->node >= 0) {
		ret = pz_numa_bind(r->addr, r->size, p->node);
		if (ret)
			out->stage = PZ_STAGE_BIND;
	}
	return ret;
}

static int map_buffers(const struct pz_run_params *p, struct pz_mem_buffers *b,
		       struct pz_run_out *out)
{
	const int copy = p->kernel->kind == PZ_KIND_COPY;
	unsigned i;
	int ret;

	b->n = p->mode == PZ_THREADS_PRIVATE ? p->threads : 1;
	b->dst = calloc(b->n, sizeof(*b->dst));
	b->src = calloc(b->n, sizeof(*b->src));
	b->d = calloc(b->n, sizeof(*b->d));
	b->s = calloc(b->n, sizeof(*b->s));
	if (!b->dst || !b->src || !b->d || !b->s) {
		out->stage = PZ_STAGE_MAP;
		return -ENOMEM;
	}
	for (i = 0; i < b->n; i++) {
		/*
		 * @offset moves the buffers past the page boundary mmap() gives,
		 * e.g. 16 bytes in for perf 6.1's malloc()ed buffers: rep stosq
		 * is several percent slower off a line boundary.
		 */
		ret = map_one(p, &b->dst[i], out);
		if (!ret && copy)
			ret = map_one(p, &b->src[i], out);
		if (ret)
			return ret;
		b->d[i] = (char *)b->dst[i].addr + p->offset;
		b->s[i] = copy ? (const char *)b->src[i].addr + p->offset : NULL;
	}
	if (p->cold && p->flush.method == PZ_FLUSH_EVICT && !p->flush.evict) {
		ret = pz_region_map(&b->evict, p->flush.evict_len, PZ_PAGE_SHIFT_4KB, PZ_THP_SYSTEM,
				    1, 0);
		if (ret) {
			out->stage = PZ_STAGE_MAP;
			return ret;
		}
	}
	return 0;
}

/*
 * How many of the buffers' bytes are on huge pages, for a run that asked
 * for THP: the kernel may still give 4KB pages (fragmented memory, the
 * THP defrag setting), and a rate measured on them is a 4KB one.
 */
static void huge_share(const struct pz_mem_buffers *b, size_t size, struct pz_run_out *out)
{
	struct pz_span spans[2 * 64], *s = spans;
	struct pz_smaps_pages pg;
	unsigned i, n = 0;

	if (2 * (size_t)b->n > PZ_ARRAY_SIZE(spans)) {
		s = calloc(2 * (size_t)b->n, sizeof(*s));
		if (!s)
			return;
	}
	for (i = 0; i < b->n; i++) {
		s[n].start = (uintptr_t)b->d[i];
		s[n++].end = (uintptr_t)b->d[i] + size;
		if (b->s[i]) {
			s[n].start = (uintptr_t)b->s[i];
			s[n++].end = (uintptr_t)b->s[i] + size;
		}
	}
	if (pz_smaps_scan(s, n, &pg) == 0) {
		out->buffer_bytes = (uint64_t)n * size;
		out->huge_bytes = PZ_MIN(pg.anon_huge, out->buffer_bytes);
	}
	if (s != spans)
		free(s);
}

int pz_bench_mem(const struct pz_run_params *p, const struct pz_clock *clock,
		 struct pz_run_out *out)
{
	struct pz_mem_buffers b;
	struct pz_run_params q = *p;
	int ret;

	start_out(out);
	if (pz_bench_mem_check(p, clock->id)) {
		out->stage = PZ_STAGE_ARGS;
		return -EINVAL;
	}
	memset(&b, 0, sizeof(b));
	ret = map_buffers(p, &b, out);
	if (!ret) {
		if (b.evict.addr)
			q.flush.evict = b.evict.addr;
		/* Each thread prefaults its own part, pinned: see prefault(). */
		ret = run_team(&q, clock, b.d, q.kernel->kind == PZ_KIND_COPY ? b.s : NULL, out, 1);
		/*
		 * A stopped run keeps its loops, and what its pages were. Without
		 * a readable smaps the share stays unknown (0 of 0), the run valid.
		 */
		if ((!ret || ret == -EINTR) && p->thp == PZ_THP_ON)
			huge_share(&b, p->size, out);
	}
	unmap_buffers(&b);
	return ret;
}
