/*
 * team.h - threads started together, pinned, meeting at a barrier every loop.
 *
 * Every benchmark that runs on more than the calling thread runs on a team:
 * memset/memcpy (mem_bench.c), the policy batches (policy_bench.c) and the
 * fault workloads (fault.c), so pinning, the start gate and the agreement
 * on when to stop are written once.
 */
#ifndef PZ_TEAM_H
#define PZ_TEAM_H

#include "pz.h"

#define PZ_MAX_THREADS 1024u

/*
 * A team: threads started together, on which both this file's loops and the
 * policy batches (policy_bench.c) run, so pinning and the start barrier are
 * written once. Each thread waits until every thread exists, pins itself to
 * cpus[t] (when @cpus is given), runs @setup, then meets the others at a
 * barrier; @body runs only when every thread's pinning and setup succeeded,
 * and @teardown runs for every thread whose setup did.
 */
struct pz_team_state;

/* What every thread of a team runs, the same for every run of a benchmark. */
struct pz_team_ops {
	int (*setup)(void *ctx, unsigned t); /* NULL, or 0 / -errno */
	void (*body)(void *ctx, unsigned t, struct pz_team_state *st);
	void (*teardown)(void *ctx, unsigned t); /* NULL, or undoes setup */
};

struct pz_team {
	unsigned threads; /* 1 .. PZ_MAX_THREADS */
	const int *cpus;  /* NULL, or threads CPU numbers */
	const struct pz_team_ops *ops;
	void *ctx;
};

/*
 * 0, -EINVAL (thread count), -ENOMEM, -EAGAIN (a thread, or the lock, condition or
 * barrier, could not be had) or a thread's -errno. Test switch (switches.h):
 * PAGEZERO_FAIL_TEAM_INIT=N fails the Nth run's barrier init since the load.
 */
int pz_team_run(const struct pz_team *team);
/* From @body: wait until every thread of the team gets here. */
void pz_team_sync(struct pz_team_state *st);
/*
 * From @body, before loop @loop (0, 1, ...): for loop > 0, meet the others
 * at the barrier (as pz_team_sync); 1 when every thread runs the loop, 0
 * when they all stop here, because a stop was requested (stop.h) or a
 * thread passed @give_up (its previous loop failed or was cut short).
 * Every thread gets the same answer for the same loop.
 */
int pz_team_next(struct pz_team_state *st, unsigned loop, int give_up);
/* From @body: threads that had reached the start barrier when this one passed it. */
unsigned pz_team_arrived(struct pz_team_state *st);

#endif /* PZ_TEAM_H */
