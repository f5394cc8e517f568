/*
 * kernels.c - the kernel registry, the CPU's features, direct kernel calls
 * (fill, copy) and the clocks.
 */
#include "cpu.h"
#include "pzpy.h"

static PyObject *kernel_row(size_t i, const void *clear_pages)
{
	const struct pz_kernel *k = pz_kernel_at(i);
	PyObject *features = pzpy_names_from(PZ_FEAT_COUNT, pz_feature_name, k->features), *row;
	char reason[128];
	int available = pz_kernel_available(k, reason, sizeof(reason));

	if (!features)
		return NULL;
	row = Py_BuildValue(
		"{s:s,s:s,s:s,s:s,s:O,s:O,s:O,s:O,s:z,s:n,s:n,s:O}", "kind",
		pz_name(&pzpy_kinds, k->kind), "name", k->name, "description", k->description,
		"arch", k->arch, "temporal", (k->flags & PZ_NONTEMPORAL) ? Py_False : Py_True,
		"zero_only", (k->flags & PZ_ZERO_ONLY) ? Py_True : Py_False, "features", features,
		"available", available ? Py_True : Py_False, "reason", available ? NULL : reason,
		"unit", (Py_ssize_t)k->unit, "align", (Py_ssize_t)k->align, "clear_pages",
		k == clear_pages ? Py_True : Py_False);
	Py_DECREF(features);
	return row;
}

PyDoc_STRVAR(kernels__doc__,
	     "kernels()\n--\n\n"
	     "The kernel registry as a tuple of dicts, in table order: kind ('clear' or\n"
	     "'copy'), name, description, arch, temporal, zero_only, features,\n"
	     "available, reason (None when available), unit and align (bytes), and\n"
	     "clear_pages: True for the one clear kernel Linux's clear_page() uses on\n"
	     "this CPU.");

static PyObject *core_kernels(PyObject *self, PyObject *unused)
{
	return pzpy_tuple_of(pz_kernel_count(), kernel_row, pz_kernel_clear_pages());
}

PyDoc_STRVAR(cpu_features__doc__,
	     "cpu_features()\n--\n\n"
	     "Names of the CPU features pagezero's kernels care about that this CPU\n"
	     "(and OS) supports, detected with CPUID.");

static PyObject *core_cpu_features(PyObject *self, PyObject *unused)
{
	return pzpy_names_from(PZ_FEAT_COUNT, pz_feature_name, pz_cpu_features());
}

/* Run @k over @len bytes, without the GIL when that is worth it. */
static void run_kernel(const struct pz_kernel *k, void *dst, const void *src, int value,
		       Py_ssize_t len)
{
	PyThreadState *ts;

	if (len <= 0)
		return;
	ts = len >= PZPY_GIL_RELEASE_BYTES ? PyEval_SaveThread() : NULL;
	if (k->kind == PZ_KIND_FILL)
		pz_kernel_fill(k, dst, value, (size_t)len);
	else
		pz_kernel_copy(k, dst, src, (size_t)len);
	if (ts)
		PyEval_RestoreThread(ts);
}

PyDoc_STRVAR(fill__doc__,
	     "fill(buffer, value, kernel)\n--\n\n"
	     "Set every byte of the writable contiguous buffer to value (0..255) with\n"
	     "the named clear kernel.");

static PyObject *core_fill(PyObject *self, PyObject *args, PyObject *kw)
{
	const struct pz_kernel *k = NULL;
	PyObject *obj;
	Py_buffer view;
	int value = 0;
	static char *kwlist[] = { "buffer", "value", "kernel", NULL };

	if (!PyArg_ParseTupleAndKeywords(args, kw, "OO&O&:fill", kwlist, &obj, pzpy_int, &value,
					 pzpy_clear_kernel, &k))
		return NULL;
	/* pagezero.fill checks the byte; what only the registry knows is checked here. */
	if ((k->flags & PZ_ZERO_ONLY) && value != 0)
		return PyErr_Format(PyExc_ValueError,
				    "kernel '%s' can only write zeros (fill value must be 0)",
				    k->name);
	if (!pzpy_writable(obj, &view))
		return NULL;
	run_kernel(k, view.buf, NULL, value, view.len);
	PyBuffer_Release(&view);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(copy__doc__,
	     "copy(dst, src, kernel)\n--\n\n"
	     "Copy src into the writable buffer dst (same length, not overlapping: the\n"
	     "kernels copy forwards, as memcpy may) with the named copy kernel.");

static PyObject *core_copy(PyObject *self, PyObject *args, PyObject *kw)
{
	Py_buffer dst, src;
	const struct pz_kernel *k = NULL;
	const char *d, *s;
	PyObject *ret = NULL;
	static char *kwlist[] = { "dst", "src", "kernel", NULL };

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&O&:copy", kwlist, pzpy_writable, &dst,
					 pzpy_readable, &src, pzpy_copy_kernel, &k))
		return NULL;
	d = dst.buf;
	s = src.buf;
	if (src.len != dst.len) {
		PyErr_Format(PyExc_ValueError, "dst has %zd bytes but src has %zd", dst.len,
			     src.len);
		goto out;
	}
	if (dst.len > 0 && d < s + src.len && s < d + dst.len) {
		PyErr_SetString(PyExc_ValueError,
				"dst and src overlap: a copy kernel may "
				"read bytes it already overwrote (use two buffers)");
		goto out;
	}
	run_kernel(k, dst.buf, src.buf, 0, dst.len);
	ret = Py_NewRef(Py_None);
out:
	PyBuffer_Release(&src);
	PyBuffer_Release(&dst);
	return ret;
}

PyDoc_STRVAR(check_clock__doc__,
	     "check_clock(name)\n--\n\n"
	     "Raise ValueError for an unknown clock and pagezero.UnavailableError for one\n"
	     "this machine cannot read (cycles without a PMU).");

static PyObject *core_check_clock(PyObject *self, PyObject *args, PyObject *kw)
{
	enum pz_clock_id id = PZ_CLOCK_NS;
	struct pz_clock c;
	static char *kwlist[] = { "name", NULL };

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&:check_clock", kwlist, pzpy_clock, &id) ||
	    pzpy_open_clock(&c, id) < 0)
		return NULL;
	pz_clock_close(&c);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(clocks__doc__, "clocks()\n--\n\nThe clock names, default first.");

static PyObject *core_clocks(PyObject *self, PyObject *unused)
{
	return pzpy_names_tuple(&pz_clock_names, PZPY_ALL);
}

PyDoc_STRVAR(tsc_hz__doc__,
	     "tsc_hz()\n--\n\n"
	     "The tsc clock's rate in Hz: its ticks are reference cycles, not CPU\n"
	     "cycles. On x86-64 the time-stamp counter's, measured once against\n"
	     "CLOCK_MONOTONIC_RAW (about 150 ms the first time); on arm64 the generic\n"
	     "timer's (CNTVCT_EL0), read from CNTFRQ_EL0, often 24-100 MHz; 0.0\n"
	     "without such a counter.");

static PyObject *core_tsc_hz(PyObject *self, PyObject *unused)
{
	double hz;

	Py_BEGIN_ALLOW_THREADS hz = pz_tsc_hz();
	Py_END_ALLOW_THREADS return PyFloat_FromDouble(hz);
}

PyMethodDef pzpy_kernel_methods[] = {
	{ "kernels", core_kernels, METH_NOARGS, kernels__doc__ },
	{ "cpu_features", core_cpu_features, METH_NOARGS, cpu_features__doc__ },
	PZPY_KW_METHOD("fill", core_fill, fill__doc__),
	PZPY_KW_METHOD("copy", core_copy, copy__doc__),
	PZPY_KW_METHOD("check_clock", core_check_clock, check_clock__doc__),
	{ "clocks", core_clocks, METH_NOARGS, clocks__doc__ },
	{ "tsc_hz", core_tsc_hz, METH_NOARGS, tsc_hz__doc__ },
	{ NULL, NULL, 0, NULL }
};

int pzpy_init_kernels(PyObject *m)
{
	if (PyModule_AddIntConstant(m, "VALUE_LOOP", PZ_VALUE_LOOP) < 0 ||
	    PyModule_AddIntConstant(m, "SETTLE_MIN_LOOPS", PZ_SETTLE_MIN_LOOPS) < 0 ||
	    PyModule_AddIntConstant(m, "SETTLE_TOLERANCE_PCT", PZ_SETTLE_TOLERANCE_PCT) < 0)
		return -1;
	return PyModule_AddStringConstant(m, "ARCH",
#if defined(__x86_64__)
					  "x86-64"
#elif defined(__aarch64__)
					  "arm64"
#else
					  "generic"
#endif
	);
}
