/*
 * args.c - the keyword parser for METH_FASTCALL | METH_KEYWORDS and the
 * converters of the arguments that recur across _core's functions.
 *
 * CPython's public API has no FASTCALL keyword parser before 3.13
 * (PyArg_ParseTupleAndKeywords needs a tuple and a dict), so this maps
 * (args, nargs, kwnames) onto a static list of names. The integer
 * converters refuse what the "I" format would have wrapped (loops=-1
 * became 4294967295) with a ValueError naming the argument.
 */
#include <limits.h>
#include <string.h>

#include "pzpy.h"
#include "mem_bench.h"

#define PZPY_MAX_PARAMS 24

int pzpy_parse(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
	       const struct pzpy_param *params, int n, int required, int positional)
{
	PyObject *given[PZPY_MAX_PARAMS] = { NULL };
	Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0, k;
	int i, done;

	if (n > PZPY_MAX_PARAMS) {
		PyErr_Format(PyExc_SystemError, "%s() has too many parameters to parse", fname);
		return -1;
	}
	if (nargs > positional) {
		PyErr_Format(PyExc_TypeError,
			     "%s() takes at most %d positional argument%s "
			     "(%zd given)",
			     fname, positional, positional == 1 ? "" : "s", nargs);
		return -1;
	}
	for (i = 0; i < nargs; i++)
		given[i] = args[i];
	for (k = 0; k < nkw; k++) {
		PyObject *key = PyTuple_GET_ITEM(kwnames, k);

		for (i = 0; i < n; i++)
			if (PyUnicode_CompareWithASCIIString(key, params[i].name) == 0)
				break;
		if (i == n) {
			PyErr_Format(PyExc_TypeError,
				     "%s() got an unexpected keyword argument '%U'", fname, key);
			return -1;
		}
		if (given[i]) {
			PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'",
				     fname, params[i].name);
			return -1;
		}
		given[i] = args[nargs + k];
	}
	for (i = 0; i < required; i++) {
		if (!given[i]) {
			PyErr_Format(PyExc_TypeError,
				     "%s() missing required argument '%s' (pos %d)", fname,
				     params[i].name, i + 1);
			return -1;
		}
	}
	for (done = 0; done < n; done++)
		if (given[done] && !params[done].convert(given[done], params[done].dest))
			goto release;
	return 0;
release:
	/* Give back what the converters before the failing one acquired (buffers). */
	for (i = 0; i < done; i++)
		if (given[i])
			params[i].convert(NULL, params[i].dest);
	return -1;
}

int pzpy_object(PyObject *obj, void *dest)
{
	if (obj)
		*(PyObject **)dest = obj;
	return 1;
}

int pzpy_str(PyObject *obj, void *dest)
{
	const char *s;

	if (!obj)
		return 1;
	if (!PyUnicode_Check(obj)) {
		PyErr_Format(PyExc_TypeError, "expected str, not %.100s", Py_TYPE(obj)->tp_name);
		return 0;
	}
	s = PyUnicode_AsUTF8(obj);
	if (!s)
		return 0;
	*(const char **)dest = s;
	return 1;
}

int pzpy_str_or_none(PyObject *obj, void *dest)
{
	if (obj == Py_None) {
		*(const char **)dest = NULL;
		return 1;
	}
	return pzpy_str(obj, dest);
}

int pzpy_bool(PyObject *obj, void *dest)
{
	int v;

	if (!obj)
		return 1;
	v = PyObject_IsTrue(obj);
	if (v < 0)
		return 0;
	*(int *)dest = v;
	return 1;
}

/* An int in [lo, hi], or 0 with a ValueError naming @what (TypeError for a non-integer). */
static int bounded(PyObject *obj, const char *what, long long lo, long long hi, long long *v)
{
	int overflow;

	if (!PyLong_Check(obj) && !PyIndex_Check(obj)) {
		PyErr_Format(PyExc_TypeError, "%s must be an integer, not %.100s", what,
			     Py_TYPE(obj)->tp_name);
		return 0;
	}
	*v = PyLong_AsLongLongAndOverflow(obj, &overflow);
	if (*v == -1 && PyErr_Occurred())
		return 0;
	if (overflow || *v < lo || *v > hi) {
		PyErr_Format(PyExc_ValueError, "%s must be %lld..%lld, not %S", what, lo, hi, obj);
		return 0;
	}
	return 1;
}

/* Where a bounded integer goes: an int, an unsigned or a Py_ssize_t. */
enum width { AS_INT, AS_UNSIGNED, AS_SSIZE };

static int convert_int(PyObject *obj, void *dest, const char *what, long long lo, long long hi,
		       enum width w)
{
	long long v;

	if (!obj)
		return 1;
	if (!bounded(obj, what, lo, hi, &v))
		return 0;
	if (w == AS_INT)
		*(int *)dest = (int)v;
	else if (w == AS_UNSIGNED)
		*(unsigned *)dest = (unsigned)v;
	else
		*(Py_ssize_t *)dest = (Py_ssize_t)v;
	return 1;
}

int pzpy_int(PyObject *obj, void *dest)
{
	return convert_int(obj, dest, "the value", INT_MIN, INT_MAX, AS_INT);
}

int pzpy_ssize(PyObject *obj, void *dest)
{
	return convert_int(obj, dest, "the size", PY_SSIZE_T_MIN, PY_SSIZE_T_MAX, AS_SSIZE);
}

int pzpy_loops(PyObject *obj, void *dest)
{
	return convert_int(obj, dest, "loops", 1, UINT32_MAX, AS_UNSIGNED);
}

int pzpy_threads(PyObject *obj, void *dest)
{
	return convert_int(obj, dest, "threads", 1, PZ_MAX_THREADS, AS_UNSIGNED);
}

int pzpy_seed(PyObject *obj, void *dest)
{
	return convert_int(obj, dest, "seed", 0, UINT32_MAX, AS_UNSIGNED);
}

int pzpy_thp(PyObject *obj, void *dest)
{
	return convert_int(obj, dest, "thp mode (0 system, 1 on, 2 off)", PZ_THP_SYSTEM, PZ_THP_OFF,
			   AS_INT);
}

int pzpy_page_shift(PyObject *obj, void *dest)
{
	unsigned v;

	if (!obj)
		return 1;
	if (!convert_int(obj, &v, "page_shift", 0, 63, AS_UNSIGNED))
		return 0;
	if (v != PZ_PAGE_SHIFT_4KB && v != PZ_PAGE_SHIFT_2MB && v != PZ_PAGE_SHIFT_1GB) {
		PyErr_Format(PyExc_ValueError,
			     "page shift %u is not 12 (4KB), 21 (2MB) or 30 (1GB)", v);
		return 0;
	}
	*(unsigned *)dest = v;
	return 1;
}

int pzpy_kind(PyObject *obj, void *dest)
{
	const char *s;

	if (!obj)
		return 1;
	if (!pzpy_str(obj, &s))
		return 0;
	if (strcmp(s, "clear") == 0)
		*(enum pz_kernel_kind *)dest = PZ_KIND_FILL;
	else if (strcmp(s, "copy") == 0)
		*(enum pz_kernel_kind *)dest = PZ_KIND_COPY;
	else {
		PyErr_Format(PyExc_ValueError,
			     "unknown kernel kind '%s' (expected 'clear' or 'copy')", s);
		return 0;
	}
	return 1;
}

static int kernel_of(PyObject *obj, void *dest, enum pz_kernel_kind kind)
{
	const char *name;

	if (!obj)
		return 1;
	if (!pzpy_str(obj, &name))
		return 0;
	*(const struct pz_kernel **)dest = pzpy_usable_kernel(kind, name);
	return *(const struct pz_kernel **)dest != NULL;
}

int pzpy_clear_kernel(PyObject *obj, void *dest)
{
	return kernel_of(obj, dest, PZ_KIND_FILL);
}

int pzpy_copy_kernel(PyObject *obj, void *dest)
{
	return kernel_of(obj, dest, PZ_KIND_COPY);
}

/*
 * The id @lookup gives the str @obj in *id: 1, or 0 with a ValueError that
 * names @what and the @known names.
 */
static int lookup_name(PyObject *obj, int (*lookup)(const char *), const char *what,
		       const char *known, int *id)
{
	const char *name;

	if (!pzpy_str(obj, &name))
		return 0;
	*id = lookup(name);
	if (*id >= 0)
		return 1;
	PyErr_Format(PyExc_ValueError, "unknown %s '%s' (%s)", what, name, known);
	return 0;
}

int pzpy_clock(PyObject *obj, void *dest)
{
	int id;

	if (obj &&
	    !lookup_name(obj, pz_clock_lookup, "clock", "expected ns, timeval, cycles or tsc", &id))
		return 0;
	if (obj)
		*(enum pz_clock_id *)dest = (enum pz_clock_id)id;
	return 1;
}

int pzpy_workload(PyObject *obj, void *dest)
{
	int id;

	if (obj && !lookup_name(obj, pz_fault_lookup, "workload",
				"expected demand, populate or populate-write", &id))
		return 0;
	if (obj)
		*(enum pz_fault_workload *)dest = (enum pz_fault_workload)id;
	return 1;
}

int pzpy_strategy(PyObject *obj, void *dest)
{
	char known[160] = "known: ";
	int i, id;

	for (i = 0; i < PZ_STRATEGY_COUNT; i++) {
		if (i)
			strncat(known, ", ", sizeof(known) - strlen(known) - 1);
		strncat(known, pz_strategy_name((enum pz_strategy)i),
			sizeof(known) - strlen(known) - 1);
	}
	if (obj && !lookup_name(obj, pz_strategy_lookup, "strategy", known, &id))
		return 0;
	if (obj)
		*(enum pz_strategy *)dest = (enum pz_strategy)id;
	return 1;
}

static int get_buffer(PyObject *obj, void *dest, int flags, const char *what)
{
	Py_buffer *view = dest;

	if (!obj) {
		PyBuffer_Release(view);
		return 1;
	}
	if (PyObject_GetBuffer(obj, view, flags | PyBUF_ANY_CONTIGUOUS) == 0)
		return 1;
	PyErr_Clear();
	PyErr_Format(PyExc_ValueError,
		     "%s must be a %scontiguous buffer (bytearray, memoryview, "
		     "mmap, numpy array), not %.100s",
		     what, (flags & PyBUF_WRITABLE) ? "writable " : "", Py_TYPE(obj)->tp_name);
	return 0;
}

int pzpy_writable(PyObject *obj, void *dest)
{
	return get_buffer(obj, dest, PyBUF_WRITABLE, "the buffer");
}

int pzpy_readable(PyObject *obj, void *dest)
{
	return get_buffer(obj, dest, 0, "the buffer");
}

int pzpy_pages(PyObject *obj, Py_buffer *view, size_t *nr_pages)
{
	if (!pzpy_writable(obj, view))
		return -1;
	if (view->len <= 0 || (size_t)view->len % PZ_PAGE_SIZE) {
		PyErr_Format(PyExc_ValueError,
			     "buffer must hold a whole number of %zu-byte pages, "
			     "not %zd bytes",
			     PZ_PAGE_SIZE, view->len);
		PyBuffer_Release(view);
		return -1;
	}
	*nr_pages = (size_t)view->len / PZ_PAGE_SIZE;
	return 0;
}
