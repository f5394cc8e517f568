/*
 * batch.c - clearing regions in batches of pages: bench_batch, the one
 * entry for every condition (a plain run is one buffer, hot, no counters).
 */
#include <errno.h>
#include <string.h>

#include "counters.h"
#include "policy_bench.h"
#include "pzpy.h"
#include "stats.h"
#include "team.h"

/* loops * batches (* threads) entries, or 0 with ValueError when that overflows. */
static size_t batch_records(size_t nb, unsigned loops, unsigned threads)
{
	size_t total = nb * loops;

	if (total / loops != nb || total > ((size_t)-1 / sizeof(uint64_t)) / threads) {
		PyErr_SetString(PyExc_ValueError, "too many batches to record");
		return 0;
	}
	return total;
}

/* The team's buffers: one view per thread, all of the same whole number of pages. */
struct team_buffers {
	unsigned n; /* views held */
	Py_buffer *views;
	char **bases;
};

static int team_buffers_get(struct team_buffers *b, PyObject *seq, size_t *nr_pages)
{
	PyObject *fast =
		PySequence_Fast(seq, "buffers must be a sequence of buffers, one per thread");
	Py_ssize_t n;
	int ret = -1;

	if (!fast)
		return -1;
	n = PySequence_Fast_GET_SIZE(fast);
	if (n < 1 || n > (Py_ssize_t)PZ_MAX_THREADS) {
		PyErr_Format(PyExc_ValueError, "need 1..%u buffers (threads)", PZ_MAX_THREADS);
		goto out;
	}
	b->views = PyMem_Calloc((size_t)n, sizeof(*b->views));
	b->bases = PyMem_Calloc((size_t)n, sizeof(*b->bases));
	if (!b->views || !b->bases) {
		PyErr_NoMemory();
		goto out;
	}
	for (; b->n < (unsigned)n; b->n++) {
		size_t nr;

		if (pzpy_pages(PySequence_Fast_GET_ITEM(fast, b->n), &b->views[b->n], &nr) < 0)
			goto out;
		if (b->n && nr != *nr_pages) {
			PyBuffer_Release(&b->views[b->n]);
			PyErr_SetString(PyExc_ValueError,
					"every thread's buffer must be the same size");
			goto out;
		}
		*nr_pages = nr;
		b->bases[b->n] = b->views[b->n].buf;
	}
	ret = 0;
out:
	Py_DECREF(fast);
	return ret;
}

static void team_buffers_release(struct team_buffers *b)
{
	unsigned t;

	for (t = 0; t < b->n; t++)
		PyBuffer_Release(&b->views[t]);
	PyMem_Free(b->views);
	PyMem_Free(b->bases);
}

/* Every thread's arrays, in one allocation, and the summaries over them. */
struct batch_mem {
	struct pz_batch_out *out; /* one per thread */
	uint64_t *per_thread;     /* per_t per thread: pass, worst, start, end, counters */
	uint64_t *ticks;          /* every thread's batches, thread after thread */
	uint64_t *scratch, *samples, *worst, *sums; /* loops each (sums: * PZ_CTR_COUNT) */
	struct pz_step_log log;
	size_t per_t, total; /* total: batches of one thread's passes */
};

static int batch_mem_alloc(struct batch_mem *m, const struct pz_batch_params *p, size_t nb,
			   int record)
{
	size_t L = p->loops, ctr = p->cond.counters ? L * PZ_CTR_COUNT : 0;
	unsigned t;

	m->total = nb * L;
	/* Per thread: pass, worst, start, end (loops each), counters; the batches apart. */
	m->per_t = 4 * L + ctr;
	m->out = PyMem_Calloc(p->threads, sizeof(*m->out));
	m->per_thread = PyMem_Calloc(m->per_t * p->threads, sizeof(uint64_t));
	m->ticks = PyMem_Calloc(m->total * p->threads, sizeof(uint64_t));
	/* The summaries, in one allocation that m->scratch owns. */
	m->scratch = PyMem_Calloc(3 * L + ctr, sizeof(uint64_t));
	if (record) {
		m->log.cap = m->total;
		m->log.steps = PyMem_Calloc(m->total, sizeof(*m->log.steps));
	}
	if (!m->out || !m->per_thread || !m->ticks || !m->scratch || (record && !m->log.steps)) {
		PyErr_NoMemory();
		return -1;
	}
	m->samples = m->scratch + L;
	m->worst = m->samples + L;
	m->sums = m->worst + L;
	for (t = 0; t < p->threads; t++) {
		uint64_t *b = m->per_thread + m->per_t * t;

		m->out[t] = (struct pz_batch_out){ .pass_ticks = b,
						   .pass_worst = b + L,
						   .start = b + 2 * L,
						   .end = b + 3 * L,
						   .counters = ctr ? b + 4 * L : NULL,
						   .batch_ticks = m->ticks + m->total * t };
	}
	/* The recorded steps are thread 0's: every thread walks its region the same way. */
	m->out[0].log = record ? &m->log : NULL;
	return 0;
}

static void batch_mem_free(struct batch_mem *m)
{
	PyMem_Free(m->out);
	PyMem_Free(m->per_thread);
	PyMem_Free(m->ticks);
	PyMem_Free(m->scratch);
	PyMem_Free(m->log.steps);
}

/*
 * The summaries over the @done passes every thread completed (all of them,
 * or those before a stop): the others' batches are dropped, the rest moved
 * together so one summary covers every thread's.
 */
static void batch_summarize(struct batch_mem *m, const struct pz_batch_params *p, size_t nb,
			    unsigned done, uint64_t *typical, struct pz_tick_summary *sum)
{
	size_t kept = nb * done;
	unsigned t;

	*typical = 0;
	memset(sum, 0, sizeof(*sum));
	if (m->log.steps)
		m->log.n = PZ_MIN(m->log.n, kept);
	if (!done)
		return;
	for (t = 0; t < p->threads; t++) {
		uint64_t w = pz_batch_typical_worst(m->out[t].batch_ticks, done, nb, m->scratch);

		*typical = w > *typical ? w : *typical;
		if (t)
			memmove(m->ticks + kept * t, m->out[t].batch_ticks,
				kept * sizeof(uint64_t));
	}
	pz_ticks_summarize(m->ticks, kept * p->threads, sum);
	pz_team_loop_samples(m->out[0].start, m->out[0].end, m->out[0].pass_ticks, m->per_t,
			     p->threads, done, p->cond.cold, m->samples);
	/* Each pass's slowest batch over every thread: the "cold" rule, the slowest. */
	pz_team_loop_samples(m->out[0].start, m->out[0].end, m->out[0].pass_worst, m->per_t,
			     p->threads, done, 1, m->worst);
	if (p->cond.counters)
		pz_team_counter_sums(m->out[0].counters, m->per_t, p->threads, done, PZ_CTR_COUNT,
				     m->sums);
}

static PyObject *batch_result(const struct batch_mem *m, const struct pz_batch_params *p, size_t nb,
			      unsigned done, uint64_t typical, const struct pz_tick_summary *sum,
			      const struct pzpy_policy_run *pr)
{
	PyObject *s = pzpy_u64_tuple(m->samples, done, 1), *w = pzpy_u64_tuple(m->worst, done, 1);
	PyObject *steps = m->log.steps ? pzpy_steps_tuple(&m->log) : (Py_INCREF(Py_None), Py_None);
	/* Each thread's passes: pass_ticks leads its per_t values (batch_mem_alloc). */
	PyObject *per = pzpy_u64_rows(m->per_thread, p->threads, m->per_t, done, 1), *d = NULL;
	if (s && w && steps && per)
		d = Py_BuildValue("{s:O,s:O,s:n,s:K,s:K,s:K,s:K,s:d,s:O,s:O}", "samples", s,
				  "pass_worst", w, "batches", (Py_ssize_t)nb, "typical_worst",
				  (unsigned long long)typical, "max", (unsigned long long)sum->max,
				  "p99", (unsigned long long)sum->p99, "median",
				  (unsigned long long)sum->median, "mean", sum->mean, "steps",
				  steps, "thread_samples", per);
	if (d && pzpy_policy_keys(d, pr, m->sums) < 0)
		Py_CLEAR(d);
	Py_XDECREF(s);
	Py_XDECREF(w);
	Py_XDECREF(steps);
	Py_XDECREF(per);
	return d;
}

PyDoc_STRVAR(
	bench_batch__doc__,
	"bench_batch(buffers, kernel, batch_pages, loops, *, yield_between=False, record=False,\n"
	"            cpus=(), cold=False, flush='', evict_bytes=0, counters=False, trace=False)\n"
	"--\n\n"
	"Clear each buffer (one per thread, the same whole number of 4KB pages) in\n"
	"batches of batch_pages pages with the named kernel, one thread per buffer\n"
	"(pinned to cpus when given): one untimed pass, then `loops` timed passes,\n"
	"every pass started together, the ns clock read after every batch,\n"
	"sched_yield() after each with yield_between. A plain run is one buffer,\n"
	"hot, no counters. cold flushes each batch's range before its clock read\n"
	"(flush: clflushopt, clflush, evict or '' for the best; evict reads\n"
	"evict_bytes), outside the pass's time; counters reads hardware counters\n"
	"around each pass (cold: each batch's clear). SIGINT, SIGTERM and SIGHUP\n"
	"stop the run between batches. Returns a dict over the loops_done passes\n"
	"every thread completed: samples (ns per pass: first start to last end;\n"
	"cold: the slowest thread's pass), pass_worst (ns of each pass's slowest\n"
	"batch), batches (per pass), typical_worst (ns: the slowest batch position,\n"
	"median over the passes), max, p99, median (ns, nearest rank over every\n"
	"batch), mean, steps (thread 0's timed passes with record, else None),\n"
	"thread_samples (each thread's passes), counters (name -> per-pass deltas\n"
	"summed over threads, or None), cold_method, flushes ((thread, offset in\n"
	"its buffer or -1, length) with trace, else None), loops_done and\n"
	"interrupted (None, or the signal's name).");

static PyObject *core_bench_batch(PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *bufs = NULL, *cpus_obj = NULL, *result = NULL;
	Py_ssize_t batch = 0;
	int record = 0, ret;
	int *cpus = NULL;
	uint64_t typical = 0;
	size_t nb, total;
	struct pz_batch_params p = { 0 };
	struct pz_tick_summary sum;
	struct batch_mem m = { 0 };
	struct team_buffers b = { 0 };
	struct pzpy_policy_run pr = { .flush = "" };
	struct pzpy_failure fail = { .doing = "the batch benchmark" };
	static char *kwlist[] = { "buffers", "kernel", "batch_pages",      "loops", "yield_between",
				  "record",  "cpus",   PZPY_POLICY_KWLIST, NULL };

	if (!PyArg_ParseTupleAndKeywords(args, kw, "OO&O&O&|$ppO" PZPY_POLICY_FORMAT ":bench_batch",
					 kwlist, &bufs, pzpy_clear_kernel, &p.kernel, pzpy_size,
					 &batch, pzpy_loops, &p.loops, &p.yield, &record, &cpus_obj,
					 PZPY_POLICY_ARGS(pr)) ||
	    team_buffers_get(&b, bufs, &p.nr_pages) < 0)
		goto out;
	p.threads = b.n;
	p.batch_pages = (size_t)batch;
	if (cpus_obj && pzpy_cpus(cpus_obj, p.threads, &cpus) < 0)
		goto out;
	p.cpus = cpus;
	/* pagezero.measure.policy.batches words a bad batch; 0 batches is what slipped past it. */
	nb = pz_batch_count(&p);
	if (!nb) {
		pzpy_raise(-EINVAL, &fail);
		goto out;
	}
	total = batch_records(nb, p.loops, p.threads);
	/* The conditions first: the arrays depend on them (counters). */
	if (!total ||
	    pzpy_policy_cond(&pr, &p.cond, b.bases, p.nr_pages * PZ_PAGE_SIZE, p.threads * total) <
		    0 ||
	    batch_mem_alloc(&m, &p, nb, record) < 0 || pzpy_timed_begin(&pr.timed, PZ_CLOCK_NS) < 0)
		goto out;
	Py_BEGIN_ALLOW_THREADS ret = pz_bench_batches(&p, b.bases, &pr.timed.clock, m.out);
	if (!ret || ret == -EINTR)
		batch_summarize(&m, &p, nb, pr.done, &typical, &sum);
	Py_END_ALLOW_THREADS pzpy_timed_end(&pr.timed);
	fail.threads = p.threads;
	fail.cpus = cpus;
	if (pzpy_policy_check(&pr, ret, &fail) == 0)
		result = batch_result(&m, &p, nb, pr.done, typical, &sum, &pr);
out:
	pzpy_policy_release(&pr);
	batch_mem_free(&m);
	team_buffers_release(&b);
	PyMem_Free(cpus);
	return result;
}

PyMethodDef pzpy_batch_methods[] = {
	PZPY_KW_METHOD("bench_batch", core_bench_batch, bench_batch__doc__), { NULL, NULL, 0, NULL }
};
