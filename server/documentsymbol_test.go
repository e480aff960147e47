package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/faultline-dev/faultline/server"
)

// outline asks textDocument/documentSymbol for a workspace file.
func (e *Env) outline(name string) []protocol.DocumentSymbol {
	e.t.Helper()
	res, err := e.Server.DocumentSymbol(e.ctx, &protocol.DocumentSymbolParams{TextDocument: protocol.TextDocumentIdentifier{URI: e.URI(name)}})
	if err != nil {
		e.t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	var out []protocol.DocumentSymbol
	if err := json.Unmarshal(b, &out); err != nil {
		e.t.Fatalf("%s: %s", err, b)
	}
	return out
}

// TestDocumentSymbol: the Outline of a frame file lists the threads that
// stopped in it, the selected (crashed) thread first, each with its frames
// in this file in stack order, on their lines; the Outline of a file no
// frame is in is empty.
func TestDocumentSymbol(t *testing.T) {
	e := newEnv(t, map[string]any{}, server.Options{})
	sum := e.OpenDump("null_inline")
	syms := e.outline("null_inline.cpp")
	if len(syms) != 1 || syms[0].Name != fmt.Sprintf("thread %d (crashed)", sum.Thread) {
		t.Fatalf("outline of null_inline.cpp: %+v", syms)
	}
	var got []string
	for _, c := range syms[0].Children {
		got = append(got, fmt.Sprintf("%s@%d", c.Name, c.SelectionRange.Start.Line+1))
	}
	// A thread is no scope of the source: its range is its innermost
	// frame's line, so that sticky scroll and breadcrumbs do not hold it
	// over the code between its frames.
	if r := syms[0].Range; r.Start.Line != 15 || r.End.Line != 15 || syms[0].SelectionRange != r {
		t.Errorf("thread symbol range %+v, want line 16 only", r)
	}
	want := "⚡ #0 value_of@16 #1 next_value@18 #2 add_next@20 #3 sum_prefix@25 #4 main@34"
	if strings.Join(got, " ") != want {
		t.Errorf("frames in the outline: %q, want %q", strings.Join(got, " "), want)
	}
	if s := e.outline("demo.c"); len(s) != 0 {
		t.Errorf("outline of a file no frame is in: %+v", s)
	}

	// threads64: every thread stopped in threads64.c; the crashed one first.
	sum = e.OpenDump("threads64")
	syms = e.outline("threads64.c")
	if len(syms) != 64 || syms[0].Name != fmt.Sprintf("thread %d (crashed)", sum.Thread) || syms[0].Kind != protocol.SymbolKindEvent {
		t.Fatalf("outline of threads64.c: %d symbols, first %+v", len(syms), syms[0])
	}
	for _, s := range syms[1:] {
		if strings.Contains(s.Name, "crashed") || len(s.Children) == 0 {
			t.Errorf("other thread %q with %d frames", s.Name, len(s.Children))
		}
	}
	if err := e.Shutdown(); err != nil {
		t.Error(err)
	}
}
