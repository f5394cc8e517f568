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
 * (pz_sampler_drain), untimed, and records the kernel lost (a ring that
 * filled) are counted, never hidden.
 *
 * Test switch (switches.h): PAGEZERO_REFUSE_PROFILE makes every open fail
 * with -EACCES, as perf_event_paranoid refuses an unprivileged user.
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

struct pz_sampler {
	int fd;                     /* -1 when closed */
	enum pz_sample_event event; /* the event opened */
	void *ring;                 /* the mapped ring: its metadata page, then the data */
	size_t ring_bytes;          /* the mapping's length */
	uint64_t *ips;              /* [n] kernel instruction pointers, in order taken */
	size_t n, cap;
	uint64_t user;  /* samples in user space */
	uint64_t other; /* samples in neither (a hypervisor's, a guest's) */
	uint64_t lost;  /* records the kernel lost (PERF_RECORD_LOST) */
};

/*
 * Open a sampler on the calling thread, disabled: cycles, or cpu-clock where
 * the CPU has no PMU (or PAGEZERO_HIDE_PMU hides it). 0, or -errno as
 * perf_event_open(2) or mmap(2) fail: -EACCES or -EPERM (perf_event_paranoid,
 * a seccomp policy), -ENOENT or -ENODEV (no such event), -ENOSYS (no perf
 * events at all); nothing is left open on failure.
 */
int pz_sampler_open(struct pz_sampler *s);

/* Start or stop sampling (ioctl ENABLE / DISABLE): 0 or -errno. */
int pz_sampler_enable(struct pz_sampler *s, int on);

/* Move the ring's records into @s (untimed, between loops): 0, or -ENOMEM. */
int pz_sampler_drain(struct pz_sampler *s);

/* Close the event and its ring; the samples (@s->ips) stay until pz_sampler_free. */
void pz_sampler_close(struct pz_sampler *s);

/* Free the samples. */
void pz_sampler_free(struct pz_sampler *s);

#endif /* PZ_SAMPLE_H */
