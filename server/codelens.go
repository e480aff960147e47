package server

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// docPath is the local path of a document URI, with symlinks resolved as
// resolved frame paths are.
func docPath(u uri.URI) string {
	if !u.IsFile() {
		return ""
	}
	p := abs(u.FsPath())
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return p
}

// CodeLens puts lenses on every frame line of the document (LSP 3.17
// §"Code Lens Request"): the frame, its caller and callee
// (faultline.gotoFrame, which uses window/showDocument), and "N threads
// here" (faultline.selectThread, cycling through them) where several
// threads stop on the line. GPU inline levels get "inline level K of N in
// KERNEL" (gpu.go), and the crashing functions of fetched checkouts "N
// upstream commits changed this function since REV — SUBJECT" (upstream.go).
func (s *Server) CodeLens(_ context.Context, params *protocol.CodeLensParams) ([]protocol.CodeLens, error) {
	v := s.shown()
	if v == nil {
		return nil, nil
	}
	path := docPath(params.TextDocument.URI)
	lenses := append(v.gpuLenses(path), v.upstreamLenses(path)...)
	for k, stops := range v.stops {
		if k.path != path || v.thread == nil {
			continue
		}
		idx := v.byLine[k]
		var r protocol.Range
		if len(idx) > 0 {
			r = v.lineRange(v.sites[idx[0]])
			r.End = r.Start
			lenses = append(lenses, v.frameLenses(idx, r)...)
		} else {
			r = protocol.Range{Start: protocol.Position{Line: k.line}, End: protocol.Position{Line: k.line}}
			if len(stops) == 1 {
				st := stops[0]
				lenses = append(lenses, lens(r, fmt.Sprintf("thread %d: #%d %s", st.thread, st.frame, v.funcOf(st)),
					CommandGotoFrame, map[string]int{"thread": st.thread, "frame": st.frame}))
				continue
			}
		}
		if len(stops) > 1 || (len(stops) == 1 && len(idx) == 0) {
			next := nextThread(stops, v.thread.ID)
			lenses = append(lenses, lens(r, fmt.Sprintf("%d threads here", len(stops)),
				CommandSelectThread, map[string]int{"thread": next}))
		}
	}
	sort.SliceStable(lenses, func(i, j int) bool { return lenses[i].Range.Start.Line < lenses[j].Range.Start.Line })
	return lenses, nil
}

// frameLenses are the lenses of the selected thread's frames idx on a line.
func (v *view) frameLenses(idx []int, r protocol.Range) []protocol.CodeLens {
	i := idx[0]
	fr := v.sites[i].frame
	title := fmt.Sprintf("#%d %s · thread %d", fr.Index, funcName(fr), v.thread.ID)
	if len(idx) > 1 {
		title += fmt.Sprintf(" (+%d frames)", len(idx)-1)
	}
	if i == v.culprit {
		title = "⚡ " + title
	}
	out := []protocol.CodeLens{lens(r, title, CommandGotoFrame, map[string]int{"thread": v.thread.ID, "frame": i})}
	last := idx[len(idx)-1]
	if up := last + 1; up < len(v.sites) {
		out = append(out, lens(r, fmt.Sprintf("↑ caller #%d %s", up, funcName(v.sites[up].frame)),
			CommandGotoFrame, map[string]int{"thread": v.thread.ID, "frame": up}))
	}
	if i > 0 {
		down := i - 1
		out = append(out, lens(r, fmt.Sprintf("↓ callee #%d %s", down, funcName(v.sites[down].frame)),
			CommandGotoFrame, map[string]int{"thread": v.thread.ID, "frame": down}))
	}
	return out
}

func (v *view) funcOf(st stop) string {
	if t := v.crash.Thread(st.thread); t != nil && st.frame < len(t.Frames) {
		return funcName(&t.Frames[st.frame])
	}
	return "??"
}

// nextThread is the thread after selected among stops (wrapping), so that
// repeated clicks visit every thread stopped on the line.
func nextThread(stops []stop, selected int) int {
	for i, st := range stops {
		if st.thread == selected {
			return stops[(i+1)%len(stops)].thread
		}
	}
	return stops[0].thread
}

func lens(r protocol.Range, title, command string, arg any) protocol.CodeLens {
	a, _ := marshalAny(arg)
	return protocol.CodeLens{Range: r, Command: protocol.Command{Title: title, Command: command, Arguments: []protocol.LSPAny{a}}}
}
