package e2e

import (
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestAnalyzeCore runs the README's three report forms on a fresh core of
// testdata/trainer.c: the markdown report, the text report and the model.
func TestAnalyzeCore(t *testing.T) {
	exe := program(t, "trainer.c")
	dir := t.TempDir()
	copyFile(t, crash(t, exe), filepath.Join(dir, "core.12345"), false)
	inv := invocation{dir: dir}
	line := fmt.Sprintf("trainer.c:%d", markerLine(t, "trainer.c", "CRASH"))

	r := example(t, "faultline analyze core.12345", inv)
	wantExit(t, r, 0)
	wantContains(t, "markdown report", r.stdout, "# ", "SIGSEGV", "null-deref", "`load_batch`", line, "train_step")
	if r.stderr != "" {
		t.Errorf("stderr of a clean analysis: %s", r.stderr)
	}

	r = example(t, "faultline analyze --format text core.12345", inv)
	wantExit(t, r, 0)
	wantContains(t, "text report", r.stdout, "signal:    SIGSEGV")
	wantMatch(t, "text report", r.stdout, `#0 +0x[0-9a-f]+ in load_batch at \S*`+line, `#1 .* in train_step at \S*trainer\.c:`, `#2 .* in main at \S*trainer\.c:`)

	r = example(t, "faultline analyze --json core.12345", inv)
	wantExit(t, r, 0)
	c := decodeCrash(t, r)
	fr := c.crashed()
	if c.Signal == nil || c.Signal.Name != "SIGSEGV" || len(fr) < 3 ||
		strings.Join(functions(fr[:3]), " ") != "load_batch train_step main" || fr[0].File != "trainer.c" && !strings.HasSuffix(fr[0].File, "/trainer.c") {
		t.Fatalf("model: signal %+v, frames %+v", c.Signal, fr)
	}
	if c.Crash == nil || c.Crash.Kind != "null-deref" {
		t.Errorf("classification %+v", c.Crash)
	}
}

// TestAnalyzeStrippedGzipDebugDir runs the README's --exe/--debug-dir
// example: the program was stripped, its DWARF moved into a debug directory
// under .build-id/, it crashed somewhere else than where it now is, and its
// core is gzip'd. Without --debug-dir the report says what is missing.
func TestAnalyzeStrippedGzipDebugDir(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "build", "trainer")
	copyFile(t, program(t, "trainer.c"), exe, true)
	id := buildID(t, exe)
	dbg := filepath.Join(dir, "dbg", ".build-id", id[:2], id[2:]+".debug")
	os.MkdirAll(filepath.Dir(dbg), 0o755)
	mustRun(t, "objcopy", "--only-keep-debug", exe, dbg)
	mustRun(t, "strip", "--strip-debug", "--strip-unneeded", exe)
	gzipFile(t, crash(t, exe), filepath.Join(dir, "core.gz"))
	// The crashed program now lives elsewhere: the core's path names nothing.
	if err := os.Rename(exe, filepath.Join(dir, "trainer")); err != nil {
		t.Fatal(err)
	}
	inv := invocation{dir: dir}
	r := example(t, "faultline analyze --exe ./trainer --debug-dir ./dbg core.gz", inv)
	wantExit(t, r, 0)
	line := fmt.Sprintf("trainer.c:%d", markerLine(t, "trainer.c", "CRASH"))
	wantContains(t, "report with the debug directory", r.stdout, "`load_batch`", line)

	r = faultline(t, inv, "analyze", "--format", "text", "--offline", "--exe", "./trainer", "core.gz")
	wantExit(t, r, 0)
	if strings.Contains(r.stdout, line) {
		t.Errorf("without --debug-dir the stripped program still has line %s:\n%s", line, r.stdout)
	}
	wantContains(t, "report without the debug directory", r.stdout, "trainer: no debug info", "--debug-dir DIR holding .build-id/"+id[:2]+"/"+id[2:]+".debug")
}

// TestAnalyzeManyCores runs the README's many-cores example: two cores and a
// directory of two more, all the same crash: one group of four, deterministic.
func TestAnalyzeManyCores(t *testing.T) {
	exe := program(t, "trainer.c")
	dir := t.TempDir()
	for _, name := range []string{"core.1", "core.2", "cores/a.core", "cores/b.core"} {
		copyFile(t, crash(t, exe), filepath.Join(dir, name), false)
	}
	os.WriteFile(filepath.Join(dir, "cores", "notes.txt"), []byte("not a dump\n"), 0o644)
	r := example(t, "faultline analyze core.1 core.2 cores/", invocation{dir: dir})
	wantExit(t, r, 0)
	wantContains(t, "report on four cores", r.stdout, "# Crash report: 4 cores", "deterministic", "| 4: ", "load_batch")
	if strings.Contains(r.stdout, "non-deterministic") || strings.Contains(r.stdout, "notes.txt") {
		t.Errorf("four identical crashes are not one deterministic group:\n%s", r.stdout)
	}
}

// TestAnalyzeLog runs the README's log example on what Python's
// faulthandler printed when python3 crashed here (a NULL read via ctypes).
func TestAnalyzeLog(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "job.py")
	os.WriteFile(script, []byte("import ctypes\n\ndef read_header(p):\n    return ctypes.string_at(p)\n\nread_header(0)\n"), 0o644)
	r := command(t, invocation{dir: dir}, "python3", "-X", "faulthandler", script)
	if r.code != 139 || !strings.Contains(r.stderr, "Fatal Python error: Segmentation fault") {
		t.Fatalf("the job did not crash with faulthandler's report:\n%s", r)
	}
	os.WriteFile(filepath.Join(dir, "job.log"), []byte("epoch 1\n"+r.stderr), 0o644)
	r = example(t, "faultline analyze job.log", invocation{dir: dir})
	wantExit(t, r, 0)
	wantContains(t, "report on faulthandler's log", r.stdout, "SIGSEGV", "read_header", "job.py:4")
}

// TestExplainExit runs the README's explain-exit example and its errors.
func TestExplainExit(t *testing.T) {
	r := example(t, "faultline explain-exit 139", invocation{})
	wantExit(t, r, 0)
	wantContains(t, "explanation", r.stdout, "128 + 11", "SIGSEGV")
	r = faultline(t, invocation{}, "explain-exit", "1")
	wantExit(t, r, 0)
	r = faultline(t, invocation{}, "explain-exit", "banana")
	wantExit(t, r, 2)
	wantContains(t, "stderr", r.stderr, "banana")
}

func buildID(t *testing.T, exe string) string {
	t.Helper()
	out := mustRun(t, "readelf", "-n", exe)
	m := regexp.MustCompile(`Build ID: ([0-9a-f]{40})`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("%s has no build-id:\n%s", exe, out)
	}
	return m[1]
}

func mustRun(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func gzipFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
