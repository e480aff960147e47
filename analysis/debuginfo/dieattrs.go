package debuginfo

import (
	"debug/dwarf"
	"fmt"
)

// The attributes of single DIEs that symbolization reads: those of the DIEs
// decodeUnit keeps, of unit DIEs (bases, line program, skeleton links) and
// of the DIEs call sites name as callees.

// dieAttrs are the attributes decodeUnit reads from a kept DIE.
type dieAttrs struct {
	name, linkage  strRef
	origin, spec   uint64
	callFile       int64
	callLine       int64
	callCol        int64
	external       bool
	declaration    bool
	hasDecl        bool // DW_AT_declaration is present
	hasSpec        bool // DW_AT_specification is present, in any form
	pc             pcAttrs
	callAll        bool // DW_AT_call_all_calls, ..._tail_calls or the GNU ones
	returnPC       uint64
	hasReturnPC    bool
	tail           bool
	target         [4]attrVal // DW_AT_call_target, GNU call_site_target, call_origin, abstract_origin
	hasTarget      [4]bool
	lang           int64
	compDir        strRef
	dwoName        strRef
	stmtList       int64
	hasStmtList    bool
	strOffsetsBase attrVal
	addrBase       attrVal
	rnglistsBase   attrVal
}

// readAttrs decodes the attribute values of a DIE of abbreviation a into
// out, keeping the ones decodeUnit uses (first occurrence wins, as with
// debug/dwarf's Entry.Val).
func (r *dieReader) readAttrs(df *dwarfFile, a *abbrev, unitOff uint64, bases *unitBases, out *dieAttrs) {
	*out = dieAttrs{}
	for i := range a.attrs {
		at := &a.attrs[i]
		v := r.value(df, at.form, at.implicit, unitOff, bases)
		if r.bad {
			return
		}
		out.set(at.attr, v)
	}
}

// set keeps attribute attr's value v if decodeUnit uses it: names, origin,
// specification, call position and pc attributes here, the others in
// setCallSiteOrUnit.
func (a *dieAttrs) set(attr dwarf.Attr, v attrVal) {
	switch attr {
	case dwarf.AttrName:
		if v.class == valStr && a.name == 0 {
			a.name = strRef(v.u)
		}
	case dwarf.AttrLinkageName, attrMIPSLinkageName:
		if v.class == valStr && a.linkage == 0 {
			a.linkage = strRef(v.u)
		}
	case dwarf.AttrAbstractOrigin:
		if v.class == valRef && a.origin == 0 {
			a.origin = v.u
		}
		a.noteTarget(3, v)
	case dwarf.AttrSpecification:
		if v.class == valRef && a.spec == 0 {
			a.spec = v.u
		}
		a.hasSpec = true
	case dwarf.AttrCallFile:
		a.callFile, _ = v.int64()
	case dwarf.AttrCallLine:
		a.callLine, _ = v.int64()
	case dwarf.AttrCallColumn:
		a.callCol, _ = v.int64()
	case dwarf.AttrExternal:
		a.external = v.flag()
	case dwarf.AttrDeclaration:
		if !a.hasDecl {
			a.declaration, a.hasDecl = v.flag(), true
		}
	case dwarf.AttrLowpc:
		if !a.pc.hasLow {
			a.pc.low, a.pc.hasLow = v.addr()
		}
	case dwarf.AttrHighpc:
		if a.pc.highKind == highNone {
			switch v.class {
			case valAddr:
				a.pc.high, a.pc.highKind = v.u, highAddr
			case valConst:
				a.pc.high, a.pc.highKind = v.u, highOffset
			}
		}
	case dwarf.AttrEntrypc:
		if !a.pc.hasEntry {
			a.pc.entry, a.pc.hasEntry = v.addr()
		}
	case dwarf.AttrRanges:
		if !a.pc.hasRangesAttr {
			a.pc.ranges, a.pc.hasRangesAttr = v, true
		}
	default:
		a.setCallSiteOrUnit(attr, v)
	}
}

// setCallSiteOrUnit keeps the call-site attributes (DWARF 5 §3.4 and the
// GNU ones before it) and the unit DIE's.
func (a *dieAttrs) setCallSiteOrUnit(attr dwarf.Attr, v attrVal) {
	switch attr {
	case dwarf.AttrCallAllCalls, dwarf.AttrCallAllTailCalls, attrGNUAllCallSites, attrGNUAllTailCallSites:
		a.callAll = a.callAll || v.flag()
	case dwarf.AttrCallReturnPC:
		if v.class == valAddr && !a.hasReturnPC {
			a.returnPC, a.hasReturnPC = v.u, true
		}
	case dwarf.AttrCallTailCall, attrGNUTailCall:
		a.tail = a.tail || v.flag()
	case dwarf.AttrCallTarget:
		a.noteTarget(0, v)
	case attrGNUCallSiteTarget:
		a.noteTarget(1, v)
	case dwarf.AttrCallOrigin:
		a.noteTarget(2, v)
	case dwarf.AttrLanguage:
		a.lang, _ = v.int64()
	case dwarf.AttrCompDir:
		if v.class == valStr {
			a.compDir = strRef(v.u)
		}
	case dwarf.AttrDwoName:
		if v.class == valStr {
			a.dwoName = strRef(v.u)
		}
	case dwarf.AttrStmtList:
		a.stmtList, a.hasStmtList = v.int64()
	case dwarf.AttrStrOffsetsBase:
		a.strOffsetsBase = v
	case dwarf.AttrAddrBase:
		a.addrBase = v
	case dwarf.AttrRnglistsBase:
		a.rnglistsBase = v
	}
}

func (a *dieAttrs) noteTarget(i int, v attrVal) {
	if !a.hasTarget[i] {
		a.target[i], a.hasTarget[i] = v, true
	}
}

// unitDIE is a unit's first DIE, read.
type unitDIE struct {
	tab   *abbrevTable
	abbr  *abbrev
	attrs dieAttrs
	bases unitBases
	rctx  unitRangeCtx
	next  int // offset of the DIE after it
}

// readUnitDIE reads the unit DIE of u, and with withTable the unit's whole
// abbreviation table. The unit DIE holds the bases the unit's index forms
// use, its own included (DWARF 5 §3.1.1): it is read once for them, then
// again with them.
func (df *dwarfFile) readUnitDIE(u unitHeader, withTable bool) (*unitDIE, error) {
	fail := func(msg string) error {
		return &FormatError{Path: df.obj.path, Format: ".debug_info", Off: int64(u.dieOff), Msg: msg}
	}
	if u.end > uint64(len(df.sec.info)) || u.dieOff > u.end {
		return nil, fail("unit runs past the section")
	}
	if u.asize != 0 && u.asize != 1 && u.asize != 2 && u.asize != 4 && u.asize != 8 {
		return nil, fail(fmt.Sprintf("unsupported address size %d", u.asize))
	}
	ud := &unitDIE{rctx: unitRangeCtx{vers: u.vers, asize: u.asize}}
	r := &dieReader{b: df.sec.info, pos: int(u.dieOff), end: int(u.end), bo: df.bo, uf: u.format()}
	code := r.uleb()
	if r.bad || code == 0 {
		return nil, fail("no unit DIE")
	}
	if withTable {
		tab, err := df.abbrevs(u)
		if err != nil {
			return nil, err
		}
		ud.tab = tab
		ud.abbr = tab.lookup(code)
	} else {
		// Only the unit DIE's abbreviation (the index reads every unit's
		// DIE and no more).
		tab, err := parseAbbrevs(df.sec.abbrev, u.abbrevOff, u.format(), code)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", df.obj.path, err)
		}
		ud.abbr = tab.lookup(code)
	}
	if ud.abbr == nil {
		return nil, fail(fmt.Sprintf("unknown abbreviation code %d", code))
	}
	attrStart := r.pos
	r.readAttrs(df, ud.abbr, u.off, &ud.bases, &ud.attrs)
	ud.bases = unitBases{
		addr:       nonNegative(ud.attrs.addrBase),
		strOffsets: nonNegative(ud.attrs.strOffsetsBase),
		rnglists:   nonNegative(ud.attrs.rnglistsBase),
	}
	r.bad, r.pos = false, attrStart
	r.readAttrs(df, ud.abbr, u.off, &ud.bases, &ud.attrs)
	if r.bad {
		return nil, fail("malformed unit DIE")
	}
	ud.next = r.pos
	ud.rctx.addrBase = ud.bases.addr
	if ud.attrs.pc.hasEntry {
		ud.rctx.base = ud.attrs.pc.entry
	} else if ud.attrs.pc.hasLow {
		ud.rctx.base = ud.attrs.pc.low
	}
	return ud, nil
}

// nonNegative is a base attribute's value, 0 when absent or negative.
func nonNegative(v attrVal) uint64 {
	if n, ok := v.int64(); ok && n >= 0 {
		return uint64(n)
	}
	return 0
}

// readDIEAt reads the attributes of the one DIE at .debug_info offset off,
// with what its unit's DIE says to read them (bases, range list base
// address).
func (df *dwarfFile) readDIEAt(off uint64) (attrs dieAttrs, rctx unitRangeCtx, ok bool) {
	i, found := df.unitOf(off)
	if !found {
		return attrs, rctx, false
	}
	u := df.units[i]
	ud, err := df.readUnitDIE(u, true)
	if err != nil {
		return attrs, rctx, false
	}
	if off == u.dieOff {
		return ud.attrs, ud.rctx, true
	}
	r := &dieReader{b: df.sec.info, pos: int(off), end: int(u.end), bo: df.bo, uf: u.format()}
	a := ud.tab.lookup(r.uleb())
	if r.bad || a == nil {
		return attrs, rctx, false
	}
	r.readAttrs(df, a, u.off, &ud.bases, &attrs)
	return attrs, ud.rctx, !r.bad
}
