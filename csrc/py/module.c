/*
 * module.c - PyInit__core: the module, its exceptions, its build facts, and
 * each concern's functions (kernels.c, mem.c, fault.c, policy.c, batch.c,
 * system.c, region.c), added by their own init functions.
 *
 * The C core (the .c files in csrc/) knows nothing of Python; csrc/py/ is the only code
 * that includes Python.h.
 */
#include <string.h>

#include "pzpy.h"

#ifndef PZ_BUILD_FLAGS
#define PZ_BUILD_FLAGS "unknown" /* built without setup.py */
#endif

#if defined(__clang__)
#define PZ_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define PZ_COMPILER "gcc " __VERSION__
#else
#define PZ_COMPILER "unknown compiler"
#endif

static struct PyModuleDef core_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "pagezero._core",
	.m_doc = "pagezero's C core: kernels, clocks, regions and timed loops.",
	.m_size = -1,
};

static int add_exception(PyObject *m, PyObject **slot, const char *name, PyObject *base,
			 const char *doc)
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

static int add_exceptions(PyObject *m)
{
	PyObject *mapping_bases;
	int ret;

	if (add_exception(m, &pzpy_PagezeroError, "pagezero.PagezeroError", NULL,
			  "Base class of pagezero's own errors.") < 0 ||
	    add_exception(m, &pzpy_UnavailableError, "pagezero.UnavailableError",
			  pzpy_PagezeroError,
			  "This machine cannot run what was asked: a kernel its CPU lacks "
			  "the instructions for, or a clock it has no counter for.") < 0)
		return -1;
	mapping_bases = PyTuple_Pack(2, pzpy_PagezeroError, PyExc_OSError);
	if (!mapping_bases)
		return -1;
	ret = add_exception(m, &pzpy_MappingError, "pagezero.MappingError", mapping_bases,
			    "A region could not be mapped (too large, or too few hugepages); "
			    "an OSError whose errno says why.");
	Py_DECREF(mapping_bases);
	return ret;
}

/* BUILD: {"compiler": "gcc 12.2.0", "flags": "-O3 ..."}, recorded with results. */
static int add_build(PyObject *m)
{
	PyObject *build =
		Py_BuildValue("{s:s,s:s}", "compiler", PZ_COMPILER, "flags", PZ_BUILD_FLAGS);

	if (!build)
		return -1;
	if (PyModule_AddObject(m, "BUILD", build) < 0) {
		Py_DECREF(build);
		return -1;
	}
	return 0;
}

PyMODINIT_FUNC PyInit__core(void)
{
	PyObject *m = PyModule_Create(&core_module);

	if (!m)
		return NULL;
	/* The switches first: nothing may read one before they are loaded. */
	if (add_exceptions(m) < 0 || add_build(m) < 0 || pzpy_init_switches(m) < 0 ||
	    pzpy_init_kernels(m) < 0 || pzpy_init_mem(m) < 0 || pzpy_init_fault(m) < 0 ||
	    pzpy_init_policy(m) < 0 || pzpy_init_batch(m) < 0 || pzpy_init_system(m) < 0 ||
	    pzpy_init_region(m) < 0)
		goto fail;
	return m;
fail:
	Py_DECREF(m);
	return NULL;
}
