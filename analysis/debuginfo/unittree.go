package debuginfo

import (
	"cmp"
	"debug/dwarf"
	"encoding/binary"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/faultline-dev/faultline/analysis/internal/cursor"
)

// maxDIEsPerUnit caps how many DIEs one unit may decode to.
const maxDIEsPerUnit = 1 << 24

// attrMIPSLinkageName is DW_AT_MIPS_linkage_name, what older GCCs emit.
const attrMIPSLinkageName dwarf.Attr = 0x2007

// unitTree is the decoded DIE tree of one unit: every DIE with the few
// attributes symbolization needs, in DIE order, each with its parent.
type unitTree struct {
	df      *dwarfFile
	hdr     unitHeader
	dies    []die
	ranged  []rangedDIE // subprogram and inlined_subroutine ranges, sorted by lo
	maxHi   []uint64
	lang    int64
	name    string
	compDir string

	linesOnce sync.Once
	lines     *lineTable
	linesErr  error
	stmtList  int64
	strOffB   uint64

	calls unitCalls // call sites and what tail-call searches need (callsite.go)
}

// die is one debugging information entry, reduced.
type die struct {
	off      dwarf.Offset
	parent   int32
	depth    int32
	tag      dwarf.Tag
	name     strRef // read with dwarfFile.str when needed
	linkage  strRef
	origin   dwarf.Offset // DW_AT_abstract_origin, 0 if none
	spec     dwarf.Offset // DW_AT_specification, 0 if none
	low      uint64       // lowest address / DW_AT_low_pc / DW_AT_entry_pc
	callFile int32        // DW_AT_call_file, -1 if out of range
	callLine int32
	callCol  int32
	external bool
}

type rangedDIE struct {
	lo, hi uint64
	die    int32
}

// maxDIEDepth caps the nesting of DIEs decodeUnit follows.
const maxDIEDepth = 1 << 12

// decodeUnit reads the DIEs of a unit that frames need (keptTag) with a
// walker of its own: the DIEs it drops cost one abbreviation lookup and a
// skip, their subtrees one jump where DW_AT_sibling gives it, and strings
// are read only when a frame's name needs them.
func decodeUnit(df *dwarfFile, u unitHeader) (*unitTree, error) {
	ud, err := df.readUnitDIE(u, true)
	if err != nil {
		return nil, err
	}
	t := &unitTree{df: df, hdr: u, stmtList: -1}
	// Most DIEs of a unit are types, members and variables, which are
	// dropped: one kept DIE per 40 bytes of the unit is a generous first
	// guess (template-heavy C++ keeps one per 46).
	t.dies = make([]die, 0, min((u.end-u.dieOff)/40+16, 1<<18))
	r := &dieReader{b: df.sec.info, pos: int(u.dieOff), end: int(u.end), bo: df.bo, uf: u.format()}
	var (
		tab    = ud.tab
		bases  = ud.bases
		rctx   = ud.rctx
		attrs  dieAttrs
		stack  []int32 // open parents
		rs     [][2]uint64
		unitAt = u.off
	)
	for r.pos < r.end && len(t.dies) < maxDIEsPerUnit {
		off := uint64(r.pos)
		code := r.uleb()
		if r.bad {
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
		a := tab.lookup(code)
		if a == nil {
			break // keep what we decoded: a partial unit is better than none
		}
		if len(t.dies) > 0 && !keptTag(a.tag) {
			// Types, variables, parameters, members...: nothing a frame's
			// name or inline chain needs. Skip them and what they contain.
			sib := r.skipAttrs(a, unitAt)
			if a.children && !r.bad {
				r.skipChildren(tab, sib, unitAt)
			}
			continue
		}
		if len(t.dies) == 0 {
			attrs, r.pos = ud.attrs, ud.next
			t.setUnitAttrs(&attrs)
		} else {
			r.readAttrs(df, a, unitAt, &bases, &attrs)
			if r.bad {
				break
			}
		}
		d := newDIE(off, a.tag, &attrs)
		if len(stack) > 0 {
			d.parent = stack[len(stack)-1]
			d.depth = int32(len(stack))
		}
		idx := int32(len(t.dies))
		rs = t.noteRanges(a.tag, &attrs, idx, &d, rs, &rctx)
		t.dies = append(t.dies, d)
		if a.children {
			if len(stack) >= maxDIEDepth {
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
func newDIE(off uint64, tag dwarf.Tag, attrs *dieAttrs) die {
	return die{off: dwarf.Offset(off), parent: -1, tag: tag, name: attrs.name, linkage: attrs.linkage,
		origin: dwarf.Offset(attrs.origin), spec: dwarf.Offset(attrs.spec),
		callFile: clampInt32(attrs.callFile, -1), callLine: clampInt32(attrs.callLine, 0), callCol: clampInt32(attrs.callCol, 0),
		external: attrs.external}
}

// setUnitAttrs takes the unit DIE's language, directory, name, line table
// and string offsets base.
func (t *unitTree) setUnitAttrs(attrs *dieAttrs) {
	t.lang = attrs.lang
	t.compDir = t.df.str(attrs.compDir)
	t.name = t.df.str(attrs.name)
	if attrs.hasStmtList {
		t.stmtList = attrs.stmtList
	}
	if v, ok := attrs.strOffsetsBase.int64(); ok && v >= 0 {
		t.strOffB = uint64(v)
	}
}

// noteRanges records the address ranges of a subprogram or inlined
// subroutine (d's low pc among them) and the call sites a unit's
// subprograms and call-site DIEs give; rs is scratch space, returned for
// reuse.
func (t *unitTree) noteRanges(tag dwarf.Tag, attrs *dieAttrs, idx int32, d *die, rs [][2]uint64, rctx *unitRangeCtx) [][2]uint64 {
	if tag == dwarf.TagSubprogram || tag == dwarf.TagInlinedSubroutine {
		var ok bool
		if rs, ok = t.df.appendRanges(rs[:0], &attrs.pc, rctx); ok {
			lowest := ^uint64(0)
			for _, rg := range rs {
				if rg[1] > rg[0] {
					t.ranged = append(t.ranged, rangedDIE{lo: rg[0], hi: rg[1], die: idx})
					lowest = min(lowest, rg[0])
				}
			}
			switch {
			case attrs.pc.hasLow:
				d.low = attrs.pc.low
			case attrs.pc.hasEntry:
				d.low = attrs.pc.entry
			case lowest != ^uint64(0):
				d.low = lowest
			}
			if tag == dwarf.TagSubprogram {
				t.calls.noteSubprogram(attrs, idx, d.low, rs)
			}
		}
	}
	if tag == dwarf.TagCallSite || tag == tagGNUCallSite {
		t.calls.noteCallSite(attrs, idx)
	}
	return rs
}

// finish trims the tree, gives the unit's bytes back, and sorts and indexes
// the address ranges.
func (t *unitTree) finish(u unitHeader) {
	if cap(t.dies)-len(t.dies) > len(t.dies)/4+64 {
		t.dies = slices.Clone(t.dies) // the cache keeps trees: no slack
	}
	// Everything the tree needs from the unit's bytes is in it now
	// (DW_FORM_string names fault their page back in when read).
	t.df.obj.release(t.df.sec.info[u.dieOff:u.end])
	slices.SortFunc(t.ranged, func(a, b rangedDIE) int { return cmp.Compare(a.lo, b.lo) })
	t.calls.finish(t)
	t.maxHi = make([]uint64, len(t.ranged))
	var m uint64
	for i, rg := range t.ranged {
		m = max(m, rg.hi)
		t.maxHi[i] = m
	}
}

// skipChildren skips the children of the DIE just read: to sib when its
// DW_AT_sibling points forward within the unit, else DIE by DIE.
func (r *dieReader) skipChildren(tab *abbrevTable, sib, unitOff uint64) {
	if sib > uint64(r.pos) && sib <= uint64(r.end) {
		r.pos = int(sib)
		return
	}
	for depth := 1; depth > 0 && !r.bad; {
		code := r.uleb()
		if code == 0 {
			depth--
			continue
		}
		a := tab.lookup(code)
		if a == nil {
			r.fail()
			return
		}
		sib := r.skipAttrs(a, unitOff)
		if !a.children {
			continue
		}
		if sib > uint64(r.pos) && sib <= uint64(r.end) {
			r.pos = int(sib)
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

// keptTag reports whether decodeUnit keeps DIEs of this tag: what holds
// code (subprograms, inlined subroutines, the lexical blocks between them),
// call sites, and the scopes that qualify names (DWARF 5 §3.2, §5.7).
func keptTag(tag dwarf.Tag) bool {
	switch tag {
	case dwarf.TagSubprogram, dwarf.TagInlinedSubroutine, dwarf.TagLexDwarfBlock,
		dwarf.TagCallSite, tagGNUCallSite, dwarf.TagNamespace, dwarf.TagModule,
		dwarf.TagClassType, dwarf.TagStructType, dwarf.TagUnionType, dwarf.TagInterfaceType,
		dwarf.TagEnumerationType:
		return true
	}
	return false
}

// find returns the index of the DIE at offset off in this unit.
func (t *unitTree) find(off dwarf.Offset) (int, bool) {
	i := sort.Search(len(t.dies), func(i int) bool { return t.dies[i].off >= off })
	if i < len(t.dies) && t.dies[i].off == off {
		return i, true
	}
	return 0, false
}

// innermost returns the deepest subprogram or inlined_subroutine DIE whose
// ranges contain pc, or -1.
func (t *unitTree) innermost(pc uint64) int {
	i := sort.Search(len(t.ranged), func(i int) bool { return t.ranged[i].lo > pc }) - 1
	best := -1
	for ; i >= 0 && t.maxHi[i] > pc; i-- {
		rg := t.ranged[i]
		if pc >= rg.hi {
			continue
		}
		if best < 0 || t.dies[rg.die].depth > t.dies[best].depth {
			best = int(rg.die)
		}
	}
	return best
}

// lineTable decodes the unit's line program on first use.
func (t *unitTree) lineTable() (*lineTable, error) {
	t.linesOnce.Do(func() {
		if t.stmtList < 0 {
			return
		}
		strs := t.df.strs
		strs.strOffBase = t.strOffB
		p, err := parseLineProgram(t.df.line, uint64(t.stmtList), t.df.bo, t.hdr.asize, strs)
		if p == nil {
			t.linesErr = err
			return
		}
		// A truncated program still gives the rows before the damage.
		t.linesErr = err
		t.lines = buildLineTable(p, t.name, t.compDir)
		t.df.obj.release(programBytes(t.df.line, uint64(t.stmtList), t.df.bo))
	})
	return t.lines, t.linesErr
}
