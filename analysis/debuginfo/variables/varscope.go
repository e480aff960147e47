package variables

import (
	"debug/dwarf"
	"encoding/binary"
	"errors"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfform"
	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfreader"
)

// The variables of a scope, read on demand: decodeUnit drops parameter and
// variable DIEs, so the children of a frame's subprogram or inlined
// subroutine are read from .debug_info only when values are asked for.

// varAttrs are the attributes of a variable, parameter, type or scope DIE
// that values need.
type varAttrs struct {
	tag          dwarf.Tag
	children     bool
	name         dwarfreader.StrRef
	typ          uint64 // DW_AT_type, a .debug_info offset (0 if none)
	Origin       uint64 // DW_AT_abstract_origin
	loc          attrLoc
	FrameBase    attrLoc
	constVal     []byte // DW_AT_const_value as bytes (little-endian for constants)
	hasConst     bool
	constInt     int64
	constIsInt   bool
	byteSize     int64
	encoding     int64
	count        int64 // DW_AT_count or DW_AT_upper_bound+1 of a subrange
	hasCount     bool
	pc           dwarfreader.PcAttrs
	Lang         int64
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

// UnitCtx is one unit's context for reading its DIEs.
type UnitCtx struct {
	df  *dwarfreader.DwarfFile
	u   dwarfreader.UnitHeader
	ud  *dwarfreader.UnitDIE
	Top varAttrs // the unit DIE's own attributes
}

// UnitCtxAt returns the context of the unit holding .debug_info offset off.
func UnitCtxAt(df *dwarfreader.DwarfFile, off uint64, cache map[int]*UnitCtx) (*UnitCtx, error) {
	i, ok := df.UnitOf(off)
	if !ok {
		return nil, errors.New("DIE offset outside every unit")
	}
	if uc, ok := cache[i]; ok {
		return uc, nil
	}
	u := df.Unit(i)
	ud, err := df.ReadUnitDIE(u, true)
	if err != nil {
		return nil, err
	}
	uc := &UnitCtx{df: df, u: u, ud: ud}
	r := uc.reader(u.DieOff)
	if a := ud.Tab.Lookup(r.Uleb()); a != nil {
		uc.readVarAttrs(r, a, &uc.Top)
	}
	if cache != nil {
		cache[i] = uc
	}
	return uc, nil
}

func (uc *UnitCtx) reader(off uint64) *dwarfreader.DieReader {
	r := &dwarfreader.DieReader{B: uc.df.Sec.Info.Upto(uc.u.End), Pos: int(off), End: int(uc.u.End), Bo: uc.df.Bo, Uf: uc.u.Format()}
	if off < uc.u.DieOff || off >= uc.u.End {
		r.Fail()
	}
	return r
}

// ReadDIE reads the DIE at off of this unit.
func (uc *UnitCtx) ReadDIE(off uint64) (varAttrs, *dwarfreader.DieReader, bool) {
	var va varAttrs
	r := uc.reader(off)
	a := uc.ud.Tab.Lookup(r.Uleb())
	if r.Bad || a == nil {
		return va, r, false
	}
	uc.readVarAttrs(r, a, &va)
	return va, r, !r.Bad
}

// readVarAttrs decodes the attributes of a DIE of abbreviation a.
func (uc *UnitCtx) readVarAttrs(r *dwarfreader.DieReader, a *dwarfreader.Abbrev, out *varAttrs) {
	*out = varAttrs{tag: a.Tag, children: a.Children}
	for i := range a.Attrs {
		at := &a.Attrs[i]
		switch at.Form {
		case dwarfform.FormExprloc, dwarfform.FormBlock, dwarfform.FormBlock1, dwarfform.FormBlock2, dwarfform.FormBlock4:
			b, ok := r.Block(at.Form)
			if !ok {
				return
			}
			out.setBlock(at.Attr, b)
			continue
		case dwarfform.FormLoclistx:
			l := attrLoc{present: true, list: true, listx: true, listOff: r.Uleb()}
			switch at.Attr {
			case dwarf.AttrLocation:
				out.loc = l
			case dwarf.AttrFrameBase:
				out.FrameBase = l
			}
			continue
		case dwarfform.FormData16:
			if at.Attr == dwarf.AttrConstValue && r.End-r.Pos >= 16 {
				out.constVal, out.hasConst = r.B[r.Pos:r.Pos+16], true
			}
			r.Skip(16)
			continue
		}
		v := r.Value(uc.df, at.Form, at.Implicit, uc.u.Off, &uc.ud.Bases)
		if r.Bad {
			return
		}
		out.set(at, v, uc.u.Format())
	}
}

// setBlock keeps a block attribute: a location, frame base, constant or
// member offset expression.
func (va *varAttrs) setBlock(attr dwarf.Attr, b []byte) {
	switch attr {
	case dwarf.AttrLocation:
		va.loc = attrLoc{present: true, expr: b}
	case dwarf.AttrFrameBase:
		va.FrameBase = attrLoc{present: true, expr: b}
	case dwarf.AttrConstValue:
		va.constVal, va.hasConst = b, true
	case dwarf.AttrDataMemberLoc:
		va.memberOff, va.hasMemberOff = plusUconst(b)
	}
}

// set keeps attribute at's value v (a unit of format uf) if variables,
// their types or their scopes use it.
func (va *varAttrs) set(at *dwarfreader.AbbrevAttr, v dwarfreader.AttrVal, uf dwarfreader.UnitFormat) {
	switch at.Attr {
	case dwarf.AttrName:
		if v.Class == dwarfreader.ValStr {
			va.name = dwarfreader.StrRef(v.U)
		}
	case dwarf.AttrType:
		if v.Class == dwarfreader.ValRef {
			va.typ = v.U
		}
	case dwarf.AttrAbstractOrigin:
		if v.Class == dwarfreader.ValRef {
			va.Origin = v.U
		}
	case dwarf.AttrLocation, dwarf.AttrFrameBase:
		if v.Class == dwarfreader.ValSecOff || v.Class == dwarfreader.ValConst {
			l := attrLoc{present: true, list: true, listOff: v.U}
			if at.Attr == dwarf.AttrLocation {
				va.loc = l
			} else {
				va.FrameBase = l
			}
		}
	case dwarf.AttrConstValue:
		if v.Class == dwarfreader.ValConst {
			va.hasConst, va.constIsInt, va.constInt = true, true, int64(v.U)
			if at.Form == dwarfform.FormData1 || at.Form == dwarfform.FormData2 || at.Form == dwarfform.FormData4 || at.Form == dwarfform.FormData8 {
				va.constIsInt = false // sign unknown: the type decides
				va.constVal = uint64Bytes(v.U, binary.LittleEndian)[:dwarfreader.FixedFormSize(at.Form, uf)]
			}
		}
	case dwarf.AttrDataMemberLoc:
		if v.Class == dwarfreader.ValConst {
			va.memberOff, va.hasMemberOff = v.Int64()
		}
	case dwarf.AttrBitSize, dwarf.AttrDataBitOffset:
		va.bitField = true
	default:
		va.setSizeOrScope(at.Attr, v)
	}
}

// setSizeOrScope keeps the size, encoding and bounds of a type and the pc
// range, language and location list base of a scope.
func (va *varAttrs) setSizeOrScope(attr dwarf.Attr, v dwarfreader.AttrVal) {
	switch attr {
	case dwarf.AttrByteSize:
		va.byteSize, _ = v.Int64()
	case dwarf.AttrEncoding:
		va.encoding, _ = v.Int64()
	case dwarf.AttrCount:
		if n, ok := v.Int64(); ok {
			va.count, va.hasCount = n, true
		}
	case dwarf.AttrUpperBound:
		if n, ok := v.Int64(); ok {
			va.count, va.hasCount = n+1, true
		}
	case dwarf.AttrLowpc:
		va.pc.Low, va.pc.HasLow = v.Addr()
	case dwarf.AttrHighpc:
		switch v.Class {
		case dwarfreader.ValAddr:
			va.pc.High, va.pc.HighKind = v.U, dwarfreader.HighAddr
		case dwarfreader.ValConst:
			va.pc.High, va.pc.HighKind = v.U, dwarfreader.HighOffset
		}
	case dwarf.AttrRanges:
		va.pc.Ranges, va.pc.HasRangesAttr = v, true
	case dwarf.AttrLanguage:
		va.Lang, _ = v.Int64()
	case dwarf.AttrLoclistsBase:
		if n, ok := v.Int64(); ok && n >= 0 {
			va.loclistsBase = uint64(n)
		}
	case dwarf.AttrArtificial:
		va.artificial = v.Flag()
	}
}

// scopeVar is a parameter or variable DIE found in a frame's scopes.
type scopeVar struct {
	off   uint64
	attrs varAttrs
	uc    *UnitCtx
	depth int // lexical block nesting below the scope
	// block marks a lexical block of the scope (depth 0) that names an
	// abstract block: not a variable (Value gives it no name), it tells
	// InheritAbstract that the abstract block was not optimized away.
	block bool
	// top is, for a variable of an abstract lexical block, that block's
	// top-level block in the abstract scope (abstractVars).
	top uint64
}

// maxScopeVars bounds the variables one frame lists.
const maxScopeVars = 4096

// ScopeVars lists the parameters and variables that are children of the
// scope DIE at off, and of the lexical blocks in it that contain pc
// (DWARF 5 §3.5), innermost blocks first. Inlined subroutines and nested
// functions in the scope are not its variables and are skipped.
func (uc *UnitCtx) ScopeVars(off, pc uint64) ([]scopeVar, varAttrs, error) {
	r := uc.reader(off)
	a := uc.ud.Tab.Lookup(r.Uleb())
	if r.Bad || a == nil {
		return nil, varAttrs{}, errors.New("unreadable scope DIE")
	}
	var scope varAttrs
	uc.readVarAttrs(r, a, &scope)
	if r.Bad {
		return nil, scope, errors.New("unreadable scope DIE")
	}
	var out []scopeVar
	if a.Children {
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

func (uc *UnitCtx) children(r *dwarfreader.DieReader, pc uint64, out *[]scopeVar, depth int) {
	tab := uc.ud.Tab
	for !r.Bad && len(*out) < maxScopeVars {
		off := uint64(r.Pos)
		code := r.Uleb()
		if r.Bad || code == 0 {
			return
		}
		a := tab.Lookup(code)
		if a == nil {
			r.Fail()
			return
		}
		switch a.Tag {
		case dwarf.TagFormalParameter, dwarf.TagVariable:
			var va varAttrs
			uc.readVarAttrs(r, a, &va)
			if r.Bad {
				return
			}
			*out = append(*out, scopeVar{off: off, attrs: va, uc: uc, depth: depth})
			if a.Children {
				r.SkipChildren(tab, 0, uc.u.Off)
			}
		case dwarf.TagLabel:
			uc.label(r, a, off, out, depth)
		case dwarf.TagLexDwarfBlock:
			var va varAttrs
			uc.readVarAttrs(r, a, &va)
			if depth == 0 && va.Origin != 0 {
				*out = append(*out, scopeVar{off: off, attrs: va, uc: uc, block: true})
			}
			if r.Bad || !a.Children {
				continue
			}
			if depth < dwarfreader.MaxDIEDepth && uc.contains(&va.pc, pc) {
				uc.children(r, pc, out, depth+1)
			} else {
				r.SkipChildren(tab, 0, uc.u.Off)
			}
		default:
			sib := r.SkipAttrs(a, uc.u.Off)
			if a.Children && !r.Bad {
				r.SkipChildren(tab, sib, uc.u.Off)
			}
		}
	}
}

// label adds the DW_TAG_label at off to out when it has no address: gdb
// lists such a label (a goto target the optimizer removed) among the
// locals as <optimized out> (LOC_OPTIMIZED_OUT); a label with one is not a
// variable.
func (uc *UnitCtx) label(r *dwarfreader.DieReader, a *dwarfreader.Abbrev, off uint64, out *[]scopeVar, depth int) {
	var va varAttrs
	uc.readVarAttrs(r, a, &va)
	if r.Bad {
		return
	}
	if !va.pc.HasLow {
		*out = append(*out, scopeVar{off: off, attrs: va, uc: uc, depth: depth})
	}
	if a.Children {
		r.SkipChildren(uc.ud.Tab, 0, uc.u.Off)
	}
}

// contains reports whether the DIE with pc attributes p covers pc; a block
// without any (gcc emits some for scopes of declarations only) covers
// nothing.
func (uc *UnitCtx) contains(p *dwarfreader.PcAttrs, pc uint64) bool {
	rs, ok := uc.df.AppendRanges(nil, p, &uc.ud.Rctx)
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

// abstractVars lists the parameters and variables under the abstract
// scope at off (an inlined function's abstract instance), for those a
// concrete instance does not mention (gdb's inherit_abstract_dies): its
// direct children, and the variables of its lexical blocks, which have no
// addresses in an abstract instance and so count as the scope's own
// (gdb's read_lexical_block_scope), each with its top-level block in top.
func (uc *UnitCtx) abstractVars(off uint64) []scopeVar {
	r := uc.reader(off)
	a := uc.ud.Tab.Lookup(r.Uleb())
	if r.Bad || a == nil || !a.Children {
		return nil
	}
	r.SkipAttrs(a, uc.u.Off)
	var out []scopeVar
	uc.abstractChildren(r, &out, 0, 0)
	return out
}

// abstractChildren adds the variables (and address-less labels) among the
// DIEs r reads up to their parent's end, descending into lexical blocks:
// top is the top-level block they are in (0 for the scope's own).
func (uc *UnitCtx) abstractChildren(r *dwarfreader.DieReader, out *[]scopeVar, top uint64, depth int) {
	tab := uc.ud.Tab
	for !r.Bad && len(*out) < maxScopeVars {
		doff := uint64(r.Pos)
		code := r.Uleb()
		if r.Bad || code == 0 {
			return
		}
		a := tab.Lookup(code)
		if a == nil {
			r.Fail()
			return
		}
		switch {
		case a.Tag == dwarf.TagFormalParameter || a.Tag == dwarf.TagVariable:
			var va varAttrs
			uc.readVarAttrs(r, a, &va)
			*out = append(*out, scopeVar{off: doff, attrs: va, uc: uc, top: top})
			if a.Children {
				r.SkipChildren(tab, 0, uc.u.Off)
			}
		case a.Tag == dwarf.TagLabel:
			n := len(*out)
			uc.label(r, a, doff, out, 0)
			for i := n; i < len(*out); i++ {
				(*out)[i].top = top
			}
		case a.Tag == dwarf.TagLexDwarfBlock && a.Children && depth < dwarfreader.MaxDIEDepth:
			r.SkipAttrs(a, uc.u.Off)
			blockTop := top
			if blockTop == 0 {
				blockTop = doff
			}
			uc.abstractChildren(r, out, blockTop, depth+1)
		default:
			sib := r.SkipAttrs(a, uc.u.Off)
			if a.Children && !r.Bad {
				r.SkipChildren(tab, sib, uc.u.Off)
			}
		}
	}
}
