package server

import (
	"context"
	"fmt"
	"strings"

	"go.lsp.dev/protocol"
)

// Symbols lists the selected thread's frames as workspace symbols
// "#N function — file:line" (LSP 3.17 §"Workspace Symbols Request"),
// filtered by a case-insensitive substring of the query.
func (s *Server) Symbols(_ context.Context, params *protocol.WorkspaceSymbolParams) (protocol.WorkspaceSymbolResult, error) {
	v := s.current()
	out := protocol.WorkspaceSymbolSlice{}
	if v == nil || v.thread == nil {
		return out, nil
	}
	q := strings.ToLower(params.Query)
	container := fmt.Sprintf("thread %d", v.thread.ID)
	for _, st := range v.sites {
		if st.path == "" {
			continue
		}
		name := fmt.Sprintf("#%d %s — %s:%d", st.frame.Index, funcName(st.frame), st.frame.File, st.frame.Line)
		if q != "" && !strings.Contains(strings.ToLower(name), q) {
			continue
		}
		c := container
		out = append(out, protocol.WorkspaceSymbol{
			BaseSymbolInformation: protocol.BaseSymbolInformation{Name: name, Kind: protocol.SymbolKindFunction, ContainerName: &c},
			Location:              &protocol.Location{URI: st.uri, Range: v.lineRange(st)},
		})
	}
	return out, nil
}
