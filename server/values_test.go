package server_test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/faultline-dev/faultline/internal/testgz"
	"github.com/faultline-dev/faultline/server"
)

// TestHoverValues hovers over the culprit line and main's line of the
// null_inline core with the values `faultline serve` reads
// (server.SessionValues), and checks each argument and local gdb prints
// for those frames appears with gdb's value.
func TestHoverValues(t *testing.T) {
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Skip("gdb not installed")
	}
	e := newEnv(t, map[string]any{"cacheDir": t.TempDir()}, server.Options{Values: server.SessionValues})
	e.OpenDump("null_inline")
	src := e.URI("null_inline.cpp")

	core := filepath.Join(t.TempDir(), "core")
	testgz.Gunzip(t, e.Path("cores/null_inline.core.gz"), core)
	exe := e.Path("bin/null_inline")

	for _, tc := range []struct {
		line  uint32 // 0-based
		frame int
	}{{15, 0}, {33, 4}} {
		h, err := e.Server.Hover(e.ctx, &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
			TextDocument: protocol.TextDocumentIdentifier{URI: src}, Position: protocol.Position{Line: tc.line}}})
		if err != nil {
			t.Fatal(err)
		}
		md := hoverText(h)
		if !strings.Contains(md, "**Values**") {
			t.Fatalf("hover on line %d has no values:\n%s", tc.line+1, md)
		}
		want := gdbFrameValues(t, exe, core, tc.frame)
		if len(want) == 0 {
			t.Fatalf("gdb printed no values for frame %d", tc.frame)
		}
		matched := 0
		for _, kv := range want {
			if valueShown(md, kv[0], kv[1]) {
				matched++
				continue
			}
			// gdb takes registers the unwinder did not recover in a
			// caller's frame as unchanged (same value); faultline does not
			// guess them.
			if tc.frame > 0 && valueShown(md, kv[0], "<optimized out>") {
				t.Logf("frame %d: %s: gdb %s from a register not saved across the call; faultline <optimized out>", tc.frame, kv[0], kv[1])
				continue
			}
			t.Errorf("hover on line %d lacks %s = %s (gdb):\n%s", tc.line+1, kv[0], kv[1], md)
		}
		if tc.frame == 4 && matched < 4 {
			t.Errorf("frame 4: only %d of gdb's values matched", matched)
		}
	}
}

// valueShown reports whether the hover markdown lists name = text.
func valueShown(md, name, text string) bool {
	re := regexp.MustCompile("`" + regexp.QuoteMeta(name) + "`( `[^`]*`)? = `" + regexp.QuoteMeta(text) + "`")
	return re.MatchString(md)
}

// gdbFrameValues is gdb's `info args` and `info locals` of one frame.
func gdbFrameValues(t *testing.T, exe, core string, frame int) [][2]string {
	t.Helper()
	sel := "frame " + string(rune('0'+frame))
	out, err := exec.Command("gdb", "-batch", "-nx", "-ex", "set print entry-values no", "-ex", sel,
		"-ex", "info args", "-ex", "info locals", exe, core).CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	var kvs [][2]string
	line := regexp.MustCompile(`(?m)^(\w+) = (.*)$`)
	for _, m := range line.FindAllStringSubmatch(string(out), -1) {
		kvs = append(kvs, [2]string{m[1], m[2]})
	}
	return kvs
}
