/*
 * counters.c - perf_event_open() counters (see counters.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "counters.h"
#include "switches.h"

#define PZ_CACHE_EVENT(cache, op, result) ((cache) | ((op) << 8) | ((result) << 16))

static const struct {
	const char *name;
	uint32_t type;
	uint64_t config;
} events[PZ_CTR_COUNT] = {
	[PZ_CTR_L1D_LOADS] = { "L1-dcache-loads", PERF_TYPE_HW_CACHE,
			       PZ_CACHE_EVENT(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ,
					      PERF_COUNT_HW_CACHE_RESULT_ACCESS) },
	[PZ_CTR_L1D_LOAD_MISSES] = { "L1-dcache-load-misses", PERF_TYPE_HW_CACHE,
				     PZ_CACHE_EVENT(PERF_COUNT_HW_CACHE_L1D,
						    PERF_COUNT_HW_CACHE_OP_READ,
						    PERF_COUNT_HW_CACHE_RESULT_MISS) },
	[PZ_CTR_LLC_LOAD_MISSES] = { "LLC-load-misses", PERF_TYPE_HW_CACHE,
				     PZ_CACHE_EVENT(PERF_COUNT_HW_CACHE_LL,
						    PERF_COUNT_HW_CACHE_OP_READ,
						    PERF_COUNT_HW_CACHE_RESULT_MISS) },
	[PZ_CTR_CYCLES] = { "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	[PZ_CTR_INSTRUCTIONS] = { "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
};

const char *pz_counter_name(unsigned i)
{
	return i < PZ_CTR_COUNT ? events[i].name : "?";
}

/* Every fake counter of this thread advances by this much more (pz_counters_fake_add). */
static __thread uint64_t fake_extra;

void pz_counters_fake_add(uint64_t n)
{
	fake_extra += n;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The fake read's cost: spin until this thread has run @ns more. */
static void spend_cpu(uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns;

	while (thread_cpu_ns() < end)
		;
}

int pz_counters_open(struct pz_counters *c, unsigned *failed)
{
	unsigned i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < PZ_CTR_COUNT; i++)
		c->fd[i] = -1;
	c->fail_at = pz_switch(PZ_SW_FAIL_COUNTER_READ);
	if (pz_switch(PZ_SW_FAKE_COUNTERS)) {
		c->fake = 1;
		c->fake_multiplexed = (int)pz_switch(PZ_SW_FAKE_MULTIPLEXED);
		c->fake_cost_ns = pz_switch(PZ_SW_FAKE_COUNTER_COST_US) * 1000u;
		return 0;
	}
	if (pz_switch(PZ_SW_HIDE_PMU)) {
		*failed = 0; /* the first event, as perf_event_open(2) without a PMU */
		return -ENOENT;
	}
	for (i = 0; i < PZ_CTR_COUNT; i++) {
		struct perf_event_attr attr;
		int err;

		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = events[i].type;
		attr.config = events[i].config;
		/* The clearing runs in user space; excluding the kernel also suits paranoid 2. */
		attr.exclude_kernel = 1;
		attr.exclude_hv = 1;
		attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
				   PERF_FORMAT_TOTAL_TIME_RUNNING;
		/* CLOEXEC: a child the process starts must not inherit (and keep) the PMU. */
		c->fd[i] = (int)syscall(SYS_perf_event_open, &attr, 0, -1, i ? c->fd[0] : -1,
					PERF_FLAG_FD_CLOEXEC);
		if (c->fd[i] < 0) {
			err = errno;
			*failed = i;
			pz_counters_close(c);
			return -err;
		}
	}
	return 0;
}

int pz_counters_read(struct pz_counters *c, struct pz_counter_snap *s)
{
	/* PERF_FORMAT_GROUP with both times: nr, time_enabled, time_running, then each value. */
	uint64_t buf[3 + PZ_CTR_COUNT];
	ssize_t n;
	unsigned i;

	if (++c->reads == c->fail_at)
		return -EIO;
	if (c->fake) {
		if (c->fake_cost_ns)
			spend_cpu(c->fake_cost_ns);
		for (i = 0; i < PZ_CTR_COUNT; i++)
			s->v[i] = c->reads * (i + 1) * PZ_FAKE_COUNTER_STEP + fake_extra;
		s->enabled = s->running = c->reads;
		if (c->fake_multiplexed)
			s->enabled = 2 * c->reads;
		return 0;
	}
	n = read(c->fd[0], buf, sizeof(buf));
	if (n < 0)
		return -errno;
	if (n != (ssize_t)sizeof(buf) || buf[0] != PZ_CTR_COUNT)
		return -EIO;
	s->enabled = buf[1];
	s->running = buf[2];
	for (i = 0; i < PZ_CTR_COUNT; i++)
		s->v[i] = buf[3 + i];
	return 0;
}

int pz_counters_delta(const struct pz_counter_snap *a, const struct pz_counter_snap *b,
		      uint64_t acc[PZ_CTR_COUNT])
{
	unsigned i;

	/*
	 * Refused rather than scaled by enabled / running: a group counts all
	 * or nothing, and scaling assumes the events were spread evenly over
	 * the interval, which a loop of flushes and clears is not; the counts
	 * this tool exists to show (L1 loads that collapse when clearing stops
	 * allocating lines) would come out as guesses that look like counts.
	 */
	if (b->running - a->running < b->enabled - a->enabled)
		return -EBUSY;
	for (i = 0; i < PZ_CTR_COUNT; i++)
		acc[i] += b->v[i] - a->v[i];
	return 0;
}

void pz_counters_close(struct pz_counters *c)
{
	unsigned i;

	/* Members first: closing the leader first would leave them counting alone. */
	for (i = PZ_CTR_COUNT; i-- > 0;) {
		if (c->fd[i] >= 0)
			close(c->fd[i]);
		c->fd[i] = -1;
	}
}
