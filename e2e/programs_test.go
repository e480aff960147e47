package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/faultline-dev/faultline/gitsrc/gitsrctest"
)

var (
	buildMu sync.Mutex
	built   = map[string]string{}
)

// program compiles testdata/SRC with gcc and FLAGS once per test run and
// returns the executable's path (under the run's scratch directory).
func program(t *testing.T, src string, flags ...string) string {
	t.Helper()
	key := src + " " + strings.Join(flags, " ")
	buildMu.Lock()
	defer buildMu.Unlock()
	if exe, ok := built[key]; ok {
		return exe
	}
	dir, err := os.MkdirTemp(scratch, "bin-")
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, strings.TrimSuffix(src, filepath.Ext(src)))
	abs, _ := filepath.Abs(filepath.Join("testdata", src))
	args := append([]string{"-g", "-O0", "-o", exe, abs}, flags...)
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	built[key] = exe
	return exe
}

// crash runs exe until it crashes and returns its core (the kernel's, or
// gdb's generate-core-file where core_pattern pipes cores elsewhere).
func crash(t *testing.T, exe string) string {
	t.Helper()
	core, err := gitsrctest.DumpCore(t.TempDir(), exe)
	if err != nil {
		t.Fatal(err)
	}
	return core
}

// markerLine is the 1-based line of path (relative to testdata) holding marker.
func markerLine(t *testing.T, path, marker string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	t.Fatalf("%s has no %q", path, marker)
	return 0
}
