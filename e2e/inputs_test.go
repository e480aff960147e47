package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnalyzeInputs reads one core every way a user hands it over: from
// standard input (`-`, a pipe and a redirected file, plain and gzip'd) and
// compressed with xz, lz4 (RHEL's systemd-coredump default) and zstd, each
// giving the same crashed frames as the plain file.
func TestAnalyzeInputs(t *testing.T) {
	exe := program(t, "trainer.c")
	dir := t.TempDir()
	core := filepath.Join(dir, "core")
	copyFile(t, crash(t, exe), core, false)
	inv := invocation{dir: dir}
	want := crashedFunctions(t, faultline(t, inv, "analyze", "--json", "core"))
	if !strings.HasPrefix(want, "load_batch train_step main") {
		t.Fatalf("plain core: %s", want)
	}
	mustRun(t, "xz", "-k", "-T1", core)
	mustRun(t, "lz4", "-q", core, core+".lz4")
	mustRun(t, "zstd", "-q", core, "-o", core+".zst")
	gzipFile(t, core, core+".gz")
	for _, name := range []string{"core.xz", "core.lz4", "core.zst", "core.gz"} {
		if got := crashedFunctions(t, faultline(t, inv, "analyze", "--json", name)); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	for _, name := range []string{"core", "core.gz", "core.lz4"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		// A pipe: not seekable.
		if got := crashedFunctions(t, faultline(t, invocation{dir: dir, stdin: bytes.NewReader(b)}, "analyze", "--json", "-")); got != want {
			t.Errorf("%s piped to -: %s, want %s", name, got, want)
		}
		// A redirected file: `faultline analyze - < core`.
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got := crashedFunctions(t, faultline(t, invocation{dir: dir, stdin: f}, "analyze", "--json", "-"))
		f.Close()
		if got != want {
			t.Errorf("%s redirected to -: %s, want %s", name, got, want)
		}
	}
	r := faultline(t, invocation{dir: dir, stdin: strings.NewReader("")}, "analyze", "-")
	if r.code != 1 || !strings.Contains(r.stderr, "standard input") {
		t.Errorf("empty standard input: want exit 1 and a message naming it\n%s", r)
	}
}

// crashedFunctions is the crashing thread's function names of a --json run.
func crashedFunctions(t *testing.T, r result) string {
	t.Helper()
	wantExit(t, r, 0)
	return strings.Join(functions(decodeCrash(t, r).crashed()), " ")
}

// TestAnalyzeExeMismatch: --exe naming a different build than the core's
// executable is reported (a problem in the report and a message on
// stderr), not silently replaced by the core's recorded path.
func TestAnalyzeExeMismatch(t *testing.T) {
	exe := program(t, "trainer.c")
	other := program(t, "trainer.c", "-O1")
	dir := t.TempDir()
	copyFile(t, crash(t, exe), filepath.Join(dir, "core"), false)
	copyFile(t, other, filepath.Join(dir, "other"), true)
	coreID, otherID := buildID(t, exe), buildID(t, other)
	r := faultline(t, invocation{dir: dir}, "analyze", "--exe", "other", "core")
	wantContains(t, "report", r.stdout, "other", otherID, coreID)
	wantContains(t, "stderr", r.stderr, "--exe other", "does not match")
	r = faultline(t, invocation{dir: dir}, "analyze", "--json", "--exe", "other", "core")
	c := decodeCrash(t, r)
	found := false
	for _, p := range c.Problems {
		if strings.Contains(p.Message, otherID) && strings.Contains(p.Message, coreID) {
			found = true
		}
	}
	if !found {
		t.Errorf("no problem names both build-ids: %+v", c.Problems)
	}
}
