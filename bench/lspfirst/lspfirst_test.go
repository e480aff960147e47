package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

var build struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// faultlineBinary builds faultline once for the tests.
func faultlineBinary(t *testing.T) string {
	build.once.Do(func() {
		dir, err := os.MkdirTemp("", "lspfirst-bin-")
		if err != nil {
			build.err = err
			return
		}
		build.path = filepath.Join(dir, "faultline")
		build.out, build.err = exec.Command("go", "build", "-o", build.path, "../..").CombinedOutput()
	})
	if build.err != nil {
		t.Fatalf("go build: %v\n%s", build.err, build.out)
	}
	return build.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if build.path != "" {
		os.RemoveAll(filepath.Dir(build.path))
	}
	os.Exit(code)
}

// TestMeasureRealServer builds faultline, drives `faultline serve` over
// stdio on a corpus core, and checks that every open is timed and that a
// diagnostic came (the server publishes one per source file of the
// crashing stack that is on disk).
func TestMeasureRealServer(t *testing.T) {
	bin := faultlineBinary(t)
	corpus, err := filepath.Abs("../../testdata/native")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAULTLINE_INDEX_CACHE", t.TempDir())
	times, err := measure(bin, corpus, filepath.Join(corpus, "cores", "null_inline.core.gz"),
		filepath.Join(corpus, "bin", "null_inline"), 2, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(times) != 2 {
		t.Fatalf("%d opens timed, want 2", len(times))
	}
	for i, tm := range times {
		if tm.first <= 0 || tm.done <= 0 || tm.first > time.Minute {
			t.Errorf("open %d: first diagnostic %v, reply %v", i+1, tm.first, tm.done)
		}
	}
	if _, err := os.Stat(filepath.Join(corpus, "null_inline.cpp")); err != nil {
		t.Fatalf("the corpus source the diagnostic is on: %v", err)
	}
}

// TestMeasureNoDiagnosticFails: a dump the server cannot open is an
// error, not a time.
func TestMeasureNoDiagnosticFails(t *testing.T) {
	bin := faultlineBinary(t)
	missing := filepath.Join(t.TempDir(), "no-such-core")
	if _, err := measure(bin, t.TempDir(), missing, "", 1, 30*time.Second); err == nil {
		t.Fatal("opening a missing core was timed, want an error")
	}
}
