package debuginfo

import (
	"debug/dwarf"
	"encoding/binary"
)

// dieReader walks the DIEs of one unit in .debug_info (DWARF 5 §7.5.2):
// bounds-checked, allocation-free reads; the first out-of-bounds read or
// unknown form marks it bad and every later read returns zero.
type dieReader struct {
	b   []byte // .debug_info
	pos int
	end int // end of the unit
	bo  binary.ByteOrder
	uf  unitFormat
	bad bool
}

func (r *dieReader) fail() {
	r.bad = true
	r.pos = r.end
}

func (r *dieReader) skip(n int) {
	if n < 0 || n > r.end-r.pos {
		r.fail()
		return
	}
	r.pos += n
}

func (r *dieReader) u8() uint8 {
	if r.pos >= r.end {
		r.fail()
		return 0
	}
	v := r.b[r.pos]
	r.pos++
	return v
}

// uint reads an n-byte unsigned integer, n from 1 to 8.
func (r *dieReader) uint(n int) uint64 {
	if n <= 0 || n > 8 || n > r.end-r.pos {
		r.fail()
		return 0
	}
	p := r.b[r.pos : r.pos+n]
	r.pos += n
	switch n {
	case 1:
		return uint64(p[0])
	case 2:
		return uint64(r.bo.Uint16(p))
	case 4:
		return uint64(r.bo.Uint32(p))
	case 8:
		return r.bo.Uint64(p)
	}
	var v uint64
	for i := range p {
		if r.bo == binary.ByteOrder(binary.BigEndian) {
			v = v<<8 | uint64(p[i])
		} else {
			v |= uint64(p[i]) << (8 * i)
		}
	}
	return v
}

// uleb reads an unsigned LEB128 (DWARF 5 §7.6).
func (r *dieReader) uleb() uint64 {
	if r.pos < r.end && r.b[r.pos] < 0x80 {
		v := r.b[r.pos]
		r.pos++
		return uint64(v)
	}
	var v uint64
	var shift uint
	for r.pos < r.end {
		b := r.b[r.pos]
		r.pos++
		if shift < 64 {
			v |= uint64(b&0x7f) << shift
		}
		shift += 7
		if b < 0x80 {
			return v
		}
	}
	r.fail()
	return 0
}

// sleb reads a signed LEB128 (DWARF 5 §7.6).
func (r *dieReader) sleb() int64 {
	var v int64
	var shift uint
	for r.pos < r.end {
		b := r.b[r.pos]
		r.pos++
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
	r.fail()
	return 0
}

// skipString skips a NUL-terminated string.
func (r *dieReader) skipString() {
	for r.pos < r.end {
		c := r.b[r.pos]
		r.pos++
		if c == 0 {
			return
		}
	}
	r.fail()
}

// maxIndirect bounds chains of DW_FORM_indirect.
const maxIndirect = 4

// skipValue skips one attribute value of form f.
func (r *dieReader) skipValue(f form) {
	for i := 0; f == formIndirect; i++ {
		if i == maxIndirect {
			r.fail()
			return
		}
		f = form(r.uleb())
	}
	if n := fixedFormSize(f, r.uf); n >= 0 {
		r.skip(n)
		return
	}
	switch f {
	case formSdata, formUdata, formRefUdata, formStrx, formAddrx, formLoclistx, formRnglistx,
		formGNUAddrIndex, formGNUStrIndex:
		r.uleb()
	case formString:
		r.skipString()
	case formBlock1:
		r.skip(int(r.u8()))
	case formBlock2:
		r.skip(int(r.uint(2)))
	case formBlock4:
		r.skip(int(r.uint(4)))
	case formBlock, formExprloc:
		n := r.uleb()
		if n > uint64(r.end-r.pos) {
			r.fail()
			return
		}
		r.skip(int(n))
	default:
		r.fail() // unknown form: its size is unknown
	}
}

// skipAttrs skips the attribute values of a DIE of abbreviation a and
// returns the .debug_info offset its DW_AT_sibling names, or 0.
func (r *dieReader) skipAttrs(a *abbrev, unitOff uint64) uint64 {
	if a.fixed >= 0 {
		start := r.pos
		r.skip(a.fixed)
		if a.sibAt < 0 || r.bad {
			return 0
		}
		sr := dieReader{b: r.b, pos: start + a.sibAt, end: r.pos, bo: r.bo, uf: r.uf}
		return sr.ref(a.attrs[siblingIndex(a)].form, unitOff)
	}
	var sib uint64
	for i := range a.attrs {
		at := &a.attrs[i]
		if at.attr == dwarf.AttrSibling && sib == 0 {
			sib = r.ref(at.form, unitOff)
			continue
		}
		r.skipValue(at.form)
	}
	return sib
}

func siblingIndex(a *abbrev) int {
	for i, at := range a.attrs {
		if at.attr == dwarf.AttrSibling {
			return i
		}
	}
	return 0
}

// ref reads a reference of form f as a .debug_info offset (0 for forms that
// are not references into this section).
func (r *dieReader) ref(f form, unitOff uint64) uint64 {
	switch f {
	case formRef1:
		return unitOff + r.uint(1)
	case formRef2:
		return unitOff + r.uint(2)
	case formRef4:
		return unitOff + r.uint(4)
	case formRef8:
		return unitOff + r.uint(8)
	case formRefUdata:
		return unitOff + r.uleb()
	case formRefAddr:
		if r.uf.vers == 2 {
			return r.uint(r.uf.asize)
		}
		return r.uint(r.uf.offSize)
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
	valAddr                    // an address (uint64): addr, addrx*
	valConst                   // an integer constant (int64): data1-8, sdata, udata, implicit_const
	valSecOff                  // a section offset (int64): sec_offset, and the GNU alt forms
	valRef                     // a DIE offset in .debug_info
	valFlag                    // a flag
	valStr                     // a string, as a strRef
	valRnglist                 // DW_FORM_rnglistx, resolved to a .debug_rnglists offset
)

// attrVal is one decoded attribute value; u holds the value's bits.
type attrVal struct {
	class valClass
	u     uint64
}

// int64 returns the value as debug/dwarf's int64-typed values.
func (v attrVal) int64() (int64, bool) {
	if v.class == valConst || v.class == valSecOff {
		return int64(v.u), true
	}
	return 0, false
}

func (v attrVal) addr() (uint64, bool) { return v.u, v.class == valAddr }

func (v attrVal) flag() bool { return v.class == valFlag && v.u != 0 }

// unitBases are the unit DIE's bases for index forms (DWARF 5 §3.1.1).
type unitBases struct {
	addr, strOffsets, rnglists uint64
}

// value reads one attribute value of form f.
func (r *dieReader) value(df *dwarfFile, f form, implicit int64, unitOff uint64, bases *unitBases) attrVal {
	for i := 0; f == formIndirect; i++ {
		if i == maxIndirect {
			r.fail()
			return attrVal{}
		}
		f = form(r.uleb())
		if f == formImplicitConst {
			r.fail() // §7.5.3: not allowed through DW_FORM_indirect
			return attrVal{}
		}
	}
	switch f {
	case formAddr:
		return attrVal{valAddr, r.uint(r.uf.asize)}
	case formAddrx, formAddrx1, formAddrx2, formAddrx3, formAddrx4:
		idx := r.index(f)
		if r.bad {
			return attrVal{}
		}
		a, ok := df.debugAddr(bases.addr, idx, r.uf.asize)
		if !ok {
			r.fail() // as debug/dwarf: the DIE is unreadable
			return attrVal{}
		}
		return attrVal{valAddr, a}
	case formData1, formData2, formData4, formData8:
		return attrVal{valConst, r.uint(fixedFormSize(f, r.uf))}
	case formSdata:
		return attrVal{valConst, uint64(r.sleb())}
	case formUdata:
		return attrVal{valConst, r.uleb()}
	case formImplicitConst:
		return attrVal{valConst, uint64(implicit)}
	case formFlag:
		return attrVal{valFlag, uint64(b2u(r.u8() == 1))}
	case formFlagPresent:
		return attrVal{valFlag, 1}
	case formRef1, formRef2, formRef4, formRef8, formRefUdata, formRefAddr:
		return attrVal{valRef, r.ref(f, unitOff)}
	case formSecOffset, formGNURefAlt, formGNUStrpAlt:
		return attrVal{valSecOff, r.uint(r.uf.offSize)}
	case formString:
		start := r.pos
		r.skipString()
		return attrVal{valStr, uint64(newStrRef(strInInfo, uint64(start)))}
	case formStrp:
		return attrVal{valStr, uint64(newStrRef(strInStr, r.uint(r.uf.offSize)))}
	case formLineStrp:
		return attrVal{valStr, uint64(newStrRef(strInLineStr, r.uint(r.uf.offSize)))}
	case formStrx, formStrx1, formStrx2, formStrx3, formStrx4:
		idx := r.index(f)
		if r.bad {
			return attrVal{}
		}
		off, ok := df.strOffset(bases.strOffsets, idx, r.uf.offSize)
		if !ok {
			r.fail()
			return attrVal{}
		}
		return attrVal{valStr, uint64(newStrRef(strInStr, off))}
	case formRnglistx:
		idx := r.uleb()
		off, ok := df.rnglistx(bases.rnglists, idx, r.uf.offSize)
		if !ok {
			r.fail()
			return attrVal{}
		}
		return attrVal{valRnglist, off}
	}
	r.skipValue(f)
	return attrVal{}
}

// index reads the index of an addrx or strx form.
func (r *dieReader) index(f form) uint64 {
	switch f {
	case formAddrx1, formStrx1:
		return r.uint(1)
	case formAddrx2, formStrx2:
		return r.uint(2)
	case formAddrx3, formStrx3:
		return r.uint(3)
	case formAddrx4, formStrx4:
		return r.uint(4)
	}
	return r.uleb()
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// readAt reads an n-byte unsigned integer at off in sec.
func readAt(sec []byte, off uint64, n int, bo binary.ByteOrder) (uint64, bool) {
	if off > uint64(len(sec)) || uint64(n) > uint64(len(sec))-off {
		return 0, false
	}
	r := dieReader{b: sec, pos: int(off), end: int(off) + n, bo: bo}
	v := r.uint(n)
	return v, !r.bad
}

// debugAddr is entry idx of .debug_addr from base (DWARF 5 §7.27).
func (df *dwarfFile) debugAddr(base, idx uint64, asize int) (uint64, bool) {
	if idx > uint64(len(df.sec.addr)) {
		return 0, false
	}
	return readAt(df.sec.addr, base+idx*uint64(asize), asize, df.bo)
}

// strOffset is the .debug_str offset at index idx of .debug_str_offsets
// from base (DWARF 5 §7.26).
func (df *dwarfFile) strOffset(base, idx uint64, offSize int) (uint64, bool) {
	if idx > uint64(len(df.sec.strOffsets)) {
		return 0, false
	}
	return readAt(df.sec.strOffsets, base+idx*uint64(offSize), offSize, df.bo)
}

// rnglistx resolves a DW_FORM_rnglistx index to a .debug_rnglists offset:
// the offset table after rnglists_base holds offsets relative to that base
// (DWARF 5 §7.28).
func (df *dwarfFile) rnglistx(base, idx uint64, offSize int) (uint64, bool) {
	if idx > uint64(len(df.sec.rnglists)) {
		return 0, false
	}
	v, ok := readAt(df.sec.rnglists, base+idx*uint64(offSize), offSize, df.bo)
	return base + v, ok
}

// strRef is a string attribute not yet read: the section that holds it
// (top two bits) and its offset there. Reading strings only when a frame
// needs them keeps most of .debug_str out of memory.
type strRef uint64

const (
	strInStr     = 1 // .debug_str
	strInLineStr = 2 // .debug_line_str
	strInInfo    = 3 // DW_FORM_string, in .debug_info
)

const strRefShift = 62

func newStrRef(sec int, off uint64) strRef {
	if off >= 1<<strRefShift {
		return 0
	}
	return strRef(uint64(sec)<<strRefShift | off)
}

// str reads the string s refers to; "" for none or a bad offset.
func (df *dwarfFile) str(s strRef) string {
	var sec []byte
	switch s >> strRefShift {
	case strInStr:
		sec = df.sec.str
	case strInLineStr:
		sec = df.sec.lineStr
	case strInInfo:
		sec = df.sec.info
	default:
		return ""
	}
	v, _ := stringAt(sec, uint64(s&(1<<strRefShift-1)))
	return v
}
