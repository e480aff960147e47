package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/faultline-dev/faultline/server"
)

// TestPythonFrames opens a faulthandler log: its Python frames resolve
// like native ones (the workspace file by path suffix), with the culprit
// (the program's own frame above ctypes) as the Error, at the lines the
// log prints for the current thread, and a hover without machine state.
func TestPythonFrames(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "testdata", "python"))
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "cores", "crash_ctypes.debian.faulthandler.txt")
	text, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	// The current thread's frames in crash_ctypes.py, as faulthandler printed them.
	_, current, _ := strings.Cut(string(text), "Current thread")
	var lines []int
	var funcs []string
	for _, m := range regexp.MustCompile(`File "[^"]*/crash_ctypes\.py", line (\d+) in (\S+)`).FindAllStringSubmatch(current, -1) {
		n, _ := strconv.Atoi(m[1])
		lines = append(lines, n)
		funcs = append(funcs, m[2])
	}
	if len(lines) != 3 || funcs[0] != "decode_header" {
		t.Fatalf("the log's current thread: %v %v", lines, funcs)
	}

	e := newEnvIn(t, dir, map[string]any{"offline": true}, server.Options{})
	var sum server.OpenSummary
	if err := e.Execute(server.CommandOpen, map[string]string{"dump": log}, &sum); err != nil {
		t.Fatal(err)
	}
	src := uri.File(filepath.Join(dir, "crash_ctypes.py"))
	if sum.Format != "faulthandler" || sum.Function != "decode_header" || sum.Line != lines[0] || sum.URI != string(src) {
		t.Fatalf("open summary = %+v", sum)
	}
	e.Await("diagnostics on crash_ctypes.py", func(c *fakeClient) bool { return len(c.diags[src]) == 3 })
	for _, d := range e.Diagnostics(src) {
		line := int(d.Range.Start.Line) + 1
		switch line {
		case lines[0]:
			// The classification's summary, then the signal's detail.
			want := fmt.Sprintf("\nSIGSEGV in decode_header — thread %d, frame #1", sum.Thread)
			if d.Severity != protocol.DiagnosticSeverityError || !strings.HasPrefix(message(d), "SIGSEGV (segmentation fault) in native code called from decode_header") ||
				!strings.HasSuffix(message(d), want) {
				t.Errorf("line %d: %v %q, want Error %q", line, d.Severity, message(d), want)
			}
		case lines[1], lines[2]:
			if d.Severity != protocol.DiagnosticSeverityInformation {
				t.Errorf("line %d: %v %q", line, d.Severity, message(d))
			}
		default:
			t.Errorf("unexpected diagnostic on line %d: %q", line, message(d))
		}
	}
	h, err := e.Server.Hover(e.ctx, &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: src}, Position: protocol.Position{Line: uint32(lines[0] - 1)}}})
	if err != nil {
		t.Fatal(err)
	}
	md := hoverText(h)
	for _, s := range []string{"**#1 `decode_header`**", "Python frame", "**Classification** · `", "faulthandler shows only Python frames"} {
		if !strings.Contains(md, s) {
			t.Errorf("hover lacks %q:\n%s", s, md)
		}
	}
	if strings.Contains(md, "**Registers**") || strings.Contains(md, "pc ``") {
		t.Errorf("hover of a Python frame shows machine state:\n%s", md)
	}
	if err := e.Shutdown(); err != nil {
		t.Error(err)
	}
}
