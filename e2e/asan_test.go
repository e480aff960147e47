package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnalyzeCoreWithASanLog runs `faultline analyze CORE asan.log`: a
// clang -fsanitize=address program's core read together with the report
// AddressSanitizer printed, which names the bug type.
func TestAnalyzeCoreWithASanLog(t *testing.T) {
	dir := t.TempDir()
	src, _ := filepath.Abs("../analysis/realworld/testdata/programs/asan.c")
	bin := filepath.Join(dir, "asan")
	if out, err := exec.Command("clang", "-fsanitize=address", "-O1", "-g", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s", err, out)
	}
	cmd := exec.Command("bash", "-c", "ulimit -c unlimited; ASAN_OPTIONS=abort_on_error=1:disable_coredump=0 exec ./asan uaf 2>asan.log")
	cmd.Dir = dir
	if err := cmd.Run(); err == nil {
		t.Fatal("the ASan program did not abort")
	}
	if _, err := os.Stat(filepath.Join(dir, "core")); err != nil {
		t.Fatalf("no core (core_pattern must write cores to the cwd): %v", err)
	}
	r := faultline(t, invocation{dir: dir}, "analyze", "--format", "json", "--exe", bin, "core", "asan.log")
	wantExit(t, r, 0)
	freed := fmt.Sprintf(`"freedAt": "main (asan.c:%d)"`, lineOf(t, src, "free(r);"))
	wantContains(t, "crash model", r.stdout, `"kind": "use-after-free"`, `"bug": "heap-use-after-free"`, freed)
}

// lineOf is the line number of the only line of file that contains text.
func lineOf(t *testing.T, file, text string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	line := 0
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, text) {
			if line != 0 {
				t.Fatalf("%s: %q on lines %d and %d", file, text, line, i+1)
			}
			line = i + 1
		}
	}
	if line == 0 {
		t.Fatalf("%s has no line with %q", file, text)
	}
	return line
}
