package server_test

import (
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/faultline-dev/faultline/server"
)

// TestCulpritMessageSaysWhatHappened: the Error diagnostic leads with the
// classification's summary (what hover, the CLI and the debug adapter
// say), the signal's detail on the next line: an assertion reads
// "Assertion `…` failed", not "SIGABRT (SI_TKILL)", and unbounded
// recursion "Stack overflow", not "SIGSEGV: invalid write".
func TestCulpritMessageSaysWhatHappened(t *testing.T) {
	for _, c := range []struct{ core, file, what, signal string }{
		{"assert_abort", "assert_abort.c", "Assertion `", "SIGABRT (SI_TKILL) in "},
		{"recursion", "recursion.c", "Stack overflow: unbounded recursion through descend (", "SIGSEGV: invalid write at 0x"},
		{"null_inline", "null_inline.cpp", "NULL pointer dereference in value_of", "SIGSEGV: NULL pointer read at 0x8"},
	} {
		t.Run(c.core, func(t *testing.T) {
			e := newEnv(t, map[string]any{"offline": true}, server.Options{})
			e.OpenDump(c.core)
			src := e.URI(c.file)
			var msg string
			e.Await("the Error diagnostic on "+c.file, func(fc *fakeClient) bool {
				for _, d := range fc.diags[src] {
					if d.Severity == protocol.DiagnosticSeverityError {
						msg = message(d)
						return true
					}
				}
				return false
			})
			what, detail, _ := strings.Cut(msg, "\n")
			if !strings.HasPrefix(what, c.what) || !strings.HasPrefix(detail, c.signal) {
				t.Errorf("Error diagnostic %q; want %q… then %q…", msg, c.what, c.signal)
			}
		})
	}
}

// TestApportReportOpensLikeItsCore: faultline.open on the apport report
// of null_inline's crash (cores/null_inline.crash) puts the crash where
// its core does: the Error on null_inline.cpp line 16.
func TestApportReportOpensLikeItsCore(t *testing.T) {
	e := newEnv(t, map[string]any{"offline": true}, server.Options{})
	var sum server.OpenSummary
	err := e.Execute(server.CommandOpen, map[string]string{"dump": e.Path("cores/null_inline.crash"), "exe": e.Path("bin/null_inline")}, &sum)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Format != "elf-core" || sum.Function != "value_of" || sum.Line != 16 || sum.URI != string(e.URI("null_inline.cpp")) {
		t.Fatalf("open summary %+v", sum)
	}
	e.Await("the Error on line 16", func(c *fakeClient) bool {
		for _, d := range c.diags[e.URI("null_inline.cpp")] {
			if d.Severity == protocol.DiagnosticSeverityError && d.Range.Start.Line == 15 {
				return true
			}
		}
		return false
	})
}
