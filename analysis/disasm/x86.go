// Package disasm decodes the faulting instruction and computes the effective
// address of its memory operand from the thread's registers.
//
// The kernel reports si_addr 0 for a general-protection fault on a
// non-canonical address; the instruction and the registers tell the real one
// (Intel SDM Vol. 2, §2.1.5 addressing: Segment:[Base + Index*Scale + Disp]).
package disasm

import (
	"fmt"
	"strings"

	"golang.org/x/arch/x86/x86asm"
)

// Instruction is one decoded instruction.
type Instruction struct {
	PC    uint64
	Bytes []byte
	// Text is the instruction in AT&T syntax, as gdb and objdump print it.
	Text string
	// Op is the mnemonic in Intel spelling, e.g. "MOV".
	Op string
	// Mem is the memory operand in AT&T syntax, e.g. "0x8(%rax)" ("" if none).
	Mem string
	// EffectiveAddress of the memory operand; valid when HasAddress.
	EffectiveAddress uint64
	HasAddress       bool
	// Access is "read" or "write" for the memory operand.
	Access string
	// Registers are the (64-bit) registers the memory operand uses, e.g. ["rax"].
	Registers []string
	// MemBytes is the size of the memory access in bytes (16 for an SSE
	// load), 0 when unknown or none.
	MemBytes int
}

// SymbolLookup names the symbol at addr (for branch targets), as x86asm wants it.
type SymbolLookup func(addr uint64) (name string, base uint64)

// DecodeX86_64 decodes the instruction at the start of code, which was read
// from address pc. regs are the thread's registers by lowercase name ("rax",
// "rip", "fs_base", ...); the effective address is computed when every
// register the operand uses is known.
func DecodeX86_64(code []byte, pc uint64, regs map[string]uint64, sym SymbolLookup) (Instruction, error) {
	return decodeX86(code, pc, regs, sym, 64)
}

// DecodeX86_32 decodes an instruction of 32-bit protected mode (an i386
// process: no REX prefix, 32-bit addresses) as DecodeX86_64 does; regs
// are named "eax", "esp", "eip", .... Effective addresses wrap at 4 GiB.
func DecodeX86_32(code []byte, pc uint64, regs map[string]uint64, sym SymbolLookup) (Instruction, error) {
	return decodeX86(code, pc, regs, sym, 32)
}

func decodeX86(code []byte, pc uint64, regs map[string]uint64, sym SymbolLookup, mode int) (Instruction, error) {
	inst, err := x86asm.Decode(code, mode)
	if err != nil {
		return Instruction{PC: pc}, fmt.Errorf("disasm: cannot decode at %#x: %w", pc, err)
	}
	signExtendDisp(&inst)
	out := Instruction{
		PC:    pc,
		Bytes: append([]byte(nil), code[:inst.Len]...),
		Text:  gnuText(inst, pc, sym),
		Op:    inst.Op.String(),
	}
	for i, a := range inst.Args {
		m, ok := a.(x86asm.Mem)
		if !ok {
			continue
		}
		if inst.Op == x86asm.LEA || inst.Op == x86asm.NOP {
			break // computes an address, touches no memory
		}
		out.Mem = memString(m)
		out.MemBytes = inst.MemBytes
		out.Access = accessOf(inst, i)
		out.EffectiveAddress, out.HasAddress, out.Registers = effectiveAddress(m, pc+uint64(inst.Len), regs, mode)
		break
	}
	if out.Mem == "" && implicitStackAccess(inst.Op) {
		stackAccess(&out, inst.Op, regs, mode)
	}
	return out, nil
}

// stackAccess fills in the stack access of push/pop/call/ret, which touch
// the stack through rsp (esp): a fault there is a stack overflow.
func stackAccess(out *Instruction, op x86asm.Op, regs map[string]uint64, mode int) {
	sp, size := "rsp", uint64(8)
	if mode == 32 {
		sp, size = "esp", 4
	}
	out.Mem = "(%" + sp + ")"
	out.Registers = []string{sp}
	v, ok := regs[sp]
	if !ok {
		return
	}
	out.EffectiveAddress, out.HasAddress = v, true
	if op == x86asm.PUSH || op == x86asm.CALL {
		out.EffectiveAddress = (v - size) & addrMask(mode)
		out.Access = "write"
	} else {
		out.Access = "read"
	}
}

// gnuText prints inst in AT&T syntax as objdump and gdb do. x86asm prints
// nothing for an absolute memory operand at address 0 ("mov %eax,0x0",
// a NULL store through a constant address, comes out "mov %eax,"; i386's
// TLS load "mov %gs:0x0,%eax" comes out "mov %gs:,%eax"): the 0 is put
// back.
func gnuText(inst x86asm.Inst, pc uint64, sym SymbolLookup) string {
	text := x86asm.GNUSyntax(inst, pc, x86asm.SymLookup(sym))
	op, args, ok := strings.Cut(text, " ")
	if !ok {
		return text
	}
	parts := strings.Split(args, ",")
	for i, a := range parts {
		if a == "" || strings.HasSuffix(a, ":") { // "", "%gs:"
			parts[i] = a + "0x0"
		}
	}
	return op + " " + strings.Join(parts, ",")
}

// addrMask keeps the bits of an address in the mode.
func addrMask(mode int) uint64 {
	if mode == 32 {
		return 1<<32 - 1
	}
	return ^uint64(0)
}

// signExtendDisp makes 32-bit displacements signed, as the CPU uses them in
// 64-bit mode (Intel SDM Vol. 2 §2.2.1.3); x86asm keeps them zero-extended, so
// -0xf4(%rbp) would print as 0xffffff0c(%rbp) and add 4 GiB to the address.
func signExtendDisp(inst *x86asm.Inst) {
	for i, a := range inst.Args {
		m, ok := a.(x86asm.Mem)
		if !ok || (m.Base == 0 && m.Index == 0) || m.Base == x86asm.RIP {
			continue
		}
		if m.Disp >= 1<<31 && m.Disp < 1<<32 {
			m.Disp = int64(int32(uint32(m.Disp)))
			inst.Args[i] = m
		}
	}
}

func implicitStackAccess(op x86asm.Op) bool {
	switch op {
	case x86asm.PUSH, x86asm.POP, x86asm.CALL, x86asm.RET:
		return true
	}
	return false
}

// accessOf says whether argument i (Intel order: destination first) is read or
// written. Instructions that only compare or test read their destination.
func accessOf(inst x86asm.Inst, i int) string {
	if i != 0 {
		return "read"
	}
	switch inst.Op {
	case x86asm.CMP, x86asm.TEST, x86asm.PUSH, x86asm.CALL, x86asm.JMP,
		x86asm.BT, x86asm.UCOMISS, x86asm.UCOMISD, x86asm.COMISS, x86asm.COMISD,
		x86asm.PREFETCHT0, x86asm.PREFETCHT1, x86asm.PREFETCHT2, x86asm.PREFETCHNTA:
		return "read"
	}
	if inst.Args[1] == nil {
		// One-operand instructions that modify memory in place (inc, dec, neg, not)
		// also read it; "write" is what faulted last on a read-only page too.
		switch inst.Op {
		case x86asm.INC, x86asm.DEC, x86asm.NEG, x86asm.NOT, x86asm.POP:
			return "write"
		}
		return "read"
	}
	return "write"
}

func effectiveAddress(m x86asm.Mem, next uint64, regs map[string]uint64, mode int) (uint64, bool, []string) {
	var used []string
	ok := true
	get := func(r x86asm.Reg) uint64 {
		if r == x86asm.RIP {
			return next
		}
		name, width := reg64(r)
		if mode == 32 {
			name, width = reg32(r)
		}
		if name == "" {
			ok = false
			return 0
		}
		used = append(used, name)
		v, have := regs[name]
		if !have {
			ok = false
		}
		if width < 64 {
			v &= 1<<uint(width) - 1
		}
		return v
	}
	var ea uint64
	if m.Base != 0 {
		ea += get(m.Base)
	}
	if m.Index != 0 {
		scale := uint64(m.Scale)
		if scale == 0 {
			scale = 1
		}
		ea += get(m.Index) * scale
	}
	ea += uint64(m.Disp)
	switch m.Segment {
	case x86asm.FS:
		used = append(used, "fs_base")
		b, have := regs["fs_base"]
		ok = ok && have
		ea += b
	case x86asm.GS:
		used = append(used, "gs_base")
		b, have := regs["gs_base"]
		ok = ok && have
		ea += b
	}
	return ea & addrMask(mode), ok, used
}

var gpr32 = [8]string{"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi"}

// reg32 maps an x86asm general-purpose register of 32-bit mode onto the
// name of the 32-bit register that holds it (al and ah are in eax).
func reg32(r x86asm.Reg) (string, int) {
	switch {
	case r >= x86asm.EAX && r <= x86asm.EDI:
		return gpr32[r-x86asm.EAX], 32
	case r >= x86asm.AX && r <= x86asm.DI:
		return gpr32[r-x86asm.AX], 16
	case r >= x86asm.AL && r <= x86asm.BL:
		return gpr32[r-x86asm.AL], 8
	}
	return "", 0
}

var gpr64 = [16]string{"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"}

// reg64 maps an x86asm general-purpose register of any width onto the name of
// the 64-bit register that holds it.
func reg64(r x86asm.Reg) (string, int) {
	switch {
	case r >= x86asm.RAX && r <= x86asm.R15:
		return gpr64[r-x86asm.RAX], 64
	case r >= x86asm.EAX && r <= x86asm.R15L:
		return gpr64[r-x86asm.EAX], 32
	case r >= x86asm.AX && r <= x86asm.R15W:
		return gpr64[r-x86asm.AX], 16
	}
	return "", 0
}

// memString prints a memory operand in AT&T syntax: seg:disp(base,index,scale).
func memString(m x86asm.Mem) string {
	var b strings.Builder
	if m.Segment != 0 {
		b.WriteString("%" + strings.ToLower(m.Segment.String()) + ":")
	}
	if m.Disp != 0 || (m.Base == 0 && m.Index == 0) || m.Base == x86asm.RIP {
		if m.Disp < 0 {
			fmt.Fprintf(&b, "-%#x", uint64(-m.Disp))
		} else {
			fmt.Fprintf(&b, "%#x", uint64(m.Disp))
		}
	}
	if m.Base == 0 && m.Index == 0 {
		return b.String()
	}
	b.WriteString("(")
	if m.Base != 0 {
		b.WriteString("%" + strings.ToLower(m.Base.String()))
	}
	if m.Index != 0 {
		fmt.Fprintf(&b, ",%%%s,%d", strings.ToLower(m.Index.String()), m.Scale)
	}
	b.WriteString(")")
	return b.String()
}

// Window decodes the instructions from start up to and including the one that
// contains pc (at most max instructions), for a disassembly listing around a
// faulting instruction. Decoding stops at the first undecodable byte.
func Window(code []byte, start, pc uint64, max int, sym SymbolLookup) []Instruction {
	return WindowMode(code, start, pc, max, sym, 64)
}

// WindowMode is Window for the given x86 mode: 64, or 32 for i386.
func WindowMode(code []byte, start, pc uint64, max int, sym SymbolLookup, mode int) []Instruction {
	var out []Instruction
	for off := 0; off < len(code) && len(out) < max; {
		addr := start + uint64(off)
		inst, err := x86asm.Decode(code[off:], mode)
		if err != nil {
			break
		}
		signExtendDisp(&inst)
		out = append(out, Instruction{PC: addr, Bytes: code[off : off+inst.Len],
			Text: gnuText(inst, addr, sym), Op: inst.Op.String()})
		off += inst.Len
		if addr > pc {
			break
		}
	}
	return out
}
