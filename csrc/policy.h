/*
 * policy.h - clearing policies: in which order, in which extents and with
 * which stores the pages of a folio (or any run of pages) are cleared.
 *
 * This is the order logic only: no clock, no timing. A strategy walks the
 * pages and hands every clear it decides on, as a step (first page, page
 * count, temporal or not), to a callback. The timed loops (policy_bench.c)
 * pass a callback that clears; the tests pass one that records. Both run the
 * same walk, so what the tests check is what the benchmarks time.
 *
 * Pages are PZ_PAGE_SIZE (4KB) units whatever backs the memory: the unit
 * clear_page()/clear_pages() work in on x86-64 and on arm64 with 4KB pages.
 * A kernel with 16KB or 64KB base pages clears those: the Python layer
 * refuses the policy runs there (measure/policy/orders.py check_base_page)
 * rather than walk a unit that kernel does not use.
 */
#ifndef PZ_POLICY_H
#define PZ_POLICY_H

#include "pz.h"
#include "names.h"
#include "kernels.h"

#define PZ_PAGE_SIZE ((size_t)1 << PZ_PAGE_SHIFT_4KB)

/*
 * Pages cleared last on either side of the fault by neighbourhood-last: the
 * merged folio_zero_user()'s width, fault index +-2 pages.
 */
#define PZ_NEIGHBOURHOOD_RADIUS 2u

enum pz_strategy {
	/* process_huge_page(): one page at a time, converging on the fault, which goes last */
	PZ_STRATEGY_PAGE_AT_A_TIME = 0,
	/* the whole folio front to back with clear_pages() in batches */
	PZ_STRATEGY_SEQUENTIAL,
	/* right of the neighbourhood, then left (in batches), then fault +-2 pages in one clear */
	PZ_STRATEGY_NEIGHBOURHOOD_LAST,
	/* 2012 clear_page_nocache: every other page non-temporal, then the fault page cached */
	PZ_STRATEGY_NOCACHE_EXCEPT_TARGET,
	/*
	 * clear_gigantic_page() (mm/memory.c, before Linux 7.0): folios beyond
	 * MAX_ORDER one clear_page() per 4KB page, front to back, whatever the fault
	 */
	PZ_STRATEGY_FRONT_TO_BACK,
	PZ_STRATEGY_COUNT
};

/* One clear decided by a strategy: pages [first, first + count). */
struct pz_step {
	size_t first;
	size_t count;    /* >= 1 */
	int nontemporal; /* 1: clear with the non-temporal kernel */
};

typedef void (*pz_step_fn)(void *ctx, const struct pz_step *step);

/* The strategies' names, by id (names.h: pz_name, pz_lookup). */
extern const struct pz_names pz_strategy_names;

/* 1 when @s clears some pages with non-temporal stores (needs a second kernel). */
int pz_strategy_uses_nontemporal(enum pz_strategy s);

/*
 * The pages cleared last by neighbourhood-last, and touched by the locality
 * measurement: fault +-PZ_NEIGHBOURHOOD_RADIUS, clamped to the folio.
 */
void pz_neighbourhood(size_t nr_pages, size_t fault, size_t *first, size_t *count);

/*
 * Walk @nr_pages pages in @s's order for a fault at page @fault, in clears
 * of at most @batch_pages pages (strategies that clear extents; the
 * page-at-a-time ones clear single pages), calling @fn for each step.
 * Every page is handed over exactly once. 0, or -EINVAL for @nr_pages or
 * @batch_pages 0, @fault >= @nr_pages, or an unknown strategy (before any
 * call of @fn). Any @nr_pages works; folios are powers of two, which the
 * callers check.
 */
int pz_strategy_order(enum pz_strategy s, size_t nr_pages, size_t fault, size_t batch_pages,
		      pz_step_fn fn, void *ctx);

/* Steps recorded in order; steps beyond @cap are counted in n but dropped. */
struct pz_step_log {
	struct pz_step *steps;
	size_t n;
	size_t cap;
};

void pz_step_log_add(struct pz_step_log *log, const struct pz_step *s);

/*
 * The clearing callback of the production path: clear @step's pages of
 * @base with @kernel, or @nt_kernel for non-temporal steps, writing zeros;
 * record the step in @log when there is one (the tests' view of the same
 * path). The caller checked that both kernels are available and that
 * @nt_kernel is set when the strategy needs it.
 */
struct pz_clearer {
	char *base;
	const struct pz_kernel *kernel;
	const struct pz_kernel *nt_kernel;
	struct pz_step_log *log;
};

void pz_clear_step(void *clearer, const struct pz_step *step);

#endif /* PZ_POLICY_H */
