// Package crashbuild compiles a small C program at test time and crashes it
// into a core, so tests can rely on the program's DW_AT_comp_dir and source
// layout (the checked-in corpus was built in another checkout).
package crashbuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
	Source string // Dir/src/crash.c
	Exe    string // Dir/bin/crash
	Core   string
}

// Build writes CrashSource to dir/src/crash.c, compiles it from dir with
// gcc -g -O0 (so DW_AT_comp_dir is dir and the file name src/crash.c) and
// crashes it: the kernel's core when core_pattern writes one into the cwd,
// else gdb's generate-core-file.
func Build(t testing.TB, dir string) Program {
	t.Helper()
	for _, tool := range []string{"gcc", "gdb"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed (apt-get install %s)", tool, tool)
		}
	}
	p := Program{Dir: dir, Source: filepath.Join(dir, "src", "crash.c"), Exe: filepath.Join(dir, "bin", "crash")}
	for _, d := range []string{"src", "bin"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(p.Source, []byte(CrashSource), 0o644); err != nil {
		t.Fatal(err)
	}
	cc := exec.Command("gcc", "-g", "-O0", "-o", "bin/crash", "src/crash.c")
	cc.Dir = dir
	if out, err := cc.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	run := exec.Command("sh", "-c", "ulimit -c unlimited; exec ./bin/crash")
	run.Dir = dir
	_ = run.Run()
	for _, name := range []string{"core", "core." + strconv.Itoa(run.ProcessState.Pid())} {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.Mode().IsRegular() {
			p.Core = filepath.Join(dir, name)
			return p
		}
	}
	p.Core = filepath.Join(dir, "core.gdb")
	if out, err := exec.Command("gdb", "-batch", "-nx", "-ex", "run", "-ex", "generate-core-file "+p.Core, p.Exe).CombinedOutput(); err != nil {
		t.Fatalf("no core: %v\n%s", err, out)
	}
	return p
}
