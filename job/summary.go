package job

import (
	"path/filepath"

	"github.com/faultline-dev/faultline/analysis/model"
)

// SummarySchema is the value of Summary.Schema.
const SummarySchema = "faultline.rank-summary/v1"

// Summary is one rank's process, as `faultline analyze --json --summary`
// and `faultline hang --json --summary` print it: the crash model without
// its memory-derived bulk (modules, registers, instruction bytes, values),
// threads with identical call paths folded into one stack, frames listed
// once in a table, and the job object naming the rank.
type Summary struct {
	Schema string `json:"schema"`
	Job    Info   `json:"job"`
	Dump   struct {
		Path       string `json:"path"`
		Format     string `json:"format"`
		Executable string `json:"executable,omitempty"`
		PID        int    `json:"pid,omitempty"`
		Command    string `json:"command,omitempty"`
	} `json:"dump"`
	Signal         *model.Signal `json:"signal,omitempty"`
	Crash          *CrashBrief   `json:"crash,omitempty"`
	CrashingThread int           `json:"crashingThread,omitempty"`
	ThreadCount    int           `json:"threadCount"`
	// Frames is the frame table the stacks index.
	Frames FrameTable `json:"frames"`
	// Stacks are the distinct call paths, each with the threads on it.
	Stacks   []Stack         `json:"stacks"`
	Problems []model.Problem `json:"problems,omitempty"`
}

// CrashBrief is the classification without its evidence and lock lists.
type CrashBrief struct {
	Kind      string `json:"kind"`
	Signature string `json:"signature,omitempty"`
	Summary   string `json:"summary,omitempty"`
	Message   string `json:"message,omitempty"`
}

// FrameTable is a summary's frames, indexed by its stacks.
type FrameTable []FrameRef

// FrameRef is one frame of the table: what a person reads in a backtrace.
type FrameRef struct {
	Function string `json:"function"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Module   string `json:"module,omitempty"`
	Language string `json:"language,omitempty"`
}

// Stack is one call path, innermost frame first, as indexes into the
// summary's frame table, with the threads that are on it.
type Stack struct {
	Threads []int `json:"threads"`
	Crashed bool  `json:"crashed,omitempty"`
	Frames  []int `json:"frames"`
	// Elided counts frames left out of the middle of a very deep path.
	Elided int `json:"elided,omitempty"`
}

// Caps that keep a summary small whatever the process looked like.
const (
	maxStackFrames  = 128 // innermost 96 and outermost 32 of deeper paths
	keepInnermost   = 96
	maxNameBytes    = 512
	maxProblems     = 16
	maxSummaryBytes = 64 << 10
)

// Summarize folds a crash model into a rank summary.
func Summarize(c *model.Crash, in Info) *Summary {
	s := &Summary{Schema: SummarySchema, Job: in, Signal: c.Signal, ThreadCount: len(c.Threads)}
	s.Dump.Path, s.Dump.Format, s.Dump.Executable = c.Dump.Path, c.Dump.Format, c.Dump.Executable
	s.Dump.PID, s.Dump.Command = c.Dump.PID, clip(c.Dump.Command)
	if s.Job.PID == 0 {
		s.Job.PID = c.Dump.PID
	}
	if cl := c.Classification; cl != nil {
		s.Crash = &CrashBrief{Kind: cl.Kind, Signature: clip(cl.Signature), Summary: clip(cl.Summary), Message: clip(cl.Message)}
	}
	if c.Signal != nil {
		s.CrashingThread = c.CrashingThreadID
	}
	frameIndex := map[FrameRef]int{}
	stackIndex := map[string]int{}
	for _, t := range c.Threads {
		ids := make([]int, 0, len(t.Frames))
		for _, f := range t.Frames {
			ref := frameRef(f)
			i, ok := frameIndex[ref]
			if !ok {
				i = len(s.Frames)
				frameIndex[ref] = i
				s.Frames = append(s.Frames, ref)
			}
			ids = append(ids, i)
		}
		key := stackKey(ids, t.Crashed)
		if i, ok := stackIndex[key]; ok {
			s.Stacks[i].Threads = append(s.Stacks[i].Threads, t.ID)
			continue
		}
		stackIndex[key] = len(s.Stacks)
		st := Stack{Threads: []int{t.ID}, Crashed: t.Crashed, Frames: ids}
		if len(ids) > maxStackFrames {
			st.Elided = len(ids) - maxStackFrames
			st.Frames = append(ids[:keepInnermost:keepInnermost], ids[len(ids)-(maxStackFrames-keepInnermost):]...)
		}
		s.Stacks = append(s.Stacks, st)
	}
	for i, p := range c.Problems {
		if i == maxProblems {
			s.Problems = append(s.Problems, model.Problem{Message: "more problems left out of the summary"})
			break
		}
		s.Problems = append(s.Problems, model.Problem{Message: clip(p.Message), Module: p.Module})
	}
	return s
}

// bound applies Summarize's caps to a summary read back from a file,
// which may say anything: call paths of at most maxStackFrames (the
// middle of a deeper one elided), strings of at most maxNameBytes, at most
// maxProblems problems. The call-prefix tree is then at most
// maxStackFrames+1 deep, and the report's size follows the caps.
func (s *Summary) bound() {
	for i := range s.Stacks {
		st := &s.Stacks[i]
		if n := len(st.Frames); n > maxStackFrames {
			st.Elided = max(st.Elided, 0) + n - maxStackFrames
			st.Frames = append(st.Frames[:keepInnermost:keepInnermost], st.Frames[n-(maxStackFrames-keepInnermost):]...)
		}
	}
	for _, p := range []*string{&s.Dump.Path, &s.Dump.Format, &s.Dump.Executable, &s.Dump.Command,
		&s.Job.Hostname, &s.Job.JobID, &s.Job.StepID, &s.Job.Source} {
		*p = clip(*p)
	}
	if c := s.Crash; c != nil {
		c.Kind, c.Signature, c.Summary, c.Message = clip(c.Kind), clip(c.Signature), clip(c.Summary), clip(c.Message)
	}
	if sig := s.Signal; sig != nil {
		sig.Name, sig.Code, sig.Address = clip(sig.Name), clip(sig.Code), clip(sig.Address)
	}
	if len(s.Problems) > maxProblems {
		s.Problems = append(s.Problems[:maxProblems], model.Problem{Message: "more problems left out of the summary"})
	}
	for i := range s.Problems {
		s.Problems[i].Message, s.Problems[i].Module = clip(s.Problems[i].Message), clip(s.Problems[i].Module)
	}
}

func frameRef(f model.Frame) FrameRef {
	name := f.Function
	if name == "" {
		name = "??"
		if f.Module != "" {
			name = "?? (" + filepath.Base(f.Module) + ")"
		}
	}
	r := FrameRef{Function: clip(name), File: clip(f.File), Line: f.Line, Language: f.Language}
	if f.Module != "" {
		r.Module = clip(filepath.Base(f.Module))
	}
	return r
}

func stackKey(ids []int, crashed bool) string {
	b := make([]byte, 0, 4*len(ids)+1)
	if crashed {
		b = append(b, 'c')
	}
	for _, id := range ids {
		b = append(b, byte(id), byte(id>>8), byte(id>>16), byte(id>>24))
	}
	return string(b)
}

// clip caps a string from the dump at maxNameBytes.
func clip(s string) string {
	if len(s) <= maxNameBytes {
		return s
	}
	return s[:maxNameBytes] + "…"
}
