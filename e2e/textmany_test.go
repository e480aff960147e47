package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnalyzeTextManyListsFailures: --format text over many dumps lists the
// dumps it could not open, as the markdown and JSON reports do.
func TestAnalyzeTextManyListsFailures(t *testing.T) {
	exe := program(t, "trainer.c")
	dir := t.TempDir()
	copyFile(t, crash(t, exe), filepath.Join(dir, "core.1"), false)
	os.WriteFile(filepath.Join(dir, "garbage.core"), bytes.Repeat([]byte{0xde, 0xad}, 5000), 0o644)
	r := faultline(t, invocation{dir: dir}, "analyze", "--format", "text", "core.1", "missing.core", "garbage.core")
	wantExit(t, r, 0)
	wantContains(t, "text report", r.stdout, "load_batch", "missing.core", "garbage.core")
	if !strings.Contains(r.stdout, "could not") && !strings.Contains(r.stdout, "not opened") {
		t.Errorf("text report does not say two dumps could not be opened:\n%s", r.stdout)
	}
}
