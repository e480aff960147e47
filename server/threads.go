package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/uri"

	"github.com/faultline-dev/faultline/analysis"
)

// ThreadsResult is the result of the custom request "faultline/threads":
// every thread and a page of its frames, for editors' tree views and
// quickfix lists.
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
	// ThreadName names the faulting thread of a GPU core dump as LLDB
	// does: "blockIdx(x=2 y=0 z=0) threadIdx(x=101 y=0 z=0)", or "device 0
	// SM 4 (no kernel context)" when StandIn (an SM-level exception whose
	// warps had exited: no block, thread or lane).
	ThreadName string `json:"threadName,omitempty"`
	StandIn    bool   `json:"standIn,omitempty"`
	// Threads are the dump's GPU threads (at most
	// model.MaxListedGPUThreads; ThreadCount counts them all).
	Threads     []GPUThreadInfo `json:"threads,omitempty"`
	ThreadCount int             `json:"threadCount,omitempty"`
}

// GPUThreadInfo is one GPU thread of GPUInfo.
type GPUThreadInfo struct {
	Name       string `json:"name"`
	StandIn    bool   `json:"standIn,omitempty"`
	StopReason string `json:"stopReason,omitempty"`
	Function   string `json:"function,omitempty"`
	PC         string `json:"pc"`
	Selected   bool   `json:"selected,omitempty"`
}

// ThreadInfo is one thread of ThreadsResult.
type ThreadInfo struct {
	ID       int    `json:"id"`
	Name     string `json:"name,omitempty"`
	Crashed  bool   `json:"crashed"`
	Selected bool   `json:"selected"`
	// Frames are the requested page of the thread's frames, from
	// StartFrame; TotalFrames counts them all.
	Frames      []FrameInfo `json:"frames"`
	StartFrame  int         `json:"startFrame"`
	TotalFrames int         `json:"totalFrames"`
	// Stack names the whole stack (every frame's function, file and line):
	// threads with equal Stack stopped in the same place, whatever page
	// was sent.
	Stack string `json:"stack"`
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
	// DocURI is the read-only document (faultline-frame:) of a frame
	// without local source; see faultline/frameDocument.
	DocURI string `json:"docUri,omitempty"`
}

// Frame pages of faultline/threads (as DAP's stackTrace pages them): a
// 30,800-frame recursion would otherwise make every answer megabytes.
const (
	// DefaultFrameLevels is the page size when levels is absent or 0.
	DefaultFrameLevels = 64
	// MaxFrameLevels caps one page.
	MaxFrameLevels = 1000
)

// ThreadsParams are faultline/threads' optional params: the page of frames
// of every thread (or of one thread) to send.
type ThreadsParams struct {
	// Thread, when set, limits the answer to that thread.
	Thread int `json:"thread,omitempty"`
	// StartFrame is the index of the first frame sent.
	StartFrame int `json:"startFrame,omitempty"`
	// Levels is the number of frames sent per thread (DefaultFrameLevels
	// when absent or 0, at most MaxFrameLevels).
	Levels int `json:"levels,omitempty"`
}

// Request serves faultline's own requests: "faultline/threads" and
// "faultline/frameDocument". params is the raw JSON params (nil when
// absent).
func (s *Server) Request(ctx context.Context, method string, params any) (any, error) {
	raw, _ := params.(json.RawMessage)
	switch method {
	case MethodThreads:
		var p ThreadsParams
		if err := decodeArg(raw, &p); err != nil {
			return nil, invalidParams(`%s wants {"thread"?: id, "startFrame"?: n, "levels"?: n}: %v`, MethodThreads, err)
		}
		if p.StartFrame < 0 || p.Levels < 0 {
			return nil, invalidParams("%s: startFrame and levels must not be negative", MethodThreads)
		}
		return s.threads(p)
	case MethodFrameDocument:
		var p FrameDocumentParams
		if err := decodeArg(raw, &p); err != nil || p.URI == "" {
			return nil, invalidParams(`%s wants {"uri": "%s:…"}`, MethodFrameDocument, FrameScheme)
		}
		return s.frameDocument(ctx, p)
	}
	return nil, jsonrpc2.NewError(jsonrpc2.MethodNotFound, fmt.Sprintf("faultline: unknown method %q", method))
}

// threads answers faultline/threads.
func (s *Server) threads(p ThreadsParams) (*ThreadsResult, error) {
	v := s.current()
	if v == nil {
		return &ThreadsResult{Threads: []ThreadInfo{}}, nil
	}
	if p.Levels == 0 {
		p.Levels = DefaultFrameLevels
	}
	p.Levels = min(p.Levels, MaxFrameLevels)
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
		if p.Thread != 0 && t.ID != p.Thread {
			continue
		}
		res.Threads = append(res.Threads, v.threadInfo(t, p.StartFrame, p.Levels))
	}
	if p.Thread != 0 && len(res.Threads) == 0 {
		return nil, invalidParams("%s: the dump has no thread %d", MethodThreads, p.Thread)
	}
	return res, nil
}

// threadInfo is t with frames [start, start+levels).
func (v *view) threadInfo(t *analysis.Thread, start, levels int) ThreadInfo {
	ci := culpritFrame(v.crash, t)
	start = min(start, len(t.Frames))
	end := min(len(t.Frames), start+levels)
	info := ThreadInfo{ID: t.ID, Name: t.Name, Crashed: t.Crashed, Selected: t == v.thread,
		Frames: make([]FrameInfo, 0, end-start), StartFrame: start, TotalFrames: len(t.Frames), Stack: stackKey(t)}
	for fi := start; fi < end; fi++ {
		fr := &t.Frames[fi]
		f := FrameInfo{Index: fr.Index, Function: fr.Function, File: fr.File, Line: fr.Line, Column: fr.Column,
			PC: fr.PC, Module: fr.Module, Inlined: fr.Inlined, Culprit: fi == ci}
		if p := v.res.Resolve(fr, localExe(v.crash)); p != "" && fr.Line > 0 {
			f.URI = string(uri.File(p))
		} else if v.src != nil {
			f.DocURI = string(frameDocURI(v.src.seq, t.ID, fi, fr))
		}
		info.Frames = append(info.Frames, f)
	}
	return info
}

// stackKey hashes every frame's function, file and line of t.
func stackKey(t *analysis.Thread) string {
	h := sha256.New()
	for i := range t.Frames {
		f := &t.Frames[i]
		fn := f.Function
		if fn == "" {
			fn = f.PC
		}
		fmt.Fprintf(h, "%s@%s:%d\n", fn, f.File, f.Line)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
