/*
 * test_clock.c - the tsc clock ticks at the rate pz_tsc_hz() states.
 *
 * That rate turns tsc readings into cycles per byte and bytes per second,
 * so a wrong one (a misread CNTFRQ_EL0, a mismeasured TSC) would skew every
 * tsc result without failing anything else. Checked against
 * CLOCK_MONOTONIC_RAW over 100 ms; built and run natively from pytest and
 * cross-built for arm64 by tests/c/cross_arm64.sh, where the counter is
 * CNTVCT_EL0.
 *
 *   cc -O2 -Icsrc tests/c/test_clock.c csrc/clock.c csrc/cpu.c -lm && ./a.out
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"

static int failed;

static void check(int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok  " : "FAIL", what);
	failed |= !ok;
}

int main(void)
{
	struct pz_clock tsc, ns;
	uint64_t c0, c1, t0, t1, prev, v;
	struct timespec nap = { 0, 100 * 1000 * 1000 };
	double hz, rate;
	int err, i, monotonic = 1;
	char what[160];

	err = pz_clock_open(&tsc, PZ_CLOCK_TSC);
	if (err) {
		printf("SKIP tsc clock: %s\n", strerror(-err));
		return 0;
	}
	pz_clock_open(&ns, PZ_CLOCK_NS);
	hz = pz_tsc_hz();
	snprintf(what, sizeof(what), "pz_tsc_hz() = %.0f Hz is positive", hz);
	check(hz > 0.0, what);

	prev = pz_clock_read(&tsc);
	for (i = 0; i < 10000; i++) {
		v = pz_clock_read(&tsc);
		monotonic &= v >= prev;
		prev = v;
	}
	check(monotonic, "10000 successive tsc readings never go back");

	/*
	 * Both intervals span the same sleep, the tsc one inside the ns one, so
	 * their ratio is at most the counter's rate: a preemption between the
	 * reads only lowers it. The highest of three is the closest.
	 */
	rate = 0.0;
	for (i = 0; i < 3; i++) {
		double r;

		t0 = pz_clock_read(&ns);
		c0 = pz_clock_read(&tsc);
		nanosleep(&nap, NULL);
		c1 = pz_clock_read(&tsc);
		t1 = pz_clock_read(&ns);
		r = (double)(c1 - c0) * 1e9 / (double)(t1 - t0);
		if (r > rate)
			rate = r;
	}
	snprintf(what, sizeof(what),
		 "counted %.0f ticks/s against CLOCK_MONOTONIC_RAW, "
		 "within 2%% of %.0f Hz",
		 rate, hz);
	check(hz > 0.0 && fabs(rate / hz - 1.0) < 0.02, what);

	pz_clock_close(&tsc);
	pz_clock_close(&ns);
	return failed;
}
