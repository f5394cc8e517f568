/*
 * test_threads.c - csrc/threads.c, cache.c, numa.c and counters.c without
 * Python: parts, barrier, flush order, evict buffers, node binding, the
 * fake counter source, error paths. Run plain and under ASan/UBSan by
 * tests/test_c_core.py (TEST=threads tests/c/build.sh). Prints "N passed, M failed".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench.h"
#include "numa.h"
#include "threads.h"

static int passed, failed;

#define CHECK(cond) do {                                                        \
	if (cond) passed++;                                                     \
	else { failed++; printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } \
} while (0)

struct log { unsigned starts, start_arrived_min, flushes, clears; size_t next_off; int in_order; };

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
	} else {
		l->clears++;
	}
	(void)t;
	(void)p;
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
	CHECK(pz_run_threads(&p, &clock, &buf, NULL, &out) == 0);
	for (i = 0; i < size; i++) {
		unsigned t = i / part < threads ? (unsigned)(i / part) : threads - 1;

		if ((unsigned char)buf[i] != 0x20 + t) {
			CHECK(!"byte of the wrong thread");
			break;
		}
	}
	CHECK(l.starts == threads && l.start_arrived_min == threads);
	CHECK(l.flushes == 0);

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
	CHECK(pz_run_threads(&p, &clock, &buf, NULL, &out) == 0);
	CHECK(l.flushes == 2 * (size / 4096) && l.clears == l.flushes);

	/* Errors: no threads; evicting without a buffer. */
	p.threads = 0;
	CHECK(pz_run_threads(&p, &clock, &buf, NULL, &out) == -EINVAL);
	p.threads = 1;
	p.flush.method = PZ_FLUSH_EVICT;
	p.flush.evict = NULL;
	CHECK(pz_run_threads(&p, &clock, &buf, NULL, &out) == -EINVAL);
	pz_clock_close(&clock);
	munmap(map, size + 2 * page);
}

static void test_bench_private_evict_counters(void)
{
	struct pz_run_params p = { 0 };
	struct pz_run_out out = { 0 };
	struct pz_clock clock;
	uint64_t s[4], a[4], b[4], c[4 * PZ_CTR_COUNT];
	unsigned i;

	setenv("PAGEZERO_FAKE_COUNTERS", "1", 1);
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
	i = (unsigned)-pz_bench_threads(&p, &clock, &out);
	if (i)
		printf("pz_bench_threads: %s\n", strerror((int)i));
	CHECK(i == 0);
	for (i = 0; i < 4 * PZ_CTR_COUNT; i++)
		CHECK(c[i] == (i % PZ_CTR_COUNT + 1) * PZ_FAKE_COUNTER_STEP);
	unsetenv("PAGEZERO_FAKE_COUNTERS");
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

int main(void)
{
	test_parts();
	test_bench_private_evict_counters();
	test_numa();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
