/*
 * sample.h - where the CPU is during the timed loops: perf_event_open(2)
 * sampling of the calling thread's instruction pointers, kernel and user.
 *
 * The kernel's own clearing (clear_page_erms, folio_zero_user, ...) runs
 * inside the fault: no user-space clock can time it apart from the fault
 * around it, but sampling where the CPU is while faulting can, on any
 * machine where perf events work. A hardware cycles event where the CPU has
 * a PMU; else the cpu-clock software event (an hrtimer, no PMU needed: most
 * VMs). One event per thread of a run (pid 0, any CPU), disabled until the
 * timed part of each loop enables it and disabled again after, so only the
 * timed faults are sampled; its ring buffer is read between loops
 * (pz_sampler_drain), untimed, into that loop's counts (struct
 * pz_sample_loop), so that a caller keeps the loops it keeps, and samples
 * the kernel lost (a ring that filled) are counted, never hidden.
 *
 * Each sample carries its period (PERF_SAMPLE_PERIOD): with cycles at a
 * frequency the kernel varies the period to hold the rate, so a share of
 * the time is a share of the periods summed, not of the samples counted
 * (cpu-clock's period is a fixed number of ns).
 *
 * Losses: since Linux 6.0 the event's read() counts them (PERF_FORMAT_LOST),
 * also those of a ring that was full when the loop ended, for which the
 * kernel writes no PERF_RECORD_LOST until space frees; a kernel that refuses
 * that read_format (EINVAL) is sampled without it, and its PERF_RECORD_LOST
 * records are counted instead. Never both: they count the same losses.
 *
 * Test switches (switches.h): PAGEZERO_REFUSE_PROFILE makes every open fail
 * with -EACCES, as perf_event_paranoid refuses an unprivileged user;
 * PAGEZERO_FAKE_MLOCK_KB=N lets the rings lock N KB in all, a ring mapped
 * beyond it failing with -EPERM, as perf_mmap() refuses a user without
 * CAP_IPC_LOCK past perf_event_mlock_kb.
 */
#ifndef PZ_SAMPLE_H
#define PZ_SAMPLE_H

#include "pz.h"
#include "names.h"

enum pz_sample_event {
	PZ_SAMPLE_CYCLES = 0, /* PERF_COUNT_HW_CPU_CYCLES, sample_freq */
	PZ_SAMPLE_CPU_CLOCK,  /* PERF_COUNT_SW_CPU_CLOCK, sample_period in ns */
	PZ_SAMPLE_EVENT_COUNT
};

/* perf's names of the events: "cycles", "cpu-clock". */
extern const struct pz_names pz_sample_event_names;

/* Samples per second of a thread's CPU time: a few kHz costs the rate about 1%. */
#define PZ_SAMPLE_HZ 4000u

/* Where opening a sampler failed. */
enum pz_sample_stage {
	PZ_SAMPLE_STAGE_OPEN = 0, /* perf_event_open(2), or a later ioctl or read of the event */
	PZ_SAMPLE_STAGE_MMAP,     /* mmap(2) of the sample ring (the locked-memory limit) */
	PZ_SAMPLE_STAGE_COUNT
};

/* Their names: "open", "mmap". */
extern const struct pz_names pz_sample_stage_names;

/* One loop's samples of one thread (all threads', summed, in struct pz_fault_profile). */
struct pz_sample_loop {
	uint64_t kernel;              /* kernel samples: their ips are the sampler's next */
	uint64_t user, user_period;   /* samples in user space, their periods summed */
	uint64_t other, other_period; /* in neither (a hypervisor's, a guest's) */
	uint64_t lost;                /* samples the kernel lost */
};

struct pz_sampler {
	int fd;                     /* -1 when closed */
	enum pz_sample_event event; /* the event opened */
	enum pz_sample_stage stage; /* what failed, where pz_sampler_open() did */
	int format_lost;            /* read() counts lost samples (PERF_FORMAT_LOST) */
	uint64_t lost_read;         /* what read() counted at the last drain */
	void *ring;                 /* the mapped ring: its metadata page, then the data */
	size_t ring_bytes;          /* the mapping's length */
	uint64_t *ips, *periods;    /* [n] kernel samples' instruction pointers and periods,
				       in order taken: loop by loop */
	size_t n, cap;
	struct pz_sample_loop *loops; /* [nloops]: loop i's counts */
	size_t nloops;
};

/*
 * Open a sampler on the calling thread, disabled: cycles, or cpu-clock where
 * the CPU has no PMU (or PAGEZERO_HIDE_PMU hides it). Its ring takes a
 * @sharers-th of the locked memory this user may map (pz_sample_ring_pages),
 * so that each of a run's @sharers threads gets one. 0, or -errno as
 * perf_event_open(2) or mmap(2) fail, @s->stage saying which: -EACCES or
 * -EPERM (perf_event_paranoid, a seccomp policy; for the mmap, the
 * locked-memory limit), -ENOENT or -ENODEV (no such event), -ENOSYS (no perf
 * events at all); nothing is left open on failure.
 */
int pz_sampler_open(struct pz_sampler *s, unsigned sharers);

/*
 * Data pages of a ring when @sharers rings share the locked memory
 * perf_mmap() lets this user map (perf_event_mlock_kb per online CPU, then
 * RLIMIT_MEMLOCK; unlimited with CAP_IPC_LOCK or perf_event_paranoid -1): a
 * power of two from MIN_RING_PAGES to RING_PAGES (sample.c): the smallest where
 * even that does not fit each, for mmap(2) to refuse or not.
 */
unsigned pz_sample_ring_pages(unsigned sharers);

/* Start or stop sampling (ioctl ENABLE / DISABLE): 0 or -errno. */
int pz_sampler_enable(struct pz_sampler *s, int on);

/*
 * Move the ring's records into @s as loop @loop's (untimed, after the loop's
 * disable; loops drained in order from 0): 0, or -ENOMEM, or the read's -errno.
 */
int pz_sampler_drain(struct pz_sampler *s, unsigned loop);

/* Close the event and its ring; the samples stay until pz_sampler_free. */
void pz_sampler_close(struct pz_sampler *s);

/* Free the samples. */
void pz_sampler_free(struct pz_sampler *s);

#endif /* PZ_SAMPLE_H */
