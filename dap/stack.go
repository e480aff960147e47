package dap

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	godap "github.com/google/go-dap"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/framedoc"
)

func (s *Server) onThreads(r *godap.ThreadsRequest) {
	v := s.model
	out := make([]godap.Thread, len(v.threads))
	for i, t := range v.threads {
		out[i] = godap.Thread{Id: t.id, Name: t.name}
	}
	s.send(&godap.ThreadsResponse{Response: response(&r.Request), Body: godap.ThreadsResponseBody{Threads: out}})
}

// onStackTrace lists a thread's frames, every inline level one frame, in
// pages of startFrame/levels (the 30,000-frame recursion is not sent whole).
func (s *Server) onStackTrace(r *godap.StackTraceRequest) {
	v := s.model
	t, ti := v.thread(r.Arguments.ThreadId)
	if t == nil {
		s.errorResponse(&r.Request, errNotFound, "no thread %d in this dump", r.Arguments.ThreadId)
		return
	}
	start := min(max(r.Arguments.StartFrame, 0), len(t.frames))
	end := len(t.frames)
	if n := r.Arguments.Levels; n > 0 && n < end-start { // not start+n: levels near 2^63 would overflow
		end = start + n
	}
	frames := make([]godap.StackFrame, 0, end-start)
	for fi := start; fi < end; fi++ {
		frames = append(frames, v.stackFrame(ti, fi))
	}
	resp := &godap.StackTraceResponse{Response: response(&r.Request)}
	resp.Body = godap.StackTraceResponseBody{StackFrames: frames, TotalFrames: len(t.frames)}
	s.send(resp)
}

// stackFrame is frame fi of thread index ti as the Call Stack view shows
// it: its local file when one resolves, else a sourceReference to the
// generated disassembly document.
func (v *crashView) stackFrame(ti, fi int) godap.StackFrame {
	f := &v.threads[ti].frames[fi]
	name := f.Function
	if name == "" {
		name = "??"
	}
	sf := godap.StackFrame{Id: v.frameID(ti, fi), Name: name, Line: f.Line, Column: max(f.Column, 1)}
	if f.Addr != 0 {
		sf.InstructionPointerReference = f.PC
	}
	if f.Module != "" {
		sf.ModuleId = f.Module
	}
	switch {
	case f.Signal || f.Function == analysis.SignalFrameName:
		sf.PresentationHint = "label"
	case f.Language == "" && analysis.IsRuntimeFrame(*f):
		sf.PresentationHint = "subtle"
	}
	if p := v.localPath(f); p != "" && f.Line > 0 {
		sf.Source = &godap.Source{Name: filepath.Base(p), Path: p}
		if from := v.res.FetchedFrom(p); from != "" {
			// By reference too: the editor then asks for the content and
			// shows it read-only (DAP: sourceReference wins over path).
			sf.Source.Origin = "read-only copy fetched from " + from
			sf.Source.SourceReference = v.sources.forFile(p)
		}
		if v.aboveCulprit(ti, fi) {
			// VS Code focuses the first frame whose source is not
			// de-emphasized: the culprit, not the handler that re-raised.
			sf.Source.PresentationHint = "deemphasize"
		}
		return sf
	}
	if f.Addr == 0 && f.File == "" {
		return sf // a log's frame with no pc and no file: nothing to open
	}
	ref, doc := v.sources.forFrame(v.sess, *f)
	if f.File != "" && f.Line > 0 && !f.Signal {
		sf.Source = missingSource(f, ref, doc)
		return sf
	}
	sf.Source = &godap.Source{Name: doc.Name, SourceReference: ref, PresentationHint: "deemphasize",
		Origin: "faultline: no local source"}
	sf.Line, sf.Column = max(doc.Line, 1), 1
	return sf
}

// missingSource is the source of a frame whose file is not on this machine
// (a libc frame with its debug file but not its sources): its name and
// path as DWARF says, so that the Call Stack keeps gdb's "exit.c:116",
// de-emphasized (the editor focuses the first frame with source), with the
// frame's disassembly document as its related source (DAP Source.sources,
// its adapterData {"line": N} the pc's line there), which the editors open
// when the file cannot be.
func missingSource(f *analysis.Frame, ref int, doc framedoc.Document) *godap.Source {
	src := &godap.Source{Name: filepath.Base(f.File), PresentationHint: "deemphasize",
		Origin: "not on this machine",
		Sources: []godap.Source{{Name: doc.Name, SourceReference: ref, Origin: "faultline: disassembly",
			// The pc's line in the document, for the client that opens it.
			AdapterData: json.RawMessage(fmt.Sprintf(`{"line":%d}`, max(doc.Line, 1)))}}}
	switch {
	case filepath.IsAbs(f.File):
		src.Path = f.File
	case f.CompDir != "":
		src.Path = filepath.Join(f.CompDir, f.File)
	}
	return src
}
