/*
 * policy.c - the orders in which a folio's pages are cleared.
 *
 * Each strategy restates, in user space, how one generation of the kernel
 * (or one proposal) walks a folio in folio_zero_user(). The walks emit
 * steps and never touch memory themselves: pz_clear_step() does that, so
 * the same walk can be timed or recorded.
 */
#include <errno.h>

#include "policy.h"

static const char *const strategy_names[PZ_STRATEGY_COUNT] = {
	[PZ_STRATEGY_PAGE_AT_A_TIME] = "page-at-a-time",
	[PZ_STRATEGY_SEQUENTIAL] = "sequential",
	[PZ_STRATEGY_NEIGHBOURHOOD_LAST] = "neighbourhood-last",
	[PZ_STRATEGY_NOCACHE_EXCEPT_TARGET] = "nocache-except-target",
	[PZ_STRATEGY_FRONT_TO_BACK] = "front-to-back",
};

const struct pz_names pz_strategy_names = { strategy_names, PZ_STRATEGY_COUNT };

int pz_strategy_uses_nontemporal(enum pz_strategy s)
{
	return s == PZ_STRATEGY_NOCACHE_EXCEPT_TARGET;
}

void pz_neighbourhood(size_t nr_pages, size_t fault, size_t *first, size_t *count)
{
	size_t lo = fault > PZ_NEIGHBOURHOOD_RADIUS ? fault - PZ_NEIGHBOURHOOD_RADIUS : 0;
	size_t hi = PZ_MIN(fault + PZ_NEIGHBOURHOOD_RADIUS, nr_pages - 1);

	*first = lo;
	*count = hi - lo + 1;
}

static void emit(pz_step_fn fn, void *ctx, size_t first, size_t count, int nontemporal)
{
	struct pz_step s = { .first = first, .count = count, .nontemporal = nontemporal };

	fn(ctx, &s);
}

/*
 * [first, first + count) in clears of at most @batch pages, front to back:
 * clear_contig_highpages() under a cooperative preemption model, with a
 * resched point after each batch (the caller's callback decides whether
 * anything happens there).
 */
static void emit_batched(pz_step_fn fn, void *ctx, size_t first, size_t count, size_t batch)
{
	size_t end = first + count;

	while (first < end) {
		size_t n = PZ_MIN(batch, end - first);

		emit(fn, ctx, first, n, 0);
		first += n;
	}
}

/*
 * process_huge_page(): the pre-7.0 folio_zero_user(). The fault at @fault
 * has a mirror image around which the folio is symmetric; the pages beyond
 * that window go first (from the far end when the fault is in the first
 * half, from page 0 when it is in the second), then the window is cleared
 * from both edges inwards, left, right, left, right, so that the last pages
 * cleared, and hottest in cache, are the fault's neighbours and finally the
 * faulting page itself.
 */
static void order_page_at_a_time(size_t nr, size_t fault, pz_step_fn fn, void *ctx)
{
	size_t base, half, i;

	if (2 * fault <= nr) {
		base = 0;
		half = fault;
		for (i = nr; i-- > 2 * fault;)
			emit(fn, ctx, i, 1, 0);
	} else {
		base = 2 * fault - nr;
		half = nr - fault;
		for (i = 0; i < base; i++)
			emit(fn, ctx, i, 1, 0);
	}
	/* The window [base, base + 2*half) ends at base + half == fault. */
	for (i = 0; i < half; i++) {
		emit(fn, ctx, base + i, 1, 0);
		emit(fn, ctx, base + 2 * half - 1 - i, 1, 0);
	}
}

/*
 * The merged folio_zero_user(): three ranges, each cleared as extents so
 * the CPU sees their real length. The right of the neighbourhood goes
 * first (for the common fault at page 0 it is almost the whole folio), then
 * the left, and the neighbourhood itself last so its lines stay in cache
 * for the access that faulted. The neighbourhood (5 pages at most) is one
 * clear whatever the batch: the kernel's batch is never that small, and
 * split, its last piece might not hold the faulting page.
 */
static void order_neighbourhood_last(size_t nr, size_t fault, size_t batch, pz_step_fn fn,
				     void *ctx)
{
	size_t nb_first, nb_count, nb_end;

	pz_neighbourhood(nr, fault, &nb_first, &nb_count);
	nb_end = nb_first + nb_count;
	emit_batched(fn, ctx, nb_end, nr - nb_end, batch);
	emit_batched(fn, ctx, 0, nb_first, batch);
	emit(fn, ctx, nb_first, nb_count, 0);
}

/*
 * The 2012 clear_huge_page() with clear_page_nocache(): page by page, every
 * page but the faulting one with streaming stores, so clearing a huge page
 * does not evict the working set. That patch cleared the target in its
 * place in the loop; here it goes last, as in the other orders, so that
 * what differs between strategies is the stores and not the timing of the
 * target.
 */
static void order_nocache_except_target(size_t nr, size_t fault, pz_step_fn fn, void *ctx)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (i != fault)
			emit(fn, ctx, i, 1, 1);
	emit(fn, ctx, fault, 1, 0);
}

/*
 * clear_gigantic_page(), the pre-7.0 folio_zero_user() for folios larger
 * than MAX_ORDER (1GB on x86-64): a plain loop of clear_user_highpage(), one
 * 4KB page per call from the first to the last, with a cond_resched()
 * between pages. The fault plays no part in the order, so the faulting page
 * is cleared wherever it falls, usually first.
 */
static void order_front_to_back(size_t nr, pz_step_fn fn, void *ctx)
{
	size_t i;

	for (i = 0; i < nr; i++)
		emit(fn, ctx, i, 1, 0);
}

int pz_strategy_order(enum pz_strategy s, size_t nr_pages, size_t fault, size_t batch_pages,
		      pz_step_fn fn, void *ctx)
{
	if (nr_pages == 0 || batch_pages == 0 || fault >= nr_pages)
		return -EINVAL;
	switch (s) {
	case PZ_STRATEGY_PAGE_AT_A_TIME:
		order_page_at_a_time(nr_pages, fault, fn, ctx);
		return 0;
	case PZ_STRATEGY_SEQUENTIAL:
		emit_batched(fn, ctx, 0, nr_pages, batch_pages);
		return 0;
	case PZ_STRATEGY_NEIGHBOURHOOD_LAST:
		order_neighbourhood_last(nr_pages, fault, batch_pages, fn, ctx);
		return 0;
	case PZ_STRATEGY_NOCACHE_EXCEPT_TARGET:
		order_nocache_except_target(nr_pages, fault, fn, ctx);
		return 0;
	case PZ_STRATEGY_FRONT_TO_BACK:
		order_front_to_back(nr_pages, fn, ctx);
		return 0;
	default:
		return -EINVAL;
	}
}

void pz_step_log_add(struct pz_step_log *log, const struct pz_step *s)
{
	if (log->n < log->cap)
		log->steps[log->n] = *s;
	log->n++;
}

void pz_clear_step(void *clearer, const struct pz_step *step)
{
	const struct pz_clearer *c = clearer;
	const struct pz_kernel *k = step->nontemporal ? c->nt_kernel : c->kernel;

	pz_kernel_fill(k, c->base + step->first * PZ_PAGE_SIZE, 0, step->count * PZ_PAGE_SIZE);
	if (c->log)
		pz_step_log_add(c->log, step);
}
