package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/boundtest"
)

func TestMain(m *testing.M) { os.Exit(boundtest.Main(m)) }

// TestControlCharactersEscaped (issue 18 item 9): a gdb log whose function
// name and path hold BEL, BS and a C1 CSI (U+009B) is printed by the real
// binary, as text and markdown, with those escaped and no raw control
// character but newline and tab.
func TestControlCharactersEscaped(t *testing.T) {
	log := "Program received signal SIGSEGV, Segmentation fault.\n(gdb) bt\n" +
		"#0  0x0000555555555139 in evil\x07\x08name\u009b2J (p=0x0) at /tmp/a\x07.c:5\n" +
		"#1  0x0000555555555150 in main () at /tmp/a.c:9\n"
	path := filepath.Join(t.TempDir(), "bel.gdb.txt")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "markdown"} {
		r := boundtest.Run(t, boundtest.Cmd{Args: []string{"analyze", "--format", format, path}, Limits: boundtest.Limits{Wall: 30 * time.Second}})
		if r.Exit != 0 {
			t.Fatalf("%s: %v\n%s", format, r, r.Stderr)
		}
		for i, c := range []byte(r.Stdout) {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || (c == 0xc2 && i+1 < len(r.Stdout) && r.Stdout[i+1] >= 0x80 && r.Stdout[i+1] <= 0x9f) {
				t.Fatalf("%s: raw control byte %#x at %d: %q", format, c, i, r.Stdout[max(0, i-40):min(len(r.Stdout), i+40)])
			}
		}
		if !strings.Contains(r.Stdout, `evil\x07\x08name\u009b2J`) {
			t.Errorf("%s: the name is not shown escaped:\n%s", format, r.Stdout)
		}
	}
}

func TestEscapeControls(t *testing.T) {
	for in, want := range map[string]string{
		"plain\tline\n":  "plain\tline\n",
		"bell\a":         `bell\x07`,
		"esc\x1b[2J":     `esc\x1b[2J`,
		"cr\rdel\x7f":    `cr\x0ddel\x7f`,
		"csi\u009bx é ←": `csi\u009bx é ←`,
	} {
		if got := escapeControls(in); got != want {
			t.Errorf("escapeControls(%q) = %q, want %q", in, got, want)
		}
	}
}
