/*
 * test_fault.c - C-level tests of the fault workloads (csrc/fault.c).
 *
 * No Python, so it also runs under AddressSanitizer and UBSan, where the
 * threads, the smaps parsing and the error paths are checked for stray
 * accesses and leaks. tests/test_c_core.py builds and runs it, as
 *
 *   TEST=fault bash tests/c/build.sh sanitize
 *
 * 4KB pages only (hugetlb needs reserved pools; the Python tests cover it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fault.h"
#include "stop.h"
#include "switches.h"

static unsigned long n_passed, n_failed;

#define CHECK(cond, ...)                                            \
	do {                                                        \
		if (cond) {                                         \
			n_passed++;                                 \
		} else {                                            \
			n_failed++;                                 \
			printf("FAIL %s:%d: ", __FILE__, __LINE__); \
			printf(__VA_ARGS__);                        \
			printf("\n");                               \
		}                                                   \
	} while (0)

#define MB (1u << 20)

static struct pz_fault_params params(enum pz_fault_workload w, size_t size, unsigned threads,
				     unsigned loops, unsigned seed, size_t lat_unit)
{
	struct pz_fault_params p;

	memset(&p, 0, sizeof(p));
	p.workload = w;
	p.size = size;
	p.page_shift = PZ_PAGE_SHIFT_4KB;
	p.thp = PZ_THP_OFF;
	p.loops = loops;
	p.threads = threads;
	p.seed = seed;
	p.lat_unit = lat_unit;
	return p;
}

/* Count the non-zero bytes of @r; each page must hold at most one, PZ_FAULT_MARK. */
static size_t marks(const struct pz_region *r, size_t *bad_pages)
{
	const unsigned char *b = r->addr;
	size_t i, n = 0, page = 4096, in_page = 0;

	*bad_pages = 0;
	for (i = 0; i < r->size; i++) {
		if (i % page == 0)
			in_page = 0;
		if (b[i]) {
			n++;
			if (b[i] != PZ_FAULT_MARK || ++in_page > 1)
				(*bad_pages)++;
		}
	}
	return n;
}

static void test_once(void)
{
	for (int w = 0; w < PZ_FAULT_COUNT; w++) {
		for (unsigned seed = 0; seed < 2; seed++) {
			struct pz_fault_params p = params(w, 4 * MB, 1, 1, seed * 7, 0);
			struct pz_smaps_pages pg;
			struct pz_region r;
			size_t bad, n;
			int ret = pz_fault_once(&p, &r, &pg);

			CHECK(ret == 0, "%s once: %d", pz_name(&pz_fault_names, w), ret);
			if (ret)
				continue;
			n = marks(&r, &bad);
			CHECK(n == (w == PZ_FAULT_DEMAND ? p.size / 4096 : 0),
			      "%s seed %u: %zu bytes written", pz_name(&pz_fault_names, w), p.seed,
			      n);
			CHECK(bad == 0, "%s: %zu pages with a wrong byte",
			      pz_name(&pz_fault_names, w), bad);
			CHECK(pg.rss == p.size && pg.anon_huge == 0 && pg.hugetlb == 0,
			      "%s: rss %llu thp %llu", pz_name(&pz_fault_names, w),
			      (unsigned long long)pg.rss, (unsigned long long)pg.anon_huge);
			CHECK(pg.kernel_page == 4096, "kernel page %llu",
			      (unsigned long long)pg.kernel_page);
			pz_region_unmap(&r);
		}
	}
}

/*
 * perf's touch (PZ_TOUCH_PERF) after every workload: page i's byte is i's
 * low byte, read and written back over the zero the fault gave it.
 */
static void test_perf_touch(void)
{
	for (int w = 0; w < PZ_FAULT_COUNT; w++) {
		for (unsigned lat = 0; lat < 2; lat++) {
			struct pz_fault_params p = params(
				w, 2 * MB, 1, 1, 0, lat && w != PZ_FAULT_POPULATE ? 64 * 1024 : 0);
			struct pz_smaps_pages pg;
			struct pz_region r;
			size_t i, bad = 0;
			int ret;

			p.touch = PZ_TOUCH_PERF;
			ret = pz_fault_once(&p, &r, &pg);
			CHECK(ret == 0, "%s perf touch: %d", pz_name(&pz_fault_names, w), ret);
			if (ret)
				continue;
			for (i = 0; i < r.size; i++) {
				unsigned char want = i % 4096 ? 0 : (unsigned char)(i / 4096);

				bad += ((unsigned char *)r.addr)[i] != want;
			}
			CHECK(bad == 0, "%s (latency %u): %zu bytes not perf's",
			      pz_name(&pz_fault_names, w), lat, bad);
			pz_region_unmap(&r);
		}
	}
}

/*
 * A kernel with another base page (arm64's 16KB, 64KB), passed in: the
 * base-page run faults one byte per such page; 4KB pages are refused there.
 */
static void test_base_page(void)
{
	struct pz_fault_params p = params(PZ_FAULT_DEMAND, 4 * MB, 1, 1, 0, 0);
	struct pz_smaps_pages pg;
	struct pz_region r;
	size_t bad, n;
	int ret;

	p.base_shift = p.page_shift = 16;
	ret = pz_fault_once(&p, &r, &pg);
	CHECK(ret == 0, "64KB base pages: %d", ret);
	if (!ret) {
		n = marks(&r, &bad);
		CHECK(n == p.size >> 16, "64KB base pages: %zu pages touched", n);
		pz_region_unmap(&r);
	}
	p.page_shift = PZ_PAGE_SHIFT_4KB;
	CHECK(pz_fault_once(&p, &r, &pg) == -EINVAL && !r.addr, "4KB pages on a 64KB kernel");
	p.page_shift = 16;
	p.thp = PZ_THP_ON;
	CHECK(pz_fault_check(&p, PZ_CLOCK_NS) == 0, "THP on 64KB base pages");
	p.page_shift = PZ_PAGE_SHIFT_2MB;
	p.size = 2 * MB;
	CHECK(pz_fault_check(&p, PZ_CLOCK_NS) == -EINVAL, "THP on hugetlb, 64KB kernel");
	p.thp = PZ_THP_OFF;
	CHECK(pz_fault_check(&p, PZ_CLOCK_NS) == 0, "2MB hugetlb on a 64KB kernel");
	p.base_shift = 11;
	CHECK(pz_fault_check(&p, PZ_CLOCK_NS) == -EINVAL, "a 2KB base page");
	p.base_shift = 0;
	CHECK(pz_fault_check(&p, PZ_CLOCK_NS) == 0, "the kernel's own base page");
	CHECK(pz_base_page_shift() ==
		      (unsigned)__builtin_ctzl((unsigned long)sysconf(_SC_PAGESIZE)),
	      "base page shift %u", pz_base_page_shift());
}

/* THP's size is the kernel's (hpage_pmd_size), 2MB where it cannot be read. */
static void test_thp_bytes(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "re");
	unsigned long long v = PZ_THP_BYTES;

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = PZ_THP_BYTES;
		fclose(f);
	}
	CHECK(pz_thp_bytes() == v, "THP bytes %zu, the kernel says %llu", pz_thp_bytes(), v);
	CHECK(pz_thp_bytes() == v, "read once, the same after");
}

static void test_runs(void)
{
	struct pz_clock clock;

	pz_clock_open(&clock, PZ_CLOCK_NS);
	for (int w = 0; w < PZ_FAULT_COUNT; w++) {
		for (unsigned threads = 1; threads <= 3; threads++) {
			size_t lat_unit = w == PZ_FAULT_POPULATE ? 0 : 64 * 1024;
			struct pz_fault_params p = params(w, 2 * MB, threads, 2, 3, lat_unit);
			uint64_t wall[2], thread[2 * 3];
			struct pz_smaps_pages pages[2];
			size_t nlat = pz_fault_lat_count(&p);
			uint64_t *lat = nlat ? calloc(nlat, sizeof(*lat)) : NULL;
			struct pz_fault_out out = {
				.wall = wall, .thread = thread, .pages = pages, .lat = lat
			};
			int ret = pz_fault_run(&p, &clock, &out);

			CHECK(ret == 0, "%s x%u: %d", pz_name(&pz_fault_names, w), threads, ret);
			for (unsigned l = 0; !ret && l < 2; l++) {
				CHECK(pages[l].rss == p.size * threads, "loop %u rss %llu", l,
				      (unsigned long long)pages[l].rss);
				for (unsigned t = 0; t < threads; t++)
					CHECK(thread[l * threads + t] > 0 &&
						      thread[l * threads + t] <= wall[l],
					      "thread %u of loop %u outside the wall time", t, l);
			}
			CHECK(nlat == (lat_unit ? 2 * threads * 32u : 0), "nlat %zu", nlat);
			for (size_t i = 0; !ret && i < nlat; i++)
				CHECK(lat[i] > 0, "latency %zu is 0", i);
			free(lat);
		}
	}
	pz_clock_close(&clock);
}

/*
 * A gathered profile's counts: each loop's summed to the totals, its kernel
 * samples' ips and (positive) periods in the arrays, loop by loop.
 */
static void check_profile_counts(const struct pz_fault_profile *prof, unsigned loops_done,
				 const char *what)
{
	struct pz_sample_loop sum = { 0 };

	for (unsigned l = 0; l < loops_done; l++) {
		sum.kernel += prof->loops[l].kernel;
		sum.user += prof->loops[l].user;
		sum.user_period += prof->loops[l].user_period;
		sum.other += prof->loops[l].other;
		sum.lost += prof->loops[l].lost;
	}
	CHECK(sum.kernel == prof->n && sum.user == prof->total.user &&
		      sum.user_period == prof->total.user_period &&
		      sum.other == prof->total.other && sum.lost == prof->total.lost,
	      "%s: the loops' counts (%llu kernel, %llu user) are not the totals (%zu, %llu)", what,
	      (unsigned long long)sum.kernel, (unsigned long long)sum.user, prof->n,
	      (unsigned long long)prof->total.user);
	for (size_t i = 0; i < prof->n; i++)
		if (!prof->periods[i] || !prof->ips[i]) {
			CHECK(0, "%s: kernel sample %zu: ip %llx, period %llu", what, i,
			      (unsigned long long)prof->ips[i],
			      (unsigned long long)prof->periods[i]);
			break;
		}
	CHECK(!prof->total.user || prof->total.user_period >= prof->total.user,
	      "%s: %llu user samples with periods summing to %llu", what,
	      (unsigned long long)prof->total.user, (unsigned long long)prof->total.user_period);
}

/* One profiled demand run of @threads x 32MB, 2 loops, into @prof; the run's status. */
static int profiled_run(unsigned threads, uint64_t *thread_cpu, struct pz_fault_out *out)
{
	struct pz_fault_params p = params(PZ_FAULT_DEMAND, 32 * MB, threads, 2, 0, 0);
	static uint64_t wall[2], thread[2 * 8];
	static struct pz_smaps_pages pages[2];
	struct pz_clock clock;
	int ret;

	memset(out, 0, sizeof(*out));
	out->wall = wall;
	out->thread = thread;
	out->thread_cpu = thread_cpu;
	out->pages = pages;
	p.profile = 1;
	pz_clock_open(&clock, PZ_CLOCK_NS);
	ret = pz_fault_run(&p, &clock, out);
	pz_clock_close(&clock);
	return ret;
}

/*
 * Sampled runs (sample.h): the samples of every thread, loop by loop, freed by
 * the caller, or a refusal that leaves the run measured; PAGEZERO_REFUSE_PROFILE
 * forces the refusal, PAGEZERO_REFUSE_FORMAT_LOST a kernel before 6.0 (losses
 * counted from PERF_RECORD_LOST). Under ASan the ring, the growing sample arrays
 * and their gathering are checked.
 */
static void test_profile(void)
{
	static const char *const modes[] = { NULL, "PAGEZERO_REFUSE_PROFILE",
					     "PAGEZERO_REFUSE_FORMAT_LOST" };

	for (unsigned m = 0; m < PZ_ARRAY_SIZE(modes); m++) {
		if (modes[m])
			setenv(modes[m], "1", 1);
		pz_switches_load();
		for (unsigned threads = 1; threads <= 2; threads++) {
			struct pz_fault_out out;
			const struct pz_fault_profile *prof = &out.profile;
			uint64_t cpu[2 * 2] = { 0 };
			int ret = profiled_run(threads, cpu, &out);

			CHECK(ret == 0 && out.loops_done == 2, "profiled x%u: %d", threads, ret);
			for (unsigned i = 0; i < 2 * threads; i++)
				CHECK(cpu[i] > 0 && cpu[i] < UINT64_MAX / 2,
				      "x%u: thread CPU time %u: %llu ns", threads, i,
				      (unsigned long long)cpu[i]);
			if (m == 1)
				CHECK(prof->err == -EACCES && prof->stage == PZ_SAMPLE_STAGE_OPEN &&
					      prof->n == 0 && !prof->ips && !prof->loops,
				      "refused: err %d, %zu samples", prof->err, prof->n);
			else if (prof->err)
				printf("# sampling refused here (%s): the refusal path only\n",
				       strerror(-prof->err));
			else {
				CHECK(prof->n + prof->total.user + prof->total.other > 0 &&
					      prof->ips && prof->loops,
				      "x%u: no sample in %llu ns", threads,
				      (unsigned long long)(out.wall[0] + out.wall[1]));
				CHECK(prof->format_lost == (m != 2), "x%u, %s: format_lost %d",
				      threads, modes[m] ? modes[m] : "-", prof->format_lost);
				check_profile_counts(prof, out.loops_done, "profiled");
			}
			pz_fault_profile_free(&out.profile);
		}
		if (modes[m])
			unsetenv(modes[m]);
		pz_switches_load();
	}
}

/*
 * The rings share the locked memory: with a budget that 8 rings of 32 data
 * pages fill, every thread samples (halving from 256 pages each, the first
 * rings took it all and the second could not map even 8 pages: no profile);
 * with less than 8 of the smallest rings, the refusal says mmap.
 */
static void test_profile_budget(void)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char kb[32];

	for (int tight = 0; tight <= 1; tight++) {
		struct pz_fault_out out;
		int ret;

		/* 33 pages each (32 data + the metadata page), or one short of 8 x 9. */
		snprintf(kb, sizeof(kb), "%zu", (tight ? 8 * 9 - 1 : 8 * 33) * page / 1024);
		setenv("PAGEZERO_FAKE_MLOCK_KB", kb, 1);
		pz_switches_load();
		CHECK(pz_sample_ring_pages(8) == (tight ? 8u : 32u), "budget %s KB: %u pages", kb,
		      pz_sample_ring_pages(8));
		ret = profiled_run(8, NULL, &out);
		CHECK(ret == 0 && out.loops_done == 2, "8 threads: %d", ret);
		if (out.profile.err && out.profile.stage == PZ_SAMPLE_STAGE_OPEN)
			printf("# sampling refused here (%s): no ring to budget\n",
			       strerror(-out.profile.err));
		else if (tight)
			CHECK(out.profile.err == -EPERM &&
				      out.profile.stage == PZ_SAMPLE_STAGE_MMAP,
			      "a budget short of 8 rings: err %d, stage %d", out.profile.err,
			      (int)out.profile.stage);
		else
			CHECK(out.profile.err == 0 && out.profile.loops,
			      "8 threads sharing %s KB: err %d, stage %d", kb, out.profile.err,
			      (int)out.profile.stage);
		pz_fault_profile_free(&out.profile);
	}
	unsetenv("PAGEZERO_FAKE_MLOCK_KB");
	pz_switches_load();
}

static int overcommit_mode(void)
{
	FILE *f = fopen("/proc/sys/vm/overcommit_memory", "re");
	int mode = 1; /* unknown: assume the dangerous one */

	if (f) {
		if (fscanf(f, "%d", &mode) != 1)
			mode = 1;
		fclose(f);
	}
	return mode;
}

static void test_errors(void)
{
	struct pz_fault_params ok = params(PZ_FAULT_DEMAND, MB, 1, 1, 0, 0), p;
	uint64_t wall[1], thread[1];
	struct pz_smaps_pages pages[1];
	struct pz_fault_out out = { .wall = wall, .thread = thread, .pages = pages };
	struct pz_clock clock;
	struct pz_region r;

	pz_clock_open(&clock, PZ_CLOCK_NS);
#define EXPECT_EINVAL(field, value)                                                    \
	do {                                                                           \
		p = ok;                                                                \
		p.field = value;                                                       \
		CHECK(pz_fault_run(&p, &clock, &out) == -EINVAL, #field " = " #value); \
		CHECK(pz_fault_once(&p, &r, pages) == -EINVAL && !r.addr,              \
		      "once: " #field " = " #value);                                   \
	} while (0)
	EXPECT_EINVAL(workload, PZ_FAULT_COUNT);
	EXPECT_EINVAL(size, 0);
	EXPECT_EINVAL(size, MB + 1);
	EXPECT_EINVAL(page_shift, 13);
	/* Refused before 1 << page_shift is taken: UBSan stops a shift of 64 or more. */
	EXPECT_EINVAL(page_shift, 64);
	EXPECT_EINVAL(page_shift, 200);
	EXPECT_EINVAL(touch, PZ_TOUCH_COUNT);
	EXPECT_EINVAL(lat_unit, 1000);
	EXPECT_EINVAL(lat_unit, 3 * 4096); /* does not divide 1MB */
	p = ok;
	p.threads = 0;
	CHECK(pz_fault_run(&p, &clock, &out) == -EINVAL, "threads = 0");
	p.threads = PZ_MAX_THREADS + 1;
	CHECK(pz_fault_run(&p, &clock, &out) == -EINVAL, "threads too many");
	p = ok;
	p.workload = PZ_FAULT_POPULATE;
	p.lat_unit = 4096;
	CHECK(pz_fault_run(&p, &clock, &out) == -EINVAL, "populate with latencies");
	p = ok;
	p.page_shift = PZ_PAGE_SHIFT_2MB;
	p.thp = PZ_THP_ON;
	p.size = 2 * MB;
	CHECK(pz_fault_run(&p, &clock, &out) == -EINVAL, "THP on hugetlb");
	p = ok;
	p.lat_unit = 4096;
	CHECK(pz_fault_run(&p, &clock, &out) == -EINVAL, "latencies without a buffer");
	pz_clock_close(&clock);

	/* A latency count that would wrap saturates, so that a "too many" check refuses it. */
	p = ok;
	p.size = SIZE_MAX / 2 + 4096; /* pz_fault_lat_count() counts, pz_fault_run() checks */
	p.lat_unit = 1;
	p.threads = 2;
	CHECK(pz_fault_lat_count(&p) == SIZE_MAX, "latency count saturates");
	p.threads = 1;
	p.loops = 3;
	CHECK(pz_fault_lat_count(&p) == SIZE_MAX, "latency count saturates over loops");
	p.size = MB;
	p.lat_unit = 4096;
	CHECK(pz_fault_lat_count(&p) == 3 * (MB / 4096), "latency count");

	/*
	 * A mapping the kernel refuses: 64TB is more than any machine here has,
	 * and the heuristic (0) and strict (2) overcommit modes refuse it at
	 * mmap. Under "always" (1) it would be mapped and populated until the
	 * OOM killer came, so the case is skipped there.
	 */
	if (overcommit_mode() != 1) {
		uint64_t wall2[1], thread2[2];
		struct pz_fault_out out2 = { .wall = wall2, .thread = thread2, .pages = pages };

		p = ok;
		p.size = (size_t)1 << 46;
		p.workload = PZ_FAULT_POPULATE;
		pz_clock_open(&clock, PZ_CLOCK_NS);
		CHECK(pz_fault_run(&p, &clock, &out) == -ENOMEM, "64TB populate mapped");
		/* Every thread of the team fails its loop; the run says why, once. */
		p.threads = 2;
		CHECK(pz_fault_run(&p, &clock, &out2) == -ENOMEM && out2.loops_done == 0,
		      "64TB populate mapped by 2 threads");
		pz_clock_close(&clock);
	} else {
		printf("skip: the 64TB mapping case (vm.overcommit_memory is 1)\n");
	}
}

/*
 * A cycles clock counts the thread that opened it; the run faults on a
 * team thread, which opens its own. $PAGEZERO_FAKE_CYCLES makes the clock
 * the opener's CPU time: read from the caller's clock instead, every sample
 * would be the time the caller spent running while it waited for the team,
 * about nothing. 1024 first touches, each clearing 4KB, take far more CPU
 * time than the 1 us asked of each sample here.
 */
static void test_thread_clock(void)
{
	struct pz_fault_params p = params(PZ_FAULT_DEMAND, 4 * MB, 1, 3, 0, 0);
	uint64_t wall[3], thread[3];
	struct pz_smaps_pages pages[3];
	struct pz_fault_out out = { .wall = wall, .thread = thread, .pages = pages };
	struct pz_clock clock;
	int ret;

	setenv("PAGEZERO_FAKE_CYCLES", "1", 1);
	pz_switches_load();
	CHECK(pz_clock_open(&clock, PZ_CLOCK_CYCLES) == 0 && clock.fake, "fake cycles clock");
	ret = pz_fault_run(&p, &clock, &out);
	CHECK(ret == 0 && out.loops_done == 3, "cycles run: %d, %u loops", ret, out.loops_done);
	for (unsigned l = 0; !ret && l < 3; l++)
		CHECK(wall[l] >= 1000 && thread[l] == wall[l],
		      "loop %u: %llu cycles: a clock that counts another thread", l,
		      (unsigned long long)wall[l]);
	p.threads = 2;
	CHECK(pz_fault_run(&p, &clock, &out) == -EINVAL,
	      "cycles across threads (no common count) accepted");
	pz_clock_close(&clock);
	unsetenv("PAGEZERO_FAKE_CYCLES");
	pz_switches_load();
}

/* A second thread that asks for a stop once the run has begun. */
static void *stop_later(void *arg)
{
	struct timespec nap = { 0, 20 * 1000 * 1000 };

	(void)arg;
	nanosleep(&nap, NULL);
	pz_stop_request(SIGTERM);
	return NULL;
}

/*
 * Stop requests: before the run no loop runs; during a run that would
 * take minutes, it ends with -EINTR, the loops it completed counted and
 * nothing left mapped (ASan and the smaps check of the next run see it).
 */
static void test_stop(void)
{
	for (unsigned threads = 1; threads <= 2; threads++) {
		struct pz_fault_params p = params(PZ_FAULT_DEMAND, 4 * MB, threads, 100000, 0, 0);
		uint64_t *wall = calloc(p.loops, sizeof(*wall));
		uint64_t *thread = calloc((size_t)p.loops * threads, sizeof(*thread));
		struct pz_smaps_pages *pages = calloc(p.loops, sizeof(*pages));
		struct pz_fault_out out = { .wall = wall, .thread = thread, .pages = pages };
		struct pz_clock clock;
		pthread_t tid;
		int ret;

		pz_clock_open(&clock, PZ_CLOCK_NS);
		p.profile = 1; /* the loop a stop cuts short contributes no sample */
		pz_stop_request(SIGINT);
		ret = pz_fault_run(&p, &clock, &out);
		CHECK(ret == -EINTR && out.loops_done == 0,
		      "threads %u: a stop before the run: %d, %u loops", threads, ret,
		      out.loops_done);
		pz_fault_profile_free(&out.profile);
		pz_stop_clear();

		CHECK(pthread_create(&tid, NULL, stop_later, NULL) == 0, "stop thread");
		ret = pz_fault_run(&p, &clock, &out);
		pthread_join(tid, NULL);
		CHECK(ret == -EINTR && out.loops_done < p.loops,
		      "threads %u: a stop during the run: %d, %u loops", threads, ret,
		      out.loops_done);
		if (!out.profile.err)
			check_profile_counts(&out.profile, out.loops_done, "stopped");
		pz_fault_profile_free(&out.profile);
		CHECK(pz_stop_requested() == SIGTERM, "the request keeps its signal");
		pz_stop_request(SIGHUP);
		CHECK(pz_stop_requested() == SIGTERM,
		      "a second signal does not replace the first (its exit status is reported)");
		for (unsigned i = 0; i < out.loops_done; i++)
			if (pages[i].rss < p.size * threads) {
				CHECK(0, "threads %u: completed loop %u has %llu bytes resident",
				      threads, i, (unsigned long long)pages[i].rss);
				break;
			}
		pz_stop_clear();
		pz_clock_close(&clock);
		free(wall);
		free(thread);
		free(pages);
	}
}

int main(void)
{
	test_once();
	test_perf_touch();
	test_base_page();
	test_thp_bytes();
	test_runs();
	test_profile();
	test_profile_budget();
	test_errors();
	test_thread_clock();
	test_stop();
	printf("test_fault: %lu passed, %lu failed\n", n_passed, n_failed);
	return n_failed ? 1 : 0;
}
