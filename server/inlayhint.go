package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/faultline-dev/faultline/internal/lazyregexp"
	"go.lsp.dev/protocol"
)

// operandRegister finds the registers of an AT&T memory operand, e.g.
// "rdi" in "0x8(%rdi)".
var operandRegister = lazyregexp.New(`%([a-z0-9]+)`)

// InlayHint annotates the culprit line (LSP 3.17 §"Inlay Hint Request"):
// the faulting access with the register values its address came from, and
// the culprit frame's argument values when a ValueReader can read them.
func (s *Server) InlayHint(_ context.Context, params *protocol.InlayHintParams) ([]protocol.InlayHint, error) {
	v := s.current()
	if v == nil || v.culprit < 0 || v.culprit >= len(v.sites) {
		return nil, nil
	}
	st := v.sites[v.culprit]
	if st.path == "" || st.path != docPath(params.TextDocument.URI) {
		return nil, nil
	}
	if st.line < params.Range.Start.Line || st.line > params.Range.End.Line {
		return nil, nil
	}
	pos := v.endOfLine(st)
	yes := true
	var hints []protocol.InlayHint
	if label := v.faultHint(); label != "" {
		hints = append(hints, protocol.InlayHint{
			Position:    pos,
			Label:       protocol.String(label),
			PaddingLeft: &yes,
			Tooltip:     protocol.String(crashSummary(v)),
		})
	}
	if v.values != nil {
		vals, err := v.values.FrameValues(v.thread.ID, st.frame.Index)
		if err == nil {
			var parts []string
			for _, val := range vals {
				if val.Argument {
					parts = append(parts, val.Name+" = "+val.Text)
				}
			}
			if len(parts) > 0 {
				hints = append(hints, protocol.InlayHint{
					Position:    pos,
					Label:       protocol.String(funcName(st.frame) + "(" + strings.Join(parts, ", ") + ")"),
					Kind:        protocol.InlayHintKindParameter,
					PaddingLeft: &yes,
				})
			}
		}
	}
	return hints, nil
}

// faultHint describes the faulting access when the culprit is in the
// physical frame that faulted: "read 0x8 via 0x8(%rdi): rdi = 0x0".
func (v *view) faultHint() string {
	in := v.crash.Instruction
	if in == nil || v.thread.ID != v.crash.CrashingThreadID || v.physical(v.culprit) != v.physical(0) {
		return ""
	}
	if in.EffectiveAddress == "" {
		return "at " + in.Text
	}
	access := in.Access
	if access == "" {
		access = "access"
	}
	s := fmt.Sprintf("%s %s", access, in.EffectiveAddress)
	if in.MemoryOperand == "" {
		return s
	}
	s += " via " + in.MemoryOperand
	var regs []string
	seen := map[string]bool{}
	for _, m := range operandRegister.FindAllStringSubmatch(in.MemoryOperand, -1) {
		if val, ok := in.Registers[m[1]]; ok && !seen[m[1]] {
			seen[m[1]] = true
			regs = append(regs, m[1]+" = "+val)
		}
	}
	if len(regs) > 0 {
		s += ": " + strings.Join(regs, ", ")
	}
	return s
}
