package dwarfreader

import (
	"debug/dwarf"
	"encoding/binary"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfform"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// DieReader walks the DIEs of one unit in .debug_info (DWARF 5 §7.5.2):
// bounds-checked, allocation-free reads; the first out-of-bounds read or
// unknown form marks it bad and every later read returns zero.
type DieReader struct {
	B   []byte // .debug_info
	Pos int
	End int // end of the unit
	Bo  binary.ByteOrder
	Uf  UnitFormat
	Bad bool
}

func (r *DieReader) Fail() {
	r.Bad = true
	r.Pos = r.End
}

func (r *DieReader) Skip(n int) {
	if n < 0 || n > r.End-r.Pos {
		r.Fail()
		return
	}
	r.Pos += n
}

func (r *DieReader) U8() uint8 {
	if r.Pos >= r.End {
		r.Fail()
		return 0
	}
	v := r.B[r.Pos]
	r.Pos++
	return v
}

// Uint reads an n-byte unsigned integer, n from 1 to 8.
func (r *DieReader) Uint(n int) uint64 {
	if n <= 0 || n > 8 || n > r.End-r.Pos {
		r.Fail()
		return 0
	}
	p := r.B[r.Pos : r.Pos+n]
	r.Pos += n
	switch n {
	case 1:
		return uint64(p[0])
	case 2:
		return uint64(r.Bo.Uint16(p))
	case 4:
		return uint64(r.Bo.Uint32(p))
	case 8:
		return r.Bo.Uint64(p)
	}
	var v uint64
	for i := range p {
		if r.Bo == binary.ByteOrder(binary.BigEndian) {
			v = v<<8 | uint64(p[i])
		} else {
			v |= uint64(p[i]) << (8 * i)
		}
	}
	return v
}

// Uleb reads an unsigned LEB128 (DWARF 5 §7.6).
func (r *DieReader) Uleb() uint64 {
	if r.Pos < r.End && r.B[r.Pos] < 0x80 {
		v := r.B[r.Pos]
		r.Pos++
		return uint64(v)
	}
	var v uint64
	var shift uint
	for r.Pos < r.End {
		b := r.B[r.Pos]
		r.Pos++
		if shift < 64 {
			v |= uint64(b&0x7f) << shift
		}
		shift += 7
		if b < 0x80 {
			return v
		}
	}
	r.Fail()
	return 0
}

// Sleb reads a signed LEB128 (DWARF 5 §7.6).
func (r *DieReader) Sleb() int64 {
	var v int64
	var shift uint
	for r.Pos < r.End {
		b := r.B[r.Pos]
		r.Pos++
		if shift < 64 {
			v |= int64(b&0x7f) << shift
		}
		shift += 7
		if b < 0x80 {
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
	r.Fail()
	return 0
}

// skipString skips a NUL-terminated string.
func (r *DieReader) skipString() {
	for r.Pos < r.End {
		c := r.B[r.Pos]
		r.Pos++
		if c == 0 {
			return
		}
	}
	r.Fail()
}

// maxIndirect bounds chains of DW_FORM_indirect.
const maxIndirect = 4

// skipValue skips one attribute value of form f.
func (r *DieReader) skipValue(f dwarfform.Form) {
	for i := 0; f == dwarfform.FormIndirect; i++ {
		if i == maxIndirect {
			r.Fail()
			return
		}
		f = dwarfform.Form(r.Uleb())
	}
	if n := FixedFormSize(f, r.Uf); n >= 0 {
		r.Skip(n)
		return
	}
	switch f {
	case dwarfform.FormSdata, dwarfform.FormUdata, dwarfform.FormRefUdata, dwarfform.FormStrx, dwarfform.FormAddrx, dwarfform.FormLoclistx, dwarfform.FormRnglistx,
		dwarfform.FormGNUAddrIndex, dwarfform.FormGNUStrIndex:
		r.Uleb()
	case dwarfform.FormString:
		r.skipString()
	case dwarfform.FormBlock1:
		r.Skip(int(r.U8()))
	case dwarfform.FormBlock2:
		r.Skip(int(r.Uint(2)))
	case dwarfform.FormBlock4:
		r.Skip(int(r.Uint(4)))
	case dwarfform.FormBlock, dwarfform.FormExprloc:
		n := r.Uleb()
		if n > uint64(r.End-r.Pos) {
			r.Fail()
			return
		}
		r.Skip(int(n))
	default:
		r.Fail() // unknown form: its size is unknown
	}
}

// SkipAttrs skips the attribute values of a DIE of abbreviation a and
// returns the .debug_info offset its DW_AT_sibling names, or 0.
func (r *DieReader) SkipAttrs(a *Abbrev, unitOff uint64) uint64 {
	if a.fixed >= 0 {
		start := r.Pos
		r.Skip(a.fixed)
		if a.sibAt < 0 || r.Bad {
			return 0
		}
		sr := DieReader{B: r.B, Pos: start + a.sibAt, End: r.Pos, Bo: r.Bo, Uf: r.Uf}
		return sr.ref(a.Attrs[siblingIndex(a)].Form, unitOff)
	}
	var sib uint64
	for i := range a.Attrs {
		at := &a.Attrs[i]
		if at.Attr == dwarf.AttrSibling && sib == 0 {
			sib = r.ref(at.Form, unitOff)
			continue
		}
		r.skipValue(at.Form)
	}
	return sib
}

func siblingIndex(a *Abbrev) int {
	for i, at := range a.Attrs {
		if at.Attr == dwarf.AttrSibling {
			return i
		}
	}
	return 0
}

// ref reads a reference of form f as a .debug_info offset (0 for forms that
// are not references into this section).
func (r *DieReader) ref(f dwarfform.Form, unitOff uint64) uint64 {
	switch f {
	case dwarfform.FormRef1:
		return unitOff + r.Uint(1)
	case dwarfform.FormRef2:
		return unitOff + r.Uint(2)
	case dwarfform.FormRef4:
		return unitOff + r.Uint(4)
	case dwarfform.FormRef8:
		return unitOff + r.Uint(8)
	case dwarfform.FormRefUdata:
		return unitOff + r.Uleb()
	case dwarfform.FormRefAddr:
		if r.Uf.vers == 2 {
			return r.Uint(r.Uf.asize)
		}
		return r.Uint(r.Uf.OffSize)
	}
	r.skipValue(f)
	return 0
}

// valClass is what an attribute value is, as debug/dwarf types it: the
// code that keeps DIEs accepts the same values debug/dwarf's Entry.Val
// would give it.
type valClass uint8

const (
	valNone    valClass = iota // a block, a signature, an unsupported form
	ValAddr                    // an address (uint64): addr, addrx*
	ValConst                   // an integer constant (int64): data1-8, sdata, udata, implicit_const
	ValSecOff                  // a section offset (int64): sec_offset
	ValRef                     // a DIE offset in .debug_info (with SupRef: in the supplementary file's)
	valFlag                    // a flag
	ValStr                     // a string, as a strRef
	valRnglist                 // DW_FORM_rnglistx, resolved to a .debug_rnglists offset
)

// AttrVal is one decoded attribute value; u holds the value's bits.
type AttrVal struct {
	Class valClass
	U     uint64
}

// Int64 returns the value as debug/dwarf's int64-typed values.
func (v AttrVal) Int64() (int64, bool) {
	if v.Class == ValConst || v.Class == ValSecOff {
		return int64(v.U), true
	}
	return 0, false
}

func (v AttrVal) Addr() (uint64, bool) { return v.U, v.Class == ValAddr }

func (v AttrVal) Flag() bool { return v.Class == valFlag && v.U != 0 }

// unitBases are the unit DIE's bases for index forms (DWARF 5 §3.1.1).
type unitBases struct {
	Addr, strOffsets, rnglists uint64
}

// Value reads one attribute value of form f.
func (r *DieReader) Value(df *DwarfFile, f dwarfform.Form, implicit int64, unitOff uint64, bases *unitBases) AttrVal {
	f = r.direct(f)
	if r.Bad {
		return AttrVal{}
	}
	switch f {
	case dwarfform.FormAddr:
		return AttrVal{ValAddr, r.Uint(r.Uf.asize)}
	case dwarfform.FormAddrx, dwarfform.FormAddrx1, dwarfform.FormAddrx2, dwarfform.FormAddrx3, dwarfform.FormAddrx4,
		dwarfform.FormGNUAddrIndex:
		idx := r.index(f)
		if r.Bad {
			return AttrVal{}
		}
		a, ok := df.debugAddr(bases.Addr, idx, r.Uf.asize)
		if !ok {
			r.Fail() // as debug/dwarf: the DIE is unreadable
			return AttrVal{}
		}
		return AttrVal{ValAddr, a}
	case dwarfform.FormData1, dwarfform.FormData2, dwarfform.FormData4, dwarfform.FormData8:
		return AttrVal{ValConst, r.Uint(FixedFormSize(f, r.Uf))}
	case dwarfform.FormSdata:
		return AttrVal{ValConst, uint64(r.Sleb())}
	case dwarfform.FormUdata:
		return AttrVal{ValConst, r.Uleb()}
	case dwarfform.FormImplicitConst:
		return AttrVal{ValConst, uint64(implicit)}
	case dwarfform.FormFlag:
		return AttrVal{valFlag, uint64(b2u(r.U8() == 1))}
	case dwarfform.FormFlagPresent:
		return AttrVal{valFlag, 1}
	case dwarfform.FormRef1, dwarfform.FormRef2, dwarfform.FormRef4, dwarfform.FormRef8, dwarfform.FormRefUdata, dwarfform.FormRefAddr:
		return AttrVal{ValRef, r.ref(f, unitOff)}
	case dwarfform.FormSecOffset:
		return AttrVal{ValSecOff, r.Uint(r.Uf.OffSize)}
	case dwarfform.FormGNURefAlt:
		return AttrVal{ValRef, supRef(r.Uint(r.Uf.OffSize))}
	case dwarfform.FormRefSup4:
		return AttrVal{ValRef, supRef(r.Uint(4))}
	case dwarfform.FormRefSup8:
		return AttrVal{ValRef, supRef(r.Uint(8))}
	case dwarfform.FormGNUStrpAlt, dwarfform.FormStrpSup:
		return AttrVal{ValStr, uint64(newStrRef(strInSup, r.Uint(r.Uf.OffSize)))}
	case dwarfform.FormString:
		start := r.Pos
		r.skipString()
		return AttrVal{ValStr, uint64(newStrRef(strInInfo, uint64(start)))}
	case dwarfform.FormStrp:
		return AttrVal{ValStr, uint64(newStrRef(strInStr, r.Uint(r.Uf.OffSize)))}
	case dwarfform.FormLineStrp:
		return AttrVal{ValStr, uint64(newStrRef(strInLineStr, r.Uint(r.Uf.OffSize)))}
	case dwarfform.FormStrx, dwarfform.FormStrx1, dwarfform.FormStrx2, dwarfform.FormStrx3, dwarfform.FormStrx4,
		dwarfform.FormGNUStrIndex:
		idx := r.index(f)
		if r.Bad {
			return AttrVal{}
		}
		off, ok := df.strOffset(bases.strOffsets, idx, r.Uf.OffSize)
		if !ok {
			r.Fail()
			return AttrVal{}
		}
		return AttrVal{ValStr, uint64(newStrRef(strInStr, off))}
	case dwarfform.FormRnglistx:
		idx := r.Uleb()
		off, ok := df.rnglistx(bases.rnglists, idx, r.Uf.OffSize)
		if !ok {
			r.Fail()
			return AttrVal{}
		}
		return AttrVal{valRnglist, off}
	}
	r.skipValue(f)
	return AttrVal{}
}

// direct follows DW_FORM_indirect to the form it names, failing the
// reader on a chain longer than maxIndirect or on DW_FORM_implicit_const,
// which §7.5.3 does not allow there.
func (r *DieReader) direct(f dwarfform.Form) dwarfform.Form {
	for i := 0; f == dwarfform.FormIndirect; i++ {
		if i == maxIndirect {
			r.Fail()
			return f
		}
		f = dwarfform.Form(r.Uleb())
		if f == dwarfform.FormImplicitConst {
			r.Fail()
			return f
		}
	}
	return f
}

// index reads the index of an addrx or strx form (a ULEB128 for addrx,
// strx and the GNU DWARF 4 split forms DW_FORM_GNU_addr_index and
// DW_FORM_GNU_str_index, which mean what addrx and strx mean in DWARF 5).
func (r *DieReader) index(f dwarfform.Form) uint64 {
	switch f {
	case dwarfform.FormAddrx1, dwarfform.FormStrx1:
		return r.Uint(1)
	case dwarfform.FormAddrx2, dwarfform.FormStrx2:
		return r.Uint(2)
	case dwarfform.FormAddrx3, dwarfform.FormStrx3:
		return r.Uint(3)
	case dwarfform.FormAddrx4, dwarfform.FormStrx4:
		return r.Uint(4)
	}
	return r.Uleb()
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// ReadAt reads an n-byte unsigned integer at off in sec.
func ReadAt(sec []byte, off uint64, n int, bo binary.ByteOrder) (uint64, bool) {
	if off > uint64(len(sec)) || uint64(n) > uint64(len(sec))-off {
		return 0, false
	}
	r := DieReader{B: sec, Pos: int(off), End: int(off) + n, Bo: bo}
	v := r.Uint(n)
	return v, !r.Bad
}

// debugAddr is entry idx of .debug_addr from base (DWARF 5 §7.27).
func (df *DwarfFile) debugAddr(base, idx uint64, asize int) (uint64, bool) {
	return ReadLazyAt(df.Sec.Addr, base, idx, asize, df.Bo)
}

// ReadLazyAt reads entry idx of an n-byte table at base in sec, reading
// (decompressing) sec only as far as the entry.
func ReadLazyAt(sec *object.Lazy, base, idx uint64, n int, bo binary.ByteOrder) (uint64, bool) {
	if idx > sec.Size() || base > sec.Size() {
		return 0, false
	}
	off := base + idx*uint64(n)
	return ReadAt(sec.Upto(off+uint64(n)), off, n, bo)
}

// strOffset is the .debug_str offset at index idx of .debug_str_offsets
// from base (DWARF 5 §7.26).
func (df *DwarfFile) strOffset(base, idx uint64, offSize int) (uint64, bool) {
	return ReadLazyAt(df.Sec.StrOffsets, base, idx, offSize, df.Bo)
}

// rnglistx resolves a DW_FORM_rnglistx index to a .debug_rnglists offset:
// the offset table after rnglists_base holds offsets relative to that base
// (DWARF 5 §7.28).
func (df *DwarfFile) rnglistx(base, idx uint64, offSize int) (uint64, bool) {
	v, ok := ReadLazyAt(df.Sec.Rnglists, base, idx, offSize, df.Bo)
	return base + v, ok
}

// StrRef is a string attribute not yet read: the section that holds it
// (top two bits) and its offset there. Reading strings only when a frame
// needs them keeps most of .debug_str out of memory.
type StrRef uint64

const (
	strInStr     = 1 // .debug_str
	strInLineStr = 2 // .debug_line_str
	strInInfo    = 3 // DW_FORM_string, in .debug_info
	strInSup     = 4 // the supplementary file's .debug_str
)

const strRefShift = 61

// supRef marks a reference into the supplementary file; one too large to
// be an offset is no reference.
func supRef(off uint64) uint64 {
	if off >= SupRef {
		return 0
	}
	return off | SupRef
}

func newStrRef(sec int, off uint64) StrRef {
	if off >= 1<<strRefShift {
		return 0
	}
	return StrRef(uint64(sec)<<strRefShift | off)
}

// Str reads the string s refers to; "" for none or a bad offset.
func (df *DwarfFile) Str(s StrRef) string {
	var sec *object.Lazy
	switch s >> strRefShift {
	case strInStr:
		sec = df.Sec.Str
	case strInLineStr:
		sec = df.Sec.LineStr
	case strInInfo:
		sec = df.Sec.Info
	case strInSup:
		sup := df.supFile()
		if sup == nil {
			return ""
		}
		sec = sup.Sec.Str
	default:
		return ""
	}
	v, _ := sec.CString(uint64(s & (1<<strRefShift - 1)))
	return string(v)
}
