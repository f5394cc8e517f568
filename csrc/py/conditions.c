/*
 * conditions.c - what the benchmarks under measured conditions share in
 * the bindings: the cold flusher, the CPUs threads are pinned to, and the
 * trace of flushes the tests check.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>

#include "pzpy.h"

int pzpy_flush_method(const char *name, enum pz_flush *m)
{
	int id;

	if (!name || !*name) {
		*m = pz_flush_best();
		return 0;
	}
	id = pz_lookup(&pz_flush_names, name);
	if (id < 0) {
		PyErr_Format(PyExc_ValueError,
			     "unknown cold method '%s' (expected clflushopt, clflush, dc-civac or "
			     "evict)",
			     name);
		return -1;
	}
	if (!pz_flush_available((enum pz_flush)id)) {
		PyErr_Format(pzpy_UnavailableError, "this CPU cannot flush with %s; use evict",
			     name);
		return -1;
	}
	*m = (enum pz_flush)id;
	return 0;
}

int pzpy_cold_flusher(const char *name, Py_ssize_t evict_bytes, struct pz_flusher *f,
		      struct pz_region *evict)
{
	int ret;

	if (pzpy_flush_method(name, &f->method) < 0)
		return -1;
	if (f->method != PZ_FLUSH_EVICT)
		return 0;
	if (evict_bytes <= 0) {
		PyErr_SetString(PyExc_ValueError, "evicting needs evict_bytes > 0 (2x the LLC)");
		return -1;
	}
	ret = pz_region_map(evict, (size_t)evict_bytes, PZ_PAGE_SHIFT_4KB, PZ_THP_SYSTEM, 1, 0);
	if (ret) {
		struct pzpy_failure fail = { .doing = "mmap",
					     .bytes = (size_t)evict_bytes,
					     .shift = PZ_PAGE_SHIFT_4KB };

		pzpy_raise(ret, &fail);
		return -1;
	}
	f->evict = evict->addr;
	f->evict_len = evict->size;
	return 0;
}

int pzpy_cpus(PyObject *seq, unsigned threads, int **cpus)
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

struct pzpy_flush_trace {
	pthread_mutex_t lock;
	char *const *bases;
	size_t len; /* bytes of each buffer */
	size_t n, cap;
	struct {
		unsigned t;
		Py_ssize_t off;
		size_t len;
	} * e;
};

void pzpy_flush_trace_record(void *ctx, unsigned t, const void *p, size_t len)
{
	struct pzpy_flush_trace *tr = ctx;
	const char *c = p;

	pthread_mutex_lock(&tr->lock);
	if (tr->n < tr->cap) {
		tr->e[tr->n].t = t;
		/* -1: outside the thread's own buffer, which a test must never see. */
		tr->e[tr->n].off = c >= tr->bases[t] && c + len <= tr->bases[t] + tr->len
					   ? (Py_ssize_t)(c - tr->bases[t])
					   : -1;
		tr->e[tr->n].len = len;
		tr->n++;
	}
	pthread_mutex_unlock(&tr->lock);
}

PyObject *pzpy_flush_trace_list(const struct pzpy_flush_trace *tr)
{
	PyObject *l;
	size_t i;

	if (!tr)
		Py_RETURN_NONE;
	l = PyList_New((Py_ssize_t)tr->n);
	for (i = 0; l && i < tr->n; i++) {
		PyObject *row =
			Py_BuildValue("(Inn)", tr->e[i].t, tr->e[i].off, (Py_ssize_t)tr->e[i].len);

		if (!row) {
			Py_CLEAR(l);
			break;
		}
		PyList_SET_ITEM(l, (Py_ssize_t)i, row);
	}
	return l;
}

struct pzpy_flush_trace *pzpy_flush_trace_new(char *const *bases, size_t len, size_t cap)
{
	struct pzpy_flush_trace *tr = PyMem_Calloc(1, sizeof(*tr));

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

void pzpy_flush_trace_free(struct pzpy_flush_trace *tr)
{
	if (!tr)
		return;
	pthread_mutex_destroy(&tr->lock);
	PyMem_Free(tr->e);
	PyMem_Free(tr);
}
