package dwarfreader

import "debug/dwarf"

// DeclAt reads DW_AT_decl_file and DW_AT_decl_line (DWARF 5 §2.14) of the
// DIE at .debug_info offset off; ok is false when it has no
// DW_AT_decl_line. The file is an index into the line program of the unit
// that holds the DIE.
func (df *DwarfFile) DeclAt(off uint64) (file uint64, line int, ok bool) {
	i, found := df.UnitOf(off)
	if !found {
		return 0, 0, false
	}
	u := df.Unit(i)
	ud, err := df.ReadUnitDIE(u, true)
	if err != nil || off == u.DieOff {
		return 0, 0, false
	}
	return df.declIn(ud, u, off)
}

// declIn reads the declared position of the DIE at off in unit u, whose
// unit DIE ud is read.
func (df *DwarfFile) declIn(ud *UnitDIE, u UnitHeader, off uint64) (file uint64, line int, ok bool) {
	r := &DieReader{B: df.Sec.Info.Upto(u.End), Pos: int(off), End: int(u.End), Bo: df.Bo, Uf: u.Format()}
	a := ud.Tab.Lookup(r.Uleb())
	if r.Bad || a == nil {
		return 0, 0, false
	}
	for _, at := range a.Attrs {
		v := r.Value(df, at.Form, at.Implicit, u.Off, &ud.Bases)
		if r.Bad {
			return 0, 0, false
		}
		n, isConst := v.Int64()
		switch {
		case at.Attr == dwarf.AttrDeclFile && isConst && n >= 0:
			file = uint64(n)
		case at.Attr == dwarf.AttrDeclLine && isConst && n > 0 && n < 1<<31:
			line, ok = int(n), true
		}
	}
	return file, line, ok
}

// RangesOf returns the address ranges of subprogram or inlined subroutine
// DIE i of the tree.
func (t *UnitTree) RangesOf(i int) [][2]uint64 {
	var out [][2]uint64
	for _, rg := range t.Ranged {
		if int(rg.Die) == i {
			out = append(out, [2]uint64{rg.Lo, rg.Hi})
		}
	}
	return out
}

// Decl is where a subprogram is declared: a file index of its unit's line
// program and a line.
type Decl struct {
	File uint64
	Line int
}

// SubprogramDecls returns the declared positions of the tree's
// subprogram DIEs that carry them.
func (t *UnitTree) SubprogramDecls() []Decl {
	ud, err := t.Df.ReadUnitDIE(t.Hdr, true)
	if err != nil {
		return nil
	}
	var out []Decl
	for i := range t.Dies {
		if t.Dies[i].Tag != dwarf.TagSubprogram || uint64(t.Dies[i].Off) == t.Hdr.DieOff {
			continue
		}
		if f, l, ok := t.Df.declIn(ud, t.Hdr, uint64(t.Dies[i].Off)); ok {
			out = append(out, Decl{File: f, Line: l})
		}
	}
	return out
}
