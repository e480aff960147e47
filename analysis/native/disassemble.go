package native

import (
	"debug/elf"

	"github.com/faultline-dev/faultline/analysis/disasm"
)

// Disassemble lists up to before instructions ahead of pc, the instruction
// at pc, and up to after instructions following it, decoding from the start
// of pc's function (x86 cannot be decoded backwards).
func (p *Process) Disassemble(pc uint64, before, after int) []disasm.Instruction {
	if p.core.Machine == elf.EM_AARCH64 {
		return p.disassembleARM64(pc, before, after)
	}
	start := pc
	if _, low := p.symbolFor(pc); low != 0 && low <= pc && pc-low < 1<<16 {
		start = low
	}
	code := make([]byte, pc-start+uint64(after+1)*15)
	n, _ := p.ReadMemory(start, code)
	all := disasm.WindowMode(code[:n], start, pc+uint64(after+1)*15, 1<<16, p.symbolFor, p.x86Mode())
	at := -1
	for i, in := range all {
		if in.PC == pc {
			at = i
			break
		}
	}
	if at < 0 {
		return nil
	}
	lo := max(0, at-before)
	hi := min(len(all), at+after+1)
	return all[lo:hi]
}
