/*
 * module.c - pagezero._core: the CPython bindings of the C core.
 *
 * The only file that includes Python.h. It parses arguments, releases the
 * GIL around everything timed, and turns the core's -errno returns into
 * ValueError, pagezero.UnavailableError or pagezero.MappingError (an
 * OSError carrying errno) with a message that names the cause and the fix.
 */
#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE
#include <Python.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <pthread.h>
#include <sched.h>

#include "bench.h"
#include "cache.h"
#include "counters.h"
#include "numa.h"
#include "threads.h"
#include "clock.h"
#include "cpu.h"
#include "fault.h"
#include "kernels.h"
#include "policy.h"
#include "policy_bench.h"
#include "region.h"

static PyObject *PagezeroError;
static PyObject *UnavailableError;
static PyObject *MappingError;

/* Below this many bytes, dropping the GIL costs more than it lets others do. */
#define PZ_GIL_RELEASE_BYTES (64 * 1024)

static const char *kind_name(enum pz_kernel_kind kind)
{
	return kind == PZ_KIND_FILL ? "clear" : "copy";
}

static int parse_kind(const char *s, enum pz_kernel_kind *kind)
{
	if (strcmp(s, "clear") == 0) {
		*kind = PZ_KIND_FILL;
		return 0;
	}
	if (strcmp(s, "copy") == 0) {
		*kind = PZ_KIND_COPY;
		return 0;
	}
	PyErr_Format(PyExc_ValueError, "unknown kernel kind '%s' (expected 'clear' or 'copy')", s);
	return -1;
}

/* The named kernel if it exists and this CPU runs it; NULL with an exception otherwise. */
static const struct pz_kernel *usable_kernel(enum pz_kernel_kind kind, const char *name)
{
	const struct pz_kernel *k = pz_kernel_find(kind, name);
	char reason[128];

	if (!k) {
		PyErr_Format(PyExc_ValueError,
			     "unknown %s kernel '%s' (pagezero.kernels() lists them)",
			     kind_name(kind), name);
		return NULL;
	}
	if (!pz_kernel_available(k, reason, sizeof(reason))) {
		PyErr_Format(UnavailableError, "kernel '%s' is not available: %s", name, reason);
		return NULL;
	}
	return k;
}

/* A fill byte @k can write: 0..255 (or the loop index where @allow_loop). */
static int check_fill_value(const struct pz_kernel *k, int value, int allow_loop)
{
	if (!(allow_loop && value == PZ_VALUE_LOOP) && (value < 0 || value > 255)) {
		PyErr_Format(PyExc_ValueError, "fill value %d is outside 0..255", value);
		return -1;
	}
	if ((k->flags & PZ_ZERO_ONLY) && value != 0) {
		PyErr_Format(PyExc_ValueError,
			     "kernel '%s' can only write zeros (fill value must be 0)", k->name);
		return -1;
	}
	return 0;
}

static void hugepage_counts(unsigned shift, long *free_pages, char *path, size_t n)
{
	char file[160];
	FILE *f;

	snprintf(path, n, "/sys/kernel/mm/hugepages/hugepages-%lukB/nr_hugepages",
		 (1ul << shift) / 1024);
	snprintf(file, sizeof(file), "/sys/kernel/mm/hugepages/hugepages-%lukB/free_hugepages",
		 (1ul << shift) / 1024);
	*free_pages = -1;
	f = fopen(file, "re");
	if (f) {
		if (fscanf(f, "%ld", free_pages) != 1)
			*free_pages = -1;
		fclose(f);
	}
}

/* Raise MappingError(errno, message): an OSError whose errno says why. */
static PyObject *raise_mapping(int errnum, const char *fmt, ...)
{
	PyObject *msg, *exc;
	va_list ap;

	va_start(ap, fmt);
	msg = PyUnicode_FromFormatV(fmt, ap);
	va_end(ap);
	if (!msg)
		return NULL;
	exc = PyObject_CallFunction(MappingError, "iO", errnum, msg);
	Py_DECREF(msg);
	if (exc) {
		PyErr_SetObject(MappingError, exc);
		Py_DECREF(exc);
	}
	return NULL;
}

/*
 * A mapping failure, worded as perf's "maybe size (X) has insufficient
 * hugepages / is too large", plus what to do about it.
 */
static PyObject *mapping_error(int err, size_t bytes, unsigned shift, unsigned buffers)
{
	uint64_t avail = 0;

	if (shift != PZ_PAGE_SHIFT_4KB && (err == -ENOMEM || err == -EINVAL)) {
		unsigned long page = 1ul << shift;
		unsigned long need = (unsigned long)((bytes + page - 1) / page) * buffers;
		long free_pages;
		char path[160];

		hugepage_counts(shift, &free_pages, path, sizeof(path));
		return raise_mapping(-err, "memory allocation failed - maybe size (%zu bytes) "
				     "has insufficient hugepages: %lu %luMB pages needed, %ld free; "
				     "reserve them as root with: echo %lu > %s",
				     bytes, need, page >> 20, free_pages, need, path);
	}
	if (err == -E2BIG) {
		pz_mem_available(&avail);
		return raise_mapping(ENOMEM, "size (%zu bytes) is too large: %zu bytes needed, "
				     "only %llu available (MemAvailable in /proc/meminfo); "
				     "use a smaller size",
				     bytes, bytes * buffers, (unsigned long long)avail);
	}
	if (err == -ENOMEM || err == -EOVERFLOW)
		return raise_mapping(ENOMEM, "memory allocation failed - maybe size "
				     "(%zu bytes) is too large", bytes);
	return raise_mapping(-err, "mmap failed: %s", strerror(-err));
}

static int open_clock(struct pz_clock *c, const char *name)
{
	int id = pz_clock_lookup(name), ret;

	if (id < 0) {
		PyErr_Format(PyExc_ValueError,
			     "unknown clock '%s' (expected ns, timeval, cycles or tsc)", name);
		return -1;
	}
	ret = pz_clock_open(c, (enum pz_clock_id)id);
	if (ret == 0)
		return 0;
	if (id == PZ_CLOCK_CYCLES)
		PyErr_Format(UnavailableError,
			     "the cycles clock needs a hardware cycle counter, and "
			     "perf_event_open(cpu-cycles) failed: %s (no PMU on this machine, "
			     "or kernel.perf_event_paranoid forbids it); use the tsc clock "
			     "(--clock tsc) to count reference cycles instead",
			     strerror(-ret));
	else
		PyErr_Format(UnavailableError, "the %s clock is not available here: %s",
			     name, strerror(-ret));
	return -1;
}

/* Tuples of C values -------------------------------------------------- */

/* v[0], v[stride], ... v[(n - 1) * stride] as a tuple of ints: a column of a row-major table. */
static PyObject *u64_tuple(const uint64_t *v, size_t n, size_t stride)
{
	PyObject *t = PyTuple_New((Py_ssize_t)n);
	size_t i;

	for (i = 0; t && i < n; i++) {
		PyObject *x = PyLong_FromUnsignedLongLong(v[i * stride]);

		if (!x) {
			Py_CLEAR(t);
			break;
		}
		PyTuple_SET_ITEM(t, (Py_ssize_t)i, x);
	}
	return t;
}

/*
 * The names of the C core's enumerations (features, clocks, strategies,
 * cold methods) as a tuple of str, in enum order, keeping those @keep
 * accepts (all when NULL).
 */
static PyObject *names_tuple(int n, const char *(*name_at)(int), int (*keep)(int))
{
	PyObject *names = PyList_New(0), *tuple;
	int i;

	for (i = 0; names && i < n; i++) {
		PyObject *s;
		int failed;

		if (keep && !keep(i))
			continue;
		s = PyUnicode_FromString(name_at(i));
		failed = !s || PyList_Append(names, s) < 0;
		Py_XDECREF(s);
		if (failed)
			Py_CLEAR(names);
	}
	if (!names)
		return NULL;
	tuple = PyList_AsTuple(names);
	Py_DECREF(names);
	return tuple;
}

/* Kernels ------------------------------------------------------------- */

static PyObject *kernel_row(const struct pz_kernel *k)
{
	PyObject *features, *row;
	char reason[128];
	int available = pz_kernel_available(k, reason, sizeof(reason));
	Py_ssize_t n = 0;
	unsigned i;

	for (i = 0; i < PZ_FEAT_COUNT; i++)
		n += (k->features >> i) & 1;
	features = PyTuple_New(n);
	if (!features)
		return NULL;
	for (i = 0, n = 0; i < PZ_FEAT_COUNT; i++) {
		PyObject *name;

		if (!(k->features & (1ull << i)))
			continue;
		name = PyUnicode_FromString(pz_feature_name(i));
		if (!name) {
			Py_DECREF(features);
			return NULL;
		}
		PyTuple_SET_ITEM(features, n++, name);
	}
	row = Py_BuildValue("{s:s,s:s,s:s,s:s,s:O,s:O,s:O,s:O,s:z,s:n,s:n}",
			    "kind", kind_name(k->kind),
			    "name", k->name,
			    "description", k->description,
			    "arch", k->arch,
			    "temporal", (k->flags & PZ_NONTEMPORAL) ? Py_False : Py_True,
			    "zero_only", (k->flags & PZ_ZERO_ONLY) ? Py_True : Py_False,
			    "features", features,
			    "available", available ? Py_True : Py_False,
			    "reason", available ? NULL : reason,
			    "unit", (Py_ssize_t)k->unit,
			    "align", (Py_ssize_t)k->align);
	Py_DECREF(features);
	return row;
}

PyDoc_STRVAR(kernels__doc__,
"kernels()\n--\n\n"
"The kernel registry as a tuple of dicts, in table order: kind ('clear' or\n"
"'copy'), name, description, arch, temporal, zero_only, features,\n"
"available, reason (None when available), unit and align (bytes).");

static PyObject *core_kernels(PyObject *self, PyObject *unused)
{
	size_t i, n = pz_kernel_count();
	PyObject *rows = PyTuple_New((Py_ssize_t)n);

	if (!rows)
		return NULL;
	for (i = 0; i < n; i++) {
		PyObject *row = kernel_row(pz_kernel_at(i));

		if (!row) {
			Py_DECREF(rows);
			return NULL;
		}
		PyTuple_SET_ITEM(rows, (Py_ssize_t)i, row);
	}
	return rows;
}

static const char *feature_name_at(int i)
{
	return pz_feature_name((unsigned)i);
}

static int feature_detected(int i)
{
	return (int)((pz_cpu_features() >> i) & 1);
}

PyDoc_STRVAR(cpu_features__doc__,
"cpu_features()\n--\n\n"
"Names of the CPU features pagezero's kernels care about that this CPU\n"
"(and OS) supports, detected with CPUID.");

static PyObject *core_cpu_features(PyObject *self, PyObject *unused)
{
	return names_tuple(PZ_FEAT_COUNT, feature_name_at, feature_detected);
}

/* Direct kernel calls -------------------------------------------------- */

static int get_writable(PyObject *obj, Py_buffer *view, const char *what)
{
	if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE | PyBUF_ANY_CONTIGUOUS) == 0)
		return 0;
	PyErr_Clear();
	PyErr_Format(PyExc_ValueError,
		     "%s must be a writable contiguous buffer (bytearray, memoryview, "
		     "mmap, numpy array), not %.100s", what, Py_TYPE(obj)->tp_name);
	return -1;
}

PyDoc_STRVAR(fill__doc__,
"fill(buffer, value, kernel)\n--\n\n"
"Set every byte of the writable contiguous buffer to value (0..255) with\n"
"the named clear kernel.");

static PyObject *core_fill(PyObject *self, PyObject *args)
{
	PyObject *obj;
	const char *name;
	int value;
	const struct pz_kernel *k;
	Py_buffer view;

	if (!PyArg_ParseTuple(args, "Ois:fill", &obj, &value, &name))
		return NULL;
	k = usable_kernel(PZ_KIND_FILL, name);
	if (!k || check_fill_value(k, value, 0) < 0)
		return NULL;
	if (get_writable(obj, &view, "buffer") < 0)
		return NULL;
	if (view.len >= PZ_GIL_RELEASE_BYTES) {
		Py_BEGIN_ALLOW_THREADS
		pz_kernel_fill(k, view.buf, value, (size_t)view.len);
		Py_END_ALLOW_THREADS
	} else if (view.len > 0) {
		pz_kernel_fill(k, view.buf, value, (size_t)view.len);
	}
	PyBuffer_Release(&view);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(copy__doc__,
"copy(dst, src, kernel)\n--\n\n"
"Copy src into the writable buffer dst (same length) with the named copy kernel.");

static PyObject *core_copy(PyObject *self, PyObject *args)
{
	PyObject *dst_obj, *src_obj, *ret = NULL;
	const char *name;
	const struct pz_kernel *k;
	Py_buffer dst, src;

	if (!PyArg_ParseTuple(args, "OOs:copy", &dst_obj, &src_obj, &name))
		return NULL;
	k = usable_kernel(PZ_KIND_COPY, name);
	if (!k || get_writable(dst_obj, &dst, "dst") < 0)
		return NULL;
	if (PyObject_GetBuffer(src_obj, &src, PyBUF_ANY_CONTIGUOUS) < 0) {
		PyErr_Clear();
		PyErr_Format(PyExc_ValueError, "src must be a contiguous buffer, not %.100s",
			     Py_TYPE(src_obj)->tp_name);
		goto out_dst;
	}
	if (src.len != dst.len) {
		PyErr_Format(PyExc_ValueError, "dst has %zd bytes but src has %zd",
			     dst.len, src.len);
		goto out;
	}
	if (dst.len >= PZ_GIL_RELEASE_BYTES) {
		Py_BEGIN_ALLOW_THREADS
		pz_kernel_copy(k, dst.buf, src.buf, (size_t)dst.len);
		Py_END_ALLOW_THREADS
	} else if (dst.len > 0) {
		pz_kernel_copy(k, dst.buf, src.buf, (size_t)dst.len);
	}
	ret = Py_None;
	Py_INCREF(ret);
out:
	PyBuffer_Release(&src);
out_dst:
	PyBuffer_Release(&dst);
	return ret;
}

/* Benchmarks ----------------------------------------------------------- */

static int check_page_shift(unsigned shift)
{
	if (shift == PZ_PAGE_SHIFT_4KB || shift == PZ_PAGE_SHIFT_2MB || shift == PZ_PAGE_SHIFT_1GB)
		return 0;
	PyErr_Format(PyExc_ValueError, "page shift %u is not 12 (4KB), 21 (2MB) or 30 (1GB)", shift);
	return -1;
}

static int check_thp(int thp, unsigned shift)
{
	if (thp < PZ_THP_SYSTEM || thp > PZ_THP_OFF) {
		PyErr_Format(PyExc_ValueError, "thp mode %d is not 0 (system), 1 (on) or 2 (off)", thp);
		return -1;
	}
	if (thp == PZ_THP_ON && shift != PZ_PAGE_SHIFT_4KB) {
		PyErr_SetString(PyExc_ValueError,
				"transparent huge pages apply to 4KB mappings only");
		return -1;
	}
	return 0;
}

PyDoc_STRVAR(bench_mem__doc__,
"bench_mem(kind, kernel, size, chunk, page_shift, thp, loops, clock, value, offset=0)\n--\n\n"
"Run the memset ('clear') or memcpy ('copy') benchmark entirely in C with\n"
"the GIL released: map, prefault, then `loops` timed passes over `size`\n"
"bytes in `chunk`-byte kernel calls. Returns one duration per pass in the\n"
"clock's unit (ns for ns and timeval, cycles, tsc ticks). value is the fill\n"
"byte or -1 for the loop index (perf's memset(dst, i, size)); offset moves\n"
"the buffers that many bytes past a page boundary (0..4095).");

static PyObject *core_bench_mem(PyObject *self, PyObject *args)
{
	const char *kind_s, *name, *clock_s;
	Py_ssize_t size, chunk, offset = 0;
	unsigned int shift, loops;
	int thp, value, ret;
	enum pz_kernel_kind kind;
	struct pz_mem_params p;
	struct pz_clock clock;
	uint64_t *samples;
	PyObject *result = NULL;

	if (!PyArg_ParseTuple(args, "ssnnIiIsi|n:bench_mem", &kind_s, &name, &size, &chunk,
			      &shift, &thp, &loops, &clock_s, &value, &offset))
		return NULL;
	if (offset < 0 || offset >= 4096) {
		PyErr_Format(PyExc_ValueError, "offset must be 0..4095 bytes, not %zd", offset);
		return NULL;
	}
	if (parse_kind(kind_s, &kind) < 0 || check_page_shift(shift) < 0 || check_thp(thp, shift) < 0)
		return NULL;
	if (size <= 0 || chunk <= 0 || chunk > size) {
		PyErr_Format(PyExc_ValueError, "need 0 < chunk <= size (size %zd, chunk %zd)",
			     size, chunk);
		return NULL;
	}
	if (loops == 0) {
		PyErr_SetString(PyExc_ValueError, "loops must be at least 1");
		return NULL;
	}
	p.kernel = usable_kernel(kind, name);
	if (!p.kernel)
		return NULL;
	if (kind == PZ_KIND_FILL && check_fill_value(p.kernel, value, 1) < 0)
		return NULL;
	p.size = (size_t)size;
	p.chunk = (size_t)chunk;
	p.page_shift = shift;
	p.thp = (enum pz_thp)thp;
	p.loops = loops;
	p.value = value;
	p.offset = (size_t)offset;

	if (shift == PZ_PAGE_SHIFT_4KB) {
		/* Refuse before mapping anything; region.c checks one buffer, memcpy needs two. */
		uint64_t avail;
		unsigned buffers = kind == PZ_KIND_COPY ? 2 : 1;

		if (pz_mem_available(&avail) == 0 && (uint64_t)size > avail / buffers)
			return mapping_error(-E2BIG, p.size, shift, buffers);
	}

	samples = PyMem_Calloc(loops, sizeof(*samples));
	if (!samples)
		return PyErr_NoMemory();
	if (open_clock(&clock, clock_s) < 0)
		goto out;

	Py_BEGIN_ALLOW_THREADS
	ret = pz_bench_mem(&p, &clock, samples);
	Py_END_ALLOW_THREADS
	pz_clock_close(&clock);
	if (ret) {
		mapping_error(ret, p.size, shift, kind == PZ_KIND_COPY ? 2 : 1);
		goto out;
	}

	result = u64_tuple(samples, loops, 1);
out:
	PyMem_Free(samples);
	return result;
}

PyDoc_STRVAR(check_clock__doc__,
"check_clock(name)\n--\n\n"
"Raise ValueError for an unknown clock and pagezero.UnavailableError for one\n"
"this machine cannot read (cycles without a PMU).");

static PyObject *core_check_clock(PyObject *self, PyObject *arg)
{
	struct pz_clock c;
	const char *name = PyUnicode_AsUTF8(arg);

	if (!name || open_clock(&c, name) < 0)
		return NULL;
	pz_clock_close(&c);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(clocks__doc__, "clocks()\n--\n\nThe clock names, default first.");

static const char *clock_name_at(int i)
{
	return pz_clock_name((enum pz_clock_id)i);
}

static PyObject *core_clocks(PyObject *self, PyObject *unused)
{
	return names_tuple(PZ_CLOCK_COUNT, clock_name_at, NULL);
}

PyDoc_STRVAR(tsc_hz__doc__,
"tsc_hz()\n--\n\n"
"The tsc clock's rate in Hz. On x86-64 the time-stamp counter's, measured\n"
"once against CLOCK_MONOTONIC_RAW (about 150 ms the first time); on arm64\n"
"the generic timer's, read from CNTFRQ_EL0; 0.0 without such a counter.");

static PyObject *core_tsc_hz(PyObject *self, PyObject *unused)
{
	double hz;

	Py_BEGIN_ALLOW_THREADS
	hz = pz_tsc_hz();
	Py_END_ALLOW_THREADS
	return PyFloat_FromDouble(hz);
}

PyDoc_STRVAR(mem_available__doc__,
"mem_available()\n--\n\nMemAvailable from /proc/meminfo, in bytes.");

static PyObject *core_mem_available(PyObject *self, PyObject *unused)
{
	uint64_t bytes;
	int ret = pz_mem_available(&bytes);

	if (ret) {
		errno = -ret;
		return PyErr_SetFromErrnoWithFilename(PyExc_OSError, "/proc/meminfo");
	}
	return PyLong_FromUnsignedLongLong(bytes);
}

/* Clearing policies ---------------------------------------------------- */

static int parse_strategy(const char *name, enum pz_strategy *s)
{
	int id = pz_strategy_lookup(name);
	char known[160] = "";
	int i;

	if (id >= 0) {
		*s = (enum pz_strategy)id;
		return 0;
	}
	for (i = 0; i < PZ_STRATEGY_COUNT; i++) {
		if (i)
			strncat(known, ", ", sizeof(known) - strlen(known) - 1);
		strncat(known, pz_strategy_name((enum pz_strategy)i), sizeof(known) - strlen(known) - 1);
	}
	PyErr_Format(PyExc_ValueError, "unknown strategy '%s' (known: %s)", name, known);
	return -1;
}

/* A writable buffer of whole 4KB pages; its page count in *nr_pages. */
static int get_pages(PyObject *obj, Py_buffer *view, size_t *nr_pages)
{
	if (get_writable(obj, view, "buffer") < 0)
		return -1;
	if (view->len <= 0 || (size_t)view->len % PZ_PAGE_SIZE) {
		PyErr_Format(PyExc_ValueError, "buffer must hold a whole number of %zu-byte pages, "
			     "not %zd bytes", PZ_PAGE_SIZE, view->len);
		PyBuffer_Release(view);
		return -1;
	}
	*nr_pages = (size_t)view->len / PZ_PAGE_SIZE;
	return 0;
}

static int check_fault_batch(size_t nr_pages, Py_ssize_t fault, Py_ssize_t batch)
{
	if (fault < 0 || (size_t)fault >= nr_pages) {
		PyErr_Format(PyExc_ValueError, "fault index %zd is outside the folio (0..%zu)",
			     fault, nr_pages - 1);
		return -1;
	}
	if (batch <= 0) {
		PyErr_Format(PyExc_ValueError, "batch must be at least 1 page, not %zd", batch);
		return -1;
	}
	return 0;
}

/* The non-temporal kernel a strategy needs, or NULL when it needs none (not an error). */
static int strategy_nt_kernel(enum pz_strategy s, const char *name, const struct pz_kernel **k)
{
	*k = NULL;
	if (!pz_strategy_uses_nontemporal(s))
		return 0;
	if (!name) {
		PyErr_Format(PyExc_ValueError, "strategy '%s' needs a non-temporal kernel (nt_kernel)",
			     pz_strategy_name(s));
		return -1;
	}
	*k = usable_kernel(PZ_KIND_FILL, name);
	return *k ? 0 : -1;
}

static PyObject *steps_tuple(const struct pz_step_log *log)
{
	size_t i, n = PZ_MIN(log->n, log->cap);
	PyObject *t = PyTuple_New((Py_ssize_t)n);

	for (i = 0; t && i < n; i++) {
		const struct pz_step *s = &log->steps[i];
		PyObject *row = Py_BuildValue("(nnO)", (Py_ssize_t)s->first, (Py_ssize_t)s->count,
					      s->nontemporal ? Py_True : Py_False);

		if (!row) {
			Py_CLEAR(t);
			break;
		}
		PyTuple_SET_ITEM(t, (Py_ssize_t)i, row);
	}
	return t;
}

PyDoc_STRVAR(strategies__doc__,
"strategies()\n--\n\n"
"The folio clearing strategies, in the C core's order.");

static const char *strategy_name_at(int i)
{
	return pz_strategy_name((enum pz_strategy)i);
}

static PyObject *core_strategies(PyObject *self, PyObject *unused)
{
	return names_tuple(PZ_STRATEGY_COUNT, strategy_name_at, NULL);
}

PyDoc_STRVAR(cold_methods__doc__,
"cold_methods()\n--\n\n"
"How this build can evict the fault neighbourhood for the cold baseline,\n"
"preferred first: 'clflush' (x86-64) and 'evict' (read a buffer larger\n"
"than the LLC).");

static const char *cold_name_at(int i)
{
	return pz_cold_name((enum pz_cold)i);
}

static int cold_available_at(int i)
{
	return pz_cold_available((enum pz_cold)i);
}

static PyObject *core_cold_methods(PyObject *self, PyObject *unused)
{
	return names_tuple(PZ_COLD_COUNT, cold_name_at, cold_available_at);
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

PyDoc_STRVAR(clear_order__doc__,
"clear_order(strategy, nr_pages, fault_index, batch_pages)\n--\n\n"
"The steps strategy takes over nr_pages pages for a fault at fault_index,\n"
"clearing at most batch_pages at once, as (first_page, page_count,\n"
"nontemporal) tuples in order. Nothing is cleared: the walk is the one the\n"
"timed loops run, with a callback that records instead of clearing.");

static void record_step(void *log, const struct pz_step *s)
{
	pz_step_log_add(log, s);
}

static PyObject *core_clear_order(PyObject *self, PyObject *args)
{
	const char *name;
	Py_ssize_t nr, fault, batch;
	enum pz_strategy s;
	struct pz_step_log log = { 0 };
	PyObject *result;

	if (!PyArg_ParseTuple(args, "snnn:clear_order", &name, &nr, &fault, &batch))
		return NULL;
	if (parse_strategy(name, &s) < 0)
		return NULL;
	if (nr <= 0) {
		PyErr_Format(PyExc_ValueError, "nr_pages must be at least 1, not %zd", nr);
		return NULL;
	}
	if (check_fault_batch((size_t)nr, fault, batch) < 0)
		return NULL;
	/* Every step clears at least one page, and each page once: nr steps at most. */
	log.cap = (size_t)nr;
	log.steps = PyMem_Calloc(log.cap, sizeof(*log.steps));
	if (!log.steps)
		return PyErr_NoMemory();
	pz_strategy_order(s, (size_t)nr, (size_t)fault, (size_t)batch, record_step, &log);
	result = steps_tuple(&log);
	PyMem_Free(log.steps);
	return result;
}

PyDoc_STRVAR(clear_folio__doc__,
"clear_folio(buffer, strategy, fault_index, batch_pages, kernel, nt_kernel=None, record=False)\n"
"--\n\n"
"Zero the writable buffer (whole 4KB pages) in strategy's order with the\n"
"named kernels, untimed: the clearing callback of the timed loops. With\n"
"record, return the steps it executed (as clear_order()), else None.");

static PyObject *core_clear_folio(PyObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"buffer", "strategy", "fault_index", "batch_pages", "kernel",
				 "nt_kernel", "record", NULL};
	PyObject *obj, *result = NULL;
	const char *name, *kname, *ntname = NULL;
	Py_ssize_t fault, batch;
	int record = 0;
	enum pz_strategy s;
	struct pz_step_log log = { 0 };
	struct pz_clearer clr = { 0 };
	Py_buffer view;
	size_t nr;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "Osnns|zp:clear_folio", kwlist, &obj, &name,
					 &fault, &batch, &kname, &ntname, &record))
		return NULL;
	if (parse_strategy(name, &s) < 0)
		return NULL;
	clr.kernel = usable_kernel(PZ_KIND_FILL, kname);
	if (!clr.kernel || strategy_nt_kernel(s, ntname, &clr.nt_kernel) < 0)
		return NULL;
	if (get_pages(obj, &view, &nr) < 0)
		return NULL;
	if (check_fault_batch(nr, fault, batch) < 0)
		goto out;
	if (record) {
		log.cap = nr;
		log.steps = PyMem_Calloc(log.cap, sizeof(*log.steps));
		if (!log.steps) {
			PyErr_NoMemory();
			goto out;
		}
		clr.log = &log;
	}
	clr.base = view.buf;
	Py_BEGIN_ALLOW_THREADS
	pz_strategy_order(s, nr, (size_t)fault, (size_t)batch, pz_clear_step, &clr);
	Py_END_ALLOW_THREADS
	if (record) {
		result = steps_tuple(&log);
	} else {
		result = Py_None;
		Py_INCREF(result);
	}
out:
	PyMem_Free(log.steps);
	PyBuffer_Release(&view);
	return result;
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

static PyObject *core_bench_batches(PyObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"buffer", "kernel", "batch_pages", "loops", "yield_between",
				 "record", NULL};
	PyObject *obj, *result = NULL, *samples = NULL, *worst = NULL, *steps = NULL;
	const char *kname;
	Py_ssize_t batch;
	unsigned int loops;
	int yield = 0, record = 0, ret;
	struct pz_batch_params p = { 0 };
	struct pz_step_log log = { 0 };
	struct pz_tick_summary sum;
	struct pz_clock clock;
	uint64_t *pass = NULL, *pass_worst = NULL, *ticks = NULL, *scratch = NULL, typical = 0;
	Py_buffer view;
	size_t nb, total;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "OsnI|pp:bench_batches", kwlist, &obj, &kname,
					 &batch, &loops, &yield, &record))
		return NULL;
	p.kernel = usable_kernel(PZ_KIND_FILL, kname);
	if (!p.kernel)
		return NULL;
	if (loops == 0) {
		PyErr_SetString(PyExc_ValueError, "loops must be at least 1");
		return NULL;
	}
	if (get_pages(obj, &view, &p.nr_pages) < 0)
		return NULL;
	if (batch <= 0 || (size_t)batch > p.nr_pages) {
		PyErr_Format(PyExc_ValueError, "batch must be 1..%zu pages (the region), not %zd",
			     p.nr_pages, batch);
		goto out_view;
	}
	p.batch_pages = (size_t)batch;
	p.loops = loops;
	p.yield = yield;
	nb = pz_batch_count(&p);
	total = nb * loops;
	if (total / loops != nb) {
		PyErr_SetString(PyExc_ValueError, "too many batches to record");
		goto out_view;
	}
	pass = PyMem_Calloc(loops, sizeof(*pass));
	pass_worst = PyMem_Calloc(loops, sizeof(*pass_worst));
	ticks = PyMem_Calloc(total, sizeof(*ticks));
	scratch = PyMem_Calloc(loops, sizeof(*scratch));
	if (record) {
		log.cap = total;
		log.steps = PyMem_Calloc(total, sizeof(*log.steps));
	}
	if (!pass || !pass_worst || !ticks || !scratch || (record && !log.steps)) {
		PyErr_NoMemory();
		goto out;
	}
	if (open_clock(&clock, "ns") < 0)
		goto out;
	Py_BEGIN_ALLOW_THREADS
	ret = pz_bench_batches(&p, view.buf, &clock, pass, pass_worst, ticks,
			       record ? &log : NULL);
	if (ret == 0) {
		typical = pz_batch_typical_worst(ticks, loops, nb, scratch);
		pz_ticks_summarize(ticks, total, &sum);
	}
	Py_END_ALLOW_THREADS
	pz_clock_close(&clock);
	if (ret) {
		errno = -ret;
		PyErr_SetFromErrno(PyExc_OSError);
		goto out;
	}
	samples = u64_tuple(pass, loops, 1);
	worst = u64_tuple(pass_worst, loops, 1);
	if (record) {
		steps = steps_tuple(&log);
	} else {
		steps = Py_None;
		Py_INCREF(steps);
	}
	if (samples && worst && steps)
		result = Py_BuildValue("{s:O,s:O,s:n,s:K,s:K,s:K,s:K,s:d,s:O}",
				       "samples", samples, "pass_worst", worst,
				       "batches", (Py_ssize_t)nb,
				       "typical_worst", (unsigned long long)typical,
				       "max", (unsigned long long)sum.max,
				       "p99", (unsigned long long)sum.p99,
				       "median", (unsigned long long)sum.median,
				       "mean", sum.mean, "steps", steps);
out:
	Py_XDECREF(samples);
	Py_XDECREF(worst);
	Py_XDECREF(steps);
	PyMem_Free(pass);
	PyMem_Free(pass_worst);
	PyMem_Free(ticks);
	PyMem_Free(scratch);
	PyMem_Free(log.steps);
out_view:
	PyBuffer_Release(&view);
	return result;
}

PyDoc_STRVAR(bench_folio__doc__,
"bench_folio(folio, scrub, strategy, fault_index, batch_pages, kernel, nt_kernel, loops, cold,\n"
"            flush_folio=False, flush='', counters=False, evict_bytes=0, trace=False)\n"
"--\n\n"
"Time `loops` clears of the folio buffer (whole 4KB pages) in strategy's\n"
"order, each followed by a touch of the fault neighbourhood (fault +-2\n"
"pages: each line read, through a chain of dependent loads, then written)\n"
"and the same touch after evicting the neighbourhood with cold ('clflush'\n"
"or 'evict', which reads scrub). Before each loop the folio is dirtied and\n"
"scrub, a buffer larger than the LLC, is read; with flush_folio the whole\n"
"folio is then flushed by address too (flush: clflushopt, clflush, evict\n"
"or '' for the best; evict reads evict_bytes), and counters reads hardware\n"
"counters around each clear. Returns a dict: clear, touch, cold (ns per\n"
"loop), touch_lines, neighbourhood (first page, pages), counters (name ->\n"
"per-loop deltas, or None), cold_method, and with trace flushes:\n"
"(0, offset in the folio, length) per flush.");

/* Defined with the threaded runs below; cold folios and counters use them too. */
struct flush_trace;
static int cold_flusher(const char *flush_s, Py_ssize_t evict_bytes, struct pz_flusher *f,
			struct pz_region *evict);
static PyObject *counters_error(unsigned failed, int ret);
static void record_flush(void *ctx, unsigned t, const void *p, size_t len);
static PyObject *flush_list(const struct flush_trace *tr);
static struct flush_trace *new_flush_trace(char *const *bases, size_t len, size_t cap);
static void free_flush_trace(struct flush_trace *tr);

static PyObject *core_bench_folio(PyObject *self, PyObject *args)
{
	PyObject *fobj, *sobj, *result = NULL, *clear = NULL, *touch = NULL, *cold = NULL;
	PyObject *ctr = NULL, *flushes = NULL;
	const char *name, *kname, *ntname, *cold_s, *flush_s = "";
	Py_ssize_t fault, batch, evict_bytes = 0;
	unsigned int loops, i, j, failed = PZ_CTR_COUNT;
	int cold_id, ret, flush_folio = 0, counters = 0, trace = 0, have_ctr = 0;
	struct pz_folio_params p = { 0 };
	struct pz_counters pc;
	struct pz_region evict = { 0 };
	struct flush_trace *tr = NULL;
	char *folio_base;
	struct pz_folio_sample *out = NULL;
	uint64_t *col = NULL;
	struct pz_clock clock;
	Py_buffer fview, sview;
	size_t nb_first, nb_count;

	if (!PyArg_ParseTuple(args, "OOsnnszIs|pzpnp:bench_folio", &fobj, &sobj, &name, &fault,
			      &batch, &kname, &ntname, &loops, &cold_s, &flush_folio, &flush_s,
			      &counters, &evict_bytes, &trace))
		return NULL;
	if (parse_strategy(name, &p.strategy) < 0)
		return NULL;
	p.kernel = usable_kernel(PZ_KIND_FILL, kname);
	if (!p.kernel || strategy_nt_kernel(p.strategy, ntname, &p.nt_kernel) < 0)
		return NULL;
	cold_id = pz_cold_lookup(cold_s);
	if (cold_id < 0 || !pz_cold_available((enum pz_cold)cold_id)) {
		PyErr_Format(PyExc_ValueError, "cold method '%s' is not available here "
			     "(pagezero._core.cold_methods() lists them)", cold_s);
		return NULL;
	}
	p.cold = (enum pz_cold)cold_id;
	if (loops == 0) {
		PyErr_SetString(PyExc_ValueError, "loops must be at least 1");
		return NULL;
	}
	if (get_pages(fobj, &fview, &p.nr_pages) < 0)
		return NULL;
	if (PyObject_GetBuffer(sobj, &sview, PyBUF_ANY_CONTIGUOUS) < 0) {
		PyErr_Clear();
		PyErr_Format(PyExc_ValueError, "scrub must be a contiguous buffer, not %.100s",
			     Py_TYPE(sobj)->tp_name);
		goto out_folio;
	}
	if (check_fault_batch(p.nr_pages, fault, batch) < 0)
		goto out_scrub;
	p.fault = (size_t)fault;
	p.batch_pages = (size_t)batch;
	p.loops = loops;
	out = PyMem_Calloc(loops, sizeof(*out));
	col = PyMem_Calloc(loops, sizeof(*col));
	if (counters)
		p.counters = PyMem_Calloc((size_t)loops * PZ_CTR_COUNT, sizeof(uint64_t));
	if (!out || !col || (counters && !p.counters)) {
		PyErr_NoMemory();
		goto out;
	}
	p.flush_folio = flush_folio;
	if (flush_folio && cold_flusher(flush_s, evict_bytes, &p.flush, &evict) < 0)
		goto out;
	folio_base = fview.buf;
	if (trace) {
		tr = new_flush_trace(&folio_base, (size_t)fview.len, loops);
		if (!tr)
			goto out;
		p.hook = record_flush;
		p.hook_ctx = tr;
	}
	if (counters) {
		/* Opened here, on the thread that runs the folio with the GIL released. */
		ret = pz_counters_open(&pc, &failed);
		if (ret) {
			counters_error(failed, ret);
			goto out;
		}
		have_ctr = 1;
		p.ctr = &pc;
	}
	if (open_clock(&clock, "ns") < 0)
		goto out;
	Py_BEGIN_ALLOW_THREADS
	ret = pz_bench_folio(&p, fview.buf, sview.buf, (size_t)sview.len, &clock, out);
	Py_END_ALLOW_THREADS
	pz_clock_close(&clock);
	if (ret) {
		errno = -ret;
		PyErr_SetFromErrno(PyExc_OSError);
		goto out;
	}
	for (i = 0; i < loops; i++)
		col[i] = out[i].clear;
	clear = u64_tuple(col, loops, 1);
	for (i = 0; i < loops; i++)
		col[i] = out[i].touch;
	touch = u64_tuple(col, loops, 1);
	for (i = 0; i < loops; i++)
		col[i] = out[i].cold;
	cold = u64_tuple(col, loops, 1);
	pz_neighbourhood(p.nr_pages, p.fault, &nb_first, &nb_count);
	if (counters) {
		ctr = PyDict_New();
		for (j = 0; ctr && j < PZ_CTR_COUNT; j++) {
			PyObject *row = u64_tuple(p.counters + j, loops, PZ_CTR_COUNT);

			if (!row || PyDict_SetItemString(ctr, pz_counter_name(j), row) < 0) {
				Py_XDECREF(row);
				Py_CLEAR(ctr);
			} else {
				Py_DECREF(row);
			}
		}
	} else {
		ctr = Py_None;
		Py_INCREF(ctr);
	}
	if (tr) {
		flushes = flush_list(tr);
	} else {
		flushes = Py_None;
		Py_INCREF(flushes);
	}
	if (clear && touch && cold && ctr && flushes)
		result = Py_BuildValue("{s:O,s:O,s:O,s:n,s:(nn),s:O,s:s,s:O}", "clear", clear,
				       "touch", touch, "cold", cold,
				       "touch_lines", (Py_ssize_t)pz_folio_touch_lines(&p),
				       "neighbourhood", (Py_ssize_t)nb_first, (Py_ssize_t)nb_count,
				       "counters", ctr,
				       "cold_method", flush_folio ? pz_flush_name(p.flush.method) : "",
				       "flushes", flushes);
out:
	Py_XDECREF(ctr);
	Py_XDECREF(flushes);
	if (have_ctr)
		pz_counters_close(&pc);
	free_flush_trace(tr);
	pz_region_unmap(&evict);
	PyMem_Free(p.counters);
	Py_XDECREF(clear);
	Py_XDECREF(touch);
	Py_XDECREF(cold);
	PyMem_Free(out);
	PyMem_Free(col);
out_scrub:
	PyBuffer_Release(&sview);
out_folio:
	PyBuffer_Release(&fview);
	return result;
}

/* Fault workloads ---------------------------------------------------- */

/* Defined with the Region type below: a Region that takes over a mapping. */
static PyObject *region_adopt(struct pz_region *r);

/* Latency samples a run may keep: 8 bytes each, so 128 MiB at most. */
#define PZ_FAULT_MAX_LAT (16u << 20)

static int parse_workload(const char *name, enum pz_fault_workload *w)
{
	int id = pz_fault_lookup(name);

	if (id < 0) {
		PyErr_Format(PyExc_ValueError,
			     "unknown workload '%s' (expected demand, populate or populate-write)",
			     name);
		return -1;
	}
	*w = (enum pz_fault_workload)id;
	return 0;
}

/* The checks pz_fault_run makes, each with its own message. */
static int check_fault_params(const struct pz_fault_params *p, Py_ssize_t size,
			      Py_ssize_t lat_unit)
{
	const size_t page = (size_t)1 << p->page_shift;

	if (size <= 0 || (size_t)size % page) {
		PyErr_Format(PyExc_ValueError, "size %zd is not a positive multiple of the "
			     "%zu-byte page", size, page);
		return -1;
	}
	if (p->loops == 0) {
		PyErr_SetString(PyExc_ValueError, "loops must be at least 1");
		return -1;
	}
	if (p->threads == 0 || p->threads > PZ_FAULT_MAX_THREADS) {
		PyErr_Format(PyExc_ValueError, "threads must be between 1 and %u, not %u",
			     PZ_FAULT_MAX_THREADS, p->threads);
		return -1;
	}
	if (lat_unit < 0 || (lat_unit && ((size_t)lat_unit % page || (size_t)size % (size_t)lat_unit))) {
		PyErr_Format(PyExc_ValueError, "latency unit %zd must be a multiple of the page "
			     "that divides the size", lat_unit);
		return -1;
	}
	if (lat_unit && p->workload == PZ_FAULT_POPULATE) {
		PyErr_SetString(PyExc_ValueError,
				"populate faults every page inside mmap(MAP_POPULATE): there is no "
				"fault to time on its own; use demand or populate-write for latencies");
		return -1;
	}
	return 0;
}

/* Raise the exception a failed fault run or pass deserves. */
static PyObject *fault_error(int err, const struct pz_fault_params *p)
{
	if (err == -EOPNOTSUPP)
		return PyErr_Format(UnavailableError,
				    "populate-write needs madvise(MADV_POPULATE_WRITE), which this "
				    "kernel lacks (Linux 5.14 and later have it); use demand or populate");
	if (err == -EAGAIN && p->threads > 1)
		return PyErr_Format(PagezeroError, "could not start %u threads: %s",
				    p->threads, strerror(-err));
	return mapping_error(err, p->size, p->page_shift, p->threads);
}

static PyObject *pages_dict(const struct pz_fault_pages *pg)
{
	return Py_BuildValue("{s:K,s:K,s:K,s:K}",
			     "rss", (unsigned long long)pg->rss,
			     "anon_huge", (unsigned long long)pg->anon_huge,
			     "hugetlb", (unsigned long long)pg->hugetlb,
			     "kernel_page", (unsigned long long)pg->kernel_page);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentiles of the sorted @v: the smallest sample with at least q of them at or below it. */
static uint64_t rank(const uint64_t *v, size_t n, double q)
{
	size_t k = (size_t)(q * (double)n + 0.999999);

	return v[k ? PZ_MIN(k, n) - 1 : 0];
}

/* A summary of @n latencies in ns (sorted in place): too many to keep raw. */
static PyObject *latency_dict(uint64_t *v, size_t n, size_t unit)
{
	long double sum = 0;
	size_t i;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 0; i < n; i++)
		sum += v[i];
	return Py_BuildValue("{s:n,s:n,s:K,s:K,s:K,s:K,s:K,s:K,s:d}",
			     "n", (Py_ssize_t)n, "unit_bytes", (Py_ssize_t)unit,
			     "min_ns", (unsigned long long)v[0],
			     "p50_ns", (unsigned long long)rank(v, n, 0.50),
			     "p90_ns", (unsigned long long)rank(v, n, 0.90),
			     "p99_ns", (unsigned long long)rank(v, n, 0.99),
			     "p999_ns", (unsigned long long)rank(v, n, 0.999),
			     "max_ns", (unsigned long long)v[n - 1],
			     "mean_ns", (double)(sum / n));
}

/* {"wall": (per loop), "threads": ((per loop) per thread), "pages": ({...} per loop), "latency": {...} or None} */
static PyObject *fault_result(const struct pz_fault_params *p, const struct pz_fault_out *out,
			      size_t nlat)
{
	PyObject *wall = NULL, *threads = NULL, *pages = NULL, *lat = NULL, *res = NULL;
	unsigned i;

	wall = u64_tuple(out->wall, p->loops, 1);
	threads = PyTuple_New(p->threads);
	pages = PyTuple_New(p->loops);
	if (!wall || !threads || !pages)
		goto out;
	for (i = 0; i < p->threads; i++) {
		PyObject *t = u64_tuple(out->thread + i, p->loops, p->threads);

		if (!t)
			goto out;
		PyTuple_SET_ITEM(threads, i, t);
	}
	for (i = 0; i < p->loops; i++) {
		PyObject *d = pages_dict(&out->pages[i]);

		if (!d)
			goto out;
		PyTuple_SET_ITEM(pages, i, d);
	}
	if (nlat) {
		lat = latency_dict(out->lat, nlat, p->lat_unit);
	} else {
		lat = Py_None;
		Py_INCREF(lat);
	}
	if (lat)
		res = Py_BuildValue("{s:O,s:O,s:O,s:O}", "wall", wall, "threads", threads,
				    "pages", pages, "latency", lat);
out:
	Py_XDECREF(wall);
	Py_XDECREF(threads);
	Py_XDECREF(pages);
	Py_XDECREF(lat);
	return res;
}

PyDoc_STRVAR(fault_workloads__doc__,
"fault_workloads()\n--\n\n"
"The fault workloads as a tuple of (name, description), in table order.");

static PyObject *core_fault_workloads(PyObject *self, PyObject *unused)
{
	PyObject *t = PyTuple_New(PZ_FAULT_COUNT);
	int i;

	for (i = 0; t && i < PZ_FAULT_COUNT; i++) {
		PyObject *row = Py_BuildValue("(ss)", pz_fault_name((enum pz_fault_workload)i),
					      pz_fault_description((enum pz_fault_workload)i));

		if (!row) {
			Py_CLEAR(t);
			break;
		}
		PyTuple_SET_ITEM(t, i, row);
	}
	return t;
}

PyDoc_STRVAR(bench_fault__doc__,
"bench_fault(workload, size, page_shift, thp, loops, threads, seed, clock, lat_unit)\n--\n\n"
"Run a fault workload ('demand', 'populate' or 'populate-write') entirely in C\n"
"with the GIL released: each of `threads` threads maps `size` bytes and faults\n"
"every page in, timed, then the regions' smaps counters are read and they are\n"
"unmapped, untimed; `loops` times. seed != 0 makes demand write a random offset\n"
"of each page. lat_unit > 0 also times every lat_unit bytes of faults (ns).\n"
"Returns {'wall': per-loop durations from the first start to the last end,\n"
"'threads': per thread, its per-loop durations (clock units), 'pages': per\n"
"loop, {'rss', 'anon_huge', 'hugetlb', 'kernel_page'} in bytes, 'latency':\n"
"None or {'n', 'unit_bytes', 'min_ns', 'p50_ns', 'p90_ns', 'p99_ns',\n"
"'p999_ns', 'max_ns', 'mean_ns'}}.");

static PyObject *core_bench_fault(PyObject *self, PyObject *args)
{
	const char *workload_s, *clock_s;
	Py_ssize_t size, lat_unit;
	unsigned int shift, loops, threads, seed;
	int thp, ret;
	struct pz_fault_params p;
	struct pz_fault_out out = { 0 };
	struct pz_clock clock;
	size_t nlat;
	uint64_t avail;
	PyObject *result = NULL;

	if (!PyArg_ParseTuple(args, "snIiIIIsn:bench_fault", &workload_s, &size, &shift, &thp,
			      &loops, &threads, &seed, &clock_s, &lat_unit))
		return NULL;
	memset(&p, 0, sizeof(p));
	if (parse_workload(workload_s, &p.workload) < 0 || check_page_shift(shift) < 0 ||
	    check_thp(thp, shift) < 0)
		return NULL;
	p.size = (size_t)size;
	p.page_shift = shift;
	p.thp = (enum pz_thp)thp;
	p.loops = loops;
	p.threads = threads;
	p.seed = seed;
	p.lat_unit = (size_t)lat_unit;
	if (check_fault_params(&p, size, lat_unit) < 0)
		return NULL;
	nlat = pz_fault_lat_count(&p);
	if (nlat > PZ_FAULT_MAX_LAT) {
		PyErr_Format(PyExc_ValueError, "%zu latency samples are too many to keep (at most "
			     "%u): use fewer loops or threads, a smaller size or a larger unit",
			     nlat, PZ_FAULT_MAX_LAT);
		return NULL;
	}
	/* Refuse before mapping: overcommit would accept it and the OOM killer answer later. */
	if (shift == PZ_PAGE_SHIFT_4KB && pz_mem_available(&avail) == 0 &&
	    (uint64_t)size > avail / threads)
		return mapping_error(-E2BIG, p.size, shift, threads);

	out.wall = PyMem_Calloc(loops, sizeof(*out.wall));
	out.thread = PyMem_Calloc((size_t)loops * threads, sizeof(*out.thread));
	out.pages = PyMem_Calloc(loops, sizeof(*out.pages));
	out.lat = nlat ? PyMem_Calloc(nlat, sizeof(*out.lat)) : NULL;
	if (!out.wall || !out.thread || !out.pages || (nlat && !out.lat)) {
		PyErr_NoMemory();
		goto out;
	}
	if (open_clock(&clock, clock_s) < 0)
		goto out;
	if (clock.id == PZ_CLOCK_CYCLES && threads > 1) {
		pz_clock_close(&clock);
		PyErr_SetString(PyExc_ValueError, "the cycles clock counts the thread that opened "
				"it only: use ns or tsc with more than one thread");
		goto out;
	}

	Py_BEGIN_ALLOW_THREADS
	ret = pz_fault_run(&p, &clock, &out);
	Py_END_ALLOW_THREADS
	pz_clock_close(&clock);
	if (ret)
		fault_error(ret, &p);
	else
		result = fault_result(&p, &out, nlat);
out:
	PyMem_Free(out.wall);
	PyMem_Free(out.thread);
	PyMem_Free(out.pages);
	PyMem_Free(out.lat);
	return result;
}

PyDoc_STRVAR(fault_pass__doc__,
"fault_pass(workload, size, page_shift, thp, seed, lat_unit=0)\n--\n\n"
"One untimed pass of a fault workload, as one thread of bench_fault runs it,\n"
"that leaves the region mapped: returns (Region, pages) where pages is the\n"
"smaps summary bench_fault reports. For tests and inspection.");

static PyObject *core_fault_pass(PyObject *self, PyObject *args)
{
	const char *workload_s;
	Py_ssize_t size, lat_unit = 0;
	unsigned int shift, seed;
	int thp, ret;
	struct pz_fault_params p;
	struct pz_fault_pages pages;
	struct pz_region r;
	PyObject *region, *pd;

	if (!PyArg_ParseTuple(args, "snIiI|n:fault_pass", &workload_s, &size, &shift, &thp,
			      &seed, &lat_unit))
		return NULL;
	memset(&p, 0, sizeof(p));
	if (parse_workload(workload_s, &p.workload) < 0 || check_page_shift(shift) < 0 ||
	    check_thp(thp, shift) < 0)
		return NULL;
	p.size = (size_t)size;
	p.page_shift = shift;
	p.thp = (enum pz_thp)thp;
	p.loops = p.threads = 1;
	p.seed = seed;
	p.lat_unit = (size_t)lat_unit;
	if (check_fault_params(&p, size, lat_unit) < 0)
		return NULL;

	Py_BEGIN_ALLOW_THREADS
	ret = pz_fault_once(&p, &r, &pages);
	Py_END_ALLOW_THREADS
	if (ret)
		return fault_error(ret, &p);
	pd = pages_dict(&pages);
	if (!pd) {
		pz_region_unmap(&r);
		return NULL;
	}
	region = region_adopt(&r);
	if (!region) {
		Py_DECREF(pd);
		return NULL;
	}
	return Py_BuildValue("(NN)", region, pd);
}


/* Measured conditions: cold caches, threads, NUMA, counters ------------- */

static int parse_flush(const char *name, enum pz_flush *m)
{
	int id;

	if (!name || !*name) {
		*m = pz_flush_best();
		return 0;
	}
	id = pz_flush_lookup(name);
	if (id < 0) {
		PyErr_Format(PyExc_ValueError,
			     "unknown cold method '%s' (expected clflushopt, clflush or evict)", name);
		return -1;
	}
	if (!pz_flush_available((enum pz_flush)id)) {
		PyErr_Format(UnavailableError, "this CPU cannot flush with %s; use evict", name);
		return -1;
	}
	*m = (enum pz_flush)id;
	return 0;
}

/* threads CPU numbers from a sequence of ints, or NULL for an empty one. */
static int get_cpus(PyObject *seq, unsigned threads, int **cpus)
{
	PyObject *fast = PySequence_Fast(seq, "cpus must be a sequence of ints");
	Py_ssize_t i, n;

	*cpus = NULL;
	if (!fast)
		return -1;
	n = PySequence_Fast_GET_SIZE(fast);
	if (n && (size_t)n != threads) {
		PyErr_Format(PyExc_ValueError, "%zd cpus given for %u threads", n, threads);
		goto fail;
	}
	if (n) {
		*cpus = PyMem_Calloc((size_t)n, sizeof(**cpus));
		if (!*cpus) {
			PyErr_NoMemory();
			goto fail;
		}
	}
	for (i = 0; i < n; i++) {
		long c = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));

		if (c == -1 && PyErr_Occurred())
			goto fail;
		if (c < 0 || c >= CPU_SETSIZE) {
			PyErr_Format(PyExc_ValueError, "cpu %ld out of range", c);
			goto fail;
		}
		(*cpus)[i] = (int)c;
	}
	Py_DECREF(fast);
	return 0;
fail:
	PyMem_Free(*cpus);
	*cpus = NULL;
	Py_DECREF(fast);
	return -1;
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

/* Counters asked for and refused: say which and why, never return zeros. */
static PyObject *counters_error(unsigned failed, int ret)
{
	return PyErr_Format(UnavailableError,
			    "--counters needs hardware performance counters, and "
			    "perf_event_open(%s) failed: %s (no PMU on this machine, as on "
			    "most VMs, or kernel.perf_event_paranoid forbids it)",
			    pz_counter_name(failed), strerror(-ret));
}

/* The exception for a failed threaded run. */
static PyObject *threads_error(int ret, const struct pz_run_params *p, const struct pz_run_out *o)
{
	if (p->counters && o->failed_counter < PZ_CTR_COUNT)
		return counters_error(o->failed_counter, ret);
	if (ret == -EINVAL && p->cpus)
		return PyErr_Format(PyExc_ValueError,
				    "could not pin the threads to their CPUs (sched_setaffinity: %s)",
				    strerror(-ret));
	if (ret == -EAGAIN)
		return PyErr_Format(PagezeroError, "could not start %u threads", p->threads);
	if (p->node >= 0 && (ret == -EINVAL || ret == -EIO || ret == -EPERM))
		return PyErr_Format(PyExc_ValueError, "could not bind the buffer to node %d "
				    "(mbind: %s)", p->node, strerror(-ret));
	return mapping_error(ret, p->size, p->page_shift,
			     (p->kernel->kind == PZ_KIND_COPY ? 2u : 1u) *
			     (p->mode == PZ_THREADS_PRIVATE ? p->threads : 1u));
}

/*
 * One sample per loop for the whole run: with threads, from the first
 * thread's start to the last one's end (hot), or the slowest thread's sum
 * of chunk times (cold: the flushes between chunks are not clearing time).
 */
static PyObject *threads_result(const struct pz_run_params *p, const struct pz_run_out *o)
{
	const unsigned T = p->threads, L = p->loops;
	PyObject *agg = PyTuple_New(L), *per = PyTuple_New(T), *d = NULL, *ctr = NULL;
	unsigned t, i, j;

	if (!agg || !per)
		goto fail;
	for (i = 0; i < L; i++) {
		uint64_t lo = UINT64_MAX, hi = 0, slowest = 0;
		PyObject *v;

		for (t = 0; t < T; t++) {
			size_t k = (size_t)t * L + i;

			lo = PZ_MIN(lo, o->start[k]);
			hi = o->end[k] > hi ? o->end[k] : hi;
			slowest = o->samples[k] > slowest ? o->samples[k] : slowest;
		}
		v = PyLong_FromUnsignedLongLong(p->cold ? slowest : hi - lo);
		if (!v)
			goto fail;
		PyTuple_SET_ITEM(agg, i, v);
	}
	for (t = 0; t < T; t++) {
		PyObject *row = u64_tuple(o->samples + (size_t)t * L, L, 1);

		if (!row)
			goto fail;
		PyTuple_SET_ITEM(per, t, row);
	}
	if (o->counters) {
		ctr = PyDict_New();
		for (j = 0; ctr && j < PZ_CTR_COUNT; j++) {
			PyObject *row = PyTuple_New(L);

			for (i = 0; row && i < L; i++) {
				uint64_t sum = 0;
				PyObject *v;

				for (t = 0; t < T; t++)
					sum += o->counters[((size_t)t * L + i) * PZ_CTR_COUNT + j];
				v = PyLong_FromUnsignedLongLong(sum);
				if (!v) {
					Py_CLEAR(row);
					break;
				}
				PyTuple_SET_ITEM(row, i, v);
			}
			if (!row || PyDict_SetItemString(ctr, pz_counter_name(j), row) < 0) {
				Py_XDECREF(row);
				goto fail;
			}
			Py_DECREF(row);
		}
		if (!ctr)
			goto fail;
	} else {
		ctr = Py_None;
		Py_INCREF(ctr);
	}
	d = Py_BuildValue("{sOsOsOss}", "samples", agg, "thread_samples", per, "counters", ctr,
			  "cold_method", p->cold ? pz_flush_name(p->flush.method) : "");
fail:
	Py_XDECREF(agg);
	Py_XDECREF(per);
	Py_XDECREF(ctr);
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

static PyObject *core_bench_threads(PyObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"kind", "kernel", "size", "chunk", "page_shift", "thp", "loops",
				 "clock", "value", "cold", "flush", "evict_bytes", "threads",
				 "mode", "cpus", "node", "counters", NULL};
	const char *kind_s, *name, *clock_s, *flush_s = "", *mode_s = "shared";
	Py_ssize_t size, chunk, evict_bytes = 0;
	unsigned int shift, loops, threads = 1;
	int thp, value, cold = 0, node = -1, counters = 0, ret;
	PyObject *cpus_obj = NULL, *result = NULL;
	enum pz_kernel_kind kind;
	struct pz_run_params p;
	struct pz_run_out out;
	struct pz_clock clock;
	int *cpus = NULL;

	memset(&out, 0, sizeof(out));
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "ssnnIiIsi|$pznIsOip:bench_threads", kwlist,
					 &kind_s, &name, &size, &chunk, &shift, &thp, &loops,
					 &clock_s, &value, &cold, &flush_s, &evict_bytes, &threads,
					 &mode_s, &cpus_obj, &node, &counters))
		return NULL;
	memset(&p, 0, sizeof(p));
	if (parse_kind(kind_s, &kind) < 0 || check_page_shift(shift) < 0 ||
	    check_thp(thp, shift) < 0)
		return NULL;
	if (size <= 0 || chunk <= 0 || chunk > size || loops == 0) {
		PyErr_Format(PyExc_ValueError, "need 0 < chunk <= size and loops > 0 "
			     "(size %zd, chunk %zd, loops %u)", size, chunk, loops);
		return NULL;
	}
	if (threads == 0 || threads > PZ_MAX_THREADS) {
		PyErr_Format(PyExc_ValueError, "threads must be 1..%u, not %u", PZ_MAX_THREADS,
			     threads);
		return NULL;
	}
	if (strcmp(mode_s, "shared") && strcmp(mode_s, "private")) {
		PyErr_Format(PyExc_ValueError, "threads mode '%s' is not shared or private", mode_s);
		return NULL;
	}
	p.mode = strcmp(mode_s, "private") == 0 ? PZ_THREADS_PRIVATE : PZ_THREADS_SHARED;
	if (p.mode == PZ_THREADS_SHARED && threads > 1 && (size_t)size / threads < 4096) {
		PyErr_Format(PyExc_ValueError, "size %zd is too small for %u threads: each needs "
			     "at least 4KB of it", size, threads);
		return NULL;
	}
	p.kernel = usable_kernel(kind, name);
	if (!p.kernel)
		return NULL;
	if (kind == PZ_KIND_FILL && check_fill_value(p.kernel, value, 1) < 0)
		return NULL;
	if (cold && parse_flush(flush_s, &p.flush.method) < 0)
		return NULL;
	if (cold && p.flush.method == PZ_FLUSH_EVICT) {
		if (evict_bytes <= 0) {
			PyErr_SetString(PyExc_ValueError, "evicting needs evict_bytes > 0 (2x the LLC)");
			return NULL;
		}
		p.flush.evict_len = (size_t)evict_bytes;
	}
	if (cpus_obj && get_cpus(cpus_obj, threads, &cpus) < 0)
		return NULL;
	p.size = (size_t)size;
	p.chunk = (size_t)chunk;
	p.page_shift = shift;
	p.thp = (enum pz_thp)thp;
	p.loops = loops;
	p.value = value;
	p.cold = cold;
	p.threads = threads;
	p.cpus = cpus;
	p.node = node;
	p.counters = counters;

	if (alloc_out(&out, threads, loops, counters) < 0)
		goto out;
	if (open_clock(&clock, clock_s) < 0)
		goto out;
	Py_BEGIN_ALLOW_THREADS
	ret = pz_bench_threads(&p, &clock, &out);
	Py_END_ALLOW_THREADS
	pz_clock_close(&clock);
	if (ret)
		threads_error(ret, &p, &out);
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

PyDoc_STRVAR(run_threads_on__doc__,
"run_threads_on(buffer, kernel, threads, chunk, loops, value, value_step, cold, flush,\n"
"               evict_bytes=0)\n--\n\n"
"Test hook: run the threaded clear (shared mode) on a writable buffer the\n"
"caller mapped, thread t writing value + t * value_step, and return the\n"
"events every thread reported, in order: (thread, event, offset, length)\n"
"with event 'start' (length: threads past the barrier), 'flush' or 'clear'.");

static PyObject *core_run_threads_on(PyObject *self, PyObject *args)
{
	static const char *const ev_names[] = { "start", "flush", "clear" };
	PyObject *obj, *result = NULL;
	const char *name, *flush_s;
	unsigned int threads, loops;
	Py_ssize_t chunk, evict_bytes = 0;
	int value, step, cold, ret;
	struct pz_run_params p;
	struct pz_run_out out;
	struct pz_clock clock;
	struct pz_region evict = { 0 };
	struct trace tr = { .n = 0 };
	Py_buffer view;
	char *dst;
	size_t i;

	if (!PyArg_ParseTuple(args, "OsInIiipz|n:run_threads_on", &obj, &name, &threads, &chunk,
			      &loops, &value, &step, &cold, &flush_s, &evict_bytes))
		return NULL;
	if (get_writable(obj, &view, "buffer") < 0)
		return NULL;
	memset(&p, 0, sizeof(p));
	memset(&out, 0, sizeof(out));
	p.kernel = usable_kernel(PZ_KIND_FILL, name);
	if (!p.kernel || (cold && parse_flush(flush_s, &p.flush.method) < 0))
		goto out_view;
	if (threads == 0 || threads > PZ_MAX_THREADS || loops == 0 || chunk <= 0 ||
	    view.len <= 0 || (size_t)view.len / threads < 4096) {
		PyErr_SetString(PyExc_ValueError, "need 1..1024 threads, loops and chunk > 0, "
				"and at least 4KB of buffer per thread");
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
	if (cold && p.flush.method == PZ_FLUSH_EVICT) {
		ret = pz_region_map(&evict, evict_bytes > 0 ? (size_t)evict_bytes : 1u << 20,
				    PZ_PAGE_SHIFT_4KB, PZ_THP_SYSTEM, 1, 0);
		if (ret) {
			mapping_error(ret, (size_t)evict_bytes, PZ_PAGE_SHIFT_4KB, 1);
			goto out_trace;
		}
		p.flush.evict = evict.addr;
		p.flush.evict_len = evict.size;
	}
	if (alloc_out(&out, threads, loops, 0) < 0 || open_clock(&clock, "ns") < 0)
		goto out_trace;
	pthread_mutex_init(&tr.lock, NULL);
	dst = view.buf;
	Py_BEGIN_ALLOW_THREADS
	ret = pz_run_threads(&p, &clock, &dst, NULL, &out);
	Py_END_ALLOW_THREADS
	pthread_mutex_destroy(&tr.lock);
	pz_clock_close(&clock);
	if (ret) {
		errno = -ret;
		PyErr_SetFromErrno(PyExc_OSError);
		goto out_trace;
	}
	result = PyList_New((Py_ssize_t)tr.n);
	for (i = 0; result && i < tr.n; i++) {
		PyObject *row = Py_BuildValue("(Isnn)", tr.e[i].t, ev_names[tr.e[i].ev],
					      (Py_ssize_t)tr.e[i].off, (Py_ssize_t)tr.e[i].len);

		if (!row) {
			Py_CLEAR(result);
			break;
		}
		PyList_SET_ITEM(result, (Py_ssize_t)i, row);
	}
out_trace:
	pz_region_unmap(&evict);
	free_out(&out);
	PyMem_Free(tr.e);
out_view:
	PyBuffer_Release(&view);
	return result;
}

/* Batches and folios under measured conditions ----------------------- */

/* The cold flushes a test sees: (thread, offset in that thread's buffer or -1, length). */
struct flush_trace {
	pthread_mutex_t lock;
	char *const *bases;
	size_t len;              /* bytes of each buffer */
	size_t n, cap;
	struct { unsigned t; Py_ssize_t off; size_t len; } *e;
};

static void record_flush(void *ctx, unsigned t, const void *p, size_t len)
{
	struct flush_trace *tr = ctx;
	const char *c = p;

	pthread_mutex_lock(&tr->lock);
	if (tr->n < tr->cap) {
		tr->e[tr->n].t = t;
		/* -1: outside the thread's own buffer, which a test must never see. */
		tr->e[tr->n].off = c >= tr->bases[t] && c + len <= tr->bases[t] + tr->len ?
				   (Py_ssize_t)(c - tr->bases[t]) : -1;
		tr->e[tr->n].len = len;
		tr->n++;
	}
	pthread_mutex_unlock(&tr->lock);
}

static PyObject *flush_list(const struct flush_trace *tr)
{
	PyObject *l = PyList_New((Py_ssize_t)tr->n);
	size_t i;

	for (i = 0; l && i < tr->n; i++) {
		PyObject *row = Py_BuildValue("(Inn)", tr->e[i].t, tr->e[i].off,
					      (Py_ssize_t)tr->e[i].len);

		if (!row) {
			Py_CLEAR(l);
			break;
		}
		PyList_SET_ITEM(l, (Py_ssize_t)i, row);
	}
	return l;
}

static struct flush_trace *new_flush_trace(char *const *bases, size_t len, size_t cap)
{
	struct flush_trace *tr = PyMem_Calloc(1, sizeof(*tr));

	if (tr)
		tr->e = PyMem_Calloc(cap ? cap : 1, sizeof(*tr->e));
	if (!tr || !tr->e) {
		PyMem_Free(tr);
		PyErr_NoMemory();
		return NULL;
	}
	pthread_mutex_init(&tr->lock, NULL);
	tr->bases = bases;
	tr->len = len;
	tr->cap = cap;
	return tr;
}

static void free_flush_trace(struct flush_trace *tr)
{
	if (!tr)
		return;
	pthread_mutex_destroy(&tr->lock);
	PyMem_Free(tr->e);
	PyMem_Free(tr);
}

/* The flusher cold mode asks for; evict maps its buffer into @evict (unmapped by the caller). */
static int cold_flusher(const char *flush_s, Py_ssize_t evict_bytes, struct pz_flusher *f,
			struct pz_region *evict)
{
	int ret;

	if (parse_flush(flush_s, &f->method) < 0)
		return -1;
	if (f->method != PZ_FLUSH_EVICT)
		return 0;
	if (evict_bytes <= 0) {
		PyErr_SetString(PyExc_ValueError, "evicting needs evict_bytes > 0 (2x the LLC)");
		return -1;
	}
	ret = pz_region_map(evict, (size_t)evict_bytes, PZ_PAGE_SHIFT_4KB, PZ_THP_SYSTEM, 1, 0);
	if (ret) {
		mapping_error(ret, (size_t)evict_bytes, PZ_PAGE_SHIFT_4KB, 1);
		return -1;
	}
	f->evict = evict->addr;
	f->evict_len = evict->size;
	return 0;
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

static PyObject *core_bench_batch_team(PyObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"buffers", "kernel", "batch_pages", "loops", "yield_between",
				 "record", "cold", "flush", "evict_bytes", "cpus", "counters",
				 "trace", NULL};
	PyObject *bufs, *fast = NULL, *cpus_obj = NULL, *result = NULL, *d = NULL;
	PyObject *agg = NULL, *per = NULL, *ctr = NULL, *flushes = NULL;
	const char *kname, *flush_s = "";
	Py_ssize_t batch, evict_bytes = 0;
	unsigned int loops, threads = 0, t, i, j, nviews = 0, failed = PZ_CTR_COUNT;
	int yield = 0, record = 0, cold = 0, counters = 0, trace = 0, ret;
	struct pz_batch_params p = { 0 };
	struct pz_batch_out *out = NULL;
	struct pz_step_log log = { 0 };
	struct pz_tick_summary sum;
	struct pz_clock clock;
	struct pz_region evict = { 0 };
	struct flush_trace tr = { .n = 0 };
	Py_buffer *views = NULL;
	char **bases = NULL;
	uint64_t *mem = NULL, *ticks = NULL, *scratch = NULL, typical = 0;
	int *cpus = NULL;
	size_t nb = 0, total = 0, per_t;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "OsnI|pp$pznOpp:bench_batch_team", kwlist,
					 &bufs, &kname, &batch, &loops, &yield, &record, &cold,
					 &flush_s, &evict_bytes, &cpus_obj, &counters, &trace))
		return NULL;
	p.kernel = usable_kernel(PZ_KIND_FILL, kname);
	if (!p.kernel)
		return NULL;
	fast = PySequence_Fast(bufs, "buffers must be a sequence of buffers, one per thread");
	if (!fast)
		return NULL;
	if (PySequence_Fast_GET_SIZE(fast) < 1 ||
	    PySequence_Fast_GET_SIZE(fast) > (Py_ssize_t)PZ_MAX_THREADS || loops == 0) {
		PyErr_Format(PyExc_ValueError, "need 1..%u buffers (threads) and loops >= 1",
			     PZ_MAX_THREADS);
		goto out;
	}
	threads = (unsigned)PySequence_Fast_GET_SIZE(fast);
	views = PyMem_Calloc(threads, sizeof(*views));
	bases = PyMem_Calloc(threads, sizeof(*bases));
	out = PyMem_Calloc(threads, sizeof(*out));
	if (!views || !bases || !out) {
		PyErr_NoMemory();
		goto out;
	}
	for (; nviews < threads; nviews++) {
		size_t nr;

		if (get_pages(PySequence_Fast_GET_ITEM(fast, nviews), &views[nviews], &nr) < 0)
			goto out;
		if (nviews && nr != p.nr_pages) {
			PyBuffer_Release(&views[nviews]);
			PyErr_SetString(PyExc_ValueError, "every thread's buffer must be the same size");
			goto out;
		}
		p.nr_pages = nr;
		bases[nviews] = views[nviews].buf;
	}
	if (batch <= 0 || (size_t)batch > p.nr_pages) {
		PyErr_Format(PyExc_ValueError, "batch must be 1..%zu pages (the region), not %zd",
			     p.nr_pages, batch);
		goto out;
	}
	p.batch_pages = (size_t)batch;
	p.loops = loops;
	p.yield = yield;
	p.cold = cold;
	p.counters = counters;
	if (cold && cold_flusher(flush_s, evict_bytes, &p.flush, &evict) < 0)
		goto out;
	if (cpus_obj && get_cpus(cpus_obj, threads, &cpus) < 0)
		goto out;
	nb = pz_batch_count(&p);
	total = nb * loops;
	/* Per thread: pass, worst, start, end (loops each), counters; the batches apart. */
	per_t = 4 * (size_t)loops + (counters ? (size_t)loops * PZ_CTR_COUNT : 0);
	if (total / loops != nb || total > ((size_t)-1 / sizeof(uint64_t)) / threads) {
		PyErr_SetString(PyExc_ValueError, "too many batches to record");
		goto out;
	}
	mem = PyMem_Calloc(per_t * threads, sizeof(*mem));
	/* Every thread's batches back to back, so one summary covers them all. */
	ticks = PyMem_Calloc(total * threads, sizeof(*ticks));
	scratch = PyMem_Calloc(loops, sizeof(*scratch));
	if (record) {
		log.cap = total;
		log.steps = PyMem_Calloc(total, sizeof(*log.steps));
	}
	if (trace) {
		tr.bases = bases;
		tr.len = p.nr_pages * PZ_PAGE_SIZE;
		tr.cap = (size_t)threads * total;
		tr.e = PyMem_Calloc(tr.cap ? tr.cap : 1, sizeof(*tr.e));
		p.hook = record_flush;
		p.hook_ctx = &tr;
	}
	if (!mem || !ticks || !scratch || (record && !log.steps) || (trace && !tr.e)) {
		PyErr_NoMemory();
		goto out;
	}
	for (t = 0; t < threads; t++) {
		uint64_t *m = mem + per_t * t;

		out[t].pass_ticks = m;
		out[t].pass_worst = m + loops;
		out[t].start = m + 2 * (size_t)loops;
		out[t].end = m + 3 * (size_t)loops;
		out[t].batch_ticks = ticks + total * t;
		out[t].counters = counters ? m + 4 * (size_t)loops : NULL;
	}
	/* The recorded steps are thread 0's: every thread walks its region the same way. */
	out[0].log = record ? &log : NULL;
	if (open_clock(&clock, "ns") < 0)
		goto out;
	pthread_mutex_init(&tr.lock, NULL);
	Py_BEGIN_ALLOW_THREADS
	ret = pz_bench_batch_team(&p, threads, cpus, bases, &clock, out, &failed);
	if (ret == 0) {
		for (t = 0; t < threads; t++) {
			uint64_t w = pz_batch_typical_worst(out[t].batch_ticks, loops, nb, scratch);

			typical = w > typical ? w : typical;
		}
		pz_ticks_summarize(ticks, total * threads, &sum);
	}
	Py_END_ALLOW_THREADS
	pthread_mutex_destroy(&tr.lock);
	pz_clock_close(&clock);
	if (ret) {
		if (counters && failed < PZ_CTR_COUNT)
			counters_error(failed, ret);
		else if (ret == -EINVAL && cpus)
			PyErr_Format(PyExc_ValueError, "could not pin the threads to their CPUs "
				     "(sched_setaffinity: %s)", strerror(-ret));
		else if (ret == -EAGAIN)
			PyErr_Format(PagezeroError, "could not start %u threads", threads);
		else {
			errno = -ret;
			PyErr_SetFromErrno(PyExc_OSError);
		}
		goto out;
	}
	agg = PyTuple_New(loops);
	per = PyTuple_New(threads);
	if (!agg || !per)
		goto out;
	for (i = 0; i < loops; i++) {
		uint64_t lo = UINT64_MAX, hi = 0, slowest = 0;
		PyObject *v;

		for (t = 0; t < threads; t++) {
			lo = PZ_MIN(lo, out[t].start[i]);
			hi = out[t].end[i] > hi ? out[t].end[i] : hi;
			slowest = out[t].pass_ticks[i] > slowest ? out[t].pass_ticks[i] : slowest;
		}
		/* Cold: the flushes between batches are not clearing time (threads.c does the same). */
		v = PyLong_FromUnsignedLongLong(cold ? slowest : hi - lo);
		if (!v)
			goto out;
		PyTuple_SET_ITEM(agg, i, v);
	}
	for (t = 0; t < threads; t++) {
		PyObject *row = u64_tuple(out[t].pass_ticks, loops, 1);

		if (!row)
			goto out;
		PyTuple_SET_ITEM(per, t, row);
		/* Each pass's slowest batch over every thread, kept in thread 0's row. */
		for (i = 0; t && i < loops; i++)
			if (out[t].pass_worst[i] > out[0].pass_worst[i])
				out[0].pass_worst[i] = out[t].pass_worst[i];
	}
	if (counters) {
		ctr = PyDict_New();
		for (j = 0; ctr && j < PZ_CTR_COUNT; j++) {
			PyObject *row;

			for (i = 0; i < loops; i++) {
				uint64_t sum_c = 0;

				for (t = 0; t < threads; t++)
					sum_c += out[t].counters[(size_t)i * PZ_CTR_COUNT + j];
				scratch[i] = sum_c;
			}
			row = u64_tuple(scratch, loops, 1);
			if (!row || PyDict_SetItemString(ctr, pz_counter_name(j), row) < 0) {
				Py_XDECREF(row);
				goto out;
			}
			Py_DECREF(row);
		}
		if (!ctr)
			goto out;
	} else {
		ctr = Py_None;
		Py_INCREF(ctr);
	}
	if (trace) {
		flushes = flush_list(&tr);
	} else {
		flushes = Py_None;
		Py_INCREF(flushes);
	}
	{
		PyObject *worst = u64_tuple(out[0].pass_worst, loops, 1);
		PyObject *steps = record ? steps_tuple(&log) : (Py_INCREF(Py_None), Py_None);

		if (worst && steps && flushes)
			d = Py_BuildValue("{s:O,s:O,s:n,s:K,s:K,s:K,s:K,s:d,s:O,s:O,s:O,s:s,s:O}",
					  "samples", agg, "pass_worst", worst,
					  "batches", (Py_ssize_t)nb,
					  "typical_worst", (unsigned long long)typical,
					  "max", (unsigned long long)sum.max,
					  "p99", (unsigned long long)sum.p99,
					  "median", (unsigned long long)sum.median,
					  "mean", sum.mean, "steps", steps,
					  "thread_samples", per, "counters", ctr,
					  "cold_method", cold ? pz_flush_name(p.flush.method) : "",
					  "flushes", flushes);
		Py_XDECREF(worst);
		Py_XDECREF(steps);
	}
	result = d;
out:
	Py_XDECREF(agg);
	Py_XDECREF(per);
	Py_XDECREF(ctr);
	Py_XDECREF(flushes);
	pz_region_unmap(&evict);
	for (t = 0; t < nviews; t++)
		PyBuffer_Release(&views[t]);
	PyMem_Free(views);
	PyMem_Free(bases);
	PyMem_Free(out);
	PyMem_Free(mem);
	PyMem_Free(ticks);
	PyMem_Free(scratch);
	PyMem_Free(log.steps);
	PyMem_Free(tr.e);
	PyMem_Free(cpus);
	Py_XDECREF(fast);
	return result;
}

PyDoc_STRVAR(cache_methods__doc__,
"cache_methods()\n--\n\n"
"The ways cold mode can get a target out of the caches, best first, as\n"
"(name, available) pairs: clflushopt, clflush (x86-64), evict (any CPU).");

static PyObject *core_cache_methods(PyObject *self, PyObject *unused)
{
	PyObject *t = PyTuple_New(PZ_FLUSH_COUNT);
	int i;

	for (i = 0; t && i < PZ_FLUSH_COUNT; i++) {
		PyObject *row = Py_BuildValue("(sO)", pz_flush_name((enum pz_flush)i),
					      pz_flush_available((enum pz_flush)i) ? Py_True : Py_False);

		if (!row) {
			Py_CLEAR(t);
			break;
		}
		PyTuple_SET_ITEM(t, i, row);
	}
	return t;
}

PyDoc_STRVAR(counter_names__doc__,
"counter_names()\n--\n\nThe hardware counters --counters reads, in perf's names.");

static PyObject *core_counter_names(PyObject *self, PyObject *unused)
{
	PyObject *t = PyTuple_New(PZ_CTR_COUNT);
	unsigned i;

	for (i = 0; t && i < PZ_CTR_COUNT; i++) {
		PyObject *s = PyUnicode_FromString(pz_counter_name(i));

		if (!s) {
			Py_CLEAR(t);
			break;
		}
		PyTuple_SET_ITEM(t, i, s);
	}
	return t;
}

PyDoc_STRVAR(numa_bind__doc__,
"numa_bind(buffer, node)\n--\n\n"
"Bind a writable buffer's pages to a NUMA node (mbind MPOL_BIND, moving any\n"
"already there). OSError with the errno on failure.");

static PyObject *core_numa_bind(PyObject *self, PyObject *args)
{
	PyObject *obj;
	Py_buffer view;
	int node, ret;

	if (!PyArg_ParseTuple(args, "Oi:numa_bind", &obj, &node) ||
	    get_writable(obj, &view, "buffer") < 0)
		return NULL;
	ret = pz_numa_bind(view.buf, (size_t)view.len, node);
	PyBuffer_Release(&view);
	if (ret) {
		errno = -ret;
		return PyErr_SetFromErrno(PyExc_OSError);
	}
	Py_RETURN_NONE;
}

PyDoc_STRVAR(numa_policy__doc__,
"numa_policy(buffer)\n--\n\n"
"(mode, first node of the mask, node of the first page) for the mapping\n"
"holding the buffer's first byte, read back with get_mempolicy(MPOL_F_ADDR)\n"
"and get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR). mode 2 is MPOL_BIND.");

static PyObject *core_numa_policy(PyObject *self, PyObject *arg)
{
	Py_buffer view;
	int mode = -1, first = -1, node = -1, ret;

	if (get_writable(arg, &view, "buffer") < 0)
		return NULL;
	ret = pz_numa_policy(view.buf, &mode, &first);
	if (!ret)
		ret = pz_numa_node_of(view.buf, &node);
	PyBuffer_Release(&view);
	if (ret) {
		errno = -ret;
		return PyErr_SetFromErrno(PyExc_OSError);
	}
	return Py_BuildValue("(iii)", mode, first, node);
}

/* Region --------------------------------------------------------------- */

typedef struct {
	PyObject_HEAD
	struct pz_region r;
	Py_ssize_t exports;     /* live buffer views: unmapping under them would be a use-after-free */
} RegionObject;

static PyTypeObject RegionType;

/* A Region that owns the mapping @r already holds (unmapped on failure too). */
static PyObject *region_adopt(struct pz_region *r)
{
	RegionObject *self = (RegionObject *)RegionType.tp_alloc(&RegionType, 0);

	if (!self) {
		pz_region_unmap(r);
		return NULL;
	}
	self->r = *r;
	return (PyObject *)self;
}


static PyObject *region_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"size", "page_shift", "thp", "populate", "guard", NULL};
	Py_ssize_t size;
	unsigned int shift = PZ_PAGE_SHIFT_4KB;
	int thp = PZ_THP_SYSTEM, populate = 1, guard = 0, ret;
	RegionObject *self;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "n|Iipp:Region", kwlist,
					 &size, &shift, &thp, &populate, &guard))
		return NULL;
	if (size <= 0) {
		PyErr_Format(PyExc_ValueError, "region size must be positive, not %zd", size);
		return NULL;
	}
	if (check_page_shift(shift) < 0 || check_thp(thp, shift) < 0)
		return NULL;
	if (guard && shift != PZ_PAGE_SHIFT_4KB) {
		PyErr_SetString(PyExc_ValueError, "guard pages need a 4KB-page region");
		return NULL;
	}
	self = (RegionObject *)type->tp_alloc(type, 0);
	if (!self)
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = pz_region_map(&self->r, (size_t)size, shift, (enum pz_thp)thp, populate, guard);
	Py_END_ALLOW_THREADS
	if (ret) {
		mapping_error(ret, (size_t)size, shift, 1);
		Py_DECREF(self);
		return NULL;
	}
	return (PyObject *)self;
}

static void region_dealloc(RegionObject *self)
{
	pz_region_unmap(&self->r);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static int region_getbuffer(RegionObject *self, Py_buffer *view, int flags)
{
	if (!self->r.addr) {
		PyErr_SetString(PyExc_ValueError, "region is closed");
		view->obj = NULL;
		return -1;
	}
	if (PyBuffer_FillInfo(view, (PyObject *)self, self->r.addr,
			      (Py_ssize_t)self->r.size, 0, flags) < 0)
		return -1;
	self->exports++;
	return 0;
}

static void region_releasebuffer(RegionObject *self, Py_buffer *view)
{
	self->exports--;
}

static PyBufferProcs region_as_buffer = {
	(getbufferproc)region_getbuffer,
	(releasebufferproc)region_releasebuffer,
};

static PyObject *region_close(RegionObject *self, PyObject *unused)
{
	if (self->exports > 0) {
		PyErr_SetString(PyExc_BufferError,
				"cannot close a region while memoryviews of it exist");
		return NULL;
	}
	pz_region_unmap(&self->r);
	Py_RETURN_NONE;
}

static PyObject *region_enter(RegionObject *self, PyObject *unused)
{
	Py_INCREF(self);
	return (PyObject *)self;
}

static PyObject *region_exit(RegionObject *self, PyObject *args)
{
	return region_close(self, NULL);
}

static PyObject *region_get_size(RegionObject *self, void *c)
{
	return PyLong_FromSize_t(self->r.size);
}

static PyObject *region_get_page_size(RegionObject *self, void *c)
{
	return PyLong_FromSize_t((size_t)1 << self->r.page_shift);
}

static PyObject *region_get_address(RegionObject *self, void *c)
{
	return PyLong_FromVoidPtr(self->r.addr);
}

static PyObject *region_get_closed(RegionObject *self, void *c)
{
	return PyBool_FromLong(self->r.addr == NULL);
}

static PyMethodDef region_methods[] = {
	{"close", (PyCFunction)region_close, METH_NOARGS,
	 PyDoc_STR("close()\n--\n\nUnmap the region (refused while memoryviews of it exist).")},
	{"__enter__", (PyCFunction)region_enter, METH_NOARGS, NULL},
	{"__exit__", (PyCFunction)region_exit, METH_VARARGS, NULL},
	{NULL, NULL, 0, NULL}
};

static PyGetSetDef region_getset[] = {
	{"size", (getter)region_get_size, NULL, PyDoc_STR("usable bytes (the request rounded up to the page size)"), NULL},
	{"page_size", (getter)region_get_page_size, NULL, PyDoc_STR("the page size asked for, in bytes"), NULL},
	{"address", (getter)region_get_address, NULL, PyDoc_STR("address of the first usable byte (0 once closed)"), NULL},
	{"closed", (getter)region_get_closed, NULL, PyDoc_STR("True once unmapped"), NULL},
	{NULL, NULL, NULL, NULL, NULL}
};

PyDoc_STRVAR(Region__doc__,
"Region(size, page_shift=12, thp=0, populate=True, guard=False)\n--\n\n"
"An anonymous mapping that exposes the buffer protocol. page_shift 12, 21\n"
"or 30 selects 4KB pages or 2MB / 1GB hugetlb pages; thp 0 leaves THP to\n"
"the system, 1 asks for it, 2 refuses it (4KB only); guard puts a PROT_NONE\n"
"page on both sides (4KB only). Unmapped by close(), the with statement,\n"
"or garbage collection.");

static PyTypeObject RegionType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "pagezero._core.Region",
	.tp_basicsize = sizeof(RegionObject),
	.tp_dealloc = (destructor)region_dealloc,
	.tp_as_buffer = &region_as_buffer,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = Region__doc__,
	.tp_methods = region_methods,
	.tp_getset = region_getset,
	.tp_new = region_new,
};

/* Module --------------------------------------------------------------- */

static PyMethodDef core_methods[] = {
	{"kernels", core_kernels, METH_NOARGS, kernels__doc__},
	{"cpu_features", core_cpu_features, METH_NOARGS, cpu_features__doc__},
	{"fill", core_fill, METH_VARARGS, fill__doc__},
	{"copy", core_copy, METH_VARARGS, copy__doc__},
	{"bench_mem", core_bench_mem, METH_VARARGS, bench_mem__doc__},
	{"check_clock", core_check_clock, METH_O, check_clock__doc__},
	{"clocks", core_clocks, METH_NOARGS, clocks__doc__},
	{"tsc_hz", core_tsc_hz, METH_NOARGS, tsc_hz__doc__},
	{"mem_available", core_mem_available, METH_NOARGS, mem_available__doc__},
	{"strategies", core_strategies, METH_NOARGS, strategies__doc__},
	{"cold_methods", core_cold_methods, METH_NOARGS, cold_methods__doc__},
	{"policy_constants", core_policy_constants, METH_NOARGS, policy_constants__doc__},
	{"clear_order", core_clear_order, METH_VARARGS, clear_order__doc__},
	{"clear_folio", (PyCFunction)(void (*)(void))core_clear_folio, METH_VARARGS | METH_KEYWORDS,
	 clear_folio__doc__},
	{"bench_batches", (PyCFunction)(void (*)(void))core_bench_batches,
	 METH_VARARGS | METH_KEYWORDS, bench_batches__doc__},
	{"bench_folio", core_bench_folio, METH_VARARGS, bench_folio__doc__},
	{"fault_workloads", core_fault_workloads, METH_NOARGS, fault_workloads__doc__},
	{"bench_fault", core_bench_fault, METH_VARARGS, bench_fault__doc__},
	{"fault_pass", core_fault_pass, METH_VARARGS, fault_pass__doc__},
	{"bench_threads", (PyCFunction)(void (*)(void))core_bench_threads,
	 METH_VARARGS | METH_KEYWORDS, bench_threads__doc__},
	{"run_threads_on", core_run_threads_on, METH_VARARGS, run_threads_on__doc__},
	{"bench_batch_team", (PyCFunction)(void (*)(void))core_bench_batch_team,
	 METH_VARARGS | METH_KEYWORDS, bench_batch_team__doc__},
	{"cache_methods", core_cache_methods, METH_NOARGS, cache_methods__doc__},
	{"counter_names", core_counter_names, METH_NOARGS, counter_names__doc__},
	{"numa_bind", core_numa_bind, METH_VARARGS, numa_bind__doc__},
	{"numa_policy", core_numa_policy, METH_O, numa_policy__doc__},
	{NULL, NULL, 0, NULL}
};

static struct PyModuleDef core_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "pagezero._core",
	.m_doc = "pagezero's C core: kernels, clocks, regions and timed loops.",
	.m_size = -1,
	.m_methods = core_methods,
};

static int add_exception(PyObject *m, PyObject **slot, const char *name,
			 PyObject *base, const char *doc)
{
	*slot = PyErr_NewExceptionWithDoc(name, doc, base, NULL);
	if (!*slot)
		return -1;
	Py_INCREF(*slot);
	if (PyModule_AddObject(m, strrchr(name, '.') + 1, *slot) < 0) {
		Py_DECREF(*slot);
		return -1;
	}
	return 0;
}

PyMODINIT_FUNC PyInit__core(void)
{
	PyObject *m, *mapping_bases = NULL;

	if (PyType_Ready(&RegionType) < 0)
		return NULL;
	m = PyModule_Create(&core_module);
	if (!m)
		return NULL;
	if (add_exception(m, &PagezeroError, "pagezero.PagezeroError", NULL,
			  "Base class of pagezero's own errors.") < 0)
		goto fail;
	if (add_exception(m, &UnavailableError, "pagezero.UnavailableError", PagezeroError,
			  "This machine cannot run what was asked: a kernel its CPU lacks "
			  "the instructions for, or a clock it has no counter for.") < 0)
		goto fail;
	mapping_bases = PyTuple_Pack(2, PagezeroError, PyExc_OSError);
	if (!mapping_bases)
		goto fail;
	if (add_exception(m, &MappingError, "pagezero.MappingError", mapping_bases,
			  "A region could not be mapped (too large, or too few hugepages); "
			  "an OSError whose errno says why.") < 0)
		goto fail;
	Py_CLEAR(mapping_bases);
	Py_INCREF(&RegionType);
	if (PyModule_AddObject(m, "Region", (PyObject *)&RegionType) < 0) {
		Py_DECREF(&RegionType);
		goto fail;
	}
	if (PyModule_AddIntConstant(m, "VALUE_LOOP", PZ_VALUE_LOOP) < 0 ||
	    PyModule_AddIntConstant(m, "THP_SYSTEM", PZ_THP_SYSTEM) < 0 ||
	    PyModule_AddIntConstant(m, "THP_ON", PZ_THP_ON) < 0 ||
	    PyModule_AddIntConstant(m, "THP_OFF", PZ_THP_OFF) < 0 ||
	    PyModule_AddStringConstant(m, "ARCH",
#if defined(__x86_64__)
				       "x86-64"
#elif defined(__aarch64__)
				       "arm64"
#else
				       "generic"
#endif
				       ) < 0)
		goto fail;
	return m;
fail:
	Py_XDECREF(mapping_bases);
	Py_DECREF(m);
	return NULL;
}
