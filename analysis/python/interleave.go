package python

import (
	"errors"
	"fmt"
	"strings"

	"github.com/faultline-dev/faultline/analysis/model"
)

// Language is model.Frame.Language for Python frames.
const Language = "python"

// evalLoop is the native function that runs Python frames: each of its
// physical frames ran one group of Python frames (up to an Entry frame).
const evalLoop = "_PyEval_EvalFrameDefault"

// Interleave reads the Python stacks of the process behind c and inserts
// each thread's Python frames into its native backtrace, each group just
// above the _PyEval_EvalFrameDefault frame that ran it, so that a thread
// reads from the crashing C function down through the Python call that
// reached it. Frames are renumbered. A process without CPython is left
// alone; an interpreter faultline cannot read becomes a problem. It should
// run before classification (which indexes the frames).
func Interleave(c *model.Crash, p Process) {
	s, err := ReadStacks(p)
	if errors.Is(err, ErrNoRuntime) {
		return
	}
	if err != nil {
		c.Problems = append(c.Problems, model.Problem{Message: err.Error()})
		return
	}
	byLWP := map[int]*Thread{}
	for i := range s.Threads {
		byLWP[s.Threads[i].NativeID] = &s.Threads[i]
	}
	for i := range c.Threads {
		th := &c.Threads[i]
		pt := byLWP[th.ID]
		if pt == nil || len(pt.Frames) == 0 {
			continue
		}
		var left int
		th.Frames, left = merge(th.Frames, pt.Frames)
		if left > 0 {
			c.Problems = append(c.Problems, model.Problem{Message: fmt.Sprintf(
				"thread %d: %d Python frames had no %s frame in the native backtrace; they are listed after it",
				th.ID, left, evalLoop)})
		}
		if pt.Err != nil {
			c.Problems = append(c.Problems, model.Problem{Message: fmt.Sprintf(
				"thread %d: the Python stack (CPython %s) stops early: %v", th.ID, s.Version, pt.Err)})
		}
	}
}

// merge inserts Python frames into native ones and returns how many Python
// frames found no evaluation-loop frame (appended at the end).
func merge(native []model.Frame, py []Frame) ([]model.Frame, int) {
	groups := splitGroups(py)
	out := make([]model.Frame, 0, len(native)+len(py))
	start := 0 // first level of the current physical frame
	for i, f := range native {
		if f.Inlined {
			continue
		}
		// native[start:i+1] is one physical frame: its inline levels, then it.
		if len(groups) > 0 && isEvalLoop(f.Function) {
			out = appendPython(out, groups[0], f)
			groups = groups[1:]
		}
		out = append(out, native[start:i+1]...)
		start = i + 1
	}
	out = append(out, native[start:]...)
	left := 0
	for _, g := range groups {
		left += len(g)
		out = appendPython(out, g, model.Frame{})
	}
	for i := range out {
		out[i].Index = i
	}
	return out, left
}

func isEvalLoop(fn string) bool {
	return fn == evalLoop || strings.HasPrefix(fn, evalLoop+".") // .cold, .isra parts
}

// splitGroups cuts a thread's Python frames into the groups that each
// evaluation-loop call ran, innermost first.
func splitGroups(py []Frame) [][]Frame {
	var groups [][]Frame
	start := 0
	for i, f := range py {
		if f.Entry {
			groups = append(groups, py[start:i+1])
			start = i + 1
		}
	}
	if start < len(py) {
		groups = append(groups, py[start:])
	}
	return groups
}

// appendPython appends model frames for Python frames; eval is the native
// frame that ran them (its pc and trust are theirs).
func appendPython(out []model.Frame, g []Frame, eval model.Frame) []model.Frame {
	for _, f := range g {
		out = append(out, model.Frame{
			PC: eval.PC, Addr: eval.Addr, CFA: eval.CFA, Trust: eval.Trust,
			Function: f.Function, File: f.File, Line: f.Line, Language: Language,
		})
	}
	return out
}
