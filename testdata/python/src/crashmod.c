/* crashmod: a C extension that crashes on request, for faultline's Python
 * tests. call(fn) calls back into Python, so a crash in segv() reached
 * through it has Python frames on both sides of native ones. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

struct sample {
	long id;
	double *values;
};

/* Not static and not inlined: the frame shows up by name. */
__attribute__((noinline)) double read_sample(const struct sample *s, long i)
{
	return s->values[i]; /* s->values is NULL */
}

__attribute__((noinline)) static double sum_samples(const struct sample *s, long n)
{
	double total = 0;
	for (long i = 0; i < n; i++)
		total += read_sample(s, i);
	return total;
}

static PyObject *crashmod_segv(PyObject *self, PyObject *args)
{
	long n = 1;
	if (!PyArg_ParseTuple(args, "|l", &n))
		return NULL;
	struct sample s = {.id = n, .values = NULL};
	return PyFloat_FromDouble(sum_samples(&s, n));
}

static PyObject *crashmod_abort(PyObject *self, PyObject *args)
{
	abort();
}

static PyObject *crashmod_call(PyObject *self, PyObject *args)
{
	PyObject *fn;
	if (!PyArg_ParseTuple(args, "O", &fn))
		return NULL;
	return PyObject_CallNoArgs(fn);
}

static PyMethodDef methods[] = {
	{"segv", crashmod_segv, METH_VARARGS, "Read through a NULL array (SIGSEGV)."},
	{"abort", crashmod_abort, METH_NOARGS, "abort() (SIGABRT)."},
	{"call", crashmod_call, METH_VARARGS, "Call fn() from C."},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "crashmod", NULL, -1, methods};

PyMODINIT_FUNC PyInit_crashmod(void) { return PyModule_Create(&module); }
