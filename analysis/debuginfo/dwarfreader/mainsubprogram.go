package dwarfreader

import (
	"bytes"
	"debug/dwarf"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfform"
)

// The program's main function as DWARF marks it (DW_AT_main_subprogram,
// DWARF 5 §3.3.1), and the namespaces that gdb's lookup of its name meets
// first. gdb's main_name() (symtab.c find_main_name) is the name of that
// DIE in the first objfile whose index saw one; its backtrace ends at the
// frame of that function (frame.c inside_main_func).

// MainSubprogram returns the first subprogram DIE, in unit order, with
// DW_AT_main_subprogram. A file none of whose abbreviations can carry the
// attribute (every C and C++ file) is answered without reading a DIE.
func (df *DwarfFile) MainSubprogram() (DieRef, bool) {
	if !mayMarkMain(df.Sec.Abbrev.All()) {
		return DieRef{}, false
	}
	for i, u := range df.Units() {
		if u.Utype != UtCompile && u.Utype != UtPartial {
			continue
		}
		tab, err := parseAbbrevsAt(df.Sec.Abbrev, u.abbrevOff, u.Format(), 0)
		if err != nil || !tab.has(dwarf.AttrMainSubprogram) {
			continue
		}
		t, err := df.Tree(i)
		if err != nil {
			continue
		}
		for k := range t.Dies {
			if d := &t.Dies[k]; d.MainSubprogram && d.Tag == dwarf.TagSubprogram {
				return DieRef{T: t, Idx: k}, true
			}
		}
	}
	return DieRef{}, false
}

// mayMarkMain reports whether .debug_abbrev holds the bytes of an
// attribute specification of DW_AT_main_subprogram (0x6a) in one of the
// flag forms; false means no abbreviation has one.
func mayMarkMain(abbrev []byte) bool {
	for _, f := range []dwarfform.Form{dwarfform.FormFlagPresent, dwarfform.FormFlag, dwarfform.FormImplicitConst} {
		if bytes.Contains(abbrev, []byte{byte(dwarf.AttrMainSubprogram), byte(f)}) {
			return true
		}
	}
	return false
}

// has reports whether an abbreviation of the table has attribute attr.
func (t *abbrevTable) has(attr dwarf.Attr) bool {
	for _, a := range t.dense {
		if a != nil && a.hasAttr(attr) {
			return true
		}
	}
	for _, a := range t.sparse {
		if a.hasAttr(attr) {
			return true
		}
	}
	return false
}

func (a *Abbrev) hasAttr(attr dwarf.Attr) bool {
	for _, at := range a.Attrs {
		if at.Attr == attr {
			return true
		}
	}
	return false
}

// ScopePath is the DIE's name under the names of the DIEs that enclose
// it, outermost first ("rust_names", "main"); nil when one of them has
// none.
func ScopePath(r DieRef) []string {
	t := r.T
	var path []string
	for i := int32(r.Idx); i >= 0 && t.Dies[i].Tag != dwarf.TagCompileUnit && t.Dies[i].Tag != dwarf.TagPartialUnit; i = t.Dies[i].Parent {
		name := t.Df.Str(t.Dies[i].Name)
		if name == "" || len(path) >= MaxDIEDepth {
			return nil
		}
		path = append([]string{name}, path...)
	}
	return path
}

// HasNamespace reports whether a unit of the file has nested namespace
// DIEs named by path, outermost first, right under its unit DIE. Only
// namespaces on the path are entered; everything else is skipped.
func (df *DwarfFile) HasNamespace(path []string) bool {
	if len(path) == 0 {
		return false
	}
	for _, u := range df.Units() {
		if (u.Utype == UtCompile || u.Utype == UtPartial) && df.unitHasNamespace(u, path) {
			return true
		}
	}
	return false
}

func (df *DwarfFile) unitHasNamespace(u UnitHeader, path []string) bool {
	ud, err := df.ReadUnitDIE(u, true)
	if err != nil || !ud.abbr.Children {
		return false
	}
	r := &DieReader{B: df.Sec.Info.Upto(u.End), Pos: ud.next, End: int(u.End), Bo: df.Bo, Uf: u.Format()}
	depth := 0 // the namespaces entered, each named path[k]
	var attrs DieAttrs
	for !r.Bad && r.Pos < r.End {
		code := r.Uleb()
		if code == 0 {
			if depth == 0 {
				return false // the unit DIE's children ended
			}
			depth--
			continue
		}
		a := ud.Tab.Lookup(code)
		if a == nil {
			return false
		}
		if a.Tag != dwarf.TagNamespace {
			sib := r.SkipAttrs(a, u.Off)
			if a.Children && !r.Bad {
				r.SkipChildren(ud.Tab, sib, u.Off)
			}
			continue
		}
		r.readAttrs(df, a, u.Off, &ud.Bases, &attrs)
		if r.Bad {
			return false
		}
		name := df.Str(attrs.Name)
		switch {
		case name == path[depth] && depth+1 == len(path):
			return true
		case !a.Children:
		case name != path[depth]:
			r.SkipChildren(ud.Tab, 0, u.Off)
		default:
			depth++
		}
	}
	return false
}
