package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnalyzeManyMatchesSingle runs `faultline analyze --json --summary DIR`
// on four cores of one program (opened in parallel, the workers sharing
// each library between the cores they take) and holds every line to the
// one `analyze --json --summary CORE` prints for that core alone.
func TestAnalyzeManyMatchesSingle(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join("testdata", "native", "bin", "racy_map")
	var cores []string
	for _, n := range []string{"1", "2", "3", "4"} {
		b, err := os.ReadFile(filepath.Join("testdata", "native", "cores", "racy_map."+n+".core.gz"))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "core."+n+".gz")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		cores = append(cores, p)
	}
	out, errOut, code := runBinary(t, nil, "analyze", "--json", "--summary", "--offline", "--exe", exe, dir)
	if code != 0 {
		t.Fatalf("analyze DIR: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(cores) {
		t.Fatalf("analyze DIR printed %d summaries for %d cores:\n%s", len(lines), len(cores), out)
	}
	for i, core := range cores {
		one, errOut, code := runBinary(t, nil, "analyze", "--json", "--summary", "--offline", "--exe", exe, core)
		if code != 0 {
			t.Fatalf("analyze %s: exit %d: %s", core, code, errOut)
		}
		if strings.TrimSpace(one) != lines[i] {
			t.Errorf("%s: in the directory run:\n%s\nalone:\n%s", core, lines[i], one)
		}
		if !strings.Contains(one, `"function":"churn"`) && !strings.Contains(one, `"function":"worker"`) {
			t.Errorf("%s: the summary names no frame of the program (churn, worker):\n%s", core, one)
		}
	}
}
