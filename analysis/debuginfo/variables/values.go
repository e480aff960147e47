package variables

import (
	"debug/dwarf"
	"errors"
	"fmt"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfreader"
)

// Value is an argument or local variable of a frame, as gdb's `info args`
// and `info locals` print it.
type Value struct {
	Name string
	Type string // C/C++ spelling, "" when unknown
	// Text is the value, or "<optimized out>" where its location does not
	// cover the pc or needs registers the unwinder did not recover.
	Text     string
	Argument bool
	// EntryValue is set when Text is "<optimized out>" only because the
	// location needs a DW_OP_entry_value (DWARF 5 §2.5.1.7) or gcc's
	// DW_OP_GNU_parameter_ref, which is not resolved yet (gdb resolves
	// them from the caller's call site).
	EntryValue bool
	// Addr is where the value lives in memory, for a struct or array; for
	// a pointer or reference, the address it holds (0 if unknown).
	Addr uint64
	// Members are a struct's members, an array's first elements ("[i]"),
	// or the members of the struct a non-NULL pointer points to, read
	// from memory a few levels deep.
	Members []Value
	// ViaPointer marks members reached through a pointer (p->member).
	ViaPointer bool
}

// Optimized out, as gdb prints it.
const optimizedOut = "<optimized out>"

// ErrNoScope says no function's debugging information covers a pc (or
// the module has no DWARF).
var ErrNoScope = errors.New("no DWARF scope covers the pc")

// InheritAbstract adds the variables of the abstract instance at origin
// that the concrete instance's variables do not refer to (they were
// optimized away entirely), and those of its lexical blocks that no
// concrete block refers to, as gdb's inherit_abstract_dies does.
func InheritAbstract(df *dwarfreader.DwarfFile, vars []scopeVar, origin uint64, cache map[int]*UnitCtx) []scopeVar {
	ouc, err := UnitCtxAt(df, origin, cache)
	if err != nil {
		return vars
	}
	seen := map[uint64]bool{}
	for _, v := range vars {
		// Only direct children count, as in gdb: a variable of a lexical
		// block of the concrete instance does not hide the abstract one.
		if v.attrs.Origin != 0 && v.depth == 0 {
			seen[v.attrs.Origin] = true
		}
	}
	for _, a := range ouc.abstractVars(origin) {
		if a.top != 0 && seen[a.top] {
			continue // its block has a concrete instance
		}
		if !seen[a.off] && len(vars) < maxScopeVars {
			a.attrs.loc = attrLoc{}
			a.attrs.Origin = a.off
			vars = append(vars, a)
		}
	}
	return vars
}

// ValueEval evaluates the variables of one frame.
type ValueEval struct {
	Df    *dwarfreader.DwarfFile
	Uc    *UnitCtx
	Pc    uint64
	Bias  uint64
	Fs    FrameState
	Cache map[int]*UnitCtx
	Cplus bool
	// members counts the struct members and elements read so far.
	members int

	FrameBaseAttr attrLoc
	FbUnit        *UnitCtx
	fbDone        bool
	fb            uint64
	fbErr         error
}

// maxOriginChain bounds DW_AT_abstract_origin chains.
const maxOriginChain = 4

func (ev *ValueEval) Value(v scopeVar) Value {
	if v.block {
		return Value{} // a lexical block, not a variable
	}
	a := v.attrs
	name, typ := a.name, a.typ
	for i, o := 0, a.Origin; o != 0 && i < maxOriginChain && (name == 0 || typ == 0); i++ {
		ouc, err := UnitCtxAt(ev.Df, o, ev.Cache)
		if err != nil {
			break
		}
		oa, _, ok := ouc.ReadDIE(o)
		if !ok {
			break
		}
		if name == 0 {
			name = oa.name
		}
		if typ == 0 {
			typ = oa.typ
		}
		if !a.hasConst && oa.hasConst {
			a.constVal, a.hasConst, a.constInt, a.constIsInt = oa.constVal, true, oa.constInt, oa.constIsInt
		}
		o = oa.Origin
	}
	t := readType(ev.Df, typ, ev.Cache, ev.Cplus, 0)
	out := Value{Name: ev.Df.Str(name), Type: t.name, Argument: a.tag == dwarf.TagFormalParameter}
	switch {
	case a.loc.present:
		l, err := ev.locate(v.uc, a.loc)
		switch {
		case errors.Is(err, errManyPieces):
			out.Text = "<pieces>"
		case errors.Is(err, errNoLocation):
			out.Text = optimizedOut
		case err != nil:
			out.Text = "<error: " + err.Error() + ">"
		default:
			out.Text = ev.format(t, l)
			out.EntryValue = l.entry && l.kind == locOptimized
			ev.expand(&out, t, l, 0)
		}
	case a.hasConst:
		b := a.constVal
		if a.constIsInt {
			b = uint64Bytes(uint64(a.constInt), ev.Df.Bo)
			if ev.Df.Bo.String() == "BigEndian" {
				b = b[8-min(8, max(int(t.size), 1)):]
			}
		}
		out.Text = ev.format(t, location{kind: locImplicit, bytes: b})
	default:
		out.Text = optimizedOut
	}
	return out
}

// env returns the expression environment of unit uc.
func (ev *ValueEval) env(uc *UnitCtx) *exprEnv {
	return &exprEnv{
		frame: ev.Fs, bo: ev.Df.Bo, asize: uc.u.Asize, offSize: uc.u.Format().OffSize, bias: ev.Bias,
		frameBase: ev.frameBase,
		addrx: func(idx uint64) (uint64, bool) {
			return dwarfreader.ReadLazyAt(ev.Df.Sec.Addr, uc.ud.Bases.Addr, idx, uc.u.Asize, ev.Df.Bo)
		},
	}
}

// frameBase evaluates the subprogram's DW_AT_frame_base (DWARF 5 §3.3.5),
// usually DW_OP_call_frame_cfa.
func (ev *ValueEval) frameBase() (uint64, error) {
	if ev.fbDone {
		return ev.fb, ev.fbErr
	}
	ev.fbDone = true
	if !ev.FrameBaseAttr.present || ev.FbUnit == nil {
		ev.fbErr = errors.New("no frame base")
		return 0, ev.fbErr
	}
	env := ev.env(ev.FbUnit)
	env.frameBase = func() (uint64, error) { return 0, errors.New("frame base refers to itself") }
	expr, err := ev.expr(ev.FbUnit, ev.FrameBaseAttr)
	if err != nil {
		ev.fbErr = err
		return 0, err
	}
	l, err := env.eval(expr)
	switch {
	case err != nil:
		ev.fbErr = err
	case l.kind == locMemory:
		ev.fb = l.addr
	case l.kind == locRegister:
		ev.fb = l.val // DW_OP_regN as frame base: the register's value (§3.3.5)
	default:
		ev.fbErr = errors.New("frame base unavailable")
	}
	return ev.fb, ev.fbErr
}

// expr returns the expression of a location attribute at ev.pc.
func (ev *ValueEval) expr(uc *UnitCtx, l attrLoc) ([]byte, error) {
	if !l.list {
		return l.expr, nil
	}
	c := &locListCtx{vers: uc.u.Vers, asize: uc.u.Asize, base: uc.ud.Rctx.Base, addrBase: uc.ud.Bases.Addr,
		bo: ev.Df.Bo, addr: ev.Df.Sec.Addr.All()}
	if uc.u.Vers < 5 {
		if split := ev.Df.Sec.SplitLoc; split != nil {
			c.gnuSplit = true // GNU DebugFission's .debug_loc.dwo
			return findLocation(split.All(), l.listOff, ev.Pc, c)
		}
		sec, _, _ := ev.Df.Obj.Section(".debug_loc")
		return findLocation(sec, l.listOff, ev.Pc, c)
	}
	sec, base := ev.loclists(uc)
	off := l.listOff
	if l.listx {
		// DW_FORM_loclistx: an index into the offsets table after
		// DW_AT_loclists_base, offsets relative to that base (§7.29).
		o, ok := dwarfreader.ReadAt(sec, base+off*uint64(uc.u.Format().OffSize), uc.u.Format().OffSize, ev.Df.Bo)
		if !ok {
			return nil, fmt.Errorf("bad location list index %d", off)
		}
		off = base + o
	}
	return findLocation(sec, off, ev.Pc, c)
}

// loclists returns the unit's .debug_loclists and the base its
// DW_FORM_loclistx indexes count from: DW_AT_loclists_base, or in a split
// unit, which has none, the offsets table right after the header of its
// .debug_loclists.dwo (or of its contribution to a .dwp; §7.29: 12 bytes,
// 20 in 64-bit DWARF).
func (ev *ValueEval) loclists(uc *UnitCtx) ([]byte, uint64) {
	if split := ev.Df.Sec.SplitLoc; split != nil {
		base := uc.Top.loclistsBase
		if base == 0 {
			base = 12
			if uc.u.Format().OffSize == 8 {
				base = 20
			}
		}
		return split.All(), base
	}
	sec, _, _ := ev.Df.Obj.Section(".debug_loclists")
	return sec, uc.Top.loclistsBase
}

// locate evaluates a location attribute at ev.pc.
func (ev *ValueEval) locate(uc *UnitCtx, l attrLoc) (location, error) {
	expr, err := ev.expr(uc, l)
	if err != nil {
		return location{}, err
	}
	return ev.env(uc).eval(expr)
}

// charArray prints a char array as gdb does (a string), when its bytes
// can be read.
func (ev *ValueEval) charArray(t *valueType, l location) (string, bool) {
	n := min(t.size, maxCharArray)
	switch l.kind {
	case locMemory:
		b := make([]byte, n)
		k, _ := ev.Fs.ReadMemory(l.addr, b)
		if int64(k) < n {
			return "", false
		}
		return charArrayText(b, t.size), true
	case locImplicit:
		if int64(len(l.bytes)) < n {
			return "", false
		}
		return charArrayText(l.bytes[:n], t.size), true
	}
	return "", false
}

// format prints the value at location l of type t.
func (ev *ValueEval) format(t *valueType, l location) string {
	switch l.kind {
	case locOptimized:
		return optimizedOut
	case locSynthetic:
		return "<synthetic pointer>"
	}
	if isCharArray(t) {
		if s, ok := ev.charArray(t, l); ok {
			return s
		}
	}
	switch t.kind {
	case kindStruct, kindArray:
		if l.kind == locMemory {
			return fmt.Sprintf("{...} @ 0x%x", l.addr)
		}
		return "{...}"
	case kindVoid, kindFunc:
		return "<unknown type>"
	}
	size := int(t.size)
	if size <= 0 || size > 8 {
		return "<unsupported size>"
	}
	b := make([]byte, 8)
	switch l.kind {
	case locMemory:
		n, err := ev.Fs.ReadMemory(l.addr, b[:size])
		if err != nil || n < size {
			return fmt.Sprintf("<error: Cannot access memory at address 0x%x>", l.addr)
		}
	case locRegister:
		ev.Df.Bo.PutUint64(b, l.val)
		if ev.Df.Bo.String() == "BigEndian" {
			b = b[8-size:]
		}
	case locImplicit:
		if len(l.bytes) < size {
			// gdb pads short implicit values (a narrower stack value).
			copy(b, l.bytes)
		} else {
			copy(b, l.bytes[:size])
		}
	}
	return formatScalar(t, b[:size], ev.Df.Bo, ev.Fs.ReadMemory)
}
