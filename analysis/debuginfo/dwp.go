package debuginfo

import (
	"path/filepath"
	"strings"
)

// dwpPackage is an opened split DWARF package (.dwp, DWARF 5 §7.3.5) and
// its compilation unit index.
type dwpPackage struct {
	obj *Object
	cu  *dwpIndex
}

// dwpCandidates lists where a package for binary may be, in gdb's order:
// "<binary>.dwp" beside the binary (gdb names it after the binary even
// when the DWARF is in a separate debug file), then beside the debug file
// named after the binary and after the debug file less ".debug", then in
// /usr/lib/debug by the binary's base name (gdb's debug-file-directory).
func dwpCandidates(binary, debug *Object) []string {
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
	if binary != nil && binary.path != "" {
		add(binary.path + ".dwp")
		base = filepath.Base(binary.path)
	}
	if debug != nil && debug.path != "" && debug != binary {
		if base != "" {
			add(filepath.Join(filepath.Dir(debug.path), base+".dwp"))
		}
		add(strings.TrimSuffix(debug.path, ".debug") + ".dwp")
	}
	if base != "" {
		add(filepath.Join(DefaultDebugDir, base+".dwp"))
	}
	return out
}

// pkg opens the first usable package among s.dwpPaths, once.
func (s *dwoSearch) pkg() *dwpPackage {
	if s == nil {
		return nil
	}
	s.dwpOnce.Do(func() {
		for _, p := range s.dwpPaths {
			if !isRegular(p) {
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
	o, err := OpenObject(path)
	if err != nil {
		return nil, err
	}
	b, _, ok := o.Section(".debug_cu_index")
	if !ok {
		o.Close()
		return nil, &FormatError{Path: path, Format: ".debug_cu_index", Msg: "not a split DWARF package: no .debug_cu_index"}
	}
	x, err := parseDWPIndex(b, o.elf.ByteOrder)
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
	row, ok := p.cu.lookup(sig)
	if !ok {
		return splitSections{}, false
	}
	part := func(name string, sect int) []byte {
		c, ok := p.cu.contribution(row, sect)
		if !ok {
			return nil
		}
		d, _, _ := p.obj.Section(name)
		return c.slice(d)
	}
	str, _, _ := p.obj.Section(".debug_str.dwo")
	ss := splitSections{
		info:       part(".debug_info.dwo", dwSectInfo),
		abbrev:     part(".debug_abbrev.dwo", dwSectAbbrev),
		str:        str,
		strOffsets: part(".debug_str_offsets.dwo", dwSectStrOffsets),
		rnglists:   part(".debug_rnglists.dwo", dwSectRnglists),
	}
	return ss, ss.info != nil
}
