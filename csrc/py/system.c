/*
 * system.c - facts about this machine and its memory that the benchmarks
 * depend on: MemAvailable, the cache flush methods, the hardware counters,
 * NUMA binding.
 */
#include "counters.h"
#include "numa.h"
#include "pzpy.h"

PyDoc_STRVAR(mem_available__doc__,
	     "mem_available()\n--\n\nMemAvailable from /proc/meminfo, in bytes.");

static PyObject *core_mem_available(PyObject *self, PyObject *unused)
{
	uint64_t bytes;
	int ret = pz_mem_available(&bytes);

	if (ret) {
		struct pzpy_failure fail = { .doing = "reading MemAvailable from /proc/meminfo" };

		return pzpy_raise(ret, &fail);
	}
	return PyLong_FromUnsignedLongLong(bytes);
}

PyDoc_STRVAR(cache_methods__doc__,
	     "cache_methods()\n--\n\n"
	     "The ways cold mode can get a target out of the caches, best first, as\n"
	     "(name, available) pairs: clflushopt, clflush (x86-64), dc-civac (arm64\n"
	     "Linux), evict (any CPU).");

static PyObject *cache_method(size_t i, const void *unused)
{
	return Py_BuildValue("(sO)", pz_name(&pz_flush_names, (int)i),
			     pz_flush_available((enum pz_flush)i) ? Py_True : Py_False);
}

static PyObject *core_cache_methods(PyObject *self, PyObject *unused)
{
	return pzpy_tuple_of(PZ_FLUSH_COUNT, cache_method, NULL);
}

PyDoc_STRVAR(counter_names__doc__,
	     "counter_names()\n--\n\nThe hardware counters --counters reads, in perf's names.");

static PyObject *core_counter_names(PyObject *self, PyObject *unused)
{
	return pzpy_names_from(PZ_CTR_COUNT, pz_counter_name, PZPY_ALL);
}

PyDoc_STRVAR(numa_bind__doc__,
	     "numa_bind(buffer, node)\n--\n\n"
	     "Bind a writable buffer's pages to a NUMA node (mbind MPOL_BIND, moving any\n"
	     "already there). pagezero.MappingError (an OSError) with the errno on failure.");

static PyObject *core_numa_bind(PyObject *self, PyObject *args, PyObject *kw)
{
	Py_buffer view;
	int node = 0, ret;
	struct pzpy_failure fail = { .doing = "mbind", .memory = 1 };
	static char *kwlist[] = { "buffer", "node", NULL };

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&:numa_bind", kwlist, pzpy_writable, &view,
					 pzpy_int, &node))
		return NULL;
	ret = pz_numa_bind(view.buf, (size_t)view.len, node);
	PyBuffer_Release(&view);
	if (ret)
		return pzpy_raise(ret, &fail);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(numa_policy__doc__,
	     "numa_policy(buffer)\n--\n\n"
	     "(mode, first node of the mask, node of the first page) for the mapping\n"
	     "holding the buffer's first byte, read back with get_mempolicy(MPOL_F_ADDR)\n"
	     "and get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR). mode 2 is MPOL_BIND.");

static PyObject *core_numa_policy(PyObject *self, PyObject *args, PyObject *kw)
{
	Py_buffer view;
	int mode = -1, first = -1, node = -1, ret;
	struct pzpy_failure fail = { .doing = "get_mempolicy", .memory = 1 };
	static char *kwlist[] = { "buffer", NULL };

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&:numa_policy", kwlist, pzpy_writable, &view))
		return NULL;
	ret = pz_numa_policy(view.buf, &mode, &first);
	if (!ret)
		ret = pz_numa_node_of(view.buf, &node);
	PyBuffer_Release(&view);
	if (ret)
		return pzpy_raise(ret, &fail);
	return Py_BuildValue("(iii)", mode, first, node);
}

PyMethodDef pzpy_system_methods[] = {
	{ "mem_available", core_mem_available, METH_NOARGS, mem_available__doc__ },
	{ "cache_methods", core_cache_methods, METH_NOARGS, cache_methods__doc__ },
	{ "counter_names", core_counter_names, METH_NOARGS, counter_names__doc__ },
	PZPY_KW_METHOD("numa_bind", core_numa_bind, numa_bind__doc__),
	PZPY_KW_METHOD("numa_policy", core_numa_policy, numa_policy__doc__),
	{ NULL, NULL, 0, NULL }
};
