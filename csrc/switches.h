/*
 * switches.h - the test switches: PAGEZERO_* environment variables that make the
 * C core fake what a test cannot count on finding (a clock that steps exactly, a
 * PMU, a CPU feature, a slow flush, an mmap(2) that fails).
 *
 * Compiled in only with -DPZ_TEST_SWITCHES (the C tests, tests/c/build.sh, and the
 * test build of the extension that the Python suite imports, tests/conftest.py). A
 * release build reads no environment variable: pz_switch() is the constant 0 there,
 * so the code each switch selects folds away, and no switch's name is in the binary.
 *
 * pz_switches_load() reads them all at once, where nothing else can be changing the
 * environment (the extension's import, with the GIL held; a C test between its
 * steps); the timed code reads only the parsed copy. getenv() inside a loop that
 * runs with the GIL released would race a Python thread's os.environ writes.
 */
#ifndef PZ_SWITCHES_H
#define PZ_SWITCHES_H

#include "pz.h"

enum pz_switch {
	PZ_SW_FAKE_CLOCK_STEP_NS,   /* N: every clock reading advances N ns (clock.h) */
	PZ_SW_FAKE_CYCLES,          /* the cycles clock reads thread CPU time (clock.h) */
	PZ_SW_FAKE_COUNTERS,        /* the counters' fake source (counters.h) */
	PZ_SW_FAKE_MULTIPLEXED,     /* every fake counter read looks multiplexed */
	PZ_SW_FAKE_COUNTER_COST_US, /* N: each fake counter read spends N us of CPU */
	PZ_SW_FAIL_COUNTER_READ,    /* N: the Nth read of each counter set fails */
	PZ_SW_FAKE_FLUSH_US,        /* N: each cache flush lasts N us longer (cache.h) */
	PZ_SW_HIDE_FEATURES,        /* CPU features named (comma-separated) are hidden */
	PZ_SW_HIDE_PMU,             /* the cycles clock and counters open as without a PMU */
	PZ_SW_FAIL_MAP,             /* N: the Nth pz_region_map() fails (region.h) */
	PZ_SW_FAIL_TEAM_INIT,       /* N: the Nth team's barrier init fails with EAGAIN (team.h) */
	PZ_SW_SIGNAL_AT_RELEASE, /* N: signal N arrives as the stop handlers are given back (stop.h) */
	PZ_SW_LOOP_DONE_FD,      /* N: a byte to fd N once a policy run's first loop is done */
	PZ_SW_FAKE_UNSETTLED, /* N: settle loops before the Nth read 2x, 3x, 2x... (mem_bench.c) */
	PZ_SW_REFUSE_PROFILE, /* sampling refused, as perf_event_paranoid would (sample.h) */
	PZ_SW_FAKE_MLOCK_KB,  /* N: the sample rings may lock N KB in all (sample.h) */
	PZ_SW_REFUSE_FORMAT_LOST, /* PERF_FORMAT_LOST refused, as before Linux 6.0 (sample.h) */
	PZ_SW_COUNT
};

#ifdef PZ_TEST_SWITCHES
/*
 * Read every switch from the environment, replacing what was read before, and
 * restart the count of pz_switch_nth(). Call it while no measurement runs. 0, or
 * -E2BIG when a value is longer than a switch keeps (nothing is changed then).
 */
int pz_switches_load(void);

/* "PAGEZERO_FAKE_CLOCK_STEP_NS", ... */
const char *pz_switch_name(enum pz_switch s);

/*
 * The environment's value of @s as loaded, or NULL when the switch is not in
 * effect (unset, empty, or a number that is not a positive decimal): what a result
 * records.
 */
const char *pz_switch_value(enum pz_switch s);

/* 1 on the Nth call since the load, N being @s's value; else 0 (thread-safe). */
int pz_switch_nth(enum pz_switch s);

/* Parsed: a number's value, 1 for a flag, HIDE_FEATURES' PZ_FEAT_* mask; 0 when off. */
extern uint64_t pz_switch_values[PZ_SW_COUNT];

static inline uint64_t pz_switch(enum pz_switch s)
{
	return pz_switch_values[s];
}
#else
static inline const char *pz_switch_name(enum pz_switch s)
{
	return "";
}

static inline const char *pz_switch_value(enum pz_switch s)
{
	return NULL;
}

static inline int pz_switch_nth(enum pz_switch s)
{
	return 0;
}

static inline uint64_t pz_switch(enum pz_switch s)
{
	return 0;
}
#endif

#endif /* PZ_SWITCHES_H */
