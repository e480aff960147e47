package dwarfreader

import (
	"cmp"
	"debug/dwarf"
	"encoding/binary"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfline"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/analysis/internal/cursor"
)

// maxDIEsPerUnit caps how many DIEs one unit may decode to.
const maxDIEsPerUnit = 1 << 24

// AttrMIPSLinkageName is DW_AT_MIPS_linkage_name, what older GCCs emit.
const AttrMIPSLinkageName dwarf.Attr = 0x2007

// UnitTree is the decoded DIE tree of one unit: every DIE with the few
// attributes symbolization needs, in DIE order, each with its parent.
type UnitTree struct {
	Df      *DwarfFile
	Hdr     UnitHeader
	Dies    []Die
	Ranged  []rangedDIE // subprogram and inlined_subroutine ranges, sorted by lo
	maxHi   []uint64
	Lang    int64
	name    string
	CompDir string

	linesOnce sync.Once
	lines     *dwarfline.LineTable
	linesErr  error
	StmtList  int64
	StrOffB   uint64

	Calls unitCalls // call sites and what tail-call searches need (callsite.go)
}

// Die is one debugging information entry, reduced.
type Die struct {
	Off      dwarf.Offset
	Parent   int32
	Depth    int32
	Tag      dwarf.Tag
	Name     StrRef // read with dwarfFile.str when needed
	Linkage  StrRef
	Origin   dwarf.Offset // DW_AT_abstract_origin, 0 if none
	Spec     dwarf.Offset // DW_AT_specification, 0 if none
	Low      uint64       // lowest address / DW_AT_low_pc / DW_AT_entry_pc
	CallFile int32        // DW_AT_call_file, -1 if out of range
	CallLine int32
	CallCol  int32
	external bool
	// MainSubprogram is DW_AT_main_subprogram (DWARF 5 §3.3.1): the
	// program's main function in Fortran (its main program) and Rust (fn
	// main), where it is not C's main.
	MainSubprogram bool
	// OriginSup and SpecSup say Origin and Spec are offsets in the
	// supplementary (dwz) file.
	OriginSup, SpecSup bool
}

type rangedDIE struct {
	Lo, Hi uint64
	Die    int32
}

// MaxDIEDepth caps the nesting of DIEs decodeUnit follows.
const MaxDIEDepth = 1 << 12

// DecodeUnit reads the DIEs of a unit that frames need (keptTag) with a
// walker of its own: the DIEs it drops cost one abbreviation lookup and a
// skip, their subtrees one jump where DW_AT_sibling gives it, and strings
// are read only when a frame's name needs them.
func DecodeUnit(df *DwarfFile, u UnitHeader) (*UnitTree, error) {
	ud, err := df.ReadUnitDIE(u, true)
	if err != nil {
		return nil, err
	}
	t := &UnitTree{Df: df, Hdr: u, StmtList: -1}
	// Most DIEs of a unit are types, members and variables, which are
	// dropped: one kept DIE per 40 bytes of the unit is a generous first
	// guess (template-heavy C++ keeps one per 46).
	t.Dies = make([]Die, 0, min((u.End-u.DieOff)/40+16, 1<<18))
	r := &DieReader{B: df.Sec.Info.Upto(u.End), Pos: int(u.DieOff), End: int(u.End), Bo: df.Bo, Uf: u.Format()}
	var (
		tab    = ud.Tab
		bases  = ud.Bases
		rctx   = ud.Rctx
		attrs  DieAttrs
		stack  []int32 // open parents
		rs     [][2]uint64
		unitAt = u.Off
	)
	for r.Pos < r.End && len(t.Dies) < maxDIEsPerUnit {
		off := uint64(r.Pos)
		code := r.Uleb()
		if r.Bad {
			break
		}
		if code == 0 {
			if len(stack) == 0 {
				break
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				break
			}
			continue
		}
		a := tab.Lookup(code)
		if a == nil {
			break // keep what we decoded: a partial unit is better than none
		}
		if len(t.Dies) > 0 && !KeptTag(a.Tag) {
			// Types, variables, parameters, members...: nothing a frame's
			// name or inline chain needs. Skip them and what they contain.
			sib := r.SkipAttrs(a, unitAt)
			if a.Children && !r.Bad {
				r.SkipChildren(tab, sib, unitAt)
			}
			continue
		}
		if len(t.Dies) == 0 {
			attrs, r.Pos = ud.Attrs, ud.next
			t.setUnitAttrs(&attrs)
		} else {
			r.readAttrs(df, a, unitAt, &bases, &attrs)
			if r.Bad {
				break
			}
		}
		d := newDIE(off, a.Tag, &attrs)
		if len(stack) > 0 {
			d.Parent = stack[len(stack)-1]
			d.Depth = int32(len(stack))
		}
		idx := int32(len(t.Dies))
		rs = t.noteRanges(a.Tag, &attrs, idx, &d, rs, &rctx)
		t.Dies = append(t.Dies, d)
		if a.Children {
			if len(stack) >= MaxDIEDepth {
				break
			}
			stack = append(stack, idx)
		} else if len(stack) == 0 {
			break // a unit DIE without children
		}
	}
	t.finish(u)
	return t, nil
}

// newDIE is the kept DIE at off with the attributes read.
func newDIE(off uint64, tag dwarf.Tag, attrs *DieAttrs) Die {
	return Die{Off: dwarf.Offset(off), Parent: -1, Tag: tag, Name: attrs.Name, Linkage: attrs.Linkage,
		Origin: dwarf.Offset(attrs.Origin &^ SupRef), Spec: dwarf.Offset(attrs.Spec &^ SupRef),
		CallFile: clampInt32(attrs.callFile, -1), CallLine: clampInt32(attrs.callLine, 0), CallCol: clampInt32(attrs.callCol, 0),
		external: attrs.external, MainSubprogram: attrs.mainSubprogram,
		OriginSup: attrs.Origin&SupRef != 0, SpecSup: attrs.Spec&SupRef != 0}
}

// setUnitAttrs takes the unit DIE's language, directory, name, line table
// and string offsets base.
func (t *UnitTree) setUnitAttrs(attrs *DieAttrs) {
	t.Lang = attrs.Lang
	t.CompDir = t.Df.Str(attrs.compDir)
	t.name = t.Df.Str(attrs.Name)
	if attrs.hasStmtList {
		t.StmtList = attrs.stmtList
	}
	if v, ok := attrs.strOffsetsBase.Int64(); ok && v >= 0 {
		t.StrOffB = uint64(v)
	}
}

// noteRanges records the address ranges of a subprogram or inlined
// subroutine (d's low pc among them) and the call sites a unit's
// subprograms and call-site DIEs give; rs is scratch space, returned for
// reuse.
func (t *UnitTree) noteRanges(tag dwarf.Tag, attrs *DieAttrs, idx int32, d *Die, rs [][2]uint64, rctx *UnitRangeCtx) [][2]uint64 {
	if tag == dwarf.TagSubprogram || tag == dwarf.TagInlinedSubroutine {
		var ok bool
		if rs, ok = t.Df.AppendRanges(rs[:0], &attrs.Pc, rctx); ok {
			lowest := ^uint64(0)
			for _, rg := range rs {
				if rg[1] > rg[0] {
					t.Ranged = append(t.Ranged, rangedDIE{Lo: rg[0], Hi: rg[1], Die: idx})
					lowest = min(lowest, rg[0])
				}
			}
			switch {
			case attrs.Pc.HasLow:
				d.Low = attrs.Pc.Low
			case attrs.Pc.hasEntry:
				d.Low = attrs.Pc.entry
			case lowest != ^uint64(0):
				d.Low = lowest
			}
			if tag == dwarf.TagSubprogram {
				t.Calls.noteSubprogram(attrs, idx, d.Low, rs)
			}
		}
	}
	if tag == dwarf.TagCallSite || tag == tagGNUCallSite {
		t.Calls.noteCallSite(attrs, idx)
	}
	return rs
}

// finish trims the tree, gives the unit's bytes back, and sorts and indexes
// the address ranges.
func (t *UnitTree) finish(u UnitHeader) {
	if cap(t.Dies)-len(t.Dies) > len(t.Dies)/4+64 {
		t.Dies = slices.Clone(t.Dies) // the cache keeps trees: no slack
	}
	// Everything the tree needs from the unit's bytes is in it now
	// (DW_FORM_string names fault their page back in when read).
	t.Df.Obj.Release(t.Df.Sec.Info.Upto(u.End)[u.DieOff:u.End])
	slices.SortFunc(t.Ranged, func(a, b rangedDIE) int { return cmp.Compare(a.Lo, b.Lo) })
	t.Calls.finish(t)
	t.maxHi = make([]uint64, len(t.Ranged))
	var m uint64
	for i, rg := range t.Ranged {
		m = max(m, rg.Hi)
		t.maxHi[i] = m
	}
}

// SkipChildren skips the children of the DIE just read: to sib when its
// DW_AT_sibling points forward within the unit, else DIE by DIE.
func (r *DieReader) SkipChildren(tab *abbrevTable, sib, unitOff uint64) {
	if sib > uint64(r.Pos) && sib <= uint64(r.End) {
		r.Pos = int(sib)
		return
	}
	for depth := 1; depth > 0 && !r.Bad; {
		code := r.Uleb()
		if code == 0 {
			depth--
			continue
		}
		a := tab.Lookup(code)
		if a == nil {
			r.Fail()
			return
		}
		sib := r.SkipAttrs(a, unitOff)
		if !a.Children {
			continue
		}
		if sib > uint64(r.Pos) && sib <= uint64(r.End) {
			r.Pos = int(sib)
			continue
		}
		depth++
	}
}

// clampInt32 is v, or def when v does not fit an int32.
func clampInt32(v int64, def int32) int32 {
	if v < math.MinInt32 || v > math.MaxInt32 {
		return def
	}
	return int32(v)
}

// programBytes is the line program at off in .debug_line, header
// included, or nil.
func programBytes(sec []byte, off uint64, bo binary.ByteOrder) []byte {
	if off >= uint64(len(sec)) {
		return nil
	}
	c := &cursor.Cursor{Format: ".debug_line", Data: sec[off:], Order: bo}
	length, _ := c.UnitLength()
	if c.Err() != nil || length > uint64(c.Len()) {
		return nil
	}
	return c.Data[:uint64(c.Off)+length]
}

// LineProgramPrefix returns .debug_line read (decompressed) as far as the
// end of the line program at off: its unit length says where that is.
// Where the length is unreadable it is read to the first bytes past off,
// and the line program parser reports the damage.
func LineProgramPrefix(sec *object.Lazy, off uint64, bo binary.ByteOrder) []byte {
	head := sec.Upto(off + 12)
	if off >= uint64(len(head)) {
		return head
	}
	c := &cursor.Cursor{Format: ".debug_line", Data: head[off:], Order: bo}
	length, _ := c.UnitLength()
	if c.Err() != nil {
		return head
	}
	return sec.Upto(off + uint64(c.Off) + min(length, sec.Size()))
}

// KeptTag reports whether decodeUnit keeps DIEs of this tag: what holds
// code (subprograms, inlined subroutines, the lexical blocks between them),
// call sites, and the scopes that qualify names (DWARF 5 §3.2, §5.7).
func KeptTag(tag dwarf.Tag) bool {
	switch tag {
	case dwarf.TagSubprogram, dwarf.TagInlinedSubroutine, dwarf.TagLexDwarfBlock,
		dwarf.TagCallSite, tagGNUCallSite, dwarf.TagNamespace, dwarf.TagModule,
		dwarf.TagClassType, dwarf.TagStructType, dwarf.TagUnionType, dwarf.TagInterfaceType,
		dwarf.TagEnumerationType:
		return true
	}
	return false
}

// Find returns the index of the DIE at offset off in this unit.
func (t *UnitTree) Find(off dwarf.Offset) (int, bool) {
	i := sort.Search(len(t.Dies), func(i int) bool { return t.Dies[i].Off >= off })
	if i < len(t.Dies) && t.Dies[i].Off == off {
		return i, true
	}
	return 0, false
}

// Innermost returns the deepest subprogram or inlined_subroutine DIE whose
// ranges contain pc, or -1.
func (t *UnitTree) Innermost(pc uint64) int {
	i := sort.Search(len(t.Ranged), func(i int) bool { return t.Ranged[i].Lo > pc }) - 1
	best := -1
	for ; i >= 0 && t.maxHi[i] > pc; i-- {
		rg := t.Ranged[i]
		if pc >= rg.Hi {
			continue
		}
		if best < 0 || t.Dies[rg.Die].Depth > t.Dies[best].Depth {
			best = int(rg.Die)
		}
	}
	return best
}

// LineTable decodes the unit's line program on first use.
func (t *UnitTree) LineTable() (*dwarfline.LineTable, error) {
	t.linesOnce.Do(func() {
		if t.StmtList < 0 {
			return
		}
		strs := t.Df.Strs
		strs.StrOffBase = t.StrOffB
		line := LineProgramPrefix(t.Df.Line, uint64(t.StmtList), t.Df.Bo)
		p, err := dwarfline.ParseLineProgram(line, uint64(t.StmtList), t.Df.Bo, t.Hdr.Asize, strs)
		if p == nil {
			t.linesErr = err
			return
		}
		// A truncated program still gives the rows before the damage.
		t.linesErr = err
		t.lines = dwarfline.BuildLineTable(p, t.name, t.CompDir)
		t.Df.Obj.Release(programBytes(line, uint64(t.StmtList), t.Df.Bo))
	})
	return t.lines, t.linesErr
}
