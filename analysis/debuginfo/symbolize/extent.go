package symbolize

import (
	"debug/dwarf"
	"math"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfline"
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
	var decls []dwarfreader.Decl // the unit's subprograms, read once
	for i := idx; i >= 0 && len(out) < 1024; i = int(t.Dies[i].Parent) {
		d := &t.Dies[i]
		if d.Tag != dwarf.TagInlinedSubroutine && d.Tag != dwarf.TagSubprogram {
			continue
		}
		out = append(out, extent(dwarfreader.DieRef{T: t, Idx: i}, &decls))
		if d.Tag == dwarf.TagSubprogram {
			break
		}
	}
	return out
}

// extent is the extent of one subprogram or inlined subroutine DIE. Its
// ranges may hold instructions that the line table gives to its caller
// (the call's line around an inlined body): lines from the next function
// declared in the same file on are not its own.
func extent(r dwarfreader.DieRef, decls *[]dwarfreader.Decl) Extent {
	file, line, ok := declOf(r)
	lt, _ := r.T.LineTable()
	if !ok || lt == nil {
		return Extent{}
	}
	if *decls == nil {
		*decls = r.T.SubprogramDecls()
		if *decls == nil {
			*decls = []dwarfreader.Decl{}
		}
	}
	next := math.MaxInt
	for _, d := range *decls {
		if d.Line > line && d.Line < next {
			if name, ok := lt.FileNameAt(d.File); ok && name == file {
				next = d.Line
			}
		}
	}
	last := lt.LastLine(file, r.T.RangesOf(r.Idx), line, next)
	// Lines whose code is all inlined calls have rows only in the callee's
	// file: their calls' DW_AT_call_line says them.
	for _, cl := range callLines(r, lt, file) {
		if cl >= line && cl < next && cl > last {
			last = cl
		}
	}
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

// callLines are the DW_AT_call_line of the inlined subroutines nested
// directly in r (through lexical blocks) whose DW_AT_call_file is file.
func callLines(r dwarfreader.DieRef, lt *dwarfline.LineTable, file string) []int {
	t := r.T
	var out []int
	for i := r.Idx + 1; i < len(t.Dies) && t.Dies[i].Depth > t.Dies[r.Idx].Depth; i++ {
		d := &t.Dies[i]
		if d.Tag != dwarf.TagInlinedSubroutine || d.CallFile < 0 {
			continue
		}
		p := int(d.Parent)
		for p > r.Idx && t.Dies[p].Tag != dwarf.TagSubprogram && t.Dies[p].Tag != dwarf.TagInlinedSubroutine {
			p = int(t.Dies[p].Parent)
		}
		if p != r.Idx {
			continue
		}
		if name, ok := lt.FileNameAt(uint64(d.CallFile)); ok && name == file {
			out = append(out, int(d.CallLine))
		}
	}
	return out
}
