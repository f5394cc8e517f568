/*
 * team.c - threads started together, pinned, meeting at a barrier (see team.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "stop.h"
#include "switches.h"
#include "team.h"

struct pz_team_state {
	const struct pz_team *team;
	/*
	 * Threads are created one by one and creation can fail part-way, which a
	 * pthread barrier cannot absorb (its count is fixed); so they first wait
	 * at a gate the creator opens once all exist, or opens with @abort set.
	 */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int open, abort;
	pthread_barrier_t barrier;
	atomic_uint arrived; /* threads that reached the first barrier */
	atomic_int failed;   /* a thread's setup failed: nobody times anything */
	/*
	 * The first loop nobody runs: a thread that sees a stop request (or
	 * gave up its own pass) lowers it before a barrier, and every thread
	 * compares it with its loop index after the barrier. All writes for
	 * loop i happen before barrier i and every read for loop i after it,
	 * so each thread takes the same decision for each loop.
	 */
	atomic_uint stop_loop;
	struct pz_team_member {
		struct pz_team_state *st;
		unsigned t;
		pthread_t tid;
		int err;
	} * m;
};

void pz_team_sync(struct pz_team_state *st)
{
	pthread_barrier_wait(&st->barrier);
}

static void lower_stop_loop(struct pz_team_state *st, unsigned loop)
{
	unsigned cur = atomic_load(&st->stop_loop);

	while (loop < cur && !atomic_compare_exchange_weak(&st->stop_loop, &cur, loop))
		;
}

int pz_team_next(struct pz_team_state *st, unsigned loop, int give_up)
{
	if (loop > 0) {
		if (give_up || pz_stopping())
			lower_stop_loop(st, loop);
		pthread_barrier_wait(&st->barrier);
	}
	return atomic_load(&st->stop_loop) > loop;
}

unsigned pz_team_arrived(struct pz_team_state *st)
{
	return atomic_load(&st->arrived);
}

static void *team_main(void *arg)
{
	struct pz_team_member *m = arg;
	struct pz_team_state *st = m->st;
	const struct pz_team *team = st->team;
	int set_up = 0;

	pthread_mutex_lock(&st->lock);
	while (!st->open)
		pthread_cond_wait(&st->cond, &st->lock);
	pthread_mutex_unlock(&st->lock);
	if (st->abort)
		return NULL;

	if (team->cpus) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(team->cpus[m->t], &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			m->err = -errno;
	}
	if (!m->err && team->ops->setup) {
		m->err = team->ops->setup(team->ctx, m->t);
		set_up = !m->err;
	}
	if (m->err)
		atomic_store(&st->failed, 1);

	atomic_fetch_add(&st->arrived, 1);
	/* Loop 0 starts behind this barrier: a stop requested by now means no loop at all. */
	if (pz_stopping())
		lower_stop_loop(st, 0);
	pthread_barrier_wait(&st->barrier);
	/* Everyone's setup is done and every thread reads the same flag now. */
	if (!atomic_load(&st->failed))
		team->ops->body(team->ctx, m->t, st);
	if (set_up && team->ops->teardown)
		team->ops->teardown(team->ctx, m->t);
	return NULL;
}

int pz_team_run(const struct pz_team *team)
{
	struct pz_team_state st;
	unsigned t, started = 0;
	int ret = 0;

	if (team->threads == 0 || team->threads > PZ_MAX_THREADS)
		return -EINVAL;
	memset(&st, 0, sizeof(st));
	st.team = team;
	atomic_init(&st.stop_loop, UINT_MAX);
	st.m = calloc(team->threads, sizeof(*st.m));
	if (!st.m)
		return -ENOMEM;
	/* Each can fail (EAGAIN, ENOMEM): a team without its lock or barrier cannot start. */
	ret = -pthread_mutex_init(&st.lock, NULL);
	if (ret)
		goto out_free;
	ret = -pthread_cond_init(&st.cond, NULL);
	if (ret)
		goto out_lock;
	/* PAGEZERO_FAIL_TEAM_INIT=N (switches.h): the clean-up after a lock and a condition. */
	ret = pz_switch_nth(PZ_SW_FAIL_TEAM_INIT)
		      ? -EAGAIN
		      : -pthread_barrier_init(&st.barrier, NULL, team->threads);
	if (ret)
		goto out_cond;
	for (; started < team->threads; started++) {
		st.m[started].st = &st;
		st.m[started].t = started;
		ret = -pthread_create(&st.m[started].tid, NULL, team_main, &st.m[started]);
		if (ret)
			break;
	}
	pthread_mutex_lock(&st.lock);
	st.open = 1;
	st.abort = ret != 0;
	pthread_cond_broadcast(&st.cond);
	pthread_mutex_unlock(&st.lock);
	for (t = 0; t < started; t++)
		pthread_join(st.m[t].tid, NULL);
	if (ret)
		ret = -EAGAIN;
	for (t = 0; !ret && t < team->threads; t++)
		ret = st.m[t].err;
	pthread_barrier_destroy(&st.barrier);
out_cond:
	pthread_cond_destroy(&st.cond);
out_lock:
	pthread_mutex_destroy(&st.lock);
out_free:
	free(st.m);
	return ret;
}
