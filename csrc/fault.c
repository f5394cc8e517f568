/*
 * fault.c - the fault workloads: map, fault every page, time it.
 *
 * The timed part of a loop is what perf bench mem mmap times: the mmap()
 * (with its madvise), and faulting every page in. Everything else (reading
 * what the kernel gave the region from /proc/self/smaps, munmap, starting
 * and joining threads) happens outside it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "fault.h"
#include "stop.h"
#include "team.h"

static const char *const workload_names[PZ_FAULT_COUNT] = {
	[PZ_FAULT_DEMAND] = "demand",
	[PZ_FAULT_POPULATE] = "populate",
	[PZ_FAULT_POPULATE_WRITE] = "populate-write",
};

const struct pz_names pz_fault_names = { workload_names, PZ_FAULT_COUNT };

/* The first two are perf's, so the output reads the same. */
static const char *const descriptions[PZ_FAULT_COUNT] = {
	[PZ_FAULT_DEMAND] = "Demand loaded mmap()",
	[PZ_FAULT_POPULATE] = "Eagerly populated mmap()",
	[PZ_FAULT_POPULATE_WRITE] = "mmap() then MADV_POPULATE_WRITE",
};

const struct pz_names pz_fault_descriptions = { descriptions, PZ_FAULT_COUNT };

static const char *const touch_names[PZ_TOUCH_COUNT] = {
	[PZ_TOUCH_WRITE] = "write",
	[PZ_TOUCH_PERF] = "perf",
};

const struct pz_names pz_touch_names = { touch_names, PZ_TOUCH_COUNT };

/* Random offsets ---------------------------------------------------------- */

/*
 * perf draws each page's offset with rand() after srand(seed). rand() keeps
 * one state for the whole process behind a lock, so threads drawing from it
 * would interleave their sequences and contend on the lock inside the timed
 * loop. glibc's random_r() over a 128-byte state (TYPE_3, rand()'s own) gives
 * each thread the very sequence srand(seed + thread) would give rand().
 */
struct rng {
#ifdef __GLIBC__
	struct random_data rd;
	/* random_r() reads and writes its state as int32_t: aligned as that, not as char. */
	int32_t state[32];
#else
	unsigned state;
#endif
};

/* 0, or -errno from initstate_r() (EINVAL for a state it cannot use). */
static int rng_seed(struct rng *g, unsigned seed)
{
	memset(g, 0, sizeof(*g));
#ifdef __GLIBC__
	errno = 0;
	if (initstate_r(seed, (char *)g->state, sizeof(g->state), &g->rd))
		return errno ? -errno : -EINVAL;
#else
	g->state = seed;
#endif
	return 0;
}

/* The next draw in *@v: 0, or -EINVAL if random_r() refuses (a state rng_seed() did not make). */
static inline int rng_next(struct rng *g, unsigned *v)
{
#ifdef __GLIBC__
	int32_t r;

	if (random_r(&g->rd, &r))
		return -EINVAL;
	*v = (unsigned)r;
#else
	*v = (unsigned)rand_r(&g->state);
#endif
	return 0;
}

/* One pass ---------------------------------------------------------------- */

static uint64_t ns_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return ns_of(CLOCK_MONOTONIC_RAW);
}

/*
 * A stop request (stop.h) is checked every 2MB of faults: 512 4KB faults
 * (well under a ms), or every huge page; one load each time.
 */
static size_t stop_mask(const struct pz_fault_params *p)
{
	return p->page_shift < 21 ? ((size_t)1 << (21 - p->page_shift)) - 1 : 0;
}

/* The base page's shift @p runs with: its own, or the kernel's. */
static unsigned base_shift(const struct pz_fault_params *p)
{
	return p->base_shift ? p->base_shift : pz_base_page_shift();
}

static int is_hugetlb(const struct pz_fault_params *p)
{
	return p->page_shift != base_shift(p);
}

/*
 * Touch one byte in each of @npages pages from @base, pages @first onwards
 * of the region, as @p->touch says: PZ_FAULT_MARK written, or perf's
 * mmap_page_touch, the byte read and written back plus the page's index.
 * perf's is the same plain C expression, not volatile, so that this
 * compiler makes of it what perf's does: on x86-64 one read-modify-write
 * add (a single write fault), on arm64 a load then a store (a read fault
 * that maps the shared zero page, then a write fault that allocates and
 * clears a new page; hugetlb has no zero page: its read fault clears the
 * folio). 0, or
 * -EINTR when a stop request cut it short.
 */
static int touch(const struct pz_fault_params *p, char *base, size_t first, size_t npages,
		 struct rng *rng)
{
	volatile char *q = base;
	const size_t page = (size_t)1 << p->page_shift, mask = stop_mask(p);
	const int perf = p->touch == PZ_TOUCH_PERF;
	size_t i;

	for (i = 0; i < npages; i++) {
		size_t at = i << p->page_shift;
		unsigned r;

		if (!(i & mask) && pz_stopping())
			return -EINTR;
		if (p->seed) {
			if (rng_next(rng, &r))
				return -EINVAL;
			at += r % page;
		}
		if (perf)
			base[at] = (char)(base[at] + (char)(first + i));
		else
			q[at] = PZ_FAULT_MARK;
	}
	return 0;
}

/* After a populating workload, perf touches every page too; a write-only run does not. */
static int touch_populated(const struct pz_fault_params *p, char *base, size_t first, size_t npages,
			   struct rng *rng)
{
	return p->touch == PZ_TOUCH_PERF ? touch(p, base, first, npages, rng) : 0;
}

/* MADV_POPULATE_WRITE, with the EINVAL of kernels before 5.14 told apart. */
static int populate_write(char *addr, size_t len)
{
	if (madvise(addr, len, MADV_POPULATE_WRITE) == 0)
		return 0;
	return errno == EINVAL ? -EOPNOTSUPP : -errno;
}

/*
 * Fault the mapped region in, lat_unit bytes at a time, reading the clock
 * between units. A unit is one page for hugetlb (one fault), a group of
 * pages for 4KB: a clock read costs tens of ns, a 4KB fault about a us.
 */
static int fault_timed(const struct pz_fault_params *p, char *base, struct rng *rng, uint64_t *lat)
{
	const size_t units = p->size / p->lat_unit, per = p->lat_unit >> p->page_shift;
	uint64_t t = now_ns(), u;
	size_t i;
	int ret;

	for (i = 0; i < units; i++) {
		char *at = base + i * p->lat_unit;

		if (p->workload == PZ_FAULT_DEMAND)
			ret = touch(p, at, i * per, per, rng);
		else if (pz_stopping())
			ret = -EINTR;
		else
			ret = populate_write(at, p->lat_unit);
		if (!ret && p->workload != PZ_FAULT_DEMAND)
			ret = touch_populated(p, at, i * per, per, rng);
		if (ret)
			return ret;
		u = now_ns();
		lat[i] = u - t;
		t = u;
	}
	return 0;
}

/*
 * The part of a loop perf times: map, advise, fault every page in. The
 * region is left in *@addr (NULL if mmap failed) for the caller to inspect
 * and unmap, also on error.
 */
static int fault_pass(const struct pz_fault_params *p, void **addr, struct rng *rng, uint64_t *lat)
{
	const size_t npages = p->size >> p->page_shift;
	int flags = MAP_PRIVATE | MAP_ANONYMOUS, ret;
	char *base;

	if (is_hugetlb(p))
		flags |= MAP_HUGETLB | (int)(p->page_shift << MAP_HUGE_SHIFT);
	if (p->workload == PZ_FAULT_POPULATE)
		flags |= MAP_POPULATE;
	/* hugetlb reserves the pages here: too few free ones fails now, with ENOMEM. */
	base = mmap(NULL, p->size, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (base == MAP_FAILED) {
		*addr = NULL;
		return -errno;
	}
	*addr = base;
	/* Before the first touch: the first fault decides the page size. */
	if (!is_hugetlb(p) && p->thp != PZ_THP_SYSTEM &&
	    madvise(base, p->size, p->thp == PZ_THP_ON ? MADV_HUGEPAGE : MADV_NOHUGEPAGE))
		return -errno;
	if (lat && p->workload != PZ_FAULT_POPULATE)
		return fault_timed(p, base, rng, lat);
	if (p->workload == PZ_FAULT_DEMAND)
		return touch(p, base, 0, npages, rng);
	ret = p->workload == PZ_FAULT_POPULATE_WRITE ? populate_write(base, p->size) : 0;
	return ret ? ret : touch_populated(p, base, 0, npages, rng);
}

/* Runs -------------------------------------------------------------------- */

/*
 * A run is a team (team.h) of p->threads unpinned threads: the scheduler
 * places them, as perf bench mem mmap's own process is placed. Every loop
 * they map and fault together behind the team's barrier; thread 0 then
 * reads smaps for all the regions and unmaps them, while the others wait
 * at the next loop's barrier.
 */
struct worker {
	struct pz_clock clock; /* this thread's (a cycles clock counts its opener only) */
	int have_clock;
	struct rng rng;
	void *addr; /* this loop's region, NULL when none */
	uint64_t t0, t1;
	uint64_t cpu0, cpu1; /* this thread's CPU time (ns) just outside t0 .. t1 */
	int err;             /* this loop's pass: 0 or -errno */
	struct pz_sampler sampler;
	int sampling;   /* the sampler is open */
	int sample_err; /* 0, or why this thread samples nothing */
};

struct run {
	const struct pz_fault_params *p;
	const struct pz_clock *clock;
	struct pz_fault_out *out;
	struct worker *w;
	int err; /* thread 0's verdict on the first loop that failed */
};

static size_t lat_per_pass(const struct pz_fault_params *p)
{
	return p->lat_unit ? p->size / p->lat_unit : 0;
}

size_t pz_fault_lat_count(const struct pz_fault_params *p)
{
	size_t n;

	/* Saturate: a product that wrapped would pass the caller's "too many" check. */
	if (__builtin_mul_overflow(lat_per_pass(p), (size_t)p->threads, &n) ||
	    __builtin_mul_overflow(n, (size_t)p->loops, &n))
		return SIZE_MAX;
	return n;
}

static void timed_pass(struct run *run, unsigned t, unsigned loop)
{
	const struct pz_fault_params *p = run->p;
	struct worker *w = &run->w[t];
	uint64_t *lat = NULL;

	if (run->out->lat)
		lat = run->out->lat + ((size_t)loop * p->threads + t) * lat_per_pass(p);
	/* Sampling starts and stops outside the timed span: the ioctl is no fault's time. */
	if (w->sampling && !w->sample_err)
		w->sample_err = pz_sampler_enable(&w->sampler, 1);
	/* The CPU time around the timed span: the on-CPU time of its faults, without sampling's. */
	w->cpu0 = ns_of(CLOCK_THREAD_CPUTIME_ID);
	w->t0 = pz_clock_read(&w->clock);
	w->err = fault_pass(p, &w->addr, &w->rng, lat);
	w->t1 = pz_clock_read(&w->clock);
	w->cpu1 = ns_of(CLOCK_THREAD_CPUTIME_ID);
	if (w->sampling && !w->sample_err)
		w->sample_err = pz_sampler_enable(&w->sampler, 0);
}

/*
 * After every thread's pass of @loop: record the times and the pages, unmap
 * all the regions. 0, or the first thread's error (-EINTR for a pass a stop
 * request cut short): the loop is then not counted.
 */
static int finish_loop(struct run *run, unsigned loop)
{
	const struct pz_fault_params *p = run->p;
	struct pz_span spans[64], *s = spans;
	uint64_t first = UINT64_MAX, last = 0;
	unsigned i, n = 0;
	int err = 0;

	if (p->threads > PZ_ARRAY_SIZE(spans)) {
		s = calloc(p->threads, sizeof(*s));
		if (!s)
			err = -ENOMEM;
	}
	for (i = 0; i < p->threads; i++) {
		struct worker *w = &run->w[i];

		if (w->err && !err)
			err = w->err;
		first = PZ_MIN(first, w->t0);
		last = w->t1 > last ? w->t1 : last;
		run->out->thread[(size_t)loop * p->threads + i] = w->t1 - w->t0;
		if (run->out->thread_cpu)
			run->out->thread_cpu[(size_t)loop * p->threads + i] = w->cpu1 - w->cpu0;
		if (s && w->addr) {
			s[n].start = (uintptr_t)w->addr;
			s[n++].end = (uintptr_t)w->addr + p->size;
		}
	}
	run->out->wall[loop] = last - first;
	if (!err)
		err = pz_smaps_scan(s, n, &run->out->pages[loop]);
	for (i = 0; i < p->threads; i++) {
		struct worker *w = &run->w[i];

		if (w->addr)
			munmap(w->addr, p->size);
		w->addr = NULL;
	}
	if (s != spans)
		free(s);
	return err;
}

static int worker_setup(void *ctx, unsigned t)
{
	struct run *run = ctx;
	struct worker *w = &run->w[t];
	int ret = pz_clock_open_thread(&w->clock, run->clock);

	w->have_clock = !ret;
	/* A sampler refused is no reason not to run: the run says why it has no profile. */
	if (!ret && run->p->profile) {
		w->sample_err = pz_sampler_open(&w->sampler, run->p->threads);
		w->sampling = !w->sample_err;
	}
	return ret;
}

static void worker_teardown(void *ctx, unsigned t)
{
	struct run *run = ctx;
	struct worker *w = &run->w[t];

	if (w->have_clock)
		pz_clock_close(&w->clock);
	w->have_clock = 0;
	if (w->sampling)
		pz_sampler_close(&w->sampler);
	w->sampling = 0;
}

/*
 * A stop request (stop.h) ends the run at the next loop's barrier
 * (pz_team_next); within a loop, demand faults check it too (touch()), and
 * a loop cut short fails with -EINTR in finish_loop and is not counted.
 * MAP_POPULATE and one MADV_POPULATE_WRITE over the region are single
 * system calls that only a fatal signal interrupts: they finish their loop
 * first. A failed loop (thread 0's verdict) stops the others the same way.
 */
static void worker_body(void *ctx, unsigned t, struct pz_team_state *st)
{
	struct run *run = ctx;
	unsigned loop;
	int failed = 0;

	for (loop = 0; loop < run->p->loops && pz_team_next(st, loop, failed); loop++) {
		timed_pass(run, t, loop);
		pz_team_sync(st); /* every pass is over: the regions can be read */
		if (run->w[t].sampling && !run->w[t].sample_err)
			run->w[t].sample_err = pz_sampler_drain(&run->w[t].sampler, loop);
		if (t != 0)
			continue;
		run->err = finish_loop(run, loop);
		if (run->err)
			failed = 1;
		else
			run->out->loops_done = loop + 1;
	}
}

static const struct pz_team_ops ops = { worker_setup, worker_body, worker_teardown };

static void add_counts(struct pz_sample_loop *sum, const struct pz_sample_loop *c)
{
	sum->kernel += c->kernel;
	sum->user += c->user;
	sum->user_period += c->user_period;
	sum->other += c->other;
	sum->other_period += c->other_period;
	sum->lost += c->lost;
}

/*
 * Every thread's samples of the @done completed loops into @prof, loop by
 * loop, or none with the first thread's error: a profile of some threads
 * only would be no profile of the run.
 */
static int gather_profile(const struct run *run, unsigned done, struct pz_fault_profile *prof)
{
	const unsigned threads = run->p->threads;
	size_t n = 0, *next = NULL;
	unsigned i, loop;

	memset(prof, 0, sizeof(*prof));
	prof->event = run->w[0].sampler.event;
	prof->format_lost = run->w[0].sampler.format_lost;
	for (i = 0; i < threads; i++) {
		const struct pz_sampler *s = &run->w[i].sampler;

		if (run->w[i].sample_err && !prof->err) {
			prof->err = run->w[i].sample_err;
			prof->stage = s->stage;
		}
		for (loop = 0; loop < done && loop < s->nloops; loop++)
			n += s->loops[loop].kernel;
	}
	if (prof->err)
		return 0;
	prof->ips = malloc((n ? n : 1) * sizeof(*prof->ips));
	prof->periods = malloc((n ? n : 1) * sizeof(*prof->periods));
	prof->loops = calloc(done ? done : 1, sizeof(*prof->loops));
	next = calloc(threads, sizeof(*next)); /* each thread's first sample not yet copied */
	if (!prof->ips || !prof->periods || !prof->loops || !next) {
		free(next);
		pz_fault_profile_free(prof);
		return -ENOMEM;
	}
	for (loop = 0; loop < done; loop++) {
		for (i = 0; i < threads; i++) {
			const struct pz_sampler *s = &run->w[i].sampler;
			const struct pz_sample_loop *c;

			if (loop >= s->nloops)
				continue;
			c = &s->loops[loop];
			if (c->kernel) { /* memcpy from NULL is undefined, even of 0 bytes */
				memcpy(prof->ips + prof->n, s->ips + next[i],
				       c->kernel * sizeof(*s->ips));
				memcpy(prof->periods + prof->n, s->periods + next[i],
				       c->kernel * sizeof(*s->periods));
			}
			prof->n += c->kernel;
			next[i] += c->kernel;
			add_counts(&prof->loops[loop], c);
		}
		add_counts(&prof->total, &prof->loops[loop]);
	}
	free(next);
	return 0;
}

void pz_fault_profile_free(struct pz_fault_profile *prof)
{
	free(prof->ips);
	free(prof->periods);
	free(prof->loops);
	prof->ips = prof->periods = NULL;
	prof->loops = NULL;
	prof->n = 0;
}

int pz_fault_check(const struct pz_fault_params *p, enum pz_clock_id clock)
{
	const unsigned base = base_shift(p);
	size_t page;

	if ((unsigned)p->workload >= PZ_FAULT_COUNT || p->size == 0 || p->loops == 0 ||
	    p->threads == 0 || p->threads > PZ_MAX_THREADS || (unsigned)p->touch >= PZ_TOUCH_COUNT)
		return -EINVAL;
	/* Base pages of 4KB to 64KB (x86-64; arm64's 4KB, 16KB, 64KB), hugetlb above them. */
	if (base < PZ_PAGE_SHIFT_4KB || base > 16)
		return -EINVAL;
	if (p->page_shift != base &&
	    ((p->page_shift != PZ_PAGE_SHIFT_2MB && p->page_shift != PZ_PAGE_SHIFT_1GB) ||
	     p->page_shift <= base))
		return -EINVAL;
	page = (size_t)1 << p->page_shift; /* only now: a shift of 64 or more is undefined */
	if (p->size % page || (p->thp == PZ_THP_ON && p->page_shift != base))
		return -EINVAL;
	if (p->lat_unit &&
	    (p->workload == PZ_FAULT_POPULATE || p->lat_unit % page || p->size % p->lat_unit))
		return -EINVAL;
	/* Each thread counts its own cycles: a wall time across threads has no meaning. */
	if (clock == PZ_CLOCK_CYCLES && p->threads > 1)
		return -EINVAL;
	return 0;
}

int pz_fault_run(const struct pz_fault_params *p, const struct pz_clock *clock,
		 struct pz_fault_out *out)
{
	struct run run;
	struct pz_team team = { .threads = p->threads, .ops = &ops, .ctx = &run };
	unsigned i;
	int ret = pz_fault_check(p, clock->id);

	if (ret)
		return ret;
	if (!out->wall || !out->thread || !out->pages || (!out->lat && p->lat_unit))
		return -EINVAL;
	memset(&run, 0, sizeof(run));
	out->loops_done = 0;
	run.p = p;
	run.clock = clock;
	run.out = out;
	run.w = calloc(p->threads, sizeof(*run.w));
	if (!run.w)
		return -ENOMEM;
	for (i = 0; i < p->threads && !ret; i++)
		ret = rng_seed(&run.w[i].rng, p->seed + i);
	if (!ret)
		ret = pz_team_run(&team);
	if (!ret)
		ret = run.err;
	/* No loop failed and some were not run: a stop request ended the run. */
	if (!ret && out->loops_done < p->loops)
		ret = -EINTR;
	if (p->profile && (!ret || ret == -EINTR)) {
		int err = gather_profile(&run, out->loops_done, &out->profile);

		ret = ret ? ret : err;
	}
	for (i = 0; i < p->threads; i++)
		pz_sampler_free(&run.w[i].sampler);
	free(run.w);
	return ret;
}

int pz_fault_once(const struct pz_fault_params *p, struct pz_region *r,
		  struct pz_smaps_pages *pages)
{
	struct pz_fault_params once = *p;
	uint64_t *lat = NULL;
	struct pz_span s;
	struct rng rng;
	void *addr;
	int ret;

	memset(r, 0, sizeof(*r));
	once.threads = 1;
	once.loops = 1;
	ret = pz_fault_check(&once, PZ_CLOCK_NS);
	if (ret)
		return ret;
	if (once.lat_unit) {
		/* The same pass as a run with latencies (the faults come in units). */
		lat = calloc(once.size / once.lat_unit, sizeof(*lat));
		if (!lat)
			return -ENOMEM;
	}
	addr = NULL;
	ret = rng_seed(&rng, once.seed);
	if (!ret)
		ret = fault_pass(&once, &addr, &rng, lat);
	free(lat);
	if (!ret) {
		s.start = (uintptr_t)addr;
		s.end = s.start + once.size;
		ret = pz_smaps_scan(&s, 1, pages);
	}
	if (ret) {
		if (addr)
			munmap(addr, once.size);
		return ret;
	}
	r->addr = r->map_addr = addr;
	r->size = r->map_size = once.size;
	r->page_shift = once.page_shift;
	return 0;
}
