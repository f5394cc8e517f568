/*
 * stop.h - a process-wide request to stop the timed loops (SIGINT, SIGTERM,
 * SIGHUP).
 *
 * The timed loops run in C with the GIL released and never return to the
 * interpreter's signal handling, so a signal must reach them some other
 * way: a handler stores the signal number in one int, and every timed loop
 * of the core (mem_bench.c, fault.c, policy_bench.c) reads it between
 * loops and between chunks, batches or groups of pages. A run that sees it
 * stops within one loop: the loops it completed keep their samples, the
 * interrupted one is dropped, and the run returns -EINTR with the number of
 * completed loops in its loops_done.
 *
 * Storing a lock-free int with __atomic builtins is async-signal-safe
 * (C11 7.14.1.1 allows lock-free atomics in handlers); the loops read it
 * with relaxed loads, one L1 hit per check.
 */
#ifndef PZ_STOP_H
#define PZ_STOP_H

#include <signal.h>

/* The signals pz_stop_catch() turns into a stop request. */
#define PZ_STOP_NSIG 3

struct pz_stop_saved {
	struct sigaction old[PZ_STOP_NSIG]; /* the actions in place before pz_stop_catch */
	int caught; /* how many were saved (and, unless ignored, replaced) */
};

/* Ask every running loop to stop; @sig > 0 is recorded (async-signal-safe). */
void pz_stop_request(int sig);
/* 0, or the signal number of the pending request. */
int pz_stop_requested(void);
/* Forget the request (before the next run). */
void pz_stop_clear(void);

/*
 * Install handlers for SIGINT, SIGTERM and SIGHUP that call
 * pz_stop_request(); the previous actions are saved in @s. 0 or -errno
 * (nothing stays installed then). pz_stop_release() puts them back.
 */
int pz_stop_catch(struct pz_stop_saved *s);
void pz_stop_release(struct pz_stop_saved *s);

/*
 * pz_stop_release(), then the pending request taken: its signal number (0 if
 * none), the flag cleared. In that order no signal is lost: one that arrives
 * before the release is returned, one after it goes to the restored action.
 * Test switch (switches.h): PAGEZERO_SIGNAL_AT_RELEASE=N raises signal N
 * first, as if it arrived just as the run ended.
 */
int pz_stop_release_take(struct pz_stop_saved *s);

/* For the loops: nonzero once a stop was requested (a relaxed load). */
static inline int pz_stopping(void)
{
	extern int pz_stop_signal;

	return __atomic_load_n(&pz_stop_signal, __ATOMIC_RELAXED) != 0;
}

#endif /* PZ_STOP_H */
