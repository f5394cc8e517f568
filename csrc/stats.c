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

uint64_t pz_percentile(const uint64_t *v, size_t n, double q)
{
	/* ceil(q n) without floating-point surprises at exact ranks (0.5 * 10 = 5). */
	size_t k = (size_t)(q * (double)n + 0.999999);

	return v[k ? PZ_MIN(k, n) - 1 : 0];
}

void pz_latency_summarize(uint64_t *v, size_t n, struct pz_latency_summary *s)
{
	long double sum = 0;
	size_t i;

	pz_sort_u64(v, n);
	for (i = 0; i < n; i++)
		sum += v[i];
	s->min = v[0];
	s->p50 = pz_percentile(v, n, 0.50);
	s->p90 = pz_percentile(v, n, 0.90);
	s->p99 = pz_percentile(v, n, 0.99);
	s->p999 = pz_percentile(v, n, 0.999);
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
