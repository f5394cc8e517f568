/*
 * batch.c - clearing a region in batches of pages: bench_batches (one
 * thread, hot) and bench_batch_team (a team under measured conditions).
 * Both return the same summary; the team adds its own keys.
 */
#include <string.h>

#include "counters.h"
#include "policy_bench.h"
#include "pzpy.h"
#include "stats.h"
#include "threads.h"

/* Pages per batch: 1..nr_pages, or -1 with ValueError. */
static int check_batch(Py_ssize_t batch, size_t nr_pages)
{
	if (batch > 0 && (size_t)batch <= nr_pages)
		return 0;
	PyErr_Format(PyExc_ValueError, "batch must be 1..%zu pages (the region), not %zd",
		     nr_pages, batch);
	return -1;
}

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

/*
 * The dict both benchmarks return: samples and pass_worst (per pass),
 * batches, typical_worst, max, p99, median, mean and steps (None without
 * a log).
 */
static PyObject *batch_dict(const uint64_t *samples, const uint64_t *worst, unsigned loops,
			    size_t nb, uint64_t typical, const struct pz_tick_summary *sum,
			    const struct pz_step_log *log)
{
	PyObject *s = pzpy_u64_tuple(samples, loops, 1), *w = pzpy_u64_tuple(worst, loops, 1);
	PyObject *steps = log ? pzpy_steps_tuple(log) : (Py_INCREF(Py_None), Py_None);
	PyObject *d = NULL;

	if (s && w && steps)
		d = Py_BuildValue("{s:O,s:O,s:n,s:K,s:K,s:K,s:K,s:d,s:O}",
				  "samples", s, "pass_worst", w, "batches", (Py_ssize_t)nb,
				  "typical_worst", (unsigned long long)typical,
				  "max", (unsigned long long)sum->max,
				  "p99", (unsigned long long)sum->p99,
				  "median", (unsigned long long)sum->median,
				  "mean", sum->mean, "steps", steps);
	Py_XDECREF(s);
	Py_XDECREF(w);
	Py_XDECREF(steps);
	return d;
}

PyDoc_STRVAR(bench_batches__doc__,
"bench_batches(buffer, kernel, batch_pages, loops, yield_between=False, record=False)\n--\n\n"
"Clear the buffer (whole 4KB pages, mapped and populated) in batches of\n"
"batch_pages pages with the named kernel: one untimed pass, then `loops`\n"
"timed passes, the ns clock read after every batch, sched_yield() after\n"
"each batch with yield_between. Returns a dict: samples (ns per pass),\n"
"pass_worst (ns of each pass's slowest batch), batches (per pass),\n"
"typical_worst (ns: the slowest batch position, median over the passes),\n"
"max, p99, median (ns, nearest rank over every batch of every pass), mean, and\n"
"steps (the steps of the timed passes with record, else None).");

static PyObject *core_bench_batches(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
				   PyObject *kwnames)
{
	PyObject *obj = NULL, *result = NULL;
	Py_ssize_t batch = 0;
	int record = 0, ret;
	struct pz_batch_params p = { 0 };
	struct pz_step_log log = { 0 };
	struct pz_tick_summary sum;
	struct pz_clock clock;
	uint64_t *pass = NULL, *pass_worst = NULL, *ticks = NULL, *scratch = NULL, typical = 0;
	Py_buffer view;
	size_t nb, total;
	const struct pzpy_param params[] = {
		{ "buffer", pzpy_object, &obj },
		{ "kernel", pzpy_clear_kernel, &p.kernel },
		{ "batch_pages", pzpy_ssize, &batch },
		{ "loops", pzpy_loops, &p.loops },
		{ "yield_between", pzpy_bool, &p.yield },
		{ "record", pzpy_bool, &record },
	};

	if (PZPY_PARSE("bench_batches", params, 4, 6) < 0 ||
	    pzpy_pages(obj, &view, &p.nr_pages) < 0)
		return NULL;
	if (check_batch(batch, p.nr_pages) < 0)
		goto out;
	p.batch_pages = (size_t)batch;
	nb = pz_batch_count(&p);
	total = batch_records(nb, p.loops, 1);
	if (!total)
		goto out;
	pass = PyMem_Calloc(p.loops, sizeof(*pass));
	pass_worst = PyMem_Calloc(p.loops, sizeof(*pass_worst));
	ticks = PyMem_Calloc(total, sizeof(*ticks));
	scratch = PyMem_Calloc(p.loops, sizeof(*scratch));
	if (record) {
		log.cap = total;
		log.steps = PyMem_Calloc(total, sizeof(*log.steps));
	}
	if (!pass || !pass_worst || !ticks || !scratch || (record && !log.steps)) {
		PyErr_NoMemory();
		goto out;
	}
	if (pzpy_open_clock(&clock, PZ_CLOCK_NS) < 0)
		goto out;
	Py_BEGIN_ALLOW_THREADS
	ret = pz_bench_batches(&p, view.buf, &clock, pass, pass_worst, ticks,
			       record ? &log : NULL);
	if (ret == 0) {
		typical = pz_batch_typical_worst(ticks, p.loops, nb, scratch);
		pz_ticks_summarize(ticks, total, &sum);
	}
	Py_END_ALLOW_THREADS
	pz_clock_close(&clock);
	if (ret) {
		struct pzpy_failure fail = { .doing = "the batch benchmark" };

		pzpy_raise(ret, &fail);
		goto out;
	}
	result = batch_dict(pass, pass_worst, p.loops, nb, typical, &sum, record ? &log : NULL);
out:
	PyMem_Free(pass);
	PyMem_Free(pass_worst);
	PyMem_Free(ticks);
	PyMem_Free(scratch);
	PyMem_Free(log.steps);
	PyBuffer_Release(&view);
	return result;
}

/* The team's buffers: one view per thread, all of the same whole number of pages. */
struct team_buffers {
	unsigned n;             /* views held */
	Py_buffer *views;
	char **bases;
};

static int team_buffers_get(struct team_buffers *b, PyObject *seq, size_t *nr_pages)
{
	PyObject *fast = PySequence_Fast(seq, "buffers must be a sequence of buffers, one per thread");
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
			PyErr_SetString(PyExc_ValueError, "every thread's buffer must be the same size");
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

/* Add the team's own keys to @d: thread_samples, counters, cold_method, flushes. */
static int team_keys(PyObject *d, const struct pz_batch_params *p, struct pz_batch_out *out,
		     unsigned threads, size_t per_t, const struct pzpy_flush_trace *tr)
{
	PyObject *per = PyTuple_New(threads), *ctr = NULL, *fl = NULL, *cm = NULL;
	uint64_t *sums = NULL;
	unsigned t;
	int ret = -1;

	for (t = 0; per && t < threads; t++) {
		PyObject *row = pzpy_u64_tuple(out[t].pass_ticks, p->loops, 1);

		if (!row)
			Py_CLEAR(per);
		else
			PyTuple_SET_ITEM(per, t, row);
	}
	if (p->counters) {
		sums = PyMem_Calloc((size_t)p->loops * PZ_CTR_COUNT, sizeof(*sums));
		if (!sums) {
			PyErr_NoMemory();
			goto out;
		}
		pz_team_counter_sums(out[0].counters, per_t, threads, p->loops, PZ_CTR_COUNT, sums);
	}
	ctr = pzpy_counters_dict(sums, p->loops);
	fl = pzpy_flush_trace_list(tr);
	cm = PyUnicode_FromString(p->cold ? pz_flush_name(p->flush.method) : "");
	if (per && ctr && fl && cm && PyDict_SetItemString(d, "thread_samples", per) == 0 &&
	    PyDict_SetItemString(d, "counters", ctr) == 0 &&
	    PyDict_SetItemString(d, "cold_method", cm) == 0 &&
	    PyDict_SetItemString(d, "flushes", fl) == 0)
		ret = 0;
out:
	Py_XDECREF(per);
	Py_XDECREF(ctr);
	Py_XDECREF(fl);
	Py_XDECREF(cm);
	PyMem_Free(sums);
	return ret;
}

PyDoc_STRVAR(bench_batch_team__doc__,
"bench_batch_team(buffers, kernel, batch_pages, loops, yield_between=False, record=False, *,\n"
"                 cold=False, flush='', evict_bytes=0, cpus=(), counters=False, trace=False)\n"
"--\n\n"
"bench_batches under measured conditions: one thread per buffer (each its\n"
"own region, the same number of whole 4KB pages), pinned to cpus when\n"
"given, every pass started together behind a barrier. cold flushes each\n"
"batch's range before its clock read (flush: clflushopt, clflush, evict\n"
"or '' for the best; evict reads evict_bytes), outside the pass's time;\n"
"counters reads hardware counters around each pass. Returns bench_batches'\n"
"dict (over every thread's batches; samples: first start to last end per\n"
"pass, cold: the slowest thread's pass) plus thread_samples, counters\n"
"(name -> per-pass deltas summed over threads, or None), cold_method and,\n"
"with trace, flushes: (thread, offset in its buffer or -1, length).");

static PyObject *core_bench_batch_team(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
				       PyObject *kwnames)
{
	PyObject *bufs = NULL, *cpus_obj = NULL, *result = NULL, *d = NULL;
	const char *flush_s = "";
	Py_ssize_t batch = 0, evict_bytes = 0;
	unsigned threads, t, failed = PZ_CTR_COUNT;
	int record = 0, trace = 0, ret;
	struct pz_batch_params p = { 0 };
	struct pz_batch_out *out = NULL;
	struct pz_step_log log = { 0 };
	struct pz_tick_summary sum;
	struct pz_clock clock;
	struct pz_region evict = { 0 };
	struct pzpy_flush_trace *tr = NULL;
	struct team_buffers b = { 0 };
	uint64_t *mem = NULL, *ticks = NULL, *scratch = NULL, *agg = NULL, *worst = NULL;
	uint64_t typical = 0;
	int *cpus = NULL;
	size_t nb, total, per_t;
	const struct pzpy_param params[] = {
		{ "buffers", pzpy_object, &bufs },
		{ "kernel", pzpy_clear_kernel, &p.kernel },
		{ "batch_pages", pzpy_ssize, &batch },
		{ "loops", pzpy_loops, &p.loops },
		{ "yield_between", pzpy_bool, &p.yield },
		{ "record", pzpy_bool, &record },
		{ "cold", pzpy_bool, &p.cold },
		{ "flush", pzpy_str_or_none, &flush_s },
		{ "evict_bytes", pzpy_ssize, &evict_bytes },
		{ "cpus", pzpy_object, &cpus_obj },
		{ "counters", pzpy_bool, &p.counters },
		{ "trace", pzpy_bool, &trace },
	};
	struct pzpy_failure fail = { .doing = "the batch team", .failed_counter = &failed };

	if (PZPY_PARSE("bench_batch_team", params, 4, 6) < 0 ||
	    team_buffers_get(&b, bufs, &p.nr_pages) < 0)
		goto out;
	threads = b.n;
	if (check_batch(batch, p.nr_pages) < 0)
		goto out;
	p.batch_pages = (size_t)batch;
	if (p.cold && pzpy_cold_flusher(flush_s, evict_bytes, &p.flush, &evict) < 0)
		goto out;
	if (cpus_obj && pzpy_cpus(cpus_obj, threads, &cpus) < 0)
		goto out;
	nb = pz_batch_count(&p);
	total = batch_records(nb, p.loops, threads);
	if (!total)
		goto out;
	/* Per thread: pass, worst, start, end (loops each), counters; the batches apart. */
	per_t = 4 * (size_t)p.loops + (p.counters ? (size_t)p.loops * PZ_CTR_COUNT : 0);
	mem = PyMem_Calloc(per_t * threads, sizeof(*mem));
	/* Every thread's batches back to back, so one summary covers them all. */
	ticks = PyMem_Calloc(total * threads, sizeof(*ticks));
	scratch = PyMem_Calloc(p.loops, sizeof(*scratch));
	agg = PyMem_Calloc(p.loops, sizeof(*agg));
	worst = PyMem_Calloc(p.loops, sizeof(*worst));
	out = PyMem_Calloc(threads, sizeof(*out));
	if (record) {
		log.cap = total;
		log.steps = PyMem_Calloc(total, sizeof(*log.steps));
	}
	if (trace) {
		tr = pzpy_flush_trace_new(b.bases, p.nr_pages * PZ_PAGE_SIZE, (size_t)threads * total);
		if (!tr)
			goto out;
		p.hook = pzpy_flush_trace_record;
		p.hook_ctx = tr;
	}
	if (!mem || !ticks || !scratch || !agg || !worst || !out || (record && !log.steps)) {
		PyErr_NoMemory();
		goto out;
	}
	for (t = 0; t < threads; t++) {
		uint64_t *m = mem + per_t * t;

		out[t].pass_ticks = m;
		out[t].pass_worst = m + p.loops;
		out[t].start = m + 2 * (size_t)p.loops;
		out[t].end = m + 3 * (size_t)p.loops;
		out[t].batch_ticks = ticks + total * t;
		out[t].counters = p.counters ? m + 4 * (size_t)p.loops : NULL;
	}
	/* The recorded steps are thread 0's: every thread walks its region the same way. */
	out[0].log = record ? &log : NULL;
	if (pzpy_open_clock(&clock, PZ_CLOCK_NS) < 0)
		goto out;
	Py_BEGIN_ALLOW_THREADS
	ret = pz_bench_batch_team(&p, threads, cpus, b.bases, &clock, out, &failed);
	if (ret == 0) {
		for (t = 0; t < threads; t++) {
			uint64_t w = pz_batch_typical_worst(out[t].batch_ticks, p.loops, nb, scratch);

			typical = w > typical ? w : typical;
		}
		pz_ticks_summarize(ticks, total * threads, &sum);
		pz_team_loop_samples(out[0].start, out[0].end, out[0].pass_ticks, per_t, threads,
				     p.loops, p.cold, agg);
		/* Each pass's slowest batch over every thread: the "cold" rule, the slowest. */
		pz_team_loop_samples(out[0].start, out[0].end, out[0].pass_worst, per_t, threads,
				     p.loops, 1, worst);
	}
	Py_END_ALLOW_THREADS
	pz_clock_close(&clock);
	if (ret) {
		fail.threads = threads;
		fail.cpus = cpus;
		if (!p.counters)
			fail.failed_counter = NULL;
		pzpy_raise(ret, &fail);
		goto out;
	}
	d = batch_dict(agg, worst, p.loops, nb, typical, &sum, record ? &log : NULL);
	if (d && team_keys(d, &p, out, threads, per_t, tr) == 0) {
		result = d;
		d = NULL;
	}
out:
	Py_XDECREF(d);
	pz_region_unmap(&evict);
	team_buffers_release(&b);
	pzpy_flush_trace_free(tr);
	PyMem_Free(out);
	PyMem_Free(mem);
	PyMem_Free(ticks);
	PyMem_Free(scratch);
	PyMem_Free(agg);
	PyMem_Free(worst);
	PyMem_Free(log.steps);
	PyMem_Free(cpus);
	return result;
}

static PyMethodDef batch_methods[] = {
	{ "bench_batches", PZPY_FASTCALL(core_bench_batches), PZPY_KW, bench_batches__doc__ },
	{ "bench_batch_team", PZPY_FASTCALL(core_bench_batch_team), PZPY_KW,
	  bench_batch_team__doc__ },
	{ NULL, NULL, 0, NULL }
};

int pzpy_init_batch(PyObject *m)
{
	return pzpy_add_methods(m, batch_methods);
}
