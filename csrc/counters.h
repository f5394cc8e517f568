/*
 * counters.h - hardware counters read around each timed loop.
 *
 * The 2025 series proves cache-allocation elision with perf stat: L1-dcache
 * loads fall from 11.2 G to 0.19 G when clearing stops allocating lines.
 * These are the same events, counted for the calling thread in user space.
 * Without a PMU (most VMs) opening fails: never zeros passed off as counts.
 *
 * The five events are one group (the first is the leader), read together
 * with one read() (PERF_FORMAT_GROUP), so they count over the same
 * interval, and with the times the group was enabled and running: the
 * kernel multiplexes groups when the PMU has too few counters, and a loop
 * whose group did not run all the time it was enabled is refused (-EBUSY),
 * never scaled (see pz_counters_delta).
 *
 * Test doubles, for machines without a PMU (switches.h, test builds only):
 *   PAGEZERO_FAKE_COUNTERS substitutes a source whose counter i advances by
 *   (i + 1) * PZ_FAKE_COUNTER_STEP per read, plus whatever the reading thread
 *   passed to pz_counters_fake_add() (a test's hook standing for work that
 *   must not be counted).
 *   PAGEZERO_FAIL_COUNTER_READ=N makes the Nth read of each opened set
 *   fail with -EIO (real or fake source), as a read() error would.
 *   PAGEZERO_FAKE_MULTIPLEXED makes the fake group count only half the time
 *   it is enabled, as a group the kernel multiplexes with others: every delta
 *   is then refused (-EBUSY).
 *   PAGEZERO_FAKE_COUNTER_COST_US=N makes each fake read spend N us of the
 *   reading thread's CPU time, a read() syscall's cost magnified, so a test
 *   can see which timed span (if any) a counter read falls into.
 *   PAGEZERO_HIDE_PMU makes the real source fail to open as it does without
 *   a PMU; the fake source is unaffected.
 * pz_counters_open() takes them: a set keeps its source until closed.
 */
#ifndef PZ_COUNTERS_H
#define PZ_COUNTERS_H

#include "pz.h"

enum {
	PZ_CTR_L1D_LOADS = 0,
	PZ_CTR_L1D_LOAD_MISSES,
	PZ_CTR_LLC_LOAD_MISSES,
	PZ_CTR_CYCLES,
	PZ_CTR_INSTRUCTIONS,
	PZ_CTR_COUNT
};

#define PZ_FAKE_COUNTER_STEP 1000u

/* perf's name of counter @i: "L1-dcache-loads", ... */
const char *pz_counter_name(unsigned i);

struct pz_counters {
	int fd[PZ_CTR_COUNT]; /* fd[0] leads the group */
	int fake;
	int fake_multiplexed;  /* the fake group runs half the time it is enabled */
	uint64_t reads;        /* reads so far (the fake source's clock) */
	uint64_t fail_at;      /* 0, or the read that fails (PAGEZERO_FAIL_COUNTER_READ) */
	uint64_t fake_cost_ns; /* CPU time each fake read spends */
};

/* One reading of the group. */
struct pz_counter_snap {
	uint64_t v[PZ_CTR_COUNT];
	uint64_t enabled, running; /* ns the group was enabled / counting */
};

/*
 * Open every counter for the calling thread. 0, or -errno of the first that
 * failed (-ENOENT / -EOPNOTSUPP: no such event, i.e. no PMU), with @failed
 * set to its index; nothing stays open then.
 */
int pz_counters_open(struct pz_counters *c, unsigned *failed);
/* 0, or -errno when the read failed (-EIO for a short one): never a zero passed off as a count. */
int pz_counters_read(struct pz_counters *c, struct pz_counter_snap *s);
/*
 * @acc[i] += b - a for every counter. 0, or -EBUSY when the group was
 * multiplexed between @a and @b (ran for less time than it was enabled):
 * its counts then cover only part of the interval.
 */
int pz_counters_delta(const struct pz_counter_snap *a, const struct pz_counter_snap *b,
		      uint64_t acc[PZ_CTR_COUNT]);
void pz_counters_close(struct pz_counters *c);

/* Test double: the calling thread's fake counters advance by @n more (see above). */
void pz_counters_fake_add(uint64_t n);

#endif /* PZ_COUNTERS_H */
