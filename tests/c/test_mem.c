/*
 * test_mem.c - csrc/mem_bench.c, cache.c, numa.c, counters.c and stop.c
 * without Python: parts, barrier, flush order, evict buffers, node binding,
 * offsets, the fake counter source, error paths and the step they name,
 * stop requests and the signals that make them. Run plain and under ASan/UBSan by
 * tests/test_c_core.py (TEST=mem tests/c/build.sh). Prints "N passed, M failed".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "numa.h"
#include "stop.h"
#include "mem_bench.h"
#include "switches.h"

#include "check.h"

struct log {
	unsigned starts, start_arrived_min, flushes, clears;
	size_t next_off;
	int in_order;
};

static void hook(void *ctx, unsigned t, enum pz_run_event ev, const void *p, size_t len)
{
	/* Single-threaded uses only below, except START, which is counted atomically. */
	struct log *l = ctx;

	if (ev == PZ_EV_START) {
		__atomic_fetch_add(&l->starts, 1, __ATOMIC_SEQ_CST);
		if (len < __atomic_load_n(&l->start_arrived_min, __ATOMIC_SEQ_CST))
			__atomic_store_n(&l->start_arrived_min, (unsigned)len, __ATOMIC_SEQ_CST);
	} else if (ev == PZ_EV_FLUSH) {
		l->flushes++;
	} else if (ev == PZ_EV_CLEAR) {
		l->clears++;
	}
	(void)t;
	(void)p;
}

/* What bench_mem reports as thread_bytes: the parts, read from the parameters alone. */
static void test_part_lengths(void)
{
	struct pz_run_params p = { .size = (size_t)3 << 30,
				   .threads = 2,
				   .page_shift = PZ_PAGE_SHIFT_1GB };

	CHECK(pz_part_align(&p) == (size_t)1 << 30);
	CHECK(pz_part_len(&p, 0) == (size_t)1 << 30 && pz_part_len(&p, 1) == (size_t)2 << 30);
	p.mode = PZ_THREADS_PRIVATE;
	CHECK(pz_part_len(&p, 0) == p.size && pz_part_len(&p, 1) == p.size);
	p.mode = PZ_THREADS_SHARED;
	p.page_shift = PZ_PAGE_SHIFT_4KB;
	p.thp = PZ_THP_ON;
	p.size = (size_t)6 << 20;
	CHECK(pz_part_align(&p) == pz_thp_bytes());
	CHECK(pz_part_len(&p, 0) % pz_thp_bytes() == 0);
	CHECK(pz_part_len(&p, 0) + pz_part_len(&p, 1) == p.size);
}

static void test_parts(void)
{
	const unsigned threads = 3;
	const size_t size = 3 * 16384 + 8192, page = 4096;
	struct pz_run_params p = { 0 };
	struct pz_run_out out = { 0 };
	struct pz_clock clock;
	struct log l = { .start_arrived_min = 99 };
	uint64_t s[3 * 2], a[3 * 2], b[3 * 2];
	char *map, *buf;
	size_t i, part = size / threads / page * page;

	/* Guard pages on both sides: a write past either end kills the test. */
	map = mmap(NULL, size + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(map != MAP_FAILED);
	buf = map + page;
	CHECK(mprotect(buf, size, PROT_READ | PROT_WRITE) == 0);
	memset(buf, 0xff, size);
	CHECK(pz_clock_open(&clock, PZ_CLOCK_NS) == 0);
	p.kernel = pz_kernel_find(PZ_KIND_FILL, "generic");
	p.size = size;
	p.chunk = 4096;
	p.loops = 2;
	p.value = 0x20;
	p.value_step = 1;
	p.threads = threads;
	p.node = -1;
	p.hook = hook;
	p.hook_ctx = &l;
	out.samples = s;
	out.start = a;
	out.end = b;
	CHECK(pz_bench_mem_on(&p, &clock, &buf, NULL, &out) == 0);
	for (i = 0; i < size; i++) {
		unsigned t = i / part < threads ? (unsigned)(i / part) : threads - 1;

		if ((unsigned char)buf[i] != 0x20 + t) {
			CHECK(!"byte of the wrong thread");
			break;
		}
	}
	CHECK(l.starts == threads && l.start_arrived_min == threads);
	CHECK(l.flushes == 0);
	/* The parts it reports are the parts the bytes show. */
	CHECK(pz_part_len(&p, 0) == part && pz_part_len(&p, 2) == size - 2 * part);

	/* Cold, one thread: a flush before every call. */
	memset(&l, 0, sizeof(l));
	l.start_arrived_min = 99;
	p.threads = 1;
	p.cold = 1;
	p.flush.method = pz_flush_best();
	if (p.flush.method == PZ_FLUSH_EVICT) {
		static char evict_buf[1 << 20];

		p.flush.evict = evict_buf;
		p.flush.evict_len = sizeof(evict_buf);
	}
	CHECK(pz_bench_mem_on(&p, &clock, &buf, NULL, &out) == 0);
	CHECK(l.flushes == 2 * (size / 4096) && l.clears == l.flushes);

	/* Errors: no threads; evicting without a buffer. */
	p.threads = 0;
	CHECK(pz_bench_mem_on(&p, &clock, &buf, NULL, &out) == -EINVAL);
	p.threads = 1;
	p.flush.method = PZ_FLUSH_EVICT;
	p.flush.evict = NULL;
	CHECK(pz_bench_mem_on(&p, &clock, &buf, NULL, &out) == -EINVAL);
	pz_clock_close(&clock);
	munmap(map, size + 2 * page);
}

/*
 * A step whose t * step passes INT_MAX: refused when the bytes would leave
 * 0..255, and with the loop index the byte is (loop + t * step) mod 256, as
 * in the low byte of the exact sum. In int both overflowed (UBSan stops it).
 */
static void test_value_step(void)
{
	const size_t page = 4096, size = 3 * page;
	struct pz_run_params p = { 0 };
	struct pz_run_out out = { 0 };
	struct pz_clock clock;
	uint64_t s[3 * 2], a[3 * 2], b[3 * 2];
	char *buf = aligned_alloc(page, size);
	unsigned t;

	CHECK(buf != NULL && pz_clock_open(&clock, PZ_CLOCK_NS) == 0);
	p.kernel = pz_kernel_find(PZ_KIND_FILL, "generic");
	p.size = size;
	p.chunk = page;
	p.loops = 2;
	p.threads = 3;
	p.node = -1;
	p.value = 1;
	p.value_step = INT_MAX;
	CHECK(pz_bench_mem_check(&p, PZ_CLOCK_NS) == -EINVAL); /* 1 + INT_MAX > 255 */
	p.value = 255;
	p.value_step = INT_MIN;
	CHECK(pz_bench_mem_check(&p, PZ_CLOCK_NS) == -EINVAL);
	p.value = PZ_VALUE_LOOP;
	p.value_step = INT_MAX;
	out.samples = s;
	out.start = a;
	out.end = b;
	CHECK(pz_bench_mem_on(&p, &clock, &buf, NULL, &out) == 0);
	/* The last loop's index is 1: 1, 1 + 0x7fffffff, 1 + 2 * 0x7fffffff, mod 256. */
	for (t = 0; t < 3; t++)
		CHECK((unsigned char)buf[t * page] == (unsigned char)(1 + t * 0x7fffffffull));
	pz_clock_close(&clock);
	free(buf);
}

/* Work a flush stands for, in the fake counters: never part of a loop's counts. */
#define FLUSH_WORK 1000000u

static void count_flush(void *ctx, unsigned t, enum pz_run_event ev, const void *p, size_t len)
{
	if (ev == PZ_EV_FLUSH)
		pz_counters_fake_add(FLUSH_WORK);
}

/*
 * Cold: the counters count the kernel calls, as the samples time them, not
 * the flushes between them: 4 chunks per loop give 4 fake steps per
 * counter, and the flushes' fake work (FLUSH_WORK each) stays out.
 */
static void test_bench_private_evict_counters(void)
{
	struct pz_run_params p = { 0 };
	struct pz_run_out out = { 0 };
	struct pz_clock clock;
	uint64_t s[4], a[4], b[4], c[4 * PZ_CTR_COUNT];
	unsigned i;

	setenv("PAGEZERO_FAKE_COUNTERS", "1", 1);
	pz_switches_load();
	CHECK(pz_clock_open(&clock, PZ_CLOCK_NS) == 0);
	p.kernel = pz_kernel_find(PZ_KIND_COPY, "default");
	p.size = 1 << 16;
	p.page_shift = PZ_PAGE_SHIFT_4KB;
	p.thp = PZ_THP_OFF;
	p.chunk = 1 << 14;
	p.loops = 2;
	p.threads = 2;
	p.mode = PZ_THREADS_PRIVATE;
	p.cold = 1;
	p.flush.method = PZ_FLUSH_EVICT;
	p.flush.evict_len = 1 << 20;
	p.node = 0;
	p.counters = 1;
	out.samples = s;
	out.start = a;
	out.end = b;
	out.counters = c;
	p.hook = count_flush;
	i = (unsigned)-pz_bench_mem(&p, &clock, &out);
	if (i)
		printf("pz_bench_mem: %s\n", strerror((int)i));
	CHECK(i == 0);
	CHECK(out.loops_done == 2);
	for (i = 0; i < 4 * PZ_CTR_COUNT; i++)
		CHECK(c[i] == 4 * (i % PZ_CTR_COUNT + 1) * PZ_FAKE_COUNTER_STEP);
	/* Hot: around the whole pass, one step per counter. */
	p.cold = 0;
	CHECK(pz_bench_mem(&p, &clock, &out) == 0);
	for (i = 0; i < 4 * PZ_CTR_COUNT; i++)
		CHECK(c[i] == (i % PZ_CTR_COUNT + 1) * PZ_FAKE_COUNTER_STEP);
	/* A failed read fails the run (never a wrapped delta), whichever read it is. */
	p.cold = 1;
	for (unsigned n = 1; n <= 3; n++) {
		char v[8];

		snprintf(v, sizeof(v), "%u", n);
		setenv("PAGEZERO_FAIL_COUNTER_READ", v, 1);
		pz_switches_load();
		out.failed_counter = PZ_CTR_COUNT;
		out.stage = PZ_STAGE_NONE;
		CHECK(pz_bench_mem(&p, &clock, &out) == -EIO);
		/* A read, not an open: no counter is named as refused. */
		CHECK(out.stage == PZ_STAGE_COUNTER_READ && out.failed_counter == PZ_CTR_COUNT);
	}
	unsetenv("PAGEZERO_FAIL_COUNTER_READ");
	pz_switches_load();
	/* A multiplexed group: refused, and said to be a read's. */
	setenv("PAGEZERO_FAKE_MULTIPLEXED", "1", 1);
	pz_switches_load();
	CHECK(pz_bench_mem(&p, &clock, &out) == -EBUSY && out.stage == PZ_STAGE_COUNTER_READ);
	unsetenv("PAGEZERO_FAKE_MULTIPLEXED");
	unsetenv("PAGEZERO_FAKE_COUNTERS");
	pz_switches_load();
	pz_clock_close(&clock);
}

static void test_numa(void)
{
	size_t len = 1 << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int mode = -1, first = -1, node = -1;

	CHECK(p != MAP_FAILED);
	CHECK(pz_numa_bind(p, len, 0) == 0);
	memset(p, 0, len);
	CHECK(pz_numa_policy(p, &mode, &first) == 0 && mode == 2 && first == 0);
	CHECK(pz_numa_node_of(p, &node) == 0 && node == 0);
	CHECK(pz_numa_bind(p, len, -1) == -EINVAL);
	munmap(p, len);
}

/* Counter snapshots: a multiplexed interval is refused, a whole one counted. */
static void test_counter_delta(void)
{
	struct pz_counter_snap a = { .enabled = 100, .running = 100 }, b = a;
	uint64_t acc[PZ_CTR_COUNT] = { 0 };

	b.v[0] = 7;
	b.enabled = 300;
	b.running = 250;
	CHECK(pz_counters_delta(&a, &b, acc) == -EBUSY && acc[0] == 0);
	b.running = 300;
	CHECK(pz_counters_delta(&a, &b, acc) == 0 && acc[0] == 7);
}

/*
 * The cycles clock counts the thread that opened it. The fake source reads
 * the opener's CPU time, which, like its cycles, stands still while it waits
 * in pthread_join: a worker (a thread of its own, even alone) reading the
 * caller's clock would see ~0 for a clear of 8MB, its own clock several
 * microseconds at least. Over two threads a sample would span two
 * counters: refused.
 */
static void test_cycles_per_thread(void)
{
	struct pz_run_params p = { 0 };
	struct pz_run_out out = { 0 };
	struct pz_clock clock;
	uint64_t s[2], a[2], b[2];
	unsigned i;

	setenv("PAGEZERO_FAKE_CYCLES", "1", 1);
	pz_switches_load();
	CHECK(pz_clock_open(&clock, PZ_CLOCK_CYCLES) == 0 && clock.fake);
	p.kernel = pz_kernel_find(PZ_KIND_FILL, "generic");
	p.size = 8u << 20;
	p.page_shift = PZ_PAGE_SHIFT_4KB;
	p.thp = PZ_THP_OFF;
	p.chunk = 1u << 20;
	p.loops = 2;
	p.node = -1;
	out.samples = s;
	out.start = a;
	out.end = b;
	for (int cold = 0; cold <= 1; cold++) {
		p.cold = cold;
		p.flush.method = pz_flush_best();
		p.flush.evict_len = 1u << 20;
		p.threads = 1;
		CHECK(pz_bench_mem(&p, &clock, &out) == 0);
		for (i = 0; i < p.loops; i++)
			if (s[i] < 1000) {
				printf("cold %d: sample %u is %llu cycles\n", cold, i,
				       (unsigned long long)s[i]);
				CHECK(!"a worker read a clock that counts another thread");
				break;
			}
		p.threads = 2;
		CHECK(pz_bench_mem(&p, &clock, &out) == -EINVAL && out.stage == PZ_STAGE_ARGS);
	}
	pz_clock_close(&clock);
	unsetenv("PAGEZERO_FAKE_CYCLES");
	pz_switches_load();
}

/* Prefaults: which thread, on which CPU, before or after its start. */
struct prefaults {
	const int *cpus;
	int on_cpu[2]; /* 1: thread t prefaulted on cpus[t] */
	const void *p[2];
	size_t len[2];
	unsigned n[2], before_start[2];
	const void *first_clear[2];
};

static void note_prefault(void *ctx, unsigned t, enum pz_run_event ev, const void *p, size_t len)
{
	struct prefaults *f = ctx;

	if (t > 1)
		return;
	if (ev == PZ_EV_PREFAULT) {
		f->n[t]++;
		f->p[t] = p;
		f->len[t] = len;
		f->on_cpu[t] = sched_getcpu() == f->cpus[t];
	} else if (ev == PZ_EV_START) {
		f->before_start[t] = f->n[t];
	} else if (ev == PZ_EV_CLEAR && !f->first_clear[t]) {
		f->first_clear[t] = p;
	}
}

/*
 * Each thread faults its own part in, after pinning itself and before the
 * start barrier, so first touch puts its pages on its own node: PRIVATE,
 * its region; SHARED, its part of the one region.
 */
static void test_prefault_per_thread(void)
{
	struct pz_run_params p = { 0 };
	struct pz_run_out out = { 0 };
	struct pz_clock clock;
	uint64_t s[4], a[4], b[4];
	int cpus[2];
	cpu_set_t set;
	unsigned t;

	CHECK(sched_getaffinity(0, sizeof(set), &set) == 0);
	cpus[0] = cpus[1] = -1;
	for (int c = 0, k = 0; c < CPU_SETSIZE && k < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus[k++] = c;
	if (cpus[1] < 0)
		cpus[1] = cpus[0];
	CHECK(pz_clock_open(&clock, PZ_CLOCK_NS) == 0);
	p.kernel = pz_kernel_find(PZ_KIND_FILL, "generic");
	p.size = 1u << 20;
	p.page_shift = PZ_PAGE_SHIFT_4KB;
	p.thp = PZ_THP_OFF;
	p.chunk = 1u << 16;
	p.loops = 2;
	p.threads = 2;
	p.cpus = cpus;
	p.node = -1;
	p.cold = 1;
	p.flush.method = pz_flush_best();
	p.flush.evict_len = 1u << 20;
	p.hook = note_prefault;
	out.samples = s;
	out.start = a;
	out.end = b;
	for (int mode = PZ_THREADS_SHARED; mode <= PZ_THREADS_PRIVATE; mode++) {
		struct prefaults f = { .cpus = cpus };

		p.mode = mode;
		p.hook_ctx = &f;
		CHECK(pz_bench_mem(&p, &clock, &out) == 0);
		for (t = 0; t < 2; t++) {
			CHECK(f.n[t] == 1 && f.before_start[t] == 1);
			CHECK(f.on_cpu[t]);
			/* The part it prefaulted is the part it clears. */
			CHECK(f.p[t] && f.p[t] == f.first_clear[t]);
			CHECK(f.len[t] == (mode == PZ_THREADS_SHARED ? p.size / 2 : p.size));
		}
		if (mode == PZ_THREADS_SHARED)
			CHECK((const char *)f.p[1] == (const char *)f.p[0] + p.size / 2);
		else
			CHECK(f.p[0] != f.p[1]);
	}
	pz_clock_close(&clock);
}

/* Stop requests -------------------------------------------------------------- */

struct stopper {
	unsigned at_clear; /* thread 0's clear that asks for the stop */
	unsigned clears;
};

static void stop_mid_loop(void *ctx, unsigned t, enum pz_run_event ev, const void *p, size_t len)
{
	struct stopper *st = ctx;

	if (t == 0 && ev == PZ_EV_CLEAR && ++st->clears == st->at_clear)
		pz_stop_request(SIGINT);
}

/*
 * A stop requested in the middle of loop 2 (thread 0's 10th clear of 4-chunk
 * loops): the run returns -EINTR with 2 whole loops, every thread's samples
 * of them set, and the threads all met and ended (ASan: nothing leaks).
 */
static void test_stop_threads(void)
{
	struct pz_run_params p = { 0 };
	struct pz_run_out out = { 0 };
	struct pz_clock clock;
	uint64_t s[2 * 6] = { 0 }, a[2 * 6], b[2 * 6];
	struct stopper st = { .at_clear = 10 };
	unsigned t, i;

	CHECK(pz_clock_open(&clock, PZ_CLOCK_NS) == 0);
	p.kernel = pz_kernel_find(PZ_KIND_FILL, "generic");
	p.size = 1u << 18;
	p.page_shift = PZ_PAGE_SHIFT_4KB;
	p.thp = PZ_THP_OFF;
	p.chunk = 1u << 16;
	p.loops = 6;
	p.threads = 2;
	p.mode = PZ_THREADS_PRIVATE;
	p.node = -1;
	p.cold = 1;
	p.flush.method = pz_flush_best();
	p.flush.evict_len = 1u << 20;
	p.hook = stop_mid_loop;
	p.hook_ctx = &st;
	out.samples = s;
	out.start = a;
	out.end = b;
	CHECK(pz_bench_mem(&p, &clock, &out) == -EINTR);
	CHECK(out.loops_done == 2);
	for (t = 0; t < 2; t++)
		for (i = 0; i < out.loops_done; i++)
			CHECK(s[t * p.loops + i] > 0);
	CHECK(pz_stop_requested() == SIGINT);
	/* Still set: the next run stops before its first loop. */
	p.hook = NULL;
	CHECK(pz_bench_mem(&p, &clock, &out) == -EINTR && out.loops_done == 0);
	pz_stop_clear();
	CHECK(pz_bench_mem(&p, &clock, &out) == 0 && out.loops_done == p.loops);
	pz_clock_close(&clock);
}

static void *stop_later(void *arg)
{
	struct timespec nap = { 0, 20 * 1000 * 1000 };

	nanosleep(&nap, NULL);
	pz_stop_request(*(int *)arg);
	return NULL;
}

/*
 * The plain run (default conditions: one unpinned thread, hot): a request
 * from another thread ends a run that would take minutes.
 */
static void test_stop_plain(void)
{
	struct pz_run_params p = { 0 };
	struct pz_run_out out = { 0 };
	struct pz_clock clock;
	unsigned loops = 1000000;
	uint64_t *s = calloc(loops, sizeof(*s)), *a = calloc(loops, sizeof(*a));
	uint64_t *b = calloc(loops, sizeof(*b));
	int sig = SIGHUP;
	pthread_t tid;

	CHECK(pz_clock_open(&clock, PZ_CLOCK_NS) == 0);
	p.kernel = pz_kernel_find(PZ_KIND_FILL, "generic");
	p.size = 1u << 20;
	p.chunk = 1u << 12;
	p.page_shift = PZ_PAGE_SHIFT_4KB;
	p.thp = PZ_THP_OFF;
	p.loops = loops;
	p.threads = 1;
	p.node = -1;
	out.samples = s;
	out.start = a;
	out.end = b;
	CHECK(pthread_create(&tid, NULL, stop_later, &sig) == 0);
	CHECK(pz_bench_mem(&p, &clock, &out) == -EINTR);
	pthread_join(tid, NULL);
	CHECK(out.loops_done < loops && (out.loops_done == 0 || s[out.loops_done - 1] > 0));
	CHECK(out.stage == PZ_STAGE_NONE);
	CHECK(pz_stop_requested() == SIGHUP);
	pz_stop_clear();
	pz_clock_close(&clock);
	free(s);
	free(a);
	free(b);
}

static void note_signal(int sig)
{
	(void)sig;
}

/* The handlers set the flag and give the previous actions back. */
static void test_stop_catch(void)
{
	struct pz_stop_saved saved;
	struct sigaction mine = { 0 }, now;

	mine.sa_handler = note_signal;
	sigemptyset(&mine.sa_mask);
	CHECK(sigaction(SIGTERM, &mine, NULL) == 0);
	CHECK(pz_stop_catch(&saved) == 0);
	CHECK(pz_stop_requested() == 0);
	raise(SIGTERM);
	CHECK(pz_stop_requested() == SIGTERM);
	raise(SIGHUP);
	CHECK(pz_stop_requested() == SIGTERM); /* the first signal decides */
	pz_stop_clear();
	raise(SIGHUP);
	CHECK(pz_stop_requested() == SIGHUP);
	pz_stop_release(&saved);
	CHECK(sigaction(SIGTERM, NULL, &now) == 0 && now.sa_handler == note_signal);
	CHECK(sigaction(SIGINT, NULL, &now) == 0 && now.sa_handler == SIG_DFL);
	pz_stop_clear();
	CHECK(pz_stop_requested() == 0);
	signal(SIGTERM, SIG_DFL);
}

static volatile sig_atomic_t mine_got;

static void count_signal(int sig)
{
	mine_got = sig;
}

/*
 * pz_stop_release_take(): the handlers go back, then the request is taken,
 * so a signal at the end of a run is either returned or reaches the
 * restored handler. PAGEZERO_SIGNAL_AT_RELEASE raises one at the worst
 * moment, before the handlers go back: it must be returned (the bindings'
 * old order, read the flag, release, clear, lost it; tests/test_signals_release.py
 * shows that end to end).
 */
static void test_stop_release_take(void)
{
	struct pz_stop_saved saved;
	struct sigaction mine = { 0 }, now;

	mine.sa_handler = count_signal;
	sigemptyset(&mine.sa_mask);
	CHECK(sigaction(SIGTERM, &mine, NULL) == 0);
	CHECK(pz_stop_catch(&saved) == 0);
	CHECK(pz_stop_release_take(&saved) == 0); /* nothing pending */
	CHECK(pz_stop_catch(&saved) == 0);
	raise(SIGHUP);
	CHECK(pz_stop_release_take(&saved) == SIGHUP && pz_stop_requested() == 0);
	CHECK(sigaction(SIGTERM, NULL, &now) == 0 && now.sa_handler == count_signal);

	CHECK(setenv("PAGEZERO_SIGNAL_AT_RELEASE", "15", 1) == 0 && pz_switches_load() == 0);
	CHECK(pz_stop_catch(&saved) == 0);
	mine_got = 0;
	CHECK(pz_stop_release_take(&saved) == SIGTERM && pz_stop_requested() == 0);
	CHECK(mine_got == 0); /* caught as a stop, not passed on as well */
	unsetenv("PAGEZERO_SIGNAL_AT_RELEASE");
	CHECK(pz_switches_load() == 0);
	/* Released: the next one is the program's own. */
	raise(SIGTERM);
	CHECK(mine_got == SIGTERM && pz_stop_requested() == 0);
	signal(SIGTERM, SIG_DFL);
}

/* A signal its starter ignored (nohup's SIGHUP) stays ignored while the handlers are in. */
/* A stop request ends a prefault between slices: nothing more is populated. */
static void test_prefault_stops(void)
{
	const size_t len = (size_t)1 << 30;
	unsigned char vec[16];
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	CHECK(p != MAP_FAILED);
	if (p == MAP_FAILED)
		return;
	madvise(p, len, MADV_NOHUGEPAGE);
	pz_stop_request(SIGTERM);
	CHECK(pz_region_prefault(p, len, PZ_PAGE_SHIFT_4KB) == -EINTR);
	/* The last pages of the region were never faulted in. */
	CHECK(mincore(p + len - sizeof(vec) * 4096, sizeof(vec) * 4096, vec) == 0);
	for (size_t i = 0; i < sizeof(vec); i++)
		CHECK((vec[i] & 1) == 0); /* the last pages were never faulted in */
	pz_stop_clear();
	CHECK(pz_region_prefault(p, 64 << 10, PZ_PAGE_SHIFT_4KB) == 0);
	munmap(p, len);
}

static void test_stop_catch_keeps_ignored(void)
{
	struct pz_stop_saved saved;
	struct sigaction now;

	CHECK(signal(SIGHUP, SIG_IGN) != SIG_ERR);
	CHECK(pz_stop_catch(&saved) == 0);
	CHECK(sigaction(SIGHUP, NULL, &now) == 0 && now.sa_handler == SIG_IGN);
	raise(SIGHUP);
	CHECK(pz_stop_requested() == 0);
	/* The others are caught meanwhile. */
	CHECK(sigaction(SIGTERM, NULL, &now) == 0 && now.sa_handler != SIG_DFL &&
	      now.sa_handler != SIG_IGN);
	pz_stop_release(&saved);
	CHECK(sigaction(SIGHUP, NULL, &now) == 0 && now.sa_handler == SIG_IGN);
	CHECK(sigaction(SIGTERM, NULL, &now) == 0 && now.sa_handler == SIG_DFL);
	pz_stop_clear();
	signal(SIGHUP, SIG_DFL);
}

/* A CPU number no thread may run on: one past the last one this process may use. */
static int forbidden_cpu(void)
{
	cpu_set_t set;
	int c, last = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return CPU_SETSIZE - 1;
	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			last = c;
	return last + 1 < CPU_SETSIZE ? last + 1 : -1;
}

/*
 * Every failure names its step: -EINVAL from pinning and -EINVAL from
 * binding are told apart, and the thread that failed is the one named.
 */
static void test_stages(void)
{
	struct pz_run_params p = { 0 };
	struct pz_run_out out = { 0 };
	struct pz_clock clock;
	uint64_t s[2], a[2], b[2];
	int cpus[2] = { 0, forbidden_cpu() };
	cpu_set_t set;

	CHECK(sched_getaffinity(0, sizeof(set), &set) == 0);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set)) {
			cpus[0] = c;
			break;
		}
	CHECK(pz_clock_open(&clock, PZ_CLOCK_NS) == 0);
	p.kernel = pz_kernel_find(PZ_KIND_FILL, "generic");
	p.size = 1u << 16;
	p.chunk = 1u << 12;
	p.page_shift = PZ_PAGE_SHIFT_4KB;
	p.thp = PZ_THP_OFF;
	p.loops = 1;
	p.threads = 2;
	p.mode = PZ_THREADS_PRIVATE;
	p.node = -1;
	out.samples = s;
	out.start = a;
	out.end = b;
	if (cpus[1] >= 0) {
		p.cpus = cpus;
		CHECK(pz_bench_mem(&p, &clock, &out) == -EINVAL);
		CHECK(out.stage == PZ_STAGE_PIN && out.thread == 1);
	} else {
		printf("skip: pinning error (every CPU number is allowed)\n");
	}
	/* A node that does not exist: mbind's -EINVAL, pinned or not. */
	p.cpus = NULL;
	p.node = 4000;
	CHECK(pz_bench_mem(&p, &clock, &out) == -EINVAL && out.stage == PZ_STAGE_BIND);
	/* Arguments. */
	p.node = -1;
	p.offset = 4096;
	CHECK(pz_bench_mem(&p, &clock, &out) == -EINVAL && out.stage == PZ_STAGE_ARGS);
	p.offset = 0;
	CHECK(pz_bench_mem(&p, &clock, &out) == 0 && out.stage == PZ_STAGE_NONE);
	/* A team whose barrier cannot be made: no thread starts, nothing stays (ASan). */
	CHECK(setenv("PAGEZERO_FAIL_TEAM_INIT", "1", 1) == 0 && pz_switches_load() == 0);
	CHECK(pz_bench_mem(&p, &clock, &out) == -EAGAIN && out.stage == PZ_STAGE_START);
	unsetenv("PAGEZERO_FAIL_TEAM_INIT");
	CHECK(pz_switches_load() == 0);
	CHECK(pz_bench_mem(&p, &clock, &out) == 0);
	pz_clock_close(&clock);
}

struct offsets {
	const void *p[2];
};

static void note_offset(void *ctx, unsigned t, enum pz_run_event ev, const void *p, size_t len)
{
	if (ev == PZ_EV_PREFAULT && t < 2)
		((struct offsets *)ctx)->p[t] = p;
}

/*
 * @offset moves every buffer, under any conditions: each thread's region
 * (private) starts that far past a page boundary.
 */
static void test_offset(void)
{
	struct pz_run_params p = { 0 };
	struct pz_run_out out = { 0 };
	struct pz_clock clock;
	uint64_t s[4], a[4], b[4];
	struct offsets o = { { NULL } };

	CHECK(pz_clock_open(&clock, PZ_CLOCK_NS) == 0);
	p.kernel = pz_kernel_find(PZ_KIND_FILL, "default");
	p.size = 1u << 16;
	p.chunk = 1u << 12;
	p.page_shift = PZ_PAGE_SHIFT_4KB;
	p.thp = PZ_THP_OFF;
	p.loops = 2;
	p.threads = 2;
	p.mode = PZ_THREADS_PRIVATE;
	p.node = -1;
	p.offset = 16;
	p.value = 0x5a;
	p.hook = note_offset;
	p.hook_ctx = &o;
	out.samples = s;
	out.start = a;
	out.end = b;
	CHECK(pz_bench_mem(&p, &clock, &out) == 0 && out.loops_done == 2);
	CHECK(o.p[0] && ((uintptr_t)o.p[0] & 4095) == 16);
	CHECK(o.p[1] && ((uintptr_t)o.p[1] & 4095) == 16);
	pz_clock_close(&clock);
}

/*
 * A hugetlb page the kernel cannot give (here: a MAP_NORESERVE mapping
 * larger than the free pool, as a node-bound region whose node is short)
 * is an error from the prefault, not a SIGBUS that kills the process.
 */
static void test_hugetlb_prefault(void)
{
	const size_t huge = 2u << 20, len = 64 * huge;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_NORESERVE |
			       (21 << MAP_HUGE_SHIFT),
		       -1, 0);
	FILE *f = fopen("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "re");
	unsigned long free_pages = 0;

	if (f) {
		if (fscanf(f, "%lu", &free_pages) != 1)
			free_pages = 0;
		fclose(f);
	}
	if (m == MAP_FAILED || free_pages >= 64) {
		printf("skip: hugetlb prefault error (%s)\n",
		       m == MAP_FAILED ? "no 2MB hugetlb mappings here" : "64 free 2MB pages");
		if (m != MAP_FAILED)
			munmap(m, len);
		return;
	}
	CHECK(pz_region_prefault(m, len, PZ_PAGE_SHIFT_2MB) == -ENOMEM);
	munmap(m, len);
	/* 4KB: no error to find. */
	m = mmap(NULL, 1u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED && pz_region_prefault((char *)m + 100, 5000, 12) == 0);
	munmap(m, 1u << 20);
}

/*
 * SHARED parts on a huge-page mapping start on its pages, so that no two
 * threads fault in (first touch) the same huge page: with THP and with 2MB
 * hugetlb (when the pool has 3 free pages), 6MB over 2 threads is 2MB and
 * 4MB, not 3MB each; under a page per thread is refused.
 */
static void test_huge_parts(void)
{
	const size_t huge = 2u << 20;
	uint64_t s[2], a[2], b[2];
	struct pz_run_params p;
	struct pz_run_out out;
	struct pz_clock clock;
	int cpus[2] = { -1, -1 };
	unsigned t, shift;

	memset(&p, 0, sizeof(p));
	memset(&out, 0, sizeof(out));
	CHECK(pz_clock_open(&clock, PZ_CLOCK_NS) == 0);
	p.kernel = pz_kernel_find(PZ_KIND_FILL, "generic");
	p.size = 3 * huge;
	p.chunk = 1u << 16;
	p.loops = 1;
	p.threads = 2;
	p.node = -1;
	p.cpus = NULL;
	p.hook = note_prefault;
	out.samples = s;
	out.start = a;
	out.end = b;
	for (shift = PZ_PAGE_SHIFT_4KB; shift <= PZ_PAGE_SHIFT_2MB; shift += 9) {
		struct prefaults f = { .cpus = cpus };
		int ret;

		p.page_shift = shift;
		p.thp = shift == PZ_PAGE_SHIFT_4KB ? PZ_THP_ON : PZ_THP_SYSTEM;
		p.hook_ctx = &f;
		ret = pz_bench_mem(&p, &clock, &out);
		if (shift != PZ_PAGE_SHIFT_4KB && ret == -ENOMEM) {
			printf("SKIP 2MB hugetlb parts: fewer than 3 free 2MB pages\n");
			continue;
		}
		CHECK(ret == 0);
		for (t = 0; t < 2; t++)
			CHECK(f.n[t] == 1 && ((uintptr_t)f.p[t] & (huge - 1)) == 0);
		CHECK((char *)f.p[1] - (char *)f.p[0] == (ptrdiff_t)huge);
		CHECK(f.len[0] == huge && f.len[1] == 2 * huge);
	}
	/* Less than a huge page per thread; the same size on 4KB pages splits. */
	p.page_shift = PZ_PAGE_SHIFT_4KB;
	p.thp = PZ_THP_ON;
	p.size = 3 * huge / 2;
	p.hook = NULL;
	CHECK(pz_bench_mem_check(&p, PZ_CLOCK_NS) == -EINVAL);
	CHECK(pz_bench_mem(&p, &clock, &out) == -EINVAL && out.stage == PZ_STAGE_ARGS);
	p.thp = PZ_THP_OFF;
	CHECK(pz_bench_mem_check(&p, PZ_CLOCK_NS) == 0);
	pz_clock_close(&clock);
}

/* The THP share a run reports: the buffers' bytes, and no more on huge pages than those. */
static void test_thp_share(void)
{
	uint64_t s[2], a[2], b[2];
	struct pz_run_params p;
	struct pz_run_out out;
	struct pz_clock clock;
	struct pz_region r;
	struct pz_span span;
	struct pz_smaps_pages pg;

	memset(&p, 0, sizeof(p));
	memset(&out, 0, sizeof(out));
	CHECK(pz_clock_open(&clock, PZ_CLOCK_NS) == 0);
	p.kernel = pz_kernel_find(PZ_KIND_COPY, "generic");
	p.size = 4u << 20;
	p.page_shift = PZ_PAGE_SHIFT_4KB;
	p.thp = PZ_THP_ON;
	p.chunk = p.size;
	p.loops = 1;
	p.threads = 1;
	p.node = -1;
	p.offset = 16;
	out.samples = s;
	out.start = a;
	out.end = b;
	CHECK(pz_bench_mem(&p, &clock, &out) == 0);
	/* memcpy: the destination and the source. */
	CHECK(out.buffer_bytes == 2 * p.size && out.huge_bytes <= out.buffer_bytes);
	p.thp = PZ_THP_OFF;
	CHECK(pz_bench_mem(&p, &clock, &out) == 0);
	CHECK(out.buffer_bytes == 0 && out.huge_bytes == 0);
	pz_clock_close(&clock);

	/* A region asking for THP starts on a 2MB boundary; its guard pages stay around it. */
	CHECK(pz_region_map(&r, 3u << 20, PZ_PAGE_SHIFT_4KB, PZ_THP_ON, 1, 1) == 0);
	CHECK(((uintptr_t)r.addr & ((2u << 20) - 1)) == 0);
	CHECK((char *)r.map_addr + 4096 == (char *)r.addr && r.map_size == r.size + 8192);
	span.start = (uintptr_t)r.addr;
	span.end = span.start + r.size;
	CHECK(pz_smaps_scan(&span, 1, &pg) == 0);
	CHECK(pg.rss == r.size && pg.anon_huge <= r.size && pg.hugetlb == 0);
	pz_region_unmap(&r);
}

/*
 * Settling (mem_bench.h): untimed passes over the caller's buffer, between
 * guard pages, until two in a row agree. Read through the fake clock (every
 * pass one step, so two passes always agree) and PAGEZERO_FAKE_UNSETTLED=N
 * (the passes before the Nth read 2x, 3x, 2x... as an unsettled rate), so the
 * counts do not depend on this machine's timing.
 */
static unsigned settled_run(struct pz_run_params *p, struct pz_clock *clock, char *buf,
			    struct pz_run_out *out, const char *unsettled, int *ret)
{
	if (unsettled)
		setenv("PAGEZERO_FAKE_UNSETTLED", unsettled, 1);
	else
		unsetenv("PAGEZERO_FAKE_UNSETTLED");
	CHECK(pz_switches_load() == 0);
	*ret = pz_bench_mem_on(p, clock, &buf, NULL, out);
	return out->settle_loops;
}

static void test_settle(void)
{
	const size_t size = 16 * 4096, page = 4096;
	struct pz_run_params p = { 0 };
	struct pz_run_out out = { 0 };
	struct pz_clock clock;
	uint64_t s[3], a[3], b[3];
	char *map, *buf;
	size_t i;
	int ret;

	map = mmap(NULL, size + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(map != MAP_FAILED);
	buf = map + page;
	CHECK(mprotect(buf, size, PROT_READ | PROT_WRITE) == 0);
	memset(buf, 0xff, size);
	CHECK(setenv("PAGEZERO_FAKE_CLOCK_STEP_NS", "1000", 1) == 0);
	CHECK(pz_switches_load() == 0);
	CHECK(pz_clock_open(&clock, PZ_CLOCK_NS) == 0);
	p.kernel = pz_kernel_find(PZ_KIND_FILL, "generic");
	p.size = size;
	p.chunk = size;
	p.loops = 3;
	p.value = 0x20;
	p.threads = 1;
	p.node = -1;
	out.samples = s;
	out.start = a;
	out.end = b;

	/* Off: no untimed pass. */
	CHECK(settled_run(&p, &clock, buf, &out, NULL, &ret) == 0 && ret == 0 && !out.settled);
	/* A steady rate: the minimum, then the two last agree; the timed loops follow. */
	p.settle = 64;
	CHECK(settled_run(&p, &clock, buf, &out, NULL, &ret) == PZ_SETTLE_MIN_LOOPS);
	CHECK(ret == 0 && out.settled && out.loops_done == 3 && s[0] == 1000 && s[2] == 1000);
	for (i = 0; i < size && (unsigned char)buf[i] == 0x20; i++)
		;
	CHECK(i == size);
	/* Unsettled for 12 passes: the 13th (1 step) differs from the 12th (3), the 14th agrees. */
	CHECK(settled_run(&p, &clock, buf, &out, "12", &ret) == 14 && ret == 0 && out.settled);
	/* Never settled: the bound ends it, and the run is timed all the same. */
	p.settle = 16;
	CHECK(settled_run(&p, &clock, buf, &out, "1000", &ret) == 16);
	CHECK(ret == 0 && !out.settled && out.loops_done == 3);
	/* A bound under the minimum lowers the minimum to it. */
	p.settle = 3;
	CHECK(settled_run(&p, &clock, buf, &out, NULL, &ret) == 3 && ret == 0 && out.settled);
	/* Refused: one pass (nothing to agree with), threads, a cold run. */
	p.settle = 1;
	CHECK(settled_run(&p, &clock, buf, &out, NULL, &ret) == 0 && ret == -EINVAL);
	p.settle = 8;
	p.threads = 2;
	CHECK(settled_run(&p, &clock, buf, &out, NULL, &ret) == 0 && ret == -EINVAL);
	p.threads = 1;
	p.cold = 1;
	p.flush.method = PZ_FLUSH_CLFLUSH;
	CHECK(settled_run(&p, &clock, buf, &out, NULL, &ret) == 0 && ret == -EINVAL);

	unsetenv("PAGEZERO_FAKE_UNSETTLED");
	unsetenv("PAGEZERO_FAKE_CLOCK_STEP_NS");
	CHECK(pz_switches_load() == 0);
	pz_clock_close(&clock);
	munmap(map, size + 2 * page);
}

int main(void)
{
	test_settle();
	test_thp_share();
	test_huge_parts();
	test_counter_delta();
	test_cycles_per_thread();
	test_prefault_per_thread();
	test_stop_threads();
	test_stop_plain();
	test_stop_catch_keeps_ignored();
	test_stages();
	test_offset();
	test_stop_catch();
	test_stop_release_take();
	test_prefault_stops();
	test_hugetlb_prefault();
	test_parts();
	test_part_lengths();
	test_value_step();
	test_bench_private_evict_counters();
	test_numa();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
