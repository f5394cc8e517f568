/*
 * stop.c - the stop request that signals set and the timed loops read (see stop.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "stop.h"
#include "switches.h"

/* The signal number of the pending request, 0 when none. Not static: pz_stopping() reads it. */
int pz_stop_signal;

static const int stop_signals[PZ_STOP_NSIG] = { SIGINT, SIGTERM, SIGHUP };

void pz_stop_request(int sig)
{
	int none = 0;

	/* The first signal decides (its exit status is the one reported): a later one keeps it. */
	__atomic_compare_exchange_n(&pz_stop_signal, &none, sig > 0 ? sig : SIGINT, 0,
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

int pz_stop_requested(void)
{
	return __atomic_load_n(&pz_stop_signal, __ATOMIC_SEQ_CST);
}

void pz_stop_clear(void)
{
	__atomic_store_n(&pz_stop_signal, 0, __ATOMIC_SEQ_CST);
}

static void on_stop_signal(int sig)
{
	pz_stop_request(sig);
}

int pz_stop_catch(struct pz_stop_saved *s)
{
	struct sigaction sa;
	int i;

	memset(s, 0, sizeof(*s));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	/*
	 * No SA_RESTART: a stop should also end a blocking call of the caller's
	 * (a sleep between runs) with EINTR. The loops themselves make none.
	 */
	sa.sa_flags = 0;
	for (i = 0; i < PZ_STOP_NSIG; i++) {
		/*
		 * A signal its starter chose to ignore (nohup's SIGHUP, a
		 * background job's SIGINT) stays ignored: read the action first
		 * and replace only the others. Saved either way, so that
		 * pz_stop_release() can walk the array back.
		 */
		if (sigaction(stop_signals[i], NULL, &s->old[i])) {
			int err = -errno;
			pz_stop_release(s);
			return err;
		}
		if (s->old[i].sa_handler != SIG_IGN &&
		    sigaction(stop_signals[i], &sa, &s->old[i])) {
			int err = -errno;

			pz_stop_release(s);
			return err;
		}
		s->caught = i + 1;
	}
	return 0;
}

void pz_stop_release(struct pz_stop_saved *s)
{
	while (s->caught > 0) {
		s->caught--;
		sigaction(stop_signals[s->caught], &s->old[s->caught], NULL);
	}
}

int pz_stop_release_take(struct pz_stop_saved *s)
{
	/*
	 * PAGEZERO_SIGNAL_AT_RELEASE=N (switches.h): signal N arrives now, after
	 * the run and before the handlers go back, the moment the old order (read
	 * the flag, release, clear it) lost it. raise() delivers it before it
	 * returns, to the handler still in place.
	 */
	if (pz_switch(PZ_SW_SIGNAL_AT_RELEASE))
		raise((int)pz_switch(PZ_SW_SIGNAL_AT_RELEASE));
	/*
	 * Release first, then take the flag in one exchange: a signal before the
	 * release is in the flag, one after it reaches the restored action, and
	 * none falls between a read and a clear.
	 */
	pz_stop_release(s);
	return __atomic_exchange_n(&pz_stop_signal, 0, __ATOMIC_SEQ_CST);
}
