package debuginfo

import (
	"debug/dwarf"
	"encoding/binary"
	"errors"
)

// The variables of a scope, read on demand: decodeUnit drops parameter and
// variable DIEs, so the children of a frame's subprogram or inlined
// subroutine are read from .debug_info only when values are asked for.

// varAttrs are the attributes of a variable, parameter, type or scope DIE
// that values need.
type varAttrs struct {
	tag          dwarf.Tag
	children     bool
	name         strRef
	typ          uint64 // DW_AT_type, a .debug_info offset (0 if none)
	origin       uint64 // DW_AT_abstract_origin
	loc          attrLoc
	frameBase    attrLoc
	constVal     []byte // DW_AT_const_value as bytes (little-endian for constants)
	hasConst     bool
	constInt     int64
	constIsInt   bool
	byteSize     int64
	encoding     int64
	count        int64 // DW_AT_count or DW_AT_upper_bound+1 of a subrange
	hasCount     bool
	pc           pcAttrs
	lang         int64
	loclistsBase uint64
	artificial   bool
	memberOff    int64 // DW_AT_data_member_location (a constant offset)
	hasMemberOff bool
	bitField     bool // DW_AT_bit_size or DW_AT_data_bit_offset: a bit-field member
}

// attrLoc is a DW_AT_location or DW_AT_frame_base: an expression, or a
// location list (a section offset, or a DW_FORM_loclistx index).
type attrLoc struct {
	present bool
	expr    []byte
	list    bool
	listOff uint64
	listx   bool
}

// unitCtx is one unit's context for reading its DIEs.
type unitCtx struct {
	df  *dwarfFile
	u   unitHeader
	ud  *unitDIE
	top varAttrs // the unit DIE's own attributes
}

// unitCtxAt returns the context of the unit holding .debug_info offset off.
func (df *dwarfFile) unitCtxAt(off uint64, cache map[int]*unitCtx) (*unitCtx, error) {
	i, ok := df.unitOf(off)
	if !ok {
		return nil, errors.New("DIE offset outside every unit")
	}
	if uc, ok := cache[i]; ok {
		return uc, nil
	}
	u := df.units[i]
	ud, err := df.readUnitDIE(u, true)
	if err != nil {
		return nil, err
	}
	uc := &unitCtx{df: df, u: u, ud: ud}
	r := uc.reader(u.dieOff)
	if a := ud.tab.lookup(r.uleb()); a != nil {
		uc.readVarAttrs(r, a, &uc.top)
	}
	if cache != nil {
		cache[i] = uc
	}
	return uc, nil
}

func (uc *unitCtx) reader(off uint64) *dieReader {
	r := &dieReader{b: uc.df.sec.info, pos: int(off), end: int(uc.u.end), bo: uc.df.bo, uf: uc.u.format()}
	if off < uc.u.dieOff || off >= uc.u.end {
		r.fail()
	}
	return r
}

// readDIE reads the DIE at off of this unit.
func (uc *unitCtx) readDIE(off uint64) (varAttrs, *dieReader, bool) {
	var va varAttrs
	r := uc.reader(off)
	a := uc.ud.tab.lookup(r.uleb())
	if r.bad || a == nil {
		return va, r, false
	}
	uc.readVarAttrs(r, a, &va)
	return va, r, !r.bad
}

// readVarAttrs decodes the attributes of a DIE of abbreviation a.
func (uc *unitCtx) readVarAttrs(r *dieReader, a *abbrev, out *varAttrs) {
	*out = varAttrs{tag: a.tag, children: a.children}
	for i := range a.attrs {
		at := &a.attrs[i]
		switch at.form {
		case formExprloc, formBlock, formBlock1, formBlock2, formBlock4:
			b, ok := r.block(at.form)
			if !ok {
				return
			}
			out.setBlock(at.attr, b)
			continue
		case formLoclistx:
			l := attrLoc{present: true, list: true, listx: true, listOff: r.uleb()}
			switch at.attr {
			case dwarf.AttrLocation:
				out.loc = l
			case dwarf.AttrFrameBase:
				out.frameBase = l
			}
			continue
		case formData16:
			if at.attr == dwarf.AttrConstValue && r.end-r.pos >= 16 {
				out.constVal, out.hasConst = r.b[r.pos:r.pos+16], true
			}
			r.skip(16)
			continue
		}
		v := r.value(uc.df, at.form, at.implicit, uc.u.off, &uc.ud.bases)
		if r.bad {
			return
		}
		out.set(at, v, uc.u.format())
	}
}

// block reads a block or exprloc value of form f; false (and r failed)
// when it runs past the DIE's unit.
func (r *dieReader) block(f form) ([]byte, bool) {
	var n uint64
	switch f {
	case formBlock1:
		n = uint64(r.u8())
	case formBlock2:
		n = r.uint(2)
	case formBlock4:
		n = r.uint(4)
	default:
		n = r.uleb()
	}
	if r.bad || n > uint64(r.end-r.pos) {
		r.fail()
		return nil, false
	}
	b := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return b, true
}

// setBlock keeps a block attribute: a location, frame base, constant or
// member offset expression.
func (va *varAttrs) setBlock(attr dwarf.Attr, b []byte) {
	switch attr {
	case dwarf.AttrLocation:
		va.loc = attrLoc{present: true, expr: b}
	case dwarf.AttrFrameBase:
		va.frameBase = attrLoc{present: true, expr: b}
	case dwarf.AttrConstValue:
		va.constVal, va.hasConst = b, true
	case dwarf.AttrDataMemberLoc:
		va.memberOff, va.hasMemberOff = plusUconst(b)
	}
}

// set keeps attribute at's value v (a unit of format uf) if variables,
// their types or their scopes use it.
func (va *varAttrs) set(at *abbrevAttr, v attrVal, uf unitFormat) {
	switch at.attr {
	case dwarf.AttrName:
		if v.class == valStr {
			va.name = strRef(v.u)
		}
	case dwarf.AttrType:
		if v.class == valRef {
			va.typ = v.u
		}
	case dwarf.AttrAbstractOrigin:
		if v.class == valRef {
			va.origin = v.u
		}
	case dwarf.AttrLocation, dwarf.AttrFrameBase:
		if v.class == valSecOff || v.class == valConst {
			l := attrLoc{present: true, list: true, listOff: v.u}
			if at.attr == dwarf.AttrLocation {
				va.loc = l
			} else {
				va.frameBase = l
			}
		}
	case dwarf.AttrConstValue:
		if v.class == valConst {
			va.hasConst, va.constIsInt, va.constInt = true, true, int64(v.u)
			if at.form == formData1 || at.form == formData2 || at.form == formData4 || at.form == formData8 {
				va.constIsInt = false // sign unknown: the type decides
				va.constVal = uint64Bytes(v.u, binary.LittleEndian)[:fixedFormSize(at.form, uf)]
			}
		}
	case dwarf.AttrDataMemberLoc:
		if v.class == valConst {
			va.memberOff, va.hasMemberOff = v.int64()
		}
	case dwarf.AttrBitSize, dwarf.AttrDataBitOffset:
		va.bitField = true
	default:
		va.setSizeOrScope(at.attr, v)
	}
}

// setSizeOrScope keeps the size, encoding and bounds of a type and the pc
// range, language and location list base of a scope.
func (va *varAttrs) setSizeOrScope(attr dwarf.Attr, v attrVal) {
	switch attr {
	case dwarf.AttrByteSize:
		va.byteSize, _ = v.int64()
	case dwarf.AttrEncoding:
		va.encoding, _ = v.int64()
	case dwarf.AttrCount:
		if n, ok := v.int64(); ok {
			va.count, va.hasCount = n, true
		}
	case dwarf.AttrUpperBound:
		if n, ok := v.int64(); ok {
			va.count, va.hasCount = n+1, true
		}
	case dwarf.AttrLowpc:
		va.pc.low, va.pc.hasLow = v.addr()
	case dwarf.AttrHighpc:
		switch v.class {
		case valAddr:
			va.pc.high, va.pc.highKind = v.u, highAddr
		case valConst:
			va.pc.high, va.pc.highKind = v.u, highOffset
		}
	case dwarf.AttrRanges:
		va.pc.ranges, va.pc.hasRangesAttr = v, true
	case dwarf.AttrLanguage:
		va.lang, _ = v.int64()
	case dwarf.AttrLoclistsBase:
		if n, ok := v.int64(); ok && n >= 0 {
			va.loclistsBase = uint64(n)
		}
	case dwarf.AttrArtificial:
		va.artificial = v.flag()
	}
}

// scopeVar is a parameter or variable DIE found in a frame's scopes.
type scopeVar struct {
	off   uint64
	attrs varAttrs
	uc    *unitCtx
	depth int // lexical block nesting below the scope
}

// maxScopeVars bounds the variables one frame lists.
const maxScopeVars = 4096

// scopeVars lists the parameters and variables that are children of the
// scope DIE at off, and of the lexical blocks in it that contain pc
// (DWARF 5 §3.5), innermost blocks first. Inlined subroutines and nested
// functions in the scope are not its variables and are skipped.
func (uc *unitCtx) scopeVars(off, pc uint64) ([]scopeVar, varAttrs, error) {
	r := uc.reader(off)
	a := uc.ud.tab.lookup(r.uleb())
	if r.bad || a == nil {
		return nil, varAttrs{}, errors.New("unreadable scope DIE")
	}
	var scope varAttrs
	uc.readVarAttrs(r, a, &scope)
	if r.bad {
		return nil, scope, errors.New("unreadable scope DIE")
	}
	var out []scopeVar
	if a.children {
		uc.children(r, pc, &out, 0)
	}
	// Innermost block first, as gdb's info locals (a stable sort keeps
	// DIE order within a block).
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].depth > out[j-1].depth; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, scope, nil
}

func (uc *unitCtx) children(r *dieReader, pc uint64, out *[]scopeVar, depth int) {
	tab := uc.ud.tab
	for !r.bad && len(*out) < maxScopeVars {
		off := uint64(r.pos)
		code := r.uleb()
		if r.bad || code == 0 {
			return
		}
		a := tab.lookup(code)
		if a == nil {
			r.fail()
			return
		}
		switch a.tag {
		case dwarf.TagFormalParameter, dwarf.TagVariable:
			var va varAttrs
			uc.readVarAttrs(r, a, &va)
			if r.bad {
				return
			}
			*out = append(*out, scopeVar{off: off, attrs: va, uc: uc, depth: depth})
			if a.children {
				r.skipChildren(tab, 0, uc.u.off)
			}
		case dwarf.TagLexDwarfBlock:
			var va varAttrs
			uc.readVarAttrs(r, a, &va)
			if r.bad || !a.children {
				continue
			}
			if depth < maxDIEDepth && uc.contains(&va.pc, pc) {
				uc.children(r, pc, out, depth+1)
			} else {
				r.skipChildren(tab, 0, uc.u.off)
			}
		default:
			sib := r.skipAttrs(a, uc.u.off)
			if a.children && !r.bad {
				r.skipChildren(tab, sib, uc.u.off)
			}
		}
	}
}

// contains reports whether the DIE with pc attributes p covers pc; a block
// without any (gcc emits some for scopes of declarations only) covers
// nothing.
func (uc *unitCtx) contains(p *pcAttrs, pc uint64) bool {
	rs, ok := uc.df.appendRanges(nil, p, &uc.ud.rctx)
	if !ok {
		return false
	}
	for _, rg := range rs {
		if rg[0] <= pc && pc < rg[1] {
			return true
		}
	}
	return false
}

// abstractVars lists the parameters and variables directly under the
// abstract scope at off (an inlined function's abstract instance), for
// those a concrete instance does not mention (gdb's inherit_abstract_dies).
func (uc *unitCtx) abstractVars(off uint64) []scopeVar {
	r := uc.reader(off)
	a := uc.ud.tab.lookup(r.uleb())
	if r.bad || a == nil || !a.children {
		return nil
	}
	r.skipAttrs(a, uc.u.off)
	var out []scopeVar
	tab := uc.ud.tab
	for !r.bad && len(out) < maxScopeVars {
		doff := uint64(r.pos)
		code := r.uleb()
		if r.bad || code == 0 {
			break
		}
		a := tab.lookup(code)
		if a == nil {
			break
		}
		if a.tag == dwarf.TagFormalParameter || a.tag == dwarf.TagVariable {
			var va varAttrs
			uc.readVarAttrs(r, a, &va)
			out = append(out, scopeVar{off: doff, attrs: va, uc: uc})
			if a.children {
				r.skipChildren(tab, 0, uc.u.off)
			}
			continue
		}
		sib := r.skipAttrs(a, uc.u.off)
		if a.children && !r.bad {
			r.skipChildren(tab, sib, uc.u.off)
		}
	}
	return out
}
