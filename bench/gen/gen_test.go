package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis/logs"
)

func TestGenerateIsDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	if err := generate(a, 40, 2); err != nil {
		t.Fatal(err)
	}
	if err := generate(b, 40, 2); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(a, "src", "*"))
	if err != nil || len(files) != 43 { // 40 units, park.cpp, bigjob.cpp, big.h
		t.Fatalf("%d files (%v), want 43", len(files), err)
	}
	for _, f := range append(files, filepath.Join(a, "Makefile")) {
		rel, _ := filepath.Rel(a, f)
		x, _ := os.ReadFile(f)
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs (%v)", rel, err)
		}
	}
}

// TestCorpusCrashesAsDesigned builds a small corpus (33 units, no record
// types) with gcc, runs `bigjob` with 4 workers until it dumps core, and
// checks gdb's backtraces: 6 threads, the crashing thread in store_slot on the
// "faults" line with commit, validate and crash_entry above it, and every
// worker parked in its own group's stage chain.
func TestCorpusCrashesAsDesigned(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a C++ corpus")
	}
	for _, tool := range []string{"g++", "make", "gdb"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	if err := generate(dir, crashUnit+1, 0); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("make", "-C", dir, "-j2", "-s").CombinedOutput(); err != nil {
		t.Fatalf("make: %v\n%s", err, out)
	}
	run := exec.Command("sh", "-c", "ulimit -c unlimited && exec ./bigjob 0.001 4")
	run.Dir = dir
	if err := run.Run(); err == nil {
		t.Fatal("bigjob exited cleanly; want SIGSEGV")
	}
	core := filepath.Join(dir, "core")
	if _, err := os.Stat(core); err != nil {
		t.Skipf("no core written (core_pattern %q?): %v", readPattern(), err)
	}
	out, err := exec.Command("gdb", "-batch", "-nx", "-ex", "set pagination off", "-ex", "thread apply all bt",
		filepath.Join(dir, "bigjob"), core).CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	gl, err := logs.ParseGDB(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if gl.Signal != "SIGSEGV" || len(gl.Threads) != 6 {
		t.Fatalf("signal %q, %d threads; want SIGSEGV, 6\n%s", gl.Signal, len(gl.Threads), out)
	}
	faultLine := lineOf(t, filepath.Join(dir, "src", "unit_032.cpp"), "// faults")
	workers := 0
	for _, th := range gl.Threads {
		var names []string
		for _, f := range th.Frames {
			names = append(names, f.Function)
		}
		chain := strings.Join(names, " ")
		switch {
		case th.Num == 1:
			want := []string{"big::store_slot", "big::commit", "big::validate", "big::crash_entry", "big_crash_thread"}
			if len(names) < len(want) || strings.Join(names[:len(want)], " ") != strings.Join(want, " ") {
				t.Errorf("crashing thread: %s, want %s first", chain, want)
			}
			if f := th.Frames[0]; f.File != "src/unit_032.cpp" || f.Line != faultLine {
				t.Errorf("frame 0 at %s:%d, want src/unit_032.cpp:%d", f.File, f.Line, faultLine)
			}
		case strings.Contains(chain, "big_thread_main"):
			workers++
			if !strings.Contains(chain, "___pthread_cond_wait big::stage_") {
				t.Errorf("worker LWP %d not parked in a stage: %s", th.LWP, chain)
			}
		}
	}
	if workers != 4 {
		t.Errorf("%d parked workers, want 4", workers)
	}
}

func readPattern() string {
	b, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
	return strings.TrimSpace(string(b))
}

// lineOf returns the 1-based line of path that contains marker.
func lineOf(t *testing.T, path, marker string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if strings.Contains(sc.Text(), marker) {
			return n
		}
	}
	t.Fatalf("%s: no %q", path, marker)
	return 0
}
