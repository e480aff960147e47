package analysis_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/boundtest"
)

// TestBoundIndexCacheFIFO (issue 24 item 12): every entry of the index
// cache replaced by a FIFO nobody writes: the next analyze neither waits
// on them nor reads them, and prints the model the cache gave.
func TestBoundIndexCacheFIFO(t *testing.T) {
	core, _ := filepath.Abs("../testdata/native/cores/uncaught_throw.core.gz")
	exe, _ := filepath.Abs("../testdata/native/bin/uncaught_throw")
	dir := filepath.Join(t.TempDir(), "index")
	analyze := func() boundtest.Result {
		t.Helper()
		r := boundtest.Run(t, boundtest.Cmd{Args: []string{"analyze", "--json", "--offline", "--index-cache", dir, "--exe", exe, core},
			Env: []string{"XDG_CACHE_HOME=" + t.TempDir()}, Limits: boundtest.Limits{Wall: 60 * time.Second}})
		if r.Killed != "" || r.Exit != 0 {
			t.Fatalf("%v\n%s", r, r.Stderr)
		}
		return r
	}
	first := analyze()
	entries, _ := filepath.Glob(filepath.Join(dir, "*.idx"))
	if len(entries) == 0 {
		t.Fatalf("no cache entries in %s", dir)
	}
	for _, e := range entries {
		if err := os.Remove(e); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(e, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if second := analyze(); second.Stdout != first.Stdout || second.Wall > 20*time.Second {
		t.Errorf("with FIFOs planted as the %d cache entries: same model within 20 s wanted; %v", len(entries), second)
	}
}
