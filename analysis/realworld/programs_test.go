package realworld_test

import (
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
)

// programs are the test programs' sources (testdata/programs).
var programs, _ = filepath.Abs("testdata/programs")

// built caches binaries built once per test binary run, by key.
var built = struct {
	sync.Mutex
	dir  string
	bins map[string]string
}{bins: map[string]string{}}

// buildOnce compiles testdata/programs sources with compiler and flags
// once per run and returns the binary.
func buildOnce(t *testing.T, key, compiler string, sources []string, flags ...string) string {
	t.Helper()
	if _, err := exec.LookPath(compiler); err != nil {
		t.Fatalf("%s is required (the README's test command installs it): %v", compiler, err)
	}
	built.Lock()
	defer built.Unlock()
	if b, ok := built.bins[key]; ok {
		return b
	}
	if built.dir == "" {
		built.dir = mustTempDir(t)
	}
	var srcs []string
	for _, s := range sources {
		srcs = append(srcs, filepath.Join(programs, s))
	}
	b := crashlab.Build(t, built.dir, key, compiler, srcs, flags...)
	built.bins[key] = b
	return b
}

// cachedBuild builds testdata/programs sources with the command (its
// "$OUT" the output, sources named as they are in testdata/programs) once
// per content, kept in the test cache between runs
// (crashlab.BuildCached).
func cachedBuild(t *testing.T, name string, sources []string, command ...string) string {
	t.Helper()
	return crashlab.BuildCached(t, crashlab.Recipe{Name: name, Command: command, Sources: sources, Dir: programs})
}
