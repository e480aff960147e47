package frame

import (
	"maps"

	"github.com/faultline-dev/faultline/analysis/internal/cursor"
)

// Call frame instructions (DWARF 5 §6.4.2, §7.24 Table 7.29; GNU extensions
// from binutils' include/dwarf2.def).
const (
	DW_CFA_advance_loc        = 0x40 // high 2 bits; low 6 are the delta
	DW_CFA_offset             = 0x80 // high 2 bits; low 6 are the register
	DW_CFA_restore            = 0xc0 // high 2 bits; low 6 are the register
	DW_CFA_nop                = 0x00
	DW_CFA_set_loc            = 0x01
	DW_CFA_advance_loc1       = 0x02
	DW_CFA_advance_loc2       = 0x03
	DW_CFA_advance_loc4       = 0x04
	DW_CFA_offset_extended    = 0x05
	DW_CFA_restore_extended   = 0x06
	DW_CFA_undefined          = 0x07
	DW_CFA_same_value         = 0x08
	DW_CFA_register           = 0x09
	DW_CFA_remember_state     = 0x0a
	DW_CFA_restore_state      = 0x0b
	DW_CFA_def_cfa            = 0x0c
	DW_CFA_def_cfa_register   = 0x0d
	DW_CFA_def_cfa_offset     = 0x0e
	DW_CFA_def_cfa_expression = 0x0f
	DW_CFA_expression         = 0x10
	DW_CFA_offset_extended_sf = 0x11
	DW_CFA_def_cfa_sf         = 0x12
	DW_CFA_def_cfa_offset_sf  = 0x13
	DW_CFA_val_offset         = 0x14
	DW_CFA_val_offset_sf      = 0x15
	DW_CFA_val_expression     = 0x16

	DW_CFA_MIPS_advance_loc8            = 0x1d
	DW_CFA_GNU_window_save              = 0x2d // AArch64: DW_CFA_AARCH64_negate_ra_state
	DW_CFA_GNU_args_size                = 0x2e
	DW_CFA_GNU_negative_offset_extended = 0x2f
)

// MaxRegister bounds the register numbers a CFA program may name; larger
// numbers are a format error (no supported architecture has them).
const MaxRegister = 1024

// maxStateDepth bounds DW_CFA_remember_state nesting.
const maxStateDepth = 64

// RuleKind is how a register of the caller is recovered (DWARF 5 §6.4.1).
type RuleKind uint8

const (
	RuleUnspecified   RuleKind = iota // no rule: the architecture's default applies
	RuleUndefined                     // not recoverable (for the return address: outermost frame)
	RuleSameValue                     // unchanged from the callee
	RuleOffset                        // saved at CFA+Offset
	RuleValOffset                     // the value CFA+Offset
	RuleRegister                      // in register Reg
	RuleExpression                    // saved at the address Expr computes (CFA pushed first)
	RuleValExpression                 // the value Expr computes (CFA pushed first)
)

// Rule is one register's rule.
type Rule struct {
	Kind   RuleKind
	Offset int64
	Reg    uint64
	Expr   []byte
}

// CFARule computes the canonical frame address: Reg+Offset, or Expr when it
// is non-nil (DW_CFA_def_cfa_expression).
type CFARule struct {
	Reg    uint64
	Offset int64
	Expr   []byte
}

// Row is the unwinding rule set in effect at one address (DWARF 5 §6.4.1).
type Row struct {
	CFA  CFARule
	Regs map[uint64]Rule // only registers with a rule
	// ArgsSize is the DW_CFA_GNU_args_size in effect.
	ArgsSize uint64
	// RASigned is the AArch64 return-address signing state
	// (DW_CFA_AARCH64_negate_ra_state toggles it).
	RASigned bool
}

// Rule returns register reg's rule (RuleUnspecified when there is none).
func (r *Row) Rule(reg uint64) Rule { return r.Regs[reg] }

func (r *Row) clone() *Row {
	c := *r
	c.Regs = maps.Clone(r.Regs)
	if c.Regs == nil {
		c.Regs = map[uint64]Rule{}
	}
	return &c
}

// RowFor returns the FDE covering link-time address pc and the row in effect
// there. Rows are cached per pc.
func (t *Table) RowFor(pc uint64) (*Row, *FDE, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fde, err := t.fdeFor(pc)
	if err != nil {
		return nil, nil, err
	}
	if row, ok := t.rows[pc]; ok {
		return row, fde, nil
	}
	row, err := t.Execute(fde, pc)
	if err != nil {
		return nil, fde, err
	}
	if len(t.rows) >= maxCachedRows {
		clear(t.rows)
	}
	t.rows[pc] = row
	return row, fde, nil
}

// Execute runs fde's CIE initial instructions and then its own instructions
// up to link-time address pc, and returns the resulting row.
func (t *Table) Execute(fde *FDE, pc uint64) (*Row, error) {
	m := &machine{t: t, cie: fde.CIE, fde: fde, loc: fde.Begin, pc: pc,
		row: &Row{Regs: map[uint64]Rule{}}}
	if err := m.run(fde.CIE.Initial, fde.CIE.instrsOffset); err != nil {
		return nil, err
	}
	m.initial = m.row.clone()
	if err := m.run(fde.Instructions, fde.instrsOffset); err != nil {
		return nil, err
	}
	return m.row, nil
}

// machine is the CFA program interpreter's state.
type machine struct {
	t       *Table
	cie     *CIE
	fde     *FDE
	loc, pc uint64
	row     *Row
	initial *Row // the row after the CIE's initial instructions, for DW_CFA_restore
	stack   []*Row
	done    bool
}

// run executes one instruction stream; base is its section offset.
func (m *machine) run(prog []byte, base uint64) error {
	c := cursor.New(prog, m.t.order, base)
	for c.Len() > 0 && !m.done {
		m.step(c)
		if err := c.Err(); err != nil {
			return m.t.wrap(base, err)
		}
	}
	return nil
}

// advance moves the location by delta code-alignment units and stops the
// program once it passes pc.
func (m *machine) advance(delta uint64) {
	m.setLoc(m.loc + delta*m.cie.CodeAlign)
}

func (m *machine) setLoc(loc uint64) {
	if loc > m.pc {
		m.done = true
		return
	}
	m.loc = loc
}

func (m *machine) reg(c *cursor.Cursor, r uint64) uint64 {
	if r >= MaxRegister {
		c.Fail("register %d out of range", r)
	}
	return r
}

func (m *machine) expr(c *cursor.Cursor) []byte {
	n := c.ULEB128()
	if n > uint64(c.Len()) {
		c.Fail("expression length %d beyond instructions", n)
		return nil
	}
	return c.Bytes(int(n))
}

// step executes one instruction (DWARF 5 §6.4.2).
func (m *machine) step(c *cursor.Cursor) {
	op := c.U8()
	switch op & 0xc0 {
	case DW_CFA_advance_loc:
		m.advance(uint64(op & 0x3f))
		return
	case DW_CFA_offset:
		r := uint64(op & 0x3f)
		m.row.Regs[r] = Rule{Kind: RuleOffset, Offset: int64(c.ULEB128()) * m.cie.DataAlign}
		return
	case DW_CFA_restore:
		m.restore(uint64(op & 0x3f))
		return
	}
	switch op {
	case DW_CFA_nop:
	case DW_CFA_set_loc:
		m.setLocTo(c)
	case DW_CFA_advance_loc1:
		m.advance(uint64(c.U8()))
	case DW_CFA_advance_loc2:
		m.advance(uint64(c.U16()))
	case DW_CFA_advance_loc4:
		m.advance(uint64(c.U32()))
	case DW_CFA_MIPS_advance_loc8:
		m.advance(c.U64())
	case DW_CFA_remember_state:
		if len(m.stack) >= maxStateDepth {
			c.Fail("DW_CFA_remember_state nested deeper than %d", maxStateDepth)
			return
		}
		m.stack = append(m.stack, m.row.clone())
	case DW_CFA_restore_state:
		if len(m.stack) == 0 {
			c.Fail("DW_CFA_restore_state with no remembered state")
			return
		}
		// Like GCC's unwinder and gdb, the remembered state includes the CFA rule.
		saved := m.stack[len(m.stack)-1]
		m.stack = m.stack[:len(m.stack)-1]
		saved.ArgsSize = m.row.ArgsSize
		m.row = saved
	case DW_CFA_def_cfa, DW_CFA_def_cfa_sf, DW_CFA_def_cfa_register, DW_CFA_def_cfa_offset,
		DW_CFA_def_cfa_offset_sf, DW_CFA_def_cfa_expression:
		m.defCFA(c, op)
	case DW_CFA_GNU_args_size:
		m.row.ArgsSize = c.ULEB128()
	case DW_CFA_GNU_window_save:
		m.row.RASigned = !m.row.RASigned
	default:
		if !m.registerRule(c, op) {
			c.Fail("unknown call frame instruction 0x%02x", op)
		}
	}
}

// setLocTo runs DW_CFA_set_loc: the location is an encoded pointer in
// .eh_frame, an address in .debug_frame, and never moves backwards.
func (m *machine) setLocTo(c *cursor.Cursor) {
	var loc uint64
	if m.t.kind == EHFrame {
		var ind bool
		loc, ind = readEncoded(c, m.cie.FDEEncoding, m.t.ptrSize, pointerBases{section: m.t.addr + c.Base, text: m.t.TextBase, data: m.t.DataBase, fn: m.fde.Begin})
		if ind {
			c.Fail("indirect DW_CFA_set_loc")
		}
	} else {
		loc = c.Uint(int(m.cie.AddressSize))
	}
	if c.Err() == nil {
		if loc < m.loc {
			c.Fail("DW_CFA_set_loc moves backwards")
			return
		}
		m.setLoc(loc)
	}
}

// defCFA runs the instructions that define the CFA rule.
func (m *machine) defCFA(c *cursor.Cursor, op uint8) {
	row, daf := m.row, m.cie.DataAlign
	switch op {
	case DW_CFA_def_cfa:
		row.CFA = CFARule{Reg: m.reg(c, c.ULEB128()), Offset: int64(c.ULEB128())}
	case DW_CFA_def_cfa_sf:
		row.CFA = CFARule{Reg: m.reg(c, c.ULEB128()), Offset: c.SLEB128() * daf}
	case DW_CFA_def_cfa_register:
		row.CFA.Reg = m.reg(c, c.ULEB128())
		row.CFA.Expr = nil
	case DW_CFA_def_cfa_offset:
		row.CFA.Offset = int64(c.ULEB128())
	case DW_CFA_def_cfa_offset_sf:
		row.CFA.Offset = c.SLEB128() * daf
	case DW_CFA_def_cfa_expression:
		row.CFA = CFARule{Expr: m.expr(c)}
	}
}

// registerRule runs the instructions that set one register's rule; it
// returns false for an instruction that is none of them.
func (m *machine) registerRule(c *cursor.Cursor, op uint8) bool {
	row, daf := m.row, m.cie.DataAlign
	switch op {
	case DW_CFA_offset_extended:
		r := m.reg(c, c.ULEB128())
		row.Regs[r] = Rule{Kind: RuleOffset, Offset: int64(c.ULEB128()) * daf}
	case DW_CFA_offset_extended_sf:
		r := m.reg(c, c.ULEB128())
		row.Regs[r] = Rule{Kind: RuleOffset, Offset: c.SLEB128() * daf}
	case DW_CFA_GNU_negative_offset_extended:
		r := m.reg(c, c.ULEB128())
		row.Regs[r] = Rule{Kind: RuleOffset, Offset: -int64(c.ULEB128()) * daf}
	case DW_CFA_val_offset:
		r := m.reg(c, c.ULEB128())
		row.Regs[r] = Rule{Kind: RuleValOffset, Offset: int64(c.ULEB128()) * daf}
	case DW_CFA_val_offset_sf:
		r := m.reg(c, c.ULEB128())
		row.Regs[r] = Rule{Kind: RuleValOffset, Offset: c.SLEB128() * daf}
	case DW_CFA_restore_extended:
		m.restore(m.reg(c, c.ULEB128()))
	case DW_CFA_undefined:
		row.Regs[m.reg(c, c.ULEB128())] = Rule{Kind: RuleUndefined}
	case DW_CFA_same_value:
		row.Regs[m.reg(c, c.ULEB128())] = Rule{Kind: RuleSameValue}
	case DW_CFA_register:
		r := m.reg(c, c.ULEB128())
		row.Regs[r] = Rule{Kind: RuleRegister, Reg: m.reg(c, c.ULEB128())}
	case DW_CFA_expression:
		r := m.reg(c, c.ULEB128())
		row.Regs[r] = Rule{Kind: RuleExpression, Expr: m.expr(c)}
	case DW_CFA_val_expression:
		r := m.reg(c, c.ULEB128())
		row.Regs[r] = Rule{Kind: RuleValExpression, Expr: m.expr(c)}
	default:
		return false
	}
	return true
}

// restore sets register r's rule back to the one the CIE's initial
// instructions gave it (DWARF 5 §6.4.2.3).
func (m *machine) restore(r uint64) {
	if m.initial == nil {
		// In the CIE's own instructions there is nothing to restore to.
		delete(m.row.Regs, r)
		return
	}
	if rule, ok := m.initial.Regs[r]; ok {
		m.row.Regs[r] = rule
	} else {
		delete(m.row.Regs, r)
	}
}
