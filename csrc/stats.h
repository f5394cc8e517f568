/*
 * stats.h - summaries of timed samples, kept out of the Python bindings.
 */
#ifndef PZ_STATS_H
#define PZ_STATS_H

#include "pz.h"

/*
 * The nearest rank of the fraction @num / @den of @n samples (n > 0, num <=
 * den, 0 < den <= 2^32): ceil(n num / den), and at least 1; 1-based. Integer
 * arithmetic, exact for any n: the fraction is given as a ratio (p99.9 is
 * 999 / 1000), not as a double that cannot hold it.
 */
size_t pz_rank(size_t n, uint64_t num, uint64_t den);

/*
 * Nearest-rank percentile of the sorted @v (n > 0): the smallest sample with
 * at least a fraction @num / @den of them at or below it (the pz_rank()-th smallest).
 */
uint64_t pz_percentile(const uint64_t *v, size_t n, uint64_t num, uint64_t den);

/* Sort @v ascending in place. */
void pz_sort_u64(uint64_t *v, size_t n);

struct pz_latency_summary {
	uint64_t min, p50, p90, p99, p999, max;
	double mean;
};

/* Sort @v (n > 0) in place and summarize it. */
void pz_latency_summarize(uint64_t *v, size_t n, struct pz_latency_summary *s);

/*
 * One sample per loop for a team of @threads threads: element (t, i) of
 * @start, @end and @work is at [t * thread_stride + i]. Hot: from the first
 * thread's start to the last one's end. Cold: the slowest thread's @work, as
 * the flushes between a thread's chunks are not clearing time.
 */
void pz_team_loop_samples(const uint64_t *start, const uint64_t *end, const uint64_t *work,
			  size_t thread_stride, unsigned threads, unsigned loops, int cold,
			  uint64_t *out);

/*
 * Per-loop counter deltas summed over a team: element (t, i, c) of @v is at
 * [t * thread_stride + i * ncounters + c]; @sums gets [i * ncounters + c].
 */
void pz_team_counter_sums(const uint64_t *v, size_t thread_stride, unsigned threads, unsigned loops,
			  unsigned ncounters, uint64_t *sums);

#endif /* PZ_STATS_H */
