package dap

import (
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"

	godap "github.com/google/go-dap"

	"github.com/faultline-dev/faultline/analysis"
)

// TestNullInline walks a whole session on the null_inline core: the stop,
// the inline chain as frames with paging, arguments with expandable
// members, evaluate, registers, disassembly, memory and the refusals.
// Expected values come from the engine's model of the same core and the
// program's source (main builds a→b→c with values 1, 2, 3).
func TestNullInline(t *testing.T) {
	core, exe := corpus(t, "cores/null_inline.core.gz"), corpus(t, "bin/null_inline")
	model, err := analysis.Open(core, analysis.Options{Exe: exe})
	if err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t)
	stop := c.launch(map[string]any{"coreFile": core, "program": exe, "workspaceFolders": []string{corpus(t, ".")}})
	if stop.Body.Reason != "exception" || stop.Body.ThreadId != model.CrashingThreadID || !stop.Body.AllThreadsStopped {
		t.Fatalf("stopped = %+v, want reason exception on thread %d", stop.Body, model.CrashingThreadID)
	}
	threads := c.ok("threads", nil).(*godap.ThreadsResponse).Body.Threads
	if len(threads) != 1 || threads[0].Id != model.CrashingThreadID || !strings.Contains(threads[0].Name, "value_of (null_inline.cpp:16)") {
		t.Fatalf("threads = %+v", threads)
	}
	st := c.ok("stackTrace", map[string]any{"threadId": stop.Body.ThreadId}).(*godap.StackTraceResponse).Body
	want := []struct {
		name string
		line int
	}{{"value_of", 16}, {"next_value", 18}, {"add_next", 20}, {"sum_prefix", 25}, {"main", 34}}
	if st.TotalFrames != len(want) || len(st.StackFrames) != len(want) {
		t.Fatalf("stackTrace: %d frames (total %d), want %d", len(st.StackFrames), st.TotalFrames, len(want))
	}
	for i, w := range want {
		f := st.StackFrames[i]
		if f.Name != w.name || f.Line != w.line || f.Source == nil || filepath.Base(f.Source.Path) != "null_inline.cpp" {
			t.Errorf("frame %d = %s line %d source %+v, want %s line %d in null_inline.cpp", i, f.Name, f.Line, f.Source, w.name, w.line)
		}
	}
	if st.StackFrames[0].InstructionPointerReference != model.Threads[0].Frames[0].PC {
		t.Errorf("frame 0 ip = %q, want %q", st.StackFrames[0].InstructionPointerReference, model.Threads[0].Frames[0].PC)
	}
	paged := c.ok("stackTrace", map[string]any{"threadId": stop.Body.ThreadId, "startFrame": 1, "levels": 2}).(*godap.StackTraceResponse).Body
	if len(paged.StackFrames) != 2 || paged.StackFrames[0].Name != "next_value" || paged.StackFrames[1].Name != "add_next" || paged.TotalFrames != 5 {
		t.Errorf("page startFrame 1 levels 2 = %+v", paged)
	}

	mainFrame := st.StackFrames[4].Id
	scopes := c.ok("scopes", map[string]any{"frameId": mainFrame}).(*godap.ScopesResponse).Body.Scopes
	if len(scopes) != 3 || scopes[0].Name != "Arguments" || scopes[1].Name != "Locals" || scopes[2].Name != "Registers" {
		t.Fatalf("scopes = %+v", scopes)
	}
	args := c.ok("variables", map[string]any{"variablesReference": scopes[0].VariablesReference}).(*godap.VariablesResponse).Body.Variables
	if argc := findVar(t, args, "argc"); argc.Value != "1" || argc.Type != "int" {
		t.Errorf("argc = %+v, want int 1", argc)
	}
	locals := c.ok("variables", map[string]any{"variablesReference": scopes[1].VariablesReference}).(*godap.VariablesResponse).Body.Variables
	a := findVar(t, locals, "a")
	if a.Type != "Node *" || a.VariablesReference == 0 || a.MemoryReference != a.Value {
		t.Fatalf("a = %+v: want an expandable Node * whose memory reference is its value", a)
	}
	members := c.ok("variables", map[string]any{"variablesReference": a.VariablesReference}).(*godap.VariablesResponse).Body.Variables
	if v := findVar(t, members, "value"); v.Value != "1" || v.EvaluateName != "a->value" {
		t.Errorf("a->value = %+v, want 1", v)
	}
	next := findVar(t, members, "next")
	if b := findVar(t, locals, "b"); next.Value != b.Value {
		t.Errorf("a->next = %s, want b = %s", next.Value, b.Value)
	}
	for expr, want := range map[string]string{"a->value": "1", "a->next->value": "2", "b->next->value": "3", "b->next->next": "0x0", "argc": "1"} {
		r := c.ok("evaluate", map[string]any{"expression": expr, "frameId": mainFrame, "context": "watch"}).(*godap.EvaluateResponse)
		if r.Body.Result != want {
			t.Errorf("evaluate %s = %q, want %q", expr, r.Body.Result, want)
		}
	}
	if r := c.request("evaluate", map[string]any{"expression": "nosuch", "frameId": mainFrame}); r.GetResponse().Success {
		t.Error("evaluate of an unknown name succeeded")
	}
	regs := c.ok("variables", map[string]any{"variablesReference": scopes[2].VariablesReference}).(*godap.VariablesResponse).Body.Variables
	if rip := findVar(t, regs, "rip"); rip.Value != model.Threads[0].Frames[4].PC {
		t.Errorf("main's rip = %s, want its pc %s", rip.Value, model.Threads[0].Frames[4].PC)
	}

	mem := c.ok("readMemory", map[string]any{"memoryReference": a.MemoryReference, "offset": 8, "count": 8}).(*godap.ReadMemoryResponse).Body
	data, err := base64.StdEncoding.DecodeString(mem.Data)
	if err != nil || len(data) != 8 || data[0] != 1 || data[4] != 1 {
		t.Errorf("readMemory a+8 = %v %v (%+v), want a->value=1 a->weight=1", data, err, mem)
	}
	dis := c.ok("disassemble", map[string]any{"memoryReference": st.StackFrames[0].InstructionPointerReference,
		"instructionOffset": -4, "instructionCount": 10, "resolveSymbols": true}).(*godap.DisassembleResponse).Body.Instructions
	if len(dis) != 10 {
		t.Fatalf("disassemble returned %d instructions, want 10", len(dis))
	}
	if dis[4].Address != model.Instruction.PC || dis[4].Instruction != model.Instruction.Text || !strings.HasPrefix(dis[4].Symbol, "sum_prefix+") {
		t.Errorf("instruction at the pc = %+v, want %s %q in sum_prefix", dis[4], model.Instruction.PC, model.Instruction.Text)
	}
	if dis[4].Line != 16 || dis[4].Location == nil {
		t.Errorf("faulting instruction's line = %d (%+v), want 16", dis[4].Line, dis[4].Location)
	}
	info := c.ok("exceptionInfo", map[string]any{"threadId": stop.Body.ThreadId}).(*godap.ExceptionInfoResponse).Body
	if info.ExceptionId != "null-deref" || info.Details == nil || !strings.Contains(info.Details.Message, "Evidence") ||
		!strings.Contains(info.Details.StackTrace, "#0 value_of at null_inline.cpp:16") {
		t.Errorf("exceptionInfo = %+v %+v", info, info.Details)
	}
	for _, cmd := range []string{"continue", "next", "stepIn", "stepOut", "pause"} {
		r := c.request(cmd, map[string]any{"threadId": stop.Body.ThreadId})
		if r.GetResponse().Success || !strings.Contains(r.GetResponse().Message, "post-mortem: the process is not running") {
			t.Errorf("%s = %+v, want the post-mortem refusal", cmd, r.GetResponse())
		}
	}
	c.ok("disconnect", nil)
}

func findVar(t *testing.T, vs []godap.Variable, name string) godap.Variable {
	t.Helper()
	for _, v := range vs {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no variable %q in %+v", name, vs)
	return godap.Variable{}
}

// TestGPUCore: a GPU core dump's faulting lane is a thread, listed first
// and named as LLDB names it, with its inline chain as frames, innermost
// first, and its registers; the dump's other lanes follow.
func TestGPUCore(t *testing.T) {
	core, err := filepath.Abs("../testdata/cuda/cores/illegal_address.sm_80.nvcudmp.gz")
	if err != nil {
		t.Fatal(err)
	}
	model, err := analysis.Open(core, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := model.GPU
	if g == nil || len(g.Frames) < 2 {
		t.Fatalf("the GPU core has no inline chain: %+v", g)
	}
	c := newTestClient(t)
	stop := c.launch(map[string]any{"coreFile": core})
	threads := c.ok("threads", nil).(*godap.ThreadsResponse).Body.Threads
	if stop.Body.ThreadId != gpuThreadID || threads[0].Id != gpuThreadID || len(threads) != g.ThreadCount ||
		threads[0].Name != "blockIdx(x=2 y=0 z=0) threadIdx(x=101 y=0 z=0): fl::load_global<int> (Warp Illegal Address)" {
		t.Fatalf("stop on %d, threads %+v: want the %d GPU lanes, the faulting one (%d) first, named as LLDB names it",
			stop.Body.ThreadId, threads, g.ThreadCount, gpuThreadID)
	}
	st := c.ok("stackTrace", map[string]any{"threadId": gpuThreadID}).(*godap.StackTraceResponse).Body
	if st.TotalFrames != len(g.Frames) {
		t.Fatalf("%d frames, want the %d levels of the inline chain", st.TotalFrames, len(g.Frames))
	}
	for i, f := range st.StackFrames {
		if f.Name != g.Frames[i].Function || f.Line != g.Frames[i].Line {
			t.Errorf("frame %d = %s:%d, want %s:%d", i, f.Name, f.Line, g.Frames[i].Function, g.Frames[i].Line)
		}
	}
	scopes := c.ok("scopes", map[string]any{"frameId": st.StackFrames[0].Id}).(*godap.ScopesResponse).Body.Scopes
	vars := c.ok("variables", map[string]any{"variablesReference": scopes[0].VariablesReference}).(*godap.VariablesResponse).Body.Variables
	if len(vars) != 0 {
		t.Errorf("GPU frame variables = %+v, want none (no device memory values)", vars)
	}
	if len(scopes) != 3 || scopes[2].Name != "Registers" {
		t.Fatalf("scopes %+v, want the lane's registers", scopes)
	}
	regs := c.ok("variables", map[string]any{"variablesReference": scopes[2].VariablesReference}).(*godap.VariablesResponse).Body.Variables
	if v := findVar(t, regs, "errorPC"); v.Value != g.ErrorPC {
		t.Errorf("errorPC register %q, want %s", v.Value, g.ErrorPC)
	}
	c.ok("disconnect", nil)
}

// TestPythonFrames: Python frames stay interleaved with the native ones,
// each with its .py file and line.
func TestPythonFrames(t *testing.T) {
	core, err := filepath.Abs("../testdata/python/cores/crash_ctypes.debian.faulthandler.txt")
	if err != nil {
		t.Fatal(err)
	}
	model, err := analysis.Open(core, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t)
	stop := c.launch(map[string]any{"coreFile": core, "workspaceFolders": []string{filepath.Dir(filepath.Dir(core))}})
	st := c.ok("stackTrace", map[string]any{"threadId": stop.Body.ThreadId}).(*godap.StackTraceResponse).Body
	var th *analysis.Thread
	for i := range model.Threads {
		if model.Threads[i].ID == stop.Body.ThreadId {
			th = &model.Threads[i]
		}
	}
	if th == nil || len(st.StackFrames) != len(th.Frames) {
		t.Fatalf("stack of %d frames, model thread %+v", len(st.StackFrames), th)
	}
	py := 0
	for i, f := range th.Frames {
		if f.Language != "python" {
			continue
		}
		py++
		got := st.StackFrames[i]
		if got.Name != f.Function || got.Line != f.Line || got.Source == nil || filepath.Base(got.Source.Path) != filepath.Base(f.File) {
			t.Errorf("python frame %d = %+v (source %+v), want %s %s:%d", i, got, got.Source, f.Function, f.File, f.Line)
		}
	}
	if py == 0 {
		t.Fatal("no Python frames in the faulthandler log's model")
	}
	c.ok("disconnect", nil)
}

// TestBadRequests: unknown commands and arguments of the wrong type get
// error responses (the session goes on), requests before launch say so.
func TestBadRequests(t *testing.T) {
	c := newTestClient(t)
	c.ok("initialize", map[string]any{"adapterID": "faultline"})
	if r := c.request("stackTrace", map[string]any{"threadId": 1}); r.GetResponse().Success || !strings.Contains(r.GetResponse().Message, "launch") {
		t.Errorf("stackTrace before launch = %+v", r.GetResponse())
	}
	if r := c.request("launch", map[string]any{"coreFile": "/nonexistent/core"}); r.GetResponse().Success {
		t.Error("launch of a missing core succeeded")
	}
	if r := c.request("launch", map[string]any{}); r.GetResponse().Success || !strings.Contains(r.GetResponse().Message, "coreFile") {
		t.Errorf("launch without coreFile = %+v", r.GetResponse())
	}
	if r := c.request("frobnicate", nil); r.GetResponse().Success || !strings.Contains(r.GetResponse().Message, "frobnicate") {
		t.Errorf("unknown request = %+v", r.GetResponse())
	}
	if r := c.request("stackTrace", map[string]any{"threadId": "one"}); r.GetResponse().Success || !strings.Contains(r.GetResponse().Message, "bad arguments") {
		t.Errorf("stackTrace with a string threadId = %+v", r.GetResponse())
	}
	c.ok("threads", nil) // still serving
}
