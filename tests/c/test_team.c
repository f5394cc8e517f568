/*
 * test_team.c - csrc/team.c and the stop flag (stop.c) with threads, without
 * Python: a team's threads start together and see each other's writes across
 * its barriers; every thread takes the same decision for each loop when one
 * of them gives up, when one of them asks for a stop, when a thread outside
 * the team does, and when the stop came before the start; a failed setup
 * keeps every body from running and tears down only what was set up.
 * Written for ThreadSanitizer (tests/c/build.sh thread) as much as for the
 * plain and ASan/UBSan builds: every datum one thread writes and another
 * reads goes through the team's barriers or an atomic. No test waits for a
 * duration: a stopper outside the team waits for the loop it is told of.
 * Prints "N passed, M failed".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "stop.h"
#include "team.h"

#include "check.h"

#define THREADS 4u
#define LOOPS 8u
#define FOREVER 100000000u /* loops a body would run if nothing stopped it */

struct ctx {
	/* Written by thread t only (plain stores), read by the others after a barrier. */
	unsigned seen[THREADS][LOOPS];
	unsigned ran[THREADS];     /* the loops thread t ran */
	unsigned arrived[THREADS]; /* pz_team_arrived() in thread t's body */
	int mismatch[THREADS];     /* thread t read a neighbour's write it should have seen */
	unsigned set_up[THREADS], torn_down[THREADS], bodies;
	int fail_setup;      /* -1, or the thread whose setup fails */
	int give_up_thread;  /* -1, or the thread that gives up ... */
	unsigned give_up_at; /* ... after running this loop */
	int stop_thread;     /* -1, or the thread that asks for a stop ... */
	unsigned stop_at;    /* ... in this loop */
	unsigned reached;    /* atomic: the highest loop thread 0 has begun, + 1 */
	unsigned limit;      /* loops a body runs at most */
};

static void init_ctx(struct ctx *c, unsigned limit)
{
	memset(c, 0, sizeof(*c));
	c->fail_setup = c->give_up_thread = c->stop_thread = -1;
	c->limit = limit;
}

static int setup(void *arg, unsigned t)
{
	struct ctx *c = arg;

	if ((int)t == c->fail_setup)
		return -EIO;
	c->set_up[t] = 1;
	return 0;
}

static void teardown(void *arg, unsigned t)
{
	struct ctx *c = arg;

	c->torn_down[t] = 1;
}

static void body(void *arg, unsigned t, struct pz_team_state *st)
{
	struct ctx *c = arg;
	unsigned loop, prev = (t + THREADS - 1) % THREADS;
	int give_up = 0;

	__atomic_fetch_add(&c->bodies, 1, __ATOMIC_RELAXED);
	c->arrived[t] = pz_team_arrived(st);
	for (loop = 0; loop < c->limit && pz_team_next(st, loop, give_up); loop++) {
		if (t == 0)
			__atomic_store_n(&c->reached, loop + 1, __ATOMIC_RELEASE);
		if (loop < LOOPS) {
			/* The neighbour's write of the loop before, across the barrier. */
			if (loop > 0 && c->seen[prev][loop - 1] != prev * 1000 + loop - 1)
				c->mismatch[t] = 1;
			c->seen[t][loop] = t * 1000 + loop;
		}
		if ((int)t == c->stop_thread && loop == c->stop_at)
			pz_stop_request(SIGTERM);
		give_up = (int)t == c->give_up_thread && loop == c->give_up_at;
		c->ran[t] = loop + 1;
	}
	/* A last meeting: every thread's ran[] is written before thread 0 reads them. */
	pz_team_sync(st);
	if (t == 0)
		for (unsigned u = 1; u < THREADS; u++)
			if (c->ran[u] != c->ran[0])
				c->mismatch[0] = 1;
}

static const struct pz_team_ops ops = { setup, body, teardown };

static int run(struct ctx *c)
{
	struct pz_team team = { .threads = THREADS, .ops = &ops, .ctx = c };

	return pz_team_run(&team);
}

static int all_ran(const struct ctx *c, unsigned loops)
{
	for (unsigned t = 0; t < THREADS; t++)
		if (c->ran[t] != loops || c->mismatch[t])
			return 0;
	return 1;
}

/* Every thread runs every loop, sees the others' writes, and found them all arrived. */
static void test_loops(void)
{
	struct ctx c;
	unsigned t;

	init_ctx(&c, LOOPS);
	CHECK(run(&c) == 0);
	CHECK(all_ran(&c, LOOPS));
	CHECK(c.bodies == THREADS);
	for (t = 0; t < THREADS; t++) {
		CHECK(c.arrived[t] == THREADS);
		CHECK(c.set_up[t] && c.torn_down[t]);
	}
}

/* A thread that gives up after loop 3: nobody runs loop 4. */
static void test_give_up(void)
{
	struct ctx c;

	init_ctx(&c, LOOPS);
	c.give_up_thread = 2;
	c.give_up_at = 3;
	CHECK(run(&c) == 0);
	CHECK(all_ran(&c, 4));
	CHECK(pz_stop_requested() == 0);
}

/* A stop asked for by thread 1 in loop 2: every thread ends with loop 2. */
static void test_stop_inside(void)
{
	struct ctx c;

	init_ctx(&c, FOREVER);
	c.stop_thread = 1;
	c.stop_at = 2;
	CHECK(run(&c) == 0);
	CHECK(all_ran(&c, 3));
	CHECK(pz_stop_requested() == SIGTERM);
	pz_stop_clear();
}

struct stopper {
	struct ctx *c;
	unsigned after; /* ask once thread 0 has begun this loop */
};

static void *stop_from_outside(void *arg)
{
	struct stopper *s = arg;

	while (__atomic_load_n(&s->c->reached, __ATOMIC_ACQUIRE) <= s->after)
		sched_yield();
	pz_stop_request(SIGHUP);
	return NULL;
}

/*
 * A stop asked for by a thread outside the team (a signal handler's thread,
 * in effect) while the team loops: they all stop after the same loop, one
 * after the loop the stopper waited for.
 */
static void test_stop_outside(void)
{
	struct ctx c;
	struct stopper s = { &c, 5 };
	pthread_t tid;
	unsigned t;

	init_ctx(&c, FOREVER);
	CHECK(pthread_create(&tid, NULL, stop_from_outside, &s) == 0);
	CHECK(run(&c) == 0);
	pthread_join(tid, NULL);
	CHECK(c.ran[0] > s.after && c.ran[0] < FOREVER);
	for (t = 0; t < THREADS; t++)
		CHECK(c.ran[t] == c.ran[0] && !c.mismatch[t]);
	CHECK(pz_stop_requested() == SIGHUP);
	pz_stop_clear();
}

/* A stop pending before the start: no loop at all, setup and teardown still paired. */
static void test_stop_before(void)
{
	struct ctx c;
	unsigned t;

	init_ctx(&c, LOOPS);
	pz_stop_request(SIGINT);
	CHECK(run(&c) == 0);
	CHECK(all_ran(&c, 0));
	CHECK(c.bodies == THREADS);
	for (t = 0; t < THREADS; t++)
		CHECK(c.set_up[t] && c.torn_down[t]);
	pz_stop_clear();
}

/* Thread 2's setup fails: no body runs, the others are torn down, its error returned. */
static void test_setup_fails(void)
{
	struct ctx c;
	unsigned t;

	init_ctx(&c, LOOPS);
	c.fail_setup = 2;
	CHECK(run(&c) == -EIO);
	CHECK(c.bodies == 0);
	for (t = 0; t < THREADS; t++)
		CHECK(c.torn_down[t] == (t != 2) && c.set_up[t] == (t != 2));
}

static void test_thread_counts(void)
{
	struct ctx c;
	struct pz_team team = { .ops = &ops, .ctx = &c };

	init_ctx(&c, 1);
	team.threads = 0;
	CHECK(pz_team_run(&team) == -EINVAL);
	team.threads = PZ_MAX_THREADS + 1;
	CHECK(pz_team_run(&team) == -EINVAL);
	CHECK(c.bodies == 0);
}

int main(void)
{
	test_loops();
	test_give_up();
	test_stop_inside();
	test_stop_outside();
	test_stop_before();
	test_setup_fails();
	test_thread_counts();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
