/*
 * clock.c - the clocks a timed loop reads. Every reading is cheap and has
 * no failure path: whatever can fail (opening the cycle counter) happens
 * in pz_clock_open(), before timing starts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cpu.h"
#include "switches.h"

static const char *const clock_names[PZ_CLOCK_COUNT] = {
	[PZ_CLOCK_NS] = "ns",
	[PZ_CLOCK_TIMEVAL] = "timeval",
	[PZ_CLOCK_CYCLES] = "cycles",
	[PZ_CLOCK_TSC] = "tsc",
};

const struct pz_names pz_clock_names = { clock_names, PZ_CLOCK_COUNT };

static uint64_t raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The "tsc" clock is each architecture's constant-rate counter, in its ticks:
 * reference cycles, not the CPU's. On x86-64 the TSC, at about the nominal
 * frequency; on arm64 the generic timer's virtual count (CNTVCT_EL0), which
 * Linux lets user space read on every arm64 machine (the vDSO reads it too),
 * ticking at CNTFRQ_EL0: often 24 to 100 MHz (1 GHz from Armv8.6), so one tick
 * spans tens of CPU cycles and a tsc "cycles/byte" there is ticks per byte.
 */
static inline uint64_t read_tsc(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;

	/*
	 * Intel SDM vol. 2B, RDTSC: "If software requires RDTSC to be executed
	 * only after all previous instructions have executed [...] it can
	 * execute LFENCE immediately before RDTSC. If software requires RDTSC
	 * to be executed prior to execution of any subsequent instruction
	 * (including any memory accesses), it can execute the sequence LFENCE
	 * immediately after RDTSC." Both: without the second fence the
	 * kernel's first stores can start before the start time is taken.
	 * (AMD: LFENCE is dispatch serializing where Linux sets
	 * MSR_AMD64_DE_CFG bit 1, as it does on every Zen.)
	 */
	__asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
	uint64_t v;

	/*
	 * isb before, like lfence: the counter may otherwise be read ahead of
	 * earlier work; isb after, so later work cannot start before the read
	 * (Arm ARM D11.2.2: reads of CNTVCT_EL0 can occur speculatively and
	 * out of order relative to other instructions).
	 */
	__asm__ volatile("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(v) : : "memory");
	return v;
#else
	return raw_ns();
#endif
}

static int open_cycles(void)
{
	struct perf_event_attr attr;
	long fd;

	if (pz_switch(PZ_SW_HIDE_PMU))
		return -ENOENT; /* as perf_event_open(2) without a PMU */
	/* What perf bench -c opens: this task's CPU cycles, user and kernel. */
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_HARDWARE;
	attr.size = sizeof(attr);
	attr.config = PERF_COUNT_HW_CPU_CYCLES;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

/* Per thread, so that another thread's readings never land inside this one's spans. */
static uint64_t fake_clock_read(uint64_t step)
{
	static __thread uint64_t readings;

	return ++readings * step;
}

static uint64_t cpu_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int pz_clock_open(struct pz_clock *c, enum pz_clock_id id)
{
	memset(c, 0, sizeof(*c));
	c->id = id;
	c->fd = -1;
	c->fake_step = pz_switch(PZ_SW_FAKE_CLOCK_STEP_NS);
	switch (id) {
	case PZ_CLOCK_NS:
	case PZ_CLOCK_TIMEVAL:
		return 0;
	case PZ_CLOCK_TSC:
#if defined(__x86_64__)
		return (pz_cpu_features() & PZ_FEAT_TSC) ? 0 : -ENOTSUP;
#elif defined(__aarch64__)
		return 0;
#else
		return -ENOTSUP;
#endif
	case PZ_CLOCK_CYCLES: {
		int fd;

		if (pz_switch(PZ_SW_FAKE_CYCLES)) {
			c->fake = 1;
			return -pthread_getcpuclockid(pthread_self(), &c->cpu_clock);
		}
		fd = open_cycles();

		if (fd < 0)
			return fd;
		c->fd = fd;
		return 0;
	}
	default:
		return -EINVAL;
	}
}

int pz_clock_open_thread(struct pz_clock *mine, const struct pz_clock *shared)
{
	if (shared->id == PZ_CLOCK_CYCLES)
		return pz_clock_open(mine, shared->id);
	*mine = *shared;
	mine->fd = -1; /* never closes @shared's */
	return 0;
}

void pz_clock_close(struct pz_clock *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

uint64_t pz_clock_read(const struct pz_clock *c)
{
	if (c->fake_step)
		return fake_clock_read(c->fake_step);
	switch (c->id) {
	case PZ_CLOCK_TIMEVAL: {
		struct timeval tv;

		gettimeofday(&tv, NULL);
		return (uint64_t)tv.tv_sec * 1000000000ull + (uint64_t)tv.tv_usec * 1000ull;
	}
	case PZ_CLOCK_CYCLES: {
		uint64_t v = 0;

		if (c->fake)
			return cpu_ns(c->cpu_clock);
		if (read(c->fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
			v = 0;
		return v;
	}
	case PZ_CLOCK_TSC:
		return read_tsc();
	case PZ_CLOCK_NS:
	default:
		return raw_ns();
	}
}

/*
 * The TSC ticks at a constant rate on anything with constant_tsc; measure
 * that rate against CLOCK_MONOTONIC_RAW over ~50 ms, keeping the best of a
 * few tries. (arm64 needs no measurement: CNTFRQ_EL0 states its rate.)
 */
#if defined(__x86_64__)
static double measure_tsc_hz(void)
{
	double best = 0.0;
	int i;

	for (i = 0; i < 3; i++) {
		uint64_t t0 = raw_ns(), c0 = read_tsc(), t1, c1;
		struct timespec nap = { 0, 50 * 1000 * 1000 };

		nanosleep(&nap, NULL);
		c1 = read_tsc();
		t1 = raw_ns();
		if (t1 > t0) {
			double hz = (double)(c1 - c0) * 1e9 / (double)(t1 - t0);

			/* The tsc interval lies inside the ns one: the largest estimate is the closest. */
			if (hz > best)
				best = hz;
		}
	}
	return best;
}
#endif

double pz_tsc_hz(void)
{
	static double hz = -1.0;

#if defined(__x86_64__)
	if (hz < 0.0)
		hz = (pz_cpu_features() & PZ_FEAT_TSC) ? measure_tsc_hz() : 0.0;
#elif defined(__aarch64__)
	/* CNTFRQ_EL0 states the counter's rate (firmware sets it; Linux relies on it). */
	if (hz < 0.0) {
		uint64_t f;

		__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(f));
		hz = (double)f;
	}
#else
	hz = 0.0;
#endif
	return hz;
}
