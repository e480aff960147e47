package server

import (
	"context"
	"fmt"
	"sort"

	"go.lsp.dev/protocol"
)

// maxOutlineThreads caps the threads of one document's Outline.
const maxOutlineThreads = 64

// DocumentSymbol is the Outline of a file the crash's frames are in (LSP
// 3.17 §"Document Symbols Request"): what a reader of a crash wants from
// it is where in this file each thread was and in which function, so each
// thread that stopped in the file is a symbol ("thread 4711 (crashed)", the
// selected thread first) whose children are its frames in this file in
// stack order ("#0 value_of", the culprit marked), one per line (a
// recursion's 30,000 frames on one line are one child "(+N frames)").
// Selecting a child goes to the frame's line. Files no frame is in have an
// empty Outline (the source's own symbols are other servers' business).
func (s *Server) DocumentSymbol(_ context.Context, params *protocol.DocumentSymbolParams) (protocol.DocumentSymbolResult, error) {
	out := protocol.DocumentSymbolSlice{}
	v := s.shown()
	if v == nil || v.thread == nil {
		return out, nil
	}
	path := docPath(params.TextDocument.URI)
	if sym, ok := v.selectedOutline(path); ok {
		out = append(out, sym)
	}
	for _, sym := range v.otherOutlines(path) {
		if len(out) == maxOutlineThreads {
			break
		}
		out = append(out, sym)
	}
	return out, nil
}

// selectedOutline is the selected thread's symbol in path, with one child
// per line its frames are on.
func (v *view) selectedOutline(path string) (protocol.DocumentSymbol, bool) {
	var lines [][]int
	for k, idx := range v.byLine {
		if k.path == path {
			lines = append(lines, idx)
		}
	}
	if len(lines) == 0 {
		return protocol.DocumentSymbol{}, false
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i][0] < lines[j][0] })
	var children []protocol.DocumentSymbol
	for _, idx := range lines {
		st := v.sites[idx[0]]
		name := fmt.Sprintf("#%d %s", st.frame.Index, funcName(st.frame))
		if len(idx) > 1 {
			name += fmt.Sprintf(" (+%d frames)", len(idx)-1)
		}
		detail := fmt.Sprintf("line %d", st.frame.Line)
		for _, i := range idx {
			if i == v.culprit {
				name = "⚡ " + name
				detail = "culprit, " + detail
			}
		}
		if st.frame.Inlined {
			detail += ", inlined"
		}
		children = append(children, frameSymbol(v, st, name, detail))
	}
	return threadSymbol(v.thread.ID, v.thread.Crashed, children), true
}

// otherOutlines are the symbols of the threads other than the selected one
// that stopped in path: crashed first, then by id.
func (v *view) otherOutlines(path string) []protocol.DocumentSymbol {
	type frameAt struct {
		frame int
		key   lineKey
	}
	byThread := map[int][]frameAt{}
	for k, stops := range v.stops {
		if k.path != path {
			continue
		}
		for _, st := range stops {
			if st.thread != v.thread.ID {
				byThread[st.thread] = append(byThread[st.thread], frameAt{st.frame, k})
			}
		}
	}
	ids := make([]int, 0, len(byThread))
	for id := range byThread {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		ci, cj := v.crash.Thread(ids[i]).Crashed, v.crash.Thread(ids[j]).Crashed
		if ci != cj {
			return ci
		}
		return ids[i] < ids[j]
	})
	var out []protocol.DocumentSymbol
	for _, id := range ids {
		t := v.crash.Thread(id)
		frames := byThread[id]
		sort.Slice(frames, func(i, j int) bool { return frames[i].frame < frames[j].frame })
		var children []protocol.DocumentSymbol
		for _, f := range frames {
			fr := &t.Frames[f.frame]
			st := site{thread: t, frame: fr, path: path, line: f.key.line}
			children = append(children, frameSymbol(v, st, fmt.Sprintf("#%d %s", fr.Index, funcName(fr)), fmt.Sprintf("line %d", fr.Line)))
		}
		out = append(out, threadSymbol(id, t.Crashed, children))
	}
	return out
}

// frameSymbol is a frame's child symbol, on its line.
func frameSymbol(v *view, st site, name, detail string) protocol.DocumentSymbol {
	r := v.lineRange(st)
	return protocol.DocumentSymbol{Name: name, Detail: &detail, Kind: protocol.SymbolKindFunction, Range: r, SelectionRange: r}
}

// threadSymbol is a thread's symbol (kind Event for the crashed thread,
// Object for the others). Its range is its innermost frame's line only: a
// thread is no scope of the source, and a range spanning its frames would
// make editors' sticky scroll and breadcrumbs hold "thread N" over the
// unrelated code between them.
func threadSymbol(id int, crashed bool, children []protocol.DocumentSymbol) protocol.DocumentSymbol {
	name := fmt.Sprintf("thread %d", id)
	kind := protocol.SymbolKindObject
	if crashed {
		name += " (crashed)"
		kind = protocol.SymbolKindEvent
	}
	r := children[0].Range
	detail := fmt.Sprintf("frames on %d lines of this file", len(children))
	return protocol.DocumentSymbol{Name: name, Detail: &detail, Kind: kind, Range: r, SelectionRange: children[0].Range, Children: children}
}
