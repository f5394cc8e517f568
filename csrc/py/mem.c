/*
 * mem.c - the memset / memcpy benchmark (bench_mem: one entry for every
 * condition, the plain run being the default ones) and its test hook on a
 * caller's buffer (run_threads_on), both on csrc/mem_bench.c's one loop.
 */
#include <pthread.h>
#include <string.h>

#include "counters.h"
#include "pzpy.h"
#include "stats.h"
#include "mem_bench.h"

/* Buffers a run maps: memcpy's two per region, a region per thread in private mode. */
static unsigned run_buffers(const struct pz_run_params *p)
{
	return (p->kernel->kind == PZ_KIND_COPY ? 2u : 1u) *
	       (p->mode == PZ_THREADS_PRIVATE ? p->threads : 1u);
}

/* The run's arrays, in one allocation that o->samples owns. */
static int alloc_out(struct pz_run_out *o, unsigned threads, unsigned loops, int counters)
{
	size_t n = (size_t)threads * loops;

	memset(o, 0, sizeof(*o));
	o->samples = PyMem_Calloc(n * (3 + (counters ? PZ_CTR_COUNT : 0)), sizeof(uint64_t));
	if (!o->samples) {
		PyErr_NoMemory();
		return -1;
	}
	o->start = o->samples + n;
	o->end = o->start + n;
	o->counters = counters ? o->end + n : NULL;
	return 0;
}

static void free_out(struct pz_run_out *o)
{
	PyMem_Free(o->samples);
}

/* What the C core said about a failure, for pzpy_raise. */
static void failure_from(struct pzpy_failure *f, const struct pz_run_out *o)
{
	f->stage = o->stage;
	f->thread = o->thread;
	f->failed_counter = &o->failed_counter;
}

/*
 * The answer of a run that completed, or that a signal stopped after
 * o->loops_done loops (every array then holds those loops only): samples
 * (one per loop for the whole team), thread_samples, thread_bytes, counters
 * (summed over the threads, or None), cold_method, loops_done, interrupted, huge_pages.
 */
/* Each thread's bytes of the run (pz_part_len): the parts the C core gave them. */
static PyObject *thread_bytes(const struct pz_run_params *p)
{
	PyObject *t = PyTuple_New(p->threads);
	unsigned i;

	for (i = 0; t && i < p->threads; i++) {
		PyObject *n = PyLong_FromSize_t(pz_part_len(p, i));

		if (!n)
			Py_CLEAR(t);
		else
			PyTuple_SET_ITEM(t, i, n);
	}
	return t;
}

static PyObject *mem_result(const struct pz_run_params *p, const struct pz_run_out *o, int sig)
{
	const unsigned T = p->threads, L = p->loops, done = o->loops_done;
	PyObject *agg = NULL, *per = NULL, *ctr = NULL, *why = NULL, *d = NULL, *huge = NULL;
	PyObject *parts = thread_bytes(p);
	uint64_t *loop = PyMem_Calloc(L, sizeof(*loop)), *sums = NULL;

	if (o->counters)
		sums = PyMem_Calloc((size_t)L * PZ_CTR_COUNT, sizeof(*sums));
	if (!loop || (o->counters && !sums)) {
		PyErr_NoMemory();
		goto out;
	}
	pz_team_loop_samples(o->start, o->end, o->samples, L, T, done, p->cold, loop);
	if (sums)
		pz_team_counter_sums(o->counters, (size_t)L * PZ_CTR_COUNT, T, done, PZ_CTR_COUNT,
				     sums);
	agg = pzpy_u64_tuple(loop, done, 1);
	per = pzpy_u64_rows(o->samples, T, L, done, 1);
	ctr = pzpy_counters_dict(sums, done);
	why = pzpy_interrupted(sig);
	huge = o->buffer_bytes ? Py_BuildValue("(KK)", (unsigned long long)o->huge_bytes,
					       (unsigned long long)o->buffer_bytes)
			       : Py_BuildValue("");
	if (agg && per && ctr && why && huge && parts)
		d = Py_BuildValue("{sOsOsOsOsssIsOsOsIsO}", "samples", agg, "thread_samples", per,
				  "thread_bytes", parts, "counters", ctr, "cold_method",
				  p->cold ? pz_name(&pz_flush_names, p->flush.method) : "",
				  "loops_done", done, "interrupted", why, "huge_pages", huge,
				  "settle_loops", o->settle_loops, "settled",
				  o->settled ? Py_True : Py_False);
out:
	Py_XDECREF(parts);
	Py_XDECREF(huge);
	Py_XDECREF(agg);
	Py_XDECREF(per);
	Py_XDECREF(ctr);
	Py_XDECREF(why);
	PyMem_Free(loop);
	PyMem_Free(sums);
	return d;
}

static const char *const mode_names[] = {
	[PZ_THREADS_SHARED] = "shared", [PZ_THREADS_PRIVATE] = "private"
};
static const struct pz_names threads_modes = { mode_names, 2 };

/* The arguments of bench_mem, as given. */
struct mem_args {
	enum pz_kernel_kind kind;
	const char *name, *flush, *mode;
	Py_ssize_t size, chunk, offset, evict_bytes;
	unsigned shift, loops, threads, settle;
	int thp, value, cold, node, counters;
	enum pz_clock_id clock;
	PyObject *cpus;
};

/*
 * Fill @p from @a (p->cpus: PyMem, the caller frees it); -1 with an
 * exception. pagezero.measure.mem_plan checks the arguments with the
 * user's words; pz_bench_mem_check() refuses what slipped past it.
 */
static int mem_params(const struct mem_args *a, struct pz_run_params *p)
{
	int *cpus = NULL;

	memset(p, 0, sizeof(*p));
	p->kernel = pzpy_usable_kernel(a->kind, a->name);
	if (!p->kernel || (a->cold && pzpy_flush_method(a->flush, &p->flush.method) < 0) ||
	    (a->cpus && pzpy_cpus(a->cpus, a->threads, &cpus) < 0))
		return -1;
	p->size = (size_t)a->size;
	p->chunk = (size_t)(a->chunk ? a->chunk : a->size);
	p->page_shift = a->shift;
	p->thp = (enum pz_thp)a->thp;
	p->loops = a->loops;
	p->value = a->value;
	p->offset = (size_t)a->offset;
	p->cold = a->cold;
	p->flush.evict_len = (size_t)a->evict_bytes;
	p->threads = a->threads;
	/* An unknown name is -1, a mode pz_bench_mem_check() refuses. */
	p->mode = (enum pz_threads_mode)pz_lookup(&threads_modes, a->mode);
	p->cpus = cpus;
	p->node = a->node;
	p->counters = a->counters;
	p->settle = a->settle;
	return 0;
}

PyDoc_STRVAR(
	bench_mem__doc__,
	"bench_mem(kind, kernel, size, *, chunk=0, page_shift=12, thp=0, loops=1, clock='ns',\n"
	"          value=0, offset=0, cold=False, flush='', evict_bytes=0, threads=1,\n"
	"          mode='shared', cpus=(), node=-1, counters=False, settle=0)\n--\n\n"
	"Run the memset ('clear') or memcpy ('copy') benchmark entirely in C with\n"
	"the GIL released: map, prefault, then `loops` timed passes over `size`\n"
	"bytes in `chunk`-byte kernel calls (0: the whole size in one). The\n"
	"defaults are perf's conditions: hot, one unpinned thread, no node, no\n"
	"counters. value is the fill byte or -1 for the loop index (perf's\n"
	"memset(dst, i, size)); offset moves the buffers that many bytes past a\n"
	"page boundary (0..4095). cold flushes each chunk before its kernel call\n"
	"(flush: clflushopt, clflush, evict, or '' for the best; evict reads\n"
	"evict_bytes); threads clear disjoint parts of one region ('shared') or\n"
	"their own regions ('private'), pinned to cpus when given; node binds the\n"
	"buffers; counters reads hardware counters around each loop. settle: 0, or\n"
	"the most untimed passes (2 or more; hot, one thread) run before timing\n"
	"until two in a row agree within 5%, after 8 at least.\n"
	"Returns a dict: samples (one per loop for the whole run, in the clock's\n"
	"unit), thread_samples, thread_bytes (each thread's part of the buffer,\n"
	"in bytes), counters (name -> per-loop deltas summed over threads, or\n"
	"None), cold_method, loops_done, interrupted (None, or the\n"
	"signal that stopped the run: the arrays then hold the completed loops)\n"
	"and huge_pages: with thp=1 (asked), (bytes on huge pages, bytes of the\n"
	"buffers) from /proc/self/smaps once the run ends, else None; settle_loops\n"
	"(the untimed passes run) and settled (whether the last two agreed).");

static PyObject *core_bench_mem(PyObject *self, PyObject *args, PyObject *kw)
{
	struct mem_args a = { .flush = "",
			      .mode = "shared",
			      .shift = PZ_PAGE_SHIFT_4KB,
			      .loops = 1,
			      .threads = 1,
			      .node = -1,
			      .clock = PZ_CLOCK_NS };
	struct pzpy_failure fail = { .doing = "mmap" };
	struct pz_run_params p = { .cpus = NULL };
	struct pz_run_out out = { .samples = NULL };
	struct pzpy_timed t;
	PyObject *result = NULL;
	uint64_t avail;
	int ret;
	static char *kwlist[] = { "kind", "kernel", "size",        "chunk",   "page_shift",
				  "thp",  "loops",  "clock",       "value",   "offset",
				  "cold", "flush",  "evict_bytes", "threads", "mode",
				  "cpus", "node",   "counters",    "settle",  NULL };

	if (!PyArg_ParseTupleAndKeywords(
		    args, kw, "O&sO&|$O&O&O&O&O&O&O&pzO&O&sOO&pO&:bench_mem", kwlist, pzpy_kind,
		    &a.kind, &a.name, pzpy_size, &a.size, pzpy_size, &a.chunk, pzpy_page_shift,
		    &a.shift, pzpy_thp, &a.thp, pzpy_loops, &a.loops, pzpy_clock, &a.clock,
		    pzpy_int, &a.value, pzpy_size, &a.offset, &a.cold, &a.flush, pzpy_size,
		    &a.evict_bytes, pzpy_threads, &a.threads, &a.mode, &a.cpus, pzpy_int, &a.node,
		    &a.counters, pzpy_settle, &a.settle) ||
	    mem_params(&a, &p) < 0)
		goto out;
	ret = pz_bench_mem_check(&p, a.clock);
	if (ret) {
		pzpy_raise(ret, &(struct pzpy_failure){ .doing = "bench_mem" });
		goto out;
	}
	fail.bytes = p.size + p.offset;
	fail.shift = p.page_shift;
	fail.buffers = run_buffers(&p);
	fail.threads = p.threads;
	fail.cpus = p.cpus;
	fail.node = p.node >= 0 ? &p.node : NULL;
	/* Refuse before mapping anything; region.c checks one buffer at a time. */
	if (p.page_shift == PZ_PAGE_SHIFT_4KB && pz_mem_available(&avail) == 0 &&
	    (uint64_t)fail.bytes > avail / fail.buffers) {
		pzpy_raise(-E2BIG, &fail);
		goto out;
	}
	if (alloc_out(&out, p.threads, p.loops, p.counters) < 0 ||
	    pzpy_timed_begin(&t, a.clock) < 0)
		goto out;
	Py_BEGIN_ALLOW_THREADS ret = pz_bench_mem(&p, &t.clock, &out);
	Py_END_ALLOW_THREADS pzpy_timed_end(&t);
	failure_from(&fail, &out);
	if (pzpy_timed_check(&t, ret, &fail) == 0)
		result = mem_result(&p, &out, t.sig);
out:
	free_out(&out);
	PyMem_Free((int *)p.cpus);
	return result;
}

/* The test hook's log: every event of every thread, in arrival order. */
struct trace {
	pthread_mutex_t lock;
	const char *base;
	size_t n, cap;
	struct {
		unsigned t;
		int ev;
		size_t off, len;
	} * e;
};

static void record_event(void *ctx, unsigned thread, enum pz_run_event ev, const void *p,
			 size_t len)
{
	struct trace *tr = ctx;

	pthread_mutex_lock(&tr->lock);
	if (tr->n < tr->cap) {
		tr->e[tr->n].t = thread;
		tr->e[tr->n].ev = ev;
		tr->e[tr->n].off = p ? (size_t)((const char *)p - tr->base) : 0;
		tr->e[tr->n].len = len;
		tr->n++;
	}
	pthread_mutex_unlock(&tr->lock);
}

static PyObject *trace_list(const struct trace *tr)
{
	static const char *const ev_names[] = { "start", "flush", "clear" };
	PyObject *l = PyList_New((Py_ssize_t)tr->n);
	size_t i;

	for (i = 0; l && i < tr->n; i++) {
		PyObject *row = Py_BuildValue("(Isnn)", tr->e[i].t, ev_names[tr->e[i].ev],
					      (Py_ssize_t)tr->e[i].off, (Py_ssize_t)tr->e[i].len);

		if (!row)
			Py_CLEAR(l);
		else
			PyList_SET_ITEM(l, (Py_ssize_t)i, row);
	}
	return l;
}

PyDoc_STRVAR(
	run_threads_on__doc__,
	"run_threads_on(buffer, kernel, threads, chunk, loops, value, value_step, cold, flush,\n"
	"               evict_bytes=0)\n--\n\n"
	"Test hook: run bench_mem's loops (shared mode) on a writable buffer the\n"
	"caller mapped, thread t writing value + t * value_step (each 0..255, or 0\n"
	"for a zeros-only kernel), and return the events every thread reported, in\n"
	"order: (thread, event, offset, length) with event 'start' (length: threads\n"
	"past the barrier), 'flush' or 'clear'.");

static PyObject *core_run_threads_on(PyObject *self, PyObject *args, PyObject *kw)
{
	const char *flush_s = NULL;
	unsigned threads = 0, loops = 0;
	Py_ssize_t chunk = 0, evict_bytes = 0;
	int value = 0, step = 0, cold = 0, ret;
	struct pz_run_params p;
	struct pz_run_out out;
	struct pz_clock clock;
	struct pz_region evict = { 0 };
	struct trace tr = { .n = 0 };
	PyObject *result = NULL;
	Py_buffer view;
	char *dst;
	static char *kwlist[] = { "buffer", "kernel",      "threads",    "chunk",
				  "loops",  "value",       "value_step", "cold",
				  "flush",  "evict_bytes", NULL };

	memset(&p, 0, sizeof(p));
	memset(&out, 0, sizeof(out));
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&O&O&O&O&O&pz|O&:run_threads_on", kwlist,
					 pzpy_writable, &view, pzpy_clear_kernel, &p.kernel,
					 pzpy_threads, &threads, pzpy_size, &chunk, pzpy_loops,
					 &loops, pzpy_int, &value, pzpy_int, &step, &cold, &flush_s,
					 pzpy_size, &evict_bytes))
		return NULL;
	if (cold && pzpy_cold_flusher(flush_s, evict_bytes > 0 ? evict_bytes : 1 << 20, &p.flush,
				      &evict) < 0)
		goto out_view;
	p.size = (size_t)view.len;
	p.chunk = (size_t)chunk;
	p.loops = loops;
	p.value = value;
	p.value_step = step;
	p.cold = cold;
	p.threads = threads;
	p.mode = PZ_THREADS_SHARED;
	p.node = -1;
	/* Before the trace's size, which divides by the chunk. */
	ret = pz_bench_mem_check(&p, PZ_CLOCK_NS);
	if (ret) {
		pzpy_raise(ret, &(struct pzpy_failure){ .doing = "run_threads_on" });
		goto out_view;
	}
	p.hook = record_event;
	p.hook_ctx = &tr;
	tr.base = view.buf;
	tr.cap = (size_t)threads + 2 * (size_t)loops * ((p.size + p.chunk - 1) / p.chunk + threads);
	tr.e = PyMem_Calloc(tr.cap, sizeof(*tr.e));
	if (!tr.e) {
		PyErr_NoMemory();
		goto out_view;
	}
	if (alloc_out(&out, threads, loops, 0) < 0 || pzpy_open_clock(&clock, PZ_CLOCK_NS) < 0)
		goto out_trace;
	ret = -pthread_mutex_init(&tr.lock, NULL);
	if (ret) {
		pz_clock_close(&clock);
		pzpy_raise(ret, &(struct pzpy_failure){ .doing = "pthread_mutex_init" });
		goto out_trace;
	}
	dst = view.buf;
	Py_BEGIN_ALLOW_THREADS ret = pz_bench_mem_on(&p, &clock, &dst, NULL, &out);
	Py_END_ALLOW_THREADS pthread_mutex_destroy(&tr.lock);
	pz_clock_close(&clock);
	if (ret) {
		struct pzpy_failure fail = { .doing = "the threaded clear", .threads = threads };

		failure_from(&fail, &out);
		pzpy_raise(ret, &fail);
	} else {
		result = trace_list(&tr);
	}
out_trace:
	free_out(&out);
	PyMem_Free(tr.e);
out_view:
	pz_region_unmap(&evict);
	PyBuffer_Release(&view);
	return result;
}

PyDoc_STRVAR(split_region__doc__,
	     "split_region(size, threads, page_shift=12, thp=0)\n--\n\n"
	     "How bench_mem splits a shared region of `size` bytes among `threads`:\n"
	     "(the page every part starts on, each thread's bytes). The parts are whole\n"
	     "pages but the last, which takes the rest; a first part of 0 bytes means\n"
	     "less than a page per thread, which bench_mem refuses.");

static PyObject *core_split_region(PyObject *self, PyObject *args, PyObject *kw)
{
	struct pz_run_params p = { .mode = PZ_THREADS_SHARED, .page_shift = PZ_PAGE_SHIFT_4KB };
	Py_ssize_t size = 0;
	int thp = PZ_THP_SYSTEM;
	PyObject *parts;
	static char *kwlist[] = { "size", "threads", "page_shift", "thp", NULL };

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&|O&O&:split_region", kwlist, pzpy_size,
					 &size, pzpy_threads, &p.threads, pzpy_page_shift,
					 &p.page_shift, pzpy_thp, &thp))
		return NULL;
	p.size = (size_t)size;
	p.thp = (enum pz_thp)thp;
	parts = thread_bytes(&p);
	return parts ? Py_BuildValue("(nN)", (Py_ssize_t)pz_part_align(&p), parts) : NULL;
}

PyMethodDef pzpy_mem_methods[] = {
	PZPY_KW_METHOD("bench_mem", core_bench_mem, bench_mem__doc__),
	PZPY_KW_METHOD("split_region", core_split_region, split_region__doc__),
	PZPY_KW_METHOD("run_threads_on", core_run_threads_on, run_threads_on__doc__),
	{ NULL, NULL, 0, NULL }
};
