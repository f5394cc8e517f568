/*
 * test_stats.c - csrc/stats.c: nearest-rank percentiles, the latency
 * summary and a team's per-loop aggregation, on samples whose answers are
 * known by hand.
 *
 *   TEST=stats bash tests/c/build.sh sanitize
 */
#include <stdio.h>
#include <stdlib.h>

#include "stats.h"

static int checks, failed;

static void check(int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok  " : "FAIL", what);
	checks++;
	failed += !ok;
}

/* The nearest rank by its definition: the smallest k >= 1 with k / n >= num / den. */
static size_t exact_rank(size_t n, uint64_t num, uint64_t den)
{
	unsigned __int128 want = (unsigned __int128)n * num;
	size_t k = (size_t)(want / den);

	if ((unsigned __int128)k * den < want)
		k++;
	return k ? k : 1;
}

/*
 * Ranks at a million samples and more, and at odd sizes, against the exact
 * nearest rank: the old double formula, q n + 0.999999 truncated, put
 * 1/10^7 of 10^7 + 3 samples (1.0000003) at rank 1, not 2, and any rank
 * whose fraction falls below 1e-6 one short.
 */
static void test_ranks(void)
{
	static const size_t sizes[] = { 1,        2,        3,         7,          999983,
					1000000,  1000001,  1000003,   9999991,    10000000,
					10000001, 10000003, 100000007, 4294967311u };
	static const uint64_t fractions[][2] = {
		{ 0, 1 },
		{ 1, 1 },
		{ 1, 2 },
		{ 9, 10 },
		{ 99, 100 },
		{ 999, 1000 },
		{ 9999, 10000 },
		{ 999999, 1000000 },
		{ 1, 10000000 },
		{ 9999999, 10000000 },
		{ 1, 3 },
		{ 2, 3 },
		{ 1, 1000003 },
		{ 1000002, 1000003 },
		{ 4294967295u, 4294967296u },
	};
	size_t i, j, bad = 0, n = 1000001;
	uint64_t *v = malloc(n * sizeof(*v));

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (j = 0; j < sizeof(fractions) / sizeof(fractions[0]); j++)
			if (pz_rank(sizes[i], fractions[j][0], fractions[j][1]) !=
			    exact_rank(sizes[i], fractions[j][0], fractions[j][1])) {
				printf("rank of %llu/%llu of %zu: %zu, not %zu\n",
				       (unsigned long long)fractions[j][0],
				       (unsigned long long)fractions[j][1], sizes[i],
				       pz_rank(sizes[i], fractions[j][0], fractions[j][1]),
				       exact_rank(sizes[i], fractions[j][0], fractions[j][1]));
				bad++;
			}
	check(bad == 0, "ranks at 10^6, 10^7 and odd sizes are the exact nearest ranks");
	check(pz_rank(10000003, 1, 10000000) == 2, "1/10^7 of 10^7 + 3 samples is the 2nd");
	check(v != NULL, "a million samples allocated");
	if (!v)
		return;
	for (i = 0; i < n; i++)
		v[i] = 10 * i + 10; /* the k-th smallest is 10 k */
	check(pz_percentile(v, n, 999, 1000) == 10 * exact_rank(n, 999, 1000),
	      "p99.9 of 10^6 + 1 samples is the sample at the exact rank");
	check(pz_percentile(v, n, 1, 1000000) == 20, "p0.0001 of 10^6 + 1 samples is the 2nd");
	free(v);
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
	check(pz_percentile(ten, 10, 0, 100) == 1, "p0 is the smallest");
	check(pz_percentile(ten, 10, 11, 100) == 2, "p11 rounds the rank up");
	check(pz_percentile(one, 1, 99, 100) == 42, "one sample is every percentile");
	test_ranks();

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
