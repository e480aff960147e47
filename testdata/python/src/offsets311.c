/* Prints offsetof() of the CPython 3.11 and 3.12 fields faultline reads
 * (analysis/python layout311, layout312); analysis/python/layout_test.go
 * compiles it against the installed headers and compares. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_runtime.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_frame.h>
#include <stddef.h>
#include <stdio.h>
#define P(name, expr) printf("%-40s %zu\n", name, (size_t)(expr))
int main(void) {
  P("runtime.interpreters.head", offsetof(_PyRuntimeState, interpreters.head));
  P("interp.next", offsetof(PyInterpreterState, next));
  P("interp.threads.head", offsetof(PyInterpreterState, threads.head));
  P("tstate.next", offsetof(PyThreadState, next));
  P("tstate.interp", offsetof(PyThreadState, interp));
  P("tstate.cframe", offsetof(PyThreadState, cframe));
  P("tstate.thread_id", offsetof(PyThreadState, thread_id));
  P("tstate.native_thread_id", offsetof(PyThreadState, native_thread_id));
  P("cframe.current_frame", offsetof(_PyCFrame, current_frame));
  P("cframe.previous", offsetof(_PyCFrame, previous));
  P("frame.f_code", offsetof(_PyInterpreterFrame, f_code));
  P("frame.previous", offsetof(_PyInterpreterFrame, previous));
  P("frame.prev_instr", offsetof(_PyInterpreterFrame, prev_instr));
  P("frame.owner", offsetof(_PyInterpreterFrame, owner));
#if PY_VERSION_HEX < 0x030C0000
  P("frame.is_entry", offsetof(_PyInterpreterFrame, is_entry));
#else
  P("frame.is_entry", 0); /* 3.12 marks entries with a shim frame */
  P("FRAME_OWNED_BY_CSTACK", FRAME_OWNED_BY_CSTACK);
#endif
  P("code.co_filename", offsetof(PyCodeObject, co_filename));
  P("code.co_name", offsetof(PyCodeObject, co_name));
  P("code.co_qualname", offsetof(PyCodeObject, co_qualname));
  P("code.co_linetable", offsetof(PyCodeObject, co_linetable));
  P("code.co_firstlineno", offsetof(PyCodeObject, co_firstlineno));
  P("code.co_code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
  P("bytes.ob_size", offsetof(PyBytesObject, ob_base.ob_size));
  P("bytes.ob_sval", offsetof(PyBytesObject, ob_sval));
  P("unicode.length", offsetof(PyASCIIObject, length));
  P("unicode.state", offsetof(PyASCIIObject, state));
  P("sizeof PyASCIIObject", sizeof(PyASCIIObject));
  P("sizeof PyCompactUnicodeObject", sizeof(PyCompactUnicodeObject));
  P("sizeof _PyRuntimeState", sizeof(_PyRuntimeState));
  P("FRAME_OWNED_BY_GENERATOR", FRAME_OWNED_BY_GENERATOR);
  return 0;
}
