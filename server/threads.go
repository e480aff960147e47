package server

import (
	"context"
	"fmt"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/uri"
)

// ThreadsResult is the result of the custom request "faultline/threads":
// every thread and its frames, for editors' tree views and quickfix lists.
type ThreadsResult struct {
	Dump           string       `json:"dump"`
	CrashingThread int          `json:"crashingThread"`
	SelectedThread int          `json:"selectedThread"`
	Summary        string       `json:"summary"`
	Threads        []ThreadInfo `json:"threads"`
	// GPU is the GPU fault's inline chain, when the crash has one.
	GPU *GPUInfo `json:"gpu,omitempty"`
}

// GPUInfo is the GPU section of ThreadsResult: the faulting kernel and the
// inline chain of the faulting instruction, innermost first (Frames[0] is
// the culprit).
type GPUInfo struct {
	Kernel    string      `json:"kernel"`
	Exception string      `json:"exception,omitempty"`
	Device    string      `json:"device,omitempty"`
	Arch      string      `json:"arch,omitempty"`
	Block     string      `json:"block,omitempty"`
	Thread    string      `json:"thread,omitempty"`
	Summary   string      `json:"summary"`
	Frames    []FrameInfo `json:"frames"`
}

// ThreadInfo is one thread of ThreadsResult.
type ThreadInfo struct {
	ID       int         `json:"id"`
	Name     string      `json:"name,omitempty"`
	Crashed  bool        `json:"crashed"`
	Selected bool        `json:"selected"`
	Frames   []FrameInfo `json:"frames"`
}

// FrameInfo is one frame of ThreadInfo. Line is 1-based, as in the model;
// URI is set when the file resolves to a local one.
type FrameInfo struct {
	Index    int    `json:"index"`
	Function string `json:"function,omitempty"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	PC       string `json:"pc"`
	Module   string `json:"module,omitempty"`
	Inlined  bool   `json:"inlined"`
	Culprit  bool   `json:"culprit,omitempty"`
	URI      string `json:"uri,omitempty"`
}

// Request serves non-standard requests: "faultline/threads" (no params).
func (s *Server) Request(_ context.Context, method string, _ any) (any, error) {
	if method != MethodThreads {
		return nil, jsonrpc2.NewError(jsonrpc2.MethodNotFound, fmt.Sprintf("faultline: unknown method %q", method))
	}
	v := s.current()
	if v == nil {
		return &ThreadsResult{Threads: []ThreadInfo{}}, nil
	}
	res := &ThreadsResult{
		Dump:           v.crash.Dump.Path,
		CrashingThread: v.crash.CrashingThreadID,
		Summary:        crashSummary(v),
		Threads:        make([]ThreadInfo, 0, len(v.crash.Threads)),
		GPU:            v.gpuInfo(),
	}
	if v.thread != nil {
		res.SelectedThread = v.thread.ID
	}
	for ti := range v.crash.Threads {
		t := &v.crash.Threads[ti]
		ci := culpritFrame(v.crash, t)
		info := ThreadInfo{ID: t.ID, Name: t.Name, Crashed: t.Crashed, Selected: t == v.thread,
			Frames: make([]FrameInfo, 0, len(t.Frames))}
		for fi := range t.Frames {
			fr := &t.Frames[fi]
			f := FrameInfo{Index: fr.Index, Function: fr.Function, File: fr.File, Line: fr.Line, Column: fr.Column,
				PC: fr.PC, Module: fr.Module, Inlined: fr.Inlined, Culprit: fi == ci}
			if p := v.res.Resolve(fr, localExe(v.crash)); p != "" && fr.Line > 0 {
				f.URI = string(uri.File(p))
			}
			info.Frames = append(info.Frames, f)
		}
		res.Threads = append(res.Threads, info)
	}
	return res, nil
}
