/*
 * test_policy.c - C-level tests of the clearing orders and their timed loops.
 *
 * No Python: built with the C core alone by TEST=policy tests/c/build.sh, so the
 * walks (policy.c) and the loops around them (policy_bench.c) also run under
 * AddressSanitizer/UBSan. Memory sits between PROT_NONE guard pages, so a
 * clear outside the folio faults instead of passing.
 *
 * Checks: every strategy hands every page over exactly once, whatever the
 * folio size, fault and batch; the fault is in the last step where the
 * strategy promises it; the clearing callback leaves exactly the folio zero;
 * the timed loops record one duration per batch and steps that tile the
 * region; the duration summaries pick the right ranks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pz.h"
#include "clock.h"
#include "kernels.h"
#include "policy.h"
#include "policy_bench.h"
#include "region.h"
#include "stop.h"
#include "switches.h"

static unsigned long n_passed, n_failed;

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		n_passed++;
		return;
	}
	if (n_failed++ < 20) {
		va_start(ap, fmt);
		fputs("FAIL: ", stdout);
		vprintf(fmt, ap);
		putchar('\n');
		va_end(ap);
	}
}

static void record(void *log, const struct pz_step *s)
{
	pz_step_log_add(log, s);
}

/* One walk, recorded and checked. */
static void check_walk(enum pz_strategy s, size_t nr, size_t fault, size_t batch)
{
	struct pz_step steps[600];
	struct pz_step_log log = { .steps = steps, .cap = PZ_ARRAY_SIZE(steps) };
	unsigned char seen[600] = { 0 };
	const char *name = pz_strategy_name(s);
	size_t i, p, nb_first, nb_count;
	int ok = 1;

	check(pz_strategy_order(s, nr, fault, batch, record, &log) == 0,
	      "%s nr %zu fault %zu batch %zu: refused", name, nr, fault, batch);
	check(log.n <= nr && log.n >= 1, "%s nr %zu: %zu steps", name, nr, log.n);
	for (i = 0; i < log.n && i < log.cap; i++) {
		const struct pz_step *st = &steps[i];

		if (st->count == 0 || st->first + st->count > nr) {
			ok = 0;
			break;
		}
		for (p = st->first; p < st->first + st->count; p++)
			seen[p]++;
	}
	for (p = 0; p < nr; p++)
		ok = ok && seen[p] == 1;
	check(ok, "%s nr %zu fault %zu batch %zu: not every page exactly once", name, nr, fault,
	      batch);

	if (log.n == 0)
		return;
	{
		const struct pz_step *last = &steps[log.n - 1];

		pz_neighbourhood(nr, fault, &nb_first, &nb_count);
		switch (s) {
		case PZ_STRATEGY_PAGE_AT_A_TIME:
			check(last->first == fault && last->count == 1 && !last->nontemporal,
			      "page-at-a-time nr %zu fault %zu: the fault is not last", nr, fault);
			break;
		case PZ_STRATEGY_NOCACHE_EXCEPT_TARGET:
			check(last->first == fault && last->count == 1 && !last->nontemporal,
			      "nocache nr %zu fault %zu: the target is not last, cached", nr,
			      fault);
			for (i = 0; i + 1 < log.n; i++)
				ok = ok && steps[i].nontemporal;
			check(ok, "nocache nr %zu fault %zu: a cached step before the target", nr,
			      fault);
			break;
		case PZ_STRATEGY_NEIGHBOURHOOD_LAST:
			check(last->first == nb_first && last->count == nb_count,
			      "neighbourhood-last nr %zu fault %zu: last step %zu+%zu, want "
			      "%zu+%zu",
			      nr, fault, last->first, last->count, nb_first, nb_count);
			for (i = 0; i + 1 < log.n; i++)
				ok = ok && steps[i].count <= batch;
			check(ok, "neighbourhood-last nr %zu batch %zu: a step over the batch", nr,
			      batch);
			break;
		case PZ_STRATEGY_SEQUENTIAL:
			for (i = 0; i < log.n; i++)
				ok = ok && steps[i].first == i * batch;
			check(ok, "sequential nr %zu batch %zu: not front to back", nr, batch);
			break;
		case PZ_STRATEGY_FRONT_TO_BACK:
			/* clear_gigantic_page(): page i is step i, one page each, whatever the fault */
			for (i = 0; i < log.n; i++)
				ok = ok && steps[i].first == i && steps[i].count == 1 &&
				     !steps[i].nontemporal;
			check(ok && log.n == nr, "front-to-back nr %zu fault %zu: not page by page",
			      nr, fault);
			break;
		default:
			check(0, "untested strategy %d", (int)s);
		}
	}
}

static void test_walks(void)
{
	static const size_t sizes[] = { 1, 2, 3, 5, 8, 13, 64, 512 };
	static const size_t batches[] = { 1, 2, 3, 7, 512 };
	size_t a, b, fault;
	int s;

	for (s = 0; s < PZ_STRATEGY_COUNT; s++)
		for (a = 0; a < PZ_ARRAY_SIZE(sizes); a++)
			for (fault = 0; fault < sizes[a]; fault++)
				for (b = 0; b < PZ_ARRAY_SIZE(batches); b++)
					check_walk((enum pz_strategy)s, sizes[a], fault,
						   batches[b]);
}

static void test_bad_walks(void)
{
	struct pz_step steps[4];
	struct pz_step_log log = { .steps = steps, .cap = 4 };

	check(pz_strategy_order(PZ_STRATEGY_SEQUENTIAL, 0, 0, 1, record, &log) == -EINVAL,
	      "0 pages accepted");
	check(pz_strategy_order(PZ_STRATEGY_SEQUENTIAL, 4, 4, 1, record, &log) == -EINVAL,
	      "fault past the end accepted");
	check(pz_strategy_order(PZ_STRATEGY_SEQUENTIAL, 4, 0, 0, record, &log) == -EINVAL,
	      "batch 0 accepted");
	check(pz_strategy_order(PZ_STRATEGY_COUNT, 4, 0, 1, record, &log) == -EINVAL,
	      "unknown strategy accepted");
	check(log.n == 0, "a refused walk emitted steps");
	check(pz_strategy_lookup("neighbourhood-last") == PZ_STRATEGY_NEIGHBOURHOOD_LAST &&
		      pz_strategy_lookup("front-to-back") == PZ_STRATEGY_FRONT_TO_BACK &&
		      pz_strategy_lookup("nope") == -1,
	      "strategy lookup");
}

/* A guarded 4KB-page region of @nr pages filled with 0xa5. */
static int map_pages(struct pz_region *r, size_t nr)
{
	if (pz_region_map(r, nr * PZ_PAGE_SIZE, PZ_PAGE_SHIFT_4KB, PZ_THP_OFF, 1, 1))
		return -1;
	memset(r->addr, 0xa5, r->size);
	return 0;
}

static int all_zero(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static const struct pz_kernel *first_nt_kernel(void)
{
	size_t i;
	char reason[128];

	for (i = 0; i < pz_kernel_count(); i++) {
		const struct pz_kernel *k = pz_kernel_at(i);

		if (k->kind == PZ_KIND_FILL && (k->flags & PZ_NONTEMPORAL) &&
		    !(k->flags & PZ_ZERO_ONLY) && pz_kernel_available(k, reason, sizeof(reason)))
			return k;
	}
	return NULL;
}

static void test_clearing(void)
{
	const struct pz_kernel *k = pz_kernel_find(PZ_KIND_FILL, "generic");
	const struct pz_kernel *nt = first_nt_kernel();
	struct pz_region r;
	int s;

	for (s = 0; s < PZ_STRATEGY_COUNT; s++) {
		struct pz_clearer c = { .kernel = k, .nt_kernel = nt ? nt : k };

		if (map_pages(&r, 33)) {
			check(0, "cannot map");
			return;
		}
		c.base = r.addr;
		pz_strategy_order((enum pz_strategy)s, 33, 17, 4, pz_clear_step, &c);
		check(all_zero(r.addr, r.size), "%s left non-zero bytes",
		      pz_strategy_name((enum pz_strategy)s));
		pz_region_unmap(&r);
	}
}

static void test_batches(void)
{
	const struct pz_kernel *k = pz_kernel_find(PZ_KIND_FILL, "default");
	unsigned i, done = 99;
	struct pz_batch_params p = { .kernel = k,
				     .nr_pages = 10,
				     .batch_pages = 4,
				     .loops = 3,
				     .yield = 1,
				     .threads = 1,
				     .cond.loops_done = &done };
	uint64_t pass[3], worst[3], ticks[9];
	struct pz_step steps[9];
	struct pz_step_log log = { .steps = steps, .cap = 9 };
	struct pz_batch_out out = {
		.pass_ticks = pass, .pass_worst = worst, .batch_ticks = ticks, .log = &log
	};
	struct pz_clock clock;
	struct pz_region r;
	int ok = 1;

	check(pz_batch_count(&p) == 3, "10 pages in 4s: %zu batches", pz_batch_count(&p));
	if (map_pages(&r, 10) || pz_clock_open(&clock, PZ_CLOCK_NS)) {
		check(0, "cannot map or open the clock");
		return;
	}
	check(pz_bench_batches(&p, (char *[]){ r.addr }, &clock, &out) == 0 && done == 3,
	      "batches failed");
	check(log.n == 9, "%zu steps recorded, want 9", log.n);
	for (i = 0; i < 9; i++)
		ok = ok && steps[i].first == (i % 3) * 4 && steps[i].count == (i % 3 == 2 ? 2 : 4);
	check(ok, "batch steps do not tile the region pass after pass");
	for (i = 0; i < 3; i++)
		check(worst[i] <= pass[i], "a batch longer than its pass");
	check(all_zero(r.addr, r.size), "batches left non-zero bytes");
	/* A stop requested before the first pass: no pass at all, and none counted. */
	out.log = NULL;
	pz_stop_request(SIGHUP);
	check(pz_bench_batches(&p, (char *[]){ r.addr }, &clock, &out) == -EINTR && done == 0,
	      "a stop before pass 0: %u passes", done);
	pz_stop_clear();
	p.batch_pages = 11;
	check(pz_bench_batches(&p, (char *[]){ r.addr }, &clock, &out) == -EINVAL,
	      "a batch larger than the region accepted");
	pz_clock_close(&clock);
	pz_region_unmap(&r);
}

/*
 * Hugetlb memory the kernel cannot back (a MAP_NORESERVE mapping larger
 * than the free pool: what a region bound to a node short of pages meets)
 * fails the run with -ENOMEM at the prefault instead of killing it with
 * SIGBUS.
 */
static void test_batches_hugetlb_short(void)
{
	const size_t len = 64u << 21;
	struct pz_batch_params p = { .kernel = pz_kernel_find(PZ_KIND_FILL, "default"),
				     .nr_pages = len / PZ_PAGE_SIZE,
				     .batch_pages = 512,
				     .loops = 1,
				     .threads = 1 };
	uint64_t pass[1], worst[1], *ticks = calloc(pz_batch_count(&p), sizeof(*ticks));
	struct pz_batch_out out = { .pass_ticks = pass, .pass_worst = worst, .batch_ticks = ticks };
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_NORESERVE | (21 << 26), -1,
		       0);
	FILE *f = fopen("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "re");
	unsigned long free_pages = 0;
	uint64_t two[4];
	struct pz_region ok;
	struct pz_clock clock;

	if (f) {
		if (fscanf(f, "%lu", &free_pages) != 1)
			free_pages = 0;
		fclose(f);
	}
	if (m == MAP_FAILED || free_pages >= 64) {
		printf("skip: hugetlb shortage (%s)\n",
		       m == MAP_FAILED ? "no 2MB hugetlb mappings here" : "64 free 2MB pages");
	} else {
		pz_clock_open(&clock, PZ_CLOCK_NS);
		check(pz_bench_batches(&p, (char *[]){ m }, &clock, &out) == -ENOMEM,
		      "batches on hugetlb memory the pool cannot back");
		/*
		 * Two threads, the second on that memory: its prefault fails
		 * before the start barrier, so the first cannot be left waiting
		 * at the second pass's barrier (SIGALRM ends a hang).
		 */
		if (!map_pages(&ok, p.nr_pages)) {
			struct pz_batch_out outs[2] = { out, out };

			p.threads = 2;
			p.loops = 2;
			outs[0].batch_ticks = outs[1].batch_ticks = NULL;
			outs[0].batch_ticks = calloc(2 * pz_batch_count(&p), sizeof(uint64_t));
			outs[1].batch_ticks = calloc(2 * pz_batch_count(&p), sizeof(uint64_t));
			outs[0].pass_ticks = outs[1].pass_ticks = two;
			outs[0].pass_worst = outs[1].pass_worst = two + 2;
			alarm(60);
			check(outs[0].batch_ticks && outs[1].batch_ticks &&
				      pz_bench_batches(&p, (char *[]){ ok.addr, m }, &clock,
						       outs) == -ENOMEM,
			      "a team with one thread on hugetlb memory the pool cannot back");
			alarm(0);
			free(outs[0].batch_ticks);
			free(outs[1].batch_ticks);
			pz_region_unmap(&ok);
		}
		pz_clock_close(&clock);
	}
	if (m != MAP_FAILED)
		munmap(m, len);
	free(ticks);
}

static void test_folio(void)
{
	struct pz_folio_params p = { .strategy = PZ_STRATEGY_NEIGHBOURHOOD_LAST,
				     .nr_pages = 16,
				     .fault = 15,
				     .batch_pages = 8,
				     .loops = 2 };
	struct pz_folio_sample out[2];
	uint64_t counts[2 * PZ_CTR_COUNT];
	struct pz_region folio, scrub;
	struct pz_clock clock;
	int cold, s;

	p.kernel = pz_kernel_find(PZ_KIND_FILL, "generic");
	p.nt_kernel = first_nt_kernel();
	if (map_pages(&folio, 16) || map_pages(&scrub, 64) || pz_clock_open(&clock, PZ_CLOCK_NS)) {
		check(0, "cannot map or open the clock");
		return;
	}
	check(pz_folio_touch_lines(&p) == 3 * PZ_PAGE_SIZE / PZ_LINE_SIZE, "touch lines");
	for (cold = 0; cold < PZ_COLD_COUNT; cold++) {
		if (!pz_cold_available((enum pz_cold)cold))
			continue;
		for (s = 0; s < PZ_STRATEGY_COUNT; s++) {
			if (pz_strategy_uses_nontemporal((enum pz_strategy)s) && !p.nt_kernel)
				continue;
			p.strategy = (enum pz_strategy)s;
			p.baseline = (enum pz_cold)cold;
			check(pz_bench_folio(&p, folio.addr, scrub.addr, scrub.size, &clock, out,
					     counts) == 0,
			      "folio %s/%s failed", pz_strategy_name(p.strategy),
			      pz_cold_name(p.baseline));
			check(all_zero(folio.addr, folio.size), "folio %s left non-zero bytes",
			      pz_strategy_name(p.strategy));
		}
	}
	p.fault = 16;
	check(pz_bench_folio(&p, folio.addr, scrub.addr, scrub.size, &clock, out, counts) ==
		      -EINVAL,
	      "a fault outside the folio accepted");
	pz_clock_close(&clock);
	p.fault = 15;

	/*
	 * Counters are read around the clear and outside both touches: with
	 * fake reads that each spend 20 ms of CPU and a clock of this thread's
	 * CPU time, a touch that contained a read would last 20 ms or more; a
	 * touch of three pages' lines lasts microseconds.
	 */
	{
		unsigned failed = PZ_CTR_COUNT, done = 0;
		const uint64_t cost = 20 * 1000 * 1000;

		setenv("PAGEZERO_FAKE_COUNTERS", "1", 1);
		setenv("PAGEZERO_FAKE_COUNTER_COST_US", "20000", 1);
		setenv("PAGEZERO_FAKE_CYCLES", "1", 1);
		pz_switches_load();
		check(pz_clock_open(&clock, PZ_CLOCK_CYCLES) == 0, "fake cycles");
		p.strategy = PZ_STRATEGY_SEQUENTIAL;
		p.baseline = pz_cold_available(PZ_COLD_CLFLUSH) ? PZ_COLD_CLFLUSH : PZ_COLD_EVICT;
		p.cond.counters = 1;
		p.cond.failed_counter = &failed;
		p.cond.loops_done = &done;
		check(pz_bench_folio(&p, folio.addr, scrub.addr, scrub.size, &clock, out, counts) ==
				      0 &&
			      done == 2,
		      "folio with counters");
		for (s = 0; s < 2; s++)
			check(out[s].touch < cost && out[s].clear < cost,
			      "loop %d: touch %llu, clear %llu: a counter read timed", s,
			      (unsigned long long)out[s].touch, (unsigned long long)out[s].clear);
		check(counts[0] == PZ_FAKE_COUNTER_STEP, "one step counted around a clear");
		/* A failed read: an error, not a wrapped count. */
		unsetenv("PAGEZERO_FAKE_COUNTER_COST_US");
		setenv("PAGEZERO_FAIL_COUNTER_READ", "4", 1);
		pz_switches_load();
		check(pz_bench_folio(&p, folio.addr, scrub.addr, scrub.size, &clock, out, counts) ==
				      -EIO &&
			      done == 0 && failed == 0,
		      "folio: the 4th counter read failed, %u loops", done);
		/* A stop between loops. */
		unsetenv("PAGEZERO_FAIL_COUNTER_READ");
		pz_switches_load();
		pz_stop_request(SIGTERM);
		check(pz_bench_folio(&p, folio.addr, scrub.addr, scrub.size, &clock, out, counts) ==
				      -EINTR &&
			      done == 0,
		      "folio: a stop before the first loop");
		pz_stop_clear();
		pz_clock_close(&clock);
		unsetenv("PAGEZERO_FAKE_COUNTERS");
		unsetenv("PAGEZERO_FAKE_CYCLES");
		pz_switches_load();
	}
	pz_region_unmap(&folio);
	pz_region_unmap(&scrub);
}

/* The cold flushes of a team run, one list per thread (each thread writes only its own). */
struct team_flushes {
	char *base[2];
	size_t off[2][16], len[2][16];
	unsigned n[2];
	int outside;
	unsigned stop_at; /* thread 0's flush that asks for a stop, 0: none */
};

static void note_flush(void *ctx, unsigned t, const void *p, size_t len)
{
	struct team_flushes *f = ctx;
	const char *c = p;

	if (t > 1 || f->n[t] >= 16 || c < f->base[t]) {
		f->outside = 1;
		return;
	}
	f->off[t][f->n[t]] = (size_t)(c - f->base[t]);
	f->len[t][f->n[t]] = len;
	f->n[t]++;
	/* Work the counters must not see: they count each batch's clear alone. */
	pz_counters_fake_add(1000000);
	if (f->stop_at && f->n[t] == f->stop_at && t == 0)
		pz_stop_request(SIGINT);
}

static void test_batch_team(void)
{
	const struct pz_kernel *k = pz_kernel_find(PZ_KIND_FILL, "generic");
	struct pz_batch_params p = { .kernel = k,
				     .nr_pages = 10,
				     .batch_pages = 4,
				     .loops = 2,
				     .threads = 2,
				     .cond.cold = 1 };
	uint64_t m[2][4 * 2 + 6], ctr[2][2 * PZ_CTR_COUNT];
	struct pz_batch_out out[2];
	struct team_flushes fl = { .outside = 0 };
	struct pz_region r[2];
	struct pz_clock clock;
	unsigned t, i, failed = PZ_CTR_COUNT;
	int ok = 1;

	p.cond.flush.method = pz_flush_best();
	p.cond.failed_counter = &failed;
	if (p.cond.flush.method == PZ_FLUSH_EVICT) {
		check(1, "no flush instruction: the team's cold path is covered by Python's evict");
		return;
	}
	if (map_pages(&r[0], 10) || map_pages(&r[1], 10) || pz_clock_open(&clock, PZ_CLOCK_NS)) {
		check(0, "cannot map or open the clock");
		return;
	}
	p.cond.hook = note_flush;
	p.cond.hook_ctx = &fl;
	p.cond.counters = 1;
	setenv("PAGEZERO_FAKE_COUNTERS", "1", 1);
	pz_switches_load();
	for (t = 0; t < 2; t++) {
		fl.base[t] = r[t].addr;
		memset(r[t].addr, 0xff, r[t].size);
		out[t] = (struct pz_batch_out){ .pass_ticks = m[t],
						.pass_worst = m[t] + 2,
						.start = m[t] + 4,
						.end = m[t] + 6,
						.batch_ticks = m[t] + 8,
						.counters = ctr[t] };
	}
	{
		char *bases[2] = { r[0].addr, r[1].addr };

		check(pz_bench_batches(&p, bases, &clock, out) == 0, "team of 2 failed");
	}
	unsetenv("PAGEZERO_FAKE_COUNTERS");
	pz_switches_load();
	check(!fl.outside, "a thread flushed outside its own region");
	for (t = 0; t < 2; t++) {
		check(fl.n[t] == 6, "thread %u: %u flushes, want 6 (3 batches x 2 passes)", t,
		      fl.n[t]);
		for (i = 0; i < fl.n[t] && i < 6; i++)
			ok = ok && fl.off[t][i] == (i % 3) * 4 * PZ_PAGE_SIZE &&
			     fl.len[t][i] == (i % 3 == 2 ? 2 : 4) * PZ_PAGE_SIZE;
		check(all_zero(r[t].addr, r[t].size), "thread %u left non-zero bytes", t);
		/* 3 batches a pass, each counted alone: 3 steps, none of the flushes' work. */
		for (i = 0; i < 2 * PZ_CTR_COUNT; i++)
			ok = ok && ctr[t][i] == 3 * (i % PZ_CTR_COUNT + 1) * PZ_FAKE_COUNTER_STEP;
	}
	check(ok, "cold flushes do not tile each region, or fake counters are off");

	/* A stop asked for at thread 0's 5th flush (pass 1, batch 2): pass 0 alone is kept. */
	{
		unsigned done = 99;

		memset(&fl, 0, sizeof(fl));
		fl.base[0] = r[0].addr;
		fl.base[1] = r[1].addr;
		fl.stop_at = 5;
		p.cond.loops_done = &done;
		setenv("PAGEZERO_FAKE_COUNTERS", "1", 1);
		pz_switches_load();
		check(pz_bench_batches(&p, (char *[]){ r[0].addr, r[1].addr }, &clock, out) ==
				      -EINTR &&
			      done == 1,
		      "a stop in pass 1: want -EINTR and 1 pass, got %u", done);
		check(pz_stop_requested() == SIGINT, "the stop request is kept");
		pz_stop_clear();
		/* A failed counter read fails the run, with the leader named. */
		setenv("PAGEZERO_FAIL_COUNTER_READ", "2", 1);
		pz_switches_load();
		failed = PZ_CTR_COUNT;
		check(pz_bench_batches(&p, (char *[]){ r[0].addr, r[1].addr }, &clock, out) ==
				      -EIO &&
			      failed == 0 && done == 0,
		      "a failed counter read: %u passes, counter %u", done, failed);
		unsetenv("PAGEZERO_FAIL_COUNTER_READ");
		unsetenv("PAGEZERO_FAKE_COUNTERS");
		pz_switches_load();
		p.cond.loops_done = NULL;
	}
	p.batch_pages = 11;
	check(pz_bench_batches(&p, (char *[]){ r[0].addr, r[1].addr }, &clock, out) == -EINVAL,
	      "a batch larger than the region accepted");
	pz_clock_close(&clock);
	pz_region_unmap(&r[0]);
	pz_region_unmap(&r[1]);
}

/*
 * The team's threads each read their own cycles clock: the fake one reads
 * the opener's CPU time, so a worker reading the caller's (waiting in
 * pthread_join) would find its 2MB passes taking ~0.
 */
static void test_batch_team_cycles(void)
{
	const size_t pages = 512;
	struct pz_batch_params p = { .kernel = pz_kernel_find(PZ_KIND_FILL, "generic"),
				     .nr_pages = pages,
				     .batch_pages = 64,
				     .loops = 2,
				     .threads = 2 };
	uint64_t m[2][4 * 2], ticks[2][2 * 8];
	struct pz_batch_out out[2];
	struct pz_region r[2];
	struct pz_clock clock;
	unsigned t, i;

	setenv("PAGEZERO_FAKE_CYCLES", "1", 1);
	pz_switches_load();
	if (map_pages(&r[0], pages) || map_pages(&r[1], pages) ||
	    pz_clock_open(&clock, PZ_CLOCK_CYCLES)) {
		check(0, "cannot map or open the fake cycles clock");
		return;
	}
	for (t = 0; t < 2; t++)
		out[t] = (struct pz_batch_out){ .pass_ticks = m[t],
						.pass_worst = m[t] + 2,
						.start = m[t] + 4,
						.end = m[t] + 6,
						.batch_ticks = ticks[t] };
	check(pz_bench_batches(&p, (char *[]){ r[0].addr, r[1].addr }, &clock, out) == 0,
	      "team with the cycles clock");
	for (t = 0; t < 2; t++)
		for (i = 0; i < 2; i++)
			check(m[t][i] >= 1000, "thread %u pass %u: %llu cycles for 2MB", t, i,
			      (unsigned long long)m[t][i]);
	pz_clock_close(&clock);
	unsetenv("PAGEZERO_FAKE_CYCLES");
	pz_switches_load();
	pz_region_unmap(&r[0]);
	pz_region_unmap(&r[1]);
}

static void test_summaries(void)
{
	uint64_t t[200], scratch[3];
	/* Three passes of four batches; position 2 is slow in two passes of three. */
	static const uint64_t passes[12] = { 10, 10, 50, 10, 10, 900, 40, 10, 10, 10, 10, 10 };
	struct pz_tick_summary s;
	size_t i;

	for (i = 0; i < 200; i++)
		t[i] = 200 - i; /* 1..200, reversed */
	pz_ticks_summarize(t, 200, &s);
	check(s.max == 200 && s.p99 == 198 && s.median == 100,
	      "summary of 1..200: max %llu p99 %llu median %llu", (unsigned long long)s.max,
	      (unsigned long long)s.p99, (unsigned long long)s.median);
	t[0] = 7;
	pz_ticks_summarize(t, 1, &s);
	check(s.max == 7 && s.p99 == 7 && s.median == 7, "summary of one value");
	check(pz_batch_typical_worst(passes, 3, 4, scratch) == 40,
	      "typical worst: the one-off 900 must not count, the repeated 40/50 must");
}

int main(void)
{
	test_walks();
	test_bad_walks();
	test_clearing();
	test_batches();
	test_batches_hugetlb_short();
	test_batch_team();
	test_batch_team_cycles();
	test_folio();
	test_summaries();
	printf("%lu passed, %lu failed\n", n_passed, n_failed);
	return n_failed ? 1 : 0;
}
