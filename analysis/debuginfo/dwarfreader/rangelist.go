package dwarfreader

// Address ranges of a DIE (DWARF 5 §2.17): DW_AT_low_pc with DW_AT_high_pc,
// and DW_AT_ranges into .debug_ranges (DWARF 2-4, §2.17.3 of DWARF 4) or
// .debug_rnglists (DWARF 5 §2.17.3, §7.25). The results are those of
// debug/dwarf's Data.Ranges, which the rest of the package was checked
// against gdb with.

import "github.com/faultline-dev/faultline/analysis/debuginfo/object"

// maxRanges caps the ranges one DIE may list.
const maxRanges = 1 << 16

// Range list entry kinds (DWARF 5 §7.25, Table 7.30).
const (
	rleEndOfList    = 0x00
	rleBaseAddressx = 0x01
	rleStartxEndx   = 0x02
	rleStartxLength = 0x03
	rleOffsetPair   = 0x04
	rleBaseAddress  = 0x05
	rleStartEnd     = 0x06
	rleStartLength  = 0x07
)

// highKind says how DW_AT_high_pc was given.
type highKind uint8

const (
	HighNone   highKind = iota
	HighAddr            // an address
	HighOffset          // a constant: an offset from DW_AT_low_pc (DWARF 4+)
)

// PcAttrs are the attributes of one DIE that say where its code is.
type PcAttrs struct {
	Low, entry    uint64
	HasLow        bool
	hasEntry      bool
	High          uint64
	HighKind      highKind
	Ranges        AttrVal // DW_AT_ranges, class valNone when absent
	HasRangesAttr bool
}

// UnitRangeCtx is what a unit's range lists are read with: the unit DIE's
// base address (DW_AT_entry_pc or DW_AT_low_pc, as debug/dwarf and gdb
// take it) and its DW_AT_addr_base.
type UnitRangeCtx struct {
	vers     int
	asize    int
	Base     uint64
	addrBase uint64
}

// AppendRanges appends the DIE's address ranges to dst; ok is false where
// its range list is malformed (then dst comes back as given).
func (df *DwarfFile) AppendRanges(dst [][2]uint64, p *PcAttrs, u *UnitRangeCtx) (out [][2]uint64, ok bool) {
	start := len(dst)
	if p.HasLow {
		switch p.HighKind {
		case HighAddr:
			dst = append(dst, [2]uint64{p.Low, p.High})
		case HighOffset:
			dst = append(dst, [2]uint64{p.Low, p.Low + p.High})
		}
	}
	if !p.HasRangesAttr {
		return dst, true
	}
	if u.vers >= 5 && df.Sec.Rnglists != nil {
		var off uint64
		switch p.Ranges.Class {
		case ValSecOff:
			off = p.Ranges.U
		case valRnglist:
			off = p.Ranges.U
		default:
			return dst, true
		}
		dst, ok = df.rnglist(dst, off, u)
		if !ok {
			return dst[:start], false
		}
		return dst, true
	}
	v, isInt := p.Ranges.Int64()
	if !isInt || df.Sec.Ranges == nil {
		return dst, true
	}
	dst, ok = df.debugRanges(dst, v, u)
	if !ok {
		return dst[:start], false
	}
	return dst, true
}

// debugRanges reads a DWARF 2-4 range list: pairs of addresses, a base
// address selection entry (the largest address, then the base), ended by
// two zeros.
func (df *DwarfFile) debugRanges(dst [][2]uint64, off int64, u *UnitRangeCtx) ([][2]uint64, bool) {
	if off < 0 || uint64(off) > df.Sec.Ranges.Size() {
		return dst, false
	}
	if u.asize < 1 || u.asize > 8 {
		return dst, false
	}
	return readList(df.Sec.Ranges, uint64(off), dst, func(sec []byte, dst [][2]uint64) ([][2]uint64, bool, bool) {
		r := DieReader{B: sec, Pos: int(off), End: len(sec), Bo: df.Bo}
		base := u.Base
		maxAddr := ^uint64(0) >> uint((8-u.asize)*8)
		for n := 0; n < maxRanges; n++ {
			if r.Pos+2*u.asize > r.End {
				return dst, true, true
			}
			lo := r.Uint(u.asize)
			hi := r.Uint(u.asize)
			if lo == 0 && hi == 0 {
				break
			}
			if lo == maxAddr {
				base = hi
			} else {
				dst = append(dst, [2]uint64{base + lo, base + hi})
			}
		}
		return dst, true, false
	})
}

// listRead is the first read of a range list: this much past its start.
const listRead = 1 << 10

// readList runs read (which says whether its list ran past the bytes it
// was given) on a prefix of sec holding the list at off, read further,
// four times as far each time, until the list fits or sec ends.
func readList(sec *object.Lazy, off uint64, dst [][2]uint64, read func(b []byte, dst [][2]uint64) ([][2]uint64, bool, bool)) ([][2]uint64, bool) {
	start := len(dst)
	for n := uint64(listRead); ; n *= 4 {
		b := sec.Upto(off + n)
		out, ok, short := read(b, dst[:start])
		if !short || uint64(len(b)) >= sec.Size() || uint64(len(b)) < off+n {
			return out, ok && !short || ok && uint64(len(b)) >= sec.Size()
		}
		dst = out
	}
}

// rnglist reads a DWARF 5 range list at off in .debug_rnglists.
func (df *DwarfFile) rnglist(dst [][2]uint64, off uint64, u *UnitRangeCtx) ([][2]uint64, bool) {
	if off > df.Sec.Rnglists.Size() {
		return dst, false
	}
	return readList(df.Sec.Rnglists, off, dst, func(sec []byte, dst [][2]uint64) ([][2]uint64, bool, bool) {
		r := DieReader{B: sec, Pos: int(off), End: len(sec), Bo: df.Bo}
		out, ok := df.rnglistEntries(&r, dst, u)
		return out, ok, r.Bad && r.Pos >= r.End
	})
}

// rnglistEntries reads the entries of a DWARF 5 range list from r.
func (df *DwarfFile) rnglistEntries(r *DieReader, dst [][2]uint64, u *UnitRangeCtx) ([][2]uint64, bool) {
	base := u.Base
	addrBad := false
	addr := func(idx uint64) uint64 {
		a, ok := df.debugAddr(u.addrBase, idx, u.asize)
		if !ok {
			addrBad = true
			r.Fail()
		}
		return a
	}
	for n := 0; n < maxRanges; n++ {
		op := r.U8()
		if r.Bad {
			return dst, false
		}
		switch op {
		case rleEndOfList:
			return dst, true
		case rleBaseAddressx:
			base = addr(r.Uleb())
		case rleStartxEndx:
			lo := addr(r.Uleb())
			hi := addr(r.Uleb())
			dst = append(dst, [2]uint64{lo, hi})
		case rleStartxLength:
			lo := addr(r.Uleb())
			dst = append(dst, [2]uint64{lo, lo + r.Uleb()})
		case rleOffsetPair:
			lo, hi := r.Uleb(), r.Uleb()
			dst = append(dst, [2]uint64{base + lo, base + hi})
		case rleBaseAddress:
			base = r.Uint(u.asize)
		case rleStartEnd:
			lo := r.Uint(u.asize)
			hi := r.Uint(u.asize)
			dst = append(dst, [2]uint64{lo, hi})
		case rleStartLength:
			lo := r.Uint(u.asize)
			dst = append(dst, [2]uint64{lo, lo + r.Uleb()})
		default:
			return dst, false
		}
		if r.Bad {
			if addrBad {
				r.Pos = 0 // a bad address index, not the end of the bytes read
			}
			return dst, false
		}
	}
	return dst, false
}
