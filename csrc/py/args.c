/*
 * args.c - the O& converters of PyArg_ParseTupleAndKeywords for the
 * arguments that recur across _core's functions: names that become the C
 * core's enums, bounded integers, buffers.
 *
 * The integer converters refuse what the "I" and "n" formats would have
 * wrapped or passed on (loops=-1 became 4294967295, a size of -1 a size_t
 * of 2**64 - 1) with a ValueError naming the argument.
 */
#include <limits.h>

#include "pzpy.h"
#include "mem_bench.h"

/* Where a bounded integer goes: an int, an unsigned (what the C core counts in) or a Py_ssize_t. */
enum width { AS_INT, AS_UNSIGNED, AS_SSIZE };

/*
 * An int in [lo, hi] into @dest, of width @w: 1, or 0 with a ValueError
 * naming @what (TypeError for a non-integer).
 */
static int bounded(PyObject *obj, const char *what, long long lo, long long hi, enum width w,
		   void *dest)
{
	long long v;
	int overflow;

	if (!PyLong_Check(obj) && !PyIndex_Check(obj)) {
		PyErr_Format(PyExc_TypeError, "%s must be an integer, not %.100s", what,
			     Py_TYPE(obj)->tp_name);
		return 0;
	}
	v = PyLong_AsLongLongAndOverflow(obj, &overflow);
	if (v == -1 && PyErr_Occurred())
		return 0;
	if (overflow || v < lo || v > hi) {
		PyErr_Format(PyExc_ValueError, "%s must be %lld..%lld, not %S", what, lo, hi, obj);
		return 0;
	}
	if (w == AS_INT)
		*(int *)dest = (int)v;
	else if (w == AS_UNSIGNED)
		*(unsigned *)dest = (unsigned)v;
	else
		*(Py_ssize_t *)dest = (Py_ssize_t)v;
	return 1;
}

int pzpy_size(PyObject *obj, void *dest)
{
	return bounded(obj, "the size", 0, PY_SSIZE_T_MAX, AS_SSIZE, dest);
}

/* An int, refused with ValueError as the others are (the "i" format raises OverflowError). */
int pzpy_int(PyObject *obj, void *dest)
{
	return bounded(obj, "the value", INT_MIN, INT_MAX, AS_INT, dest);
}

int pzpy_loops(PyObject *obj, void *dest)
{
	return bounded(obj, "loops", 1, UINT32_MAX, AS_UNSIGNED, dest);
}

int pzpy_threads(PyObject *obj, void *dest)
{
	return bounded(obj, "threads", 1, PZ_MAX_THREADS, AS_UNSIGNED, dest);
}

int pzpy_settle(PyObject *obj, void *dest)
{
	return bounded(obj, "settle", 0, UINT32_MAX, AS_UNSIGNED, dest);
}

int pzpy_seed(PyObject *obj, void *dest)
{
	return bounded(obj, "seed", 0, UINT32_MAX, AS_UNSIGNED, dest);
}

int pzpy_thp(PyObject *obj, void *dest)
{
	return bounded(obj, "thp mode (0 system, 1 on, 2 off)", PZ_THP_SYSTEM, PZ_THP_OFF, AS_INT,
		       dest);
}

int pzpy_page_shift(PyObject *obj, void *dest)
{
	unsigned v;

	if (!bounded(obj, "page_shift", 0, 63, AS_UNSIGNED, &v))
		return 0;
	if (v != PZ_PAGE_SHIFT_4KB && v != PZ_PAGE_SHIFT_2MB && v != PZ_PAGE_SHIFT_1GB) {
		PyErr_Format(PyExc_ValueError,
			     "page shift %u is not 12 (4KB), 21 (2MB) or 30 (1GB)", v);
		return 0;
	}
	*(unsigned *)dest = v;
	return 1;
}

/*
 * The value the str @obj names in @t, into the int-sized enum at @dest: 1,
 * or 0 with a ValueError that names @what and lists the known names.
 */
static int lookup_name(PyObject *obj, const struct pz_names *t, const char *what, void *dest)
{
	const char *name;
	PyObject *known;
	int i;

	if (!PyUnicode_Check(obj)) {
		PyErr_Format(PyExc_TypeError, "%s must be a str, not %.100s", what,
			     Py_TYPE(obj)->tp_name);
		return 0;
	}
	name = PyUnicode_AsUTF8(obj);
	if (!name)
		return 0;
	*(int *)dest = pz_lookup(t, name);
	if (*(int *)dest >= 0)
		return 1;
	known = PyUnicode_FromString(pz_name(t, 0));
	for (i = 1; known && i < t->count; i++)
		Py_SETREF(known, PyUnicode_FromFormat("%U, %s", known, pz_name(t, i)));
	if (known)
		PyErr_Format(PyExc_ValueError, "unknown %s '%s' (known: %U)", what, name, known);
	Py_XDECREF(known);
	return 0;
}

static const char *const kind_names[] = { [PZ_KIND_FILL] = "clear", [PZ_KIND_COPY] = "copy" };
const struct pz_names pzpy_kinds = { kind_names, 2 };

int pzpy_kind(PyObject *obj, void *dest)
{
	return lookup_name(obj, &pzpy_kinds, "kernel kind", dest);
}

static int kernel_of(PyObject *obj, void *dest, enum pz_kernel_kind kind)
{
	const char *name = PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL;

	if (!name) {
		if (!PyErr_Occurred())
			PyErr_Format(PyExc_TypeError, "kernel must be a str, not %.100s",
				     Py_TYPE(obj)->tp_name);
		return 0;
	}
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

int pzpy_clock(PyObject *obj, void *dest)
{
	return lookup_name(obj, &pz_clock_names, "clock", dest);
}

int pzpy_workload(PyObject *obj, void *dest)
{
	return lookup_name(obj, &pz_fault_names, "workload", dest);
}

int pzpy_touch(PyObject *obj, void *dest)
{
	return lookup_name(obj, &pz_touch_names, "touch", dest);
}

int pzpy_strategy(PyObject *obj, void *dest)
{
	return lookup_name(obj, &pz_strategy_names, "strategy", dest);
}

/*
 * A contiguous buffer into the Py_buffer @dest; Py_CLEANUP_SUPPORTED, so
 * that the parser gives it back (obj NULL) when a later argument fails.
 */
static int get_buffer(PyObject *obj, void *dest, int flags)
{
	Py_buffer *view = dest;

	if (!obj) {
		PyBuffer_Release(view);
		return 1;
	}
	if (PyObject_GetBuffer(obj, view, flags | PyBUF_ANY_CONTIGUOUS) == 0)
		return Py_CLEANUP_SUPPORTED;
	PyErr_Clear();
	PyErr_Format(PyExc_ValueError,
		     "the buffer must be a %scontiguous buffer (bytearray, memoryview, "
		     "mmap, numpy array), not %.100s",
		     (flags & PyBUF_WRITABLE) ? "writable " : "", Py_TYPE(obj)->tp_name);
	return 0;
}

int pzpy_writable(PyObject *obj, void *dest)
{
	return get_buffer(obj, dest, PyBUF_WRITABLE);
}

int pzpy_readable(PyObject *obj, void *dest)
{
	return get_buffer(obj, dest, 0);
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
