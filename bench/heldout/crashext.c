/* crashext: a CPython extension whose function faults on a NULL pointer.
 * torchcrash.py calls it from inside a torch op (Tensor.apply_ calls a
 * Python callable per element from libtorch_python's C++), so the
 * crashing stack runs C extension -> CPython -> libtorch_python -> CPython. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

struct cell { long value; struct cell *next; };

__attribute__((noinline)) static long cell_sum(const struct cell *c, long depth)
{
	long s = 0;
	for (long i = 0; i < depth; i++, c = c->next)
		s += c->value; /* c is NULL after the first cell */
	return s;
}

static PyObject *crash_scale(PyObject *self, PyObject *arg)
{
	struct cell first = { PyFloat_AsDouble(arg) > -1, NULL };
	long s = cell_sum(&first, 2);
	return PyFloat_FromDouble((double)s);
}

static PyMethodDef methods[] = {
	{ "scale", crash_scale, METH_O, "faults on a NULL pointer" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = { PyModuleDef_HEAD_INIT, "crashext", NULL, -1, methods };

PyMODINIT_FUNC PyInit_crashext(void) { return PyModule_Create(&module); }
