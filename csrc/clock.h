/*
 * clock.h - the clocks a timed loop can read.
 *
 *   ns       CLOCK_MONOTONIC_RAW in nanoseconds (default: not slewed by NTP)
 *   timeval  gettimeofday(), microseconds, as perf bench without -c
 *   cycles   perf_event_open() PERF_COUNT_HW_CPU_CYCLES, as perf bench -c
 *   tsc      a constant-rate counter's ticks (reference cycles): rdtsc on
 *            x86-64 (rate measured once), CNTVCT_EL0 on arm64 (rate from
 *            CNTFRQ_EL0, often 24-100 MHz: many CPU cycles per tick)
 *
 * A cycles clock counts the thread that opened it (perf_event_open with
 * pid 0 and no inherit): a thread that times its own work reads its own
 * instance, from pz_clock_open_thread().
 *
 * Test switches (switches.h, test builds only): PAGEZERO_FAKE_CYCLES makes the
 * cycles clock a test double where there is no PMU: it reads the opening
 * thread's CPU time (pthread_getcpuclockid, in ns), which, like a cycle counter
 * opened for one thread, advances only while that thread runs.
 *
 * PAGEZERO_FAKE_CLOCK_STEP_NS=N (N > 0) makes every clock, whatever
 * its kind, a counter that advances by exactly N per reading, counted per
 * thread: the Nth reading a thread takes returns N * step. A span between two
 * consecutive readings is then one step, whatever ran in it, so a timed loop's
 * sample tells how many spans it added up (a cold pass of k chunks: k steps).
 * Taken by pz_clock_open(), never inside a timed loop.
 */
#ifndef PZ_CLOCK_H
#define PZ_CLOCK_H

#include <time.h>

#include "pz.h"
#include "names.h"

enum pz_clock_id {
	PZ_CLOCK_NS = 0,
	PZ_CLOCK_TIMEVAL,
	PZ_CLOCK_CYCLES,
	PZ_CLOCK_TSC,
	PZ_CLOCK_COUNT
};

struct pz_clock {
	enum pz_clock_id id;
	int fd;              /* perf event for PZ_CLOCK_CYCLES, else -1 */
	int fake;            /* cycles: the PAGEZERO_FAKE_CYCLES double */
	clockid_t cpu_clock; /* fake: the opening thread's CPU-time clock */
	uint64_t fake_step;  /* PAGEZERO_FAKE_CLOCK_STEP_NS, or 0: the real clock */
};

/* The clocks' names, by id (names.h: pz_name, pz_lookup). */
extern const struct pz_names pz_clock_names;

/* 0, or -errno (-ENOENT/-EOPNOTSUPP: no such counter on this machine). */
int pz_clock_open(struct pz_clock *c, enum pz_clock_id id);
void pz_clock_close(struct pz_clock *c);

/*
 * For a thread that reads @shared's kind of clock around its own work:
 * a cycles clock is opened again, for the calling thread; any other clock
 * is copied (it reads the same from every thread). 0 or -errno, as
 * pz_clock_open; pz_clock_close() @mine afterwards in either case.
 */
int pz_clock_open_thread(struct pz_clock *mine, const struct pz_clock *shared);

/* A reading in the clock's own unit (ns, ns, cycles, tsc ticks). */
uint64_t pz_clock_read(const struct pz_clock *c);

/*
 * The tsc clock's rate in Hz: on x86-64 measured against CLOCK_MONOTONIC_RAW
 * once, on arm64 CNTFRQ_EL0; 0 when there is no such counter.
 */
double pz_tsc_hz(void);

#endif /* PZ_CLOCK_H */
