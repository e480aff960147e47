package server

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/disasm"
)

// Hover shows a frame line's frame (LSP 3.17 §"Hover Request"): where it
// is, its registers (all of them for frame 0, the CFI-recovered ones above),
// the disassembly around its pc with the faulting instruction or the call
// marked, and argument and local values when a ValueReader can read them;
// on the culprit's line the classification and its evidence. A GPU inline
// level's line shows the GPU fault (gpu.go), and a line of a reviewed
// function in a fetched checkout the upstream commits that changed it, with
// their messages and hunks (upstream.go).
func (s *Server) Hover(_ context.Context, params *protocol.HoverParams) (*protocol.Hover, error) {
	v := s.current()
	if v == nil {
		return nil, nil
	}
	k := lineKey{docPath(params.TextDocument.URI), params.Position.Line}
	idx, gidx := v.byLine[k], v.gpuByLine[k]
	funcs := v.upstreamAt(k)
	if len(idx) == 0 && len(gidx) == 0 && len(funcs) == 0 {
		return nil, nil
	}
	v.memoMu.Lock()
	md, ok := v.hovers[k]
	v.memoMu.Unlock()
	if !ok {
		var parts []string
		if len(idx) > 0 {
			parts = append(parts, v.hoverMarkdown(idx))
		}
		if len(gidx) > 0 {
			parts = append(parts, v.gpuHoverMarkdown(gidx))
		}
		for _, f := range funcs {
			parts = append(parts, f.markdown())
		}
		md = strings.Join(parts, "\n---\n\n")
		v.memoMu.Lock()
		v.hovers[k] = md
		v.memoMu.Unlock()
	}
	h := &protocol.Hover{Contents: &protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: md}}
	switch {
	case len(idx) > 0:
		r := v.lineRange(v.sites[idx[0]])
		h.Range = &r
	case len(gidx) > 0:
		r := v.lineRange(v.gpu[gidx[0]].site)
		h.Range = &r
	}
	return h, nil
}

func (v *view) hoverMarkdown(idx []int) string {
	var b strings.Builder
	i := idx[0]
	st := v.sites[i]
	fr := st.frame
	state := ""
	if v.thread.Crashed {
		state = " (crashed)"
	}
	fmt.Fprintf(&b, "**#%d `%s`** · thread %d%s", fr.Index, funcName(fr), v.thread.ID, state)
	if v.thread.Name != "" {
		fmt.Fprintf(&b, " `%s`", v.thread.Name)
	}
	fmt.Fprintf(&b, " · `%s:%d`", fr.File, fr.Line)
	if fr.Column > 0 {
		fmt.Fprintf(&b, ":%d", fr.Column)
	}
	b.WriteString("\n\n")
	if i == v.culprit {
		fmt.Fprintf(&b, "⚡ %s\n\n", crashSummary(v))
		b.WriteString(classificationMarkdown(v.crash))
	}
	if len(idx) > 1 {
		fmt.Fprintf(&b, "Also on this line: %s.\n\n", strings.TrimPrefix(frameList(v, idx, 12), "frames "))
	}

	if fr.Language == "python" {
		// An interpreter-level frame: no machine state of its own.
		b.WriteString("Python frame")
		if fr.Module != "" {
			fmt.Fprintf(&b, " in `%s`", fr.Module)
		}
		b.WriteString("\n\n")
		b.WriteString(v.valuesMarkdown(i))
		return b.String()
	}
	phys := v.physical(i)
	pf := v.sites[phys].frame
	if chain := v.inlineChain(phys); len(chain) > 1 {
		fmt.Fprintf(&b, "Inline chain: %s\n\n", strings.Join(chain, " → "))
	}
	fmt.Fprintf(&b, "pc `%s`", pf.PC)
	if pf.Function != "" && pf.Offset != 0 {
		fmt.Fprintf(&b, " (`%s+%#x`)", pf.Function, pf.Offset)
	}
	if pf.Module != "" {
		fmt.Fprintf(&b, " in `%s`", filepath.Base(pf.Module))
	}
	fmt.Fprintf(&b, " · unwound by %s", trustText(pf.Trust))
	if pf.CFA != 0 {
		fmt.Fprintf(&b, " · CFA `%#x`", pf.CFA)
	}
	b.WriteString("\n\n")

	regs, origin := v.registers(phys)
	if len(regs) > 0 {
		fmt.Fprintf(&b, "**Registers** (%s)\n\n```text\n%s\n```\n\n", origin, registerBlock(regs))
	}
	if asm := v.disassembly(phys); asm != "" {
		fmt.Fprintf(&b, "**Disassembly**\n\n```asm\n%s```\n\n", asm)
	}
	b.WriteString(v.valuesMarkdown(i))
	return b.String()
}

// physical is the index of the physical frame holding frame i (inline
// levels precede the function they are inlined into).
func (v *view) physical(i int) int {
	for j := i; j < len(v.sites); j++ {
		if !v.sites[j].frame.Inlined {
			return j
		}
	}
	return i
}

// inlineChain lists the functions of the physical frame phys, innermost first.
func (v *view) inlineChain(phys int) []string {
	start := phys
	for start > 0 && v.sites[start-1].frame.Inlined {
		start--
	}
	var out []string
	for j := start; j <= phys; j++ {
		out = append(out, "`"+funcName(v.sites[j].frame)+"`")
	}
	return out
}

// registers are the known registers of physical frame phys and where they
// come from.
func (v *view) registers(phys int) (map[string]uint64, string) {
	fr := v.sites[phys].frame
	if fr.Trust == analysis.TrustContext || fr.Trust == analysis.TrustSignal {
		if len(fr.Regs) > 0 {
			return fr.Regs, "saved by the kernel in the core"
		}
		if in := v.crash.Instruction; in != nil && v.thread.ID == v.crash.CrashingThreadID {
			regs := map[string]uint64{}
			for name, val := range in.Registers {
				var x uint64
				if _, err := fmt.Sscanf(val, "0x%x", &x); err == nil {
					regs[name] = x
				}
			}
			return regs, "saved by the kernel in the core"
		}
		return nil, ""
	}
	return fr.Regs, "recovered by unwinding; callee-saved registers only"
}

// registerOrder is the order gdb's `info registers` uses, x86-64's then
// i386's (a crash has one architecture's names).
var registerOrder = []string{"rip", "rsp", "rbp", "rax", "rbx", "rcx", "rdx", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "eflags", "fs_base", "gs_base",
	"eip", "esp", "ebp", "eax", "ebx", "ecx", "edx", "esi", "edi"}

func registerBlock(regs map[string]uint64) string {
	var names []string
	seen := map[string]bool{}
	for _, r := range registerOrder {
		if _, ok := regs[r]; ok {
			names = append(names, r)
			seen[r] = true
		}
	}
	var rest []string
	for r := range regs {
		if !seen[r] {
			rest = append(rest, r)
		}
	}
	sort.Strings(rest)
	names = append(names, rest...)
	var b strings.Builder
	for i, r := range names {
		if i > 0 && i%3 == 0 {
			b.WriteByte('\n')
		} else if i > 0 {
			b.WriteString("  ")
		}
		fmt.Fprintf(&b, "%-7s %#-18x", r, regs[r])
	}
	return strings.TrimRight(b.String(), " ")
}

// disassembly lists instructions around the physical frame's pc: "=>" on
// the faulting (or interrupted) instruction of frame 0 and after a signal
// frame, "->" on the call instruction of a caller frame.
func (v *view) disassembly(phys int) string {
	fr := v.sites[phys].frame
	if fr.Addr == 0 {
		return ""
	}
	exact := fr.Trust == analysis.TrustContext || fr.Trust == analysis.TrustSignal
	var ins []disasm.Instruction
	if !v.src.withSession(func(s *analysis.Session) { ins = s.Disassemble(fr.Addr, 6, 3) }) || len(ins) == 0 {
		return ""
	}
	mark := -1
	for j, in := range ins {
		if in.PC == fr.Addr {
			mark = j
			if !exact {
				mark = j - 1
			}
			break
		}
	}
	var b strings.Builder
	for j, in := range ins {
		prefix := "   "
		if j == mark {
			prefix = "=> "
			if !exact {
				prefix = "-> "
			}
		}
		fmt.Fprintf(&b, "%s%#x  %s", prefix, in.PC, in.Text)
		if j == mark && exact && v.thread.ID == v.crash.CrashingThreadID && v.physical(0) == phys {
			if c := v.crash.Instruction; c != nil && c.EffectiveAddress != "" {
				fmt.Fprintf(&b, "    ; faulting %s of %s", c.Access, c.EffectiveAddress)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// valuesMarkdown lists frame i's arguments and locals.
func (v *view) valuesMarkdown(i int) string {
	if v.values == nil {
		return ""
	}
	vals, err := v.values.FrameValues(v.thread.ID, v.sites[i].frame.Index)
	if err != nil {
		return fmt.Sprintf("_Values: %v_\n", err)
	}
	if len(vals) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("**Values**\n\n")
	for _, val := range vals {
		kind := "local"
		if val.Argument {
			kind = "arg"
		}
		typ := ""
		if val.Type != "" {
			typ = " `" + val.Type + "`"
		}
		fmt.Fprintf(&b, "- %s `%s`%s = `%s`\n", kind, val.Name, typ, val.Text)
	}
	return b.String()
}

func trustText(t analysis.Trust) string {
	switch t {
	case analysis.TrustContext:
		return "the core's registers"
	case analysis.TrustCFI:
		return "call frame information"
	case analysis.TrustFramePointer:
		return "the frame-pointer chain"
	case analysis.TrustScan:
		return "stack scanning (may be wrong)"
	case analysis.TrustSignal:
		return "the signal frame's saved context"
	}
	return string(t)
}
