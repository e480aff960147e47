// pyext: a pybind11 extension of Debian's python3.
//   start_pool        a function-local static Pool whose destructor
//                     releases the GIL: at exit, after Python finalized,
//                     PyEval_SaveThread's fatal error
//   call_without_gil  calls a Python function with the GIL released: the
//                     fault is inside the interpreter
#include <pybind11/pybind11.h>
#include <thread>
#include <vector>
namespace py = pybind11;

struct Pool {
	std::vector<std::thread> workers;
	~Pool() {
		py::gil_scoped_release release;
		for (auto &w : workers) w.join();
	}
};

__attribute__((noinline)) void start_pool() {
	static Pool pool;
}

__attribute__((noinline)) py::object call_without_gil(py::object f) {
	PyObject *r;
	{
		py::gil_scoped_release release;
		r = PyObject_CallNoArgs(f.ptr());
	}
	return py::reinterpret_steal<py::object>(r);
}

PYBIND11_MODULE(pyext, m) {
	m.def("start_pool", &start_pool);
	m.def("call_without_gil", &call_without_gil);
}
