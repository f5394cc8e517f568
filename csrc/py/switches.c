/*
 * switches.c - the test switches (csrc/switches.h) as Python sees them:
 * BUILD["test_switches"], switches() (what results record), and in a test
 * build _read_switches(). A test build reads them here, at import.
 */
#include "pzpy.h"
#include "switches.h"

PyDoc_STRVAR(switches__doc__,
	     "switches()\n--\n\n"
	     "The test switches in effect, {name: value}: always empty in a release build,\n"
	     "which has none (BUILD[\"test_switches\"] says which build this is).");

static PyObject *core_switches(PyObject *self, PyObject *unused)
{
	PyObject *d = PyDict_New();
	unsigned i;

	for (i = 0; d && i < PZ_SW_COUNT; i++) {
		const char *value = pz_switch_value(i);
		PyObject *v;

		if (!value)
			continue;
		v = PyUnicode_DecodeFSDefault(value);
		if (!v || PyDict_SetItemString(d, pz_switch_name(i), v) < 0)
			Py_CLEAR(d);
		Py_XDECREF(v);
	}
	return d;
}

static PyMethodDef switch_methods[] = {
	{ "switches", core_switches, METH_NOARGS, switches__doc__ },
	{ NULL, NULL, 0, NULL },
};

#ifdef PZ_TEST_SWITCHES
/* With the GIL held: no Python thread is writing os.environ meanwhile. */
static int load(void)
{
	if (pz_switches_load() < 0) {
		PyErr_SetString(PyExc_ValueError,
				"a PAGEZERO_* test switch is over 255 bytes long");
		return -1;
	}
	return 0;
}

PyDoc_STRVAR(read_switches__doc__,
	     "_read_switches()\n--\n\n"
	     "Read the test switches from the environment again (they are read once, at\n"
	     "import): for a test that sets one in this process. Call it while nothing measures.");

static PyObject *core_read_switches(PyObject *self, PyObject *unused)
{
	if (load() < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyMethodDef test_methods[] = {
	{ "_read_switches", core_read_switches, METH_NOARGS, read_switches__doc__ },
	{ NULL, NULL, 0, NULL },
};
#endif

/* BUILD["test_switches"]: module.c made BUILD, this says which build it is. */
static int say_build(PyObject *m, PyObject *test_build)
{
	PyObject *build = PyObject_GetAttrString(m, "BUILD");
	int ret = build ? PyDict_SetItemString(build, "test_switches", test_build) : -1;

	Py_XDECREF(build);
	return ret;
}

int pzpy_init_switches(PyObject *m)
{
#ifdef PZ_TEST_SWITCHES
	if (say_build(m, Py_True) < 0 || load() < 0 || pzpy_add_methods(m, test_methods) < 0)
		return -1;
#else
	if (say_build(m, Py_False) < 0)
		return -1;
#endif
	return pzpy_add_methods(m, switch_methods);
}
