/*
 * fault.h - the fault workloads of `perf bench mem mmap`.
 *
 * Every first touch of an anonymous page makes the kernel zero it
 * (folio_zero_user() for huge pages), so the time to map a region and
 * fault in every page is the kernel's clearing rate plus its fault
 * overhead. As perf times it: mmap plus faulting every page inside the
 * timed region, munmap outside it, one sample per loop.
 *
 *   demand          mmap, then touch one byte per page
 *   populate        mmap with MAP_POPULATE
 *   populate-write  mmap, then madvise(MADV_POPULATE_WRITE)
 *
 * How a page is touched (enum pz_touch) is perf's for parity, or a write
 * only for the studies of the kernel's clearing: perf's read-then-write
 * makes a read fault map the shared zero page first where the compiler
 * keeps the read (arm64, or -O0), and a write fault then allocate and clear
 * a new page (hugetlb has no zero page: its read fault clears the folio),
 * where a write only takes one fault that clears the page.
 *
 * Each of the run's threads (a team, team.h; one thread by default) maps
 * and faults its own region of @size bytes; all start every loop together
 * behind the team's barrier.
 */
#ifndef PZ_FAULT_H
#define PZ_FAULT_H

#include "pz.h"
#include "names.h"
#include "clock.h"
#include "region.h"
#include "sample.h"
#include "team.h"

enum pz_fault_workload {
	PZ_FAULT_DEMAND = 0,
	PZ_FAULT_POPULATE,
	PZ_FAULT_POPULATE_WRITE,
	PZ_FAULT_COUNT
};

/* The byte demand writes with PZ_TOUCH_WRITE: not 0, so a test can find every touched byte. */
#define PZ_FAULT_MARK 0x5a

enum pz_touch {
	/* demand writes PZ_FAULT_MARK into each page; populate and populate-write touch nothing */
	PZ_TOUCH_WRITE = 0,
	/*
	 * perf's mmap_page_touch (tools/perf/bench/mem-functions.c) after every
	 * workload's mapping, populated ones too: page i's byte = itself + i,
	 * a read then a write
	 */
	PZ_TOUCH_PERF,
	PZ_TOUCH_COUNT
};

/* The touches' names, by id: "write", "perf". */
extern const struct pz_names pz_touch_names;

/* The workloads' names and descriptions, by id (names.h: pz_name, pz_lookup). */
extern const struct pz_names pz_fault_names, pz_fault_descriptions;

struct pz_fault_params {
	enum pz_fault_workload workload;
	size_t size;         /* bytes each thread maps per loop: a multiple of the page, > 0 */
	unsigned page_shift; /* base_shift (the base page), or 21 or 30 above it (hugetlb) */
	unsigned base_shift; /* the kernel's base page shift; 0 reads it (pz_base_page_shift) */
	enum pz_thp thp;     /* base pages only: ON asks for THP, OFF refuses it */
	enum pz_touch touch;
	unsigned loops;   /* > 0 */
	unsigned threads; /* 1 .. PZ_MAX_THREADS (team.h), not pinned */
	unsigned seed;    /* demand: 0 writes offset 0 of each page, else a random
				   offset, thread t drawing as after srand(seed + t) */
	size_t lat_unit;  /* 0, or bytes per latency sample: a multiple of the page
				   (demand and populate-write only) */
	int profile;      /* sample where each thread's CPU is in its timed passes (sample.h) */
};

/*
 * What sampling the timed passes of the completed loops found
 * (pz_fault_params.profile): a loop a stop request cut short, or one that
 * failed, contributes nothing.
 */
struct pz_fault_profile {
	int err;                    /* 0, or the first thread's sampler error: nothing sampled */
	enum pz_sample_stage stage; /* with err: what was refused */
	enum pz_sample_event event;
	int format_lost;         /* losses counted by read() (PERF_FORMAT_LOST), not records */
	uint64_t *ips, *periods; /* [n] kernel samples, loop-major: loop 0's (thread 0's,
				    thread 1's, ...), then loop 1's, ... */
	size_t n;
	struct pz_sample_loop *loops; /* [loops_done]: every thread's counts summed */
	struct pz_sample_loop total;  /* the loops' counts summed */
};

struct pz_fault_out {
	uint64_t *wall;                  /* [loops]: first thread's start to last thread's end */
	uint64_t *thread;                /* [loops * threads]: each thread's map + fault time */
	uint64_t *thread_cpu;            /* NULL, or [loops * threads]: that thread's CPU time
					   (ns, CLOCK_THREAD_CPUTIME_ID) around the same span */
	struct pz_smaps_pages *pages;    /* [loops]: the threads' regions' smaps entries (region.h),
					   read after the timed pass and before munmap */
	uint64_t *lat;                   /* NULL, or [loops * threads * (size / lat_unit)] in ns */
	unsigned loops_done;             /* loops completed: the valid entries (see pz_fault_run) */
	struct pz_fault_profile profile; /* filled with p->profile; a refusal is no error */
};

/* Free a profile's arrays (pz_fault_run allocates them, also for a refusal: none then). */
void pz_fault_profile_free(struct pz_fault_profile *prof);

/* Latency samples one run records (0 without lat_unit; SIZE_MAX when that overflows). */
size_t pz_fault_lat_count(const struct pz_fault_params *p);

/*
 * 0, or -EINVAL for parameters the runs refuse: a page shift other than
 * the base page's or 21 or 30 above it (so 12 on a 64KB-page kernel), a
 * size not a positive multiple of the page, THP on other than base pages,
 * an unknown touch, a latency unit that is not a multiple of the page that
 * divides the size (or with populate, which has no fault to time), a
 * cycles clock with more than one thread (each counts its own). The runs
 * check them first too; a caller checks before mapping anything.
 */
int pz_fault_check(const struct pz_fault_params *p, enum pz_clock_id clock);

/*
 * Run @p->loops loops, filling @out (clock units, except latencies: ns).
 * 0 or -errno: -ENOMEM (mmap refused: for hugetlb, too few free pages),
 * -EOPNOTSUPP (the kernel has no MADV_POPULATE_WRITE), -EAGAIN (a thread
 * could not be started), -EINVAL (bad parameters; a cycles clock with more
 * than one thread), pz_clock_open's error (each thread opens its own cycles
 * clock: pz_clock_open_thread), -EINTR (a stop request,
 * stop.h, came: before a loop, or within a demand or latency pass, whose
 * loop is dropped). @out->loops_done loops are complete either way.
 * Nothing stays mapped. With @p->profile, each thread samples its timed
 * passes only (the ring is read after every loop, untimed): the run goes on
 * where sampling is refused, @out->profile.err saying why; its samples are
 * the caller's to free (pz_fault_profile_free) either way.
 */
int pz_fault_run(const struct pz_fault_params *p, const struct pz_clock *clock,
		 struct pz_fault_out *out);

/*
 * One untimed pass of @p's workload (thread 0's offsets), leaving the region
 * mapped in @r for inspection; pz_region_unmap() releases it. @pages says
 * what the kernel gave it. 0 or -errno as pz_fault_run; on failure nothing
 * stays mapped.
 */
int pz_fault_once(const struct pz_fault_params *p, struct pz_region *r,
		  struct pz_smaps_pages *pages);

#endif /* PZ_FAULT_H */
