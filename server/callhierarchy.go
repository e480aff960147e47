package server

import (
	"context"
	"encoding/json"
	"fmt"

	"go.lsp.dev/protocol"
)

// callItemData is CallHierarchyItem.data: which frame an item stands for.
type callItemData struct {
	Thread int `json:"thread"`
	Frame  int `json:"frame"`
}

// PrepareCallHierarchy returns the frame on a frame line as a call
// hierarchy item (LSP 3.17 §"Prepare Call Hierarchy Request"); the
// hierarchy then walks the selected thread's stack.
func (s *Server) PrepareCallHierarchy(_ context.Context, params *protocol.CallHierarchyPrepareParams) ([]protocol.CallHierarchyItem, error) {
	v := s.current()
	if v == nil {
		return nil, nil
	}
	idx := v.at(docPath(params.TextDocument.URI), params.Position.Line)
	if len(idx) == 0 {
		return nil, nil
	}
	return []protocol.CallHierarchyItem{v.callItem(idx[0])}, nil
}

// IncomingCalls returns the caller of an item's frame: the next frame up
// the stack, with the range of its call site.
func (s *Server) IncomingCalls(_ context.Context, params *protocol.CallHierarchyIncomingCallsParams) ([]protocol.CallHierarchyIncomingCall, error) {
	v, i, err := s.itemFrame(params.Item)
	if v == nil || err != nil {
		return nil, err
	}
	up := v.nextResolved(i+1, 1)
	if up < 0 {
		return nil, nil
	}
	return []protocol.CallHierarchyIncomingCall{{
		From:       v.callItem(up),
		FromRanges: []protocol.Range{v.lineRange(v.sites[up])},
	}}, nil
}

// OutgoingCalls returns the callee of an item's frame: the next frame down
// the stack; the range is the item's own call site.
func (s *Server) OutgoingCalls(_ context.Context, params *protocol.CallHierarchyOutgoingCallsParams) ([]protocol.CallHierarchyOutgoingCall, error) {
	v, i, err := s.itemFrame(params.Item)
	if v == nil || err != nil {
		return nil, err
	}
	down := v.nextResolved(i-1, -1)
	if down < 0 {
		return nil, nil
	}
	return []protocol.CallHierarchyOutgoingCall{{
		To:         v.callItem(down),
		FromRanges: []protocol.Range{v.lineRange(v.sites[i])},
	}}, nil
}

// nextResolved is the first frame from i in direction step that has a
// local file, or -1.
func (v *view) nextResolved(i, step int) int {
	for ; i >= 0 && i < len(v.sites); i += step {
		if v.sites[i].path != "" {
			return i
		}
	}
	return -1
}

func (v *view) callItem(i int) protocol.CallHierarchyItem {
	st := v.sites[i]
	r := v.lineRange(st)
	detail := fmt.Sprintf("#%d · thread %d · %s:%d", st.frame.Index, v.thread.ID, st.frame.File, st.frame.Line)
	data, _ := json.Marshal(callItemData{Thread: v.thread.ID, Frame: i})
	return protocol.CallHierarchyItem{
		Name:           funcName(st.frame),
		Kind:           protocol.SymbolKindFunction,
		Detail:         &detail,
		URI:            st.uri,
		Range:          r,
		SelectionRange: r,
		Data:           data,
	}
}

// itemFrame finds the frame an item stands for in the current view; the
// view is nil when there is none (no dump, or an item from an earlier
// selection).
func (s *Server) itemFrame(item protocol.CallHierarchyItem) (*view, int, error) {
	v := s.current()
	if v == nil {
		return nil, 0, nil
	}
	var d callItemData
	if err := json.Unmarshal(item.Data, &d); err != nil {
		return nil, 0, invalidParams("call hierarchy item without faultline data: %v", err)
	}
	if d.Thread != v.thread.ID || d.Frame < 0 || d.Frame >= len(v.sites) {
		return nil, 0, nil // from an earlier selection
	}
	return v, d.Frame, nil
}
