/*
 * mem.c - the memset / memcpy benchmarks: hot single-thread (bench_mem),
 * under measured conditions (bench_threads) and the threaded run's test
 * hook on a caller's buffer (run_threads_on).
 */
#include <pthread.h>
#include <string.h>

#include "counters.h"
#include "pzpy.h"
#include "stats.h"
#include "threads.h"

/* Buffers a run maps: memcpy's two per region. */
static unsigned kind_buffers(enum pz_kernel_kind kind)
{
	return kind == PZ_KIND_COPY ? 2 : 1;
}

/* The leading arguments bench_mem and bench_threads share, in their order. */
struct mem_args {
	enum pz_kernel_kind kind;
	const char *name;
	Py_ssize_t size, chunk;
	unsigned shift, loops;
	int thp, value;
	enum pz_clock_id clock;
	const struct pz_kernel *kernel;     /* resolved by check_mem() */
};

#define MEM_PARAMS(a) \
		{ "kind", pzpy_kind, &(a).kind }, \
		{ "kernel", pzpy_str, &(a).name }, \
		{ "size", pzpy_ssize, &(a).size }, \
		{ "chunk", pzpy_ssize, &(a).chunk }, \
		{ "page_shift", pzpy_page_shift, &(a).shift }, \
		{ "thp", pzpy_thp, &(a).thp }, \
		{ "loops", pzpy_loops, &(a).loops }, \
		{ "clock", pzpy_clock, &(a).clock }, \
		{ "value", pzpy_int, &(a).value }

/* The same fields of struct pz_mem_params and struct pz_run_params, from @a. */
#define MEM_FIELDS(p, a) do { \
		(p).kernel = (a).kernel; \
		(p).size = (size_t)(a).size; \
		(p).chunk = (size_t)(a).chunk; \
		(p).page_shift = (a).shift; \
		(p).thp = (enum pz_thp)(a).thp; \
		(p).loops = (a).loops; \
		(p).value = (a).value; \
	} while (0)

/* The checks bench_mem and bench_threads share; the kernel resolved into a->kernel. */
static int check_mem(struct mem_args *a)
{
	if (a->thp == PZ_THP_ON && a->shift != PZ_PAGE_SHIFT_4KB) {
		PyErr_SetString(PyExc_ValueError,
				"transparent huge pages apply to 4KB mappings only");
		return -1;
	}
	if (a->size <= 0 || a->chunk <= 0 || a->chunk > a->size) {
		PyErr_Format(PyExc_ValueError, "need 0 < chunk <= size (size %zd, chunk %zd)",
			     a->size, a->chunk);
		return -1;
	}
	a->kernel = pzpy_usable_kernel(a->kind, a->name);
	if (!a->kernel)
		return -1;
	return a->kind == PZ_KIND_FILL ? pzpy_check_fill_value(a->kernel, a->value, 1) : 0;
}

PyDoc_STRVAR(bench_mem__doc__,
"bench_mem(kind, kernel, size, chunk, page_shift, thp, loops, clock, value, offset=0)\n--\n\n"
"Run the memset ('clear') or memcpy ('copy') benchmark entirely in C with\n"
"the GIL released: map, prefault, then `loops` timed passes over `size`\n"
"bytes in `chunk`-byte kernel calls. Returns one duration per pass in the\n"
"clock's unit (ns for ns and timeval, cycles, tsc ticks). value is the fill\n"
"byte or -1 for the loop index (perf's memset(dst, i, size)); offset moves\n"
"the buffers that many bytes past a page boundary (0..4095).");

static PyObject *core_bench_mem(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
				PyObject *kwnames)
{
	struct mem_args a = { .clock = PZ_CLOCK_NS };
	Py_ssize_t offset = 0;
	int ret;
	struct pz_mem_params p;
	struct pz_clock clock;
	uint64_t *samples, avail;
	PyObject *result = NULL;
	const struct pzpy_param params[] = {
		MEM_PARAMS(a),
		{ "offset", pzpy_ssize, &offset },
	};
	struct pzpy_failure fail = { .doing = "mmap" };

	if (PZPY_PARSE("bench_mem", params, 9, 10) < 0)
		return NULL;
	if (offset < 0 || offset >= 4096) {
		PyErr_Format(PyExc_ValueError, "offset must be 0..4095 bytes, not %zd", offset);
		return NULL;
	}
	if (check_mem(&a) < 0)
		return NULL;
	memset(&p, 0, sizeof(p));
	MEM_FIELDS(p, a);
	p.offset = (size_t)offset;
	fail.bytes = p.size;
	fail.shift = a.shift;
	fail.buffers = kind_buffers(a.kind);

	/* Refuse before mapping anything; region.c checks one buffer, memcpy needs two. */
	if (a.shift == PZ_PAGE_SHIFT_4KB && pz_mem_available(&avail) == 0 &&
	    (uint64_t)a.size > avail / fail.buffers)
		return pzpy_raise(-E2BIG, &fail);

	samples = PyMem_Calloc(a.loops, sizeof(*samples));
	if (!samples)
		return PyErr_NoMemory();
	if (pzpy_open_clock(&clock, a.clock) < 0)
		goto out;
	Py_BEGIN_ALLOW_THREADS
	ret = pz_bench_mem(&p, &clock, samples);
	Py_END_ALLOW_THREADS
	pz_clock_close(&clock);
	if (ret)
		pzpy_raise(ret, &fail);
	else
		result = pzpy_u64_tuple(samples, a.loops, 1);
out:
	PyMem_Free(samples);
	return result;
}

static int alloc_out(struct pz_run_out *o, unsigned threads, unsigned loops, int counters)
{
	size_t n = (size_t)threads * loops;

	memset(o, 0, sizeof(*o));
	o->failed_counter = PZ_CTR_COUNT;
	o->samples = PyMem_Calloc(n, sizeof(uint64_t));
	o->start = PyMem_Calloc(n, sizeof(uint64_t));
	o->end = PyMem_Calloc(n, sizeof(uint64_t));
	if (counters)
		o->counters = PyMem_Calloc(n * PZ_CTR_COUNT, sizeof(uint64_t));
	if (!o->samples || !o->start || !o->end || (counters && !o->counters)) {
		PyErr_NoMemory();
		return -1;
	}
	return 0;
}

static void free_out(struct pz_run_out *o)
{
	PyMem_Free(o->samples);
	PyMem_Free(o->start);
	PyMem_Free(o->end);
	PyMem_Free(o->counters);
}

/* samples (one per loop for the whole team), thread_samples, counters (summed), cold_method. */
static PyObject *threads_result(const struct pz_run_params *p, const struct pz_run_out *o)
{
	const unsigned T = p->threads, L = p->loops;
	PyObject *agg = NULL, *per = PyTuple_New(T), *ctr = NULL, *d = NULL;
	uint64_t *loop = PyMem_Calloc(L, sizeof(*loop)), *sums = NULL;
	unsigned t;

	if (o->counters)
		sums = PyMem_Calloc((size_t)L * PZ_CTR_COUNT, sizeof(*sums));
	if (!loop || (o->counters && !sums)) {
		PyErr_NoMemory();
		goto out;
	}
	pz_team_loop_samples(o->start, o->end, o->samples, L, T, L, p->cold, loop);
	if (sums)
		pz_team_counter_sums(o->counters, (size_t)L * PZ_CTR_COUNT, T, L, PZ_CTR_COUNT, sums);
	agg = pzpy_u64_tuple(loop, L, 1);
	for (t = 0; per && t < T; t++) {
		PyObject *row = pzpy_u64_tuple(o->samples + (size_t)t * L, L, 1);

		if (!row)
			Py_CLEAR(per);
		else
			PyTuple_SET_ITEM(per, t, row);
	}
	ctr = pzpy_counters_dict(sums, L);
	if (agg && per && ctr)
		d = Py_BuildValue("{sOsOsOss}", "samples", agg, "thread_samples", per,
				  "counters", ctr, "cold_method",
				  p->cold ? pz_flush_name(p->flush.method) : "");
out:
	Py_XDECREF(agg);
	Py_XDECREF(per);
	Py_XDECREF(ctr);
	PyMem_Free(loop);
	PyMem_Free(sums);
	return d;
}

PyDoc_STRVAR(bench_threads__doc__,
"bench_threads(kind, kernel, size, chunk, page_shift, thp, loops, clock, value, *,\n"
"              cold=False, flush='', evict_bytes=0, threads=1, mode='shared',\n"
"              cpus=(), node=-1, counters=False)\n--\n\n"
"memset ('clear') or memcpy ('copy') under measured conditions, in C with\n"
"the GIL released. cold flushes each chunk before its kernel call (flush:\n"
"clflushopt, clflush, evict, or '' for the best; evict reads evict_bytes);\n"
"threads clear disjoint parts of one region ('shared') or their own\n"
"regions ('private'), pinned to cpus when given; node binds the buffers;\n"
"counters reads hardware counters around each loop. Returns a dict:\n"
"samples (one per loop for the whole run), thread_samples, counters\n"
"(name -> per-loop deltas summed over threads, or None), cold_method.");

static PyObject *core_bench_threads(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
				    PyObject *kwnames)
{
	struct mem_args a = { .clock = PZ_CLOCK_NS };
	const char *flush_s = "", *mode_s = "shared";
	Py_ssize_t evict_bytes = 0;
	unsigned threads = 1;
	int cold = 0, node = -1, counters = 0, ret;
	PyObject *cpus_obj = NULL, *result = NULL;
	struct pz_run_params p;
	struct pz_run_out out;
	struct pz_clock clock;
	int *cpus = NULL;
	const struct pzpy_param params[] = {
		MEM_PARAMS(a),
		{ "cold", pzpy_bool, &cold },
		{ "flush", pzpy_str_or_none, &flush_s },
		{ "evict_bytes", pzpy_ssize, &evict_bytes },
		{ "threads", pzpy_threads, &threads },
		{ "mode", pzpy_str, &mode_s },
		{ "cpus", pzpy_object, &cpus_obj },
		{ "node", pzpy_int, &node },
		{ "counters", pzpy_bool, &counters },
	};
	struct pzpy_failure fail = { .doing = "mmap", .failed_counter = &out.failed_counter };

	memset(&out, 0, sizeof(out));
	out.failed_counter = PZ_CTR_COUNT;
	if (PZPY_PARSE("bench_threads", params, 9, 9) < 0)
		return NULL;
	memset(&p, 0, sizeof(p));
	if (strcmp(mode_s, "shared") && strcmp(mode_s, "private")) {
		PyErr_Format(PyExc_ValueError, "threads mode '%s' is not shared or private", mode_s);
		return NULL;
	}
	p.mode = strcmp(mode_s, "private") == 0 ? PZ_THREADS_PRIVATE : PZ_THREADS_SHARED;
	if (p.mode == PZ_THREADS_SHARED && threads > 1 && (size_t)a.size / threads < 4096) {
		PyErr_Format(PyExc_ValueError, "size %zd is too small for %u threads: each needs "
			     "at least 4KB of it", a.size, threads);
		return NULL;
	}
	if (check_mem(&a) < 0)
		return NULL;
	if (cold && pzpy_flush_method(flush_s, &p.flush.method) < 0)
		return NULL;
	if (cold && p.flush.method == PZ_FLUSH_EVICT) {
		if (evict_bytes <= 0) {
			PyErr_SetString(PyExc_ValueError, "evicting needs evict_bytes > 0 (2x the LLC)");
			return NULL;
		}
		p.flush.evict_len = (size_t)evict_bytes;
	}
	if (cpus_obj && pzpy_cpus(cpus_obj, threads, &cpus) < 0)
		return NULL;
	MEM_FIELDS(p, a);
	p.cold = cold;
	p.threads = threads;
	p.cpus = cpus;
	p.node = node;
	p.counters = counters;
	fail.bytes = p.size;
	fail.shift = a.shift;
	fail.buffers = kind_buffers(a.kind) * (p.mode == PZ_THREADS_PRIVATE ? threads : 1u);
	fail.threads = threads;
	fail.cpus = cpus;
	fail.node = node >= 0 ? &p.node : NULL;
	if (!counters)
		fail.failed_counter = NULL;

	if (alloc_out(&out, threads, a.loops, counters) < 0 ||
	    pzpy_open_clock(&clock, a.clock) < 0)
		goto out;
	Py_BEGIN_ALLOW_THREADS
	ret = pz_bench_threads(&p, &clock, &out);
	Py_END_ALLOW_THREADS
	pz_clock_close(&clock);
	if (ret)
		pzpy_raise(ret, &fail);
	else
		result = threads_result(&p, &out);
out:
	free_out(&out);
	PyMem_Free(cpus);
	return result;
}

/* The test hook's log: every event of every thread, in arrival order. */
struct trace {
	pthread_mutex_t lock;
	const char *base;
	size_t n, cap;
	struct { unsigned t; int ev; size_t off, len; } *e;
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

PyDoc_STRVAR(run_threads_on__doc__,
"run_threads_on(buffer, kernel, threads, chunk, loops, value, value_step, cold, flush,\n"
"               evict_bytes=0)\n--\n\n"
"Test hook: run the threaded clear (shared mode) on a writable buffer the\n"
"caller mapped, thread t writing value + t * value_step (each 0..255, or 0\n"
"for a zeros-only kernel), and return the events every thread reported, in\n"
"order: (thread, event, offset, length) with event 'start' (length: threads\n"
"past the barrier), 'flush' or 'clear'.");

static PyObject *core_run_threads_on(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
				     PyObject *kwnames)
{
	const char *flush_s = NULL;
	unsigned threads = 0, loops = 0, t;
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
	const struct pzpy_param params[] = {
		{ "buffer", pzpy_writable, &view },
		{ "kernel", pzpy_clear_kernel, &p.kernel },
		{ "threads", pzpy_threads, &threads },
		{ "chunk", pzpy_ssize, &chunk },
		{ "loops", pzpy_loops, &loops },
		{ "value", pzpy_int, &value },
		{ "value_step", pzpy_int, &step },
		{ "cold", pzpy_bool, &cold },
		{ "flush", pzpy_str_or_none, &flush_s },
		{ "evict_bytes", pzpy_ssize, &evict_bytes },
	};

	memset(&p, 0, sizeof(p));
	memset(&out, 0, sizeof(out));
	if (PZPY_PARSE("run_threads_on", params, 9, 10) < 0)
		return NULL;
	/* Every thread's byte, not only the first: thread t writes value + t * step. */
	for (t = 0; t < threads; t++)
		if (pzpy_check_fill_value(p.kernel, value + (int)t * step, 0) < 0)
			goto out_view;
	if (cold && pzpy_cold_flusher(flush_s, evict_bytes > 0 ? evict_bytes : 1 << 20,
				      &p.flush, &evict) < 0)
		goto out_view;
	if (chunk <= 0 || view.len <= 0 || (size_t)view.len / threads < 4096) {
		PyErr_SetString(PyExc_ValueError, "need chunk > 0 and at least 4KB of buffer "
				"per thread");
		goto out_view;
	}
	p.size = (size_t)view.len;
	p.chunk = (size_t)chunk;
	p.loops = loops;
	p.value = value;
	p.value_step = step;
	p.cold = cold;
	p.threads = threads;
	p.mode = PZ_THREADS_SHARED;
	p.node = -1;
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
	pthread_mutex_init(&tr.lock, NULL);
	dst = view.buf;
	Py_BEGIN_ALLOW_THREADS
	ret = pz_run_threads(&p, &clock, &dst, NULL, &out);
	Py_END_ALLOW_THREADS
	pthread_mutex_destroy(&tr.lock);
	pz_clock_close(&clock);
	if (ret) {
		struct pzpy_failure fail = { .doing = "the threaded clear", .threads = threads };

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

static PyMethodDef mem_methods[] = {
	{ "bench_mem", PZPY_FASTCALL(core_bench_mem), PZPY_KW, bench_mem__doc__ },
	{ "bench_threads", PZPY_FASTCALL(core_bench_threads), PZPY_KW, bench_threads__doc__ },
	{ "run_threads_on", PZPY_FASTCALL(core_run_threads_on), PZPY_KW, run_threads_on__doc__ },
	{ NULL, NULL, 0, NULL }
};

int pzpy_init_mem(PyObject *m)
{
	return pzpy_add_methods(m, mem_methods);
}
