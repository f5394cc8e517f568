/*
 * region.c - pagezero._core.Region: an anonymous mapping (4KB pages, THP or
 * hugetlb) that exposes the buffer protocol and refuses to unmap while
 * views of it exist.
 */
#include <errno.h>

#include "pzpy.h"

typedef struct {
	PyObject_HEAD struct pz_region r;
	Py_ssize_t exports; /* live buffer views: unmapping under them would be a use-after-free */
} RegionObject;

static PyTypeObject RegionType;

PyObject *pzpy_region_adopt(struct pz_region *r)
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
	Py_ssize_t size;
	unsigned int shift = PZ_PAGE_SHIFT_4KB;
	int thp = PZ_THP_SYSTEM, populate = 1, guard = 0, ret;
	RegionObject *self;
	static char *kwlist[] = { "size", "page_shift", "thp", "populate", "guard", NULL };

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "n|O&O&pp:Region", kwlist, &size,
					 pzpy_page_shift, &shift, pzpy_thp, &thp, &populate,
					 &guard))
		return NULL;
	/*
	 * pagezero.region words a bad size or THP choice; pz_region_map refuses
	 * them too, but its -EINVAL for hugetlb pages would read as a pool short.
	 */
	if (size <= 0 || (thp == PZ_THP_ON && shift != PZ_PAGE_SHIFT_4KB))
		return pzpy_raise(-EINVAL, &(struct pzpy_failure){ .doing = "Region" });
	if (guard && shift != PZ_PAGE_SHIFT_4KB) {
		PyErr_SetString(PyExc_ValueError, "guard pages need a 4KB-page region");
		return NULL;
	}
	self = (RegionObject *)type->tp_alloc(type, 0);
	if (!self)
		return NULL;
	Py_BEGIN_ALLOW_THREADS ret =
		pz_region_map(&self->r, (size_t)size, shift, (enum pz_thp)thp, populate, guard);
	Py_END_ALLOW_THREADS if (ret)
	{
		struct pzpy_failure fail = { .doing = "mmap",
					     .bytes = (size_t)size,
					     .shift = shift };

		pzpy_raise(ret, &fail);
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
	if (PyBuffer_FillInfo(view, (PyObject *)self, self->r.addr, (Py_ssize_t)self->r.size, 0,
			      flags) < 0)
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
	{ "close", (PyCFunction)region_close, METH_NOARGS,
	  PyDoc_STR("close()\n--\n\nUnmap the region (refused while memoryviews of it exist).") },
	{ "__enter__", (PyCFunction)region_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)region_exit, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL }
};

static PyGetSetDef region_getset[] = {
	{ "size", (getter)region_get_size, NULL,
	  PyDoc_STR("usable bytes (the request rounded up to the page size)"), NULL },
	{ "page_size", (getter)region_get_page_size, NULL,
	  PyDoc_STR("the page size asked for, in bytes"), NULL },
	{ "address", (getter)region_get_address, NULL,
	  PyDoc_STR("address of the first usable byte (0 once closed)"), NULL },
	{ "closed", (getter)region_get_closed, NULL, PyDoc_STR("True once unmapped"), NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};

PyDoc_STRVAR(Region__doc__,
	     "Region(size, page_shift=12, thp=0, populate=True, guard=False)\n--\n\n"
	     "An anonymous mapping that exposes the buffer protocol. page_shift 12, 21\n"
	     "or 30 selects 4KB pages or 2MB / 1GB hugetlb pages; thp 0 leaves THP to\n"
	     "the system, 1 asks for it, 2 refuses it (4KB only); guard puts a PROT_NONE\n"
	     "page on both sides (4KB only). Unmapped by close(), the with statement,\n"
	     "or garbage collection.");

static PyTypeObject RegionType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pagezero._core.Region",
	.tp_basicsize = sizeof(RegionObject),
	.tp_dealloc = (destructor)region_dealloc,
	.tp_as_buffer = &region_as_buffer,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = Region__doc__,
	.tp_methods = region_methods,
	.tp_getset = region_getset,
	.tp_new = region_new,
};

/* Item @i of smaps_pages' spans: an (address, length) pair or a buffer; -1 with an exception. */
static int span_of(PyObject *item, struct pz_span *s)
{
	Py_ssize_t addr, len;
	Py_buffer view;

	if (PyTuple_Check(item)) {
		if (!PyArg_ParseTuple(item, "nn;a span is (address, length)", &addr, &len))
			return -1;
	} else {
		if (PyObject_GetBuffer(item, &view, PyBUF_SIMPLE) < 0)
			return -1;
		addr = (Py_ssize_t)(uintptr_t)view.buf;
		len = view.len;
		PyBuffer_Release(&view);
	}
	if (len < 0) {
		PyErr_SetString(PyExc_ValueError, "a span's length cannot be negative");
		return -1;
	}
	s->start = (uintptr_t)addr;
	s->end = (uintptr_t)addr + (uintptr_t)len;
	return 0;
}

PyDoc_STRVAR(smaps_pages__doc__,
	     "smaps_pages(spans, smaps='/proc/self/smaps')\n--\n\n"
	     "What the kernel gave the mappings that overlap any of spans (buffers, or\n"
	     "(address, length) pairs), each smaps entry once, whole: a dict of rss,\n"
	     "anon_huge (PMD-mapped THP), hugetlb and kernel_page, in bytes. smaps: a\n"
	     "file in /proc/self/smaps' format to read instead (tests).");

static PyObject *core_smaps_pages(PyObject *self, PyObject *args, PyObject *kwds)
{
	const char *path = "/proc/self/smaps";
	struct pz_smaps_pages pg;
	struct pz_span *s = NULL;
	PyObject *seq, *fast, *result = NULL;
	Py_ssize_t n, i;
	int ret;
	static char *kwlist[] = { "spans", "smaps", NULL };

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|s:smaps_pages", kwlist, &seq, &path))
		return NULL;
	fast = PySequence_Fast(seq, "spans must be a sequence");
	if (!fast)
		return NULL;
	n = PySequence_Fast_GET_SIZE(fast);
	if (n > UINT_MAX) {
		PyErr_SetString(PyExc_ValueError, "too many spans");
		goto out;
	}
	s = PyMem_Calloc(n ? (size_t)n : 1, sizeof(*s));
	if (!s) {
		PyErr_NoMemory();
		goto out;
	}
	for (i = 0; i < n; i++)
		if (span_of(PySequence_Fast_GET_ITEM(fast, i), &s[i]) < 0)
			goto out;
	Py_BEGIN_ALLOW_THREADS ret = pz_smaps_scan_file(path, s, (unsigned)n, &pg);
	Py_END_ALLOW_THREADS if (ret)
	{
		errno = -ret;
		PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
		goto out;
	}
	result = Py_BuildValue("{sKsKsKsK}", "rss", (unsigned long long)pg.rss, "anon_huge",
			       (unsigned long long)pg.anon_huge, "hugetlb",
			       (unsigned long long)pg.hugetlb, "kernel_page",
			       (unsigned long long)pg.kernel_page);
out:
	PyMem_Free(s);
	Py_DECREF(fast);
	return result;
}

PyMethodDef pzpy_region_methods[] = {
	PZPY_KW_METHOD("smaps_pages", core_smaps_pages, smaps_pages__doc__), { NULL, NULL, 0, NULL }
};

int pzpy_init_region(PyObject *m)
{
	if (PyType_Ready(&RegionType) < 0 ||
	    PyModule_AddIntConstant(m, "THP_SYSTEM", PZ_THP_SYSTEM) < 0 ||
	    PyModule_AddIntConstant(m, "THP_ON", PZ_THP_ON) < 0 ||
	    PyModule_AddIntConstant(m, "THP_OFF", PZ_THP_OFF) < 0)
		return -1;
	Py_INCREF(&RegionType);
	if (PyModule_AddObject(m, "Region", (PyObject *)&RegionType) < 0) {
		Py_DECREF(&RegionType);
		return -1;
	}
	return 0;
}
