package symbolize

import (
	"debug/dwarf"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfreader"
)

// Extent is the source lines one level of an inline chain spans, as the
// binary knows them: from the function's DW_AT_decl_line (DWARF 5 §2.14)
// to the last line the line table gives the code in the ranges of that
// subprogram or inlined instance, in the declaring file. Code of other
// functions inlined into it comes from other files or lies inside theirs,
// so it is not counted.
type Extent struct {
	// File is the declaring file, as the line table names it.
	File     string
	DeclLine int
	LastLine int
}

// FunctionExtents returns the extent of each level of the inline chain at
// the link-time address pc, innermost first as Lookup orders them; a level
// whose extent is unknown (no DW_AT_decl_line, no line rows) is zero.
func (s *Symbols) FunctionExtents(pc uint64) []Extent {
	df := s.dwarfData()
	if df == nil {
		return nil
	}
	for _, u := range df.UnitsFor(pc) {
		t, err := df.Tree(u)
		if err != nil {
			continue
		}
		if idx := t.Innermost(pc); idx >= 0 {
			return extents(t, idx)
		}
	}
	return nil
}

// extents walks the inline chain from DIE idx outwards as inlineChain does.
func extents(t *dwarfreader.UnitTree, idx int) []Extent {
	var out []Extent
	for i := idx; i >= 0 && len(out) < 1024; i = int(t.Dies[i].Parent) {
		d := &t.Dies[i]
		if d.Tag != dwarf.TagInlinedSubroutine && d.Tag != dwarf.TagSubprogram {
			continue
		}
		out = append(out, extent(dwarfreader.DieRef{T: t, Idx: i}))
		if d.Tag == dwarf.TagSubprogram {
			break
		}
	}
	return out
}

// extent is the extent of one subprogram or inlined subroutine DIE.
func extent(r dwarfreader.DieRef) Extent {
	file, line, ok := declOf(r)
	lt, _ := r.T.LineTable()
	if !ok || lt == nil {
		return Extent{}
	}
	last := lt.LastLine(file, r.T.RangesOf(r.Idx), line)
	if last == 0 {
		return Extent{}
	}
	return Extent{File: file, DeclLine: line, LastLine: last}
}

// declOf is the declaring file and line of a subprogram or inlined
// subroutine DIE: its own DW_AT_decl_file/DW_AT_decl_line, else those of
// the DIEs its DW_AT_specification or DW_AT_abstract_origin lead to (an
// inlined instance has them on its abstract origin; a member function
// defined outside its class, on its declaration). The file is named by the
// line table of the unit that holds the attribute.
func declOf(r dwarfreader.DieRef) (string, int, bool) {
	for _, c := range attrChain(r) {
		fileIdx, line, ok := c.T.Df.DeclAt(uint64(c.Die().Off))
		if !ok {
			continue
		}
		lt, _ := c.T.LineTable()
		if lt == nil {
			return "", 0, false
		}
		name, ok := lt.FileNameAt(fileIdx)
		return name, line, ok
	}
	return "", 0, false
}
