package debuginfo

import (
	"debug/dwarf"
	"fmt"

	"github.com/faultline-dev/faultline/analysis/internal/cursor"
)

// Abbreviation tables (DWARF 5 §7.5.3) and attribute forms (§7.5.6), read
// directly so that a unit's DIEs can be walked without debug/dwarf's
// per-entry allocations: decodeUnit (unittree.go) skips most DIEs of a unit
// by size alone and decodes the few attributes of the DIEs it keeps.

// form is an attribute form code (DWARF 5 §7.5.6, Table 7.6).
type form uint16

const (
	formAddr          form = 0x01
	formBlock2        form = 0x03
	formBlock4        form = 0x04
	formData2         form = 0x05
	formData4         form = 0x06
	formData8         form = 0x07
	formString        form = 0x08
	formBlock         form = 0x09
	formBlock1        form = 0x0a
	formData1         form = 0x0b
	formFlag          form = 0x0c
	formSdata         form = 0x0d
	formStrp          form = 0x0e
	formUdata         form = 0x0f
	formRefAddr       form = 0x10
	formRef1          form = 0x11
	formRef2          form = 0x12
	formRef4          form = 0x13
	formRef8          form = 0x14
	formRefUdata      form = 0x15
	formIndirect      form = 0x16
	formSecOffset     form = 0x17
	formExprloc       form = 0x18
	formFlagPresent   form = 0x19
	formStrx          form = 0x1a
	formAddrx         form = 0x1b
	formRefSup4       form = 0x1c
	formStrpSup       form = 0x1d
	formData16        form = 0x1e
	formLineStrp      form = 0x1f
	formRefSig8       form = 0x20
	formImplicitConst form = 0x21
	formLoclistx      form = 0x22
	formRnglistx      form = 0x23
	formRefSup8       form = 0x24
	formStrx1         form = 0x25
	formStrx2         form = 0x26
	formStrx3         form = 0x27
	formStrx4         form = 0x28
	formAddrx1        form = 0x29
	formAddrx2        form = 0x2a
	formAddrx3        form = 0x2b
	formAddrx4        form = 0x2c
	// GNU extensions (gcc's include/dwarf2.def): Fission indexes (DWARF 4
	// split units) and references into a dwz supplementary file.
	formGNUAddrIndex form = 0x1f01
	formGNUStrIndex  form = 0x1f02
	formGNURefAlt    form = 0x1f20
	formGNUStrpAlt   form = 0x1f21
)

// Limits on what an abbreviation table may hold.
const (
	maxAbbrevs      = 1 << 20
	maxAbbrevAttrs  = 1 << 10
	maxDenseAbbrevs = 1 << 16 // codes up to this are looked up by index
)

// abbrev is one abbreviation declaration.
type abbrev struct {
	tag      dwarf.Tag
	children bool
	attrs    []abbrevAttr
	// fixed is the size of the DIE's attribute values when every form has
	// a size known from the unit header alone, else -1: such DIEs are
	// skipped in one step.
	fixed int
	// sibAt is the offset of the DW_AT_sibling value among fixed-size
	// values, -1 if there is none (or the values are not fixed-size).
	sibAt int
}

type abbrevAttr struct {
	attr     dwarf.Attr
	form     form
	implicit int64 // DW_FORM_implicit_const's value
}

// abbrevTable is the abbreviation table of a unit.
type abbrevTable struct {
	dense  []*abbrev // by code; most producers number codes 1, 2, 3...
	sparse map[uint64]*abbrev
}

func (t *abbrevTable) lookup(code uint64) *abbrev {
	if code < uint64(len(t.dense)) {
		return t.dense[code]
	}
	return t.sparse[code]
}

// unitFormat is what the size of attribute values depends on.
type unitFormat struct {
	vers    int
	asize   int // address size
	offSize int // 4 in 32-bit DWARF, 8 in 64-bit DWARF
}

// parseAbbrevs reads the abbreviation table at off in .debug_abbrev. With
// only != 0 it stops at that code and the table holds only it (nil if the
// table has no such code).
func parseAbbrevs(sec []byte, off uint64, uf unitFormat, only uint64) (*abbrevTable, error) {
	if off > uint64(len(sec)) {
		return nil, &FormatError{Format: ".debug_abbrev", Off: int64(off), Msg: "abbreviation table offset past the section"}
	}
	c := &cursor.Cursor{Format: ".debug_abbrev", Data: sec, Off: int(off)}
	t := &abbrevTable{}
	for n := 0; ; n++ {
		if n >= maxAbbrevs {
			return nil, &FormatError{Format: ".debug_abbrev", Off: int64(off), Msg: "too many abbreviations"}
		}
		code := c.ULEB128()
		if c.Err() != nil {
			return nil, c.Err()
		}
		if code == 0 {
			if only != 0 {
				return nil, &FormatError{Format: ".debug_abbrev", Off: int64(off), Msg: fmt.Sprintf("no abbreviation %d", only)}
			}
			return t, nil
		}
		a := &abbrev{tag: dwarf.Tag(c.ULEB128()), children: c.U8() != 0, sibAt: -1}
		for {
			attr, fm := c.ULEB128(), c.ULEB128()
			if c.Err() != nil {
				return nil, c.Err()
			}
			if attr == 0 && fm == 0 {
				break
			}
			if len(a.attrs) >= maxAbbrevAttrs || attr > 0xffff || fm > 0xffff {
				return nil, &FormatError{Format: ".debug_abbrev", Off: int64(c.Pos()), Msg: "malformed abbreviation"}
			}
			at := abbrevAttr{attr: dwarf.Attr(attr), form: form(fm)}
			if at.form == formImplicitConst {
				at.implicit = c.SLEB128()
			}
			a.attrs = append(a.attrs, at)
		}
		a.layout(uf)
		if only != 0 {
			if code == only {
				return &abbrevTable{sparse: map[uint64]*abbrev{code: a}}, nil
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
				t.sparse = map[uint64]*abbrev{}
			}
			if t.sparse[code] == nil {
				t.sparse[code] = a
			}
		}
	}
}

// layout computes a.fixed and a.sibAt.
func (a *abbrev) layout(uf unitFormat) {
	size := 0
	for _, at := range a.attrs {
		n := fixedFormSize(at.form, uf)
		if n < 0 {
			a.fixed, a.sibAt = -1, -1
			return
		}
		if at.attr == dwarf.AttrSibling && a.sibAt < 0 {
			a.sibAt = size
		}
		size += n
	}
	a.fixed = size
}

// fixedFormSize is the size of a value of form f, or -1 when it varies
// (LEB128 numbers, strings, blocks) or the form is unknown.
func fixedFormSize(f form, uf unitFormat) int {
	switch f {
	case formFlagPresent, formImplicitConst:
		return 0
	case formData1, formRef1, formFlag, formStrx1, formAddrx1:
		return 1
	case formData2, formRef2, formStrx2, formAddrx2:
		return 2
	case formStrx3, formAddrx3:
		return 3
	case formData4, formRef4, formRefSup4, formStrx4, formAddrx4:
		return 4
	case formData8, formRef8, formRefSig8, formRefSup8:
		return 8
	case formData16:
		return 16
	case formAddr:
		return uf.asize
	case formStrp, formLineStrp, formSecOffset, formStrpSup, formGNURefAlt, formGNUStrpAlt:
		return uf.offSize
	case formRefAddr:
		if uf.vers == 2 {
			return uf.asize
		}
		return uf.offSize
	}
	return -1
}

// abbrevs returns the abbreviation table of unit u, parsed once per file.
func (df *dwarfFile) abbrevs(u unitHeader) (*abbrevTable, error) {
	uf := u.format()
	key := abbrevKey{off: u.abbrevOff, uf: uf}
	df.mu.Lock()
	t, ok := df.abbrevCache[key]
	df.mu.Unlock()
	if ok {
		return t, nil
	}
	t, err := parseAbbrevs(df.sec.abbrev, u.abbrevOff, uf, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", df.obj.path, err)
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
	uf  unitFormat
}

func (u unitHeader) format() unitFormat {
	uf := unitFormat{vers: u.vers, asize: u.asize, offSize: 4}
	if u.is64 {
		uf.offSize = 8
	}
	return uf
}
