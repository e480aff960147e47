package server

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
	"go.uber.org/zap"

	"github.com/faultline-dev/faultline/analysis"
)

// maxRelated caps relatedInformation entries per diagnostic.
const maxRelated = 64

// diagnosticSource is every diagnostic's source.
const diagnosticSource = "faultline"

// diagnostics computes textDocument/publishDiagnostics per local file for
// the selected thread (LSP 3.17 §"PublishDiagnostics Notification"): an
// Error on the culprit's line, Information on every other frame line, each
// carrying the call chain as relatedInformation. Frames sharing a line
// (recursion, an inline chain on one line) make one diagnostic.
//
// A GPU fault adds an Error at each level of its inline chain (gpu.go).
func (v *view) diagnostics() map[uri.URI][]protocol.Diagnostic {
	out := map[uri.URI][]protocol.Diagnostic{}
	if v == nil {
		return out
	}
	v.threadDiagnostics(out)
	v.gpuDiagnostics(out)
	return out
}

// threadDiagnostics adds the selected thread's diagnostics to out.
func (v *view) threadDiagnostics(out map[uri.URI][]protocol.Diagnostic) {
	if v.thread == nil {
		return
	}
	keys := make([]lineKey, 0, len(v.byLine))
	for k := range v.byLine {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return v.byLine[keys[i]][0] < v.byLine[keys[j]][0] })
	for _, k := range keys {
		idx := v.byLine[k]
		first := v.sites[idx[0]]
		d := protocol.Diagnostic{
			Range:    v.lineRange(first),
			Severity: protocol.DiagnosticSeverityInformation,
			Source:   protocol.NewOptional(diagnosticSource),
		}
		msg := v.frameMessage(idx[0])
		for _, i := range idx {
			if i == v.culprit {
				d.Severity = protocol.DiagnosticSeverityError
				d.Range = v.lineRange(v.sites[i])
				msg = culpritMessage(v)
			}
		}
		if len(idx) > 1 {
			msg += " (also " + frameList(v, idx, 8) + " on this line)"
		}
		if from := v.res.FetchedFrom(first.path); from != "" {
			msg += " [read-only source fetched from " + from + "]"
		}
		d.Message = protocol.String(msg)
		d.Code = protocol.String("frame")
		if d.Severity == protocol.DiagnosticSeverityError {
			d.Code = protocol.String("crash")
		}
		d.RelatedInformation = v.related(k)
		out[first.uri] = append(out[first.uri], d)
	}
}

// frameMessage is the Information message of frame i of the selected thread:
// "frame #3 of thread 4711: called sum_prefix".
func (v *view) frameMessage(i int) string {
	fr := v.sites[i].frame
	head := fmt.Sprintf("frame #%d of thread %d", fr.Index, v.thread.ID)
	if i == 0 {
		return head + ": stopped in " + funcName(fr)
	}
	callee := v.sites[i-1].frame
	if callee.Signal || callee.Function == analysis.SignalFrameName {
		return head + ": interrupted by a signal"
	}
	s := head + ": called " + funcName(callee)
	if callee.Inlined {
		s += " (inlined)"
	}
	return s
}

// frameList lists the frames idx after the first: "#4, #5, … (+97)".
func frameList(v *view, idx []int, n int) string {
	var parts []string
	for _, i := range idx[1:] {
		if len(parts) == n {
			parts = append(parts, fmt.Sprintf("… (+%d)", len(idx)-1-n))
			break
		}
		parts = append(parts, "#"+strconv.Itoa(v.sites[i].frame.Index))
	}
	return "frames " + strings.Join(parts, ", ")
}

// related walks the selected thread's whole chain, outermost call last,
// leaving out the line the diagnostic is on.
func (v *view) related(self lineKey) []protocol.DiagnosticRelatedInformation {
	var out []protocol.DiagnosticRelatedInformation
	for i, st := range v.sites {
		if st.path == "" || (lineKey{st.path, st.line}) == self {
			continue
		}
		if len(out) == maxRelated {
			break
		}
		role := "called from here"
		if i == 0 {
			role = "stopped here"
		}
		if i == v.culprit {
			role = "crashed here"
		}
		out = append(out, protocol.DiagnosticRelatedInformation{
			Location: protocol.Location{URI: st.uri, Range: v.lineRange(st)},
			Message:  fmt.Sprintf("#%d %s — %s", st.frame.Index, funcName(st.frame), role),
		})
	}
	return out
}

// culpritMessage is the Error diagnostic's message: what happened first
// (the classification's summary: "Assertion `x > 0` failed in …",
// "Stack overflow: unbounded recursion …"), then the signal's detail on a
// line of its own (crashSummary), as hover, the CLI and the debug adapter
// tell it.
func culpritMessage(v *view) string {
	detail := crashSummary(v)
	if cl := v.crash.Classification; cl != nil && cl.Summary != "" && cl.Summary != detail {
		return cl.Summary + "\n" + detail
	}
	return detail
}

// crashSummary is the culprit's one-line summary: "SIGSEGV: NULL pointer
// read at 0x8 in value_of — thread 4711, frame #0" for a crash by a signal;
// for one without (a GPU fault, a Python exception, a hang) the
// classification's summary, when there is one.
func crashSummary(v *view) string {
	c := v.crash
	if c.Signal == nil {
		if cl := c.Classification; cl != nil && cl.Summary != "" {
			return cl.Summary
		}
		if c.GPU != nil {
			return gpuSummary(c)
		}
	}
	var b strings.Builder
	sig := "crash"
	if c.Signal != nil {
		sig = c.Signal.Name
	}
	b.WriteString(sig)
	if what := faultDescription(c); what != "" {
		b.WriteString(": " + what)
	} else if c.Signal != nil && c.Signal.Code != "" {
		b.WriteString(" (" + c.Signal.Code + ")")
	}
	if v.culprit >= 0 && v.culprit < len(v.sites) {
		fr := v.sites[v.culprit].frame
		fmt.Fprintf(&b, " in %s — thread %d, frame #%d", funcName(fr), v.thread.ID, fr.Index)
	} else if v.thread != nil {
		fmt.Fprintf(&b, " — thread %d", c.CrashingThreadID)
	}
	return b.String()
}

// faultDescription describes a memory fault from the faulting instruction:
// "NULL pointer read at 0x8", "write at 0x7ffd…".
func faultDescription(c *analysis.Crash) string {
	in := c.Instruction
	addr := ""
	if in != nil && in.EffectiveAddress != "" {
		addr = in.EffectiveAddress
	} else if c.Signal != nil && (c.Signal.Name == "SIGSEGV" || c.Signal.Name == "SIGBUS") {
		addr = c.Signal.Address
	}
	if addr == "" {
		return ""
	}
	access := "access"
	if in != nil && in.Access != "" {
		access = in.Access
	}
	if a, err := strconv.ParseUint(strings.TrimPrefix(addr, "0x"), 16, 64); err == nil && a < 4096 {
		return fmt.Sprintf("NULL pointer %s at %s", access, addr)
	}
	return fmt.Sprintf("invalid %s at %s", access, addr)
}

func funcName(fr *analysis.Frame) string {
	if fr.Function == "" {
		return "??"
	}
	return fr.Function
}

// unresolvedMessage says which frame files resolve nowhere and what to
// set: files, the program's own (system libraries' are noted apart).
func unresolvedMessage(v *view, files []string) string {
	shown := files
	if len(shown) > 5 {
		shown = shown[:5]
	}
	list := strings.Join(shown, ", ")
	if len(files) > len(shown) {
		list += fmt.Sprintf(", … (+%d)", len(files)-len(shown))
	}
	whose := "the GPU inline chain"
	if v.thread != nil {
		whose = fmt.Sprintf("thread %d's frames", v.thread.ID)
		if len(v.gpu) > 0 {
			whose += " and the GPU inline chain"
		}
	}
	return fmt.Sprintf("faultline: %d source file(s) of %s are not on this machine (%s). "+
		`Open the folder holding them as a workspace folder, map the build path with the "sourceMap" setting, `+
		`e.g. {"sourceMap": {"/build/prefix": "/local/checkout"}}, or run faultline.fetchSources to check out `+
		`the exact revisions; checkouts under "cacheDir" are searched too.`,
		len(files), whose, list)
}

// publish replaces the published diagnostics with v's (nil clears them).
func (s *Server) publish(v *view) {
	diags := v.diagnostics()
	s.mu.Lock()
	var clear []uri.URI
	for u := range s.published {
		if _, ok := diags[u]; !ok {
			clear = append(clear, u)
			delete(s.published, u)
		}
	}
	for u := range diags {
		s.published[u] = true
	}
	s.mu.Unlock()
	for _, u := range clear {
		s.sendDiagnostics(u, []protocol.Diagnostic{})
	}
	// The culprit's file first, then the others in a stable order.
	order := make([]uri.URI, 0, len(diags))
	for u := range diags {
		order = append(order, u)
	}
	first := uri.URI("")
	if v != nil && v.culprit >= 0 && v.culprit < len(v.sites) {
		first = v.sites[v.culprit].uri
	} else if v != nil && len(v.gpu) > 0 {
		first = v.gpu[0].uri
	}
	sort.Slice(order, func(i, j int) bool {
		if (order[i] == first) != (order[j] == first) {
			return order[i] == first
		}
		return order[i] < order[j]
	})
	for _, u := range order {
		s.sendDiagnostics(u, diags[u])
	}
}

func (s *Server) sendDiagnostics(u uri.URI, ds []protocol.Diagnostic) {
	err := s.client.PublishDiagnostics(s.ctx, &protocol.PublishDiagnosticsParams{URI: u, Diagnostics: ds})
	if err != nil {
		s.log.Debug("publishDiagnostics failed", zap.Error(err))
	}
}

func (s *Server) showMessage(t protocol.MessageType, msg string) {
	if err := s.client.ShowMessage(s.ctx, &protocol.ShowMessageParams{Type: t, Message: msg}); err != nil {
		s.log.Debug("window/showMessage failed", zap.Error(err))
	}
}

// refresh asks the client to pull code lenses and inlay hints again
// (workspace/codeLens/refresh, workspace/inlayHint/refresh), when it can.
// It must not block a notification handler: the client answers on the read
// loop, so it runs on its own goroutine.
func (s *Server) refresh() {
	s.mu.Lock()
	caps := s.caps
	s.mu.Unlock()
	go func() {
		if caps.codeLensRefresh {
			if err := s.client.CodeLensRefresh(s.ctx); err != nil {
				s.log.Debug("codeLens/refresh failed", zap.Error(err))
			}
		}
		if caps.inlayHintRefresh {
			if err := s.client.InlayHintRefresh(s.ctx); err != nil {
				s.log.Debug("inlayHint/refresh failed", zap.Error(err))
			}
		}
	}()
}
