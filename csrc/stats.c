/*
 * stats.c - nearest-rank percentiles and per-team aggregation of samples.
 *
 * The Python bindings only turn these results into dicts and tuples; the
 * arithmetic lives here once, testable without Python.
 */
#include <stdlib.h>

#include "stats.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

void pz_sort_u64(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
}

size_t pz_rank(size_t n, uint64_t num, uint64_t den)
{
	/*
	 * ceil(n num / den) in integers: n = a den + b, so n num / den = a num +
	 * b num / den, and b num < den * den fits in 64 bits for den <= 2^32.
	 * A double's q n + 0.999999 was no ceiling once n reaches a million:
	 * a rank's fraction below 1e-6 (1/10^7 of 10^7 + 3 samples is 1.0000003)
	 * fell to the rank below.
	 */
	uint64_t a = n / den, b = n % den;
	uint64_t k = a * num + (b * num + den - 1) / den;

	return k ? (size_t)PZ_MIN(k, (uint64_t)n) : 1;
}

uint64_t pz_percentile(const uint64_t *v, size_t n, uint64_t num, uint64_t den)
{
	return v[pz_rank(n, num, den) - 1];
}

void pz_latency_summarize(uint64_t *v, size_t n, struct pz_latency_summary *s)
{
	long double sum = 0;
	size_t i;

	pz_sort_u64(v, n);
	for (i = 0; i < n; i++)
		sum += v[i];
	s->min = v[0];
	s->p50 = pz_percentile(v, n, 500, 1000);
	s->p90 = pz_percentile(v, n, 900, 1000);
	s->p99 = pz_percentile(v, n, 990, 1000);
	s->p999 = pz_percentile(v, n, 999, 1000);
	s->max = v[n - 1];
	s->mean = (double)(sum / n);
}

void pz_team_loop_samples(const uint64_t *start, const uint64_t *end, const uint64_t *work,
			  size_t thread_stride, unsigned threads, unsigned loops, int cold,
			  uint64_t *out)
{
	unsigned t, i;

	for (i = 0; i < loops; i++) {
		uint64_t lo = UINT64_MAX, hi = 0, slowest = 0;

		for (t = 0; t < threads; t++) {
			size_t k = (size_t)t * thread_stride + i;

			lo = PZ_MIN(lo, start[k]);
			hi = end[k] > hi ? end[k] : hi;
			slowest = work[k] > slowest ? work[k] : slowest;
		}
		out[i] = cold ? slowest : hi - lo;
	}
}

void pz_team_counter_sums(const uint64_t *v, size_t thread_stride, unsigned threads, unsigned loops,
			  unsigned ncounters, uint64_t *sums)
{
	size_t n = (size_t)loops * ncounters, k;
	unsigned t;

	for (k = 0; k < n; k++) {
		uint64_t s = 0;

		for (t = 0; t < threads; t++)
			s += v[(size_t)t * thread_stride + k];
		sums[k] = s;
	}
}
