/*
 * clock.h - the clocks a timed loop can read.
 *
 *   ns       CLOCK_MONOTONIC_RAW in nanoseconds (default: not slewed by NTP)
 *   timeval  gettimeofday(), microseconds, as perf bench without -c
 *   cycles   perf_event_open() PERF_COUNT_HW_CPU_CYCLES, as perf bench -c
 *   tsc      a constant-rate counter: rdtsc on x86-64 (rate measured once),
 *            CNTVCT_EL0 on arm64 (rate from CNTFRQ_EL0)
 */
#ifndef PZ_CLOCK_H
#define PZ_CLOCK_H

#include "pz.h"

enum pz_clock_id {
	PZ_CLOCK_NS = 0,
	PZ_CLOCK_TIMEVAL,
	PZ_CLOCK_CYCLES,
	PZ_CLOCK_TSC,
	PZ_CLOCK_COUNT
};

struct pz_clock {
	enum pz_clock_id id;
	int fd;                 /* perf event for PZ_CLOCK_CYCLES, else -1 */
};

/* Name <-> id. pz_clock_lookup returns -1 for an unknown name. */
const char *pz_clock_name(enum pz_clock_id id);
int pz_clock_lookup(const char *name);

/* 0, or -errno (-ENOENT/-EOPNOTSUPP: no such counter on this machine). */
int pz_clock_open(struct pz_clock *c, enum pz_clock_id id);
void pz_clock_close(struct pz_clock *c);

/* A reading in the clock's own unit (ns, ns, cycles, tsc ticks). */
uint64_t pz_clock_read(const struct pz_clock *c);

/*
 * The tsc clock's rate in Hz: on x86-64 measured against CLOCK_MONOTONIC_RAW
 * once, on arm64 CNTFRQ_EL0; 0 when there is no such counter.
 */
double pz_tsc_hz(void);

#endif /* PZ_CLOCK_H */
