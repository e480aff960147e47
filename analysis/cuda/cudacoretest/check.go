package cudacoretest

import (
	"fmt"
	"slices"

	"github.com/faultline-dev/faultline/analysis/model"
)

// Check compares the crash model faultline made of the scenario's core
// (the gpu section, as `analyze --json` prints it) with what the LLDB
// test asserts, and returns each difference.
func (w Want) Check(c *model.Crash) []string {
	var diffs []string
	bad := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }
	g := c.GPU
	if g == nil {
		return []string{"no gpu section"}
	}
	if g.ThreadCount != len(w.Threads) || len(g.Threads) != len(w.Threads) {
		bad("%d threads (%d listed), want %d", g.ThreadCount, len(g.Threads), len(w.Threads))
	}
	var sel *model.GPUThread
	for i := range g.Threads {
		t := &g.Threads[i]
		if i < len(w.Threads) && (t.Name != w.Threads[i].Name || t.StopReason != w.Threads[i].Stop) {
			bad("thread %d is %q (stop %q), want %q (stop %q)", i, t.Name, t.StopReason, w.Threads[i].Name, w.Threads[i].Stop)
		}
		if t.Selected {
			sel = t
		}
	}
	if sel == nil || sel.Name != w.Selected || g.ThreadName != w.Selected {
		bad("selected thread %q (gpu.threadName %q), want %q", name(sel), g.ThreadName, w.Selected)
	}
	if g.Exception != w.Exception {
		bad("exception %q, want %q", g.Exception, w.Exception)
	}
	if w.HasErrorPC && g.ErrorPC != hex(w.ErrorPC) {
		bad("errorPC %s, want %s", g.ErrorPC, hex(w.ErrorPC))
	}
	if g.SM == nil || *g.SM != int(w.SM) {
		bad("sm %v, want %d", deref(g.SM), w.SM)
	}
	diffs = append(diffs, w.checkFrame(sel)...)
	diffs = append(diffs, w.checkPlace(g)...)
	diffs = append(diffs, w.checkRegisters(g)...)
	var rows []string
	for _, r := range g.ThreadRows {
		rows = append(rows, r.String())
	}
	for _, r := range w.Rows {
		if !slices.Contains(rows, r) {
			bad("no thread row %q in %q", r, rows)
		}
	}
	return diffs
}

// checkFrame compares the selected thread's frame 0.
func (w Want) checkFrame(sel *model.GPUThread) []string {
	if sel == nil {
		return nil
	}
	var diffs []string
	if sel.PC != hex(w.FramePC) {
		diffs = append(diffs, fmt.Sprintf("frame 0 pc %s, want %s", sel.PC, hex(w.FramePC)))
	}
	if w.Function != "" && (len(sel.Frames) == 0 || sel.Frames[0].Function != w.Function || sel.Function != w.Function) {
		diffs = append(diffs, fmt.Sprintf("frame 0 function %q (%d frames), want %q", sel.Function, len(sel.Frames), w.Function))
	}
	return diffs
}

// checkPlace compares block, thread, launch dimensions and lane.
func (w Want) checkPlace(g *model.GPU) []string {
	var diffs []string
	for _, f := range []struct {
		what string
		got  *model.Dim3
		want *[3]uint32
	}{{"block", g.Block, w.Block}, {"thread", g.Thread, w.Thread}, {"blockDim", g.BlockDim, w.BlockDim},
		{"gridDim", g.GridDim, w.GridDim}} {
		switch {
		case f.want == nil && f.got != nil:
			diffs = append(diffs, fmt.Sprintf("%s %s, want none", f.what, f.got))
		case f.want != nil && (f.got == nil || [3]uint32{f.got.X, f.got.Y, f.got.Z} != *f.want):
			diffs = append(diffs, fmt.Sprintf("%s %v, want %v", f.what, f.got, *f.want))
		}
	}
	if (w.Lane == nil) != (g.Lane == nil) || (w.Lane != nil && uint32(*g.Lane) != *w.Lane) {
		want := any(nil)
		if w.Lane != nil {
			want = *w.Lane
		}
		diffs = append(diffs, fmt.Sprintf("lane %v, want %v", deref(g.Lane), want))
	}
	if w.Lane == nil && (g.Warp != nil || !g.StandIn) {
		diffs = append(diffs, fmt.Sprintf("a stand-in with warp %v (standIn %v)", deref(g.Warp), g.StandIn))
	}
	return diffs
}

// checkRegisters compares the registers that must read.
func (w Want) checkRegisters(g *model.GPU) []string {
	var diffs []string
	for n, v := range w.Registers {
		if g.Registers[n] != hex(v) {
			diffs = append(diffs, fmt.Sprintf("register %s = %q, want %s", n, g.Registers[n], hex(v)))
		}
	}
	if w.OnlyRegisters && len(g.Registers) != len(w.Registers) {
		diffs = append(diffs, fmt.Sprintf("%d registers read (%v), want only %d", len(g.Registers), g.Registers, len(w.Registers)))
	}
	return diffs
}

func hex(v uint64) string { return fmt.Sprintf("%#x", v) }

func name(t *model.GPUThread) string {
	if t == nil {
		return ""
	}
	return t.Name
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
