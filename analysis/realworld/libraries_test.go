package realworld_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/model"
)

// TestFaultInsideLibrary: a program passes a bad pointer to a library it
// did not build — zlib's uncompress(), OpenBLAS's cblas_dgemm, HDF5's
// H5Dwrite, protobuf's ParseFromArray — and the fault is inside the
// library. The culprit is the program's calling frame, and the summary
// says which library the fault is inside; frames equal gdb's.
func TestFaultInsideLibrary(t *testing.T) {
	libs := cachedBuild(t, "libs", []string{"libs.c"}, "gcc", "-O1", "-g", "-I/usr/include/hdf5/serial", "-o", "$OUT", "libs.c",
		"-lz", "-lopenblas", "-L/usr/lib/x86_64-linux-gnu/hdf5/serial", "-lhdf5")
	proto := cachedBuild(t, "proto", []string{"proto.cpp"}, "g++", "-O1", "-g", "-o", "$OUT", "proto.cpp", "-lprotobuf")
	for _, tc := range []struct {
		name, bin, mode, kind, culprit, inside string
	}{
		{"zlib", libs, "zlib", model.KindWildPointer, "load_blob", "(inside libz.so"},
		{"openblas", libs, "blas", model.KindNullDeref, "project", "(inside libopenblas"},
		{"hdf5", libs, "hdf5", model.KindWildPointer, "save_grid", "(inside libhdf5_serial.so"},
		{"protobuf", proto, "", model.KindWildPointer, "read_stamp", "(inside libprotobuf.so"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			argv := []string{tc.bin}
			if tc.mode != "" {
				argv = append(argv, tc.mode)
			}
			core, _ := crashlab.Crash(t, t.TempDir(), "export OPENBLAS_NUM_THREADS=1", argv...)
			c, err := analysis.Open(core, analysis.Options{Exe: tc.bin})
			if err != nil {
				t.Fatal(err)
			}
			checkKindCase(t, c, kindCase{kind: tc.kind, culprit: tc.culprit, summary: []string{tc.culprit + " (", tc.inside},
				evidence: "a library the program did not build"})
			if d := crashlab.CompareWithGDB(crashlab.GDB(t, tc.bin, core), c); d != "" {
				t.Errorf("frames differ from gdb:\n%s", d)
			}
		})
	}
}

// TestPythonExtension: a pybind11 extension of Debian's python3 (3.11).
// A static object whose destructor releases the GIL after Python
// finalized gets CPython's fatal error, its message read from the
// constants set up for _Py_FatalErrorFunc, blamed on the extension's
// destructor at exit; a call into Python with the GIL released faults
// inside the interpreter, blamed on the extension's function. The native
// frames equal gdb's.
func TestPythonExtension(t *testing.T) {
	python := debianProgram(t, "/usr/bin/python3")
	suffix, err := exec.Command("/usr/bin/python3-config", "--extension-suffix").Output()
	if err != nil {
		t.Fatalf("python3-config: %v", err)
	}
	ext := crashlab.BuildCached(t, crashlab.Recipe{Name: "pyext" + strings.TrimSpace(string(suffix)), Dir: programs, Sources: []string{"pyext.cpp"},
		Command: []string{"g++", "-O1", "-g", "-shared", "-fPIC", "-I/usr/include/python3.11", "-o", "$OUT", "pyext.cpp"}})
	for _, tc := range []struct {
		name, call string
		want       kindCase
		context    string
	}{
		{"fatal-error-at-exit", "start_pool()", kindCase{kind: model.KindAssertion, culprit: "Pool::~Pool", summary: []string{
			"Fatal Python error in Pool::~Pool (pyext.cpp:", "at exit: PyEval_SaveThread: the function must be called with the GIL held", "after the interpreter was finalized"}},
			model.ContextExitTime},
		{"call-without-gil", "call_without_gil(lambda: 1)", kindCase{kind: model.KindNullDeref, culprit: "call_without_gil", summary: []string{
			"NULL pointer dereference in call_without_gil (pyext.cpp:", "(inside python3.11: "}}, model.ContextRuntime},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			script := fmt.Sprintf("import sys; sys.path.insert(0, %q); import pyext; pyext.%s", filepath.Dir(ext), tc.call)
			core, out := crashlab.Crash(t, t.TempDir(), "", python, "-c", script)
			c := openWithin(t, core, analysis.Options{Exe: python, Offline: true}, 2*time.Minute)
			checkKindCase(t, c, tc.want)
			if c.Classification.Context != tc.context {
				t.Errorf("context %s, want %s", c.Classification.Context, tc.context)
			}
			if m := c.Classification.Message; m != "" && !strings.Contains(out, m) {
				t.Errorf("message %q is not what CPython printed:\n%s", m, out)
			}
			// gdb prints the parameter lists of pybind11's inlined template
			// frames, faultline their DWARF names (issue 23 item 7): the
			// names are compared without them.
			compareThreads(t, crashlab.GDB(t, python, core), nativeOnly(c), func(want []string, th model.Thread) ([]string, []string) {
				return withoutParams(want), withoutParams(crashlab.ModelLines(th))
			})
		})
	}
}

// withoutParams drops the parameter list gdb prints after a C++ frame's
// name ("f<int>(int) && at x.h:3" is "f<int> at x.h:3").
func withoutParams(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		name, at, _ := strings.Cut(l, " at ")
		trimmed := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, " &&"), " &"), " const")
		if strings.HasSuffix(trimmed, ")") && !strings.HasSuffix(trimmed, "operator()") {
			depth := 0
			for j := len(trimmed) - 1; j >= 0; j-- {
				if trimmed[j] == ')' {
					depth++
				} else if trimmed[j] == '(' {
					if depth--; depth == 0 {
						name = trimmed[:j]
						break
					}
				}
			}
		}
		out[i] = name
		if at != "" {
			out[i] += " at " + at
		}
	}
	return out
}

// TestTorchFromPython: Debian's python3-torch sums a tensor over memory
// that is not mapped. Every native frame is a library's (libtorch_cpu,
// libtorch_python, numpy, the interpreter), so the culprit is the
// program's own Python function, and the summary names the libtorch
// function the fault is inside. (Not compared with gdb: its frames in
// libtorch are symbol-table names, and gdb needs minutes to read the
// libraries' tables.)
func TestTorchFromPython(t *testing.T) {
	python := debianProgram(t, "/usr/bin/python3")
	core, _ := crashlab.Crash(t, t.TempDir(), "export OMP_NUM_THREADS=1", python, filepath.Join(programs, "torch_crash.py"))
	c := openWithin(t, core, analysis.Options{Exe: python, Offline: true}, 2*time.Minute)
	checkKindCase(t, c, kindCase{kind: model.KindWildPointer, culprit: "load_weights",
		summary: []string{"Wild pointer: load_weights (torch_crash.py:", "(inside libtorch_cpu.so"}})
}
