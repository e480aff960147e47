package symbolize

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/boundtest"
)

// TestBoundLineTableFiles (issue 18 item 4): a program whose line table
// lists 300,000 file entries (top-level .file directives; 1.5 MB of
// .debug_line, 3 MB of .debug_line_str) crashes in main; the real binary
// symbolizes the core within a time bound. Before the fix building the
// table took longer than two minutes (a linear search per entry).
func TestBoundLineTableFiles(t *testing.T) {
	const files = 300000
	dir := t.TempDir()
	var src strings.Builder
	src.WriteString("asm(\n")
	for i := range files {
		fmt.Fprintf(&src, "\".file %d \\\"d/f%06d.c\\\"\\n\"\n", i+2, i) // gcc's own is file 1
	}
	src.WriteString(");\nint main(void) { volatile int *p = 0; return *p; }\n")
	if err := os.WriteFile(filepath.Join(dir, "files.c"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-g", "-O0", "-o", filepath.Join(dir, "files"), filepath.Join(dir, "files.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	crash := exec.Command("sh", "-c", `ulimit -c unlimited; exec ./files`)
	crash.Dir = dir
	_ = crash.Run() // it is meant to crash
	core := filepath.Join(dir, "core")
	if _, err := os.Stat(core); err != nil {
		pattern, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
		t.Fatalf("no core written (core_pattern %q; the CI sets it to \"core\")", strings.TrimSpace(string(pattern)))
	}
	r := boundtest.Run(t, boundtest.Cmd{Args: []string{"analyze", "--offline", "--format", "text", core},
		Limits: boundtest.Limits{Wall: 60 * time.Second, RSSKiB: 1 << 20}})
	if r.Killed != "" || r.Exit != 0 {
		t.Fatalf("%v\n%s", r, r.Stderr)
	}
	if want := fmt.Sprintf("files.c:%d", files+3); !strings.Contains(r.Stdout, want) {
		t.Errorf("no %q in:\n%s", want, r.Stdout)
	}
	if r.CPUTime > 5*time.Second || r.Wall > 60*time.Second || r.MaxRSSKiB > 300<<10 {
		t.Errorf("bound: cpu <= 5 s, wall <= 20 s, maxrss <= 300 MiB; got %v", r)
	}
}
