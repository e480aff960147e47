package disasm

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/arch/arm64/arm64asm"
)

// DecodeARM64 decodes the A64 instruction at the start of code (4 bytes,
// little-endian), which was read from address pc. regs are the thread's
// registers by gdb's names ("x0".."x30", "sp", "pc"); the effective address
// of a load or store is computed when its base (and index) register is
// known (Arm ARM, C1.3.3 "Load/Store addressing modes").
func DecodeARM64(code []byte, pc uint64, regs map[string]uint64) (Instruction, error) {
	if len(code) < 4 {
		return Instruction{PC: pc}, fmt.Errorf("disasm: need 4 bytes at %#x, have %d", pc, len(code))
	}
	inst, err := arm64asm.Decode(code[:4])
	if err != nil {
		return Instruction{PC: pc}, fmt.Errorf("disasm: cannot decode %#08x at %#x: %w", binary.LittleEndian.Uint32(code), pc, err)
	}
	out := Instruction{
		PC:    pc,
		Bytes: append([]byte(nil), code[:4]...),
		Text:  arm64Text(inst, pc),
		Op:    inst.Op.String(),
	}
	for _, a := range inst.Args {
		switch m := a.(type) {
		case arm64asm.MemImmediate:
			out.Mem = strings.ToLower(m.String())
			base := arm64RegName(arm64asm.Reg(m.Base), true)
			out.Registers = []string{base}
			if b, ok := regs[base]; ok {
				out.EffectiveAddress, out.HasAddress = b, true
				if m.Mode == arm64asm.AddrOffset || m.Mode == arm64asm.AddrPreIndex {
					out.EffectiveAddress = b + uint64(memImmediateOffset(m))
				}
			}
		case arm64asm.MemExtend:
			out.Mem = strings.ToLower(m.String())
			base, index := arm64RegName(arm64asm.Reg(m.Base), true), arm64RegName(m.Index, false)
			out.Registers = []string{base, index}
			b, okb := regs[base]
			x, okx := regs[index]
			if index == "xzr" {
				x, okx = 0, true
			}
			if okb && okx {
				out.EffectiveAddress, out.HasAddress = b+extendIndex(x, m), true
			}
		default:
			continue
		}
		out.Access = arm64Access(inst.Op)
		break
	}
	return out, nil
}

// arm64Text is the instruction as gdb and objdump print it (GNU syntax),
// with pc-relative targets as absolute addresses.
func arm64Text(inst arm64asm.Inst, pc uint64) string {
	text := arm64asm.GNUSyntax(inst)
	for _, a := range inst.Args {
		if rel, ok := a.(arm64asm.PCRel); ok {
			text = strings.Replace(text, strings.ToLower(rel.String()), fmt.Sprintf("%#x", pc+uint64(int64(rel))), 1)
		}
	}
	return text
}

// memImmediateOffset is the immediate of a [Rn, #imm] operand. arm64asm
// keeps it unexported; its String form "[Rn,#imm]" carries it.
func memImmediateOffset(m arm64asm.MemImmediate) int64 {
	s := m.String()
	i := strings.IndexByte(s, '#')
	if i < 0 {
		return 0
	}
	end := strings.IndexAny(s[i:], "]!")
	if end < 0 {
		end = len(s) - i
	}
	v, _ := strconv.ParseInt(s[i+1:i+end], 10, 64)
	return v
}

// extendIndex applies a MemExtend operand's extend and shift to the index
// register value (UXTW, SXTW, LSL/UXTX, SXTX).
func extendIndex(x uint64, m arm64asm.MemExtend) uint64 {
	switch strings.ToLower(m.Extend.String()) {
	case "uxtw":
		x = uint64(uint32(x))
	case "sxtw":
		x = uint64(int64(int32(x)))
	}
	if !m.ShiftMustBeZero {
		x <<= m.Amount
	}
	return x
}

// arm64RegName is gdb's name for a general register: x0..x30, sp (when the
// encoding 31 means the stack pointer) or xzr; W registers by their X name.
func arm64RegName(r arm64asm.Reg, spForm bool) string {
	switch {
	case r == arm64asm.XZR || r == arm64asm.WZR:
		if spForm {
			return "sp"
		}
		return "xzr"
	case r >= arm64asm.X0 && r <= arm64asm.X30:
		return fmt.Sprintf("x%d", r-arm64asm.X0)
	case r >= arm64asm.W0 && r <= arm64asm.W30:
		return fmt.Sprintf("x%d", r-arm64asm.W0)
	}
	return strings.ToLower(r.String())
}

// arm64Access says whether a load/store instruction reads or writes memory.
func arm64Access(op arm64asm.Op) string {
	name := op.String()
	switch {
	case strings.HasPrefix(name, "ST"), strings.HasPrefix(name, "SWP"), strings.HasPrefix(name, "CAS"),
		strings.HasPrefix(name, "LDADD"), strings.HasPrefix(name, "LDCLR"), strings.HasPrefix(name, "LDEOR"),
		strings.HasPrefix(name, "LDSET"), strings.HasPrefix(name, "LDSMAX"), strings.HasPrefix(name, "LDSMIN"),
		strings.HasPrefix(name, "LDUMAX"), strings.HasPrefix(name, "LDUMIN"):
		return "write"
	case strings.HasPrefix(name, "LD"), strings.HasPrefix(name, "PRFM"):
		return "read"
	}
	return ""
}
