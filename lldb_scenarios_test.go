package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis/cuda/cudacoretest"
	"github.com/faultline-dev/faultline/analysis/model"
)

// TestAnalyzeLLDBScenarios runs `faultline analyze` (JSON and markdown) on
// the core of every test method of LLDB's nvgpu-core tests
// (cudacoretest.Scenarios) and checks what the method asserts: a refused
// core exits 1 naming the reason; otherwise the JSON's gpu section has
// LLDB's threads, names, stop reasons, selected thread, exception,
// errorPC, frame, coordinates, launch dimensions, registers and rows
// (Want.Check), and the markdown report names the faulting thread as LLDB
// does and lists the aggregated rows.
func TestAnalyzeLLDBScenarios(t *testing.T) {
	fx, err := cudacoretest.NewFixture("testdata/cuda/cubins")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, sc := range cudacoretest.Scenarios(fx) {
		t.Run(sc.Name(), func(t *testing.T) {
			core, err := sc.Core.Build()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, sc.Method+".nvcudmp")
			if err := os.WriteFile(path, core, 0o644); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := runBinary(t, nil, "analyze", "--json", "--offline", path)
			if len(sc.Want.Refused) > 0 {
				if code != 1 || !containsAll(errOut, sc.Want.Refused) {
					t.Errorf("exit %d, stderr %q: want a refusal naming %q", code, errOut, sc.Want.Refused)
				}
				return
			}
			var c model.Crash
			if err := json.Unmarshal([]byte(out), &c); code != 0 || err != nil {
				t.Fatalf("exit %d (%v): %s", code, err, errOut)
			}
			for _, d := range sc.Want.Check(&c) {
				t.Error(d)
			}
			md, errOut, code := runBinary(t, nil, "analyze", "--offline", path)
			if code != 0 {
				t.Fatalf("markdown: exit %d: %s", code, errOut)
			}
			checkScenarioMarkdown(t, sc.Want, md)
		})
	}
}

func containsAll(s string, subs []string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

// checkScenarioMarkdown: the signal line names the exception, the
// faulting-thread line LLDB's stand-in name (or the lane's block and
// thread), and the GPU threads table has each of LLDB's rows.
func checkScenarioMarkdown(t *testing.T, w cudacoretest.Want, md string) {
	t.Helper()
	if !strings.Contains(md, "**GPU signal:** "+w.Exception) {
		t.Errorf("markdown names no %q signal:\n%s", w.Exception, md)
	}
	faulting := w.Selected
	if w.Block != nil {
		faulting = fmt.Sprintf("block (%d,%d,%d), thread (%d,%d,%d), SM %d", w.Block[0], w.Block[1], w.Block[2],
			w.Thread[0], w.Thread[1], w.Thread[2], w.SM)
	}
	if !strings.Contains(md, "**Faulting thread:** "+faulting) {
		t.Errorf("markdown faulting thread is not %q:\n%s", faulting, md)
	}
	for _, wt := range w.Threads {
		if len(w.Threads) <= 2 && !strings.Contains(md, "| 1 | "+wt.Name+" | "+orDash(wt.Stop)+" |") {
			t.Errorf("no GPU threads row for %q (%q):\n%s", wt.Name, wt.Stop, md)
		}
	}
	for _, r := range w.Rows {
		n, rest, _ := strings.Cut(r, " thread(s): ")
		label, stop, _ := strings.Cut(rest, ", stop reason = ")
		if !strings.Contains(md, "| "+n+" | "+label+" | "+stop+" |") {
			t.Errorf("no GPU threads row %q:\n%s", r, md)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
