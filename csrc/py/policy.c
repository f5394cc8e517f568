/*
 * policy.c - the folio clearing strategies: their names and constants, the
 * order they clear in (clear_order), an untimed clear (clear_folio) and
 * the timed folio (bench_folio). The batch benchmarks are in batch.c.
 */
#include <errno.h>
#include <string.h>

#include "counters.h"
#include "policy_bench.h"
#include "pzpy.h"

/*
 * The non-temporal kernel @name names, where strategy @s uses one: NULL
 * when it needs none or none is named (pz_strategy_order and the runs
 * refuse a strategy without the kernel it needs). 0, or -1 with an exception.
 */
static int strategy_nt_kernel(enum pz_strategy s, const char *name, const struct pz_kernel **k)
{
	*k = NULL;
	if (!pz_strategy_uses_nontemporal(s) || !name)
		return 0;
	*k = pzpy_usable_kernel(PZ_KIND_FILL, name);
	return *k ? 0 : -1;
}

/* A step log with room for @cap steps, or -1 with MemoryError. */
static int log_alloc(struct pz_step_log *log, size_t cap)
{
	log->cap = cap;
	log->steps = PyMem_Calloc(cap ? cap : 1, sizeof(*log->steps));
	if (log->steps)
		return 0;
	PyErr_NoMemory();
	return -1;
}

PyDoc_STRVAR(strategies__doc__, "strategies()\n--\n\n"
				"The folio clearing strategies, in the C core's order.");

static PyObject *core_strategies(PyObject *self, PyObject *unused)
{
	return pzpy_names_tuple(&pz_strategy_names, PZPY_ALL);
}

PyDoc_STRVAR(cold_methods__doc__,
	     "cold_methods()\n--\n\n"
	     "How this build can evict the fault neighbourhood for the cold baseline,\n"
	     "preferred first: 'clflush' (x86-64) and 'evict' (read a buffer larger\n"
	     "than the LLC).");

static PyObject *core_cold_methods(PyObject *self, PyObject *unused)
{
	uint64_t available = 0;
	int c;

	for (c = 0; c < PZ_COLD_COUNT; c++)
		available |= (uint64_t)pz_cold_available((enum pz_cold)c) << c;
	return pzpy_names_tuple(&pz_cold_names, available);
}

PyDoc_STRVAR(policy_constants__doc__,
	     "policy_constants()\n--\n\n"
	     "The C core's policy constants: page_size (the 4KB unit strategies and\n"
	     "batches count in), neighbourhood_radius (pages each side of the fault\n"
	     "cleared last and touched), line_size (the touch's and flush's stride).");

static PyObject *core_policy_constants(PyObject *self, PyObject *unused)
{
	return Py_BuildValue("{s:n,s:n,s:n}", "page_size", (Py_ssize_t)PZ_PAGE_SIZE,
			     "neighbourhood_radius", (Py_ssize_t)PZ_NEIGHBOURHOOD_RADIUS,
			     "line_size", (Py_ssize_t)PZ_LINE_SIZE);
}

static void record_step(void *log, const struct pz_step *s)
{
	pz_step_log_add(log, s);
}

PyDoc_STRVAR(clear_order__doc__,
	     "clear_order(strategy, nr_pages, fault_index, batch_pages)\n--\n\n"
	     "The steps strategy takes over nr_pages pages for a fault at fault_index,\n"
	     "clearing at most batch_pages at once, as (first_page, page_count,\n"
	     "nontemporal) tuples in order. Nothing is cleared: the walk is the one the\n"
	     "timed loops run, with a callback that records instead of clearing.");

/*
 * pagezero.measure.policy.orders words a bad page count, fault index or
 * batch; pz_strategy_order refuses them (a negative index as one past
 * any folio) before any step.
 */
static PyObject *core_clear_order(PyObject *self, PyObject *args, PyObject *kw)
{
	enum pz_strategy s = 0;
	Py_ssize_t nr = 0, fault = 0, batch = 0;
	struct pz_step_log log = { 0 };
	PyObject *result = NULL;
	int ret;
	static char *kwlist[] = { "strategy", "nr_pages", "fault_index", "batch_pages", NULL };

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&nO&:clear_order", kwlist, pzpy_strategy, &s,
					 pzpy_size, &nr, &fault, pzpy_size, &batch))
		return NULL;
	/* Every step clears at least one page, and each page once: nr steps at most. */
	if (log_alloc(&log, (size_t)nr) < 0)
		return NULL;
	ret = pz_strategy_order(s, (size_t)nr, (size_t)fault, (size_t)batch, record_step, &log);
	if (ret)
		pzpy_raise(ret, &(struct pzpy_failure){ .doing = "clear_order" });
	else
		result = pzpy_steps_tuple(&log);
	PyMem_Free(log.steps);
	return result;
}

PyDoc_STRVAR(clear_folio__doc__,
	     "clear_folio(buffer, strategy, fault_index, batch_pages, kernel, nt_kernel=None, "
	     "record=False)\n"
	     "--\n\n"
	     "Zero the writable buffer (whole 4KB pages) in strategy's order with the\n"
	     "named kernels, untimed: the clearing callback of the timed loops. With\n"
	     "record, return the steps it executed (as clear_order()), else None.");

static PyObject *core_clear_folio(PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *obj = NULL, *result = NULL;
	const char *ntname = NULL;
	Py_ssize_t fault = 0, batch = 0;
	int record = 0, ret = -EINVAL;
	enum pz_strategy s = 0;
	struct pz_step_log log = { 0 };
	struct pz_clearer clr = { 0 };
	Py_buffer view;
	size_t nr;
	static char *kwlist[] = { "buffer", "strategy",  "fault_index", "batch_pages",
				  "kernel", "nt_kernel", "record",      NULL };

	if (!PyArg_ParseTupleAndKeywords(args, kw, "OO&nO&O&|zp:clear_folio", kwlist, &obj,
					 pzpy_strategy, &s, &fault, pzpy_size, &batch,
					 pzpy_clear_kernel, &clr.kernel, &ntname, &record) ||
	    strategy_nt_kernel(s, ntname, &clr.nt_kernel) < 0 || pzpy_pages(obj, &view, &nr) < 0)
		return NULL;
	if (record && log_alloc(&log, nr) < 0)
		goto out;
	clr.log = record ? &log : NULL;
	clr.base = view.buf;
	/* pz_clear_step trusts its clearer: a strategy's non-temporal steps need their kernel. */
	if (clr.nt_kernel || !pz_strategy_uses_nontemporal(s)) {
		Py_BEGIN_ALLOW_THREADS ret =
			pz_strategy_order(s, nr, (size_t)fault, (size_t)batch, pz_clear_step, &clr);
		Py_END_ALLOW_THREADS
	}
	if (ret)
		pzpy_raise(ret, &(struct pzpy_failure){ .doing = "clear_folio" });
	else if (record)
		result = pzpy_steps_tuple(&log);
	else
		result = Py_NewRef(Py_None);
out:
	PyMem_Free(log.steps);
	PyBuffer_Release(&view);
	return result;
}

/* The per-loop columns of the folio's samples, as clear, touch and cold tuples. */
static int folio_columns(PyObject *d, const struct pz_folio_sample *out, unsigned loops)
{
	static const char *const names[] = { "clear", "touch", "cold" };
	uint64_t *col = PyMem_Calloc(loops, sizeof(*col));
	unsigned i, c;
	int ret = 0;

	if (!col) {
		PyErr_NoMemory();
		return -1;
	}
	for (c = 0; ret == 0 && c < 3; c++) {
		PyObject *t;

		for (i = 0; i < loops; i++)
			col[i] = c == 0 ? out[i].clear : c == 1 ? out[i].touch : out[i].cold;
		t = pzpy_u64_tuple(col, loops, 1);
		ret = !t || PyDict_SetItemString(d, names[c], t) < 0 ? -1 : 0;
		Py_XDECREF(t);
	}
	PyMem_Free(col);
	return ret;
}

PyDoc_STRVAR(bench_folio__doc__,
	     "bench_folio(folio, scrub, strategy, fault_index, batch_pages, kernel, loops, "
	     "baseline, *,\n"
	     "            nt_kernel=None, cold=False, flush='', evict_bytes=0, counters=False,\n"
	     "            trace=False)\n"
	     "--\n\n"
	     "Time `loops` clears of the folio buffer (whole 4KB pages) in strategy's\n"
	     "order, each followed by a touch of the fault neighbourhood (fault +-2\n"
	     "pages: each line read, through a chain of dependent loads, then written)\n"
	     "and the same touch after evicting the neighbourhood with baseline\n"
	     "('clflush' or 'evict', which reads scrub). Before each loop the folio is\n"
	     "dirtied and scrub, a buffer larger than the LLC, is read; cold then\n"
	     "flushes the whole folio by address too (flush: clflushopt, clflush, evict\n"
	     "or '' for the best; evict reads evict_bytes), and counters reads hardware\n"
	     "counters around each clear. A plain run is hot, without counters: the\n"
	     "same loop. SIGINT, SIGTERM and SIGHUP stop the run between loops. Returns\n"
	     "a dict over the loops_done loops completed: clear, touch, cold (ns per\n"
	     "loop), touch_lines, neighbourhood (first page, pages), counters (name ->\n"
	     "per-loop deltas, or None), cold_method, flushes ((0, offset in the folio,\n"
	     "length) per flush with trace, else None), loops_done and interrupted\n"
	     "(None, or the signal's name).");

static PyObject *core_bench_folio(PyObject *self, PyObject *args, PyObject *kw)
{
	struct pz_folio_params p = { 0 };
	PyObject *fobj = NULL, *result = NULL, *d = NULL;
	const char *ntname = NULL, *baseline = NULL;
	Py_ssize_t fault = 0, batch = 0;
	int ret;
	struct pzpy_policy_run pr = { .flush = "" };
	struct pz_folio_sample *out = NULL;
	uint64_t *counters = NULL;
	Py_buffer fview = { 0 }, sview = { 0 };
	char *folio_base;
	size_t nb_first, nb_count;
	struct pzpy_failure fail = { .doing = "the folio benchmark" };
	static char *kwlist[] = { "folio",  "scrub", "strategy", "fault_index", "batch_pages",
				  "kernel", "loops", "baseline", "nt_kernel",   PZPY_POLICY_KWLIST,
				  NULL };

	if (!PyArg_ParseTupleAndKeywords(
		    args, kw, "OO&O&nO&O&O&s|$z" PZPY_POLICY_FORMAT ":bench_folio", kwlist, &fobj,
		    pzpy_readable, &sview, pzpy_strategy, &p.strategy, &fault, pzpy_size, &batch,
		    pzpy_clear_kernel, &p.kernel, pzpy_loops, &p.loops, &baseline, &ntname,
		    PZPY_POLICY_ARGS(pr)))
		return NULL;
	/*
	 * pagezero.measure.policy.folio_plan words a bad fault index, batch,
	 * baseline or missing nt_kernel; pz_bench_folio refuses them (an
	 * unknown baseline as -1) with -EINVAL.
	 */
	p.baseline = (enum pz_cold)pz_lookup(&pz_cold_names, baseline);
	if (strategy_nt_kernel(p.strategy, ntname, &p.nt_kernel) < 0 ||
	    pzpy_pages(fobj, &fview, &p.nr_pages) < 0)
		goto out;
	p.fault = (size_t)fault;
	p.batch_pages = (size_t)batch;
	out = PyMem_Calloc(p.loops, sizeof(*out));
	if (pr.counters)
		counters = PyMem_Calloc((size_t)p.loops * PZ_CTR_COUNT, sizeof(*counters));
	if (!out || (pr.counters && !counters)) {
		PyErr_NoMemory();
		goto out;
	}
	folio_base = fview.buf;
	if (pzpy_policy_cond(&pr, &p.cond, &folio_base, (size_t)fview.len, p.loops) < 0 ||
	    pzpy_timed_begin(&pr.timed, PZ_CLOCK_NS) < 0)
		goto out;
	Py_BEGIN_ALLOW_THREADS ret = pz_bench_folio(&p, fview.buf, sview.buf, (size_t)sview.len,
						    &pr.timed.clock, out, counters);
	Py_END_ALLOW_THREADS pzpy_timed_end(&pr.timed);
	if (pzpy_policy_check(&pr, ret, &fail) < 0)
		goto out;
	pz_neighbourhood(p.nr_pages, p.fault, &nb_first, &nb_count);
	d = Py_BuildValue("{s:n,s:(nn)}", "touch_lines", (Py_ssize_t)pz_folio_touch_lines(&p),
			  "neighbourhood", (Py_ssize_t)nb_first, (Py_ssize_t)nb_count);
	if (d && folio_columns(d, out, pr.done) == 0 && pzpy_policy_keys(d, &pr, counters) == 0) {
		result = d;
		d = NULL;
	}
out:
	Py_XDECREF(d);
	pzpy_policy_release(&pr);
	PyMem_Free(counters);
	PyMem_Free(out);
	if (fview.obj)
		PyBuffer_Release(&fview);
	PyBuffer_Release(&sview);
	return result;
}

PyMethodDef pzpy_policy_methods[] = {
	{ "strategies", core_strategies, METH_NOARGS, strategies__doc__ },
	{ "cold_methods", core_cold_methods, METH_NOARGS, cold_methods__doc__ },
	{ "policy_constants", core_policy_constants, METH_NOARGS, policy_constants__doc__ },
	PZPY_KW_METHOD("clear_order", core_clear_order, clear_order__doc__),
	PZPY_KW_METHOD("clear_folio", core_clear_folio, clear_folio__doc__),
	PZPY_KW_METHOD("bench_folio", core_bench_folio, bench_folio__doc__),
	{ NULL, NULL, 0, NULL }
};
