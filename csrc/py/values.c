/*
 * values.c - Python tuples and dicts built from the C core's arrays, once
 * for every binding that returns them.
 */
#include "counters.h"
#include "pzpy.h"

PyObject *pzpy_tuple_of(size_t n, PyObject *(*item)(size_t i, const void *ctx), const void *ctx)
{
	PyObject *t = PyTuple_New((Py_ssize_t)n);
	size_t i;

	for (i = 0; t && i < n; i++) {
		PyObject *x = item(i, ctx);

		if (!x)
			Py_CLEAR(t);
		else
			PyTuple_SET_ITEM(t, (Py_ssize_t)i, x);
	}
	return t;
}

/* Rows of @n values @stride apart, a row every @row_stride values. */
struct u64_rows {
	const uint64_t *v;
	size_t row_stride, n, stride;
};

static PyObject *u64_at(size_t i, const void *ctx)
{
	const struct u64_rows *r = ctx;

	return PyLong_FromUnsignedLongLong(r->v[i * r->stride]);
}

PyObject *pzpy_u64_tuple(const uint64_t *v, size_t n, size_t stride)
{
	const struct u64_rows r = { .v = v, .stride = stride };

	return pzpy_tuple_of(n, u64_at, &r);
}

static PyObject *u64_row_at(size_t i, const void *ctx)
{
	const struct u64_rows *r = ctx;

	return pzpy_u64_tuple(r->v + i * r->row_stride, r->n, r->stride);
}

PyObject *pzpy_u64_rows(const uint64_t *v, size_t rows, size_t row_stride, size_t n, size_t stride)
{
	const struct u64_rows r = { v, row_stride, n, stride };

	return pzpy_tuple_of(rows, u64_row_at, &r);
}

/* Where names come from: a table, or a function of the index. */
struct names_src {
	const struct pz_names *t;
	const char *(*name_of)(unsigned);
};

static PyObject *names_tuple(unsigned n, const struct names_src *src, uint64_t mask)
{
	PyObject *names = PyList_New(0), *tuple;
	unsigned i;

	for (i = 0; names && i < n; i++) {
		PyObject *s;
		int failed;

		if (i < 64 && !((mask >> i) & 1))
			continue;
		s = PyUnicode_FromString(src->t ? pz_name(src->t, (int)i) : src->name_of(i));
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

PyObject *pzpy_names_tuple(const struct pz_names *t, uint64_t mask)
{
	const struct names_src src = { .t = t };

	return names_tuple((unsigned)t->count, &src, mask);
}

PyObject *pzpy_names_from(unsigned n, const char *(*name_of)(unsigned), uint64_t mask)
{
	const struct names_src src = { .name_of = name_of };

	return names_tuple(n, &src, mask);
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

static PyObject *step_at(size_t i, const void *log)
{
	const struct pz_step *s = &((const struct pz_step_log *)log)->steps[i];

	return Py_BuildValue("(nnO)", (Py_ssize_t)s->first, (Py_ssize_t)s->count,
			     s->nontemporal ? Py_True : Py_False);
}

PyObject *pzpy_steps_tuple(const struct pz_step_log *log)
{
	return pzpy_tuple_of(PZ_MIN(log->n, log->cap), step_at, log);
}
