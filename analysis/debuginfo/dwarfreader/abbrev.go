package dwarfreader

import (
	"debug/dwarf"
	"fmt"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfform"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/analysis/internal/cursor"
)

// Abbreviation tables (DWARF 5 §7.5.3) and attribute forms (§7.5.6), read
// directly so that a unit's DIEs can be walked without debug/dwarf's
// per-entry allocations: DecodeUnit (unittree.go) skips most DIEs of a unit
// by size alone and decodes the few attributes of the DIEs it keeps.

// Limits on what an abbreviation table may hold.
const (
	maxAbbrevs      = 1 << 20
	maxAbbrevAttrs  = 1 << 10
	maxDenseAbbrevs = 1 << 16 // codes up to this are looked up by index
)

// Abbrev is one abbreviation declaration.
type Abbrev struct {
	Tag      dwarf.Tag
	Children bool
	Attrs    []AbbrevAttr
	// fixed is the size of the DIE's attribute values when every form has
	// a size known from the unit header alone, else -1: such DIEs are
	// skipped in one step.
	fixed int
	// sibAt is the offset of the DW_AT_sibling value among fixed-size
	// values, -1 if there is none (or the values are not fixed-size).
	sibAt int
}

type AbbrevAttr struct {
	Attr     dwarf.Attr
	Form     dwarfform.Form
	Implicit int64 // DW_FORM_implicit_const's value
}

// abbrevTable is the abbreviation table of a unit.
type abbrevTable struct {
	dense  []*Abbrev // by code; most producers number codes 1, 2, 3...
	sparse map[uint64]*Abbrev
}

func (t *abbrevTable) Lookup(code uint64) *Abbrev {
	if code < uint64(len(t.dense)) {
		return t.dense[code]
	}
	return t.sparse[code]
}

// UnitFormat is what the size of attribute values depends on.
type UnitFormat struct {
	vers    int
	asize   int // address size
	OffSize int // 4 in 32-bit DWARF, 8 in 64-bit DWARF
}

// parseAbbrevs reads the abbreviation table at off in .debug_abbrev. With
// only != 0 it stops at that code and the table holds only it (nil if the
// table has no such code).
func parseAbbrevs(sec []byte, off uint64, uf UnitFormat, only uint64) (*abbrevTable, error) {
	if off > uint64(len(sec)) {
		return nil, &object.FormatError{Format: ".debug_abbrev", Off: int64(off), Msg: "abbreviation table offset past the section"}
	}
	c := &cursor.Cursor{Format: ".debug_abbrev", Data: sec, Off: int(off)}
	t := &abbrevTable{}
	for n := 0; ; n++ {
		if n >= maxAbbrevs {
			return nil, &object.FormatError{Format: ".debug_abbrev", Off: int64(off), Msg: "too many abbreviations"}
		}
		code := c.ULEB128()
		if c.Err() != nil {
			return nil, c.Err()
		}
		if code == 0 {
			if only != 0 {
				return nil, &object.FormatError{Format: ".debug_abbrev", Off: int64(off), Msg: fmt.Sprintf("no abbreviation %d", only)}
			}
			return t, nil
		}
		a := &Abbrev{Tag: dwarf.Tag(c.ULEB128()), Children: c.U8() != 0, sibAt: -1}
		for {
			attr, fm := c.ULEB128(), c.ULEB128()
			if c.Err() != nil {
				return nil, c.Err()
			}
			if attr == 0 && fm == 0 {
				break
			}
			if len(a.Attrs) >= maxAbbrevAttrs || attr > 0xffff || fm > 0xffff {
				return nil, &object.FormatError{Format: ".debug_abbrev", Off: int64(c.Pos()), Msg: "malformed abbreviation"}
			}
			at := AbbrevAttr{Attr: dwarf.Attr(attr), Form: dwarfform.Form(fm)}
			if at.Form == dwarfform.FormImplicitConst {
				at.Implicit = c.SLEB128()
			}
			a.Attrs = append(a.Attrs, at)
		}
		a.layout(uf)
		if only != 0 {
			if code == only {
				return &abbrevTable{sparse: map[uint64]*Abbrev{code: a}}, nil
			}
			continue
		}
		if code < maxDenseAbbrevs {
			for uint64(len(t.dense)) <= code {
				t.dense = append(t.dense, nil)
			}
			if t.dense[code] == nil {
				t.dense[code] = a
			}
		} else {
			if t.sparse == nil {
				t.sparse = map[uint64]*Abbrev{}
			}
			if t.sparse[code] == nil {
				t.sparse[code] = a
			}
		}
	}
}

// parseAbbrevsAt is parseAbbrevs on .debug_abbrev read only as far as the
// table goes: from 4 KiB past its start, four times further each time the
// table runs past the bytes read.
func parseAbbrevsAt(sec *object.Lazy, off uint64, uf UnitFormat, only uint64) (*abbrevTable, error) {
	for n := uint64(4 << 10); ; n *= 4 {
		b := sec.Upto(off + n)
		t, err := parseAbbrevs(b, off, uf, only)
		if err == nil || uint64(len(b)) >= sec.Size() || uint64(len(b)) < off+n || n > sec.Size() {
			return t, err
		}
	}
}

// layout computes a.fixed and a.sibAt.
func (a *Abbrev) layout(uf UnitFormat) {
	size := 0
	for _, at := range a.Attrs {
		n := FixedFormSize(at.Form, uf)
		if n < 0 {
			a.fixed, a.sibAt = -1, -1
			return
		}
		if at.Attr == dwarf.AttrSibling && a.sibAt < 0 {
			a.sibAt = size
		}
		size += n
	}
	a.fixed = size
}

// FixedFormSize is the size of a value of form f, or -1 when it varies
// (LEB128 numbers, strings, blocks) or the form is unknown.
func FixedFormSize(f dwarfform.Form, uf UnitFormat) int {
	switch f {
	case dwarfform.FormFlagPresent, dwarfform.FormImplicitConst:
		return 0
	case dwarfform.FormData1, dwarfform.FormRef1, dwarfform.FormFlag, dwarfform.FormStrx1, dwarfform.FormAddrx1:
		return 1
	case dwarfform.FormData2, dwarfform.FormRef2, dwarfform.FormStrx2, dwarfform.FormAddrx2:
		return 2
	case dwarfform.FormStrx3, dwarfform.FormAddrx3:
		return 3
	case dwarfform.FormData4, dwarfform.FormRef4, dwarfform.FormRefSup4, dwarfform.FormStrx4, dwarfform.FormAddrx4:
		return 4
	case dwarfform.FormData8, dwarfform.FormRef8, dwarfform.FormRefSig8, dwarfform.FormRefSup8:
		return 8
	case dwarfform.FormData16:
		return 16
	case dwarfform.FormAddr:
		return uf.asize
	case dwarfform.FormStrp, dwarfform.FormLineStrp, dwarfform.FormSecOffset, dwarfform.FormStrpSup, dwarfform.FormGNURefAlt, dwarfform.FormGNUStrpAlt:
		return uf.OffSize
	case dwarfform.FormRefAddr:
		if uf.vers == 2 {
			return uf.asize
		}
		return uf.OffSize
	}
	return -1
}

// abbrevs returns the abbreviation table of unit u, parsed once per file.
func (df *DwarfFile) abbrevs(u UnitHeader) (*abbrevTable, error) {
	uf := u.Format()
	key := abbrevKey{off: u.abbrevOff, uf: uf}
	df.mu.Lock()
	t, ok := df.abbrevCache[key]
	df.mu.Unlock()
	if ok {
		return t, nil
	}
	t, err := parseAbbrevsAt(df.Sec.Abbrev, u.abbrevOff, uf, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", df.Obj.Path(), err)
	}
	df.mu.Lock()
	if df.abbrevCache == nil {
		df.abbrevCache = map[abbrevKey]*abbrevTable{}
	}
	if len(df.abbrevCache) >= maxCachedAbbrevTables {
		clear(df.abbrevCache)
	}
	df.abbrevCache[key] = t
	df.mu.Unlock()
	return t, nil
}

// maxCachedAbbrevTables bounds the parsed abbreviation tables one file keeps
// (those of the units frames are in, and of the units their callees are in).
const maxCachedAbbrevTables = 64

type abbrevKey struct {
	off uint64
	uf  UnitFormat
}

func (u UnitHeader) Format() UnitFormat {
	uf := UnitFormat{vers: u.Vers, asize: u.Asize, OffSize: 4}
	if u.is64 {
		uf.OffSize = 8
	}
	return uf
}
