package dwarfreader

import (
	"debug/dwarf"
	"fmt"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// The attributes of single DIEs that symbolization reads: those of the DIEs
// decodeUnit keeps, of unit DIEs (bases, line program, skeleton links) and
// of the DIEs call sites name as callees.

// DieAttrs are the attributes decodeUnit reads from a kept DIE.
type DieAttrs struct {
	Name, Linkage  StrRef
	Origin, Spec   uint64
	callFile       int64
	callLine       int64
	callCol        int64
	external       bool
	mainSubprogram bool // DW_AT_main_subprogram
	Declaration    bool
	HasDecl        bool // DW_AT_declaration is present
	HasSpec        bool // DW_AT_specification is present, in any form
	Pc             PcAttrs
	callAll        bool // DW_AT_call_all_calls, ..._tail_calls or the GNU ones
	returnPC       uint64
	hasReturnPC    bool
	tail           bool
	target         [4]AttrVal // DW_AT_call_target, GNU call_site_target, call_origin, abstract_origin
	hasTarget      [4]bool
	Lang           int64
	compDir        StrRef
	dwoName        StrRef
	stmtList       int64
	hasStmtList    bool
	strOffsetsBase AttrVal
	addrBase       AttrVal
	rnglistsBase   AttrVal
	gnuDwoID       uint64  // DW_AT_GNU_dwo_id (DWARF 4 split units)
	hasGNUDwoID    bool    //
	gnuRangesBase  AttrVal // DW_AT_GNU_ranges_base (DWARF 4 skeletons)
}

// GNU DebugFission attributes, the DWARF 4 form of split DWARF that DWARF 5
// standardized (gcc's include/dwarf2.def; https://gcc.gnu.org/wiki/DebugFission):
// a skeleton unit names its .dwo (DW_AT_GNU_dwo_name) and carries the bases
// the split unit's index forms and range lists are read with.
const (
	attrGNUDwoName    dwarf.Attr = 0x2130
	attrGNUDwoID      dwarf.Attr = 0x2131
	attrGNURangesBase dwarf.Attr = 0x2132
	attrGNUAddrBase   dwarf.Attr = 0x2133
)

// readAttrs decodes the attribute values of a DIE of abbreviation a into
// out, keeping the ones decodeUnit uses (first occurrence wins, as with
// debug/dwarf's Entry.Val).
func (r *DieReader) readAttrs(df *DwarfFile, a *Abbrev, unitOff uint64, bases *unitBases, out *DieAttrs) {
	*out = DieAttrs{}
	for i := range a.Attrs {
		at := &a.Attrs[i]
		v := r.Value(df, at.Form, at.Implicit, unitOff, bases)
		if r.Bad {
			return
		}
		out.set(at.Attr, v)
	}
}

// set keeps attribute attr's value v if decodeUnit uses it: names, origin,
// specification, call position and pc attributes here, the others in
// setCallSiteOrUnit.
func (a *DieAttrs) set(attr dwarf.Attr, v AttrVal) {
	switch attr {
	case dwarf.AttrName:
		if v.Class == ValStr && a.Name == 0 {
			a.Name = StrRef(v.U)
		}
	case dwarf.AttrLinkageName, AttrMIPSLinkageName:
		if v.Class == ValStr && a.Linkage == 0 {
			a.Linkage = StrRef(v.U)
		}
	case dwarf.AttrAbstractOrigin:
		if v.Class == ValRef && a.Origin == 0 {
			a.Origin = v.U
		}
		a.noteTarget(3, v)
	case dwarf.AttrSpecification:
		if v.Class == ValRef && a.Spec == 0 {
			a.Spec = v.U
		}
		a.HasSpec = true
	case dwarf.AttrCallFile:
		a.callFile, _ = v.Int64()
	case dwarf.AttrCallLine:
		a.callLine, _ = v.Int64()
	case dwarf.AttrCallColumn:
		a.callCol, _ = v.Int64()
	case dwarf.AttrExternal:
		a.external = v.Flag()
	case dwarf.AttrMainSubprogram:
		a.mainSubprogram = v.Flag()
	case dwarf.AttrDeclaration:
		if !a.HasDecl {
			a.Declaration, a.HasDecl = v.Flag(), true
		}
	case dwarf.AttrLowpc:
		if !a.Pc.HasLow {
			a.Pc.Low, a.Pc.HasLow = v.Addr()
		}
	case dwarf.AttrHighpc:
		if a.Pc.HighKind == HighNone {
			switch v.Class {
			case ValAddr:
				a.Pc.High, a.Pc.HighKind = v.U, HighAddr
			case ValConst:
				a.Pc.High, a.Pc.HighKind = v.U, HighOffset
			}
		}
	case dwarf.AttrEntrypc:
		if !a.Pc.hasEntry {
			a.Pc.entry, a.Pc.hasEntry = v.Addr()
		}
	case dwarf.AttrRanges:
		if !a.Pc.HasRangesAttr {
			a.Pc.Ranges, a.Pc.HasRangesAttr = v, true
		}
	default:
		a.setCallSiteOrUnit(attr, v)
	}
}

// setCallSiteOrUnit keeps the call-site attributes (DWARF 5 §3.4 and the
// GNU ones before it) and the unit DIE's.
func (a *DieAttrs) setCallSiteOrUnit(attr dwarf.Attr, v AttrVal) {
	switch attr {
	case dwarf.AttrCallAllCalls, dwarf.AttrCallAllTailCalls, attrGNUAllCallSites, attrGNUAllTailCallSites:
		a.callAll = a.callAll || v.Flag()
	case dwarf.AttrCallReturnPC:
		if v.Class == ValAddr && !a.hasReturnPC {
			a.returnPC, a.hasReturnPC = v.U, true
		}
	case dwarf.AttrCallTailCall, attrGNUTailCall:
		a.tail = a.tail || v.Flag()
	case dwarf.AttrCallTarget:
		a.noteTarget(0, v)
	case attrGNUCallSiteTarget:
		a.noteTarget(1, v)
	case dwarf.AttrCallOrigin:
		a.noteTarget(2, v)
	case dwarf.AttrLanguage:
		a.Lang, _ = v.Int64()
	case dwarf.AttrCompDir:
		if v.Class == ValStr {
			a.compDir = StrRef(v.U)
		}
	case dwarf.AttrDwoName, attrGNUDwoName:
		if v.Class == ValStr {
			a.dwoName = StrRef(v.U)
		}
	case attrGNUDwoID:
		if v.Class == ValConst {
			a.gnuDwoID, a.hasGNUDwoID = v.U, true
		}
	case attrGNURangesBase:
		a.gnuRangesBase = v
	case dwarf.AttrStmtList:
		a.stmtList, a.hasStmtList = v.Int64()
	case dwarf.AttrStrOffsetsBase:
		a.strOffsetsBase = v
	case dwarf.AttrAddrBase, attrGNUAddrBase:
		a.addrBase = v
	case dwarf.AttrRnglistsBase:
		a.rnglistsBase = v
	}
}

func (a *DieAttrs) noteTarget(i int, v AttrVal) {
	if !a.hasTarget[i] {
		a.target[i], a.hasTarget[i] = v, true
	}
}

// UnitDIE is a unit's first DIE, read.
type UnitDIE struct {
	Tab   *abbrevTable
	abbr  *Abbrev
	Attrs DieAttrs
	Bases unitBases
	Rctx  UnitRangeCtx
	next  int // offset of the DIE after it
}

// ReadUnitDIE reads the unit DIE of u, and with withTable the unit's whole
// abbreviation table. The unit DIE holds the bases the unit's index forms
// use, its own included (DWARF 5 §3.1.1): it is read once for them, then
// again with them.
func (df *DwarfFile) ReadUnitDIE(u UnitHeader, withTable bool) (*UnitDIE, error) {
	fail := func(msg string) error {
		return &object.FormatError{Path: df.Obj.Path(), Format: ".debug_info", Off: int64(u.DieOff), Msg: msg}
	}
	info := df.Sec.Info.Upto(u.End)
	if u.End > uint64(len(info)) || u.DieOff > u.End {
		return nil, fail("unit runs past the section")
	}
	if u.Asize != 0 && u.Asize != 1 && u.Asize != 2 && u.Asize != 4 && u.Asize != 8 {
		return nil, fail(fmt.Sprintf("unsupported address size %d", u.Asize))
	}
	ud := &UnitDIE{Rctx: UnitRangeCtx{vers: u.Vers, asize: u.Asize}}
	r := &DieReader{B: info, Pos: int(u.DieOff), End: int(u.End), Bo: df.Bo, Uf: u.Format()}
	code := r.Uleb()
	if r.Bad || code == 0 {
		return nil, fail("no unit DIE")
	}
	if withTable {
		tab, err := df.abbrevs(u)
		if err != nil {
			return nil, err
		}
		ud.Tab = tab
		ud.abbr = tab.Lookup(code)
	} else {
		// Only the unit DIE's abbreviation (the index reads every unit's
		// DIE and no more).
		tab, err := parseAbbrevsAt(df.Sec.Abbrev, u.abbrevOff, u.Format(), code)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", df.Obj.Path(), err)
		}
		ud.abbr = tab.Lookup(code)
	}
	if ud.abbr == nil {
		return nil, fail(fmt.Sprintf("unknown abbreviation code %d", code))
	}
	attrStart := r.Pos
	r.readAttrs(df, ud.abbr, u.Off, &ud.Bases, &ud.Attrs)
	ud.Bases = unitBases{
		Addr:       nonNegative(ud.Attrs.addrBase),
		strOffsets: nonNegative(ud.Attrs.strOffsetsBase),
		rnglists:   nonNegative(ud.Attrs.rnglistsBase),
	}
	r.Bad, r.Pos = false, attrStart
	r.readAttrs(df, ud.abbr, u.Off, &ud.Bases, &ud.Attrs)
	if r.Bad {
		return nil, fail("malformed unit DIE")
	}
	ud.next = r.Pos
	ud.Rctx.addrBase = ud.Bases.Addr
	switch {
	case ud.Attrs.Pc.hasEntry:
		ud.Rctx.Base = ud.Attrs.Pc.entry
	case ud.Attrs.Pc.HasLow:
		ud.Rctx.Base = ud.Attrs.Pc.Low
	case df.skeleton != nil:
		// A split unit's base address is its skeleton's DW_AT_low_pc
		// (DWARF 5 §3.1.3; gdb takes it from the skeleton for GNU split
		// units too): its range lists' offset pairs are relative to it.
		ud.Rctx.Base = df.skeleton.base
	}
	return ud, nil
}

// nonNegative is a base attribute's value, 0 when absent or negative.
func nonNegative(v AttrVal) uint64 {
	if n, ok := v.Int64(); ok && n >= 0 {
		return uint64(n)
	}
	return 0
}

// ReadDIEAt reads the attributes of the one DIE at .debug_info offset off,
// with what its unit's DIE says to read them (bases, range list base
// address).
func (df *DwarfFile) ReadDIEAt(off uint64) (attrs DieAttrs, rctx UnitRangeCtx, ok bool) {
	i, found := df.UnitOf(off)
	if !found {
		return attrs, rctx, false
	}
	u := df.Unit(i)
	ud, err := df.ReadUnitDIE(u, true)
	if err != nil {
		return attrs, rctx, false
	}
	if off == u.DieOff {
		return ud.Attrs, ud.Rctx, true
	}
	r := &DieReader{B: df.Sec.Info.Upto(u.End), Pos: int(off), End: int(u.End), Bo: df.Bo, Uf: u.Format()}
	a := ud.Tab.Lookup(r.Uleb())
	if r.Bad || a == nil {
		return attrs, rctx, false
	}
	r.readAttrs(df, a, u.Off, &ud.Bases, &attrs)
	return attrs, ud.Rctx, !r.Bad
}
