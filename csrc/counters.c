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
#include <unistd.h>

#include "counters.h"

#define PZ_CACHE_EVENT(cache, op, result) \
	((cache) | ((op) << 8) | ((result) << 16))

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
	[PZ_CTR_INSTRUCTIONS] = { "instructions", PERF_TYPE_HARDWARE,
				  PERF_COUNT_HW_INSTRUCTIONS },
};

const char *pz_counter_name(unsigned i)
{
	return i < PZ_CTR_COUNT ? events[i].name : "?";
}

int pz_counters_open(struct pz_counters *c, unsigned *failed)
{
	const char *fake = getenv("PAGEZERO_FAKE_COUNTERS");
	unsigned i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < PZ_CTR_COUNT; i++)
		c->fd[i] = -1;
	if (fake && *fake) {
		c->fake = 1;
		return 0;
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
		c->fd[i] = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
		if (c->fd[i] < 0) {
			err = errno;
			*failed = i;
			pz_counters_close(c);
			return -err;
		}
	}
	return 0;
}

void pz_counters_read(struct pz_counters *c, uint64_t v[PZ_CTR_COUNT])
{
	unsigned i;

	if (c->fake) {
		c->reads++;
		for (i = 0; i < PZ_CTR_COUNT; i++)
			v[i] = c->reads * (i + 1) * PZ_FAKE_COUNTER_STEP;
		return;
	}
	for (i = 0; i < PZ_CTR_COUNT; i++)
		if (read(c->fd[i], &v[i], sizeof(v[i])) != (ssize_t)sizeof(v[i]))
			v[i] = 0;
}

void pz_counters_close(struct pz_counters *c)
{
	unsigned i;

	for (i = 0; i < PZ_CTR_COUNT; i++) {
		if (c->fd[i] >= 0)
			close(c->fd[i]);
		c->fd[i] = -1;
	}
}
