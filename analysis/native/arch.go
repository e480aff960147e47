package native

import (
	"debug/elf"
	"fmt"

	"github.com/faultline-dev/faultline/analysis/disasm"
	"github.com/faultline-dev/faultline/analysis/elfcore"
	"github.com/faultline-dev/faultline/analysis/unwind"
)

// The per-architecture parts of opening an ELF core: what the model calls
// the architecture, a thread's registers by gdb's names, the unwinder's
// starting register file, and the decoder of the faulting instruction.

// archName is the model's name for an ELF machine ("x86_64", "aarch64",
// "i386").
func archName(m elf.Machine) string {
	switch m {
	case elf.EM_X86_64:
		return "x86_64"
	case elf.EM_AARCH64:
		return "aarch64"
	case elf.EM_386:
		return "i386"
	}
	return m.String()
}

// supportedMachine reports whether cores of machine m can be analyzed.
func supportedMachine(m elf.Machine) bool {
	return m == elf.EM_X86_64 || m == elf.EM_AARCH64 || m == elf.EM_386
}

// unwindArch is the unwinder's description of machine m.
func unwindArch(m elf.Machine) *unwind.Arch {
	switch m {
	case elf.EM_AARCH64:
		return unwind.ARM64
	case elf.EM_386:
		return unwind.I386
	}
	return unwind.AMD64
}

// wordSize is the size of a pointer in the crashed process: 4 for i386.
func (p *Process) wordSize() int { return unwindArch(p.core.Machine).PtrSize }

// x86Mode is the x86 decoding mode of the core's process: 32 for i386.
func (p *Process) x86Mode() int {
	if p.core.Machine == elf.EM_386 {
		return 32
	}
	return 64
}

// threadRegs returns a thread's registers by gdb's names and the register
// file the unwinder starts from; ok is false when the core has none.
func threadRegs(t *elfcore.Thread) (named map[string]uint64, start unwind.Regs, ok bool) {
	if r, ok := t.X86_64(); ok {
		named = x86Named(r)
		return named, unwind.NewX86_64Regs(r.Rip, r.Rsp, r.Rbp, named), true
	}
	if r, ok := t.AArch64(); ok {
		named = arm64Named(r)
		return named, unwind.ARM64.RegsFromNamed(named), true
	}
	if r, ok := t.I386(); ok {
		named = i386Named(r)
		return named, unwind.I386.RegsFromNamed(named), true
	}
	return nil, unwind.Regs{}, false
}

// i386Named names the i386 registers as gdb does.
func i386Named(r elfcore.I386Regs) map[string]uint64 {
	return map[string]uint64{
		"eax": r.Eax, "ecx": r.Ecx, "edx": r.Edx, "ebx": r.Ebx, "esp": r.Esp, "ebp": r.Ebp,
		"esi": r.Esi, "edi": r.Edi, "eip": r.Eip, "eflags": r.Eflags, "cs": r.Cs, "ss": r.Ss,
		"ds": r.Ds, "es": r.Es, "fs": r.Fs, "gs": r.Gs, "orig_eax": r.OrigEax,
	}
}

// arm64Named names the AArch64 registers as gdb does: x0..x30, sp, pc and
// cpsr (pstate).
func arm64Named(r elfcore.AArch64Regs) map[string]uint64 {
	m := make(map[string]uint64, 34)
	for i, v := range r.X {
		m[fmt.Sprintf("x%d", i)] = v
	}
	m["sp"], m["pc"], m["cpsr"] = r.Sp, r.Pc, r.Pstate
	return m
}

// pcOf is the program counter in a named register set.
func pcOf(named map[string]uint64) uint64 {
	if pc, ok := named["rip"]; ok {
		return pc
	}
	if pc, ok := named["eip"]; ok {
		return pc
	}
	return named["pc"]
}

// decodeAt decodes the instruction at pc with the thread's registers.
func (p *Process) decodeAt(pc uint64, named map[string]uint64) (disasm.Instruction, int, error) {
	code := make([]byte, 16)
	n, _ := p.ReadMemory(pc, code)
	if n == 0 {
		return disasm.Instruction{}, 0, nil
	}
	if p.core.Machine == elf.EM_AARCH64 {
		d, err := disasm.DecodeARM64(code[:n], pc, named)
		return d, n, err
	}
	if p.core.Machine == elf.EM_386 {
		d, err := disasm.DecodeX86_32(code[:n], pc, named, p.symbolFor)
		return d, n, err
	}
	d, err := disasm.DecodeX86_64(code[:n], pc, named, p.symbolFor)
	return d, n, err
}

// disassembleARM64 lists the A64 instructions around pc: every instruction
// is 4 bytes, so decoding goes backwards as easily as forwards.
func (p *Process) disassembleARM64(pc uint64, before, after int) []disasm.Instruction {
	if pc%4 != 0 || before < 0 || after < 0 || before > 1<<12 || after > 1<<12 {
		return nil
	}
	start := pc - uint64(before)*4
	if start > pc {
		start = 0
	}
	code := make([]byte, pc-start+uint64(after+1)*4)
	n, _ := p.ReadMemory(start, code)
	var out []disasm.Instruction
	for off := 0; off+4 <= n; off += 4 {
		in, err := disasm.DecodeARM64(code[off:off+4], start+uint64(off), nil)
		if err != nil {
			in = disasm.Instruction{PC: start + uint64(off), Bytes: append([]byte(nil), code[off:off+4]...),
				Text: fmt.Sprintf(".inst %#08x", uint32(code[off])|uint32(code[off+1])<<8|uint32(code[off+2])<<16|uint32(code[off+3])<<24)}
		}
		out = append(out, in)
	}
	return out
}
