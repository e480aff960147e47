package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/server"
)

// TestNullInline drives open → diagnostics → lenses → hover → inlay hints →
// call hierarchy → symbols → threads → report → shutdown on the
// null_inline core: a NULL member read three inlined helpers deep.
func TestNullInline(t *testing.T) {
	e := newEnv(t, map[string]any{"cacheDir": t.TempDir()}, server.Options{})
	sum := e.OpenDump("null_inline")
	src := e.URI("null_inline.cpp")
	if sum.Signal != "SIGSEGV" || sum.Function != "value_of" || sum.Line != 16 || sum.URI != string(src) {
		t.Fatalf("open summary = %+v", sum)
	}
	thread := sum.Thread

	// Diagnostics: the culprit line and every other frame line of the chain.
	e.Await("diagnostics on null_inline.cpp", func(c *fakeClient) bool { return len(c.diags[src]) == 5 })
	byLine := map[uint32]protocol.Diagnostic{}
	for _, d := range e.Diagnostics(src) {
		byLine[d.Range.Start.Line] = d
		if s, _ := d.Source.Get(); s != "faultline" {
			t.Errorf("diagnostic source = %q", s)
		}
	}
	culprit := byLine[15]
	// What happened first (the classification's summary, as hover, the CLI
	// and the debug adapter say it), then the signal's detail.
	crash, err := analysis.Open(e.Path("cores/null_inline.core.gz"), analysis.Options{Exe: e.Path("bin/null_inline"), Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if crash.Classification == nil || !strings.HasPrefix(crash.Classification.Summary, "NULL pointer dereference in value_of") {
		t.Fatalf("classification %+v", crash.Classification)
	}
	signal := fmt.Sprintf("SIGSEGV: NULL pointer read at 0x8 in value_of — thread %d, frame #0", thread)
	want := crash.Classification.Summary + "\n" + signal
	if culprit.Severity != protocol.DiagnosticSeverityError || message(culprit) != want {
		t.Errorf("line 16: %v %q, want Error %q", culprit.Severity, message(culprit), want)
	}
	if len(culprit.RelatedInformation) != 4 {
		t.Errorf("culprit relatedInformation has %d entries, want the 4 other frames", len(culprit.RelatedInformation))
	}
	for line, msg := range map[uint32]string{
		17: fmt.Sprintf("frame #1 of thread %d: called value_of (inlined)", thread),
		19: fmt.Sprintf("frame #2 of thread %d: called next_value (inlined)", thread),
		24: fmt.Sprintf("frame #3 of thread %d: called add_next (inlined)", thread),
		33: fmt.Sprintf("frame #4 of thread %d: called sum_prefix", thread),
	} {
		d := byLine[line]
		if d.Severity != protocol.DiagnosticSeverityInformation || message(d) != msg {
			t.Errorf("line %d: %v %q, want Information %q", line+1, d.Severity, message(d), msg)
		}
	}
	if r := byLine[15].Range; r.Start.Character != 44 || r.End.Character != 74 {
		t.Errorf("culprit range = %+v, want columns 45..end of line", r)
	}

	// Progress: begin … end on a server-created token.
	e.Await("progress end", func(c *fakeClient) bool {
		for _, kinds := range c.progress {
			if len(kinds) >= 2 && kinds[0] == "begin" && kinds[len(kinds)-1] == "end" {
				return true
			}
		}
		return false
	})

	// Code lenses.
	lenses, err := e.Server.CodeLens(e.ctx, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: src}})
	if err != nil {
		t.Fatal(err)
	}
	if got := lensTitles(lenses, 15); got != fmt.Sprintf("⚡ #0 value_of · thread %d | ↑ caller #1 next_value", thread) {
		t.Errorf("lenses on line 16: %q", got)
	}
	if got := lensTitles(lenses, 33); got != fmt.Sprintf("#4 main · thread %d | ↓ callee #3 sum_prefix", thread) {
		t.Errorf("lenses on line 34: %q", got)
	}
	// The callee lens of main shows sum_prefix's line.
	for _, l := range lenses {
		if l.Range.Start.Line == 33 && strings.HasPrefix(l.Command.Title, "↓") {
			var arg map[string]int
			json.Unmarshal(l.Command.Arguments[0], &arg)
			if err := e.Execute(l.Command.Command, arg, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.Await("showDocument of sum_prefix's line", func(c *fakeClient) bool {
		n := len(c.shown)
		return n > 0 && c.shown[n-1].URI == src && c.shown[n-1].Selection != nil && c.shown[n-1].Selection.Start.Line == 24
	})

	// Hover on the culprit line: registers, disassembly with the fault marked.
	h, err := e.Server.Hover(e.ctx, &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: src}, Position: protocol.Position{Line: 15, Character: 50}}})
	if err != nil {
		t.Fatal(err)
	}
	md := hoverText(h)
	for _, want := range []string{
		"**#0 `value_of`**", "Inline chain: `value_of` → `next_value` → `add_next` → `sum_prefix`",
		"rdi     0x0 ", "**Disassembly**", "=> 0x", "0x8(%rdi),%eax", "; faulting read of 0x8",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("hover on line 16 lacks %q:\n%s", want, md)
		}
	}
	// Hover on main's line marks the call.
	h, err = e.Server.Hover(e.ctx, &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: src}, Position: protocol.Position{Line: 33}}})
	if err != nil {
		t.Fatal(err)
	}
	if md := hoverText(h); !strings.Contains(md, "-> 0x") || !strings.Contains(md, "callq sum_prefix") ||
		!strings.Contains(md, "unwound by call frame information") {
		t.Errorf("hover on main's line:\n%s", md)
	}

	// Inlay hint on the culprit line.
	hints, err := e.Server.InlayHint(e.ctx, &protocol.InlayHintParams{TextDocument: protocol.TextDocumentIdentifier{URI: src},
		Range: protocol.Range{End: protocol.Position{Line: 40}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(hints) != 1 || hints[0].Position.Line != 15 || hints[0].Label != protocol.String("read 0x8 via 0x8(%rdi): rdi = 0x0") {
		t.Errorf("inlay hints = %+v", hints)
	}

	// Call hierarchy along the stack from sum_prefix's line (frame #3).
	items, err := e.Server.PrepareCallHierarchy(e.ctx, &protocol.CallHierarchyPrepareParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: src}, Position: protocol.Position{Line: 24}}})
	if err != nil || len(items) != 1 || items[0].Name != "sum_prefix" {
		t.Fatalf("prepareCallHierarchy = %+v, %v", items, err)
	}
	in, err := e.Server.IncomingCalls(e.ctx, &protocol.CallHierarchyIncomingCallsParams{Item: items[0]})
	if err != nil || len(in) != 1 || in[0].From.Name != "main" || in[0].FromRanges[0].Start.Line != 33 {
		t.Errorf("incomingCalls = %+v, %v", in, err)
	}
	out, err := e.Server.OutgoingCalls(e.ctx, &protocol.CallHierarchyOutgoingCallsParams{Item: items[0]})
	if err != nil || len(out) != 1 || out[0].To.Name != "add_next" || out[0].To.Range.Start.Line != 19 {
		t.Errorf("outgoingCalls = %+v, %v", out, err)
	}

	// Workspace symbols.
	syms, err := e.Server.Symbols(e.ctx, &protocol.WorkspaceSymbolParams{Query: "sum_"})
	if err != nil {
		t.Fatal(err)
	}
	var list []struct {
		Name     string            `json:"name"`
		Location protocol.Location `json:"location"`
	}
	b, _ := protocol.Marshal(syms)
	json.Unmarshal(b, &list)
	if len(list) != 1 || list[0].Name != "#3 sum_prefix — null_inline.cpp:25" || list[0].Location.URI != src {
		t.Errorf("symbols(sum_) = %s", b)
	}

	// faultline/threads.
	var threads server.ThreadsResult
	raw, err := e.Server.Request(e.ctx, server.MethodThreads, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(raw)
	if err := json.Unmarshal(b, &threads); err != nil {
		t.Fatal(err)
	}
	if len(threads.Threads) != 1 || len(threads.Threads[0].Frames) != 5 || !threads.Threads[0].Frames[0].Culprit ||
		threads.Threads[0].Frames[4].Function != "main" || threads.Threads[0].Frames[4].URI != string(src) {
		t.Errorf("faultline/threads = %s", b)
	}

	// The markdown report is written and shown.
	var rep map[string]string
	if err := e.Execute(server.CommandReport, map[string]any{}, &rep); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(rep["path"])
	if err != nil || !strings.Contains(string(text), "# "+signal) || !strings.Contains(string(text), "| **#0** | `value_of` (inlined) ← culprit | null_inline.cpp:16 |") {
		t.Errorf("report %s: %v\n%s", rep["path"], err, text)
	}
	e.Await("report shown", func(c *fakeClient) bool {
		return len(c.shown) > 0 && strings.HasSuffix(string(c.shown[len(c.shown)-1].URI), ".md")
	})

	if err := e.Shutdown(); err != nil {
		t.Errorf("Serve after shutdown+exit = %v, want nil", err)
	}
}
