package dap

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	godap "github.com/google/go-dap"

	"github.com/faultline-dev/faultline/analysis/cuda/cudacoretest"
)

// TestLLDBScenarioThreads launches the core of every test method of LLDB's
// nvgpu-core tests (cudacoretest.Scenarios) and checks the adapter's view
// against what the method asserts: a refused core fails the launch with
// the reason; otherwise every thread LLDB makes is a DAP thread named as
// LLDB names it (then ": function (exception)"), the stop is on the thread
// LLDB selects, a stand-in for an SM-level exception has one physical
// frame, at its SM's errorPC, and the Registers scope of the stop's frame reads
// what LLDB's registers read.
func TestLLDBScenarioThreads(t *testing.T) {
	fx, err := cudacoretest.NewFixture("../testdata/cuda/cubins")
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range cudacoretest.Scenarios(fx) {
		t.Run(sc.Name(), func(t *testing.T) {
			core, err := sc.Core.Build()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), sc.Method+".nvcudmp")
			if err := os.WriteFile(path, core, 0o644); err != nil {
				t.Fatal(err)
			}
			c := newTestClient(t)
			if len(sc.Want.Refused) > 0 {
				checkRefusedLaunch(t, c, path, sc.Want.Refused)
				return
			}
			stop := c.launch(map[string]any{"coreFile": path})
			threads := c.ok("threads", nil).(*godap.ThreadsResponse).Body.Threads
			checkScenarioThreads(t, sc.Want, stop.Body.ThreadId, threads)
			checkStopFrame(t, c, sc.Want, stop.Body.ThreadId)
			checkGlobalMemory(t, c, sc.Want)
			c.ok("disconnect", nil)
		})
	}
}

func checkRefusedLaunch(t *testing.T, c *testClient, path string, why []string) {
	c.ok("initialize", map[string]any{"adapterID": "faultline"})
	c.event("initialized")
	r := c.request("launch", map[string]any{"coreFile": path}).GetResponse()
	if r.Success {
		t.Fatal("launch of a refused core succeeded")
	}
	for _, s := range why {
		if !strings.Contains(r.Message, s) {
			t.Errorf("launch failed with %q, want it to say %q", r.Message, s)
		}
	}
}

// lldbNamed is the thread whose name is LLDB's name (alone or followed by
// ": ..." or " (...)").
func lldbNamed(threads []godap.Thread, name string) *godap.Thread {
	for i := range threads {
		n := threads[i].Name
		if n == name || strings.HasPrefix(n, name+": ") || strings.HasPrefix(n, name+" (") {
			return &threads[i]
		}
	}
	return nil
}

func checkScenarioThreads(t *testing.T, w cudacoretest.Want, stopped int, threads []godap.Thread) {
	t.Helper()
	if len(threads) != len(w.Threads) {
		t.Errorf("%d threads %+v, want %d", len(threads), threads, len(w.Threads))
	}
	for _, wt := range w.Threads {
		th := lldbNamed(threads, wt.Name)
		if th == nil {
			t.Errorf("no thread named %q in %+v", wt.Name, threads)
			continue
		}
		if exc := strings.TrimPrefix(wt.Stop, "CUDA Exception: "); exc != "" && !strings.HasSuffix(th.Name, "("+exc+")") {
			t.Errorf("thread %q does not name its stop %q", th.Name, wt.Stop)
		}
	}
	if sel := lldbNamed(threads, w.Selected); sel == nil || sel.Id != stopped || threads[0].Id != stopped {
		t.Errorf("stopped on %d (threads %+v), want %q, listed first", stopped, threads, w.Selected)
	}
}

// checkStopFrame checks the stop's frames (one, at the errorPC, for a
// stand-in) and its registers.
func checkStopFrame(t *testing.T, c *testClient, w cudacoretest.Want, stopped int) {
	t.Helper()
	st := c.ok("stackTrace", map[string]any{"threadId": stopped}).(*godap.StackTraceResponse).Body
	if len(st.StackFrames) == 0 {
		t.Fatal("no frames")
	}
	f0 := st.StackFrames[0]
	// A stand-in's call stack is its errorPC alone: one physical frame,
	// whose inline levels (the fixture's errorPC is five levels deep) are
	// the DAP frames, all at that pc.
	for _, f := range st.StackFrames {
		if w.Lane == nil && w.FramePC != 0 && f.InstructionPointerReference != hex(w.FramePC) {
			t.Errorf("stand-in frame %+v is not at the errorPC %s", f, hex(w.FramePC))
		}
	}
	if w.Lane == nil && w.FramePC == 0 && st.TotalFrames != 1 {
		t.Errorf("stand-in without errorPC: frames %+v, want one", st.StackFrames)
	}
	if w.Function != "" && f0.Name != w.Function {
		t.Errorf("frame 0 is %q, want %q", f0.Name, w.Function)
	}
	scopes := c.ok("scopes", map[string]any{"frameId": f0.Id}).(*godap.ScopesResponse).Body.Scopes
	var regs []godap.Variable
	for _, s := range scopes {
		if s.Name == "Registers" {
			regs = c.ok("variables", map[string]any{"variablesReference": s.VariablesReference}).(*godap.VariablesResponse).Body.Variables
		}
	}
	for name, v := range w.Registers {
		found := false
		for _, r := range regs {
			if r.Name == name {
				found = r.Value == hex(v)
			}
		}
		if !found {
			t.Errorf("register %s does not read %s", name, hex(v))
		}
	}
	if w.OnlyRegisters && len(regs) != len(w.Registers) {
		t.Errorf("registers %+v, want only %d", regs, len(w.Registers))
	}
}

func hex(v uint64) string { return fmt.Sprintf("%#x", v) }

// checkGlobalMemory reads the scenario's global memory through readMemory.
func checkGlobalMemory(t *testing.T, c *testClient, w cudacoretest.Want) {
	t.Helper()
	for addr, want := range w.Memory {
		b := c.ok("readMemory", map[string]any{"memoryReference": hex(addr), "count": len(want)}).(*godap.ReadMemoryResponse).Body
		if got, _ := base64.StdEncoding.DecodeString(b.Data); string(got) != string(want) || b.UnreadableBytes != 0 {
			t.Errorf("readMemory %s = %x (%d unreadable), want %x", hex(addr), got, b.UnreadableBytes, want)
		}
	}
	for _, addr := range w.NoMemory {
		b := c.ok("readMemory", map[string]any{"memoryReference": hex(addr), "count": 4}).(*godap.ReadMemoryResponse).Body
		if b.Data != "" || b.UnreadableBytes != 4 {
			t.Errorf("readMemory %s = %q, want nothing readable", hex(addr), b.Data)
		}
	}
}
