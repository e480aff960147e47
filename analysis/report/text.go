// Package report renders the crash model for people (a terminal report) and
// for programs (JSON, schema faultline.crash/v1).
package report

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/faultline-dev/faultline/analysis/classify"
	"github.com/faultline-dev/faultline/analysis/model"
)

// Text writes the terminal report: the signal and faulting instruction, the
// crashing thread, then the other threads with identical stacks grouped.
func Text(w io.Writer, c *model.Crash) error {
	p := &printer{w: w}
	if c.Dump.Arch != "" {
		p.f("faultline: %s (%s, %s)\n", c.Dump.Path, c.Dump.Format, c.Dump.Arch)
	} else {
		p.f("faultline: %s (%s)\n", c.Dump.Path, c.Dump.Format)
	}
	if c.Dump.Executable != "" || c.Dump.PID != 0 {
		p.f("process:   pid %d  %s\n", c.Dump.PID, firstNonEmpty(c.Dump.Command, c.Dump.Executable))
	}
	if s := c.Signal; s != nil {
		p.f("signal:    %s", s.Name)
		if s.Code != "" {
			p.f(" (%s)", s.Code)
		}
		if s.Address != "" {
			p.f(" at address %s", s.Address)
		}
		if s.Sender != 0 {
			p.f(" sent by pid %d", s.Sender)
			if s.SenderUID != nil && s.Sender != c.Dump.PID {
				p.f(" (uid %d)", *s.SenderUID)
			}
		}
		p.f("\n")
	}
	if in := c.Instruction; in != nil {
		label := "faulting:"
		if cls := c.Classification; cls != nil && cls.Kind == model.KindKilled {
			label = "was at:  " // a sent signal: no instruction faulted
		}
		p.f("%-10s %s: %s", label, in.PC, in.Text)
		if in.EffectiveAddress != "" {
			p.f("    [%s %s]", in.Access, in.EffectiveAddress)
		}
		p.f("\n")
		if len(in.Registers) > 0 {
			p.f("           %s\n", registerLine(in.Registers))
		}
	}
	if c.GPU != nil {
		gpuText(p, c.GPU)
	}
	verdictText(p, c)
	p.f("threads:   %d\n\n", len(c.Threads))

	for _, g := range GroupThreads(c) {
		t := g.Threads[0]
		switch {
		case t.Crashed:
			p.f("Thread %d (crashed):\n", t.ID)
		case len(g.Threads) == 1:
			p.f("Thread %d:\n", t.ID)
		default:
			ids := make([]string, 0, len(g.Threads))
			for _, o := range g.Threads {
				ids = append(ids, fmt.Sprint(o.ID))
			}
			p.f("%d threads with this stack: %s\n", len(g.Threads), abbreviate(ids, 12))
		}
		for _, fr := range t.Frames {
			p.f("  %s\n", FrameLine(fr))
		}
		if t.Truncated != "" {
			p.f("  (backtrace stopped: %s)\n", t.Truncated)
		}
		p.f("\n")
	}
	if len(c.Problems) > 0 {
		p.f("problems:\n")
		for _, pr := range c.Problems {
			if pr.Module != "" {
				p.f("  - %s: %s\n", filepath.Base(pr.Module), pr.Message)
			} else {
				p.f("  - %s\n", pr.Message)
			}
		}
	}
	return p.err
}

// verdictText writes the classification: kind, context and the summary.
func verdictText(p *printer, c *model.Crash) {
	cls := c.Classification
	if cls == nil {
		return
	}
	p.f("kind:      %s%s\n", cls.Kind, reraisedNote(cls))
	if c.GPU == nil {
		p.f("context:   %s\n", contextLine(cls))
	}
	if cls.Summary != "" {
		p.f("verdict:   %s\n", cls.Summary)
	}
}

// FrameLine formats one frame like gdb's bt: "#3  0x... in f at file.c:12".
func FrameLine(fr model.Frame) string {
	if fr.Function == model.SignalFrameName {
		return fmt.Sprintf("#%-3d %s", fr.Index, fr.Function)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#%-3d ", fr.Index)
	if !fr.Inlined && fr.PC != "" {
		fmt.Fprintf(&b, "%s in ", fr.PC)
	} else {
		b.WriteString(strings.Repeat(" ", len(fr.PC)) + "    ")
	}
	fn := fr.Function
	if fn == "" {
		fn = "??"
	}
	b.WriteString(fn)
	if fr.File != "" {
		fmt.Fprintf(&b, " at %s:%d", fr.File, fr.Line)
	} else if fr.Module != "" {
		fmt.Fprintf(&b, " from %s", fr.Module)
	}
	if fr.Inlined {
		b.WriteString("  [inlined]")
	}
	if fr.Trust != model.TrustCFI && fr.Trust != model.TrustContext && fr.Trust != "" {
		fmt.Fprintf(&b, "  [%s]", fr.Trust)
	}
	return b.String()
}

// ThreadGroup is a set of threads whose stacks are identical.
type ThreadGroup struct {
	Threads []model.Thread
}

// GroupThreads groups threads with identical stacks (same functions and
// lines), the crashing thread alone and first, then larger groups first.
func GroupThreads(c *model.Crash) []ThreadGroup {
	var groups []ThreadGroup
	index := map[string]int{}
	for _, t := range c.Threads {
		if t.Crashed {
			groups = append([]ThreadGroup{{Threads: []model.Thread{t}}}, groups...)
			for k := range index {
				index[k]++
			}
			continue
		}
		key := stackKey(t)
		if i, ok := index[key]; ok {
			groups[i].Threads = append(groups[i].Threads, t)
			continue
		}
		index[key] = len(groups)
		groups = append(groups, ThreadGroup{Threads: []model.Thread{t}})
	}
	start := 0
	if len(groups) > 0 && groups[0].Threads[0].Crashed {
		start = 1
	}
	rest := groups[start:]
	sort.SliceStable(rest, func(i, j int) bool { return len(rest[i].Threads) > len(rest[j].Threads) })
	return groups
}

// stackKey is what threads grouped together share: every frame's
// function, line and module, and for a frame of unknown function (JIT
// code, a stripped library) its pc, so that different code never merges.
func stackKey(t model.Thread) string {
	var b strings.Builder
	for _, f := range t.Frames {
		fmt.Fprintf(&b, "%s|%s|%d|%s", f.Function, f.File, f.Line, f.Module)
		if f.Function == "" {
			fmt.Fprintf(&b, "|%s", f.PC)
		}
		b.WriteByte(';')
	}
	return b.String()
}

func registerLine(regs map[string]string) string {
	order := []string{"rip", "rsp", "rbp", "rax", "rbx", "rcx", "rdx", "rsi", "rdi",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
		"eip", "esp", "ebp", "eax", "ebx", "ecx", "edx", "esi", "edi"} // x86-64, then i386
	var parts []string
	for _, r := range order {
		if v, ok := regs[r]; ok {
			parts = append(parts, r+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

func abbreviate(ids []string, n int) string {
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:n], ", ") + fmt.Sprintf(", … (+%d)", len(ids)-n)
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

type printer struct {
	w   io.Writer
	err error
}

// f prints with control characters from the dump escaped (escapeControls).
func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = io.WriteString(p.w, escapeControls(fmt.Sprintf(format, args...)))
	}
}

// TextSet writes the terminal report of several dumps: the determinism
// verdict and the signature groups (as MarkdownSet gives them), then each
// group's first crash as Text prints it.
func TextSet(w io.Writer, s *classify.Set) error {
	p := &printer{w: w}
	p.f("faultline: %d dumps\n", len(s.Crashes))
	p.f("determinism: %s — %s\n", s.Determinism, s.Verdict)
	if len(s.Programs) > 0 {
		p.f("programs:  %s\n", strings.Join(s.Programs, ", "))
	}
	p.f("\n")
	for i, g := range s.Groups {
		sig := g.Signature
		if g.Program != "" {
			sig = g.Program + ": " + sig
		}
		p.f("group %d: %d × %s  [%s]", i+1, len(g.Dumps), sig, g.Kind)
		if g.Culprit != "" {
			p.f(" in %s", g.Culprit)
		}
		p.f("\n  dumps: %s\n", abbreviate(baseNames(g.Dumps), 12))
	}
	for _, f := range s.Findings {
		p.f("%s: %s\n", f.Kind, f.Summary)
	}
	for _, f := range s.Failed {
		p.f("could not open %s: %s\n", f.Dump, f.Error)
	}
	for i, g := range s.Groups {
		if p.err != nil {
			break
		}
		which := "its one dump"
		if len(g.Dumps) > 1 {
			which = fmt.Sprintf("the first of its %d dumps", len(g.Dumps))
		}
		p.f("\n== group %d of %d: %s (%s)\n", i+1, len(s.Groups), g.Signature, which)
		p.err = Text(w, g.Crashes[0])
	}
	return p.err
}

// baseNames are the paths' file names, sorted.
func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, d := range paths {
		out[i] = filepath.Base(d)
	}
	sort.Strings(out)
	return out
}
