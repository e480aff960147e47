package archtest

import (
	"bytes"
	"path/filepath"
	"sort"
	"testing"
)

// maxPackageLines is the most non-test lines one package may hold
// (ARCHITECTURE.md's invariants): past it, a package holds more than one
// concern and a newcomer searches it by file name.
const maxPackageLines = 5000

// packageLines counts the lines of each directory's files (one directory,
// one package: moduleGoFiles leaves out tests and generated files).
func packageLines(files map[string][]byte) map[string]int {
	lines := map[string]int{}
	for path, src := range files {
		lines[filepath.Dir(path)] += bytes.Count(src, []byte("\n"))
	}
	return lines
}

// TestNoPackageOver5000Lines holds every package of the module to
// maxPackageLines non-test lines.
func TestNoPackageOver5000Lines(t *testing.T) {
	root := "../.."
	lines := packageLines(moduleGoFiles(t, root))
	if len(lines) < 20 {
		t.Fatalf("found only %d packages under %s", len(lines), root)
	}
	dirs := make([]string, 0, len(lines))
	for d := range lines {
		dirs = append(dirs, d)
	}
	sort.Slice(dirs, func(i, j int) bool { return lines[dirs[i]] > lines[dirs[j]] })
	for _, d := range dirs {
		if lines[d] > maxPackageLines {
			rel, _ := filepath.Rel(root, d)
			t.Errorf("%s has %d non-test lines (at most %d): split it by concern", rel, lines[d], maxPackageLines)
		}
	}
	rel, _ := filepath.Rel(root, dirs[0])
	t.Logf("%d packages; the largest, %s, has %d lines", len(dirs), rel, lines[dirs[0]])
}

// TestPackageLinesCounted feeds the counter two files of one package and
// one of another, so a counter that never adds up fails here.
func TestPackageLinesCounted(t *testing.T) {
	got := packageLines(map[string][]byte{
		"a/x.go": bytes.Repeat([]byte("x\n"), 3000),
		"a/y.go": bytes.Repeat([]byte("y\n"), 2001),
		"b/z.go": []byte("package b\n"),
	})
	if got["a"] != 5001 || got["b"] != 1 {
		t.Fatalf("counted %v, want a: 5001, b: 1", got)
	}
}
