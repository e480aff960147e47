package op

// The opcode table and the machine that runs it; the handlers are in
// handlers.go.

import (
	"fmt"

	"github.com/faultline-dev/faultline/analysis/internal/cursor"
)

// operands is how the operands that follow an opcode are encoded (DWARF 5
// §7.7.1, Table 7.9).
type operands uint8

const (
	noOperands operands = iota
	u8Operand
	s8Operand
	u16Operand
	s16Operand
	u32Operand
	s32Operand
	u64Operand
	addrOperand // the target's address size
	ulebOperand
	slebOperand
	ulebSlebOperands // DW_OP_bregx: a register and an offset
)

// handler names the machine method that runs an operation.
type handler uint8

const (
	unsupported handler = iota
	literal             // DW_OP_litN
	constant            // DW_OP_addr, DW_OP_constN: push the operand
	breg                // DW_OP_bregN
	bregx
	reg // DW_OP_regN, DW_OP_regx
	dup
	drop
	over
	pick
	swap
	rot
	deref // DW_OP_deref, DW_OP_deref_size
	unary // DW_OP_abs, DW_OP_neg, DW_OP_not
	plusUconst
	binaryOp // two operands (binary2)
	branch   // DW_OP_skip, DW_OP_bra
	nop      // DW_OP_nop, DW_OP_stack_value
)

// An opcode is one row of the opcode table.
type opcode struct {
	operands operands
	handler  handler
}

// ops is the opcode table: how each operation Eval knows (DWARF 5 §2.5.1) is
// encoded and which handler runs it; the other rows are unsupported. The
// literal, register and based-register ranges are filled in by init.
var ops = [256]opcode{
	DW_OP_addr:        {addrOperand, constant},
	DW_OP_const1u:     {u8Operand, constant},
	DW_OP_const1s:     {s8Operand, constant},
	DW_OP_const2u:     {u16Operand, constant},
	DW_OP_const2s:     {s16Operand, constant},
	DW_OP_const4u:     {u32Operand, constant},
	DW_OP_const4s:     {s32Operand, constant},
	DW_OP_const8u:     {u64Operand, constant},
	DW_OP_const8s:     {u64Operand, constant},
	DW_OP_constu:      {ulebOperand, constant},
	DW_OP_consts:      {slebOperand, constant},
	DW_OP_bregx:       {ulebSlebOperands, bregx},
	DW_OP_regx:        {ulebOperand, reg},
	DW_OP_dup:         {noOperands, dup},
	DW_OP_drop:        {noOperands, drop},
	DW_OP_over:        {noOperands, over},
	DW_OP_pick:        {u8Operand, pick},
	DW_OP_swap:        {noOperands, swap},
	DW_OP_rot:         {noOperands, rot},
	DW_OP_deref:       {noOperands, deref},
	DW_OP_deref_size:  {u8Operand, deref},
	DW_OP_abs:         {noOperands, unary},
	DW_OP_neg:         {noOperands, unary},
	DW_OP_not:         {noOperands, unary},
	DW_OP_plus_uconst: {ulebOperand, plusUconst},
	DW_OP_and:         {noOperands, binaryOp},
	DW_OP_div:         {noOperands, binaryOp},
	DW_OP_minus:       {noOperands, binaryOp},
	DW_OP_mod:         {noOperands, binaryOp},
	DW_OP_mul:         {noOperands, binaryOp},
	DW_OP_or:          {noOperands, binaryOp},
	DW_OP_plus:        {noOperands, binaryOp},
	DW_OP_shl:         {noOperands, binaryOp},
	DW_OP_shr:         {noOperands, binaryOp},
	DW_OP_shra:        {noOperands, binaryOp},
	DW_OP_xor:         {noOperands, binaryOp},
	DW_OP_eq:          {noOperands, binaryOp},
	DW_OP_ge:          {noOperands, binaryOp},
	DW_OP_gt:          {noOperands, binaryOp},
	DW_OP_le:          {noOperands, binaryOp},
	DW_OP_lt:          {noOperands, binaryOp},
	DW_OP_ne:          {noOperands, binaryOp},
	DW_OP_skip:        {s16Operand, branch},
	DW_OP_bra:         {s16Operand, branch},
	DW_OP_nop:         {noOperands, nop},
	DW_OP_stack_value: {noOperands, nop}, // in CFI the value is already what DW_CFA_val_expression wants
}

func init() {
	for code := DW_OP_lit0; code <= DW_OP_lit31; code++ {
		ops[code] = opcode{noOperands, literal}
	}
	for code := DW_OP_reg0; code <= DW_OP_reg31; code++ {
		ops[code] = opcode{noOperands, reg}
	}
	for code := DW_OP_breg0; code <= DW_OP_breg31; code++ {
		ops[code] = opcode{slebOperand, breg}
	}
}

// machine is the state of one evaluation but the stack, which its handlers
// take and return. The handlers are methods called from run's switch, not
// function values in the table, and the stack is not a field: either would
// move the evaluation to the heap (measured over the corpus expressions: one
// allocation per Eval and several times the time).
type machine struct {
	c         cursor.Cursor // after the operands of the operation being run
	ctx       Context
	ptrSize   int
	at        int    // offset of the operation being run
	code      byte   // the operation being run
	x, y      uint64 // its operands, decoded as the table says (signed ones sign-extended)
	truncated bool   // the expression ends inside the operands; Eval reports it after the handler
	next      next   // how Eval goes on after the operation
	reg       uint64 // the register's value when a register location ends the expression
}

// next is how Eval goes on after an operation.
type next uint8

const (
	proceed        next = iota // check the operands read and the stack, then run the next operation
	done                       // a register location ends the expression: m.reg is its value
	branchNotTaken             // DW_OP_bra did not branch: run the next operation at once
)

// run decodes the operands of operation code as its row of the table says
// and runs its handler on the stack s.
func (m *machine) run(s []uint64, code byte) ([]uint64, *Error) {
	op := ops[code]
	if op.handler == unsupported {
		return s, m.fail("unsupported operation")
	}
	m.next, m.truncated = proceed, false
	// The operands are decoded here, not in a method of their own: one call
	// more per operation costs 5 % (BenchmarkEvalCorpus).
	if op.operands != noOperands {
		c := &m.c
		switch op.operands {
		case u8Operand:
			m.x = uint64(c.U8())
		case s8Operand:
			m.x = uint64(int64(int8(c.U8())))
		case u16Operand:
			m.x = uint64(c.U16())
		case s16Operand:
			m.x = uint64(int64(int16(c.U16())))
		case u32Operand:
			m.x = uint64(c.U32())
		case s32Operand:
			m.x = uint64(int64(int32(c.U32())))
		case u64Operand:
			m.x = c.U64()
		case addrOperand:
			m.x = c.Uint(m.ptrSize)
		case ulebOperand:
			m.x = c.ULEB128()
		case slebOperand:
			m.x = uint64(c.SLEB128())
		case ulebSlebOperands:
			m.x = c.ULEB128()
			m.y = uint64(c.SLEB128())
		}
		m.truncated = c.Err() != nil
	}
	switch op.handler {
	case literal:
		return append(s, uint64(code-DW_OP_lit0)), nil
	case constant:
		return append(s, m.x), nil // a truncated operand pushes zero; Eval reports the truncation
	case breg:
		return m.breg(s)
	case bregx:
		return m.bregx(s)
	case reg:
		return m.regLocation(s)
	case dup, over, pick:
		return m.copyEntry(s)
	case drop:
		return m.drop(s)
	case swap:
		return m.swap(s)
	case rot:
		return m.rot(s)
	case deref:
		return m.deref(s)
	case unary:
		return m.unary(s)
	case plusUconst:
		return m.plusUconst(s)
	case binaryOp:
		return m.binary(s)
	case branch:
		return m.branch(s)
	}
	return s, nil // nop
}

// fail is an error of the operation being run.
func (m *machine) fail(format string, args ...any) *Error {
	return &Error{Off: m.at, Op: m.code, Msg: fmt.Sprintf(format, args...)}
}

// need fails with a stack underflow unless s holds n entries.
func (m *machine) need(s []uint64, n int) *Error {
	if len(s) < n {
		return m.fail("stack underflow")
	}
	return nil
}

// pop takes the top entry off s.
func pop(s []uint64) (uint64, []uint64) { return s[len(s)-1], s[:len(s)-1] }
