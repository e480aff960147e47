package logs

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/boundtest"
)

// ROCm logs whose code object URI names a hostile file (issue 24 items 4,
// 5), through the real `faultline analyze`.

// rocmLogNaming writes the debug agent's log with its code object URI
// replaced by uri.
func rocmLogNaming(t *testing.T, uri string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/gpu/rocm_debug_agent.txt")
	if err != nil {
		t.Fatal(err)
	}
	log := strings.ReplaceAll(string(b), "file:///work/app/libkernels.so#offset=16384&size=8808", uri)
	path := filepath.Join(t.TempDir(), "job.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestBoundROCmCodeObjectURI(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.so")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(dir, "small.so")
	if err := os.WriteFile(small, make([]byte, 10000), 0o644); err != nil {
		t.Fatal(err)
	}
	bomb := filepath.Join(dir, "bomb.so")
	if err := os.WriteFile(bomb, boundtest.ZlibCCOB(1<<30, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ uri, problem string }{
		{"file:///dev/zero#offset=0&size=1073741824", "/dev/zero is a character device, not a regular file"},
		{"file://" + fifo + "#offset=0&size=1073741824", "is a FIFO, not a regular file"},
		{"file:///dev/stdin#offset=0&size=4096", "not a regular file"},
		{"file://" + small + "#offset=0&size=1073741824", "not an AMD GPU code object"}, // read: the file's 10,000 bytes
		{"file://" + small + "#offset=20000&size=10", "outside the file"},
		{"file://" + bomb + "#offset=0&size=4194336", "decompression budget"},
	} {
		r := boundtest.Run(t, boundtest.Cmd{Args: []string{"analyze", "--json", rocmLogNaming(t, tc.uri)}, StdinOpen: true,
			Limits: boundtest.Limits{Wall: 30 * time.Second, RSSKiB: 2 << 20}})
		c := boundtest.Crash(t, r)
		if r.Killed != "" || r.Exit != 0 || !boundtest.HasProblem(c, tc.problem) || r.MaxRSSKiB > 96<<10 || r.CPUTime > 2*time.Second {
			t.Errorf("%s: bound: a problem naming %q, maxrss <= 96 MiB, cpu <= 2 s; got %v, problems %v", tc.uri, tc.problem, r, c.Problems)
		}
	}
}
