/*
 * values.c - Python tuples and dicts built from the C core's arrays, once
 * for every binding that returns them.
 */
#include "counters.h"
#include "pzpy.h"

PyObject *pzpy_u64_tuple(const uint64_t *v, size_t n, size_t stride)
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

PyObject *pzpy_names_tuple(const struct pz_names *t, int (*keep)(int))
{
	PyObject *names = PyList_New(0), *tuple;
	int i;

	for (i = 0; names && i < t->count; i++) {
		PyObject *s;
		int failed;

		if (keep && !keep(i))
			continue;
		s = PyUnicode_FromString(t->name[i]);
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

PyObject *pzpy_counters_dict(const uint64_t *v, unsigned loops)
{
	PyObject *d;
	unsigned j;

	if (!v)
		Py_RETURN_NONE;
	d = PyDict_New();
	for (j = 0; d && j < PZ_CTR_COUNT; j++) {
		PyObject *row = pzpy_u64_tuple(v + j, loops, PZ_CTR_COUNT);

		if (!row || PyDict_SetItemString(d, pz_counter_name(j), row) < 0)
			Py_CLEAR(d);
		Py_XDECREF(row);
	}
	return d;
}

PyObject *pzpy_steps_tuple(const struct pz_step_log *log)
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

int pzpy_add_methods(PyObject *m, PyMethodDef *methods)
{
	return PyModule_AddFunctions(m, methods);
}
