package debuginfo

import (
	"debug/dwarf"
	"errors"
	"fmt"
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
	// location needs a DW_OP_entry_value (DWARF 5 §2.5.1.7), which is not
	// resolved yet (gdb resolves it from the caller's call site).
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

// FrameValues returns the arguments and locals of one inline level of a
// frame: pc is the link-time pc to look up (a return address already less
// one), level is 0 for the innermost inlined function at pc (as Lookup's
// first Location), bias is the module's load bias (runtime - link-time),
// and fs gives the frame's registers, CFA and memory.
//
// The variables are the DW_TAG_formal_parameter and DW_TAG_variable
// children of that level's DW_TAG_inlined_subroutine or DW_TAG_subprogram
// and of its lexical blocks containing pc (DWARF 5 §3.3.8, §3.5), read on
// demand; arguments first, then locals innermost block first.
func (s *Symbols) FrameValues(pc uint64, level int, bias uint64, fs FrameState) ([]Value, error) {
	df := s.dwarfData()
	if df == nil {
		return nil, ErrNoScope
	}
	var (
		t     *unitTree
		chain []int
	)
	for _, u := range df.unitsFor(pc) {
		tr, err := df.tree(u)
		if err != nil {
			continue
		}
		if idx := tr.innermost(pc); idx >= 0 {
			t = tr
			for i := idx; i >= 0 && len(chain) < 1024; i = int(tr.dies[i].parent) {
				d := &tr.dies[i]
				if d.tag == dwarf.TagInlinedSubroutine || d.tag == dwarf.TagSubprogram {
					chain = append(chain, i)
					if d.tag == dwarf.TagSubprogram {
						break
					}
				}
			}
			break
		}
	}
	if t == nil || level < 0 || level >= len(chain) {
		return nil, ErrNoScope
	}
	cache := map[int]*unitCtx{}
	dfu := t.df
	scopeOff := uint64(t.dies[chain[level]].off)
	uc, err := dfu.unitCtxAt(scopeOff, cache)
	if err != nil {
		return nil, err
	}
	vars, scope, err := uc.scopeVars(scopeOff, pc)
	if err != nil {
		return nil, err
	}
	if scope.origin != 0 {
		vars = inheritAbstract(dfu, vars, scope.origin, cache)
	}
	ev := &valueEval{df: dfu, uc: uc, pc: pc, bias: bias, fs: fs, cache: cache,
		cplus: cPlusPlus(uc.top.lang)}
	subOff := uint64(t.dies[chain[len(chain)-1]].off)
	if suc, err := dfu.unitCtxAt(subOff, cache); err == nil {
		if sub, _, ok := suc.readDIE(subOff); ok {
			ev.frameBaseAttr, ev.fbUnit = sub.frameBase, suc
		}
	}
	var args, locals []Value
	for _, v := range vars {
		val := ev.value(v)
		if val.Name == "" {
			continue // gdb lists only named variables
		}
		if val.Argument {
			args = append(args, val)
		} else {
			locals = append(locals, val)
		}
	}
	return append(args, locals...), nil
}

// inheritAbstract adds the variables of the abstract instance at origin
// that the concrete instance's variables do not refer to (they were
// optimized away entirely), as gdb's inherit_abstract_dies does.
func inheritAbstract(df *dwarfFile, vars []scopeVar, origin uint64, cache map[int]*unitCtx) []scopeVar {
	ouc, err := df.unitCtxAt(origin, cache)
	if err != nil {
		return vars
	}
	seen := map[uint64]bool{}
	for _, v := range vars {
		// Only direct children count, as in gdb: a variable of a lexical
		// block of the concrete instance does not hide the abstract one.
		if v.attrs.origin != 0 && v.depth == 0 {
			seen[v.attrs.origin] = true
		}
	}
	for _, a := range ouc.abstractVars(origin) {
		if !seen[a.off] && len(vars) < maxScopeVars {
			a.attrs.loc = attrLoc{}
			a.attrs.origin = a.off
			vars = append(vars, a)
		}
	}
	return vars
}

// valueEval evaluates the variables of one frame.
type valueEval struct {
	df    *dwarfFile
	uc    *unitCtx
	pc    uint64
	bias  uint64
	fs    FrameState
	cache map[int]*unitCtx
	cplus bool
	// members counts the struct members and elements read so far.
	members int

	frameBaseAttr attrLoc
	fbUnit        *unitCtx
	fbDone        bool
	fb            uint64
	fbErr         error
}

// maxOriginChain bounds DW_AT_abstract_origin chains.
const maxOriginChain = 4

func (ev *valueEval) value(v scopeVar) Value {
	a := v.attrs
	name, typ := a.name, a.typ
	for i, o := 0, a.origin; o != 0 && i < maxOriginChain && (name == 0 || typ == 0); i++ {
		ouc, err := ev.df.unitCtxAt(o, ev.cache)
		if err != nil {
			break
		}
		oa, _, ok := ouc.readDIE(o)
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
		o = oa.origin
	}
	t := ev.df.readType(typ, ev.cache, ev.cplus, 0)
	out := Value{Name: ev.df.str(name), Type: t.name, Argument: a.tag == dwarf.TagFormalParameter}
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
			b = uint64Bytes(uint64(a.constInt), ev.df.bo)
			if ev.df.bo.String() == "BigEndian" {
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
func (ev *valueEval) env(uc *unitCtx) *exprEnv {
	return &exprEnv{
		frame: ev.fs, bo: ev.df.bo, asize: uc.u.asize, offSize: uc.u.format().offSize, bias: ev.bias,
		frameBase: ev.frameBase,
		addrx: func(idx uint64) (uint64, bool) {
			if idx > uint64(len(ev.df.sec.addr)) {
				return 0, false
			}
			return readAt(ev.df.sec.addr, uc.ud.bases.addr+idx*uint64(uc.u.asize), uc.u.asize, ev.df.bo)
		},
	}
}

// frameBase evaluates the subprogram's DW_AT_frame_base (DWARF 5 §3.3.5),
// usually DW_OP_call_frame_cfa.
func (ev *valueEval) frameBase() (uint64, error) {
	if ev.fbDone {
		return ev.fb, ev.fbErr
	}
	ev.fbDone = true
	if !ev.frameBaseAttr.present || ev.fbUnit == nil {
		ev.fbErr = errors.New("no frame base")
		return 0, ev.fbErr
	}
	env := ev.env(ev.fbUnit)
	env.frameBase = func() (uint64, error) { return 0, errors.New("frame base refers to itself") }
	expr, err := ev.expr(ev.fbUnit, ev.frameBaseAttr)
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
func (ev *valueEval) expr(uc *unitCtx, l attrLoc) ([]byte, error) {
	if !l.list {
		return l.expr, nil
	}
	c := &locListCtx{vers: uc.u.vers, asize: uc.u.asize, base: uc.ud.rctx.base, addrBase: uc.ud.bases.addr,
		bo: ev.df.bo, addr: ev.df.sec.addr}
	if uc.u.vers >= 5 {
		sec, _, _ := ev.df.obj.Section(".debug_loclists")
		off := l.listOff
		if l.listx {
			// DW_FORM_loclistx: an index into the offsets table after
			// DW_AT_loclists_base, offsets relative to that base (§7.29).
			base := uc.top.loclistsBase
			o, ok := readAt(sec, base+off*uint64(uc.u.format().offSize), uc.u.format().offSize, ev.df.bo)
			if !ok {
				return nil, fmt.Errorf("bad location list index %d", off)
			}
			off = base + o
		}
		return findLocation(sec, off, ev.pc, c)
	}
	sec, _, _ := ev.df.obj.Section(".debug_loc")
	return findLocation(sec, l.listOff, ev.pc, c)
}

// locate evaluates a location attribute at ev.pc.
func (ev *valueEval) locate(uc *unitCtx, l attrLoc) (location, error) {
	expr, err := ev.expr(uc, l)
	if err != nil {
		return location{}, err
	}
	return ev.env(uc).eval(expr)
}

// format prints the value at location l of type t.
func (ev *valueEval) format(t *valueType, l location) string {
	switch l.kind {
	case locOptimized:
		return optimizedOut
	case locSynthetic:
		return "<synthetic pointer>"
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
		n, err := ev.fs.ReadMemory(l.addr, b[:size])
		if err != nil || n < size {
			return fmt.Sprintf("<error: Cannot access memory at address 0x%x>", l.addr)
		}
	case locRegister:
		ev.df.bo.PutUint64(b, l.val)
		if ev.df.bo.String() == "BigEndian" {
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
	return formatScalar(t, b[:size], ev.df.bo, ev.fs.ReadMemory)
}
