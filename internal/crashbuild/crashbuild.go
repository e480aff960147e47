// Package crashbuild compiles a small C program at test time and crashes it
// into a core, so tests can rely on the program's DW_AT_comp_dir and source
// layout (the checked-in corpus was built in another checkout).
package crashbuild

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// CrashSource is a program that dereferences NULL in crash_here (line 4 of
// src/crash.c, inside lookup's argument p) called from main.
const CrashSource = `struct item { int id; int weight; };

static int __attribute__((noinline)) crash_here(struct item *p, int scale) {
  return p->weight * scale;
}

int main(void) {
  struct item *none = 0;
  return crash_here(none, 3);
}
`

// CrashLine is the line of CrashSource that faults.
const CrashLine = 4

// Program is a built and crashed program.
type Program struct {
	Dir    string // the compilation directory (DW_AT_comp_dir)
	Source string // Dir/src/crash.c (Build)
	Exe    string // Dir/bin/crash (Build)
	Core   string
}

// Build writes CrashSource to dir/src/crash.c, compiles it from dir with
// gcc -g -O0 (so DW_AT_comp_dir is dir and the file name src/crash.c) and
// crashes it: the kernel's core when core_pattern writes one into the cwd,
// else gdb's generate-core-file.
func Build(t testing.TB, dir string) Program {
	t.Helper()
	return Crash(t, dir, "src/crash.c", CrashSource, "gcc", "-g", "-O0")
}

// Crash writes source to dir/file (file is relative, e.g. "src/worker.cpp"),
// compiles it from dir with the command cc (e.g. "g++", "-g", "-O2",
// "-pthread") into dir/bin/NAME, NAME being file's base name without its
// extension, and crashes it as Build does.
func Crash(t testing.TB, dir, file, source string, cc ...string) Program {
	t.Helper()
	for _, tool := range []string{cc[0], "gdb"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed (apt-get install %s)", tool, tool)
		}
	}
	name := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	p := Program{Dir: dir, Source: filepath.Join(dir, file), Exe: filepath.Join(dir, "bin", name)}
	for _, d := range []string{filepath.Dir(p.Source), filepath.Join(dir, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(p.Source, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command(cc[0], append(cc[1:], "-o", "bin/"+name, file)...)
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cc[0], err, out)
	}
	p.Core = CrashCommand(t, dir, nil, "./bin/"+name)
	return p
}

// CrashCommand runs argv in dir (its standard output to stdout, when not
// nil) with core dumps on, and returns the core it crashed into: the
// kernel's when core_pattern writes one into the cwd, else one gdb's
// generate-core-file writes at the crash (a second run).
func CrashCommand(t testing.TB, dir string, stdout io.Writer, argv ...string) string {
	t.Helper()
	run := exec.Command("sh", append([]string{"-c", `ulimit -c unlimited; exec "$@"`, "sh"}, argv...)...)
	run.Dir, run.Stdout = dir, stdout
	_ = run.Run()
	for _, core := range []string{"core", "core." + strconv.Itoa(run.ProcessState.Pid())} {
		if st, err := os.Stat(filepath.Join(dir, core)); err == nil && st.Mode().IsRegular() {
			return filepath.Join(dir, core)
		}
	}
	core := filepath.Join(dir, "core.gdb")
	gdb := exec.Command("gdb", append([]string{"-batch", "-nx", "-ex", "run", "-ex", "generate-core-file " + core, "--args"}, argv...)...)
	gdb.Dir = dir
	if out, err := gdb.CombinedOutput(); err != nil {
		t.Fatalf("no core: %v\n%s", err, out)
	}
	return core
}

// WorkerSource is a C++ program whose worker thread reads through a NULL
// element inside two inlined functions (weight_of in total, total in
// worker) when built with -O2: the inlined frame of total has locals gdb
// lists as <optimized out> from its abstract instance only (i and w of the
// loop's block).
const WorkerSource = `#include <thread>
#include <vector>
#include <cstdio>

struct Item { int id; int weight; };

static inline int weight_of(const Item *it) {
  return it->weight;
}

static inline int total(const std::vector<const Item *> &items, int limit) {
  int sum = 0;
  for (int i = 0; i < limit; i++) {
    int w = weight_of(items[i]);
    sum += w;
  }
  return sum;
}

static void worker(const std::vector<const Item *> *items, int *out) {
  *out = total(*items, (int)items->size());
}

int main() {
  Item a{1, 2}, b{2, 3};
  std::vector<const Item *> items{&a, &b, nullptr};
  int out = 0;
  std::thread t(worker, &items, &out);
  t.join();
  std::printf("%d\n", out);
}
`

// BuildWorker builds WorkerSource with g++ -g -O2 -pthread in dir (as
// src/worker.cpp, bin/worker) and crashes it.
func BuildWorker(t testing.TB, dir string) Program {
	t.Helper()
	return Crash(t, dir, "src/worker.cpp", WorkerSource, "g++", "-g", "-O2", "-pthread")
}
