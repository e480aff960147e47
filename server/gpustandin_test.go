package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/faultline-dev/faultline/analysis/cuda/cudacoretest"
	"github.com/faultline-dev/faultline/server"
)

// TestGPUStandIn opens the core of LLDB's TestNVGPUArtificialSMException.
// test_stand_ins_at_one_site_collapse_to_one_row (three SMs recording
// Device Illegal Address at one errorPC after their warps exited) and
// checks the editors' view: faultline/threads names the faulting thread
// and every GPU thread as LLDB does ("device 0 SM 0 (no kernel
// context)"), marks them stand-ins, and the errorPC's inline chain gets
// its diagnostics, with the stand-in in the summary.
func TestGPUStandIn(t *testing.T) {
	dir := cudaDir(t)
	fx, err := cudacoretest.NewFixture(filepath.Join(dir, "cubins"))
	if err != nil {
		t.Fatal(err)
	}
	var sc *cudacoretest.Scenario
	for _, s := range cudacoretest.Scenarios(fx) {
		if s.Method == "test_stand_ins_at_one_site_collapse_to_one_row" {
			sc = &s
		}
	}
	core, err := sc.Core.Build()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "standin.nvcudmp")
	if err := os.WriteFile(path, core, 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnvIn(t, dir, map[string]any{"cacheDir": t.TempDir(), "offline": true}, server.Options{})
	var sum server.OpenSummary
	if err := e.Execute(server.CommandOpen, map[string]string{"dump": path}, &sum); err != nil {
		t.Fatal(err)
	}
	threads, b := requestThreads(t, e)
	g := threads.GPU
	if g == nil || g.ThreadName != "device 0 SM 0 (no kernel context)" || !g.StandIn || g.ThreadCount != 3 ||
		len(g.Threads) != 3 || g.Threads[2].Name != "device 0 SM 2 (no kernel context)" || !g.Threads[2].StandIn ||
		g.Threads[2].StopReason != "CUDA Exception: Device Illegal Address" || !g.Threads[0].Selected || len(g.Frames) != 5 {
		t.Fatalf("faultline/threads gpu = %s", b)
	}
	access := uri.File(filepath.Join(dir, "src", "access.cuh"))
	d := diagnosticsByPosition(e, []uri.URI{access})["access.cuh:8"]
	if len(d) != 1 || d[0].Severity != protocol.DiagnosticSeverityError || !strings.Contains(message(d[0]), "Device Illegal Address") ||
		!strings.Contains(message(d[0]), "device 0 SM 0 (no kernel context)") {
		t.Errorf("access.cuh:8 diagnostics %+v", d)
	}
	if err := e.Shutdown(); err != nil {
		t.Error(err)
	}
}

// requestThreads answers faultline/threads, decoded and as sent.
func requestThreads(t *testing.T, e *Env) (server.ThreadsResult, []byte) {
	t.Helper()
	raw, err := e.Server.Request(e.ctx, server.MethodThreads, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(raw)
	var threads server.ThreadsResult
	if err := json.Unmarshal(b, &threads); err != nil {
		t.Fatal(err)
	}
	return threads, b
}
