/*
 * policy_bench.c - what the batch and folio benchmarks share: each thread's
 * clock and counters (the meter) and the team they run on, so a plain run
 * (one thread, hot, no counters) and a conditioned one are the same code.
 * The loops themselves are in batch_bench.c and folio_bench.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "policy_bench.h"
#include "stop.h"
#include "switches.h"
#include "team.h"

int pz_meter_start(struct pz_meter *m)
{
	int err;

	if (!m->counters)
		return 0;
	err = pz_counters_read(&m->ctr, &m->snap);
	m->counting = !err;
	return err;
}

int pz_meter_stop(struct pz_meter *m, uint64_t acc[PZ_CTR_COUNT])
{
	struct pz_counter_snap z;
	int err;

	if (!m->counting)
		return 0;
	m->counting = 0;
	err = pz_counters_read(&m->ctr, &z);
	return err ? err : pz_counters_delta(&m->snap, &z, acc);
}

int pz_policy_cond_check(const struct pz_policy_cond *c)
{
	return c->cold && c->flush.method == PZ_FLUSH_EVICT && !c->flush.evict ? -EINVAL : 0;
}

/* What each thread of a policy run keeps. */
struct policy_thread {
	struct pz_meter meter;
	unsigned failed; /* the counter its pz_counters_open refused */
	int err;         /* 0, -EINTR or its loop's error */
	unsigned done;   /* loops it completed */
};

struct policy_run {
	const struct pz_policy_team *r;
	struct policy_thread *th;
};

static int policy_setup(void *ctx, unsigned t)
{
	struct policy_run *run = ctx;
	struct policy_thread *th = &run->th[t];
	int ret = pz_clock_open_thread(&th->meter.clock, run->r->clock);

	if (ret) {
		pz_clock_close(&th->meter.clock);
		return ret;
	}
	if (run->r->cond->counters) {
		ret = pz_counters_open(&th->meter.ctr, &th->failed);
		th->meter.counters = !ret;
	}
	if (!ret && run->r->prepare)
		ret = run->r->prepare(run->r->ctx, t, &th->meter);
	if (ret) {
		if (th->meter.counters)
			pz_counters_close(&th->meter.ctr);
		th->meter.counters = 0;
		pz_clock_close(&th->meter.clock);
	}
	return ret;
}

/*
 * Test builds (PAGEZERO_LOOP_DONE_FD): a byte to that fd once the first loop is done, so
 * that a signal test signals on that event, not after a duration it guessed. A write
 * that fails leaves the test waiting for the byte, and failing: nothing to do here.
 */
static void say_first_loop_done(void)
{
	int fd = (int)pz_switch(PZ_SW_LOOP_DONE_FD);

	if (fd && write(fd, "1", 1) < 0)
		return;
}

/*
 * Loop after loop, every thread starting each together (or they drift
 * apart and overlap less): a thread whose loop failed or was cut short
 * gives up, and at the next barrier every thread stops with it.
 */
static void policy_body(void *ctx, unsigned t, struct pz_team_state *st)
{
	struct policy_run *run = ctx;
	struct policy_thread *th = &run->th[t];
	unsigned i;
	int ret, give_up = 0;

	for (i = 0; i < run->r->loops; i++) {
		if (!pz_team_next(st, i, give_up))
			break;
		ret = run->r->loop(run->r->ctx, t, i, &th->meter);
		if (ret) {
			if (ret != -EINTR)
				th->err = ret;
			give_up = 1;
			continue;
		}
		th->done = i + 1;
		if (!t && !i)
			say_first_loop_done();
	}
}

static void policy_teardown(void *ctx, unsigned t)
{
	struct policy_run *run = ctx;
	struct policy_thread *th = &run->th[t];

	if (th->meter.counters)
		pz_counters_close(&th->meter.ctr);
	pz_clock_close(&th->meter.clock);
}

static const struct pz_team_ops ops = { policy_setup, policy_body, policy_teardown };

int pz_policy_team_run(const struct pz_policy_team *r)
{
	struct policy_run run = { .r = r };
	struct pz_team team = { .threads = r->threads, .cpus = r->cpus, .ops = &ops, .ctx = &run };
	const struct pz_policy_cond *c = r->cond;
	unsigned t, done = r->loops;
	int ret;

	if (c->loops_done)
		*c->loops_done = 0;
	if (!r->loops || !r->threads || r->threads > PZ_MAX_THREADS || pz_policy_cond_check(c))
		return -EINVAL;
	run.th = calloc(r->threads, sizeof(*run.th));
	if (!run.th)
		return -ENOMEM;
	for (t = 0; t < r->threads; t++)
		run.th[t].failed = PZ_CTR_COUNT;
	ret = pz_team_run(&team);
	for (t = 0; ret && t < r->threads; t++)
		if (run.th[t].failed < PZ_CTR_COUNT && c->failed_counter)
			*c->failed_counter = run.th[t].failed;
	/* A loop's error (a counter read's) first; -EINTR only when nothing else went wrong. */
	for (t = 0; !ret && t < r->threads; t++)
		if (run.th[t].err) {
			ret = run.th[t].err;
			if (c->failed_counter)
				*c->failed_counter = 0; /* a read failed: the group leader's */
		}
	for (t = 0; t < r->threads; t++)
		done = PZ_MIN(done, run.th[t].done);
	if (!ret && done < r->loops)
		ret = -EINTR;
	if (c->loops_done && (!ret || ret == -EINTR))
		*c->loops_done = done;
	free(run.th);
	return ret;
}
