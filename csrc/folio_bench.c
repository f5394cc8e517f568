/*
 * folio_bench.c - timing folio_zero_user() orders: a folio cleared in one
 * strategy's order (policy.c), then the fault neighbourhood touched right
 * after and once evicted (see policy_bench.h). It runs on a team of one
 * thread (policy_bench.c), as a plain batch run does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "policy_bench.h"
#include "region.h"

/*
 * Read by the touch so the compiler cannot prove it is zero: ANDing each
 * loaded value with it makes the next address depend on the load, in the
 * hardware, without ever changing the address.
 */
static volatile uint64_t pz_zero;
/* Results of reads that exist only for their effect on the caches. */
static volatile uint64_t pz_sink;

static const char *const cold_names[PZ_COLD_COUNT] = {
	[PZ_COLD_CLFLUSH] = "clflush",
	[PZ_COLD_EVICT] = "evict",
};

const struct pz_names pz_cold_names = { cold_names, PZ_COLD_COUNT };

int pz_cold_available(enum pz_cold c)
{
#if defined(__x86_64__)
	return (unsigned)c < PZ_COLD_COUNT;
#else
	/*
	 * The clflush baseline is x86's instruction. arm64 user space can flush by
	 * address too (DC CIVAC, cache.c, which cold mode's flush of the folio
	 * uses), but this baseline has no such method yet: elsewhere, evict.
	 */
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
__attribute__((noinline)) static uint64_t touch_lines(char *p, size_t len)
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
__attribute__((noinline)) static uint64_t read_lines(const char *p, size_t len)
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

struct folio_ctx {
	const struct pz_folio_params *p;
	char *folio, *nb;
	size_t bytes, nb_len;
	const char *scrub;
	size_t scrub_len;
	struct pz_folio_sample *out;
	uint64_t *counters;
};

/* The folio is dirtied by every loop: fault it in first, where a failure is an error, not SIGBUS. */
static int folio_prepare(void *ctx, unsigned t, struct pz_meter *m)
{
	struct folio_ctx *fc = ctx;

	(void)t;
	(void)m;
	return pz_region_prefault(fc->folio, fc->bytes, PZ_PAGE_SHIFT_4KB);
}

static int folio_loop(void *ctx, unsigned t, unsigned i, struct pz_meter *m)
{
	struct folio_ctx *fc = ctx;
	const struct pz_folio_params *p = fc->p;
	const struct pz_policy_cond *c = &p->cond;
	struct pz_clearer clr = { .base = fc->folio,
				  .kernel = p->kernel,
				  .nt_kernel = p->nt_kernel };
	uint64_t acc[PZ_CTR_COUNT] = { 0 }, t0, t1, t1c, t2, t3, t4;
	unsigned j;
	int ret;

	/*
	 * A folio fresh from the page allocator holds old data and is rarely
	 * in cache: dirty it, then push it out by reading more than the LLC
	 * holds (the 2012 reviewers of clear_page_nocache(): "make sure the
	 * data is cache cold").
	 */
	memset(fc->folio, 0xa5, fc->bytes);
	pz_sink += read_lines(fc->scrub, fc->scrub_len);
	/* Cache cold: reading the scrub evicts most lines, flushing by address all of them. */
	if (c->cold) {
		pz_flush(&c->flush, fc->folio, fc->bytes);
		if (c->hook)
			c->hook(c->hook_ctx, t, fc->folio, fc->bytes);
	}
	ret = pz_meter_start(m);
	if (ret)
		return ret;
	t0 = pz_clock_read(&m->clock);
	pz_strategy_order(p->strategy, p->nr_pages, p->fault, p->batch_pages, pz_clear_step, &clr);
	/* __folio_mark_uptodate()'s smp_wmb(): once per folio, after the whole walk (kernels.h). */
	pz_publish_clear();
	t1 = t1c = pz_clock_read(&m->clock);
	if (c->counters) {
		ret = pz_meter_stop(m, acc);
		if (ret)
			return ret;
		for (j = 0; j < PZ_CTR_COUNT; j++)
			fc->counters[(size_t)i * PZ_CTR_COUNT + j] = acc[j];
		/*
		 * The touch starts after the counter read, as the cold touch
		 * starts after the eviction: the read (a read() syscall) is no
		 * part of finding the lines. The lines the syscall itself
		 * evicts are few (its own stack and data) and the same for
		 * every strategy.
		 */
		t1 = pz_clock_read(&m->clock);
	}
	pz_sink += touch_lines(fc->nb, fc->nb_len);
	t2 = pz_clock_read(&m->clock);

	if (p->baseline == PZ_COLD_CLFLUSH)
		flush_lines(fc->nb, fc->nb_len);
	else
		pz_sink += read_lines(fc->scrub, fc->scrub_len);
	t3 = pz_clock_read(&m->clock);
	pz_sink += touch_lines(fc->nb, fc->nb_len);
	t4 = pz_clock_read(&m->clock);

	fc->out[i].clear = t1c - t0;
	fc->out[i].touch = t2 - t1;
	fc->out[i].cold = t4 - t3;
	return 0;
}

int pz_bench_folio(const struct pz_folio_params *p, char *folio, const char *scrub,
		   size_t scrub_len, const struct pz_clock *clock, struct pz_folio_sample *out,
		   uint64_t *counters)
{
	struct folio_ctx fc = { .p = p,
				.folio = folio,
				.bytes = p->nr_pages * PZ_PAGE_SIZE,
				.scrub = scrub,
				.scrub_len = scrub_len,
				.out = out,
				.counters = counters };
	struct pz_policy_team team = { .threads = 1,
				       .loops = p->loops,
				       .clock = clock,
				       .cond = &p->cond,
				       .prepare = folio_prepare,
				       .loop = folio_loop,
				       .ctx = &fc };
	size_t first, count;

	if (p->cond.loops_done)
		*p->cond.loops_done = 0;
	if (!p->nr_pages || p->fault >= p->nr_pages || !p->batch_pages || !p->loops ||
	    (unsigned)p->strategy >= PZ_STRATEGY_COUNT || !p->kernel ||
	    (unsigned)p->baseline >= PZ_COLD_COUNT || !pz_cold_available(p->baseline) ||
	    (pz_strategy_uses_nontemporal(p->strategy) && !p->nt_kernel) ||
	    (p->cond.counters && !counters))
		return -EINVAL;
	pz_neighbourhood(p->nr_pages, p->fault, &first, &count);
	fc.nb = folio + first * PZ_PAGE_SIZE;
	fc.nb_len = count * PZ_PAGE_SIZE;
	return pz_policy_team_run(&team);
}
