package dwarfreader

import (
	"path/filepath"
	"strings"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwpindex"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// dwpPackage is an opened split DWARF package (.dwp, DWARF 5 §7.3.5) and
// its compilation unit index.
type dwpPackage struct {
	obj *object.Object
	cu  *dwpindex.DwpIndex
}

// dwpCandidates lists where a package for binary may be, in gdb's order:
// "<binary>.dwp" beside the binary (gdb names it after the binary even
// when the DWARF is in a separate debug file), then beside the debug file
// named after the binary and after the debug file less ".debug", then in
// /usr/lib/debug by the binary's base name (gdb's debug-file-directory).
func dwpCandidates(binary, debug *object.Object) []string {
	var out []string
	add := func(p string) {
		for _, q := range out {
			if q == p {
				return
			}
		}
		out = append(out, p)
	}
	var base string
	if binary != nil && binary.Path() != "" {
		add(binary.Path() + ".dwp")
		base = filepath.Base(binary.Path())
	}
	if debug != nil && debug.Path() != "" && debug != binary {
		if base != "" {
			add(filepath.Join(filepath.Dir(debug.Path()), base+".dwp"))
		}
		add(strings.TrimSuffix(debug.Path(), ".debug") + ".dwp")
	}
	if base != "" {
		add(filepath.Join(object.DefaultDebugDir, base+".dwp"))
	}
	return out
}

// Pkg opens the first usable package among s.dwpPaths, once.
func (s *dwoSearch) Pkg() *dwpPackage {
	if s == nil {
		return nil
	}
	s.dwpOnce.Do(func() {
		for _, p := range s.dwpPaths {
			if !object.IsRegular(p) {
				continue
			}
			if pk, err := openDWP(p); err == nil {
				s.dwp = pk
				return
			}
		}
	})
	return s.dwp
}

// openDWP opens a package and parses its .debug_cu_index.
func openDWP(path string) (*dwpPackage, error) {
	o, err := object.OpenObject(path)
	if err != nil {
		return nil, err
	}
	b, _, ok := o.Section(".debug_cu_index")
	if !ok {
		o.Close()
		return nil, &object.FormatError{Path: path, Format: ".debug_cu_index", Msg: "not a split DWARF package: no .debug_cu_index"}
	}
	x, err := dwpindex.ParseDWPIndex(b, o.Elf.ByteOrder)
	if err != nil {
		o.Close()
		return nil, err
	}
	return &dwpPackage{obj: o, cu: x}, nil
}

// unitSections returns the contributions of the unit with DWO id sig to
// the package's sections (§7.3.5.3): each is a self-contained .dwo
// section, its offsets relative to its own start. The string section is
// shared by all units.
func (p *dwpPackage) unitSections(sig uint64) (splitSections, bool) {
	row, ok := p.cu.Lookup(sig)
	if !ok {
		return splitSections{}, false
	}
	part := func(name string, sect int) []byte {
		c, ok := p.cu.Contribution(row, sect)
		if !ok {
			return nil
		}
		d, _, _ := p.obj.Section(name)
		return c.Slice(d)
	}
	str, _, _ := p.obj.Section(".debug_str.dwo")
	ss := splitSections{
		info:       part(".debug_info.dwo", dwpindex.DwSectInfo),
		abbrev:     part(".debug_abbrev.dwo", dwpindex.DwSectAbbrev),
		str:        str,
		strOffsets: part(".debug_str_offsets.dwo", dwpindex.DwSectStrOffsets),
		rnglists:   part(".debug_rnglists.dwo", dwpindex.DwSectRnglists),
		// Column 5 is DW_SECT_LOC (.debug_loc.dwo) in a version 2 index,
		// DW_SECT_LOCLISTS in version 5.
		loc: part(".debug_loclists.dwo", dwpindex.DwSectLoclists),
	}
	if ss.loc == nil {
		ss.loc = part(".debug_loc.dwo", dwpindex.DwSectLoclists)
	}
	return ss, ss.info != nil
}
