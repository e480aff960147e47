package realworld_test

import (
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/classify"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/analysis/report"
)

// openJIT crashes the jit program (threads spinning in anonymous
// executable memory) and opens its core.
func openJIT(t *testing.T) (bin, core string, c *model.Crash) {
	t.Helper()
	bin = buildOnce(t, "jit", "gcc", []string{"jit.c"}, "-O1", "-g", "-pthread")
	core, _ = crashlab.Crash(t, t.TempDir(), "", bin)
	c, err := analysis.Open(core, analysis.Options{Exe: bin})
	if err != nil {
		t.Fatal(err)
	}
	return bin, core, c
}

// TestThreadsAtDifferentUnknownPCs: threads in JIT code at different
// addresses are not merged into one group by the reports (they were, as
// every frame read "??"); threads at the same address are. Their frames
// equal gdb's, the JIT frames "??" with no module.
func TestThreadsAtDifferentUnknownPCs(t *testing.T) {
	bin, core, c := openJIT(t)
	if d := crashlab.CompareWithGDB(crashlab.GDB(t, bin, core), c); d != "" {
		t.Errorf("frames differ from gdb:\n%s", d)
	}
	var sizes []int
	for _, g := range report.GroupThreads(c) {
		sizes = append(sizes, len(g.Threads))
		f := g.Threads[0].Frames[0]
		if !g.Threads[0].Crashed && (f.Function != "" || f.Module != "") {
			t.Errorf("JIT frame %+v has a function or module", f)
		}
	}
	if len(sizes) != 3 || sizes[0] != 1 || sizes[1] != 2 || sizes[2] != 1 {
		t.Errorf("thread groups of sizes %v, want [1 2 1] (crashed, two threads at one JIT pc, one at another)", sizes)
	}
	if strings.Contains(c.Classification.Signature, "0x") {
		t.Errorf("signature %q has an address", c.Classification.Signature)
	}
}

// TestManyCoresFromDifferentPrograms: cores of two programs are grouped by
// program first; the set is not called non-deterministic (a data race)
// because the programs differ.
func TestManyCoresFromDifferentPrograms(t *testing.T) {
	_, _, jit1 := openJIT(t)
	_, _, jit2 := openJIT(t)
	bin := buildOnce(t, "nostdlib-DIN_START", "gcc", []string{"nostdlib.c"}, "-nostdlib", "-static", "-O1", "-g", "-DIN_START")
	core, _ := crashlab.Crash(t, t.TempDir(), "", bin)
	other, err := analysis.Open(core, analysis.Options{Exe: bin})
	if err != nil {
		t.Fatal(err)
	}
	set := classify.GroupCrashes([]*model.Crash{jit1, other, jit2})
	if set.Determinism != classify.Deterministic || strings.Contains(set.Verdict, "race") {
		t.Errorf("determinism %q, verdict %q; want deterministic (jit crashes the same way twice), no race", set.Determinism, set.Verdict)
	}
	if len(set.Programs) != 2 || set.Programs[0] != "jit ×2" || set.Programs[1] != "nostdlib-DIN_START ×1" {
		t.Errorf("programs %q", set.Programs)
	}
	if len(set.Groups) != 2 || set.Groups[0].Program != "jit" || len(set.Groups[0].Dumps) != 2 {
		t.Errorf("groups %+v", set.Groups)
	}
	var b strings.Builder
	if err := report.MarkdownSet(&b, set); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "**Programs:** jit ×2, nostdlib-DIN_START ×1") {
		t.Errorf("markdown set report does not list the programs:\n%s", b.String()[:min(b.Len(), 600)])
	}
}
