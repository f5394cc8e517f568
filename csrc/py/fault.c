/*
 * fault.c - the page-fault workloads: bench_fault (timed, threaded) and
 * fault_pass (one untimed pass that leaves the region mapped).
 */
#include <errno.h>
#include <string.h>

#include "pzpy.h"
#include "stats.h"

/* Latency samples a run may keep: 8 bytes each, so 128 MiB at most. */
#define PZ_FAULT_MAX_LAT (16u << 20)

static const char populate_write_missing[] =
	"populate-write needs madvise(MADV_POPULATE_WRITE), which this "
	"kernel lacks (Linux 5.14 and later have it); use demand or populate";

/*
 * The parameters pz_fault_check() refuses: pagezero.measure.fault_plan
 * words each rule for the user first, so what reaches this is a caller of
 * _core's own mistake, refused before anything is mapped.
 */
static int check_fault_params(struct pz_fault_params *p, Py_ssize_t size, int thp,
			      Py_ssize_t lat_unit, enum pz_clock_id clock, const char *fname)
{
	int ret;

	p->size = (size_t)size;
	p->thp = (enum pz_thp)thp;
	p->lat_unit = (size_t)lat_unit;
	ret = pz_fault_check(p, clock);
	if (ret)
		pzpy_raise(ret, &(struct pzpy_failure){ .doing = fname });
	return ret;
}

/* What a failed fault run or pass was doing, for pzpy_raise. */
static struct pzpy_failure fault_failure(const struct pz_fault_params *p)
{
	return (struct pzpy_failure){ .doing = "mmap",
				      .bytes = p->size,
				      .shift = p->page_shift,
				      .buffers = p->threads,
				      .threads = p->threads,
				      .unsupported = populate_write_missing };
}

static PyObject *pages_dict(const struct pz_smaps_pages *pg)
{
	return Py_BuildValue("{s:K,s:K,s:K,s:K}", "rss", (unsigned long long)pg->rss, "anon_huge",
			     (unsigned long long)pg->anon_huge, "hugetlb",
			     (unsigned long long)pg->hugetlb, "kernel_page",
			     (unsigned long long)pg->kernel_page);
}

static PyObject *loop_pages(size_t i, const void *pages)
{
	return pages_dict((const struct pz_smaps_pages *)pages + i);
}

/*
 * A summary of @loops loops of @per latencies each, in ns (sorted in place): too
 * many to keep raw. Each loop's median too, first: the loops the warm-up rule
 * keeps (pagezero.measure.warmup, applied after the run) have their own.
 */
static PyObject *latency_dict(uint64_t *v, size_t loops, size_t per, size_t unit)
{
	const size_t n = loops * per;
	struct pz_latency_summary s;
	PyObject *loop_p50, *item, *res = NULL;
	size_t i;

	if (!n)
		Py_RETURN_NONE;
	loop_p50 = PyTuple_New((Py_ssize_t)loops);
	if (!loop_p50)
		return NULL;
	for (i = 0; i < loops; i++) {
		pz_sort_u64(v + i * per, per);
		item = PyLong_FromUnsignedLongLong(pz_percentile(v + i * per, per, 500, 1000));
		if (!item)
			goto out;
		PyTuple_SET_ITEM(loop_p50, (Py_ssize_t)i, item);
	}
	pz_latency_summarize(v, n, &s);
	res = Py_BuildValue("{s:n,s:n,s:K,s:K,s:K,s:K,s:K,s:K,s:d,s:O}", "n", (Py_ssize_t)n,
			    "unit_bytes", (Py_ssize_t)unit, "min_ns", (unsigned long long)s.min,
			    "p50_ns", (unsigned long long)s.p50, "p90_ns",
			    (unsigned long long)s.p90, "p99_ns", (unsigned long long)s.p99,
			    "p999_ns", (unsigned long long)s.p999, "max_ns",
			    (unsigned long long)s.max, "mean_ns", s.mean, "loop_p50_ns", loop_p50);
out:
	Py_DECREF(loop_p50);
	return res;
}

static PyObject *loop_counts(const struct pz_sample_loop *c, int with_kernel)
{
	PyObject *d = Py_BuildValue("{s:K,s:K,s:K,s:K,s:K}", "user", (unsigned long long)c->user,
				    "user_period", (unsigned long long)c->user_period, "other",
				    (unsigned long long)c->other, "other_period",
				    (unsigned long long)c->other_period, "lost",
				    (unsigned long long)c->lost);
	PyObject *k;

	if (!d || !with_kernel)
		return d;
	k = PyLong_FromUnsignedLongLong(c->kernel);
	if (!k || PyDict_SetItemString(d, "kernel", k)) {
		Py_XDECREF(k);
		Py_DECREF(d);
		return NULL;
	}
	Py_DECREF(k);
	return d;
}

static PyObject *profile_loop(size_t i, const void *loops)
{
	return loop_counts((const struct pz_sample_loop *)loops + i, 1);
}

/*
 * None without sampling; {"refused": errno, "stage": "open" | "mmap"} where it
 * was refused; else the completed loops' samples (bench_fault's docstring).
 */
static PyObject *profile_dict(const struct pz_fault_params *p, const struct pz_fault_out *out)
{
	const struct pz_fault_profile *prof = &out->profile;
	PyObject *ips, *periods, *loops, *res = NULL;

	if (!p->profile)
		Py_RETURN_NONE;
	if (prof->err)
		return Py_BuildValue("{s:i,s:s}", "refused", -prof->err, "stage",
				     pz_name(&pz_sample_stage_names, (int)prof->stage));
	ips = pzpy_u64_tuple(prof->ips, prof->n, 1);
	periods = pzpy_u64_tuple(prof->periods, prof->n, 1);
	loops = pzpy_tuple_of(out->loops_done, profile_loop, prof->loops);
	res = loop_counts(&prof->total, 0);
	if (ips && periods && loops && res) {
		PyObject *more = Py_BuildValue("{s:s,s:O,s:O,s:O,s:O}", "event",
					       pz_name(&pz_sample_event_names, (int)prof->event),
					       "kernel_ips", ips, "kernel_periods", periods,
					       "loops", loops, "format_lost",
					       prof->format_lost ? Py_True : Py_False);

		if (!more || PyDict_Update(res, more))
			Py_CLEAR(res);
		Py_XDECREF(more);
	} else {
		Py_CLEAR(res);
	}
	Py_XDECREF(ips);
	Py_XDECREF(periods);
	Py_XDECREF(loops);
	return res;
}

/*
 * {"wall": (per loop), "threads": ((per loop) per thread), "thread_cpu": the
 * same of CPU ns, "pages": ({...} per loop), "latency": {...} or None,
 * "loops_done": n, "interrupted": None or the signal's name, "profile":
 * profile_dict()}, every per-loop value cut to the @out->loops_done loops that
 * completed (all of them unless a signal stopped the run).
 */
static PyObject *fault_result(const struct pz_fault_params *p, const struct pz_fault_out *out,
			      size_t nlat, int sig)
{
	const unsigned done = out->loops_done;
	PyObject *wall, *threads, *cpu, *pages, *lat, *prof, *res = NULL;

	wall = pzpy_u64_tuple(out->wall, done, 1);
	threads = pzpy_u64_rows(out->thread, p->threads, 1, done, p->threads);
	cpu = pzpy_u64_rows(out->thread_cpu, p->threads, 1, done, p->threads);
	pages = pzpy_tuple_of(done, loop_pages, out->pages);
	/* @nlat covers every loop, loop-major: the completed loops' samples come first. */
	lat = latency_dict(out->lat, done, nlat / p->loops, p->lat_unit);
	prof = profile_dict(p, out);
	if (wall && threads && cpu && pages && lat && prof)
		res = Py_BuildValue("{s:O,s:O,s:O,s:O,s:O,s:I,s:N,s:O}", "wall", wall, "threads",
				    threads, "thread_cpu", cpu, "pages", pages, "latency", lat,
				    "loops_done", done, "interrupted", pzpy_interrupted(sig),
				    "profile", prof);
	Py_XDECREF(prof);
	Py_XDECREF(cpu);
	Py_XDECREF(wall);
	Py_XDECREF(threads);
	Py_XDECREF(pages);
	Py_XDECREF(lat);
	return res;
}

PyDoc_STRVAR(fault_workloads__doc__,
	     "fault_workloads()\n--\n\n"
	     "The fault workloads as a tuple of (name, description), in table order.");

static PyObject *workload(size_t i, const void *unused)
{
	return Py_BuildValue("(ss)", pz_name(&pz_fault_names, (int)i),
			     pz_name(&pz_fault_descriptions, (int)i));
}

static PyObject *core_fault_workloads(PyObject *self, PyObject *unused)
{
	return pzpy_tuple_of(PZ_FAULT_COUNT, workload, NULL);
}

PyDoc_STRVAR(bench_fault__doc__,
	     "bench_fault(workload, size, page_shift, thp, loops, threads, seed, clock, "
	     "lat_unit, touch='write', profile=False)\n--\n\n"
	     "Run a fault workload ('demand', 'populate' or 'populate-write') entirely in C\n"
	     "with the GIL released: each of `threads` threads maps `size` bytes and faults\n"
	     "every page in, timed, then the regions' smaps counters are read and they are\n"
	     "unmapped, untimed; `loops` times. seed != 0 makes demand write a random offset\n"
	     "of each page. lat_unit > 0 also times every lat_unit bytes of faults (ns).\n"
	     "touch 'write' writes one byte per page (demand only); 'perf' touches each\n"
	     "page as perf's mmap_page_touch, byte += page index (a read, then a write),\n"
	     "after every workload, as perf does.\n"
	     "Returns {'wall': per-loop durations from the first start to the last end,\n"
	     "'threads': per thread, its per-loop durations (clock units), 'thread_cpu':\n"
	     "per thread, its per-loop CPU time (ns, CLOCK_THREAD_CPUTIME_ID read just\n"
	     "outside the timed span), 'pages': per\n"
	     "loop, {'rss', 'anon_huge', 'hugetlb', 'kernel_page'} in bytes, 'latency':\n"
	     "None or {'n', 'unit_bytes', 'min_ns', 'p50_ns', 'p90_ns', 'p99_ns',\n"
	     "'p999_ns', 'max_ns', 'mean_ns'} over every loop, with 'loop_p50_ns': each\n"
	     "loop's median, 'loops_done': the loops completed,\n"
	     "'interrupted': None, or the signal (SIGINT, SIGTERM, SIGHUP) that stopped\n"
	     "the run within a loop: every per-loop value then covers the completed\n"
	     "loops only, 'profile': None, or with profile=True where sampling was\n"
	     "refused {'refused': errno, 'stage': 'open' (perf_event_open) or 'mmap'\n"
	     "(the sample ring)}, else the completed loops' samples: {'event': 'cycles'\n"
	     "or 'cpu-clock', 'kernel_ips': the kernel instruction pointers sampled in\n"
	     "the timed passes, loop-major (loop 0's: thread 0's, thread 1's...; then\n"
	     "loop 1's...), 'kernel_periods': each one's sample period (cycles, or ns of\n"
	     "CPU), 'loops': per loop {'kernel', 'user', 'user_period', 'other',\n"
	     "'other_period', 'lost'} summed over the threads, 'user', 'user_period',\n"
	     "'other', 'other_period', 'lost': their totals, 'format_lost': whether\n"
	     "the losses were read with PERF_FORMAT_LOST (Linux 6.0+)}}.");

static PyObject *core_bench_fault(PyObject *self, PyObject *args, PyObject *kw)
{
	enum pz_clock_id clock_id = PZ_CLOCK_NS;
	Py_ssize_t size = 0, lat_unit = 0;
	int thp = 0, profile = 0, ret;
	struct pz_fault_params p;
	struct pz_fault_out out = { 0 };
	struct pzpy_timed t;
	struct pzpy_failure fail;
	size_t nlat;
	uint64_t avail;
	PyObject *result = NULL;
	static char *kwlist[] = { "workload", "size",  "page_shift", "thp",   "loops",   "threads",
				  "seed",     "clock", "lat_unit",   "touch", "profile", NULL };

	memset(&p, 0, sizeof(p));
	if (!PyArg_ParseTupleAndKeywords(
		    args, kw, "O&O&O&O&O&O&O&O&O&|O&p:bench_fault", kwlist, pzpy_workload,
		    &p.workload, pzpy_size, &size, pzpy_page_shift, &p.page_shift, pzpy_thp, &thp,
		    pzpy_loops, &p.loops, pzpy_threads, &p.threads, pzpy_seed, &p.seed, pzpy_clock,
		    &clock_id, pzpy_size, &lat_unit, pzpy_touch, &p.touch, &profile) ||
	    check_fault_params(&p, size, thp, lat_unit, clock_id, "bench_fault"))
		return NULL;
	p.profile = profile;
	fail = fault_failure(&p);
	nlat = pz_fault_lat_count(&p);
	if (nlat > PZ_FAULT_MAX_LAT) {
		PyErr_Format(PyExc_ValueError,
			     "%zu latency samples are too many to keep (at most "
			     "%u): use fewer loops or threads, a smaller size or a larger unit",
			     nlat, PZ_FAULT_MAX_LAT);
		return NULL;
	}
	/* Refuse before mapping: overcommit would accept it and the OOM killer answer later. */
	if (p.page_shift == pz_base_page_shift() && pz_mem_available(&avail) == 0 &&
	    (uint64_t)size > avail / p.threads)
		return pzpy_raise(-E2BIG, &fail);

	out.wall = PyMem_Calloc(p.loops, sizeof(*out.wall));
	out.thread = PyMem_Calloc((size_t)p.loops * p.threads, sizeof(*out.thread));
	out.thread_cpu = PyMem_Calloc((size_t)p.loops * p.threads, sizeof(*out.thread_cpu));
	out.pages = PyMem_Calloc(p.loops, sizeof(*out.pages));
	out.lat = nlat ? PyMem_Calloc(nlat, sizeof(*out.lat)) : NULL;
	if (!out.wall || !out.thread || !out.thread_cpu || !out.pages || (nlat && !out.lat)) {
		PyErr_NoMemory();
		goto out;
	}
	if (pzpy_timed_begin(&t, clock_id) < 0)
		goto out;
	Py_BEGIN_ALLOW_THREADS ret = pz_fault_run(&p, &t.clock, &out);
	Py_END_ALLOW_THREADS pzpy_timed_end(&t);
	if (pzpy_timed_check(&t, ret, &fail) == 0)
		result = fault_result(&p, &out, nlat, t.sig);
out:
	PyMem_Free(out.wall);
	PyMem_Free(out.thread);
	PyMem_Free(out.thread_cpu);
	PyMem_Free(out.pages);
	PyMem_Free(out.lat);
	pz_fault_profile_free(&out.profile); /* the C core's malloc() */
	return result;
}

PyDoc_STRVAR(fault_pass__doc__,
	     "fault_pass(workload, size, page_shift, thp, seed, lat_unit=0, touch='write')\n"
	     "--\n\n"
	     "One untimed pass of a fault workload, as one thread of bench_fault runs it,\n"
	     "that leaves the region mapped: returns (Region, pages) where pages is the\n"
	     "smaps summary bench_fault reports. For tests and inspection.");

static PyObject *core_fault_pass(PyObject *self, PyObject *args, PyObject *kw)
{
	Py_ssize_t size = 0, lat_unit = 0;
	int thp = 0, ret;
	struct pz_fault_params p;
	struct pz_smaps_pages pages;
	struct pz_region r;
	PyObject *region, *pd;
	static char *kwlist[] = { "workload", "size",     "page_shift", "thp",
				  "seed",     "lat_unit", "touch",      NULL };

	memset(&p, 0, sizeof(p));
	p.loops = p.threads = 1;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&O&O&O&|O&O&:fault_pass", kwlist,
					 pzpy_workload, &p.workload, pzpy_size, &size,
					 pzpy_page_shift, &p.page_shift, pzpy_thp, &thp, pzpy_seed,
					 &p.seed, pzpy_size, &lat_unit, pzpy_touch, &p.touch) ||
	    check_fault_params(&p, size, thp, lat_unit, PZ_CLOCK_NS, "fault_pass"))
		return NULL;
	Py_BEGIN_ALLOW_THREADS ret = pz_fault_once(&p, &r, &pages);
	Py_END_ALLOW_THREADS if (ret)
	{
		struct pzpy_failure fail = fault_failure(&p);

		return pzpy_raise(ret, &fail);
	}
	pd = pages_dict(&pages);
	if (!pd) {
		pz_region_unmap(&r);
		return NULL;
	}
	region = pzpy_region_adopt(&r);
	if (!region) {
		Py_DECREF(pd);
		return NULL;
	}
	return Py_BuildValue("(NN)", region, pd);
}

PyMethodDef pzpy_fault_methods[] = {
	{ "fault_workloads", core_fault_workloads, METH_NOARGS, fault_workloads__doc__ },
	PZPY_KW_METHOD("bench_fault", core_bench_fault, bench_fault__doc__),
	PZPY_KW_METHOD("fault_pass", core_fault_pass, fault_pass__doc__),
	{ NULL, NULL, 0, NULL }
};
