package native

import (
	"slices"

	"github.com/faultline-dev/faultline/analysis/model"
)

// incomplete says what the cut of a truncated core removed that the
// crash's kind could rest on (nil for a whole core).
func (p *Process) incomplete() *model.Incomplete {
	t := p.core.Truncated
	if t == nil {
		return nil
	}
	in := &model.Incomplete{NotesCut: t.NotesCut}
	if ts := p.core.Threads; len(ts) > 0 {
		// After a stack overflow the stack pointer is below the stack's
		// mapping: the stack is the page above it.
		sp := ts[0].SP()
		in.CrashingStackAbsent = slices.Contains(t.StacksAbsent, ts[0].LWP) || t.CutAt(sp) || t.CutAt(sp+4096)
		in.FaultingCodeAbsent = t.CutAt(ts[0].PC())
	}
	return in
}
