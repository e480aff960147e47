package disasm

import (
	"golang.org/x/arch/x86/x86asm"
)

// CallArguments returns the constant values that the instructions ending
// at callEnd, the return address of a call, put in registers before the
// call: `lea DISP(%rip), %reg` (an address in the binary: a string
// literal) and `mov $IMM, %reg`, by their 64-bit names ("rdi", "rsi",
// "rdx", "rcx", "r8", "r9"). code holds the bytes before callEnd (up to
// 64 are useful). x86 code cannot be decoded backwards, so it decodes
// forward from each start in turn and keeps the first sequence that ends
// exactly at callEnd with a call. A start inside an instruction can
// decode garbage that still falls into step before the call, losing the
// instructions it swallowed, so of the sequences that reach the call the
// one that finds the most constants wins (the earliest on a tie); nil
// when none reaches it.
func CallArguments(code []byte, callEnd uint64) map[string]uint64 {
	start := callEnd - uint64(len(code))
	var best map[string]uint64
	for skip := 0; skip+2 <= len(code); skip++ {
		regs, ok := constantsBefore(code[skip:], start+uint64(skip), callEnd)
		if ok && (best == nil || len(regs) > len(best)) {
			best = regs
		}
	}
	return best
}

// constantsBefore decodes code (at pc) up to callEnd and tracks the
// registers holding constants; ok when the last instruction is a call
// ending at callEnd.
func constantsBefore(code []byte, pc, callEnd uint64) (map[string]uint64, bool) {
	regs := map[string]uint64{}
	for len(code) > 0 {
		inst, err := x86asm.Decode(code, 64)
		if err != nil {
			return nil, false
		}
		next := pc + uint64(inst.Len)
		if next == callEnd {
			return regs, inst.Op == x86asm.CALL
		}
		if next > callEnd || inst.Op == x86asm.CALL || inst.Op == x86asm.RET || inst.Op == x86asm.JMP {
			return nil, false
		}
		trackConstant(inst, next, regs)
		code, pc = code[inst.Len:], next
	}
	return nil, false
}

// trackConstant records what inst writes to a register: a constant for
// lea of a rip-relative address and mov of an immediate, unknown (deleted)
// otherwise.
func trackConstant(inst x86asm.Inst, next uint64, regs map[string]uint64) {
	dst, ok := inst.Args[0].(x86asm.Reg)
	if !ok {
		return
	}
	name, _ := reg64(dst)
	if name == "" {
		return
	}
	delete(regs, name)
	switch src := inst.Args[1].(type) {
	case x86asm.Mem:
		if inst.Op == x86asm.LEA && src.Base == x86asm.RIP && src.Index == 0 {
			disp := src.Disp
			if disp >= 1<<31 && disp < 1<<32 {
				disp = int64(int32(uint32(disp)))
			}
			regs[name] = next + uint64(disp)
		}
	case x86asm.Imm:
		if inst.Op == x86asm.MOV {
			regs[name] = uint64(src)
		}
	}
}
