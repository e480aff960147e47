// Package op evaluates DWARF expressions (DWARF 5 §2.5) as call frame
// information uses them: DW_CFA_def_cfa_expression, DW_CFA_expression and
// DW_CFA_val_expression (§6.4.2.2, §6.4.2.3). glibc's PLT entries and its
// signal trampoline __restore_rt describe their frames this way.
//
// The evaluator is a stack machine over 64-bit values. It supports the
// operations CFI needs — literals and constants, register-relative values,
// dereference, arithmetic, logic, comparisons and control flow — and refuses
// the rest with an error. Evaluation is bounded: at most MaxSteps operations
// and MaxStack stack entries, so a hostile expression cannot hang or exhaust
// memory.
package op

import (
	"encoding/binary"
	"fmt"
)

// Limits on one evaluation.
const (
	MaxSteps = 10000
	MaxStack = 1024
)

// DWARF expression opcodes (DWARF 5 §7.7.1, Table 7.9).
const (
	DW_OP_addr        = 0x03
	DW_OP_deref       = 0x06
	DW_OP_const1u     = 0x08
	DW_OP_const1s     = 0x09
	DW_OP_const2u     = 0x0a
	DW_OP_const2s     = 0x0b
	DW_OP_const4u     = 0x0c
	DW_OP_const4s     = 0x0d
	DW_OP_const8u     = 0x0e
	DW_OP_const8s     = 0x0f
	DW_OP_constu      = 0x10
	DW_OP_consts      = 0x11
	DW_OP_dup         = 0x12
	DW_OP_drop        = 0x13
	DW_OP_over        = 0x14
	DW_OP_pick        = 0x15
	DW_OP_swap        = 0x16
	DW_OP_rot         = 0x17
	DW_OP_abs         = 0x19
	DW_OP_and         = 0x1a
	DW_OP_div         = 0x1b
	DW_OP_minus       = 0x1c
	DW_OP_mod         = 0x1d
	DW_OP_mul         = 0x1e
	DW_OP_neg         = 0x1f
	DW_OP_not         = 0x20
	DW_OP_or          = 0x21
	DW_OP_plus        = 0x22
	DW_OP_plus_uconst = 0x23
	DW_OP_shl         = 0x24
	DW_OP_shr         = 0x25
	DW_OP_shra        = 0x26
	DW_OP_xor         = 0x27
	DW_OP_bra         = 0x28
	DW_OP_eq          = 0x29
	DW_OP_ge          = 0x2a
	DW_OP_gt          = 0x2b
	DW_OP_le          = 0x2c
	DW_OP_lt          = 0x2d
	DW_OP_ne          = 0x2e
	DW_OP_skip        = 0x2f
	DW_OP_lit0        = 0x30
	DW_OP_lit31       = 0x4f
	DW_OP_reg0        = 0x50
	DW_OP_reg31       = 0x6f
	DW_OP_breg0       = 0x70
	DW_OP_breg31      = 0x8f
	DW_OP_regx        = 0x90
	DW_OP_bregx       = 0x92
	DW_OP_deref_size  = 0x94
	DW_OP_nop         = 0x96
	DW_OP_stack_value = 0x9f
)

// Context supplies what an expression may read: registers of the frame being
// unwound (by DWARF number) and the process's memory.
type Context interface {
	// Reg returns the value of DWARF register n, or false if it is unknown.
	Reg(n uint64) (uint64, bool)
	// ReadMemory reads size bytes (1..8) at addr as a little- or big-endian
	// unsigned value, per the target's byte order.
	ReadMemory(addr uint64, size int) (uint64, error)
}

// Error is an evaluation error at byte offset Off of the expression. Err is
// the underlying error of a failed memory read, if that was the cause.
type Error struct {
	Off int
	Op  byte
	Msg string
	Err error
}

func (e *Error) Error() string {
	return fmt.Sprintf("DWARF expression: op 0x%02x at offset %d: %s", e.Op, e.Off, e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Eval evaluates expr with the given initial stack (CFI pushes the CFA for
// DW_CFA_expression and DW_CFA_val_expression, DWARF 5 §6.4.2.3) and returns
// the value on top of the stack at the end. ptrSize is the target address
// size (for DW_OP_addr and DW_OP_deref).
//
// A DW_OP_regN / DW_OP_regx expression names a register rather than a
// memory location; Eval returns that register's value with isReg set.
//
// Each operation is decoded and run as its row of the opcode table (ops.go)
// says; Eval bounds the steps and the stack and keeps the values to the
// address size.
func Eval(expr []byte, order binary.ByteOrder, ptrSize int, ctx Context, initial ...uint64) (value uint64, isReg bool, err error) {
	if ptrSize != 4 && ptrSize != 8 {
		return 0, false, &Error{Msg: fmt.Sprintf("unsupported address size %d", ptrSize)}
	}
	if len(initial) > MaxStack {
		return 0, false, &Error{Msg: "initial stack too deep"}
	}
	// m is set field by field: a composite literal would be built aside and
	// copied, a third of the time of a one-operation expression.
	var m machine
	m.c.Data, m.c.Order, m.ctx, m.ptrSize = expr, order, ctx, ptrSize
	stack := make([]uint64, 0, 8)
	stack = append(stack, initial...)
	mask := ^uint64(0)
	if ptrSize == 4 {
		mask = 0xffffffff
	}
	for steps := 0; m.c.Len() > 0; steps++ {
		code := m.c.Data[m.c.Off] // Len > 0: the opcode is there
		m.at, m.code = m.c.Off, code
		m.c.Off++
		if steps >= MaxSteps {
			return 0, false, m.fail("more than %d steps", MaxSteps)
		}
		var err *Error
		if stack, err = m.run(stack, code); err != nil {
			return 0, false, err
		}
		switch m.next {
		case done:
			return m.reg, true, nil
		case branchNotTaken:
			continue
		}
		if err := m.c.Err(); err != nil {
			return 0, false, &Error{Off: m.at, Op: m.code, Msg: err.Error()}
		}
		if len(stack) > MaxStack {
			return 0, false, m.fail("stack deeper than %d", MaxStack)
		}
		for i := range stack {
			stack[i] &= mask
		}
	}
	if len(stack) == 0 {
		return 0, false, &Error{Off: len(expr), Msg: "empty stack at end of expression"}
	}
	return stack[len(stack)-1], false, nil
}

// binary2 applies a two-operand operation (DWARF 5 §2.5.1.4, §2.5.1.5); a is
// the second entry, b the top. ok is false for division by zero.
func binary2(code byte, a, b uint64) (uint64, bool) {
	bool2 := func(x bool) uint64 {
		if x {
			return 1
		}
		return 0
	}
	switch code {
	case DW_OP_and:
		return a & b, true
	case DW_OP_or:
		return a | b, true
	case DW_OP_xor:
		return a ^ b, true
	case DW_OP_plus:
		return a + b, true
	case DW_OP_minus:
		return a - b, true
	case DW_OP_mul:
		return a * b, true
	case DW_OP_div:
		if b == 0 {
			return 0, false
		}
		if int64(b) == -1 {
			return -a, true // avoid the MinInt64 / -1 trap
		}
		return uint64(int64(a) / int64(b)), true
	case DW_OP_mod:
		if b == 0 {
			return 0, false
		}
		return a % b, true
	case DW_OP_shl:
		if b >= 64 {
			return 0, true
		}
		return a << b, true
	case DW_OP_shr:
		if b >= 64 {
			return 0, true
		}
		return a >> b, true
	case DW_OP_shra:
		if b >= 64 {
			b = 63
		}
		return uint64(int64(a) >> b), true
	case DW_OP_eq:
		return bool2(a == b), true
	case DW_OP_ne:
		return bool2(a != b), true
	case DW_OP_ge:
		return bool2(int64(a) >= int64(b)), true
	case DW_OP_gt:
		return bool2(int64(a) > int64(b)), true
	case DW_OP_le:
		return bool2(int64(a) <= int64(b)), true
	case DW_OP_lt:
		return bool2(int64(a) < int64(b)), true
	}
	return 0, false
}
