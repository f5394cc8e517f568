/*
 * test_stats.c - csrc/stats.c: nearest-rank percentiles, the latency
 * summary and a team's per-loop aggregation, on samples whose answers are
 * known by hand.
 *
 *   TEST=stats bash tests/c/build.sh sanitize
 */
#include <stdio.h>

#include "stats.h"

static int checks, failed;

static void check(int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok  " : "FAIL", what);
	checks++;
	failed += !ok;
}

int main(void)
{
	uint64_t ten[10] = { 10, 9, 8, 7, 6, 5, 4, 3, 2, 1 };
	uint64_t one[1] = { 42 };
	struct pz_latency_summary s;
	/* Two threads, three loops: start, end and work at [t * 3 + i]. */
	const uint64_t start[6] = { 100, 200, 300, 105, 195, 310 };
	const uint64_t end[6] = { 150, 260, 330, 160, 250, 340 };
	const uint64_t work[6] = { 7, 9, 2, 8, 3, 5 };
	/* Two threads, two loops, two counters: [t * 4 + i * 2 + c]. */
	const uint64_t ctr[8] = { 1, 2, 3, 4, 10, 20, 30, 40 };
	uint64_t loop[3], sums[4];

	pz_latency_summarize(ten, 10, &s);
	check(ten[0] == 1 && ten[9] == 10, "summarize sorts in place");
	check(s.min == 1 && s.max == 10, "min and max");
	check(s.p50 == 5, "p50 of 1..10 is the 5th smallest (ceil(0.5 * 10))");
	check(s.p90 == 9 && s.p99 == 10 && s.p999 == 10, "p90 9th, p99 and p99.9 the 10th");
	check(s.mean > 5.49 && s.mean < 5.51, "mean 5.5");
	check(pz_percentile(ten, 10, 0.0) == 1, "p0 is the smallest");
	check(pz_percentile(ten, 10, 0.11) == 2, "p11 rounds the rank up");
	check(pz_percentile(one, 1, 0.99) == 42, "one sample is every percentile");

	pz_team_loop_samples(start, end, work, 3, 2, 3, 0, loop);
	check(loop[0] == 60 && loop[1] == 65 && loop[2] == 40,
	      "hot: first start to last end per loop");
	pz_team_loop_samples(start, end, work, 3, 2, 3, 1, loop);
	check(loop[0] == 8 && loop[1] == 9 && loop[2] == 5, "cold: the slowest thread's work");

	pz_team_counter_sums(ctr, 4, 2, 2, 2, sums);
	check(sums[0] == 11 && sums[1] == 22 && sums[2] == 33 && sums[3] == 44,
	      "counters summed over threads, loop by loop");
	printf("%d checks, %d failed\n", checks, failed);
	return failed != 0;
}
