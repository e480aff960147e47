package op

// The handlers of the opcode table (ops.go), by section of DWARF 5 §2.5.1.
// Each runs the operation m.code, whose operands run has decoded into m.x
// and m.y, on the stack s (its top at the end) and returns the new stack.

// Register values (§2.5.1.2) and register locations (§2.6.1.1.3).

// breg pushes DW_OP_bregN's register plus the offset.
func (m *machine) breg(s []uint64) ([]uint64, *Error) {
	n := uint64(m.code - DW_OP_breg0)
	r, ok := m.ctx.Reg(n)
	if !ok {
		return s, m.fail("register %d unknown", n)
	}
	return append(s, r+m.x), nil
}

// bregx pushes DW_OP_bregx's register plus the offset.
func (m *machine) bregx(s []uint64) ([]uint64, *Error) {
	if m.truncated {
		return s, nil
	}
	r, ok := m.ctx.Reg(m.x)
	if !ok {
		return s, m.fail("register %d unknown", m.x)
	}
	return append(s, r+m.y), nil
}

// regLocation ends the expression with the value of the register DW_OP_regN
// or DW_OP_regx names; it must be the expression's last operation.
func (m *machine) regLocation(s []uint64) ([]uint64, *Error) {
	n := uint64(m.code - DW_OP_reg0)
	if m.code == DW_OP_regx {
		n = m.x
	}
	if m.truncated {
		return s, nil
	}
	if m.c.Len() != 0 {
		return s, m.fail("register location must be the whole expression")
	}
	r, ok := m.ctx.Reg(n)
	if !ok {
		return s, m.fail("register %d unknown", n)
	}
	m.reg, m.next = r, done
	return s, nil
}

// Stack operations (§2.5.1.3).

// copyEntry pushes a copy of the top entry (DW_OP_dup), of the one below
// it (DW_OP_over) or of the one the operand says (DW_OP_pick).
func (m *machine) copyEntry(s []uint64) ([]uint64, *Error) {
	i := int(m.x)
	switch m.code {
	case DW_OP_dup:
		i = 0
	case DW_OP_over:
		i = 1
	}
	if len(s) < i+1 {
		if m.code == DW_OP_pick {
			return s, m.fail("pick %d beyond stack of %d", i, len(s))
		}
		return s, m.fail("stack underflow")
	}
	return append(s, s[len(s)-1-i]), nil
}

func (m *machine) drop(s []uint64) ([]uint64, *Error) {
	if err := m.need(s, 1); err != nil {
		return s, err
	}
	return s[:len(s)-1], nil
}

func (m *machine) swap(s []uint64) ([]uint64, *Error) {
	if err := m.need(s, 2); err != nil {
		return s, err
	}
	n := len(s)
	s[n-1], s[n-2] = s[n-2], s[n-1]
	return s, nil
}

// rot moves the top entry below the next two.
func (m *machine) rot(s []uint64) ([]uint64, *Error) {
	if err := m.need(s, 3); err != nil {
		return s, err
	}
	n := len(s)
	s[n-1], s[n-2], s[n-3] = s[n-2], s[n-3], s[n-1]
	return s, nil
}

// deref replaces the address on top of the stack by the pointer-sized value
// there (DW_OP_deref) or by the value of the operand's size
// (DW_OP_deref_size).
func (m *machine) deref(s []uint64) ([]uint64, *Error) {
	size := m.ptrSize
	if m.code == DW_OP_deref_size {
		size = int(m.x)
		if !m.truncated && (size < 1 || size > m.ptrSize) {
			return s, m.fail("bad deref size %d", size)
		}
	}
	if m.truncated {
		return s, nil
	}
	if err := m.need(s, 1); err != nil {
		return s, err
	}
	addr, s := pop(s)
	v, err := m.ctx.ReadMemory(addr, size)
	if err != nil {
		return s, &Error{Off: m.at, Op: m.code, Msg: err.Error(), Err: err}
	}
	return append(s, v), nil
}

// Arithmetic and logical operations (§2.5.1.4).

// unary runs DW_OP_abs, DW_OP_neg or DW_OP_not on the top of the stack.
func (m *machine) unary(s []uint64) ([]uint64, *Error) {
	if err := m.need(s, 1); err != nil {
		return s, err
	}
	v := &s[len(s)-1]
	switch m.code {
	case DW_OP_abs:
		if int64(*v) < 0 {
			*v = -*v
		}
	case DW_OP_neg:
		*v = -*v
	case DW_OP_not:
		*v = ^*v
	}
	return s, nil
}

func (m *machine) plusUconst(s []uint64) ([]uint64, *Error) {
	if m.truncated {
		return s, nil
	}
	if err := m.need(s, 1); err != nil {
		return s, err
	}
	s[len(s)-1] += m.x
	return s, nil
}

// binary runs a two-operand operation (binary2) on the top two entries.
func (m *machine) binary(s []uint64) ([]uint64, *Error) {
	if err := m.need(s, 2); err != nil {
		return s, err
	}
	b, s := pop(s)
	a, s := pop(s)
	v, ok := binary2(m.code, a, b)
	if !ok {
		return s, m.fail("division by zero")
	}
	return append(s, v), nil
}

// Control flow (§2.5.1.5).

// branch runs DW_OP_skip, and DW_OP_bra, which pops a value and branches
// unless it is zero.
func (m *machine) branch(s []uint64) ([]uint64, *Error) {
	if m.truncated {
		return s, nil
	}
	if m.code == DW_OP_bra {
		if err := m.need(s, 1); err != nil {
			return s, err
		}
		var v uint64
		if v, s = pop(s); v == 0 {
			m.next = branchNotTaken
			return s, nil
		}
	}
	target := m.c.Off + int(int64(m.x))
	if target < 0 || target > len(m.c.Data) {
		return s, m.fail("branch target %d outside expression", target)
	}
	m.c.Seek(target)
	return s, nil
}
