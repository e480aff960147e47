package debuginfo

import (
	"debug/dwarf"
	"fmt"
	"sort"
	"sync"
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
	name     string
	linkage  string
	origin   dwarf.Offset // DW_AT_abstract_origin, 0 if none
	spec     dwarf.Offset // DW_AT_specification, 0 if none
	low      uint64       // lowest address / DW_AT_low_pc / DW_AT_entry_pc
	callFile int64
	callLine int64
	callCol  int64
	external bool
}

type rangedDIE struct {
	lo, hi uint64
	die    int32
}

// decodeUnit reads all DIEs of a unit.
func decodeUnit(df *dwarfFile, u unitHeader) (t *unitTree, err error) {
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, &FormatError{Path: df.obj.path, Section: ".debug_info", Off: int64(u.off), Msg: fmt.Sprintf("malformed unit: %v", r)}
		}
	}()
	t = &unitTree{df: df, hdr: u, stmtList: -1}
	r := df.data.Reader()
	r.Seek(dwarf.Offset(u.dieOff))
	var stack []int32 // open parents
	for len(t.dies) < maxDIEsPerUnit {
		e, err := r.Next()
		if err != nil {
			if len(t.dies) == 0 {
				return nil, err
			}
			break // keep what we decoded: a partial unit is better than none
		}
		if e == nil || uint64(e.Offset) >= u.end {
			break
		}
		if e.Tag == 0 {
			if len(stack) == 0 {
				break
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				break
			}
			continue
		}
		if len(t.dies) > 0 && !keptTag(e.Tag) {
			// Types, variables, parameters, members...: nothing a frame's
			// name or inline chain needs. Skip them and what they contain
			// (by DW_AT_sibling where the producer wrote it), so that big
			// template-heavy units cost little.
			if e.Children {
				r.SkipChildren()
			}
			continue
		}
		d := die{off: e.Offset, parent: -1, tag: e.Tag}
		if len(stack) > 0 {
			d.parent = stack[len(stack)-1]
			d.depth = int32(len(stack))
		}
		for _, f := range e.Field {
			switch f.Attr {
			case dwarf.AttrName:
				d.name, _ = f.Val.(string)
			case dwarf.AttrLinkageName, attrMIPSLinkageName:
				d.linkage, _ = f.Val.(string)
			case dwarf.AttrAbstractOrigin:
				d.origin, _ = f.Val.(dwarf.Offset)
			case dwarf.AttrSpecification:
				d.spec, _ = f.Val.(dwarf.Offset)
			case dwarf.AttrCallFile:
				d.callFile, _ = f.Val.(int64)
			case dwarf.AttrCallLine:
				d.callLine, _ = f.Val.(int64)
			case dwarf.AttrCallColumn:
				d.callCol, _ = f.Val.(int64)
			case dwarf.AttrExternal:
				d.external, _ = f.Val.(bool)
			}
		}
		idx := int32(len(t.dies))
		if len(t.dies) == 0 {
			t.lang, _ = e.Val(dwarf.AttrLanguage).(int64)
			t.compDir, _ = e.Val(dwarf.AttrCompDir).(string)
			t.name = d.name
			if v, ok := e.Val(dwarf.AttrStmtList).(int64); ok {
				t.stmtList = v
			}
			if v, ok := e.Val(dwarf.AttrStrOffsetsBase).(int64); ok && v >= 0 {
				t.strOffB = uint64(v)
			}
		}
		if e.Tag == dwarf.TagSubprogram || e.Tag == dwarf.TagInlinedSubroutine {
			if rs, err := df.data.Ranges(e); err == nil {
				lowest := ^uint64(0)
				for _, rg := range rs {
					if rg[1] > rg[0] {
						t.ranged = append(t.ranged, rangedDIE{lo: rg[0], hi: rg[1], die: idx})
						lowest = min(lowest, rg[0])
					}
				}
				if v, ok := e.Val(dwarf.AttrLowpc).(uint64); ok {
					d.low = v
				} else if v, ok := e.Val(dwarf.AttrEntrypc).(uint64); ok {
					d.low = v
				} else if lowest != ^uint64(0) {
					d.low = lowest
				}
				if e.Tag == dwarf.TagSubprogram {
					t.calls.noteSubprogram(e, idx, d.low, rs)
				}
			}
		}
		if e.Tag == dwarf.TagCallSite || e.Tag == tagGNUCallSite {
			t.calls.noteCallSite(e, idx)
		}
		t.dies = append(t.dies, d)
		if e.Children {
			stack = append(stack, idx)
		} else if len(stack) == 0 {
			break // a unit DIE without children
		}
	}
	sort.Slice(t.ranged, func(i, j int) bool { return t.ranged[i].lo < t.ranged[j].lo })
	t.calls.finish(t)
	t.maxHi = make([]uint64, len(t.ranged))
	var m uint64
	for i, rg := range t.ranged {
		m = max(m, rg.hi)
		t.maxHi[i] = m
	}
	return t, nil
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
	})
	return t.lines, t.linesErr
}
